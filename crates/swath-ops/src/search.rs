//! grep over one input on all cores: selected lines in file order, counts, or "is there one".
//!
//! The input is cut into blocks of whole lines (the engine's line framing), each searched by a
//! worker with the [`Matcher`]; results come back in file order through the engine's ordered
//! merge, so line numbers are the lines of the blocks before plus those within the block.
//! Counting without a limit and "is there a match" skip the ordered merge: counts are summed
//! as blocks finish, and the first match anywhere stops every worker.
//!
//! Binary input follows GNU grep 3.8. Without `-a`, the file turns binary at the first NUL
//! byte, from the start of the 96 KiB read buffer GNU would have seen it in ([`GNU_BUFFER`]):
//! lines ending before that point are text; after it nothing is printed, the first selected
//! line ends the search with "binary file matches", and NUL bytes separate lines as newlines
//! do. In a multibyte locale (UTF-8 or another) a line (or, with `-o`, a match) about to be
//! printed that is not valid text in its encoding does the same. Because the turn can happen up to one buffer before the NUL, a block's
//! lines are handed on only once the blocks up to a buffer past them have been seen.
//!
//! Context lines (`-A`, `-B`, `-C`) follow GNU grep 3.8's `prtext`/`prpending`: each worker
//! keeps, besides its selected lines, the lines within the context distances of them and the
//! first `after` and last `before` lines of its block (a neighbouring block's selected line
//! may need them); the consumer then walks those lines in file order as GNU's single pass
//! does, so a context line is printed once whatever the block seams, and a group separator
//! goes wherever the output is not adjacent in the file.
//!
//! Every search takes the holes of a sparse file as zero runs (except with `-a`, where a hole
//! is part of one long line): with NULs ending lines, a run of `n` zeros is `n` empty lines
//! past the binary turn, all selected or none, decided once.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use memchr::memchr;
use swath_engine::source::Span;
use swath_engine::{
    fold, is_zero_run, run_blocks, run_ordered, Access, Block, EngineError, EngineOptions, Flow,
    Fold, Framing, Job, LongLines, Plan, RunStats,
};
use swath_grep::search::{count_selected, for_each_selected, Matcher};

/// GNU grep's read size: a NUL makes the file binary from the buffer it is read in.
pub const GNU_BUFFER: u64 = 96 * 1024;

/// What the caller wants from the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every selected line (or match, with `only_matching`), in order.
    Print,
    /// How many lines are selected.
    Count,
    /// Whether any line is selected (`-q`, `-l`, `-L`).
    Exists,
}

/// How files with NUL bytes are treated (`--binary-files`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    /// GNU's default: "binary file matches" instead of the lines.
    Binary,
    /// `-a`: as text.
    Text,
    /// `-I`: a binary file matches nothing.
    WithoutMatch,
}

/// Options of one search.
#[derive(Debug, Clone, Copy)]
pub struct SearchOptions {
    /// What to produce.
    pub mode: Mode,
    /// Select the lines that do not match (`-v`).
    pub invert: bool,
    /// Stop after this many selected lines (`-m`; `u64::MAX` for no limit).
    pub max_count: u64,
    /// Binary file handling.
    pub binary: Binary,
    /// Lines (with `only_matching`, matches) that are not text in the matcher's encoding
    /// count as binary ([`Matcher::encoding_error`]): GNU's rule in a multibyte locale
    /// (UTF-8 or another).
    pub check_encoding: bool,
    /// Line numbers are wanted (`-n`).
    pub line_numbers: bool,
    /// Match positions within lines are wanted (`-o`, colour).
    pub matches: bool,
    /// `-o`: only the matches are printed, so only they must be valid text.
    pub only_matching: bool,
    /// A line read from a stream (a pipe, a terminal) with more bytes than this ends the
    /// search with [`EngineError::LineTooLong`]: the engine does not gather more of one
    /// line. Regular files are not bound (long lines are mapped, not gathered).
    pub max_line: usize,
    /// Context lines (`-B`, `-A`; `Some` when either was given, even as 0: GNU then prints
    /// group separators). Only [`Mode::Print`] prints them.
    pub context: Option<Context>,
}

/// Lines of context around each selected line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// Lines before (`-B`).
    pub before: u64,
    /// Lines after (`-A`).
    pub after: u64,
}

/// The default of [`SearchOptions::max_line`]: 64 MiB.
pub const DEFAULT_MAX_LINE: usize = 64 << 20;

/// What a search in [`Mode::Print`] hands to the caller, in file order.
#[derive(Debug)]
pub enum Event<'a> {
    /// A line to print: selected, or (with context) a context line.
    Line(Selected<'a>),
    /// With context: the group separator (`--`) goes here, before output that is not
    /// adjacent to the last output in the file. When `first_in_file`, nothing has been
    /// printed from this file yet, and GNU prints it only when something was printed (or a
    /// line selected) in an earlier file.
    Separator {
        /// No earlier group in this file.
        first_in_file: bool,
    },
}

/// One line to print, handed to the caller in file order.
#[derive(Debug)]
pub struct Selected<'a> {
    /// Line number (1-based; meaningful only when line numbers were asked for).
    pub number: u64,
    /// Offset of the line's first byte in the input.
    pub offset: u64,
    /// The line, without its newline.
    pub line: &'a [u8],
    /// Non-empty matches within the line (when asked for), in order. A context line has
    /// them only with `-v` (where context lines are the matching ones).
    pub matches: &'a [Range<usize>],
    /// A context line (GNU's `-` separator), not a selected one.
    pub context: bool,
    /// The line ends with a line end; false only for a last line the input ends without
    /// one (JSON output shows the line with its end, as ripgrep's does).
    pub terminated: bool,
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    /// Selected lines (capped by the limit); what grep's exit status and `-c` report.
    pub selected: u64,
    /// The search ended because the input is binary and a line was selected.
    pub binary_matched: bool,
    /// With a limit that was reached: the offset just past the last selected line, where
    /// GNU grep leaves a shared standard input for the next reader.
    pub resume_at: Option<u64>,
    /// The plan and what the engine did.
    pub run: Option<(Plan, RunStats)>,
    /// A line was selected and handed on for output (printed, or hidden as not text, or
    /// the binary file's first): after it GNU prints a group separator before the next
    /// file's context output.
    pub used: bool,
    /// With lines printed (`Mode::Print`): the offset from which the input was taken as
    /// binary (GNU's rule: the start of the 32 KiB buffer holding its first NUL), if it was.
    pub binary_from: Option<u64>,
}

