//! Content-defined chunking: where a chunk of OLD or NEW ends, decided by its content only,
//! so an insertion shifts the cuts after it rather than changing them.
//!
//! The rules (C. Bloom's, "Patcher" parts 4 and 6), for a chunk starting at `s`:
//!
//! - The gear hash `h = (h << 1) + GEAR[byte]` is rolled from byte `max(s, s + min - 64)`
//!   on; after 64 bytes it depends only on the last 64 (the window).
//! - A chunk is never shorter than `min = avg / 4`: the first byte `i >= s + min - 1` whose
//!   hash is at most `u64::MAX / avg` ends it (the cut is after `i`). Any average works,
//!   not only powers of two.
//! - A run of 32 or more zero bytes is a chunk of its own ([`Kind::Zero`], as long as the
//!   run). A data chunk ends where such a run starts, even before `min`.
//! - A chunk is never longer than `max = 4 * avg`. When no hash falls under the threshold
//!   by then, the cut goes after the byte whose hash was the smallest of the candidates
//!   (the first of them on a tie): still content-defined, so OLD and NEW resynchronise,
//!   never a forced cut at `max`.
//!
//! [`cut`] is the scan (the hot kernel: one shift, one add and one compare a byte; the rare
//! chunk that reaches `max` is scanned again for its smallest hash), [`cut_naive`] the
//! oracle it is checked against.

/// The gear table: 256 fixed pseudo-random words (splitmix64 from a fixed seed), none zero,
/// so runs of a repeated byte still move the hash. A `static`, not a `const`: a const array
/// indexed at run time may be copied onto the stack at every use.
pub static GEAR: [u64; 256] = gear_table();

const fn gear_table() -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut state: u64 = 0x5357_4154_4843_4443; // "SWATHCDC"
    let mut i = 0;
    while i < 256 {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        t[i] = if z == 0 { 1 } else { z };
        i += 1;
    }
    t
}

/// Zero runs at least this long are chunks of their own.
pub const ZERO_RUN: usize = 32;

/// Chunk length parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Average length.
    pub avg: usize,
    /// Shortest chunk (but a chunk before a zero run, and the last chunk).
    pub min: usize,
    /// Longest chunk.
    pub max: usize,
    /// A hash at most this ends a chunk.
    pub threshold: u64,
}

impl Params {
    /// Parameters for chunks of `avg` bytes on average (64 bytes to 64 MiB).
    pub fn new(avg: usize) -> Result<Params, String> {
        if !(64..=64 << 20).contains(&avg) {
            return Err(format!(
                "the average chunk must be 64 bytes to 64 MiB, not {avg}"
            ));
        }
        Ok(Params {
            avg,
            min: avg / 4,
            max: avg * 4,
            threshold: u64::MAX / avg as u64,
        })
    }

    /// Bytes past a cut that can decide it: the longest chunk and a zero run's test.
    pub fn lookahead(&self) -> usize {
        self.max + ZERO_RUN
    }
}

/// What a chunk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Any bytes.
    Data,
    /// A run of at least [`ZERO_RUN`] zero bytes.
    Zero,
}

/// Where the zero run that starts at or after `from` (and is at least [`ZERO_RUN`] long
/// from its start, counted from `from` at the earliest) begins and ends, looking no
/// further than `limit` for its start. Any such run holds a whole 16-byte block at any
/// alignment, so aligned blocks are tested first and runs grown from them.
pub fn next_zero_run(data: &[u8], from: usize, limit: usize) -> Option<(usize, usize)> {
    let limit = limit.min(data.len());
    let mut block = from.div_ceil(16) * 16;
    while block + 16 <= data.len() && block < limit + ZERO_RUN {
        let word = u128::from_ne_bytes(data[block..block + 16].try_into().expect("16 bytes"));
        if word != 0 {
            block += 16;
            continue;
        }
        let mut start = block;
        while start > from && data[start - 1] == 0 {
            start -= 1;
        }
        let mut end = block + 16;
        while end < data.len() && data[end] == 0 {
            end += 1;
        }
        if end - start >= ZERO_RUN && start < limit {
            return Some((start, end));
        }
        if start >= limit {
            return None;
        }
        block = end.div_ceil(16) * 16;
    }
    None
}

/// The end of the chunk that starts at `s`, and its kind; `None` when `data` ends before
/// that is decided and `last` is false (more data follows). With `last`, the data's end
/// ends the final chunk.
///
/// The threshold scan runs first, over the chunk's whole possible span; only the bytes
/// before the cut it finds are then searched for a zero run (which would end the chunk
/// earlier), so each byte is searched about once.
#[inline]
pub fn cut(data: &[u8], s: usize, p: &Params, last: bool) -> Option<(usize, Kind)> {
    let len = data.len();
    debug_assert!(s < len);
    if data[s] == 0 {
        if let Some((z, e)) = next_zero_run(data, s, s + 1) {
            if z == s {
                // Its end is known once a non-zero byte follows, or at the end of input.
                return (e < len || last).then_some((e, Kind::Zero));
            }
        }
    }
    let limit = s + p.max;
    // Without `last`, zeros at the end of the data may be the start of a run: no cut can
    // be decided from there on.
    let seen = if last || data[len - 1] != 0 {
        len
    } else {
        let tail = data[s..].iter().rev().take_while(|&&b| b == 0).count();
        len - tail
    };
    if let Some(i) = threshold_cut(data, s, limit.min(seen), p) {
        // A zero run starting before the cut ends the chunk there instead.
        if let Some((z, _)) = next_zero_run(data, s, i + 1) {
            return Some((z, Kind::Data));
        }
        return Some((i + 1, Kind::Data));
    }
    if let Some((z, _)) = next_zero_run(data, s, limit) {
        if z <= seen {
            return Some((z, Kind::Data));
        }
    }
    if limit <= seen {
        return Some((smallest_hash(data, s, limit, p) + 1, Kind::Data));
    }
    // The input ends before the chunk could: with `last`, it ends the chunk.
    last.then_some((len, Kind::Data))
}

