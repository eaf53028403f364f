//! Inputs: files and standard input, with the facts the planner needs about them.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::dirs::Links;
use crate::error::EngineError;

/// Whether opening a file may wait for it (a FIFO with no writer, a device waiting for a
/// carrier).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The open waits as `open(2)` does.
    Allowed,
    /// `O_NONBLOCK`: the open returns at once (a regular file or a directory ignores it).
    Never,
}

/// What kind of byte source an input is; decides which read methods can serve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A regular file: its size is known and it supports positional reads and maps.
    Regular,
    /// A pipe, FIFO, terminal, socket or character device: read sequentially only.
    Stream,
}

/// An opened input.
#[derive(Debug)]
pub struct Input {
    /// The path as given, byte for byte (for standard input, the name it was given): what
    /// errors carry.
    path: PathBuf,
    /// `path` for messages (lossy where it is not UTF-8), made once.
    name: String,
    file: File,
    kind: InputKind,
    /// Size in bytes of a regular file at open time.
    len: u64,
    /// Offset at which the data starts: the file position inherited on standard input.
    base: u64,
    dev: u64,
    ino: u64,
    /// Modification time at open (nanoseconds since the epoch), to tell a file rewritten in
    /// place during a run from one left alone.
    mtime: i128,
    /// A descriptor of its own for asking where the holes are (`SEEK_DATA` moves the file
    /// position, which standard input shares with the caller): only for a regular file that
    /// has fewer blocks on disk than its size needs, the only kind that can have holes.
    holes: Option<File>,
    /// Bytes of the file not backed by blocks on disk at open time: its holes, at most.
    hole_bytes: u64,
    /// The file's type at open time.
    file_type: std::fs::FileType,
}

/// A file's modification time in nanoseconds since the epoch.
fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

/// True for a file of the kernel's pseudo-filesystems (`/proc`, `/sys`, ...): "regular"
/// files whose size says 0 or 4096 whatever they hold, so they are read front to back
/// until the end, as a stream, like GNU tools do.
fn on_pseudo_filesystem(file: &File) -> bool {
    const MAGICS: [i64; 8] = [
        0x9fa0,      // proc
        0x6265_6572, // sysfs
        0x6462_6720, // debugfs
        0x7472_6163, // tracefs
        0x6367_7270, // cgroup2
        0x0027_e0eb, // cgroup
        0x7363_6673, // securityfs
        0x6265_6570, // configfs
    ];
    // SAFETY: fstatfs writes into the zeroed struct we own; the descriptor is open.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        libc::fstatfs(file.as_raw_fd(), &mut st) == 0 && MAGICS.contains(&(st.f_type as i64))
    }
}

/// The device of the directory `dir` when it is not on a pseudo file system (`/proc`,
/// `/sys`...), for [`Input::open_found`].
pub fn real_filesystem_dev(dir: &Path) -> Option<u64> {
    let d = File::open(dir).ok()?;
    let dev = d.metadata().ok()?.dev();
    (!on_pseudo_filesystem(&d)).then_some(dev)
}

