//! `swath logs summary` against hostile logs and a log's writer who moves things while it is
//! followed (issue 26): escapes in the CSV, W3C headers that change, follows that meet a
//! planted link, a FIFO or another user's file.

use std::path::Path;

use crate::util::{swath, Dir};

/// Splits CSV text into rows of fields (RFC 4180: a quoted field may hold commas, doubled
/// quotes and line ends).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(!quoted, "a quoted field is not closed");
    assert!(
        field.is_empty() && row.is_empty(),
        "the last row has no line end"
    );
    rows
}

/// Item 12: `--csv` writes no control character from the log (clear screen, title,
/// colours, C1 controls, a bare CR or a line end inside a field): each is escaped as the
/// text report escapes it (`\x1b`), a backslash doubled, and the CSV stays valid: every
/// row has the header's eleven fields.
#[test]
fn csv_escapes_the_logs_control_characters() {
    let dir = Dir::new();
    let mut log = Vec::new();
    // Clear screen and home, a window title, a colour, a C1 CSI (U+009B), DEL, a bare CR,
    // a tab, a backslash; in the URI, the referrer and the agent.
    let nasty = "\x1b[2J\x1b[H\x1b]0;owned\x07\x1b[31mred\u{9b}31m\x7f\rcr\tt\\b";
    for i in 0..3 {
        log.extend_from_slice(
            format!(
                "1.2.3.{i} - - [10/Oct/2000:13:55:36 -0700] \"GET /{nasty} HTTP/1.1\" 200 5 \"http://r/{nasty}\" \"agent {nasty}\"\n"
            )
            .as_bytes(),
        );
    }
    dir.write("e.log", &log);
    let out = swath(&dir, &["logs", "summary", "--csv", "e.log"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).expect("the CSV is UTF-8");
    for (i, c) in text.char_indices() {
        assert!(
            c == '\n' || !c.is_control(),
            "a raw control character {c:?} at byte {i} of the CSV:\n{text}"
        );
    }
    let rows = csv_rows(&text);
    assert!(rows.len() > 10, "{text}");
    for r in &rows {
        assert_eq!(r.len(), 11, "a row of {} fields: {r:?}", r.len());
    }
    // The request's key, escaped as the text report escapes it.
    let want = "/\\x1b[2J\\x1b[H\\x1b]0;owned\\x07\\x1b[31mred\\xc2\\x9b31m\\x7f\\x0dcr\\x09t\\\\b";
    assert!(
        rows.iter()
            .any(|r| r[0] == "requests" && r[2] == want && r[3] == "GET"),
        "no requests row with the key {want:?}:\n{text}"
    );
    let txt = swath(&dir, &["logs", "summary", "e.log"]);
    assert!(
        String::from_utf8_lossy(&txt.stdout).contains(want),
        "the text report escapes the key otherwise"
    );
}

/// A combined log line for `uri`.
fn log_line(uri: &str) -> String {
    format!("1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET {uri} HTTP/1.0\" 200 100 \"-\" \"x\"\n")
}

/// The requests a `--follow` page counts (its embedded model's `"requests":N`).
pub fn page_requests(page: &Path) -> Option<u64> {
    let page = std::fs::read_to_string(page).ok()?;
    let at = page.find("\"requests\":")? + 11;
    page[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Waits (up to 30 s) for the page to count `n` requests.
fn wait_for_requests(page: &Path, n: u64) -> bool {
    for _ in 0..300 {
        if page_requests(page) == Some(n) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

/// What the log's writer puts at the log's name while `--follow` is about to reopen it.
#[derive(Clone, Copy, Debug)]
enum Replacement {
    /// Its own symbolic link to a log only root may read.
    LinkToRootOnlyLog,
    /// A FIFO (opening it without O_NONBLOCK waits for a writer forever).
    Fifo,
    /// A regular file of another user (uid 1).
    OtherUsersFile,
}

/// Kills `pid` unless `done` is set within 60 s: a follow that never reaches its pause point
/// (or never stops) fails the test instead of hanging it.
fn watchdog(pid: u32, done: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    std::thread::spawn(move || {
        for _ in 0..600 {
            if done.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        // SAFETY: kill has no memory effects; the child is not reaped before `done` is set.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    });
}

/// Makes a FIFO at `p`.
fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// Runs `swath ARGS` in `dir` under a [`watchdog`]: its status (`None` when killed) and
/// standard error.
fn run_watched(dir: &Dir, args: &[&str]) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(crate::util::swath_bin())
        .args(args)
        .current_dir(dir.tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    watchdog(child.id(), done.clone());
    let code = child.wait().unwrap().code();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (code, err)
}

/// Items 3 and 16: as root, `--follow` of a log in a directory of user `nobody`; the log is
/// rotated (a new regular file at its name), and while swath is about to reopen the name
/// (the `follow-reopen` pause point), `nobody` replaces the new file by `what`. swath must
/// not read it: the follow stops with one line naming the log and the cause, status 2, and
/// the page never holds a line of the replacement.
fn follow_meets(what: Replacement) {
    use std::os::unix::fs::{chown, lchown, PermissionsExt};
    if !crate::util::is_root() {
        swath_engine::testing::skip("not root: the follow race needs another user");
        return;
    }
    const NOBODY: u32 = 65534;
    let dir = Dir::new();
    let logs = dir.path("logs");
    std::fs::create_dir(&logs).unwrap();
    chown(&logs, Some(NOBODY), Some(NOBODY)).unwrap();
    let secret = dir.path("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::set_permissions(&secret, PermissionsExt::from_mode(0o700)).unwrap();
    let root_log = secret.join("root.log");
    std::fs::write(&root_log, log_line("/ROOT-ONLY").repeat(5)).unwrap();
    std::fs::set_permissions(&root_log, PermissionsExt::from_mode(0o600)).unwrap();
    let log = logs.join("f.log");
    let as_nobody = |p: &Path, data: &str| {
        std::fs::write(p, data).unwrap();
        chown(p, Some(NOBODY), Some(NOBODY)).unwrap();
    };
    as_nobody(&log, &log_line("/a").repeat(3));
    let page = dir.path("page.html");
    let mut cmd = std::process::Command::new(crate::util::swath_bin());
    cmd.args([
        "logs",
        "summary",
        "--follow",
        "1",
        "--html",
        "page.html",
        "logs/f.log",
    ])
    .current_dir(dir.tmp.path());
    let mut run = crate::util::Paused::spawn(cmd, dir.tmp.path(), "follow-reopen");
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    watchdog(run.child.id(), done.clone());
    let first = wait_for_requests(&page, 3);
    // The rotation: the old file moved away, a new one (nobody's) at the name.
    std::fs::rename(&log, logs.join("f.log.1")).unwrap();
    as_nobody(&log, &log_line("/new"));
    let reached = run.reached();
    std::fs::remove_file(&log).unwrap();
    match what {
        Replacement::LinkToRootOnlyLog => {
            std::os::unix::fs::symlink(&root_log, &log).unwrap();
            lchown(&log, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        Replacement::Fifo => {
            mkfifo(&log);
            chown(&log, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        Replacement::OtherUsersFile => {
            std::fs::write(&log, log_line("/OTHER-USER").repeat(5)).unwrap();
            chown(&log, Some(1), Some(1)).unwrap();
        }
    }
    let out = run.resume();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        first,
        "{what:?}: the first page never counted 3 requests; {err}"
    );
    assert!(
        reached,
        "{what:?}: swath never reached the reopen after the rotation; {err}"
    );
    let page_text = std::fs::read_to_string(&page).unwrap();
    assert!(
        !page_text.contains("ROOT-ONLY") && !page_text.contains("OTHER-USER"),
        "{what:?}: the replacement's lines are in the page"
    );
    assert_eq!(page_requests(&page), Some(3), "{what:?}");
    assert_eq!(out.status.code(), Some(2), "{what:?}: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "{what:?}: the start line and one line: {err}"
    );
    let cause = match what {
        Replacement::LinkToRootOnlyLog => "symbolic link",
        Replacement::Fifo => "FIFO",
        Replacement::OtherUsersFile => "owned by",
    };
    assert!(
        lines[1].starts_with("swath logs: logs/f.log: ") && lines[1].contains(cause),
        "{what:?}: {err}"
    );
}

#[test]
fn follow_does_not_follow_a_link_put_at_the_logs_name() {
    follow_meets(Replacement::LinkToRootOnlyLog);
}

#[test]
fn follow_stops_at_a_fifo_put_at_the_logs_name() {
    follow_meets(Replacement::Fifo);
}

#[test]
fn follow_stops_at_another_users_file_put_at_the_logs_name() {
    follow_meets(Replacement::OtherUsersFile);
}

/// Items 3 and 16 at the start: a FIFO, a symbolic link or a directory named as the log is
/// refused at once with one line and status 2 (a FIFO is not opened for reading, which
/// would wait for a writer).
#[test]
fn follow_refuses_a_fifo_a_link_or_a_directory_at_once() {
    let dir = Dir::new();
    dir.write("real.log", log_line("/a").as_bytes());
    std::os::unix::fs::symlink("real.log", dir.path("link.log")).unwrap();
    std::fs::create_dir(dir.path("d.log")).unwrap();
    mkfifo(&dir.path("fifo.log"));
    for (name, cause) in [
        ("fifo.log", "FIFO"),
        ("link.log", "symbolic link"),
        ("d.log", "directory"),
    ] {
        let (status, err) = run_watched(
            &dir,
            &["logs", "summary", "--follow", "1", "--html", "p.html", name],
        );
        assert_eq!(status, Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(
            err.starts_with(&format!("swath logs: {name}: ")) && err.contains(cause),
            "{name}: {err}"
        );
        assert!(!dir.path("p.html").exists(), "{name}: a page was written");
    }
}

/// Item 16, the command's side of `swath.dask`: a piece of a FIFO (`--emit-partial`) is
/// refused at once, as a device is, with one line (opening the FIFO for reading waited for
/// a writer forever). The statuses are each command's for a device (`/dev/null`).
#[test]
fn emit_partial_refuses_a_fifo_at_once() {
    let dir = Dir::new();
    mkfifo(&dir.path("pipe.log"));
    let cases: [(&[&str], &str, i32); 4] = [
        (&["wc", "--emit-partial", "o"], "swath wc", 1),
        (&["grep", "-c", "x", "--emit-partial", "o"], "swath grep", 2),
        (&["logs", "wf2", "--emit-partial", "o"], "swath logs", 1),
        (
            &["logs", "summary", "--emit-partial", "o", "--range", "0:9"],
            "swath logs",
            1,
        ),
    ];
    for (args, prog, status) in cases {
        let mut args = args.to_vec();
        args.push("pipe.log");
        let (code, err) = run_watched(&dir, &args);
        assert_eq!(
            (code, err.as_str()),
            (
                Some(status),
                format!(
                    "{prog}: pipe.log: a byte range needs a regular file, not a pipe or a device\n"
                )
                .as_str()
            ),
            "{args:?}"
        );
    }
}

/// An IIS log whose `#Fields:` line changes (IIS writes its header again when it starts,
/// here with the client and the file swapped and the rest in another order too, then back),
/// and the same requests under one header.
fn iis_logs(requests: u32) -> (String, String) {
    let first = [
        "date",
        "time",
        "s-ip",
        "cs-method",
        "cs-uri-stem",
        "cs-uri-query",
        "c-ip",
        "cs(User-Agent)",
        "sc-status",
        "sc-bytes",
        "time-taken",
    ];
    let second = [
        "c-ip",
        "time",
        "date",
        "cs-uri-stem",
        "sc-bytes",
        "sc-status",
        "cs-method",
        "time-taken",
        "s-ip",
        "cs(User-Agent)",
        "cs-uri-query",
    ];
    let header = |names: &[&str]| {
        format!(
            "#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n#Date: 2024-03-01 00:00:00\n#Fields: {}\n",
            names.join(" ")
        )
    };
    let record = |i: u32, names: &[&str]| {
        names
            .iter()
            .map(|n| match *n {
                "date" => format!("2024-03-0{}", 1 + i % 2),
                "time" => format!("{:02}:{:02}:07", i % 24, i % 60),
                "s-ip" => "10.0.0.1".to_string(),
                "cs-method" => ["GET", "POST"][(i % 2) as usize].to_string(),
                "cs-uri-stem" => format!("/page{}.html", i % 13),
                "cs-uri-query" => "-".to_string(),
                "c-ip" => format!("192.0.2.{}", i % 37),
                "cs(User-Agent)" => format!("Mozilla/5.0+(Agent+{})", i % 4),
                "sc-status" => ["200", "404", "304"][(i % 3) as usize].to_string(),
                "sc-bytes" => (i * 131 % 9000).to_string(),
                "time-taken" => (i % 250).to_string(),
                other => panic!("{other}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
            + "\n"
    };
    let (mut log, mut one) = (header(&first), header(&first));
    for i in 0..requests {
        // A third of the way in IIS restarts with the other order; two thirds in, again
        // with the first.
        if i == requests / 3 {
            log += &header(&second);
        }
        if i == 2 * requests / 3 {
            log += &header(&first);
        }
        let order: &[&str] = if (requests / 3..2 * requests / 3).contains(&i) {
            &second
        } else {
            &first
        };
        log += &record(i, order);
        one += &record(i, &first);
    }
    (log, one)
}

/// Item 11: a W3C log whose second `#Fields:` line has the same fields in another order
/// reads as the same requests under one header (its client addresses stay clients, no line
/// fails), for several thread counts and block sizes, compressed or from standard input,
/// and as ranges read apart and merged.
#[test]
fn w3c_fields_lines_in_another_order_are_followed() {
    let dir = Dir::new();
    let (log, one) = iis_logs(6000);
    dir.write("iis.log", log.as_bytes());
    dir.write("one.log", one.as_bytes());
    let json = |args: &[&str]| {
        let out = swath(&dir, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let want = json(&["logs", "summary", "--json", "one.log"]);
    assert!(want.contains("\"lines_failed\": 0") && want.contains("\"requests\": 6000"));
    for threads in ["1", "2", "4"] {
        for bs in ["4K", "64K", "1M"] {
            let got = json(&[
                "logs",
                "summary",
                "--json",
                "--threads",
                threads,
                "--block-size",
                bs,
                "iis.log",
            ]);
            assert_eq!(got, want, "--threads {threads} --block-size {bs}");
        }
    }
    // Through the stream reader: gzip, and standard input.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, log.as_bytes()).unwrap();
    dir.write("iis.log.gz", &gz.finish().unwrap());
    assert_eq!(
        json(&["logs", "summary", "--json", "iis.log.gz"]),
        want,
        "gzip"
    );
    let out = std::process::Command::new(crate::util::swath_bin())
        .args(["logs", "summary", "--json", "-"])
        .current_dir(dir.tmp.path())
        .stdin(std::fs::File::open(dir.path("iis.log")).unwrap())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        want,
        "standard input"
    );
    // Ranges read apart (each finds the header in force at its start) and merged.
    let len = log.len();
    let cuts = [0, len / 5, len / 2, len * 3 / 4, len];
    let mut parts = Vec::new();
    for (k, w) in cuts.windows(2).enumerate() {
        let part = format!("p{k}");
        let range = format!("{}:{}", w[0], w[1]);
        let out = swath(
            &dir,
            &[
                "logs",
                "summary",
                "--emit-partial",
                &part,
                "--range",
                &range,
                "iis.log",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{range}: {out:?}");
        parts.push(part);
    }
    let mut args = vec!["merge", "--json"];
    args.extend(parts.iter().map(String::as_str));
    assert_eq!(json(&args), want, "ranges merged");
}

/// Item 11 in `--follow`: a `#Fields:` line in another order appended to a followed log
/// governs the lines after it, those read with it and those read later.
#[test]
fn follow_reads_by_the_fields_line_in_force() {
    let dir = Dir::new();
    let (log, _) = iis_logs(600);
    // Up to the second header; then a hundred requests under it; then the rest, as the
    // log grows.
    let cut = log.match_indices("#Software").nth(1).unwrap().0;
    let lines_to =
        |at: usize, n: usize| at + log[at..].match_indices('\n').nth(n - 1).unwrap().0 + 1;
    let cut2 = lines_to(cut, 4 + 100);
    dir.write("iis.log", &log.as_bytes()[..cut]);
    let mut child = std::process::Command::new(crate::util::swath_bin())
        .args([
            "logs", "summary", "--follow", "1", "--html", "p.html", "iis.log",
        ])
        .current_dir(dir.tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let page = dir.path("p.html");
    let first = wait_for_requests(&page, 200);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path("iis.log"))
        .unwrap();
    std::io::Write::write_all(&mut f, &log.as_bytes()[cut..cut2]).unwrap();
    let second = wait_for_requests(&page, 300);
    std::io::Write::write_all(&mut f, &log.as_bytes()[cut2..]).unwrap();
    let all = wait_for_requests(&page, 600);
    let text = std::fs::read_to_string(&page).unwrap_or_default();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(first && second, "{:?}", page_requests(&page));
    assert!(
        all,
        "the lines after the second header: {:?}",
        page_requests(&page)
    );
    assert!(text.contains("\"lines_failed\":0"), "lines failed");
    assert!(
        text.contains("\"host\":\"192.0.2.") && !text.contains("\"host\":\"/page"),
        "a file read as a client"
    );
}
