//! Planning: which read method, how many threads, how big the blocks, and in what layout.
//!
//! # The `auto` rule
//!
//! Measured on the reference machine (2 cores, Linux 6.18, ext4 on a virtual disk; commands
//! and figures in `BENCHMARKS.md`), comparing the seeds' 640,000,000-byte pair:
//!
//! - **Hot** (in the page cache), a read-only map beats positional reads: 50-55 ms mapped
//!   against 88-103 ms with `pread`, which spends 150-180 ms of system time copying
//!   page-cache pages into its buffers. The map costs one fault per folio, and the kernel
//!   keeps much of the page cache in large folios (up to 2 MiB); with small folios (a file
//!   written in 4 KiB pieces, 29,000 faults) the map still won, 86 ms against 99 ms. The
//!   advice that `pread` is 2 to 3 times faster than `mmap` holds for scalar per-byte loops,
//!   compute-bound either way, not for kernels that run at memory speed. Issue 27 measured
//!   again with page-aligned read buffers ([`crate::buf`]): in one state of the page cache
//!   `pread` matched the map (`cmp` 118 against 117 ms, `wc -l` 68 against 82 ms), but
//!   with the file's cache filled by the kernel's read-ahead (large folios) the map won
//!   again by 1.2-2.3x at every block size from 64 KiB to 4 MiB (`cmp` 50 against 103-115
//!   ms), and with small folios `pread` won only `wc -l` (1.15x) and lost `grep -c -F` and
//!   `cmp` by 4-12 %. A map reads the page cache where it lies; `pread` copies it first.
//! - **Cold** (page cache dropped), the device is the limit, and what matters is that the
//!   kernel's read-ahead sees one sequential stream per file: one thread reading each input
//!   front to back took 0.87 of GNU cmp's time (median of 8 alternating rounds), parallel
//!   `pread` workers 1.03, one contiguous range per worker through its own descriptor 1.03,
//!   and maps 1.32 (their fault-driven read-ahead falls behind).
//!
//! So:
//!
//! 1. Any input that cannot be read positionally (pipe, FIFO, terminal), or a thread count of
//!    zero or less (the seed's "negative threads"), uses [`Method::Read`]: one thread,
//!    sequential reads of one block at a time.
//! 2. Data mostly not in the page cache (residency below [`HOT_RESIDENCY`], sampled with
//!    `mincore`), or more data to read from the device than there is available memory
//!    (`MemAvailable`, or the cgroup's headroom when lower), also uses [`Method::Read`]:
//!    sequential streams that read-ahead keeps busy, through reused buffers.
//! 3. Otherwise [`Method::Mmap`] with [`DEFAULT_BLOCK`] blocks (256 KiB measured best: 50 ms,
//!    against 52 ms at 64 KiB and 73 ms at 2 MiB) on all cores. A file that cannot be
//!    mapped, or a map that cannot be guarded, falls back to `pread` at run time.
//!
//! Holes of sparse files are known zeros, not cold data: they are counted as in the page cache
//! (nothing is read for them), so a sparse file of a terabyte with a few pages of data is
//! planned like the small hot file it is to read, on all cores, rather than as a terabyte to
//! stream from the device on one thread.
//!
//! The thread count is the number of cores unless given, and never more than the number of
//! blocks, so a small file is handled inline without spawning threads.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use crate::input::Input;
use crate::sysinfo;

/// Default block size: fits in L2 with room for two inputs; measured best for maps.
pub const DEFAULT_BLOCK: usize = 256 * 1024;
/// Below this fraction of the data in the page cache, data is read as cold.
pub const HOT_RESIDENCY: f64 = 0.5;

/// The read method requested by the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Let the planner choose (see the module documentation).
    #[default]
    Auto,
    /// One thread, sequential `read(2)` calls of one block each.
    Read,
    /// Every worker reads its blocks with `pread(2)` into its own reused buffers.
    Pread,
    /// Read-only memory maps shared by all workers.
    Mmap,
}

