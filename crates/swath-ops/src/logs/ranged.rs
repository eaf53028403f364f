//! The summary merged and ranked by hash range (issue 29, docs/design.md): each range of
//! hashes of every partial's lists is merged and folded by its own task, and the ranges'
//! top rows, distinct counts and sums are combined exactly into the report
//! [`super::streamed::summary`] makes of the whole.
//!
//! A partial's lists are in hash order, and a range is cut so that everything a kept row
//! needs lies in the row's range, whatever the table:
//! - a list keyed by a row (requests, 404s, referrers, hosts, users, clients, agents and
//!   their bytes and times) goes by its key's hash (XXH3-64, as the list is ordered);
//! - the row visitors ([`T_ROW_VISITORS`]) go by the row part of their key, which is the
//!   row's hash less 3 bits ([`crate::logs::summary::row_part`]): a row and its visitors
//!   lie in one range, so a range's top rows carry their own visitor counts;
//! - the visitors ([`T_VISITORS`]) go by their client part, the client's hash less 20 bits
//!   ([`crate::partial::visitor_part`]): a visitor's hours of one day lie in one range (so
//!   visitors by day add across ranges), and so do a client and its visitors.
//!
//! A range is given by the high 44 bits of a hash ([`range_of`]), which all three share.
//! What does not line up is summed across ranges, as maps: the groups (referring sites,
//! browsers, systems: their keys are not in hash order), the referring sites' visitors by
//! site part, the visitors by agent part, and the first agents read (what the fold
//! remembers of agents is the first [`AGENT_CACHE`] in hash order, found again from the
//! ranges' counts). A row in the top `n` of the whole is in the top `n` of its range (its
//! count is whole there, against fewer rows), so the tops combine: one round of range
//! tasks, then the combine.

use std::collections::BTreeMap;

use hashbrown::{HashMap, HashSet};

use crate::logs::panels::GROUPS;
use crate::logs::streamed::summary_fold;
use crate::logs::summary::{
    add_group_visitors, agent, group_visitors_of, no_group_visitors, rank_groups, row_part, Agent,
    Statics, SummaryTop, AGENT_CACHE, G_SITES, PAIRED, P_NOT_FOUND, P_REFERRERS, P_REQUESTS,
    P_SITES, P_STATUS, P_USERS, P_VHOSTS, ROW_PANELS, T_AGENTS, T_CLIENTS, T_NOT_FOUND,
    T_REFERRERS, T_REQUESTS, T_ROW_VISITORS, T_USERS, T_VHOSTS, T_VISITORS,
};
use crate::logs::tables::{Ranking, TopN};
use crate::partial::{
    add_numbers, key_hash, put_key, put_varint, visitor_part, PartialError, Reader,
    SUMMARY_NUMBERS, SUMMARY_TABLES,
};

/// The most ranges a summary is cut into.
pub const RANGES_MAX: usize = 4096;

/// The low 44 bits (a client's or an agent's part of a visitor key).
const PART: u64 = (1 << 44) - 1;

/// Which of `ranges` equal ranges hash `h` lies in, by its high 44 bits.
#[inline]
pub fn range_of(h: u64, ranges: usize) -> usize {
    ((u128::from(h >> 20) * ranges as u128) >> 44) as usize
}

/// Where a key of table `table` goes (see the module's text).
#[inline]
fn range_of_key(table: usize, key: &[u8], ranges: usize) -> usize {
    let visitor = || <[u8; 16]>::try_from(key).map(u128::from_be_bytes);
    let h = match table {
        T_VISITORS => match visitor() {
            Ok(v) => ((v >> 44) as u64 & PART) << 20,
            // Not a visitor key: the fold passes it by.
            Err(_) => 0,
        },
        T_ROW_VISITORS => match visitor() {
            Ok(v) => ((v >> 64) as u64 & ((1 << 61) - 1)) << 3,
            Err(_) => 0,
        },
        _ => key_hash(key),
    };
    range_of(h, ranges)
}

/// How one list of a state is cut.
#[derive(Debug)]
enum ListCut {
    /// A list in hash order by its key's hash: each range's entries are one run of bytes,
    /// `[bounds[r], bounds[r + 1])`.
    Runs(Vec<usize>),
    /// A visitor list: its entries go by the bits of their key, anywhere; `bytes[r]` of
    /// them for range `r`.
    Scattered(Vec<usize>),
}

