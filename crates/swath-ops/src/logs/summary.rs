//! The GoAccess-style summary: what each request adds ([`Summary`]), the filters that
//! leave requests out ([`Filter`]), and the report's panels folded from the tables
//! ([`SummaryFold`], [`SummaryTop`]).
//!
//! A worker's tables hold every key (so partial results merge exactly); the panels that
//! are functions of one table's keys (operating systems and browsers from the agents,
//! static files from the requests, referring sites from the referrers, unique visitors
//! per day from the visitor keys) are folded from the whole table when the report is
//! made, each key once, whether the table is in memory or merged from sorted partial
//! lists ([`crate::logs::streamed`]).

use std::borrow::Cow;
use std::net::IpAddr;

use hashbrown::HashMap;

use crate::logs::format::{stamp_day, stamp_hour, Format, Outcome, Record, Stamp, W3c, W3C_FIELDS};
use crate::logs::panels::{BytesOf, RowsOf, VisitorsOf, GROUPS, LISTS};
pub use crate::logs::panels::{
    G_BROWSERS, G_BROWSER_VERSIONS, G_CRAWLERS, G_SITES, G_SYSTEMS, G_SYSTEM_VERSIONS, P_NOT_FOUND,
    P_REFERRERS, P_REQUESTS, P_SITES, P_STATUS, P_USERS, P_VHOSTS, ROW_PANELS, T_AGENTS,
    T_AGENT_BYTES, T_BYTES, T_CLIENTS, T_CLIENT_BYTES, T_NOT_FOUND, T_NOT_FOUND_BYTES, T_REFERRERS,
    T_REFERRER_BYTES, T_REQUESTS, T_ROW_VISITORS, T_TIME_MAX, T_TIME_SUM, T_USERS, T_USER_BYTES,
    T_VHOSTS, T_VHOST_BYTES, T_VISITORS,
};
pub use crate::logs::statics::{default_static, is_static, Statics, STATIC_EXTENSIONS};
use crate::logs::tables::{add, merge_map, top, Interned, Probe, Ranked, Ranking, Table, TopN};
use crate::logs::{LineReport, DEFAULT_MAX_LINE};
use crate::partial::{
    add_numbers, bucket, visitor_key_of, visitor_part, N_BYTES, N_FILTERED, N_FIRST, N_HOURS,
    N_HOUR_BYTES, N_LAST, N_MALFORMED, N_REQUESTS, N_SIZE_HIST, N_STATUS, N_STATUS_BYTES, N_TIMED,
    N_TIME_HIST, N_TIME_MAX, N_TIME_SUM, SUMMARY_NUMBERS, SUMMARY_TABLES,
};

/// An address range of `--exclude-ip`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Net {
    addr: IpAddr,
    prefix: u8,
}

/// Why a text is not an address range of `--exclude-ip`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// The part before any `/` is not an IP address.
    #[error("'{0}' is not an IP address or CIDR range")]
    NotAnAddress(String),
    /// The prefix length is not a number from 0 to the address's width.
    #[error("'{given}': the prefix length must be 0 to {max}")]
    BadPrefix {
        /// The whole text given.
        given: String,
        /// The address's width in bits (32 or 128).
        max: u8,
    },
}

impl Net {
    /// An address (`192.0.2.7`, `2001:db8::1`) or a CIDR range (`10.0.0.0/8`).
    pub fn parse(s: &str) -> Result<Net, NetError> {
        let (a, p) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = a
            .parse()
            .map_err(|_| NetError::NotAnAddress(s.to_string()))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix =
            match p {
                None => max,
                Some(p) => p.parse::<u8>().ok().filter(|&p| p <= max).ok_or_else(|| {
                    NetError::BadPrefix {
                        given: s.to_string(),
                        max,
                    }
                })?,
            };
        Ok(Net { addr, prefix })
    }

    /// Whether `ip` is in the range.
    pub fn contains(&self, ip: &IpAddr) -> bool {
        let bits = |a: &IpAddr| -> (u128, u32) {
            match a {
                IpAddr::V4(v) => (u128::from(u32::from(*v)), 32),
                IpAddr::V6(v) => (u128::from(*v), 128),
            }
        };
        let ((net, w), (x, wx)) = (bits(&self.addr), bits(ip));
        if w != wx {
            return false;
        }
        let shift = w - u32::from(self.prefix);
        shift >= w || (net >> shift) == (x >> shift)
    }
}

/// What the summary leaves out. A request left out is counted as filtered, nothing else.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Clients in these ranges (`--exclude-ip`).
    pub exclude: Vec<Net>,
    /// Requests from crawlers, by their user agent (`--ignore-crawlers`).
    pub ignore_crawlers: bool,
    /// Requests from anything but crawlers (`--crawlers-only`).
    pub crawlers_only: bool,
    /// Agents of an unknown browser or system are crawlers too, for the two filters
    /// above (`--unknowns-as-crawlers`, GoAccess's option).
    pub unknowns_as_crawlers: bool,
    /// Requests before this stamp (`--since`).
    pub since: Option<Stamp>,
    /// Requests after this stamp (`--until`).
    pub until: Option<Stamp>,
    /// Requests with these statuses (`--ignore-status`).
    pub ignore_status: Vec<u16>,
}

impl Filter {
    /// Whether any filter is set.
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    /// What the options text of a partial says of the filters.
    pub fn spec(&self) -> String {
        let nets: Vec<String> = self
            .exclude
            .iter()
            .map(|n| format!("{}/{}", n.addr, n.prefix))
            .collect();
        format!(
            "exclude-ip={}\nignore-crawlers={}\nsince={}\nuntil={}\nignore-status={:?}",
            nets.join(","),
            self.ignore_crawlers,
            self.since.unwrap_or(0),
            self.until.unwrap_or(0),
            self.ignore_status
        ) + if self.crawlers_only {
            "\ncrawlers-only=true"
        } else {
            ""
        } + if self.unknowns_as_crawlers {
            "\nunknowns-as-crawlers=true"
        } else {
            ""
        }
    }

    /// Whether the agent `a` (as [`agent`] reads it) is a crawler, as GoAccess's
    /// `is_crawler` tells: its browser's class is `Crawlers`; with
    /// [`Filter::unknowns_as_crawlers`], also an unknown browser or system, or no agent
    /// (GoAccess's `-`).
    pub fn is_crawler(&self, a: &Agent) -> bool {
        a.crawler
            || (self.unknowns_as_crawlers
                && (a.is_none() || a.browser == "Unknown" || a.os == "Unknown"))
    }
}

/// A text that is not a time of `--since`/`--until` (the text itself).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a time: give YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS")]
pub struct TimeError(pub String);

/// A time of `--since`/`--until`: `YYYY-MM-DD`, optionally `THH[:MM[:SS]]` (or a space
/// for the `T`), in the log's own time. `until` makes a partial time inclusive (the whole
/// day or hour).
pub fn parse_time(s: &str, until: bool) -> Result<Stamp, TimeError> {
    let bad = || TimeError(s.to_string());
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> Result<u64, TimeError> {
        let p = b.get(r).ok_or_else(bad)?;
        if !p.iter().all(u8::is_ascii_digit) {
            return Err(bad());
        }
        Ok(p.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let rest = &b[10..];
    let fill = if until { [23, 59, 59] } else { [0, 0, 0] };
    let mut hms = fill;
    if !rest.is_empty() {
        if !matches!(rest[0], b'T' | b' ') {
            return Err(bad());
        }
        for (i, part) in s[11..].split(':').enumerate() {
            if i > 2 || part.len() != 2 || !part.bytes().all(|c| c.is_ascii_digit()) {
                return Err(bad());
            }
            hms[i] = part.parse().map_err(|_| bad())?;
        }
    }
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hms[0] > 23 || hms[1] > 59 || hms[2] > 60
    {
        return Err(bad());
    }
    Ok(((((y * 100 + m) * 100 + d) * 100 + hms[0]) * 100 + hms[1]) * 100 + hms[2])
}

/// What a user agent is, as the report shows it: GoAccess 1.7's classes
/// ([`crate::logs::agents`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// The browser's class (`Chrome`, `Firefox`, `Crawlers`, `Others`, `Unknown`, ...;
    /// GoAccess's root row).
    pub browser: String,
    /// The browser as GoAccess names it (`Chrome/120.0.0.0`, `Googlebot/2.1`,
    /// `curl/8.5.0`; its row under the class).
    pub browser_version: String,
    /// The operating system's class (`Windows`, `Linux`, `Android`, `Macintosh`, `iOS`,
    /// `Crawlers`, `Unknown`, ...).
    pub os: String,
    /// The operating system as GoAccess names it (`Windows 10`, `Android 14`,
    /// `macOS 10.15 Catalina`; a crawler's is its browser).
    pub os_version: String,
    /// A crawler: the browser's class is `Crawlers`.
    pub crawler: bool,
}

impl Agent {
    /// Whether the agent has no browser or system (it is empty once decoded): no row.
    pub fn is_none(&self) -> bool {
        self.browser.is_empty()
    }
}

/// Reads a user agent as GoAccess 1.7 does: `ua` is the agent as the summary keeps it,
/// already decoded as GoAccess decodes it ([`goaccess_decoded`]), classed by GoAccess's
/// tables and rules ([`crate::logs::agents`]). An empty agent has no browser or system
/// (every field empty, [`Agent::is_none`]), as GoAccess gives it no row.
pub fn agent(ua: &[u8]) -> Agent {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match crate::logs::agents::classify(ua) {
        Some(c) => Agent {
            crawler: c.crawler(),
            browser: c.browser_class.to_string(),
            browser_version: text(&c.browser),
            os: c.system_class.to_string(),
            os_version: text(&c.system),
        },
        None => Agent {
            browser: String::new(),
            browser_version: String::new(),
            os: String::new(),
            os_version: String::new(),
            crawler: false,
        },
    }
}

/// How the summary reads lines.
#[derive(Debug, Clone)]
pub struct SummaryConfig {
    /// A line with more bytes than this is malformed.
    pub max_line: usize,
    /// The log's format.
    pub format: Format,
    /// What to leave out.
    pub filter: Filter,
    /// Count the clients of 4xx responses as visitors too (GoAccess's
    /// `--4xx-to-unique-count`); by default, as GoAccess, a request answered 400-499 adds
    /// its hits and bytes but no visitor, in every panel.
    pub visitors_4xx: bool,
}

impl Default for SummaryConfig {
    fn default() -> Self {
        SummaryConfig {
            max_line: DEFAULT_MAX_LINE,
            format: Format::default(),
            filter: Filter::default(),
            visitors_4xx: false,
        }
    }
}

impl SummaryConfig {
    /// Whether a request answered `status` makes its client a visitor (of the day and of
    /// each row it adds to): not a 4xx response, unless [`SummaryConfig::visitors_4xx`].
    #[inline]
    pub fn counts_visitor(&self, status: u16) -> bool {
        self.visitors_4xx || !(400..500).contains(&status)
    }
}

/// The summary's tables: every key, so that partial results merge exactly.
#[derive(Debug)]
pub struct Summary {
    /// The [`SUMMARY_NUMBERS`] numbers (see the `partial::N_*` indices).
    pub numbers: Vec<u64>,
    /// Requests by day (YYYYMMDD).
    pub days: HashMap<u32, u64>,
    /// The [`SUMMARY_TABLES`] tables, in the order of [`crate::partial::SummaryTables`],
    /// but for the requests and their bytes, which are in `requests` (one lookup a line).
    pub tables: Vec<Table>,
    /// Requests and bytes by client, referrer, user agent, virtual host and remote user
    /// (the tables of [`PAIRED`], each hits and bytes in one entry: one lookup a line),
    /// then the key's [`pair_parts`], made once when the key is first seen.
    pub pairs: Vec<Interned<[u64; 4]>>,
    /// Requests by visitor and hour ([`visitor_key`](crate::partial::visitor_key)): the [`T_VISITORS`] table.
    pub visitors: Visitors,
    /// The (row, visitor) pairs ([`row_visitor_key`]): the [`T_ROW_VISITORS`] table.
    pub row_visitors: RowVisitors,
    /// Requests, bytes, time in all and longest time by request: the [`T_REQUESTS`],
    /// [`T_BYTES`], [`T_TIME_SUM`] and [`T_TIME_MAX`] tables as one (one lookup a line),
    /// then the request's [`row_part`], made once when the request is first seen.
    pub requests: Interned<[u64; 5]>,
    /// A worker's scratch: the request key being built.
    key: Vec<u8>,
    /// A worker's last row visitors, by their low bits: a row's visitor seen again soon
    /// (a page's requests, a visitor's referrer) is not appended again.
    recent: Vec<u128>,
    /// A worker's memory of which agents are crawlers (`--ignore-crawlers`).
    crawlers: HashMap<Vec<u8>, bool>,
}

/// The visitor keys of a summary ([`visitor_key`](crate::partial::visitor_key)) and
/// their requests. Most keys are new (a visitor is a client and an agent), so a hash
/// table took a cache miss and, often, a share of a resize for each line: the keys are
/// appended to a list instead (one sequential write a line) and, when it has grown past
/// what is counted so far (and a million), sorted and folded into the counted keys, a
/// sorted list of (key, requests).
#[derive(Debug, Default)]
pub struct Visitors {
    fresh: Vec<u128>,
    counted: Vec<(u128, u64)>,
    /// The last fold's old counted list, cleared, its memory kept for the next fold's
    /// result: a fold writes into pages already mapped instead of new ones (which cost a
    /// page fault each, and were a sixth of the summary's time). Dropped at the seal.
    spare: Vec<(u128, u64)>,
}

/// Merges two sorted lists of (key, count), adding the counts of equal keys.
fn merge_counted(a: Vec<(u128, u64)>, b: Vec<(u128, u64)>) -> Vec<(u128, u64)> {
    if a.is_empty() {
        return b;
    }
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => match x.0.cmp(&y.0) {
                std::cmp::Ordering::Less => out.extend(a.next()),
                std::cmp::Ordering::Greater => out.extend(b.next()),
                std::cmp::Ordering::Equal => {
                    let (k, n) = a.next().unwrap_or_default();
                    let m = b.next().map_or(0, |y| y.1);
                    out.push((k, n.saturating_add(m)));
                }
            },
            (Some(_), None) => out.extend(a.by_ref()),
            (None, Some(_)) => out.extend(b.by_ref()),
            (None, None) => return out,
        }
    }
}

