//! A tree's changed files matched against the old files most likely to hold their bytes.
//!
//! In a tree patch OLD is every old file end to end (a source tree: over a gigabyte), so
//! the sampled seeds of the approximate matcher are sparse there, and a small changed file
//! (shorter than a chunk or two) has no exact anchor at all. But a changed file's bytes
//! mostly come from one known place: the old file at the same path (as `diff` or bsdiff
//! would compare the two files), or the old files its exact anchors already point into
//! (code moved from one file to another). [`match_hinted`] searches those *hinted* old
//! files densely: every 8-byte window of them is indexed (a hash chain, as xdelta's and
//! zlib's matchers do), and each literal gap the exact matcher left in the file is matched
//! greedily against them, the candidate worth most first: its length less what its offset
//! costs to store (a varint of its distance from the current diagonal, so that the match
//! along the current diagonal, stored as 0, wins over a slightly longer one far away).
//! What is left is literal, and the approximate matcher ([`crate::approx`]) then fills it
//! between the new copies' diagonals.
//!
//! Cost: one pass over each hinted old file (reading it, in the page cache since its
//! signature was just computed, and hashing each position) and a bounded chain walk per
//! byte of the gaps.

use std::io;

use crate::ops::Op;
use crate::source::ReadAt;

/// Bytes of a window indexed and looked up.
const WINDOW: usize = 8;
/// Candidates looked at per position (the most recent first).
const CHAIN: usize = 64;
/// A match scoring less than this ([`score`]) is left literal: its op costs more than its
/// bytes would (a match along the current diagonal pays from 11 bytes on, one whose offset
/// takes 3 bytes from 17). Measured on the Linux sources (6.1.190 to 6.1.192, `default`):
/// 8 with a weight of 3 and 64 candidates gave 254.9 KB; a plain 12-byte minimum with the
/// longest match taken, 264.0 KB; weights 2 to 5 and minimums 4 to 8, 255-261 KB.
const MIN_SCORE: i64 = 8;
/// What a byte of a match's offset weighs against a byte of the match.
const OFFSET_WEIGHT: i64 = 3;
/// Old bytes indexed for one file at most (its hinted old files, in the order given).
pub const MAX_HINTED: u64 = 16 << 20;

/// One file of a section of NEW and where in OLD its bytes are likely to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// The file's first byte in the section.
    pub start: usize,
    /// Just past its last byte in the section.
    pub end: usize,
    /// Ranges of OLD (offset, length) to search, most likely first: each an old file.
    pub old: Vec<(u64, u64)>,
}

/// The hinted old bytes, indexed by their 8-byte windows.
struct Index {
    buf: swath_engine::buf::PageBuf,
    /// Each range: its first byte in `buf` and its offset in OLD.
    segs: Vec<(usize, u64)>,
    /// Per hash, the last position + 1 with it (0: none).
    head: Vec<u32>,
    /// Per position, the previous position + 1 with the same hash (0: none).
    prev: Vec<u32>,
    shift: u32,
}

