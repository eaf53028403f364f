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
        eprintln!(
            "note: chromium not installed and SWATH_SKIP_BROWSER=1: report page test skipped"
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
fn browse(browser: &Path, dir: &Dir, page: &Path, mode: &str) -> String {
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
        .arg(mode)
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

    let dom = browse(&browser, &dir, &page, "--dump-dom");
    // Every panel is drawn: the five cards, the three charts, the six top lists.
    let cards = dom
        .split("id=\"cards\">")
        .nth(1)
        .and_then(|rest| rest.split("<h2>").next())
        .unwrap_or("");
    assert_eq!(cards.matches("<div class=\"card\">").count(), 5, "{dom}");
    assert!(cards.contains("Requests<b>45</b>"), "{cards}");
    assert!(
        dom.matches("<rect ").count() >= 3,
        "charts not drawn: {dom}"
    );
    for title in [
        "Top URIs",
        "Top URIs by bytes",
        "Top 404s",
        "Top clients",
        "Top referrers",
        "Top user agents",
    ] {
        assert!(
            dom.contains(&format!("<h2>{title}</h2><table>")),
            "{title}: {dom}"
        );
    }
    // Nothing from the log ran or became an element.
    // (The marker's code is shown as text; set, it would be an attribute of <html>.)
    assert!(
        !dom.contains("data-pwned=\"1\""),
        "a script from the log ran: {dom}"
    );
    assert!(dom.contains("<html lang=\"en\"><head>"), "{dom}");
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
        &format!("--screenshot={}", shot.display()),
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    if let Some(keep) = std::env::var_os("SWATH_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
