//! `swath merge` and `swath split`: partial results computed anywhere (other processes,
//! Slurm arrays, `xargs -P`, other machines), merged into what the one-machine command
//! prints; and the byte ranges to compute them over.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use swath_report::merge::{merge_parts, render_parts, Format};

use crate::status::Status;

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
    /// With `logs summary` partials: write the self-contained HTML report to OUT instead of
    /// printing the text (as `swath logs summary --html OUT`; --json still prints).
    #[arg(long, value_name = "OUT")]
    html: Option<PathBuf>,
}

/// Partials mapped at once by a merge (the engine's guard has 256 slots).
const MAPPED_MAX: usize = 240;

/// Print byte ranges that cut files into pieces, one `path start end` line each.
#[derive(Args, Debug)]
#[command(
    after_help = "Each line is a FILE and a range START END of it (byte offsets), for `--range START:END`.\nRanges are cut evenly by bytes; the commands that take them move each cut to a line end\n(as Hadoop and Dask do), so every line is counted once.\n\nExample:\n  swath split --pieces 8 access.log      then one `--range START:END --emit-partial` per line"
)]
pub struct SplitArgs {
    /// Pieces per file.
    #[arg(long, value_name = "N")]
    pieces: u64,
    /// The files.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// The one line for `--range` or `--operand-index` given without `--emit-partial` (wc and
/// grep): an option that is accepted must act, so these are refused.
pub(crate) fn needs_emit_partial(option: &str) -> String {
    format!(
        "{option} applies only with --emit-partial OUT (it shapes a partial result for 'swath merge')"
    )
}

/// Writes a partial's bytes to `path` atomically (a temporary file renamed into place).
pub(crate) fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let what = |e: &dyn std::fmt::Display| format!("cannot write '{}': {e}", path.display());
    let out = swath_engine::AtomicOutput::create(path).map_err(|e| what(&e))?;
    let mut f = out.file();
    f.write_all(bytes)
        .map_err(|e| what(&swath_engine::error::os_message(&e)))?;
    out.commit(false).map_err(|e| what(&e))
}

/// `swath merge`.
pub fn merge(a: MergeArgs) -> ExitCode {
    if a.emit_partial.is_none() {
        return merge_report(&a);
    }
    // The merged partial is made in memory (the partials are mapped, read from the page
    // cache): it is at most as large as they are together.
    let total: u64 = a
        .partials
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    match swath_report::merge::check_merge_memory(total) {
        Err(msg) => {
            eprintln!("swath merge: {msg}");
            ExitCode::from(Status::Failure)
        }
        Ok(()) => merge_to_partial(&a),
    }
}

/// `swath merge --emit-partial OUT`: the partials merged from their bytes (by the report
/// their headers name; log states as sorted lists, `swath_report::merge::merge_parts`) and
/// written.
fn merge_to_partial(a: &MergeArgs) -> ExitCode {
    let fail = |m: String| {
        eprintln!("swath merge: {m}");
        ExitCode::from(Status::Failure)
    };
    let held = match hold(&a.partials) {
        Ok(h) => h,
        Err(m) => return fail(m),
    };
    let parts: Vec<&[u8]> = held.iter().map(Held::bytes).collect();
    let merged = merge_parts(&parts);
    if let Some(m) = changed(&a.partials, &held) {
        return fail(m);
    }
    let merged = match merged {
        Ok(Some(m)) => m,
        Ok(None) => return fail("no partial result given".into()),
        Err((k, e)) => return fail(format!("{}: {e}", a.partials[k].display())),
    };
    drop(held);
    let out = a.emit_partial.as_ref().expect("asked for");
    match write_bytes(out, &merged) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => fail(m),
    }
}

