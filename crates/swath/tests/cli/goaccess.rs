//! `swath logs summary --json` against GoAccess 1.7's JSON (`goaccess LOG
//! --log-format=COMBINED -o report.json`, its defaults: Debian's configuration file read),
//! figure by figure, on generated combined logs and the same in the common and the
//! virtual-host combined formats, with the edge cases GoAccess counts its own way:
//! 4xx responses (no visitors), static files with and without query strings (GoAccess's
//! extension list), 404s (in their own panel only), crawlers, agents empty or `-`, a last
//! quoted field cut short, a status that is not a number, several days, IPv4 and IPv6
//! clients, `-` bytes.
//!
//! The same logs (but the line cut short) are written in every other format both read:
//! W3C (IIS), CloudFront, AWS classic ELB and ALB, Caddy's JSON; see
//! [`summary_gives_goaccess_s_figures_on_w3c_cloudfront_load_balancer_and_caddy_logs`]
//! for what each lacks and how GoAccess's requests are read in swath's words.
//!
//! Compared: `general`'s requests (total, valid, failed), unique visitors, unique requested
//! and static files, unique 404s and bandwidth; and every row (hits, visitors, bytes, and a
//! request's method and protocol) of the visitors, requests, static requests, 404s, hosts,
//! visit time and status code panels (and the virtual hosts', where both read them); and
//! the browsers and operating systems: each of GoAccess's classes (its root rows,
//! `Chrome`, `Crawlers`, `Windows`, ...) against swath's browsers and os panels, each of
//! their items (`Chrome/120.0.0.0`, `Windows 10`, ...) against swath's browser_versions and
//! os_versions. The edge log's agents are browsers, systems and crawlers of GoAccess's
//! tables and markers, curl and Wget, `-`, empty and cut short. Also `--ignore-crawlers`
//! in both.
//!
//! Kept out of the logs, as swath does not do what GoAccess does there (see the GUIDE):
//! a visitor whose only lines without an agent have it empty (GoAccess counts the visitor
//! under `Unknown` only from `-` lines; swath from either); one browser or system name
//! under two classes (GoAccess keeps the class of its last line).
//!
//! Not compared yet: the referrer panels (swath's referrers leave `-` out, and GoAccess's
//! defaults leave the referrers out); the times taken.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::util::{swath, Dir};

const GOACCESS: &str = "/usr/bin/goaccess";

/// Visitors before the log's edge cases (see [`edge_log`]): more than any panel's rows
/// but the hosts'.
const PREAMBLE: usize = 500;

/// A small deterministic generator (64-bit LCG), so that each seed is one log everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next() as usize % from.len()]
    }
}

/// A combined log of three days, `lines` a day, with GoAccess's edge cases.
fn edge_log(seed: u64, lines: usize) -> Vec<u8> {
    edge_log_after(seed, lines, "preamble")
}

