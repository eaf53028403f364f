//! Comparing two inputs: the first K differences (compMP), or every difference in order.
//!
//! [`first_differences`] is speculative: workers compare blocks in any order and offer what
//! they find to a [`FirstK`] table; a worker stops at its next block once the table holds K
//! differences before it. Line numbers are not counted while comparing on the parallel path,
//! since identical inputs, the common case, would pay for them for nothing: once the answer is
//! known, only the prefix up to the last difference is counted, in parallel. On the sequential
//! path (streams, or `--threads 0`) the data cannot be read twice, so newlines are counted in
//! the same pass, as GNU cmp does.
//!
//! [`stream_differences`] visits every difference (`cmp -l`): each block's differences are
//! formatted by the workers and written in file order through the engine's ordered merge.
//!
//! Holes of sparse files are not read: where both inputs have one, the engine hands a zero
//! run (equal, nothing to do); where only one has one over a whole block, that side comes as
//! an empty slice ([`is_hole`]) and the other side is checked against zeros
//! ([`for_each_nonzero`]), which finds exactly the differences, and reports the same bytes,
//! as comparing with the zeros the hole holds.

use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use swath_engine::{
    is_hole, run_blocks, run_ordered, Access, Block, EngineError, EngineOptions, Extent, FirstK,
    Flow, Input, Job, Method, Plan, RunStats, Strategy,
};
use swath_kernels::compare::{for_each_mismatch, for_each_nonzero};
use swath_kernels::count::count_byte;

use crate::lines::newlines_before;
use swath_engine::source::Span;

/// A position where the two inputs differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Difference {
    /// Offset from the start of the compared data (after the skips), 0-based.
    pub offset: u64,
    /// The byte in the first input.
    pub a: u8,
    /// The byte in the second input.
    pub b: u8,
}

/// What to compare: two inputs, bytes skipped at the start of each, and a byte limit.
#[derive(Debug, Clone, Copy)]
pub struct CompareSpec<'a> {
    /// The two inputs.
    pub inputs: [&'a Input; 2],
    /// Bytes skipped at the start of each input.
    pub skip: [u64; 2],
    /// Bytes compared at most.
    pub limit: Option<u64>,
    /// Counter of bytes compared so far, for a progress bar.
    pub progress: Option<&'a AtomicU64>,
}

impl<'a> CompareSpec<'a> {
    /// The bytes compared of each input: from its skip, at most the limit.
    pub fn spans(&self) -> [Span<'a>; 2] {
        [0, 1].map(|i| Span {
            input: self.inputs[i],
            offset: self.skip[i],
            limit: self.limit,
        })
    }

    fn job(&self) -> Job<'a> {
        Span::job_of(&self.spans())
            .with_progress(self.progress)
            // Where both inputs are holes they are equal: nothing to read; where one is, only
            // the other is read, and checked against zeros.
            .with_region_holes()
    }

    /// The plan the engine will use for this comparison.
    pub fn plan(&self, opts: &EngineOptions) -> Plan {
        Plan::for_job(opts, &self.job(), Access::SinglePass)
    }
}

/// Calls `f(i, x, y)` for every index `i` of `block` where the two inputs differ (`x` the
/// first input's byte, `y` the second's), in order, until `f` returns false. A side that is a
/// hole ([`is_hole`]) is zeros: the other side is checked against zeros, the hole not read.
fn for_each_difference(
    block: &Block,
    a: &[u8],
    b: &[u8],
    mut f: impl FnMut(usize, u8, u8) -> bool,
) -> bool {
    match (is_hole(block, a), is_hole(block, b)) {
        (true, true) => true,
        (true, false) => for_each_nonzero(b, |i| f(i, 0, b[i])),
        (false, true) => for_each_nonzero(a, |i| f(i, a[i], 0)),
        (false, false) => for_each_mismatch(a, b, |i| f(i, a[i], b[i])),
    }
}

