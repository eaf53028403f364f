//! Atomic output files: written into a file with no name (`O_TMPFILE`) in the target's
//! directory and linked into place only when complete, so that nothing is left behind
//! whatever ends the process, SIGKILL included. Where the filesystem has no unnamed files,
//! a temporary name beside the target is used instead, renamed into place when complete and
//! removed if anything goes wrong, including SIGINT, SIGTERM and SIGHUP (a handler unlinks
//! every registered temporary file, then lets the signal take its default course); only a
//! SIGKILL can leave that one behind.
//!
//! A symbolic link is written through (the file it points to is replaced, the link stays),
//! under the rule the kernel applies to `open()` when `fs.protected_symlinks` is 1: a link in
//! a sticky directory that others may write into (`/tmp`) is followed only when it belongs
//! to the user or to the directory's owner. The rule holds for every link of a chain (a link
//! of the user's own that leads to another user's link in `/tmp` is refused too), and the
//! file written is the one the kernel itself resolves the chain to. Without that check,
//! another user's link planted in `/tmp` made root's output replace the file it pointed to.
//! A target that exists and is not a regular file (a device such as `/dev/null`, a FIFO) is
//! written directly, since renaming over it would replace the device node or pipe with a
//! plain file.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Once;

use crate::error::EngineError;

/// Temporary files that a fatal signal must remove.
const TEMP_SLOTS: usize = 32;
#[allow(clippy::declare_interior_mutable_const)]
const NO_PATH: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static TEMP_PATHS: [AtomicPtr<libc::c_char>; TEMP_SLOTS] = [NO_PATH; TEMP_SLOTS];
static HANDLERS: Once = Once::new();

/// Removes every temporary output file still being written. It allocates nothing and only
/// calls `unlink`, so it may run in a signal handler or where memory ran out, just before
/// the process ends.
pub fn remove_temporary_outputs() {
    for slot in TEMP_PATHS.iter() {
        let p = slot.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: `p` is a NUL-terminated path owned by the registry until unregistered;
            // unlink is async-signal-safe.
            unsafe { libc::unlink(p) };
        }
    }
}

