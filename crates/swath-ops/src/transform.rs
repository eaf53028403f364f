//! Transforming a file into another (the seeds' cci family): every strategy of the article,
//! each a real implementation, all producing the same bytes.
//!
//! | strategy | seed | how |
//! |---|---|---|
//! | [`CipherStrategy::Stream`] | cci | one thread: read a block, transform it, write it |
//! | [`CipherStrategy::Mmap`] | cciMM | one thread: input and output mapped, transform from one to the other |
//! | [`CipherStrategy::Threads`] | cciMT | one worker per thread with positional reads and writes of its blocks |
//! | [`CipherStrategy::Pool`] | cciMT_VTP | every block a work item on a thread pool |
//! | [`CipherStrategy::Uring`] | cciOV / cciEX | one thread, reads and writes in flight through io_uring |
//! | [`CipherStrategy::MmapThreads`] | cciMTMM | workers transform their blocks from the input map into the output map |
//!
//! The output is a regular file sized to the input before any worker starts, so blocks can
//! be written in any order; streaming to a pipe is only possible with `Stream`.
//!
//! When the transformation maps a zero byte to zero (`--alphabet`, or a shift of 0), the
//! holes of a sparse input stay holes in a regular output file, with every strategy: a block
//! wholly inside a hole is neither read nor written (the output is sized first, so it stays a
//! hole there), and the mapped strategies reserve disk space only for the blocks they write.
//! An input whose size changed by the end of the
//! run is an error ([`EngineError::Changed`]): the output would lack its tail; one whose
//! modification time moved is one too ([`EngineError::Modified`]).

use std::fs::File;
use std::io::{self, Write};

use swath_engine::output::{BlockOptions, BlockWriter, Lane, Reserve, Via};
use swath_engine::plan::UnknownName;
use swath_engine::source::Span;
use swath_engine::{
    is_zero_run, run_blocks, EngineError, EngineOptions, Flow, Input, Layout, Method, Plan,
    RunStats,
};
use swath_kernels::transform::Cipher;

/// How a transformation reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CipherStrategy {
    /// Chosen from the input (see [`choose`]).
    Auto,
    /// cci: sequential read, transform, write.
    Stream,
    /// cciMM: one thread over mapped input and output.
    Mmap,
    /// cciMT: worker threads with positional I/O.
    Threads,
    /// cciMT_VTP: blocks as work items on a thread pool.
    Pool,
    /// cciOV/cciEX: asynchronous I/O through io_uring.
    Uring,
    /// cciMTMM: worker threads over mapped input and output.
    MmapThreads,
}

impl CipherStrategy {
    /// Every strategy, in `--help` order.
    pub const ALL: [CipherStrategy; 7] = [
        CipherStrategy::Auto,
        CipherStrategy::Stream,
        CipherStrategy::Mmap,
        CipherStrategy::Threads,
        CipherStrategy::Pool,
        CipherStrategy::Uring,
        CipherStrategy::MmapThreads,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            CipherStrategy::Auto => "auto",
            CipherStrategy::Stream => "stream",
            CipherStrategy::Mmap => "mmap",
            CipherStrategy::Threads => "threads",
            CipherStrategy::Pool => "pool",
            CipherStrategy::Uring => "uring",
            CipherStrategy::MmapThreads => "mmap-threads",
        }
    }
}

impl std::str::FromStr for CipherStrategy {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        CipherStrategy::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| UnknownName {
                what: "strategy",
                given: s.to_string(),
                expected: "auto, stream, mmap, threads, pool, uring or mmap-threads",
            })
    }
}

/// What to transform and how.
#[derive(Debug, Clone)]
pub struct TransformSpec<'a> {
    /// The input.
    pub input: &'a Input,
    /// The transformation.
    pub cipher: Cipher,
    /// Use the one-byte-at-a-time table kernel instead of vector code.
    pub scalar: bool,
    /// Threads, block size and layout (`strategy` is ignored: see `strategy` below).
    pub engine: EngineOptions,
    /// The strategy.
    pub strategy: CipherStrategy,
    /// io_uring queue depth (requests in flight).
    pub queue_depth: u32,
    /// Bytes transformed so far, for a progress bar (blocks in holes are not counted).
    pub progress: Option<&'a std::sync::atomic::AtomicU64>,
}

