//! The demo's result: one row per command beside its peer, printed as a text table (with a
//! note per row saying what was compared) or as JSON (`--json`, specified in docs/json.md).

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

/// How the two answers of a row compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// Equal, as described in the row's note.
    Same,
    /// Not equal: what differs.
    Different(String),
    /// The peer is not installed: nothing to compare with.
    NotInstalled,
}

/// One command beside its peer.
#[derive(Clone, Debug)]
pub struct Row {
    /// The command, short (`cmp, identical files`).
    pub command: String,
    /// The peer, short (`GNU cmp`).
    pub peer: String,
    /// The command lines run (file names relative to the scratch directory).
    pub swath_line: String,
    pub peer_line: String,
    /// Bytes of input the row's commands read (the larger file of a pair).
    pub data_bytes: u64,
    /// Median times; `None` where the command was not timed (peer missing, or answers that
    /// differ).
    pub swath_time: Option<Duration>,
    pub peer_time: Option<Duration>,
    pub check: Check,
    /// What was compared, and what else the row shows (patch sizes).
    pub note: String,
}

impl Row {
    fn speedup(&self) -> Option<f64> {
        match (self.swath_time, self.peer_time) {
            (Some(s), Some(p)) => Some(p.as_secs_f64() / s.as_secs_f64().max(1e-6)),
            _ => None,
        }
    }
}

/// The table as text.
pub fn text(rows: &[Row], runs: u32, scratch: &str) -> String {
    let header = [
        "command", "peer", "data", "swath", "peer", "speed-up", "answer",
    ];
    let mut cells: Vec<[String; 7]> = vec![header.map(String::from)];
    for r in rows {
        cells.push([
            r.command.clone(),
            r.peer.clone(),
            size(r.data_bytes),
            r.swath_time.map_or("-".into(), time),
            match (&r.check, r.peer_time) {
                (Check::NotInstalled, _) => "not installed".into(),
                (_, Some(t)) => time(t),
                (_, None) => "-".into(),
            },
            r.speedup().map_or("-".into(), |x| format!("{x:.1}x")),
            match &r.check {
                Check::Same => "same".into(),
                Check::Different(_) => "DIFFERENT".into(),
                Check::NotInstalled => "-".into(),
            },
        ]);
    }
    let mut widths = [0usize; 7];
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in &cells {
        let mut line = String::new();
        for (i, (c, w)) in row.iter().zip(widths).enumerate() {
            // Names left, figures right.
            let _ = match i {
                0 | 1 | 6 => write!(line, "{c:<w$}  "),
                _ => write!(line, "{c:>w$}  "),
            };
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
    for r in rows {
        let _ = writeln!(out, "{}: {}", r.command, r.note);
        if let Check::Different(what) = &r.check {
            let _ = writeln!(out, "  ANSWERS DIFFER: {what}");
        }
    }
    let _ = writeln!(
        out,
        "\n{SMALLER_ROWS}\nTimes are medians of {runs} runs after a run that checks the answers \
         (hot cache); the files were made in {scratch}, now removed."
    );
    out
}

/// The table as JSON (docs/json.md, `swath demo --json`).
pub fn json(rows: &[Row], runs: u32, size: u64) -> String {
    #[derive(Serialize)]
    struct JsonRow<'a> {
        command: &'a str,
        peer: &'a str,
        swath_command: &'a str,
        peer_command: &'a str,
        data_bytes: u64,
        swath_seconds: Option<f64>,
        peer_seconds: Option<f64>,
        speedup: Option<f64>,
        answer: &'a str,
        difference: Option<&'a str>,
        note: &'a str,
    }
    #[derive(Serialize)]
    struct Report<'a> {
        schema: u32,
        tool: &'static str,
        version: &'static str,
        size: u64,
        runs: u32,
        same: bool,
        rows: Vec<JsonRow<'a>>,
    }
    let report = Report {
        schema: 1,
        tool: "swath demo",
        version: env!("CARGO_PKG_VERSION"),
        size,
        runs,
        same: !rows.iter().any(|r| matches!(r.check, Check::Different(_))),
        rows: rows
            .iter()
            .map(|r| JsonRow {
                command: &r.command,
                peer: &r.peer,
                swath_command: &r.swath_line,
                peer_command: &r.peer_line,
                data_bytes: r.data_bytes,
                swath_seconds: r.swath_time.map(|t| t.as_secs_f64()),
                peer_seconds: r.peer_time.map(|t| t.as_secs_f64()),
                speedup: r.speedup(),
                answer: match r.check {
                    Check::Same => "same",
                    Check::Different(_) => "different",
                    Check::NotInstalled => "not installed",
                },
                difference: match &r.check {
                    Check::Different(d) => Some(d),
                    _ => None,
                },
                note: &r.note,
            })
            .collect(),
    };
    let mut s = serde_json::to_string(&report).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// A time for the table: milliseconds below 10 s, else seconds.
fn time(t: Duration) -> String {
    let ms = t.as_secs_f64() * 1000.0;
    if ms < 10_000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", t.as_secs_f64())
    }
}

