//! Log reports merged from partial results' sorted lists in bounded memory.
//!
//! A log partial's state holds each table as a list in canonical order (by the key's hash,
//! then its bytes: `crate::partial::key_order`, docs/partial-format.md),
//! so the states of many partials are sorted runs: merged k ways, they yield every distinct
//! key once with its total, which goes straight into a top-N ([`TopN`]) and a count of
//! distinct keys. Memory is the cursors (one per state) and the `n` rows kept, whatever the
//! number of distinct keys (billions of clients): the states themselves are read where
//! they lie (mapped partial files, in the page cache). The report is the one the hash
//! tables give ([`Wf2::ranked`], [`Summary::ranked`]); tests check it.
//!
//! The tables of a state follow each other, so each table's cursors start where the
//! previous table's ended: every byte is read once.
//!
//! [`Wf2::ranked`]: crate::logs::Wf2::ranked
//! [`Summary::ranked`]: crate::logs::summary::Summary::ranked

use crate::logs::summary::{SummaryFold, SummaryTop};
use crate::logs::{TopN, Wf2Top};
use crate::partial::{
    key_hash, put_key, put_uri_value, put_varint, uri_value, PartialError, Reader, SUMMARY_NUMBERS,
    SUMMARY_TABLES,
};

/// One state's list, read one entry ahead (its key's hash, the key, the values).
struct Cursor<'a, V> {
    r: Reader<'a>,
    left: u64,
    head: Option<(u64, &'a [u8], V)>,
}