impl Strategy {
    /// Every strategy, in the order `--help` lists them.
    pub const ALL: [Strategy; 4] = [
        Strategy::Auto,
        Strategy::Read,
        Strategy::Pread,
        Strategy::Mmap,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Auto => "auto",
            Strategy::Read => "read",
            Strategy::Pread => "pread",
            Strategy::Mmap => "mmap",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of a setting's choices (`--strategy`, `--layout`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{given}' (expected {expected})")]
pub struct UnknownName {
    /// The setting the name was given for (`strategy`, `layout`).
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// The choices, as the message lists them.
    pub expected: &'static str,
}

impl FromStr for Strategy {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        Strategy::ALL
            .into_iter()
            .find(|st| st.name() == s)
            .ok_or_else(|| UnknownName {
                what: "strategy",
                given: s.to_string(),
                expected: "auto, read, pread or mmap",
            })
    }
}

/// A concrete read method, as chosen by the planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Sequential reads on one thread.
    Read,
    /// Positional reads on every worker.
    Pread,
    /// Shared read-only maps.
    Mmap,
}

impl Method {
    /// The method's name, as `--time` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Read => "read",
            Method::Pread => "pread",
            Method::Mmap => "mmap",
        }
    }
}

/// How blocks are handed to workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Each worker takes the next unclaimed block from an atomic cursor (load-balanced).
    #[default]
    Dynamic,
    /// Worker `t` of `T` takes blocks `t, t + T, t + 2T, ...` (the seed's fixed stripes).
    Stripes,
    /// Worker `t` of `T` takes the `t`-th contiguous range of blocks, front to back: one
    /// sequential stream per worker, which the kernel's read-ahead serves best on cold data.
    Ranges,
}

impl Layout {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Dynamic => "dynamic",
            Layout::Stripes => "stripes",
            Layout::Ranges => "ranges",
        }
    }
}

impl FromStr for Layout {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s {
            "dynamic" => Ok(Layout::Dynamic),
            "stripes" => Ok(Layout::Stripes),
            "ranges" => Ok(Layout::Ranges),
            _ => Err(UnknownName {
                what: "layout",
                given: s.to_string(),
                expected: "dynamic, stripes or ranges",
            }),
        }
    }
}

/// How a job touches its bytes; maps pay off only for repeated access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    /// Every byte is read once, front to back within each block.
    #[default]
    SinglePass,
    /// Bytes are revisited or read sparsely.
    Repeated,
    /// Every byte is read once, but the kernel costs more per byte than reading does (log
    /// reports, regular expressions): all cores stay busy even when the data comes from the
    /// device, each worker reading its own blocks positionally.
    ComputeBound,
}

/// How many workers a job runs on (`--threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Threads {
    /// One per core (the default).
    #[default]
    Auto,
    /// This many (at least one; fewer when the job has fewer blocks).
    Count(usize),
    /// One thread reading front to back with plain reads (`--threads 0` or a negative
    /// number, the seed's "negative threads").
    Sequential,
}

impl Threads {
    /// The setting `--threads N` makes: zero or less is [`Threads::Sequential`].
    pub fn from_count(n: i64) -> Threads {
        match usize::try_from(n) {
            Ok(0) | Err(_) => Threads::Sequential,
            Ok(n) => Threads::Count(n),
        }
    }

    /// The number of workers for a command that starts its own threads: one per core for
    /// [`Threads::Auto`], one for [`Threads::Sequential`].
    pub fn workers(self) -> usize {
        match self {
            Threads::Auto => sysinfo::cores(),
            Threads::Count(n) => n,
            Threads::Sequential => 1,
        }
    }
}

/// The engine options every subcommand shares (`--threads`, `--block-size`, `--strategy`,
/// `--layout`).
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// How many workers.
    pub threads: Threads,
    /// Bytes per block; `None` to let the planner choose.
    pub block_size: Option<usize>,
    /// The requested read method.
    pub strategy: Strategy,
    /// How blocks are distributed among workers.
    pub layout: Layout,
}

/// An engine option's value that did not parse, as [`EngineOptions::set`] and the command
/// line's parsers report it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// `--threads` was not a whole number (the message is the number parser's, as clap
    /// printed it when it parsed the option itself).
    #[error("{0}")]
    Threads(std::num::ParseIntError),
    /// `--block-size` was zero.
    #[error("block size must be at least 1 byte")]
    BlockSizeZero,
    /// `--block-size` was over 1 GiB.
    #[error("block size must be at most 1 GiB")]
    BlockSizeTooBig,
    /// `--block-size` was not a size.
    #[error("{}", crate::size::invalid_size(.0))]
    Size(String),
    /// `--strategy` or `--layout` named no choice.
    #[error(transparent)]
    Name(#[from] UnknownName),
}

