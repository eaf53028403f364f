//! `swath bench`: a tiny cipher benchmark (a 256 KiB file, two block sizes, three runs)
//! whose exports must hold every run and figures that agree with the runs, and whose chart
//! must be well-formed SVG with one point per run and a look of its own for every series.
//! The defaults are a short table (the full one behind `--full`), a line on standard error
//! says each configuration as it ends (no terminal needed), and Ctrl-C removes every file
//! the benchmark made while keeping the runs measured so far.
//!
//! The well-formedness check runs `xmllint` (Debian's libxml2-utils, which CI installs);
//! without it that one check is skipped with a note.

use crate::util::{default_signals, swath, swath_bin, Dir, Paused};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// (series, block size, threads): one configuration.
type Key = (String, u64, usize);

/// The tiny benchmark's arguments.
const TINY: &[&str] = &[
    "bench",
    "cipher",
    "--input",
    "in",
    "--dir",
    "data",
    "--out",
    "out",
    "--runs",
    "3",
    "--strategies",
    "stream,threads,pool",
    "--block-sizes",
    "4K,64K",
    "--threads",
    "1,2",
];

/// Runs the tiny benchmark in `dir` and returns the runs from `out/cipher.csv`.
fn tiny_bench(dir: &Dir) -> Vec<(Key, usize, f64)> {
    tiny_bench_output(dir).0
}

