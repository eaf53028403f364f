//! The seed's cci experiment: every strategy x block size x thread count transforming one
//! file, beside `tr`, `dd` and `cp` doing the equivalent work (Table 1 and Figure 1).

use std::path::{Path, PathBuf};
use std::process::Command;
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

const SHIFT: i64 = 3;

fn single_threaded(s: CipherStrategy) -> bool {
    matches!(
        s,
        CipherStrategy::Stream | CipherStrategy::Mmap | CipherStrategy::Uring
    )
}

/// Runs per call of [`run`], for a progress bar.
pub fn total_runs(b: &CipherBench) -> u64 {
    let per_block: usize = b
        .strategies
        .iter()
        .map(|&s| {
            if single_threaded(s) {
                1
            } else {
                b.threads.len()
            }
        })
        .sum();
    let peers = if b.peers { 3 } else { 0 };
    ((per_block * b.blocks.len() + peers) * b.runs) as u64
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

fn time_command(script: &str, cwd: &Path) -> Result<f64> {
    let start = Instant::now();
    let status = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .status()?;
    if !status.success() {
        bail!("'{script}' failed");
    }
    Ok(start.elapsed().as_secs_f64())
}

/// Runs every configuration, calling `tick` after each run. Before timing a strategy, its
/// output is checked equal to the reference (`stream` at the largest block size).
pub fn run(b: &CipherBench, mut tick: impl FnMut()) -> Result<Vec<Run>> {
    std::fs::create_dir_all(&b.scratch)?;
    let out = b.scratch.join("bench-cipher.out");
    let reference = b.scratch.join("bench-cipher.reference");
    let biggest = b.blocks.iter().copied().max().unwrap_or(1 << 20);
    transform_once(b, &reference, CipherStrategy::Stream, biggest, 1)?;
    let mut runs = Vec::new();
    for &s in &b.strategies {
        let thread_counts: Vec<usize> = if single_threaded(s) {
            vec![1]
        } else {
            b.threads.clone()
        };
        transform_once(b, &out, s, b.blocks[0], thread_counts[0])?;
        if !same_bytes(&out, &reference)? {
            bail!("strategy {} gave a different output", s.name());
        }
        for &block in &b.blocks {
            for &threads in &thread_counts {
                for r in 0..b.runs {
                    let seconds = transform_once(b, &out, s, block, threads)?;
                    runs.push(Run {
                        series: s.name().to_string(),
                        block_size: block,
                        threads,
                        run: r,
                        seconds,
                    });
                    tick();
                }
            }
        }
    }
    if b.peers {
        let input = b.input.canonicalize()?;
        let input = input.to_string_lossy();
        let peers = [
            (
                "tr",
                format!(r"tr '\000-\377' '\003-\377\000-\002' < '{input}' > bench-cipher.out"),
            ),
            (
                "dd bs=4M (copy)",
                format!("dd if='{input}' of=bench-cipher.out bs=4M status=none"),
            ),
            ("cp (copy)", format!("cp '{input}' bench-cipher.out")),
        ];
        time_command(&peers[0].1, &b.scratch)?;
        if !same_bytes(&out, &reference)? {
            bail!("tr gave a different output than swath");
        }
        for (name, script) in peers {
            for r in 0..b.runs {
                let _ = std::fs::remove_file(&out);
                let seconds = time_command(&script, &b.scratch)?;
                runs.push(Run {
                    series: name.to_string(),
                    block_size: 0,
                    threads: 1,
                    run: r,
                    seconds,
                });
                tick();
            }
        }
    }
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&reference);
    Ok(runs)
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
        let mut ticks = 0u64;
        let runs = run(&b, || ticks += 1).unwrap();
        assert_eq!(runs.len() as u64, total_runs(&b));
        assert_eq!(ticks, total_runs(&b));
        assert!(runs.iter().any(|r| r.series == "tr"));
        let svg = super::super::chart::chart("t", "machine", &runs);
        assert!(svg.starts_with("<svg") && svg.contains("mmap-threads x2"));
        assert_eq!(svg.matches("class=\"run\"").count(), runs.len());
    }
}
