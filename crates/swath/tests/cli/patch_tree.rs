//! `swath patch` on directory trees: round trips checked with `diff -r --no-dereference` and
//! `stat`, and every way a tree patch or its trees can be wrong (flipped bytes,
//! truncations, forged manifests, the wrong old tree, a non-empty target, a full disk,
//! special files, permissions as root and as nobody): one line on stderr, status 2, and
//! nothing at NEW_DIR, no temporary tree left beside it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::patch::{fails, ok};
use crate::util::{swath, swath_bin, Dir, SmallFs};

fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as u8 % 16 + b'a'
        })
        .collect()
}

fn file(root: &Path, rel: &str, data: &[u8], mode: u32) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, data).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// An old tree and a new one: edits, a rename across directories, a deletion, a new file,
/// an empty file and directory, links (one dangling, one absolute), a file that became a
/// directory, modes.
fn trees(dir: &Dir) {
    let (o, n) = (dir.path("old"), dir.path("new"));
    let big = bytes(200_000, 1);
    let mid = bytes(30_000, 2);
    file(&o, "src/big.c", &big, 0o644);
    file(&o, "src/mid.h", &mid, 0o644);
    file(&o, "docs/readme", b"read me\n", 0o644);
    file(&o, "gone", b"deleted\n", 0o600);
    file(&o, "x", &bytes(5000, 3), 0o644);
    std::os::unix::fs::symlink("src/big.c", o.join("link")).unwrap();
    let mut big2 = big.clone();
    big2.splice(100_000..100_000, b"/* a new comment */".iter().copied());
    big2[150_000] ^= 1;
    file(&n, "src/big.c", &big2, 0o755);
    file(&n, "lib/moved.h", &mid, 0o640);
    file(&n, "docs/readme", b"read me\n", 0o444);
    file(&n, "docs/new.txt", &bytes(3000, 4), 0o644);
    file(&n, "empty", b"", 0o600);
    file(&n, "x/was-a-file", &bytes(5000, 3), 0o644);
    std::fs::create_dir_all(n.join("empty-dir")).unwrap();
    std::os::unix::fs::symlink("../nowhere", n.join("docs/dangling")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", n.join("abs")).unwrap();
    std::fs::set_permissions(n.join("lib"), std::fs::Permissions::from_mode(0o750)).unwrap();
}

/// `diff -r --no-dereference` finds no difference, and `stat` gives the same modes and
/// modification times (links' times too) for every entry.
fn same_tree(dir: &Dir, a: &str, b: &str) {
    let d = Command::new("diff")
        .args(["-r", "--no-dereference", a, b])
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    assert!(
        d.status.success(),
        "diff: {}{}",
        String::from_utf8_lossy(&d.stdout),
        String::from_utf8_lossy(&d.stderr)
    );
    let stat = |root: &str| {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "cd {root} && find . -print0 | sort -z | xargs -0 stat -c '%n %F %a %Y %y'"
            ))
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(stat(b), stat(a));
}

/// Names in the scratch directory starting with '.' (temporary trees left behind).
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

#[test]
fn patch_tree_round_trip_with_diff_and_stat_at_every_level() {
    let dir = Dir::new();
    trees(&dir);
    for level in ["fast", "default", "max"] {
        for threads in ["1", "2"] {
            let _ = std::fs::remove_dir_all(dir.path("out"));
            ok(&swath(
                &dir,
                &[
                    "patch",
                    "make",
                    "--level",
                    level,
                    "--threads",
                    threads,
                    "--chunk",
                    "256",
                    "old",
                    "new",
                    "p",
                ],
            ));
            ok(&swath(
                &dir,
                &["patch", "apply", "--threads", threads, "old", "p", "out"],
            ));
            same_tree(&dir, "new", "out");
        }
    }
    // A memory budget smaller than the largest file: it runs alone, the patch is the same.
    ok(&swath(
        &dir,
        &[
            "patch",
            "make",
            "--memory",
            "20K",
            "old",
            "new",
            "small-budget",
        ],
    ));
    ok(&swath(&dir, &["patch", "make", "old", "new", "any-budget"]));
    assert_eq!(
        std::fs::read(dir.path("small-budget")).unwrap(),
        std::fs::read(dir.path("any-budget")).unwrap()
    );
    // One the table of OLD's chunks does not fit in: refused, naming what it needs.
    fails(
        &swath(
            &dir,
            &["patch", "make", "--memory", "1K", "old", "new", "p4"],
        ),
        "--memory: OLD's chunk table needs",
    );
    assert!(!dir.path("p4").exists());
    // Into an empty directory that exists.
    let _ = std::fs::remove_dir_all(dir.path("out"));
    std::fs::create_dir(dir.path("out")).unwrap();
    ok(&swath(&dir, &["patch", "apply", "old", "p", "out"]));
    same_tree(&dir, "new", "out");
    // Identical trees: every file a whole old file, no sections.
    ok(&swath(&dir, &["patch", "make", "new", "new", "same"]));
    let _ = std::fs::remove_dir_all(dir.path("out"));
    ok(&swath(&dir, &["patch", "apply", "new", "same", "out"]));
    same_tree(&dir, "new", "out");

    // info and --json agree with make's report; --dry-run writes nothing.
    let made = swath(&dir, &["patch", "make", "--json", "old", "new", "p"]);
    ok(&made);
    let m: serde_json::Value = serde_json::from_slice(&made.stdout).unwrap();
    let info = swath(&dir, &["patch", "info", "--json", "p"]);
    ok(&info);
    let i: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(i["tree"], true);
    assert_eq!(i["patch_bytes"], m["patch_len"]);
    assert_eq!(i["new_files"], 6);
    assert_eq!(i["new_links"], 2);
    // src, lib, docs, x, empty-dir.
    assert_eq!(i["new_dirs"], 5);
    // gone, x (now a directory), src/mid.h (moved).
    assert_eq!(i["deleted_files"], 3);
    // docs/readme and x/was-a-file are whole old files, lib/moved.h too.
    assert_eq!(i["whole_old_files"], 3);
    assert_eq!(i["ops"], m["census"]);
    assert_eq!(i["section_bytes"], m["new_len"]);
    let text = swath(&dir, &["patch", "info", "p"]);
    ok(&text);
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(t.contains("new tree: 6 files"), "{t}");
    assert!(t.contains("deleted files: 3"), "{t}");
    ok(&swath(&dir, &["patch", "make", "--dry-run", "old", "new"]));
    // The patch is much smaller than the new tree.
    assert!(m["patch_len"].as_u64().unwrap() < 20_000, "{m}");
}

