//! Access-log reports on all cores: the Wide Finder 2 report and a GoAccess-style summary.
//!
//! The seed's design (Bartoschek's Wide Finder 2 entry): the log is cut into chunks at line
//! boundaries (the engine's line framing), workers take chunks as they free up, each worker
//! keeps its own tables, and the tables are merged once at the end, in a report phase that
//! picks the top N of each. Tables are keyed by the bytes of the field, copied once per
//! distinct key: no allocation per line, and memory grows with the distinct keys, not with
//! the log. Each worker keeps one set of tables for every chunk it takes (the engine's
//! [`swath_engine::fold`]), so there are as many table sets as workers, whatever the number
//! of chunks.
//!
//! Compressed or piped logs are decoded or read on one thread, which hands chunks of whole
//! lines to the workers.
//!
//! A line longer than the configured bound ([`DEFAULT_MAX_LINE`] unless told) is malformed:
//! where it would have to be gathered (across chunks, from a stream) it is skipped in pieces,
//! in constant memory and linear time, and counted; a worker that meets one inside a chunk
//! counts it the same way, so the report does not depend on how the log was cut.
//!
//! The modules: [`format`] (the table of log formats, `FORMATS`, and their readers),
//! [`record`] (a request's fields and the readers they share), [`panels`] (the summary's
//! lists and panels as tables), [`headers`] (W3C `#Fields:`
//! lines in force at each block), [`tables`] (keys, counts by key, rankings), [`wf2`] and
//! [`summary`] (the two reports), [`streamed`] (reports merged from partials' sorted lists
//! in bounded memory). This file is the driver: [`LineReport`] and the readers that feed it,
//! [`report_source`] for any [`swath_engine::source::Source`].

use std::io::Read;
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;
use swath_engine::buf::PageBuf;

pub mod agents;
pub mod format;
pub mod headers;
pub mod panels;
pub mod ranged;
pub mod record;
pub mod statics;
pub mod streamed;
pub mod summary;
pub mod tables;
pub mod wf2;

pub use tables::{top, Key, Ranked, Ranking, Table, TopN};
pub use wf2::{UriStat, Wf2, Wf2Config, Wf2Top};

use crate::logs::headers::{last_in, Header, Headers};
use swath_engine::source::{Reading, Source, SourceError, Span};
use swath_engine::{
    fold_into, Access, Block, EngineError, EngineOptions, Flow, Fold, Framing, Input, LongLines,
    Plan, RunStats,
};

/// The default bound on a log line, in bytes: a longer line is malformed.
pub const DEFAULT_MAX_LINE: usize = 4 << 20;

/// A report built line by line into per-worker tables that merge.
pub trait LineReport: Default + Send {
    /// What the report needs to read a line (patterns, prefixes).
    type Config: Sync;
    /// Adds one line (without its newline).
    fn line(&mut self, config: &Self::Config, line: &[u8]);
    /// Adds another worker's tables.
    fn merge(&mut self, other: Self);
    /// A worker's tables after its last line, before they merge (see
    /// [`swath_engine::Fold::seal`]): nothing by default.
    fn seal(&mut self) {}
    /// The bound on a line (bytes before its newline): a longer one is malformed.
    fn max_line(config: &Self::Config) -> usize;
    /// Counts `n` lines longer than the bound that were skipped before reaching a worker.
    fn skipped(&mut self, n: u64);
    /// Adds every line of a block of whole lines.
    fn block(&mut self, config: &Self::Config, block: &[u8]) {
        feed(self, config, block);
    }
    /// The first bytes of a header line: a line that changes how the lines after it are
    /// read (a W3C log's `#Fields:`), when the configuration reads such lines; `None` (the
    /// default) when every line is read alike. See [`crate::logs::headers`].
    fn header(_config: &Self::Config) -> Option<&'static [u8]> {
        None
    }
    /// Adds every line of a block of whole lines, the first ones read by the header line
    /// `header` (the last one before the block in its input; `None`: none, the
    /// configuration's own format), the others by the header lines in the block.
    fn block_after(&mut self, config: &Self::Config, header: Option<&[u8]>, block: &[u8]) {
        let _ = header;
        self.block(config, block);
    }
}

/// Feeds every line of a block of whole lines to `report`.
#[inline]
fn feed<R: LineReport>(report: &mut R, config: &R::Config, block: &[u8]) {
    each_line(block, |line| report.line(config, line));
}

/// Calls `f` with every line of a block of whole lines (without its newline).
#[inline]
pub(crate) fn each_line(block: &[u8], mut f: impl FnMut(&[u8])) {
    let mut rest = block;
    while !rest.is_empty() {
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        f(line);
        rest = next;
    }
}

/// What reading one input did.
#[derive(Debug)]
pub struct InputRead {
    /// The plan and what the engine did.
    pub run: (Plan, RunStats),
    /// The size the file had grown to while it was read (a live log): the report covers
    /// the bytes it had when the read began.
    pub grew_to: Option<u64>,
}

