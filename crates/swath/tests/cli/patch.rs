//! `swath patch`: round trips through the command line, and every way a patch or its inputs
//! can be wrong (each byte flipped, each truncation, the wrong OLD, a newer version, a full
//! disk): one line on stderr, status 2, nothing at NEW's path.

use crate::util::{swath, swath_bin, Dir, SmallFs};
use std::process::Command;

/// A pseudo-random OLD and a NEW made from it by edits: a moved block, an insertion, a zero
/// run and scattered byte changes.
pub(crate) fn pair(len: usize, seed: u64) -> (Vec<u8>, Vec<u8>) {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let old: Vec<u8> = (0..len).map(|_| (next() >> 24) as u8).collect();
    let mut new = old.clone();
    if len > 1000 {
        let a = len / 3;
        let moved: Vec<u8> = new.drain(a..a + len / 10).collect();
        new.extend_from_slice(&moved);
        let at = len / 2;
        new.splice(at..at, (0..len / 50).map(|_| (next() >> 11) as u8));
        let z = len / 5;
        new[z..z + 200].iter_mut().for_each(|b| *b = 0);
        for _ in 0..len / 4000 {
            let i = (next() as usize) % new.len();
            new[i] ^= 0x5a;
        }
    }
    (old, new)
}

pub(crate) fn ok(o: &std::process::Output) {
    assert!(
        o.status.success(),
        "status {:?}, stderr {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
}

/// One line on stderr containing `what`, status 2.
pub(crate) fn fails(o: &std::process::Output, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("swath patch: "), "{err}");
    assert!(err.contains(what), "wanted {what:?} in {err}");
}

#[test]
fn make_apply_info_round_trip_at_every_level() {
    let dir = Dir::new();
    for (len, seed) in [(0usize, 1u64), (1, 2), (5000, 3), (300_000, 4)] {
        let (old, new) = pair(len, seed);
        dir.write("old", &old);
        dir.write("new", &new);
        for level in ["fast", "default", "max"] {
            for chunk in ["64", "1K", "3000"] {
                let _ = std::fs::remove_file(dir.path("out"));
                ok(&swath(
                    &dir,
                    &[
                        "patch", "make", "--level", level, "--chunk", chunk, "old", "new", "p",
                    ],
                ));
                ok(&swath(&dir, &["patch", "apply", "old", "p", "out"]));
                assert_eq!(
                    std::fs::read(dir.path("out")).unwrap(),
                    new,
                    "{len} {level} {chunk}"
                );
            }
        }
        // Identical files: a patch that is all copies.
        ok(&swath(&dir, &["patch", "make", "old", "old", "same"]));
        ok(&swath(&dir, &["patch", "apply", "old", "same", "out"]));
        assert_eq!(std::fs::read(dir.path("out")).unwrap(), old);
        // Empty OLD, and empty NEW.
        dir.write("empty", b"");
        ok(&swath(&dir, &["patch", "make", "empty", "new", "p"]));
        ok(&swath(&dir, &["patch", "apply", "empty", "p", "out"]));
        assert_eq!(std::fs::read(dir.path("out")).unwrap(), new);
        ok(&swath(&dir, &["patch", "make", "old", "empty", "p"]));
        ok(&swath(&dir, &["patch", "apply", "old", "p", "out"]));
        assert_eq!(std::fs::read(dir.path("out")).unwrap(), b"");
    }

    // info and --json agree with the files, and --dry-run writes nothing.
    let (old, new) = pair(300_000, 9);
    dir.write("old", &old);
    dir.write("new", &new);
    let made = swath(&dir, &["patch", "make", "--json", "old", "new", "p"]);
    ok(&made);
    let m: serde_json::Value = serde_json::from_slice(&made.stdout).unwrap();
    let patch_len = std::fs::metadata(dir.path("p")).unwrap().len();
    assert_eq!(m["patch_len"], patch_len);
    assert_eq!(m["new_len"], new.len());
    let c = &m["census"];
    let covered: u64 = ["copied_bytes", "delta_bytes", "zero_bytes", "literal_bytes"]
        .iter()
        .map(|k| c[k].as_u64().unwrap())
        .sum();
    assert_eq!(covered, new.len() as u64);
    // The 200 zeros and the moved block are found; the insertion is literal.
    assert!(
        c["copied_bytes"].as_u64().unwrap() > new.len() as u64 / 2,
        "{c}"
    );
    let info = swath(&dir, &["patch", "info", "--json", "p"]);
    ok(&info);
    let i: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(i["patch_bytes"], patch_len);
    assert_eq!(i["old_bytes"], old.len());
    assert_eq!(i["new_bytes"], new.len());
    assert_eq!(i["ops"], m["census"]);
    let text = swath(&dir, &["patch", "info", "p"]);
    ok(&text);
    assert!(String::from_utf8_lossy(&text.stdout).contains(&format!("new: {} bytes", new.len())));
    let dry = swath(
        &dir,
        &["patch", "make", "--dry-run", "--json", "old", "new"],
    );
    ok(&dry);
    let d: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!(d["patch_len"], patch_len);
    assert!(!dir.path("new.patch").exists());
}

