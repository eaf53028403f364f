//! Seeds: short windows of OLD, sampled by content, found again from NEW.
//!
//! The approximate matcher ([`crate::approx`]) needs to know where in OLD a stretch of NEW
//! came from when no exact chunk anchors it: in a rebuilt program almost every kilobyte
//! has a changed address, so 1 KiB chunks rarely match, but 16-byte windows between the
//! changes still do. Indexing every window of OLD (a suffix array, as bsdiff and
//! HDiffPatch do) costs many bytes of memory per byte of OLD and most of their time. Here
//! only a sample is kept: a window is a *seed* when the product of its first eight bytes
//! and a constant falls below a threshold (one window in `2^rate_bits` on average), a
//! choice made by the bytes alone, so the same content is sampled in OLD and in NEW and a
//! lookup is needed only at NEW's sampled positions; only a seed's window is hashed whole
//! (its hash picks its bucket). The table holds 8 bytes a slot in buckets of four, about 16 bytes
//! per seed, and the sampling rate is lowered for a large OLD so that it never holds more
//! seeds than the options allow.
//!
//! The index is built on all cores: OLD is scanned in groups of pieces (where it lies when
//! it is mapped, else read positionally), each worker putting the seeds it finds straight
//! into their buckets with atomic compare-and-swaps. A bucket keeps its entries in order
//! of their offsets and drops the largest when full, so it ends up with the four first
//! occurrences in OLD whatever order the workers came in: the same table whatever the
//! thread count.

use std::io;

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::source::ReadAt;

/// The hash multipliers (odd, with well-spread bits).
const K1: u64 = 0x9E37_79B9_7F4A_7C15;
const K2: u64 = 0xD6E8_FEB8_6659_FD93;

/// Entries per bucket.
pub const WAYS: usize = 4;

/// Bits of an entry holding the seed's offset in OLD (plus one; 0 is an empty slot).
const POS_BITS: u32 = 40;
const POS_MASK: u64 = (1 << POS_BITS) - 1;

/// How seeds are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedParams {
    /// Bytes in a seed's window (8 to 16).
    pub window: usize,
    /// One window in `2^rate_bits` is a seed, at least.
    pub rate_bits: u32,
    /// The most seeds the table may hold (the rate is lowered to fit).
    pub max_seeds: u64,
}

impl SeedParams {
    /// The rate, lowered until OLD's expected seeds fit `max_seeds`.
    pub fn rate_for(&self, old_len: u64) -> u32 {
        let mut bits = self.rate_bits;
        while bits < 30 && (old_len >> bits) > self.max_seeds {
            bits += 1;
        }
        bits
    }
}

/// The 64-bit hash of the window starting at `at` in `data` (`window` bytes, 8 to 16):
/// its first and last eight bytes, multiplied and mixed. Its top bits depend on every
/// byte of the window.
#[inline(always)]
pub fn window_hash(data: &[u8], at: usize, window: usize) -> u64 {
    let a = u64::from_le_bytes(data[at..at + 8].try_into().expect("8 bytes"));
    let b = u64::from_le_bytes(
        data[at + window - 8..at + window]
            .try_into()
            .expect("8 bytes"),
    );
    (a.wrapping_mul(K1) ^ b.rotate_left(23)).wrapping_mul(K2)
}

/// True when the window's first and last eight bytes are one byte repeated (zeros,
/// padding): such windows occur everywhere and say nothing about where NEW came from.
#[inline(always)]
fn degenerate(data: &[u8], at: usize, window: usize) -> bool {
    let a = u64::from_le_bytes(data[at..at + 8].try_into().expect("8 bytes"));
    let b = u64::from_le_bytes(
        data[at + window - 8..at + window]
            .try_into()
            .expect("8 bytes"),
    );
    a == b && a == a.rotate_left(8)
}

/// True when the window starting at `at` is sampled: the product of its first eight bytes
/// and an odd constant, whose top bits depend on all 64 bits, is at most `limit`. One
/// multiplication a position; the full [`window_hash`] is computed only for the sampled.
#[inline(always)]
fn gate(word: u64, limit: u64) -> bool {
    word.wrapping_mul(K3) <= limit
}

/// The gate's multiplier (odd, well-spread bits, unrelated to the hash's).
const K3: u64 = 0xA076_1D64_78BD_642F;