#[test]
fn patch_tree_every_flipped_byte_and_truncation_is_refused_with_nothing_at_new() {
    let dir = Dir::new();
    let (o, n) = (dir.path("old"), dir.path("new"));
    file(&o, "a/f", &bytes(3000, 5), 0o644);
    file(&o, "b", b"bee\n", 0o644);
    file(&n, "a/f", &bytes(3100, 5), 0o644);
    file(&n, "c/b", b"bee\n", 0o600);
    std::os::unix::fs::symlink("a/f", n.join("l")).unwrap();
    ok(&swath(
        &dir,
        &["patch", "make", "--chunk", "64", "old", "new", "p"],
    ));
    let good = std::fs::read(dir.path("p")).unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..good.len() {
        let mut b = good.clone();
        b[i] ^= 0x04;
        cases.push((format!("byte {i} flipped"), b));
    }
    for k in 0..good.len() {
        cases.push((format!("cut at {k}"), good[..k].to_vec()));
    }
    for (what, b) in cases {
        dir.write("bad", &b);
        let o = swath(&dir, &["patch", "apply", "old", "bad", "out"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.starts_with("swath patch: bad: "), "{what}: {err}");
        assert!(!dir.path("out").exists(), "{what}");
        assert!(leftovers(dir.tmp.path()).is_empty(), "{what}");
    }
}

/// A tree patch rebuilt with another manifest (sizes kept, so only the manifest's own
/// checks can refuse it), as a forger would write it; `old` is the old tree the manifest is
/// coded against.
fn forge(
    good: &[u8],
    old: &Path,
    change: impl FnOnce(&mut swath_patch::manifest::Manifest),
) -> Vec<u8> {
    let (h, _, _, raw) = manifest_in(good);
    let script = swath_patch::manifest::Script::parse(raw).unwrap();
    let (_, walked) = swath_patch::tree::walk(old, "old").unwrap();
    let old_entries = swath_patch::tree::old_entries_of(&walked);
    let mut m = script.resolve(&old_entries, h.new_len).unwrap();
    change(&mut m);
    forge_raw(good, &m.encode(&script.digests()))
}

/// The tree patch `good`'s header, where its manifest and its table start, and its
/// manifest decoded.
fn manifest_in(good: &[u8]) -> (swath_patch::format::Header, usize, usize, Vec<u8>) {
    use swath_patch::format::{Header, TREE_RECORD_LEN};
    let (h, _) = Header::decode_flags(&good[..128]).unwrap();
    let f = &good[good.len() - 40..];
    let table_at = u64::from_le_bytes(f[..8].try_into().unwrap()) as usize;
    let rec = &good[table_at - TREE_RECORD_LEN..table_at];
    let m_at = u64::from_le_bytes(rec[..8].try_into().unwrap()) as usize;
    let raw = zstd::bulk::decompress(&good[m_at..table_at - TREE_RECORD_LEN], 1 << 20).unwrap();
    (h, m_at, table_at, raw)
}

/// The good tree patch `good` with the raw (decoded) manifest `raw` in place of its own, as
/// a forger would write it: every checksum right.
fn forge_raw(good: &[u8], raw: &[u8]) -> Vec<u8> {
    use swath_patch::format::{encode_tail, encode_tree_record};
    let (h, m_at, table_at, _) = manifest_in(good);
    let stored = zstd::bulk::compress(raw, 3).unwrap();
    let mut out = good[..m_at].to_vec();
    out.extend_from_slice(&stored);
    let chain = h.chain();
    out.extend_from_slice(&encode_tree_record(
        chain,
        m_at as u64,
        &stored,
        raw.len() as u64,
    ));
    let entries: Vec<swath_patch::format::Entry> = good[table_at..good.len() - 40]
        .chunks(40)
        .map(|e| {
            let v = |i: usize| u64::from_le_bytes(e[i * 8..i * 8 + 8].try_into().unwrap());
            swath_patch::format::Entry {
                new_offset: v(0),
                new_len: v(1),
                offset: v(2),
                len: v(3),
                sum: v(4),
            }
        })
        .collect();
    let at = out.len() as u64;
    out.extend_from_slice(&encode_tail(chain, &entries, at));
    out
}

#[test]
fn patch_tree_forged_manifests_are_refused_and_nothing_is_written_outside() {
    use swath_patch::manifest::{Kind, Meta, NewEntry};
    let dir = Dir::new();
    let (o, n) = (dir.path("old"), dir.path("new"));
    file(&o, "f", &bytes(2000, 6), 0o644);
    file(&n, "d/f", &bytes(2100, 6), 0o644);
    std::os::unix::fs::symlink(dir.tmp.path(), n.join("l")).unwrap();
    ok(&swath(&dir, &["patch", "make", "old", "new", "p"]));
    let good = std::fs::read(dir.path("p")).unwrap();
    // The forge itself is faithful: unchanged, the patch applies.
    dir.write("same", &forge(&good, &o, |_| {}));
    ok(&swath(&dir, &["patch", "apply", "old", "same", "out"]));
    std::fs::remove_dir_all(dir.path("out")).unwrap();
    let entry = |path: &[u8], kind: Kind| NewEntry {
        path: path.to_vec(),
        kind,
        meta: Meta {
            mode: 0o755,
            ..Meta::default()
        },
    };
    let cases: Vec<(&str, Box<Change<'_>>)> = vec![
        (
            "component",
            Box::new(|m| m.new.push(entry(b"../escaped", Kind::Dir))),
        ),
        (
            "absolute path",
            Box::new(move |m| {
                let p = dir_path_bytes();
                m.new.push(entry(&p, Kind::Dir))
            }),
        ),
        (
            "not a directory created before it",
            Box::new(|m| m.new.push(entry(b"l/escaped", Kind::Dir))),
        ),
        (
            "listed twice",
            Box::new(|m| {
                let d = m.new[0].clone();
                m.new.push(d)
            }),
        ),
        (
            "component",
            Box::new(|m| {
                // The file moved out of the tree, sizes kept.
                let i = m
                    .new
                    .iter()
                    .position(|e| matches!(e.kind, Kind::File { .. }))
                    .unwrap();
                m.new[i].path = b"d/../../escaped".to_vec();
            }),
        ),
    ];
    for (what, change) in cases {
        dir.write("forged", &forge(&good, &o, change));
        fails(
            &swath(&dir, &["patch", "apply", "old", "forged", "out"]),
            what,
        );
        assert!(!dir.path("out").exists(), "{what}");
        assert!(!dir.path("escaped").exists(), "{what}");
        assert!(!Path::new("/tmp/swath-forged-escape").exists(), "{what}");
        assert!(leftovers(dir.tmp.path()).is_empty(), "{what}");
    }
}

/// A change made to a copy of the old tree.
type Edit = dyn Fn(&Path);

/// A change a forger makes to a manifest.
type Change<'a> = dyn Fn(&mut swath_patch::manifest::Manifest) + 'a;

fn dir_path_bytes() -> Vec<u8> {
    b"/tmp/swath-forged-escape".to_vec()
}

#[test]
fn patch_tree_wrong_old_tree_non_empty_target_and_special_files() {
    let dir = Dir::new();
    let (o, n) = (dir.path("old"), dir.path("new"));
    file(&o, "d/a", &bytes(4000, 7), 0o644);
    file(&o, "b", &bytes(4000, 8), 0o644);
    file(&o, "d/e/f/g", b"g", 0o644);
    file(&n, "d/a", &bytes(4100, 7), 0o644);
    file(&n, "b", &bytes(4000, 8), 0o644);
    file(&n, "d/e/f/g", b"g", 0o644);
    ok(&swath(&dir, &["patch", "make", "old", "new", "p"]));
    let copy = |name: &str| {
        let st = Command::new("cp")
            .args(["-a", "old", name])
            .current_dir(dir.tmp.path())
            .status()
            .unwrap();
        assert!(st.success());
        dir.path(name)
    };
    // Anything else than the tree the patch was made from is refused, naming the
    // directory that differs: a file changed (same size), removed, added, resized; a
    // directory removed or added; a directory replaced by a link to an identical one (not
    // followed).
    let wrong =
        "not the tree this patch was made from (a file was added, removed, resized or changed)";
    let cases: Vec<(&str, &str, Box<Edit>)> = vec![
        (
            "changed",
            "changed",
            Box::new(|w| {
                let mut b = std::fs::read(w.join("b")).unwrap();
                b[10] ^= 1;
                std::fs::write(w.join("b"), b).unwrap();
            }),
        ),
        (
            "missing",
            "missing/d",
            Box::new(|w| std::fs::remove_file(w.join("d/a")).unwrap()),
        ),
        (
            "added",
            "added/d",
            Box::new(|w| file(w, "d/extra", b"extra", 0o644)),
        ),
        (
            "short",
            "short",
            Box::new(|w| std::fs::write(w.join("b"), b"x").unwrap()),
        ),
        (
            "deep",
            "deep/d/e/f",
            Box::new(|w| std::fs::write(w.join("d/e/f/g"), b"G").unwrap()),
        ),
        (
            "nodir",
            "nodir/d/e",
            Box::new(|w| std::fs::remove_dir_all(w.join("d/e/f")).unwrap()),
        ),
        (
            "newdir",
            "newdir/d",
            Box::new(|w| std::fs::create_dir(w.join("d/new")).unwrap()),
        ),
        (
            "linked",
            "linked",
            Box::new(|w| {
                let away = w.with_file_name("linked-away");
                std::fs::rename(w.join("d"), &away).unwrap();
                std::os::unix::fs::symlink(&away, w.join("d")).unwrap();
            }),
        ),
    ];
    for (name, culprit, change) in cases {
        let w = copy(name);
        change(&w);
        fails(
            &swath(&dir, &["patch", "apply", name, "p", "out"]),
            &format!("{culprit}: {wrong}"),
        );
        assert!(!dir.path("out").exists(), "{name}");
    }
    // Modes and times of the old tree do not matter.
    let w = copy("touched");
    std::fs::set_permissions(w.join("b"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let st = Command::new("touch")
        .args(["-d", "2001-01-01", "touched/d/a", "touched/d"])
        .current_dir(dir.tmp.path())
        .status()
        .unwrap();
    assert!(st.success());
    ok(&swath(&dir, &["patch", "apply", "touched", "p", "out"]));
    same_tree(&dir, "new", "out");
    // NEW_DIR not empty, a file, or a link to an empty directory: refused, untouched.
    fails(
        &swath(&dir, &["patch", "apply", "old", "p", "out"]),
        "out: exists and is not an empty directory",
    );
    dir.write("plain", b"plain");
    fails(
        &swath(&dir, &["patch", "apply", "old", "p", "plain"]),
        "plain: exists and is not an empty directory",
    );
    assert_eq!(std::fs::read(dir.path("plain")).unwrap(), b"plain");
    std::fs::create_dir(dir.path("empty")).unwrap();
    std::os::unix::fs::symlink("empty", dir.path("to-empty")).unwrap();
    fails(
        &swath(&dir, &["patch", "apply", "old", "p", "to-empty"]),
        "to-empty: exists and is not an empty directory",
    );
    assert!(std::fs::symlink_metadata(dir.path("to-empty"))
        .unwrap()
        .file_type()
        .is_symlink());
    // A file patch and a tree patch given the other kind of OLD.
    fails(
        &swath(&dir, &["patch", "apply", "old/b", "p", "out2"]),
        "old/b: Not a directory (p is a patch of a directory tree)",
    );
    fails(
        &swath(&dir, &["patch", "make", "old", "new/b", "p2"]),
        "old: Is a directory, and new/b is not",
    );
    // Special files are refused, named.
    let st = Command::new("mkfifo").arg(n.join("fifo")).status().unwrap();
    assert!(st.success());
    fails(
        &swath(&dir, &["patch", "make", "old", "new", "p3"]),
        "new/fifo: a FIFO: swath patch handles regular files, directories and symbolic links only",
    );
    assert!(!dir.path("p3").exists());
    assert!(leftovers(dir.tmp.path()).is_empty());
}

#[test]
fn patch_tree_full_disk_during_apply_leaves_nothing() {
    let dir = Dir::new();
    let Some(fs) = SmallFs::mount(&dir, "256k") else {
        swath_engine::testing::skip("skipped: mounting a tmpfs needs root");
        return;
    };
    let (o, n) = (dir.path("old"), dir.path("new"));
    file(&o, "a", &bytes(100_000, 9), 0o644);
    for k in 0..8 {
        file(&n, &format!("d{k}/f"), &bytes(100_000, 10 + k), 0o644);
    }
    file(&n, "a", &bytes(100_000, 9), 0o644);
    ok(&swath(&dir, &["patch", "make", "old", "new", "p"]));
    let target = fs.path.join("out");
    fails(
        &swath(
            &dir,
            &["patch", "apply", "old", "p", target.to_str().unwrap()],
        ),
        "No space left on device",
    );
    assert_eq!(std::fs::read_dir(&fs.path).unwrap().count(), 0);
}

/// Runs `swath ARGS` as nobody (uid and gid 65534) in the scratch directory.
fn as_nobody(dir: &Dir, args: &str) -> std::process::Output {
    Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "exec setpriv --reuid=65534 --regid=65534 --clear-groups \"$0\" {args}"
        ))
        .arg(swath_bin())
        .current_dir(dir.tmp.path())
        .output()
        .unwrap()
}

#[test]
fn patch_tree_permissions_as_root_and_as_nobody() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        swath_engine::testing::skip("skipped: running as nobody needs root");
        return;
    }
    let dir = Dir::new();
    let (o, n) = (dir.path("old"), dir.path("new"));
    file(&o, "ro/f", &bytes(3000, 11), 0o644);
    // Read-only files and directories, and a set-user-ID program.
    file(&n, "ro/f", &bytes(3100, 11), 0o444);
    file(&n, "ro/g", b"g", 0o400);
    file(&n, "suid", b"#!/bin/sh\n", 0o4755);
    std::fs::set_permissions(n.join("ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
    ok(&swath(&dir, &["patch", "make", "old", "new", "p"]));
    // As root: everything but the set-user-ID bit.
    ok(&swath(&dir, &["patch", "apply", "old", "p", "out"]));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&dir.path("out/suid")), 0o755);
    assert_eq!(mode(&dir.path("out/ro")), 0o555);
    assert_eq!(mode(&dir.path("out/ro/f")), 0o444);
    // As nobody, into a directory nobody may write: the read-only entries are filled
    // before their modes are set, and the set-user-ID bit (nobody's own) is kept.
    let home = dir.path("home");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(65534), Some(65534)).unwrap();
    for p in ["old", "old/ro", "old/ro/f"] {
        let m = std::fs::metadata(dir.path(p)).unwrap().permissions().mode();
        std::fs::set_permissions(dir.path(p), std::fs::Permissions::from_mode(m | 0o005)).unwrap();
    }
    std::fs::set_permissions(dir.path("p"), std::fs::Permissions::from_mode(0o644)).unwrap();
    ok(&as_nobody(&dir, "patch apply old p home/out"));
    assert_eq!(mode(&home.join("out/suid")), 0o4755);
    assert_eq!(mode(&home.join("out/ro/f")), 0o444);
    assert_eq!(std::fs::read(home.join("out/ro/g")).unwrap(), b"g");
    // An old file nobody may not read: one line, nothing made.
    std::fs::set_permissions(dir.path("old/ro/f"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let o2 = as_nobody(&dir, "patch apply old p home/out2");
    fails(&o2, "old/ro/f: Permission denied");
    assert!(!home.join("out2").exists());
    assert!(leftovers(&home).is_empty());
    // nobody may not build in a directory it cannot write.
    let o3 = as_nobody(&dir, "patch apply old p out3");
    assert_eq!(o3.status.code(), Some(2));
    assert!(!dir.path("out3").exists());
}

/// A chain of `depth` directories named `d` under `root`, made relative to descriptors (no
/// path is resolved, however deep), with `files` (level, name, bytes; level 0 is the root)
/// and `dirs` (level, name) at their levels.
fn chain(root: &Path, depth: usize, files: &[(usize, &str, Vec<u8>)], dirs: &[(usize, &str)]) {
    std::fs::create_dir_all(root).unwrap();
    let mut at = crate::util::open_dir(root);
    for level in 0..=depth {
        for (_, name, data) in files.iter().filter(|f| f.0 == level) {
            crate::util::make_at(&at, name, Some(data));
        }
        for (_, name) in dirs.iter().filter(|d| d.0 == level) {
            crate::util::make_at(&at, name, None);
        }
        if level < depth {
            at = crate::util::make_at(&at, "d", None);
        }
    }
}

/// What a chain holds, level by level: each entry's name, kind, mode and modification time,
/// a file's length and checksum; the directory `d` is followed down. Read through
/// /proc/self/fd with one directory open at a time, so at any depth.
fn chain_listing(root: &Path) -> Vec<String> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    let mut at = crate::util::open_dir(root);
    for level in 0.. {
        let here = std::path::PathBuf::from(format!("/proc/self/fd/{}", at.as_raw_fd()));
        let mut names: Vec<_> = std::fs::read_dir(&here)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        let mut next = None;
        for n in names {
            let p = here.join(&n);
            let m = std::fs::symlink_metadata(&p).unwrap();
            let what = if m.is_dir() {
                "dir".to_string()
            } else {
                let b = std::fs::read(&p).unwrap();
                let sum = b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
                    (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3)
                });
                format!("file {} {sum:x}", b.len())
            };
            out.push(format!(
                "{level} {n:?} {what} {:o} {}.{}",
                m.mode() & 0o7777,
                m.mtime(),
                m.mtime_nsec()
            ));
            if n == "d" && m.is_dir() {
                next = Some(crate::util::open_dir(&p));
            }
        }
        match next {
            Some(d) => at = d,
            None => break,
        }
    }
    out
}

