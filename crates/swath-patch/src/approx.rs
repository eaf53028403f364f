//! Approximate matches between anchors (`--level default` and `max`).
//!
//! A rebuilt program differs from its previous release in a few bytes of almost every
//! kilobyte (moved addresses), so exact chunk matches are few and far between. But the
//! bytes between two anchors usually line up with OLD on a neighbouring anchor's diagonal
//! (the `old - new` offset of the copy before or after the gap): most of them equal, a few
//! changed. Such a stretch is worth storing as a [`Op::Delta`]: OLD's bytes plus a
//! difference stream that is mostly zeros, which zstd packs to little (bsdiff's insight).
//!
//! For each literal gap, the stretch along the previous copy's diagonal is extended forward
//! as bsdiff does: to the length that maximises `2 * equal - length` (so more than half of
//! its bytes agree), and the stretch along the next copy's diagonal likewise backward from
//! the gap's end. Where both reach into the gap they are cut where the sum of the two
//! scores is highest. What is left between them stays literal.

use std::io;

use crate::matcher::OldReader;
use crate::ops::Op;

/// A stretch shorter than this is left literal: its op would cost more than it saves.
const MIN_STRETCH: usize = 8;

/// The longest gap examined (longer gaps are examined in their first and last this many
/// bytes only: a diagonal rarely holds that long without an exact anchor in it).
const MAX_GAP: usize = 1 << 20;

/// Turns the literal gaps of `ops` (made for `new`, one section) into approximate matches
/// where a neighbouring copy's diagonal fits.
pub fn fill_gaps(ops: Vec<Op>, new: &[u8], old: &mut OldReader<'_>) -> io::Result<Vec<Op>> {
    let mut out: Vec<Op> = Vec::with_capacity(ops.len());
    let mut at = 0usize;
    // Where OLD continues the previous copy (its end), if there was one.
    let mut before: Option<u64> = None;
    let mut buf = Vec::new();
    for (k, op) in ops.iter().enumerate() {
        let n = op.len() as usize;
        match *op {
            Op::Literal { .. } => {
                // The next copy's diagonal, carried back to the gap's end.
                let after = match ops.get(k + 1) {
                    Some(Op::Copy { from, .. }) => Some(*from),
                    _ => None,
                };
                let gap = &new[at..at + n];
                fill_one(gap, before, after, old, &mut buf, &mut out)?;
                before = before.map(|b| b + n as u64);
            }
            Op::Copy { from, len } | Op::Delta { from, len } => {
                out.push(*op);
                before = Some(from + len);
            }
            Op::Zero { len } => {
                out.push(*op);
                before = before.map(|b| b + len);
            }
        }
        at += n;
    }
    Ok(out)
}

/// One gap: a forward stretch on `before`'s diagonal (OLD offset of the gap's first byte),
/// a backward one on `after`'s (OLD offset just past the gap's last byte), literal between.
fn fill_one(
    gap: &[u8],
    before: Option<u64>,
    after: Option<u64>,
    old: &mut OldReader<'_>,
    buf: &mut Vec<u8>,
    out: &mut Vec<Op>,
) -> io::Result<()> {
    let n = gap.len();
    let span = n.min(MAX_GAP);
    // Scores of every prefix on the forward diagonal: 2 * equal - length.
    let mut fwd_len = 0usize;
    let mut fwd_scores = Vec::new();
    if let Some(b) = before {
        if old.read(b, span, buf)? {
            fwd_scores = prefix_scores(&buf[..], &gap[..span]);
            fwd_len = best(&fwd_scores);
        }
    }
    let mut bwd_len = 0usize;
    let mut bwd_scores = Vec::new();
    if let Some(a) = after {
        if a >= span as u64 && old.read(a - span as u64, span, buf)? {
            let o: Vec<u8> = buf.iter().rev().copied().collect();
            let g: Vec<u8> = gap[n - span..].iter().rev().copied().collect();
            bwd_scores = prefix_scores(&o, &g);
            bwd_len = best(&bwd_scores);
        }
    }
    if fwd_len + bwd_len > n {
        // Overlap: the split that keeps the highest total score.
        let score = |s: &[i64], len: usize| if len == 0 { 0 } else { s[len - 1] };
        let mut best_split = (i64::MIN, 0usize);
        // Every split the two diagonals can cover, not only their best lengths.
        let lo = n - bwd_scores.len().min(n);
        for f in lo..=fwd_scores.len().min(n) {
            let total = score(&fwd_scores, f) + score(&bwd_scores, n - f);
            if total > best_split.0 {
                best_split = (total, f);
            }
        }
        fwd_len = best_split.1;
        bwd_len = n - fwd_len;
    }
    if fwd_len < MIN_STRETCH {
        fwd_len = 0;
    }
    if bwd_len < MIN_STRETCH {
        bwd_len = 0;
    }
    if let (true, Some(b)) = (fwd_len > 0, before) {
        out.push(Op::Delta {
            from: b,
            len: fwd_len as u64,
        });
    }
    let middle = n - fwd_len - bwd_len;
    if middle > 0 {
        out.push(Op::Literal { len: middle as u64 });
    }
    if let (true, Some(a)) = (bwd_len > 0, after) {
        out.push(Op::Delta {
            from: a - bwd_len as u64,
            len: bwd_len as u64,
        });
    }
    Ok(())
}

