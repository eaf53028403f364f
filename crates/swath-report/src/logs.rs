//! The log reports as `swath logs` prints them: the Wide Finder 2 report (text or JSON) and
//! the summary (text, JSON, and a self-contained HTML page).

use std::fmt::Write as _;
use std::io::{self, Read};

use swath_engine::Input;
use swath_ops::logs::{report_reader, LineReport, Ranking, SummaryTop, Wf2Config, Wf2Top};

use crate::text::shown;

/// The first line of a text report when some logs could not be read in full (`--partial`).
pub const PARTIAL: &[u8] =
    b"PARTIAL REPORT: some logs could not be read in full (see standard error)\n\n";

/// The Wide Finder 2 report of `r`: text, or JSON (`failed`: marked partial).
pub fn wf2(r: &Wf2Top, json: bool, failed: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if json {
        let mut v = serde_json::json!({
            "resources": r.hits.distinct,
            "404s": r.not_found.distinct,
            "clients": r.clients.distinct,
            "malformed": r.malformed,
            "top_uris_by_hits": json_list(&r.hits, "count"),
            "top_uris_by_bytes": json_list(&r.bytes, "bytes"),
            "top_404s": json_list(&r.not_found, "count"),
            "top_clients": json_list(&r.clients, "count"),
            "top_referrers": json_list(&r.referrers, "count"),
        });
        if failed {
            v["partial"] = true.into();
        }
        out = format!("{v:#}\n").into_bytes();
    } else {
        if failed {
            out.extend_from_slice(PARTIAL);
        }
        out.extend_from_slice(
            format!(
                "{} resources, {} 404s, {} clients\n\n",
                r.hits.distinct, r.not_found.distinct, r.clients.distinct
            )
            .as_bytes(),
        );
        let counts = |out: &mut Vec<u8>, title: &str, t: &Ranking| {
            out.extend_from_slice(title.as_bytes());
            out.push(b'\n');
            for (k, c) in &t.top {
                out.extend_from_slice(format!(" {c:>10}: ").as_bytes());
                out.extend_from_slice(shown(k).as_bytes());
                out.push(b'\n');
            }
            out.push(b'\n');
        };
        counts(&mut out, "Top URIs by hit:", &r.hits);
        out.extend_from_slice(b"Top URIs by bytes:\n");
        for (k, c) in &r.bytes.top {
            out.extend_from_slice(format!(" {:>9.1}M: ", *c as f64 / 1048576.0).as_bytes());
            out.extend_from_slice(shown(k).as_bytes());
            out.push(b'\n');
        }
        out.push(b'\n');
        counts(&mut out, "Top 404s:", &r.not_found);
        counts(&mut out, "Top client addresses:", &r.clients);
        counts(&mut out, "Top referrers:", &r.referrers);
    }
    out
}

fn json_list(t: &Ranking, value: &str) -> serde_json::Value {
    serde_json::Value::Array(
        t.top
            .iter()
            .map(|(k, c)| serde_json::json!({"key": String::from_utf8_lossy(k), value: c}))
            .collect(),
    )
}

fn status_classes(s: &SummaryTop) -> [u64; 5] {
    let mut c = [0u64; 5];
    for (code, &n) in s.status.iter().enumerate() {
        if (100..600).contains(&code) {
            c[code / 100 - 1] += n;
        }
    }
    c
}

/// The summary as JSON (schema in docs/json.md).
pub fn summary_json(s: &SummaryTop) -> serde_json::Value {
    let classes = status_classes(s);
    let codes: serde_json::Map<String, serde_json::Value> = s
        .status
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(code, &c)| (code.to_string(), c.into()))
        .collect();
    serde_json::json!({
        "requests": s.requests,
        "malformed": s.malformed,
        "unique_clients": s.clients.distinct,
        "unique_uris": s.uris.distinct,
        "bytes": s.bytes,
        "status_classes": {"1xx": classes[0], "2xx": classes[1], "3xx": classes[2], "4xx": classes[3], "5xx": classes[4]},
        "status_codes": codes,
        "requests_by_hour": s.hours.to_vec(),
        "requests_by_day": s.days.iter().map(|(d, c)| serde_json::json!({
            "day": format!("{:04}-{:02}-{:02}", d / 10000, d / 100 % 100, d % 100), "count": c
        })).collect::<Vec<_>>(),
        "top_uris": json_list(&s.uris, "count"),
        "top_uris_by_bytes": json_list(&s.uri_bytes, "bytes"),
        "top_404s": json_list(&s.not_found, "count"),
        "top_clients": json_list(&s.clients, "count"),
        "top_referrers": json_list(&s.referrers, "count"),
        "top_user_agents": json_list(&s.agents, "count"),
    })
}