/// True when exactly one of the inputs ended where the compared data ends (what `cmp`
/// reports as "EOF on FILE").
pub fn one_ended(ended: &[bool]) -> bool {
    ended.iter().filter(|&&e| e).count() == 1
}

/// Newlines in `a[from..to]`, the first input's part of `block` (none in a hole).
fn newlines_in(block: &Block, a: &[u8], from: usize, to: usize) -> u64 {
    if is_hole(block, a) {
        0
    } else {
        count_byte(&a[from..to], b'\n')
    }
}

/// The last byte of the first input's part of `block` (a hole ends in a zero).
fn last_byte_of(block: &Block, a: &[u8]) -> Option<u8> {
    if is_hole(block, a) {
        Some(0)
    } else {
        a.last().copied()
    }
}

/// Which line numbers a comparison should report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// None.
    None,
    /// Newlines before each reported difference, and in the whole compared data when fewer
    /// than K differences were found and one input ended before the other (for "EOF on FILE
    /// after byte N, line M").
    Count,
}

/// The result of [`first_differences`].
#[derive(Debug, Clone)]
pub struct FirstDifferences {
    /// Up to K differences, in file order.
    pub diffs: Vec<Difference>,
    /// With [`Lines::Count`]: newlines in the first input before each difference.
    pub newlines_before: Vec<u64>,
    /// With [`Lines::Count`], fewer than K differences and exactly one input ended
    /// ([`one_ended`]): newlines in all compared data.
    pub newlines_total: Option<u64>,
    /// With [`Lines::Count`]: the last compared byte of the first input, if any was compared
    /// (GNU cmp says "line N" after a final newline and "in line N" otherwise).
    pub last_byte: Option<u8>,
    /// How much was compared, and which input ended there.
    pub extent: Extent,
    /// What the engine did.
    pub plan: Plan,
    /// Counters of the run.
    pub stats: RunStats,
}

/// The first `k` differences of the two inputs, in file order.
///
/// With the `auto` strategy on regular files, the first [`PROBE_BYTES`] are compared first on
/// the calling thread with plain positional reads: when the answer lies there (or the inputs
/// are that small) no thread is started, nothing is mapped and no residency is sampled, so an
/// early difference costs what it costs GNU cmp.
pub fn first_differences(
    spec: &CompareSpec<'_>,
    k: usize,
    lines: Lines,
    opts: &EngineOptions,
) -> Result<FirstDifferences, EngineError> {
    let job = spec.job();
    let probe_allowed = opts.strategy == Strategy::Auto
        && opts.threads != swath_engine::Threads::Sequential
        && spec.inputs.iter().all(|i| i.is_seekable());
    if probe_allowed {
        if let Some(extent) = job.known_extent() {
            let whole = extent.len <= PROBE_BYTES;
            let probe_job = if whole {
                job.clone()
            } else {
                job.clone().with_limit(Some(PROBE_BYTES))
            };
            let probe = Plan::inline(PROBE_BYTES as usize, "answered by the first block");
            let r = first_differences_with(spec, &probe_job, probe, k, lines)?;
            if whole || r.diffs.len() == k {
                return Ok(r);
            }
        }
    }
    first_differences_with(spec, &job, spec.plan(opts), k, lines)
}

/// Bytes compared on the calling thread before planning the parallel run.
pub const PROBE_BYTES: u64 = 64 * 1024;

