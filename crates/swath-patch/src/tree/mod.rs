//! Patches of directory trees (`swath patch make OLD_DIR NEW_DIR PATCH`).
//!
//! A tree patch is a file patch's container with the TREE flag (docs/patch-format.md,
//! "Trees"). OLD is the old tree's regular files laid end to end, in the order of a
//! depth-first walk with names sorted by their bytes, read through a [`TreeReader`] (one
//! address space, files opened lazily, a bounded number of descriptors): a copy may come
//! from any old file, so content of renamed, moved or duplicated files is found wherever it
//! was. NEW is the new files whose bytes the sections make, end to end likewise; a new
//! file whose length and hash equal an old file's (unchanged, renamed, copied) is not in
//! NEW at all: the manifest names the old file and apply copies it.
//!
//! Make runs the seed's pipeline:
//! 1. Both trees walked through directory descriptors ([`swath_engine::walk`], sorted, no
//!    recursion, any depth; links recorded, never followed; special files refused).
//! 2. The old files' signatures by the memory-limited parallel for
//!    ([`swath_engine::memfor`]), each file read under the I/O semaphore and cut into
//!    chunks outside it (the CDC restarts at each file's start), then one [`ChunkTable`]
//!    over all of them at their offsets in OLD.
//! 3. The new files that may equal an old file (one has their length) hashed likewise.
//! 4. NEW cut into sections: whole small files packed together up to the section length,
//!    a larger file in sections of its own; sections matched and encoded on all cores by
//!    [`make_section`] (the file patch's own), in batches written in order.
//! 5. The manifest, the section table, the header; then both trees are walked again and
//!    every entry compared: a tree that changed while read is an error, not a wrong patch.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use swath_engine::dirs::{self, Dir, Links, Stat};
use swath_engine::memfor::{memory_limited_for, IoSemaphore};
use swath_engine::{AtomicOutput, EngineError};
use xxhash_rust::xxh3::xxh3_128;

use crate::apply::Census;
use crate::cdc::{Kind as ChunkKind, Params};
use crate::error::PatchError;
use crate::format::{
    encode_tail, encode_tree_record, section_sum, Entry, Header, Level, FLAG_TREE, HEADER_LEN,
};
use crate::hash::{file_hash, slice_hash, PIECE};
use crate::make::{make_section_refined, Format, MakeOptions, OldSide, Sink};
use crate::manifest::{Kind, Manifest, Meta, NewEntry, OldEntry, OldKind, Source};
use crate::ops::Op;
use crate::signature::{signature_and_hash, signature_of_slice, Chunk};
use crate::source::ReadAt;
use crate::table::ChunkTable;

/// Readers of one device at once when nothing better is known: the seam where device
/// detection (`swath_engine::sysinfo`, 1 on a rotational device) and `--io-threads` plug in,
/// through [`TreeOptions::io_readers`].
pub const IO_READERS: usize = 2;

/// Descriptors a [`TreeReader`] keeps open at most.
const OPEN_FILES: usize = 64;

/// How to make a tree patch.
#[derive(Debug, Clone)]
pub struct TreeOptions {
    /// The matching, as for a file (`format` must be swath).
    pub make: MakeOptions,
    /// The memory budget of the memory-limited parallel for, in bytes.
    pub memory: u64,
    /// Files read at once (the I/O semaphore's permits).
    pub io_readers: usize,
}

impl Default for TreeOptions {
    fn default() -> Self {
        TreeOptions {
            make: MakeOptions::default(),
            memory: swath_engine::sysinfo::available_memory().unwrap_or(1 << 30),
            io_readers: IO_READERS,
        }
    }
}

/// What a tree make did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TreeMade {
    /// Regular files in the old tree.
    pub old_files: usize,
    /// Bytes of the old tree's regular files (OLD).
    pub old_len: u64,
    /// Regular files in the new tree.
    pub new_files: usize,
    /// Directories in the new tree (its root not counted).
    pub new_dirs: usize,
    /// Symbolic links in the new tree.
    pub new_links: usize,
    /// Old files whose path is not a file of the new tree.
    pub deleted_files: usize,
    /// New files that are whole old files (unchanged, renamed or copied): no sections.
    pub identical_files: usize,
    /// Their bytes.
    pub identical_bytes: u64,
    /// Bytes of the new files made by sections (NEW).
    pub new_len: u64,
    /// The patch's length (what it would be, with `--dry-run`).
    pub patch_len: u64,
    /// The manifest's length in the patch.
    pub manifest_len: u64,
    /// Sections written.
    pub sections: usize,
    /// OLD's distinct chunks in the table.
    pub old_chunks: usize,
    /// What the sections' ops are.
    pub census: Census,
    /// Seconds spent walking and on OLD's signatures.
    pub signature_secs: f64,
    /// Seconds spent hashing, matching and encoding NEW.
    pub match_secs: f64,
}

/// `root/rel` as shown to the user.
pub fn shown(root: &str, rel: &[u8]) -> String {
    format!(
        "{}/{}",
        root.trim_end_matches('/'),
        String::from_utf8_lossy(rel)
    )
}

/// An I/O error about one file of a tree, carried through [`ReadAt`] (whose errors have no
/// name) so the message names the file.
#[derive(Debug)]
struct FileError {
    path: String,
    cause: io::Error,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.cause)
    }
}

impl std::error::Error for FileError {}

fn file_error(path: String, cause: io::Error) -> io::Error {
    io::Error::new(cause.kind(), FileError { path, cause })
}

/// The error `e` (from a [`TreeReader`] read, or about `fallback`) as one line naming the
/// file; a file that ended early changed while it was read.
pub fn tree_error(fallback: &str, e: io::Error) -> PatchError {
    let kind = e.kind();
    let (path, cause) = match e.into_inner() {
        Some(inner) => match inner.downcast::<FileError>() {
            Ok(fe) => (fe.path, fe.cause),
            Err(other) => (fallback.to_string(), io::Error::new(kind, other)),
        },
        None => (fallback.to_string(), io::Error::from(kind)),
    };
    if cause.kind() == io::ErrorKind::UnexpectedEof {
        return PatchError::Engine(EngineError::Modified { path: path.into() });
    }
    PatchError::io(&path, cause)
}

