//! Tests of the manifest: round trips, the tree held as parents and names, an unchanged
//! tree's cost, the walk order, the differing directory, and forged paths, counts and runs
//! refused.

use super::*;

fn m(mode: u32, mtime: i64) -> Meta {
    Meta {
        mode,
        mtime,
        mtime_nsec: 5,
    }
}

fn old_tree() -> Vec<OldEntry> {
    let e = |p: &[u8], kind| OldEntry {
        path: p.to_vec(),
        kind,
    };
    vec![
        e(b"a", OldKind::Dir),
        e(b"a/l", OldKind::Link(b"x".to_vec())),
        e(b"a/x", OldKind::File(10)),
        e(b"a/y", OldKind::File(0)),
        e(b"b", OldKind::File(7)),
        e(b"gone", OldKind::Dir),
        e(b"gone/f", OldKind::File(3)),
    ]
}

fn sample() -> Manifest {
    Manifest {
        root: m(0o755, 1_700_000_000),
        old: old_tree(),
        new: vec![
            NewEntry {
                path: b"a".to_vec(),
                kind: Kind::Dir,
                meta: m(0o700, 1_600_000_000),
            },
            NewEntry {
                path: b"a/l".to_vec(),
                kind: Kind::Link {
                    target: b"../b".to_vec(),
                },
                // A link's mode is not recorded (apply does not set it).
                meta: m(0, -5),
            },
            NewEntry {
                path: b"a/x".to_vec(),
                kind: Kind::File {
                    len: 10,
                    source: Source::Old(0),
                },
                meta: m(0o644, 1_700_000_001),
            },
            NewEntry {
                path: b"a/y".to_vec(),
                kind: Kind::File {
                    len: 12,
                    source: Source::Sections,
                },
                meta: m(0o644, 1_700_000_001),
            },
            NewEntry {
                path: b"a/z".to_vec(),
                kind: Kind::File {
                    len: 7,
                    source: Source::Old(2),
                },
                meta: m(0o600, 1_700_000_001),
            },
            NewEntry {
                path: b"c".to_vec(),
                kind: Kind::File {
                    len: 30,
                    source: Source::Sections,
                },
                meta: m(0o4755, 0),
            },
        ],
    }
}

fn digests() -> Vec<u16> {
    dir_digests(&old_tree(), &[1, 2, 3, 4])
}

fn round(m: &Manifest, new_len: u64) -> Result<Manifest, Invalid> {
    Script::parse(m.encode(&digests()))?.resolve(&m.old, new_len)
}

#[test]
fn round_trips() {
    let m = sample();
    assert_eq!(round(&m, 42).unwrap(), m);
    let s = Script::parse(m.encode(&digests())).unwrap();
    assert_eq!(s.digests(), digests());
    assert_eq!(s.summary.deleted_files, 2);
    assert_eq!(s.summary.whole_files, 2);
    assert_eq!(s.summary.old_dirs, 3);
    // Sizes that disagree with the header's.
    assert!(round(&m, 43).is_err());
    // Every truncation is refused.
    let b = m.encode(&digests());
    for n in 0..b.len() {
        let r = Script::parse(b[..n].to_vec()).and_then(|s| s.resolve(&m.old, 42));
        assert!(r.is_err(), "cut at {n}");
    }
    // Another old tree: refused, whatever differs.
    let mut other = m.old.clone();
    other.pop();
    assert!(Script::parse(b.clone())
        .unwrap()
        .resolve(&other, 42)
        .is_err());
}

/// Apply's tree holds each entry as its parent and name: the paths made from them are
/// the manifest's.
#[test]
fn the_tree_holds_parents_and_names_not_paths() {
    let m = sample();
    let t = Script::parse(m.encode(&digests()))
        .unwrap()
        .resolve_tree(&m.old, 42)
        .unwrap();
    assert_eq!(t.len(), m.new.len());
    for (i, e) in m.new.iter().enumerate() {
        assert_eq!(t.path(i), e.path);
        assert_eq!(t.node(i).kind, e.kind);
        assert_eq!(
            t.depth(i),
            1 + e.path.iter().filter(|&&b| b == b'/').count()
        );
        assert_eq!(t.name(i), last_name(&e.path));
    }
    assert_eq!(t.parent(1), Some(0));
    assert_eq!(t.parent(5), None);
}

#[test]
fn an_unchanged_tree_costs_a_few_bytes() {
    let old: Vec<OldEntry> = (0..1000)
        .map(|k| OldEntry {
            path: format!("f{k:04}").into_bytes(),
            kind: OldKind::File(100 + k),
        })
        .collect();
    let m = Manifest {
        root: m(0o755, 9),
        new: old
            .iter()
            .enumerate()
            .map(|(k, e)| NewEntry {
                path: e.path.clone(),
                kind: Kind::File {
                    len: 100 + k as u64,
                    source: Source::Old(k),
                },
                meta: m(if k % 10 == 0 { 0o755 } else { 0o644 }, 1_000),
            })
            .collect(),
        old,
    };
    let raw = m.encode(&[7]);
    let again = Script::parse(raw.clone())
        .unwrap()
        .resolve(&m.old, 0)
        .unwrap();
    assert_eq!(again, m);
    let z = zstd::bulk::compress(&raw, 19).unwrap();
    assert!(z.len() < 120, "{} raw, {} stored", raw.len(), z.len());
}

