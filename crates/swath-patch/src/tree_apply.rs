//! Applying a tree patch (`swath patch apply OLD_DIR PATCH NEW_DIR`).
//!
//! 1. The patch's header, table, manifest record and manifest are checked (the manifest's
//!    syntax as hostile input, [`crate::manifest::Script::parse`]).
//! 2. NEW_DIR must not exist, or be an empty directory.
//! 3. OLD_DIR is walked by `make`'s rules ([`crate::tree::walk`], through descriptors, at
//!    any depth) and every file hashed in parallel: names, kinds, lengths, link targets and
//!    contents must make OLD's hash ([`crate::manifest::old_hash`]); when they do not, the
//!    directory digests name the first directory that differs.
//! 4. The manifest is resolved against the walk (paths, parents, references, counts, all
//!    checked: [`crate::manifest::Script::resolve_tree`]) into a tree of parents and names,
//!    no path held whole, and every section is checked to lie inside one file or hold whole
//!    files.
//! 5. The tree is built in a private directory beside NEW_DIR (made relative to NEW_DIR's
//!    directory, held open, mode 0700, a random name as `mkdtemp` makes), every entry
//!    created relative to its parent's descriptor (`mkdirat`, `symlinkat`, `openat` with
//!    `O_CREAT | O_EXCL | O_NOFOLLOW`), each parent reached from the one before without
//!    following a link ([`DirChain`]), so no path of the patch can reach outside it, and
//!    no depth is too deep.
//! 6. Sections are applied on all cores as a file's are
//!    ([`PatchFile::rebuild_section`]: read where they lie in the patch, a piece at a time,
//!    so a worker holds its section's slice of NEW and fixed buffers, whatever the section's
//!    lengths say), each writing its slices into the files it holds through the engine's
//!    block writer (runs of zeros left as holes, as a file's apply leaves them:
//!    [`BlockOptions::sparse`]); whole old files are copied the same way;
//!    every file is hashed and the tree must make NEW's hash.
//! 7. Modes and times are set (files and links, then directories deepest first), and the
//!    directory is renamed to NEW_DIR. On any error the temporary tree is removed, relative
//!    to descriptors ([`swath_engine::dirs::Dir::remove_tree`]).
//!
//! As root, set-user-ID and set-group-ID bits are not restored: a patch from someone else
//! would otherwise make root-owned set-user-ID programs of its choosing.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use swath_engine::dirs::{Dir, Links, Replace};
use swath_engine::output::{BlockOptions, BlockWriter};
use xxhash_rust::xxh3::xxh3_128;

use crate::apply::PatchFile;
use crate::error::PatchError;
use crate::hash::{file_hash, slice_hash, PIECE};
use crate::manifest::{Kind, Meta, NewTree, Script, Source};
use crate::tree::{files_of, old_entries_of, shown, tree_error, walk_open, TreeReader};

/// What a tree application did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TreeApplied {
    /// Regular files written.
    pub files: usize,
    /// Directories made (the root not counted).
    pub dirs: usize,
    /// Symbolic links made.
    pub links: usize,
    /// Bytes written by sections.
    pub new_len: u64,
    /// Bytes copied from whole old files.
    pub copied_len: u64,
    /// Sections applied.
    pub sections: usize,
}

/// The private tree, `name` in the directory `parent`: removed when dropped unless kept
/// (through descriptors, whatever its depth, its links never followed).
struct TempTree<'a> {
    parent: &'a Dir,
    name: Vec<u8>,
    keep: bool,
}

impl Drop for TempTree<'_> {
    fn drop(&mut self) {
        if !self.keep {
            let _ = self.parent.remove_tree(OsStr::from_bytes(&self.name));
        }
    }
}