// ---------------------------------------------------------------------------------------
// The tree's files as one address space.

/// One file of a [`TreeReader`].
#[derive(Debug, Clone)]
pub struct TreeFile {
    /// Path relative to the root.
    pub path: Vec<u8>,
    /// Length (the file's bytes in the address space).
    pub len: u64,
    /// Device and inode the walk saw (checked when the file is opened), if known.
    pub id: Option<(u64, u64)>,
}

struct FdCache {
    open: Vec<Option<Arc<File>>>,
    order: VecDeque<usize>,
}

/// A tree's regular files end to end, as one [`ReadAt`]: files are opened lazily beneath
/// the root (no link followed), at most 64 at a time, so a tree of 100,000 files needs no
/// more descriptors than one of ten.
pub struct TreeReader {
    root: Dir,
    name: String,
    files: Vec<TreeFile>,
    starts: Vec<u64>,
    len: u64,
    cache: Mutex<FdCache>,
}

impl TreeReader {
    /// The files of the tree at `root` (named `name` in messages), in this order.
    pub fn new(root: Dir, name: &str, files: Vec<TreeFile>) -> TreeReader {
        let mut starts = Vec::with_capacity(files.len());
        let mut len = 0u64;
        for f in &files {
            starts.push(len);
            len += f.len;
        }
        TreeReader {
            root,
            name: name.to_string(),
            cache: Mutex::new(FdCache {
                open: vec![None; files.len()],
                order: VecDeque::new(),
            }),
            files,
            starts,
            len,
        }
    }

    /// The tree's name in messages.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Bytes of all the files.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the files hold no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The files.
    pub fn files(&self) -> &[TreeFile] {
        &self.files
    }

    /// Where file `i` starts in the address space.
    pub fn start(&self, i: usize) -> u64 {
        self.starts[i]
    }

    /// The root directory.
    pub fn root(&self) -> &Dir {
        &self.root
    }

    /// File `i` as shown to the user.
    pub fn shown(&self, i: usize) -> String {
        shown(&self.name, &self.files[i].path)
    }

    /// Opens file `i` (not cached): a regular file beneath the root, the one the walk saw.
    pub fn open(&self, i: usize) -> io::Result<File> {
        let f = &self.files[i];
        let err = |e| file_error(self.shown(i), e);
        // Beneath the root, no link followed anywhere on the way.
        let file = self
            .root
            .open_beneath(&f.path, libc::O_RDONLY | libc::O_NONBLOCK, 0, Links::Refuse)
            .map_err(err)?;
        let m = file.metadata().map_err(err)?;
        if !m.is_file() {
            return Err(err(io::Error::other("not a regular file")));
        }
        if f.id.is_some_and(|id| id != (m.dev(), m.ino())) {
            return Err(err(io::Error::from(io::ErrorKind::UnexpectedEof)));
        }
        Ok(file)
    }

    /// Runs `work` on file `i`, opened now; errors name the file.
    pub fn with_file<T>(
        &self,
        i: usize,
        work: impl FnOnce(&File) -> io::Result<T>,
    ) -> Result<T, PatchError> {
        let f = self.open(i).map_err(|e| tree_error(&self.name, e))?;
        work(&f).map_err(|e| tree_error(&self.name, file_error(self.shown(i), e)))
    }

    /// File `i` whole, read while holding a permit of `sem` (given back before the caller
    /// computes on the bytes).
    pub fn read_whole(
        &self,
        i: usize,
        sem: &IoSemaphore,
    ) -> Result<swath_engine::buf::PageBuf, PatchError> {
        let mut buf = swath_engine::buf::PageBuf::zeroed(self.files[i].len as usize);
        let _reading = sem.read();
        self.with_file(i, |f| FileExt::read_exact_at(f, &mut buf, 0))?;
        Ok(buf)
    }

    /// File `i`, from the cache of open descriptors or opened now.
    pub fn file(&self, i: usize) -> io::Result<Arc<File>> {
        let lock = || self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = &lock().open[i] {
            return Ok(f.clone());
        }
        let f = Arc::new(self.open(i)?);
        let mut c = lock();
        if c.open[i].is_none() {
            c.open[i] = Some(f.clone());
            c.order.push_back(i);
            while c.order.len() > OPEN_FILES {
                let old = c.order.pop_front().expect("not empty");
                c.open[old] = None;
            }
        }
        Ok(f)
    }
}

impl ReadAt for TreeReader {
    fn read_exact_at(&self, mut buf: &mut [u8], mut at: u64) -> io::Result<()> {
        if at
            .checked_add(buf.len() as u64)
            .is_none_or(|e| e > self.len)
        {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past the end",
            ));
        }
        while !buf.is_empty() {
            // The last file starting at or before `at` (empty files share their start).
            let i = self.starts.partition_point(|&s| s <= at) - 1;
            let off = at - self.starts[i];
            let n = ((self.files[i].len - off) as usize).min(buf.len());
            let f = self.file(i)?;
            FileExt::read_exact_at(&*f, &mut buf[..n], off)
                .map_err(|e| file_error(self.shown(i), e))?;
            buf = &mut buf[n..];
            at += n as u64;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Walking.

/// What a walked entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkedKind {
    /// A directory.
    Dir,
    /// A regular file of this length.
    File(u64),
    /// A symbolic link to this target.
    Link(Vec<u8>),
}