/// A `logs summary` state cut into `ranges` states, one a range: each a subsequence of
/// every list (so still in canonical order); the numbers and the requests by day in the
/// first only (the others' numbers zero). Made in two passes, so that each range's state
/// is written once, where it is to stay ([`StateCut::write`]).
#[derive(Debug)]
pub struct StateCut<'a> {
    state: &'a [u8],
    ranges: usize,
    /// Where the numbers and the days end.
    head: usize,
    /// Each list: where it starts (past its count), its cut, and its count in each range.
    lists: Vec<(usize, ListCut, Vec<u64>)>,
    lens: Vec<usize>,
}

impl<'a> StateCut<'a> {
    /// Reads `state` through, finding where each range's entries lie.
    pub fn new(state: &'a [u8], ranges: usize) -> Result<StateCut<'a>, PartialError> {
        let ranges = ranges.clamp(1, RANGES_MAX);
        let mut r = Reader { b: state, at: 0 };
        if r.u64()? != SUMMARY_NUMBERS as u64 {
            return Err(PartialError::Damaged(
                "a summary has the wrong count of numbers",
            ));
        }
        r.take(8 * SUMMARY_NUMBERS)?;
        for _ in 0..r.u64()? {
            r.key()?;
            r.varint()?;
        }
        let head = r.at;
        // The numbers in every range (zero but in the first), the days in the first.
        let mut lens = vec![8 + 8 * SUMMARY_NUMBERS + 8; ranges];
        lens[0] = head;
        let mut lists = Vec::with_capacity(SUMMARY_TABLES);
        for table in 0..SUMMARY_TABLES {
            let n = r.u64()?;
            let start = r.at;
            let mut counts = vec![0u64; ranges];
            let cut = if matches!(table, T_VISITORS | T_ROW_VISITORS) {
                let mut bytes = vec![0usize; ranges];
                for _ in 0..n {
                    let entry = r.at;
                    let key = r.key()?;
                    r.varint()?;
                    let to = range_of_key(table, key, ranges);
                    bytes[to] += r.at - entry;
                    counts[to] += 1;
                }
                ListCut::Scattered(bytes)
            } else {
                let mut bounds = vec![start; ranges + 1];
                let mut last = 0;
                for _ in 0..n {
                    let entry = r.at;
                    let key = r.key()?;
                    r.varint()?;
                    let to = range_of_key(table, key, ranges);
                    if to < last {
                        return Err(PartialError::Damaged("a table's keys are not in order"));
                    }
                    // Ranges with no entries before this one end where it starts.
                    for b in &mut bounds[last + 1..=to] {
                        *b = entry;
                    }
                    last = to;
                    counts[to] += 1;
                }
                for b in &mut bounds[last + 1..] {
                    *b = r.at;
                }
                ListCut::Runs(bounds)
            };
            for (i, l) in lens.iter_mut().enumerate() {
                *l += 8 + match &cut {
                    ListCut::Runs(b) => b[i + 1] - b[i],
                    ListCut::Scattered(b) => b[i],
                };
            }
            lists.push((start, cut, counts));
        }
        if r.at != state.len() {
            return Err(PartialError::Damaged("bytes after the tables"));
        }
        Ok(StateCut {
            state,
            ranges,
            head,
            lists,
            lens,
        })
    }

    /// The bytes of range `r`'s state.
    pub fn len(&self, r: usize) -> usize {
        self.lens[r]
    }

    /// Whether the state has no ranges (never: at least one).
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    /// Writes every range's state, range `r`'s to `outs[r]` from `at[r]` on (moved past
    /// it): [`StateCut::len`] bytes each.
    pub fn write(&self, outs: &mut [&mut [u8]], at: &mut [usize]) {
        let state = self.state;
        let mut put = |r: usize, b: &[u8]| {
            outs[r][at[r]..at[r] + b.len()].copy_from_slice(b);
            at[r] += b.len();
        };
        put(0, &state[..self.head]);
        for r in 1..self.ranges {
            put(r, &(SUMMARY_NUMBERS as u64).to_le_bytes());
            // The numbers, zero, and no days.
            put(r, &[0; 8 * SUMMARY_NUMBERS + 8]);
        }
        for (table, (start, cut, counts)) in self.lists.iter().enumerate() {
            for (r, c) in counts.iter().enumerate() {
                put(r, &c.to_le_bytes());
                if let ListCut::Runs(b) = cut {
                    put(r, &state[b[r]..b[r + 1]]);
                }
            }
            if let ListCut::Scattered(_) = cut {
                let mut rd = Reader {
                    b: state,
                    at: *start,
                };
                let n: u64 = counts.iter().sum();
                for _ in 0..n {
                    let entry = rd.at;
                    let (Ok(key), Ok(_)) = (rd.key(), rd.varint()) else {
                        unreachable!("read through by StateCut::new")
                    };
                    put(range_of_key(table, key, self.ranges), &state[entry..rd.at]);
                }
            }
        }
    }
}

/// The slices of states cut into ranges, one a range: each the options, then every
/// state's range (see [`StateCut`]; read back by [`read_slice`]). Sized first, then
/// written once where they are to stay ([`Slices::write`]).
#[derive(Debug)]
pub struct Slices<'a> {
    options: Vec<u8>,
    cuts: Vec<StateCut<'a>>,
    ranges: usize,
}

