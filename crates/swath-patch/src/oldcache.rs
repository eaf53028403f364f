//! OLD's bytes for the approximate matcher: positional reads through a small cache.
//!
//! The approximate matcher compares NEW with OLD along many diagonals, a few dozen bytes
//! at a time, mostly near one another. A system call per comparison would cost more than
//! the comparison, and OLD is never mapped or read whole (it may not fit in memory), so
//! each worker keeps a direct-mapped cache of OLD's 8 KiB blocks: a fixed number of
//! blocks (16 MiB by default), filled by positional reads ([`ReadAt`]). Blocks are small
//! because the diagonals of a rebuilt program jump all over OLD: a miss should cost a
//! system call, not a long copy.
//!
//! When OLD is in memory as a whole ([`ReadAt::as_bytes`]: a file in the page cache,
//! mapped), there is no cache: every range is a slice of the map.

use std::io;

use crate::source::ReadAt;

/// Bits of a block's size.
const BLOCK_BITS: u32 = 13;
/// Bytes in a block.
pub const BLOCK: usize = 1 << BLOCK_BITS;

/// A worker's window on OLD.
pub struct OldCache<'a> {
    file: &'a dyn ReadAt,
    len: u64,
    /// OLD's bytes, when they are in memory (no blocks are cached then).
    whole: Option<&'a [u8]>,
    /// The blocks' bytes, slot after slot.
    data: Vec<u8>,
    /// The block each slot holds (`u64::MAX`: none).
    tags: Vec<u64>,
    mask: usize,
    /// Bytes copied out for a range that crosses blocks.
    scratch: Vec<u8>,
}

thread_local! {
    /// The block buffer of this thread's last cache, kept for the next one: a section's
    /// cache then costs no fresh pages (16 MiB of page faults each).
    static SPARE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Drop for OldCache<'_> {
    fn drop(&mut self) {
        let data = std::mem::take(&mut self.data);
        SPARE.with(|s| {
            let mut s = s.borrow_mut();
            if data.len() > s.len() {
                *s = data;
            }
        });
    }
}

impl<'a> OldCache<'a> {
    /// A cache of `slots` blocks (a power of two is used, at least 4) over the first `len`
    /// bytes of `file`.
    pub fn new(file: &'a dyn ReadAt, len: u64, slots: usize) -> OldCache<'a> {
        let slots = slots.max(4).next_power_of_two();
        // Never more slots than OLD has blocks (a small OLD takes little memory).
        let blocks = (len.div_ceil(BLOCK as u64) as usize).max(1);
        let whole = file
            .as_bytes()
            .filter(|b| b.len() as u64 >= len)
            .map(|b| &b[..len as usize]);
        let slots = match whole {
            Some(_) => 1,
            None => slots.min(blocks.next_power_of_two()),
        };
        OldCache {
            file,
            len,
            whole,
            data: Vec::new(),
            tags: vec![u64::MAX; slots],
            mask: slots - 1,
            scratch: Vec::new(),
        }
    }

    /// OLD's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when OLD is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The cached bytes of block `b` (the last block may be short).
    fn block(&mut self, b: u64) -> io::Result<&[u8]> {
        let slot = (b as usize) & self.mask;
        let start = b << BLOCK_BITS;
        let n = (self.len - start).min(BLOCK as u64) as usize;
        if self.data.is_empty() {
            let want = self.tags.len() * BLOCK;
            self.data = SPARE.with(|s| std::mem::take(&mut *s.borrow_mut()));
            // A spare buffer's old bytes are never read: a slot is read into before its tag
            // names a block.
            self.data.resize(want, 0);
        }
        let at = slot * BLOCK;
        if self.tags[slot] != b {
            self.tags[slot] = u64::MAX;
            self.file.read_exact_at(&mut self.data[at..at + n], start)?;
            self.tags[slot] = b;
        }
        Ok(&self.data[at..at + n])
    }

    /// OLD whole, when it is in memory: every range a slice of it, no copies.
    #[inline]
    pub fn whole(&self) -> Option<&'a [u8]> {
        self.whole
    }

    /// The `n` bytes of OLD at `at`, or `None` when OLD has no such range.
    #[inline]
    pub fn get(&mut self, at: u64, n: usize) -> io::Result<Option<&[u8]>> {
        if at > self.len || n as u64 > self.len - at {
            return Ok(None);
        }
        if let Some(w) = self.whole {
            return Ok(Some(&w[at as usize..at as usize + n]));
        }
        if n == 0 {
            return Ok(Some(&[]));
        }
        let b = at >> BLOCK_BITS;
        let off = (at as usize) & (BLOCK - 1);
        if off + n <= BLOCK {
            let block = self.block(b)?;
            return Ok(Some(&block[off..off + n]));
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let mut pos = at;
        while scratch.len() < n {
            let b = pos >> BLOCK_BITS;
            let off = (pos as usize) & (BLOCK - 1);
            let take = (n - scratch.len()).min(BLOCK - off);
            let block = self.block(b)?;
            scratch.extend_from_slice(&block[off..off + take]);
            pos += take as u64;
        }
        self.scratch = scratch;
        Ok(Some(&self.scratch[..n]))
    }

    /// True when OLD at `at` holds exactly `want`.
    #[inline]
    pub fn equals(&mut self, at: u64, want: &[u8]) -> io::Result<bool> {
        Ok(self.get(at, want.len())? == Some(want))
    }

    /// The `n` bytes of OLD at `at` (`None` outside OLD), without filling a slot when
    /// their block is not cached: one small positional read instead of a whole block, for
    /// a far-away candidate that may never be looked at again.
    pub fn peek(&mut self, at: u64, n: usize) -> io::Result<Option<&[u8]>> {
        if at > self.len || n as u64 > self.len - at {
            return Ok(None);
        }
        if let Some(w) = self.whole {
            return Ok(Some(&w[at as usize..at as usize + n]));
        }
        let (first, last) = (
            at >> BLOCK_BITS,
            (at + n as u64).saturating_sub(1) >> BLOCK_BITS,
        );
        let cached = |b: u64| self.tags[(b as usize) & self.mask] == b;
        if n == 0 || (cached(first) && cached(last)) {
            return self.get(at, n);
        }
        self.scratch.resize(n, 0);
        self.file.read_exact_at(&mut self.scratch, at)?;
        Ok(Some(&self.scratch[..n]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn reads_what_the_slice_holds(
            len in 0usize..300_000,
            slots in 1usize..9,
            reads in proptest::collection::vec((any::<u64>(), 0usize..140_000), 1..40),
            mapped in any::<bool>(),
        ) {
            let old: Vec<u8> = (0..len).map(|i| (i * 31 + i / 977) as u8).collect();
            let s: &[u8] = &old;
            let positional = crate::source::Unmapped(s);
            let file: &dyn ReadAt = if mapped { &s } else { &positional };
            let mut c = OldCache::new(file, len as u64, slots);
            for (at, n) in reads {
                // Mostly inside OLD, sometimes past it.
                let at = at % (len as u64 + 10);
                let want = old.get(at as usize..at as usize + n);
                let got = c.get(at, n).unwrap().map(<[u8]>::to_vec);
                prop_assert_eq!(got.as_deref(), want);
                let peeked = c.peek(at.wrapping_mul(7) % (len as u64 + 10), n / 3).unwrap().map(<[u8]>::to_vec);
                let at2 = (at.wrapping_mul(7) % (len as u64 + 10)) as usize;
                prop_assert_eq!(peeked.as_deref(), old.get(at2..at2 + n / 3));
            }
        }
    }
}