/// Removes the trees `names` of the scratch directory when dropped, before the directory
/// itself (on a failed assertion too): they are too deep for a removal by path, or by
/// recursion; `rm` walks by descriptors.
struct RmRf<'a>(&'a Dir, &'a [&'a str]);

impl Drop for RmRf<'_> {
    fn drop(&mut self) {
        let _ = Command::new("rm")
            .arg("-rf")
            .args(self.1)
            .current_dir(self.0.tmp.path())
            .status();
    }
}

/// `patch make` and `patch apply` (which walks OLD_DIR as make does) of trees 1,500 and
/// 5,000 directories deep (the second past PATH_MAX): no stack overflow, and the tree
/// applied is the new tree, level by level.
#[test]
fn patch_tree_make_and_apply_trees_thousands_of_directories_deep() {
    for depth in [1500, 5000] {
        let dir = Dir::new();
        let _rm = RmRf(&dir, &["old", "new", "out"]);
        let mid = depth / 2;
        let mut bottom = bytes(5000, 3);
        bottom.splice(2000..2000, b"an insertion".iter().copied());
        chain(
            &dir.path("old"),
            depth,
            &[
                (0, "top", bytes(3000, 1)),
                (mid, "m", bytes(4000, 2)),
                (depth, "f", bytes(5000, 3)),
            ],
            &[],
        );
        chain(
            &dir.path("new"),
            depth,
            &[
                (mid, "m", bytes(4000, 2)),
                (mid, "n", bytes(2000, 4)),
                (depth, "f", bottom),
                (depth, "g", bytes(3000, 1)),
            ],
            &[(depth, "empty")],
        );
        ok(&swath(&dir, &["patch", "make", "old", "new", "p"]));
        ok(&swath(&dir, &["patch", "apply", "old", "p", "out"]));
        let want = chain_listing(&dir.path("new"));
        assert_eq!(want.len(), depth + 5, "depth {depth}");
        assert_eq!(chain_listing(&dir.path("out")), want, "depth {depth}");
        assert!(leftovers(dir.tmp.path()).is_empty());
    }
}

