//! `swath grep`: GNU grep 3.8's options, output and exit statuses, searching each file on all
//! cores in blocks of whole lines and many small files at once.
//!
//! Options are parsed with GNU getopt's rules ([`crate::getopt`]); the patterns are translated
//! into one regular expression ([`swath_grep::search::Matcher`]); each file is searched by
//! [`swath_ops::search::search`], which hands selected lines back in file order; this module
//! formats them as GNU grep does (file name, line number, byte offset, context lines and
//! group separators, `-T`, colours, `-o`, `-c`, `-l`, `-L`) and keeps GNU's exit status: 0
//! when a line was selected, 1 when none, 2 on an error (unless `-q` found a match).
//!
//! With `-r`/`-R` each directory operand is walked first in GNU's `fts` order
//! ([`swath_engine::walk`]), `--include`/`--exclude`/`--exclude-dir` applied as gnulib's
//! `exclude` module applies them (glibc's `fnmatch`); the files found are then searched like
//! operands: small ones on the pool, results in walk order.

use std::ffi::{OsStr, OsString};
use std::io::{self, IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use swath_engine::dirs::Links;
use swath_engine::input::Wait;
use swath_engine::{EngineError, EngineOptions, Flow, Input, Layout, Strategy};
use swath_grep::pattern::Syntax;
use swath_grep::search::{MatchOptions, Matcher};
use swath_ops::search::{search, Binary, Context, Event, Mode, SearchOptions, Selected};

use crate::engine_args::Stopwatch;
use crate::getopt::{getopt, HasArg, LongOpt};
use crate::status::Status;
use crate::stdout::{Stdout, Voice};

/// GNU grep's short options.
const SHORT: &str = "0123456789A:B:C:D:EFGHIPTUVX:abcd:e:f:hiLlm:noqRrsuvwxyZz";

/// Keys reported for short options (each letter as a string).
const SHORT_KEYS: &[&str] = &[
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F", "G", "H", "I",
    "P", "T", "U", "V", "X", "a", "b", "c", "d", "e", "f", "h", "i", "L", "l", "m", "n", "o", "q",
    "R", "r", "s", "u", "v", "w", "x", "y", "Z", "z",
];

const fn opt(name: &'static str, has_arg: HasArg, key: &'static str) -> LongOpt {
    LongOpt { name, has_arg, key }
}

/// The long options grep's parser takes (for the completions' check).
#[cfg(test)]
pub fn long_options() -> &'static [LongOpt] {
    LONG
}

/// GNU grep 3.8's long options, in its table's order (ambiguity messages list them so).
const LONG: &[LongOpt] = &[
    opt("basic-regexp", HasArg::No, "G"),
    opt("extended-regexp", HasArg::No, "E"),
    opt("fixed-regexp", HasArg::No, "F"),
    opt("fixed-strings", HasArg::No, "F"),
    opt("perl-regexp", HasArg::No, "P"),
    opt("after-context", HasArg::Required, "A"),
    opt("before-context", HasArg::Required, "B"),
    opt("binary-files", HasArg::Required, "binary-files"),
    opt("byte-offset", HasArg::No, "b"),
    opt("context", HasArg::Required, "C"),
    opt("color", HasArg::Optional, "color"),
    opt("colour", HasArg::Optional, "color"),
    opt("count", HasArg::No, "c"),
    opt("devices", HasArg::Required, "D"),
    opt("directories", HasArg::Required, "d"),
    opt("exclude", HasArg::Required, "exclude"),
    opt("exclude-from", HasArg::Required, "exclude-from"),
    opt("exclude-dir", HasArg::Required, "exclude-dir"),
    opt("file", HasArg::Required, "f"),
    opt("files-with-matches", HasArg::No, "l"),
    opt("files-without-match", HasArg::No, "L"),
    opt("group-separator", HasArg::Required, "group-separator"),
    opt("help", HasArg::No, "help"),
    opt("include", HasArg::Required, "include"),
    opt("ignore-case", HasArg::No, "i"),
    opt("no-ignore-case", HasArg::No, "no-ignore-case"),
    opt("initial-tab", HasArg::No, "T"),
    opt("label", HasArg::Required, "label"),
    opt("line-buffered", HasArg::No, "line-buffered"),
    opt("line-number", HasArg::No, "n"),
    opt("line-regexp", HasArg::No, "x"),
    opt("max-count", HasArg::Required, "m"),
    opt("no-filename", HasArg::No, "h"),
    opt("no-group-separator", HasArg::No, "group-separator"),
    opt("no-messages", HasArg::No, "s"),
    opt("null", HasArg::No, "Z"),
    opt("null-data", HasArg::No, "z"),
    opt("only-matching", HasArg::No, "o"),
    opt("quiet", HasArg::No, "q"),
    opt("recursive", HasArg::No, "r"),
    opt("dereference-recursive", HasArg::No, "R"),
    opt("regexp", HasArg::Required, "e"),
    opt("invert-match", HasArg::No, "v"),
    opt("silent", HasArg::No, "q"),
    opt("text", HasArg::No, "a"),
    opt("binary", HasArg::No, "U"),
    opt("unix-byte-offsets", HasArg::No, "u"),
    opt("version", HasArg::No, "V"),
    opt("with-filename", HasArg::No, "H"),
    opt("word-regexp", HasArg::No, "w"),
];

/// GNU's default colours (GREP_COLORS='ms=01;31:mc=01;31:sl=:cx=:fn=35:ln=32:bn=32:se=36').
#[derive(Debug, Clone)]
struct Colors {
    selected_match: String,
    context_match: String,
    selected_line: String,
    context_line: String,
    /// `rv`: with -v, selected lines take the context line colour and the other way round.
    reverse: bool,
    file_name: String,
    line_num: String,
    byte_num: String,
    sep: String,
    /// `\33[K` after each start and end sequence (off with `ne`).
    erase: bool,
}

impl Colors {
    /// GNU's colours from GREP_COLORS, and the deprecated GREP_COLOR (with GNU's warning)
    /// when GREP_COLORS does not set the match colour.
    fn from_env(prog: &str) -> Colors {
        let mut c = Colors {
            selected_match: "01;31".into(),
            context_match: "01;31".into(),
            selected_line: String::new(),
            context_line: String::new(),
            reverse: false,
            file_name: "35".into(),
            line_num: "32".into(),
            byte_num: "32".into(),
            sep: "36".into(),
            erase: true,
        };
        let old = std::env::var("GREP_COLOR")
            .ok()
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b';'));
        let mut match_set = false;
        if let Some(v) = std::env::var_os("GREP_COLORS") {
            for item in v.to_string_lossy().split(':') {
                match_set |= matches!(item.split('=').next(), Some("mt" | "ms" | "mc"));
                let (k, val) = item.split_once('=').unwrap_or((item, ""));
                match k {
                    "mt" => {
                        c.selected_match = val.into();
                        c.context_match = val.into();
                    }
                    "ms" => c.selected_match = val.into(),
                    "mc" => c.context_match = val.into(),
                    "sl" => c.selected_line = val.into(),
                    "cx" => c.context_line = val.into(),
                    "rv" => c.reverse = true,
                    "fn" => c.file_name = val.into(),
                    "ln" => c.line_num = val.into(),
                    "bn" => c.byte_num = val.into(),
                    "se" => c.sep = val.into(),
                    "ne" => c.erase = false,
                    _ => {}
                }
            }
        }
        if let Some(old) = old {
            if !match_set {
                eprintln!(
                    "{prog}: warning: GREP_COLOR='{old}' is deprecated; use GREP_COLORS='mt={old}'"
                );
                c.context_match = old.clone();
                c.selected_match = old;
            }
        }
        c
    }

    fn start(&self, out: &mut Vec<u8>, cap: &str) {
        if !cap.is_empty() {
            out.extend_from_slice(b"\x1b[");
            out.extend_from_slice(cap.as_bytes());
            out.extend_from_slice(if self.erase { b"m\x1b[K" } else { b"m" });
        }
    }

    fn end(&self, out: &mut Vec<u8>, cap: &str) {
        if !cap.is_empty() {
            out.extend_from_slice(if self.erase {
                b"\x1b[m\x1b[K"
            } else {
                b"\x1b[m"
            });
        }
    }
}

/// Everything that shapes the output, fixed for the run.
struct Format {
    with_filename: bool,
    line_number: bool,
    byte_offset: bool,
    only_matching: bool,
    null_after_name: bool,
    line_buffered: bool,
    /// `-T`: a tab before each line's text, numbers right-aligned.
    initial_tab: bool,
    /// `-v`: which lines have matches to show (the context lines then).
    invert: bool,
    /// The line end: `\n`, or NUL with `-z`.
    eol: u8,
    color: Option<Colors>,
}

