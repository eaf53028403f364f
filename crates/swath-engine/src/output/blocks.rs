//! Blocks written into an output in parallel: the one way a command that writes a file in
//! pieces (cipher, cp, gen, patch apply) gets its bytes there.
//!
//! A [`BlockWriter`] is made once per output. It sizes the file (`ftruncate`), reserves its
//! space on the disk when it is written through a map, and chooses how blocks reach it by
//! one rule, from the caller's option [`Via`]:
//!
//! - a target written directly ([`AtomicOutput::is_direct`]: a device, a FIFO, a
//!   descriptor) can be neither sized nor written at offsets: its blocks go out as one
//!   stream, each waiting for the one before it (the writer is *ordered*);
//! - a map ([`Via::SharedMap`], [`Via::RangeMaps`]) only of a file known to be this
//!   process's own (an [`AtomicOutput`]'s, or one promised by [`BlockWriter::new_private`])
//!   and not empty: no one else can truncate it under the map, and its space is reserved
//!   before a page is written (a full disk is then an error, not a SIGBUS);
//! - otherwise positional writes (`pwrite`), in any order.
//!
//! Each worker writes through a [`Lane`] of its own ([`BlockWriter::lane`], or
//! [`BlockWriter::run`], which starts the workers): it hands a block as `(offset, bytes)`
//! ([`Lane::write_at`]) or fills the output's range in place ([`Lane::fill`]: the map's
//! pages themselves, or the lane's buffer written once filled). Every error names the
//! output as the user named it. Ranges being filled through a map are held apart: a block
//! that overlaps one still being filled, or lies past the end, is refused, so no two
//! workers ever hold the same bytes of a map.
//!
//! In an ordered writer, a block whose turn cannot come (every live lane is waiting, the
//! one that held the next block having failed or ended) is not written: the lane returns at
//! once, and [`BlockWriter::finish`] reports the stream incomplete. Lanes must therefore
//! exist before the first block is handed out ([`BlockWriter::run`] makes them first).

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::{Condvar, Mutex, MutexGuard};

use super::AtomicOutput;
use crate::error::EngineError;

/// How blocks reach a regular output file (the caller's option; see the module's rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Via {
    /// Positional writes from the worker's bytes.
    #[default]
    Pwrite,
    /// One map of the whole file, shared by the workers, each filling its own blocks.
    SharedMap,
    /// Each block mapped on its own as it is filled, unmapped when done: resident memory
    /// stays the blocks in flight whatever the file's size.
    RangeMaps,
}

/// When a mapped output's space is reserved on the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reserve {
    /// All of it, once, when the writer is made.
    #[default]
    Whole,
    /// Each block's, as it is filled (what is never written stays a hole; on tmpfs the
    /// pages are zeroed by the workers, not by one thread).
    Blocks,
}

/// How a [`BlockWriter`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockOptions {
    /// Positional writes or a map.
    pub via: Via,
    /// When a map's space is reserved (ignored by positional writes).
    pub reserve: Reserve,
    /// Positional writes leave as holes the stretches of zeros that cover [`HOLE_MIN`] or
    /// more whole 4 KiB blocks of the file (the file is sized first, so they read as zeros).
    pub sparse: bool,
    /// Each lane writes positionally through a descriptor of its own (reopened through
    /// `/proc/self/fd`, the shared one where that fails).
    pub own_descriptors: bool,
}

/// Aligned stretches of zeros at least this long are left as holes by a sparse writer.
pub const HOLE_MIN: usize = 64 << 10;

/// How this writer's blocks reach the file.
enum Mode {
    Pwrite,
    Shared(SharedMap),
    Ranges,
    /// A target written directly, front to back.
    Stream,
}

/// What the lanes share: the stream's position and its waiters, and the ranges being
/// filled through a map.
#[derive(Default)]
struct State {
    /// Ordered: bytes written so far.
    pos: u64,
    /// Ordered: lanes alive, and of them, lanes waiting for their turn.
    live: usize,
    waiting: usize,
    /// Ordered: the offsets the waiting lanes hold, with how many hold each.
    waiters: BTreeMap<u64, usize>,
    /// Ordered: the stream cannot go on (a write failed, or no lane can write the next
    /// block).
    stopped: bool,
    /// Mapped: ranges being filled, start to end.
    filling: BTreeMap<u64, u64>,
}

