//! The executor: runs a kernel over every block of a job on all workers.
//!
//! A [`Job`] is one or more [`Region`]s (an input and the offset its data starts at) read in
//! lock-step: block `i` of the job is bytes `[i * B, (i + 1) * B)` of every region, and the
//! kernel sees the slices side by side. The job covers the length all regions share (capped by
//! an optional limit); which regions end exactly there is reported in the [`Extent`], so a
//! command can say "EOF on FILE".
//!
//! The kernel is a closure `Fn(&Block, &[&[u8]]) -> Flow` called from several threads. Workers
//! take blocks in ascending order (per worker), so a [`StopCheck`] that says "nothing at or past
//! this offset matters any more" lets each worker stop at its next block without coordination.
//!
//! # Holes
//!
//! A job whose kernel knows runs of zeros ([`Job::with_zero_runs`]) is not handed the holes of
//! sparse files as bytes: where every region is a hole (asked of the file system with
//! `SEEK_DATA`/`SEEK_HOLE`, see [`Input::hole_at`]), whole blocks are merged into one
//! *zero run*: a [`Block`] with a length and empty slices ([`is_zero_run`]), which stands
//! for the nominal blocks it covers ([`next_index`]). Nothing is read or mapped for it, so a
//! 1 TB sparse file costs a few calls. With [`Framing::LinesOrNul`] every zero byte of a run
//! is a line of its own (a NUL ends a line), and the byte before a run is a zero too, so the
//! run is exactly the lines that start in it. Other jobs read holes as the zeros they hold.
//!
//! A job of several regions can also take a hole in *some* of them
//! ([`Job::with_region_holes`]): a region that is a hole over a whole block is handed as an
//! empty slice beside the others' bytes ([`is_hole`]), and is not read or mapped, so a kernel
//! comparing it with another region only checks that one against zeros.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::buf::{skew, PageBuf, PAGE};
use crate::error::EngineError;
use crate::input::Input;
use crate::mapguard::GuardedMap;
use crate::plan::{Layout, Method, Plan};

/// One input read from an offset (relative to the input's own start).
#[derive(Debug, Clone, Copy)]
pub struct Region<'a> {
    /// The input.
    pub input: &'a Input,
    /// Bytes of the input skipped before the job's first byte.
    pub offset: u64,
}

/// Regions read in lock-step, up to an optional limit.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// The regions, at most [`MAX_REGIONS`].
    pub regions: Vec<Region<'a>>,
    /// Bytes to process at most.
    pub limit: Option<u64>,
    /// Counter of bytes processed so far (per region), for progress bars.
    pub progress: Option<&'a AtomicU64>,
    /// How the job's bytes are cut into the slices the kernel sees.
    pub framing: Framing,
    /// The kernel takes zero runs (see the module documentation on holes).
    pub zero_runs: bool,
    /// The kernel also takes a hole in some regions only, as an empty slice.
    pub region_holes: bool,
    /// What line framing does with a line longer than a bound.
    pub long_lines: LongLines<'a>,
}

/// What line framing does with a line longer than a bound: a line is *long* when more than
/// `max` bytes come before its end (its newline, a NUL with [`Framing::LinesOrNul`], or the
/// job's end).
///
/// With a bound, the engine never gathers more than about `max` bytes of one line (beyond a
/// block): a long line that crosses a read or a block's end is not handed to the kernel, and
/// the rest of it is read past in pieces of a block, in constant memory and linear time. A
/// long line that lies inside one block is handed as it is (it costs nothing to hold): a
/// kernel that applies the rule exactly drops the lines longer than `max` it sees, and then
/// the result does not depend on the plan.
#[derive(Debug, Clone, Copy, Default)]
pub enum LongLines<'a> {
    /// Every line is handed whole, however long (in the parallel path a line past
    /// 64 MiB is read through a map, elsewhere it is gathered in memory).
    #[default]
    Whole,
    /// A long line the engine would gather is left out; `skipped` counts them.
    Skip {
        /// The bound, in bytes.
        max: usize,
        /// Long lines left out by the engine.
        skipped: &'a AtomicU64,
    },
    /// A long line the engine would gather is an error, [`EngineError::LineTooLong`].
    Fail {
        /// The bound, in bytes.
        max: usize,
    },
}

impl LongLines<'_> {
    /// The bound, if any.
    pub fn max(&self) -> Option<usize> {
        match *self {
            LongLines::Whole => None,
            LongLines::Skip { max, .. } | LongLines::Fail { max } => Some(max),
        }
    }

    /// Acts on a long line at job offset `offset` of region `r`: counts it, or fails.
    fn hit(&self, r: &Region<'_>, offset: u64) -> Result<(), EngineError> {
        match *self {
            LongLines::Whole => Ok(()),
            LongLines::Skip { skipped, .. } => {
                skipped.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            LongLines::Fail { max } => Err(EngineError::LineTooLong {
                path: r.input.name().into(),
                offset: r.offset + offset,
                max,
            }),
        }
    }
}

/// How a job's bytes are cut into the slices a kernel sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// Block `i` is exactly bytes `[i * B, (i + 1) * B)`.
    #[default]
    Bytes,
    /// Whole lines: block `i` holds the lines that *start* in `[i * B, (i + 1) * B)`, each
    /// up to and including its newline (the last one up to the job's end). No line is cut
    /// and every line is seen once; the bytes past the nominal end are the block's overlap
    /// with the next one. A block inside one long line is empty. Line framing is how grep
    /// and the log reports split a file: a match never spans a newline, so no result is
    /// lost at a seam and line numbers add up per block. Single-region jobs only.
    Lines,
    /// As [`Framing::Lines`], with a NUL byte also ending a line: how GNU grep reads a
    /// binary file, and what keeps a file of NULs (a sparse file's holes) from being one
    /// line held whole in memory.
    LinesOrNul,
    /// Records that end with a NUL byte instead of a newline (`grep -z`); otherwise as
    /// [`Framing::Lines`].
    Nul,
}

impl Framing {
    fn is_lines(self) -> bool {
        self != Framing::Bytes
    }

    /// True when `b` ends a line.
    #[inline]
    fn ends(self, b: u8) -> bool {
        match self {
            Framing::Nul => b == 0,
            _ => b == b'\n' || (self == Framing::LinesOrNul && b == 0),
        }
    }

    /// The first line end in `hay`.
    #[inline]
    fn find(self, hay: &[u8]) -> Option<usize> {
        match self {
            Framing::LinesOrNul => memchr::memchr2(b'\n', 0, hay),
            Framing::Nul => memchr::memchr(0, hay),
            _ => memchr::memchr(b'\n', hay),
        }
    }

    /// The last line end in `hay`.
    #[inline]
    fn rfind(self, hay: &[u8]) -> Option<usize> {
        match self {
            Framing::LinesOrNul => memchr::memrchr2(b'\n', 0, hay),
            Framing::Nul => memchr::memrchr(0, hay),
            _ => memchr::memrchr(b'\n', hay),
        }
    }
}

/// Regions one job can read side by side.
pub const MAX_REGIONS: usize = 4;

impl<'a> Job<'a> {
    /// A job over `regions`, with no limit.
    pub fn new(regions: Vec<Region<'a>>) -> Self {
        assert!(
            !regions.is_empty() && regions.len() <= MAX_REGIONS,
            "a job reads 1 to {MAX_REGIONS} regions"
        );
        Job {
            regions,
            limit: None,
            progress: None,
            framing: Framing::Bytes,
            zero_runs: false,
            region_holes: false,
            long_lines: LongLines::Whole,
        }
    }

    /// Bounds the lines line framing gathers, as `long_lines` says.
    pub fn with_long_lines(mut self, long_lines: LongLines<'a>) -> Self {
        self.long_lines = long_lines;
        self
    }

    /// Hands runs of holes (zeros in every region) to the kernel as zero runs: blocks with a
    /// length and empty slices ([`is_zero_run`]). Not with [`Framing::Lines`], where a hole is
    /// part of one long line; ignored there.
    pub fn with_zero_runs(mut self) -> Self {
        self.zero_runs = true;
        self
    }

    /// True when this job may be handed zero runs.
    fn takes_zero_runs(&self) -> bool {
        self.zero_runs && matches!(self.framing, Framing::Bytes | Framing::LinesOrNul)
    }

    /// Hands zero runs ([`Job::with_zero_runs`]) and, where only some regions are a hole
    /// over a whole block, those regions as empty slices beside the others' bytes
    /// ([`is_hole`]): they are neither read nor mapped. For kernels that compare regions and
    /// can check one against zeros. Byte framing only (ignored with line framing).
    pub fn with_region_holes(mut self) -> Self {
        self.zero_runs = true;
        self.region_holes = true;
        self
    }

    /// True when this job may be handed regions that are holes beside others that are not.
    fn takes_region_holes(&self) -> bool {
        self.region_holes && self.zero_runs && self.framing == Framing::Bytes
    }