/// `s[i]` = 2 * (equal bytes in the first i + 1) - (i + 1).
fn prefix_scores(old: &[u8], new: &[u8]) -> Vec<i64> {
    let mut s = Vec::with_capacity(new.len());
    let mut score = 0i64;
    for (a, b) in old.iter().zip(new) {
        score += if a == b { 1 } else { -1 };
        s.push(score);
    }
    s
}

/// The prefix length with the highest positive score (0 when none is positive).
fn best(scores: &[i64]) -> usize {
    let mut best = (0i64, 0usize);
    for (i, &s) in scores.iter().enumerate() {
        if s > best.0 {
            best = (s, i + 1);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::apply_naive;
    use proptest::prelude::*;

    fn run(old: &[u8], new: &[u8], ops: Vec<Op>) -> Vec<Op> {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), old).unwrap();
        let mut r = OldReader::new(f.as_file(), old.len() as u64);
        fill_gaps(ops, new, &mut r).unwrap()
    }

    proptest! {
        #[test]
        fn filled_gaps_still_rebuild_new(
            old in proptest::collection::vec(0u8..4, 1..2000),
            pieces in proptest::collection::vec((any::<bool>(), 1usize..300, any::<u64>()), 1..12),
            noise in proptest::collection::vec(any::<u64>(), 0..40),
        ) {
            // NEW from copies of OLD and literals, then bytes changed anywhere.
            let mut ops = Vec::new();
            let mut new = Vec::new();
            for (copy, len, from) in pieces {
                let len = len.min(old.len());
                if copy {
                    let from = (from % (old.len() - len + 1) as u64) as usize;
                    new.extend_from_slice(&old[from..from + len]);
                    ops.push(Op::Copy { from: from as u64, len: len as u64 });
                } else {
                    new.extend((0..len).map(|i| (i as u64 ^ from) as u8));
                    ops.push(Op::Literal { len: len as u64 });
                }
            }
            // Noise inside literals only (copies must stay exact).
            let mut at = 0usize;
            let mut literal_at = Vec::new();
            for op in &ops {
                if matches!(op, Op::Literal { .. }) {
                    literal_at.extend(at..at + op.len() as usize);
                }
                at += op.len() as usize;
            }
            for x in noise {
                if !literal_at.is_empty() {
                    let i = literal_at[(x as usize) % literal_at.len()];
                    new[i] = (x >> 8) as u8;
                }
            }
            let filled = run(&old, &new, ops);
            prop_assert_eq!(filled.iter().map(Op::len).sum::<u64>(), new.len() as u64);
            prop_assert_eq!(apply_naive(&old, &new, &filled), new);
        }
    }

    #[test]
    fn a_gap_on_the_diagonal_with_a_few_changes_becomes_a_delta() {
        let old: Vec<u8> = (0..4000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut new = old.clone();
        // Every 100th byte changed in 1000..3000: no exact chunk there, same diagonal.
        for i in (1000..3000).step_by(100) {
            new[i] ^= 0xff;
        }
        let ops = vec![
            Op::Copy { from: 0, len: 1000 },
            Op::Literal { len: 2000 },
            Op::Copy {
                from: 3000,
                len: 1000,
            },
        ];
        let filled = run(&old, &new, ops);
        assert_eq!(apply_naive(&old, &new, &filled), new);
        let literal: u64 = filled
            .iter()
            .filter(|o| matches!(o, Op::Literal { .. }))
            .map(Op::len)
            .sum();
        let delta: u64 = filled
            .iter()
            .filter(|o| matches!(o, Op::Delta { .. }))
            .map(Op::len)
            .sum();
        assert_eq!((literal, delta), (0, 2000), "{filled:?}");
    }

    #[test]
    fn unrelated_bytes_stay_literal() {
        let old = vec![1u8; 3000];
        // One byte copied, then bytes that nowhere agree with OLD's diagonal.
        let mut new = vec![1u8];
        new.extend((1..3000u32).map(|i| (i % 200 + 2) as u8));
        let ops = vec![Op::Copy { from: 0, len: 1 }, Op::Literal { len: 2999 }];
        assert_eq!(run(&old, &new, ops.clone()), ops);
    }
}
