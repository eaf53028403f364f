//! A file's signature: its content-defined chunks and their XXH3-128, computed on all cores
//! and identical to one sequential scan whatever the I/O chunk and thread count.
//!
//! The file is read in I/O chunks ("pieces", 16 MiB by default), each scanned by a worker as
//! if a chunk started at its first byte, keeping only the cuts it can decide from its own
//! bytes ([`crate::cdc::cut`] without `last`). Those cuts are right *given that start*,
//! which is artificial. The pieces are then stitched in order: from the last true cut, the
//! scan goes on sequentially, reading the bytes around the seam again, until one of its cuts
//! is also a cut of the next piece; from that cut on, both scans see the same start and the
//! same bytes, so the piece's own cuts are the true ones and are taken as they are. The
//! bytes scanned twice are a few chunks per seam (Bloom's "delete the fragments near the
//! boundary and find them again").

use std::io;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_128;

use swath_engine::ahead::{read_ahead_unordered, AheadPlan, IoChoice};
use swath_engine::buf::PAGE;

use crate::cdc::{cut_all, Cutter, Kind, Params};
use crate::source::ReadAt;

/// One chunk of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    /// Offset of its first byte.
    pub offset: u64,
    /// Length (at most 4 x 64 MiB; a zero run at most [`Params::zero_max`]).
    pub len: u32,
    /// Data or a run of zeros.
    pub kind: Kind,
    /// XXH3-128 of its bytes (0 for a zero run, which is never looked up).
    pub hash: u128,
}

/// Turns cuts of `data` (which starts at file offset `base`, the first cut's chunk at
/// `start` in it) into chunks.
fn chunks_of(
    data: &[u8],
    base: u64,
    mut start: usize,
    cuts: &[(usize, Kind)],
    out: &mut Vec<Chunk>,
) {
    for &(end, kind) in cuts {
        let mut s = start;
        while s < end {
            let n = (end - s).min(u32::MAX as usize);
            out.push(Chunk {
                offset: base + s as u64,
                len: n as u32,
                kind,
                hash: match kind {
                    Kind::Data => xxh3_128(&data[s..s + n]),
                    Kind::Zero => 0,
                },
            });
            s += n;
        }
        start = end;
    }
}

/// The chunks of `data`, scanned sequentially: the oracle of [`signature`], and how a
/// section of NEW already in memory is cut.
pub fn signature_of_slice(data: &[u8], p: &Params) -> Vec<Chunk> {
    let mut cuts = Vec::new();
    cut_all(data, 0, p, true, &mut cuts);
    let mut out = Vec::with_capacity(cuts.len());
    chunks_of(data, 0, 0, &cuts, &mut out);
    out
}

/// The signature of the first `len` bytes of `file`, read in pieces of `io_chunk` bytes
/// (at least four times the longest chunk) by `threads` workers, the way of reading chosen
/// from the file's page-cache residency.
pub fn signature(
    file: &dyn ReadAt,
    len: u64,
    p: &Params,
    io_chunk: usize,
    threads: usize,
) -> io::Result<Vec<Chunk>> {
    Ok(signature_and_hash(file, len, p, io_chunk, threads, IoChoice::Auto)?.0)
}

/// [`signature`], and the file's hash ([`crate::hash`]) with pieces of the I/O chunk's
/// length, computed from the same reads. The way of reading is `io`'s: with
/// [`IoChoice::Auto`], chosen from the file's page-cache residency
/// ([`AheadPlan::for_file`]).
pub fn signature_and_hash(
    file: &dyn ReadAt,
    len: u64,
    p: &Params,
    io_chunk: usize,
    threads: usize,
    io: IoChoice,
) -> io::Result<(Vec<Chunk>, u128)> {
    let plan = file.as_file().map(|f| AheadPlan::choose(io, f, len, 0));
    signature_and_hash_with(file, len, p, io_chunk, threads, plan)
}

/// Bytes a worker reads at a time when it reads its piece itself (data in the page cache):
/// small enough that the bytes are still in its cache when they are cut and hashed.
const STEP: usize = 512 << 10;

