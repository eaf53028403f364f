//! Planning: which read method, how many threads, how big the blocks, and in what layout.
//!
//! # The `auto` rule
//!
//! Measured on the reference machine (2 cores, hot page cache, see `docs/BENCHMARKS.md`):
//! positional reads into reused, L2-sized buffers deliver 2 to 3 times the throughput of a
//! read-only map for one pass over hot data, because a map pays for page faults, page-table
//! setup and TLB shootdowns at unmap on every run. Maps pay off only when the same bytes are
//! touched repeatedly or sparsely. Cold data wants several large requests in flight. So:
//!
//! 1. Any input that cannot be read positionally (pipe, FIFO, terminal), or a thread count of
//!    zero or less (the seed's "negative threads"), uses [`Method::Read`]: one thread,
//!    sequential reads of one block at a time.
//! 2. Work that revisits its bytes ([`Access::Repeated`]) and fits in available memory uses
//!    [`Method::Mmap`].
//! 3. Everything else uses [`Method::Pread`], with blocks of [`HOT_BLOCK`] when most of the
//!    data is in the page cache (sampled with `mincore`), and of [`COLD_BLOCK`] when it is not
//!    or when the inputs are larger than available memory (so each request is large and the
//!    kernel's read-ahead keeps the device busy).
//!
//! The thread count is the number of cores unless given, and never more than the number of
//! blocks, so a small file is handled inline without spawning threads.

use std::fmt;
use std::str::FromStr;

use crate::input::Input;
use crate::sysinfo;

/// Block size for data that is mostly in the page cache: fits in L2 with room for two inputs.
pub const HOT_BLOCK: usize = 256 * 1024;
/// Block size for data read from the device: large requests keep the device queue busy.
pub const COLD_BLOCK: usize = 4 * 1024 * 1024;
/// Below this residency fraction the data is treated as cold.
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

impl FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Strategy::ALL
            .into_iter()
            .find(|st| st.name() == s)
            .ok_or_else(|| format!("unknown strategy '{s}' (expected auto, read, pread or mmap)"))
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
}

impl Layout {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Dynamic => "dynamic",
            Layout::Stripes => "stripes",
        }
    }
}

impl FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "dynamic" => Ok(Layout::Dynamic),
            "stripes" => Ok(Layout::Stripes),
            _ => Err(format!(
                "unknown layout '{s}' (expected dynamic or stripes)"
            )),
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
}

/// The engine options every subcommand shares (`--threads`, `--block-size`, `--strategy`,
/// `--layout`).
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Worker threads; `None` for one per core, zero or less for the sequential read path.
    pub threads: Option<i64>,
    /// Bytes per block; `None` to let the planner choose.
    pub block_size: Option<usize>,
    /// The requested read method.
    pub strategy: Strategy,
    /// How blocks are distributed among workers.
    pub layout: Layout,
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
    pub reason: String,
}

impl Plan {
    /// Chooses a plan for reading `len` bytes (unknown for streams) from each of `regions`
    /// (an input and the offset its data starts at).
    pub fn choose(
        opts: &EngineOptions,
        regions: &[(&Input, u64)],
        len: Option<u64>,
        access: Access,
    ) -> Plan {
        let cores = sysinfo::cores();
        let requested_threads = opts.threads.unwrap_or(cores as i64);
        let all_seekable = regions.iter().all(|(i, _)| i.is_seekable());
        let sequential = |reason: String| Plan {
            method: Method::Read,
            threads: 1,
            block_size: opts.block_size.unwrap_or(HOT_BLOCK),
            layout: opts.layout,
            reason,
        };
        if !all_seekable {
            let why = if opts.strategy == Strategy::Read || opts.strategy == Strategy::Auto {
                "an input is not seekable".to_string()
            } else {
                format!(
                    "an input is not seekable, so '{}' fell back to sequential reads",
                    opts.strategy
                )
            };
            return sequential(why);
        }
        if requested_threads <= 0 {
            return sequential("threads <= 0 selects conventional sequential reads".into());
        }
        let len = len.unwrap_or(0);
        let (method, default_block, reason) = match opts.strategy {
            Strategy::Read => return sequential("requested".into()),
            Strategy::Pread => (Method::Pread, HOT_BLOCK, "requested".to_string()),
            Strategy::Mmap => (Method::Mmap, HOT_BLOCK, "requested".to_string()),
            Strategy::Auto => auto_method(regions, len, access),
        };
        let block_size = opts.block_size.unwrap_or(default_block).max(1);
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

fn auto_method(regions: &[(&Input, u64)], len: u64, access: Access) -> (Method, usize, String) {
    let total: u64 = len.saturating_mul(regions.len() as u64);
    let avail = sysinfo::available_memory();
    let fits = avail.is_none_or(|a| total <= a);
    if access == Access::Repeated && fits {
        return (
            Method::Mmap,
            HOT_BLOCK,
            "repeated access to data that fits in memory".into(),
        );
    }
    if !fits {
        return (
            Method::Pread,
            COLD_BLOCK,
            format!(
                "inputs ({total} bytes) exceed available memory ({} bytes): large sequential requests",
                avail.unwrap_or(0)
            ),
        );
    }
    let residency = regions
        .iter()
        .map(|(input, off)| {
            sysinfo::residency(input.file(), input.base() + off, len).unwrap_or(1.0)
        })
        .fold(1.0f64, f64::min);
    if residency >= HOT_RESIDENCY {
        (
            Method::Pread,
            HOT_BLOCK,
            format!(
                "{:.0}% in page cache: positional reads into reused buffers",
                residency * 100.0
            ),
        )
    } else {
        (
            Method::Pread,
            COLD_BLOCK,
            format!(
                "{:.0}% in page cache: large positional reads",
                residency * 100.0
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

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
            threads: Some(-2),
            ..Default::default()
        };
        let p = Plan::choose(&opts, &[(&i, 0)], Some(1000), Access::SinglePass);
        assert_eq!(p.method, Method::Read);
        assert_eq!(p.threads, 1);
    }

    #[test]
    fn hot_file_chooses_pread_and_threads_never_exceed_blocks() {
        let (_f, i) = file_of(3 * 1024);
        let opts = EngineOptions {
            threads: Some(8),
            block_size: Some(1024),
            ..Default::default()
        };
        let p = Plan::choose(&opts, &[(&i, 0)], Some(3 * 1024), Access::SinglePass);
        assert_eq!(p.method, Method::Pread);
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

    #[test]
    fn cold_sparse_file_chooses_large_blocks() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(1 << 30).unwrap();
        let i = Input::open(f.path()).unwrap();
        let p = Plan::choose(
            &EngineOptions::default(),
            &[(&i, 0)],
            Some(1 << 30),
            Access::SinglePass,
        );
        assert_eq!(p.method, Method::Pread);
        assert_eq!(p.block_size, COLD_BLOCK);
    }
}
