//! The `logs summary` report: one data model ([`model`], JSON, schema in docs/json.md)
//! drawn as text ([`text`]), CSV ([`csv`]) and a self-contained HTML page ([`html`]).
//!
//! The model is a header (`general`) and panels; a panel has columns (an id, a title and
//! a kind: text, count, bytes, percent, micros) and rows (objects keyed by column id), and
//! says which column its chart draws. Every renderer walks the same panels, so the text,
//! the CSV, the page and the JSON always carry the same numbers. The model holds nothing
//! that changes from run to run (the page adds the inputs, the generation time and the
//! parse time in its own header), so two reports of one log are byte for byte equal
//! whatever the engine settings or the machines.

use std::fmt::Write as _;

use serde_json::{json, Value};
use swath_ops::logs::panels::{
    Panel, Rows, RowsOf, VisitorsOf, When, PANELS, P_STATUS, T_CLIENTS, T_NOT_FOUND_BYTES,
    T_REQUESTS,
};
use swath_ops::logs::summary::SummaryTop;
use swath_ops::logs::Ranking;
use swath_ops::partial::{
    N_BYTES, N_FILTERED, N_FIRST, N_HOURS, N_HOUR_BYTES, N_LAST, N_MALFORMED, N_REQUESTS,
    N_SIZE_HIST, N_STATUS, N_STATUS_BYTES, N_TIMED, N_TIME_HIST, N_TIME_MAX, N_TIME_SUM,
};

use crate::logs::json_for_script;
use crate::text::{shown, visible};

/// The version of the summary's JSON schema (docs/json.md).
pub const SCHEMA: u64 = 2;

/// What only the page shows: where the report came from and when.
#[derive(Debug, Clone, Default)]
pub struct PageInfo {
    /// The inputs' names and sizes in bytes.
    pub inputs: Vec<(String, u64)>,
    /// When the report was made (UTC, ISO 8601).
    pub generated: String,
    /// Seconds spent reading the logs.
    pub parse_seconds: f64,
    /// With `--follow`: the page reloads itself every this many seconds.
    pub refresh: Option<u64>,
}