/// Calls `f(position, hash)` for every seed among the windows starting in `from..to` of
/// `data` (windows must fit in `data`), in order.
#[inline]
pub fn for_each_seed(
    data: &[u8],
    from: usize,
    to: usize,
    window: usize,
    rate_bits: u32,
    f: impl FnMut(usize, u64),
) {
    for_each_seed_gated(Gate::best(), data, from, to, window, rate_bits, f)
}

/// [`for_each_seed`] with the positions gated by `gate` (which the CPU must have:
/// [`Gate::best`] or [`Gate::Scalar`]).
#[inline]
pub fn for_each_seed_gated(
    gate: Gate,
    data: &[u8],
    from: usize,
    to: usize,
    window: usize,
    rate_bits: u32,
    mut f: impl FnMut(usize, u64),
) {
    assert!(
        gate == Gate::Scalar || gate == Gate::best(),
        "{gate:?} is not available"
    );
    let last = match data.len().checked_sub(window) {
        Some(l) => l + 1,
        None => return,
    };
    let to = to.min(last);
    let limit = u64::MAX >> rate_bits;
    let wide = gate == Gate::Avx512;
    let mut p = from;
    while p < to {
        // 64 positions gated without a branch, into a mask; then the sampled ones.
        let n = (to - p).min(64);
        let mut mask = if wide && p + 128 <= data.len() {
            // SAFETY: the CPU has the features (`Gate::best`), and the 128 bytes from `p`
            // are inside `data`.
            unsafe { gate64_avx512(data.as_ptr().add(p), limit) }
        } else {
            gate64(&data[p..p + n + 7], n, limit)
        };
        if n < 64 {
            mask &= (1u64 << n) - 1;
        }
        while mask != 0 {
            let at = p + mask.trailing_zeros() as usize;
            mask &= mask - 1;
            if !degenerate(data, at, window) {
                f(at, window_hash(data, at, window));
            }
        }
        p += n;
    }
}

/// How the gate is applied to 64 positions at a time (all give the same masks; the
/// property tests hold each against [`Gate::Scalar`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// A multiplication a position, in general-purpose registers.
    Scalar,
    /// Eight positions a vector: each position's eight bytes gathered by a byte
    /// permutation, multiplied and compared eight at a time (AVX-512 F, DQ, BW and VBMI):
    /// 3.5 to 2.3 cycles a byte over a rebuilt library (jaxlib), with the seeds' hashing.
    Avx512,
}

impl Gate {
    /// The fastest this CPU has ([`Gate::Scalar`] is kept for measurements:
    /// [`crate::tuning::Tuning::seed_gate`]).
    pub fn best() -> Gate {
        static BEST: std::sync::OnceLock<Gate> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vbmi")
            {
                return Gate::Avx512;
            }
            Gate::Scalar
        })
    }
}

