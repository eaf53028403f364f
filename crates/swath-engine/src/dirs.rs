//! Directories held by descriptor ([`Dir`]), and everything swath does in one: opening what
//! lies beneath it at any depth (a path longer than PATH_MAX is resolved a piece at a
//! time), following links or none; reading its names; making, linking, renaming and
//! removing its entries and setting their modes and times; removing a whole tree.
//!
//! What swath does in a directory after looking at it happens in the directory it looked
//! at, whatever another user renames or swaps on the path meanwhile: every later step is a
//! system call relative to the descriptor (`openat`, `linkat`, `renameat`, `unlinkat`, ...),
//! never a whole path resolved again from the working directory, so an open cannot be
//! redirected, and a tree deeper than PATH_MAX is as reachable as a shallow one. The walk
//! of [`crate::walk`], the outputs of [`crate::output`], in-place rewrites and their
//! journals, swath patch's trees and `swath logs --follow` all go through here.
//!
//! [`Dir::open`] resolves a path as the kernel does, links included: for the directories a
//! user named. [`Dir::open_nofollow`] follows no link on the way (`openat2` with
//! `RESOLVE_NO_SYMLINKS` where the kernel has it, else one `O_NOFOLLOW` open per component,
//! each checked with `fstat` to be a directory): for a path swath found itself (the
//! resolution of a link), which no link planted later may redirect. Beneath a directory,
//! [`Links::Refuse`] follows no link at all and never leaves it (`RESOLVE_BENEATH`).
//!
//! The system calls are rustix's safe wrappers; libc is used only for its constants (the
//! `O_*` flags callers pass, as `open(2)` names them).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

pub use rustix::fs::{Access, FileType, Stat};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags, ResolveFlags, Timespec, Timestamps, CWD};

/// Whether symbolic links met while opening are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// No link is followed, on the way or at the end (a link is `ELOOP`), and the path may
    /// not leave the directory it is resolved from (`RESOLVE_BENEATH`).
    Refuse,
    /// Links are followed, as a plain `openat` follows them (`grep -R`).
    Follow,
}

/// Whether a rename may replace what is at the new name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// As `rename(2)`: a file, or an empty directory, at the new name is replaced.
    Allow,
    /// `RENAME_NOREPLACE`: anything at the new name is `EEXIST`.
    Never,
}

/// Bytes of a path the kernel resolves in one call (PATH_MAX, its NUL included).
const PATH_MAX: usize = libc::PATH_MAX as usize;

/// Set once `openat2` turned out to be missing (or forbidden by a filter).
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// A place in which to open, make and rename entries: only a handle for the `*at` calls
/// (`O_PATH`), so that a directory the user may write and search but not list can hold an
/// output too.
const PLACE: libc::c_int = libc::O_PATH | libc::O_DIRECTORY;

/// A directory opened to read its names and open beneath it.
const LISTING: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOCTTY | libc::O_NONBLOCK;

/// A directory on the way to what is opened beneath it: a handle that follows no link.
const ON_WAY: libc::c_int = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;

/// `open(2)` flags (`libc::O_*`) as rustix takes them, with `O_CLOEXEC` added.
fn oflags(flags: libc::c_int) -> OFlags {
    OFlags::from_bits_retain(flags as _) | OFlags::CLOEXEC
}

fn errno(e: libc::c_int) -> io::Error {
    io::Error::from_raw_os_error(e)
}

/// `openat(dir, name, flags, mode)`, `O_CLOEXEC` added.
fn openat(dir: BorrowedFd<'_>, name: &[u8], flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        dir,
        name,
        oflags(flags),
        Mode::from_raw_mode(mode as _),
    )?)
}

/// Opens `comps` one at a time from `start`, none of them through a link: every one but
/// the last as a directory handle (`O_PATH | O_DIRECTORY | O_NOFOLLOW`, checked with
/// `fstat` to be a directory), the last with `last` (and `mode`). For kernels without
/// `openat2`.
fn open_components(
    start: BorrowedFd<'_>,
    comps: &[&[u8]],
    last: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    let mut cur: Option<OwnedFd> = None;
    for (k, comp) in comps.iter().enumerate() {
        let at = cur.as_ref().map_or(start, |c| c.as_fd());
        let is_last = k + 1 == comps.len();
        let fd = openat(at, comp, if is_last { last } else { ON_WAY }, mode)?;
        // An O_PATH open with O_NOFOLLOW may return the link itself: only a directory is
        // taken on the way.
        if !is_last && FileType::from_raw_mode(fstat(&fd)?.st_mode) != FileType::Directory {
            return Err(errno(libc::ELOOP));
        }
        cur = Some(fd);
    }
    cur.ok_or_else(|| errno(libc::EINVAL))
}

