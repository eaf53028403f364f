//! `swath patch make|apply|info`: binary patches of one file from another.
//!
//! The work is `swath_patch`'s; this module parses the options, prints the reports (text or
//! `--json`) and maps failures to one line on stderr and exit status 2 (a damaged patch, the
//! wrong OLD, an unreadable file), as `diff`-like tools do for trouble.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Subcommand, ValueEnum};
use swath_patch::apply::{apply_file, census, PatchFile};
use swath_patch::format::Level;
use swath_patch::make::{make_file, speed_of_light, Format, MakeOptions};
use swath_patch::PatchError;

use crate::size::parse_size;
use crate::stdout::{Stdout, Voice};

/// `swath patch` subcommands.
#[derive(Subcommand, Debug)]
pub enum PatchCommand {
    /// Make PATCH, which turns OLD into NEW.
    Make(MakeArgs),
    /// Rebuild NEW from OLD and PATCH (OLD is checked against the patch first); PATCH may
    /// also be VCDIFF, as `xdelta3 -e -S none` writes it.
    Apply(ApplyArgs),
    /// Show what PATCH holds: sizes, hashes, counts of each kind of instruction.
    Info(InfoArgs),
}

/// How hard `make` works.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelArg {
    /// Exact matches of content-defined chunks only, at the speed of reading.
    Fast,
    /// Chunk matches, then approximate matches between them (smaller patches of programs).
    Default,
    /// Default's matching with the strongest compression (zstd 19): a smaller patch, slower.
    Max,
}

/// The format `make` writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    /// swath's own format (docs/patch-format.md).
    Swath,
    /// RFC 3284 VCDIFF (docs/vcdiff.md).
    Vcdiff,
}

/// Arguments of `swath patch make`.
#[derive(Args, Debug)]
pub struct MakeArgs {
    /// How hard to work: fast, default or max.
    #[arg(long, value_enum, default_value = "fast")]
    level: LevelArg,

    /// Average length of the content-defined chunks matched between OLD and NEW (64 bytes
    /// to 64 MiB; suffixes as in 4K).
    #[arg(long, value_name = "SIZE", default_value = "1K")]
    chunk: String,

    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,

    /// Bytes read at a time from OLD while computing its signature (default 16M).
    #[arg(long, value_name = "SIZE", default_value = "16M")]
    io_chunk: String,

    /// Files read at once from one device (default: 1 on a rotational disk, 2 otherwise).
    #[arg(long, value_name = "N")]
    io_threads: Option<usize>,

    /// The patch's format: swath (compressed, checked, applied on all cores) or vcdiff
    /// (RFC 3284, as `xdelta3 -d -s OLD PATCH NEW` applies it; approximate matches become
    /// literal bytes there, and nothing is compressed).
    #[arg(long, value_enum, default_value = "swath")]
    format: FormatArg,

    /// Measure the patch (sizes and counts) without writing it; PATCH may then be omitted.
    #[arg(long)]
    dry_run: bool,

    /// Print the report as JSON on standard output.
    #[arg(long)]
    json: bool,

    /// Print the time each phase took on standard error.
    #[arg(long)]
    time: bool,

    /// The file the patch starts from.
    old: PathBuf,
    /// The file the patch makes.
    new: PathBuf,
    /// Where to write the patch (written atomically).
    patch: Option<PathBuf>,
}

/// Arguments of `swath patch apply`.
#[derive(Args, Debug)]
pub struct ApplyArgs {
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,

    /// Print the time it took on standard error.
    #[arg(long)]
    time: bool,

    /// The file the patch was made from.
    old: PathBuf,
    /// The patch.
    patch: PathBuf,
    /// Where to write the rebuilt file (written atomically, only once its hash holds).
    new: PathBuf,
}

/// Arguments of `swath patch info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Print the report as JSON on standard output.
    #[arg(long)]
    json: bool,

    /// The patch.
    patch: PathBuf,
}

/// Runs `swath patch`; the exit status is 0, or 2 after one line on stderr.
pub fn run(cmd: PatchCommand) -> ExitCode {
    let mut out = Stdout::new("swath patch", Voice::Swath);
    let result = match cmd {
        PatchCommand::Make(a) => make(a, &mut out),
        PatchCommand::Apply(a) => apply(a),
        PatchCommand::Info(a) => info(a, &mut out),
    };
    let flushed = out.finish();
    match (result, flushed) {
        (Err(e), _) => {
            let line = e.to_string();
            eprintln!("swath patch: {}", crate::stdout::visible(line.as_bytes()));
            ExitCode::from(2)
        }
        (Ok(()), Err(status)) => ExitCode::from(status),
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
    }
}