/// The gate's mask of the `n` (at most 64) positions starting at `d`'s first byte
/// (`d` holds `n + 7` bytes): bit `i` set when position `i` is sampled.
#[inline(always)]
fn gate64(d: &[u8], n: usize, limit: u64) -> u64 {
    // One byte (0 or 1) a position, then eight bytes at a time to eight bits: a
    // multiplication gathers bit 0 of each byte into the top byte (the products land on
    // distinct bits, no carries). No shift by a variable amount in the loop.
    let mut flags = [0u8; 64];
    for (i, f) in flags[..n].iter_mut().enumerate() {
        let word = u64::from_le_bytes(d[i..i + 8].try_into().expect("8 bytes"));
        *f = u8::from(gate(word, limit));
    }
    let mut mask = 0u64;
    for (k, eight) in flags.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(eight.try_into().expect("8 bytes"));
        mask |= (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    mask
}

/// For the eight positions `8j..8j + 8` of a block, the indices of their eight bytes in
/// the block's 128 bytes: qword `l` of row `j` is bytes `8j + l .. 8j + l + 8`.
const GATHER: [[u8; 64]; 8] = {
    let mut t = [[0u8; 64]; 8];
    let mut j = 0;
    while j < 8 {
        let mut i = 0;
        while i < 64 {
            t[j][i] = (8 * j + i / 8 + i % 8) as u8;
            i += 1;
        }
        j += 1;
    }
    t
};

/// [`gate64`] of the 64 positions at `d`, eight at a time in vectors.
///
/// # Safety
/// The CPU must have AVX-512 F, DQ, BW and VBMI, and the 128 bytes at `d` must be readable.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vbmi")]
unsafe fn gate64_avx512(d: *const u8, limit: u64) -> u64 {
    use std::arch::x86_64::*;
    // SAFETY: the caller guarantees the 128 bytes are readable; unaligned loads.
    let (lo, hi) = unsafe {
        (
            _mm512_loadu_si512(d.cast()),
            _mm512_loadu_si512(d.add(64).cast()),
        )
    };
    let k = _mm512_set1_epi64(K3 as i64);
    let lim = _mm512_set1_epi64(limit as i64);
    let mut mask = 0u64;
    for (j, idx) in GATHER.iter().enumerate() {
        // SAFETY: GATHER's rows are 64 bytes.
        let idx = unsafe { _mm512_loadu_si512(idx.as_ptr().cast()) };
        let words = _mm512_permutex2var_epi8(lo, idx, hi);
        let products = _mm512_mullo_epi64(words, k);
        let sampled = _mm512_cmple_epu64_mask(products, lim);
        mask |= u64::from(sampled) << (8 * j);
    }
    mask
}

/// Not reached off x86-64 ([`Gate::best`] is scalar there).
#[cfg(not(target_arch = "x86_64"))]
unsafe fn gate64_avx512(_d: *const u8, _limit: u64) -> u64 {
    unreachable!("no AVX-512 off x86-64")
}

/// OLD's seeds by hash.
///
/// The table is `WAYS` entries a bucket, each the seed's tag (high bits) and its offset in
/// OLD plus one (low [`POS_BITS`] bits), 0 when empty; a bucket starts at a multiple of 32
/// bytes (`base`), so a lookup touches one cache line.
#[derive(Debug)]
pub struct SeedIndex {
    slots: Vec<u64>,
    base: usize,
    bucket_bits: u32,
    params: SeedParams,
    rate_bits: u32,
    seeds: u64,
    /// How the gate is applied, building and looking up.
    gate: Gate,
}

/// Bytes of OLD one worker scans at a time while building.
const PIECE: usize = 4 << 20;

impl SeedIndex {
    /// Seeds of the first `len` bytes of `old`, built by the current rayon pool, the
    /// positions gated by `gate` (which the CPU must have: [`Gate::best`] or
    /// [`Gate::Scalar`]), as NEW's will be ([`SeedIndex::gate`]).
    pub fn build(
        old: &dyn ReadAt,
        len: u64,
        params: SeedParams,
        gate: Gate,
    ) -> io::Result<SeedIndex> {
        Self::build_in(old, len, params, gate, PIECE)
    }

    /// [`SeedIndex::build`] reading OLD in pieces of `piece` bytes.
    fn build_in(
        old: &dyn ReadAt,
        len: u64,
        params: SeedParams,
        gate: Gate,
        piece: usize,
    ) -> io::Result<SeedIndex> {
        assert!((8..=16).contains(&params.window));
        assert!(piece < u32::MAX as usize);
        let rate_bits = params.rate_for(len);
        let expected = (len >> rate_bits).max(1);
        // About two seeds a bucket: few buckets overflow (what a full one drops is a
        // repeat, mostly).
        let bucket_bits = (expected.div_ceil(2).next_power_of_two().trailing_zeros()).clamp(4, 32);
        let w = params.window;
        let threads = rayon::current_num_threads().max(1);
        // 32-byte aligned buckets from `base`, in huge pages (zeroed on all cores).
        let mut slots = fresh_slots((WAYS << bucket_bits) + WAYS);
        let base = (slots.as_ptr() as usize).wrapping_neg() % 32 / 8;
        let pieces = len.div_ceil(piece as u64) as usize;
        // OLD in memory (mapped) is scanned where it lies; otherwise each piece is read.
        let whole = old.as_bytes().filter(|b| b.len() as u64 >= len);
        // OLD is scanned in groups of consecutive pieces, a group a task, each seed put
        // into its bucket as it is found ([`insert`]: a bucket keeps the seeds with the
        // smallest offsets, whatever the order they come in, so the table is the same
        // whatever the thread count). Lists of seeds per range of buckets, filled into the
        // table afterwards, cost as much again: 12 bytes a seed written and read back.
        let groups = pieces.min(threads * 8).max(1);
        let group = |g: usize| (g * pieces / groups)..((g + 1) * pieces / groups);
        // The bytes of piece `k` (windows that start in it, so w - 1 bytes of the next).
        let span = |k: usize| {
            let at = k as u64 * piece as u64;
            (at, ((len - at) as usize).min(piece + w - 1))
        };
        let table = as_atomic(&mut slots[base..base + (WAYS << bucket_bits)]);
        let seeds: u64 = (0..groups)
            .into_par_iter()
            .map_init(Vec::new, |buf: &mut Vec<u8>, g| -> io::Result<u64> {
                // Each bucket is a cache miss: a seed's bucket is asked for when it is found,
                // and the seed put in it AHEAD seeds later.
                const AHEAD: usize = 8;
                let mut ring = [(0usize, 0u64); AHEAD];
                let (mut found, mut seeds) = (0usize, 0u64);
                for k in group(g) {
                    let (at, n) = span(k);
                    let bytes: &[u8] = match whole {
                        Some(b) => &b[at as usize..at as usize + n],
                        None => {
                            buf.resize(n, 0);
                            old.read_exact_at(buf, at)?;
                            buf
                        }
                    };
                    for_each_seed_gated(gate, bytes, 0, piece.min(n), w, rate_bits, |p, h| {
                        let pos = at + p as u64;
                        if pos < POS_MASK {
                            let (b, tag) = split(h, bucket_bits);
                            prefetch(table.as_ptr().wrapping_add(b * WAYS));
                            let slot = &mut ring[found % AHEAD];
                            if found >= AHEAD {
                                insert(&table[slot.0 * WAYS..slot.0 * WAYS + WAYS], slot.1);
                            }
                            *slot = (b, (tag << POS_BITS) | (pos + 1));
                            found += 1;
                        }
                    });
                }
                for &(b, e) in &ring[..found.min(AHEAD)] {
                    insert(&table[b * WAYS..b * WAYS + WAYS], e);
                }
                seeds += found as u64;
                Ok(seeds)
            })
            .try_reduce(|| 0, |a, b| Ok(a + b))?;
        Ok(SeedIndex {
            slots,
            base,
            bucket_bits,
            params,
            rate_bits,
            seeds,
            gate,
        })
    }

    /// How the gate is applied to positions, OLD's and NEW's alike.
    pub fn gate(&self) -> Gate {
        self.gate
    }

    /// The entries of bucket `b`.
    #[inline]
    fn bucket(&self, b: usize) -> &[u64] {
        let at = self.base + b * WAYS;
        &self.slots[at..at + WAYS]
    }

    /// The parameters it was built with.
    pub fn params(&self) -> SeedParams {
        self.params
    }

    /// The sampling rate used (one window in `2^rate_bits`).
    pub fn rate_bits(&self) -> u32 {
        self.rate_bits
    }

    /// Seeds found in OLD (some of which a full bucket may have dropped).
    pub fn seeds(&self) -> u64 {
        self.seeds
    }

    /// Bytes of the table.
    pub fn table_bytes(&self) -> u64 {
        (self.slots.len() * 8) as u64
    }

    /// OLD offsets of the seeds with hash `h` (and some whose hash merely shares the
    /// bucket and tag: verify before use), into `out`; how many.
    #[inline]
    pub fn lookup(&self, h: u64, out: &mut [u64; WAYS]) -> usize {
        let (b, tag) = split(h, self.bucket_bits);
        let mut n = 0;
        for &e in self.bucket(b) {
            if e == 0 {
                break;
            }
            if e >> POS_BITS == tag {
                out[n] = (e & POS_MASK) - 1;
                n += 1;
            }
        }
        n
    }

    /// Hints the processor to fetch the bucket of hash `h` (a lookup soon follows).
    #[inline]
    pub fn prefetch(&self, h: u64) {
        let (b, _) = split(h, self.bucket_bits);
        prefetch(self.slots.as_ptr().wrapping_add(self.base + b * WAYS));
    }
}

/// Puts entry `e` into `bucket`, whose entries are kept in order of their offsets in OLD,
/// the smallest first, with the empty ones (0) after them: `e` goes before the first entry
/// with a larger offset, which moves on to the next slot, and so on; what is pushed out of
/// the last slot (or `e` itself, larger than all four) is dropped. Done with atomic
/// compare-and-swaps, so that workers fill the table at once: an entry is dropped only when
/// four with smaller offsets were in the bucket, and a slot's offset only decreases, so the
/// bucket ends up with the four smallest offsets whatever order the entries came in.
#[inline]
fn insert(bucket: &[AtomicU64], mut e: u64) {
    let pos = |x: u64| x & POS_MASK;
    for slot in bucket {
        let mut cur = slot.load(Ordering::Relaxed);
        loop {
            if cur != 0 && pos(cur) < pos(e) {
                break;
            }
            match slot.compare_exchange_weak(cur, e, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) if cur == 0 => return,
                Ok(_) => {
                    e = cur;
                    break;
                }
                Err(now) => cur = now,
            }
        }
    }
}