/// What a transformation did.
#[derive(Debug, Clone)]
pub struct TransformReport {
    /// The strategy that ran (never `Auto`).
    pub strategy: CipherStrategy,
    /// Why that strategy (for `Auto`), or how a requested one fell back.
    pub reason: String,
    /// Worker threads.
    pub threads: usize,
    /// Bytes per block.
    pub block_size: usize,
    /// Block distribution.
    pub layout: Layout,
    /// Bytes transformed.
    pub bytes: u64,
    /// Set when the requested strategy could not run and another one did: what happened.
    pub fallback: Option<String>,
}

/// The `auto` choice, from `swath bench cipher` on the reference machine (2 cores, the
/// 640,000,000-byte file, hot, medians of 3; BENCHMARKS.md): `threads` with one worker per
/// core and 256 KiB blocks was fastest (121.5 ms; `pool` 126.6 ms at 1 MiB, `uring` 160.7
/// ms, `mmap-threads` 144.7-223 ms and erratic, `stream` 208 ms, `cp` 193.8 ms, `tr` 853.7
/// ms). Maps lose on the write side: every page of the new output is faulted in and zeroed
/// before it is overwritten. Streams (pipes) can only be streamed.
pub fn choose(input: &Input) -> (CipherStrategy, String) {
    match input.len() {
        None => (CipherStrategy::Stream, "input is not a regular file".into()),
        Some(_) => (
            CipherStrategy::Threads,
            "regular file: positional reads and writes on every core".into(),
        ),
    }
}

/// True when the transformation maps a zero byte to zero, so that a hole of the input can be
/// left a hole of the output.
fn keeps_zeros(spec: &TransformSpec<'_>) -> bool {
    let mut z = [0u8];
    spec.cipher.apply_scalar(&mut z);
    z[0] == 0
}

/// The last hole a worker was told of (offsets from the input's start), so that the blocks
/// of one large hole cost one question to the file system, not one each.
#[derive(Default)]
struct KnownHole {
    start: u64,
    end: u64,
}

impl KnownHole {
    /// True when the input's bytes `[start, start + n)` lie wholly in a hole, as the file
    /// system says ([`Input::hole_at`]; never for a file without holes).
    fn covers(&mut self, input: &Input, start: u64, n: usize) -> bool {
        let end = start + n as u64;
        if !(self.start <= start && start < self.end) {
            match input.hole_at(input.base() + start) {
                Some(e) => {
                    self.start = start;
                    self.end = e - input.base();
                }
                None => return false,
            }
        }
        end <= self.end
    }
}

/// How many whole blocks of `bs` bytes from `start` (a block boundary, below `len`, the
/// input's size) lie in one hole: the last, shorter block counts when the hole reaches the
/// end. 0 when `start` holds data.
fn blocks_in_hole(input: &Input, start: u64, bs: u64, len: u64) -> u64 {
    match input.hole_at(input.base() + start) {
        Some(end) => {
            let end = end - input.base();
            if end >= len {
                (len - start).div_ceil(bs)
            } else {
                (end - start) / bs
            }
        }
        None => 0,
    }
}

fn apply(spec: &TransformSpec<'_>, buf: &mut [u8]) {
    if let Some(p) = spec.progress {
        p.fetch_add(buf.len() as u64, std::sync::atomic::Ordering::Relaxed);
    }
    if spec.scalar {
        spec.cipher.apply_scalar(buf);
    } else {
        spec.cipher.apply(buf);
    }
}

fn apply_copy(spec: &TransformSpec<'_>, src: &[u8], dst: &mut [u8]) {
    if let Some(p) = spec.progress {
        p.fetch_add(src.len() as u64, std::sync::atomic::Ordering::Relaxed);
    }
    if spec.scalar {
        spec.cipher.apply_copy_scalar(src, dst);
    } else {
        spec.cipher.apply_copy(src, dst);
    }
}

/// Streams the whole input through the transformation into `out` (any writer: a pipe, a
/// file). The `Stream` strategy, and the only one possible when either side is a stream.
pub fn transform_stream(
    spec: &TransformSpec<'_>,
    out: &mut dyn Write,
    out_name: &str,
) -> Result<TransformReport, EngineError> {
    let bs = spec.engine.block_size.unwrap_or(DEFAULT_BLOCK);
    let mut buf = swath_engine::buf::PageBuf::zeroed(bs);
    let mut pos = 0u64;
    let seekable = spec.input.is_seekable();
    loop {
        let n = if seekable {
            spec.input.read_full_at(&mut buf, spec.input.base() + pos)?
        } else {
            spec.input.read_full(&mut buf)?
        };
        if n == 0 {
            break;
        }
        apply(spec, &mut buf[..n]);
        out.write_all(&buf[..n])
            .map_err(|e| EngineError::io(out_name, e))?;
        pos += n as u64;
        if n < bs {
            break;
        }
    }
    out.flush().map_err(|e| EngineError::io(out_name, e))?;
    Ok(TransformReport {
        strategy: CipherStrategy::Stream,
        reason: "".into(),
        threads: 1,
        block_size: bs,
        layout: Layout::Dynamic,
        bytes: pos,
        fallback: None,
    })
}

