//! `swath logs`: reports over web-server access logs. `wf2` is the Wide Finder 2 report
//! (Tim Bray's 2008 benchmark, by its reference rules); `summary` is what a GoAccess user
//! reads first (requests, clients, statuses, bytes, traffic by hour and day, top lists), as
//! text, JSON or a self-contained HTML page.
//!
//! Both run on [`swath_ops::logs`]: chunks of whole lines on all cores, per-worker tables
//! merged at the end. Several files are one log; `-` is standard input; gzip, zstd, xz and
//! bzip2 files (by their magic bytes) are decompressed on one thread while the workers
//! parse.

pub mod follow;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use swath_engine::source::{Source, SourceError};
use swath_engine::Input;
use swath_ops::logs::summary::{Summary, SummaryConfig};
use swath_ops::logs::{report_source, LineReport, Wf2};
use swath_ops::report::{LogPieceError, LogSummary, LogWf2, PieceOf, Report};
use swath_report::logs::{wf2 as wf2_report, PARTIAL};

use crate::engine_args::{EngineArgs, Stopwatch};
use crate::status::Status;

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
    #[command(after_help = "Example:
  swath logs wf2 --top 10 access.log")]
    Wf2(Wf2Args),
    /// A GoAccess-style report: a header (date range, requests, unique visitors, bytes,
    /// valid and failed lines) and panels: visitors per day, requested files, static files,
    /// 404s, hosts, operating systems, browsers, time of day, referring sites, status codes,
    /// virtual hosts, users, response sizes and times. As text, JSON (--json), CSV (--csv)
    /// or a self-contained HTML page (--html).
    ///
    /// Reads Apache/nginx common, combined and vhost-combined logs, W3C (IIS), CloudFront,
    /// AWS ELB and ALB logs, JSON lines (Caddy and others), or a format you describe with
    /// an Apache LogFormat or nginx log_format string; by default the format is recognised
    /// from the first lines (and named in the report).
    ///
    /// Counts as GoAccess 1.7 does (with Debian's configuration): a visitor is a client
    /// with one agent on one day, 4xx responses making none (--4xx-to-unique-count); a
    /// 404 is in the 404s panel only; a static file ends in one of GoAccess's 40
    /// extensions, query string included; browsers, systems and crawlers are GoAccess's
    /// classes (its tables: Chrome: Chrome/120.0.0.0, Windows: Windows 10, Crawlers:
    /// Googlebot/2.1; curl is Others). It differs on purpose where GoAccess 1.7 loses a
    /// row's visitor (it stores a row and a visitor as an unordered pair of numbers); the
    /// GUIDE says more.
    #[command(after_help = "Examples:
  swath logs summary access.log                     the report as text
  swath logs summary --html report.html access.log.* every rotated log (.gz, .zst, .xz, .bz2 too)
  swath logs summary --format '%h %l %u %t \"%r\" %>s %b %D' app.log
  swath logs summary --html r.html --follow 10 /var/log/nginx/access.log")]
    Summary(SummaryArgs),
}

/// Options shared by the log reports.
#[derive(Args, Debug)]
pub struct CommonArgs {
    /// Log files, read as one log (`-` for standard input; gzip, zstd, xz and bzip2 are detected by their first bytes and decoded).
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
    /// When a log cannot be read in full (missing, truncated or damaged compressed file, changed while read),
    /// still print the report of what was read, marked partial. Without it no report is
    /// printed, and the exit status is 2 either way.
    #[arg(long)]
    pub partial: bool,
}

/// `--format`'s help: `auto`, the table's formats, or a format string.
fn format_help() -> String {
    format!(
        "The log format: auto (recognised from the first lines), {}, or an Apache LogFormat \
         string ('%h %l %u %t \"%r\" %>s %b') or nginx log_format string ('$remote_addr - \
         $remote_user [$time_local] \"$request\" $status ...')",
        swath_ops::logs::format::help_list()
    )
}

fn parse_net(s: &str) -> Result<swath_ops::logs::summary::Net, swath_ops::logs::summary::NetError> {
    swath_ops::logs::summary::Net::parse(s)
}

