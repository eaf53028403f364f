//! Making a patch of one file from another (`swath patch make OLD NEW PATCH`).
//!
//! 1. OLD's signature (its content-defined chunks and their XXH3-128), computed in parallel
//!    over I/O chunks ([`crate::signature`]), and OLD's hash.
//! 2. OLD's chunks into the [`ChunkTable`].
//! 3. NEW in sections of `section_len` bytes (16 MiB), on all cores: each worker reads its
//!    section positionally, cuts it into chunks, matches them ([`crate::matcher`]), encodes
//!    and compresses the section ([`crate::section`]) and hashes it (a section is one piece
//!    of NEW's hash). Sections are written in order as batches finish, so memory is the
//!    table plus one batch of sections, whatever NEW's size.
//! 4. The section table and footer, then the header (written last, at offset 0, since it
//!    holds NEW's hash).
//!
//! `--dry-run` runs the same steps and counts the bytes it would write.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use swath_engine::ahead::{read_ahead, AheadPlan, Threads};
use swath_engine::buf::PAGE;
use swath_engine::AtomicOutput;

use crate::apply::Census;
use crate::approx::{fill_gaps, Settings};
use crate::cdc::{Kind, Params};
use crate::error::PatchError;
use crate::format::{encode_tail, section_sum, Entry, Header, Level, HEADER_LEN};
use crate::hash::file_hash;
use crate::matcher::{cdc_chunker, match_section, OldReader};
use crate::oldcache::OldCache;
use crate::ops::Op;
use crate::section::{encode_section_cached, Levels};
use crate::seeds::SeedIndex;
use crate::signature::signature_and_hash;
use crate::source::{MappedFile, ReadAt};
use crate::table::ChunkTable;
use crate::tuning::Tuning;

/// How to make a patch.
#[derive(Debug, Clone)]
pub struct MakeOptions {
    /// How hard to work.
    pub level: Level,
    /// Average chunk length.
    pub chunk_avg: u32,
    /// Worker threads.
    pub threads: usize,
    /// Bytes per read of OLD's signature.
    pub io_chunk: usize,
    /// Bytes of NEW per section.
    pub section_len: u64,
    /// The patch's format.
    pub format: Format,
    /// Files read at once from a device (the I/O semaphore); 0: from the device holding
    /// NEW (1 when rotational, else 2: [`swath_engine::sysinfo::io_threads`]). Bounds the
    /// sections of NEW being read at once when NEW is not in the page cache.
    pub io_threads: usize,
    /// The switches kept for measurements (none changes the patch).
    pub tuning: Tuning,
}

/// Which format `make` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// swath's own (docs/patch-format.md): compressed, checked, applied in parallel.
    Swath,
    /// RFC 3284 VCDIFF, as `xdelta3 -d` applies it ([`crate::vcdiff`]).
    Vcdiff,
}

impl Default for MakeOptions {
    fn default() -> Self {
        MakeOptions {
            level: Level::Fast,
            chunk_avg: 1024,
            threads: swath_engine::sysinfo::cores(),
            io_chunk: 16 << 20,
            section_len: crate::hash::PIECE,
            format: Format::Swath,
            io_threads: 0,
            tuning: Tuning::default(),
        }
    }
}

impl MakeOptions {
    /// The zstd levels of the level.
    fn zstd_levels(&self) -> Levels {
        match self.level {
            Level::Fast => Levels::all(1),
            // Level 6 rather than 3: 3-5% smaller patches of rebuilt programs (their
            // literal and difference streams), for a tenth more time. The literal stream
            // at 5: jaxlib's patch 0.9% larger, a tenth less CPU (zstd 6 packs the
            // literals of a rebuilt program at ~90 MB/s, 5 at ~115). The non-zero
            // difference bytes at 3: jaxlib's 1.4% larger (10.71 MB instead of 10.56),
            // packed at 178 MB/s instead of 77.
            Level::Default => Levels {
                literals: 5,
                differences: 3,
                others: 6,
            },
            Level::Max => Levels::all(19),
        }
    }
}

/// What a make did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Made {
    /// OLD's length.
    pub old_len: u64,
    /// NEW's length.
    pub new_len: u64,
    /// The patch's length (what it would be, with `--dry-run`).
    pub patch_len: u64,
    /// Sections written.
    pub sections: usize,
    /// OLD's chunks (distinct ones in the table).
    pub old_chunks: usize,
    /// What the ops are.
    pub census: Census,
    /// Seconds spent on OLD's signature, hash and seeds.
    pub signature_secs: f64,
    /// Seconds spent indexing OLD's seeds (`default` and `max`; 0 for `fast`), part of
    /// `signature_secs`.
    pub seeds_secs: f64,
    /// Seconds spent matching and encoding NEW.
    pub match_secs: f64,
    /// The smaller of OLD's and NEW's share in the page cache when the make started
    /// (sampled; 1 when it could not be told).
    pub resident: f64,
}

/// Where the patch's bytes go: a file, or nowhere (`--dry-run`, counted).
pub(crate) enum Sink<'a> {
    /// The patch file, and its name for messages.
    File(&'a File, &'a str),
    /// Nowhere: the bytes are only counted.
    Count,
}

impl Sink<'_> {
    /// Writes `bytes` at `at` (nothing when counting).
    pub(crate) fn put_at(&self, at: u64, bytes: &[u8]) -> Result<(), PatchError> {
        match self {
            Sink::File(f, name) => f
                .write_all_at(bytes, at)
                .map_err(|e| PatchError::io(name, e)),
            Sink::Count => Ok(()),
        }
    }
}

/// Sequential writes into a [`Sink`] (VCDIFF is written front to back).
struct SinkWriter<'a, 'b> {
    sink: &'a Sink<'b>,
    at: u64,
}

