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
        &["cipher", "--shift", "3", "access.log", "-"],
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
        let stderr = crate::util::without_format_line(&out.stderr);
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
        // wf2 shows a byte that is not UTF-8 as \xff; the summary (text drawn from the
        // same model as its JSON) as U+FFFD.
        let bad_byte = if args[1] == "summary" {
            "/c\u{fffd}"
        } else {
            "/c\\xff"
        };
        assert!(text.contains(bad_byte), "{args:?}: {text}");
        if args[1] == "summary" {
            // A backslash in the log is doubled: "\x1b" typed in a field is not an escape.
            assert!(
                text.contains(&format!("agent {shown} \\\\\\\\x1b")),
                "{text}"
            );
        }
    }
}

/// `--block-size -4K` said `invalid option -- '4'`: a negative size is an invalid size.
#[test]
fn negative_sizes_are_refused_as_invalid_sizes_not_read_as_options() {
    let dir = Dir::new();
    dir.write("a", b"abc\n");
    for args in [
        &["wc", "--block-size", "-4K", "a"][..],
        &["cmp", "--block-size", "-4K", "a", "a"],
        &["cmp", "--max-diffs", "-3", "a", "a"],
        &["grep", "--block-size", "-4K", "x", "a"],
        &["cp", "--block-size", "-4K", "a", "b"],
        &["logs", "wf2", "--block-size", "-4K", "a"],
        &["gen", "mutate", "--truncate", "-3", "a", "b"],
    ] {
        let out = crate::util::swath(&dir, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(!stderr.contains("invalid option"), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("unexpected argument"),
            "{args:?}: {stderr}"
        );
        let value = args
            .iter()
            .find(|a| a.starts_with('-') && a.len() > 1 && a.as_bytes()[1].is_ascii_digit())
            .unwrap();
        assert!(stderr.contains(&format!("'{value}'")), "{args:?}: {stderr}");
        assert!(stderr.contains("invalid"), "{args:?}: {stderr}");
        assert!(!dir.path("b").exists(), "{args:?}");
    }
}

/// `gen text 10` wrote 640 MB to a file named `10`: an output name that reads as a size is
/// refused (and `./10` names such a file on purpose).
#[test]
fn gen_refuses_an_output_name_that_reads_as_a_size() {
    let dir = Dir::new();
    for args in [
        &["gen", "text", "10"][..],
        &["gen", "text", "1k", "20M"],
        &["gen", "log", "1k", "5"],
    ] {
        let out = crate::util::swath(&dir, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains("reads as a size"), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    for name in ["10", "20M", "5"] {
        assert!(!dir.path(name).exists(), "{name} was written");
    }
    let out = crate::util::swath(&dir, &["gen", "text", "1k", "./20M"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::metadata(dir.path("20M")).unwrap().len(), 1024);
}

/// `gen` refused output names that are not UTF-8.
#[test]
fn gen_accepts_output_names_that_are_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = Dir::new();
    let name = OsStr::from_bytes(b"data\xff.txt");
    let log = OsStr::from_bytes(b"log\xfe");
    for args in [
        vec![
            OsStr::new("gen"),
            OsStr::new("text"),
            OsStr::new("2k"),
            name,
        ],
        vec![OsStr::new("gen"), OsStr::new("log"), OsStr::new("3k"), log],
    ] {
        let out = Command::new(swath_bin())
            .args(&args)
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        std::fs::metadata(dir.tmp.path().join(name)).unwrap().len(),
        2048
    );
    assert_eq!(
        std::fs::metadata(dir.tmp.path().join(log)).unwrap().len(),
        3072
    );
}

/// `cmp --json` turned bytes that are not UTF-8 in names into U+FFFD: the exact bytes are in
/// `file1_bytes` / `file2_bytes` (and the eof's `file_bytes`), as docs/json.md says.
#[test]
fn cmp_json_keeps_names_that_are_not_utf8_exactly() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = Dir::new();
    let raw = b"x\xff\xfe";
    std::fs::write(dir.tmp.path().join(OsStr::from_bytes(raw)), b"ab\n").unwrap();
    dir.write("short", b"ab");
    let run = |args: &[&OsStr]| -> serde_json::Value {
        let out = Command::new(swath_bin())
            .arg("cmp")
            .args(args)
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let name = OsStr::from_bytes(raw);
    let bytes = serde_json::json!([b'x', 0xff, 0xfe]);
    let v = run(&[OsStr::new("--json"), name, OsStr::new("short")]);
    assert_eq!(v["file1"], "x\u{fffd}\u{fffd}");
    assert_eq!(v["file1_bytes"], bytes);
    assert_eq!(v["file2"], "short");
    assert!(v.get("file2_bytes").is_none(), "{v}");
    assert_eq!(v["eof"]["file"], "short");
    assert!(v["eof"].get("file_bytes").is_none(), "{v}");
    let v = run(&[
        OsStr::new("--json"),
        OsStr::new("-l"),
        OsStr::new("short"),
        name,
    ]);
    assert_eq!(v["file2_bytes"], bytes);
    assert_eq!(v["eof"]["file"], "short");
    // The shorter file is the one whose name is not UTF-8.
    std::fs::write(dir.tmp.path().join(OsStr::from_bytes(raw)), b"a").unwrap();
    let v = run(&[OsStr::new("--json"), name, OsStr::new("short")]);
    assert_eq!(v["eof"]["file"], "x\u{fffd}\u{fffd}");
    assert_eq!(v["eof"]["file_bytes"], bytes);
}

/// `--help` through the `wc`, `cmp` and `grep` links: GNU's own text first (GNU's test
/// scripts read the options out of it), swath's options after it, in a section of their own.
#[test]
fn help_through_the_links_is_gnus_layout() {
    let dir = crate::util::Dir::new();
    let [gnu, ours] = dir.bin_dirs();
    // How much of GNU's text is the part both print: up to the line before its footer.
    for (tool, until) in [
        (
            "wc",
            "      --version     output version information and exit",
        ),
        (
            "cmp",
            "Exit status is 0 if inputs are the same, 1 if different, 2 if trouble.",
        ),
        (
            "grep",
            "  -U, --binary              do not strip CR characters at EOL (MSDOS/Windows)",
        ),
    ] {
        let run = |bin: &std::path::Path| {
            // Through PATH, so that both see argv[0] as the bare name.
            let out = std::process::Command::new(tool)
                .arg("--help")
                .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
                .env("LC_ALL", "C")
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{tool} --help");
            String::from_utf8(out.stdout).unwrap()
        };
        let (g, o) = (run(&gnu), run(&ours));
        let cut = |t: &str| -> String {
            let end = t
                .find(until)
                .unwrap_or_else(|| panic!("{tool}: {until:?} in {t}"));
            t[..end + until.len()].to_string()
        };
        assert_eq!(cut(&o), cut(&g), "{tool} --help");
        assert!(o.contains("swath's own options"), "{tool}: {o}");
        assert!(o.contains("--threads"), "{tool}: {o}");
    }
}

/// A file that changes size while read is named whole, its cause after it, also when its
/// name holds `: ` (wc, grep and their partial pieces cut the message at the first `: `
/// and printed the name's tail as the cause). The file grows at the executor's pause point,
/// after its size was taken.
#[test]
fn a_changed_file_whose_name_holds_a_colon_is_named_whole() {
    use crate::util::Paused;
    use std::io::Write;
    let dir = Dir::new();
    let name = "log: old";
    let body: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
    let cases: [&[&str]; 4] = [
        &["wc", "--strategy", "pread", "--threads", "2"],
        &["grep", "-c", "--strategy=pread", "--threads=2", "line"],
        &[
            "wc",
            "--strategy",
            "pread",
            "--threads",
            "2",
            "--range",
            "0:300000",
            "--emit-partial",
            "p",
        ],
        &[
            "grep",
            "-c",
            "--strategy=pread",
            "--threads=2",
            "--range=0:300000",
            "--emit-partial=p",
            "line",
        ],
    ];
    for args in cases {
        dir.write(name, body.as_bytes());
        let mut cmd = Command::new(swath_bin());
        cmd.args(args).arg(name).current_dir(dir.tmp.path());
        let mut p = Paused::spawn(cmd, dir.tmp.path(), "exec-parallel");
        assert!(p.reached(), "{args:?}: never reached the executor");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path(name))
            .unwrap();
        f.write_all(b"one more line\n").unwrap();
        drop(f);
        let out = p.resume();
        let err = String::from_utf8_lossy(&out.stderr);
        // The name as the tool shows it (wc quotes it as GNU wc does), then the cause.
        let cause = format!(
            ": file changed size while being read (was {} bytes, now {})",
            body.len(),
            body.len() + 14
        );
        let line = err.lines().next().unwrap_or("");
        let shown = ["log: old", "'log: old'"]
            .iter()
            .any(|n| line == format!("swath {}: {n}{cause}", args[0]));
        assert!(shown, "{args:?}: {err}");
        assert!(!out.status.success(), "{args:?}: {out:?}");
        let _ = std::fs::remove_file(dir.path("p"));
        let _ = std::fs::remove_file(dir.path(".pause-exec-parallel"));
    }
}
