//! Progress bars: every command that can run long draws one on a terminal's standard
//! error (`SWATH_PROGRESS=always` draws at once, whatever the size), with its own name,
//! and never when standard error is not a terminal.

use std::path::Path;
use std::process::Command;

use crate::util::{swath_bin, Dir};

/// What `swath ARGS` writes on a terminal (script(1)) under `SWATH_PROGRESS=setting`, its
/// output sent to a pipe.
fn on_terminal(dir: &Dir, args: &str, setting: &str) -> String {
    let cmd = format!("'{}' {args} | cat > /dev/null", swath_bin().display());
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("SWATH_PROGRESS", setting)
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{args}: {o:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn long_commands_draw_a_bar_on_a_terminal_only() {
    if !Path::new("/usr/bin/script").exists() {
        swath_engine::testing::skip("script(1) not installed: terminal test skipped");
        return;
    }
    let dir = Dir::new();
    let size = 48 << 20;
    for (args, label) in [
        (format!("gen text {size} a.txt"), "swath gen text"),
        (format!("gen log {size} l.log"), "swath gen log"),
        ("cipher --shift 1 a.txt b.txt".to_string(), "swath cipher"),
        (
            "cipher --shift 1 --in-place b.txt".to_string(),
            "swath cipher",
        ),
        ("cp a.txt c.txt".to_string(), "swath cp"),
        ("wc a.txt".to_string(), "swath wc"),
        ("cmp a.txt c.txt".to_string(), "swath cmp"),
        ("grep -c zzzz a.txt".to_string(), "a.txt"),
        ("logs summary l.log".to_string(), "l.log"),
    ] {
        let said = on_terminal(&dir, &args, "always");
        // The bar: its label, then the bytes done of the whole.
        let bar = format!("{label}: [");
        assert!(said.contains(&bar), "{args}: no bar in {said:?}");
        assert!(
            said.contains(" MiB/48.00 MiB") || said.contains("/48.00 MiB"),
            "{args}: {said:?}"
        );
    }
    // Not a terminal: nothing on standard error, whatever SWATH_PROGRESS says.
    let out = Command::new(swath_bin())
        .args(["wc", "a.txt"])
        .env("SWATH_PROGRESS", "always")
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    // SWATH_PROGRESS=never: no bar on a terminal either.
    assert!(!on_terminal(&dir, "wc a.txt", "never").contains("swath wc: ["));
}
