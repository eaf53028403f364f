//! `swath merge` and `swath split`: partial results computed anywhere (other processes,
//! Slurm arrays, `xargs -P`, other machines), merged into what the one-machine command
//! prints; and the byte ranges to compute them over.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use swath_ops::logs::LineReport;
use swath_ops::partial::{Kind, Partial, State};

/// Merge partial results into the report the one-machine command prints.
#[derive(Args, Debug)]
#[command(
    after_help = "Example:\n  swath split --pieces 4 big.txt | while read f a b; do\n    swath wc --range $a:$b --emit-partial part.$a \"$f\"; done\n  swath merge part.*     # prints what 'swath wc big.txt' prints"
)]
pub struct MergeArgs {
    /// Partial results, from `--emit-partial` or from an earlier `swath merge --emit-partial`.
    #[arg(required = true, value_name = "PARTIAL")]
    partials: Vec<PathBuf>,
    /// Write the merged partial result to OUT instead of printing the report (one step of a
    /// tree of merges).
    #[arg(long = "emit-partial", value_name = "OUT")]
    emit_partial: Option<PathBuf>,
    /// Print a log report as JSON (as `swath logs ... --json`).
    #[arg(long)]
    json: bool,
    /// With `logs summary` partials: also write the self-contained HTML report to OUT (as
    /// `swath logs summary --html OUT`).
    #[arg(long, value_name = "OUT")]
    html: Option<PathBuf>,
}

/// Print byte ranges that cut files into pieces, one `path start end` line each.
#[derive(Args, Debug)]
#[command(
    after_help = "Each line is a FILE and a range START END of it (byte offsets), for `--range START:END`.\nRanges are cut evenly by bytes; the commands that take them move each cut to a line end\n(as Hadoop and Dask do), so every line is counted once."
)]
pub struct SplitArgs {
    /// Pieces per file.
    #[arg(long, value_name = "N")]
    pieces: u64,
    /// The files.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// Writes the partial of one piece (see `Partial::piece`) to `path` atomically.
pub(crate) fn write_piece(
    path: &Path,
    options: Vec<u8>,
    index: u32,
    name: &std::ffi::OsStr,
    len: u64,
    span: (u64, u64),
    state: State,
) -> Result<(), String> {
    let name = name.as_bytes().to_vec();
    write_partial(
        path,
        &Partial::piece(options, index, name, len, span, state),
    )
}

/// Writes `p` to `path` atomically (a temporary file renamed into place).
pub(crate) fn write_partial(path: &Path, p: &Partial) -> Result<(), String> {
    write_bytes(path, &p.to_bytes())
}

/// Writes a partial's bytes to `path` atomically (a temporary file renamed into place).
pub(crate) fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let what = |e: &dyn std::fmt::Display| format!("cannot write '{}': {e}", path.display());
    let out = swath_engine::AtomicOutput::create(path).map_err(|e| what(&e))?;
    let mut f = out.file();
    f.write_all(bytes).map_err(|e| what(&e))?;
    out.commit(false).map_err(|e| what(&e))
}

