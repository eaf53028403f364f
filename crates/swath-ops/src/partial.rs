//! Partial results: the mergeable state of a report over byte ranges of its inputs, as
//! bytes, so that pieces computed anywhere (other processes, other machines) merge into
//! exactly what the one-machine command prints.
//!
//! A partial holds, for each input (by its position among the command's operands, with its
//! name and its size), the *pieces* computed so far: disjoint spans `[begin, finish)` (see
//! `swath_engine::range::line_span`) with the state of each. Merging two partials unites
//! their pieces and merges the states of adjacent pieces in file order, so any split into
//! ranges, any order and any tree of merges gives the same partial; a piece given twice is
//! an error, and so is rendering an input whose pieces do not cover it whole (a lost piece
//! never goes unnoticed). The wire format is specified in `docs/partial-format.md`.

use std::collections::BTreeMap;

use swath_kernels::wc::Tally;

/// The Wide Finder 2 tables in full, in canonical order (see [`key_order`]: equal tables
/// have equal bytes, and merging is a merge of sorted lists).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Wf2Tables {
    /// Lines with fewer than 11 fields, or too long.
    pub malformed: u64,
    /// By URI: bytes sent (200), article fetches, 404s, fetched with 200 or 304 at all.
    pub uris: Vec<(Vec<u8>, [u64; 3], bool)>,
    /// Article fetches by client.
    pub clients: Vec<(Vec<u8>, u64)>,
    /// Article fetches by referrer.
    pub referrers: Vec<(Vec<u8>, u64)>,
}

/// The hash that orders a partial's lists: XXH3-64 of the key, seed 0.
#[inline]
pub fn key_hash(key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key)
}

/// The canonical order of a partial's keys: by [`key_hash`], then by the key's bytes. A
/// hash orders keys of any length at the cost of one integer comparison (sorting
/// millions of keys by their bytes took a fifth of a piece's time), and both the writer
/// and every reader compute it, so it is not stored.
#[inline]
pub fn key_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    (key_hash(a), a).cmp(&(key_hash(b), b))
}

/// Entries in canonical order ([`key_order`]), each with its key's hash (computed once),
/// as the state encoders ([`encode_wf2`], [`encode_summary`]) take them.
pub fn hashed<K: AsRef<[u8]>, V>(entries: impl IntoIterator<Item = (K, V)>) -> Vec<(u64, K, V)> {
    let mut v: Vec<(u64, K, V)> = entries
        .into_iter()
        .map(|(k, x)| (key_hash(k.as_ref()), k, x))
        .collect();
    v.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.as_ref().cmp(b.1.as_ref())));
    v
}

/// Entries in canonical order ([`key_order`]), each key hashed once.
pub fn canonical<K: AsRef<[u8]>, V>(entries: impl IntoIterator<Item = (K, V)>) -> Vec<(K, V)> {
    hashed(entries)
        .into_iter()
        .map(|(_, k, x)| (k, x))
        .collect()
}

/// An owned table's list as the encoders take it: its entries, already in canonical
/// order (decoded with the order checked, or merged from such lists), with their hashes.
fn hashed_list<V: Copy>(t: &[(Vec<u8>, V)]) -> Vec<(u64, &[u8], V)> {
    t.iter().map(|(k, v)| (key_hash(k), &k[..], *v)).collect()
}

/// The longest a list's bytes can be: its count, and for each entry its key's length (a
/// varint, at most 10 bytes), the key, and `value` bytes at most for its values.
fn list_bytes<K: AsRef<[u8]>, V>(t: &[(u64, K, V)], value: usize) -> usize {
    8 + t
        .iter()
        .map(|(_, k, _)| 10 + k.as_ref().len() + value)
        .sum::<usize>()
}

/// The most bytes a count takes (a varint).
const COUNT_MAX: usize = 10;

/// The most bytes a URI's values take (three varints and a flag).
const URI_VALUES_MAX: usize = 3 * 10 + 1;

/// A URI's values in a `logs wf2` state: bytes sent, article fetches and 404s, and
/// whether it was fetched with 200 or 304 at all.
pub type UriValues = ([u64; 3], bool);

/// Two lists in canonical order merged into one, the values of equal keys combined.
fn merge_sorted<V>(
    a: Vec<(Vec<u8>, V)>,
    b: Vec<(Vec<u8>, V)>,
    add: impl Fn(V, V) -> V,
) -> Vec<(Vec<u8>, V)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(x), Some(y)) => match key_order(&x.0, &y.0) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Greater => false,
                std::cmp::Ordering::Equal => {
                    let (k, va) = a.next().expect("peeked");
                    let (_, vb) = b.next().expect("peeked");
                    out.push((k, add(va, vb)));
                    continue;
                }
            },
        };
        out.push(if take_a { a.next() } else { b.next() }.expect("peeked"));
    }
    out
}

/// Appends `v` as an unsigned LEB128 number (7 bits a byte, low bits first, the high bit
/// set on every byte but the last), in its shortest form.
#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a list entry's key: its length (LEB128), then its bytes.
#[inline]
pub(crate) fn put_key(out: &mut Vec<u8>, key: &[u8]) {
    put_varint(out, key.len() as u64);
    out.extend_from_slice(key);
}

/// Writes a list of counts in canonical order: its length (u64), then each key (LEB128
/// length and bytes) and count (LEB128).
fn encode_list<K: AsRef<[u8]>>(out: &mut Vec<u8>, t: &[(u64, K, u64)]) {
    out.extend_from_slice(&(t.len() as u64).to_le_bytes());
    for (_, k, n) in t {
        put_key(out, k.as_ref());
        put_varint(out, *n);
    }
}

/// Writes a `logs summary` state (see [`SummaryTables`]) from lists in canonical order
/// ([`hashed`]); keys may be borrowed (a report's own tables), so nothing is copied twice.
pub fn encode_summary<K: AsRef<[u8]>>(
    out: &mut Vec<u8>,
    numbers: &[u64],
    days: &[(u64, K, u64)],
    tables: &[&[(u64, K, u64)]],
) {
    // Reserved once: growing a state of megabytes copied it, and faulted in new pages.
    let lists: usize = tables.iter().map(|t| list_bytes(t, COUNT_MAX)).sum();
    out.reserve(8 + 8 * numbers.len() + list_bytes(days, COUNT_MAX) + lists);
    out.extend_from_slice(&(numbers.len() as u64).to_le_bytes());
    for n in numbers {
        out.extend_from_slice(&n.to_le_bytes());
    }
    encode_list(out, days);
    for t in tables {
        encode_list(out, t);
    }
}