/// What every worker of a log report reads: the report's configuration and the W3C
/// header rule (the header in force at each block's start, or carried from block to block
/// when the blocks are read in order on one thread).
struct LogRun<'a, R: LineReport> {
    config: &'a R::Config,
    headers: Option<&'a Headers>,
    in_order: bool,
    carried: Mutex<Option<Header>>,
}

/// A [`LineReport`] as the engine folds it: one per worker, merged when the run ends.
struct Blocks<'a, R>(R, std::marker::PhantomData<&'a ()>);

impl<'a, R: LineReport> Fold for Blocks<'a, R>
where
    R::Config: 'a,
{
    type Config = LogRun<'a, R>;

    fn new(_: &Self::Config) -> Self {
        Blocks(R::default(), std::marker::PhantomData)
    }

    fn block(&mut self, run: &Self::Config, b: &Block, d: &[&[u8]]) -> Flow {
        let (r, config) = (&mut self.0, run.config);
        match (R::header(config), run.headers) {
            (Some(prefix), _) if run.in_order => {
                let mut carried = run.carried.lock().unwrap_or_else(|p| p.into_inner());
                r.block_after(config, carried.as_deref(), d[0]);
                if let Some(h) = last_in(d[0], prefix, R::max_line(config)) {
                    *carried = Some(Header::from(h));
                }
            }
            (Some(_), Some(h)) => r.block_after(config, h.at(b.start), d[0]),
            _ => r.block(config, d[0]),
        }
        Flow::Continue
    }

    fn merge(&mut self, other: Self) {
        self.0.merge(other.0);
    }

    fn seal(&mut self, _: &Self::Config) {
        self.0.seal();
    }
}

/// Builds a report over all of `input` on all cores, up to the size the input had when it
/// was opened (a log that grows meanwhile is reported as such, not as an error).
///
/// On an error the lines read before it are still in `into`.
pub fn report_input<R: LineReport>(
    input: &Input,
    config: &R::Config,
    engine: &EngineOptions,
    progress: Option<&AtomicU64>,
    into: &mut R,
) -> Result<InputRead, EngineError> {
    report_span(Span::as_opened(input), config, engine, progress, into)
}

/// As [`report_input`], over the bytes of `span` only (a span of whole lines, see
/// `swath_engine::range`): a piece of a partial result.
pub fn report_span<R: LineReport>(
    span: Span<'_>,
    config: &R::Config,
    engine: &EngineOptions,
    progress: Option<&AtomicU64>,
    into: &mut R,
) -> Result<InputRead, EngineError> {
    let input = span.input;
    let skipped = AtomicU64::new(0);
    let job = span
        .job()
        .with_framing(Framing::Lines)
        .with_long_lines(LongLines::Skip {
            max: R::max_line(config),
            skipped: &skipped,
        })
        .with_progress(progress);
    let mut plan = Plan::for_job(engine, &job, Access::ComputeBound);
    // Header lines (a W3C log's `#Fields:`) govern the lines after them: each block is read
    // by the header in force at its start, found by a pre-pass over the span; a stream, or
    // a span whose header changes too often to list, is read in order on one thread, the
    // header carried from block to block (see `crate::logs::headers`).
    let max = R::max_line(config);
    let offset = job.regions[0].offset;
    let headers = match (R::header(config), job.limit) {
        (Some(prefix), Some(len)) if input.is_seekable() => {
            Some(Headers::find(input, offset, len, prefix, max)?)
        }
        _ => None,
    };
    let in_order =
        R::header(config).is_some() && headers.as_ref().is_none_or(|h| h.changes.is_none());
    if in_order {
        plan.method = swath_engine::Method::Read;
        plan.threads = 1;
    }
    let run = LogRun {
        config,
        headers: headers.as_ref(),
        in_order,
        carried: Mutex::new(headers.as_ref().and_then(|h| h.start.clone())),
    };
    let mut blocks = Blocks(std::mem::take(into), std::marker::PhantomData);
    let result = fold_into(&plan, &job, &(), &run, &mut blocks);
    *into = blocks.0;
    into.skipped(skipped.into_inner());
    let grown = |before: u64, after: u64| after > before && input.len() <= Some(before);
    match result {
        Ok(stats) => {
            // The sequential path stops at the size it had at the start, unasked.
            let now = input.current_size()?;
            let grew_to = input
                .len()
                .map(|l| l + input.base())
                .filter(|&l| now > l)
                .map(|_| now);
            Ok(InputRead {
                run: (plan, stats),
                grew_to,
            })
        }
        // Every block up to the size at the start was read: the log grew, as live logs do.
        Err(EngineError::Changed { before, after, .. }) if grown(before, after) => {
            let len = input.len().unwrap_or(0);
            let stats = RunStats {
                extent: swath_engine::Extent {
                    len,
                    ended: vec![false],
                },
                blocks: len.div_ceil(plan.block_size.max(1) as u64),
                stopped_early: false,
            };
            Ok(InputRead {
                run: (plan, stats),
                grew_to: Some(after),
            })
        }
        Err(e) => Err(e),
    }
}