fn window_hash(b: &[u8], shift: u32) -> usize {
    let v = u64::from_le_bytes(b[..WINDOW].try_into().expect("a window"));
    (v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl Index {
    fn build(old: &dyn ReadAt, ranges: &[(u64, u64)]) -> io::Result<Index> {
        let total: u64 = ranges.iter().map(|r| r.1).sum();
        let mut buf = swath_engine::buf::PageBuf::zeroed(total as usize);
        let mut segs = Vec::with_capacity(ranges.len());
        let mut at = 0usize;
        for &(off, len) in ranges {
            old.read_exact_at(&mut buf[at..at + len as usize], off)?;
            segs.push((at, off));
            at += len as usize;
        }
        let bits = (buf.len().max(64).next_power_of_two().trailing_zeros()).clamp(6, 26);
        let shift = 64 - bits;
        let mut head = vec![0u32; 1 << bits];
        let mut prev = vec![0u32; buf.len()];
        for (k, &(s, _)) in segs.iter().enumerate() {
            let e = segs.get(k + 1).map_or(buf.len(), |x| x.0);
            if e - s < WINDOW {
                continue;
            }
            for p in s..=e - WINDOW {
                let h = window_hash(&buf[p..], shift);
                prev[p] = head[h];
                head[h] = p as u32 + 1;
            }
        }
        Ok(Index {
            buf,
            segs,
            head,
            prev,
            shift,
        })
    }

    /// The range holding buffer position `p`: its start and end in `buf`, and its offset in
    /// OLD.
    fn seg_of(&self, p: usize) -> (usize, usize, u64) {
        let k = self.segs.partition_point(|s| s.0 <= p) - 1;
        let end = self.segs.get(k + 1).map_or(self.buf.len(), |s| s.0);
        (self.segs[k].0, end, self.segs[k].1)
    }

    /// The buffer position of OLD offset `o`, if a range holds it.
    fn pos_of(&self, o: u64) -> Option<usize> {
        self.segs.iter().enumerate().find_map(|(k, &(s, off))| {
            let end = self.segs.get(k + 1).map_or(self.buf.len(), |x| x.0);
            (o >= off && o < off + (end - s) as u64).then(|| s + (o - off) as usize)
        })
    }
}

/// The match at buffer position `c` for NEW's window at `i`: bytes equal backwards down to
/// `lo` and forwards up to `hi`, inside `c`'s range. Returns (start in NEW, length, OLD
/// offset of the start), or `None` when the window differs.
fn extend(idx: &Index, c: usize, new: &[u8], i: usize, lo: usize, hi: usize) -> Option<Match> {
    let (s, e, off) = idx.seg_of(c);
    if c + WINDOW > e || i + WINDOW > hi || idx.buf[c..c + WINDOW] != new[i..i + WINDOW] {
        return None;
    }
    let mut f = WINDOW;
    while i + f < hi && c + f < e && idx.buf[c + f] == new[i + f] {
        f += 1;
    }
    let mut b = 0;
    while i - b > lo && c - b > s && idx.buf[c - b - 1] == new[i - b - 1] {
        b += 1;
    }
    Some(Match {
        start: i - b,
        len: b + f,
        from: off + (c - b - s) as u64,
    })
}

#[derive(Debug, Clone, Copy)]
struct Match {
    start: usize,
    len: usize,
    from: u64,
}

/// Ops being built: adjacent literals joined, copies contiguous in OLD merged.
#[derive(Default)]
struct Out {
    ops: Vec<Op>,
}

impl Out {
    fn push(&mut self, op: Op) {
        crate::ops::push_merged(&mut self.ops, op);
    }
}

/// Bytes the zigzag varint of `v` takes.
fn varint_len(v: i64) -> i64 {
    let z = ((v << 1) ^ (v >> 63)) as u64;
    i64::from((64 - z.leading_zeros()).max(1).div_ceil(7))
}

/// What a match is worth: its bytes less what its offset costs to store (a varint of the
/// distance from the current diagonal), each offset byte weighing [`OFFSET_WEIGHT`].
fn score(m: &Match, diag: Option<i64>) -> i64 {
    let nd = m.from as i64 - m.start as i64;
    m.len as i64 - OFFSET_WEIGHT * varint_len(nd.wrapping_sub(diag.unwrap_or(0)))
}

/// Matches the literal bytes `new[lo..hi]` against `idx`, pushing copies and literals;
/// `diag` is the current diagonal (OLD offset minus section position), updated.
fn match_gap(idx: &Index, new: &[u8], lo: usize, hi: usize, diag: &mut Option<i64>, out: &mut Out) {
    let mut lit = lo;
    let mut i = lo;
    while i + WINDOW <= hi {
        let mut best: Option<(i64, Match)> = None;
        let mut consider = |m: Match| {
            let s = score(&m, *diag);
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, m));
            }
        };
        // The current diagonal first: after a changed byte, NEW mostly goes on along it.
        if let Some(c) = diag
            .and_then(|d| u64::try_from(i as i64 + d).ok())
            .and_then(|o| idx.pos_of(o))
        {
            if let Some(m) = extend(idx, c, new, i, lit, hi) {
                consider(m);
            }
        }
        let mut c = idx.head[window_hash(&new[i..], idx.shift)];
        let mut n = 0;
        while c != 0 && n < CHAIN {
            let p = c as usize - 1;
            if let Some(m) = extend(idx, p, new, i, lit, hi) {
                consider(m);
            }
            c = idx.prev[p];
            n += 1;
        }
        match best {
            Some((s, m)) if s >= MIN_SCORE => {
                out.push(Op::Literal {
                    len: (m.start - lit) as u64,
                });
                out.push(Op::Copy {
                    from: m.from,
                    len: m.len as u64,
                });
                i = m.start + m.len;
                lit = i;
                *diag = Some(m.from as i64 - m.start as i64);
            }
            _ => i += 1,
        }
    }
    out.push(Op::Literal {
        len: (hi - lit) as u64,
    });
}

