//! One section of a swath patch: the ops that make one slice of NEW, with their literal and
//! difference bytes, as six streams (docs/patch-format.md, "Sections").

use std::io;

use crate::format::{
    decode_diffs, decode_ops, encode_diffs, encode_ops, get_stream, get_varint, max_varints_len,
    put_stream, section_sum, Entry, Header, Invalid, OpStreams, OP_DELTA_KIND,
};
use crate::oldcache::OldCache;
use crate::ops::Op;
use crate::source::ReadAt;

/// Encodes the section made by `ops` from `new` (the section's bytes of NEW, which start
/// at `new_offset`), reading the OLD bytes of approximate matches from `old`.
pub fn encode_section(
    ops: &[Op],
    new: &[u8],
    new_offset: u64,
    old: &dyn ReadAt,
    zstd_level: i32,
) -> io::Result<Vec<u8>> {
    let len = ops
        .iter()
        .filter_map(|o| match *o {
            Op::Delta { from, len } => Some(from + len),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut cache = OldCache::new(old, len, 16);
    encode_section_cached(ops, new, new_offset, &mut cache, Levels::all(zstd_level))
}

/// The zstd levels of a section's streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    /// The literal bytes (the largest stream of a rebuilt program's patch, and most of its
    /// compression time).
    pub literals: i32,
    /// The non-zero difference bytes (next in size; they compress little at any level).
    pub differences: i32,
    /// Every other stream.
    pub others: i32,
}

impl Levels {
    /// One level for every stream.
    pub fn all(level: i32) -> Levels {
        Levels {
            literals: level,
            differences: level,
            others: level,
        }
    }
}

/// [`encode_section`] reading OLD's bytes under the deltas through `old`, the cache the
/// matcher already filled.
pub fn encode_section_cached(
    ops: &[Op],
    new: &[u8],
    new_offset: u64,
    old: &mut OldCache<'_>,
    levels: Levels,
) -> io::Result<Vec<u8>> {
    // Sized once: growing by doubling would fault in twice the pages.
    let sum = |f: fn(&Op) -> bool| ops.iter().filter(|o| f(o)).map(|o| o.len() as usize).sum();
    let mut literals = Vec::with_capacity(sum(|o| matches!(o, Op::Literal { .. })));
    let mut deltas = Vec::with_capacity(sum(|o| matches!(o, Op::Delta { .. })));
    let mut at = 0usize;
    for op in ops {
        let n = op.len() as usize;
        let here = &new[at..at + n];
        match *op {
            Op::Literal { .. } => literals.extend_from_slice(here),
            Op::Delta { from, .. } => {
                let mut done = 0usize;
                while done < n {
                    let k = (n - done).min(crate::oldcache::BLOCK);
                    let o = old.get(from + done as u64, k)?.ok_or_else(|| {
                        io::Error::new(io::ErrorKind::UnexpectedEof, "a delta reads past OLD's end")
                    })?;
                    deltas.extend(
                        here[done..done + k]
                            .iter()
                            .zip(o)
                            .map(|(&b, &a)| b.wrapping_sub(a)),
                    );
                    done += k;
                }
            }
            Op::Copy { .. } | Op::Zero { .. } => {}
        }
        at += n;
    }
    debug_assert_eq!(at, new.len(), "ops make the section");
    let o = encode_ops(ops, new_offset);
    let (runs, diff_bytes) = encode_diffs(&deltas);
    let mut out = Vec::with_capacity(literals.len() / 2 + diff_bytes.len() + 64);
    for stream in [&o.kinds, &o.lens, &o.froms, &literals, &runs, &diff_bytes] {
        let level = if std::ptr::eq(stream, &literals) {
            levels.literals
        } else if std::ptr::eq(stream, &diff_bytes) {
            levels.differences
        } else {
            levels.others
        };
        put_stream(&mut out, stream, level)?;
    }
    Ok(out)
}

/// Why a section could not be applied.
#[derive(Debug)]
pub enum SectionError {
    /// The section's bytes are damaged.
    Invalid(Invalid),
    /// Reading OLD failed.
    Old(io::Error),
}

impl From<Invalid> for SectionError {
    fn from(e: Invalid) -> Self {
        SectionError::Invalid(e)
    }
}

/// A decoded section: its ops, its literal bytes and its difference bytes.
pub struct Decoded {
    /// The ops, making the section's bytes of NEW in order.
    pub ops: Vec<Op>,
    /// The literal bytes, in the order of the `Literal` ops.
    pub literals: Vec<u8>,
    /// The difference bytes, in the order of the `Delta` ops.
    pub deltas: Vec<u8>,
}

/// Checks section `index` (`bytes`, described by `e`) and decodes its ops and streams.
pub fn decode_section(
    header: &Header,
    index: u64,
    e: &Entry,
    bytes: &[u8],
) -> Result<Decoded, Invalid> {
    if section_sum(header.chain(), index, bytes) != e.sum {
        return Err(Invalid(format!(
            "damaged: section {index} (bytes {}..{} of NEW) fails its checksum",
            e.new_offset,
            e.new_offset + e.new_len
        )));
    }
    let mut at = 0;
    let varints = max_varints_len(e.new_len);
    let streams = OpStreams {
        kinds: get_stream(bytes, &mut at, e.new_len)?,
        lens: get_stream(bytes, &mut at, varints)?,
        froms: get_stream(bytes, &mut at, varints)?,
    };
    let literals = get_stream(bytes, &mut at, e.new_len)?;
    let runs = get_stream(bytes, &mut at, varints)?;
    let diff_bytes = get_stream(bytes, &mut at, e.new_len)?;
    if at != bytes.len() {
        return Err(Invalid(format!(
            "damaged: section {index} has trailing bytes"
        )));
    }
    // The difference bytes are as many as the deltas make: known once the ops are.
    let delta_len: u64 = {
        let mut n = 0u64;
        let mut at = 0usize;
        for &k in &streams.kinds {
            let len = get_varint(&streams.lens, &mut at)?;
            if k == OP_DELTA_KIND {
                n = n.saturating_add(len);
            }
        }
        n
    };
    if delta_len > e.new_len {
        return Err(Invalid(
            "damaged: an instruction makes more than its section".into(),
        ));
    }
    let ops = decode_ops(
        &streams,
        e.new_offset,
        e.new_len,
        header.old_len,
        literals.len() as u64,
        delta_len,
    )?;
    let deltas = decode_diffs(&runs, &diff_bytes, delta_len)?;
    Ok(Decoded {
        ops,
        literals,
        deltas,
    })
}

/// Rebuilds section `index` of NEW into `out` (resized to its length), reading OLD
/// positionally.
pub fn apply_section(
    header: &Header,
    index: u64,
    e: &Entry,
    bytes: &[u8],
    old: &dyn ReadAt,
    out: &mut Vec<u8>,
) -> Result<(), SectionError> {
    // Every byte is written by an op (they cover the section exactly): a buffer reused
    // from the last section is not cleared first.
    out.resize(e.new_len as usize, 0);
    apply_section_into(header, index, e, bytes, old, out)
}

/// [`apply_section`] into `out`, exactly the section's length (for example its range of a
/// mapped output, so that OLD's bytes are read straight to where NEW has them).
pub fn apply_section_into(
    header: &Header,
    index: u64,
    e: &Entry,
    bytes: &[u8],
    old: &dyn ReadAt,
    out: &mut [u8],
) -> Result<(), SectionError> {
    assert_eq!(out.len() as u64, e.new_len, "the section's length");
    let Decoded {
        ops,
        literals,
        deltas,
    } = decode_section(header, index, e, bytes)?;
    let (mut at, mut lit, mut del) = (0usize, 0usize, 0usize);
    for op in ops {
        let n = op.len() as usize;
        let dst = &mut out[at..at + n];
        match op {
            Op::Copy { from, .. } => old.read_exact_at(dst, from).map_err(SectionError::Old)?,
            Op::Zero { .. } => dst.fill(0),
            Op::Literal { .. } => {
                dst.copy_from_slice(&literals[lit..lit + n]);
                lit += n;
            }
            Op::Delta { from, .. } => {
                old.read_exact_at(dst, from).map_err(SectionError::Old)?;
                for (d, &x) in dst.iter_mut().zip(&deltas[del..del + n]) {
                    *d = d.wrapping_add(x);
                }
                del += n;
            }
        }
        at += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{Level, HEADER_LEN};
    use crate::ops::apply_naive;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sections_rebuild_what_the_naive_application_does(
            old in proptest::collection::vec(0u8..4, 1..3000),
            raw in proptest::collection::vec((0u8..4, 1u64..300, any::<u64>()), 0..30),
            level in 1i32..4,
        ) {
            let old_len = old.len() as u64;
            let ops: Vec<Op> = raw.iter().map(|&(k, len, from)| {
                let len = len.min(old_len);
                let from = from % (old_len - len + 1);
                match k { 0 => Op::Copy { from, len }, 1 => Op::Zero { len }, 2 => Op::Literal { len }, _ => Op::Delta { from, len } }
            }).collect();
            let new_len: u64 = ops.iter().map(Op::len).sum();
            // NEW: what the ops make, with other bytes where they store literals or deltas.
            let new: Vec<u8> = (0..new_len).map(|i| (i * 13 % 7) as u8).collect();
            let mut made = apply_naive(&old, &new, &ops);
            // Copies and zeros come from OLD: NEW is what the ops make of it.
            made.truncate(new.len());
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), &old).unwrap();
            let bytes = encode_section(&ops, &made, 0, f.as_file(), level).unwrap();
            let header = Header { old_len, new_len, old_hash: 0, new_hash: 0, hash_piece: 1 << 20, level: Level::Fast, chunk_avg: 64, section_len: new_len.max(1) };
            let e = Entry { new_offset: 0, new_len, offset: HEADER_LEN as u64, len: bytes.len() as u64, sum: section_sum(header.chain(), 0, &bytes) };
            let mut out = Vec::new();
            apply_section(&header, 0, &e, &bytes, f.as_file(), &mut out).unwrap();
            prop_assert_eq!(&out, &made);
            // Any flipped byte is refused (the section checksum), never a panic.
            for i in (0..bytes.len()).step_by(7) {
                let mut bad = bytes.clone();
                bad[i] ^= 0x41;
                prop_assert!(apply_section(&header, 0, &e, &bad, f.as_file(), &mut out).is_err());
            }
        }
    }
}
