//! Synthetic web-server access logs: `swath gen log`.
//!
//! The logs stand in for the Wide Finder 2 sample (Tim Bray's `www.tbray.org/ongoing`
//! logs) so that log-processing jobs can be tried at any size without shipping the data.
//! Every line is in Apache's *combined* format:
//!
//! ```text
//! HOST - - [DD/Mon/YYYY:HH:MM:SS -0700] "METHOD URI HTTP/1.x" STATUS BYTES "REFERRER" "USER-AGENT"
//! ```
//!
//! - `HOST`: a client address as Apache logs it: an IPv4 address (about 80 % of the long
//!   tail), a resolved host name (`crawl-66-249-65-1.googlebot.com`,
//!   `c-24-18-203-77.hsd1.wa.comcast.net`, about 12 %) or an IPv6 address (about 8 %).
//!   Clients follow a Zipf-like law: a few heavy crawlers, feed pollers and proxies, then a
//!   long tail of two million addresses. Every client keeps its user agent (one for pages,
//!   one for feeds).
//! - Time stamps are local time in Vancouver (`-0700`) from Monday 1 October 2007. They never
//!   go backwards, and follow a day and week profile (quiet nights, busy afternoons, quieter
//!   weekends) at 75 requests a second on average: about a day and a half of log per GiB,
//!   three days for 4 GiB, two weeks for 20 GiB.
//! - `METHOD` is mostly `GET`, some `HEAD` (no body: `BYTES` is `-`) and `POST` (mostly
//!   the spam and exploit probes); the protocol is `HTTP/1.1`, sometimes `HTTP/1.0`.
//! - `URI`: the feed `/ongoing/ongoing.atom` takes about 28 % of requests and the ten most
//!   requested URIs about 57 %; about half of all requests are articles,
//!   `/ongoing/When/200x/YYYY/MM/DD/Title-Words` (matching
//!   `^/ongoing/When/\d\d\dx/\d\d\d\d/\d\d/\d\d/[^ .]+$`), with the newest ones the most
//!   read and thousands in the tail; the rest are the old RSS feed (redirected), style
//!   sheets, the front page, `/favicon.ico`, `/robots.txt`, images, archive and category
//!   pages (some with query strings), and 404-prone probes and typos (`/wp-login.php`,
//!   `/ongoing/when/...`, `....html`).
//! - `STATUS`: 200 / 304 / 301 / 404 about 62 / 25 / 8.5 / 2.8 %, the rest (1.7 %) 302,
//!   206, 500, 403, 503, 400, 416, 410, 414. Each kind of URI has its own mix (the feed is
//!   half conditional GETs answered 304; the RSS feed redirects; probes mostly 404), and
//!   the mixes add up to those totals. A redirected article is requested with a trailing
//!   `/`, a redirected page without one.
//! - `BYTES`: `-` for 304, `HEAD` and 416; each URI's own size for 200 (articles
//!   log-normal around 46 KB, so the median 200 is near 50 KB; the feed about 180 KB),
//!   occasionally cut short; Apache's error-page sizes for redirects and errors.
//! - `REFERRER`: `-` for about 57 % (almost all feed polls, most robots), else the site
//!   itself (`http://www.tbray.org/ongoing/...`, the page that embeds an image or style
//!   sheet), a search engine (`http://www.google.com/search?q=...`) or another site.
//! - `USER-AGENT`: drawn from pools of period browsers, crawlers and feed readers; some
//!   contain quotes, escaped as Apache writes them (`\"`).
//!
//! With [`LogGenerator::damaged`] (`swath gen log --damaged`), about 0.1 % of lines are
//! malformed, for testing what a reader does with them: lines cut short (fewer than 11
//! whitespace-separated fields), lines of binary garbage, empty lines, lines ending in
//! CR LF, and (rarely) lines several KB long (a probe with a padded URI, refused with
//! 414). Without it (the default) every line is a well-formed text line, as a user who
//! greps a generated log expects (binary garbage makes GNU grep say `binary file
//! matches`). The ordinary lines are drawn alike either way. Lines average about 220
//! bytes.
//!
//! The figures above live in the named constants below, each citing its target.
//!
//! # Exact size, reproducibility, parallelism
//! The log is built in independently seeded chunks of 1 MiB (the last chunk takes the
//! remainder, so it is 1 to 2 MiB), each a whole number of lines: lines are added while a
//! reserve is left, then one line is fitted to the exact room left by padding or cutting
//! its user agent. A log under 82 bytes (too small for a whole line) is one cut line
//! (`"\n"` for one byte). The same seed and size give the same bytes on every machine and
//! thread count, and every chunk's time span is derived from its offset, so chunks written
//! in parallel still join into a log whose time stamps never decrease.

use std::path::Path;

use rand::RngCore;
use swath_engine::EngineError;

use super::{rng_for, CHUNK};
use sample::{below, chance, log_normal, mix, unit, zipf_weights, Alias, Rng, Weighted};

mod sample;

// ---------------------------------------------------------------------------------------
// Time.

/// The first day of the log (local time; a Monday). October 2007 is the month of the
/// Wide Finder sample line `[10/Oct/2007:13:55:36 -0700]`.
const START_DATE: (i64, u32, u32) = (2007, 10, 1);
/// The server's zone: Vancouver on daylight time, as in the Wide Finder sample. The log
/// stays within daylight time (which ended on 4 November 2007) up to about 45 GiB.
const UTC_OFFSET: &[u8] = b"-0700";
/// Mean requests per second over a week: about 6.5 million lines (1.4 GB) a day, so a
/// 4 GiB log covers about three days.
const MEAN_REQUESTS_PER_SECOND: f64 = 75.0;
/// The line length the clock assumes when it turns a byte offset into a time (the target
/// mean line length: about 220 bytes).
const MEAN_LINE_BYTES: f64 = 220.0;
/// Relative traffic by local hour: feed pollers keep nights at about half the afternoon
/// peak, when both American coasts and Europe's evening are awake.
const HOUR_WEIGHTS: [f64; 24] = [
    0.80, 0.72, 0.66, 0.62, 0.60, 0.64, 0.74, 0.88, 1.02, 1.12, 1.18, 1.20, 1.20, 1.20, 1.18, 1.14,
    1.10, 1.06, 1.02, 1.00, 0.98, 0.95, 0.90, 0.85,
];
/// Relative traffic by weekday, Monday first: weekends about a fifth quieter.
const WEEKDAY_WEIGHTS: [f64; 7] = [1.00, 1.03, 1.03, 1.01, 0.95, 0.80, 0.82];

// ---------------------------------------------------------------------------------------
// URIs: percentages of all requests.

/// URI classes. Each has its own status, client and referrer mix ([`PROFILES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// The Atom feed.
    Feed,
    /// The retired RSS feed, redirected to the Atom one.
    OldFeed,
    /// `/ongoing/When/200x/YYYY/MM/DD/Title`.
    Article,
    /// `/ongoing/`.
    Front,
    /// Style sheet and script.
    Style,
    /// `/favicon.ico`.
    Icon,
    /// `/robots.txt`.
    Robots,
    /// Pictures.
    Image,
    /// Archive and category pages.
    Page,
    /// Exploit probes and mistyped URIs, made up per request.
    Junk,
}

const CLASSES: usize = 10;