extern "C" fn remove_temps_and_die(sig: libc::c_int) {
    remove_temporary_outputs();
    // SAFETY: restoring the default action and re-raising are async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

fn install_handlers() {
    HANDLERS.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: querying and setting dispositions with valid sigaction structs; a signal
            // the parent chose to ignore (nohup) stays ignored.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(sig, std::ptr::null(), &mut old);
                if old.sa_sigaction == libc::SIG_IGN {
                    continue;
                }
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = remove_temps_and_die as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
}

fn register_temp(path: &Path) -> Option<usize> {
    install_handlers();
    let c = CString::new(path.as_os_str().as_bytes()).ok()?.into_raw();
    for (i, slot) in TEMP_PATHS.iter().enumerate() {
        if slot
            .compare_exchange(std::ptr::null_mut(), c, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return Some(i);
        }
    }
    // SAFETY: `c` came from CString::into_raw above and was not stored anywhere.
    drop(unsafe { CString::from_raw(c) });
    None
}

fn unregister_temp(slot: usize) {
    let p = TEMP_PATHS[slot].swap(std::ptr::null_mut(), Ordering::AcqRel);
    if !p.is_null() {
        // SAFETY: `p` came from CString::into_raw in register_temp and is no longer shared.
        drop(unsafe { CString::from_raw(p) });
    }
}

/// An output file under construction. Dropping it without [`AtomicOutput::commit`] removes
/// the temporary file and leaves any existing target untouched.
#[derive(Debug)]
pub struct AtomicOutput {
    /// Always `Some` until `commit` takes it.
    temp: Option<Sink>,
    target: PathBuf,
    slot: Option<usize>,
    /// The mode of the regular file being replaced, if there was one.
    existing: Option<u32>,
}

/// The descriptor a path such as `/dev/stdout`, `/dev/fd/3` or `/proc/self/fd/3` names.
fn descriptor_path(p: &Path) -> Option<i32> {
    let s = p.to_str()?;
    match s {
        "/dev/stdin" => Some(0),
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => s
            .strip_prefix("/dev/fd/")
            .or_else(|| s.strip_prefix("/proc/self/fd/"))
            .and_then(|n| n.parse().ok()),
    }
}

/// The process's file-creation mask (from `/proc/self/status`; 022 if it cannot be read).
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// Where the bytes go.
#[derive(Debug)]
enum Sink {
    /// A temporary file renamed over the target by `commit`.
    Temp(tempfile::NamedTempFile),
    /// The target itself, a device or FIFO, opened for writing.
    Direct(File),
    /// A file with no name yet (`O_TMPFILE`), linked into place by `commit`.
    Unnamed(File),
}

/// True when `/proc/sys/fs/protected_symlinks` asks the kernel to guard links in sticky
/// world-writable directories (read each time: an administrator may change it).
fn symlinks_protected() -> bool {
    std::fs::read_to_string("/proc/sys/fs/protected_symlinks")
        .map(|v| v.trim() != "0")
        .unwrap_or(false)
}

/// The kernel's `may_follow_link` rule: may a process with effective user `euid` follow a
/// link owned by `link_uid` in a directory owned by `dir_uid` with mode `dir_mode`?
fn may_follow_link(protected: bool, euid: u32, link_uid: u32, dir_uid: u32, dir_mode: u32) -> bool {
    let sticky_world_writable = dir_mode & 0o1002 == 0o1002;
    !protected || !sticky_world_writable || link_uid == euid || link_uid == dir_uid
}

/// Refuses to write through `link` when the kernel would refuse to open it: a link in a
/// sticky world-writable directory that neither the user nor the directory's owner made.
/// `hop` names the link when it is not the target itself (a link further along the chain).
fn check_link(
    link: &Path,
    link_meta: &std::fs::Metadata,
    name: &str,
    hop: bool,
) -> Result<(), EngineError> {
    use std::os::unix::fs::MetadataExt;
    let dir = match link.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir_meta = std::fs::metadata(dir).map_err(|e| EngineError::io(name, e))?;
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    if may_follow_link(
        symlinks_protected(),
        euid,
        link_meta.uid(),
        dir_meta.uid(),
        dir_meta.mode(),
    ) {
        Ok(())
    } else {
        let which = if hop {
            format!(" ({}, which the link leads to)", link.display())
        } else {
            String::new()
        };
        Err(EngineError::io(
            name,
            io::Error::other(format!(
                "Permission denied (a symbolic link of user {}{which} in a shared sticky \
                 directory; fs.protected_symlinks forbids following it)",
                link_meta.uid()
            )),
        ))
    }
}

/// Links followed at most in one chain (the kernel's own limit, past which it says ELOOP).
const MAX_LINK_HOPS: usize = 40;

/// [`check_link`] for every link of the chain that starts at `target`: the kernel applies
/// its rule to each link it follows at the end of a path, so a link of the user's own that
/// leads to another user's link in `/tmp` is refused as that link is.
fn check_link_chain(target: &Path, name: &str) -> Result<(), EngineError> {
    let mut link = target.to_path_buf();
    for hop in 0..MAX_LINK_HOPS {
        let Ok(meta) = std::fs::symlink_metadata(&link) else {
            return Ok(());
        };
        if !meta.file_type().is_symlink() {
            return Ok(());
        }
        check_link(&link, &meta, name, hop > 0)?;
        let Ok(next) = std::fs::read_link(&link) else {
            return Ok(());
        };
        // A relative link is resolved from the directory that holds it.
        link = match link.parent() {
            Some(dir) if next.is_relative() => dir.join(next),
            _ => next,
        };
    }
    Ok(())
}

/// The file a symbolic link `target` leads to, resolved by the kernel itself (an `O_PATH`
/// open, which applies `fs.protected_symlinks` to every link of the chain, then the path of
/// what it opened), so that no link can be swapped between the check and the resolution.
fn resolve_link(target: &Path, name: &str) -> Result<PathBuf, EngineError> {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(target);
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(EngineError::io(
                name,
                io::Error::other("not writing through dangling symlink"),
            ))
        }
        Err(e) => return Err(EngineError::io(name, e)),
    };
    let proc = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
    match std::fs::read_link(proc) {
        Ok(p) if p.is_absolute() => Ok(p),
        // No /proc: the resolution the standard library does (check_link_chain has applied
        // the kernel's rule to the chain already).
        _ => std::fs::canonicalize(target).map_err(|e| EngineError::io(name, e)),
    }
}

/// An unnamed file in `dir` (`O_TMPFILE`, created 0666 less the umask), or `None` where the
/// filesystem or kernel has none, or `/proc` is not there to link it into place.
fn unnamed_in(dir: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o666)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
        .ok()
}

