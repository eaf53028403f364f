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

use crate::cdc::{cut_all, Kind, Params};
use crate::source::ReadAt;

/// One chunk of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    /// Offset of its first byte.
    pub offset: u64,
    /// Length (at most 4 x 64 MiB: a zero run may be longer and is then cut in pieces of
    /// `u32::MAX` bytes).
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
/// (at least four times the longest chunk) by `threads` workers.
pub fn signature(
    file: &dyn ReadAt,
    len: u64,
    p: &Params,
    io_chunk: usize,
    threads: usize,
) -> io::Result<Vec<Chunk>> {
    Ok(signature_and_hash(file, len, p, io_chunk, threads)?.0)
}

/// [`signature`], and the file's hash ([`crate::hash`]) with pieces of the I/O chunk's
/// length, computed from the same reads.
pub fn signature_and_hash(
    file: &dyn ReadAt,
    len: u64,
    p: &Params,
    io_chunk: usize,
    threads: usize,
) -> io::Result<(Vec<Chunk>, u128)> {
    let piece = io_chunk.max(4 * p.lookahead()) as u64;
    let pieces = len.div_ceil(piece) as usize;
    let scan = |k: usize, buf: &mut Vec<u8>| -> io::Result<(Vec<Chunk>, u128)> {
        let at = k as u64 * piece;
        let n = (len - at).min(piece) as usize;
        buf.resize(n, 0);
        file.read_exact_at(buf, at)?;
        let mut cuts = Vec::new();
        cut_all(buf, 0, p, at + n as u64 == len, &mut cuts);
        let mut out = Vec::with_capacity(cuts.len());
        chunks_of(buf, at, 0, &cuts, &mut out);
        Ok((out, xxh3_128(buf)))
    };
    let parts: Vec<(Vec<Chunk>, u128)> = if threads <= 1 || pieces <= 1 {
        let mut buf = Vec::new();
        (0..pieces)
            .map(|k| scan(k, &mut buf))
            .collect::<io::Result<_>>()?
    } else {
        (0..pieces)
            .into_par_iter()
            .map_init(Vec::new, |buf, k| scan(k, buf))
            .collect::<io::Result<_>>()?
    };
    let mut sums = Vec::with_capacity(parts.len() * 16);
    let mut lists = Vec::with_capacity(parts.len());
    for (list, sum) in parts {
        sums.extend_from_slice(&sum.to_le_bytes());
        lists.push(list);
    }
    Ok((stitch(file, len, p, lists)?, xxh3_128(&sums)))
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
            avg in prop_oneof![Just(64usize), Just(100), Just(256)],
            io_chunk in 1usize..20_000,
            threads in 1usize..4,
        ) {
            let p = Params::new(avg).unwrap();
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), &data).unwrap();
            let got = signature(f.as_file(), data.len() as u64, &p, io_chunk, threads).unwrap();
            prop_assert_eq!(got, signature_of_slice(&data, &p));
        }
    }

    #[test]
    fn the_hash_comes_with_the_signature() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 253) as u8).collect();
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), &data).unwrap();
        let p = Params::new(64).unwrap();
        for piece in [1usize << 16, 100_000, 1 << 20] {
            let (sig, hash) =
                signature_and_hash(f.as_file(), data.len() as u64, &p, piece, 2).unwrap();
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
