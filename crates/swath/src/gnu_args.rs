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
            let size = std::error::Error::source(e)
                .and_then(|s| s.downcast_ref())
                .is_some_and(|o: &swath_engine::plan::OptionError| {
                    matches!(o, swath_engine::plan::OptionError::Size(_))
                });
            if value.is_empty() {
                requires_argument(&flag, argv)
            } else if size {
                let forms = swath_engine::size::SIZE_FORMS;
                format!("invalid {flag} value '{value}' ({forms})")
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
/// UTF-8 (EUC-JP, Shift_JIS, GB18030, Big5...): grep then matches through glibc's regex in
/// that encoding ([`swath_grep::multibyte`]). Sets the locale first, as [`utf8_locale`].
pub fn other_multibyte_locale() -> bool {
    utf8_locale();
    swath_grep::multibyte::other_multibyte_locale()
}

/// gnulib's quotation marks (`gettext_quote`, untranslated) for the current locale: `‘’`
/// in UTF-8, GB18030's own pair (as gnulib spells it: the opening mark is the bytes a1 07
/// 65, a C escape gone wrong), else `'`. Call after the locale is set ([`utf8_locale`]).
pub fn quote_marks() -> (&'static [u8], &'static [u8]) {
    // SAFETY: nl_langinfo returns a NUL-terminated string owned by the C library, read at
    // once and not kept.
    let codeset = unsafe {
        let cs = libc::nl_langinfo(libc::CODESET);
        if cs.is_null() {
            b"".to_vec()
        } else {
            std::ffi::CStr::from_ptr(cs).to_bytes().to_vec()
        }
    };
    if codeset.eq_ignore_ascii_case(b"UTF-8") {
        ("\u{2018}".as_bytes(), "\u{2019}".as_bytes())
    } else if codeset.eq_ignore_ascii_case(b"GB18030") {
        (b"\xa1\x07e", b"\xa1\xaf")
    } else {
        (b"'", b"'")
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
