//! `swath cipher`: every strategy gives `tr`'s bytes, round trips restore the input, and no
//! failure or interruption leaves a partial output or a temporary file behind.

use std::process::{Command, Stdio};

use crate::util::{default_signals, swath, swath_bin, Dir, SmallFs};

/// Every `--strategy` of `swath cipher` (`auto` first), for the tests that try each.
pub const STRATEGIES: [&str; 7] = [
    "auto",
    "stream",
    "mmap",
    "threads",
    "pool",
    "uring",
    "mmap-threads",
];

fn leftovers(dir: &Dir) -> Vec<String> {
    std::fs::read_dir(dir.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("swath-tmp"))
        .collect()
}

#[test]
fn every_strategy_matches_tr_and_round_trips() {
    let dir = Dir::new();
    let data: Vec<u8> = (0..300_007u32).map(|i| (i * 7 + i / 13) as u8).collect();
    dir.write("in", &data);
    let tr = Command::new("sh")
        .arg("-c")
        .arg(r"tr '\000-\377' '\005-\377\000-\004' < in > want")
        .current_dir(dir.tmp.path())
        .status()
        .unwrap();
    assert!(tr.success());
    let want = std::fs::read(dir.path("want")).unwrap();
    for s in STRATEGIES {
        for extra in [
            &[][..],
            &["--threads", "3", "--block-size", "4097"][..],
            &["--scalar", "--layout", "stripes"][..],
        ] {
            let mut args = vec!["cipher", "--shift", "5", "--strategy", s];
            args.extend_from_slice(extra);
            args.extend(["in", "out"]);
            let out = swath(&dir, &args);
            assert!(out.status.success(), "{args:?}: {out:?}");
            assert_eq!(std::fs::read(dir.path("out")).unwrap(), want, "{args:?}");
            let back = swath(
                &dir,
                &["cipher", "--shift", "-5", "--strategy", s, "out", "back"],
            );
            assert!(back.status.success());
            assert_eq!(std::fs::read(dir.path("back")).unwrap(), data, "{s}");
        }
    }
    assert!(leftovers(&dir).is_empty());
}

#[test]
fn alphabet_variant_and_streams() {
    let dir = Dir::new();
    dir.write("in", b"Hello, World 2026! zZ9\n");
    let out = Command::new(swath_bin())
        .args(["cipher", "--alphabet", "--shift", "1", "-", "-"])
        .current_dir(dir.tmp.path())
        .stdin(std::fs::File::open(dir.path("in")).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, b"Ifmmp, Xpsme 3137! aA0\n");
}

