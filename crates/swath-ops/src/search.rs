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
//! do. In a UTF-8 locale a line (or, with `-o`, a match) about to be printed that is not valid
//! text does the same. Because the turn can happen up to one buffer before the NUL, a block's
//! lines are handed on only once the blocks up to a buffer past them have been seen.
//!
//! Every search takes the holes of a sparse file as zero runs (except with `-a`, where a hole
//! is part of one long line): with NULs ending lines, a run of `n` zeros is `n` empty lines
//! past the binary turn, all selected or none, decided once.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use memchr::memchr;
use swath_engine::{
    is_zero_run, run_blocks, run_ordered, Access, EngineError, EngineOptions, Flow, Framing, Input,
    Job, LongLines, Plan, Region, RunStats,
};
use swath_kernels::search::{count_selected, for_each_selected, has_encoding_error, Matcher};

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
    /// A UTF-8 locale: lines with encoding errors count as binary.
    pub utf8: bool,
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
}

/// The default of [`SearchOptions::max_line`]: 64 MiB.
pub const DEFAULT_MAX_LINE: usize = 64 << 20;

/// One selected line, handed to the caller in file order.
#[derive(Debug)]
pub struct Selected<'a> {
    /// Line number (1-based; meaningful only when line numbers were asked for).
    pub number: u64,
    /// Offset of the line's first byte in the input.
    pub offset: u64,
    /// The line, without its newline.
    pub line: &'a [u8],
    /// Non-empty matches within the line (when asked for), in order.
    pub matches: &'a [Range<usize>],
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
}

/// Searches all of `input`, calling `emit` with each selected line in [`Mode::Print`]; `emit`
/// returns [`Flow::Stop`] to end the search (a closed output).
pub fn search(
    input: &Input,
    m: &Matcher,
    o: &SearchOptions,
    engine: &EngineOptions,
    progress: Option<&AtomicU64>,
    emit: &mut (dyn FnMut(&Selected<'_>) -> Flow + Send),
) -> Result<SearchOutcome, EngineError> {
    // Once a file is binary, NULs end lines (GNU's rule), so blocks may end at them too:
    // a file of NULs (a sparse file's holes) is then not one line held in memory.
    let framing = if o.binary == Binary::Text {
        Framing::Lines
    } else {
        Framing::LinesOrNul
    };
    let mut job = Job::new(vec![Region { input, offset: 0 }])
        .with_framing(framing)
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
        });
    }
    let unordered = o.binary != Binary::WithoutMatch && o.max_count == u64::MAX;
    // Whether the line a NUL makes (in a hole, every zero is one) is selected: the same
    // answer for every zero of a run.
    let nul_line = || split_at_nul(o, m, &[0], |part| count_selected(m, part, o.invert, 1));
    if unordered && o.mode == Mode::Count {
        let job = job.clone().with_zero_runs();
        let per_zero = nul_line();
        let total = AtomicU64::new(0);
        let stats = run_blocks(&plan, &job, &(), |b, d| {
            if is_zero_run(b, d) {
                total.fetch_add(per_zero * b.len as u64, Ordering::Relaxed);
                return Flow::Continue;
            }
            let n = split_at_nul(o, m, d[0], |part| {
                count_selected(m, part, o.invert, u64::MAX)
            });
            total.fetch_add(n, Ordering::Relaxed);
            Flow::Continue
        })?;
        return Ok(SearchOutcome {
            selected: total.into_inner(),
            binary_matched: false,
            resume_at: None,
            run: Some((plan, stats)),
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
        return Ok(SearchOutcome {
            selected: u64::from(found.into_inner()),
            binary_matched: false,
            resume_at: None,
            run: Some((plan, stats)),
        });
    }
    let total = input.len();
    let mut state = Emitter {
        o,
        total,
        line: 0,
        seen_end: 0,
        binary_from: None,
        pending: VecDeque::new(),
        selected: 0,
        binary_matched: false,
        resume_at: None,
        done: false,
        emit,
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
            scan(m, o, d[0], b.start)
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
    if o.binary == Binary::Text {
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
fn scan(m: &Matcher, o: &SearchOptions, data: &[u8], at: u64) -> Found {
    let mut f = Found {
        end: at + data.len() as u64,
        ..Found::default()
    };
    let check_text = o.utf8 && o.binary != Binary::Text;
    // Lines before the buffer holding the block's first NUL are text.
    let mut text_len = data.len();
    if o.binary != Binary::Text {
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
            rel += swath_kernels::count::count_byte(&text[last..r.start], b'\n');
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
                    if check_text && o.only_matching && has_encoding_error(&line[x.clone()]) {
                        hit.bad = true;
                        break;
                    }
                    f.ranges.push(x);
                }
                hit.matches.end = f.ranges.len();
            }
            if check_text && !o.only_matching {
                hit.bad = has_encoding_error(line);
            }
            let from = f.text.len();
            f.text.extend_from_slice(line);
            hit.text = from..f.text.len();
        }
        f.hits.push(hit);
        left -= 1;
        left > 0
    });
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
    if o.line_numbers {
        f.newlines = swath_kernels::count::count_byte(data, b'\n');
    }
    f
}