/// The site's fixed URIs: path, class, percent of all requests, body bytes. The feed is the
/// top URI (target: about 28 %); with the three hottest articles these make the top ten
/// (target: about 57 %).
const FIXED_URIS: &[(&str, Class, f64, u32)] = &[
    ("/ongoing/ongoing.atom", Class::Feed, 28.0, 183_212),
    ("/ongoing/ongoing.rss", Class::OldFeed, 3.4, 0),
    ("/ongoing/serif.css", Class::Style, 3.0, 5_432),
    ("/ongoing/", Class::Front, 2.6, 96_014),
    ("/ongoing/ongoing.js", Class::Style, 2.4, 3_078),
    ("/favicon.ico", Class::Icon, 2.2, 1_406),
    ("/robots.txt", Class::Robots, 1.6, 97),
    ("/ongoing/Feed.png", Class::Image, 1.2, 1_021),
];
/// All article requests, percent (target: about half).
const ARTICLE_SHARE: f64 = 48.5;
/// The newest articles, hottest first, percent of all requests; the first three make the
/// top ten (a redirected request, with a trailing `/`, counts as another URI).
const HOT_ARTICLES: [f64; 8] = [7.8, 5.0, 2.5, 1.2, 0.9, 0.7, 0.6, 0.5];
/// Older articles: thousands, sharing what the hot ones leave with Zipf weights
/// `rank^-ARTICLE_ZIPF` (the first of them about 1.1 %).
const TAIL_ARTICLES: usize = 3000;
/// Zipf exponent of the article tail.
const ARTICLE_ZIPF: f64 = 0.75;
/// Median body of an article page, bytes, with the spread of its logarithm: the median
/// 200 response overall comes out near 50 KB (the feed's 200s are larger).
const ARTICLE_BYTES: (f64, f64) = (46_000.0, 0.6);
/// The hot articles' sizes spread less, so that the few of them that serve a third of the
/// 200s do not move that median far from one seed to another.
const HOT_ARTICLE_BYTES: (f64, f64) = (46_000.0, 0.2);
/// Pictures other than the feed icon: percent of requests, count, Zipf exponent,
/// median bytes and spread.
const IMAGE_SHARE: f64 = 3.0;
const IMAGES: usize = 1500;
const IMAGE_ZIPF: f64 = 1.0;
const IMAGE_BYTES: (f64, f64) = (28_000.0, 0.9);
/// Archive and category pages: percent of requests, count, Zipf exponent, bytes; a share
/// of them carry a query string.
const PAGE_SHARE: f64 = 2.1;
const PAGES: usize = 400;
const PAGE_ZIPF: f64 = 0.9;
const PAGE_BYTES: (f64, f64) = (30_000.0, 0.5);
const PAGE_QUERY: f64 = 0.25;
/// Probes and typos, percent of requests (most of the 2.8 % of 404s).
const JUNK_SHARE: f64 = 2.0;
/// Of the junk, the share that mistypes an article URI (the rest are fixed probes).
const JUNK_TYPO: f64 = 0.45;
/// A 200 response cut short by the client.
const ABORTED: f64 = 0.015;

/// Status mixes per class, percent. Weighted by the class shares they give 200 / 304 /
/// 301 / 404 = 62 / 25 / 8.5 / 2.8 % and 1.7 % for the rest (checked by a test).
const FEED_STATUS: &[(u16, f64)] = &[
    (200, 49.6),
    (304, 50.0),
    (206, 0.1),
    (500, 0.1),
    (503, 0.1),
    (400, 0.1),
];
const OLD_FEED_STATUS: &[(u16, f64)] = &[(301, 98.5), (500, 0.5), (503, 0.5), (400, 0.5)];
const ARTICLE_STATUS: &[(u16, f64)] = &[
    (200, 77.6),
    (304, 9.4),
    (301, 9.2),
    (404, 1.6),
    (206, 0.6),
    (302, 0.5),
    (500, 0.4),
    (403, 0.3),
    (503, 0.2),
    (400, 0.1),
    (416, 0.1),
];
const FRONT_STATUS: &[(u16, f64)] = &[(200, 62.0), (304, 36.0), (302, 1.0), (500, 0.5), (503, 0.5)];
const STYLE_STATUS: &[(u16, f64)] = &[(200, 38.0), (304, 62.0)];
const ICON_STATUS: &[(u16, f64)] = &[(200, 60.0), (304, 32.0), (404, 8.0)];
const ROBOTS_STATUS: &[(u16, f64)] = &[(200, 92.0), (304, 8.0)];
const IMAGE_STATUS: &[(u16, f64)] = &[(200, 66.0), (304, 32.0), (206, 1.5), (404, 0.5)];
const PAGE_STATUS: &[(u16, f64)] = &[
    (200, 55.0),
    (301, 30.0),
    (304, 6.0),
    (302, 5.0),
    (404, 3.0),
    (403, 1.0),
];
const JUNK_STATUS: &[(u16, f64)] = &[
    (404, 88.0),
    (403, 5.0),
    (400, 2.0),
    (301, 2.0),
    (302, 1.0),
    (500, 1.0),
    (410, 1.0),
];

/// How one class of URI is requested.
struct Profile {
    status: &'static [(u16, f64)],
    /// Probability that one of the heavy clients (crawlers, pollers, proxies) asks.
    heavy_client: f64,
    /// Probability of the referrer `-`. Weighted by the class shares: about 57 %.
    no_referrer: f64,
    /// Otherwise, relative weights of the site itself, a search engine, another site.
    referrers: [f64; 3],
}

const PAGE_REFERRERS: [f64; 3] = [25.0, 45.0, 30.0];
const EMBEDDED_REFERRERS: [f64; 3] = [90.0, 3.0, 7.0];
const POLL_REFERRERS: [f64; 3] = [30.0, 10.0, 60.0];

/// Indexed by `Class as usize`.
const PROFILES: [Profile; CLASSES] = [
    // Feed: pollers send no referrer.
    Profile {
        status: FEED_STATUS,
        heavy_client: 0.40,
        no_referrer: 0.96,
        referrers: POLL_REFERRERS,
    },
    Profile {
        status: OLD_FEED_STATUS,
        heavy_client: 0.40,
        no_referrer: 0.96,
        referrers: POLL_REFERRERS,
    },
    Profile {
        status: ARTICLE_STATUS,
        heavy_client: 0.10,
        no_referrer: 0.38,
        referrers: PAGE_REFERRERS,
    },
    Profile {
        status: FRONT_STATUS,
        heavy_client: 0.10,
        no_referrer: 0.50,
        referrers: PAGE_REFERRERS,
    },
    Profile {
        status: STYLE_STATUS,
        heavy_client: 0.10,
        no_referrer: 0.15,
        referrers: EMBEDDED_REFERRERS,
    },
    Profile {
        status: ICON_STATUS,
        heavy_client: 0.10,
        no_referrer: 0.60,
        referrers: EMBEDDED_REFERRERS,
    },
    Profile {
        status: ROBOTS_STATUS,
        heavy_client: 0.60,
        no_referrer: 1.00,
        referrers: POLL_REFERRERS,
    },
    Profile {
        status: IMAGE_STATUS,
        heavy_client: 0.10,
        no_referrer: 0.20,
        referrers: EMBEDDED_REFERRERS,
    },
    Profile {
        status: PAGE_STATUS,
        heavy_client: 0.10,
        no_referrer: 0.50,
        referrers: PAGE_REFERRERS,
    },
    Profile {
        status: JUNK_STATUS,
        heavy_client: 0.05,
        no_referrer: 0.80,
        referrers: POLL_REFERRERS,
    },
];

/// Methods for ordinary URIs: mostly GET, about 1.4 % HEAD (link checkers, pollers).
const METHODS: &[(&str, f64)] = &[("GET", 98.4), ("HEAD", 1.4), ("POST", 0.2)];
/// Methods of the probes: comment spam and exploit attempts POST.
const JUNK_METHODS: &[(&str, f64)] = &[("GET", 65.0), ("POST", 30.0), ("HEAD", 5.0)];
/// Share of requests made with HTTP/1.0 (robots, proxies, scripts).
const HTTP_1_0: f64 = 0.12;

