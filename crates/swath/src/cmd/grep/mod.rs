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
//!
//! The parts: [`options`] (the command line and `--help`), [`walk`] (the targets, operands
//! and trees), [`json`] (`--json`'s lines); this file runs the search and prints.

use std::ffi::{OsStr, OsString};
use std::io::{self, IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use swath_engine::dirs::Links;
use swath_engine::input::Wait;
use swath_engine::source::Span;
use swath_engine::{EngineError, EngineOptions, Flow, Input, Strategy};
use swath_grep::pattern::Syntax;
use swath_grep::search::{MatchOptions, Matcher};
use swath_ops::report;
use swath_ops::search::{search, Binary, Context, Event, Mode, SearchOptions, Selected};

use crate::engine_args::Stopwatch;
use crate::getopt::{getopt, HasArg, LongOpt};
use crate::status::Status;
use crate::stdout::{Stdout, Voice};

mod json;
mod options;
mod walk;

pub use options::help_text;
#[cfg(test)]
pub use options::long_options;
use options::*;
use walk::*;

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
    let Some(config) = report::GrepCountConfig::new(matcher, &opts) else {
        unreachable!("-m and without-match are refused above")
    };
    let options = partial_options(cfg);
    let of = report::PieceOf {
        options: &options,
        index: cfg.partial.index,
        name: name.as_bytes(),
        len: input.len().unwrap_or(0),
        offset: 0,
    };
    // The matcher's line end (`-z`: NUL) cuts the range.
    let range = cfg.partial.range.unwrap_or((0, u64::MAX));
    let bytes = match report::piece::<report::GrepCount>(&of, &input, range, &config, &cfg.engine) {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    match crate::cmd::partial::write_bytes(Path::new(out), &bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => die(prog, &m),
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
    json: Option<json::FileStats>,
}

/// Files found in a tree are searched by one worker of the pool up to this size (as many
/// files as there are cores at once: a tree's few big files among thousands of small ones
/// cost no hand-over); bigger ones come back deferred, to be searched on all cores.
const POOLED_MAX: u64 = 32 << 20;

/// Output a search on the pool may gather (beyond, the file comes back deferred and is
/// searched again with its lines streamed): what the pool holds stays bounded whatever the
/// files' sizes and however much of them matches.
const POOLED_OUTPUT: usize = 1 << 20;

fn run(prog: &str, cfg: &Config, matcher: &Matcher) -> ExitCode {
    let clock = Stopwatch::start();
    let out = std::sync::Mutex::new(Stdout::new(prog, Voice::Grep));
    let single = EngineOptions {
        threads: swath_engine::Threads::Count(1),
        strategy: match cfg.engine.strategy {
            Strategy::Auto => Strategy::Read,
            s => s,
        },
        ..cfg.engine.clone()
    };
    let (mut any_selected, mut any_error) = (false, false);
    let mut last_run = None;
    let mut json_totals = json::Totals::default();
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
        json::summary(&mut last, &json_totals, clock.elapsed());
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
        swath_engine::many::SMALL_FILE
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
    let mut json = json::FileStats::default();
    let mut begun = false;
    let started = std::time::Instant::now();
    let mut emit = |ev: Event<'_>| -> Flow {
        line.clear();
        match ev {
            Event::Line(s) if cfg.json => {
                if !begun {
                    json::begin(&mut line, name);
                    begun = true;
                }
                json::line(&mut line, name, &s, cfg.format.eol);
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
        search(
            Span::whole(&input),
            matcher,
            &opts,
            engine,
            Some(p),
            &mut emit,
        )
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
                // Stopped by -m: the bytes up to the last selected line's end, as rg
                // counts what it read before stopping (not the whole file).
                let whole = res.run.as_ref().map_or(0, |(_, st)| st.extent.len);
                json.bytes_searched = o.resume_at.map_or(whole, |at| at.min(whole));
                let mut tail = Vec::new();
                if !begun {
                    // Its only selected line lies past the binary turn: no line is shown,
                    // but the file matched.
                    json::begin(&mut tail, name);
                    json.bytes_printed += tail.len() as u64;
                }
                json::end(&mut tail, name, o.binary_from, &json);
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
                json::end(&mut tail, name, None, &json);
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
