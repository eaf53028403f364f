//! The tables a log report counts into: keys held inline when short ([`Key`]), counts by
//! key ([`Table`]) with lookups that borrow ([`Probe`]), and rankings: the top rows of a
//! table by count, then key ([`top`], [`TopN`], [`Ranking`]).

use hashbrown::HashMap;

use crate::counts::Counts;

/// Counts by key (the bytes of a field).
pub type Table = HashMap<Key, u64>;

/// Keys up to this many bytes live inside the table's bucket.
const INLINE: usize = 22;

/// A table key: the bytes of a field, stored in the bucket itself when short (most URIs,
/// clients and referrers), so a lookup reads one cache line instead of chasing a pointer
/// to a separately allocated key; longer keys are boxed.
#[derive(Clone)]
pub enum Key {
    /// A key of at most [`INLINE`] bytes.
    Inline(u8, [u8; INLINE]),
    /// A longer key.
    Heap(Box<[u8]>),
}

impl Key {
    /// The key's bytes.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        match self {
            Key::Inline(n, b) => &b[..usize::from(*n)],
            Key::Heap(b) => b,
        }
    }

    #[inline]
    pub(crate) fn new(k: &[u8]) -> Key {
        if k.len() <= INLINE {
            let mut b = [0u8; INLINE];
            b[..k.len()].copy_from_slice(k);
            Key::Inline(k.len() as u8, b)
        } else {
            Key::Heap(k.into())
        }
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.bytes().escape_ascii().to_string())
    }
}

impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        self.bytes() == o.bytes()
    }
}

impl Eq for Key {}

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.bytes().hash(h)
    }
}

/// Looks a key up by its bytes (hashing as `[u8]` does, as [`Key`]'s `Hash` does too).
#[derive(Hash)]
pub(crate) struct Probe<'a>(pub(crate) &'a [u8]);

impl hashbrown::Equivalent<Key> for Probe<'_> {
    #[inline]
    fn equivalent(&self, k: &Key) -> bool {
        self.0 == k.bytes()
    }
}

#[inline]
pub(crate) fn add(t: &mut Table, key: &[u8], n: u64) {
    match t.get_mut(&Probe(key)) {
        Some(v) => *v = v.saturating_add(n),
        None => {
            t.insert(Key::new(key), n);
        }
    }
}

/// A table of values by key for the keys a log repeats most (clients, referrers, user
/// agents, requests), each key known by its XXH3-128 ([`Interned::id`]) and its bytes kept
/// once, in an arena, when first seen. The slots are one cache line each (the id, where the
/// key's bytes are, the value), in open addressing with linear probing: a lookup hashes the
/// key once and compares two numbers in one line, following no pointer to a boxed key and
/// comparing no key's bytes (a `HashMap<Key, _>` did both: 15 % of the summary's time).
/// The line can be asked for before it is needed ([`Interned::prefetch`]), so that a line's
/// lookups in several tables wait for memory together, not one after another.
///
/// Two keys are one only if their 128-bit ids are equal: over the 10^7 distinct keys of a
/// big log, a chance of about 10^-25 that two distinct keys are counted as one. An id of 0
/// marks an empty slot, so a key whose hash is 0 has the id 1.
#[derive(Debug, Clone, Default)]
pub struct Interned<V> {
    slots: Vec<Slot<V>>,
    len: usize,
    keys: Vec<u8>,
}

/// An [`Interned`] slot: the key's id (0: empty), where its bytes are in the arena, its
/// value; a cache line of its own.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Slot<V> {
    id: u128,
    at: usize,
    len: usize,
    value: V,
}

/// Slots of a table's first allocation.
const FIRST_SLOTS: usize = 1024;

impl<V: Copy + Default> Interned<V> {
    /// The id of a key: its XXH3-128 (1 for a hash of 0).
    #[inline]
    pub fn id(key: &[u8]) -> u128 {
        xxhash_rust::xxh3::xxh3_128(key).max(1)
    }

    /// Asks for the slot where `id`'s search starts to be brought into the cache.
    #[inline]
    pub fn prefetch(&self, id: u128) {
        if !self.slots.is_empty() {
            let home = id as usize & (self.slots.len() - 1);
            crate::counts::prefetch(&self.slots[home]);
        }
    }