/// Days since 1970-01-01 of a day `YYYYMMDD` (proleptic Gregorian).
fn civil_days(d: u32) -> i64 {
    let (y, m, day) = (
        i64::from(d / 10000),
        i64::from(d / 100 % 100),
        i64::from(d % 100),
    );
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn day_text(d: u32) -> String {
    format!("{:04}-{:02}-{:02}", d / 10000, d / 100 % 100, d % 100)
}

fn stamp_text(s: u64) -> Value {
    if s == 0 {
        return Value::Null;
    }
    let d = (s / 1_000_000) as u32;
    let t = s % 1_000_000;
    format!(
        "{} {:02}:{:02}:{:02}",
        day_text(d),
        t / 10000,
        t / 100 % 100,
        t % 100
    )
    .into()
}

fn percent(part: u64, whole: u64) -> Value {
    if whole == 0 {
        return json!(0.0);
    }
    json!((part as f64 * 10000.0 / whole as f64).round() / 100.0)
}

fn lossy(k: &[u8]) -> String {
    String::from_utf8_lossy(k).into_owned()
}

fn col(id: &str, title: &str, kind: &str) -> Value {
    json!({"id": id, "title": title, "type": kind})
}

/// A panel of the model.
fn panel(
    id: &str,
    title: &str,
    distinct: u64,
    columns: Vec<Value>,
    rows: Vec<Value>,
    chart: Option<(&str, &str)>,
) -> Value {
    let mut p =
        json!({"id": id, "title": title, "distinct": distinct, "columns": columns, "rows": rows});
    if let Some((label, value)) = chart {
        p["chart"] = json!({"label": label, "value": value});
    }
    p
}

type Values = std::collections::BTreeMap<Vec<u8>, u64>;

/// A panel of keys (`key`: the column's id and title) with hits and their share of the
/// requests and, when it has them, unique visitors and bytes, and their shares; charted
/// when `chart`.
fn keys_panel(
    p: &Panel,
    s: &SummaryTop,
    key: (&str, &str),
    r: &Ranking,
    (bytes, visitors): (Option<&Values>, Option<&Values>),
    chart: bool,
) -> Value {
    let (total, total_bytes) = (s.numbers[N_REQUESTS], s.numbers[N_BYTES]);
    let rows = r
        .top
        .iter()
        .map(|(k, c)| {
            let mut row = json!({key.0: lossy(k), "hits": c, "hits_percent": percent(*c, total)});
            if let Some(of) = visitors {
                let v = of.get(k).copied().unwrap_or(0);
                row["visitors"] = v.into();
                row["visitors_percent"] = percent(v, s.visitors);
            }
            if let Some(of) = bytes {
                let b = of.get(k).copied().unwrap_or(0);
                row["bytes"] = b.into();
                row["bytes_percent"] = percent(b, total_bytes);
            }
            row
        })
        .collect();
    let mut columns = vec![
        col(key.0, key.1, "text"),
        col("hits", "Hits", "count"),
        col("hits_percent", "Hits %", "percent"),
    ];
    if visitors.is_some() {
        columns.push(col("visitors", "Visitors", "count"));
        columns.push(col("visitors_percent", "Visitors %", "percent"));
    }
    if bytes.is_some() {
        columns.push(col("bytes", "Bytes", "bytes"));
        columns.push(col("bytes_percent", "Bytes %", "percent"));
    }
    panel(
        p.id,
        p.title,
        r.distinct,
        columns,
        rows,
        chart.then_some((key.0, "hits")),
    )
}

/// A panel of requests (`METHOD URI PROTOCOL`) with hits, unique visitors (of row panel
/// `rows`, a `P_*` index), bytes (of list `bytes`: `T_BYTES`, `T_NOT_FOUND_BYTES`) and,
/// with `times`, the time taken (average, longest, in all) when the log has times.
fn request_panel(
    p: &Panel,
    s: &SummaryTop,
    r: &Ranking,
    (rows, bytes): (usize, usize),
    times: bool,
) -> Value {
    let visitors = s.visitors_of(VisitorsOf::Rows(rows));
    let timed = s.numbers[N_TIMED] > 0 && times;
    let bytes_of = if bytes == T_NOT_FOUND_BYTES {
        &s.not_found_bytes_of
    } else {
        &s.bytes_of
    };
    let (total, total_bytes) = (s.numbers[N_REQUESTS], s.numbers[N_BYTES]);
    let rows = r
        .top
        .iter()
        .map(|(k, c)| {
            let (m, u, p) = swath_ops::logs::format::split_key(k);
            let b = bytes_of.get(k).copied().unwrap_or(0);
            let mut row = json!({
                "method": lossy(m), "uri": lossy(u), "protocol": lossy(p),
                "hits": c, "hits_percent": percent(*c, total),
            });
            let v = visitors.get(k).copied().unwrap_or(0);
            row["visitors"] = v.into();
            row["visitors_percent"] = percent(v, s.visitors);
            row["bytes"] = b.into();
            row["bytes_percent"] = percent(b, total_bytes);
            if timed {
                let (sum, max) = s.times_of.get(k).copied().unwrap_or((0, 0));
                row["time_avg_us"] = (sum / (*c).max(1)).into();
                row["time_max_us"] = max.into();
                row["time_total_us"] = sum.into();
            }
            row
        })
        .collect();
    let mut columns = vec![
        col("hits", "Hits", "count"),
        col("hits_percent", "Hits %", "percent"),
        col("visitors", "Visitors", "count"),
        col("visitors_percent", "Visitors %", "percent"),
    ];
    columns.push(col("bytes", "Bytes", "bytes"));
    columns.push(col("bytes_percent", "Bytes %", "percent"));
    if timed {
        columns.push(col("time_avg_us", "Avg. time", "micros"));
        columns.push(col("time_max_us", "Max. time", "micros"));
        columns.push(col("time_total_us", "Cum. time", "micros"));
    }
    columns.extend([
        col("method", "Method", "text"),
        col("protocol", "Protocol", "text"),
        col("uri", "Request", "text"),
    ]);
    panel(p.id, p.title, r.distinct, columns, rows, None)
}

/// The labels of histogram bucket `k` (values with `k` significant bits).
fn bucket_range(k: usize, last: bool) -> (u64, Option<u64>) {
    match k {
        0 => (0, Some(0)),
        _ if last => (1u64 << (k - 1), None),
        _ => (1u64 << (k - 1), Some((1u64 << k) - 1)),
    }
}

/// The summary's data model (JSON schema 2, docs/json.md) of `s`, read as `format`: its
/// header, then the panels of [`PANELS`] that are shown, in order.
pub fn model(s: &SummaryTop, format: &str) -> Value {
    let general = general(s, format);
    let panels: Vec<Value> = PANELS.iter().filter_map(|p| panel_of(s, p)).collect();
    json!({
        "schema": SCHEMA,
        "tool": "swath",
        "version": env!("CARGO_PKG_VERSION"),
        "report": "logs summary",
        "general": general,
        "panels": panels,
    })
}

/// Days from the log's first day to its last (`i64::MAX` when it has none).
fn span_days(s: &SummaryTop) -> i64 {
    match (s.days.first(), s.days.last()) {
        (Some(a), Some(b)) => civil_days(b.0) - civil_days(a.0),
        _ => i64::MAX,
    }
}

/// Panel `p` of the model, or `None` when its [`When`] leaves it out.
fn panel_of(s: &SummaryTop, p: &Panel) -> Option<Value> {
    let shown = match p.when {
        When::Always | When::AnyRows => true,
        When::UnderTwoDays => span_days(s) <= 1,
        When::Timed => s.numbers[N_TIMED] > 0,
    };
    if !shown {
        return None;
    }
    let v = match p.rows {
        Rows::Keys {
            key,
            rows,
            bytes,
            visitors,
            chart,
        } => {
            let of = (
                bytes.map(|b| s.bytes(b)),
                visitors.map(|v| s.visitors_of(v)),
            );
            keys_panel(p, s, key, s.rows(rows), of, chart)
        }
        Rows::Requests {
            rows,
            visitors,
            bytes,
            times,
        } => request_panel(p, s, s.rows(rows), (visitors, bytes), times),
        Rows::Days => days_panel(p, s),
        Rows::VisitorHours => visitor_hours_panel(p, s),
        Rows::Hours => hours_panel(p, s),
        Rows::StatusClasses => status_classes_panel(p, s),
        Rows::Statuses => statuses_panel(p, s),
        Rows::Sizes => histogram_panel(p, s, (N_SIZE_HIST, 64), ("Size", "B")),
        Rows::Times => histogram_panel(p, s, (N_TIME_HIST, 32), ("Time taken", "µs")),
    };
    let any = v["distinct"].as_u64().unwrap_or(0) > 0;
    match p.when {
        When::AnyRows | When::UnderTwoDays if !any => None,
        _ => Some(v),
    }
}

/// The model's header (`general`): the log's span, its line and request counts, the
/// unique visitors, requests and clients, the bytes and, when the log has them, the
/// times taken.
fn general(s: &SummaryTop, format: &str) -> Value {
    let n = &s.numbers;
    let requests = n[N_REQUESTS];
    let bytes = n[N_BYTES];
    let not_found: u64 = n[N_STATUS + 404];
    let mut general = json!({
        "format": format,
        "first": stamp_text(n[N_FIRST]),
        "last": stamp_text(n[N_LAST]),
        "lines_valid": requests.saturating_add(n[N_FILTERED]),
        "lines_failed": n[N_MALFORMED],
        "filtered": n[N_FILTERED],
        "requests": requests,
        "unique_visitors": s.visitors,
        "unique_requests": s.rows(RowsOf::List(T_REQUESTS)).distinct,
        "unique_clients": s.rows(RowsOf::List(T_CLIENTS)).distinct,
        "static_requests": s.static_hits,
        "crawler_requests": s.crawler_hits,
        "not_found": not_found,
        "bytes": bytes,
        "timed_requests": n[N_TIMED],
    });
    if let Some(average) = n[N_TIME_SUM].checked_div(n[N_TIMED]) {
        general["time_total_us"] = n[N_TIME_SUM].into();
        general["time_average_us"] = average.into();
        general["time_max_us"] = n[N_TIME_MAX].into();
    }
    general
}

/// Hits and unique visitors per day.
fn days_panel(p: &Panel, s: &SummaryTop) -> Value {
    let requests = s.numbers[N_REQUESTS];
    let visitors: std::collections::HashMap<u32, u64> = s.visitors_by_day.iter().copied().collect();
    let day_rows: Vec<Value> = s
        .days
        .iter()
        .map(|(d, h)| {
            let v = visitors.get(d).copied().unwrap_or(0);
            json!({"day": day_text(*d), "hits": h, "hits_percent": percent(*h, requests), "visitors": v, "visitors_percent": percent(v, s.visitors)})
        })
        .collect();
    panel(
        p.id,
        p.title,
        s.days.len() as u64,
        vec![
            col("day", "Day", "text"),
            col("hits", "Hits", "count"),
            col("hits_percent", "Hits %", "percent"),
            col("visitors", "Visitors", "count"),
            col("visitors_percent", "Visitors %", "percent"),
        ],
        day_rows,
        Some(("day", "visitors")),
    )
}

/// Unique visitors per day and hour.
fn visitor_hours_panel(p: &Panel, s: &SummaryTop) -> Value {
    let rows: Vec<Value> = s
        .visitors_by_hour
        .iter()
        .map(|(d, h, v)| json!({"hour": format!("{} {h:02}:00", day_text(*d)), "visitors": v}))
        .collect();
    panel(
        p.id,
        p.title,
        rows.len() as u64,
        vec![
            col("hour", "Hour", "text"),
            col("visitors", "Visitors", "count"),
        ],
        rows,
        Some(("hour", "visitors")),
    )
}

/// Hits, unique visitors (each day's visitors in that hour, added over the days, as
/// GoAccess counts them) and bytes by hour of the day.
fn hours_panel(p: &Panel, s: &SummaryTop) -> Value {
    let n = &s.numbers;
    let mut visitors = [0u64; 24];
    for &(_, h, v) in &s.visitors_by_hour {
        if let Some(x) = visitors.get_mut(usize::from(h)) {
            *x = x.saturating_add(v);
        }
    }
    let hour_rows: Vec<Value> = (0..24)
        .map(|h| {
            let mut row = json!({"hour": format!("{h:02}")});
            counted(
                s,
                &mut row,
                [n[N_HOURS + h], visitors[h], n[N_HOUR_BYTES + h]],
            );
            row
        })
        .collect();
    let mut columns = vec![col("hour", "Hour", "text")];
    columns.extend(counted_columns());
    panel(
        p.id,
        p.title,
        24,
        columns,
        hour_rows,
        Some(("hour", "hits")),
    )
}

/// Sets a row's hits, visitors and bytes, and their percentages (of all requests, unique
/// visitors and bytes).
fn counted(s: &SummaryTop, row: &mut Value, [hits, visitors, bytes]: [u64; 3]) {
    let n = &s.numbers;
    row["hits"] = hits.into();
    row["hits_percent"] = percent(hits, n[N_REQUESTS]);
    row["visitors"] = visitors.into();
    row["visitors_percent"] = percent(visitors, s.visitors);
    row["bytes"] = bytes.into();
    row["bytes_percent"] = percent(bytes, n[N_BYTES]);
}

/// The columns [`counted`] sets.
fn counted_columns() -> [Value; 6] {
    [
        col("hits", "Hits", "count"),
        col("hits_percent", "Hits %", "percent"),
        col("visitors", "Visitors", "count"),
        col("visitors_percent", "Visitors %", "percent"),
        col("bytes", "Bytes", "bytes"),
        col("bytes_percent", "Bytes %", "percent"),
    ]
}

/// A status code's hits, unique visitors and bytes.
fn status_counts(s: &SummaryTop, code: usize) -> [u64; 3] {
    let n = &s.numbers;
    let text = swath_ops::logs::summary::status_text(code as u16);
    let visitors = s.visitors_of(VisitorsOf::Rows(P_STATUS));
    [
        n[N_STATUS + code],
        visitors.get(&text[..]).copied().unwrap_or(0),
        n[N_STATUS_BYTES + code],
    ]
}

/// The class of a status code (`2xx`; `other` outside 100-599) and its index among
/// [`CLASSES`].
fn status_class(code: usize) -> (String, usize) {
    if (100..600).contains(&code) {
        (format!("{}xx", code / 100), code / 100 - 1)
    } else {
        ("other".into(), 5)
    }
}

/// The HTTP status classes, in order.
const CLASSES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "other"];

