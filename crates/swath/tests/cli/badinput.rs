//! The bad-input harness: every subcommand that reads a file is driven through the inputs a
//! hostile or careless user gives it (missing, a directory, unreadable, empty, a FIFO,
//! `/dev/zero`, a 1 TB sparse file, a file that grows or shrinks while read, a full disk, a
//! small `ulimit -v` or `ulimit -n`), and each run is held to the same contract:
//!
//! - no panic, no abort, no death by a signal it did not get (status 101, 134, SIGSEGV…);
//! - on failure, exactly one line on stderr naming the file and the cause, and the command's
//!   documented error status (GNU's for `cmp`, `wc`, `grep`; 2 for `logs`; 1 for `cp`,
//!   `cipher`, `gen`, as GNU `cp` and `tr`, and 2 when their input changed while read);
//! - no partial output at the target, and nothing left in the directory but what the command
//!   documents;
//! - memory bounded by the options, not by the input (endless inputs are stopped after a time
//!   bound; their anonymous resident memory is sampled from `/proc` while they run).

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{swath_bin, Dir, SmallFs};

/// How a command takes its input and where it writes.
struct Cmd {
    /// A short label for messages.
    label: &'static str,
    /// The arguments, with `IN` and `OUT` standing for the input and output paths.
    args: &'static [&'static str],
    /// Statuses of a run that worked (cmp and grep have two).
    ok: &'static [i32],
    /// The status of a run that failed.
    error: i32,
    /// The status of a run whose input changed while read, or whose standard output could
    /// not be written, where it is not `error` (swath's own commands say 2 then, as the
    /// engine's readers and GNU's cmp and grep do).
    changed: i32,
    /// True when the command writes the file `OUT`.
    writes_out: bool,
    /// True when the command rewrites its input (`--in-place`).
    in_place: bool,
    /// True when the command takes only regular files (it seeks in them or rewrites them).
    regular_only: bool,
}

const CMDS: &[Cmd] = &[
    Cmd {
        label: "cmp",
        args: &["cmp", "IN", "ref"],
        ok: &[0, 1],
        error: 2,
        changed: 2,
        writes_out: false,
        regular_only: false,
        in_place: false,
    },
    Cmd {
        label: "wc",
        args: &["wc", "IN"],
        ok: &[0],
        error: 1,
        changed: 1,
        writes_out: false,
        regular_only: false,
        in_place: false,
    },
    Cmd {
        label: "grep",
        args: &["grep", "-c", "GET", "IN"],
        ok: &[0, 1],
        error: 2,
        changed: 2,
        writes_out: false,
        regular_only: false,
        in_place: false,
    },
    Cmd {
        label: "logs wf2",
        args: &["logs", "wf2", "IN"],
        ok: &[0],
        error: 2,
        changed: 2,
        writes_out: false,
        regular_only: false,
        in_place: false,
    },
    Cmd {
        label: "logs summary",
        args: &["logs", "summary", "IN"],
        ok: &[0],
        error: 2,
        changed: 2,
        writes_out: false,
        regular_only: false,
        in_place: false,
    },
    Cmd {
        label: "logs summary --html",
        args: &["logs", "summary", "--html", "OUT", "IN"],
        ok: &[0],
        error: 2,
        changed: 2,
        writes_out: true,
        regular_only: false,
        in_place: false,
    },
    Cmd {
        label: "cipher",
        args: &["cipher", "--shift", "3", "IN", "OUT"],
        ok: &[0],
        error: 1,
        changed: 2,
        writes_out: true,
        regular_only: false,
        in_place: false,
    },
    Cmd {
        label: "cipher --in-place",
        args: &["cipher", "--shift", "3", "--in-place", "IN"],
        ok: &[0],
        error: 1,
        changed: 2,
        writes_out: false,
        regular_only: true,
        in_place: true,
    },
    Cmd {
        label: "cp",
        args: &["cp", "IN", "OUT"],
        ok: &[0],
        error: 1,
        changed: 2,
        writes_out: true,
        regular_only: false,
        in_place: false,
    },
    Cmd {
        label: "gen mutate",
        args: &["gen", "mutate", "IN", "OUT", "--diffs", "3"],
        ok: &[0],
        error: 1,
        changed: 2,
        writes_out: true,
        regular_only: true,
        in_place: false,
    },
];

/// True when the tests run as root (CI does).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A small, valid access log: real input for every command.
fn sample_log() -> Vec<u8> {
    let mut s = String::new();
    for i in 0..2000 {
        s.push_str(&format!(
            "10.0.{}.{} - - [10/Oct/2023:13:{:02}:{:02} +0000] \"GET /ongoing/When/200x/2007/0{}/x{} HTTP/1.1\" 200 {} \"-\" \"agent\"\n",
            i % 7,
            i % 251,
            i % 60,
            (i * 7) % 60,
            1 + i % 9,
            i % 13,
            100 + i
        ));
    }
    s.into_bytes()
}

/// The arguments of `cmd` with `IN` and `OUT` replaced.
fn argv(cmd: &Cmd, input: &Path, out: &Path) -> Vec<OsString> {
    cmd.args
        .iter()
        .map(|a| match *a {
            "IN" => input.as_os_str().to_owned(),
            "OUT" => out.as_os_str().to_owned(),
            other => OsString::from(other),
        })
        .collect()
}

/// What one run did.
#[derive(Debug)]
struct Run {
    status: Option<i32>,
    signal: Option<i32>,
    stdout: String,
    stderr: String,
    /// Peak anonymous resident memory in KiB (`RssAnon`), sampled every 20 ms while it ran.
    peak_kib: u64,
    /// True when the harness stopped it at the time bound.
    stopped: bool,
}

/// Anonymous resident memory of a live process, in KiB: the memory swath allocated. Pages
/// of a mapped input (`RssFile`) are the page cache, which the kernel takes back as it
/// needs, so they are not counted (a map over a 1 TB file of holes shows gigabytes there).
fn rss_anon(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Reads a child's pipes on threads so that it never blocks on a full pipe.
fn drain(
    child: &mut Child,
) -> (
    std::thread::JoinHandle<Vec<u8>>,
    std::thread::JoinHandle<Vec<u8>>,
) {
    use std::io::Read;
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let o = std::thread::spawn(move || {
        // Keep at most 1 MiB of stdout: an endless input may make an endless report.
        let mut v = Vec::new();
        let mut buf = [0u8; 65536];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 {
                break;
            }
            if v.len() < 1 << 20 {
                v.extend_from_slice(&buf[..n]);
            }
        }
        v
    });
    let e = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    (o, e)
}