/// The directory digests stored in the good tree patch `good` (its old tree's, as bytes).
fn digests_of(good: &[u8]) -> Vec<u8> {
    let script = swath_patch::manifest::Script::parse(manifest_in(good).3).unwrap();
    script
        .digests()
        .iter()
        .flat_map(|d| d.to_le_bytes())
        .collect()
}

/// A raw manifest (docs/patch-format.md, "Trees") against an old tree of one file `f` of
/// `f_len` bytes: `depth` directories inserted, `a`, `a/a`, `a/a/a` and so on (each path
/// coded in a few bytes against the one before), then `f` kept, or dropped when not
/// `keep_f` (and then NEW's hash, which covers `f`, does not hold).
fn deep_manifest(depth: u64, keep_f: bool, f_len: u64, digests: &[u8]) -> Vec<u8> {
    use swath_patch::format::put_varint;
    let mut cols: [Vec<u8>; 8] = Default::default();
    let (ops, paths, modes, times) = (0, 1, 5, 6);
    let mut prev = 0u64;
    for k in 0..depth {
        put_varint(&mut cols[ops], 3); // INSERT, a directory
        put_varint(&mut cols[paths], prev);
        let rest: &[u8] = if k == 0 { b"a" } else { b"/a" };
        put_varint(&mut cols[paths], rest.len() as u64);
        cols[paths].extend_from_slice(rest);
        prev += rest.len() as u64;
        put_varint(&mut cols[modes], if k == 0 { 4 + 0o755 } else { 0 });
        if k == 0 {
            cols[times].extend_from_slice(&[8, 0, 0]);
        } else {
            put_varint(&mut cols[times], 0);
        }
    }
    if keep_f {
        put_varint(&mut cols[ops], 1 << 2); // KEEP 1
        put_varint(&mut cols[modes], 4 + 0o644);
        put_varint(&mut cols[times], 0);
    } else {
        put_varint(&mut cols[ops], 1 << 2 | 1); // DROP 1
    }
    cols[7].extend_from_slice(digests);
    let k = u64::from(keep_f);
    let mut out = vec![0xE2];
    for v in [0o755, 0, 0] {
        put_varint(&mut out, v);
    }
    for v in [1, 1, 1, depth + k, k, depth, 0, k, k * f_len, 1 - k] {
        put_varint(&mut out, v);
    }
    for c in &cols {
        put_varint(&mut out, c.len() as u64);
        out.extend_from_slice(c);
    }
    out
}

