//! `swath wc`: GNU wc 9.1 compatible counts (output, column widths, messages, exit status),
//! each file counted on all cores. Invoked through a link named `wc`, messages are prefixed
//! `wc:`. `--total=WHEN` is the later coreutils' option, as an extension; `--json` prints the
//! counts as one JSON document (docs/json.md) instead of GNU's columns.

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::Path;
use std::process::ExitCode;

use clap::{error::ErrorKind, Args, CommandFactory, FromArgMatches, Parser};
use swath_engine::source::Span;
use swath_engine::{EngineError, Flow, Input};
use swath_kernels::wc::Encoding;
use swath_ops::count::count;
use swath_ops::report::{self, piece};

use crate::engine_args::{EngineArgs, Stopwatch};
use crate::gnu_args::{expand_gnu_long_options, gnu_usage_message, quote_name};
use crate::status::Status;
use crate::stdout::{Stdout, Voice};
use swath_report::wc::{format_line, Selected};

/// GNU wc's long options (getopt resolves abbreviations against these).
const GNU_LONG_OPTIONS: [(&str, bool); 13] = [
    ("json", false),
    ("range", true),
    ("emit-partial", true),
    ("operand-index", true),
    ("bytes", false),
    ("chars", false),
    ("lines", false),
    ("files0-from", true),
    ("max-line-length", false),
    ("words", false),
    ("debug", false),
    ("help", false),
    ("version", false),
];

/// Print newline, word, and byte counts for each FILE (GNU wc compatible, parallel).
#[derive(Parser, Debug)]
#[command(
    name = "wc",
    disable_version_flag = true,
    args_override_self = true,
    infer_long_args = true,
    after_help = "Examples:\n  swath wc -l huge.csv               lines, counted on all cores\n  swath wc --json *.log | jq .total  the counts as JSON"
)]
pub struct WcCli {
    #[command(flatten)]
    args: WcArgs,
}

/// The options of `swath wc`.
#[derive(Args, Debug)]
pub struct WcArgs {
    /// Print the byte counts.
    #[arg(short = 'c', long = "bytes")]
    bytes: bool,
    /// Print the character counts.
    #[arg(short = 'm', long = "chars")]
    chars: bool,
    /// Print the newline counts.
    #[arg(short = 'l', long = "lines")]
    lines: bool,
    /// Read input from the files named, NUL-terminated, in file F (- for standard input).
    #[arg(long = "files0-from", value_name = "F")]
    files0_from: Option<OsString>,
    /// Print the maximum display width.
    #[arg(short = 'L', long = "max-line-length")]
    max_line_length: bool,
    /// Print the word counts.
    #[arg(short = 'w', long = "words")]
    words: bool,
    /// When to print a line with total counts: auto (more than one file), always, only, never.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "only", "never"])]
    total: String,
    /// Print the counts as one JSON document (the counts asked for, each file's and the
    /// total; layout in docs/json.md).
    #[arg(long)]
    json: bool,
    /// Accepted for compatibility; prints nothing.
    #[arg(long, hide = true)]
    debug: bool,
    /// Output version information and exit.
    #[arg(long)]
    version: bool,
    /// Write the counts of the one FILE as a partial result to OUT, instead of printing
    /// them, for `swath merge` (see --range).
    #[arg(long = "emit-partial", value_name = "OUT")]
    emit_partial: Option<OsString>,
    /// With --emit-partial: count only bytes START..END of FILE, cut at line ends as Hadoop
    /// and Dask cut (each line belongs to the range that holds the byte before it).
    #[arg(long, value_name = "START:END")]
    range: Option<String>,
    /// With --emit-partial: FILE's position among the whole job's files, so that `swath
    /// merge` prints the files in that order (default 0: then in name order).
    #[arg(long = "operand-index", value_name = "K", default_value_t = 0)]
    operand_index: u32,
    /// The files to count (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    files: Vec<OsString>,
    #[command(flatten)]
    engine: EngineArgs,
}

