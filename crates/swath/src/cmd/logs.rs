//! `swath logs`: reports over web-server access logs. `wf2` is the Wide Finder 2 report
//! (Tim Bray's 2008 benchmark, by its reference rules); `summary` is what a GoAccess user
//! reads first (requests, clients, statuses, bytes, traffic by hour and day, top lists), as
//! text, JSON or a self-contained HTML page.
//!
//! Both run on [`swath_ops::logs`]: chunks of whole lines on all cores, per-worker tables
//! merged at the end. Several files are one log; `-` is standard input; gzip files (by their
//! magic bytes) are decompressed on one thread while the workers parse.

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use swath_engine::{EngineError, Input};
use swath_ops::logs::{
    report_input, report_reader, report_span, top, LineReport, Ranked, Summary, SummaryConfig,
    Table, Wf2, Wf2Config,
};

use crate::engine_args::{EngineArgs, Stopwatch};

/// `swath logs` subcommands.
#[derive(Subcommand, Debug)]
pub enum LogsCommand {
    /// The Wide Finder 2 report: top article URIs by hits, URIs by bytes, 404s, clients and
    /// referrers.
    ///
    /// Fields are taken by position after splitting each line at white space: client (1st),
    /// `"GET` (6th; other methods are skipped), URI (7th), status (9th), bytes (10th, `-` is
    /// 0), referrer (11th). Status 200 adds the bytes to the URI, 304 adds 0, 404 counts a
    /// 404; an article (a URI matching --article) fetched with 200 or 304 counts a hit, its
    /// client and its referrer (unless `"-"` or a self-referrer). Lines with fewer than 11
    /// fields (or more than --max-line bytes) are skipped and counted on standard error.
    Wf2(Wf2Args),
    /// A GoAccess-style summary: requests, unique clients, statuses, bytes, requests per hour
    /// and per day, top URIs, 404s, clients, referrers and user agents.
    ///
    /// Reads Apache common and combined logs and nginx's default format.
    Summary(SummaryArgs),
}

/// Options shared by the log reports.
#[derive(Args, Debug)]
pub struct CommonArgs {
    /// Log files, read as one log (`-` for standard input; gzip is detected and decoded).
    #[arg(value_name = "FILE", default_value = "-")]
    pub files: Vec<PathBuf>,
    /// Rows in each top list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Print the report as JSON (schema in docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// A line of more than SIZE bytes (64K, 1M, ...) is malformed: skipped in pieces as it
    /// is read, never held whole, and counted with the malformed lines.
    #[arg(long, value_name = "SIZE", default_value = "4M", value_parser = parse_max_line)]
    pub max_line: usize,
    /// When a log cannot be read in full (missing, truncated gzip, changed while read),
    /// still print the report of what was read, marked partial. Without it no report is
    /// printed, and the exit status is 2 either way.
    #[arg(long)]
    pub partial: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

fn parse_max_line(s: &str) -> Result<usize, String> {
    match crate::size::parse_size(s) {
        Ok(n) if (1..=1 << 40).contains(&n) => Ok(n as usize),
        Ok(_) => Err("the line bound must be from 1 byte to 1 TiB".into()),
        Err(_) => Err(format!("invalid size '{s}'")),
    }
}

/// `swath logs wf2`.
#[derive(Args, Debug)]
pub struct Wf2Args {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Regular expression (Rust regex syntax) that article URIs match.
    #[arg(
        long,
        value_name = "REGEX",
        default_value = r"^/ongoing/When/\d\d\dx/\d\d\d\d/\d\d/\d\d/[^ .]+$"
    )]
    pub article: String,
    /// Referrers starting with this prefix are the site's own and not counted.
    #[arg(
        long,
        value_name = "PREFIX",
        default_value = "http://www.tbray.org/ongoing/"
    )]
    pub self_referrer: String,
    #[command(flatten)]
    pub partial: PartialArgs,
}