impl<'a> Slices<'a> {
    /// No states yet, to cut into `ranges` ranges, under `options`.
    pub fn new(options: Vec<u8>, ranges: usize) -> Slices<'a> {
        Slices {
            options,
            cuts: Vec::new(),
            ranges: ranges.clamp(1, RANGES_MAX),
        }
    }

    /// Adds a state, read through and cut.
    pub fn add(&mut self, state: &'a [u8]) -> Result<(), PartialError> {
        self.cuts.push(StateCut::new(state, self.ranges)?);
        Ok(())
    }

    /// The options the slices are under.
    pub fn options(&self) -> &[u8] {
        &self.options
    }

    /// How many ranges.
    pub fn ranges(&self) -> usize {
        self.ranges
    }

    /// The bytes of range `r`'s slice.
    pub fn len(&self, r: usize) -> usize {
        let states: usize = self.cuts.iter().map(|c| 8 + c.len(r)).sum();
        4 + self.options.len() + 4 + states
    }

    /// Whether there are no ranges (never: at least one).
    pub fn is_empty(&self) -> bool {
        self.ranges == 0
    }

    /// Writes every range's slice, range `r`'s to `outs[r]` ([`Slices::len`] bytes).
    pub fn write(&self, outs: &mut [&mut [u8]]) {
        let mut at = vec![0usize; self.ranges];
        for (o, a) in outs.iter_mut().zip(at.iter_mut()) {
            let mut head = Vec::with_capacity(8 + self.options.len());
            head.extend_from_slice(&(self.options.len() as u32).to_le_bytes());
            head.extend_from_slice(&self.options);
            head.extend_from_slice(&(self.cuts.len() as u32).to_le_bytes());
            o[..head.len()].copy_from_slice(&head);
            *a = head.len();
        }
        for cut in &self.cuts {
            for (r, (o, a)) in outs.iter_mut().zip(at.iter_mut()).enumerate() {
                o[*a..*a + 8].copy_from_slice(&(cut.len(r) as u64).to_le_bytes());
                *a += 8;
            }
            cut.write(outs, &mut at);
        }
    }

    /// The slices, each in a buffer of its own.
    pub fn to_vecs(&self) -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = (0..self.ranges).map(|r| vec![0; self.len(r)]).collect();
        let mut outs: Vec<&mut [u8]> = out.iter_mut().map(|o| &mut o[..]).collect();
        self.write(&mut outs);
        out
    }
}

/// The options and the states of a slice ([`slice_bytes`]).
pub fn read_slice(b: &[u8]) -> Result<(&[u8], Vec<&[u8]>), PartialError> {
    let mut r = Reader { b, at: 0 };
    let n = r.u32()? as usize;
    let options = r.take(n)?;
    let count = r.u32()?;
    let mut states = Vec::new();
    for _ in 0..count {
        let n = usize::try_from(r.u64()?).unwrap_or(usize::MAX);
        states.push(r.take(n)?);
    }
    if r.at != b.len() {
        return Err(PartialError::Damaged("bytes after a range's states"));
    }
    Ok((options, states))
}