/// Runs wc with `args` (without the program name); `prog` prefixes messages.
pub fn main(prog: &str, args: Vec<OsString>) -> ExitCode {
    let argv: Vec<OsString> = std::iter::once(OsString::from(prog)).chain(args).collect();
    let usage = |msg: String| {
        eprintln!("{prog}: {msg}");
        eprintln!("Try '{prog} --help' for more information.");
        ExitCode::from(Status::Failure)
    };
    let argv = match expand_gnu_long_options(&argv, &GNU_LONG_OPTIONS) {
        Ok(a) => a,
        Err(m) => return usage(m),
    };
    let command = WcCli::command()
        .name(prog.to_string())
        .bin_name(prog.to_string());
    let matches = match command.try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Stdout::print_and_exit(prog, Voice::Wc, &crate::stdout::clap_text(&e));
        }
        Err(e) => return usage(gnu_usage_message(&e, &argv)),
    };
    let a = match WcCli::from_arg_matches(&matches) {
        Ok(c) => c.args,
        Err(e) => return usage(e.to_string()),
    };
    if a.emit_partial.is_none() {
        let index_given =
            matches.value_source("operand_index") == Some(clap::parser::ValueSource::CommandLine);
        if a.range.is_some() {
            return usage(crate::cmd::partial::needs_emit_partial("--range"));
        } else if index_given {
            return usage(crate::cmd::partial::needs_emit_partial("--operand-index"));
        }
    }
    if a.version {
        let text = format!("wc (swath) {}\n", env!("CARGO_PKG_VERSION"));
        return Stdout::print_and_exit(prog, Voice::Wc, text.as_bytes());
    }
    let mut sel = Selected {
        lines: a.lines,
        words: a.words,
        chars: a.chars,
        bytes: a.bytes,
        max: a.max_line_length,
    };
    if sel.count() == 0 {
        sel = Selected {
            lines: true,
            words: true,
            chars: false,
            bytes: true,
            max: false,
        };
    }
    if let Some(out) = &a.emit_partial {
        if a.json {
            return usage("--json cannot be used with --emit-partial".into());
        }
        return emit_partial(prog, &a, out, sel);
    }
    // Names: operands, or the NUL-separated list, or standard input without a name.
    let (names, list_in_memory): (Vec<Option<OsString>>, bool) = match &a.files0_from {
        Some(f) => {
            if let Some(extra) = a.files.first() {
                return usage(format!(
                    "extra operand '{}'\nfile operands cannot be combined with --files0-from",
                    extra.to_string_lossy()
                ));
            }
            match read_names(f) {
                Ok((n, regular)) => (n.into_iter().map(Some).collect(), regular),
                Err(e) => {
                    eprintln!(
                        "{prog}: cannot open '{}' for reading: {}",
                        f.to_string_lossy(),
                        swath_engine::error::os_message(&e)
                    );
                    return ExitCode::from(Status::Failure);
                }
            }
        }
        None if a.files.is_empty() => (vec![None], true),
        None => (a.files.iter().cloned().map(Some).collect(), true),
    };
    let enc = encoding();
    let nfiles = if list_in_memory { names.len() } else { 0 };
    let width = number_width(&names, nfiles, sel);
    let clock = Stopwatch::start();
    let mut out = Stdout::new(prog, Voice::Wc);
    let mut failed = false;
    let mut totals = [0u64; 5];
    let only_total = a.total == "only";
    let mut last_plan = None;
    // --json: each file's entry, printed as one document at the end.
    let mut json_files: Vec<JsonFile> = Vec::new();
    // Small regular files are counted whole, several at once, on a pool of workers; large
    // files and standard input one at a time on all cores; results are printed in order.
    let small: Vec<bool> = names
        .iter()
        .map(|n| match n {
            Some(n) if !n.is_empty() && n != "-" => swath_engine::many::is_small_file(n),
            _ => false,
        })
        .collect();
    // A small file is read front to back by one worker: no residency sampling, no map to
    // set up and tear down, which would cost more than counting it.
    let single = EngineArgs {
        workers: crate::engine_args::WorkerArgs {
            threads: Some(swath_engine::Threads::Count(1)),
            ..a.engine.workers.clone()
        },
        strategy: match a.engine.strategy {
            swath_engine::Strategy::Auto => swath_engine::Strategy::Read,
            s => s,
        },
    };
    swath_engine::run_many(
        &small,
        swath_engine::sysinfo::cores(),
        |i, pooled| {
            let names_from_stdin = a.files0_from.as_deref() == Some(std::ffi::OsStr::new("-"));
            if names_from_stdin && names[i].as_deref() == Some(std::ffi::OsStr::new("-")) {
                return FileOutcome::StdinInStdinList;
            }
            process(
                &names[i],
                enc,
                sel,
                if pooled { &single } else { &a.engine },
            )
        },
        |i, outcome| {
            let name = &names[i];
            // Output lines show names raw, unless a newline would break the line.
            let label: Option<Vec<u8>> = name.as_ref().map(|n| {
                use std::os::unix::ffi::OsStrExt;
                if n.as_bytes().contains(&b'\n') {
                    quote_name(n, enc.is_utf8()).into_bytes()
                } else {
                    n.as_bytes().to_vec()
                }
            });
            let counts = match outcome {
                FileOutcome::EmptyName => {
                    if a.json {
                        json_files.push(JsonFile::error(name, "invalid zero-length file name"));
                    }
                    match &a.files0_from {
                        Some(f) => eprintln!(
                            "{prog}: {}:{}: invalid zero-length file name",
                            quote_name(f, enc.is_utf8()),
                            i + 1
                        ),
                        None => eprintln!("{prog}: invalid zero-length file name"),
                    }
                    failed = true;
                    return Flow::Continue;
                }
                FileOutcome::StdinInStdinList => {
                    if a.json {
                        json_files.push(JsonFile::error(
                            name,
                            "when reading file names from standard input, no file name of '-' allowed",
                        ));
                    }
                    eprintln!(
                        "{prog}: when reading file names from stdin, no file name of '-' allowed"
                    );
                    failed = true;
                    return Flow::Continue;
                }
                FileOutcome::OpenError(e) => {
                    report(prog, name.as_deref(), &e, enc.is_utf8());
                    if a.json {
                        json_files.push(JsonFile::error(name, &e.cause()));
                    }
                    failed = true;
                    return Flow::Continue;
                }
                FileOutcome::ReadError(e) => {
                    report(prog, name.as_deref(), &e, enc.is_utf8());
                    if a.json {
                        json_files.push(JsonFile::error(name, &e.cause()));
                        failed = true;
                        return Flow::Continue;
                    }
                    failed = true;
                    [0; 5]
                }
                FileOutcome::Counted(c, plan) => {
                    if plan.is_some() {
                        last_plan = plan;
                    }
                    c
                }
            };
            totals[0] += counts[0];
            totals[1] += counts[1];
            totals[2] += counts[2];
            totals[3] += counts[3];
            totals[4] = totals[4].max(counts[4]);
            if a.json {
                json_files.push(JsonFile::counts(name, &counts, sel));
                return Flow::Continue;
            }
            if !only_total {
                let line = format_line(&counts, sel, width, label.as_deref());
                out.write(&line);
                out.push();
                if out.failed() {
                    return Flow::Stop;
                }
            }
            Flow::Continue
        },
    );
    if out.failed() {
        return finish(out, failed);
    }

    if a.json {
        let doc = JsonDoc {
            schema: JSON_SCHEMA,
            tool: "swath wc",
            version: env!("CARGO_PKG_VERSION"),
            files: json_files,
            total: (a.total != "never").then(|| JsonCounts::new(&totals, sel)),
        };
        let mut text = serde_json::to_vec(&doc).expect("counts serialize");
        text.push(b'\n');
        out.write(&text);
        return finish(out, failed);
    }
    let print_total = match a.total.as_str() {
        "always" | "only" => true,
        "never" => false,
        _ => names.len() > 1,
    };
    if print_total {
        let label: Option<&[u8]> = if only_total { None } else { Some(b"total") };
        let w = if only_total { 1 } else { width };
        let line = format_line(&totals, sel, w, label);
        out.write(&line);
    }
    if a.engine.workers.time {
        eprintln!("{}", clock.times());
        if let Some((plan, stats)) = &last_plan {
            eprint!(
                "{}",
                clock
                    .report(a.engine.strategy, plan, Some(stats))
                    .lines()
                    .nth(1)
                    .map(|l| format!("{l} (last file)\n"))
                    .unwrap_or_default()
            );
        }
    }
    finish(out, failed)
}