/// What reading one source did.
#[derive(Debug, Default)]
pub struct SourceRead {
    /// The plan and what the engine did, for a file read in blocks.
    pub run: Option<(Plan, RunStats)>,
    /// A file that grew while read (a live log), read up to the size it had when opened:
    /// that size, and the size it grew to.
    pub grew: Option<(u64, u64)>,
}

/// Builds a report over `source`, however its bytes come: a file's blocks on all cores
/// ([`report_span`], `progress` counting them), a stream or a decompressed source read on
/// one thread while every core parses ([`report_reader`]), a followed file's new whole
/// lines (the header in force carried from one read to the next).
///
/// On an error the lines read before it are still in `into`.
pub fn report_source<R: LineReport>(
    source: &mut Source<'_>,
    config: &R::Config,
    engine: &EngineOptions,
    progress: Option<&AtomicU64>,
    into: &mut R,
) -> Result<SourceRead, SourceError> {
    let workers = swath_engine::sysinfo::cores();
    match source.reading()? {
        Reading::Blocks(span) => {
            let read = report_span(span, config, engine, progress, into)?;
            Ok(SourceRead {
                run: Some(read.run),
                grew: read.grew_to.map(|now| (span.input.len().unwrap_or(0), now)),
            })
        }
        Reading::Stream {
            mut reader,
            namer,
            file,
        } => {
            report_reader(&mut reader, config, workers, 1 << 20, into)
                .map_err(|e| namer.error(e))?;
            // Read up to the size the file had when it was opened.
            let grew = file.and_then(|input| {
                let size = input.len().unwrap_or(0);
                let now = input.current_size().ok()?;
                (now > size).then_some((size, now))
            });
            Ok(SourceRead { run: None, grew })
        }
        Reading::Followed(f) => {
            let name = f.path().to_path_buf();
            let polled = f.poll(&mut |part, header| {
                report_reader_after(part, config, workers, 1 << 20, into, header).map(drop)
            });
            match polled {
                Ok(Ok(())) => Ok(SourceRead::default()),
                Ok(Err(why)) => Err(SourceError::Refused { name, why }),
                Err(cause) => Err(SourceError::Read { name, cause }),
            }
        }
    }
}

/// Builds a report from a byte stream (a gzip decoder, a pipe): one thread reads chunks of
/// whole lines, `workers` threads add them to their own tables. A line longer than the
/// bound is skipped as it streams by, never gathered.
///
/// On an error the lines read before it are still in `into`.
pub fn report_reader<R: LineReport>(
    reader: &mut (dyn Read + Send),
    config: &R::Config,
    workers: usize,
    chunk: usize,
    into: &mut R,
) -> std::io::Result<u64> {
    report_reader_after(reader, config, workers, chunk, into, &mut None)
}