/// A named temporary file `.NAME.<random>.swath-tmp` in `dir` (created 0666 less the umask).
fn named_temp_in(
    dir: &Path,
    target: &Path,
    name: &str,
) -> Result<tempfile::NamedTempFile, EngineError> {
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&format!(".{file_name}."))
        .suffix(".swath-tmp")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        // The cause alone: tempfile's message names the temporary file, not the target.
        .map_err(|e| {
            let errno = io::Error::last_os_error();
            let cause = if errno.kind() == e.kind() {
                errno
            } else {
                io::Error::from(e.kind())
            };
            EngineError::io(name, cause)
        })
}

/// Gives the unnamed `file` the name `target`: linked under a fresh temporary name in the
/// target's directory (`linkat` through `/proc/self/fd`, which cannot replace a name), then
/// renamed over the target. The temporary name lives for two system calls, registered for
/// the signal handler meanwhile.
fn link_into_place(file: &File, target: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::sync::atomic::AtomicU64;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let from =
        CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(io::Error::other)?;
    let mut base = std::ffi::OsString::from(".");
    base.push(target.file_name().unwrap_or_default());
    for _ in 0..100 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mut n = base.clone();
        n.push(format!(
            ".{}{:x}{:x}.swath-tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            nanos
        ));
        let temp = dir.join(n);
        let to = CString::new(temp.as_os_str().as_bytes()).map_err(io::Error::other)?;
        // SAFETY: linkat with two valid NUL-terminated paths.
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::AlreadyExists {
                continue;
            }
            return Err(e);
        }
        let slot = register_temp(&temp);
        let renamed = std::fs::rename(&temp, target);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        if let Some(s) = slot {
            unregister_temp(s);
        }
        return renamed;
    }
    Err(io::Error::from(io::ErrorKind::AlreadyExists))
}

/// Reserves the blocks of `[start, start + len)` of `out` (named `name`) on the disk, so
/// that writing them later through a map cannot fail (a full disk under a shared map is a
/// SIGBUS, not an error). A filesystem that cannot reserve space is left to allocate as it
/// writes.
pub fn reserve(out: &File, name: &str, start: u64, len: u64) -> Result<(), EngineError> {
    use std::os::fd::AsRawFd;
    // SAFETY: posix_fallocate on a descriptor we own, with a valid range.
    let rc =
        unsafe { libc::posix_fallocate(out.as_raw_fd(), start as libc::off_t, len as libc::off_t) };
    match rc {
        0 | libc::EOPNOTSUPP | libc::EINVAL => Ok(()),
        e => Err(EngineError::io(name, io::Error::from_raw_os_error(e))),
    }
}

/// An output file mapped for writing, shared by workers that each fill ranges no other
/// worker touches (blocks of a transformation, sections of a patch). Only for a file of
/// this process's own (an [`AtomicOutput`]'s temporary file), sized before it is mapped:
/// no one else can truncate it under the map.
pub struct SharedMap {
    map: memmap2::MmapMut,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: workers only write through `range_mut`, whose callers guarantee disjoint ranges;
// the map lives as long as this value, which the workers borrow.
unsafe impl Sync for SharedMap {}
// SAFETY: as above; the pointer is the map's own, valid wherever the map goes.
unsafe impl Send for SharedMap {}

impl SharedMap {
    /// Maps `out` (named `name`, already sized) for writing.
    ///
    /// # Safety
    /// `out` must be this process's own file, not truncated while the map lives.
    pub unsafe fn new(out: &File, name: &str) -> Result<SharedMap, EngineError> {
        // SAFETY: by the caller's promise the file is ours and keeps its size.
        let mut map =
            unsafe { memmap2::MmapMut::map_mut(out) }.map_err(|e| EngineError::io(name, e))?;
        let (ptr, len) = (map.as_mut_ptr(), map.len());
        Ok(SharedMap { map, ptr, len })
    }

    /// The mapped length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes `[start, start + len)` of the file, to write.
    ///
    /// # Safety
    /// No two slices returned by this function and alive at once may overlap.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn range_mut(&self, start: usize, len: usize) -> &mut [u8] {
        assert!(
            start <= self.len && len <= self.len - start,
            "range in the map"
        );
        // SAFETY: in bounds (checked above) and, by the caller's promise, not aliased.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }

