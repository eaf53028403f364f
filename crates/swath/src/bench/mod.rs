//! `swath bench`: the seed articles' experiments, reproducible by any user.
//!
//! Each experiment produces [`Run`] records (one per timed run), from which it prints a
//! table of mean, standard deviation, minimum, median and maximum per configuration, writes
//! the runs and those figures with the [`machine::Machine`] as CSV, JSON and Markdown
//! ([`export`]), and draws an SVG chart of every run against block size ([`chart`]).

pub mod chart;
pub mod cipher;
pub mod export;
pub mod machine;
pub mod write;

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

/// Mean, standard deviation, minimum, median and maximum of one configuration's runs.
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
    /// Mean, seconds.
    pub mean: f64,
    /// Sample standard deviation (divisor runs - 1), seconds; 0 for a single run.
    pub sd: f64,
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
            let (mean, sd) = mean_sd(&t);
            Summary {
                runs: t.len(),
                mean,
                sd,
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

/// The mean and sample standard deviation (divisor n - 1; 0 for one value) of `values`.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    // Two passes: the sum of squared deviations, not of squares, keeps the precision.
    let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    (mean, (ss / (n - 1.0)).sqrt())
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

/// One configuration and its median, for a progress line: `pool, 65536-byte blocks, 2
/// threads: median 12.3 ms over 3 runs` (`cp (copy): ...` for a tool with no block size).
pub fn describe(m: &Summary) -> String {
    let config = if m.block_size == 0 {
        m.series.clone()
    } else {
        format!(
            "{}, {}-byte blocks, {} thread{}",
            m.series,
            m.block_size,
            m.threads,
            if m.threads == 1 { "" } else { "s" }
        )
    };
    format!(
        "{config}: median {:.1} ms over {} run{}",
        m.median * 1e3,
        m.runs,
        if m.runs == 1 { "" } else { "s" }
    )
}

/// The text table of summaries.
pub fn table(summaries: &[Summary]) -> String {
    let mut s = format!(
        "{:<22} {:>10} {:>7} {:>5} {:>10} {:>9} {:>10} {:>10} {:>10}\n",
        "series", "block", "threads", "runs", "mean ms", "sd ms", "min ms", "median ms", "max ms"
    );
    for m in summaries {
        s.push_str(&format!(
            "{:<22} {:>10} {:>7} {:>5} {:>10.1} {:>9.1} {:>10.1} {:>10.1} {:>10.1}\n",
            m.series,
            if m.block_size == 0 {
                "-".to_string()
            } else {
                m.block_size.to_string()
            },
            m.threads,
            m.runs,
            m.mean * 1e3,
            m.sd * 1e3,
            m.min * 1e3,
            m.median * 1e3,
            m.max * 1e3
        ));
    }
    s
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
            (s[0].min, s[0].median, s[0].max, s[0].runs, s[0].mean),
            (1.0, 2.5, 10.0, 4, 4.0)
        );
        // Deviations -3, -2, -1, 6: squares 9 + 4 + 1 + 36 = 50, over 3.
        assert!((s[0].sd - (50.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!((s[1].mean, s[1].sd), (5.0, 0.0));
        assert_eq!(s[1].median, 5.0);
        assert!(table(&s).contains("2500.0"));
        assert_eq!(
            describe(&s[0]),
            "a, 1-byte blocks, 1 thread: median 2500.0 ms over 4 runs"
        );
        assert_eq!(
            describe(&summarize(&[run("cp", 0, 1, 0.25)])[0]),
            "cp: median 250.0 ms over 1 run"
        );
    }
}
