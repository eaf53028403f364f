//! Crash-safe in-place transformation: a file transformed in its own blocks, with a small
//! undo journal beside it, so that a run killed at any moment (or a power loss) can always be
//! brought to exactly the fully transformed state, never a mix.
//!
//! Journal (`.NAME.swath-journal` in the file's directory, NAME the file name's raw bytes),
//! little-endian; docs/journal.md is the full specification:
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `SWATHJ03`, shift (i64), alphabet (u64), file length, block size, the file's device and inode, XXH3-64 of these |
//! | 64, 96 | two "done" slots: blocks completed, the file's modification time after them (seconds, nanoseconds), XXH3 of these with the header's checksum; slot = count mod 2 |
//! | 128 | undo record: block index, length, XXH3 of the header's checksum, index, length and bytes |
//! | 160 | the block's original bytes |
//!
//! For each block `i`: its original bytes go to the undo record (synced), the transformed
//! bytes to the file (synced), then `done = i + 1` and the file's modification time to a slot
//! (synced). Recovery takes the largest valid `done`; the file's modification time must still
//! be the one recorded with it (later only when the undo record names block `done`, which the
//! interrupted run may have been writing), else the file was changed by someone else since and
//! the journal is refused. If the undo record is valid and names block `done`, that block may
//! be half written, so its original bytes are put back first. Then the run continues.
//! A torn journal write fails its checksum and is ignored, which is safe because the step
//! that follows it only starts once it is synced.
//!
//! When zeros stay zeros (`--alphabet`, a shift of 0), the holes of a sparse file are kept:
//! a block wholly inside a hole is skipped, and of a block partly a hole only the data is
//! written back. `done` is brought up to the next block that holds data before its undo
//! record is written, so that the record always names block `done`.
//!
//! The journal is trusted only as far as its author: it is opened without following links,
//! must be a plain file with one name, owned by the user or by the file's owner, writable by
//! no one else, and bound to the file by device and inode; and what it records is held to
//! what a run writes (a block size of at most 1 GiB, no more blocks done than the file has,
//! an undo record of exactly its block's length) before anything is sized by it. It is
//! created (exclusively, with the file's owner permissions and none for others) before
//! anything is written into it. An exclusive lock on the file is held for the whole run, so
//! two runs never interleave.

use std::ffi::{OsStr, OsString};
use std::fs::File;
#[cfg(test)]
use std::fs::OpenOptions;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use swath_engine::dirs::{Dir, Links};
use swath_engine::EngineError;
use swath_kernels::transform::Cipher;

const MAGIC: &[u8; 8] = b"SWATHJ03";
const SLOT_LEN: u64 = 32;
const SLOTS_AT: u64 = 64;
const UNDO_AT: u64 = 128;
const UNDO_DATA_AT: u64 = 160;
/// The largest block size a journal may record: the most `--block-size` allows. A journal
/// is trusted as far as its author, the file's owner, and no further: a size beyond what a
/// run writes is refused before anything is sized by it.
pub const MAX_BLOCK_SIZE: u64 = 1 << 30;

/// XXH3-64 of the concatenation of `parts`.
fn xxh(parts: &[&[u8]]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in parts {
        h.update(p);
    }
    h.digest()
}

/// The file a journal belongs to: its identity and length when the run started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Binding {
    len: u64,
    dev: u64,
    ino: u64,
    /// Modification time when the run started, recorded with `done = 0`.
    mtime: Stamp,
}

/// A modification time: seconds and nanoseconds since the epoch.
type Stamp = (i64, i64);

fn stamp(meta: &std::fs::Metadata) -> Stamp {
    (meta.mtime(), meta.mtime_nsec())
}

/// A journal's header as read back: the parameters, the binding, and the header's checksum
/// (which every later record includes, so records of another journal never match).
struct Header {
    params: InPlaceParams,
    /// The file's length, device and inode when the run started.
    len: u64,
    dev: u64,
    ino: u64,
    sum: u64,
}

/// The transformation an in-place run applies, as recorded in its journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InPlaceParams {
    /// The shift given on the command line.
    pub shift: i64,
    /// The alphabet variant.
    pub alphabet: bool,
    /// Bytes per journaled block.
    pub block_size: u64,
}

impl InPlaceParams {
    fn cipher(&self) -> Cipher {
        if self.alphabet {
            Cipher::alphabet(self.shift)
        } else {
            Cipher::bytes(self.shift)
        }
    }
}

/// The journal's path for `file`, built from the name's raw bytes (names that are not UTF-8
/// never share a journal).
pub fn journal_path(file: &Path) -> PathBuf {
    let mut name = OsString::from(".");
    name.push(file.file_name().unwrap_or_default());
    name.push(".swath-journal");
    file.with_file_name(name)
}

/// Takes an exclusive lock on the file for the life of the descriptor, or says that another
/// run holds it.
fn lock(file: &File, name: &str) -> Result<(), EngineError> {
    // SAFETY: flock on a descriptor this File owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        return Err(EngineError::io(
            name,
            io::Error::other("another swath run is transforming this file (it is locked)"),
        ));
    }
    Err(EngineError::io(name, e))
}