/// One entry found by [`walk`].
#[derive(Debug, Clone)]
pub struct Walked {
    /// Path relative to the root.
    pub path: Vec<u8>,
    /// What it is.
    pub kind: WalkedKind,
    /// Mode and time.
    pub meta: Meta,
    /// Device and inode.
    pub id: (u64, u64),
    /// Modification time and change time, to see later whether it changed.
    pub stamp: (i64, i64, i64, i64),
}

/// A walked entry at `path` of kind `kind` whose `lstat` is `st`.
fn walked_of(path: Vec<u8>, kind: WalkedKind, st: &Stat) -> Walked {
    Walked {
        path,
        kind,
        meta: Meta {
            mode: st.st_mode & 0o7777,
            mtime: st.st_mtime,
            mtime_nsec: st.st_mtime_nsec.clamp(0, 999_999_999) as u32,
        },
        id: (st.st_dev, st.st_ino),
        stamp: (
            st.st_mtime,
            st.st_mtime_nsec as i64,
            st.st_ctime,
            st.st_ctime_nsec as i64,
        ),
    }
}

/// `root/rel` as shown to the user (the root itself when `rel` is empty).
fn shown_rel(root: &str, rel: &[u8]) -> String {
    if rel.is_empty() {
        root.to_string()
    } else {
        shown(root, rel)
    }
}

/// Every entry under the directory `root` (named `name` in messages), depth first, each
/// directory before what it holds, names sorted by their bytes; links are recorded, never
/// followed; a device, FIFO or socket is refused naming it. Returns the root too, as an
/// entry of empty path.
pub fn walk(root: &Path, name: &str) -> Result<(Walked, Vec<Walked>), PatchError> {
    // Following a link there, as `diff -r` does for its operands.
    let fd = Dir::open_to_list(root).map_err(|e| PatchError::io(name, e))?;
    walk_open(&fd, name)
}

/// [`walk`] of the directory open as `root`.
pub fn walk_open(root: &Dir, name: &str) -> Result<(Walked, Vec<Walked>), PatchError> {
    let mut out = Vec::new();
    let top = walk_with(root, name, &mut |w| {
        out.push(w);
        Ok(())
    })?;
    Ok((top, out))
}

