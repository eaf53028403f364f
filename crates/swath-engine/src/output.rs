//! Atomic output files: written into a file with no name (`O_TMPFILE`) in the target's
//! directory and linked into place only when complete, so that nothing is left behind
//! whatever ends the process, SIGKILL included. Where the filesystem has no unnamed files,
//! a temporary name beside the target is used instead, renamed into place when complete and
//! removed if anything goes wrong, including SIGINT, SIGTERM and SIGHUP (a handler unlinks
//! every registered temporary file, then lets the signal take its default course); only a
//! SIGKILL can leave that one behind. The handlers are installed before the first file is
//! made, and a signal that arrives while a temporary name is being created, linked, renamed
//! or removed waits for the end of that step (a few system calls), so no moment leaves a
//! name behind that the handler does not know.
//!
//! The target's directory is opened once, when the output is created ([`crate::dirs`]),
//! and every later step (the temporary file, its owner, its name, the rename into place,
//! the removal on failure or on a signal) is made relative to that descriptor: another user
//! who renames or swaps a directory of the path while swath writes (a slow source gives
//! them time) cannot redirect the output into a directory of their choosing, just as GNU
//! cp, which opens its destination once, writes where it opened.
//!
//! A symbolic link is written through (the file it points to is replaced, the link stays),
//! under the rule the kernel applies to `open()` when `fs.protected_symlinks` is 1: a link in
//! a sticky directory that others may write into (`/tmp`) is followed only when it belongs
//! to the user or to the directory's owner. The rule holds for every link of a chain (a link
//! of the user's own that leads to another user's link in `/tmp` is refused too), and the
//! file written is the one the kernel itself resolves the chain to: the directory of that
//! file is then opened following no further link and checked to hold that very file
//! (device and inode), else the output is refused. Without the first check, another user's
//! link planted in `/tmp` made root's output replace the file it pointed to; without the
//! second, a directory swapped on the resolved path did.
//! A target that exists and is not a regular file (a device such as `/dev/null`, a FIFO) is
//! written directly, since renaming over it would replace the device node or pipe with a
//! plain file.
//!
//! Blocks written into an output in parallel, by positional writes or through a map, in
//! any order or as one ordered stream, go through [`blocks::BlockWriter`].

pub mod blocks;

pub use blocks::{BlockOptions, BlockWriter, Lane, Reserve, Via};

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

use crate::dirs::{self, Access, Dir, FileType, Links, Replace, Stat};
use crate::error::EngineError;

/// A temporary name that a fatal signal must remove: the directory it is in (held open by
/// its output until the name is gone) and the name there.
struct TempName {
    dir: RawFd,
    name: CString,
}

/// Temporary names that a fatal signal must remove.
const TEMP_SLOTS: usize = 32;
#[allow(clippy::declare_interior_mutable_const)]
const NO_TEMP: AtomicPtr<TempName> = AtomicPtr::new(std::ptr::null_mut());
static TEMP_NAMES: [AtomicPtr<TempName>; TEMP_SLOTS] = [NO_TEMP; TEMP_SLOTS];
static HANDLERS: Once = Once::new();
/// Steps under way that create, name, rename or remove a temporary file (and register or
/// unregister it): a fatal signal that arrives meanwhile waits for their end.
static BUSY: AtomicUsize = AtomicUsize::new(0);
/// The fatal signal that arrived, if any (0: none).
static PENDING: AtomicI32 = AtomicI32::new(0);

/// Removes every temporary output file still being written. It allocates nothing and only
/// calls `unlinkat`, so it may run in a signal handler or where memory ran out, just before
/// the process ends.
pub fn remove_temporary_outputs() {
    for slot in TEMP_NAMES.iter() {
        let p = slot.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: `p` is a registered TempName, freed only inside a guarded step, and
            // no guarded step runs once a fatal signal is pending (see `guarded`); its
            // directory stays open while it is registered. unlinkat is async-signal-safe.
            unsafe { libc::unlinkat((*p).dir, (*p).name.as_ptr(), 0) };
        }
    }
}

