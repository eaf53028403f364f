//! swath's hot kernels: pure functions over byte slices, with no I/O, no threads and no FFI.
//! grep's pattern machinery (GNU's pattern readers, glibc's regex, PCRE2, the line matcher)
//! is `swath-grep`'s, which builds on these.
//!
//! Each kernel has a one-line naive reference (`*_naive`) that the fast version is tested
//! against over inputs padded to hit every alignment and length, and a criterion benchmark
//! (`benches/kernels.rs`) that shows what the fast version gains.
//!
//! - [`compare`]: the first differing byte of two slices, and every differing byte.
//! - [`count`]: occurrences of a byte (newlines, for line numbers).
//! - [`logs`]: access-log fields (Wide Finder 2, Apache/nginx combined), parsed by hand.
//! - [`wc`]: lines, words, characters, bytes and the longest line, in mergeable chunks.
//! - [`transform`]: the Caesar cipher and its alphabet variant, in place or copying.
#![deny(missing_docs)]

pub mod compare;
pub mod count;
pub mod logs;
pub mod transform;
pub mod wc;
