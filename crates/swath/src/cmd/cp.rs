//! `swath cp SRC DST`: a fast copy with the same output safety as every swath output (a
//! temporary file renamed into place, removed on error or interruption), keeping the source's
//! permission bits. DST may be a directory, as with cp.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use swath_engine::{AtomicOutput, Input};
use swath_ops::copy::copy_file_counted;

use crate::engine_args::{Stopwatch, WorkerArgs};

/// Arguments of `swath cp`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  swath cp big.img /backup/          shares the blocks (reflink) when the filesystem can
  swath cp --sync big.img copy.img   flushed to disk before it appears")]
pub struct CpArgs {
    /// Flush the copy to disk before renaming it into place.
    #[arg(long)]
    sync: bool,

    /// The file to copy.
    source: PathBuf,

    /// The copy, or a directory to copy into.
    dest: PathBuf,

    #[command(flatten)]
    workers: WorkerArgs,
}

/// Runs `swath cp`.
pub fn run(args: CpArgs) -> Result<()> {
    let clock = Stopwatch::start();
    let input = Input::open(&args.source)?;
    let meta = input.file().metadata()?;
    if meta.is_dir() {
        bail!("{}: is a directory", args.source.display());
    }
    let mut dest = args.dest.clone();
    if dest.is_dir() {
        if let Some(name) = args.source.file_name() {
            dest = dest.join(name);
        }
    }
    if swath_engine::output::replaces_input(&dest, &meta) {
        bail!(
            "'{}' and '{}' are the same file",
            args.source.display(),
            dest.display()
        );
    }
    let out = AtomicOutput::create(&dest)?;
    out.set_mode(meta.mode())?;
    let threads = args.workers.threads.unwrap_or_default().workers();
    let name = dest.to_string_lossy();
    let method = if out.is_direct() || input.kind() != swath_engine::InputKind::Regular {
        swath_ops::copy::copy_stream(&input, out.file(), &name)?
    } else {
        crate::progress::with_progress(input.len(), "swath cp", |done| {
            copy_file_counted(&input, out.file(), &name, threads, done)
        })?
    };
    out.commit(args.sync)?;
    if args.workers.time {
        eprintln!("{}", clock.times());
        eprintln!(
            "plan: method {}, threads {threads}, bytes {}",
            method.name(),
            meta.len()
        );
    }
    Ok(())
}