/// What a range's task hands on: its panels as [`SummaryTop`] (its top rows, with their
/// bytes, times and visitors), and what is summed across ranges.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RangeTop {
    /// The range's panels (its groups' rankings and visitors unused).
    pub top: SummaryTop,
    /// Every group's rows: key, hits, bytes (the `G_*` indices).
    pub groups: Vec<Vec<(Vec<u8>, [u64; 2])>>,
    /// The referring sites' visitors by the site's row part.
    pub site_visitors: Vec<(u64, u64)>,
    /// The visitors by day by the agent part of their key.
    pub agent_visitors: Vec<(u64, u64)>,
    /// The first [`AGENT_CACHE`] agents of the range, in hash order: the part of the
    /// raw agent and what it is.
    pub agents: Vec<(u64, Agent)>,
}

/// A range's panels, from its states (each cut to the range by [`cut_state`]).
pub fn summary_range(
    states: &[&[u8]],
    n: usize,
    exts: Statics<'_>,
) -> Result<RangeTop, PartialError> {
    let mut site_visitors: HashMap<u64, u64> = HashMap::new();
    let mut agents: Vec<(u64, Vec<u8>)> = Vec::new();
    let (mut fold, numbers, days) = summary_fold(states, n, exts, |_, table, k, _| match table {
        T_AGENTS if agents.len() < AGENT_CACHE => agents.push((visitor_part(k), k.to_vec())),
        T_ROW_VISITORS => {
            if let Ok(b) = <[u8; 16]>::try_from(k) {
                let v = u128::from_be_bytes(b);
                if (v >> 125) as usize == P_SITES {
                    let part = (v >> 64) as u64 & ((1 << 61) - 1);
                    *site_visitors.entry(part).or_insert(0) += 1;
                }
            }
        }
        _ => {}
    })?;
    let mut by_agent: HashMap<u64, u64> = HashMap::new();
    for &(_, v) in fold.visitor_days() {
        *by_agent.entry(v as u64 & PART).or_insert(0) += 1;
    }
    let groups = (0..GROUPS.len())
        .map(|g| {
            fold.group_rows(g)
                .iter()
                .map(|(k, v)| (k.bytes().to_vec(), *v))
                .collect()
        })
        .collect();
    let agents = agents
        .into_iter()
        .map(|(p, k)| (p, fold.agent_of(&k).cloned().unwrap_or_else(|| agent(&k))))
        .collect();
    Ok(RangeTop {
        top: fold.finish(&numbers, days),
        groups,
        site_visitors: site_visitors.into_iter().collect(),
        agent_visitors: by_agent.into_iter().collect(),
        agents,
    })
}

/// The ranking of the rows of rankings of disjoint keys: their top `n` rows, their
/// distinct keys added.
fn ranked<'a>(rankings: impl Iterator<Item = &'a Ranking>, n: usize) -> Ranking {
    let mut t = TopN::new(n);
    let mut distinct = 0u64;
    for r in rankings {
        distinct = distinct.saturating_add(r.distinct);
        for (k, c) in &r.top {
            t.add(k, *c);
        }
    }
    let mut r = t.finish();
    r.distinct = distinct;
    r
}

/// Adds maps of counts.
fn summed<K: Ord + Clone, I: IntoIterator<Item = (K, u64)>>(
    maps: impl Iterator<Item = I>,
) -> BTreeMap<K, u64> {
    let mut out = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            let e: &mut u64 = out.entry(k).or_insert(0);
            *e = e.saturating_add(v);
        }
    }
    out
}

/// The keys of a ranking's rows.
fn kept(r: &Ranking) -> HashSet<&[u8]> {
    r.top.iter().map(|(k, _)| &k[..]).collect()
}