/// [`edge_log`] whose preamble's lines have the agent `preamble`: one the filters at test
/// keep (GoAccess numbers no visitor of a line it leaves out, so a preamble left out
/// would no longer keep the pairs apart).
fn edge_log_after(seed: u64, lines: usize, preamble: &str) -> Vec<u8> {
    let mut r = Rng(seed);
    let clients: Vec<String> = (1..24)
        .map(|i| format!("192.0.2.{i}"))
        .chain((1..5).map(|i| format!("2001:db8::{i:x}")))
        .collect();
    let clients: Vec<&str> = clients.iter().map(String::as_str).collect();
    let agents = [
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        "Mozilla/5.0 (X11; Linux x86_64; rv:115.0) Gecko/20100101 Firefox/115.0",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
        "curl/8.5.0",
        "curl%2F8.5.0",
        "-",
        "",
        "python-requests/2.31.0",
        // Browsers and systems as GoAccess 1.7 classes them (its browser and system tables:
        // the first key found in table order; the name read from the agent there).
        "Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.5 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (iPad; CPU OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.5 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (Linux; Android 4.4.2; Nexus 4 Build/KOT49H) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/34.0.1847.114 Mobile Safari/537.36",
        "Mozilla/5.0 (Linux; Android 13; SAMSUNG SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/21.0 Chrome/110.0.5481.154 Mobile Safari/537.36",
        "Mozilla/5.0 (Windows NT 6.1; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/110.0.5481.77 Safari/537.36",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36 Edg/114.0.1823.67",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36 OPR/100.0.0.0",
        "Opera/9.80 (Android; Opera Mini/36.2.2254/119.132; U; id) Presto/2.12.423 Version/12.16",
        "Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko",
        "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 13.4; rv:109.0) Gecko/20100101 Firefox/115.0",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.5 Safari/605.1.15",
        "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0",
        "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36",
        "Mozilla/5.0 (Windows NT 6.1; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) YaBrowser/23.5.0.0 Chrome/112.0.0.0 Safari/537.36",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/420.0.0.32.107]",
        "Mozilla/5.0+(Windows+NT+10.0;+Win64;+x64)+AppleWebKit/537.36+(KHTML,+like+Gecko)+Chrome/114.0.0.0+Safari/537.36",
        // Crawlers: by the `; +http`-style markers (the word before them), or by the table.
        "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.5735.179 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
        "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
        "Twitterbot/1.0",
        "Python-urllib/3.11",
        "Java/1.8.0_151",
        // Others, and no system.
        "Wget/1.21.3",
        "Go-http-client/1.1",
        "SomethingWeird/1.0",
    ];
    let paths = [
        "/",
        "/index.html",
        "/about",
        "/style.css",
        "/style.css?v=2",
        "/app.js",
        "/img/a.png",
        "/img/B.PNG",
        "/doc.pdf",
        "/q?x=1&y=2",
        "/x.docx",
        "/font.woff2",
        "/favicon.ico",
        "/robots.txt",
        "/feed.atom",
        "/a.avi",
        "/archive.tar.gz",
        // Decoded once, as GoAccess decodes: one requested file each pair.
        "/caf%C3%A9",
        "/caf\u{e9}",
        "/p%41th",
        "/pAth",
        "/img/c%2Epng",
        "/bad%zz+x",
    ];
    let methods = ["GET", "GET", "GET", "GET", "GET", "POST", "HEAD"];
    let statuses = [
        "200", "200", "200", "200", "200", "200", "304", "301", "404", "404", "403", "444", "500",
        "206", "400",
    ];
    let referrers = [
        "-",
        "http://example.com/",
        "https://www.google.com/search?q=swath&hl=en",
    ];
    // GoAccess stores a row's visitor as the unordered pair of the row's and the visitor's
    // sequence numbers (gkhash.c `u64encode` puts the smaller in the low half), so row r's
    // visitor v and row v's visitor r are one entry and one of them goes uncounted. First
    // come PREAMBLE visitors (one row, clients of their own): every later visitor's
    // number is past every row's but the hosts', and a host's number is never past its
    // visitors' (each new client comes with a new visitor), so no two pairs meet.
    let mut out = preamble_of("10/Oct/2023", preamble);
    for day in ["10/Oct/2023", "11/Oct/2023", "12/Oct/2023"] {
        for i in 0..lines {
            let status = r.pick(&statuses);
            let bytes = match r.next() % 4 {
                _ if status == "304" => "0".to_string(),
                0 => "-".to_string(),
                _ => (r.next() % 50_000).to_string(),
            };
            let (hour, minute, second) = (i * 24 / lines, r.next() % 60, r.next() % 60);
            let (client, method, path, referrer, agent) = (
                r.pick(&clients),
                r.pick(&methods),
                r.pick(&paths),
                r.pick(&referrers),
                r.pick(&agents),
            );
            let line = format!(
                "{client} - - [{day}:{hour:02}:{minute:02}:{second:02} +0000] \"{method} {path} HTTP/1.1\" {status} {bytes} \"{referrer}\" \"{agent}\"\n",
            );
            out.extend_from_slice(line.as_bytes());
            // An empty agent's visitor is the `-` agent's (both GoAccess's `-`), which
            // GoAccess counts under the `Unknown` browser and system only from its lines
            // that have the `-` agent, swath from either (see the GUIDE): each visitor
            // with an empty agent has a line with `-` too.
            if agent.is_empty() {
                let line = format!(
                    "{client} - - [{day}:{hour:02}:{minute:02}:{second:02} +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"-\"\n",
                );
                out.extend_from_slice(line.as_bytes());
            }
        }
    }
    // A status that is not a number: a failed line in both, in every format.
    out.extend_from_slice(
        b"192.0.2.8 - - [12/Oct/2023:23:58:00 +0000] \"GET /about HTTP/1.1\" 2x0 10 \"-\" \"curl/8.5.0\"\n",
    );
    // The last quoted field cut short (no closing quote), at the end of the log: an agent
    // not read, so empty (its visitor's `-` line just before, as above).
    out.extend_from_slice(
        b"192.0.2.7 - - [12/Oct/2023:23:58:30 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"-\"\n",
    );
    out.extend_from_slice(
        b"192.0.2.7 - - [12/Oct/2023:23:59:00 +0000] \"GET /about HTTP/1.1\" 200 10 \"-\" \"Mozilla/5.0 (cut",
    );
    out
}

/// `log` in the common format: each line cut before its referrer (its third `"`).
fn as_common(log: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in log.split_inclusive(|&b| b == b'\n') {
        let quotes: Vec<usize> = line
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'"')
            .map(|(i, _)| i)
            .collect();
        out.extend_from_slice(&line[..quotes[2] - 1]);
        out.push(b'\n');
    }
    out
}

/// `log` in the virtual-host combined format: each line after `www.example.com:443 `.
fn as_vcombined(log: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in log.split_inclusive(|&b| b == b'\n') {
        out.extend_from_slice(b"www.example.com:443 ");
        out.extend_from_slice(line);
    }
    out
}

/// A line of [`edge_log`] in its parts (`None` for the line cut short).
struct Parts<'a> {
    client: &'a str,
    /// `YYYY-MM-DD`.
    date: String,
    /// `HH:MM:SS`.
    time: &'a str,
    /// Seconds since 1970 (the log's times are UTC).
    epoch: u64,
    method: &'a str,
    path: &'a str,
    status: &'a str,
    /// `-` as 0.
    bytes: u64,
    referrer: &'a str,
    agent: &'a str,
}