fn threads(t: Option<usize>) -> usize {
    t.filter(|&n| n > 0)
        .unwrap_or_else(swath_engine::sysinfo::cores)
}

fn size_arg(flag: &str, text: &str) -> Result<u64, PatchError> {
    parse_size(text).map_err(|_| PatchError::Usage(format!("{flag}: invalid size '{text}'")))
}

fn make(a: MakeArgs, out: &mut Stdout) -> Result<(), PatchError> {
    let started = Instant::now();
    let level = match a.level {
        LevelArg::Fast => Level::Fast,
        LevelArg::Default => Level::Default,
        LevelArg::Max => Level::Max,
    };
    let chunk = size_arg("--chunk", &a.chunk)?;
    let io_chunk = size_arg("--io-chunk", &a.io_chunk)?;
    if !(64..=64 << 20).contains(&chunk) {
        return Err(PatchError::Usage(format!(
            "--chunk: {chunk} is outside 64 bytes to 64 MiB"
        )));
    }
    if !(1 << 16..=1 << 30).contains(&io_chunk) {
        return Err(PatchError::Usage(format!(
            "--io-chunk: {io_chunk} is outside 64 KiB to 1 GiB"
        )));
    }
    let patch = match (&a.patch, a.dry_run) {
        (Some(p), false) => Some(p.as_path()),
        (_, true) => None,
        (None, false) => {
            return Err(PatchError::Usage(
                "missing PATCH (the file to write; or --dry-run to only measure)".into(),
            ))
        }
    };
    let total = [&a.old, &a.new]
        .iter()
        .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum::<u64>();
    let opts = MakeOptions {
        level,
        chunk_avg: chunk as u32,
        threads: threads(a.threads),
        io_chunk: io_chunk as usize,
        io_threads: a.io_threads.unwrap_or(0),
        format: match a.format {
            FormatArg::Swath => Format::Swath,
            FormatArg::Vcdiff => Format::Vcdiff,
        },
        ..MakeOptions::default()
    };
    let made = crate::progress::with_progress(Some(total), "patch make", |counter| {
        make_file(&a.old, &a.new, patch, &opts, Some(counter))
    })?;
    if a.json {
        let text = serde_json::to_string(&made).unwrap_or_default();
        out.write(text.as_bytes());
        out.write(b"\n");
    } else if a.dry_run {
        let share = |b: u64| percent(b, made.new_len);
        let c = &made.census;
        let text = format!(
            "patch: {} bytes ({} of NEW's {} bytes), {} sections\n\
             copied exactly: {} bytes in {} copies ({})\n\
             approximate: {} bytes in {} ({})\n\
             zero runs: {} bytes in {} ({})\n\
             literal: {} bytes in {} ({})\n",
            made.patch_len,
            share(made.patch_len),
            made.new_len,
            made.sections,
            c.copied_bytes,
            c.copies,
            share(c.copied_bytes),
            c.delta_bytes,
            c.deltas,
            share(c.delta_bytes),
            c.zero_bytes,
            c.zero_runs,
            share(c.zero_bytes),
            c.literal_bytes,
            c.literals,
            share(c.literal_bytes),
        );
        out.write(text.as_bytes());
    }
    if a.time {
        let all = started.elapsed().as_secs_f64();
        let read = (made.old_len + made.new_len) as f64;
        eprintln!(
            "time: {all:.3} s (OLD signature {:.3} s, NEW matched and encoded {:.3} s), {:.1} MB/s of OLD+NEW",
            made.signature_secs,
            made.match_secs,
            read / all.max(1e-9) / 1e6
        );
        // The speed of light: reading both inputs and writing the patch, nothing else,
        // measured now on the same files.
        let dir = a
            .patch
            .as_deref()
            .and_then(|p| p.parent())
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        match speed_of_light(&a.old, &a.new, dir, made.patch_len) {
            Ok(light) => eprintln!(
                "speed of light (read OLD and NEW, write the patch): {:.3} s; this make ran at {:.0}% of it",
                light.as_secs_f64(),
                light.as_secs_f64() * 100.0 / all.max(1e-9)
            ),
            Err(e) => eprintln!("speed of light: not measured ({e})"),
        }
        // Inputs read cold: the device's sequential bandwidth, measured now with direct
        // reads (16 MiB requests, 4 in flight), is the ceiling.
        if made.resident < 0.5 {
            match swath_patch::make::direct_read_time(&[&a.old, &a.new], 16 << 20, 4) {
                Ok((n, t)) => eprintln!(
                    "device (direct reads of OLD and NEW, 16 MiB requests, 4 in flight): {:.3} s, {:.1} MB/s; this make read at {:.0}% of it",
                    t.as_secs_f64(),
                    n as f64 / t.as_secs_f64().max(1e-9) / 1e6,
                    t.as_secs_f64() * 100.0 / all.max(1e-9)
                ),
                Err(e) => eprintln!("device bandwidth: not measured ({e})"),
            }
        }
    }
    Ok(())
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0%".into();
    }
    format!("{:.2}%", part as f64 * 100.0 / whole as f64)
}

