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

/// Bytes the process tree of `sh -c SCRIPT` read through read-family calls (`rchar` of the
/// shell, which takes in its children's counts once it has waited for them), with the
/// script's outcome.
fn rchar_of(dir: &Dir, script: &str) -> (u64, crate::util::Outcome) {
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "{script}; s=$?; grep '^rchar:' /proc/$$/io >&2; exit $s"
        ))
        .arg(swath_bin())
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    let mut o = crate::util::Outcome::from(out);
    let (rest, rchar) = o.stderr.rsplit_once("rchar: ").expect("rchar line");
    let n = rchar.trim().parse().unwrap();
    o.stderr = rest.to_string();
    (n, o)
}

/// `cmp` where only one file has a hole: the hole is not read, the other side is checked
/// against zeros, and every output (first difference, `-l`, `-b`, limits, skips, EOF) is GNU
/// cmp's byte for byte, with every read method. Before, the hole was read as zeros: 128 MiB
/// read to compare a 64 MiB hole with 64 MiB of data.
#[test]
fn cmp_hole_on_one_side_is_checked_against_zeros_not_read() {
    use std::os::unix::fs::FileExt;
    const MIB: u64 = 1 << 20;
    let dir = Dir::new();
    // `h`: 64 MiB, data only here and there; `d`: the same bytes written densely, plus
    // differences inside h's holes (some of them newlines, which move line numbers when d
    // is the first file).
    let len = 64 * MIB;
    let h = std::fs::File::create(dir.path("h")).unwrap();
    h.set_len(len).unwrap();
    let mut dense = vec![0u8; len as usize];
    for (at, bytes) in [
        (0u64, &b"start\nof h\n"[..]),
        (5 * MIB + 17, b"x\ny\n"),
        (40 * MIB, b"middle"),
        (len - 3, b"e\n\n"),
    ] {
        h.write_all_at(bytes, at).unwrap();
        dense[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
    }
    h.sync_all().unwrap();
    if std::fs::metadata(dir.path("h")).unwrap().blocks() * 512 >= len {
        swath_engine::testing::skip("skipped: this file system does not keep holes");
        return;
    }
    let mut d = dense.clone();
    for (at, x) in [
        (MIB + 5, b'\n'),
        (3 * MIB, b'q'),
        (30 * MIB + 1, 0x80),
        (50 * MIB, b'\n'),
    ] {
        d[at as usize] = x;
    }
    std::fs::write(dir.path("d"), &d).unwrap();
    std::fs::write(dir.path("dense"), &dense).unwrap();
    // Shorter than h, ending inside a hole of h.
    std::fs::write(dir.path("short"), &d[..(45 * MIB) as usize]).unwrap();
    let cases: [&[&str]; 12] = [
        &["h", "d"],
        &["d", "h"],
        &["-b", "d", "h"],
        &["-l", "h", "d"],
        &["-l", "-b", "d", "h"],
        &["-n", "2097152", "h", "d"],
        &["-i", "3:1000", "h", "d"],
        &["h", "short"],
        &["-l", "short", "h"],
        &["h", "dense"],
        &["-s", "d", "h"],
        &["-l", "h", "dense"],
    ];
    for args in cases {
        let gnu = crate::util::same_as_gnu(&dir, args);
        for extra in [
            &["--strategy", "read"][..],
            &[
                "--strategy",
                "pread",
                "--threads",
                "2",
                "--block-size",
                "12345",
            ],
            &[
                "--strategy",
                "mmap",
                "--threads",
                "3",
                "--layout",
                "stripes",
            ],
            &["--max-diffs", "3"],
        ] {
            if extra[0] == "--max-diffs" && args.iter().any(|a| *a == "-l" || *a == "-s") {
                continue;
            }
            let all: Vec<&std::ffi::OsStr> =
                extra.iter().chain(args).map(std::ffi::OsStr::new).collect();
            let ours = crate::util::run(&dir.swath_cmp(), &all, dir.tmp.path(), None, &[]);
            if extra[0] == "--max-diffs" {
                // The first three differences: GNU's first line, then two more.
                assert_eq!(ours.status, gnu.status, "{extra:?} {args:?}");
                let first = gnu.stdout.lines().next().unwrap_or("");
                assert!(
                    ours.stdout.starts_with(first),
                    "{extra:?} {args:?}: {ours:?}"
                );
            } else {
                assert_eq!(ours, gnu, "{extra:?} {args:?}");
            }
        }
    }
    // What is read: a 64 MiB hole against 64 MiB of zeros written out is one side's bytes,
    // not both (with positional reads and with the sequential path). The default output
    // with the data file first is left out: it counts that file's newlines in a second pass
    // when no difference is found, a cost of its own.
    let hole = std::fs::File::create(dir.path("hole")).unwrap();
    hole.set_len(len).unwrap();
    std::fs::write(dir.path("zeros"), vec![0u8; len as usize]).unwrap();
    for strategy in ["pread", "read"] {
        for order in [
            "hole zeros",
            "-s hole zeros",
            "-s zeros hole",
            "-l hole zeros",
            "-l zeros hole",
        ] {
            let (read, out) = rchar_of(&dir, &format!("\"$0\" cmp --strategy {strategy} {order}"));
            assert_eq!(out.status, Some(0), "{strategy} {order}: {out:?}");
            assert!(
                read < len + len / 4,
                "{strategy} {order}: {read} bytes read for one side of {len}"
            );
            assert!(
                read >= len,
                "{strategy} {order}: the data side was not read ({read})"
            );
        }
    }
}

/// `cp` and `cipher` (when zeros stay zeros, with every strategy, and in place) keep the
/// holes of a 1 GiB sparse file, so their output fits on a 16 MiB tmpfs where GNU cp's
/// does: before, only `cp` and `cipher --strategy threads` did, and the other strategies
/// failed with ENOSPC.
#[test]
fn cp_and_cipher_keep_holes_on_a_small_tmpfs() {
    use std::os::unix::fs::FileExt;
    let dir = Dir::new();
    let Some(fs) = crate::util::SmallFs::mount(&dir, "16m") else {
        assert!(!crate::util::is_root(), "root could not mount a tmpfs");
        swath_engine::testing::skip("skipped: mounting a tmpfs needs root");
        return;
    };
    let len = 1u64 << 30;
    let src = dir.path("sparse");
    let f = std::fs::File::create(&src).unwrap();
    f.set_len(len).unwrap();
    let mut data = Vec::new();
    for (i, at) in [0, 5 << 20, 300 << 20, len - 100_000]
        .into_iter()
        .enumerate()
    {
        let chunk: Vec<u8> = (0..100_000u32)
            .map(|j| b"abcxyz\n"[(j as usize + i) % 7])
            .collect();
        f.write_all_at(&chunk, at).unwrap();
        data.push((at, chunk));
    }
    drop(f);
    let shifted = |chunk: &[u8]| -> Vec<u8> {
        chunk
            .iter()
            .map(|&c| match c {
                b'a'..=b'z' => b'a' + (c - b'a' + 3) % 26,
                other => other,
            })
            .collect()
    };
    let check = |path: &Path, what: &str, transformed: bool| {
        let m = std::fs::metadata(path).unwrap();
        assert_eq!(m.len(), len, "{what}");
        assert!(m.blocks() * 512 < 4 << 20, "{what}: {} blocks", m.blocks());
        let f = std::fs::File::open(path).unwrap();
        for (at, chunk) in &data {
            let mut got = vec![0u8; chunk.len()];
            f.read_exact_at(&mut got, *at).unwrap();
            let want = if transformed {
                shifted(chunk)
            } else {
                chunk.clone()
            };
            assert!(got == want, "{what}: bytes at {at}");
        }
        let mut gap = vec![1u8; 4096];
        f.read_exact_at(&mut gap, 100 << 20).unwrap();
        assert!(gap.iter().all(|&b| b == 0), "{what}: a hole's bytes");
    };
    let out = fs.path.join("out");
    let run = |args: &[&str], what: &str| {
        let o = bounded(&dir, args);
        assert_eq!(o.status.code(), Some(0), "{what}: {}", text(&o.stderr));
    };
    let out_s = out.to_str().unwrap();
    run(&["cp", "sparse", out_s], "cp");
    check(&out, "cp", false);
    std::fs::remove_file(&out).unwrap();
    for strategy in crate::cipher::STRATEGIES {
        let what = format!("cipher --strategy {strategy}");
        run(
            &[
                "cipher",
                "--alphabet",
                "--shift",
                "3",
                "--strategy",
                strategy,
                "sparse",
                out_s,
            ],
            &what,
        );
        check(&out, &what, true);
        std::fs::remove_file(&out).unwrap();
    }
    // In place, on a copy in the small file system.
    run(&["cp", "sparse", out_s], "cp");
    run(
        &["cipher", "--alphabet", "--shift", "3", "--in-place", out_s],
        "--in-place",
    );
    check(&out, "cipher --in-place", true);
    assert!(!fs.path.join(".out.swath-journal").exists());
}
