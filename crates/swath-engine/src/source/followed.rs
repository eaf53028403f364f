//! A followed file: a log read as it grows, as `tail -F` reads it, by its name in its
//! directory. Only whole lines are read (a line still being written waits for its
//! newline); when the name comes to mean another file (a rotation: `mv a.log a.log.1` and
//! a new `a.log`), the old file is read to its end (its last line too) and the new one from
//! its start; a file that shrinks (`copytruncate`) is read again from its start; a name
//! that is missing for a while is waited for.
//!
//! The log's writer may be another user, who owns the directory and can put anything at
//! the name. So the directory is opened once, at the start (by the path given), and the
//! name is looked at and opened relative to that descriptor only, never through a
//! symbolic link (`O_NOFOLLOW`) and without waiting on a FIFO (`O_NONBLOCK`); a file is
//! followed only if it is a regular file owned by the owner of the file followed before
//! (or by root). Anything else at the name is [`Refused`].

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Compression, SourceError, HEAD_LEN, MAGIC_LEN};
use crate::dirs::{Dir, Links};

/// Why a followed name is not followed: said in one line after its name.
#[derive(Debug)]
pub enum Refused {
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
            Refused::Io(e) => write!(f, "{}", crate::error::os_message(e)),
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

/// What reads the new bytes of a followed file: a reader of whole lines, and the state
/// carried from one read to the next (a W3C log's header line in force), which is
/// forgotten when the file starts again.
pub type ReadNew<'r> =
    dyn FnMut(&mut (dyn Read + Send), &mut Option<Arc<[u8]>>) -> io::Result<()> + 'r;

/// One followed file.
#[derive(Debug)]
pub struct Followed {
    /// The file as named when it was opened (in messages).
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
    /// What the reader carries after them (see [`ReadNew`]).
    carried: Option<Arc<[u8]>>,
}

impl Followed {
    /// Opens the directory of `path` (following the path as given) and the file in it, if
    /// it is there yet; refuses a path that names no file in a directory and what may not
    /// be followed.
    pub fn open(path: &Path) -> Result<Followed, SourceError> {
        let name = path
            .file_name()
            .filter(|_| !path.as_os_str().as_bytes().ends_with(b"/"))
            .ok_or_else(|| SourceError::NotAFileName { name: path.into() })?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = Dir::open(parent).map_err(|cause| SourceError::Read {
            name: path.into(),
            cause,
        })?;
        let mut t = Followed {
            path: path.to_path_buf(),
            dir,
            name: name.to_os_string(),
            file: None,
            id: (0, 0),
            owner: None,
            offset: 0,
            carried: None,
        };
        t.reopen().map_err(|why| SourceError::Refused {
            name: path.into(),
            why,
        })?;
        Ok(t)
    }

    /// The file as named when it was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of the open file read so far (always at a line's end).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// True when a file is open at the name (false while the name is missing).
    pub fn is_open(&self) -> bool {
        self.file.is_some()
    }

    /// The compression the open file is in, by its first bytes (`None`: plain, or no file).
    pub fn codec(&self) -> Option<Compression> {
        let f = self.file.as_ref()?;
        let mut magic = [0u8; MAGIC_LEN];
        let n = f.read_at(&mut magic, 0).unwrap_or(0);
        Compression::of_magic(&magic[..n])
    }

    /// Opens what is at the name now, if it may be followed: a regular file (not through a
    /// link) owned by the owner of the file followed before, or by root.
    pub fn reopen(&mut self) -> Result<(), Refused> {
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
        self.carried = None;
        Ok(())
    }

    /// The open file's first bytes, raw (empty while there is none), at most [`HEAD_LEN`].
    pub(super) fn raw_head(&self) -> Vec<u8> {
        let Some(f) = &self.file else {
            return Vec::new();
        };
        let mut raw = vec![0u8; HEAD_LEN];
        let mut n = 0;
        while n < raw.len() {
            match f.read_at(&mut raw[n..], n as u64) {
                Ok(0) | Err(_) => break,
                Ok(k) => n += k,
            }
        }
        raw.truncate(n);
        raw
    }

    /// Gives the new whole lines of the open file to `read` (and, with `to_end`, a last
    /// line without its newline too: the file will not grow any more).
    fn read_new(&mut self, to_end: bool, read: &mut ReadNew<'_>) -> io::Result<()> {
        let Some(f) = &mut self.file else {
            return Ok(());
        };
        let size = f.metadata()?.len();
        if size < self.offset {
            // Truncated in place: the file starts again.
            self.offset = 0;
            self.carried = None;
        }
        let end = if to_end {
            size
        } else {
            last_line_end(f, self.offset, size)?
        };
        if end > self.offset {
            f.seek(SeekFrom::Start(self.offset))?;
            let mut part = (&mut *f).take(end - self.offset);
            read(&mut part, &mut self.carried)?;
            self.offset = end;
        }
        Ok(())
    }

    /// Follows the name: gives what is new to `read`, and switches to the file the name
    /// now means (the old one read to its end first). `Ok(Err(_))`: the name now holds
    /// what may not be followed.
    pub fn poll(&mut self, read: &mut ReadNew<'_>) -> io::Result<Result<(), Refused>> {
        let now = identity_in(&self.dir, &self.name);
        match (now, self.file.is_some()) {
            (Some(id), true) if id != self.id => {
                // Rotated: the old file to its end, then the new one.
                self.read_new(true, read)?;
                self.file = None;
                crate::pause::at("follow-reopen");
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
        self.read_new(false, read).map(Ok)
    }
}

/// The end of the last whole line in `[from, size)` of `f` (`from` when there is none),
/// found by reading backwards from the end.
fn last_line_end(f: &File, from: u64, size: u64) -> io::Result<u64> {
    let mut buf = crate::buf::PageBuf::zeroed(64 << 10);
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