/// Merges sorted `counted` (key, requests) and sorted keys `fresh` (a key may repeat) into
/// `out`, in key order, adding the requests of equal keys.
fn fold_into(counted: &[(u128, u64)], fresh: &[u128], out: &mut Vec<(u128, u64)>) {
    let mut c = counted.iter().peekable();
    let mut i = 0;
    while i < fresh.len() {
        let k = fresh[i];
        let mut n = 1u64;
        i += 1;
        while i < fresh.len() && fresh[i] == k {
            n += 1;
            i += 1;
        }
        while let Some(&&(ck, cn)) = c.peek() {
            if ck < k {
                out.push((ck, cn));
                c.next();
            } else {
                if ck == k {
                    n = n.saturating_add(cn);
                    c.next();
                }
                break;
            }
        }
        out.push((k, n));
    }
    out.extend(c);
}

impl Visitors {
    /// One request of visitor `key`.
    #[inline]
    pub fn push(&mut self, key: u128) {
        self.fresh.push(key);
        if self.fresh.len() >= (1 << 20).max(2 * self.counted.len()) {
            self.fold();
        }
    }

    /// Keys and their requests added at once (in any order; a key may repeat).
    pub fn add(&mut self, mut keys: Vec<(u128, u64)>) {
        keys.sort_unstable();
        let mut runs: Vec<(u128, u64)> = Vec::with_capacity(keys.len());
        for (k, n) in keys {
            match runs.last_mut() {
                Some(l) if l.0 == k => l.1 = l.1.saturating_add(n),
                _ => runs.push((k, n)),
            }
        }
        self.counted = merge_counted(std::mem::take(&mut self.counted), runs);
    }

    fn fold(&mut self) {
        // Nothing new: the counted list stays as it is (folding would copy it whole).
        if self.fresh.is_empty() {
            return;
        }
        self.fresh.sort_unstable();
        let mut out = std::mem::take(&mut self.spare);
        out.clear();
        out.reserve(self.counted.len() + self.fresh.len());
        fold_into(&self.counted, &self.fresh, &mut out);
        self.spare = std::mem::replace(&mut self.counted, out);
        // Both lists keep their memory for the next fold.
        self.fresh.clear();
    }

    /// Another summary's visitors added (taken whole when there are none here yet, as
    /// when the first worker's state merges into the run's).
    pub fn merge(&mut self, o: Visitors) {
        if self.fresh.is_empty() && self.counted.is_empty() {
            *self = o;
            return;
        }
        self.fresh.extend(o.fresh);
        self.counted = merge_counted(std::mem::take(&mut self.counted), o.counted);
        self.fold();
    }

    /// Every visitor key and its requests, in key order (borrowed when all are folded,
    /// as after [`Visitors::seal`]: no copy of a list of millions).
    pub fn counts(&self) -> Cow<'_, [(u128, u64)]> {
        if self.fresh.is_empty() {
            Cow::Borrowed(&self.counted)
        } else {
            let mut fresh = self.fresh.clone();
            fresh.sort_unstable();
            let mut out = Vec::with_capacity(self.counted.len() + fresh.len());
            fold_into(&self.counted, &fresh, &mut out);
            Cow::Owned(out)
        }
    }

    /// Folds the keys appended so far into the counted ones (on a worker, before the
    /// workers' states merge: each sorts its own in parallel).
    pub fn seal(&mut self) {
        if !self.fresh.is_empty() {
            self.fold();
        }
        self.fresh = Vec::new();
        self.spare = Vec::new();
    }
}

/// The (row, visitor) pairs of a summary ([`row_visitor_key`]): a set, each pair once
/// whatever its requests (the report counts a row's distinct visitors). Kept as
/// [`Visitors`] keeps its keys (appended, then sorted and folded into a sorted list), with
/// no count: half the memory of a counted list, on the summary's largest list.
#[derive(Debug, Default)]
pub struct RowVisitors {
    fresh: Vec<u128>,
    keys: Vec<u128>,
    /// As [`Visitors`]' spare: the last fold's old list, for the next fold's result.
    spare: Vec<u128>,
}

impl RowVisitors {
    /// One request of the pair `key`.
    #[inline]
    pub fn push(&mut self, key: u128) {
        self.fresh.push(key);
        if self.fresh.len() >= (1 << 20).max(2 * self.keys.len()) {
            self.fold();
        }
    }

    /// Pairs added at once (in any order, a pair may repeat; the counts are not kept).
    pub fn add(&mut self, keys: Vec<(u128, u64)>) {
        self.fresh.extend(keys.into_iter().map(|(k, _)| k));
        self.fold();
    }

    fn fold(&mut self) {
        // Nothing new: the list stays as it is (a union would copy it whole).
        if self.fresh.is_empty() {
            return;
        }
        self.fresh.sort_unstable();
        let fresh = std::mem::take(&mut self.fresh);
        self.union(&fresh);
        self.fresh = fresh;
        self.fresh.clear();
    }

    /// Adds sorted `more` (a key may repeat) to the sorted keys.
    fn union(&mut self, more: &[u128]) {
        let mut out = std::mem::take(&mut self.spare);
        out.clear();
        out.reserve(self.keys.len() + more.len());
        let (a, b) = (&self.keys[..], more);
        let (mut i, mut j) = (0, 0);
        // The last key written (none yet), so that a key is written once: `a` holds each
        // once, `b` may repeat, and the two may share keys.
        let mut last = None;
        while i < a.len() && j < b.len() {
            let next = if a[i] <= b[j] {
                i += 1;
                a[i - 1]
            } else {
                j += 1;
                b[j - 1]
            };
            if last != Some(next) {
                out.push(next);
                last = Some(next);
            }
        }
        for &next in a[i..].iter().chain(&b[j..]) {
            if last != Some(next) {
                out.push(next);
                last = Some(next);
            }
        }
        self.spare = std::mem::replace(&mut self.keys, out);
    }

    /// Another summary's pairs added (taken whole when there are none here yet).
    pub fn merge(&mut self, mut o: RowVisitors) {
        o.seal();
        if self.fresh.is_empty() && self.keys.is_empty() {
            *self = o;
            return;
        }
        self.fresh.extend(o.fresh);
        self.fold();
        self.union(&o.keys);
        self.spare = Vec::new();
    }

    /// Every pair, once, in key order (borrowed once all are folded, as after
    /// [`RowVisitors::seal`]).
    pub fn keys(&self) -> Cow<'_, [u128]> {
        if self.fresh.is_empty() {
            Cow::Borrowed(&self.keys)
        } else {
            let mut all: Vec<u128> = self.keys.iter().chain(&self.fresh).copied().collect();
            all.sort_unstable();
            all.dedup();
            Cow::Owned(all)
        }
    }

    /// Folds the pairs appended so far (on a worker, before the workers' states merge).
    pub fn seal(&mut self) {
        if !self.fresh.is_empty() {
            self.fold();
        }
        self.fresh = Vec::new();
        self.spare = Vec::new();
    }
}

