//! OLD's chunks by hash: a pre-sized open-addressing table keyed by the chunk hash itself.
//!
//! The keys are already XXH3-128 values, so they are not hashed again: the low bits pick
//! the slot, linear probing resolves collisions, and the high 64 bits are kept to tell
//! apart two chunks whose low bits agree. The table is sized once from the chunk count (at
//! most half full), never grows, and holds 24 bytes a slot. The first chunk of OLD with a
//! given hash is kept: a later identical chunk adds nothing a match could not find.

/// One slot: the hash's two halves, the chunk's offset in OLD and its length. An empty
/// slot has length 0 (no chunk is empty).
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    high: u64,
    offset: u64,
    len: u32,
    low: u32,
}

/// OLD's chunks, looked up by hash.
#[derive(Debug)]
pub struct ChunkTable {
    slots: Vec<Slot>,
    mask: usize,
    len: usize,
}

impl ChunkTable {
    /// An empty table for up to `chunks` chunks.
    pub fn with_capacity(chunks: usize) -> ChunkTable {
        let size = (chunks.max(1) * 2).next_power_of_two();
        ChunkTable {
            slots: vec![Slot::default(); size],
            mask: size - 1,
            len: 0,
        }
    }

    /// Bytes the table of `chunks` chunks takes (what `--memory` accounts for).
    pub fn bytes_for(chunks: usize) -> u64 {
        ((chunks.max(1) * 2).next_power_of_two() * std::mem::size_of::<Slot>()) as u64
    }

    /// Distinct chunks held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no chunk is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a chunk of OLD (`len` > 0) unless one with the same hash is there already.
    pub fn insert(&mut self, hash: u128, offset: u64, len: u32) {
        debug_assert!(len > 0);
        let (low, high) = (hash as u64, (hash >> 64) as u64);
        let mut i = slot_of(low, high) & self.mask;
        loop {
            let s = &mut self.slots[i];
            if s.len == 0 {
                *s = Slot {
                    high,
                    offset,
                    len,
                    low: (low >> 32) as u32,
                };
                self.len += 1;
                if self.len * 2 > self.slots.len() {
                    self.grow();
                }
                return;
            }
            if s.high == high && s.low == (low >> 32) as u32 {
                return;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Doubles the table when more chunks came than it was sized for (never on the sizes
    /// the signature announced; a safety net, not the plan).
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        let size = old.len() * 2;
        self.slots = vec![Slot::default(); size];
        self.mask = size - 1;
        self.len = 0;
        for s in old.into_iter().filter(|s| s.len > 0) {
            // Only the kept bits decide a slot (`slot_of`), so the rebuilt key lands where
            // `find` looks for the original one.
            let hash = (u128::from(s.high) << 64) | (u128::from(s.low) << 32);
            self.insert(hash, s.offset, s.len);
        }
    }

    /// Asks the CPU to bring the slot where `hash` starts probing into the cache, so that
    /// a later [`ChunkTable::insert`] or [`ChunkTable::find`] of it does not wait for
    /// memory (issued a few chunks ahead; a table of millions of chunks is far larger than
    /// the caches).
    #[inline]
    pub fn prefetch(&self, hash: u128) {
        let (low, high) = (hash as u64, (hash >> 64) as u64);
        let slot = &self.slots[slot_of(low, high) & self.mask];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint: it never faults, and `slot` is a valid address.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (slot as *const Slot).cast(),
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// The chunk of OLD with this hash: its offset and length.
    #[inline]
    pub fn find(&self, hash: u128) -> Option<(u64, u32)> {
        let (low, high) = (hash as u64, (hash >> 64) as u64);
        let mut i = slot_of(low, high) & self.mask;
        loop {
            let s = &self.slots[i];
            if s.len == 0 {
                return None;
            }
            if s.high == high && s.low == (low >> 32) as u32 {
                return Some((s.offset, s.len));
            }
            i = (i + 1) & self.mask;
        }
    }
}

/// The slot a hash starts probing at: bits 32..64 of its low half and its high half, which
/// the slot keeps, so a grown table can place it again.
#[inline]
fn slot_of(low: u64, high: u64) -> usize {
    ((low >> 32) ^ high) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        #[test]
        fn finds_what_a_map_of_first_occurrences_finds(
            keys in proptest::collection::vec(0u64..300, 0..600),
            sized_for in 0usize..700,
        ) {
            let mut t = ChunkTable::with_capacity(sized_for);
            let mut m: HashMap<u128, (u64, u32)> = HashMap::new();
            for (i, &k) in keys.iter().enumerate() {
                let hash = xxhash_rust::xxh3::xxh3_128(&k.to_le_bytes());
                t.insert(hash, i as u64, (k + 1) as u32);
                m.entry(hash).or_insert((i as u64, (k + 1) as u32));
            }
            prop_assert_eq!(t.len(), m.len());
            for k in 0u64..320 {
                let hash = xxhash_rust::xxh3::xxh3_128(&k.to_le_bytes());
                prop_assert_eq!(t.find(hash), m.get(&hash).copied());
            }
        }
    }
}
