//! Reproducible test data for swath's tests, benchmarks and demo.
//!
//! - [`text`]: random words in lines, the same bytes for the same seed and size on every
//!   machine and thread count (each 1 MiB chunk has its own generator, seeded from the seed
//!   and the chunk number).
//! - [`mutate`]: a copy of a file with K planted differing bytes, optionally truncated or
//!   extended, reporting where the differences are.
//! - [`edits`]: a revision of a file (insertions, deletions, moves, duplications, zero runs,
//!   rebuild noise) for patch tests and benchmarks.
//! - [`log`]: Apache combined-format access logs shaped like the Wide Finder 2 sample,
//!   of an exact size, generated in parallel chunks of whole lines.
//!
//! Every output is written to a temporary file and renamed into place when complete.
#![deny(missing_docs)]

use std::io::{self, Read, Write};
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use swath_engine::output::{BlockOptions, BlockWriter};
use swath_engine::{AtomicOutput, EngineError};

pub mod edits;
pub mod log;

/// The seeds' test file size: 640,000,000 bytes.
pub const DEFAULT_TEXT_SIZE: u64 = 640_000_000;

/// Bytes generated per independently seeded chunk.
const CHUNK: u64 = 1 << 20;
/// Distinct words in the vocabulary.
const VOCABULARY: usize = 4096;

fn rng_for(seed: u64, stream: u64) -> Xoshiro256PlusPlus {
    // Spread (seed, stream) over the generator's state with a splitmix-style mix.
    let mut x = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Xoshiro256PlusPlus::seed_from_u64(x ^ (x >> 31))
}

fn vocabulary(seed: u64) -> Vec<Vec<u8>> {
    let mut rng = rng_for(seed, u64::MAX);
    (0..VOCABULARY)
        .map(|_| {
            let len = 1 + rng.gen_range(0..10usize) + rng.gen_range(0..3usize);
            (0..len).map(|_| b'a' + rng.gen_range(0..26u8)).collect()
        })
        .collect()
}

/// Chunk `index` of the text for `seed`: `len` bytes of words separated by spaces in lines of
/// 1 to 16 words, ending with a newline.
pub fn text_chunk(words: &[Vec<u8>], seed: u64, index: u64, len: usize) -> Vec<u8> {
    let mut rng = rng_for(seed, index);
    let mut out = Vec::with_capacity(len + 32);
    while out.len() < len {
        let n_words = rng.gen_range(1..=16);
        for w in 0..n_words {
            if w > 0 {
                out.push(b' ');
            }
            // Squaring a uniform draw favours the first words: a skewed, text-like mix.
            let r: f64 = rng.gen();
            let i = ((r * r) * words.len() as f64) as usize;
            out.extend_from_slice(&words[i.min(words.len() - 1)]);
        }
        out.push(b'\n');
    }
    out.truncate(len);
    if let Some(last) = out.last_mut() {
        *last = b'\n';
    }
    out
}

/// Fails early, with a clear message, when `out`'s filesystem cannot hold `size` more bytes
/// (rather than planning, or allocating, for an impossible size). Devices, pipes and
/// `/dev/stdout` have no such limit.
pub(crate) fn check_room(out: &Path, size: u64) -> Result<(), EngineError> {
    if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) || out.starts_with("/dev") {
        return Ok(());
    }
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(c) = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(dir.as_os_str()))
    else {
        return Ok(());
    };
    // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
    let avail = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return Ok(());
        }
        (st.f_bavail as u64).saturating_mul(st.f_frsize as u64)
    };
    if size > avail {
        return Err(EngineError::io(
            out,
            io::Error::other(format!(
                "No space left on device ({size} bytes asked for, {avail} available)"
            )),
        ));
    }
    Ok(())
}

/// Writes `size` bytes of random text to `out`.
pub fn text(out: &Path, size: u64, seed: u64) -> Result<(), EngineError> {
    text_counted(out, size, seed, &std::sync::atomic::AtomicU64::new(0))
}