/// Runs `swath ARGS` in `cwd` through `sh -c` with `prefix` (shell statements such as
/// `ulimit -v N;`, or a wrapper command such as `setpriv ...`), stops it with SIGTERM after
/// `bound`, and reports what it did.
fn run(cwd: &Path, prefix: &str, args: &[OsString], bound: Duration) -> Run {
    let script = match prefix.strip_suffix(';') {
        Some(statements) => format!("{statements}; exec \"$0\" \"$@\""),
        None => format!("exec {prefix} \"$0\" \"$@\""),
    };
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(&script)
        .arg(swath_bin())
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("LC_ALL")
        .env_remove("LANG")
        .spawn()
        .expect("spawn swath");
    let (o, e) = drain(&mut child);
    let start = Instant::now();
    let mut peak = 0;
    let mut stopped = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if let Some(k) = rss_anon(child.id()) {
            peak = peak.max(k);
        }
        if start.elapsed() > bound && !stopped {
            // SAFETY: kill with a child's pid (not yet reaped, so not reused) and SIGTERM.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            stopped = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    use std::os::unix::process::ExitStatusExt;
    Run {
        status: status.code(),
        signal: status.signal(),
        stdout: String::from_utf8_lossy(&o.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&e.join().unwrap()).into_owned(),
        peak_kib: peak,
        stopped,
    }
}

/// The names in a directory, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Collects every broken promise, so one run of the harness lists them all.
#[derive(Default)]
struct Findings(Vec<String>);

impl Findings {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }

    fn finish(self) {
        assert!(
            self.0.is_empty(),
            "{} broken promises:\n{}",
            self.0.len(),
            self.0.join("\n")
        );
    }
}

/// The promises every run keeps, whatever its input.
fn never_crashes(f: &mut Findings, case: &str, cmd: &Cmd, r: &Run) {
    let ctx = || format!("[{case}] {}: {r:?}", cmd.label);
    f.check(!r.stderr.contains("panicked"), || {
        format!("panic: {}", ctx())
    });
    f.check(!r.stderr.contains("memory allocation"), || {
        format!("allocation abort: {}", ctx())
    });
    let known = r
        .status
        .is_some_and(|s| s == cmd.error || s == cmd.changed || cmd.ok.contains(&s));
    // An in-place run answers SIGTERM with its one line (how to finish) and 128 + 15.
    let stopped_by_us = r.stopped
        && (r.signal == Some(libc::SIGTERM)
            || (cmd.in_place && r.status == Some(128 + libc::SIGTERM)));
    f.check(known || stopped_by_us, || {
        format!("undocumented status or signal: {}", ctx())
    });
    // `logs` adds its documented count of malformed lines after the one line (a live log's
    // last line, cut at the size it had when opened, is one: GUIDE.md, swath logs).
    let lines = r
        .stderr
        .lines()
        .filter(|l| !(l.starts_with("swath logs: ") && l.ends_with(" malformed lines skipped")))
        .count();
    f.check(lines <= 1, || {
        format!("more than one line on stderr: {}", ctx())
    });
}

/// The promises of a run that must fail on `name` with `cause` (one of the `|`-separated
/// phrasings, in any case: `cp` says "is a directory" where the others say "Is a directory").
fn fails_cleanly(f: &mut Findings, case: &str, cmd: &Cmd, r: &Run, name: &str, cause: &str) {
    never_crashes(f, case, cmd, r);
    let ctx = || format!("[{case}] {}: {r:?}", cmd.label);
    f.check(r.status == Some(cmd.error), || format!("status: {}", ctx()));
    f.check(r.stderr.lines().count() == 1, || {
        format!("not one line on stderr: {}", ctx())
    });
    let said = r.stderr.to_lowercase();
    let named_cause = cause.split('|').any(|c| said.contains(&c.to_lowercase()));
    f.check(r.stderr.contains(name) && named_cause, || {
        format!("stderr does not name {name:?} and {cause:?}: {}", ctx())
    });
}

/// A scratch directory with the sample log as `log`, the reference `ref` for cmp, and a
/// directory `d` others may write into.
fn scene() -> Dir {
    let dir = Dir::new();
    dir.write("log", &sample_log());
    dir.write("ref", &sample_log());
    dir
}

/// Runs every command on `input` (relative to the scene) and returns the runs, with the
/// output at `out`; the scene's listing before each run is compared with the one after.
fn each_cmd(
    dir: &Dir,
    prefix: &str,
    input: &Path,
    out: &Path,
    bound: Duration,
    mut check: impl FnMut(&Cmd, &Run, &[String], &[String]),
) {
    for cmd in CMDS {
        let _ = std::fs::remove_file(dir.tmp.path().join(out));
        let before = listing(dir.tmp.path());
        let r = run(dir.tmp.path(), prefix, &argv(cmd, input, out), bound);
        let after = listing(dir.tmp.path());
        check(cmd, &r, &before, &after);
    }
}

const QUICK: Duration = Duration::from_secs(60);

#[test]
fn bad_input_missing_file() {
    let dir = scene();
    let mut f = Findings::default();
    each_cmd(
        &dir,
        "",
        Path::new("nope"),
        Path::new("out"),
        QUICK,
        |cmd, r, before, after| {
            fails_cleanly(
                &mut f,
                "missing",
                cmd,
                r,
                "nope",
                "No such file or directory",
            );
            f.check(r.stdout.is_empty(), || {
                format!(
                    "[missing] {}: a report for a missing input: {r:?}",
                    cmd.label
                )
            });
            f.check(before == after, || {
                format!("[missing] {}: left {after:?} (was {before:?})", cmd.label)
            });
        },
    );
    f.finish();
}

#[test]
fn bad_input_directory() {
    let dir = scene();
    std::fs::create_dir(dir.path("d")).unwrap();
    let mut f = Findings::default();
    each_cmd(
        &dir,
        "",
        Path::new("d"),
        Path::new("out"),
        QUICK,
        |cmd, r, before, after| {
            fails_cleanly(
                &mut f,
                "directory",
                cmd,
                r,
                "d",
                "Is a directory|not a regular file",
            );
            f.check(before == after, || {
                format!("[directory] {}: left {after:?} (was {before:?})", cmd.label)
            });
        },
    );
    f.finish();
}

