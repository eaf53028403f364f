//! `swath cmp`: GNU cmp 3.8 compatible comparison, parallel inside the files (compMP).
//!
//! Everything a script can observe follows GNU cmp: operands and options (including skips in
//! C notation with size suffixes, repeated options, abbreviated long options), the messages on
//! stdout and stderr, and the exit status (0 same, 1 different, 2 trouble). Invoked through a
//! link named `cmp`, messages are prefixed `cmp:`; as `swath cmp`, `swath cmp:`.
//!
//! The extensions are compMP's: `--max-diffs K` reports the first K differences, the engine
//! options choose threads, block size and read method, `--json` prints a machine-readable
//! result, and `--time` reports where the time went.

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

use clap::{error::ErrorKind, Args, CommandFactory, FromArgMatches, Parser};
use serde::Serialize;
use swath_engine::{EngineError, EngineOptions, Flow, Input, InputKind};
use swath_ops::compare::{
    first_differences, stream_differences, stream_differences_with_lines, CompareSpec, Difference,
    Lines,
};

use crate::engine_args::{EngineArgs, Stopwatch};
use crate::gnu_args::{expand_gnu_long_options, gnu_usage_message};
use crate::progress::with_progress;
use crate::size::{parse_size, parse_size_prefix, SizeError};
use crate::status::Status;
use crate::stdout::{Stdout as Output, Voice};

/// Compare two files byte by byte (GNU cmp compatible, parallel inside the files).
#[derive(Parser, Debug)]
#[command(
    name = "cmp",
    disable_version_flag = true,
    args_override_self = true,
    infer_long_args = true,
    after_help = "SKIP values may be followed by suffixes: kB 1000, K 1024, MB 1,000,000, M 1,048,576, \
GB, G, and so on for T, P, E, Z, Y. KiB, MiB... are 1024-based as K, M.\n\
If a FILE is '-' or missing, read standard input.\n\
Exit status is 0 if inputs are the same, 1 if different, 2 if trouble.\n\n\
Examples:\n  \
swath cmp old.img new.img               the first difference, as GNU cmp\n  \
swath cmp -l --max-diffs 10 a b         the first 10 differing bytes, in order\n  \
swath cmp --json a b | jq .differences"
)]
pub struct CmpCli {
    #[command(flatten)]
    args: CmpArgs,
}

/// The options of `swath cmp`.
#[derive(Args, Debug)]
pub struct CmpArgs {
    /// Print differing bytes.
    #[arg(
        short = 'b',
        long = "print-bytes",
        short_alias = 'c',
        alias = "print-chars"
    )]
    print_bytes: bool,

    /// Skip the first SKIP bytes of both inputs, or SKIP1 of FILE1 and SKIP2 of FILE2.
    #[arg(
        short = 'i',
        long = "ignore-initial",
        value_name = "SKIP1[:SKIP2]",
        allow_hyphen_values = true
    )]
    ignore_initial: Vec<String>,

    /// Output byte numbers and differing byte values.
    #[arg(short = 'l', long = "verbose")]
    verbose: bool,

    /// Compare at most LIMIT bytes.
    #[arg(
        short = 'n',
        long = "bytes",
        value_name = "LIMIT",
        allow_hyphen_values = true
    )]
    bytes: Vec<String>,

    /// Suppress all normal output.
    #[arg(short = 's', long = "quiet", visible_alias = "silent")]
    quiet: bool,

    /// Output version information and exit.
    #[arg(short = 'v', long = "version")]
    version: bool,

    /// Report the first K differences, in file order, then stop (a swath option). Default:
    /// 1, or every difference with -l.
    #[arg(
        long,
        value_name = "K",
        value_parser = clap::value_parser!(u64).range(1..),
        allow_hyphen_values = true
    )]
    max_diffs: Option<u64>,

    /// Print the result as one JSON object on standard output.
    #[arg(long)]
    json: bool,

    /// The two files to compare, and how many bytes to skip at the start of each.
    #[arg(
        value_name = "FILE1 FILE2 [SKIP1 [SKIP2]]",
        allow_hyphen_values = false
    )]
    operands: Vec<OsString>,

    #[command(flatten)]
    engine: EngineArgs,
}

