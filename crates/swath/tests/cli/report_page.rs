//! The HTML report (`swath logs summary --html`) in a real browser: a log whose fields are
//! hostile (an HTML comment opener, a `</script>`, an `<img onerror>`, U+2028, terminal
//! escapes, quotes) must leave every panel drawn and run no script from the log; and a
//! log of a busy site's lengths (long requests, many-digit counts and sizes, two days of
//! hours) must read well from a phone to a wide screen: at 420, 900 and 1400 pixels a
//! script in the page checks that no text overflows its box, no number breaks across
//! lines, no chart label is clipped or hidden under the axis title, and the tables keep
//! short rows and scroll in their own boxes; screenshots of each width are taken too.
//!
//! Runs headless Chromium (Debian's `chromium`, which CI installs). Without it the test
//! fails, unless `SWATH_SKIP_BROWSER=1` is set, when it is skipped with a note.

use crate::util::{swath, Dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser, or `None` (with a note) when the caller allowed skipping.
fn chromium() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if found.is_none() && std::env::var_os("SWATH_SKIP_BROWSER").is_some_and(|v| v == "1") {
        swath_engine::testing::skip(
            "chromium not installed and SWATH_SKIP_BROWSER=1: report page test skipped",
        );
        return None;
    }
    Some(found.expect(
        "headless Chromium is required for the report page test: apt-get install chromium \
         (or set SWATH_SKIP_BROWSER=1 to skip it)",
    ))
}

/// The window the hostile-fields test browses in (width, height in CSS pixels).
const WINDOW: (u32, u32) = (1000, 2600);

/// Runs headless Chromium on `page` in a window of `(width, height)` with `mode`
/// (`--dump-dom`, `--screenshot=...`) and returns its standard output.
fn browse(browser: &Path, dir: &Dir, page: &Path, window: (u32, u32), mode: &[&str]) -> String {
    let profile = dir.path("chromium-profile");
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--window-size={},{}", window.0, window.1))
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(mode)
        .arg(format!("file://{}", page.display()))
        .env("HOME", dir.tmp.path())
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Takes a screenshot of `page` in a window of `window` into `shot` (a PNG).
fn screenshot(browser: &Path, dir: &Dir, page: &Path, window: (u32, u32), shot: &Path) {
    browse(
        browser,
        dir,
        page,
        window,
        &[&format!("--screenshot={}", shot.display())],
    );
    let png = std::fs::read(shot).expect("screenshot written");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
}

/// Copies screenshot `shot` as `name` into the directory `SWATH_KEEP_SCREENSHOTS` names,
/// when it is set, for a person to look at.
fn keep(shot: &Path, name: &str) {
    if let Some(keep) = std::env::var_os("SWATH_KEEP_SCREENSHOTS") {
        let keep = Path::new(&keep);
        std::fs::create_dir_all(keep).unwrap();
        std::fs::copy(shot, keep.join(name)).unwrap();
    }
}

/// The `<section>` of panel `id` in a page.
fn section<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("data-panel=\"{id}\""))
        .unwrap_or_else(|| panic!("no panel {id}"));
    let rest = &dom[start..];
    &rest[..rest.find("</section>").unwrap()]
}

/// The text of the first body cell of a panel's table.
fn first_cell(section: &str) -> &str {
    let body = &section[section.find("<tbody>").unwrap()..];
    let cell = &body[body.find("<td").unwrap()..];
    &cell[..cell.find("</td>").unwrap()]
}

/// A combined-format log line.
fn line(client: &str, uri: &str, status: u16, referrer: &str, agent: &str) -> String {
    format!(
        "{client} - - [10/Oct/2024:13:55:36 +0000] \"GET {uri} HTTP/1.1\" {status} 512 \"{referrer}\" \"{agent}\"\n"
    )
}

