//! GNU `getopt_long`, for tools whose option syntax clap cannot express exactly (grep: `-e`
//! repeated and in any order, the first operand being the pattern, `-m5`, bundled `-inH`).
//!
//! Options may follow operands (argument permutation) unless POSIXLY_CORRECT is set; `--`
//! ends the options; long options may be abbreviated to any unambiguous prefix; errors are
//! worded as glibc words them.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

/// Whether an option takes an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HasArg {
    /// Never.
    No,
    /// Always (`--opt=X`, `--opt X`, `-oX`, `-o X`).
    Required,
    /// Only attached (`--opt=X`).
    Optional,
}

/// A long option: its name, whether it takes an argument, and the key it reports.
#[derive(Debug, Clone, Copy)]
pub struct LongOpt {
    /// The name without `--`.
    pub name: &'static str,
    /// Its argument.
    pub has_arg: HasArg,
    /// What the parser reports (a short option's letter, or the long name).
    pub key: &'static str,
}

/// Options in command-line order (key and argument) and operands.
#[derive(Debug, Default)]
pub struct Parsed {
    /// `(key, argument)` pairs.
    pub opts: Vec<(&'static str, Option<OsString>)>,
    /// For each of `opts`, the index in `args` of the word it came from (grep's `-NUM`:
    /// digits accumulate only within one word).
    pub words: Vec<usize>,
    /// Operands, in order.
    pub operands: Vec<OsString>,
    /// glibc's message for the first bad option; `opts` holds the options before it, which
    /// GNU tools have already acted on when getopt reports it.
    pub error: Option<String>,
}

/// Parses `args` (without the program name). `short` lists the short options as getopt does
/// (`"e:f:m:ivx"`: a colon after a letter takes an argument); `shorts` gives each short
/// option's key (its letter as a `&'static str`). Returns glibc's message on error.
pub fn getopt(
    args: &[OsString],
    short: &str,
    shorts: &[&'static str],
    long: &[LongOpt],
    posixly_correct: bool,
) -> Parsed {
    let mut p = Parsed::default();
    if let Err(e) = parse_into(&mut p, args, short, shorts, long, posixly_correct) {
        p.error = Some(e);
    }
    p.words.resize(p.opts.len(), args.len());
    p
}

/// Finds the long option `name` names in `table` as glibc does: an exact name, or the one
/// option it is a prefix of (several entries that are `same` count as one). `Ok(None)` when
/// no option starts with it; glibc's message when it is ambiguous.
pub fn resolve_long<'t, T>(
    name: &[u8],
    table: &'t [T],
    name_of: impl Fn(&T) -> &str,
    same: impl Fn(&T, &T) -> bool,
) -> Result<Option<&'t T>, String> {
    if let Some(exact) = table.iter().find(|o| name_of(o).as_bytes() == name) {
        return Ok(Some(exact));
    }
    let cands: Vec<&T> = table
        .iter()
        .filter(|o| name_of(o).as_bytes().starts_with(name))
        .collect();
    match cands.as_slice() {
        [] => Ok(None),
        [first, rest @ ..] if rest.iter().all(|o| same(first, o)) => Ok(Some(first)),
        many => {
            let list: Vec<String> = many.iter().map(|o| format!("'--{}'", name_of(o))).collect();
            Err(format!(
                "option '--{}' is ambiguous; possibilities: {}",
                String::from_utf8_lossy(name),
                list.join(" ")
            ))
        }
    }
}