/// Opens an existing journal (the entry `jentry` of the file's directory `dir`) if it may be
/// trusted for `file` (`meta`), `None` if there is none.
fn open_journal(
    dir: &Dir,
    jentry: &OsStr,
    jname: &str,
    meta: &std::fs::Metadata,
) -> Result<Option<File>, EngineError> {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let refuse = |why: String| {
        Err(EngineError::io(
            jname,
            io::Error::other(format!(
                "{why}: refusing to trust it (remove it if no run of yours was interrupted)"
            )),
        ))
    };
    let foreign = |uid: u32| uid != euid && uid != meta.uid();
    let foreign_owner = |uid: u32| {
        refuse(format!(
            "the journal belongs to user {uid}, neither you nor the file's owner"
        ))
    };
    let j = match dir.open_beneath(jentry.as_bytes(), libc::O_RDWR, 0, Links::Refuse) {
        Ok(j) => j,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(EngineError::io(
                jname,
                io::Error::other("the journal is a symbolic link: refusing it (remove it)"),
            ))
        }
        Err(e) => {
            // Another user's journal that this user may not even open: say whose it is.
            let link = dir.open_beneath(jentry.as_bytes(), libc::O_PATH, 0, Links::Refuse);
            if let Ok(jm) = link.and_then(|l| l.metadata()) {
                if foreign(jm.uid()) {
                    return foreign_owner(jm.uid());
                }
            }
            return Err(EngineError::io(jname, e));
        }
    };
    let jm = j.metadata().map_err(|e| EngineError::io(jname, e))?;
    if !jm.is_file() || jm.nlink() != 1 {
        return refuse("not a plain journal file".into());
    }
    if foreign(jm.uid()) {
        return foreign_owner(jm.uid());
    }
    if jm.mode() & 0o022 != 0 {
        return refuse(format!(
            "others may write into the journal (mode {:o})",
            jm.mode() & 0o777
        ));
    }
    Ok(Some(j))
}

/// What an in-place run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InPlaceReport {
    /// The parameters applied.
    pub params: InPlaceParams,
    /// Blocks already done by an interrupted run (0 for a fresh run).
    pub resumed_at: u64,
    /// Whether a half-written block was restored from the journal.
    pub restored: bool,
    /// Blocks in the file.
    pub blocks: u64,
}

/// Transforms `path` in place with `params`, resuming an interrupted run with the same
/// parameters. With `params` of `None`, only resumes (taking the parameters from the
/// journal), and fails when there is nothing to resume.
pub fn transform_in_place(
    path: &Path,
    params: Option<InPlaceParams>,
) -> Result<InPlaceReport, EngineError> {
    transform_in_place_observed(path, params, &mut |_| {})
}

/// [`transform_in_place`], adding each block's bytes to `done` as it is finished (for a
/// progress bar; a resumed run counts only the blocks it does).
pub fn transform_in_place_counted(
    path: &Path,
    params: Option<InPlaceParams>,
    done: &std::sync::atomic::AtomicU64,
) -> Result<InPlaceReport, EngineError> {
    let block = params.map_or(0, |p| p.block_size);
    transform_in_place_observed(path, params, &mut |step| {
        if let Step::Done(_) = step {
            done.fetch_add(block, std::sync::atomic::Ordering::Relaxed);
        }
    })
}

/// A step of an in-place run, as [`transform_in_place_observed`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Block `i`'s original bytes are in the journal; the block is about to be rewritten.
    Undo(u64),
    /// Block `i` is done (rewritten, or a hole left as it was).
    Done(u64),
}