/// The entries of the ranges' maps whose keys are kept.
fn kept_of<'a, V: Clone + 'a>(
    maps: impl Iterator<Item = &'a BTreeMap<Vec<u8>, V>>,
    keep: &HashSet<&[u8]>,
) -> BTreeMap<Vec<u8>, V> {
    maps.flat_map(|m| m.iter())
        .filter(|(k, _)| keep.contains(&k[..]))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The report of the whole from its ranges' ([`summary_range`], every range once, in
/// range order): what [`super::streamed::summary`] makes of the states not cut.
pub fn combine(parts: &[RangeTop], n: usize) -> SummaryTop {
    let tops = || parts.iter().map(|p| &p.top);
    let mut numbers = vec![0u64; SUMMARY_NUMBERS];
    for t in tops() {
        if t.numbers.len() == SUMMARY_NUMBERS {
            add_numbers(&mut numbers, &t.numbers);
        }
    }
    let lists: Vec<Ranking> = (0..SUMMARY_TABLES)
        .map(|i| ranked(tops().filter_map(|t| t.lists.get(i)), n))
        .collect();
    let static_files = ranked(tops().map(|t| &t.static_files), n);
    let (requests, statics, not_found) = (
        kept(&lists[T_REQUESTS]),
        kept(&static_files),
        kept(&lists[T_NOT_FOUND]),
    );
    let wanted: HashSet<&[u8]> = requests
        .iter()
        .chain(&statics)
        .chain(&not_found)
        .copied()
        .collect();
    let requested: HashSet<&[u8]> = requests.iter().chain(&statics).copied().collect();

    // The groups, summed, then ranked as the fold ranks them.
    let mut sums: Vec<HashMap<Vec<u8>, [u64; 2]>> =
        (0..GROUPS.len()).map(|_| HashMap::new()).collect();
    for p in parts {
        for (g, rows) in p.groups.iter().enumerate().take(GROUPS.len()) {
            for (k, v) in rows {
                let e = sums[g].entry_ref(&k[..]).or_insert([0; 2]);
                e[0] = e[0].saturating_add(v[0]);
                e[1] = e[1].saturating_add(v[1]);
            }
        }
    }
    let sums = sums
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|(k, v)| (crate::logs::Key::new(&k), v))
                .collect()
        })
        .collect();
    let (groups, group_bytes) = rank_groups(sums, n);

    let mut row_visitors: Vec<BTreeMap<Vec<u8>, u64>> =
        (0..ROW_PANELS).map(|_| BTreeMap::new()).collect();
    for (panel, keep) in [
        (P_REQUESTS, &requested),
        (P_NOT_FOUND, &not_found),
        (P_REFERRERS, &kept(&lists[T_REFERRERS])),
        (P_VHOSTS, &kept(&lists[T_VHOSTS])),
        (P_USERS, &kept(&lists[T_USERS])),
    ] {
        row_visitors[panel] = kept_of(tops().filter_map(|t| t.row_visitors.get(panel)), keep);
    }
    row_visitors[P_STATUS] = summed(
        tops()
            .filter_map(|t| t.row_visitors.get(P_STATUS))
            .map(|m| m.iter().map(|(k, v)| (k.clone(), *v))),
    );
    let site_parts = summed(parts.iter().map(|p| p.site_visitors.iter().copied()));
    row_visitors[P_SITES] = groups[G_SITES]
        .top
        .iter()
        .filter_map(|(s, _)| {
            let c = *site_parts.get(&row_part(s))?;
            (c > 0).then(|| (s.clone(), c))
        })
        .collect();

    // The agents the fold remembers: the first AGENT_CACHE in hash order, so in range
    // order (a later one of the same part replacing an earlier one).
    let mut agent_parts: HashMap<u64, &Agent> = HashMap::new();
    let mut room = AGENT_CACHE as u64;
    for p in parts {
        let take = p
            .agents
            .len()
            .min(usize::try_from(room).unwrap_or(usize::MAX));
        agent_parts.extend(p.agents[..take].iter().map(|(k, a)| (*k, a)));
        let read = p.top.lists.get(T_AGENTS).map_or(0, |r| r.distinct);
        room = room.saturating_sub(read);
    }
    let by_agent = summed(parts.iter().map(|p| p.agent_visitors.iter().copied()));
    let mut group_visitors = no_group_visitors();
    for (a, &c) in &by_agent {
        if let Some(ag) = agent_parts.get(a) {
            add_group_visitors(&mut group_visitors, ag, c);
        }
    }
    let agent_keys: HashMap<u64, &[u8]> = lists[T_AGENTS]
        .top
        .iter()
        .map(|(k, _)| (visitor_part(k), &k[..]))
        .collect();
    let agent_visitors: BTreeMap<Vec<u8>, u64> = agent_keys
        .iter()
        .filter_map(|(a, k)| {
            let c = *by_agent.get(a)?;
            (c > 0).then(|| (k.to_vec(), c))
        })
        .collect();

    let pair_bytes = PAIRED
        .iter()
        .enumerate()
        .map(|(i, &(hits, _))| {
            kept_of(
                tops().filter_map(|t| t.pair_bytes.get(i)),
                &kept(&lists[hits]),
            )
        })
        .collect();
    let bytes_of = kept_of(tops().map(|t| &t.bytes_of), &wanted);
    let not_found_bytes_of = kept_of(tops().map(|t| &t.not_found_bytes_of), &not_found);
    let times_of = kept_of(tops().map(|t| &t.times_of), &wanted);
    let client_visitors = kept_of(tops().map(|t| &t.client_visitors), &kept(&lists[T_CLIENTS]));
    drop((wanted, requested, requests, statics, not_found, agent_keys));
    SummaryTop {
        numbers,
        days: summed(tops().map(|t| t.days.iter().copied()))
            .into_iter()
            .collect(),
        visitors: tops().fold(0u64, |a, t| a.saturating_add(t.visitors)),
        visitors_by_day: summed(tops().map(|t| t.visitors_by_day.iter().copied()))
            .into_iter()
            .collect(),
        visitors_by_hour: summed(
            tops().map(|t| t.visitors_by_hour.iter().map(|&(d, h, c)| ((d, h), c))),
        )
        .into_iter()
        .map(|((d, h), c)| (d, h, c))
        .collect(),
        static_hits: tops().fold(0u64, |a, t| a.saturating_add(t.static_hits)),
        crawler_hits: tops().fold(0u64, |a, t| a.saturating_add(t.crawler_hits)),
        bytes_of,
        not_found_bytes_of,
        times_of,
        client_visitors,
        agent_visitors,
        group_visitors: group_visitors_of(group_visitors),
        row_visitors,
        pair_bytes,
        groups,
        group_bytes,
        static_files,
        lists,
    }
}

