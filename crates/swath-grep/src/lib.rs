//! swath's grep patterns: GNU grep 3.8's pattern syntaxes read as grep reads them, and the
//! matcher that finds the lines they select. No I/O, and no threads but for one, for a
//! pattern nested thousands of groups deep: it is read on a thread whose stack holds it. The
//! slice kernels it stands on (counting bytes, glibc's UTF-8 decoding) are `swath-kernels`'.
//!
//! - [`pattern`]: GNU grep patterns (BRE, ERE, fixed, Perl) translated into `regex` syntax,
//!   by ports of GNU's two readers (glibc's and the DFA's), with `-i` as glibc folds case.
//! - [`search`]: which lines of a block of whole lines match (grep), with a line-by-line oracle.
//! - [`gnu_regex`]: glibc's own regex engine, for back-references (FFI).
//! - [`pcre`]: `grep -P` through PCRE2 (FFI).
//! - [`multibyte`]: grep in a multibyte locale other than UTF-8, through glibc's regex.
#![deny(missing_docs)]

mod ffi;
pub mod gnu_regex;
mod locale;
pub mod multibyte;
mod options;
pub mod pattern;
pub mod pcre;
pub mod search;
mod stack;