/// Why some rows read less than `--size` (the fractions are `Sizes::new`'s, in demo.rs).
pub const SMALLER_ROWS: &str = "Rows on less data: wc counts an eighth of the text, logs \
    summary a log of a 32nd of it (at least 1 MiB), patch make releases of a 16th: GNU wc's \
    word count, GoAccess and xdelta3 read only a few MB a second, and the whole demo is meant \
    to take under two minutes.";

/// A size in binary units, as `--size` reads its suffixes (`--size 100M`: 100.0 MiB).
pub fn size(bytes: u64) -> String {
    let b = bytes as f64;
    let (k, m, g) = (1024.0, 1024.0 * 1024.0, 1024.0 * 1024.0 * 1024.0);
    if b >= g {
        format!("{:.2} GiB", b / g)
    } else if b >= m {
        format!("{:.1} MiB", b / m)
    } else if b >= k {
        format!("{:.1} KiB", b / k)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(check: Check, peer: Option<u64>) -> Row {
        Row {
            command: "cmp, identical files".into(),
            peer: "GNU cmp".into(),
            swath_line: "swath cmp a b".into(),
            peer_line: "cmp a b".into(),
            data_bytes: 640_000_000,
            swath_time: Some(Duration::from_millis(100)),
            peer_time: peer.map(Duration::from_millis),
            check,
            note: "the same output and exit status".into(),
        }
    }

    #[test]
    fn a_row_shows_times_speedup_and_answer() {
        let t = text(&[row(Check::Same, Some(450))], 3, "/tmp/x");
        let line = t.lines().nth(1).unwrap();
        for cell in [
            "cmp, identical files",
            "GNU cmp",
            "610.4 MiB",
            "100.0 ms",
            "450.0 ms",
            "4.5x",
            "same",
        ] {
            assert!(line.contains(cell), "{cell} not in {line}");
        }
    }

    #[test]
    fn a_missing_peer_is_said_and_a_difference_shouted() {
        let t = text(&[row(Check::NotInstalled, None)], 3, "/tmp/x");
        assert!(t.lines().nth(1).unwrap().contains("not installed"), "{t}");
        let t = text(&[row(Check::Different("1 vs 2".into()), None)], 3, "/tmp/x");
        assert!(
            t.contains("DIFFERENT") && t.contains("ANSWERS DIFFER: 1 vs 2"),
            "{t}"
        );
        let j = json(&[row(Check::Different("1 vs 2".into()), None)], 3, 9);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["same"], false);
        assert_eq!(v["rows"][0]["answer"], "different");
        assert_eq!(v["rows"][0]["peer_seconds"], serde_json::Value::Null);
    }

    #[test]
    fn sizes_in_the_units_size_reads() {
        assert_eq!(size(640_000_000), "610.4 MiB");
        assert_eq!(size(100 << 20), "100.0 MiB");
        assert_eq!(size(10_485_760), "10.0 MiB");
        assert_eq!(size(999), "999 B");
        assert_eq!(size(2_500_000_000), "2.33 GiB");
    }
}
