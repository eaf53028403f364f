//! The parallel file engine shared by every swath subcommand.
//!
//! A subcommand describes *what* to do with bytes as a small kernel (a closure over block
//! slices); the engine decides *how* the bytes arrive and who processes them:
//!
//! - [`ahead`]: a file read front to back by reader threads, requests in flight, pieces
//!   handed to workers as they arrive ([`ahead::read_ahead`]), planned from its page-cache
//!   residency ([`ahead::AheadPlan`]).
//! - [`direct`]: direct (`O_DIRECT`) reads with a buffered fallback, and reads from the page
//!   cache only.
//! - [`buf`]: page-aligned buffers ([`PageBuf`]), the one type every read and write copies
//!   through, placed so that a read shares the file's alignment.
//! - [`input`]: opening inputs (regular files, standard input, FIFOs) and the facts the planner
//!   needs about them (size, seekability, identity).
//! - [`plan`]: choosing a [`Method`] (sequential `read`, positional `pread`, `mmap`) from the
//!   requested [`Strategy`], the file sizes, the available memory and page-cache residency, and
//!   cutting the work into blocks handed to threads by a [`Layout`].
//! - [`exec`]: the executor that runs a kernel over every block of a [`Job`] on all workers,
//!   stopping early on request, and reporting I/O errors and files that change while read.
//! - [`firstk`]: the speculative "first K results in file order" table whose cut-off lets workers
//!   stop without taking a lock on the hot path.
//! - [`ordered`]: an ordered merge that streams per-block results to one consumer in file order
//!   with a bounded window of blocks in flight.
//! - [`source`]: where a command's bytes come from ([`source::Source`]): a file's byte
//!   range (whole lines, [`range`]'s rule), a stream, a decompressed source (gzip, zstd, xz,
//!   bzip2), a file followed as it grows; its first bytes, its reading, its errors named.
//! - [`many`]: many inputs at once, small ones whole on a pool, results in argument order.
//! - [`memfor`]: the memory-limited parallel for (tasks admitted while their memory needs fit,
//!   largest first) and the I/O semaphore taken around reading.
//! - [`output`]: output files written under a temporary name and renamed into place.
//! - [`pause`]: named pause points that let tests make a race happen every time.
//! - [`sysinfo`]: available memory (including cgroup limits) and page-cache residency.
//! - [`testing`]: what a test does when this machine cannot make its check.
//! - [`dirs`]: directories held by descriptor ([`dirs::Dir`]), opened following links or
//!   none, and everything done in one: opening beneath it at any depth, reading its names,
//!   making, renaming and removing entries, removing a tree with `unlinkat`.
//! - [`walk`]: directory trees walked through descriptors, in the order GNU's `fts` walks them
//!   (or sorted).
//!
//! The engine never maps a file without a guard: a mapped file truncated under the reader turns
//! into [`EngineError::Shrank`], never into SIGBUS.
#![deny(missing_docs)]

pub mod ahead;
pub mod buf;
pub mod direct;
pub mod dirs;
pub mod error;
pub mod exec;
pub mod firstk;
pub mod fold;
pub mod input;
pub mod many;
pub mod mapguard;
pub mod memfor;
pub mod ordered;
pub mod output;
pub mod pause;
pub mod plan;
pub mod range;
pub mod size;
pub mod source;
pub mod sysinfo;
pub mod testing;
pub mod walk;

pub use buf::{PageBuf, PageReader, PageWriter};
pub use error::EngineError;
pub use exec::{
    is_hole, is_zero_run, next_index, run_blocks, Block, Extent, Flow, Framing, Job, LongLines,
    Region, RunStats, StopCheck,
};
pub use firstk::FirstK;
pub use fold::{fold, fold_into, fold_ordered, Fold, OrderedFold};
pub use input::{Input, InputKind};
pub use many::{run_fed, run_many, Window};
pub use ordered::run_ordered;
pub use output::AtomicOutput;
pub use plan::{Access, EngineOptions, Layout, Method, Plan, Strategy, Threads};