/// A directory held open by descriptor.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

impl Dir {
    /// Opens the directory `path` as the kernel resolves it (links followed, as for any
    /// path the user named) as a place for the `*at` calls (`O_PATH`: its names cannot be
    /// read through it); an empty path is the current directory.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let path = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        let fd = openat(CWD, path.as_os_str().as_bytes(), PLACE, 0)?;
        Ok(Dir { fd })
    }

    /// Opens the directory at `path`, as the user named it (a link there is followed, as
    /// GNU tools follow their operands), for reading its names and opening beneath it.
    pub fn open_to_list(path: &Path) -> io::Result<Dir> {
        let fd = openat(CWD, path.as_os_str().as_bytes(), LISTING, 0)?;
        Ok(Dir { fd })
    }

    /// Opens the directory `path` (as [`Dir::open`] does) following no symbolic link on
    /// the way: a link anywhere on it fails with `ELOOP` (or `ENOTDIR`).
    pub fn open_nofollow(path: &Path) -> io::Result<Dir> {
        match rustix::fs::openat2(
            CWD,
            path,
            oflags(PLACE),
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS,
        ) {
            Ok(fd) => Ok(Dir { fd }),
            // No openat2 (before Linux 5.6, or refused by a seccomp filter).
            Err(rustix::io::Errno::NOSYS) | Err(rustix::io::Errno::PERM) => {
                Self::open_by_components(path)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// [`Dir::open_nofollow`] without `openat2`: one component at a time from the root (or
    /// the current directory), each opened with `O_NOFOLLOW` and checked to be a directory.
    fn open_by_components(path: &Path) -> io::Result<Dir> {
        let start = Dir::open(Path::new(if path.is_absolute() { "/" } else { "." }))?;
        let mut comps: Vec<&[u8]> = Vec::new();
        for part in path.components() {
            comps.push(match part {
                Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
                Component::ParentDir => b"..",
                Component::Normal(n) => n.as_bytes(),
            });
        }
        if comps.is_empty() {
            return Ok(start);
        }
        // The last component too is a handle that must be a directory.
        let fd = open_components(start.as_fd(), &comps, ON_WAY, 0)?;
        if FileType::from_raw_mode(fstat(&fd)?.st_mode) != FileType::Directory {
            return Err(errno(libc::ELOOP));
        }
        Ok(Dir { fd })
    }

    /// The directory that holds `path` (opened as [`Dir::open`] does) and the name of
    /// `path` in it; `None` for the name when `path` has no last name (`/`, `..`).
    pub fn holding(path: &Path) -> io::Result<(Dir, Option<OsString>)> {
        let parent = match path.parent() {
            Some(p) => p,
            None => Path::new("."),
        };
        let name = match path.components().next_back() {
            Some(Component::Normal(n)) => Some(n.to_os_string()),
            _ => None,
        };
        Ok((Dir::open(parent)?, name))
    }

    /// Another descriptor of the same directory.
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            fd: self.fd.try_clone()?,
        })
    }

    /// Opens `rel` (relative, `/`-separated, of any length) beneath the directory with the
    /// `open(2)` flags `flags` (`libc::O_*`; `O_CLOEXEC` is added) and, when it is created,
    /// the mode `mode`, following links or not as `links` says. One component is one
    /// `openat`; a longer path is resolved by `openat2` in pieces shorter than PATH_MAX
    /// (each piece from the directory the one before opened), or component by component
    /// with `O_NOFOLLOW` where the kernel has no `openat2`.
    pub fn open_beneath(
        &self,
        rel: &[u8],
        flags: libc::c_int,
        mode: u32,
        links: Links,
    ) -> io::Result<File> {
        if rel.is_empty() || rel[0] == b'/' {
            return Err(errno(libc::EINVAL));
        }
        let nofollow = if links == Links::Refuse {
            libc::O_NOFOLLOW
        } else {
            0
        };
        let last_flags = flags | nofollow;
        if !rel.contains(&b'/') {
            return openat(self.fd.as_fd(), rel, last_flags, mode).map(File::from);
        }
        let on_way = libc::O_PATH | libc::O_DIRECTORY | nofollow;
        let mut held: Option<OwnedFd> = None;
        let mut rest = rel;
        loop {
            let at = held.as_ref().map_or(self.fd.as_fd(), |f| f.as_fd());
            // The longest run of whole components the kernel takes at once.
            let piece = if rest.len() < PATH_MAX {
                rest.len()
            } else {
                match rest[..PATH_MAX].iter().rposition(|&b| b == b'/') {
                    Some(0) | None => return Err(errno(libc::ENAMETOOLONG)),
                    Some(i) => i,
                }
            };
            let last = piece == rest.len();
            let f = if last { last_flags } else { on_way };
            let fd = open_piece(at, &rest[..piece], f, mode, links)?;
            if last {
                return Ok(File::from(fd));
            }
            held = Some(fd);
            rest = &rest[piece + 1..];
        }
    }

    /// Opens the directory `rel` beneath this one (as [`Dir::open_beneath`] resolves it)
    /// for reading its names, not following a link unless `links` says so (a link at its
    /// name is then "Not a directory", as for GNU's `fts`).
    pub fn open_dir(&self, rel: &[u8], links: Links) -> io::Result<Dir> {
        let file = self.open_beneath(rel, LISTING, 0, links)?;
        Ok(Dir {
            fd: OwnedFd::from(file),
        })
    }

    /// The parent of this directory, opened through its `..` and checked to be the
    /// directory `want` (device and inode) that held it: a directory moved meanwhile is
    /// `ENOENT`, as `fts` reports it, never a walk led elsewhere.
    pub fn reopen_parent(&self, want: (u64, u64)) -> io::Result<Dir> {
        let up = self.open_dir(b"..", Links::Refuse)?;
        if identity(&up)? != want {
            return Err(errno(libc::ENOENT));
        }
        Ok(up)
    }

    /// The entries of the directory (`.` and `..` left out), in the order the file system
    /// gives them, read from the start whatever was read through the descriptor before;
    /// with the error that stopped the reading, if any (the entries read before it are
    /// kept, as `fts` keeps them).
    pub fn read_names(&self) -> (Vec<Name>, Option<io::Error>) {
        // Through this descriptor, from the start, into a buffer on the stack: one `lseek`
        // and the `getdents64` calls, no duplicate descriptor or stream to set up (three
        // system calls a directory less, in a walk of tens of thousands).
        if let Err(e) = rustix::fs::seek(&self.fd, rustix::fs::SeekFrom::Start(0)) {
            return (Vec::new(), Some(e.into()));
        }
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 32 << 10];
        let mut stream = rustix::fs::RawDir::new(&self.fd, &mut buf);
        let mut names = Vec::new();
        while let Some(entry) = stream.next() {
            match entry {
                Ok(e) => {
                    let name = e.file_name().to_bytes();
                    if name == b"." || name == b".." {
                        continue;
                    }
                    names.push(Name {
                        name: OsString::from_vec(name.to_vec()),
                        ino: e.ino(),
                        kind: e.file_type(),
                    });
                }
                Err(e) => return (names, Some(e.into())),
            }
        }
        (names, None)
    }

    /// `fstatat` of `name` in the directory, following a final link or not as `links`
    /// says.
    pub fn stat_at(&self, name: &[u8], links: Links) -> io::Result<Stat> {
        let flags = match links {
            Links::Follow => AtFlags::empty(),
            Links::Refuse => AtFlags::SYMLINK_NOFOLLOW,
        };
        Ok(rustix::fs::statat(&self.fd, name, flags)?)
    }

    /// The target of the link `name` in the directory.
    pub fn read_link_at(&self, name: &[u8]) -> io::Result<Vec<u8>> {
        Ok(rustix::fs::readlinkat(&self.fd, name, Vec::new())?.into_bytes())
    }

    /// Whether this process may `access` `name` in the directory (`faccessat`: with its
    /// real user and group, following a final link; `.` is the directory itself).
    pub fn access(&self, name: &[u8], access: Access) -> io::Result<()> {
        Ok(rustix::fs::accessat(
            &self.fd,
            name,
            access,
            AtFlags::empty(),
        )?)
    }

    /// Makes the directory `name` in the directory, with the mode `mode` (less the umask).
    pub fn make_dir(&self, name: &[u8], mode: u32) -> io::Result<()> {
        Ok(rustix::fs::mkdirat(
            &self.fd,
            name,
            Mode::from_raw_mode(mode as _),
        )?)
    }

    /// Makes the symbolic link `name` in the directory, leading to `target`.
    pub fn make_symlink(&self, target: &[u8], name: &[u8]) -> io::Result<()> {
        Ok(rustix::fs::symlinkat(target, &self.fd, name)?)
    }

    /// Gives the open file `file` (an unnamed one, `O_TMPFILE`, too) the name `name` in the
    /// directory: `linkat` through `/proc/self/fd`, which never replaces a name
    /// (`EEXIST`).
    pub fn link_file(&self, file: &File, name: &[u8]) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let from = format!("/proc/self/fd/{}", file.as_raw_fd());
        Ok(rustix::fs::linkat(
            CWD,
            from.as_str(),
            &self.fd,
            name,
            AtFlags::SYMLINK_FOLLOW,
        )?)
    }

    /// Renames the entry `from` of the directory to `to` in it, replacing what is there
    /// as `replace` says.
    pub fn rename(&self, from: &[u8], to: &[u8], replace: Replace) -> io::Result<()> {
        Ok(match replace {
            Replace::Allow => rustix::fs::renameat(&self.fd, from, &self.fd, to),
            Replace::Never => {
                rustix::fs::renameat_with(&self.fd, from, &self.fd, to, RenameFlags::NOREPLACE)
            }
        }?)
    }

    /// Removes the entry `name` (not a directory) from the directory.
    pub fn unlink(&self, name: &[u8]) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }

    /// Removes the empty directory `name` from the directory.
    fn remove_dir(&self, name: &[u8]) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR)?)
    }

    /// Sets the permission bits of `name` in the directory (a link there is followed:
    /// only for entries swath made itself; `.` is the directory itself).
    pub fn chmod_at(&self, name: &[u8], mode: u32) -> io::Result<()> {
        Ok(rustix::fs::chmodat(
            &self.fd,
            name,
            Mode::from_raw_mode(mode as _),
            AtFlags::empty(),
        )?)
    }

    /// Sets the modification time of `name` in the directory to `secs` and `nanos`, its
    /// access time left as it is, a link not followed (the link's own time is set).
    pub fn set_mtime_at(&self, name: &[u8], secs: i64, nanos: u32) -> io::Result<()> {
        let times = Timestamps {
            last_access: Timespec {
                tv_sec: 0,
                tv_nsec: rustix::fs::UTIME_OMIT,
            },
            last_modification: Timespec {
                tv_sec: secs,
                tv_nsec: nanos.into(),
            },
        };
        Ok(rustix::fs::utimensat(
            &self.fd,
            name,
            &times,
            AtFlags::SYMLINK_NOFOLLOW,
        )?)
    }

    /// Flushes the directory's entries to disk (after a file in it was created, renamed or
    /// removed); errors are ignored, as a filesystem that cannot sync directories has
    /// nothing to flush.
    pub fn sync(&self) {
        if let Ok(fd) = openat(self.fd.as_fd(), b".", libc::O_RDONLY | libc::O_DIRECTORY, 0) {
            let _ = rustix::fs::fsync(fd);
        }
    }

    /// Removes `name` in the directory and, if it is a directory, everything below it:
    /// each directory opened relative to its parent without following a link, entries
    /// removed with `unlinkat`, no path resolved (a tree of any depth goes), no recursion
    /// on the stack, at most a few dozen descriptors held. A link in the tree is removed,
    /// never followed. Goes on past an entry it cannot remove; returns the first error.
    pub fn remove_tree(&self, name: &OsStr) -> io::Result<()> {
        let top = name.as_bytes();
        let fd = match self.open_to_empty(top) {
            Ok(fd) => fd,
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTDIR) | Some(libc::ELOOP)) => {
                return self.unlink(top);
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
            Err(e) => return Err(e),
        };
        let mut first: Option<io::Error> = None;
        let mut keep = |e: io::Error| {
            if first.is_none() {
                first = Some(e);
            }
        };
        let start = |dir: Dir, name: OsString| -> io::Result<Emptying> {
            let id = identity(&dir)?;
            let (names, error) = dir.read_names();
            if let Some(e) = error {
                return Err(e);
            }
            Ok(Emptying {
                dir: Some(dir),
                id,
                name,
                names,
                next: 0,
            })
        };
        let mut levels = vec![start(fd, name.to_os_string())?];
        while let Some(cur) = levels.last_mut() {
            if cur.next < cur.names.len() {
                let entry = &cur.names[cur.next];
                cur.next += 1;
                let at = cur.dir.as_ref().expect("the deepest directory is held");
                let n = entry.name.as_bytes();
                if entry.kind != FileType::Directory {
                    match at.unlink(n) {
                        Err(e) if e.raw_os_error() == Some(libc::EISDIR) => {}
                        Err(e) => {
                            keep(e);
                            continue;
                        }
                        Ok(()) => continue,
                    }
                }
                let name = entry.name.clone();
                match at.open_to_empty(n).and_then(|d| start(d, name)) {
                    Ok(level) => {
                        levels.push(level);
                        let n = levels.len();
                        if n > REMOVAL_HELD {
                            levels[n - REMOVAL_HELD - 1].dir = None;
                        }
                    }
                    Err(e) => keep(e),
                }
                continue;
            }
            // Empty (or as empty as it gets): removed from its parent.
            let done = levels.pop().expect("a level");
            let child = done.dir.expect("the deepest directory is held");
            let r = match levels.last_mut() {
                None => self.remove_dir(done.name.as_bytes()),
                Some(parent) => {
                    if parent.dir.is_none() {
                        match child.reopen_parent(parent.id) {
                            Ok(d) => parent.dir = Some(d),
                            // The tree moved under the removal: stop rather than go elsewhere.
                            Err(e) => return Err(e),
                        }
                    }
                    let at = parent.dir.as_ref().expect("held or reopened");
                    at.remove_dir(done.name.as_bytes())
                }
            };
            if let Err(e) = r {
                keep(e);
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Opens the directory `name` of this one to empty it, making it readable, writable
    /// and searchable first when it is not (a tree swath built and gave its modes). A link
    /// is `ENOTDIR` (never followed: it is removed as the entry it is).
    fn open_to_empty(&self, name: &[u8]) -> io::Result<Dir> {
        let dir = match self.open_dir(name, Links::Refuse) {
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
                // Not readable by its owner: its mode is set through a handle on the very
                // directory (O_PATH, no link followed), then it is opened again.
                let handle = openat(self.fd.as_fd(), name, ON_WAY, 0)?;
                let proc = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&handle));
                if rustix::fs::chmod(proc.as_str(), Mode::from_raw_mode(0o700)).is_err() {
                    return Err(e);
                }
                self.open_dir(name, Links::Refuse)?
            }
            r => r?,
        };
        let st = fstat(&dir)?;
        if st.st_mode & 0o700 != 0o700 {
            let _ = rustix::fs::fchmod(&dir, Mode::from_raw_mode((st.st_mode & 0o7777) | 0o700));
        }
        Ok(dir)
    }
}