/// A selected line as a worker found it.
#[derive(Debug)]
struct Hit {
    /// Offsets (in the input) of the line's first byte and of its end (the newline).
    start: u64,
    end: u64,
    /// Newlines in the block before this line.
    rel: u64,
    /// The line's bytes in the block's `text` (empty for lines past a NUL).
    text: Range<usize>,
    /// Its matches in the block's `ranges`.
    matches: Range<usize>,
    /// Not valid text in a UTF-8 locale: the line (or with `-o`, its matches from the first
    /// that is not text on, which were left out of `matches`) must not be printed.
    bad: bool,
    /// Past the block's first NUL buffer: never printed.
    zapped: bool,
}

/// One block's findings.
#[derive(Debug, Default)]
struct Found {
    end: u64,
    newlines: u64,
    first_nul: Option<u64>,
    hits: Vec<Hit>,
    text: Vec<u8>,
    ranges: Vec<Range<usize>>,
    /// A zero run whose empty lines are selected: its offset and length (each of its zeros
    /// a selected binary line, as many hits as there are zeros without holding them).
    zero_hits: Option<(u64, u64)>,
    /// With context: the lines that are not hits but may be printed as context, in order
    /// (their bytes in `text`, their matches in `ranges`, `zapped` never set).
    ctx: Vec<Hit>,
}

/// How a search's blocks are cut. Once a file is binary, NULs end lines (GNU's rule), so
/// blocks may end at them too: a file of NULs (a sparse file's holes) is then not one line
/// held in memory. With `-z` records end at NULs, which no longer make a file binary.
fn framing(m: &Matcher, o: &SearchOptions) -> Framing {
    if m.eol() == 0 {
        Framing::Nul
    } else if o.binary == Binary::Text {
        Framing::Lines
    } else {
        Framing::LinesOrNul
    }
}

/// Counts the selected lines of a job in any block order (no `-m`, no
/// `--binary-files=without-match`): NULs end lines wherever they are, since a line holding
/// one lies past the binary turn, so each block counts alone.
fn count_unordered(
    job: &Job<'_>,
    plan: &Plan,
    m: &Matcher,
    o: &SearchOptions,
) -> Result<(u64, RunStats), EngineError> {
    let job = job.clone().with_zero_runs();
    let per_zero = split_at_nul(o, m, &[0], |part| count_selected(m, part, o.invert, 1));
    let (total, stats) = fold::<SelectedCount>(plan, &job, &(), &(m, o, per_zero))?;
    Ok((total.0, stats))
}

/// Selected lines counted in any order; the configuration is the matcher, the options and
/// the count of a zero byte's line (what each byte of a zero run adds).
struct SelectedCount<'a>(u64, std::marker::PhantomData<&'a ()>);

impl<'a> Fold for SelectedCount<'a> {
    type Config = (&'a Matcher, &'a SearchOptions, u64);

    fn new(_: &Self::Config) -> Self {
        SelectedCount(0, std::marker::PhantomData)
    }

    fn block(&mut self, &(m, o, per_zero): &Self::Config, b: &Block, d: &[&[u8]]) -> Flow {
        self.0 += if is_zero_run(b, d) {
            per_zero * b.len as u64
        } else {
            split_at_nul(o, m, d[0], |part| {
                count_selected(m, part, o.invert, u64::MAX)
            })
        };
        Flow::Continue
    }

    fn merge(&mut self, other: Self) {
        self.0 += other.0;
    }
}

/// `grep -c` over the bytes of `span` (whole lines of an input: see `swath_engine::range`): a piece of a partial result. The count of a span does not depend
/// on what lies outside it (NULs end lines wherever they are), so pieces add up to the
/// file's count. Not for `-m` or `--binary-files=without-match`, whose answers depend on the
/// whole file: `None` then.
pub fn count_span(
    span: Span<'_>,
    m: &Matcher,
    o: &SearchOptions,
    engine: &EngineOptions,
) -> Result<Option<u64>, EngineError> {
    if !counts_by_piece(o) {
        return Ok(None);
    }
    count_span_of_pieces(span, m, o, engine).map(Some)
}

/// Whether a count's pieces add up to the file's (no `-m`, no
/// `--binary-files=without-match`, whose answers depend on the whole file).
pub fn counts_by_piece(o: &SearchOptions) -> bool {
    o.binary != Binary::WithoutMatch && o.max_count == u64::MAX
}

/// [`count_span`] for options that [`counts_by_piece`].
pub(crate) fn count_span_of_pieces(
    span: Span<'_>,
    m: &Matcher,
    o: &SearchOptions,
    engine: &EngineOptions,
) -> Result<u64, EngineError> {
    let job = span.job().with_framing(framing(m, o));
    let plan = Plan::for_job(engine, &job, Access::SinglePass);
    Ok(count_unordered(&job, &plan, m, o)?.0)
}

