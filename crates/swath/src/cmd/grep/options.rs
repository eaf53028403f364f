//! grep's command line as GNU grep 3.8 reads it (getopt's rules, its option names and
//! messages, its exit status 2 for a bad one), swath's own options beside them, and the
//! `--help` text: everything that becomes a [`Config`].

use super::*;

/// GNU grep's short options.
pub(super) const SHORT: &str = "0123456789A:B:C:D:EFGHIPTUVX:abcd:e:f:hiLlm:noqRrsuvwxyZz";

/// Keys reported for short options (each letter as a string).
pub(super) const SHORT_KEYS: &[&str] = &[
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F", "G", "H", "I",
    "P", "T", "U", "V", "X", "a", "b", "c", "d", "e", "f", "h", "i", "L", "l", "m", "n", "o", "q",
    "R", "r", "s", "u", "v", "w", "x", "y", "Z", "z",
];

pub(super) const fn opt(name: &'static str, has_arg: HasArg, key: &'static str) -> LongOpt {
    LongOpt { name, has_arg, key }
}

/// The long options grep's parser takes (for the completions' check).
#[cfg(test)]
pub fn long_options() -> &'static [LongOpt] {
    LONG
}

/// GNU grep 3.8's long options, in its table's order (ambiguity messages list them so).
pub(super) const LONG: &[LongOpt] = &[
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
pub(super) struct Colors {
    pub(super) selected_match: String,
    pub(super) context_match: String,
    pub(super) selected_line: String,
    pub(super) context_line: String,
    /// `rv`: with -v, selected lines take the context line colour and the other way round.
    pub(super) reverse: bool,
    pub(super) file_name: String,
    pub(super) line_num: String,
    pub(super) byte_num: String,
    pub(super) sep: String,
    /// `\33[K` after each start and end sequence (off with `ne`).
    pub(super) erase: bool,
}

impl Colors {
    /// GNU's colours from GREP_COLORS, and the deprecated GREP_COLOR (with GNU's warning)
    /// when GREP_COLORS does not set the match colour.
    pub(super) fn from_env(prog: &str) -> Colors {
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

    pub(super) fn start(&self, out: &mut Vec<u8>, cap: &str) {
        if !cap.is_empty() {
            out.extend_from_slice(b"\x1b[");
            out.extend_from_slice(cap.as_bytes());
            out.extend_from_slice(if self.erase { b"m\x1b[K" } else { b"m" });
        }
    }

    pub(super) fn end(&self, out: &mut Vec<u8>, cap: &str) {
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
pub(super) struct Format {
    pub(super) with_filename: bool,
    pub(super) line_number: bool,
    pub(super) byte_offset: bool,
    pub(super) only_matching: bool,
    pub(super) null_after_name: bool,
    pub(super) line_buffered: bool,
    /// `-T`: a tab before each line's text, numbers right-aligned.
    pub(super) initial_tab: bool,
    /// `-v`: which lines have matches to show (the context lines then).
    pub(super) invert: bool,
    /// The line end: `\n`, or NUL with `-z`.
    pub(super) eol: u8,
    pub(super) color: Option<Colors>,
}

impl Format {
    pub(super) fn colored(&self, out: &mut Vec<u8>, pick: impl Fn(&Colors) -> &str, text: &[u8]) {
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

    pub(super) fn sep(&self, out: &mut Vec<u8>, sep: u8) {
        self.colored(out, |c| &c.sep, &[sep]);
    }

    /// File name, line number and byte offset before a line or match (`sep` is `:` for a
    /// selected line, `-` for context), and `-T`'s tab before a non-empty text. `width`: the
    /// width numbers are aligned to with `-T` (GNU's, from the file's size).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn head(
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
    pub(super) fn line(&self, out: &mut Vec<u8>, name: &[u8], s: &Selected<'_>, width: usize) {
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

    pub(super) fn match_color<'c>(&self, c: &'c Colors, context: bool) -> &'c str {
        if context {
            &c.context_match
        } else {
            &c.selected_match
        }
    }

    pub(super) fn line_color<'c>(&self, c: &'c Colors, context: bool) -> &'c str {
        if !context ^ (self.invert && c.reverse) {
            &c.selected_line
        } else {
            &c.context_line
        }
    }
}

/// Parsed command line.
pub(super) struct Config {
    pub(super) patterns: Vec<Vec<u8>>,
    /// Where each pattern came from: a -f file and line, or the command line.
    pub(super) sources: Vec<Option<(Vec<u8>, usize)>>,
    pub(super) match_opts: MatchOptions,
    pub(super) mode: Mode,
    pub(super) list: Option<bool>,
    pub(super) count: bool,
    pub(super) invert: bool,
    pub(super) max_count: u64,
    /// `-m 0`: GNU exits at once (unless -L).
    pub(super) max_count_given_zero: bool,
    pub(super) binary: Binary,
    pub(super) quiet: bool,
    pub(super) no_messages: bool,
    pub(super) label: Vec<u8>,
    pub(super) files: Vec<OsString>,
    pub(super) format: Format,
    pub(super) engine: EngineOptions,
    pub(super) time: bool,
    /// `--json`: ripgrep's JSON Lines instead of GNU's text ([`super::json`]).
    pub(super) json: bool,
    /// `--max-line`: the longest line gathered from a pipe.
    pub(super) max_line: usize,
    /// `--emit-partial` and its range.
    pub(super) partial: PartialArgs,
    /// `-H` (true) or `-h` (false), when given.
    pub(super) with_filename_given: Option<bool>,
    /// `-A`, `-B`, `-C`, `-NUM` (when any was given).
    pub(super) context: Option<Context>,
    /// `--group-separator` (`--` by default; `None` with `--no-group-separator`).
    pub(super) group_separator: Option<Vec<u8>>,
    /// `-d`, `-r`, `-R`.
    pub(super) directories: Directories,
    /// `-R`: links followed inside trees.
    pub(super) follow: swath_engine::walk::Follow,
    /// `-D`.
    pub(super) devices: Devices,
    /// `--include` (true) and `--exclude`/`--exclude-from` (false) patterns, in order.
    pub(super) excludes: Vec<(Vec<u8>, bool)>,
    /// `--exclude-dir` patterns.
    pub(super) exclude_dirs: Vec<(Vec<u8>, bool)>,
    /// `-r` without a file operand: `.` is searched and its `./` left out of names.
    pub(super) omit_dot_slash: bool,
}

/// What to do with a directory (`-d`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Directories {
    /// Read it as a file (GNU reports "Is a directory").
    Read,
    /// Search the files below it.
    Recurse,
    /// Leave it out silently.
    Skip,
}

/// What to do with devices, FIFOs and sockets (`-D`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Devices {
    /// Read them.
    Read,
    /// Leave them out.
    Skip,
    /// Read those named on the command line, leave out those found in a tree (the default).
    ReadCommandLine,
}