    /// The slot of `id`: its own, or the empty one where it would go.
    #[inline]
    fn find(&self, id: u128) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = id as usize & mask;
        loop {
            let s = self.slots[i].id;
            if s == id || s == 0 {
                return i;
            }
            #[cfg(test)]
            tests::STEPS.with(|n| n.set(n.get() + 1));
            i = (i + 1) & mask;
        }
    }

    /// The value of `key`, made by `new` when the key is new.
    #[inline]
    pub fn entry(&mut self, key: &[u8], new: impl FnOnce() -> V) -> &mut V {
        self.entry_of(Self::id(key), key, new)
    }

    /// [`Interned::entry`] of a key whose [`Interned::id`] is `id`.
    #[inline]
    pub fn entry_of(&mut self, id: u128, key: &[u8], new: impl FnOnce() -> V) -> &mut V {
        // Three quarters full at most, so that a search ends soon.
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let i = self.find(id);
        if self.slots[i].id == 0 {
            let at = self.keys.len();
            self.keys.extend_from_slice(key);
            self.slots[i] = Slot {
                id,
                at,
                len: key.len(),
                value: new(),
            };
            self.len += 1;
        }
        &mut self.slots[i].value
    }

    /// Room for `more` keys than there are without growing.
    fn reserve(&mut self, more: usize) {
        while (self.len + more) * 4 > self.slots.len() * 3 {
            self.grow();
        }
    }

    /// Twice the slots (at least [`FIRST_SLOTS`]), every key placed again by its id.
    #[cold]
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(FIRST_SLOTS);
        let mut slots: Vec<Slot<V>> = Vec::with_capacity(n);
        crate::counts::advise_huge_pages(slots.as_ptr() as usize, n * size_of::<Slot<V>>());
        slots.resize(
            n,
            Slot {
                id: 0,
                at: 0,
                len: 0,
                value: V::default(),
            },
        );
        let old = std::mem::replace(&mut self.slots, slots);
        for s in old.into_iter().filter(|s| s.id != 0) {
            let i = self.find(s.id);
            self.slots[i] = s;
        }
    }

    /// The value of `key`, if it is there.
    #[inline]
    pub fn get(&self, key: &[u8]) -> Option<&V> {
        if self.slots.is_empty() {
            return None;
        }
        let s = &self.slots[self.find(Self::id(key))];
        (s.id != 0).then_some(&s.value)
    }

    /// Distinct keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every key and its value, in no order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &V)> + '_ {
        self.slots
            .iter()
            .filter(|s| s.id != 0)
            .map(|s| (&self.keys[s.at..s.at + s.len], &s.value))
    }

    /// Adds the entries of `from` with `add` (a new key's value starting as `V::default()`),
    /// walking the smaller table into the larger (whichever it is). No key is hashed again.
    pub fn merge(&mut self, from: Interned<V>, add: impl Fn(&mut V, V)) {
        let (mut big, small) = if self.len() >= from.len() {
            (std::mem::take(self), from)
        } else {
            (from, std::mem::take(self))
        };
        big.keys.reserve(small.keys.len());
        // The small table's slots come in the order of their ids' low bits. Had the big
        // table to grow halfway, the keys added before it grew would be those of its first
        // slots only: more than those slots can hold, in one run of full slots that every
        // later search walks (two tables of 5 M keys took minutes to merge). Room for all
        // first, so that the keys added are spread over the whole table.
        big.reserve(small.len());
        for s in small.slots.iter().filter(|s| s.id != 0) {
            let key = &small.keys[s.at..s.at + s.len];
            add(big.entry_of(s.id, key, V::default), s.value);
        }
        *self = big;
    }
}

/// Adds the entries of `from` into `into` with `add`, walking the smaller map into the
/// larger (whichever it is).
pub(crate) fn merge_map<V: Default>(
    into: &mut HashMap<Key, V>,
    from: HashMap<Key, V>,
    add: impl Fn(&mut V, V),
) {
    let (mut big, small) = if into.len() >= from.len() {
        (std::mem::take(into), from)
    } else {
        (from, std::mem::take(into))
    };
    for (k, v) in small {
        add(big.entry(k).or_default(), v);
    }
    *into = big;
}