/// The [`Parts`] of a line of [`edge_log`], with its newline.
fn parts(line: &str) -> Option<Parts<'_>> {
    let line = line.strip_suffix("\"\n")?;
    let (client, rest) = line.split_once(" - - [")?;
    let (stamp, rest) = rest.split_once(" +0000] \"")?;
    let (day, time) = stamp.split_once(':')?;
    let (request, rest) = rest.split_once("\" ")?;
    let mut request = request.split(' ');
    let (method, path) = (request.next()?, request.next()?);
    let (status, rest) = rest.split_once(' ')?;
    let (bytes, rest) = rest.split_once(" \"")?;
    let (referrer, agent) = rest.split_once("\" \"")?;
    let mut dmy = day.split('/');
    let (d, m, y) = (dmy.next()?, dmy.next()?, dmy.next()?);
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = months.iter().position(|&n| n == m)? as i64 + 1;
    let (d, y): (i64, i64) = (d.parse().ok()?, y.parse().ok()?);
    // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    let (y0, m0) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y0.div_euclid(400);
    let yoe = y0 - era * 400;
    let doy = (153 * m0 + 2) / 5 + d - 1;
    let days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    let hms: Vec<i64> = time.split(':').map(|t| t.parse().unwrap()).collect();
    let epoch = days * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2];
    Some(Parts {
        client,
        date: format!("{y:04}-{m:02}-{d:02}"),
        time,
        epoch: epoch as u64,
        method,
        path,
        status,
        bytes: bytes.parse().unwrap_or(0),
        referrer,
        agent,
    })
}

/// `log`'s lines (but the one cut short) in another format: `head`, then each line as
/// `line` writes it.
fn converted(log: &[u8], head: &str, line: impl Fn(&Parts<'_>) -> String) -> Vec<u8> {
    let text = std::str::from_utf8(log).unwrap();
    let mut out = head.to_string();
    for p in text.split_inclusive('\n').filter_map(parts) {
        out.push_str(&line(&p));
        out.push('\n');
    }
    out.into_bytes()
}

/// A path's stem and its query (`-` for none), as W3C logs write them apart.
fn stem_query(path: &str) -> (&str, &str) {
    path.split_once('?').unwrap_or((path, "-"))
}

/// `-` for an empty field.
fn or_dash(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}

/// `log` as IIS writes W3C extended logs (GoAccess's `W3C` fields: no bytes), agents
/// with `+` for spaces.
fn as_w3c(log: &[u8]) -> Vec<u8> {
    let head = "#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n\
        #Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip \
        cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken\n";
    converted(log, head, |p| {
        let (stem, query) = stem_query(p.path);
        format!(
            "{} {} 10.0.0.1 {} {stem} {query} 443 - {} {} {} {} 0 0 {}",
            p.date,
            p.time,
            p.method,
            p.client,
            or_dash(&p.agent.replace(' ', "+")),
            p.referrer,
            p.status,
            p.bytes % 1000,
        )
    })
}

/// `log` as CloudFront writes it (the 25 fields GoAccess's `CLOUDFRONT` reads), agents
/// with `%20` for spaces (`%2520` in some).
fn as_cloudfront(log: &[u8]) -> Vec<u8> {
    let head = "#Version: 1.0\n#Fields: date time x-edge-location sc-bytes c-ip cs-method \
        cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) \
        x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken \
        x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type \
        cs-protocol-version fle-status\n";
    converted(log, head, |p| {
        let (stem, query) = stem_query(p.path);
        [
            &p.date,
            p.time,
            "FRA56-P1",
            &p.bytes.to_string(),
            p.client,
            p.method,
            "d1.cloudfront.net",
            stem,
            p.status,
            p.referrer,
            // Some agents encoded twice, as CloudFront has written them (`%2520`): both
            // tools decode an agent once, so those keep `%20`.
            or_dash(&if p.agent.len() % 2 == 1 {
                p.agent.replace('%', "%25").replace(' ', "%2520")
            } else {
                p.agent.replace(' ', "%20")
            }),
            query,
            "-",
            "Hit",
            "abcdef==",
            "d1.cloudfront.net",
            "https",
            "120",
            "0.002",
            "-",
            "TLSv1.3",
            "TLS_AES_128_GCM_SHA256",
            "Hit",
            "HTTP/1.1",
            "-",
        ]
        .join("\t")
    })
}

/// A client and its port as the load balancers' logs write them: an IPv6 address in
/// brackets, which GoAccess's `%h:%^` needs (parser.c `parse_specifier` case 'h' reads
/// to the `]`; unbracketed, to the address's first `:`).
fn with_port(client: &str) -> String {
    if client.contains(':') {
        format!("[{client}]:2817")
    } else {
        format!("{client}:2817")
    }
}

/// `log` as an AWS classic load balancer writes it (no referrers).
fn as_elb(log: &[u8]) -> Vec<u8> {
    converted(log, "", |p| {
        format!(
            "{}T{}.945958Z my-lb {} 10.0.0.1:80 0.000073 0.001048 0.000057 {} {} 0 {} \"{} http://www.example.com:80{} HTTP/1.1\" \"{}\" - -",
            p.date, p.time, with_port(p.client), p.status, p.status, p.bytes, p.method, p.path, p.agent,
        )
    })
}

/// `log` as an AWS application load balancer writes it (no referrers).
fn as_alb(log: &[u8]) -> Vec<u8> {
    converted(log, "", |p| {
        format!(
            "https {}T{}.186641Z app/my-lb/50dc6c495c0c9188 {} 10.0.0.1:80 0.000 0.001 0.000 {} {} 34 {} \"{} https://www.example.com:443{} HTTP/1.1\" \"{}\" TLS_AES_128_GCM_SHA256 TLSv1.3 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/t/73e2d6bc24d8a067 \"Root=1-58337262-36d228ad5d99923122bbe354\" \"www.example.com\" \"-\" 0 {}T{}.000000Z \"forward\" \"-\" \"-\" \"10.0.0.1:80\" \"{}\" \"-\" \"-\"",
            p.date, p.time, with_port(p.client), p.status, p.status, p.bytes, p.method, p.path, p.agent, p.date, p.time, p.status,
        )
    })
}

/// `log` as Caddy writes it (JSON lines, times in seconds since 1970), without the
/// agent or referrer headers where the line has none.
fn as_caddy(log: &[u8]) -> Vec<u8> {
    converted(log, "", |p| {
        let mut headers = Vec::new();
        if !p.agent.is_empty() {
            headers.push(format!("\"User-Agent\":[\"{}\"]", p.agent));
        }
        if p.referrer != "-" {
            headers.push(format!("\"Referer\":[\"{}\"]", p.referrer));
        }
        format!(
            "{{\"level\":\"info\",\"ts\":{}.25,\"logger\":\"http.log.access\",\"msg\":\"handled request\",\"request\":{{\"remote_ip\":\"{}\",\"remote_port\":\"5000\",\"proto\":\"HTTP/1.1\",\"method\":\"{}\",\"host\":\"www.example.com\",\"uri\":\"{}\",\"headers\":{{{}}}}},\"duration\":0.001,\"size\":{},\"status\":{},\"resp_headers\":{{}}}}",
            p.epoch, p.client, p.method, p.path, headers.join(","), p.bytes, p.status,
        )
    })
}

/// A load balancer's request URL as swath shows it: its path.
fn lb_path(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..]).to_string()
}

