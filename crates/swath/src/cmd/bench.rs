//! `swath bench`: the seed articles' experiments (`cipher`: the cci family's Table 1 and
//! Figure 1; `write`: seed 004's parallel writes), with a table on stdout, the runs and
//! their figures with the machine as CSV, JSON and Markdown, an SVG chart, a line on
//! standard error as each configuration ends, and a progress bar on a terminal.
//!
//! Every file a benchmark makes (the generated input, the outputs) lives in a private
//! directory under `--dir` ([`crate::scratch`]), removed at the end, on an error and on
//! Ctrl-C, SIGTERM or SIGHUP; `--dir` itself goes too when the benchmark made it and it is
//! left empty. On such a signal the runs measured so far are still printed and saved, their
//! title saying how many of the runs planned they are, and swath exits with 128 + the
//! signal's number.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use indicatif::ProgressBar;
use swath_ops::transform::CipherStrategy;

use crate::bench::{
    self,
    cipher::{CipherBench, Preset},
    export::Report,
    machine::Machine,
    write::WriteBench,
    Run,
};
use crate::scratch::{self, Scratch};
use crate::size::parse_size;

/// Which experiment.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Every cipher strategy x block size x thread count on one file, beside tr, dd and cp.
    /// By default a short table (under a minute on 2 cores); --full for the whole one.
    #[command(after_help = "Examples:
  swath bench cipher                             under a minute, then open bench-results/cipher.svg
  swath bench cipher --full                      the full table: 279 runs, about 20 minutes
  swath bench cipher --strategies stream,pool --block-sizes 64K,1M --threads 1,2
  swath bench cipher --dry-run --full            list what would be measured")]
    Cipher(CipherBenchArgs),
    /// T threads writing their ranges of one 256 MiB file, threads per run vs pre-spawned.
    #[command(after_help = "Examples:
  swath bench write                then open bench-results/write.svg (10 runs a configuration)
  swath bench write --runs 100     the article's 100 runs a configuration (about 6 minutes)")]
    Write(WriteBenchArgs),
}

/// Arguments of `swath bench cipher`.
#[derive(Args, Debug)]
pub struct CipherBenchArgs {
    /// The file to transform (default: --size bytes of generated text, made in a private
    /// directory under --dir and removed at the end).
    #[arg(long)]
    input: Option<PathBuf>,
    /// Bytes of generated text to transform when no --input is given (suffixes accepted)
    /// [default: 64M; with --full: 640000000].
    #[arg(long, value_parser = size_arg, conflicts_with = "input")]
    size: Option<u64>,
    /// Directory under which the files the benchmark makes are kept while it runs (in a
    /// private directory, removed at the end or on Ctrl-C).
    #[arg(long, default_value = "bench-data")]
    dir: PathBuf,
    /// Where the CSV, JSON and Markdown results and the SVG chart go.
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
    /// Timed runs per configuration.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Measure the full table: block sizes 512,4K,16K,64K,256K,1M, threads 1,2,4,8 and
    /// 640000000 bytes (279 runs: about 20 minutes on 2 cores). Options given beside it
    /// still apply.
    #[arg(long)]
    full: bool,
    /// Strategies, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "stream,mmap,threads,pool,uring,mmap-threads", value_parser = parse_strategy)]
    strategies: Vec<CipherStrategy>,
    /// Block sizes, comma-separated (suffixes accepted) [default: 512,16K,1M; with --full:
    /// 512,4K,16K,64K,256K,1M].
    #[arg(long, value_delimiter = ',', value_parser = size_arg)]
    block_sizes: Option<Vec<u64>>,
    /// Thread counts, comma-separated [default: 1,2; with --full: 1,2,4,8].
    #[arg(long, value_delimiter = ',')]
    threads: Option<Vec<usize>>,
    /// Skip tr, dd and cp.
    #[arg(long)]
    no_peers: bool,
    /// Only list the configurations that would be measured, the runs and the file's size.
    #[arg(long)]
    dry_run: bool,
}

