//! `swath grep --json`: ripgrep's JSON Lines messages (`begin`, `match`, `context`, `end`,
//! `summary`), written byte for byte as `rg --json` (13) writes them, so that tools built
//! for ripgrep's output read swath's.
//!
//! The messages are written by hand rather than through `serde_json::Value`, because their
//! key order is part of the format: ripgrep serializes `begin`, `match`, `context` and `end`
//! from structs (keys in declaration order) and `summary` from a `json!` map (keys sorted).
//! Strings go through `serde_json` for escaping, so they are escaped as ripgrep's are.
//! Text that is not UTF-8 (a line, a match, a file name) is `{"bytes": BASE64}` instead of
//! `{"text": ...}`, as in ripgrep. The layout is specified in docs/json.md.

use std::time::Duration;

use swath_ops::search::Selected;

/// The layout of swath's additions to the summary (`schema`), documented in docs/json.md.
pub const SCHEMA: u32 = 1;

/// What one file's search printed, for its `end` message and the run's `summary`.
#[derive(Debug, Default, Clone)]
pub struct FileStats {
    /// Time the file's search took.
    pub elapsed: Duration,
    /// Bytes of the file searched.
    pub bytes_searched: u64,
    /// Bytes of JSON printed for the file (`begin`, `match` and `context` messages).
    pub bytes_printed: u64,
    /// Selected lines (`match` messages).
    pub matched_lines: u64,
    /// Matches within the selected lines (their `submatches`).
    pub matches: u64,
}

/// The sums over every file that printed a `begin` message (ripgrep leaves the others
/// out of its summary).
#[derive(Debug, Default, Clone)]
pub struct Totals {
    searches: u64,
    files: FileStats,
}

impl Totals {
    /// Adds one file's figures.
    pub fn add(&mut self, f: &FileStats) {
        self.searches += 1;
        self.files.elapsed += f.elapsed;
        self.files.bytes_searched += f.bytes_searched;
        self.files.bytes_printed += f.bytes_printed;
        self.files.matched_lines += f.matched_lines;
        self.files.matches += f.matches;
    }
}

/// Appends `s` as a JSON string (serde_json's escaping, which is ripgrep's).
fn string(out: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(&mut *out, s).expect("writing to a Vec cannot fail");
}

/// `{"text":"..."}` for UTF-8 bytes, else `{"bytes":"BASE64"}`.
fn data(out: &mut Vec<u8>, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => {
            out.extend_from_slice(b"{\"text\":");
            string(out, s);
        }
        Err(_) => {
            out.extend_from_slice(b"{\"bytes\":\"");
            base64(out, bytes);
            out.push(b'"');
        }
    }
    out.push(b'}');
}

/// Standard base64 with padding (RFC 4648, section 4), as ripgrep encodes bytes.
fn base64(out: &mut Vec<u8>, bytes: &[u8]) {
    use base64::Engine;
    out.extend_from_slice(
        base64::engine::general_purpose::STANDARD
            .encode(bytes)
            .as_bytes(),
    );
}

/// `{"secs":S,"nanos":N,"human":"0.000017s"}`, or with keys sorted (the summary's).
fn elapsed(out: &mut Vec<u8>, d: Duration, sorted: bool) {
    let human = format!("{:0.6}s", d.as_secs_f64());
    let (secs, nanos) = (d.as_secs(), d.subsec_nanos());
    let text = if sorted {
        format!("{{\"human\":\"{human}\",\"nanos\":{nanos},\"secs\":{secs}}}")
    } else {
        format!("{{\"secs\":{secs},\"nanos\":{nanos},\"human\":\"{human}\"}}")
    };
    out.extend_from_slice(text.as_bytes());
}

/// `{"type":"begin",...}` before a file's first line.
pub fn begin(out: &mut Vec<u8>, path: &[u8]) {
    out.extend_from_slice(b"{\"type\":\"begin\",\"data\":{\"path\":");
    data(out, path);
    out.extend_from_slice(b"}}\n");
}

/// A `match` message for a selected line, `context` for a context line: the line with its
/// line end (`eol`, unless the input ended without one), its number, its offset in the
/// file and its matches (offsets within the line).
pub fn line(out: &mut Vec<u8>, path: &[u8], s: &Selected<'_>, eol: u8) {
    let kind = if s.context { "context" } else { "match" };
    out.extend_from_slice(format!("{{\"type\":\"{kind}\",\"data\":{{\"path\":").as_bytes());
    data(out, path);
    out.extend_from_slice(b",\"lines\":");
    if s.terminated {
        let mut whole = Vec::with_capacity(s.line.len() + 1);
        whole.extend_from_slice(s.line);
        whole.push(eol);
        data(out, &whole);
    } else {
        data(out, s.line);
    }
    out.extend_from_slice(
        format!(
            ",\"line_number\":{},\"absolute_offset\":{},\"submatches\":[",
            s.number, s.offset
        )
        .as_bytes(),
    );
    for (i, m) in s.matches.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"match\":");
        data(out, &s.line[m.clone()]);
        out.extend_from_slice(format!(",\"start\":{},\"end\":{}}}", m.start, m.end).as_bytes());
    }
    out.extend_from_slice(b"]}}\n");
}