/// Hits by HTTP status class (1xx to 5xx, and other codes when the log has any).
fn status_classes_panel(p: &Panel, s: &SummaryTop) -> Value {
    // A class's visitors are its codes' added, as GoAccess adds a root row's.
    let mut classes = [[0u64; 3]; 6];
    for code in 0..1000 {
        let c = status_counts(s, code);
        if c[0] > 0 {
            // Saturating, as the numbers were merged: a partial's counts may be forged.
            let k = status_class(code).1;
            for (sum, x) in classes[k].iter_mut().zip(c) {
                *sum = sum.saturating_add(x);
            }
        }
    }
    let class_rows: Vec<Value> = CLASSES
        .iter()
        .zip(classes)
        .filter(|(name, c)| c[0] > 0 || **name != "other")
        .map(|(name, c)| {
            let mut row = json!({"class": name});
            counted(s, &mut row, c);
            row
        })
        .collect();
    let mut columns = vec![col("class", "Class", "text")];
    columns.extend(counted_columns());
    panel(
        p.id,
        p.title,
        class_rows.len() as u64,
        columns,
        class_rows,
        Some(("class", "hits")),
    )
}

/// Hits by HTTP status code, with its class.
fn statuses_panel(p: &Panel, s: &SummaryTop) -> Value {
    let n = &s.numbers;
    let status_rows: Vec<Value> = (0..1000)
        .filter(|&code| n[N_STATUS + code] > 0)
        .map(|code| {
            let class = status_class(code).0;
            let mut row = json!({"status": code.to_string(), "class": class});
            counted(s, &mut row, status_counts(s, code));
            row
        })
        .collect();
    let mut columns = vec![
        col("status", "Status", "text"),
        col("class", "Class", "text"),
    ];
    columns.extend(counted_columns());
    panel(
        p.id,
        p.title,
        status_rows.len() as u64,
        columns,
        status_rows,
        None,
    )
}