/// [`signature_and_hash`] read as `plan` says (`None`: chosen from the residency). A `plan`
/// that reads ahead needs a file ([`ReadAt::as_file`]) and pieces that are a multiple of
/// [`PAGE`]; otherwise the workers read for themselves.
pub fn signature_and_hash_with(
    file: &dyn ReadAt,
    len: u64,
    p: &Params,
    io_chunk: usize,
    threads: usize,
    plan: Option<AheadPlan>,
) -> io::Result<(Vec<Chunk>, u128)> {
    let piece = io_chunk.max(4 * p.lookahead()) as u64;
    let pieces = len.div_ceil(piece) as usize;
    let plan = match (plan, file.as_file()) {
        (Some(plan), Some(_)) => plan,
        (None, Some(f)) => AheadPlan::for_file(f, len, 0),
        (_, None) => AheadPlan::HOT,
    };
    let parts: Vec<(Vec<Chunk>, u128)> = match file.as_file() {
        // Bytes in memory (a file mapped whole) are cut and hashed where they lie.
        _ if !plan.ahead && file.as_bytes().is_some_and(|b| b.len() as u64 >= len) => {
            let bytes = &file.as_bytes().expect("in memory")[..len as usize];
            let scan = |k: usize| {
                let at = k as u64 * piece;
                let n = (len - at).min(piece) as usize;
                let last = at + n as u64 == len;
                Ok(scan_loaded(
                    &bytes[at as usize..at as usize + n],
                    at,
                    last,
                    p,
                ))
            };
            (0..pieces)
                .into_par_iter()
                .with_max_len(1)
                .map(scan)
                .collect::<io::Result<_>>()?
        }
        Some(f) if plan.ahead && piece.is_multiple_of(PAGE as u64) && pieces > 1 => {
            read_ahead_unordered(
                f,
                len,
                piece as usize,
                &plan,
                &crate::io::Pool(threads),
                |k, bytes| {
                    let at = k as u64 * piece;
                    Ok(scan_loaded(bytes, at, at + bytes.len() as u64 == len, p))
                },
            )?
        }
        _ => {
            // Each worker reads its pieces itself, a step at a time, into a buffer it keeps
            // (taken from `spare`, so pages are touched once, not once per piece).
            let spare: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
            let scan = |k: usize| -> io::Result<(Vec<Chunk>, u128)> {
                let mut buf = spare
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .pop()
                    .unwrap_or_default();
                let at = k as u64 * piece;
                let n = (len - at).min(piece) as usize;
                let r = scan_streaming(file, at, n, at + n as u64 == len, p, &mut buf);
                spare.lock().unwrap_or_else(|e| e.into_inner()).push(buf);
                r
            };
            if threads <= 1 || pieces <= 1 {
                (0..pieces).map(scan).collect::<io::Result<_>>()?
            } else {
                (0..pieces)
                    .into_par_iter()
                    .map(scan)
                    .collect::<io::Result<_>>()?
            }
        }
    };
    let mut sums = Vec::with_capacity(parts.len() * 16);
    let mut lists = Vec::with_capacity(parts.len());
    for (list, sum) in parts {
        sums.extend_from_slice(&sum.to_le_bytes());
        lists.push(list);
    }
    Ok((stitch(file, len, p, lists)?, xxh3_128(&sums)))
}

/// The chunks a piece decides by itself (as if a chunk started at its first byte) and its
/// XXH3-128, for a piece already read (`bytes`, at file offset `at`; `last`: the file's end).
fn scan_loaded(bytes: &[u8], at: u64, last: bool, p: &Params) -> (Vec<Chunk>, u128) {
    let mut cuts = Vec::new();
    Cutter::new(p.kernel).cut_all(bytes, 0, p, last, &mut cuts);
    let mut out = Vec::with_capacity(cuts.len());
    chunks_of(bytes, at, 0, &cuts, &mut out);
    (out, xxh3_128(bytes))
}

