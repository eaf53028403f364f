//! `swath cipher`: the seeds' Caesar-cipher file transformation, by every cci strategy, with
//! output that is either complete or absent.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args;
use swath_engine::{AtomicOutput, Input};
use swath_kernels::transform::Cipher;
use swath_ops::inplace::{
    transform_in_place, transform_in_place_counted, InPlaceParams, InPlaceReport,
};
use swath_ops::transform::{
    transform_stream, transform_to_file, CipherStrategy, TransformReport, TransformSpec,
};

use crate::engine_args::{Stopwatch, WorkerArgs};
use crate::status::Status;

/// Arguments of `swath cipher`.
#[derive(Args, Debug)]
#[command(
    override_usage = "swath cipher [OPTIONS] --shift N INPUT OUTPUT
       swath cipher [OPTIONS] --shift N --in-place FILE
       swath cipher --resume FILE",
    after_help = "Examples:
  swath cipher --shift 3 plain.txt secret.txt     every byte + 3 (modulo 256)
  swath cipher --shift -3 secret.txt plain.txt    back again
  swath cipher --alphabet --shift 13 a.txt b.txt  ROT13 of letters (and digits by 3)
  swath cipher --shift 1 --in-place big.img       in place; if interrupted, run it again"
)]
pub struct CipherArgs {
    /// Added to every byte, modulo 256 (-255 to 255); a negative shift decrypts.
    #[arg(
        long,
        allow_negative_numbers = true,
        required_unless_present = "resume",
        value_parser = clap::value_parser!(i64).range(-255..=255)
    )]
    shift: Option<i64>,

    /// Rotate A-Z, a-z and 0-9 within their own ranges ('Z' + 1 = 'A', '9' + 1 = '0');
    /// other bytes are unchanged.
    #[arg(long)]
    alphabet: bool,

    /// How the file is read and written: stream (one thread, read then write), mmap (the
    /// file mapped, one thread), threads (workers with positional reads and writes), pool
    /// (the same with threads started once), uring (io_uring, one thread keeping requests
    /// in flight), mmap-threads (workers on maps), or auto (chosen from the file).
    #[arg(long, value_name = "STRATEGY", default_value = "auto", value_parser = parse_strategy)]
    strategy: CipherStrategy,

    /// Transform one byte at a time through a table instead of with vector instructions
    /// (to measure what they gain).
    #[arg(long)]
    scalar: bool,

    /// Requests in flight with `--strategy uring`.
    #[arg(long, value_name = "N", default_value_t = 8)]
    queue_depth: u32,

    /// Flush the output to disk before renaming it into place.
    #[arg(long)]
    sync: bool,

    /// Transform INPUT in its own blocks, with no second copy; a small journal beside it
    /// makes an interrupted run recoverable (rerun the command, or use --resume).
    #[arg(long, conflicts_with = "output")]
    in_place: bool,

    /// Finish an interrupted --in-place run on FILE, with the parameters it started with.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["input", "in_place", "shift"])]
    resume: Option<PathBuf>,

    /// The file to transform (`-` for standard input); required, except with --resume.
    #[arg(required_unless_present = "resume")]
    input: Option<PathBuf>,

    /// Where to write the result (`-` for standard output); required, except with
    /// --in-place or --resume.
    #[arg(required_unless_present_any = ["resume", "in_place"])]
    output: Option<PathBuf>,
    #[command(flatten)]
    workers: WorkerArgs,
}

/// Bytes per journaled block of an in-place run when `--block-size` is not given.
const IN_PLACE_BLOCK: usize = 16 << 20;

fn parse_strategy(s: &str) -> Result<CipherStrategy, swath_engine::plan::UnknownName> {
    s.parse()
}

/// Runs `swath cipher`.
pub fn run(args: CipherArgs) -> Result<()> {
    let clock = Stopwatch::start();
    if let Some(file) = &args.resume {
        say_how_to_resume(file)?;
        let r = transform_in_place(file, None)?;
        report_in_place(&args, &clock, &r);
        return Ok(());
    }
    let (Some(shift), Some(in_path)) = (args.shift, args.input.clone()) else {
        bail!("--shift and INPUT are required");
    };
    if args.in_place {
        let params = InPlaceParams {
            shift,
            alphabet: args.alphabet,
            block_size: args.workers.block_size.unwrap_or(IN_PLACE_BLOCK) as u64,
        };
        say_how_to_resume(&in_path)?;
        let len = std::fs::metadata(&in_path).ok().map(|m| m.len());
        let r = crate::progress::with_progress(len, "swath cipher", |done| {
            transform_in_place_counted(&in_path, Some(params), done)
        })?;
        report_in_place(&args, &clock, &r);
        return Ok(());
    }
    let out_path = args.output.clone().unwrap_or_default();
    let cipher = if args.alphabet {
        Cipher::alphabet(shift)
    } else {
        Cipher::bytes(shift)
    };
    let input = Input::open(&in_path)?;
    // A bar on a terminal for long runs, advanced by every block the strategy transforms.
    let report = crate::progress::with_progress(input.len(), "swath cipher", |counter| {
        let spec = TransformSpec {
            input: &input,
            cipher,
            scalar: args.scalar,
            engine: args.workers.options(),
            strategy: args.strategy,
            queue_depth: args.queue_depth,
            progress: Some(counter),
        };
        transform(&args, &spec, &input, &in_path, &out_path)
    })?;
    if let Some(note) = &report.fallback {
        eprintln!("swath cipher: {note}");
    }
    if args.workers.time {
        eprintln!("{}", clock.times());
        eprintln!("{}", describe(&args, &report));
    }
    Ok(())
}