/// The summary as text.
pub fn summary_text(s: &SummaryTop) -> String {
    let mut o = String::new();
    let classes = status_classes(s);
    let _ = writeln!(o, "Requests          {}", s.requests);
    let _ = writeln!(o, "Unique clients    {}", s.clients.distinct);
    let _ = writeln!(o, "Unique URIs       {}", s.uris.distinct);
    let _ = writeln!(
        o,
        "Bytes sent        {} ({:.1} MiB)",
        s.bytes,
        s.bytes as f64 / 1048576.0
    );
    let _ = writeln!(o, "Malformed lines   {}", s.malformed);
    let _ = writeln!(o, "\nStatus classes:");
    for (i, c) in classes.iter().enumerate() {
        let _ = writeln!(o, " {:>10}  {}xx", c, i + 1);
    }
    let _ = writeln!(o, "\nStatus codes:");
    for (code, &c) in s.status.iter().enumerate().filter(|(_, &c)| c > 0) {
        let _ = writeln!(o, " {c:>10}  {code}");
    }
    let _ = writeln!(o, "\nRequests by hour:");
    let peak = s.hours.iter().copied().max().unwrap_or(0).max(1);
    for (h, &c) in s.hours.iter().enumerate() {
        let bar = "#".repeat((c * 40 / peak) as usize);
        let _ = writeln!(o, "{}", format!(" {h:02}:00 {c:>10}  {bar}").trim_end());
    }
    let _ = writeln!(o, "\nRequests by day:");
    for (d, c) in &s.days {
        let _ = writeln!(
            o,
            " {:04}-{:02}-{:02} {c:>10}",
            d / 10000,
            d / 100 % 100,
            d % 100
        );
    }
    let list = |o: &mut String, title: &str, t: &Ranking| {
        let _ = writeln!(o, "\n{title}:");
        for (k, c) in &t.top {
            let _ = writeln!(o, " {c:>10}  {}", shown(k));
        }
    };
    list(&mut o, "Top URIs", &s.uris);
    list(&mut o, "Top 404s", &s.not_found);
    list(&mut o, "Top clients", &s.clients);
    list(&mut o, "Top referrers", &s.referrers);
    list(&mut o, "Top user agents", &s.agents);
    o
}