/// [`transform_in_place`], telling `observe` of each step (tests change the file there, or
/// stop the run, deterministically).
fn transform_in_place_observed(
    path: &Path,
    params: Option<InPlaceParams>,
    observe: &mut dyn FnMut(Step),
) -> Result<InPlaceReport, EngineError> {
    let name = path.to_string_lossy().into_owned();
    let io_err = |e: io::Error| EngineError::io(&name, e);
    // The file's directory, opened once: the file, its journal and the journal's removal
    // are all in it, whatever another user renames or swaps on the path meanwhile.
    let (dir, entry) = Dir::holding(path).map_err(io_err)?;
    let entry = entry.ok_or_else(|| io_err(io::Error::from_raw_os_error(libc::EISDIR)))?;
    let file = dir
        .open_beneath(entry.as_bytes(), libc::O_RDWR, 0, Links::Follow)
        .map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(EngineError::io(
            &name,
            io::Error::other("not a regular file (only regular files are transformed in place)"),
        ));
    }
    lock(&file, &name)?;
    // Taken again under the lock: nothing of ours changes the file from here on.
    let meta = file.metadata().map_err(io_err)?;
    let len = meta.len();
    let binding = Binding {
        len,
        dev: meta.dev(),
        ino: meta.ino(),
        mtime: stamp(&meta),
    };
    let jpath = journal_path(path);
    let jname = jpath.to_string_lossy().into_owned();
    let jentry = journal_path(Path::new(&entry)).into_os_string();
    let jerr = |e: io::Error| EngineError::io(&jname, e);
    let existing = open_journal(&dir, &jentry, &jname, &meta)?;
    let fresh = existing.is_none();
    let (journal, params, header_sum, done, restored) = match existing {
        Some(j) => resume(j, &file, binding, params, &name, &jname)?,
        None => {
            let Some(p) = params else {
                return Err(EngineError::io(
                    &name,
                    io::Error::other("no interrupted transformation to resume"),
                ));
            };
            let created = create_journal_in(&dir, &jentry, &p, binding, meta.mode() & 0o600);
            match created {
                Ok((j, sum)) => (j, p, sum, 0, false),
                Err(e) => {
                    // A journal that could not be written whole (a full disk, a file-size
                    // limit) is removed: nothing was changed yet.
                    if e.kind() != io::ErrorKind::AlreadyExists {
                        let _ = dir.unlink(jentry.as_bytes());
                    }
                    return Err(jerr(e));
                }
            }
        }
    };
    swath_engine::pause::at("inplace-journal-open");
    let bs = params.block_size.max(1);
    let blocks = len.div_ceil(bs);
    let cipher = params.cipher();
    // Zeros stay zeros (`--alphabet`, a shift of 0): the holes of a sparse file are kept (a
    // block inside a hole is skipped, and only the data of a block is written back).
    let sparse = meta.blocks().saturating_mul(512) < len;
    let holes = {
        let mut z = [0u8];
        cipher.apply(&mut z);
        z[0] == 0 && sparse
    };
    let mut touched = !fresh;
    let run = Run {
        file: &file,
        journal: &journal,
        name: &name,
        jname: &jname,
        len,
        bs,
        header_sum,
        sparse,
        holes,
    };
    let result = transform_blocks(&run, &cipher, done, blocks, &mut touched, observe);
    if let Err(e) = result {
        if !touched {
            // Nothing was changed: no journal to block the next run.
            drop(journal);
            let _ = dir.unlink(jentry.as_bytes());
            dir.sync();
        }
        return Err(e);
    }
    drop(journal);
    dir.unlink(jentry.as_bytes()).map_err(jerr)?;
    dir.sync();
    // Bytes appended during the run were not transformed: say so (the file is whole up to
    // its starting length).
    let now = file.metadata().map_err(io_err)?.len();
    if now != len {
        return Err(EngineError::Changed {
            path: name.into(),
            before: len,
            after: now,
        });
    }
    Ok(InPlaceReport {
        params,
        resumed_at: done,
        restored,
        blocks,
    })
}

/// Takes up an interrupted run from its journal `j` (of the file open as `file`, bound as
/// `binding`): checks that the journal is this file's and that nothing changed the file
/// since, and puts back the block being written when the run stopped. The journal, its
/// parameters, its header's checksum, the blocks done, and whether a block was restored.
fn resume(
    j: File,
    file: &File,
    binding: Binding,
    params: Option<InPlaceParams>,
    name: &str,
    jname: &str,
) -> Result<(File, InPlaceParams, u64, u64, bool), EngineError> {
    let len = binding.len;
    let io_err = |e: io::Error| EngineError::io(name, e);
    let jerr = |e: io::Error| EngineError::io(jname, e);
    let header = read_header(&j).map_err(jerr)?;
    let recorded = header.params;
    if (header.dev, header.ino) != (binding.dev, binding.ino) {
        return Err(EngineError::io(
            jname,
            io::Error::other(format!(
                "the journal belongs to another file than {name}: refusing it (remove it)"
            )),
        ));
    }
    let recorded_len = header.len;
    if recorded_len != len {
        return Err(EngineError::io(
                jname,
                io::Error::other(format!(
                    "the journal is for a file of {recorded_len} bytes, {name} has {len} (it changed size after the interrupted run): refusing the journal (remove it to give up the recovery)"
                )),
            ));
    }
    if let Some(p) = params {
        if p.shift != recorded.shift || p.alphabet != recorded.alphabet {
            return Err(EngineError::io(name, io::Error::other(
                    "an interrupted transformation with other parameters is pending: run 'swath cipher --resume' on it first",
                )));
        }
    }
    let slot = read_done(&j, header.sum).map_err(jerr)?;
    let done = slot.map_or(0, |(d, _)| d);
    let bs = recorded.block_size;
    let blocks = len.div_ceil(bs);
    if done > blocks {
        return Err(EngineError::io(
                jname,
                io::Error::other(format!(
                    "the journal says {done} blocks done of a file of {blocks}: damaged or forged, refusing it (remove it if no run was interrupted)"
                )),
            ));
    }
    // The bytes of block `done`, which its undo record must hold (none past the end).
    let block_len = if done < blocks {
        (len - done * bs).min(bs)
    } else {
        0
    };
    let undo = read_undo(&j, done, block_len, header.sum).map_err(jerr)?;
    if let Some((_, at_done)) = slot {
        // Unchanged since block `done` was recorded; later only if the interrupted
        // run was writing block `done` itself (its undo record says so).
        let now = binding.mtime;
        if now != at_done && !(undo.is_some() && now > at_done) {
            return Err(EngineError::io(
                    jname,
                    io::Error::other(format!(
                        "{name} was modified after the interrupted run (its modification time moved): refusing the journal (remove it to give up the recovery)"
                    )),
                ));
        }
    }
    let restored = match undo {
        Some(bytes) => {
            file.write_all_at(&bytes, done * bs)
                .and_then(|()| file.sync_data())
                .map_err(io_err)?;
            true
        }
        None => false,
    };
    Ok((j, recorded, header.sum, done, restored))
}