/// A tree patch whose old tree is one file `f` and whose manifest is
/// [`deep_manifest`]`(depth, keep_f)`, written at `name` in the scratch directory.
fn deep_patch(dir: &Dir, name: &str, depth: u64, keep_f: bool) -> usize {
    let f = bytes(2000, 7);
    file(&dir.path("old"), "f", &f, 0o644);
    file(&dir.path("new"), "f", &f, 0o644);
    ok(&swath(dir, &["patch", "make", "old", "new", "good"]));
    let good = std::fs::read(dir.path("good")).unwrap();
    let raw = deep_manifest(depth, keep_f, f.len() as u64, &digests_of(&good));
    let forged = forge_raw(&good, &raw);
    dir.write(name, &forged);
    forged.len()
}

/// Runs `swath ARGS` in the scratch directory under GNU time: its exit status, standard
/// error, and peak resident memory in KiB. (Not the `ru_maxrss` of a child of this test
/// process: spawned with `vfork`, a child's peak counts the whole test binary's, which it
/// shared until its exec.) `None` when /usr/bin/time is missing.
fn peak_rss(dir: &Dir, args: &[&str]) -> Option<(Option<i32>, String, u64)> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        swath_engine::testing::skip("measuring peak memory needs GNU time (/usr/bin/time)");
        return None;
    }
    let kib = dir.path("rss.txt");
    let o = Command::new(time)
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&kib)
        .arg(swath_bin())
        .args(args)
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    let peak = std::fs::read_to_string(&kib).unwrap();
    std::fs::remove_file(&kib).unwrap();
    let peak = peak.lines().last().unwrap().trim().parse().unwrap();
    Some((
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        peak,
    ))
}

