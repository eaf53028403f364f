//! Seed 004's parallel-write experiment: T threads each write their own contiguous range of
//! one 256 MiB file (4096 x 65536 bytes, the article's "250MB") in blocks of a given size,
//! either creating the threads inside the timed region or pre-spawning workers that open the
//! file and seek to their range first, then wait on a barrier that starts the clock.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::Instant;

use anyhow::{Context, Result};

use super::Run;

/// The article's file size: 4096-byte blocks x 65536 blocks.
pub const FILE_BYTES: u64 = 4096 * 65536;

/// What to measure.
#[derive(Debug, Clone)]
pub struct WriteBench {
    /// The file written (created if missing, overwritten by every run).
    pub path: PathBuf,
    /// Bytes in the file.
    pub bytes: u64,
    /// Block sizes.
    pub blocks: Vec<u64>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Runs per configuration.
    pub runs: usize,
}

/// How threads come to the timed region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Threads are created, open the file and seek inside the timed region.
    Spawn,
    /// Workers are created, open and seek first, then wait on a barrier.
    Prespawned,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Spawn => "threads per run",
            Mode::Prespawned => "pre-spawned workers",
        }
    }
}

fn range(bytes: u64, threads: usize, t: usize, block: u64) -> (u64, u64) {
    let blocks = bytes / block;
    let per = blocks / threads as u64;
    let first = per * t as u64;
    let last = if t + 1 == threads {
        blocks
    } else {
        first + per
    };
    (first * block, last * block)
}

fn open_at(path: &Path, at: u64) -> std::io::Result<File> {
    let mut f = OpenOptions::new().write(true).open(path)?;
    f.seek(SeekFrom::Start(at))?;
    Ok(f)
}

fn write_range(f: &mut File, buf: &[u8], start: u64, end: u64) -> std::io::Result<()> {
    let mut at = start;
    while at < end {
        f.write_all(buf)?;
        at += buf.len() as u64;
    }
    Ok(())
}

/// Times one run.
fn one_run(path: &Path, bytes: u64, block: u64, threads: usize, mode: Mode) -> Result<f64> {
    let buf = vec![b'w'; block as usize];
    let buf = &buf;
    match mode {
        Mode::Spawn => {
            let start = Instant::now();
            std::thread::scope(|s| -> Result<()> {
                let hs: Vec<_> = (0..threads)
                    .map(|t| {
                        s.spawn(move || -> std::io::Result<()> {
                            let (a, b) = range(bytes, threads, t, block);
                            let mut f = open_at(path, a)?;
                            write_range(&mut f, buf, a, b)
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().expect("writer panicked")?;
                }
                Ok(())
            })?;
            Ok(start.elapsed().as_secs_f64())
        }
        Mode::Prespawned => {
            let go = Barrier::new(threads + 1);
            let go = &go;
            // Each worker notes when it starts writing and when it ends: the run is from the
            // first start to the last end. (A clock in the main thread, started once it
            // passed the barrier, missed the writes of workers that ran while it waited to be
            // scheduled: runs of 8 MiB in 4 microseconds.)
            std::thread::scope(|s| -> Result<f64> {
                let hs: Vec<_> = (0..threads)
                    .map(|t| {
                        s.spawn(move || -> std::io::Result<(Instant, Instant)> {
                            let (a, b) = range(bytes, threads, t, block);
                            let opened = open_at(path, a);
                            go.wait();
                            let start = Instant::now();
                            write_range(&mut opened?, buf, a, b)?;
                            Ok((start, Instant::now()))
                        })
                    })
                    .collect();
                go.wait();
                let mut span: Option<(Instant, Instant)> = None;
                for h in hs {
                    let (a, b) = h.join().expect("writer panicked")?;
                    span = Some(span.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
                }
                Ok(span.map_or(0.0, |(a, b)| (b - a).as_secs_f64()))
            })
        }
    }
}

/// Runs every configuration, handing each run to `record` as it ends (a configuration's runs
/// one after the other).
pub fn run(bench: &WriteBench, mut record: impl FnMut(Run)) -> Result<()> {
    let f =
        File::create(&bench.path).with_context(|| format!("creating {}", bench.path.display()))?;
    f.set_len(bench.bytes)
        .with_context(|| format!("sizing {}", bench.path.display()))?;
    drop(f);
    for mode in [Mode::Spawn, Mode::Prespawned] {
        for &block in &bench.blocks {
            for &threads in &bench.threads {
                for r in 0..bench.runs {
                    let seconds = one_run(&bench.path, bench.bytes, block, threads, mode)
                        .with_context(|| format!("writing {}", bench.path.display()))?;
                    record(Run {
                        series: mode.name().to_string(),
                        block_size: block,
                        threads,
                        run: r,
                        seconds,
                    });
                }
            }
        }
    }
    let _ = std::fs::remove_file(&bench.path);
    Ok(())
}

/// Runs per call of [`run`], for a progress bar.
pub fn total_runs(bench: &WriteBench) -> u64 {
    (2 * bench.blocks.len() * bench.threads.len() * bench.runs) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_the_file_exactly() {
        for threads in [1, 2, 3, 4, 8, 16] {
            let mut next = 0;
            for t in 0..threads {
                let (a, b) = range(1 << 20, threads, t, 4096);
                assert_eq!(a, next);
                next = b;
            }
            assert_eq!(next, 1 << 20);
        }
    }

    #[test]
    fn every_mode_writes_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let bench = WriteBench {
            path: dir.path().join("w"),
            bytes: 1 << 20,
            blocks: vec![4096, 65536],
            threads: vec![1, 3],
            runs: 2,
        };
        let mut runs = Vec::new();
        run(&bench, |r| runs.push(r)).unwrap();
        assert_eq!(runs.len() as u64, total_runs(&bench));
        assert!(runs.iter().all(|r| r.seconds > 0.0));
        // And the content: one run by hand, then check every byte.
        File::create(&bench.path).unwrap().set_len(1 << 20).unwrap();
        one_run(&bench.path, 1 << 20, 4096, 3, Mode::Prespawned).unwrap();
        assert!(std::fs::read(&bench.path)
            .unwrap()
            .iter()
            .all(|&b| b == b'w'));
    }
}