#[test]
fn bad_input_unreadable_file() {
    let dir = scene();
    let secret = dir.write("secret", &sample_log());
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Root reads everything: run as `nobody` in a directory it may write into.
    if !is_root() {
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    std::fs::set_permissions(dir.tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let prefix = if is_root() {
        "setpriv --reuid=65534 --regid=65534 --clear-groups"
    } else {
        ""
    };
    let mut f = Findings::default();
    each_cmd(
        &dir,
        prefix,
        Path::new("secret"),
        Path::new("out"),
        QUICK,
        |cmd, r, before, after| {
            fails_cleanly(&mut f, "unreadable", cmd, r, "secret", "Permission denied");
            f.check(before == after, || {
                format!(
                    "[unreadable] {}: left {after:?} (was {before:?})",
                    cmd.label
                )
            });
        },
    );
    f.finish();
}

#[test]
fn bad_input_empty_file() {
    let dir = scene();
    let mut f = Findings::default();
    for cmd in CMDS {
        dir.write("empty", b"");
        let _ = std::fs::remove_file(dir.path("out"));
        let r = run(
            dir.tmp.path(),
            "",
            &argv(cmd, Path::new("empty"), Path::new("out")),
            QUICK,
        );
        never_crashes(&mut f, "empty", cmd, &r);
        // An empty input is a valid input: only `gen mutate`, which has nothing to mutate,
        // may refuse it, and then with a line that names it.
        if r.status == Some(cmd.error) {
            f.check(
                cmd.label == "gen mutate" && r.stderr.contains("empty"),
                || format!("[empty] {}: refused an empty input: {r:?}", cmd.label),
            );
        } else if cmd.writes_out {
            f.check(std::fs::metadata(dir.path("out")).is_ok(), || {
                format!("[empty] {}: no output: {r:?}", cmd.label)
            });
        }
        let left: Vec<_> = listing(dir.tmp.path())
            .into_iter()
            .filter(|n| n.starts_with('.'))
            .collect();
        f.check(left.is_empty(), || {
            format!("[empty] {}: left {left:?}", cmd.label)
        });
    }
    f.finish();
}

#[test]
fn bad_input_fifo() {
    let dir = scene();
    let fifo = dir.path("fifo");
    let mut f = Findings::default();
    for cmd in CMDS {
        let _ = std::fs::remove_file(&fifo);
        let _ = std::fs::remove_file(dir.path("out"));
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // A writer that feeds the log and closes; opened non-blocking-free on its own thread,
        // so a command that refuses the FIFO without opening it leaves the writer to time out.
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(20);
                loop {
                    match std::fs::OpenOptions::new()
                        .write(true)
                        .custom_flags(libc::O_NONBLOCK)
                        .open(&fifo)
                    {
                        Ok(mut w) => {
                            // Blocking writes from here on.
                            // SAFETY: fcntl on a descriptor this File owns.
                            unsafe {
                                let fd = std::os::fd::AsRawFd::as_raw_fd(&w);
                                let fl = libc::fcntl(fd, libc::F_GETFL);
                                libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
                            }
                            let _ = w.write_all(&sample_log());
                            return;
                        }
                        Err(_) if Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_millis(10))
                        }
                        Err(_) => return,
                    }
                }
            })
        };
        let r = run(
            dir.tmp.path(),
            "",
            &argv(cmd, Path::new("fifo"), Path::new("out")),
            QUICK,
        );
        never_crashes(&mut f, "fifo", cmd, &r);
        if cmd.regular_only {
            fails_cleanly(&mut f, "fifo", cmd, &r, "fifo", "");
        } else {
            f.check(cmd.ok.contains(&r.status.unwrap_or(-1)), || {
                format!("[fifo] {}: a pipe is a valid input: {r:?}", cmd.label)
            });
        }
        // Unblock a writer still waiting for a reader.
        if let Ok(mut rd) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
        {
            let mut sink = Vec::new();
            let _ = std::io::Read::read_to_end(&mut rd, &mut sink);
        }
        writer.join().unwrap();
    }
    f.finish();
}

use std::os::unix::fs::OpenOptionsExt;

/// `/dev/zero` never ends: every command is stopped after a few seconds (or ends by itself
/// with an error), and its memory must stay within what its options allow. Outputs go to a
/// small tmpfs where one can be mounted, so commands that copy the zeros meet a full disk.
#[test]
fn bad_input_dev_zero_memory_is_bounded() {
    let dir = scene();
    let small = SmallFs::mount(&dir, "16m");
    let out = if small.is_some() { "small/out" } else { "out" };
    let mut f = Findings::default();
    for cmd in CMDS {
        if cmd.writes_out && small.is_none() {
            // Without a small filesystem the copy would fill the real disk.
            continue;
        }
        let r = run(
            dir.tmp.path(),
            "",
            &argv(cmd, Path::new("/dev/zero"), Path::new(out)),
            Duration::from_secs(4),
        );
        never_crashes(&mut f, "/dev/zero", cmd, &r);
        f.check(r.peak_kib < 512 * 1024, || {
            format!(
                "[/dev/zero] {}: {} MiB resident: {r:?}",
                cmd.label,
                r.peak_kib >> 10
            )
        });
        if cmd.regular_only {
            fails_cleanly(&mut f, "/dev/zero", cmd, &r, "/dev/zero", "");
        }
        if let Some(fs) = &small {
            let left = listing(&fs.path);
            f.check(left.is_empty(), || {
                format!("[/dev/zero] {}: left {left:?}: {r:?}", cmd.label)
            });
        }
    }
    f.finish();
}

/// A 1 TB file of holes with a few lines of data: the commands that can answer from the
/// holes (wc -c, grep, cmp of two such files, cp) finish quickly; the rest are stopped at the
/// time bound with bounded memory and leave nothing behind.
#[test]
fn bad_input_one_terabyte_sparse() {
    let dir = scene();
    let make = |name: &str| {
        let p = dir.path(name);
        let mut file = std::fs::File::create(&p).unwrap();
        file.write_all(&sample_log()).unwrap();
        file.set_len(1 << 40).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&file, &sample_log(), (1 << 40) - 300_000)
            .unwrap();
        p
    };
    make("sparse");
    make("ref2");
    let mut f = Findings::default();
    // Quick: answered from the size and the holes.
    for (label, args) in [
        ("wc -c", vec!["wc", "-c", "sparse"]),
        ("grep -c", vec!["grep", "-c", "GET", "sparse"]),
        ("cmp", vec!["cmp", "sparse", "ref2"]),
    ] {
        let args: Vec<OsString> = args.into_iter().map(OsString::from).collect();
        let r = run(dir.tmp.path(), "", &args, QUICK);
        f.check(!r.stopped && r.status.is_some_and(|s| s <= 1), || {
            format!("[1 TB sparse] {label}: did not finish: {r:?}")
        });
        f.check(r.peak_kib < 512 * 1024, || {
            format!("[1 TB sparse] {label}: {} MiB resident", r.peak_kib >> 10)
        });
    }
    let r = run(
        dir.tmp.path(),
        "",
        &[OsString::from("cp"), "sparse".into(), "copy".into()],
        QUICK,
    );
    f.check(r.status == Some(0), || format!("[1 TB sparse] cp: {r:?}"));
    if let Ok(m) = std::fs::metadata(dir.path("copy")) {
        use std::os::unix::fs::MetadataExt;
        f.check(m.len() == 1 << 40 && m.blocks() < 1 << 16, || {
            format!("[1 TB sparse] cp: holes not kept ({} blocks)", m.blocks())
        });
        std::fs::remove_file(dir.path("copy")).unwrap();
    }
    // The rest: bounded memory, a clean stop, no temporary file left.
    for cmd in CMDS
        .iter()
        .filter(|c| c.label != "cp" && c.label != "cmp" && c.label != "wc")
    {
        let before = listing(dir.tmp.path());
        let r = run(
            dir.tmp.path(),
            "",
            &argv(cmd, Path::new("sparse"), Path::new("out")),
            Duration::from_secs(4),
        );
        never_crashes(&mut f, "1 TB sparse", cmd, &r);
        f.check(r.peak_kib < 512 * 1024, || {
            format!(
                "[1 TB sparse] {}: {} MiB resident",
                cmd.label,
                r.peak_kib >> 10
            )
        });
        let after: Vec<_> = listing(dir.tmp.path())
            .into_iter()
            .filter(|n| !before.contains(n))
            .filter(|n| !(r.status == Some(0) && n == "out"))
            .filter(|n| !(cmd.in_place && n.ends_with(".swath-journal")))
            .collect();
        f.check(after.is_empty(), || {
            format!("[1 TB sparse] {}: left {after:?}: {r:?}", cmd.label)
        });
        if cmd.in_place {
            // An interrupted in-place run leaves its journal, which the next run resumes:
            // finish it so the next command sees the file whole again.
            for n in listing(dir.tmp.path()) {
                if n.ends_with(".swath-journal") {
                    std::fs::remove_file(dir.path(&n)).unwrap();
                }
            }
            make("sparse");
        }
    }
    f.finish();
}

