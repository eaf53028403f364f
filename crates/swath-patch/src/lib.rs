//! swath's binary patcher: `patch make`, `patch apply` and `patch info` as a library.
//!
//! A patch describes NEW as a sequence of [`ops::Op`]s over OLD: copies of OLD's bytes,
//! runs of zeros, literal bytes, and approximate copies (OLD's bytes plus a difference
//! stream that is mostly zeros). docs/design.md ("patch") gives the shape of the whole and
//! docs/patch-format.md the wire format.
//!
//! - [`ops`]: the instruction model every format is written from.
//! - [`cdc`]: content-defined chunking, the hot kernel.
//! - [`signature`]: a file's chunks and hashes, computed on all cores.
//! - [`make`]: a patch of one file from another, on all cores.
//! - [`format`]: swath's patch format: header, section table, footer, streams.
//! - [`manifest`]: a tree patch's list of old files and new entries, checked as hostile input.
//! - [`section`]: one section's encoding and application.
//! - [`stream`]: one stream of a section, decoded a chunk at a time as it is read.
//! - [`hash`]: the parallel file hash recorded for OLD and NEW.
//! - [`io`]: what patch adds to the engine's reading ([`swath_engine::ahead`]): OLD read
//!   along the matches in windows, detached frees.
//! - [`tuning`]: the switches kept for measurements, passed down by the caller.
//! - [`table`]: OLD's chunks by hash, for lookups from NEW.
//! - [`matcher`]: one section of NEW matched against OLD: chunk hits verified, extended,
//!   merged.
//! - [`approx`]: approximate matches filling the gaps between them (`default`, `max`).
//! - [`hint`]: a tree's changed files matched densely against their likely old files.
//! - [`seeds`]: OLD's sampled short windows, looked up from NEW's gaps.
//! - [`oldcache`]: OLD's blocks cached per worker for the approximate matcher.
//! - [`apply`]: a patch applied (checked first, written atomically), and `info`'s census.
//! - [`tree`]: patches of directory trees: the walk, a tree's files as one OLD, make.
//! - [`tree_apply`]: a tree patch applied into a private directory renamed into place.
//! - [`vcdiff`]: RFC 3284 output for `--format vcdiff`.
//! - [`source`]: where OLD's bytes are read from (one file, or a tree's files end to end).
//! - [`error`]: the errors, each naming its file.
#![deny(missing_docs)]

pub mod apply;
pub mod approx;
pub mod cdc;
pub mod error;
pub mod format;
pub mod hash;
pub mod hint;
pub mod io;
pub mod make;
pub mod manifest;
pub mod matcher;
pub mod oldcache;
pub mod ops;
pub mod section;
pub mod seeds;
pub mod signature;
pub mod source;
pub mod stream;
pub mod table;
pub mod tree;
pub mod tree_apply;
pub mod tuning;
pub mod vcdiff;

pub use error::PatchError;
