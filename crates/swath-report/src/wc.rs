//! `wc`'s lines: the counts asked, in GNU's column widths, and the report of merged `wc`
//! partial results.

pub use swath_kernels::wc::{Encoding, Tally};
use swath_ops::count::Need;

use crate::error::{OptionsProblem, RenderError};
use crate::text::quote_name;

/// The counts `wc` was asked for, in its column order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Selected {
    /// `-l`.
    pub lines: bool,
    /// `-w`.
    pub words: bool,
    /// `-m`.
    pub chars: bool,
    /// `-c`.
    pub bytes: bool,
    /// `-L`.
    pub max: bool,
}

impl Selected {
    /// What counting must compute for these counts.
    pub fn need(&self) -> Need {
        if self.max {
            Need::All
        } else if self.words || self.chars {
            Need::NoWidth
        } else {
            Need::Lines
        }
    }

    /// How many counts are shown.
    pub fn count(&self) -> usize {
        [self.lines, self.words, self.chars, self.bytes, self.max]
            .iter()
            .filter(|&&b| b)
            .count()
    }
}

/// The options text of a `wc` partial: the counts asked and the encoding.
pub fn options(sel: Selected, enc: Encoding) -> Vec<u8> {
    let mut o = String::from("wc");
    for (on, flag) in [
        (sel.lines, " -l"),
        (sel.words, " -w"),
        (sel.chars, " -m"),
        (sel.bytes, " -c"),
        (sel.max, " -L"),
    ] {
        if on {
            o.push_str(flag);
        }
    }
    o.push_str(match enc {
        Encoding::C => " c",
        Encoding::Utf8 => " utf8",
        Encoding::Utf8Posix => " utf8-posix",
    });
    o.into_bytes()
}

/// Prints merged `wc` partials as `wc` prints the same files: the counts asked, GNU's
/// column width (from the files' sizes), a total line for more than one file. `options`
/// is the partials' options text; `files` the inputs in order, with their counts.
pub fn render(options: &[u8], files: &[(&[u8], u64, Tally)]) -> Result<Vec<u8>, RenderError> {
    let problem = |p| RenderError::options("wc", p);
    let text = String::from_utf8_lossy(options);
    let mut words = text.split(' ');
    if words.next() != Some("wc") {
        return Err(problem(OptionsProblem::NotOf));
    }
    let mut sel = Selected {
        lines: false,
        words: false,
        chars: false,
        bytes: false,
        max: false,
    };
    let mut enc = None;
    for w in words {
        match w {
            "-l" => sel.lines = true,
            "-w" => sel.words = true,
            "-m" => sel.chars = true,
            "-c" => sel.bytes = true,
            "-L" => sel.max = true,
            "c" => enc = Some(Encoding::C),
            "utf8" => enc = Some(Encoding::Utf8),
            "utf8-posix" => enc = Some(Encoding::Utf8Posix),
            _ => return Err(problem(OptionsProblem::Unknown(w.to_string()))),
        }
    }
    let enc = enc.ok_or(problem(OptionsProblem::Missing("its encoding")))?;
    if sel.count() == 0 {
        return Err(problem(OptionsProblem::NoCount));
    }
    // GNU's compute_number_width over regular files: digits of their total size.
    let width = if files.len() == 1 && sel.count() == 1 {
        1
    } else {
        // Saturating: the sizes are what the partials say (each checked against its own
        // pieces, not against each other).
        let total = files.iter().fold(0u64, |t, f| t.saturating_add(f.1));
        total.max(1).to_string().len()
    };
    let mut out = Vec::new();
    let mut totals = [0u64; 5];
    for (name, _, t) in files {
        let chars = if enc == Encoding::C { t.bytes } else { t.chars };
        let c = [t.lines, t.words, chars, t.bytes, t.max_line()];
        for k in 0..4 {
            totals[k] = totals[k].saturating_add(c[k]);
        }
        totals[4] = totals[4].max(c[4]);
        let label: Vec<u8> = if name.contains(&b'\n') {
            use std::os::unix::ffi::OsStrExt;
            quote_name(std::ffi::OsStr::from_bytes(name), enc.is_utf8()).into_bytes()
        } else {
            name.to_vec()
        };
        out.extend(format_line(&c, sel, width, Some(&label)));
    }
    if files.len() > 1 {
        out.extend(format_line(&totals, sel, width, Some(b"total")));
    }
    Ok(out)
}

/// One line of `wc`: the counts asked (`c`: lines, words, characters, bytes, longest
/// line), each right-aligned to `width`, then the name when there is one.
pub fn format_line(c: &[u64; 5], sel: Selected, width: usize, name: Option<&[u8]>) -> Vec<u8> {
    let mut parts = Vec::new();
    for (on, v) in [sel.lines, sel.words, sel.chars, sel.bytes, sel.max]
        .iter()
        .zip(c)
    {
        if *on {
            parts.push(format!("{v:>width$}"));
        }
    }
    let mut line = parts.join(" ").into_bytes();
    if let Some(n) = name {
        line.push(b' ');
        line.extend_from_slice(n);
    }
    line.push(b'\n');
    line
}