/// The consumer: takes blocks in order, decides where the file turned binary, and hands
/// selected lines to the caller.
struct Emitter<'e> {
    o: &'e SearchOptions,
    total: Option<u64>,
    /// Lines before the first pending block.
    line: u64,
    /// End of the last block taken.
    seen_end: u64,
    /// Offset from which the file is binary, once a NUL has been seen.
    binary_from: Option<u64>,
    pending: VecDeque<Found>,
    selected: u64,
    binary_matched: bool,
    resume_at: Option<u64>,
    done: bool,
    emit: &'e mut (dyn FnMut(&Selected<'_>) -> Flow + Send),
}

impl Emitter<'_> {
    fn take(&mut self, found: Found) -> Flow {
        self.seen_end = found.end;
        if self.binary_from.is_none() && self.o.binary != Binary::Text {
            if let Some(nul) = found.first_nul {
                self.binary_from = Some(nul / GNU_BUFFER * GNU_BUFFER);
            }
        }
        self.pending.push_back(found);
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
        let Some(last) = f.hits.last() else {
            return true;
        };
        let safe_until = (last.end / GNU_BUFFER + 1) * GNU_BUFFER;
        self.seen_end >= safe_until || self.total.is_some_and(|t| self.seen_end >= t)
    }

    fn flush(&mut self) {
        while !self.done {
            let Some(front) = self.pending.front() else {
                return;
            };
            if !self.decided(front) {
                return;
            }
            let f = self.pending.pop_front().expect("front exists");
            self.hand_on(&f);
            self.line += f.newlines;
        }
    }

    fn hand_on(&mut self, f: &Found) {
        if let Some((start, n)) = f.zero_hits {
            // n selected lines past the binary turn, one per zero.
            if self.o.binary == Binary::WithoutMatch {
                self.selected = 0;
                self.done = true;
                return;
            }
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
        for hit in &f.hits {
            let binary = hit.zapped || self.binary_from.is_some_and(|b| hit.end >= b);
            if binary {
                if self.o.binary == Binary::WithoutMatch {
                    self.selected = 0;
                    self.done = true;
                    return;
                }
                self.selected += 1;
                if self.o.mode != Mode::Count {
                    self.binary_matched = self.o.mode == Mode::Print;
                    self.done = true;
                    return;
                }
            } else {
                self.selected += 1;
                if self.o.mode == Mode::Print {
                    let line = &f.text[hit.text.clone()];
                    let sel = Selected {
                        number: self.line + hit.rel + 1,
                        offset: hit.start,
                        line,
                        matches: &f.ranges[hit.matches.clone()],
                    };
                    // Not text (UTF-8): GNU leaves out what it cannot print, goes on, and
                    // says "binary file matches" after the file.
                    self.binary_matched |= hit.bad;
                    let show = !hit.bad || (self.o.only_matching && !sel.matches.is_empty());
                    if show && (self.emit)(&sel) == Flow::Stop {
                        self.done = true;
                        return;
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
                self.done = true;
                return;
            }
        }
        if self.o.binary == Binary::WithoutMatch && self.binary_from.is_some_and(|b| f.end > b) {
            self.selected = 0;
            self.done = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;
    use swath_engine::{Layout, Strategy as Read};
    use swath_kernels::pattern::Syntax;
    use swath_kernels::search::MatchOptions;

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
                        if o.utf8 && o.binary != Binary::Text && has_encoding_error(line) {
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
        let out = search(&input, m, o, e, None, &mut |s| {
            printed.push((s.number, s.offset, s.line.to_vec()));
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
                syntax, ignore_case: false, word, line: false, utf8,
            }).unwrap();
            let o = SearchOptions {
                mode, invert, max_count: max, binary, utf8,
                line_numbers: true, matches: false, only_matching: false,
                max_line: DEFAULT_MAX_LINE,
            };
            let e = EngineOptions {
                threads: Some(threads), block_size: Some(bs), strategy, layout: Layout::Dynamic,
            };
            prop_assert_eq!(run(&data, &m, &o, &e), oracle(&data, &m, &o));
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
                syntax: Syntax::Basic, ignore_case: false, word: false, line: false, utf8: false,
            }).unwrap();
            let o = SearchOptions {
                mode, invert, max_count: max, binary, utf8: false,
                line_numbers: true, matches: false, only_matching: false, max_line: DEFAULT_MAX_LINE,
            };
            let e = EngineOptions {
                threads: Some(threads), block_size: Some(bs_pages * 4096), strategy,
                layout: Layout::Dynamic,
            };
            let input = Input::open(f.path()).unwrap();
            let mut printed = Vec::new();
            let out = search(&input, &m, &o, &e, None, &mut |s| {
                printed.push((s.number, s.offset, s.line.to_vec()));
                Flow::Continue
            })
            .unwrap();
            prop_assert_eq!((printed, out.selected, out.binary_matched), oracle(&dense, &m, &o));
        }
    }
}
