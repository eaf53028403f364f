//! `swath cipher`: the seeds' Caesar-cipher file transformation, by every cci strategy, with
//! output that is either complete or absent.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args;
use swath_engine::{AtomicOutput, Input};
use swath_kernels::transform::Cipher;
use swath_ops::transform::{
    transform_stream, transform_to_file, CipherStrategy, TransformReport, TransformSpec,
};

use crate::engine_args::{Stopwatch, WorkerArgs};

/// Arguments of `swath cipher`.
#[derive(Args, Debug)]
pub struct CipherArgs {
    /// Added to every byte, modulo 256 (-255 to 255); a negative shift decrypts.
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(-255..=255))]
    shift: i64,

    /// Rotate A-Z, a-z and 0-9 within their own ranges ('Z' + 1 = 'A', '9' + 1 = '0');
    /// other bytes are unchanged.
    #[arg(long)]
    alphabet: bool,

    /// stream (cci), mmap (cciMM), threads (cciMT), pool (cciMT_VTP), uring (cciOV/cciEX),
    /// mmap-threads (cciMTMM), or auto.
    #[arg(long, value_name = "STRATEGY", default_value = "auto", value_parser = parse_strategy)]
    strategy: CipherStrategy,

    /// Use the one-byte-at-a-time table kernel instead of vector code (the seeds' non-"Fast"
    /// variants), to show what the vector kernel gains.
    #[arg(long)]
    scalar: bool,

    /// Requests in flight with `--strategy uring`.
    #[arg(long, value_name = "N", default_value_t = 8)]
    queue_depth: u32,

    /// Flush the output to disk before renaming it into place.
    #[arg(long)]
    sync: bool,

    #[command(flatten)]
    workers: WorkerArgs,

    /// The file to transform (`-` for standard input).
    input: PathBuf,

    /// Where to write the result (`-` for standard output).
    output: PathBuf,
}

fn parse_strategy(s: &str) -> Result<CipherStrategy, String> {
    s.parse()
}

/// Runs `swath cipher`.
pub fn run(args: CipherArgs) -> Result<()> {
    let clock = Stopwatch::start();
    let cipher = if args.alphabet {
        Cipher::alphabet(args.shift)
    } else {
        Cipher::bytes(args.shift)
    };
    let input = Input::open(&args.input)?;
    let spec = TransformSpec {
        input: &input,
        cipher,
        scalar: args.scalar,
        engine: args.workers.options(),
        strategy: args.strategy,
        queue_depth: args.queue_depth,
    };
    let report = if args.output.as_os_str() == "-" {
        let stdout = std::io::stdout();
        let mut lock = stdout.lock();
        let mut r = transform_stream(&spec, &mut lock, "standard output")?;
        lock.flush()?;
        if args.strategy != CipherStrategy::Stream && args.strategy != CipherStrategy::Auto {
            r.reason = "output is a stream: fell back to stream".into();
        }
        r
    } else {
        refuse_same_file(&input, &args.input, &args.output)?;
        let out = AtomicOutput::create(&args.output)?;
        if let Ok(meta) = input.file().metadata() {
            out.set_mode(meta.mode())?;
        }
        let name = args.output.to_string_lossy().into_owned();
        let r = transform_to_file(&spec, out.file(), &name)?;
        out.commit(args.sync)?;
        r
    };
    if args.workers.time {
        eprintln!("{}", clock.times());
        eprintln!("{}", describe(&args, &report));
    }
    Ok(())
}

fn refuse_same_file(input: &Input, in_path: &Path, out_path: &Path) -> Result<()> {
    if let (Ok(out_meta), Ok(in_meta)) = (std::fs::metadata(out_path), input.file().metadata()) {
        if out_meta.dev() == in_meta.dev() && out_meta.ino() == in_meta.ino() {
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
        "plan: strategy {} (requested {}{}), threads {}, block size {}, layout {}, kernel {}, queue depth {}, shift {}{}, bytes {}",
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
        args.shift,
        if args.alphabet { " (alphabet)" } else { "" },
        r.bytes
    )
}