/// Writes a URI's values in a `logs wf2` state: bytes, article fetches and 404s (LEB128),
/// then fetched with 200 or 304 at all (a byte, 0 or 1).
#[inline]
pub(crate) fn put_uri_value(out: &mut Vec<u8>, v: &[u64; 3], fetched: bool) {
    for &x in v {
        put_varint(out, x);
    }
    out.push(u8::from(fetched));
}

/// Writes a `logs wf2` state (see [`Wf2Tables`]) from lists in canonical order
/// ([`hashed`]); keys may be borrowed.
pub fn encode_wf2<K: AsRef<[u8]>>(
    out: &mut Vec<u8>,
    malformed: u64,
    uris: &[(u64, K, UriValues)],
    clients: &[(u64, K, u64)],
    referrers: &[(u64, K, u64)],
) {
    out.reserve(
        8 + list_bytes(uris, URI_VALUES_MAX)
            + list_bytes(clients, COUNT_MAX)
            + list_bytes(referrers, COUNT_MAX),
    );
    out.extend_from_slice(&malformed.to_le_bytes());
    out.extend_from_slice(&(uris.len() as u64).to_le_bytes());
    for (_, k, (v, f)) in uris {
        put_key(out, k.as_ref());
        put_uri_value(out, v, *f);
    }
    encode_list(out, clients);
    encode_list(out, referrers);
}

/// Calls `f` with each key (borrowed) and value (read by `value`) of a keyed list (a u64
/// count, then each key's LEB128 length, bytes and value), refusing keys out of canonical
/// order.
pub(crate) fn each_keyed<'a, V>(
    r: &mut Reader<'a>,
    value: impl Fn(&mut Reader<'a>) -> Result<V, PartialError>,
    mut f: impl FnMut(&'a [u8], V),
) -> Result<(), PartialError> {
    let n = r.u64()?;
    let mut prev: Option<(u64, &[u8])> = None;
    for _ in 0..n {
        let k = r.key()?;
        let h = key_hash(k);
        if prev.is_some_and(|p| p >= (h, k)) {
            return Err(PartialError::Damaged("a table's keys are not in order"));
        }
        prev = Some((h, k));
        f(k, value(r)?);
    }
    Ok(())
}

/// Calls `f` with each key (borrowed) and count of a list [`encode_list`] wrote, refusing
/// keys out of order.
pub(crate) fn each_in_list<'a>(
    r: &mut Reader<'a>,
    f: impl FnMut(&'a [u8], u64),
) -> Result<(), PartialError> {
    each_keyed(r, Reader::varint, f)
}

/// A URI's values in a `logs wf2` state (see [`put_uri_value`]).
pub(crate) fn uri_value(r: &mut Reader<'_>) -> Result<([u64; 3], bool), PartialError> {
    let v = [r.varint()?, r.varint()?, r.varint()?];
    let f = match r.take(1)?[0] {
        0 => false,
        1 => true,
        _ => return Err(PartialError::Damaged("a flag is neither 0 nor 1")),
    };
    Ok((v, f))
}

/// Reads a list [`encode_list`] wrote, refusing keys out of order.
fn decode_list(r: &mut Reader<'_>) -> Result<Vec<(Vec<u8>, u64)>, PartialError> {
    let mut t = Vec::new();
    each_in_list(r, |k, n| t.push((k.to_vec(), n)))?;
    Ok(t)
}

/// The `logs summary` tables in full, in canonical order (see [`key_order`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SummaryTables {
    /// Requests, malformed lines, bytes sent, then requests by status code (1,000) and by
    /// hour (24).
    pub numbers: Vec<u64>,
    /// Requests by day (the key: YYYYMMDD as 4 big-endian bytes).
    pub days: Vec<(Vec<u8>, u64)>,
    /// The [`SUMMARY_TABLES`] lists: requests by client, by request (`METHOD URI
    /// PROTOCOL`), 404s by request, requests by referrer, by user agent, bytes by request,
    /// visitors (see [`visitor_key`]), requests by virtual host, by remote user, time
    /// taken by request (microseconds, in all), longest time by request (merged by
    /// maximum: see [`summary_list_max`]), bytes sent by client, by referrer, by user
    /// agent, by virtual host, by remote user, and requests by row and visitor (see
    /// [`crate::logs::summary::row_visitor_key`]).
    pub tables: Vec<Vec<(Vec<u8>, u64)>>,
}

/// How many numbers a [`SummaryTables`] holds (see the `N_*` indices).
pub const SUMMARY_NUMBERS: usize = N_LAST + 1;
/// How many lists after the days a [`SummaryTables`] holds.
pub const SUMMARY_TABLES: usize = 17;

/// Whether the summary's list `i` (0 is the first after the days) merges by maximum
/// (the longest time by request, and the row visitors, a set whose values are 1) rather
/// than by adding, as its entry of [`crate::logs::panels::LISTS`] says.
#[inline]
pub fn summary_list_max(i: usize) -> bool {
    use crate::logs::panels::{Merge, LISTS};
    LISTS.get(i).is_some_and(|l| l.merge == Merge::Max)
}

