//! Directory trees walked in the order GNU tools walk them with gnulib's `fts`: depth first,
//! each directory's entries in the order the file system returns them (no sorting), except
//! that a directory of more than 10,000 entries is taken in inode order on file systems where
//! that speeds reading up (gnulib sorts so, unless the file system is tmpfs, NFS or CIFS).
//!
//! The walk itself is sequential (the order is the output's order); what is found is handed
//! to the caller one entry at a time, so the caller can search files on other threads while
//! the walk goes on. Symbolic links are followed as `fts` follows them: never
//! ([`Follow::Never`], `FTS_PHYSICAL`), or always ([`Follow::Always`], `FTS_LOGICAL`), a
//! directory that is its own ancestor then being reported instead of entered.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// How symbolic links met inside a tree are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Links are entries of their own (`grep -r`): the caller decides (GNU grep skips them).
    Never,
    /// Links are followed (`grep -R`).
    Always,
}

/// What an entry is, as the walk knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A symbolic link (only with [`Follow::Never`]).
    Symlink,
    /// A character or block device, FIFO or socket.
    Special,
    /// A link to nothing (with [`Follow::Always`]).
    Dangling,
}

/// One thing the walk reports, in traversal order.
#[derive(Debug)]
pub enum Found {
    /// A non-directory entry: its path (the root joined with the names below it, as `fts`
    /// joins them) and kind.
    Entry {
        /// The path.
        path: OsString,
        /// What it is.
        kind: Kind,
        /// The directory it was found in, held open, and its name there: opening `name`
        /// relative to it costs one name lookup instead of one per component of `path`, and
        /// a directory renamed or replaced meanwhile cannot redirect the open. `None` when
        /// the directory could not be held (see [`DirHandle`]).
        dir: Option<(Arc<DirHandle>, OsString)>,
    },
    /// A directory that could not be read (or stat'ed).
    Error {
        /// Its path.
        path: OsString,
        /// Why.
        error: io::Error,
    },
    /// A directory that is one of its own ancestors (reached through a link): not entered.
    Loop {
        /// Its path.
        path: OsString,
    },
}

/// Directories held open at once at most (by entries not yet searched): beyond, entries
/// come without their directory and are opened by path, so a walk far ahead of the search
/// never runs out of descriptors.
const MAX_HELD_DIRS: usize = 256;

/// Directories held open now.
static HELD_DIRS: AtomicUsize = AtomicUsize::new(0);

/// A directory of the walk held open (`O_PATH`: no read permission is used, nothing is
/// read through it) for opening its entries relative to it.
#[derive(Debug)]
pub struct DirHandle {
    fd: OwnedFd,
}