/// Walks the directory open as `root` through descriptors (no recursion, no path
/// resolved: any depth) and gives each entry, in walk order, to `each`; returns the root
/// as an entry of empty path. The first error (the walk's, or `each`'s) ends it.
fn walk_with(
    root: &Dir,
    name: &str,
    each: &mut dyn FnMut(Walked) -> Result<(), PatchError>,
) -> Result<Walked, PatchError> {
    use swath_engine::walk::{walk_dir, Found, Kind as EntryKind, Options, Order, Step};
    let st = dirs::fstat(root).map_err(|e| PatchError::io(name, e))?;
    let top = walked_of(Vec::new(), WalkedKind::Dir, &st);
    let fd = root.try_clone().map_err(|e| PatchError::io(name, e))?;
    let opts = Options {
        follow: swath_engine::walk::Follow::Never,
        order: Order::Sorted,
        stat: true,
    };
    let mut failed = None;
    walk_dir(fd, std::ffi::OsStr::new(name), &opts, &mut |found| {
        let r = match found {
            Found::Entry(e) => {
                let st = e.stat.expect("every entry is stat'ed");
                let kind = match e.kind {
                    EntryKind::Dir => Ok(WalkedKind::Dir),
                    EntryKind::File => Ok(WalkedKind::File(st.st_size as u64)),
                    EntryKind::Symlink => e
                        .dir()
                        .read_link_at(e.name.as_bytes())
                        .map(WalkedKind::Link)
                        .map_err(|x| PatchError::io(&shown(name, e.rel), x)),
                    EntryKind::Special | EntryKind::Dangling => {
                        Err(special(&shown(name, e.rel), st))
                    }
                };
                kind.and_then(|k| each(walked_of(e.rel.to_vec(), k, st)))
            }
            Found::Error { rel, error, .. } => Err(PatchError::io(&shown_rel(name, rel), error)),
            Found::Loop { rel, .. } => Err(PatchError::io(
                &shown(name, rel),
                io::Error::other("a directory inside itself (a loop of mounts)"),
            )),
        };
        match r {
            Ok(()) => Step::Continue,
            Err(e) => {
                failed = Some(e);
                Step::Stop
            }
        }
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(top),
    }
}

/// The refusal of a device, FIFO or socket at `what` (whose `lstat` is `st`).
fn special(what: &str, st: &Stat) -> PatchError {
    let which = match st.st_mode & libc::S_IFMT {
        libc::S_IFIFO => "a FIFO",
        libc::S_IFSOCK => "a socket",
        libc::S_IFBLK => "a block device",
        _ => "a character device",
    };
    PatchError::io(
        what,
        io::Error::other(format!(
            "{which}: swath patch handles regular files, directories and symbolic links only"
        )),
    )
}

/// The regular files of a walk, to read as one address space (each checked, when opened,
/// to be the file the walk saw).
pub fn files_of(w: &[Walked]) -> Vec<TreeFile> {
    w.iter()
        .filter_map(|e| match e.kind {
            WalkedKind::File(len) => Some(TreeFile {
                path: e.path.clone(),
                len,
                id: Some(e.id),
            }),
            _ => None,
        })
        .collect()
}

/// Checks that every walked entry (and the root, open as `root`) is as it was, walking the
/// tree again: a tree that changed while it was read makes an error, not a patch of a
/// state that never existed.
fn check_unchanged(
    root: &Dir,
    name: &str,
    root_stamp: (i64, i64, i64, i64),
    walked: &[Walked],
) -> Result<(), PatchError> {
    let modified = |path: String| PatchError::Engine(EngineError::Modified { path: path.into() });
    let mut k = 0usize;
    let top = walk_with(root, name, &mut |now| {
        let Some(w) = walked.get(k) else {
            return Err(modified(shown(name, crate::manifest::parent(&now.path))));
        };
        k += 1;
        if now.path != w.path {
            return Err(modified(shown_rel(name, crate::manifest::parent(&w.path))));
        }
        let what = shown(name, &w.path);
        if let (WalkedKind::File(len), WalkedKind::File(now_len)) = (&w.kind, &now.kind) {
            if len != now_len {
                return Err(PatchError::Engine(EngineError::Changed {
                    path: what.into(),
                    before: *len,
                    after: *now_len,
                }));
            }
        }
        if now.id != w.id || now.stamp != w.stamp {
            return Err(modified(what));
        }
        Ok(())
    })?;
    if top.stamp != root_stamp || k != walked.len() {
        return Err(modified(name.to_string()));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Make.

/// A section of NEW: `len` bytes at `offset`.
#[derive(Debug, Clone, Copy)]
struct Cut {
    offset: u64,
    len: u64,
}

/// Cuts NEW (files of `lens`, end to end) into sections of at most `s` bytes: whole files
/// packed together while they fit, a file longer than `s` in sections of its own (its first
/// at the file's start). So every section lies inside one file or holds whole files.
fn pack(lens: &[u64], s: u64) -> Vec<Cut> {
    let mut cuts: Vec<Cut> = Vec::new();
    let mut at = 0u64;
    let mut open: Option<Cut> = None;
    for &len in lens {
        if len == 0 {
            continue;
        }
        if len > s {
            if let Some(c) = open.take() {
                cuts.push(c);
            }
            let mut off = 0;
            while off < len {
                let n = (len - off).min(s);
                cuts.push(Cut {
                    offset: at + off,
                    len: n,
                });
                off += n;
            }
        } else {
            match &mut open {
                Some(c) if c.len + len <= s => c.len += len,
                _ => {
                    if let Some(c) = open.take() {
                        cuts.push(c);
                    }
                    open = Some(Cut { offset: at, len });
                }
            }
        }
        at += len;
    }
    cuts.extend(open);
    cuts
}

/// The section length for `new_len` bytes of NEW on `workers` workers: as for a file,
/// shorter (down to 1 MiB) when NEW is too small to give every worker two sections.
fn section_len_for(new_len: u64, workers: u64, nominal: u64) -> u64 {
    if new_len < 2 * workers * nominal {
        (new_len / (2 * workers))
            .next_multiple_of(1 << 16)
            .clamp((1 << 20).min(nominal), nominal)
    } else {
        nominal
    }
}

/// The zstd level of the manifest (mostly paths: worth more effort than the sections).
fn manifest_level(level: Level) -> i32 {
    match level {
        Level::Fast => 3,
        Level::Default => 12,
        Level::Max => 19,
    }
}

/// What the phases of a tree's make share: the matching's options, the chunking, the
/// worker pool, the I/O semaphore and the progress counter.
struct Ctx<'a> {
    /// The matching, as for a file.
    mo: &'a MakeOptions,
    /// The memory budget of the memory-limited parallel for, in bytes.
    memory: u64,
    /// The chunking of OLD and NEW.
    params: Params,
    /// Worker threads (at least 1).
    threads: usize,
    /// The pool they run in.
    pool: rayon::ThreadPool,
    /// Files read at once.
    sem: IoSemaphore,
    /// Bytes per read of a file (at least 64 KiB): a file up to this long is read whole.
    io_chunk: u64,
    /// Advanced by the bytes of OLD and NEW done, when given.
    progress: Option<&'a AtomicU64>,
}

impl<'a> Ctx<'a> {
    /// The context of a make with `opts`: refused unless in swath's format.
    fn new(opts: &'a TreeOptions, progress: Option<&'a AtomicU64>) -> Result<Ctx<'a>, PatchError> {
        let mo = &opts.make;
        if mo.format != Format::Swath {
            return Err(PatchError::Usage(
                "--format vcdiff: VCDIFF patches one file; a tree patch is in swath's format"
                    .into(),
            ));
        }
        let params = Params::new(mo.chunk_avg as usize)
            .map_err(|e| PatchError::Usage(format!("--chunk: {e}")))?
            .with_kernel(mo.tuning.cdc_kernel);
        let threads = mo.threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| PatchError::Usage(format!("cannot start worker threads: {e}")))?;
        Ok(Ctx {
            mo,
            memory: opts.memory,
            params,
            threads,
            pool,
            sem: IoSemaphore::new(opts.io_readers),
            io_chunk: mo.io_chunk.max(1 << 16) as u64,
            progress,
        })
    }

    /// Advances the progress counter, if any, by `n` bytes.
    fn advance(&self, n: u64) {
        if let Some(p) = self.progress {
            p.fetch_add(n, Ordering::Relaxed);
        }
    }
}

/// OLD indexed: its data chunks in a table, and its files' hashes, by content and length.
struct OldIndex {
    /// OLD's data chunks by hash, at their offsets in OLD.
    table: ChunkTable,
    /// The table's bytes (what the memory budget gives it).
    table_bytes: u64,
    /// Each old file's hash.
    hashes: Vec<u128>,
    /// Old files by (length, hash): a new file equal to one is a reference, not sections.
    by_content: HashMap<(u64, u128), usize>,
    /// The old files' lengths.
    lens: HashMap<u64, ()>,
}

/// What writing NEW's sections left: the section table, the census, where the patch's
/// next bytes go, and the pieces' hashes of the files in several sections.
struct Written {
    /// The section table.
    entries: Vec<Entry>,
    /// What the sections' ops are.
    census: Census,
    /// Where the patch's next bytes go.
    at: u64,
    /// Per sectioned file: its hash when a section holds it whole.
    whole: Vec<Option<u128>>,
    /// Per sectioned file: its pieces' hashes (a file in several sections of one piece
    /// each), else empty.
    pieces: Vec<Vec<u128>>,
}

/// OLD as NEW's sections are matched against it.
struct OldTree<'a> {
    /// Its files end to end.
    files: &'a TreeReader,
    /// Its table and seeds, over the files end to end.
    side: OldSide<'a>,
    /// Its files by path.
    by_path: &'a HashMap<&'a [u8], usize>,
}

