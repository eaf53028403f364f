//! Counting tables for millions of distinct byte-string keys (clients, referrers), built
//! for batches of lookups whose memory accesses overlap.
//!
//! A log's long tail of distinct keys makes every lookup in a big table a cache miss, and
//! a miss costs more than parsing the line. The table is open addressing with linear
//! probing over 8-byte slots; each slot holds 16 bits of the key's hash and where the key's
//! record is in one arena. A record is the key's length, its value and its bytes, appended
//! once (no allocation per key), so a lookup touches two places: its slot, and the record
//! it compares and counts in. Small slots keep the probed table a quarter of the size a
//! slot holding the hash, the value and a pointer would need, so more of it stays in cache.
//! Lookups come in batches: [`Counts::add_batch`] first prefetches every home slot, then
//! (the slots now in cache) finds each candidate slot and prefetches its record, and only
//! then compares and counts, so the misses of a batch overlap instead of adding up. A slot
//! with an equal hash tag is still checked byte for byte: the counts are exact.

use std::hash::BuildHasher;

/// A value the table accumulates: a count, or several counts at once, stored as bytes in
/// the table's arena.
pub trait Tally: Copy + Default {
    /// Bytes [`Tally::store`] writes.
    const SIZE: usize;
    /// Adds `other` (saturating).
    fn add(&mut self, other: &Self);
    /// Writes the value into `out` (`SIZE` bytes).
    fn store(&self, out: &mut [u8]);
    /// Reads a value [`Tally::store`] wrote.
    fn load(bytes: &[u8]) -> Self;
}

impl Tally for u64 {
    const SIZE: usize = 8;

    #[inline]
    fn add(&mut self, other: &u64) {
        *self = self.saturating_add(*other);
    }

    #[inline]
    fn store(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.to_le_bytes());
    }

    #[inline]
    fn load(bytes: &[u8]) -> u64 {
        u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default())
    }
}

/// Bytes before a record's value: the key's length.
const LEN: usize = 8;

/// Values by byte-string key (counts by default).
#[derive(Debug, Clone)]
pub struct Counts<V: Tally = u64> {
    /// 0 for an empty slot, else the key's hash tag (its top 16 bits) above the record's
    /// offset in the arena plus one.
    slots: Vec<u64>,
    /// Records, one per key, in first-seen order: length (8 bytes), value, key.
    arena: Vec<u8>,
    len: usize,
    hasher: foldhash::fast::FixedState,
    value: std::marker::PhantomData<V>,
}

impl<V: Tally> Default for Counts<V> {
    fn default() -> Self {
        Counts {
            slots: fresh_slots(1024),
            arena: Vec::new(),
            len: 0,
            hasher: foldhash::fast::FixedState::with_seed(0x5157_a7b1),
            value: std::marker::PhantomData,
        }
    }
}

/// Lookups handled together by [`Counts::add_batch`].
pub const BATCH: usize = 64;

/// Bits of a slot that hold the record's offset plus one.
const OFFSET_BITS: u32 = 48;

/// Asks for the cache line at `p` to be brought into the cache (a hint, never a fault).
#[inline]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `n` empty slots. A table of millions of keys is read at random, one cache miss and,
/// with 4 KiB pages, one page walk per lookup; the kernel is asked for huge pages before
/// the slots are first touched (after, it would not give them), which takes the page walks
/// away.
fn fresh_slots(n: usize) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::with_capacity(n);
    advise_huge_pages(v.as_ptr() as usize, n * 8);
    v.resize(n, 0);
    v
}