/// How the summary's list `i` merges two values.
pub fn summary_list_merge(i: usize) -> fn(u64, u64) -> u64 {
    if summary_list_max(i) {
        std::cmp::max
    } else {
        u64::saturating_add
    }
}
/// Index of the requests among a summary's numbers.
pub const N_REQUESTS: usize = 0;
/// Index of the malformed lines.
pub const N_MALFORMED: usize = 1;
/// Index of the bytes sent.
pub const N_BYTES: usize = 2;
/// Index of the first of 1,000 counts by status code.
pub const N_STATUS: usize = 3;
/// Index of the first of 24 counts by hour.
pub const N_HOURS: usize = N_STATUS + 1000;
/// Index of the requests a filter left out.
pub const N_FILTERED: usize = N_HOURS + 24;
/// Index of the requests whose time taken the log gives.
pub const N_TIMED: usize = N_FILTERED + 1;
/// Index of the microseconds taken in all.
pub const N_TIME_SUM: usize = N_TIMED + 1;
/// Index of the longest time taken (merged by maximum).
pub const N_TIME_MAX: usize = N_TIME_SUM + 1;
/// Index of the first of 32 counts by time taken: bucket `k` holds times of `k`
/// significant bits in microseconds (0; 1; 2-3; 4-7; ...), the last everything longer.
pub const N_TIME_HIST: usize = N_TIME_MAX + 1;
/// Index of the first of 64 counts by response size, bucketed by significant bits too.
pub const N_SIZE_HIST: usize = N_TIME_HIST + 32;
/// Index of the earliest request's stamp (`YYYYMMDDhhmmss`; 0: none; merged by minimum).
pub const N_FIRST: usize = N_SIZE_HIST + 64;
/// Index of the latest request's stamp (merged by maximum).
pub const N_LAST: usize = N_FIRST + 1;

/// The bucket of a histogram of [`N_TIME_HIST`] (`width` 32) or [`N_SIZE_HIST`] (64).
#[inline]
pub fn bucket(v: u64, width: usize) -> usize {
    ((64 - v.leading_zeros()) as usize).min(width - 1)
}

/// Adds a summary's numbers `from` into `into` (each the [`SUMMARY_NUMBERS`] numbers): the
/// counts saturating, the longest time and latest stamp by maximum, the earliest stamp by
/// minimum (0 is none).
pub fn add_numbers(into: &mut [u64], from: &[u64]) {
    for (i, (a, &b)) in into.iter_mut().zip(from).enumerate() {
        *a = match i {
            N_TIME_MAX | N_LAST => (*a).max(b),
            N_FIRST if *a == 0 || b == 0 => (*a).max(b),
            N_FIRST => (*a).min(b),
            _ => a.saturating_add(b),
        };
    }
}

/// A visitor's key in the summary's visitors list, as a number whose 16 big-endian bytes
/// are the key: the day (`YYYYMMDD`, 32 bits), the hour (8 bits), then the high 44 bits of
/// the client's XXH3-64 ([`visitor_part`]) and the high 44 bits of the user agent's. A
/// unique visitor is a client with one agent on one day, as GoAccess counts them; the two
/// halves let a report count the visitors of a client and of an agent's browser.
#[inline]
pub fn visitor_key(day: u32, hour: u8, client: &[u8], agent: &[u8]) -> u128 {
    (u128::from(day) << 96)
        | (u128::from(hour) << 88)
        | (u128::from(visitor_part(client)) << 44)
        | u128::from(visitor_part(agent))
}

/// The 44 bits of a client or an agent in a [`visitor_key`].
#[inline]
pub fn visitor_part(field: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(field) >> 20
}

impl SummaryTables {
    /// These tables and `other`'s, as one.
    pub fn merge(self, other: SummaryTables) -> SummaryTables {
        let numbers = if self.numbers.is_empty() {
            other.numbers
        } else if other.numbers.is_empty() {
            self.numbers
        } else {
            let mut n = self.numbers;
            add_numbers(&mut n, &other.numbers);
            n
        };
        let m = |a, b| merge_sorted(a, b, |x: u64, y: u64| x.saturating_add(y));
        let mut theirs = other.tables.into_iter();
        let mut tables: Vec<_> = self
            .tables
            .into_iter()
            .enumerate()
            .map(|(i, a)| merge_sorted(a, theirs.next().unwrap_or_default(), summary_list_merge(i)))
            .collect();
        tables.extend(theirs);
        SummaryTables {
            numbers,
            days: m(self.days, other.days),
            tables,
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let t: Vec<Vec<(u64, &[u8], u64)>> = self.tables.iter().map(|t| hashed_list(t)).collect();
        let tables: Vec<&[(u64, &[u8], u64)]> = t.iter().map(|t| &t[..]).collect();
        encode_summary(out, &self.numbers, &hashed_list(&self.days), &tables);
    }

    fn decode(b: &[u8]) -> Result<SummaryTables, PartialError> {
        let mut r = Reader { b, at: 0 };
        let n = r.u64()?;
        if n != SUMMARY_NUMBERS as u64 {
            return Err(PartialError::Damaged(
                "a summary has the wrong count of numbers",
            ));
        }
        let numbers = (0..n).map(|_| r.u64()).collect::<Result<Vec<_>, _>>()?;
        let days = decode_list(&mut r)?;
        let tables = (0..SUMMARY_TABLES)
            .map(|_| decode_list(&mut r))
            .collect::<Result<Vec<_>, _>>()?;
        if r.at != b.len() {
            return Err(PartialError::Damaged("bytes after the tables"));
        }
        Ok(SummaryTables {
            numbers,
            days,
            tables,
        })
    }
}

impl Wf2Tables {
    /// These tables and `other`'s, as one.
    pub fn merge(self, other: Wf2Tables) -> Wf2Tables {
        let uri = |(a, fa): ([u64; 3], bool), (b, fb): ([u64; 3], bool)| {
            (
                [
                    a[0].saturating_add(b[0]),
                    a[1].saturating_add(b[1]),
                    a[2].saturating_add(b[2]),
                ],
                fa || fb,
            )
        };
        let uris = merge_sorted(
            self.uris.into_iter().map(|(k, v, f)| (k, (v, f))).collect(),
            other
                .uris
                .into_iter()
                .map(|(k, v, f)| (k, (v, f)))
                .collect(),
            uri,
        );
        Wf2Tables {
            malformed: self.malformed.saturating_add(other.malformed),
            uris: uris.into_iter().map(|(k, (v, f))| (k, v, f)).collect(),
            clients: merge_sorted(self.clients, other.clients, u64::saturating_add),
            referrers: merge_sorted(self.referrers, other.referrers, u64::saturating_add),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let uris: Vec<(u64, &[u8], UriValues)> = self
            .uris
            .iter()
            .map(|(k, v, f)| (key_hash(k), &k[..], (*v, *f)))
            .collect();
        encode_wf2(
            out,
            self.malformed,
            &uris,
            &hashed_list(&self.clients),
            &hashed_list(&self.referrers),
        );
    }

    fn decode(b: &[u8]) -> Result<Wf2Tables, PartialError> {
        let mut r = Reader { b, at: 0 };
        let malformed = r.u64()?;
        let mut uris = Vec::new();
        each_keyed(&mut r, uri_value, |k, (v, f)| uris.push((k.to_vec(), v, f)))?;
        let clients = decode_list(&mut r)?;
        let referrers = decode_list(&mut r)?;
        if r.at != b.len() {
            return Err(PartialError::Damaged("bytes after the tables"));
        }
        Ok(Wf2Tables {
            malformed,
            uris,
            clients,
            referrers,
        })
    }
}

/// The first bytes of every partial.
pub const MAGIC: &[u8; 8] = b"SWATHPRT";

/// The format version this code writes and reads.
pub const VERSION: u16 = 4;

/// Which report a partial holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `wc`: a tally per piece.
    Wc,
    /// `grep -c`: a count of selected lines per piece.
    GrepCount,
    /// `logs wf2`: the Wide Finder 2 tables per piece.
    Wf2,
    /// `logs summary`: the summary's tables per piece.
    Summary,
}

impl Kind {
    fn code(self) -> u8 {
        match self {
            Kind::Wc => 1,
            Kind::GrepCount => 2,
            Kind::Wf2 => 3,
            Kind::Summary => 4,
        }
    }

