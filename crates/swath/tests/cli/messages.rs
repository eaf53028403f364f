//! Messages: write errors on standard output (help and version included) reported once, as
//! the GNU tool swath stands in for reports them; swath's own commands in one line, status 2.

use crate::util::{same_as_gnu_sh, swath_bin, Dir};
use std::process::Command;

/// `--help` and `--version` on a full device: GNU's message and status, not a panic (grep,
/// exit 101 before) nor a silent success (cmp and wc, exit 0 before).
#[test]
fn help_and_version_on_a_full_stdout_report_the_write_error_as_gnu() {
    let dir = Dir::new();
    for tool in ["cmp", "wc", "grep"] {
        for opt in ["--help", "--version"] {
            let out = same_as_gnu_sh(
                &dir,
                &format!("{tool} {opt} >/dev/full; echo \"status $?\""),
            );
            assert!(!out.stderr.contains("panicked"), "{tool} {opt}: {out:?}");
            assert!(!out.stdout.contains("status 0"), "{tool} {opt}: {out:?}");
            assert_eq!(out.stderr.lines().count(), 1, "{tool} {opt}: {out:?}");
        }
    }
    // GNU grep shows its help for an unknown --color WHEN.
    same_as_gnu_sh(&dir, "grep --color=bogus x >/dev/full; echo \"status $?\"");
}

/// `grep a f >/dev/full` printed `write error` twice (once for the file, once at the flush).
#[test]
fn grep_write_error_on_a_full_stdout_is_reported_once() {
    let dir = Dir::new();
    let lines: String = (0..300_000).map(|i| format!("line {i}\n")).collect();
    dir.write("big", lines.as_bytes());
    dir.write("small", b"a\nb\n");
    for script in [
        "grep line big >/dev/full",
        "grep line big small >/dev/full",
        "grep -c line big small >/dev/full",
        "grep a small >/dev/full",
        "grep -l a small big >/dev/full",
        "grep line <big >/dev/full",
    ] {
        let out = same_as_gnu_sh(&dir, &format!("{script}; echo \"status $?\""));
        assert_eq!(out.stderr.lines().count(), 1, "{script}: {out:?}");
        assert_eq!(out.stdout, "status 2\n", "{script}");
    }
}

/// wc and cmp on a full device: the GNU tool's wording and status, byte for byte.
#[test]
fn wc_and_cmp_write_errors_on_a_full_stdout_are_worded_as_gnu() {
    let dir = Dir::new();
    let lines: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    dir.write("big", lines.as_bytes());
    dir.write("other", b"x\n");
    for script in [
        "wc big >/dev/full",
        "wc big other >/dev/full",
        "wc -c <big >/dev/full",
        "cmp big other >/dev/full",
        "cmp -l big other >/dev/full",
        "cmp -l big big >/dev/full",
    ] {
        same_as_gnu_sh(&dir, &format!("{script}; echo \"status $?\""));
    }
}

/// swath's own commands: one line naming the cause, status 2, for help, version and reports.
#[test]
fn swath_commands_on_a_full_stdout_say_write_error_once_with_status_2() {
    let dir = Dir::new();
    dir.write(
        "access.log",
        b"1.2.3.4 - - [10/Oct/2024:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"x\"\n",
    );
    for args in [
        &["--help"][..],
        &["--version"],
        &["logs", "--help"],
        &["gen", "--version"],
        &["cp", "--help"],
        &["logs", "wf2", "access.log"],
        &["logs", "summary", "access.log"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(swath_bin())
            .args(args)
            .current_dir(dir.tmp.path())
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.ends_with(": write error: No space left on device\n"),
            "{args:?}: {stderr}"
        );
    }
}

/// `logs wf2` and `logs summary` printed escapes from URIs, referrers and user agents
/// straight to the terminal (a title change, a screen clear, colours, NULs).
#[test]
fn logs_text_reports_escape_terminal_control_characters() {
    let dir = Dir::new();
    let hostile = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m\0\u{9b}31m";
    let mut log = Vec::new();
    for (uri, status) in [(format!("/a{hostile}"), 200), (format!("/b{hostile}"), 404)] {
        log.extend_from_slice(
            format!(
                "1.2.3.4 - - [10/Oct/2024:13:55:36 +0000] \"GET {uri} HTTP/1.1\" {status} 5 \
                 \"http://r/{hostile}\" \"agent {hostile} \\\\x1b\"\n"
            )
            .as_bytes(),
        );
    }
    log.extend_from_slice(
        b"1.2.3.4 - - [10/Oct/2024:13:55:36 +0000] \"GET /c\xff HTTP/1.1\" 200 5 \"-\" \"x\"\n",
    );
    dir.write("hostile.log", &log);
    let shown = "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred\\x1b[0m\\x00\\xc2\\x9b31m";
    for args in [
        &["logs", "wf2", "--article", ".", "hostile.log"][..],
        &["logs", "summary", "hostile.log"],
    ] {
        let out = crate::util::swath(&dir, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let text = &out.stdout;
        let bad: Vec<u8> = text
            .iter()
            .copied()
            .filter(|&b| (b < 0x20 && b != b'\n') || b == 0x7f)
            .collect();
        assert!(
            bad.is_empty(),
            "{args:?}: control bytes {bad:?} in the report"
        );
        let text = String::from_utf8(text.clone()).expect("the report is UTF-8");
        assert!(!text.contains('\u{9b}'), "{args:?}");
        assert!(text.contains(&format!("/a{shown}")), "{args:?}: {text}");
        assert!(text.contains(&format!("/b{shown}")), "{args:?}: {text}");
        assert!(
            text.contains(&format!("http://r/{shown}")),
            "{args:?}: {text}"
        );
        assert!(text.contains("/c\\xff"), "{args:?}: {text}");
        if args[1] == "summary" {
            // A backslash in the log is doubled: "\x1b" typed in a field is not an escape.
            assert!(
                text.contains(&format!("agent {shown} \\\\\\\\x1b")),
                "{text}"
            );
        }
    }
}
