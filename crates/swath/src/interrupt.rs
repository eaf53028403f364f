//! What swath does when it is interrupted (Ctrl-C, SIGTERM, SIGHUP) in the middle of work
//! that must not just vanish: the demo removes its scratch directory, and an in-place
//! transformation says the file is partly done and the exact command that finishes it.
//!
//! The signals are blocked in the calling thread (threads started later inherit the mask;
//! commands swath runs do not, since the standard library clears the mask in a child before
//! `exec`) and taken by one thread that waits for them with `sigwait`. That thread runs the
//! caller's action as ordinary code (not in a signal handler, so it may print, kill a child
//! or remove a directory tree) and ends the process with status 128 + the signal's number,
//! as a shell reports a process a signal killed.

use std::io::IsTerminal;

use anyhow::{Context, Result};

/// The signals taken.
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Interrupting signals blocked in this thread (and the threads it starts), waiting for an
/// action ([`Blocked::then`]).
pub struct Blocked(libc::sigset_t);

/// Blocks the interrupting signals: from here on one waits until [`Blocked::then`] takes
/// it. Call it before starting threads.
pub fn block() -> Result<Blocked> {
    // SAFETY: `set` is a valid sigset_t initialised by sigemptyset before use; blocking
    // signals in this thread has no other effect than queueing them for sigwait.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            anyhow::bail!("cannot block Ctrl-C while setting up");
        }
        set
    };
    Ok(Blocked(set))
}

impl Blocked {
    /// On an interrupting signal, runs `action(signal)` on its own thread, then ends the
    /// process with status 128 + the signal's number.
    pub fn then(self, action: impl FnOnce(libc::c_int) + Send + 'static) -> Result<()> {
        let set = self.0;
        std::thread::Builder::new()
            .name("swath-signals".into())
            .spawn(move || {
                let mut sig: libc::c_int = 0;
                // SAFETY: `set` holds the blocked signals; sigwait writes the one taken
                // into `sig`, a valid c_int.
                while unsafe { libc::sigwait(&set, &mut sig) } != 0 {}
                action(sig);
                std::process::exit(128 + sig);
            })
            .context("starting the thread that answers Ctrl-C")?;
        Ok(())
    }
}

/// From now on, an interrupting signal prints `message` (one line) on standard error and
/// ends the process with status 128 + the signal's number.
pub fn on_interrupt_say(message: &str) -> Result<()> {
    // A progress bar may be half drawn on a terminal: the message starts on a clean line.
    let clear = if std::io::stderr().is_terminal() {
        "\r\x1b[2K"
    } else {
        ""
    };
    let line = format!("{clear}{message}\n");
    block()?.then(move |_| {
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.flush();
    })
}

/// A path quoted for a POSIX shell (single quotes; a quote inside as `'\''`), bare when it
/// needs no quoting.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("/data/big.img"), "/data/big.img");
        assert_eq!(shell_quote("my file"), "'my file'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
        assert_eq!(shell_quote(""), "''");
    }
}
