//! SIGPIPE as the caller left it, as the GNU tools keep it.
//!
//! With SIGPIPE at its default, a write to a pipe nobody reads any more ends the process
//! silently (a shell reports status 141): `swath grep foo big | head -1` stops at once. A
//! caller that ignores SIGPIPE (a `trap '' PIPE`, Python's `subprocess` before 3.2, many
//! daemons) asks for the write error instead, and GNU tools then report it: `grep: write
//! error: Broken pipe` and status 2, `wc: write error` and 1, `cmp: standard output: Broken
//! pipe` and 2 ([`crate::stdout`] words them). So swath must know which of the two it
//! inherited. Rust's runtime sets SIGPIPE to ignored before `main` runs, which hides the
//! inherited disposition; it is read earlier, by a function the C runtime calls before
//! `main` (an `.init_array` entry: the dynamic loader runs those for the executable before
//! its `main`, which is where Rust's runtime starts).

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether SIGPIPE was ignored when the process started (before Rust's runtime ignored it).
static INHERITED_IGNORED: AtomicBool = AtomicBool::new(false);

/// Reads the inherited disposition; runs before `main`.
extern "C" fn record_inherited() {
    // SAFETY: sigaction with a null new action only reads the current one into `old`, a
    // zeroed struct we own; nothing else runs yet (no threads before `main`).
    let ignored = unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    };
    INHERITED_IGNORED.store(ignored, Ordering::Relaxed);
}

/// The constructor entry. Without it (another platform's loader) the disposition counts as
/// the default, as it always did.
#[used]
#[link_section = ".init_array"]
static RECORD_INHERITED: extern "C" fn() = record_inherited;

/// Puts SIGPIPE back as the caller left it: ignored (every write to a closed pipe then fails
/// with EPIPE, which the commands report) or the default (the process ends on such a write).
/// Call it first in `main`, before any thread starts.
pub fn restore_inherited() {
    let disposition = if INHERITED_IGNORED.load(Ordering::Relaxed) {
        libc::SIG_IGN
    } else {
        libc::SIG_DFL
    };
    // SAFETY: setting a signal's disposition to SIG_IGN or SIG_DFL (no handler) before any
    // thread starts.
    unsafe { libc::signal(libc::SIGPIPE, disposition) };
}