/// Fixed probes of the kind every public server sees.
const PROBES: &[&str] = &[
    "/wp-login.php",
    "/wp-admin/",
    "/wp-admin/admin-ajax.php",
    "/xmlrpc.php",
    "/blog/wp-login.php",
    "/phpmyadmin/index.php",
    "/phpMyAdmin/scripts/setup.php",
    "/admin/",
    "/cgi-bin/awstats.pl",
    "/_vti_bin/owssvr.dll?UL=1&ACT=4&BUILD=6551&STRMVER=4&CAPREQ=0",
    "/MSOffice/cltreq.asp?UL=1&ACT=4&BUILD=6551&STRMVER=4&CAPREQ=0",
    "/scripts/..%255c../winnt/system32/cmd.exe?/c+dir",
    "/ongoing/atom.xml",
    "/ongoing/index.rss",
    "/ongoing/feed/",
    "/ongoing/ongoing.atom.xml",
    "/ongoign/",
    "/rss",
    "/sitemap.xml",
    "/ongoing/When/200x/",
    "/apple-touch-icon.png",
    "/ongoing/What/Technology/Java/index.html",
];

// ---------------------------------------------------------------------------------------
// Clients and user agents.

/// Share of addresses among the long-tail clients (the rest are resolved host names):
/// IPv4 80 %, IPv6 8 % (out of 256), names 12 %.
const TAIL_IPV4: u64 = 205;
const TAIL_IPV6: u64 = 20;
/// Long-tail clients, drawn with weights `1 / (rank + TAIL_OFFSET)`: the busiest of them
/// makes about 0.2 % of the tail's requests.
const TAIL_CLIENTS: f64 = 2_097_152.0;
const TAIL_OFFSET: f64 = 20.0;

/// Heavy feed pollers: host, user agent, relative weight. Together they make
/// `Profile::heavy_client` of feed requests (about 40 %: a few percent of all lines each).
const FEED_POLLERS: &[(&str, &str, f64)] = &[
    ("72.14.199.17", "Feedfetcher-Google; (+http://www.google.com/feedfetcher.html; 1834 subscribers; feed-id=9817238719875619842)", 30.0),
    ("65.214.44.29", "Bloglines/3.1 (http://www.bloglines.com; 1283 subscribers)", 22.0),
    ("208.111.154.16", "NewsGatorOnline/2.0 (http://www.newsgator.com; 412 subscribers)", 12.0),
    ("193.189.143.80", "Netvibes (http://www.netvibes.com/; 213 subscribers)", 8.0),
    ("proxy.example.net", "Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.8.1.8) Gecko/20071008 Firefox/2.0.0.8", 5.0),
    ("rss.livedoor.com", "livedoor FeedFetcher/0.01 (http://reader.livedoor.com/; 38 subscribers)", 4.0),
    ("2001:4f8:3:ba::7", "Liferea/1.4.4 (Linux; en_US.UTF-8; http://liferea.sf.net/)", 3.0),
    ("64.71.145.21", "Rojo 1.0 (http://www.rojo.com/corporate/help/agg/; Aggregating on behalf of 45 subscriber(s) online at http://www.rojo.com/?feed-id=1234567)", 3.0),
    ("crawl-66-249-72-173.googlebot.com", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 3.0),
    ("llf320031.crawl.yahoo.net", "Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", 2.0),
];
/// Heavy clients of everything else: crawlers and proxies.
const HEAVY_CLIENTS: &[(&str, &str, f64)] = &[
    ("crawl-66-249-65-1.googlebot.com", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 30.0),
    ("llf320031.crawl.yahoo.net", "Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", 20.0),
    ("msnbot-65-55-208-72.search.msn.com", "msnbot/1.0 (+http://search.msn.com/msnbot.htm)", 12.0),
    ("proxy.example.net", "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1; .NET CLR 1.1.4322; .NET CLR 2.0.50727)", 10.0),
    ("cache-ntc-ab04.proxy.aol.com", "Mozilla/4.0 (compatible; MSIE 7.0; AOL 9.0; Windows NT 5.1; .NET CLR 1.1.4322)", 8.0),
    ("brm-proxy1.sun.com", "Mozilla/5.0 (X11; U; SunOS i86pc; en-US; rv:1.8.1.7) Gecko/20070914 Firefox/2.0.0.7", 6.0),
    ("crawl-66-249-65-12.googlebot.com", "Googlebot-Image/1.0", 4.0),
    ("74.6.8.111", "Mozilla/2.0 (compatible; Ask Jeeves/Teoma; +http://about.ask.com/en/docs/about/webmasters.shtml)", 4.0),
    ("2001:470:1f05:1a5::2", "Mozilla/5.0 (X11; U; Linux x86_64; en-US; rv:1.8.1.7) Gecko/20070914 Firefox/2.0.0.7", 3.0),
    ("38.99.13.124", "Mozilla/5.0 (Twiceler-0.9 http://www.cuil.com/twiceler/robot.html)", 3.0),
];

