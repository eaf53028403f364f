//! `swath logs summary` against hostile logs and a log's writer who moves things while it is
//! followed (issue 26): escapes in the CSV, W3C headers that change, follows that meet a
//! planted link, a FIFO or another user's file.

use crate::util::{swath, Dir};

/// Splits CSV text into rows of fields (RFC 4180: a quoted field may hold commas, doubled
/// quotes and line ends).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(!quoted, "a quoted field is not closed");
    assert!(
        field.is_empty() && row.is_empty(),
        "the last row has no line end"
    );
    rows
}

/// Item 12: `--csv` writes no control character from the log (clear screen, title,
/// colours, C1 controls, a bare CR or a line end inside a field): each is escaped as the
/// text report escapes it (`\x1b`), a backslash doubled, and the CSV stays valid: every
/// row has the header's eleven fields.
#[test]
fn csv_escapes_the_logs_control_characters() {
    let dir = Dir::new();
    let mut log = Vec::new();
    // Clear screen and home, a window title, a colour, a C1 CSI (U+009B), DEL, a bare CR,
    // a tab, a backslash; in the URI, the referrer and the agent.
    let nasty = "\x1b[2J\x1b[H\x1b]0;owned\x07\x1b[31mred\u{9b}31m\x7f\rcr\tt\\b";
    for i in 0..3 {
        log.extend_from_slice(
            format!(
                "1.2.3.{i} - - [10/Oct/2000:13:55:36 -0700] \"GET /{nasty} HTTP/1.1\" 200 5 \"http://r/{nasty}\" \"agent {nasty}\"\n"
            )
            .as_bytes(),
        );
    }
    dir.write("e.log", &log);
    let out = swath(&dir, &["logs", "summary", "--csv", "e.log"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).expect("the CSV is UTF-8");
    for (i, c) in text.char_indices() {
        assert!(
            c == '\n' || !c.is_control(),
            "a raw control character {c:?} at byte {i} of the CSV:\n{text}"
        );
    }
    let rows = csv_rows(&text);
    assert!(rows.len() > 10, "{text}");
    for r in &rows {
        assert_eq!(r.len(), 11, "a row of {} fields: {r:?}", r.len());
    }
    // The request's key, escaped as the text report escapes it.
    let want = "/\\x1b[2J\\x1b[H\\x1b]0;owned\\x07\\x1b[31mred\\xc2\\x9b31m\\x7f\\x0dcr\\x09t\\\\b";
    assert!(
        rows.iter()
            .any(|r| r[0] == "requests" && r[2] == want && r[3] == "GET"),
        "no requests row with the key {want:?}:\n{text}"
    );
    let txt = swath(&dir, &["logs", "summary", "e.log"]);
    assert!(
        String::from_utf8_lossy(&txt.stdout).contains(want),
        "the text report escapes the key otherwise"
    );
}