    /// True when region `i` is a hole over all of job offsets `[from, to)`. `cache` holds,
    /// per region, the last extent the file system described (a hole or data), so blocks
    /// asked about in ascending order cost one question per extent, not one per block.
    fn region_is_hole(
        &self,
        i: usize,
        from: u64,
        to: u64,
        cache: &mut [KnownExtent; MAX_REGIONS],
    ) -> bool {
        let r = &self.regions[i];
        if !r.input.may_have_holes() {
            return false;
        }
        let origin = r.input.base() + r.offset;
        let (at, end) = (origin + from, origin + to);
        let k = &mut cache[i];
        if !(k.start <= at && at < k.end) {
            *k = match r.input.hole_at(at) {
                Some(e) => KnownExtent {
                    start: at,
                    end: e,
                    hole: true,
                },
                None => KnownExtent {
                    start: at,
                    end: r.input.data_end(at).unwrap_or(at + 1).max(at + 1),
                    hole: false,
                },
            };
        }
        k.hole && end <= k.end
    }

    /// The job offset where zeros that start at job offset `from` end in every region (the
    /// end of the shortest hole, capped by the regions' sizes at open), or `None` when some
    /// region has data at `from` (or cannot tell). `known` holds, per region, the absolute
    /// offset up to which data is already known to lie (from an earlier call, for callers
    /// that ask in ascending order), so dense stretches cost one call per extent.
    fn zeros_until(&self, from: u64, known: &mut [u64; MAX_REGIONS]) -> Option<u64> {
        let mut end = u64::MAX;
        for (i, r) in self.regions.iter().enumerate() {
            if !r.input.may_have_holes() {
                return None;
            }
            let origin = r.input.base() + r.offset;
            let at = origin + from;
            if at < known[i] {
                return None;
            }
            match r.input.hole_at(at) {
                Some(e) => end = end.min(e.saturating_sub(origin)),
                None => {
                    known[i] = r.input.data_end(at).unwrap_or(at + 1).max(at + 1);
                    return None;
                }
            }
        }
        Some(end)
    }

    /// Where a zero run starting at the nominal block `index` (of `bs` bytes) ends, as a
    /// block number past it: `None` unless at least the whole block is zeros in every region.
    /// `last` caps the run (the end of a worker's range, or the number of blocks); `len` is
    /// the job's length.
    fn zero_run_end(
        &self,
        index: u64,
        bs: u64,
        last: u64,
        len: u64,
        known: &mut [u64; MAX_REGIONS],
    ) -> Option<u64> {
        let start = index * bs;
        // With NULs ending lines, the byte before the run must be a zero too, so that no line
        // begun before the run reaches into it.
        let from = if self.framing == Framing::LinesOrNul {
            start.saturating_sub(1)
        } else {
            start
        };
        let z = self.zeros_until(from, known)?.min(len);
        if z < (start + bs).min(len) {
            return None;
        }
        let end = if z >= len { last } else { z / bs };
        Some(end.clamp(index + 1, last.max(index + 1)))
    }

    /// Cuts the job's blocks as `framing` says.
    pub fn with_framing(mut self, framing: Framing) -> Self {
        assert!(
            !framing.is_lines() || self.regions.len() == 1,
            "line framing reads one region"
        );
        self.framing = framing;
        self
    }

    /// Caps the job at `limit` bytes.
    pub fn with_limit(mut self, limit: Option<u64>) -> Self {
        self.limit = limit;
        self
    }

    /// Adds each block's length to `counter` once the kernel has processed it.
    pub fn with_progress(mut self, counter: Option<&'a AtomicU64>) -> Self {
        self.progress = counter;
        self
    }

    fn advance(&self, bytes: usize) {
        if let Some(p) = self.progress {
            p.fetch_add(bytes as u64, Ordering::Relaxed);
        }
    }

    /// The job's length, when every region has a known length: [`Job::known_extent`]'s
    /// `len`, without its allocations.
    pub fn known_len(&self) -> Option<u64> {
        let mut shortest = u64::MAX;
        for r in &self.regions {
            shortest = shortest.min(r.input.len()?.saturating_sub(r.offset));
        }
        Some(self.limit.map_or(shortest, |l| l.min(shortest)))
    }

    /// The extent, when every region has a known length.
    pub fn known_extent(&self) -> Option<Extent> {
        let len = self.known_len()?;
        let remaining = |r: &Region<'_>| r.input.len().unwrap_or(0).saturating_sub(r.offset);
        let shortest = self.regions.iter().map(remaining).min().unwrap_or(0);
        let limited = self.limit.is_some_and(|l| l <= shortest);
        let ended = self
            .regions
            .iter()
            .map(|r| !limited && remaining(r) == len)
            .collect();
        Some(Extent { len, ended })
    }

    /// `(input, offset)` pairs for the planner.
    pub fn plan_regions(&self) -> Vec<(&'a Input, u64)> {
        self.regions.iter().map(|r| (r.input, r.offset)).collect()
    }
}

/// How far a job went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extent {
    /// Bytes covered by the job (all regions have at least this many).
    pub len: u64,
    /// For each region, whether its data ends exactly at `len` (rather than the limit or the
    /// other regions ending it).
    pub ended: Vec<bool>,
}

/// A block handed to a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Block number within the job.
    pub index: u64,
    /// Offset of the slice's first byte within the job.
    pub start: u64,
    /// Bytes in the slice.
    pub len: usize,
}

/// What a worker last learnt of one region's extents: absolute offsets `[start, end)` are a
/// hole, or data.
#[derive(Debug, Clone, Copy, Default)]
struct KnownExtent {
    start: u64,
    end: u64,
    hole: bool,
}

/// True when `block` is a zero run: `block.len` zero bytes in every region, handed over with
/// empty slices (only to jobs that asked with [`Job::with_zero_runs`]).
#[inline]
pub fn is_zero_run(block: &Block, data: &[&[u8]]) -> bool {
    block.len > 0 && data.iter().all(|d| d.is_empty())
}

/// True when `slice`, one region of `block`, stands for `block.len` zeros (a hole) rather
/// than holding them: an empty slice of a block that is not empty (only for jobs that asked
/// with [`Job::with_zero_runs`] or [`Job::with_region_holes`]).
#[inline]
pub fn is_hole(block: &Block, slice: &[u8]) -> bool {
    block.len > 0 && slice.is_empty()
}

/// The number of the block that follows `block` when blocks are `block_size` bytes: past
/// every nominal block a zero run stands for.
#[inline]
pub fn next_index(block: &Block, data: &[&[u8]], block_size: usize) -> u64 {
    if is_zero_run(block, data) {
        (block.start + block.len as u64)
            .div_ceil(block_size.max(1) as u64)
            .max(block.index + 1)
    } else {
        block.index + 1
    }
}

/// What a kernel asks of the executor after a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep going.
    Continue,
    /// The answer is known: every worker stops at its next block.
    Stop,
}

/// A shared condition that makes workers stop before blocks that cannot matter any more.
pub trait StopCheck: Sync {
    /// True when no block starting at or after `block_start` needs processing.
    fn stop_before(&self, block_start: u64) -> bool;
}

impl StopCheck for () {
    fn stop_before(&self, _: u64) -> bool {
        false
    }
}