/// Where table `i` lives in a request's values ([`Summary::requests`]).
fn request_slot(i: usize) -> usize {
    match i {
        T_REQUESTS => 0,
        T_BYTES => 1,
        T_TIME_SUM => 2,
        _ => 3,
    }
}

// The lists of the table are the lists of the partial format.
const _: () = assert!(LISTS.len() == SUMMARY_TABLES);

/// The bits of a [`visitor_key`](crate::partial::visitor_key) that are the visitor on
/// its day (client and agent): the key without its day and hour.
const VISITOR_OF_DAY: u128 = (1u128 << 88) - 1;

/// How many row visitors a worker remembers to skip repeats ([`Summary`]'s `recent`).
const RECENT: usize = 4096;

/// The 61 bits of a row's key in a [`row_visitor_key`].
#[inline]
pub fn row_part(row: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(row) >> 3
}

/// The 64 bits of a visitor in a [`row_visitor_key`]: XXH3-64 of its
/// [`visitor_key`](crate::partial::visitor_key) without the hour (its day, client and agent), the number's 16 bytes little-endian.
#[inline]
pub fn visitor_hash(visitor: u128) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&(visitor & !(0xffu128 << 88)).to_le_bytes())
}

/// A visitor of a row, as a number whose 16 big-endian bytes are the key in the
/// [`T_ROW_VISITORS`] list: the panel (`P_*`, 3 bits), the row's [`row_part`] (61 bits),
/// and the [`visitor_hash`]. A row's unique visitors are its keys (hash collisions aside:
/// 64 bits, the same whichever way the log is cut).
#[inline]
pub fn row_visitor_key(panel: usize, row: &[u8], visitor: u64) -> u128 {
    row_visitor_of(panel, row_part(row), visitor)
}

/// A [`row_visitor_key`] of a row's [`row_part`] made before.
#[inline]
fn row_visitor_of(panel: usize, row: u64, visitor: u64) -> u128 {
    ((panel as u128) << 125) | (u128::from(row) << 64) | u128::from(visitor)
}

/// The tables kept as (hits, bytes) in one entry ([`Summary::pairs`]): the hits table and
/// the bytes table of each.
pub(crate) const PAIRED: [(usize, usize); 5] = [
    (T_CLIENTS, T_CLIENT_BYTES),
    (T_REFERRERS, T_REFERRER_BYTES),
    (T_AGENTS, T_AGENT_BYTES),
    (T_VHOSTS, T_VHOST_BYTES),
    (T_USERS, T_USER_BYTES),
];

/// Which pair and which of its values table `i` is, if it is one of [`PAIRED`].
fn paired(i: usize) -> Option<(usize, usize)> {
    PAIRED.iter().enumerate().find_map(|(p, &(h, b))| {
        if i == h {
            Some((p, 0))
        } else if i == b {
            Some((p, 1))
        } else {
            None
        }
    })
}

/// The hashes a line needs of a key of pair `p` ([`PAIRED`]), made once a key and kept
/// in its entry: a client's and an agent's [`visitor_part`] (the agent decoded, as the
/// visitor key has it); a referrer's [`row_part`] and its site's; a virtual host's and a
/// user's [`row_part`].
fn pair_parts(p: usize, key: &[u8]) -> [u64; 2] {
    match p {
        0 => [visitor_part(key), 0],
        1 => [row_part(key), row_part(site(key))],
        // Agents are keyed decoded, as GoAccess keys them (`Summary::request`).
        2 => [visitor_part(key), 0],
        _ => [row_part(key), 0],
    }
}

/// Adds a request of `bytes` to `key` (whose [`Interned::id`] is `id`) in pair `p`'s table:
/// the key's [`pair_parts`].
#[inline]
fn add_pair(t: &mut Interned<[u64; 4]>, p: usize, key: &[u8], id: u128, bytes: u64) -> [u64; 2] {
    let v = t.entry_of(id, key, || {
        let parts = pair_parts(p, key);
        [0, 0, parts[0], parts[1]]
    });
    v[0] += 1;
    v[1] = v[1].saturating_add(bytes);
    [v[2], v[3]]
}

impl Default for Summary {
    fn default() -> Self {
        Summary {
            numbers: vec![0; SUMMARY_NUMBERS],
            days: HashMap::new(),
            tables: (0..SUMMARY_TABLES).map(|_| Table::default()).collect(),
            requests: Interned::default(),
            pairs: (0..PAIRED.len()).map(|_| Interned::default()).collect(),
            visitors: Visitors::default(),
            row_visitors: RowVisitors::default(),
            key: Vec::new(),
            recent: Vec::new(),
            crawlers: HashMap::new(),
        }
    }
}

impl Summary {
    /// Requests counted.
    pub fn requests(&self) -> u64 {
        self.numbers[N_REQUESTS]
    }

    /// Malformed lines.
    pub fn malformed(&self) -> u64 {
        self.numbers[N_MALFORMED]
    }

    /// Writes the tables in full, in canonical order, as a partial result's state
    /// ([`crate::partial::SummaryTables`]), straight from the hash tables.
    pub fn encode_state(&self, out: &mut Vec<u8>) {
        use crate::partial::hashed;
        let days = hashed(self.days.iter().map(|(d, &n)| (d.to_be_bytes(), n)));
        let days: Vec<(u64, &[u8], u64)> = days.iter().map(|(h, d, n)| (*h, &d[..], *n)).collect();
        let listed = |v: &Visitors| hashed(v.counts().iter().map(|&(k, n)| (k.to_be_bytes(), n)));
        let visitors = listed(&self.visitors);
        // A row's visitors are a set: each once, whatever its requests (repeats are not
        // all appended), merged by maximum.
        let row_visitors = hashed(
            self.row_visitors
                .keys()
                .iter()
                .map(|&k| (k.to_be_bytes(), 1)),
        );
        fn borrowed(v: &[(u64, [u8; 16], u64)]) -> Vec<(u64, &[u8], u64)> {
            v.iter().map(|(h, k, n)| (*h, &k[..], *n)).collect()
        }
        let t: Vec<Vec<(u64, &[u8], u64)>> = (0..SUMMARY_TABLES)
            .map(|i| match i {
                T_VISITORS => borrowed(&visitors),
                T_ROW_VISITORS => borrowed(&row_visitors),
                _ => hashed(self.entries(i)),
            })
            .collect();
        let tables: Vec<&[(u64, &[u8], u64)]> = t.iter().map(|t| &t[..]).collect();
        crate::partial::encode_summary(out, &self.numbers, &days, &tables);
    }

    /// The report whose tables these are (empty tables: an empty report).
    pub fn from_tables(t: &crate::partial::SummaryTables) -> Summary {
        let mut s = Summary::default();
        if t.numbers.len() == SUMMARY_NUMBERS {
            s.numbers.copy_from_slice(&t.numbers);
        }
        for (d, n) in &t.days {
            if let Ok(b) = <[u8; 4]>::try_from(&d[..]) {
                s.days.insert(u32::from_be_bytes(b), *n);
            }
        }
        let sixteen = |from: &[(Vec<u8>, u64)]| -> Vec<(u128, u64)> {
            from.iter()
                .filter_map(|(k, n)| Some((u128::from_be_bytes(k[..].try_into().ok()?), *n)))
                .collect()
        };
        for (i, (into, from)) in s.tables.iter_mut().zip(&t.tables).enumerate() {
            match i {
                T_VISITORS => s.visitors.add(sixteen(from)),
                T_ROW_VISITORS => s.row_visitors.add(sixteen(from)),
                _ => {}
            }
            for (k, n) in from {
                if let Some((p, j)) = paired(i) {
                    let v = s.pairs[p].entry(k, || {
                        let parts = pair_parts(p, k);
                        [0, 0, parts[0], parts[1]]
                    });
                    v[j] = v[j].saturating_add(*n);
                    continue;
                }
                match i {
                    T_VISITORS | T_ROW_VISITORS => {}
                    T_REQUESTS | T_BYTES | T_TIME_SUM | T_TIME_MAX => {
                        let v = s.requests.entry(k, || [0, 0, 0, 0, row_part(k)]);
                        let j = request_slot(i);
                        v[j] = crate::partial::summary_list_merge(i)(v[j], *n);
                    }
                    _ => add(into, k, *n),
                }
            }
        }
        s
    }