/// [`report_reader`] of a stream that goes on from where an earlier one ended (a log
/// followed as it grows): `header` is the header line in force at the stream's start (see
/// [`LineReport::header`]; `None`: none), and becomes the one in force at its end.
pub fn report_reader_after<R: LineReport>(
    reader: &mut (dyn Read + Send),
    config: &R::Config,
    workers: usize,
    chunk: usize,
    into: &mut R,
    header: &mut Option<Header>,
) -> std::io::Result<u64> {
    let workers = workers.max(1);
    let chunk = chunk.max(1);
    let max = R::max_line(config);
    let prefix = R::header(config);
    // Each chunk goes with the header in force at its start.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Option<Header>, PageBuf)>(workers * 2);
    let rx = Mutex::new(rx);
    // Parsed chunks' buffers come back to be read into again: no allocation, zeroing or
    // page faults per chunk once the pipeline is full.
    let (back_tx, back_rx) = std::sync::mpsc::sync_channel::<PageBuf>(workers * 2 + 2);
    let recycled = || {
        let mut b = back_rx.try_recv().unwrap_or_default();
        b.clear();
        b
    };
    let results: Mutex<Vec<R>> = Mutex::new(Vec::new());
    let mut total = 0u64;
    let mut long = 0u64;
    let read_result = std::thread::scope(|s| {
        let mut spawned = 0;
        for _ in 0..workers {
            let started = std::thread::Builder::new().spawn_scoped(s, || {
                let mut r = R::default();
                loop {
                    let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                    match next {
                        Ok((h, buf)) => {
                            r.block_after(config, h.as_deref(), &buf);
                            let _ = back_tx.try_send(buf);
                        }
                        Err(_) => break,
                    }
                }
                // Each worker's end work (sorting its lists) on its own thread, as the
                // engine's blocks have it, not one after another in the merge below.
                r.seal();
                results.lock().unwrap_or_else(|p| p.into_inner()).push(r);
            });
            spawned += usize::from(started.is_ok());
        }
        // No worker thread could be had (no memory for a stack): this thread parses too.
        let mut inline = (spawned == 0).then(R::default);
        let mut send = |buf: PageBuf| {
            let at_start = header.clone();
            if let Some(h) = prefix.and_then(|p| last_in(&buf, p, max)) {
                *header = Some(Header::from(h));
            }
            match inline.as_mut() {
                Some(r) => {
                    r.block_after(config, at_start.as_deref(), &buf);
                    let _ = back_tx.try_send(buf);
                    true
                }
                None => tx.send((at_start, buf)).is_ok(),
            }
        };
        // `carry` is the partial line after the last newline; while `skipping`, the bytes
        // read are the rest of a long line, up to its newline.
        let mut carry = PageBuf::new();
        let mut skipping = false;
        let result = loop {
            let mut buf = if carry.is_empty() {
                recycled()
            } else {
                std::mem::take(&mut carry)
            };
            let old = buf.len();
            buf.resize(old + chunk);
            let (got, err) = read_full(reader, &mut buf[old..]);
            total += got as u64;
            buf.truncate(old + got);
            if let Some(e) = err {
                // The whole lines read before the error still count (`--partial`); the
                // line the error cut does not.
                if !skipping {
                    if let Some(i) = memchr::memrchr(b'\n', &buf) {
                        buf.truncate(i + 1);
                        send(buf);
                    }
                }
                break Err(e);
            }
            // Bytes of `buf` before `scan` hold no newline.
            let mut scan = old;
            if skipping {
                match memchr::memchr(b'\n', &buf) {
                    Some(i) => {
                        let rest = buf.len() - (i + 1);
                        buf.copy_within(i + 1.., 0);
                        buf.truncate(rest);
                        skipping = false;
                        scan = 0;
                    }
                    None if got == 0 => break Ok(()),
                    None => {
                        buf.clear();
                        carry = buf;
                        continue;
                    }
                }
            }
            if got == 0 {
                if !buf.is_empty() && !send(buf) {
                    break Ok(());
                }
                break Ok(());
            }
            match memchr::memrchr(b'\n', &buf[scan..]) {
                Some(i) => {
                    carry = recycled();
                    carry.extend_from_slice(&buf[scan + i + 1..]);
                    buf.truncate(scan + i + 1);
                    if !send(buf) {
                        break Ok(());
                    }
                }
                None if buf.len() > max => {
                    // A long line: skip the rest of it as it comes.
                    long += 1;
                    skipping = true;
                    buf.clear();
                    carry = buf;
                }
                None => carry = buf,
            }
        };
        if let Some(r) = inline {
            results.lock().unwrap_or_else(|p| p.into_inner()).push(r);
        }
        drop(tx);
        result
    });
    for r in results.into_inner().unwrap_or_else(|p| p.into_inner()) {
        into.merge(r);
    }
    into.skipped(long);
    read_result?;
    Ok(total)
}

/// Fills `buf` as far as the reader goes: the bytes read, and the error that ended it early.
fn read_full(r: &mut (dyn Read + Send), buf: &mut [u8]) -> (usize, Option<std::io::Error>) {
    let mut done = 0;
    while done < buf.len() {
        match r.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return (done, Some(e)),
        }
    }
    (done, None)
}

#[cfg(test)]
mod tests {
    use super::tables::add;
    use super::*;
    use crate::logs::summary::{Summary, SummaryConfig};
    use proptest::prelude::*;
    use std::io::Write;
    use swath_engine::{Layout, Strategy};

    fn line_of(i: u32) -> Vec<u8> {
        let uri = match i % 5 {
            0 => format!(
                "/ongoing/When/200x/2007/0{}/1{}/T{}",
                i % 9 + 1,
                i % 10,
                i % 7
            ),
            1 => "/ongoing/ongoing.atom".to_string(),
            2 => format!("/x{}.png", i % 4),
            3 => "/ongoing/When/200x/2007/01/01/a.b".to_string(),
            _ => format!("/missing/{}", i % 3),
        };
        let status = ["200", "304", "404", "301", "200"][(i % 5) as usize];
        let method = if i.is_multiple_of(11) {
            "\"HEAD"
        } else {
            "\"GET"
        };
        let refr = match i % 4 {
            0 => "\"-\"".to_string(),
            1 => format!("\"http://r{}/\"", i % 3),
            2 => "\"http://www.tbray.org/ongoing/x\"".to_string(),
            _ => "\"http://s/\"".to_string(),
        };
        if i.is_multiple_of(13) {
            return b"short line".to_vec();
        }
        format!(
            "10.0.0.{} - - [10/Oct/2007:13:55:36 -0700] {method} {uri} HTTP/1.1\" {status} {} {refr} \"UA\"",
            i % 6,
            if i.is_multiple_of(7) { "-".to_string() } else { (i * 37).to_string() }
        )
        .into_bytes()
    }

    fn wf2_sequential(data: &[u8]) -> Wf2 {
        wf2_sequential_with(data, &Wf2Config::default())
    }

    fn wf2_sequential_with(data: &[u8], c: &Wf2Config) -> Wf2 {
        let mut r = Wf2::default();
        feed(&mut r, c, data);
        r
    }