fn first_differences_with(
    spec: &CompareSpec<'_>,
    job: &Job<'_>,
    plan: Plan,
    k: usize,
    lines: Lines,
) -> Result<FirstDifferences, EngineError> {
    let table: FirstK<(u8, u8)> = FirstK::new(k.max(1));
    let sequential = plan.method == Method::Read;
    // Sequential path: blocks arrive in order, so a running count gives line numbers.
    let seq_lines = Mutex::new((0u64, Vec::<u64>::new()));
    let count_in_pass = sequential && lines == Lines::Count;
    let last = Mutex::new(None::<(u64, u8)>);
    let stats = run_blocks(&plan, job, &table, |block, data| {
        let (a, b) = (data[0], data[1]);
        if lines == Lines::Count {
            if let Some(byte) = last_byte_of(block, a) {
                let mut l = last.lock().unwrap_or_else(|p| p.into_inner());
                if l.is_none_or(|(i, _)| i < block.index) {
                    *l = Some((block.index, byte));
                }
            }
        }
        let cutoff = table.cutoff();
        let mut found = Vec::new();
        for_each_difference(block, a, b, |i, x, y| {
            let off = block.start + i as u64;
            if off > cutoff {
                return false;
            }
            found.push((off, (x, y)));
            found.len() < k
        });
        if count_in_pass {
            let mut st = seq_lines.lock().unwrap_or_else(|p| p.into_inner());
            let (running, before) = &mut *st;
            let mut from = 0usize;
            let room = k - before.len();
            for &(off, _) in found.iter().take(room) {
                let i = (off - block.start) as usize;
                *running += newlines_in(block, a, from, i);
                from = i;
                before.push(*running);
            }
            *running += newlines_in(block, a, from, block.len);
        }
        table.offer(found);
        if sequential && table.cutoff() != u64::MAX {
            Flow::Stop
        } else {
            Flow::Continue
        }
    })?;
    let diffs: Vec<Difference> = table
        .into_sorted()
        .into_iter()
        .map(|(offset, (a, b))| Difference { offset, a, b })
        .collect();
    let mut newlines_before_diffs = Vec::new();
    let mut newlines_total = None;
    if lines == Lines::Count {
        // The newlines of everything compared are said only in the EOF message, when one
        // input ended before the other: only then are they counted (for identical inputs
        // that would be a second pass over the first).
        let want_total = diffs.len() < k && one_ended(&stats.extent.ended);
        if count_in_pass {
            let (running, before) = seq_lines.into_inner().unwrap_or_else(|p| p.into_inner());
            newlines_before_diffs = before;
            newlines_before_diffs.truncate(diffs.len());
            if want_total {
                newlines_total = Some(running);
            }
        } else {
            let mut positions: Vec<u64> = diffs.iter().map(|d| d.offset).collect();
            if want_total {
                positions.push(stats.extent.len);
            }
            let mut counts = newlines_before(&plan, spec.spans()[0], &positions)?;
            if want_total {
                newlines_total = counts.pop();
            }
            newlines_before_diffs = counts;
        }
    }
    Ok(FirstDifferences {
        diffs,
        newlines_before: newlines_before_diffs,
        newlines_total,
        last_byte: last
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .map(|(_, b)| b),
        extent: stats.extent.clone(),
        plan,
        stats,
    })
}

/// The result of [`stream_differences`].
#[derive(Debug, Clone)]
pub struct StreamedDifferences {
    /// How much was compared, and which input ended there.
    pub extent: Extent,
    /// What the engine did.
    pub plan: Plan,
    /// Counters of the run.
    pub stats: RunStats,
}

/// Visits every difference in file order: `emit` formats each block's differences into a
/// buffer on the worker that found them, and `consume` receives the buffers in file order
/// (empty ones are skipped). `consume` returning [`Flow::Stop`] ends the comparison.
pub fn stream_differences<E, C>(
    spec: &CompareSpec<'_>,
    opts: &EngineOptions,
    emit: E,
    mut consume: C,
) -> Result<StreamedDifferences, EngineError>
where
    E: Fn(Difference, &mut Vec<u8>) + Sync,
    C: FnMut(&[u8]) -> Flow + Send,
{
    let job = spec.job();
    let plan = spec.plan(opts);
    // Every byte of a block can differ, and each difference is formatted into tens of
    // bytes: few blocks in flight keep that bounded (the least the ordered merge allows).
    let window = plan.threads * 2;
    let stats = run_ordered(
        &plan,
        &job,
        window,
        |block, data| {
            let (a, b) = (data[0], data[1]);
            let mut out = Vec::new();
            for_each_difference(block, a, b, |i, x, y| {
                let d = Difference {
                    offset: block.start + i as u64,
                    a: x,
                    b: y,
                };
                emit(d, &mut out);
                true
            });
            out
        },
        |_, out| {
            if out.is_empty() {
                Flow::Continue
            } else {
                consume(&out)
            }
        },
    )?;
    Ok(StreamedDifferences {
        extent: stats.extent.clone(),
        plan,
        stats,
    })
}