impl Format {
    fn colored(&self, out: &mut Vec<u8>, pick: impl Fn(&Colors) -> &str, text: &[u8]) {
        match &self.color {
            Some(c) => {
                let cap = pick(c);
                c.start(out, cap);
                out.extend_from_slice(text);
                c.end(out, cap);
            }
            None => out.extend_from_slice(text),
        }
    }

    fn sep(&self, out: &mut Vec<u8>, sep: u8) {
        self.colored(out, |c| &c.sep, &[sep]);
    }

    /// File name, line number and byte offset before a line or match (`sep` is `:` for a
    /// selected line, `-` for context), and `-T`'s tab before a non-empty text. `width`: the
    /// width numbers are aligned to with `-T` (GNU's, from the file's size).
    #[allow(clippy::too_many_arguments)]
    fn head(
        &self,
        out: &mut Vec<u8>,
        name: &[u8],
        number: u64,
        offset: u64,
        sep: u8,
        width: usize,
        empty: bool,
    ) {
        if self.with_filename {
            self.colored(out, |c| &c.file_name, name);
            if self.null_after_name {
                out.push(0);
            } else {
                self.sep(out, sep);
            }
        }
        if self.line_number {
            self.colored(out, |c| &c.line_num, format!("{number:>width$}").as_bytes());
            self.sep(out, sep);
        }
        if self.byte_offset {
            self.colored(out, |c| &c.byte_num, format!("{offset:>width$}").as_bytes());
            self.sep(out, sep);
        }
        if self.initial_tab
            && (self.with_filename || self.line_number || self.byte_offset)
            && !empty
        {
            out.push(b'\t');
        }
    }

    /// A selected or context line (or its matches, with `-o`), as GNU's `prline` prints it.
    fn line(&self, out: &mut Vec<u8>, name: &[u8], s: &Selected<'_>, width: usize) {
        let sep = if s.context { b'-' } else { b':' };
        // GNU: the matches shown are those of the matching lines (context lines with -v).
        let matching = s.context == self.invert;
        if self.only_matching {
            if matching {
                for m in s.matches {
                    let off = s.offset + m.start as u64;
                    self.head(out, name, s.number, off, sep, width, m.is_empty());
                    self.colored(out, |c| self.match_color(c, s.context), &s.line[m.clone()]);
                    out.push(self.eol);
                }
            }
            return;
        }
        self.head(out, name, s.number, s.offset, sep, width, s.line.is_empty());
        match &self.color {
            Some(c) => {
                let line_color = self.line_color(c, s.context);
                let mut at = 0;
                if matching && !self.match_color(c, s.context).is_empty() {
                    for m in s.matches {
                        // GNU starts the line colour before the text ahead of each match
                        // (and leaves it to the match's colour to end).
                        c.start(out, line_color);
                        out.extend_from_slice(&s.line[at..m.start]);
                        self.colored(out, |c| self.match_color(c, s.context), &s.line[m.clone()]);
                        at = m.end;
                    }
                }
                // The rest in the line colour, a final CR left out of it.
                let rest = &s.line[at..];
                let cr = usize::from(rest.last() == Some(&b'\r'));
                let (body, tail) = rest.split_at(rest.len() - cr);
                if !body.is_empty() {
                    c.start(out, line_color);
                    out.extend_from_slice(body);
                    c.end(out, line_color);
                }
                out.extend_from_slice(tail);
            }
            None => out.extend_from_slice(s.line),
        }
        out.push(self.eol);
    }

    fn match_color<'c>(&self, c: &'c Colors, context: bool) -> &'c str {
        if context {
            &c.context_match
        } else {
            &c.selected_match
        }
    }

    fn line_color<'c>(&self, c: &'c Colors, context: bool) -> &'c str {
        if !context ^ (self.invert && c.reverse) {
            &c.selected_line
        } else {
            &c.context_line
        }
    }
}

/// Parsed command line.
struct Config {
    patterns: Vec<Vec<u8>>,
    /// Where each pattern came from: a -f file and line, or the command line.
    sources: Vec<Option<(Vec<u8>, usize)>>,
    match_opts: MatchOptions,
    mode: Mode,
    list: Option<bool>,
    count: bool,
    invert: bool,
    max_count: u64,
    /// `-m 0`: GNU exits at once (unless -L).
    max_count_given_zero: bool,
    binary: Binary,
    quiet: bool,
    no_messages: bool,
    label: Vec<u8>,
    files: Vec<OsString>,
    format: Format,
    engine: EngineOptions,
    time: bool,
    /// `--json`: ripgrep's JSON Lines instead of GNU's text ([`crate::cmd::grep_json`]).
    json: bool,
    /// `--max-line`: the longest line gathered from a pipe.
    max_line: usize,
    /// `--emit-partial` and its range.
    partial: PartialArgs,
    /// `-H` (true) or `-h` (false), when given.
    with_filename_given: Option<bool>,
    /// `-A`, `-B`, `-C`, `-NUM` (when any was given).
    context: Option<Context>,
    /// `--group-separator` (`--` by default; `None` with `--no-group-separator`).
    group_separator: Option<Vec<u8>>,
    /// `-d`, `-r`, `-R`.
    directories: Directories,
    /// `-R`: links followed inside trees.
    follow: swath_engine::walk::Follow,
    /// `-D`.
    devices: Devices,
    /// `--include` (true) and `--exclude`/`--exclude-from` (false) patterns, in order.
    excludes: Vec<(Vec<u8>, bool)>,
    /// `--exclude-dir` patterns.
    exclude_dirs: Vec<(Vec<u8>, bool)>,
    /// `-r` without a file operand: `.` is searched and its `./` left out of names.
    omit_dot_slash: bool,
}

/// What to do with a directory (`-d`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Directories {
    /// Read it as a file (GNU reports "Is a directory").
    Read,
    /// Search the files below it.
    Recurse,
    /// Leave it out silently.
    Skip,
}

/// What to do with devices, FIFOs and sockets (`-D`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Devices {
    /// Read them.
    Read,
    /// Leave them out.
    Skip,
    /// Read those named on the command line, leave out those found in a tree (the default).
    ReadCommandLine,
}

pub fn main(prog: &str, args: Vec<OsString>) -> ExitCode {
    let cfg = match parse(prog, args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if cfg.match_opts.syntax == Syntax::Perl && cfg.match_opts.multibyte {
        // GNU's PCRE2 reads UTF-8 or bytes only.
        return die(prog, "-P supports only unibyte and UTF-8 locales");
    }
    if cfg.match_opts.syntax == Syntax::Perl && cfg.patterns.len() > 1 {
        return die(prog, "the -P option only supports a single pattern");
    }
    let errors = swath_grep::search::pattern_errors(&cfg.patterns, cfg.match_opts);
    if !errors.is_empty() {
        for (i, e) in errors {
            if e.is_stack_overflow() {
                // GNU's parsers died there: no file and line, no later pattern's error.
                eprint_bytes(prog, e.message.as_bytes());
                break;
            }
            // (An error of the whole list has no source.)
            let at = match cfg.sources.get(i).and_then(Option::as_ref) {
                Some((file, line)) => [&file[..], format!(":{line}: ").as_bytes()].concat(),
                None => Vec::new(),
            };
            eprint_bytes(prog, &[&at[..], e.message.as_bytes()].concat());
        }
        return ExitCode::from(Status::Trouble);
    }
    let (mut matcher, warnings) =
        match Matcher::new_lines_ending(&cfg.patterns, cfg.match_opts, cfg.format.eol) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{prog}: {}", e.message);
                return ExitCode::from(Status::Trouble);
            }
        };
    if cfg.mode == Mode::Print
        && (cfg.format.only_matching || cfg.format.color.is_some() || cfg.json)
    {
        if let Err(e) = matcher.use_longest_matches() {
            eprintln!("{prog}: {}", e.message);
            return ExitCode::from(Status::Trouble);
        }
    }
    // Debian's grep 3.8 keeps upstream's stray-backslash warnings off unless asked for.
    let stray_ok = std::env::var_os("DEB_GREP_ENABLE_STRAY_BACKSLASH_WARN").is_some();
    for w in warnings {
        if stray_ok || !w.starts_with(b"stray \\") {
            eprint_bytes(prog, &[&b"warning: "[..], &w].concat());
        }
    }
    // GNU gives up at once when nothing can be selected (-m 0, no patterns, -v '').
    let nothing = cfg.max_count_given_zero
        || (cfg.patterns.is_empty() && !cfg.invert)
        || (cfg.patterns.len() == 1
            && cfg.patterns[0].is_empty()
            && cfg.invert
            && !cfg.match_opts.word
            && !cfg.match_opts.line);
    if cfg.partial.emit.is_some() {
        return emit_partial(prog, &cfg, &matcher);
    }
    if nothing && cfg.list != Some(false) {
        return ExitCode::from(Status::NONE_SELECTED);
    }
    run(prog, &cfg, &matcher)
}