/// A table the reports rank: its entries and how many there are.
pub trait Ranked {
    /// Every key and count, in no particular order.
    fn entries(&self) -> Box<dyn Iterator<Item = (&[u8], u64)> + '_>;
    /// Distinct keys.
    fn distinct(&self) -> usize;
}

impl Ranked for Table {
    fn entries(&self) -> Box<dyn Iterator<Item = (&[u8], u64)> + '_> {
        Box::new(self.iter().map(|(k, &c)| (k.bytes(), c)))
    }
    fn distinct(&self) -> usize {
        self.len()
    }
}

impl Ranked for Counts {
    fn entries(&self) -> Box<dyn Iterator<Item = (&[u8], u64)> + '_> {
        Box::new(self.iter())
    }
    fn distinct(&self) -> usize {
        self.len()
    }
}

/// The `n` largest entries, by count descending then key ascending (bytewise).
pub fn top<T: Ranked + ?Sized>(t: &T, n: usize) -> Vec<(&[u8], u64)> {
    let mut v: Vec<(&[u8], u64)> = t.entries().collect();
    let order = |a: &(&[u8], u64), b: &(&[u8], u64)| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0));
    if v.len() > n && n > 0 {
        v.select_nth_unstable_by(n - 1, order);
        v.truncate(n);
    }
    v.truncate(n);
    v.sort_unstable_by(order);
    v
}

/// A ranked table as a report shows it: how many distinct keys it has, and its top rows
/// (by count descending, then key ascending).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ranking {
    /// Distinct keys.
    pub distinct: u64,
    /// The top rows, best first.
    pub top: Vec<(Vec<u8>, u64)>,
}

impl Ranking {
    /// The ranking of a whole table: its `n` top rows (see [`top`]).
    pub fn of<T: Ranked + ?Sized>(t: &T, n: usize) -> Ranking {
        Ranking {
            distinct: t.distinct() as u64,
            top: top(t, n)
                .into_iter()
                .map(|(k, c)| (k.to_vec(), c))
                .collect(),
        }
    }
}

/// The `n` top rows of keys fed one at a time, each key once (a merge of sorted lists
/// yields them so): the same rows as [`top`] over the whole table, in memory for `n` rows.
#[derive(Debug)]
pub struct TopN {
    n: usize,
    distinct: u64,
    // The kept rows, the worst on top: lowest count, then highest key.
    kept: std::collections::BinaryHeap<Worst>,
}

/// A row ordered so that the worse row is the greater.
#[derive(Debug, PartialEq, Eq)]
struct Worst(u64, Vec<u8>);

impl Ord for Worst {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.cmp(&self.0).then_with(|| self.1.cmp(&o.1))
    }
}

impl PartialOrd for Worst {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl TopN {
    /// Keeps the `n` top rows.
    pub fn new(n: usize) -> TopN {
        TopN {
            n,
            distinct: 0,
            kept: std::collections::BinaryHeap::with_capacity(n.min(1024) + 1),
        }
    }

    /// One distinct key and its count.
    #[inline]
    pub fn add(&mut self, key: &[u8], count: u64) {
        self.distinct += 1;
        if self.n == 0 {
            return;
        }
        if self.kept.len() == self.n {
            let worst = self.kept.peek().expect("n > 0 rows kept");
            // Better than the worst kept: a higher count, or the same and a lower key.
            if count < worst.0 || (count == worst.0 && key >= &worst.1[..]) {
                return;
            }
            self.kept.pop();
        }
        self.kept.push(Worst(count, key.to_vec()));
    }

    /// The keys of the rows kept so far, in no order.
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        self.kept.iter().map(|w| &w.1[..])
    }

