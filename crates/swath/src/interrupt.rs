//! What an interrupted in-place run tells its user. Ctrl-C (SIGINT), SIGTERM or SIGHUP in
//! the middle of `cipher --in-place` leaves the file partly transformed and its journal
//! beside it; the journal makes that safe, but the user must know to finish the run. A
//! handler prints the exact command and exits with the shell's status for a signal (128 +
//! its number). The message is made before the run starts, so the handler only writes
//! bytes (async-signal-safe: `write` and `_exit`).

use std::io::IsTerminal;
use std::sync::OnceLock;

/// The message the handler writes.
static MESSAGE: OnceLock<Box<[u8]>> = OnceLock::new();

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

/// From now on, an interrupting signal prints `message` (one line, ended here) on standard
/// error and ends the process with status 128 + the signal's number.
pub fn on_interrupt_say(message: &str) {
    // A progress bar may be half drawn on a terminal: the message starts on a clean line.
    let clear = if std::io::stderr().is_terminal() {
        "\r\x1b[2K"
    } else {
        ""
    };
    let _ = MESSAGE.set(
        format!("{clear}{message}\n")
            .into_bytes()
            .into_boxed_slice(),
    );
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: `say_and_exit` only reads a message set before the handler is installed
        // and calls async-signal-safe functions (write, _exit).
        unsafe {
            libc::signal(sig, say_and_exit as *const () as libc::sighandler_t);
        }
    }
}

extern "C" fn say_and_exit(sig: libc::c_int) {
    if let Some(m) = MESSAGE.get() {
        // SAFETY: writing a static buffer to descriptor 2; the result is ignored (nothing
        // else can be done in a handler).
        unsafe {
            libc::write(2, m.as_ptr().cast(), m.len());
        }
    }
    // SAFETY: _exit ends the process at once, without running destructors or handlers.
    unsafe { libc::_exit(128 + sig) }
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
