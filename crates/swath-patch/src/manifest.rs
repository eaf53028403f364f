//! A tree patch's manifest: the old files it reads, and every entry of the new tree.
//!
//! The manifest is what a tree patch says about paths, so `apply` treats it as hostile
//! input: [`Manifest::decode`] refuses, in one line, any path that is absolute, empty, has
//! an empty, `.` or `..` component or a NUL byte, any duplicate, any new entry whose parent
//! is not a directory entry created before it (so no path leads through a link the patch
//! makes, or out of the tree), unknown kinds, modes beyond `0o7777`, a reference to an old
//! file that does not exist or has another length, and sizes that disagree with the
//! header's. Its encoding (raw, before zstd) is in docs/patch-format.md, "Trees".
//!
//! Files' contents are not in the manifest: a new file is either the next bytes of NEW
//! (the sections), or a whole old file (an unchanged, renamed or copied file whose length
//! and hash equal an old file's). Per-file hashes are not stored either: OLD's hash in the
//! header is the hash of the old files' hashes in manifest order, NEW's the hash of the new
//! files', and apply checks both (16 bytes per file would be 700 KB for a 44,000-file
//! tree, as large as a whole release's patch).

use std::collections::HashSet;

use crate::format::{get_varint, put_varint, Invalid};

/// Permission bits and modification time of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Meta {
    /// `mode & 0o7777`.
    pub mode: u32,
    /// Seconds since the epoch.
    pub mtime: i64,
    /// Nanoseconds (below 10^9).
    pub mtime_nsec: u32,
}

/// An old regular file: its path and length (its bytes are the next `len` of OLD).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OldFile {
    /// Path relative to the old tree's root (raw bytes).
    pub path: Vec<u8>,
    /// Length.
    pub len: u64,
}

/// Where a new file's bytes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The next `len` bytes of NEW, made by the sections.
    Sections,
    /// The whole old file of this index (same length and hash).
    Old(usize),
}

/// What a new entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File {
        /// Its length.
        len: u64,
        /// Where its bytes come from.
        source: Source,
    },
    /// A symbolic link (never followed by swath).
    Link {
        /// The link's target, as bytes.
        target: Vec<u8>,
    },
}

/// An entry of the new tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry {
    /// Path relative to the new tree's root (raw bytes).
    pub path: Vec<u8>,
    /// What it is.
    pub kind: Kind,
    /// Mode and time (a link's mode is not restored).
    pub meta: Meta,
}

/// A tree patch's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    /// The new tree's root directory's mode and time.
    pub root: Meta,
    /// The old regular files, in OLD's order.
    pub old: Vec<OldFile>,
    /// The new tree's entries in creation order (a directory before what it holds).
    pub new: Vec<NewEntry>,
}

const KIND_DIR: u8 = 0;
/// A file made by the sections.
const KIND_FILE: u8 = 1;
const KIND_LINK: u8 = 2;
/// A whole old file at the same path: no path, no length (the old file's).
const KIND_SAME: u8 = 3;
/// A whole old file at another path.
const KIND_WHOLE: u8 = 4;

/// A reference to old file `k`: zigzag of its distance from the one after the previous
/// reference (mostly 0: unchanged files come in order).
fn put_ref(out: &mut Vec<u8>, expect: &mut usize, k: usize) {
    put_varint(out, zigzag((k as i64).wrapping_sub(*expect as i64)));
    *expect = k + 1;
}

fn get_ref(b: &[u8], at: &mut usize, expect: &mut usize) -> Result<usize, Invalid> {
    let k = (*expect as i64).wrapping_add(unzigzag(get_varint(b, at)?));
    let Ok(k) = usize::try_from(k) else {
        return bad("a file refers to an old file that is not there");
    };
    *expect = k.wrapping_add(1);
    Ok(k)
}