/// Default block size for transformations: large enough that per-call costs vanish, small
/// enough to stay in L2 cache with its output.
pub const DEFAULT_BLOCK: usize = 256 * 1024;

/// Transforms the input (a regular file of known size) into `out`, a regular file that
/// this function sizes to the input, with the positional strategies. `out` must be open for
/// reading and writing, and be the caller's own file that no one truncates meanwhile (an
/// [`swath_engine::AtomicOutput`]'s, or one it just created): the mapped strategies map it
/// shared.
pub fn transform_to_file(
    spec: &TransformSpec<'_>,
    out: &File,
    out_name: &str,
) -> Result<TransformReport, EngineError> {
    let Some(len) = spec.input.len() else {
        let mut w = out;
        return transform_stream(spec, &mut w, out_name);
    };
    let (strategy, reason) = match spec.strategy {
        CipherStrategy::Auto => choose(spec.input),
        s => (s, "requested".to_string()),
    };
    let threads = spec.engine.threads.workers();
    let bs = spec.engine.block_size.unwrap_or(DEFAULT_BLOCK);
    // Holes of the input stay holes: then a map's space is reserved block by block, only
    // for the blocks written; otherwise all of it at once.
    let holes = keeps_zeros(spec) && spec.input.may_have_holes();
    let opts = match strategy {
        CipherStrategy::Mmap | CipherStrategy::MmapThreads => BlockOptions {
            via: Via::SharedMap,
            reserve: if holes {
                Reserve::Blocks
            } else {
                Reserve::Whole
            },
            ..BlockOptions::default()
        },
        // As the seed's threads, each worker opens its own handles.
        CipherStrategy::Threads => BlockOptions {
            own_descriptors: true,
            ..BlockOptions::default()
        },
        _ => BlockOptions::default(),
    };
    // SAFETY: `out` is the caller's own file, truncated by no one meanwhile (this
    // function's contract); the writer sizes it to the input.
    let writer = unsafe { BlockWriter::new_private(out, out_name, len, opts) }?;
    let done = transform_sized(spec, &writer, strategy, &reason, threads, bs)?;
    writer.finish()?;
    // Bytes appended meanwhile were not transformed: the output would silently lack them.
    spec.input.check_unchanged()?;
    Ok(done)
}

/// [`transform_to_file`] once `out`, its writer, sized the output to the input.
fn transform_sized(
    spec: &TransformSpec<'_>,
    out: &BlockWriter<'_>,
    strategy: CipherStrategy,
    reason: &str,
    threads: usize,
    bs: usize,
) -> Result<TransformReport, EngineError> {
    let len = out.len();
    let report = |strategy, threads, layout| TransformReport {
        strategy,
        reason: reason.to_string(),
        threads,
        block_size: bs,
        layout,
        bytes: len,
        fallback: None,
    };
    match strategy {
        CipherStrategy::Auto | CipherStrategy::Stream => {
            let mut r = stream_into_file(spec, &mut out.lane(), len, bs)?;
            r.reason = reason.to_string();
            Ok(r)
        }
        CipherStrategy::Mmap | CipherStrategy::MmapThreads => {
            let t = if strategy == CipherStrategy::Mmap {
                1
            } else {
                threads
            };
            mapped(spec, out, t, bs)?;
            Ok(report(strategy, t, spec.engine.layout))
        }
        CipherStrategy::Threads => {
            positional(spec, out, threads, bs)?;
            Ok(report(strategy, threads, spec.engine.layout))
        }
        CipherStrategy::Pool => {
            pool(spec, out, threads, bs)?;
            Ok(report(strategy, threads, Layout::Dynamic))
        }
        CipherStrategy::Uring => match uring(spec, out, bs) {
            Ok(()) => Ok(report(strategy, 1, Layout::Dynamic)),
            Err(UringError::Unavailable(why)) => {
                let mut r = stream_into_file(spec, &mut out.lane(), len, bs)?;
                let note = format!("io_uring is unavailable ({why}): used the stream strategy");
                r.reason = note.clone();
                r.fallback = Some(note);
                Ok(r)
            }
            Err(UringError::Engine(e)) => Err(e),
        },
    }
}

