//! `swath bench`: the seed articles' experiments (`cipher`: the cci family's Table 1 and
//! Figure 1; `write`: seed 004's parallel writes), with a table on stdout, the runs and
//! their figures with the machine as CSV, JSON and Markdown, an SVG chart, and a progress
//! bar on a terminal.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use swath_ops::transform::CipherStrategy;

use crate::bench::{
    self, cipher::CipherBench, export::Report, machine::Machine, write::WriteBench,
};
use crate::size::parse_size;

/// Which experiment.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Every cipher strategy x block size x thread count on one file, beside tr, dd and cp.
    #[command(after_help = "Examples:
  swath bench cipher --strategies stream,pool --block-sizes 64K,1M --threads 1,2
  swath bench cipher --runs 5 --out results      then open results/cipher.svg")]
    Cipher(CipherBenchArgs),
    /// T threads writing their ranges of one 256 MiB file, threads per run vs pre-spawned.
    #[command(after_help = "Example:
  swath bench write --runs 20      then open bench-results/write.svg")]
    Write(WriteBenchArgs),
}

/// Arguments of `swath bench cipher`.
#[derive(Args, Debug)]
pub struct CipherBenchArgs {
    /// The file to transform (default: DIR/cipher-input, 640,000,000 bytes of generated text,
    /// generated if missing).
    #[arg(long)]
    input: Option<PathBuf>,
    /// Scratch directory for generated input and outputs.
    #[arg(long, default_value = "bench-data")]
    dir: PathBuf,
    /// Where the CSV, JSON and Markdown results and the SVG chart go.
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
    /// Timed runs per configuration.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Strategies, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "stream,mmap,threads,pool,uring,mmap-threads", value_parser = parse_strategy)]
    strategies: Vec<CipherStrategy>,
    /// Block sizes, comma-separated (suffixes accepted).
    #[arg(long, value_delimiter = ',', default_value = "512,4K,16K,64K,256K,1M", value_parser = size_arg)]
    block_sizes: Vec<u64>,
    /// Thread counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    threads: Vec<usize>,
    /// Skip tr, dd and cp.
    #[arg(long)]
    no_peers: bool,
}

/// Arguments of `swath bench write`.
#[derive(Args, Debug)]
pub struct WriteBenchArgs {
    /// Directory for the written file.
    #[arg(long, default_value = "bench-data")]
    dir: PathBuf,
    /// Where the CSV, JSON and Markdown results and the SVG chart go.
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
    /// Timed runs per configuration (the article used 100).
    #[arg(long, default_value_t = 100)]
    runs: usize,
    /// Block sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "4K,64K,256K", value_parser = size_arg)]
    block_sizes: Vec<u64>,
    /// Thread counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16")]
    threads: Vec<usize>,
    /// Bytes written per run.
    #[arg(
        long,
        default_value_t = bench::write::FILE_BYTES,
        value_parser = size_arg,
        allow_hyphen_values = true
    )]
    size: u64,
}

fn size_arg(s: &str) -> Result<u64, String> {
    match parse_size(s) {
        Ok(0) | Err(_) => Err(format!("invalid size '{s}'")),
        Ok(n) => Ok(n),
    }
}

fn parse_strategy(s: &str) -> Result<CipherStrategy, String> {
    match s.parse::<CipherStrategy>().map_err(|e| e.to_string())? {
        CipherStrategy::Auto => Err("bench the concrete strategies, not auto".into()),
        st => Ok(st),
    }
}

/// Runs `swath bench`.
pub fn run(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Cipher(a) => {
            if a.runs == 0 || a.threads.contains(&0) {
                bail!("--runs and --threads must be at least 1");
            }
            std::fs::create_dir_all(&a.dir)?;
            let input = match a.input {
                Some(p) => p,
                None => {
                    let p = a.dir.join("cipher-input");
                    let size = swath_gen::DEFAULT_TEXT_SIZE;
                    if std::fs::metadata(&p).map(|m| m.len()).ok() != Some(size) {
                        eprintln!("swath bench: generating {} ({size} bytes)", p.display());
                        swath_gen::text(&p, size, 1)?;
                    }
                    p
                }
            };
            let b = CipherBench {
                input: input.clone(),
                scratch: a.dir.clone(),
                strategies: a.strategies,
                blocks: a.block_sizes,
                threads: a.threads,
                runs: a.runs,
                peers: !a.no_peers,
            };
            let bar =
                crate::progress::runs_bar(bench::cipher::total_runs(&b), "swath bench cipher");
            let runs = bench::cipher::run(&b, || bar.inc(1))?;
            bar.finish_and_clear();
            let bytes = std::fs::metadata(&input)?.len();
            let title = format!("cipher --shift 3 of {bytes} bytes: time by block size");
            finish(&a.out, &a.dir, "cipher", &title, &runs)
        }
        BenchCommand::Write(a) => {
            if a.runs == 0 || a.threads.contains(&0) {
                bail!("--runs and --threads must be at least 1");
            }
            std::fs::create_dir_all(&a.dir)?;
            let b = WriteBench {
                path: a.dir.join("bench-write.out"),
                bytes: a.size,
                blocks: a.block_sizes,
                threads: a.threads,
                runs: a.runs,
            };
            let bar = crate::progress::runs_bar(bench::write::total_runs(&b), "swath bench write");
            let runs = bench::write::run(&b, || bar.inc(1))?;
            bar.finish_and_clear();
            let title = format!("writing {} bytes in T ranges: time by block size", a.size);
            finish(&a.out, &a.dir, "write", &title, &runs)
        }
    }
}

/// Prints the table and the machine, then saves the exports and the chart into `out`.
fn finish(out: &Path, data_dir: &Path, name: &str, title: &str, runs: &[bench::Run]) -> Result<()> {
    let machine = Machine::detect(data_dir);
    let summaries = bench::summarize(runs);
    let table = format!(
        "{title}\non: {}\n{}",
        machine.describe(),
        bench::table(&summaries)
    );
    crate::stdout::print_all("swath bench", table.as_bytes())?;
    let command = format!("bench {name}");
    let report = Report {
        command: &command,
        title,
        machine: &machine,
        runs,
    };
    let written = bench::export::save(out, name, &report)?;
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    let saved = format!("saved: {}\n", names.join(", "));
    crate::stdout::print_all("swath bench", saved.as_bytes())?;
    Ok(())
}