/// Removes the temporary files and ends the process by signal `sig`, as if no handler
/// had been there (outside the handler: at the end of a step that held the signal back).
fn die(sig: libc::c_int) -> ! {
    remove_temporary_outputs();
    // SAFETY: restoring the default action, unblocking the signal in this thread, raising
    // it and exiting only act on this process, with a valid signal set.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
        libc::_exit(128 + sig)
    }
}

extern "C" fn on_fatal_signal(sig: libc::c_int) {
    PENDING.store(sig, Ordering::SeqCst);
    if BUSY.load(Ordering::SeqCst) > 0 {
        // A step is creating or removing a temporary name: it ends the process when done.
        return;
    }
    remove_temporary_outputs();
    // SAFETY: restoring the default action and re-raising are async-signal-safe; the
    // signal, blocked while its handler runs, is delivered as the handler returns.
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
                sa.sa_sigaction = on_fatal_signal as *const () as usize;
                // A deferred signal must not cut the step's system calls short.
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
}

/// Runs `step`, which creates, links, renames or removes a temporary name and registers or
/// unregisters it, with fatal signals held back until it ends: a signal that arrives
/// meanwhile then removes every registered name and ends the process. A step never starts
/// once a fatal signal has arrived. The handlers are installed first.
fn guarded<T>(step: impl FnOnce() -> T) -> T {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            if BUSY.fetch_sub(1, Ordering::SeqCst) == 1 {
                let sig = PENDING.load(Ordering::SeqCst);
                if sig != 0 {
                    die(sig);
                }
            }
        }
    }
    install_handlers();
    BUSY.fetch_add(1, Ordering::SeqCst);
    let leave = Leave;
    if PENDING.load(Ordering::SeqCst) != 0 {
        drop(leave);
        // Another step under way ends the process when it is done.
        loop {
            std::thread::park();
        }
    }
    let out = step();
    drop(leave);
    out
}

/// Registers the temporary name `name` in `dir` for the signal handler (inside a guarded
/// step); `None` when every slot is taken.
fn register_temp(dir: &Dir, name: &OsStr) -> Option<usize> {
    let name = CString::new(name.as_bytes()).ok()?;
    let entry = Box::into_raw(Box::new(TempName {
        dir: dir.as_raw_fd(),
        name,
    }));
    for (i, slot) in TEMP_NAMES.iter().enumerate() {
        if slot
            .compare_exchange(
                std::ptr::null_mut(),
                entry,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            return Some(i);
        }
    }
    // SAFETY: `entry` came from Box::into_raw above and was not stored anywhere.
    drop(unsafe { Box::from_raw(entry) });
    None
}

/// Forgets a registered temporary name (inside a guarded step).
fn unregister_temp(slot: Option<usize>) {
    let Some(slot) = slot else { return };
    let p = TEMP_NAMES[slot].swap(std::ptr::null_mut(), Ordering::AcqRel);
    if !p.is_null() {
        // SAFETY: `p` came from Box::into_raw in register_temp and is no longer shared: the
        // handler reads entries only when no guarded step runs.
        drop(unsafe { Box::from_raw(p) });
    }
}

/// A fresh temporary name beside the entry `entry`: `.ENTRY.<pid><count><nanoseconds>.swath-tmp`
/// (the entry's name cut short enough for the whole to fit a file name).
fn temp_name(entry: &OsStr) -> OsString {
    use std::sync::atomic::AtomicU64;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let bytes = entry.as_bytes();
    let mut n = b".".to_vec();
    n.extend_from_slice(&bytes[..bytes.len().min(200)]);
    n.extend_from_slice(
        format!(
            ".{}{:x}{:x}.swath-tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            nanos
        )
        .as_bytes(),
    );
    <OsString as std::os::unix::ffi::OsStringExt>::from_vec(n)
}

