//! A tree patch's manifest: every entry of the new tree, coded as edits against the old
//! tree's walk.
//!
//! The old tree must be exactly the tree the patch was made from (as `xdelta3` needs the
//! exact old tar), so its file list is not stored: `make` and `apply` walk it by the same
//! rules ([`crate::tree::walk`]: depth first, names sorted by their bytes, links recorded,
//! never followed, special files refused) and take its names, kinds, lengths and link
//! targets from the walk. OLD's hash in the header covers all of them and every file's
//! contents ([`old_hash`]), so a different old tree is refused before anything is written;
//! a two-byte digest per old directory ([`dir_digests`]) lets `apply` name the directory
//! that differs.
//!
//! The new tree is then an edit script over the old walk ([`Script`]): runs of old entries
//! kept as they are (same path, same kind, a file's contents unchanged, a link's target),
//! runs dropped, an old path given a new entry (a changed file: its length as a difference
//! from the old one's), new paths inserted. Modes and times are every new entry's own
//! (never the old tree's: they are not in OLD's hash), coded against the recent values. The
//! columns (ops, paths, lengths, references, targets, modes, times, digests) are stored
//! one after the other in one zstd frame. The encoding is in docs/patch-format.md, "Trees".
//!
//! The manifest is what a tree patch says about paths, so `apply` treats it as hostile
//! input: [`Script::parse`] refuses counts and columns its bytes cannot hold (so a forged
//! one cannot make apply allocate more than its own size allows), and [`Script::resolve`]
//! refuses, in one line, any path that is absolute, empty, has an empty, `.` or `..`
//! component or a NUL byte, any duplicate, any new entry whose parent is not a directory
//! entry created before it (so no path leads through a link the patch makes, or out of the
//! tree), unknown kinds, modes beyond `0o7777`, a reference to an old file that does not
//! exist, a script that does not consume the old walk exactly, and sizes or counts that
//! disagree with the header's or the summary's.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

use crate::format::{get_varint, put_varint, Invalid};

/// The first byte of a manifest of this format (a manifest of the earlier, unreleased
/// format started with the root's mode).
pub const TAG: u8 = 0xE2;

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

/// What an old entry is, as the walk found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OldKind {
    /// A directory.
    Dir,
    /// A regular file of this length: the next bytes of OLD.
    File(u64),
    /// A symbolic link to this target.
    Link(Vec<u8>),
}

/// An entry of the old tree, in walk order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OldEntry {
    /// Path relative to the old tree's root (raw bytes).
    pub path: Vec<u8>,
    /// What it is.
    pub kind: OldKind,
}

/// Where a new file's bytes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The next `len` bytes of NEW, made by the sections.
    Sections,
    /// The whole old file of this index among the old tree's files (same length and
    /// hash).
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

/// A tree patch's manifest, resolved against the old tree's walk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    /// The new tree's root directory's mode and time.
    pub root: Meta,
    /// The old tree's entries, in walk order (not stored: the walk's).
    pub old: Vec<OldEntry>,
    /// The new tree's entries in creation order (a directory before what it holds).
    pub new: Vec<NewEntry>,
}

/// Counts a manifest records about both trees (what `info` shows without the old tree;
/// `apply` checks every one against what it resolves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Summary {
    /// Entries of the old tree's walk.
    pub old_entries: u64,
    /// Its regular files.
    pub old_files: u64,
    /// Its directories, the root included (one digest each).
    pub old_dirs: u64,
    /// Entries of the new tree (its root not counted).
    pub new_entries: u64,
    /// Its regular files.
    pub new_files: u64,
    /// Its directories (its root not counted).
    pub new_dirs: u64,
    /// Its symbolic links.
    pub new_links: u64,
    /// New files that are whole old files (unchanged, renamed or copied).
    pub whole_files: u64,
    /// Their bytes.
    pub whole_bytes: u64,
    /// Old files whose path is not a file of the new tree.
    pub deleted_files: u64,
}

// Ops of the script: a varint `n << 2 | op`.
/// The next `n` old entries are kept as they are.
const OP_KEEP: u64 = 0;
/// The next `n` old entries are not in the new tree.
const OP_DROP: u64 = 1;
/// The next old entry's path gets a new entry of kind `n`.
const OP_REPLACE: u64 = 2;
/// A new entry of kind `n` at a path not in the old tree.
const OP_INSERT: u64 = 3;

// Kinds of a replaced or inserted entry.
const KIND_DIR: u64 = 0;
/// A file made by the sections (its length in the lengths column).
const KIND_FILE: u64 = 1;
/// A link (its target in the targets column).
const KIND_LINK: u64 = 2;
/// A whole old file (a reference in the references column).
const KIND_WHOLE: u64 = 3;

/// The columns, in their order in the manifest.
const COLUMNS: usize = 8;
const C_OPS: usize = 0;
const C_PATHS: usize = 1;
const C_LENS: usize = 2;
const C_REFS: usize = 3;
const C_TARGETS: usize = 4;
const C_MODES: usize = 5;
const C_TIMES: usize = 6;
const C_DIGESTS: usize = 7;

/// Recent modes remembered per kind (a mode among them costs one small code).
const RECENT_MODES: usize = 4;
/// Recent times remembered.
const RECENT_TIMES: usize = 8;

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

