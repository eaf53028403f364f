//! What a test does when it cannot make its check on this machine (a peer tool missing, not
//! root, a file system without holes): it says so and passes, except under
//! `SWATH_TEST_STRICT=1`, which `scripts/test` sets after installing every tool the tests
//! need: there a check skipped is a check never made, and so a failure.

/// Reports that the calling test skips its check for `reason`; panics (failing the test)
/// when `SWATH_TEST_STRICT=1` is set.
pub fn skip(reason: &str) {
    if let Err(failure) = skip_or_fail(strict(), reason) {
        panic!("{failure}");
    }
}

/// A check skipped where skipping is a failure (`SWATH_TEST_STRICT=1`).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "check skipped: {reason} (SWATH_TEST_STRICT=1: scripts/test installs every tool the tests \
     need and runs as root)"
)]
pub struct SkippedCheck {
    /// Why the check could not be made.
    pub reason: String,
}

/// The note a skipped check prints, or under `strict` the failure it is.
fn skip_or_fail(strict: bool, reason: &str) -> Result<(), SkippedCheck> {
    if strict {
        return Err(SkippedCheck {
            reason: reason.to_string(),
        });
    }
    eprintln!("skipped: {reason}");
    Ok(())
}

/// True when skipped checks are failures (`SWATH_TEST_STRICT=1`).
pub fn strict() -> bool {
    std::env::var_os("SWATH_TEST_STRICT").is_some_and(|v| v == "1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipped_check_fails_under_strict() {
        assert_eq!(skip_or_fail(false, "no rg here"), Ok(()));
        let err = skip_or_fail(true, "no rg here").unwrap_err().to_string();
        assert!(err.starts_with("check skipped: no rg here ("), "{err}");
    }
}
