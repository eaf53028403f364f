//! The options every engine-backed subcommand shares, defined once and flattened into each.

use std::time::Instant;

use clap::Args;
use swath_engine::plan::{OptionError, UnknownName};
use swath_engine::{EngineOptions, Layout, Plan, RunStats, Strategy, Threads};

/// `--threads`, `--block-size`, `--strategy`, `--layout` and `--time`, for commands that
/// read through the engine.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Engine options")]
pub struct EngineArgs {
    #[command(flatten)]
    pub workers: WorkerArgs,

    /// How bytes are read: auto, read (one thread, sequential reads), pread (positional
    /// reads into per-worker buffers), mmap (read-only maps).
    #[arg(long, value_name = "STRATEGY", default_value = "auto", value_parser = parse_strategy)]
    pub strategy: Strategy,
}

/// `--threads`, `--block-size`, `--layout` and `--time`: shared by every command that runs
/// workers, whatever its own `--strategy` choices are.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Engine options")]
pub struct WorkerArgs {
    /// Worker threads (default: one per core). 0 or a negative number: one thread reading
    /// the file from start to end with plain reads.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_threads)]
    pub threads: Option<Threads>,

    /// Bytes per block handed to a worker (suffixes as in 64K, 1MiB). Default: 256 KiB.
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = parse_block_size,
        allow_hyphen_values = true
    )]
    pub block_size: Option<usize>,

    /// How blocks are handed to workers: dynamic (next free block), stripes (worker t of T
    /// takes blocks t, t+T, ...) or ranges (worker t takes the t-th contiguous range, through
    /// its own descriptor).
    #[arg(long, value_name = "LAYOUT", default_value = "dynamic", value_parser = parse_layout)]
    pub layout: Layout,

    /// Print elapsed, user and system seconds and the plan (strategy, threads, block size)
    /// to standard error.
    #[arg(long)]
    pub time: bool,
}

fn parse_threads(s: &str) -> Result<Threads, OptionError> {
    swath_engine::plan::parse_threads(s)
}

fn parse_block_size(s: &str) -> Result<usize, OptionError> {
    swath_engine::plan::parse_block_size(s)
}

fn parse_strategy(s: &str) -> Result<Strategy, UnknownName> {
    s.parse()
}

fn parse_layout(s: &str) -> Result<Layout, UnknownName> {
    s.parse()
}

impl EngineArgs {
    /// The engine's view of these options.
    pub fn options(&self) -> EngineOptions {
        EngineOptions {
            strategy: self.strategy,
            ..self.workers.options()
        }
    }
}

impl WorkerArgs {
    /// The engine's view of these options (with the `auto` read strategy).
    pub fn options(&self) -> EngineOptions {
        EngineOptions {
            threads: self.threads.unwrap_or_default(),
            block_size: self.block_size,
            strategy: Strategy::Auto,
            layout: self.layout,
        }
    }
}

/// Measures a command for `--time`.
#[derive(Debug)]
pub struct Stopwatch {
    start: Instant,
}

impl Stopwatch {
    /// Starts measuring.
    pub fn start() -> Self {
        Stopwatch {
            start: Instant::now(),
        }
    }

    /// Time since the start.
    pub fn elapsed(&self) -> std::time::Duration {
        self.start.elapsed()
    }

    /// The first line of a `--time` report: elapsed, user and system seconds.
    pub fn times(&self) -> String {
        let elapsed = self.start.elapsed().as_secs_f64();
        let (user, sys) = cpu_times();
        format!("time: elapsed {elapsed:.3} s, user {user:.3} s, system {sys:.3} s")
    }

    /// The `--time` report: elapsed, user and system time, and what the engine did.
    pub fn report(&self, requested: Strategy, plan: &Plan, stats: Option<&RunStats>) -> String {
        let mut s = format!(
            "{}\n\
             plan: strategy {} (requested {requested}: {}), threads {}, block size {}, layout {}",
            self.times(),
            plan.method.name(),
            plan.reason,
            plan.threads,
            plan.block_size,
            plan.layout.name(),
        );
        if let Some(st) = stats {
            s.push_str(&format!(
                ", blocks {}, bytes {}{}",
                st.blocks,
                st.extent.len,
                if st.stopped_early {
                    ", stopped early"
                } else {
                    ""
                }
            ));
        }
        s.push('\n');
        s
    }
}

fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct we pass; no other preconditions.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}