/// The options text of a `grep -c` partial (see [`swath_report::grep::options`]).
fn partial_options(cfg: &Config) -> Vec<u8> {
    swath_report::grep::options(
        cfg.with_filename_given,
        cfg.format.null_after_name,
        &cfg.patterns,
        &cfg.match_opts,
        cfg.invert,
        cfg.binary,
        cfg.format.eol,
    )
}

/// `grep -c --emit-partial OUT [--range START:END] FILE`: the count of one byte range of one
/// file (whole lines, see `swath_engine::range`), written as a partial result.
fn emit_partial(prog: &str, cfg: &Config, matcher: &Matcher) -> ExitCode {
    let out = cfg.partial.emit.as_ref().expect("asked for");
    let one_file = cfg.files.len() == 1
        && cfg.files[0] != "-"
        && !(cfg.directories == Directories::Recurse
            && swath_engine::walk::is_dir(Path::new(&cfg.files[0])));
    if !cfg.count || cfg.list.is_some() || cfg.quiet || !one_file {
        return usage(
            prog,
            Some("--emit-partial takes -c and exactly one FILE (a regular file)"),
        );
    }
    if cfg.max_count != u64::MAX || cfg.binary == Binary::WithoutMatch {
        return usage(
            prog,
            Some(
                "-m and --binary-files=without-match count whole files, not --emit-partial pieces",
            ),
        );
    }
    if cfg.format.color.is_some() {
        return usage(prog, Some("--color=always is not kept in partial results"));
    }
    let name = &cfg.files[0];
    let fail = |e: &EngineError| {
        eprint_bytes(prog, &error_text(name.as_bytes(), e));
        ExitCode::from(Status::Trouble)
    };
    let input = match Input::open_ranged(Path::new(name)) {
        Ok(i) => i,
        Err(e) => return fail(&e),
    };
    let (start, end) = cfg.partial.range.unwrap_or((0, u64::MAX));
    let span = match swath_engine::range::line_span(&input, start, end, cfg.format.eol) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let opts = SearchOptions {
        context: None,
        mode: Mode::Count,
        invert: cfg.invert,
        max_count: u64::MAX,
        binary: cfg.binary,
        check_encoding: cfg.match_opts.utf8 || cfg.match_opts.multibyte,
        line_numbers: false,
        matches: false,
        only_matching: false,
        max_line: cfg.max_line,
    };
    let n = match swath_ops::search::count_span(&input, span, matcher, &opts, &cfg.engine) {
        Ok(Some(n)) => n,
        Ok(None) => unreachable!("-m and without-match are refused above"),
        Err(e) => return fail(&e),
    };
    let state = swath_ops::partial::State::GrepCount(n);
    let len = input.len().unwrap_or(0);
    let options = partial_options(cfg);
    match crate::cmd::partial::write_piece(
        Path::new(out),
        options,
        cfg.partial.index,
        name,
        len,
        span,
        state,
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => die(prog, &m),
    }
}

fn usage(prog: &str, msg: Option<&str>) -> ExitCode {
    if let Some(m) = msg {
        eprintln!("{prog}: {m}");
    }
    eprintln!("Usage: {prog} [OPTION]... PATTERNS [FILE]...");
    eprintln!("Try '{prog} --help' for more information.");
    ExitCode::from(Status::Trouble)
}

fn die(prog: &str, msg: &str) -> ExitCode {
    eprintln!("{prog}: {msg}");
    ExitCode::from(Status::Trouble)
}

/// Takes swath's own engine options out of `args` (exact names only, so that GNU's
/// abbreviations such as `--t` for `--text` keep working).
fn take_engine_options(
    prog: &str,
    args: Vec<OsString>,
) -> Result<(Vec<OsString>, EngineOptions, OwnFlags, usize, PartialArgs), ExitCode> {
    let mut rest = Vec::with_capacity(args.len());
    let mut engine = EngineOptions::default();
    let mut flags = OwnFlags::default();
    let mut max_line = swath_ops::search::DEFAULT_MAX_LINE;
    let mut partial = PartialArgs::default();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "--" {
            rest.push(a);
            rest.extend(it);
            break;
        }
        let text = a.to_string_lossy().into_owned();
        if text == "--time" {
            flags.time = true;
            continue;
        }
        if text == "--json" {
            flags.json = true;
            continue;
        }
        let Some((name, inline)) = [
            "threads",
            "block-size",
            "strategy",
            "layout",
            "max-line",
            "range",
            "emit-partial",
            "operand-index",
        ]
        .iter()
        .find_map(|n| {
            let flag = format!("--{n}");
            if text == flag {
                Some((*n, None))
            } else {
                text.strip_prefix(&format!("{flag}="))
                    .map(|v| (*n, Some(v.to_string())))
            }
        }) else {
            rest.push(a);
            continue;
        };
        let value = match inline.or_else(|| it.next().map(|v| v.to_string_lossy().into_owned())) {
            Some(v) => v,
            None => {
                return Err(usage(
                    prog,
                    Some(&format!("option '--{name}' requires an argument")),
                ))
            }
        };
        let bad = |what: &str| die(prog, &format!("invalid {what} '{value}'"));
        match name {
            "threads" => engine.threads = Some(value.parse().map_err(|_| bad("thread count"))?),
            "block-size" => match crate::size::parse_size(&value) {
                Ok(n) if (1..=1 << 30).contains(&n) => engine.block_size = Some(n as usize),
                _ => return Err(bad("block size")),
            },
            "strategy" => {
                engine.strategy = value.parse::<Strategy>().map_err(|_| bad("strategy"))?
            }
            "max-line" => match crate::size::parse_size(&value) {
                Ok(n) if (1..=1 << 40).contains(&n) => max_line = n as usize,
                _ => return Err(bad("line bound")),
            },
            "range" => {
                partial.range = Some(
                    crate::cmd::wc::parse_range(Some(&value)).map_err(|m| usage(prog, Some(&m)))?,
                )
            }
            "emit-partial" => partial.emit = Some(OsString::from(&value)),
            "operand-index" => partial.index = value.parse().map_err(|_| bad("operand index"))?,
            _ => engine.layout = value.parse::<Layout>().map_err(|_| bad("layout"))?,
        }
    }
    Ok((rest, engine, flags, max_line, partial))
}

/// swath's own options without a value.
#[derive(Debug, Default)]
struct OwnFlags {
    /// `--time`.
    time: bool,
    /// `--json`.
    json: bool,
}

/// `--emit-partial OUT`, `--range START:END`, `--operand-index K` (with `-c`).
#[derive(Debug, Default)]
struct PartialArgs {
    emit: Option<OsString>,
    range: Option<(u64, u64)>,
    index: u32,
}

