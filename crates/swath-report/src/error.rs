//! The report crate's errors, each printed as the one line the command shows: why a piece's
//! partial result could not be made ([`PieceError`], `swath_report::piece`), and why
//! partial results could not be printed ([`RenderError`], `swath_report::merge`).

use swath_engine::source::SourceError;
use swath_engine::EngineError;
use swath_grep::pattern::PatternError;
use swath_ops::partial::PartialError;

/// Why the partial result of one piece of a file could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PieceError {
    /// Opening or reading the file: `NAME: cause`.
    #[error("{name}: {}", cause.cause())]
    Engine {
        /// The file as the partial names it.
        name: String,
        /// What went wrong.
        cause: EngineError,
    },
    /// Reading a log through its source (a compressed log): `NAME: cause`.
    #[error("{name}: {}", cause.cause())]
    Source {
        /// The file as the partial names it.
        name: String,
        /// What went wrong.
        cause: SourceError,
    },
    /// A range whose start is past its end.
    #[error("{name}: invalid range {start}:{end}")]
    InvalidRange {
        /// The file.
        name: String,
        /// Where the range starts.
        start: u64,
        /// Where it ends.
        end: u64,
    },
    /// A span said to lie past the end of its file.
    #[error("{name}: a span of {size} bytes from byte {begin} of a file of {len} bytes")]
    SpanOutside {
        /// The file the span is of.
        name: String,
        /// The span's size (the copy's).
        size: u64,
        /// Where it starts in the file.
        begin: u64,
        /// The file's size.
        len: u64,
    },
    /// A range of a compressed log other than the whole file.
    #[error("{name}: a compressed log is one range (the whole file)")]
    CompressedRange {
        /// The log.
        name: String,
    },
    /// `wc` asked for no count.
    #[error("wc: no count asked")]
    NoCount,
    /// `grep -c --binary-files=without-match`, whose count is the whole file's.
    #[error("--binary-files=without-match counts whole files, not pieces")]
    WithoutMatch,
    /// A grep pattern that does not compile.
    #[error("grep: {}", .0.message)]
    Pattern(PatternError),
    /// A grep search whose count is not the sum of its pieces'.
    #[error("grep: this search counts whole files")]
    WholeFiles,
    /// `logs wf2 --article` that is not a regular expression.
    #[error("invalid article pattern '{article}': {cause}")]
    Article {
        /// The pattern given.
        article: String,
        /// Why it does not compile.
        cause: regex::Error,
    },
}

/// Why partial results could not be printed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A partial that cannot be read or merged.
    #[error(transparent)]
    Partial(#[from] PartialError),
    /// No partial at all.
    #[error("no partial result given")]
    NoPartial,
    /// `--json` asked of a report that has no JSON (its name).
    #[error("--json is for log reports, not {0}")]
    NoJson(&'static str),
    /// `--html` asked of a report that has no page (its name).
    #[error("--html is for logs summary, not {0}")]
    NoPage(&'static str),
    /// A partial's options text that its report cannot print by.
    #[error("{}", problem.message(kind))]
    Options {
        /// The report, as its options text starts (`wc`, `grep -c`, `logs wf2`, ...).
        kind: &'static str,
        /// What is wrong with it.
        problem: OptionsProblem,
    },
}

impl RenderError {
    /// A problem with the options text of a partial of `kind`.
    pub fn options(kind: &'static str, problem: OptionsProblem) -> RenderError {
        RenderError::Options { kind, problem }
    }
}

/// What is wrong with a partial's options text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionsProblem {
    /// It is another report's.
    NotOf,
    /// A setting the report needs is missing (`H=`, `its --top`, ...).
    Missing(&'static str),
    /// A word the report does not know.
    Unknown(String),
    /// No count is asked.
    NoCount,
}

impl OptionsProblem {
    /// Its message, for a partial of `kind`.
    fn message(&self, kind: &str) -> String {
        match self {
            OptionsProblem::NotOf => format!("not a {kind} partial"),
            OptionsProblem::Missing(what) => format!("a {kind} partial without {what}"),
            OptionsProblem::Unknown(word) => format!("unknown {kind} option in a partial: {word}"),
            OptionsProblem::NoCount => format!("a {kind} partial with no count asked"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_problems_read_as_before() {
        let said = |kind, p| RenderError::options(kind, p).to_string();
        assert_eq!(said("wc", OptionsProblem::NotOf), "not a wc partial");
        assert_eq!(
            said("grep -c", OptionsProblem::Missing("H=")),
            "a grep -c partial without H="
        );
        assert_eq!(
            said("logs wf2", OptionsProblem::Missing("its --top")),
            "a logs wf2 partial without its --top"
        );
        assert_eq!(
            said("wc", OptionsProblem::Unknown("-q".into())),
            "unknown wc option in a partial: -q"
        );
        assert_eq!(
            said("wc", OptionsProblem::NoCount),
            "a wc partial with no count asked"
        );
    }
}