fn parse_since(s: &str) -> Result<u64, swath_ops::logs::summary::TimeError> {
    swath_ops::logs::summary::parse_time(s, false)
}

fn parse_until(s: &str) -> Result<u64, swath_ops::logs::summary::TimeError> {
    swath_ops::logs::summary::parse_time(s, true)
}

fn parse_max_line(s: &str) -> Result<usize, String> {
    match crate::size::parse_size(s) {
        Ok(n) if (1..=1 << 40).contains(&n) => Ok(n as usize),
        Ok(_) => Err("the line bound must be from 1 byte to 1 TiB".into()),
        Err(_) => Err(crate::size::invalid_size(s)),
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
    #[command(flatten)]
    pub engine: EngineArgs,
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
    /// Write a self-contained HTML report (charts included) to OUT instead of printing the
    /// text report, as GoAccess's -o does (--json and --csv still print).
    #[arg(long, help_heading = "Report options", value_name = "OUT")]
    pub html: Option<PathBuf>,
    /// Keep reading the logs as they grow (as `tail -F`, through rotation and truncation)
    /// and rewrite the --html page every SECONDS; the page reloads itself. Runs until
    /// interrupted.
    #[arg(long, help_heading = "Report options", value_name = "SECONDS", requires = "html", value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub follow: Option<u64>,
    /// Print the report as CSV (one row per panel row) instead of text.
    #[arg(long, help_heading = "Report options", conflicts_with = "json")]
    pub csv: bool,
    /// The log format (its help lists the names of `swath_ops::logs::format::FORMATS`).
    #[arg(
        long,
        help = format_help(),
        help_heading = "Report options",
        value_name = "FORMAT",
        default_value = "auto"
    )]
    pub format: String,
    /// Leave out requests from this address or CIDR range (repeatable: 10.0.0.0/8, ::1).
    #[arg(help_heading = "Report options", long = "exclude-ip", value_name = "IP[/BITS]", value_parser = parse_net)]
    pub exclude_ip: Vec<swath_ops::logs::summary::Net>,
    /// Leave out requests from crawlers (by their user agent: GoAccess's class Crawlers).
    #[arg(long, help_heading = "Report options")]
    pub ignore_crawlers: bool,
    /// Count only requests from crawlers (GoAccess's --crawlers-only).
    #[arg(
        long,
        help_heading = "Report options",
        conflicts_with = "ignore_crawlers"
    )]
    pub crawlers_only: bool,
    /// With --ignore-crawlers or --crawlers-only, an agent whose browser or system is
    /// Unknown (or no agent) is a crawler too, as GoAccess's --unknowns-as-crawlers.
    #[arg(long, help_heading = "Report options")]
    pub unknowns_as_crawlers: bool,
    /// Leave out requests before this time (YYYY-MM-DD[THH:MM:SS], in the log's time).
    #[arg(long, help_heading = "Report options", value_name = "TIME", value_parser = parse_since)]
    pub since: Option<u64>,
    /// Leave out requests after this time (a day or hour alone includes all of it).
    #[arg(long, help_heading = "Report options", value_name = "TIME", value_parser = parse_until)]
    pub until: Option<u64>,
    /// Leave out requests with this status code (repeatable, or comma-separated).
    #[arg(help_heading = "Report options", long = "ignore-status", value_name = "CODE", value_delimiter = ',', value_parser = clap::value_parser!(u16).range(100..1000))]
    pub ignore_status: Vec<u16>,
    /// Count the clients of 4xx responses as visitors too. By default, as in GoAccess, a
    /// request answered 400-499 adds hits and bytes but no visitor, in every panel.
    #[arg(long = "4xx-to-unique-count", help_heading = "Report options")]
    pub visitors_4xx: bool,
    /// Also count requests ending in .EXT as static files (repeatable; GoAccess's 40,
    /// css, js, png, jpg and others, already are; a query string counts as the end, as in
    /// GoAccess).
    #[arg(
        help_heading = "Report options",
        long = "static-file",
        value_name = "EXT"
    )]
    pub static_file: Vec<String>,
    #[command(flatten)]
    pub partial: PartialArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub fn run(cmd: LogsCommand) -> Result<std::process::ExitCode> {
    match cmd {
        LogsCommand::Wf2(a) => wf2(a),
        LogsCommand::Summary(a) => summary(a),
    }
}