/// Searches the bytes of `span` (all of an input, from its current position for standard
/// input), calling `emit` with each selected line in [`Mode::Print`]; `emit` returns
/// [`Flow::Stop`] to end the search (a closed output).
pub fn search(
    span: Span<'_>,
    m: &Matcher,
    o: &SearchOptions,
    engine: &EngineOptions,
    progress: Option<&AtomicU64>,
    emit: &mut (dyn FnMut(Event<'_>) -> Flow + Send),
) -> Result<SearchOutcome, EngineError> {
    let input = span.input;
    let mut job = span
        .job()
        .with_framing(framing(m, o))
        .with_progress(progress);
    if !input.is_seekable() {
        job = job.with_long_lines(LongLines::Fail { max: o.max_line });
    }
    let plan = Plan::for_job(engine, &job, Access::SinglePass);
    if o.max_count == 0 {
        // GNU reads nothing at all.
        return Ok(SearchOutcome {
            selected: 0,
            binary_matched: false,
            resume_at: Some(0),
            run: None,
            used: false,
            binary_from: None,
        });
    }
    let unordered = o.binary != Binary::WithoutMatch && o.max_count == u64::MAX;
    // Whether the line a NUL makes (in a hole, every zero is one) is selected: the same
    // answer for every zero of a run.
    let nul_line = || split_at_nul(o, m, &[0], |part| count_selected(m, part, o.invert, 1));
    if unordered && o.mode == Mode::Count {
        let (selected, stats) = count_unordered(&job, &plan, m, o)?;
        return Ok(SearchOutcome {
            selected,
            binary_matched: false,
            resume_at: None,
            run: Some((plan, stats)),
            used: selected > 0,
            binary_from: None,
        });
    }
    if o.binary != Binary::WithoutMatch && o.mode == Mode::Exists {
        let job = job.clone().with_zero_runs();
        let per_zero = nul_line();
        let found = AtomicBool::new(false);
        let stats = run_blocks(&plan, &job, &found, |b, d| {
            let n = if is_zero_run(b, d) {
                per_zero
            } else {
                split_at_nul(o, m, d[0], |part| count_selected(m, part, o.invert, 1))
            };
            if n > 0 {
                found.store(true, Ordering::Relaxed);
                return Flow::Stop;
            }
            Flow::Continue
        })?;
        let found = found.into_inner();
        return Ok(SearchOutcome {
            selected: u64::from(found),
            binary_matched: false,
            resume_at: None,
            run: Some((plan, stats)),
            used: found,
            binary_from: None,
        });
    }
    let total = input.len();
    let mut state = Emitter {
        o,
        total,
        line: 0,
        seen_end: 0,
        binary_from: None,
        blocks: VecDeque::new(),
        selected: 0,
        binary_matched: false,
        resume_at: None,
        done: false,
        emit,
        pending: 0,
        last_out: None,
        recent: VecDeque::new(),
        used: false,
    };
    let window = plan.threads * 4;
    let job = job.with_zero_runs();
    let per_zero = nul_line() > 0;
    let stats = run_ordered(
        &plan,
        &job,
        window,
        |b, d| {
            if is_zero_run(b, d) {
                return Found {
                    end: b.start + b.len as u64,
                    first_nul: Some(b.start),
                    zero_hits: per_zero.then_some((b.start, b.len as u64)),
                    ..Found::default()
                };
            }
            // The whole file in one block (a tree's small files).
            let whole = b.start == 0 && total == Some(d[0].len() as u64);
            scan(m, o, d[0], b.start, whole)
        },
        |_, found| state.take(found),
    )?;
    if !state.done {
        state.seen_end = u64::MAX;
        state.flush();
    }
    Ok(SearchOutcome {
        selected: state.selected,
        binary_matched: state.binary_matched,
        resume_at: state.resume_at,
        run: Some((plan, stats)),
        used: state.used,
        binary_from: state.binary_from,
    })
}

/// Runs `f` on the text part of `data` and on its NUL-separated part (GNU's view once the file
/// is binary: NULs end lines), returning the sum.
fn split_at_nul(
    o: &SearchOptions,
    m: &Matcher,
    data: &[u8],
    mut f: impl FnMut(&[u8]) -> u64,
) -> u64 {
    if o.binary == Binary::Text || m.eol() == 0 {
        return f(data);
    }
    if !o.invert && m.nul_blind() {
        // Nothing selected as text means nothing selected with NULs ending lines either:
        // scan for NULs only where something matched.
        let n = f(data);
        if n == 0 || memchr(0, data).is_none() {
            return n;
        }
    }
    // Pieces of whole lines small enough that the search finds in cache the bytes the NUL
    // scan just brought in.
    let mut total = 0;
    let mut rest = data;
    while !rest.is_empty() {
        let cut = if rest.len() <= PIECE {
            rest.len()
        } else {
            match memchr::memrchr(b'\n', &rest[..PIECE]) {
                Some(i) => i + 1,
                None => memchr(b'\n', &rest[PIECE..]).map_or(rest.len(), |i| PIECE + i + 1),
            }
        };
        total += split_piece_at_nul(&rest[..cut], &mut f);
        rest = &rest[cut..];
    }
    total
}

/// Bytes of lines scanned for NULs and then searched while still in the cache.
const PIECE: usize = 32 * 1024;

fn split_piece_at_nul(data: &[u8], mut f: impl FnMut(&[u8]) -> u64) -> u64 {
    match memchr(0, data) {
        None => f(data),
        Some(nul) => {
            let split = memchr::memrchr(b'\n', &data[..nul]).map_or(0, |i| i + 1);
            let zapped: Vec<u8> = data[split..]
                .iter()
                .map(|&b| if b == 0 { b'\n' } else { b })
                .collect();
            f(&data[..split]) + f(&zapped)
        }
    }
}

/// A worker's search of one block of whole lines starting at input offset `at`.
fn scan(m: &Matcher, o: &SearchOptions, data: &[u8], at: u64, whole: bool) -> Found {
    let mut f = Found {
        end: at + data.len() as u64,
        ..Found::default()
    };
    let eol = m.eol();
    if whole
        && !o.invert
        && m.nul_blind()
        && o.binary != Binary::Text
        && eol != 0
        && count_selected(m, data, false, 1) == 0
    {
        // A whole file with no match as text has none once NULs end lines either
        // (`nul_blind`), and with nothing selected where its first NUL lies changes
        // nothing: no NUL scan (most files of a tree searched for a rare string).
        if o.line_numbers {
            f.newlines = swath_kernels::count::count_byte(data, eol);
        }
        return f;
    }
    let check_text = o.check_encoding && o.binary != Binary::Text;
    // Lines before the buffer holding the block's first NUL are text.
    let mut text_len = data.len();
    if o.binary != Binary::Text && eol != 0 {
        if let Some(nul) = memchr(0, data) {
            let turn = (at + nul as u64) / GNU_BUFFER * GNU_BUFFER;
            let upto = turn.saturating_sub(at) as usize;
            text_len = memchr::memrchr(b'\n', &data[..upto]).map_or(0, |i| i + 1);
            f.first_nul = Some(at + nul as u64);
        }
    }
    let text = &data[..text_len];
    let mut last = 0usize;
    let mut rel = 0u64;
    let mut left = o.max_count;
    for_each_selected(m, text, o.invert, |r| {
        if o.line_numbers {
            rel += swath_kernels::count::count_byte(&text[last..r.start], eol);
            last = r.start;
        }
        let mut hit = Hit {
            start: at + r.start as u64,
            end: at + r.end as u64,
            rel,
            text: 0..0,
            matches: f.ranges.len()..f.ranges.len(),
            bad: false,
            zapped: false,
        };
        let line = &text[r.clone()];
        if o.mode == Mode::Print {
            if o.matches {
                for x in m.matches_in_line(line) {
                    // With -o, GNU prints a line's matches up to the first that is not text.
                    if check_text && o.only_matching && m.encoding_error(&line[x.clone()]) {
                        hit.bad = true;
                        break;
                    }
                    f.ranges.push(x);
                }
                hit.matches.end = f.ranges.len();
            }
            if check_text && !o.only_matching {
                hit.bad = m.encoding_error(line);
            }
            let from = f.text.len();
            f.text.extend_from_slice(line);
            hit.text = from..f.text.len();
        }
        f.hits.push(hit);
        left -= 1;
        left > 0
    });
    if o.line_numbers {
        f.newlines = swath_kernels::count::count_byte(data, eol);
    }
    if let (Mode::Print, Some(c)) = (o.mode, o.context) {
        let known = (o.line_numbers && text_len == data.len()).then_some(f.newlines);
        keep_context(m, o, c, text, at, check_text, known, &mut f);
    }
    if left > 0 && text_len < data.len() {
        // Past the turn: lines end at NULs too, and nothing is printed.
        let zapped: Vec<u8> = data[text_len..]
            .iter()
            .map(|&b| if b == 0 { b'\n' } else { b })
            .collect();
        let base = at + text_len as u64;
        for_each_selected(m, &zapped, o.invert, |r| {
            f.hits.push(Hit {
                start: base + r.start as u64,
                end: base + r.end as u64,
                rel: 0,
                text: 0..0,
                matches: 0..0,
                bad: false,
                zapped: true,
            });
            left -= 1;
            left > 0
        });
    }
    f
}

/// With context: records in `f.ctx` the lines of `text` (a block's text part, at input
/// offset `at`) that are not hits but lie within `c` lines of one, and the block's first
/// `c.after` and last `c.before` lines (context for hits in the blocks around it).
#[allow(clippy::too_many_arguments)]
fn keep_context(
    m: &Matcher,
    o: &SearchOptions,
    c: Context,
    text: &[u8],
    at: u64,
    check_text: bool,
    known_newlines: Option<u64>,
    f: &mut Found,
) {
    let len = text.len();
    let eol = m.eol();
    // The line starting at `p` (< len), without its end.
    let line_at = |p: usize| p..memchr(eol, &text[p..]).map_or(len, |i| p + i);
    // The line ending just before `q` (> 0): `q` is a line start or the end of the text.
    let line_before = |q: usize| {
        let e = if text[q - 1] == eol { q - 1 } else { q };
        memchr::memrchr(eol, &text[..e]).map_or(0, |i| i + 1)..e
    };
    let hits: Vec<(usize, usize)> = f
        .hits
        .iter()
        .filter(|h| !h.zapped)
        .map(|h| ((h.start - at) as usize, (h.end - at) as usize))
        .collect();
    let mut keep: Vec<Range<usize>> = Vec::new();
    // Lines after `from`, up to `c.after` of them, before `until`.
    let after = |from: usize, until: usize, keep: &mut Vec<Range<usize>>| {
        let mut p = from;
        for _ in 0..c.after {
            if p >= until {
                break;
            }
            let l = line_at(p);
            p = l.end + 1;
            keep.push(l);
        }
        p
    };
    // Lines before `to`, up to `c.before` of them, from `covered` on.
    let before = |to: usize, covered: usize, keep: &mut Vec<Range<usize>>| {
        let mark = keep.len();
        let mut q = to;
        for _ in 0..c.before {
            if q <= covered {
                break;
            }
            let l = line_before(q);
            q = l.start;
            keep.push(l);
        }
        keep[mark..].reverse();
    };
    let first = hits.first().map_or(len, |h| h.0);
    let mut covered = after(0, first, &mut keep);
    for (k, &(s, e)) in hits.iter().enumerate() {
        before(s, covered, &mut keep);
        let next = hits.get(k + 1).map_or(len, |h| h.0);
        covered = after(e + 1, next, &mut keep).max(e + 1);
    }
    before(len, covered, &mut keep);
    let mut counted = (0usize, 0u64);
    // Newlines in the whole text (the block's count when the block is all text).
    let mut text_newlines = known_newlines;
    for l in keep {
        let mut ctx = Hit {
            start: at + l.start as u64,
            end: at + l.end as u64,
            rel: 0,
            text: 0..0,
            matches: f.ranges.len()..f.ranges.len(),
            bad: false,
            zapped: false,
        };
        if o.line_numbers {
            // Lines before `l`: counted on from the last kept line, or back from the end of
            // the text when that is nearer (a block's last lines: without this, a block with
            // no match had all its newlines counted twice).
            if l.start - counted.0 <= len - l.start {
                counted.1 += swath_kernels::count::count_byte(&text[counted.0..l.start], eol);
            } else {
                let total = *text_newlines
                    .get_or_insert_with(|| swath_kernels::count::count_byte(text, eol));
                counted.1 = total - swath_kernels::count::count_byte(&text[l.start..], eol);
            }
            counted.0 = l.start;
            ctx.rel = counted.1;
        }
        let line = &text[l];
        // With -v the context lines are the matching ones: their matches are shown.
        if o.matches && o.invert {
            for x in m.matches_in_line(line) {
                if check_text && o.only_matching && m.encoding_error(&line[x.clone()]) {
                    ctx.bad = true;
                    break;
                }
                f.ranges.push(x);
            }
            ctx.matches.end = f.ranges.len();
        }
        if check_text && !o.only_matching {
            ctx.bad = m.encoding_error(line);
        }
        let from = f.text.len();
        f.text.extend_from_slice(line);
        ctx.text = from..f.text.len();
        f.ctx.push(ctx);
    }
}

/// The consumer: takes blocks in order, decides where the file turned binary, and hands
/// selected lines (and context lines around them) to the caller.
struct Emitter<'e> {
    o: &'e SearchOptions,
    total: Option<u64>,
    /// Lines before the first waiting block.
    line: u64,
    /// End of the last block taken.
    seen_end: u64,
    /// Offset from which the file is binary, once a NUL has been seen.
    binary_from: Option<u64>,
    /// Blocks taken but not yet handed on.
    blocks: VecDeque<Found>,
    selected: u64,
    binary_matched: bool,
    resume_at: Option<u64>,
    done: bool,
    emit: &'e mut (dyn FnMut(Event<'_>) -> Flow + Send),
    /// Context: lines of trailing context still to print (GNU's `pending`).
    pending: u64,
    /// Context: the offset just past the last line printed (GNU's `lastout`).
    last_out: Option<u64>,
    /// Context: the last lines seen and not printed, at most `before` of them.
    recent: VecDeque<Line>,
    /// A line was selected and handed on (GNU's `used`, for this file).
    used: bool,
}