/// Blocks written into one output by any number of workers (see the module).
pub struct BlockWriter<'a> {
    file: &'a File,
    name: String,
    len: u64,
    mode: Mode,
    opts: BlockOptions,
    state: Mutex<State>,
    turn: Condvar,
}

impl std::fmt::Debug for BlockWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match self.mode {
            Mode::Pwrite => "pwrite",
            Mode::Shared(_) => "shared map",
            Mode::Ranges => "range maps",
            Mode::Stream => "stream",
        };
        f.debug_struct("BlockWriter")
            .field("name", &self.name)
            .field("len", &self.len)
            .field("mode", &mode)
            .finish()
    }
}

impl<'a> BlockWriter<'a> {
    /// A writer of `len` bytes into `out`: a regular output is sized to `len` and written
    /// as `opts` asks; a target written directly is written as one stream, in order.
    pub fn for_output(
        out: &'a AtomicOutput,
        len: u64,
        opts: BlockOptions,
    ) -> Result<BlockWriter<'a>, EngineError> {
        if out.is_direct() {
            return Ok(BlockWriter::make(
                out.file(),
                out.name.clone(),
                len,
                Mode::Stream,
                opts,
            ));
        }
        // SAFETY: an AtomicOutput's file is an unnamed or private temporary file of this
        // process's own until it is committed, which needs the output this writer borrows.
        unsafe { BlockWriter::build(out.file(), out.name.clone(), len, opts, true, true) }
    }

    /// A writer of `len` bytes into the regular file `file` (named `name` in errors), sized
    /// to `len` here, written positionally (`opts.via` is not followed: a map needs a file
    /// known to be this process's own, see [`BlockWriter::new_private`]).
    pub fn new(
        file: &'a File,
        name: impl Into<String>,
        len: u64,
        opts: BlockOptions,
    ) -> Result<BlockWriter<'a>, EngineError> {
        // SAFETY: `private` is false: the file is never mapped.
        unsafe { BlockWriter::build(file, name.into(), len, opts, false, true) }
    }

    /// [`BlockWriter::new`] for a file its caller already sized to `len` (not truncated
    /// again).
    pub fn presized(
        file: &'a File,
        name: impl Into<String>,
        len: u64,
        opts: BlockOptions,
    ) -> Result<BlockWriter<'a>, EngineError> {
        // SAFETY: `private` is false: the file is never mapped.
        unsafe { BlockWriter::build(file, name.into(), len, opts, false, false) }
    }

    /// [`BlockWriter::new`], following `opts.via` when it asks for a map.
    ///
    /// # Safety
    /// `file` must be this process's own: no one truncates it while the writer lives (a
    /// page of a map past the file's end is a SIGBUS).
    pub unsafe fn new_private(
        file: &'a File,
        name: impl Into<String>,
        len: u64,
        opts: BlockOptions,
    ) -> Result<BlockWriter<'a>, EngineError> {
        // SAFETY: the caller's promise is this function's.
        unsafe { BlockWriter::build(file, name.into(), len, opts, true, true) }
    }

    /// The rule: sized when `size`, mapped only when asked, `private` and not empty.
    ///
    /// # Safety
    /// When `private`, as [`BlockWriter::new_private`].
    unsafe fn build(
        file: &'a File,
        name: String,
        len: u64,
        opts: BlockOptions,
        private: bool,
        size: bool,
    ) -> Result<BlockWriter<'a>, EngineError> {
        if size {
            file.set_len(len).map_err(|e| EngineError::io(&name, e))?;
        }
        let mode = match opts.via {
            Via::SharedMap | Via::RangeMaps if private && len > 0 => {
                if opts.reserve == Reserve::Whole {
                    reserve(file, &name, 0, len)?;
                }
                if opts.via == Via::SharedMap {
                    // SAFETY: the file is the process's own (the caller's promise), sized
                    // above or by the caller.
                    Mode::Shared(unsafe { SharedMap::new(file, &name) }?)
                } else {
                    Mode::Ranges
                }
            }
            _ => Mode::Pwrite,
        };
        Ok(BlockWriter::make(file, name, len, mode, opts))
    }

    fn make(file: &'a File, name: String, len: u64, mode: Mode, opts: BlockOptions) -> Self {
        BlockWriter {
            file,
            name,
            len,
            mode,
            opts,
            state: Mutex::new(State::default()),
            turn: Condvar::new(),
        }
    }

    /// The file written (for what only the caller knows how to write, such as an
    /// in-kernel copy into it).
    pub fn file(&self) -> &'a File {
        self.file
    }

    /// The output as named in errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The output's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an output of no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when blocks must come in order (a target written directly, as a stream).
    pub fn is_ordered(&self) -> bool {
        matches!(self.mode, Mode::Stream)
    }

    /// True when the blocks go through a map of the file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.mode, Mode::Shared(_) | Mode::Ranges)
    }

    fn err(&self, e: io::Error) -> EngineError {
        EngineError::io(&self.name, e)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A lane for one worker: its buffer for [`Lane::fill`] and, with
    /// [`BlockOptions::own_descriptors`], its own descriptor.
    pub fn lane(&self) -> Lane<'_> {
        let own = match self.mode {
            Mode::Pwrite if self.opts.own_descriptors => {
                let fd = std::os::fd::AsRawFd::as_raw_fd(self.file);
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(format!("/proc/self/fd/{fd}"))
                    .ok()
            }
            _ => None,
        };
        if self.is_ordered() {
            self.state().live += 1;
        }
        Lane {
            writer: self,
            own,
            scratch: Vec::new(),
        }
    }

    /// Runs `work(worker, lane)` on `threads` threads (at least one), each with a lane of its
    /// own made before any starts; returns the first error, in worker order.
    pub fn run<E: Send>(
        &self,
        threads: usize,
        work: impl Fn(usize, &mut Lane<'_>) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let lanes: Vec<Lane<'_>> = (0..threads.max(1)).map(|_| self.lane()).collect();
        std::thread::scope(|s| {
            let work = &work;
            let handles: Vec<_> = lanes
                .into_iter()
                .enumerate()
                .map(|(t, mut lane)| s.spawn(move || work(t, &mut lane)))
                .collect();
            let results: Vec<Result<(), E>> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect();
            results.into_iter().collect()
        })
    }

    /// Ends the writing: a stream must have had every byte; a shared map's pages start
    /// going back to the disk (without waiting for them).
    pub fn finish(self) -> Result<(), EngineError> {
        if self.is_ordered() {
            let pos = self.state().pos;
            if pos != self.len {
                return Err(self.err(io::Error::other(format!(
                    "not every block was written (the stream stopped at byte {pos} of {})",
                    self.len
                ))));
            }
        }
        if let Mode::Shared(map) = &self.mode {
            map.flush_async().map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Holds `[offset, offset + len)` apart while a lane fills it through a map: refused
    /// past the file's end or over a range being filled.
    fn claim(&self, offset: u64, len: usize) -> Result<Claim<'_, 'a>, EngineError> {
        let end = offset
            .checked_add(len as u64)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| {
                self.err(io::Error::other(format!(
                    "a block of {len} bytes at {offset} lies past the output's end ({} bytes)",
                    self.len
                )))
            })?;
        let mut s = self.state();
        if let Some((&start, &stop)) = s.filling.range(..end).next_back() {
            if stop > offset && len > 0 {
                return Err(self.err(io::Error::other(format!(
                    "a block at {offset} overlaps the one being written at {start}"
                ))));
            }
        }
        if len > 0 {
            s.filling.insert(offset, end);
        }
        Ok(Claim {
            writer: self,
            start: offset,
            held: len > 0,
        })
    }

    /// Writes with `write` when the stream reaches `offset`; a block whose turn cannot
    /// come is not written (see the module).
    fn in_turn(
        &self,
        offset: u64,
        len: usize,
        write: impl FnOnce(&File) -> io::Result<()>,
    ) -> Result<(), EngineError> {
        let mut s = self.state();
        if offset < s.pos {
            return Err(self.err(io::Error::other(format!(
                "a block at {offset} comes after byte {} was written",
                s.pos
            ))));
        }
        s.waiting += 1;
        *s.waiters.entry(offset).or_default() += 1;
        while !s.stopped && s.pos != offset {
            if s.waiting >= s.live && !s.waiters.contains_key(&s.pos) {
                // Every lane alive waits, none with the next block: it will never come.
                s.stopped = true;
                self.turn.notify_all();
                break;
            }
            s = self.turn.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.waiting -= 1;
        if let Some(n) = s.waiters.get_mut(&offset) {
            *n -= 1;
            if *n == 0 {
                s.waiters.remove(&offset);
            }
        }
        if s.stopped {
            return Ok(());
        }
        let written = write(self.file);
        match written {
            Ok(()) => s.pos += len as u64,
            Err(_) => s.stopped = true,
        }
        self.turn.notify_all();
        written.map_err(|e| self.err(e))
    }
}

/// A range of a map being filled, held apart until dropped.
struct Claim<'w, 'a> {
    writer: &'w BlockWriter<'a>,
    start: u64,
    held: bool,
}

impl Drop for Claim<'_, '_> {
    fn drop(&mut self) {
        if self.held {
            self.writer.state().filling.remove(&self.start);
        }
    }
}

/// One worker's way into a [`BlockWriter`].
pub struct Lane<'w> {
    writer: &'w BlockWriter<'w>,
    own: Option<File>,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Lane<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane")
            .field("writer", self.writer)
            .field("own_descriptor", &self.own.is_some())
            .finish()
    }
}