/// A section's make: its bytes, its sum, its census and the hashes of the files it holds
/// whole (by index in NEW).
type MadeCut = (Vec<u8>, u128, Census, Vec<(usize, u128)>);

/// Makes the patch of the tree `new_dir` from the tree `old_dir` at `patch_path`
/// (atomically), or only measures it when `patch_path` is `None`. `progress`, when given,
/// is advanced by the bytes of OLD and NEW done.
pub fn make_tree(
    old_dir: &Path,
    new_dir: &Path,
    patch_path: Option<&Path>,
    opts: &TreeOptions,
    progress: Option<&AtomicU64>,
) -> Result<TreeMade, PatchError> {
    let cx = Ctx::new(opts, progress)?;
    let (mo, threads) = (cx.mo, cx.threads);
    let old_name = old_dir.to_string_lossy().into_owned();
    let new_name = new_dir.to_string_lossy().into_owned();
    let t0 = Instant::now();
    let old_root = Dir::open_to_list(old_dir).map_err(|e| PatchError::io(&old_name, e))?;
    let new_root = Dir::open_to_list(new_dir).map_err(|e| PatchError::io(&new_name, e))?;
    let (old_walked, new_walked) = cx.pool.install(|| {
        rayon::join(
            || walk_open(&old_root, &old_name),
            || walk_open(&new_root, &new_name),
        )
    });
    let ((old_top, old_walk), (new_top, new_walk)) = (old_walked?, new_walked?);
    let old = TreeReader::new(old_root, &old_name, files_of(&old_walk));
    let index = index_old_tree(&cx, &old)?;
    let old_entries = old_entries_of(&old_walk);
    let old_hash = crate::manifest::old_hash(&old_entries, &index.hashes);
    let signature_secs = t0.elapsed().as_secs_f64();

    // Old files by path: a changed file is matched first against its old version.
    let old_by_path: HashMap<&[u8], usize> = old
        .files()
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_slice(), i))
        .collect();
    let t1 = Instant::now();
    let new_files = files_of(&new_walk);
    let new_copy = new_root
        .try_clone()
        .map_err(|e| PatchError::io(&new_name, e))?;
    let new_all = TreeReader::new(new_copy, &new_name, new_files.clone());
    let (sources, mut new_hashes) = find_identical(&cx, &new_all, &old, &index, &old_by_path)?;
    // NEW: the files made by sections.
    let sectioned: Vec<usize> = (0..new_files.len())
        .filter(|&i| sources[i] == Source::Sections)
        .collect();
    let new = TreeReader::new(
        new_root,
        &new_name,
        sectioned.iter().map(|&i| new_files[i].clone()).collect(),
    );
    let new_len = new.len();
    let s = section_len_for(new_len, threads as u64, mo.section_len);
    let lens: Vec<u64> = new.files().iter().map(|f| f.len).collect();
    let cuts = pack(&lens, s);

    let out = match patch_path {
        Some(p) => Some((AtomicOutput::create(p)?, p.to_string_lossy().into_owned())),
        None => None,
    };
    let sink = match &out {
        Some((o, name)) => Sink::File(o.file(), name),
        None => Sink::Count,
    };
    let mut header = Header {
        old_len: old.len(),
        new_len,
        old_hash,
        new_hash: 0,
        hash_piece: PIECE,
        level: mo.level,
        chunk_avg: mo.chunk_avg,
        section_len: s,
    };
    let chain = header.chain();
    sink.put_at(0, &[0u8; HEADER_LEN])?;
    // OLD's seeds for the approximate matches of `default` and `max`, over the old files
    // end to end as the table is.
    let seeds = match crate::approx::Settings::for_level(mo.level) {
        Some(s) => Some(
            crate::seeds::SeedIndex::build(&old, old.len(), s.seeds, mo.tuning.seed_gate)
                .map_err(|e| PatchError::io(&old_name, e))?,
        ),
        None => None,
    };
    let against = OldTree {
        files: &old,
        side: OldSide {
            table: &index.table,
            seeds: seeds.as_ref(),
            old: &old,
            len: old.len(),
        },
        by_path: &old_by_path,
    };
    let budget = opts.memory.saturating_sub(index.table_bytes);
    let mut w = write_sections(&cx, &sink, chain, &cuts, &new, &against, budget)?;
    hash_pieced_files(&cx, &new, &w.pieces, s, &mut w.whole)?;
    for (f, &h) in w.whole.iter().enumerate() {
        if h.is_some() {
            new_hashes[sectioned[f]] = h;
        }
    }
    header.new_hash = new_tree_hash(&new_files, &new_hashes);

    let mut made = TreeMade {
        old_files: old.files().len(),
        old_len: old.len(),
        new_len,
        sections: cuts.len(),
        old_chunks: index.table.len(),
        signature_secs,
        ..TreeMade::default()
    };
    let manifest = manifest_of(new_top.meta, old_entries, &new_walk, &sources, &mut made);
    made.deleted_files = manifest.summary().deleted_files as usize;
    let raw = manifest.encode(&crate::manifest::dir_digests(&manifest.old, &index.hashes));
    (made.patch_len, made.manifest_len) =
        write_tail(&sink, &header, chain, &w, &raw, mo.level, &new_name)?;
    made.census = w.census;
    made.match_secs = t1.elapsed().as_secs_f64();

    let (old_same, new_same) = cx.pool.install(|| {
        rayon::join(
            || check_unchanged(old.root(), &old_name, old_top.stamp, &old_walk),
            || check_unchanged(new.root(), &new_name, new_top.stamp, &new_walk),
        )
    });
    old_same?;
    new_same?;
    if let Some((o, _)) = out {
        o.commit(false)?;
    }
    Ok(made)
}