    fn from_code(c: u8) -> Option<Kind> {
        match c {
            1 => Some(Kind::Wc),
            2 => Some(Kind::GrepCount),
            3 => Some(Kind::Wf2),
            4 => Some(Kind::Summary),
            _ => None,
        }
    }

    /// The kind's name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Wc => "wc",
            Kind::GrepCount => "grep -c",
            Kind::Wf2 => "logs wf2",
            Kind::Summary => "logs summary",
        }
    }
}

/// The state of one piece.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// `wc`'s tally of the piece's bytes.
    Wc(Tally),
    /// Lines selected in the piece.
    GrepCount(u64),
    /// The Wide Finder 2 tables of the piece's lines.
    Wf2(Box<Wf2Tables>),
    /// The summary tables of the piece's lines.
    Summary(Box<SummaryTables>),
}

impl State {
    fn kind(&self) -> Kind {
        match self {
            State::Wc(_) => Kind::Wc,
            State::GrepCount(_) => Kind::GrepCount,
            State::Wf2(_) => Kind::Wf2,
            State::Summary(_) => Kind::Summary,
        }
    }

    /// This piece's state followed by the next piece's (adjacent, in file order).
    fn then(self, next: State) -> State {
        match (self, next) {
            (State::Wc(a), State::Wc(b)) => State::Wc(a.merge(b)),
            (State::GrepCount(a), State::GrepCount(b)) => State::GrepCount(a.saturating_add(b)),
            (State::Wf2(a), State::Wf2(b)) => State::Wf2(Box::new(a.merge(*b))),
            (State::Summary(a), State::Summary(b)) => State::Summary(Box::new(a.merge(*b))),
            // Partials of different kinds are refused before their pieces meet.
            (a, _) => a,
        }
    }

    /// Appends the state's bytes (`docs/partial-format.md`), as a piece of a partial
    /// holds them (see [`Partial::piece_bytes`]).
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            State::Wc(t) => {
                for n in t.to_numbers() {
                    out.extend_from_slice(&n.to_le_bytes());
                }
            }
            State::GrepCount(n) => out.extend_from_slice(&n.to_le_bytes()),
            State::Wf2(t) => t.encode(out),
            State::Summary(t) => t.encode(out),
        }
    }

    /// Reads a piece's state of `kind` from `b`, the piece being `span` bytes long. The
    /// counts of `wc` and `grep -c` are held to what `span` bytes can make (a forged line
    /// count of 2^64 - 1 would otherwise wrap a total to a plausible one); a log report's
    /// counts cannot be (a compressed log's lines outnumber its bytes) and add saturating.
    fn decode(kind: Kind, b: &[u8], span: u64) -> Result<State, PartialError> {
        let words = |n: usize| -> Result<Vec<u64>, PartialError> {
            if b.len() != 8 * n {
                return Err(PartialError::Damaged(
                    "a piece's state has the wrong length",
                ));
            }
            Ok(b.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect())
        };
        match kind {
            Kind::Wc => {
                let w = words(10)?;
                let n: [u64; 10] = w.try_into().expect("10 numbers");
                let t = Tally::from_numbers(n)
                    .ok_or(PartialError::Damaged("a tally's flags are not valid"))?;
                if t.bytes != span || !t.is_possible() {
                    return Err(PartialError::Damaged(
                        "a piece's counts are more than its bytes can make",
                    ));
                }
                Ok(State::Wc(t))
            }
            Kind::GrepCount => match words(1)?[0] {
                n if n <= span => Ok(State::GrepCount(n)),
                _ => Err(PartialError::Damaged(
                    "a piece's counts are more than its bytes can make",
                )),
            },
            Kind::Wf2 => Ok(State::Wf2(Box::new(Wf2Tables::decode(b)?))),
            Kind::Summary => Ok(State::Summary(Box::new(SummaryTables::decode(b)?))),
        }
    }
}

/// What the pieces of one input hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputPart {
    /// The input's name, as the one-machine command shows it.
    pub name: Vec<u8>,
    /// Its size when the pieces were computed.
    pub len: u64,
    /// Pieces by their first byte: (end, state). Disjoint, adjacent ones merged.
    pub(crate) pieces: BTreeMap<u64, (u64, State)>,
}

impl InputPart {
    /// The input's state when its pieces cover it whole (`[0, len)`), else an error that
    /// says which bytes no piece covers.
    pub fn whole(&self) -> Result<State, PartialError> {
        let missing = |from: u64, to: u64| PartialError::Missing {
            name: String::from_utf8_lossy(&self.name).into_owned(),
            from,
            to,
        };
        let mut at = 0;
        for (&begin, &(finish, _)) in &self.pieces {
            if begin != at {
                return Err(missing(at, begin));
            }
            at = finish;
        }
        if at != self.len {
            return Err(missing(at, self.len));
        }
        match self.pieces.values().next() {
            Some((_, state)) if self.pieces.len() == 1 => Ok(state.clone()),
            _ => Err(missing(0, self.len)),
        }
    }

