//! swath's hot kernels: pure functions over byte slices, with no I/O and no threads (but for
//! one, for a pattern nested thousands of groups deep: it is read on a thread whose stack
//! holds it).
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
//! - [`pattern`]: GNU grep patterns (BRE, ERE, fixed, Perl) translated into `regex` syntax.
//! - [`search`]: which lines of a block of whole lines match (grep), with a line-by-line oracle.
//! - [`multibyte`]: grep in a multibyte locale other than UTF-8, through glibc's regex.
#![deny(missing_docs)]

pub mod compare;
pub mod count;
mod ffi;
pub mod gnu_regex;
pub mod logs;
pub mod multibyte;
pub mod pattern;
pub mod pcre;
pub mod search;
pub mod transform;
pub mod wc;
