//! The Wide Finder 2 report (Tim Bray's 2008 benchmark, by its reference rules): the top
//! URIs by hits and by bytes, the top 404s, clients and referrers of article fetches.

use std::sync::Mutex;

use swath_kernels::logs::{byte_count, counted_referrer, is_article, wf2_fields};

use super::tables::{Key, Ranking, Table};
use super::{LineReport, DEFAULT_MAX_LINE};
use crate::counts::{Counts, BATCH};

/// Whether `head` (a log's first bytes, as `swath_engine::Source::head` gives them) may be
/// an access log: false when it holds whole lines that are not blank and none of the first
/// 32 has the fields the report reads (`/var/log/dpkg.log`), which is refused instead of
/// reported as zeros. A head without one whole line (a first line longer than the head,
/// an endless stream of zeros) decides nothing: it is read, its long lines skipped.
pub fn recognises(head: &[u8]) -> bool {
    let whole = match memchr::memrchr(b'\n', head) {
        Some(end) => &head[..end],
        None => return true,
    };
    let mut lines = whole
        .split(|&b| b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .take(32)
        .peekable();
    lines.peek().is_none()
        || lines.any(|line| {
            // The fields of a Common or Combined line, not merely eleven words (a syslog
            // or JSON line has as many): a quoted request, a three-digit status.
            wf2_fields(line).is_some_and(|f| {
                f.method.first() == Some(&b'"')
                    && f.status.len() == 3
                    && f.status.iter().all(u8::is_ascii_digit)
            })
        })
}

/// How the Wide Finder 2 report reads lines.
#[derive(Debug, Clone)]
pub struct Wf2Config {
    /// A custom article pattern (`--article`); `None` for the built-in ongoing pattern.
    pub article: Option<regex::bytes::Regex>,
    /// The quoted prefix of self-referrers (`"http://www.tbray.org/ongoing/`).
    pub self_referrer: Vec<u8>,
    /// A line with more bytes than this is malformed.
    pub max_line: usize,
}

impl Default for Wf2Config {
    fn default() -> Self {
        Wf2Config {
            article: None,
            self_referrer: b"\"http://www.tbray.org/ongoing/".to_vec(),
            max_line: DEFAULT_MAX_LINE,
        }
    }
}

/// What Wide Finder 2 counts for one URI.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct UriStat {
    /// Bytes sent with status 200.
    pub bytes: u64,
    /// Article fetches (200 or 304).
    pub hits: u64,
    /// 404s.
    pub not_found: u64,
    /// Fetched with 200 or 304 at least once: the URI is in the bytes table.
    pub fetched: bool,
}

impl crate::counts::Tally for UriStat {
    const SIZE: usize = 25;

    #[inline]
    fn store(&self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.bytes.to_le_bytes());
        out[8..16].copy_from_slice(&self.hits.to_le_bytes());
        out[16..24].copy_from_slice(&self.not_found.to_le_bytes());
        out[24] = u8::from(self.fetched);
    }

    #[inline]
    fn load(b: &[u8]) -> UriStat {
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        UriStat {
            bytes: word(0),
            hits: word(8),
            not_found: word(16),
            fetched: b[24] != 0,
        }
    }

    #[inline]
    fn add(&mut self, o: &UriStat) {
        self.bytes = self.bytes.saturating_add(o.bytes);
        self.hits += o.hits;
        self.not_found += o.not_found;
        self.fetched |= o.fetched;
    }
}

/// The Wide Finder 2 tables. A URI's counts (bytes, hits, 404s) live in one slot, so a line
/// costs one URI lookup, plus the client's and the referrer's for articles; all three are
/// counted a batch of lines at a time (see [`crate::counts`]).
#[derive(Debug, Default)]
pub struct Wf2 {
    /// Counts by URI.
    pub uris: Counts<UriStat>,
    /// Article fetches by client.
    pub clients: Counts,
    /// Article fetches by referrer (quotes removed; no `"-"`, no self-references).
    pub referrers: Counts,
    /// Lines with fewer than 11 fields.
    pub malformed: u64,
}

