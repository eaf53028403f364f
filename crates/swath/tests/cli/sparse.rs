//! Sparse files and inputs that grow: holes answered without reading them (wc -c from the
//! size, grep and wc skipping holes, cmp against holes), holes kept by cp and cipher, and a
//! file that grows while it is copied reported, not silently cut.
//!
//! The "1 TB" files are sparse: they cost nothing on disk. Commands run under `timeout` so
//! that code reading every byte of a hole fails the test instead of running for hours.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use crate::util::{swath_bin, Dir};

const TB: u64 = 1 << 40;

/// A sparse file of `len` bytes with `tail` written at its end.
fn sparse(path: &Path, len: u64, tail: &[u8]) {
    let f = std::fs::File::create(path).unwrap();
    f.set_len(len).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, tail, len).unwrap();
}

/// Runs `swath ARGS` in `dir`, bounded by `timeout` (reading a 1 TB hole would take hours).
fn bounded(dir: &Dir, args: &[&str]) -> std::process::Output {
    Command::new("timeout")
        .arg("60")
        .arg(swath_bin())
        .args(args)
        .current_dir(dir.tmp.path())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn wc_c_on_a_1tb_sparse_file_answers_from_the_size() {
    let dir = Dir::new();
    // A multiple of the page size: the size alone answers, as GNU wc does.
    sparse(&dir.path("tb"), TB, b"");
    let out = bounded(&dir, &["wc", "-c", "tb"]);
    assert_eq!(
        text(&out.stdout),
        format!("{TB} tb\n"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0));
    // Standard input opened on the file, from a position inside it.
    let f = std::fs::File::open(dir.path("tb")).unwrap();
    let mut f2 = f.try_clone().unwrap();
    std::io::Seek::seek(&mut f2, std::io::SeekFrom::Start(100)).unwrap();
    let out = Command::new("timeout")
        .arg("60")
        .arg(swath_bin())
        .args(["wc", "-c"])
        .stdin(f)
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), format!("{}\n", TB - 100));
    assert_eq!(std::fs::metadata(dir.path("tb")).unwrap().blocks(), 0);
}

