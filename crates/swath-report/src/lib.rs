//! swath's reports as its commands print them, shared by the command-line tool and the
//! Python package so that both print the same bytes.
//!
//! - [`text`]: data from inputs made harmless for a terminal, file names quoted as GNU
//!   tools quote them.
//! - [`wc`], [`grep`]: `wc`'s lines and `grep -c`'s counts from merged partial results.
//! - [`logs`]: the Wide Finder 2 report and the log summary (text, JSON, HTML page).
//! - [`merge`]: partial results (docs/partial-format.md) merged, and their report.
//! - [`piece`]: the partial result of one byte range of one file, for each report.
//! - [`error`]: why a piece could not be made, or partials printed.
#![deny(missing_docs)]

pub mod error;
pub mod grep;
pub mod logs;
pub mod merge;
pub mod piece;
pub mod summary;
pub mod text;
pub mod wc;