/// URI, client and referrer updates of a batch of lines.
struct Pending<'a> {
    uris: Vec<(&'a [u8], u64, UriStat)>,
    clients: Vec<(&'a [u8], u64, u64)>,
    referrers: Vec<(&'a [u8], u64, u64)>,
}

impl Wf2 {
    /// One line; an article fetch's client and referrer go to `pending` (or straight to
    /// the tables without one).
    #[inline]
    fn take<'a>(&mut self, c: &Wf2Config, line: &'a [u8], pending: Option<&mut Pending<'a>>) {
        if line.len() > c.max_line {
            self.malformed += 1;
            return;
        }
        let Some(f) = wf2_fields(line) else {
            self.malformed += 1;
            return;
        };
        if f.method != b"\"GET" {
            return;
        }
        let (bytes, fetched) = match f.status {
            b"200" => (byte_count(f.bytes), true),
            b"304" => (0, true),
            b"404" => (0, false),
            _ => return,
        };
        let mut st = UriStat::default();
        let article = fetched
            && match &c.article {
                None => is_article(f.uri),
                Some(re) => re.is_match(f.uri),
            };
        if fetched {
            st.bytes = bytes;
            st.fetched = true;
            st.hits = u64::from(article);
        } else {
            st.not_found = 1;
        }
        let referrer = if article {
            counted_referrer(f.referrer, &c.self_referrer)
        } else {
            None
        };
        match pending {
            Some(p) => {
                p.uris.push((f.uri, self.uris.hash(f.uri), st));
                if article {
                    p.clients.push((f.client, self.clients.hash(f.client), 1));
                    if let Some(r) = referrer {
                        p.referrers.push((r, self.referrers.hash(r), 1));
                    }
                }
                if p.uris.len() == BATCH {
                    self.flush(p);
                }
            }
            None => {
                self.uris.add(f.uri, st);
                if article {
                    self.clients.add(f.client, 1);
                    if let Some(r) = referrer {
                        self.referrers.add(r, 1);
                    }
                }
            }
        }
    }

    fn flush(&mut self, p: &mut Pending<'_>) {
        self.uris.add_batch(&p.uris);
        self.clients.add_batch(&p.clients);
        self.referrers.add_batch(&p.referrers);
        p.uris.clear();
        p.clients.clear();
        p.referrers.clear();
    }

    fn project(&self, f: impl Fn(&UriStat) -> Option<u64>) -> Table {
        self.uris
            .iter()
            .filter_map(|(k, st)| f(&st).map(|v| (Key::new(k), v)))
            .collect()
    }

    /// Writes the tables in full, in canonical order, as a partial result's state
    /// ([`crate::partial::Wf2Tables`]), straight from the hash tables.
    pub fn encode_state(&self, out: &mut Vec<u8>) {
        use crate::partial::hashed;
        let uris = hashed(
            self.uris
                .iter()
                .map(|(k, s)| (k, ([s.bytes, s.hits, s.not_found], s.fetched))),
        );
        let (clients, referrers) = (hashed(self.clients.iter()), hashed(self.referrers.iter()));
        crate::partial::encode_wf2(out, self.malformed, &uris, &clients, &referrers);
    }

    /// The report whose tables these are.
    pub fn from_tables(t: &crate::partial::Wf2Tables) -> Wf2 {
        let mut r = Wf2 {
            malformed: t.malformed,
            ..Wf2::default()
        };
        for (k, v, f) in &t.uris {
            let st = UriStat {
                bytes: v[0],
                hits: v[1],
                not_found: v[2],
                fetched: *f,
            };
            r.uris.add(k, st);
        }
        for (k, n) in &t.clients {
            r.clients.add(k, *n);
        }
        for (k, n) in &t.referrers {
            r.referrers.add(k, *n);
        }
        r
    }

    /// Article fetches (200 or 304) by URI.
    pub fn hits(&self) -> Table {
        self.project(|s| (s.hits > 0).then_some(s.hits))
    }

    /// Bytes sent (200; 304 adds 0) by URI, for every URI fetched with 200 or 304.
    pub fn bytes(&self) -> Table {
        self.project(|s| s.fetched.then_some(s.bytes))
    }

    /// 404s by URI.
    pub fn not_found(&self) -> Table {
        self.project(|s| (s.not_found > 0).then_some(s.not_found))
    }
}

impl LineReport for Wf2 {
    type Config = Wf2Config;

    #[inline]
    fn line(&mut self, c: &Wf2Config, line: &[u8]) {
        self.take(c, line, None);
    }

    fn block(&mut self, c: &Wf2Config, block: &[u8]) {
        let mut p = Pending {
            uris: Vec::with_capacity(BATCH),
            clients: Vec::with_capacity(BATCH),
            referrers: Vec::with_capacity(BATCH),
        };
        let mut rest = block;
        while !rest.is_empty() {
            let (line, next) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &rest[rest.len()..]),
            };
            self.take(c, line, Some(&mut p));
            rest = next;
        }
        self.flush(&mut p);
    }

    fn merge(&mut self, o: Self) {
        // The three tables merge at once: with millions of distinct clients and referrers
        // the report phase is otherwise a long single-threaded tail.
        let Wf2 {
            uris,
            clients,
            referrers,
            malformed,
        } = o;
        // Without a thread to spare (no memory for its stack), a table no thread took is
        // merged here afterwards.
        let clients = Mutex::new(Some(clients));
        let referrers = Mutex::new(Some(referrers));
        let take = |m: &Mutex<Option<Counts>>| m.lock().unwrap_or_else(|p| p.into_inner()).take();
        let (mine, theirs) = (&mut self.clients, &mut self.referrers);
        std::thread::scope(|s| {
            let _ = std::thread::Builder::new().spawn_scoped(s, || {
                if let Some(c) = take(&clients) {
                    mine.merge(c);
                }
            });
            let _ = std::thread::Builder::new().spawn_scoped(s, || {
                if let Some(r) = take(&referrers) {
                    theirs.merge(r);
                }
            });
            self.uris.merge(uris);
        });
        if let Some(c) = take(&clients) {
            self.clients.merge(c);
        }
        if let Some(r) = take(&referrers) {
            self.referrers.merge(r);
        }
        self.malformed += malformed;
    }

    fn max_line(c: &Wf2Config) -> usize {
        c.max_line
    }

    fn skipped(&mut self, n: u64) {
        self.malformed += n;
    }
}