/// Compares two paths in walk order: component by component, a directory before what it
/// holds.
pub fn walk_order(a: &[u8], b: &[u8]) -> Ordering {
    let mut x = a.split(|&c| c == b'/');
    let mut y = b.split(|&c| c == b'/');
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) => match p.cmp(q) {
                Ordering::Equal => {}
                o => return o,
            },
        }
    }
}

/// Checks the relative path `p`, whose first `known` bytes (whole components, or none) were
/// checked before: not empty, not absolute, no empty, `.` or `..` component, no name longer
/// than [`NAME_MAX`], no NUL byte. Only the bytes past `known` are looked at.
pub fn check_path(p: &[u8], known: usize) -> Result<(), Invalid> {
    let shown = || String::from_utf8_lossy(p).into_owned();
    if p.is_empty() {
        return bad("an empty path");
    }
    if known == 0 && p[0] == b'/' {
        return bad(format!("an absolute path {:?}", shown()));
    }
    if p[known..].contains(&0) {
        return bad(format!("a NUL byte in the path {:?}", shown()));
    }
    let fresh = if known == 0 { p } else { &p[known + 1..] };
    for c in fresh.split(|&b| b == b'/') {
        if c.is_empty() || c == b"." || c == b".." {
            return bad(format!(
                "the path {:?} has an empty, '.' or '..' component",
                shown()
            ));
        }
        if c.len() > NAME_MAX {
            return bad(format!(
                "the path {:?} has a name longer than {NAME_MAX} bytes",
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

fn last_name(p: &[u8]) -> &[u8] {
    &p[p.len() - p.iter().rev().take_while(|&&b| b != b'/').count()..]
}

/// One old entry as OLD's hash and its directory's digest see it: kind, then for a file
/// its length and contents' hash, for a link its target.
fn put_old(out: &mut Vec<u8>, e: &OldEntry, file_hash: Option<u128>) {
    match &e.kind {
        OldKind::Dir => out.push(0),
        OldKind::File(len) => {
            out.push(1);
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&file_hash.unwrap_or(0).to_le_bytes());
        }
        OldKind::Link(t) => {
            out.push(2);
            put_varint(out, t.len() as u64);
            out.extend_from_slice(t);
        }
    }
}

/// The old tree's hash (the header's OLD hash of a tree patch): XXH3-128 of, for each
/// entry in walk order, its path (a varint length and the bytes) and what it is (a kind
/// byte, 0 directory, 1 file, 2 link; a file's length as 8 bytes and its hash as 16, a
/// link's target as a varint length and the bytes). `file_hashes` are the files' hashes in
/// order.
pub fn old_hash(old: &[OldEntry], file_hashes: &[u128]) -> u128 {
    let mut b = Vec::with_capacity(old.len() * 64);
    let mut f = 0usize;
    for e in old {
        put_varint(&mut b, e.path.len() as u64);
        b.extend_from_slice(&e.path);
        let h = match e.kind {
            OldKind::File(_) => {
                f += 1;
                file_hashes.get(f - 1).copied()
            }
            _ => None,
        };
        put_old(&mut b, e, h);
    }
    xxh3_128(&b)
}

/// The old tree's directories, the root first (its path empty), then each directory entry
/// in walk order.
pub fn old_dirs(old: &[OldEntry]) -> Vec<&[u8]> {
    std::iter::once(&[][..])
        .chain(
            old.iter()
                .filter(|e| e.kind == OldKind::Dir)
                .map(|e| e.path.as_slice()),
        )
        .collect()
}

/// A two-byte digest of each old directory ([`old_dirs`]' order): the low 16 bits of the
/// XXH3-64 of its own entries, each its name (a varint length and the bytes) and what it
/// is, as in [`old_hash`]. A change anywhere in the tree changes the digest of the
/// directory that holds it; an added or removed directory that of its parent, which comes
/// first.
pub fn dir_digests(old: &[OldEntry], file_hashes: &[u128]) -> Vec<u16> {
    let dirs = old_dirs(old);
    let index: HashMap<&[u8], usize> = dirs.iter().enumerate().map(|(k, &d)| (d, k)).collect();
    let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); dirs.len()];
    let mut f = 0usize;
    for e in old {
        let h = match e.kind {
            OldKind::File(_) => {
                f += 1;
                file_hashes.get(f - 1).copied()
            }
            _ => None,
        };
        // A walk's entries always have their parent before them.
        if let Some(&k) = index.get(parent(&e.path)) {
            let name = last_name(&e.path);
            put_varint(&mut bufs[k], name.len() as u64);
            bufs[k].extend_from_slice(name);
            put_old(&mut bufs[k], e, h);
        }
    }
    bufs.iter().map(|b| xxh3_64(b) as u16).collect()
}

/// The first old directory (in walk order) whose digest is not the one `stored`: the one
/// that differs from the tree the patch was made from; `None` when every one agrees.
pub fn differing_dir<'a>(
    old: &'a [OldEntry],
    file_hashes: &[u128],
    stored: &[u16],
) -> Option<&'a [u8]> {
    let got = dir_digests(old, file_hashes);
    let dirs = old_dirs(old);
    for (k, d) in got.iter().enumerate() {
        if stored.get(k) != Some(d) {
            return Some(dirs[k]);
        }
    }
    None
}

/// A move-to-front list of recent values: a value among them is coded by its place.
struct Recent<T: PartialEq + Copy, const N: usize> {
    items: Vec<T>,
}