/// Outputs on a full filesystem: one line naming the output and the cause, the old output
/// kept, nothing left on the filesystem.
#[test]
fn bad_input_full_disk() {
    let dir = scene();
    let Some(fs) = SmallFs::mount(&dir, "1m") else {
        assert!(!is_root(), "root could not mount a tmpfs");
        swath_engine::testing::skip("full-disk case skipped: mounting a tmpfs needs root");
        return;
    };
    let mut big = Vec::new();
    while big.len() < 4 << 20 {
        big.extend_from_slice(&sample_log());
    }
    dir.write("big", &big);
    let mut f = Findings::default();
    for cmd in CMDS.iter().filter(|c| c.writes_out) {
        let out = fs.path.join("old");
        std::fs::write(&out, b"keep me").unwrap();
        let before = listing(&fs.path);
        let r = run(
            dir.tmp.path(),
            "",
            &argv(cmd, Path::new("big"), &out),
            QUICK,
        );
        never_crashes(&mut f, "full disk", cmd, &r);
        if cmd.label.starts_with("logs") {
            // The report of a 4 MiB log is small: it fits.
            continue;
        }
        fails_cleanly(
            &mut f,
            "full disk",
            cmd,
            &r,
            "old",
            "No space left on device",
        );
        f.check(std::fs::read(&out).unwrap() == b"keep me", || {
            format!("[full disk] {}: the old output was replaced", cmd.label)
        });
        let after = listing(&fs.path);
        f.check(before == after, || {
            format!("[full disk] {}: left {after:?}", cmd.label)
        });
    }
    f.finish();
}

/// Small address-space and descriptor limits: a clean result or one clean line, never an
/// abort.
#[test]
fn bad_input_small_limits() {
    let dir = scene();
    let mut f = Findings::default();
    for (case, prefix) in [
        ("ulimit -v 262144", "ulimit -v 262144;"),
        ("ulimit -v 65536", "ulimit -v 65536;"),
        ("ulimit -n 4", "ulimit -n 4;"),
    ] {
        for cmd in CMDS {
            dir.write("input", &sample_log());
            let r = run(
                dir.tmp.path(),
                prefix,
                &argv(cmd, Path::new("input"), Path::new("out")),
                QUICK,
            );
            never_crashes(&mut f, case, cmd, &r);
            if r.status == Some(cmd.error) {
                f.check(r.stderr.lines().count() == 1, || {
                    format!("[{case}] {}: {r:?}", cmd.label)
                });
            }
            let left: Vec<_> = listing(dir.tmp.path())
                .into_iter()
                .filter(|n| n.starts_with('.'))
                .collect();
            f.check(left.is_empty(), || {
                format!("[{case}] {}: left {left:?}", cmd.label)
            });
            let _ = std::fs::remove_file(dir.path("out"));
        }
    }
    f.finish();
}

/// Inputs that grow or shrink while read: the command finishes or reports the change in one
/// line; it never panics, and never leaves a temporary file.
#[test]
fn bad_input_growing_and_shrinking() {
    let dir = scene();
    let mut base = Vec::new();
    while base.len() < 32 << 20 {
        base.extend_from_slice(&sample_log());
    }
    let mut f = Findings::default();
    for grow in [true, false] {
        let case = if grow { "growing" } else { "shrinking" };
        for cmd in CMDS {
            let input = dir.write("moving", &base);
            let _ = std::fs::remove_file(dir.path("out"));
            let mover = {
                let input = input.clone();
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        std::thread::sleep(Duration::from_millis(2));
                        let file = std::fs::OpenOptions::new()
                            .append(true)
                            .open(&input)
                            .unwrap();
                        if grow {
                            let _ = (&file).write_all(&sample_log());
                        } else {
                            let len = file.metadata().unwrap().len();
                            let _ = file.set_len(len / 2);
                        }
                    }
                })
            };
            let r = run(
                dir.tmp.path(),
                "",
                &argv(cmd, Path::new("moving"), Path::new("out")),
                QUICK,
            );
            mover.join().unwrap();
            never_crashes(&mut f, case, cmd, &r);
            if r.status.is_some_and(|s| s == cmd.error || s == cmd.changed) && cmd.writes_out {
                f.check(!dir.path("out").exists(), || {
                    format!("[{case}] {}: partial output kept: {r:?}", cmd.label)
                });
            }
            let left: Vec<_> = listing(dir.tmp.path())
                .into_iter()
                .filter(|n| n.starts_with('.') && !n.ends_with(".swath-journal"))
                .collect();
            f.check(left.is_empty(), || {
                format!("[{case}] {}: left {left:?}", cmd.label)
            });
            for n in listing(dir.tmp.path()) {
                if n.ends_with(".swath-journal") {
                    std::fs::remove_file(dir.path(&n)).unwrap();
                }
            }
        }
    }
    f.finish();
}

/// A run killed with SIGKILL cannot clean up: its output under construction has no name
/// (`O_TMPFILE`), so nothing is left behind (on filesystems with unnamed files; GUIDE.md
/// says what remains elsewhere).
#[test]
fn sigkill_leaves_no_temporary_file() {
    let dir = scene();
    let mut big = Vec::new();
    while big.len() < 64 << 20 {
        big.extend_from_slice(&sample_log());
    }
    dir.write("big", &big);
    let cases: [&[&str]; 3] = [
        &["gen", "text", "3G", "out", "--seed", "1"],
        &[
            "cipher",
            "--shift",
            "3",
            "--strategy",
            "stream",
            "big",
            "out",
        ],
        &["cp", "big", "out"],
    ];
    let mut killed = 0;
    for args in cases {
        for delay_ms in [150u64, 40, 10, 3] {
            let before = listing(dir.tmp.path());
            let mut child = Command::new(swath_bin())
                .args(args)
                .current_dir(dir.tmp.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(delay_ms));
            let running = child.try_wait().unwrap().is_none();
            child.kill().unwrap();
            child.wait().unwrap();
            let after = listing(dir.tmp.path());
            if running {
                killed += 1;
                assert_eq!(
                    after, before,
                    "{args:?} killed after {delay_ms} ms left files"
                );
                break;
            }
            let _ = std::fs::remove_file(dir.path("out"));
        }
    }
    assert!(killed >= 2, "only {killed} runs were killed mid-way");
}

// ---------------------------------------------------------------------------------------
// Forged sizes and counts (issue 26, items 4, 7, 8, 9, 10): every size, count and length
// read from a journal, a patch, a VCDIFF patch or a partial is checked against what the
// file and the format allow before anything is allocated for it. Each run's peak resident
// memory is the kernel's (`wait4`'s `ru_maxrss`), not a sample.