/// Replaces the literal bytes of `ops` (made for `new`, one section) that lie in a hinted
/// file by copies from the file's hinted old ranges wherever at least a few bytes match;
/// other ops are kept. Hints are in order and do not overlap.
pub fn match_hinted(
    ops: Vec<Op>,
    new: &[u8],
    hints: &[Hint],
    old: &dyn ReadAt,
) -> io::Result<Vec<Op>> {
    let mut out = Out::default();
    let mut at = 0usize;
    let mut h = 0usize;
    // The index of the hint `h`, built when one of its bytes is literal.
    let mut built: Option<(usize, Index)> = None;
    let mut diag: Option<i64> = None;
    for op in ops {
        let n = op.len() as usize;
        let (lo, hi) = (at, at + n);
        at = hi;
        match op {
            Op::Literal { .. } => {}
            Op::Copy { from, len } | Op::Delta { from, len } => {
                diag = Some(from as i64 - lo as i64);
                let _ = len;
                out.push(op);
                continue;
            }
            Op::Zero { .. } => {
                out.push(op);
                continue;
            }
        }
        // The literal `lo..hi`, piece by piece against the hints it crosses.
        let mut p = lo;
        while p < hi {
            while h < hints.len() && hints[h].end <= p {
                h += 1;
            }
            let Some(hint) = hints.get(h).filter(|x| x.start < hi) else {
                out.push(Op::Literal {
                    len: (hi - p) as u64,
                });
                break;
            };
            if hint.start > p {
                out.push(Op::Literal {
                    len: (hint.start - p) as u64,
                });
                p = hint.start;
            }
            let q = hint.end.min(hi);
            if hint.old.is_empty() || q - p < WINDOW {
                out.push(Op::Literal {
                    len: (q - p) as u64,
                });
            } else {
                if built.as_ref().is_none_or(|b| b.0 != h) {
                    built = Some((h, Index::build(old, &hint.old)?));
                }
                let idx = &built.as_ref().expect("just built").1;
                match_gap(idx, new, p, q, &mut diag, &mut out);
            }
            p = q;
        }
    }
    Ok(out.ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::apply_naive;
    use proptest::prelude::*;

    fn text(len: usize, seed: u64) -> Vec<u8> {
        let words: [&[u8]; 8] = [
            b"static ",
            b"int ",
            b"return ",
            b"(void)",
            b";\n",
            b"\tif (x) ",
            b"foo_bar",
            b"0x1f",
        ];
        let mut x = seed | 1;
        let mut out = Vec::new();
        while out.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.extend_from_slice(words[(x % 8) as usize]);
            out.push(b'a' + (x >> 40) as u8 % 26);
        }
        out.truncate(len);
        out
    }

    #[test]
    fn a_small_edited_file_is_copied_around_its_edit() {
        // OLD: another file, then the file's old version.
        let other = text(5000, 1);
        let before = text(700, 2);
        let mut old = other.clone();
        old.extend_from_slice(&before);
        let mut after = before.clone();
        after.splice(300..300, b"\tnew_line(42);\n".iter().copied());
        after[600] ^= 0x20;
        let ops = vec![Op::Literal {
            len: after.len() as u64,
        }];
        let hints = [Hint {
            start: 0,
            end: after.len(),
            old: vec![(other.len() as u64, before.len() as u64)],
        }];
        let s: &[u8] = &old;
        let got = match_hinted(ops, &after, &hints, &s).unwrap();
        assert_eq!(apply_naive(&old, &after, &got), after);
        let literal: u64 = got
            .iter()
            .filter(|o| matches!(o, Op::Literal { .. }))
            .map(Op::len)
            .sum();
        assert!(literal < 40, "{literal}: {got:?}");
    }

    proptest! {
        #[test]
        fn hinted_matches_rebuild_new(
            old_len in 0usize..3000,
            seed in any::<u64>(),
            cuts in proptest::collection::vec((any::<usize>(), 0usize..400, any::<bool>()), 0..8),
            bounds in proptest::collection::vec(any::<usize>(), 0..6),
        ) {
            let old = text(old_len, seed);
            // NEW: pieces of OLD and of fresh text.
            let mut new = Vec::new();
            for &(at, n, fresh) in &cuts {
                if fresh || old.is_empty() {
                    new.extend_from_slice(&text(n, seed ^ at as u64));
                } else {
                    let a = at % old.len();
                    new.extend_from_slice(&old[a..(a + n).min(old.len())]);
                }
            }
            // Ops: literal everywhere but one exact copy when NEW starts as OLD does.
            let ops = if new.is_empty() { vec![] } else { vec![Op::Literal { len: new.len() as u64 }] };
            // Hints: NEW cut at sorted bounds, each piece pointed at a range of OLD.
            let mut b: Vec<usize> = bounds.iter().map(|x| x % (new.len() + 1)).collect();
            b.sort_unstable();
            b.dedup();
            let mut hints = Vec::new();
            let mut prev = 0;
            for (k, &e) in b.iter().enumerate() {
                if e > prev {
                    let o = (k * 997) % (old.len() + 1);
                    hints.push(Hint { start: prev, end: e, old: vec![(o as u64, (old.len() - o) as u64), (0, o as u64)] });
                    prev = e;
                }
            }
            let s: &[u8] = &old;
            let got = match_hinted(ops, &new, &hints, &s).unwrap();
            prop_assert_eq!(got.iter().map(Op::len).sum::<u64>(), new.len() as u64);
            prop_assert_eq!(apply_naive(&old, &new, &got), new);
        }
    }
}