#[test]
fn html_report_with_hostile_fields_shows_every_panel_and_runs_no_script_from_the_log() {
    let Some(browser) = chromium() else {
        return;
    };
    let dir = Dir::new();
    let mark = "document.documentElement.setAttribute('data-pwned','1')";
    let agents = [
        "<!--<script>".to_string(),
        format!("</script><script>{mark}</script>"),
        format!("<img src=x onerror={mark}>"),
        "line\u{2028}and\u{2029}paragraph".to_string(),
        "\x1b]0;title\x07\x1b[2J\x1b[31mred".to_string(),
        "it's & <b>bold</b>".to_string(),
    ];
    let uris = [
        "/<!--<script>".to_string(),
        format!("/<svg/onload={mark}>"),
        "/x\u{2028}y".to_string(),
    ];
    let mut log = String::new();
    for (i, agent) in agents.iter().enumerate() {
        for j in 0..(10 - i) {
            let uri = &uris[(i + j) % uris.len()];
            let status = if j % 3 == 0 { 404 } else { 200 };
            let referrer = format!("http://ref/<!--<script>{i}");
            log.push_str(&line(&format!("10.0.0.{i}"), uri, status, &referrer, agent));
        }
    }
    dir.write("hostile.log", log.as_bytes());
    let page = dir.path("report.html");
    let out = swath(
        &dir,
        &["logs", "summary", "--html", "report.html", "hostile.log"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // The embedded data holds no markup that could end or re-enter its element.
    let data = html
        .split("<script id=\"data\" type=\"application/json\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .expect("data element");
    for bad in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
        assert!(!data.contains(bad), "embedded JSON holds {bad:?}");
    }

    let dom = browse(&browser, &dir, &page, WINDOW, &["--dump-dom"]);
    let json = swath(&dir, &["logs", "summary", "--json", "hostile.log"]);
    let model: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    // Every panel of the JSON is a section of the page with a chart where the JSON has
    // one, and its rows as table rows: the same values, cell by cell.
    let panels = model["panels"].as_array().unwrap();
    assert!(panels.len() >= 18, "{} panels", panels.len());
    for p in panels {
        let id = p["id"].as_str().unwrap();
        let sec = section(&dom, id);
        let rows = p["rows"].as_array().unwrap();
        assert_eq!(sec.matches("<tr").count(), rows.len() + 1, "{id}: {sec}");
        // The page's own text (what a browser without JavaScript shows) has the table and
        // the chart already: the script only sorts, pages and switches themes.
        let source = section(&html, id);
        assert_eq!(
            source.matches("<tr").count(),
            rows.len() + 1,
            "{id} without JavaScript"
        );
        assert_eq!(
            source.contains("<svg"),
            sec.contains("<svg"),
            "{id} without JavaScript"
        );
        if p.get("chart").is_some() && !rows.is_empty() {
            assert!(sec.contains("<svg class=\"chart\""), "{id}: no chart");
            assert!(sec.contains("class=\"axis-title\""), "{id}: no axis title");
            assert!(
                sec.matches("class=\"bar\"").count() == rows.len(),
                "{id}: bars"
            );
        }
        for (col, kind) in p["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].as_str().unwrap(), c["type"].as_str().unwrap()))
        {
            for r in rows {
                if let Some(n) = r[col].as_u64() {
                    assert!(
                        sec.contains(&format!("data-v=\"{n}\"")),
                        "{id}.{col} {n} ({kind}) not in the table"
                    );
                }
            }
        }
    }
    let g = &model["general"];
    assert_eq!(g["requests"], 45);
    assert!(
        dom.contains("<dt>Requests</dt><dd>45</dd>"),
        "header: {dom}"
    );
    assert!(
        dom.contains("<dt>Unique visitors</dt><dd>6</dd>"),
        "header: {dom}"
    );
    assert!(
        dom.contains("<dt>Inputs</dt><dd>hostile.log <span class=\"num\">("),
        "header: {dom}"
    );
    // Ten rows a page: the 404s fit one page; the agents panel has 6 rows.
    let hosts = section(&dom, "hosts");
    assert_eq!(hosts.matches("<tr hidden=\"\"").count(), 0, "{hosts}");
    // Sorting: by hits ascending (#sort=hosts.hits.asc) the first host is the one with
    // fewest requests, 10.0.0.5 (5 of them); unsorted it is 10.0.0.0 (10).
    assert!(first_cell(hosts).contains("10.0.0.0"), "{hosts}");
    let sorted_page = format!("{}#sort=hosts.hits.asc", page.display());
    let sorted = browse(
        &browser,
        &dir,
        Path::new(&sorted_page),
        WINDOW,
        &["--dump-dom"],
    );
    let hosts = section(&sorted, "hosts");
    assert!(first_cell(hosts).contains("10.0.0.5"), "{hosts}");
    assert!(hosts.contains("aria-sort=\"ascending\""), "{hosts}");
    // Themes: the system's (light here, dark when the browser prefers dark), or the one
    // asked for; the background colour is the theme's.
    assert!(
        dom.contains("data-shown=\"light\" data-bg=\"rgb(255, 255, 255)\""),
        "light: {}",
        &dom[..300]
    );
    let dark = browse(
        &browser,
        &dir,
        Path::new(&format!("{}#theme=dark", page.display())),
        WINDOW,
        &["--dump-dom"],
    );
    assert!(
        dark.contains("data-shown=\"dark\" data-bg=\"rgb(20, 23, 29)\""),
        "dark: {}",
        &dark[..300]
    );
    let system = browse(
        &browser,
        &dir,
        &page,
        WINDOW,
        &["--force-dark-mode", "--dump-dom"],
    );
    assert!(
        system.contains("data-shown=\"dark\" data-bg=\"rgb(20, 23, 29)\""),
        "the system's dark theme: {}",
        &system[..300]
    );
    // Nothing from the log ran or became an element.
    // (The marker's code is shown as text; set, it would be an attribute of <html>.)
    assert!(
        !dom.contains("data-pwned=\"1\""),
        "a script from the log ran: {dom}"
    );
    assert!(
        dom.contains("<html lang=\"en\" data-shown=\"light\""),
        "{dom}"
    );
    assert!(!dom.contains("<img"), "an element from the log: {dom}");
    assert!(!dom.contains("<svg/"), "an element from the log: {dom}");
    assert!(!dom.contains("<b>bold"), "an element from the log: {dom}");
    // The hostile fields are shown as text (a cell's whole text, in cells of long
    // columns too: `<td class="w">`).
    for shown in [
        "\">&lt;!--&lt;script&gt;</td>",
        "\">/&lt;svg/onload=document.documentElement",
        "&lt;/script&gt;&lt;script&gt;document.documentElement",
        "&lt;img src=x onerror=",
        "<td>http://ref/&lt;!--&lt;script&gt;0</td>",
        "line\u{2028}and\u{2029}paragraph",
        "it's &amp; &lt;b&gt;bold&lt;/b&gt;",
        "/x\u{2028}y",
    ] {
        assert!(dom.contains(shown), "{shown:?} not shown as text: {dom}");
    }

    // A screenshot renders too (kept under target/ for a person to look at).
    let shot = dir.path("report.png");
    screenshot(&browser, &dir, &page, WINDOW, &shot);
    keep(&shot, "hostile.png");
}

/// A script run in the page after its own: it checks that everything reads at the
/// window's width, and writes what it found as JSON into a `<script id="probe">` element
/// (which `--dump-dom` prints as it is): the width, the page's height, how many things it
/// checked of each kind, and the problems, each as one line naming the panel. The page is
/// shown in a frame of the width to check (see the test).
const PROBE: &str = r#"<script>
(function () {
  const W = innerWidth, bad = [], checked = {boxes: 0, numbers: 0, labels: 0, rows: 0};
  const model = JSON.parse(document.getElementById('data').textContent);
  const where = el => { const s = el.closest('section'); return (s ? s.dataset.panel : 'header') + ' ' + el.tagName.toLowerCase(); };
  const said = el => JSON.stringify(el.textContent.trim().slice(0, 60));
  const cut = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const shown = el => el.getClientRects().length > 0;
  if (document.documentElement.scrollWidth > W)
    bad.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' px wide');
  // No text overflows its box.
  for (const el of document.querySelectorAll('h1, h2, .note, nav, dt, dd, th, td, .pager')) {
    if (!shown(el)) continue;
    checked.boxes++;
    if (el.scrollWidth > el.clientWidth + 1)
      bad.push(`text overflows its box: ${where(el)} ${said(el)} (${el.scrollWidth} > ${el.clientWidth} px)`);
  }
  // Numbers, dates and times are never broken across lines: in the cards, the notes and
  // every cell that holds nothing else.
  for (const el of document.querySelectorAll('dd, .note, td, th')) {
    if (!shown(el) || (el.tagName === 'TD' && !/^[\d\s,.:+%-]+$/.test(el.textContent))) continue;
    const text = el.firstChild;
    if (!text || text.nodeType !== Node.TEXT_NODE) continue;
    for (const m of text.data.matchAll(/\d[\d,.:-]*\d/g)) {
      checked.numbers++;
      const r = document.createRange();
      r.setStart(text, m.index);
      r.setEnd(text, m.index + m[0].length);
      if (new Set([...r.getClientRects()].map(q => Math.round(q.top))).size > 1)
        bad.push(`a number broken across lines: ${where(el)} ${JSON.stringify(m[0])} in ${said(el)}`);
    }
  }
  for (const sec of document.querySelectorAll('section.panel')) {
    const p = model.panels.find(p => p.id === sec.dataset.panel);
    const box = sec.querySelector('.scroll'), table = box.querySelector('table');
    // A table wider than the window scrolls in its own box, and the key (the request of
    // a request panel) is its first column, on screen.
    if (table.offsetWidth > box.clientWidth && !/auto|scroll/.test(getComputedStyle(box).overflowX))
      bad.push(`${p.id}: a table wider than its box does not scroll in it`);
    const key = p.columns.find(c => c.id === 'uri') || p.columns.find(c => c.type === 'text');
    const first = table.querySelector('thead th');
    if (key && (first.dataset.col !== key.id || first.getBoundingClientRect().left >= W))
      bad.push(`${p.id}: the first column is ${first.dataset.col}, not ${key.id}, or off-screen`);
    // Rows at most four lines of text high (a long user agent on a phone).
    const line = parseFloat(getComputedStyle(table).lineHeight) || 1.2 * parseFloat(getComputedStyle(table).fontSize);
    for (const tr of table.querySelectorAll('tbody tr')) {
      if (!shown(tr)) continue;
      checked.rows++;
      if (tr.getBoundingClientRect().height > 4.5 * line + 8)
        bad.push(`${p.id}: a row ${Math.round(tr.getBoundingClientRect().height)} px high: ${said(tr)}`);
    }
    const svg = sec.querySelector('svg.chart');
    if (!svg) continue;
    // Every label of the chart inside its view box, readable (9 px or more on screen),
    // whole (a row's label, or its beginning and an ellipsis), clear of the axis title,
    // which stands left of the ticks (the unturned labels).
    const vb = svg.viewBox.baseVal, inv = svg.getScreenCTM().inverse();
    const scale = svg.getScreenCTM().a;
    const title = svg.querySelector('.axis-title');
    const labels = p.rows.map(r => String(r[p.chart.label]));
    for (const t of svg.querySelectorAll('text')) {
      checked.labels++;
      const b = t.getBBox(), m = inv.multiply(t.getScreenCTM());
      const pts = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]]
        .map(([x, y]) => new DOMPoint(x, y).matrixTransform(m));
      const xs = pts.map(q => q.x), ys = pts.map(q => q.y);
      if (Math.min(...xs) < vb.x - 0.5 || Math.min(...ys) < vb.y - 0.5 || Math.max(...xs) > vb.x + vb.width + 0.5 || Math.max(...ys) > vb.y + vb.height + 0.5)
        bad.push(`${p.id}: chart label ${said(t)} is clipped by the chart's edge`);
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < 9) bad.push(`${p.id}: chart label ${said(t)} is ${px.toFixed(1)} px high on screen`);
      const [a, z] = [t.getBoundingClientRect(), title.getBoundingClientRect()];
      if (t !== title && (cut(a, z) || (!t.hasAttribute('transform') && z.right > a.left)))
        bad.push(`${p.id}: the axis title overlaps ${said(t)} or is not left of it`);
      if (t.classList.contains('x')) {
        const s = t.textContent;
        if (!labels.includes(s) && !(s.endsWith('…') && labels.some(l => l.startsWith(s.slice(0, -1)))))
          bad.push(`${p.id}: chart label ${said(t)} is not a row's label`);
      }
    }
  }
  const out = document.createElement('script');
  out.id = 'probe';
  out.type = 'application/json';
  out.textContent = JSON.stringify({width: W, height: document.documentElement.scrollHeight, checked, bad}).replace(/</g, '\\u003c');
  document.body.appendChild(out);
})();
</script>"#;

