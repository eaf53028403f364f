//! swath's binary patcher: `patch make`, `patch apply` and `patch info` as a library.
//!
//! A patch describes NEW as a sequence of [`ops::Op`]s over OLD: copies of OLD's bytes,
//! runs of zeros, literal bytes, and approximate copies (OLD's bytes plus a difference
//! stream that is mostly zeros). docs/design.md ("patch") gives the shape of the whole and
//! docs/patch-format.md the wire format.
//!
//! - [`ops`]: the instruction model every format is written from.
#![deny(missing_docs)]

pub mod ops;