/// The partials' bytes: mapped (read where they lie, in the page cache), past the map
/// guard's slots read into memory; a file that is not a partial (by its first bytes) is
/// refused before anything more of it is read.
fn hold(paths: &[PathBuf]) -> Result<Vec<Held>, String> {
    use std::os::unix::fs::FileExt;
    let mut held = Vec::with_capacity(paths.len());
    for path in paths {
        let shown = path.display().to_string();
        let named = |e: &dyn std::fmt::Display| format!("{shown}: {e}");
        let os = |e: std::io::Error| named(&swath_engine::error::os_message(&e));
        let file = std::fs::File::open(path).map_err(os)?;
        let len = match file.metadata().map_err(os)? {
            m if m.is_dir() => return Err(named(&"Is a directory")),
            m => m.len(),
        };
        let mut magic = [0u8; 8];
        if file.read_exact_at(&mut magic, 0).is_err() || &magic != swath_ops::partial::MAGIC {
            return Err(named(&swath_ops::partial::PartialError::Foreign));
        }
        let map = match held.len() < MAPPED_MAX {
            true => swath_engine::mapguard::GuardedMap::new(&file, &shown, 0, len),
            false => Ok(None),
        };
        match map.map_err(|e| e.to_string())? {
            Some(m) => held.push(Held::Mapped(m)),
            None => held.push(Held::Read(std::fs::read(path).map_err(os)?)),
        }
    }
    Ok(held)
}

/// A message naming a mapped partial cut short while it was read (it reads as zeros past
/// its new end, so what was made from it is not used).
fn changed(paths: &[PathBuf], held: &[Held]) -> Option<String> {
    let (path, _) = paths.iter().zip(held).find(|(_, h)| h.faulted())?;
    Some(format!("{}: changed while it was read", path.display()))
}

/// How `a` asks for the report.
fn format(a: &MergeArgs) -> Format {
    if a.json {
        Format::Json
    } else {
        Format::Text
    }
}

/// `swath merge` printing the report: the partials mapped (read where they lie, in the
/// page cache), their shapes merged in argument order (an error names the partial), a log
/// report merged from their sorted lists in bounded memory (`swath_ops::logs::streamed`).
fn merge_report(a: &MergeArgs) -> ExitCode {
    let fail = |m: String| {
        eprintln!("swath merge: {m}");
        ExitCode::from(Status::Failure)
    };
    let maps = match hold(&a.partials) {
        Ok(h) => h,
        Err(m) => return fail(m),
    };
    let parts: Vec<&[u8]> = maps.iter().map(Held::bytes).collect();
    let result = render_parts(&parts, format(a), a.html.is_some());
    if let Some(m) = changed(&a.partials, &maps) {
        return fail(m);
    }
    match result {
        Ok(r) => print_report(a, &r),
        Err((Some(k), m)) => fail(format!("{}: {m}", a.partials[k].display())),
        Err((None, m)) => fail(m.to_string()),
    }
}

/// A partial's bytes, mapped or read.
enum Held {
    Mapped(swath_engine::mapguard::GuardedMap),
    Read(Vec<u8>),
}

impl Held {
    fn bytes(&self) -> &[u8] {
        match self {
            Held::Mapped(m) => m.bytes(),
            Held::Read(b) => b,
        }
    }

    /// True when a mapped partial was cut short while read.
    fn faulted(&self) -> bool {
        matches!(self, Held::Mapped(m) if m.faulted())
    }
}

/// Writes a merged report's page, then prints the report (with a page, only when JSON is
/// asked for: `swath logs summary --html` prints nothing else either), then says the
/// malformed lines.
fn print_report(a: &MergeArgs, report: &swath_report::merge::Report) -> ExitCode {
    let mut page_written = false;
    if let (Some(path), Some(page)) = (&a.html, &report.page) {
        if let Err(m) = write_bytes(path, page.as_bytes()) {
            eprintln!("swath merge: {m}");
            return ExitCode::from(Status::Failure);
        }
        page_written = true;
    }
    let mut out = crate::stdout::Stdout::new("swath merge", crate::stdout::Voice::Swath);
    if !page_written || a.json {
        out.write(&report.text);
    }
    let status = match out.finish() {
        Ok(()) => ExitCode::SUCCESS,
        Err(status) => ExitCode::from(status),
    };
    if report.malformed > 0 {
        // Said after the report, as `swath logs` says it.
        eprintln!("swath logs: {} malformed lines skipped", report.malformed);
    }
    status
}

/// `swath split`.
pub fn split(a: SplitArgs) -> ExitCode {
    if a.pieces == 0 {
        eprintln!("swath split: --pieces must be at least 1");
        return ExitCode::from(Status::Failure);
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
        Ok(()) => ExitCode::from(if failed {
            Status::Failure
        } else {
            Status::Success
        }),
        Err(status) => ExitCode::from(status),
    }
}