/// The `Stream` strategy into a regular output file already sized to the input: one thread
/// reading a block, transforming it and writing it at its offset, front to back, and when
/// zeros stay zeros, skipping blocks wholly inside a hole (the output keeps the hole). Reads
/// go on past the input's size `len` until a short read, so a file that grew or shrank is
/// an error, not an output with zeros or without its tail.
fn stream_into_file(
    spec: &TransformSpec<'_>,
    out: &mut Lane<'_>,
    len: u64,
    bs: usize,
) -> Result<TransformReport, EngineError> {
    let mut buf = swath_engine::buf::PageBuf::zeroed(bs);
    let mut pos = 0u64;
    let holes = keeps_zeros(spec) && spec.input.may_have_holes();
    loop {
        if holes && pos < len {
            // Whole blocks inside a hole: skipped at once.
            let k = blocks_in_hole(spec.input, pos, bs as u64, len);
            if k > 0 {
                pos = (pos + k * bs as u64).min(len);
                continue;
            }
        }
        let n = spec.input.read_full_at(&mut buf, spec.input.base() + pos)?;
        if n == 0 {
            break;
        }
        apply(spec, &mut buf[..n]);
        out.write_at(pos, &buf[..n])?;
        pos += n as u64;
        if n < bs {
            break;
        }
    }
    // The output was sized to the input: a shorter read would leave zeros.
    let input = spec.input;
    if pos < len {
        return Err(EngineError::Shrank {
            path: input.name().into(),
            expected: input.base() + len,
            found: input.current_size().unwrap_or(0),
        });
    }
    if pos > len {
        return Err(EngineError::Changed {
            path: input.name().into(),
            before: input.base() + len,
            after: input.current_size().unwrap_or(0),
        });
    }
    Ok(TransformReport {
        strategy: CipherStrategy::Stream,
        reason: "".into(),
        threads: 1,
        block_size: bs,
        layout: Layout::Dynamic,
        bytes: pos,
        fallback: None,
    })
}

/// Workers transforming their blocks from the input's map into `out`'s shared map (its
/// space reserved as the writer was told: at once, or block by block when holes stay holes).
fn mapped(
    spec: &TransformSpec<'_>,
    out: &BlockWriter<'_>,
    threads: usize,
    bs: usize,
) -> Result<RunStats, EngineError> {
    if out.is_empty() {
        return Ok(empty_stats());
    }
    let holes = keeps_zeros(spec) && spec.input.may_have_holes();
    let job = Span::whole(spec.input).job();
    let job = if holes { job.with_zero_runs() } else { job };
    let failed = std::sync::Mutex::new(None);
    let stats = run_blocks(
        &Plan::fixed(Method::Mmap, threads, bs, spec.engine.layout),
        &job,
        &(),
        |b, d| {
            if is_zero_run(b, d) {
                // A hole of the input: the output's pages there are left untouched, a hole.
                return Flow::Continue;
            }
            let filled = out.lane().fill(b.start, b.len, |dst| {
                apply_copy(spec, d[0], dst);
                Ok::<(), EngineError>(())
            });
            if let Err(e) = filled {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                return Flow::Stop;
            }
            Flow::Continue
        },
    )?;
    if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(stats)
}

fn empty_stats() -> RunStats {
    RunStats {
        extent: swath_engine::Extent {
            len: 0,
            ended: vec![true],
        },
        blocks: 0,
        stopped_early: false,
    }
}