/// What the user asked for, validated.
#[derive(Debug)]
struct Request {
    files: [OsString; 2],
    skip: [u64; 2],
    limit: Option<u64>,
    mode: Mode,
    print_bytes: bool,
    max_diffs: Option<u64>,
    json: bool,
    engine: EngineOptions,
    time: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The first difference, with its line (GNU's default).
    First,
    /// Every difference (`-l`).
    All,
    /// Status only (`-s`).
    Status,
    /// Standard output is /dev/null: stop at the first difference, print nothing on stdout
    /// (GNU's internal `type_no_stdout`).
    NoStdout,
}

/// A usage error: GNU prints it, then "Try 'cmp --help' for more information.", exit 2.
struct Usage(String);

/// Runs cmp with `args` (without the program name); `prog` prefixes messages.
pub fn main(prog: &str, args: Vec<OsString>) -> ExitCode {
    let argv: Vec<OsString> = std::iter::once(OsString::from(prog)).chain(args).collect();
    let request = match parse(prog, &argv) {
        Ok(Ok(r)) => r,
        Ok(Err(code)) => return code,
        Err(Usage(msg)) => {
            eprintln!("{prog}: {msg}");
            eprintln!("{prog}: Try '{prog} --help' for more information.");
            return ExitCode::from(Status::Trouble);
        }
    };
    let mut out = Output::new(prog, Voice::Cmp);
    let code = run(prog, &request, &mut out);
    let code = match out.finish() {
        Ok(()) => code,
        Err(status) => status,
    };
    ExitCode::from(code)
}

/// GNU cmp's long options, in the order of its option table (getopt lists ambiguous
/// possibilities in this order), and whether each takes an argument.
const GNU_LONG_OPTIONS: [(&str, bool); 9] = [
    ("print-bytes", false),
    ("print-chars", false),
    ("ignore-initial", true),
    ("verbose", false),
    ("bytes", true),
    ("silent", false),
    ("quiet", false),
    ("version", false),
    ("help", false),
];

fn parse(prog: &str, argv: &[OsString]) -> Result<Result<Request, ExitCode>, Usage> {
    let argv = &expand_gnu_long_options(argv, &GNU_LONG_OPTIONS).map_err(Usage)?;
    let command = CmpCli::command()
        .name(prog.to_string())
        .bin_name(prog.to_string());
    let matches = match command.try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => {
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Ok(Err(
                    Output::print_and_exit(prog, Voice::Cmp, &crate::stdout::clap_text(&e)),
                )),
                _ => Err(Usage(gnu_usage_message(&e, argv))),
            }
        }
    };
    let cli = CmpCli::from_arg_matches(&matches).map_err(|e| Usage(e.to_string()))?;
    let a = cli.args;
    if a.version {
        let text = format!("cmp (swath) {}\n", env!("CARGO_PKG_VERSION"));
        return Ok(Err(Output::print_and_exit(
            prog,
            Voice::Cmp,
            text.as_bytes(),
        )));
    }
    if a.verbose && a.quiet {
        return Err(Usage("options -l and -s are incompatible".into()));
    }
    let mut skip = [0u64; 2];
    for value in &a.ignore_initial {
        parse_ignore_initial(value, &mut skip)?;
    }
    let mut limit: Option<u64> = None;
    for value in &a.bytes {
        match parse_size(value) {
            Ok(n) => limit = Some(limit.map_or(n, |l| l.min(n))),
            Err(_) => return Err(Usage(format!("invalid --bytes value '{value}'"))),
        }
    }
    let mut ops = a.operands.into_iter();
    let Some(file0) = ops.next() else {
        let last = argv
            .last()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Err(Usage(format!("missing operand after '{last}'")));
    };
    let file1 = ops.next().unwrap_or_else(|| OsString::from("-"));
    for slot in &mut skip {
        if let Some(v) = ops.next() {
            let v = v.to_string_lossy().into_owned();
            let n = parse_skip_value(&v, None)?.0;
            *slot = (*slot).max(n);
        }
    }
    if let Some(extra) = ops.next() {
        return Err(Usage(format!(
            "extra operand '{}'",
            extra.to_string_lossy()
        )));
    }
    let mode = if a.quiet {
        Mode::Status
    } else if stdout_is_dev_null() {
        Mode::NoStdout
    } else if a.verbose {
        Mode::All
    } else {
        Mode::First
    };
    Ok(Ok(Request {
        files: [file0, file1],
        skip,
        limit,
        mode,
        print_bytes: a.print_bytes,
        max_diffs: a.max_diffs,
        json: a.json,
        engine: a.engine.options(),
        time: a.engine.workers.time,
    }))
}

