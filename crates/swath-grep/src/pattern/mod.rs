//! GNU grep 3.8 patterns (`-G`, `-E`, `-F`, `-P`) translated into the `regex` crate's syntax.
//!
//! GNU grep reads every basic or extended pattern twice. glibc's `regcomp` reads it first, and
//! its error is the one grep prints (`Unmatched ( or \(`). gnulib's DFA reads it again: that
//! reading gives grep's warnings (`stray \ before d`), a few errors of its own (`character
//! class syntax is [[:space:]], not [:space:]`), and, whenever the DFA can run the pattern,
//! the meaning of the pattern too. When it cannot (in a UTF-8 locale: most bracket
//! expressions, `\w`, `\<`, an invalid byte; in any locale: `[[=a=]]`, a back-reference)
//! grep asks glibc's matcher instead. The two readers disagree on a handful of corner cases,
//! for example:
//!
//! - ERE `^*a`: the DFA repeats the anchor (`(^)*a`, any line with an `a`), glibc skips the
//!   `*` (`^a`).
//! - ERE `{1}a`: the DFA repeats the empty string (`a`), glibc skips only the `{` (`1}a`).
//! - BRE `a$)x`: the DFA takes `$` before a plain `)` as an anchor, glibc as a character.
//!
//! So this module holds one reader of each kind (`Glibc` and `Dfa`, both ported from the
//! sources grep 3.8 was built with: glibc 2.36's `regcomp.c`, gnulib's `dfa.c` of
//! 2022-09), runs them in grep's order, and emits the syntax tree of the reader grep would
//! match with. docs/gnu/grep-3.8-patterns.md lists the quirks with commands that show them.
//!
//! The files follow those seams: `tree.rs` holds the pattern as characters and the syntax
//! tree both readers build, `glibc.rs` and `dfa.rs` the two readers, `fold.rs` the locale's
//! collation and `-i` (glibc's case mappings), `emit.rs` the writer of the regex, and
//! `for_glibc.rs` the DFA's readings written out for glibc (multibyte locales other than
//! UTF-8); this file has the entry points, the order of the readers, `-F` and `-P`.
//!
//! Character classes follow the locale: in the C locale (`utf8 == false`) every byte is a
//! character and the classes are ASCII; in a UTF-8 locale the classes are Unicode properties
//! chosen to match glibc's C.UTF-8 tables (which differ only for characters Unicode assigned
//! after version 14), and a byte that is not part of valid UTF-8 matches only itself.

use std::fmt::{self, Write as _};

use dfa::Dfa;
use emit::{emit, literal};
use fold::fold_case;
use glibc::Glibc;
use tree::{decode, dfa_can_run, Node, Pat};

mod dfa;
mod emit;
mod fold;
mod for_glibc;
mod glibc;
#[cfg(test)]
mod tests;
mod tree;

pub(crate) use fold::case_counterparts;
pub use for_glibc::{dfa_readings_for_glibc, readings_agree};

/// Which GNU grep syntax a pattern is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// `-G`, the default: POSIX basic regular expressions with GNU's extensions.
    Basic,
    /// `-E`: POSIX extended regular expressions with GNU's extensions.
    Extended,
    /// `-F`: the pattern is a fixed string.
    Fixed,
    /// `-P`: Perl-compatible syntax, handed to the `regex` crate as it is.
    Perl,
}

/// A pattern GNU grep would reject, or one swath cannot run (a back-reference).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    /// GNU grep's message, without the `grep: ` prefix (for example `Unmatched [, [^, [:, [.,
    /// or [=`).
    pub message: String,
}

impl PatternError {
    fn new(message: impl Into<String>) -> PatternError {
        PatternError {
            message: message.into(),
        }
    }