/// Partial results of a log report, for `swath merge`.
#[derive(Args, Debug)]
pub struct PartialArgs {
    /// Write the tables of the one FILE as a partial result to OUT, instead of printing
    /// the report, for `swath merge` (see --range).
    #[arg(long = "emit-partial", value_name = "OUT")]
    pub emit_partial: Option<PathBuf>,
    /// With --emit-partial: read only bytes START..END of FILE, cut at line ends as Hadoop
    /// and Dask cut (not for compressed logs, which are one range each).
    #[arg(long, value_name = "START:END", requires = "emit_partial")]
    pub range: Option<String>,
    /// With --emit-partial: FILE's position among the job's files.
    #[arg(
        long = "operand-index",
        value_name = "K",
        default_value_t = 0,
        requires = "emit_partial"
    )]
    pub operand_index: u32,
}

/// `swath logs summary`.
#[derive(Args, Debug)]
pub struct SummaryArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Also write a self-contained HTML report (charts included) to OUT.
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub partial: PartialArgs,
}

/// The default article pattern, which the hand parser implements exactly.
const DEFAULT_ARTICLE: &str = r"^/ongoing/When/\d\d\dx/\d\d\d\d/\d\d/\d\d/[^ .]+$";

pub fn run(cmd: LogsCommand) -> Result<std::process::ExitCode> {
    match cmd {
        LogsCommand::Wf2(a) => wf2(a),
        LogsCommand::Summary(a) => summary(a),
    }
}

/// Reads every file into `report`; returns whether a file failed (its message printed).
/// A file that grows while read (a live log) is read up to the size it had when opened,
/// and said so on standard error.
fn gather<R: LineReport>(
    files: &[PathBuf],
    config: &R::Config,
    engine: &EngineArgs,
    report: &mut R,
) -> (bool, Option<(swath_engine::Plan, swath_engine::RunStats)>) {
    let mut failed = false;
    let mut last = None;
    let opts = engine.options();
    let workers = swath_engine::sysinfo::cores();
    for f in files {
        let name = f.to_string_lossy().into_owned();
        let result: Result<(), String> = (|| {
            if f.as_os_str() == "-" {
                let mut stdin = io::stdin();
                let mut head = [0u8; 2];
                let n = read_some(&mut stdin, &mut head).map_err(|e| os(&name, &e))?;
                let mut chained = io::Cursor::new(head[..n].to_vec()).chain(stdin);
                let r: &mut (dyn Read + Send) = &mut chained;
                let mut gz;
                let r: &mut (dyn Read + Send) = if head[..n] == [0x1f, 0x8b] {
                    gz = flate2::read::MultiGzDecoder::new(r);
                    &mut gz
                } else {
                    r
                };
                report_reader(r, config, workers, 1 << 20, report).map_err(|e| os(&name, &e))?;
                return Ok(());
            }
            let input = Input::open(Path::new(f)).map_err(|e| engine_msg(&name, &e))?;
            let mut magic = [0u8; 2];
            let is_gz = input.len().is_some_and(|l| l >= 2)
                && input.read_exact_at(&mut magic, 0).is_ok()
                && magic == [0x1f, 0x8b];
            if is_gz {
                // Read through the input already open, up to the size it had then.
                let mut file = input.file().try_clone().map_err(|e| os(&name, &e))?;
                io::Seek::seek(&mut file, io::SeekFrom::Start(input.base()))
                    .map_err(|e| os(&name, &e))?;
                let size = input.len().unwrap_or(0);
                let limited = io::BufReader::with_capacity(1 << 20, file).take(size);
                let mut gz = flate2::read::MultiGzDecoder::new(limited);
                report_reader(&mut gz, config, workers, 1 << 20, report)
                    .map_err(|e| gz_msg(&name, &e))?;
                if let Ok(now) = input.current_size() {
                    if now > size {
                        grew(&name, size, now);
                    }
                }
                return Ok(());
            }
            let read = crate::progress::with_progress(input.len(), &name, |p| {
                report_input(&input, config, &opts, Some(p), report)
            })
            .map_err(|e| engine_msg(&name, &e))?;
            if let Some(now) = read.grew_to {
                grew(&name, input.len().unwrap_or(0), now);
            }
            last = Some(read.run);
            Ok(())
        })();
        if let Err(msg) = result {
            eprintln!("swath logs: {msg}");
            failed = true;
        }
    }
    (failed, last)
}

/// Says that a live log grew while it was read.
fn grew(name: &str, size: u64, now: u64) {
    eprintln!(
        "swath logs: {name}: grew to {now} bytes while read; the report covers its first {size} bytes"
    );
}

