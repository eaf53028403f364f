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
        let exact = table.iter().find(|(n, _)| *n == name);
        let candidates: Vec<&(&str, bool)> =
            table.iter().filter(|(n, _)| n.starts_with(name)).collect();
        let chosen = match (exact, candidates.as_slice()) {
            (Some(o), _) => o,
            (None, [one]) => *one,
            (None, []) => {
                out.push(arg.clone());
                continue;
            }
            (None, many) => {
                let list: Vec<String> = many.iter().map(|(n, _)| format!("'--{n}'")).collect();
                return Err(format!(
                    "option '--{name}' is ambiguous; possibilities: {}",
                    list.join(" ")
                ));
            }
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