    /// Adds a piece: merged with its neighbours when adjacent; an error when it overlaps
    /// one (a range given twice). An empty piece (a range inside a long line) adds nothing
    /// (its state is the empty state) and is kept only as an empty input's one piece.
    fn add(&mut self, begin: u64, finish: u64, state: State) -> Result<(), PartialError> {
        if begin == finish {
            if self.len == 0 && self.pieces.is_empty() {
                self.pieces.insert(0, (0, state));
            }
            return Ok(());
        }
        let overlap = || PartialError::Overlap {
            name: String::from_utf8_lossy(&self.name).into_owned(),
            begin,
            finish,
        };
        let (mut first, mut last, mut state) = (begin, finish, state);
        if let Some((&b, &(f, _))) = self.pieces.range(..=begin).next_back() {
            if f > begin {
                return Err(overlap());
            }
            if f == begin {
                let (_, s) = self.pieces.remove(&b).expect("just seen");
                (first, state) = (b, s.then(state));
            }
        }
        if let Some((&b, &(f, _))) = self.pieces.range(begin..).next() {
            if b < finish {
                return Err(overlap());
            }
            if b == finish {
                let (_, s) = self.pieces.remove(&b).expect("just seen");
                (last, state) = (f, state.then(s));
            }
        }
        self.pieces.insert(first, (last, state));
        Ok(())
    }
}

/// An input's place in a partial: its operand position, then its name.
pub type InputKey = (u32, Vec<u8>);

/// A partial result: the pieces computed so far of one report's inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partial {
    /// The report.
    pub kind: Kind,
    /// The options that change the result or its rendering, as the command wrote them
    /// (two partials must agree on them to merge).
    pub options: Vec<u8>,
    /// Inputs by their position among the command's operands, then their name (pieces
    /// emitted without a position all have position 0: they are then in name order).
    pub inputs: BTreeMap<InputKey, InputPart>,
}

/// Why partials could not be read or merged.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PartialError {
    /// Not a partial at all.
    #[error("not a swath partial result (no SWATHPRT header)")]
    Foreign,
    /// Written by another version of the format.
    #[error("partial format version {0}, this swath reads version {VERSION}")]
    Version(u16),
    /// Cut short.
    #[error("truncated partial result ({0} bytes)")]
    Truncated(usize),
    /// The checksum does not match.
    #[error("damaged partial result (checksum mismatch)")]
    Checksum,
    /// The checksum matches but the contents do not make sense.
    #[error("damaged partial result ({0})")]
    Damaged(&'static str),
    /// Partials of different reports.
    #[error("partials of different reports ({0} and {1})")]
    Kinds(&'static str, &'static str),
    /// Partials computed with different options.
    #[error("partials computed with different options")]
    Options,
    /// One input, two sizes: it changed between pieces.
    #[error(
        "{name}: {a} bytes in one partial and {b} in another (the file changed between pieces)"
    )]
    Sizes {
        /// The input.
        name: String,
        /// One size.
        a: u64,
        /// The other.
        b: u64,
    },
    /// A range given twice.
    #[error("{name}: bytes {begin}..{finish} are in two partials")]
    Overlap {
        /// The input.
        name: String,
        /// The piece's first byte.
        begin: u64,
        /// Past its last byte.
        finish: u64,
    },
    /// No piece covers some bytes.
    #[error("{name}: no partial covers bytes {from}..{to}")]
    Missing {
        /// The input.
        name: String,
        /// First byte not covered.
        from: u64,
        /// Past the last.
        to: u64,
    },
}

impl Partial {
    /// The partial of one piece: `state` over `[begin, finish)` of the input at operand
    /// position `index`, named `name`, of `len` bytes.
    pub fn piece(
        options: Vec<u8>,
        index: u32,
        name: Vec<u8>,
        len: u64,
        (begin, finish): (u64, u64),
        state: State,
    ) -> Partial {
        let mut part = InputPart {
            name,
            len,
            pieces: BTreeMap::new(),
        };
        let kind = state.kind();
        // A single piece cannot overlap anything.
        let _ = part.add(begin, finish, state);
        let mut inputs = BTreeMap::new();
        inputs.insert((index, part.name.clone()), part);
        Partial {
            kind,
            options,
            inputs,
        }
    }

    /// The union of two partials of the same report and options.
    pub fn merge(mut self, other: Partial) -> Result<Partial, PartialError> {
        if self.kind != other.kind {
            return Err(PartialError::Kinds(self.kind.name(), other.kind.name()));
        }
        if self.options != other.options {
            return Err(PartialError::Options);
        }
        for (key, part) in other.inputs {
            match self.inputs.get_mut(&key) {
                None => {
                    self.inputs.insert(key, part);
                }
                Some(mine) => {
                    if mine.len != part.len {
                        return Err(PartialError::Sizes {
                            name: String::from_utf8_lossy(&mine.name).into_owned(),
                            a: mine.len,
                            b: part.len,
                        });
                    }
                    for (begin, (finish, state)) in part.pieces {
                        mine.add(begin, finish, state)?;
                    }
                }
            }
        }
        Ok(self)
    }