/// A histogram of the `width` numbers from `first` (buckets of values by significant
/// bits), its label column titled `title`, values in `unit`.
fn histogram_panel(
    p: &Panel,
    s: &SummaryTop,
    (first, width): (usize, usize),
    (title, unit): (&str, &str),
) -> Value {
    let n = &s.numbers;
    let requests = n[N_REQUESTS];
    let rows: Vec<Value> = match (0..width).rev().find(|&k| n[first + k] > 0) {
        None => Vec::new(),
        Some(top) => (0..=top)
            .map(|k| {
                let (lo, hi) = bucket_range(k, k == width - 1);
                let c = n[first + k];
                let label = match hi {
                    Some(h) if h == lo => format!("{lo} {unit}"),
                    Some(h) => format!("{lo}-{h} {unit}"),
                    None => format!("{lo}+ {unit}"),
                };
                json!({"range": label, "from": lo, "hits": c, "hits_percent": percent(c, requests)})
            })
            .collect(),
    };
    panel(
        p.id,
        p.title,
        rows.len() as u64,
        vec![
            col("range", title, "text"),
            col("hits", "Hits", "count"),
            col("hits_percent", "Hits %", "percent"),
        ],
        rows,
        Some(("range", "hits")),
    )
}

/// A cell as text: counts with thousands separators, bytes with a unit, percents with
/// two decimals.
fn cell(v: &Value, kind: &str) -> String {
    match (kind, v) {
        ("count", Value::Number(x)) => grouped(x.as_u64().unwrap_or(0)),
        ("bytes", Value::Number(x)) => human_bytes(x.as_u64().unwrap_or(0)),
        ("percent", Value::Number(x)) => format!("{:.2}%", x.as_f64().unwrap_or(0.0)),
        ("micros", Value::Number(x)) => micros(x.as_u64().unwrap_or(0)),
        (_, Value::String(s)) => s.clone(),
        (_, Value::Null) => "-".into(),
        (_, v) => v.to_string(),
    }
}

/// Microseconds as a time a person reads (`850 µs`, `12.5 ms`, `3.20 s`).
pub fn micros(us: u64) -> String {
    match us {
        0..1000 => format!("{us} µs"),
        1000..1_000_000 => format!("{:.1} ms", us as f64 / 1000.0),
        _ => format!("{:.2} s", us as f64 / 1e6),
    }
}

/// `1234567` as `1,234,567`.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes with a binary unit (`1.5 MiB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The header's lines: (title, value as text).
fn general_lines(g: &Value) -> Vec<(&'static str, String)> {
    let num = |k: &str| grouped(g[k].as_u64().unwrap_or(0));
    let mut v = vec![
        ("Format", g["format"].as_str().unwrap_or("").to_string()),
        ("First request", cell(&g["first"], "text")),
        ("Last request", cell(&g["last"], "text")),
        ("Requests", num("requests")),
        ("Unique visitors", num("unique_visitors")),
        ("Unique requests", num("unique_requests")),
        ("Unique clients", num("unique_clients")),
        ("Static requests", num("static_requests")),
        ("Crawler requests", num("crawler_requests")),
        ("Not found (404)", num("not_found")),
        (
            "Bytes sent",
            format!(
                "{} ({})",
                num("bytes"),
                human_bytes(g["bytes"].as_u64().unwrap_or(0))
            ),
        ),
        ("Valid lines", num("lines_valid")),
        ("Failed lines", num("lines_failed")),
        ("Filtered out", num("filtered")),
    ];
    if g["timed_requests"].as_u64().unwrap_or(0) > 0 {
        let t = |k: &str| micros(g[k].as_u64().unwrap_or(0));
        v.push(("Average time", t("time_average_us")));
        v.push(("Longest time", t("time_max_us")));
        v.push(("Total time", t("time_total_us")));
    }
    v
}

