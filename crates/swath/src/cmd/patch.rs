//! `swath patch make|apply|info`: binary patches of one file from another, or of one
//! directory tree from another.
//!
//! The work is `swath_patch`'s; this module parses the options, prints the reports (text or
//! `--json`) and maps failures to one line on stderr and exit status 2 (a damaged patch, the
//! wrong OLD, an unreadable file), as `diff`-like tools do for trouble.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Subcommand, ValueEnum};
use swath_patch::apply::{apply_file_via, census, PatchFile};
use swath_patch::format::Level;
use swath_patch::make::{make_file, speed_of_light, Format, MakeOptions};
use swath_patch::manifest::Script;
use swath_patch::tree::TreeOptions;
use swath_patch::tree_apply::apply_tree;
use swath_patch::tuning::Tuning;
use swath_patch::PatchError;

use crate::size::parse_size;
use crate::status::Status;
use crate::stdout::{Stdout, Voice};

/// `swath patch` subcommands.
#[derive(Subcommand, Debug)]
pub enum PatchCommand {
    /// Make PATCH, which turns OLD into NEW (two files, or two directories).
    #[command(after_help = "Examples:
  swath patch make v1.img v2.img v2.swp             a patch from v1.img to v2.img
  swath patch make --level fast old/ new/ tree.swp  two directory trees, at reading speed
  swath patch make --format vcdiff a b a-b.vcdiff   for xdelta3 -d")]
    Make(MakeArgs),
    /// Rebuild NEW from OLD and PATCH (OLD is checked against the patch first); PATCH may
    /// also be VCDIFF, as `xdelta3 -e -S none` writes it.
    #[command(after_help = "Example:
  swath patch apply v1.img v2.swp v2.img   rebuilds v2.img (written whole or not at all)")]
    Apply(ApplyArgs),
    /// Show what PATCH holds: sizes, hashes, counts of each kind of instruction.
    #[command(after_help = "Example:
  swath patch info v2.swp --json")]
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
    #[arg(long, value_enum, default_value = "default")]
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

    /// Memory the files of a tree processed at once may take (suffixes as in 4G; default:
    /// the memory available at the start). Files are admitted, the largest first, while
    /// their needs fit; one larger than the limit runs alone.
    #[arg(long, value_name = "LIMIT")]
    memory: Option<String>,

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

    /// The file or directory the patch starts from.
    old: PathBuf,
    /// The file or directory the patch makes.
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

    /// The file or directory the patch was made from.
    old: PathBuf,
    /// The patch.
    patch: PathBuf,
    /// Where to write the rebuilt file (written atomically, only once its hash holds), or
    /// the rebuilt tree (a directory that must not exist or be empty; built beside it and
    /// renamed into place).
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
            ExitCode::from(Status::Trouble)
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
    parse_size(text)
        .map_err(|_| PatchError::Usage(format!("{flag}: {}", crate::size::invalid_size(text))))
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
    if let Some(p) = patch {
        refuse_output_in_place(p, "PATCH", &[(&a.old, "OLD"), (&a.new, "NEW")])?;
    }
    let is_dir = |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| m.is_dir());
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
        tuning: tuning_from_env(),
        ..MakeOptions::default()
    };
    match (is_dir(&a.old), is_dir(&a.new)) {
        (true, true) => return make_tree(&a, opts, patch, out, started),
        (true, false) | (false, true) => {
            let (d, f) = if is_dir(&a.old) {
                (&a.old, &a.new)
            } else {
                (&a.new, &a.old)
            };
            return Err(PatchError::Usage(format!(
                "{}: Is a directory, and {} is not: OLD and NEW must be two files or two directories",
                d.display(),
                f.display()
            )));
        }
        (false, false) => {}
    }
    if a.memory.is_some() {
        return Err(PatchError::Usage(
            "--memory: only for directories (one file's make is bounded by its sections)".into(),
        ));
    }
    let total = [&a.old, &a.new]
        .iter()
        .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum::<u64>();
    let made = crate::progress::with_progress(Some(total), "patch make", |counter| {
        make_file(&a.old, &a.new, patch, &opts, Some(counter))
    })?;
    if a.json {
        write_json(out, stamped(&made, MAKE_SCHEMA));
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
            "time: {all:.3} s (OLD signature {:.3} s, OLD seeds {:.3} s, NEW matched and encoded {:.3} s), {:.1} MB/s of OLD+NEW",
            made.signature_secs - made.seeds_secs,
            made.seeds_secs,
            made.match_secs,
            read / all.max(1e-9) / 1e6
        );
        // The speed of light: reading both inputs and writing the patch, nothing else,
        // measured now on the same files.
        let light = speed_of_light(&a.old, &a.new, patch_dir(&a), made.patch_len);
        print_light(light, "read OLD and NEW, write the patch", all);
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

