//! Running and timing the demo's commands: one run whose answer is checked, then the timed
//! runs (the first run also warms the cache), and the median of their wall times.
//!
//! Every command runs in the scratch directory with file names relative to it, its standard
//! input from a file or empty, and its standard output and error read through pipes (never
//! `/dev/null`, which GNU grep and swath notice and then skip the work), or its standard
//! output written to a file in the directory when the command's answer is a file (`tr`).

use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::scratch;

/// One command line and how to run it.
#[derive(Clone, Debug)]
pub struct Job {
    program: PathBuf,
    /// How the table names the program (`swath`, `cmp`, ...).
    name: String,
    args: Vec<OsString>,
    stdin: Option<String>,
    stdout: Option<String>,
    /// Outputs removed before each run, so that every run writes a new file.
    outputs: Vec<String>,
    /// Exit statuses that are answers, not failures (`cmp`: 0 and 1).
    statuses: &'static [i32],
}

/// What one run printed.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    pub stdout: Vec<u8>,
    pub status: i32,
}

impl Job {
    /// `program` (shown as `name`) with `args`, expected to exit 0.
    pub fn new(program: &Path, name: &str, args: &[&str]) -> Job {
        Job {
            program: program.to_path_buf(),
            name: name.to_string(),
            args: args.iter().map(OsString::from).collect(),
            stdin: None,
            stdout: None,
            outputs: Vec::new(),
            statuses: &[0],
        }
    }

    /// Exit statuses that are answers.
    pub fn statuses(mut self, statuses: &'static [i32]) -> Job {
        self.statuses = statuses;
        self
    }

    /// Standard input from a file of the scratch directory.
    pub fn stdin(mut self, file: &str) -> Job {
        self.stdin = Some(file.to_string());
        self
    }

    /// Standard output into a file of the scratch directory (removed before each run).
    pub fn stdout(mut self, file: &str) -> Job {
        self.stdout = Some(file.to_string());
        self.outputs.push(file.to_string());
        self
    }

    /// A file the command writes (removed before each run).
    pub fn writes(mut self, file: &str) -> Job {
        self.outputs.push(file.to_string());
        self
    }

    /// The command line as a shell would take it (file names relative to the scratch
    /// directory).
    pub fn shown(&self) -> String {
        let mut s = self.name.clone();
        for a in &self.args {
            s.push(' ');
            s.push_str(&quoted(&a.to_string_lossy()));
        }
        if let Some(i) = &self.stdin {
            s.push_str(&format!(" < {i}"));
        }
        if let Some(o) = &self.stdout {
            s.push_str(&format!(" > {o}"));
        }
        s
    }

    /// Runs the command once in `dir`: its answer and wall time.
    pub fn run(&self, dir: &Path) -> Result<(Answer, Duration)> {
        self.remove_outputs(dir)?;
        let mut c = Command::new(&self.program);
        c.args(&self.args).current_dir(dir).stderr(Stdio::piped());
        match &self.stdin {
            Some(i) => c.stdin(open(&dir.join(i))?),
            None => c.stdin(Stdio::null()),
        };
        match &self.stdout {
            Some(o) => {
                let path = dir.join(o);
                c.stdout(File::create(&path).with_context(|| path.display().to_string())?)
            }
            None => c.stdout(Stdio::piped()),
        };
        let start = Instant::now();
        let child = c
            .spawn()
            .with_context(|| format!("{}: cannot run it", self.program.display()))?;
        scratch::set_child(child.id());
        let out = child.wait_with_output();
        let elapsed = start.elapsed();
        scratch::set_child(0);
        let out = out.with_context(|| format!("{}: lost while running", self.name))?;
        if scratch::interrupted() {
            scratch::wait_for_the_end();
        }
        let status = match (out.status.code(), out.status.signal()) {
            (Some(code), _) if self.statuses.contains(&code) => code,
            (Some(code), _) => bail!(
                "`{}` failed (exit status {code}): {}",
                self.shown(),
                first_line(&out.stderr)
            ),
            (None, sig) => bail!(
                "`{}` was killed by signal {}",
                self.shown(),
                sig.unwrap_or(0)
            ),
        };
        Ok((
            Answer {
                stdout: out.stdout,
                status,
            },
            elapsed,
        ))
    }

    /// Removes the files the command writes, if they are there.
    pub fn remove_outputs(&self, dir: &Path) -> Result<()> {
        for o in &self.outputs {
            match std::fs::remove_file(dir.join(o)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| dir.join(o).display().to_string())
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Runs the command `runs` times after the run that gave `first` (which warmed the
    /// cache); every run must print the same. Returns the median time.
    pub fn time(&self, dir: &Path, first: &Answer, runs: u32) -> Result<Duration> {
        let mut times = Vec::new();
        for _ in 0..runs.max(1) {
            let (answer, t) = self.run(dir)?;
            if &answer != first {
                bail!(
                    "`{}` gave different answers from one run to the next",
                    self.shown()
                );
            }
            times.push(t);
        }
        Ok(median(times))
    }
}

/// The median (the mean of the middle two of an even count).
pub fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    let n = times.len();
    match n {
        0 => Duration::ZERO,
        _ if !n.is_multiple_of(2) => times[n / 2],
        _ => (times[n / 2 - 1] + times[n / 2]) / 2,
    }
}

/// True when the two files hold the same bytes.
pub fn same_contents(a: &Path, b: &Path) -> Result<bool> {
    let mut fa = open(a)?;
    let mut fb = open(b)?;
    let la = fa
        .metadata()
        .with_context(|| a.display().to_string())?
        .len();
    let lb = fb
        .metadata()
        .with_context(|| b.display().to_string())?
        .len();
    if la != lb {
        return Ok(false);
    }
    let mut ba = swath_engine::buf::PageBuf::zeroed(1 << 20);
    let mut bb = swath_engine::buf::PageBuf::zeroed(1 << 20);
    let mut left = la;
    while left > 0 {
        let n = left.min(ba.len() as u64) as usize;
        fa.read_exact(&mut ba[..n])
            .with_context(|| a.display().to_string())?;
        fb.read_exact(&mut bb[..n])
            .with_context(|| b.display().to_string())?;
        if ba[..n] != bb[..n] {
            return Ok(false);
        }
        left -= n as u64;
    }
    Ok(true)
}

fn open(path: &Path) -> Result<File> {
    File::open(path).with_context(|| path.display().to_string())
}

/// The first line of a command's error output, for a one-line message.
fn first_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    match text.lines().find(|l| !l.trim().is_empty()) {
        Some(l) => l.trim().to_string(),
        None => "no message".to_string(),
    }
}

/// `arg` as a shell word: as is when it holds only safe characters, else in single quotes.
fn quoted(arg: &str) -> String {
    let safe = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+%".contains(&b));
    if safe {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let ms = Duration::from_millis;
        assert_eq!(median(vec![ms(5), ms(1), ms(3)]), ms(3));
        assert_eq!(median(vec![ms(4), ms(1), ms(2), ms(10)]), ms(3));
        assert_eq!(median(vec![ms(7)]), ms(7));
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(quoted("text.a"), "text.a");
        assert_eq!(quoted("A-Za-z0-9"), "A-Za-z0-9");
        assert_eq!(quoted("a b"), "'a b'");
        assert_eq!(quoted("it's"), "'it'\\''s'");
    }
}
