//! The partial result of one byte range of one file (docs/partial-format.md), for each
//! report: what `--range START:END --emit-partial OUT` writes, as bytes.
//!
//! The range is cut at line ends as Hadoop and Dask cut ([`swath_engine::range`]); a gzip
//! log is one range (the whole file). Errors ([`PieceError`]) are one line that names the
//! file and the cause.

use std::path::Path;

use swath_engine::source::Source;
use swath_engine::{EngineError, EngineOptions, Input};
use swath_grep::search::{MatchOptions, Matcher};
use swath_ops::logs::summary::SummaryConfig;
use swath_ops::logs::{report_source, LineReport};
use swath_ops::report::{
    GrepCount, GrepCountConfig, LogPieceError, LogSummary, LogWf2, PieceOf, Report, Wc, WcConfig,
};
use swath_ops::search::{Binary, Mode, SearchOptions};

use crate::error::PieceError;
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
        /// `--4xx-to-unique-count`.
        visitors_4xx: bool,
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
) -> Result<Vec<u8>, PieceError> {
    use std::os::unix::ffi::OsStrExt;
    let name = name.unwrap_or(path.as_os_str().as_bytes());
    let shown = String::from_utf8_lossy(name).into_owned();
    let input = Input::open_ranged(path).map_err(|e| named(&shown, e))?;
    let len = input.len().unwrap_or(0);
    let (start, end) = range.unwrap_or((0, u64::MAX));
    if start > end {
        return Err(PieceError::InvalidRange {
            name: shown,
            start,
            end,
        });
    }
    let at = Target {
        index,
        name,
        len,
        offset: 0,
    };
    compute(request, &input, &shown, (start, end), engine, &at)
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
) -> Result<Vec<u8>, PieceError> {
    let shown = String::from_utf8_lossy(name).into_owned();
    let input = Input::open_ranged(path).map_err(|e| named(&shown, e))?;
    let size = input.len().unwrap_or(0);
    // The span is the whole copy: `[begin, begin + size)`, within the file.
    if begin.checked_add(size).is_none_or(|finish| finish > len) {
        return Err(PieceError::SpanOutside {
            name: shown,
            size,
            begin,
            len,
        });
    }
    let at = Target {
        index,
        name,
        len,
        offset: begin,
    };
    compute(request, &input, &shown, (0, u64::MAX), engine, &at)
}

/// An engine error about the file named `shown`.
fn named(shown: &str, cause: EngineError) -> PieceError {
    PieceError::Engine {
        name: shown.to_string(),
        cause,
    }
}

/// The input a piece's partial names (see [`PieceOf`]), but its options.
struct Target<'a> {
    index: u32,
    name: &'a [u8],
    len: u64,
    offset: u64,
}

impl Target<'_> {
    /// The piece of this input, computed with `options`.
    fn of<'a>(&'a self, options: &'a [u8]) -> PieceOf<'a> {
        PieceOf {
            options,
            index: self.index,
            name: self.name,
            len: self.len,
            offset: self.offset,
        }
    }
}

/// The partial of `request` over the range `(start, end)` of `input` (named `shown` in
/// messages), for the input `at`, as bytes.
fn compute(
    request: &Request,
    input: &Input,
    shown: &str,
    range: (u64, u64),
    engine: &EngineOptions,
    at: &Target<'_>,
) -> Result<Vec<u8>, PieceError> {
    let eol = b'\n';
    let named = |e: EngineError| named(shown, e);
    match request {
        Request::Wc { selected, encoding } => {
            if selected.count() == 0 {
                return Err(PieceError::NoCount);
            }
            let config = WcConfig {
                encoding: *encoding,
                need: selected.need(),
            };
            let options = crate::wc::options(*selected, *encoding);
            swath_ops::report::piece::<Wc>(&at.of(&options), input, range, &config, engine)
                .map_err(named)
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
                return Err(PieceError::WithoutMatch);
            }
            let (matcher, _) = Matcher::new_lines_ending(patterns, *match_opts, eol)
                .map_err(PieceError::Pattern)?;
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
            let config = GrepCountConfig::new(&matcher, &opts).ok_or(PieceError::WholeFiles)?;
            let options = crate::grep::options(
                *with_filename,
                *null_after_name,
                patterns,
                match_opts,
                *invert,
                *binary,
                eol,
            );
            swath_ops::report::piece::<GrepCount>(&at.of(&options), input, range, &config, engine)
                .map_err(named)
        }
        Request::Wf2 {
            top,
            max_line,
            article,
            self_referrer,
        } => {
            let config =
                crate::logs::wf2_config(article, self_referrer, *max_line).map_err(|cause| {
                    PieceError::Article {
                        article: article.clone(),
                        cause,
                    }
                })?;
            let options = crate::logs::wf2_options(*top, *max_line, article, self_referrer);
            log_piece::<LogWf2, _>(input, shown, range, &config, engine, &at.of(&options))
        }
        Request::Summary {
            top,
            max_line,
            visitors_4xx,
        } => {
            // A piece whose log's head fits no format counts its lines as malformed.
            let (format, _) = crate::logs::log_format("auto", &Source::file(input).head())
                .unwrap_or((swath_ops::logs::format::Format::default(), None));
            let config = SummaryConfig {
                max_line: *max_line,
                format,
                filter: Default::default(),
                visitors_4xx: *visitors_4xx,
            };
            let statics = swath_ops::logs::summary::default_static();
            let options = crate::logs::summary_options(*top, &config, &statics);
            log_piece::<LogSummary, _>(input, shown, range, &config, engine, &at.of(&options))
        }
    }
}

/// A log report's partial over one range of `input` (a compressed log: the whole file,
/// which must then be the range asked), as bytes.
fn log_piece<R, F>(
    input: &Input,
    shown: &str,
    (start, end): (u64, u64),
    config: &F::Config,
    engine: &EngineOptions,
    of: &PieceOf<'_>,
) -> Result<Vec<u8>, PieceError>
where
    R: for<'c> Report<Fold = F, Config<'c> = F::Config>,
    F: LineReport,
{
    let len = input.len().unwrap_or(0);
    let whole = start == 0 && end >= len;
    let read = |mut source: Source<'_>, report: &mut F| {
        report_source(&mut source, config, engine, None, report).map(drop)
    };
    swath_ops::report::log_piece::<R, F, _>(of, input, ((start, end), whole), config, engine, read)
        .map_err(|e| match e {
            LogPieceError::CompressedRange => PieceError::CompressedRange {
                name: shown.to_string(),
            },
            LogPieceError::Source(cause) | LogPieceError::Read(cause) => PieceError::Source {
                name: shown.to_string(),
                cause,
            },
            LogPieceError::Engine(e) => named(shown, e),
        })
}