fn parse(prog: &str, args: Vec<OsString>) -> Result<Config, ExitCode> {
    let (args, engine, flags, max_line, partial) = take_engine_options(prog, args)?;
    let posix = std::env::var_os("POSIXLY_CORRECT").is_some();
    let p = getopt(&args, SHORT, SHORT_KEYS, LONG, posix);
    let mut syntax: Option<Syntax> = None;
    let mut patterns: Option<Vec<Vec<u8>>> = None;
    let mut sources: Vec<Option<(Vec<u8>, usize)>> = Vec::new();
    let (mut ignore_case, mut word, mut line) = (false, false, false);
    let (mut count, mut list, mut invert, mut quiet, mut no_messages) =
        (false, None, false, false, false);
    let (mut line_number, mut byte_offset, mut only_matching) = (false, false, false);
    let mut with_filename: Option<bool> = None;
    let mut max_count = u64::MAX;
    let mut binary = Binary::Binary;
    let mut color = "never".to_string();
    let mut label = b"(standard input)".to_vec();
    let (mut null_after_name, mut line_buffered) = (false, false);
    let mut initial_tab = false;
    let mut null_data = false;
    // GNU's out_before, out_after and default_context: -1 until given.
    let (mut before, mut after, mut both): (Option<u64>, Option<u64>, Option<u64>) =
        (None, None, None);
    let mut digits = String::new();
    let mut digits_word = None;
    let mut group_separator = Some(b"--".to_vec());
    let mut directories = Directories::Read;
    let mut follow = swath_engine::walk::Follow::Never;
    let mut devices = Devices::ReadCommandLine;
    let mut excludes: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut exclude_dirs: Vec<(Vec<u8>, bool)> = Vec::new();
    let utf8 = crate::gnu_args::utf8_locale();
    let words = p.words.clone();
    for (n, (key, val)) in p.opts.into_iter().enumerate() {
        let v = || val.clone().unwrap_or_default();
        let mut set_syntax = |s: Syntax| -> Result<(), ExitCode> {
            if syntax.is_some_and(|old| old != s) {
                return Err(die(prog, "conflicting matchers specified"));
            }
            syntax = Some(s);
            Ok(())
        };
        match key {
            "E" => set_syntax(Syntax::Extended)?,
            "F" => set_syntax(Syntax::Fixed)?,
            "G" => set_syntax(Syntax::Basic)?,
            "P" => set_syntax(Syntax::Perl)?,
            "e" => {
                let list = patterns.get_or_insert_with(Vec::new);
                for part in v().as_bytes().split(|&b| b == b'\n') {
                    list.push(part.to_vec());
                    sources.push(None);
                }
            }
            "f" => {
                let name = v();
                let data = read_list_file(prog, &name)?;
                let list = patterns.get_or_insert_with(Vec::new);
                if !data.is_empty() {
                    let body = data.strip_suffix(b"\n").unwrap_or(&data);
                    for (n, part) in body.split(|&b| b == b'\n').enumerate() {
                        list.push(part.to_vec());
                        sources.push(Some((name.as_bytes().to_vec(), n + 1)));
                    }
                }
            }
            "i" | "y" => ignore_case = true,
            "no-ignore-case" => ignore_case = false,
            "w" => word = true,
            "x" => line = true,
            "v" => invert = true,
            "c" => count = true,
            "l" => list = Some(true),
            "L" => list = Some(false),
            "n" => line_number = true,
            "b" => byte_offset = true,
            "o" => only_matching = true,
            "q" => quiet = true,
            "s" => no_messages = true,
            "H" => with_filename = Some(true),
            "h" => with_filename = Some(false),
            "a" => binary = Binary::Text,
            "I" => binary = Binary::WithoutMatch,
            "binary-files" => {
                binary = match v().to_str() {
                    Some("binary") => Binary::Binary,
                    Some("text") => Binary::Text,
                    Some("without-match") => Binary::WithoutMatch,
                    _ => return Err(die(prog, "unknown binary-files type")),
                }
            }
            "m" => {
                let text = v().to_string_lossy().into_owned();
                max_count = match text.trim_start().parse::<i128>() {
                    // GNU: no limit, except that with -v nothing is ever selected.
                    Ok(n) if n < 0 => NEGATIVE_MAX,
                    Ok(n) => n.min(u64::MAX as i128) as u64,
                    Err(_) if is_big_number(&text) && text.trim_start().starts_with('-') => {
                        NEGATIVE_MAX
                    }
                    Err(_) if is_big_number(&text) => u64::MAX,
                    Err(_) => return Err(die(prog, "invalid max count")),
                };
            }
            "color" => {
                color = match val.as_ref().map(|s| s.to_string_lossy().to_lowercase()) {
                    None => "auto".into(),
                    Some(s) => match s.as_str() {
                        "always" | "yes" | "force" => "always".into(),
                        "never" | "no" | "none" => "never".into(),
                        "auto" | "tty" | "if-tty" => "auto".into(),
                        _ => {
                            // GNU shows its help (and succeeds) for an unknown WHEN.
                            return Err(Stdout::print_and_exit(
                                prog,
                                Voice::Grep,
                                help_text(prog).as_bytes(),
                            ));
                        }
                    },
                }
            }
            "label" => label = v().as_bytes().to_vec(),
            "Z" => null_after_name = true,
            "line-buffered" => line_buffered = true,
            "U" => {}
            "u" => eprintln!("{prog}: warning: --unix-byte-offsets (-u) is obsolete"),
            "V" => {
                let text = format!("grep (swath) {}\n", env!("CARGO_PKG_VERSION"));
                return Err(Stdout::print_and_exit(prog, Voice::Grep, text.as_bytes()));
            }
            "help" => {
                return Err(Stdout::print_and_exit(
                    prog,
                    Voice::Grep,
                    help_text(prog).as_bytes(),
                ));
            }
            "A" => after = Some(context_length(prog, &v())?),
            "B" => before = Some(context_length(prog, &v())?),
            "C" => both = Some(context_length(prog, &v())?),
            "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" => {
                // GNU: the digits of one word make one number (-12), leading zeros dropped.
                if digits_word != Some(words[n]) || digits == "0" {
                    digits.clear();
                }
                if digits.len() == 21 {
                    return Err(die(
                        prog,
                        &format!("{digits}...: invalid context length argument"),
                    ));
                }
                digits.push_str(key);
                digits_word = Some(words[n]);
                both = Some(context_length(prog, OsStr::new(&digits))?);
            }
            "group-separator" => group_separator = val.map(|v| v.as_bytes().to_vec()),
            "T" => initial_tab = true,
            "R" => {
                follow = swath_engine::walk::Follow::Always;
                directories = Directories::Recurse;
            }
            "r" => directories = Directories::Recurse,
            "d" => {
                directories =
                    match argmatch(prog, "--directories", &v(), &["read", "recurse", "skip"])? {
                        0 => Directories::Read,
                        1 => Directories::Recurse,
                        _ => Directories::Skip,
                    }
            }
            "D" => {
                devices = match v().as_bytes() {
                    b"read" => Devices::Read,
                    b"skip" => Devices::Skip,
                    _ => return Err(die(prog, "unknown devices method")),
                }
            }
            "include" | "exclude" => excludes.push((v().as_bytes().to_vec(), key == "include")),
            "exclude-from" => {
                let name = v();
                let data = read_list_file(prog, &name)?;
                for pat in data.split(|&b| b == b'\n').filter(|p| !p.is_empty()) {
                    excludes.push((pat.to_vec(), false));
                }
            }
            "exclude-dir" => {
                let mut d = v().as_bytes().to_vec();
                while d.len() > 1 && d.ends_with(b"/") {
                    d.pop();
                }
                exclude_dirs.push((d, false));
            }
            "z" => null_data = true,
            // -X MATCHER, undocumented in GNU grep.
            "X" => match v().as_bytes() {
                b"grep" => set_syntax(Syntax::Basic)?,
                b"egrep" => set_syntax(Syntax::Extended)?,
                b"fgrep" => set_syntax(Syntax::Fixed)?,
                b"perl" => set_syntax(Syntax::Perl)?,
                b"awk" | b"gawk" | b"posixawk" => {
                    return Err(die(prog, "-X awk matchers are not supported by swath grep"))
                }
                other => {
                    return Err(die(
                        prog,
                        &format!("invalid matcher {}", String::from_utf8_lossy(other)),
                    ))
                }
            },
            _ => return Err(usage(prog, None)),
        }
    }
    // GNU acts on each option as getopt returns it, so an earlier bad value wins.
    if let Some(m) = p.error {
        return Err(usage(prog, Some(&m)));
    }
    let max_count_given_zero = max_count == 0;
    if max_count == NEGATIVE_MAX {
        max_count = if invert { 0 } else { u64::MAX };
    }
    let mut files = p.operands;
    let patterns = match patterns {
        Some(p) => {
            // GNU drops repeated patterns (they are reported once when bad).
            let mut seen = std::collections::HashSet::new();
            let keep: Vec<bool> = p.iter().map(|x| seen.insert(x.clone())).collect();
            let mut k = keep.iter();
            sources.retain(|_| *k.next().unwrap_or(&true));
            let mut k = keep.iter();
            let mut p = p;
            p.retain(|_| *k.next().unwrap_or(&true));
            p
        }
        None => {
            if files.is_empty() {
                return Err(usage(prog, None));
            }
            let first = files.remove(0);
            let list: Vec<Vec<u8>> = first
                .as_bytes()
                .split(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            sources = vec![None; list.len()];
            list
        }
    };
    let omit_dot_slash = files.is_empty() && directories == Directories::Recurse;
    if files.is_empty() {
        files.push(OsString::from(if omit_dot_slash { "." } else { "-" }));
    }
    // GNU: with -r and at most one operand, names are shown when it is a directory.
    let with_filename_given = with_filename;
    let with_filename = with_filename.unwrap_or_else(|| {
        files.len() > 1
            || (directories == Directories::Recurse
                && files[0] != "-"
                && swath_engine::walk::is_dir(Path::new(&files[0])))
    });
    let color_on = match color.as_str() {
        "always" => true,
        "auto" => {
            io::stdout().is_terminal()
                && std::env::var("TERM").is_ok_and(|t| !t.is_empty() && t != "dumb")
        }
        _ => false,
    };
    if flags.json {
        // ripgrep's choice: these print no lines, so there is nothing for the JSON to hold.
        let refused = if count {
            Some("-c (--count)")
        } else {
            match list {
                Some(true) => Some("-l (--files-with-matches)"),
                Some(false) => Some("-L (--files-without-match)"),
                None => None,
            }
        };
        if let Some(option) = refused {
            return Err(usage(
                prog,
                Some(&format!("{option} cannot be used with --json")),
            ));
        }
    }
    let mode = if quiet || list.is_some() || stdout_is_dev_null() {
        Mode::Exists
    } else if count {
        Mode::Count
    } else {
        Mode::Print
    };
    Ok(Config {
        patterns,
        sources,
        match_opts: MatchOptions {
            syntax: syntax.unwrap_or(Syntax::Basic),
            ignore_case,
            word,
            line,
            utf8,
            multibyte: crate::gnu_args::other_multibyte_locale(),
        },
        mode,
        list,
        count,
        invert,
        max_count,
        max_count_given_zero,
        binary,
        quiet,
        no_messages,
        label,
        format: Format {
            with_filename,
            line_number,
            byte_offset,
            only_matching,
            null_after_name,
            line_buffered,
            initial_tab,
            invert,
            eol: if null_data { 0 } else { b'\n' },
            color: color_on.then(|| Colors::from_env(prog)),
        },
        files,
        engine,
        time: flags.time,
        json: flags.json,
        max_line,
        partial,
        with_filename_given,
        context: (before.is_some() || after.is_some() || both.is_some()).then(|| Context {
            before: before.or(both).unwrap_or(0),
            after: after.or(both).unwrap_or(0),
        }),
        group_separator,
        directories,
        follow,
        devices,
        excludes,
        exclude_dirs,
        omit_dot_slash,
    })
}

/// GNU's `context_length_arg`: a decimal number of lines, at least 0 (leading blanks and a
/// sign allowed; too big means no limit), else `ARG: invalid context length argument`.
fn context_length(prog: &str, arg: &OsStr) -> Result<u64, ExitCode> {
    let text = arg.as_bytes();
    let bad = || {
        eprint_bytes(prog, &[text, b": invalid context length argument"].concat());
        ExitCode::from(Status::Trouble)
    };
    let t = text.trim_ascii_start();
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(bad());
    }
    let zero = digits.iter().all(|&d| d == b'0');
    if neg && !zero {
        return Err(bad());
    }
    Ok(std::str::from_utf8(digits)
        .ok()
        .and_then(|d| d.parse::<u64>().ok())
        .unwrap_or(u64::MAX))
}

