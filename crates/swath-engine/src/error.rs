//! Errors raised by the engine, with messages that name the file and the cause.

use std::io;

/// An error while opening or reading an input.
///
/// `Display` renders `FILE: cause` with the operating system's plain message (no
/// "(os error N)" suffix), so a command can prefix it with its own name as GNU tools do.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// An operating-system error on a named file.
    // The cause is part of the message, not a separate `source`, so that error chains
    // printed with `{:#}` do not repeat it.
    #[error("{path}: {}", os_message(.cause))]
    Io {
        /// The file as the user named it.
        path: String,
        /// The underlying error.
        cause: io::Error,
    },
    /// The file became shorter than planned while it was being read.
    #[error("{path}: file shrank while being read (expected {expected} bytes, found {found})")]
    Shrank {
        /// The file as the user named it.
        path: String,
        /// The size the plan relied on.
        expected: u64,
        /// Where the data actually ended (a lower bound for mapped files).
        found: u64,
    },
    /// The file's size changed while it was being read.
    #[error("{path}: file changed size while being read (was {before} bytes, now {after})")]
    Changed {
        /// The file as the user named it.
        path: String,
        /// Size when the job was planned.
        before: u64,
        /// Size when the job finished.
        after: u64,
    },
    /// The file kept its size but was written to while it was being read.
    #[error("{path}: file changed as we read it (its modification time moved)")]
    Modified {
        /// The file as the user named it.
        path: String,
    },
    /// A line longer than the bound set for it.
    #[error("{path}: line too long (more than {max} bytes, from byte {offset})")]
    LineTooLong {
        /// The file as the user named it.
        path: String,
        /// Offset of the line's first byte.
        offset: u64,
        /// The bound.
        max: usize,
    },
    /// A byte range asked of an input that cannot be read at an offset.
    #[error("{path}: a byte range needs a regular file, not a pipe or a device")]
    NotRanged {
        /// The file as the user named it.
        path: String,
    },
}

impl EngineError {
    /// Wraps an I/O error with the file it concerns.
    pub fn io(path: impl Into<String>, source: io::Error) -> Self {
        EngineError::Io {
            path: path.into(),
            cause: source,
        }
    }
}

/// The operating system's message for an error, without Rust's " (os error N)" suffix.
pub fn os_message(err: &io::Error) -> String {
    let text = err.to_string();
    match (err.raw_os_error(), text.rfind(" (os error ")) {
        (Some(_), Some(at)) => text[..at].to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_message_strips_the_errno_suffix() {
        let err = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(os_message(&err), "No such file or directory");
        let e = EngineError::io("a.txt", err);
        assert_eq!(e.to_string(), "a.txt: No such file or directory");
    }

    #[test]
    fn os_message_keeps_custom_messages() {
        let err = io::Error::other("boom");
        assert_eq!(os_message(&err), "boom");
    }
}