impl Lane<'_> {
    /// Writes `bytes` at `offset` of the output.
    pub fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), EngineError> {
        let w = self.writer;
        match &w.mode {
            Mode::Pwrite => {
                let file = self.own.as_ref().unwrap_or(w.file);
                if w.opts.sparse {
                    write_sparse(file, bytes, offset)
                } else {
                    file.write_all_at(bytes, offset)
                }
                .map_err(|e| w.err(e))
            }
            Mode::Stream => w.in_turn(offset, bytes.len(), |mut f| {
                io::Write::write_all(&mut f, bytes)
            }),
            Mode::Shared(_) | Mode::Ranges => self.fill(offset, bytes.len(), |dst| {
                dst.copy_from_slice(bytes);
                Ok::<(), EngineError>(())
            }),
        }
    }

    /// Makes the output's bytes `[offset, offset + len)` with `make`, which must set every
    /// byte of the slice it is given: the map's own pages (reserved first with
    /// [`Reserve::Blocks`]), or the lane's buffer (holding whatever it last held), written
    /// once `make` returns. What `make` returns is returned; its error leaves the range
    /// unwritten.
    pub fn fill<T, E: From<EngineError>>(
        &mut self,
        offset: u64,
        len: usize,
        make: impl FnOnce(&mut [u8]) -> Result<T, E>,
    ) -> Result<T, E> {
        let w = self.writer;
        match &w.mode {
            Mode::Pwrite | Mode::Stream => {
                let mut buf = std::mem::take(&mut self.scratch);
                buf.resize(len, 0);
                let made = make(&mut buf);
                let written = match made {
                    Ok(_) => self.write_at(offset, &buf),
                    Err(_) => Ok(()),
                };
                self.scratch = buf;
                written?;
                made
            }
            Mode::Shared(map) => {
                let _claim = w.claim(offset, len)?;
                if w.opts.reserve == Reserve::Blocks {
                    reserve(w.file, &w.name, offset, len as u64)?;
                }
                // SAFETY: the claim keeps every other live slice of the map off this
                // range, which it checked lies inside the map.
                make(unsafe { map.range_mut(offset as usize, len) })
            }
            Mode::Ranges => {
                let _claim = w.claim(offset, len)?;
                if w.opts.reserve == Reserve::Blocks {
                    reserve(w.file, &w.name, offset, len as u64)?;
                }
                // SAFETY: a mapped writer's file is the process's own (its constructor's
                // promise) and as long as the range (claimed above); no other lane maps
                // these bytes meanwhile.
                let mut dst = unsafe { RangeMap::new(w.file, &w.name, offset, len) }?;
                make(&mut dst)
            }
        }
    }
}

