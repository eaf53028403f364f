//! The partial result of one byte range of one file (docs/partial-format.md), for each
//! report: what `--range START:END --emit-partial OUT` writes, as bytes.
//!
//! The range is cut at line ends as Hadoop and Dask cut ([`swath_engine::range`]); a gzip
//! log is one range (the whole file). Errors are one line that names the file and the
//! cause.

use std::path::Path;

use swath_engine::{EngineError, EngineOptions, Input};
use swath_grep::search::{MatchOptions, Matcher};
use swath_ops::logs::summary::{Summary, SummaryConfig};
use swath_ops::logs::{report_span, LineReport, Wf2};
use swath_ops::partial::{Kind, Partial, State};
use swath_ops::search::{Binary, Mode, SearchOptions};

use crate::wc::{Encoding, Selected};

/// What a piece computes, with the options that decide it.
#[derive(Debug, Clone)]
pub enum Request {
    /// `wc` counts.
    Wc {
        /// The counts asked.
        selected: Selected,
        /// How characters are read.
        encoding: Encoding,
    },
    /// `grep -c`: the number of selected lines.
    GrepCount {
        /// The patterns (one per line of `-e`).
        patterns: Vec<Vec<u8>>,
        /// `-G`/`-E`/`-F`/`-P`, `-i`, `-w`, `-x`, the locale.
        match_opts: MatchOptions,
        /// `-v`.
        invert: bool,
        /// `--binary-files` (`Binary` or `Text`).
        binary: Binary,
        /// `-H` (`Some(true)`), `-h` (`Some(false)`).
        with_filename: Option<bool>,
        /// `-Z`.
        null_after_name: bool,
    },
    /// `logs wf2`.
    Wf2 {
        /// `--top`.
        top: usize,
        /// `--max-line`.
        max_line: usize,
        /// `--article`.
        article: String,
        /// `--self-referrer`.
        self_referrer: String,
    },
    /// `logs summary`.
    Summary {
        /// `--top`.
        top: usize,
        /// `--max-line`.
        max_line: usize,
    },
}

/// The partial result of `request` over bytes `range` (`None`: the whole file) of the file
/// at `path`, the `index`-th input of the job, as bytes. The file is named `name` in the
/// partial and in messages (by default its path: a relative path made absolute to be read
/// elsewhere keeps the name the user gave).
pub fn piece(
    request: &Request,
    path: &Path,
    name: Option<&[u8]>,
    index: u32,
    range: Option<(u64, u64)>,
    engine: &EngineOptions,
) -> Result<Vec<u8>, String> {
    use std::os::unix::ffi::OsStrExt;
    let name = name.unwrap_or(path.as_os_str().as_bytes());
    let shown = String::from_utf8_lossy(name).into_owned();
    let input = Input::open_ranged(path).map_err(|e| named(&shown, &e))?;
    let len = input.len().unwrap_or(0);
    let (start, end) = range.unwrap_or((0, u64::MAX));
    if start > end {
        return Err(format!("{shown}: invalid range {start}:{end}"));
    }
    let (kind, options, state, span) = compute(request, &input, &shown, (start, end), engine)?;
    Ok(Partial::piece_bytes(
        kind, &options, index, name, len, span, state,
    ))
}

/// The partial result of `request` over a span of a file read elsewhere, copied whole to
/// the file at `path` (a temporary file: memory stays bounded whatever the span's length,
/// a line of gigabytes or a large gzip file): the span is `[begin, begin + its size)` of
/// the file `name`, of `len` bytes, already cut at line ends by the rule of
/// [`swath_engine::range`] (a gzip file whole), the `index`-th input of the job.
pub fn piece_of_span(
    request: &Request,
    path: &Path,
    name: &[u8],
    len: u64,
    begin: u64,
    index: u32,
    engine: &EngineOptions,
) -> Result<Vec<u8>, String> {
    let shown = String::from_utf8_lossy(name).into_owned();
    let input = Input::open_ranged(path).map_err(|e| named(&shown, &e))?;
    let size = input.len().unwrap_or(0);
    let finish = begin
        .checked_add(size)
        .filter(|&f| f <= len)
        .ok_or_else(|| {
            format!("{shown}: a span of {size} bytes from byte {begin} of a file of {len} bytes")
        })?;
    let (kind, options, state, _) = compute(request, &input, &shown, (0, u64::MAX), engine)?;
    Ok(Partial::piece_bytes(
        kind,
        &options,
        index,
        name,
        len,
        (begin, finish),
        state,
    ))
}

/// A message `name: cause` for an engine error.
fn named(shown: &str, e: &EngineError) -> String {
    format!("{shown}: {}", e.cause())
}