/// What [`transform_blocks`] works on.
struct Run<'a> {
    file: &'a File,
    journal: &'a File,
    name: &'a str,
    jname: &'a str,
    len: u64,
    bs: u64,
    header_sum: u64,
    /// The file has holes: undo records and writes keep them.
    sparse: bool,
    /// Blocks inside a hole are left as they are (the cipher keeps zeros).
    holes: bool,
}

/// Transforms blocks `done..blocks` in place, each one's original bytes written to the
/// journal first and the count of blocks done after it; `touched` is set once the file
/// is changed.
fn transform_blocks(
    run: &Run<'_>,
    cipher: &Cipher,
    done: u64,
    blocks: u64,
    touched: &mut bool,
    observe: &mut dyn FnMut(Step),
) -> Result<(), EngineError> {
    let Run {
        file,
        journal,
        name,
        jname,
        len,
        bs,
        header_sum,
        sparse,
        holes,
    } = *run;
    let io_err = |e: io::Error| EngineError::io(name, e);
    let jerr = |e: io::Error| EngineError::io(jname, e);
    let mut buf = Vec::new();
    buf.try_reserve_exact(bs.min(len.max(1)) as usize)
        .map_err(|_| io_err(io::Error::from(io::ErrorKind::OutOfMemory)))?;
    buf.resize(bs.min(len.max(1)) as usize, 0);
    // Blocks completed as the journal last recorded (hole blocks are skipped without a
    // record: the count is brought up to date before the next block's undo record, which
    // recovery trusts only when it names that count).
    let mut recorded = done;
    for i in done..blocks {
        let start = i * bs;
        let n = (len - start).min(bs) as usize;
        if holes && hole_end(file, start, len).is_some_and(|e| e >= start + n as u64) {
            observe(Step::Done(i));
            continue;
        }
        if recorded != i {
            let m = file.metadata().map_err(io_err)?;
            write_done(journal, i, stamp(&m), header_sum).map_err(jerr)?;
        }
        if let Err(e) = file.read_exact_at(&mut buf[..n], start) {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                let found = file.metadata().map(|m| m.len()).unwrap_or(0);
                return Err(EngineError::Shrank {
                    path: (&name).into(),
                    expected: len,
                    found,
                });
            }
            return Err(io_err(e));
        }
        write_undo(journal, i, &buf[..n], header_sum, sparse).map_err(jerr)?;
        observe(Step::Undo(i));
        cipher.apply(&mut buf[..n]);
        *touched = true;
        if holes {
            write_data_only(file, &buf[..n], start, len).map_err(io_err)?;
        } else {
            file.write_all_at(&buf[..n], start).map_err(io_err)?;
        }
        file.sync_data().map_err(io_err)?;
        let m = file.metadata().map_err(io_err)?;
        write_done(journal, i + 1, stamp(&m), header_sum).map_err(jerr)?;
        recorded = i + 1;
        observe(Step::Done(i));
    }
    Ok(())
}

/// When offset `at` of `file` (of `len` bytes) lies in a hole, where the hole ends: the
/// next data, or `len`. `None` when `at` holds data, or the file system cannot tell.
fn hole_end(file: &File, at: u64, len: u64) -> Option<u64> {
    if at >= len {
        return None;
    }
    // SAFETY: lseek on a descriptor the File owns; the run reads and writes at explicit
    // offsets only, so moving the file offset changes nothing else.
    let next = unsafe { libc::lseek(file.as_raw_fd(), at as libc::off_t, libc::SEEK_DATA) };
    if next < 0 {
        // ENXIO: no data at or after `at`, the rest of the file is a hole.
        return (io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO)).then_some(len);
    }
    let next = next as u64;
    (next > at).then_some(next.min(len))
}

/// Writes the transformed block `bytes` at `start`, leaving out the parts that are holes of
/// the file (their bytes are zeros, which the transformation kept zeros): the file stays as
/// sparse as it was.
fn write_data_only(file: &File, bytes: &[u8], start: u64, len: u64) -> io::Result<()> {
    let end = start + bytes.len() as u64;
    let mut p = start;
    while p < end {
        if let Some(e) = hole_end(file, p, len) {
            p = e.min(end);
            continue;
        }
        // SAFETY: as in hole_end.
        let d = unsafe { libc::lseek(file.as_raw_fd(), p as libc::off_t, libc::SEEK_HOLE) };
        let d = if d < 0 {
            end
        } else {
            (d as u64).clamp(p + 1, end)
        };
        file.write_all_at(&bytes[(p - start) as usize..(d - start) as usize], p)?;
        p = d;
    }
    Ok(())
}