/// `-i SKIP1[:SKIP2]`: each value raises the skip (GNU keeps the largest given).
fn parse_ignore_initial(value: &str, skip: &mut [u64; 2]) -> Result<(), Usage> {
    let (first, used) = parse_skip_value(value, Some(':'))?;
    skip[0] = skip[0].max(first);
    if value[used..].starts_with(':') {
        let rest = &value[used + 1..];
        let (second, _) = parse_skip_value(rest, None)?;
        skip[1] = skip[1].max(second);
    } else {
        skip[1] = skip[1].max(skip[0]);
    }
    Ok(())
}

fn parse_skip_value(value: &str, delimiter: Option<char>) -> Result<(u64, usize), Usage> {
    let invalid = || Usage(format!("invalid --ignore-initial value '{value}'"));
    let (n, used) = match parse_size_prefix(value) {
        Ok((n, used)) if used == value.len() => (n, used),
        Ok((n, used)) | Err(SizeError::Trailing(n, used))
            if delimiter.is_some_and(|d| value[used..].starts_with(d)) =>
        {
            (n, used)
        }
        Ok(_) | Err(SizeError::Invalid | SizeError::Trailing(..) | SizeError::Overflow) => {
            return Err(invalid())
        }
    };
    if n > i64::MAX as u64 {
        return Err(invalid());
    }
    Ok((n, used))
}

/// True when standard output is the null device (GNU cmp then skips formatting).
fn stdout_is_dev_null() -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(null) = std::fs::metadata("/dev/null") else {
        return false;
    };
    // SAFETY: fstat on descriptor 1 fills the zeroed struct; no other preconditions.
    let st = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(1, &mut st) != 0 {
            return false;
        }
        st
    };
    st.st_dev == null.dev() && st.st_ino == null.ino()
}

fn run(prog: &str, req: &Request, out: &mut Output) -> Status {
    let clock = Stopwatch::start();
    let names: Vec<String> = req
        .files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    // GNU opens FILE2 first when it is "-", so a closed stdin is not mistaken for FILE1;
    // before opening the second, the same name with the same skips is identical.
    let order: [usize; 2] = if req.files[1] == "-" { [1, 0] } else { [0, 1] };
    let mut opened: [Option<Input>; 2] = [None, None];
    for (step, &f) in order.iter().enumerate() {
        if step == 1 && req.skip[0] == req.skip[1] && req.files[0] == req.files[1] {
            return identical(out, req, &names);
        }
        match Input::open(std::path::Path::new(&req.files[f])) {
            Ok(i) => opened[f] = Some(i),
            Err(e) => {
                if req.mode != Mode::Status {
                    eprintln!("{prog}: {e}");
                }
                return Status::Trouble;
            }
        }
    }
    let [Some(a), Some(b)] = opened else {
        return Status::Trouble;
    };
    let inputs = [&a, &b];
    // The same file at the same position (pipes have none, so two ends of one pipe match).
    if a.same_file(&b) {
        let position = |i: &Input, skip: u64| i.is_seekable().then(|| i.base() + skip);
        if position(&a, req.skip[0]) == position(&b, req.skip[1]) {
            return identical(out, req, &names);
        }
    }
    let limit = req.limit;
    // GNU's shortcut: with -s, two regular files of different sizes differ if more bytes
    // would be compared than the smaller holds; nothing needs reading.
    if req.mode == Mode::Status {
        if let (Some(la), Some(lb)) = (a.len(), b.len()) {
            let s0 = la.saturating_sub(req.skip[0]);
            let s1 = lb.saturating_sub(req.skip[1]);
            if s0 != s1 && limit.is_none_or(|l| s0.min(s1) < l) {
                return Status::DIFFERENT;
            }
        }
    }
    let total = match (a.len(), b.len()) {
        (Some(la), Some(lb)) => {
            let common = la
                .saturating_sub(req.skip[0])
                .min(lb.saturating_sub(req.skip[1]));
            Some(limit.map_or(common, |l| l.min(common)))
        }
        _ => None,
    };
    let result = with_progress(total, prog, |counter| {
        let spec = CompareSpec {
            inputs,
            skip: req.skip,
            limit,
            progress: Some(counter),
        };
        match req.mode {
            // `-l` streams, with `--max-diffs K` too (it kept K differences in memory).
            Mode::All if req.max_diffs != Some(0) => list_all(prog, req, &spec, &names, out),
            _ => first_k(prog, req, &spec, &names, out),
        }
    });
    match result {
        Ok((code, plan, stats)) => {
            if req.time {
                eprint!("{}", clock.report(req.engine.strategy, &plan, Some(&stats)));
            }
            code
        }
        Err(e) => {
            eprintln!("{prog}: {e}");
            Status::Trouble
        }
    }
}