impl Drop for Lane<'_> {
    fn drop(&mut self) {
        if self.writer.is_ordered() {
            self.writer.state().live -= 1;
            // Waiters look again: the block they wait for may now never come.
            self.writer.turn.notify_all();
        }
    }
}

/// Writes `buf` at `at` in `file` (already as long as it will be, so that what is not
/// written reads as zeros), leaving as holes the stretches of zero bytes that cover
/// [`HOLE_MIN`] or more whole 4 KiB blocks of the file: a sparse output stays sparse, and a
/// run of zeros takes no space on the disk. Shorter stretches are written (isolated zero
/// pages, common in programs, would only fragment the file).
fn write_sparse(file: &File, buf: &[u8], at: u64) -> io::Result<()> {
    const BLOCK: usize = 4096;
    let zero = |b: &[u8]| {
        b.chunks_exact(16)
            .all(|w| u128::from_ne_bytes(w.try_into().expect("16 bytes")) == 0)
            && b.chunks_exact(16).remainder().iter().all(|&x| x == 0)
    };
    // Blocks aligned on the file's offsets: the first starts at the next multiple of BLOCK.
    let first = ((BLOCK as u64 - at % BLOCK as u64) % BLOCK as u64) as usize;
    let mut written = 0usize; // bytes of `buf` before this are written or skipped
    let mut b = first.min(buf.len());
    while b + BLOCK <= buf.len() {
        if !zero(&buf[b..b + BLOCK]) {
            b += BLOCK;
            continue;
        }
        let mut e = b + BLOCK;
        while e + BLOCK <= buf.len() && zero(&buf[e..e + BLOCK]) {
            e += BLOCK;
        }
        if e - b >= HOLE_MIN {
            file.write_all_at(&buf[written..b], at + written as u64)?;
            written = e;
        }
        b = e;
    }
    file.write_all_at(&buf[written..], at + written as u64)
}

