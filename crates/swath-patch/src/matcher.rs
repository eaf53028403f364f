//! Matching one section of NEW against OLD: the exact (chunk) matches of `fast`.
//!
//! NEW's chunks are looked up in OLD's [`ChunkTable`] in order. A hit is verified byte for
//! byte against OLD read positionally, then extended backwards into the unmatched bytes
//! before it and forwards as far as OLD and NEW agree (in 64 KiB reads, so an unchanged
//! region is swallowed at the speed of a memory compare, without a lookup per chunk). A
//! match that continues where the previous one ended in OLD is merged into it. What no
//! match covers is literal; zero chunks are runs of zeros.
//!
//! OLD may be far larger than memory: what the page cache does not hold is read in direct
//! windows of a few MiB ([`ColdReader`]), so that a match followed along OLD costs one large
//! read per window, not one small read that waits for the device per chunk.

use std::io;

use crate::io::ColdReader;
use crate::ops::Op;
use crate::source::ReadAt;
use crate::table::ChunkTable;

/// One chunk of a section of NEW, relative to the section's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewChunk {
    /// Offset in the section.
    pub start: usize,
    /// Length.
    pub len: usize,
    /// A run of zeros (never looked up).
    pub zero: bool,
    /// XXH3-128 of its bytes (unused for a zero run).
    pub hash: u128,
}

/// Bytes of OLD read at a time while extending: the first read is short (most
/// extensions stop within a few hundred bytes, at the next changed byte), each next one
/// four times longer, up to 64 KiB (an unchanged region is swallowed in large reads).
const STEP: usize = 64 << 10;
const FIRST_STEP: usize = 1 << 10;

/// OLD, read positionally, with the buffer extension reads go through (or OLD's bytes
/// themselves when they are in memory, [`ReadAt::as_bytes`]).
pub struct OldReader<'a> {
    file: &'a dyn ReadAt,
    len: u64,
    whole: Option<&'a [u8]>,
    buf: Vec<u8>,
    /// OLD as a file: what is not in the page cache is read in direct windows.
    cold: Option<ColdReader<'a>>,
}