/// Identical without reading: exit 0 (and, with `--json`, say so).
fn identical(out: &mut Output, req: &Request, names: &[String]) -> Status {
    if req.json {
        emit_json(out, req, names, &[], None, &[], Status::SAME);
    }
    Status::SAME
}

type Ran = (Status, swath_engine::Plan, swath_engine::RunStats);

/// Default mode, `-s`, and `-l` with `--max-diffs`: the first K differences.
fn first_k(
    prog: &str,
    req: &Request,
    spec: &CompareSpec<'_>,
    names: &[String],
    out: &mut Output,
) -> Result<Ran, EngineError> {
    let k = match (req.mode, req.max_diffs) {
        (Mode::Status | Mode::NoStdout, _) => 1,
        (_, Some(k)) => usize::try_from(k).unwrap_or(usize::MAX),
        (_, None) => 1,
    };
    if req.mode == Mode::First && k > KEEP_AT_MOST {
        return first_k_streamed(prog, req, spec, names, out, k as u64);
    }
    let lines = if req.mode == Mode::First {
        Lines::Count
    } else {
        Lines::None
    };
    let r = first_differences(spec, k, lines, &req.engine)?;
    let eof = (r.diffs.len() < k)
        .then(|| eof_side(&r.extent.ended))
        .flatten();
    let code = if r.diffs.is_empty() && eof.is_none() {
        Status::SAME
    } else {
        Status::DIFFERENT
    };
    if req.json {
        let lines: Vec<u64> = r.newlines_before.iter().map(|n| n + 1).collect();
        let eof_info = eof.map(|side| EofInfo {
            file: names[side].clone(),
            file_bytes: raw_name(&req.files[side]),
            after_byte: r.extent.len,
        });
        emit_json(out, req, names, &r.diffs, eof_info, &lines, code);
        return Ok((code, r.plan, r.stats));
    }
    match req.mode {
        Mode::Status | Mode::NoStdout => {}
        Mode::First => {
            let word = if messages_locale_is_posix() && !req.print_bytes {
                "char"
            } else {
                "byte"
            };
            let mut buf = Vec::new();
            for (d, nl) in r.diffs.iter().zip(&r.newlines_before) {
                differ_line(&mut buf, req, word, *d, *nl);
            }
            out.write(&buf);
        }
        Mode::All => {
            let width = offset_width(spec, req.limit);
            let mut buf = Vec::new();
            for d in &r.diffs {
                format_verbose(&mut buf, *d, width, req.print_bytes);
            }
            out.write(&buf);
        }
    }
    if let (Some(side), false) = (eof, req.mode == Mode::Status) {
        let line = eof_line(r.newlines_total, r.last_byte);
        report_eof(
            prog,
            &req.files[side],
            r.extent.len,
            (req.mode == Mode::First).then_some(line),
        );
    }
    Ok((code, r.plan, r.stats))
}