/// The directory the patch goes to (where the speed of light writes).
fn patch_dir(a: &MakeArgs) -> &std::path::Path {
    a.patch
        .as_deref()
        .and_then(|p| p.parent())
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."))
}

/// The speed of light (`what` it is) beside the make's `all` seconds, on stderr.
fn print_light(light: std::io::Result<std::time::Duration>, what: &str, all: f64) {
    match light {
        Ok(light) => eprintln!(
            "speed of light ({what}): {:.3} s; this make ran at {:.0}% of it",
            light.as_secs_f64(),
            light.as_secs_f64() * 100.0 / all.max(1e-9)
        ),
        Err(e) => eprintln!("speed of light: not measured ({e})"),
    }
}

/// Bytes of a tree's regular files (for the progress bar; walked only on a terminal).
fn tree_bytes(p: &std::path::Path) -> u64 {
    swath_patch::tree::walk(p, "")
        .map(|(_, w)| {
            w.iter()
                .map(|e| match e.kind {
                    swath_patch::tree::WalkedKind::File(n) => n,
                    _ => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// `make`'s switches kept for measurements, from the environment the benchmark scripts
/// set (read here, never in the library): `SWATH_IO=hot|ahead|direct` forces the way OLD
/// and NEW are read, `SWATH_MAP_OLD=0` and `SWATH_MAP_NEW=0` read them positionally instead
/// of mapping them, `SWATH_CDC_KERNEL=scalar|lanes` and `SWATH_SEED_GATE=scalar` choose
/// the slower kernels, `SWATH_DETACHED_FREES=0` frees large values in place. Unset or any
/// other value: the default.
fn tuning_from_env() -> Tuning {
    use swath_patch::cdc::Kernel;
    use swath_patch::seeds::Gate;
    let var = |name: &str| std::env::var(name).ok();
    let zero = |name: &str| std::env::var_os(name).is_some_and(|v| v == "0");
    let default = Tuning::default();
    Tuning {
        io: var("SWATH_IO")
            .and_then(|v| v.parse().ok())
            .unwrap_or(default.io),
        map_old: !zero("SWATH_MAP_OLD"),
        map_new: !zero("SWATH_MAP_NEW"),
        cdc_kernel: match var("SWATH_CDC_KERNEL").as_deref() {
            Some("scalar") => Kernel::Scalar,
            Some("lanes") => Kernel::Lanes,
            _ => default.cdc_kernel,
        },
        seed_gate: match var("SWATH_SEED_GATE").as_deref() {
            Some("scalar") => Gate::Scalar,
            _ => default.seed_gate,
        },
        detached_frees: !zero("SWATH_DETACHED_FREES"),
    }
}

/// `make` of two directories.
fn make_tree(
    a: &MakeArgs,
    make: MakeOptions,
    patch: Option<&std::path::Path>,
    out: &mut Stdout,
    started: Instant,
) -> Result<(), PatchError> {
    use std::io::IsTerminal;
    if make.format != Format::Swath {
        return Err(PatchError::Usage(
            "--format vcdiff: VCDIFF patches one file; a tree patch is in swath's format".into(),
        ));
    }
    let memory = match &a.memory {
        Some(m) => size_arg("--memory", m)?,
        None => swath_engine::sysinfo::available_memory().unwrap_or(1 << 30),
    };
    let io_readers = match make.io_threads {
        0 => std::fs::File::open(&a.old).map_or(swath_patch::tree::IO_READERS, |f| {
            swath_engine::sysinfo::io_threads(&f)
        }),
        n => n,
    };
    let opts = TreeOptions {
        make,
        memory,
        io_readers,
    };
    let total = std::io::stderr()
        .is_terminal()
        .then(|| tree_bytes(&a.old) + tree_bytes(&a.new));
    let made = crate::progress::with_progress(total, "patch make", |counter| {
        swath_patch::tree::make_tree(&a.old, &a.new, patch, &opts, Some(counter))
    })?;
    if a.json {
        write_json(out, stamped(&made, MAKE_SCHEMA));
    } else if a.dry_run {
        let c = &made.census;
        let text = format!(
            "patch: {} bytes, {} sections, manifest {} bytes\n\
             new tree: {} files, {} directories, {} links; {} old files deleted\n\
             whole old files (unchanged, renamed, copied): {} files, {} bytes\n\
             made by sections: {} bytes\n",
            made.patch_len,
            made.sections,
            made.manifest_len,
            made.new_files,
            made.new_dirs,
            made.new_links,
            made.deleted_files,
            made.identical_files,
            made.identical_bytes,
            made.new_len,
        ) + &census_lines(c);
        out.write(text.as_bytes());
    }
    if a.time {
        let all = started.elapsed().as_secs_f64();
        let read = (made.old_len + made.new_len + made.identical_bytes) as f64;
        eprintln!(
            "time: {all:.3} s (walk and OLD signatures {:.3} s, NEW hashed, matched and encoded {:.3} s), {:.1} MB/s of OLD+NEW",
            made.signature_secs,
            made.match_secs,
            read / all.max(1e-9) / 1e6
        );
        let light =
            swath_patch::tree::speed_of_light_tree(&a.old, &a.new, patch_dir(a), made.patch_len);
        print_light(light, "read both trees' files, write the patch", all);
    }
    Ok(())
}

/// What a patch's ops make, one line for each kind.
fn census_lines(c: &swath_patch::apply::Census) -> String {
    format!(
        "copied exactly: {} bytes in {} copies\n\
         approximate: {} bytes in {}\n\
         zero runs: {} bytes in {}\n\
         literal: {} bytes in {}\n",
        c.copied_bytes,
        c.copies,
        c.delta_bytes,
        c.deltas,
        c.zero_bytes,
        c.zero_runs,
        c.literal_bytes,
        c.literals,
    )
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

/// Refuses an output (`out`, named `out_what`) that is one of the inputs itself (the same
/// file or directory, by device and inode, through links too): what is written would
/// replace what it is being made from.
fn refuse_output_in_place(
    out: &std::path::Path,
    out_what: &str,
    inputs: &[(&std::path::Path, &str)],
) -> Result<(), PatchError> {
    for &(input, what) in inputs {
        if std::fs::metadata(input).is_ok_and(|m| swath_engine::output::replaces_input(out, &m)) {
            return Err(PatchError::Usage(format!(
                "'{}' and '{}' are the same file ({out_what} would replace {what})",
                input.display(),
                out.display()
            )));
        }
    }
    Ok(())
}

fn apply(a: ApplyArgs) -> Result<(), PatchError> {
    let started = Instant::now();
    refuse_output_in_place(&a.new, "NEW", &[(&a.patch, "PATCH"), (&a.old, "OLD")])?;
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
    if patch.is_tree() {
        let whole = patch.manifest()?.map_or(0, |m| m.summary.whole_bytes);
        let total = patch.header.new_len.saturating_add(whole);
        let done = crate::progress::with_progress(Some(total), "patch apply", |c| {
            pool.install(|| apply_tree(&a.old, &patch, &a.new, Some(c)))
        })?;
        if a.time {
            let secs = started.elapsed().as_secs_f64();
            eprintln!(
                "time: {secs:.3} s, {} files ({} bytes from {} sections, {} bytes of whole old files), {} directories, {} links",
                done.files, done.new_len, done.sections, done.copied_len, done.dirs, done.links
            );
        }
        return Ok(());
    }
    // `SWATH_APPLY_MAP=1` (kept for the scripts that measure it) rebuilds each section in a
    // map of its range of NEW instead of writing it: the library takes it as an option.
    let via = if std::env::var_os("SWATH_APPLY_MAP").is_some_and(|v| v == "1") {
        swath_engine::output::Via::RangeMaps
    } else {
        swath_engine::output::Via::Pwrite
    };
    let done = crate::progress::with_progress(Some(patch.header.new_len), "patch apply", |c| {
        pool.install(|| apply_file_via(&a.old, &patch, &a.new, Some(c), via))
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
    if let Some(m) = patch.manifest()? {
        return tree_info(&a, &patch, &m, &c, out);
    }
    if a.json {
        let mut v = info_json(&patch, &c);
        v.insert("new_bytes".into(), h.new_len.into());
        write_json(out, v);
        return Ok(());
    }
    let text = format!(
        "format: swath patch, version {}\n\
         patch: {} bytes ({} of NEW)\n\
         old: {} bytes, XXH3-128 {:032x}\n\
         new: {} bytes, XXH3-128 {:032x}\n\
         made at level {}, chunks of {} bytes on average, {} sections\n",
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
    );
    let text = text + &census_lines(&c);
    out.write(text.as_bytes());
    Ok(())
}

/// The fields `info --json` gives for every patch, a file's or a tree's.
fn info_json(
    patch: &PatchFile,
    c: &swath_patch::apply::Census,
) -> serde_json::Map<String, serde_json::Value> {
    let h = &patch.header;
    let mut m = stamped(&(), INFO_SCHEMA);
    match serde_json::json!({
        "format": "swath",
        "format_version": swath_patch::format::VERSION,
        "patch_bytes": patch.len(),
        "old_bytes": h.old_len,
        "old_hash": format!("{:032x}", h.old_hash),
        "new_hash": format!("{:032x}", h.new_hash),
        "level": h.level.name(),
        "chunk_avg": h.chunk_avg,
        "sections": patch.entries.len(),
        "ops": c,
    }) {
        serde_json::Value::Object(fields) => m.extend(fields),
        _ => unreachable!("a json! object literal is an object"),
    }
    m
}

/// The layout of `patch make --json` (docs/json.md).
const MAKE_SCHEMA: u32 = 1;

/// The layout of `patch info --json`: 2 since `version` is swath's (the patch format's is
/// `format_version`).
const INFO_SCHEMA: u32 = 2;

/// `report`'s fields (an object's, or none for `()`) after `schema`, `tool` and `version`.
fn stamped(
    report: &impl serde::Serialize,
    schema: u32,
) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    m.insert("schema".into(), schema.into());
    m.insert("tool".into(), "swath patch".into());
    m.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(report) {
        m.extend(fields);
    }
    m
}

/// Writes one JSON object and a newline.
fn write_json(out: &mut Stdout, v: serde_json::Map<String, serde_json::Value>) {
    out.write(serde_json::Value::Object(v).to_string().as_bytes());
    out.write(b"\n");
}

/// `info` of a tree patch: its entries, and the bytes of each kind.
fn tree_info(
    a: &InfoArgs,
    patch: &PatchFile,
    m: &Script,
    c: &swath_patch::apply::Census,
    out: &mut Stdout,
) -> Result<(), PatchError> {
    let h = &patch.header;
    let s = &m.summary;
    let (files, dirs, links, whole, whole_bytes, deleted) = (
        s.new_files,
        s.new_dirs,
        s.new_links,
        s.whole_files,
        s.whole_bytes,
        s.deleted_files,
    );
    let new_bytes = h.new_len.saturating_add(whole_bytes);
    if a.json {
        let mut v = info_json(patch, c);
        let tree = serde_json::json!({
            "tree": true,
            "old_files": s.old_files,
            "old_entries": s.old_entries,
            "manifest_bytes": patch.manifest_at.map_or(0, |at| at.stored),
            "new_files": files,
            "new_dirs": dirs,
            "new_links": links,
            "deleted_files": deleted,
            "new_file_bytes": new_bytes,
            "whole_old_files": whole,
            "whole_old_file_bytes": whole_bytes,
            "section_bytes": h.new_len,
        });
        if let serde_json::Value::Object(tree) = tree {
            v.extend(tree);
        }
        write_json(out, v);
        return Ok(());
    }
    let text = format!(
        "format: swath patch of a directory tree, version {}\n\
         patch: {} bytes\n\
         old tree: {} files, {} bytes, XXH3-128 {:032x}\n\
         new tree: {} files ({} bytes), {} directories, {} links, XXH3-128 {:032x}\n\
         deleted files: {}\n\
         whole old files (unchanged, renamed, copied): {} files, {} bytes\n\
         made by sections: {} bytes in {} sections\n\
         made at level {}, chunks of {} bytes on average\n",
        swath_patch::format::VERSION,
        patch.len(),
        s.old_files,
        h.old_len,
        h.old_hash,
        files,
        new_bytes,
        dirs,
        links,
        h.new_hash,
        deleted,
        whole,
        whole_bytes,
        h.new_len,
        patch.entries.len(),
        h.level.name(),
        h.chunk_avg,
    );
    let text = text + &census_lines(c);
    out.write(text.as_bytes());
    Ok(())
}