impl<T: PartialEq + Copy, const N: usize> Recent<T, N> {
    fn new() -> Self {
        Recent {
            items: Vec::with_capacity(N),
        }
    }

    /// The place of `v`, moved to the front (`None`: not there; now added at the front).
    fn code(&mut self, v: T) -> Option<usize> {
        let at = self.items.iter().position(|&x| x == v);
        self.take(at, v);
        at
    }

    /// The value at `k`, moved to the front.
    fn get(&mut self, k: usize) -> Option<T> {
        let v = *self.items.get(k)?;
        self.take(Some(k), v);
        Some(v)
    }

    fn take(&mut self, at: Option<usize>, v: T) {
        match at {
            Some(k) => {
                self.items.remove(k);
            }
            None if self.items.len() == N => {
                self.items.pop();
            }
            None => {}
        }
        self.items.insert(0, v);
    }
}

/// The coders of modes and times (the same state on both sides).
struct MetaCoder {
    dir_modes: Recent<u32, RECENT_MODES>,
    file_modes: Recent<u32, RECENT_MODES>,
    times: Recent<(i64, u32), RECENT_TIMES>,
    last_sec: i64,
}

impl MetaCoder {
    fn new(root: &Meta) -> MetaCoder {
        MetaCoder {
            dir_modes: Recent::new(),
            file_modes: Recent::new(),
            times: Recent::new(),
            last_sec: root.mtime,
        }
    }

    fn put(&mut self, modes: &mut Vec<u8>, times: &mut Vec<u8>, kind: &Kind, m: &Meta) {
        let recent = match kind {
            Kind::Dir => Some(&mut self.dir_modes),
            Kind::File { .. } => Some(&mut self.file_modes),
            Kind::Link { .. } => None,
        };
        if let Some(r) = recent {
            match r.code(m.mode) {
                Some(k) => put_varint(modes, k as u64),
                None => put_varint(modes, RECENT_MODES as u64 + u64::from(m.mode)),
            }
        }
        match self.times.code((m.mtime, m.mtime_nsec)) {
            Some(k) => put_varint(times, k as u64),
            None => {
                put_varint(times, RECENT_TIMES as u64);
                put_varint(times, zigzag(m.mtime.wrapping_sub(self.last_sec)));
                put_varint(times, u64::from(m.mtime_nsec));
                self.last_sec = m.mtime;
            }
        }
    }

    fn get(&mut self, cols: &mut Cols<'_>, kind: &Kind) -> Result<Meta, Invalid> {
        let recent = match kind {
            Kind::Dir => Some(&mut self.dir_modes),
            Kind::File { .. } => Some(&mut self.file_modes),
            Kind::Link { .. } => None,
        };
        let mode = match recent {
            None => 0,
            Some(r) => {
                let c = cols.varint(C_MODES)?;
                if c < RECENT_MODES as u64 {
                    match r.get(c as usize) {
                        Some(m) => m,
                        None => return bad("a mode refers to one not seen"),
                    }
                } else {
                    let m = c - RECENT_MODES as u64;
                    if m > 0o7777 {
                        return bad("a mode has bits beyond 0o7777");
                    }
                    r.code(m as u32);
                    m as u32
                }
            }
        };
        let c = cols.varint(C_TIMES)?;
        let (mtime, mtime_nsec) = if c < RECENT_TIMES as u64 {
            match self.times.get(c as usize) {
                Some(t) => t,
                None => return bad("a time refers to one not seen"),
            }
        } else if c == RECENT_TIMES as u64 {
            let sec = self.last_sec.wrapping_add(unzigzag(cols.varint(C_TIMES)?));
            let nsec = cols.varint(C_TIMES)?;
            if nsec >= 1_000_000_000 {
                return bad("a time has more than a second of nanoseconds");
            }
            self.last_sec = sec;
            self.times.code((sec, nsec as u32));
            (sec, nsec as u32)
        } else {
            return bad("an unknown time code");
        };
        Ok(Meta {
            mode,
            mtime,
            mtime_nsec,
        })
    }
}

fn put_meta(out: &mut Vec<u8>, m: &Meta) {
    put_varint(out, u64::from(m.mode));
    put_varint(out, zigzag(m.mtime));
    put_varint(out, u64::from(m.mtime_nsec));
}

fn get_meta(b: &[u8], at: &mut usize) -> Result<Meta, Invalid> {
    let mode = get_varint(b, at)?;
    if mode > 0o7777 {
        return bad("a mode has bits beyond 0o7777");
    }
    let mtime = unzigzag(get_varint(b, at)?);
    let nsec = get_varint(b, at)?;
    if nsec >= 1_000_000_000 {
        return bad("a time has more than a second of nanoseconds");
    }
    Ok(Meta {
        mode: mode as u32,
        mtime,
        mtime_nsec: nsec as u32,
    })
}

/// The columns being read, each with its own cursor.
struct Cols<'a> {
    cols: [&'a [u8]; COLUMNS],
    at: [usize; COLUMNS],
}

impl<'a> Cols<'a> {
    fn varint(&mut self, c: usize) -> Result<u64, Invalid> {
        get_varint(self.cols[c], &mut self.at[c])
    }

    fn bytes(&mut self, c: usize) -> Result<&'a [u8], Invalid> {
        let n = self.varint(c)?;
        let b = self.cols[c];
        if n > (b.len() - self.at[c]) as u64 {
            return bad("a name runs past the end");
        }
        let s = &b[self.at[c]..self.at[c] + n as usize];
        self.at[c] += n as usize;
        Ok(s)
    }

    fn done(&self, c: usize) -> bool {
        self.at[c] == self.cols[c].len()
    }
}

