//! `swath demo`: a row per command beside its peer with the answers checked equal, a peer
//! that is missing or answers otherwise, and the private scratch directory removed at the
//! end, on an error and on Ctrl-C. Each run's `TMPDIR` is a directory of the test's own,
//! checked empty afterwards.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util::{swath_bin, Dir};

/// The rows the demo prints: the command's cell, and its peer's.
const ROWS: [(&str, &str); 9] = [
    ("cmp, identical files", "GNU cmp"),
    ("cmp, one difference near the end", "GNU cmp"),
    ("wc", "GNU wc"),
    ("grep -c -F", "GNU grep"),
    ("grep -c -F", "ripgrep"),
    ("cipher --alphabet --shift 13", "tr"),
    ("cp", "GNU cp"),
    ("logs summary", "GoAccess"),
    ("patch make", "xdelta3"),
];

/// `swath demo ARGS` with `TMPDIR` set to a fresh directory of `dir` (returned), and `PATH`
/// replaced when given.
fn demo(dir: &Dir, args: &[&str], path: Option<&Path>) -> (Output, PathBuf) {
    let tmp = dir.path("tmpdir");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut c = Command::new(swath_bin());
    c.arg("demo").args(args).env("TMPDIR", &tmp);
    if let Some(p) = path {
        c.env("PATH", p);
    }
    (c.output().unwrap(), tmp)
}

fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

/// The table's line for a row.
fn line<'a>(stdout: &'a str, command: &str, peer: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with(command) && l.contains(&format!("  {peer}  ")))
        .unwrap_or_else(|| panic!("no row for {command} beside {peer}:\n{stdout}"))
}

/// Whether `tool` is on this machine's PATH (the CI installs every peer).
fn installed(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

fn peer_tool(peer: &str) -> &'static str {
    match peer {
        "GNU cmp" => "cmp",
        "GNU wc" => "wc",
        "GNU grep" => "grep",
        "ripgrep" => "rg",
        "tr" => "tr",
        "GNU cp" => "cp",
        "GoAccess" => "goaccess",
        "xdelta3" => "xdelta3",
        other => panic!("unknown peer {other}"),
    }
}

/// A directory holding only an executable shell script named `name`.
fn bin_with(dir: &Dir, name: &str, script: &str) -> PathBuf {
    let bin = dir.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let p = bin.join(name);
    std::fs::write(&p, format!("#!/bin/sh\nPATH=/usr/bin:/bin\n{script}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[test]
fn demo_prints_a_row_per_command_with_equal_answers_and_removes_its_files() {
    let dir = Dir::new();
    let (out, tmp) = demo(&dir, &["--size", "10M"], None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(!stdout.contains("DIFFERENT"), "{stdout}");
    for (command, peer) in ROWS {
        let l = line(&stdout, command, peer);
        if installed(peer_tool(peer)) {
            assert!(l.ends_with("same"), "{l}");
        } else {
            assert!(l.contains("not installed"), "{l}");
        }
    }
    // The text rows read all 10M (10,485,760 bytes), the slower peers' rows less.
    assert!(
        line(&stdout, "cp", "GNU cp").contains(" 10.0 MiB "),
        "{stdout}"
    );
    assert!(
        line(&stdout, "wc", "GNU wc").contains(" 1.2 MiB "),
        "{stdout}"
    );
    // Why those rows read less is said under the table.
    assert!(
        stdout.contains("Rows on less data: wc counts an eighth"),
        "{stdout}"
    );
    // The row of the pair with one difference names it, as both tools print it.
    assert!(
        stdout.contains("text text.changed differ: byte "),
        "{stdout}"
    );
    assert!(
        is_empty(&tmp),
        "left behind: {:?}",
        std::fs::read_dir(&tmp).unwrap().collect::<Vec<_>>()
    );
}

#[test]
fn demo_json_holds_every_row_with_its_times() {
    let dir = Dir::new();
    let (out, tmp) = demo(&dir, &["--size", "1M", "--runs", "1", "--json"], None);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["same"], true);
    assert_eq!(v["size"], 1 << 20);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), ROWS.len());
    for (r, (command, peer)) in rows.iter().zip(ROWS) {
        assert!(r["command"].as_str().unwrap().starts_with(command), "{r}");
        assert_eq!(r["peer"], peer);
        assert!(r["swath_seconds"].as_f64().unwrap() > 0.0, "{r}");
        assert!(
            r["swath_command"].as_str().unwrap().starts_with("swath "),
            "{r}"
        );
        if installed(peer_tool(peer)) {
            assert_eq!(r["answer"], "same", "{r}");
            assert!(r["peer_seconds"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    assert!(is_empty(&tmp));
}

#[test]
fn demo_without_peers_times_swath_alone() {
    let dir = Dir::new();
    let empty = dir.path("nothing");
    std::fs::create_dir(&empty).unwrap();
    let (out, tmp) = demo(&dir, &["--size", "1M", "--runs", "1"], Some(&empty));
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for (command, peer) in ROWS {
        let l = line(&stdout, command, peer);
        assert!(l.contains(" ms ") && l.contains("not installed"), "{l}");
    }
    assert!(is_empty(&tmp));
}

#[test]
fn demo_says_loudly_when_answers_differ_and_fails() {
    let dir = Dir::new();
    // A wc that miscounts.
    let bin = bin_with(&dir, "wc", "echo '1 2 3 words'");
    let (out, tmp) = demo(&dir, &["--size", "1M", "--runs", "1"], Some(&bin));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let l = line(&stdout, "wc", "GNU wc");
    assert!(l.ends_with("DIFFERENT"), "{l}");
    assert!(
        stdout.contains("ANSWERS DIFFER: swath printed \""),
        "{stdout}"
    );
    // The other rows are still shown.
    assert!(line(&stdout, "cmp, identical files", "GNU cmp").contains("not installed"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("ANSWERS DIFFER") && stderr.contains("wc"),
        "{stderr}"
    );
    assert!(is_empty(&tmp));
}

#[test]
fn demo_failing_peer_is_one_line_and_leaves_nothing() {
    let dir = Dir::new();
    let bin = bin_with(&dir, "cmp", "echo 'cmp: something broke' >&2; exit 2");
    let (out, tmp) = demo(&dir, &["--size", "1M", "--runs", "1"], Some(&bin));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("exit status 2") && stderr.contains("something broke"),
        "{stderr}"
    );
    assert!(is_empty(&tmp));
}

#[test]
fn demo_removes_its_private_directory_on_ctrl_c() {
    let dir = Dir::new();
    let started = dir.path("started");
    // A cmp that says it started, then takes its time.
    let bin = bin_with(
        &dir,
        "cmp",
        &format!(": > '{}'\nexec sleep 60", started.display()),
    );
    let tmp = dir.path("tmpdir");
    std::fs::create_dir_all(&tmp).unwrap();
    let child = crate::util::default_signals(&mut Command::new(swath_bin()))
        .args(["demo", "--size", "1M", "--runs", "1"])
        .env("TMPDIR", &tmp)
        .env("PATH", &bin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the demo never ran cmp");
        std::thread::sleep(Duration::from_millis(20));
    }
    // While it runs, the scratch directory is the only thing in TMPDIR, and private.
    let entries: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let m = std::fs::symlink_metadata(&entries[0]).unwrap();
    assert!(m.is_dir());
    assert_eq!(m.mode() & 0o777, 0o700, "mode {:o}", m.mode());
    // SAFETY: kill has no memory-safety preconditions; the id is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        is_empty(&tmp),
        "left behind: {:?}",
        std::fs::read_dir(&tmp).unwrap().collect::<Vec<_>>()
    );
}