/// Makes the private directory `.BASE.swath-tmp.XXXXXX` (mode 0700, the X's random, as
/// `mkdtemp` makes them) in `parent`, relative to its descriptor; returns its name.
fn make_private(parent: &Dir, base: &[u8]) -> io::Result<Vec<u8>> {
    const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    for _ in 0..100 {
        let mut random = [0u8; 6];
        // SAFETY: getrandom fills the buffer we own, of the length passed.
        let n = unsafe { libc::getrandom(random.as_mut_ptr().cast(), random.len(), 0) };
        if n != random.len() as isize {
            return Err(io::Error::last_os_error());
        }
        let mut name = [&b"."[..], base, b".swath-tmp."].concat();
        name.extend(random.iter().map(|&r| LETTERS[r as usize % LETTERS.len()]));
        match parent.make_dir(&name, 0o700) {
            Ok(()) => return Ok(name),
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::from_raw_os_error(libc::EEXIST))
}

/// Directories of the new tree held open at once below the ones kept at intervals.
const CHAIN_HELD: usize = 64;

/// Every this many levels a directory of the way stays open, so one let go is reopened
/// from at most this many levels above it.
const CHAIN_SPACING: usize = 64;

/// The directories on the way to the one last used, open, for making and finishing the
/// entries of a [`NewTree`] relative to their parent's descriptor: entries come in
/// creation order (or its reverse), so an entry's parent is found by moving along the way,
/// never by resolving its path. The deepest [`CHAIN_HELD`] directories of the way are held,
/// and one every [`CHAIN_SPACING`] levels above them; one let go is opened again from the
/// nearest held above it, without following a link.
struct DirChain<'a> {
    root: &'a Dir,
    tree: &'a NewTree,
    way: Vec<(usize, Option<Dir>)>,
}

impl<'a> DirChain<'a> {
    fn new(root: &'a Dir, tree: &'a NewTree) -> DirChain<'a> {
        DirChain {
            root,
            tree,
            way: Vec::new(),
        }
    }

    /// Entry `i`'s parent directory.
    fn parent_of(&mut self, i: usize) -> io::Result<&Dir> {
        let Some(target) = self.tree.parent(i) else {
            return Ok(self.root);
        };
        // The part of the way that leads to the target, then down to it.
        let mut down = Vec::new();
        let mut at = Some(target);
        while let Some(n) = at {
            let d = self.tree.depth(n);
            if d <= self.way.len() && self.way[d - 1].0 == n {
                break;
            }
            down.push(n);
            at = self.tree.parent(n);
        }
        self.way.truncate(at.map_or(0, |n| self.tree.depth(n)));
        let tree = self.tree;
        for &n in down.iter().rev() {
            let dir = self.last()?.open_dir(tree.name(n), Links::Refuse)?;
            self.way.push((n, Some(dir)));
            let len = self.way.len();
            if len > CHAIN_HELD && !(len - CHAIN_HELD).is_multiple_of(CHAIN_SPACING) {
                self.way[len - CHAIN_HELD - 1].1 = None;
            }
        }
        self.last()
    }

    /// The deepest directory of the way, opened again if it was let go.
    fn last(&mut self) -> io::Result<&Dir> {
        let Some(k) = self.way.len().checked_sub(1) else {
            return Ok(self.root);
        };
        if self.way[k].1.is_none() {
            let held = self.way[..k].iter().rposition(|w| w.1.is_some());
            let from = held.map_or(0, |h| h + 1);
            let mut rel = Vec::new();
            for (n, _) in &self.way[from..=k] {
                if !rel.is_empty() {
                    rel.push(b'/');
                }
                rel.extend_from_slice(self.tree.name(*n));
            }
            let at = match held {
                Some(h) => self.way[h].1.as_ref().expect("held"),
                None => self.root,
            };
            let dir = at.open_dir(&rel, Links::Refuse)?;
            self.way[k].1 = Some(dir);
        }
        Ok(self.way[k].1.as_ref().expect("held"))
    }
}

/// A file `name` in `dir`, which must not exist (not even as a link), mode 0600, `len`
/// bytes long: what is never written reads as zeros, and takes no space (a hole).
fn create_file(dir: &Dir, name: &[u8], len: u64) -> io::Result<()> {
    let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY;
    let file = dir.open_beneath(name, flags, 0o600, Links::Refuse)?;
    if len > 0 {
        file.set_len(len)?;
    }
    Ok(())
}

/// Gives the entry `name` of `dir` the mode and time `m` says (`mode` from it as
/// [`apply_tree`] allows): a link's time only, its mode being no one's to set.
fn finish(dir: &Dir, name: &[u8], is_link: bool, mode: u32, m: &Meta) -> io::Result<()> {
    if !is_link {
        dir.chmod_at(name, mode)?;
    }
    dir.set_mtime_at(name, m.mtime, m.mtime_nsec)
}