impl StopCheck for AtomicBool {
    fn stop_before(&self, _: u64) -> bool {
        self.load(Ordering::Relaxed)
    }
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunStats {
    /// The bytes the job covered (all of them, unless stopped early).
    pub extent: Extent,
    /// Blocks the kernel was called on.
    pub blocks: u64,
    /// True when a kernel or stop check ended the run before the last block.
    pub stopped_early: bool,
}

/// Called before a worker reads a block: may wait, and returns false to stop the worker.
pub(crate) type Gate<'g> = &'g (dyn Fn(u64) -> bool + Sync);

/// Runs `visit` over every block of `job` as `plan` says.
pub fn run_blocks<F>(
    plan: &Plan,
    job: &Job<'_>,
    stop: &dyn StopCheck,
    visit: F,
) -> Result<RunStats, EngineError>
where
    F: Fn(&Block, &[&[u8]]) -> Flow + Sync,
{
    execute(plan, job, stop, None, &visit)
}

pub(crate) fn execute(
    plan: &Plan,
    job: &Job<'_>,
    stop: &dyn StopCheck,
    gate: Option<Gate<'_>>,
    visit: &(dyn Fn(&Block, &[&[u8]]) -> Flow + Sync),
) -> Result<RunStats, EngineError> {
    let extent = match plan.method {
        Method::Read => None,
        _ => job.known_extent(),
    };
    match (plan.method, extent) {
        (Method::Read, _) | (_, None) if job.framing.is_lines() => {
            sequential_lines(plan, job, stop, visit)
        }
        (Method::Read, _) | (_, None) => sequential(plan, job, stop, visit),
        (method, Some(extent)) => parallel(plan, method, job, extent, stop, gate, visit),
    }
}

/// The seed's conventional path: one thread, reading one block per region at a time, front to
/// back. Regular files are read at explicit offsets (so a job can be run again on the same
/// input); streams are read from their current position and skip by reading.
fn sequential(
    plan: &Plan,
    job: &Job<'_>,
    stop: &dyn StopCheck,
    visit: &(dyn Fn(&Block, &[&[u8]]) -> Flow + Sync),
) -> Result<RunStats, EngineError> {
    let n = job.regions.len();
    let bs = plan.block_size;
    let mut bufs: Vec<PageBuf> = (0..n).map(|_| PageBuf::with_capacity(bs + PAGE)).collect();
    // Where each region's bytes start in its buffer (see `PageBuf::window`).
    let mut starts = [0usize; MAX_REGIONS];
    let mut ended = vec![false; n];
    for (i, r) in job.regions.iter().enumerate() {
        if !r.input.is_seekable() {
            ended[i] = r.input.skip_sequential(r.offset)? < r.offset;
        } else {
            ended[i] = r.input.len().unwrap_or(0) < r.offset;
        }
    }
    let mut stats = RunStats {
        extent: Extent { len: 0, ended },
        blocks: 0,
        stopped_early: false,
    };
    if stats.extent.ended.iter().any(|&e| e) {
        // A region ran out while skipping: the job is empty, and any other region that has
        // no byte left ended there too.
        for (i, r) in job.regions.iter().enumerate() {
            if !stats.extent.ended[i] {
                stats.extent.ended[i] = if r.input.is_seekable() {
                    r.input.len().unwrap_or(0) <= r.offset
                } else {
                    r.input.read_full(&mut [0u8; 1])? == 0
                };
            }
        }
        return Ok(stats);
    }
    let limit = job.limit.unwrap_or(u64::MAX);
    if limit == 0 {
        for r in &job.regions {
            r.input.probe()?;
        }
    }
    let (mut pos, mut index) = (0u64, 0u64);
    let mut got = vec![0usize; n];
    let zero_runs = job.takes_zero_runs();
    let region_holes = job.takes_region_holes();
    let mut known = [0u64; MAX_REGIONS];
    let mut extents = [KnownExtent::default(); MAX_REGIONS];
    let mut holes = [false; MAX_REGIONS];
    while pos < limit {
        if stop.stop_before(pos) {
            stats.stopped_early = true;
            break;
        }
        if zero_runs {
            // Whole blocks of holes in every region: one zero run, nothing read.
            let run = job.zeros_until(pos, &mut known).map_or(0, |z| {
                z.min(limit).saturating_sub(pos) / bs as u64 * bs as u64
            });
            if run > 0 {
                let block = Block {
                    index,
                    start: pos,
                    len: run as usize,
                };
                stats.blocks += 1;
                let flow = visit(&block, &[&[][..]; MAX_REGIONS][..n]);
                job.advance(run as usize);
                pos += run;
                index += run / bs as u64;
                if flow == Flow::Stop {
                    stats.stopped_early = true;
                    break;
                }
                continue;
            }
        }
        let want = (limit - pos).min(bs as u64) as usize;
        for (i, r) in job.regions.iter().enumerate() {
            // A region that is a hole over the whole block (within its size at open) is
            // not read: the kernel gets it as an empty slice.
            holes[i] = region_holes
                && r.input.is_seekable()
                && job.region_is_hole(i, pos, pos + want as u64, &mut extents);
            if holes[i] {
                got[i] = want;
                continue;
            }
            got[i] = if r.input.is_seekable() {
                let at = r.input.base() + r.offset + pos;
                starts[i] = skew(at);
                r.input.read_full_at(bufs[i].window(at, want), at)?
            } else {
                starts[i] = 0;
                r.input.read_full(bufs[i].window(0, want))?
            };
        }
        let len = got.iter().copied().min().unwrap_or(0);
        for (e, &g) in stats.extent.ended.iter_mut().zip(&got) {
            *e = g == len && g < want;
        }
        if len > 0 {
            let block = Block {
                index,
                start: pos,
                len,
            };
            let mut slices: [&[u8]; MAX_REGIONS] = [&[]; MAX_REGIONS];
            for (((s, b), &hole), &at) in slices.iter_mut().zip(&bufs).zip(&holes).zip(&starts) {
                *s = if hole { &[] } else { &b[at..at + len] };
            }
            stats.blocks += 1;
            let flow = visit(&block, &slices[..n]);
            job.advance(len);
            pos += len as u64;
            index += 1;
            if flow == Flow::Stop {
                stats.stopped_early = true;
                break;
            }
        }
        if len < want {
            break;
        }
    }
    if pos >= limit {
        stats.extent.ended.iter_mut().for_each(|e| *e = false);
    }
    stats.extent.len = pos;
    Ok(stats)
}

/// The sequential path with line framing: each block is the complete lines read so far; the
/// partial line at the end of a read is carried into the next block.
fn sequential_lines(
    plan: &Plan,
    job: &Job<'_>,
    stop: &dyn StopCheck,
    visit: &(dyn Fn(&Block, &[&[u8]]) -> Flow + Sync),
) -> Result<RunStats, EngineError> {
    let r = job.regions[0];
    let mut stats = RunStats {
        extent: Extent {
            len: 0,
            ended: vec![false],
        },
        blocks: 0,
        stopped_early: false,
    };
    let skipped = if r.input.is_seekable() {
        r.input.len().unwrap_or(0).min(r.offset)
    } else {
        r.input.skip_sequential(r.offset)?
    };
    if skipped < r.offset {
        stats.extent.ended[0] = true;
        return Ok(stats);
    }
    let limit = job.limit.unwrap_or(u64::MAX);
    if limit == 0 {
        r.input.probe()?;
    }
    let bs = plan.block_size;
    // `buf[..filled]` holds the carried partial line and the bytes read after it; the
    // buffer grows only for a line longer than what it holds (up to the bound on long
    // lines, when there is one).
    // A small file needs a buffer of its own size (one read, and one more byte to see the
    // end), not a block's; many small files are searched one after another, each thread
    // reading them into the buffer the previous one used.
    let known_left = r
        .input
        .len()
        .filter(|_| r.input.is_seekable())
        .map(|l| l.saturating_sub(r.offset));
    let size_hint = known_left.map_or(bs * 2, |l| (l.min(bs as u64) as usize + 1).min(bs * 2));
    let mut buf = take_buffer(size_hint);
    let mut filled = 0usize;
    // How much to read at `pos`.
    let want_at = |pos: u64| {
        let want = (limit - pos).min(bs as u64) as usize;
        match known_left.filter(|&l| pos < l) {
            // One byte past the known end, so that a short read says "end" at once (a file
            // that grew past it is then read in whole blocks again).
            Some(left) => want.min((left - pos + 1).min(bs as u64) as usize),
            None => want,
        }
    };
    let read = |buf: &mut [u8], pos: u64| {
        if r.input.is_seekable() {
            r.input.read_full_at(buf, r.input.base() + r.offset + pos)
        } else {
            r.input.read_full(buf)
        }
    };
    // Job offset of buf[0], bytes read so far, next block number.
    let (mut first, mut pos, mut index) = (0u64, 0u64, 0u64);
    while pos < limit {
        if stop.stop_before(first) {
            stats.stopped_early = true;
            break;
        }
        let want = want_at(pos);
        let old = filled;
        if buf.len() < old + want {
            // Doubling, but no further than a bound on long lines needs.
            let cap = job
                .long_lines
                .max()
                .map_or(usize::MAX, |m| m.saturating_add(2 * bs));
            buf.resize((buf.len() * 2).min(cap).max(old + want));
        }
        let got = read(&mut buf[old..old + want], pos)?;
        filled = old + got;
        pos += got as u64;
        let mut at_end = got < want || pos >= limit;
        stats.extent.ended[0] = got < want;
        // `buf[..scan]` holds no line end.
        let mut scan = old;
        let long = job.long_lines.max().is_some_and(|max| filled > max);
        if long && !at_end && job.framing.find(&buf[old..filled]).is_none() {
            // The line at `first` is long: leave it out, and read past the rest of it a
            // block at a time.
            job.long_lines.hit(&r, first)?;
            job.advance(filled);
            filled = 0;
            loop {
                let want = want_at(pos);
                let got = read(&mut buf[..want], pos)?;
                pos += got as u64;
                at_end = got < want || pos >= limit;
                stats.extent.ended[0] = got < want;
                if let Some(i) = job.framing.find(&buf[..got]) {
                    buf.copy_within(i + 1..got, 0);
                    filled = got - i - 1;
                    job.advance(i + 1);
                    break;
                }
                job.advance(got);
                if at_end {
                    break;
                }
            }
            first = pos - filled as u64;
            scan = 0;
        }
        let cut = if at_end {
            filled
        } else {
            match job.framing.rfind(&buf[scan..filled]) {
                Some(i) => scan + i + 1,
                None => continue,
            }
        };
        if cut > 0 {
            let block = Block {
                index,
                start: first,
                len: cut,
            };
            stats.blocks += 1;
            let flow = visit(&block, &[&buf[..cut]]);
            job.advance(cut);
            index += 1;
            first += cut as u64;
            buf.copy_within(cut..filled, 0);
            filled -= cut;
            if flow == Flow::Stop {
                stats.stopped_early = true;
                break;
            }
        }
        if at_end {
            break;
        }
    }
    give_back(vec![buf]);
    stats.extent.len = pos;
    Ok(stats)
}

/// The first line start at or after `from`, looking no further than `to` (`to` when no line
/// starts in `[from, to)`); `data` is the job's bytes from offset `origin`, and the byte
/// before `from` must be in it unless `from` is 0.
fn line_start(f: Framing, data: &[u8], origin: u64, from: u64, to: u64) -> u64 {
    if from == 0 || f.ends(data[(from - 1 - origin) as usize]) {
        return from;
    }
    let (a, b) = ((from - origin) as usize, (to - origin) as usize);
    f.find(&data[a..b]).map_or(to, |i| from + i as u64 + 1)
}

/// The end of the line that contains byte `at - 1` (just past its newline, or `total`).
fn line_end(f: Framing, data: &[u8], origin: u64, at: u64, total: u64) -> u64 {
    if at >= total || f.ends(data[(at - 1 - origin) as usize]) {
        return at.min(total);
    }
    let a = (at - origin) as usize;
    f.find(&data[a..]).map_or(total, |i| at + i as u64 + 1)
}

/// The lines that start in `[start, end)` of mapped bytes `m` (the job's bytes from 0):
/// their first byte and the end of the last one, and the start of a long line left out at
/// the end (one with more than `max` bytes, when there is a bound).
fn map_lines(
    f: Framing,
    m: &[u8],
    start: u64,
    end: u64,
    total: u64,
    max: Option<usize>,
) -> (u64, u64, Option<u64>) {
    let a = line_start(f, m, 0, start, end);
    if a == end {
        return (end, end, None);
    }
    match max {
        None => (a, line_end(f, m, 0, end, total), None),
        Some(max) => {
            let p = last_line_start(f, m, 0, a, end);
            match bounded_end(f, m, 0, p, end, total, max) {
                Some(b) => (a, b, None),
                None => (a, p, Some(p)),
            }
        }
    }
}

/// The start of the last line that starts in `[a, end)`, where `a` is a line start.
fn last_line_start(f: Framing, data: &[u8], origin: u64, a: u64, end: u64) -> u64 {
    let (i, j) = ((a - origin) as usize, (end - origin) as usize);
    f.rfind(&data[i..j]).map_or(a, |k| a + k as u64 + 1)
}

/// The end of the line that starts at `p` (before `end`), looking at most `max` bytes past
/// its start: `None` when it has more than `max` bytes. `data` holds the job's bytes from
/// `origin` up to the line's end, or to at least `p + max + 1`.
#[allow(clippy::too_many_arguments)]
fn bounded_end(
    f: Framing,
    data: &[u8],
    origin: u64,
    p: u64,
    end: u64,
    total: u64,
    max: usize,
) -> Option<u64> {
    if end >= total || f.ends(data[(end - 1 - origin) as usize]) {
        return Some(end.min(total));
    }
    // A line of at most `max` bytes has its end among bytes p ..= p + max.
    let upto = total.min(p.saturating_add(max as u64).saturating_add(1));
    if upto <= end {
        return None;
    }
    let (i, j) = ((end - origin) as usize, (upto - origin) as usize);
    match f.find(&data[i..j]) {
        Some(k) => Some(end + k as u64 + 1),
        None if upto == total => Some(total),
        None => None,
    }
}

/// A line longer than this is not gathered into a worker's buffer when the file can be
/// mapped: the block is read through a map instead, so a line of gigabytes (a sparse file's
/// holes, a file with no newline) stays in the page cache, which the kernel can reclaim,
/// rather than in the process.
const LONG_LINE: usize = 64 << 20;

/// Lines read into a worker's buffer.
struct ReadLines {
    /// Job offset of the first line.
    first: u64,
    /// Where the lines lie in the buffer.
    range: std::ops::Range<usize>,
    /// The start of a long line left out at the end.
    long: Option<u64>,
}

/// Read buffers a thread keeps for its next run at most (bytes each).
const SPARE_MAX: usize = 4 << 20;

thread_local! {
    /// Read buffers of this thread's finished runs, for its next: a worker searching many
    /// small files one after another reads them all into the same memory, with no
    /// allocation, no zeroing and no page faults per file.
    static SPARE: std::cell::RefCell<Vec<PageBuf>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A read buffer of at least `len` bytes (its contents are whatever a previous run left).
fn take_buffer(len: usize) -> PageBuf {
    let mut b = SPARE
        .try_with(|s| s.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_default();
    if b.len() < len {
        b.resize(len);
    }
    b
}

/// Keeps `bufs` for this thread's next run (as many as a run uses, none too big).
fn give_back(bufs: Vec<PageBuf>) {
    let _ = SPARE.try_with(|s| {
        let mut s = s.borrow_mut();
        for b in bufs {
            if b.capacity() <= SPARE_MAX && s.len() < MAX_REGIONS {
                s.push(b);
            }
        }
    });
}

/// Reads the lines that start in `[start, end)` of region `r` into `buf` (with one byte of
/// look-behind, and as far past `end` as the last line needs): `None` once `buf` would grow
/// past `limit` bytes. With a bound `max`, a last line of more than `max` bytes is left out
/// (and read no further than that).
#[allow(clippy::too_many_arguments)]
fn read_lines(
    f: Framing,
    r: &Region<'_>,
    file: &std::fs::File,
    buf: &mut PageBuf,
    (start, end, total): (u64, u64, u64),
    max: Option<usize>,
    limit: usize,
) -> Result<Option<ReadLines>, EngineError> {
    let origin = start.saturating_sub(1);
    let at = |o: u64| r.input.base() + r.offset + o;
    // The read goes where its bytes share the file's alignment: the look-behind byte ends a
    // page of the buffer, the block's first byte starts the next (a copy one byte off is
    // several times slower on some processors; see `crate::buf`). `buf[..pad]` is unused.
    let pad = skew(at(origin));
    let want = (end - origin) as usize;
    r.input
        .read_exact_at_via(file, buf.window(at(origin), want), at(origin))?;
    let a = line_start(f, &buf[pad..], origin, start, end);
    if a == end {
        return Ok(Some(ReadLines {
            first: end,
            range: 0..0,
            long: None,
        }));
    }
    // Past the last line's start plus `max` bytes, the line is long.
    let p = last_line_start(f, &buf[pad..], origin, a, end);
    let cap = max.map_or(u64::MAX, |m| p.saturating_add(m as u64).saturating_add(1));
    let mut pos = end;
    let mut step = 64 * 1024u64;
    while pos < total && !buf.last().is_some_and(|&b| f.ends(b)) {
        if pos >= cap {
            // No end among the line's first `max + 1` bytes.
            return Ok(Some(ReadLines {
                first: a,
                range: pad + (a - origin) as usize..pad + (p - origin) as usize,
                long: Some(p),
            }));
        }
        let n = step.min(total - pos).min(cap - pos) as usize;
        if buf.len() - pad + n > limit {
            return Ok(None);
        }
        let old = buf.len();
        buf.resize(old + n);
        r.input.read_exact_at_via(file, &mut buf[old..], at(pos))?;
        pos += n as u64;
        if let Some(i) = f.find(&buf[old..]) {
            buf.truncate(old + i + 1);
            break;
        }
        step = step.saturating_mul(2);
    }
    Ok(Some(ReadLines {
        first: a,
        range: pad + (a - origin) as usize..buf.len(),
        long: None,
    }))
}

struct Shared<'s> {
    cursor: AtomicU64,
    halt: AtomicBool,
    stopped_early: AtomicBool,
    blocks: AtomicU64,
    /// The error of the lowest-numbered failing block.
    error: Mutex<Option<(u64, EngineError)>>,
    stop: &'s dyn StopCheck,
}

impl Shared<'_> {
    fn fail(&self, index: u64, err: EngineError) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_none_or(|(i, _)| index < *i) {
            *slot = Some((index, err));
        }
        self.halt.store(true, Ordering::Relaxed);
    }
}

