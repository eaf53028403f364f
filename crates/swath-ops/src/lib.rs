//! swath's operations: the kernels of `swath-kernels` (and grep's matcher, `swath-grep`) run
//! on the engine of `swath-engine`.
//!
//! Each operation takes opened inputs and [`swath_engine::EngineOptions`], plans the work, runs
//! it, and returns plain data (differences, counts) that the command-line layer formats. Nothing
//! here prints.
//!
//! - [`compare`]: the first K differences of two inputs (speculative, parallel), or every
//!   difference streamed in order.
//! - [`counts`]: counting tables for millions of distinct keys, with batched prefetching.
//! - [`count`]: wc counts of one input, in parallel blocks folded in order.
//! - [`copy`]: a file copy by reflink, in-kernel ranges, or positional I/O.
//! - [`inplace`]: crash-safe in-place transformation with an undo journal.
//! - [`lines`]: line numbers of byte positions, counted in parallel.
//! - [`logs`]: access-log reports, per-worker tables merged: the driver (`logs`), log
//!   formats (`logs::format`), W3C headers (`logs::headers`), tables and rankings
//!   (`logs::tables`), the Wide Finder 2 report (`logs::wf2`), the GoAccess-class summary
//!   (`logs::summary`), and reports merged from partials' sorted lists (`logs::streamed`).
//! - [`search`]: grep's selected lines, counts and first matches, in parallel line blocks.
//! - [`partial`]: partial results' wire format: header, checksum, the states' codecs.
//! - [`report`]: the reports whose results merge (`wc`, `grep -c`, the log reports), the
//!   container of a partial result generic over them, and the one way a piece is computed.
//! - [`transform`]: a byte transformation from one file to another, by every cci strategy.
#![deny(missing_docs)]

pub mod compare;
pub mod copy;
pub mod count;
pub mod counts;
pub mod inplace;
pub mod lines;
pub mod logs;
pub mod partial;
pub mod report;
pub mod search;
pub mod transform;