/// Reserves the blocks of `[start, start + len)` of `out` (named `name`) on the disk, so
/// that writing them later through a map cannot fail (a full disk under a shared map is a
/// SIGBUS, not an error). A filesystem that cannot reserve space is left to allocate as it
/// writes.
fn reserve(out: &File, name: &str, start: u64, len: u64) -> Result<(), EngineError> {
    use std::os::fd::AsRawFd;
    // SAFETY: posix_fallocate on a descriptor we own, with a valid range.
    let rc =
        unsafe { libc::posix_fallocate(out.as_raw_fd(), start as libc::off_t, len as libc::off_t) };
    match rc {
        0 | libc::EOPNOTSUPP | libc::EINVAL => Ok(()),
        e => Err(EngineError::io(name, io::Error::from_raw_os_error(e))),
    }
}

/// An output file mapped for writing, shared by workers that each fill ranges no other
/// worker touches (blocks of a transformation, sections of a patch). Only for a file of
/// this process's own (an [`AtomicOutput`]'s temporary file), sized before it is mapped:
/// no one else can truncate it under the map.
struct SharedMap {
    map: memmap2::MmapMut,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: workers only write through `range_mut`, whose callers guarantee disjoint ranges;
// the map lives as long as this value, which the workers borrow.
unsafe impl Sync for SharedMap {}
// SAFETY: as above; the pointer is the map's own, valid wherever the map goes.
unsafe impl Send for SharedMap {}

impl SharedMap {
    /// Maps `out` (named `name`, already sized) for writing.
    ///
    /// # Safety
    /// `out` must be this process's own file, not truncated while the map lives.
    unsafe fn new(out: &File, name: &str) -> Result<SharedMap, EngineError> {
        // SAFETY: by the caller's promise the file is ours and keeps its size.
        let mut map =
            unsafe { memmap2::MmapMut::map_mut(out) }.map_err(|e| EngineError::io(name, e))?;
        let (ptr, len) = (map.as_mut_ptr(), map.len());
        Ok(SharedMap { map, ptr, len })
    }

    /// The bytes `[start, start + len)` of the file, to write.
    ///
    /// # Safety
    /// No two slices returned by this function and alive at once may overlap.
    #[allow(clippy::mut_from_ref)]
    unsafe fn range_mut(&self, start: usize, len: usize) -> &mut [u8] {
        assert!(
            start <= self.len && len <= self.len - start,
            "range in the map"
        );
        // SAFETY: in bounds (checked above) and, by the caller's promise, not aliased.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }

    /// Starts writing the map's dirty pages back, without waiting for them.
    fn flush_async(&self) -> Result<(), io::Error> {
        self.map.flush_async()
    }
}

/// One range of an output file mapped for writing on its own, unmapped when dropped: a
/// worker fills it, and the pages go back to the page cache as it finishes, so the
/// process's resident memory stays the ranges in flight whatever the file's size.
struct RangeMap {
    map: memmap2::MmapMut,
    skip: usize,
}

impl RangeMap {
    /// Maps `[start, start + len)` of `out` (named `name`, at least that long) for writing,
    /// its pages faulted in at once (`MADV_POPULATE_WRITE` where the kernel has it).
    ///
    /// # Safety
    /// `out` must be this process's own file, not truncated while the map lives.
    unsafe fn new(out: &File, name: &str, start: u64, len: usize) -> Result<RangeMap, EngineError> {
        let page = crate::sysinfo::page_size() as u64;
        let base = start / page * page;
        let skip = (start - base) as usize;
        // SAFETY: by the caller's promise the file is ours and keeps its size.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(base)
                .len(skip + len)
                .map_mut(out)
        }
        .map_err(|e| EngineError::io(name, e))?;
        if len > 0 {
            // SAFETY: madvise on our own live map; the advice only faults pages in, and
            // fails harmlessly on kernels that do not know it.
            unsafe {
                libc::madvise(map.as_ptr() as *mut libc::c_void, map.len(), 23);
                // MADV_POPULATE_WRITE
            }
        }
        Ok(RangeMap { map, skip })
    }
}

impl std::ops::Deref for RangeMap {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map[self.skip..]
    }
}