/// Arguments of `swath bench write`.
#[derive(Args, Debug)]
pub struct WriteBenchArgs {
    /// Directory under which the written file is kept while it runs (in a private directory,
    /// removed at the end or on Ctrl-C).
    #[arg(long, default_value = "bench-data")]
    dir: PathBuf,
    /// Where the CSV, JSON and Markdown results and the SVG chart go.
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
    /// Timed runs per configuration: 10 take under a minute on 2 cores; the article's 100
    /// (--runs 100) about 6 minutes.
    #[arg(long, default_value_t = 10)]
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
        Ok(0) => Err(format!("invalid size '{s}': it must be at least 1 byte")),
        Err(_) => Err(crate::size::invalid_size(s)),
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
        BenchCommand::Cipher(a) => cipher(a),
        BenchCommand::Write(a) => {
            if a.runs == 0 || a.threads.contains(&0) {
                bail!("--runs and --threads must be at least 1");
            }
            let mut b = WriteBench {
                path: PathBuf::new(),
                bytes: a.size,
                blocks: a.block_sizes,
                threads: a.threads,
                runs: a.runs,
            };
            let title = format!("writing {} bytes in T ranges: time by block size", a.size);
            let total = bench::write::total_runs(&b);
            let (session, scratch) = Session::start("write", title, &a.dir, a.out, total, b.runs)?;
            b.path = scratch.file("bench-write.out");
            session.say(&format!(
                "{} configurations x {} runs, writing {} bytes each",
                total / b.runs as u64,
                b.runs,
                b.bytes
            ));
            let result = bench::write::run(&b, |r| session.record(r));
            session.end(scratch, result)
        }
    }
}

fn cipher(a: CipherBenchArgs) -> Result<()> {
    let preset = if a.full { Preset::Full } else { Preset::Quick };
    let threads = a.threads.unwrap_or_else(|| preset.threads());
    if a.runs == 0 || threads.contains(&0) {
        bail!("--runs and --threads must be at least 1");
    }
    let mut b = CipherBench {
        input: PathBuf::new(),
        scratch: PathBuf::new(),
        strategies: a.strategies,
        blocks: a.block_sizes.unwrap_or_else(|| preset.blocks()),
        threads,
        runs: a.runs,
        peers: !a.no_peers,
    };
    let (bytes, what) = match &a.input {
        Some(p) => {
            let m =
                std::fs::metadata(p).with_context(|| format!("{}: cannot read it", p.display()))?;
            (m.len(), p.display().to_string())
        }
        None => {
            let size = a.size.unwrap_or(preset.size());
            (size, "generated text".to_string())
        }
    };
    let configurations = bench::cipher::configurations(&b);
    let plan = format!(
        "{} configurations x {} runs ({} runs) on {bytes} bytes of {what}",
        configurations.len(),
        b.runs,
        bench::cipher::total_runs(&b)
    );
    if a.dry_run {
        let mut text = format!("swath bench cipher would measure {plan}:\n");
        text.push_str(&format!(
            "{:<22} {:>10} {:>7}\n",
            "series", "block", "threads"
        ));
        for (series, block, threads) in &configurations {
            let block = if *block == 0 {
                "-".to_string()
            } else {
                block.to_string()
            };
            text.push_str(&format!("{series:<22} {block:>10} {threads:>7}\n"));
        }
        crate::stdout::print_all("swath bench", text.as_bytes())?;
        return Ok(());
    }
    let title = format!("cipher --shift 3 of {bytes} bytes: time by block size");
    let total = bench::cipher::total_runs(&b);
    let (session, scratch) = Session::start("cipher", title, &a.dir, a.out, total, b.runs)?;
    b.scratch = scratch.path().to_path_buf();
    let result = generate_and_measure(&mut b, a.input, bytes, &plan, &session);
    session.end(scratch, result)
}

/// Generates the input in `b.scratch` unless one is given, then measures.
fn generate_and_measure(
    b: &mut CipherBench,
    input: Option<PathBuf>,
    bytes: u64,
    plan: &str,
    session: &Session,
) -> Result<()> {
    b.input = match input {
        Some(p) => p,
        None => {
            let p = b.scratch.join("cipher-input");
            session.say(&format!("generating {bytes} bytes of text"));
            swath_gen::text(&p, bytes, 1)
                .with_context(|| format!("{}: cannot generate the input", p.display()))?;
            p
        }
    };
    session.say(&format!("measuring {plan}"));
    bench::cipher::run(b, |r| session.record(r))
}

/// The pause point reached as each configuration ends (`swath_engine::pause`), for tests
/// that interrupt a benchmark part way.
const CONFIGURATION_DONE: &str = "bench-configuration-done";

/// A benchmark under way: the runs measured so far, shared with the thread that answers
/// Ctrl-C, and what both need to report them.
struct Session {
    /// `cipher` or `write`: the files' names and the messages' prefix.
    name: &'static str,
    title: String,
    /// Where the results go.
    out: PathBuf,
    /// `--dir`, and whether this run made it (then it is removed once empty).
    dir: PathBuf,
    made_dir: bool,
    machine: Machine,
    /// Runs planned, and runs per configuration.
    total: u64,
    per_configuration: usize,
    bar: ProgressBar,
    /// The runs so far; `None` once they are reported (by the end or by a signal).
    runs: Mutex<Option<Vec<Run>>>,
}