/// Runs the tiny benchmark in `dir`: the runs from `out/cipher.csv`, and standard error.
fn tiny_bench_output(dir: &Dir) -> (Vec<(Key, usize, f64)>, String) {
    let data: Vec<u8> = (0..256 * 1024u32).map(|i| (i * 7) as u8).collect();
    dir.write("in", &data);
    let out = swath(dir, TINY);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("cores"), "no machine line: {stdout}");
    (
        runs_csv(&dir.path("out/cipher.csv")),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The runs of a `NAME.csv`, in its order.
fn runs_csv(path: &Path) -> Vec<(Key, usize, f64)> {
    let csv = std::fs::read_to_string(path).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("series,block_size,threads,run,seconds"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 5, "{l}");
            (
                (
                    f[0].to_string(),
                    f[1].parse().unwrap(),
                    f[2].parse().unwrap(),
                ),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect()
}

/// Every configuration the tiny benchmark measures: stream at 2 block sizes, threads and
/// pool at 2 block sizes x 2 thread counts, tr, dd and cp once each.
fn expected_configs() -> BTreeSet<Key> {
    let mut k = BTreeSet::new();
    for b in [4096, 65536] {
        k.insert(("stream".into(), b, 1));
        for t in [1, 2] {
            k.insert(("threads".into(), b, t));
            k.insert(("pool".into(), b, t));
        }
    }
    for peer in ["tr", "dd bs=4M (copy)", "cp (copy)"] {
        k.insert((peer.into(), 0, 1));
    }
    k
}

/// Mean, sample standard deviation, min, median, max.
fn figures(values: &[f64]) -> [f64; 5] {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let sd = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    let median = if v.len() % 2 == 1 {
        v[v.len() / 2]
    } else {
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
    };
    [mean, sd, v[0], median, v[v.len() - 1]]
}

fn by_config(runs: &[(Key, usize, f64)]) -> BTreeMap<Key, Vec<f64>> {
    let mut m: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for (k, _, s) in runs {
        m.entry(k.clone()).or_default().push(*s);
    }
    m
}

fn assert_close(got: f64, want: f64, tolerance: f64, what: &str) {
    assert!(
        (got - want).abs() <= tolerance,
        "{what}: {got} but the runs give {want}"
    );
}

/// Every key of a JSON value, recursively.
fn keys(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                out.push(k.clone());
                keys(v, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[test]
fn bench_exports_hold_every_run_and_figures_recomputed_from_them() {
    let dir = Dir::new();
    let runs = tiny_bench(&dir);
    let groups = by_config(&runs);
    assert_eq!(
        groups.keys().cloned().collect::<BTreeSet<_>>(),
        expected_configs()
    );
    assert!(groups.values().all(|v| v.len() == 3));
    assert!(runs.iter().all(|r| r.2 > 0.0));

    // The summary CSV: one row per configuration, figures of its runs, the machine.
    let csv = std::fs::read_to_string(dir.path("out/cipher-summary.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("series,block_size,threads,runs,mean,sd,min,median,max,cpu_model,cores,memory_bytes,kernel,filesystem")
    );
    let mut seen = BTreeSet::new();
    for line in lines {
        // No field here holds a comma except possibly the CPU model, which comes after.
        let f: Vec<&str> = line.split(',').collect();
        let key: Key = (f[0].into(), f[1].parse().unwrap(), f[2].parse().unwrap());
        let want = figures(&groups[&key]);
        assert_eq!(f[3], "3", "{line}");
        for (i, name) in ["mean", "sd", "min", "median", "max"].iter().enumerate() {
            // The runs CSV and this one both print seconds to 9 decimals.
            assert_close(f[4 + i].parse().unwrap(), want[i], 2e-9, name);
        }
        let tail = &f[f.len() - 4..];
        assert!(tail[0].parse::<u64>().unwrap() >= 1, "cores: {line}");
        assert!(tail[1].parse::<u64>().unwrap() > 0, "memory: {line}");
        assert!(tail[2].starts_with("Linux "), "kernel: {line}");
        assert!(!tail[3].is_empty(), "file system: {line}");
        seen.insert(key);
    }
    assert_eq!(seen, expected_configs());

    // JSON: schema, swath's version, the machine, every run exactly, figures from them.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("out/cipher.json")).unwrap())
            .unwrap();
    assert_eq!(json["schema"], 1);
    assert_eq!(json["tool"], "swath");
    assert_eq!(json["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(json["report"], "bench cipher");
    assert_eq!(json["unit"], "seconds");
    let m = &json["machine"];
    assert!(m["cores"].as_u64().unwrap() >= 1);
    assert!(m["memory_bytes"].as_u64().unwrap() > 0);
    assert!(m["kernel"].as_str().unwrap().starts_with("Linux "));
    assert!(m["filesystem"].is_string());
    assert!(m.get("cpu_model").is_some());
    let json_runs = json["runs"].as_array().unwrap();
    assert_eq!(json_runs.len(), runs.len());
    let mut exact: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for (r, (key, run, secs)) in json_runs.iter().zip(&runs) {
        let k: Key = (
            r["series"].as_str().unwrap().into(),
            r["block_size"].as_u64().unwrap(),
            r["threads"].as_u64().unwrap() as usize,
        );
        assert_eq!(&k, key);
        assert_eq!(r["run"].as_u64().unwrap() as usize, *run);
        let s = r["seconds"].as_f64().unwrap();
        assert_close(s, *secs, 1e-9, "the CSV's run");
        exact.entry(k).or_default().push(s);
    }
    let summaries = json["summaries"].as_array().unwrap();
    assert_eq!(summaries.len(), expected_configs().len());
    for s in summaries {
        let k: Key = (
            s["series"].as_str().unwrap().into(),
            s["block_size"].as_u64().unwrap(),
            s["threads"].as_u64().unwrap() as usize,
        );
        let want = figures(&exact[&k]);
        assert_eq!(s["runs"], 3);
        for (i, name) in ["mean", "sd", "min", "median", "max"].iter().enumerate() {
            assert_close(s[*name].as_f64().unwrap(), want[i], 1e-12, name);
        }
    }
    let mut all = Vec::new();
    keys(&json, &mut all);
    for k in all {
        assert!(
            k.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "key {k:?} is not a plain identifier"
        );
    }

    // Markdown: the machine, a summary row per configuration and a row per run (ms).
    let md = std::fs::read_to_string(dir.path("out/cipher.md")).unwrap();
    for row in [
        "| CPU |",
        "| cores (logical CPUs online) |",
        "| memory |",
        "| kernel |",
    ] {
        assert!(md.contains(row), "no {row} in\n{md}");
    }
    let (summary, every) = md.split_once("## Every run").expect("two tables");
    let cells = |line: &str| -> Vec<String> {
        line.trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().replace('\\', ""))
            .collect()
    };
    let key_of = |c: &[String]| -> Key {
        let block = if c[1] == "-" {
            0
        } else {
            c[1].parse().unwrap()
        };
        (c[0].clone(), block, c[2].parse().unwrap())
    };
    let mut md_runs: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    let run_rows: Vec<&str> = every
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| series"))
        .collect();
    assert_eq!(run_rows.len(), runs.len());
    for l in run_rows {
        let c = cells(l);
        md_runs
            .entry(key_of(&c))
            .or_default()
            .push(c[4].parse().unwrap());
    }
    let summary_rows: Vec<&str> = summary
        .split("## Summary")
        .nth(1)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| series"))
        .collect();
    assert_eq!(summary_rows.len(), expected_configs().len());
    for l in summary_rows {
        let c = cells(l);
        let k = key_of(&c);
        // Milliseconds to 3 decimals: each printed value is within 0.0005 of its own.
        let want = figures(&md_runs[&k]);
        for (i, name) in ["mean", "sd", "min", "median", "max"].iter().enumerate() {
            assert_close(c[4 + i].parse().unwrap(), want[i], 0.0021, name);
        }
    }
}

/// The x of a marker element: a circle's `cx`, a square's `x` or a path's first point
/// (each within 5 pixels of the marker's centre).
fn marker_x(element: &str) -> f64 {
    let start = ["cx=\"", " x=\"", " d=\"M"]
        .iter()
        .find_map(|a| element.find(a).map(|at| at + a.len()))
        .unwrap_or_else(|| panic!("no x in {element}"));
    let rest = &element[start..];
    rest[..rest.find(['"', ',']).unwrap()].parse().unwrap()
}

fn attr<'a>(element: &'a str, name: &str) -> &'a str {
    let at = element
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {element}"))
        + name.len()
        + 3;
    let rest = &element[at..];
    &rest[..rest.find('"').unwrap()]
}

fn xmllint_ok(svg: &Path) -> Option<bool> {
    if !Path::new("/usr/bin/xmllint").exists() {
        swath_engine::testing::skip(
            "xmllint not installed (apt-get install libxml2-utils): well-formedness check skipped",
        );
        return None;
    }
    let out = Command::new("/usr/bin/xmllint")
        .arg("--noout")
        .arg(svg)
        .output()
        .unwrap();
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    Some(out.status.success())
}

#[test]
fn bench_chart_is_svg_with_a_point_per_run_and_a_look_per_series() {
    let dir = Dir::new();
    let runs = tiny_bench(&dir);
    let path = dir.path("out/cipher.svg");
    if let Some(ok) = xmllint_ok(&path) {
        assert!(ok, "the chart is not well-formed XML");
    }
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(
        !svg.replace("http://www.w3.org/2000/svg", "")
            .contains("http"),
        "the chart links outside itself"
    );
    assert!(!svg.contains("<script"));

    // One point per run; each series' points share one (colour, marker); series differ.
    let points: Vec<&str> = svg
        .split('<')
        .filter(|e| e.contains("class=\"run\""))
        .collect();
    assert_eq!(points.len(), runs.len());
    let mut looks: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for p in &points {
        looks
            .entry(attr(p, "data-series").to_string())
            .or_default()
            .insert((attr(p, "data-colour").into(), attr(p, "data-marker").into()));
    }
    // stream, threads, threads x2, pool, pool x2, tr, dd, cp.
    assert_eq!(looks.len(), 8, "{looks:?}");
    let mut distinct = BTreeSet::new();
    for (series, l) in &looks {
        assert_eq!(l.len(), 1, "series {series} drawn in {l:?}");
        assert!(
            distinct.insert(l.iter().next().unwrap().clone()),
            "look reused: {l:?}"
        );
    }

    // Axis titles with units; a log time axis exactly when the runs span 10x or more.
    assert!(svg.contains(">block size (bytes, log scale)</text>"));
    let fastest = runs.iter().map(|r| r.2).fold(f64::INFINITY, f64::min);
    let slowest = runs.iter().map(|r| r.2).fold(0.0, f64::max);
    let y_title = svg
        .split("<text class=\"axis-title\"")
        .nth(2)
        .expect("time axis title");
    assert!(y_title.contains(">time per run ("), "{y_title}");
    let log = y_title.contains(", log scale)</text>");
    assert_eq!(log, slowest / fastest >= 10.0, "{fastest}..{slowest} s");
    let ticks: Vec<f64> = svg
        .split("<g class=\"y-axis\">")
        .nth(1)
        .unwrap()
        .split("</g>")
        .next()
        .unwrap()
        .split("<text class=\"tick\"")
        .skip(1)
        .map(|t| {
            t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()]
                .parse()
                .unwrap()
        })
        .collect();
    assert!(ticks.len() >= 3, "{ticks:?}");
    let one_two_five = |v: f64| {
        let m = v / 10f64.powf(v.log10().floor());
        [1.0, 2.0, 5.0].iter().any(|x| (m - x).abs() < 1e-6)
    };
    if log {
        assert!(ticks.iter().all(|&t| one_two_five(t)), "{ticks:?}");
    } else {
        assert_eq!(ticks[0], 0.0);
        let step = ticks[1];
        assert!(one_two_five(step), "{ticks:?}");
        for (i, t) in ticks.iter().enumerate() {
            assert!((t - step * i as f64).abs() < step * 1e-6, "{ticks:?}");
        }
    }

    // The legend is right of every point.
    let legend_x: f64 = svg
        .split("<g class=\"legend-entry\"><line x1=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].parse::<f64>().unwrap())
        .fold(f64::INFINITY, f64::min);
    let rightmost = points.iter().map(|p| marker_x(p)).fold(0.0, f64::max);
    assert!(
        legend_x > rightmost + 5.0,
        "legend at {legend_x}, a point at {rightmost}"
    );
}

/// The configurations a `--dry-run` lists, and its first line's counts: (configurations,
/// runs, bytes).
fn dry_run(dir: &Dir, extra: &[&str]) -> (Vec<Key>, [u64; 3]) {
    let mut args = vec!["bench", "cipher", "--dry-run"];
    args.extend_from_slice(extra);
    let out = swath(dir, &args);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    // `swath bench cipher would measure 30 configurations x 3 runs (90 runs) on 67108864
    // bytes of generated text:`
    let first: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(first[..4], ["swath", "bench", "cipher", "would"], "{text}");
    let counts = [
        first[5].parse().unwrap(),
        first[10].trim_start_matches('(').parse().unwrap(),
        first[13].parse().unwrap(),
    ];
    assert_eq!(lines.next().map(str::split_whitespace).unwrap().count(), 3);
    let configs: Vec<Key> = lines
        .map(|l| {
            // A series may hold spaces ("dd bs=4M (copy)"): block and threads are the last two.
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = f.len();
            let block = if f[n - 2] == "-" {
                0
            } else {
                f[n - 2].parse().unwrap()
            };
            (f[..n - 2].join(" "), block, f[n - 1].parse().unwrap())
        })
        .collect();
    assert_eq!(configs.len() as u64, counts[0], "{text}");
    (configs, counts)
}

/// The entries of a directory, by name.
fn entries(p: &Path) -> BTreeSet<String> {
    std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// With no options the benchmark is short: every strategy and peer tool, but three block
/// sizes, one and two threads and 64 MiB (90 runs, where the full table has 279 on
/// 640,000,000 bytes, behind `--full`, whose help says how long it takes). Run at a tiny
/// size, the defaults measure exactly what the dry run lists, write the table and the chart,
/// and leave nothing in the `--dir` they made.
#[test]
fn bench_cipher_defaults_are_a_short_table_and_full_is_the_whole_one() {
    let dir = Dir::new();
    let (quick, [configs, runs, bytes]) = dry_run(&dir, &[]);
    assert!(bytes <= 64 << 20, "default size {bytes}");
    assert!(runs <= 100 && runs == 3 * configs, "default runs {runs}");
    let series: BTreeSet<&str> = quick.iter().map(|k| k.0.as_str()).collect();
    // Every strategy but `auto` (a choice among them), and the peers.
    let peers = ["tr", "dd bs=4M (copy)", "cp (copy)"];
    for s in crate::cipher::STRATEGIES[1..].iter().chain(&peers) {
        assert!(
            series.contains(s),
            "{s} is not measured by default: {quick:?}"
        );
    }
    let blocks: BTreeSet<u64> = quick.iter().map(|k| k.1).filter(|&b| b > 0).collect();
    assert!(blocks.len() >= 3, "{blocks:?}");
    let (full, [_, full_runs, full_bytes]) = dry_run(&dir, &["--full"]);
    assert_eq!((full.len(), full_runs, full_bytes), (93, 279, 640_000_000));
    // Options beside --full still apply.
    let (_, [_, _, small]) = dry_run(&dir, &["--full", "--size", "1M"]);
    assert_eq!(small, 1 << 20);

    let help = swath(&dir, &["bench", "cipher", "--help"]);
    let help = String::from_utf8(help.stdout).unwrap();
    let full_help = help
        .split("\n      --full")
        .nth(1)
        .expect("no --full in the help")
        .split("\n      --")
        .next()
        .unwrap();
    assert!(
        full_help.contains("minutes") && full_help.contains("279 runs"),
        "--full does not say how long it takes: {full_help}"
    );

    let (tiny, _) = dry_run(&dir, &["--size", "256K"]);
    assert_eq!(tiny, quick);
    let out = swath(
        &dir,
        &[
            "bench", "cipher", "--size", "256K", "--dir", "data", "--out", "out",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("of 262144 bytes"), "{table}");
    let measured = runs_csv(&dir.path("out/cipher.csv"));
    assert_eq!(measured.len() as u64, runs);
    let order: Vec<Key> = measured.chunks(3).map(|c| c[0].0.clone()).collect();
    assert_eq!(order, quick);
    let svg = std::fs::read_to_string(dir.path("out/cipher.svg")).unwrap();
    assert_eq!(svg.matches("class=\"run\"").count() as u64, runs);
    assert!(
        !dir.path("data").exists(),
        "left behind: {:?}",
        entries(&dir.path("data"))
    );
}

/// Without a terminal (standard error is a pipe here), each configuration's end is said on
/// a line of its own: its number of all, its series, block size and threads, its median.
/// The write benchmark says them too.
#[test]
fn bench_says_a_line_per_finished_configuration_without_a_terminal() {
    let dir = Dir::new();
    let (runs, stderr) = tiny_bench_output(&dir);
    let order: Vec<Key> = runs.chunks(3).map(|c| c[0].0.clone()).collect();
    assert_eq!(order.len(), expected_configs().len());
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(" median ")).collect();
    assert_eq!(lines.len(), order.len(), "{stderr}");
    for (i, ((series, block, threads), line)) in order.iter().zip(&lines).enumerate() {
        let want = if *block == 0 {
            format!(
                "swath bench cipher: {}/{} {series}: median ",
                i + 1,
                order.len()
            )
        } else {
            format!(
                "swath bench cipher: {}/{} {series}, {block}-byte blocks, {threads} thread",
                i + 1,
                order.len()
            )
        };
        assert!(line.starts_with(&want), "{line:?} is not {want:?}");
        assert!(line.ends_with(" ms over 3 runs"), "{line}");
    }

    let (out, lines) = bench_write(&dir, &["--runs", "2", "--threads", "1,2", "--dir", "wdata"]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(
        lines[3].starts_with(
            "swath bench write: 4/4 pre-spawned workers, 4096-byte blocks, 2 threads: median "
        ),
        "{stderr}"
    );
    assert!(!dir.path("wdata").exists());

    // Without --runs, 10 runs a configuration (the article's 100 took minutes).
    let (out, lines) = bench_write(&dir, &["--threads", "1", "--dir", "wdata"]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines.iter().all(|l| l.ends_with(" ms over 10 runs")),
        "{stderr}"
    );
}

/// Ctrl-C as the first configuration ends (a pause point holds swath there): the generated
/// input and the outputs go, the files of the directory's owner stay, and the runs of that
/// configuration are printed and saved, titled as interrupted; the exit status is 130.
#[test]
fn bench_interrupted_removes_its_files_and_keeps_the_runs_so_far() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path("data")).unwrap();
    dir.write("data/mine", b"not the benchmark's");
    let mut cmd = Command::new(swath_bin());
    default_signals(&mut cmd)
        .args([
            "bench",
            "cipher",
            "--size",
            "1M",
            "--dir",
            "data",
            "--out",
            "out",
            "--runs",
            "2",
            "--strategies",
            "stream,pool",
            "--block-sizes",
            "4K,64K",
            "--threads",
            "1,2",
        ])
        .current_dir(dir.tmp.path());
    let mut p = Paused::spawn(cmd, dir.tmp.path(), "bench-configuration-done");
    assert!(
        p.reached(),
        "the benchmark ended before its first configuration did"
    );
    // While it runs, its files are in a directory of its own beside the owner's.
    let during = entries(&dir.path("data"));
    assert_eq!(during.len(), 2, "{during:?}");
    let scratch = during.iter().find(|n| *n != "mine").unwrap();
    assert!(
        entries(&dir.path("data").join(scratch)).contains("cipher-input"),
        "{during:?}"
    );
    // SAFETY: kill has no memory-safety preconditions; the id is our child's.
    assert_eq!(unsafe { libc::kill(p.child.id() as i32, libc::SIGINT) }, 0);
    // Resumed once the signal is taken (its scratch directory gone), so that the runs so
    // far are the first configuration's whatever the threads' timing.
    for _ in 0..600 {
        if entries(&dir.path("data")).len() == 1 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = p.resume();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert_eq!(
        entries(&dir.path("data")),
        BTreeSet::from(["mine".to_string()])
    );
    assert_eq!(
        std::fs::read(dir.path("data/mine")).unwrap(),
        b"not the benchmark's"
    );
    // 2 strategies x 2 blocks (stream once, pool at 1 and 2 threads) + 3 peers, 2 runs each.
    assert!(
        stdout.contains("(interrupted after 2 of 18 runs)"),
        "{stdout}"
    );
    assert!(
        stderr.contains("interrupted: the 2 runs so far are saved in out"),
        "{stderr}"
    );
    let saved = runs_csv(&dir.path("out/cipher.csv"));
    let keys: Vec<(Key, usize)> = saved.iter().map(|r| (r.0.clone(), r.1)).collect();
    assert_eq!(
        keys,
        [0, 1]
            .map(|r| (("stream".to_string(), 4096, 1), r))
            .to_vec()
    );
    let svg = std::fs::read_to_string(dir.path("out/cipher.svg")).unwrap();
    assert_eq!(svg.matches("class=\"run\"").count(), 2);
}

/// `--dir` in which another user could rename the private directory and put a link to a
/// directory of theirs in its place (made by someone else in /tmp, or writable by all
/// without the sticky bit) is refused before anything is written there.
#[test]
fn bench_refuses_a_directory_others_could_swap_its_files_in() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Dir::new();
    std::fs::create_dir(dir.path("open")).unwrap();
    std::fs::set_permissions(dir.path("open"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut cases = vec![("open", "others may write into it")];
    if crate::util::is_root() {
        std::fs::create_dir(dir.path("theirs")).unwrap();
        std::os::unix::fs::chown(dir.path("theirs"), Some(65534), Some(65534)).unwrap();
        cases.push(("theirs", "belongs to another user"));
    }
    let write_in = |d: &str| bench_write(&dir, &["--runs", "1", "--threads", "1", "--dir", d]).0;
    for (d, why) in cases {
        let out = write_in(d);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{d}: {stderr}");
        assert!(stderr.contains(why), "{d}: {stderr}");
        assert_eq!(std::fs::read_dir(dir.path(d)).unwrap().count(), 0, "{d}");
    }
    // The sticky bit (as /tmp has) makes a shared directory safe.
    std::fs::set_permissions(dir.path("open"), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let out = write_in("open");
    assert!(out.status.success(), "{out:?}");
}

/// `swath bench write` on 64 KiB in 4 KiB blocks with `args`; its output, and the lines of
/// its standard error that say a configuration's median.
fn bench_write(dir: &Dir, args: &[&str]) -> (std::process::Output, Vec<String>) {
    let mut all = vec![
        "bench",
        "write",
        "--size",
        "64K",
        "--block-sizes",
        "4K",
        "--out",
        "out",
    ];
    all.extend_from_slice(args);
    let out = swath(dir, &all);
    let lines = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(" median "))
        .map(String::from)
        .collect();
    (out, lines)
}