/// [`create_journal_in`] for the journal `path` (its directory opened as named).
#[cfg(test)]
fn create_journal(
    path: &Path,
    p: &InPlaceParams,
    b: Binding,
    mode: u32,
) -> io::Result<(File, u64)> {
    let (dir, entry) = Dir::holding(path)?;
    let entry = entry.ok_or_else(|| io::Error::from_raw_os_error(libc::EISDIR))?;
    create_journal_in(&dir, &entry, p, b, mode)
}

/// Creates the journal `entry` in `dir` exclusively (never through a link, `mode` from the
/// first byte on), writes its header and returns it with the header's checksum.
fn create_journal_in(
    dir: &Dir,
    entry: &OsStr,
    p: &InPlaceParams,
    b: Binding,
    mode: u32,
) -> io::Result<(File, u64)> {
    let j = dir.open_beneath(
        entry.as_bytes(),
        libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
        mode,
        Links::Refuse,
    )?;
    let mut h = Vec::with_capacity(64);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&p.shift.to_le_bytes());
    h.extend_from_slice(&(p.alphabet as u64).to_le_bytes());
    h.extend_from_slice(&b.len.to_le_bytes());
    h.extend_from_slice(&p.block_size.to_le_bytes());
    h.extend_from_slice(&b.dev.to_le_bytes());
    h.extend_from_slice(&b.ino.to_le_bytes());
    let sum = xxh(&[&h]);
    h.extend_from_slice(&sum.to_le_bytes());
    h.extend_from_slice(&done_slot(0, b.mtime, sum));
    j.write_all_at(&h, 0)?;
    j.sync_all()?;
    dir.sync();
    Ok((j, sum))
}

fn read_header(j: &File) -> io::Result<Header> {
    let mut h = [0u8; 64];
    j.read_exact_at(&mut h, 0)
        .map_err(|_| io::Error::other("not a swath journal, or damaged"))?;
    let word = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
    if &h[..8] != MAGIC || xxh(&[&h[..56]]) != word(56) {
        return Err(io::Error::other(
            "not a swath journal, or damaged: refusing it (remove it if no run was interrupted)",
        ));
    }
    // The checksum says who wrote it, not that a run did: its values are held to what a
    // run writes before any is used.
    let refuse = |what: String| {
        Err(io::Error::other(format!(
            "{what}: damaged or forged, refusing it (remove it if no run was interrupted)"
        )))
    };
    if word(16) > 1 {
        return refuse(format!(
            "the journal records an unknown alphabet variant {}",
            word(16)
        ));
    }
    if !(1..=MAX_BLOCK_SIZE).contains(&word(32)) {
        return refuse(format!(
            "the journal records a block size of {} bytes, no run writes one (1 to {MAX_BLOCK_SIZE})",
            word(32)
        ));
    }
    Ok(Header {
        params: InPlaceParams {
            shift: word(8) as i64,
            alphabet: word(16) != 0,
            block_size: word(32),
        },
        len: word(24),
        dev: word(40),
        ino: word(48),
        sum: word(56),
    })
}

/// A "done" slot: the count, the file's modification time after those blocks, and their
/// checksum chained to the header's.
fn done_slot(count: u64, mtime: Stamp, header_sum: u64) -> [u8; SLOT_LEN as usize] {
    let mut s = [0u8; SLOT_LEN as usize];
    s[..8].copy_from_slice(&count.to_le_bytes());
    s[8..16].copy_from_slice(&mtime.0.to_le_bytes());
    s[16..24].copy_from_slice(&mtime.1.to_le_bytes());
    let sum = xxh(&[&header_sum.to_le_bytes(), &s[..24]]);
    s[24..].copy_from_slice(&sum.to_le_bytes());
    s
}

fn write_done(j: &File, count: u64, mtime: Stamp, header_sum: u64) -> io::Result<()> {
    let s = done_slot(count, mtime, header_sum);
    j.write_all_at(&s, SLOTS_AT + SLOT_LEN * (count % 2))?;
    j.sync_data()
}

/// The largest valid "done" count and the modification time recorded with it; `None` when
/// no slot holds (a creation interrupted before its first sync: nothing was changed).
fn read_done(j: &File, header_sum: u64) -> io::Result<Option<(u64, Stamp)>> {
    let mut best: Option<(u64, Stamp)> = None;
    for slot in 0..2 {
        let mut s = [0u8; SLOT_LEN as usize];
        if j.read_exact_at(&mut s, SLOTS_AT + SLOT_LEN * slot).is_err() {
            continue;
        }
        let word = |i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
        let count = word(0);
        let mtime = (word(8) as i64, word(16) as i64);
        if s == done_slot(count, mtime, header_sum)
            && count % 2 == slot
            && best.is_none_or(|(b, _)| count > b)
        {
            best = Some((count, mtime));
        }
    }
    Ok(best)
}