/// The summary and the columns being written.
#[derive(Default)]
struct Writer {
    cols: [Vec<u8>; COLUMNS],
}

impl Manifest {
    /// The old tree's regular files, in order (OLD's address space): path and length.
    pub fn old_files(&self) -> Vec<(&[u8], u64)> {
        self.old
            .iter()
            .filter_map(|e| match e.kind {
                OldKind::File(len) => Some((e.path.as_slice(), len)),
                _ => None,
            })
            .collect()
    }

    /// The counts [`Summary`] holds.
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            old_entries: self.old.len() as u64,
            old_dirs: 1,
            new_entries: self.new.len() as u64,
            ..Summary::default()
        };
        for e in &self.old {
            match e.kind {
                OldKind::Dir => s.old_dirs += 1,
                OldKind::File(_) => s.old_files += 1,
                OldKind::Link(_) => {}
            }
        }
        let mut files: HashSet<&[u8]> = HashSet::new();
        for e in &self.new {
            match &e.kind {
                Kind::Dir => s.new_dirs += 1,
                Kind::Link { .. } => s.new_links += 1,
                Kind::File { len, source } => {
                    s.new_files += 1;
                    files.insert(&e.path);
                    if let Source::Old(_) = source {
                        s.whole_files += 1;
                        s.whole_bytes += len;
                    }
                }
            }
        }
        s.deleted_files = self
            .old
            .iter()
            .filter(|e| matches!(e.kind, OldKind::File(_)) && !files.contains(e.path.as_slice()))
            .count() as u64;
        s
    }

    /// The raw encoding (docs/patch-format.md, "Trees"), with `digests` ([`dir_digests`])
    /// for the old tree's directories.
    pub fn encode(&self, digests: &[u16]) -> Vec<u8> {
        let mut w = Writer::default();
        // Each old file's index, and each old entry's index among the files.
        let mut file_of = Vec::with_capacity(self.old.len());
        let mut files = 0usize;
        for e in &self.old {
            file_of.push(files);
            if let OldKind::File(_) = e.kind {
                files += 1;
            }
        }
        let mut meta = MetaCoder::new(&self.root);
        let mut o = 0usize;
        let mut run: Option<(u64, u64)> = None;
        let flush = |w: &mut Writer, run: &mut Option<(u64, u64)>| {
            if let Some((op, n)) = run.take() {
                put_varint(&mut w.cols[C_OPS], n << 2 | op);
            }
        };
        let push_run = |w: &mut Writer, run: &mut Option<(u64, u64)>, op: u64| match run {
            Some((r, n)) if *r == op => *n += 1,
            _ => {
                flush(w, run);
                *run = Some((op, 1));
            }
        };
        let mut expect = 0usize;
        let mut prev: &[u8] = &[];
        for e in &self.new {
            // Old entries before this path are not in the new tree.
            while o < self.old.len() && walk_order(&self.old[o].path, &e.path) == Ordering::Less {
                push_run(&mut w, &mut run, OP_DROP);
                o += 1;
            }
            let same = self.old.get(o).filter(|x| x.path == e.path);
            let kept = same.is_some_and(|x| match (&x.kind, &e.kind) {
                (OldKind::Dir, Kind::Dir) => true,
                (OldKind::Link(a), Kind::Link { target }) => a == target,
                (
                    OldKind::File(_),
                    Kind::File {
                        source: Source::Old(k),
                        ..
                    },
                ) => *k == file_of[o],
                _ => false,
            });
            if kept {
                push_run(&mut w, &mut run, OP_KEEP);
                if let Kind::File {
                    source: Source::Old(k),
                    ..
                } = e.kind
                {
                    expect = k + 1;
                }
            } else {
                flush(&mut w, &mut run);
                let code = match &e.kind {
                    Kind::Dir => KIND_DIR,
                    Kind::File {
                        source: Source::Sections,
                        ..
                    } => KIND_FILE,
                    Kind::File { .. } => KIND_WHOLE,
                    Kind::Link { .. } => KIND_LINK,
                };
                let old_len = match same.map(|x| &x.kind) {
                    Some(OldKind::File(n)) => *n as i64,
                    _ => 0,
                };
                if same.is_some() {
                    put_varint(&mut w.cols[C_OPS], code << 2 | OP_REPLACE);
                } else {
                    put_varint(&mut w.cols[C_OPS], code << 2 | OP_INSERT);
                    let shared = prev.iter().zip(&e.path).take_while(|(a, b)| a == b).count();
                    put_varint(&mut w.cols[C_PATHS], shared as u64);
                    put_varint(&mut w.cols[C_PATHS], (e.path.len() - shared) as u64);
                    w.cols[C_PATHS].extend_from_slice(&e.path[shared..]);
                }
                match &e.kind {
                    Kind::Dir => {}
                    Kind::File {
                        len,
                        source: Source::Sections,
                    } => put_varint(
                        &mut w.cols[C_LENS],
                        zigzag((*len as i64).wrapping_sub(old_len)),
                    ),
                    Kind::File {
                        source: Source::Old(k),
                        ..
                    } => {
                        put_varint(
                            &mut w.cols[C_REFS],
                            zigzag((*k as i64).wrapping_sub(expect as i64)),
                        );
                        expect = k + 1;
                    }
                    Kind::Link { target } => {
                        put_varint(&mut w.cols[C_TARGETS], target.len() as u64);
                        w.cols[C_TARGETS].extend_from_slice(target);
                    }
                }
            }
            if same.is_some() {
                o += 1;
            }
            let (modes, rest) = w.cols.split_at_mut(C_TIMES);
            meta.put(&mut modes[C_MODES], &mut rest[0], &e.kind, &e.meta);
            prev = &e.path;
        }
        while o < self.old.len() {
            push_run(&mut w, &mut run, OP_DROP);
            o += 1;
        }
        flush(&mut w, &mut run);
        for d in digests {
            w.cols[C_DIGESTS].extend_from_slice(&d.to_le_bytes());
        }
        let s = self.summary();
        let mut out = vec![TAG];
        put_meta(&mut out, &self.root);
        for v in summary_fields(&s) {
            put_varint(&mut out, v);
        }
        for c in &w.cols {
            put_varint(&mut out, c.len() as u64);
            out.extend_from_slice(c);
        }
        out
    }
}