impl std::io::Write for SinkWriter<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.sink {
            Sink::File(f, _) => f.write_all_at(buf, self.at)?,
            Sink::Count => {}
        }
        self.at += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Makes the patch of `new_path` from `old_path` at `patch_path` (atomically), or only
/// measures it when `patch_path` is `None`. `progress`, when given, is advanced by the
/// bytes of OLD and NEW done.
pub fn make_file(
    old_path: &Path,
    new_path: &Path,
    patch_path: Option<&Path>,
    opts: &MakeOptions,
    progress: Option<&AtomicU64>,
) -> Result<Made, PatchError> {
    let old_name = old_path.to_string_lossy().into_owned();
    let new_name = new_path.to_string_lossy().into_owned();
    let open = |p: &Path, name: &str| -> Result<(File, u64, Stamp), PatchError> {
        let f = File::open(p).map_err(|e| PatchError::io(name, e))?;
        let m = f.metadata().map_err(|e| PatchError::io(name, e))?;
        if !m.is_file() {
            let why = if m.is_dir() {
                std::io::Error::from_raw_os_error(libc::EISDIR)
            } else {
                std::io::Error::other("not a regular file")
            };
            return Err(PatchError::io(name, why));
        }
        Ok((f, m.len(), stamp(&m)))
    };
    let (old, old_len, old_stamp) = open(old_path, &old_name)?;
    let (new, new_len, new_stamp) = open(new_path, &new_name)?;
    let resident = [(&old, old_len), (&new, new_len)]
        .iter()
        .map(|&(f, len)| swath_engine::sysinfo::residency(f, 0, len).unwrap_or(1.0))
        .fold(1.0f64, f64::min);
    let out = match patch_path {
        Some(p) => Some((AtomicOutput::create(p)?, p.to_string_lossy().into_owned())),
        None => None,
    };
    let sink = match &out {
        Some((o, name)) => Sink::File(o.file(), name),
        None => Sink::Count,
    };
    let inputs = Inputs {
        old: &old,
        old_len,
        old_name: &old_name,
        new: &new,
        new_len,
        new_name: &new_name,
    };
    let mut made = make(&inputs, &sink, opts, progress)?;
    made.resident = resident;
    // Both inputs must be what was read: a file that grew, shrank or was rewritten
    // meanwhile makes a wrong patch (apply would refuse it, but say so now).
    unchanged(&old, old_len, old_stamp, &old_name)?;
    unchanged(&new, new_len, new_stamp, &new_name)?;
    if let Some((o, _)) = out {
        o.commit(false)?;
    }
    Ok(made)
}

/// Checks that `file` (named `name`) still has the length and modification time it had
/// when opened: "file changed size while being read" or "file changed as we read it".
fn unchanged(file: &File, len: u64, was: Stamp, name: &str) -> Result<(), PatchError> {
    let m = file.metadata().map_err(|e| PatchError::io(name, e))?;
    if m.len() != len {
        return Err(PatchError::Engine(swath_engine::EngineError::Changed {
            path: name.into(),
            before: len,
            after: m.len(),
        }));
    }
    if stamp(&m) != was {
        return Err(PatchError::Engine(swath_engine::EngineError::Modified {
            path: name.into(),
        }));
    }
    Ok(())
}

/// The two files, their lengths at open and their names.
struct Inputs<'a> {
    old: &'a File,
    old_len: u64,
    old_name: &'a str,
    new: &'a File,
    new_len: u64,
    new_name: &'a str,
}