/// A piece's kind, options text, state bytes and span.
type Computed = (Kind, Vec<u8>, Vec<u8>, (u64, u64));

/// A piece's kind, options text, state bytes and span: `request` over the range
/// `(start, end)` of `input` (named `shown` in messages).
fn compute(
    request: &Request,
    input: &Input,
    shown: &str,
    (start, end): (u64, u64),
    engine: &EngineOptions,
) -> Result<Computed, String> {
    let eol = b'\n';
    let named = |e: &EngineError| named(shown, e);
    let span = |input: &Input| {
        swath_engine::range::line_span(input, start, end, eol).map_err(|e| named(&e))
    };
    let mut state = Vec::new();
    match request {
        Request::Wc { selected, encoding } => {
            if selected.count() == 0 {
                return Err("wc: no count asked".into());
            }
            let span = span(input)?;
            let (t, _, _) =
                swath_ops::count::count_span(input, Some(span), *encoding, selected.need(), engine)
                    .map_err(|e| named(&e))?;
            State::Wc(t).encode(&mut state);
            let options = crate::wc::options(*selected, *encoding);
            Ok((Kind::Wc, options, state, span))
        }
        Request::GrepCount {
            patterns,
            match_opts,
            invert,
            binary,
            with_filename,
            null_after_name,
        } => {
            if *binary == Binary::WithoutMatch {
                return Err("--binary-files=without-match counts whole files, not pieces".into());
            }
            let (matcher, _) = Matcher::new_lines_ending(patterns, *match_opts, eol)
                .map_err(|e| format!("grep: {}", e.message))?;
            let opts = SearchOptions {
                context: None,
                mode: Mode::Count,
                invert: *invert,
                max_count: u64::MAX,
                binary: *binary,
                check_encoding: match_opts.utf8 || match_opts.multibyte,
                line_numbers: false,
                matches: false,
                only_matching: false,
                max_line: swath_ops::search::DEFAULT_MAX_LINE,
            };
            let span = span(input)?;
            let n = swath_ops::search::count_span(input, span, &matcher, &opts, engine)
                .map_err(|e| named(&e))?
                .ok_or("grep: this search counts whole files")?;
            State::GrepCount(n).encode(&mut state);
            let options = crate::grep::options(
                *with_filename,
                *null_after_name,
                patterns,
                match_opts,
                *invert,
                *binary,
                eol,
            );
            Ok((Kind::GrepCount, options, state, span))
        }
        Request::Wf2 {
            top,
            max_line,
            article,
            self_referrer,
        } => {
            let config = crate::logs::wf2_config(article, self_referrer, *max_line)
                .map_err(|e| format!("invalid article pattern '{article}': {e}"))?;
            let mut r = Wf2::default();
            let span = log_piece(input, shown, (start, end), &config, engine, &mut r)?;
            r.encode_state(&mut state);
            let options = crate::logs::wf2_options(*top, *max_line, article, self_referrer);
            Ok((Kind::Wf2, options, state, span))
        }
        Request::Summary { top, max_line } => {
            // A piece whose log's head fits no format counts its lines as malformed.
            let (format, _) = crate::logs::log_format("auto", &crate::logs::head(input))
                .unwrap_or((swath_ops::logs::format::Format::default(), None));
            let config = SummaryConfig {
                max_line: *max_line,
                format,
                filter: Default::default(),
            };
            let mut s = Summary::default();
            let span = log_piece(input, shown, (start, end), &config, engine, &mut s)?;
            s.encode_state(&mut state);
            let statics = swath_ops::logs::summary::default_static();
            let options = crate::logs::summary_options(*top, &config, &statics);
            Ok((Kind::Summary, options, state, span))
        }
    }
}

/// A log report's tables over one range of `input` (a gzip log: the whole file, which
/// must then be the range asked); the span read.
fn log_piece<R: LineReport>(
    input: &Input,
    shown: &str,
    (start, end): (u64, u64),
    config: &R::Config,
    engine: &EngineOptions,
    report: &mut R,
) -> Result<(u64, u64), String> {
    let len = input.len().unwrap_or(0);
    if let Some(c) = crate::logs::compression(input) {
        if start != 0 || end < len {
            return Err(format!(
                "{shown}: a compressed log is one range (the whole file)"
            ));
        }
        let workers = swath_engine::sysinfo::cores();
        crate::logs::report_compressed(input, c, config, workers, report)
            .map_err(|e| format!("{shown}: {}", c.cause(&e)))?;
        return Ok((0, len));
    }
    let span =
        swath_engine::range::line_span(input, start, end, b'\n').map_err(|e| named(shown, &e))?;
    report_span(input, Some(span), config, engine, None, report).map_err(|e| named(shown, &e))?;
    Ok(span)
}