/// A second open file description of `file` (its own read-ahead state), opened again
/// through `/proc/self/fd`; `None` without `/proc`. [`Input::reopen`] also checks that it is
/// the same file.
pub(crate) fn reopen_file(file: &File) -> Option<File> {
    File::open(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

impl Input {
    /// Opens `path`, or standard input when `path` is `-`, which is also how messages name it.
    ///
    /// A directory opens as a stream whose first read fails with `EISDIR`, so the error comes
    /// at the point GNU tools report it.
    pub fn open(path: &Path) -> Result<Input, EngineError> {
        if path.as_os_str() == "-" {
            return Self::stdin(path.to_string_lossy().into_owned());
        }
        let file = File::open(path).map_err(|e| EngineError::io(path, e))?;
        Self::from_file(path.to_path_buf(), file, false)
    }

    /// Opens `path` for reading a byte range of it (a piece of a partial result): a regular
    /// file only. What the path names is looked at first, and a FIFO, a device or a socket
    /// is refused without being opened ([`EngineError::NotRanged`]), a directory as `Is a
    /// directory`; the open itself never waits ([`Wait::Never`], which a regular file
    /// ignores), and what it opened is checked again, so a FIFO put at the path meanwhile is
    /// refused at once too.
    pub fn open_ranged(path: &Path) -> Result<Input, EngineError> {
        let check = |t: std::fs::FileType| {
            if t.is_dir() {
                Err(EngineError::io(
                    path,
                    io::Error::from_raw_os_error(libc::EISDIR),
                ))
            } else if !t.is_file() {
                Err(EngineError::NotRanged {
                    path: path.to_path_buf(),
                })
            } else {
                Ok(())
            }
        };
        check(
            std::fs::metadata(path)
                .map_err(|e| EngineError::io(path, e))?
                .file_type(),
        )?;
        let input = Self::open_found(path, None, Links::Follow, Wait::Never, None)?;
        check(input.file_type())?;
        Ok(input)
    }

    /// Opens a file found in a tree, or named where a tree is walked: the walk's entry `at`
    /// (its directory held open and its name there, [`crate::walk::At`], with `path` the
    /// entry's path as the walk gave it) when there is one, else `path`, which is also how
    /// messages name it. A symbolic link at its end is
    /// followed or refused (`ELOOP`: a walk that does not follow links must open what it
    /// found, not a link put there since) as `links` says; with [`Wait::Never`] the open
    /// does not wait for a FIFO nobody writes to or a device (GNU grep's `-D skip`: the
    /// caller sees its type, [`Input::file_type`], and leaves it). `real_dev` is the
    /// device of the tree's root when it is known not to be a pseudo file system
    /// ([`real_filesystem_dev`]): a file on that same device is not asked again what file
    /// system it is on (one system call less per file of a tree walk).
    pub fn open_found(
        path: &Path,
        at: Option<&crate::walk::At>,
        links: Links,
        wait: Wait,
        real_dev: Option<u64>,
    ) -> Result<Input, EngineError> {
        let flags = libc::O_RDONLY
            | libc::O_NOCTTY
            | match wait {
                Wait::Allowed => 0,
                Wait::Never => libc::O_NONBLOCK,
            };
        let file = match at {
            Some(at) => at.open(path.as_os_str(), flags, links),
            None => {
                use std::os::unix::fs::OpenOptionsExt;
                let nofollow = match links {
                    Links::Refuse => libc::O_NOFOLLOW,
                    Links::Follow => 0,
                };
                std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(flags | nofollow)
                    .open(path)
            }
        }
        .map_err(|e| EngineError::io(path, e))?;
        Self::from_file_on(path.to_path_buf(), file, false, real_dev)
    }

    /// The file's type when it was opened (no system call).
    pub fn file_type(&self) -> std::fs::FileType {
        self.file_type
    }

    /// Device and inode numbers when it was opened (no system call).
    pub fn identity(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// Wraps standard input (a duplicate of descriptor 0) under the given display name.
    pub fn stdin(name: String) -> Result<Input, EngineError> {
        let fd = io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| EngineError::io(&name, e))?;
        Self::from_file(PathBuf::from(name), File::from(fd), true)
    }

    fn from_file(path: PathBuf, file: File, inherit_position: bool) -> Result<Input, EngineError> {
        Self::from_file_on(path, file, inherit_position, None)
    }

    fn from_file_on(
        path: PathBuf,
        file: File,
        inherit_position: bool,
        real_dev: Option<u64>,
    ) -> Result<Input, EngineError> {
        let meta = file.metadata().map_err(|e| EngineError::io(&path, e))?;
        // Checked as UTF-8 first: faster than the lossy conversion for the common name.
        let name = match path.to_str() {
            Some(s) => s.to_owned(),
            None => path.to_string_lossy().into_owned(),
        };
        let ft = meta.file_type();
        let pseudo = real_dev != Some(meta.dev()) && on_pseudo_filesystem(&file);
        let kind = if ft.is_file() && !pseudo {
            InputKind::Regular
        } else {
            // Pipes, FIFOs, terminals, sockets and devices: read front to back only. A
            // directory opens too (GNU tools report it when reading), and fails with EISDIR.
            InputKind::Stream
        };
        let base = if inherit_position && kind == InputKind::Regular {
            // SAFETY: lseek on a descriptor we own has no memory-safety preconditions.
            let pos = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_CUR) };
            if pos < 0 {
                0
            } else {
                pos as u64
            }
        } else {
            0
        };
        let allocated = meta.blocks().saturating_mul(512);
        let hole_bytes = if kind == InputKind::Regular {
            meta.len().saturating_sub(allocated)
        } else {
            0
        };
        let mut input = Input {
            path,
            name,
            kind,
            len: meta.len(),
            base,
            dev: meta.dev(),
            ino: meta.ino(),
            mtime: mtime_ns(&meta),
            file_type: ft,
            file,
            holes: None,
            hole_bytes,
        };
        if hole_bytes > 0 {
            input.holes = input.reopen();
        }
        Ok(input)
    }

    /// The name used in messages (the path, lossy where it is not UTF-8).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The path as it was given, byte for byte: what the engine's errors carry.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The kind of source.
    pub fn kind(&self) -> InputKind {
        self.kind
    }

    /// The underlying file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Bytes available from the input's start position, for regular files.
    pub fn len(&self) -> Option<u64> {
        match self.kind {
            InputKind::Regular => Some(self.len.saturating_sub(self.base)),
            InputKind::Stream => None,
        }
    }

    /// True when the input is a regular file with no bytes after its start position.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Offset in the underlying file where this input's data starts.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// True when positional reads and maps can serve this input.
    pub fn is_seekable(&self) -> bool {
        self.kind == InputKind::Regular
    }

    /// True when both inputs are the same underlying file (same device and inode).
    pub fn same_file(&self, other: &Input) -> bool {
        self.dev == other.dev && self.ino == other.ino
    }

    /// Bytes of the file that are holes (known zeros, not on disk), estimated at open from
    /// the blocks it has: 0 for streams and fully allocated files.
    pub fn hole_bytes(&self) -> u64 {
        self.hole_bytes
    }

    /// True when the file may have holes worth asking about ([`Input::hole_at`]).
    pub fn may_have_holes(&self) -> bool {
        self.holes.is_some()
    }

    /// When absolute file offset `at` lies in a hole, where the hole ends: the next byte of
    /// data, or the file's size at open when no data follows. `None` when `at` holds data,
    /// or when that cannot be known (a stream, a file system without `SEEK_DATA`, which
    /// then reports all of a file as data).
    ///
    /// Holes are asked about one at a time (`lseek(SEEK_DATA)`), never listed: a file with
    /// millions of extents costs no memory.
    pub fn hole_at(&self, at: u64) -> Option<u64> {
        let fd = self.holes.as_ref()?.as_raw_fd();
        if at >= self.len {
            return None;
        }
        // SAFETY: lseek on a descriptor we own has no memory-safety preconditions.
        let next = unsafe { libc::lseek(fd, at as libc::off_t, libc::SEEK_DATA) };
        if next < 0 {
            // ENXIO: no data at or after `at`, the rest of the file is a hole.
            return (io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO))
                .then_some(self.len);
        }
        let next = next as u64;
        (next > at).then_some(next.min(self.len))
    }

    /// Where the data that holds absolute offset `at` ends: the next hole (or the end of
    /// the file). `None` when unknown.
    pub fn data_end(&self, at: u64) -> Option<u64> {
        let fd = self.holes.as_ref()?.as_raw_fd();
        // SAFETY: lseek on a descriptor we own has no memory-safety preconditions.
        let end = unsafe { libc::lseek(fd, at as libc::off_t, libc::SEEK_HOLE) };
        (end >= 0).then_some(end as u64)
    }

    /// Fails with [`EngineError::Changed`] when the file's size is no longer what it was at
    /// open, and with [`EngineError::Modified`] when its size is but its modification time
    /// is not: for a command that read the bytes the file had then (a copy, a transform), a
    /// file that grew or was rewritten meanwhile would leave the output silently wrong.
    pub fn check_unchanged(&self) -> Result<(), EngineError> {
        self.check_unchanged_since(self.len, self.mtime)
    }

    /// Size and modification time now, as [`Input::check_unchanged_since`] compares them.
    pub fn state(&self) -> Result<(u64, i128), EngineError> {
        self.file
            .metadata()
            .map(|m| (m.len(), mtime_ns(&m)))
            .map_err(|e| EngineError::io(&self.name, e))
    }

    /// Fails as [`Input::check_unchanged`] does when the file's size or modification time
    /// differ from `len` and `mtime` (a stream's are not compared: a pipe's time moves as
    /// it is written).
    pub fn check_unchanged_since(&self, len: u64, mtime: i128) -> Result<(), EngineError> {
        if self.kind != InputKind::Regular {
            return Ok(());
        }
        let (now, now_mtime) = self.state()?;
        if now != len {
            return Err(EngineError::Changed {
                path: (&self.name).into(),
                before: len,
                after: now,
            });
        }
        if now_mtime != mtime {
            return Err(EngineError::Modified {
                path: (&self.name).into(),
            });
        }
        Ok(())
    }

    /// Current size of the underlying file, for detecting changes while reading.
    pub fn current_size(&self) -> Result<u64, EngineError> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| EngineError::io(&self.name, e))
    }

    /// A second open file description of the same file, with its own read-ahead state, so
    /// that a worker reading its own contiguous range is seen by the kernel as one sequential
    /// stream. `None` when the file cannot be reopened (the shared descriptor is used then).
    pub fn reopen(&self) -> Option<File> {
        reopen_file(&self.file).filter(|f| {
            f.metadata()
                .is_ok_and(|m| m.dev() == self.dev && m.ino() == self.ino)
        })
    }

    /// Fills `buf` from absolute file offset `offset`; a short file is [`EngineError::Shrank`].
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), EngineError> {
        self.read_exact_at_via(&self.file, buf, offset)
    }

    /// As [`Input::read_exact_at`], through `file` (this input's own or a [`Input::reopen`]ed
    /// descriptor).
    pub fn read_exact_at_via(
        &self,
        file: &File,
        buf: &mut [u8],
        offset: u64,
    ) -> Result<(), EngineError> {
        let mut done = 0;
        while done < buf.len() {
            match file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => {
                    return Err(EngineError::Shrank {
                        path: (&self.name).into(),
                        expected: offset + buf.len() as u64,
                        found: offset + done as u64,
                    })
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(EngineError::io(&self.name, e)),
            }
        }
        Ok(())
    }

    /// Fills `buf` from absolute file offset `offset` until it is full or the file ends;
    /// returns the bytes read.
    pub fn read_full_at(&self, buf: &mut [u8], offset: u64) -> Result<usize, EngineError> {
        let mut done = 0;
        while done < buf.len() {
            let asked = buf.len() - done;
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => {
                    done += n;
                    // A regular file that gave less than asked, up to its size at open, has
                    // ended there (a file that grew would have given more): no read of
                    // nothing to confirm it (one system call less per small file).
                    if self.kind == InputKind::Regular
                        && n < asked
                        && offset + done as u64 >= self.len
                    {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(EngineError::io(&self.name, e)),
            }
        }
        Ok(done)
    }

    /// Moves the file position (shared with the descriptor this input was duplicated from,
    /// such as standard input) past `consumed` bytes of this input's data, as sequential
    /// reads would have left it; the engine itself reads positionally and moves nothing.
    pub fn mark_consumed(&self, consumed: u64) -> Result<(), EngineError> {
        if self.kind != InputKind::Regular {
            return Ok(());
        }
        let to = (self.base + consumed) as libc::off_t;
        // SAFETY: lseek on a descriptor we own has no memory-safety preconditions.
        if unsafe { libc::lseek(self.file.as_raw_fd(), to, libc::SEEK_SET) } < 0 {
            return Err(EngineError::io(&self.name, io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Issues a zero-length read, which surfaces errors such as `EISDIR` without consuming
    /// data (GNU tools read even when asked for no bytes).
    pub fn probe(&self) -> Result<(), EngineError> {
        let mut buf = [0u8; 0];
        // SAFETY: a zero-length read into a valid (empty) buffer on a descriptor we own.
        let rc = unsafe { libc::read(self.file.as_raw_fd(), buf.as_mut_ptr().cast(), 0) };
        if rc < 0 {
            return Err(EngineError::io(&self.name, io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Reads sequentially until `buf` is full or the input ends; returns the bytes read.
    pub fn read_full(&self, buf: &mut [u8]) -> Result<usize, EngineError> {
        let mut done = 0;
        let mut file = &self.file;
        while done < buf.len() {
            match file.read(&mut buf[done..]) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(EngineError::io(&self.name, e)),
            }
        }
        Ok(done)
    }

    /// Moves the sequential read position `n` bytes forward: a seek on regular files, reading
    /// and discarding on streams. Returns how many bytes were actually skipped (fewer at EOF).
    pub fn skip_sequential(&self, n: u64) -> Result<u64, EngineError> {
        if n == 0 {
            return Ok(0);
        }
        if self.kind == InputKind::Regular {
            let fd = self.file.as_raw_fd();
            // SAFETY: lseek on a descriptor we own has no memory-safety preconditions.
            let pos = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
            if pos >= 0 {
                let size = self.len;
                let target = (pos as u64).saturating_add(n).min(size.max(pos as u64));
                // SAFETY: as above.
                let r = unsafe { libc::lseek(fd, target as libc::off_t, libc::SEEK_SET) };
                if r >= 0 {
                    return Ok(target - pos as u64);
                }
            }
        }
        let mut left = n;
        let mut buf = crate::buf::PageBuf::zeroed(64 * 1024);
        while left > 0 {
            let want = left.min(buf.len() as u64) as usize;
            let got = self.read_full(&mut buf[..want])?;
            left -= got as u64;
            if got < want {
                break;
            }
        }
        Ok(n - left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn opens_regular_file_with_size() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(b"hello").unwrap();
        let input = Input::open(f.path()).unwrap();
        assert_eq!(input.kind(), InputKind::Regular);
        assert_eq!(input.len(), Some(5));
        let mut buf = [0u8; 3];
        input.read_exact_at(&mut buf, 2).unwrap();
        assert_eq!(&buf, b"llo");
        let mut buf = [0u8; 4];
        match input.read_exact_at(&mut buf, 2) {
            Err(EngineError::Shrank { found: 5, .. }) => {}
            other => panic!("{other:?}"),
        }
        let again = input.reopen().expect("reopen through /proc/self/fd");
        let mut buf = [0u8; 2];
        input.read_exact_at_via(&again, &mut buf, 0).unwrap();
        assert_eq!(&buf, b"he");
    }

    #[test]
    fn holes_are_found_without_reading() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let len = 64u64 << 20;
        f.as_file().set_len(len).unwrap();
        let mid = 16u64 << 20;
        f.as_file().write_all_at(b"data", mid).unwrap();
        let input = Input::open(f.path()).unwrap();
        if !input.may_have_holes() {
            // A file system without holes (every byte allocated): nothing to find.
            return;
        }
        assert!(input.hole_bytes() > len / 2);
        assert_eq!(input.hole_at(0), Some(mid));
        assert_eq!(input.hole_at(mid), None);
        let end = input.data_end(mid).unwrap();
        assert!(end > mid && end < len, "{end}");
        assert_eq!(input.hole_at(end), Some(len));
        assert_eq!(input.hole_at(len), None);
        // A fully written file has none.
        let mut g = tempfile::NamedTempFile::new().unwrap();
        g.write_all(&[1u8; 10000]).unwrap();
        g.as_file().sync_all().unwrap();
        let dense = Input::open(g.path()).unwrap();
        assert!(!dense.may_have_holes());
        assert_eq!(dense.hole_at(0), None);
    }

    #[test]
    fn directory_fails_on_read_with_eisdir() {
        let dir = tempfile::tempdir().unwrap();
        let input = Input::open(dir.path()).unwrap();
        assert_eq!(input.kind(), InputKind::Stream);
        let err = input.read_full(&mut [0u8; 10]).unwrap_err();
        assert!(err.to_string().ends_with(": Is a directory"), "{err}");
    }

    #[test]
    fn missing_file_names_file_and_cause() {
        let err = Input::open(Path::new("/nonexistent/swath-x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/nonexistent/swath-x: No such file or directory"
        );
    }

    #[test]
    fn skip_sequential_stops_at_eof() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(b"0123456789").unwrap();
        let input = Input::open(f.path()).unwrap();
        assert_eq!(input.skip_sequential(4).unwrap(), 4);
        let mut buf = [0u8; 3];
        assert_eq!(input.read_full(&mut buf).unwrap(), 3);
        assert_eq!(&buf, b"456");
        assert_eq!(input.skip_sequential(100).unwrap(), 3);
    }
}