/// Tries `make` on fresh temporary names until one does not exist yet.
fn with_fresh_name<T>(
    entry: &OsStr,
    mut make: impl FnMut(&OsStr) -> io::Result<T>,
) -> io::Result<(OsString, T)> {
    for _ in 0..100 {
        let temp = temp_name(entry);
        match make(&temp) {
            Ok(t) => return Ok((temp, t)),
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::from(io::ErrorKind::AlreadyExists))
}

/// An output file under construction. Dropping it without [`AtomicOutput::commit`] removes
/// the temporary file and leaves any existing target untouched.
#[derive(Debug)]
pub struct AtomicOutput {
    /// Always `Some` until `commit` takes it.
    temp: Option<Sink>,
    /// The output as the user named it, for messages.
    name: String,
    /// Where the output goes: the directory, held from `create` on, and the name in it
    /// (`None` for a target written directly).
    place: Option<(Dir, OsString)>,
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
    /// A temporary file `temp` in the output's directory, renamed over the target by
    /// `commit` (registered for the signal handler in `slot`).
    Temp {
        file: File,
        temp: OsString,
        slot: Option<usize>,
    },
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

/// An unnamed file in `dir` (`O_TMPFILE`, created 0666 less the umask), or `None` where the
/// filesystem or kernel has none, or `/proc` is not there to link it into place.
fn unnamed_in(dir: &Dir) -> Option<File> {
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    dir.open_beneath(b".", libc::O_TMPFILE | libc::O_RDWR, 0o666, Links::Follow)
        .ok()
}

/// A named temporary file `.ENTRY.<unique>.swath-tmp` in `dir` (created 0666 less the
/// umask, never through a link), registered for the signal handler.
fn named_temp_in(dir: &Dir, entry: &OsStr) -> io::Result<Sink> {
    guarded(|| {
        let flags = libc::O_CREAT | libc::O_EXCL | libc::O_RDWR;
        let (temp, file) = with_fresh_name(entry, |temp| {
            dir.open_beneath(temp.as_bytes(), flags, 0o666, Links::Refuse)
        })?;
        let slot = register_temp(dir, &temp);
        crate::pause::at("output-temp-named");
        Ok(Sink::Temp { file, temp, slot })
    })
}

/// Renames the temporary name `temp` over `entry` in `dir` (removing it if that fails) and
/// forgets it.
fn rename_into_place(
    dir: &Dir,
    temp: &OsStr,
    entry: &OsStr,
    slot: Option<usize>,
) -> io::Result<()> {
    guarded(|| {
        let renamed = dir.rename(temp.as_bytes(), entry.as_bytes(), Replace::Allow);
        if renamed.is_err() {
            let _ = dir.unlink(temp.as_bytes());
        }
        unregister_temp(slot);
        renamed
    })
}

/// Gives the unnamed `file` the name `entry` in `dir`: linked under a fresh temporary name
/// (`linkat` through `/proc/self/fd`, which cannot replace a name), then renamed over the
/// target. The temporary name lives for two system calls, registered for the signal handler
/// meanwhile.
fn link_into_place(file: &File, dir: &Dir, entry: &OsStr) -> io::Result<()> {
    let (temp, slot) = guarded(|| {
        let (temp, ()) = with_fresh_name(entry, |temp| dir.link_file(file, temp.as_bytes()))?;
        let slot = register_temp(dir, &temp);
        crate::pause::at("output-temp-named");
        Ok::<_, io::Error>((temp, slot))
    })?;
    rename_into_place(dir, &temp, entry, slot)
}

/// The error for an output whose directory changed between the resolution of its link and
/// the opening of that directory.
fn moved(name: &str) -> EngineError {
    EngineError::io(
        name,
        io::Error::other(
            "the directory of the file the link leads to changed while swath opened it \
             (renamed or replaced by a link): not writing",
        ),
    )
}

/// True when the output path `out` (its links followed) already names the file `input` is
/// (same device and inode): writing `out` would replace that input. The commands that
/// read one file and write another refuse such an output with both names.
pub fn replaces_input(out: &Path, input: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(out).is_ok_and(|o| o.dev() == input.dev() && o.ino() == input.ino())
}

/// True when `a` and `b` are the same file.
fn same_file(a: &Stat, b: &Stat) -> bool {
    a.st_dev == b.st_dev && a.st_ino == b.st_ino
}

/// The kind of file a `stat` describes.
fn kind(st: &Stat) -> FileType {
    FileType::from_raw_mode(st.st_mode)
}

/// The target itself (a device, a FIFO, a terminal, which the `O_PATH` descriptor `obj`
/// holds), opened for writing through that descriptor, so that it is the very file found;
/// by `path` where there is no `/proc`.
fn open_direct(obj: &impl AsFd, path: &Path) -> io::Result<File> {
    let proc = format!("/proc/self/fd/{}", obj.as_fd().as_raw_fd());
    let via = if Path::new(&proc).exists() {
        Path::new(&proc)
    } else {
        path
    };
    std::fs::OpenOptions::new().write(true).open(via)
}

impl AtomicOutput {
    /// Creates the output: an unnamed file in the target's directory where the filesystem
    /// has them (`O_TMPFILE`), else a named temporary file there. The directory is opened
    /// here, once; everything later happens in it.
    pub fn create(target: &Path) -> Result<Self, EngineError> {
        let name = target.to_string_lossy().into_owned();
        let err = |e: io::Error| EngineError::io(&name, e);
        if let Some(fd) = descriptor_path(target) {
            // `/dev/stdout` and the like mean the descriptor this process already has (a
            // file opened for appending, a terminal, a pipe): written through a duplicate of
            // it, never reopened or replaced.
            // SAFETY: F_DUPFD_CLOEXEC on any number only duplicates or fails (EBADF).
            let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
            if dup < 0 {
                return Err(err(io::Error::last_os_error()));
            }
            // SAFETY: `dup` is a descriptor just created for this File alone.
            let file = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(dup) };
            return Ok(AtomicOutput::direct(file, name));
        }
        check_link_chain(target, &name)?;
        let (dir, entry) = Dir::holding(target).map_err(err)?;
        let entry = entry.ok_or_else(|| err(io::Error::from_raw_os_error(libc::EISDIR)))?;
        let (dir, entry, existing) = match dir.stat_at(entry.as_bytes(), Links::Refuse) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => (dir, entry, None),
            Err(e) => return Err(err(e)),
            Ok(st) if kind(&st) == FileType::Symlink => {
                // Resolved by the kernel itself (an O_PATH open, which applies
                // fs.protected_symlinks to every link of the chain), once.
                let obj = match dir.open_beneath(entry.as_bytes(), libc::O_PATH, 0, Links::Follow) {
                    Ok(o) => o,
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                        return Err(err(io::Error::other(
                            "not writing through dangling symlink",
                        )))
                    }
                    Err(e) => return Err(err(e)),
                };
                let st = dirs::fstat(&obj).map_err(err)?;
                match kind(&st) {
                    FileType::RegularFile => {}
                    FileType::Directory => {
                        return Err(err(io::Error::from_raw_os_error(libc::EISDIR)))
                    }
                    _ => {
                        let file = open_direct(&obj, target).map_err(err)?;
                        return Ok(AtomicOutput::direct(file, name));
                    }
                }
                let resolved = resolved_path(&obj, target).map_err(err)?;
                crate::pause::at("output-resolved");
                // The resolved file's directory, opened following no further link and
                // holding that very file: a directory swapped meanwhile is refused.
                let (Some(parent), Some(file_name)) = (resolved.parent(), resolved.file_name())
                else {
                    return Err(moved(&name));
                };
                let dir = Dir::open_nofollow(parent).map_err(|_| moved(&name))?;
                match dir.stat_at(file_name.as_bytes(), Links::Refuse) {
                    Ok(found) if same_file(&found, &st) => {}
                    _ => return Err(moved(&name)),
                }
                (dir, file_name.to_os_string(), Some(st))
            }
            Ok(st) if kind(&st) == FileType::RegularFile => (dir, entry, Some(st)),
            Ok(st) if kind(&st) == FileType::Directory => {
                return Err(err(io::Error::from_raw_os_error(libc::EISDIR)))
            }
            Ok(st) => {
                // A device or FIFO: written directly, if it is still the one looked at.
                let obj = dir
                    .open_beneath(entry.as_bytes(), libc::O_PATH, 0, Links::Refuse)
                    .map_err(err)?;
                let now = dirs::fstat(&obj).map_err(err)?;
                if !same_file(&now, &st) {
                    return Err(err(io::Error::other(
                        "replaced by another file while swath opened it: not writing",
                    )));
                }
                let file = open_direct(&obj, target).map_err(err)?;
                return Ok(AtomicOutput::direct(file, name));
            }
        };
        // An existing file is replaced only if it could be written in place (as GNU cp
        // opens it), and the new one gets its permission bits and, where allowed, owner.
        if existing.is_some() {
            dir.access(entry.as_bytes(), Access::WRITE_OK)
                .map_err(err)?;
        }
        // The usual reasons the temporary file cannot be made, reported for the target.
        dir.access(b".", Access::WRITE_OK | Access::EXEC_OK)
            .map_err(err)?;
        // A file with no name (O_TMPFILE) where the filesystem has them: a run killed with
        // SIGKILL leaves nothing behind. Linked into place through /proc/self/fd at commit.
        #[cfg(test)]
        let unnamed = if tests::NAMED_ONLY.get() {
            None
        } else {
            unnamed_in(&dir)
        };
        #[cfg(not(test))]
        let unnamed = unnamed_in(&dir);
        let sink = match unnamed {
            Some(file) => {
                // Installed before any name exists (linked at commit).
                install_handlers();
                Sink::Unnamed(file)
            }
            None => named_temp_in(&dir, &entry).map_err(|e| {
                // The target exists (or its directory does): say which file could not be
                // made, not a bare "No such file or directory" (`/proc/version`).
                err(io::Error::new(
                    e.kind(),
                    format!(
                        "cannot create a temporary file in its directory ({})",
                        crate::error::os_message(&e)
                    ),
                ))
            })?,
        };
        let out = AtomicOutput {
            temp: Some(sink),
            name,
            place: Some((dir, entry)),
            existing: existing.map(|st| st.st_mode),
        };
        if let Some(st) = existing {
            let f = out.file();
            let _ = f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(
                st.st_mode & 0o777,
            ));
            // Only root may give a file away; otherwise the new file is the writer's.
            let _ = std::os::unix::fs::fchown(f, Some(st.st_uid), Some(st.st_gid));
        }
        crate::pause::at("output-created");
        Ok(out)
    }

    /// An output written directly into `file` (a device, a FIFO, a descriptor).
    fn direct(file: File, name: String) -> AtomicOutput {
        AtomicOutput {
            temp: Some(Sink::Direct(file)),
            name,
            place: None,
            existing: None,
        }
    }

    /// The file to write into: the temporary file, or a device or FIFO target itself.
    pub fn file(&self) -> &File {
        match self.sink() {
            Sink::Temp { file, .. } | Sink::Unnamed(file) | Sink::Direct(file) => file,
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
            .map_err(|e| EngineError::io(&self.name, e))
    }

    /// Flushes to disk when `sync` is true, then renames the file over the target.
    pub fn commit(mut self, sync: bool) -> Result<(), EngineError> {
        if sync {
            self.file()
                .sync_all()
                .map_err(|e| EngineError::io(&self.name, e))?;
        }
        let sink = self
            .temp
            .take()
            .expect("the temporary file lives until commit");
        let result = match (sink, &self.place) {
            (Sink::Temp { temp, slot, .. }, Some((dir, entry))) => {
                rename_into_place(dir, &temp, entry, slot)
            }
            (Sink::Unnamed(file), Some((dir, entry))) => link_into_place(&file, dir, entry),
            _ => Ok(()),
        };
        result.map_err(|e| EngineError::io(&self.name, e))
    }
}

