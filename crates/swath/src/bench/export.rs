//! The files a benchmark leaves in `--out`: every run and the figures of each configuration
//! (mean, standard deviation, minimum, median, maximum) with the machine they ran on, as
//! CSV, JSON and Markdown, and the SVG chart. Layouts are specified in docs/json.md (JSON)
//! and GUIDE.md (the others).
//!
//! - `NAME.csv`: one row per run (`series,block_size,threads,run,seconds`).
//! - `NAME-summary.csv`: one row per configuration with its figures in seconds, then the
//!   machine's columns (repeated on every row, so files from several machines concatenate
//!   into one table).
//! - `NAME.json`: schema 1: the machine, the summaries and the runs.
//! - `NAME.md`: the machine, the summaries and every run, in milliseconds.
//! - `NAME.svg`: the chart.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::machine::{gib, Machine};
use super::{chart, summarize, Run, Summary};

/// The layout of `NAME.json` (docs/json.md).
pub const SCHEMA: u32 = 1;

/// One benchmark's results, ready to save.
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// The command, as `bench cipher`.
    pub command: &'a str,
    /// A one-line description of what was measured.
    pub title: &'a str,
    /// Where it ran.
    pub machine: &'a Machine,
    /// Every timed run.
    pub runs: &'a [Run],
}

/// Writes `NAME.csv`, `NAME-summary.csv`, `NAME.json`, `NAME.md` and `NAME.svg` into `dir`
/// (each atomically) and returns their paths.
pub fn save(dir: &Path, name: &str, report: &Report) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let summaries = summarize(report.runs);
    let files = [
        (format!("{name}.csv"), runs_csv(report.runs)),
        (
            format!("{name}-summary.csv"),
            summary_csv(&summaries, report.machine),
        ),
        (format!("{name}.json"), json(report, &summaries)?),
        (format!("{name}.md"), markdown(report, &summaries)),
        (
            format!("{name}.svg"),
            chart::chart(report.title, &report.machine.describe(), report.runs),
        ),
    ];
    let mut written = Vec::new();
    for (file, text) in files {
        let path = dir.join(file);
        write_file(&path, text.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let out = swath_engine::AtomicOutput::create(path)
        .with_context(|| format!("{}: cannot create", path.display()))?;
    out.file()
        .write_all(bytes)
        .with_context(|| format!("{}: cannot write", path.display()))?;
    out.commit(false)
        .with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(())
}

/// A CSV field (RFC 4180): quoted when it holds a comma, quote or line break; quotes
/// doubled. A field that a spreadsheet would run as a formula (`=`, `+`, `-`, `@` first)
/// is quoted with a leading `'`, as OWASP recommends; numbers never start so.
pub fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) || s.starts_with('\'') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

fn runs_csv(runs: &[Run]) -> String {
    let mut csv = String::from("series,block_size,threads,run,seconds\n");
    for r in runs {
        csv.push_str(&format!(
            "{},{},{},{},{:.9}\n",
            csv_field(&r.series),
            r.block_size,
            r.threads,
            r.run,
            r.seconds
        ));
    }
    csv
}

fn summary_csv(summaries: &[Summary], m: &Machine) -> String {
    let mut csv = String::from(
        "series,block_size,threads,runs,mean,sd,min,median,max,cpu_model,cores,memory_bytes,kernel,filesystem\n",
    );
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    let text = |v: &Option<String>| csv_field(v.as_deref().unwrap_or(""));
    for s in summaries {
        csv.push_str(&format!(
            "{},{},{},{},{:.9},{:.9},{:.9},{:.9},{:.9},{},{},{},{},{}\n",
            csv_field(&s.series),
            s.block_size,
            s.threads,
            s.runs,
            s.mean,
            s.sd,
            s.min,
            s.median,
            s.max,
            text(&m.cpu_model),
            opt(m.cores),
            opt(m.memory_bytes),
            text(&m.kernel),
            text(&m.filesystem),
        ));
    }
    csv
}

fn json(report: &Report, summaries: &[Summary]) -> Result<String> {
    let value = serde_json::json!({
        "schema": SCHEMA,
        "tool": "swath",
        "version": env!("CARGO_PKG_VERSION"),
        "report": report.command,
        "title": report.title,
        "unit": "seconds",
        "machine": report.machine,
        "summaries": summaries,
        "runs": report.runs,
    });
    let mut text = serde_json::to_string_pretty(&value)?;
    text.push('\n');
    Ok(text)
}

/// Escapes text for a Markdown table cell: ASCII punctuation that Markdown or HTML would
/// read (emphasis, code, links, tags, entities, the cell separator) is backslash-escaped,
/// and line breaks and other control characters become spaces.
pub fn markdown_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '&' | '~' | '!' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn block_cell(block_size: u64) -> String {
    if block_size == 0 {
        "-".into()
    } else {
        block_size.to_string()
    }
}

fn markdown(report: &Report, summaries: &[Summary]) -> String {
    let m = report.machine;
    let unknown = "unknown".to_string();
    let mut md = format!(
        "# {}\n\n`swath {}` (swath {}).\n\n## Machine\n\n| | |\n|---|---|\n",
        markdown_escape(report.title),
        report.command,
        env!("CARGO_PKG_VERSION")
    );
    let rows = [
        (
            "CPU",
            m.cpu_model.clone().unwrap_or_else(|| unknown.clone()),
        ),
        (
            "cores (logical CPUs online)",
            m.cores.map_or_else(|| unknown.clone(), |c| c.to_string()),
        ),
        (
            "memory",
            m.memory_bytes.map_or_else(|| unknown.clone(), gib),
        ),
        (
            "kernel",
            m.kernel.clone().unwrap_or_else(|| unknown.clone()),
        ),
        (
            "file system of the data directory",
            m.filesystem.clone().unwrap_or_else(|| unknown.clone()),
        ),
    ];
    for (k, v) in rows {
        md.push_str(&format!("| {k} | {} |\n", markdown_escape(&v)));
    }
    md.push_str(
        "\n## Summary (milliseconds)\n\n\
         | series | block size (bytes) | threads | runs | mean | sd | min | median | max |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for s in summaries {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
            markdown_escape(&s.series),
            block_cell(s.block_size),
            s.threads,
            s.runs,
            s.mean * 1e3,
            s.sd * 1e3,
            s.min * 1e3,
            s.median * 1e3,
            s.max * 1e3
        ));
    }
    md.push_str(
        "\nsd is the sample standard deviation (divisor runs - 1).\n\n\
         ## Every run (milliseconds)\n\n\
         | series | block size (bytes) | threads | run | time |\n\
         |---|--:|--:|--:|--:|\n",
    );
    for r in report.runs {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {:.3} |\n",
            markdown_escape(&r.series),
            block_cell(r.block_size),
            r.threads,
            r.run + 1,
            r.seconds * 1e3
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("dd bs=4M (copy)"), "dd bs=4M (copy)");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=cmd()"), "\"'=cmd()\"");
        assert_eq!(csv_field("line\nbreak"), "\"line\nbreak\"");
    }

    #[test]
    fn markdown_cells_cannot_break_the_table_or_inject_html() {
        assert_eq!(
            markdown_escape("a|b <img src=x> *c*\n[l](u)"),
            "a\\|b \\<img src=x\\> \\*c\\* \\[l\\](u)"
        );
    }
}