impl Config {
    /// The group separator's line (GNU ends it with a newline even with -z).
    fn group_separator_line(&self, out: &mut Vec<u8>) {
        if let Some(sep) = &self.group_separator {
            self.format.colored(out, |c| &c.sep, sep);
            out.push(b'\n');
        }
    }
}

/// The bytes of a -f or --exclude-from file (`-`: standard input), or GNU's `grep: FILE:
/// CAUSE` and exit status 2.
fn read_list_file(prog: &str, name: &OsStr) -> Result<Vec<u8>, ExitCode> {
    let data = if name == "-" {
        let mut d = Vec::new();
        io::Read::read_to_end(&mut io::stdin(), &mut d).map(|_| d)
    } else {
        std::fs::read(name)
    };
    data.map_err(|e| {
        let cause = swath_engine::error::os_message(&e);
        eprint_bytes(prog, &[name.as_bytes(), b": ", cause.as_bytes()].concat());
        ExitCode::from(Status::Trouble)
    })
}

/// gnulib's `argmatch` for an option's word argument: the word, or an unambiguous prefix of
/// one; else GNU's three-part message and exit status 1 (`argmatch_die`), its words quoted
/// with the locale's marks ([`crate::gnu_args::quote_marks`]).
fn argmatch(prog: &str, option: &str, arg: &OsStr, valid: &[&str]) -> Result<usize, ExitCode> {
    let a = arg.as_bytes();
    if let Some(i) = valid.iter().position(|v| v.as_bytes() == a) {
        return Ok(i);
    }
    let hits: Vec<usize> = (0..valid.len())
        .filter(|&i| !a.is_empty() && valid[i].as_bytes().starts_with(a))
        .collect();
    if hits.len() == 1 {
        return Ok(hits[0]);
    }
    let (l, r) = crate::gnu_args::quote_marks();
    let what = if hits.is_empty() {
        "invalid"
    } else {
        "ambiguous"
    };
    let mut msg = [
        prog.as_bytes(),
        format!(": {what} argument ").as_bytes(),
        l,
        a,
        r,
        b" for ",
        l,
        option.as_bytes(),
        r,
        b"\nValid arguments are:",
    ]
    .concat();
    for v in valid {
        msg.extend_from_slice(&[b"\n  - ", l, v.as_bytes(), r].concat());
    }
    msg.push(b'\n');
    let _ = io::stderr().write_all(&msg);
    eprintln!("Usage: {prog} [OPTION]... PATTERNS [FILE]...");
    eprintln!("Try '{prog} --help' for more information.");
    Err(ExitCode::from(Status::Failure))
}

/// glibc's `fnmatch(pattern, name, 0)`: `*` and `?` match `/` too.
fn fnmatch(pattern: &[u8], name: &[u8]) -> bool {
    let (Ok(p), Ok(n)) = (
        std::ffi::CString::new(pattern),
        std::ffi::CString::new(name),
    ) else {
        return false;
    };
    // SAFETY: both are valid NUL-terminated strings that outlive the call.
    unsafe { libc::fnmatch(p.as_ptr(), n.as_ptr(), 0) == 0 }
}

/// gnulib's `excluded_file_name` over grep's `--include` (true) and `--exclude` (false)
/// patterns: the last pattern given that matches decides; when none matches, a name is
/// excluded only if the first pattern given was an `--include`. `anchored` (names found in a
/// tree, which are matched whole) or not (command-line names, also matched from after each
/// `/`).
fn excluded(patterns: &[(Vec<u8>, bool)], name: &[u8], anchored: bool) -> bool {
    let Some(first) = patterns.first() else {
        return false;
    };
    let matches = |pat: &[u8]| {
        fnmatch(pat, name)
            || (!anchored
                && (0..name.len()).any(|i| {
                    name[i] == b'/'
                        && name.get(i + 1) != Some(&b'/')
                        && fnmatch(pat, &name[i + 1..])
                }))
    };
    match patterns.iter().rev().find(|(p, _)| matches(p)) {
        Some((_, include)) => !include,
        None => first.1,
    }
}

/// A negative -m, resolved once -v is known.
const NEGATIVE_MAX: u64 = u64::MAX - 1;

/// A number too big for any integer type still means "no limit" to GNU.
fn is_big_number(s: &str) -> bool {
    let t = s.trim_start();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// GNU grep treats output to /dev/null as -q: it stops at the first match.
fn stdout_is_dev_null() -> bool {
    use std::os::unix::fs::MetadataExt;
    let out = rustix_fstat_stdout();
    let null = std::fs::metadata("/dev/null");
    match (out, null) {
        (Some((dev, ino)), Ok(n)) => dev == n.dev() && ino == n.ino(),
        _ => false,
    }
}

fn rustix_fstat_stdout() -> Option<(u64, u64)> {
    // SAFETY: fstat on descriptor 1 writes into the zeroed struct we own.
    let st = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(1, &mut st) != 0 {
            return None;
        }
        st
    };
    Some((st.st_dev, st.st_ino))
}

/// What searching one file gave.
#[derive(Default)]
struct FileResult {
    /// Nothing is printed for it: no count, no name (a file GNU skips, or a message).
    skipped: bool,
    /// `error` makes the exit status 2 (a warning does not).
    error_counts: bool,
    out: Vec<u8>,
    /// The file could not be opened (no count or name line is printed for it).
    open_failed: bool,
    selected: u64,
    error: Option<Vec<u8>>,
    binary_matched: bool,
    run: Option<(swath_engine::Plan, swath_engine::RunStats)>,
    /// A line was selected and handed on (GNU's `used`: later files' first context group
    /// gets a separator).
    used: bool,
    /// Searched on the pool: `out` starts with a context group that takes a separator if
    /// an earlier file used the output.
    lead_sep: bool,
    /// `-P`: PCRE2 gave up (a limit): GNU prints this after the file's name and exits 2.
    fatal: Option<String>,
    /// Given to the pool as a small file, it turned out big: to be searched again on all
    /// cores, its lines streamed, when its turn comes.
    deferred: bool,
    /// `--json`, when the file printed its messages: its figures, for the summary.
    json: Option<crate::cmd::grep_json::FileStats>,
}