/// Up to this many differences (`--max-diffs`) are found speculatively and kept; more are
/// streamed in order as they are found, so memory does not grow with K.
const KEEP_AT_MOST: usize = 1 << 16;

/// The default output with a large `--max-diffs K`: differences and their line numbers
/// streamed in file order, the run stopped after K.
fn first_k_streamed(
    prog: &str,
    req: &Request,
    spec: &CompareSpec<'_>,
    names: &[String],
    out: &mut Output,
    k: u64,
) -> Result<Ran, EngineError> {
    let word = if messages_locale_is_posix() && !req.print_bytes {
        "char"
    } else {
        "byte"
    };
    let mut seen = 0u64;
    let mut buf = Vec::new();
    if req.json {
        buf.extend_from_slice(json_head(req, names).as_bytes());
    }
    let r = stream_differences_with_lines(spec, &req.engine, |d, newlines| {
        if req.json {
            if seen > 0 {
                buf.push(b',');
            }
            let item = JsonDiff::from(d, Some(newlines + 1));
            buf.extend_from_slice(serde_json::to_string(&item).unwrap_or_default().as_bytes());
        } else {
            differ_line(&mut buf, req, word, d, newlines);
        }
        seen += 1;
        if buf.len() >= 1 << 16 {
            out.write(&buf);
            buf.clear();
        }
        if seen >= k {
            Flow::Stop
        } else {
            Flow::Continue
        }
    })?;
    let eof = (seen < k).then(|| eof_side(&r.extent.ended)).flatten();
    let code = if seen == 0 && eof.is_none() {
        Status::SAME
    } else {
        Status::DIFFERENT
    };
    if req.json {
        let eof_info = eof.map(|side| EofInfo {
            file: names[side].clone(),
            file_bytes: raw_name(&req.files[side]),
            after_byte: r.extent.len,
        });
        buf.extend_from_slice(json_tail(eof_info, code).as_bytes());
        out.write(&buf);
        return Ok((code, r.plan, r.stats));
    }
    out.write(&buf);
    if let Some(side) = eof {
        let line = eof_line(r.newlines_total, r.last_byte);
        report_eof(prog, &req.files[side], r.extent.len, Some(line));
    }
    Ok((code, r.plan, r.stats))
}

/// What the EOF message says of lines: the newlines read, and whether the last byte was one.
fn eof_line(newlines_total: Option<u64>, last_byte: Option<u8>) -> (u64, bool) {
    (newlines_total.unwrap_or(0), last_byte == Some(b'\n'))
}

/// One line of the default output: `A B differ: byte N, line L` (and the bytes with `-b`).
fn differ_line(line: &mut Vec<u8>, req: &Request, word: &str, d: Difference, newlines: u64) {
    // Names as their bytes, as GNU prints them (not made valid UTF-8).
    line.extend_from_slice(req.files[0].as_bytes());
    line.push(b' ');
    line.extend_from_slice(req.files[1].as_bytes());
    line.extend_from_slice(
        format!(" differ: {word} {}, line {}", d.offset + 1, newlines + 1).as_bytes(),
    );
    if req.print_bytes {
        line.extend_from_slice(
            format!(
                " is {:3o} {} {:3o} {}",
                d.a,
                printable(d.a),
                d.b,
                printable(d.b)
            )
            .as_bytes(),
        );
    }
    line.push(b'\n');
}