impl OptionError {
    /// What the value was meant to be (`thread count`, `block size`, `strategy`, `layout`),
    /// for front ends that word the message themselves (grep's GNU-style parser).
    pub fn what(&self) -> &'static str {
        match self {
            OptionError::Threads(_) => "thread count",
            OptionError::BlockSizeZero | OptionError::BlockSizeTooBig | OptionError::Size(_) => {
                "block size"
            }
            OptionError::Name(n) => n.what,
        }
    }
}

/// Parses a `--threads` value: any whole number (zero or less selects the sequential path).
pub fn parse_threads(s: &str) -> Result<Threads, OptionError> {
    s.parse()
        .map(Threads::from_count)
        .map_err(OptionError::Threads)
}

/// Parses a `--block-size` value: a size with GNU suffixes ([`crate::size`]), 1 byte to
/// 1 GiB.
pub fn parse_block_size(s: &str) -> Result<usize, OptionError> {
    match crate::size::parse_size(s) {
        Ok(0) => Err(OptionError::BlockSizeZero),
        Ok(n) if n <= 1 << 30 => Ok(n as usize),
        Ok(_) => Err(OptionError::BlockSizeTooBig),
        Err(_) => Err(OptionError::Size(s.to_string())),
    }
}

impl EngineOptions {
    /// The long option names [`EngineOptions::set`] takes, without their dashes.
    pub const NAMES: [&'static str; 4] = ["threads", "block-size", "strategy", "layout"];

    /// Sets the option `name` (one of [`EngineOptions::NAMES`]) from its command-line text:
    /// the one parser of the engine options, used by every front end (clap's value
    /// parsers, grep's GNU-style parser; the Python package takes numbers, through
    /// [`Threads::from_count`]). Returns `Ok(false)` when
    /// `name` is not an engine option.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool, OptionError> {
        match name {
            "threads" => self.threads = parse_threads(value)?,
            "block-size" => self.block_size = Some(parse_block_size(value)?),
            "strategy" => self.strategy = value.parse()?,
            "layout" => self.layout = value.parse()?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A resolved plan: what the executor will do.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The read method.
    pub method: Method,
    /// Worker threads (1 for [`Method::Read`]).
    pub threads: usize,
    /// Bytes per block.
    pub block_size: usize,
    /// Block distribution.
    pub layout: Layout,
    /// Why the planner chose this method, for `--time`.
    pub reason: Cow<'static, str>,
}

impl Plan {
    /// A plan given in full by the caller (benchmarks, tests, commands with their own
    /// strategies).
    pub fn fixed(method: Method, threads: usize, block_size: usize, layout: Layout) -> Plan {
        Plan {
            method,
            threads: threads.max(1),
            block_size: block_size.max(1),
            layout,
            reason: Cow::Borrowed("fixed"),
        }
    }

    /// One block of `block_size` read positionally on the calling thread: for a quick look
    /// at the start of the data before committing to a parallel plan.
    pub fn inline(block_size: usize, reason: &'static str) -> Plan {
        Plan {
            method: Method::Pread,
            threads: 1,
            block_size: block_size.max(1),
            layout: Layout::Dynamic,
            reason: Cow::Borrowed(reason),
        }
    }

    /// Chooses a plan for reading `len` bytes (unknown for streams) from each of `regions`
    /// (an input and the offset its data starts at).
    pub fn choose(
        opts: &EngineOptions,
        regions: &[(&Input, u64)],
        len: Option<u64>,
        access: Access,
    ) -> Plan {
        let cores = sysinfo::cores();
        let requested_threads = match opts.threads {
            Threads::Auto => cores,
            Threads::Count(n) => n,
            Threads::Sequential => 0,
        };
        let all_seekable = regions.iter().all(|(i, _)| i.is_seekable());
        let sequential = |reason: Cow<'static, str>| Plan {
            method: Method::Read,
            threads: 1,
            block_size: opts.block_size.unwrap_or(DEFAULT_BLOCK),
            layout: opts.layout,
            reason,
        };
        if !all_seekable {
            let why = if opts.strategy == Strategy::Read || opts.strategy == Strategy::Auto {
                Cow::Borrowed("an input is not seekable")
            } else {
                Cow::Owned(format!(
                    "an input is not seekable, so '{}' fell back to sequential reads",
                    opts.strategy
                ))
            };
            return sequential(why);
        }
        if requested_threads == 0 {
            return sequential("threads <= 0 selects conventional sequential reads".into());
        }
        let len = len.unwrap_or(0);
        let (method, reason) = match opts.strategy {
            Strategy::Read => return sequential("requested".into()),
            Strategy::Pread => (Method::Pread, Cow::Borrowed("requested")),
            Strategy::Mmap => (Method::Mmap, Cow::Borrowed("requested")),
            Strategy::Auto => match auto_method(regions, len, access) {
                (Method::Read, why) => return sequential(Cow::Owned(why)),
                (method, why) => (method, Cow::Owned(why)),
            },
        };
        let block_size = opts.block_size.unwrap_or(DEFAULT_BLOCK).max(1);
        let blocks = len.div_ceil(block_size as u64).max(1);
        let threads = (requested_threads as u64).min(blocks) as usize;
        Plan {
            method,
            threads: threads.max(1),
            block_size,
            layout: opts.layout,
            reason,
        }
    }
}

/// The `auto` choice for seekable inputs and the reason for it ([`Method::Read`]: sequential
/// reads on one thread).
fn auto_method(regions: &[(&Input, u64)], len: u64, access: Access) -> (Method, String) {
    let total: u64 = len.saturating_mul(regions.len() as u64);
    // Holes are read as zeros without touching the device: count them as cached.
    let mut holes = 0.0f64;
    let residency = regions
        .iter()
        .map(|(input, off)| {
            let sampled = sysinfo::residency(input.file(), input.base() + off, len).unwrap_or(1.0);
            let size = input.len().unwrap_or(0).max(1) as f64;
            let hole = (input.hole_bytes() as f64 / size).min(1.0);
            holes = holes.max(hole);
            (sampled + hole).min(1.0)
        })
        .fold(1.0f64, f64::min);
    let from_device = (total as f64 * (1.0 - residency)) as u64;
    let avail = sysinfo::available_memory();
    let cached = if holes >= 0.005 {
        format!(
            "{:.0}% in page cache or holes ({:.0}% holes)",
            residency * 100.0,
            holes * 100.0
        )
    } else {
        format!("{:.0}% in page cache", residency * 100.0)
    };
    if access == Access::ComputeBound && residency < HOT_RESIDENCY {
        return (
            Method::Pread,
            format!("{cached}, a compute-bound kernel: positional reads on every core"),
        );
    }
    if avail.is_some_and(|a| from_device > a) {
        return (
            Method::Read,
            format!(
                "{cached}, {from_device} bytes to read exceed available memory ({} bytes): sequential streams",
                avail.unwrap_or(0)
            ),
        );
    }
    match access {
        Access::Repeated => (
            Method::Mmap,
            format!("{cached}, repeated access: read-only maps"),
        ),
        Access::SinglePass if residency < HOT_RESIDENCY => (
            Method::Read,
            format!("{cached}: sequential streams for the kernel's read-ahead"),
        ),
        Access::SinglePass | Access::ComputeBound => {
            (Method::Mmap, format!("{cached}: read-only maps, no copies"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn names_parse_and_unknown_ones_say_the_choices() {
        for st in Strategy::ALL {
            assert_eq!(st.name().parse::<Strategy>(), Ok(st));
        }
        assert_eq!("ranges".parse::<Layout>(), Ok(Layout::Ranges));
        let e = "fast".parse::<Strategy>().unwrap_err();
        assert_eq!(e.given, "fast");
        assert_eq!(
            e.to_string(),
            "unknown strategy 'fast' (expected auto, read, pread or mmap)"
        );
        assert_eq!(
            "rows".parse::<Layout>().unwrap_err().to_string(),
            "unknown layout 'rows' (expected dynamic, stripes or ranges)"
        );
    }

    fn file_of(n: usize) -> (tempfile::NamedTempFile, Input) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![1u8; n]).unwrap();
        let i = Input::open(f.path()).unwrap();
        (f, i)
    }

    #[test]
    fn strategy_names_round_trip() {
        for s in Strategy::ALL {
            assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
        }
        assert!("fast".parse::<Strategy>().is_err());
        assert_eq!("stripes".parse::<Layout>().unwrap(), Layout::Stripes);
    }

    #[test]
    fn negative_threads_choose_sequential_reads() {
        let (_f, i) = file_of(1000);
        let opts = EngineOptions {
            threads: crate::Threads::Sequential,
            ..Default::default()
        };
        let p = Plan::choose(&opts, &[(&i, 0)], Some(1000), Access::SinglePass);
        assert_eq!(p.method, Method::Read);
        assert_eq!(p.threads, 1);
    }

    #[test]
    fn hot_file_chooses_mmap_and_threads_never_exceed_blocks() {
        let (_f, i) = file_of(3 * 1024);
        let opts = EngineOptions {
            threads: crate::Threads::Count(8),
            block_size: Some(1024),
            ..Default::default()
        };
        let p = Plan::choose(&opts, &[(&i, 0)], Some(3 * 1024), Access::SinglePass);
        assert_eq!(p.method, Method::Mmap);
        assert_eq!(p.threads, 3);
        assert_eq!(p.block_size, 1024);
    }

    #[test]
    fn repeated_access_chooses_mmap() {
        let (_f, i) = file_of(4096);
        let p = Plan::choose(
            &EngineOptions::default(),
            &[(&i, 0)],
            Some(4096),
            Access::Repeated,
        );
        assert_eq!(p.method, Method::Mmap);
    }

    /// A file of `len` bytes none of which is in the page cache: written, flushed and
    /// dropped from the cache (`None` where the cache cannot be dropped).
    fn cold_file(len: usize) -> Option<(tempfile::NamedTempFile, Input)> {
        use std::os::fd::AsRawFd;
        let (f, _) = file_of(len);
        f.as_file().sync_all().unwrap();
        // SAFETY: posix_fadvise on a descriptor we own.
        unsafe { libc::posix_fadvise(f.as_file().as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        let i = Input::open(f.path()).unwrap();
        (sysinfo::residency(i.file(), 0, len as u64)? < 0.1).then_some((f, i))
    }

    #[test]
    fn sparse_file_is_planned_as_known_zeros_not_cold_data() {
        // A 1 TB sparse file with one page of data: holes are known zeros, so every core
        // takes part (the old plan read it as one cold stream on one thread).
        let f = tempfile::NamedTempFile::new().unwrap();
        let len = 1u64 << 40;
        f.as_file().set_len(len).unwrap();
        std::os::unix::fs::FileExt::write_all_at(f.as_file(), b"x", len / 2).unwrap();
        let i = Input::open(f.path()).unwrap();
        if !i.may_have_holes() {
            return;
        }
        let opts = EngineOptions {
            threads: crate::Threads::Count(2),
            ..EngineOptions::default()
        };
        let p = Plan::choose(&opts, &[(&i, 0)], Some(len), Access::SinglePass);
        assert_ne!(p.method, Method::Read, "{}", p.reason);
        assert_eq!(p.threads, 2, "{}", p.reason);
        assert!(p.reason.contains("holes"), "{}", p.reason);
    }

    #[test]
    fn cold_data_is_read_sequentially_and_hot_data_mapped() {
        // Written, flushed and dropped from the page cache: cold (a hole no longer serves,
        // it is known zeros). Skipped where the cache cannot be dropped (tmpfs).
        let Some((_f, i)) = cold_file(8 << 20) else {
            return;
        };
        let p = Plan::choose(
            &EngineOptions::default(),
            &[(&i, 0)],
            Some(8 << 20),
            Access::SinglePass,
        );
        assert_eq!(p.method, Method::Read);
        assert!(p.reason.contains("0% in page cache"), "{}", p.reason);
        // A kernel slower than the device keeps every core busy on cold data.
        let opts = EngineOptions {
            threads: crate::Threads::Count(2),
            ..EngineOptions::default()
        };
        let p = Plan::choose(&opts, &[(&i, 0)], Some(8 << 20), Access::ComputeBound);
        assert_eq!((p.method, p.threads), (Method::Pread, 2));
        let (_g, hot) = file_of(1 << 20);
        let p = Plan::choose(
            &EngineOptions::default(),
            &[(&hot, 0)],
            Some(1 << 20),
            Access::SinglePass,
        );
        assert_eq!(p.method, Method::Mmap);
    }
}