impl DirHandle {
    /// Opens the directory at `path`, unless [`MAX_HELD_DIRS`] are held already or it cannot
    /// be opened.
    fn open(path: &[u8]) -> Option<Arc<DirHandle>> {
        if HELD_DIRS.fetch_add(1, Ordering::Relaxed) >= MAX_HELD_DIRS {
            HELD_DIRS.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        let fd = std::ffi::CString::new(path).ok().and_then(|c| {
            // SAFETY: `c` is a NUL-terminated path; the result is checked before use.
            let fd = unsafe {
                libc::open(
                    c.as_ptr(),
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
                )
            };
            // SAFETY: a non-negative result is a descriptor this call opened and nothing
            // else owns.
            (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
        });
        match fd {
            Some(fd) => Some(Arc::new(DirHandle { fd })),
            None => {
                HELD_DIRS.fetch_sub(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// The directory's descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Drop for DirHandle {
    fn drop(&mut self) {
        HELD_DIRS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// gnulib's `_FTS_INODE_SORT_DIR_ENTRIES_THRESHOLD`.
const INODE_SORT_THRESHOLD: usize = 10_000;

/// Walks the directory `root` (its path as given; trailing slashes beyond one are dropped, as
/// `fts_open` drops them). `skip_dir(name)` is asked for each directory below the root, with
/// its name, and `skip(name)` for every other entry: true leaves it out. `found` receives
/// each entry and returns false to stop the walk.
pub fn walk(
    root: &OsStr,
    follow: Follow,
    skip_dir: &mut dyn FnMut(&OsStr) -> bool,
    skip: &mut dyn FnMut(&OsStr) -> bool,
    found: &mut dyn FnMut(Found) -> bool,
) {
    let mut r = root.as_bytes();
    while r.len() > 2 && r.ends_with(b"//") {
        r = &r[..r.len() - 1];
    }
    let root = OsStr::from_bytes(r);
    let meta = match fs::metadata(root) {
        Ok(m) => m,
        Err(error) => {
            found(Found::Error {
                path: root.to_owned(),
                error,
            });
            return;
        }
    };
    let mut ancestors = vec![(meta.dev(), meta.ino())];
    let mut w = Walker {
        follow,
        skip_dir,
        skip,
        found,
        stopped: false,
    };
    w.dir(root.as_bytes().to_vec(), &mut ancestors);
}

struct Walker<'a> {
    follow: Follow,
    skip_dir: &'a mut dyn FnMut(&OsStr) -> bool,
    skip: &'a mut dyn FnMut(&OsStr) -> bool,
    found: &'a mut dyn FnMut(Found) -> bool,
    stopped: bool,
}

impl Walker<'_> {
    fn report(&mut self, f: Found) {
        if !self.stopped && !(self.found)(f) {
            self.stopped = true;
        }
    }

    /// Reads the directory at `path` (whose identity is the last of `ancestors`) and walks
    /// its entries.
    fn dir(&mut self, path: Vec<u8>, ancestors: &mut Vec<(u64, u64)>) {
        let rd = match fs::read_dir(OsStr::from_bytes(&path)) {
            Ok(rd) => rd,
            Err(error) => {
                self.report(Found::Error {
                    path: OsString::from_vec(path),
                    error,
                });
                return;
            }
        };
        let mut entries: Vec<(OsString, u64, Option<fs::FileType>)> = Vec::new();
        for e in rd {
            match e {
                Ok(e) => entries.push((e.file_name(), e.ino(), e.file_type().ok())),
                Err(error) => {
                    self.report(Found::Error {
                        path: OsString::from_vec(path.clone()),
                        error,
                    });
                    break;
                }
            }
        }
        // Held only while entries found here may still be opened through it.
        let held = DirHandle::open(&path);
        if entries.len() > INODE_SORT_THRESHOLD && inode_sort_helps(OsStr::from_bytes(&path)) {
            entries.sort_by_key(|e| e.1);
        }
        // fts joins names to the directory's path with one slash.
        let base = if path.ends_with(b"/") {
            path.clone()
        } else {
            [&path[..], b"/"].concat()
        };
        for (name, _, ft) in entries {
            if self.stopped {
                return;
            }
            let child = [&base[..], name.as_bytes()].concat();
            let child_os = OsStr::from_bytes(&child);
            let mut ft = ft;
            let is_link = ft.is_some_and(|t| t.is_symlink());
            if ft.is_none() || (is_link && self.follow == Follow::Always) {
                let meta = match self.follow {
                    Follow::Always => fs::metadata(child_os),
                    Follow::Never => fs::symlink_metadata(child_os),
                };
                match meta {
                    Ok(m) => ft = Some(m.file_type()),
                    Err(_) if is_link => {
                        if !(self.skip)(&name) {
                            self.report(Found::Entry {
                                path: child_os.to_owned(),
                                kind: Kind::Dangling,
                                dir: held.clone().map(|d| (d, name.clone())),
                            });
                        }
                        continue;
                    }
                    Err(error) => {
                        self.report(Found::Error {
                            path: child_os.to_owned(),
                            error,
                        });
                        continue;
                    }
                }
            }
            let ft = ft.expect("file type known");
            if ft.is_dir() {
                if (self.skip_dir)(&name) {
                    continue;
                }
                let id = match fs::metadata(child_os) {
                    Ok(m) => (m.dev(), m.ino()),
                    Err(error) => {
                        self.report(Found::Error {
                            path: child_os.to_owned(),
                            error,
                        });
                        continue;
                    }
                };
                if ancestors.contains(&id) {
                    self.report(Found::Loop {
                        path: child_os.to_owned(),
                    });
                    continue;
                }
                ancestors.push(id);
                self.dir(child, ancestors);
                ancestors.pop();
                continue;
            }
            if (self.skip)(&name) {
                continue;
            }
            use std::os::unix::fs::FileTypeExt;
            let kind = if ft.is_symlink() {
                Kind::Symlink
            } else if ft.is_file() {
                Kind::File
            } else if ft.is_char_device() || ft.is_block_device() || ft.is_fifo() || ft.is_socket()
            {
                Kind::Special
            } else {
                Kind::File
            };
            self.report(Found::Entry {
                path: child_os.to_owned(),
                kind,
                dir: held.clone().map(|d| (d, name)),
            });
        }
    }
}

/// gnulib's `dirent_inode_sort_may_be_useful`: false on tmpfs, NFS and CIFS.
fn inode_sort_helps(dir: &OsStr) -> bool {
    const TMPFS: i64 = 0x0102_1994;
    const NFS: i64 = 0x6969;
    const CIFS: i64 = 0xFF53_4D42;
    let Ok(c) = std::ffi::CString::new(dir.as_bytes()) else {
        return true;
    };
    // SAFETY: statfs writes into the zeroed struct we own; `c` is a valid C string.
    let kind = unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut st) != 0 {
            return true;
        }
        st.f_type as i64
    };
    !matches!(kind, TMPFS | NFS | CIFS)
}

/// True when `path` names a directory (following links).
pub fn is_dir(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn collect(root: &Path, follow: Follow) -> Vec<String> {
        let mut out = Vec::new();
        walk(
            root.as_os_str(),
            follow,
            &mut |_| false,
            &mut |_| false,
            &mut |f| {
                out.push(match f {
                    Found::Entry { path, kind, .. } => {
                        format!("{kind:?} {}", path.to_string_lossy())
                    }
                    Found::Error { path, .. } => format!("error {}", path.to_string_lossy()),
                    Found::Loop { path } => format!("loop {}", path.to_string_lossy()),
                });
                true
            },
        );
        out
    }

    /// The walk against `find`, which also lists entries in directory-read order, depth
    /// first: the same files in the same order.
    #[test]
    fn order_is_the_directory_read_order_depth_first_as_find_lists_it() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for d in ["b", "a", "a/z", "c"] {
            fs::create_dir(r.join(d)).unwrap();
        }
        for f in ["x", "a/y", "a/z/w", "b/v", "c/u", "m", "a/k"] {
            fs::write(r.join(f), f).unwrap();
        }
        let got: Vec<String> = collect(r, Follow::Never)
            .into_iter()
            .map(|l| l.trim_start_matches("File ").to_string())
            .collect();
        let find = std::process::Command::new("find")
            .arg(r)
            .args(["-type", "f"])
            .output()
            .unwrap();
        let want: Vec<String> = String::from_utf8(find.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(got, want);
    }

    /// Each entry's directory handle opens the entry by its name, and gives what its path
    /// gives, even once the directory has been renamed (a path would then miss it).
    #[test]
    fn entries_open_through_their_directory_handle() {
        use std::io::Read;
        use std::os::fd::{AsRawFd, FromRawFd};
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::create_dir_all(r.join("a/b")).unwrap();
        for f in ["x", "a/y", "a/b/z"] {
            fs::write(r.join(f), f).unwrap();
        }
        let mut found = Vec::new();
        walk(
            r.as_os_str(),
            Follow::Never,
            &mut |_| false,
            &mut |_| false,
            &mut |f| {
                if let Found::Entry { path, dir, .. } = f {
                    found.push((path, dir.expect("directory held")));
                }
                true
            },
        );
        assert_eq!(found.len(), 3);
        fs::rename(r.join("a"), r.join("moved")).unwrap();
        for (path, (dir, name)) in &found {
            let c = std::ffi::CString::new(name.as_bytes()).unwrap();
            // SAFETY: a live descriptor and a NUL-terminated name; the result is checked.
            let fd = unsafe { libc::openat(dir.fd().as_raw_fd(), c.as_ptr(), libc::O_RDONLY) };
            assert!(fd >= 0, "{path:?}");
            // SAFETY: `fd` was just opened and is owned by nothing else.
            let mut file = unsafe { fs::File::from_raw_fd(fd) };
            let mut got = String::new();
            file.read_to_string(&mut got).unwrap();
            let rel = Path::new(path).strip_prefix(r).unwrap();
            assert_eq!(got, rel.to_string_lossy(), "{path:?}");
        }
    }

    #[test]
    fn links_are_entries_or_followed_and_loops_are_reported() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::create_dir(r.join("d")).unwrap();
        fs::write(r.join("d/f"), "f").unwrap();
        symlink("..", r.join("d/up")).unwrap();
        symlink("nowhere", r.join("d/dangling")).unwrap();
        let never = collect(&r.join("d"), Follow::Never);
        let mut sorted = never.clone();
        sorted.sort();
        let d = r.join("d").to_string_lossy().into_owned();
        assert_eq!(
            sorted,
            vec![
                format!("File {d}/f"),
                format!("Symlink {d}/dangling"),
                format!("Symlink {d}/up"),
            ]
        );
        let always = collect(&r.join("d"), Follow::Always);
        assert!(
            always.contains(&format!("Dangling {d}/dangling")),
            "{always:?}"
        );
        // d/up is the parent of d: its d is d itself, a loop.
        assert!(always.contains(&format!("loop {d}/up/d")), "{always:?}");
    }

    #[test]
    fn trailing_slashes_join_as_fts_joins_them() {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("f"), "f").unwrap();
        let root = format!("{}///", t.path().display());
        let got = collect(Path::new(&root), Follow::Never);
        assert_eq!(got, vec![format!("File {}/f", t.path().display())]);
    }
}