/// A request of GoAccess's from a log whose query is a field of its own: without the `?-`
/// GoAccess appends for a query logged as `-` (parser.c `parse_specifier` case 'q' keeps
/// the `-`, gstorage.c `gen_req_key` appends `?` and it; swath reads `-` as no query).
fn without_dash_query(request: &str) -> String {
    request.strip_suffix("?-").unwrap_or(request).to_string()
}

/// GoAccess's JSON report of `log` in its format `format` (`COMBINED`, ... or a format
/// string), with `args` after its defaults. In UTC, as swath reads epoch times.
fn goaccess(dir: &Dir, log: &Path, format: &str, args: &[&str]) -> Value {
    let out = dir.path("goaccess.json");
    let run = std::process::Command::new(GOACCESS)
        .env("TZ", "UTC")
        .arg(log)
        .arg(format!("--log-format={format}"))
        // Every row (366 a panel by default), as swath's --top below.
        .arg("--max-items=100000")
        .arg("-o")
        .arg(&out)
        .args(args)
        .output()
        .unwrap();
    assert!(run.status.success(), "goaccess: {run:?}");
    // GoAccess writes a decoded key's bytes as they are, UTF-8 or not; swath's JSON has
    // U+FFFD for each byte that is not (as `from_utf8_lossy` reads them).
    let bytes = std::fs::read(&out).unwrap();
    serde_json::from_str(&String::from_utf8_lossy(&bytes)).unwrap()
}

/// swath's JSON summary of `log`, every row of every panel, with `args`.
fn summary(dir: &Dir, log: &Path, args: &[&str]) -> Value {
    let log = log.to_str().unwrap();
    let mut all = vec!["logs", "summary", "--json", "--top", "100000", log];
    all.extend_from_slice(args);
    let run = swath(dir, &all);
    assert!(run.status.success(), "swath: {run:?}");
    serde_json::from_slice(&run.stdout).unwrap()
}

/// A swath panel by its id.
fn panel<'a>(s: &'a Value, id: &str) -> &'a Value {
    s["panels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no panel {id}"))
}

/// A GoAccess row's hits, visitors and bytes (0 in a format without bytes).
fn counts(row: &Value) -> [u64; 3] {
    ["hits", "visitors", "bytes"].map(|c| match &row[c] {
        Value::Null if c == "bytes" => 0,
        v => v["count"].as_u64().unwrap(),
    })
}

/// swath's row's hits, visitors and bytes.
fn swath_counts(row: &Value) -> [u64; 3] {
    ["hits", "visitors", "bytes"].map(|c| row[c].as_u64().unwrap())
}

/// GoAccess's rows of `panel` keyed by `key` (from the row).
fn goaccess_rows(
    g: &Value,
    panel: &str,
    key: impl Fn(&Value) -> String,
) -> BTreeMap<String, [u64; 3]> {
    let rows = g[panel]["data"].as_array().unwrap();
    rows.iter().map(|r| (key(r), counts(r))).collect()
}

/// swath's rows of `panel` keyed by `key`.
fn swath_rows(s: &Value, id: &str, key: impl Fn(&Value) -> String) -> BTreeMap<String, [u64; 3]> {
    let rows = panel(s, id)["rows"].as_array().unwrap();
    rows.iter().map(|r| (key(r), swath_counts(r))).collect()
}

/// How both tools read a log, and how GoAccess's request rows read in swath's words.
struct Reading<'a> {
    /// The format's name in messages.
    name: &'a str,
    /// GoAccess's `--log-format`: a format's name or a format string.
    format: &'a str,
    /// GoAccess's options after its defaults.
    goaccess_args: &'a [&'a str],
    /// swath's options.
    swath_args: &'a [&'a str],
    /// Whether both tools have the lines' virtual hosts.
    vhosts: bool,
    /// A request of GoAccess's (its row's `data`) as swath writes it.
    request: fn(&str) -> String,
}

/// Every figure compared, GoAccess's and swath's, for `log` in GoAccess's format `format`,
/// read with `goaccess_args` and `swath_args` (the same options in each tool's words).
fn same_figures(dir: &Dir, log: &Path, format: &str, goaccess_args: &[&str], swath_args: &[&str]) {
    same_figures_as(
        dir,
        log,
        &Reading {
            name: format,
            format,
            goaccess_args,
            swath_args,
            vhosts: format == "VCOMBINED",
            request: str::to_string,
        },
    );
}