/// What long-tail clients use for pages: period browsers, a few robots and scripts, a
/// user agent with quotes (escaped as Apache writes them) and none at all (`-`).
const BROWSER_AGENTS: &[(&str, f64)] = &[
    ("Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.8.1.8) Gecko/20071008 Firefox/2.0.0.8", 16.0),
    ("Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1; .NET CLR 1.1.4322; .NET CLR 2.0.50727)", 10.0),
    ("Mozilla/5.0 (Macintosh; U; Intel Mac OS X; en-US; rv:1.8.1.8) Gecko/20071008 Firefox/2.0.0.8", 8.0),
    ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1; .NET CLR 1.1.4322)", 7.0),
    ("Mozilla/5.0 (Macintosh; U; Intel Mac OS X 10_5; en-us) AppleWebKit/523.10.3 (KHTML, like Gecko) Version/3.0.4 Safari/523.10", 6.0),
    ("Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.8.1.8) Gecko/20071004 Ubuntu/7.10 (gutsy) Firefox/2.0.0.8", 5.0),
    ("Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0; SLCC1; .NET CLR 2.0.50727; Media Center PC 5.0; .NET CLR 3.0.04506)", 3.0),
    ("Mozilla/5.0 (Macintosh; U; PPC Mac OS X; en) AppleWebKit/419.3 (KHTML, like Gecko) Safari/419.3", 3.0),
    ("Mozilla/5.0 (X11; U; Linux x86_64; en-US; rv:1.8.1.7) Gecko/20070914 Firefox/2.0.0.7", 2.0),
    ("Opera/9.23 (Windows NT 5.1; U; en)", 2.0),
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 2.0),
    ("Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", 2.0),
    ("msnbot/1.0 (+http://search.msn.com/msnbot.htm)", 1.5),
    ("Mozilla/5.0 (compatible; Konqueror/3.5; Linux) KHTML/3.5.7 (like Gecko)", 1.0),
    ("Mozilla/5.0 (iPhone; U; CPU iPhone OS 1_1_1 like Mac OS X; en) AppleWebKit/420.1 (KHTML, like Gecko) Version/3.0 Mobile/3A110a Safari/419.3", 1.0),
    ("Mozilla/5.0 (Windows; U; Windows NT 6.0; en-US; rv:1.9a8) Gecko/2007100619 GranParadiso/3.0a8", 0.8),
    (r#"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.0; \"Acme Corp Build 7\"; .NET CLR 1.0.3705)"#, 0.5),
    (r#"Mozilla/5.0 (compatible; \"SiteSucker\" crawler; +http://example.org/bot)"#, 0.3),
    ("Java/1.6.0_03", 0.5),
    ("Python-urllib/2.5", 0.5),
    ("libwww-perl/5.808", 0.5),
    ("Wget/1.10.2", 0.4),
    ("curl/7.16.4 (i486-pc-linux-gnu) libcurl/7.16.4 OpenSSL/0.9.8e zlib/1.2.3.3 libidn/1.0", 0.4),
    ("-", 0.5),
];
/// What long-tail clients use for feeds.
const FEED_AGENTS: &[(&str, f64)] = &[
    ("Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.8.1.8) Gecko/20071008 Firefox/2.0.0.8", 14.0),
    ("NetNewsWire/3.0 (Mac OS X; http://www.newsgator.com/Individuals/NetNewsWire/)", 12.0),
    ("FeedDemon/2.5 (http://www.newsgator.com/; Microsoft Windows XP)", 8.0),
    ("Apple-PubSub/59", 8.0),
    ("Windows-RSS-Platform/1.0 (MSIE 7.0; Windows NT 5.1)", 8.0),
    ("Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.8.1.6) Gecko/20070728 Thunderbird/2.0.0.6", 4.0),
    ("Liferea/1.4.4 (Linux; en_US.UTF-8; http://liferea.sf.net/)", 3.0),
    ("Akregator/1.2.7; librss/remnants", 3.0),
    ("UniversalFeedParser/4.1 +http://feedparser.org/", 3.0),
    ("Vienna/2.2.1.2210", 2.0),
    ("SharpReader/0.9.7.0 (.NET CLR 1.1.4322.2407; WinNT 5.1.2600.0)", 2.0),
    ("Rome Client (http://tinyurl.com/64t5n) Ver: 0.9", 2.0),
    ("Planet/1.0 +http://www.planetplanet.org UniversalFeedParser/4.1 +http://feedparser.org/", 2.0),
    ("Bloglines/3.1 (http://www.bloglines.com; 3 subscribers)", 1.0),
    ("Tiny Tiny RSS/1.2.14 (http://tt-rss.spb.ru/)", 1.0),
    (r#"Mozilla/5.0 (compatible; \"Reader\" FeedReader/3.11; +http://www.feedreader.com/)"#, 1.0),
    ("Zhuaxia.com 1 Subscribers", 0.5),
];
/// A chunk's last line that needs a longer user agent than its client's gets a bloated
/// Internet Explorer one, as add-ons made them: this start, then as many of
/// [`AGENT_TOKENS`] as fit, then `)`.
const BLOATED_AGENT: &[u8] = b"Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1";
const AGENT_TOKENS: &[u8] =
    b"; GTB5; .NET CLR 1.1.4322; .NET CLR 2.0.50727; .NET CLR 3.0.04506.30; \
    .NET CLR 3.0.04506.648; InfoPath.1; InfoPath.2; MS-RTC LM 8; Media Center PC 5.0; SLCC1; \
    Tablet PC 2.0; FDM; Zune 2.0; OfficeLiveConnector.1.1; OfficeLivePatch.0.0; Alexa Toolbar; \
    AskTB5.2; YPC 3.2.0; SearchToolbar 1.2; MEGAUPLOAD 2.0; Hotbar 4.4.5.0; msn OptimizedIE8";

/// First octets of long-tail IPv4 addresses: publicly routed blocks of 2007.
const FIRST_OCTETS: &[u8] = &[
    24, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 74, 75, 76, 77, 78, 79, 80, 81,
    82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 121, 122, 123, 124, 125, 128, 129, 130, 131, 132, 134,
    137, 138, 139, 140, 141, 142, 143, 144, 146, 147, 149, 150, 151, 152, 155, 160, 161, 162, 163,
    164, 165, 166, 167, 168, 169, 170, 171, 173, 193, 194, 195, 196, 198, 199, 200, 201, 202, 203,
    204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 216, 217, 218, 219, 220, 221, 222,
];
/// Reverse-DNS names of long-tail clients: text before the address, separator between its
/// octets, text after, and whether the octets come reversed.
const HOST_PATTERNS: &[(&str, &str, &str, bool)] = &[
    ("c-", "-", ".hsd1.wa.comcast.net", false),
    ("c-", "-", ".hsd1.ca.comcast.net", false),
    ("c-", "-", ".hsd1.ma.comcast.net", false),
    ("pool-", "-", ".nycmny.fios.verizon.net", false),
    ("pool-", "-", ".bstnma.fios.verizon.net", false),
    ("adsl-", "-", ".dsl.pltn13.pacbell.net", false),
    ("adsl-", "-", ".dsl.snfc21.pacbell.net", false),
    ("cpe-", "-", ".socal.res.rr.com", false),
    ("cpe-", "-", ".nyc.res.rr.com", false),
    ("", ".", ".bc.hsia.telus.net", true),
    ("d", "-", ".home1.cgocable.net", true),
    ("host", "-", ".static.example.co.uk", true),
    ("dhcp-", "-", ".cs.berkeley.edu", false),
    ("proxy-", "-", ".ibm.com", false),
];

// ---------------------------------------------------------------------------------------
// Referrers and words.

/// Search engines: text before the query words, after them, relative weight.
const SEARCHES: &[(&str, &str, f64)] = &[
    (
        "http://www.google.com/search?q=",
        "&ie=utf-8&oe=utf-8&aq=t&rls=org.mozilla:en-US:official&client=firefox-a",
        25.0,
    ),
    (
        "http://www.google.com/search?hl=en&q=",
        "&btnG=Google+Search",
        35.0,
    ),
    ("http://www.google.co.uk/search?hl=en&q=", "&meta=", 6.0),
    ("http://www.google.ca/search?q=", "&ie=UTF-8&oe=UTF-8", 5.0),
    (
        "http://www.google.de/search?hl=de&q=",
        "&btnG=Suche&meta=",
        4.0,
    ),
    (
        "http://search.yahoo.com/search?p=",
        "&fr=yfp-t-501&toggle=1&cop=mss&ei=UTF-8",
        12.0,
    ),
    ("http://search.live.com/results.aspx?q=", "&form=QBRE", 8.0),
    ("http://search.msn.com/results.aspx?q=", "&FORM=MSNH", 2.0),
    ("http://www.ask.com/web?q=", "&qsrc=0&o=0&l=dir", 3.0),
];
/// Other sites: text before a number (none if the digit count is 0), digits, text after,
/// relative weight.
const SITES: &[(&str, u32, &str, f64)] = &[
    (
        "http://www.bloglines.com/myblogs_display?sub=",
        5,
        "&site=1203",
        12.0,
    ),
    ("http://www.google.com/reader/view/", 0, "", 10.0),
    ("http://programming.reddit.com/info/", 5, "/comments", 8.0),
    ("http://news.ycombinator.com/item?id=", 5, "", 6.0),
    ("http://planet.intertwingly.net/", 0, "", 8.0),
    ("http://www.techmeme.com/071009/p", 2, "", 5.0),
    ("http://daringfireball.net/", 0, "", 5.0),
    ("http://del.icio.us/popular/", 0, "", 4.0),
    ("http://www.dzone.com/links/index.html", 0, "", 3.0),
    ("http://weblogs.java.net/blog/", 0, "", 3.0),
    ("http://planetsun.org/", 0, "", 3.0),
    ("http://blogs.sun.com/", 0, "", 4.0),
    ("http://www.netvibes.com/", 0, "", 3.0),
    (
        "http://www.stumbleupon.com/refer.php?url=http%3A%2F%2Fwww.tbray.org%2Fongoing%2F",
        0,
        "",
        2.0,
    ),
    ("http://www.facebook.com/home.php", 0, "", 2.0),
    ("http://www.lazycoder.com/weblog/", 0, "", 2.0),
];
/// The site itself, before the path of a referring page.
const SELF_REFERRER: &[u8] = b"http://www.tbray.org";

/// Words for titles, picture names and search queries, separated by spaces.
const WORDS: &str = "Wide Finder Erlang Ruby Rails Atom Protocol Publishing Java Sun Solaris ZFS \
     Niagara Photo Canon Vancouver Concurrency REST JSON XML Web Search Blog Open Source Data Mac \
     Linux Music Book Review Garden Flowers Camera Lens Parallel Threads Cores Disk \
     Storage Network Browser Firefox Safari Python Perl Scala Groovy JRuby Closures \
     Patents Standards OOXML ODF Office Unicode Text Regex Performance Benchmark Memory \
     Cache Server Apache Log Files Feed Syndication Identity OpenID Privacy Security \
     Mobile Phone iPhone Google Microsoft Yahoo Amazon Startup Business Money Conference \
     OSCON JavaOne Keynote Interview Travel Australia Tokyo London Family Kids Hockey \
     Coffee Wine Dinner Spring Autumn Rain Snow Mountain Ocean Island Boats Design \
     Language Compiler Virtual Machine Dynamic Typing Testing Agile Process Tools Editor \
     Emacs Version Control Mercurial Distributed Cloud Grid Cluster Hardware Software \
     Update Notes Questions Answers Why How On The More Another Big Small Fast Slow \
     Simple Hard Early Late First Last Good Bad";
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

// ---------------------------------------------------------------------------------------
// Malformed lines and the fit of a chunk's last line.

/// Share of malformed lines (target: about 0.1 %).
const MALFORMED: f64 = 0.001;
/// The kinds of malformed line, with relative weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Malformed {
    /// An ordinary line cut before its 11th field.
    Truncated,
    /// An ordinary line ending in CR LF.
    CrLf,
    /// Nothing but the newline.
    Empty,
    /// 16 to 256 bytes of binary, with no white space.
    Garbage,
    /// A probe with a URI of 2 to 6 KB (status 414).
    Long,
}
const MALFORMED_KINDS: &[(Malformed, f64)] = &[
    (Malformed::Truncated, 40.0),
    (Malformed::CrLf, 25.0),
    (Malformed::Empty, 15.0),
    (Malformed::Garbage, 15.0),
    (Malformed::Long, 5.0),
];
/// The end of the [`Malformed::Long`] probe's URI.
const LONG_PROBE_TAIL: &[u8] = b"%u9090%u6858%ucbd3%u7801%u9090%u6858%ucbd3%u7801%u9090%u8190%u00c3%u0003%u8b00%u531b%u53ff%u0078%u0000%u00=a";
/// Room kept free at the end of a chunk for the line fitted to the exact size; above the
/// shortest line that can be fitted (about 80 bytes, checked by a test).
const RESERVE: usize = 192;
/// A line longer than this that does not fit is replaced by another rather than ending
/// the chunk early (ordinary lines are far shorter; only [`Malformed::Long`] lines are).
const LONGEST_ORDINARY: usize = 1024;

// ---------------------------------------------------------------------------------------
// Writing numbers and dates.

fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn push_2(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(&[b'0' + (n / 10) as u8, b'0' + (n % 10) as u8]);
}

fn push_hex(out: &mut Vec<u8>, n: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut started = false;
    for shift in [12, 8, 4, 0] {
        let d = (n >> shift) & 15;
        if d != 0 || started || shift == 0 {
            out.push(HEX[d as usize]);
            started = true;
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number from [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Writes `DD/Mon/YYYY:HH:MM:SS -0700`, remembering the date part between calls.
struct Clock {
    day: i64,
    date: Vec<u8>,
}

impl Clock {
    fn new() -> Self {
        Clock {
            day: i64::MIN,
            date: Vec::with_capacity(11),
        }
    }

    /// `local` is in seconds since 1970-01-01 00:00 local time.
    fn write(&mut self, local: i64, out: &mut Vec<u8>) {
        let day = local.div_euclid(86_400);
        if day != self.day {
            let (y, m, d) = civil_from_days(day);
            self.date.clear();
            push_2(&mut self.date, d);
            self.date.push(b'/');
            self.date.extend_from_slice(MONTHS[m as usize - 1]);
            self.date.push(b'/');
            push_u64(&mut self.date, y as u64);
            self.day = day;
        }
        let s = local.rem_euclid(86_400) as u32;
        out.extend_from_slice(&self.date);
        out.push(b':');
        push_2(out, s / 3600);
        out.push(b':');
        push_2(out, s / 60 % 60);
        out.push(b':');
        push_2(out, s % 60);
        out.push(b' ');
        out.extend_from_slice(UTC_OFFSET);
    }
}

/// Expected requests per second for each hour of the week, from the log's first hour.
struct Traffic {
    hourly: [f64; 168],
    weekly: f64,
}

impl Traffic {
    fn new(start_day: i64) -> Self {
        // 1970-01-01 was a Thursday: Monday is 0.
        let first_weekday = (start_day + 3).rem_euclid(7) as usize;
        let mean: f64 = WEEKDAY_WEIGHTS
            .iter()
            .map(|d| d * HOUR_WEIGHTS.iter().sum::<f64>())
            .sum::<f64>()
            / 168.0;
        let mut hourly = [0.0; 168];
        for (h, rate) in hourly.iter_mut().enumerate() {
            let day = (first_weekday + h / 24) % 7;
            *rate = MEAN_REQUESTS_PER_SECOND * WEEKDAY_WEIGHTS[day] * HOUR_WEIGHTS[h % 24] / mean;
        }
        let weekly = hourly.iter().sum::<f64>() * 3600.0;
        Traffic { hourly, weekly }
    }

    /// Seconds from the start of the log until `requests` requests are expected.
    fn seconds_until(&self, requests: f64) -> f64 {
        let weeks = (requests / self.weekly).floor();
        let mut rest = requests - weeks * self.weekly;
        let mut t = weeks * 604_800.0;
        for &rate in &self.hourly {
            let in_hour = rate * 3600.0;
            if rest < in_hour {
                return t + rest / rate;
            }
            rest -= in_hour;
            t += 3600.0;
        }
        t
    }

    /// Local seconds of byte `offset` of the log.
    fn time_at(&self, start: i64, offset: u64) -> f64 {
        start as f64 + self.seconds_until(offset as f64 / MEAN_LINE_BYTES)
    }
}

// ---------------------------------------------------------------------------------------
// The generator.

struct Uri {
    path: Box<[u8]>,
    class: Class,
    bytes: u32,
}

/// The site's URIs and how often each is requested, as [`LogGenerator::new`] builds them.
struct Site {
    uris: Vec<Uri>,
    /// The request weight of each URI (percent of all requests).
    weights: Vec<f64>,
}

impl Site {
    /// Adds a URI of `class` with a body of `bytes`, requested with weight `w`.
    fn add(&mut self, path: Vec<u8>, class: Class, bytes: u32, w: f64) {
        self.uris.push(Uri {
            path: path.into_boxed_slice(),
            class,
            bytes,
        });
        self.weights.push(w);
    }

    /// Adds the articles, hot ones first, each dated between `first_day` and `start_day`
    /// (day numbers) and titled from `words`; returns their indexes into `uris` and their
    /// weights.
    fn add_articles(
        &mut self,
        rng: &mut Rng,
        words: &[&str],
        first_day: i64,
        start_day: i64,
    ) -> (Vec<u32>, Vec<f64>) {
        let hot_total: f64 = HOT_ARTICLES.iter().sum();
        let mut article_weights: Vec<f64> = HOT_ARTICLES.to_vec();
        article_weights.extend(zipf_weights(
            TAIL_ARTICLES,
            ARTICLE_ZIPF,
            ARTICLE_SHARE - hot_total,
        ));
        let mut articles = Vec::with_capacity(article_weights.len());
        for (i, &w) in article_weights.iter().enumerate() {
            let day = if i < HOT_ARTICLES.len() {
                // The hottest are the newest: one to two weeks back, hottest last.
                start_day - 1 - (i as i64 * 3) / 2
            } else {
                first_day + below(rng, (start_day - 14 - first_day) as usize) as i64
            };
            let mut path = article_dir(day);
            path.push(b'/');
            title(rng, words, &mut path);
            articles.push(self.uris.len() as u32);
            let bytes = if i < HOT_ARTICLES.len() {
                log_normal(rng, HOT_ARTICLE_BYTES)
            } else {
                log_normal(rng, ARTICLE_BYTES)
            };
            self.add(path, Class::Article, bytes, w);
        }
        (articles, article_weights)
    }

    /// Adds the pictures: named from `words` under `/ongoing/pics/`, or numbered in the
    /// directory of one of the `articles`.
    fn add_images(&mut self, rng: &mut Rng, words: &[&str], articles: &[u32]) {
        for w in zipf_weights(IMAGES, IMAGE_ZIPF, IMAGE_SHARE) {
            let mut path = Vec::with_capacity(64);
            if chance(rng, 0.5) {
                path.extend_from_slice(b"/ongoing/pics/");
                path.extend(
                    words[below(rng, words.len())]
                        .bytes()
                        .map(|b| b.to_ascii_lowercase()),
                );
                push_u64(&mut path, below(rng, 100) as u64);
                path.extend_from_slice(b".jpg");
            } else {
                let article = &self.uris[articles[below(rng, articles.len())] as usize].path;
                let dir_len = article.iter().rposition(|&b| b == b'/').unwrap_or(0);
                path.extend_from_slice(&article[..dir_len]);
                path.extend_from_slice(b"/IMG_");
                push_u64(&mut path, 1000 + below(rng, 9000) as u64);
                path.extend_from_slice(if chance(rng, 0.7) { b".jpg" } else { b".png" });
            }
            let bytes = log_normal(rng, IMAGE_BYTES);
            self.add(path, Class::Image, bytes, w);
        }
    }

    /// Adds the archive and category pages: months, years and days between `first_day`
    /// and `start_day`, and categories named from `words`.
    fn add_pages(&mut self, rng: &mut Rng, words: &[&str], first_day: i64, start_day: i64) {
        for w in zipf_weights(PAGES, PAGE_ZIPF, PAGE_SHARE) {
            let mut path = Vec::with_capacity(48);
            match below(rng, 4) {
                0 => {
                    let mut dir = article_dir(
                        first_day + below(rng, (start_day - first_day) as usize) as i64,
                    );
                    dir.truncate(dir.len() - 3); // the month: /ongoing/When/200x/YYYY/MM
                    path.extend_from_slice(&dir);
                }
                1 => {
                    path.extend_from_slice(b"/ongoing/When/200x/");
                    push_u64(&mut path, 2003 + below(rng, 5) as u64);
                }
                2 => {
                    // A day's page: /ongoing/When/200x/YYYY/MM/DD/
                    let dir = article_dir(
                        first_day + below(rng, (start_day - first_day) as usize) as i64,
                    );
                    path.extend_from_slice(&dir);
                }
                _ => {
                    path.extend_from_slice(b"/ongoing/What/");
                    path.extend_from_slice(words[below(rng, 40)].as_bytes());
                    if chance(rng, 0.5) {
                        path.push(b'/');
                        path.extend_from_slice(words[below(rng, words.len())].as_bytes());
                    }
                }
            }
            path.push(b'/');
            let bytes = log_normal(rng, PAGE_BYTES);
            self.add(path, Class::Page, bytes, w);
        }
    }
}

/// How one URI class is drawn, with its tables ready.
struct ClassTables {
    status: Weighted<u16>,
    heavy_client: f64,
    no_referrer: f64,
    referrers: Weighted<u8>,
}

/// Builds the log of one seed: the site (its articles, pictures and pages) and the tables
/// every chunk draws from. Cheap to share between threads.
pub struct LogGenerator {
    seed: u64,
    uris: Vec<Uri>,
    pick_uri: Alias,
    /// Indexes into `uris` of the articles, and a draw by popularity among them (for
    /// self-referrers and mistyped URIs).
    articles: Vec<u32>,
    pick_article: Alias,
    classes: Vec<ClassTables>,
    words: Vec<&'static str>,
    methods: Weighted<&'static str>,
    junk_methods: Weighted<&'static str>,
    feed_pollers: Weighted<usize>,
    heavy_clients: Weighted<usize>,
    browser_agents: Weighted<&'static str>,
    feed_agents: Weighted<&'static str>,
    searches: Weighted<usize>,
    sites: Weighted<usize>,
    malformed: Weighted<Malformed>,
    /// Whether the malformed lines are written (else an ordinary line stands for each).
    damaged: bool,
    /// Mixed into the long-tail client numbers so that each seed has its own clients.
    client_key: u64,
    start: i64,
    traffic: Traffic,
}

/// What [`LogGenerator::write_head`] leaves for the caller to finish: the user agent.
type Agent = &'static str;

impl LogGenerator {
    /// The site and tables for `seed`.
    pub fn new(seed: u64) -> Self {
        let mut rng = rng_for(seed, 1 << 43);
        let words: Vec<&'static str> = WORDS.split_whitespace().collect();
        let mut site = Site {
            uris: Vec::new(),
            weights: Vec::new(),
        };
        for &(path, class, share, bytes) in FIXED_URIS {
            site.add(path.as_bytes().to_vec(), class, bytes, share);
        }

        let (y, m, d) = START_DATE;
        let start_day = days_from_civil(y, m, d);
        let first_day = days_from_civil(2003, 1, 15);
        let (articles, article_weights) = site.add_articles(&mut rng, &words, first_day, start_day);
        site.add_images(&mut rng, &words, &articles);
        site.add_pages(&mut rng, &words, first_day, start_day);
        site.add(Vec::new(), Class::Junk, 0, JUNK_SHARE);

        let pick_article = Alias::new(&article_weights);
        let classes = PROFILES
            .iter()
            .map(|p| ClassTables {
                status: Weighted::new(p.status.iter().copied()),
                heavy_client: p.heavy_client,
                no_referrer: p.no_referrer,
                referrers: Weighted::new((0u8..).zip(p.referrers)),
            })
            .collect();
        LogGenerator {
            seed,
            pick_uri: Alias::new(&site.weights),
            uris: site.uris,
            articles,
            pick_article,
            classes,
            words,
            methods: Weighted::new(METHODS.iter().copied()),
            junk_methods: Weighted::new(JUNK_METHODS.iter().copied()),
            feed_pollers: Weighted::new(FEED_POLLERS.iter().enumerate().map(|(i, c)| (i, c.2))),
            heavy_clients: Weighted::new(HEAVY_CLIENTS.iter().enumerate().map(|(i, c)| (i, c.2))),
            browser_agents: Weighted::new(BROWSER_AGENTS.iter().copied()),
            feed_agents: Weighted::new(FEED_AGENTS.iter().copied()),
            searches: Weighted::new(SEARCHES.iter().enumerate().map(|(i, s)| (i, s.2))),
            sites: Weighted::new(SITES.iter().enumerate().map(|(i, s)| (i, s.3))),
            malformed: Weighted::new(MALFORMED_KINDS.iter().copied()),
            damaged: false,
            client_key: mix(seed ^ 0x5157_4154_4843_4c49),
            start: start_day * 86_400,
            traffic: Traffic::new(start_day),
        }
    }

    /// The same log with about 0.1 % of its lines malformed (see the module's docs), for
    /// testing readers: `LogGenerator::new(seed).damaged(true)` writes the bytes that
    /// `swath gen log` wrote before the malformed lines became an option.
    pub fn damaged(mut self, on: bool) -> Self {
        self.damaged = on;
        self
    }

    /// Chunk `index` of the log: `len` bytes of whole lines, the last fitted to the exact
    /// size. Every chunk but the last of a log is `CHUNK` bytes and starts at
    /// `index * CHUNK`; the time stamps follow from that offset.
    pub fn chunk(&self, index: u64, len: usize) -> Vec<u8> {
        let mut rng = rng_for(self.seed, (1 << 42) | index);
        let offset = index * CHUNK;
        let t0 = self.traffic.time_at(self.start, offset);
        let span = self.traffic.time_at(self.start, offset + len as u64) - t0;
        let at = |pos: usize| (t0 + span * (pos as f64 / len.max(1) as f64)) as i64;
        let mut clock = Clock::new();
        let mut out = Vec::with_capacity(len + 8 * LONGEST_ORDINARY);
        loop {
            let mark = out.len();
            self.write_line(&mut rng, &mut clock, at(mark), &mut out);
            if out.len() + RESERVE > len {
                let rejected = out.len() - mark;
                out.truncate(mark);
                if rejected <= LONGEST_ORDINARY {
                    break;
                }
            }
        }
        let room = len - out.len();
        self.write_fitted(&mut rng, &mut clock, at(out.len()), room, &mut out);
        debug_assert_eq!(out.len(), len);
        out
    }

    /// Appends one line, now and then a malformed one (when [`LogGenerator::damaged`]).
    fn write_line(&self, rng: &mut Rng, clock: &mut Clock, now: i64, out: &mut Vec<u8>) {
        let kind = if chance(rng, MALFORMED) && self.damaged {
            self.malformed.pick(rng)
        } else {
            let agent = self.write_head(rng, clock, now, out);
            out.extend_from_slice(agent.as_bytes());
            out.extend_from_slice(b"\"\n");
            return;
        };
        let start = out.len();
        match kind {
            Malformed::Truncated => {
                let agent = self.write_head(rng, clock, now, out);
                out.extend_from_slice(agent.as_bytes());
                // Cut before the 10th space: at most 10 fields remain.
                let spaces: Vec<usize> = out[start..]
                    .iter()
                    .enumerate()
                    .filter(|&(_, &b)| b == b' ')
                    .map(|(i, _)| i)
                    .take(10)
                    .collect();
                let limit = spaces.get(9).copied().unwrap_or(out.len() - start);
                let cut = 1 + below(rng, limit.max(2) - 1);
                out.truncate(start + cut);
                out.push(b'\n');
            }
            Malformed::CrLf => {
                let agent = self.write_head(rng, clock, now, out);
                out.extend_from_slice(agent.as_bytes());
                out.extend_from_slice(b"\"\r\n");
            }
            Malformed::Empty => out.push(b'\n'),
            Malformed::Garbage => {
                let n = 16 + below(rng, 241);
                while out.len() < start + n {
                    let b = (rng.next_u64() >> 56) as u8;
                    if !b.is_ascii_whitespace() && b != 0x0b {
                        out.push(b);
                    }
                }
                out.push(b'\n');
            }
            Malformed::Long => {
                // A Code Red style probe with a padded URI, refused as too long.
                let agent = self.write_tail_client(rng, false, out);
                out.extend_from_slice(b" - - [");
                clock.write(now, out);
                out.extend_from_slice(b"] \"GET /default.ida?");
                out.resize(out.len() + 2048 + below(rng, 4096), b'N');
                out.extend_from_slice(LONG_PROBE_TAIL);
                out.extend_from_slice(b" HTTP/1.0\" 414 358 \"-\" \"");
                out.extend_from_slice(agent.as_bytes());
                out.extend_from_slice(b"\"\n");
            }
        }
    }

    /// Appends a valid line of exactly `room` bytes, or for a room too small for one, a line
    /// cut short (a lone newline for one byte).
    fn write_fitted(
        &self,
        rng: &mut Rng,
        clock: &mut Clock,
        now: i64,
        room: usize,
        out: &mut Vec<u8>,
    ) {
        if room == 0 {
            return;
        }
        let start = out.len();
        for _ in 0..8 {
            let agent = self.write_head(rng, clock, now, out);
            let head = out.len() - start;
            if head + 2 <= room {
                write_agent_exact(agent, room - head - 2, out);
                out.extend_from_slice(b"\"\n");
                return;
            }
            out.truncate(start);
        }
        let agent = write_short_head(clock, now, out);
        let head = out.len() - start;
        if head + 2 <= room {
            write_agent_exact(agent, room - head - 2, out);
            out.extend_from_slice(b"\"\n");
        } else {
            out.truncate(start + room - 1);
            out.push(b'\n');
        }
    }

    /// Appends a line up to the opening quote of its user agent; returns the agent.
    fn write_head(&self, rng: &mut Rng, clock: &mut Clock, now: i64, out: &mut Vec<u8>) -> Agent {
        let uri = &self.uris[self.pick_uri.pick(rng)];
        let class = &self.classes[uri.class as usize];
        let feed = matches!(uri.class, Class::Feed | Class::OldFeed);

        let agent = if chance(rng, class.heavy_client) {
            let (host, agent, _) = if feed {
                FEED_POLLERS[self.feed_pollers.pick(rng)]
            } else {
                HEAVY_CLIENTS[self.heavy_clients.pick(rng)]
            };
            out.extend_from_slice(host.as_bytes());
            agent
        } else {
            self.write_tail_client(rng, feed, out)
        };

        out.extend_from_slice(b" - - [");
        clock.write(now, out);
        out.extend_from_slice(b"] \"");
        let method = if uri.class == Class::Junk {
            self.junk_methods.pick(rng)
        } else {
            self.methods.pick(rng)
        };
        out.extend_from_slice(method.as_bytes());
        out.push(b' ');

        let status = class.status.pick(rng);
        let uri_start = out.len();
        match uri.class {
            Class::Junk => self.write_junk_uri(rng, out),
            Class::Article if status == 301 => {
                out.extend_from_slice(&uri.path);
                out.push(b'/');
            }
            Class::Page if status == 301 => out.extend_from_slice(&uri.path[..uri.path.len() - 1]),
            Class::Page if chance(rng, PAGE_QUERY) => {
                out.extend_from_slice(&uri.path);
                out.extend_from_slice(b"?q=");
                self.write_query_words(rng, out);
            }
            _ => out.extend_from_slice(&uri.path),
        }
        let uri_len = (out.len() - uri_start) as u64;
        out.extend_from_slice(if chance(rng, HTTP_1_0) {
            b" HTTP/1.0\" "
        } else {
            b" HTTP/1.1\" "
        });
        push_u64(out, u64::from(status));
        out.push(b' ');

        // Apache's %b: body bytes, `-` for none.
        let bytes = if method == "HEAD" {
            None
        } else {
            match status {
                200 if chance(rng, ABORTED) => Some(below(rng, uri.bytes as usize) as u64),
                200 => Some(u64::from(uri.bytes)),
                206 => Some(1 + below(rng, uri.bytes.max(2) as usize) as u64),
                301 | 302 => Some(233 + 20 + uri_len),
                403 => Some(202 + uri_len),
                404 => Some(209 + uri_len),
                410 => Some(221 + uri_len),
                400 => Some(226),
                414 => Some(358),
                500 => Some(535),
                503 => Some(323),
                _ => None,
            }
        };
        match bytes {
            Some(n) if n > 0 => push_u64(out, n),
            _ => out.push(b'-'),
        }

        out.extend_from_slice(b" \"");
        if !chance(rng, class.no_referrer) {
            let kind = class.referrers.pick(rng);
            self.write_referrer(rng, kind, out);
        } else {
            out.push(b'-');
        }
        out.extend_from_slice(b"\" \"");
        agent
    }

    /// A long-tail client: its address or name, and its user agent.
    fn write_tail_client(&self, rng: &mut Rng, feed: bool, out: &mut Vec<u8>) -> Agent {
        // Weights 1/(rank + q): the inverse of the continuous distribution function.
        let u = unit(rng);
        let ratio = (TAIL_CLIENTS + TAIL_OFFSET) / TAIL_OFFSET;
        let rank = (TAIL_OFFSET * ratio.powf(u) - TAIL_OFFSET) as u64;
        let h = mix(self.client_key ^ rank.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let octets = [
            FIRST_OCTETS[((h >> 8) % FIRST_OCTETS.len() as u64) as usize],
            (h >> 16) as u8,
            (h >> 24) as u8,
            1 + ((h >> 32) % 254) as u8,
        ];
        let kind = h & 0xFF;
        if kind < TAIL_IPV4 {
            write_octets(out, &octets, b".", false);
        } else if kind < TAIL_IPV4 + TAIL_IPV6 {
            let g = mix(h);
            if g & 1 == 0 {
                out.extend_from_slice(b"2001:");
                push_hex(out, (g >> 8) as u16);
                out.push(b':');
                push_hex(out, (g >> 24) as u16);
                out.push(b':');
                push_hex(out, (g >> 40) as u16 & 0xFF);
                out.extend_from_slice(b"::");
                push_hex(out, (g >> 48) as u16);
            } else {
                out.extend_from_slice(b"2a01:");
                let g2 = mix(g);
                for (i, word) in [g >> 8, g >> 24, g >> 40, g2, g2 >> 16, g2 >> 32, g2 >> 48]
                    .into_iter()
                    .enumerate()
                {
                    if i > 0 {
                        out.push(b':');
                    }
                    push_hex(out, word as u16);
                }
            }
        } else {
            let (before, sep, after, reversed) =
                HOST_PATTERNS[((h >> 40) % HOST_PATTERNS.len() as u64) as usize];
            out.extend_from_slice(before.as_bytes());
            write_octets(out, &octets, sep.as_bytes(), reversed);
            out.extend_from_slice(after.as_bytes());
        }
        // Each client keeps one agent for pages and one for feeds.
        let a = mix(h ^ u64::from(feed)) >> 32;
        if feed {
            self.feed_agents.at(a)
        } else {
            self.browser_agents.at(a)
        }
    }

    fn write_referrer(&self, rng: &mut Rng, kind: u8, out: &mut Vec<u8>) {
        match kind {
            0 => {
                out.extend_from_slice(SELF_REFERRER);
                if chance(rng, 0.2) {
                    out.extend_from_slice(b"/ongoing/");
                } else {
                    let a = self.articles[self.pick_article.pick(rng)];
                    out.extend_from_slice(&self.uris[a as usize].path);
                }
            }
            1 => {
                let (before, after, _) = SEARCHES[self.searches.pick(rng)];
                out.extend_from_slice(before.as_bytes());
                self.write_query_words(rng, out);
                out.extend_from_slice(after.as_bytes());
            }
            _ => {
                let (before, digits, after, _) = SITES[self.sites.pick(rng)];
                out.extend_from_slice(before.as_bytes());
                if digits > 0 {
                    let n = 10u64.pow(digits - 1);
                    push_u64(out, n + (rng.next_u64() % (9 * n)));
                }
                out.extend_from_slice(after.as_bytes());
            }
        }
    }

    /// One to three lower-case words joined by `+`.
    fn write_query_words(&self, rng: &mut Rng, out: &mut Vec<u8>) {
        let n = 1 + below(rng, 3);
        for i in 0..n {
            if i > 0 {
                out.push(b'+');
            }
            let w = self.words[below(rng, self.words.len())];
            out.extend(w.bytes().map(|b| b.to_ascii_lowercase()));
        }
    }

    /// A probe, or an article URI mistyped so that it no longer is one.
    fn write_junk_uri(&self, rng: &mut Rng, out: &mut Vec<u8>) {
        if !chance(rng, JUNK_TYPO) {
            out.extend_from_slice(PROBES[below(rng, PROBES.len())].as_bytes());
            return;
        }
        let a = &self.uris[self.articles[self.pick_article.pick(rng)] as usize].path;
        // a = "/ongoing/When/200x/YYYY/MM/DD/Title"
        match below(rng, 4) {
            0 => {
                out.extend_from_slice(a);
                out.extend_from_slice(b".html");
            }
            1 => {
                out.extend_from_slice(b"/ongoing/when");
                out.extend_from_slice(&a[13..]);
            }
            2 => {
                out.extend_from_slice(a);
                out.push(b'.');
            }
            _ => {
                out.extend_from_slice(b"/ongoing/When/");
                out.extend_from_slice(&a[19..]);
            }
        }
    }
}

/// `/ongoing/When/200x/YYYY/MM/DD` for a day number.
fn article_dir(day: i64) -> Vec<u8> {
    let (y, m, d) = civil_from_days(day);
    let mut path = Vec::with_capacity(64);
    path.extend_from_slice(b"/ongoing/When/");
    push_u64(&mut path, (y / 10) as u64);
    path.extend_from_slice(b"x/");
    push_u64(&mut path, y as u64);
    path.push(b'/');
    push_2(&mut path, m);
    path.push(b'/');
    push_2(&mut path, d);
    path
}

/// One to three capitalised words joined by `-`, sometimes numbered (`Wide-Finder-2`).
fn title(rng: &mut Rng, words: &[&str], out: &mut Vec<u8>) {
    let n = 1 + below(rng, 3);
    for i in 0..n {
        if i > 0 {
            out.push(b'-');
        }
        out.extend_from_slice(words[below(rng, words.len())].as_bytes());
    }
    if chance(rng, 0.1) {
        out.push(b'-');
        push_u64(out, 2 + below(rng, 8) as u64);
    }
}

fn write_octets(out: &mut Vec<u8>, octets: &[u8; 4], sep: &[u8], reversed: bool) {
    for i in 0..4 {
        if i > 0 {
            out.extend_from_slice(sep);
        }
        let o = if reversed { octets[3 - i] } else { octets[i] };
        push_u64(out, u64::from(o));
    }
}

/// The shortest head [`LogGenerator::write_fitted`] falls back on (about 80 bytes).
fn write_short_head(clock: &mut Clock, now: i64, out: &mut Vec<u8>) -> Agent {
    out.extend_from_slice(b"192.0.2.1 - - [");
    clock.write(now, out);
    out.extend_from_slice(b"] \"HEAD /ongoing/ HTTP/1.0\" 200 - \"-\" \"");
    "Wget/1.10.2"
}

/// Writes a user agent of exactly `len` bytes: `agent`, cut if too long, or if too short a
/// bloated one (see [`BLOATED_AGENT`]); never ending in a backslash, which would escape the
/// closing quote.
fn write_agent_exact(agent: &str, len: usize, out: &mut Vec<u8>) {
    let agent = agent.as_bytes();
    if agent.len() >= len {
        out.extend_from_slice(&agent[..len]);
    } else if len > BLOATED_AGENT.len() {
        out.extend_from_slice(BLOATED_AGENT);
        let mut missing = len - BLOATED_AGENT.len() - 1;
        while missing > 0 {
            let n = missing.min(AGENT_TOKENS.len());
            out.extend_from_slice(&AGENT_TOKENS[..n]);
            missing -= n;
        }
        out.push(b')');
    } else {
        out.extend_from_slice(agent);
        out.resize(out.len() + len - agent.len(), b' ');
    }
    if len > 0 && out.last() == Some(&b'\\') {
        *out.last_mut().expect("not empty") = b' ';
    }
}

/// Offset and length of each chunk of a `size`-byte log: `CHUNK` bytes each, the last one
/// taking the remainder (so it holds 1 to 2 chunks' worth; a log under `CHUNK` is one
/// chunk).
fn chunks(size: u64) -> impl Iterator<Item = (u64, u64, usize)> {
    let n = if size == 0 { 0 } else { (size / CHUNK).max(1) };
    (0..n).map(move |i| {
        let start = i * CHUNK;
        let len = if i + 1 == n { size - start } else { CHUNK };
        (i, start, len as usize)
    })
}

/// Writes a `size`-byte access log for `seed` to `out` (through a temporary file renamed
/// into place), generating chunks on every core; with `damaged`, about 0.1 % of its lines
/// malformed ([`LogGenerator::damaged`]).
pub fn generate(out: &Path, size: u64, seed: u64, damaged: bool) -> Result<(), EngineError> {
    let none = std::sync::atomic::AtomicU64::new(0);
    generate_counted(out, size, seed, damaged, &none)
}

/// [`generate`], adding the bytes written to `done` as chunks are written (for a progress
/// bar).
pub fn generate_counted(
    out: &Path,
    size: u64,
    seed: u64,
    damaged: bool,
    done: &std::sync::atomic::AtomicU64,
) -> Result<(), EngineError> {
    crate::check_room(out, size)?;
    let generator = LogGenerator::new(seed).damaged(damaged);
    let plan: Vec<(u64, u64, usize)> = chunks(size).collect();
    crate::write_chunks(out, size, &plan, done, |index, len| {
        generator.chunk(index, len)
    })
}

#[cfg(test)]
mod tests;