fn bad<T>(what: impl Into<String>) -> Result<T, Invalid> {
    Err(Invalid(format!(
        "damaged or forged manifest: {}",
        what.into()
    )))
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A path as the previous one's shared prefix length, then the rest.
fn put_path(out: &mut Vec<u8>, prev: &[u8], path: &[u8]) {
    let shared = prev.iter().zip(path).take_while(|(a, b)| a == b).count();
    put_varint(out, shared as u64);
    put_varint(out, (path.len() - shared) as u64);
    out.extend_from_slice(&path[shared..]);
}

fn get_bytes<'a>(b: &'a [u8], at: &mut usize) -> Result<&'a [u8], Invalid> {
    let n = get_varint(b, at)?;
    if n > (b.len() - *at) as u64 {
        return bad("a name runs past the end");
    }
    let s = &b[*at..*at + n as usize];
    *at += n as usize;
    Ok(s)
}

fn get_path(b: &[u8], at: &mut usize, prev: &[u8]) -> Result<Vec<u8>, Invalid> {
    let shared = get_varint(b, at)?;
    if shared > prev.len() as u64 {
        return bad("a path shares more than the previous one has");
    }
    let mut p = prev[..shared as usize].to_vec();
    p.extend_from_slice(get_bytes(b, at)?);
    Ok(p)
}

fn put_meta(out: &mut Vec<u8>, prev_mtime: &mut i64, m: &Meta) {
    put_varint(out, u64::from(m.mode));
    put_varint(out, zigzag(m.mtime.wrapping_sub(*prev_mtime)));
    put_varint(out, u64::from(m.mtime_nsec));
    *prev_mtime = m.mtime;
}

fn get_meta(b: &[u8], at: &mut usize, prev_mtime: &mut i64) -> Result<Meta, Invalid> {
    let mode = get_varint(b, at)?;
    if mode > 0o7777 {
        return bad("a mode has bits beyond 0o7777");
    }
    let mtime = prev_mtime.wrapping_add(unzigzag(get_varint(b, at)?));
    let nsec = get_varint(b, at)?;
    if nsec >= 1_000_000_000 {
        return bad("a time has more than a second of nanoseconds");
    }
    *prev_mtime = mtime;
    Ok(Meta {
        mode: mode as u32,
        mtime,
        mtime_nsec: nsec as u32,
    })
}

/// Checks one relative path: not empty, not absolute, no empty, `.` or `..` component, no
/// NUL byte.
pub fn check_path(p: &[u8]) -> Result<(), Invalid> {
    let shown = || String::from_utf8_lossy(p).into_owned();
    if p.is_empty() {
        return bad("an empty path");
    }
    if p[0] == b'/' {
        return bad(format!("an absolute path {:?}", shown()));
    }
    if p.contains(&0) {
        return bad(format!("a NUL byte in the path {:?}", shown()));
    }
    for c in p.split(|&b| b == b'/') {
        if c.is_empty() || c == b"." || c == b".." {
            return bad(format!(
                "the path {:?} has an empty, '.' or '..' component",
                shown()
            ));
        }
    }
    Ok(())
}

/// The directory part of a path (empty for an entry of the root).
pub fn parent(p: &[u8]) -> &[u8] {
    match p.iter().rposition(|&b| b == b'/') {
        Some(i) => &p[..i],
        None => &[],
    }
}