/// Makes the patch of NEW from OLD (`inputs`) into `sink`: the steps of the module's
/// doc. `progress`, when given, is advanced by the bytes of OLD and NEW done.
fn make(
    inputs: &Inputs<'_>,
    sink: &Sink<'_>,
    opts: &MakeOptions,
    progress: Option<&AtomicU64>,
) -> Result<Made, PatchError> {
    let &Inputs {
        old,
        old_len,
        old_name,
        new,
        new_len,
        new_name,
    } = inputs;
    let params = Params::new(opts.chunk_avg as usize)
        .map_err(|e| PatchError::Usage(format!("--chunk: {e}")))?
        .with_kernel(opts.tuning.cdc_kernel);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.max(1))
        .build()
        .map_err(|e| PatchError::Usage(format!("cannot start worker threads: {e}")))?;
    pool.install(|| {
        let t0 = Instant::now();
        // OLD in the page cache from the start, and small enough to stay there beside NEW, is
        // mapped once its signature is made: the seeds' index and the matcher read it where
        // it lies. An OLD read from the device is not (its pages would be faulted in one at a
        // time, waiting for the device, and counted in the process's resident memory): the
        // matcher reads it through windows (`io::ColdReader`).
        // `tuning.map_old` false reads it positionally instead (measurements).
        let old_hot = AheadPlan::choose(opts.tuning.io, old, old_len, 0) == AheadPlan::HOT
            && old_len <= swath_engine::sysinfo::available_memory().unwrap_or(u64::MAX) / 2;
        let mapped = if opts.tuning.map_old && old_hot {
            // Mapped whole at once (its pages are in the cache): the signature is made
            // where the bytes lie, with no buffer per worker to fault in and copy into.
            MappedFile::new(old, old_name, old_len).inspect(MappedFile::populate)
        } else {
            None
        };
        let old_bytes: &dyn ReadAt = match &mapped {
            Some(m) => m,
            None => old,
        };
        let (table, old_hash) = index_old(old_bytes, old_len, &params, opts)
            .map_err(|e| PatchError::io(old_name, e))?;
        let t_seeds = Instant::now();
        let seeds = match Settings::for_level(opts.level) {
            Some(s) => Some(
                SeedIndex::build(old_bytes, old_len, s.seeds, opts.tuning.seed_gate)
                    .map_err(|e| PatchError::io(old_name, e))?,
            ),
            None => None,
        };
        let old_side = OldSide {
            table: &table,
            seeds: seeds.as_ref(),
            old: old_bytes,
            len: old_len,
        };
        let signature_secs = t0.elapsed();
        let seeds_secs = t_seeds.elapsed();
        if let Some(p) = progress {
            p.fetch_add(old_len, Ordering::Relaxed);
        }

        let t1 = Instant::now();
        let section_len = section_len_for(new_len, opts);
        let count = new_len.div_ceil(section_len) as usize;
        let mut header = Header {
            old_len,
            new_len,
            old_hash,
            new_hash: 0,
            hash_piece: crate::hash::PIECE,
            level: opts.level,
            chunk_avg: opts.chunk_avg,
            section_len,
        };
        // Sections chain their checksums to the header without NEW's hash (known last).
        let chain = header.chain();
        if opts.format == Format::Swath {
            sink.put_at(0, &[0u8; HEADER_LEN])?;
        }
        let job = Job {
            inputs,
            sink,
            opts,
            params: &params,
            old_side: &old_side,
            section_len,
            count,
            chain,
            progress,
        };
        // NEW in the page cache: each worker reads its sections itself into a buffer it
        // reuses. NEW on the device: read ahead (two sections in flight) under the I/O
        // semaphore (a rotational disk serves one file at a time), matching on the
        // workers as sections arrive.
        let new_plan = AheadPlan::choose(opts.tuning.io, new, new_len, old_len);
        let (o, vcdiff_ops) = make_sections(&job, &new_plan)?;
        if mapped.as_ref().is_some_and(MappedFile::faulted) {
            return Err(shrank(old_name));
        }
        debug_assert_eq!(o.next, count);
        let (entries, piece_sums, census, at) = (o.entries, o.piece_sums, o.census, o.at);
        let mut made = Made {
            old_len,
            new_len,
            patch_len: 0,
            sections: count,
            old_chunks: table.len(),
            census,
            signature_secs: secs(signature_secs),
            seeds_secs: secs(seeds_secs),
            match_secs: 0.0,
            resident: 1.0,
        };
        if opts.format == Format::Vcdiff {
            let mut sections = vcdiff_ops;
            sections.sort_by_key(|(i, _)| *i);
            let ops: Vec<Op> = sections.into_iter().flat_map(|(_, o)| o).collect();
            let mut w = SinkWriter { sink, at: 0 };
            crate::vcdiff::write_vcdiff(&ops, new, &mut w)
                .map_err(|e| PatchError::io(new_name, e))?;
            made.patch_len = w.at;
            made.match_secs = secs(t1.elapsed());
            return Ok(made);
        }
        header.new_hash = new_hash(inputs, &header, &piece_sums, &new_plan)?;
        let tail = encode_tail(chain, &entries, at);
        sink.put_at(at, &tail)?;
        sink.put_at(0, &header.encode())?;
        made.patch_len = at + tail.len() as u64;
        made.match_secs = secs(t1.elapsed());
        Ok(made)
    })
}

/// The section length for `new_len` bytes of NEW. A NEW too small to give every worker
/// four whole sections gets shorter ones (down to 1 MiB), so that make and apply, which run
/// a section per worker, keep every core busy to the end (with two per worker, the last
/// section often ran alone: ruff's 31 MB, 0.313 -> 0.283 s; duckdb's 62 MB, 0.355 -> 0.307
/// s, medians of 15 alternating; the patches 0.01 % and 0.2 % larger).
fn section_len_for(new_len: u64, opts: &MakeOptions) -> u64 {
    let workers = opts.threads.max(1) as u64;
    if new_len < 4 * workers * opts.section_len {
        (new_len / (4 * workers))
            .next_multiple_of(1 << 16)
            .clamp((1 << 20).min(opts.section_len), opts.section_len)
    } else {
        opts.section_len
    }
}

/// NEW's hash: with sections of one hash piece each, their hashes (`piece_sums`) make it;
/// otherwise (a NEW too small to give every worker two whole pieces) NEW is hashed on its
/// own, where it lies when it is in the page cache (no piece-sized buffers to fault in).
fn new_hash(
    inputs: &Inputs<'_>,
    header: &Header,
    piece_sums: &[u8],
    new_plan: &AheadPlan,
) -> Result<u128, PatchError> {
    let &Inputs {
        new,
        new_len,
        new_name,
        ..
    } = inputs;
    if header.section_len == header.hash_piece {
        return Ok(xxhash_rust::xxh3::xxh3_128(piece_sums));
    }
    let mapped_new = match new_plan.ahead {
        false => MappedFile::new(new, new_name, new_len),
        true => None,
    };
    let new_bytes: &dyn ReadAt = match &mapped_new {
        Some(m) => m,
        None => new,
    };
    let hash = file_hash(new_bytes, new_len, header.hash_piece)
        .map_err(|e| PatchError::io(new_name, e))?;
    if mapped_new.as_ref().is_some_and(MappedFile::faulted) {
        return Err(shrank(new_name));
    }
    Ok(hash)
}

/// One make's sections: what they are made from and where they go.
struct Job<'a> {
    /// OLD and NEW.
    inputs: &'a Inputs<'a>,
    /// Where the patch's bytes go.
    sink: &'a Sink<'a>,
    /// How to make the patch.
    opts: &'a MakeOptions,
    /// The chunking.
    params: &'a Params,
    /// What NEW is matched against.
    old_side: &'a OldSide<'a>,
    /// Bytes of NEW per section.
    section_len: u64,
    /// Sections.
    count: usize,
    /// The header's checksum the sections' chain to.
    chain: u64,
    /// Advanced by the bytes of NEW done, when given.
    progress: Option<&'a AtomicU64>,
}