/// One slice of a section's bytes: into sectioned file `file`, at `file_off`, from
/// `buf[at..at + len]`.
#[derive(Debug, Clone, Copy)]
struct Part {
    file: usize,
    file_off: u64,
    at: usize,
    len: usize,
    whole: bool,
}

/// The tree being built: its root's descriptor, its entries, NEW_DIR's name for messages,
/// and the progress counter.
struct Building<'a> {
    /// The private tree's root.
    root: &'a Dir,
    /// The tree's entries.
    m: &'a NewTree,
    /// NEW_DIR as named.
    new_name: &'a str,
    /// Advanced by the bytes written, when given.
    progress: Option<&'a AtomicU64>,
}

impl Building<'_> {
    /// Entry `i` as named in messages (under NEW_DIR).
    fn at_new(&self, i: usize) -> String {
        shown(self.new_name, &self.m.path(i))
    }

    /// Entry `i` opened with `flags`, beneath the root without following a link.
    fn open_new(&self, i: usize, flags: i32) -> Result<File, PatchError> {
        self.root
            .open_beneath(&self.m.path(i), flags, 0, Links::Refuse)
            .map_err(|x| PatchError::io(&self.at_new(i), x))
    }

    /// A writer into entry `i`'s file `f` (sized when it was made: [`create_file`]),
    /// leaving runs of zeros as holes, its errors naming the entry under NEW_DIR.
    fn writer<'f>(&self, i: usize, f: &'f File) -> Result<BlockWriter<'f>, PatchError> {
        let opts = BlockOptions {
            sparse: true,
            ..BlockOptions::default()
        };
        Ok(BlockWriter::presized(
            f,
            self.at_new(i),
            file_len(self.m, i),
            opts,
        )?)
    }

    /// Advances the progress counter, if any, by `n` bytes.
    fn advance(&self, n: u64) {
        if let Some(p) = self.progress {
            p.fetch_add(n, Ordering::Relaxed);
        }
    }
}

/// Applies the tree patch `patch` to the tree `old_dir`, building NEW at `new_dir`.
pub fn apply_tree(
    old_dir: &Path,
    patch: &PatchFile,
    new_dir: &Path,
    progress: Option<&AtomicU64>,
) -> Result<TreeApplied, PatchError> {
    let old_name = old_dir.to_string_lossy().into_owned();
    let new_name = new_dir.to_string_lossy().into_owned();
    let h = &patch.header;
    let Some(script) = patch.manifest()? else {
        return Err(PatchError::Usage(format!(
            "{}: a patch of one file: OLD and NEW must be files",
            patch.name()
        )));
    };
    let existed = new_dir_state(new_dir, &new_name)?;
    let (old, m) = old_tree_and_new(old_dir, &old_name, patch, &script)?;
    let parts = plan_parts(patch, &m)?;

    // The private tree beside NEW_DIR, made and removed relative to its directory.
    let dir = match new_dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let base = new_dir
        .file_name()
        .map(|n| n.as_bytes().to_vec())
        .unwrap_or_default();
    let parent = Dir::open_to_list(dir).map_err(|e| PatchError::io(&new_name, e))?;
    let temp = TempTree {
        parent: &parent,
        name: make_private(&parent, &base).map_err(|e| PatchError::io(&new_name, e))?,
        keep: false,
    };
    // Opened without following a link: nothing but the directory just made.
    let root = parent
        .open_dir(&temp.name, Links::Refuse)
        .map_err(|e| PatchError::io(&new_name, e))?;
    let b = Building {
        root: &root,
        m: &m,
        new_name: &new_name,
        progress,
    };
    let mut done = TreeApplied {
        sections: patch.entries.len(),
        new_len: h.new_len,
        ..TreeApplied::default()
    };
    create_entries(&b, &mut done)?;
    done.copied_len = write_files(&b, patch, &old, &parts)?;
    set_modes_and_times(&b)?;

    // Into place, relative to the directory held open: never over anything but the empty
    // directory that was there.
    let replace = if existed {
        Replace::Allow
    } else {
        Replace::Never
    };
    parent
        .rename(&temp.name, &base, replace)
        .map_err(|x| match x.raw_os_error() {
            Some(libc::EEXIST) | Some(libc::ENOTEMPTY) => not_empty(&new_name),
            _ => PatchError::io(&new_name, x),
        })?;
    let mut temp = temp;
    temp.keep = true;
    Ok(done)
}

