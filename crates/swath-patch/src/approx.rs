//! Approximate matches between anchors (`--level default` and `max`).
//!
//! A rebuilt program differs from its previous release in a few bytes of almost every
//! kilobyte (moved addresses), so exact chunk matches are few and far between. But most of
//! NEW still lines up with OLD along some *diagonal* (an `old - new` offset): most bytes
//! equal, a few changed. Such a stretch is worth storing as a [`Op::Delta`]: OLD's bytes
//! plus a difference stream that is mostly zeros, which zstd packs to little (bsdiff's
//! insight). What bsdiff finds with a suffix array over all of OLD, this module finds with
//! sampled seeds ([`crate::seeds`]) and verification:
//!
//! 1. **Scan.** Each literal gap between the exact anchors is walked in blocks of 64
//!    bytes along the current diagonal (at first the previous anchor's). A block where
//!    that diagonal agrees with NEW in all but a few bytes needs nothing more. Elsewhere
//!    NEW's seeds in the block are looked up in OLD's seed index; each candidate is
//!    verified (its window equal) and scored by how many of the next 64 bytes agree along
//!    its diagonal; the best one becomes the current diagonal when it beats the current
//!    one by a margin (bsdiff's "8 more bytes than the old offset explains"). Each switch
//!    is an *event*: a position in NEW and the diagonal that starts there.
//! 2. **Extension.** Between two events (and between the gap's ends and its anchors), the
//!    stretch along the earlier diagonal is extended forward as bsdiff does, to the length
//!    that maximises `2 * equal - length` (so more than half of its bytes agree), and the
//!    stretch along the later diagonal likewise backward. Where both reach into the region
//!    they are cut where the sum of the two scores is highest. What is left between them
//!    stays literal.
//!
//! OLD is read through a per-worker block cache ([`OldCache`]): the diagonals of one
//! section of NEW mostly point into a few regions of OLD.

use std::io;

use crate::format::Level;
use crate::oldcache::OldCache;
use crate::ops::Op;
use crate::seeds::{for_each_seed_gated, prefetch, SeedIndex, SeedParams, WAYS};

/// An extension gives up once its score is this far below its best: bytes that far from
/// the diagonal are another diagonal's, or literal (the scan starts a region again where a
/// diagonal holds again).
const GIVE_UP: i64 = 256;

/// A stretch shorter than this is left literal: its op would cost more than it saves.
const MIN_STRETCH: usize = 8;

/// Bytes of NEW judged at a time along the current diagonal, and the span over which a
/// candidate diagonal is scored.
const BLOCK: usize = 64;

/// How the approximate matcher works at one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// OLD's seeds (window, sampling rate, the most seeds held).
    pub seeds: SeedParams,
    /// A candidate diagonal must agree with NEW in this many more of [`BLOCK`] bytes than
    /// the current one to replace it; a block where the current one disagrees in fewer
    /// bytes than this is not looked up.
    pub margin: usize,
    /// Blocks of OLD each worker caches (8 KiB each).
    pub cache_blocks: usize,
    /// Bytes of NEW with no lookups after one whose candidates all lost.
    pub backoff: usize,
}

impl Settings {
    /// The settings of `level` (`None` for `fast`, which makes no approximate matches).
    pub fn for_level(level: Level) -> Option<Settings> {
        match level {
            Level::Fast => None,
            Level::Default => Some(Settings {
                // 14-byte windows rather than 12: fewer candidates that lose (jaxlib: 14%
                // less CPU) and smaller patches of all three rebuilt programs measured;
                // 15 and 16 lose duckdb's short stretches between changes (+10%).
                seeds: SeedParams {
                    window: 14,
                    rate_bits: 4,
                    max_seeds: 16 << 20,
                },
                margin: 8,
                cache_blocks: 2048,
                backoff: 0,
            }),
            Level::Max => Some(Settings {
                seeds: SeedParams {
                    window: 12,
                    rate_bits: 3,
                    max_seeds: 32 << 20,
                },
                margin: 4,
                cache_blocks: 4096,
                backoff: 0,
            }),
        }
    }
}