/// A section made: its bytes in the patch, its hash, what its ops are.
type SectionMade = (Vec<u8>, u128, Census);

/// With `--format vcdiff`, each section's ops, by section.
type VcdiffOps = Vec<(usize, Vec<Op>)>;

/// Every section of NEW made and written in order, on every worker, read ahead when
/// `new_plan` says so; returns what was written and, with `--format vcdiff`, each
/// section's ops (by section, in no order).
fn make_sections(job: &Job<'_>, new_plan: &AheadPlan) -> Result<(InOrder, VcdiffOps), PatchError> {
    let &Job {
        inputs,
        opts,
        section_len,
        count,
        ..
    } = job;
    let &Inputs {
        new,
        new_len,
        new_name,
        old_name,
        ..
    } = inputs;
    // Sections are made on every worker, each claiming the next one, and written in
    // order by whichever worker completes the one due (no batch barrier: a slow section
    // holds back only the workers more than `window` sections ahead of it). Buffers
    // are reused, so NEW's pages are copied into memory already touched.
    let window = (opts.threads.max(1) * 2).max(2);
    // With `--format vcdiff`, each section's ops (small beside the data) are kept and
    // written once all are known.
    let vcdiff_ops = std::sync::Mutex::new(VcdiffOps::new());
    let w = Writer {
        job,
        order: std::sync::Mutex::new(InOrder {
            next: 0,
            ready: std::collections::BTreeMap::new(),
            failure: None,
            entries: Vec::with_capacity(count),
            piece_sums: Vec::with_capacity(count * 16),
            census: Census::default(),
            at: HEADER_LEN as u64,
        }),
        moved: std::sync::Condvar::new(),
        failed: std::sync::atomic::AtomicBool::new(false),
    };
    let claim = std::sync::atomic::AtomicUsize::new(0);
    let spare = std::sync::Mutex::new(Vec::<Vec<u8>>::new());
    // `tuning.map_new` false reads hot sections into buffers instead (measurements).
    let map_new = opts.tuning.map_new;
    let io_sem = swath_engine::memfor::IoSemaphore::new(match opts.io_threads {
        0 => swath_engine::sysinfo::io_threads(new),
        n => n,
    });
    let section_of = |i: usize, bytes: &[u8]| -> Result<SectionMade, PatchError> {
        let off = i as u64 * section_len;
        let made = make_section(bytes, off, job.old_side, job.params, opts)
            .map_err(|e| PatchError::io(old_name, e))?;
        if opts.format == Format::Vcdiff {
            vcdiff_ops
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((i, made.ops));
        }
        if let Some(p) = job.progress {
            p.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        }
        Ok((made.bytes, made.sum, made.census))
    };
    let failed = &w.failed;
    let workers = opts.threads.max(1).min(count.max(1));
    if new_plan.ahead && section_len % PAGE as u64 == 0 && count > 1 {
        let _permit = io_sem.read();
        let read = read_ahead(
            new,
            new_len,
            section_len as usize,
            new_plan,
            &crate::io::Pool(workers),
            |k, bytes| {
                w.deliver(k, section_of(k, bytes));
                if failed.load(Ordering::Relaxed) {
                    return Err(std::io::Error::other("stopped"));
                }
                Ok(())
            },
        );
        if let Err(e) = read {
            let mut o = w.lock();
            if o.failure.is_none() {
                o.failure = Some(PatchError::io(new_name, e));
            }
        }
    } else {
        (0..workers).into_par_iter().for_each(|_| loop {
            let i = claim.fetch_add(1, Ordering::Relaxed);
            if i >= count || failed.load(Ordering::Relaxed) {
                break;
            }
            {
                let mut o = w.lock();
                while i >= o.next + window && !failed.load(Ordering::Relaxed) {
                    o = w.moved.wait(o).unwrap_or_else(|p| p.into_inner());
                }
            }
            if failed.load(Ordering::Relaxed) {
                break;
            }
            w.deliver(i, read_section(job, i, map_new, &spare, &section_of));
        });
    }
    let mut o = w.order.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = o.failure.take() {
        return Err(e);
    }
    Ok((
        o,
        vcdiff_ops.into_inner().unwrap_or_else(|p| p.into_inner()),
    ))
}

/// Section `i` of NEW read and made (`section_of`). In the page cache, the section is
/// matched where it lies, mapped (no copy into a buffer); the map is guarded, so NEW
/// shrinking meanwhile is an error, not SIGBUS. Without a map (`map_new` false, or no
/// guard slot left), it is read into a buffer taken from `spare` and given back.
fn read_section<F>(
    job: &Job<'_>,
    i: usize,
    map_new: bool,
    spare: &std::sync::Mutex<Vec<Vec<u8>>>,
    section_of: &F,
) -> Result<SectionMade, PatchError>
where
    F: Fn(usize, &[u8]) -> Result<SectionMade, PatchError>,
{
    let &Inputs {
        new,
        new_len,
        new_name,
        ..
    } = job.inputs;
    let off = i as u64 * job.section_len;
    let n = (new_len - off).min(job.section_len) as usize;
    if map_new {
        if let Ok(Some(map)) = swath_engine::mapguard::GuardedMap::new(new, new_name, off, n as u64)
        {
            let made = section_of(i, map.bytes());
            if map.faulted() {
                return Err(shrank(new_name));
            }
            return made;
        }
    }
    let mut buf = spare
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .pop()
        .unwrap_or_default();
    if buf.len() < n {
        buf.resize(n, 0);
    }
    let made = ReadAt::read_exact_at(new, &mut buf[..n], off)
        .map_err(|e| PatchError::io(new_name, e))
        .and_then(|()| section_of(i, &buf[..n]));
    spare.lock().unwrap_or_else(|p| p.into_inner()).push(buf);
    made
}