/// cciMT: `threads` workers, each with its own input and output descriptors (as the seed's
/// threads each open their own handles), reading, transforming and writing their blocks
/// with positional I/O: round-robin stripes with `--layout stripes`, contiguous ranges with
/// `ranges`, the next free block otherwise.
fn positional(
    spec: &TransformSpec<'_>,
    out: &BlockWriter<'_>,
    threads: usize,
    bs: usize,
) -> Result<(), EngineError> {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let len = out.len();
    let blocks = len.div_ceil(bs as u64);
    let threads = threads.clamp(1, blocks.max(1) as usize);
    let per_range = blocks.div_ceil(threads as u64);
    let cursor = AtomicU64::new(0);
    let halt = AtomicBool::new(false);
    // Zeros stay zeros: a block inside a hole of the input is left a hole of the output
    // (sized, never written).
    let zero_kept = keeps_zeros(spec);
    // Each lane writes through a descriptor of its own (the writer's option).
    out.run(threads, |t, lane| -> Result<(), EngineError> {
        let own_in = spec.input.reopen();
        let in_file = own_in.as_ref().unwrap_or(spec.input.file());
        let mut buf = swath_engine::buf::PageBuf::zeroed(bs);
        let mut hole = KnownHole::default();
        for k in 0u64.. {
            if halt.load(Ordering::Relaxed) {
                break;
            }
            let i = match spec.engine.layout {
                Layout::Dynamic => cursor.fetch_add(1, Ordering::Relaxed),
                Layout::Stripes => t as u64 + k * threads as u64,
                Layout::Ranges if k >= per_range => break,
                Layout::Ranges => t as u64 * per_range + k,
            };
            if i >= blocks {
                break;
            }
            let start = i * bs as u64;
            let n = (len - start).min(bs as u64) as usize;
            if zero_kept && hole.covers(spec.input, start, n) {
                continue;
            }
            let step = spec
                .input
                .read_exact_at_via(in_file, &mut buf[..n], spec.input.base() + start)
                .and_then(|()| {
                    apply(spec, &mut buf[..n]);
                    lane.write_at(start, &buf[..n])
                });
            if let Err(e) = step {
                halt.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    })
}

fn pool(
    spec: &TransformSpec<'_>,
    out: &BlockWriter<'_>,
    threads: usize,
    bs: usize,
) -> Result<(), EngineError> {
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| EngineError::io(out.name(), io::Error::other(e.to_string())))?;
    let len = out.len();
    let blocks = len.div_ceil(bs as u64);
    let zero_kept = keeps_zeros(spec);
    pool.install(|| {
        (0..blocks).into_par_iter().try_for_each_init(
            || {
                (
                    swath_engine::buf::PageBuf::zeroed(bs),
                    KnownHole::default(),
                    out.lane(),
                )
            },
            |(buf, hole, lane), i| {
                let start = i * bs as u64;
                let n = (len - start).min(bs as u64) as usize;
                if zero_kept && hole.covers(spec.input, start, n) {
                    // Left a hole of the output (sized, never written).
                    return Ok(());
                }
                spec.input
                    .read_exact_at(&mut buf[..n], spec.input.base() + start)?;
                apply(spec, &mut buf[..n]);
                lane.write_at(start, &buf[..n])
            },
        )
    })
}

/// Environment variable that makes io_uring count as unavailable (for sandboxes whose
/// seccomp filters fail its calls in other ways, and to test the fallback).
pub const NO_IO_URING: &str = "SWATH_NO_IO_URING";

/// Why swath cannot use io_uring here.
#[derive(Debug, thiserror::Error)]
pub enum UringUnavailable {
    /// [`NO_IO_URING`] is set.
    #[error("{} is set", NO_IO_URING)]
    Disabled,
    /// The kernel refused to set one up.
    #[error("{0}")]
    Setup(io::Error),
}

/// Whether this kernel lets swath set up an io_uring (and why not): what `--version` says
/// of the io_uring strategies.
pub fn uring_available() -> Result<(), UringUnavailable> {
    if std::env::var_os(NO_IO_URING).is_some() {
        return Err(UringUnavailable::Disabled);
    }
    io_uring::IoUring::new(2)
        .map(drop)
        .map_err(UringUnavailable::Setup)
}

enum UringError {
    Unavailable(UringUnavailable),
    Engine(EngineError),
}

impl From<EngineError> for UringError {
    fn from(e: EngineError) -> Self {
        UringError::Engine(e)
    }
}

/// cciOV/cciEX on Linux: one thread keeps `queue_depth` blocks in flight through io_uring;
/// each completed read is transformed and written back from the same buffer.
fn uring(spec: &TransformSpec<'_>, out: &BlockWriter<'_>, bs: usize) -> Result<(), UringError> {
    use io_uring::{opcode, types, IoUring};
    use std::os::fd::AsRawFd;
    let depth = spec.queue_depth.clamp(1, 256);
    if std::env::var_os(NO_IO_URING).is_some() {
        return Err(UringError::Unavailable(UringUnavailable::Disabled));
    }
    let mut ring =
        IoUring::new(depth * 2).map_err(|e| UringError::Unavailable(UringUnavailable::Setup(e)))?;
    let in_fd = types::Fd(spec.input.file().as_raw_fd());
    let (len, out_name) = (out.len(), out.name());
    let out_fd = types::Fd(out.file().as_raw_fd());
    let mut lane = out.lane();
    let in_name = spec.input.name().to_string();
    let blocks = len.div_ceil(bs as u64);
    let zero_kept = keeps_zeros(spec);
    let mut bufs: Vec<swath_engine::buf::PageBuf> = (0..depth)
        .map(|_| swath_engine::buf::PageBuf::zeroed(bs))
        .collect();
    // Per slot: the block it holds, and whether its write is in flight.
    let mut slot_block = vec![u64::MAX; depth as usize];
    let mut next = 0u64;
    let mut done = 0u64;
    let mut in_flight = 0u32;
    const WRITE: u64 = 1 << 63;
    let block_len = |i: u64| (len - i * bs as u64).min(bs as u64) as usize;
    // Blocks wholly inside a hole are left holes of the output: counted done, never read.
    let skip_holes = |next: &mut u64, done: &mut u64| {
        if zero_kept && *next < blocks {
            let k = blocks_in_hole(spec.input, *next * bs as u64, bs as u64, len);
            *next += k;
            *done += k;
        }
    };
    let submit_read =
        |ring: &mut IoUring, bufs: &mut [swath_engine::buf::PageBuf], slot: usize, i: u64| {
            let n = block_len(i);
            let sqe = opcode::Read::new(in_fd, bufs[slot].as_mut_ptr(), n as u32)
                .offset(spec.input.base() + i * bs as u64)
                .build()
                .user_data(slot as u64);
            // SAFETY: the buffer lives in `bufs` until its completion is reaped below.
            unsafe { ring.submission().push(&sqe) }.map_err(|_| io::Error::other("ring full"))
        };
    for (slot, held) in slot_block.iter_mut().enumerate() {
        skip_holes(&mut next, &mut done);
        if next >= blocks {
            break;
        }
        submit_read(&mut ring, &mut bufs, slot, next).map_err(|e| EngineError::io(&in_name, e))?;
        *held = next;
        next += 1;
        in_flight += 1;
    }
    while done < blocks {
        ring.submit_and_wait(1)
            .map_err(|e| EngineError::io(&in_name, e))?;
        let completions: Vec<(u64, i32)> = ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (data, res) in completions {
            in_flight -= 1;
            let slot = (data & !WRITE) as usize;
            let i = slot_block[slot];
            let n = block_len(i);
            if data & WRITE == 0 {
                if res < 0 {
                    return Err(
                        EngineError::io(&in_name, io::Error::from_raw_os_error(-res)).into(),
                    );
                }
                if (res as usize) < n {
                    // A short read: finish it synchronously (EOF there means the file shrank).
                    let got = res as usize;
                    let at = spec.input.base() + i * bs as u64 + got as u64;
                    spec.input.read_exact_at(&mut bufs[slot][got..n], at)?;
                }
                apply(spec, &mut bufs[slot][..n]);
                let sqe = opcode::Write::new(out_fd, bufs[slot].as_ptr(), n as u32)
                    .offset(i * bs as u64)
                    .build()
                    .user_data(slot as u64 | WRITE);
                // SAFETY: as for reads: the buffer stays put until the write completes.
                unsafe { ring.submission().push(&sqe) }
                    .map_err(|_| EngineError::io(out_name, io::Error::other("ring full")))?;
                in_flight += 1;
            } else {
                if res < 0 {
                    let e = io::Error::from_raw_os_error(-res);
                    return Err(EngineError::io(out_name, e).into());
                }
                if (res as usize) < n {
                    // A short write: finish it synchronously, which either completes it or
                    // reports the real cause (a full disk, a file-size limit).
                    let done_part = res as usize;
                    lane.write_at(i * bs as u64 + done_part as u64, &bufs[slot][done_part..n])?;
                }
                done += 1;
                skip_holes(&mut next, &mut done);
                if next < blocks {
                    submit_read(&mut ring, &mut bufs, slot, next)
                        .map_err(|e| EngineError::io(&in_name, e))?;
                    slot_block[slot] = next;
                    next += 1;
                    in_flight += 1;
                }
            }
        }
    }
    debug_assert_eq!(in_flight, 0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn cipher_strategy_names_parse_and_unknown_ones_say_the_choices() {
        for st in CipherStrategy::ALL {
            assert_eq!(st.name().parse::<CipherStrategy>(), Ok(st));
        }
        assert_eq!(
            "read".parse::<CipherStrategy>().unwrap_err().to_string(),
            "unknown strategy 'read' (expected auto, stream, mmap, threads, pool, uring or mmap-threads)"
        );
    }

    #[test]
    fn uring_unavailable_says_why_as_the_string_did() {
        assert_eq!(
            UringUnavailable::Disabled.to_string(),
            "SWATH_NO_IO_URING is set"
        );
        let e = io::Error::from_raw_os_error(libc::ENOSYS);
        let text = e.to_string();
        assert_eq!(UringUnavailable::Setup(e).to_string(), text);
    }

    fn run(
        data: &[u8],
        cipher: Cipher,
        strategy: CipherStrategy,
        threads: i64,
        bs: usize,
        layout: Layout,
        scalar: bool,
    ) -> Vec<u8> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(data).unwrap();
        let input = Input::open(f.path()).unwrap();
        let out = tempfile::NamedTempFile::new().unwrap();
        let spec = TransformSpec {
            input: &input,
            cipher,
            scalar,
            engine: EngineOptions {
                threads: swath_engine::Threads::from_count(threads),
                block_size: Some(bs),
                layout,
                ..Default::default()
            },
            strategy,
            queue_depth: 4,
            progress: None,
        };
        let report = transform_to_file(&spec, out.as_file(), "out").unwrap();
        assert_eq!(report.bytes, data.len() as u64);
        std::fs::read(out.path()).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn every_strategy_matches_the_oracle(
            data in proptest::collection::vec(any::<u8>(), 0..20_000),
            shift in -255i64..=255,
            alphabet in any::<bool>(),
            strategy in proptest::sample::select(CipherStrategy::ALL.to_vec()),
            threads in 1i64..5,
            bs in prop_oneof![1usize..64, 500usize..5000],
            stripes in any::<bool>(),
            scalar in any::<bool>(),
        ) {
            let cipher = if alphabet { Cipher::alphabet(shift) } else { Cipher::bytes(shift) };
            let layout = if stripes { Layout::Stripes } else { Layout::Dynamic };
            let got = run(&data, cipher, strategy, threads, bs, layout, scalar);
            let mut want = data.clone();
            cipher.apply_naive(&mut want);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn sparse_file_over_4gib() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let len = (4u64 << 30) + 4097;
        f.as_file().set_len(len).unwrap();
        f.as_file().write_all_at(b"abc", len - 3).unwrap();
        let input = Input::open(f.path()).unwrap();
        for strategy in CipherStrategy::ALL {
            let out = tempfile::NamedTempFile::new().unwrap();
            let spec = TransformSpec {
                input: &input,
                cipher: Cipher::bytes(1),
                scalar: false,
                engine: EngineOptions {
                    block_size: Some(8 << 20),
                    ..Default::default()
                },
                strategy,
                queue_depth: 8,
                progress: None,
            };
            transform_to_file(&spec, out.as_file(), "out").unwrap();
            let o = out.as_file();
            assert_eq!(o.metadata().unwrap().len(), len);
            let mut tail = [0u8; 4];
            o.read_exact_at(&mut tail, len - 4).unwrap();
            assert_eq!(&tail, b"\x01bcd");
            let mut head = [9u8; 2];
            o.read_exact_at(&mut head, 0).unwrap();
            assert_eq!(head, [1, 1]);
        }
    }

    /// A sparse file of `pages` (hole or data) and its bytes.
    fn sparse(pages: &[bool]) -> (tempfile::NamedTempFile, Vec<u8>) {
        let f = tempfile::NamedTempFile::new().unwrap();
        let mut dense = Vec::new();
        for (k, &hole) in pages.iter().enumerate() {
            if hole {
                dense.resize(dense.len() + 4096, 0);
            } else {
                let bytes: Vec<u8> = (0..4096).map(|i| (i * 7 + k) as u8).collect();
                f.as_file()
                    .write_all_at(&bytes, dense.len() as u64)
                    .unwrap();
                dense.extend_from_slice(&bytes);
            }
        }
        f.as_file().set_len(dense.len() as u64).unwrap();
        (f, dense)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn holes_transform_as_the_same_bytes_written_densely(
            pages in proptest::collection::vec(any::<bool>(), 0..24),
            shift in -3i64..=3,
            alphabet in any::<bool>(),
            threads in 1i64..4,
            bs_pages in 1usize..3,
            stripes in any::<bool>(),
            strategy in proptest::sample::select(CipherStrategy::ALL.to_vec()),
        ) {
            let (f, dense) = sparse(&pages);
            let input = Input::open(f.path()).unwrap();
            let cipher = if alphabet { Cipher::alphabet(shift) } else { Cipher::bytes(shift) };
            let out = tempfile::NamedTempFile::new().unwrap();
            let spec = TransformSpec {
                input: &input,
                cipher,
                scalar: false,
                engine: EngineOptions {
                    threads: swath_engine::Threads::from_count(threads),
                    block_size: Some(bs_pages * 4096),
                    layout: if stripes { Layout::Stripes } else { Layout::Dynamic },
                    ..Default::default()
                },
                strategy,
                queue_depth: 4,
                progress: None,
            };
            transform_to_file(&spec, out.as_file(), "out").unwrap();
            let mut want = dense.clone();
            cipher.apply_naive(&mut want);
            prop_assert_eq!(std::fs::read(out.path()).unwrap(), want);
        }
    }

    #[test]
    /// Every strategy (not only `threads`, as before) keeps the holes of a 4 GiB sparse input
    /// when zeros stay zeros.
    fn cipher_keeps_holes_when_zero_maps_to_zero_with_every_strategy() {
        use std::os::unix::fs::MetadataExt;
        let f = tempfile::NamedTempFile::new().unwrap();
        let len = 1u64 << 32;
        f.as_file().set_len(len).unwrap();
        f.as_file().write_all_at(b"abc", len / 2).unwrap();
        let input = Input::open(f.path()).unwrap();
        if !input.may_have_holes() {
            return;
        }
        for (cipher, strategy) in [Cipher::alphabet(3), Cipher::bytes(0)]
            .into_iter()
            .flat_map(|c| CipherStrategy::ALL.map(|s| (c, s)))
        {
            let out = tempfile::NamedTempFile::new().unwrap();
            let spec = TransformSpec {
                input: &input,
                cipher,
                scalar: false,
                engine: EngineOptions::default(),
                strategy,
                queue_depth: 4,
                progress: None,
            };
            transform_to_file(&spec, out.as_file(), "out").unwrap();
            let meta = out.as_file().metadata().unwrap();
            assert_eq!(meta.len(), len);
            assert!(
                meta.blocks() < 4096,
                "{strategy:?}: {} blocks",
                meta.blocks()
            );
            let mut mid = [0u8; 4];
            out.as_file().read_exact_at(&mut mid, len / 2 - 1).unwrap();
            let mut want = *b"\0abc";
            cipher.apply_naive(&mut want);
            assert_eq!(mid, want);
        }
    }

    #[test]
    fn cipher_of_an_input_rewritten_meanwhile_is_reported() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![b'a'; 100_000]).unwrap();
        let input = Input::open(f.path()).unwrap();
        f.as_file().write_all_at(b"zz", 70_000).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        f.as_file().set_modified(later).unwrap();
        for strategy in CipherStrategy::ALL {
            let out = tempfile::NamedTempFile::new().unwrap();
            let spec = TransformSpec {
                input: &input,
                cipher: Cipher::alphabet(1),
                scalar: false,
                engine: EngineOptions::default(),
                strategy,
                queue_depth: 4,
                progress: None,
            };
            match transform_to_file(&spec, out.as_file(), "out") {
                Err(EngineError::Modified { .. }) => {}
                other => panic!("{strategy:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn cipher_of_an_input_grown_meanwhile_is_reported() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![b'a'; 100_000]).unwrap();
        let input = Input::open(f.path()).unwrap();
        f.write_all(&vec![b'b'; 50_000]).unwrap();
        for strategy in CipherStrategy::ALL {
            let out = tempfile::NamedTempFile::new().unwrap();
            let spec = TransformSpec {
                input: &input,
                cipher: Cipher::alphabet(1),
                scalar: false,
                engine: EngineOptions::default(),
                strategy,
                queue_depth: 4,
                progress: None,
            };
            match transform_to_file(&spec, out.as_file(), "out") {
                Err(EngineError::Changed { .. }) => {}
                other => panic!("{strategy:?}: {other:?}"),
            }
        }
    }
}
