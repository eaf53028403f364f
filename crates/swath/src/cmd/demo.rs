//! `swath demo`: every command beside the tool it replaces, on generated data, in one table.
//!
//! The demo makes a private scratch directory (see [`crate::scratch`]), generates its data there
//! (random text of `--size` bytes, an identical copy and a copy with one difference near the
//! end; a smaller text for `wc`; an access log; an old and a new version of a file), then for
//! each row runs the swath command and its peer once, checks that their answers agree, and
//! only then times both (`--runs` runs each, the median). Peers come from `PATH`; one that is
//! missing is shown as "not installed" and its row still times swath. Answers that differ
//! are shown in the table, said again on standard error, and make the demo exit 1.
//!
//! The slower peers get smaller data so that the whole demo stays short: GNU wc reads an
//! eighth of the text, GoAccess and swath a log of a thirty-second (at least 1 MiB), the
//! patch rows a sixteenth. The table gives every row's size.

mod table;
mod timing;

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use swath_gen::Mutation;

use crate::scratch::{self, Scratch};
use crate::size::parse_size;
use table::{Check, Row};
use timing::{same_contents, Answer, Job};

/// Arguments of `swath demo`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  swath demo                      640,000,000 bytes of text (610 MiB), under two minutes on 2 cores
  swath demo --size 100M --json   smaller, as one JSON object")]
pub struct DemoArgs {
    /// Size of the test text (suffixes such as 100M or 1G accepted; at least 1M). The rows
    /// whose peer is slow use a fraction of it, named in the table.
    #[arg(long, default_value = "640000000", value_parser = size_arg)]
    size: u64,
    /// Timed runs of each command, after the run that checks the answers.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    runs: u32,
    /// Print the results as JSON (docs/json.md).
    #[arg(long)]
    json: bool,
}

/// The smallest `--size`: below it the smaller files would hold too little to time.
const MIN_SIZE: u64 = 1 << 20;

fn size_arg(s: &str) -> Result<u64, String> {
    match parse_size(s) {
        Ok(v) if v >= MIN_SIZE => Ok(v),
        Ok(_) => Err(format!("'{s}' is too small: the demo needs at least 1M")),
        Err(_) => Err(crate::size::invalid_size(s)),
    }
}

/// The generated files, by name in the scratch directory.
const TEXT: &str = "text";
const SAME: &str = "text.copy";
const DIFF: &str = "text.changed";
const WORDS: &str = "words";
const LOG: &str = "access.log";
const OLD: &str = "release-1";
const NEW: &str = "release-2";

/// How much data each kind of row reads.
struct Sizes {
    text: u64,
    words: u64,
    log: u64,
    release: u64,
}

impl Sizes {
    /// The fractions `table::SMALLER_ROWS` explains.
    fn new(size: u64) -> Sizes {
        Sizes {
            text: size,
            words: size / 8,
            log: (size / 32).max(1 << 20),
            release: size / 16,
        }
    }
}

/// Runs the demo.
pub fn run(args: DemoArgs) -> Result<()> {
    let scratch = Scratch::new(&std::env::temp_dir(), "swath-demo.", |_| {})?;
    let shown = scratch.path().display().to_string();
    let result = Demo::new(&scratch, args.runs).and_then(|mut d| d.all_rows(args.size));
    if scratch::interrupted() {
        scratch::wait_for_the_end();
    }
    let removed = scratch.remove();
    let rows = result?;
    removed?;
    let text = if args.json {
        table::json(&rows, args.runs, args.size)
    } else {
        table::text(&rows, args.runs, &shown)
    };
    crate::stdout::print_all("swath demo", text.as_bytes())?;
    let differ: Vec<&str> = rows
        .iter()
        .filter(|r| matches!(r.check, Check::Different(_)))
        .map(|r| r.command.as_str())
        .collect();
    if !differ.is_empty() {
        bail!(
            "ANSWERS DIFFER: swath and its peer disagree on {} (see the table)",
            differ.join("; ")
        );
    }
    Ok(())
}

/// A progress line, on standard error when it is a terminal.
fn progress(what: &str) {
    if std::io::stderr().is_terminal() {
        eprintln!("swath demo: {what}");
    }
}