    /// The ranking.
    pub fn finish(self) -> Ranking {
        Ranking {
            distinct: self.distinct,
            top: self
                .kept
                .into_sorted_vec()
                .into_iter()
                .map(|Worst(c, k)| (k, c))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap as StdMap;

    /// Keys with many repeats (short, few letters) and some long ones.
    fn keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
        proptest::collection::vec(
            prop_oneof![
                8 => proptest::collection::vec(0u8..4, 0..6),
                1 => proptest::collection::vec(0u8..2, 60..200),
            ],
            0..4000,
        )
    }

    /// The oracle: sums and maxima by key in a standard map.
    fn oracle(keys: &[Vec<u8>]) -> StdMap<Vec<u8>, [u64; 2]> {
        let mut want: StdMap<Vec<u8>, [u64; 2]> = StdMap::new();
        for (i, k) in keys.iter().enumerate() {
            let v = want.entry(k.clone()).or_default();
            v[0] += 1;
            v[1] = v[1].max(i as u64);
        }
        want
    }

    fn add_all(t: &mut Interned<[u64; 2]>, keys: &[Vec<u8>], first: usize) {
        for (i, k) in keys.iter().enumerate() {
            let v = t.entry(k, || [0, 0]);
            v[0] += 1;
            v[1] = v[1].max((first + i) as u64);
        }
    }

    fn contents(t: &Interned<[u64; 2]>) -> StdMap<Vec<u8>, [u64; 2]> {
        t.iter().map(|(k, v)| (k.to_vec(), *v)).collect()
    }

    proptest! {
        /// Every key once with its values, through growth, a merge either way round, and
        /// lookups of keys there and not there.
        #[test]
        fn interned_counts_like_a_hash_map(keys in keys(), split in 0usize..4000, other_first in any::<bool>()) {
            let want = oracle(&keys);
            let (a, b) = keys.split_at(split.min(keys.len()));
            let mut ta = Interned::default();
            add_all(&mut ta, a, 0);
            let mut tb = Interned::default();
            add_all(&mut tb, b, a.len());
            let add = |e: &mut [u64; 2], v: [u64; 2]| {
                e[0] += v[0];
                e[1] = e[1].max(v[1]);
            };
            let merged = if other_first {
                tb.merge(ta, add);
                tb
            } else {
                ta.merge(tb, add);
                ta
            };
            prop_assert_eq!(merged.len(), want.len());
            prop_assert_eq!(merged.is_empty(), want.is_empty());
            prop_assert_eq!(contents(&merged), want.clone());
            for (k, v) in &want {
                prop_assert_eq!(merged.get(k), Some(v));
            }
            prop_assert_eq!(merged.get(b"not among the keys"), None);
        }
    }

    thread_local! {
        /// Steps past a slot that is neither the key's nor empty, on this thread.
        pub(super) static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// Two tables of distinct keys, each about six tenths full, merged: the keys added come
    /// in the order of their slots. Had the table grown halfway through, the keys added
    /// before would all be those of its first slots, in one run of full slots tens of
    /// thousands long that every later search walked (a merge of two 5 M-key tables took
    /// minutes). A search takes a few steps, as for keys in no order.
    #[test]
    fn a_merge_searches_as_keys_in_no_order_do() {
        let key = |i: u32| format!("10.{}.{}.{}", i >> 16, (i >> 8) & 255, i & 255);
        let n = 300_000;
        let mut a: Interned<[u64; 1]> = Interned::default();
        let mut b: Interned<[u64; 1]> = Interned::default();
        for i in 0..n {
            a.entry(key(i).as_bytes(), || [1]);
            b.entry(key(n + i).as_bytes(), || [1]);
        }
        assert_eq!(a.slots.len(), b.slots.len());
        STEPS.with(|s| s.set(0));
        a.merge(b, |e, v| e[0] += v[0]);
        let steps = STEPS.with(|s| s.get());
        assert_eq!(a.len(), 2 * n as usize);
        // Fewer than 4 steps a key (keys in no order: about 1 at this load).
        assert!(steps < 4 * u64::from(n), "{steps} steps for {n} keys");
    }

    #[test]
    fn an_empty_table_finds_nothing() {
        let t: Interned<[u64; 1]> = Interned::default();
        assert_eq!(t.get(b""), None);
        assert_eq!(t.iter().count(), 0);
        t.prefetch(Interned::<[u64; 1]>::id(b"x"));
    }
}