/// After the sections (`w`), the manifest `raw` compressed at `level`'s manifest level
/// (an error naming `new_name`), its record and the section table; then the header with
/// the TREE flag at the patch's start. Returns the patch's length and the manifest's
/// (with its record).
fn write_tail(
    sink: &Sink<'_>,
    header: &Header,
    chain: u64,
    w: &Written,
    raw: &[u8],
    level: Level,
    new_name: &str,
) -> Result<(u64, u64), PatchError> {
    let stored = zstd::bulk::compress(raw, manifest_level(level))
        .map_err(|e| PatchError::io(new_name, e))?;
    let mut at = w.at;
    sink.put_at(at, &stored)?;
    let record = encode_tree_record(chain, at, &stored, raw.len() as u64);
    at += stored.len() as u64;
    sink.put_at(at, &record)?;
    at += record.len() as u64;
    let tail = encode_tail(chain, &w.entries, at);
    sink.put_at(at, &tail)?;
    sink.put_at(0, &header.encode_flags(FLAG_TREE))?;
    Ok((
        at + tail.len() as u64,
        stored.len() as u64 + record.len() as u64,
    ))
}

/// OLD's signatures, one task per file, read under the semaphore and cut outside it, then
/// its data chunks in one table at their offsets in OLD and its files by content: refused
/// when the table needs more than the memory budget.
fn index_old_tree(cx: &Ctx<'_>, old: &TreeReader) -> Result<OldIndex, PatchError> {
    let (io_chunk, params, threads) = (cx.io_chunk, &cx.params, cx.threads);
    let needs: Vec<u64> = old
        .files()
        .iter()
        .map(|f| f.len.min(2 * io_chunk) + f.len / u64::from(cx.mo.chunk_avg.max(1)) * 48)
        .collect();
    let signed: Vec<(Vec<Chunk>, u128)> =
        memory_limited_for(&needs, cx.memory, threads, |i| -> Result<_, PatchError> {
            let len = old.files()[i].len;
            let r = if len <= io_chunk {
                let buf = old.read_whole(i, &cx.sem)?;
                (signature_of_slice(&buf, params), slice_hash(&buf, PIECE))
            } else {
                let _reading = cx.sem.read();
                old.with_file(i, |f| {
                    let (chunks, h) = cx.pool.install(|| {
                        signature_and_hash(
                            f,
                            len,
                            params,
                            io_chunk as usize,
                            threads,
                            cx.mo.tuning.io,
                        )
                    })?;
                    if io_chunk == PIECE {
                        Ok((chunks, h))
                    } else {
                        Ok((chunks, cx.pool.install(|| file_hash(f, len, PIECE))?))
                    }
                })?
            };
            cx.advance(len);
            Ok(r)
        })?;
    let data_chunks: usize = signed
        .iter()
        .map(|(c, _)| c.iter().filter(|c| c.kind == ChunkKind::Data).count())
        .sum();
    let table_bytes = ChunkTable::bytes_for(data_chunks);
    if table_bytes > cx.memory {
        return Err(PatchError::Usage(format!(
            "--memory: OLD's chunk table needs {} MB, more than the {} MB allowed (a larger --chunk makes it smaller)",
            table_bytes.div_ceil(1 << 20),
            cx.memory >> 20
        )));
    }
    let mut table = ChunkTable::with_capacity(data_chunks);
    let mut hashes = Vec::with_capacity(signed.len());
    let mut by_content: HashMap<(u64, u128), usize> = HashMap::new();
    let mut lens: HashMap<u64, ()> = HashMap::new();
    for (i, (chunks, h)) in signed.iter().enumerate() {
        let base = old.start(i);
        for c in chunks.iter().filter(|c| c.kind == ChunkKind::Data) {
            table.insert(c.hash, base + c.offset, c.len);
        }
        hashes.push(*h);
        let len = old.files()[i].len;
        by_content.entry((len, *h)).or_insert(i);
        lens.insert(len, ());
    }
    Ok(OldIndex {
        table,
        table_bytes,
        hashes,
        by_content,
        lens,
    })
}

/// Each new file of `new_all`: an old file's bytes, or NEW's next bytes. The new files that
/// may equal an old one (same length) are hashed to find out; one that does is the old
/// file at its path when that has its bytes (an unchanged file costs nothing in the
/// manifest), else any old file with them. Returns the sources and the hashes found.
fn find_identical(
    cx: &Ctx<'_>,
    new_all: &TreeReader,
    old: &TreeReader,
    index: &OldIndex,
    old_by_path: &HashMap<&[u8], usize>,
) -> Result<(Vec<Source>, Vec<Option<u128>>), PatchError> {
    let (new_files, io_chunk) = (new_all.files(), cx.io_chunk);
    let candidates: Vec<usize> = (0..new_files.len())
        .filter(|&i| new_files[i].len > 0 && index.lens.contains_key(&new_files[i].len))
        .collect();
    let needs: Vec<u64> = candidates
        .iter()
        .map(|&i| new_files[i].len.min(2 * io_chunk))
        .collect();
    let hashed: Vec<u128> = memory_limited_for(
        &needs,
        cx.memory,
        cx.threads,
        |k| -> Result<_, PatchError> {
            let i = candidates[k];
            let len = new_files[i].len;
            let h = if len <= io_chunk {
                slice_hash(&new_all.read_whole(i, &cx.sem)?, PIECE)
            } else {
                let _reading = cx.sem.read();
                new_all.with_file(i, |f| cx.pool.install(|| file_hash(f, len, PIECE)))?
            };
            Ok(h)
        },
    )?;
    // Each new file: an old one's bytes, or NEW's next bytes (its hash found below).
    let mut sources = vec![Source::Sections; new_files.len()];
    let mut new_hashes: Vec<Option<u128>> = vec![None; new_files.len()];
    for (k, &i) in candidates.iter().enumerate() {
        let key = (new_files[i].len, hashed[k]);
        // The old file at the same path first (an unchanged file costs nothing in the
        // manifest), else any old file with these bytes.
        let same = old_by_path
            .get(new_files[i].path.as_slice())
            .copied()
            .filter(|&o| (old.files()[o].len, index.hashes[o]) == key);
        if let Some(o) = same.or_else(|| index.by_content.get(&key).copied()) {
            sources[i] = Source::Old(o);
            new_hashes[i] = Some(hashed[k]);
            cx.advance(new_files[i].len);
        }
    }
    Ok((sources, new_hashes))
}