/// What a row's check found.
enum Verdict {
    /// The answers agree; the note says what was compared.
    Same(String),
    /// They do not: what differs.
    Different(String),
}

/// The demo's state: where it runs, which swath, and the swath runs already timed (the two
/// grep rows share one).
struct Demo<'a> {
    dir: &'a Path,
    scratch: &'a Scratch,
    swath: PathBuf,
    runs: u32,
    timed: HashMap<String, (Answer, Duration)>,
}

impl<'a> Demo<'a> {
    fn new(scratch: &'a Scratch, runs: u32) -> Result<Demo<'a>> {
        let swath = std::env::current_exe().context("cannot find the swath program itself")?;
        Ok(Demo {
            dir: scratch.path(),
            scratch,
            swath,
            runs,
            timed: HashMap::new(),
        })
    }

    fn swath(&self, args: &[&str]) -> Job {
        Job::new(&self.swath, "swath", args)
    }

    /// The peer `tool` from PATH (not swath itself through a link named like it).
    fn peer(&self, tool: &str) -> Option<PathBuf> {
        let me = std::fs::canonicalize(&self.swath).ok();
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .filter(|d| d.is_absolute())
            .map(|d| d.join(tool))
            .filter(|p| p.is_file())
            .find(|p| std::fs::canonicalize(p).ok() != me)
    }

    fn all_rows(&mut self, size: u64) -> Result<Vec<Row>> {
        let sizes = Sizes::new(size);
        progress(&format!("generating test data in {}", self.dir.display()));
        self.generate(&sizes)?;
        let mut rows = Vec::new();
        for (label, other) in [
            ("cmp, identical files", SAME),
            ("cmp, one difference near the end", DIFF),
        ] {
            let peer = self
                .peer("cmp")
                .map(|p| Job::new(&p, "cmp", &[TEXT, other]).statuses(&[0, 1]));
            let swath = self.swath(&["cmp", TEXT, other]).statuses(&[0, 1]);
            rows.push(self.row(label, "GNU cmp", sizes.text, swath, peer, same_stdout)?);
        }
        let peer = self.peer("wc").map(|p| Job::new(&p, "wc", &[WORDS]));
        let swath = self.swath(&["wc", WORDS]);
        rows.push(self.row("wc", "GNU wc", sizes.words, swath, peer, same_stdout)?);

        let word = self.grep_word()?;
        let label = format!("grep -c -F {word}");
        let peer = self
            .peer("grep")
            .map(|p| Job::new(&p, "grep", &["-c", "-F", &word, TEXT]));
        let swath = self.swath(&["grep", "-c", "-F", &word, TEXT]);
        rows.push(self.row(
            &label,
            "GNU grep",
            sizes.text,
            swath.clone(),
            peer,
            same_stdout,
        )?);
        let peer = self
            .peer("rg")
            .map(|p| Job::new(&p, "rg", &["-c", "-F", &word, TEXT]));
        rows.push(self.row(&label, "ripgrep", sizes.text, swath, peer, same_stdout)?);

        rows.push(self.cipher_row(&sizes)?);
        rows.push(self.cp_row(&sizes)?);
        rows.push(self.logs_row()?);
        rows.push(self.patch_row()?);
        Ok(rows)
    }

    fn generate(&self, sizes: &Sizes) -> Result<()> {
        let f = |name| self.scratch.file(name);
        swath_gen::text(&f(TEXT), sizes.text, 1)?;
        std::fs::copy(f(TEXT), f(SAME)).with_context(|| f(SAME).display().to_string())?;
        let m = Mutation {
            diffs: 1,
            at: vec![sizes.text - sizes.text / 100],
            seed: 1,
            resize: None,
        };
        swath_gen::mutate(&f(TEXT), &f(DIFF), &m)?;
        swath_gen::text(&f(WORDS), sizes.words, 1)?;
        let raw = f("access-raw.log");
        swath_gen::log::generate(&raw, sizes.log, 1, false)?;
        keep_lines_goaccess_reads(&raw, &f(LOG))?;
        std::fs::remove_file(&raw).with_context(|| raw.display().to_string())?;
        swath_gen::text(&f(OLD), sizes.release, 2)?;
        let revision = swath_gen::edits::Revision {
            insertions: 16,
            deletions: 16,
            moves: 8,
            duplicates: 8,
            zero_runs: 4,
            max_len: 64 << 10,
            noise: 0,
            seed: 1,
        };
        swath_gen::edits::revise(&f(OLD), &f(NEW), &revision)?;
        Ok(())
    }

    /// Bytes of a generated file.
    fn len(&self, name: &str) -> Result<u64> {
        let p = self.scratch.file(name);
        Ok(std::fs::metadata(&p)
            .with_context(|| p.display().to_string())?
            .len())
    }

    /// A row: both commands run once and their answers checked by `check`; when they agree,
    /// both timed.
    fn row(
        &mut self,
        command: &str,
        peer_name: &str,
        data_bytes: u64,
        swath: Job,
        peer: Option<Job>,
        check: impl FnOnce(&Demo, &Answer, &Answer) -> Result<Verdict>,
    ) -> Result<Row> {
        progress(&format!("{command}: swath and {peer_name}"));
        let key = swath.shown();
        let cached = self
            .timed
            .get(&key)
            .map(|(a, t)| (a.stdout.clone(), a.status, *t));
        let (swath_answer, swath_time) = match cached {
            Some((stdout, status, t)) => (Answer { stdout, status }, Some(t)),
            None => (swath.run(self.dir)?.0, None),
        };
        let mut row = Row {
            command: command.to_string(),
            peer: peer_name.to_string(),
            swath_line: swath.shown(),
            peer_line: peer.as_ref().map_or(String::new(), |p| p.shown()),
            data_bytes,
            swath_time: None,
            peer_time: None,
            check: Check::NotInstalled,
            note: format!("{peer_name} is not installed: swath alone was timed"),
        };
        let peer_answer = match &peer {
            Some(p) => Some(p.run(self.dir)?.0),
            None => None,
        };
        if let Some(pa) = &peer_answer {
            match check(self, &swath_answer, pa)? {
                Verdict::Same(note) => {
                    row.check = Check::Same;
                    row.note = note;
                }
                Verdict::Different(what) => {
                    row.check = Check::Different(what);
                    row.note = format!("the answers of swath and {peer_name} differ");
                    return Ok(row);
                }
            }
        }
        let t = match swath_time {
            Some(t) => t,
            None => swath.time(self.dir, &swath_answer, self.runs)?,
        };
        self.timed.insert(key, (swath_answer, t));
        row.swath_time = Some(t);
        if let (Some(p), Some(pa)) = (&peer, &peer_answer) {
            row.peer_time = Some(p.time(self.dir, pa, self.runs)?);
        }
        // The outputs are no longer needed: their room is the next row's.
        swath.remove_outputs(self.dir)?;
        if let Some(p) = &peer {
            p.remove_outputs(self.dir)?;
        }
        Ok(row)
    }

    /// A word of the text that certainly occurs in it: the longest of its first words.
    fn grep_word(&self) -> Result<String> {
        let p = self.scratch.file(TEXT);
        let mut head = Vec::new();
        std::fs::File::open(&p)
            .and_then(|f| f.take(64 << 10).read_to_end(&mut head))
            .with_context(|| p.display().to_string())?;
        let mut best: &[u8] = b"";
        for w in head
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .take(100)
        {
            if w.len() > best.len() {
                best = w;
            }
        }
        match std::str::from_utf8(best) {
            Ok(w) if !w.is_empty() => Ok(w.to_string()),
            _ => bail!(
                "{}: no word to search for in the generated text",
                p.display()
            ),
        }
    }

    fn cipher_row(&mut self, sizes: &Sizes) -> Result<Row> {
        let swath = self
            .swath(&[
                "cipher",
                "--alphabet",
                "--shift",
                "13",
                TEXT,
                "text.swath-cipher",
            ])
            .writes("text.swath-cipher");
        // The same mapping: letters by 13 within their case, digits by 13 mod 10 = 3.
        let peer = self.peer("tr").map(|p| {
            Job::new(&p, "tr", &["A-Za-z0-9", "N-ZA-Mn-za-m3-90-2"])
                .stdin(TEXT)
                .stdout("text.tr")
        });
        self.row(
            "cipher --alphabet --shift 13",
            "tr",
            sizes.text,
            swath,
            peer,
            |d, _, _| {
                Ok(
                    if same_contents(
                        &d.scratch.file("text.swath-cipher"),
                        &d.scratch.file("text.tr"),
                    )? {
                        Verdict::Same(
                            "the same output bytes as tr with the same mapping (letters rotated \
                         by 13, digits by 3)"
                                .into(),
                        )
                    } else {
                        Verdict::Different("the two output files differ".into())
                    },
                )
            },
        )
    }

    fn cp_row(&mut self, sizes: &Sizes) -> Result<Row> {
        let swath = self.swath(&["cp", TEXT, "copy.swath"]).writes("copy.swath");
        let peer = self
            .peer("cp")
            .map(|p| Job::new(&p, "cp", &[TEXT, "copy.cp"]).writes("copy.cp"));
        self.row("cp", "GNU cp", sizes.text, swath, peer, |d, _, _| {
            let original = d.scratch.file(TEXT);
            for copy in ["copy.swath", "copy.cp"] {
                if !same_contents(&original, &d.scratch.file(copy))? {
                    return Ok(Verdict::Different(format!("{copy} differs from {TEXT}")));
                }
            }
            Ok(Verdict::Same("both copies equal the original".into()))
        })
    }

    fn logs_row(&mut self) -> Result<Row> {
        let swath = self.swath(&["logs", "summary", "--json", LOG]);
        let peer = self.peer("goaccess").map(|p| {
            Job::new(
                &p,
                "goaccess",
                &[
                    LOG,
                    "--log-format=COMBINED",
                    "--no-global-config",
                    "-o",
                    "goaccess.json",
                ],
            )
            .writes("goaccess.json")
        });
        let bytes = self.len(LOG)?;
        self.row("logs summary", "GoAccess", bytes, swath, peer, |d, s, _| {
            logs_verdict(&s.stdout, &d.scratch.file("goaccess.json"))
        })
    }

    fn patch_row(&mut self) -> Result<Row> {
        let swath = self
            .swath(&["patch", "make", OLD, NEW, "patch.swath"])
            .writes("patch.swath");
        let old_len = self.len(OLD)?;
        let peer = self.peer("xdelta3").map(|p| {
            // xdelta3 looks for matches in a window of OLD, 64 MiB unless told: the whole
            // of a larger OLD, so that its patch is not bigger than it need be.
            let window = old_len.div_ceil(1 << 20).clamp(64, 2048) << 20;
            let window = window.to_string();
            Job::new(
                &p,
                "xdelta3",
                &["-e", "-f", "-B", &window, "-s", OLD, NEW, "patch.xdelta3"],
            )
            .writes("patch.xdelta3")
        });
        let bytes = self.len(NEW)?.max(old_len);
        self.row("patch make", "xdelta3", bytes, swath, peer, |d, _, _| {
            d.patch_verdict()
        })
    }

    /// Applies both patches; both must rebuild NEW.
    fn patch_verdict(&self) -> Result<Verdict> {
        let apply = self
            .swath(&["patch", "apply", OLD, "patch.swath", "new.swath"])
            .writes("new.swath");
        apply.run(self.dir)?;
        let Some(xdelta3) = self.peer("xdelta3") else {
            bail!("xdelta3 disappeared while the demo ran");
        };
        let unpatch = Job::new(
            &xdelta3,
            "xdelta3",
            &["-d", "-f", "-s", OLD, "patch.xdelta3", "new.xdelta3"],
        )
        .writes("new.xdelta3");
        unpatch.run(self.dir)?;
        let new = self.scratch.file(NEW);
        for (made, by) in [
            ("new.swath", "swath patch apply"),
            ("new.xdelta3", "xdelta3 -d"),
        ] {
            if !same_contents(&new, &self.scratch.file(made))? {
                return Ok(Verdict::Different(format!("{by} did not rebuild {NEW}")));
            }
        }
        apply.remove_outputs(self.dir)?;
        unpatch.remove_outputs(self.dir)?;
        let (s, x) = (self.len("patch.swath")?, self.len("patch.xdelta3")?);
        Ok(Verdict::Same(format!(
            "both patches rebuild {NEW} byte for byte (swath patch apply, xdelta3 -d); \
             swath's patch is {} bytes, xdelta3's {} ({:.2} of its size); the times are \
             of making them",
            thousands(s),
            thousands(x),
            s as f64 / (x as f64).max(1.0)
        )))
    }
}

/// Equal standard output and exit status.
fn same_stdout(_: &Demo, swath: &Answer, peer: &Answer) -> Result<Verdict> {
    if swath == peer {
        let what = String::from_utf8_lossy(&swath.stdout);
        let what = what.trim();
        Ok(Verdict::Same(format!(
            "the same output and exit status ({})",
            if what.is_empty() {
                format!("no output, status {}", swath.status)
            } else {
                format!("\"{}\", status {}", shorten(what), swath.status)
            }
        )))
    } else {
        Ok(Verdict::Different(format!(
            "swath printed \"{}\" (status {}), the peer \"{}\" (status {})",
            shorten(String::from_utf8_lossy(&swath.stdout).trim()),
            swath.status,
            shorten(String::from_utf8_lossy(&peer.stdout).trim()),
            peer.status
        )))
    }
}

/// The figures both reports hold: swath's `--json` header against GoAccess's `general`.
fn logs_verdict(swath_json: &[u8], goaccess_json: &Path) -> Result<Verdict> {
    let s: serde_json::Value =
        serde_json::from_slice(swath_json).context("swath logs summary --json: not JSON")?;
    let text = std::fs::read(goaccess_json).with_context(|| goaccess_json.display().to_string())?;
    let g: serde_json::Value = serde_json::from_slice(&text)
        .with_context(|| format!("{}: not JSON", goaccess_json.display()))?;
    let field = |v: &serde_json::Value, who: &str, key: &str| -> Result<u64> {
        v["general"][key]
            .as_u64()
            .with_context(|| format!("{who}'s JSON report has no general.{key}"))
    };
    let pairs = [
        (
            "requests read",
            field(&s, "swath", "lines_valid")? + field(&s, "swath", "lines_failed")?,
            field(&g, "GoAccess", "total_requests")?,
        ),
        (
            "valid requests",
            field(&s, "swath", "requests")?,
            field(&g, "GoAccess", "valid_requests")?,
        ),
        (
            "failed lines",
            field(&s, "swath", "lines_failed")?,
            field(&g, "GoAccess", "failed_requests")?,
        ),
        (
            "bytes sent",
            field(&s, "swath", "bytes")?,
            field(&g, "GoAccess", "bandwidth")?,
        ),
    ];
    let differ: Vec<String> = pairs
        .iter()
        .filter(|(_, a, b)| a != b)
        .map(|(what, a, b)| format!("{what}: swath {a}, GoAccess {b}"))
        .collect();
    if !differ.is_empty() {
        return Ok(Verdict::Different(differ.join("; ")));
    }
    let listed: Vec<String> = pairs
        .iter()
        .map(|(what, a, _)| format!("{what} {}", thousands(*a)))
        .collect();
    Ok(Verdict::Same(format!(
        "the same totals in both JSON reports ({}); the log holds only lines GoAccess reads \
         (IPv4 clients, none malformed or over 4,000 bytes), so the totals must agree",
        listed.join(", ")
    )))
}

/// The longest line kept in the demo's log: GoAccess reads lines into a 4096-byte buffer and
/// takes the rest of a longer one as another line.
const GOACCESS_LINE: usize = 4000;

/// Copies the lines of the generated log that GoAccess reads as requests: a client that is
/// an IPv4 address (it rejects host names and, in the combined format, IPv6 clients), only
/// printable ASCII, at most [`GOACCESS_LINE`] bytes, ending with the user agent's closing
/// quote. The generator's malformed lines, very long lines and host-name clients are left
/// out, so that both reports must count alike.
fn keep_lines_goaccess_reads(raw: &Path, out: &Path) -> Result<()> {
    let input = std::fs::File::open(raw).with_context(|| raw.display().to_string())?;
    let mut input = swath_engine::PageReader::with_capacity(1 << 20, input);
    let file = std::fs::File::create(out).with_context(|| out.display().to_string())?;
    let mut output = swath_engine::PageWriter::with_capacity(1 << 20, file);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = input
            .read_until(b'\n', &mut line)
            .with_context(|| raw.display().to_string())?;
        if n == 0 {
            break;
        }
        let Some(body) = line.strip_suffix(b"\n") else {
            continue;
        };
        let client = body.split(|&b| b == b' ').next().unwrap_or(b"");
        let ipv4 = std::str::from_utf8(client)
            .ok()
            .is_some_and(|c| c.parse::<std::net::Ipv4Addr>().is_ok());
        if ipv4
            && body.len() <= GOACCESS_LINE
            && body.ends_with(b"\"")
            && body.iter().all(|&b| (b' '..=b'~').contains(&b))
        {
            output
                .write_all(&line)
                .with_context(|| out.display().to_string())?;
        }
    }
    output.flush().with_context(|| out.display().to_string())?;
    Ok(())
}