/// A tree patch of about 20 KB whose manifest lists the directories `a`, `a/a`, ... 20,000
/// deep (400 MB of paths written whole): apply builds it holding no path whole, in memory
/// bounded by the manifest's size (the whole process under 64 MiB).
#[test]
fn patch_tree_a_manifest_20000_directories_deep_applies_in_memory_linear_in_its_size() {
    let dir = Dir::new();
    let _rm = RmRf(&dir, &["out"]);
    let len = deep_patch(&dir, "deep.swp", 20_000, true);
    assert!(len < 64 << 10, "{len}");
    let Some((code, stderr, kib)) = peak_rss(&dir, &["patch", "apply", "old", "deep.swp", "out"])
    else {
        return;
    };
    assert!(kib < 64 << 10, "peak resident memory {kib} KiB");
    assert_eq!(code, Some(0), "{stderr}");
    let find = Command::new("sh")
        .arg("-c")
        .arg("find out -type d | wc -l; find out -type f")
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&find.stdout), "20001\nout/f\n");
    assert!(leftovers(dir.tmp.path()).is_empty());
}

/// A tree apply that fails once its tree, 2,100 directories deep (past PATH_MAX), is built
/// (NEW's hash does not hold): the private tree is removed whole, relative to descriptors.
#[test]
fn patch_tree_a_failed_apply_of_a_tree_deeper_than_path_max_leaves_nothing() {
    let dir = Dir::new();
    deep_patch(&dir, "deep.swp", 2100, false);
    fails(
        &swath(&dir, &["patch", "apply", "old", "deep.swp", "out"]),
        "out: the rebuilt tree does not match the patch's hash",
    );
    let left = leftovers(dir.tmp.path());
    let names: Vec<&str> = left.iter().map(String::as_str).collect();
    let _rm = RmRf(&dir, &names);
    assert!(!dir.path("out").exists());
    assert!(left.is_empty(), "{left:?}");
}

