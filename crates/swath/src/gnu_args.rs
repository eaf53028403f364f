//! GNU getopt's behaviour on top of clap: long options abbreviated as GNU resolves them for
//! a tool's own option table, and clap's parse errors reworded as getopt words them, so
//! that swath can stand in for GNU tools in scripts that check their messages.

use std::ffi::OsString;

use clap::error::ErrorKind;

pub use swath_report::text::quote_name;

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
