//! Directories through descriptors: entries opened relative to a directory held open
//! (whatever the depth: a path longer than PATH_MAX is resolved a piece at a time), a
//! directory's names read from its descriptor, and a tree removed with `unlinkat`.
//!
//! Nothing here resolves a whole path from the working directory: another user who renames
//! or swaps a directory on the way cannot redirect an open, and a tree deeper than PATH_MAX
//! is as reachable as a shallow one. The walk of [`crate::walk`] and swath patch's trees use
//! these; a directory is never entered by re-resolving its path.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether symbolic links met while opening are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// No link is followed, on the way or at the end (a link is `ELOOP`), and the path may
    /// not leave the directory it is resolved from (`RESOLVE_BENEATH`).
    Refuse,
    /// Links are followed, as a plain `openat` follows them (`grep -R`).
    Follow,
}

/// Bytes of a path the kernel resolves in one call (PATH_MAX, its NUL included).
const PATH_MAX: usize = libc::PATH_MAX as usize;

/// Set once `openat2` turned out to be missing (or forbidden by a filter).
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// `b` as a C string (a NUL byte inside is `EINVAL`).
pub fn cstr(b: &[u8]) -> io::Result<CString> {
    CString::new(b).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a non-negative result of an open call is a descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `rel` (relative, `/`-separated, of any length) beneath the directory `dir` with
/// `flags` (and `mode` when creating), following links or not as `links` says. One
/// component is one `openat`; a longer path is resolved by `openat2` in pieces shorter than
/// PATH_MAX (each piece from the directory the one before opened), or component by
/// component with `O_NOFOLLOW` where the kernel has no `openat2`.
pub fn open_beneath(
    dir: BorrowedFd<'_>,
    rel: &[u8],
    flags: i32,
    mode: u32,
    links: Links,
) -> io::Result<OwnedFd> {
    if rel.is_empty() || rel[0] == b'/' {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let nofollow = if links == Links::Refuse {
        libc::O_NOFOLLOW
    } else {
        0
    };
    let last_flags = flags | nofollow | libc::O_CLOEXEC;
    if !rel.contains(&b'/') {
        return openat(dir, rel, last_flags, mode);
    }
    let on_way = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC | nofollow;
    let mut held: Option<OwnedFd> = None;
    let mut rest = rel;
    loop {
        let at = held.as_ref().map_or(dir, |f| {
            use std::os::fd::AsFd;
            f.as_fd()
        });
        // The longest run of whole components the kernel takes at once.
        let piece = if rest.len() < PATH_MAX {
            rest.len()
        } else {
            match rest[..PATH_MAX].iter().rposition(|&b| b == b'/') {
                Some(0) | None => return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG)),
                Some(i) => i,
            }
        };
        let last = piece == rest.len();
        let f = if last { last_flags } else { on_way };
        let fd = open_piece(at, &rest[..piece], f, mode, links)?;
        if last {
            return Ok(fd);
        }
        held = Some(fd);
        rest = &rest[piece + 1..];
    }
}

/// One piece of [`open_beneath`], shorter than PATH_MAX.
fn open_piece(
    dir: BorrowedFd<'_>,
    rel: &[u8],
    flags: i32,
    mode: u32,
    links: Links,
) -> io::Result<OwnedFd> {
    if links == Links::Follow {
        return openat(dir, rel, flags, mode);
    }
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let c = cstr(rel)?;
        // SAFETY: open_how is plain data; zeroed is a valid value that is then filled in.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = flags as u64;
        how.mode = if flags & (libc::O_CREAT | libc::O_TMPFILE) != 0 {
            u64::from(mode)
        } else {
            0
        };
        how.resolve =
            libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        // SAFETY: openat2 with a valid directory descriptor, a NUL-terminated path and an
        // open_how of the size passed.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 {
            return owned(fd as libc::c_int);
        }
        let e = io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) {
            return Err(e);
        }
        NO_OPENAT2.store(true, Ordering::Relaxed);
    }
    // No openat2: one component at a time, none of them a link, none of them `..`.
    let comps: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
    let mut cur: Option<OwnedFd> = None;
    for (k, comp) in comps.iter().enumerate() {
        if comp.is_empty() || *comp == b"." || *comp == b".." {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let f = if k + 1 == comps.len() {
            flags
        } else {
            libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_PATH
        };
        let at = cur.as_ref().map_or(dir, |c| {
            use std::os::fd::AsFd;
            c.as_fd()
        });
        cur = Some(openat(at, comp, f, mode)?);
    }
    cur.ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))
}