    /// The partial as bytes (`docs/partial-format.md`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = header(self.kind, &self.options, self.inputs.len());
        for ((index, _), part) in &self.inputs {
            input_head(&mut out, *index, &part.name, part.len, part.pieces.len());
            for (begin, (finish, state)) in &part.pieces {
                let mut s = Vec::new();
                state.encode(&mut s);
                piece_head(&mut out, *begin, *finish, &s);
            }
        }
        seal(out)
    }

    /// The bytes of the partial [`Partial::piece`] makes, with the piece's state already
    /// written (by [`encode_wf2`], [`encode_summary`], ...): a report's tables go to bytes
    /// straight from its own hash tables, keys borrowed, with no table of owned keys built
    /// in between.
    pub fn piece_bytes(
        kind: Kind,
        options: &[u8],
        index: u32,
        name: &[u8],
        len: u64,
        (begin, finish): (u64, u64),
        state: Vec<u8>,
    ) -> Vec<u8> {
        let mut head = header(kind, options, 1);
        // As `piece` keeps it: an empty piece only as an empty input's one piece.
        let kept = begin != finish || len == 0;
        input_head(&mut head, index, name, len, usize::from(kept));
        if !kept {
            return seal(head);
        }
        head.extend_from_slice(&begin.to_le_bytes());
        head.extend_from_slice(&finish.to_le_bytes());
        head.extend_from_slice(&(state.len() as u64).to_le_bytes());
        // The header goes in front of the state where it lies (a state of megabytes
        // copied to a new buffer cost the copy and the new buffer's page faults).
        let mut out = state;
        out.reserve(head.len() + 8);
        out.splice(0..0, head);
        seal(out)
    }

    /// Reads a partial back, checking everything before trusting any of it: header,
    /// version, checksum, then every length against the bytes that remain.
    pub fn from_bytes(b: &[u8]) -> Result<Partial, PartialError> {
        Ok(Self::parse(b, false)?.0)
    }

    /// As [`Partial::from_bytes`], but a log report's piece states are not decoded: the
    /// partial comes back as its *shape* (the same inputs and pieces with empty states:
    /// how partials fit together is checked by merging shapes) with the states' bytes
    /// beside it, for a reader that merges them straight from the bytes
    /// ([`crate::logs::streamed`]), every key borrowed, none copied.
    pub fn from_bytes_lazy(b: &[u8]) -> Result<(Partial, Vec<&[u8]>), PartialError> {
        let (shape, raw) = Self::parse(b, true)?;
        Ok((shape, raw.into_iter().map(|r| r.state).collect()))
    }

    pub(crate) fn parse(b: &[u8], lazy: bool) -> Result<(Partial, Vec<Raw<'_>>), PartialError> {
        if b.len() < MAGIC.len() || &b[..MAGIC.len()] != MAGIC {
            return Err(PartialError::Foreign);
        }
        if b.len() < 10 {
            return Err(PartialError::Truncated(b.len()));
        }
        let version = u16::from_le_bytes([b[8], b[9]]);
        if version != VERSION {
            return Err(PartialError::Version(version));
        }
        if b.len() < 8 + 2 + 2 + 4 + 4 + 8 {
            return Err(PartialError::Truncated(b.len()));
        }
        let (body, sum) = b.split_at(b.len() - 8);
        if xxhash_rust::xxh3::xxh3_64(body) != u64::from_le_bytes(sum.try_into().expect("8")) {
            return Err(PartialError::Checksum);
        }
        let mut r = Reader { b: body, at: 10 };
        let kind = Kind::from_code(r.take(1)?[0]).ok_or(PartialError::Damaged("unknown kind"))?;
        r.take(1)?;
        let options_len = r.u32()? as usize;
        let options = r.take(options_len)?.to_vec();
        let n_inputs = r.u32()?;
        let mut inputs = BTreeMap::new();
        let lazy = lazy && matches!(kind, Kind::Wf2 | Kind::Summary);
        let mut raw = Vec::new();
        for _ in 0..n_inputs {
            let index = r.u32()?;
            let name_len = r.u32()? as usize;
            let name_bytes = r.take(name_len)?;
            let name = name_bytes.to_vec();
            let len = r.u64()?;
            let n_pieces = r.u32()?;
            let mut part = InputPart {
                name,
                len,
                pieces: BTreeMap::new(),
            };
            for _ in 0..n_pieces {
                let (begin, finish) = (r.u64()?, r.u64()?);
                if begin > finish || finish > len {
                    return Err(PartialError::Damaged("a piece lies outside its input"));
                }
                let state_len = usize::try_from(r.u64()?).unwrap_or(usize::MAX);
                let bytes = r.take(state_len)?;
                let state = if lazy {
                    raw.push(Raw {
                        index,
                        name: name_bytes,
                        begin,
                        state: bytes,
                    });
                    empty_state(kind)
                } else {
                    State::decode(kind, bytes, finish - begin)?
                };
                part.add(begin, finish, state)
                    .map_err(|_| PartialError::Damaged("pieces overlap"))?;
            }
            if inputs.insert((index, part.name.clone()), part).is_some() {
                return Err(PartialError::Damaged("an input is listed twice"));
            }
        }
        if r.at != body.len() {
            return Err(PartialError::Damaged("bytes after the last input"));
        }
        Ok((
            Partial {
                kind,
                options,
                inputs,
            },
            raw,
        ))
    }
}

/// A piece's state left as bytes, with where it lies.
pub(crate) struct Raw<'a> {
    pub(crate) index: u32,
    pub(crate) name: &'a [u8],
    pub(crate) begin: u64,
    pub(crate) state: &'a [u8],
}

/// The state of no bytes, for a kind.
fn empty_state(kind: Kind) -> State {
    match kind {
        Kind::Wc => State::Wc(Tally::default()),
        Kind::GrepCount => State::GrepCount(0),
        Kind::Wf2 => State::Wf2(Box::default()),
        Kind::Summary => State::Summary(Box::default()),
    }
}

/// A partial's first bytes: magic, version, kind, options, and the count of inputs.
pub(crate) fn header(kind: Kind, options: &[u8], inputs: usize) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.push(kind.code());
    out.push(0);
    out.extend_from_slice(&(options.len() as u32).to_le_bytes());
    out.extend_from_slice(options);
    out.extend_from_slice(&(inputs as u32).to_le_bytes());
    out
}

/// An input's fields before its pieces.
pub(crate) fn input_head(out: &mut Vec<u8>, index: u32, name: &[u8], len: u64, pieces: usize) {
    out.extend_from_slice(&index.to_le_bytes());
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(name);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(pieces as u32).to_le_bytes());
}

/// A piece: its span and its state's bytes.
pub(crate) fn piece_head(out: &mut Vec<u8>, begin: u64, finish: u64, state: &[u8]) {
    out.extend_from_slice(&begin.to_le_bytes());
    out.extend_from_slice(&finish.to_le_bytes());
    out.extend_from_slice(&(state.len() as u64).to_le_bytes());
    out.extend_from_slice(state);
}