/// The encoding wc counts in, from the locale and `POSIXLY_CORRECT`.
fn encoding() -> Encoding {
    match (
        crate::gnu_args::utf8_locale(),
        std::env::var_os("POSIXLY_CORRECT").is_some(),
    ) {
        (false, _) => Encoding::C,
        (true, false) => Encoding::Utf8,
        (true, true) => Encoding::Utf8Posix,
    }
}

/// Parses `--range START:END` (byte offsets).
pub(crate) fn parse_range(r: Option<&str>) -> Result<(u64, u64), String> {
    let Some(r) = r else {
        return Ok((0, u64::MAX));
    };
    let bad = || format!("invalid range '{r}' (expected START:END, byte offsets)");
    let (a, b) = r.split_once(':').ok_or_else(bad)?;
    let a: u64 = a.parse().map_err(|_| bad())?;
    let b: u64 = b.parse().map_err(|_| bad())?;
    if a > b {
        return Err(bad());
    }
    Ok((a, b))
}

/// `--emit-partial OUT`: counts bytes START..END of the one FILE (whole lines, see
/// `swath_engine::range`) and writes them, with the file's name and size and the counts
/// asked, as a partial result (docs/partial-format.md), atomically.
fn emit_partial(prog: &str, a: &WcArgs, out: &OsString, sel: Selected) -> ExitCode {
    let usage = |msg: &str| {
        eprintln!("{prog}: {msg}");
        eprintln!("Try '{prog} --help' for more information.");
        ExitCode::from(Status::Failure)
    };
    if a.files0_from.is_some() || a.files.len() != 1 || a.files[0] == "-" {
        return usage("--emit-partial takes exactly one FILE (a regular file, not standard input)");
    }
    let range = match parse_range(a.range.as_deref()) {
        Ok(r) => r,
        Err(m) => return usage(&m),
    };
    let name = &a.files[0];
    let enc = encoding();
    let fail = |e: &EngineError| {
        report(prog, Some(name), e, enc.is_utf8());
        ExitCode::from(Status::Failure)
    };
    let input = match Input::open_ranged(Path::new(name)) {
        Ok(i) => i,
        Err(e) => return fail(&e),
    };
    use std::os::unix::ffi::OsStrExt;
    let options = swath_report::wc::options(sel, enc);
    let of = report::PieceOf {
        options: &options,
        index: a.operand_index,
        name: name.as_bytes(),
        len: input.len().unwrap_or(0),
        offset: 0,
    };
    let config = report::WcConfig {
        encoding: enc,
        need: sel.need(),
    };
    let engine = a.engine.options();
    let bytes = match piece::<report::Wc>(&of, &input, range, &config, &engine) {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    match crate::cmd::partial::write_bytes(Path::new(out), &bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            eprintln!("{prog}: {m}");
            ExitCode::from(Status::Failure)
        }
    }
}