/// Writes the undo record of block `index` (its original `bytes`). With `sparse` (a sparse
/// file, whose blocks are mostly zeros), the journal keeps holes where the bytes are whole
/// pages of zeros: the previous record's bytes are cut off first, so those read back as
/// zeros, and the journal needs room only for the block's data, not the block's size.
fn write_undo(j: &File, index: u64, bytes: &[u8], header_sum: u64, sparse: bool) -> io::Result<()> {
    let len = bytes.len() as u64;
    let sum = undo_sum(header_sum, index, len, bytes);
    if sparse {
        // The record in place names an earlier block than `done`, so recovery ignores it
        // from here until the new one is written.
        j.set_len(UNDO_DATA_AT)?;
        const PAGE: usize = 4096;
        let mut at = 0;
        while at < bytes.len() {
            let page = |i: usize| &bytes[i..(i + PAGE).min(bytes.len())];
            if page(at).iter().all(|&b| b == 0) {
                at += PAGE;
                continue;
            }
            let mut end = at + PAGE;
            while end < bytes.len() && page(end).iter().any(|&b| b != 0) {
                end += PAGE;
            }
            let end = end.min(bytes.len());
            j.write_all_at(&bytes[at..end], UNDO_DATA_AT + at as u64)?;
            at = end;
        }
        j.set_len(UNDO_DATA_AT + len)?;
    } else {
        j.write_all_at(bytes, UNDO_DATA_AT)?;
    }
    let mut r = [0u8; 24];
    r[..8].copy_from_slice(&index.to_le_bytes());
    r[8..16].copy_from_slice(&len.to_le_bytes());
    r[16..].copy_from_slice(&sum.to_le_bytes());
    j.write_all_at(&r, UNDO_AT)?;
    j.sync_data()
}

fn undo_sum(header_sum: u64, index: u64, len: u64, bytes: &[u8]) -> u64 {
    xxh(&[
        &header_sum.to_le_bytes(),
        &index.to_le_bytes(),
        &len.to_le_bytes(),
        bytes,
    ])
}