    fn sorted<T: Ranked + ?Sized>(t: &T) -> Vec<(Vec<u8>, u64)> {
        let mut v: Vec<(Vec<u8>, u64)> = t.entries().map(|(k, c)| (k.to_vec(), c)).collect();
        v.sort();
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn tables_do_not_depend_on_the_plan(
            n in 0u32..400,
            threads in -1i64..4,
            bs in prop_oneof![1usize..50, 100usize..5000],
            strategy in prop_oneof![Just(Strategy::Read), Just(Strategy::Pread), Just(Strategy::Mmap)],
            final_newline in any::<bool>(),
        ) {
            let mut data = Vec::new();
            for i in 0..n {
                data.extend_from_slice(&line_of(i));
                data.push(b'\n');
            }
            if !final_newline {
                data.pop();
            }
            let mut f = tempfile::NamedTempFile::new().unwrap();
            f.write_all(&data).unwrap();
            let input = Input::open(f.path()).unwrap();
            let opts = EngineOptions { threads: swath_engine::Threads::from_count(threads), block_size: Some(bs), strategy, layout: Layout::Dynamic };
            let mut par = Wf2::default();
            report_input(&input, &Wf2Config::default(), &opts, None, &mut par).unwrap();
            let seq = wf2_sequential(&data);
            prop_assert_eq!(par.malformed, seq.malformed);
            prop_assert_eq!(sorted(&par.hits()), sorted(&seq.hits()));
            prop_assert_eq!(sorted(&par.bytes()), sorted(&seq.bytes()));
            prop_assert_eq!(sorted(&par.not_found()), sorted(&seq.not_found()));
            prop_assert_eq!(sorted(&par.clients), sorted(&seq.clients));
            prop_assert_eq!(sorted(&par.referrers), sorted(&seq.referrers));
            let mut streamed = Wf2::default();
            report_reader(&mut &data[..], &Wf2Config::default(), 3, bs.max(1), &mut streamed).unwrap();
            prop_assert_eq!(sorted(&streamed.hits()), sorted(&seq.hits()));
            prop_assert_eq!(streamed.malformed, seq.malformed);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        /// Lines over the bound are malformed wherever they fall (inside a block, across
        /// blocks, across a stream's chunks), and lines under it count as they did before
        /// there was a bound.
        #[test]
        fn long_lines_are_malformed_and_short_ones_count_as_before(
            n in 0u32..200,
            long_every in 2u32..9,
            long_len in 0usize..3000,
            max_line in 150usize..1200,
            bs in prop_oneof![1usize..50, 100usize..5000],
            strategy in prop_oneof![Just(Strategy::Read), Just(Strategy::Pread), Just(Strategy::Mmap)],
            threads in 1i64..4,
        ) {
            let mut data = Vec::new();
            let mut short = Vec::new();
            let mut long = 0u64;
            for i in 0..n {
                let mut l = line_of(i);
                if i % long_every == 0 {
                    l.extend(std::iter::repeat_n(b'x', long_len));
                }
                if l.len() > max_line {
                    long += 1;
                } else {
                    short.extend_from_slice(&l);
                    short.push(b'\n');
                }
                data.extend_from_slice(&l);
                data.push(b'\n');
            }
            let mut f = tempfile::NamedTempFile::new().unwrap();
            f.write_all(&data).unwrap();
            let input = Input::open(f.path()).unwrap();
            let opts = EngineOptions { threads: swath_engine::Threads::from_count(threads), block_size: Some(bs), strategy, layout: Layout::Dynamic };
            let bounded = Wf2Config { max_line, ..Wf2Config::default() };
            let unbounded = Wf2Config { max_line: usize::MAX, ..Wf2Config::default() };
            // The short lines alone, with no bound: what the report said before.
            let before = wf2_sequential_with(&short, &unbounded);
            let mut par = Wf2::default();
            report_input(&input, &bounded, &opts, None, &mut par).unwrap();
            let mut streamed = Wf2::default();
            report_reader(&mut &data[..], &bounded, 3, bs, &mut streamed).unwrap();
            for got in [&par, &streamed] {
                prop_assert_eq!(got.malformed, before.malformed + long);
                prop_assert_eq!(sorted(&got.hits()), sorted(&before.hits()));
                prop_assert_eq!(sorted(&got.bytes()), sorted(&before.bytes()));
                prop_assert_eq!(sorted(&got.not_found()), sorted(&before.not_found()));
                prop_assert_eq!(sorted(&got.clients), sorted(&before.clients));
                prop_assert_eq!(sorted(&got.referrers), sorted(&before.referrers));
            }
            // With every line under the bound, the bound changes nothing.
            let mut all = Wf2::default();
            let roomy = Wf2Config::default();
            report_input(&input, &roomy, &opts, None, &mut all).unwrap();
            let reference = wf2_sequential_with(&data, &unbounded);
            prop_assert_eq!(all.malformed, reference.malformed);
            prop_assert_eq!(sorted(&all.hits()), sorted(&reference.hits()));
            prop_assert_eq!(sorted(&all.clients), sorted(&reference.clients));
        }
    }

    /// The fields of a W3C test log, in the order of the reference's one header.
    const W3C_ORDER: [&str; 9] = [
        "date",
        "time",
        "c-ip",
        "cs-method",
        "cs-uri-stem",
        "sc-status",
        "sc-bytes",
        "cs(User-Agent)",
        "time-taken",
    ];

    /// Request `i` of a W3C test log, its fields written in the order `order` (indices
    /// into [`W3C_ORDER`]).
    fn w3c_record(i: u32, order: &[usize]) -> String {
        let values = [
            format!("2024-03-0{}", 1 + i % 3),
            format!("{:02}:{:02}:{:02}", i % 24, i % 60, i % 59),
            format!("10.0.{}.{}", i % 3, i % 7),
            ["GET", "POST", "HEAD"][(i % 3) as usize].to_string(),
            format!("/p{}.html", i % 11),
            ["200", "404", "302", "500"][(i % 4) as usize].to_string(),
            (i * 37 % 5000).to_string(),
            format!("Agent/{}+(X{})", i % 5, i % 2),
            (i % 90).to_string(),
        ];
        order
            .iter()
            .map(|&k| values[k].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn w3c_header(order: &[usize]) -> String {
        let names: Vec<&str> = order.iter().map(|&k| W3C_ORDER[k]).collect();
        format!("#Fields: {}", names.join(" "))
    }

    /// One piece of a W3C test log with header changes.
    #[derive(Debug, Clone)]
    enum W3cPiece {
        /// A `#Fields:` line with the fields in another order (a permutation's seed).
        Header(u64),
        /// A `#Fields:` line that names no `sc-status`: the lines under it are malformed.
        Unusable,
        /// A `#Fields:` line longer than the bound on lines: malformed, and not followed.
        LongHeader(u64),
        /// A comment.
        Comment,
        /// This many requests, in the order in force.
        Records(u32),
    }

    fn w3c_piece() -> impl proptest::strategy::Strategy<Value = W3cPiece> {
        use proptest::strategy::Strategy as _;
        prop_oneof![
            any::<u64>().prop_map(W3cPiece::Header),
            Just(W3cPiece::Unusable),
            any::<u64>().prop_map(W3cPiece::LongHeader),
            Just(W3cPiece::Comment),
            (0u32..40).prop_map(W3cPiece::Records),
        ]
    }

    /// A permutation of the W3C fields from a seed.
    fn w3c_permutation(mut seed: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..W3C_ORDER.len()).collect();
        for i in (1..order.len()).rev() {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            order.swap(i, (seed >> 33) as usize % (i + 1));
        }
        order
    }

    /// A W3C log of `pieces` (its header changing as they say), and the same requests
    /// under one header, as the reference: a malformed line where the log has one.
    fn w3c_logs(pieces: &[W3cPiece], max_line: usize) -> (Vec<u8>, Vec<u8>) {
        let first: Vec<usize> = (0..W3C_ORDER.len()).collect();
        let (mut log, mut one) = (String::new(), String::new());
        log += &format!(
            "#Software: Microsoft Internet Information Services 10.0\n{}\n",
            w3c_header(&first)
        );
        one += &format!("{}\n", w3c_header(&first));
        let mut in_force = Some(first.clone());
        let mut i = 0;
        for p in pieces {
            match p {
                W3cPiece::Header(seed) => {
                    let order = w3c_permutation(*seed);
                    log += &format!("{}\n", w3c_header(&order));
                    in_force = Some(order);
                }
                W3cPiece::Unusable => {
                    log += "#Fields: date time c-ip cs-uri-stem\n";
                    in_force = None;
                }
                W3cPiece::LongHeader(seed) => {
                    let mut h = w3c_header(&w3c_permutation(*seed));
                    while h.len() <= max_line {
                        h += " x-pad";
                    }
                    log += &format!("{h}\n");
                    one += &format!("{}\n", "x".repeat(h.len()));
                }
                W3cPiece::Comment => {
                    log += "#Date: 2024-03-01 00:00:00\n";
                    one += "#Date: 2024-03-01 00:00:00\n";
                }
                W3cPiece::Records(n) => {
                    for _ in 0..*n {
                        i += 1;
                        match &in_force {
                            Some(order) => {
                                log += &format!("{}\n", w3c_record(i, order));
                                one += &format!("{}\n", w3c_record(i, &first));
                            }
                            None => {
                                log += &format!("{}\n", w3c_record(i, &first));
                                one += "not a request\n";
                            }
                        }
                    }
                }
            }
        }
        (log.into_bytes(), one.into_bytes())
    }

    fn w3c_config(head: &[u8], max_line: usize) -> SummaryConfig {
        SummaryConfig {
            max_line,
            format: crate::logs::format::Format::named("w3c", head).unwrap(),
            ..SummaryConfig::default()
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// A W3C log whose `#Fields:` line changes (other orders, a header that names no
        /// status, a header over the bound, which is not followed) reads as the same
        /// requests under one header, however it is read: blocks of any size on any number
        /// of threads, a stream in chunks, a stream read on from where it stopped (a follow),
        /// two ranges merged.
        #[test]
        fn w3c_fields_lines_govern_the_lines_after_them(
            pieces in proptest::collection::vec(w3c_piece(), 0..12),
            threads in 1i64..4,
            bs in prop_oneof![1usize..50, 100usize..5000],
            strategy in prop_oneof![Just(Strategy::Read), Just(Strategy::Pread), Just(Strategy::Mmap)],
            cut in 0.0f64..1.0,
        ) {
            let max_line = 300;
            let (log, one) = w3c_logs(&pieces, max_line);
            let config = w3c_config(&log, max_line);
            let exts = crate::logs::summary::default_static();
            let exts = crate::logs::summary::Statics::new(&exts, config.format.name());
            let mut reference = Summary::default();
            reference.block(&w3c_config(&one, max_line), &one);
            let want = reference.ranked(1000, exts);
            let mut f = tempfile::NamedTempFile::new().unwrap();
            f.write_all(&log).unwrap();
            let input = Input::open(f.path()).unwrap();
            let opts = EngineOptions { threads: swath_engine::Threads::from_count(threads), block_size: Some(bs), strategy, layout: Layout::Dynamic };
            let mut par = Summary::default();
            report_input(&input, &config, &opts, None, &mut par).unwrap();
            prop_assert_eq!(par.ranked(1000, exts), want.clone(), "blocks");
            let mut streamed = Summary::default();
            report_reader(&mut &log[..], &config, 3, bs, &mut streamed).unwrap();
            prop_assert_eq!(streamed.ranked(1000, exts), want.clone(), "a stream");
            // Two ranges, each read on its own, merged.
            let at = (log.len() as f64 * cut) as u64;
            let mut merged = Summary::default();
            for (a, b) in [(0, at), (at, u64::MAX)] {
                let span = Span::cut(&input, a, b, b'\n').unwrap();
                let mut piece = Summary::default();
                report_span(span, &config, &opts, None, &mut piece).unwrap();
                merged.merge(piece);
            }
            prop_assert_eq!(merged.ranked(1000, exts), want.clone(), "two ranges");
            // A stream read in two goes, the header carried from one to the other.
            let split = log[..at as usize].iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
            let mut followed = Summary::default();
            let mut header = None;
            for part in [&log[..split], &log[split..]] {
                report_reader_after(&mut &part[..], &config, 2, bs, &mut followed, &mut header).unwrap();
            }
            prop_assert_eq!(followed.ranked(1000, exts), want, "a stream in two");
        }
    }

    /// Past `headers::MAX_CHANGES` changes of the header, the changes are not listed: the log
    /// is read in order on one thread, and still reads as under one header.
    #[test]
    fn a_log_of_many_header_changes_reads_in_order() {
        let n = crate::logs::headers::MAX_CHANGES as u32 + 10;
        let pieces: Vec<W3cPiece> = (0..n)
            .flat_map(|i| [W3cPiece::Header(u64::from(i % 2)), W3cPiece::Records(1)])
            .collect();
        let (log, one) = w3c_logs(&pieces, DEFAULT_MAX_LINE);
        let config = w3c_config(&log, DEFAULT_MAX_LINE);
        let exts = crate::logs::summary::default_static();
        let exts = crate::logs::summary::Statics::new(&exts, config.format.name());
        let mut reference = Summary::default();
        reference.block(&w3c_config(&one, DEFAULT_MAX_LINE), &one);
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&log).unwrap();
        let input = Input::open(f.path()).unwrap();
        let found = crate::logs::headers::Headers::find(
            &input,
            0,
            log.len() as u64,
            b"#Fields:",
            DEFAULT_MAX_LINE,
        )
        .unwrap();
        assert!(
            found.changes.is_none(),
            "more changes than are listed: {:?}",
            found.changes.as_ref().map(Vec::len)
        );
        let opts = EngineOptions {
            threads: swath_engine::Threads::Count(2),
            block_size: Some(4096),
            strategy: Strategy::Pread,
            layout: Layout::Dynamic,
        };
        let mut par = Summary::default();
        report_input(&input, &config, &opts, None, &mut par).unwrap();
        assert_eq!(par.ranked(1000, exts), reference.ranked(1000, exts));
        assert_eq!(par.requests(), u64::from(n));
    }

    #[test]
    fn long_line_in_a_stream_is_skipped_not_gathered() {
        // A reader that hands out 256 MiB with no newline, then one good line: the skipped
        // line is never gathered (the reader would otherwise need 256 MiB, and with the old
        // carry a rescan per chunk: quadratic time).
        struct Zeros(u64, &'static [u8]);
        impl Read for Zeros {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.0 > 0 {
                    let n = (buf.len() as u64).min(self.0) as usize;
                    buf[..n].fill(0);
                    self.0 -= n as u64;
                    return Ok(n);
                }
                let n = buf.len().min(self.1.len());
                buf[..n].copy_from_slice(&self.1[..n]);
                self.1 = &self.1[n..];
                Ok(n)
            }
        }
        let tail: &'static [u8] =
            b"\n1.2.3.4 - - [10/Oct/2007:13:55:36 -0700] \"GET /a HTTP/1.1\" 404 1 \"-\" \"UA\"\n";
        let mut r = Wf2::default();
        let total = report_reader(
            &mut Zeros(256 << 20, tail),
            &Wf2Config::default(),
            2,
            1 << 20,
            &mut r,
        )
        .unwrap();
        assert_eq!(total, (256 << 20) + tail.len() as u64);
        assert_eq!(r.malformed, 1);
        assert_eq!(sorted(&r.not_found()), vec![(b"/a".to_vec(), 1)]);
    }

    #[test]
    fn uri_stats_survive_the_arena() {
        use crate::counts::Tally;
        for st in [
            UriStat::default(),
            UriStat {
                bytes: u64::MAX,
                hits: 1,
                not_found: 1 << 40,
                fetched: true,
            },
            UriStat {
                bytes: 7,
                hits: u64::MAX - 1,
                not_found: 0,
                fetched: false,
            },
        ] {
            let mut b = [0xa5u8; UriStat::SIZE];
            st.store(&mut b);
            let back = UriStat::load(&b);
            assert_eq!(
                (back.bytes, back.hits, back.not_found, back.fetched),
                (st.bytes, st.hits, st.not_found, st.fetched)
            );
        }
    }

    #[test]
    fn states_written_from_the_hash_tables_rebuild_the_report() {
        let (mut w, mut s) = (Wf2::default(), Summary::default());
        let (wc, sc) = (Wf2Config::default(), SummaryConfig::default());
        for i in 0..3000 {
            let l = line_of(i);
            w.line(&wc, &l);
            s.line(&sc, &l);
        }
        use crate::report::{GrepCount, LogSummary, LogWf2, Partial, PieceOf, Report};
        // Report -> bytes -> tables -> report -> bytes: the same bytes, so the state holds
        // every table in full and the tables rebuild the report.
        let of = PieceOf {
            options: b"o",
            index: 2,
            name: b"f",
            len: 9,
            offset: 0,
        };
        fn bytes<R: Report>(of: &PieceOf<'_>, encode: &dyn Fn(&mut Vec<u8>)) -> Vec<u8> {
            let mut state = Vec::new();
            encode(&mut state);
            Partial::<R>::piece_bytes(of, (0, 9), state)
        }
        fn back<R: Report>(b: &[u8]) -> R::State {
            let p = Partial::<R>::from_bytes(b).unwrap();
            p.inputs[&(2, b"f".to_vec())].whole().unwrap()
        }
        let wb = bytes::<LogWf2>(&of, &|o| w.encode_state(o));
        let t = back::<LogWf2>(&wb);
        assert_eq!(
            bytes::<LogWf2>(&of, &|o| Wf2::from_tables(&t).encode_state(o)),
            wb
        );
        assert!(!t.uris.is_empty() && !t.clients.is_empty());
        let sb = bytes::<LogSummary>(&of, &|o| s.encode_state(o));
        let t = back::<LogSummary>(&sb);
        assert_eq!(
            bytes::<LogSummary>(&of, &|o| Summary::from_tables(&t).encode_state(o)),
            sb
        );
        assert_eq!(t.numbers[0], s.requests());
        // Read lazily: the state's bytes as written.
        fn lazily<R: Report>(of: &PieceOf<'_>, bytes: &[u8]) {
            let (shape, raw) = Partial::<R>::from_bytes_lazy(bytes).unwrap();
            assert_eq!(shape.inputs.len(), 1);
            assert_eq!(raw.len(), 1);
            assert_eq!(
                Partial::<R>::piece_bytes(of, (0, 9), raw[0].to_vec()),
                *bytes
            );
        }
        lazily::<LogWf2>(&of, &wb);
        lazily::<LogSummary>(&of, &sb);
        // An empty piece of a non-empty input is not kept, as `piece` keeps it.
        let of = PieceOf { index: 0, ..of };
        assert_eq!(
            Partial::<GrepCount>::piece_bytes(&of, (4, 4), 0u64.to_le_bytes().to_vec()),
            Partial::<GrepCount>::piece(b"o".to_vec(), 0, b"f".to_vec(), 9, (4, 4), 0).to_bytes()
        );
    }

    #[test]
    fn top_orders_by_count_then_key() {
        let mut t = Table::default();
        for (k, v) in [("b", 2), ("a", 2), ("c", 5), ("d", 1)] {
            add(&mut t, k.as_bytes(), v);
        }
        let got: Vec<(&[u8], u64)> = top(&t, 3);
        assert_eq!(got, vec![(&b"c"[..], 5), (&b"a"[..], 2), (&b"b"[..], 2)]);
        assert!(top(&t, 0).is_empty());
        assert_eq!(top(&t, 10).len(), 4);
    }
}
