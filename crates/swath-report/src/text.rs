//! Text as swath's reports show it: data from inputs made harmless for a terminal
//! ([`visible`], [`shown`]) and file names quoted as GNU tools quote them ([`quote_name`]).

/// `text` as a text report shows it, so that nothing read from an input can drive the
/// terminal: printable characters as they are; a backslash doubled (`\\`), so every escape
/// reads one way; control characters (C0, DEL, and C1 such as U+009B, a CSI on some
/// terminals) and bytes that are not UTF-8 as `\xHH`, one per byte; the invisible bidi
/// controls (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and the line and paragraph
/// separators U+2028, U+2029 as `\u{HHHH}`.
pub fn visible(text: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(text.len());
    let byte = |out: &mut String, b: u8| {
        let _ = write!(out, "\\x{b:02x}");
    };
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for &b in c.encode_utf8(&mut buf).as_bytes() {
                        byte(&mut out, b);
                    }
                }
                '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}' => {
                    let _ = write!(out, "\\u{{{:04x}}}", c as u32);
                }
                c => out.push(c),
            }
        }
        for &b in chunk.invalid() {
            byte(&mut out, b);
        }
    }
    out
}

/// A file name as GNU tools show it in messages (gnulib's `quotef`: shell-escape quoting,
/// only when needed): plain names as they are; names with shell-special characters in
/// single quotes (or double quotes when the name holds a single quote and nothing that
/// expands); control characters and bytes that are not characters as `$'\ooo'` escapes.
pub fn quote_name(name: &std::ffi::OsStr, utf8: bool) -> String {
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_bytes();
    // Split into characters: (bytes, needs an escape).
    let mut chars: Vec<(&[u8], bool)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            chars.push((&bytes[i..i + 1], b < 0x20 || b == 0x7f));
            i += 1;
            continue;
        }
        let len = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 1,
        };
        let valid = utf8
            && i + len <= bytes.len()
            && len > 1
            && std::str::from_utf8(&bytes[i..i + len]).is_ok();
        if valid {
            chars.push((&bytes[i..i + len], false));
            i += len;
        } else {
            chars.push((&bytes[i..i + 1], true));
            i += 1;
        }
    }
    let special = |k: usize, c: &[u8]| {
        matches!(
            c[0],
            b' ' | b'!'
                | b'"'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b';'
                | b'<'
                | b'='
                | b'>'
                | b'?'
                | b'['
                | b'\\'
                | b'^'
                | b'`'
                | b'|'
                | b':'
        ) || (k == 0 && matches!(c[0], b'#' | b'~'))
    };
    let needs_escape = chars.iter().any(|&(_, e)| e);
    let needs_quotes = needs_escape
        || bytes.is_empty()
        || chars.iter().enumerate().any(|(k, &(c, _))| special(k, c));
    if !needs_quotes {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let text = |c: &[u8]| String::from_utf8_lossy(c).into_owned();
    if !needs_escape {
        let has_single = bytes.contains(&b'\'');
        let expands = bytes
            .iter()
            .any(|b| matches!(b, b'$' | b'`' | b'\\' | b'"' | b'!'));
        if has_single && !expands {
            return format!("\"{}\"", text(bytes));
        }
        return format!("'{}'", text(bytes).replace('\'', "'\\''"));
    }
    let mut out = String::new();
    let mut k = 0;
    while k < chars.len() {
        if chars[k].1 {
            if out.is_empty() {
                out.push_str("''");
            }
            out.push_str("$'");
            while k < chars.len() && chars[k].1 {
                for &b in chars[k].0 {
                    match b {
                        b'\t' => out.push_str("\\t"),
                        b'\n' => out.push_str("\\n"),
                        b'\r' => out.push_str("\\r"),
                        0x0b => out.push_str("\\v"),
                        0x0c => out.push_str("\\f"),
                        0x07 => out.push_str("\\a"),
                        0x08 => out.push_str("\\b"),
                        _ => out.push_str(&format!("\\{b:03o}")),
                    }
                }
                k += 1;
            }
            out.push('\'');
        } else {
            out.push('\'');
            while k < chars.len() && !chars[k].1 {
                let t = text(chars[k].0);
                out.push_str(&t.replace('\'', "'\\''"));
                k += 1;
            }
            out.push('\'');
        }
    }
    out
}

/// A key as a text report prints it: its first 60 bytes (not splitting a character), then
/// `...`; control characters and bytes that are not UTF-8 escaped so that a log cannot drive
/// the terminal ([`visible`]: `\x1b`, a backslash as `\\`).
pub fn shown(key: &[u8]) -> String {
    const WIDTH: usize = 60;
    if key.len() <= WIDTH {
        return visible(key);
    }
    let mut cut = WIDTH;
    // Back off to the start of a UTF-8 character (at most 3 continuation bytes).
    while cut > WIDTH - 3 && key[cut] & 0xC0 == 0x80 {
        cut -= 1;
    }
    if key[cut] & 0xC0 == 0x80 {
        cut = WIDTH;
    }
    visible(&key[..cut]) + "..."
}
