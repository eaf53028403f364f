//! The log reports as `swath logs` prints them: the Wide Finder 2 report (text or JSON) and
//! the summary (text, JSON, and a self-contained HTML page).

use swath_engine::source::HEAD_LEN;
use swath_ops::logs::{Ranking, Wf2Config, Wf2Top};

use crate::text::shown;

/// The first line of a text report when some logs could not be read in full (`--partial`).
pub const PARTIAL: &[u8] =
    b"PARTIAL REPORT: some logs could not be read in full (see standard error)\n\n";

/// The layout of the Wide Finder 2 report's JSON (docs/json.md): 2 since its keys are
/// plain identifiers (`not_found`, not `404s`) and it says its schema, tool and version.
pub const WF2_SCHEMA: u32 = 2;

/// The Wide Finder 2 report of `r`: text, or JSON (`failed`: marked partial).
pub fn wf2(r: &Wf2Top, json: bool, failed: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if json {
        let mut v = serde_json::json!({
            "schema": WF2_SCHEMA,
            "tool": "swath",
            "version": env!("CARGO_PKG_VERSION"),
            "report": "logs wf2",
            "resources": r.hits.distinct,
            "not_found": r.not_found.distinct,
            "clients": r.clients.distinct,
            "malformed": r.malformed,
            "top_uris_by_hits": json_list(&r.hits, "count"),
            "top_uris_by_bytes": json_list(&r.bytes, "bytes"),
            "top_not_found": json_list(&r.not_found, "count"),
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

/// The options text of a `logs summary` partial: the rows, the line bound, the format,
/// the filters and the static-file extensions (what changes the tables or the report).
pub fn summary_options(
    top: usize,
    config: &swath_ops::logs::summary::SummaryConfig,
    statics: &[String],
) -> Vec<u8> {
    format!(
        "logs summary\ntop={top}\nmax-line={}\nformat-name={}\nformat={}\n{}\nstatic={}\n4xx-to-unique-count={}",
        config.max_line,
        config.format.name(),
        config.format.spec().replace('\n', " "),
        config.filter.spec(),
        statics.join(","),
        config.visitors_4xx
    )
    .into_bytes()
}

/// A `key=value` line of a partial's options text.
pub fn partial_option(options: &[u8], key: &str) -> Option<String> {
    let text = String::from_utf8_lossy(options);
    let key = format!("{key}=");
    text.lines()
        .find_map(|l| l.strip_prefix(&key).map(str::to_string))
}

/// The format `--format SPEC` asks for, recognised from `head` when SPEC is `auto`; with
/// what was recognised (for the message on standard error). An error names the cause.
pub fn log_format(
    spec: &str,
    head: &[u8],
) -> Result<
    (
        swath_ops::logs::format::Format,
        Option<swath_ops::logs::format::Detected>,
    ),
    swath_ops::logs::format::FormatError,
> {
    if spec == "auto" {
        // No whole line in the first bytes (one endless line): nothing to recognise; it is
        // read as the default format and counted as malformed.
        if head.len() >= HEAD_LEN && memchr::memchr(b'\n', head).is_none() {
            return Ok((swath_ops::logs::format::Format::default(), None));
        }
        match swath_ops::logs::format::detect(head) {
            Some(d) => Ok((d.format.clone(), Some(d))),
            // A log of its headers only (a fresh IIS log): its header says what it is.
            None => match swath_ops::logs::format::by_header(head) {
                Some(f) => Ok((f, None)),
                None if head.iter().all(u8::is_ascii_whitespace) => {
                    Ok((swath_ops::logs::format::Format::default(), None))
                }
                None => Err(swath_ops::logs::format::FormatError::Unrecognised),
            },
        }
    } else {
        swath_ops::logs::format::Format::named(spec, head).map(|f| (f, None))
    }
}
