//! `swath grep`: GNU grep 3.8's options, output and exit statuses, searching each file on all
//! cores in blocks of whole lines and many small files at once.
//!
//! Options are parsed with GNU getopt's rules ([`crate::getopt`]); the patterns are translated
//! into one regular expression ([`swath_kernels::search::Matcher`]); each file is searched by
//! [`swath_ops::search::search`], which hands selected lines back in file order; this module
//! formats them as GNU grep does (file name, line number, byte offset, colours, `-o`, `-c`,
//! `-l`, `-L`) and keeps GNU's exit status: 0 when a line was selected, 1 when none, 2 on an
//! error (unless `-q` found a match).

use std::ffi::{OsStr, OsString};
use std::io::{self, IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;

use swath_engine::{EngineError, EngineOptions, Flow, Input, Layout, Strategy};
use swath_kernels::pattern::Syntax;
use swath_kernels::search::{MatchOptions, Matcher};
use swath_ops::search::{search, Binary, Mode, SearchOptions, Selected};

use crate::engine_args::Stopwatch;
use crate::getopt::{getopt, HasArg, LongOpt};
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
    opt("exclude-from", HasArg::Required, "exclude"),
    opt("exclude-dir", HasArg::Required, "exclude"),
    opt("file", HasArg::Required, "f"),
    opt("files-with-matches", HasArg::No, "l"),
    opt("files-without-match", HasArg::No, "L"),
    opt("group-separator", HasArg::Required, "group-separator"),
    opt("help", HasArg::No, "help"),
    opt("include", HasArg::Required, "exclude"),
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
    selected_line: String,
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
            selected_line: String::new(),
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
                    "mt" | "ms" => c.selected_match = val.into(),
                    "sl" => c.selected_line = val.into(),
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

    /// File name, line number and byte offset before a line or match.
    fn head(&self, out: &mut Vec<u8>, name: &[u8], number: u64, offset: u64) {
        if self.with_filename {
            self.colored(out, |c| &c.file_name, name);
            if self.null_after_name {
                out.push(0);
            } else {
                self.sep(out, b':');
            }
        }
        if self.line_number {
            self.colored(out, |c| &c.line_num, number.to_string().as_bytes());
            self.sep(out, b':');
        }
        if self.byte_offset {
            self.colored(out, |c| &c.byte_num, offset.to_string().as_bytes());
            self.sep(out, b':');
        }
    }

    fn selected(&self, out: &mut Vec<u8>, name: &[u8], s: &Selected<'_>) {
        if self.only_matching {
            for m in s.matches {
                self.head(out, name, s.number, s.offset + m.start as u64);
                self.colored(out, |c| &c.selected_match, &s.line[m.clone()]);
                out.push(b'\n');
            }
            return;
        }
        self.head(out, name, s.number, s.offset);
        match &self.color {
            Some(c) if !s.matches.is_empty() => {
                let mut at = 0;
                for m in s.matches {
                    self.colored(out, |c| &c.selected_line, &s.line[at..m.start]);
                    self.colored(out, |c| &c.selected_match, &s.line[m.clone()]);
                    // GNU restarts the line colour after each match.
                    at = m.end;
                }
                self.colored(out, |c| &c.selected_line, &s.line[at..]);
                let _ = c;
            }
            _ => self.colored(out, |c| &c.selected_line, s.line),
        }
        out.push(b'\n');
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
    /// `--max-line`: the longest line gathered from a pipe.
    max_line: usize,
}

pub fn main(prog: &str, args: Vec<OsString>) -> ExitCode {
    let cfg = match parse(prog, args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if cfg.match_opts.syntax == Syntax::Perl && cfg.patterns.len() > 1 {
        return die(prog, "the -P option only supports a single pattern");
    }
    let errors = swath_kernels::search::pattern_errors(&cfg.patterns, cfg.match_opts);
    if !errors.is_empty() {
        for (i, e) in errors {
            let at = match &cfg.sources[i] {
                Some((file, line)) => [&file[..], format!(":{line}: ").as_bytes()].concat(),
                None => Vec::new(),
            };
            eprint_bytes(prog, &[&at[..], e.message.as_bytes()].concat());
        }
        return ExitCode::from(2);
    }
    let (mut matcher, warnings) = match Matcher::new(&cfg.patterns, cfg.match_opts) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{prog}: {}", e.message);
            return ExitCode::from(2);
        }
    };
    if cfg.mode == Mode::Print && (cfg.format.only_matching || cfg.format.color.is_some()) {
        if let Err(e) = matcher.use_longest_matches() {
            eprintln!("{prog}: {}", e.message);
            return ExitCode::from(2);
        }
    }
    // Debian's grep 3.8 keeps upstream's stray-backslash warnings off unless asked for.
    let stray_ok = std::env::var_os("DEB_GREP_ENABLE_STRAY_BACKSLASH_WARN").is_some();
    for w in warnings {
        if stray_ok || !w.starts_with("stray \\") {
            eprintln!("{prog}: warning: {w}");
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
    if nothing && cfg.list != Some(false) {
        return ExitCode::from(1);
    }
    run(prog, &cfg, &matcher)
}

fn usage(prog: &str, msg: Option<&str>) -> ExitCode {
    if let Some(m) = msg {
        eprintln!("{prog}: {m}");
    }
    eprintln!("Usage: {prog} [OPTION]... PATTERNS [FILE]...");
    eprintln!("Try '{prog} --help' for more information.");
    ExitCode::from(2)
}

fn die(prog: &str, msg: &str) -> ExitCode {
    eprintln!("{prog}: {msg}");
    ExitCode::from(2)
}

/// Takes swath's own engine options out of `args` (exact names only, so that GNU's
/// abbreviations such as `--t` for `--text` keep working).
fn take_engine_options(
    prog: &str,
    args: Vec<OsString>,
) -> Result<(Vec<OsString>, EngineOptions, bool, usize), ExitCode> {
    let mut rest = Vec::with_capacity(args.len());
    let mut engine = EngineOptions::default();
    let mut time = false;
    let mut max_line = swath_ops::search::DEFAULT_MAX_LINE;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "--" {
            rest.push(a);
            rest.extend(it);
            break;
        }
        let text = a.to_string_lossy().into_owned();
        if text == "--time" {
            time = true;
            continue;
        }
        let Some((name, inline)) = ["threads", "block-size", "strategy", "layout", "max-line"]
            .iter()
            .find_map(|n| {
                let flag = format!("--{n}");
                if text == flag {
                    Some((*n, None))
                } else {
                    text.strip_prefix(&format!("{flag}="))
                        .map(|v| (*n, Some(v.to_string())))
                }
            })
        else {
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
            _ => engine.layout = value.parse::<Layout>().map_err(|_| bad("layout"))?,
        }
    }
    Ok((rest, engine, time, max_line))
}

fn parse(prog: &str, args: Vec<OsString>) -> Result<Config, ExitCode> {
    let (args, engine, time, max_line) = take_engine_options(prog, args)?;
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
    let utf8 = crate::gnu_args::utf8_locale();
    for (key, val) in p.opts {
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
                let data = if name == "-" {
                    let mut d = Vec::new();
                    io::Read::read_to_end(&mut io::stdin(), &mut d).map(|_| d)
                } else {
                    std::fs::read(&name)
                };
                let data = data.map_err(|e| {
                    let cause = swath_engine::error::os_message(&e);
                    eprint_bytes(prog, &[name.as_bytes(), b": ", cause.as_bytes()].concat());
                    ExitCode::from(2)
                })?;
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
            "A" | "B" | "C" | "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
            | "group-separator" => {
                return Err(die(
                    prog,
                    "context lines (-A, -B, -C, -NUM) are not supported by swath grep",
                ))
            }
            "r" | "R" | "d" | "D" | "exclude" => {
                return Err(die(
                    prog,
                    "recursive search and file selection (-r, -R, -d, -D, --include, --exclude) are not supported by swath grep",
                ))
            }
            "z" => return Err(die(prog, "-z (--null-data) is not supported by swath grep")),
            "T" => return Err(die(prog, "-T (--initial-tab) is not supported by swath grep")),
            "X" => return Err(die(prog, "-X is not supported by swath grep")),
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
    if files.is_empty() {
        files.push(OsString::from("-"));
    }
    let color_on = match color.as_str() {
        "always" => true,
        "auto" => {
            io::stdout().is_terminal()
                && std::env::var("TERM").is_ok_and(|t| !t.is_empty() && t != "dumb")
        }
        _ => false,
    };
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
            with_filename: with_filename.unwrap_or(files.len() > 1),
            line_number,
            byte_offset,
            only_matching,
            null_after_name,
            line_buffered,
            color: color_on.then(|| Colors::from_env(prog)),
        },
        files,
        engine,
        time,
        max_line,
    })
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
struct FileResult {
    out: Vec<u8>,
    /// The file could not be opened (no count or name line is printed for it).
    open_failed: bool,
    selected: u64,
    error: Option<Vec<u8>>,
    binary_matched: bool,
    run: Option<(swath_engine::Plan, swath_engine::RunStats)>,
}