    /// Starts writing the map's dirty pages back, without waiting for them.
    pub fn flush_async(&self) -> Result<(), io::Error> {
        self.map.flush_async()
    }
}

/// One range of an output file mapped for writing on its own, unmapped when dropped: a
/// worker fills it, and the pages go back to the page cache as it finishes, so the
/// process's resident memory stays the ranges in flight whatever the file's size.
pub struct RangeMap {
    map: memmap2::MmapMut,
    skip: usize,
}

impl RangeMap {
    /// Maps `[start, start + len)` of `out` (named `name`, at least that long) for writing,
    /// its pages faulted in at once (`MADV_POPULATE_WRITE` where the kernel has it).
    ///
    /// # Safety
    /// `out` must be this process's own file, not truncated while the map lives.
    pub unsafe fn new(
        out: &File,
        name: &str,
        start: u64,
        len: usize,
    ) -> Result<RangeMap, EngineError> {
        let page = crate::sysinfo::page_size() as u64;
        let base = start / page * page;
        let skip = (start - base) as usize;
        // SAFETY: by the caller's promise the file is ours and keeps its size.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(base)
                .len(skip + len)
                .map_mut(out)
        }
        .map_err(|e| EngineError::io(name, e))?;
        if len > 0 {
            // SAFETY: madvise on our own live map; the advice only faults pages in, and
            // fails harmlessly on kernels that do not know it.
            unsafe {
                libc::madvise(map.as_ptr() as *mut libc::c_void, map.len(), 23);
                // MADV_POPULATE_WRITE
            }
        }
        Ok(RangeMap { map, skip })
    }
}

impl std::ops::Deref for RangeMap {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map[self.skip..]
    }
}

impl std::ops::DerefMut for RangeMap {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.map[self.skip..]
    }
}