impl std::ops::DerefMut for RangeMap {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.map[self.skip..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use crate::output::tests::names;

    /// `len` bytes with long runs of zeros among the data (so that sparse writes skip some).
    fn content(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let run = (x % 100_000) as usize + 1;
            let n = run.min(len - out.len());
            if x.is_multiple_of(3) {
                out.resize(out.len() + n, 0);
            } else {
                out.extend((0..n).map(|i| (x as usize + i * 31) as u8 | 1));
            }
        }
        out
    }

    /// The blocks `[cut[i], cut[i + 1])` of `[0, len)`.
    fn blocks(len: usize, cuts: &[usize]) -> Vec<(usize, usize)> {
        let mut at: Vec<usize> = cuts.iter().map(|&c| c % (len + 1)).collect();
        at.extend([0, len]);
        at.sort_unstable();
        at.dedup();
        at.windows(2).map(|w| (w[0], w[1])).collect()
    }

    /// Writes `data` as `pieces`, handed out in that order to `threads` workers, through
    /// `writer`, each block by `write_at` or `fill` as `fill` says.
    fn write_all(
        writer: &BlockWriter<'_>,
        data: &[u8],
        pieces: &[(usize, usize)],
        threads: usize,
        fill: bool,
    ) -> Result<(), EngineError> {
        let next = AtomicUsize::new(0);
        writer.run(threads, |_, lane| loop {
            let Some(&(a, b)) = pieces.get(next.fetch_add(1, Ordering::Relaxed)) else {
                return Ok(());
            };
            if fill {
                lane.fill(a as u64, b - a, |dst| {
                    dst.copy_from_slice(&data[a..b]);
                    Ok::<(), EngineError>(())
                })?;
            } else {
                lane.write_at(a as u64, &data[a..b])?;
            }
        })
    }

