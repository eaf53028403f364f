//! Revisions: a NEW made from OLD by the edits a new release of a file shows, for patch
//! tests and benchmarks (`swath gen mutate --insertions ... --noise ...`).
//!
//! NEW is described by an edit script: a list of [`Piece`]s (a range of OLD, inserted random
//! bytes, or zeros) built by applying, in order and at seeded random places, insertions
//! (new bytes), deletions, moves (a range cut and pasted elsewhere), duplications (a range
//! copied elsewhere) and zero runs (a range overwritten with zeros). Then "rebuild noise" as
//! a recompiled program shows: at 4-byte aligned offsets of NEW picked by the seed, about
//! one every `noise` bytes, the little-endian `u32` there is increased by a constant (as
//! relocated addresses move). NEW is written a 4 MiB buffer at a time, OLD read
//! positionally, so OLD may be larger than memory; [`revise_naive`] is the oracle.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use swath_engine::{AtomicOutput, EngineError};

/// What a revision does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Revision {
    /// Ranges of new random bytes inserted.
    pub insertions: u32,
    /// Ranges removed.
    pub deletions: u32,
    /// Ranges cut and pasted elsewhere.
    pub moves: u32,
    /// Ranges copied elsewhere.
    pub duplicates: u32,
    /// Ranges overwritten with zeros.
    pub zero_runs: u32,
    /// The longest range an edit touches (each is 1 to this many bytes).
    pub max_len: u64,
    /// One changed 4-byte value every this many bytes on average (0: none).
    pub noise: u64,
    /// The seed of every choice.
    pub seed: u64,
}

/// A run of NEW.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// OLD's bytes `[from, from + len)`.
    Old {
        /// Offset in OLD.
        from: u64,
        /// Bytes.
        len: u64,
    },
    /// `len` random bytes, drawn from the seed and `id`.
    Insert {
        /// Bytes.
        len: u64,
        /// Which insertion (its bytes' seed).
        id: u64,
    },
    /// `len` zero bytes.
    Zeros {
        /// Bytes.
        len: u64,
    },
}

impl Piece {
    fn len(&self) -> u64 {
        match *self {
            Piece::Old { len, .. } | Piece::Insert { len, .. } | Piece::Zeros { len } => len,
        }
    }

    /// The piece's part `[a, b)` (relative offsets).
    fn slice(&self, a: u64, b: u64) -> Piece {
        match *self {
            Piece::Old { from, .. } => Piece::Old {
                from: from + a,
                len: b - a,
            },
            Piece::Insert { id, .. } => Piece::Insert {
                len: b - a,
                // The bytes of an insertion depend on its id and offset: a part keeps its
                // bytes by keeping the id and the offset folded into it.
                id: id.wrapping_add(a << 32),
            },
            Piece::Zeros { .. } => Piece::Zeros { len: b - a },
        }
    }
}

/// Splits the pieces so that one starts at `pos` (the total length at most); returns its
/// index.
fn split_at(pieces: &mut Vec<Piece>, pos: u64) -> usize {
    let mut at = 0u64;
    for i in 0..pieces.len() {
        let n = pieces[i].len();
        if pos == at {
            return i;
        }
        if pos < at + n {
            let p = pieces[i];
            pieces[i] = p.slice(0, pos - at);
            pieces.insert(i + 1, p.slice(pos - at, n));
            return i + 1;
        }
        at += n;
    }
    pieces.len()
}

/// Takes the pieces of `[a, b)` out.
fn cut(pieces: &mut Vec<Piece>, a: u64, b: u64) -> Vec<Piece> {
    let i = split_at(pieces, a);
    let j = split_at(pieces, b);
    pieces.drain(i..j).collect()
}

fn total(pieces: &[Piece]) -> u64 {
    pieces.iter().map(Piece::len).sum()
}

/// The seeded generator of a revision's choices, and its edits' kinds (0 insertion, 1
/// deletion, 2 move, 3 duplication, 4 zero run) interleaved in a seeded order, as a real
/// revision's edits are.
fn edit_order(r: &Revision) -> (Xoshiro256PlusPlus, Vec<u8>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(r.seed ^ 0x5245_5649_5349_4f4e);
    let kinds = [
        (0u8, r.insertions),
        (1, r.deletions),
        (2, r.moves),
        (3, r.duplicates),
        (4, r.zero_runs),
    ];
    let mut todo: Vec<u8> = kinds
        .iter()
        .flat_map(|&(k, n)| std::iter::repeat_n(k, n as usize))
        .collect();
    for i in (1..todo.len()).rev() {
        let j = rng.gen_range(0..=i);
        todo.swap(i, j);
    }
    (rng, todo)
}

