//! Standard output for every command, help and version included: one buffered writer that
//! remembers the first write error and reports it once, at the end, worded as the tool whose
//! name swath answers to words it (GNU grep, wc, cmp, or swath's own one line).
//!
//! After a failure the rest of the output is dropped, so callers may go on (cmp does, to
//! keep its messages on standard error) or stop at once ([`Stdout::failed`]).

use std::io::{self, IsTerminal, Write};

use crate::status::Status;

pub use swath_report::text::visible;

/// How a tool words a write error on standard output, and the status it then exits with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Voice {
    /// GNU grep: `grep: write error: CAUSE`, status 2.
    Grep,
    /// GNU wc (coreutils 9.1, as Debian 12 ships it): `wc: write error`, status 1. Its
    /// `close_stdout` drops the cause when the stream failed before it was closed, which is
    /// always the case for its output.
    Wc,
    /// GNU cmp (`check_stdout`): `cmp: standard output: CAUSE` when everything written fit in
    /// stdio's 4096-byte buffer (the error surfaced at close), `cmp: write failed` otherwise;
    /// status 2.
    Cmp,
    /// swath's own commands: `swath: write error: CAUSE`, status 2.
    Swath,
}

/// stdio's buffer for a pipe, file or device: where GNU cmp's wording of a write error
/// changes.
const STDIO_BUFFER: u64 = 4096;

/// Buffered standard output that keeps the first write error for [`Stdout::finish`].
pub struct Stdout {
    prog: String,
    voice: Voice,
    out: swath_engine::PageWriter<io::Stdout>,
    written: u64,
    failed: Option<io::Error>,
}

impl Stdout {
    /// Standard output for `prog` (the name messages start with), speaking as `voice`.
    pub fn new(prog: &str, voice: Voice) -> Self {
        Stdout {
            prog: prog.to_string(),
            voice,
            out: swath_engine::PageWriter::with_capacity(1 << 16, io::stdout()),
            written: 0,
            failed: None,
        }
    }

    /// Writes `bytes`; after a failure the output is dropped.
    pub fn write(&mut self, bytes: &[u8]) {
        self.written += bytes.len() as u64;
        if self.failed.is_none() {
            if let Err(e) = self.out.write_all(bytes) {
                self.failed = Some(e);
            }
        }
    }

    /// Pushes buffered output to the descriptor (for line-buffered output); a failure is
    /// kept for [`Stdout::finish`].
    pub fn push(&mut self) {
        if self.failed.is_none() {
            if let Err(e) = self.out.flush() {
                self.failed = Some(e);
            }
        }
    }

    /// True once a write has failed.
    pub fn failed(&self) -> bool {
        self.failed.is_some()
    }

    /// Flushes, and reports a write error once on standard error: `Err(status)` then, the
    /// status the tool exits with.
    pub fn finish(mut self) -> Result<(), Status> {
        self.push();
        let Some(e) = self.failed.take() else {
            return Ok(());
        };
        let cause = swath_engine::error::os_message(&e);
        let prog = &self.prog;
        let (line, status) = match self.voice {
            Voice::Grep => (format!("{prog}: write error: {cause}"), Status::Trouble),
            Voice::Wc => (format!("{prog}: write error"), Status::Failure),
            Voice::Cmp if self.written <= STDIO_BUFFER => {
                (format!("{prog}: standard output: {cause}"), Status::Trouble)
            }
            Voice::Cmp => (format!("{prog}: write failed"), Status::Trouble),
            Voice::Swath => (format!("{prog}: write error: {cause}"), Status::Trouble),
        };
        let _ = writeln!(io::stderr(), "{line}");
        Err(status)
    }

    /// Writes `text` (help, version) and finishes: the exit code to return.
    pub fn print_and_exit(prog: &str, voice: Voice, text: &[u8]) -> std::process::ExitCode {
        let mut out = Stdout::new(prog, voice);
        out.write(text);
        match out.finish() {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(status) => std::process::ExitCode::from(status),
        }
    }
}

/// io::Write for code that streams into a `dyn Write`: the first failure is returned (and
/// kept); later writes fail at once without touching the descriptor.
impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.failed.is_some() {
            return Err(io::Error::other("standard output already failed"));
        }
        Stdout::write(self, buf);
        match &self.failed {
            None => Ok(buf.len()),
            Some(e) => Err(io::Error::new(e.kind(), e.to_string())),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.push();
        match &self.failed {
            None => Ok(()),
            Some(e) => Err(io::Error::new(e.kind(), e.to_string())),
        }
    }
}

/// An error already reported on standard error: the command exits with its status and
/// prints nothing more (swath's own commands return it through `anyhow`).
#[derive(Debug)]
pub struct Reported(pub Status);

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "already reported (status {})", self.0.code())
    }
}

impl std::error::Error for Reported {}

/// Writes `text` to standard output for one of swath's own commands (`prog` names it in the
/// message): on a write error, one line on standard error and [`Reported`] with status 2.
pub fn print_all(prog: &str, text: &[u8]) -> Result<(), Reported> {
    let mut out = Stdout::new(prog, Voice::Swath);
    out.write(text);
    out.finish().map_err(Reported)
}

/// A clap help or version message as text for standard output: styled on a terminal, plain
/// otherwise (as clap prints it).
pub fn clap_text(e: &clap::Error) -> Vec<u8> {
    let styled = e.render();
    if io::stdout().is_terminal() {
        styled.ansi().to_string().into_bytes()
    } else {
        styled.to_string().into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn terminal_escapes_from_inputs_are_shown_visibly() {
        assert_eq!(visible(b"plain /a?b=c d"), "plain /a?b=c d");
        assert_eq!(
            visible(b"\x1b]0;title\x07\x1b[2J\x1b[31mred\0"),
            "\\x1b]0;title\\x07\\x1b[2J\\x1b[31mred\\x00"
        );
        // A backslash is doubled, so a literal "\x1b" cannot pass for an escape.
        assert_eq!(visible(b"a\\x1b"), "a\\\\x1b");
        assert_eq!(visible("\u{9b}31m".as_bytes()), "\\xc2\\x9b31m");
        assert_eq!(visible(b"\xff\xfeok\x7f"), "\\xff\\xfeok\\x7f");
        assert_eq!(visible("\u{e9}t\u{e9}".as_bytes()), "\u{e9}t\u{e9}");
        assert_eq!(
            visible("a\u{202e}b\u{2028}".as_bytes()),
            "a\\u{202e}b\\u{2028}"
        );
        assert_eq!(visible(b"tab\there\nnl"), "tab\\x09here\\x0anl");
    }
}