fn parse_into(
    p: &mut Parsed,
    args: &[OsString],
    short: &str,
    shorts: &[&'static str],
    long: &[LongOpt],
    posixly_correct: bool,
) -> Result<(), String> {
    let mut i = 0;
    let takes = |c: char| -> Option<bool> {
        let at = short.find(c)?;
        Some(short[at + c.len_utf8()..].starts_with(':'))
    };
    let key_of = |c: char| -> &'static str {
        shorts
            .iter()
            .copied()
            .find(|k| k.starts_with(c) && k.len() == c.len_utf8())
            .unwrap_or("?")
    };
    while i < args.len() {
        // Options pushed so far came from earlier words.
        p.words.resize(p.opts.len(), i.saturating_sub(1));
        let arg = &args[i];
        let bytes = arg.as_bytes();
        i += 1;
        if bytes == b"--" {
            p.operands.extend(args[i..].iter().cloned());
            break;
        }
        if bytes.len() < 2 || bytes[0] != b'-' {
            if posixly_correct {
                p.operands.push(arg.clone());
                p.operands.extend(args[i..].iter().cloned());
                break;
            }
            p.operands.push(arg.clone());
            continue;
        }
        if let Some(body) = bytes.strip_prefix(b"--") {
            let (name, value) = match body.iter().position(|&b| b == b'=') {
                Some(e) => (
                    &body[..e],
                    Some(OsStr::from_bytes(&body[e + 1..]).to_owned()),
                ),
                None => (body, None),
            };
            let Some(opt) = resolve_long(
                name,
                long,
                |o| o.name,
                |a, b| a.key == b.key && a.has_arg == b.has_arg,
            )?
            else {
                return Err(format!("unrecognized option '{}'", arg.to_string_lossy()));
            };
            match (opt.has_arg, value) {
                (HasArg::No, Some(_)) => {
                    return Err(format!("option '--{}' doesn't allow an argument", opt.name))
                }
                (HasArg::No, None) | (HasArg::Optional, None) => p.opts.push((opt.key, None)),
                (_, Some(v)) => p.opts.push((opt.key, Some(v))),
                (HasArg::Required, None) => match args.get(i) {
                    Some(v) => {
                        p.opts.push((opt.key, Some(v.clone())));
                        i += 1;
                    }
                    None => return Err(format!("option '--{}' requires an argument", opt.name)),
                },
            }
            continue;
        }
        // A cluster of short options.
        let text = String::from_utf8_lossy(&bytes[1..]).into_owned();
        for (at, c) in text.char_indices() {
            match takes(c) {
                None => return Err(format!("invalid option -- '{c}'")),
                Some(false) => p.opts.push((key_of(c), None)),
                Some(true) => {
                    let rest = &bytes[1 + at + c.len_utf8()..];
                    if !rest.is_empty() {
                        p.opts
                            .push((key_of(c), Some(OsStr::from_bytes(rest).to_owned())));
                    } else if let Some(v) = args.get(i) {
                        p.opts.push((key_of(c), Some(v.clone())));
                        i += 1;
                    } else {
                        return Err(format!("option requires an argument -- '{c}'"));
                    }
                    break;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: &[LongOpt] = &[
        LongOpt {
            name: "count",
            has_arg: HasArg::No,
            key: "c",
        },
        LongOpt {
            name: "color",
            has_arg: HasArg::Optional,
            key: "color",
        },
        LongOpt {
            name: "colour",
            has_arg: HasArg::Optional,
            key: "color",
        },
        LongOpt {
            name: "regexp",
            has_arg: HasArg::Required,
            key: "e",
        },
    ];

    fn run(args: &[&str], posix: bool) -> Result<Parsed, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let p = getopt(&args, "ce:iv", &["c", "e", "i", "v"], LONG, posix);
        match p.error {
            Some(e) => Err(e),
            None => Ok(p),
        }
    }

    #[test]
    fn clusters_arguments_and_permutation() {
        let p = run(&["-ive", "x", "file", "-c", "--reg=y", "--", "-v"], false).unwrap();
        let keys: Vec<(&str, Option<String>)> = p
            .opts
            .iter()
            .map(|(k, v)| (*k, v.as_ref().map(|v| v.to_string_lossy().into_owned())))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("i", None),
                ("v", None),
                ("e", Some("x".into())),
                ("c", None),
                ("e", Some("y".into()))
            ]
        );
        assert_eq!(p.operands, vec![OsString::from("file"), "-v".into()]);
        let p = run(&["-eX", "a", "-c"], true).unwrap();
        assert_eq!(p.operands, vec![OsString::from("a"), "-c".into()]);
    }

    #[test]
    fn glibc_messages() {
        assert_eq!(run(&["-k"], false).unwrap_err(), "invalid option -- 'k'");
        assert_eq!(
            run(&["-e"], false).unwrap_err(),
            "option requires an argument -- 'e'"
        );
        assert_eq!(
            run(&["--regexp"], false).unwrap_err(),
            "option '--regexp' requires an argument"
        );
        assert_eq!(
            run(&["--count=1"], false).unwrap_err(),
            "option '--count' doesn't allow an argument"
        );
        assert_eq!(
            run(&["--co"], false).unwrap_err(),
            "option '--co' is ambiguous; possibilities: '--count' '--color' '--colour'"
        );
        assert_eq!(
            run(&["--nope=1"], false).unwrap_err(),
            "unrecognized option '--nope=1'"
        );
        // --col matches --color and --colour, which are the same option.
        assert_eq!(run(&["--col"], false).unwrap().opts[0].0, "color");
    }
}
