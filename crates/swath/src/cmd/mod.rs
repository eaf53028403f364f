//! One module per subcommand: argument definitions and output formatting; the work itself is
//! done by the library crates.

pub mod bench;
pub mod cipher;
pub mod cmp;
pub mod cp;
pub mod demo;
pub mod docs;
pub mod gen;
pub mod grep;
pub mod logs;
pub mod partial;
pub mod patch;
pub mod wc;