/// [`scan_loaded`] for the `n` bytes at `at`, read into `buf` [`STEP`] bytes at a time,
/// each step hashed and cut while it is still in the cache.
fn scan_streaming(
    file: &dyn ReadAt,
    at: u64,
    n: usize,
    last: bool,
    p: &Params,
    buf: &mut Vec<u8>,
) -> io::Result<(Vec<Chunk>, u128)> {
    if buf.len() < n {
        buf.resize(n, 0);
    }
    let mut whole = xxhash_rust::xxh3::Xxh3::new();
    let mut cutter = Cutter::new(p.kernel);
    let mut cuts = Vec::new();
    let mut out = Vec::with_capacity(n / p.avg + 16);
    let (mut have, mut s) = (0usize, 0usize);
    while have < n {
        let step = STEP.min(n - have);
        file.read_exact_at(&mut buf[have..have + step], at + have as u64)?;
        whole.update(&buf[have..have + step]);
        have += step;
        let from = s;
        cuts.clear();
        s = cutter.cut_all(&buf[..have], s, p, last && have == n, &mut cuts);
        chunks_of(&buf[..have], at, from, &cuts, &mut out);
    }
    Ok((out, whole.digest128()))
}

/// Joins the pieces' chunks in order, scanning each seam again from the last true cut until
/// it meets a cut of the next piece.
fn stitch(
    file: &dyn ReadAt,
    len: u64,
    p: &Params,
    parts: Vec<Vec<Chunk>>,
) -> io::Result<Vec<Chunk>> {
    let mut out: Vec<Chunk> = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    let mut pos = 0u64;
    let mut window = Vec::new();
    let mut cuts = Vec::new();
    for part in parts {
        // The piece's cuts from `pos` on; the first one a sequential scan also makes is
        // where the piece takes over.
        let ends: Vec<u64> = part.iter().map(|c| c.offset + u64::from(c.len)).collect();
        let mut synced = None;
        while synced.is_none() && ends.last().is_some_and(|&e| pos < e) {
            // Scan on from `pos` through the bytes after it.
            read_decided(file, len, pos, p, &mut window, &mut cuts)?;
            let mut start = 0usize;
            for &(end, kind) in &cuts {
                let abs = pos + end as u64;
                chunks_of(&window, pos, start, &[(end, kind)], &mut out);
                start = end;
                if let Ok(i) = ends.binary_search(&abs) {
                    synced = Some(i);
                    break;
                }
                if abs >= *ends.last().expect("not empty") {
                    break;
                }
            }
            pos += start as u64;
        }
        if let Some(i) = synced {
            out.extend_from_slice(&part[i + 1..]);
            pos = ends.last().copied().unwrap_or(pos);
        }
    }
    // The end of the file, after the last piece's last decided cut.
    while pos < len {
        let done = read_decided(file, len, pos, p, &mut window, &mut cuts)?;
        chunks_of(&window, pos, 0, &cuts, &mut out);
        pos += done as u64;
    }
    Ok(out)
}