/// Turns the literal gaps of `ops` (made for `new`, one section) into approximate matches:
/// along the neighbouring copies' diagonals, and along those that `seeds` finds.
pub fn fill_gaps(
    ops: Vec<Op>,
    new: &[u8],
    old: &mut OldCache<'_>,
    seeds: Option<&SeedIndex>,
    settings: &Settings,
) -> io::Result<Vec<Op>> {
    let mut out = Out::default();
    let mut at = 0usize;
    // Where OLD continues the previous copy (its end), if there was one.
    let mut before: Option<u64> = None;
    let mut events = Vec::new();
    for (k, op) in ops.iter().enumerate() {
        let n = op.len() as usize;
        match *op {
            Op::Literal { .. } => {
                // The next copy's diagonal, carried back to the gap's end.
                let after = match ops.get(k + 1) {
                    Some(Op::Copy { from, .. }) => Some(*from),
                    _ => None,
                };
                events.clear();
                if let Some(seeds) = seeds {
                    scan(new, at, at + n, before, old, seeds, settings, &mut events)?;
                }
                // Regions between events, each from one diagonal to the next.
                let mut start = at;
                let mut from = before;
                for &(p, o) in &events {
                    fill_region(&new[start..p], from, Some(o), old, &mut out)?;
                    start = p;
                    from = Some(o);
                }
                fill_region(&new[start..at + n], from, after, old, &mut out)?;
                before = match (events.last(), before) {
                    (Some(&(p, o)), _) => Some(o + (at + n - p) as u64),
                    (None, b) => b.map(|b| b + n as u64),
                };
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
    Ok(out.ops)
}

/// Equal bytes of `new` and OLD at `old_at` (which may lie partly or wholly outside OLD:
/// those bytes disagree).
fn agree(old: &mut OldCache<'_>, old_at: i64, new: &[u8]) -> io::Result<usize> {
    let len = old.len() as i64;
    let (lo, hi) = (old_at.max(0), (old_at + new.len() as i64).min(len));
    if lo >= hi {
        return Ok(0);
    }
    let skip = (lo - old_at) as usize;
    let n = (hi - lo) as usize;
    let o = old.get(lo as u64, n)?.expect("inside OLD");
    Ok(count_equal(o, &new[skip..skip + n]))
}

/// Equal bytes at the same positions of `a` and `b`, eight at a time.
fn count_equal(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut same = 0usize;
    let (wa, wb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail = wa
        .remainder()
        .iter()
        .zip(wb.remainder())
        .filter(|(x, y)| x == y)
        .count();
    for (x, y) in wa.zip(wb) {
        same += equal_high_bits(word(x, 0), word(y, 0)).count_ones() as usize;
    }
    same + tail
}

/// The high bit of each byte of the little-endian words `a` and `b` that is the same.
#[inline(always)]
fn equal_high_bits(a: u64, b: u64) -> u64 {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let v = a ^ b;
    // A byte's high bit is set where it is non-zero (no carries across bytes).
    !(((v & LOW) + LOW) | v) & !LOW
}

/// What eight bytes do to an extension's running score (`+1` per equal byte, `-1` per
/// other), by which of them are equal (bit `j`: the `j`-th byte walked): the change over
/// all eight, the highest and lowest the score gets on the way (relative to where it
/// started), and after how many bytes it first gets to the highest.
#[derive(Clone, Copy)]
struct Step {
    total: i8,
    high: i8,
    high_at: u8,
    low: i8,
}

/// [`Step`] of every pattern of equal bytes.
const STEPS: [Step; 256] = {
    let mut t = [Step {
        total: 0,
        high: 0,
        high_at: 0,
        low: 0,
    }; 256];
    let mut m = 0;
    while m < 256 {
        let (mut s, mut high, mut high_at, mut low) = (0i8, i8::MIN, 0u8, i8::MAX);
        let mut j = 0;
        while j < 8 {
            s += if (m >> j) & 1 == 1 { 1 } else { -1 };
            if s > high {
                (high, high_at) = (s, j as u8 + 1);
            }
            if s < low {
                low = s;
            }
            j += 1;
        }
        t[m] = Step {
            total: s,
            high,
            high_at,
            low,
        };
        m += 1;
    }
    t
};

/// Bit `j` set where byte `j` of the little-endian words `a` and `b` is the same.
#[inline(always)]
fn equal_bytes(a: u64, b: u64) -> u8 {
    let equal = equal_high_bits(a, b);
    // Bit 8j + 7 to bit j of the top byte: the products land on distinct bits, no carries.
    ((equal >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

/// The little-endian word at `at` of `x`.
#[inline(always)]
fn word(x: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(x[at..at + 8].try_into().expect("8 bytes"))
}

/// One word's [`Step`] applied to an extension's running `score` and `best` (`walked`:
/// the bytes walked before it); false, with nothing changed, when the score could fall to
/// where the walk gives up inside the word (then it is walked byte by byte).
#[inline(always)]
fn step_word(equal: u8, walked: usize, score: &mut i64, best: &mut (i64, usize)) -> bool {
    let s = STEPS[equal as usize];
    if *score + i64::from(s.low) <= best.0 - GIVE_UP {
        return false;
    }
    // A new best inside the word is where the score first gets to its highest; after it,
    // the score cannot fall GIVE_UP below it within the word.
    if *score + i64::from(s.high) > best.0 {
        *best = (*score + i64::from(s.high), walked + usize::from(s.high_at));
    }
    *score += i64::from(s.total);
    true
}

/// Walks `old` and `new` (equal lengths) from the start, keeping the running score
/// (`+1` per equal byte, `-1` per other) and the best one with the prefix length that
/// reached it, until the score falls [`GIVE_UP`] below the best; a word at a time (its
/// pattern of equal bytes looked up in [`STEPS`]).
fn best_prefix(old: &[u8], new: &[u8], done: usize, score: &mut i64, best: &mut (i64, usize)) {
    let n = old.len().min(new.len());
    let mut i = 0;
    while i < n && *score > best.0 - GIVE_UP {
        if i + 8 <= n
            && step_word(
                equal_bytes(word(old, i), word(new, i)),
                done + i,
                score,
                best,
            )
        {
            i += 8;
            continue;
        }
        *score += if old[i] == new[i] { 1 } else { -1 };
        i += 1;
        if *score > best.0 {
            *best = (*score, done + i);
        }
    }
}

/// [`best_prefix`] from the ends of `old` and `new` backwards: the best suffix.
fn best_suffix(old: &[u8], new: &[u8], done: usize, score: &mut i64, best: &mut (i64, usize)) {
    let n = old.len().min(new.len());
    let (old, new) = (&old[old.len() - n..], &new[new.len() - n..]);
    let mut i = 0;
    while i < n && *score > best.0 - GIVE_UP {
        let e = n - i;
        // The word's last byte is walked first.
        if i + 8 <= n
            && step_word(
                equal_bytes(word(old, e - 8), word(new, e - 8)).reverse_bits(),
                done + i,
                score,
                best,
            )
        {
            i += 8;
            continue;
        }
        *score += if old[e - 1] == new[e - 1] { 1 } else { -1 };
        i += 1;
        if *score > best.0 {
            *best = (*score, done + i);
        }
    }
}

/// NEW's seeds in a gap, each window hashed once: computed a stretch at a time as the scan
/// reaches them, their buckets in OLD's seed index fetched ahead of the lookups.
struct NewSeeds {
    /// Seeds (position, hash) in order, from `head` on not yet passed by the scan.
    list: Vec<(usize, u64)>,
    head: usize,
    /// Windows starting before this position have been hashed.
    hashed_to: usize,
    /// Buckets of the seeds before this position have been asked for.
    fetched_to: usize,
}

impl NewSeeds {
    fn new(from: usize) -> NewSeeds {
        NewSeeds {
            list: Vec::new(),
            head: 0,
            hashed_to: from,
            fetched_to: from,
        }
    }

    /// Hashes the windows up to `to` (exclusive) and asks for the buckets of their seeds.
    #[inline]
    fn reach(&mut self, new: &[u8], to: usize, seeds: &SeedIndex) {
        if to > self.hashed_to {
            let (w, rate) = (seeds.params().window, seeds.rate_bits());
            for_each_seed_gated(seeds.gate(), new, self.hashed_to, to, w, rate, |s, h| {
                self.list.push((s, h))
            });
            self.hashed_to = to;
        }
        if to > self.fetched_to {
            let first = self.list[self.head..].partition_point(|&(s, _)| s < self.fetched_to);
            for &(s, h) in &self.list[self.head + first..] {
                if s >= to {
                    break;
                }
                seeds.prefetch(h);
            }
            self.fetched_to = to;
        }
    }

    /// The seeds in `from..to` (hashed already), forgetting those before `from`.
    #[inline]
    fn between(&mut self, from: usize, to: usize) -> &[(usize, u64)] {
        while self.head < self.list.len() && self.list[self.head].0 < from {
            self.head += 1;
        }
        if self.head > 4096 && self.head * 2 > self.list.len() {
            self.list.drain(..self.head);
            self.head = 0;
        }
        let rest = &self.list[self.head..];
        &rest[..rest.partition_point(|&(s, _)| s < to)]
    }
}

/// A seed of a block with its candidates in OLD (those sharing its bucket and tag).
#[derive(Clone, Copy)]
struct Looked {
    at: usize,
    n: usize,
    cands: [u64; WAYS],
}

/// Finds the events of the gap `from..to` of `new`: positions where a diagonal found by a
/// seed takes over from the current one (at first `before`'s), each with the OLD offset
/// of its first byte.
#[allow(clippy::too_many_arguments)]
fn scan(
    new: &[u8],
    from: usize,
    to: usize,
    before: Option<u64>,
    old: &mut OldCache<'_>,
    seeds: &SeedIndex,
    settings: &Settings,
    events: &mut Vec<(usize, u64)>,
) -> io::Result<()> {
    let w = seeds.params().window;
    // The current diagonal: OLD offset minus NEW position.
    let mut cur: Option<i64> = before.map(|b| b as i64 - from as i64);
    let mut p = from;
    // The last block judged was not explained by the current diagonal.
    let mut bad = false;
    // No lookups before this position (after one that found only losers).
    let mut quiet_until = 0usize;
    let mut seeds_new = NewSeeds::new(from);
    let mut looked: Vec<Looked> = Vec::new();
    let whole = old.whole();
    while p < to {
        let end = (p + BLOCK).min(to);
        let fine = match cur {
            Some(d) => agree(old, p as i64 + d, &new[p..end])? + settings.margin > end - p,
            None => false,
        };
        if fine {
            if bad {
                // The current diagonal holds again after bytes it did not explain (a
                // replaced stretch): a new start on it, so that the extensions, which
                // give up far below their best, cover what follows.
                let d = cur.expect("fine");
                push_event(events, p, (p as i64 + d) as u64);
                bad = false;
            }
            p = end;
            continue;
        }
        bad = true;
        // Blocks NEW's diagonals do not explain come in runs: the next block's seeds are
        // found and their buckets fetched now, so that the memory is there by the time
        // they are looked up (one cache miss per lookup otherwise).
        seeds_new.reach(new, (end + BLOCK).min(to), seeds);
        // This block's candidates, all looked up first and their bytes in OLD fetched, so
        // that the cache misses on OLD overlap instead of coming one after the other. Only
        // the window's first line is asked for: the line after it too kept the memory
        // requests in flight full, prefetches waiting for a slot (jaxlib: 6% more CPU).
        looked.clear();
        for &(s, h) in seeds_new.between(p, end) {
            if s < quiet_until {
                continue;
            }
            let mut l = Looked {
                at: s,
                n: 0,
                cands: [0; WAYS],
            };
            l.n = seeds.lookup(h, &mut l.cands);
            if let Some(o) = whole {
                for &c in &l.cands[..l.n] {
                    prefetch(o.as_ptr().wrapping_add(c as usize));
                }
            }
            looked.push(l);
        }
        let mut next = end;
        for l in &looked {
            let s = l.at;
            if s < quiet_until {
                continue;
            }
            let n = l.n;
            let span = &new[s..(s + BLOCK).min(new.len())];
            let mut best: Option<(usize, u64)> = None;
            for &c in &l.cands[..n] {
                let d = c as i64 - s as i64;
                if Some(d) == cur {
                    continue;
                }
                // The window and the span after it, read without caching a far block.
                let Some(o) = old.peek(c, span.len())? else {
                    continue;
                };
                if !same_window(o, span, w) {
                    continue;
                }
                let score = count_equal(o, span);
                if best.is_none_or(|(b, _)| score > b) {
                    best = Some((score, c));
                }
            }
            if n > 0 {
                // Whatever happens, no other lookups for a while unless this one wins:
                // where no diagonal explains NEW (new code), the windows OLD does have
                // are common ones, each costing a read of OLD and never winning.
                quiet_until = s + settings.backoff;
            }
            let Some((score, c)) = best else { continue };
            let now = match cur {
                Some(d) => agree(old, s as i64 + d, span)?,
                None => 0,
            };
            if score >= now + settings.margin {
                quiet_until = 0;
                push_event(events, s, c);
                cur = Some(c as i64 - s as i64);
                bad = false;
                // Judge the blocks from just past this seed along the new diagonal.
                next = s + 1;
                break;
            }
        }
        p = next;
    }
    // An event at the gap's start replaces `before` as its first diagonal.
    Ok(())
}

/// True when the first `w` bytes (8 to 16) of `a` and `b` are equal: their first and
/// last eight bytes compared as words.
#[inline(always)]
fn same_window(a: &[u8], b: &[u8], w: usize) -> bool {
    let word = |x: &[u8], at: usize| u64::from_le_bytes(x[at..at + 8].try_into().expect("8 bytes"));
    word(a, 0) == word(b, 0) && word(a, w - 8) == word(b, w - 8)
}

/// Adds an event (a NEW position and the OLD offset its diagonal puts there); one at the
/// same position as the last replaces it.
fn push_event(events: &mut Vec<(usize, u64)>, at: usize, old: u64) {
    match events.last_mut() {
        Some(last) if last.0 == at => *last = (at, old),
        _ => events.push((at, old)),
    }
}

/// One region of NEW between two diagonals: a forward stretch on `before`'s (OLD offset of
/// the region's first byte), a backward one on `after`'s (OLD offset just past its last
/// byte), literal between.
fn fill_region(
    region: &[u8],
    before: Option<u64>,
    after: Option<u64>,
    old: &mut OldCache<'_>,
    out: &mut Out,
) -> io::Result<()> {
    let n = region.len();
    if n == 0 {
        return Ok(());
    }
    let old_len = old.len();
    // Forward: the prefix with the best score.
    let fwd_room = before.map_or(0, |b| n.min(old_len.saturating_sub(b) as usize));
    let mut fwd_len = 0usize;
    if fwd_room > 0 {
        let b = before.expect("room");
        let (mut score, mut best) = (0i64, (0i64, 0usize));
        let mut i = 0;
        while i < fwd_room {
            let k = (fwd_room - i).min(4096);
            let o = old.get(b + i as u64, k)?.expect("inside OLD");
            best_prefix(o, &region[i..i + k], i, &mut score, &mut best);
            if score <= best.0 - GIVE_UP {
                break;
            }
            i += k;
        }
        fwd_len = best.1;
    }
    // Backward: the suffix with the best score.
    let bwd_room = match after {
        Some(a) if a <= old_len => n.min(a as usize),
        _ => 0,
    };
    let mut bwd_len = 0usize;
    if bwd_room > 0 {
        let a = after.expect("room");
        let (mut score, mut best) = (0i64, (0i64, 0usize));
        let mut i = 0;
        while i < bwd_room {
            let k = (bwd_room - i).min(4096);
            let o = old.get(a - (i + k) as u64, k)?.expect("inside OLD");
            best_suffix(o, &region[n - i - k..n - i], i, &mut score, &mut best);
            if score <= best.0 - GIVE_UP {
                break;
            }
            i += k;
        }
        bwd_len = best.1;
    }
    let same = matches!((before, after), (Some(b), Some(a)) if b + n as u64 == a);
    if same && fwd_len + bwd_len >= n {
        // One diagonal on both sides, covering the region between them.
        out.push(Op::Delta {
            from: before.expect("same"),
            len: n as u64,
        });
        return Ok(());
    }
    if fwd_len + bwd_len > n {
        // Overlap: the split that keeps the highest total score. Moving the split one
        // byte right adds that byte's forward score and takes away its backward one.
        let (b, a) = (before.expect("forward"), after.expect("backward"));
        let lo = n - bwd_len;
        let span = fwd_len - lo;
        let of = old.get(b + lo as u64, span)?.expect("inside OLD").to_vec();
        let ob = old
            .get(a - (n - lo) as u64, span)?
            .expect("inside OLD")
            .to_vec();
        let (mut sum, mut best, mut split) = (0i64, 0i64, lo);
        for i in 0..span {
            let y = region[lo + i];
            sum += i64::from(of[i] == y) - i64::from(ob[i] == y);
            if sum > best {
                (best, split) = (sum, lo + i + 1);
            }
        }
        fwd_len = split;
        bwd_len = n - split;
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

/// Ops being built: adjacent literals joined, deltas contiguous in OLD merged.
#[derive(Default)]
struct Out {
    ops: Vec<Op>,
}

impl Out {
    fn push(&mut self, op: Op) {
        if let Some(last) = self.ops.last_mut() {
            match (last, op) {
                (Op::Literal { len }, Op::Literal { len: more }) => {
                    *len += more;
                    return;
                }
                (
                    Op::Delta { from, len },
                    Op::Delta {
                        from: next,
                        len: more,
                    },
                ) if *from + *len == next => {
                    *len += more;
                    return;
                }
                _ => {}
            }
        }
        self.ops.push(op);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::apply_naive;
    use crate::seeds::SeedIndex;
    use proptest::prelude::*;

    fn settings(level: Level) -> Settings {
        let mut s = Settings::for_level(level).unwrap();
        s.cache_blocks = 4;
        s
    }

    /// The filled ops, the same whether OLD is in memory or read through the cache.
    fn run(old: &[u8], new: &[u8], ops: Vec<Op>, with_seeds: bool) -> Vec<Op> {
        let s = settings(Level::Default);
        let old_slice: &[u8] = old;
        let seeds = SeedIndex::build(
            &old_slice,
            old.len() as u64,
            s.seeds,
            crate::seeds::Gate::best(),
        )
        .unwrap();
        let mut c = OldCache::new(&old_slice, old.len() as u64, s.cache_blocks);
        let filled = fill_gaps(ops.clone(), new, &mut c, with_seeds.then_some(&seeds), &s).unwrap();
        let positional = crate::source::Unmapped(old);
        let mut c = OldCache::new(&positional, old.len() as u64, s.cache_blocks);
        let by_reads = fill_gaps(ops, new, &mut c, with_seeds.then_some(&seeds), &s).unwrap();
        assert_eq!(filled, by_reads);
        filled
    }

    fn literal_and_delta(ops: &[Op]) -> (u64, u64) {
        let sum = |f: fn(&Op) -> bool| ops.iter().filter(|o| f(o)).map(Op::len).sum::<u64>();
        (
            sum(|o| matches!(o, Op::Literal { .. })),
            sum(|o| matches!(o, Op::Delta { .. })),
        )
    }

    /// Pseudo-random bytes (the make tests' generator, every byte value).
    fn random(len: usize, seed: u64) -> Vec<u8> {
        crate::make::tests::random(len, seed, 256)
    }

    proptest! {
        #[test]
        fn filled_gaps_still_rebuild_new(
            old in proptest::collection::vec(0u8..4, 1..2000),
            pieces in proptest::collection::vec((any::<bool>(), 1usize..300, any::<u64>()), 1..12),
            noise in proptest::collection::vec(any::<u64>(), 0..40),
            with_seeds in any::<bool>(),
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
            let filled = run(&old, &new, ops, with_seeds);
            prop_assert_eq!(filled.iter().map(Op::len).sum::<u64>(), new.len() as u64);
            prop_assert_eq!(apply_naive(&old, &new, &filled), new);
        }

        /// Rebuild noise over moved pieces: whatever the seeds find, NEW is rebuilt.
        #[test]
        fn seeded_gaps_rebuild_new(
            len in 0usize..20_000, seed in any::<u64>(),
            moves in proptest::collection::vec((any::<usize>(), 1usize..3000), 0..6),
            noise in 0usize..200,
        ) {
            let old = random(len, seed);
            let mut new = Vec::new();
            for &(at, n) in &moves {
                if !old.is_empty() {
                    let at = at % old.len();
                    new.extend_from_slice(&old[at..(at + n).min(old.len())]);
                }
                new.extend_from_slice(&random(n % 50, seed ^ n as u64));
            }
            if noise > 0 {
                for i in (0..new.len()).step_by(noise + 7) {
                    new[i] = new[i].wrapping_add(3);
                }
            }
            let ops = if new.is_empty() { vec![] } else { vec![Op::Literal { len: new.len() as u64 }] };
            let filled = run(&old, &new, ops, true);
            prop_assert_eq!(filled.iter().map(Op::len).sum::<u64>(), new.len() as u64);
            prop_assert_eq!(apply_naive(&old, &new, &filled), new);
        }
    }

    /// A walk's final (score, best).
    type Walk = (i64, (i64, usize));

    /// [`best_prefix`] and [`best_suffix`] of `a` and `b` (equal lengths), each beside the
    /// byte loop that walks the same pairs.
    fn kernels_and_byte_loops(a: &[u8], b: &[u8]) -> ((Walk, Walk), (Walk, Walk)) {
        let naive = |pairs: Vec<(u8, u8)>| {
            let (mut s, mut best) = (0i64, (0i64, 0usize));
            for (i, (x, y)) in pairs.into_iter().enumerate() {
                if s <= best.0 - GIVE_UP {
                    break;
                }
                s += if x == y { 1 } else { -1 };
                if s > best.0 {
                    best = (s, i + 1);
                }
            }
            (s, best)
        };
        let (mut s, mut best) = (0i64, (0i64, 0usize));
        best_prefix(a, b, 0, &mut s, &mut best);
        let fwd = (
            (s, best),
            naive(a.iter().copied().zip(b.iter().copied()).collect()),
        );
        let (mut s, mut best) = (0i64, (0i64, 0usize));
        best_suffix(a, b, 0, &mut s, &mut best);
        let pairs = a.iter().rev().copied().zip(b.iter().rev().copied());
        let bwd = ((s, best), naive(pairs.collect()));
        (fwd, bwd)
    }

    proptest! {
        /// The word-at-a-time kernels against byte loops.
        #[test]
        fn kernels_are_the_byte_loops(
            a in proptest::collection::vec(0u8..3, 0..2000),
            b in proptest::collection::vec(0u8..3, 0..2000),
        ) {
            let n = a.len().min(b.len());
            let naive = (0..n).filter(|&i| a[i] == b[i]).count();
            prop_assert_eq!(count_equal(&a, &b), naive);
            let (a, b) = (&a[..n], &b[..n]);
            let (fwd, bwd) = kernels_and_byte_loops(a, b);
            prop_assert_eq!(fwd.0, fwd.1);
            prop_assert_eq!(bwd.0, bwd.1);
        }
    }

    proptest! {
        /// The extension kernels against byte loops on mostly equal bytes (long runs of
        /// equal words, a best that moves inside words, walks that give up).
        #[test]
        fn extensions_are_the_byte_loops_on_near_copies(
            a in proptest::collection::vec(any::<u8>(), 0..3000),
            changes in proptest::collection::vec((any::<usize>(), 1usize..400), 0..40),
        ) {
            let mut b = a.clone();
            for &(at, run) in &changes {
                if !b.is_empty() {
                    let at = at % b.len();
                    for x in &mut b[at..(at + run % 300).min(a.len())] {
                        *x = x.wrapping_add(1);
                    }
                }
            }
            let (fwd, bwd) = kernels_and_byte_loops(&a, &b);
            prop_assert_eq!(fwd.0, fwd.1);
            prop_assert_eq!(bwd.0, bwd.1);
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
        let filled = run(&old, &new, ops, false);
        assert_eq!(apply_naive(&old, &new, &filled), new);
        assert_eq!(literal_and_delta(&filled), (0, 2000), "{filled:?}");
    }

    #[test]
    fn unrelated_bytes_stay_literal() {
        let old = vec![1u8; 3000];
        // One byte copied, then bytes that nowhere agree with OLD's diagonal.
        let mut new = vec![1u8];
        new.extend((1..3000u32).map(|i| (i % 200 + 2) as u8));
        let ops = vec![Op::Copy { from: 0, len: 1 }, Op::Literal { len: 2999 }];
        assert_eq!(run(&old, &new, ops.clone(), true), ops);
    }

    /// Pieces of OLD moved and shuffled, each with a changed byte every 40: no exact
    /// anchor anywhere, and no neighbouring diagonal. The seeds find every piece.
    #[test]
    fn seeds_find_moved_pieces_with_rebuild_noise() {
        let old = random(200_000, 5);
        let mut new = Vec::new();
        for k in [7usize, 2, 11, 4, 0, 9] {
            new.extend_from_slice(&old[k * 15_000..k * 15_000 + 10_000]);
        }
        for i in (0..new.len()).step_by(40) {
            new[i] = new[i].wrapping_add(0x40);
        }
        let ops = vec![Op::Literal {
            len: new.len() as u64,
        }];
        let without = run(&old, &new, ops.clone(), false);
        assert_eq!(without, ops);
        let with = run(&old, &new, ops, true);
        assert_eq!(apply_naive(&old, &new, &with), new);
        let (literal, delta) = literal_and_delta(&with);
        // Each piece's first seed lies within a few dozen bytes of its start.
        assert!(
            literal < 6 * 200,
            "{literal} literal, {delta} delta: {with:?}"
        );
    }
}
