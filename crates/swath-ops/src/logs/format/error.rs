//! Why a log format could not be had: a name `--format` does not know, a format string it
//! cannot read, a W3C log without its header, a log whose first lines fit no format.

use super::{Field, NAMED};

/// Why a log format could not be had (each message as `swath logs` prints it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// `--format` named no format and is no format string.
    #[error(
        "unknown format '{0}': give auto, one of {names}, or an Apache LogFormat or nginx log_format string",
        names = NAMED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
    )]
    Unknown(String),
    /// A W3C log whose first lines hold no `#Fields:` header.
    #[error("no '#Fields:' line in the log's first lines: a W3C log starts with one")]
    NoFields,
    /// No format fits the log's first lines (`auto`).
    #[error(
        "no known log format fits its first lines (give one with --format: {names}, or a LogFormat/log_format string)",
        names = super::shown_names().join(", ")
    )]
    Unrecognised,
    /// A LogFormat directive Apache does not have.
    #[error("unknown LogFormat directive '%{0}'")]
    Directive(char),
    /// Two fields of a format string with no text between them.
    #[error("two fields with nothing between them ({0:?} and {1:?}): a line could not be split")]
    Adjacent(Field, Field),
    /// A `%{` without its `}`.
    #[error("a '%{{' without its '}}'")]
    OpenPercent,
    /// A `%` that ends the format string.
    #[error("a '%' at the end of the format")]
    TrailingPercent,
    /// A `${` without its `}`.
    #[error("a '${{' without its '}}'")]
    OpenDollar,
    /// A format string without the request and the status.
    #[error("a log format needs the request (or its path) and the status: %r or %U and %s (Apache), $request or $request_uri and $status (nginx)")]
    NoRequest,
}