// A range's result as bytes: varints, and keys as in a partial's lists.

fn put_ranking(out: &mut Vec<u8>, r: &Ranking) {
    put_varint(out, r.distinct);
    put_varint(out, r.top.len() as u64);
    for (k, c) in &r.top {
        put_key(out, k);
        put_varint(out, *c);
    }
}

fn get_ranking(r: &mut Reader<'_>) -> Result<Ranking, PartialError> {
    let distinct = r.varint()?;
    let top = get_list(r, |r| Ok((r.key()?.to_vec(), r.varint()?)))?;
    Ok(Ranking { distinct, top })
}

fn put_map(out: &mut Vec<u8>, m: &BTreeMap<Vec<u8>, u64>) {
    put_varint(out, m.len() as u64);
    for (k, v) in m {
        put_key(out, k);
        put_varint(out, *v);
    }
}

fn get_map(r: &mut Reader<'_>) -> Result<BTreeMap<Vec<u8>, u64>, PartialError> {
    Ok(get_list(r, |r| Ok((r.key()?.to_vec(), r.varint()?)))?
        .into_iter()
        .collect())
}

fn put_maps(out: &mut Vec<u8>, ms: &[BTreeMap<Vec<u8>, u64>]) {
    put_varint(out, ms.len() as u64);
    for m in ms {
        put_map(out, m);
    }
}

fn get_maps(r: &mut Reader<'_>) -> Result<Vec<BTreeMap<Vec<u8>, u64>>, PartialError> {
    get_list(r, get_map)
}

fn put_pairs(out: &mut Vec<u8>, v: &[(u64, u64)]) {
    put_varint(out, v.len() as u64);
    for &(a, b) in v {
        put_varint(out, a);
        put_varint(out, b);
    }
}

fn get_pairs(r: &mut Reader<'_>) -> Result<Vec<(u64, u64)>, PartialError> {
    get_list(r, |r| Ok((r.varint()?, r.varint()?)))
}

