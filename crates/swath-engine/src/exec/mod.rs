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
use crate::plan::{Access, EngineOptions, Layout, Method, Plan};

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
                path: r.input.path().into(),
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

impl Plan {
    /// Chooses a plan for `job` (its regions, and its length when known). Defined here, by
    /// the job, so that the planner does not depend on the executor.
    pub fn for_job(opts: &EngineOptions, job: &Job<'_>, access: Access) -> Plan {
        // On the stack: a tree's many small files each get a plan.
        let first = (job.regions[0].input, job.regions[0].offset);
        let mut regions = [first; MAX_REGIONS];
        for (slot, r) in regions.iter_mut().zip(&job.regions) {
            *slot = (r.input, r.offset);
        }
        Plan::choose(opts, &regions[..job.regions.len()], job.known_len(), access)
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

/// A kernel as the executor calls it: the worker's number (below [`Plan::threads`], 0 on the
/// sequential paths; one worker calls it for one block at a time), the block and its slices.
pub(crate) type Visit<'v> = &'v (dyn Fn(usize, &Block, &[&[u8]]) -> Flow + Sync);

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
    execute(plan, job, stop, None, &|_, b, d| visit(b, d))
}

pub(crate) fn execute(
    plan: &Plan,
    job: &Job<'_>,
    stop: &dyn StopCheck,
    gate: Option<Gate<'_>>,
    visit: Visit<'_>,
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
    visit: Visit<'_>,
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
                let flow = visit(0, &block, &[&[][..]; MAX_REGIONS][..n]);
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
            let flow = visit(0, &block, &slices[..n]);
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
    visit: Visit<'_>,
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
            let flow = visit(0, &block, &[&buf[..cut]]);
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
    visit: Visit<'_>,
) -> Result<RunStats, EngineError> {
    let states_before: Vec<(u64, i128)> = job
        .regions
        .iter()
        .map(|r| r.input.state())
        .collect::<Result<_, _>>()?;
    // Tests change the file here, after its state is taken (see `crate::pause`).
    crate::pause::at("exec-parallel");
    let (method, maps) = map_regions(job, method, extent.len);
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
    let workers = Workers {
        plan,
        method,
        job,
        extent: &extent,
        maps: &maps,
        shared: &shared,
        gate,
        visit,
        bs,
        n_blocks,
        threads,
        per_range: n_blocks.div_ceil(threads as u64),
        zero_runs: job.takes_zero_runs(),
        region_holes: job.takes_region_holes(),
    };
    on_threads(threads, &|t| workers.run(t));
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

/// Maps every region's `len` bytes for [`Method::Mmap`] (guarded maps only); when one
/// cannot be mapped (no guard slot left, a file system that cannot map), every region is
/// read with positional reads instead.
fn map_regions(job: &Job<'_>, method: Method, len: u64) -> (Method, Vec<GuardedMap>) {
    let mut maps: Vec<GuardedMap> = Vec::new();
    if method != Method::Mmap {
        return (method, maps);
    }
    for r in &job.regions {
        let at = r.input.base() + r.offset;
        match GuardedMap::new(r.input.file(), r.input.path(), at, len) {
            Ok(Some(m)) => maps.push(m),
            Ok(None) | Err(_) => return (Method::Pread, Vec::new()),
        }
    }
    (method, maps)
}

/// Runs `worker(t)` for every `t` below `threads`, each on its own thread (one alone on the
/// calling thread). A worker whose thread cannot be had (no memory for its stack, a limit
/// on processes) runs on the calling thread once the others are started: fewer threads,
/// the same blocks.
pub(crate) fn on_threads(threads: usize, worker: &(dyn Fn(usize) + Sync)) {
    if threads == 1 {
        worker(0);
        return;
    }
    std::thread::scope(|s| {
        let mut unspawned = Vec::new();
        for t in 0..threads {
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

/// Where a block of whole lines lies: in the worker's buffer (the offset of its first byte
/// in the job, and its range in the buffer), or between two offsets of a map: the long
/// line's map, made for a line too long for the buffer, or the plan's.
enum LinesAt {
    Buf(u64, std::ops::Range<usize>),
    Map(u64, u64),
    Planned(u64, u64),
}

/// What the workers of one parallel run share.
struct Workers<'w, 'j> {
    plan: &'w Plan,
    method: Method,
    job: &'w Job<'j>,
    extent: &'w Extent,
    maps: &'w [GuardedMap],
    shared: &'w Shared<'w>,
    gate: Option<Gate<'w>>,
    visit: Visit<'w>,
    bs: u64,
    n_blocks: u64,
    threads: usize,
    per_range: u64,
    zero_runs: bool,
    region_holes: bool,
}

impl Workers<'_, '_> {
    /// Worker `t`: claims blocks as the layout says, reads them (or finds them in the maps),
    /// and hands them to the kernel until the blocks run out, the run stops or fails.
    fn run(&self, t: usize) {
        let (job, shared, bs, extent) = (self.job, self.shared, self.bs, self.extent);
        let mut bufs: Vec<PageBuf> = if self.method == Method::Pread {
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
        let own: Vec<Option<std::fs::File>> = if self.method == Method::Pread
            && self.plan.layout == Layout::Ranges
            && self.threads > 1
        {
            job.regions.iter().map(|r| r.input.reopen()).collect()
        } else {
            job.regions.iter().map(|_| None).collect()
        };
        let mut k = 0u64;
        let mut known = [0u64; MAX_REGIONS];
        let mut extents = [KnownExtent::default(); MAX_REGIONS];
        while !shared.halt.load(Ordering::Relaxed) {
            let Some((index, run_end)) = self.claim(t, &mut k, &mut known) else {
                break;
            };
            let start = index * bs;
            if shared.stop.stop_before(start) || self.gate.is_some_and(|gate| !gate(index)) {
                shared.stopped_early.store(true, Ordering::Relaxed);
                break;
            }
            if let Some(e) = run_end {
                let len = (e * bs).min(extent.len) - start;
                let block = Block {
                    index,
                    start,
                    len: len as usize,
                };
                let empty = [&[][..]; MAX_REGIONS];
                if !self.visited(
                    t,
                    &block,
                    &empty[..job.regions.len()],
                    None,
                    false,
                    block.len,
                ) {
                    break;
                }
                continue;
            }
            let len = (extent.len - start).min(bs) as usize;
            if job.framing == Framing::Lines
                && start > 0
                && job.region_is_hole(0, start - 1, start + len as u64, &mut extents)
            {
                // Zeros end no line, so no line starts in a block inside a hole that began
                // before it: the block is empty, and neither read nor mapped (a sparse
                // file's holes cost a question per extent, not a read).
                let block = Block {
                    index,
                    start: start + len as u64,
                    len: 0,
                };
                if !self.visited(t, &block, &[&[]], None, false, len) {
                    break;
                }
                continue;
            }
            let mut block = Block { index, start, len };
            let mut slices: [&[u8]; MAX_REGIONS] = [&[]; MAX_REGIONS];
            let mut long_map: Option<GuardedMap> = None;
            let read = if job.framing.is_lines() {
                match self.lines(&mut block, &mut bufs[..], &own, &mut long_map) {
                    Ok(range) => {
                        let (a, b) = (block.start as usize, block.start as usize + block.len);
                        slices[0] = match (range, &long_map) {
                            (Some(range), Some(m)) => &m.bytes()[range],
                            (Some(range), None) => &bufs[0][range],
                            (None, _) => &self.maps[0].bytes()[a..b],
                        };
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            } else if self.method == Method::Pread {
                match self.pread_regions(&block, &mut bufs, &own, &mut extents) {
                    Ok(holes) => {
                        for ((s, (b, r)), &hole) in slices
                            .iter_mut()
                            .zip(bufs.iter().zip(&job.regions))
                            .zip(&holes)
                        {
                            let at = r.input.base() + r.offset + start;
                            *s = if hole { &[] } else { b.placed(at, len) };
                        }
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            } else {
                for (i, (s, m)) in slices.iter_mut().zip(self.maps).enumerate() {
                    // A region that is a hole over the whole block is not touched.
                    if !(self.region_holes
                        && job.region_is_hole(i, start, start + len as u64, &mut extents))
                    {
                        *s = &m.bytes()[start as usize..start as usize + len];
                    }
                }
                Ok(())
            };
            if let Err(e) = read {
                shared.fail(index, e);
                break;
            }
            let slices = &slices[..job.regions.len()];
            if !self.visited(t, &block, slices, long_map.as_ref(), true, len) {
                break;
            }
        }
        give_back(bufs);
    }

    /// The next block for worker `t` (whose `k`-th claim this is), and where a zero run
    /// starting there ends (a block number); `None` when its blocks are done.
    fn claim(
        &self,
        t: usize,
        k: &mut u64,
        known: &mut [u64; MAX_REGIONS],
    ) -> Option<(u64, Option<u64>)> {
        let (job, shared, bs, n_blocks) = (self.job, self.shared, self.bs, self.n_blocks);
        let (len, per_range, threads) = (self.extent.len, self.per_range, self.threads as u64);
        let mut run_end = None;
        let index = match self.plan.layout {
            Layout::Dynamic if self.zero_runs => {
                // Claim a zero run whole, or one block.
                let mut c = shared.cursor.load(Ordering::Relaxed);
                loop {
                    if c >= n_blocks {
                        break c;
                    }
                    let run = job.zero_run_end(c, bs, n_blocks, len, known);
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
            Layout::Stripes => t as u64 + *k * threads,
            Layout::Ranges if *k >= per_range => return None,
            Layout::Ranges => t as u64 * per_range + *k,
        };
        *k += 1;
        if index >= n_blocks {
            return None;
        }
        if self.zero_runs && self.plan.layout != Layout::Dynamic {
            let last = match self.plan.layout {
                Layout::Ranges => ((t as u64 + 1) * per_range).min(n_blocks),
                _ => index + 1,
            };
            run_end = job.zero_run_end(index, bs, last, len, known);
            if let Some(e) = run_end {
                *k += e - index - 1;
            }
        }
        Some((index, run_end))
    }

    /// The whole lines that start in `block`, which is moved to cover them: read into
    /// `bufs[0]`, or found in the region's map (the plan's, or `long_map`, made here when
    /// the last line is too long for the buffer). The range of the lines in the buffer or
    /// in `long_map`; `None` when they lie in the plan's map, already in place.
    fn lines(
        &self,
        block: &mut Block,
        bufs: &mut [PageBuf],
        own: &[Option<std::fs::File>],
        long_map: &mut Option<GuardedMap>,
    ) -> Result<Option<std::ops::Range<usize>>, EngineError> {
        let (job, extent) = (self.job, self.extent);
        let (start, end) = (block.start, block.start + block.len as u64);
        let r = &job.regions[0];
        let max = job.long_lines.max();
        let (at, long) = if self.method == Method::Pread {
            let file = own[0].as_ref().unwrap_or(r.input.file());
            let read = |buf: &mut PageBuf, limit| {
                read_lines(
                    job.framing,
                    r,
                    file,
                    buf,
                    (start, end, extent.len),
                    max,
                    limit,
                )
            };
            let mut got = read(&mut bufs[0], LONG_LINE);
            if let Ok(None) = got {
                let at = r.input.base() + r.offset;
                match GuardedMap::new(r.input.file(), r.input.path(), at, extent.len) {
                    Ok(Some(m)) => *long_map = Some(m),
                    // No map to be had: gather the line after all.
                    Ok(None) | Err(_) => got = read(&mut bufs[0], usize::MAX),
                }
            }
            match (got?, long_map.take()) {
                (_, Some(m)) => {
                    let (a, b, long) =
                        map_lines(job.framing, m.bytes(), start, end, extent.len, max);
                    bufs[0] = PageBuf::with_capacity(self.bs as usize + PAGE);
                    *long_map = Some(m);
                    (LinesAt::Map(a, b), long)
                }
                (Some(got), None) => (LinesAt::Buf(got.first, got.range), got.long),
                (None, None) => unreachable!("read without a limit"),
            }
        } else {
            let m = self.maps[0].bytes();
            let (a, b, long) = map_lines(job.framing, m, start, end, extent.len, max);
            (LinesAt::Planned(a, b), long)
        };
        if let Some(Err(e)) = long.map(|p| job.long_lines.hit(r, p)) {
            return Err(e);
        }
        Ok(match at {
            LinesAt::Buf(first, range) => {
                block.start = first;
                block.len = range.len();
                Some(range)
            }
            LinesAt::Map(a, b) => {
                block.start = a;
                block.len = (b - a) as usize;
                Some(a as usize..b as usize)
            }
            LinesAt::Planned(a, b) => {
                block.start = a;
                block.len = (b - a) as usize;
                None
            }
        })
    }

    /// Reads `block` of every region into `bufs` (placed at the file's page offset), each
    /// through the worker's own descriptor where it has one; a region that is a hole over
    /// the whole block is not read. Which regions were holes.
    fn pread_regions(
        &self,
        block: &Block,
        bufs: &mut [PageBuf],
        own: &[Option<std::fs::File>],
        extents: &mut [KnownExtent; MAX_REGIONS],
    ) -> Result<[bool; MAX_REGIONS], EngineError> {
        let (job, start, len) = (self.job, block.start, block.len);
        let mut holes = [false; MAX_REGIONS];
        for (i, ((r, buf), file)) in job.regions.iter().zip(bufs).zip(own).enumerate() {
            holes[i] =
                self.region_holes && job.region_is_hole(i, start, start + len as u64, extents);
            if holes[i] {
                continue;
            }
            let at = r.input.base() + r.offset + start;
            let file = file.as_ref().unwrap_or(r.input.file());
            r.input.read_exact_at_via(file, buf.window(at, len), at)?;
        }
        Ok(holes)
    }

    /// Hands a block to the kernel, counts it and adds `advance` bytes (its nominal length)
    /// to the job's progress; false when the run must end (the kernel stopped it, or a
    /// mapped file shrank under it: with `read`, a block of data rather than a zero run, the
    /// maps and `long_map` are checked for a fault after the kernel ran).
    fn visited(
        &self,
        t: usize,
        block: &Block,
        slices: &[&[u8]],
        long_map: Option<&GuardedMap>,
        read: bool,
        advance: usize,
    ) -> bool {
        let (job, shared) = (self.job, self.shared);
        let flow = (self.visit)(t, block, slices);
        shared.blocks.fetch_add(1, Ordering::Relaxed);
        job.advance(advance);
        let faulted = job
            .regions
            .iter()
            .zip(self.maps.iter().chain(long_map))
            .find(|(_, m)| read && m.faulted());
        if let Some((r, _)) = faulted {
            let found = r.input.current_size().unwrap_or(0);
            shared.fail(
                block.index,
                EngineError::Shrank {
                    path: r.input.path().into(),
                    expected: r.input.base() + r.offset + self.extent.len,
                    found,
                },
            );
            return false;
        }
        if flow == Flow::Stop {
            shared.stopped_early.store(true, Ordering::Relaxed);
            shared.halt.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests;