/// NEW_DIR (named `new_name`): absent (false), or an empty directory, not a link to one
/// (true); anything else is refused.
fn new_dir_state(new_dir: &Path, new_name: &str) -> Result<bool, PatchError> {
    match std::fs::symlink_metadata(new_dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(PatchError::io(new_name, e)),
        Ok(md) if md.is_dir() => {
            let empty = std::fs::read_dir(new_dir)
                .map_err(|e| PatchError::io(new_name, e))?
                .next()
                .is_none();
            if !empty {
                return Err(not_empty(new_name));
            }
            Ok(true)
        }
        Ok(_) => Err(not_empty(new_name)),
    }
}

/// OLD walked as make walked it, every file hashed: the whole must be the tree the patch
/// was made from (else the first directory that differs is named). Returns its files and
/// the manifest `script` resolved against it.
fn old_tree_and_new(
    old_dir: &Path,
    old_name: &str,
    patch: &PatchFile,
    script: &Script,
) -> Result<(TreeReader, NewTree), PatchError> {
    let h = &patch.header;
    let old_root = Dir::open_to_list(old_dir).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOTDIR) => PatchError::io(
            old_name,
            io::Error::other(format!(
                "Not a directory ({} is a patch of a directory tree)",
                patch.name()
            )),
        ),
        _ => PatchError::io(old_name, e),
    })?;
    let (_, walked) = walk_open(&old_root, old_name)?;
    let old_entries = old_entries_of(&walked);
    let old = TreeReader::new(old_root, old_name, files_of(&walked));
    drop(walked);
    let sums: Vec<u128> = (0..old.files().len())
        .into_par_iter()
        .map(|i| {
            let f = old.open(i).map_err(|e| tree_error(old_name, e))?;
            file_hash(&f, old.files()[i].len, h.hash_piece)
                .map_err(|e| tree_error(old_name, file_error_of(&old, i, e)))
        })
        .collect::<Result<_, _>>()?;
    if crate::manifest::old_hash(&old_entries, &sums) != h.old_hash {
        let dir = crate::manifest::differing_dir(&old_entries, &sums, &script.digests());
        return Err(PatchError::WrongOldTree {
            path: match dir {
                Some(d) if !d.is_empty() => shown(old_name, d),
                _ => old_name.to_string(),
            },
            why: "a file was added, removed, resized or changed".into(),
        });
    }
    let m = script
        .resolve_tree(&old_entries, h.new_len)
        .map_err(|e| PatchError::invalid(patch.name(), e.0))?;
    Ok((old, m))
}

/// Every entry of the tree made, relative to its parent's descriptor (directories mode
/// 0700, files empty or holes of their length), counted in `done`.
fn create_entries(b: &Building<'_>, done: &mut TreeApplied) -> Result<(), PatchError> {
    let m = b.m;
    let mut chain = DirChain::new(b.root, m);
    for (i, e) in m.nodes().iter().enumerate() {
        let name = m.name(i);
        let r = chain.parent_of(i).and_then(|parent| match &e.kind {
            Kind::Dir => {
                done.dirs += 1;
                parent.make_dir(name, 0o700)
            }
            Kind::Link { target } => {
                done.links += 1;
                parent.make_symlink(target, name)
            }
            Kind::File { len, .. } => {
                done.files += 1;
                create_file(parent, name, *len)
            }
        });
        r.map_err(|x| PatchError::io(&b.at_new(i), x))?;
    }
    Ok(())
}

