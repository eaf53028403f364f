//! `swath logs summary --follow SECONDS --html OUT`: keeps reading growing logs, as
//! `tail -F` does, and rewrites the page (atomically, so a browser never reads half of
//! it) every SECONDS; the page reloads itself as often.
//!
//! Each log is followed by its name in its directory: only whole lines are read (a line
//! still being written waits for its newline); when the name comes to mean another file (a
//! rotation: `mv a.log a.log.1` and a new `a.log`), the old file is read to its end (its
//! last line too) and the new one from its start; a file that shrinks (`copytruncate`) is
//! read again from its start; a name that is missing for a while is waited for.
//!
//! The log's writer may be another user, who owns the directory and can put anything at
//! the name. So the directory is opened once, at the start (by the path given), and the
//! name is looked at and opened relative to that descriptor only, never through a
//! symbolic link (`O_NOFOLLOW`) and without waiting on a FIFO (`O_NONBLOCK`); a file is
//! followed only if it is a regular file owned by the owner of the file followed before
//! (or by root). Anything else at the name ends the follow with one line that names the
//! log and the cause (status 2), after a last page of what was read.
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use swath_engine::dirs::{Dir, Links};
use swath_ops::logs::headers::Header;
use swath_ops::logs::report_reader_after;
use swath_ops::logs::summary::{Summary, SummaryConfig};

/// Why a log is not followed: said in one line after its name.
#[derive(Debug)]
enum Refused {
    /// A symbolic link at the log's name.
    Link,
    /// Not a regular file: what it is.
    NotRegular(&'static str),
    /// A regular file of another owner (the new owner, the one before).
    Owner(u32, u32),
    /// The name cannot be looked at or opened.
    Io(io::Error),
}

/// The kind of a file that is not a regular file, as messages name it.
fn kind_of(t: std::fs::FileType) -> &'static str {
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Link => write!(f, "a symbolic link (not followed: --follow reads a log by its own name)"),
            Refused::NotRegular(kind) => write!(f, "{kind}, not a regular file"),
            Refused::Owner(now, before) => write!(
                f,
                "owned by uid {now}, not by uid {before} as the file followed before (nor by root): not followed"
            ),
            Refused::Io(e) => write!(f, "{}", swath_engine::error::os_message(e)),
        }
    }
}

/// Opens `name` in the directory `dir` for reading: never through a symbolic link, never
/// waiting (a FIFO opens at once, and is then refused as not a regular file). `None` when
/// there is nothing at the name.
fn open_in(dir: &Dir, name: &OsStr) -> Result<Option<File>, Refused> {
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY;
    match dir.open_beneath(name.as_bytes(), flags, 0, Links::Refuse) {
        Ok(f) => Ok(Some(f)),
        Err(e) => match e.raw_os_error() {
            Some(libc::ENOENT) => Ok(None),
            Some(libc::ELOOP) => Err(Refused::Link),
            _ => Err(Refused::Io(e)),
        },
    }
}

/// (device, inode) of what is at `name` in `dir` now, not following a link; `None` when
/// nothing is.
fn identity_in(dir: &Dir, name: &OsStr) -> Option<(u64, u64)> {
    dir.stat_at(name.as_bytes(), Links::Refuse)
        .ok()
        .map(|st| (st.st_dev, st.st_ino))
}

/// One followed log.
pub(crate) struct Tail {
    /// The log as named on the command line (in messages and on the page).
    path: PathBuf,
    /// Its directory, opened at the start.
    dir: Dir,
    /// Its name in `dir`.
    name: OsString,
    file: Option<File>,
    /// (device, inode) of the open file.
    id: (u64, u64),
    /// The owner of the file followed last (`None`: none yet).
    owner: Option<u32>,
    /// Bytes of it read (always at a line's end).
    offset: u64,
    /// The header line in force after them (a W3C log's last `#Fields:` line).
    header: Option<Header>,
}

impl Tail {
    /// Opens the directory of `path` (following the path as given) and the log in it, if
    /// it is there yet; refuses standard input, a link, a file that is not regular, and a
    /// compressed log.
    fn open(path: &Path) -> Result<Tail> {
        let shown = path.display();
        if path.as_os_str() == "-" {
            anyhow::bail!("--follow reads log files by name, not standard input");
        }
        let name = path
            .file_name()
            .filter(|_| !path.as_os_str().as_bytes().ends_with(b"/"))
            .with_context(|| format!("{shown}: not a file name"))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = Dir::open(parent)
            .map_err(|e| anyhow::anyhow!("{shown}: {}", swath_engine::error::os_message(&e)))?;
        let mut t = Tail {
            path: path.to_path_buf(),
            dir,
            name: name.to_os_string(),
            file: None,
            id: (0, 0),
            owner: None,
            offset: 0,
            header: None,
        };
        t.reopen().map_err(|r| anyhow::anyhow!("{shown}: {r}"))?;
        if let Some(f) = &t.file {
            let mut magic = [0u8; swath_report::logs::MAGIC_LEN];
            let n = f.read_at(&mut magic, 0).unwrap_or(0);
            if swath_report::logs::Compression::of_magic(&magic[..n]).is_some() {
                anyhow::bail!("{shown}: a compressed log cannot be followed");
            }
        }
        Ok(t)
    }