/// A gzip stream's error: a truncated stream says so.
fn gz_msg(name: &str, e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        format!("{name}: unexpected end of gzip data (truncated file?)")
    } else {
        os(name, e)
    }
}

fn read_some(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match r.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

fn os(name: &str, e: &io::Error) -> String {
    format!("{name}: {}", swath_engine::error::os_message(e))
}

fn engine_msg(name: &str, e: &EngineError) -> String {
    match e {
        EngineError::Io { cause, .. } => os(name, cause),
        other => other.to_string(),
    }
}

fn finish(
    failed: bool,
    malformed: u64,
    time: bool,
    clock: &Stopwatch,
    engine: &EngineArgs,
    last: Option<(swath_engine::Plan, swath_engine::RunStats)>,
) -> std::process::ExitCode {
    if malformed > 0 {
        eprintln!("swath logs: {malformed} malformed lines skipped");
    }
    if time {
        match &last {
            Some((plan, stats)) => eprint!("{}", clock.report(engine.strategy, plan, Some(stats))),
            None => eprintln!("{}", clock.times()),
        }
    }
    std::process::ExitCode::from(if failed { 2 } else { 0 })
}

/// A key as a text report prints it: its first 60 bytes (not splitting a character), then
/// `...`; control characters and bytes that are not UTF-8 escaped so that a log cannot drive
/// the terminal ([`crate::stdout::visible`]: `\x1b`, a backslash as `\\`).
fn shown(key: &[u8]) -> String {
    const WIDTH: usize = 60;
    if key.len() <= WIDTH {
        return crate::stdout::visible(key);
    }
    let mut cut = WIDTH;
    // Back off to the start of a UTF-8 character (at most 3 continuation bytes).
    while cut > WIDTH - 3 && key[cut] & 0xC0 == 0x80 {
        cut -= 1;
    }
    if key[cut] & 0xC0 == 0x80 {
        cut = WIDTH;
    }
    crate::stdout::visible(&key[..cut]) + "..."
}

fn wf2(a: Wf2Args) -> Result<std::process::ExitCode> {
    let clock = Stopwatch::start();
    let article = if a.article == DEFAULT_ARTICLE {
        None
    } else {
        Some(
            regex::bytes::Regex::new(&a.article)
                .with_context(|| format!("invalid --article pattern '{}'", a.article))?,
        )
    };
    let config = Wf2Config {
        article,
        self_referrer: [&b"\""[..], a.self_referrer.as_bytes()].concat(),
        max_line: a.common.max_line,
    };
    if let Some(out) = &a.partial.emit_partial {
        return emit_partial(
            &a.common,
            &a.partial,
            &config,
            out,
            (swath_ops::partial::Kind::Wf2, wf2_partial_options(&a)),
            |r: &Wf2, bytes| r.encode_state(bytes),
        );
    }
    let mut r = Wf2::default();
    let (failed, last) = gather(&a.common.files, &config, &a.common.engine, &mut r);
    if failed && !a.common.partial {
        return Ok(std::process::ExitCode::from(2));
    }
    write_stdout(&wf2_report(&r, a.common.top, a.common.json, failed))?;
    Ok(finish(
        failed,
        r.malformed,
        a.common.engine.workers.time,
        &clock,
        &a.common.engine,
        last,
    ))
}

/// The options text of a `logs wf2` partial: what changes the tables or the report.
fn wf2_partial_options(a: &Wf2Args) -> Vec<u8> {
    format!(
        "logs wf2\ntop={}\nmax-line={}\narticle={}\nself-referrer={}",
        a.common.top, a.common.max_line, a.article, a.self_referrer
    )
    .into_bytes()
}

/// The `--top` a log report's partial options text asks for (`report`: its first line).
pub(crate) fn partial_top(options: &[u8], report: &str) -> Option<usize> {
    let text = String::from_utf8_lossy(options);
    let mut lines = text.lines();
    (lines.next() == Some(report))
        .then(|| lines.next()?.strip_prefix("top=")?.parse().ok())
        .flatten()
}

/// `logs REPORT --emit-partial OUT [--range START:END] FILE`: the report's tables over one
/// range of one log (a gzip log whole), written as a partial result.
fn emit_partial<R: LineReport>(
    common: &CommonArgs,
    a: &PartialArgs,
    config: &R::Config,
    out: &Path,
    (kind, options): (swath_ops::partial::Kind, Vec<u8>),
    encode: impl Fn(&R, &mut Vec<u8>),
) -> Result<std::process::ExitCode> {
    let files = &common.files;
    if files.len() != 1 || files[0].as_os_str() == "-" {
        anyhow::bail!("--emit-partial takes exactly one FILE (a regular file, not standard input)");
    }
    let f = &files[0];
    let name = f.to_string_lossy().into_owned();
    let range = crate::cmd::wc::parse_range(a.range.as_deref()).map_err(anyhow::Error::msg)?;
    let input = Input::open(f).map_err(|e| anyhow::anyhow!(engine_msg(&name, &e)))?;
    let len = input.len().unwrap_or(0);
    let mut magic = [0u8; 2];
    let is_gz = len >= 2 && input.read_exact_at(&mut magic, 0).is_ok() && magic == [0x1f, 0x8b];
    let mut r = R::default();
    let span = if is_gz {
        if a.range.is_some() {
            anyhow::bail!("{name}: a compressed log is one range (no --range)");
        }
        let (failed, _) = gather(files, config, &common.engine, &mut r);
        if failed {
            return Ok(std::process::ExitCode::from(2));
        }
        (0, len)
    } else {
        let span = swath_engine::range::line_span(&input, range.0, range.1, b'\n')
            .map_err(|e| anyhow::anyhow!(engine_msg(&name, &e)))?;
        report_span(
            &input,
            Some(span),
            config,
            &common.engine.options(),
            None,
            &mut r,
        )
        .map_err(|e| anyhow::anyhow!(engine_msg(&name, &e)))?;
        span
    };
    use std::os::unix::ffi::OsStrExt;
    let mut state = Vec::new();
    encode(&r, &mut state);
    drop(r);
    let bytes = swath_ops::partial::Partial::piece_bytes(
        kind,
        &options,
        a.operand_index,
        f.as_os_str().as_bytes(),
        len,
        span,
        &state,
    );
    crate::cmd::partial::write_bytes(out, &bytes).map_err(anyhow::Error::msg)?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// The Wide Finder 2 report of `r`: text, or JSON (`failed`: marked partial).
pub(crate) fn wf2_report(r: &Wf2, n: usize, json: bool, failed: bool) -> Vec<u8> {
    let (hits, bytes, not_found) = (r.hits(), r.bytes(), r.not_found());
    let mut out = Vec::new();
    if json {
        let mut v = wf2_json(r, &hits, &bytes, &not_found, n);
        if failed {
            v["partial"] = true.into();
        }
        out = format!("{v:#}\n").into_bytes();
    } else {
        if failed {
            out.extend_from_slice(PARTIAL);
        }
        out.extend_from_slice(
            format!(
                "{} resources, {} 404s, {} clients\n\n",
                hits.len(),
                not_found.len(),
                r.clients.len()
            )
            .as_bytes(),
        );
        let counts = |out: &mut Vec<u8>, title: &str, t: &dyn Ranked| {
            out.extend_from_slice(title.as_bytes());
            out.push(b'\n');
            for (k, c) in top(t, n) {
                out.extend_from_slice(format!(" {c:>10}: ").as_bytes());
                out.extend_from_slice(shown(k).as_bytes());
                out.push(b'\n');
            }
            out.push(b'\n');
        };
        counts(&mut out, "Top URIs by hit:", &hits);
        out.extend_from_slice(b"Top URIs by bytes:\n");
        for (k, c) in top(&bytes, n) {
            out.extend_from_slice(format!(" {:>9.1}M: ", c as f64 / 1048576.0).as_bytes());
            out.extend_from_slice(shown(k).as_bytes());
            out.push(b'\n');
        }
        out.push(b'\n');
        counts(&mut out, "Top 404s:", &not_found);
        counts(&mut out, "Top client addresses:", &r.clients);
        counts(&mut out, "Top referrers:", &r.referrers);
    }
    out
}

/// The report on standard output; a write error is one line and status 2.
fn write_stdout(out: &[u8]) -> Result<()> {
    crate::stdout::print_all("swath logs", out)?;
    Ok(())
}

fn json_list(t: &dyn Ranked, n: usize, value: &str) -> serde_json::Value {
    serde_json::Value::Array(
        top(t, n)
            .into_iter()
            .map(|(k, c)| serde_json::json!({"key": String::from_utf8_lossy(k), value: c}))
            .collect(),
    )
}

/// The first line of a text report when some logs could not be read in full (`--partial`).
const PARTIAL: &[u8] =
    b"PARTIAL REPORT: some logs could not be read in full (see standard error)\n\n";

fn wf2_json(
    r: &Wf2,
    hits: &Table,
    bytes: &Table,
    not_found: &Table,
    n: usize,
) -> serde_json::Value {
    let v = serde_json::json!({
        "resources": hits.len(),
        "404s": not_found.len(),
        "clients": r.clients.len(),
        "malformed": r.malformed,
        "top_uris_by_hits": json_list(hits, n, "count"),
        "top_uris_by_bytes": json_list(bytes, n, "bytes"),
        "top_404s": json_list(not_found, n, "count"),
        "top_clients": json_list(&r.clients, n, "count"),
        "top_referrers": json_list(&r.referrers, n, "count"),
    });
    v
}

/// Refuses an `--html` page that would replace one of the logs being read.
fn refuse_output_among_inputs(out: &Path, files: &[PathBuf]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(o) = std::fs::metadata(out) else {
        return Ok(());
    };
    for f in files {
        let f = if f.as_os_str() == "-" {
            Path::new("/dev/stdin")
        } else {
            f.as_path()
        };
        if let Ok(m) = std::fs::metadata(f) {
            if m.is_file() && m.dev() == o.dev() && m.ino() == o.ino() {
                anyhow::bail!(
                    "'{}' is also an input log: not writing the report over it",
                    out.display()
                );
            }
        }
    }
    Ok(())
}

fn summary(a: SummaryArgs) -> Result<std::process::ExitCode> {
    let clock = Stopwatch::start();
    if let Some(out) = &a.html {
        refuse_output_among_inputs(out, &a.common.files)?;
    }
    let config = SummaryConfig {
        max_line: a.common.max_line,
    };
    if let Some(out) = &a.partial.emit_partial {
        let options = format!(
            "logs summary\ntop={}\nmax-line={}",
            a.common.top, a.common.max_line
        );
        return emit_partial(
            &a.common,
            &a.partial,
            &config,
            out,
            (swath_ops::partial::Kind::Summary, options.into_bytes()),
            |s: &Summary, bytes| s.encode_state(bytes),
        );
    }
    let mut s = Summary::default();
    let (failed, last) = gather(&a.common.files, &config, &a.common.engine, &mut s);
    if failed && !a.common.partial {
        // The failed input's line and status 2 say it all; no report, no page.
        return Ok(std::process::ExitCode::from(2));
    }
    summary_report(&s, a.common.top, a.common.json, a.html.as_deref(), failed)?;
    Ok(finish(
        failed,
        s.malformed,
        a.common.engine.workers.time,
        &clock,
        &a.common.engine,
        last,
    ))
}

/// Prints the summary of `s` (text, or JSON), and writes its page to `html` unless
/// `failed` (some logs not read in full: then said on standard error).
pub(crate) fn summary_report(
    s: &Summary,
    n: usize,
    as_json: bool,
    html: Option<&Path>,
    failed: bool,
) -> Result<()> {
    let mut json = summary_json(s, n);
    if as_json {
        if failed {
            json["partial"] = true.into();
        }
        write_stdout(format!("{json:#}\n").as_bytes())?;
    } else {
        let text = summary_text(s, n);
        let marked = if failed { PARTIAL } else { b"" };
        write_stdout(&[marked, text.as_bytes()].concat())?;
    }
    if let (Some(out), true) = (html, failed) {
        eprintln!(
            "swath logs: '{}' not written: some logs could not be read",
            out.display()
        );
    }
    if let (Some(out), false) = (html, failed) {
        let page = summary_html(&json);
        let o = swath_engine::AtomicOutput::create(out)?;
        let mut f = o.file();
        f.write_all(page.as_bytes())
            .with_context(|| format!("cannot write '{}'", out.display()))?;
        o.commit(false)
            .with_context(|| format!("cannot write '{}'", out.display()))?;
    }
    Ok(())
}

fn status_classes(s: &Summary) -> [u64; 5] {
    let mut c = [0u64; 5];
    for (code, &n) in s.status.iter().enumerate() {
        if (100..600).contains(&code) {
            c[code / 100 - 1] += n;
        }
    }
    c
}

fn summary_json(s: &Summary, n: usize) -> serde_json::Value {
    let classes = status_classes(s);
    let codes: serde_json::Map<String, serde_json::Value> = s
        .status
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(code, &c)| (code.to_string(), c.into()))
        .collect();
    let mut days: Vec<(u32, u64)> = s.days.iter().map(|(&d, &c)| (d, c)).collect();
    days.sort_unstable();
    serde_json::json!({
        "requests": s.requests,
        "malformed": s.malformed,
        "unique_clients": s.clients.len(),
        "unique_uris": s.uris.len(),
        "bytes": s.bytes,
        "status_classes": {"1xx": classes[0], "2xx": classes[1], "3xx": classes[2], "4xx": classes[3], "5xx": classes[4]},
        "status_codes": codes,
        "requests_by_hour": s.hours.to_vec(),
        "requests_by_day": days.iter().map(|(d, c)| serde_json::json!({
            "day": format!("{:04}-{:02}-{:02}", d / 10000, d / 100 % 100, d % 100), "count": c
        })).collect::<Vec<_>>(),
        "top_uris": json_list(&s.uris, n, "count"),
        "top_uris_by_bytes": json_list(&s.uri_bytes, n, "bytes"),
        "top_404s": json_list(&s.not_found, n, "count"),
        "top_clients": json_list(&s.clients, n, "count"),
        "top_referrers": json_list(&s.referrers, n, "count"),
        "top_user_agents": json_list(&s.agents, n, "count"),
    })
}

fn summary_text(s: &Summary, n: usize) -> String {
    let mut o = String::new();
    let classes = status_classes(s);
    let _ = writeln!(o, "Requests          {}", s.requests);
    let _ = writeln!(o, "Unique clients    {}", s.clients.len());
    let _ = writeln!(o, "Unique URIs       {}", s.uris.len());
    let _ = writeln!(
        o,
        "Bytes sent        {} ({:.1} MiB)",
        s.bytes,
        s.bytes as f64 / 1048576.0
    );
    let _ = writeln!(o, "Malformed lines   {}", s.malformed);
    let _ = writeln!(o, "\nStatus classes:");
    for (i, c) in classes.iter().enumerate() {
        let _ = writeln!(o, " {:>10}  {}xx", c, i + 1);
    }
    let _ = writeln!(o, "\nStatus codes:");
    for (code, &c) in s.status.iter().enumerate().filter(|(_, &c)| c > 0) {
        let _ = writeln!(o, " {c:>10}  {code}");
    }
    let _ = writeln!(o, "\nRequests by hour:");
    let peak = s.hours.iter().copied().max().unwrap_or(0).max(1);
    for (h, &c) in s.hours.iter().enumerate() {
        let bar = "#".repeat((c * 40 / peak) as usize);
        let _ = writeln!(o, "{}", format!(" {h:02}:00 {c:>10}  {bar}").trim_end());
    }
    let _ = writeln!(o, "\nRequests by day:");
    let mut days: Vec<(u32, u64)> = s.days.iter().map(|(&d, &c)| (d, c)).collect();
    days.sort_unstable();
    for (d, c) in days {
        let _ = writeln!(
            o,
            " {:04}-{:02}-{:02} {c:>10}",
            d / 10000,
            d / 100 % 100,
            d % 100
        );
    }
    let list = |o: &mut String, title: &str, t: &dyn Ranked| {
        let _ = writeln!(o, "\n{title}:");
        for (k, c) in top(t, n) {
            let _ = writeln!(o, " {c:>10}  {}", shown(k));
        }
    };
    list(&mut o, "Top URIs", &s.uris);
    list(&mut o, "Top 404s", &s.not_found);
    list(&mut o, "Top clients", &s.clients);
    list(&mut o, "Top referrers", &s.referrers);
    list(&mut o, "Top user agents", &s.agents);
    o
}

/// JSON that is safe inside an HTML `<script>` element whatever its strings hold: `<`, `>`
/// and `&` as `\u003c`, `\u003e`, `\u0026` (so no `</script>`, `<!--` or `<script>` can end
/// or re-enter the element), and U+2028, U+2029 as `\u2028`, `\u2029` (line terminators for
/// older JavaScript parsers). These characters only occur inside JSON strings, where the
/// escapes mean the same characters.
fn json_for_script(json: &serde_json::Value) -> String {
    let text = json.to_string();
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A page with the JSON embedded and drawn by a small script: no server, no network.
fn summary_html(json: &serde_json::Value) -> String {
    let data = json_for_script(json);
    format!(
        r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>swath logs summary</title>
<style>
body{{font-family:system-ui,sans-serif;margin:2em;color:#222}} h1{{font-size:1.4em}}
.cards{{display:flex;gap:1em;flex-wrap:wrap}} .card{{background:#f3f5f8;padding:.8em 1.2em;border-radius:6px}}
.card b{{display:block;font-size:1.4em}} svg{{background:#fafafa;border:1px solid #ddd}}
table{{border-collapse:collapse;margin:.5em 0 1.5em}} td{{padding:.15em .6em;border-bottom:1px solid #eee}}
td.n{{text-align:right;font-variant-numeric:tabular-nums}} h2{{font-size:1.1em;margin-top:1.5em}}
</style></head><body>
<h1>Access log summary</h1><div class="cards" id="cards"></div>
<h2>Requests by hour of day</h2><svg id="hours" width="760" height="220"></svg>
<h2>Requests by day</h2><svg id="days" width="760" height="220"></svg>
<h2>Status classes</h2><svg id="classes" width="760" height="160"></svg>
<div id="lists"></div>
<script id="data" type="application/json">{data}</script>
<script>
const d = JSON.parse(document.getElementById('data').textContent);
const fmt = n => n.toLocaleString('en');
const card = (k, v) => `<div class="card">${{k}}<b>${{v}}</b></div>`;
document.getElementById('cards').innerHTML = card('Requests', fmt(d.requests)) +
  card('Unique clients', fmt(d.unique_clients)) + card('Unique URIs', fmt(d.unique_uris)) +
  card('Bytes sent', (d.bytes / 1048576).toFixed(1) + ' MiB') + card('Malformed lines', fmt(d.malformed));
function bars(id, labels, values) {{
  const svg = document.getElementById(id), w = +svg.getAttribute('width'), h = +svg.getAttribute('height');
  const max = Math.max(1, ...values), bw = (w - 40) / Math.max(1, values.length);
  let s = '';
  values.forEach((v, i) => {{
    const bh = (h - 40) * v / max, x = 30 + i * bw, y = h - 25 - bh;
    s += `<rect x="${{x + 1}}" y="${{y}}" width="${{Math.max(1, bw - 2)}}" height="${{bh}}" fill="#4a7bd0"><title>${{labels[i]}}: ${{fmt(v)}}</title></rect>`;
    if (values.length <= 31) s += `<text x="${{x + bw / 2}}" y="${{h - 10}}" font-size="10" text-anchor="middle">${{labels[i]}}</text>`;
  }});
  svg.innerHTML = s;
}}
bars('hours', d.requests_by_hour.map((_, i) => String(i).padStart(2, '0')), d.requests_by_hour);
bars('days', d.requests_by_day.map(x => x.day.slice(5)), d.requests_by_day.map(x => x.count));
const cl = d.status_classes; bars('classes', Object.keys(cl), Object.values(cl));
const esc = s => s.replace(/[&<>]/g, c => ({{'&':'&amp;','<':'&lt;','>':'&gt;'}}[c]));
const list = (t, rows, f) => `<h2>${{t}}</h2><table>` + rows.map(r => `<tr><td class="n">${{fmt(r[f])}}</td><td>${{esc(r.key)}}</td></tr>`).join('') + '</table>';
document.getElementById('lists').innerHTML =
  list('Top URIs', d.top_uris, 'count') + list('Top URIs by bytes', d.top_uris_by_bytes, 'bytes') +
  list('Top 404s', d.top_404s, 'count') + list('Top clients', d.top_clients, 'count') +
  list('Top referrers', d.top_referrers, 'count') + list('Top user agents', d.top_user_agents, 'count');
</script></body></html>
"##
    )
}