/// Reads from `pos` into `window` and cuts it, growing the window until at least one cut
/// is decided (a long zero run needs its whole length). Returns the bytes the cuts cover.
fn read_decided(
    file: &dyn ReadAt,
    len: u64,
    pos: u64,
    p: &Params,
    window: &mut Vec<u8>,
    cuts: &mut Vec<(usize, Kind)>,
) -> io::Result<usize> {
    let mut n = (2 * p.lookahead() as u64).min(len - pos) as usize;
    loop {
        window.resize(n, 0);
        file.read_exact_at(window, pos)?;
        cuts.clear();
        let last = pos + n as u64 == len;
        let done = cut_all(window, 0, p, last, cuts);
        if done > 0 {
            return Ok(done);
        }
        if last {
            // Every byte to the end was offered with `last`: something was cut.
            return Err(io::Error::other("chunking made no progress"));
        }
        n = (n as u64 * 2).min(len - pos) as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn data_strategy() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..20_000),
                (0usize..100).prop_map(|n| vec![0u8; n]),
                (0usize..3).prop_map(|n| vec![0u8; 5000 * n]),
                (any::<u8>(), 0usize..3000).prop_map(|(b, n)| vec![b; n]),
            ],
            0..10,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(120))]
        #[test]
        fn parallel_signature_is_the_sequential_one(
            data in data_strategy(),
            avg in prop_oneof![Just(64usize), Just(100), Just(256), Just(1024)],
            io_chunk in prop_oneof![1usize..20_000, (1usize..8).prop_map(|k| k * 4096)],
            threads in 1usize..4,
            plan in 0usize..6,
            zero_max in prop_oneof![Just(crate::cdc::ZERO_MAX), 32usize..3000],
            kernel in proptest::sample::select(crate::cdc::Kernel::available()),
        ) {
            // Every way of reading: the residency's choice, the workers' own reads, read
            // ahead (1 or 3 requests in flight), read ahead with direct reads, and bytes
            // in memory (as a map of OLD) cut where they lie; every kernel against the
            // default's sequential scan.
            let p = Params { zero_max, kernel, ..Params::new(avg).unwrap() };
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), &data).unwrap();
            let (file, plan): (&dyn ReadAt, _) = match plan {
                0 => (f.as_file(), None),
                1 => (f.as_file(), Some(AheadPlan::HOT)),
                2 => (f.as_file(), Some(AheadPlan { ahead: true, direct: false, depth: 1 })),
                3 => (f.as_file(), Some(AheadPlan { ahead: true, direct: false, depth: 3 })),
                4 => (f.as_file(), Some(AheadPlan { ahead: true, direct: true, depth: 2 })),
                _ => (&data.as_slice(), None),
            };
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let (got, hash) = pool
                .install(|| signature_and_hash_with(file, data.len() as u64, &p, io_chunk, threads, plan))
                .unwrap();
            prop_assert_eq!(got, signature_of_slice(&data, &p.with_kernel(crate::cdc::Kernel::BEST)));
            let piece = io_chunk.max(4 * p.lookahead()) as u64;
            prop_assert_eq!(hash, crate::hash::slice_hash(&data, piece));
        }
    }

    /// A file of `len` zero bytes that is not stored anywhere, and that remembers the
    /// longest read it was asked for.
    struct Zeros {
        len: u64,
        longest: std::sync::atomic::AtomicUsize,
    }

    impl ReadAt for Zeros {
        fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
            if at + buf.len() as u64 > self.len {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.longest
                .fetch_max(buf.len(), std::sync::atomic::Ordering::Relaxed);
            buf.fill(0);
            Ok(())
        }
    }

    #[test]
    fn a_long_zero_run_is_read_in_bounded_windows() {
        // 96 MiB of zeros, and data around a seam-crossing run: no read, and so no buffer,
        // is longer than a piece or a zero chunk's limit, whatever the run's length (a run
        // was once one chunk, decided only at its end: a window as long as the run).
        let p = Params::new(1024).unwrap();
        let piece = 4 << 20;
        let f = Zeros {
            len: 96 << 20,
            longest: 0.into(),
        };
        let (sig, _) = signature_and_hash_with(&f, f.len, &p, piece, 2, None).unwrap();
        assert!(sig
            .iter()
            .all(|c| c.kind == Kind::Zero && c.len as usize == p.zero_max));
        assert_eq!(sig.len() as u64, f.len / p.zero_max as u64);
        let longest = f.longest.load(std::sync::atomic::Ordering::Relaxed);
        assert!(longest <= piece.max(4 * p.zero_max), "{longest}");
    }

    #[test]
    fn the_hash_comes_with_the_signature() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 253) as u8).collect();
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), &data).unwrap();
        let p = Params::new(64).unwrap();
        for piece in [1usize << 16, 100_000, 1 << 20] {
            let (sig, hash) =
                signature_and_hash(f.as_file(), data.len() as u64, &p, piece, 2, IoChoice::Auto)
                    .unwrap();
            assert_eq!(sig, signature_of_slice(&data, &p));
            assert_eq!(hash, crate::hash::slice_hash(&data, piece as u64));
        }
    }

    #[test]
    fn a_short_file_is_an_error() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), vec![1u8; 1000]).unwrap();
        let p = Params::new(64).unwrap();
        let e = signature(f.as_file(), 5000, &p, 1 << 16, 2).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(signature(f.as_file(), 0, &p, 1 << 16, 2)
            .unwrap()
            .is_empty());
    }
}