/// The slots as atomics, for the workers that fill them at once.
fn as_atomic(slots: &mut [u64]) -> &[AtomicU64] {
    const _: () = assert!(std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>());
    // SAFETY: `AtomicU64` has the size and alignment of `u64` (asserted above), the slice
    // is borrowed mutably for as long as the atomics are, so nothing else reads or writes
    // it meanwhile, and every bit pattern is a valid value of both.
    unsafe { &*(slots as *mut [u64] as *const [AtomicU64]) }
}

/// `n` zeroed slots. The table is read and written at random, one cache miss and, with
/// 4 KiB pages, one page walk per access: the kernel is asked for transparent huge pages
/// before the slots are first touched (after, it would not give them). The slots are then
/// zeroed by writes on all cores: left to the allocator's zeroed pages, the first access
/// to each page, a read, maps the shared zero page, and the write after it copies the page
/// and flushes every core's TLB (on a 200 MB OLD, a fifth of the whole make's time).
fn fresh_slots(n: usize) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::with_capacity(n);
    advise_huge_pages(v.as_ptr() as usize, n * 8);
    v.spare_capacity_mut()[..n]
        .par_chunks_mut(1 << 16)
        .for_each(|c| c.fill(std::mem::MaybeUninit::new(0)));
    // SAFETY: the first `n` slots of the capacity were all initialised just above.
    unsafe { v.set_len(n) };
    v
}

