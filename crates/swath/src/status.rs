//! The exit status of every command, named for what it tells the caller.
//!
//! swath keeps the statuses of the GNU tools it answers as, which share three values
//! (GNU's `EXIT_SUCCESS`, `EXIT_FAILURE` and grep's and cmp's `EXIT_TROUBLE`): 0 when the
//! command did what was asked, 1 for grep's and cmp's negative answer (no line selected,
//! the inputs differ) and for wc's and swath's own failures, 2 for trouble. The names for
//! a command's answers ([`Status::SELECTED`], [`Status::DIFFERENT`], ...) say which of the
//! three each one is.
//!
//! A signal that ends a command ends the process with status 128 + the signal's number
//! ([`crate::interrupt`]), outside this type.

use std::process::ExitCode;

/// A command's exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    /// 0: the command did what was asked (grep selected a line, cmp found the inputs the
    /// same).
    Success = 0,
    /// 1: grep selected no line, or cmp found the inputs differ; for wc, a file that could
    /// not be counted, a bad option or a write error; for swath's own commands, a failure
    /// (`merge`, `split`, and an error returned to `main`).
    Failure = 1,
    /// 2: trouble, for grep and cmp (a bad option or pattern, an input that cannot be
    /// read, a write error) and for swath's own commands that say so (`logs`, `patch`, a
    /// write error on standard output, an input that changed while it was read).
    Trouble = 2,
}

impl Status {
    /// grep: a line was selected.
    pub const SELECTED: Status = Status::Success;
    /// grep: no line was selected.
    pub const NONE_SELECTED: Status = Status::Failure;
    /// cmp: the inputs are the same.
    pub const SAME: Status = Status::Success;
    /// cmp: the inputs differ.
    pub const DIFFERENT: Status = Status::Failure;

    /// The status as the process reports it.
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status.code())
    }
}

#[cfg(test)]
mod tests {
    use super::Status;

    #[test]
    fn codes_are_gnus() {
        assert_eq!(Status::Success.code(), 0);
        assert_eq!(Status::Failure.code(), 1);
        assert_eq!(Status::Trouble.code(), 2);
        assert_eq!(Status::SELECTED.code(), 0);
        assert_eq!(Status::NONE_SELECTED.code(), 1);
        assert_eq!(Status::SAME.code(), 0);
        assert_eq!(Status::DIFFERENT.code(), 1);
    }
}