/// `-l`: every difference, formatted by the workers and written in order.
fn list_all(
    prog: &str,
    req: &Request,
    spec: &CompareSpec<'_>,
    names: &[String],
    out: &mut Output,
) -> Result<Ran, EngineError> {
    let width = offset_width(spec, req.limit);
    let print_bytes = req.print_bytes;
    if req.json {
        return list_all_json(req, spec, names, out);
    }
    let mut any = false;
    let mut cap = Cap::new(req.max_diffs, b'\n');
    let r = stream_differences(
        spec,
        &req.engine,
        |d, buf| format_verbose(buf, d, width, print_bytes),
        |bytes| {
            any = true;
            let (bytes, flow) = cap.take(bytes);
            out.write(bytes);
            flow
        },
    )?;
    let eof = eof_side(&r.extent.ended).filter(|_| !cap.reached());
    if let Some(side) = eof {
        report_eof(prog, &req.files[side], r.extent.len, None);
    }
    let code = if any || eof.is_some() {
        Status::DIFFERENT
    } else {
        Status::SAME
    };
    Ok((code, r.plan, r.stats))
}

fn list_all_json(
    req: &Request,
    spec: &CompareSpec<'_>,
    names: &[String],
    out: &mut Output,
) -> Result<Ran, EngineError> {
    let head = json_head(req, names);
    out.write(head.as_bytes());
    let mut first = true;
    // Items hold numbers only, so each ends at its one '}'.
    let mut cap = Cap::new(req.max_diffs, b'}');
    let r = stream_differences(
        spec,
        &req.engine,
        |d, buf| {
            let item = serde_json::to_string(&JsonDiff::from(d, None)).unwrap_or_default();
            buf.extend_from_slice(item.as_bytes());
            buf.push(b',');
        },
        |bytes| {
            // Items arrive as "{..},{..}," per block: drop the separator before the first.
            if first {
                first = false;
            } else {
                out.write(b",");
            }
            let (bytes, flow) = cap.take(bytes);
            out.write(bytes.strip_suffix(b",").unwrap_or(bytes));
            flow
        },
    )?;
    let eof = eof_side(&r.extent.ended)
        .filter(|_| !cap.reached())
        .map(|side| EofInfo {
            file: names[side].clone(),
            file_bytes: raw_name(&req.files[side]),
            after_byte: r.extent.len,
        });
    let code = if !first || eof.is_some() {
        Status::DIFFERENT
    } else {
        Status::SAME
    };
    let tail = json_tail(eof, code);
    out.write(tail.as_bytes());
    Ok((code, r.plan, r.stats))
}

/// `--max-diffs K` over streamed differences: passes the first K items (each ending with
/// `end`) and then stops the run.
struct Cap {
    left: Option<u64>,
    end: u8,
}

impl Cap {
    fn new(max: Option<u64>, end: u8) -> Cap {
        Cap { left: max, end }
    }

    /// The part of a block's items to write, and whether to go on.
    fn take<'b>(&mut self, bytes: &'b [u8]) -> (&'b [u8], Flow) {
        let Some(left) = self.left.as_mut() else {
            return (bytes, Flow::Continue);
        };
        let mut seen = 0u64;
        for (i, &b) in bytes.iter().enumerate() {
            if b == self.end {
                seen += 1;
                if seen >= *left {
                    *left = 0;
                    return (&bytes[..=i], Flow::Stop);
                }
            }
        }
        *left -= seen;
        (bytes, Flow::Continue)
    }

    /// True once K items went through.
    fn reached(&self) -> bool {
        self.left == Some(0)
    }
}

/// Which input ended first, when exactly one did.
fn eof_side(ended: &[bool]) -> Option<usize> {
    match ended {
        [true, false] => Some(0),
        [false, true] => Some(1),
        _ => None,
    }
}

fn report_eof(prog: &str, file: &std::ffi::OsStr, bytes: u64, line: Option<(u64, bool)>) {
    let tail = if bytes == 0 {
        " which is empty".to_string()
    } else {
        match line {
            Some((newlines, true)) => format!(" after byte {bytes}, line {newlines}"),
            Some((newlines, false)) => {
                format!(" after byte {bytes}, in line {}", newlines + 1)
            }
            None => format!(" after byte {bytes}"),
        }
    };
    // The name as its bytes, as GNU prints it.
    let mut msg = format!("{prog}: EOF on ").into_bytes();
    msg.extend_from_slice(file.as_bytes());
    msg.extend_from_slice(tail.as_bytes());
    msg.push(b'\n');
    let _ = io::Write::write_all(&mut io::stderr(), &msg);
}