/// A line kept for leading context.
#[derive(Debug)]
struct Line {
    start: u64,
    end: u64,
    number: u64,
    text: Vec<u8>,
    matches: Vec<Range<usize>>,
    bad: bool,
}

impl Emitter<'_> {
    fn take(&mut self, found: Found) -> Flow {
        self.seen_end = found.end;
        if self.binary_from.is_none() && self.o.binary != Binary::Text {
            if let Some(nul) = found.first_nul {
                self.binary_from = Some(nul / GNU_BUFFER * GNU_BUFFER);
            }
        }
        self.blocks.push_back(found);
        self.flush();
        if self.done {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    /// True when every line of `f` is known to be text or binary.
    fn decided(&self, f: &Found) -> bool {
        if self.binary_from.is_some() || self.o.binary == Binary::Text {
            return true;
        }
        let last = f
            .hits
            .last()
            .map(|h| h.end)
            .max(f.ctx.last().map(|h| h.end));
        let Some(last) = last else {
            return true;
        };
        let safe_until = (last / GNU_BUFFER + 1) * GNU_BUFFER;
        self.seen_end >= safe_until || self.total.is_some_and(|t| self.seen_end >= t)
    }

    fn flush(&mut self) {
        while !self.done {
            let Some(front) = self.blocks.front() else {
                return;
            };
            if !self.decided(front) {
                return;
            }
            let f = self.blocks.pop_front().expect("front exists");
            self.hand_on(&f);
            self.line += f.newlines;
        }
    }

    fn is_binary(&self, h: &Hit) -> bool {
        h.zapped || self.binary_from.is_some_and(|b| h.end >= b)
    }

    fn hand_on(&mut self, f: &Found) {
        if let Some((start, n)) = f.zero_hits {
            // n selected lines past the binary turn, one per zero.
            if self.o.binary == Binary::WithoutMatch {
                self.selected = 0;
                self.done = true;
                return;
            }
            if self.selected >= self.o.max_count {
                // Only trailing context was awaited, and nothing binary is printed.
                self.done = true;
                return;
            }
            self.used = true;
            if self.o.mode != Mode::Count {
                self.selected += 1;
                self.binary_matched = self.o.mode == Mode::Print;
                self.done = true;
                return;
            }
            let k = n.min(self.o.max_count.saturating_sub(self.selected));
            self.selected += k;
            if self.selected >= self.o.max_count {
                let next = start + k;
                self.resume_at = Some(self.total.map_or(next, |t| next.min(t)));
                self.done = true;
            }
            return;
        }
        let context = self.o.context.is_some() && self.o.mode == Mode::Print;
        let mut ctx = f.ctx.iter().peekable();
        for hit in &f.hits {
            if context {
                while let Some(c) = ctx.next_if(|c| c.start < hit.start) {
                    self.context_line(f, c);
                    if self.done {
                        return;
                    }
                }
                if self.selected >= self.o.max_count {
                    // Past the limit a selected line is trailing context like any other.
                    self.context_line(f, hit);
                    if self.done {
                        return;
                    }
                    continue;
                }
            }
            if self.is_binary(hit) {
                if self.o.binary == Binary::WithoutMatch {
                    self.selected = 0;
                    self.done = true;
                    return;
                }
                self.selected += 1;
                self.used = true;
                if self.o.mode != Mode::Count {
                    self.binary_matched = self.o.mode == Mode::Print;
                    self.done = true;
                    return;
                }
            } else {
                self.selected += 1;
                if self.o.mode == Mode::Print {
                    if context {
                        self.lead(hit.start);
                        if self.done {
                            return;
                        }
                    }
                    self.used = true;
                    let line = &f.text[hit.text.clone()];
                    let sel = Selected {
                        number: self.line + hit.rel + 1,
                        offset: hit.start,
                        line,
                        matches: &f.ranges[hit.matches.clone()],
                        context: false,
                        terminated: hit.end < f.end,
                    };
                    // Not text (UTF-8): GNU leaves out what it cannot print, goes on, and
                    // says "binary file matches" after the file.
                    self.binary_matched |= hit.bad;
                    let show = !hit.bad || (self.o.only_matching && !sel.matches.is_empty());
                    if show {
                        if (self.emit)(Event::Line(sel)) == Flow::Stop {
                            self.done = true;
                            return;
                        }
                        self.last_out = Some(hit.end + 1);
                    } else if context {
                        // Not printed, so GNU's next leading context may reach back over it.
                        self.remember(f, hit);
                    }
                    if let Some(c) = self.o.context {
                        self.pending = c.after;
                    }
                }
                if self.o.mode == Mode::Exists {
                    self.done = true;
                    return;
                }
            }
            if self.selected >= self.o.max_count {
                let next = hit.end + 1;
                self.resume_at = Some(self.total.map_or(next, |t| next.min(t)));
                if self.pending == 0 {
                    self.done = true;
                    return;
                }
            }
        }
        if context {
            for c in ctx {
                self.context_line(f, c);
                if self.done {
                    return;
                }
            }
        }
        if self.o.binary == Binary::WithoutMatch && self.binary_from.is_some_and(|b| f.end > b) {
            self.selected = 0;
            self.done = true;
        }
    }

    /// A line that is not selected (or comes after the limit): trailing context while any
    /// is pending, else remembered as possible leading context.
    fn context_line(&mut self, f: &Found, c: &Hit) {
        let limit_reached = self.selected >= self.o.max_count;
        if self.is_binary(c) {
            // Nothing past the binary turn is printed.
            if limit_reached {
                self.done = true;
            }
            return;
        }
        if self.pending > 0 {
            if c.bad {
                // GNU prints trailing context from its last output on: a line it cannot
                // print stays its next line until no context is pending. It is left out,
                // and said after the file.
                self.pending = 0;
                self.binary_matched = true;
            } else {
                self.pending -= 1;
                let sel = Selected {
                    number: self.line + c.rel + 1,
                    offset: c.start,
                    line: &f.text[c.text.clone()],
                    matches: &f.ranges[c.matches.clone()],
                    context: true,
                    terminated: c.end < f.end,
                };
                if (self.emit)(Event::Line(sel)) == Flow::Stop {
                    self.done = true;
                    return;
                }
                self.last_out = Some(c.end + 1);
                if limit_reached && self.pending == 0 {
                    self.done = true;
                }
                return;
            }
        }
        if limit_reached {
            self.done = true;
            return;
        }
        self.remember(f, c);
    }

    /// Keeps a line that was not printed as possible leading context (the last `before`).
    fn remember(&mut self, f: &Found, c: &Hit) {
        let before = self.o.context.map_or(0, |c| c.before) as usize;
        if before == 0 {
            return;
        }
        if self.recent.len() == before {
            self.recent.pop_front();
        }
        self.recent.push_back(Line {
            start: c.start,
            end: c.end,
            number: self.line + c.rel + 1,
            text: f.text[c.text.clone()].to_vec(),
            matches: f.ranges[c.matches.clone()].to_vec(),
            bad: c.bad,
        });
    }

    /// Before a selected line starting at `start`: the group separator when the output is
    /// not adjacent to the last, then the leading context (the lines just before it, after
    /// the last output, at most `before`).
    fn lead(&mut self, start: u64) {
        let recent = std::mem::take(&mut self.recent);
        // The lines just before `start`, back to the last output (lines not printed stay
        // candidates: GNU walks back over the text itself).
        let mut from = recent.len();
        let mut expect = start;
        while from > 0 {
            let l = &recent[from - 1];
            if l.end + 1 != expect || self.last_out.is_some_and(|o| l.start < o) {
                break;
            }
            expect = l.start;
            from -= 1;
        }
        if self.last_out != Some(expect)
            && (self.emit)(Event::Separator {
                first_in_file: !self.used,
            }) == Flow::Stop
        {
            self.done = true;
            return;
        }
        for l in recent.range(from..) {
            if l.bad {
                // Left out, as GNU leaves out a context line it cannot print, and said
                // after the file ("binary file matches").
                self.binary_matched = true;
                continue;
            }
            let sel = Selected {
                number: l.number,
                offset: l.start,
                line: &l.text,
                matches: &l.matches,
                context: true,
                // Leading context: a selected line follows it.
                terminated: true,
            };
            if (self.emit)(Event::Line(sel)) == Flow::Stop {
                self.done = true;
                return;
            }
            self.last_out = Some(l.end + 1);
        }
        self.recent = recent;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;
    use swath_engine::Input;
    use swath_engine::{Layout, Strategy as Read};
    use swath_grep::pattern::Syntax;
    use swath_grep::search::MatchOptions;

    /// What the oracle and the engine report: selected lines (number, offset, text) as
    /// printed, the count, and the binary flag.
    type Report = (Vec<(u64, u64, Vec<u8>)>, u64, bool);

    /// GNU grep's rules applied one line at a time, front to back.
    fn oracle(data: &[u8], m: &Matcher, o: &SearchOptions) -> Report {
        let turn = match (o.binary, memchr(0, data)) {
            (Binary::Text, _) | (_, None) => u64::MAX,
            (_, Some(p)) => p as u64 / GNU_BUFFER * GNU_BUFFER,
        };
        let (mut printed, mut selected, mut binary) = (Vec::new(), 0u64, false);
        if o.max_count == 0 {
            return (printed, 0, false);
        }
        let mut start = 0usize;
        let mut number = 0u64;
        while start < data.len() {
            let end = memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
            number += 1;
            let line = &data[start..end];
            if (end as u64) < turn {
                if m.is_match_line(line) != o.invert {
                    selected += 1;
                    if o.mode == Mode::Exists {
                        return (printed, 1, false);
                    }
                    if o.mode == Mode::Print {
                        if o.check_encoding && o.binary != Binary::Text && m.encoding_error(line) {
                            // Not text: left out, reported after the file.
                            binary = true;
                        } else {
                            printed.push((number, start as u64, line.to_vec()));
                        }
                    }
                    if selected >= o.max_count {
                        return (printed, selected, binary);
                    }
                }
            } else {
                if o.binary == Binary::WithoutMatch {
                    return (printed, 0, false);
                }
                // Binary from here: NULs end lines too, nothing is printed.
                let rest: Vec<u8> = data[start..]
                    .iter()
                    .map(|&b| if b == 0 { b'\n' } else { b })
                    .collect();
                for seg in lines_of(&rest) {
                    if m.is_match_line(seg) != o.invert {
                        selected += 1;
                        if o.mode != Mode::Count {
                            binary = o.mode == Mode::Print;
                            return (printed, selected, binary);
                        }
                        if selected >= o.max_count {
                            return (printed, selected, binary);
                        }
                    }
                }
                return (printed, selected, binary);
            }
            start = end + 1;
        }
        (printed, selected, binary)
    }

    /// What a search with context hands on: lines (number, offset, text, context?) and
    /// separators (first in file?).
    #[derive(Debug, PartialEq, Eq)]
    enum Ev {
        Line(u64, u64, Vec<u8>, bool),
        Sep(bool),
    }

    /// GNU grep 3.8's `prtext`/`prpending` over the lines of a text without NULs, one line
    /// at a time: leading context back to the last output, a separator where the output is
    /// not adjacent, trailing context (after the limit too), lines that are not text (UTF-8)
    /// left out (a trailing one ends the trailing context).
    fn context_oracle(data: &[u8], m: &Matcher, o: &SearchOptions) -> (Vec<Ev>, u64) {
        let c = o.context.unwrap();
        let mut lines = Vec::new();
        let mut start = 0usize;
        while start < data.len() {
            let end = memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
            lines.push((start, end));
            start = end + 1;
        }
        let bad = |i: usize| {
            let (s, e) = lines[i];
            o.check_encoding && o.binary != Binary::Text && m.encoding_error(&data[s..e])
        };
        let line = |i: usize, ctx: bool| {
            let (s, e) = lines[i];
            Ev::Line(i as u64 + 1, s as u64, data[s..e].to_vec(), ctx)
        };
        let (mut ev, mut pending, mut last_out, mut used, mut selected) =
            (Vec::new(), 0u64, None::<usize>, false, 0u64);
        if o.max_count == 0 {
            return (ev, 0);
        }
        for i in 0..lines.len() {
            let (s, e) = lines[i];
            let is_sel = m.is_match_line(&data[s..e]) != o.invert;
            if selected < o.max_count && is_sel {
                let mut p = i;
                while p > 0
                    && ((i - p) as u64) < c.before
                    && last_out.is_none_or(|o| lines[p - 1].0 >= o)
                {
                    p -= 1;
                }
                if last_out != Some(lines[p].0) {
                    ev.push(Ev::Sep(!used));
                }
                for (j, &(_, end)) in lines.iter().enumerate().take(i).skip(p) {
                    if !bad(j) {
                        ev.push(line(j, true));
                        last_out = Some(end + 1);
                    }
                }
                used = true;
                selected += 1;
                if !bad(i) {
                    ev.push(line(i, false));
                    last_out = Some(e + 1);
                }
                pending = c.after;
            } else if pending > 0 {
                if bad(i) {
                    pending = 0;
                } else {
                    pending -= 1;
                    ev.push(line(i, true));
                    last_out = Some(e + 1);
                }
            }
            if selected >= o.max_count && pending == 0 {
                break;
            }
        }
        (ev, selected)
    }

    fn lines_of(d: &[u8]) -> Vec<&[u8]> {
        let mut v: Vec<&[u8]> = d.split(|&b| b == b'\n').collect();
        if d.last().is_none_or(|&b| b == b'\n') {
            v.pop();
        }
        v
    }

    fn run(data: &[u8], m: &Matcher, o: &SearchOptions, e: &EngineOptions) -> Report {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(data).unwrap();
        let input = Input::open(f.path()).unwrap();
        let mut printed = Vec::new();
        let out = search(Span::whole(&input), m, o, e, None, &mut |ev| {
            if let Event::Line(s) = ev {
                printed.push((s.number, s.offset, s.line.to_vec()));
            }
            Flow::Continue
        })
        .unwrap();
        (printed, out.selected, out.binary_matched)
    }

    fn data_strategy() -> impl Strategy<Value = Vec<u8>> {
        let small = proptest::collection::vec(
            prop_oneof![
                8 => Just(b'a'), 3 => Just(b'b'), 2 => Just(b' '), 3 => Just(b'\n'), 1 => Just(0u8),
                1 => Just(0xc3u8), 1 => Just(0xa9u8)
            ],
            0..2000,
        );
        // A text longer than GNU's first buffer with a NUL late in it.
        let late = (0usize..3000, any::<bool>()).prop_map(|(at, nul)| {
            let mut d: Vec<u8> = b"ab a\nbb\n".repeat(30_000);
            if nul {
                d[100_000 + at] = 0;
            }
            d
        });
        prop_oneof![9 => small, 1 => late]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(160))]
        #[test]
        fn every_plan_selects_as_gnu_does(
            data in data_strategy(),
            pat in prop_oneof![
                Just("a"), Just("ab"), Just("^b"), Just("a$"), Just("b b"), Just(""), Just("^$"),
                Just("é"), Just("a.b")
            ],
            utf8 in any::<bool>(),
            syntax in prop_oneof![Just(Syntax::Basic), Just(Syntax::Fixed)],
            word in any::<bool>(),
            invert in any::<bool>(),
            mode in prop_oneof![Just(Mode::Print), Just(Mode::Count), Just(Mode::Exists)],
            max in prop_oneof![Just(u64::MAX), Just(0u64), Just(1u64), Just(3u64)],
            binary in prop_oneof![Just(Binary::Binary), Just(Binary::Text), Just(Binary::WithoutMatch)],
            threads in -1i64..4,
            bs in prop_oneof![1usize..64, 4096usize..70_000],
            strategy in prop_oneof![Just(Read::Auto), Just(Read::Pread), Just(Read::Mmap)],
        ) {
            let (m, _) = Matcher::new(&[pat.as_bytes().to_vec()], MatchOptions {
                syntax, ignore_case: false, word, line: false, utf8, multibyte: false,
            }).unwrap();
            let o = SearchOptions {
                mode, invert, max_count: max, binary, check_encoding: utf8,
                line_numbers: true, matches: false, only_matching: false,
                max_line: DEFAULT_MAX_LINE, context: None,
            };
            let e = EngineOptions {
                threads: swath_engine::Threads::from_count(threads), block_size: Some(bs), strategy, layout: Layout::Dynamic,
            };
            prop_assert_eq!(run(&data, &m, &o, &e), oracle(&data, &m, &o));
        }

        #[test]
        fn context_is_printed_as_gnu_prints_it_whatever_the_plan(
            data in proptest::collection::vec(
                prop_oneof![
                    8 => Just(b'a'), 3 => Just(b'b'), 2 => Just(b' '), 4 => Just(b'\n'),
                    1 => Just(0xc3u8), 1 => Just(0xa9u8)
                ],
                0..600,
            ),
            pat in prop_oneof![Just("ab"), Just("^b"), Just("a$"), Just("b b"), Just("^$")],
            utf8 in any::<bool>(),
            invert in any::<bool>(),
            before in 0u64..4,
            after in 0u64..4,
            max in prop_oneof![Just(u64::MAX), Just(1u64), Just(2u64), Just(5u64)],
            threads in 1i64..4,
            bs in prop_oneof![1usize..40, 4096usize..8192],
            strategy in prop_oneof![Just(Read::Auto), Just(Read::Pread), Just(Read::Mmap)],
        ) {
            let (m, _) = Matcher::new(&[pat.as_bytes().to_vec()], MatchOptions {
                syntax: Syntax::Basic, ignore_case: false, word: false, line: false, utf8, multibyte: false,
            }).unwrap();
            let o = SearchOptions {
                mode: Mode::Print, invert, max_count: max, binary: Binary::Binary, check_encoding: utf8,
                line_numbers: true, matches: false, only_matching: false,
                max_line: DEFAULT_MAX_LINE, context: Some(Context { before, after }),
            };
            let e = EngineOptions {
                threads: swath_engine::Threads::from_count(threads), block_size: Some(bs), strategy, layout: Layout::Dynamic,
            };
            let mut f = tempfile::NamedTempFile::new().unwrap();
            f.write_all(&data).unwrap();
            let input = Input::open(f.path()).unwrap();
            let mut got = Vec::new();
            let out = search(Span::whole(&input), &m, &o, &e, None, &mut |ev| {
                got.push(match ev {
                    Event::Line(s) => Ev::Line(s.number, s.offset, s.line.to_vec(), s.context),
                    Event::Separator { first_in_file } => Ev::Sep(first_in_file),
                });
                Flow::Continue
            })
            .unwrap();
            prop_assert_eq!((got, out.selected), context_oracle(&data, &m, &o));
        }

        #[test]
        fn holes_search_as_the_same_bytes_written_densely(
            layout in proptest::collection::vec((any::<bool>(), 1usize..5, 0usize..3), 0..7),
            pat in prop_oneof![Just("a"), Just(""), Just("^$"), Just("b a")],
            invert in any::<bool>(),
            mode in prop_oneof![Just(Mode::Count), Just(Mode::Exists), Just(Mode::Print)],
            max in prop_oneof![Just(u64::MAX), Just(1u64), Just(3u64), Just(5000u64)],
            binary in prop_oneof![Just(Binary::Binary), Just(Binary::Text), Just(Binary::WithoutMatch)],
            threads in 1i64..4,
            bs_pages in 1usize..3,
            strategy in prop_oneof![Just(Read::Auto), Just(Read::Pread), Just(Read::Mmap), Just(Read::Read)],
        ) {
            use std::os::unix::fs::FileExt;
            let f = tempfile::NamedTempFile::new().unwrap();
            let mut dense = Vec::new();
            for &(hole, pages, kind) in &layout {
                let n = pages * 4096;
                if hole {
                    dense.resize(dense.len() + n, 0);
                    continue;
                }
                let unit: &[u8] = [&b"ab a\nbb\n"[..], b"b a\0bb", b"zzz"][kind];
                let bytes: Vec<u8> = unit.iter().copied().cycle().take(n).collect();
                f.as_file().write_all_at(&bytes, dense.len() as u64).unwrap();
                dense.extend_from_slice(&bytes);
            }
            f.as_file().set_len(dense.len() as u64).unwrap();
            let (m, _) = Matcher::new(&[pat.as_bytes().to_vec()], MatchOptions {
                syntax: Syntax::Basic, ignore_case: false, word: false, line: false, utf8: false, multibyte: false,
            }).unwrap();
            let o = SearchOptions {
                mode, invert, max_count: max, binary, check_encoding: false,
                line_numbers: true, matches: false, only_matching: false, max_line: DEFAULT_MAX_LINE,
                context: None,
            };
            let e = EngineOptions {
                threads: swath_engine::Threads::from_count(threads), block_size: Some(bs_pages * 4096), strategy,
                layout: Layout::Dynamic,
            };
            let input = Input::open(f.path()).unwrap();
            let mut printed = Vec::new();
            let out = search(Span::whole(&input), &m, &o, &e, None, &mut |ev| {
                if let Event::Line(s) = ev {
                    printed.push((s.number, s.offset, s.line.to_vec()));
                }
                Flow::Continue
            })
            .unwrap();
            prop_assert_eq!((printed, out.selected, out.binary_matched), oracle(&dense, &m, &o));
        }
    }
}