impl AsFd for Dir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl std::os::fd::AsRawFd for Dir {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.fd)
    }
}

impl From<OwnedFd> for Dir {
    /// A directory already open as `fd` (whatever its flags: an `O_PATH` one cannot be
    /// read).
    fn from(fd: OwnedFd) -> Dir {
        Dir { fd }
    }
}

/// One piece of [`Dir::open_beneath`], shorter than PATH_MAX.
fn open_piece(
    dir: BorrowedFd<'_>,
    rel: &[u8],
    flags: libc::c_int,
    mode: u32,
    links: Links,
) -> io::Result<OwnedFd> {
    if links == Links::Follow {
        return openat(dir, rel, flags, mode);
    }
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        // openat2 refuses a mode when nothing is created.
        let creates = flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE;
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let mode = Mode::from_raw_mode(if creates { mode as _ } else { 0 });
        match rustix::fs::openat2(dir, rel, oflags(flags), mode, resolve) {
            Ok(fd) => return Ok(fd),
            Err(rustix::io::Errno::NOSYS) | Err(rustix::io::Errno::PERM) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
            }
            Err(e) => return Err(e.into()),
        }
    }
    // No openat2: one component at a time, none of them a link, none of them `..`.
    let comps: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
    if comps
        .iter()
        .any(|c| c.is_empty() || *c == b"." || *c == b"..")
    {
        return Err(errno(libc::EINVAL));
    }
    open_components(dir, &comps, flags, mode)
}

