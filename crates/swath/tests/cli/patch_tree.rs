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
    use swath_patch::format::{encode_tail, encode_tree_record, Header, TREE_RECORD_LEN};
    let (h, _) = Header::decode_flags(&good[..128]).unwrap();
    let f = &good[good.len() - 40..];
    let table_at = u64::from_le_bytes(f[..8].try_into().unwrap()) as usize;
    let rec = &good[table_at - TREE_RECORD_LEN..table_at];
    let m_at = u64::from_le_bytes(rec[..8].try_into().unwrap()) as usize;
    let raw = zstd::bulk::decompress(&good[m_at..table_at - TREE_RECORD_LEN], 1 << 20).unwrap();
    let script = swath_patch::manifest::Script::parse(raw).unwrap();
    let (_, walked) = swath_patch::tree::walk(old, "old").unwrap();
    let old_entries = swath_patch::tree::old_entries_of(&walked);
    let mut m = script.resolve(&old_entries, h.new_len).unwrap();
    change(&mut m);
    let raw = m.encode(&script.digests());
    let stored = zstd::bulk::compress(&raw, 3).unwrap();
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
