//! Command-line tests of `swath`, in one binary: GNU differential tests and edge cases.

mod badinput;
mod bench;
mod cipher;
mod cmp;
mod demo;
mod docs;
mod gen;
mod grep;
mod grep_locales;
mod journal;
mod json;
mod links;
mod logs;
mod messages;
mod partial;
mod patch;
mod patch_tree;
mod progress;
mod report_page;
mod sparse;
mod util;
mod wc;