/// The sections' writer, shared by the workers: sections handed over as they are made,
/// written in order as they come due.
struct Writer<'a> {
    /// The make's sections.
    job: &'a Job<'a>,
    /// What is made and not yet written, and what is written.
    order: std::sync::Mutex<InOrder>,
    /// Notified when sections are written (workers too far ahead wait on it).
    moved: std::sync::Condvar,
    /// Set at the first error: the workers stop.
    failed: std::sync::atomic::AtomicBool,
}

impl Writer<'_> {
    /// The state, even if a worker panicked holding it.
    fn lock(&self) -> std::sync::MutexGuard<'_, InOrder> {
        self.order.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands section `i`'s result over and writes what is due, in order.
    fn deliver(&self, i: usize, result: Result<SectionMade, PatchError>) {
        let &Job {
            sink,
            opts,
            section_len,
            chain,
            ..
        } = self.job;
        let new_len = self.job.inputs.new_len;
        let mut o = self.lock();
        match result {
            Ok(r) => {
                o.ready.insert(i, r);
            }
            Err(e) => {
                o.failure.get_or_insert(e);
                self.failed.store(true, Ordering::Relaxed);
            }
        }
        while let Some((bytes, sum, c)) = {
            let due = o.next;
            o.ready.remove(&due)
        } {
            let k = o.next;
            let off = k as u64 * section_len;
            let entry = Entry {
                new_offset: off,
                new_len: (new_len - off).min(section_len),
                offset: o.at,
                len: bytes.len() as u64,
                sum: section_sum(chain, k as u64, &bytes),
            };
            o.entries.push(entry);
            if opts.format == Format::Swath {
                if let Err(e) = sink.put_at(o.at, &bytes) {
                    o.failure.get_or_insert(e);
                    self.failed.store(true, Ordering::Relaxed);
                    break;
                }
                o.at += bytes.len() as u64;
            }
            o.piece_sums.extend_from_slice(&sum.to_le_bytes());
            o.census.add(&c);
            o.next += 1;
        }
        drop(o);
        self.moved.notify_all();
    }
}

/// The error of a file that shrank while it was mapped (a read of its map faulted).
fn shrank(name: &str) -> PatchError {
    PatchError::io(
        name,
        std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the file shrank while it was read",
        ),
    )
}

/// Sections made but not yet written (the next one due is `next`), and the first error.
struct InOrder {
    next: usize,
    ready: std::collections::BTreeMap<usize, (Vec<u8>, u128, Census)>,
    failure: Option<PatchError>,
    /// What is written so far: the section table, the sections' hashes, the census, and
    /// where the next section goes in the patch.
    entries: Vec<Entry>,
    piece_sums: Vec<u8>,
    census: Census,
    at: u64,
}

/// OLD indexed for matching: the table of its data chunks, and its hash
/// ([`crate::hash`], pieces of [`crate::hash::PIECE`]).
pub fn index_old(
    old: &dyn ReadAt,
    old_len: u64,
    params: &Params,
    opts: &MakeOptions,
) -> std::io::Result<(ChunkTable, u128)> {
    // With I/O chunks of one hash piece, OLD's hash comes from the signature's reads.
    let (chunks, piece_hash) = signature_and_hash(
        old,
        old_len,
        params,
        opts.io_chunk,
        opts.threads.max(1),
        opts.tuning.io,
    )?;
    let old_hash = if opts.io_chunk as u64 == crate::hash::PIECE {
        piece_hash
    } else {
        file_hash(old, old_len, crate::hash::PIECE)?
    };
    crate::io::frees().before_alloc(ChunkTable::bytes_for(chunks.len()));
    let mut table = ChunkTable::with_capacity(chunks.len());
    // Each slot is a cache miss: the slot of the chunk `AHEAD` places on is asked for
    // first, so that several misses are in flight at once.
    const AHEAD: usize = 16;
    for (i, c) in chunks.iter().enumerate() {
        if let Some(next) = chunks.get(i + AHEAD) {
            table.prefetch(next.hash);
        }
        if c.kind == Kind::Data {
            table.insert(c.hash, c.offset, c.len);
        }
    }
    // The list (32 bytes a chunk) is freed off the critical path.
    let bytes = (chunks.capacity() * std::mem::size_of::<crate::signature::Chunk>()) as u64;
    crate::io::frees().free(chunks, bytes, opts.tuning.detached_frees);
    Ok((table, old_hash))
}

/// What NEW is matched against: OLD's table, and OLD itself (read to verify and extend
/// matches, and for the bytes under approximate ones).
pub struct OldSide<'a> {
    /// OLD's data chunks by hash.
    pub table: &'a ChunkTable,
    /// OLD's seeds, for the approximate matches of `default` and `max` (none for `fast`).
    pub seeds: Option<&'a SeedIndex>,
    /// OLD's bytes.
    pub old: &'a dyn ReadAt,
    /// OLD's length.
    pub len: u64,
}

/// One section of NEW, matched and encoded.
pub struct MadeSection {
    /// The section's bytes in the patch (empty with `--format vcdiff`).
    pub bytes: Vec<u8>,
    /// XXH3-128 of the section's bytes of NEW (a piece of NEW's hash when the section is
    /// one hash piece long).
    pub sum: u128,
    /// What its ops are.
    pub census: Census,
    /// Its ops (kept with `--format vcdiff`, which writes them all at the end; else empty).
    pub ops: Vec<Op>,
}

/// Matches `new` (a section of NEW that starts at `new_offset`) against OLD at the
/// options' level and encodes it. Errors are OLD's: `new` is already read.
pub fn make_section(
    new: &[u8],
    new_offset: u64,
    old: &OldSide<'_>,
    params: &Params,
    opts: &MakeOptions,
) -> std::io::Result<MadeSection> {
    make_section_refined(new, new_offset, old, params, opts, &mut |ops| Ok(ops))
}

