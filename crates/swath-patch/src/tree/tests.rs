//! Tests of tree patches: make then apply on random trees, references to unchanged,
//! renamed and copied files, a renamed and edited file found in another old file, the
//! reader across files, packing, a tree changed while read, and a manifest claiming too
//! much.

use super::*;
use crate::apply::PatchFile;
use crate::make::tests::{edit, random};
use crate::tree_apply::apply_tree;
use proptest::prelude::*;
use std::os::unix::fs::PermissionsExt;

/// A small deterministic generator for tree shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// An entry of a tree to build: a directory, a file (bytes, mode) or a link.
#[derive(Debug, Clone)]
enum Spec {
    Dir(u32),
    File(Vec<u8>, u32),
    Link(String),
}

/// A path and what to make there.
type Planned = (String, Spec);
/// Path, kind, mode, bytes or target, modification time.
type Listed = (String, char, u32, Vec<u8>, (i64, i64));

fn build(root: &Path, entries: &[Planned], seed: u64) {
    std::fs::create_dir_all(root).unwrap();
    let mut sorted = entries.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, s) in &sorted {
        let full = root.join(p);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        match s {
            Spec::Dir(_) => std::fs::create_dir_all(&full).unwrap(),
            Spec::File(b, _) => std::fs::write(&full, b).unwrap(),
            Spec::Link(t) => std::os::unix::fs::symlink(t, &full).unwrap(),
        }
    }
    // Modes and distinct times, deepest first so directories keep theirs.
    for (k, (p, s)) in sorted.iter().enumerate().rev() {
        let full = root.join(p);
        let mode = match s {
            Spec::Dir(m) | Spec::File(_, m) => Some(*m),
            Spec::Link(_) => None,
        };
        if let Some(m) = mode {
            std::fs::set_permissions(&full, std::fs::Permissions::from_mode(m)).unwrap();
        }
        let t = libc::timespec {
            tv_sec: 1_600_000_000 + (seed % 1000) as i64 * 1000 + k as i64,
            tv_nsec: (k as i64 * 7919) % 1_000_000_000,
        };
        let c = std::ffi::CString::new(full.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path and two timespecs.
        let rc = unsafe {
            libc::utimensat(
                libc::AT_FDCWD,
                c.as_ptr(),
                [t, t].as_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        assert_eq!(rc, 0);
    }
}

/// A pair of trees drawn from `seed`: files kept, modified by edit scripts, deleted,
/// renamed, moved between directories, copied; new files; empty files and directories;
/// links; a file that became a directory and a directory that became a file; modes.
fn pair(seed: u64) -> (Vec<Planned>, Vec<Planned>) {
    let mut r = Rng(seed | 1);
    let names = [
        "a", "b", "c.txt", "d0/x", "d0/y", "d0/e/z", "d1/w", "d1/v", "f2d", "d2f/in",
    ];
    let modes = [0o644, 0o600, 0o755, 0o444];
    let mut old = Vec::new();
    for n in names {
        if r.below(10) < 8 || n == "f2d" || n == "d2f/in" {
            let len = if r.below(6) == 0 {
                0
            } else {
                r.below(12_000) as usize
            };
            let alphabet = if r.below(2) == 0 { 8 } else { 256 };
            old.push((
                n.to_string(),
                Spec::File(random(len, r.next(), alphabet), 0o644),
            ));
        }
    }
    old.push(("old-empty".into(), Spec::Dir(0o755)));
    old.push(("ln".into(), Spec::Link("a".into())));
    let mut new = Vec::new();
    for (n, s) in &old {
        let Spec::File(b, _) = s else { continue };
        if n == "f2d" {
            new.push(("f2d/inner".to_string(), Spec::File(b.clone(), 0o644)));
            continue;
        }
        if n == "d2f/in" {
            new.push(("d2f".to_string(), Spec::File(b.clone(), 0o600)));
            continue;
        }
        let mode = modes[r.below(4) as usize];
        match r.below(7) {
            0 => new.push((n.clone(), Spec::File(b.clone(), 0o644))),
            1 | 2 => {
                let edits: Vec<(u8, usize, usize, u8)> = (0..1 + r.below(4))
                    .map(|_| {
                        (
                            r.below(6) as u8,
                            r.next() as usize,
                            r.below(3000) as usize,
                            r.next() as u8,
                        )
                    })
                    .collect();
                new.push((n.clone(), Spec::File(edit(b, &edits), mode)));
            }
            3 => {} // deleted
            4 => new.push((
                format!("moved/{}", n.replace('/', "-")),
                Spec::File(b.clone(), mode),
            )),
            5 => {
                new.push((n.clone(), Spec::File(b.clone(), mode)));
                new.push((
                    format!("d1/copy-{}", n.replace('/', "-")),
                    Spec::File(b.clone(), 0o644),
                ));
            }
            _ => new.push((n.clone(), Spec::File(b.clone(), mode))),
        }
    }
    for k in 0..r.below(3) {
        let len = r.below(9000) as usize;
        new.push((
            format!("d0/new{k}"),
            Spec::File(random(len, r.next(), 8), 0o644),
        ));
    }
    new.push(("d0/empty-file".into(), Spec::File(Vec::new(), 0o600)));
    new.push(("new-empty".into(), Spec::Dir(0o700)));
    new.push(("d1".into(), Spec::Dir(0o750)));
    new.push(("d1/link".into(), Spec::Link("../nowhere/at all".into())));
    new.push(("abs-link".into(), Spec::Link("/etc/passwd".into())));
    (old, new)
}

/// `root/rel` as a path (the test trees are shallow).
fn join(root: &Path, rel: &[u8]) -> std::path::PathBuf {
    root.join(std::ffi::OsStr::from_bytes(rel))
}

/// What a tree holds, for comparison: (path, kind, mode, bytes or target, time).
fn listing(root: &Path) -> Vec<Listed> {
    let (rm, walked) = walk(root, "t").unwrap();
    let mut out = vec![(
        String::new(),
        'd',
        rm.meta.mode,
        Vec::new(),
        (rm.meta.mtime, i64::from(rm.meta.mtime_nsec)),
    )];
    for w in walked {
        let full = join(root, &w.path);
        let m = std::fs::symlink_metadata(&full).unwrap();
        let (kind, data) = match &w.kind {
            WalkedKind::Dir => ('d', Vec::new()),
            WalkedKind::File(_) => ('f', std::fs::read(&full).unwrap()),
            WalkedKind::Link(t) => ('l', t.clone()),
        };
        let mode = if kind == 'l' { 0 } else { m.mode() & 0o7777 };
        out.push((
            String::from_utf8_lossy(&w.path).into_owned(),
            kind,
            mode,
            data,
            (m.mtime(), m.mtime_nsec()),
        ));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn apply_of_make_is_the_new_tree(
        seed in any::<u64>(),
        level in 0u32..3,
        chunk in prop_oneof![Just(64u32), Just(256), Just(1024)],
        threads in 1usize..4,
        section_len in prop_oneof![Just(4096u64), Just(10_000), Just(1 << 20)],
    ) {
        let (old, new) = pair(seed);
        let dir = tempfile::tempdir().unwrap();
        let (o, n, p, out) = (dir.path().join("old"), dir.path().join("new"), dir.path().join("p"), dir.path().join("out"));
        build(&o, &old, seed);
        build(&n, &new, seed / 3);
        let opts = TreeOptions {
            make: MakeOptions {
                level: Level::from_code(level).unwrap(),
                chunk_avg: chunk,
                threads,
                io_chunk: 1 << 16,
                section_len,
                format: Format::Swath,
                io_threads: 0,
                tuning: Default::default(),
            },
            memory: 1 << 30,
            io_readers: 2,
        };
        let made = make_tree(&o, &n, Some(&p), &opts, None).unwrap();
        prop_assert_eq!(made.patch_len, std::fs::metadata(&p).unwrap().len());
        let c = &made.census;
        prop_assert_eq!(c.copied_bytes + c.delta_bytes + c.zero_bytes + c.literal_bytes, made.new_len);
        let dry = make_tree(&o, &n, None, &opts, None).unwrap();
        prop_assert_eq!(dry.patch_len, made.patch_len);
        let patch = PatchFile::open(&p).unwrap();
        prop_assert!(patch.is_tree());
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| apply_tree(&o, &patch, &out, None)).unwrap();
        let (want, got) = (listing(&n), listing(&out));
        // As root, set-user-ID bits are not restored (none are drawn here).
        prop_assert_eq!(got, want);
    }
}

#[test]
fn unchanged_renamed_and_copied_files_are_references_and_cost_no_sections() {
    let dir = tempfile::tempdir().unwrap();
    let (o, n, p) = (
        dir.path().join("o"),
        dir.path().join("n"),
        dir.path().join("p"),
    );
    let big = random(300_000, 9, 256);
    let small = random(5000, 10, 256);
    build(
        &o,
        &[
            ("big".into(), Spec::File(big.clone(), 0o644)),
            ("s/small".into(), Spec::File(small.clone(), 0o644)),
        ],
        1,
    );
    build(
        &n,
        &[
            ("big".into(), Spec::File(big.clone(), 0o644)),
            ("t/renamed".into(), Spec::File(small.clone(), 0o644)),
            ("t/copy".into(), Spec::File(small, 0o644)),
        ],
        1,
    );
    let made = make_tree(&o, &n, Some(&p), &TreeOptions::default(), None).unwrap();
    assert_eq!(made.identical_files, 3);
    assert_eq!(made.new_len, 0);
    assert_eq!(made.sections, 0);
    assert_eq!(made.deleted_files, 1);
    assert!(made.patch_len < 400, "{}", made.patch_len);
}

#[test]
fn a_renamed_and_edited_file_is_found_in_another_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let (o, n) = (dir.path().join("o"), dir.path().join("n"));
    let body = random(200_000, 3, 256);
    build(&o, &[("a/one".into(), Spec::File(body.clone(), 0o644))], 1);
    let moved = edit(&body, &[(0, 100_000, 50, 7)]);
    build(&n, &[("b/two".into(), Spec::File(moved.clone(), 0o644))], 1);
    let opts = TreeOptions::default();
    let made = make_tree(&o, &n, None, &opts, None).unwrap();
    assert!(made.census.literal_bytes <= 50, "{:?}", made.census);
    assert!(made.patch_len < 1000, "{}", made.patch_len);
}

#[test]
fn the_reader_reads_across_files_and_empty_ones() {
    let dir = tempfile::tempdir().unwrap();
    let parts: [&[u8]; 4] = [b"abc", b"", b"defgh", b"ij"];
    let mut files = Vec::new();
    for (k, b) in parts.iter().enumerate() {
        let name = format!("f{k}");
        std::fs::write(dir.path().join(&name), b).unwrap();
        files.push(TreeFile {
            path: name.into_bytes(),
            len: b.len() as u64,
            id: None,
        });
    }
    let r = TreeReader::new(Dir::open_to_list(dir.path()).unwrap(), "t", files);
    let all = b"abcdefghij";
    for at in 0..=all.len() {
        for n in 0..=all.len() - at {
            let mut buf = vec![0u8; n];
            r.read_exact_at(&mut buf, at as u64).unwrap();
            assert_eq!(&buf[..], &all[at..at + n]);
        }
    }
    let mut buf = [0u8; 2];
    assert!(r.read_exact_at(&mut buf, 9).is_err());
}

#[test]
fn packing_keeps_small_files_whole_and_large_ones_apart() {
    let cuts = pack(&[3, 0, 4, 10, 2, 2, 5], 5);
    let got: Vec<(u64, u64)> = cuts.iter().map(|c| (c.offset, c.len)).collect();
    assert_eq!(got, vec![(0, 3), (3, 4), (7, 5), (12, 5), (17, 4), (21, 5)]);
}

#[test]
fn a_tree_that_changed_while_read_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    build(
        &t,
        &[
            ("d/f".into(), Spec::File(b"0123456789".to_vec(), 0o644)),
            ("g".into(), Spec::File(b"abc".to_vec(), 0o644)),
        ],
        1,
    );
    let walked = || {
        let (top, w) = walk(&t, "t").unwrap();
        (top.stamp, w)
    };
    let root_fd = Dir::open_to_list(&t).unwrap();
    let (root, w) = walked();
    check_unchanged(&root_fd, "t", root, &w).unwrap();
    // Rewritten in place, same length: its times moved.
    std::fs::write(t.join("d/f"), b"9876543210").unwrap();
    let e = check_unchanged(&root_fd, "t", root, &w)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t/d/f: file changed as we read it"), "{e}");
    // Grown.
    let (root, w) = walked();
    std::fs::write(t.join("g"), b"abcd").unwrap();
    let e = check_unchanged(&root_fd, "t", root, &w)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("t/g: file changed size while being read (was 3 bytes, now 4)"),
        "{e}"
    );
    // A file added to a directory.
    let (root, w) = walked();
    std::fs::write(t.join("d/new"), b"x").unwrap();
    let e = check_unchanged(&root_fd, "t", root, &w)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t/d: file changed as we read it"), "{e}");
    // A file removed.
    let (root, w) = walked();
    std::fs::remove_file(t.join("g")).unwrap();
    let e = check_unchanged(&root_fd, "t", root, &w)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t: ") || e.starts_with("t/g: "), "{e}");
    // And through make: an old file replaced (another inode, as an editor saves it)
    // between the walk and the read is refused when opened.
    let (_, w) = walked();
    let r = TreeReader::new(Dir::open_to_list(&t).unwrap(), "t", files_of(&w));
    std::fs::write(t.join("d/f.new"), b"0123456789").unwrap();
    std::fs::rename(t.join("d/f.new"), t.join("d/f")).unwrap();
    let e = tree_error("t", r.open(0).unwrap_err()).to_string();
    assert!(e.starts_with("t/d/f: file changed as we read it"), "{e}");
}

