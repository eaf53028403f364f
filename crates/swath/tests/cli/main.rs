//! Command-line tests of `swath`, in one binary: GNU differential tests and edge cases.

mod cipher;
mod cmp;
mod gen;
mod grep;
mod logs;
mod sparse;
mod util;
mod wc;