impl Session {
    /// Makes `dir` if missing, reads the machine, and makes the private scratch directory
    /// (from here on, Ctrl-C removes it and reports the runs so far).
    fn start(
        name: &'static str,
        title: String,
        dir: &Path,
        out: PathBuf,
        total: u64,
        per_configuration: usize,
    ) -> Result<(Arc<Session>, Scratch)> {
        let made_dir = !dir.exists();
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot make the directory", dir.display()))?;
        let session = Arc::new(Session {
            name,
            title,
            out,
            dir: dir.to_path_buf(),
            made_dir,
            machine: Machine::detect(dir),
            total,
            per_configuration,
            bar: crate::progress::runs_bar(total, &format!("swath bench {name}")),
            runs: Mutex::new(Some(Vec::new())),
        });
        let on_signal = Arc::clone(&session);
        let scratch = Scratch::new(dir, &format!("swath-bench-{name}."), move |_| {
            on_signal.interrupted()
        });
        let scratch = match scratch {
            Ok(s) => s,
            Err(e) => {
                session.remove_dir();
                return Err(e);
            }
        };
        Ok((session, scratch))
    }

    /// A line on standard error, prefixed with the command.
    fn say(&self, what: &str) {
        crate::progress::say(&self.bar, &format!("swath bench {}: {what}", self.name));
    }

    /// Keeps a run; when it ends its configuration, says the configuration's median.
    fn record(&self, run: Run) {
        if scratch::interrupted() {
            // A run that ends after the signal is not one of the runs so far.
            return;
        }
        self.bar.inc(1);
        let line = {
            let mut guard = self.runs.lock().unwrap_or_else(|p| p.into_inner());
            let Some(runs) = guard.as_mut() else {
                return;
            };
            let ends = run.run + 1 == self.per_configuration;
            runs.push(run);
            ends.then(|| {
                let done = runs.len() / self.per_configuration;
                let last = bench::summarize(&runs[runs.len() - self.per_configuration..]);
                format!(
                    "{done}/{} {}",
                    self.total as usize / self.per_configuration,
                    bench::describe(&last[0])
                )
            })
        };
        if let Some(line) = line {
            self.say(&line);
            swath_engine::pause::at(CONFIGURATION_DONE);
        }
    }

    /// The runs, taken to be reported (`None` when already taken).
    fn take(&self) -> Option<Vec<Run>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Removes `--dir` when this run made it and it is empty.
    fn remove_dir(&self) {
        if self.made_dir {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }

    /// The end of the measurements: removes the scratch directory, then reports the runs
    /// (or the error). When a signal stopped the work, its thread reports instead.
    fn end(&self, scratch: Scratch, result: Result<()>) -> Result<()> {
        if scratch::interrupted() {
            scratch::wait_for_the_end();
        }
        self.bar.finish_and_clear();
        let removed = scratch.remove();
        self.remove_dir();
        if let Err(e) = result {
            // The runs measured before the error are kept, titled as such.
            if let Some(runs) = self.take().filter(|r| !r.is_empty()) {
                let title = format!(
                    "{} (ended by an error after {} of {} runs)",
                    self.title,
                    runs.len(),
                    self.total
                );
                let _ = self.report(&title, &runs);
            }
            return Err(e);
        }
        removed?;
        match self.take() {
            Some(runs) => self.report(&self.title, &runs),
            None => scratch::wait_for_the_end(),
        }
    }

    /// On a signal, after the scratch directory is removed: reports the runs so far.
    fn interrupted(&self) {
        self.bar.finish_and_clear();
        self.remove_dir();
        let Some(runs) = self.take() else {
            return;
        };
        if runs.is_empty() {
            self.say("interrupted before any run ended: nothing saved");
            return;
        }
        let title = format!(
            "{} (interrupted after {} of {} runs)",
            self.title,
            runs.len(),
            self.total
        );
        match self.report(&title, &runs) {
            Ok(()) => self.say(&format!(
                "interrupted: the {} runs so far are saved in {}",
                runs.len(),
                self.out.display()
            )),
            Err(e) => self.say(&format!("interrupted, and the runs so far are lost: {e:#}")),
        }
    }

    /// Saves the exports and the chart, then prints the table and the machine (saved
    /// first: a standard output that is gone, a pipe's reader killed by the same Ctrl-C,
    /// loses no run).
    fn report(&self, title: &str, runs: &[Run]) -> Result<()> {
        let summaries = bench::summarize(runs);
        let table = format!(
            "{title}\non: {}\n{}",
            self.machine.describe(),
            bench::table(&summaries)
        );
        let command = format!("bench {}", self.name);
        let report = Report {
            command: &command,
            title,
            machine: &self.machine,
            runs,
        };
        let written = bench::export::save(&self.out, self.name, &report)?;
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        let saved = format!("saved: {}\n", names.join(", "));
        crate::stdout::print_all("swath bench", format!("{table}{saved}").as_bytes())?;
        Ok(())
    }
}