/// The path of the file the `O_PATH` descriptor `obj` holds (from `/proc/self/fd`), or,
/// without `/proc`, the standard library's resolution of `target` (the directory check
/// that follows holds either way).
fn resolved_path(obj: &impl AsFd, target: &Path) -> io::Result<PathBuf> {
    let proc = format!("/proc/self/fd/{}", obj.as_fd().as_raw_fd());
    match std::fs::read_link(proc) {
        Ok(p) if p.is_absolute() => Ok(p),
        _ => std::fs::canonicalize(target),
    }
}

impl Drop for AtomicOutput {
    fn drop(&mut self) {
        // A named temporary file not committed is removed (an unnamed one has no name).
        if let (Some(Sink::Temp { temp, slot, .. }), Some((dir, _))) =
            (self.temp.take(), &self.place)
        {
            guarded(|| {
                let _ = dir.unlink(temp.as_bytes());
                unregister_temp(slot);
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    thread_local! {
        /// Makes `create` use a named temporary file, as on a filesystem without
        /// `O_TMPFILE`.
        pub(super) static NAMED_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Runs `f` once with an unnamed temporary file (where the filesystem has them) and
    /// once with a named one.
    fn with_each_sink(mut f: impl FnMut(&str)) {
        for named in [false, true] {
            NAMED_ONLY.set(named);
            f(if named { "named" } else { "unnamed" });
        }
        NAMED_ONLY.set(false);
    }

    /// The names in `dir`, sorted (the block writer's tests use it too).
    pub(super) fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

    #[test]
    fn the_output_goes_into_the_directory_opened_whatever_is_renamed_meanwhile() {
        with_each_sink(|sink| {
            let t = tempfile::tempdir().unwrap();
            let a = t.path().join("a");
            std::fs::create_dir(&a).unwrap();
            let out = AtomicOutput::create(&a.join("out")).unwrap();
            out.file().write_all(b"data").unwrap();
            // The directory renamed away and another put in its place (or a link).
            std::fs::rename(&a, t.path().join("moved")).unwrap();
            std::fs::create_dir(t.path().join("elsewhere")).unwrap();
            std::os::unix::fs::symlink(t.path().join("elsewhere"), &a).unwrap();
            out.commit(false).unwrap();
            assert_eq!(names(&t.path().join("moved")), ["out"], "{sink}");
            assert_eq!(
                std::fs::read(t.path().join("moved/out")).unwrap(),
                b"data",
                "{sink}"
            );
            assert!(names(&t.path().join("elsewhere")).is_empty(), "{sink}");

            // Dropped without commit: the temporary name (if any) is removed from the
            // directory opened, not from the one now at the path.
            let b = t.path().join("b");
            std::fs::create_dir(&b).unwrap();
            let out = AtomicOutput::create(&b.join("out")).unwrap();
            if sink == "named" {
                let n = names(&b);
                assert_eq!(n.len(), 1, "{n:?}");
                assert!(
                    n[0].starts_with(".out.") && n[0].ends_with(".swath-tmp"),
                    "{n:?}"
                );
            }
            std::fs::rename(&b, t.path().join("b2")).unwrap();
            std::fs::create_dir(&b).unwrap();
            drop(out);
            assert!(names(&t.path().join("b2")).is_empty(), "{sink}");
            assert!(names(&b).is_empty(), "{sink}");
        });
    }

    #[test]
    fn the_named_temporary_file_keeps_every_behaviour() {
        NAMED_ONLY.set(true);
        commit_replaces_and_drop_discards();
        a_symlink_is_written_through_and_kept();
        a_replaced_file_keeps_its_mode_and_a_new_one_loses_special_bits();
        missing_directory_is_a_clear_error();
        NAMED_ONLY.set(false);
    }

    #[test]
    fn a_long_name_gets_a_temporary_name_that_fits() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("x".repeat(255));
        with_each_sink(|sink| {
            let out = AtomicOutput::create(&target).unwrap();
            out.file().write_all(sink.as_bytes()).unwrap();
            out.commit(false).unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), sink.as_bytes());
            assert_eq!(names(t.path()).len(), 1);
        });
    }

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

    /// `/proc` takes no new file: the message says the temporary file failed, not that the
    /// existing target is missing.
    #[test]
    fn a_directory_without_new_files_is_named_as_such() {
        let err = AtomicOutput::create(Path::new("/proc/version")).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("/proc/version: "), "{text}");
        // Root passes the access checks and meets the temporary file's failure; others are
        // refused write permission first.
        assert!(
            text.contains("temporary file") || text.ends_with("Permission denied"),
            "{text}"
        );
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