    /// Every key and value of table `i` (see [`SUMMARY_TABLES`]), in no order (but for the
    /// visitors, which are in [`Summary::visitors`] and [`Summary::row_visitors`]).
    pub fn entries(&self, i: usize) -> Box<dyn Iterator<Item = (&[u8], u64)> + '_> {
        if let Some((p, j)) = paired(i) {
            return Box::new(self.pairs[p].iter().map(move |(k, v)| (k, v[j])));
        }
        match i {
            T_REQUESTS | T_BYTES => {
                let j = request_slot(i);
                Box::new(self.requests.iter().map(move |(k, v)| (k, v[j])))
            }
            // Times only for the requests that have one.
            T_TIME_SUM | T_TIME_MAX => {
                let j = request_slot(i);
                Box::new(
                    self.requests
                        .iter()
                        .filter(|(_, v)| v[2] > 0 || v[3] > 0)
                        .map(move |(k, v)| (k, v[j])),
                )
            }
            _ => self.tables[i].entries(),
        }
    }

    /// Whether the filters leave this request out.
    fn filtered(&mut self, f: &Filter, r: &Record<'_>) -> bool {
        if !f.ignore_status.is_empty() && f.ignore_status.contains(&r.status) {
            return true;
        }
        if f.since.is_some() || f.until.is_some() {
            match r.stamp {
                Some(s) if f.since.is_none_or(|a| s >= a) && f.until.is_none_or(|b| s <= b) => {}
                _ => return true,
            }
        }
        if !f.exclude.is_empty() {
            if let Some(ip) = std::str::from_utf8(r.client)
                .ok()
                .and_then(|c| c.parse::<IpAddr>().ok())
            {
                if f.exclude.iter().any(|n| n.contains(&ip)) {
                    return true;
                }
            }
        }
        if f.ignore_crawlers || f.crawlers_only {
            let c = match self.crawlers.get(r.agent) {
                Some(&c) => c,
                None => {
                    let c = f.is_crawler(&agent(&goaccess_decoded(r.agent)));
                    self.crawlers.insert(r.agent.to_vec(), c);
                    c
                }
            };
            return if f.ignore_crawlers { c } else { !c };
        }
        false
    }

    /// Adds one request.
    #[inline]
    fn request(&mut self, c: &SummaryConfig, r: &Record<'_>) {
        if !c.filter.is_empty() && self.filtered(&c.filter, r) {
            self.numbers[N_FILTERED] += 1;
            return;
        }
        // The paired tables' slots asked for first: their misses overlap one another and
        // the work below, instead of coming one after another. Each field's id, 0 for a
        // field not logged (empty or `-`; an agent `-` is one, which GoAccess classes
        // `Unknown`). The agent is decoded, as GoAccess decodes it (empty when nothing is
        // left: not logged).
        let agent = goaccess_decoded(r.agent);
        let fields = [r.client, r.referrer, &agent[..], r.vhost, r.user];
        let mut ids = [0u128; PAIRED.len()];
        for (p, field) in fields.iter().enumerate() {
            if p == 0 || (!field.is_empty() && (*field != b"-" || p == 2)) {
                ids[p] = Interned::<[u64; 4]>::id(field);
                self.pairs[p].prefetch(ids[p]);
            }
        }
        // The request's key (both spaces always, so that a URI with spaces, JSON or W3C,
        // splits back whole: `logformat::split_key`) and its slot, asked for likewise. A
        // request answered 404 is in the 404s only (as in GoAccess), the others in the
        // requests (the static files among them).
        self.key.clear();
        self.key.extend_from_slice(r.method);
        self.key.push(b' ');
        decode_into(&mut self.key, r.uri);
        self.key.push(b' ');
        self.key.extend_from_slice(r.protocol);
        let not_found = r.status == 404;
        let request_id = Interned::<[u64; 5]>::id(&self.key);
        if !not_found {
            self.requests.prefetch(request_id);
        }
        let n = &mut self.numbers;
        n[N_REQUESTS] += 1;
        n[N_BYTES] = n[N_BYTES].saturating_add(r.bytes);
        n[N_STATUS + usize::from(r.status)] += 1;
        let sb = &mut n[N_STATUS_BYTES + usize::from(r.status)];
        *sb = sb.saturating_add(r.bytes);
        n[N_SIZE_HIST + bucket(r.bytes, 64)] += 1;
        if let Some(us) = r.micros {
            n[N_TIMED] += 1;
            n[N_TIME_SUM] = n[N_TIME_SUM].saturating_add(us);
            n[N_TIME_MAX] = n[N_TIME_MAX].max(us);
            n[N_TIME_HIST + bucket(us, 32)] += 1;
        }
        let visitor = if let Some(s) = r.stamp {
            let (day, hour) = (stamp_day(s), stamp_hour(s));
            n[N_HOURS + usize::from(hour)] += 1;
            let hb = &mut n[N_HOUR_BYTES + usize::from(hour)];
            *hb = hb.saturating_add(r.bytes);
            if n[N_FIRST] == 0 || s < n[N_FIRST] {
                n[N_FIRST] = s;
            }
            n[N_LAST] = n[N_LAST].max(s);
            *self.days.entry(day).or_insert(0) += 1;
            c.counts_visitor(r.status).then_some((day, hour))
        } else {
            None
        };
        let t = &mut self.tables;
        let pairs = &mut self.pairs;
        let client = add_pair(&mut pairs[0], 0, r.client, ids[0], r.bytes)[0];
        let us = r.micros.unwrap_or(0);
        let request = if not_found {
            add(&mut t[T_NOT_FOUND], &self.key, 1);
            add(&mut t[T_NOT_FOUND_BYTES], &self.key, r.bytes);
            row_part(&self.key)
        } else {
            let key = &self.key;
            let v = self
                .requests
                .entry_of(request_id, key, || [0, 0, 0, 0, row_part(key)]);
            v[0] += 1;
            v[1] = v[1].saturating_add(r.bytes);
            v[2] = v[2].saturating_add(us);
            v[3] = v[3].max(us);
            v[4]
        };
        // Each field's parts, `None` for a field not logged.
        let mut parts = [None; 4];
        for p in 1..PAIRED.len() {
            if ids[p] != 0 {
                parts[p - 1] = Some(add_pair(&mut pairs[p], p, fields[p], ids[p], r.bytes));
            }
        }
        if let Some((day, hour)) = visitor {
            let agent = parts[1].map_or_else(|| visitor_part(b"-"), |a| a[0]);
            let v = visitor_key_of(day, hour, client, agent);
            self.visitors.push(v);
            let v = visitor_hash(v);
            if self.recent.is_empty() {
                self.recent = vec![u128::MAX; RECENT];
            }
            let (rows, recent) = (&mut self.row_visitors, &mut self.recent[..]);
            let mut push = |k: u128| {
                let slot = &mut recent[(k as usize ^ (k >> 64) as usize) % RECENT];
                if *slot != k {
                    *slot = k;
                    rows.push(k);
                }
            };
            let panel = if not_found { P_NOT_FOUND } else { P_REQUESTS };
            push(row_visitor_of(panel, request, v));
            push(row_visitor_of(
                P_STATUS,
                row_part(&status_text(r.status)),
                v,
            ));
            if let Some([referrer, site]) = parts[0] {
                push(row_visitor_of(P_REFERRERS, referrer, v));
                push(row_visitor_of(P_SITES, site, v));
            }
            for (p, field) in [(P_VHOSTS, parts[2]), (P_USERS, parts[3])] {
                if let Some([row, _]) = field {
                    push(row_visitor_of(p, row, v));
                }
            }
        }
    }

    /// The report's panels of `n` rows, static files by `statics`.
    pub fn ranked(&self, n: usize, statics: Statics<'_>) -> SummaryTop {
        let mut fold = SummaryFold::new(n, statics);
        // The visitors by day and hour need no other table: made on a thread of their
        // own beside the others (here after them when no thread can start).
        let (mut fold, by_day) = std::thread::scope(|scope| {
            let by_day = std::thread::Builder::new()
                .spawn_scoped(scope, || VisitorDays::of(&self.visitors.counts()));
            for i in 0..SUMMARY_TABLES {
                if i == T_ROW_VISITORS {
                    fold.row_keys(&self.row_visitors.keys());
                }
                match paired(i) {
                    // A paired table's hits and bytes are in one entry: both taken in
                    // one pass over its keys (the groups' bytes with them), and the
                    // bytes of the kept rows looked up, not found by a second pass.
                    Some((p, 0)) => {
                        for (k, v) in self.pairs[p].iter() {
                            fold.pair_entry(i, k, v[0], v[1]);
                        }
                    }
                    Some((p, _)) => fold.kept_pair_bytes(p, |k| self.pairs[p].get(k).map(|v| v[1])),
                    None => {
                        for (k, c) in self.entries(i) {
                            fold.entry(i, k, c);
                        }
                    }
                }
                fold.end_table(i);
            }
            let by_day = match by_day.map(|h| h.join()) {
                Ok(Ok(d)) => Some(d),
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                Err(_) => None,
            };
            (fold, by_day)
        });
        let by_day = by_day.unwrap_or_else(|| VisitorDays::of(&self.visitors.counts()));
        fold.add_visitor_days(by_day);
        let mut days: Vec<(u32, u64)> = self.days.iter().map(|(&d, &c)| (d, c)).collect();
        days.sort_unstable();
        fold.finish(&self.numbers, days)
    }
}

impl Summary {
    /// Adds one line (without its newline) read in `format` (`None`: a W3C log under a
    /// header that names no request: its lines but comments are malformed).
    #[inline]
    fn line_as(&mut self, c: &SummaryConfig, format: Option<&Format>, line: &[u8]) {
        if line.len() > c.max_line {
            self.numbers[N_MALFORMED] += 1;
            return;
        }
        if line.is_empty() || line == b"\r" {
            return;
        }
        // The record borrows the line (or the parser's own buffer): added inside the call.
        let outcome = match format {
            Some(f) => f.parse(line, |r| self.request(c, r)),
            None if line.starts_with(b"#") => Outcome::Comment,
            None => Outcome::Malformed,
        };
        if outcome == Outcome::Malformed {
            self.numbers[N_MALFORMED] += 1;
        }
    }
}

impl LineReport for Summary {
    type Config = SummaryConfig;

    #[inline]
    fn line(&mut self, c: &SummaryConfig, line: &[u8]) {
        self.line_as(c, Some(&c.format), line);
    }

    fn block(&mut self, c: &SummaryConfig, block: &[u8]) {
        self.block_after(c, None, block);
    }

    fn header(c: &SummaryConfig) -> Option<&'static [u8]> {
        matches!(c.format, Format::W3c(_)).then_some(W3C_FIELDS)
    }

    /// A W3C log's lines are read by the `#Fields:` line in force: `header` for the first
    /// ones (`None`: the configuration's), then each one in the block for the lines after
    /// it. A header that names no `cs-uri-stem` or `sc-status` makes the lines under it
    /// malformed. Other formats have no header lines.
    fn block_after(&mut self, c: &SummaryConfig, header: Option<&[u8]>, block: &[u8]) {
        if !matches!(c.format, Format::W3c(_)) {
            crate::logs::each_line(block, |line| self.line(c, line));
            return;
        }
        let fields = |h: &[u8]| W3c::from_fields_line(h).map(|w| Cow::Owned(Format::W3c(w)));
        let mut current = match header {
            None => Some(Cow::Borrowed(&c.format)),
            Some(h) => fields(h),
        };
        crate::logs::each_line(block, |line| {
            // A header line over the bound is a malformed line, as any line over it.
            if line.len() <= c.max_line && line.starts_with(W3C_FIELDS) {
                current = fields(line);
            } else {
                self.line_as(c, current.as_deref(), line);
            }
        });
    }

    fn merge(&mut self, mut o: Self) {
        // The visitor lists (the longest merge) on a thread of their own, beside the
        // tables; on this one after them when no thread can start (no memory left for a
        // stack).
        let mut o_lists = (
            std::mem::take(&mut o.visitors),
            std::mem::take(&mut o.row_visitors),
        );
        let (visitors, row_visitors) = (&mut self.visitors, &mut self.row_visitors);
        let mut lists = || {
            visitors.merge(std::mem::take(&mut o_lists.0));
            row_visitors.merge(std::mem::take(&mut o_lists.1));
        };
        let mine = Tables {
            numbers: &mut self.numbers,
            days: &mut self.days,
            tables: &mut self.tables,
            requests: &mut self.requests,
            pairs: &mut self.pairs,
        };
        let merged = std::thread::scope(|scope| {
            let other = std::thread::Builder::new().spawn_scoped(scope, &mut lists);
            mine.merge(o);
            match other.map(|h| h.join()) {
                Ok(Ok(())) => true,
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                Err(_) => false,
            }
        });
        if !merged {
            lists();
        }
    }

    fn seal(&mut self) {
        self.visitors.seal();
        self.row_visitors.seal();
    }

    fn max_line(c: &SummaryConfig) -> usize {
        c.max_line
    }

    fn skipped(&mut self, n: u64) {
        self.numbers[N_MALFORMED] += n;
    }
}