fn summary_fields(s: &Summary) -> [u64; 10] {
    [
        s.old_entries,
        s.old_files,
        s.old_dirs,
        s.new_entries,
        s.new_files,
        s.new_dirs,
        s.new_links,
        s.whole_files,
        s.whole_bytes,
        s.deleted_files,
    ]
}

/// A manifest as stored, its syntax checked: what can be known without the old tree.
#[derive(Debug, Clone)]
pub struct Script {
    raw: Vec<u8>,
    /// The new tree's root directory's mode and time.
    pub root: Meta,
    /// The counts it records.
    pub summary: Summary,
    cols: [(usize, usize); COLUMNS],
}

impl Script {
    /// Reads the raw manifest `raw`: its tag, root, summary and columns, each column
    /// within the bytes there are, and counts the bytes can hold (every new entry not
    /// kept from the old tree takes at least one byte of the ops column).
    pub fn parse(raw: Vec<u8>) -> Result<Script, Invalid> {
        let b = &raw;
        match b.first() {
            Some(&TAG) => {}
            Some(_) => {
                return bad("not this swath's manifest format (made by another version of swath)")
            }
            None => return bad("empty"),
        }
        let mut at = 1usize;
        let root = get_meta(b, &mut at)?;
        let mut f = [0u64; 10];
        for v in &mut f {
            *v = get_varint(b, &mut at)?;
        }
        let summary = Summary {
            old_entries: f[0],
            old_files: f[1],
            old_dirs: f[2],
            new_entries: f[3],
            new_files: f[4],
            new_dirs: f[5],
            new_links: f[6],
            whole_files: f[7],
            whole_bytes: f[8],
            deleted_files: f[9],
        };
        let mut cols = [(0usize, 0usize); COLUMNS];
        for c in &mut cols {
            let n = get_varint(b, &mut at)?;
            if n > (b.len() - at) as u64 {
                return bad("a column runs past the end");
            }
            *c = (at, at + n as usize);
            at += n as usize;
        }
        if at != b.len() {
            return bad("trailing bytes");
        }
        let s = &summary;
        let ops_len = (cols[C_OPS].1 - cols[C_OPS].0) as u64;
        if s.old_files > s.old_entries
            || s.old_dirs > s.old_entries.saturating_add(1)
            || s.old_dirs == 0
            || s.new_entries > s.old_entries.saturating_add(ops_len)
            || s.new_files
                .saturating_add(s.new_dirs)
                .saturating_add(s.new_links)
                != s.new_entries
            || s.whole_files > s.new_files
            || s.deleted_files > s.old_files
            || (cols[C_DIGESTS].1 - cols[C_DIGESTS].0) as u64 != s.old_dirs.saturating_mul(2)
        {
            return bad("its counts do not hold together");
        }
        Ok(Script {
            raw,
            root,
            summary,
            cols,
        })
    }

    /// The directory digests it records ([`dir_digests`]).
    pub fn digests(&self) -> Vec<u16> {
        let (a, e) = self.cols[C_DIGESTS];
        self.raw[a..e]
            .chunks_exact(2)
            .map(|d| u16::from_le_bytes([d[0], d[1]]))
            .collect()
    }

    /// The new tree, from the script and the old tree's walk `old` (whose hash the caller
    /// has checked), every path whole: [`Script::resolve_tree`]'s tree, for tools and tests
    /// (apply holds no path whole).
    pub fn resolve(&self, old: &[OldEntry], new_len: u64) -> Result<Manifest, Invalid> {
        let t = self.resolve_tree(old, new_len)?;
        let mut paths: Vec<Vec<u8>> = Vec::with_capacity(t.len());
        let mut new = Vec::with_capacity(t.len());
        for i in 0..t.len() {
            let mut p = match t.parent(i) {
                Some(up) => [&paths[up][..], b"/"].concat(),
                None => Vec::new(),
            };
            p.extend_from_slice(t.name(i));
            paths.push(p.clone());
            new.push(NewEntry {
                path: p,
                kind: t.nodes[i].kind.clone(),
                meta: t.nodes[i].meta,
            });
        }
        Ok(Manifest {
            root: self.root,
            old: old.to_vec(),
            new,
        })
    }