impl AtomicOutput {
    /// Creates the output: an unnamed file in the target's directory where the filesystem
    /// has them (`O_TMPFILE`), else a named temporary file there.
    pub fn create(target: &Path) -> Result<Self, EngineError> {
        let name = target.to_string_lossy().into_owned();
        if descriptor_path(target).is_none() {
            check_link_chain(target, &name)?;
        }
        if let Some(fd) = descriptor_path(target) {
            // `/dev/stdout` and the like mean the descriptor this process already has (a
            // file opened for appending, a terminal, a pipe): written through a duplicate of
            // it, never reopened or replaced.
            // SAFETY: F_DUPFD_CLOEXEC on any number only duplicates or fails (EBADF).
            let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
            if dup < 0 {
                return Err(EngineError::io(&name, io::Error::last_os_error()));
            }
            // SAFETY: `dup` is a descriptor just created for this File alone.
            let file = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(dup) };
            return Ok(AtomicOutput {
                temp: Some(Sink::Direct(file)),
                target: target.to_path_buf(),
                slot: None,
                existing: None,
            });
        }
        // What the path names, links followed (`/dev/stdout` to a pipe included).
        if let Ok(m) = std::fs::metadata(target) {
            if !m.is_file() && !m.is_dir() {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .open(target)
                    .map_err(|e| EngineError::io(&name, e))?;
                return Ok(AtomicOutput {
                    temp: Some(Sink::Direct(file)),
                    target: target.to_path_buf(),
                    slot: None,
                    existing: None,
                });
            }
        }
        let resolved;
        let target = match std::fs::symlink_metadata(target) {
            Ok(m) if m.file_type().is_symlink() => {
                resolved = resolve_link(target, &name)?;
                resolved.as_path()
            }
            _ => target,
        };
        // An existing file is replaced only if it could be written in place (as GNU cp
        // opens it), and the new one gets its permission bits and, where allowed, owner.
        let existing = std::fs::metadata(target).ok().filter(|m| m.is_file());
        if existing.is_some() {
            let c = CString::new(target.as_os_str().as_bytes())
                .map_err(|e| EngineError::io(&name, io::Error::other(e)))?;
            // SAFETY: access with a valid NUL-terminated path.
            if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
                return Err(EngineError::io(&name, io::Error::last_os_error()));
            }
        }
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        // The usual reasons the temporary file cannot be made, reported for the target.
        let c = CString::new(dir.as_os_str().as_bytes())
            .map_err(|e| EngineError::io(&name, io::Error::other(e)))?;
        // SAFETY: access with a valid NUL-terminated path.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
            return Err(EngineError::io(&name, io::Error::last_os_error()));
        }
        // A file with no name (O_TMPFILE) where the filesystem has them: a run killed with
        // SIGKILL leaves nothing behind. Linked into place through /proc/self/fd at commit.
        let (sink, slot) = match unnamed_in(dir) {
            Some(file) => (Sink::Unnamed(file), None),
            None => {
                let temp = named_temp_in(dir, target, &name)?;
                let slot = register_temp(temp.path());
                (Sink::Temp(temp), slot)
            }
        };
        let existing = existing.map(|m| {
            use std::os::unix::fs::MetadataExt;
            let f = match &sink {
                Sink::Temp(t) => t.as_file(),
                Sink::Unnamed(f) | Sink::Direct(f) => f,
            };
            let _ = f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(
                m.mode() & 0o777,
            ));
            // Only root may give a file away; otherwise the new file is the writer's.
            let _ = std::os::unix::fs::fchown(f, Some(m.uid()), Some(m.gid()));
            m.mode()
        });
        Ok(AtomicOutput {
            temp: Some(sink),
            target: target.to_path_buf(),
            slot,
            existing,
        })
    }

    /// The file to write into: the temporary file, or a device or FIFO target itself.
    pub fn file(&self) -> &File {
        match self.sink() {
            Sink::Temp(t) => t.as_file(),
            Sink::Unnamed(f) | Sink::Direct(f) => f,
        }
    }

    /// True when the target is written directly (a device or FIFO): nothing is renamed, and
    /// what was written before a failure stays written.
    pub fn is_direct(&self) -> bool {
        matches!(self.sink(), Sink::Direct(_))
    }

    fn sink(&self) -> &Sink {
        self.temp
            .as_ref()
            .expect("the temporary file lives until commit")
    }

    /// Gives a new output the permission bits `mode` (for example the input's), as GNU cp
    /// does: without the set-user-ID, set-group-ID and sticky bits, less the umask. A file
    /// being replaced keeps its own bits, and a device or FIFO written directly its own.
    pub fn set_mode(&self, mode: u32) -> Result<(), EngineError> {
        use std::os::unix::fs::PermissionsExt;
        if self.is_direct() || self.existing.is_some() {
            return Ok(());
        }
        self.file()
            .set_permissions(std::fs::Permissions::from_mode(mode & 0o777 & !umask()))
            .map_err(|e| EngineError::io(self.target.to_string_lossy(), e))
    }

    /// Flushes to disk when `sync` is true, then renames the file over the target.
    pub fn commit(mut self, sync: bool) -> Result<(), EngineError> {
        let name = self.target.to_string_lossy().into_owned();
        if sync {
            self.file()
                .sync_all()
                .map_err(|e| EngineError::io(&name, e))?;
        }
        let slot = self.slot.take();
        let sink = self
            .temp
            .take()
            .expect("the temporary file lives until commit");
        let result = match sink {
            Sink::Temp(temp) => temp
                .persist(&self.target)
                .map(|_| ())
                .map_err(|e| EngineError::io(&name, io::Error::from(e))),
            Sink::Unnamed(file) => {
                link_into_place(&file, &self.target).map_err(|e| EngineError::io(&name, e))
            }
            Sink::Direct(_) => Ok(()),
        };
        if let Some(s) = slot {
            unregister_temp(s);
        }
        result
    }
}