/// `openat(dir, name, flags, mode)`.
fn openat(dir: BorrowedFd<'_>, name: &[u8], flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let c = cstr(name)?;
    // SAFETY: openat with a valid directory descriptor and a NUL-terminated name.
    owned(unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) })
}

/// Opens the directory at `path`, as the user named it (a link there is followed, as GNU
/// tools follow their operands), for reading its entries and opening beneath it.
pub fn open_dir(path: &std::path::Path) -> io::Result<OwnedFd> {
    let c = cstr(path.as_os_str().as_bytes())?;
    // SAFETY: open with a NUL-terminated path; the result is checked.
    owned(unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY
                | libc::O_DIRECTORY
                | libc::O_NOCTTY
                | libc::O_NONBLOCK
                | libc::O_CLOEXEC,
        )
    })
}

/// Opens the directory `name` of `dir` for reading its entries, not following a link there
/// unless `links` says so (a link is then "Not a directory", as for GNU's `fts`).
pub fn open_dir_at(dir: BorrowedFd<'_>, name: &[u8], links: Links) -> io::Result<OwnedFd> {
    let nofollow = if links == Links::Refuse {
        libc::O_NOFOLLOW
    } else {
        0
    };
    openat(
        dir,
        name,
        libc::O_RDONLY
            | libc::O_DIRECTORY
            | libc::O_NOCTTY
            | libc::O_NONBLOCK
            | libc::O_CLOEXEC
            | nofollow,
        0,
    )
}