/// A summary's tables but its visitor lists, borrowed to merge another's into them.
struct Tables<'a> {
    numbers: &'a mut Vec<u64>,
    days: &'a mut HashMap<u32, u64>,
    tables: &'a mut Vec<Table>,
    requests: &'a mut Interned<[u64; 5]>,
    pairs: &'a mut Vec<Interned<[u64; 4]>>,
}

impl Tables<'_> {
    /// Adds another summary's numbers and tables (all but its visitor lists).
    fn merge(self, o: Summary) {
        add_numbers(self.numbers, &o.numbers);
        for (k, v) in o.days {
            *self.days.entry(k).or_insert(0) += v;
        }
        // Each list by its rule ([`LISTS`]).
        for (i, (a, b)) in self.tables.iter_mut().zip(o.tables).enumerate() {
            let rule = crate::partial::summary_list_merge(i);
            merge_map(a, b, |x, y| *x = rule(*x, y));
        }
        // A key's parts are the same on both sides (and not yet there in a new entry).
        self.requests.merge(o.requests, |e, v| {
            for j in 0..3 {
                e[j] = e[j].saturating_add(v[j]);
            }
            e[3] = e[3].max(v[3]);
            e[4] = v[4];
        });
        for (a, b) in self.pairs.iter_mut().zip(o.pairs) {
            a.merge(b, |e, v| {
                e[0] = e[0].saturating_add(v[0]);
                e[1] = e[1].saturating_add(v[1]);
                (e[2], e[3]) = (v[2], v[3]);
            });
        }
    }
}

/// The visitors by day (each once, in order) and the visitors by hour of a day of a
/// visitor list ([`T_VISITORS`]): the part of the report that needs no other table.
#[derive(Debug, Default)]
pub struct VisitorDays {
    days: Vec<(u32, u128)>,
    by_hour: HashMap<(u32, u8), u64>,
}

impl VisitorDays {
    /// Of visitor keys in key order, each once.
    pub fn of(keys: &[(u128, u64)]) -> VisitorDays {
        let mut d = VisitorDays::default();
        // A run of keys of one hour of one day (the keys' top 40 bits).
        for run in keys.chunk_by(|a, b| a.0 >> 88 == b.0 >> 88) {
            let v = run[0].0;
            let hour = ((v >> 96) as u32, (v >> 88) as u8);
            *d.by_hour.entry(hour).or_insert(0) += run.len() as u64;
            d.days.extend(
                run.iter()
                    .map(|&(v, _)| ((v >> 96) as u32, v & VISITOR_OF_DAY)),
            );
        }
        // Each hour's run of keys gives its visitors in order: a sort that merges runs
        // (not one that ignores them) takes a day's hours as the sorted runs they are.
        d.days.sort();
        d.days.dedup();
        d
    }
}

/// A group's rows that have hits (not those with bytes only), ranked by their hits.
struct GroupHits<'a>(&'a HashMap<crate::logs::Key, [u64; 2]>);

impl Ranked for GroupHits<'_> {
    fn entries(&self) -> Box<dyn Iterator<Item = (&[u8], u64)> + '_> {
        Box::new(
            self.0
                .iter()
                .filter(|(_, v)| v[0] > 0)
                .map(|(k, v)| (k.bytes(), v[0])),
        )
    }

    fn distinct(&self) -> usize {
        self.0.values().filter(|v| v[0] > 0).count()
    }
}

/// Folds every key of every table, one table after another, into the report's panels.
pub struct SummaryFold<'e> {
    n: usize,
    static_rule: Statics<'e>,
    tops: Vec<TopN>,
    statics: TopN,
    static_hits: u64,
    /// Hits and bytes by group: sites, browsers, browser versions, systems, system
    /// versions, crawlers (the `G_*` indices).
    groups: Vec<HashMap<crate::logs::Key, [u64; 2]>>,
    crawler_hits: u64,
    /// What each agent is, remembered from the agents' hits for their bytes (up to
    /// [`AGENT_CACHE`] agents; past that they are read again).
    agents: HashMap<Vec<u8>, Agent>,
    /// The top rows' keys of each paired table ([`PAIRED`]), and their bytes.
    wanted_pairs: Vec<hashbrown::HashSet<Vec<u8>>>,
    pair_bytes: Vec<std::collections::BTreeMap<Vec<u8>, u64>>,
    /// The visitors by day (a visitor key without its hour), each as often as it has
    /// hours: sorted and made unique by [`SummaryFold::finish`].
    visitor_days: Vec<(u32, u128)>,
    /// The agents' parts of visitor keys and what the agents are (for visitors by
    /// browser and system; up to [`AGENT_CACHE`]).
    agent_parts: HashMap<u64, Agent>,
    /// The kept clients' parts of visitor keys.
    client_parts: HashMap<u64, Vec<u8>>,
    visitors_by_hour: HashMap<(u32, u8), u64>,
    /// The kept agents' parts of visitor keys.
    agent_keys: HashMap<u64, Vec<u8>>,
    /// The rows whose visitors are counted, by panel (`P_*`) and [`row_part`].
    row_wanted: Vec<HashMap<u64, Vec<u8>>>,
    /// Their visitors.
    row_visitors: Vec<std::collections::BTreeMap<Vec<u8>, u64>>,
    wanted: hashbrown::HashSet<Vec<u8>>,
    bytes_of: std::collections::BTreeMap<Vec<u8>, u64>,
    not_found_bytes_of: std::collections::BTreeMap<Vec<u8>, u64>,
    times_of: std::collections::BTreeMap<Vec<u8>, (u64, u64)>,
}