#[test]
fn walk_order_is_by_component() {
    let mut v: Vec<&[u8]> = vec![b"a-b", b"a/x", b"a", b"a/x/y", b"b", b"a.c"];
    v.sort_by(|a, b| walk_order(a, b));
    assert_eq!(v, vec![&b"a"[..], b"a/x", b"a/x/y", b"a-b", b"a.c", b"b"]);
}

#[test]
fn the_differing_directory_is_found() {
    let old = old_tree();
    let h = [1u128, 2, 3, 4];
    let stored = dir_digests(&old, &h);
    assert_eq!(differing_dir(&old, &h, &stored), None);
    // A file's content changed in a.
    assert_eq!(differing_dir(&old, &[1, 9, 3, 4], &stored), Some(&b"a"[..]));
    // A file added to gone.
    let mut more = old.clone();
    more.push(OldEntry {
        path: b"gone/g".to_vec(),
        kind: OldKind::File(1),
    });
    assert_eq!(
        differing_dir(&more, &[1, 2, 3, 4, 5], &stored),
        Some(&b"gone"[..])
    );
    // A directory removed: its parent, the root, differs first.
    let fewer: Vec<OldEntry> = old[..5].to_vec();
    assert_eq!(differing_dir(&fewer, &h[..3], &stored), Some(&b""[..]));
    // The hash sees names, lengths and contents.
    let base = old_hash(&old, &h);
    assert_ne!(old_hash(&old, &[1, 2, 3, 5]), base);
    let mut renamed = old.clone();
    renamed[4].path = b"c".to_vec();
    assert_ne!(old_hash(&renamed, &h), base);
}

fn refused(mm: &Manifest, what: &str) {
    let new: u64 = mm
        .new
        .iter()
        .map(|e| match e.kind {
            Kind::File {
                len,
                source: Source::Sections,
            } => len,
            _ => 0,
        })
        .sum();
    let err = round(mm, new).unwrap_err().0;
    assert!(err.contains(what), "wanted {what:?} in {err:?}");
}

#[test]
fn forged_paths_are_refused() {
    for (path, what) in [
        (&b"../etc"[..], "component"),
        (b"/etc/passwd", "absolute"),
        (b"a/../../x", "component"),
        (b"a/./x", "component"),
        (b"a//x", "component"),
        (b"a/", "component"),
        (b"", "empty path"),
        (b"a/x\0y", "NUL"),
        // Through the link the patch makes: its parent is not a directory.
        (b"a/l/passwd", "not a directory"),
        // A parent never created.
        (b"zz/x", "not a directory"),
        // A name no file system takes.
        (&[b'n'; 256], "longer than 255 bytes"),
    ] {
        let mut mm = sample();
        mm.new.push(NewEntry {
            path: path.to_vec(),
            kind: Kind::Dir,
            meta: Meta::default(),
        });
        refused(&mm, what);
    }
    let mut mm = sample();
    mm.new.push(mm.new[1].clone());
    refused(&mm, "listed twice");
    // A parent created after its child.
    let mut mm = sample();
    mm.new.swap(0, 2);
    refused(&mm, "not a directory");
    // A kept entry whose directory the script drops.
    let mut mm = sample();
    mm.new.remove(0);
    refused(&mm, "not a directory");
    // A reference to an old file that is not there.
    let mut mm = sample();
    mm.new[4].kind = Kind::File {
        len: 10,
        source: Source::Old(7),
    };
    refused(&mm, "old file that is not there");
    let mut mm = sample();
    mm.new[0].meta.mode = 0o10000;
    refused(&mm, "beyond 0o7777");
}

#[test]
fn forged_counts_and_runs_are_refused() {
    let mm = sample();
    let good = mm.encode(&digests());
    let s = Script::parse(good.clone()).unwrap();
    // A summary claiming other counts.
    let mut forged = s.clone();
    forged.summary.whole_bytes += 1;
    assert!(forged.resolve(&mm.old, 42).is_err());
    let mut forged = s.clone();
    forged.summary.new_entries = u64::MAX;
    assert!(forged.resolve(&mm.old, 42).is_err());
    // A run past the old tree's end: the first op is a keep run of 1; make it 2^40.
    let (a, _) = s.cols[C_OPS];
    let mut b = good.clone();
    assert_eq!(b[a], (1 << 2) as u8);
    let mut huge = Vec::new();
    put_varint(&mut huge, (1u64 << 40) << 2);
    b.splice(a..a + 1, huge.iter().copied());
    // The column's length grew by the varint's extra bytes: the length before it.
    let r = Script::parse(b);
    assert!(r.is_err() || r.unwrap().resolve(&mm.old, 42).is_err());
}