/// The `stats` object of an `end` message, or the summary's (keys sorted, with `searches`
/// counted over the files).
fn stats(out: &mut Vec<u8>, searches: u64, with_match: u64, f: &FileStats, sorted: bool) {
    if sorted {
        out.extend_from_slice(
            format!(
                "{{\"bytes_printed\":{},\"bytes_searched\":{},\"elapsed\":",
                f.bytes_printed, f.bytes_searched
            )
            .as_bytes(),
        );
        elapsed(out, f.elapsed, true);
        out.extend_from_slice(
            format!(
                ",\"matched_lines\":{},\"matches\":{},\"searches\":{searches},\"searches_with_match\":{with_match}}}",
                f.matched_lines, f.matches
            )
            .as_bytes(),
        );
    } else {
        out.extend_from_slice(b"{\"elapsed\":");
        elapsed(out, f.elapsed, false);
        out.extend_from_slice(
            format!(
                ",\"searches\":{searches},\"searches_with_match\":{with_match},\"bytes_searched\":{},\"bytes_printed\":{},\"matched_lines\":{},\"matches\":{}}}",
                f.bytes_searched, f.bytes_printed, f.matched_lines, f.matches
            )
            .as_bytes(),
        );
    }
}

/// `{"type":"end",...}` after a file's last line. `binary_offset`: where the file was taken
/// as binary, if it was.
pub fn end(out: &mut Vec<u8>, path: &[u8], binary_offset: Option<u64>, f: &FileStats) {
    out.extend_from_slice(b"{\"type\":\"end\",\"data\":{\"path\":");
    data(out, path);
    let offset = binary_offset.map_or_else(|| "null".to_string(), |o| o.to_string());
    out.extend_from_slice(format!(",\"binary_offset\":{offset},\"stats\":").as_bytes());
    let with_match = u64::from(f.matched_lines > 0);
    stats(out, 1, with_match, f, false);
    out.extend_from_slice(b"}}\n");
}

/// The last message: the run's time and the sums of the files' figures, as ripgrep's
/// summary (keys sorted), with swath's `schema`, `tool` and `version` in its `data`.
pub fn summary(out: &mut Vec<u8>, t: &Totals, total: Duration) {
    out.extend_from_slice(b"{\"data\":{\"elapsed_total\":");
    elapsed(out, total, true);
    out.extend_from_slice(format!(",\"schema\":{SCHEMA},\"stats\":").as_bytes());
    // Every file counted printed a match (ripgrep counts only those).
    stats(out, t.searches, t.searches, &t.files, true);
    out.extend_from_slice(b",\"tool\":\"swath grep\",\"version\":");
    string(out, env!("CARGO_PKG_VERSION"));
    out.extend_from_slice(b"},\"type\":\"summary\"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &[u8]) -> String {
        let mut v = Vec::new();
        base64(&mut v, s);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn base64_rfc4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(b64(plain.as_bytes()), coded, "{plain:?}");
        }
        // Every byte value, against a bit-by-bit reference.
        let all: Vec<u8> = (0..=255).collect();
        let bits: String = all.iter().map(|b| format!("{b:08b}")).collect();
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut want: String = bits
            .as_bytes()
            .chunks(6)
            .map(|c| {
                let mut s = String::from_utf8(c.to_vec()).unwrap();
                while s.len() < 6 {
                    s.push('0');
                }
                alphabet.as_bytes()[usize::from_str_radix(&s, 2).unwrap()] as char
            })
            .collect();
        while !want.len().is_multiple_of(4) {
            want.push('=');
        }
        assert_eq!(b64(&all), want);
    }

    #[test]
    fn a_line_not_utf8_is_bytes_and_its_end_is_kept() {
        let line = b"bad \xff hello";
        let matches = [std::ops::Range { start: 6, end: 11 }];
        let s = Selected {
            number: 2,
            offset: 12,
            line,
            matches: &matches,
            context: false,
            terminated: true,
        };
        let mut out = Vec::new();
        super::line(&mut out, b"c.txt", &s, b'\n');
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"c.txt\"},\"lines\":{\"bytes\":\"YmFkIP8gaGVsbG8K\"},\"line_number\":2,\"absolute_offset\":12,\"submatches\":[{\"match\":{\"text\":\"hello\"},\"start\":6,\"end\":11}]}}\n"
        );
    }
}