impl Manifest {
    /// The raw encoding (docs/patch-format.md, "Trees").
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut prev_mtime = 0i64;
        put_meta(&mut out, &mut prev_mtime, &self.root);
        put_varint(&mut out, self.old.len() as u64);
        let mut prev: &[u8] = &[];
        for f in &self.old {
            put_path(&mut out, prev, &f.path);
            put_varint(&mut out, f.len);
            prev = &f.path;
        }
        put_varint(&mut out, self.new.len() as u64);
        let mut prev: &[u8] = &[];
        let mut expect = 0usize;
        for e in &self.new {
            match &e.kind {
                Kind::File {
                    source: Source::Old(k),
                    ..
                } if self.old.get(*k).is_some_and(|o| o.path == e.path) => {
                    out.push(KIND_SAME);
                    put_ref(&mut out, &mut expect, *k);
                }
                kind => {
                    out.push(match kind {
                        Kind::Dir => KIND_DIR,
                        Kind::File {
                            source: Source::Sections,
                            ..
                        } => KIND_FILE,
                        Kind::File { .. } => KIND_WHOLE,
                        Kind::Link { .. } => KIND_LINK,
                    });
                    put_path(&mut out, prev, &e.path);
                    match kind {
                        Kind::Dir => {}
                        Kind::File {
                            len,
                            source: Source::Sections,
                        } => put_varint(&mut out, *len),
                        Kind::File {
                            source: Source::Old(k),
                            ..
                        } => put_ref(&mut out, &mut expect, *k),
                        Kind::Link { target } => {
                            put_varint(&mut out, target.len() as u64);
                            out.extend_from_slice(target);
                        }
                    }
                }
            }
            prev = &e.path;
            put_meta(&mut out, &mut prev_mtime, &e.meta);
        }
        out
    }

    /// Decodes and checks a manifest: every path and parent, no duplicates, references to
    /// old files that exist with the same length, OLD's files adding up to `old_len` and
    /// the new files made by sections to `new_len` (the header's sizes).
    pub fn decode(b: &[u8], old_len: u64, new_len: u64) -> Result<Manifest, Invalid> {
        let mut at = 0usize;
        let mut prev_mtime = 0i64;
        let root = get_meta(b, &mut at, &mut prev_mtime)?;
        // Each entry takes at least three bytes: counts beyond that are forged.
        let count = |at: &mut usize| -> Result<usize, Invalid> {
            let n = get_varint(b, at)?;
            if n > (b.len() - *at) as u64 / 3 {
                return bad("more entries than its bytes can hold");
            }
            Ok(n as usize)
        };
        let n_old = count(&mut at)?;
        let mut old = Vec::with_capacity(n_old);
        let mut seen: HashSet<Vec<u8>> = HashSet::with_capacity(n_old);
        let mut total = 0u64;
        let mut prev = Vec::new();
        for _ in 0..n_old {
            let path = get_path(b, &mut at, &prev)?;
            check_path(&path)?;
            let len = get_varint(b, &mut at)?;
            total = total
                .checked_add(len)
                .ok_or_else(|| Invalid("damaged or forged manifest: sizes overflow".into()))?;
            if !seen.insert(path.clone()) {
                return bad(format!(
                    "the old file {:?} is listed twice",
                    String::from_utf8_lossy(&path)
                ));
            }
            prev.clone_from(&path);
            old.push(OldFile { path, len });
        }
        if total != old_len {
            return bad("the old files do not add up to OLD's length in the header");
        }
        let n_new = count(&mut at)?;
        let mut new = Vec::with_capacity(n_new);
        let mut dirs: HashSet<Vec<u8>> = HashSet::new();
        seen.clear();
        let mut made = 0u64;
        prev.clear();
        let mut expect = 0usize;
        for _ in 0..n_new {
            let Some(&k) = b.get(at) else {
                return bad("an entry is cut short");
            };
            at += 1;
            let mut old_file = |at: &mut usize| -> Result<(usize, &OldFile), Invalid> {
                let i = get_ref(b, at, &mut expect)?;
                match old.get(i) {
                    Some(o) => Ok((i, o)),
                    None => bad("a file refers to an old file that is not there"),
                }
            };
            let (path, kind) = if k == KIND_SAME {
                let (i, o) = old_file(&mut at)?;
                let kind = Kind::File {
                    len: o.len,
                    source: Source::Old(i),
                };
                (o.path.clone(), kind)
            } else {
                let path = get_path(b, &mut at, &prev)?;
                let kind = match k {
                    KIND_DIR => Kind::Dir,
                    KIND_FILE => {
                        let len = get_varint(b, &mut at)?;
                        made = made.checked_add(len).ok_or_else(|| {
                            Invalid("damaged or forged manifest: sizes overflow".into())
                        })?;
                        Kind::File {
                            len,
                            source: Source::Sections,
                        }
                    }
                    KIND_WHOLE => {
                        let (i, o) = old_file(&mut at)?;
                        Kind::File {
                            len: o.len,
                            source: Source::Old(i),
                        }
                    }
                    KIND_LINK => {
                        let target = get_bytes(b, &mut at)?.to_vec();
                        if target.is_empty() || target.contains(&0) {
                            return bad(format!(
                                "the link {:?} has an invalid target",
                                String::from_utf8_lossy(&path)
                            ));
                        }
                        Kind::Link { target }
                    }
                    _ => {
                        return bad(format!(
                            "{:?} is of an unknown kind",
                            String::from_utf8_lossy(&path)
                        ))
                    }
                };
                (path, kind)
            };
            check_path(&path)?;
            let shown = || String::from_utf8_lossy(&path).into_owned();
            let up = parent(&path);
            if !up.is_empty() && !dirs.contains(up) {
                return bad(format!(
                    "the parent of {:?} is not a directory created before it",
                    shown()
                ));
            }
            let meta = get_meta(b, &mut at, &mut prev_mtime)?;
            if !seen.insert(path.clone()) {
                return bad(format!("{:?} is listed twice", shown()));
            }
            if kind == Kind::Dir {
                dirs.insert(path.clone());
            }
            prev.clone_from(&path);
            new.push(NewEntry { path, kind, meta });
        }
        if at != b.len() {
            return bad("trailing bytes");
        }
        if made != new_len {
            return bad("the new files do not add up to NEW's length in the header");
        }
        Ok(Manifest { root, old, new })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        let m = |mode, mtime| Meta {
            mode,
            mtime,
            mtime_nsec: 5,
        };
        Manifest {
            root: m(0o755, 1_700_000_000),
            old: vec![
                OldFile {
                    path: b"a/x".to_vec(),
                    len: 10,
                },
                OldFile {
                    path: b"a/y".to_vec(),
                    len: 0,
                },
                OldFile {
                    path: b"b".to_vec(),
                    len: 7,
                },
            ],
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
                    meta: m(0o777, -5),
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

    #[test]
    fn round_trips() {
        let m = sample();
        let b = m.encode();
        assert_eq!(Manifest::decode(&b, 17, 30).unwrap(), m);
        // Sizes that disagree with the header's.
        assert!(Manifest::decode(&b, 18, 30).is_err());
        assert!(Manifest::decode(&b, 17, 31).is_err());
        // Every truncation is refused.
        for n in 0..b.len() {
            assert!(Manifest::decode(&b[..n], 17, 30).is_err(), "cut at {n}");
        }
    }

    fn refused(m: &Manifest, what: &str) {
        let old: u64 = m.old.iter().map(|f| f.len).sum();
        let new: u64 = m
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
        let err = Manifest::decode(&m.encode(), old, new).unwrap_err().0;
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
        ] {
            let mut m = sample();
            m.new.push(NewEntry {
                path: path.to_vec(),
                kind: Kind::Dir,
                meta: Meta::default(),
            });
            refused(&m, what);
        }
        let mut m = sample();
        m.new.push(m.new[1].clone());
        refused(&m, "listed twice");
        let mut m = sample();
        m.old.push(m.old[0].clone());
        refused(&m, "listed twice");
        let mut m = sample();
        m.old[2].path = b"../b".to_vec();
        refused(&m, "component");
        // A parent created after its child.
        let mut m = sample();
        m.new.swap(0, 2);
        refused(&m, "not a directory");
        // A reference to an old file that is not there.
        let mut m = sample();
        m.new[2].kind = Kind::File {
            len: 10,
            source: Source::Old(7),
        };
        refused(&m, "old file that is not there");
        let mut m = sample();
        m.new[0].meta.mode = 0o10000;
        refused(&m, "beyond 0o7777");
    }
}