/// Digits of the largest byte number `-l` can print (GNU sizes the column from the regular
/// files' sizes and the limit).
fn offset_width(spec: &CompareSpec<'_>, limit: Option<u64>) -> usize {
    let mut max = limit.unwrap_or(i64::MAX as u64).min(i64::MAX as u64);
    for (input, skip) in spec.inputs.iter().zip(spec.skip) {
        if input.kind() == InputKind::Regular {
            let bytes = input.len().unwrap_or(0).saturating_sub(skip);
            max = max.min(bytes);
        }
    }
    let mut width = 1;
    while max >= 10 {
        max /= 10;
        width += 1;
    }
    width
}

/// `%3o` of every byte value.
const fn octal_table() -> [[u8; 3]; 256] {
    let mut t = [[b' '; 3]; 256];
    let mut i = 0;
    while i < 256 {
        let d = [(i / 64) as u8, ((i / 8) % 8) as u8, (i % 8) as u8];
        if i >= 64 {
            t[i][0] = b'0' + d[0];
        }
        if i >= 8 {
            t[i][1] = b'0' + d[1];
        }
        t[i][2] = b'0' + d[2];
        i += 1;
    }
    t
}
static OCTAL: [[u8; 3]; 256] = octal_table();

/// One `-l` line: `%*d %3o %3o`, or with `-b` `%*d %3o %-4s %3o %s`.
fn format_verbose(buf: &mut Vec<u8>, d: Difference, width: usize, print_bytes: bool) {
    let mut digits = [0u8; 20];
    let mut n = d.offset + 1;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let len = digits.len() - i;
    buf.extend(std::iter::repeat_n(b' ', width.saturating_sub(len)));
    buf.extend_from_slice(&digits[i..]);
    buf.push(b' ');
    buf.extend_from_slice(&OCTAL[d.a as usize]);
    if print_bytes {
        let s = printable(d.a);
        buf.push(b' ');
        buf.extend_from_slice(s.as_bytes());
        buf.extend(std::iter::repeat_n(b' ', 4usize.saturating_sub(s.len())));
    }
    buf.push(b' ');
    buf.extend_from_slice(&OCTAL[d.b as usize]);
    if print_bytes {
        buf.push(b' ');
        buf.extend_from_slice(printable(d.b).as_bytes());
    }
    buf.push(b'\n');
}

/// GNU cmp's `sprintc`: the byte itself when printable, `^X` for control characters, `M-`
/// before bytes with the high bit set.
fn printable(mut c: u8) -> String {
    let mut s = String::new();
    if !(0x20..0x7f).contains(&c) {
        if c >= 128 {
            s.push_str("M-");
            c -= 128;
        }
        if c < 32 {
            s.push('^');
            c += 64;
        } else if c == 127 {
            s.push('^');
            c = b'?';
        }
    }
    s.push(c as char);
    s
}

/// True when the messages locale is C or POSIX, where GNU cmp says "char" instead of "byte".
fn messages_locale_is_posix() -> bool {
    // SAFETY: no other thread is running (the engine's workers and the progress thread are
    // joined before results are formatted), so changing the locale races with nothing; the
    // returned pointer is read at once as a C string and not kept.
    unsafe {
        libc::setlocale(libc::LC_ALL, c"".as_ptr());
        let name = libc::setlocale(libc::LC_MESSAGES, std::ptr::null());
        if name.is_null() {
            return true;
        }
        let name = std::ffi::CStr::from_ptr(name).to_bytes();
        name == b"C" || name == b"POSIX"
    }
}

#[derive(Serialize)]
struct JsonDiff {
    /// 1-based byte number after the skips, as GNU prints it.
    byte: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
    byte1: u8,
    byte2: u8,
}

impl JsonDiff {
    fn from(d: Difference, line: Option<u64>) -> Self {
        JsonDiff {
            byte: d.offset + 1,
            line,
            byte1: d.a,
            byte2: d.b,
        }
    }
}

#[derive(Serialize)]
struct EofInfo {
    file: String,
    /// The name's bytes, when it is not UTF-8 (`file` then holds U+FFFD in their place).
    #[serde(skip_serializing_if = "Option::is_none")]
    file_bytes: Option<Vec<u8>>,
    after_byte: u64,
}