impl<'a> OldReader<'a> {
    /// Reads OLD (`len` bytes of `file`).
    pub fn new(file: &'a dyn ReadAt, len: u64) -> OldReader<'a> {
        let whole = file
            .as_bytes()
            .filter(|b| b.len() as u64 >= len)
            .map(|b| &b[..len as usize]);
        OldReader {
            file,
            len,
            whole,
            buf: Vec::new(),
            // A map is read where it lies; only a file is read in windows.
            cold: file
                .as_file()
                .filter(|_| whole.is_none())
                .map(|f| ColdReader::new(f, len)),
        }
    }

    /// OLD's `n` bytes at `at` (within OLD).
    fn read(&mut self, at: u64, n: usize) -> io::Result<&[u8]> {
        match &mut self.cold {
            Some(c) => c.read(&mut self.buf, at, n),
            None => {
                self.buf.resize(n, 0);
                self.file.read_exact_at(&mut self.buf, at)?;
                Ok(&self.buf)
            }
        }
    }

    /// True when OLD at `at` holds exactly `want`.
    fn equals(&mut self, at: u64, want: &[u8]) -> io::Result<bool> {
        if at > self.len || (want.len() as u64) > self.len - at {
            return Ok(false);
        }
        if let Some(w) = self.whole {
            return Ok(&w[at as usize..at as usize + want.len()] == want);
        }
        Ok(self.read(at, want.len())? == want)
    }

    /// How many bytes from the start of `new` equal OLD from `at` on.
    fn agree_forward(&mut self, at: u64, new: &[u8]) -> io::Result<usize> {
        if let Some(w) = self.whole {
            let from = (at.min(self.len)) as usize;
            return Ok(common_prefix(&w[from..], new));
        }
        let mut done = 0usize;
        let mut step = FIRST_STEP;
        while done < new.len() {
            let pos = at + done as u64;
            if pos >= self.len {
                break;
            }
            let n = step.min(new.len() - done).min((self.len - pos) as usize);
            step = (step * 4).min(STEP);
            let same = common_prefix(self.read(pos, n)?, &new[done..done + n]);
            done += same;
            if same < n {
                break;
            }
        }
        Ok(done)
    }

    /// How many bytes from the end of `new` equal OLD just before `at`.
    fn agree_backward(&mut self, at: u64, new: &[u8]) -> io::Result<usize> {
        if let Some(w) = self.whole {
            return Ok(common_suffix(&w[..at.min(self.len) as usize], new));
        }
        let mut done = 0usize;
        let mut step = FIRST_STEP;
        while done < new.len() && (done as u64) < at {
            let n = step.min(new.len() - done).min((at - done as u64) as usize);
            step = (step * 4).min(STEP);
            let from = at - done as u64 - n as u64;
            let tail = &new[new.len() - done - n..new.len() - done];
            let same = common_suffix(self.read(from, n)?, tail);
            done += same;
            if same < n {
                break;
            }
        }
        Ok(done)
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    // Eight bytes at a time, then the byte that differs.
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().expect("8 bytes"));
        let y = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        if x != y {
            return i + ((x ^ y).trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    // Eight bytes at a time from the ends, then the byte that differs.
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[n - i - 8..n - i].try_into().expect("8 bytes"));
        let y = u64::from_le_bytes(b[n - i - 8..n - i].try_into().expect("8 bytes"));
        if x != y {
            return i + ((x ^ y).leading_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[n - 1 - i] == b[n - 1 - i] {
        i += 1;
    }
    i
}

/// The ops that make `new` (one section) from OLD. `next_chunk(s)` gives the chunk of `new`
/// that starts at `s`: chunks are cut only where they are needed, so the bytes a forward
/// extension swallows (an unchanged region) are never chunked or hashed, and the cutting
/// starts again where the extension stopped.
pub fn match_section(
    new: &[u8],
    mut next_chunk: impl FnMut(usize) -> NewChunk,
    table: &ChunkTable,
    old: &mut OldReader<'_>,
) -> io::Result<Vec<Op>> {
    let mut out = Ops::default();
    // Bytes before `covered` are made by ops already pushed; from there on, literal until
    // a match starts.
    let mut covered = 0usize;
    // The last copy's end in OLD and in the section, and the chunks looked up since.
    let mut diagonal: Option<(u64, usize)> = None;
    let mut since = 0usize;
    let mut s = 0usize;
    while s < new.len() {
        let c = next_chunk(s);
        debug_assert!(c.start == s && c.len > 0 && s + c.len <= new.len());
        s += c.len;
        if c.zero {
            out.literal(covered, c.start);
            out.push(Op::Zero { len: c.len as u64 });
            covered = c.start + c.len;
            continue;
        }
        let bytes = &new[c.start..c.start + c.len];
        // Just after a copy ends, NEW often goes on along the same diagonal after a byte or
        // two changed: tried first (for two chunks), so that the copies stay contiguous
        // even where the chunk also occurs elsewhere in OLD.
        since += 1;
        let along = diagonal
            .filter(|_| since <= 2)
            .map(|(old_end, new_end)| old_end + (c.start - new_end) as u64);
        let from = match along {
            Some(at) if old.equals(at, bytes)? => at,
            _ => {
                let Some((from, len)) = table.find(c.hash) else {
                    continue;
                };
                if len as usize != c.len || !old.equals(from, bytes)? {
                    continue;
                }
                from
            }
        };
        let back = old.agree_backward(from, &new[covered..c.start])?;
        let end = c.start + c.len;
        let fwd = old.agree_forward(from + c.len as u64, &new[end..])?;
        let start = c.start - back;
        out.literal(covered, start);
        out.push(Op::Copy {
            from: from - back as u64,
            len: (back + c.len + fwd) as u64,
        });
        covered = end + fwd;
        s = covered;
        diagonal = Some((from + (c.len + fwd) as u64, covered));
        since = 0;
    }
    out.literal(covered, new.len());
    Ok(out.ops)
}

/// The chunker [`match_section`] uses in `make`: content-defined chunks from any start.
pub fn cdc_chunker<'a>(
    new: &'a [u8],
    p: &'a crate::cdc::Params,
) -> impl FnMut(usize) -> NewChunk + 'a {
    let mut cutter = crate::cdc::Cutter::new(p.kernel);
    move |s| {
        let (end, kind) = cutter
            .cut(new, s, p, true)
            .expect("the last chunk is always cut");
        let zero = kind == crate::cdc::Kind::Zero;
        NewChunk {
            start: s,
            len: end - s,
            zero,
            hash: if zero {
                0
            } else {
                xxhash_rust::xxh3::xxh3_128(&new[s..end])
            },
        }
    }
}

/// Ops being built: adjacent literals joined, copies contiguous in OLD merged.
#[derive(Default)]
struct Ops {
    ops: Vec<Op>,
}

impl Ops {
    fn literal(&mut self, from: usize, to: usize) {
        if to > from {
            self.push(Op::Literal {
                len: (to - from) as u64,
            });
        }
    }

    fn push(&mut self, op: Op) {
        crate::ops::push_merged(&mut self.ops, op);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::apply_naive;
    use proptest::prelude::*;
    use xxhash_rust::xxh3::xxh3_128;

    /// Fixed-size chunks (the matcher does not care how chunks were cut; `size` 0 means
    /// content-defined ones, [`cdc_of`]), zero runs of a
    /// whole chunk marked as such.
    fn chunks_of(data: &[u8], size: usize) -> Vec<NewChunk> {
        (0..data.len())
            .step_by(size)
            .map(|start| {
                let len = size.min(data.len() - start);
                let b = &data[start..start + len];
                NewChunk {
                    start,
                    len,
                    zero: b.iter().all(|&x| x == 0) && len >= 32,
                    hash: xxh3_128(b),
                }
            })
            .collect()
    }

    /// Content-defined chunks for the test: a cut after a byte below 4, at least 16 bytes
    /// on (so a shift of NEW against OLD resynchronises, as with the real chunking).
    fn cdc_of(data: &[u8]) -> Vec<NewChunk> {
        let mut out = Vec::new();
        let mut start = 0;
        for i in 0..data.len() {
            if (data[i] < 4 && i + 1 - start >= 16) || i + 1 == data.len() {
                let b = &data[start..=i];
                out.push(NewChunk {
                    start,
                    len: b.len(),
                    zero: false,
                    hash: xxh3_128(b),
                });
                start = i + 1;
            }
        }
        out
    }

    fn table_of(data: &[u8], size: usize) -> ChunkTable {
        let cs = if size == 0 {
            cdc_of(data)
        } else {
            chunks_of(data, size)
        };
        let mut t = ChunkTable::with_capacity(cs.len());
        for c in cs.iter().filter(|c| !c.zero) {
            t.insert(c.hash, c.start as u64, c.len as u32);
        }
        t
    }

    /// The ops, the same whether OLD is read positionally or as a slice.
    fn ops_for(old: &[u8], new: &[u8], size: usize) -> Vec<Op> {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), old).unwrap();
        let by_reads = ops_with(f.as_file(), old, new, size);
        assert_eq!(ops_with(&old, old, new, size), by_reads);
        by_reads
    }

    fn ops_with(file: &dyn ReadAt, old: &[u8], new: &[u8], size: usize) -> Vec<Op> {
        let table = table_of(old, size);
        let mut r = OldReader::new(file, old.len() as u64);
        // The chunk starting at s: the test chunker run from s.
        let next = |s: usize| {
            let rest = &new[s..];
            let c = if size == 0 {
                cdc_of(&rest[..rest.len().min(1 << 16)])[0]
            } else {
                chunks_of(&rest[..rest.len().min(size)], size)[0]
            };
            NewChunk { start: s, ..c }
        };
        match_section(new, next, &table, &mut r).unwrap()
    }

    proptest! {
        /// The word-at-a-time kernels against byte loops.
        #[test]
        fn common_ends_are_the_byte_loops(
            a in proptest::collection::vec(0u8..3, 0..300),
            b in proptest::collection::vec(0u8..3, 0..300),
        ) {
            let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            let suf = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
            prop_assert_eq!(common_prefix(&a, &b), pre);
            prop_assert_eq!(common_suffix(&a, &b), suf);
        }

        #[test]
        fn ops_rebuild_new_exactly(
            old in proptest::collection::vec(0u8..3, 0..4000),
            edits in proptest::collection::vec((0usize..4000, 0usize..300, 0u8..3), 0..6),
            size in 8usize..200,
        ) {
            // NEW: OLD with pieces moved, replaced and zeroed.
            let mut new = old.clone();
            for (at, len, kind) in edits {
                let at = at.min(new.len());
                let len = len.min(new.len() - at);
                match kind {
                    0 => { let piece: Vec<u8> = new.drain(at..at + len).collect(); new.extend(piece); }
                    1 => new[at..at + len].iter_mut().for_each(|b| *b = 0),
                    _ => new[at..at + len].iter_mut().for_each(|b| *b = 7),
                }
            }
            let ops = ops_for(&old, &new, size);
            prop_assert_eq!(ops.iter().map(Op::len).sum::<u64>(), new.len() as u64);
            prop_assert_eq!(apply_naive(&old, &new, &ops), new.clone());
            // Only literals carry NEW's bytes: nothing else may read NEW.
            let blanked: Vec<u8> = {
                let mut b = vec![0xAAu8; new.len()];
                let mut at = 0usize;
                for op in &ops {
                    let n = op.len() as usize;
                    if matches!(op, Op::Literal { .. }) { b[at..at + n].copy_from_slice(&new[at..at + n]); }
                    at += n;
                }
                b
            };
            prop_assert_eq!(apply_naive(&old, &blanked, &ops), new);
        }
    }

    #[test]
    fn an_unchanged_file_is_one_copy_and_a_moved_block_is_found() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let old: Vec<u8> = (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        assert_eq!(
            ops_for(&old, &old, 1000),
            [Op::Copy {
                from: 0,
                len: 100_000
            }]
        );
        // The first 30,000 bytes moved to the end, and 10 new bytes in the middle.
        let mut new = old[30_000..].to_vec();
        new.splice(35_000..35_000, [9u8; 10]);
        new.extend_from_slice(&old[..30_000]);
        let ops = ops_for(&old, &new, 0);
        assert_eq!(apply_naive(&old, &new, &ops), new);
        let literal: u64 = ops
            .iter()
            .filter(|o| matches!(o, Op::Literal { .. }))
            .map(Op::len)
            .sum();
        assert_eq!(literal, 10, "{ops:?}");
        assert_eq!(ops.len(), 4, "{ops:?}");
    }
}