/// Every figure compared, GoAccess's and swath's, for `log` read as `how` says.
fn same_figures_as(dir: &Dir, log: &Path, how: &Reading<'_>) {
    let g = goaccess(dir, log, how.format, how.goaccess_args);
    let s = summary(dir, log, how.swath_args);
    // The edge log's one failed line (its status not a number) fails in every format.
    assert_eq!(g["general"]["failed_requests"], 1, "{}", how.name);
    equal_figures(&g, &s, how);
}

/// Every figure of GoAccess's JSON `g` equal to swath's `s`, both read as `how` says.
fn equal_figures(g: &Value, s: &Value, how: &Reading<'_>) {
    let (format, swath_args) = (how.name, how.swath_args);
    let (gg, sg) = (&g["general"], &s["general"]);
    let n = |v: &Value| v.as_u64().unwrap();
    let general = [
        // The lines left out (`filtered`) are among the valid ones, as in GoAccess's total.
        (
            "total_requests",
            n(&sg["lines_valid"]) + n(&sg["lines_failed"]),
        ),
        ("valid_requests", n(&sg["requests"])),
        ("failed_requests", n(&sg["lines_failed"])),
        ("unique_visitors", n(&sg["unique_visitors"])),
        ("unique_files", n(&panel(s, "requests")["distinct"])),
        ("unique_static_files", n(&panel(s, "static")["distinct"])),
        ("unique_not_found", n(&panel(s, "not_found")["distinct"])),
        ("bandwidth", n(&sg["bytes"])),
    ];
    for (figure, ours) in general {
        assert_eq!(
            n(&gg[figure]),
            ours,
            "{format}: general.{figure} ({swath_args:?})"
        );
    }
    // Visitors by day: GoAccess's YYYYMMDD, swath's YYYY-MM-DD.
    let day = |r: &Value| r["data"].as_str().unwrap().to_string();
    let gv = goaccess_rows(g, "visitors", day);
    let sv: BTreeMap<String, [u64; 3]> = panel(s, "visitors")["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let d = r["day"].as_str().unwrap().replace('-', "");
            let hits = n(&r["hits"]);
            // The day's bytes are not in swath's row: GoAccess's are compared below
            // through the total.
            (d, [hits, n(&r["visitors"]), 0])
        })
        .collect();
    let without_bytes = |m: BTreeMap<String, [u64; 3]>| -> BTreeMap<String, [u64; 2]> {
        m.into_iter().map(|(k, v)| (k, [v[0], v[1]])).collect()
    };
    assert_eq!(
        without_bytes(gv),
        without_bytes(sv),
        "{format}: visitors by day"
    );
    let data = |r: &Value| r["data"].as_str().unwrap().to_string();
    assert_eq!(
        goaccess_rows(g, "hosts", data),
        swath_rows(s, "hosts", |r| r["host"].as_str().unwrap().to_string()),
        "{format}: hosts"
    );
    // The hours of the day, each day's visitors in an hour added over the days.
    // GoAccess shows no hour without requests.
    let mut hours = swath_rows(s, "time", |r| r["hour"].as_str().unwrap().to_string());
    hours.retain(|_, c| c[0] > 0);
    assert_eq!(
        goaccess_rows(g, "visit_time", data),
        hours,
        "{format}: visit time"
    );
    // Status codes: GoAccess's classes (`2xx Success`) hold the codes (`200 - OK: ...`),
    // their visitors the codes' added.
    let mut codes = BTreeMap::new();
    let mut classes = BTreeMap::new();
    for class in g["status_codes"]["data"].as_array().unwrap() {
        let name = class["data"].as_str().unwrap()[..3].to_string();
        classes.insert(name, counts(class));
        for code in class["items"].as_array().unwrap() {
            codes.insert(
                code["data"].as_str().unwrap()[..3].to_string(),
                counts(code),
            );
        }
    }
    let status = |r: &Value| r["status"].as_str().unwrap().to_string();
    assert_eq!(
        codes,
        swath_rows(s, "status", status),
        "{format}: status codes"
    );
    let mut ours = swath_rows(s, "status_classes", |r| {
        r["class"].as_str().unwrap().to_string()
    });
    // GoAccess shows no empty class.
    ours.retain(|_, c| c[0] > 0);
    assert_eq!(classes, ours, "{format}: status classes");
    // Browsers and operating systems: GoAccess's classes (its roots: `Chrome`, `Crawlers`,
    // `Windows`, ...) are swath's browsers and os panels, their items (`Chrome/120.0.0.0`,
    // `Windows 10`, ...) swath's browser_versions and os_versions.
    for (ga, classes, names, key) in [
        ("browsers", "browsers", "browser_versions", "browser"),
        ("os", "os", "os_versions", "os"),
    ] {
        let mut items = BTreeMap::new();
        for class in g[ga]["data"].as_array().unwrap() {
            for item in class["items"].as_array().unwrap() {
                items.insert(item["data"].as_str().unwrap().to_string(), counts(item));
            }
        }
        let name = |r: &Value| r[key].as_str().unwrap().to_string();
        assert_eq!(
            goaccess_rows(g, ga, data),
            swath_rows(s, classes, name),
            "{format}: {ga}"
        );
        assert_eq!(items, swath_rows(s, names, name), "{format}: {ga}' items");
    }
    if how.vhosts {
        assert_eq!(
            goaccess_rows(g, "vhosts", data),
            swath_rows(s, "vhosts", |r| r["vhost"].as_str().unwrap().to_string()),
            "{format}: virtual hosts"
        );
    }
    for (ga, ours) in [
        ("requests", "requests"),
        ("static_requests", "static"),
        ("not_found", "not_found"),
    ] {
        // A method or protocol not logged: GoAccess's `---`, swath's empty.
        let request = |method: &Value, uri: String, protocol: &Value| {
            let shown = |v: &Value| match v.as_str().unwrap() {
                "" => "---".to_string(),
                v => v.to_string(),
            };
            format!("{} {uri} {}", shown(method), shown(protocol))
        };
        assert_eq!(
            goaccess_rows(g, ga, |r| request(
                &r["method"],
                (how.request)(r["data"].as_str().unwrap()),
                &r["protocol"]
            )),
            swath_rows(s, ours, |r| request(
                &r["method"],
                r["uri"].as_str().unwrap().to_string(),
                &r["protocol"]
            )),
            "{format}: {ga}"
        );
    }
}