/// At most 80 characters of an answer, for a message.
fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(80).collect();
    if s.chars().count() > 80 {
        out.push_str("...");
    }
    out.replace('\n', " ")
}

/// 1234567 as "1,234,567" (the reports' grouping).
fn thousands(n: u64) -> String {
    swath_report::summary::grouped(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(640_000_000), "640,000,000");
    }

    #[test]
    fn the_log_keeps_only_lines_goaccess_reads() {
        let dir = tempfile::tempdir().unwrap();
        let raw = dir.path().join("raw");
        let good =
            "1.2.3.4 - - [01/Oct/2007:00:00:00 -0700] \"GET / HTTP/1.1\" 200 5 \"-\" \"a\"\n";
        let host =
            "example.com - - [01/Oct/2007:00:00:00 -0700] \"GET / HTTP/1.1\" 200 5 \"-\" \"a\"\n";
        let v6 = "::1 - - [01/Oct/2007:00:00:00 -0700] \"GET / HTTP/1.1\" 200 5 \"-\" \"a\"\n";
        let cut = "1.2.3.4 - - [01/Oct/2007:00:00:00 -0700] \"GET / HT\n";
        let crlf =
            "1.2.3.4 - - [01/Oct/2007:00:00:00 -0700] \"GET / HTTP/1.1\" 200 5 \"-\" \"a\"\r\n";
        let unended =
            "1.2.3.4 - - [01/Oct/2007:00:00:00 -0700] \"GET / HTTP/1.1\" 200 5 \"-\" \"a\"";
        // Longer than GoAccess's line buffer (it would count two lines).
        let long = format!(
            "1.2.3.4 - - [01/Oct/2007:00:00:00 -0700] \"GET /?{} HTTP/1.1\" 200 5 \"-\" \"a\"\n",
            "N".repeat(5000)
        );
        let raw_text = [good, host, v6, cut, crlf, &long, good, unended].concat();
        std::fs::write(&raw, raw_text).unwrap();
        let out = dir.path().join("out");
        keep_lines_goaccess_reads(&raw, &out).unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            [good, good].concat()
        );
    }

    #[test]
    fn logs_verdict_compares_the_four_totals() {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path().join("g.json");
        std::fs::write(
            &g,
            r#"{"general":{"total_requests":10,"valid_requests":9,"failed_requests":1,"bandwidth":500}}"#,
        )
        .unwrap();
        let agree = br#"{"general":{"lines_valid":9,"lines_failed":1,"requests":9,"bytes":500}}"#;
        assert!(
            matches!(logs_verdict(agree, &g).unwrap(), Verdict::Same(n) if n.contains("requests read 10"))
        );
        let off = br#"{"general":{"lines_valid":9,"lines_failed":1,"requests":9,"bytes":501}}"#;
        match logs_verdict(off, &g).unwrap() {
            Verdict::Different(d) => assert_eq!(d, "bytes sent: swath 501, GoAccess 500"),
            Verdict::Same(n) => panic!("agreed: {n}"),
        }
        assert!(logs_verdict(b"{}", &g).is_err());
    }

    #[test]
    fn sizes_give_the_slow_peers_less() {
        let s = Sizes::new(640_000_000);
        assert_eq!(
            (s.text, s.words, s.log, s.release),
            (640_000_000, 80_000_000, 20_000_000, 40_000_000)
        );
        assert_eq!(Sizes::new(1 << 20).log, 1 << 20);
    }

    #[test]
    fn sizes_below_one_mebibyte_are_refused() {
        assert!(size_arg("1M").is_ok());
        assert!(size_arg("4K").unwrap_err().contains("at least 1M"));
        assert!(size_arg("lots").is_err());
    }
}