/// The format of the log [`big_log`] writes: combined, with the microseconds taken.
const TIMED_COMBINED: &str = r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D"#;

/// Writes a log of two days (every hour of both) with the lengths a busy site's has: many
/// distinct long requests, IPv6 clients, long referrers and agents, large responses and
/// times, as `varied.log`; and, as `feed.log.zst`, 1,100,000 requests of one feed at 13:00
/// (a million hits in an hour: seven-digit ticks; 476 GB sent: twelve digits). Returns
/// the bytes sent.
fn big_log(dir: &Dir) -> u64 {
    use std::fmt::Write as _;
    use std::io::Write as _;
    const AGENTS: [&str; 5] = [
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36 Edg/119.0.2151.97",
    ];
    const STATUSES: [u16; 7] = [200, 200, 200, 304, 404, 500, 301];
    let mut log = String::new();
    let (n, feeds, feed_bytes) = (4800u64, 1_100_000, 415_000);
    let mut sent = feeds * feed_bytes;
    for i in 0..n {
        let hour = i * 48 / n;
        let client = if i % 5 == 0 {
            format!("2001:db8:{:x}:{:x}::{:x}", i % 7, i % 13, i % 2000)
        } else {
            format!("192.0.{}.{}", i % 50, i % 251)
        };
        let uri = match i % 4 {
            0 => format!(
                "/wiki/Special:Search?search=access+log+analysis+{i}&fulltext=Search&profile=advanced&ns0=1"
            ),
            1 => format!(
                "/static/js/vendor.{:016x}.min.js",
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ),
            2 => format!("/api/v2/reports/{}/export?format=csv&tz=Europe%2FBerlin", i % 97),
            _ => format!("/images/gallery/2007/10/photo-{:05}.jpg", i % 400),
        };
        let bytes = 1000 + i * 7919 % 9_000_000;
        sent += bytes;
        let referrer = if i % 3 == 0 {
            "-".to_string()
        } else {
            format!(
                "https://www.example-search-engine.com/search?q=swath+report+{}&hl=en",
                i % 40
            )
        };
        writeln!(
            log,
            r#"{client} - - [{:02}/Oct/2007:{:02}:{:02}:{:02} +0000] "GET {uri} HTTP/1.1" {} {} "{referrer}" "{}" {}"#,
            1 + hour / 24,
            hour % 24,
            i % 60,
            i * 7 % 60,
            STATUSES[i as usize % STATUSES.len()],
            bytes,
            AGENTS[i as usize % AGENTS.len()],
            i * 7919 % 30_000_000,
        )
        .unwrap();
    }
    dir.write("varied.log", log.as_bytes());
    let file = std::fs::File::create(dir.path("feed.log.zst")).unwrap();
    let mut z = zstd::stream::write::Encoder::new(file, 1).unwrap();
    let feed = format!(
        "203.0.113.9 - - [02/Oct/2007:13:05:00 +0000] \"GET /feed.xml HTTP/1.1\" 200 {feed_bytes} \"-\" \"Feedfetcher-Google\" 1520\n"
    );
    for _ in 0..feeds {
        z.write_all(feed.as_bytes()).unwrap();
    }
    z.finish().unwrap();
    sent
}