    /// The new tree, from the script and the old tree's walk `old` (whose hash the caller
    /// has checked): every path and parent checked, no duplicates, references to old files
    /// that exist, the script consuming the walk exactly, the files made by sections adding
    /// up to `new_len` (the header's), every count as the summary says. Each entry is held
    /// as its parent and its name, never as a whole path, and found by them: memory and
    /// time are linear in the manifest's size and the old walk's, however deep the tree.
    pub fn resolve_tree(&self, old: &[OldEntry], new_len: u64) -> Result<NewTree, Invalid> {
        let s = &self.summary;
        if old.len() as u64 != s.old_entries {
            return bad("the old tree has another number of entries");
        }
        let cols = Cols {
            cols: self.cols.map(|(a, e)| &self.raw[a..e]),
            at: [0; COLUMNS],
        };
        let old_files: Vec<u64> = old
            .iter()
            .filter_map(|e| match e.kind {
                OldKind::File(n) => Some(n),
                _ => None,
            })
            .collect();
        let mut file_of = Vec::with_capacity(old.len());
        let mut files = 0usize;
        for e in old {
            file_of.push(files);
            if let OldKind::File(_) = e.kind {
                files += 1;
            }
        }
        // Old files by path, for an inserted file at an old file's path (not deleted).
        let old_file_at: HashMap<&[u8], usize> = old
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e.kind, OldKind::File(_)))
            .map(|(o, e)| (e.path.as_slice(), file_of[o]))
            .collect();
        let longest_old_file = old_file_at.keys().map(|p| p.len()).max().unwrap_or(0);
        let kept_file = vec![false; old_files.len()];
        // Every entry not kept takes a byte of the ops column at least: what bounds the
        // allocations, whatever the summary claims.
        let most = (old.len() + cols.cols[C_OPS].len()).min(s.new_entries as usize);
        let mut r = Resolver {
            s,
            old,
            old_files,
            file_of,
            old_file_at,
            longest_old_file,
            kept_file,
            cols,
            tree: NewTree {
                root: self.root,
                nodes: Vec::with_capacity(most),
                names: Vec::new(),
            },
            placer: Placer::default(),
            meta: MetaCoder::new(&self.root),
            o: 0,
            made: 0,
            expect: 0,
        };
        while !r.cols.done(C_OPS) {
            let t = r.cols.varint(C_OPS)?;
            let (n, op) = (t >> 2, t & 3);
            match op {
                OP_KEEP | OP_DROP => r.old_run(n, op)?,
                _ => r.new_entry(n, op)?,
            }
        }
        r.finish(new_len)
    }
}

/// A script being resolved against the old tree ([`Script::resolve_tree`]): the old tree
/// indexed, and the new tree as far as the script's ops have made it.
struct Resolver<'a> {
    /// The counts the script records.
    s: &'a Summary,
    /// The old tree's walk.
    old: &'a [OldEntry],
    /// The old files' lengths, in the walk's order.
    old_files: Vec<u64>,
    /// Per old entry: how many old files come before it (a file's own index).
    file_of: Vec<usize>,
    /// Old files by path, for an inserted file at an old file's path (not deleted).
    old_file_at: HashMap<&'a [u8], usize>,
    /// The longest path of an old file.
    longest_old_file: usize,
    /// Per old file: whether a new file keeps it (it is not deleted).
    kept_file: Vec<bool>,
    /// The script's columns, being read.
    cols: Cols<'a>,
    /// The new tree so far.
    tree: NewTree,
    /// Where each new entry goes.
    placer: Placer,
    /// The modes' and times' decoder.
    meta: MetaCoder,
    /// The next old entry.
    o: usize,
    /// Bytes of the new files made by sections so far.
    made: u64,
    /// The old file a whole file's reference is coded against (one past the last one
    /// referred to or kept).
    expect: usize,
}

