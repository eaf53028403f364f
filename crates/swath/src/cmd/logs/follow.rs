//! `swath logs summary --follow SECONDS --html OUT`: keeps reading growing logs, as
//! `tail -F` does, and rewrites the page (atomically, so a browser never reads half of
//! it) every SECONDS; the page reloads itself as often.
//!
//! Each log is followed by its name in its directory: only whole lines are read (a line
//! still being written waits for its newline); when the name comes to mean another file (a
//! rotation: `mv a.log a.log.1` and a new `a.log`), the old file is read to its end (its
//! last line too) and the new one from its start; a file that shrinks (`copytruncate`) is
//! read again from its start; a name that is missing for a while is waited for.
//!
//! The log's writer may be another user, who owns the directory and can put anything at
//! the name. So the directory is opened once, at the start (by the path given), and the
//! name is looked at and opened relative to that descriptor only, never through a
//! symbolic link (`O_NOFOLLOW`) and without waiting on a FIFO (`O_NONBLOCK`); a file is
//! followed only if it is a regular file owned by the owner of the file followed before
//! (or by root). Anything else at the name ends the follow with one line that names the
//! log and the cause (status 2), after a last page of what was read.
//!
//! The following itself (the name, rotation, truncation, what is refused) is
//! [`swath_engine::source::Followed`]; its new lines are read into the summary by
//! [`swath_ops::logs::report_source`], as every other log source is.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use swath_engine::source::{Followed, Refused, Source, SourceError};
use swath_ops::logs::report_source;
use swath_ops::logs::summary::{Summary, SummaryConfig};

/// Opens a log to be followed ([`Followed::open`]): refuses standard input and a
/// compressed log too. An error names the log and the cause.
fn open_log(path: &Path) -> Result<Followed> {
    if path.as_os_str() == "-" {
        anyhow::bail!("--follow reads log files by name, not standard input");
    }
    let log = Followed::open(path)?;
    if log.codec().is_some() {
        anyhow::bail!("{}: a compressed log cannot be followed", path.display());
    }
    Ok(log)
}

/// Opens every log to be followed ([`open_log`]).
pub(crate) fn open_logs(files: &[PathBuf]) -> Result<Vec<Followed>> {
    files.iter().map(|f| open_log(f)).collect()
}

/// The first bytes of the first log that has a line, or empty.
pub(crate) fn first_head(tails: &mut [Followed]) -> Vec<u8> {
    tails
        .iter_mut()
        .map(|t| Source::Followed(t).head())
        .find(|h| !h.iter().all(u8::is_ascii_whitespace))
        .unwrap_or_default()
}

/// Follows the logs `tails` ([`open_logs`]) forever, writing the page of their summary to
/// `out` every `every`. Returns only on an error (a log that cannot be read, a page that
/// cannot be written) or when a log's name comes to hold what may not be followed (then
/// after a last page). With `pending` (the format to be recognised, and no log had a line
/// yet), nothing is read until a log has lines to recognise it by.
pub(crate) fn follow(
    mut tails: Vec<Followed>,
    config: &SummaryConfig,
    pending: bool,
    every: Duration,
    out: &Path,
    how: &super::Output<'_>,
) -> Result<std::process::ExitCode> {
    eprintln!(
        "swath logs: following {}; '{}' rewritten every {} s (interrupt to stop)",
        tails
            .iter()
            .map(|t| t.path().display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        out.display(),
        every.as_secs()
    );
    let mut s = Summary::default();
    let started = Instant::now();
    let mut config = config.clone();
    let mut pending = pending;
    loop {
        let round = Instant::now();
        // A log that may not be followed (named, and why), after the page of what was read.
        let mut stop = None;
        if pending {
            // The first log with a line gives the format.
            for t in tails.iter_mut().filter(|t| !t.is_open()) {
                match t.reopen() {
                    Ok(()) => {}
                    Err(Refused::Io(e)) => {
                        return Err(e).with_context(|| t.path().display().to_string())
                    }
                    Err(r) => {
                        stop = Some(format!("{}: {r}", t.path().display()));
                        break;
                    }
                }
            }
            let head = first_head(&mut tails);
            if !head.is_empty() {
                let (format, _) = swath_report::logs::log_format("auto", &head)
                    .map_err(anyhow::Error::msg)
                    .with_context(|| tails[0].path().display().to_string())?;
                config.format = format;
                pending = false;
            }
        }
        if !pending && stop.is_none() {
            let engine = swath_engine::EngineOptions::default();
            for t in &mut tails {
                let path = t.path().display().to_string();
                match report_source(&mut Source::Followed(t), &config, &engine, None, &mut s) {
                    Ok(_) => {}
                    // The name now holds what may not be followed.
                    Err(SourceError::Refused { why, .. }) => {
                        stop = Some(format!("{path}: {why}"));
                        break;
                    }
                    Err(SourceError::Read { cause, .. }) => {
                        return Err(cause).with_context(|| path)
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        let info = swath_report::summary::PageInfo {
            inputs: tails
                .iter()
                .map(|t| (t.path().display().to_string(), t.offset()))
                .collect(),
            generated: super::utc_now(),
            parse_seconds: started.elapsed().as_secs_f64(),
            refresh: Some(every.as_secs().max(1)),
        };
        let statics = swath_ops::logs::summary::Statics::new(how.statics, how.format);
        let ranked = s.ranked(how.top, statics);
        let model = swath_report::summary::model(&ranked, config.format.name());
        let page = swath_report::summary::html(&model, Some(&info));
        let o = swath_engine::AtomicOutput::create(out)?;
        o.file()
            .write_all(page.as_bytes())
            .with_context(|| format!("cannot write '{}'", out.display()))?;
        o.commit(false)
            .with_context(|| format!("cannot write '{}'", out.display()))?;
        if let Some(why) = stop {
            anyhow::bail!("{why}; following stopped");
        }
        std::thread::sleep(every.saturating_sub(round.elapsed()));
    }
}