/// [`text`], adding the bytes written to `done` as chunks are written (for a progress
/// bar).
pub fn text_counted(
    out: &Path,
    size: u64,
    seed: u64,
    done: &std::sync::atomic::AtomicU64,
) -> Result<(), EngineError> {
    check_room(out, size)?;
    let words = vocabulary(seed);
    let chunks: Vec<(u64, u64, usize)> = (0..size.div_ceil(CHUNK))
        .map(|i| (i, i * CHUNK, (size - i * CHUNK).min(CHUNK) as usize))
        .collect();
    write_chunks(out, size, &chunks, done, |i, len| {
        text_chunk(&words, seed, i, len)
    })
}

/// Writes a file of `size` bytes made of `chunks` (chunk number, offset, length, in the
/// file's order), each produced by `make(number, length)` on one of the machine's cores and
/// written at its offset; the file appears at `out` only once complete (a temporary file
/// renamed). A device or FIFO gets the chunks in order, as one stream.
pub(crate) fn write_chunks(
    out: &Path,
    size: u64,
    chunks: &[(u64, u64, usize)],
    done: &std::sync::atomic::AtomicU64,
    make: impl Fn(u64, usize) -> Vec<u8> + Sync,
) -> Result<(), EngineError> {
    let output = AtomicOutput::create(out)?;
    let writer = BlockWriter::for_output(&output, size, BlockOptions::default())?;
    let threads = swath_engine::sysinfo::cores().clamp(1, chunks.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    writer.run(threads, |_, lane| loop {
        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(&(index, start, len)) = chunks.get(k) else {
            return Ok(());
        };
        lane.write_at(start, &make(index, len))?;
        done.fetch_add(len as u64, std::sync::atomic::Ordering::Relaxed);
    })?;
    writer.finish()?;
    output.commit(false)
}

/// A change in length applied by [`mutate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resize {
    /// Keep only the first N bytes.
    Truncate(u64),
    /// Append N bytes of random text.
    Extend(u64),
}

/// What [`mutate`] plants.
#[derive(Debug, Clone, Default)]
pub struct Mutation {
    /// Total differing bytes to plant (the `at` offsets count toward it).
    pub diffs: u64,
    /// Offsets that must differ.
    pub at: Vec<u64>,
    /// Seed for the random offsets and values.
    pub seed: u64,
    /// An optional change of length.
    pub resize: Option<Resize>,
}