#[test]
fn wc_and_grep_skip_the_holes_of_a_1tb_sparse_file() {
    let dir = Dir::new();
    // Data at the start, in the middle and at the end of a terabyte of holes.
    let path = dir.path("tb");
    sparse(&path, TB, b"x y\nlast x");
    std::os::unix::fs::FileExt::write_all_at(
        &std::fs::OpenOptions::new().write(true).open(&path).unwrap(),
        b"x\n",
        TB / 2,
    )
    .unwrap();
    std::os::unix::fs::FileExt::write_all_at(
        &std::fs::OpenOptions::new().write(true).open(&path).unwrap(),
        b"first x\n",
        0,
    )
    .unwrap();
    // GNU wc would read the terabyte: its counts of the same text with NULs for the holes
    // (NUL is no space, and ends no line), and the size.
    let small = dir.write("small", b"first x\n\0\0x\n\0\0x y\nlast x");
    let gnu = Command::new("/usr/bin/wc")
        .arg("-lwm")
        .arg(&small)
        .output()
        .unwrap();
    let gnu: Vec<String> = text(&gnu.stdout)
        .split_whitespace()
        .map(String::from)
        .collect();
    let out = bounded(&dir, &["wc", "-lwcmL", "tb"]);
    let ours: Vec<String> = text(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect();
    let longest = Command::new("/usr/bin/wc")
        .arg("-L")
        .arg(&small)
        .output()
        .unwrap();
    let longest = text(&longest.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let size = (TB + 10).to_string();
    assert_eq!(
        ours,
        [&gnu[0], &gnu[1], &size, &size, &longest, "tb"],
        "{}",
        text(&out.stderr)
    );
    let out = bounded(&dir, &["wc", "-l", "tb"]);
    assert_eq!(text(&out.stdout), format!("{} tb\n", gnu[0]));
    // GNU grep skips holes too when empty lines cannot match: the same count, at once.
    let gnu = Command::new("/usr/bin/grep")
        .args(["-c", "x"])
        .arg(&path)
        .output()
        .unwrap();
    let out = bounded(&dir, &["grep", "-c", "x", "tb"]);
    assert_eq!(
        text(&out.stdout),
        text(&gnu.stdout),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(out.status.code(), gnu.status.code());
    // Selected lines, limits and line numbers: the same as GNU's (which skips the holes
    // when empty lines cannot match), without reading the holes.
    for args in [
        &["x"][..],
        &["-m2", "-c", "x"],
        &["-n", "last"],
        &["-l", "y"],
    ] {
        let gnu = Command::new("grep")
            .env("PATH", "/usr/bin:/bin")
            .args(args)
            .arg("tb")
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        let ours = Command::new("timeout")
            .arg("60")
            .arg(dir.path("grep"))
            .args(args)
            .arg("tb")
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        assert_eq!(
            (text(&ours.stdout), text(&ours.stderr), ours.status.code()),
            (text(&gnu.stdout), text(&gnu.stderr), gnu.status.code()),
            "grep {args:?}"
        );
    }
    // When they can, GNU reads the terabyte; every NUL ends an empty line: all but the
    // 10 NULs' worth of bytes the three lines with text and their newlines stand on.
    let empty = TB + 10 - 20;
    for args in [["-c", "^$"], ["-vc", "x"]] {
        let out = bounded(&dir, &["grep", args[0], args[1], "tb"]);
        assert_eq!(
            text(&out.stdout),
            format!("{empty}\n"),
            "{args:?} {}",
            text(&out.stderr)
        );
    }
    let out = bounded(&dir, &["grep", "-q", "last", "tb"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = bounded(&dir, &["grep", "-c", "nowhere", "tb"]);
    assert_eq!(text(&out.stdout), "0\n");
    assert_eq!(out.status.code(), Some(1));
    // Two sparse files equal but for their last byte: cmp finds it without reading holes.
    let other = dir.path("tb2");
    sparse(&other, TB, b"x y\nlast y");
    std::os::unix::fs::FileExt::write_all_at(
        &std::fs::OpenOptions::new()
            .write(true)
            .open(&other)
            .unwrap(),
        b"first x\n",
        0,
    )
    .unwrap();
    std::os::unix::fs::FileExt::write_all_at(
        &std::fs::OpenOptions::new()
            .write(true)
            .open(&other)
            .unwrap(),
        b"x\n",
        TB / 2,
    )
    .unwrap();
    let out = bounded(&dir, &["cmp", "tb", "tb2"]);
    assert_eq!(
        text(&out.stdout),
        format!("tb tb2 differ: byte {}, line 4\n", TB + 10),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn cp_keeps_the_holes_of_a_1tb_sparse_file() {
    let dir = Dir::new();
    let src = dir.path("tb");
    sparse(&src, TB, b"tail");
    std::os::unix::fs::FileExt::write_all_at(
        &std::fs::OpenOptions::new().write(true).open(&src).unwrap(),
        b"middle",
        TB / 3,
    )
    .unwrap();
    let out = bounded(&dir, &["cp", "tb", "copy"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (a, b) = (
        std::fs::metadata(&src).unwrap(),
        std::fs::metadata(dir.path("copy")).unwrap(),
    );
    assert_eq!(b.len(), a.len());
    // As sparse as the source (a few blocks), where writing the holes out would need 1 TB.
    assert!(b.blocks() <= a.blocks() * 2 + 64, "{} blocks", b.blocks());
    let copy = std::fs::File::open(dir.path("copy")).unwrap();
    let mut buf = [0u8; 6];
    std::os::unix::fs::FileExt::read_exact_at(&copy, &mut buf, TB / 3).unwrap();
    assert_eq!(&buf, b"middle");
    std::os::unix::fs::FileExt::read_exact_at(&copy, &mut buf[..4], TB).unwrap();
    assert_eq!(&buf[..4], b"tail");
    // Equal, as cmp finds without reading the holes of either.
    let out = bounded(&dir, &["cmp", "tb", "copy"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn cp_of_a_file_that_grows_meanwhile_is_reported_not_cut_short() {
    let dir = Dir::new();
    let src = dir.path("growing");
    let mut detected = 0;
    // Appending 32 MiB while 96 MiB are copied: the copy starts during the append in most
    // rounds. Whatever the interleaving, a run that succeeds made a copy equal to the
    // source, and a run that fails said so and left nothing at the target.
    for round in 0..12 {
        std::fs::write(&src, vec![b'a'; 96 << 20]).unwrap();
        let dest = dir.path(&format!("copy{round}"));
        let child = Command::new(swath_bin())
            .args(["cp", "--threads", "1"])
            .arg(&src)
            .arg(&dest)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().append(true).open(&src).unwrap();
            for _ in 0..32 {
                f.write_all(&vec![b'b'; 1 << 20]).unwrap();
            }
        }
        let out = child.wait_with_output().unwrap();
        let stderr = text(&out.stderr);
        match out.status.code() {
            Some(0) => {
                let copied = std::fs::metadata(&dest).unwrap().len();
                assert_eq!(copied, 128 << 20, "exit 0 with a copy lacking the tail");
            }
            Some(2) => {
                detected += 1;
                assert_eq!(stderr.lines().count(), 1, "{stderr}");
                assert!(
                    stderr.contains("growing: file changed size while being read"),
                    "{stderr}"
                );
                assert!(!dest.exists(), "partial output left at the target");
            }
            other => panic!("status {other:?}: {stderr}"),
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("swath-tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        if detected > 0 {
            break;
        }
    }
    assert!(detected > 0, "no round saw the file grow during the copy");
}