impl<'e> SummaryFold<'e> {
    /// A fold keeping `n` rows a panel, static files by `static_rule`.
    pub fn new(n: usize, static_rule: Statics<'e>) -> SummaryFold<'e> {
        SummaryFold {
            n,
            static_rule,
            tops: (0..SUMMARY_TABLES).map(|_| TopN::new(n)).collect(),
            statics: TopN::new(n),
            static_hits: 0,
            groups: (0..GROUPS.len()).map(|_| HashMap::new()).collect(),
            crawler_hits: 0,
            agents: HashMap::new(),
            wanted_pairs: (0..PAIRED.len())
                .map(|_| hashbrown::HashSet::new())
                .collect(),
            pair_bytes: (0..PAIRED.len()).map(|_| Default::default()).collect(),
            visitor_days: Vec::new(),
            agent_parts: HashMap::new(),
            client_parts: HashMap::new(),
            visitors_by_hour: HashMap::new(),
            agent_keys: HashMap::new(),
            row_wanted: (0..ROW_PANELS)
                .map(|p| match p {
                    // Every status code's row: the codes are few and known.
                    P_STATUS => (0..1000)
                        .map(|c| {
                            let t = status_text(c);
                            (row_part(&t), t.to_vec())
                        })
                        .collect(),
                    _ => HashMap::new(),
                })
                .collect(),
            row_visitors: (0..ROW_PANELS).map(|_| Default::default()).collect(),
            wanted: hashbrown::HashSet::new(),
            bytes_of: std::collections::BTreeMap::new(),
            not_found_bytes_of: std::collections::BTreeMap::new(),
            times_of: std::collections::BTreeMap::new(),
        }
    }

    /// The keys of a visitors list ([`T_VISITORS`], [`T_ROW_VISITORS`]) in key order,
    /// each once: as [`SummaryFold::entry`] of each, but a run of keys of one row (or one
    /// hour) is looked up and counted once.
    pub fn keys(&mut self, table: usize, keys: &[(u128, u64)]) {
        if table == T_VISITORS {
            self.add_visitor_days(VisitorDays::of(keys));
            return;
        }
        // The keys' row: panel and row part.
        for run in keys.chunk_by(|a, b| a.0 >> 64 == b.0 >> 64) {
            self.visitor_run(table, run[0].0, run.len() as u64);
        }
    }

    /// The [`T_ROW_VISITORS`] keys, each once, in key order: a row's visitors counted
    /// once a run of its keys.
    pub fn row_keys(&mut self, keys: &[u128]) {
        for run in keys.chunk_by(|a, b| a >> 64 == b >> 64) {
            self.visitor_run(T_ROW_VISITORS, run[0], run.len() as u64);
        }
    }

    /// The [`T_VISITORS`] keys' part of the report, made apart ([`VisitorDays::of`]).
    pub fn add_visitor_days(&mut self, d: VisitorDays) {
        if self.visitor_days.is_empty() {
            self.visitor_days = d.days;
        } else {
            self.visitor_days.extend(d.days);
        }
        for (k, n) in d.by_hour {
            *self.visitors_by_hour.entry(k).or_insert(0) += n;
        }
    }

    /// `n` keys of one row (`T_ROW_VISITORS`) or one hour (`T_VISITORS`), the first `v`.
    fn visitor_run(&mut self, table: usize, v: u128, n: u64) {
        if table == T_VISITORS {
            let (day, hour) = ((v >> 96) as u32, (v >> 88) as u8);
            *self.visitors_by_hour.entry((day, hour)).or_insert(0) += n;
            return;
        }
        let panel = (v >> 125) as usize;
        let part = (v >> 64) as u64 & ((1 << 61) - 1);
        if let Some(row) = self.row_wanted.get(panel).and_then(|w| w.get(&part)) {
            *self.row_visitors[panel].entry(row.clone()).or_insert(0) += n;
        }
    }

    /// One key of table `table` (each key once, with its total).
    pub fn entry(&mut self, table: usize, k: &[u8], c: u64) {
        match table {
            T_VISITORS | T_ROW_VISITORS => {
                if let Ok(b) = <[u8; 16]>::try_from(k) {
                    let v = u128::from_be_bytes(b);
                    if table == T_VISITORS {
                        self.visitor_days
                            .push(((v >> 96) as u32, v & VISITOR_OF_DAY));
                    }
                    self.visitor_run(table, v, 1);
                }
                return;
            }
            // The requested files are the requests but the static files, as GoAccess's.
            T_REQUESTS if self.static_rule.test(k) => {
                self.static_hits = self.static_hits.saturating_add(c);
                self.statics.add(k, c);
                return;
            }
            T_BYTES if self.wanted.contains(k) => {
                self.bytes_of.insert(k.to_vec(), c);
            }
            T_NOT_FOUND_BYTES => {
                // The 404s' rows kept are in the map already (`end_table`).
                if let Some(b) = self.not_found_bytes_of.get_mut(k) {
                    *b = c;
                }
                return;
            }
            T_TIME_SUM | T_TIME_MAX => {
                if self.wanted.contains(k) {
                    let t = self.times_of.entry(k.to_vec()).or_insert((0, 0));
                    if table == T_TIME_SUM {
                        t.0 = c;
                    } else {
                        t.1 = c;
                    }
                }
                return;
            }
            T_REFERRERS => self.group(G_SITES, site(k), 0, c),
            T_AGENTS => self.agent_entry(k, c, None),
            T_CLIENT_BYTES | T_REFERRER_BYTES | T_AGENT_BYTES | T_VHOST_BYTES | T_USER_BYTES => {
                if table == T_REFERRER_BYTES {
                    self.group(G_SITES, site(k), 1, c);
                }
                if table == T_AGENT_BYTES {
                    let a = self.agents.get(k).cloned().unwrap_or_else(|| agent(k));
                    self.agent_groups(&a, 1, c);
                }
                if let Some((p, _)) = paired(table) {
                    if self.wanted_pairs[p].contains(k) {
                        self.pair_bytes[p].insert(k.to_vec(), c);
                    }
                }
                return;
            }
            _ => {}
        }
        self.tops[table].add(k, c);
    }

    /// Adds `c` to value `j` (hits 0, bytes 1) of `key` in group `g`.
    fn group(&mut self, g: usize, key: &[u8], j: usize, c: u64) {
        if let Some(v) = self.groups[g].get_mut(&Probe(key)) {
            v[j] = v[j].saturating_add(c);
        } else {
            let mut v = [0; 2];
            v[j] = c;
            self.groups[g].insert(crate::logs::Key::new(key), v);
        }
    }

    /// Adds `c` to value `j` of an agent's browser, browser version, system, system
    /// version (and crawler).
    fn agent_groups(&mut self, a: &Agent, j: usize, c: u64) {
        if a.is_none() {
            return;
        }
        if a.crawler {
            // Each crawler by its name (its class is `Crawlers`).
            self.group(G_CRAWLERS, a.browser_version.as_bytes(), j, c);
        }
        self.group(G_BROWSERS, a.browser.as_bytes(), j, c);
        self.group(G_BROWSER_VERSIONS, a.browser_version.as_bytes(), j, c);
        self.group(G_SYSTEMS, a.os.as_bytes(), j, c);
        self.group(G_SYSTEM_VERSIONS, a.os_version.as_bytes(), j, c);
    }

    /// One key of a paired table (`table`, the hits of [`PAIRED`]) with its hits `h` and
    /// bytes `b`: as [`SummaryFold::entry`] of `(table, k, h)`, and of the key in the
    /// pair's bytes table as far as the groups go (the sites' and the agents' classes'
    /// bytes). The kept rows' bytes are then given by [`SummaryFold::kept_pair_bytes`],
    /// in place of the bytes table's keys.
    pub fn pair_entry(&mut self, table: usize, k: &[u8], h: u64, b: u64) {
        match table {
            T_REFERRERS => {
                self.entry(table, k, h);
                self.group(G_SITES, site(k), 1, b);
            }
            // The agent read once for its hits and its bytes.
            T_AGENTS => {
                self.agent_entry(k, h, Some(b));
                self.tops[T_AGENTS].add(k, h);
            }
            _ => self.entry(table, k, h),
        }
    }

    /// An agent's hits `h` (and bytes `b`, when given) added to its browser's and
    /// system's groups, and the agent remembered (up to [`AGENT_CACHE`]).
    fn agent_entry(&mut self, k: &[u8], h: u64, b: Option<u64>) {
        let a = agent(k);
        if a.crawler {
            self.crawler_hits = self.crawler_hits.saturating_add(h);
        }
        self.agent_groups(&a, 0, h);
        if let Some(b) = b {
            self.agent_groups(&a, 1, b);
        }
        if self.agents.len() < AGENT_CACHE {
            // Keyed as the visitor keys have the agent (decoded, as the table's keys
            // are; an empty agent is `-` there, and has no browser).
            if !a.is_none() {
                self.agent_parts.insert(visitor_part(k), a.clone());
            }
            self.agents.insert(k.to_vec(), a);
        }
    }

    /// The bytes of the rows kept of pair `p` ([`PAIRED`]), each asked of `bytes` (after
    /// the pair's keys came through [`SummaryFold::pair_entry`]).
    pub fn kept_pair_bytes(&mut self, p: usize, bytes: impl Fn(&[u8]) -> Option<u64>) {
        for k in &self.wanted_pairs[p] {
            if let Some(b) = bytes(k) {
                self.pair_bytes[p].insert(k.clone(), b);
            }
        }
    }

    /// The end of table `table`'s keys. After the requests and the 404s, the rows they
    /// keep (and the static files') are the keys whose bytes the bytes table gives them;
    /// after the users, the rows the clients, referrers, agents, virtual hosts and users
    /// keep are the keys whose bytes their bytes tables give them.
    /// Then the rows of the panels with visitors by row are the rows whose visitors
    /// [`T_ROW_VISITORS`] counts (every referring site: their top is made at the end).
    pub fn end_table(&mut self, table: usize) {
        let parts = |t: &TopN| -> Vec<(u64, Vec<u8>)> {
            t.keys()
                .map(|k| (crate::partial::visitor_part(k), k.to_vec()))
                .collect()
        };
        let rows = |t: &TopN| -> Vec<(u64, Vec<u8>)> {
            t.keys().map(|k| (row_part(k), k.to_vec())).collect()
        };
        match table {
            T_CLIENTS => self.client_parts.extend(parts(&self.tops[T_CLIENTS])),
            T_AGENTS => self.agent_keys.extend(parts(&self.tops[T_AGENTS])),
            T_NOT_FOUND => {
                let (requests, statics) = (rows(&self.tops[T_REQUESTS]), rows(&self.statics));
                self.row_wanted[P_REQUESTS].extend(requests.into_iter().chain(statics));
                self.row_wanted[P_NOT_FOUND].extend(rows(&self.tops[T_NOT_FOUND]));
            }
            T_REFERRERS => self.row_wanted[P_REFERRERS].extend(rows(&self.tops[T_REFERRERS])),
            T_VHOSTS => self.row_wanted[P_VHOSTS].extend(rows(&self.tops[T_VHOSTS])),
            T_USERS => self.row_wanted[P_USERS].extend(rows(&self.tops[T_USERS])),
            T_USER_BYTES => {
                // The sites' hits are all in: the sites the report keeps are known (not
                // every site: a log of millions of referrers has about as many sites).
                let hits = GroupHits(&self.groups[G_SITES]);
                let sites: Vec<(u64, Vec<u8>)> = top(&hits, self.n)
                    .iter()
                    .map(|(k, _)| (row_part(k), k.to_vec()))
                    .collect();
                self.row_wanted[P_SITES].extend(sites);
            }
            _ => {}
        }
        if table == T_USERS {
            for (p, &(hits, _)) in PAIRED.iter().enumerate() {
                let keys: Vec<Vec<u8>> = self.tops[hits].keys().map(<[u8]>::to_vec).collect();
                self.wanted_pairs[p].extend(keys);
            }
        }
        if table == T_NOT_FOUND {
            let kept = self.tops[T_NOT_FOUND].keys().map(|k| (k.to_vec(), 0));
            self.not_found_bytes_of.extend(kept);
            for t in [
                &self.tops[T_REQUESTS],
                &self.tops[T_NOT_FOUND],
                &self.statics,
            ] {
                self.wanted.extend(t.keys().map(<[u8]>::to_vec));
            }
        }
    }

    /// Group `g`'s hits and bytes so far (`G_*`), for a hash range's fold
    /// ([`crate::logs::ranged`]: its groups are summed across ranges).
    pub(crate) fn group_rows(&self, g: usize) -> &HashMap<crate::logs::Key, [u64; 2]> {
        &self.groups[g]
    }

    /// What agent `k` is, if the fold remembers it.
    pub(crate) fn agent_of(&self, k: &[u8]) -> Option<&Agent> {
        self.agents.get(k)
    }

    /// The visitors by day so far (day, then the visitor key without its day and hour),
    /// sorted, each once.
    pub(crate) fn visitor_days(&mut self) -> &[(u32, u128)] {
        self.visitor_days.sort_unstable();
        self.visitor_days.dedup();
        &self.visitor_days
    }

    /// The panels, with the numbers and the days.
    pub fn finish(mut self, numbers: &[u64], days: Vec<(u32, u64)>) -> SummaryTop {
        self.visitor_days.sort_unstable();
        self.visitor_days.dedup();
        let (groups, group_bytes) = rank_groups(self.groups, self.n);
        let mut per_day: HashMap<u32, u64> = HashMap::new();
        let mut client_visitors: std::collections::BTreeMap<Vec<u8>, u64> = Default::default();
        let mut agent_visitors: std::collections::BTreeMap<Vec<u8>, u64> = Default::default();
        let mut group_visitors = no_group_visitors();
        for (d, v) in &self.visitor_days {
            *per_day.entry(*d).or_insert(0) += 1;
            let (c, a) = (
                (v >> 44) as u64 & ((1 << 44) - 1),
                *v as u64 & ((1 << 44) - 1),
            );
            if let Some(k) = self.client_parts.get(&c) {
                *client_visitors.entry(k.clone()).or_insert(0) += 1;
            }
            if let Some(k) = self.agent_keys.get(&a) {
                *agent_visitors.entry(k.clone()).or_insert(0) += 1;
            }
            // A visitor with no agent, or one past the fold's memory, is not counted by
            // browser or system.
            if let Some(ag) = self.agent_parts.get(&a) {
                add_group_visitors(&mut group_visitors, ag, 1);
            }
        }
        let group_visitors = group_visitors_of(group_visitors);
        let mut visitors_by_day: Vec<(u32, u64)> = per_day.into_iter().collect();
        visitors_by_day.sort_unstable();
        let mut visitors_by_hour: Vec<(u32, u8, u64)> = self
            .visitors_by_hour
            .into_iter()
            .map(|((d, h), c)| (d, h, c))
            .collect();
        visitors_by_hour.sort_unstable();
        let mut row_visitors = self.row_visitors;
        {
            let sites: hashbrown::HashSet<&[u8]> =
                groups[G_SITES].top.iter().map(|(k, _)| &k[..]).collect();
            row_visitors[P_SITES].retain(|k, _| sites.contains(&k[..]));
        }
        SummaryTop {
            numbers: numbers.to_vec(),
            days,
            lists: self.tops.into_iter().map(TopN::finish).collect(),
            visitors: self.visitor_days.len() as u64,
            visitors_by_day,
            visitors_by_hour,
            static_files: self.statics.finish(),
            static_hits: self.static_hits,
            groups,
            group_bytes,
            pair_bytes: self.pair_bytes,
            client_visitors,
            agent_visitors,
            group_visitors,
            row_visitors,
            crawler_hits: self.crawler_hits,
            bytes_of: self.bytes_of,
            not_found_bytes_of: self.not_found_bytes_of,
            times_of: self.times_of,
        }
    }
}

/// The groups' rankings (every row of the groups that keep every row, else `n`) and the
/// bytes of the rows kept, from the groups' hits and bytes (the `G_*` indices).
pub(crate) fn rank_groups(
    groups: Vec<HashMap<crate::logs::Key, [u64; 2]>>,
    n: usize,
) -> (Vec<Ranking>, Vec<std::collections::BTreeMap<Vec<u8>, u64>>) {
    let mut groups = groups.into_iter();
    let mut group_bytes = Vec::new();
    let mut rank = |rows: usize| {
        let g = groups.next().unwrap_or_default();
        let ranking = Ranking::of(&GroupHits(&g), rows);
        let kept: std::collections::BTreeMap<Vec<u8>, u64> = ranking
            .top
            .iter()
            .map(|(k, _)| (k.clone(), g.get(&Probe(k)).map_or(0, |v| v[1])))
            .collect();
        group_bytes.push(kept);
        ranking
    };
    let groups: Vec<Ranking> = GROUPS
        .iter()
        .map(|g| rank(if g.every_row { usize::MAX } else { n }))
        .collect();
    (groups, group_bytes)
}

/// No visitors yet by group (the `G_*` indices).
pub(crate) fn no_group_visitors<'a>() -> Vec<HashMap<&'a str, u64>> {
    (0..GROUPS.len()).map(|_| HashMap::new()).collect()
}

/// Adds `n` visitors of agent `ag` to their groups (browser, system, their versions, and
/// crawler).
pub(crate) fn add_group_visitors<'a>(g: &mut [HashMap<&'a str, u64>], ag: &'a Agent, n: u64) {
    if ag.is_none() {
        // No browser or system (an empty agent): no row, as in GoAccess.
        return;
    }
    if ag.crawler {
        // Each crawler by its name (its class is `Crawlers`).
        *g[G_CRAWLERS].entry(&ag.browser_version).or_insert(0) += n;
    }
    *g[G_BROWSERS].entry(&ag.browser).or_insert(0) += n;
    *g[G_BROWSER_VERSIONS]
        .entry(&ag.browser_version)
        .or_insert(0) += n;
    *g[G_SYSTEMS].entry(&ag.os).or_insert(0) += n;
    *g[G_SYSTEM_VERSIONS].entry(&ag.os_version).or_insert(0) += n;
}