/// The first byte `i` in `[s + min - 1, end)` whose hash is at most the threshold.
#[inline]
fn threshold_cut(data: &[u8], s: usize, end: usize, p: &Params) -> Option<usize> {
    let first = s + p.min.max(1) - 1;
    if first >= end {
        return None;
    }
    let from = (s + p.min).saturating_sub(64).max(s);
    let mut h = 0u64;
    for &b in &data[from..first] {
        h = (h << 1).wrapping_add(GEAR[b as usize]);
    }
    let t = p.threshold;
    // Bytes go two at a time: the hash after both is `(h << 2) + (G[b0] << 1) + G[b1]`,
    // whose second term does not wait for `h`, so the dependent chain is one shift and one
    // add per two bytes; the hash after the first byte is computed beside it for its test.
    let span = &data[first..end];
    // Eight bytes a step, read as one word, tested together: one branch per eight bytes,
    // taken only near a cut, which is then found byte by byte.
    let words = span.chunks_exact(8);
    let rest = words.remainder();
    for (k, w8) in words.enumerate() {
        let mut hit = false;
        let mut g = h;
        for pair in w8.chunks_exact(2) {
            let g0 = GEAR[pair[0] as usize];
            let g1 = GEAR[pair[1] as usize];
            let g_odd = (g << 1).wrapping_add(g0);
            g = (g << 2).wrapping_add((g0 << 1).wrapping_add(g1));
            hit |= (g_odd <= t) | (g <= t);
        }
        if hit {
            for (j, &b) in w8.iter().enumerate() {
                h = (h << 1).wrapping_add(GEAR[b as usize]);
                if h <= t {
                    return Some(first + 8 * k + j);
                }
            }
            // Not reached: the same hashes, byte by byte, meet the same test. `h` is `g`.
            continue;
        }
        h = g;
    }
    let at = end - rest.len();
    for (j, &b) in rest.iter().enumerate() {
        h = (h << 1).wrapping_add(GEAR[b as usize]);
        if h <= t {
            return Some(at + j);
        }
    }
    None
}

/// The byte in `[s + min - 1, end)` with the smallest hash (the first on a tie).
#[cold]
fn smallest_hash(data: &[u8], s: usize, end: usize, p: &Params) -> usize {
    let first = s + p.min.max(1) - 1;
    let from = (s + p.min).saturating_sub(64).max(s);
    let mut h = 0u64;
    for &b in &data[from..first] {
        h = (h << 1).wrapping_add(GEAR[b as usize]);
    }
    let (mut best, mut at) = (u64::MAX, first);
    for (k, &b) in data[first..end].iter().enumerate() {
        h = (h << 1).wrapping_add(GEAR[b as usize]);
        if h < best || k == 0 {
            best = h;
            at = first + k;
        }
    }
    at
}

/// Every chunk of `data` from `s` on, as `(end, kind)`, stopping where a cut cannot be
/// decided without more data (unless `last`). Returns where the undecided rest starts.
pub fn cut_all(
    data: &[u8],
    mut s: usize,
    p: &Params,
    last: bool,
    out: &mut Vec<(usize, Kind)>,
) -> usize {
    while s < data.len() {
        match cut(data, s, p, last) {
            Some((e, k)) => {
                out.push((e, k));
                s = e;
            }
            None => break,
        }
    }
    s
}