/// `fstat` of an open file.
pub fn fstat(fd: BorrowedFd<'_>) -> io::Result<libc::stat> {
    // SAFETY: stat is plain data filled in by fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat on a live descriptor into a struct we own.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `fstatat` of `name` in `dir`, following a final link when `follow`.
pub fn stat_at(dir: BorrowedFd<'_>, name: &[u8], follow: bool) -> io::Result<libc::stat> {
    let c = cstr(name)?;
    // SAFETY: stat is plain data filled in by fstatat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    // SAFETY: fstatat with a live directory descriptor, a NUL-terminated name and a struct
    // we own.
    if unsafe { libc::fstatat(dir.as_raw_fd(), c.as_ptr(), &mut st, flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// The target of the link `name` in `dir`.
pub fn read_link_at(dir: BorrowedFd<'_>, name: &[u8]) -> io::Result<Vec<u8>> {
    let c = cstr(name)?;
    let mut buf = vec![0u8; 256];
    loop {
        // SAFETY: readlinkat writes at most buf.len() bytes into the buffer we own.
        let n = unsafe {
            libc::readlinkat(
                dir.as_raw_fd(),
                c.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if (n as usize) < buf.len() {
            buf.truncate(n as usize);
            return Ok(buf);
        }
        buf.resize(buf.len() * 2, 0);
    }
}

/// What `readdir` says an entry is (`DT_*`; [`DT_UNKNOWN`] where the file system does not
/// say).
pub type DirType = u8;

/// The file system did not say what the entry is.
pub const DT_UNKNOWN: DirType = libc::DT_UNKNOWN;

/// One entry of a directory, as `readdir` gives it.
#[derive(Debug, Clone)]
pub struct Name {
    /// Its name.
    pub name: OsString,
    /// Its inode number.
    pub ino: u64,
    /// What it is, if the file system says (`libc::DT_DIR`, `DT_REG`, ...).
    pub kind: DirType,
}

/// The entries of the open directory `dir` (`.` and `..` left out), in the order the file
/// system gives them; with the error that stopped the reading, if any (the entries read
/// before it are kept, as `fts` keeps them).
pub fn read_names(dir: BorrowedFd<'_>) -> (Vec<Name>, Option<io::Error>) {
    // SAFETY: dup of a live descriptor; the copy is owned by the stream below.
    let copy = unsafe { libc::dup(dir.as_raw_fd()) };
    if copy < 0 {
        return (Vec::new(), Some(io::Error::last_os_error()));
    }
    // SAFETY: fdopendir takes ownership of the duplicate, which nothing else uses.
    let stream = unsafe { libc::fdopendir(copy) };
    if stream.is_null() {
        let e = io::Error::last_os_error();
        // SAFETY: the duplicate was not taken by the stream: ours to close.
        unsafe { libc::close(copy) };
        return (Vec::new(), Some(e));
    }
    // SAFETY: a stream fdopendir returned; the duplicate shares the file offset with `dir`,
    // so reading starts at the beginning whatever was read through it before.
    unsafe { libc::rewinddir(stream) };
    let mut names = Vec::new();
    let mut error = None;
    loop {
        // SAFETY: errno is this thread's; cleared so that an end and an error differ.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: readdir64 on the open stream; the entry it returns is valid until the
        // next call on the stream, and is copied before then.
        let e = unsafe { libc::readdir64(stream) };
        if e.is_null() {
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(0) {
                error = Some(err);
            }
            break;
        }
        // SAFETY: d_name is a NUL-terminated name inside the entry readdir64 returned.
        let (name, ino, kind) = unsafe {
            (
                CStr::from_ptr((*e).d_name.as_ptr()).to_bytes(),
                (*e).d_ino,
                (*e).d_type,
            )
        };
        if name == b"." || name == b".." {
            continue;
        }
        names.push(Name {
            name: OsString::from_vec(name.to_vec()),
            ino,
            kind,
        });
    }
    // SAFETY: closes the stream (and the duplicate) once; `dir` stays open.
    unsafe { libc::closedir(stream) };
    (names, error)
}

/// Device and inode numbers of an open file.
pub fn identity(fd: BorrowedFd<'_>) -> io::Result<(u64, u64)> {
    fstat(fd).map(|st| (st.st_dev, st.st_ino))
}

/// The parent of the directory `child`, opened through its `..` and checked to be the
/// directory `want` (device and inode) that held it: a directory moved meanwhile is
/// `ENOENT`, as `fts` reports it, never a walk led elsewhere.
pub fn reopen_parent(child: BorrowedFd<'_>, want: (u64, u64)) -> io::Result<OwnedFd> {
    let fd = open_dir_at(child, b"..", Links::Refuse)?;
    {
        use std::os::fd::AsFd;
        if identity(fd.as_fd())? != want {
            return Err(io::Error::from_raw_os_error(libc::ENOENT));
        }
    }
    Ok(fd)
}

/// Directories of a removal held open at once (the deepest); above them, a directory is
/// opened again through `..` of the one below it when its turn comes.
const REMOVAL_HELD: usize = 32;

/// One directory being emptied by [`remove_tree`].
struct Emptying {
    fd: Option<OwnedFd>,
    id: (u64, u64),
    /// Its name in its parent.
    name: CString,
    names: Vec<Name>,
    next: usize,
}

/// Opens the directory `name` of `dir` to empty it, making it readable, writable and
/// searchable first when it is not (a tree swath built and gave its modes). A link is
/// `ENOTDIR` (never followed: it is removed as the entry it is).
fn open_to_empty(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<OwnedFd> {
    use std::os::fd::AsFd;
    let fd = match open_dir_at(dir, name.to_bytes(), Links::Refuse) {
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
            // Not readable by its owner: its mode is set through a handle on the very
            // directory (O_PATH, no link followed), then it is opened again.
            let handle = openat(
                dir,
                name.to_bytes(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0,
            )?;
            let proc = cstr(format!("/proc/self/fd/{}", handle.as_raw_fd()).as_bytes())?;
            // SAFETY: chmod of the magic link to the directory the handle holds.
            if unsafe { libc::chmod(proc.as_ptr(), 0o700) } != 0 {
                return Err(e);
            }
            open_dir_at(dir, name.to_bytes(), Links::Refuse)?
        }
        r => r?,
    };
    let st = fstat(fd.as_fd())?;
    if st.st_mode & 0o700 != 0o700 {
        // SAFETY: fchmod on the directory just opened.
        unsafe { libc::fchmod(fd.as_raw_fd(), (st.st_mode & 0o7777) | 0o700) };
    }
    Ok(fd)
}

fn unlink_at(dir: BorrowedFd<'_>, name: &CStr, flags: i32) -> io::Result<()> {
    // SAFETY: unlinkat with a live directory descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Removes `name` in `dir` and, if it is a directory, everything below it: each directory
/// opened relative to its parent without following a link, entries removed with
/// `unlinkat`, no path resolved (a tree of any depth goes), no recursion on the stack, at
/// most a few dozen descriptors held. A link in the tree is removed, never followed. Goes
/// on past an entry it cannot remove; returns the first error.
pub fn remove_tree(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    use std::os::fd::AsFd;
    let top = cstr(name.as_bytes())?;
    let fd = match open_to_empty(dir, &top) {
        Ok(fd) => fd,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTDIR) | Some(libc::ELOOP)) => {
            return unlink_at(dir, &top, 0);
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
    let start = |fd: OwnedFd, name: CString| -> io::Result<Emptying> {
        let id = identity(fd.as_fd())?;
        let (names, error) = read_names(fd.as_fd());
        if let Some(e) = error {
            return Err(e);
        }
        Ok(Emptying {
            fd: Some(fd),
            id,
            name,
            names,
            next: 0,
        })
    };
    let mut levels = vec![start(fd, top)?];
    while let Some(cur) = levels.last_mut() {
        if cur.next < cur.names.len() {
            let entry = &cur.names[cur.next];
            cur.next += 1;
            let at = cur
                .fd
                .as_ref()
                .expect("the deepest directory is held")
                .as_fd();
            let c = cstr(entry.name.as_bytes())?;
            if entry.kind != libc::DT_DIR {
                match unlink_at(at, &c, 0) {
                    Err(e) if e.raw_os_error() == Some(libc::EISDIR) => {}
                    Err(e) => {
                        keep(e);
                        continue;
                    }
                    Ok(()) => continue,
                }
            }
            match open_to_empty(at, &c).and_then(|fd| start(fd, c)) {
                Ok(level) => {
                    levels.push(level);
                    let n = levels.len();
                    if n > REMOVAL_HELD {
                        levels[n - REMOVAL_HELD - 1].fd = None;
                    }
                }
                Err(e) => keep(e),
            }
            continue;
        }
        // Empty (or as empty as it gets): removed from its parent.
        let done = levels.pop().expect("a level");
        let child = done.fd.expect("the deepest directory is held");
        let r = match levels.last_mut() {
            None => unlink_at(dir, &done.name, libc::AT_REMOVEDIR),
            Some(parent) => {
                if parent.fd.is_none() {
                    match reopen_parent(child.as_fd(), parent.id) {
                        Ok(fd) => parent.fd = Some(fd),
                        // The tree moved under the removal: stop rather than go elsewhere.
                        Err(e) => return Err(e),
                    }
                }
                let at = parent.fd.as_ref().expect("held or reopened").as_fd();
                unlink_at(at, &done.name, libc::AT_REMOVEDIR)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn open(p: &std::path::Path) -> OwnedFd {
        std::fs::File::open(p).unwrap().into()
    }

    /// A chain of `depth` directories `d` below `root`, made relative to descriptors, with
    /// a file `f` at the bottom; returns the bottom's path relative to `root`.
    fn chain(root: &std::path::Path, depth: usize) -> Vec<u8> {
        let mut at = open(root);
        let mut rel = Vec::new();
        for _ in 0..depth {
            let c = cstr(b"d").unwrap();
            // SAFETY: mkdirat with a live descriptor and a NUL-terminated name.
            let rc = unsafe { libc::mkdirat(at.as_raw_fd(), c.as_ptr(), 0o755) };
            assert_eq!(rc, 0);
            at = open_dir_at(at.as_fd(), b"d", Links::Refuse).unwrap();
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.push(b'd');
        }
        let f = open_beneath(
            at.as_fd(),
            b"f",
            libc::O_CREAT | libc::O_WRONLY,
            0o644,
            Links::Refuse,
        )
        .unwrap();
        drop(f);
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
            let f = open_beneath(root.as_fd(), &rel, libc::O_RDONLY, 0, links).unwrap();
            assert!(fstat(f.as_fd()).unwrap().st_mode & libc::S_IFMT == libc::S_IFREG);
        }
        remove_tree(root.as_fd(), OsStr::new("d")).unwrap();
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
        NO_OPENAT2.store(true, Ordering::Relaxed);
        let ok = open_beneath(
            root.as_fd(),
            b"real/sub/f",
            libc::O_RDONLY,
            0,
            Links::Refuse,
        );
        let link = open_beneath(
            root.as_fd(),
            b"link/sub/f",
            libc::O_RDONLY,
            0,
            Links::Refuse,
        );
        let up = open_beneath(
            root.as_fd(),
            b"real/../real/sub/f",
            libc::O_RDONLY,
            0,
            Links::Refuse,
        );
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
        let e = open_beneath(
            root.as_fd(),
            b"link/sub/f",
            libc::O_RDONLY,
            0,
            Links::Refuse,
        )
        .unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
        open_beneath(
            root.as_fd(),
            b"link/sub/f",
            libc::O_RDONLY,
            0,
            Links::Follow,
        )
        .unwrap();
        // A directory swapped for a link: "Not a directory", as fts says.
        let e = open_dir_at(root.as_fd(), b"link", Links::Refuse).unwrap_err();
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
        remove_tree(root.as_fd(), OsStr::new("tree")).unwrap();
        assert!(!tree.exists());
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"k");
        // A file, and nothing at all.
        std::fs::write(t.path().join("file"), "x").unwrap();
        remove_tree(root.as_fd(), OsStr::new("file")).unwrap();
        remove_tree(root.as_fd(), OsStr::new("file")).unwrap();
        assert!(!t.path().join("file").exists());
    }
}
