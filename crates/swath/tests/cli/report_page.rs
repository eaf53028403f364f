//! The HTML report (`swath logs summary --html`) in a real browser: a log whose fields are
//! hostile (an HTML comment opener, a `</script>`, an `<img onerror>`, U+2028, terminal
//! escapes, quotes) must leave every panel drawn and run no script from the log.
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

/// Runs headless Chromium on `page` with `mode` (`--dump-dom`, `--screenshot=...`) and
/// returns its standard output.
fn browse(browser: &Path, dir: &Dir, page: &Path, mode: &[&str]) -> String {
    let profile = dir.path("chromium-profile");
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--window-size=1000,2600",
        ])
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

    let dom = browse(&browser, &dir, &page, &["--dump-dom"]);
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
        dom.contains("<dt>Inputs</dt><dd>hostile.log (5.3 KiB)</dd>")
            || dom.contains("<dt>Inputs</dt><dd>hostile.log ("),
        "header: {dom}"
    );
    // Ten rows a page: the 404s fit one page; the agents panel has 6 rows.
    let hosts = section(&dom, "hosts");
    assert_eq!(hosts.matches("<tr hidden=\"\"").count(), 0, "{hosts}");
    // Sorting: by hits ascending (#sort=hosts.hits.asc) the first host is the one with
    // fewest requests, 10.0.0.5 (5 of them); unsorted it is 10.0.0.0 (10).
    assert!(first_cell(hosts).contains("10.0.0.0"), "{hosts}");
    let sorted_page = format!("{}#sort=hosts.hits.asc", page.display());
    let sorted = browse(&browser, &dir, Path::new(&sorted_page), &["--dump-dom"]);
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
        &["--dump-dom"],
    );
    assert!(
        dark.contains("data-shown=\"dark\" data-bg=\"rgb(20, 23, 29)\""),
        "dark: {}",
        &dark[..300]
    );
    let system = browse(&browser, &dir, &page, &["--force-dark-mode", "--dump-dom"]);
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
    // The hostile fields are shown as text.
    for shown in [
        "<td>&lt;!--&lt;script&gt;</td>",
        "<td>/&lt;svg/onload=document.documentElement",
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
    browse(
        &browser,
        &dir,
        &page,
        &[&format!("--screenshot={}", shot.display())],
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    if let Some(keep) = std::env::var_os("SWATH_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