/// Reads every file into `report`; returns whether a file failed (its message printed).
/// A file that grows while read (a live log) is read up to the size it had when opened,
/// and said so on standard error. Standard input is `stdin` when it was looked at already
/// (its first bytes, to recognise the format by).
fn gather<R: LineReport>(
    files: &[PathBuf],
    config: &R::Config,
    engine: &EngineArgs,
    report: &mut R,
    stdin: &mut Option<Source<'static>>,
) -> (bool, Option<(swath_engine::Plan, swath_engine::RunStats)>) {
    let mut failed = false;
    let mut last = None;
    let opts = engine.options();
    for f in files {
        let name = f.to_string_lossy().into_owned();
        let opened;
        let source = if f.as_os_str() == "-" {
            Ok(stdin
                .take()
                .unwrap_or_else(|| Source::stream(f, io::stdin())))
        } else {
            match Input::open(Path::new(f)) {
                Ok(input) => {
                    opened = input;
                    Ok(Source::file(&opened))
                }
                Err(e) => Err(SourceError::from(e)),
            }
        };
        let result = source.and_then(|s| read_source(s, &name, config, &opts, report, &mut last));
        if let Err(e) = result {
            eprintln!("swath logs: {e}");
            failed = true;
        }
    }
    (failed, last)
}

/// Reads `source` (decompressed when its first bytes say so) into `report`, with a
/// progress bar for a file read in blocks, whose run is kept in `last`; a file that grew
/// while read is said so.
fn read_source<R: LineReport>(
    source: Source<'_>,
    name: &str,
    config: &R::Config,
    opts: &swath_engine::EngineOptions,
    report: &mut R,
    last: &mut Option<(swath_engine::Plan, swath_engine::RunStats)>,
) -> Result<(), SourceError> {
    let mut source = source.decoded()?;
    let read = crate::progress::with_progress(source.len(), name, |p| {
        report_source(&mut source, config, opts, Some(p), report)
    })?;
    if let Some((size, now)) = read.grew {
        grew(name, size, now);
    }
    if let Some(run) = read.run {
        *last = Some(run);
    }
    Ok(())
}

/// Says that a live log grew while it was read.
fn grew(name: &str, size: u64, now: u64) {
    eprintln!(
        "swath logs: {name}: grew to {now} bytes while read; the report covers its first {size} bytes"
    );
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
    std::process::ExitCode::from(if failed {
        Status::Trouble
    } else {
        Status::Success
    })
}

fn wf2(a: Wf2Args) -> Result<std::process::ExitCode> {
    let clock = Stopwatch::start();
    let config = swath_report::logs::wf2_config(&a.article, &a.self_referrer, a.common.max_line)
        .with_context(|| format!("invalid --article pattern '{}'", a.article))?;
    if let Some(out) = &a.partial.emit_partial {
        return emit_partial::<LogWf2, _>(
            (&a.common, &a.engine),
            &a.partial,
            &config,
            out,
            swath_report::logs::wf2_options(
                a.common.top,
                a.common.max_line,
                &a.article,
                &a.self_referrer,
            ),
        );
    }
    let mut stdin = None;
    let (head, name) = first_head(&a.common.files, &mut stdin);
    if !head.is_empty() && !swath_ops::logs::wf2::recognises(&head) {
        eprintln!(
            "swath logs: {name}: no access log line among its first lines (wf2 reads the \
             Common and Combined Log Formats; 'swath logs summary' recognises others)"
        );
        return Ok(std::process::ExitCode::from(Status::Trouble));
    }
    let mut r = Wf2::default();
    let (failed, last) = gather(&a.common.files, &config, &a.engine, &mut r, &mut stdin);
    if failed && !a.common.partial {
        return Ok(std::process::ExitCode::from(Status::Trouble));
    }
    write_stdout(&wf2_report(&r.ranked(a.common.top), a.common.json, failed))?;
    Ok(finish(
        failed,
        r.malformed,
        a.engine.workers.time,
        &clock,
        &a.engine,
        last,
    ))
}