fn goaccess_here() -> bool {
    if Path::new(GOACCESS).exists() {
        return true;
    }
    swath_engine::testing::skip("skipped: /usr/bin/goaccess is not installed");
    false
}

#[test]
fn summary_gives_goaccess_s_figures_on_combined_common_and_vhost_logs() {
    if !goaccess_here() {
        return;
    }
    let dir = Dir::new();
    for seed in [1, 2, 3] {
        let combined = edge_log(seed, 400);
        let log = dir.write("access.log", &combined);
        same_figures(&dir, &log, "COMBINED", &[], &[]);
        let log = dir.write("common.log", &as_common(&combined));
        same_figures(&dir, &log, "COMMON", &[], &[]);
        let log = dir.write("vhost.log", &as_vcombined(&combined));
        same_figures(&dir, &log, "VCOMBINED", &[], &[]);
    }
}

/// The edge logs in the formats whose lines are not combined's, each figure both tools
/// read in that format compared:
/// - W3C (IIS; GoAccess's `W3C`): no bytes (GoAccess's fields have none: 0 in both), no
///   request protocol, no virtual host.
/// - CloudFront (`CLOUDFRONT`): every figure, the virtual host `cs(Host)`.
/// - AWS classic ELB: GoAccess 1.7 has no format for it (its `AWSELB` is the ALB's
///   fields), so a format string; no referrers, no virtual host in GoAccess's.
/// - ALB: GoAccess's `AWSALB` takes the balancer's name for the virtual host, so those are
///   not compared; read with `AWSELB` too, whose virtual host is the request's domain as
///   swath's is, they are. No referrers.
/// - Caddy's JSON (`CADDY`): every figure, times in seconds since 1970 (UTC in both).
///
/// GoAccess's requests in swath's words: the load balancers log full URLs
/// (`https://host:443/path`), of which swath shows the path; W3C and CloudFront log the
/// query apart, and GoAccess appends `?-` to a request whose query is logged as `-`
/// ([`without_dash_query`]). With the query apart, GoAccess tells a static file by the
/// path alone (parser.c `verify_static_content` runs before `%q` is appended), as swath
/// does for those formats.
#[test]
fn summary_gives_goaccess_s_figures_on_w3c_cloudfront_load_balancer_and_caddy_logs() {
    if !goaccess_here() {
        return;
    }
    let dir = Dir::new();
    let elb = r#"%dT%t.%^ %^ %h:%^ %^ %^ %T %^ %s %^ %^ %b "%r" "%u" %k %K"#;
    let ymd = ["--date-format=%Y-%m-%d", "--time-format=%H:%M:%S"];
    for seed in [1, 2] {
        let combined = edge_log(seed, 400);
        let readings: [(&str, Vec<u8>, Reading<'_>); 6] = [
            (
                "w3c.log",
                as_w3c(&combined),
                Reading {
                    name: "W3C",
                    format: "W3C",
                    goaccess_args: &[],
                    swath_args: &["--format", "w3c"],
                    vhosts: false,
                    request: without_dash_query,
                },
            ),
            (
                "cloudfront.log",
                as_cloudfront(&combined),
                Reading {
                    name: "CLOUDFRONT",
                    format: "CLOUDFRONT",
                    goaccess_args: &[],
                    swath_args: &["--format", "cloudfront"],
                    vhosts: true,
                    request: without_dash_query,
                },
            ),
            (
                "elb.log",
                as_elb(&combined),
                Reading {
                    name: "ELB",
                    format: elb,
                    goaccess_args: &ymd,
                    swath_args: &["--format", "elb"],
                    vhosts: false,
                    request: lb_path,
                },
            ),
            (
                "alb.log",
                as_alb(&combined),
                Reading {
                    name: "AWSALB",
                    format: "AWSALB",
                    goaccess_args: &[],
                    swath_args: &["--format", "alb"],
                    vhosts: false,
                    request: lb_path,
                },
            ),
            (
                "alb.log",
                as_alb(&combined),
                Reading {
                    name: "AWSELB",
                    format: "AWSELB",
                    goaccess_args: &[],
                    swath_args: &["--format", "alb"],
                    vhosts: true,
                    request: lb_path,
                },
            ),
            (
                "caddy.log",
                as_caddy(&combined),
                Reading {
                    name: "CADDY",
                    format: "CADDY",
                    goaccess_args: &[],
                    swath_args: &["--format", "caddy"],
                    vhosts: true,
                    request: str::to_string,
                },
            ),
        ];
        for (file, log, how) in &readings {
            let log = dir.write(file, log);
            same_figures_as(&dir, &log, how);
        }
    }
}

#[test]
fn the_clients_of_4xx_responses_are_visitors_with_4xx_to_unique_count_as_in_goaccess() {
    if !goaccess_here() {
        return;
    }
    let dir = Dir::new();
    let log = dir.write("access.log", &edge_log(7, 300));
    same_figures(
        &dir,
        &log,
        "COMBINED",
        &["--4xx-to-unique-count"],
        &["--4xx-to-unique-count"],
    );
    // The option changes the count: the log has 4xx responses from clients that have no
    // other request that day.
    let dir2 = Dir::new();
    let plain = summary(&dir2, &log, &[]);
    let counted = summary(&dir2, &log, &["--4xx-to-unique-count"]);
    let visitors = |s: &Value| s["general"]["unique_visitors"].as_u64().unwrap();
    assert!(visitors(&counted) > visitors(&plain));
}

/// `--ignore-crawlers` leaves out the lines whose browser is a crawler (GoAccess's class
/// `Crawlers`: curl, Wget and the like are not), as GoAccess's does; `--crawlers-only`
/// keeps only them, and `--unknowns-as-crawlers` adds an unknown browser or system.
#[test]
fn ignore_crawlers_leaves_out_goaccess_s_crawlers() {
    if !goaccess_here() {
        return;
    }
    let dir = Dir::new();
    let log = dir.write("access.log", &edge_log(5, 300));
    same_figures(
        &dir,
        &log,
        "COMBINED",
        &["--ignore-crawlers"],
        &["--ignore-crawlers"],
    );
    // GoAccess's other crawler options, alone and together, each on a log whose
    // preamble the filter keeps (a browser's lines, or a crawler's).
    for (args, preamble) in [
        (
            &["--ignore-crawlers", "--unknowns-as-crawlers"][..],
            "Mozilla/5.0 (X11; Linux x86_64) Firefox/1.0",
        ),
        (&["--crawlers-only"], "Twitterbot/1.0"),
        (
            &["--crawlers-only", "--unknowns-as-crawlers"],
            "Twitterbot/1.0",
        ),
    ] {
        let log = dir.write("kept.log", &edge_log_after(5, 300, preamble));
        same_figures(&dir, &log, "COMBINED", args, args);
    }
    let s = summary(&dir, &log, &["--ignore-crawlers"]);
    assert!(s["general"]["filtered"].as_u64().unwrap() > 0);
    let crawlers = panel(&s, "browsers")["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["browser"] == "Crawlers")
        .count();
    assert_eq!(crawlers, 0);
}

/// PREAMBLE lines of one request each from clients of their own on `day` at midnight,
/// with the agent `agent` (see [`edge_log_after`]).
fn preamble_of(day: &str, agent: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..PREAMBLE {
        let line = format!(
            "10.0.{}.{} - - [{day}:00:00:00 +0000] \"GET /preamble HTTP/1.1\" 200 1 \"-\" \"{agent}\"\n",
            i / 256,
            i % 256
        );
        out.extend_from_slice(line.as_bytes());
    }
    out
}

/// A real log swath's tests did not make: the 10,000 lines of Apache's combined format
/// from a web site in May 2015 that Elastic ships as a sample (elastic/examples,
/// `Common Data Formats/apache_logs/apache_logs`, Apache License 2.0; THIRD-PARTY.md),
/// every figure GoAccess gives equal to swath's. The log comes after a preamble, as the
/// edge logs do: without it GoAccess loses two visitors of the hour 17 where its (row,
/// visitor) pairs meet (the difference the GUIDE names), and swath does not.
#[test]
fn summary_gives_goaccess_s_figures_on_a_real_log() {
    if !goaccess_here() {
        return;
    }
    let dir = Dir::new();
    let xz = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/logs/elastic-apache.log.xz"),
    )
    .unwrap();
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut liblzma::read::XzDecoder::new(&xz[..]), &mut text).unwrap();
    assert_eq!(text.iter().filter(|&&b| b == b'\n').count(), 10_000);
    let mut with = preamble_of("17/May/2015", "preamble");
    with.extend_from_slice(&text);
    let log = dir.write("apache_logs", &with);
    let how = Reading {
        name: "a real log",
        format: "COMBINED",
        goaccess_args: &[],
        swath_args: &[],
        vhosts: false,
        request: str::to_string,
    };
    let mut g = goaccess(&dir, &log, how.format, how.goaccess_args);
    let s = summary(&dir, &log, how.swath_args);
    // One line's agent is cut short (`"Mozilla/5.0 (compatible; Googlebot/2.1;
    // +http://www.google.com/bot.html`, no closing quote), the only line of its visitor
    // (46.118.127.106 on 20 May): GoAccess's `-` visitor, which it counts under the
    // `Unknown` browser and system only from lines logged with `-`, and swath from
    // either (the difference the GUIDE names). So swath has one more there.
    assert_eq!(
        text.split(|&b| b == b'\n')
            .filter(
                |l| l.starts_with(b"46.118.127.106 - - [20/May/2015") && l.ends_with(b"/bot.html")
            )
            .count(),
        1
    );
    for id in ["browsers", "os"] {
        for row in g[id]["data"].as_array_mut().unwrap() {
            if row["data"] == "Unknown" {
                let n = row["visitors"]["count"].as_u64().unwrap();
                row["visitors"]["count"] = (n + 1).into();
                for item in row["items"].as_array_mut().unwrap() {
                    if item["data"] == "Unknown" {
                        let n = item["visitors"]["count"].as_u64().unwrap();
                        item["visitors"]["count"] = (n + 1).into();
                    }
                }
            }
        }
    }
    equal_figures(&g, &s, &how);
}