/// Files named on the command line smaller than this are searched whole by one worker of
/// the pool (bigger ones on all cores, when their turn comes).
const SMALL_FILE: u64 = 4 << 20;

/// Files found in a tree are searched by one worker of the pool up to this size (as many
/// files as there are cores at once: a tree's few big files among thousands of small ones
/// cost no hand-over); bigger ones come back deferred, to be searched on all cores.
const POOLED_MAX: u64 = 32 << 20;

/// Output a search on the pool may gather (beyond, the file comes back deferred and is
/// searched again with its lines streamed): what the pool holds stays bounded whatever the
/// files' sizes and however much of them matches.
const POOLED_OUTPUT: usize = 1 << 20;

/// One thing to search or report, in output order.
enum Target {
    /// A file: an operand (`-`: standard input) or a file found in a tree.
    File {
        path: OsString,
        /// The name shown in output and messages ([`Target::name`]).
        name: Shown,
        /// Named on the command line (GNU's `command_line`).
        command_line: bool,
        /// Found in a tree walked without following links: opened with O_NOFOLLOW.
        nofollow: bool,
        /// Found in a tree whose root is on this device, not a pseudo file system.
        real_dev: Option<u64>,
        /// Found in a tree: where to open it (its directory held open, and its name there).
        at: Option<swath_engine::walk::At>,
    },
    /// A message from a walk: an error (exit status 2) or a warning.
    Note { text: Vec<u8>, error: bool },
}

/// How a file is named in output and messages.
enum Shown {
    /// A name of its own (an operand: `-` is shown as its label).
    Own(Vec<u8>),
    /// Its path from this byte on (a file found in a tree: the whole path, or the path
    /// without the "./" GNU leaves out): no copy per file of a tree.
    PathFrom(usize),
}

impl Target {
    /// The name shown in output and messages (nothing for a message).
    fn name(&self) -> &[u8] {
        match self {
            Target::File {
                name: Shown::Own(n),
                ..
            } => n,
            Target::File {
                name: Shown::PathFrom(at),
                path,
                ..
            } => &path.as_bytes()[*at..],
            Target::Note { .. } => b"",
        }
    }
}

/// Feeds the operands, with each directory to recurse into replaced by what its walk finds,
/// in GNU's order, to `feed(target, pooled)` (pooled: small enough for one worker of the
/// pool; a file found in a tree is taken as small without a stat, and a big one comes back
/// from the pool deferred). Stops when `feed` returns false.
fn feed_targets(cfg: &Config, feed: &mut dyn FnMut(Target, bool) -> bool) {
    use swath_engine::walk::{walk, Follow, Found, Kind, Options, Order, Step};
    for op in &cfg.files {
        let recurse = cfg.directories == Directories::Recurse
            && op != "-"
            && swath_engine::walk::is_dir(Path::new(op));
        if !recurse {
            let pooled = op != "-"
                && std::fs::metadata(op).is_ok_and(|m| m.is_file() && m.len() < SMALL_FILE);
            let target = Target::File {
                path: op.clone(),
                name: Shown::Own(display_name(cfg, op)),
                command_line: true,
                nofollow: false,
                real_dev: None,
                at: None,
            };
            if !feed(target, pooled) {
                return;
            }
            continue;
        }
        if !cfg.omit_dot_slash && excluded(&cfg.exclude_dirs, op.as_bytes(), false) {
            continue;
        }
        // Where a path's shown name starts (GNU leaves "./" out of what it found in ".").
        let shown_from = |p: &OsStr| -> usize {
            if cfg.omit_dot_slash && p.len() > 1 {
                2.min(p.len())
            } else {
                0
            }
        };
        let show = |p: &OsStr| -> Vec<u8> { p.as_bytes()[shown_from(p)..].to_vec() };
        let real_dev = swath_engine::input::real_filesystem_dev(Path::new(op));
        let mut going = true;
        let opts = Options {
            follow: cfg.follow,
            order: Order::Fts,
            stat: false,
        };
        walk(op, &opts, &mut |found| {
            let target = match found {
                Found::Entry(e) => match e.kind {
                    Kind::Dir if excluded(&cfg.exclude_dirs, e.name.as_bytes(), true) => {
                        return Step::Skip
                    }
                    Kind::Dir => return Step::Continue,
                    _ if excluded(&cfg.excludes, e.name.as_bytes(), true) => return Step::Continue,
                    // GNU opens a link it does not follow with O_NOFOLLOW and says nothing
                    // of the ELOOP.
                    Kind::Symlink => return Step::Continue,
                    Kind::Special if cfg.devices != Devices::Read => return Step::Continue,
                    _ => Target::File {
                        name: Shown::PathFrom(shown_from(e.path)),
                        path: e.path.to_owned(),
                        command_line: false,
                        nofollow: cfg.follow == Follow::Never,
                        real_dev,
                        at: Some(e.at()),
                    },
                },
                Found::Error { path, error, .. } => Target::Note {
                    text: [
                        &show(path)[..],
                        b": ",
                        swath_engine::error::os_message(&error).as_bytes(),
                    ]
                    .concat(),
                    error: true,
                },
                Found::Loop { path, .. } => Target::Note {
                    text: [&show(path)[..], b": warning: recursive directory loop"].concat(),
                    error: false,
                },
            };
            going = feed(target, true);
            if going {
                Step::Continue
            } else {
                Step::Stop
            }
        });
        if !going {
            return;
        }
    }
}

fn run(prog: &str, cfg: &Config, matcher: &Matcher) -> ExitCode {
    let clock = Stopwatch::start();
    let out = std::sync::Mutex::new(Stdout::new(prog, Voice::Grep));
    let single = EngineOptions {
        threads: Some(1),
        strategy: match cfg.engine.strategy {
            Strategy::Auto => Strategy::Read,
            s => s,
        },
        ..cfg.engine.clone()
    };
    let (mut any_selected, mut any_error) = (false, false);
    let mut last_run = None;
    let mut json_totals = crate::cmd::grep_json::Totals::default();
    // GNU's `used`, across files: read by a big file's search as it streams.
    let used = AtomicBool::new(false);
    let mut fatal = false;
    // The files a walk finds are searched while it goes on; results are written in walk
    // order by whichever worker completes them.
    swath_engine::run_fed(
        swath_engine::sysinfo::cores(),
        // Far enough ahead that a tree's big files do not stop the other workers for
        // long; the output they hold is what bounds memory (each at most POOLED_OUTPUT).
        swath_engine::Window {
            items: 1 << 12,
            bytes: 64 << 20,
        },
        |r: &FileResult| r.out.len() + r.error.as_ref().map_or(0, Vec::len),
        |feed| feed_targets(cfg, feed),
        |_, target, on_pool| match target {
            Target::Note { text, error } => FileResult {
                error: Some(text.clone()),
                error_counts: *error,
                skipped: true,
                ..FileResult::default()
            },
            t if on_pool => grep_file(cfg, matcher, t, &single, None, &used),
            t => {
                let mut guard = out.lock().unwrap_or_else(|p| p.into_inner());
                grep_file(cfg, matcher, t, &cfg.engine, Some(&mut *guard), &used)
            }
        },
        |_, target, r| {
            let mut w = out.lock().unwrap_or_else(|p| p.into_inner());
            let r = if r.deferred {
                grep_file(cfg, matcher, &target, &cfg.engine, Some(&mut *w), &used)
            } else {
                r
            };
            let mut tail = Vec::new();
            if r.lead_sep && used.load(Ordering::Relaxed) {
                cfg.group_separator_line(&mut tail);
            }
            used.fetch_or(r.used, Ordering::Relaxed);
            tail.extend_from_slice(&r.out);
            let name = target.name();
            if let Some(e) = &r.error {
                any_error |= r.error_counts;
                if !cfg.no_messages {
                    w.push();
                    eprint_bytes(prog, e);
                }
            }
            if r.run.is_some() {
                last_run = r.run;
            }
            if let Some(stats) = &r.json {
                json_totals.add(stats);
            }
            any_selected |= r.selected > 0;
            match cfg.list {
                // GNU dies in the middle of the file: no count, no name.
                _ if r.fatal.is_some() => {}
                _ if cfg.quiet => {}
                _ if r.skipped => {}
                Some(with) if !r.open_failed && (r.selected > 0) == with => {
                    cfg.format.colored(&mut tail, |c| &c.file_name, name);
                    tail.push(if cfg.format.null_after_name { 0 } else { b'\n' });
                }
                Some(_) => {}
                None if cfg.count && !r.open_failed => {
                    if cfg.format.with_filename {
                        cfg.format.colored(&mut tail, |c| &c.file_name, name);
                        if cfg.format.null_after_name {
                            tail.push(0);
                        } else {
                            cfg.format.sep(&mut tail, b':');
                        }
                    }
                    tail.extend_from_slice(format!("{}\n", r.selected).as_bytes());
                }
                None => {}
            }
            w.write(&tail);
            if let Some(msg) = &r.fatal {
                w.push();
                eprint_bytes(prog, &[name, b": ", msg.as_bytes()].concat());
                any_error = true;
                fatal = true;
                return Flow::Stop;
            }
            if cfg.format.line_buffered || cfg.list.is_some() {
                w.push();
            }
            if w.failed() {
                // Reported once, when the output is finished.
                return Flow::Stop;
            }
            if r.binary_matched && !cfg.quiet && cfg.binary != Binary::WithoutMatch {
                w.push();
                eprint_bytes(prog, &[name, b": binary file matches"].concat());
            }
            if cfg.quiet && any_selected {
                return Flow::Stop;
            }
            Flow::Continue
        },
    );
    let mut out = out.into_inner().unwrap_or_else(|p| p.into_inner());
    if cfg.json && cfg.mode == Mode::Print && !fatal {
        let mut last = Vec::new();
        crate::cmd::grep_json::summary(&mut last, &json_totals, clock.elapsed());
        out.write(&last);
    }
    if let Err(status) = out.finish() {
        return ExitCode::from(status);
    }
    if cfg.time {
        eprint!(
            "{}",
            match &last_run {
                Some((plan, stats)) => clock.report(cfg.engine.strategy, plan, Some(stats)),
                None => format!("{}\n", clock.times()),
            }
        );
    }
    if fatal {
        return ExitCode::from(Status::Trouble);
    }
    if cfg.quiet && any_selected {
        return ExitCode::SUCCESS;
    }
    if any_error {
        return ExitCode::from(Status::Trouble);
    }
    ExitCode::from(if any_selected {
        Status::SELECTED
    } else {
        Status::NONE_SELECTED
    })
}