/// Block `done`'s original bytes (`block_len` of them), if the undo record holds them (the
/// interrupted run was writing that block). A record of another length, or longer than
/// the journal, is not that block's (a torn or forged record): ignored before anything is
/// allocated for it.
fn read_undo(j: &File, done: u64, block_len: u64, header_sum: u64) -> io::Result<Option<Vec<u8>>> {
    let mut r = [0u8; 24];
    if j.read_exact_at(&mut r, UNDO_AT).is_err() {
        return Ok(None);
    }
    let index = u64::from_le_bytes(r[..8].try_into().expect("8 bytes"));
    let len = u64::from_le_bytes(r[8..16].try_into().expect("8 bytes"));
    let sum = u64::from_le_bytes(r[16..].try_into().expect("8 bytes"));
    if index != done || len == 0 || len != block_len {
        return Ok(None);
    }
    if j.metadata()?.len() < UNDO_DATA_AT + len {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    if bytes.try_reserve_exact(len as usize).is_err() {
        return Ok(None);
    }
    bytes.resize(len as usize, 0);
    if j.read_exact_at(&mut bytes, UNDO_DATA_AT).is_err()
        || undo_sum(header_sum, index, len, &bytes) != sum
    {
        return Ok(None);
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_run_and_recovery_of_a_half_written_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 256) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let p = InPlaceParams {
            shift: 7,
            alphabet: false,
            block_size: 1000,
        };
        let mut want = data.clone();
        Cipher::bytes(7).apply_naive(&mut want);
        transform_in_place(&path, Some(p)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), want);
        assert!(!journal_path(&path).exists());

        // Simulate a crash in block 3: blocks 0-2 done, block 3 half written.
        std::fs::write(&path, &data).unwrap();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let m = std::fs::metadata(&path).unwrap();
        let b = Binding {
            len: data.len() as u64,
            dev: m.dev(),
            ino: m.ino(),
            mtime: stamp(&m),
        };
        let (j, sum) = create_journal(&journal_path(&path), &p, b, 0o600).unwrap();
        let mut partial = data.clone();
        Cipher::bytes(7).apply_naive(&mut partial[..3000]);
        file.write_all_at(&partial, 0).unwrap();
        let after_three = stamp(&file.metadata().unwrap());
        write_done(&j, 3, after_three, sum).unwrap();
        // Block 3 half written after its undo record: a later modification time is ours.
        Cipher::bytes(7).apply_naive(&mut partial[3000..3500]);
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3);
        file.write_all_at(&partial, 0).unwrap();
        file.set_modified(later).unwrap();
        write_undo(&j, 3, &data[3000..4000], sum, false).unwrap();
        drop(j);
        assert!(transform_in_place(&path, Some(InPlaceParams { shift: 1, ..p })).is_err());
        let r = transform_in_place(&path, None).unwrap();
        assert_eq!((r.resumed_at, r.restored), (3, true));
        assert_eq!(std::fs::read(&path).unwrap(), want);
        assert!(transform_in_place(&path, None).is_err());
    }

    fn params() -> InPlaceParams {
        InPlaceParams {
            shift: 3,
            alphabet: false,
            block_size: 1000,
        }
    }

    #[test]
    fn journal_names_are_built_from_raw_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let a = journal_path(Path::new(std::ffi::OsStr::from_bytes(b"dir/data\xff")));
        let b = journal_path(Path::new(std::ffi::OsStr::from_bytes(b"dir/data\xfe")));
        assert_ne!(a, b);
        assert_eq!(a.as_os_str().as_bytes(), b"dir/.data\xff.swath-journal");
    }

    #[test]
    fn journal_is_created_with_the_owner_permissions_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let jpath = dir.path().join(".f.swath-journal");
        let b = Binding {
            len: 10,
            dev: 1,
            ino: 2,
            mtime: (0, 0),
        };
        let (_j, _) = create_journal(&jpath, &params(), b, 0o644 & 0o600).unwrap();
        let mode = std::fs::metadata(&jpath).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        // Exclusive: a second creation (a concurrent run, a planted file) fails.
        assert!(create_journal(&jpath, &params(), b, 0o600).is_err());
    }

    #[test]
    fn journal_of_another_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, vec![b'x'; 5000]).unwrap();
        std::fs::write(&b, vec![b'x'; 5000]).unwrap();
        let m = std::fs::metadata(&a).unwrap();
        let binding = Binding {
            len: 5000,
            dev: m.dev(),
            ino: m.ino(),
            mtime: stamp(&m),
        };
        // A's journal, moved next to B (same size, same owner).
        let (j, sum) = create_journal(&journal_path(&b), &params(), binding, 0o600).unwrap();
        write_done(&j, 2, stamp(&m), sum).unwrap();
        drop(j);
        let err = transform_in_place(&b, Some(params()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("another file"), "{err}");
        assert_eq!(std::fs::read(&b).unwrap(), vec![b'x'; 5000]);
    }

    #[test]
    fn journal_that_is_a_symbolic_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"data").unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, b"not yours").unwrap();
        std::os::unix::fs::symlink(&elsewhere, journal_path(&f)).unwrap();
        let err = transform_in_place(&f, Some(params()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read(&f).unwrap(), b"data");
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"not yours");
    }

    #[test]
    fn forged_journal_with_a_bad_checksum_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, vec![b'a'; 3000]).unwrap();
        let m = std::fs::metadata(&f).unwrap();
        let binding = Binding {
            len: 3000,
            dev: m.dev(),
            ino: m.ino(),
            mtime: stamp(&m),
        };
        let (j, sum) = create_journal(&journal_path(&f), &params(), binding, 0o600).unwrap();
        // Claims every block done, with a checksum that is not the header's.
        write_done(&j, 3, stamp(&m), sum ^ 1).unwrap();
        // And a header whose checksum does not match: damaged or forged.
        j.write_all_at(&7i64.to_le_bytes(), 8).unwrap();
        drop(j);
        let err = transform_in_place(&f, Some(params()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("damaged"), "{err}");
        assert_eq!(std::fs::read(&f).unwrap(), vec![b'a'; 3000]);
    }

    /// An interrupted run's state: blocks `0..done` of `data` transformed in `path`, their
    /// journal beside it.
    fn interrupted(path: &Path, data: &[u8], done: u64) {
        let p = params();
        std::fs::write(path, data).unwrap();
        let file = OpenOptions::new().write(true).open(path).unwrap();
        let m = file.metadata().unwrap();
        let b = Binding {
            len: data.len() as u64,
            dev: m.dev(),
            ino: m.ino(),
            mtime: stamp(&m),
        };
        let (j, sum) = create_journal(&journal_path(path), &p, b, 0o600).unwrap();
        let mut head = data[..(done * p.block_size) as usize].to_vec();
        p.cipher().apply_naive(&mut head);
        file.write_all_at(&head, 0).unwrap();
        write_done(&j, done, stamp(&file.metadata().unwrap()), sum).unwrap();
    }

    #[test]
    fn journal_of_a_file_modified_since_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        let data = vec![b'a'; 5000];
        interrupted(&f, &data, 2);
        // Someone rewrites the file in place (same size) before the resume.
        let file = OpenOptions::new().write(true).open(&f).unwrap();
        file.write_all_at(b"zz", 4000).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(7);
        file.set_modified(later).unwrap();
        let before = std::fs::read(&f).unwrap();
        let err = transform_in_place(&f, None).unwrap_err().to_string();
        assert!(
            err.contains("was modified after the interrupted run"),
            "{err}"
        );
        assert_eq!(std::fs::read(&f).unwrap(), before);
        assert!(journal_path(&f).exists());
        // Untouched since, it resumes.
        let g = dir.path().join("g");
        interrupted(&g, &data, 2);
        let r = transform_in_place(&g, None).unwrap();
        assert_eq!((r.resumed_at, r.restored), (2, false));
        let mut want = data.clone();
        params().cipher().apply_naive(&mut want);
        assert_eq!(std::fs::read(&g).unwrap(), want);
    }

    #[test]
    fn in_place_run_reports_a_file_grown_during_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        let data = vec![b'a'; 3500];
        std::fs::write(&f, &data).unwrap();
        let mut append = |step: Step| {
            if step == Step::Done(0) {
                let mut h = OpenOptions::new().append(true).open(&f).unwrap();
                io::Write::write_all(&mut h, b"tail").unwrap();
            }
        };
        let err = transform_in_place_observed(&f, Some(params()), &mut append).unwrap_err();
        assert!(
            matches!(
                err,
                EngineError::Changed {
                    before: 3500,
                    after: 3504,
                    ..
                }
            ),
            "{err}"
        );
        // Whole up to the starting length, the appended bytes as they came, no journal.
        let mut want = data.clone();
        params().cipher().apply_naive(&mut want);
        want.extend_from_slice(b"tail");
        assert_eq!(std::fs::read(&f).unwrap(), want);
        assert!(!journal_path(&f).exists());
    }

    #[test]
    fn in_place_run_reports_a_file_shrunk_during_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, vec![b'a'; 3500]).unwrap();
        let mut cut = |step: Step| {
            if step == Step::Done(0) {
                OpenOptions::new()
                    .write(true)
                    .open(&f)
                    .unwrap()
                    .set_len(1500)
                    .unwrap();
            }
        };
        let err = transform_in_place_observed(&f, Some(params()), &mut cut).unwrap_err();
        assert!(
            matches!(
                err,
                EngineError::Shrank {
                    expected: 3500,
                    found: 1500,
                    ..
                }
            ),
            "{err}"
        );
        // The journal stays (a block was changed), and the next run says why it cannot use it.
        let next = transform_in_place(&f, None).unwrap_err().to_string();
        assert!(
            next.contains("changed size after the interrupted run"),
            "{next}"
        );
    }

    #[test]
    fn second_run_on_a_locked_file_refuses() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"data").unwrap();
        let holder = File::open(&f).unwrap();
        // SAFETY: flock on a descriptor the File owns.
        assert_eq!(unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX) }, 0);
        let err = transform_in_place(&f, Some(params()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("locked"), "{err}");
        assert_eq!(std::fs::read(&f).unwrap(), b"data");
        assert!(!journal_path(&f).exists());
        drop(holder);
        transform_in_place(&f, Some(params())).unwrap();
    }

    /// A sparse file of 8 KiB blocks: data, holes, a block half data and half hole, holes,
    /// data; and its bytes.
    fn sparse_file(path: &Path) -> Vec<u8> {
        let page = |c: u8| vec![c; 4096];
        let f = File::create(path).unwrap();
        let len = 16 * 4096;
        f.set_len(len).unwrap();
        let mut dense = vec![0u8; len as usize];
        for (at, c) in [
            (0usize, b'a'),
            (1, b'b'),
            (10, b'c'),
            (14, b'd'),
            (15, b'e'),
        ] {
            f.write_all_at(&page(c), (at * 4096) as u64).unwrap();
            dense[at * 4096..(at + 1) * 4096].copy_from_slice(&page(c));
        }
        f.sync_all().unwrap();
        dense
    }

    fn alphabet_params() -> InPlaceParams {
        InPlaceParams {
            shift: 3,
            alphabet: true,
            block_size: 8192,
        }
    }

    #[test]
    fn in_place_keeps_holes_when_zero_maps_to_zero() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        let dense = sparse_file(&f);
        let before = std::fs::metadata(&f).unwrap().blocks();
        if before * 512 >= dense.len() as u64 {
            swath_engine::testing::skip("skipped: this file system does not keep holes");
            return;
        }
        transform_in_place(&f, Some(alphabet_params())).unwrap();
        let mut want = dense.clone();
        alphabet_params().cipher().apply_naive(&mut want);
        assert_eq!(std::fs::read(&f).unwrap(), want);
        // Not a block more on disk: the holes, even the one sharing a block with data, stay.
        assert_eq!(std::fs::metadata(&f).unwrap().blocks(), before);
        // A shift that moves zeros fills them, as it must.
        transform_in_place(&f, Some(params())).unwrap();
        params().cipher().apply_naive(&mut want);
        assert_eq!(std::fs::read(&f).unwrap(), want);
    }

    #[test]
    fn in_place_run_killed_after_skipping_holes_recovers() {
        // Killed while rewriting block 5 (after the holes of blocks 1-4 were skipped), half
        // of it written: the journal must name block 5 as the one to restore.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        let dense = sparse_file(&f);
        if std::fs::metadata(&f).unwrap().blocks() * 512 >= dense.len() as u64 {
            swath_engine::testing::skip("skipped: this file system does not keep holes");
            return;
        }
        let mut crash = |step: Step| {
            if step == Step::Undo(5) {
                let h = OpenOptions::new().write(true).open(&f).unwrap();
                h.write_all_at(&[b'!'; 3000], 5 * 8192).unwrap();
                panic!("killed");
            }
        };
        let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            transform_in_place_observed(&f, Some(alphabet_params()), &mut crash)
        }));
        assert!(killed.is_err());
        assert!(journal_path(&f).exists());
        let r = transform_in_place(&f, None).unwrap();
        assert_eq!((r.resumed_at, r.restored), (5, true));
        let mut want = dense.clone();
        alphabet_params().cipher().apply_naive(&mut want);
        assert_eq!(std::fs::read(&f).unwrap(), want);
        assert!(!journal_path(&f).exists());
    }
}