/// The visitors by group as the report holds them.
pub(crate) fn group_visitors_of(
    g: Vec<HashMap<&str, u64>>,
) -> Vec<std::collections::BTreeMap<Vec<u8>, u64>> {
    g.into_iter()
        .map(|g| {
            g.into_iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v))
                .collect()
        })
        .collect()
}

/// A URI or an agent as GoAccess reads it (`decode_url` in its `parser.c`): `%XX` decoded
/// once (a `%` not followed by two hex digits kept; a decoded NUL ends it, a decoded
/// carriage return or line feed is dropped) and white space trimmed at both ends. So
/// `/a%20b` and `/a b` are one requested file. Bytes as logged stay as they are, control
/// bytes included (the reports show them escaped; GoAccess would cut at a NUL).
pub fn goaccess_decoded(s: &[u8]) -> Cow<'_, [u8]> {
    if is_plain(s) {
        return Cow::Borrowed(s);
    }
    let mut out = Vec::with_capacity(s.len());
    decode_into(&mut out, s);
    Cow::Owned(out)
}

/// Whether [`goaccess_decoded`] leaves `s` as it is.
#[inline]
fn is_plain(s: &[u8]) -> bool {
    memchr::memchr(b'%', s).is_none()
        && !s.first().is_some_and(|b| is_c_space(*b))
        && !s.last().is_some_and(|b| is_c_space(*b))
}

/// Appends [`goaccess_decoded`]`(s)` to `out` (no allocation of its own: a request's key
/// is built in place).
#[inline]
pub fn decode_into(out: &mut Vec<u8>, s: &[u8]) {
    if is_plain(s) {
        out.extend_from_slice(s);
        return;
    }
    let from = out.len();
    let hex = |i: usize| s.get(i).and_then(|&x| (x as char).to_digit(16));
    let mut i = 0;
    while i < s.len() {
        match (s[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                i += 3;
                match (h * 16 + l) as u8 {
                    // A C string ends there.
                    0 => break,
                    b'\r' | b'\n' => {}
                    b => out.push(b),
                }
            }
            (b, _, _) => {
                i += 1;
                out.push(b);
            }
        }
    }
    let added = &out[from..];
    let start = added
        .iter()
        .position(|b| !is_c_space(*b))
        .unwrap_or(added.len());
    let end = added
        .iter()
        .rposition(|b| !is_c_space(*b))
        .map_or(start, |e| e + 1);
    out.truncate(from + end);
    out.drain(from..from + start);
}

/// C's `isspace` in the C locale: space, tab, line feed, vertical tab, form feed, carriage
/// return.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A status code's row in the status panel's visitors: its three digits.
pub fn status_text(code: u16) -> [u8; 3] {
    let c = code % 1000;
    [
        b'0' + (c / 100) as u8,
        b'0' + (c / 10 % 10) as u8,
        b'0' + (c % 10) as u8,
    ]
}

/// The site of a referrer: its host (`https://a.example/x` is `a.example`), or the
/// referrer itself when it is not a URL.
pub fn site(referrer: &[u8]) -> &[u8] {
    // The first `://` (a colon, then two slashes): memchr for the colons, no searcher
    // built a call (the site is taken on every line with a referrer).
    let Some(p) = memchr::memchr_iter(b':', referrer)
        .find(|&p| referrer.get(p + 1..p + 3) == Some(&b"//"[..]))
    else {
        return referrer;
    };
    let rest = &referrer[p + 3..];
    let end = rest
        .iter()
        .position(|&b| b == b'/' || b == b'?' || b == b'#')
        .unwrap_or(rest.len());
    &rest[..end]
}

/// What the summary prints: its numbers and every panel.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SummaryTop {
    /// The [`SUMMARY_NUMBERS`] numbers.
    pub numbers: Vec<u64>,
    /// Requests by day (YYYYMMDD), days in order.
    pub days: Vec<(u32, u64)>,
    /// The top rows of each list (`T_*`; none for the lists whose keys are folded into
    /// other panels' columns: visitors, times, bytes).
    pub lists: Vec<Ranking>,
    /// Unique visitors (client, agent and day).
    pub visitors: u64,
    /// Unique visitors by day, days in order.
    pub visitors_by_day: Vec<(u32, u64)>,
    /// Unique visitors by day and hour, in order.
    pub visitors_by_hour: Vec<(u32, u8, u64)>,
    /// Requests for static files, by request.
    pub static_files: Ranking,
    /// Requests for static files in all.
    pub static_hits: u64,
    /// The top rows (every row of some) of the groups folded from the lists' keys
    /// (referring sites, browsers and their versions, systems and their versions,
    /// crawlers: the `G_*` indices and [`GROUPS`]).
    pub groups: Vec<Ranking>,
    /// Requests from crawlers in all.
    pub crawler_hits: u64,
    /// Bytes sent for the requests of the requests and static files panels.
    pub bytes_of: std::collections::BTreeMap<Vec<u8>, u64>,
    /// Bytes sent for the requests of the 404s panel.
    pub not_found_bytes_of: std::collections::BTreeMap<Vec<u8>, u64>,
    /// Time taken in all and longest (microseconds) for those requests, when logged.
    pub times_of: std::collections::BTreeMap<Vec<u8>, (u64, u64)>,
    /// Bytes of the rows kept of the referring sites, browsers, browser versions,
    /// systems, system versions and crawlers (the `G_*` indices).
    pub group_bytes: Vec<std::collections::BTreeMap<Vec<u8>, u64>>,
    /// Bytes of the rows kept of the clients, referrers, agents, virtual hosts and users.
    pub pair_bytes: Vec<std::collections::BTreeMap<Vec<u8>, u64>>,
    /// Unique visitors of the clients kept.
    pub client_visitors: std::collections::BTreeMap<Vec<u8>, u64>,
    /// Unique visitors of the user agents kept.
    pub agent_visitors: std::collections::BTreeMap<Vec<u8>, u64>,
    /// Unique visitors by group (the `G_*` indices but referring sites), every group.
    pub group_visitors: Vec<std::collections::BTreeMap<Vec<u8>, u64>>,
    /// Unique visitors of the rows kept of the panels with visitors by row (the `P_*`
    /// indices: requested and static files, 404s, referrers, referring sites, virtual
    /// hosts, users).
    pub row_visitors: Vec<std::collections::BTreeMap<Vec<u8>, u64>>,
}

/// How many agents a fold remembers between the agents' hits and their bytes.
pub(crate) const AGENT_CACHE: usize = 200_000;

/// No rows (of a list or group a summary has not).
static NO_ROWS: Ranking = Ranking {
    distinct: 0,
    top: Vec::new(),
};

/// No values (of a column a summary has not).
static NO_VALUES: std::collections::BTreeMap<Vec<u8>, u64> = std::collections::BTreeMap::new();

impl SummaryTop {
    /// Requests counted.
    pub fn requests_count(&self) -> u64 {
        self.numbers.get(N_REQUESTS).copied().unwrap_or(0)
    }

    /// The ranked rows a panel shows ([`crate::logs::panels::PANELS`]).
    pub fn rows(&self, r: RowsOf) -> &Ranking {
        match r {
            RowsOf::List(t) => self.lists.get(t),
            RowsOf::Group(g) => self.groups.get(g),
            RowsOf::Statics => Some(&self.static_files),
        }
        .unwrap_or(&NO_ROWS)
    }

    /// The bytes of the rows kept.
    pub fn bytes(&self, b: BytesOf) -> &std::collections::BTreeMap<Vec<u8>, u64> {
        match b {
            BytesOf::List(t) => paired(t).and_then(|(p, _)| self.pair_bytes.get(p)),
            BytesOf::Group(g) => self.group_bytes.get(g),
        }
        .unwrap_or(&NO_VALUES)
    }