/// `fstat` of an open file or directory.
pub fn fstat(fd: impl AsFd) -> io::Result<Stat> {
    Ok(rustix::fs::fstat(fd)?)
}

/// Device and inode numbers of an open file or directory.
pub fn identity(fd: impl AsFd) -> io::Result<(u64, u64)> {
    fstat(fd).map(|st| (st.st_dev, st.st_ino))
}

/// One entry of a directory, as `readdir` gives it.
#[derive(Debug, Clone)]
pub struct Name {
    /// Its name.
    pub name: OsString,
    /// Its inode number.
    pub ino: u64,
    /// What it is, if the file system says ([`FileType::Unknown`] where it does not).
    pub kind: FileType,
}

/// Directories of a removal held open at once (the deepest); above them, a directory is
/// opened again through `..` of the one below it when its turn comes.
const REMOVAL_HELD: usize = 32;

/// One directory being emptied by [`Dir::remove_tree`].
struct Emptying {
    dir: Option<Dir>,
    id: (u64, u64),
    /// Its name in its parent.
    name: OsString,
    names: Vec<Name>,
    next: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(p: &Path) -> Dir {
        Dir::open_to_list(p).unwrap()
    }

    /// A chain of `depth` directories `d` below `root`, made relative to descriptors, with
    /// a file `f` at the bottom; returns the bottom's path relative to `root`.
    fn chain(root: &Path, depth: usize) -> Vec<u8> {
        let mut at = open(root);
        let mut rel = Vec::new();
        for _ in 0..depth {
            at.make_dir(b"d", 0o755).unwrap();
            at = at.open_dir(b"d", Links::Refuse).unwrap();
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.push(b'd');
        }
        at.open_beneath(b"f", libc::O_CREAT | libc::O_WRONLY, 0o644, Links::Refuse)
            .unwrap();
        rel
    }