/// [`make_section`] with `refine` run on the exact matches before the approximate ones
/// fill the gaps (in `default` and `max`; `fast` keeps the exact matches alone): a tree's
/// make matches its changed files against their old versions there ([`crate::hint`]).
pub fn make_section_refined(
    new: &[u8],
    new_offset: u64,
    old: &OldSide<'_>,
    params: &Params,
    opts: &MakeOptions,
    refine: &mut dyn FnMut(Vec<Op>) -> std::io::Result<Vec<Op>>,
) -> std::io::Result<MadeSection> {
    let mut reader = OldReader::new(old.old, old.len);
    let mut ops = match_section(new, cdc_chunker(new, params), old.table, &mut reader)?;
    let settings = Settings::for_level(opts.level);
    if settings.is_some() {
        ops = refine(ops)?;
    }
    let mut cache = OldCache::new(old.old, old.len, settings.map_or(16, |s| s.cache_blocks));
    if let Some(settings) = settings {
        ops = fill_gaps(ops, new, &mut cache, old.seeds, &settings)?;
    }
    let bytes = match opts.format {
        Format::Swath => {
            encode_section_cached(&ops, new, new_offset, &mut cache, opts.zstd_levels())?
        }
        Format::Vcdiff => Vec::new(),
    };
    let census = count_ops(&ops);
    if opts.format != Format::Vcdiff {
        ops = Vec::new();
    }
    Ok(MadeSection {
        bytes,
        sum: xxhash_rust::xxh3::xxh3_128(new),
        census,
        ops,
    })
}

/// A file's modification time.
type Stamp = (i64, i64);

fn stamp(m: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    (m.mtime(), m.mtime_nsec())
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn count_ops(ops: &[Op]) -> Census {
    let mut c = Census::default();
    for op in ops {
        c.count(op);
    }
    c
}

/// The "speed of light" of a make: the time to read OLD and NEW (both at once, in 16 MiB
/// positional reads) and write `patch_len` bytes in `patch_dir` (into an unnamed file that
/// is never linked), measured on the same files and machine as the make it is compared with.
pub fn speed_of_light(
    old: &Path,
    new: &Path,
    patch_dir: &Path,
    patch_len: u64,
) -> std::io::Result<Duration> {
    let started = Instant::now();
    let read_all = |p: &Path| -> std::io::Result<()> {
        let f = File::open(p)?;
        let len = f.metadata()?.len();
        let mut buf = swath_engine::buf::PageBuf::zeroed((16usize << 20).min(len as usize).max(1));
        let mut at = 0u64;
        while at < len {
            let n = buf.len().min((len - at) as usize);
            ReadAt::read_exact_at(&f, &mut buf[..n], at)?;
            at += n as u64;
        }
        Ok(())
    };
    let write_patch = || -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_TMPFILE)
            .mode(0o600)
            .open(patch_dir)?;
        let block = vec![0x5au8; (16usize << 20).min(patch_len as usize).max(1)];
        let mut at = 0u64;
        while at < patch_len {
            let n = block.len().min((patch_len - at) as usize);
            f.write_all_at(&block[..n], at)?;
            at += n as u64;
        }
        Ok(())
    };
    std::thread::scope(|s| {
        let a = s.spawn(|| read_all(old));
        let b = s.spawn(|| read_all(new));
        let w = write_patch();
        a.join()
            .unwrap_or_else(|_| Err(std::io::Error::other("reader failed")))?;
        b.join()
            .unwrap_or_else(|_| Err(std::io::Error::other("reader failed")))?;
        w
    })?;
    Ok(started.elapsed())
}