    fn options() -> impl Strategy<Value = BlockOptions> {
        (
            prop_oneof![
                Just(Via::Pwrite),
                Just(Via::SharedMap),
                Just(Via::RangeMaps)
            ],
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(via, blocks, sparse, own)| BlockOptions {
                via,
                reserve: if blocks {
                    Reserve::Blocks
                } else {
                    Reserve::Whole
                },
                sparse,
                own_descriptors: own,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn every_block_lands_at_its_offset_in_any_order_and_any_thread_count(
            len in 0usize..400_000,
            seed in any::<u64>(),
            cuts in proptest::collection::vec(any::<usize>(), 0..40),
            order in any::<u64>(),
            threads in 1usize..6,
            opts in options(),
            fill in any::<bool>(),
        ) {
            let data = content(len, seed);
            let mut pieces = blocks(len, &cuts);
            // Any order: a shuffle from `order`.
            let mut x = order | 1;
            for i in (1..pieces.len()).rev() {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                pieces.swap(i, (x >> 33) as usize % (i + 1));
            }
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("out");
            // What was there before is replaced whole, holes included.
            std::fs::write(&target, vec![7u8; len + 10]).unwrap();
            let out = AtomicOutput::create(&target).unwrap();
            let writer = BlockWriter::for_output(&out, len as u64, opts).unwrap();
            prop_assert_eq!(
                writer.is_mapped(),
                opts.via != Via::Pwrite && len > 0,
                "{:?}", opts
            );
            write_all(&writer, &data, &pieces, threads, fill).unwrap();
            writer.finish().unwrap();
            out.commit(false).unwrap();
            prop_assert_eq!(std::fs::read(&target).unwrap(), data);
            prop_assert_eq!(names(dir.path()), ["out"]);
        }
    }

    /// A FIFO at `dir/fifo` and a thread that reads it whole.
    fn fifo(dir: &Path) -> (std::path::PathBuf, std::thread::JoinHandle<Vec<u8>>) {
        let path = dir.join("fifo");
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let path = path.clone();
            std::thread::spawn(move || std::fs::read(path).unwrap())
        };
        (path, reader)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn a_target_written_directly_gets_its_blocks_in_order(
            len in 0usize..300_000,
            seed in any::<u64>(),
            cuts in proptest::collection::vec(any::<usize>(), 0..30),
            threads in 1usize..6,
            opts in options(),
            fill in any::<bool>(),
        ) {
            let data = content(len, seed);
            let pieces = blocks(len, &cuts);
            let dir = tempfile::tempdir().unwrap();
            let (path, reader) = fifo(dir.path());
            let out = AtomicOutput::create(&path).unwrap();
            prop_assert!(out.is_direct());
            let writer = BlockWriter::for_output(&out, len as u64, opts).unwrap();
            prop_assert!(writer.is_ordered() && !writer.is_mapped());
            // Handed out in order from a shared cursor, finished in any order.
            write_all(&writer, &data, &pieces, threads, fill).unwrap();
            writer.finish().unwrap();
            out.commit(false).unwrap();
            prop_assert_eq!(reader.join().unwrap(), data);
        }
    }

    #[test]
    fn a_stream_whose_next_block_fails_stops_without_waiting_forever() {
        let dir = tempfile::tempdir().unwrap();
        let (path, reader) = fifo(dir.path());
        let out = AtomicOutput::create(&path).unwrap();
        let writer = BlockWriter::for_output(&out, 4000, BlockOptions::default()).unwrap();
        // Worker 0 fails before writing the first block; the others wait for it in vain.
        let r = writer.run(4, |t, lane| {
            if t == 0 {
                return Err("no first block");
            }
            lane.write_at(t as u64 * 1000, &[b'x'; 1000])
                .map_err(|_| "write")
        });
        assert_eq!(r, Err("no first block"));
        let err = writer.finish().unwrap_err();
        assert_eq!(err.path(), path);
        assert!(
            err.to_string().contains("stopped at byte 0 of 4000"),
            "{err}"
        );
        drop(out);
        assert!(reader.join().unwrap().is_empty());
    }

    #[test]
    fn a_failure_leaves_no_output_and_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        // No disk holds this: sizing or reserving it fails, named for the output.
        for via in [Via::SharedMap, Via::RangeMaps] {
            let out = AtomicOutput::create(&target).unwrap();
            let opts = BlockOptions {
                via,
                ..BlockOptions::default()
            };
            let err = BlockWriter::for_output(&out, 1 << 62, opts).unwrap_err();
            assert_eq!(err.path(), target, "{err}");
            drop(out);
            assert!(names(dir.path()).is_empty());
        }
        // A worker's failure, with positional writes and through a map: the run returns
        // it, and the output dropped leaves nothing.
        for via in [Via::Pwrite, Via::SharedMap, Via::RangeMaps] {
            let out = AtomicOutput::create(&target).unwrap();
            let opts = BlockOptions {
                via,
                ..BlockOptions::default()
            };
            let writer = BlockWriter::for_output(&out, 1 << 20, opts).unwrap();
            let r = writer.run(3, |t, lane| {
                lane.fill(t as u64 * 4096, 4096, |dst| {
                    dst.fill(1);
                    if t == 1 {
                        Err(EngineError::io(
                            dir.path().join("in"),
                            io::Error::other("bad"),
                        ))
                    } else {
                        Ok(())
                    }
                })
            });
            assert_eq!(
                r.unwrap_err().to_string(),
                format!("{}: bad", dir.path().join("in").display())
            );
            // Blocks past the end, or over one being filled, are refused, named.
            let mut lane = writer.lane();
            let err = lane.write_at((1 << 20) - 10, &[1u8; 11]);
            if writer.is_mapped() {
                let err = err.unwrap_err();
                assert_eq!(err.path(), target);
                assert!(err.to_string().contains("past the output's end"), "{err}");
                let mut other = writer.lane();
                let err = lane
                    .fill(0, 8192, |_| other.write_at(4096, &[2u8; 10]))
                    .unwrap_err();
                assert!(err.to_string().contains("overlaps"), "{err}");
                assert_eq!(err.path(), target);
            }
            drop(lane);
            writer.finish().unwrap();
            drop(out);
            assert!(names(dir.path()).is_empty(), "{via:?}");
        }
        // A file the writer cannot write: the error names it.
        std::fs::write(&target, b"").unwrap();
        let ro = std::fs::File::open(&target).unwrap();
        let w = BlockWriter::presized(&ro, "named", 10, BlockOptions::default()).unwrap();
        let err = w.lane().write_at(0, b"abc").unwrap_err();
        assert_eq!(err.path(), Path::new("named"));
        let err = BlockWriter::new(&ro, "named", 10, BlockOptions::default()).unwrap_err();
        assert_eq!(err.path(), Path::new("named"));
    }