/// What a run of swath did, with its peak resident memory.
#[derive(Debug)]
struct Measured {
    status: Option<i32>,
    stdout: String,
    stderr: String,
    /// Peak resident memory (`ru_maxrss`), in KiB.
    peak_kib: u64,
}

/// Runs `swath ARGS` in `cwd` and measures its peak resident memory with GNU time (which
/// forks it: a child this process spawned directly would inherit its peak at the spawn).
fn measured(cwd: &Path, args: &[&std::ffi::OsStr]) -> Measured {
    let time = Path::new("/usr/bin/time");
    assert!(time.exists(), "GNU time is required: apt-get install time");
    let report = tempfile::NamedTempFile::new().unwrap();
    let out = Command::new(time)
        .args(["-f", "%M", "-o"])
        .arg(report.path())
        .arg(swath_bin())
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .env_remove("LC_ALL")
        .env_remove("LANG")
        .output()
        .expect("spawn swath");
    let said = std::fs::read_to_string(report.path()).unwrap();
    // A run killed by a signal has a line about it before the figure.
    let peak_kib = said.lines().last().and_then(|l| l.trim().parse().ok());
    Measured {
        status: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        peak_kib: peak_kib.unwrap_or_else(|| panic!("GNU time said {said:?}")),
    }
}

/// `measured` with plain string arguments, as the user types them.
fn measured_args(cwd: &Path, args: &[&str]) -> Measured {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    measured(cwd, &args)
}

/// Checks the promises of a refusal: `status`, one line naming `name` and saying `cause`
/// (one of its `|`-separated phrasings), and a peak under `bound_mib`.
fn refused(
    f: &mut Findings,
    case: &str,
    r: &Measured,
    status: i32,
    name: &str,
    cause: &str,
    bound_mib: u64,
) {
    let ctx = || format!("[{case}] {r:?}");
    f.check(r.status == Some(status), || format!("status: {}", ctx()));
    f.check(r.stdout.is_empty(), || format!("printed: {}", ctx()));
    f.check(r.stderr.lines().count() == 1, || {
        format!("not one line on stderr: {}", ctx())
    });
    let said = r.stderr.to_lowercase();
    f.check(
        r.stderr.contains(name) && cause.split('|').any(|c| said.contains(&c.to_lowercase())),
        || format!("stderr does not name {name:?} and {cause:?}: {}", ctx()),
    );
    f.check(r.peak_kib <= bound_mib << 10, || {
        format!("peak memory over {bound_mib} MiB: {}", ctx())
    });
}

/// A journal (docs/journal.md) for a file of `len` bytes whose metadata is `m`, with the
/// header fields given and its checksum right, "done" = `done` with the file's
/// modification time, and an undo record naming block `undo.0` with length `undo.1`.
fn forged_journal(
    m: &std::fs::Metadata,
    alphabet: u64,
    block_size: u64,
    done: u64,
    undo: (u64, u64),
) -> Vec<u8> {
    use std::os::unix::fs::MetadataExt;
    use xxhash_rust::xxh3::{xxh3_64, Xxh3};
    let mut j = Vec::new();
    j.extend_from_slice(b"SWATHJ03");
    for v in [3u64, alphabet, m.len(), block_size, m.dev(), m.ino()] {
        j.extend_from_slice(&v.to_le_bytes());
    }
    let h = xxh3_64(&j);
    j.extend_from_slice(&h.to_le_bytes());
    let mut slots = [[0u8; 32]; 2];
    let slot = &mut slots[(done % 2) as usize];
    slot[..8].copy_from_slice(&done.to_le_bytes());
    slot[8..16].copy_from_slice(&m.mtime().to_le_bytes());
    slot[16..24].copy_from_slice(&m.mtime_nsec().to_le_bytes());
    let mut s = Xxh3::new();
    s.update(&h.to_le_bytes());
    s.update(&slot[..24]);
    let sum = s.digest();
    slot[24..].copy_from_slice(&sum.to_le_bytes());
    j.extend_from_slice(&slots[0]);
    j.extend_from_slice(&slots[1]);
    j.extend_from_slice(&undo.0.to_le_bytes());
    j.extend_from_slice(&undo.1.to_le_bytes());
    j.extend_from_slice(&0x5eed_u64.to_le_bytes());
    assert_eq!(j.len(), 152);
    j
}

/// Item 4: a journal the file's owner planted (so trusted: owner, mode, device, inode,
/// length and checksum all right) with sizes no run writes: refused, or its undo record
/// ignored as a torn one is, before anything is allocated for them; root's resume never
/// zero-fills gigabytes nor runs with a block size of a terabyte.
#[test]
fn forged_journal_sizes_are_checked_before_use() {
    let dir = Dir::new();
    let mut f = Findings::default();
    let data = vec![b'a'; 100_000];
    let shifted = vec![b'd'; 100_000];
    /// A forged journal: its name, alphabet variant, block size, blocks done, undo record
    /// (block, length), and the cause it is refused for (`None`: its undo record is
    /// ignored and the run finishes).
    struct Case(
        &'static str,
        u64,
        u64,
        u64,
        (u64, u64),
        Option<&'static str>,
    );
    let cases = [
        Case(
            "1 TiB blocks, 3 GiB undo",
            0,
            1 << 40,
            0,
            (0, 3 << 30),
            Some("block size"),
        ),
        Case("1 TiB blocks", 0, 1 << 40, 0, (9, 1), Some("block size")),
        Case(
            "blocks done past the end",
            0,
            1000,
            1 << 40,
            (0, 1),
            Some("blocks done"),
        ),
        Case("unknown alphabet", 7, 1000, 0, (9, 1), Some("alphabet")),
        // A legal block size with an undo record longer than its block: ignored, as a torn
        // record is, and the run finishes.
        Case(
            "1 GiB undo of a 100 KB block",
            0,
            1 << 30,
            0,
            (0, 1 << 30),
            None,
        ),
    ];
    for Case(case, alphabet, bs, done, undo, refusal) in cases {
        let home = dir.path(case);
        std::fs::create_dir(&home).unwrap();
        let file = home.join("data");
        std::fs::write(&file, &data).unwrap();
        let jpath = home.join(".data.swath-journal");
        let m = std::fs::metadata(&file).unwrap();
        std::fs::write(&jpath, forged_journal(&m, alphabet, bs, done, undo)).unwrap();
        std::fs::set_permissions(&jpath, std::fs::Permissions::from_mode(0o600)).unwrap();
        if is_root() {
            // Planted by the file's owner, an unprivileged user; root resumes.
            for p in [&home, &file, &jpath] {
                std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
            }
        }
        let args = [
            std::ffi::OsStr::new("cipher"),
            std::ffi::OsStr::new("--resume"),
            file.as_os_str(),
        ];
        let r = measured(dir.tmp.path(), &args);
        match refusal {
            Some(cause) => {
                refused(&mut f, case, &r, 1, ".data.swath-journal", cause, 64);
                f.check(std::fs::read(&file).unwrap() == data, || {
                    format!("[{case}] the file was changed: {r:?}")
                });
            }
            None => {
                f.check(r.status == Some(0), || format!("[{case}] status: {r:?}"));
                f.check(r.peak_kib <= 64 << 10, || {
                    format!("[{case}] peak memory: {r:?}")
                });
                f.check(std::fs::read(&file).unwrap() == shifted, || {
                    format!("[{case}] not transformed: {r:?}")
                });
            }
        }
    }
    f.finish();
}