/// The files' bytes: sections on all cores (`parts` saying where each goes), whole old
/// files copied; every file hashed, and the tree must make NEW's hash. Returns the bytes
/// copied from old files.
fn write_files(
    b: &Building<'_>,
    patch: &PatchFile,
    old: &TreeReader,
    parts: &[Vec<Part>],
) -> Result<u64, PatchError> {
    let m = b.m;
    let sectioned: Vec<usize> = (0..m.len())
        .filter(|&i| {
            matches!(
                m.node(i).kind,
                Kind::File {
                    source: Source::Sections,
                    ..
                }
            )
        })
        .collect();
    let mut hashes = apply_sections(b, patch, old, parts, &sectioned)?;
    let copies: Vec<(usize, usize)> = (0..m.len())
        .filter_map(|i| match m.node(i).kind {
            Kind::File {
                source: Source::Old(k),
                ..
            } => Some((i, k)),
            _ => None,
        })
        .collect();
    let copied = copy_old_files(b, old, &copies)?;
    let copied_len = copies.iter().map(|&(_, k)| old.files()[k].len).sum();
    hashes.extend(copied);
    // Files in several sections: hashed from what was written.
    let spread: Vec<(usize, u128)> = sectioned
        .par_iter()
        .filter(|&&i| !hashes.contains_key(&i) && file_len(m, i) > 0)
        .map(|&i| {
            let f = b.open_new(i, libc::O_RDONLY)?;
            file_hash(&f, file_len(m, i), PIECE)
                .map(|x| (i, x))
                .map_err(|x| PatchError::io(&b.at_new(i), x))
        })
        .collect::<Result<_, _>>()?;
    hashes.extend(spread);
    let mut new_sums = Vec::new();
    for (i, e) in m.nodes().iter().enumerate() {
        if let Kind::File { len, .. } = e.kind {
            let x = match hashes.get(&i) {
                Some(&x) => x,
                None if len == 0 => slice_hash(&[], PIECE),
                None => return Err(wrong_new_tree(b)),
            };
            new_sums.extend_from_slice(&x.to_le_bytes());
        }
    }
    if xxh3_128(&new_sums) != patch.header.new_hash {
        return Err(wrong_new_tree(b));
    }
    Ok(copied_len)
}

/// The error of a tree that is not NEW once built.
fn wrong_new_tree(b: &Building<'_>) -> PatchError {
    PatchError::WrongNewTree {
        path: b.new_name.to_string(),
    }
}

/// The sections applied on all cores, each writing its slices (`parts`) into the
/// sectioned files (`sectioned`: their entries); returns the hashes of the files a
/// section holds whole, by entry.
fn apply_sections(
    b: &Building<'_>,
    patch: &PatchFile,
    old: &TreeReader,
    parts: &[Vec<Part>],
    sectioned: &[usize],
) -> Result<HashMap<usize, u128>, PatchError> {
    let whole: Vec<Vec<(usize, u128)>> = patch
        .entries
        .par_iter()
        .enumerate()
        .map_init(
            Vec::new,
            |made, (k, e)| -> Result<Vec<(usize, u128)>, PatchError> {
                // As a file's apply: the section read where it lies, a piece at a time, into
                // its slice of NEW (every byte written by an op: a buffer reused from the
                // last section is not cleared first).
                made.resize(e.new_len as usize, 0);
                patch.rebuild_section(k, e, old, made, |io| tree_error(old.name(), io))?;
                let mut hashes = Vec::new();
                for p in &parts[k] {
                    let i = sectioned[p.file];
                    let bytes = &made[p.at..p.at + p.len];
                    let f = b.open_new(i, libc::O_WRONLY)?;
                    let writer = b.writer(i, &f)?;
                    writer.lane().write_at(p.file_off, bytes)?;
                    writer.finish()?;
                    if p.whole {
                        hashes.push((i, slice_hash(bytes, PIECE)));
                    }
                }
                b.advance(e.new_len);
                Ok(hashes)
            },
        )
        .collect::<Result<_, _>>()?;
    Ok(whole.into_iter().flatten().collect())
}

/// The new files that are whole old files (`copies`: entry, old file) copied on all
/// cores a piece at a time; returns their hashes, by entry.
fn copy_old_files(
    b: &Building<'_>,
    old: &TreeReader,
    copies: &[(usize, usize)],
) -> Result<Vec<(usize, u128)>, PatchError> {
    copies
        .par_iter()
        .map_init(
            Vec::new,
            |buf, &(i, k)| -> Result<(usize, u128), PatchError> {
                let len = old.files()[k].len;
                let from = old.open(k).map_err(|e| tree_error(old.name(), e))?;
                let to = b.open_new(i, libc::O_WRONLY)?;
                let writer = b.writer(i, &to)?;
                let mut lane = writer.lane();
                let mut sums = Vec::new();
                let mut off = 0u64;
                while off < len {
                    let n = (len - off).min(PIECE) as usize;
                    buf.resize(n, 0);
                    FileExt::read_exact_at(&from, buf, off).map_err(|e| match e.kind() {
                        io::ErrorKind::UnexpectedEof => {
                            PatchError::Engine(swath_engine::EngineError::Modified {
                                path: old.shown(k).into(),
                            })
                        }
                        _ => PatchError::io(&old.shown(k), e),
                    })?;
                    lane.write_at(off, buf)?;
                    sums.push(xxh3_128(buf));
                    off += n as u64;
                }
                drop(lane);
                writer.finish()?;
                b.advance(len);
                Ok((i, xxh3_128(&le_list(&sums))))
            },
        )
        .collect::<Result<_, _>>()
}

