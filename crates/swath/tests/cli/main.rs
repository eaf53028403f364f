//! Command-line tests of `swath`, in one binary: GNU differential tests and edge cases.

mod badinput;
mod bench;
mod cipher;
mod cmp;
mod demo;
mod docs;
mod gen;
mod grep;
mod grep_hardening;
mod grep_walk;
mod journal;
mod json;
mod links;
mod logs;
mod logs_hostile;
mod messages;
mod outputs;
mod partial;
mod patch;
mod patch_tree;
mod progress;
mod report_page;
mod setup;
mod sparse;
mod util;
mod wc;