/// Flushes standard output: GNU's status for a write error (reported once), else 1 when a
/// file failed.
fn finish(out: Stdout, failed: bool) -> ExitCode {
    match out.finish() {
        Ok(()) => ExitCode::from(if failed {
            Status::Failure
        } else {
            Status::Success
        }),
        Err(status) => ExitCode::from(status),
    }
}

/// What counting one name gave.
enum FileOutcome {
    /// The name was empty.
    EmptyName,
    /// `-` in a list of names read from standard input (which is already used up).
    StdinInStdinList,
    /// The file could not be opened: a message, no count line.
    OpenError(EngineError),
    /// Reading failed: a message, then a line of zeros.
    ReadError(EngineError),
    /// The counts (lines, words, chars, bytes, longest line) and what the engine did.
    Counted(
        [u64; 5],
        Option<(swath_engine::Plan, swath_engine::RunStats)>,
    ),
}

fn process(
    name: &Option<OsString>,
    enc: Encoding,
    sel: Selected,
    engine: &EngineArgs,
) -> FileOutcome {
    if name.as_ref().is_some_and(|n| n.is_empty()) {
        return FileOutcome::EmptyName;
    }
    let path = name.clone().unwrap_or_else(|| OsString::from("-"));
    let input = match Input::open(Path::new(&path)) {
        Ok(i) => i,
        Err(e) => return FileOutcome::OpenError(e),
    };
    match count_one(&input, enc, sel, engine) {
        Ok((c, plan)) => {
            if plan.is_some() && path == "-" {
                // Leave standard input where reading it would have (`wc - -`).
                let _ = input.mark_consumed(c[3]);
            }
            FileOutcome::Counted(c, plan)
        }
        Err(e) => FileOutcome::ReadError(e),
    }
}

