//! The partial result of one byte range of one file (docs/partial-format.md), for each
//! report: what `--range START:END --emit-partial OUT` writes, as bytes.
//!
//! The range is cut at line ends as Hadoop and Dask cut ([`swath_engine::range`]); a gzip
//! log is one range (the whole file). Errors are one line that names the file and the
//! cause.

use std::path::Path;

use swath_engine::{EngineError, EngineOptions, Input};
use swath_kernels::search::{MatchOptions, Matcher};
use swath_ops::logs::{report_span, LineReport, Summary, SummaryConfig, Wf2};
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
/// at `path`, the `index`-th input of the job, as bytes.
pub fn piece(
    request: &Request,
    path: &Path,
    index: u32,
    range: Option<(u64, u64)>,
    engine: &EngineOptions,
) -> Result<Vec<u8>, String> {
    use std::os::unix::ffi::OsStrExt;
    let shown = path.display();
    let named = |e: &EngineError| match e {
        EngineError::Io { cause, .. } => {
            format!("{shown}: {}", swath_engine::error::os_message(cause))
        }
        other => format!("{shown}: {}", cause_of(&other.to_string())),
    };
    let input = Input::open(path).map_err(|e| named(&e))?;
    let len = input.len().unwrap_or(0);
    let name = path.as_os_str().as_bytes().to_vec();
    let (start, end) = range.unwrap_or((0, u64::MAX));
    if start > end {
        return Err(format!("{shown}: invalid range {start}:{end}"));
    }
    let eol = b'\n';
    let span = |input: &Input| {
        swath_engine::range::line_span(input, start, end, eol).map_err(|e| named(&e))
    };
    let (options, state, span) = match request {
        Request::Wc { selected, encoding } => {
            if selected.count() == 0 {
                return Err("wc: no count asked".into());
            }
            let span = span(&input)?;
            let (t, _, _) = swath_ops::count::count_span(
                &input,
                Some(span),
                *encoding,
                selected.need(),
                engine,
            )
            .map_err(|e| named(&e))?;
            (crate::wc::options(*selected, *encoding), State::Wc(t), span)
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
                utf8: match_opts.utf8,
                line_numbers: false,
                matches: false,
                only_matching: false,
                max_line: swath_ops::search::DEFAULT_MAX_LINE,
            };
            let span = span(&input)?;
            let n = swath_ops::search::count_span(&input, span, &matcher, &opts, engine)
                .map_err(|e| named(&e))?
                .ok_or("grep: this search counts whole files")?;
            let options = crate::grep::options(
                *with_filename,
                *null_after_name,
                patterns,
                match_opts,
                *invert,
                *binary,
                eol,
            );
            (options, State::GrepCount(n), span)
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
            let span = log_piece(&input, (start, end), &config, engine, &mut r, &named)?;
            let mut state = Vec::new();
            r.encode_state(&mut state);
            let options = crate::logs::wf2_options(*top, *max_line, article, self_referrer);
            return Ok(Partial::piece_bytes(
                Kind::Wf2,
                &options,
                index,
                &name,
                len,
                span,
                &state,
            ));
        }
        Request::Summary { top, max_line } => {
            let config = SummaryConfig {
                max_line: *max_line,
            };
            let mut s = Summary::default();
            let span = log_piece(&input, (start, end), &config, engine, &mut s, &named)?;
            let mut state = Vec::new();
            s.encode_state(&mut state);
            let options = crate::logs::summary_options(*top, *max_line);
            return Ok(Partial::piece_bytes(
                Kind::Summary,
                &options,
                index,
                &name,
                len,
                span,
                &state,
            ));
        }
    };
    Ok(Partial::piece(options, index, name, len, span, state).to_bytes())
}

/// A log report's tables over one range of `input` (a gzip log: the whole file, which
/// must then be the range asked); the span read.
fn log_piece<R: LineReport>(
    input: &Input,
    (start, end): (u64, u64),
    config: &R::Config,
    engine: &EngineOptions,
    report: &mut R,
    named: &dyn Fn(&EngineError) -> String,
) -> Result<(u64, u64), String> {
    let len = input.len().unwrap_or(0);
    if crate::logs::is_gzip(input) {
        if start != 0 || end < len {
            return Err(format!(
                "{}: a compressed log is one range (the whole file)",
                input.name()
            ));
        }
        let workers = swath_engine::sysinfo::cores();
        crate::logs::report_gzip(input, config, workers, report).map_err(|e| {
            let cause = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                "unexpected end of gzip data (truncated file?)".to_string()
            } else {
                swath_engine::error::os_message(&e)
            };
            format!("{}: {cause}", input.name())
        })?;
        return Ok((0, len));
    }
    let span = swath_engine::range::line_span(input, start, end, b'\n').map_err(|e| named(&e))?;
    report_span(input, Some(span), config, engine, None, report).map_err(|e| named(&e))?;
    Ok(span)
}

/// The cause in an engine message `name: cause`.
fn cause_of(text: &str) -> &str {
    text.split_once(": ").map_or(text, |x| x.1)
}