/// Files smaller than this are searched whole by one worker of the pool.
const SMALL_FILE: u64 = 4 << 20;

fn run(prog: &str, cfg: &Config, matcher: &Matcher) -> ExitCode {
    let clock = Stopwatch::start();
    let out = std::sync::Mutex::new(Stdout::new(prog, Voice::Grep));
    let pooled: Vec<bool> = cfg
        .files
        .iter()
        .map(|f| {
            f != "-" && std::fs::metadata(f).is_ok_and(|m| m.is_file() && m.len() < SMALL_FILE)
        })
        .collect();
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
    swath_engine::run_many(
        &pooled,
        swath_engine::sysinfo::cores(),
        |i, on_pool| {
            if on_pool {
                grep_file(cfg, matcher, &cfg.files[i], &single, None)
            } else {
                let mut guard = out.lock().unwrap_or_else(|p| p.into_inner());
                grep_file(cfg, matcher, &cfg.files[i], &cfg.engine, Some(&mut *guard))
            }
        },
        |i, r| {
            let mut w = out.lock().unwrap_or_else(|p| p.into_inner());
            let mut tail = r.out;
            let name = display_name(cfg, &cfg.files[i]);
            if let Some(e) = &r.error {
                any_error = true;
                if !cfg.no_messages {
                    w.push();
                    eprint_bytes(prog, e);
                }
            }
            if r.run.is_some() {
                last_run = r.run;
            }
            any_selected |= r.selected > 0;
            match cfg.list {
                _ if cfg.quiet => {}
                Some(with) if !r.open_failed && (r.selected > 0) == with => {
                    cfg.format.colored(&mut tail, |c| &c.file_name, &name);
                    tail.push(if cfg.format.null_after_name { 0 } else { b'\n' });
                }
                Some(_) => {}
                None if cfg.count && !r.open_failed => {
                    if cfg.format.with_filename {
                        cfg.format.colored(&mut tail, |c| &c.file_name, &name);
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
            if cfg.format.line_buffered || cfg.list.is_some() {
                w.push();
            }
            if w.failed() {
                // Reported once, when the output is finished.
                return Flow::Stop;
            }
            if r.binary_matched && !cfg.quiet && cfg.binary != Binary::WithoutMatch {
                w.push();
                eprint_bytes(prog, &[&name[..], b": binary file matches"].concat());
            }
            if cfg.quiet && any_selected {
                return Flow::Stop;
            }
            Flow::Continue
        },
    );
    let out = out.into_inner().unwrap_or_else(|p| p.into_inner());
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
    if cfg.quiet && any_selected {
        return ExitCode::SUCCESS;
    }
    if any_error {
        return ExitCode::from(2);
    }
    ExitCode::from(if any_selected { 0 } else { 1 })
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
    file: &OsStr,
    engine: &EngineOptions,
    mut stream: Option<&mut (dyn Write + Send)>,
) -> FileResult {
    let name = display_name(cfg, file);
    let streamed = stream.is_some();
    let mut res = FileResult {
        out: Vec::new(),
        open_failed: false,
        selected: 0,
        error: None,
        binary_matched: false,
        run: None,
    };
    let input = if file == "-" {
        Input::stdin(String::from_utf8_lossy(&name).into_owned())
    } else {
        Input::open(Path::new(file))
    };
    let input = match input {
        Ok(i) => i,
        Err(e) => {
            res.error = Some(error_text(&name, &e));
            res.open_failed = true;
            return res;
        }
    };
    if cfg.mode == Mode::Print && cfg.max_count > 1 && input_is_output(&input) {
        res.error = Some([&name[..], b": input file is also the output"].concat());
        return res;
    }
    let opts = SearchOptions {
        mode: cfg.mode,
        invert: cfg.invert,
        max_count: cfg.max_count,
        binary: cfg.binary,
        utf8: cfg.match_opts.utf8,
        line_numbers: cfg.format.line_number,
        matches: cfg.format.only_matching || cfg.format.color.is_some(),
        only_matching: cfg.format.only_matching,
        max_line: cfg.max_line,
    };
    let mut line = Vec::with_capacity(256);
    let mut emit = |s: &Selected<'_>| -> Flow {
        line.clear();
        cfg.format.selected(&mut line, &name, s);
        let r = match stream.as_deref_mut() {
            Some(w) => w.write_all(&line).and_then(|_| {
                if cfg.format.line_buffered {
                    w.flush()
                } else {
                    Ok(())
                }
            }),
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
    let show_progress = cfg.mode != Mode::Print || !io::stdout().is_terminal();
    let total = input.len().filter(|_| show_progress && streamed);
    let searched = crate::progress::with_progress(total, &String::from_utf8_lossy(&name), |p| {
        search(&input, matcher, &opts, engine, Some(p), &mut emit)
    });
    match searched {
        Ok(o) => {
            resume = o.resume_at;
            res.selected = o.selected;
            res.binary_matched = o.binary_matched;
            res.run = o.run;
        }
        Err(e) => res.error = Some(error_text(&name, &e)),
    }
    if file == "-" {
        // Leave a shared standard input where GNU grep would: after the last line read.
        let at = resume.or_else(|| res.run.as_ref().map(|(_, st)| st.extent.len));
        if let Some(at) = at {
            let _ = input.mark_consumed(at);
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
    let cause = match e {
        EngineError::Io { cause, .. } => swath_engine::error::os_message(cause),
        other => {
            let t = other.to_string();
            t.split_once(": ").map(|x| x.1.to_string()).unwrap_or(t)
        }
    };
    [name, b": ", cause.as_bytes()].concat()
}

/// True when standard output is this very regular file (GNU refuses to grep a file into
/// itself, which could loop forever).
fn input_is_output(input: &Input) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some((dev, ino)) = rustix_fstat_stdout() else {
        return false;
    };
    input
        .file()
        .metadata()
        .is_ok_and(|m| m.is_file() && m.dev() == dev && m.ino() == ino)
}

fn help_text(prog: &str) -> String {
    format!(
        "Usage: {prog} [OPTION]... PATTERNS [FILE]...
Search for PATTERNS in each FILE, on all cores (GNU grep 3.8 compatible).
Example: {prog} -i 'hello world' menu.h main.c
PATTERNS can contain multiple patterns separated by newlines.

Pattern selection and interpretation:
  -E, --extended-regexp     PATTERNS are extended regular expressions
  -F, --fixed-strings       PATTERNS are strings
  -G, --basic-regexp        PATTERNS are basic regular expressions (default)
  -P, --perl-regexp         PATTERNS use the Rust regex crate's syntax
  -e, --regexp=PATTERNS     use PATTERNS for matching
  -f, --file=FILE           take PATTERNS from FILE
  -i, --ignore-case         ignore case distinctions in patterns and data
      --no-ignore-case      do not ignore case distinctions (default)
  -w, --word-regexp         match only whole words
  -x, --line-regexp         match only whole lines

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
  -L, --files-without-match  print only names of FILEs with no selected lines
  -l, --files-with-matches  print only names of FILEs with selected lines
  -c, --count               print only a count of selected lines per FILE
  -Z, --null                print 0 byte after FILE name
      --color[=WHEN],
      --colour[=WHEN]       use markers to highlight the matching strings;
                            WHEN is 'always', 'never', or 'auto'

Engine options (swath):
      --threads=N           worker threads (default: one per core; 0 or less:
                            one thread with sequential reads)
      --block-size=SIZE     bytes per block of lines (default 256K)
      --strategy=S          auto, read, pread or mmap
      --layout=L            dynamic, stripes or ranges
      --max-line=SIZE       longest line read from a pipe (default 64M); a
                            longer one is an error, exit status 2
      --time                print time and the engine's plan to standard error

Not supported: context lines (-A, -B, -C, -NUM), recursion (-r, -R, -d, -D,
--include, --exclude), -z, -T.

When FILE is '-', read standard input.  With no FILE, read '-'.
With fewer than two FILEs, assume -h.
Exit status is 0 if any line is selected, 1 otherwise;
if any error occurs and -q is not given, the exit status is 2.
"
    )
}