fn report(prog: &str, name: Option<&std::ffi::OsStr>, e: &EngineError, utf8: bool) {
    // The engine names the file as opened ("-" for standard input); GNU names it as given.
    let cause = e.cause();
    let shown = match name {
        None => "'standard input'".to_string(),
        Some(n) => quote_name(n, utf8),
    };
    eprintln!("{prog}: {shown}: {cause}");
}

type Counted = (
    [u64; 5],
    Option<(swath_engine::Plan, swath_engine::RunStats)>,
);

/// lines, words, chars, bytes, max line length of one input.
fn count_one(
    input: &Input,
    enc: Encoding,
    sel: Selected,
    engine: &EngineArgs,
) -> Result<Counted, EngineError> {
    let bytes_only =
        sel.bytes && !sel.lines && !sel.words && !sel.max && (!sel.chars || enc == Encoding::C);
    if bytes_only {
        // GNU's shortcut: a regular file's size, never its bytes (a 1 TB sparse file is
        // answered at once). Files of the kernel's pseudo-filesystems (`/proc`, `/sys`),
        // whose size says 4096 or 0 whatever they hold, open as streams and are read.
        if let Some(len) = input.len() {
            return Ok(([0, 0, len, len, 0], None));
        }
    }
    let need = sel.need();
    let (t, plan, stats) = crate::progress::with_progress(input.len(), "swath wc", |done| {
        count(Span::whole(input), enc, need, &engine.options(), Some(done))
    })?;
    let chars = if enc == Encoding::C { t.bytes } else { t.chars };
    Ok((
        [t.lines, t.words, chars, t.bytes, t.max_line()],
        Some((plan, stats)),
    ))
}

/// GNU's `compute_number_width`: digits of the total size of the regular files named
/// (at least 7 when one is not a regular file), or 1 for a single input with one count.
fn number_width(names: &[Option<OsString>], nfiles: usize, sel: Selected) -> usize {
    if nfiles == 0 || (nfiles == 1 && sel.count() == 1) {
        return 1;
    }
    let mut total: u64 = 0;
    let mut minimum = 1;
    for name in names {
        let meta = match name {
            None => std::fs::metadata("/dev/stdin").ok().and(fstat0()),
            Some(n) if n == "-" => fstat0(),
            Some(n) if n.is_empty() => None,
            Some(n) => std::fs::metadata(n).ok().map(|m| (m.is_file(), m.len())),
        };
        match meta {
            Some((true, len)) => total += len,
            Some((false, _)) => minimum = 7,
            None => {}
        }
    }
    let mut width = 1;
    while total >= 10 {
        total /= 10;
        width += 1;
    }
    width.max(minimum)
}

