//! `swath logs summary --follow SECONDS --html OUT`: keeps reading growing logs, as
//! `tail -F` does, and rewrites the page (atomically, so a browser never reads half of
//! it) every SECONDS; the page reloads itself as often.
//!
//! Each log is followed by its name: only whole lines are read (a line still being
//! written waits for its newline); when the name comes to mean another file (a rotation:
//! `mv a.log a.log.1` and a new `a.log`), the old file is read to its end (its last line
//! too) and the new one from its start; a file that shrinks (`copytruncate`) is read again
//! from its start; a name that is missing for a while is waited for.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use swath_ops::logs::{report_reader, Summary, SummaryConfig};

/// One followed log.
struct Tail {
    path: PathBuf,
    file: Option<File>,
    /// (device, inode) of the open file.
    id: (u64, u64),
    /// Bytes of it read (always at a line's end).
    offset: u64,
}

impl Tail {
    /// Reads the new whole lines of the open file into `s` (and, with `to_end`, a last
    /// line without its newline too: the file will not grow any more).
    fn read_new(
        &mut self,
        config: &SummaryConfig,
        s: &mut Summary,
        to_end: bool,
    ) -> io::Result<()> {
        let Some(f) = &mut self.file else {
            return Ok(());
        };
        let size = f.metadata()?.len();
        if size < self.offset {
            // Truncated in place: the log starts again.
            self.offset = 0;
        }
        let end = if to_end {
            size
        } else {
            last_line_end(f, self.offset, size)?
        };
        if end > self.offset {
            f.seek(SeekFrom::Start(self.offset))?;
            let mut part = (&mut *f).take(end - self.offset);
            let workers = swath_engine::sysinfo::cores();
            report_reader(&mut part, config, workers, 1 << 20, s)?;
            self.offset = end;
        }
        Ok(())
    }

    /// Follows the name: reads what is new, and switches to the file the name now means.
    fn poll(&mut self, config: &SummaryConfig, s: &mut Summary) -> io::Result<()> {
        let now = std::fs::metadata(&self.path)
            .ok()
            .map(|m| (m.dev(), m.ino()));
        match (now, self.file.is_some()) {
            (Some(id), true) if id != self.id => {
                // Rotated: the old file to its end, then the new one.
                self.read_new(config, s, true)?;
                self.file = None;
            }
            _ => {}
        }
        if self.file.is_none() {
            match File::open(&self.path) {
                Ok(f) => {
                    let m = f.metadata()?;
                    if !m.is_file() {
                        return Err(io::Error::other("not a regular file"));
                    }
                    self.id = (m.dev(), m.ino());
                    self.file = Some(f);
                    self.offset = 0;
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        self.read_new(config, s, false)
    }
}

/// The end of the last whole line in `[from, size)` of `f` (`from` when there is none),
/// found by reading backwards from the end.
fn last_line_end(f: &File, from: u64, size: u64) -> io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 64 << 10];
    let mut hi = size;
    while hi > from {
        let lo = hi.saturating_sub(buf.len() as u64).max(from);
        let b = &mut buf[..(hi - lo) as usize];
        f.read_exact_at(b, lo)?;
        if let Some(p) = b.iter().rposition(|&c| c == b'\n') {
            return Ok(lo + p as u64 + 1);
        }
        hi = lo;
    }
    Ok(from)
}

/// Follows `files` forever, writing the page of their summary to `out` every `every`.
/// Returns only on an error (a log that cannot be read, a page that cannot be written).
/// With `pending` (the format to be recognised, and no log had a line yet), nothing is read
/// until a log has lines to recognise it by.
pub(crate) fn follow(
    files: &[PathBuf],
    config: &SummaryConfig,
    pending: bool,
    every: Duration,
    out: &Path,
    how: &crate::cmd::logs::Output<'_>,
) -> Result<std::process::ExitCode> {
    for f in files {
        if f.as_os_str() == "-" {
            anyhow::bail!("--follow reads log files by name, not standard input");
        }
        if let Ok(i) = swath_engine::Input::open(f) {
            if swath_report::logs::compression(&i).is_some() {
                anyhow::bail!("{}: a compressed log cannot be followed", f.display());
            }
        }
    }
    eprintln!(
        "swath logs: following {}; '{}' rewritten every {} s (interrupt to stop)",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        out.display(),
        every.as_secs()
    );
    let mut tails: Vec<Tail> = files
        .iter()
        .map(|p| Tail {
            path: p.clone(),
            file: None,
            id: (0, 0),
            offset: 0,
        })
        .collect();
    let mut s = Summary::default();
    let started = Instant::now();
    let mut config = config.clone();
    let mut pending = pending;
    loop {
        let round = Instant::now();
        if pending {
            // The first log with a line gives the format.
            let head = files
                .iter()
                .filter_map(|f| swath_engine::Input::open(f).ok())
                .map(|i| swath_report::logs::head(&i))
                .find(|h| !h.iter().all(u8::is_ascii_whitespace));
            if let Some(head) = head {
                let (format, _) = swath_report::logs::log_format("auto", &head)
                    .map_err(anyhow::Error::msg)
                    .context(files[0].display().to_string())?;
                config.format = format;
                pending = false;
            }
        }
        if !pending {
            for t in &mut tails {
                t.poll(&config, &mut s)
                    .with_context(|| format!("{}", t.path.display()))?;
            }
        }
        let info = swath_report::summary::PageInfo {
            inputs: tails
                .iter()
                .map(|t| (t.path.display().to_string(), t.offset))
                .collect(),
            generated: crate::cmd::logs::utc_now(),
            parse_seconds: started.elapsed().as_secs_f64(),
            refresh: Some(every.as_secs().max(1)),
        };
        let ranked = s.ranked(how.top, how.statics);
        let model = swath_report::summary::model(&ranked, config.format.name());
        let page = swath_report::summary::html(&model, Some(&info));
        let o = swath_engine::AtomicOutput::create(out)?;
        o.file()
            .write_all(page.as_bytes())
            .with_context(|| format!("cannot write '{}'", out.display()))?;
        o.commit(false)
            .with_context(|| format!("cannot write '{}'", out.display()))?;
        std::thread::sleep(every.saturating_sub(round.elapsed()));
    }
}