#[test]
fn a_manifest_claiming_more_than_the_limit_is_refused_before_decoding() {
    use crate::format::{decode_tree_record, encode_tree_record, TREE_RECORD_LEN};
    let dir = tempfile::tempdir().unwrap();
    let (o, n, p) = (
        dir.path().join("o"),
        dir.path().join("n"),
        dir.path().join("p"),
    );
    build(
        &o,
        &[("a".into(), Spec::File(random(3000, 1, 8), 0o644))],
        1,
    );
    build(
        &n,
        &[("a".into(), Spec::File(random(3100, 1, 8), 0o644))],
        1,
    );
    make_tree(&o, &n, Some(&p), &TreeOptions::default(), None).unwrap();
    let mut b = std::fs::read(&p).unwrap();
    let (h, _) = Header::decode_flags(&b[..HEADER_LEN]).unwrap();
    let f = b.len() - 40;
    let table_at = u64::from_le_bytes(b[f..f + 8].try_into().unwrap()) as usize;
    let r = table_at - TREE_RECORD_LEN;
    let at = decode_tree_record(&h, &b[r..table_at], table_at as u64).unwrap();
    let stored = b[at.offset as usize..r].to_vec();
    let forged = encode_tree_record(
        h.chain(),
        at.offset,
        &stored,
        crate::apply::MAX_MANIFEST + 1,
    );
    b[r..table_at].copy_from_slice(&forged);
    std::fs::write(&p, &b).unwrap();
    let patch = PatchFile::open(&p).unwrap();
    let e = patch.manifest().unwrap_err().to_string();
    assert!(e.contains("this swath reads at most"), "{e}");
}
