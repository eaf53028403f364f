//! `grep -c`'s report of merged partial results, and the options text of its partials.

use swath_grep::search::MatchOptions;
use swath_ops::search::Binary;

use crate::error::{OptionsProblem, RenderError};

/// Prints merged `grep -c` partials as `grep -c` prints the same files: the count, after
/// the name and `:` (or NUL with `-Z`) when names are shown (`-H`, or more than one file
/// without `-h`).
pub fn render(options: &[u8], files: &[(&[u8], u64)]) -> Result<Vec<u8>, RenderError> {
    let problem = |p| RenderError::options("grep -c", p);
    let text = String::from_utf8_lossy(options);
    let mut lines = text.lines();
    if lines.next() != Some("grep -c") {
        return Err(problem(OptionsProblem::NotOf));
    }
    let h = lines
        .next()
        .and_then(|l| l.strip_prefix("H="))
        .ok_or(problem(OptionsProblem::Missing("H=")))?;
    let z = lines
        .next()
        .and_then(|l| l.strip_prefix("Z="))
        .ok_or(problem(OptionsProblem::Missing("Z=")))?;
    let names = match h {
        "yes" => true,
        "no" => false,
        _ => files.len() > 1,
    };
    let mut out = Vec::new();
    for (name, n) in files {
        if names {
            out.extend_from_slice(name);
            out.push(if z == "1" { 0 } else { b':' });
        }
        out.extend_from_slice(format!("{n}\n").as_bytes());
    }
    Ok(out)
}

/// The options text of a `grep -c` partial: how names are shown (`-H` as `Some(true)`, `-h`
/// as `Some(false)`, `-Z`), then everything that decides which lines are selected.
pub fn options(
    with_filename: Option<bool>,
    null_after_name: bool,
    patterns: &[Vec<u8>],
    match_opts: &MatchOptions,
    invert: bool,
    binary: Binary,
    eol: u8,
) -> Vec<u8> {
    let h = match with_filename {
        None => "auto",
        Some(true) => "yes",
        Some(false) => "no",
    };
    format!(
        "grep -c\nH={h}\nZ={}\n{patterns:?} {match_opts:?} {invert:?} {binary:?} {eol:?}",
        u8::from(null_after_name),
    )
    .into_bytes()
}