fn display_name(cfg: &Config, file: &OsStr) -> Vec<u8> {
    if file == "-" {
        cfg.label.clone()
    } else {
        file.as_bytes().to_vec()
    }
}

/// Searches one file, writing its lines to `stream` when given (a big file, streamed) or
/// into the result (a small file searched on the pool).
fn grep_file(
    cfg: &Config,
    matcher: &Matcher,
    target: &Target,
    engine: &EngineOptions,
    mut stream: Option<&mut (dyn Write + Send)>,
    used: &AtomicBool,
) -> FileResult {
    let name = target.name();
    let Target::File {
        path: file,
        command_line,
        nofollow,
        real_dev,
        at,
        ..
    } = target
    else {
        unreachable!("messages are not searched");
    };
    let file = file.as_os_str();
    let streamed = stream.is_some();
    let mut res = FileResult::default();
    let skip_devices =
        cfg.devices == Devices::Skip || (cfg.devices == Devices::ReadCommandLine && !command_line);
    swath_engine::pause::at("grep-open");
    let input = if file == "-" {
        Input::stdin(String::from_utf8_lossy(name).into_owned())
    } else if skip_devices || at.is_some() || *nofollow {
        let links = if *nofollow {
            Links::Refuse
        } else {
            Links::Follow
        };
        // As GNU: where devices are left out, the open does not wait for one (a FIFO with
        // no writer, or one put in place of a file found in a tree); its type is seen below.
        let wait = if skip_devices {
            Wait::Never
        } else {
            Wait::Allowed
        };
        Input::open_found(Path::new(file), at.as_ref(), links, wait, *real_dev)
    } else {
        Input::open(Path::new(file))
    };
    let input = match input {
        Ok(i) => i,
        Err(EngineError::Io { cause, .. })
            if *nofollow && cause.raw_os_error() == Some(libc::ELOOP) =>
        {
            // A link put in place of a file after the walk: GNU's O_NOFOLLOW open fails
            // with ELOOP, and it says nothing.
            res.skipped = true;
            return res;
        }
        Err(e) => {
            res.error = Some(error_text(name, &e));
            res.error_counts = true;
            res.open_failed = true;
            return res;
        }
    };
    if file != "-" {
        use std::os::unix::fs::FileTypeExt;
        let ft = Some(input.file_type());
        let special = ft.is_some_and(|t| {
            t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket()
        });
        let is_dir = ft.is_some_and(|t| t.is_dir());
        if (special && skip_devices)
            || (is_dir && cfg.directories == Directories::Skip)
            || (*command_line && !is_dir && excluded(&cfg.excludes, file.as_bytes(), false))
        {
            res.skipped = true;
            return res;
        }
    }
    let pooled_max = if *command_line {
        SMALL_FILE
    } else {
        POOLED_MAX
    };
    if !streamed && input.len().is_some_and(|n| n >= pooled_max) {
        res.deferred = true;
        return res;
    }
    if cfg.mode == Mode::Print && cfg.max_count > 1 && input_is_output(&input) {
        res.error = Some([name, b": input file is also the output"].concat());
        res.error_counts = true;
        return res;
    }
    let opts = SearchOptions {
        context: cfg.context,
        mode: cfg.mode,
        invert: cfg.invert,
        max_count: cfg.max_count,
        binary: cfg.binary,
        // JSON shows a line that is not UTF-8 as its bytes, as ripgrep does, where GNU's
        // text leaves it out as binary.
        check_encoding: (cfg.match_opts.utf8 || cfg.match_opts.multibyte) && !cfg.json,
        line_numbers: cfg.format.line_number || cfg.json,
        matches: cfg.format.only_matching || cfg.format.color.is_some() || cfg.json,
        // With JSON every line is whole, its matches beside it (ripgrep ignores -o too).
        only_matching: cfg.format.only_matching && !cfg.json,
        max_line: cfg.max_line,
    };
    // -T: numbers right-aligned to the width of the file's size (GNU's offset_width).
    let width = if cfg.format.initial_tab {
        let size = Some(input.file_type())
            .filter(|t| t.is_file())
            .and(input.len())
            .unwrap_or(i64::MAX as u64);
        let n = size + u64::from(cfg.format.line_number && size < i64::MAX as u64);
        n.to_string().len()
    } else {
        0
    };
    let mut line = Vec::new();
    let mut overflow = false;
    let mut json = crate::cmd::grep_json::FileStats::default();
    let mut begun = false;
    let started = std::time::Instant::now();
    let mut emit = |ev: Event<'_>| -> Flow {
        line.clear();
        match ev {
            Event::Line(s) if cfg.json => {
                if !begun {
                    crate::cmd::grep_json::begin(&mut line, name);
                    begun = true;
                }
                crate::cmd::grep_json::line(&mut line, name, &s, cfg.format.eol);
                json.bytes_printed += line.len() as u64;
                if !s.context {
                    json.matched_lines += 1;
                    json.matches += s.matches.len() as u64;
                }
            }
            // JSON has no group separators: each line carries its number.
            Event::Separator { .. } if cfg.json => {}
            Event::Line(s) => cfg.format.line(&mut line, name, &s, width),
            Event::Separator { first_in_file } => {
                if first_in_file && !streamed {
                    // Whether an earlier file used the output is known when this file's
                    // output is placed.
                    res.lead_sep = true;
                } else if !first_in_file || used.load(Ordering::Relaxed) {
                    cfg.group_separator_line(&mut line);
                }
            }
        }
        let r = match stream.as_deref_mut() {
            Some(w) => w.write_all(&line).and_then(|_| {
                if cfg.format.line_buffered {
                    w.flush()
                } else {
                    Ok(())
                }
            }),
            None if res.out.len() + line.len() > POOLED_OUTPUT => {
                overflow = true;
                return Flow::Stop;
            }
            None => {
                res.out.extend_from_slice(&line);
                Ok(())
            }
        };
        // A write error is kept by the output and reported once, when it is finished.
        match r {
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Stop,
        }
    };
    let mut resume = None;
    // A progress bar for a big file, on a terminal's standard error, unless the matched
    // lines themselves go to that terminal.
    // (Asked only for a streamed file: a system call per file of a tree adds up.)
    let show_progress = || cfg.mode != Mode::Print || !io::stdout().is_terminal();
    let total = input.len().filter(|_| streamed && show_progress());
    // The label only for a file that may get a bar (a tree's small files are many).
    let label = match total {
        Some(_) => String::from_utf8_lossy(name),
        None => std::borrow::Cow::Borrowed(""),
    };
    let searched = crate::progress::with_progress(total, &label, |p| {
        search(&input, matcher, &opts, engine, Some(p), &mut emit)
    });
    if overflow {
        return FileResult {
            deferred: true,
            ..FileResult::default()
        };
    }
    match searched {
        Ok(o) => {
            resume = o.resume_at;
            res.selected = o.selected;
            res.binary_matched = o.binary_matched;
            res.run = o.run;
            res.used = o.used;
            res.fatal = matcher.pcre_error();
            let printing = cfg.json && cfg.mode == Mode::Print && res.fatal.is_none();
            if printing && (begun || o.selected > 0) {
                json.elapsed = started.elapsed();
                json.matched_lines = o.selected;
                json.bytes_searched = res.run.as_ref().map_or(0, |(_, st)| st.extent.len);
                let mut tail = Vec::new();
                if !begun {
                    // Its only selected line lies past the binary turn: no line is shown,
                    // but the file matched.
                    crate::cmd::grep_json::begin(&mut tail, name);
                    json.bytes_printed += tail.len() as u64;
                }
                crate::cmd::grep_json::end(&mut tail, name, o.binary_from, &json);
                match stream {
                    Some(w) => {
                        let _ = w.write_all(&tail);
                    }
                    None => res.out.extend_from_slice(&tail),
                }
                res.json = Some(json);
            }
        }
        Err(e) => {
            res.error = Some(error_text(name, &e));
            res.error_counts = true;
            if begun && cfg.json {
                // The lines printed before the error get their end (and the summary
                // counts them), so every `begin` has one.
                json.elapsed = started.elapsed();
                let mut tail = Vec::new();
                crate::cmd::grep_json::end(&mut tail, name, None, &json);
                match stream {
                    Some(w) => {
                        let _ = w.write_all(&tail);
                    }
                    None => res.out.extend_from_slice(&tail),
                }
                res.json = Some(json);
            }
        }
    }
    if file == "-" {
        // Leave a shared standard input where GNU grep would: after the last line read.
        let at = resume.or_else(|| res.run.as_ref().map(|(_, st)| st.extent.len));
        if let Some(at) = at {
            let _ = input.mark_consumed(at);
        }
        if cfg.mode == Mode::Exists
            && !cfg.quiet
            && res.selected < cfg.max_count
            && !input.is_seekable()
        {
            // Stopped at the first selected line (-l, -L, or output to /dev/null) with the
            // limit (-m) not reached: GNU then reads a pipe to its end (so its writer is not
            // killed by SIGPIPE); -q exits at once.
            let _ = io::copy(&mut io::stdin().lock(), &mut io::sink());
        }
    }
    res
}

