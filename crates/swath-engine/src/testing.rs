//! What a test does when it cannot make its check on this machine (a peer tool missing, not
//! root, a file system without holes): it says so and passes, except under
//! `SWATH_TEST_STRICT=1`, which `scripts/test` sets after installing every tool the tests
//! need: there a check skipped is a check never made, and so a failure.

/// Reports that the calling test skips its check for `reason`; panics (failing the test)
/// when `SWATH_TEST_STRICT=1` is set.
pub fn skip(reason: &str) {
    if strict() {
        panic!("check skipped: {reason} (SWATH_TEST_STRICT=1: scripts/test installs every tool the tests need and runs as root)");
    }
    eprintln!("skipped: {reason}");
}

/// True when skipped checks are failures (`SWATH_TEST_STRICT=1`).
pub fn strict() -> bool {
    std::env::var_os("SWATH_TEST_STRICT").is_some_and(|v| v == "1")
}