fn fstat0() -> Option<(bool, u64)> {
    // SAFETY: fstat on descriptor 0 into a zeroed struct.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(0, &mut st) != 0 {
            return None;
        }
        Some((
            st.st_mode & libc::S_IFMT == libc::S_IFREG,
            st.st_size as u64,
        ))
    }
}

/// Reads NUL-separated names; the second value says whether the list came from a regular
/// file (GNU then sizes the columns from the files; from a pipe it cannot).
fn read_names(f: &OsString) -> io::Result<(Vec<OsString>, bool)> {
    use std::os::unix::ffi::OsStringExt;
    let mut data = Vec::new();
    let regular = if f == "-" {
        io::stdin().lock().read_to_end(&mut data)?;
        fstat0().is_some_and(|(r, _)| r)
    } else {
        let mut file = std::fs::File::open(f)?;
        let regular = file.metadata()?.is_file();
        file.read_to_end(&mut data)?;
        regular
    };
    let mut names: Vec<OsString> = data
        .split(|&b| b == 0)
        .map(|n| OsString::from_vec(n.to_vec()))
        .collect();
    if data.last().is_none_or(|&b| b == 0) {
        names.pop();
    }
    Ok((names, regular))
}

/// The layout of `wc --json` (docs/json.md).
const JSON_SCHEMA: u32 = 1;

/// `wc --json`'s document.
#[derive(serde::Serialize)]
struct JsonDoc {
    schema: u32,
    tool: &'static str,
    version: &'static str,
    files: Vec<JsonFile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<JsonCounts>,
}

/// The counts asked for (the others left out), in GNU's column order.
#[derive(serde::Serialize)]
struct JsonCounts {
    #[serde(skip_serializing_if = "Option::is_none")]
    lines: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    words: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chars: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_line_length: Option<u64>,
}

impl JsonCounts {
    fn new(c: &[u64; 5], sel: Selected) -> JsonCounts {
        JsonCounts {
            lines: sel.lines.then_some(c[0]),
            words: sel.words.then_some(c[1]),
            chars: sel.chars.then_some(c[2]),
            bytes: sel.bytes.then_some(c[3]),
            max_line_length: sel.max.then_some(c[4]),
        }
    }
}

/// One file of `wc --json`: its name and its counts, or why it has none.
#[derive(serde::Serialize)]
struct JsonFile {
    /// The name as given (`-` for standard input), U+FFFD for bytes that are not UTF-8.
    path: String,
    /// The name's bytes, only when it is not UTF-8 (as `cmp --json`'s `file1_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    path_bytes: Option<Vec<u8>>,
    #[serde(flatten)]
    counts: Option<JsonCounts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl JsonFile {
    fn named(name: &Option<OsString>) -> JsonFile {
        use std::os::unix::ffi::OsStrExt;
        let name = name.as_deref().unwrap_or(std::ffi::OsStr::new("-"));
        let path_bytes = std::str::from_utf8(name.as_bytes())
            .is_err()
            .then(|| name.as_bytes().to_vec());
        JsonFile {
            path: name.to_string_lossy().into_owned(),
            path_bytes,
            counts: None,
            error: None,
        }
    }

    fn counts(name: &Option<OsString>, c: &[u64; 5], sel: Selected) -> JsonFile {
        JsonFile {
            counts: Some(JsonCounts::new(c, sel)),
            ..JsonFile::named(name)
        }
    }

    fn error(name: &Option<OsString>, cause: &str) -> JsonFile {
        JsonFile {
            error: Some(cause.to_string()),
            ..JsonFile::named(name)
        }
    }
}