/// Modes and times: files and links, then directories deepest first, then the root (as
/// root, without the set-user-ID and set-group-ID bits).
fn set_modes_and_times(b: &Building<'_>) -> Result<(), PatchError> {
    let m = b.m;
    // SAFETY: geteuid has no preconditions.
    let root_user = unsafe { libc::geteuid() } == 0;
    let mode_of = |m: &Meta| {
        if root_user {
            m.mode & !0o6000
        } else {
            m.mode
        }
    };
    let mut chain = DirChain::new(b.root, m);
    let is_dir = |i: &usize| m.node(*i).kind == Kind::Dir;
    let order = (0..m.len())
        .filter(|i| !is_dir(i))
        .chain((0..m.len()).rev().filter(is_dir));
    for i in order {
        let e = m.node(i);
        let is_link = matches!(e.kind, Kind::Link { .. });
        let r = chain
            .parent_of(i)
            .and_then(|parent| finish(parent, m.name(i), is_link, mode_of(&e.meta), &e.meta));
        r.map_err(|x| PatchError::io(&b.at_new(i), x))?;
    }
    drop(chain);
    finish(b.root, b".", false, mode_of(&m.root), &m.root)
        .map_err(|x| PatchError::io(b.new_name, x))
}

/// A read error of old file `i`, naming it.
fn file_error_of(old: &TreeReader, i: usize, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", old.shown(i)))
}

fn not_empty(name: &str) -> PatchError {
    PatchError::io(
        name,
        io::Error::other(
            "exists and is not an empty directory (a tree is built only where nothing is)",
        ),
    )
}

fn le_list(sums: &[u128]) -> Vec<u8> {
    let mut v = Vec::with_capacity(sums.len() * 16);
    for s in sums {
        v.extend_from_slice(&s.to_le_bytes());
    }
    v
}

fn file_len(m: &NewTree, i: usize) -> u64 {
    match m.node(i).kind {
        Kind::File { len, .. } => len,
        _ => 0,
    }
}

/// Which slices of which files each section makes, checking that every section lies
/// inside one file or holds whole files (a forged table cannot make a section write across
/// a file's end).
fn plan_parts(patch: &PatchFile, m: &NewTree) -> Result<Vec<Vec<Part>>, PatchError> {
    let bad = || {
        PatchError::invalid(
            patch.name(),
            "damaged: the sections do not fit the tree's files",
        )
    };
    let mut parts: Vec<Vec<Part>> = vec![Vec::new(); patch.entries.len()];
    let mut start = 0u64;
    let mut file = 0usize;
    for e in m.nodes() {
        let Kind::File {
            len,
            source: Source::Sections,
        } = e.kind
        else {
            continue;
        };
        let f = file;
        file += 1;
        if len == 0 {
            continue;
        }
        let end = start + len;
        let k = patch
            .entries
            .partition_point(|s| s.new_offset <= start)
            .checked_sub(1)
            .ok_or_else(bad)?;
        let s = &patch.entries[k];
        if s.new_offset + s.new_len >= end {
            parts[k].push(Part {
                file: f,
                file_off: 0,
                at: (start - s.new_offset) as usize,
                len: len as usize,
                whole: true,
            });
        } else {
            // Longer than its section: the file's own sections, from its start to its end.
            let mut j = k;
            if s.new_offset != start {
                return Err(bad());
            }
            while j < patch.entries.len() && patch.entries[j].new_offset < end {
                let s = &patch.entries[j];
                if s.new_offset + s.new_len > end {
                    return Err(bad());
                }
                parts[j].push(Part {
                    file: f,
                    file_off: s.new_offset - start,
                    at: 0,
                    len: s.new_len as usize,
                    whole: false,
                });
                j += 1;
            }
        }
        start = end;
    }
    Ok(parts)
}