/// A file name's exact bytes for JSON, which cannot hold bytes that are not UTF-8: `None`
/// for a UTF-8 name (the string says it all), else the bytes (docs/json.md).
fn raw_name(name: &std::ffi::OsStr) -> Option<Vec<u8>> {
    name.to_str().is_none().then(|| name.as_bytes().to_vec())
}

/// `"fileN":NAME`, and `"fileN_bytes":[...]` after it when the name is not UTF-8.
fn json_name(key: &str, name: &std::ffi::OsStr) -> String {
    let text = serde_json::to_string(&name.to_string_lossy()).unwrap_or_default();
    match raw_name(name) {
        None => format!("\"{key}\":{text}"),
        Some(bytes) => format!(
            "\"{key}\":{text},\"{key}_bytes\":{}",
            serde_json::to_string(&bytes).unwrap_or_default()
        ),
    }
}

/// The layout of `cmp --json` (docs/json.md).
const JSON_SCHEMA: u32 = 1;

fn json_head(req: &Request, _names: &[String]) -> String {
    format!(
        "{{\"schema\":{JSON_SCHEMA},\"tool\":\"swath cmp\",\"version\":\"{}\",{},{},\"skip1\":{},\"skip2\":{},\"limit\":{},\"differences\":[",
        env!("CARGO_PKG_VERSION"),
        json_name("file1", &req.files[0]),
        json_name("file2", &req.files[1]),
        req.skip[0],
        req.skip[1],
        req.limit.map_or("null".to_string(), |l| l.to_string()),
    )
}

fn json_tail(eof: Option<EofInfo>, code: Status) -> String {
    format!(
        "],\"eof\":{},\"identical\":{}}}\n",
        serde_json::to_string(&eof).unwrap_or_else(|_| "null".into()),
        code == Status::SAME
    )
}

fn emit_json(
    out: &mut Output,
    req: &Request,
    names: &[String],
    diffs: &[Difference],
    eof: Option<EofInfo>,
    lines: &[u64],
    code: Status,
) {
    // Written a piece at a time: the whole text of K differences is not held at once.
    let mut s = json_head(req, names);
    for (i, d) in diffs.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let item = JsonDiff::from(*d, lines.get(i).copied());
        s.push_str(&serde_json::to_string(&item).unwrap_or_default());
        if s.len() >= 1 << 16 {
            out.write(s.as_bytes());
            s.clear();
        }
    }
    s.push_str(&json_tail(eof, code));
    out.write(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_matches_gnu_sprintc() {
        assert_eq!(printable(b'a'), "a");
        assert_eq!(printable(b' '), " ");
        assert_eq!(printable(b'\n'), "^J");
        assert_eq!(printable(0), "^@");
        assert_eq!(printable(127), "^?");
        assert_eq!(printable(0xe9), "M-i");
        assert_eq!(printable(0x80), "M-^@");
        assert_eq!(printable(0xff), "M-^?");
    }

    #[test]
    fn verbose_lines_use_gnu_columns() {
        let mut buf = Vec::new();
        let d = Difference {
            offset: 4,
            a: b'a',
            b: 0o377,
        };
        format_verbose(&mut buf, d, 3, false);
        format_verbose(&mut buf, d, 3, true);
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "  5 141 377\n  5 141 a    377 M-^?\n"
        );
    }

    #[test]
    fn ignore_initial_takes_the_largest_values() {
        let mut skip = [0, 0];
        parse_ignore_initial("5", &mut skip).ok().unwrap();
        assert_eq!(skip, [5, 5]);
        parse_ignore_initial("3:9", &mut skip).ok().unwrap();
        assert_eq!(skip, [5, 9]);
        parse_ignore_initial("1K:0", &mut skip).ok().unwrap();
        assert_eq!(skip, [1024, 9]);
        assert!(parse_ignore_initial("x", &mut skip).is_err());
        assert!(parse_ignore_initial("1:", &mut skip).is_err());
    }
}