    #[test]
    fn paths_past_path_max_open_a_piece_at_a_time() {
        let t = tempfile::tempdir().unwrap();
        let mut rel = chain(t.path(), 2100);
        rel.extend_from_slice(b"/f");
        assert!(rel.len() > PATH_MAX);
        let root = open(t.path());
        for links in [Links::Refuse, Links::Follow] {
            let f = root.open_beneath(&rel, libc::O_RDONLY, 0, links).unwrap();
            assert!(f.metadata().unwrap().is_file());
        }
        root.remove_tree(OsStr::new("d")).unwrap();
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    }

    /// `real/sub/f`, and `link` to `real`.
    fn linked_tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("real/sub")).unwrap();
        std::fs::write(t.path().join("real/sub/f"), "x").unwrap();
        std::os::unix::fs::symlink("real", t.path().join("link")).unwrap();
        t
    }

    /// Without `openat2`, component by component: the same answers (the flag is process
    /// wide; other tests meanwhile take the same path, which must be as correct).
    #[test]
    fn without_openat2_components_are_opened_one_by_one_and_links_still_refused() {
        let t = linked_tree();
        let root = open(t.path());
        let refuse = |rel: &[u8]| root.open_beneath(rel, libc::O_RDONLY, 0, Links::Refuse);
        NO_OPENAT2.store(true, Ordering::Relaxed);
        let ok = refuse(b"real/sub/f");
        let link = refuse(b"link/sub/f");
        let up = refuse(b"real/../real/sub/f");
        NO_OPENAT2.store(false, Ordering::Relaxed);
        assert!(ok.is_ok());
        // A link on the way is not a directory to an O_NOFOLLOW open (ELOOP to openat2).
        assert_eq!(link.unwrap_err().raw_os_error(), Some(libc::ENOTDIR));
        assert_eq!(up.unwrap_err().raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn a_link_on_the_way_is_refused_or_followed_as_asked() {
        let t = linked_tree();
        let root = open(t.path());
        let e = root
            .open_beneath(b"link/sub/f", libc::O_RDONLY, 0, Links::Refuse)
            .unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
        root.open_beneath(b"link/sub/f", libc::O_RDONLY, 0, Links::Follow)
            .unwrap();
        // A directory swapped for a link: "Not a directory", as fts says.
        let e = root.open_dir(b"link", Links::Refuse).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR));
    }

    #[test]
    fn removal_goes_through_unreadable_directories_and_never_follows_links() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "k").unwrap();
        let tree = t.path().join("tree");
        std::fs::create_dir_all(tree.join("a/b")).unwrap();
        std::fs::write(tree.join("a/b/f"), "f").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("a/link")).unwrap();
        std::fs::set_permissions(tree.join("a/b"), std::fs::Permissions::from_mode(0o000)).unwrap();
        std::fs::set_permissions(tree.join("a"), std::fs::Permissions::from_mode(0o500)).unwrap();
        let root = open(t.path());
        root.remove_tree(OsStr::new("tree")).unwrap();
        assert!(!tree.exists());
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"k");
        // A file, and nothing at all.
        std::fs::write(t.path().join("file"), "x").unwrap();
        root.remove_tree(OsStr::new("file")).unwrap();
        root.remove_tree(OsStr::new("file")).unwrap();
        assert!(!t.path().join("file").exists());
    }

    #[test]
    fn a_link_on_the_path_is_refused_only_by_the_nofollow_open() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        std::fs::create_dir_all(real.join("sub")).unwrap();
        std::os::unix::fs::symlink(&real, t.path().join("link")).unwrap();
        let through = t.path().join("link/sub");
        assert!(Dir::open(&through).is_ok());
        for open in [Dir::open_nofollow, Dir::open_by_components] {
            assert!(open(&real.join("sub")).is_ok());
            assert!(open(&through).is_err());
            assert!(open(&t.path().join("link")).is_err());
            // A file is not a directory.
            std::fs::write(real.join("f"), b"").unwrap();
            assert!(open(&real.join("f")).is_err());
        }
        assert!(Dir::open_by_components(&real.join("sub/..")).is_ok());
    }

    #[test]
    fn holding_names_the_last_component() {
        let t = tempfile::tempdir().unwrap();
        let (_, name) = Dir::holding(&t.path().join("out")).unwrap();
        assert_eq!(name.as_deref(), Some(OsStr::new("out")));
        let (_, name) = Dir::holding(Path::new("out")).unwrap();
        assert_eq!(name.as_deref(), Some(OsStr::new("out")));
        let (_, name) = Dir::holding(Path::new("/")).unwrap();
        assert_eq!(name, None);
        let (_, name) = Dir::holding(&t.path().join("..")).unwrap();
        assert_eq!(name, None);
    }

    /// The names are read from the start whatever was read through the descriptor before
    /// (the stream's duplicate shares its offset), and each says what it is.
    #[test]
    fn names_are_read_whole_each_time_with_their_kinds() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("d")).unwrap();
        std::fs::write(t.path().join("f"), "x").unwrap();
        std::os::unix::fs::symlink("f", t.path().join("l")).unwrap();
        let root = open(t.path());
        let sorted = |mut n: Vec<Name>| {
            n.sort_by(|a, b| a.name.cmp(&b.name));
            n.into_iter()
                .map(|n| (n.name.into_string().unwrap(), n.kind))
                .collect::<Vec<_>>()
        };
        let (first, e) = root.read_names();
        assert!(e.is_none());
        let (again, _) = root.read_names();
        let want = vec![
            ("d".to_string(), FileType::Directory),
            ("f".to_string(), FileType::RegularFile),
            ("l".to_string(), FileType::Symlink),
        ];
        assert_eq!(sorted(first), want);
        assert_eq!(sorted(again), want);
        // A place (O_PATH) cannot be listed: an error, not names.
        let (none, e) = Dir::open(t.path()).unwrap().read_names();
        assert!(none.is_empty() && e.is_some());
    }
}