/// Transforms the input of `spec` into `out_path` (a file written atomically, a device,
/// or `-` for standard output).
fn transform(
    args: &CipherArgs,
    spec: &TransformSpec<'_>,
    input: &Input,
    in_path: &Path,
    out_path: &Path,
) -> Result<TransformReport> {
    let report = if out_path.as_os_str() == "-" {
        let stdout = std::io::stdout();
        let mut lock = stdout.lock();
        // A write error on standard output is one line and status 2, as for every command.
        let written = transform_stream(spec, &mut lock, "standard output").and_then(|r| {
            lock.flush()
                .map_err(|e| swath_engine::EngineError::io("standard output", e))
                .map(|()| r)
        });
        let mut r = match written {
            Err(swath_engine::EngineError::Io { path, cause })
                if path.as_os_str() == "standard output" =>
            {
                eprintln!(
                    "swath cipher: write error: {}",
                    swath_engine::error::os_message(&cause)
                );
                return Err(crate::stdout::Reported(Status::Trouble).into());
            }
            other => other?,
        };
        if args.strategy != CipherStrategy::Stream && args.strategy != CipherStrategy::Auto {
            let note = format!(
                "the output is a stream: used the stream strategy instead of {}",
                args.strategy.name()
            );
            r.reason = note.clone();
            r.fallback = Some(note);
        }
        r
    } else {
        refuse_same_file(input, in_path, out_path)?;
        let out = AtomicOutput::create(out_path)?;
        if let Ok(meta) = input.file().metadata() {
            out.set_mode(meta.mode())?;
        }
        let name = out_path.to_string_lossy().into_owned();
        let r = if out.is_direct() {
            // A device or FIFO: neither sized nor written at offsets.
            transform_stream(spec, &mut out.file(), &name)?
        } else {
            transform_to_file(spec, out.file(), &name)?
        };
        out.commit(args.sync)?;
        r
    };
    Ok(report)
}

/// From here on, an interrupted in-place run on `file` says how to finish it.
fn say_how_to_resume(file: &Path) -> Result<()> {
    let name = file.to_string_lossy();
    crate::interrupt::on_interrupt_say(&format!(
        "swath cipher: interrupted: {name} is partly transformed; its journal keeps it safe. \
         Finish with: swath cipher --resume {}",
        crate::interrupt::shell_quote(&name)
    ))
}

fn report_in_place(args: &CipherArgs, clock: &Stopwatch, r: &InPlaceReport) {
    if args.workers.time {
        eprintln!("{}", clock.times());
        eprintln!(
            "plan: in place, journaled blocks of {} bytes, {} blocks, resumed at block {}{}, shift {}{}",
            r.params.block_size,
            r.blocks,
            r.resumed_at,
            if r.restored { " (a half-written block restored)" } else { "" },
            r.params.shift,
            if r.params.alphabet { " (alphabet)" } else { "" },
        );
    }
}

fn refuse_same_file(input: &Input, in_path: &Path, out_path: &Path) -> Result<()> {
    if let Ok(in_meta) = input.file().metadata() {
        if swath_engine::output::replaces_input(out_path, &in_meta) {
            bail!(
                "'{}' and '{}' are the same file (use --in-place to transform a file in place)",
                in_path.display(),
                out_path.display()
            );
        }
    }
    Ok(())
}

fn describe(args: &CipherArgs, r: &TransformReport) -> String {
    format!(
        "plan: strategy {} (requested {}{}), threads {}, block size {}, layout {}, kernel {}, queue depth {}, shift {}{}, sync {}, bytes {}",
        r.strategy.name(),
        args.strategy.name(),
        if r.reason.is_empty() {
            String::new()
        } else {
            format!(": {}", r.reason)
        },
        r.threads,
        r.block_size,
        r.layout.name(),
        if args.scalar { "scalar" } else { "simd" },
        args.queue_depth,
        args.shift.unwrap_or(0),
        if args.alphabet { " (alphabet)" } else { "" },
        if args.sync { "yes" } else { "no" },
        r.bytes
    )
}