impl Resolver<'_> {
    /// A run of `n` old entries kept (`op` [`OP_KEEP`]: each a new entry at its path, a
    /// file its old file's bytes) or dropped ([`OP_DROP`]).
    fn old_run(&mut self, n: u64, op: u64) -> Result<(), Invalid> {
        let old = self.old;
        if n == 0 || n > (old.len() - self.o) as u64 {
            return bad("a run of old entries runs past the old tree's end");
        }
        if op == OP_DROP {
            self.o += n as usize;
            return Ok(());
        }
        for _ in 0..n {
            let o = self.o;
            let e = &old[o];
            let kind = match &e.kind {
                OldKind::Dir => Kind::Dir,
                OldKind::File(len) => {
                    self.expect = self.file_of[o] + 1;
                    self.kept_file[self.file_of[o]] = true;
                    Kind::File {
                        len: *len,
                        source: Source::Old(self.file_of[o]),
                    }
                }
                OldKind::Link(t) => Kind::Link { target: t.clone() },
            };
            self.o += 1;
            let m = self.meta.get(&mut self.cols, &kind)?;
            self.placer.whole(&e.path);
            self.placer.place(&mut self.tree, kind, m, self.s)?;
        }
        Ok(())
    }

    /// A new entry of kind `n`: at the next old entry's path, which it replaces (`op`
    /// [`OP_REPLACE`]), or at a path of its own.
    fn new_entry(&mut self, n: u64, op: u64) -> Result<(), Invalid> {
        let old = self.old;
        let replaced = if op == OP_REPLACE {
            let Some(e) = old.get(self.o) else {
                return bad("an entry replaces one past the old tree's end");
            };
            self.o += 1;
            self.placer.whole(&e.path);
            Some((self.o - 1, e))
        } else {
            let shared = self.cols.varint(C_PATHS)?;
            if shared > self.placer.path.len() as u64 {
                return bad("a path shares more than the previous one has");
            }
            self.placer.set(shared as usize, self.cols.bytes(C_PATHS)?);
            None
        };
        let old_len = match replaced {
            Some((_, e)) => match e.kind {
                OldKind::File(n) => n as i64,
                _ => 0,
            },
            None => 0,
        };
        let kind = self.new_kind(n, old_len)?;
        // A new file at an old file's path: that old file is not deleted.
        if matches!(kind, Kind::File { .. }) {
            match replaced {
                Some((r, e)) => {
                    if let OldKind::File(_) = e.kind {
                        self.kept_file[self.file_of[r]] = true;
                    }
                }
                None if self.placer.path.len() <= self.longest_old_file => {
                    if let Some(&f) = self.old_file_at.get(self.placer.path.as_slice()) {
                        self.kept_file[f] = true;
                    }
                }
                None => {}
            }
        }
        let m = self.meta.get(&mut self.cols, &kind)?;
        self.placer.place(&mut self.tree, kind, m, self.s)
    }

    /// What the new entry at hand is, of kind `n` (a file's length coded against
    /// `old_len`, the length of the old file it replaces, else 0).
    fn new_kind(&mut self, n: u64, old_len: i64) -> Result<Kind, Invalid> {
        let kind = match n {
            KIND_DIR => Kind::Dir,
            KIND_FILE => {
                let len = old_len.wrapping_add(unzigzag(self.cols.varint(C_LENS)?));
                let Ok(len) = u64::try_from(len) else {
                    return bad("a file of negative length");
                };
                self.made = self
                    .made
                    .checked_add(len)
                    .ok_or_else(|| Invalid("damaged or forged manifest: sizes overflow".into()))?;
                Kind::File {
                    len,
                    source: Source::Sections,
                }
            }
            KIND_WHOLE => {
                let k = (self.expect as i64).wrapping_add(unzigzag(self.cols.varint(C_REFS)?));
                let Some(&len) = usize::try_from(k).ok().and_then(|k| self.old_files.get(k)) else {
                    return bad("a file refers to an old file that is not there");
                };
                self.expect = k as usize + 1;
                Kind::File {
                    len,
                    source: Source::Old(k as usize),
                }
            }
            KIND_LINK => {
                let target = self.cols.bytes(C_TARGETS)?.to_vec();
                if target.is_empty() || target.contains(&0) {
                    return bad(format!(
                        "the link {:?} has an invalid target",
                        String::from_utf8_lossy(&self.placer.path)
                    ));
                }
                Kind::Link { target }
            }
            _ => {
                return bad(format!(
                    "{:?} is of an unknown kind",
                    String::from_utf8_lossy(&self.placer.path)
                ))
            }
        };
        Ok(kind)
    }

    /// The new tree, once the ops are read: the script must have consumed the old walk and
    /// every column, the files made by sections must add up to `new_len`, and every count
    /// must be the summary's.
    fn finish(self, new_len: u64) -> Result<NewTree, Invalid> {
        let (old, tree, s) = (self.old, self.tree, self.s);
        if self.o != old.len() {
            return bad("the script does not account for every old entry");
        }
        if (0..COLUMNS).any(|c| c != C_DIGESTS && !self.cols.done(c)) {
            return bad("a column has bytes left over");
        }
        if self.made != new_len {
            return bad("the new files do not add up to NEW's length in the header");
        }
        let mut got = Summary {
            old_entries: old.len() as u64,
            old_files: self.old_files.len() as u64,
            old_dirs: 1 + old.iter().filter(|e| e.kind == OldKind::Dir).count() as u64,
            new_entries: tree.len() as u64,
            deleted_files: self.kept_file.iter().filter(|&&k| !k).count() as u64,
            ..Summary::default()
        };
        for node in &tree.nodes {
            match &node.kind {
                Kind::Dir => got.new_dirs += 1,
                Kind::Link { .. } => got.new_links += 1,
                Kind::File { len, source } => {
                    got.new_files += 1;
                    if let Source::Old(_) = source {
                        got.whole_files += 1;
                        got.whole_bytes += len;
                    }
                }
            }
        }
        if got != *s {
            return bad("its counts are not the tree's");
        }
        Ok(tree)
    }
}

/// The longest name a path of a tree may have (Linux's NAME_MAX): no file system takes a
/// longer one, and the bound keeps what apply holds linear in the manifest's size.
pub const NAME_MAX: usize = 255;

/// One entry of a [`NewTree`].
#[derive(Debug, Clone)]
pub struct Node {
    /// Its parent's index (`usize::MAX` for an entry of the root).
    parent: usize,
    /// How deep it is: 1 for an entry of the root.
    depth: usize,
    /// Where its name is in the tree's names.
    name: (usize, usize),
    /// What it is.
    pub kind: Kind,
    /// Mode and time.
    pub meta: Meta,
}

/// A new tree as apply holds it: each entry its parent's index and its own name, in
/// creation order (a directory before what it holds); a path is made whole only to name an
/// entry in a message, or to open it. (Held whole, the paths of a 20 KB manifest listing
/// `a/a/a/...` 20,000 deep would take 400 MB.)
#[derive(Debug, Clone, Default)]
pub struct NewTree {
    /// The new tree's root directory's mode and time.
    pub root: Meta,
    nodes: Vec<Node>,
    names: Vec<u8>,
}