/// `logs REPORT --emit-partial OUT [--range START:END] FILE`: the report's tables over one
/// range of one log (a compressed log whole), written as a partial result.
fn emit_partial<R, F>(
    (common, engine): (&CommonArgs, &EngineArgs),
    a: &PartialArgs,
    config: &F::Config,
    out: &Path,
    options: Vec<u8>,
) -> Result<std::process::ExitCode>
where
    R: for<'c> Report<Fold = F, Config<'c> = F::Config>,
    F: LineReport,
{
    let files = &common.files;
    if files.len() != 1 || files[0].as_os_str() == "-" {
        anyhow::bail!("--emit-partial takes exactly one FILE (a regular file, not standard input)");
    }
    let f = &files[0];
    let name = f.to_string_lossy().into_owned();
    let range = crate::cmd::wc::parse_range(a.range.as_deref()).map_err(anyhow::Error::msg)?;
    let input = Input::open_ranged(f)?;
    use std::os::unix::ffi::OsStrExt;
    let of = PieceOf {
        options: &options,
        index: a.operand_index,
        name: f.as_os_str().as_bytes(),
        len: input.len().unwrap_or(0),
        offset: 0,
    };
    let opts = engine.options();
    let read =
        |source: Source<'_>, r: &mut F| read_source(source, &name, config, &opts, r, &mut None);
    let whole = a.range.is_none();
    let bytes = match swath_ops::report::log_piece::<R, F, _>(
        &of,
        &input,
        (range, whole),
        config,
        &opts,
        read,
    ) {
        Ok(bytes) => bytes,
        Err(LogPieceError::CompressedRange) => {
            anyhow::bail!("{name}: a compressed log is one range (no --range)")
        }
        Err(LogPieceError::Read(e)) => {
            eprintln!("swath logs: {e}");
            return Ok(std::process::ExitCode::from(Status::Trouble));
        }
        Err(LogPieceError::Source(e)) => return Err(e.into()),
        Err(LogPieceError::Engine(e)) => return Err(e.into()),
    };
    crate::cmd::partial::write_bytes(out, &bytes).map_err(anyhow::Error::msg)?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// The report on standard output; a write error is one line and status 2.
fn write_stdout(out: &[u8]) -> Result<()> {
    crate::stdout::print_all("swath logs", out)?;
    Ok(())
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

/// The first bytes of the first log that has any (standard input kept in `stdin`, its
/// bytes looked at, for the report to read after them), to recognise the format by, and
/// that log's name (the first file's when none has any).
fn first_head(files: &[PathBuf], stdin: &mut Option<Source<'static>>) -> (Vec<u8>, String) {
    for f in files {
        let raw = if f.as_os_str() == "-" {
            stdin
                .get_or_insert_with(|| Source::stream(f, io::stdin()))
                .head()
        } else {
            // Only a regular file is looked into here (a FIFO would be opened, and its
            // writer's bytes lost, or wait for a writer): a log read as a stream is read
            // once, by the report.
            if !std::fs::metadata(f).is_ok_and(|m| m.is_file()) {
                continue;
            }
            match Input::open(f) {
                Ok(i) => Source::file(&i).head(),
                Err(_) => continue,
            }
        };
        if !raw.iter().all(u8::is_ascii_whitespace) {
            return (raw, f.to_string_lossy().into_owned());
        }
    }
    let first = files.first().map(|f| f.to_string_lossy().into_owned());
    (Vec::new(), first.unwrap_or_default())
}

/// The summary's configuration from its options; the format recognised (said on
/// standard error) unless given.
fn summary_config(
    a: &SummaryArgs,
    stdin: &mut Option<Source<'static>>,
    head: Option<Vec<u8>>,
) -> Result<(SummaryConfig, Vec<String>)> {
    let (head, name) = match head {
        Some(h) => {
            let first = a.common.files.first().map(|f| f.to_string_lossy());
            (h, first.unwrap_or_default().into_owned())
        }
        None => first_head(&a.common.files, stdin),
    };
    let (format, detected) = swath_report::logs::log_format(&a.format, &head).map_err(|e| {
        if a.format == "auto" {
            anyhow::anyhow!("{name}: {e}")
        } else {
            anyhow::anyhow!("--format: {e}")
        }
    })?;
    // Said when a person watches (the report names its format too): on a terminal only,
    // so that a script's standard error keeps to one line per problem.
    if let (Some(d), true) = (detected, io::IsTerminal::is_terminal(&io::stderr())) {
        let what = swath_ops::logs::format::NAMED
            .iter()
            .find(|(n, _)| *n == d.format.name())
            .map_or("", |(_, w)| *w);
        eprintln!(
            "swath logs: format {} ({what}): {} of the first {} lines fit",
            d.format.name(),
            d.fit,
            d.tried
        );
    }
    let mut statics = swath_ops::logs::summary::default_static();
    for e in &a.static_file {
        let e = e.trim_start_matches('.').to_ascii_lowercase();
        if e.is_empty() || e.contains(['/', ',']) {
            anyhow::bail!("--static-file: '{e}' is not a file extension");
        }
        if !statics.contains(&e) {
            statics.push(e);
        }
    }
    let config = SummaryConfig {
        max_line: a.common.max_line,
        format,
        filter: swath_ops::logs::summary::Filter {
            exclude: a.exclude_ip.clone(),
            ignore_crawlers: a.ignore_crawlers,
            crawlers_only: a.crawlers_only,
            unknowns_as_crawlers: a.unknowns_as_crawlers,
            since: a.since,
            until: a.until,
            ignore_status: a.ignore_status.clone(),
        },
        visitors_4xx: a.visitors_4xx,
    };
    Ok((config, statics))
}

fn summary(a: SummaryArgs) -> Result<std::process::ExitCode> {
    let clock = Stopwatch::start();
    if let Some(out) = &a.html {
        refuse_output_among_inputs(out, &a.common.files)?;
    }
    // Followed logs are opened once, by their directories ([`follow`]), and
    // their format is recognised from the files opened so.
    let mut tails = match a.follow.map(|_| follow::open_logs(&a.common.files)) {
        Some(Err(e)) => {
            eprintln!("swath logs: {e:#}");
            return Ok(std::process::ExitCode::from(Status::Trouble));
        }
        Some(Ok(t)) => Some(t),
        None => None,
    };
    let head = tails.as_deref_mut().map(follow::first_head);
    let mut stdin = None;
    let (config, statics) = match summary_config(&a, &mut stdin, head.clone()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("swath logs: {e:#}");
            return Ok(std::process::ExitCode::from(Status::Trouble));
        }
    };
    if let Some(out) = &a.partial.emit_partial {
        let options = swath_report::logs::summary_options(a.common.top, &config, &statics);
        return emit_partial::<LogSummary, _>(
            (&a.common, &a.engine),
            &a.partial,
            &config,
            out,
            options,
        );
    }
    if let (Some(secs), Some(out), Some(tails)) = (a.follow, a.html.as_deref(), tails) {
        let how = Output {
            top: a.common.top,
            json: false,
            csv: false,
            html: Some(out),
            statics: &statics,
            format: config.format.name(),
        };
        // No log has a line yet: the format is recognised when one has.
        let pending = a.format == "auto" && head.is_some_and(|h| h.is_empty());
        let followed = follow::follow(
            tails,
            &config,
            pending,
            std::time::Duration::from_secs(secs),
            out,
            &how,
        );
        // It returns only on an error: one line, status 2.
        return followed.or_else(|e| {
            eprintln!("swath logs: {e:#}");
            Ok(std::process::ExitCode::from(Status::Trouble))
        });
    }
    let started = std::time::Instant::now();
    let mut s = Summary::default();
    let (failed, last) = gather(&a.common.files, &config, &a.engine, &mut s, &mut stdin);
    let parse_seconds = started.elapsed().as_secs_f64();
    if failed && !a.common.partial {
        // The failed input's line and status 2 say it all; no report, no page.
        return Ok(std::process::ExitCode::from(Status::Trouble));
    }
    let n = &s.numbers;
    if n[swath_ops::partial::N_REQUESTS] + n[swath_ops::partial::N_FILTERED] == 0
        && n[swath_ops::partial::N_MALFORMED] > 0
    {
        eprintln!(
            "swath logs: no line is in the {} format ({} lines read): give the log's format with --format",
            config.format.name(),
            n[swath_ops::partial::N_MALFORMED]
        );
        return Ok(std::process::ExitCode::from(Status::Trouble));
    }
    let info = swath_report::summary::PageInfo {
        inputs: a
            .common
            .files
            .iter()
            .map(|f| {
                let size = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
                (f.to_string_lossy().into_owned(), size)
            })
            .collect(),
        generated: utc_now(),
        parse_seconds,
        refresh: None,
    };
    let how = Output {
        top: a.common.top,
        json: a.common.json,
        csv: a.csv,
        html: a.html.as_deref(),
        statics: &statics,
        format: config.format.name(),
    };
    summary_report(&s, &how, Some(&info), failed)?;
    // The tables are not freed one by one (a tenth of a second on a big log): the
    // process ends here and gives all its memory back at once.
    let malformed = s.malformed();
    std::mem::forget(s);
    Ok(finish(
        failed,
        malformed,
        a.engine.workers.time,
        &clock,
        &a.engine,
        last,
    ))
}

/// The time now, UTC, as ISO 8601 (`2026-11-27T09:30:00Z`).
pub(crate) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let s = swath_ops::logs::format::unix_stamp(secs.to_string().as_bytes()).unwrap_or(0);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        s / 10_000_000_000,
        s / 100_000_000 % 100,
        s / 1_000_000 % 100,
        s / 10_000 % 100,
        s / 100 % 100,
        s % 100
    )
}

