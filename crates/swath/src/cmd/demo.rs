//! `swath demo`: the main job on generated default data, beside the GNU tool it replaces.
//!
//! Generates (once; later runs reuse them) the seeds' 640,000,000-byte text file, an
//! identical copy and a copy with one difference near the end, then times `swath cmp` and,
//! where installed, GNU `cmp` on both pairs: one warm-up run, then the median of several,
//! after checking that both give the same answer.
//!
//! The files live in a directory of the user's own: `--dir`, or `$XDG_CACHE_HOME/swath/demo`
//! (`~/.cache/swath/demo`), or a fresh private directory under the system's temporary
//! directory when there is no home. A directory that is a symbolic link, is not the user's
//! or that others may write into is refused: a shared `/tmp/swath-demo` let another user
//! plant links there that root's demo then wrote through.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use swath_gen::{Mutation, DEFAULT_TEXT_SIZE};

use crate::size::parse_size;

/// Arguments of `swath demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Size of the generated files (suffixes accepted).
    #[arg(long, default_value = "640000000", value_parser = size_arg)]
    size: u64,
    /// Where to keep the generated files: a directory of your own (default:
    /// $XDG_CACHE_HOME/swath/demo, or ~/.cache/swath/demo).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Timed runs per command, after one warm-up.
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

fn size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|_| format!("invalid size '{s}'"))
}

/// Runs the demo.
pub fn run(args: DemoArgs) -> Result<()> {
    let dir = match args.dir {
        Some(d) => d,
        None => default_dir()?,
    };
    private_dir(&dir)?;
    let mut report = String::new();
    let size = args.size;
    let a = dir.join(format!("text-{size}.a"));
    let same = dir.join(format!("text-{size}.same"));
    let diff = dir.join(format!("text-{size}.diff"));
    if size == DEFAULT_TEXT_SIZE {
        eprintln!(
            "swath demo: the seeds' {size}-byte text file, in {}",
            dir.display()
        );
    }
    ensure(&a, size, || swath_gen::text(&a, size, 1))?;
    ensure(&same, size, || swath_gen::text(&same, size, 1))?;
    ensure(&diff, size, || {
        let at = size.saturating_sub(size / 100).min(size.saturating_sub(1));
        let m = Mutation {
            diffs: 1,
            at: vec![at],
            seed: 1,
            resize: None,
        };
        swath_gen::mutate(&a, &diff, &m).map(|_| ())
    })?;
    let me = std::env::current_exe().context("locating the swath executable")?;
    let gnu = which("cmp");
    writeln!(
        report,
        "{:<34} {:>12} {:>12} {:>8}",
        "comparison (hot cache)", "swath cmp", "GNU cmp", "speed-up"
    )?;
    for (label, other) in [
        ("identical files", &same),
        ("one difference near the end", &diff),
    ] {
        let swath_cmd = [
            me.as_os_str().to_owned(),
            "cmp".into(),
            a.clone().into(),
            other.clone().into(),
        ];
        let (swath_out, swath_t) = time_runs(&swath_cmd, args.runs)?;
        let gnu_result = match &gnu {
            Some(g) => {
                let cmd = [g.clone().into(), a.clone().into(), other.clone().into()];
                let (out, t) = time_runs(&cmd, args.runs)?;
                if out != swath_out {
                    bail!(
                        "swath and GNU cmp disagree on {label}: {:?} vs {:?}",
                        String::from_utf8_lossy(&swath_out),
                        String::from_utf8_lossy(&out)
                    );
                }
                Some(t)
            }
            None => None,
        };
        let (gnu_col, ratio) = match gnu_result {
            Some(t) => (
                format!("{:.1} ms", ms(t)),
                format!("{:.1}x", ms(t) / ms(swath_t).max(0.001)),
            ),
            None => ("(not installed)".to_string(), "-".to_string()),
        };
        writeln!(
            report,
            "{:<34} {:>12} {:>12} {:>8}",
            label,
            format!("{:.1} ms", ms(swath_t)),
            gnu_col,
            ratio
        )?;
        let answer = String::from_utf8_lossy(&swath_out);
        writeln!(report, "  answer: {}", answer.trim().replace('\n', " "))?;
    }
    writeln!(
        report,
        "medians of {} runs after a warm-up, files of {size} bytes in {}",
        args.runs,
        dir.display()
    )?;
    crate::stdout::print_all("swath demo", report.as_bytes())?;
    Ok(())
}

/// `$XDG_CACHE_HOME/swath/demo`, else `$HOME/.cache/swath/demo`, else a new private
/// directory under the system's temporary directory (kept, and named in the report).
fn default_dir() -> Result<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| Path::new(v).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| Path::new(v).is_absolute())
                .map(|h| Path::new(&h).join(".cache"))
        });
    match cache {
        Some(c) => Ok(c.join("swath").join("demo")),
        None => {
            let d = tempfile::Builder::new()
                .prefix("swath-demo.")
                .tempdir()
                .context("creating a private directory for the demo")?;
            Ok(d.keep())
        }
    }
}

/// Creates `dir` (mode 0700) if needed and refuses it unless it is a real directory owned
/// by the user that no one else may write into.
fn private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let m = std::fs::symlink_metadata(dir).with_context(|| dir.display().to_string())?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.file_type().is_symlink() || !m.is_dir() {
        bail!(
            "{}: not a directory of your own (a symbolic link or another file): give --dir",
            dir.display()
        );
    }
    if m.uid() != me {
        bail!(
            "{}: owned by user {}, not by you: give --dir a directory of your own",
            dir.display(),
            m.uid()
        );
    }
    if m.mode() & 0o022 != 0 {
        bail!(
            "{}: others may write into it (mode {:o}): give --dir a private directory",
            dir.display(),
            m.mode() & 0o7777
        );
    }
    Ok(())
}

fn ensure(
    path: &Path,
    size: u64,
    make: impl FnOnce() -> Result<(), swath_engine::EngineError>,
) -> Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() == size) {
        return Ok(());
    }
    eprintln!("swath demo: generating {}", path.display());
    make()?;
    Ok(())
}

fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs the command once to warm up, then `runs` times; returns its output (stdout and
/// stderr, exit status appended) and the median wall time.
fn time_runs(cmd: &[std::ffi::OsString], runs: usize) -> Result<(Vec<u8>, Duration)> {
    let run_once = || -> Result<(Vec<u8>, Duration)> {
        let start = Instant::now();
        let out = Command::new(&cmd[0])
            .args(&cmd[1..])
            .output()
            .with_context(|| format!("running {}", cmd[0].to_string_lossy()))?;
        let elapsed = start.elapsed();
        let mut text = out.stdout;
        text.extend_from_slice(&out.stderr);
        text.extend_from_slice(
            format!("(exit status {})", out.status.code().unwrap_or(-1)).as_bytes(),
        );
        Ok((text, elapsed))
    };
    let (first, _) = run_once()?;
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        let (out, t) = run_once()?;
        if out != first {
            bail!(
                "{} gave different answers across runs",
                cmd[0].to_string_lossy()
            );
        }
        times.push(t);
    }
    times.sort();
    Ok((first, times[times.len() / 2]))
}