/// A stream of a section (docs/patch-format.md): one zstd frame of `raw_len` bytes, the
/// repetitions of `pattern`, compressed a chunk at a time (the test never holds them).
fn zstd_stream(out: &mut Vec<u8>, pattern: &[u8], raw_len: u64) {
    use std::io::Write as _;
    let mut frame = Vec::new();
    {
        let mut z = zstd::stream::write::Encoder::new(&mut frame, 1).unwrap();
        z.set_pledged_src_size(Some(raw_len)).unwrap();
        let chunk: Vec<u8> = pattern.iter().copied().cycle().take(1 << 20).collect();
        let mut left = raw_len;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            z.write_all(&chunk[..n]).unwrap();
            left -= n as u64;
        }
        z.finish().unwrap();
    }
    out.push(1);
    swath_patch::format::put_varint(out, raw_len);
    swath_patch::format::put_varint(out, frame.len() as u64);
    out.extend_from_slice(&frame);
}

/// A swath patch of an empty OLD whose sections are `sections` (their bytes), each making
/// `section_len` bytes of a NEW of `new_len` bytes whose hash is `new_hash`.
fn patch_of_sections(
    sections: &[Vec<u8>],
    section_len: u64,
    new_len: u64,
    new_hash: u128,
) -> Vec<u8> {
    use swath_patch::format::{encode_tail, section_sum, Entry, Header, Level, HEADER_LEN};
    let header = Header {
        old_len: 0,
        new_len,
        old_hash: xxhash_rust::xxh3::xxh3_128(b""),
        new_hash,
        hash_piece: 16 << 20,
        level: Level::Fast,
        chunk_avg: 4096,
        section_len,
    };
    let mut patch = header.encode().to_vec();
    let mut entries = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        entries.push(Entry {
            new_offset: i as u64 * section_len,
            new_len: section_len.min(new_len - i as u64 * section_len),
            offset: patch.len() as u64,
            len: s.len() as u64,
            sum: section_sum(header.chain(), i as u64, s),
        });
        patch.extend_from_slice(s);
    }
    assert!(patch.len() >= HEADER_LEN);
    let table_at = patch.len() as u64;
    patch.extend(encode_tail(header.chain(), &entries, table_at));
    patch
}

/// Item 7: a valid patch of two 64 MiB sections of one-byte operations (64 million each,
/// a zero byte and a literal byte by turns) applies in memory bounded by a section per
/// worker, not 24 bytes an operation; a forged one with every stream at its declared
/// maximum is refused as soon as its operations stop fitting, within the same bound.
#[test]
fn patch_of_millions_of_one_byte_operations_applies_in_bounded_memory() {
    let dir = Dir::new();
    dir.write("old", b"");
    let l: u64 = 64 << 20;
    // Kinds: ZERO (1) and LITERAL (2) by turns; lengths: 1; no offsets; the literal bytes;
    // no differences.
    let mut section = Vec::new();
    zstd_stream(&mut section, &[1, 2], l);
    zstd_stream(&mut section, &[1], l);
    section.extend_from_slice(&[0, 0, 0]);
    zstd_stream(&mut section, b"x", l / 2);
    section.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    let new: Vec<u8> = [0u8, b'x']
        .iter()
        .copied()
        .cycle()
        .take(l as usize)
        .collect();
    let mut h = swath_patch::hash::PieceHasher::new(16 << 20);
    h.update(&new);
    h.update(&new);
    let patch = patch_of_sections(&[section.clone(), section], l, 2 * l, h.finish());
    assert!(patch.len() < 1 << 20, "{} bytes", patch.len());
    dir.write("p", &patch);
    let r = measured_args(
        dir.tmp.path(),
        &["patch", "apply", "--threads", "2", "old", "p", "new"],
    );
    assert_eq!(r.status, Some(0), "{r:?}");
    let got = std::fs::read(dir.path("new")).unwrap();
    assert!(
        got.len() == 2 * new.len() && got[..new.len()] == new[..] && got[new.len()..] == new[..]
    );
    drop(got);
    // A section per worker (64 MiB) and bounded stream buffers, not 3.5 GB.
    assert!(r.peak_kib <= 256 << 10, "{r:?}");

    // Every stream at the largest length a section of L bytes allows
    // (docs/patch-format.md): L kinds (literals), L lengths of 1, 10 L offsets, L literal
    // bytes, L zero runs, L difference bytes. The ops make the section, but offsets and
    // differences are left over.
    let mut forged = Vec::new();
    zstd_stream(&mut forged, &[2], l);
    zstd_stream(&mut forged, &[1], l);
    zstd_stream(&mut forged, &[0], 10 * l);
    zstd_stream(&mut forged, b"x", l);
    zstd_stream(&mut forged, &[0], l);
    zstd_stream(&mut forged, &[1], l);
    dir.write("forged", &patch_of_sections(&[forged], l, l, 1));
    let mut f = Findings::default();
    for args in [
        &["patch", "apply", "--threads", "2", "old", "forged", "new2"][..],
        &["patch", "info", "forged"],
    ] {
        let r = measured_args(dir.tmp.path(), args);
        refused(&mut f, args[1], &r, 2, "forged", "damaged", 256);
    }
    f.check(!dir.path("new2").exists(), || "NEW left behind".into());
    f.finish();
}

/// Item 8: a sparse patch (a few kilobytes on the disk) whose footer, checksum right,
/// declares a section table of 3 GB: refused by `info` and `apply` before the table is
/// read into memory.
#[test]
fn sparse_patch_declaring_a_huge_section_table_is_refused_in_bounded_memory() {
    use swath_patch::format::{
        section_sum, Header, Level, END_MAGIC, ENTRY_LEN, FOOTER_LEN, HEADER_LEN,
    };
    let dir = Dir::new();
    dir.write("old", b"");
    let header = Header {
        old_len: 0,
        new_len: 0,
        old_hash: xxhash_rust::xxh3::xxh3_128(b""),
        new_hash: xxhash_rust::xxh3::xxh3_128(b""),
        hash_piece: 16 << 20,
        level: Level::Fast,
        chunk_avg: 4096,
        section_len: 16 << 20,
    };
    let count: u64 = (3 << 30) / ENTRY_LEN as u64;
    let table_at = HEADER_LEN as u64;
    let len = table_at + count * ENTRY_LEN as u64 + FOOTER_LEN as u64;
    let mut footer = Vec::new();
    footer.extend_from_slice(&table_at.to_le_bytes());
    footer.extend_from_slice(&count.to_le_bytes());
    footer.extend_from_slice(&7u64.to_le_bytes());
    let sum = section_sum(header.chain(), u64::MAX - 1, &footer);
    footer.extend_from_slice(&sum.to_le_bytes());
    footer.extend_from_slice(END_MAGIC);
    let file = std::fs::File::create(dir.path("p")).unwrap();
    use std::os::unix::fs::FileExt;
    file.write_all_at(&header.encode(), 0).unwrap();
    file.write_all_at(&footer, len - FOOTER_LEN as u64).unwrap();
    drop(file);
    let mut f = Findings::default();
    for args in [
        &["patch", "info", "p"][..],
        &["patch", "apply", "old", "p", "new"],
    ] {
        let r = measured_args(dir.tmp.path(), args);
        refused(&mut f, args[1], &r, 2, "p", "damaged|truncated", 64);
    }
    f.check(!dir.path("new").exists(), || "NEW left behind".into());
    f.finish();
}