/// JSON that is safe inside an HTML `<script>` element whatever its strings hold: `<`, `>`
/// and `&` as `\u003c`, `\u003e`, `\u0026` (so no `</script>`, `<!--` or `<script>` can end
/// or re-enter the element), and U+2028, U+2029 as `\u2028`, `\u2029` (line terminators for
/// older JavaScript parsers). These characters only occur inside JSON strings, where the
/// escapes mean the same characters.
pub fn json_for_script(json: &serde_json::Value) -> String {
    let text = json.to_string();
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A page with the JSON embedded and drawn by a small script: no server, no network.
pub fn summary_html(json: &serde_json::Value) -> String {
    let data = json_for_script(json);
    format!(
        r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>swath logs summary</title>
<style>
body{{font-family:system-ui,sans-serif;margin:2em;color:#222}} h1{{font-size:1.4em}}
.cards{{display:flex;gap:1em;flex-wrap:wrap}} .card{{background:#f3f5f8;padding:.8em 1.2em;border-radius:6px}}
.card b{{display:block;font-size:1.4em}} svg{{background:#fafafa;border:1px solid #ddd}}
table{{border-collapse:collapse;margin:.5em 0 1.5em}} td{{padding:.15em .6em;border-bottom:1px solid #eee}}
td.n{{text-align:right;font-variant-numeric:tabular-nums}} h2{{font-size:1.1em;margin-top:1.5em}}
</style></head><body>
<h1>Access log summary</h1><div class="cards" id="cards"></div>
<h2>Requests by hour of day</h2><svg id="hours" width="760" height="220"></svg>
<h2>Requests by day</h2><svg id="days" width="760" height="220"></svg>
<h2>Status classes</h2><svg id="classes" width="760" height="160"></svg>
<div id="lists"></div>
<script id="data" type="application/json">{data}</script>
<script>
const d = JSON.parse(document.getElementById('data').textContent);
const fmt = n => n.toLocaleString('en');
const card = (k, v) => `<div class="card">${{k}}<b>${{v}}</b></div>`;
document.getElementById('cards').innerHTML = card('Requests', fmt(d.requests)) +
  card('Unique clients', fmt(d.unique_clients)) + card('Unique URIs', fmt(d.unique_uris)) +
  card('Bytes sent', (d.bytes / 1048576).toFixed(1) + ' MiB') + card('Malformed lines', fmt(d.malformed));
function bars(id, labels, values) {{
  const svg = document.getElementById(id), w = +svg.getAttribute('width'), h = +svg.getAttribute('height');
  const max = Math.max(1, ...values), bw = (w - 40) / Math.max(1, values.length);
  let s = '';
  values.forEach((v, i) => {{
    const bh = (h - 40) * v / max, x = 30 + i * bw, y = h - 25 - bh;
    s += `<rect x="${{x + 1}}" y="${{y}}" width="${{Math.max(1, bw - 2)}}" height="${{bh}}" fill="#4a7bd0"><title>${{labels[i]}}: ${{fmt(v)}}</title></rect>`;
    if (values.length <= 31) s += `<text x="${{x + bw / 2}}" y="${{h - 10}}" font-size="10" text-anchor="middle">${{labels[i]}}</text>`;
  }});
  svg.innerHTML = s;
}}
bars('hours', d.requests_by_hour.map((_, i) => String(i).padStart(2, '0')), d.requests_by_hour);
bars('days', d.requests_by_day.map(x => x.day.slice(5)), d.requests_by_day.map(x => x.count));
const cl = d.status_classes; bars('classes', Object.keys(cl), Object.values(cl));
const esc = s => s.replace(/[&<>]/g, c => ({{'&':'&amp;','<':'&lt;','>':'&gt;'}}[c]));
const list = (t, rows, f) => `<h2>${{t}}</h2><table>` + rows.map(r => `<tr><td class="n">${{fmt(r[f])}}</td><td>${{esc(r.key)}}</td></tr>`).join('') + '</table>';
document.getElementById('lists').innerHTML =
  list('Top URIs', d.top_uris, 'count') + list('Top URIs by bytes', d.top_uris_by_bytes, 'bytes') +
  list('Top 404s', d.top_404s, 'count') + list('Top clients', d.top_clients, 'count') +
  list('Top referrers', d.top_referrers, 'count') + list('Top user agents', d.top_user_agents, 'count');
</script></body></html>
"##
    )
}

/// The `--top` a log report's partial options text asks for (`report`: its first line).
pub fn partial_top(options: &[u8], report: &str) -> Option<usize> {
    let text = String::from_utf8_lossy(options);
    let mut lines = text.lines();
    (lines.next() == Some(report))
        .then(|| lines.next()?.strip_prefix("top=")?.parse().ok())
        .flatten()
}

/// `--article`'s default: the ongoing blog's article URIs (which the hand parser of
/// [`swath_ops::logs`] implements exactly, so this pattern is not compiled).
pub const DEFAULT_ARTICLE: &str = r"^/ongoing/When/\d\d\dx/\d\d\d\d/\d\d/\d\d/[^ .]+$";

/// `--self-referrer`'s default.
pub const DEFAULT_SELF_REFERRER: &str = "http://www.tbray.org/ongoing/";

/// The Wide Finder 2 configuration of `--article`, `--self-referrer` and `--max-line`.
pub fn wf2_config(
    article: &str,
    self_referrer: &str,
    max_line: usize,
) -> Result<Wf2Config, regex::Error> {
    let article = if article == DEFAULT_ARTICLE {
        None
    } else {
        Some(regex::bytes::Regex::new(article)?)
    };
    Ok(Wf2Config {
        article,
        self_referrer: [&b"\""[..], self_referrer.as_bytes()].concat(),
        max_line,
    })
}

/// The options text of a `logs wf2` partial: what changes the tables or the report.
pub fn wf2_options(top: usize, max_line: usize, article: &str, self_referrer: &str) -> Vec<u8> {
    format!("logs wf2\ntop={top}\nmax-line={max_line}\narticle={article}\nself-referrer={self_referrer}")
        .into_bytes()
}

/// The options text of a `logs summary` partial.
pub fn summary_options(top: usize, max_line: usize) -> Vec<u8> {
    format!("logs summary\ntop={top}\nmax-line={max_line}").into_bytes()
}

/// A compression a log may come in, recognised by its first bytes (never by its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// gzip (`1f 8b`), every member of a multi-member file.
    Gzip,
    /// Zstandard (`28 b5 2f fd`), every frame.
    Zstd,
    /// xz (`fd 37 7a 58 5a 00`), every stream.
    Xz,
    /// bzip2 (`BZh` and a block size digit), every stream.
    Bzip2,
}

/// The most first bytes [`Compression::of_magic`] looks at.
pub const MAGIC_LEN: usize = 6;

impl Compression {
    /// The compression whose magic bytes `head` starts with.
    pub fn of_magic(head: &[u8]) -> Option<Compression> {
        match head {
            [0x1f, 0x8b, ..] => Some(Compression::Gzip),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compression::Zstd),
            [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => Some(Compression::Xz),
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Some(Compression::Bzip2),
            _ => None,
        }
    }

    /// Its name, as messages say it.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Bzip2 => "bzip2",
        }
    }

    /// A reader of the bytes `r` decompresses to, every member, frame or stream of it.
    pub fn decoder<'a>(
        self,
        r: impl io::BufRead + Send + 'a,
    ) -> io::Result<Box<dyn Read + Send + 'a>> {
        Ok(match self {
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(r)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(r)?),
            Compression::Xz => Box::new(liblzma::bufread::XzDecoder::new_multi_decoder(r)),
            Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(r)),
        })
    }

    /// The cause of a decoding error, as `name: cause` says it: a stream cut short says
    /// so, with the compression's name.
    pub fn cause(self, e: &io::Error) -> String {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            format!("unexpected end of {} data (truncated file?)", self.name())
        } else if matches!(
            e.kind(),
            io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::Other
        ) {
            let said = e.to_string();
            let said = said
                .strip_prefix(self.name())
                .and_then(|x| x.strip_prefix(": "))
                .unwrap_or(&said);
            format!("{} data is damaged ({said})", self.name())
        } else {
            swath_engine::error::os_message(e)
        }
    }
}

/// The compression `input` is in, by its first bytes (`None`: plain text).
pub fn compression(input: &Input) -> Option<Compression> {
    let len = input.len().unwrap_or(0);
    let mut head = [0u8; MAGIC_LEN];
    let n = (len.min(MAGIC_LEN as u64)) as usize;
    if n < 2 || input.read_exact_at(&mut head[..n], 0).is_err() {
        return None;
    }
    Compression::of_magic(&head[..n])
}

/// Reads a compressed log (every member, frame or stream) into `report`, through the
/// input already open and up to the size it had then (a log still written is read to
/// that point), decompressing on one thread while `workers` parse. An error's cause is
/// [`Compression::cause`].
pub fn report_compressed<R: LineReport>(
    input: &Input,
    compression: Compression,
    config: &R::Config,
    workers: usize,
    report: &mut R,
) -> io::Result<u64> {
    let mut file = input.file().try_clone()?;
    io::Seek::seek(&mut file, io::SeekFrom::Start(input.base()))?;
    let size = input.len().unwrap_or(0);
    let limited = io::BufReader::with_capacity(1 << 20, io::Read::take(file, size));
    let mut decoded = compression.decoder(limited)?;
    report_reader(&mut decoded, config, workers, 1 << 20, report)
}