fn get_list<'a, T>(
    r: &mut Reader<'a>,
    mut item: impl FnMut(&mut Reader<'a>) -> Result<T, PartialError>,
) -> Result<Vec<T>, PartialError> {
    let n = r.varint()?;
    // Each item takes a byte at the least.
    if n > (r.b.len() - r.at) as u64 {
        return Err(PartialError::Damaged("a length runs past the end"));
    }
    (0..n).map(|_| item(r)).collect()
}

fn get_str(r: &mut Reader<'_>) -> Result<String, PartialError> {
    String::from_utf8(r.key()?.to_vec()).map_err(|_| PartialError::Damaged("a name is not UTF-8"))
}

fn get_u32(r: &mut Reader<'_>) -> Result<u32, PartialError> {
    u32::try_from(r.varint()?).map_err(|_| PartialError::Damaged("a day is not 4 bytes"))
}

impl RangeTop {
    /// As bytes, for [`RangeTop::from_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let t = &self.top;
        let mut out = Vec::new();
        let o = &mut out;
        put_pairs(o, &t.numbers.iter().map(|&v| (v, 0)).collect::<Vec<_>>());
        put_pairs(
            o,
            &t.days
                .iter()
                .map(|&(d, c)| (u64::from(d), c))
                .collect::<Vec<_>>(),
        );
        put_varint(o, t.lists.len() as u64);
        for l in &t.lists {
            put_ranking(o, l);
        }
        put_varint(o, t.visitors);
        put_pairs(
            o,
            &t.visitors_by_day
                .iter()
                .map(|&(d, c)| (u64::from(d), c))
                .collect::<Vec<_>>(),
        );
        let hours: Vec<(u64, u64)> = t
            .visitors_by_hour
            .iter()
            .map(|&(d, h, c)| ((u64::from(d) << 8) | u64::from(h), c))
            .collect();
        put_pairs(o, &hours);
        put_ranking(o, &t.static_files);
        put_varint(o, t.static_hits);
        put_varint(o, t.crawler_hits);
        put_map(o, &t.bytes_of);
        put_map(o, &t.not_found_bytes_of);
        put_varint(o, t.times_of.len() as u64);
        for (k, &(a, b)) in &t.times_of {
            put_key(o, k);
            put_varint(o, a);
            put_varint(o, b);
        }
        put_maps(o, &t.pair_bytes);
        put_map(o, &t.client_visitors);
        put_maps(o, &t.row_visitors);
        put_varint(o, self.groups.len() as u64);
        for g in &self.groups {
            put_varint(o, g.len() as u64);
            for (k, [h, b]) in g {
                put_key(o, k);
                put_varint(o, *h);
                put_varint(o, *b);
            }
        }
        put_pairs(o, &self.site_visitors);
        put_pairs(o, &self.agent_visitors);
        put_varint(o, self.agents.len() as u64);
        for (p, a) in &self.agents {
            put_varint(o, *p);
            for s in [&a.browser, &a.browser_version, &a.os, &a.os_version] {
                put_key(o, s.as_bytes());
            }
            put_varint(o, u64::from(a.crawler));
        }
        out
    }

    /// Reads [`RangeTop::to_bytes`] back.
    pub fn from_bytes(b: &[u8]) -> Result<RangeTop, PartialError> {
        let r = &mut Reader { b, at: 0 };
        let numbers = get_pairs(r)?.into_iter().map(|(v, _)| v).collect();
        let days = get_list(r, |r| Ok((get_u32(r)?, r.varint()?)))?;
        let lists = get_list(r, get_ranking)?;
        let visitors = r.varint()?;
        let visitors_by_day = get_list(r, |r| Ok((get_u32(r)?, r.varint()?)))?;
        let visitors_by_hour = get_pairs(r)?
            .into_iter()
            .map(|(dh, c)| ((dh >> 8) as u32, dh as u8, c))
            .collect();
        let static_files = get_ranking(r)?;
        let static_hits = r.varint()?;
        let crawler_hits = r.varint()?;
        let bytes_of = get_map(r)?;
        let not_found_bytes_of = get_map(r)?;
        let times_of = get_list(r, |r| Ok((r.key()?.to_vec(), (r.varint()?, r.varint()?))))?
            .into_iter()
            .collect();
        let pair_bytes = get_maps(r)?;
        let client_visitors = get_map(r)?;
        let row_visitors = get_maps(r)?;
        let groups = get_list(r, |r| {
            get_list(r, |r| Ok((r.key()?.to_vec(), [r.varint()?, r.varint()?])))
        })?;
        let site_visitors = get_pairs(r)?;
        let agent_visitors = get_pairs(r)?;
        let agents = get_list(r, |r| {
            let p = r.varint()?;
            let a = Agent {
                browser: get_str(r)?,
                browser_version: get_str(r)?,
                os: get_str(r)?,
                os_version: get_str(r)?,
                crawler: r.varint()? != 0,
            };
            Ok((p, a))
        })?;
        if r.at != b.len() {
            return Err(PartialError::Damaged("bytes after a range's panels"));
        }
        Ok(RangeTop {
            top: SummaryTop {
                numbers,
                days,
                lists,
                visitors,
                visitors_by_day,
                visitors_by_hour,
                static_files,
                static_hits,
                crawler_hits,
                bytes_of,
                not_found_bytes_of,
                times_of,
                pair_bytes,
                client_visitors,
                row_visitors,
                ..SummaryTop::default()
            },
            groups,
            site_visitors,
            agent_visitors,
            agents,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::streamed::tests::{log, pieces, report};
    use crate::logs::summary::{Summary, SummaryConfig};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]
        #[test]
        fn ranges_combined_equal_the_whole_merge(
            data in log(),
            cuts in proptest::collection::vec(0u16..1000, 0..6),
            n in prop_oneof![Just(0usize), Just(1), Just(3), Just(10)],
            ranges in prop_oneof![Just(1usize), Just(2), Just(3), Just(7), Just(64)],
            visitors_4xx in any::<bool>(),
        ) {
            let sc = SummaryConfig { visitors_4xx, ..SummaryConfig::default() };
            let states: Vec<Vec<u8>> = pieces(&data, &cuts)
                .iter()
                .map(|&(b, f)| {
                    let mut s = Vec::new();
                    report::<Summary>(&sc, &data[b as usize..f as usize]).encode_state(&mut s);
                    s
                })
                .collect();
            let exts = crate::logs::summary::default_static();
            let exts = Statics::new(&exts, sc.format.name());
            let whole: Vec<&[u8]> = states.iter().map(|s| &s[..]).collect();
            let want = crate::logs::streamed::summary(&whole, n, exts).unwrap();
            // Cut in two groups, as on two workers.
            let half = whole.len() / 2;
            let groups: Vec<Vec<Vec<u8>>> = [&whole[..half], &whole[half..]]
                .iter()
                .map(|g| {
                    let mut slices = Slices::new(b"opts".to_vec(), ranges);
                    for s in g.iter() {
                        slices.add(s).unwrap();
                    }
                    slices.to_vecs()
                })
                .collect();
            let mut parts = Vec::new();
            for r in 0..ranges {
                let mut these = Vec::new();
                for g in &groups {
                    let (options, states) = read_slice(&g[r]).unwrap();
                    prop_assert_eq!(options, b"opts");
                    these.extend(states);
                }
                let top = summary_range(&these, n, exts).unwrap();
                let back = RangeTop::from_bytes(&top.to_bytes()).unwrap();
                prop_assert_eq!(&back.top.lists, &top.top.lists);
                prop_assert_eq!(&back.groups, &top.groups);
                prop_assert_eq!(&back.agents, &top.agents);
                parts.push(back);
            }
            prop_assert_eq!(combine(&parts, n), want);
        }
    }

    #[test]
    fn a_range_is_the_high_bits_of_a_hash() {
        assert_eq!(range_of(0, 7), 0);
        assert_eq!(range_of(u64::MAX, 7), 6);
        assert_eq!(range_of(u64::MAX, 1), 0);
        // The low 20 bits never move a hash to another range.
        for r in [2, 3, 7, 1000] {
            for h in [1u64 << 63, (1 << 62) + 12345, 0xdead_beef_cafe_f00d] {
                assert_eq!(range_of(h, r), range_of(h & !((1 << 20) - 1), r));
            }
        }
    }
}
