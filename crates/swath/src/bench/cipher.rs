//! The seed's cci experiment: every strategy x block size x thread count transforming one
//! file, beside `tr`, `dd` and `cp` doing the equivalent work (Table 1 and Figure 1).
//!
//! [`Preset::Full`] is the seed's whole table (279 runs over a 640,000,000-byte file: about
//! 20 minutes on 2 cores, where a run writes 640 MB); [`Preset::Quick`], the default, keeps
//! every strategy and the peers but measures three block sizes spanning the range (512 B,
//! 16 KiB, 1 MiB), one and two threads, and 64 MiB, so that it ends in under a minute (14 s
//! on 2 busy cores).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use swath_engine::{EngineOptions, Input, Layout};
use swath_kernels::transform::Cipher;
use swath_ops::compare::{first_differences, CompareSpec, Lines};
use swath_ops::transform::{transform_to_file, CipherStrategy, TransformSpec};

use super::Run;

/// What to measure.
#[derive(Debug, Clone)]
pub struct CipherBench {
    /// The file transformed.
    pub input: PathBuf,
    /// Directory for the outputs (each removed after its run).
    pub scratch: PathBuf,
    /// Strategies (never `Auto`).
    pub strategies: Vec<CipherStrategy>,
    /// Block sizes.
    pub blocks: Vec<u64>,
    /// Thread counts (single-threaded strategies run once per block size).
    pub threads: Vec<usize>,
    /// Runs per configuration.
    pub runs: usize,
    /// Time `tr`, `dd` and `cp` too.
    pub peers: bool,
}

/// Which set of configurations `swath bench cipher` measures unless told otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// The default: under a minute on 2 cores.
    Quick,
    /// The seed's whole table (`--full`).
    Full,
}

impl Preset {
    /// Bytes of generated text transformed.
    pub fn size(self) -> u64 {
        match self {
            Preset::Quick => 64 << 20,
            Preset::Full => swath_gen::DEFAULT_TEXT_SIZE,
        }
    }

    /// Block sizes.
    pub fn blocks(self) -> Vec<u64> {
        match self {
            Preset::Quick => vec![512, 16 << 10, 1 << 20],
            Preset::Full => vec![512, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20],
        }
    }

    /// Thread counts.
    pub fn threads(self) -> Vec<usize> {
        match self {
            Preset::Quick => vec![1, 2],
            Preset::Full => vec![1, 2, 4, 8],
        }
    }
}

const SHIFT: i64 = 3;

fn single_threaded(s: CipherStrategy) -> bool {
    matches!(
        s,
        CipherStrategy::Stream | CipherStrategy::Mmap | CipherStrategy::Uring
    )
}

/// The thread counts strategy `s` is measured with.
fn thread_counts(b: &CipherBench, s: CipherStrategy) -> Vec<usize> {
    if single_threaded(s) {
        vec![1]
    } else {
        b.threads.clone()
    }
}

/// The peer tools, by series name: `tr` doing the same shift, `dd` and `cp` copying.
const PEERS: [&str; 3] = ["tr", "dd bs=4M (copy)", "cp (copy)"];

/// Every configuration (series, block size, threads) in the order [`run`] measures them.
pub fn configurations(b: &CipherBench) -> Vec<(String, u64, usize)> {
    let mut all = Vec::new();
    for &s in &b.strategies {
        for &block in &b.blocks {
            for threads in thread_counts(b, s) {
                all.push((s.name().to_string(), block, threads));
            }
        }
    }
    if b.peers {
        all.extend(PEERS.iter().map(|p| (p.to_string(), 0, 1)));
    }
    all
}

/// Runs per call of [`run`], for a progress bar.
pub fn total_runs(b: &CipherBench) -> u64 {
    (configurations(b).len() * b.runs) as u64
}

fn transform_once(
    b: &CipherBench,
    out: &PathBuf,
    s: CipherStrategy,
    block: u64,
    threads: usize,
) -> Result<f64> {
    let _ = std::fs::remove_file(out);
    let start = Instant::now();
    let input = Input::open(&b.input)?;
    // Read and write: the mapped strategies need both on the output's descriptor.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(out)
        .with_context(|| format!("creating {}", out.display()))?;
    let spec = TransformSpec {
        input: &input,
        cipher: Cipher::bytes(SHIFT),
        scalar: false,
        engine: EngineOptions {
            threads: swath_engine::Threads::Count(threads),
            block_size: Some(block as usize),
            layout: Layout::Stripes,
            ..Default::default()
        },
        strategy: s,
        queue_depth: 8,
        progress: None,
    };
    transform_to_file(&spec, &file, &out.to_string_lossy())?;
    drop(file);
    Ok(start.elapsed().as_secs_f64())
}

fn same_bytes(a: &Path, b: &Path) -> Result<bool> {
    let (ia, ib) = (Input::open(a)?, Input::open(b)?);
    let spec = CompareSpec {
        inputs: [&ia, &ib],
        skip: [0, 0],
        limit: None,
        progress: None,
    };
    let r = first_differences(&spec, 1, Lines::None, &EngineOptions::default())?;
    Ok(r.diffs.is_empty() && r.extent.ended == vec![true, true])
}