/// Where swath's browsers and systems differ from GoAccess's (the GUIDE says why):
/// - a browser name that two lines class apart (`Chrome/114.0.0.0` of a Chrome and of a
///   crawler whose agent ends in ` (http://...)`) is one row of GoAccess's, under the class
///   of its last line (its `Chrome` class gone); swath counts each line in its own class;
/// - a visitor with an empty agent is GoAccess's `-` visitor, counted under `Unknown` only
///   from its lines logged with `-`; swath counts it there from either.
#[test]
fn a_name_of_two_classes_and_an_empty_agent_s_visitor_differ_from_goaccess() {
    if !goaccess_here() {
        return;
    }
    let dir = Dir::new();
    let log = dir.write(
        "classes.log",
        b"1.1.1.1 - - [10/Oct/2023:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"\"\n\
          2.2.2.2 - - [10/Oct/2023:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"\n\
          3.3.3.3 - - [10/Oct/2023:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"Mozilla/5.0 (X11; Linux x86_64) Chrome/114.0.0.0 Safari/537.36\"\n\
          4.4.4.4 - - [10/Oct/2023:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"Chrome/114.0.0.0 (http://x.example)\"\n",
    );
    let g = goaccess(&dir, &log, "COMBINED", &[]);
    let data = |r: &Value| r["data"].as_str().unwrap().to_string();
    let browsers = goaccess_rows(&g, "browsers", data);
    assert_eq!(
        browsers,
        BTreeMap::from([
            ("Crawlers".to_string(), [2, 2, 2]),
            ("Unknown".to_string(), [1, 1, 1]),
        ])
    );
    let s = summary(&dir, &log, &[]);
    let ours = swath_rows(&s, "browsers", |r| {
        r["browser"].as_str().unwrap().to_string()
    });
    assert_eq!(
        ours,
        BTreeMap::from([
            ("Chrome".to_string(), [1, 1, 1]),
            ("Crawlers".to_string(), [1, 1, 1]),
            ("Unknown".to_string(), [1, 2, 1]),
        ])
    );
}

/// Where swath differs on purpose: GoAccess 1.7 stores a row's visitor as the unordered
/// pair of two sequence numbers, so on this log (rows `/a.png`, then `/`, then `/q`;
/// visitors 9.9.9.9 then 5.5.5.5) the pair (`/`, visitor 2) hides (`/q`, visitor 1):
/// GoAccess gives `/q` no visitor, swath its one.
#[test]
fn goaccess_loses_a_row_s_visitor_where_two_pairs_meet_and_swath_does_not() {
    if !goaccess_here() {
        return;
    }
    let dir = Dir::new();
    let log = dir.write(
        "meet.log",
        b"9.9.9.9 - - [10/Oct/2023:00:30:54 +0000] \"GET /a.png HTTP/1.1\" 400 1 \"-\" \"UA\"\n\
          5.5.5.5 - - [10/Oct/2023:00:31:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"\n\
          9.9.9.9 - - [10/Oct/2023:22:45:43 +0000] \"GET /q HTTP/1.1\" 200 1 \"-\" \"UA\"\n",
    );
    let visitors_of_q = |rows: &Value, uri: &str| -> u64 {
        let row = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r[uri] == "/q")
            .unwrap();
        row["visitors"]
            .as_u64()
            .unwrap_or_else(|| row["visitors"]["count"].as_u64().unwrap())
    };
    let g = goaccess(&dir, &log, "COMBINED", &[]);
    assert_eq!(visitors_of_q(&g["requests"]["data"], "data"), 0);
    let s = summary(&dir, &log, &[]);
    assert_eq!(visitors_of_q(&panel(&s, "requests")["rows"], "uri"), 1);
}

/// A time that is not one (hour 25, minute 61, day 32, a month not named) fails its line
/// in GoAccess (its `strptime` refuses it), as does a status outside 100-599; so they do
/// in swath, which counted such lines valid (with no time, or with the status) before.
#[test]
fn a_time_or_a_status_that_is_not_one_fails_the_line_as_in_goaccess() {
    if !goaccess_here() {
        return;
    }
    let dir = Dir::new();
    let line = |(time, status): (&str, &str)| {
        format!("192.0.2.1 - - [{time} +0000] \"GET / HTTP/1.1\" {status} 5 \"-\" \"curl/8.5.0\"\n")
    };
    let lines = [
        ("10/Oct/2023:13:00:00", "200"),
        ("10/Oct/2023:25:00:00", "200"),
        ("10/Oct/2023:13:61:00", "200"),
        ("32/Oct/2023:13:00:00", "200"),
        ("10/Okt/2023:13:00:00", "200"),
        ("10/Oct/2023:14:00:00", "100"),
        ("10/Oct/2023:14:00:00", "599"),
        ("10/Oct/2023:14:00:00", "099"),
        ("10/Oct/2023:14:00:00", "600"),
        ("10/Oct/2023:14:00:00", "999"),
    ];
    let log = dir.write("access.log", lines.map(line).concat().as_bytes());
    let g = goaccess(&dir, &log, "COMBINED", &[]);
    let s = summary(&dir, &log, &[]);
    let n = |v: &Value| v.as_u64().unwrap();
    assert_eq!(n(&g["general"]["valid_requests"]), 3);
    assert_eq!(n(&g["general"]["failed_requests"]), 7);
    assert_eq!(n(&s["general"]["lines_valid"]), 3);
    assert_eq!(n(&s["general"]["lines_failed"]), 7);
    assert_eq!(
        n(&g["general"]["unique_visitors"]),
        n(&s["general"]["unique_visitors"])
    );
}