/// The rules applied one byte at a time: the oracle of [`cut`] over a whole input.
pub fn cut_naive(data: &[u8], p: &Params) -> Vec<(usize, Kind)> {
    let mut out = Vec::new();
    let mut s = 0;
    while s < data.len() {
        // A zero run of at least ZERO_RUN bytes starting here?
        let zeros = data[s..].iter().take_while(|&&b| b == 0).count();
        if zeros >= ZERO_RUN {
            s += zeros;
            out.push((s, Kind::Zero));
            continue;
        }
        let run_start = (s + 1..data.len())
            .find(|&z| {
                data[z..].iter().take(ZERO_RUN).filter(|&&b| b == 0).count() == ZERO_RUN
                    && z + ZERO_RUN <= data.len()
            })
            .unwrap_or(usize::MAX);
        let mut h = 0u64;
        let hash_from = (s + p.min).saturating_sub(64).max(s);
        let mut cut_at = None;
        let mut smallest: Option<(u64, usize)> = None;
        let mut i = hash_from;
        while i < data.len() {
            if i >= run_start || i >= s + p.max {
                break;
            }
            h = (h << 1).wrapping_add(GEAR[data[i] as usize]);
            if i + 1 >= s + p.min {
                if h <= p.threshold {
                    cut_at = Some(i + 1);
                    break;
                }
                if smallest.is_none_or(|(b, _)| h < b) {
                    smallest = Some((h, i));
                }
            }
            i += 1;
        }
        let end = match cut_at {
            Some(c) => c,
            None if run_start < s + p.max && run_start <= data.len() => run_start,
            None if s + p.max <= data.len() => smallest.map_or(s + p.max, |(_, i)| i + 1),
            None => data.len(),
        };
        out.push((end, Kind::Data));
        s = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn data_strategy() -> impl Strategy<Value = Vec<u8>> {
        // Random bytes, zero runs of every length around 32, repeats.
        proptest::collection::vec(
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..3000),
                (0usize..80).prop_map(|n| vec![0u8; n]),
                (any::<u8>(), 0usize..500).prop_map(|(b, n)| vec![b; n]),
            ],
            0..8,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn the_scan_matches_the_oracle(data in data_strategy(), avg in prop_oneof![Just(64usize), Just(100), Just(256), Just(1000), Just(1024)]) {
            let p = Params::new(avg).unwrap();
            let mut got = Vec::new();
            let rest = cut_all(&data, 0, &p, true, &mut got);
            prop_assert_eq!(rest, data.len());
            prop_assert_eq!(got, cut_naive(&data, &p));
        }

        #[test]
        fn an_undecided_scan_agrees_with_the_whole_one(data in data_strategy(), avg in prop_oneof![Just(64usize), Just(256)], keep in 0usize..20000) {
            // Cuts decided on a prefix are those of the whole input.
            let p = Params::new(avg).unwrap();
            let whole = cut_naive(&data, &p);
            let prefix = &data[..keep.min(data.len())];
            let mut got = Vec::new();
            cut_all(prefix, 0, &p, false, &mut got);
            prop_assert_eq!(&whole[..got.len()], &got[..]);
        }
    }

    #[test]
    fn the_rules_hold_on_random_data() {
        let mut x = 1u64;
        let data: Vec<u8> = (0..4_000_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 40) as u8
            })
            .collect();
        for avg in [64usize, 1000, 4096] {
            let p = Params::new(avg).unwrap();
            let mut cuts = Vec::new();
            cut_all(&data, 0, &p, true, &mut cuts);
            let mut s = 0;
            let mut lens = Vec::new();
            for (k, &(e, kind)) in cuts.iter().enumerate() {
                assert_eq!(kind, Kind::Data);
                let len = e - s;
                assert!(len <= p.max, "{len}");
                if k + 1 < cuts.len() {
                    assert!(len >= p.min, "{len}");
                }
                lens.push(len);
                s = e;
            }
            // The mean length is near the average (min + avg, as the skip adds min).
            let mean = data.len() as f64 / cuts.len() as f64;
            assert!(
                mean > 0.8 * avg as f64 && mean < 1.6 * avg as f64,
                "{avg}: {mean}"
            );
            // Some chunks reach the longest length's rule, cut at their smallest hash.
            assert!(lens.iter().any(|&l| l > 3 * avg), "{avg}");
        }
    }

    #[test]
    fn zero_runs_of_32_are_chunks_and_of_31_are_not() {
        let p = Params::new(64).unwrap();
        let mut data = vec![7u8; 100];
        data.extend(vec![0u8; 32]);
        data.extend(vec![9u8; 100]);
        let cuts = cut_naive(&data, &p);
        assert!(cuts.contains(&(132, Kind::Zero)), "{cuts:?}");
        let mut got = Vec::new();
        cut_all(&data, 0, &p, true, &mut got);
        assert_eq!(got, cuts);
        let mut data = vec![7u8; 100];
        data.extend(vec![0u8; 31]);
        data.extend(vec![9u8; 100]);
        let mut got = Vec::new();
        cut_all(&data, 0, &p, true, &mut got);
        assert!(got.iter().all(|&(_, k)| k == Kind::Data), "{got:?}");
    }

    #[test]
    fn golden_cuts_are_pinned() {
        // The first cuts of a fixed input; the numbers came from cut_naive once. A change
        // here is a change of the rules, which makes old signatures incompatible.
        let mut x = 0x0123_4567_89ab_cdefu64;
        let data: Vec<u8> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        let p = Params::new(4096).unwrap();
        let cuts: Vec<usize> = cut_naive(&data, &p).iter().take(8).map(|c| c.0).collect();
        assert_eq!(cuts, GOLDEN);
        let mut fast = Vec::new();
        cut_all(&data, 0, &p, true, &mut fast);
        let fast: Vec<usize> = fast.iter().take(8).map(|c| c.0).collect();
        assert_eq!(fast, GOLDEN);
    }

    const GOLDEN: [usize; 8] = [8073, 15599, 20192, 29943, 40108, 43744, 46804, 49246];
}