/// Asks for transparent huge pages over the whole 2 MiB pages inside `[start, start+len)`.
pub(crate) fn advise_huge_pages(start: usize, len: usize) {
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

/// The slot tag of a hash.
#[inline]
fn tag(h: u64) -> u64 {
    h >> OFFSET_BITS << OFFSET_BITS
}

impl<V: Tally> Counts<V> {
    /// Distinct keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no key was counted.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The hash of `key` as this table computes it.
    #[inline]
    pub fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The record offset of a full slot.
    #[inline]
    fn offset(slot: u64) -> usize {
        (slot & ((1 << OFFSET_BITS) - 1)) as usize - 1
    }

    /// The key of the record at `off`, and where the record ends.
    #[inline]
    fn record_key(&self, off: usize) -> (&[u8], usize) {
        let len = u64::from_le_bytes(self.arena[off..off + LEN].try_into().unwrap_or_default());
        let start = off + LEN + V::SIZE;
        let end = start + len as usize;
        (&self.arena[start..end], end)
    }

    /// The value of the record at `off`.
    #[inline]
    fn value_at(&self, off: usize) -> V {
        V::load(&self.arena[off + LEN..off + LEN + V::SIZE])
    }

    /// Adds `n` to `key` (with its hash `h` from [`Counts::hash`]).
    #[inline]
    pub fn add_hashed(&mut self, key: &[u8], h: u64, n: V) {
        self.add_from(key, h, n, h as usize & self.mask());
    }

    /// Adds `n` to `key`.
    pub fn add(&mut self, key: &[u8], n: V) {
        let h = self.hash(key);
        self.add_hashed(key, h, n);
    }

    /// Probes from slot `i` on.
    #[inline]
    fn add_from(&mut self, key: &[u8], h: u64, n: V, mut i: usize) {
        let mask = self.mask();
        let t = tag(h);
        loop {
            let s = self.slots[i];
            if s == 0 {
                self.insert_at(i, key, t, n);
                return;
            }
            if tag(s) == t {
                let off = Self::offset(s);
                if self.record_key(off).0 == key {
                    let mut v = self.value_at(off);
                    v.add(&n);
                    v.store(&mut self.arena[off + LEN..off + LEN + V::SIZE]);
                    return;
                }
            }
            i = (i + 1) & mask;
        }
    }

    fn insert_at(&mut self, i: usize, key: &[u8], t: u64, n: V) {
        let off = self.arena.len();
        let size = LEN + V::SIZE + key.len();
        if self.arena.capacity() - off < size {
            self.grow_arena(size);
        }
        self.arena
            .extend_from_slice(&(key.len() as u64).to_le_bytes());
        self.arena.resize(off + LEN + V::SIZE, 0);
        n.store(&mut self.arena[off + LEN..]);
        self.arena.extend_from_slice(key);
        self.slots[i] = t | (off as u64 + 1);
        self.len += 1;
        // Grown at 3/8 full: linear probing's clusters cost misses. Measured on the 4 GiB
        // log (hot, 2 threads): 1/4 full 1.78 s, 3/8 1.72 s, 1/2 1.75 s (with the 32-byte
        // slots of before, 1/2 was 2.33 s, 3/8 2.17-2.23 s, 1/4 2.46 s, 3/4 4.7 s).
        if self.len * 8 > self.slots.len() * 3 {
            self.grow();
        }
    }

    /// Moves the arena to a new allocation at least twice as big, advised like the slots
    /// (records are read at random too).
    fn grow_arena(&mut self, more: usize) {
        let want = (self.arena.len() + more)
            .max(self.arena.capacity() * 2)
            .max(4096);
        let mut new: Vec<u8> = Vec::with_capacity(want);
        advise_huge_pages(new.as_ptr() as usize, want);
        new.extend_from_slice(&self.arena);
        self.arena = new;
    }

    /// Every record's offset and key, in first-seen order.
    fn records(&self) -> impl Iterator<Item = (usize, &[u8])> + '_ {
        let mut off = 0;
        std::iter::from_fn(move || {
            if off == self.arena.len() {
                return None;
            }
            let (key, end) = self.record_key(off);
            let at = off;
            off = end;
            Some((at, key))
        })
    }

    /// Doubles the slots, placing the records again in order (a sequential read of the
    /// arena).
    fn grow(&mut self) {
        let mut slots = fresh_slots(self.slots.len() * 2);
        let mask = slots.len() - 1;
        for (off, key) in self.records() {
            let h = self.hash(key);
            let mut i = h as usize & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = tag(h) | (off as u64 + 1);
        }
        self.slots = slots;
    }

    /// Adds each value of `keys` (key, hash, value) to its key, overlapping the cache
    /// misses of the whole batch.
    pub fn add_batch(&mut self, keys: &[(&[u8], u64, V)]) {
        let mask = self.mask();
        for &(_, h, _) in keys {
            prefetch(&self.slots[h as usize & mask]);
        }
        // The slot where each probe stops for now: an equal tag, or an empty slot.
        let mut stop = [0usize; BATCH];
        for (k, &(key, h, _)) in keys.iter().enumerate().take(BATCH) {
            let t = tag(h);
            let mut i = h as usize & mask;
            loop {
                let s = self.slots[i];
                if s == 0 || tag(s) == t {
                    break;
                }
                i = (i + 1) & mask;
            }
            stop[k] = i;
            let s = self.slots[i];
            if s != 0 {
                // The record's first and last cache lines (if the key matches, the record
                // has its length).
                let at = self.arena.as_ptr().wrapping_add(Self::offset(s));
                prefetch(at);
                prefetch(at.wrapping_add(LEN + V::SIZE + key.len() - 1));
            }
        }
        let before = self.slots.len();
        for (k, &(key, h, v)) in keys.iter().enumerate().take(BATCH) {
            // A grown table (or a slot filled by an earlier key of this batch) is probed
            // again from the key's home slot or its stop.
            let start = if self.slots.len() == before {
                stop[k]
            } else {
                h as usize & self.mask()
            };
            self.add_from(key, h, v, start);
        }
        for &(key, h, v) in keys.iter().skip(BATCH) {
            self.add_hashed(key, h, v);
        }
    }

    /// Every key and value, in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], V)> + '_ {
        self.records()
            .map(move |(off, key)| (key, self.value_at(off)))
    }

    /// Adds another table's counts.
    pub fn merge(&mut self, other: Counts<V>) {
        let (mut big, small) = if self.len >= other.len {
            (std::mem::take(self), other)
        } else {
            (other, std::mem::take(self))
        };
        // In batches, so that the big table's misses overlap here too.
        let mut batch: Vec<(&[u8], u64, V)> = Vec::with_capacity(BATCH);
        for (key, v) in small.iter() {
            batch.push((key, big.hash(key), v));
            if batch.len() == BATCH {
                big.add_batch(&batch);
                batch.clear();
            }
        }
        big.add_batch(&batch);
        *self = big;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        #[test]
        fn counts_like_a_hash_map(
            keys in proptest::collection::vec(
                prop_oneof![
                    8 => proptest::collection::vec(0u8..4, 0..5),
                    1 => proptest::collection::vec(0u8..2, 60..200),
                ],
                0..3000,
            ),
            batch in 1usize..40,
            split in 0usize..3000,
        ) {
            let mut want: HashMap<Vec<u8>, u64> = HashMap::new();
            for k in &keys {
                *want.entry(k.clone()).or_default() += 1;
            }
            let (a, b) = keys.split_at(split.min(keys.len()));
            let mut t1: Counts = Counts::default();
            for chunk in a.chunks(batch) {
                let hashed: Vec<(&[u8], u64, u64)> = chunk.iter().map(|k| (&k[..], t1.hash(k), 1)).collect();
                t1.add_batch(&hashed);
            }
            let mut t2: Counts = Counts::default();
            for k in b {
                t2.add(k, 1);
            }
            t1.merge(t2);
            let got: HashMap<Vec<u8>, u64> = t1.iter().map(|(k, c)| (k.to_vec(), c)).collect();
            prop_assert_eq!(t1.len(), want.len());
            prop_assert_eq!(got, want);
        }
    }
}