impl NewTree {
    /// Entries (the root not counted).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when the tree is its root alone.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Entry `i`.
    pub fn node(&self, i: usize) -> &Node {
        &self.nodes[i]
    }

    /// The entries, in creation order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Entry `i`'s parent (`None`: the root).
    pub fn parent(&self, i: usize) -> Option<usize> {
        let p = self.nodes[i].parent;
        (p != usize::MAX).then_some(p)
    }

    /// How deep entry `i` is (1 for an entry of the root).
    pub fn depth(&self, i: usize) -> usize {
        self.nodes[i].depth
    }

    /// Entry `i`'s name.
    pub fn name(&self, i: usize) -> &[u8] {
        let (a, n) = self.nodes[i].name;
        &self.names[a..a + n]
    }

    /// Entry `i`'s path below the root, made whole.
    pub fn path(&self, i: usize) -> Vec<u8> {
        let mut up = vec![i];
        let mut at = i;
        while let Some(p) = self.parent(at) {
            up.push(p);
            at = p;
        }
        let mut out = Vec::new();
        for (k, &n) in up.iter().rev().enumerate() {
            if k > 0 {
                out.push(b'/');
            }
            out.extend_from_slice(self.name(n));
        }
        out
    }
}

/// Where each new entry goes: the last entry's path (the manifest codes each against the
/// one before), the entries on the way to it, and every entry by its parent and name.
#[derive(Default)]
struct Placer {
    /// The entry at hand's path.
    path: Vec<u8>,
    /// The entries on the way to the last one placed, with where each one's path ends in
    /// `path` (so the last is that entry itself).
    way: Vec<(usize, usize)>,
    /// Every entry, found by (parent, name).
    index: hashbrown::HashTable<usize>,
    hasher: std::collections::hash_map::RandomState,
}

impl Placer {
    /// The next path: the first `shared` bytes of the last one, then `rest`. The way is
    /// kept as far as the two share whole components.
    fn set(&mut self, shared: usize, rest: &[u8]) {
        let slash = rest.first() == Some(&b'/');
        while let Some(&(end, _)) = self.way.last() {
            if end < shared || (end == shared && slash) {
                break;
            }
            self.way.pop();
        }
        self.path.truncate(shared);
        self.path.extend_from_slice(rest);
    }

    /// The next path, given whole.
    fn whole(&mut self, p: &[u8]) {
        let shared = self.path.iter().zip(p).take_while(|(a, b)| a == b).count();
        self.set(shared, &p[shared..]);
    }

    fn hash(&self, parent: usize, name: &[u8]) -> u64 {
        use std::hash::BuildHasher;
        self.hasher.hash_one((parent, name))
    }

    /// Checks the path at hand and adds its entry: a valid path, its parent a directory
    /// made before it, never listed before, no more entries than the summary says. Only
    /// the components past the way are looked at (the others were, for an entry before).
    fn place(
        &mut self,
        tree: &mut NewTree,
        kind: Kind,
        meta: Meta,
        s: &Summary,
    ) -> Result<(), Invalid> {
        if tree.nodes.len() as u64 >= s.new_entries {
            return bad("more entries than it says");
        }
        let p = &self.path;
        let shown = || String::from_utf8_lossy(p).into_owned();
        let cut = self.way.last().map_or(0, |w| w.0);
        check_path(p, cut)?;
        let fresh = if cut == 0 { &p[..] } else { &p[cut + 1..] };
        let not_under_dir = || {
            bad(format!(
                "the parent of {:?} is not a directory created before it",
                shown()
            ))
        };
        let mut parent = self.way.last().map_or(usize::MAX, |w| w.1);
        let mut end = cut;
        let comps: Vec<&[u8]> = fresh.split(|&b| b == b'/').collect();
        let mut way = Vec::new();
        for (k, c) in comps.iter().enumerate() {
            if parent != usize::MAX && tree.nodes[parent].kind != Kind::Dir {
                return not_under_dir();
            }
            end += usize::from(end > 0) + c.len();
            let h = self.hash(parent, c);
            let found = self
                .index
                .find(h, |&i| tree.nodes[i].parent == parent && tree.name(i) == *c);
            match found {
                Some(&i) if k + 1 < comps.len() => {
                    way.push((end, i));
                    parent = i;
                }
                Some(_) => return bad(format!("{:?} is listed twice", shown())),
                None if k + 1 < comps.len() => return not_under_dir(),
                None => {
                    let i = tree.nodes.len();
                    let depth = if parent == usize::MAX {
                        1
                    } else {
                        tree.nodes[parent].depth + 1
                    };
                    tree.nodes.push(Node {
                        parent,
                        depth,
                        name: (tree.names.len(), c.len()),
                        kind,
                        meta,
                    });
                    tree.names.extend_from_slice(c);
                    let nodes = &tree.nodes;
                    let names = &tree.names;
                    let hasher = &self.hasher;
                    self.index.insert_unique(h, i, |&j| {
                        use std::hash::BuildHasher;
                        let (a, n) = nodes[j].name;
                        hasher.hash_one((nodes[j].parent, &names[a..a + n]))
                    });
                    way.push((end, i));
                    self.way.extend(way);
                    return Ok(());
                }
            }
        }
        unreachable!("a path has a last component")
    }
}

#[cfg(test)]
mod tests;
