//! GNU getopt's behaviour on top of clap: long options abbreviated as GNU resolves them for
//! a tool's own option table, and clap's parse errors reworded as getopt words them, so
//! that swath can stand in for GNU tools in scripts that check their messages.

use std::ffi::OsString;

use clap::error::ErrorKind;

/// Resolves abbreviated long options the way GNU getopt does for cmp's own options (so
/// `--s` is `--silent` even though swath adds `--strategy`), and reports getopt's
/// ambiguity and "doesn't allow an argument" errors. Other options are left to clap.
pub fn expand_gnu_long_options(
    argv: &[OsString],
    table: &[(&str, bool)],
) -> Result<Vec<OsString>, String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut options_ended = false;
    for (i, arg) in argv.iter().enumerate() {
        let text = arg.to_string_lossy();
        if i == 0 || options_ended || !text.starts_with("--") || text.len() == 2 {
            options_ended |= i > 0 && text == "--";
            out.push(arg.clone());
            continue;
        }
        let body = &text[2..];
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let found =
            crate::getopt::resolve_long(name.as_bytes(), table, |o| o.0, |a, b| a.0 == b.0)?;
        let Some(chosen) = found else {
            out.push(arg.clone());
            continue;
        };
        if value.is_some() && !chosen.1 {
            return Err(format!("option '--{}' doesn't allow an argument", chosen.0));
        }
        out.push(match value {
            Some(v) => OsString::from(format!("--{}={v}", chosen.0)),
            None => OsString::from(format!("--{}", chosen.0)),
        });
    }
    Ok(out)
}

/// GNU getopt's wording for clap's parse errors.
pub fn gnu_usage_message(e: &clap::Error, argv: &[OsString]) -> String {
    use clap::error::{ContextKind, ContextValue};
    let arg = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    // clap names an argument as "--bytes <LIMIT>" or "-n <LIMIT>"; keep the flag itself.
    let flag = arg.split([' ', '=']).next().unwrap_or("").to_string();
    match e.kind() {
        ErrorKind::UnknownArgument => {
            if let Some(long) = flag.strip_prefix("--") {
                let typed = argv
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .find(|a| a.starts_with(&format!("--{long}")))
                    .map(|a| a.into_owned())
                    .unwrap_or(flag.clone());
                format!("unrecognized option '{typed}'")
            } else {
                format!("invalid option -- '{}'", flag.trim_start_matches('-'))
            }
        }
        ErrorKind::InvalidValue | ErrorKind::NoEquals if arg.is_empty() => {
            "option requires an argument".into()
        }
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let value = match e.get(ContextKind::InvalidValue) {
                Some(ContextValue::String(s)) => s.clone(),
                _ => String::new(),
            };
            if value.is_empty() {
                requires_argument(&flag, argv)
            } else {
                format!("invalid {flag} value '{value}'")
            }
        }
        _ => {
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            first.to_string()
        }
    }
}

/// The option missing its argument is the last word typed: GNU names it as typed, in its
/// long (`option '--bytes' requires an argument`) or short form.
fn requires_argument(flag: &str, argv: &[OsString]) -> String {
    let typed = argv
        .last()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    if typed.starts_with("--") {
        let long = typed.split('=').next().unwrap_or(&typed);
        let long = if flag.starts_with("--") { flag } else { long };
        format!("option '{long}' requires an argument")
    } else if let Some(short) = typed.strip_prefix('-').and_then(|s| s.chars().last()) {
        format!("option requires an argument -- '{short}'")
    } else {
        format!("option '{flag}' requires an argument")
    }
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

/// True when the character type locale (LC_ALL, LC_CTYPE, LANG) is UTF-8.
pub fn utf8_locale() -> bool {
    // SAFETY: called on the main thread before any worker starts; the returned string is
    // read at once and not kept.
    unsafe {
        libc::setlocale(libc::LC_ALL, c"".as_ptr());
        let cs = libc::nl_langinfo(libc::CODESET);
        !cs.is_null() && std::ffi::CStr::from_ptr(cs).to_bytes() == b"UTF-8"
    }
}

/// True when the locale's characters may take several bytes in an encoding other than
/// UTF-8 (EUC-JP, Shift_JIS, GB18030, Big5...): `MB_CUR_MAX > 1` and not UTF-8. Call after
/// [`utf8_locale`] (which sets the locale).
pub fn other_multibyte_locale() -> bool {
    unsafe extern "C" {
        /// glibc's `MB_CUR_MAX`.
        fn __ctype_get_mb_cur_max() -> usize;
    }
    // SAFETY: reads the current locale's maximum character length; no preconditions.
    let max = unsafe { __ctype_get_mb_cur_max() };
    max > 1 && !utf8_locale()
}

/// The locale's character encoding (`nl_langinfo(CODESET)`), for messages.
pub fn codeset() -> String {
    // SAFETY: the returned string is read at once and not kept.
    unsafe {
        let cs = libc::nl_langinfo(libc::CODESET);
        if cs.is_null() {
            return String::new();
        }
        std::ffi::CStr::from_ptr(cs).to_string_lossy().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::quote_name;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn quotes_as_gnu_quotef() {
        let q = |s: &[u8], utf8| quote_name(OsStr::from_bytes(s), utf8);
        assert_eq!(q(b"plain-name_1.txt", true), "plain-name_1.txt");
        assert_eq!(q(b"no such", true), "'no such'");
        assert_eq!(q(b"a'b", true), "\"a'b\"");
        assert_eq!(q(b"a\"b", true), "'a\"b'");
        assert_eq!(q(b"it's $x", true), "'it'\\''s $x'");
        assert_eq!(q(b"tab\tx", true), "'tab'$'\\t''x'");
        assert_eq!(q("\u{e9}".as_bytes(), true), "\u{e9}");
        assert_eq!(q("\u{e9}".as_bytes(), false), "''$'\\303\\251'");
        assert_eq!(q(b"~a", true), "'~a'");
        assert_eq!(q(b"a~b", true), "a~b");
        assert_eq!(q(b"a:b", true), "'a:b'");
        assert_eq!(q(b"a{b", true), "a{b");
    }
}