/// `PROG: MESSAGE` on standard error, with file names as their raw bytes.
fn eprint_bytes(prog: &str, msg: &[u8]) {
    let line = [prog.as_bytes(), b": ", msg, b"\n"].concat();
    let _ = io::stderr().write_all(&line);
}

fn error_text(name: &[u8], e: &EngineError) -> Vec<u8> {
    [name, b": ", e.cause().as_bytes()].concat()
}

/// True when standard output is this very regular file (GNU refuses to grep a file into
/// itself, which could loop forever).
fn input_is_output(input: &Input) -> bool {
    // Standard output's identity, taken once for all files.
    static STDOUT: std::sync::OnceLock<Option<(u64, u64)>> = std::sync::OnceLock::new();
    let Some(out) = *STDOUT.get_or_init(rustix_fstat_stdout) else {
        return false;
    };
    input.file_type().is_file() && input.identity() == out
}

/// GNU grep's `--help` text (with swath's own options), as `prog` says it.
pub fn help_text(prog: &str) -> String {
    format!(
        "Usage: {prog} [OPTION]... PATTERNS [FILE]...
Search for PATTERNS in each FILE.
Example: {prog} -i 'hello world' menu.h main.c
PATTERNS can contain multiple patterns separated by newlines.

Pattern selection and interpretation:
  -E, --extended-regexp     PATTERNS are extended regular expressions
  -F, --fixed-strings       PATTERNS are strings
  -G, --basic-regexp        PATTERNS are basic regular expressions
  -P, --perl-regexp         PATTERNS are Perl regular expressions
  -e, --regexp=PATTERNS     use PATTERNS for matching
  -f, --file=FILE           take PATTERNS from FILE
  -i, --ignore-case         ignore case distinctions in patterns and data
      --no-ignore-case      do not ignore case distinctions (default)
  -w, --word-regexp         match only whole words
  -x, --line-regexp         match only whole lines
  -z, --null-data           a data line ends in 0 byte, not newline

Miscellaneous:
  -s, --no-messages         suppress error messages
  -v, --invert-match        select non-matching lines
  -V, --version             display version information and exit
      --help                display this help text and exit

Output control:
  -m, --max-count=NUM       stop after NUM selected lines
  -b, --byte-offset         print the byte offset with output lines
  -n, --line-number         print line number with output lines
      --line-buffered       flush output on every line
  -H, --with-filename       print file name with output lines
  -h, --no-filename         suppress the file name prefix on output
      --label=LABEL         use LABEL as the standard input file name prefix
  -o, --only-matching       show only nonempty parts of lines that match
  -q, --quiet, --silent     suppress all normal output
      --binary-files=TYPE   assume that binary files are TYPE;
                            TYPE is 'binary', 'text', or 'without-match'
  -a, --text                equivalent to --binary-files=text
  -I                        equivalent to --binary-files=without-match
  -d, --directories=ACTION  how to handle directories;
                            ACTION is 'read', 'recurse', or 'skip'
  -D, --devices=ACTION      how to handle devices, FIFOs and sockets;
                            ACTION is 'read' or 'skip'
  -r, --recursive           like --directories=recurse
  -R, --dereference-recursive  likewise, but follow all symlinks
      --include=GLOB        search only files that match GLOB (a file pattern)
      --exclude=GLOB        skip files that match GLOB
      --exclude-from=FILE   skip files that match any file pattern from FILE
      --exclude-dir=GLOB    skip directories that match GLOB
  -L, --files-without-match  print only names of FILEs with no selected lines
  -l, --files-with-matches  print only names of FILEs with selected lines
  -c, --count               print only a count of selected lines per FILE
  -T, --initial-tab         make tabs line up (if needed)
  -Z, --null                print 0 byte after FILE name

Context control:
  -B, --before-context=NUM  print NUM lines of leading context
  -A, --after-context=NUM   print NUM lines of trailing context
  -C, --context=NUM         print NUM lines of output context
  -NUM                      same as --context=NUM
      --group-separator=SEP  print SEP on line between matches with context
      --no-group-separator  do not print separator for matches with context
      --color[=WHEN],
      --colour[=WHEN]       use markers to highlight the matching strings;
                            WHEN is 'always', 'never', or 'auto'
  -U, --binary              do not strip CR characters at EOL (MSDOS/Windows)

swath's own options (each file searched on all cores, many files at once):
      --threads=N           worker threads (default: one per core; 0 or less:
                            one thread with sequential reads)
      --block-size=SIZE     bytes per block of lines (default 256K)
      --strategy=S          how files are read: auto, read, pread or mmap
      --layout=L            how blocks go to threads: dynamic, stripes or ranges
      --max-line=SIZE       longest line read from a pipe (default 64M); a
                            longer one is an error, exit status 2
      --time                print time and the engine's plan to standard error
      --json                print the lines found as JSON Lines, the messages of
                            'rg --json' (begin, match, context, end, summary);
                            not with -c, -l or -L; -o, -b and -T do not apply
      --emit-partial=OUT    with -c and one FILE: write its count to OUT as a
                            partial result, for 'swath merge'
      --range=START:END     with --emit-partial: only the lines whose first byte
                            follows a byte of START..END-1 (as Hadoop cuts)
      --operand-index=K     with --emit-partial: FILE's place among the job's
                            files (the order 'swath merge' prints them in)

When FILE is '-', read standard input.  With no FILE, read '.' if
recursive, '-' otherwise.  With fewer than two FILEs, assume -h.
Exit status is 0 if any line is selected, 1 otherwise;
if any error occurs and -q is not given, the exit status is 2.
"
    )
}