/// The edit script of a revision of an OLD of `old_len` bytes.
pub fn script(old_len: u64, r: &Revision) -> Vec<Piece> {
    let (mut rng, todo) = edit_order(r);
    let mut pieces = if old_len > 0 {
        vec![Piece::Old {
            from: 0,
            len: old_len,
        }]
    } else {
        Vec::new()
    };
    let max_len = r.max_len.max(1);
    for (id, kind) in todo.into_iter().enumerate() {
        let len_now = total(&pieces);
        let len = rng.gen_range(1..=max_len);
        let pos = rng.gen_range(0..=len_now);
        let end = (pos + len).min(len_now);
        match kind {
            0 => {
                let i = split_at(&mut pieces, pos);
                pieces.insert(i, Piece::Insert { len, id: id as u64 });
            }
            1 => {
                cut(&mut pieces, pos, end);
            }
            2 | 3 => {
                let part = cut(&mut pieces, pos, end);
                if kind == 3 {
                    let i = split_at(&mut pieces, pos);
                    pieces.splice(i..i, part.iter().copied());
                }
                let to = rng.gen_range(0..=total(&pieces));
                let i = split_at(&mut pieces, to);
                pieces.splice(i..i, part);
            }
            _ => {
                cut(&mut pieces, pos, end);
                let i = split_at(&mut pieces, pos);
                pieces.insert(i, Piece::Zeros { len: end - pos });
            }
        }
    }
    pieces.retain(|p| p.len() > 0);
    pieces
}

/// The byte at offset `k` of insertion `id` of a revision with `seed`.
fn inserted_byte(seed: u64, id: u64, k: u64) -> u8 {
    let mut z = seed
        ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (k >> 3).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 31)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 29;
    (z >> (8 * (k & 7))) as u8
}

/// The pieces' bytes from `at` into `buf`, reading OLD with `old`.
fn fill(
    pieces: &[Piece],
    seed: u64,
    mut at: u64,
    buf: &mut [u8],
    old: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<()>,
) -> io::Result<()> {
    let mut start = 0u64;
    let mut done = 0usize;
    for p in pieces {
        let n = p.len();
        if at >= start + n {
            start += n;
            continue;
        }
        let off = at - start;
        let take = ((n - off) as usize).min(buf.len() - done);
        let dst = &mut buf[done..done + take];
        match *p {
            Piece::Old { from, .. } => old(from + off, dst)?,
            Piece::Insert { id, .. } => {
                // A part of an insertion carries its offset in the id's high bits.
                let (base_id, base_off) = (id & 0xffff_ffff, id >> 32);
                for (k, b) in dst.iter_mut().enumerate() {
                    *b = inserted_byte(seed, base_id, base_off + off + k as u64);
                }
            }
            Piece::Zeros { .. } => dst.fill(0),
        }
        done += take;
        at += take as u64;
        start += n;
        if done == buf.len() {
            break;
        }
    }
    Ok(())
}