fn parallel(
    plan: &Plan,
    method: Method,
    job: &Job<'_>,
    extent: Extent,
    stop: &dyn StopCheck,
    gate: Option<Gate<'_>>,
    visit: &(dyn Fn(&Block, &[&[u8]]) -> Flow + Sync),
) -> Result<RunStats, EngineError> {
    let states_before: Vec<(u64, i128)> = job
        .regions
        .iter()
        .map(|r| r.input.state())
        .collect::<Result<_, _>>()?;
    let mut method = method;
    let mut maps: Vec<GuardedMap> = Vec::new();
    if method == Method::Mmap {
        for r in &job.regions {
            let at = r.input.base() + r.offset;
            match GuardedMap::new(r.input.file(), r.input.name(), at, extent.len) {
                Ok(Some(m)) => maps.push(m),
                // No guard slot left (never map unguarded), or a file that cannot be mapped
                // (some special filesystems): read it instead.
                Ok(None) | Err(_) => {
                    maps.clear();
                    method = Method::Pread;
                    break;
                }
            }
        }
    }
    let bs = plan.block_size as u64;
    let n_blocks = extent.len.div_ceil(bs);
    let shared = Shared {
        cursor: AtomicU64::new(0),
        halt: AtomicBool::new(false),
        stopped_early: AtomicBool::new(false),
        blocks: AtomicU64::new(0),
        error: Mutex::new(None),
        stop,
    };
    let threads = plan.threads.max(1);
    let per_range = n_blocks.div_ceil(threads as u64);
    let zero_runs = job.takes_zero_runs();
    let region_holes = job.takes_region_holes();
    let worker = |t: usize| {
        let mut bufs: Vec<PageBuf> = if method == Method::Pread {
            let len = bs.min(extent.len).max(1) as usize;
            job.regions
                .iter()
                .map(|_| take_buffer(len + PAGE))
                .collect()
        } else {
            Vec::new()
        };
        // Workers streaming their own range read through their own descriptors, so each
        // stream gets its own read-ahead.
        let own: Vec<Option<std::fs::File>> =
            if method == Method::Pread && plan.layout == Layout::Ranges && threads > 1 {
                job.regions.iter().map(|r| r.input.reopen()).collect()
            } else {
                job.regions.iter().map(|_| None).collect()
            };
        let mut k = 0u64;
        let mut known = [0u64; MAX_REGIONS];
        let mut extents = [KnownExtent::default(); MAX_REGIONS];
        loop {
            if shared.halt.load(Ordering::Relaxed) {
                break;
            }
            // The block to do, and where a zero run starting there ends (a block number).
            let mut run_end = None;
            let index = match plan.layout {
                Layout::Dynamic if zero_runs => {
                    // Claim a zero run whole, or one block.
                    let mut c = shared.cursor.load(Ordering::Relaxed);
                    loop {
                        if c >= n_blocks {
                            break c;
                        }
                        let run = job.zero_run_end(c, bs, n_blocks, extent.len, &mut known);
                        match shared.cursor.compare_exchange_weak(
                            c,
                            run.unwrap_or(c + 1),
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        ) {
                            Ok(_) => {
                                run_end = run;
                                break c;
                            }
                            Err(now) => c = now,
                        }
                    }
                }
                Layout::Dynamic => shared.cursor.fetch_add(1, Ordering::Relaxed),
                Layout::Stripes => t as u64 + k * threads as u64,
                Layout::Ranges if k >= per_range => break,
                Layout::Ranges => t as u64 * per_range + k,
            };
            k += 1;
            if index >= n_blocks {
                break;
            }
            if zero_runs && plan.layout != Layout::Dynamic {
                let last = match plan.layout {
                    Layout::Ranges => ((t as u64 + 1) * per_range).min(n_blocks),
                    _ => index + 1,
                };
                run_end = job.zero_run_end(index, bs, last, extent.len, &mut known);
                if let Some(e) = run_end {
                    k += e - index - 1;
                }
            }
            let start = index * bs;
            if shared.stop.stop_before(start) {
                shared.stopped_early.store(true, Ordering::Relaxed);
                break;
            }
            if let Some(gate) = gate {
                if !gate(index) {
                    shared.stopped_early.store(true, Ordering::Relaxed);
                    break;
                }
            }
            if let Some(e) = run_end {
                let len = (e * bs).min(extent.len) - start;
                let block = Block {
                    index,
                    start,
                    len: len as usize,
                };
                let flow = visit(&block, &[&[][..]; MAX_REGIONS][..job.regions.len()]);
                shared.blocks.fetch_add(1, Ordering::Relaxed);
                job.advance(len as usize);
                if flow == Flow::Stop {
                    shared.stopped_early.store(true, Ordering::Relaxed);
                    shared.halt.store(true, Ordering::Relaxed);
                    break;
                }
                continue;
            }
            let len = (extent.len - start).min(bs) as usize;
            let mut block = Block { index, start, len };
            // A map of this block's region when its last line is too long for the buffer.
            let mut long_map: Option<GuardedMap> = None;
            let mut slices: [&[u8]; MAX_REGIONS] = [&[]; MAX_REGIONS];
            if job.framing.is_lines() {
                let end = start + len as u64;
                if method == Method::Pread {
                    let r = &job.regions[0];
                    let file = own[0].as_ref().unwrap_or(r.input.file());
                    let max = job.long_lines.max();
                    let read = |buf: &mut PageBuf, limit| {
                        let span = (start, end, extent.len);
                        read_lines(job.framing, r, file, buf, span, max, limit)
                    };
                    let mut got = read(&mut bufs[0], LONG_LINE);
                    if let Ok(None) = got {
                        let at = r.input.base() + r.offset;
                        match GuardedMap::new(r.input.file(), r.input.name(), at, extent.len) {
                            Ok(Some(m)) => long_map = Some(m),
                            // No map to be had: gather the line after all.
                            Ok(None) | Err(_) => got = read(&mut bufs[0], usize::MAX),
                        }
                    }
                    let long = match (got, &long_map) {
                        (_, Some(m)) => {
                            let m = m.bytes();
                            let (a, b, long) =
                                map_lines(job.framing, m, start, end, extent.len, max);
                            block.start = a;
                            block.len = (b - a) as usize;
                            slices[0] = &m[a as usize..b as usize];
                            bufs[0] = PageBuf::with_capacity(bs as usize + PAGE);
                            long
                        }
                        (Ok(Some(got)), None) => {
                            block.start = got.first;
                            block.len = got.range.len();
                            slices[0] = &bufs[0][got.range];
                            got.long
                        }
                        (Ok(None), None) => unreachable!("read without a limit"),
                        (Err(e), None) => {
                            shared.fail(index, e);
                            break;
                        }
                    };
                    if let Some(Err(e)) = long.map(|p| job.long_lines.hit(r, p)) {
                        shared.fail(index, e);
                        break;
                    }
                } else {
                    let m = maps[0].bytes();
                    let max = job.long_lines.max();
                    let (a, b, long) = map_lines(job.framing, m, start, end, extent.len, max);
                    block.start = a;
                    block.len = (b - a) as usize;
                    slices[0] = &m[a as usize..b as usize];
                    if let Some(Err(e)) = long.map(|p| job.long_lines.hit(&job.regions[0], p)) {
                        shared.fail(index, e);
                        break;
                    }
                }
            } else if method == Method::Pread {
                let mut failed = false;
                let mut holes = [false; MAX_REGIONS];
                for (i, ((r, buf), file)) in job
                    .regions
                    .iter()
                    .zip(bufs.iter_mut())
                    .zip(&own)
                    .enumerate()
                {
                    // A region that is a hole over the whole block is not read.
                    holes[i] = region_holes
                        && job.region_is_hole(i, start, start + len as u64, &mut extents);
                    if holes[i] {
                        continue;
                    }
                    let at = r.input.base() + r.offset + start;
                    let file = file.as_ref().unwrap_or(r.input.file());
                    if let Err(e) = r.input.read_exact_at_via(file, buf.window(at, len), at) {
                        shared.fail(index, e);
                        failed = true;
                        break;
                    }
                }
                if failed {
                    break;
                }
                for ((s, (b, r)), &hole) in slices
                    .iter_mut()
                    .zip(bufs.iter().zip(&job.regions))
                    .zip(&holes)
                {
                    let at = r.input.base() + r.offset + start;
                    *s = if hole { &[] } else { b.placed(at, len) };
                }
            } else {
                for (i, (s, m)) in slices.iter_mut().zip(&maps).enumerate() {
                    // A region that is a hole over the whole block is not touched.
                    if !(region_holes
                        && job.region_is_hole(i, start, start + len as u64, &mut extents))
                    {
                        *s = &m.bytes()[start as usize..start as usize + len];
                    }
                }
            }
            let flow = visit(&block, &slices[..job.regions.len()]);
            shared.blocks.fetch_add(1, Ordering::Relaxed);
            job.advance(len);
            let faulted = job
                .regions
                .iter()
                .zip(maps.iter().chain(&long_map))
                .find(|(_, m)| m.faulted());
            if let Some((r, _)) = faulted {
                let found = r.input.current_size().unwrap_or(0);
                shared.fail(
                    index,
                    EngineError::Shrank {
                        path: r.input.name().into(),
                        expected: r.input.base() + r.offset + extent.len,
                        found,
                    },
                );
                break;
            }
            if flow == Flow::Stop {
                shared.stopped_early.store(true, Ordering::Relaxed);
                shared.halt.store(true, Ordering::Relaxed);
                break;
            }
        }
        give_back(bufs);
    };
    if threads == 1 {
        worker(0);
    } else {
        std::thread::scope(|s| {
            // A worker whose thread cannot be had (no memory for its stack, a limit on
            // processes) runs on this thread once the others are started: fewer threads,
            // the same blocks.
            let mut unspawned = Vec::new();
            for t in 0..threads {
                let worker = &worker;
                if std::thread::Builder::new()
                    .spawn_scoped(s, move || worker(t))
                    .is_err()
                {
                    unspawned.push(t);
                }
            }
            for t in unspawned {
                worker(t);
            }
        });
    }
    if let Some((_, err)) = shared.error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(err);
    }
    let stopped_early = shared.stopped_early.load(Ordering::Relaxed);
    if !stopped_early {
        for (r, &(len, mtime)) in job.regions.iter().zip(&states_before) {
            r.input.check_unchanged_since(len, mtime)?;
        }
    }
    Ok(RunStats {
        extent,
        blocks: shared.blocks.load(Ordering::Relaxed),
        stopped_early,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Strategy;
    use std::io::Write;

    fn temp_with(data: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(data).unwrap();
        f.flush().unwrap();
        f
    }

    fn plan(method: Method, threads: usize, bs: usize, layout: Layout) -> Plan {
        Plan::fixed(method, threads, bs, layout)
    }

    fn all_plans() -> Vec<Plan> {
        let mut v = Vec::new();
        for m in [Method::Read, Method::Pread, Method::Mmap] {
            for t in [1, 2, 3] {
                for bs in [1, 7, 64, 4096] {
                    for l in [Layout::Dynamic, Layout::Stripes, Layout::Ranges] {
                        v.push(plan(m, t, bs, l));
                    }
                }
            }
        }
        v
    }

    #[test]
    fn every_plan_visits_every_byte_once() {
        let data: Vec<u8> = (0..10_007u32).map(|i| (i * 7 % 256) as u8).collect();
        let f = temp_with(&data);
        for p in all_plans() {
            let input = Input::open(f.path()).unwrap();
            let job = Job::new(vec![Region {
                input: &input,
                offset: 3,
            }]);
            let seen = Mutex::new(vec![0u8; data.len() - 3]);
            let stats = run_blocks(&p, &job, &(), |b, d| {
                let mut s = seen.lock().unwrap();
                assert_eq!(d[0].len(), b.len);
                for (i, &x) in d[0].iter().enumerate() {
                    s[b.start as usize + i] = x;
                }
                Flow::Continue
            })
            .unwrap();
            assert_eq!(stats.extent.len, data.len() as u64 - 3, "{p:?}");
            assert_eq!(stats.extent.ended, vec![true]);
            assert_eq!(&seen.into_inner().unwrap()[..], &data[3..], "{p:?}");
        }
    }

    /// Line framing: every line whole, once, in a block that starts at a line start, for
    /// every plan (sequential ones carry partial lines, parallel ones look around).
    fn check_lines(data: &[u8], plans: &[Plan]) {
        for framing in [Framing::Lines, Framing::LinesOrNul] {
            check_framing(data, plans, framing);
        }
    }

    fn check_framing(data: &[u8], plans: &[Plan], framing: Framing) {
        let f = temp_with(data);
        for p in plans {
            let input = Input::open(f.path()).unwrap();
            let job = Job::new(vec![Region {
                input: &input,
                offset: 0,
            }])
            .with_framing(framing);
            let blocks = Mutex::new(Vec::new());
            run_blocks(p, &job, &(), |b, d| {
                assert_eq!(d[0].len(), b.len);
                let s = b.start as usize;
                assert_eq!(d[0], &data[s..s + b.len], "{p:?} {b:?}");
                blocks.lock().unwrap().push((b.index, b.start, b.len));
                Flow::Continue
            })
            .unwrap();
            let mut blocks = blocks.into_inner().unwrap();
            blocks.sort();
            let mut pos = 0usize;
            for &(_, start, len) in &blocks {
                if len == 0 {
                    continue;
                }
                assert_eq!(start as usize, pos, "{p:?}: a gap or an overlap");
                assert!(
                    pos == 0 || framing.ends(data[pos - 1]),
                    "{p:?}: cut inside a line"
                );
                pos += len;
                assert!(
                    pos == data.len() || framing.ends(data[pos - 1]),
                    "{p:?} {framing:?}: line cut at {pos}"
                );
            }
            assert_eq!(pos, data.len(), "{p:?}");
        }
    }

    #[test]
    fn line_framing_keeps_lines_whole() {
        let mut data = Vec::new();
        for i in 0..3000u32 {
            data.extend(std::iter::repeat_n(b'x', (i * 37 % 23) as usize));
            data.push(b'\n');
        }
        data.extend(std::iter::repeat_n(b'y', 5000));
        data.extend_from_slice(b"\n\nlast");
        check_lines(&data, &all_plans());
        check_lines(b"", &all_plans());
        check_lines(b"\n", &all_plans());
        check_lines(b"no newline at all", &all_plans());
    }

    #[test]
    fn a_line_longer_than_the_buffer_limit_is_read_through_a_map() {
        // Lines before and after one of LONG_LINE + 5 MiB, cut at block sizes that put
        // block edges inside it; the positional reads give up gathering it and map it.
        let mut data = b"first\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', LONG_LINE + (5 << 20)));
        data.extend_from_slice(b"\nafter\nlast");
        let mut plans = Vec::new();
        for (t, bs, l) in [(1, 1 << 20, Layout::Dynamic), (2, 4 << 20, Layout::Ranges)] {
            plans.push(plan(Method::Pread, t, bs, l));
        }
        check_framing(&data, &plans, Framing::Lines);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        #[test]
        fn line_framing_any_cut(
            data in proptest::collection::vec(proptest::prop_oneof![
                9 => proptest::prelude::Just(b'a'), 2 => proptest::prelude::Just(b'\n'),
                1 => proptest::prelude::Just(0u8)
            ], 0..3000),
            threads in 1usize..4,
            bs in 1usize..200,
            m in 0usize..3,
        ) {
            let method = [Method::Read, Method::Pread, Method::Mmap][m];
            check_lines(&data, &[plan(method, threads, bs, Layout::Dynamic)]);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Every reader (sequential, positional, mapped; any threads, layout and block
        /// size, page-sized or not) hands the kernel exactly the file's bytes, for two
        /// regions read in lock-step from offsets of any alignment, up to any limit, with
        /// and without line framing: what `std::fs::read` gives.
        #[test]
        fn every_reader_gives_the_files_bytes_at_any_offset(
            data in proptest::collection::vec(proptest::prop_oneof![
                8 => proptest::prelude::any::<u8>(), 1 => proptest::prelude::Just(b'\n')
            ], 0..20_000),
            off_a in 0u64..9000,
            off_b in 0u64..9000,
            limit in proptest::option::of(0u64..20_000),
            threads in 1usize..4,
            bs_i in 0usize..6,
            m in 0usize..3,
            l in 0usize..3,
        ) {
            let bs = [1, 777, 4095, 4096, 4097, 12288][bs_i];
            let method = [Method::Read, Method::Pread, Method::Mmap][m];
            let layout = [Layout::Dynamic, Layout::Stripes, Layout::Ranges][l];
            let p = plan(method, threads, bs, layout);
            let f = temp_with(&data);
            let disk = std::fs::read(f.path()).unwrap();
            let (a, b) = (Input::open(f.path()).unwrap(), Input::open(f.path()).unwrap());
            let job = Job::new(vec![
                Region { input: &a, offset: off_a },
                Region { input: &b, offset: off_b },
            ])
            .with_limit(limit);
            let seen = Mutex::new(Vec::new());
            let stats = run_blocks(&p, &job, &(), |blk, d| {
                seen.lock().unwrap().push((blk.start, d[0].to_vec(), d[1].to_vec()));
                Flow::Continue
            })
            .unwrap();
            let len = (disk.len() as u64)
                .saturating_sub(off_a.max(off_b))
                .min(limit.unwrap_or(u64::MAX)) as usize;
            proptest::prop_assert_eq!(stats.extent.len, len as u64, "{:?}", p);
            let mut seen = seen.into_inner().unwrap();
            seen.sort();
            let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
            for (start, x, y) in seen {
                proptest::prop_assert_eq!(start as usize, got_a.len(), "{:?}", p);
                got_a.extend(x);
                got_b.extend(y);
            }
            let (oa, ob) = (off_a as usize, off_b as usize);
            let part = |o: usize| disk.get(o..o + len).unwrap_or(&[]);
            proptest::prop_assert!(got_a[..] == *part(oa), "{:?}", p);
            proptest::prop_assert!(got_b[..] == *part(ob), "{:?}", p);

            // One region from the offset, in lines.
            if oa <= disk.len() {
                let job = Job::new(vec![Region { input: &a, offset: off_a }])
                    .with_framing(Framing::Lines);
                let seen = Mutex::new(Vec::new());
                run_blocks(&p, &job, &(), |blk, d| {
                    seen.lock().unwrap().push((blk.start, d[0].to_vec()));
                    Flow::Continue
                })
                .unwrap();
                let mut seen = seen.into_inner().unwrap();
                seen.sort();
                let got: Vec<u8> = seen.into_iter().flat_map(|(_, x)| x).collect();
                proptest::prop_assert!(got[..] == disk[oa..], "{:?} lines", p);
            }
        }

        /// A caller's buffer of any alignment works (only the engine's own buffers are
        /// placed to share the file's alignment).
        #[test]
        fn reads_into_a_buffer_of_any_alignment(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..20_000),
            at in 0usize..20_000,
            n in 0usize..9000,
            shift in 0usize..64,
        ) {
            let f = temp_with(&data);
            let input = Input::open(f.path()).unwrap();
            let at = at % data.len();
            let mut room = vec![0u8; n + shift];
            let got = input.read_full_at(&mut room[shift..], at as u64).unwrap();
            let want = n.min(data.len() - at);
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert!(room[shift..shift + got] == data[at..at + want]);
            let mut buf = PageBuf::new();
            let w = buf.window(at as u64, want);
            input.read_exact_at(w, at as u64).unwrap();
            proptest::prop_assert!(buf.placed(at as u64, want) == &data[at..at + want]);
        }
    }

    /// A file of data and holes (whole pages of each) as `layout` says, and the same bytes
    /// written densely.
    pub(crate) fn sparse_and_dense(
        layout: &[(bool, usize, u8)],
        tail: &[u8],
    ) -> (tempfile::NamedTempFile, Vec<u8>) {
        use std::os::unix::fs::FileExt;
        let f = tempfile::NamedTempFile::new().unwrap();
        let mut dense = Vec::new();
        for &(hole, pages, fill) in layout {
            let n = pages * 4096;
            if hole {
                dense.resize(dense.len() + n, 0);
            } else {
                let at = dense.len() as u64;
                // Lines and NULs, so that line framing has edges in the data.
                let bytes: Vec<u8> = (0..n)
                    .map(|i| match (i * 31 + fill as usize) % 97 {
                        0 => b'\n',
                        1 => 0,
                        _ => fill,
                    })
                    .collect();
                f.as_file().write_all_at(&bytes, at).unwrap();
                dense.extend_from_slice(&bytes);
            }
        }
        f.as_file().write_all_at(tail, dense.len() as u64).unwrap();
        dense.extend_from_slice(tail);
        f.as_file().set_len(dense.len() as u64).unwrap();
        (f, dense)
    }

    /// Runs a zero-run job over `input` and rebuilds its bytes from what the kernel saw,
    /// checking that nominal block numbers follow on.
    fn rebuild(p: &Plan, input: &Input, framing: Framing) -> (Vec<u8>, u64) {
        let job = Job::new(vec![Region { input, offset: 0 }])
            .with_framing(framing)
            .with_zero_runs();
        let seen = Mutex::new(Vec::new());
        run_blocks(p, &job, &(), |b, d| {
            let bytes = if is_zero_run(b, d) {
                vec![0u8; b.len]
            } else {
                d[0].to_vec()
            };
            let after = next_index(b, d, p.block_size);
            seen.lock().unwrap().push((b.index, after, b.start, bytes));
            Flow::Continue
        })
        .unwrap();
        let mut seen = seen.into_inner().unwrap();
        seen.sort_by_key(|x| x.0);
        let (mut out, mut next, mut runs) = (Vec::new(), 0u64, 0u64);
        for (index, after, start, bytes) in seen {
            assert_eq!(index, next, "{p:?}: block numbers do not follow on");
            next = after;
            if !bytes.is_empty() {
                assert_eq!(start as usize, out.len(), "{p:?}: a gap or an overlap");
            }
            if after > index + 1 {
                runs += 1;
            }
            out.extend_from_slice(&bytes);
        }
        (out, runs)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]
        #[test]
        fn holes_as_zero_runs_give_the_bytes_of_the_dense_file(
            layout in proptest::collection::vec(
                (proptest::prelude::any::<bool>(), 1usize..6, b'a'..b'e'), 0..8),
            tail in proptest::collection::vec(b'x'..b'z', 0..100),
            threads in 1usize..4,
            bs_pages in 1usize..4,
            bs_extra in 0usize..2,
            m in 0usize..3,
            l in 0usize..3,
            lines in proptest::prelude::any::<bool>(),
        ) {
            let (f, dense) = sparse_and_dense(&layout, &tail);
            let input = Input::open(f.path()).unwrap();
            let method = [Method::Read, Method::Pread, Method::Mmap][m];
            let layout_ = [Layout::Dynamic, Layout::Stripes, Layout::Ranges][l];
            // Block sizes that are and are not multiples of a page.
            let bs = bs_pages * 4096 + bs_extra * 1000;
            let p = plan(method, threads, bs, layout_);
            let framing = if lines { Framing::LinesOrNul } else { Framing::Bytes };
            let (got, _) = rebuild(&p, &input, framing);
            proptest::prop_assert!(got == dense, "{:?} {:?}", p, framing);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]
        /// Two sparse files read side by side with region holes: every block rebuilt from
        /// what the kernel saw (a hole slice as zeros) gives both files' bytes, and a region
        /// handed as a hole is zeros in the dense file.
        #[test]
        fn region_holes_give_the_bytes_of_both_dense_files(
            pages in proptest::collection::vec(
                (proptest::prelude::any::<bool>(), proptest::prelude::any::<bool>(), 1usize..4, b'a'..b'e'), 0..8),
            tail in proptest::collection::vec(b'x'..b'z', 0..100),
            offset in 0u64..5000,
            threads in 1usize..4,
            bs_pages in 1usize..4,
            bs_extra in 0usize..2,
            m in 0usize..3,
            l in 0usize..3,
        ) {
            let first: Vec<(bool, usize, u8)> = pages.iter().map(|&(h, _, n, f)| (h, n, f)).collect();
            let second: Vec<(bool, usize, u8)> = pages.iter().map(|&(_, h, n, f)| (h, n, f + 1)).collect();
            let (fa, a) = sparse_and_dense(&first, &tail);
            let (fb, b) = sparse_and_dense(&second, &tail);
            let (ia, ib) = (Input::open(fa.path()).unwrap(), Input::open(fb.path()).unwrap());
            let method = [Method::Read, Method::Pread, Method::Mmap][m];
            let layout_ = [Layout::Dynamic, Layout::Stripes, Layout::Ranges][l];
            let bs = bs_pages * 4096 + bs_extra * 1000;
            let p = plan(method, threads, bs, layout_);
            // The second file read from an offset, so holes do not line up with blocks.
            let off = offset.min(b.len() as u64);
            let job = Job::new(vec![
                Region { input: &ia, offset: 0 },
                Region { input: &ib, offset: off },
            ])
            .with_region_holes();
            let len = a.len().min(b.len() - off as usize);
            let seen = Mutex::new((vec![0xeeu8; len], vec![0xeeu8; len]));
            run_blocks(&p, &job, &(), |blk, d| {
                let mut guard = seen.lock().unwrap();
                let s = &mut *guard;
                let at = blk.start as usize;
                for (r, out) in [&mut s.0, &mut s.1].into_iter().enumerate() {
                    let span = &mut out[at..at + blk.len];
                    if is_hole(blk, d[r]) {
                        span.fill(0);
                    } else {
                        assert_eq!(d[r].len(), blk.len);
                        span.copy_from_slice(d[r]);
                    }
                }
                Flow::Continue
            })
            .unwrap();
            let (got_a, got_b) = seen.into_inner().unwrap();
            proptest::prop_assert!(got_a[..] == a[..len], "{:?}", p);
            proptest::prop_assert!(got_b[..] == b[off as usize..off as usize + len], "{:?}", p);
        }
    }

    #[test]
    fn a_hole_on_one_side_is_not_read() {
        // 64 MiB: a hole in the first file, data in the second; the first is never handed
        // as bytes (every block but the edges is a hole slice beside the other's data).
        let (fa, _) = sparse_and_dense(&[(true, 1 << 14, 0)], b"");
        let (fb, _) = sparse_and_dense(&[(false, 1 << 14, b'a')], b"");
        let (ia, ib) = (
            Input::open(fa.path()).unwrap(),
            Input::open(fb.path()).unwrap(),
        );
        if !ia.may_have_holes() {
            return;
        }
        for p in [
            plan(Method::Read, 1, 1 << 16, Layout::Dynamic),
            plan(Method::Pread, 2, 1 << 16, Layout::Dynamic),
            plan(Method::Mmap, 2, 1 << 16, Layout::Stripes),
        ] {
            let job = Job::new(vec![
                Region {
                    input: &ia,
                    offset: 0,
                },
                Region {
                    input: &ib,
                    offset: 0,
                },
            ])
            .with_region_holes();
            let (holes, read) = (AtomicU64::new(0), AtomicU64::new(0));
            run_blocks(&p, &job, &(), |b, d| {
                assert!(!is_hole(b, d[1]));
                let n = if is_hole(b, d[0]) { &holes } else { &read };
                n.fetch_add(1, Ordering::Relaxed);
                Flow::Continue
            })
            .unwrap();
            assert_eq!(holes.load(Ordering::Relaxed), 1024, "{p:?}");
            assert_eq!(read.load(Ordering::Relaxed), 0, "{p:?}");
        }
    }

    /// The lines of `data` (without their ends) and their offsets.
    fn lines_of(data: &[u8], framing: Framing) -> Vec<(usize, &[u8])> {
        let mut v = Vec::new();
        let mut at = 0;
        while at < data.len() {
            let end = framing.find(&data[at..]).map_or(data.len(), |i| at + i);
            v.push((at, &data[at..end]));
            at = end + 1;
        }
        v
    }

    /// With a bound, the lines a kernel keeps (those of at most `max` bytes) are exactly the
    /// short lines of the input, and every long line is either left out by the engine or
    /// handed and dropped by the kernel, once.
    fn check_bounded(data: &[u8], plans: &[Plan], framing: Framing, max: usize) {
        let f = temp_with(data);
        let want = lines_of(data, framing);
        let long = want.iter().filter(|(_, l)| l.len() > max).count() as u64;
        let short: Vec<(usize, &[u8])> = want.into_iter().filter(|(_, l)| l.len() <= max).collect();
        for p in plans {
            let input = Input::open(f.path()).unwrap();
            let skipped = AtomicU64::new(0);
            let job = Job::new(vec![Region {
                input: &input,
                offset: 0,
            }])
            .with_framing(framing)
            .with_long_lines(LongLines::Skip {
                max,
                skipped: &skipped,
            });
            let seen = Mutex::new(Vec::new());
            let dropped = AtomicU64::new(0);
            run_blocks(p, &job, &(), |b, d| {
                for (at, l) in lines_of(d[0], framing) {
                    if l.len() > max {
                        dropped.fetch_add(1, Ordering::Relaxed);
                    } else {
                        let at = b.start as usize + at;
                        seen.lock().unwrap().push((at, l.to_vec()));
                    }
                }
                Flow::Continue
            })
            .unwrap();
            let mut seen = seen.into_inner().unwrap();
            seen.sort();
            let short: Vec<(usize, Vec<u8>)> =
                short.iter().map(|&(a, l)| (a, l.to_vec())).collect();
            assert_eq!(seen, short, "{p:?} max {max}");
            let n = skipped.load(Ordering::Relaxed) + dropped.load(Ordering::Relaxed);
            assert_eq!(n, long, "{p:?} max {max}: long lines");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        #[test]
        fn long_lines_are_left_out_once_and_short_ones_kept(
            data in proptest::collection::vec(proptest::prop_oneof![
                30 => proptest::prelude::Just(b'a'), 2 => proptest::prelude::Just(b'\n'),
                1 => proptest::prelude::Just(0u8)
            ], 0..3000),
            threads in 1usize..4,
            bs in 1usize..200,
            m in 0usize..3,
            max in 0usize..60,
            nul in proptest::prelude::any::<bool>(),
        ) {
            let method = [Method::Read, Method::Pread, Method::Mmap][m];
            let framing = if nul { Framing::LinesOrNul } else { Framing::Lines };
            check_bounded(&data, &[plan(method, threads, bs, Layout::Dynamic)], framing, max);
        }
    }

    #[test]
    fn a_large_hole_is_one_zero_run_not_read() {
        // 1 GiB of hole between two pages of data: a handful of blocks, whatever the plan.
        let (f, dense) = sparse_and_dense(&[(false, 1, b'a'), (true, 1 << 18, 0)], b"end");
        let input = Input::open(f.path()).unwrap();
        if !input.may_have_holes() {
            return;
        }
        for p in [
            plan(Method::Read, 1, 1 << 16, Layout::Dynamic),
            plan(Method::Pread, 2, 1 << 16, Layout::Dynamic),
            plan(Method::Mmap, 2, 1 << 16, Layout::Ranges),
        ] {
            for framing in [Framing::Bytes, Framing::LinesOrNul] {
                if framing.is_lines() && p.method == Method::Read {
                    // The sequential line path reads holes (their lines are NULs, short).
                    continue;
                }
                let (got, runs) = rebuild(&p, &input, framing);
                assert!(got.len() == dense.len() && got == dense, "{p:?}");
                assert!((1..=2).contains(&runs), "{p:?}: {runs} runs");
            }
        }
    }

    #[test]
    fn long_line_from_a_stream_is_skipped_in_constant_memory() {
        // 64 MiB with no newline from a pipe, then a short line: the engine leaves the long
        // line out without gathering it (the buffer would otherwise grow to 64 MiB).
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("head -c 67108864 /dev/zero | tr '\\0' x; printf '\\nshort\\n'")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&out));
        let input = Input::open(std::path::Path::new(&path)).unwrap();
        assert!(!input.is_seekable());
        let skipped = AtomicU64::new(0);
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }])
        .with_framing(Framing::Lines)
        .with_long_lines(LongLines::Skip {
            max: 1000,
            skipped: &skipped,
        });
        let seen = Mutex::new(Vec::new());
        let largest = AtomicU64::new(0);
        let p = plan(Method::Read, 1, 64 * 1024, Layout::Dynamic);
        run_blocks(&p, &job, &(), |b, d| {
            largest.fetch_max(b.len as u64, Ordering::Relaxed);
            seen.lock().unwrap().push(d[0].to_vec());
            Flow::Continue
        })
        .unwrap();
        drop(out);
        child.wait().unwrap();
        assert_eq!(skipped.load(Ordering::Relaxed), 1);
        assert_eq!(seen.into_inner().unwrap().concat(), b"short\n");
        assert!(largest.load(Ordering::Relaxed) <= 64 * 1024);
    }

    #[test]
    fn long_line_fails_when_asked_to() {
        let mut data = b"ok\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 5000));
        data.extend_from_slice(b"\nafter\n");
        let f = temp_with(&data);
        for p in [
            plan(Method::Read, 1, 64, Layout::Dynamic),
            plan(Method::Pread, 2, 64, Layout::Dynamic),
            plan(Method::Mmap, 2, 64, Layout::Dynamic),
        ] {
            let input = Input::open(f.path()).unwrap();
            let job = Job::new(vec![Region {
                input: &input,
                offset: 0,
            }])
            .with_framing(Framing::Lines)
            .with_long_lines(LongLines::Fail { max: 1000 });
            let err = run_blocks(&p, &job, &(), |_, _| Flow::Continue).unwrap_err();
            assert!(
                matches!(
                    err,
                    EngineError::LineTooLong {
                        offset: 3,
                        max: 1000,
                        ..
                    }
                ),
                "{p:?}: {err}"
            );
        }
    }

    #[test]
    fn progress_counts_every_byte() {
        let f = temp_with(&vec![3u8; 100_000]);
        for p in all_plans() {
            let input = Input::open(f.path()).unwrap();
            let done = AtomicU64::new(0);
            let job = Job::new(vec![Region {
                input: &input,
                offset: 0,
            }])
            .with_progress(Some(&done));
            run_blocks(&p, &job, &(), |_, _| Flow::Continue).unwrap();
            assert_eq!(done.load(Ordering::Relaxed), 100_000, "{p:?}");
        }
    }

    #[test]
    fn extent_reports_which_region_ended() {
        let a = temp_with(b"0123456789");
        let b = temp_with(b"01234");
        for p in all_plans() {
            let (ia, ib) = (
                Input::open(a.path()).unwrap(),
                Input::open(b.path()).unwrap(),
            );
            let job = Job::new(vec![
                Region {
                    input: &ia,
                    offset: 0,
                },
                Region {
                    input: &ib,
                    offset: 0,
                },
            ]);
            let stats = run_blocks(&p, &job, &(), |_, _| Flow::Continue).unwrap();
            assert_eq!(stats.extent.len, 5);
            assert_eq!(stats.extent.ended, vec![false, true], "{p:?}");
            let limited = job.clone().with_limit(Some(5));
            let (ia2, ib2) = (
                Input::open(a.path()).unwrap(),
                Input::open(b.path()).unwrap(),
            );
            let mut limited2 = limited.clone();
            limited2.regions[0].input = &ia2;
            limited2.regions[1].input = &ib2;
            let stats = run_blocks(&p, &limited2, &(), |_, _| Flow::Continue).unwrap();
            assert_eq!(stats.extent.len, 5);
            assert_eq!(stats.extent.ended, vec![false, false], "{p:?}");
        }
    }

    #[test]
    fn flow_stop_ends_the_run_early() {
        let f = temp_with(&vec![0u8; 1 << 20]);
        for p in all_plans().into_iter().filter(|p| p.block_size >= 64) {
            let input = Input::open(f.path()).unwrap();
            let job = Job::new(vec![Region {
                input: &input,
                offset: 0,
            }]);
            let stats = run_blocks(&p, &job, &(), |_, _| Flow::Stop).unwrap();
            assert!(stats.stopped_early);
            assert!(stats.blocks <= p.threads as u64, "{p:?} {}", stats.blocks);
        }
    }

    #[test]
    fn file_truncated_while_read_is_an_error_not_a_crash() {
        let page = crate::sysinfo::page_size();
        for m in [Method::Pread, Method::Mmap] {
            let f = temp_with(&vec![b'a'; page * 64]);
            let input = Input::open(f.path()).unwrap();
            let job = Job::new(vec![Region {
                input: &input,
                offset: 0,
            }]);
            let p = plan(m, 1, page, Layout::Dynamic);
            let err = run_blocks(&p, &job, &(), |b, d| {
                if b.index == 0 {
                    f.as_file().set_len(page as u64 * 2).unwrap();
                }
                std::hint::black_box(d[0].iter().map(|&x| x as u64).sum::<u64>());
                Flow::Continue
            })
            .unwrap_err();
            assert!(matches!(err, EngineError::Shrank { .. }), "{m:?}: {err}");
        }
    }

    #[test]
    fn file_grown_while_read_is_reported() {
        let f = temp_with(&vec![b'a'; 8192]);
        let input = Input::open(f.path()).unwrap();
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }]);
        let p = plan(Method::Pread, 1, 1024, Layout::Dynamic);
        let err = run_blocks(&p, &job, &(), |b, _| {
            if b.index == 0 {
                f.as_file().set_len(100_000).unwrap();
            }
            Flow::Continue
        })
        .unwrap_err();
        assert!(matches!(err, EngineError::Changed { .. }), "{err}");
    }

    #[test]
    fn file_rewritten_in_place_while_read_is_reported() {
        use std::os::unix::fs::FileExt;
        let f = temp_with(&vec![b'a'; 8192]);
        let input = Input::open(f.path()).unwrap();
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }]);
        for (n, method) in [Method::Pread, Method::Mmap].into_iter().enumerate() {
            let p = plan(method, 1, 1024, Layout::Dynamic);
            let err = run_blocks(&p, &job, &(), |b, _| {
                if b.index == 0 {
                    // Same size, later time: a rewrite the size alone would not show.
                    let later = std::time::SystemTime::now()
                        + std::time::Duration::from_secs(10 * (n as u64 + 1));
                    f.as_file().write_all_at(b"b", 5000).unwrap();
                    f.as_file().set_modified(later).unwrap();
                }
                Flow::Continue
            })
            .unwrap_err();
            assert!(matches!(err, EngineError::Modified { .. }), "{err}");
        }
    }

    #[test]
    fn planner_output_runs() {
        let f = temp_with(&vec![b'z'; 100_000]);
        let input = Input::open(f.path()).unwrap();
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }]);
        for s in Strategy::ALL {
            let opts = crate::plan::EngineOptions {
                strategy: s,
                block_size: Some(4096),
                ..Default::default()
            };
            let p = Plan::choose(
                &opts,
                &job.plan_regions(),
                job.known_extent().map(|e| e.len),
                crate::plan::Access::SinglePass,
            );
            let total = AtomicU64::new(0);
            run_blocks(&p, &job, &(), |b, _| {
                total.fetch_add(b.len as u64, Ordering::Relaxed);
                Flow::Continue
            })
            .unwrap();
            assert_eq!(total.load(Ordering::Relaxed), 100_000, "{s}");
        }
    }
}
