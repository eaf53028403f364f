//! Directories held by descriptor, so that what swath does in a directory after looking at
//! it (create, link, rename, remove a file) happens in the directory it looked at, whatever
//! another user renames or swaps on the path meanwhile: every later step is a system call
//! relative to the descriptor (`openat`, `linkat`, `renameat`, `unlinkat`), never a path
//! resolved again.
//!
//! [`Dir::open`] resolves a path as the kernel does, links included: for the directories a
//! user named. [`Dir::open_nofollow`] follows no link on the way (`openat2` with
//! `RESOLVE_NO_SYMLINKS` where the kernel has it, else one `O_NOFOLLOW` open per component,
//! each checked with `fstat` to be a directory): for a path swath found itself (the
//! resolution of a link), which no link planted later may redirect.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, CWD};

/// Flags of a directory descriptor: only a handle for the `*at` calls (`O_PATH`), so that a
/// directory the user may write and search but not list can hold an output too.
const DIR_FLAGS: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);

/// A directory held open by descriptor.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

impl Dir {
    /// Opens the directory `path` as the kernel resolves it (links followed, as for any
    /// path the user named); an empty path is the current directory.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let path = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        let fd = rustix::fs::openat(CWD, path, DIR_FLAGS, Mode::empty())?;
        Ok(Dir { fd })
    }

    /// Opens the directory `path` following no symbolic link on the way: a link anywhere
    /// on it fails with `ELOOP` (or `ENOTDIR`).
    pub fn open_nofollow(path: &Path) -> io::Result<Dir> {
        match rustix::fs::openat2(
            CWD,
            path,
            DIR_FLAGS,
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
        let mut dir = Dir::open(Path::new(if path.is_absolute() { "/" } else { "." }))?;
        for part in path.components() {
            let name: &OsStr = match part {
                Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
                Component::ParentDir => OsStr::new(".."),
                Component::Normal(n) => n,
            };
            let fd =
                rustix::fs::openat(&dir.fd, name, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())?;
            // An O_PATH open with O_NOFOLLOW may return the link itself: only a directory
            // is taken.
            if FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) != FileType::Directory {
                return Err(io::Error::from_raw_os_error(libc::ELOOP));
            }
            dir = Dir { fd };
        }
        Ok(dir)
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

    /// Opens the entry `name` of the directory (`openat`) with the `open(2)` flags `flags`
    /// (`libc::O_*`; `O_CLOEXEC` is added) and, when it is created, the mode `mode`.
    pub fn open_file(&self, name: &OsStr, flags: libc::c_int, mode: u32) -> io::Result<File> {
        let flags = OFlags::from_bits_retain(flags as _) | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(mode as _))?;
        Ok(File::from(fd))
    }

    /// Removes the entry `name` (not a directory) from the directory.
    pub fn unlink(&self, name: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(
            &self.fd,
            name,
            rustix::fs::AtFlags::empty(),
        )?)
    }

    /// Flushes the directory's entries to disk (after a file in it was created, renamed or
    /// removed); errors are ignored, as a filesystem that cannot sync directories has
    /// nothing to flush.
    pub fn sync(&self) {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if let Ok(fd) = rustix::fs::openat(&self.fd, ".", flags, Mode::empty()) {
            let _ = rustix::fs::fsync(fd);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