#[test]
fn html_report_reads_well_from_a_phone_to_a_wide_screen() {
    let Some(browser) = chromium() else {
        return;
    };
    let dir = Dir::new();
    let sent = big_log(&dir);
    let out = swath(
        &dir,
        &[
            "logs",
            "summary",
            "--format",
            TIMED_COMBINED,
            "--html",
            "report.html",
            "varied.log",
            "feed.log.zst",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(dir.path("report.html")).unwrap();
    let sent = swath_report::summary::grouped(sent);
    assert_eq!(sent.len(), 15, "twelve digits: {sent}");
    assert!(
        html.contains(&format!("<dd>{sent} (")),
        "bytes sent: {sent}"
    );
    let (body, end) = html.rsplit_once("</body>").expect("a page");
    let probed = format!("{body}{PROBE}</body>{end}");
    dir.write("probed.html", probed.as_bytes());
    let mut problems = Vec::new();
    for width in [420, 900, 1400] {
        // The page in a frame of the width (Chromium's windows are 500 pixels wide or
        // more), the frame's findings copied out to the window's page once it has loaded.
        let framed = |height: u32| {
            let frame = format!(
                r#"<!DOCTYPE html><html><head><style>body{{margin:0}} iframe{{border:0;display:block}}</style></head><body>
<iframe id="page" src="probed.html" width="{width}" height="{height}"></iframe>
<script>addEventListener('load', () => {{
  const found = document.createElement('script');
  found.id = 'probe'; found.type = 'application/json';
  found.textContent = document.getElementById('page').contentDocument.getElementById('probe').textContent;
  document.body.appendChild(found);
}});</script></body></html>"#
            );
            dir.write(&format!("frame-{width}.html"), frame.as_bytes())
        };
        let window = (width.max(500), 900);
        let dom = browse(
            &browser,
            &dir,
            &framed(window.1),
            window,
            &["--allow-file-access-from-files", "--dump-dom"],
        );
        let found: serde_json::Value = dom
            .split("<script id=\"probe\" type=\"application/json\">")
            .nth(1)
            .and_then(|rest| rest.split("</script>").next())
            .and_then(|json| serde_json::from_str(json).ok())
            .unwrap_or_else(|| panic!("no probe's findings at {width} px: {dom}"));
        assert_eq!(found["width"], width, "the frame's width");
        // It looked at what it should: every box, number, row and chart label.
        let checked = &found["checked"];
        for (what, least) in [
            ("boxes", 800),
            ("numbers", 400),
            ("labels", 100),
            ("rows", 100),
        ] {
            assert!(
                checked[what].as_u64().unwrap() >= least,
                "{width} px: {checked}"
            );
        }
        for p in found["bad"].as_array().unwrap() {
            problems.push(format!("{width} px: {}", p.as_str().unwrap()));
        }
        // The whole page, for a person to look at (SWATH_KEEP_SCREENSHOTS=DIR).
        let height = found["height"].as_u64().unwrap() as u32;
        let shot = dir.path(&format!("page-{width}.png"));
        screenshot(&browser, &dir, &framed(height), (window.0, height), &shot);
        keep(&shot, &format!("page-{width}.png"));
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