impl<'a, V> Cursor<'a, V> {
    /// Reads the next entry into `head` (`None` at the list's end), refusing a key that
    /// does not follow the one before.
    fn advance(
        &mut self,
        value: &impl Fn(&mut Reader<'a>) -> Result<V, PartialError>,
    ) -> Result<(), PartialError> {
        if self.left == 0 {
            self.head = None;
            return Ok(());
        }
        self.left -= 1;
        let key = self.r.key()?;
        let h = key_hash(key);
        if self
            .head
            .as_ref()
            .is_some_and(|&(ph, prev, _)| (ph, prev) >= (h, key))
        {
            return Err(PartialError::Damaged("a table's keys are not in order"));
        }
        self.head = Some((h, key, value(&mut self.r)?));
        Ok(())
    }
}

/// Whether cursor `a`'s head comes before cursor `b`'s: by hash, key, then cursor (a
/// cursor whose list is done comes last).
#[inline]
fn before<V>(c: &[Cursor<'_, V>], a: usize, b: usize) -> bool {
    match (&c[a].head, &c[b].head) {
        (Some((ha, ka, _)), Some((hb, kb, _))) => (ha, *ka, a) < (hb, *kb, b),
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// A tournament tree over the cursors (a "tree of losers", Knuth 5.4.1): node 0 holds the
/// cursor with the smallest head, nodes `1..k` the losers of the matches below them, and
/// leaf `i` (node `k + i`) is cursor `i`. Moving the winner on replays only its path: one
/// comparison a level, where a binary heap's pop and push take about twice as many.
struct Losers {
    tree: Vec<usize>,
}

impl Losers {
    fn new<V>(c: &[Cursor<'_, V>]) -> Losers {
        let k = c.len();
        let mut tree = vec![0; k.max(1)];
        // Winners of the subtrees, leaves first.
        let mut win = vec![0; 2 * k];
        for i in 0..k {
            win[k + i] = i;
        }
        for n in (1..k).rev() {
            let (a, b) = (win[2 * n], win[2 * n + 1]);
            let (w, l) = if before(c, a, b) { (a, b) } else { (b, a) };
            win[n] = w;
            tree[n] = l;
        }
        tree[0] = if k > 1 { win[1] } else { 0 };
        Losers { tree }
    }

    /// The cursor with the smallest head.
    #[inline]
    fn winner(&self) -> usize {
        self.tree[0]
    }

    /// Replays cursor `i`'s path to the root after its head changed.
    #[inline]
    fn replay<V>(&mut self, c: &[Cursor<'_, V>], i: usize) {
        let k = c.len();
        let mut w = i;
        let mut n = (k + i) / 2;
        while n >= 1 {
            if before(c, self.tree[n], w) {
                std::mem::swap(&mut self.tree[n], &mut w);
            }
            n /= 2;
        }
        self.tree[0] = w;
    }
}

/// Merges one list of every state, the list starting at `at[i]` in `states[i]` (moved to
/// the list's end), calling `emit` with each distinct key and its values combined by `add`.
fn merge_lists<'a, V: Copy>(
    states: &[&'a [u8]],
    at: &mut [usize],
    value: impl Fn(&mut Reader<'a>) -> Result<V, PartialError>,
    add: impl Fn(V, V) -> V,
    mut emit: impl FnMut(&[u8], V),
) -> Result<(), PartialError> {
    let mut cursors = Vec::with_capacity(states.len());
    for (i, &b) in states.iter().enumerate() {
        let mut r = Reader { b, at: at[i] };
        let left = r.u64()?;
        let mut c = Cursor {
            r,
            left,
            head: None,
        };
        c.advance(&value)?;
        cursors.push(c);
    }
    if !cursors.is_empty() {
        let mut losers = Losers::new(&cursors);
        while let Some((hash, key, v)) = cursors[losers.winner()].head {
            let mut total = v;
            let i = losers.winner();
            cursors[i].advance(&value)?;
            losers.replay(&cursors, i);
            // The same key from other states comes next.
            loop {
                let j = losers.winner();
                match cursors[j].head {
                    Some((h, k, v)) if h == hash && k == key => {
                        total = add(total, v);
                        cursors[j].advance(&value)?;
                        losers.replay(&cursors, j);
                    }
                    _ => break,
                }
            }
            emit(key, total);
        }
    }
    for (i, c) in cursors.iter().enumerate() {
        at[i] = c.r.at;
    }
    Ok(())
}

/// A list of counts merged into a ranking of `n` rows.
fn ranking(
    states: &[&[u8]],
    at: &mut [usize],
    n: usize,
) -> Result<crate::logs::Ranking, PartialError> {
    let mut t = TopN::new(n);
    merge_lists(states, at, Reader::varint, add_count, |k, c| t.add(k, c))?;
    Ok(t.finish())
}

/// Refuses states with bytes after their tables.
fn at_ends(states: &[&[u8]], at: &[usize]) -> Result<(), PartialError> {
    if states.iter().zip(at).any(|(s, &a)| a != s.len()) {
        return Err(PartialError::Damaged("bytes after the tables"));
    }
    Ok(())
}

/// A URI's counts added as the tables add them: saturating, fetched or not.
fn add_uri((a, fa): ([u64; 3], bool), (b, fb): ([u64; 3], bool)) -> ([u64; 3], bool) {
    (
        [
            a[0].saturating_add(b[0]),
            a[1].saturating_add(b[1]),
            a[2].saturating_add(b[2]),
        ],
        fa | fb,
    )
}

/// The summary numbers of every state added (saturating, as merged partials add them),
/// each state's place moved past them.
fn summary_numbers(
    states: &[&[u8]],
    at: &mut [usize],
) -> Result<[u64; SUMMARY_NUMBERS], PartialError> {
    let mut numbers = [0u64; SUMMARY_NUMBERS];
    for (i, &b) in states.iter().enumerate() {
        let mut r = Reader { b, at: 0 };
        if r.u64()? != SUMMARY_NUMBERS as u64 {
            return Err(PartialError::Damaged(
                "a summary has the wrong count of numbers",
            ));
        }
        let mut these = [0u64; SUMMARY_NUMBERS];
        for v in these.iter_mut() {
            *v = r.u64()?;
        }
        crate::partial::add_numbers(&mut numbers, &these);
        at[i] = r.at;
    }
    Ok(numbers)
}

/// The Wide Finder 2 report's rankings of `n` rows over the `logs wf2` states `states`.
pub fn wf2(states: &[&[u8]], n: usize) -> Result<Wf2Top, PartialError> {
    let mut at = vec![0usize; states.len()];
    let mut malformed = 0u64;
    for (i, &b) in states.iter().enumerate() {
        let mut r = Reader { b, at: 0 };
        malformed = malformed.saturating_add(r.u64()?);
        at[i] = r.at;
    }
    let (mut hits, mut bytes, mut not_found) = (TopN::new(n), TopN::new(n), TopN::new(n));
    merge_lists(
        states,
        &mut at,
        uri_value,
        add_uri,
        |k, ([b, h, nf], fetched)| {
            if h > 0 {
                hits.add(k, h);
            }
            if fetched {
                bytes.add(k, b);
            }
            if nf > 0 {
                not_found.add(k, nf);
            }
        },
    )?;
    let clients = ranking(states, &mut at, n)?;
    let referrers = ranking(states, &mut at, n)?;
    at_ends(states, &at)?;
    Ok(Wf2Top {
        malformed,
        hits: hits.finish(),
        bytes: bytes.finish(),
        not_found: not_found.finish(),
        clients,
        referrers,
    })
}

/// The summary's panels of `n` rows over the `logs summary` states `states`, static
/// files by `exts` (see [`crate::logs::summary::SummaryFold`]).
pub fn summary(
    states: &[&[u8]],
    n: usize,
    exts: crate::logs::summary::Statics<'_>,
) -> Result<SummaryTop, PartialError> {
    let (fold, numbers, days) = summary_fold(states, n, exts, |_, _, _, _| {})?;
    Ok(fold.finish(&numbers, days))
}

/// The numbers and requests by day of the `logs summary` states `states`, and the fold of
/// their tables' keys (each distinct key once, with its total, table after table), before
/// it is finished; `each` sees every key after the fold took it.
pub(crate) fn summary_fold<'e>(
    states: &[&[u8]],
    n: usize,
    exts: crate::logs::summary::Statics<'e>,
    mut each: impl FnMut(&mut SummaryFold<'e>, usize, &[u8], u64),
) -> Result<SummaryParts<'e>, PartialError> {
    let mut at = vec![0usize; states.len()];
    let numbers = summary_numbers(states, &mut at)?;
    let mut days = Vec::new();
    let mut bad_day = false;
    merge_lists(
        states,
        &mut at,
        Reader::varint,
        add_count,
        |k, c| match <[u8; 4]>::try_from(k) {
            Ok(d) => days.push((u32::from_be_bytes(d), c)),
            Err(_) => bad_day = true,
        },
    )?;
    if bad_day {
        return Err(PartialError::Damaged("a day is not 4 bytes"));
    }
    days.sort_unstable();
    let mut fold = SummaryFold::new(n, exts);
    for table in 0..SUMMARY_TABLES {
        merge_lists(
            states,
            &mut at,
            Reader::varint,
            crate::partial::summary_list_merge(table),
            |k, c| {
                fold.entry(table, k, c);
                each(&mut fold, table, k, c);
            },
        )?;
        fold.end_table(table);
    }
    at_ends(states, &at)?;
    Ok((fold, numbers, days))
}

/// A summary's fold before it is finished, with its numbers and requests by day.
pub(crate) type SummaryParts<'e> = (SummaryFold<'e>, [u64; SUMMARY_NUMBERS], Vec<(u32, u64)>);

/// Writes a keyed list merged from every state's list (see [`merge_lists`]): its count,
/// then each key with its values written by `put`.
fn write_list<'a, V: Copy>(
    out: &mut Vec<u8>,
    states: &[&'a [u8]],
    at: &mut [usize],
    value: impl Fn(&mut Reader<'a>) -> Result<V, PartialError>,
    add: impl Fn(V, V) -> V,
    put: impl Fn(&mut Vec<u8>, V),
) -> Result<(), PartialError> {
    let count_at = out.len();
    out.extend_from_slice(&0u64.to_le_bytes());
    let mut n = 0u64;
    merge_lists(states, at, value, add, |k, v| {
        n += 1;
        put_key(out, k);
        put(out, v);
    })?;
    out[count_at..count_at + 8].copy_from_slice(&n.to_le_bytes());
    Ok(())
}

/// Adds counts as the tables add them.
fn add_count(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
}

/// Writes a count.
fn put_count(out: &mut Vec<u8>, v: u64) {
    put_varint(out, v);
}

/// Writes `lists` lists of counts merged from every state's, one after another.
fn write_counts(
    out: &mut Vec<u8>,
    states: &[&[u8]],
    at: &mut [usize],
    lists: usize,
) -> Result<(), PartialError> {
    for _ in 0..lists {
        write_list(out, states, at, Reader::varint, add_count, put_count)?;
    }
    Ok(())
}

/// The states of adjacent pieces of `logs wf2` merged into one state's bytes (the bytes
/// joining their tables gives, `crate::report::LogWf2`): numbers added, lists merged k
/// ways.
pub fn merge_wf2_states(states: &[&[u8]]) -> Result<Vec<u8>, PartialError> {
    let (mut out, mut at) = merged_out(states);
    let mut malformed = 0u64;
    for (i, &b) in states.iter().enumerate() {
        let mut r = Reader { b, at: 0 };
        malformed = malformed.saturating_add(r.u64()?);
        at[i] = r.at;
    }
    out.extend_from_slice(&malformed.to_le_bytes());
    write_list(
        &mut out,
        states,
        &mut at,
        uri_value,
        add_uri,
        |out, (v, f): ([u64; 3], bool)| put_uri_value(out, &v, f),
    )?;
    write_counts(&mut out, states, &mut at, 2)?;
    at_ends(states, &at)?;
    Ok(out)
}

/// The states of adjacent pieces of `logs summary` merged into one state's bytes (the
/// bytes joining their tables gives, `crate::report::LogSummary`): numbers added, lists
/// merged k ways.
pub fn merge_summary_states(states: &[&[u8]]) -> Result<Vec<u8>, PartialError> {
    let (mut out, mut at) = merged_out(states);
    let numbers = summary_numbers(states, &mut at)?;
    out.extend_from_slice(&(SUMMARY_NUMBERS as u64).to_le_bytes());
    for n in numbers {
        out.extend_from_slice(&n.to_le_bytes());
    }
    // Days, then the tables (each merged as it merges).
    write_counts(&mut out, states, &mut at, 1)?;
    for i in 0..SUMMARY_TABLES {
        let merge = crate::partial::summary_list_merge(i);
        write_list(&mut out, states, &mut at, Reader::varint, merge, put_count)?;
    }
    at_ends(states, &at)?;
    Ok(out)
}

/// The merged state's buffer and a cursor per state. The merged state is no longer than
/// the states together: reserved once (pages are only touched as they are written),
/// never copied to grow.
fn merged_out(states: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
    (
        Vec::with_capacity(states.iter().map(|s| s.len()).sum()),
        vec![0usize; states.len()],
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::logs::summary::{Summary, SummaryConfig};
    use crate::logs::{LineReport, Wf2, Wf2Config};
    use crate::report::{merge_bytes, piece_bytes, LogSummary, LogWf2, Partial, PieceOf, Report};
    use proptest::prelude::*;

    /// Log lines over small alphabets, so that keys repeat across pieces and counts tie.
    pub(crate) fn log() -> impl Strategy<Value = Vec<u8>> {
        let line = (0u8..6, 0u8..9, 0u8..5, 0u16..3000, 0u8..4, 0u8..3).prop_map(
            |(client, uri, status, bytes, refr, agent)| {
                let uri = match uri {
                    0..=3 => format!("/ongoing/When/200x/2007/01/0{uri}/Title{}", uri % 2),
                    4 => "/ongoing/ongoing.atom".to_string(),
                    5 => "/ongoing/When/200x/2007/01/01/a.b".to_string(),
                    _ => format!("/img/{uri}.png"),
                };
                let status = ["200", "304", "404", "301", "200"][usize::from(status)];
                let refr = ["\"-\"", "\"http://a/\"", "\"http://www.tbray.org/ongoing/x\"", "\"http://b/\""]
                    [usize::from(refr)];
                let day = 10 + client % 3;
                format!(
                    "10.0.0.{client} - - [{day}/Oct/2007:1{agent}:55:36 -0700] \"GET {uri} HTTP/1.1\" {status} {bytes} {refr} \"UA{agent}\"\n"
                )
                .into_bytes()
            },
        );
        let malformed = Just(b"short line\n".to_vec());
        proptest::collection::vec(prop_oneof![9 => line, 1 => malformed], 0..120)
            .prop_map(|v| v.concat())
    }

    /// The data cut at line ends near the given fractions: each piece whole lines.
    pub(crate) fn pieces(data: &[u8], cuts: &[u16]) -> Vec<(u64, u64)> {
        let mut at: Vec<u64> = cuts
            .iter()
            .map(|&c| {
                let p = data.len() * usize::from(c) / 1000;
                match data[p.min(data.len())..].iter().position(|&b| b == b'\n') {
                    Some(i) => (p + i + 1) as u64,
                    None => data.len() as u64,
                }
            })
            .collect();
        at.push(0);
        at.push(data.len() as u64);
        at.sort_unstable();
        at.dedup();
        if at.len() == 1 {
            // An empty log: one empty piece.
            return vec![(0, 0)];
        }
        at.windows(2).map(|w| (w[0], w[1])).collect()
    }

    pub(crate) fn report<R: LineReport>(c: &R::Config, data: &[u8]) -> R {
        let mut r = R::default();
        r.block(c, data);
        r
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]
        #[test]
        fn streamed_reports_equal_the_tables(
            data in log(),
            cuts in proptest::collection::vec(0u16..1000, 0..6),
            n in prop_oneof![Just(0usize), Just(1), Just(3), Just(10)],
        ) {
            let spans = pieces(&data, &cuts);
            let (wc, sc) = (Wf2Config::default(), SummaryConfig::default());
            let mut wf2_states = Vec::new();
            let mut summary_states = Vec::new();
            for &(b, f) in &spans {
                let piece = &data[b as usize..f as usize];
                let mut s = Vec::new();
                report::<Wf2>(&wc, piece).encode_state(&mut s);
                wf2_states.push(s);
                let mut s = Vec::new();
                report::<Summary>(&sc, piece).encode_state(&mut s);
                summary_states.push(s);
            }
            let w: Vec<&[u8]> = wf2_states.iter().map(|s| &s[..]).collect();
            prop_assert_eq!(wf2(&w, n).unwrap(), report::<Wf2>(&wc, &data).ranked(n));
            let s: Vec<&[u8]> = summary_states.iter().map(|s| &s[..]).collect();
            let exts = crate::logs::summary::default_static();
            let exts = crate::logs::summary::Statics::new(&exts, sc.format.name());
            prop_assert_eq!(summary(&s, n, exts).unwrap(), report::<Summary>(&sc, &data).ranked(n, exts));
        }

        #[test]
        fn bytes_merged_as_lists_equal_the_merged_tables(
            data in log(),
            cuts in proptest::collection::vec(0u16..1000, 0..6),
            order in proptest::collection::vec(any::<u32>(), 8),
            summary_kind in any::<bool>(),
        ) {
            let spans = pieces(&data, &cuts);
            if summary_kind {
                merged_in_any_order_and_tree::<LogSummary>(&data, &spans, &order, &SummaryConfig::default())?;
            } else {
                merged_in_any_order_and_tree::<LogWf2>(&data, &spans, &order, &Wf2Config::default())?;
            }
        }
    }

    /// Partials of `spans` of `data`, in the order `order` gives, merged from their bytes
    /// as lists ([`merge_bytes`]), in one step and as a tree, give the bytes their tables
    /// merged and written give.
    fn merged_in_any_order_and_tree<R>(
        data: &[u8],
        spans: &[(u64, u64)],
        order: &[u32],
        config: &<R::Fold as LineReport>::Config,
    ) -> Result<(), TestCaseError>
    where
        R: Report,
        R::Fold: LineReport,
    {
        let len = data.len() as u64;
        let of = PieceOf {
            options: b"opts",
            index: 0,
            name: b"log",
            len,
            offset: 0,
        };
        let mut parts: Vec<Vec<u8>> = spans
            .iter()
            .map(|&(b, f)| {
                let r = report::<R::Fold>(config, &data[b as usize..f as usize]);
                piece_bytes::<R>(&of, (b, f), r)
            })
            .collect();
        // Any order.
        let mut keyed: Vec<(u32, Vec<u8>)> = order.iter().copied().zip(parts.drain(..)).collect();
        keyed.sort_by_key(|k| k.0);
        let parts: Vec<Vec<u8>> = keyed.into_iter().map(|k| k.1).collect();
        let slices: Vec<&[u8]> = parts.iter().map(|p| &p[..]).collect();
        let eager = slices
            .iter()
            .map(|b| Partial::<R>::from_bytes(b).unwrap())
            .reduce(|a, b| a.merge(b).unwrap())
            .unwrap()
            .to_bytes();
        let merge = |p: &[&[u8]]| merge_bytes::<R>(p).unwrap().unwrap();
        prop_assert_eq!(merge(&slices), eager);
        // A tree: the first half merged first.
        let half = slices.len() / 2;
        if half > 0 {
            let (left, right) = (merge(&slices[..half]), merge(&slices[half..]));
            prop_assert_eq!(merge(&[&left, &right]), merge(&slices));
        }
        Ok(())
    }

    #[test]
    fn top_n_keeps_the_rows_top_keeps() {
        let mut t = TopN::new(3);
        for (k, c) in [(&b"b"[..], 5), (b"a", 5), (b"c", 9), (b"d", 1), (b"e", 5)] {
            t.add(k, c);
        }
        let r = t.finish();
        assert_eq!(r.distinct, 5);
        assert_eq!(
            r.top,
            vec![(b"c".to_vec(), 9), (b"a".to_vec(), 5), (b"b".to_vec(), 5)]
        );
    }

    #[test]
    fn keys_out_of_order_are_refused() {
        // A wf2 state: malformed, no URIs, clients "a" and "b" in the wrong order, no
        // referrers; written as they would be in the right one, it reads.
        let state = |reversed: bool| {
            let mut keys = crate::partial::canonical([(&b"a"[..], ()), (b"b", ())]);
            if reversed {
                keys.reverse();
            }
            let mut s = Vec::new();
            s.extend_from_slice(&0u64.to_le_bytes());
            s.extend_from_slice(&0u64.to_le_bytes());
            s.extend_from_slice(&2u64.to_le_bytes());
            for (k, ()) in keys {
                put_key(&mut s, k);
                put_varint(&mut s, 1);
            }
            s.extend_from_slice(&0u64.to_le_bytes());
            s
        };
        assert_eq!(wf2(&[&state(false)], 10).unwrap().clients.distinct, 2);
        let s = state(true);
        let e = wf2(&[&s], 10).unwrap_err();
        assert!(e.to_string().contains("not in order"), "{e}");
        let e = merge_wf2_states(&[&s, &s]).unwrap_err();
        assert!(e.to_string().contains("not in order"), "{e}");
        // Cut short, or with bytes after the tables.
        assert!(wf2(&[&s[..s.len() - 3]], 10).is_err());
        let mut longer = s.clone();
        longer.push(0);
        assert!(summary(
            &[&longer],
            10,
            crate::logs::summary::Statics::new(&[], "combined")
        )
        .is_err());
        assert!(wf2(&[&longer], 10).is_err());
    }
}