/// What the Wide Finder 2 report prints: the malformed lines and five rankings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Wf2Top {
    /// Lines skipped as malformed.
    pub malformed: u64,
    /// Article fetches by URI (its distinct keys: the resources).
    pub hits: Ranking,
    /// Bytes by URI fetched with 200 or 304.
    pub bytes: Ranking,
    /// 404s by URI.
    pub not_found: Ranking,
    /// Article fetches by client.
    pub clients: Ranking,
    /// Article fetches by referrer.
    pub referrers: Ranking,
}

impl Wf2 {
    /// The report's rankings of `n` rows.
    pub fn ranked(&self, n: usize) -> Wf2Top {
        Wf2Top {
            malformed: self.malformed,
            hits: Ranking::of(&self.hits(), n),
            bytes: Ranking::of(&self.bytes(), n),
            not_found: Ranking::of(&self.not_found(), n),
            clients: Ranking::of(&self.clients, n),
            referrers: Ranking::of(&self.referrers, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::recognises;

    #[test]
    fn access_log_lines_are_recognised_and_others_not() {
        let combined =
            b"1.2.3.4 - - [01/Oct/2007:00:00:00 -0700] \"GET /a HTTP/1.1\" 200 5 \"-\" \"x\"\n";
        assert!(recognises(combined));
        let dpkg = b"2026-11-01 10:00:00 startup archives unpack\n2026-11-01 10:00:01 install a:amd64 <none> 1.0\n";
        assert!(!recognises(dpkg));
        // Eleven words or more, but no request and status where a log has them.
        let syslog = b"Nov 30 01:02:03 host sshd[123]: Accepted publickey for root from 10.0.0.1 port 22 ssh2\n";
        assert!(!recognises(syslog));
        // One junk line first does not hide the log after it.
        let mut mixed = b"# a header\n".to_vec();
        mixed.extend_from_slice(combined);
        assert!(recognises(&mixed));
        // Nothing whole to judge by: read.
        assert!(recognises(b""));
        assert!(recognises(&[0u8; 4096]));
        assert!(recognises(b"\n\n"));
    }
}