/// A partial read from a file, or a message naming the file and the cause.
fn read_partial(path: &Path) -> Result<Partial, String> {
    let bytes = std::fs::read(path).map_err(|e| {
        format!(
            "{}: {}",
            path.display(),
            swath_engine::error::os_message(&e)
        )
    })?;
    Partial::from_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// `swath merge`.
pub fn merge(a: MergeArgs) -> ExitCode {
    let fail = |m: String| {
        eprintln!("swath merge: {m}");
        ExitCode::from(1)
    };
    // A log report printed from its pieces: the pieces' places are checked by merging their
    // shapes, and their tables go straight into the report's hash tables (merging sorted
    // lists piece by piece costs more than the report itself). The partials are read and
    // turned into tables on every core, a share of them each; the shapes are then merged
    // in argument order, so an error names the same partial whatever the timing.
    type Logs = (swath_ops::logs::Wf2, swath_ops::logs::Summary);
    let render_logs = a.emit_partial.is_none();
    let read = |path: &PathBuf, logs: &mut Logs| -> Result<Partial, String> {
        if !render_logs {
            return read_partial(path);
        }
        let named = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let bytes = std::fs::read(path).map_err(|e| named(&swath_engine::error::os_message(&e)))?;
        let (shape, states) = Partial::from_bytes_lazy(&bytes).map_err(|e| named(&e))?;
        for state in states {
            match shape.kind {
                Kind::Wf2 => logs.0.add_state(state),
                Kind::Summary => logs.1.add_state(state),
                _ => Ok(()),
            }
            .map_err(|e| named(&e))?;
        }
        Ok(shape)
    };
    let workers = swath_engine::sysinfo::cores().clamp(1, a.partials.len().max(1));
    let share = a.partials.len().div_ceil(workers).max(1);
    let done: Vec<(Vec<Result<Partial, String>>, Logs)> = std::thread::scope(|scope| {
        let handles: Vec<_> = a
            .partials
            .chunks(share)
            .map(|paths| {
                let read = &read;
                scope.spawn(move || {
                    let mut logs = Logs::default();
                    let parts = paths.iter().map(|p| read(p, &mut logs)).collect();
                    (parts, logs)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut logs: Option<Logs> = None;
    let mut merged: Option<Partial> = None;
    let mut results = Vec::new();
    for (parts, l) in done {
        results.extend(parts);
        match &mut logs {
            None => logs = Some(l),
            Some((w, s)) => {
                w.merge(l.0);
                s.merge(l.1);
            }
        }
    }
    for (path, p) in a.partials.iter().zip(results) {
        let p = match p {
            Ok(p) => p,
            Err(m) => return fail(m),
        };
        merged = Some(match merged {
            None => p,
            Some(m) => match m.merge(p) {
                Ok(m) => m,
                Err(e) => return fail(format!("{}: {e}", path.display())),
            },
        });
    }
    let Some(merged) = merged else {
        return fail("no partial result given".into());
    };
    if let Some(out) = &a.emit_partial {
        return match write_partial(out, &merged) {
            Ok(()) => ExitCode::SUCCESS,
            Err(m) => fail(m),
        };
    }
    if a.json && !matches!(merged.kind, Kind::Wf2 | Kind::Summary) {
        return fail(format!(
            "--json is for log reports, not {}",
            merged.kind.name()
        ));
    }
    if a.html.is_some() && merged.kind != Kind::Summary {
        return fail(format!(
            "--html is for logs summary, not {}",
            merged.kind.name()
        ));
    }
    let (mut tallies, mut counts) = (Vec::new(), Vec::new());
    let (tables, summary) = logs.unwrap_or_default();
    for part in merged.inputs.values() {
        match part.whole() {
            Ok(State::Wc(t)) => tallies.push((&part.name[..], part.len, t)),
            Ok(State::GrepCount(n)) => counts.push((&part.name[..], n)),
            // A log report reads its files as one log.
            // The tables went into the report as the partials were read.
            Ok(State::Wf2(_) | State::Summary(_)) => {}
            Err(e) => return fail(e.to_string()),
        }
    }
    let mut note = None;
    let text = match merged.kind {
        Kind::Wc => crate::cmd::wc::render_partial(&merged.options, &tallies),
        Kind::GrepCount => crate::cmd::grep::render_partial(&merged.options, &counts),
        Kind::Summary => match crate::cmd::logs::partial_top(&merged.options, "logs summary") {
            Some(n) => {
                let s = summary;
                // The report goes out as `swath logs summary` writes it (page included).
                if let Err(e) =
                    crate::cmd::logs::summary_report(&s, n, a.json, a.html.as_deref(), false)
                {
                    return fail(format!("{e:#}"));
                }
                if s.malformed > 0 {
                    eprintln!("swath logs: {} malformed lines skipped", s.malformed);
                }
                return ExitCode::SUCCESS;
            }
            None => Err("a logs summary partial without its --top".to_string()),
        },
        Kind::Wf2 => match crate::cmd::logs::partial_top(&merged.options, "logs wf2") {
            Some(n) => {
                let r = tables;
                if r.malformed > 0 {
                    // Said after the report, as `swath logs` says it.
                    note = Some(format!(
                        "swath logs: {} malformed lines skipped",
                        r.malformed
                    ));
                }
                Ok(crate::cmd::logs::wf2_report(&r, n, a.json, false))
            }
            None => Err("a logs wf2 partial without its --top".to_string()),
        },
    };
    match text {
        Ok(t) => {
            let mut out = crate::stdout::Stdout::new("swath merge", crate::stdout::Voice::Swath);
            out.write(&t);
            let status = match out.finish() {
                Ok(()) => ExitCode::SUCCESS,
                Err(status) => ExitCode::from(status),
            };
            if let Some(n) = note {
                eprintln!("{n}");
            }
            status
        }
        Err(m) => fail(m),
    }
}

/// `swath split`.
pub fn split(a: SplitArgs) -> ExitCode {
    if a.pieces == 0 {
        eprintln!("swath split: --pieces must be at least 1");
        return ExitCode::from(1);
    }
    let mut text = Vec::new();
    let mut failed = false;
    for f in &a.files {
        match std::fs::metadata(f) {
            Ok(m) if m.is_file() => {
                for (s, e) in swath_engine::range::even_ranges(m.len(), a.pieces) {
                    text.extend_from_slice(f.as_os_str().as_bytes());
                    text.extend_from_slice(format!(" {s} {e}\n").as_bytes());
                }
            }
            Ok(_) => {
                eprintln!("swath split: {}: not a regular file", f.display());
                failed = true;
            }
            Err(e) => {
                eprintln!(
                    "swath split: {}: {}",
                    f.display(),
                    swath_engine::error::os_message(&e)
                );
                failed = true;
            }
        }
    }
    let mut out = crate::stdout::Stdout::new("swath split", crate::stdout::Voice::Swath);
    out.write(&text);
    match out.finish() {
        Ok(()) => ExitCode::from(u8::from(failed)),
        Err(status) => ExitCode::from(status),
    }
}