    /// True when GNU grep would have overflowed its stack reading the pattern: it then says
    /// only `grep: stack overflow` (no pattern file and line) and stops at once.
    pub fn is_stack_overflow(&self) -> bool {
        self.message == STACK_OVERFLOW
    }
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PatternError {}

/// Translates one pattern (one line of the pattern list, no newline in it) written in `syntax`
/// into the regex crate's syntax, for a `regex::bytes::Regex` built with `multi_line(true)`
/// (so `^` and `$` are line anchors) and with Unicode mode on when `utf8` is true (a UTF-8
/// locale) and off (`(?-u)` byte semantics, the C locale) when false. The result never matches
/// a newline byte (b'\n'), so a search over a buffer of many lines finds only matches inside
/// one line.
///
/// The result can be wrapped in `(?:...)`, prefixed with `(?i)` and joined to others with `|`.
/// A [`Syntax::Perl`] pattern that is UTF-8 is returned as it is (its errors are the regex
/// crate's).
pub fn translate(pattern: &[u8], syntax: Syntax, utf8: bool) -> Result<String, PatternError> {
    translate_with_warnings(pattern, syntax, utf8).map(|(regex, _)| regex)
}

/// [`translate`], also returning the warnings GNU grep 3.8 prints about the pattern, in its
/// order and words (`stray \ before d`, `* at start of expression`); grep prints each as
/// `grep: warning: TEXT`.
///
/// These are upstream grep 3.8's warnings for a pattern given with `-e` or `-f`. Debian's
/// grep 3.8 prints the `stray \` ones only when the environment variable
/// `DEB_GREP_ENABLE_STRAY_BACKSLASH_WARN` is set, and not for a leading `\-` of a pattern
/// given as the operand. And with two or more patterns that are all plain strings once their
/// stray backslashes are dropped, grep runs them as `-F` and prints none of these warnings.
pub fn translate_with_warnings(
    pattern: &[u8],
    syntax: Syntax,
    utf8: bool,
) -> Result<(String, Vec<String>), PatternError> {
    translate_lines_ending(pattern, syntax, utf8, b'\n')
}

/// For a -G or -E pattern with back-references (`\(a\)\1`), or with equivalence classes
/// or collating symbols in a locale that collates: a regex that matches every line the
/// pattern matches and maybe more (each back-reference read as any text of the line, each
/// such bracket as any character), to find candidate lines fast, and GNU's warnings; `None`
/// when the pattern has neither. Candidates are then judged by glibc's matcher ([`crate::gnu_regex`]).
pub fn translate_filter(
    pattern: &[u8],
    syntax: Syntax,
    utf8: bool,
    eol: u8,
    icase: bool,
) -> Result<Option<(String, Vec<String>)>, PatternError> {
    let ere = match syntax {
        Syntax::Basic => false,
        Syntax::Extended => true,
        _ => return Ok(None),
    };
    let reading = read(pattern, ere, utf8)?;
    if reading.backref.is_none() && !reading.collation {
        return Ok(None);
    }
    regular(pattern, ere, utf8, eol, true, icase).map(Some)
}

/// [`translate_with_warnings`] for lines that end with `eol` instead of a newline (`grep
/// -z`: NUL): nothing in the result matches `eol`, and a newline is an ordinary character.
pub fn translate_lines_ending(
    pattern: &[u8],
    syntax: Syntax,
    utf8: bool,
    eol: u8,
) -> Result<(String, Vec<String>), PatternError> {
    translate_folded(pattern, syntax, utf8, eol, false)
}

/// [`translate_lines_ending`], with `-i` (`icase`) written into the regex as GNU grep applies
/// it ([`fold_case`]: glibc's case mappings of the pattern's characters in the current
/// locale), so the regex is compiled without the regex crate's Unicode case folding. A
/// [`Syntax::Perl`] pattern is not folded (PCRE2 does it).
pub fn translate_folded(
    pattern: &[u8],
    syntax: Syntax,
    utf8: bool,
    eol: u8,
    icase: bool,
) -> Result<(String, Vec<String>), PatternError> {
    match syntax {
        Syntax::Basic => regular(pattern, false, utf8, eol, false, icase),
        Syntax::Extended => regular(pattern, true, utf8, eol, false, icase),
        Syntax::Fixed if icase => Ok((fixed_folded(pattern, utf8, eol), Vec::new())),
        Syntax::Fixed => Ok((fixed(pattern, utf8), Vec::new())),
        Syntax::Perl => perl(pattern, utf8).map(|regex| (regex, Vec::new())),
    }
}

/// glibc's `RE_DUP_MAX`: the largest count an interval may have.
const RE_DUP_MAX: i32 = 0x7fff;

/// The deepest nesting of groups read. GNU grep reads a pattern with recursive parsers
/// (glibc's and the DFA's) on its 8 MiB main stack, and gnulib's `c-stack` turns their
/// overflow into `grep: stack overflow`, status 2: that happens at about 12,470 nested
/// groups, balanced or not (so 12,000 `(` with nothing closed are `Unmatched ( or \(`, and
/// 30,000 are a stack overflow). Deeper than this, swath says GNU's words
/// ([`STACK_OVERFLOW`]) without reading on. The search module reads patterns this deep on a
/// thread with a stack made for them.
pub const MAX_NESTING: usize = 12_000;

/// The deepest nesting of repetitions (`a{2}{2}`) read: each level doubles what GNU builds,
/// and it runs out of memory long before this.
const MAX_REPEAT_NESTING: usize = 1000;

/// GNU grep's message when its parsers overflow the stack (a pattern nested deeper than
/// [`MAX_NESTING`]), printed as `grep: stack overflow` without the pattern's file and line;
/// grep stops there.
pub const STACK_OVERFLOW: &str = "stack overflow";

/// glibc's `regerror` texts, and the DFA's own messages (lower case, as grep prints them).
mod msg {
    pub const BADPAT: &str = "Invalid regular expression";
    pub const ECOLLATE: &str = "Invalid collation character";
    pub const ECTYPE: &str = "Invalid character class name";
    pub const EESCAPE: &str = "Trailing backslash";
    pub const ESUBREG: &str = "Invalid back reference";
    pub const EBRACK: &str = "Unmatched [, [^, [:, [., or [=";
    pub const EPAREN: &str = "Unmatched ( or \\(";
    pub const EBRACE: &str = "Unmatched \\{";
    pub const BADBR: &str = "Invalid content of \\{\\}";
    pub const ERANGE: &str = "Invalid range end";
    pub const ESIZE: &str = "Regular expression too big";
    pub const ERPAREN: &str = "Unmatched ) or \\)";
    pub const STACK: &str = super::STACK_OVERFLOW;
    pub const REPEATS: &str = "nesting more than 1000 levels deep is not supported";
    pub const DFA_UNBALANCED_BRACKET: &str = "unbalanced [";
    pub const DFA_UNBALANCED_OPEN: &str = "unbalanced (";
    pub const DFA_UNBALANCED_CLOSE: &str = "unbalanced )";
    pub const DFA_UNFINISHED_ESCAPE: &str = "unfinished \\ escape";
    pub const DFA_BAD_CLASS: &str = "invalid character class";
    pub const DFA_COLON: &str = "character class syntax is [[:space:]], not [:space:]";
    pub const DFA_BADBR: &str = "invalid content of \\{\\}";
    pub const DFA_ESIZE: &str = "regular expression too big";
}

// ---------------------------------------------------------------------------------------------
// -G and -E

fn regular(
    pattern: &[u8],
    ere: bool,
    utf8: bool,
    eol: u8,
    backrefs: bool,
    icase: bool,
) -> Result<(String, Vec<String>), PatternError> {
    let reading = read(pattern, ere, utf8)?;
    if let (Some(n), false) = (reading.backref, backrefs) {
        return Err(PatternError::new(format!(
            "back-references are not supported: \\{n}"
        )));
    }
    if reading.collation && !backrefs {
        return Err(PatternError::new(
            "equivalence classes of this locale need glibc's matcher".to_string(),
        ));
    }
    let tree = if dfa_can_run(&reading.dfa, utf8) {
        &reading.dfa
    } else {
        // grep also runs the DFA's reading (a superset of it) as a filter before glibc's
        // matcher; where the two readings differ, it finds only lines both accept. That
        // intersection is not reproduced (docs/gnu/grep-3.8-patterns.md, section 8).
        &reading.glibc
    };
    if icase {
        return Ok((emit(&fold_case(tree, utf8), utf8, eol), reading.warnings));
    }
    Ok((emit(tree, utf8, eol), reading.warnings))
}

/// A pattern read the way grep reads it.
struct Reading {
    glibc: Node,
    dfa: Node,
    warnings: Vec<String>,
    /// The first back-reference, if any.
    backref: Option<u8>,
    /// An equivalence class or collating symbol that only glibc's matcher can judge.
    collation: bool,
}

fn read(pattern: &[u8], ere: bool, utf8: bool) -> Result<Reading, PatternError> {
    let pat = Pat::new(pattern, ere, utf8);
    let mut glibc = Glibc::new(&pat);
    let glibc_tree = glibc.parse().map_err(PatternError::new)?;
    let mut dfa = Dfa::new(&pat, &glibc.brackets);
    let dfa_tree = dfa.parse().map_err(PatternError::new)?;
    Ok(Reading {
        glibc: glibc_tree,
        dfa: dfa_tree,
        warnings: dfa.warnings,
        backref: glibc.backref,
        collation: glibc.collating,
    })
}

// ---------------------------------------------------------------------------------------------
// -F and -P

/// A fixed string: every character literal (a byte of an invalid sequence as that byte).
fn fixed(pattern: &[u8], utf8: bool) -> String {
    decode(pattern, utf8).into_iter().map(literal).collect()
}

/// [`fixed`] with `-i`: each character that has case counterparts becomes their set.
fn fixed_folded(pattern: &[u8], utf8: bool, eol: u8) -> String {
    let node = Node::Concat(decode(pattern, utf8).into_iter().map(Node::Lit).collect());
    emit(&fold_case(&node, utf8), utf8, eol)
}

/// A Perl pattern is the regex crate's business, but it must be text: in a UTF-8 locale an
/// invalid pattern is an error worded as PCRE2 words it (which grep -P prints); in the C
/// locale a byte ≥ 0x80 is a character, written `\xHH` (the caller compiles without Unicode).
fn perl(pattern: &[u8], utf8: bool) -> Result<String, PatternError> {
    if let Ok(text) = std::str::from_utf8(pattern) {
        return Ok(text.to_owned());
    }
    if utf8 {
        return Err(PatternError::new(pcre2_utf8_error(pattern)));
    }
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut i = 0;
    while i < pattern.len() {
        let b = pattern[i];
        if b == b'\\' && i + 1 < pattern.len() {
            // An escaped byte ≥ 0x80 is that byte; any other escape is kept as it is.
            let next = pattern[i + 1];
            if next.is_ascii() {
                out.push('\\');
                out.push(next as char);
            } else {
                write!(out, r"\x{next:02X}").unwrap();
            }
            i += 2;
            continue;
        }
        if b.is_ascii() {
            out.push(b as char);
        } else {
            write!(out, r"\x{b:02X}").unwrap();
        }
        i += 1;
    }
    Ok(out)
}

/// The message of PCRE2's UTF-8 check (`valid_utf` in pcre2_valid_utf.c) for the first
/// problem in `p`.
fn pcre2_utf8_error(p: &[u8]) -> String {
    let text = |detail: &str| format!("UTF-8 error: {detail}");
    let cont = |b: u8| b & 0xc0 == 0x80;
    let mut i = 0;
    while i < p.len() {
        let c = p[i];
        i += 1;
        if c < 0x80 {
            continue;
        }
        if c < 0xc0 {
            return text("isolated byte with 0x80 bit set");
        }
        if c >= 0xfe {
            return text("illegal byte (0xfe or 0xff)");
        }
        let extra = match c {
            0xc0..=0xdf => 1,
            0xe0..=0xef => 2,
            0xf0..=0xf7 => 3,
            0xf8..=0xfb => 4,
            _ => 5,
        };
        let left = p.len() - i;
        if left < extra {
            let missing = extra - left;
            let s = if missing == 1 { "" } else { "s" };
            return text(&format!("{missing} byte{s} missing at end"));
        }
        let d = p[i];
        for (n, &b) in p[i..i + extra].iter().enumerate() {
            if !cont(b) {
                return text(&format!("byte {} top bits not 0x80", n + 2));
            }
        }
        i += extra;
        match extra {
            1 if c & 0x3e == 0 => return text("overlong 2-byte sequence"),
            2 if c == 0xe0 && d & 0x20 == 0 => return text("overlong 3-byte sequence"),
            2 if c == 0xed && d >= 0xa0 => {
                return text("code points 0xd800-0xdfff are not defined")
            }
            3 if c == 0xf0 && d & 0x30 == 0 => return text("overlong 4-byte sequence"),
            3 if c > 0xf4 || (c == 0xf4 && d > 0x8f) => {
                return text("code points greater than 0x10ffff are not defined")
            }
            4 if c == 0xf8 && d & 0x38 == 0 => return text("overlong 5-byte sequence"),
            5 if c == 0xfc && d & 0x3c == 0 => return text("overlong 6-byte sequence"),
            _ => {}
        }
        if extra == 4 {
            return text("5-byte character is not allowed (RFC 3629)");
        }
        if extra == 5 {
            return text("6-byte character is not allowed (RFC 3629)");
        }
    }
    text("invalid UTF-8")
}