/// NEW's sections (`cuts`) matched against OLD and encoded on all cores (within `budget`
/// bytes), in batches written in order into `sink` after the header.
fn write_sections(
    cx: &Ctx<'_>,
    sink: &Sink<'_>,
    chain: u64,
    cuts: &[Cut],
    new: &TreeReader,
    old: &OldTree<'_>,
    budget: u64,
) -> Result<Written, PatchError> {
    // Per sectioned file: its hash once known, or its pieces' hashes (a file in several
    // sections of one piece each).
    let mut whole_hashes: Vec<Option<u128>> = vec![None; new.files.len()];
    let mut pieces: Vec<Vec<u128>> = vec![Vec::new(); new.files.len()];
    let mut entries = Vec::with_capacity(cuts.len());
    let mut census = Census::default();
    let mut at = HEADER_LEN as u64;
    let batch = (cx.threads * 2).max(2);
    for (b, group) in cuts.chunks(batch).enumerate() {
        let needs: Vec<u64> = group.iter().map(|c| c.len * 3).collect();
        let made = memory_limited_for(&needs, budget, cx.threads, |k| {
            make_cut(cx, group[k], new, old)
        })?;
        for (k, (bytes, sum, c, whole)) in made.into_iter().enumerate() {
            let i = b * batch + k;
            let cut = cuts[i];
            entries.push(Entry {
                new_offset: cut.offset,
                new_len: cut.len,
                offset: at,
                len: bytes.len() as u64,
                sum: section_sum(chain, i as u64, &bytes),
            });
            sink.put_at(at, &bytes)?;
            at += bytes.len() as u64;
            census.add(&c);
            if whole.is_empty() {
                // Part of one file longer than a section.
                let f = new.starts.partition_point(|&st| st <= cut.offset) - 1;
                pieces[f].push(sum);
            }
            for (f, h) in whole {
                whole_hashes[f] = Some(h);
            }
        }
    }
    Ok(Written {
        entries,
        census,
        at,
        whole: whole_hashes,
        pieces,
    })
}

/// Section `c` of NEW read (under the semaphore), matched against OLD (refined by the
/// hints of its files) and encoded, and the files it holds whole hashed.
fn make_cut(
    cx: &Ctx<'_>,
    c: Cut,
    new: &TreeReader,
    old: &OldTree<'_>,
) -> Result<MadeCut, PatchError> {
    let mut buf = swath_engine::buf::PageBuf::zeroed(c.len as usize);
    {
        let _reading = cx.sem.read();
        new.read_exact_at(&mut buf, c.offset)
            .map_err(|e| tree_error(new.name(), e))?;
    }
    let mut refine = |ops: Vec<Op>| -> io::Result<Vec<Op>> {
        let hints = hints_for(&ops, c, new, old.files, old.by_path);
        crate::hint::match_hinted(ops, &buf, &hints, old.files)
    };
    let m = make_section_refined(&buf, c.offset, &old.side, &cx.params, cx.mo, &mut refine)
        .map_err(|e| tree_error(old.files.name(), e))?;
    // Hashes of the files this section holds whole.
    let first = new.starts.partition_point(|&st| st < c.offset);
    let mut whole = Vec::new();
    let mut f = first;
    while f < new.files.len() && new.starts[f] < c.offset + c.len {
        let (st, len) = (new.starts[f], new.files[f].len);
        if len > 0 && st >= c.offset && st + len <= c.offset + c.len {
            let a = (st - c.offset) as usize;
            whole.push((f, slice_hash(&buf[a..a + len as usize], PIECE)));
        }
        f += 1;
    }
    cx.advance(c.len);
    Ok((m.bytes, m.sum, m.census, whole))
}

/// The hashes of NEW's files in several sections (`pieces`, by file, empty for the others)
/// into `hashes`: from their pieces' hashes when a section (`s` bytes) is a piece, else
/// read again.
fn hash_pieced_files(
    cx: &Ctx<'_>,
    new: &TreeReader,
    pieces: &[Vec<u128>],
    s: u64,
    hashes: &mut [Option<u128>],
) -> Result<(), PatchError> {
    for (f, p) in pieces.iter().enumerate() {
        if p.is_empty() {
            continue;
        }
        let h = if s == PIECE {
            let mut list = Vec::with_capacity(p.len() * 16);
            for x in p {
                list.extend_from_slice(&x.to_le_bytes());
            }
            xxh3_128(&list)
        } else {
            let file = new.open(f).map_err(|e| tree_error(new.name(), e))?;
            cx.pool
                .install(|| file_hash(&file, new.files[f].len, PIECE))
                .map_err(|e| tree_error(&new.shown(f), e))?
        };
        hashes[f] = Some(h);
    }
    Ok(())
}

/// NEW's hash: the XXH3-128 of its files' hashes (`hashes`, by file of the new tree; an
/// empty file's is the empty slice's) in order.
fn new_tree_hash(new_files: &[TreeFile], hashes: &[Option<u128>]) -> u128 {
    let mut new_sums = Vec::with_capacity(new_files.len() * 16);
    for (i, f) in new_files.iter().enumerate() {
        let h = match hashes[i] {
            Some(h) => h,
            None if f.len == 0 => slice_hash(&[], PIECE),
            None => unreachable!("every non-empty file is hashed"),
        };
        new_sums.extend_from_slice(&h.to_le_bytes());
    }
    xxh3_128(&new_sums)
}