/// The device's sequential read bandwidth as the cold target measures it: the files in
/// `paths` read one after the other with direct reads (`O_DIRECT`, bypassing the page
/// cache, so the device is read whatever the cache holds) of `request` bytes, `depth` of
/// them in flight. Returns the bytes read and the time taken; an error when the file
/// system refuses direct reads (tmpfs).
pub fn direct_read_time(
    paths: &[&Path],
    request: usize,
    depth: usize,
) -> std::io::Result<(u64, Duration)> {
    let started = Instant::now();
    let mut total = 0u64;
    let plan = AheadPlan {
        ahead: true,
        direct: true,
        depth,
    };
    for p in paths {
        let f = File::open(p)?;
        let len = f.metadata()?.len();
        if swath_engine::direct::open_direct(&f).is_none() {
            return Err(std::io::Error::other(format!(
                "{}: the file system refuses direct reads",
                p.display()
            )));
        }
        let request = request.next_multiple_of(PAGE);
        read_ahead(&f, len, request, &plan, &Threads(1), |_, b| Ok(b.len()))?;
        total += len;
    }
    Ok((total, started.elapsed()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::apply::{apply_file, PatchFile};
    use proptest::prelude::*;

    /// NEW from OLD by an edit script: (kind, position, length, byte) with kinds insert,
    /// delete, move, duplicate, zero run, byte change, and rebuild noise (from the
    /// position on, a 4-byte little-endian value every `13 + length % 200` bytes moved by
    /// `byte`, as a rebuilt program's addresses are).
    pub(crate) fn edit(old: &[u8], edits: &[(u8, usize, usize, u8)]) -> Vec<u8> {
        let mut new = old.to_vec();
        for &(kind, at, len, b) in edits {
            let at = if new.is_empty() {
                0
            } else {
                at % (new.len() + 1)
            };
            let len = len.min(new.len() - at);
            match kind % 7 {
                0 => {
                    new.splice(at..at, (0..len.max(1)).map(|i| b.wrapping_add(i as u8)));
                }
                1 => {
                    new.drain(at..at + len);
                }
                2 => {
                    let piece: Vec<u8> = new.drain(at..at + len).collect();
                    let to = (at * 7 + 3) % (new.len() + 1);
                    new.splice(to..to, piece);
                }
                3 => {
                    let piece = new[at..at + len].to_vec();
                    new.extend_from_slice(&piece);
                }
                4 => new[at..at + len].iter_mut().for_each(|x| *x = 0),
                6 => {
                    let stride = 13 + len % 200;
                    let mut p = at;
                    while p + 4 <= new.len() {
                        let v = u32::from_le_bytes(new[p..p + 4].try_into().unwrap());
                        let moved = v.wrapping_add(u32::from(b) << 4 | 1);
                        new[p..p + 4].copy_from_slice(&moved.to_le_bytes());
                        p += stride;
                    }
                }
                _ => {
                    if at < new.len() {
                        new[at] ^= b | 1;
                    }
                }
            }
        }
        new
    }

    /// Drops a file's pages from the page cache (written back first).
    fn evict(p: &Path) {
        use std::os::fd::AsRawFd;
        let f = File::open(p).unwrap();
        f.sync_all().unwrap();
        // SAFETY: posix_fadvise only reads its arguments.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }

    /// Pseudo-random bytes below `alphabet` (a small one makes repeats, as real data has).
    pub(crate) fn random(len: usize, seed: u64, alphabet: u16) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x >> 32) % u64::from(alphabet)) as u8
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn apply_of_make_is_new(
            old_len in 0usize..40_000,
            seed in any::<u64>(),
            edits in proptest::collection::vec((any::<u8>(), any::<usize>(), 0usize..5000, any::<u8>()), 0..8),
            level in 0u32..3,
            chunk in prop_oneof![Just(64u32), Just(100), Just(1024), Just(4096)],
            threads in 1usize..4,
            section_len in prop_oneof![Just(4096u64), Just(10_000), Just(1 << 20)],
            io_chunk in prop_oneof![Just(1usize << 16), Just(1 << 20)],
            cold in any::<bool>(),
            tuning in (
                proptest::sample::select(crate::tuning::IoChoice::ALL.to_vec()),
                0u8..16,
                proptest::sample::select(crate::cdc::Kernel::available()),
            ),
        ) {
            let old = random(old_len, seed, 8);
            let new = edit(&old, &edits);
            let dir = tempfile::tempdir().unwrap();
            let (o, n, p, out) = (dir.path().join("o"), dir.path().join("n"), dir.path().join("p"), dir.path().join("out"));
            std::fs::write(&o, &old).unwrap();
            std::fs::write(&n, &new).unwrap();
            if cold {
                // Out of the page cache: OLD's signature and NEW's sections are read ahead.
                evict(&o);
                evict(&n);
            }
            let opts = MakeOptions {
                level: Level::from_code(level).unwrap(),
                chunk_avg: chunk,
                threads,
                io_chunk,
                section_len,
                format: Format::Swath,
                io_threads: threads % 3,
                tuning: Tuning::default(),
            };
            let made = make_file(&o, &n, Some(&p), &opts, None).unwrap();
            // Every switch kept for measurements makes the same patch.
            let (io, flags, cdc_kernel) = tuning;
            let tuned = MakeOptions {
                tuning: Tuning {
                    io,
                    map_old: flags & 1 != 0,
                    map_new: flags & 2 != 0,
                    cdc_kernel,
                    seed_gate: if flags & 4 != 0 { crate::seeds::Gate::Scalar } else { crate::seeds::Gate::best() },
                    detached_frees: flags & 8 != 0,
                },
                ..opts.clone()
            };
            let tuned_patch = dir.path().join("tuned");
            make_file(&o, &n, Some(&tuned_patch), &tuned, None).unwrap();
            prop_assert_eq!(std::fs::read(&tuned_patch).unwrap(), std::fs::read(&p).unwrap(), "{:?}", tuned.tuning);
            prop_assert_eq!(made.patch_len, std::fs::metadata(&p).unwrap().len());
            let c = &made.census;
            prop_assert_eq!(c.copied_bytes + c.delta_bytes + c.zero_bytes + c.literal_bytes, new.len() as u64);
            let dry = make_file(&o, &n, None, &opts, None).unwrap();
            prop_assert_eq!(dry.patch_len, made.patch_len);
            let patch = PatchFile::open(&p).unwrap();
            apply_file(&o, &patch, &out, None).unwrap();
            prop_assert_eq!(std::fs::read(&out).unwrap(), new);
        }
    }

    /// `--format vcdiff` is applied by xdelta3 (the reference decoder), over edit scripts,
    /// levels and several windows. Skipped, with a notice, where xdelta3 is not installed
    /// (.ci/run installs it).
    #[test]
    fn vcdiff_made_by_make_is_applied_by_xdelta3() {
        if !std::path::Path::new("/usr/bin/xdelta3").exists() {
            swath_engine::testing::skip("skipped: /usr/bin/xdelta3 is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let (o, n, p, out) = (
            dir.path().join("o"),
            dir.path().join("n"),
            dir.path().join("p"),
            dir.path().join("out"),
        );
        type Edit = (u8, usize, usize, u8);
        let cases: Vec<(usize, Vec<Edit>)> = vec![
            (0, vec![(0, 0, 100, 1)]),
            (1000, vec![]),
            (
                50_000,
                vec![
                    (0, 10_000, 300, 3),
                    (2, 20_000, 5000, 0),
                    (4, 3000, 200, 0),
                    (5, 40_000, 1, 9),
                ],
            ),
            (
                20_000_000,
                vec![
                    (0, 1_000_000, 10, 3),
                    (2, 5_000_000, 100_000, 0),
                    (3, 17_000_000, 30_000, 0),
                    (4, 300, 70_000, 0),
                ],
            ),
        ];
        for (len, edits) in cases {
            let old = random(len, len as u64 + 1, 256);
            let new = edit(&old, &edits);
            std::fs::write(&o, &old).unwrap();
            std::fs::write(&n, &new).unwrap();
            for level in [Level::Fast, Level::Default] {
                let opts = MakeOptions {
                    level,
                    format: Format::Vcdiff,
                    chunk_avg: 256,
                    ..MakeOptions::default()
                };
                make_file(&o, &n, Some(&p), &opts, None).unwrap();
                let st = std::process::Command::new("xdelta3")
                    .args(["-d", "-f", "-s"])
                    .arg(&o)
                    .arg(&p)
                    .arg(&out)
                    .output()
                    .unwrap();
                assert!(
                    st.status.success(),
                    "{len} {level:?}: {}",
                    String::from_utf8_lossy(&st.stderr)
                );
                assert!(std::fs::read(&out).unwrap() == new, "{len} {level:?}");
            }
        }
    }

    /// A rebuilt-program-like pair (pieces moved, code inserted, a changed value every
    /// ~60 bytes): exact chunks find little, the approximate matcher most of it; every
    /// level's patch applies.
    #[test]
    fn rebuild_noise_is_matched_approximately_and_every_level_applies() {
        let old = random(3_000_000, 9, 256);
        let new = edit(
            &old,
            &[
                (2, 500_000, 200_000, 0),
                (0, 1_200_000, 3000, 5),
                (1, 2_000_000, 5000, 0),
                (3, 100_000, 50_000, 0),
                (6, 0, 47, 3),
            ],
        );
        let dir = tempfile::tempdir().unwrap();
        let (o, n, p, out) = (
            dir.path().join("o"),
            dir.path().join("n"),
            dir.path().join("p"),
            dir.path().join("out"),
        );
        std::fs::write(&o, &old).unwrap();
        std::fs::write(&n, &new).unwrap();
        let mut sizes = Vec::new();
        for level in [Level::Fast, Level::Default, Level::Max] {
            let opts = MakeOptions {
                level,
                threads: 2,
                ..MakeOptions::default()
            };
            let made = make_file(&o, &n, Some(&p), &opts, None).unwrap();
            apply_file(&o, &PatchFile::open(&p).unwrap(), &out, None).unwrap();
            assert!(std::fs::read(&out).unwrap() == new, "{level:?}");
            sizes.push((made.patch_len, made.census.delta_bytes));
        }
        // The changed values alone are ~4% of NEW's bytes; fast stores every chunk
        // around them literally.
        let (fast, default, max) = (sizes[0].0, sizes[1].0, sizes[2].0);
        assert!(fast > new.len() as u64 / 2, "{sizes:?}");
        assert!(default * 8 < fast, "{sizes:?}");
        assert!(max <= default, "{sizes:?}");
        assert!(sizes[1].1 > new.len() as u64 * 9 / 10, "{sizes:?}");
    }

    #[test]
    fn the_direct_read_ceiling_reads_every_byte_or_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, random(100_000, 1, 256)).unwrap();
        std::fs::write(&b, random(5000, 2, 256)).unwrap();
        match direct_read_time(&[&a, &b], 1 << 16, 2) {
            Ok((n, _)) => assert_eq!(n, 105_000),
            Err(e) => assert!(e.to_string().contains("refuses direct reads"), "{e}"),
        }
    }

    #[test]
    fn an_input_that_changed_while_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"0123456789").unwrap();
        let opened = |p: &Path| {
            let f = File::open(p).unwrap();
            let m = f.metadata().unwrap();
            (f, m.len(), stamp(&m))
        };
        let (f, len, was) = opened(&p);
        unchanged(&f, len, was, "f").unwrap();
        // Rewritten in place, same length: its time moved (set explicitly, as a coarse
        // clock could leave it equal).
        std::fs::write(&p, b"9876543210").unwrap();
        let later = std::time::SystemTime::now() + Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let e = unchanged(&f, len, was, "f").unwrap_err().to_string();
        assert!(e.starts_with("f: file changed as we read it"), "{e}");
        // Grown, and shrunk.
        let (f, len, was) = opened(&p);
        std::fs::write(&p, b"98765432101").unwrap();
        let e = unchanged(&f, len, was, "f").unwrap_err().to_string();
        assert!(e.contains("was 10 bytes, now 11"), "{e}");
        std::fs::write(&p, b"98").unwrap();
        let e = unchanged(&f, len, was, "f").unwrap_err().to_string();
        assert!(e.contains("was 10 bytes, now 2"), "{e}");
    }

    #[test]
    fn an_unchanged_file_is_a_tiny_patch_and_a_small_edit_a_small_one() {
        let old = random(3_000_000, 42, 256);
        let dir = tempfile::tempdir().unwrap();
        let (o, n) = (dir.path().join("o"), dir.path().join("n"));
        std::fs::write(&o, &old).unwrap();
        let opts = MakeOptions::default();
        let same = make_file(&o, &o, None, &opts, None).unwrap();
        assert_eq!(same.census.copied_bytes, old.len() as u64);
        assert!(same.patch_len < 400, "{}", same.patch_len);
        // 100 bytes inserted in the middle: two copies around at most those 100 literal
        // bytes (fewer when a byte at the seam happens to equal OLD's).
        let new = edit(&old, &[(0, 1_500_000, 100, 7)]);
        std::fs::write(&n, &new).unwrap();
        let made = make_file(&o, &n, None, &opts, None).unwrap();
        let c = &made.census;
        assert!(c.literal_bytes <= 100 && c.literal_bytes >= 95, "{c:?}");
        assert_eq!(c.copied_bytes + c.literal_bytes, new.len() as u64, "{c:?}");
        assert!(made.patch_len < 600, "{}", made.patch_len);
    }
}