/// Adds the rebuild noise to `buf`, which holds NEW from offset `at` (a multiple of 4).
fn noise(buf: &mut [u8], at: u64, r: &Revision) {
    if r.noise < 4 {
        return;
    }
    let shift = (r.seed % 0x1000) as u32 * 16 + 16;
    let every = r.noise / 4;
    for (k, word) in buf.chunks_exact_mut(4).enumerate() {
        let q = at / 4 + k as u64;
        let mut z = q.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ r.seed;
        z = (z ^ (z >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        if (z >> 11).is_multiple_of(every) {
            let v = u32::from_le_bytes(word.try_into().expect("4 bytes")).wrapping_add(shift);
            word.copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// NEW, built by editing a vector directly with the same seeded choices as [`script`]: the
/// oracle of [`revise`] (it shares only the choice of places and the noise).
pub fn revise_naive(old: &[u8], r: &Revision) -> Vec<u8> {
    let (mut rng, todo) = edit_order(r);
    let mut new = old.to_vec();
    let max_len = r.max_len.max(1);
    for (id, kind) in todo.into_iter().enumerate() {
        let len_now = new.len() as u64;
        let len = rng.gen_range(1..=max_len);
        let pos = rng.gen_range(0..=len_now) as usize;
        let end = (pos + len as usize).min(new.len());
        match kind {
            0 => {
                let bytes: Vec<u8> = (0..len)
                    .map(|k| inserted_byte(r.seed, id as u64, k))
                    .collect();
                new.splice(pos..pos, bytes);
            }
            1 => {
                new.drain(pos..end);
            }
            2 | 3 => {
                let part: Vec<u8> = new.drain(pos..end).collect();
                if kind == 3 {
                    new.splice(pos..pos, part.iter().copied());
                }
                let to = rng.gen_range(0..=new.len() as u64) as usize;
                new.splice(to..to, part);
            }
            _ => new[pos..end].fill(0),
        }
    }
    noise(&mut new, 0, r);
    new
}

/// Writes the revision of `input` at `out` (atomically), a buffer at a time; returns the
/// edit script.
pub fn revise(input: &Path, out: &Path, r: &Revision) -> Result<Vec<Piece>, EngineError> {
    revise_with_buffer(input, out, r, 4 << 20)
}

fn revise_with_buffer(
    input: &Path,
    out: &Path,
    r: &Revision,
    buffer: usize,
) -> Result<Vec<Piece>, EngineError> {
    let in_name = input.to_string_lossy().into_owned();
    let out_name = out.to_string_lossy().into_owned();
    let old = File::open(input).map_err(|e| EngineError::io(&in_name, e))?;
    let meta = old.metadata().map_err(|e| EngineError::io(&in_name, e))?;
    if !meta.is_file() {
        return Err(EngineError::io(
            &in_name,
            io::Error::other("not a regular file (a revision reads its size first)"),
        ));
    }
    let pieces = script(meta.len(), r);
    let len = total(&pieces);
    let output = AtomicOutput::create(out)?;
    // A multiple of 4, so no noisy word straddles two buffers.
    let mut buf = swath_engine::buf::PageBuf::zeroed((buffer.max(4) / 4) * 4);
    let mut read = |from: u64, dst: &mut [u8]| old.read_exact_at(dst, from);
    let mut at = 0u64;
    while at < len {
        let n = (len - at).min(buf.len() as u64) as usize;
        fill(&pieces, r.seed, at, &mut buf[..n], &mut read)
            .map_err(|e| EngineError::io(&in_name, e))?;
        noise(&mut buf[..n], at, r);
        output
            .file()
            .write_all_at(&buf[..n], at)
            .map_err(|e| EngineError::io(&out_name, e))?;
        at += n as u64;
    }
    output.commit(false)?;
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn the_written_revision_is_the_oracle(
            old_len in prop_oneof![Just(0usize), Just(1), 2usize..20_000],
            counts in proptest::collection::vec(0u32..4, 5),
            max_len in 1u64..3000,
            noise_every in prop_oneof![Just(0u64), 4u64..500],
            seed in any::<u64>(),
            buffer in 4usize..5000,
        ) {
            let old: Vec<u8> = (0..old_len).map(|i| (i * 31 % 251) as u8).collect();
            let r = Revision {
                insertions: counts[0], deletions: counts[1], moves: counts[2],
                duplicates: counts[3], zero_runs: counts[4], max_len, noise: noise_every, seed,
            };
            let dir = tempfile::tempdir().unwrap();
            let (a, b) = (dir.path().join("a"), dir.path().join("b"));
            std::fs::write(&a, &old).unwrap();
            let pieces = revise_with_buffer(&a, &b, &r, buffer).unwrap();
            let want = revise_naive(&old, &r);
            prop_assert_eq!(std::fs::read(&b).unwrap(), want.clone());
            prop_assert_eq!(total(&pieces), want.len() as u64);
            // Reproducible: the same seed, the same bytes.
            prop_assert_eq!(revise_naive(&old, &r), want);
        }
    }

    #[test]
    fn each_edit_does_what_it_says() {
        let old: Vec<u8> = (0..10_000u32).map(|i| (i % 200 + 1) as u8).collect();
        let base = Revision {
            max_len: 500,
            seed: 3,
            ..Revision::default()
        };
        let len = |r: Revision| revise_naive(&old, &r).len() as i64 - old.len() as i64;
        assert!(
            len(Revision {
                insertions: 1,
                ..base
            }) > 0
        );
        assert!(
            len(Revision {
                deletions: 1,
                ..base
            }) < 0
        );
        assert_eq!(len(Revision { moves: 3, ..base }), 0);
        assert!(
            len(Revision {
                duplicates: 1,
                ..base
            }) > 0
        );
        let zeroed = revise_naive(
            &old,
            &Revision {
                zero_runs: 1,
                ..base
            },
        );
        assert_eq!(zeroed.len(), old.len());
        assert!(
            zeroed.contains(&0),
            "OLD has no zero byte; a zero run must show"
        );
        // Noise changes about one word in `noise` bytes and keeps the length.
        let noisy = revise_naive(&old, &Revision { noise: 400, ..base });
        let changed = noisy
            .chunks(4)
            .zip(old.chunks(4))
            .filter(|(a, b)| a != b)
            .count();
        assert!((10..=60).contains(&changed), "{changed}");
        // Another seed, another revision.
        assert_ne!(
            revise_naive(
                &old,
                &Revision {
                    insertions: 2,
                    ..base
                }
            ),
            revise_naive(
                &old,
                &Revision {
                    insertions: 2,
                    seed: 4,
                    ..base
                }
            )
        );
    }
}