/// How a summary is printed.
pub(crate) struct Output<'a> {
    pub top: usize,
    pub json: bool,
    pub csv: bool,
    pub html: Option<&'a Path>,
    pub statics: &'a [String],
    pub format: &'a str,
}

/// Writes the page of `s` to `html` unless `failed` (some logs not read in full: then said
/// on standard error), then prints the summary as JSON or CSV when asked, or as text when
/// no page was asked for (as GoAccess's `-o report.html` writes the page alone) or none
/// was written. A page that cannot be written is one line and status 2, with nothing
/// printed before it.
pub(crate) fn summary_report(
    s: &Summary,
    how: &Output<'_>,
    info: Option<&swath_report::summary::PageInfo>,
    failed: bool,
) -> Result<()> {
    let statics = swath_ops::logs::summary::Statics::new(how.statics, how.format);
    let ranked = s.ranked(how.top, statics);
    let mut model = swath_report::summary::model(&ranked, how.format);
    let mut page_written = false;
    if let (Some(out), true) = (how.html, failed) {
        eprintln!(
            "swath logs: '{}' not written: some logs could not be read",
            out.display()
        );
    }
    if let (Some(out), false) = (how.html, failed) {
        let page = swath_report::summary::html(&model, info);
        let written = (|| {
            let o = swath_engine::AtomicOutput::create(out)?;
            let mut f = o.file();
            f.write_all(page.as_bytes())
                .with_context(|| format!("cannot write '{}'", out.display()))?;
            o.commit(false)
                .with_context(|| format!("cannot write '{}'", out.display()))
        })();
        if let Err(e) = written {
            eprintln!("swath logs: {e:#}");
            return Err(crate::stdout::Reported(Status::Trouble).into());
        }
        page_written = true;
    }
    if how.json {
        if failed {
            model["partial"] = true.into();
        }
        write_stdout(format!("{model:#}\n").as_bytes())?;
    } else if how.csv {
        write_stdout(swath_report::summary::csv(&model).as_bytes())?;
    } else if !page_written {
        let text = swath_report::summary::text(&model);
        let marked = if failed { PARTIAL } else { b"" };
        write_stdout(&[marked, text.as_bytes()].concat())?;
    }
    Ok(())
}