    #[test]
    fn a_plain_file_is_written_positionally_unless_promised_private() {
        let f = tempfile::tempfile().unwrap();
        let opts = BlockOptions {
            via: Via::SharedMap,
            ..BlockOptions::default()
        };
        let w = BlockWriter::new(&f, "f", 100, opts).unwrap();
        assert!(!w.is_mapped());
        w.lane().write_at(10, b"abc").unwrap();
        w.finish().unwrap();
        // SAFETY: a temporary file of this test's own, truncated by no one.
        let w = unsafe { BlockWriter::new_private(&f, "f", 100, opts) }.unwrap();
        assert!(w.is_mapped());
        w.lane().write_at(20, b"def").unwrap();
        w.finish().unwrap();
        let mut got = vec![0u8; 100];
        f.read_exact_at(&mut got, 0).unwrap();
        assert_eq!(&got[10..13], b"abc");
        assert_eq!(&got[20..23], b"def");
        assert_eq!(f.metadata().unwrap().len(), 100);
    }

    #[test]
    fn own_descriptors_write_the_same_file() {
        let f = tempfile::tempfile().unwrap();
        let opts = BlockOptions {
            own_descriptors: true,
            ..BlockOptions::default()
        };
        let w = BlockWriter::new(&f, "f", 8, opts).unwrap();
        let mut lane = w.lane();
        if Path::new("/proc/self/fd").is_dir() {
            assert!(lane.own.is_some());
        }
        lane.write_at(0, b"12345678").unwrap();
        drop(lane);
        w.finish().unwrap();
        let mut got = [0u8; 8];
        f.read_exact_at(&mut got, 0).unwrap();
        assert_eq!(&got, b"12345678");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn a_sparse_write_reads_back_as_written(
            parts in proptest::collection::vec(
                prop_oneof![
                    (1usize..300_000).prop_map(|n| vec![0u8; n]),
                    (1usize..20_000, any::<u8>()).prop_map(|(n, b)| vec![b | 1; n]),
                ],
                0..8,
            ),
            at in 0u64..20_000,
            before in any::<u8>(),
        ) {
            let buf = parts.concat();
            let f = tempfile::tempfile().unwrap();
            // What was in the file before (a section written earlier, or nothing) around it.
            f.write_all_at(&vec![before; at as usize], 0).unwrap();
            f.set_len(at + buf.len() as u64 + 100).unwrap();
            write_sparse(&f, &buf, at).unwrap();
            let mut got = vec![0u8; buf.len()];
            f.read_exact_at(&mut got, at).unwrap();
            prop_assert_eq!(got, buf);
            let mut head = vec![0u8; at as usize];
            f.read_exact_at(&mut head, 0).unwrap();
            prop_assert!(head.iter().all(|&b| b == before));
        }
    }

    #[test]
    fn long_zero_stretches_are_holes_and_short_ones_are_written() {
        use std::os::unix::fs::MetadataExt;
        let mut buf = vec![7u8; 10_000];
        buf.extend(vec![0u8; 8 << 20]);
        buf.extend(vec![9u8; 10_000]);
        let f = tempfile::tempfile().unwrap();
        f.set_len(buf.len() as u64).unwrap();
        write_sparse(&f, &buf, 0).unwrap();
        let allocated = f.metadata().unwrap().blocks() * 512;
        assert!(allocated < 1 << 20, "{allocated} bytes allocated");
        // Zero pages shorter than HOLE_MIN are written.
        let mut buf = Vec::new();
        for _ in 0..64 {
            buf.extend(vec![1u8; 4096]);
            buf.extend(vec![0u8; 8192]);
        }
        let f = tempfile::tempfile().unwrap();
        f.set_len(buf.len() as u64).unwrap();
        write_sparse(&f, &buf, 0).unwrap();
        let allocated = f.metadata().unwrap().blocks() * 512;
        assert!(allocated >= buf.len() as u64, "{allocated} bytes allocated");
    }
}