/// A run of 128 MiB of zeros in a new file: the patch is a few hundred bytes, and apply
/// leaves the run as a hole, as a file's apply does, instead of writing 128 MiB.
#[test]
fn patch_tree_apply_leaves_runs_of_zeros_as_holes_as_file_apply_does() {
    use std::os::unix::fs::MetadataExt;
    let dir = Dir::new();
    file(&dir.path("old"), "z", b"0123456789", 0o644);
    file(&dir.path("new"), "x", &bytes(3000, 8), 0o644);
    let z = dir.path("new/z");
    std::fs::File::create(&z)
        .unwrap()
        .set_len(128 << 20)
        .unwrap();
    if std::fs::metadata(&z).unwrap().blocks() > 8 {
        swath_engine::testing::skip("the scratch file system does not keep holes");
        return;
    }
    ok(&swath(&dir, &["patch", "make", "old", "new", "p"]));
    assert!(std::fs::metadata(dir.path("p")).unwrap().len() < 4096);
    ok(&swath(&dir, &["patch", "apply", "old", "p", "out"]));
    let got = std::fs::metadata(dir.path("out/z")).unwrap();
    assert_eq!(got.len(), 128 << 20);
    assert!(got.blocks() * 512 < 1 << 20, "{} blocks", got.blocks());
    // A file's apply of the same run, for comparison.
    ok(&swath(&dir, &["patch", "make", "old/z", "new/z", "pz"]));
    ok(&swath(&dir, &["patch", "apply", "old/z", "pz", "z"]));
    let file_blocks = std::fs::metadata(dir.path("z")).unwrap().blocks();
    assert!(file_blocks * 512 < 1 << 20, "{file_blocks} blocks");
    let same = Command::new("cmp")
        .args(["new/z", "out/z"])
        .current_dir(dir.tmp.path())
        .status()
        .unwrap();
    assert!(same.success());
}

