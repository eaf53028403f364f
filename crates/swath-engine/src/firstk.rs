//! Speculative processing: "the first K results in file order", found by workers that may
//! discover them out of order.
//!
//! This is compMP's shared mismatch table. Workers scan their blocks independently and offer
//! each block's results (already in order within the block). The table keeps only the K
//! smallest offsets; once it holds K, its *cut-off* is the K-th offset, and any block starting
//! past it cannot contribute. The cut-off lives in an atomic that workers read before each
//! block ([`StopCheck`]) and, if they like, inside a block, so the hot path takes no lock; the
//! mutex is taken only by a worker that has results to offer.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::exec::StopCheck;

/// The first `k` results by offset, shared by all workers.
#[derive(Debug)]
pub struct FirstK<T> {
    k: usize,
    cutoff: AtomicU64,
    table: Mutex<Table<T>>,
}

#[derive(Debug)]
struct Table<T> {
    /// Each block's results, keyed by its first result's offset; blocks never interleave.
    runs: BTreeMap<u64, Vec<(u64, T)>>,
    total: usize,
}

impl<T> FirstK<T> {
    /// A table for the first `k` results (`k` of at least 1).
    pub fn new(k: usize) -> Self {
        assert!(k > 0, "FirstK needs k >= 1");
        FirstK {
            k,
            cutoff: AtomicU64::new(u64::MAX),
            table: Mutex::new(Table {
                runs: BTreeMap::new(),
                total: 0,
            }),
        }
    }

    /// How many results are wanted.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The offset of the K-th result so far, or `u64::MAX` while fewer than K are known.
    /// Results past it cannot be among the first K.
    pub fn cutoff(&self) -> u64 {
        self.cutoff.load(Ordering::Acquire)
    }

    /// Offers one block's results, sorted by offset. Results past the cut-off are ignored.
    pub fn offer(&self, mut items: Vec<(u64, T)>) {
        debug_assert!(items.windows(2).all(|w| w[0].0 < w[1].0));
        let cut = self.cutoff();
        if let Some(p) = items.iter().position(|(o, _)| *o > cut) {
            items.truncate(p);
        }
        items.truncate(self.k);
        let Some(&(first, _)) = items.first() else {
            return;
        };
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        table.total += items.len();
        table.runs.insert(first, items);
        if table.total < self.k {
            return;
        }
        // Keep exactly the k smallest: walk runs in order and cut after the k-th result.
        let mut seen = 0usize;
        let mut keep_until = None;
        for (&key, run) in table.runs.iter_mut() {
            if seen + run.len() >= self.k {
                run.truncate(self.k - seen);
                keep_until = Some((key, run.last().map(|r| r.0).unwrap_or(key)));
                break;
            }
            seen += run.len();
        }
        if let Some((key, kth)) = keep_until {
            let _ = table.runs.split_off(&(key + 1));
            table.total = self.k;
            self.cutoff.store(kth, Ordering::Release);
        }
    }

    /// The results in file order (at most K).
    pub fn into_sorted(self) -> Vec<(u64, T)> {
        let table = self.table.into_inner().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<(u64, T)> = table.runs.into_values().flatten().collect();
        out.truncate(self.k);
        out
    }
}

impl<T: Send> StopCheck for FirstK<T> {
    fn stop_before(&self, block_start: u64) -> bool {
        block_start > self.cutoff()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keeps_the_smallest_k_whatever_the_order() {
        let t = FirstK::new(3);
        t.offer(vec![(100, 'a'), (101, 'b')]);
        assert_eq!(t.cutoff(), u64::MAX);
        t.offer(vec![(50, 'c')]);
        assert_eq!(t.cutoff(), 101);
        assert!(t.stop_before(102));
        assert!(!t.stop_before(101));
        t.offer(vec![(10, 'd'), (20, 'e'), (200, 'z')]);
        assert_eq!(t.cutoff(), 50);
        t.offer(vec![(60, 'x')]);
        assert_eq!(t.into_sorted(), vec![(10, 'd'), (20, 'e'), (50, 'c')]);
    }

    proptest! {
        #[test]
        fn equals_sorting_everything(
            blocks in proptest::collection::vec(proptest::collection::btree_set(0u64..50, 0..6), 0..30),
            k in 1usize..12,
        ) {
            // Block b owns offsets [b*50, b*50+50); offer blocks in a scrambled order.
            let t = FirstK::new(k);
            let mut order: Vec<usize> = (0..blocks.len()).collect();
            order.reverse();
            order.rotate_left(blocks.len() / 3);
            let mut all = Vec::new();
            for &b in &order {
                let items: Vec<(u64, usize)> =
                    blocks[b].iter().map(|&o| (b as u64 * 50 + o, b)).collect();
                all.extend(items.iter().copied());
                t.offer(items);
            }
            all.sort();
            all.truncate(k);
            prop_assert_eq!(t.into_sorted(), all);
        }
    }
}