    /// Opens what is at the name now, if it may be followed: a regular file (not through a
    /// link) owned by the owner of the file followed before, or by root.
    fn reopen(&mut self) -> Result<(), Refused> {
        let Some(f) = open_in(&self.dir, &self.name)? else {
            return Ok(());
        };
        let m = f.metadata().map_err(Refused::Io)?;
        if !m.is_file() {
            return Err(Refused::NotRegular(kind_of(m.file_type())));
        }
        match self.owner {
            Some(before) if m.uid() != before && m.uid() != 0 => {
                return Err(Refused::Owner(m.uid(), before));
            }
            _ => {}
        }
        self.owner = Some(m.uid());
        self.id = (m.dev(), m.ino());
        self.file = Some(f);
        self.offset = 0;
        self.header = None;
        Ok(())
    }

    /// The first bytes of the log (empty while there is none), to recognise its format by.
    fn head(&self) -> Vec<u8> {
        let Some(f) = &self.file else {
            return Vec::new();
        };
        let mut raw = vec![0u8; swath_report::logs::HEAD_LEN];
        let mut n = 0;
        while n < raw.len() {
            match f.read_at(&mut raw[n..], n as u64) {
                Ok(0) | Err(_) => break,
                Ok(k) => n += k,
            }
        }
        raw.truncate(n);
        swath_report::logs::decoded_head(&raw)
    }

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
            self.header = None;
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
            report_reader_after(&mut part, config, workers, 1 << 20, s, &mut self.header)?;
            self.offset = end;
        }
        Ok(())
    }

    /// Follows the name: reads what is new, and switches to the file the name now means.
    /// `Ok(Err(_))`: the name now holds what may not be followed.
    fn poll(&mut self, config: &SummaryConfig, s: &mut Summary) -> io::Result<Result<(), Refused>> {
        let now = identity_in(&self.dir, &self.name);
        match (now, self.file.is_some()) {
            (Some(id), true) if id != self.id => {
                // Rotated: the old file to its end, then the new one.
                self.read_new(config, s, true)?;
                self.file = None;
                swath_engine::pause::at("follow-reopen");
            }
            _ => {}
        }
        if self.file.is_none() {
            match self.reopen() {
                Ok(()) => {}
                Err(Refused::Io(e)) => return Err(e),
                Err(r) => return Ok(Err(r)),
            }
        }
        self.read_new(config, s, false).map(Ok)
    }
}

/// Opens every log to be followed ([`Tail::open`]): an error names the log and the cause.
pub(crate) fn open_logs(files: &[PathBuf]) -> Result<Vec<Tail>> {
    files.iter().map(|f| Tail::open(f)).collect()
}

/// The first bytes of the first log that has a line, or empty.
pub(crate) fn first_head(tails: &[Tail]) -> Vec<u8> {
    tails
        .iter()
        .map(Tail::head)
        .find(|h| !h.iter().all(u8::is_ascii_whitespace))
        .unwrap_or_default()
}

/// The end of the last whole line in `[from, size)` of `f` (`from` when there is none),
/// found by reading backwards from the end.
fn last_line_end(f: &File, from: u64, size: u64) -> io::Result<u64> {
    let mut buf = swath_engine::buf::PageBuf::zeroed(64 << 10);
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

/// Follows the logs `tails` ([`open_logs`]) forever, writing the page of their summary to
/// `out` every `every`. Returns only on an error (a log that cannot be read, a page that
/// cannot be written) or when a log's name comes to hold what may not be followed (then
/// after a last page). With `pending` (the format to be recognised, and no log had a line
/// yet), nothing is read until a log has lines to recognise it by.
pub(crate) fn follow(
    mut tails: Vec<Tail>,
    config: &SummaryConfig,
    pending: bool,
    every: Duration,
    out: &Path,
    how: &super::Output<'_>,
) -> Result<std::process::ExitCode> {
    eprintln!(
        "swath logs: following {}; '{}' rewritten every {} s (interrupt to stop)",
        tails
            .iter()
            .map(|t| t.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        out.display(),
        every.as_secs()
    );
    let mut s = Summary::default();
    let started = Instant::now();
    let mut config = config.clone();
    let mut pending = pending;
    loop {
        let round = Instant::now();
        // A log that may not be followed (named, and why), after the page of what was read.
        let mut stop = None;
        if pending {
            // The first log with a line gives the format.
            for t in tails.iter_mut().filter(|t| t.file.is_none()) {
                match t.reopen() {
                    Ok(()) => {}
                    Err(Refused::Io(e)) => {
                        return Err(e).with_context(|| t.path.display().to_string())
                    }
                    Err(r) => {
                        stop = Some(format!("{}: {r}", t.path.display()));
                        break;
                    }
                }
            }
            let head = first_head(&tails);
            if !head.is_empty() {
                let (format, _) = swath_report::logs::log_format("auto", &head)
                    .map_err(anyhow::Error::msg)
                    .with_context(|| tails[0].path.display().to_string())?;
                config.format = format;
                pending = false;
            }
        }
        if !pending && stop.is_none() {
            for t in &mut tails {
                let polled = t
                    .poll(&config, &mut s)
                    .with_context(|| t.path.display().to_string())?;
                if let Err(r) = polled {
                    stop = Some(format!("{}: {r}", t.path.display()));
                    break;
                }
            }
        }
        let info = swath_report::summary::PageInfo {
            inputs: tails
                .iter()
                .map(|t| (t.path.display().to_string(), t.offset))
                .collect(),
            generated: super::utc_now(),
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
        if let Some(why) = stop {
            anyhow::bail!("{why}; following stopped");
        }
        std::thread::sleep(every.saturating_sub(round.elapsed()));
    }
}