/// The offsets where an xdelta3 patch's windows start and where it ends (after the
/// header and the application header).
fn vcdiff_boundaries(p: &[u8]) -> Vec<usize> {
    let int = |at: &mut usize| {
        let mut v = 0u64;
        loop {
            let b = p[*at];
            *at += 1;
            v = (v << 7) | u64::from(b & 0x7f);
            if b < 0x80 {
                return v;
            }
        }
    };
    let mut at = 5;
    if p[4] & 4 != 0 {
        let n = int(&mut at);
        at += n as usize;
    }
    let mut b = vec![at];
    while at < p.len() {
        let w = p[at];
        at += 1;
        if w & 3 != 0 {
            int(&mut at);
            int(&mut at);
        }
        let n = int(&mut at);
        at += n as usize;
        b.push(at);
    }
    b
}

/// Item 9: an xdelta3 patch cut anywhere in its header or application header, with the
/// application header's length damaged, or cut at or around a window boundary is refused
/// by `swath patch apply` exactly when `xdelta3 -d` refuses it, and when both apply it
/// they make the same NEW; a refusal is one line, status 2, nothing at NEW. And swath's
/// own VCDIFF patch of an empty NEW is one xdelta3 applies.
#[test]
fn vcdiff_truncations_are_refused_as_xdelta3_refuses_them() {
    if !Path::new("/usr/bin/xdelta3").exists() {
        swath_engine::testing::skip("skipped: /usr/bin/xdelta3 is not installed");
        return;
    }
    let dir = Dir::new();
    let (old, new) = crate::patch::pair(3_000_000, 11);
    dir.write("old", &old);
    dir.write("new", &new);
    let xdelta3 = |args: &[&str]| {
        Command::new("/usr/bin/xdelta3")
            .args(args)
            .current_dir(dir.tmp.path())
            .output()
            .unwrap()
    };
    let made = xdelta3(&[
        "-e", "-f", "-S", "none", "-W", "524288", "-s", "old", "new", "p",
    ]);
    assert!(made.status.success(), "{made:?}");
    let patch = std::fs::read(dir.path("p")).unwrap();
    let bounds = vcdiff_boundaries(&patch);
    assert!(bounds.len() >= 5 && patch[4] & 4 != 0, "{bounds:?}");
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for cut in 0..bounds[0] + 3 {
        cases.push((format!("cut at {cut}"), patch[..cut].to_vec()));
    }
    for &b in &bounds[1..] {
        for cut in [b - 1, b, b + 1] {
            if cut <= patch.len() {
                cases.push((format!("cut at {cut}"), patch[..cut].to_vec()));
            }
        }
    }
    // The application header's length (one byte at offset 5 in this patch) damaged.
    let app_len = patch[5];
    assert!(app_len < 0x80);
    for bad in [0u8, app_len - 1, app_len + 1, 0x7f] {
        let mut p = patch.clone();
        p[5] = bad;
        cases.push((format!("application header length {bad}"), p));
    }
    for long in [&[0x83u8, 0xff, 0x7f][..], &[0x8f, 0xff, 0xff, 0xff, 0x7f]] {
        let mut p = patch.clone();
        p.splice(5..6, long.iter().copied());
        cases.push((format!("application header length {long:x?}"), p));
    }
    let mut f = Findings::default();
    for (case, bytes) in &cases {
        dir.write("pc", bytes);
        for out in ["nx", "ns"] {
            let _ = std::fs::remove_file(dir.path(out));
        }
        let xd = xdelta3(&["-d", "-f", "-s", "old", "pc", "nx"]);
        let sw = measured_args(dir.tmp.path(), &["patch", "apply", "old", "pc", "ns"]);
        let ctx = || format!("[{case}] xdelta3 {xd:?}, swath {sw:?}");
        f.check(xd.status.success() == (sw.status == Some(0)), || {
            format!("xdelta3 and swath disagree: {}", ctx())
        });
        if sw.status == Some(0) && xd.status.success() {
            f.check(
                std::fs::read(dir.path("nx")).unwrap() == std::fs::read(dir.path("ns")).unwrap(),
                || format!("other NEW than xdelta3's: {}", ctx()),
            );
        } else if sw.status != Some(0) {
            refused(
                &mut f,
                case,
                &sw,
                2,
                "pc",
                "truncated|damaged|window|magic",
                64,
            );
            f.check(!dir.path("ns").exists(), || {
                format!("NEW left behind: {}", ctx())
            });
        }
    }
    // swath's VCDIFF of an empty NEW: xdelta3 applies it, and so does swath; cut after its
    // header, both refuse it.
    dir.write("empty", b"");
    let made = measured_args(
        dir.tmp.path(),
        &["patch", "make", "--format", "vcdiff", "old", "empty", "pe"],
    );
    assert_eq!(made.status, Some(0), "{made:?}");
    let xd = xdelta3(&["-d", "-f", "-s", "old", "pe", "nx"]);
    f.check(xd.status.success(), || {
        format!("xdelta3 refuses swath's empty VCDIFF: {xd:?}")
    });
    let sw = measured_args(dir.tmp.path(), &["patch", "apply", "old", "pe", "ns"]);
    f.check(sw.status == Some(0), || {
        format!("swath refuses its own empty VCDIFF: {sw:?}")
    });
    let pe = std::fs::read(dir.path("pe")).unwrap();
    dir.write("pc", &pe[..5]);
    let xd = xdelta3(&["-d", "-f", "-s", "old", "pc", "nx"]);
    let sw = measured_args(dir.tmp.path(), &["patch", "apply", "old", "pc", "ns2"]);
    f.check(!xd.status.success(), || {
        format!("xdelta3 applies a header alone: {xd:?}")
    });
    refused(&mut f, "header alone", &sw, 2, "pc", "truncated|window", 64);
    f.finish();
}

/// A `wc -l -w -c` partial of bytes `span` of an input `f` of `len` bytes whose tally's
/// numbers are `n` (docs/partial-format.md).
fn wc_partial(len: u64, span: (u64, u64), n: [u64; 10]) -> Vec<u8> {
    let t = swath_kernels::wc::Tally::from_numbers(n).expect("valid flags");
    use swath_ops::report::{Partial, Wc};
    Partial::<Wc>::piece(b"wc -l -w -c c".to_vec(), 0, b"f".to_vec(), len, span, t).to_bytes()
}

