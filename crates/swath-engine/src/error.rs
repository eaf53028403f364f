//! Errors raised by the engine, with messages that name the file and the cause.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// An error while opening or reading an input.
///
/// `Display` renders `FILE: cause` with the operating system's plain message (no
/// "(os error N)" suffix), so a command can prefix it with its own name as GNU tools do.
/// [`EngineError::path`] and [`EngineError::cause`] give the two parts, for a command
/// that names the file its own way.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// An operating-system error on a named file.
    // The cause is part of the message, not a separate `source`, so that error chains
    // printed with `{:#}` do not repeat it.
    Io {
        /// The file as the user named it.
        path: PathBuf,
        /// The underlying error.
        cause: io::Error,
    },
    /// The file became shorter than planned while it was being read.
    Shrank {
        /// The file as the user named it.
        path: PathBuf,
        /// The size the plan relied on.
        expected: u64,
        /// Where the data actually ended (a lower bound for mapped files).
        found: u64,
    },
    /// The file's size changed while it was being read.
    Changed {
        /// The file as the user named it.
        path: PathBuf,
        /// Size when the job was planned.
        before: u64,
        /// Size when the job finished.
        after: u64,
    },
    /// The file kept its size but was written to while it was being read.
    Modified {
        /// The file as the user named it.
        path: PathBuf,
    },
    /// A line longer than the bound set for it.
    LineTooLong {
        /// The file as the user named it.
        path: PathBuf,
        /// Offset of the line's first byte.
        offset: u64,
        /// The bound.
        max: usize,
    },
    /// A byte range asked of an input that cannot be read at an offset.
    NotRanged {
        /// The file as the user named it.
        path: PathBuf,
    },
}

impl EngineError {
    /// Wraps an I/O error with the file it concerns.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        EngineError::Io {
            path: path.into(),
            cause: source,
        }
    }

    /// The file the error concerns, as the user named it.
    pub fn path(&self) -> &Path {
        match self {
            EngineError::Io { path, .. }
            | EngineError::Shrank { path, .. }
            | EngineError::Changed { path, .. }
            | EngineError::Modified { path }
            | EngineError::LineTooLong { path, .. }
            | EngineError::NotRanged { path } => path,
        }
    }

    /// What went wrong, without the file's name: the message that `Display` puts after
    /// `FILE: ` (for [`EngineError::Io`], the [`os_message`] of its cause).
    pub fn cause(&self) -> String {
        match self {
            EngineError::Io { cause, .. } => os_message(cause),
            EngineError::Shrank {
                expected, found, ..
            } => format!("file shrank while being read (expected {expected} bytes, found {found})"),
            EngineError::Changed { before, after, .. } => {
                format!("file changed size while being read (was {before} bytes, now {after})")
            }
            EngineError::Modified { .. } => {
                "file changed as we read it (its modification time moved)".to_string()
            }
            EngineError::LineTooLong { offset, max, .. } => {
                format!("line too long (more than {max} bytes, from byte {offset})")
            }
            EngineError::NotRanged { .. } => {
                "a byte range needs a regular file, not a pipe or a device".to_string()
            }
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `Path::display` replaces invalid UTF-8 as a lossy `String` conversion does.
        write!(f, "{}: {}", self.path().display(), self.cause())
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

    /// One error of each variant, with the message `Display` gave before the parts
    /// had accessors.
    fn each_variant() -> Vec<(EngineError, &'static str, &'static str)> {
        vec![
            (
                EngineError::io("dir/a.txt", io::Error::from_raw_os_error(libc::EACCES)),
                "dir/a.txt",
                "Permission denied",
            ),
            (
                EngineError::Shrank {
                    path: "b".into(),
                    expected: 10,
                    found: 4,
                },
                "b",
                "file shrank while being read (expected 10 bytes, found 4)",
            ),
            (
                EngineError::Changed {
                    path: "c: d".into(),
                    before: 7,
                    after: 9,
                },
                "c: d",
                "file changed size while being read (was 7 bytes, now 9)",
            ),
            (
                EngineError::Modified { path: "-".into() },
                "-",
                "file changed as we read it (its modification time moved)",
            ),
            (
                EngineError::LineTooLong {
                    path: "long.log".into(),
                    offset: 123,
                    max: 64,
                },
                "long.log",
                "line too long (more than 64 bytes, from byte 123)",
            ),
            (
                EngineError::NotRanged {
                    path: "/dev/stdin".into(),
                },
                "/dev/stdin",
                "a byte range needs a regular file, not a pipe or a device",
            ),
        ]
    }

    #[test]
    fn path_and_cause_are_the_two_parts_of_the_message() {
        for (e, path, cause) in each_variant() {
            assert_eq!(e.path(), Path::new(path), "{e:?}");
            assert_eq!(e.cause(), cause, "{e:?}");
            assert_eq!(e.to_string(), format!("{path}: {cause}"));
            assert_eq!(
                format!("{}: {}", e.path().display(), e.cause()),
                e.to_string()
            );
        }
    }

    #[test]
    fn a_name_that_is_not_utf8_displays_as_a_lossy_string_would() {
        use std::os::unix::ffi::OsStrExt;
        let raw = std::ffi::OsStr::from_bytes(b"bad\xffname");
        let e = EngineError::Modified { path: raw.into() };
        assert_eq!(e.path().as_os_str(), raw);
        assert_eq!(
            e.to_string(),
            format!("{}: {}", raw.to_string_lossy(), e.cause())
        );
        assert!(e.to_string().starts_with("bad\u{fffd}name: "));
    }

    #[test]
    fn os_message_keeps_custom_messages() {
        let err = io::Error::other("boom");
        assert_eq!(os_message(&err), "boom");
    }
}