#[test]
fn every_flipped_byte_and_every_truncation_is_refused_with_nothing_written() {
    let dir = Dir::new();
    let (old, new) = pair(20_000, 5);
    dir.write("old", &old);
    dir.write("new", &new);
    ok(&swath(
        &dir,
        &["patch", "make", "--chunk", "64", "old", "new", "p"],
    ));
    let good = std::fs::read(dir.path("p")).unwrap();
    let step = (good.len() / 300).max(1);
    let mut cases: Vec<(String, Vec<u8>)> = (0..good.len())
        .step_by(step)
        .map(|i| {
            let mut b = good.clone();
            b[i] ^= 0x04;
            (format!("byte {i} flipped"), b)
        })
        .collect();
    for n in (0..good.len()).step_by(step) {
        cases.push((format!("cut at {n}"), good[..n].to_vec()));
    }
    for (what, bytes) in cases {
        dir.write("bad", &bytes);
        let o = swath(&dir, &["patch", "apply", "old", "bad", "out"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.starts_with("swath patch: bad: "), "{what}: {err}");
        assert!(!dir.path("out").exists(), "{what}");
        let listing: Vec<_> = std::fs::read_dir(dir.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(listing.is_empty(), "{what}: left {listing:?}");
    }
}

#[test]
fn wrong_old_newer_version_and_bad_arguments() {
    let dir = Dir::new();
    let (old, new) = pair(50_000, 6);
    dir.write("old", &old);
    dir.write("new", &new);
    ok(&swath(&dir, &["patch", "make", "old", "new", "p"]));
    // Another OLD of the same size, and one of another size.
    let mut other = old.clone();
    other[25_000] ^= 1;
    dir.write("other", &other);
    fails(
        &swath(&dir, &["patch", "apply", "other", "p", "out"]),
        "other: not the file this patch was made from (same size, other content)",
    );
    dir.write("short", &old[..100]);
    fails(
        &swath(&dir, &["patch", "apply", "short", "p", "out"]),
        "short: not the file this patch was made from (it has 100 bytes, the patch expects 50000)",
    );
    assert!(!dir.path("out").exists());
    // A newer format version (its header re-checksummed, as a newer swath would write it).
    let mut newer = std::fs::read(dir.path("p")).unwrap();
    newer[8] = 2;
    let sum = xxhash_rust::xxh3::xxh3_64(&newer[..120]);
    newer[120..128].copy_from_slice(&sum.to_le_bytes());
    dir.write("newer", &newer);
    fails(
        &swath(&dir, &["patch", "apply", "old", "newer", "out"]),
        "patch format version 2 is not supported",
    );
    dir.write("text", b"this is not a patch at all, just some text that is long enough to be read as one.......................................................................................");
    fails(
        &swath(&dir, &["patch", "info", "text"]),
        "text: not a swath patch",
    );
    fails(
        &swath(&dir, &["patch", "apply", "missing", "p", "out"]),
        "missing: No such file or directory",
    );
    fails(
        &swath(&dir, &["patch", "make", "old", ".", "p"]),
        ".: Is a directory",
    );
    fails(
        &swath(&dir, &["patch", "make", "--chunk", "10", "old", "new", "p"]),
        "--chunk",
    );
    fails(
        &swath(&dir, &["patch", "make", "old", "new"]),
        "missing PATCH",
    );
    assert!(!dir.path("out").exists());
}

#[test]
fn full_disk_during_apply_leaves_nothing() {
    let dir = Dir::new();
    let Some(fs) = SmallFs::mount(&dir, "256k") else {
        swath_engine::testing::skip("skipped: mounting a tmpfs needs root");
        return;
    };
    let (old, new) = pair(1_000_000, 7);
    dir.write("old", &old);
    dir.write("new", &new);
    ok(&swath(&dir, &["patch", "make", "old", "new", "p"]));
    let target = fs.path.join("out");
    // Both ways of writing NEW: a positional write per section, and a map per section.
    for map in ["0", "1"] {
        let o = Command::new(swath_bin())
            .args(["patch", "apply", "old", "p", target.to_str().unwrap()])
            .env("SWATH_APPLY_MAP", map)
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        fails(&o, "No space left on device");
        assert_eq!(std::fs::read_dir(&fs.path).unwrap().count(), 0, "map {map}");
    }
}

/// NEW rebuilt in a map of each section's range (`SWATH_APPLY_MAP=1`, kept for
/// measurements) is the same file as NEW written section by section.
#[test]
fn apply_through_maps_gives_new_too() {
    let dir = Dir::new();
    for (len, seed) in [(1usize, 2u64), (300_000, 4), (3_000_000, 9)] {
        let (old, new) = pair(len, seed);
        dir.write("old", &old);
        dir.write("new", &new);
        ok(&swath(&dir, &["patch", "make", "old", "new", "p"]));
        let _ = std::fs::remove_file(dir.path("out"));
        let o = Command::new(swath_bin())
            .args(["patch", "apply", "old", "p", "out"])
            .env("SWATH_APPLY_MAP", "1")
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        ok(&o);
        assert_eq!(std::fs::read(dir.path("out")).unwrap(), new, "{len}");
    }
}

/// VCDIFF both ways through the command line: `xdelta3 -d` applies `--format vcdiff`, and
/// `swath patch apply` applies `xdelta3 -e -S none` output (and refuses its secondary
/// compression, or a damaged one, in one line with nothing written). Skipped where xdelta3
/// is missing (.ci/run installs it).
#[test]
fn vcdiff_both_ways_with_xdelta3() {
    if !std::path::Path::new("/usr/bin/xdelta3").exists() {
        swath_engine::testing::skip("skipped: /usr/bin/xdelta3 is not installed");
        return;
    }
    let dir = Dir::new();
    let (old, new) = pair(400_000, 11);
    dir.write("old", &old);
    dir.write("new", &new);
    let xdelta = |args: &[&str]| {
        let o = std::process::Command::new("xdelta3")
            .args(args)
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    for level in ["fast", "default"] {
        ok(&swath(
            &dir,
            &[
                "patch", "make", "--format", "vcdiff", "--level", level, "old", "new", "p.vcdiff",
            ],
        ));
        xdelta(&["-d", "-f", "-s", "old", "p.vcdiff", "out"]);
        assert_eq!(std::fs::read(dir.path("out")).unwrap(), new, "{level}");
        let _ = std::fs::remove_file(dir.path("out"));
        // swath reads its own VCDIFF too.
        ok(&swath(&dir, &["patch", "apply", "old", "p.vcdiff", "out"]));
        assert_eq!(std::fs::read(dir.path("out")).unwrap(), new, "{level}");
    }
    xdelta(&[
        "-e", "-f", "-9", "-S", "none", "-s", "old", "new", "x.vcdiff",
    ]);
    let _ = std::fs::remove_file(dir.path("out"));
    ok(&swath(&dir, &["patch", "apply", "old", "x.vcdiff", "out"]));
    assert_eq!(std::fs::read(dir.path("out")).unwrap(), new);
    xdelta(&[
        "-e",
        "-f",
        "-9",
        "-S",
        "djw",
        "-s",
        "old",
        "new",
        "djw.vcdiff",
    ]);
    fails(
        &swath(&dir, &["patch", "apply", "old", "djw.vcdiff", "out2"]),
        "make the patch with xdelta3 -S none",
    );
    let mut cut = std::fs::read(dir.path("x.vcdiff")).unwrap();
    cut.truncate(cut.len() - 7);
    dir.write("cut.vcdiff", &cut);
    fails(
        &swath(&dir, &["patch", "apply", "old", "cut.vcdiff", "out2"]),
        "cut.vcdiff: truncated",
    );
    assert!(!dir.path("out2").exists());
}

#[test]
fn long_zero_runs_round_trip_and_a_sparse_new_stays_sparse() {
    // NEW: OLD's first half, a 192 MiB hole, OLD's second half; OLD itself holds a long zero
    // run written out. Zero runs are chunks of at most 1 MiB (make's memory does not grow
    // with them), and apply leaves NEW's long zero runs as holes.
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;
    let dir = Dir::new();
    let (old, _) = pair(2 << 20, 21);
    let mut o = std::fs::File::create(dir.path("old")).unwrap();
    o.write_all(&old[..1 << 20]).unwrap();
    o.write_all(&vec![0u8; 3 << 20]).unwrap();
    o.write_all(&old[1 << 20..]).unwrap();
    drop(o);
    let hole = 192u64 << 20;
    let mut n = std::fs::File::create(dir.path("new")).unwrap();
    n.write_all(&old[..1 << 20]).unwrap();
    n.set_len((1 << 20) + hole).unwrap();
    use std::os::unix::fs::FileExt;
    n.write_all_at(&old[1 << 20..], (1 << 20) + hole).unwrap();
    drop(n);
    let new = std::fs::read(dir.path("new")).unwrap();
    for level in ["fast", "default"] {
        let _ = std::fs::remove_file(dir.path("out"));
        ok(&swath(
            &dir,
            &["patch", "make", "--level", level, "old", "new", "p"],
        ));
        assert!(std::fs::metadata(dir.path("p")).unwrap().len() < 1 << 20);
        ok(&swath(&dir, &["patch", "apply", "old", "p", "out"]));
        assert!(std::fs::read(dir.path("out")).unwrap() == new, "{level}");
        let allocated = std::fs::metadata(dir.path("out")).unwrap().blocks() * 512;
        assert!(allocated < 16 << 20, "{level}: {allocated} bytes allocated");
    }
}