/// The result of [`stream_differences_with_lines`].
#[derive(Debug, Clone)]
pub struct StreamedLines {
    /// How much was compared, and which input ended there.
    pub extent: Extent,
    /// Newlines in the first input over everything compared, when the run was not stopped.
    pub newlines_total: Option<u64>,
    /// The last byte compared of the first input.
    pub last_byte: Option<u8>,
    /// What the engine did.
    pub plan: Plan,
    /// Counters of the run.
    pub stats: RunStats,
}

/// One block's differences with the newlines before each inside the block, its newline
/// count and its last byte: what [`stream_differences_with_lines`] merges in order.
/// Differences are kept compact (offset in the block, the two bytes, newlines before it in
/// the block): a block where every byte differs holds 12 bytes per byte, not 24.
type LinedBlock = (Vec<LinedDiff>, u64, Option<u8>);

/// Offsets within a block fit in 32 bits: blocks are at most 1 GiB (the options' bound).
#[derive(Clone, Copy)]
struct LinedDiff {
    at: u32,
    newlines: u32,
    a: u8,
    b: u8,
}

/// Visits every difference in file order with the number of newlines of the first input
/// before it (the default output's line numbers), for as many differences as the caller
/// wants: `consume` returning [`Flow::Stop`] ends the run. Each block's newlines are counted
/// by the worker that compares it and made absolute in the ordered merge, so memory is the
/// blocks in flight, not the differences asked for.
pub fn stream_differences_with_lines<C>(
    spec: &CompareSpec<'_>,
    opts: &EngineOptions,
    mut consume: C,
) -> Result<StreamedLines, EngineError>
where
    C: FnMut(Difference, u64) -> Flow + Send,
{
    let job = spec.job();
    let plan = spec.plan(opts);
    let window = plan.threads * 2;
    let mut base = 0u64;
    let mut last_byte = None;
    let mut stopped = false;
    let stats = run_ordered(
        &plan,
        &job,
        window,
        |block, data| -> LinedBlock {
            let (a, b) = (data[0], data[1]);
            let mut found = Vec::new();
            let (mut running, mut from) = (0u64, 0usize);
            for_each_difference(block, a, b, |i, x, y| {
                running += newlines_in(block, a, from, i);
                from = i;
                found.push(LinedDiff {
                    at: i as u32,
                    newlines: running as u32,
                    a: x,
                    b: y,
                });
                true
            });
            running += newlines_in(block, a, from, block.len);
            (found, running, last_byte_of(block, a))
        },
        |block, (found, newlines, last): LinedBlock| {
            for x in found {
                let d = Difference {
                    offset: block.start + u64::from(x.at),
                    a: x.a,
                    b: x.b,
                };
                if consume(d, base + u64::from(x.newlines)) == Flow::Stop {
                    stopped = true;
                    return Flow::Stop;
                }
            }
            base += newlines;
            if last.is_some() {
                last_byte = last;
            }
            Flow::Continue
        },
    )?;
    Ok(StreamedLines {
        extent: stats.extent.clone(),
        newlines_total: (!stopped).then_some(base),
        last_byte,
        plan,
        stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;
    use swath_engine::{Layout, Strategy};

    fn temp(data: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(data).unwrap();
        f.flush().unwrap();
        f
    }

    struct Oracle {
        diffs: Vec<Difference>,
        before: Vec<u64>,
        total: Option<u64>,
        len: u64,
        ended: Vec<bool>,
    }

    fn oracle(a: &[u8], b: &[u8], skip: [u64; 2], limit: Option<u64>, k: usize) -> Oracle {
        let a = &a[(skip[0] as usize).min(a.len())..];
        let b = &b[(skip[1] as usize).min(b.len())..];
        let common = a.len().min(b.len()) as u64;
        let len = limit.map_or(common, |l| l.min(common));
        let limited = limit.is_some_and(|l| l <= common);
        let mut diffs = Vec::new();
        let mut before = Vec::new();
        let mut nl = 0u64;
        for i in 0..len as usize {
            if a[i] != b[i] && diffs.len() < k {
                diffs.push(Difference {
                    offset: i as u64,
                    a: a[i],
                    b: b[i],
                });
                before.push(nl);
            }
            if a[i] == b'\n' {
                nl += 1;
            }
        }
        let ended = [a.len() as u64, b.len() as u64]
            .iter()
            .map(|&r| !limited && r == len)
            .collect();
        let total = (diffs.len() < k).then_some(nl);
        Oracle {
            diffs,
            before,
            total,
            len,
            ended,
        }
    }

    /// Every difference's offset, in the order [`stream_differences`] gives them, and what
    /// it reports.
    fn streamed_offsets(
        spec: &CompareSpec<'_>,
        opts: &EngineOptions,
    ) -> (Vec<u64>, StreamedDifferences) {
        let mut seen = Vec::new();
        let streamed = stream_differences(
            spec,
            opts,
            |d, out| out.extend_from_slice(&d.offset.to_le_bytes()),
            |bytes| {
                seen.extend(
                    bytes
                        .chunks(8)
                        .map(|c| u64::from_le_bytes(c.try_into().unwrap())),
                );
                Flow::Continue
            },
        )
        .unwrap();
        (seen, streamed)
    }

    fn data_strategy() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'x'), Just(b'y')], 0..5000)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn every_path_matches_the_oracle(
            a in data_strategy(),
            flips in proptest::collection::vec((0usize..5000, 1u8..255), 0..12),
            resize in -40i64..40,
            skip in (0u64..30, 0u64..30),
            limit in proptest::option::of(0u64..6000),
            k in 1usize..10,
            threads in -1i64..5,
            bs in prop_oneof![1usize..70, 100usize..2000],
            strategy in prop_oneof![Just(Strategy::Auto), Just(Strategy::Read), Just(Strategy::Pread), Just(Strategy::Mmap)],
            stripes in any::<bool>(),
        ) {
            let mut b = a.clone();
            for (p, x) in flips {
                if p < b.len() { b[p] ^= x; }
            }
            let new_len = (b.len() as i64 + resize).max(0) as usize;
            b.resize(new_len, b'z');
            let (fa, fb) = (temp(&a), temp(&b));
            let (ia, ib) = (Input::open(fa.path()).unwrap(), Input::open(fb.path()).unwrap());
            let spec = CompareSpec { inputs: [&ia, &ib], skip: [skip.0, skip.1], limit, progress: None };
            let opts = EngineOptions {
                threads: swath_engine::Threads::from_count(threads),
                block_size: Some(bs),
                strategy,
                layout: if stripes { Layout::Stripes } else { Layout::Dynamic },
            };
            let got = first_differences(&spec, k, Lines::Count, &opts).unwrap();
            let want = oracle(&a, &b, [skip.0, skip.1], limit, k);
            prop_assert_eq!(&got.diffs, &want.diffs);
            prop_assert_eq!(&got.newlines_before, &want.before);
            prop_assert_eq!(got.newlines_total, want.total.filter(|_| one_ended(&want.ended)));
            if got.diffs.len() < k {
                let a_region = &a[(skip.0 as usize).min(a.len())..];
                let want_last = (want.len > 0).then(|| a_region[want.len as usize - 1]);
                prop_assert_eq!(got.last_byte, want_last);
            }
            if got.diffs.len() < k {
                prop_assert_eq!(got.extent.len, want.len);
                prop_assert_eq!(&got.extent.ended, &want.ended);
            }

            // Streaming every difference gives the oracle's full list.
            let all = oracle(&a, &b, [skip.0, skip.1], limit, usize::MAX);
            let (ia, ib) = (Input::open(fa.path()).unwrap(), Input::open(fb.path()).unwrap());
            let spec = CompareSpec { inputs: [&ia, &ib], skip: [skip.0, skip.1], limit, progress: None };
            let (seen, streamed) = streamed_offsets(&spec, &opts);
            let want_offsets: Vec<u64> = all.diffs.iter().map(|d| d.offset).collect();
            prop_assert_eq!(seen, want_offsets);
            prop_assert_eq!(streamed.extent.len, all.len);
            prop_assert_eq!(&streamed.extent.ended, &all.ended);

            // Streaming the first K with their line numbers gives the oracle's first K.
            let (ia, ib) = (Input::open(fa.path()).unwrap(), Input::open(fb.path()).unwrap());
            let spec = CompareSpec { inputs: [&ia, &ib], skip: [skip.0, skip.1], limit, progress: None };
            let (mut diffs, mut before) = (Vec::new(), Vec::new());
            let lined = stream_differences_with_lines(&spec, &opts, |d, nl| {
                diffs.push(d);
                before.push(nl);
                if diffs.len() == k { Flow::Stop } else { Flow::Continue }
            }).unwrap();
            prop_assert_eq!(&diffs, &want.diffs);
            prop_assert_eq!(&before, &want.before);
            if diffs.len() < k {
                prop_assert_eq!(lined.newlines_total, want.total);
                let a_region = &a[(skip.0 as usize).min(a.len())..];
                let want_last = (want.len > 0).then(|| a_region[want.len as usize - 1]);
                prop_assert_eq!(lined.last_byte, want_last);
                prop_assert_eq!(lined.extent.len, want.len);
                prop_assert_eq!(&lined.extent.ended, &want.ended);
            }
        }
    }

    /// A sparse file of pages (a hole, or `fill` bytes with a newline now and then) with
    /// `flips` written over it, and its bytes.
    fn sparse(pages: &[(bool, u8)], flips: &[(usize, u8)]) -> (tempfile::NamedTempFile, Vec<u8>) {
        use std::os::unix::fs::FileExt;
        let f = tempfile::NamedTempFile::new().unwrap();
        let mut dense = Vec::new();
        for &(hole, fill) in pages {
            if hole {
                dense.resize(dense.len() + 4096, 0);
            } else {
                let bytes: Vec<u8> = (0..4096)
                    .map(|i| if i % 61 == 0 { b'\n' } else { fill })
                    .collect();
                f.as_file()
                    .write_all_at(&bytes, dense.len() as u64)
                    .unwrap();
                dense.extend_from_slice(&bytes);
            }
        }
        for &(at, x) in flips {
            if at < dense.len() {
                dense[at] = x;
                f.as_file().write_all_at(&[x], at as u64).unwrap();
            }
        }
        f.as_file().set_len(dense.len() as u64).unwrap();
        (f, dense)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn holes_compare_as_the_same_bytes_written_densely(
            pages in proptest::collection::vec((any::<bool>(), any::<bool>(), prop_oneof![Just(0u8), Just(b'x')]), 0..12),
            flips in proptest::collection::vec((0usize..50_000, 0u8..3), 0..4),
            k in 1usize..4,
            threads in 1i64..4,
            bs_pages in 1usize..3,
            strategy in prop_oneof![Just(Strategy::Auto), Just(Strategy::Read), Just(Strategy::Pread), Just(Strategy::Mmap)],
        ) {
            // Holes in one, both or neither input, zeros written as data facing holes.
            let pa: Vec<(bool, u8)> = pages.iter().map(|&(h, _, f)| (h, f)).collect();
            let pb: Vec<(bool, u8)> = pages.iter().map(|&(_, h, f)| (h, f)).collect();
            let (fa, a) = sparse(&pa, &[]);
            let (fb, b) = sparse(&pb, &flips);
            let (ia, ib) = (Input::open(fa.path()).unwrap(), Input::open(fb.path()).unwrap());
            let spec = CompareSpec { inputs: [&ia, &ib], skip: [0, 0], limit: None, progress: None };
            let opts = EngineOptions {
                threads: swath_engine::Threads::from_count(threads),
                block_size: Some(bs_pages * 4096),
                strategy,
                layout: Layout::Dynamic,
            };
            let got = first_differences(&spec, k, Lines::Count, &opts).unwrap();
            let want = oracle(&a, &b, [0, 0], None, k);
            prop_assert_eq!(&got.diffs, &want.diffs);
            prop_assert_eq!(&got.newlines_before, &want.before);
            prop_assert_eq!(got.newlines_total, want.total.filter(|_| one_ended(&want.ended)));
            if got.diffs.len() < k {
                prop_assert_eq!(got.last_byte, a.last().copied());
            }
            let all = oracle(&a, &b, [0, 0], None, usize::MAX);
            let (ia, ib) = (Input::open(fa.path()).unwrap(), Input::open(fb.path()).unwrap());
            let spec = CompareSpec { inputs: [&ia, &ib], skip: [0, 0], limit: None, progress: None };
            let (seen, _) = streamed_offsets(&spec, &opts);
            let want_offsets: Vec<u64> = all.diffs.iter().map(|d| d.offset).collect();
            prop_assert_eq!(seen, want_offsets);
            let (ia, ib) = (Input::open(fa.path()).unwrap(), Input::open(fb.path()).unwrap());
            let spec = CompareSpec { inputs: [&ia, &ib], skip: [0, 0], limit: None, progress: None };
            let mut lined_before = Vec::new();
            let lined = stream_differences_with_lines(&spec, &opts, |_, nl| {
                lined_before.push(nl);
                if lined_before.len() == k { Flow::Stop } else { Flow::Continue }
            }).unwrap();
            prop_assert_eq!(&lined_before, &want.before);
            if lined_before.len() < k {
                prop_assert_eq!(lined.newlines_total, want.total);
                prop_assert_eq!(lined.last_byte, a.last().copied());
            }
        }
    }

    /// What every comparison of two files reports: the first K differences with their line
    /// numbers (speculative and streamed), every difference with its bytes, the extent, the
    /// total newlines and the last byte where they are reported.
    #[allow(clippy::type_complexity)]
    fn everything(
        paths: [&std::path::Path; 2],
        skip: [u64; 2],
        limit: Option<u64>,
        k: usize,
        opts: &EngineOptions,
    ) -> (
        (Vec<Difference>, Vec<u64>, Option<u64>, Option<u8>, Extent),
        (Vec<(u64, u8, u8)>, Extent),
        (Vec<(Difference, u64)>, Option<u64>, Option<u8>, Extent),
    ) {
        let (ia, ib) = (
            Input::open(paths[0]).unwrap(),
            Input::open(paths[1]).unwrap(),
        );
        let spec = CompareSpec {
            inputs: [&ia, &ib],
            skip,
            limit,
            progress: None,
        };
        let f = first_differences(&spec, k, Lines::Count, opts).unwrap();
        let fewer = f.diffs.len() < k;
        let first = (
            f.diffs,
            f.newlines_before,
            f.newlines_total,
            f.last_byte.filter(|_| fewer),
            if fewer {
                f.extent
            } else {
                Extent {
                    len: 0,
                    ended: vec![],
                }
            },
        );
        let mut all = Vec::new();
        let streamed = stream_differences(
            &spec,
            opts,
            |d, out| {
                out.extend_from_slice(&d.offset.to_le_bytes());
                out.extend_from_slice(&[d.a, d.b]);
            },
            |bytes| {
                all.extend(
                    bytes
                        .chunks(10)
                        .map(|c| (u64::from_le_bytes(c[..8].try_into().unwrap()), c[8], c[9])),
                );
                Flow::Continue
            },
        )
        .unwrap();
        let mut lined = Vec::new();
        let l = stream_differences_with_lines(&spec, opts, |d, nl| {
            lined.push((d, nl));
            if lined.len() == k {
                Flow::Stop
            } else {
                Flow::Continue
            }
        })
        .unwrap();
        let fewer = lined.len() < k;
        let lined = (
            lined,
            l.newlines_total
                .filter(|_| fewer && one_ended(&l.extent.ended)),
            l.last_byte.filter(|_| fewer),
            if fewer {
                l.extent
            } else {
                Extent {
                    len: 0,
                    ended: vec![],
                }
            },
        );
        (first, (all, streamed.extent), lined)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// A hole on one side only is checked against zeros, not read: every comparison of
        /// two sparse files (holes in one, the other or both, at any skip, limit and plan,
        /// non-zero bytes and newlines facing the holes) reports exactly what it reports for
        /// the same bytes written densely.
        #[test]
        fn hole_on_one_side_compares_as_the_dense_equivalent(
            pages_a in proptest::collection::vec((any::<bool>(), prop_oneof![Just(0u8), Just(b'x')]), 0..10),
            pages_b in proptest::collection::vec((any::<bool>(), prop_oneof![Just(0u8), Just(b'y')]), 0..10),
            flips_a in proptest::collection::vec((0usize..41_000, prop_oneof![Just(b'\n'), any::<u8>()]), 0..5),
            flips_b in proptest::collection::vec((0usize..41_000, prop_oneof![Just(b'\n'), any::<u8>()]), 0..5),
            skip in (0u64..6000, 0u64..6000),
            limit in proptest::option::of(0u64..45_000),
            k in 1usize..6,
            threads in -1i64..4,
            bs in prop_oneof![Just(4096usize), 1000usize..9000],
            strategy in prop_oneof![Just(Strategy::Auto), Just(Strategy::Read), Just(Strategy::Pread), Just(Strategy::Mmap)],
            stripes in any::<bool>(),
        ) {
            let (sa, a) = sparse(&pages_a, &flips_a);
            let (sb, b) = sparse(&pages_b, &flips_b);
            let (da, db) = (temp(&a), temp(&b));
            let opts = EngineOptions {
                threads: swath_engine::Threads::from_count(threads),
                block_size: Some(bs),
                strategy,
                layout: if stripes { Layout::Stripes } else { Layout::Dynamic },
            };
            let skip = [skip.0, skip.1];
            let sparse_run = everything([sa.path(), sb.path()], skip, limit, k, &opts);
            let dense_run = everything([da.path(), db.path()], skip, limit, k, &opts);
            prop_assert_eq!(&sparse_run, &dense_run);
            // And the dense run is the oracle's.
            let want = oracle(&a, &b, skip, limit, k);
            prop_assert_eq!(&dense_run.0 .0, &want.diffs);
            prop_assert_eq!(&dense_run.0 .1, &want.before);
        }
    }

    #[test]
    fn first_difference_in_a_huge_sparse_file_reads_little() {
        let fa = tempfile::NamedTempFile::new().unwrap();
        fa.as_file().set_len(1 << 33).unwrap();
        let fb = tempfile::NamedTempFile::new().unwrap();
        fb.as_file().set_len(1 << 33).unwrap();
        use std::os::unix::fs::FileExt;
        fb.as_file().write_at(b"\x01", 1000).unwrap();
        let (ia, ib) = (
            Input::open(fa.path()).unwrap(),
            Input::open(fb.path()).unwrap(),
        );
        let spec = CompareSpec {
            inputs: [&ia, &ib],
            skip: [0, 0],
            limit: None,
            progress: None,
        };
        let got = first_differences(&spec, 1, Lines::Count, &EngineOptions::default()).unwrap();
        assert_eq!(
            got.diffs,
            vec![Difference {
                offset: 1000,
                a: 0,
                b: 1
            }]
        );
        assert!(
            got.stats.blocks <= 4,
            "blocks visited: {}",
            got.stats.blocks
        );
        assert_eq!(got.newlines_before, vec![0]);
    }
}