fn columns(p: &Value) -> Vec<(&str, &str, &str)> {
    p["columns"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| {
                    (
                        c["id"].as_str().unwrap_or(""),
                        c["title"].as_str().unwrap_or(""),
                        c["type"].as_str().unwrap_or("text"),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn rows(p: &Value) -> &[Value] {
    p["rows"].as_array().map(|r| &r[..]).unwrap_or(&[])
}

/// How many of a panel's rows are shown, of how many it has (`10 of 23,699`), for the text
/// report's and the page's panel titles.
fn shown_of(p: &Value) -> String {
    format!(
        "{} of {}",
        grouped(rows(p).len() as u64),
        grouped(p["distinct"].as_u64().unwrap_or(0))
    )
}

/// The report as text: the header, then each panel as aligned columns (fields from the
/// log shown with control characters escaped).
pub fn text(m: &Value) -> String {
    let mut o = String::new();
    for (k, v) in general_lines(&m["general"]) {
        let _ = writeln!(o, "{k:<18}{v}");
    }
    for p in m["panels"].as_array().map(|p| &p[..]).unwrap_or(&[]) {
        let cols = columns(p);
        let r = rows(p);
        let _ = writeln!(
            o,
            "\n{} ({})",
            p["title"].as_str().unwrap_or(""),
            shown_of(p)
        );
        let cells: Vec<Vec<String>> = r
            .iter()
            .map(|row| {
                cols.iter()
                    .map(|(id, _, kind)| shown(cell(&row[*id], kind).as_bytes()))
                    .collect()
            })
            .collect();
        let widths: Vec<usize> = cols
            .iter()
            .enumerate()
            .map(|(i, (_, t, _))| {
                cells
                    .iter()
                    .map(|c| c[i].chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(t.chars().count())
            })
            .collect();
        let line = |o: &mut String, vals: Vec<String>| {
            let mut l = String::new();
            for (i, v) in vals.iter().enumerate() {
                let w = widths[i];
                let pad = w.saturating_sub(v.chars().count());
                if cols[i].2 == "text" {
                    let _ = write!(
                        l,
                        " {v}{}",
                        if i + 1 < vals.len() {
                            " ".repeat(pad)
                        } else {
                            String::new()
                        }
                    );
                } else {
                    let _ = write!(l, " {}{v}", " ".repeat(pad));
                }
            }
            let _ = writeln!(o, "{}", l.trim_end());
        };
        line(&mut o, cols.iter().map(|c| c.1.to_string()).collect());
        for c in cells {
            line(&mut o, c);
        }
    }
    o
}

/// A CSV field: control characters escaped as the text report escapes them ([`visible`]:
/// `\x1b`, a backslash doubled), so that no field can drive a terminal or hold a line end;
/// a field a spreadsheet would run as a formula prefixed with `'`; quoted when it holds a
/// comma or a quote.
fn csv_field(s: &str) -> String {
    let s = visible(s.as_bytes());
    let s = if s.starts_with(['=', '+', '-', '@']) && s.parse::<f64>().is_err() {
        format!("'{s}")
    } else {
        s
    };
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// The report as CSV: one row per panel row, `panel,rank,` then each column as
/// `column=value` pairs would not be CSV; so every panel's rows share the columns
/// `panel,rank,key,method,protocol,hits,hits_percent,bytes,bytes_percent,visitors,visitors_percent`
/// (empty where a panel has no such column), after the header's figures as
/// `general,,NAME,,,VALUE` rows.
pub fn csv(m: &Value) -> String {
    const COLS: [&str; 8] = [
        "method",
        "protocol",
        "hits",
        "hits_percent",
        "bytes",
        "bytes_percent",
        "visitors",
        "visitors_percent",
    ];
    let mut o = String::from("panel,rank,key,method,protocol,hits,hits_percent,bytes,bytes_percent,visitors,visitors_percent\n");
    if let Some(g) = m["general"].as_object() {
        for (k, v) in g {
            let v = match v {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                v => v.to_string(),
            };
            let _ = writeln!(o, "general,,{},,,{},,,,,", csv_field(k), csv_field(&v));
        }
    }
    for p in m["panels"].as_array().map(|p| &p[..]).unwrap_or(&[]) {
        let id = p["id"].as_str().unwrap_or("");
        let cols = columns(p);
        let key = cols
            .iter()
            .find(|(c, _, kind)| *kind == "text" && !COLS.contains(c) && *c != "class")
            .or_else(|| cols.first())
            .map(|c| c.0)
            .unwrap_or("");
        for (i, row) in rows(p).iter().enumerate() {
            let mut f = vec![
                id.to_string(),
                (i + 1).to_string(),
                csv_field(&cell(&row[key], "text")),
            ];
            for c in COLS {
                f.push(match &row[c] {
                    Value::Null => String::new(),
                    Value::String(s) => csv_field(s),
                    v => v.to_string(),
                });
            }
            let _ = writeln!(o, "{}", f.join(","));
        }
    }
    o
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\t' => {
                let _ = write!(o, "\\x{:02x}", c as u32);
            }
            '\u{7f}' => o.push_str("\\x7f"),
            c => o.push(c),
        }
    }
    o
}

/// A round axis step for values up to `max` (1, 2 or 5 times a power of ten) and the axis
/// top.
fn axis(max: f64) -> (f64, f64) {
    if max <= 0.0 {
        return (1.0, 1.0);
    }
    let raw = max / 4.0;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p);
    (step, (max / step).ceil() * step)
}

/// The size of the charts' text (the style sheet's `.tick` and `.axis-title`).
const FONT: f64 = 12.0;
/// How far above and below its baseline a line of the charts' text reaches (in `FONT`s).
const ASCENT: f64 = 0.95;
const DESCENT: f64 = 0.25;
/// The angle of the labels under the bars (degrees).
const SLANT: f64 = 40.0;
/// The longest label drawn under a bar; a longer one is cut there with an ellipsis (the
/// bar's title, shown on hover, and the table have it whole).
const LABEL_CHARS: usize = 20;

/// About the width of `s` in the charts' text, a little more than DejaVu Sans gives it
/// (the widest of the usual sans-serif faces), so that what is measured to fit fits.
fn text_width(s: &str) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            ',' | '.' | ':' | ';' | ' ' | '\'' | '!' | '|' | 'i' | 'j' | 'l' => 0.36,
            '-' | '(' | ')' | '/' | 'f' | 'r' | 't' => 0.46,
            'M' | 'W' | 'm' | 'w' | '%' | '@' | '…' => 1.0,
            '0'..='9' | 'a'..='z' => 0.66,
            _ => 0.8,
        })
        .sum();
    em * FONT
}