/// The checksum after everything else.
pub(crate) fn seal(mut out: Vec<u8>) -> Vec<u8> {
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Reads little-endian fields, every length checked against what remains.
pub(crate) struct Reader<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], PartialError> {
        if self.b.len() - self.at < n {
            return Err(PartialError::Damaged("a length runs past the end"));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, PartialError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, PartialError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// A number [`put_varint`] wrote, refusing one longer than 64 bits or not in its
    /// shortest form (so that equal tables have equal bytes).
    #[inline]
    pub(crate) fn varint(&mut self) -> Result<u64, PartialError> {
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            let Some(&b) = self.b.get(self.at) else {
                return Err(PartialError::Damaged("a length runs past the end"));
            };
            self.at += 1;
            if shift == 63 && b > 1 {
                return Err(PartialError::Damaged("a number is longer than 64 bits"));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                if b == 0 && shift > 0 {
                    return Err(PartialError::Damaged(
                        "a number is not in its shortest form",
                    ));
                }
                return Ok(v);
            }
            shift += 7;
        }
    }

    /// A list entry's key (see [`put_key`]).
    #[inline]
    pub(crate) fn key(&mut self) -> Result<&'a [u8], PartialError> {
        let len = self.varint()?;
        self.take(usize::try_from(len).unwrap_or(usize::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use swath_kernels::wc::{tally, Encoding};

    fn text() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                6 => Just(&b"word"[..]),
                3 => Just(&b" "[..]),
                2 => Just(&b"\n"[..]),
                1 => Just(&b"\t"[..]),
                1 => Just(&b"\r\n"[..]),
                1 => Just(&b"caf\xc3\xa9"[..]),
                1 => Just(&b"\xff"[..]),
            ],
            0..120,
        )
        .prop_map(|v| v.concat())
    }

    /// The spans of the ranges between `cuts` under the line rule (as line_span gives
    /// them), computed directly.
    fn spans(data: &[u8], cuts: &[usize]) -> Vec<(u64, u64)> {
        let after = |at: usize| {
            data[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(data.len(), |i| at + i + 1)
        };
        let mut pts: Vec<usize> = cuts.iter().map(|&c| c.min(data.len())).collect();
        pts.extend([0, data.len()]);
        pts.sort();
        pts.dedup();
        pts.windows(2)
            .map(|w| {
                let b = if w[0] == 0 { 0 } else { after(w[0]) };
                let f = if w[1] >= data.len() {
                    data.len()
                } else {
                    after(w[1])
                };
                (b as u64, f.max(b) as u64)
            })
            .collect()
    }

    proptest! {
        /// Pieces of any cuts, merged in any order and any tree, through their bytes,
        /// give the tally of the whole input; and a missing or doubled piece is caught.
        #[test]
        fn any_cuts_order_and_tree_give_the_whole(
            data in text(),
            cuts in proptest::collection::vec(0usize..600, 0..8),
            order in proptest::collection::vec(any::<u32>(), 9),
            fold_left in any::<bool>(),
            utf8 in any::<bool>(),
        ) {
            let enc = if utf8 { Encoding::Utf8 } else { Encoding::C };
            let len = data.len() as u64;
            let mut parts: Vec<Partial> = spans(&data, &cuts)
                .into_iter()
                .map(|(b, f)| {
                    let t = tally(&data[b as usize..f as usize], enc);
                    let p = Partial::piece(b"o".to_vec(), 0, b"in".to_vec(), len, (b, f), State::Wc(t));
                    Partial::from_bytes(&p.to_bytes()).unwrap()
                })
                .collect();
            // Any order.
            let mut keyed: Vec<(u32, Partial)> = order.iter().copied().zip(parts.drain(..)).collect();
            keyed.sort_by_key(|(k, _)| *k);
            let parts: Vec<Partial> = keyed.into_iter().map(|(_, p)| p).collect();
            // Two trees: a left fold, or pairs merged level by level.
            let merged = if fold_left {
                parts.into_iter().reduce(|a, b| a.merge(b).unwrap())
            } else {
                let mut level = parts;
                while level.len() > 1 {
                    let mut next = Vec::new();
                    let mut it = level.into_iter();
                    while let Some(a) = it.next() {
                        next.push(match it.next() {
                            Some(b) => Partial::from_bytes(&a.merge(b).unwrap().to_bytes()).unwrap(),
                            None => a,
                        });
                    }
                    level = next;
                }
                level.pop()
            };
            if let Some(m) = merged {
                let whole = tally(&data, enc);
                let State::Wc(t) = m.inputs[&(0, b"in".to_vec())].whole().unwrap() else { unreachable!() };
                prop_assert_eq!(
                    (t.lines, t.words, t.chars, t.bytes, t.max_line()),
                    (whole.lines, whole.words, whole.chars, whole.bytes, whole.max_line())
                );
            }
        }

        #[test]
        fn every_flipped_byte_and_truncation_is_refused(
            data in text(),
            flip in any::<prop::sample::Index>(),
            bit in 0u8..8,
            cut in any::<prop::sample::Index>(),
        ) {
            let t = tally(&data, Encoding::Utf8);
            let p = Partial::piece(b"opts".to_vec(), 3, b"name".to_vec(), data.len() as u64, (0, data.len() as u64), State::Wc(t));
            let bytes = p.to_bytes();
            let mut bad = bytes.clone();
            let i = flip.index(bad.len());
            bad[i] ^= 1 << bit;
            prop_assert!(Partial::from_bytes(&bad).is_err());
            let n = cut.index(bytes.len());
            prop_assert!(Partial::from_bytes(&bytes[..n]).is_err());
            prop_assert_eq!(Partial::from_bytes(&bytes), Ok(p));
        }
    }

    proptest! {
        #[test]
        fn numbers_read_back_and_only_their_shortest_form(v in any::<u64>(), pad in 1usize..3) {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            prop_assert_eq!(b.len(), (64 - v.leading_zeros() as usize).max(1).div_ceil(7));
            let mut r = Reader { b: &b, at: 0 };
            prop_assert_eq!(r.varint(), Ok(v));
            prop_assert_eq!(r.at, b.len());
            // The same number padded with zero groups is refused, and so is a cut one.
            let mut long = b.clone();
            *long.last_mut().unwrap() |= 0x80;
            long.extend(std::iter::repeat_n(0x80, pad - 1));
            long.push(0);
            let padded = Reader { b: &long, at: 0 }.varint();
            prop_assert!(padded.is_err());
            let cut = Reader { b: &b[..b.len() - 1], at: 0 }.varint();
            prop_assert!(cut.is_err());
        }
    }

    #[test]
    fn numbers_past_64_bits_are_refused() {
        let mut max = Vec::new();
        put_varint(&mut max, u64::MAX);
        assert_eq!(max.len(), 10);
        assert_eq!(Reader { b: &max, at: 0 }.varint(), Ok(u64::MAX));
        max[9] = 2;
        assert!(Reader { b: &max, at: 0 }.varint().is_err());
        let endless = [0xffu8; 12];
        assert!(Reader { b: &endless, at: 0 }.varint().is_err());
    }

    #[test]
    fn canonical_order_is_by_hash_then_bytes() {
        let keys: Vec<Vec<u8>> = (0..200u32).map(|i| i.to_string().into_bytes()).collect();
        let sorted = canonical(keys.iter().map(|k| (k.clone(), ())));
        for w in sorted.windows(2) {
            assert!(key_hash(&w[0].0) <= key_hash(&w[1].0));
            assert_eq!(key_order(&w[0].0, &w[1].0), std::cmp::Ordering::Less);
        }
        assert_eq!(sorted.len(), keys.len());
    }

    fn tables(keys: Vec<(u8, u64)>) -> Wf2Tables {
        // Keys from a few bytes, so that tables share some.
        let mut t = Wf2Tables::default();
        for (k, n) in keys {
            let one = Wf2Tables {
                malformed: n % 3,
                uris: vec![(vec![b'/', k % 7], [n, n % 2, n % 5], n % 4 == 0)],
                clients: vec![(vec![k % 5], n)],
                referrers: vec![(vec![k % 3, b'r'], n + 1)],
            };
            t = t.merge(one);
        }
        t
    }

    proptest! {
        #[test]
        fn wf2_tables_merge_in_any_order_and_read_back(
            a in proptest::collection::vec((any::<u8>(), 0u64..1000), 0..20),
            b in proptest::collection::vec((any::<u8>(), 0u64..1000), 0..20),
            c in proptest::collection::vec((any::<u8>(), 0u64..1000), 0..20),
        ) {
            let (ta, tb, tc) = (tables(a), tables(b), tables(c));
            let left = ta.clone().merge(tb.clone()).merge(tc.clone());
            let right = tc.merge(tb.merge(ta));
            prop_assert_eq!(&left, &right);
            let p = Partial::piece(b"o".to_vec(), 0, b"l".to_vec(), 5, (0, 5), State::Wf2(Box::new(left.clone())));
            let back = Partial::from_bytes(&p.to_bytes()).unwrap();
            prop_assert_eq!(back.inputs[&(0, b"l".to_vec())].whole(), Ok(State::Wf2(Box::new(left))));
        }
    }

    #[test]
    fn wf2_tables_out_of_order_are_damaged() {
        // Clients "a" and "b" written against canonical order (the encoder sorts).
        let mut clients = canonical([(&b"b"[..], 1u64), (b"a", 1)]);
        clients.reverse();
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&0u64.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        bytes.extend_from_slice(&2u64.to_le_bytes());
        for (k, n) in clients {
            put_key(&mut bytes, k);
            put_varint(&mut bytes, n);
        }
        bytes.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(
            Wf2Tables::decode(&bytes),
            Err(PartialError::Damaged("a table's keys are not in order"))
        );
    }

    #[test]
    fn missing_doubled_foreign_and_mismatched_pieces_are_errors() {
        let piece = |opts: &str, idx, name: &str, len, span, n| {
            let (o, nm) = (opts.as_bytes().to_vec(), name.as_bytes().to_vec());
            Partial::piece(o, idx, nm, len, span, State::GrepCount(n))
        };
        let key = |i: u32, n: &str| (i, n.as_bytes().to_vec());
        let a = piece("x", 0, "f", 10, (0, 4), 2);
        let b = piece("x", 0, "f", 10, (4, 10), 3);
        let m = a.clone().merge(b.clone()).unwrap();
        assert_eq!(m.inputs[&key(0, "f")].whole(), Ok(State::GrepCount(5)));
        assert_eq!(
            a.inputs[&key(0, "f")].whole(),
            Err(PartialError::Missing {
                name: "f".into(),
                from: 4,
                to: 10
            })
        );
        assert!(matches!(
            m.clone().merge(b.clone()),
            Err(PartialError::Overlap { .. })
        ));
        assert_eq!(
            a.clone().merge(piece("y", 0, "f", 10, (4, 10), 1)),
            Err(PartialError::Options)
        );
        assert!(matches!(
            a.clone().merge(piece("x", 0, "f", 11, (4, 10), 1)),
            Err(PartialError::Sizes { a: 10, b: 11, .. })
        ));
        let w = Partial::piece(
            b"x".to_vec(),
            0,
            b"f".to_vec(),
            0,
            (0, 0),
            State::Wc(Tally::default()),
        );
        assert_eq!(
            a.clone().merge(w),
            Err(PartialError::Kinds("grep -c", "wc"))
        );
        assert_eq!(
            Partial::from_bytes(b"PK\x03\x04 zip"),
            Err(PartialError::Foreign)
        );
        let mut v5 = a.to_bytes();
        v5[8] = 5;
        assert_eq!(Partial::from_bytes(&v5), Err(PartialError::Version(5)));
        for old in [1, 2, 3] {
            let mut v = a.to_bytes();
            v[8] = old;
            assert_eq!(
                Partial::from_bytes(&v),
                Err(PartialError::Version(old.into()))
            );
        }
        // Inputs stay apart, by position then name; empty pieces add nothing.
        let two = m.merge(piece("x", 0, "e", 0, (0, 0), 0)).unwrap();
        assert_eq!(two.inputs[&key(0, "e")].whole(), Ok(State::GrepCount(0)));
        let names: Vec<&[u8]> = two.inputs.keys().map(|k| &k.1[..]).collect();
        assert_eq!(names, [&b"e"[..], b"f"]);
        let e = piece("x", 0, "f", 10, (4, 4), 0)
            .merge(piece("x", 0, "f", 10, (4, 4), 0))
            .unwrap();
        assert!(e.inputs[&key(0, "f")].pieces.is_empty());
        let e = e.merge(piece("x", 0, "f", 10, (0, 10), 4)).unwrap();
        assert_eq!(e.inputs[&key(0, "f")].whole(), Ok(State::GrepCount(4)));
    }
}