/// A `grep -c` partial (`options` as grep writes them) of bytes `span` of an input `f` of
/// `len` bytes counting `n` lines.
fn grep_partial(options: &[u8], len: u64, span: (u64, u64), n: u64) -> Vec<u8> {
    use swath_ops::report::{GrepCount, Partial};
    Partial::<GrepCount>::piece(options.to_vec(), 0, b"f".to_vec(), len, span, n).to_bytes()
}

/// Item 10: `wc` and `grep -c` partials whose counts do not fit their piece's span (a line
/// count of 2^64 - 1 that would wrap the total to a plausible one, more lines, words or
/// characters than bytes, a byte count other than the span's, a line wider than its bytes
/// can make, a piece that says it starts inside a word but counts none) are refused by
/// `swath merge`, printing and emitting, with one line naming the partial and the status
/// of every refused partial (1).
#[test]
fn merge_refuses_counts_beyond_their_piece() {
    let dir = Dir::new();
    // The honest halves of "a b\nc d\n" (8 bytes), [0, 4) and [4, 8): a line, two words,
    // four bytes, a first line 3 wide; flags: a line end, starts in a word, ends outside
    // one, a word character seen.
    let half = [1, 2, 4, 4, 0, 3, 0, 0, 0, 0b10111];
    dir.write("a", &wc_partial(8, (0, 4), half));
    dir.write("b", &wc_partial(8, (4, 8), half));
    let ok = measured_args(dir.tmp.path(), &["merge", "a", "b"]);
    assert_eq!(
        (ok.status, ok.stdout.as_str()),
        (Some(0), "2 4 8 f\n"),
        "{ok:?}"
    );
    dir.write("f", b"a b\nc d\n");
    let g = [
        "grep",
        "-c",
        "a",
        "--range",
        "0:4",
        "--emit-partial",
        "g",
        "f",
    ];
    assert_eq!(measured_args(dir.tmp.path(), &g).status, Some(0));
    let honest = swath_ops::report::Partial::<swath_ops::report::GrepCount>::from_bytes(
        &std::fs::read(dir.path("g")).unwrap(),
    );
    let grep_options = honest.unwrap().options;
    let with = |i: usize, v: u64| {
        let mut n = half;
        n[i] = v;
        wc_partial(8, (4, 8), n)
    };
    let forged = [
        ("2^64 - 1 lines", "a", with(0, u64::MAX)),
        ("more lines than bytes", "a", with(0, 5)),
        ("more words than bytes", "a", with(1, 5)),
        ("more characters than bytes", "a", with(2, 5)),
        ("bytes other than the span", "a", with(3, 3)),
        ("a line wider than the span allows", "a", with(5, 33)),
        ("a word begun but not counted", "a", with(1, 0)),
        (
            "2^64 - 1 selected lines",
            "g",
            grep_partial(&grep_options, 8, (4, 8), u64::MAX),
        ),
        (
            "more selected lines than bytes",
            "g",
            grep_partial(&grep_options, 8, (4, 8), 5),
        ),
    ];
    let mut f = Findings::default();
    for (case, other, bytes) in &forged {
        dir.write("forged", bytes);
        for emit in [false, true] {
            let mut args = vec!["merge"];
            if emit {
                args.extend_from_slice(&["--emit-partial", "out"]);
            }
            args.extend_from_slice(&[other, "forged"]);
            let r = measured_args(dir.tmp.path(), &args);
            refused(
                &mut f,
                &format!("{case}, emit {emit}"),
                &r,
                1,
                "forged",
                "damaged",
                64,
            );
            f.check(r.stdout.is_empty(), || format!("[{case}] printed: {r:?}"));
            f.check(!dir.path("out").exists(), || {
                format!("[{case}] wrote: {r:?}")
            });
        }
    }
    f.finish();
}

/// Issue 26 follow-up (one section-apply path): a tree patch's sections are applied as a
/// file patch's are, read where they lie a piece at a time, never read whole first. A
/// tree patch whose last section's table entry claims 240 MiB of patch bytes (the most a
/// 16 MiB section may take; a hole in a sparse patch file, checksum right for the table
/// and the manifest record, wrong for the section) is refused as damaged in the memory of
/// its sections' slices of NEW, not after reading 240 MiB into memory.
#[test]
fn tree_patch_section_claiming_hundreds_of_megabytes_is_refused_in_bounded_memory() {
    use std::os::unix::fs::FileExt;
    use swath_patch::apply::PatchFile;
    use swath_patch::format::{encode_tail, encode_tree_record, max_section_len};
    let dir = Dir::new();
    std::fs::create_dir_all(dir.path("old")).unwrap();
    std::fs::create_dir_all(dir.path("new")).unwrap();
    dir.write("old/a", b"old\n");
    // 32 MiB that compress to little: two sections of 16 MiB on one worker.
    let big: Vec<u8> = (0..32u32 << 20).map(|i| (i % 251) as u8).collect();
    dir.write("new/big", &big);
    drop(big);
    let r = measured_args(
        dir.tmp.path(),
        &[
            "patch",
            "make",
            "--level",
            "fast",
            "--threads",
            "1",
            "old",
            "new",
            "p",
        ],
    );
    assert_eq!(r.status, Some(0), "{r:?}");
    let honest = std::fs::read(dir.path("p")).unwrap();
    let p = PatchFile::open(&dir.path("p")).unwrap();
    let at = p.manifest_at.expect("a tree patch");
    let mut entries = p.entries.clone();
    let last = entries.last_mut().expect("sections");
    assert_eq!(last.new_len, 16 << 20, "{:?}", p.entries);
    let claimed = max_section_len(last.new_len).min(240 << 20);
    let hole = claimed - last.len;
    last.len = claimed;
    let chain = p.header.chain();
    let manifest = &honest[at.offset as usize..(at.offset + at.stored) as usize];
    let manifest_at = at.offset + hole;
    let mut tail = encode_tree_record(chain, manifest_at, manifest, at.raw).to_vec();
    let table_at = manifest_at + manifest.len() as u64 + tail.len() as u64;
    tail.extend(encode_tail(chain, &entries, table_at));
    let forged = std::fs::File::create(dir.path("forged")).unwrap();
    forged
        .write_all_at(&honest[..at.offset as usize], 0)
        .unwrap();
    forged.write_all_at(manifest, manifest_at).unwrap();
    forged
        .write_all_at(&tail, manifest_at + manifest.len() as u64)
        .unwrap();
    drop(forged);
    // The honest patch applies; the forged one passes every check before its sections.
    let r = measured_args(
        dir.tmp.path(),
        &["patch", "apply", "--threads", "2", "old", "p", "new2"],
    );
    assert_eq!(r.status, Some(0), "{r:?}");
    let mut f = Findings::default();
    let r = measured_args(
        dir.tmp.path(),
        &["patch", "apply", "--threads", "2", "old", "forged", "new3"],
    );
    refused(&mut f, "apply", &r, 2, "forged", "checksum", 128);
    f.check(!dir.path("new3").exists(), || "NEW left behind".into());
    let left: Vec<_> = std::fs::read_dir(dir.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("swath-tmp"))
        .collect();
    f.check(left.is_empty(), || format!("left behind: {left:?}"));
    f.finish();
}
