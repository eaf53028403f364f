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