/// Asks for transparent huge pages over the whole 2 MiB pages inside `[start, start+len)`.
fn advise_huge_pages(start: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    let from = start.next_multiple_of(HUGE);
    let to = (start + len) / HUGE * HUGE;
    if to <= from {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: MADV_HUGEPAGE is a hint about memory this process owns (the range lies inside
    // one live allocation); it never changes the memory's contents or validity. Failure
    // (no THP support) leaves ordinary pages, so the result is ignored.
    unsafe {
        libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
    }
}

/// Hints the processor to fetch the cache line at `p` (any address: nothing is read).
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, whatever the address, and reads
    // nothing the program sees.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A seed hash's bucket and tag: its top `bucket_bits` pick the bucket, the next ones (up
/// to 24) are the tag.
#[inline(always)]
fn split(h: u64, bucket_bits: u32) -> (usize, u64) {
    let b = (h >> (64 - bucket_bits)) as usize;
    let rest = h << bucket_bits;
    let tag = rest >> (64 - (64 - POS_BITS));
    (b, tag)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn params(window: usize, rate_bits: u32) -> SeedParams {
        SeedParams {
            window,
            rate_bits,
            max_seeds: u64::MAX,
        }
    }

    /// The naive oracle: every window hashed on its own, kept when below the threshold.
    fn naive_seeds(data: &[u8], p: &SeedParams) -> Vec<(usize, u64)> {
        let limit = u64::MAX >> p.rate_bits;
        let mut out = Vec::new();
        if data.len() < p.window {
            return out;
        }
        for at in 0..=data.len() - p.window {
            let w = &data[at..at + p.window];
            let a = u64::from_le_bytes(w[..8].try_into().unwrap());
            let b = u64::from_le_bytes(w[p.window - 8..].try_into().unwrap());
            let h = (a.wrapping_mul(K1) ^ b.rotate_left(23)).wrapping_mul(K2);
            let same = a == b && w[..8].iter().all(|&x| x == w[0]);
            if a.wrapping_mul(K3) <= limit && !same {
                out.push((at, h));
            }
        }
        out
    }

    proptest! {
        #[test]
        fn every_gate_gives_the_scalar_mask(
            d in proptest::collection::vec(any::<u8>(), 128..200),
            zeros in 0usize..128,
            rate_bits in 0u32..8,
        ) {
            // Some blocks mostly zeros or one byte: degenerate words, products of 0.
            let mut d = d;
            d[..zeros].iter_mut().for_each(|b| *b = 0);
            let limit = u64::MAX >> rate_bits;
            let want = gate64(&d[..71], 64, limit);
            let naive = (0..64).fold(0u64, |m, i| {
                let w = u64::from_le_bytes(d[i..i + 8].try_into().unwrap());
                m | (u64::from(gate(w, limit)) << i)
            });
            prop_assert_eq!(want, naive);
            if Gate::best() == Gate::Avx512 {
                // SAFETY: the CPU has the features, and `d` holds 128 bytes.
                let got = unsafe { gate64_avx512(d.as_ptr(), limit) };
                prop_assert_eq!(got, want);
            }
        }

        #[test]
        fn seeds_are_the_naive_scans(
            len in 0usize..3000, seed in any::<u64>(), alphabet in 1u16..257,
            window in 8usize..17, rate_bits in 0u32..6,
        ) {
            let d = crate::make::tests::random(len, seed, alphabet);
            let p = params(window, rate_bits);
            let mut got = Vec::new();
            for_each_seed(&d, 0, d.len(), window, rate_bits, |at, h| got.push((at, h)));
            prop_assert_eq!(got, naive_seeds(&d, &p));
        }

        #[test]
        fn the_index_finds_what_a_map_of_first_occurrences_finds(
            len in 0usize..20_000, seed in any::<u64>(), alphabet in 2u16..257,
            window in 8usize..17, rate_bits in 0u32..4, piece_k in 0usize..3, threads in 1usize..4,
        ) {
            let d = crate::make::tests::random(len, seed, alphabet);
            let p = params(window, rate_bits);
            let piece = [1usize << 12, 7001, 1 << 20][piece_k];
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let idx = pool.install(|| SeedIndex::build_in(&&d[..], d.len() as u64, p, Gate::best(), piece)).unwrap();
            // OLD in memory is scanned in place, a file read piece by piece: the same table.
            let unmapped = crate::source::Unmapped(&d);
            let read = pool.install(|| SeedIndex::build_in(&unmapped, d.len() as u64, p, Gate::Scalar, piece)).unwrap();
            let table = |i: &SeedIndex| i.slots[i.base..i.base + (WAYS << i.bucket_bits)].to_vec();
            prop_assert_eq!(table(&read), table(&idx));
            // Oracle: each distinct window's first WAYS offsets (a bucket holds no more,
            // and may hold fewer when other seeds share it).
            let mut first: HashMap<&[u8], Vec<usize>> = HashMap::new();
            let seeds = naive_seeds(&d, &p);
            prop_assert_eq!(idx.seeds(), seeds.len() as u64);
            for &(at, _) in &seeds {
                first.entry(&d[at..at + window]).or_default().push(at);
            }
            let mut out = [0u64; WAYS];
            for &(at, h) in &seeds {
                let n = idx.lookup(h, &mut out);
                let found: Vec<usize> = out[..n].iter().map(|&x| x as usize)
                    .filter(|&o| d[o..o + window] == d[at..at + window]).collect();
                let want = &first[&d[at..at + window]];
                // Whatever was found is an occurrence, in OLD's order, among the first ones.
                prop_assert!(found.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(found.iter().all(|o| want.contains(o)));
                // A bucket drops a seed only when full.
                if found.is_empty() {
                    let (b, _) = split(h, idx.bucket_bits);
                    prop_assert!(idx.bucket(b).iter().all(|&e| e != 0));
                } else {
                    // Entries go in in OLD's order: a full bucket drops later occurrences only.
                    prop_assert_eq!(found[0], want[0]);
                }
            }
        }
    }

    #[test]
    fn a_large_old_is_sampled_more_thinly() {
        let p = SeedParams {
            window: 16,
            rate_bits: 3,
            max_seeds: 1 << 20,
        };
        assert_eq!(p.rate_for(1 << 20), 3);
        assert_eq!(p.rate_for(1 << 23), 3);
        assert_eq!(p.rate_for(1 << 24), 4);
        assert_eq!(p.rate_for(1 << 34), 14);
    }

    #[test]
    fn repeated_bytes_are_never_seeds() {
        let d = vec![0xccu8; 1000];
        let mut n = 0;
        for_each_seed(&d, 0, d.len(), 16, 0, |_, _| n += 1);
        assert_eq!(n, 0);
    }
}