pub(super) fn usage(prog: &str, msg: Option<&str>) -> ExitCode {
    if let Some(m) = msg {
        eprintln!("{prog}: {m}");
    }
    eprintln!("Usage: {prog} [OPTION]... PATTERNS [FILE]...");
    eprintln!("Try '{prog} --help' for more information.");
    ExitCode::from(Status::Trouble)
}

pub(super) fn die(prog: &str, msg: &str) -> ExitCode {
    eprintln!("{prog}: {msg}");
    ExitCode::from(Status::Trouble)
}

/// Takes swath's own engine options out of `args` (exact names only, so that GNU's
/// abbreviations such as `--t` for `--text` keep working).
pub(super) fn take_engine_options(
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
        let Some((name, inline)) = EngineOptions::NAMES
            .iter()
            .chain(&["max-line", "range", "emit-partial", "operand-index"])
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
            "operand-index" => {
                partial.index = value.parse().map_err(|_| bad("operand index"))?;
                partial.index_given = true;
            }
            _ => {
                engine.set(name, &value).map_err(|e| bad(e.what()))?;
            }
        }
    }
    if partial.emit.is_none() {
        // An option that is accepted must act: these two only shape a partial result.
        let given = if partial.range.is_some() {
            Some("--range")
        } else if partial.index_given {
            Some("--operand-index")
        } else {
            None
        };
        if let Some(option) = given {
            return Err(usage(
                prog,
                Some(&crate::cmd::partial::needs_emit_partial(option)),
            ));
        }
    }
    Ok((rest, engine, flags, max_line, partial))
}

/// swath's own options without a value.
#[derive(Debug, Default)]
pub(super) struct OwnFlags {
    /// `--time`.
    pub(super) time: bool,
    /// `--json`.
    pub(super) json: bool,
}

/// `--emit-partial OUT`, `--range START:END`, `--operand-index K` (with `-c`).
#[derive(Debug, Default)]
pub(super) struct PartialArgs {
    pub(super) emit: Option<OsString>,
    pub(super) range: Option<(u64, u64)>,
    pub(super) index: u32,
    /// `--operand-index` was given (it is refused without `--emit-partial`).
    pub(super) index_given: bool,
}

pub(super) fn parse(prog: &str, args: Vec<OsString>) -> Result<Config, ExitCode> {
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
pub(super) fn context_length(prog: &str, arg: &OsStr) -> Result<u64, ExitCode> {
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
    pub(super) fn group_separator_line(&self, out: &mut Vec<u8>) {
        if let Some(sep) = &self.group_separator {
            self.format.colored(out, |c| &c.sep, sep);
            out.push(b'\n');
        }
    }
}

/// The bytes of a -f or --exclude-from file (`-`: standard input), or GNU's `grep: FILE:
/// CAUSE` and exit status 2.
pub(super) fn read_list_file(prog: &str, name: &OsStr) -> Result<Vec<u8>, ExitCode> {
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
pub(super) fn argmatch(
    prog: &str,
    option: &str,
    arg: &OsStr,
    valid: &[&str],
) -> Result<usize, ExitCode> {
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

/// A negative -m, resolved once -v is known.
pub(super) const NEGATIVE_MAX: u64 = u64::MAX - 1;

/// A number too big for any integer type still means "no limit" to GNU.
pub(super) fn is_big_number(s: &str) -> bool {
    let t = s.trim_start();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// GNU grep treats output to /dev/null as -q: it stops at the first match.
pub(super) fn stdout_is_dev_null() -> bool {
    use std::os::unix::fs::MetadataExt;
    let out = rustix_fstat_stdout();
    let null = std::fs::metadata("/dev/null");
    match (out, null) {
        (Some((dev, ino)), Ok(n)) => dev == n.dev() && ino == n.ino(),
        _ => false,
    }
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