#[test]
fn permission_bits_follow_the_input() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Dir::new();
    let p = dir.write("in", b"abc");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert!(swath(&dir, &["cipher", "--shift", "1", "in", "out"])
        .status
        .success());
    let mode = std::fs::metadata(dir.path("out"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
}

#[test]
fn refuses_to_overwrite_its_input() {
    let dir = Dir::new();
    dir.write("in", b"precious");
    std::os::unix::fs::symlink("in", dir.path("link")).unwrap();
    for target in ["in", "link", "./in"] {
        let out = swath(&dir, &["cipher", "--shift", "1", "in", target]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("are the same file"), "{err}");
    }
    assert_eq!(std::fs::read(dir.path("in")).unwrap(), b"precious");
}

#[test]
fn errors_leave_no_output_and_no_temporary_file() {
    let dir = Dir::new();
    dir.write("old", b"keep me");
    let out = swath(&dir, &["cipher", "--shift", "1", "missing", "old"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "swath cipher: missing: No such file or directory\n"
    );
    assert_eq!(std::fs::read(dir.path("old")).unwrap(), b"keep me");
    std::fs::create_dir(dir.path("d")).unwrap();
    let out = swath(&dir, &["cipher", "--shift", "1", "d", "old"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("d: Is a directory"));
    assert_eq!(std::fs::read(dir.path("old")).unwrap(), b"keep me");
    assert!(leftovers(&dir).is_empty());
}

#[test]
fn file_size_limit_mid_run_is_a_clear_error() {
    let dir = Dir::new();
    dir.write("in", &vec![b'x'; 3 << 20]);
    dir.write("old", b"keep me");
    for s in STRATEGIES {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -f 1024; exec {} cipher --shift 1 --strategy {s} in old",
                swath_bin().display()
            ))
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{s}: {err}");
        assert!(err.contains("File too large"), "{s}: {err}");
        assert_eq!(err.lines().count(), 1, "{s}: {err}");
        assert_eq!(std::fs::read(dir.path("old")).unwrap(), b"keep me", "{s}");
        assert!(leftovers(&dir).is_empty(), "{s}: {:?}", leftovers(&dir));
    }
}

#[test]
fn interrupted_run_leaves_nothing_behind() {
    let dir = Dir::new();
    let f = std::fs::File::create(dir.path("big")).unwrap();
    f.set_len(6 << 30).unwrap();
    for (sig, strategy) in [(libc::SIGINT, "stream"), (libc::SIGTERM, "threads")] {
        let mut child = default_signals(&mut Command::new(swath_bin()))
            .args([
                "cipher",
                "--shift",
                "1",
                "--strategy",
                strategy,
                "big",
                "out",
            ])
            .current_dir(dir.tmp.path())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        // SAFETY: sending a signal to our own child process.
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait().unwrap();
        assert!(!status.success(), "{strategy}: finished before the signal");
        assert!(!dir.path("out").exists(), "{strategy}");
        assert!(
            leftovers(&dir).is_empty(),
            "{strategy}: {:?}",
            leftovers(&dir)
        );
    }
}

#[test]
fn cp_copies_keeps_mode_and_refuses_itself() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Dir::new();
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let p = dir.write("src", &data);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(swath(&dir, &["cp", "src", "dst"]).status.success());
    assert_eq!(std::fs::read(dir.path("dst")).unwrap(), data);
    let mode = std::fs::metadata(dir.path("dst"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    std::fs::create_dir(dir.path("sub")).unwrap();
    assert!(swath(&dir, &["cp", "src", "sub"]).status.success());
    assert_eq!(std::fs::read(dir.path("sub/src")).unwrap(), data);
    let out = swath(&dir, &["cp", "src", "./src"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("are the same file"));
    let out = swath(&dir, &["cp", "nope", "dst"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "swath cp: nope: No such file or directory\n"
    );
    assert_eq!(std::fs::read(dir.path("dst")).unwrap(), data);
    assert!(leftovers(&dir).is_empty());
}

#[test]
fn outputs_through_symlinks_and_into_fifos() {
    use std::os::unix::fs::FileTypeExt;
    let dir = Dir::new();
    let data: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    dir.write("src", &data);
    dir.write("real", b"old");
    std::os::unix::fs::symlink("real", dir.path("link")).unwrap();
    // Through a link: the file it names is replaced, the link stays.
    assert!(swath(&dir, &["cp", "src", "link"]).status.success());
    assert!(std::fs::symlink_metadata(dir.path("link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(dir.path("real")).unwrap(), data);
    // Into a FIFO (as into a device): written as a stream, the FIFO left a FIFO.
    for args in [
        &["cp", "src", "fifo"][..],
        &["cipher", "--shift", "1", "src", "fifo"][..],
    ] {
        let status = Command::new("mkfifo")
            .arg(dir.path("fifo"))
            .status()
            .unwrap();
        assert!(status.success());
        let reader = {
            let fifo = dir.path("fifo");
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let out = swath(&dir, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = reader.join().unwrap();
        let want: Vec<u8> = if args[0] == "cp" {
            data.clone()
        } else {
            data.iter().map(|b| b + 1).collect()
        };
        assert_eq!(got, want, "{args:?}");
        let meta = std::fs::symlink_metadata(dir.path("fifo")).unwrap();
        assert!(meta.file_type().is_fifo(), "{args:?}");
        std::fs::remove_file(dir.path("fifo")).unwrap();
    }
    assert!(leftovers(&dir).is_empty());
}

#[test]
fn in_place_runs_killed_at_random_moments_always_recover() {
    let dir = Dir::new();
    let data: Vec<u8> = (0..(12u32 << 20))
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let mut want = data.clone();
    for b in want.iter_mut() {
        *b = b.wrapping_add(9);
    }
    let path = dir.path("f");
    let journal = dir.path(".f.swath-journal");
    let run = |args: &[&str]| {
        Command::new(swath_bin())
            .args(args)
            .current_dir(dir.tmp.path())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let fresh = [
        "cipher",
        "--shift",
        "9",
        "--in-place",
        "--block-size",
        "128K",
        "f",
    ];
    // How long a whole run takes on this machine and build (tens of milliseconds with an
    // optimised binary, more under a debug build or a loaded machine): the kills are spread
    // over that span, so most land mid-run whatever the speed.
    let whole = (0..3)
        .map(|_| {
            std::fs::write(&path, &data).unwrap();
            let t = std::time::Instant::now();
            assert!(run(&fresh).wait().unwrap().success());
            t.elapsed()
        })
        .min()
        .unwrap();
    let mut killed_mid_run = 0;
    // A fixed pseudo-random sequence of kill points, so failures reproduce.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for round in 0..10 {
        std::fs::write(&path, &data).unwrap();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = whole.mul_f64(0.1 + 0.8 * (seed % 1000) as f64 / 1000.0);
        let mut child = run(&fresh);
        std::thread::sleep(delay);
        child.kill().unwrap();
        let status = child.wait().unwrap();
        if !status.success() && journal.exists() {
            killed_mid_run += 1;
        }
        if !journal.exists() && std::fs::read(&path).unwrap() == data {
            // Killed before it started: the file must be untouched; run it fully.
            assert!(run(&fresh).wait().unwrap().success());
        }
        // Recover: alternately with --resume and by running the same command again; kill
        // the first recovery attempt of some rounds too.
        if round % 3 == 2 && journal.exists() {
            let mut again = run(&["cipher", "--resume", "f"]);
            std::thread::sleep(std::time::Duration::from_millis(seed % 40));
            let _ = again.kill();
            let _ = again.wait();
        }
        if journal.exists() {
            let args: Vec<&str> = if round % 2 == 0 {
                vec!["cipher", "--resume", "f"]
            } else {
                fresh.to_vec()
            };
            let out = run(&args).wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {out:?}");
        }
        assert!(!journal.exists(), "round {round}");
        assert!(
            std::fs::read(&path).unwrap() == want,
            "round {round}: file is not fully transformed"
        );
    }
    assert!(
        killed_mid_run >= 3,
        "only {killed_mid_run} runs were killed mid-way"
    );
}

#[test]
fn full_disk_is_a_clear_error_and_leaves_nothing() {
    let dir = Dir::new();
    let Some(fs) = SmallFs::mount(&dir, "1m") else {
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        assert_ne!(euid, 0, "root could not mount a tmpfs");
        swath_engine::testing::skip("full-disk test skipped: mounting a tmpfs needs root");
        return;
    };
    dir.write("in", &vec![b'x'; 3 << 20]);
    std::fs::write(fs.path.join("old"), b"keep me").unwrap();
    for s in STRATEGIES {
        let out = swath(
            &dir,
            &["cipher", "--shift", "1", "--strategy", s, "in", "small/old"],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{s}: {err}");
        assert!(err.contains("No space left on device"), "{s}: {err}");
        assert_eq!(err.lines().count(), 1, "{s}: {err}");
        assert_eq!(
            std::fs::read(fs.path.join("old")).unwrap(),
            b"keep me",
            "{s}"
        );
        let names: Vec<_> = std::fs::read_dir(&fs.path)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{s}: {names:?}");
    }
    let out = swath(&dir, &["cp", "in", "small/old"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No space left on device"));
    assert_eq!(std::fs::read(fs.path.join("old")).unwrap(), b"keep me");
}

#[test]
fn unavailable_io_uring_is_reported_with_the_fallback() {
    let dir = Dir::new();
    dir.write("in", b"abc");
    let out = Command::new(swath_bin())
        .args(["cipher", "--shift", "1", "--strategy", "uring", "in", "out"])
        .env("SWATH_NO_IO_URING", "1")
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read(dir.path("out")).unwrap(), b"bcd");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "swath cipher: io_uring is unavailable (SWATH_NO_IO_URING is set): used the stream strategy\n"
    );
}

/// Ctrl-C in the middle of an in-place run says the file is partly transformed and the
/// exact command that finishes it; that command does.
#[test]
fn interrupted_in_place_run_says_how_to_finish() {
    let dir = Dir::new();
    let data: Vec<u8> = (0..(16u32 << 20)).map(|i| (i >> 5) as u8).collect();
    let name = "my file";
    let journal = dir.path(".my file.swath-journal");
    let mut interrupted = None;
    // The signal is sent once the journal exists (the run has begun); a run quicker than
    // that look is run again on a four times larger file.
    for round in 0..4 {
        let data: Vec<u8> = data
            .iter()
            .copied()
            .cycle()
            .take(data.len() << (2 * round))
            .collect();
        std::fs::write(dir.path(name), &data).unwrap();
        let child = Command::new(swath_bin())
            .args([
                "cipher",
                "--shift",
                "1",
                "--in-place",
                "--block-size",
                "4K",
                name,
            ])
            .current_dir(dir.tmp.path())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while !journal.exists() && started.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let out = child.wait_with_output().unwrap();
        if out.status.code() == Some(130) {
            interrupted = Some((out, data));
            break;
        }
        assert!(out.status.success(), "{out:?}");
    }
    let (out, data) = interrupted.expect("no run was interrupted mid-way");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "swath cipher: interrupted: my file is partly transformed; its journal keeps it safe. \
         Finish with: swath cipher --resume 'my file'\n"
    );
    assert!(journal.exists());
    let resumed = Command::new("sh")
        .args([
            "-c",
            "swath_bin=\"$0\"; \"$swath_bin\" cipher --resume 'my file'",
        ])
        .arg(swath_bin())
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{resumed:?}");
    assert!(!journal.exists());
    let want: Vec<u8> = data.iter().map(|b| b.wrapping_add(1)).collect();
    assert!(std::fs::read(dir.path(name)).unwrap() == want);
}
