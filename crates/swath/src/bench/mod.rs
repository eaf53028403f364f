//! `swath bench`: the seed articles' experiments, reproducible by any user.
//!
//! Each experiment produces [`Run`] records (one per timed run), from which it prints a
//! table of minimum, median and maximum per configuration, writes the raw runs as CSV and
//! JSON, and draws an SVG chart of time against block size with one line per series.

pub mod chart;
pub mod cipher;
pub mod write;

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

/// One timed run of one configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// The series the run belongs to (a strategy, a peer tool, a thread mode).
    pub series: String,
    /// Bytes per block (0 when the configuration has none, as for peer tools).
    pub block_size: u64,
    /// Worker threads.
    pub threads: usize,
    /// Run number within its configuration, from 0.
    pub run: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Minimum, median and maximum of one configuration's runs.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The series.
    pub series: String,
    /// Bytes per block.
    pub block_size: u64,
    /// Worker threads.
    pub threads: usize,
    /// Runs measured.
    pub runs: usize,
    /// Fastest run, seconds.
    pub min: f64,
    /// Median run, seconds.
    pub median: f64,
    /// Slowest run, seconds.
    pub max: f64,
}

/// Groups runs by (series, block size, threads), in first-seen order.
pub fn summarize(runs: &[Run]) -> Vec<Summary> {
    let mut keys: Vec<(String, u64, usize)> = Vec::new();
    for r in runs {
        let k = (r.series.clone(), r.block_size, r.threads);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(series, block_size, threads)| {
            let mut t: Vec<f64> = runs
                .iter()
                .filter(|r| {
                    r.series == series && r.block_size == block_size && r.threads == threads
                })
                .map(|r| r.seconds)
                .collect();
            t.sort_by(f64::total_cmp);
            Summary {
                runs: t.len(),
                min: t[0],
                median: median(&t),
                max: t[t.len() - 1],
                series,
                block_size,
                threads,
            }
        })
        .collect()
}

/// The median of sorted values (mean of the middle two for an even count).
pub fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The text table of summaries.
pub fn table(summaries: &[Summary]) -> String {
    let mut s = format!(
        "{:<22} {:>10} {:>7} {:>5} {:>10} {:>10} {:>10}\n",
        "series", "block", "threads", "runs", "min ms", "median ms", "max ms"
    );
    for m in summaries {
        s.push_str(&format!(
            "{:<22} {:>10} {:>7} {:>5} {:>10.1} {:>10.1} {:>10.1}\n",
            m.series,
            if m.block_size == 0 {
                "-".to_string()
            } else {
                m.block_size.to_string()
            },
            m.threads,
            m.runs,
            m.min * 1e3,
            m.median * 1e3,
            m.max * 1e3
        ));
    }
    s
}

/// Writes `NAME.csv`, `NAME.json` (runs and summaries) and `NAME.svg` into `dir`.
pub fn save(dir: &Path, name: &str, title: &str, runs: &[Run]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut csv = String::from("series,block_size,threads,run,seconds\n");
    for r in runs {
        csv.push_str(&format!(
            "{},{},{},{},{:.6}\n",
            r.series, r.block_size, r.threads, r.run, r.seconds
        ));
    }
    write_file(&dir.join(format!("{name}.csv")), csv.as_bytes())?;
    let json = serde_json::json!({ "title": title, "runs": runs, "summaries": summarize(runs) });
    write_file(
        &dir.join(format!("{name}.json")),
        serde_json::to_string_pretty(&json)?.as_bytes(),
    )?;
    let svg = chart::line_chart(title, &summarize(runs));
    write_file(&dir.join(format!("{name}.svg")), svg.as_bytes())?;
    Ok(())
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let out = swath_engine::AtomicOutput::create(path)?;
    out.file().write_all(bytes)?;
    out.commit(false)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(series: &str, bs: u64, t: usize, s: f64) -> Run {
        Run {
            series: series.into(),
            block_size: bs,
            threads: t,
            run: 0,
            seconds: s,
        }
    }

    #[test]
    fn summaries_group_and_take_medians() {
        let runs = vec![
            run("a", 1, 1, 3.0),
            run("a", 1, 1, 1.0),
            run("b", 1, 1, 5.0),
            run("a", 1, 1, 2.0),
            run("a", 1, 1, 10.0),
        ];
        let s = summarize(&runs);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].min, s[0].median, s[0].max, s[0].runs),
            (1.0, 2.5, 10.0, 4)
        );
        assert_eq!(s[1].median, 5.0);
        assert!(table(&s).contains("2500.0"));
    }
}
