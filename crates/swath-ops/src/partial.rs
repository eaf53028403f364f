//! Partial results' wire format (`docs/partial-format.md`): the header (magic, version,
//! kind, options), the fields of inputs and pieces, the checksum, and the codecs of the
//! states: numbers, varints, keys in canonical order, and the log reports' tables
//! ([`Wf2Tables`], [`SummaryTables`]).
//!
//! The container of pieces, generic over a report, and the reports themselves are in
//! [`crate::report`]; this module knows no report but by the bytes it writes.

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
    /// agent, by virtual host, by remote user, requests by row and visitor (see
    /// [`crate::logs::summary::row_visitor_key`]), and bytes by 404 request.
    pub tables: Vec<Vec<(Vec<u8>, u64)>>,
}

/// How many numbers a [`SummaryTables`] holds (see the `N_*` indices).
pub const SUMMARY_NUMBERS: usize = N_STATUS_BYTES + 1000;
/// How many lists after the days a [`SummaryTables`] holds.
pub const SUMMARY_TABLES: usize = crate::logs::panels::LISTS.len();

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
/// Index of the first of 24 counts of bytes sent by hour.
pub const N_HOUR_BYTES: usize = N_LAST + 1;
/// Index of the first of 1,000 counts of bytes sent by status code.
pub const N_STATUS_BYTES: usize = N_HOUR_BYTES + 24;

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
    visitor_key_of(day, hour, visitor_part(client), visitor_part(agent))
}

/// A [`visitor_key`] of a client's and an agent's [`visitor_part`] made before.
#[inline]
pub fn visitor_key_of(day: u32, hour: u8, client: u64, agent: u64) -> u128 {
    (u128::from(day) << 96)
        | (u128::from(hour) << 88)
        | (u128::from(client) << 44)
        | u128::from(agent)
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

    /// Appends the tables' bytes (a `logs summary` piece's state).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let t: Vec<Vec<(u64, &[u8], u64)>> = self.tables.iter().map(|t| hashed_list(t)).collect();
        let tables: Vec<&[(u64, &[u8], u64)]> = t.iter().map(|t| &t[..]).collect();
        encode_summary(out, &self.numbers, &hashed_list(&self.days), &tables);
    }

    /// Reads the tables [`SummaryTables::encode`] wrote, refusing keys out of order.
    pub fn decode(b: &[u8]) -> Result<SummaryTables, PartialError> {
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

    /// Appends the tables' bytes (a `logs wf2` piece's state).
    pub fn encode(&self, out: &mut Vec<u8>) {
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

    /// Reads the tables [`Wf2Tables::encode`] wrote, refusing keys out of order.
    pub fn decode(b: &[u8]) -> Result<Wf2Tables, PartialError> {
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
pub const VERSION: u16 = 5;

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
    /// A partial of another report than the one asked for (its kind's code), sound as far
    /// as its header and checksum go: `swath merge` names both reports
    /// ([`PartialError::Kinds`]) when it knows the other one.
    #[error("a partial of another report (kind {0})")]
    OtherKind(u8),
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
/// A partial's first bytes: magic, version, kind (its code), options, and the count of
/// inputs.
pub(crate) fn header(code: u8, options: &[u8], inputs: usize) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.push(code);
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

/// The code of the report a partial holds (its kind), read from its header after the
/// checks that come before anything else, in order: the magic, the version, the length
/// and the checksum. The code is not checked against any report's.
pub fn kind_code(b: &[u8]) -> Result<u8, PartialError> {
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
    Ok(b[10])
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
}