    /// The unique visitors of the rows kept.
    pub fn visitors_of(&self, v: VisitorsOf) -> &std::collections::BTreeMap<Vec<u8>, u64> {
        match v {
            VisitorsOf::Rows(p) => self.row_visitors.get(p),
            VisitorsOf::Group(g) => self.group_visitors.get(g),
            VisitorsOf::Clients => Some(&self.client_visitors),
            VisitorsOf::Agents => Some(&self.agent_visitors),
        }
        .unwrap_or(&NO_VALUES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A user agent is decoded once, as GoAccess decodes it, whatever the format: a
    /// CloudFront agent's `%2520` is `%20`, an IIS agent's `+` stays.
    #[test]
    fn agents_are_decoded_once_in_every_format() {
        // The agents table's keys of one line in format `name` under `head`.
        let agents_of = |name: &str, head: &[u8], line: &[u8]| -> Vec<Vec<u8>> {
            let config = SummaryConfig {
                format: Format::named(name, head).unwrap(),
                ..Default::default()
            };
            let mut s = Summary::default();
            s.block(&config, line);
            s.entries(T_AGENTS).map(|(k, _)| k.to_vec()).collect()
        };
        let head = b"#Version: 1.0\n#Fields: date time x-edge-location sc-bytes c-ip cs-method \
            cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query time-taken\n";
        assert_eq!(
            agents_of(
                "cloudfront",
                head,
                b"2024-03-05\t10:15:30\tFRA56-P1\t5120\t192.0.2.10\tGET\td1.cloudfront.net\t/a\t200\t-\tMozilla/5.0%2520(X%20Y)\t-\t0.002\n",
            ),
            [b"Mozilla/5.0%20(X Y)".to_vec()]
        );
        let head = b"#Fields: date time c-ip cs-method cs-uri-stem sc-status cs(User-Agent)\n";
        assert_eq!(
            agents_of(
                "w3c",
                head,
                b"2024-03-05 10:15:30 192.0.2.1 GET /a 200 Mozilla/5.0+(X%20Y)\n",
            ),
            [b"Mozilla/5.0+(X Y)".to_vec()]
        );
    }

    proptest::proptest! {
        /// Visitor keys pushed, folded at any point (the fold reusing its lists' memory),
        /// merged with another's and sealed count each key's requests as a map does.
        #[test]
        fn visitor_lists_count_as_a_map(
            ops in proptest::collection::vec((0u8..4, 0u128..40), 0..300),
            other in proptest::collection::vec(0u128..40, 0..100),
        ) {
            let mut want = std::collections::BTreeMap::new();
            let mut mine = std::collections::BTreeMap::new();
            let mut v = Visitors::default();
            for (op, k) in ops {
                if op == 0 {
                    v.fold();
                } else {
                    let k = k << 100 | k;
                    v.push(k);
                    *want.entry(k).or_insert(0u64) += 1;
                    *mine.entry(k).or_insert(0u64) += 1;
                }
            }
            let mut o = Visitors::default();
            for (i, &k) in other.iter().enumerate() {
                o.push(k);
                *want.entry(k).or_insert(0u64) += 1;
                if i % 7 == 3 {
                    o.fold();
                }
            }
            let unsealed: Vec<(u128, u64)> = v.counts().into_owned();
            // Unsealed (keys still appended), the counts are those of the keys pushed.
            proptest::prop_assert_eq!(&unsealed, &mine.into_iter().collect::<Vec<_>>());
            let mut rows = RowVisitors::default();
            for &(k, n) in &unsealed {
                for _ in 0..n.min(3) {
                    rows.push(k);
                }
            }
            let mut other_rows = RowVisitors::default();
            other_rows.add(other.iter().map(|&k| (k, 2)).collect());
            let mut other_rows_pushed = RowVisitors::default();
            for &k in other.iter().rev() {
                other_rows_pushed.push(k);
            }
            let set = |m: &mut RowVisitors| -> Vec<u128> {
                m.seal();
                m.keys().into_owned()
            };
            proptest::prop_assert_eq!(set(&mut other_rows), set(&mut other_rows_pushed));
            rows.merge(other_rows);
            let mut w = Visitors::default();
            w.add(unsealed.clone());
            v.merge(o);
            v.seal();
            let want: Vec<(u128, u64)> = want.into_iter().collect();
            proptest::prop_assert_eq!(&v.counts()[..], &want[..]);
            let want_keys: Vec<u128> = want.iter().map(|&(k, _)| k).collect();
            proptest::prop_assert_eq!(&rows.keys()[..], &want_keys[..]);
            rows.seal();
            proptest::prop_assert_eq!(&rows.keys()[..], &want_keys[..]);
            proptest::prop_assert!(unsealed.windows(2).all(|p| p[0].0 < p[1].0));
            proptest::prop_assert_eq!(&w.counts()[..], &unsealed[..]);
        }
    }

    /// Times by request (added, and the longest by maximum) merge as the whole log counts
    /// them, however the log is cut, through the streamed merge and the merged states.
    #[test]
    fn times_merge_by_sum_and_maximum() {
        let mut log = Vec::new();
        for (i, d) in [0.5, 0.002, 1.25, 0.75, 0.001, 3.0, 0.0].iter().enumerate() {
            let uri = ["/a", "/b", "/a"][i % 3];
            log.extend_from_slice(
                format!("{{\"ts\":1709633730,\"status\":200,\"uri\":\"{uri}\",\"duration\":{d},\"size\":1}}\n").as_bytes(),
            );
        }
        let config = SummaryConfig {
            format: Format::named("json", b"").unwrap(),
            ..Default::default()
        };
        let exts = default_static();
        let mut whole = Summary::default();
        whole.block(&config, &log);
        let want = whole.ranked(5, Statics::new(&exts, "combined"));
        assert_eq!(
            want.times_of[&b" /a "[..].to_vec()],
            (500_000 + 1_250_000 + 750_000 + 3_000_000, 3_000_000)
        );
        let state = |s: &Summary| {
            let mut out = Vec::new();
            s.encode_state(&mut out);
            out
        };
        for cut in 0..=log.len() {
            let at = log[..cut]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let (mut a, mut b) = (Summary::default(), Summary::default());
            a.block(&config, &log[..at]);
            b.block(&config, &log[at..]);
            let (sa, sb) = (state(&a), state(&b));
            let got =
                crate::logs::streamed::summary(&[&sa, &sb], 5, Statics::new(&exts, "combined"))
                    .unwrap();
            assert_eq!(got, want, "cut at {at}");
            let merged = crate::logs::streamed::merge_summary_states(&[&sa, &sb]).unwrap();
            assert_eq!(
                crate::logs::streamed::summary(&[&merged], 5, Statics::new(&exts, "combined"))
                    .unwrap(),
                want
            );
            assert_eq!(merged, state(&whole), "merged state at {at}");
        }
    }

    #[test]
    fn nets() {
        let n = Net::parse("10.0.0.0/8").unwrap();
        assert!(n.contains(&"10.1.2.3".parse().unwrap()));
        assert!(!n.contains(&"11.1.2.3".parse().unwrap()));
        assert!(!n.contains(&"::1".parse().unwrap()));
        assert!(Net::parse("0.0.0.0/0")
            .unwrap()
            .contains(&"8.8.8.8".parse().unwrap()));
        let one = Net::parse("2001:db8::1").unwrap();
        assert!(one.contains(&"2001:db8::1".parse().unwrap()));
        assert!(!one.contains(&"2001:db8::2".parse().unwrap()));
        assert_eq!(
            Net::parse("10.0.0.0/33").unwrap_err().to_string(),
            "'10.0.0.0/33': the prefix length must be 0 to 32"
        );
        assert_eq!(
            Net::parse("::1/x").unwrap_err().to_string(),
            "'::1/x': the prefix length must be 0 to 128"
        );
        assert_eq!(
            Net::parse("host").unwrap_err().to_string(),
            "'host' is not an IP address or CIDR range"
        );
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("2000-10-10", false), Ok(20001010000000));
        assert_eq!(parse_time("2000-10-10", true), Ok(20001010235959));
        assert_eq!(parse_time("2000-10-10T13:55", false), Ok(20001010135500));
        assert!(parse_time("2000-13-10", false).is_err());
        assert!(parse_time("yesterday", false).is_err());
        assert_eq!(
            parse_time("2000-10-10T25", true).unwrap_err().to_string(),
            "'2000-10-10T25' is not a time: give YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS"
        );
    }

    #[test]
    fn uris_and_agents_are_decoded_as_goaccess_decodes_them() {
        let d = |s: &[u8]| goaccess_decoded(s).into_owned();
        assert!(matches!(
            goaccess_decoded(b"/plain?a=b+c"),
            Cow::Borrowed(_)
        ));
        assert_eq!(d(b"/caf%C3%A9"), "/caf\u{e9}".as_bytes());
        assert_eq!(d(b"/p%41th%2fx"), b"/pAth/x");
        // A `%` without two hex digits stays, `+` stays.
        assert_eq!(d(b"/bad%zz+x%4"), b"/bad%zz+x%4");
        // A decoded NUL ends it, decoded line ends are dropped, white space trimmed.
        assert_eq!(d(b"/a%00b"), b"/a");
        assert_eq!(d(b" /a%0Ab%0d "), b"/ab");
        assert_eq!(d(b"%20%09"), b"");
        // Bytes as logged stay, control bytes too (the reports escape them).
        assert!(matches!(goaccess_decoded(b"/a\0b\rc"), Cow::Borrowed(_)));
        assert_eq!(d(b"/a\0b%41\r"), b"/a\0bA");
        // Appended in place after what is there, trimmed on its own.
        let mut key = b"GET ".to_vec();
        decode_into(&mut key, b" /a%20b ");
        assert_eq!(key, b"GET /a b");
    }

    #[test]
    fn sites_and_agents() {
        assert_eq!(site(b"https://a.example:8080/x?y"), b"a.example:8080");
        assert_eq!(site(b"android-app://x"), b"x");
        let a = agent(b"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36");
        assert_eq!(
            (a.browser.as_str(), a.os.as_str(), a.crawler),
            ("Chrome", "Windows", false)
        );
        assert_eq!(a.browser_version, "Chrome/120.0.0.0");
        assert_eq!(a.os_version, "Windows 10");
        let g = agent(b"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)");
        assert!(g.crawler);
        assert_eq!(
            (g.browser.as_str(), g.browser_version.as_str()),
            ("Crawlers", "Googlebot/2.1")
        );
        assert_eq!(
            (g.os.as_str(), g.os_version.as_str()),
            ("Crawlers", "Googlebot/2.1")
        );
        // curl is no crawler in GoAccess's tables; the agent is read decoded.
        let c = agent(&goaccess_decoded(b"curl%2F8.5.0"));
        assert!(!c.crawler);
        assert_eq!(
            (
                c.browser.as_str(),
                c.browser_version.as_str(),
                c.os.as_str()
            ),
            ("Others", "curl/8.5.0", "Unknown")
        );
        assert_eq!(agent(b"-").browser, "Unknown");
        assert!(agent(&goaccess_decoded(b" %20 ")).is_none());
        assert!(!agent(b"-").is_none());
    }
}