/// `patch apply OLD PATCH NEW` where NEW is PATCH or OLD (the same file, through a link
/// too): refused in one line naming both, status 2, nothing written (file and tree
/// patches).
#[test]
fn patch_apply_refuses_a_new_that_is_the_patch_or_old() {
    let dir = Dir::new();
    dir.write("old", &bytes(5000, 1));
    dir.write("new", &bytes(5200, 1));
    ok(&swath(&dir, &["patch", "make", "old", "new", "p"]));
    let p = std::fs::read(dir.path("p")).unwrap();
    std::os::unix::fs::symlink("p", dir.path("plink")).unwrap();
    for (new, what) in [
        (
            "p",
            "'p' and 'p' are the same file (NEW would replace PATCH)",
        ),
        (
            "plink",
            "'p' and 'plink' are the same file (NEW would replace PATCH)",
        ),
        (
            "old",
            "'old' and 'old' are the same file (NEW would replace OLD)",
        ),
    ] {
        fails(&swath(&dir, &["patch", "apply", "old", "p", new]), what);
        assert_eq!(std::fs::read(dir.path("p")).unwrap(), p, "{new}");
        assert_eq!(std::fs::read(dir.path("old")).unwrap(), bytes(5000, 1));
    }
    file(&dir.path("to"), "a", &bytes(3000, 2), 0o644);
    file(&dir.path("tn"), "a", &bytes(3100, 2), 0o644);
    std::fs::create_dir(dir.path("empty")).unwrap();
    ok(&swath(&dir, &["patch", "make", "to", "tn", "tp"]));
    ok(&swath(&dir, &["patch", "make", "empty", "tn", "tpe"]));
    let tp = std::fs::read(dir.path("tp")).unwrap();
    fails(
        &swath(&dir, &["patch", "apply", "to", "tp", "tp"]),
        "'tp' and 'tp' are the same file (NEW would replace PATCH)",
    );
    assert_eq!(std::fs::read(dir.path("tp")).unwrap(), tp);
    fails(
        &swath(&dir, &["patch", "apply", "empty", "tpe", "empty"]),
        "'empty' and 'empty' are the same file (NEW would replace OLD)",
    );
    assert_eq!(std::fs::read_dir(dir.path("empty")).unwrap().count(), 0);
    assert!(leftovers(dir.tmp.path()).is_empty());
}

/// `patch make OLD NEW PATCH` where PATCH is OLD or NEW (the same file, through a link too):
/// refused in one line naming both, status 2, OLD and NEW left as they were (the patch
/// would have replaced the file it is made from).
#[test]
fn patch_make_refuses_a_patch_that_is_old_or_new() {
    let dir = Dir::new();
    dir.write("old", &bytes(5000, 3));
    dir.write("new", &bytes(5200, 3));
    std::os::unix::fs::symlink("new", dir.path("newlink")).unwrap();
    for (patch, what) in [
        (
            "old",
            "'old' and 'old' are the same file (PATCH would replace OLD)",
        ),
        (
            "new",
            "'new' and 'new' are the same file (PATCH would replace NEW)",
        ),
        (
            "newlink",
            "'new' and 'newlink' are the same file (PATCH would replace NEW)",
        ),
    ] {
        fails(&swath(&dir, &["patch", "make", "old", "new", patch]), what);
        assert_eq!(std::fs::read(dir.path("old")).unwrap(), bytes(5000, 3));
        assert_eq!(std::fs::read(dir.path("new")).unwrap(), bytes(5200, 3));
    }
    // A tree patch written over its OLD directory is refused the same way.
    std::fs::create_dir(dir.path("to")).unwrap();
    std::fs::create_dir(dir.path("tn")).unwrap();
    fails(
        &swath(&dir, &["patch", "make", "to", "tn", "tn"]),
        "'tn' and 'tn' are the same file (PATCH would replace NEW)",
    );
    assert!(dir.path("tn").is_dir());
    assert!(leftovers(dir.tmp.path()).is_empty());
}