/// A label cut to [`LABEL_CHARS`], with an ellipsis when it was longer.
fn label_text(l: &str) -> String {
    if l.chars().count() <= LABEL_CHARS {
        return l.to_string();
    }
    let mut cut: String = l.chars().take(LABEL_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// A bar chart (SVG) of a panel's rows: a y axis with round ticks and its title, labels
/// under the bars (thinned to fit, slanted, cut when long), each bar's value in its
/// `<title>` (shown on hover). The margins are measured from the labels, so that none is
/// cut by the chart's edge or drawn over another: the title, then the longest tick, on
/// the left; the longest label below; the first label's reach to the left.
fn chart(p: &Value) -> String {
    let Some(c) = p.get("chart") else {
        return String::new();
    };
    let (label, value) = (
        c["label"].as_str().unwrap_or(""),
        c["value"].as_str().unwrap_or(""),
    );
    let r = rows(p);
    if r.is_empty() {
        return String::new();
    }
    let vals: Vec<f64> = r
        .iter()
        .map(|row| row[value].as_f64().unwrap_or(0.0))
        .collect();
    let labels: Vec<String> = r.iter().map(|row| cell(&row[label], "text")).collect();
    let title = columns(p)
        .iter()
        .find(|c| c.0 == value)
        .map(|c| c.1.to_string())
        .unwrap_or_default();
    let (w, top, plot_h) = (760.0, 14.0, 176.0);
    let max = vals.iter().copied().fold(0.0, f64::max);
    let (step, axis_top) = axis(max);
    let ticks: Vec<(f64, String)> = std::iter::successors(Some(0.0), |t| Some(t + step))
        .take_while(|t| *t <= axis_top + step / 2.0)
        .map(|t| (t, grouped(t as u64)))
        .collect();
    let every = (vals.len() as f64 / 16.0).ceil().max(1.0) as usize;
    let shown: Vec<(usize, String)> = labels
        .iter()
        .enumerate()
        .step_by(every)
        .map(|(i, l)| (i, label_text(l)))
        .collect();
    let (sin, cos) = SLANT.to_radians().sin_cos();
    // The title's baseline (it reads upwards, its letters left of it), the ticks' right
    // edge, and the bars' width.
    let title_x = 2.0 + ASCENT * FONT;
    let tick_w = ticks.iter().map(|t| text_width(&t.1)).fold(0.0, f64::max);
    let bar_w = |left: f64| ((w - left - 10.0) / vals.len() as f64).min(60.0);
    let reach = shown.first().map_or(0.0, |(_, l)| {
        text_width(l) * cos + ASCENT * FONT * sin + 2.0
    });
    let mut left = title_x + DESCENT * FONT + 8.0 + tick_w + 6.0;
    left = left.max(reach - bar_w(reach) / 2.0);
    let bw = bar_w(left);
    // Bars at their widest leave room on the right: they stand in the middle.
    let x0 = left + (w - left - 10.0 - bw * vals.len() as f64) / 2.0;
    let longest = shown.iter().map(|(_, l)| text_width(l)).fold(0.0, f64::max);
    let base = top + plot_h;
    let h = (base + 12.0 + longest * sin + DESCENT * FONT * cos + 4.0).ceil();
    let mut s = format!(
        r#"<div class="plot"><svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{}"><text class="axis-title" x="{title_x:.1}" y="{}" text-anchor="middle" transform="rotate(-90 {title_x:.1} {})">{}</text>"#,
        esc(&format!("{} by {}", title, label)),
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        esc(&title)
    );
    for (t, text) in &ticks {
        let y = base - plot_h * t / axis_top;
        let _ = write!(
            s,
            r#"<line class="grid" x1="{left:.1}" x2="{}" y1="{y:.1}" y2="{y:.1}"/><text class="tick y" x="{:.1}" y="{:.1}" text-anchor="end">{text}</text>"#,
            w - 10.0,
            left - 6.0,
            y + 4.0,
        );
    }
    for (i, v) in vals.iter().enumerate() {
        let bh = plot_h * v / axis_top;
        let _ = write!(
            s,
            r#"<rect class="bar" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}"><title>{}: {}</title></rect>"#,
            x0 + i as f64 * bw + 1.0,
            base - bh,
            (bw - 2.0).max(1.0),
            bh,
            esc(&labels[i]),
            grouped(*v as u64)
        );
    }
    for (i, l) in &shown {
        let (x, y) = (x0 + (*i as f64 + 0.5) * bw, base + 12.0);
        let _ = write!(
            s,
            r#"<text class="tick x" x="{x:.1}" y="{y}" text-anchor="end" transform="rotate(-{SLANT} {x:.1} {y})">{}</text>"#,
            esc(l)
        );
    }
    let _ = write!(s, "</svg></div>");
    s
}

/// The page: one file, no network. The header and every panel's table are HTML (the
/// page reads without JavaScript); the charts are SVG drawn here. A small script sorts a
/// table when its header is clicked, pages long tables, switches the theme (the system's
/// by default) and reads `#sort=PANEL.COLUMN` or `#theme=dark|light` from the address.
/// Every string from the log is escaped; the model is embedded as JSON, escaped for a
/// `<script>` element.
pub fn html(m: &Value, info: Option<&PageInfo>) -> String {
    let mut body = String::new();
    html_cards(&mut body, &m["general"], info);
    let panels = m["panels"].as_array().map(|p| &p[..]).unwrap_or(&[]);
    html_nav(&mut body, panels);
    let _ = write!(body, "<main>");
    for p in panels {
        html_panel(&mut body, p);
    }
    let _ = write!(body, "</main>");
    let data = json_for_script(m);
    let refresh = match info.and_then(|i| i.refresh) {
        Some(n) => format!(r#"<meta http-equiv="refresh" content="{n}">"#),
        None => String::new(),
    };
    html_page(&refresh, &body, &data)
}

/// The page's header: the model's header `g` as cards, with the inputs, the generation
/// time and the parse time of `info` when there is one. A card's value stays on one line
/// (the card is as wide as it needs); the inputs' names wrap, each size on one line.
fn html_cards(body: &mut String, g: &Value, info: Option<&PageInfo>) {
    let _ = write!(
        body,
        r#"<header><h1>Access log report</h1><dl class="cards" id="cards">"#
    );
    let mut lines = general_lines(g);
    if let Some(i) = info {
        let names: Vec<String> = i
            .inputs
            .iter()
            .map(|(n, b)| {
                format!(
                    r#"{} <span class="num">({})</span>"#,
                    esc(n),
                    human_bytes(*b)
                )
            })
            .collect();
        let _ = write!(
            body,
            r#"<div class="card inputs"><dt>Inputs</dt><dd>{}</dd></div>"#,
            names.join(", ")
        );
        lines.push(("Generated", i.generated.clone()));
        lines.push(("Parse time", format!("{:.2} s", i.parse_seconds)));
    }
    for (k, v) in lines {
        let _ = write!(
            body,
            r#"<div class="card"><dt>{}</dt><dd>{}</dd></div>"#,
            esc(k),
            esc(&v)
        );
    }
    let _ = write!(body, "</dl></header>");
}

/// The page's table of contents: a link to each of the `panels`.
fn html_nav(body: &mut String, panels: &[Value]) {
    let _ = write!(body, "<nav>");
    for p in panels {
        let id = p["id"].as_str().unwrap_or("");
        let _ = write!(
            body,
            r##"<a href="#p-{}">{}</a> "##,
            esc(id),
            esc(p["title"].as_str().unwrap_or(""))
        );
    }
    let _ = write!(body, "</nav>");
}

/// A text column's cells longer than this many characters wrap, in a column given room
/// for them; shorter ones stay on one line.
const LONG_CELL: usize = 32;

/// Panel `p` as a section: its title, how many rows of how many it shows, its chart and
/// its table (each number cell carrying its value for sorting). The table's columns are
/// the model's, but for the request (the key of a request panel), which comes first, so
/// that on a narrow screen the table shows what each row is and scrolls (in its own box)
/// to the numbers.
fn html_panel(body: &mut String, p: &Value) {
    let id = p["id"].as_str().unwrap_or("");
    let mut cols = columns(p);
    if let Some(k) = cols.iter().position(|c| c.0 == "uri") {
        let uri = cols.remove(k);
        cols.insert(0, uri);
    }
    let r = rows(p);
    let long: Vec<bool> = cols
        .iter()
        .map(|(cid, _, kind)| {
            *kind == "text"
                && r.iter()
                    .any(|row| cell(&row[*cid], kind).chars().count() > LONG_CELL)
        })
        .collect();
    let _ = write!(
        body,
        r#"<section class="panel" id="p-{}" data-panel="{}"><h2>{}</h2><p class="note">{} shown</p>{}"#,
        esc(id),
        esc(id),
        esc(p["title"].as_str().unwrap_or("")),
        shown_of(p),
        chart(p)
    );
    let _ = write!(body, r#"<div class="scroll"><table><thead><tr>"#);
    for ((cid, title, kind), long) in cols.iter().zip(&long) {
        let class = if *long { r#" class="long""# } else { "" };
        let _ = write!(
            body,
            r#"<th data-col="{}" data-type="{}"{class}>{}</th>"#,
            esc(cid),
            esc(kind),
            esc(title)
        );
    }
    let _ = write!(body, "</tr></thead><tbody>");
    for row in r {
        let _ = write!(body, "<tr>");
        for ((cid, _, kind), long) in cols.iter().zip(&long) {
            let v = &row[*cid];
            let sort = match v {
                Value::Number(x) => format!(r#" data-v="{x}""#),
                _ => String::new(),
            };
            let class = match (*kind, long) {
                (_, true) => r#" class="w""#,
                ("text", false) => "",
                _ => r#" class="n""#,
            };
            let _ = write!(body, "<td{class}{sort}>{}</td>", esc(&cell(v, kind)));
        }
        let _ = write!(body, "</tr>");
    }
    let _ = write!(body, "</tbody></table></div></section>");
}

/// The whole page around `body`: the `refresh` element (or nothing), the style sheet, the
/// model as `data` for the script, and the script that sorts and pages the tables and
/// switches the theme.
fn html_page(refresh: &str, body: &str, data: &str) -> String {
    format!(
        r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">{refresh}<meta name="viewport" content="width=device-width, initial-scale=1"><title>swath logs summary</title>
<style>
:root{{--bg:#fff;--fg:#1d2330;--muted:#5b6475;--card:#f2f4f8;--line:#dde1e8;--bar:#3b6fd1;--grid:#e6e9ef}}
@media (prefers-color-scheme: dark){{:root:not([data-theme=light]){{--bg:#14171d;--fg:#e4e7ee;--muted:#9aa3b5;--card:#1f242d;--line:#323946;--bar:#6f9cf0;--grid:#2a303b}}}}
:root[data-theme=dark]{{--bg:#14171d;--fg:#e4e7ee;--muted:#9aa3b5;--card:#1f242d;--line:#323946;--bar:#6f9cf0;--grid:#2a303b}}
body{{font-family:system-ui,sans-serif;margin:0 auto;padding:1em;max-width:1100px;background:var(--bg);color:var(--fg)}}
h1{{font-size:1.4em}} h2{{font-size:1.1em;margin:.2em 0}} .note{{color:var(--muted);margin:.2em 0 .6em;font-size:.85em}}
.cards{{display:flex;flex-wrap:wrap;gap:.6em;margin:0}} .card{{flex:1 1 9em;background:var(--card);padding:.5em .8em;border-radius:6px}} .card.inputs{{flex-basis:18em}}
dt{{color:var(--muted);font-size:.8em}} dd{{margin:0;font-weight:600;white-space:nowrap}} .inputs dd{{white-space:normal;overflow-wrap:anywhere}} .num{{white-space:nowrap}}
nav{{margin:1em 0;line-height:1.8}} nav a{{margin-right:.6em;color:var(--bar);display:inline-block}}
.panel{{border-top:1px solid var(--line);padding:1em 0}} .scroll{{overflow-x:auto}}
table{{border-collapse:collapse;width:100%}} th,td{{padding:.2em .5em;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}}
td{{white-space:nowrap}} td.w{{white-space:normal;overflow-wrap:anywhere}} th.long{{min-width:min(24em,80vw)}} td.n,th[data-type=count],th[data-type=bytes],th[data-type=percent],th[data-type=micros]{{text-align:right;font-variant-numeric:tabular-nums}}
th{{cursor:pointer;user-select:none;white-space:nowrap}} th[aria-sort=ascending]::after{{content:" ▲"}} th[aria-sort=descending]::after{{content:" ▼"}}
.plot{{overflow-x:auto}} .chart{{display:block;width:100%;min-width:600px;max-width:880px;height:auto}} .bar{{fill:var(--bar)}} .grid{{stroke:var(--grid)}} .tick,.axis-title{{fill:var(--muted);font-size:12px}}
.pager{{margin:.4em 0;font-size:.9em}} .pager button,#theme{{background:var(--card);color:var(--fg);border:1px solid var(--line);border-radius:4px;padding:.1em .6em}}
#theme{{float:right}}
@media (max-width:32em){{body{{padding:.6em}} .cards{{font-size:.9em}}}}
</style></head><body>
<button id="theme" type="button" hidden>Theme</button>
{body}
<script id="data" type="application/json">{data}</script>
<script>
(function () {{
  const root = document.documentElement, PAGE = 10;
  const dark = () => root.dataset.theme ? root.dataset.theme === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
  const mark = () => {{ root.dataset.shown = dark() ? 'dark' : 'light'; root.dataset.bg = getComputedStyle(document.body).backgroundColor; }};
  const t = document.getElementById('theme');
  t.hidden = false;
  t.onclick = () => {{ root.dataset.theme = dark() ? 'light' : 'dark'; mark(); }};
  function page(sec, k) {{
    const rows = [...sec.querySelectorAll('tbody tr')], pages = Math.ceil(rows.length / PAGE);
    let pg = sec.querySelector('.pager');
    if (pages <= 1) {{ if (pg) pg.remove(); rows.forEach(r => r.hidden = false); return; }}
    k = Math.max(0, Math.min(k, pages - 1)); sec.dataset.page = k;
    rows.forEach((r, i) => r.hidden = Math.floor(i / PAGE) !== k);
    if (!pg) {{ pg = document.createElement('div'); pg.className = 'pager'; sec.appendChild(pg); }}
    pg.innerHTML = '';
    const b = (txt, to, off) => {{ const x = document.createElement('button'); x.type = 'button'; x.textContent = txt; x.disabled = off; x.onclick = () => page(sec, to); pg.appendChild(x); }};
    b('‹ Previous', k - 1, k === 0);
    pg.appendChild(document.createTextNode(' Page ' + (k + 1) + ' of ' + pages + ' '));
    b('Next ›', k + 1, k === pages - 1);
  }}
  function sort(sec, col, asc) {{
    const th = sec.querySelector('th[data-col="' + CSS.escape(col) + '"]');
    if (!th) return;
    const i = [...th.parentNode.children].indexOf(th), tb = sec.querySelector('tbody');
    const key = r => {{ const c = r.children[i]; return c.dataset.v !== undefined ? +c.dataset.v : c.textContent; }};
    const rows = [...tb.children].sort((a, b) => {{ const x = key(a), y = key(b); const o = typeof x === 'number' ? x - y : String(x).localeCompare(String(y)); return asc ? o : -o; }});
    rows.forEach(r => tb.appendChild(r));
    sec.querySelectorAll('th').forEach(h => h.removeAttribute('aria-sort'));
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
    page(sec, 0);
  }}
  document.querySelectorAll('section.panel').forEach(sec => {{
    sec.querySelectorAll('th').forEach(th => th.onclick = () => sort(sec, th.dataset.col, th.getAttribute('aria-sort') === 'descending'));
    page(sec, 0);
  }});
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get('theme')) root.dataset.theme = h.get('theme') === 'dark' ? 'dark' : 'light';
  for (const s of h.getAll('sort')) {{
    const [p, c, dir] = s.split('.');
    const sec = document.querySelector('section[data-panel="' + CSS.escape(p) + '"]');
    if (sec && c) sort(sec, c, dir !== 'desc');
  }}
  mark();
}})();
</script></body></html>
"##
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every panel of the table is in every output when the log has what it shows: the
    /// model (JSON) in the table's order, the text, the CSV and the page; and the
    /// report of the log cut in two and merged by the lists' rules is the whole log's.
    #[test]
    fn every_panel_of_the_table_is_in_every_output() {
        use swath_ops::logs::summary::{default_static, Statics, Summary, SummaryConfig};
        use swath_ops::logs::LineReport;
        let mut log = String::new();
        for (i, (uri, status)) in [("/a", 200), ("/s.css", 200), ("/gone", 404), ("/a", 500)]
            .iter()
            .enumerate()
        {
            log.push_str(&format!(
                concat!(
                    r#"{{"ts":{},"status":{},"uri":"{}","method":"GET","protocol":"HTTP/1.1","#,
                    r#""remote_addr":"10.0.0.{}","host":"h{}","remote_user":"u","duration":0.{},"size":{},"#,
                    r#""referer":"https://r.example/x","user_agent":"Mozilla/5.0 (compatible; Googlebot/2.1)"}}"#,
                    "\n"
                ),
                1709633730 + 3600 * i,
                status,
                uri,
                i % 2,
                i % 2,
                i + 1,
                100 * i
            ));
        }
        let config = SummaryConfig {
            format: swath_ops::logs::format::Format::named("json", b"").unwrap(),
            ..Default::default()
        };
        let exts = default_static();
        let exts = Statics::new(&exts, config.format.name());
        let read = |b: &str| {
            let mut s = Summary::default();
            s.block(&config, b.as_bytes());
            s
        };
        let whole = read(&log);
        let m = model(&whole.ranked(10, exts), "json");
        let ids: Vec<&str> = m["panels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, PANELS.iter().map(|p| p.id).collect::<Vec<_>>());
        let (t, c, h) = (text(&m), csv(&m), html(&m, None));
        for p in PANELS {
            assert!(t.contains(&format!("\n{} (", p.title)), "text: {}", p.id);
            assert!(c.contains(&format!("\n{},1,", p.id)), "csv: {}", p.id);
            assert!(h.contains(&format!(r#"id="p-{}""#, p.id)), "html: {}", p.id);
        }
        let cut = log.match_indices('\n').nth(1).unwrap().0 + 1;
        let state = |s: &Summary| {
            let mut out = Vec::new();
            s.encode_state(&mut out);
            out
        };
        let (a, b) = (state(&read(&log[..cut])), state(&read(&log[cut..])));
        let merged = swath_ops::logs::streamed::summary(&[&a, &b], 10, exts).unwrap();
        assert_eq!(model(&merged, "json"), m);
    }

    /// A panel's title line groups its counts as the rest of the report does, in the text
    /// and on the page.
    #[test]
    fn the_shown_of_distinct_counts_are_grouped() {
        let row = json!({"uri": "/a", "hits": 1234567});
        let m = json!({"general": {}, "panels": [panel(
            "requests",
            "Requests",
            23699,
            vec![col("uri", "Request", "text"), col("hits", "Hits", "count")],
            vec![row; 1000],
            None,
        )]});
        assert!(
            text(&m).contains("\nRequests (1,000 of 23,699)\n"),
            "{}",
            text(&m)
        );
        assert!(html(&m, None).contains(r#"<p class="note">1,000 of 23,699 shown</p>"#));
    }

    #[test]
    fn days_count_from_1970() {
        assert_eq!(civil_days(19700101), 0);
        assert_eq!(civil_days(20000301) - civil_days(20000228), 2);
        assert_eq!(civil_days(20240101) - civil_days(20231231), 1);
        assert_eq!(civil_days(20240306), 19788);
    }

    #[test]
    fn numbers_and_axes() {
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(12), "12");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(axis(870.0), (500.0, 1000.0));
        assert_eq!(axis(3.0), (1.0, 3.0));
        assert_eq!(csv_field("=cmd()"), "'=cmd()");
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
        assert_eq!(csv_field("-5"), "-5");
    }
}