/// The manifest of the new tree (`new_walk`, its root's `root` metadata, its files'
/// `sources`) against the old one (`old`), counting the new tree's entries in `made`.
fn manifest_of(
    root: Meta,
    old: Vec<OldEntry>,
    new_walk: &[Walked],
    sources: &[Source],
    made: &mut TreeMade,
) -> Manifest {
    let mut file_no = 0usize;
    Manifest {
        root,
        old,
        new: new_walk
            .iter()
            .map(|w| NewEntry {
                path: w.path.clone(),
                meta: w.meta,
                kind: match &w.kind {
                    WalkedKind::Dir => {
                        made.new_dirs += 1;
                        Kind::Dir
                    }
                    WalkedKind::Link(t) => {
                        made.new_links += 1;
                        Kind::Link { target: t.clone() }
                    }
                    WalkedKind::File(len) => {
                        let source = sources[file_no];
                        file_no += 1;
                        made.new_files += 1;
                        if source != Source::Sections {
                            made.identical_files += 1;
                            made.identical_bytes += len;
                        }
                        Kind::File { len: *len, source }
                    }
                },
            })
            .collect(),
    }
}

/// The hints of the files of NEW in section `c` ([`crate::hint`]): for each, the old file
/// at its path, then the old files its exact matches (`ops`) copy most bytes from, at most
/// three, within [`crate::hint::MAX_HINTED`] bytes.
fn hints_for(
    ops: &[Op],
    c: Cut,
    new: &TreeReader,
    old: &TreeReader,
    old_by_path: &HashMap<&[u8], usize>,
) -> Vec<crate::hint::Hint> {
    let (lo, hi) = (c.offset, c.offset + c.len);
    let mut hints = Vec::new();
    // Op boundaries in the section, to find each file's copies.
    let mut op_at = Vec::with_capacity(ops.len());
    let mut at = 0usize;
    for op in ops {
        op_at.push(at);
        at += op.len() as usize;
    }
    let mut f = new.starts.partition_point(|&st| st <= lo).saturating_sub(1);
    while f < new.files.len() && new.starts[f] < hi {
        let (st, len) = (new.starts[f], new.files[f].len);
        f += 1;
        if st + len <= lo || len == 0 {
            continue;
        }
        let start = (st.max(lo) - lo) as usize;
        let end = ((st + len).min(hi) - lo) as usize;
        let mut files: Vec<usize> = Vec::new();
        if let Some(&k) = old_by_path.get(new.files[f - 1].path.as_slice()) {
            files.push(k);
        }
        // The old files this file's exact matches come from, by bytes.
        let mut from: HashMap<usize, u64> = HashMap::new();
        let first = op_at.partition_point(|&a| a <= start).saturating_sub(1);
        for (k, op) in ops.iter().enumerate().skip(first) {
            if op_at[k] >= end {
                break;
            }
            if let Op::Copy { from: o, len } = *op {
                let i = old.starts.partition_point(|&s| s <= o) - 1;
                *from.entry(i).or_default() += len;
            }
        }
        let mut by_bytes: Vec<(u64, usize)> = from.into_iter().map(|(i, n)| (n, i)).collect();
        by_bytes.sort_unstable_by(|a, b| b.cmp(a));
        for (_, i) in by_bytes {
            if files.len() >= 4 {
                break;
            }
            if !files.contains(&i) {
                files.push(i);
            }
        }
        let mut ranges = Vec::new();
        let mut budget = crate::hint::MAX_HINTED;
        for i in files {
            let n = old.files[i].len.min(budget);
            if n > 0 {
                ranges.push((old.starts[i], n));
                budget -= n;
            }
        }
        hints.push(crate::hint::Hint {
            start,
            end,
            old: ranges,
        });
    }
    hints
}

/// The old tree's entries as the manifest codes against them (a walk's, in its order).
pub fn old_entries_of(w: &[Walked]) -> Vec<OldEntry> {
    w.iter()
        .map(|e| OldEntry {
            path: e.path.clone(),
            kind: match &e.kind {
                WalkedKind::Dir => OldKind::Dir,
                WalkedKind::File(n) => OldKind::File(*n),
                WalkedKind::Link(t) => OldKind::Link(t.clone()),
            },
        })
        .collect()
}

/// The "speed of light" of a tree's make: the time to read every regular file of both
/// trees (one reader per tree, 16 MiB reads) while the patch's bytes are written
/// ([`crate::make::speed_of_light`] with nothing to read), on the same files and machine.
pub fn speed_of_light_tree(
    old: &Path,
    new: &Path,
    patch_dir: &Path,
    patch_len: u64,
) -> io::Result<std::time::Duration> {
    let started = Instant::now();
    let read_tree = |root: &Path| -> io::Result<()> {
        let fd = Dir::open_to_list(root)?;
        let (_, walked) = walk_open(&fd, "").map_err(io::Error::other)?;
        let mut buf = swath_engine::buf::PageBuf::zeroed(16 << 20);
        for w in walked {
            if let WalkedKind::File(_) = w.kind {
                let mut f = fd.open_beneath(&w.path, libc::O_RDONLY, 0, Links::Refuse)?;
                while io::Read::read(&mut f, &mut buf)? > 0 {}
            }
        }
        Ok(())
    };
    std::thread::scope(|s| {
        let a = s.spawn(|| read_tree(old));
        let b = s.spawn(|| read_tree(new));
        let null = Path::new("/dev/null");
        let w = crate::make::speed_of_light(null, null, patch_dir, patch_len);
        a.join()
            .unwrap_or_else(|_| Err(io::Error::other("reader failed")))?;
        b.join()
            .unwrap_or_else(|_| Err(io::Error::other("reader failed")))?;
        w.map(|_| ())
    })?;
    Ok(started.elapsed())
}

#[cfg(test)]
mod tests;