/// True when the file at `p` starts like a VCDIFF patch.
fn looks_like_vcdiff(p: &std::path::Path) -> bool {
    let mut head = [0u8; 4];
    std::fs::File::open(p)
        .and_then(|f| std::io::Read::read_exact(&mut &f, &mut head))
        .is_ok()
        && swath_patch::vcdiff::is_vcdiff(&head)
}

fn apply(a: ApplyArgs) -> Result<(), PatchError> {
    let started = Instant::now();
    if looks_like_vcdiff(&a.patch) {
        let done = swath_patch::apply::apply_vcdiff_file(&a.old, &a.patch, &a.new)?;
        if a.time {
            let secs = started.elapsed().as_secs_f64();
            eprintln!(
                "time: {secs:.3} s (VCDIFF), {:.1} MB/s of NEW written",
                done.new_len as f64 / secs.max(1e-9) / 1e6
            );
        }
        return Ok(());
    }
    let patch = PatchFile::open(&a.patch)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads(a.threads))
        .build()
        .map_err(|e| PatchError::Usage(format!("cannot start worker threads: {e}")))?;
    let done = crate::progress::with_progress(Some(patch.header.new_len), "patch apply", |c| {
        pool.install(|| apply_file(&a.old, &patch, &a.new, Some(c)))
    })?;
    if a.time {
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "time: {secs:.3} s, {} sections, {:.1} MB/s of NEW written",
            done.sections,
            done.new_len as f64 / secs.max(1e-9) / 1e6
        );
    }
    Ok(())
}

fn info(a: InfoArgs, out: &mut Stdout) -> Result<(), PatchError> {
    if looks_like_vcdiff(&a.patch) {
        return Err(PatchError::invalid(
            &a.patch.to_string_lossy(),
            "a VCDIFF patch: info reads swath patches (apply takes both)",
        ));
    }
    let patch = PatchFile::open(&a.patch)?;
    let c = census(&patch)?;
    let h = &patch.header;
    if a.json {
        let v = serde_json::json!({
            "format": "swath",
            "version": swath_patch::format::VERSION,
            "patch_bytes": patch.len(),
            "old_bytes": h.old_len,
            "new_bytes": h.new_len,
            "old_hash": format!("{:032x}", h.old_hash),
            "new_hash": format!("{:032x}", h.new_hash),
            "level": h.level.name(),
            "chunk_avg": h.chunk_avg,
            "sections": patch.entries.len(),
            "ops": c,
        });
        out.write(v.to_string().as_bytes());
        out.write(b"\n");
        return Ok(());
    }
    let text = format!(
        "format: swath patch, version {}\n\
         patch: {} bytes ({} of NEW)\n\
         old: {} bytes, XXH3-128 {:032x}\n\
         new: {} bytes, XXH3-128 {:032x}\n\
         made at level {}, chunks of {} bytes on average, {} sections\n\
         copied exactly: {} bytes in {} copies\n\
         approximate: {} bytes in {}\n\
         zero runs: {} bytes in {}\n\
         literal: {} bytes in {}\n",
        swath_patch::format::VERSION,
        patch.len(),
        percent(patch.len(), h.new_len),
        h.old_len,
        h.old_hash,
        h.new_len,
        h.new_hash,
        h.level.name(),
        h.chunk_avg,
        patch.entries.len(),
        c.copied_bytes,
        c.copies,
        c.delta_bytes,
        c.deltas,
        c.zero_bytes,
        c.zero_runs,
        c.literal_bytes,
        c.literals,
    );
    out.write(text.as_bytes());
    Ok(())
}
