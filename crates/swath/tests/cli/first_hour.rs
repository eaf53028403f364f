//! What got in a new user's way in the first hour (issue 30): options accepted and then
//! ignored, reports of zeros for files that are no log, binary bytes in a generated log,
//! messages that said nothing or the wrong thing. Each test failed before its fix.

use std::process::Command;

use crate::util::{is_root, swath, Dir};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `grep -c x --range 0:100 FILE` counted the whole file and exited 0; `wc --range` without
/// `--emit-partial` said "the following required arguments were not provided:" and
/// nothing after it. Both now refuse with one line naming the option they need.
#[test]
fn range_without_emit_partial_is_refused_with_one_line() {
    let dir = Dir::new();
    dir.write("text.txt", &b"x\ny\n".repeat(1000));
    for (args, status) in [
        (&["grep", "-c", "x", "--range", "0:100", "text.txt"][..], 2),
        (&["grep", "-c", "x", "--operand-index", "3", "text.txt"], 2),
        (&["wc", "--range", "0:100", "text.txt"], 1),
        (&["wc", "-l", "--operand-index", "1", "text.txt"], 1),
    ] {
        let o = swath(&dir, args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(status), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?} printed a result");
        let first = err.lines().next().unwrap_or("");
        let option = args.iter().find(|a| a.starts_with("--")).unwrap();
        assert!(
            first.contains(option) && first.contains("--emit-partial OUT"),
            "{args:?}: {err}"
        );
    }
    // With --emit-partial both still act.
    let o = swath(
        &dir,
        &[
            "wc",
            "-l",
            "--range",
            "0:100",
            "--emit-partial",
            "p",
            "text.txt",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path("p").exists());
}

/// `logs wf2 /var/log/dpkg.log` printed a report of zeros with status 0 where `logs
/// summary` refused the file.
#[test]
fn wf2_refuses_a_file_that_is_no_access_log() {
    let dir = Dir::new();
    dir.write(
        "dpkg.log",
        b"2026-11-01 10:00:00 startup archives unpack\n\
          2026-11-01 10:00:01 install libfoo:amd64 <none> 1.2-3\n\
          2026-11-01 10:00:02 status half-installed libfoo:amd64 1.2-3\n",
    );
    for report in ["wf2", "summary"] {
        let o = swath(&dir, &["logs", report, "dpkg.log"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{report}: {err}");
        assert!(o.stdout.is_empty(), "{report} printed a report");
        assert_eq!(err.lines().count(), 1, "{report}: {err}");
        assert!(err.starts_with("swath logs: dpkg.log: "), "{report}: {err}");
    }
    // A log is still read, and an empty file is still an empty report.
    let o = swath(&dir, &["gen", "log", "200K", "a.log"]);
    assert!(o.status.success(), "{}", stderr(&o));
    dir.write("empty.log", b"");
    for f in ["a.log", "empty.log"] {
        let o = swath(&dir, &["logs", "wf2", f]);
        assert!(o.status.success(), "{f}: {}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("resources"));
    }
}

/// `swath gen log` wrote lines of binary garbage, so a grep of the log stopped at `binary
/// file matches`; now every line is text unless `--damaged` is given.
#[test]
fn a_generated_log_greps_as_text() {
    let dir = Dir::new();
    let o = swath(&dir, &["gen", "log", "4M", "access.log"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let log = std::fs::read(dir.path("access.log")).unwrap();
    assert!(
        log.iter().all(|&b| b == b'\n' || (0x20..0x7f).contains(&b)),
        "a byte that is not text"
    );
    let o = swath(&dir, &["grep", "-c", "GET", "access.log"]);
    let count: u64 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    assert!(count > 10_000, "{count}");
    let gnu = Command::new("grep")
        .args(["GET", "access.log"])
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&gnu.stdout).contains("binary file matches"));
    assert_eq!(
        String::from_utf8_lossy(&gnu.stdout).lines().count() as u64,
        count
    );
    // --damaged: the malformed lines, for testing readers.
    let o = swath(&dir, &["gen", "log", "4M", "damaged.log", "--damaged"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = swath(&dir, &["logs", "wf2", "damaged.log"]);
    assert!(
        stderr(&o).contains("malformed lines skipped"),
        "{}",
        stderr(&o)
    );
}

/// A size that does not parse names the forms that would, in every command of swath's
/// own that takes one (GNU's options keep GNU's words).
#[test]
fn an_invalid_size_lists_the_suffixes() {
    let dir = Dir::new();
    dir.write("a", b"abc\n");
    for args in [
        &["gen", "text", "1kb", "t"][..],
        &["demo", "--size", "1kb"],
        &["logs", "wf2", "--max-line", "1kb", "a"],
        &["wc", "--block-size", "1kb", "a"],
        &["cp", "--block-size", "1kb", "a", "b"],
        &["patch", "make", "--chunk", "1kb", "a", "a", "p"],
    ] {
        let o = swath(&dir, args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?}");
        assert!(
            err.contains("'1kb'") && err.contains("KiB") && err.contains("powers of 1000"),
            "{args:?}: {err}"
        );
    }
}

/// `swath cp FILE /proc/version` said "No such file or directory" of a file that exists.
#[test]
fn an_output_that_cannot_be_replaced_says_why() {
    let dir = Dir::new();
    dir.write("a", b"abc\n");
    let o = swath(&dir, &["cp", "a", "/proc/version"]);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(err.starts_with("swath cp: /proc/version: "), "{err}");
    assert!(
        !err.trim_end().ends_with("No such file or directory"),
        "{err}"
    );
    if is_root() {
        assert!(err.contains("temporary file"), "{err}");
    }
}

/// `swath cipher --help` showed `[INPUT] [OUTPUT]` as if both were optional.
#[test]
fn cipher_usage_shows_its_operands_as_required() {
    let dir = Dir::new();
    let o = swath(&dir, &["cipher", "--help"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let usage = text
        .lines()
        .find(|l| l.starts_with("Usage:"))
        .expect("a usage line");
    assert!(usage.contains("INPUT OUTPUT"), "{usage}");
    assert!(!usage.contains("[INPUT]"), "{usage}");
    assert!(text.contains("--in-place FILE") && text.contains("--resume FILE"));
}

/// `grep --json -m1` said `bytes_searched` was the whole file (209,715,200) where rg says
/// what it read before stopping: now the bytes up to the last selected line's end.
#[test]
fn json_bytes_searched_stops_where_the_search_stopped() {
    let dir = Dir::new();
    let mut text = b"first needle line\n".to_vec();
    text.extend(b"hay\n".repeat(1 << 19));
    text.extend(b"last needle\n");
    dir.write("big.txt", &text);
    let stats = |args: &[&str]| -> (u64, u64) {
        let o = swath(&dir, args);
        assert!(o.status.success(), "{}", stderr(&o));
        let mut end = 0;
        let mut summary = 0;
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            match v["type"].as_str() {
                Some("end") => end = v["data"]["stats"]["bytes_searched"].as_u64().unwrap(),
                Some("summary") => summary = v["data"]["stats"]["bytes_searched"].as_u64().unwrap(),
                _ => {}
            }
        }
        (end, summary)
    };
    assert_eq!(
        stats(&["grep", "--json", "-m1", "needle", "big.txt"]),
        (18, 18)
    );
    let whole = text.len() as u64;
    assert_eq!(
        stats(&["grep", "--json", "needle", "big.txt"]),
        (whole, whole)
    );
}

/// Typed input on a terminal: `logs summary` took Ctrl-D three times and `logs wf2` twice
/// (each look at the input met the terminal's end again); GNU's tools, and now every
/// swath command, end at the first.
#[test]
fn one_ctrl_d_ends_typed_input() {
    use std::io::Write;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::process::Stdio;
    let line = b"1.2.3.4 - - [01/Oct/2007:00:00:00 -0700] \"GET /a HTTP/1.1\" 200 5 \"-\" \"x\"\n";
    for args in [
        &["logs", "summary"][..],
        &["logs", "wf2"],
        &["wc", "-l"],
        &["grep", "-c", "GET"],
    ] {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty writes two new descriptors into the two integers.
        let r = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(r, 0, "openpty");
        // SAFETY: both descriptors were just made for these owners alone.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let mut child = Command::new(crate::util::swath_bin())
            .args(args)
            .stdin(Stdio::from(slave))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut tty = std::fs::File::from(master);
        tty.write_all(line).unwrap();
        // One end of input (VEOF, Ctrl-D, at the start of a line).
        tty.write_all(b"\x04").unwrap();
        let mut ended = None;
        for _ in 0..600 {
            if let Some(status) = child.try_wait().unwrap() {
                ended = Some(status);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if ended.is_none() {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?}: still reading after one Ctrl-D");
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
}

/// `logs summary --html report.html access.log` printed the whole text report too, and an
/// unwritable page came after the text; now the page alone is written (as GoAccess's `-o`),
/// or one line and status 2 with nothing printed. `merge --html` likewise.
#[test]
fn html_writes_the_page_alone() {
    let dir = Dir::new();
    let o = swath(&dir, &["gen", "log", "300K", "access.log"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = swath(
        &dir,
        &["logs", "summary", "--html", "report.html", "access.log"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let page = std::fs::read_to_string(dir.path("report.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..60]);
    // With --json the JSON is printed beside the page.
    let o = swath(
        &dir,
        &[
            "logs",
            "summary",
            "--json",
            "--html",
            "r2.html",
            "access.log",
        ],
    );
    assert!(o.status.success() && o.stdout.starts_with(b"{"));
    assert!(dir.path("r2.html").exists());
    for out in ["/nonexistent-dir/r.html", "/proc/r.html"] {
        let o = swath(&dir, &["logs", "summary", "--html", out, "access.log"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{out}: {err}");
        assert!(o.stdout.is_empty(), "{out}: printed before the error");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("swath logs: {out}: ")), "{err}");
    }
    // merge --html: the page alone too.
    let o = swath(
        &dir,
        &["logs", "summary", "--emit-partial", "p", "access.log"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = swath(&dir, &["merge", "--html", "m.html", "p"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert!(dir.path("m.html").exists());
}

/// A system error in swath's own commands is said as the engine says it, without the
/// `(os error N)` that Rust's errors append (`bench --dir FILE` said `File exists (os error
/// 17)`).
#[test]
fn system_errors_are_said_without_their_number() {
    let dir = Dir::new();
    dir.write("afile", b"x\n");
    for args in [
        &[
            "bench", "write", "--dir", "afile", "--runs", "1", "--size", "64K",
        ][..],
        &["gen", "text", "1M", "no-such-dir/x"],
    ] {
        let o = swath(&dir, args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("os error"), "{args:?}: {err}");
    }
}
