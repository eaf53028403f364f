//! A private scratch directory for commands that make large files of their own (`swath demo`,
//! `swath bench`): mode 0700, a fresh name made by the tempfile crate in a parent directory,
//! and removed whatever ends the command: its end, an error, or Ctrl-C, SIGTERM and SIGHUP.
//!
//! On a signal ([`crate::interrupt`]), the thread that takes it stops the command being
//! timed, removes the directory, runs the caller's own last action (`swath bench` saves the
//! runs measured so far), and ends the process with status 128 + the signal's number.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};

/// Set once a signal asked the command to stop: errors after that are the signal's doing.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The process id of the command being timed, or 0.
static CHILD: AtomicI32 = AtomicI32::new(0);

/// The private directory every generated file and output lives in.
pub struct Scratch {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl Scratch {
    /// Makes the directory in `parent`, its name starting with `prefix`, and starts the
    /// thread that removes it on a signal and then runs `last(signal)`.
    pub fn new(
        parent: &Path,
        prefix: &str,
        last: impl FnOnce(libc::c_int) + Send + 'static,
    ) -> Result<Scratch> {
        use std::os::unix::fs::PermissionsExt;
        refuse_shared_parent(parent)?;
        // Blocked first, so that a Ctrl-C from here on waits for the thread that cleans up.
        let blocked = crate::interrupt::block()?;
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(parent)
            .with_context(|| format!("{}: cannot make a scratch directory", parent.display()))?;
        let path = dir.path().to_path_buf();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))
            .with_context(|| path.display().to_string())?;
        let gone = path.clone();
        blocked.then(move |sig| {
            clean_up(gone);
            last(sig);
        })?;
        Ok(Scratch {
            dir: Some(dir),
            path,
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A file in the directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Removes the directory now, reporting a failure (dropping it removes it too, silently).
    pub fn remove(mut self) -> Result<()> {
        match self.dir.take() {
            Some(d) => d
                .close()
                .with_context(|| format!("{}: cannot remove", self.path.display())),
            None => Ok(()),
        }
    }
}

/// Refuses a parent in which another user could rename the private directory and put a
/// link to a directory of theirs in its place (the files would then be written and
/// removed there): one owned by another user (root aside), or one others may write into
/// without the sticky bit (`/tmp` has it). `swath bench --dir bench-data` run in `/tmp`,
/// where someone made `/tmp/bench-data` first, is refused so.
fn refuse_shared_parent(parent: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(parent) else {
        // Missing: making the directory in it says why.
        return Ok(());
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me && meta.uid() != 0 {
        anyhow::bail!(
            "{}: belongs to another user, who could swap the files made in it: give a \
             directory of your own",
            parent.display()
        );
    }
    if meta.mode() & 0o022 != 0 && meta.mode() & 0o1000 == 0 {
        anyhow::bail!(
            "{}: others may write into it and it has no sticky bit: give a directory of \
             your own",
            parent.display()
        );
    }
    Ok(())
}

/// True once a signal asked the command to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Waits for the signal thread to end the process (called when an error is the signal's
/// doing, so that it is not reported as a failure of its own, or when the results are the
/// signal thread's to report).
pub fn wait_for_the_end() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Records the command being timed (0: none), for the signal thread to stop.
pub fn set_child(pid: u32) {
    CHILD.store(i32::try_from(pid).unwrap_or(0), Ordering::SeqCst);
}

/// The action on a signal: stop the command being timed, remove the directory.
fn clean_up(dir: PathBuf) {
    INTERRUPTED.store(true, Ordering::SeqCst);
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill has no memory-safety preconditions; the id is that of our own
        // child, not yet reaped while it is recorded here.
        unsafe { libc::kill(child, libc::SIGTERM) };
    }
    // The main thread may still be writing a file into the directory: try again until it
    // stays empty.
    for _ in 0..100 {
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}