/// Copies `input` to `out` with the planted differences; returns their offsets, sorted
/// (offsets beyond a truncation are dropped).
pub fn mutate(input: &Path, out: &Path, m: &Mutation) -> Result<Vec<u64>, EngineError> {
    let in_name = input.to_string_lossy().into_owned();
    let out_name = out.to_string_lossy().into_owned();
    let mut src = std::fs::File::open(input).map_err(|e| EngineError::io(&in_name, e))?;
    let meta = src.metadata().map_err(|e| EngineError::io(&in_name, e))?;
    if !meta.is_file() {
        return Err(EngineError::io(
            &in_name,
            io::Error::other("not a regular file (mutate reads its size first)"),
        ));
    }
    if let Ok(o) = std::fs::metadata(out) {
        use std::os::unix::fs::MetadataExt;
        if o.dev() == meta.dev() && o.ino() == meta.ino() {
            return Err(EngineError::io(
                &out_name,
                io::Error::other(format!("is the input '{in_name}': not overwriting it")),
            ));
        }
    }
    let len = meta.len();
    let total = match m.resize {
        Some(Resize::Truncate(n)) => n.min(len),
        Some(Resize::Extend(n)) => len.saturating_add(n),
        None => len,
    };
    check_room(out, total)?;
    let mut rng = rng_for(m.seed, 1 << 40);
    let mut offsets: Vec<u64> = m.at.iter().copied().filter(|&o| o < len).collect();
    offsets.sort_unstable();
    offsets.dedup();
    let wanted = m.diffs.min(len).max(offsets.len() as u64);
    while (offsets.len() as u64) < wanted {
        let missing = wanted as usize - offsets.len();
        offsets.extend((0..missing).map(|_| rng.gen_range(0..len)));
        offsets.sort_unstable();
        offsets.dedup();
    }
    let keep = match m.resize {
        Some(Resize::Truncate(n)) => n.min(len),
        _ => len,
    };
    offsets.retain(|&o| o < keep);
    let output = AtomicOutput::create(out)?;
    let mut dst = swath_engine::PageWriter::with_capacity(1 << 20, output.file());
    let mut buf = swath_engine::buf::PageBuf::zeroed(4 << 20);
    let (mut pos, mut next) = (0u64, 0usize);
    while pos < keep {
        let want = (keep - pos).min(buf.len() as u64) as usize;
        src.read_exact(&mut buf[..want])
            .map_err(|e| EngineError::io(&in_name, e))?;
        while next < offsets.len() && offsets[next] < pos + want as u64 {
            let i = (offsets[next] - pos) as usize;
            buf[i] ^= rng.gen_range(1..=255u8);
            next += 1;
        }
        dst.write_all(&buf[..want])
            .map_err(|e| EngineError::io(&out_name, e))?;
        pos += want as u64;
    }
    if let Some(Resize::Extend(n)) = m.resize {
        let words = vocabulary(m.seed);
        let tail = text_chunk(&words, m.seed, 1 << 41, n as usize);
        dst.write_all(&tail)
            .map_err(|e| EngineError::io(&out_name, e))?;
    }
    dst.flush().map_err(|e| EngineError::io(&out_name, e))?;
    drop(dst);
    output.commit(false)?;
    Ok(offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_reproducible_and_exact_size() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        text(&a, 3 * CHUNK + 123, 7).unwrap();
        text(&b, 3 * CHUNK + 123, 7).unwrap();
        text(&c, 3 * CHUNK + 123, 8).unwrap();
        let (da, db, dc) = (
            std::fs::read(&a).unwrap(),
            std::fs::read(&b).unwrap(),
            std::fs::read(&c).unwrap(),
        );
        assert_eq!(da.len() as u64, 3 * CHUNK + 123);
        assert_eq!(da, db);
        assert_ne!(da, dc);
        assert!(da
            .iter()
            .all(|&x| x == b' ' || x == b'\n' || x.is_ascii_lowercase()));
        assert_eq!(*da.last().unwrap(), b'\n');
        text(&a, 0, 1).unwrap();
        assert_eq!(std::fs::metadata(&a).unwrap().len(), 0);
    }

    #[test]
    fn mutate_plants_exactly_the_reported_differences() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        text(&a, 10_000_000, 1).unwrap();
        let m = Mutation {
            diffs: 1000,
            at: vec![0, 9_999_999],
            seed: 3,
            resize: None,
        };
        let planted = mutate(&a, &b, &m).unwrap();
        assert_eq!(planted.len(), 1000);
        let (da, db) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let differing: Vec<u64> = (0..da.len())
            .filter(|&i| da[i] != db[i])
            .map(|i| i as u64)
            .collect();
        assert_eq!(differing, planted);
        assert_eq!(planted[0], 0);
        assert_eq!(*planted.last().unwrap(), 9_999_999);
    }

    #[test]
    fn mutate_truncates_and_extends() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        text(&a, 5000, 1).unwrap();
        let m = Mutation {
            resize: Some(Resize::Truncate(100)),
            ..Default::default()
        };
        assert!(mutate(&a, &b, &m).unwrap().is_empty());
        assert_eq!(
            std::fs::read(&b).unwrap(),
            std::fs::read(&a).unwrap()[..100]
        );
        let m = Mutation {
            resize: Some(Resize::Extend(77)),
            ..Default::default()
        };
        mutate(&a, &b, &m).unwrap();
        let (da, db) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        assert_eq!(db.len(), 5077);
        assert_eq!(db[..5000], da[..]);
    }

    #[test]
    fn missing_input_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = mutate(
            &dir.path().join("nope"),
            &dir.path().join("out"),
            &Mutation::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("nope: No such file"), "{err}");
        assert!(!dir.path().join("out").exists());
    }
}