/// Runs a peer tool on `input` (its standard input too, for `tr`), writing `out` (its
/// standard output, for `tr`), and gives the seconds it took. The tool is recorded as the
/// command being timed, for Ctrl-C to stop ([`crate::scratch`]).
fn time_peer(name: &str, input: &Path, out: &Path) -> Result<f64> {
    let _ = std::fs::remove_file(out);
    let mut c = match name {
        "tr" => {
            let mut c = Command::new("tr");
            c.args([r"\000-\377", r"\003-\377\000-\002"])
                .stdin(File::open(input).with_context(|| input.display().to_string())?)
                .stdout(
                    File::create(out)
                        .with_context(|| format!("{}: cannot create", out.display()))?,
                );
            c
        }
        "dd bs=4M (copy)" => {
            let mut c = Command::new("dd");
            c.arg(format!("if={}", input.display()))
                .arg(format!("of={}", out.display()))
                .args(["bs=4M", "status=none"])
                .stdin(Stdio::null());
            c
        }
        _ => {
            let mut c = Command::new("cp");
            c.arg("--").arg(input).arg(out).stdin(Stdio::null());
            c
        }
    };
    let program = c.get_program().to_string_lossy().into_owned();
    let start = Instant::now();
    let child = c
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("{program}: cannot run it"))?;
    crate::scratch::set_child(child.id());
    let done = child.wait_with_output();
    let seconds = start.elapsed().as_secs_f64();
    crate::scratch::set_child(0);
    let done = done.with_context(|| format!("{program}: lost while running"))?;
    if !done.status.success() {
        let why = String::from_utf8_lossy(&done.stderr);
        bail!(
            "{program} failed writing {} ({}): {}",
            out.display(),
            done.status,
            why.trim()
        );
    }
    Ok(seconds)
}

/// Runs every configuration, in the order of [`configurations`], handing each run to
/// `record` as it ends. Before timing a strategy, its output is checked equal to the
/// reference (`stream` at the largest block size).
pub fn run(b: &CipherBench, mut record: impl FnMut(Run)) -> Result<()> {
    std::fs::create_dir_all(&b.scratch)
        .with_context(|| format!("{}: cannot make it", b.scratch.display()))?;
    let out = b.scratch.join("bench-cipher.out");
    let reference = b.scratch.join("bench-cipher.reference");
    let biggest = b.blocks.iter().copied().max().unwrap_or(1 << 20);
    transform_once(b, &reference, CipherStrategy::Stream, biggest, 1)?;
    for &s in &b.strategies {
        let thread_counts = thread_counts(b, s);
        transform_once(b, &out, s, b.blocks[0], thread_counts[0])?;
        if !same_bytes(&out, &reference)? {
            bail!("strategy {} gave a different output", s.name());
        }
        for &block in &b.blocks {
            for &threads in &thread_counts {
                for r in 0..b.runs {
                    let seconds = transform_once(b, &out, s, block, threads)?;
                    record(Run {
                        series: s.name().to_string(),
                        block_size: block,
                        threads,
                        run: r,
                        seconds,
                    });
                }
            }
        }
    }
    if b.peers {
        time_peer(PEERS[0], &b.input, &out)?;
        if !same_bytes(&out, &reference)? {
            bail!("tr gave a different output than swath");
        }
        for name in PEERS {
            for r in 0..b.runs {
                let seconds = time_peer(name, &b.input, &out)?;
                record(Run {
                    series: name.to_string(),
                    block_size: 0,
                    threads: 1,
                    run: r,
                    seconds,
                });
            }
        }
    }
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&reference);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_bench_runs_every_configuration_and_checks_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in");
        std::fs::write(&input, (0..200_000u32).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
        let b = CipherBench {
            input,
            scratch: dir.path().join("scratch"),
            strategies: CipherStrategy::ALL
                .iter()
                .copied()
                .filter(|&s| s != CipherStrategy::Auto)
                .collect(),
            blocks: vec![4096, 65536],
            threads: vec![1, 2],
            runs: 2,
            peers: true,
        };
        let mut runs = Vec::new();
        run(&b, |r| runs.push(r)).unwrap();
        assert_eq!(runs.len() as u64, total_runs(&b));
        // In the order the configurations are listed, each one's runs together.
        let order: Vec<(String, u64, usize)> = runs
            .chunks(b.runs)
            .map(|c| (c[0].series.clone(), c[0].block_size, c[0].threads))
            .collect();
        assert_eq!(order, configurations(&b));
        assert!(runs.iter().any(|r| r.series == "tr"));
        let svg = super::super::chart::chart("t", "machine", &runs);
        assert!(svg.starts_with("<svg") && svg.contains("mmap-threads x2"));
        assert_eq!(svg.matches("class=\"run\"").count(), runs.len());
    }
}