impl Drop for AtomicOutput {
    fn drop(&mut self) {
        // The temporary file itself is removed by NamedTempFile's own drop.
        if let Some(s) = self.slot.take() {
            unregister_temp(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn commit_replaces_and_drop_discards() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        std::fs::write(&target, b"old").unwrap();
        {
            let out = AtomicOutput::create(&target).unwrap();
            out.file().write_all(b"half").unwrap();
            // dropped without commit
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let out = AtomicOutput::create(&target).unwrap();
        out.file().write_all(b"new").unwrap();
        out.commit(true).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // SAFETY: umask only reads and restores the process's file creation mask.
        let mask = unsafe {
            let m = libc::umask(0o022);
            libc::umask(m);
            m
        };
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&target).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o666 & !(mask as u32));
    }

    #[test]
    fn protected_symlinks_rule_matches_the_kernel() {
        // (protected, euid, link owner, directory owner, directory mode) -> may follow
        let cases = [
            (true, 0, 65534, 0, 0o41777, false), // nobody's link in /tmp, root follows
            (true, 0, 0, 0, 0o41777, true),      // root's own link
            (true, 1000, 0, 0, 0o41777, true),   // the directory owner's link
            (true, 0, 65534, 65534, 0o41777, true), // the link of the directory's owner
            (true, 0, 65534, 0, 0o40777, true),  // not sticky
            (true, 0, 65534, 0, 0o41775, true),  // not world-writable
            (false, 0, 65534, 0, 0o41777, true), // protection off
        ];
        for (protected, euid, link, dir, mode, want) in cases {
            assert_eq!(
                may_follow_link(protected, euid, link, dir, mode),
                want,
                "{protected} {euid} {link} {dir} {mode:o}"
            );
        }
    }

    #[test]
    fn output_under_construction_has_no_name_where_the_filesystem_allows() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        let out = AtomicOutput::create(&target).unwrap();
        out.file().write_all(b"data").unwrap();
        if matches!(out.sink(), Sink::Unnamed(_)) {
            // Nothing in the directory for a SIGKILL to leave behind.
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        } else {
            eprintln!("no O_TMPFILE here: the named temporary file is used");
        }
        out.commit(false).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"data");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn missing_directory_is_a_clear_error() {
        let err = AtomicOutput::create(Path::new("/nonexistent-dir/x")).unwrap_err();
        assert!(err.to_string().starts_with("/nonexistent-dir/x: "), "{err}");
        assert!(!err.to_string().contains("swath-tmp"), "{err}");
    }

    #[test]
    fn a_symlink_is_written_through_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        let link = dir.path().join("link");
        std::fs::write(&real, b"old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let out = AtomicOutput::create(&link).unwrap();
        assert!(!out.is_direct());
        out.file().write_all(b"new").unwrap();
        out.commit(false).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");

        // A chain of links (one relative) is written through to its end; every link stays.
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::os::unix::fs::symlink("../link", sub.join("rel")).unwrap();
        let chain = dir.path().join("chain");
        std::os::unix::fs::symlink(sub.join("rel"), &chain).unwrap();
        let out = AtomicOutput::create(&chain).unwrap();
        out.file().write_all(b"newer").unwrap();
        out.commit(false).unwrap();
        assert_eq!(std::fs::read(&real).unwrap(), b"newer");
        for l in [&link, &chain, &sub.join("rel")] {
            assert!(std::fs::symlink_metadata(l)
                .unwrap()
                .file_type()
                .is_symlink());
        }

        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let err = AtomicOutput::create(&dangling).unwrap_err();
        assert!(err.to_string().contains("dangling symlink"), "{err}");
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn a_descriptor_path_writes_to_the_open_descriptor() {
        // A file opened for appending, reached as /dev/fd/N: appended to, not replaced.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, b"precious\n").unwrap();
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let n = std::os::fd::AsRawFd::as_raw_fd(&f);
        let out = AtomicOutput::create(Path::new(&format!("/dev/fd/{n}"))).unwrap();
        assert!(out.is_direct());
        out.file().write_all(b"more\n").unwrap();
        out.commit(false).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"precious\nmore\n");
        assert_eq!(descriptor_path(Path::new("/dev/stdout")), Some(1));
        assert_eq!(descriptor_path(Path::new("/proc/self/fd/7")), Some(7));
        assert_eq!(descriptor_path(Path::new("/dev/fdx")), None);
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_new_one_loses_special_bits() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old");
        std::fs::write(&old, b"x").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o640)).unwrap();
        let out = AtomicOutput::create(&old).unwrap();
        out.set_mode(0o755).unwrap();
        out.commit(false).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&old), 0o640);
        let new = dir.path().join("new");
        let out = AtomicOutput::create(&new).unwrap();
        out.set_mode(0o4755).unwrap();
        out.commit(false).unwrap();
        assert_eq!(mode(&new), 0o755 & !umask());
    }

    #[test]
    fn a_fifo_is_written_directly_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let out = AtomicOutput::create(&fifo).unwrap();
        assert!(out.is_direct());
        out.set_mode(0o777).unwrap();
        out.file().write_all(b"through the pipe").unwrap();
        out.commit(false).unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        let meta = std::fs::symlink_metadata(&fifo).unwrap();
        assert!(meta.file_type().is_fifo());
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o600
        );
    }
}
