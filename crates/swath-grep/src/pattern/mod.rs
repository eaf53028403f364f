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
//! Character classes follow the locale: in the C locale (`utf8 == false`) every byte is a
//! character and the classes are ASCII; in a UTF-8 locale the classes are Unicode properties
//! chosen to match glibc's C.UTF-8 tables (which differ only for characters Unicode assigned
//! after version 14), and a byte that is not part of valid UTF-8 matches only itself.

use std::fmt::{self, Write as _};
use std::sync::OnceLock;

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
// The pattern as characters

/// One character of a pattern: in the C locale every byte; in a UTF-8 locale a valid
/// character, or one byte of an invalid sequence (which only ever matches itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sym {
    Byte(u8),
    Char(char),
}

impl Sym {
    /// The byte, when the character is one byte long: what both GNU readers switch on.
    fn single(self) -> Option<u8> {
        match self {
            Sym::Byte(b) => Some(b),
            Sym::Char(c) if c.is_ascii() => Some(c as u8),
            Sym::Char(_) => None,
        }
    }

    fn is(self, b: u8) -> bool {
        self.single() == Some(b)
    }

    fn is_multibyte(self) -> bool {
        matches!(self, Sym::Char(c) if !c.is_ascii())
    }

    /// The wide character the C library sees (`None` is `WEOF`: a byte ≥ 0x80 of the C
    /// locale, or a byte of an invalid sequence).
    fn wide(self) -> Option<char> {
        match self {
            Sym::Byte(b) if b.is_ascii() => Some(b as char),
            Sym::Byte(_) => None,
            Sym::Char(c) => Some(c),
        }
    }
}

/// A pattern split into characters, with the byte offset of each (the bracket-symbol and
/// interval scanners of both readers work on bytes).
struct Pat<'a> {
    bytes: &'a [u8],
    syms: Vec<Sym>,
    /// `offs[i]` is the byte offset of `syms[i]`; one more entry holds the length.
    offs: Vec<usize>,
    ere: bool,
    utf8: bool,
}

impl<'a> Pat<'a> {
    fn new(bytes: &'a [u8], ere: bool, utf8: bool) -> Pat<'a> {
        let syms = decode(bytes, utf8);
        let mut offs = Vec::with_capacity(syms.len() + 1);
        let mut at = 0;
        for s in &syms {
            offs.push(at);
            at += match s {
                Sym::Byte(_) => 1,
                Sym::Char(c) => c.len_utf8(),
            };
        }
        offs.push(at);
        Pat {
            bytes,
            syms,
            offs,
            ere,
            utf8,
        }
    }

    fn get(&self, at: usize) -> Option<Sym> {
        self.syms.get(at).copied()
    }

    fn bytes_left(&self, at: usize) -> usize {
        self.bytes.len() - self.offs[at.min(self.syms.len())]
    }
}

/// Splits `p` into characters the way glibc's `mbrtowc` does: a byte that does not start a
/// valid UTF-8 sequence is a character of its own.
fn decode(p: &[u8], utf8: bool) -> Vec<Sym> {
    if !utf8 {
        return p.iter().map(|&b| Sym::Byte(b)).collect();
    }
    let mut out = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        let b = p[i];
        let n = match b {
            0x00..=0x7f => 1,
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => 0,
        };
        let c = p
            .get(i..i + n)
            .filter(|s| !s.is_empty())
            .and_then(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.chars().next());
        match c {
            Some(c) => {
                out.push(Sym::Char(c));
                i += n;
            }
            None => {
                out.push(Sym::Byte(b));
                i += 1;
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The syntax tree both readers build

/// A zero-width assertion. `\`` and `\'` (start and end of the buffer) are line anchors too:
/// grep hands its matchers one line at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Assert {
    LineStart,
    LineEnd,
    WordStart,
    WordEnd,
    WordBoundary,
    NotWordBoundary,
}

/// A POSIX character class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Alpha,
    Upper,
    Lower,
    Digit,
    Xdigit,
    Space,
    Punct,
    Alnum,
    Print,
    Graph,
    Cntrl,
    Blank,
}

impl Class {
    fn from_name(name: &[u8]) -> Option<Class> {
        Some(match name {
            b"alpha" => Class::Alpha,
            b"upper" => Class::Upper,
            b"lower" => Class::Lower,
            b"digit" => Class::Digit,
            b"xdigit" => Class::Xdigit,
            b"space" => Class::Space,
            b"punct" => Class::Punct,
            b"alnum" => Class::Alnum,
            b"print" => Class::Print,
            b"graph" => Class::Graph,
            b"cntrl" => Class::Cntrl,
            b"blank" => Class::Blank,
            _ => return None,
        })
    }

    /// Membership in the C locale (ASCII only).
    fn contains_byte(self, b: u8) -> bool {
        match self {
            Class::Alpha => b.is_ascii_alphabetic(),
            Class::Upper => b.is_ascii_uppercase(),
            Class::Lower => b.is_ascii_lowercase(),
            Class::Digit => b.is_ascii_digit(),
            Class::Xdigit => b.is_ascii_hexdigit(),
            Class::Space => matches!(b, b'\t'..=b'\r' | b' '),
            Class::Punct => b.is_ascii_punctuation(),
            Class::Alnum => b.is_ascii_alphanumeric(),
            Class::Print => (0x20..0x7f).contains(&b),
            Class::Graph => b.is_ascii_graphic(),
            Class::Cntrl => b < 0x20 || b == 0x7f,
            Class::Blank => b == b' ' || b == b'\t',
        }
    }

    /// The class in a UTF-8 locale, as an item of a regex class (Unicode mode). glibc's
    /// C.UTF-8 tables (Unicode 14) were compared with these over every code point: they agree
    /// but for characters assigned after Unicode 14, and a few dozen combining marks that
    /// newer Unicode made alphabetic.
    fn unicode(self) -> &'static str {
        match self {
            Class::Alpha => r"[\p{Alphabetic}\p{Nd}--0-9]",
            Class::Upper => r"[\p{Uppercase}\p{Lt}]",
            Class::Lower => r"[\p{Lowercase}\p{Lt}]",
            Class::Digit => "0-9",
            Class::Xdigit => "0-9A-Fa-f",
            Class::Space => r"[\t-\r\x20\p{Zs}\x{2028}\x{2029}--\x{A0}\x{2007}\x{202F}]",
            Class::Punct => r"[^\p{Cc}\p{Cn}\p{Z}\p{Alphabetic}\p{Nd}--\x{A0}\x{2007}\x{202F}]",
            Class::Alnum => r"[\p{Alphabetic}\p{Nd}]",
            Class::Print => r"[^\p{Cc}\p{Cn}\x{2028}\x{2029}]",
            Class::Graph => r"[^\p{Cc}\p{Cn}\p{Z}--\x{A0}\x{2007}\x{202F}]",
            Class::Cntrl => r"[\p{Cc}\x{2028}\x{2029}]",
            Class::Blank => r"[\t\p{Zs}--\x{A0}\x{2007}\x{202F}]",
        }
    }
}

/// A bracket expression, or `\w`, `\W`, `\s`, `\S`: characters (bytes in the C locale, code
/// points in UTF-8) and classes, possibly negated. Newline is never in it (grep matches one
/// line at a time, so no pattern character ever meets one).
#[derive(Debug, Clone, PartialEq, Eq)]
struct CharSet {
    negated: bool,
    ranges: Vec<(u32, u32)>,
    classes: Vec<Class>,
    /// Whether the DFA can run it (in UTF-8 most sets send grep to glibc's matcher).
    dfa_runs: bool,
}

/// `\w` and friends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    Word,
    NotWord,
    Space,
    NotSpace,
}

impl Escape {
    fn set(self, utf8: bool) -> CharSet {
        let (negated, ranges, class) = match self {
            Escape::Word => (false, vec![(b'_' as u32, b'_' as u32)], Class::Alnum),
            Escape::NotWord => (true, vec![(b'_' as u32, b'_' as u32)], Class::Alnum),
            Escape::Space => (false, vec![], Class::Space),
            Escape::NotSpace => (true, vec![], Class::Space),
        };
        CharSet {
            negated,
            ranges,
            classes: vec![class],
            dfa_runs: !utf8,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Empty,
    Lit(Sym),
    /// `.`: any character but newline (in UTF-8, any valid character).
    Any,
    Set(CharSet),
    Assert(Assert),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Group(Box<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
    BackRef,
}

/// `node{min,max}`, folding the nestings that `a**` or `a+?` produce (so a long run of
/// operators does not build a deep tree).
fn repeat(node: Node, min: u32, max: Option<u32>) -> Node {
    if max == Some(0) || node == Node::Empty {
        return Node::Empty;
    }
    if min == 1 && max == Some(1) {
        return node;
    }
    let simple = |lo: u32, hi: Option<u32>| lo <= 1 && matches!(hi, None | Some(1));
    match node {
        Node::Repeat(inner, lo, hi) if simple(lo, hi) && simple(min, max) => {
            let hi = if hi.is_none() || max.is_none() {
                None
            } else {
                Some(1)
            };
            Node::Repeat(inner, lo * min, hi)
        }
        node => Node::Repeat(Box::new(node), min, max),
    }
}

/// How many repetitions are nested directly in one another (`a{2}{2}` is 2).
fn repeat_depth(mut node: &Node) -> usize {
    let mut depth = 0;
    while let Node::Repeat(inner, ..) = node {
        depth += 1;
        node = inner;
    }
    depth
}

fn concat(mut items: Vec<Node>) -> Node {
    items.retain(|n| *n != Node::Empty);
    match items.len() {
        0 => Node::Empty,
        1 => items.pop().unwrap(),
        _ => Node::Concat(items),
    }
}

/// Whether gnulib's DFA can run the tree it built: anything else makes grep use glibc's
/// matcher (dfa.c `dfasupported`, after the tokens `{0}` dropped are gone).
fn dfa_can_run(node: &Node, utf8: bool) -> bool {
    match node {
        Node::BackRef => false,
        Node::Lit(Sym::Byte(b)) => !(utf8 && *b >= 0x80),
        Node::Set(set) => set.dfa_runs,
        Node::Assert(a) => !utf8 || matches!(a, Assert::LineStart | Assert::LineEnd),
        Node::Concat(v) | Node::Alt(v) => v.iter().all(|n| dfa_can_run(n, utf8)),
        Node::Group(n) | Node::Repeat(n, ..) => dfa_can_run(n, utf8),
        Node::Empty | Node::Lit(_) | Node::Any => true,
    }
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
// glibc's reader (posix/regcomp.c of glibc 2.36, with grep's RE_SYNTAX_GREP and
// RE_SYNTAX_EGREP): the errors, and the meaning when the DFA cannot run the pattern.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GKind {
    Char,
    TrailingBackslash,
    Alt,
    BackRef(u8),
    Assert(Assert),
    Escape(Escape),
    OpenGroup,
    CloseGroup,
    Star,
    Plus,
    Question,
    OpenInterval,
    CloseInterval,
    OpenBracket,
    Period,
    End,
}

#[derive(Debug, Clone, Copy)]
struct GTok {
    kind: GKind,
    /// The character (after a backslash, the escaped one): glibc's `opr.c`.
    sym: Sym,
    /// Characters the token spans.
    len: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BKind {
    Char,
    OpenColl,
    OpenEquiv,
    OpenClass,
    Close,
    NonMatch,
    Range,
    End,
}

#[derive(Debug, Clone, Copy)]
struct BTok {
    kind: BKind,
    byte: u8,
    len: usize,
}

/// An element of a bracket expression.
#[derive(Debug, Clone, PartialEq, Eq)]
enum BElem {
    Single(u8),
    Multi(char),
    Coll(Vec<u8>),
    Equiv(Vec<u8>),
    Class(Vec<u8>),
}

struct Glibc<'p, 'a> {
    p: &'p Pat<'a>,
    pos: usize,
    tok: GTok,
    nsub: usize,
    /// Groups closed so far (a back-reference may only name one of them).
    completed: u32,
    /// The first back-reference.
    backref: Option<u8>,
    /// An equivalence class or collating symbol in a locale with collation rules: only
    /// glibc's matcher knows what it matches.
    collating: bool,
    /// Every bracket expression, by the position of its `[`, for the DFA reader.
    brackets: Vec<(usize, CharSet)>,
}

type Parsed<T> = Result<T, &'static str>;

impl<'p, 'a> Glibc<'p, 'a> {
    fn new(p: &'p Pat<'a>) -> Self {
        Glibc {
            p,
            pos: 0,
            tok: GTok {
                kind: GKind::End,
                sym: Sym::Byte(0),
                len: 0,
            },
            nsub: 0,
            completed: 0,
            backref: None,
            collating: false,
            brackets: Vec::new(),
        }
    }

    /// `peek_token`; `caret` is `RE_CARET_ANCHORS_HERE` (start, after `\(` and `\|`).
    fn peek(&self, at: usize, caret: bool) -> GTok {
        use GKind::*;
        let ere = self.p.ere;
        let Some(s) = self.p.get(at) else {
            return GTok {
                kind: End,
                sym: Sym::Byte(0),
                len: 0,
            };
        };
        if s.is(b'\\') {
            let Some(c2) = self.p.get(at + 1) else {
                return GTok {
                    kind: TrailingBackslash,
                    sym: s,
                    len: 1,
                };
            };
            let kind = match c2.single() {
                Some(b'|') if !ere => Alt,
                Some(d @ b'1'..=b'9') => BackRef(d - b'0'),
                Some(b'<') => Assert(self::Assert::WordStart),
                Some(b'>') => Assert(self::Assert::WordEnd),
                Some(b'b') => Assert(self::Assert::WordBoundary),
                Some(b'B') => Assert(self::Assert::NotWordBoundary),
                Some(b'`') => Assert(self::Assert::LineStart),
                Some(b'\'') => Assert(self::Assert::LineEnd),
                Some(b'w') => Escape(self::Escape::Word),
                Some(b'W') => Escape(self::Escape::NotWord),
                Some(b's') => Escape(self::Escape::Space),
                Some(b'S') => Escape(self::Escape::NotSpace),
                Some(b'(') if !ere => OpenGroup,
                Some(b')') if !ere => CloseGroup,
                Some(b'+') if !ere => Plus,
                Some(b'?') if !ere => Question,
                Some(b'{') if !ere => OpenInterval,
                Some(b'}') if !ere => CloseInterval,
                _ => Char,
            };
            return GTok {
                kind,
                sym: c2,
                len: 2,
            };
        }
        let kind = match s.single() {
            Some(b'|') if ere => Alt,
            Some(b'*') => Star,
            Some(b'+') if ere => Plus,
            Some(b'?') if ere => Question,
            Some(b'{') if ere => OpenInterval,
            Some(b'}') if ere => CloseInterval,
            Some(b'(') if ere => OpenGroup,
            Some(b')') if ere => CloseGroup,
            Some(b'[') => OpenBracket,
            Some(b'.') => Period,
            Some(b'^') if ere || caret => Assert(self::Assert::LineStart),
            // A BRE `$` is an anchor last, or before `\|` or `\)`.
            Some(b'$')
                if ere
                    || at + 1 == self.p.syms.len()
                    || (self.p.get(at + 1).is_some_and(|s| s.is(b'\\'))
                        && self.p.get(at + 2).is_some_and(|s| s.is(b'|') || s.is(b')'))) =>
            {
                Assert(self::Assert::LineEnd)
            }
            _ => Char,
        };
        GTok {
            kind,
            sym: s,
            len: 1,
        }
    }

    fn fetch(&mut self, caret: bool) {
        self.tok = self.peek(self.pos, caret);
        self.pos += self.tok.len;
    }

    fn parse(&mut self) -> Parsed<Node> {
        self.fetch(true);
        Ok(self.reg_exp(0)?.unwrap_or(Node::Empty))
    }

    fn reg_exp(&mut self, nest: usize) -> Parsed<Option<Node>> {
        let initial = self.completed;
        let first = self.branch(nest)?;
        if self.tok.kind != GKind::Alt {
            return Ok(first);
        }
        let mut alts = vec![first.unwrap_or(Node::Empty)];
        while self.tok.kind == GKind::Alt {
            self.fetch(true);
            let k = self.tok.kind;
            let branch =
                if k != GKind::Alt && k != GKind::End && (nest == 0 || k != GKind::CloseGroup) {
                    // A back-reference may not name a group of another alternative.
                    let accumulated = self.completed;
                    self.completed = initial;
                    let b = self.branch(nest)?;
                    self.completed |= accumulated;
                    b
                } else {
                    None
                };
            alts.push(branch.unwrap_or(Node::Empty));
        }
        Ok(Some(Node::Alt(alts)))
    }

    fn branch(&mut self, nest: usize) -> Parsed<Option<Node>> {
        let mut items = Vec::new();
        items.extend(self.expression(nest)?);
        while !matches!(self.tok.kind, GKind::Alt | GKind::End)
            && (nest == 0 || self.tok.kind != GKind::CloseGroup)
        {
            items.extend(self.expression(nest)?);
        }
        Ok(if items.is_empty() {
            None
        } else {
            Some(concat(items))
        })
    }

    fn expression(&mut self, nest: usize) -> Parsed<Option<Node>> {
        use GKind::*;
        // An ERE repetition operator with nothing to repeat is skipped.
        while self.p.ere && matches!(self.tok.kind, Star | Plus | Question | OpenInterval) {
            self.fetch(false);
        }
        let tok = self.tok;
        let node = match tok.kind {
            Char | Star | Plus | Question | OpenInterval | CloseInterval => Node::Lit(tok.sym),
            OpenGroup => self.sub_exp(nest + 1)?,
            OpenBracket => self.bracket()?,
            BackRef(n) => {
                if self.completed & (1 << (n - 1)) == 0 {
                    return Err(msg::ESUBREG);
                }
                self.backref.get_or_insert(n);
                Node::BackRef
            }
            CloseGroup => {
                if !self.p.ere {
                    return Err(msg::ERPAREN);
                }
                Node::Lit(tok.sym)
            }
            Assert(a) => {
                // An anchor is never repeated: what follows starts a new expression.
                self.fetch(false);
                return Ok(Some(Node::Assert(a)));
            }
            Period => Node::Any,
            Escape(e) => Node::Set(e.set(self.p.utf8)),
            Alt | End => return Ok(None),
            TrailingBackslash => return Err(msg::EESCAPE),
        };
        self.fetch(false);
        let mut node = Some(node);
        while matches!(self.tok.kind, Star | Plus | Question | OpenInterval) {
            node = self.dup_op(node)?;
            if node
                .as_ref()
                .is_some_and(|n| repeat_depth(n) > MAX_REPEAT_NESTING)
            {
                return Err(msg::REPEATS);
            }
        }
        Ok(node)
    }

    fn sub_exp(&mut self, nest: usize) -> Parsed<Node> {
        if nest > MAX_NESTING {
            // GNU's parsers overflow their stack before they see whether the groups close.
            return Err(msg::STACK);
        }
        let index = self.nsub;
        self.nsub += 1;
        self.fetch(true);
        let inner = if self.tok.kind == GKind::CloseGroup {
            None
        } else {
            let inner = self.reg_exp(nest)?;
            if self.tok.kind != GKind::CloseGroup {
                return Err(msg::EPAREN);
            }
            inner
        };
        if index < 9 {
            self.completed |= 1 << index;
        }
        Ok(Node::Group(Box::new(inner.unwrap_or(Node::Empty))))
    }

    /// `parse_dup_op`; an invalid ERE interval leaves its `{` to be read as a character.
    fn dup_op(&mut self, elem: Option<Node>) -> Parsed<Option<Node>> {
        let start_tok = self.tok;
        let start_pos = self.pos;
        let (min, max) = match start_tok.kind {
            GKind::OpenInterval => {
                let mut start = self.fetch_number();
                let mut end = 0;
                if start == -1 {
                    if self.tok.kind == GKind::Char && self.tok.sym.is(b',') {
                        start = 0; // {,m}
                    } else {
                        return Err(msg::BADBR); // {}
                    }
                }
                if start != -2 {
                    end = if self.tok.kind == GKind::CloseInterval {
                        start
                    } else if self.tok.kind == GKind::Char && self.tok.sym.is(b',') {
                        self.fetch_number()
                    } else {
                        -2
                    };
                }
                if start == -2 || end == -2 {
                    if !self.p.ere {
                        return Err(if self.tok.kind == GKind::End {
                            msg::EBRACE
                        } else {
                            msg::BADBR
                        });
                    }
                    self.pos = start_pos;
                    self.tok = GTok {
                        kind: GKind::Char,
                        ..start_tok
                    };
                    return Ok(elem);
                }
                if (end != -1 && start > end) || self.tok.kind != GKind::CloseInterval {
                    return Err(msg::BADBR);
                }
                if RE_DUP_MAX < if end == -1 { start } else { end } {
                    return Err(msg::ESIZE);
                }
                (start as u32, (end >= 0).then_some(end as u32))
            }
            GKind::Plus => (1, None),
            GKind::Question => (0, Some(1)),
            _ => (0, None),
        };
        self.fetch(false);
        Ok(elem
            .map(|e| repeat(e, min, max))
            .filter(|n| *n != Node::Empty))
    }

    /// `fetch_number`: -1 for no digits, -2 for anything invalid (or the end).
    fn fetch_number(&mut self) -> i32 {
        let mut num = -1i32;
        loop {
            self.fetch(false);
            let t = self.tok;
            if t.kind == GKind::End {
                return -2;
            }
            if t.kind == GKind::CloseInterval || t.sym.is(b',') {
                return num;
            }
            num = match t.sym.single() {
                Some(c @ b'0'..=b'9') if t.kind == GKind::Char && num != -2 => {
                    let d = i32::from(c - b'0');
                    if num == -1 {
                        d
                    } else {
                        (num * 10 + d).min(RE_DUP_MAX + 1)
                    }
                }
                _ => -2,
            };
        }
    }

    /// `peek_token_bracket` (grep has no `RE_BACKSLASH_ESCAPE_IN_LISTS`: `\` is a character).
    fn peek_bracket(&self, at: usize) -> BTok {
        let tok = |kind, byte, len| BTok { kind, byte, len };
        let Some(s) = self.p.get(at) else {
            return tok(BKind::End, 0, 0);
        };
        match s.single() {
            Some(b'[') => match self.p.get(at + 1).and_then(Sym::single) {
                Some(b'.') => tok(BKind::OpenColl, b'.', 2),
                Some(b'=') => tok(BKind::OpenEquiv, b'=', 2),
                Some(b':') => tok(BKind::OpenClass, b':', 2),
                _ => tok(BKind::Char, b'[', 1),
            },
            Some(b']') => tok(BKind::Close, b']', 1),
            Some(b'^') => tok(BKind::NonMatch, b'^', 1),
            Some(b'-') => tok(BKind::Range, b'-', 1),
            Some(b) => tok(BKind::Char, b, 1),
            None => tok(BKind::Char, 0, 1),
        }
    }

    /// `parse_bracket_exp`; `self.pos` is just past the `[`.
    fn bracket(&mut self) -> Parsed<Node> {
        let at = self.pos - 1;
        let mut set = CharSet {
            negated: false,
            ranges: Vec::new(),
            classes: Vec::new(),
            dfa_runs: true,
        };
        let mut tok = self.peek_bracket(self.pos);
        if tok.kind == BKind::End {
            return Err(msg::BADPAT);
        }
        if tok.kind == BKind::NonMatch {
            set.negated = true;
            self.pos += tok.len;
            tok = self.peek_bracket(self.pos);
            if tok.kind == BKind::End {
                return Err(msg::BADPAT);
            }
        }
        // A `]` first is a character.
        if tok.kind == BKind::Close {
            tok.kind = BKind::Char;
        }
        let mut first_round = true;
        let mut wild = false;
        loop {
            let start = self.bracket_element(tok, first_round)?;
            first_round = false;
            tok = self.peek_bracket(self.pos);
            let mut end = None;
            if !matches!(start, BElem::Class(_) | BElem::Equiv(_)) {
                if tok.kind == BKind::End {
                    return Err(msg::EBRACK);
                }
                if tok.kind == BKind::Range {
                    self.pos += tok.len;
                    let tok2 = self.peek_bracket(self.pos);
                    if tok2.kind == BKind::End {
                        return Err(msg::EBRACK);
                    }
                    if tok2.kind == BKind::Close {
                        // `[a-]`: the `-` is read again, as a character.
                        self.pos -= tok.len;
                        tok.kind = BKind::Char;
                    } else {
                        end = Some(self.bracket_element(tok2, true)?);
                        tok = self.peek_bracket(self.pos);
                    }
                }
            }
            let collated = matches!(start, BElem::Coll(_) | BElem::Equiv(_))
                && self.p.utf8
                && locale_collates();
            match end {
                Some(end) => self.add_range(&mut set, &start, &end)?,
                None if collated => wild = true,
                None => self.add_element(&mut set, start)?,
            }
            if tok.kind == BKind::End {
                return Err(msg::EBRACK);
            }
            if tok.kind == BKind::Close {
                break;
            }
        }
        self.pos += tok.len;
        if wild {
            // `[[=a=]]` in a locale that collates: glibc's matcher decides; the filter lets
            // any character through.
            self.collating = true;
            set = CharSet {
                negated: false,
                ranges: vec![(0, 0x10FFFF)],
                classes: Vec::new(),
                dfa_runs: false,
            };
        }
        self.brackets.push((at, set.clone()));
        Ok(Node::Set(set))
    }

    fn bracket_element(&mut self, tok: BTok, accept_hyphen: bool) -> Parsed<BElem> {
        if let Some(Sym::Char(c)) = self.p.get(self.pos).filter(|s| s.is_multibyte()) {
            self.pos += 1;
            return Ok(BElem::Multi(c));
        }
        self.pos += tok.len;
        match tok.kind {
            BKind::OpenColl | BKind::OpenEquiv | BKind::OpenClass => {
                return self.bracket_symbol(tok.kind)
            }
            // A `-` that is neither first, last, nor a range end.
            BKind::Range if !accept_hyphen && self.peek_bracket(self.pos).kind != BKind::Close => {
                return Err(msg::ERANGE)
            }
            _ => {}
        }
        Ok(BElem::Single(tok.byte))
    }

    /// `parse_bracket_symbol`: the name of `[:name:]`, `[.name.]` or `[=name=]`, read as
    /// bytes, at most 31 of them.
    fn bracket_symbol(&mut self, kind: BKind) -> Parsed<BElem> {
        let bytes = self.p.bytes;
        let delim = match kind {
            BKind::OpenColl => b'.',
            BKind::OpenEquiv => b'=',
            _ => b':',
        };
        let mut i = self.p.offs[self.pos];
        if i >= bytes.len() {
            return Err(msg::EBRACK);
        }
        let mut name = Vec::new();
        loop {
            if name.len() >= 32 {
                return Err(msg::EBRACK);
            }
            let ch = bytes[i];
            i += 1;
            if i >= bytes.len() {
                return Err(msg::EBRACK);
            }
            if ch == delim && bytes[i] == b']' {
                break;
            }
            name.push(ch);
        }
        i += 1;
        // The name ends with two ASCII characters, so this is a character boundary.
        self.pos = self.p.offs.binary_search(&i).unwrap_or(self.p.syms.len());
        Ok(match kind {
            BKind::OpenColl => BElem::Coll(name),
            BKind::OpenEquiv => BElem::Equiv(name),
            _ => BElem::Class(name),
        })
    }

    /// A one-byte character in a set. In UTF-8 glibc keeps only the bytes that are
    /// characters (ASCII): `[\xff]` matches nothing there.
    fn add_byte(&self, set: &mut CharSet, b: u8) {
        if !self.p.utf8 || b.is_ascii() {
            set.ranges.push((u32::from(b), u32::from(b)));
        }
    }

    fn add_element(&self, set: &mut CharSet, elem: BElem) -> Parsed<()> {
        match elem {
            BElem::Single(b) => self.add_byte(set, b),
            BElem::Multi(c) => set.ranges.push((c as u32, c as u32)),
            // C and C.UTF-8 have no collation rules: an equivalence class or a collating
            // symbol is one byte, the byte itself.
            BElem::Coll(name) | BElem::Equiv(name) => {
                if name.len() != 1 {
                    return Err(msg::ECOLLATE);
                }
                self.add_byte(set, name[0]);
            }
            BElem::Class(name) => set
                .classes
                .push(Class::from_name(&name).ok_or(msg::ECTYPE)?),
        }
        Ok(())
    }

    /// `build_range_exp` without collation rules: the ends' byte values, so a multibyte end
    /// (`[a-é]`) is an error and a range of bytes covers the code points with those values.
    fn add_range(&self, set: &mut CharSet, start: &BElem, end: &BElem) -> Parsed<()> {
        let ordinal = |e: &BElem| match e {
            BElem::Single(b) => Some(u32::from(*b)),
            BElem::Coll(name) if name.len() == 1 => Some(u32::from(name[0])),
            _ => None,
        };
        if matches!(start, BElem::Equiv(_) | BElem::Class(_))
            || matches!(end, BElem::Equiv(_) | BElem::Class(_))
        {
            return Err(msg::ERANGE);
        }
        let (Some(a), Some(b)) = (ordinal(start), ordinal(end)) else {
            return Err(msg::ECOLLATE);
        };
        if a > b {
            return Err(msg::ERANGE);
        }
        set.ranges.push((a, b));
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// gnulib's DFA reader (lib/dfa.c `lex` and `parse`, with grep 3.8's options
// DFA_CONFUSING_BRACKETS_ERROR | DFA_STRAY_BACKSLASH_WARN | DFA_PLUS_WARN, and DFA_STAR_WARN
// for -E): the warnings, its own errors, and the meaning whenever it can run the pattern.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DTok {
    End,
    Lit(Sym),
    BackRef,
    Assert(Assert),
    QMark,
    Star,
    Plus,
    Repeat(i32, i32),
    Or,
    LParen,
    RParen,
    Any,
    Escape(Escape),
    /// A bracket expression: the position of its `[`, and whether the DFA can run it.
    Bracket(usize, bool),
}

/// What a lexed character turns out to be.
enum Act {
    /// An ordinary character.
    Normal,
    /// dfa.c's `default_case`: ordinary, but a backslash before it is stray.
    Default,
    Token(DTok),
}

struct Dfa<'p, 'a> {
    p: &'p Pat<'a>,
    brackets: &'p [(usize, CharSet)],
    pos: usize,
    tok: DTok,
    lasttok: DTok,
    /// True where a repetition operator would have nothing to repeat.
    laststart: bool,
    parens: usize,
    depth: usize,
    warnings: Vec<String>,
}

impl<'p, 'a> Dfa<'p, 'a> {
    fn new(p: &'p Pat<'a>, brackets: &'p [(usize, CharSet)]) -> Self {
        Dfa {
            p,
            brackets,
            pos: 0,
            tok: DTok::End,
            lasttok: DTok::End,
            laststart: true,
            parens: 0,
            depth: 0,
            warnings: Vec::new(),
        }
    }

    fn next(&mut self) -> Parsed<()> {
        self.tok = self.lex()?;
        self.lasttok = self.tok;
        Ok(())
    }

    fn lex(&mut self) -> Parsed<DTok> {
        let ere = self.p.ere;
        let bre = !ere;
        let mut backslash = false;
        loop {
            let Some(s) = self.p.get(self.pos) else {
                return Ok(DTok::End);
            };
            self.pos += 1;
            let act = match s.single() {
                Some(b'\\') if !backslash => {
                    if self.pos >= self.p.syms.len() {
                        return Err(msg::DFA_UNFINISHED_ESCAPE);
                    }
                    backslash = true;
                    continue;
                }
                Some(b'\\') => Act::Normal,
                Some(b'^') if backslash => Act::Normal,
                Some(b'^') => {
                    if ere || matches!(self.lasttok, DTok::End | DTok::LParen | DTok::Or) {
                        Act::Token(DTok::Assert(Assert::LineStart))
                    } else {
                        Act::Normal
                    }
                }
                Some(b'$') if backslash => Act::Normal,
                Some(b'$') => {
                    if ere || self.dollar_is_anchor() {
                        Act::Token(DTok::Assert(Assert::LineEnd))
                    } else {
                        Act::Normal
                    }
                }
                Some(b'1'..=b'9') if backslash => {
                    self.laststart = false;
                    Act::Token(DTok::BackRef)
                }
                Some(c @ (b'`' | b'\'' | b'<' | b'>' | b'b' | b'B')) if backslash => {
                    Act::Token(DTok::Assert(match c {
                        b'`' => Assert::LineStart,
                        b'\'' => Assert::LineEnd,
                        b'<' => Assert::WordStart,
                        b'>' => Assert::WordEnd,
                        b'b' => Assert::WordBoundary,
                        _ => Assert::NotWordBoundary,
                    }))
                }
                Some(c @ (b'?' | b'+')) => {
                    let tok = if c == b'?' { DTok::QMark } else { DTok::Plus };
                    if backslash != bre {
                        Act::Normal
                    } else if self.laststart {
                        if bre {
                            Act::Default
                        } else {
                            self.warn(format!("{} at start of expression", c as char));
                            Act::Token(tok)
                        }
                    } else {
                        Act::Token(tok)
                    }
                }
                Some(b'*') if backslash => Act::Normal,
                Some(b'*') => {
                    if self.laststart {
                        if bre {
                            Act::Default
                        } else {
                            self.warn("* at start of expression".into());
                            Act::Token(DTok::Star)
                        }
                    } else {
                        Act::Token(DTok::Star)
                    }
                }
                Some(b'{') if backslash != bre => Act::Normal,
                Some(b'{') => self.interval(backslash)?,
                Some(b'|') if backslash != bre => Act::Normal,
                Some(b'|') => {
                    self.laststart = true;
                    Act::Token(DTok::Or)
                }
                Some(b'(') if backslash != bre => Act::Normal,
                Some(b'(') => {
                    self.parens += 1;
                    self.laststart = true;
                    Act::Token(DTok::LParen)
                }
                Some(b')') if backslash != bre => Act::Normal,
                Some(b')') => {
                    if self.parens == 0 && ere {
                        Act::Normal
                    } else {
                        self.parens = self.parens.saturating_sub(1);
                        self.laststart = false;
                        Act::Token(DTok::RParen)
                    }
                }
                Some(b'.') if backslash => Act::Normal,
                Some(b'.') => {
                    self.laststart = false;
                    Act::Token(DTok::Any)
                }
                Some(c @ (b's' | b'S' | b'w' | b'W')) if backslash => {
                    self.laststart = false;
                    Act::Token(DTok::Escape(match c {
                        b'w' => Escape::Word,
                        b'W' => Escape::NotWord,
                        b's' => Escape::Space,
                        _ => Escape::NotSpace,
                    }))
                }
                Some(b'[') if backslash => Act::Normal,
                Some(b'[') => {
                    self.laststart = false;
                    Act::Token(self.bracket()?)
                }
                Some(b']' | b'}') => Act::Normal,
                _ => Act::Default,
            };
            return Ok(match act {
                Act::Token(t) => t,
                Act::Default if backslash => {
                    self.warn(stray_message(s, self.p.utf8));
                    self.laststart = false;
                    DTok::Lit(s)
                }
                Act::Normal | Act::Default => {
                    self.laststart = false;
                    DTok::Lit(s)
                }
            });
        }
    }

    fn warn(&mut self, text: String) {
        self.warnings.push(text);
    }

    /// A BRE `$` is an anchor at the end, or before `\)`, `\|` — or, a DFA quirk, before a
    /// plain `)` or `|` that is not the last character.
    fn dollar_is_anchor(&self) -> bool {
        let left = self.p.bytes_left(self.pos);
        if left == 0 {
            return true;
        }
        if left <= 1 {
            return false;
        }
        let skip = usize::from(self.p.get(self.pos).is_some_and(|s| s.is(b'\\')));
        self.p
            .get(self.pos + skip)
            .is_some_and(|s| s.is(b')') || s.is(b'|'))
    }

    /// `{` (ERE) or `\{` (BRE), already consumed.
    fn interval(&mut self, backslash: bool) -> Parsed<Act> {
        let pat = self.p;
        let syms = &pat.syms;
        let lim = syms.len();
        let digit = |at: usize| {
            syms.get(at)
                .and_then(|s| s.single())
                .filter(u8::is_ascii_digit)
                .map(|d| i32::from(d - b'0'))
        };
        let accumulate = |n: i32, d: i32| {
            if n < 0 {
                d
            } else {
                (n * 10 + d).min(RE_DUP_MAX + 1)
            }
        };
        let mut p = self.pos;
        let (mut minrep, mut maxrep) = (-1i32, -1i32);
        while let Some(d) = digit(p) {
            minrep = accumulate(minrep, d);
            p += 1;
        }
        if p < lim {
            if !syms[p].is(b',') {
                maxrep = minrep;
            } else {
                minrep = minrep.max(0);
                p += 1;
                while let Some(d) = digit(p) {
                    maxrep = accumulate(maxrep, d);
                    p += 1;
                }
            }
        }
        let mut closes = |want: u8| {
            let ok = p < lim && syms[p].is(want);
            if p < lim {
                p += 1;
            }
            ok
        };
        let valid = (!backslash || closes(b'\\'))
            && closes(b'}')
            && minrep >= 0
            && (maxrep < 0 || minrep <= maxrep);
        if !valid && self.p.ere {
            return Ok(Act::Normal);
        }
        if self.laststart {
            if !self.p.ere {
                return Ok(Act::Default);
            }
            self.warn("{...} at start of expression".into());
        }
        if !valid {
            return Err(msg::DFA_BADBR);
        }
        if RE_DUP_MAX < maxrep {
            return Err(msg::DFA_ESIZE);
        }
        self.pos = p;
        self.laststart = false;
        Ok(Act::Token(DTok::Repeat(minrep, maxrep)))
    }

    fn bracket_fetch(&mut self) -> Parsed<Sym> {
        let s = self.p.get(self.pos).ok_or(msg::DFA_UNBALANCED_BRACKET)?;
        self.pos += 1;
        Ok(s)
    }

    /// dfa.c `parse_bracket_exp`, for its extent, its errors and whether the DFA can run
    /// it; what it matches is glibc's reading.
    fn bracket(&mut self) -> Parsed<DTok> {
        let at = self.pos - 1;
        let utf8 = self.p.utf8;
        // Only the C locale is "simple" (collation in byte order).
        let simple = !utf8;
        let mut known = true;
        let mut c = self.bracket_fetch()?;
        let invert = c.is(b'^');
        if invert {
            c = self.bracket_fetch()?;
            known = simple;
        }
        // Bit 0: first character a colon; 1: last a colon; 2: another character;
        // 3: a range or a class: `[:space:]` (bits 0, 1, 2) is an error.
        let mut colon: u8 = u8::from(c.is(b':'));
        loop {
            colon &= !2;
            let mut c1 = None;
            if c.is(b'[') {
                let t = self.bracket_fetch()?;
                if t.is(b':') || t.is(b'.') || t.is(b'=') {
                    let mut name = Vec::new();
                    loop {
                        let x = self.bracket_fetch()?;
                        if self.pos >= self.p.syms.len()
                            || (x == t && self.p.get(self.pos).is_some_and(|s| s.is(b']')))
                        {
                            break;
                        }
                        name.push(x.single().unwrap_or(0xff));
                    }
                    self.bracket_fetch()?; // the `]`
                    if t.is(b':') {
                        // dfa.c keeps 32 bytes of a name; a longer one is no class.
                        let class = Some(&name[..])
                            .filter(|n| n.len() <= 32)
                            .and_then(Class::from_name)
                            .ok_or(msg::DFA_BAD_CLASS)?;
                        if utf8 && class != Class::Digit {
                            known = false;
                        }
                    } else {
                        known = false;
                    }
                    colon |= 8;
                    c = self.bracket_fetch()?;
                    if c.is(b']') {
                        break;
                    }
                    continue;
                }
                c1 = Some(t);
            }
            let mut c1 = match c1 {
                Some(t) => t,
                None => self.bracket_fetch()?,
            };
            if c1.is(b'-') {
                let c2 = self.bracket_fetch()?;
                let coll_end = c2.is(b'[') && self.p.get(self.pos).is_some_and(|s| s.is(b'.'));
                if coll_end {
                    known = false;
                }
                if coll_end || c2.is(b']') {
                    // `[a-]`: the `-` is a character; read the `]` (or `[`) again.
                    self.pos -= 1;
                } else {
                    colon |= 8;
                    c1 = self.bracket_fetch()?;
                    if c != c2 || c.wide().is_none() {
                        let digits = c.single().is_some_and(|b| b.is_ascii_digit())
                            && c2.single().is_some_and(|b| b.is_ascii_digit());
                        if !(simple || digits) {
                            known = false;
                        }
                        c = c1;
                        if c.is(b']') {
                            break;
                        }
                        continue;
                    }
                }
            }
            colon |= if c.is(b':') { 2 } else { 4 };
            if utf8 && matches!(c, Sym::Byte(_)) {
                known = false;
            }
            c = c1;
            if c.is(b']') {
                break;
            }
        }
        if colon == 7 {
            return Err(msg::DFA_COLON);
        }
        // dfa.c returns MBCSET for a set with wide characters, but `addtok` spells those out
        // as alternatives: only an unknown set (BACKREF) stops the DFA.
        Ok(DTok::Bracket(at, known))
    }

    fn parse(&mut self) -> Parsed<Node> {
        self.next()?;
        let tree = self.regexp()?;
        if self.tok != DTok::End {
            return Err(msg::DFA_UNBALANCED_CLOSE);
        }
        Ok(tree)
    }

    fn regexp(&mut self) -> Parsed<Node> {
        let first = self.branch()?;
        if self.tok != DTok::Or {
            return Ok(first);
        }
        let mut alts = vec![first];
        while self.tok == DTok::Or {
            self.next()?;
            alts.push(self.branch()?);
        }
        Ok(Node::Alt(alts))
    }

    fn branch(&mut self) -> Parsed<Node> {
        let mut items = vec![self.closure()?];
        while !matches!(self.tok, DTok::RParen | DTok::Or | DTok::End) {
            items.push(self.closure()?);
        }
        Ok(concat(items))
    }

    fn closure(&mut self) -> Parsed<Node> {
        let mut node = self.atom()?;
        loop {
            let (min, max) = match self.tok {
                DTok::QMark => (0, Some(1)),
                DTok::Star => (0, None),
                DTok::Plus => (1, None),
                // `{0}` drops what it repeats; what follows takes its place.
                DTok::Repeat(0, 0) => {
                    self.next()?;
                    node = self.atom()?;
                    continue;
                }
                DTok::Repeat(min, max) => (min as u32, (max >= 0).then_some(max as u32)),
                _ => return Ok(node),
            };
            node = repeat(node, min, max);
            if repeat_depth(&node) > MAX_REPEAT_NESTING {
                return Err(msg::REPEATS);
            }
            self.next()?;
        }
    }

    fn atom(&mut self) -> Parsed<Node> {
        let node = match self.tok {
            DTok::Lit(s) => Node::Lit(s),
            DTok::Any => Node::Any,
            DTok::BackRef => Node::BackRef,
            DTok::Assert(a) => Node::Assert(a),
            DTok::Escape(e) => Node::Set(e.set(self.p.utf8)),
            DTok::Bracket(at, runs) => match self.brackets.iter().find(|(pos, _)| *pos == at) {
                Some((_, set)) => Node::Set(CharSet {
                    dfa_runs: runs,
                    ..set.clone()
                }),
                // The two readers disagree on where a set is: let glibc's reading decide.
                None => Node::BackRef,
            },
            DTok::LParen => {
                self.depth += 1;
                if self.depth > MAX_NESTING {
                    return Err(msg::STACK);
                }
                self.next()?;
                let inner = self.regexp()?;
                if self.tok != DTok::RParen {
                    return Err(msg::DFA_UNBALANCED_OPEN);
                }
                self.depth -= 1;
                Node::Group(Box::new(inner))
            }
            _ => return Ok(Node::Empty),
        };
        self.next()?;
        Ok(node)
    }
}

/// The text of dfa.c's stray-backslash warning for the character after the backslash.
fn stray_message(s: Sym, utf8: bool) -> String {
    let printable = |c: char| {
        if c.is_ascii() || !utf8 {
            (' '..='~').contains(&c)
        } else {
            unicode_class_contains(Class::Print, c)
        }
    };
    let space = |c: char| {
        if c.is_ascii() {
            matches!(c, '\t'..='\r' | ' ')
        } else {
            unicode_class_contains(Class::Space, c)
        }
    };
    match s.wide() {
        Some(c) if printable(c) && space(c) => "stray \\ before white space".into(),
        Some(c) if printable(c) => format!("stray \\ before {c}"),
        _ => "stray \\ before unprintable character".into(),
    }
}

/// Membership of a non-ASCII character in [`Class::unicode`] (for the warnings' wording).
fn unicode_class_contains(class: Class, c: char) -> bool {
    static PRINT: OnceLock<Vec<(char, char)>> = OnceLock::new();
    static SPACE: OnceLock<Vec<(char, char)>> = OnceLock::new();
    let cell = match class {
        Class::Space => &SPACE,
        _ => &PRINT,
    };
    let ranges = cell.get_or_init(|| {
        use regex_syntax::hir::{Class as HirClass, HirKind};
        let hir = regex_syntax::Parser::new()
            .parse(class.unicode())
            .expect("class expressions are valid");
        match hir.kind() {
            HirKind::Class(HirClass::Unicode(u)) => {
                u.ranges().iter().map(|r| (r.start(), r.end())).collect()
            }
            _ => Vec::new(),
        }
    });
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

// ---------------------------------------------------------------------------------------------
// Writing the regex

/// True when the current locale's collation is not code-point order (not C, POSIX or
/// C.UTF-8): equivalence classes and collating symbols then follow its rules.
fn locale_collates() -> bool {
    static COLLATES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *COLLATES.get_or_init(|| {
        // SAFETY: querying (NULL) the current LC_COLLATE name; the string is copied at once.
        let name = unsafe {
            let p = libc::setlocale(libc::LC_COLLATE, std::ptr::null());
            if p.is_null() {
                return false;
            }
            std::ffi::CStr::from_ptr(p).to_bytes().to_vec()
        };
        !(name == b"C" || name == b"POSIX" || name.starts_with(b"C."))
    })
}

/// glibc's case mappings in the current locale (set by the caller with `setlocale`).
mod wctype {
    unsafe extern "C" {
        pub fn towupper(wc: u32) -> u32;
        pub fn towlower(wc: u32) -> u32;
        pub fn toupper(c: i32) -> i32;
    }
}

/// gnulib dfa.c's `lonesome_lower`: characters C for which some locale has `C !=
/// towupper(C)` and `C != towlower(towupper(C))`.
const LONESOME_LOWER: [u32; 19] = [
    0x00B5, 0x0131, 0x017F, 0x01C5, 0x01C8, 0x01CB, 0x01F2, 0x0345, 0x03C2, 0x03D0, 0x03D1, 0x03D5,
    0x03D6, 0x03F0, 0x03F1, 0x03F2, 0x03F5, 0x1E9B, 0x1FBE,
];

/// dfa.c's `case_folded_counterparts`: the characters `-i` lets `c` stand for besides itself,
/// by glibc's `towupper`/`towlower` in the current locale (not Unicode's case folding: the
/// Kelvin sign is not a `k`, and in Turkish `i` pairs with `İ`, not `I`). In a unibyte locale,
/// every byte whose `toupper` is `c`'s (dfa.c's `setbit_case_fold_c`; kwset and glibc's
/// `RE_ICASE` compare upper cases too): in ISO-8859-7 each of Σ, σ and ς stands for all three.
pub(crate) fn case_counterparts(c: u32, utf8: bool) -> Vec<u32> {
    let mut out = Vec::new();
    if !utf8 {
        if c < 256 {
            // SAFETY: toupper takes any value of an unsigned char.
            let upper = |b: u32| unsafe { wctype::toupper(b as i32) };
            let uc = upper(c);
            out.extend((0..256).filter(|&b| b != c && upper(b) == uc));
        }
        return out;
    }
    // SAFETY: towupper/towlower take any wint_t.
    let (uc, lc) = unsafe {
        let uc = wctype::towupper(c);
        (uc, wctype::towlower(uc))
    };
    if uc != c {
        out.push(uc);
    }
    // SAFETY: as above.
    if lc != uc && lc != c && unsafe { wctype::towupper(lc) } == uc {
        out.push(lc);
    }
    for li in LONESOME_LOWER {
        // SAFETY: as above.
        if li != lc && li != uc && li != c && unsafe { wctype::towupper(li) } == uc {
            out.push(li);
        }
    }
    out
}

/// The set of a character and its `-i` counterparts, or `None` when it has none.
fn folded_char(c: u32, utf8: bool) -> Option<CharSet> {
    let more = case_counterparts(c, utf8);
    if more.is_empty() {
        return None;
    }
    let mut ranges: Vec<(u32, u32)> = std::iter::once(c).chain(more).map(|x| (x, x)).collect();
    ranges.sort_unstable();
    Some(CharSet {
        negated: false,
        ranges,
        classes: Vec::new(),
        dfa_runs: true,
    })
}

/// The largest range whose characters are folded one by one (wider ones keep their own
/// members only).
const FOLD_RANGE_MAX: u32 = 4096;

/// `-i` the way GNU grep's DFA applies it: each literal character becomes the set of it and
/// its counterparts, each bracket expression gains its members' counterparts (before a `^`
/// inverts it). Nothing else is folded: the data is matched as it is.
fn fold_case(node: &Node, utf8: bool) -> Node {
    match node {
        Node::Lit(sym) => {
            let c = match *sym {
                Sym::Char(c) => u32::from(c),
                Sym::Byte(b) if !utf8 || b < 0x80 => u32::from(b),
                Sym::Byte(_) => return node.clone(),
            };
            folded_char(c, utf8).map_or_else(|| node.clone(), Node::Set)
        }
        Node::Set(set) => {
            let mut set = set.clone();
            let mut more = Vec::new();
            for &(a, b) in &set.ranges {
                if b - a > FOLD_RANGE_MAX {
                    continue;
                }
                for c in a..=b {
                    more.extend(case_counterparts(c, utf8).into_iter().map(|x| (x, x)));
                }
            }
            set.ranges.extend(more);
            set.ranges.sort_unstable();
            Node::Set(set)
        }
        Node::Concat(v) => Node::Concat(v.iter().map(|n| fold_case(n, utf8)).collect()),
        Node::Alt(v) => Node::Alt(v.iter().map(|n| fold_case(n, utf8)).collect()),
        Node::Group(n) => Node::Group(Box::new(fold_case(n, utf8))),
        Node::Repeat(n, min, max) => Node::Repeat(Box::new(fold_case(n, utf8)), *min, *max),
        Node::Empty | Node::Any | Node::Assert(_) | Node::BackRef => node.clone(),
    }
}

/// What [`emit_node`] wrote: `atom` when a quantifier may follow it directly.
struct Emitted {
    text: String,
    atom: bool,
    empty: bool,
}

fn emit(node: &Node, utf8: bool, eol: u8) -> String {
    emit_node(node, utf8, eol).text
}

/// `eol`: the byte that ends lines (a newline, or NUL with `-z`), which nothing matches.
fn emit_node(node: &Node, utf8: bool, eol: u8) -> Emitted {
    let atom = |text: String| Emitted {
        text,
        atom: true,
        empty: false,
    };
    match node {
        Node::Empty => Emitted {
            text: String::new(),
            atom: false,
            empty: true,
        },
        Node::Lit(s) => atom(literal(*s)),
        Node::Any => atom(match (utf8, eol) {
            (true, b'\n') => r"[^\n]".into(),
            (false, b'\n') => r"(?-u:[^\n])".into(),
            (true, e) => format!(r"[^\x{{{e:X}}}]"),
            (false, e) => format!(r"(?-u:[^\x{e:02X}])"),
        }),
        Node::Set(set) => atom(if utf8 {
            unicode_set(set, eol)
        } else {
            byte_set(set, eol)
        }),
        Node::Assert(a) => Emitted {
            text: assertion(*a, utf8).into(),
            atom: false,
            empty: false,
        },
        Node::Group(inner) => emit_node(inner, utf8, eol),
        Node::Concat(items) => {
            let parts: Vec<Emitted> = items
                .iter()
                .map(|n| emit_node(n, utf8, eol))
                .filter(|e| !e.empty)
                .collect();
            match parts.len() {
                0 => emit_node(&Node::Empty, utf8, eol),
                1 => parts.into_iter().next().unwrap(),
                _ => Emitted {
                    text: parts.into_iter().map(|e| e.text).collect(),
                    atom: false,
                    empty: false,
                },
            }
        }
        Node::Alt(alts) => {
            let parts: Vec<String> = alts.iter().map(|n| emit_node(n, utf8, eol).text).collect();
            atom(format!("(?:{})", parts.join("|")))
        }
        Node::Repeat(inner, min, max) => {
            let e = emit_node(inner, utf8, eol);
            if e.empty || *max == Some(0) || (*min == 0 && matches!(**inner, Node::Assert(_))) {
                return emit_node(&Node::Empty, utf8, eol);
            }
            // An assertion repeated at least once is the assertion.
            if matches!(**inner, Node::Assert(_)) {
                return e;
            }
            let mut text = if e.atom {
                e.text
            } else {
                format!("(?:{})", e.text)
            };
            match (min, max) {
                (0, None) => text.push('*'),
                (1, None) => text.push('+'),
                (0, Some(1)) => text.push('?'),
                (m, None) => write!(text, "{{{m},}}").unwrap(),
                (m, Some(n)) if m == n => write!(text, "{{{m}}}").unwrap(),
                (m, Some(n)) => write!(text, "{{{m},{n}}}").unwrap(),
            }
            Emitted {
                text,
                atom: false,
                empty: false,
            }
        }
        // Only in a filter (`translate_filter`): any text of the line.
        Node::BackRef => Emitted {
            text: match (utf8, eol) {
                (true, b'\n') => r"(?:[^\n]*)".into(),
                (false, b'\n') => r"(?-u:[^\n]*)".into(),
                (true, e) => format!(r"(?:[^\x{{{e:X}}}]*)"),
                (false, e) => format!(r"(?-u:[^\x{e:02X}]*)"),
            },
            atom: true,
            empty: false,
        },
    }
}

fn assertion(a: Assert, utf8: bool) -> &'static str {
    match (a, utf8) {
        (Assert::LineStart, _) => "^",
        (Assert::LineEnd, _) => "$",
        (Assert::WordStart, true) => r"\b{start}",
        (Assert::WordEnd, true) => r"\b{end}",
        (Assert::WordBoundary, true) => r"\b",
        (Assert::NotWordBoundary, true) => r"\B",
        (Assert::WordStart, false) => r"(?-u:\b{start})",
        (Assert::WordEnd, false) => r"(?-u:\b{end})",
        (Assert::WordBoundary, false) => r"(?-u:\b)",
        (Assert::NotWordBoundary, false) => r"(?-u:\B)",
    }
}

/// One pattern character as a regex matching exactly it.
fn literal(s: Sym) -> String {
    match s {
        Sym::Byte(b) if !b.is_ascii() => format!(r"(?-u:\x{b:02X})"),
        Sym::Byte(b) => ascii_literal(b as char),
        Sym::Char(c) if c.is_ascii() => ascii_literal(c),
        Sym::Char(c) if c.is_alphanumeric() => c.to_string(),
        Sym::Char(c) => format!(r"\x{{{:X}}}", c as u32),
    }
}

fn ascii_literal(c: char) -> String {
    if regex_syntax::is_meta_character(c) {
        format!("\\{c}")
    } else if c.is_ascii_graphic() || c == ' ' {
        c.to_string()
    } else {
        format!(r"\x{:02X}", c as u32)
    }
}

/// A set in the C locale: exactly its bytes, never the line end `eol`.
fn byte_set(set: &CharSet, eol: u8) -> String {
    let mut bits = [false; 256];
    for &(a, b) in &set.ranges {
        for x in a..=b.min(255) {
            bits[x as usize] = true;
        }
    }
    for class in &set.classes {
        for (x, bit) in bits.iter_mut().enumerate() {
            *bit |= class.contains_byte(x as u8);
        }
    }
    if set.negated {
        bits.iter_mut().for_each(|b| *b = !*b);
    }
    bits[usize::from(eol)] = false;
    let count = bits.iter().filter(|&&b| b).count();
    if count == 0 {
        return r"(?-u:[^\x00-\xFF])".into();
    }
    // Write whichever of the set and its complement is shorter.
    if count > 128 {
        let mut complement = bits.map(|b| !b);
        complement[usize::from(eol)] = true;
        return format!("(?-u:[^{}])", byte_ranges(&complement));
    }
    format!("(?-u:[{}])", byte_ranges(&bits))
}

fn byte_ranges(bits: &[bool; 256]) -> String {
    let item = |b: usize| {
        let b = b as u8;
        if b.is_ascii_alphanumeric() || b == b'_' {
            (b as char).to_string()
        } else {
            format!(r"\x{b:02X}")
        }
    };
    let mut out = String::new();
    let mut x = 0;
    while x < 256 {
        if !bits[x] {
            x += 1;
            continue;
        }
        let start = x;
        while x < 256 && bits[x] {
            x += 1;
        }
        let end = x - 1;
        out += &item(start);
        if end > start + 1 {
            out.push('-');
        }
        if end > start {
            out += &item(end);
        }
    }
    out
}

/// A set in a UTF-8 locale: valid characters only (never an invalid byte), never the line
/// end `eol`.
fn unicode_set(set: &CharSet, eol: u8) -> String {
    let cp = |x: u32| match char::from_u32(x) {
        Some(c) if c.is_ascii_alphanumeric() || c == '_' => c.to_string(),
        _ => format!(r"\x{{{x:X}}}"),
    };
    let mut items = String::new();
    let mut has_newline = false;
    let e = u32::from(eol);
    for &(a, b) in &set.ranges {
        has_newline |= a <= e && e <= b;
        items += &cp(a);
        if b > a {
            items.push('-');
            items += &cp(b);
        }
    }
    for class in &set.classes {
        has_newline |= match eol {
            b'\n' => matches!(class, Class::Space | Class::Cntrl),
            _ => matches!(class, Class::Cntrl),
        };
        items += class.unicode();
    }
    let end = if eol == b'\n' {
        r"\n".to_string()
    } else {
        format!(r"\x{{{e:X}}}")
    };
    if set.negated {
        format!(r"[^{items}{end}]")
    } else if items.is_empty() {
        r"[^\x{0}-\x{10FFFF}]".into()
    } else if has_newline {
        format!(r"[{items}--{end}]")
    } else {
        format!("[{items}]")
    }
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

// ---------------------------------------------------------------------------------------------
// Multibyte locales other than UTF-8 (crate::multibyte), where glibc's matcher runs every
// pattern: where grep would match with the DFA's reading instead, that reading written out
// for glibc.

/// For grep in a multibyte locale other than UTF-8 ([`crate::multibyte`]): the `-G` (or
/// `-E` when `ere`) patterns that GNU grep matches with its DFA's reading where glibc reads
/// them otherwise (ERE `{1}a`, `^*a`, `a{1\,2}`, BRE `a$)x`: docs/gnu/grep-3.8-patterns.md),
/// each rewritten as an extended expression that glibc reads as the DFA did; `None` for a
/// pattern whose glibc reading is grep's. In each pattern every multibyte character of the
/// locale has been replaced by a byte ≥ 0x80 of its own, which `chars` maps back to the
/// character's bytes (and the pattern has no other byte that could start one).
///
/// GNU runs the DFA only when it can run every pattern of the list: not with a
/// back-reference, a word assertion (`\<`, `\b`, `-w`'s wrapper), `\w` or `\s`, a bracket
/// expression with a multibyte character, a class other than `[:digit:]`, a range other
/// than digits, or a `^` negation (dfa.c `dfasupported` and `parse_bracket_exp` in a
/// multibyte locale). Then every answer is `None`.
pub fn dfa_readings_for_glibc(
    patterns: &[Vec<u8>],
    ere: bool,
    chars: &dyn Fn(u8) -> Option<Vec<u8>>,
) -> Vec<Option<Vec<u8>>> {
    let none = vec![None; patterns.len()];
    let mut readings = Vec::with_capacity(patterns.len());
    for p in patterns {
        match read(p, ere, false) {
            Ok(r) if dfa_runs_multibyte(&r.dfa, chars) => readings.push(r),
            _ => return none,
        }
    }
    readings
        .iter()
        .map(|r| {
            (r.dfa != r.glibc).then(|| {
                let mut out = Vec::new();
                emit_ere(&r.dfa, chars, &mut out);
                out
            })
        })
        .collect()
}

/// Whether GNU's two readers (glibc's and the DFA's) read the `-G` (or `-E`) pattern alike,
/// in the unibyte reading [`dfa_readings_for_glibc`] describes; false if it does not parse.
pub fn readings_agree(pattern: &[u8], ere: bool) -> bool {
    read(pattern, ere, false).is_ok_and(|r| r.dfa == r.glibc)
}

/// Whether gnulib's DFA runs `node` in a multibyte locale other than UTF-8 (see
/// [`dfa_readings_for_glibc`]); `chars` tells the bytes that stand for multibyte characters.
fn dfa_runs_multibyte(node: &Node, chars: &dyn Fn(u8) -> Option<Vec<u8>>) -> bool {
    let single = |c: u32| c < 0x100 && chars(c as u8).is_none();
    let digit = |c: u32| (u32::from(b'0')..=u32::from(b'9')).contains(&c);
    match node {
        Node::BackRef => false,
        Node::Set(set) => {
            set.dfa_runs
                && !set.negated
                && set.classes.iter().all(|c| *c == Class::Digit)
                && set
                    .ranges
                    .iter()
                    .all(|&(lo, hi)| (lo == hi && single(lo)) || (digit(lo) && digit(hi)))
        }
        Node::Assert(a) => matches!(a, Assert::LineStart | Assert::LineEnd),
        Node::Concat(v) | Node::Alt(v) => v.iter().all(|n| dfa_runs_multibyte(n, chars)),
        Node::Group(n) | Node::Repeat(n, ..) => dfa_runs_multibyte(n, chars),
        Node::Empty | Node::Lit(_) | Node::Any => true,
    }
}

/// Writes `node` (a tree [`dfa_runs_multibyte`] accepts) as an extended expression for
/// glibc, each byte that `chars` maps written as its character.
fn emit_ere(node: &Node, chars: &dyn Fn(u8) -> Option<Vec<u8>>, out: &mut Vec<u8>) {
    let zero_width = |n: &Node| matches!(n, Node::Empty | Node::Assert(_));
    match node {
        Node::Empty => out.extend_from_slice(b"()"),
        Node::Lit(sym) => {
            let mut utf8 = [0; 4];
            let bytes: Vec<u8> = match *sym {
                Sym::Byte(b) => chars(b).unwrap_or_else(|| vec![b]),
                Sym::Char(c) => c.encode_utf8(&mut utf8).as_bytes().to_vec(),
            };
            if bytes.len() == 1 && b"\\.[]()*+?{}|^$".contains(&bytes[0]) {
                out.push(b'\\');
            }
            out.extend_from_slice(&bytes);
        }
        Node::Any => out.push(b'.'),
        Node::Set(set) => {
            // Single-byte characters, digit ranges and `[:digit:]`: `]` first, `^` not
            // first, `-` last.
            let (mut singles, mut body) = (Vec::new(), Vec::new());
            for &(lo, hi) in &set.ranges {
                if lo == hi {
                    singles.push(lo as u8);
                } else {
                    body.extend_from_slice(&[lo as u8, b'-', hi as u8]);
                }
            }
            if set.classes.contains(&Class::Digit) {
                body.extend_from_slice(b"[:digit:]");
            }
            let has = |b: u8| singles.contains(&b);
            let (close, caret, dash) = (has(b']'), has(b'^'), has(b'-'));
            singles.retain(|b| !b"]^-".contains(b));
            body.splice(0..0, singles);
            if close {
                body.insert(0, b']');
            }
            if caret {
                if body.is_empty() {
                    out.extend_from_slice(if dash { b"[-^]" } else { b"\\^" });
                    return;
                }
                body.push(b'^');
            }
            if dash {
                body.push(b'-');
            }
            out.push(b'[');
            out.extend_from_slice(&body);
            out.push(b']');
        }
        Node::Assert(Assert::LineStart) => out.push(b'^'),
        Node::Assert(_) => out.push(b'$'),
        Node::Concat(v) => {
            for n in v {
                let group = matches!(n, Node::Alt(_));
                if group {
                    out.push(b'(');
                }
                emit_ere(n, chars, out);
                if group {
                    out.push(b')');
                }
            }
        }
        Node::Alt(v) => {
            for (i, n) in v.iter().enumerate() {
                if i > 0 {
                    out.push(b'|');
                }
                emit_ere(n, chars, out);
            }
        }
        Node::Group(n) => {
            out.push(b'(');
            emit_ere(n, chars, out);
            out.push(b')');
        }
        // An anchor repeated (`(^)*`) is the anchor or nothing.
        Node::Repeat(n, 0, _) if zero_width(n) => out.extend_from_slice(b"()"),
        Node::Repeat(n, ..) if zero_width(n) => emit_ere(n, chars, out),
        Node::Repeat(n, min, max) => {
            out.push(b'(');
            emit_ere(n, chars, out);
            out.push(b')');
            let count = match max {
                Some(max) => format!("{{{min},{max}}}"),
                None => format!("{{{min},}}"),
            };
            out.extend_from_slice(count.as_bytes());
        }
        Node::BackRef => unreachable!("the DFA does not run a back-reference"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use regex::bytes::RegexBuilder;
    use std::ffi::OsStr;
    use std::io::Write;
    use std::os::unix::ffi::OsStrExt;
    use std::process::{Command, Stdio};

    const GREP: &str = "/usr/bin/grep";

    fn tr(pattern: &str, syntax: Syntax, utf8: bool) -> String {
        translate(pattern.as_bytes(), syntax, utf8)
            .unwrap_or_else(|e| panic!("{pattern:?}: unexpected error {e}"))
    }

    fn error(pattern: &[u8], syntax: Syntax, utf8: bool) -> String {
        match translate(pattern, syntax, utf8) {
            Ok(re) => panic!(
                "{:?}: expected an error, got {re:?}",
                pattern.escape_ascii()
            ),
            Err(e) => e.message,
        }
    }

    fn warnings(pattern: &str, syntax: Syntax, utf8: bool) -> Vec<String> {
        translate_with_warnings(pattern.as_bytes(), syntax, utf8)
            .unwrap()
            .1
    }

    /// What grep -c says about a pattern and a haystack: an error, or the count of
    /// matching lines and the warnings.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Outcome {
        Error(String),
        Count(usize, Vec<String>),
    }

    fn have_grep() -> bool {
        let ok = std::path::Path::new(GREP).exists();
        if !ok {
            swath_engine::testing::skip(&format!(
                "{GREP} is missing: the comparison with GNU grep is skipped"
            ));
        }
        ok
    }

    fn gnu(pattern: &[u8], syntax: Syntax, utf8: bool, hay: &[u8]) -> Outcome {
        let flag = match syntax {
            Syntax::Basic => "-G",
            Syntax::Extended => "-E",
            Syntax::Fixed => "-F",
            Syntax::Perl => "-P",
        };
        let mut child = Command::new(GREP)
            .env_clear()
            .env("LC_ALL", if utf8 { "C.UTF-8" } else { "C" })
            .env("DEB_GREP_ENABLE_STRAY_BACKSLASH_WARN", "1")
            .args(["-c", "-a", flag, "-e"])
            .arg(OsStr::from_bytes(pattern))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run grep");
        // grep exits without reading when the pattern is bad: a broken pipe is expected.
        let _ = child.stdin.take().unwrap().write_all(hay);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr
            .lines()
            .map(|l| l.strip_prefix("/usr/bin/grep: ").unwrap_or(l))
            .collect();
        if out.status.code() == Some(2) {
            return Outcome::Error(lines.last().copied().unwrap_or("").to_owned());
        }
        let warnings = lines
            .iter()
            .filter_map(|l| l.strip_prefix("warning: "))
            .map(str::to_owned)
            .collect();
        let count = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        Outcome::Count(count, warnings)
    }

    fn lines(hay: &[u8]) -> impl Iterator<Item = &[u8]> {
        let body = hay.strip_suffix(b"\n").unwrap_or(hay);
        let none = hay.is_empty();
        body.split(|&b| b == b'\n').filter(move |_| !none)
    }

    fn ours(pattern: &[u8], syntax: Syntax, utf8: bool, hay: &[u8]) -> Outcome {
        match translate_with_warnings(pattern, syntax, utf8) {
            Err(e) => Outcome::Error(e.message),
            Ok((re, warnings)) => {
                let regex = RegexBuilder::new(&re)
                    .multi_line(true)
                    .unicode(utf8)
                    .build()
                    .unwrap_or_else(|e| panic!("{:?} -> {re:?}: {e}", pattern.escape_ascii()));
                for m in regex.find_iter(hay) {
                    assert!(!m.as_bytes().contains(&b'\n'), "{re:?} matched a newline");
                }
                let count = lines(hay).filter(|l| regex.is_match(l)).count();
                Outcome::Count(count, warnings)
            }
        }
    }

    /// Differences swath does not reproduce (documented in docs/gnu/grep-3.8-patterns.md).
    fn known_divergence(
        pattern: &[u8],
        syntax: Syntax,
        utf8: bool,
        hay: &[u8],
        gnu: &Outcome,
        ours: &Outcome,
    ) -> bool {
        let has = |s: &[u8]| pattern.windows(s.len()).any(|w| w == s);
        // Where the two readings differ and the DFA cannot run the pattern, grep keeps the
        // lines both accept; swath takes glibc's reading, which accepts more.
        if let (Outcome::Count(g, gw), Outcome::Count(o, ow)) = (gnu, ours) {
            let reading = read(pattern, syntax == Syntax::Extended, utf8).unwrap();
            let disagree = syntax != Syntax::Fixed
                && !dfa_can_run(&reading.dfa, utf8)
                && emit(&reading.glibc, utf8, b'\n') != emit(&reading.dfa, utf8, b'\n');
            if disagree && g <= o && gw == ow {
                return true;
            }
        }
        // A back-reference GNU accepts is refused.
        if matches!(gnu, Outcome::Count(..))
            && matches!(ours, Outcome::Error(m) if m.starts_with("back-references"))
        {
            return true;
        }
        // glibc's word anchors take a byte of invalid UTF-8 for a letter.
        utf8 && std::str::from_utf8(hay).is_err()
            && [&b"\\<"[..], b"\\>", b"\\b", b"\\B"].iter().any(|s| has(s))
    }

    fn compare(pattern: &[u8], syntax: Syntax, utf8: bool, hay: &[u8]) -> Result<(), String> {
        let g = gnu(pattern, syntax, utf8, hay);
        let o = ours(pattern, syntax, utf8, hay);
        if g == o || known_divergence(pattern, syntax, utf8, hay, &g, &o) {
            return Ok(());
        }
        Err(format!(
            "pattern {:?} ({syntax:?}, utf8 {utf8}) -> {:?}\nhaystack {:?}\nGNU:  {g:?}\nours: {o:?}",
            pattern.escape_ascii().to_string(),
            translate(pattern, syntax, utf8),
            hay.escape_ascii().to_string(),
        ))
    }

    const HAY: &[u8] =
        b"a\nb\nab\nba\naab\nabab\n\n \na b\n*a\n+a\n?a\na{1}\n{1}a\n1}a\na{\na{x\n(a)\na|b\n\
a$b\na$)x\na^b\n^a\n\\a\n\\\n-\n]\n[a]\n:a:\n\xc3\xa9\n\xc3\xa9\xc3\xa9\na\xc3\xa9b\n\xff\na\xffb\n\
\xc3\nx\ty\nA\nAB\n_a_\n123\nfoo bar\nfoo-bar\n\x01\n{\n}\n{}\n,\na{1,2}b\n";

    /// Nesting limits, on a thread with room for them.
    fn deep_nesting() {
        let too_deep = STACK_OVERFLOW;
        // Too deep, balanced or not: GNU's stack overflow; unclosed but not that deep:
        // glibc's own message.
        let deep =
            |open: &str, close: &str, n: usize| format!("{}a{}", open.repeat(n), close.repeat(n));
        assert_eq!(
            error(
                deep("(", ")", MAX_NESTING + 1).as_bytes(),
                Syntax::Extended,
                false
            ),
            too_deep
        );
        assert_eq!(
            error(
                deep("\\(", "\\)", MAX_NESTING + 1).as_bytes(),
                Syntax::Basic,
                true
            ),
            too_deep
        );
        assert_eq!(
            error(&[b'('; 10_000], Syntax::Extended, false),
            "Unmatched ( or \\("
        );
        assert_eq!(error(&[b'('; 30_000], Syntax::Extended, false), too_deep);
        assert_eq!(
            error("\\(".repeat(10_000).as_bytes(), Syntax::Basic, true),
            "Unmatched ( or \\("
        );
        // 300 levels, as GNU reads them.
        assert!(translate(deep("(", ")", 300).as_bytes(), Syntax::Extended, true).is_ok());
    }

    #[test]
    fn plain_translations() {
        assert_eq!(tr("abc", Syntax::Basic, false), "abc");
        assert_eq!(tr("", Syntax::Basic, false), "");
        assert_eq!(tr("a.c", Syntax::Basic, true), r"a[^\n]c");
        assert_eq!(tr("a.c", Syntax::Basic, false), r"a(?-u:[^\n])c");
        assert_eq!(tr(r"a\(b\)*", Syntax::Basic, false), "ab*");
        assert_eq!(tr(r"\(ab\)*", Syntax::Basic, false), "(?:ab)*");
        assert_eq!(tr("(ab)+|c", Syntax::Extended, false), "(?:(?:ab)+|c)");
        assert_eq!(tr(r"a\{2,3\}", Syntax::Basic, false), "a{2,3}");
        assert_eq!(
            tr("a{2,}b{,3}c{4}", Syntax::Extended, false),
            "a{2,}b{0,3}c{4}"
        );
        assert_eq!(tr("a+?", Syntax::Extended, false), "a*");
        assert_eq!(tr("a**", Syntax::Extended, false), "a*");
        assert_eq!(tr("é", Syntax::Basic, true), "é");
        assert_eq!(tr("é", Syntax::Basic, false), r"(?-u:\xC3)(?-u:\xA9)");
        assert_eq!(tr("a+b?c|d", Syntax::Basic, false), r"a\+b\?c\|d");
        assert_eq!(tr(r"a\+b\?c\|d", Syntax::Basic, false), "(?:a+b?c|d)");
    }

    #[test]
    fn anchors_and_escapes() {
        assert_eq!(tr("^a$", Syntax::Basic, false), "^a$");
        assert_eq!(tr("a^b$c", Syntax::Basic, false), r"a\^b\$c");
        assert_eq!(tr(r"\(^a$\)", Syntax::Basic, false), "^a$");
        assert_eq!(tr(r"x\|^a$\|y", Syntax::Basic, false), "(?:x|^a$|y)");
        assert_eq!(tr("^*", Syntax::Basic, false), r"^\*");
        assert_eq!(tr("*a", Syntax::Basic, false), r"\*a");
        assert_eq!(tr(r"\`a\'", Syntax::Basic, false), "^a$");
        assert_eq!(tr(r"\<a\>", Syntax::Basic, true), r"\b{start}a\b{end}");
        assert_eq!(tr(r"\ba\B", Syntax::Basic, false), r"(?-u:\b)a(?-u:\B)");
        assert_eq!(
            tr(r"\w\W", Syntax::Basic, false),
            r"(?-u:[0-9A-Z_a-z])(?-u:[^\x0A0-9A-Z_a-z])"
        );
        assert_eq!(
            tr(r"\s", Syntax::Basic, false),
            r"(?-u:[\x09\x0B-\x0D\x20])"
        );
        assert_eq!(
            tr(r"\S", Syntax::Basic, true),
            r"[^[\t-\r\x20\p{Zs}\x{2028}\x{2029}--\x{A0}\x{2007}\x{202F}]\n]"
        );
        assert_eq!(
            tr(r"\.\*\[\]\^\$\\", Syntax::Basic, false),
            r"\.\*\[\]\^\$\\"
        );
        assert_eq!(tr(r"\d\t", Syntax::Basic, false), "dt");
        // The ERE quirks of the DFA, which decides in the C locale.
        assert_eq!(tr("^*a", Syntax::Extended, false), "a");
        assert_eq!(tr("{1}a", Syntax::Extended, false), "a");
        assert_eq!(tr("a{1", Syntax::Extended, false), r"a\{1");
        assert_eq!(tr("a{,", Syntax::Extended, false), r"a\{,");
        assert_eq!(tr("a)", Syntax::Extended, false), r"a\)");
        assert_eq!(tr("()", Syntax::Extended, false), "");
        assert_eq!(tr("a|", Syntax::Extended, false), "(?:a|)");
        // ... and glibc's, which decides when the DFA cannot run the pattern.
        assert_eq!(
            tr("^*a[[:alpha:]]", Syntax::Extended, true),
            r"^a[[\p{Alphabetic}\p{Nd}--0-9]]"
        );
        assert_eq!(tr("{1}a\\<", Syntax::Extended, true), r"1\}a\b{start}");
        // A BRE `$` before a plain `)` that is not last is an anchor for the DFA.
        assert_eq!(tr("a$)x", Syntax::Basic, false), r"a$\)x");
        assert_eq!(tr("a$)", Syntax::Basic, false), r"a\$\)");
    }

    #[test]
    fn bracket_expressions() {
        assert_eq!(tr("[abc]", Syntax::Basic, false), "(?-u:[a-c])");
        assert_eq!(tr("[]a]", Syntax::Basic, true), r"[\x{5D}a]");
        assert_eq!(tr("[^]a]", Syntax::Basic, false), r"(?-u:[^\x0A\x5Da])");
        assert_eq!(tr("[a-]", Syntax::Basic, false), r"(?-u:[\x2Da])");
        assert_eq!(tr(r"[\]", Syntax::Basic, false), r"(?-u:[\x5C])");
        assert_eq!(tr("[[:digit:]x]", Syntax::Basic, true), "[x0-9]");
        assert_eq!(tr("[[:alpha:]]", Syntax::Basic, false), "(?-u:[A-Za-z])");
        assert_eq!(
            tr("[[:space:]]", Syntax::Basic, true),
            r"[[\t-\r\x20\p{Zs}\x{2028}\x{2029}--\x{A0}\x{2007}\x{202F}]--\n]"
        );
        assert_eq!(tr("[^a]", Syntax::Basic, true), r"[^a\n]");
        assert_eq!(tr("[[=a=][.b.]]", Syntax::Basic, true), "[ab]");
        assert_eq!(tr("[[.-.]a]", Syntax::Basic, false), r"(?-u:[\x2Da])");
        assert_eq!(tr("[é]", Syntax::Basic, true), r"[\x{E9}]");
        // In UTF-8 a byte of invalid UTF-8 in a set matches nothing; a range of bytes covers
        // the code points with those values.
        assert_eq!(
            translate(b"[\xff]", Syntax::Basic, true).unwrap(),
            r"[^\x{0}-\x{10FFFF}]"
        );
        assert_eq!(
            translate(b"[\xe0-\xff]", Syntax::Basic, true).unwrap(),
            r"[\x{E0}-\x{FF}]"
        );
        assert_eq!(
            translate(b"[\xe0-\xff]", Syntax::Basic, false).unwrap(),
            r"(?-u:[\xE0-\xFF])"
        );
        assert_eq!(
            translate(b"\xff", Syntax::Basic, true).unwrap(),
            r"(?-u:\xFF)"
        );
    }

    #[test]
    fn error_messages() {
        let cases: &[(&[u8], Syntax, &str)] = &[
            (b"[a", Syntax::Basic, "Unmatched [, [^, [:, [., or [="),
            (b"[]", Syntax::Basic, "Unmatched [, [^, [:, [., or [="),
            (
                b"[[:alpha:]",
                Syntax::Basic,
                "Unmatched [, [^, [:, [., or [=",
            ),
            (b"[", Syntax::Basic, "Invalid regular expression"),
            (b"[^", Syntax::Extended, "Invalid regular expression"),
            (b"\\(a", Syntax::Basic, "Unmatched ( or \\("),
            (b"(a", Syntax::Extended, "Unmatched ( or \\("),
            (b"(*)", Syntax::Extended, "Unmatched ( or \\("),
            (b"a\\)", Syntax::Basic, "Unmatched ) or \\)"),
            (b"a\\{1", Syntax::Basic, "Unmatched \\{"),
            (b"a\\{1,2", Syntax::Basic, "Unmatched \\{"),
            (b"a\\{x\\}", Syntax::Basic, "Invalid content of \\{\\}"),
            (b"a{2,1}", Syntax::Extended, "Invalid content of \\{\\}"),
            (b"a{}", Syntax::Extended, "Invalid content of \\{\\}"),
            (b"a{1,2,3}", Syntax::Extended, "Invalid content of \\{\\}"),
            (b"a\\{1\\,2\\}", Syntax::Basic, "invalid content of \\{\\}"),
            (b"a{32768}", Syntax::Extended, "Regular expression too big"),
            (
                b"a\\{1,99999\\}",
                Syntax::Basic,
                "Regular expression too big",
            ),
            (b"{32768}", Syntax::Extended, "regular expression too big"),
            (b"[z-a]", Syntax::Basic, "Invalid range end"),
            (b"[a-c-e]", Syntax::Basic, "Invalid range end"),
            (b"[[:alpha:]-z]", Syntax::Basic, "Invalid range end"),
            (b"[a---b]", Syntax::Basic, "Invalid range end"),
            (b"[[:foo:]]", Syntax::Basic, "Invalid character class name"),
            (b"[[:a:]", Syntax::Basic, "Invalid character class name"),
            (b"[[.space.]]", Syntax::Basic, "Invalid collation character"),
            (
                b"[:space:]",
                Syntax::Basic,
                "character class syntax is [[:space:]], not [:space:]",
            ),
            (
                b"[:alpha:]",
                Syntax::Extended,
                "character class syntax is [[:space:]], not [:space:]",
            ),
            (b"a\\", Syntax::Basic, "Trailing backslash"),
            (b"\\", Syntax::Extended, "Trailing backslash"),
            (b"\\1", Syntax::Basic, "Invalid back reference"),
            (b"(a)\\2", Syntax::Extended, "Invalid back reference"),
            (b"\\(a\\)\\|\\1", Syntax::Basic, "Invalid back reference"),
            (
                b"\\(a\\)\\1",
                Syntax::Basic,
                "back-references are not supported: \\1",
            ),
            (
                b"(a)(b)\\2",
                Syntax::Extended,
                "back-references are not supported: \\2",
            ),
        ];
        for &(pattern, syntax, message) in cases {
            for utf8 in [false, true] {
                assert_eq!(
                    error(pattern, syntax, utf8),
                    message,
                    "{:?}",
                    pattern.escape_ascii()
                );
            }
        }
        // Collation in C.UTF-8 has no rules: a multibyte end of a range is an error.
        assert_eq!(
            error("[a-é]".as_bytes(), Syntax::Basic, true),
            "Invalid collation character"
        );
        assert_eq!(
            error("[[=é=]]".as_bytes(), Syntax::Basic, true),
            "Invalid collation character"
        );
        // Deep patterns recurse up to 4 KiB a group in the tests' build: more than a test
        // thread's 2 MiB (the search module reads them on a thread made for them).
        std::thread::Builder::new()
            .stack_size((MAX_NESTING + 2) * (4 << 10))
            .spawn(deep_nesting)
            .unwrap()
            .join()
            .unwrap();
        // -P: PCRE2's UTF-8 errors.
        assert_eq!(
            error(b"a\xff", Syntax::Perl, true),
            "UTF-8 error: illegal byte (0xfe or 0xff)"
        );
        assert_eq!(
            error(b"\xe2\x82", Syntax::Perl, true),
            "UTF-8 error: 1 byte missing at end"
        );
        assert_eq!(
            error(b"\xc3a", Syntax::Perl, true),
            "UTF-8 error: byte 2 top bits not 0x80"
        );
        assert_eq!(
            error(b"\xed\xa0\x80", Syntax::Perl, true),
            "UTF-8 error: code points 0xd800-0xdfff are not defined"
        );
        assert_eq!(
            error(b"\x80", Syntax::Perl, true),
            "UTF-8 error: isolated byte with 0x80 bit set"
        );
        assert_eq!(format!("{}", PatternError::new("x")), "x");
    }

    #[test]
    fn warning_texts() {
        assert_eq!(warnings(r"\d", Syntax::Basic, false), ["stray \\ before d"]);
        assert_eq!(
            warnings(r"a\ ", Syntax::Extended, false),
            ["stray \\ before white space"]
        );
        assert_eq!(warnings("\\é", Syntax::Basic, true), ["stray \\ before é"]);
        assert_eq!(
            warnings("\\é", Syntax::Basic, false),
            ["stray \\ before unprintable character"]
        );
        assert_eq!(
            warnings(r"\-a", Syntax::Basic, false),
            ["stray \\ before -"]
        );
        assert_eq!(
            warnings(r"\]\}\.", Syntax::Basic, false),
            Vec::<String>::new()
        );
        assert_eq!(
            warnings(r"\{1\}a", Syntax::Basic, false),
            ["stray \\ before {"]
        );
        assert_eq!(
            warnings(r"\?a\+", Syntax::Basic, false),
            ["stray \\ before ?"]
        );
        assert_eq!(
            warnings("**", Syntax::Extended, false),
            ["* at start of expression"; 2]
        );
        assert_eq!(
            warnings("*a(+b|{1}c)", Syntax::Extended, false),
            [
                "* at start of expression",
                "+ at start of expression",
                "{...} at start of expression"
            ]
        );
        assert_eq!(
            warnings("?a", Syntax::Extended, true),
            ["? at start of expression"]
        );
        assert_eq!(warnings("*a", Syntax::Basic, false), Vec::<String>::new());
    }

    #[test]
    fn fixed_and_perl() {
        assert_eq!(tr("a.b*[c]\\", Syntax::Fixed, false), r"a\.b\*\[c\]\\");
        assert_eq!(
            translate(b"\xff\xc3\xa9", Syntax::Fixed, true).unwrap(),
            r"(?-u:\xFF)é"
        );
        assert_eq!(
            translate(b"\xc3\xa9", Syntax::Fixed, false).unwrap(),
            r"(?-u:\xC3)(?-u:\xA9)"
        );
        assert_eq!(tr(r"\d+(?:x)", Syntax::Perl, true), r"\d+(?:x)");
        assert_eq!(
            translate(b"a\\\xff[\xfe]\\\\", Syntax::Perl, false).unwrap(),
            r"a\xFF[\xFE]\\"
        );
    }

    #[test]
    fn deep_and_long_patterns_are_fine() {
        // As deep as allowed, from a thread with a small stack: read where it fits.
        let nested = format!("{}a{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
        let translated = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let groups = crate::search::group_opens(nested.as_bytes());
                crate::search::with_stack_for(groups, || {
                    translate(nested.as_bytes(), Syntax::Extended, true)
                })
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(translated.unwrap(), "a");
        let stars = format!("a{}", "*".repeat(100_000));
        assert_eq!(tr(&stars, Syntax::Extended, false), "a*");
        let zeros = format!("a{}b", "{0}".repeat(10_000));
        assert_eq!(tr(&zeros, Syntax::Extended, false), "b");
        let dollars = "$".repeat(100_000);
        assert!(translate(dollars.as_bytes(), Syntax::Basic, false).is_ok());
        let repeats = format!("a{}", "{2}".repeat(MAX_REPEAT_NESTING + 1));
        for syntax in [Syntax::Extended, Syntax::Basic] {
            let pattern = if syntax == Syntax::Basic {
                repeats.replace('{', "\\{").replace('}', "\\}")
            } else {
                repeats.clone()
            };
            assert_eq!(
                error(pattern.as_bytes(), syntax, false),
                "nesting more than 1000 levels deep is not supported"
            );
        }
    }

    /// Corner cases, each run by GNU grep and by the regex crate over [`HAY`].
    #[test]
    fn same_as_gnu_on_corner_cases() {
        if !have_grep() {
            return;
        }
        let patterns: &[&[u8]] = &[
            b"a",
            b"^a",
            b"a$",
            b"^$",
            b"",
            b"a*",
            b"*a",
            b"^*a",
            b"^*",
            b"a**",
            b"\\(*a\\)",
            b"(*a)",
            b"a|*b",
            b"a\\|*b",
            b"{1}a",
            b"a{1}",
            b"a{1",
            b"a{",
            b"a{x",
            b"a{,2}",
            b"a\\{1\\}",
            b"\\{1\\}a",
            b"a\\{,\\}",
            b"a{1\\,2}",
            b"^{1}a",
            b"a^*b",
            b"a$*b",
            b"a\\<*b",
            b"a$)x",
            b"a$|x",
            b"a$)",
            b"a$\\)",
            b"()",
            b"a|",
            b"|a",
            b"(|a)",
            b")",
            b"a)",
            b"a\\|",
            b"\\(\\)",
            b"x\\(^a\\)",
            b"\\(^a\\)",
            b"a\\(^b\\)",
            b"[]a]",
            b"[^]a]",
            b"[a-]",
            b"[]-a]",
            b"[!--]",
            b"[[:alpha:]]",
            b"[^[:alpha:]]",
            b"[[:punct:]]",
            b"[[:space:]]x",
            b"[[:upper:]]",
            b"[[:print:]]",
            b"[[:cntrl:]]",
            b"[[=a=]]",
            b"[[.-.]]",
            b"[[.a.]-c]",
            b"[a-[.c.]]",
            b"[\\]",
            b"[\\a]",
            b"[\xff]",
            b"[^\xff]",
            b"[a-\xff]",
            b"\xff",
            b"\xc3",
            b"\xa9",
            b"\xff*a",
            b"\\w",
            b"\\W",
            b"\\s",
            b"\\S",
            b"\\w\\W",
            b"\\<a",
            b"a\\>",
            b"\\ba\\b",
            b"\\Ba",
            b"\\`a",
            b"a\\'",
            b"\\d",
            b"\\{",
            b"\\}",
            b"\\-",
            b"a\\-",
            b"\\.",
            b"^\\^",
            b".",
            b"^.$",
            b"^..$",
            b"^.*$",
            b"a.b",
            "é".as_bytes(),
            "^é$".as_bytes(),
            "é*x".as_bytes(),
            "[é]".as_bytes(),
            b"[[:alpha:]]*",
            b"^[^a]*$",
            b"+a",
            b"?a",
            b"a+?",
            b"a?*",
            b"(a|b)*c",
            b"a{0}b",
            b"(a){0}b",
            b"x*{2}",
            b"\\(a\\|b\\)\\{2\\}",
            b"a\\{0,1\\}b",
        ];
        let mut failures = Vec::new();
        for &pattern in patterns {
            for syntax in [Syntax::Basic, Syntax::Extended, Syntax::Fixed] {
                for utf8 in [false, true] {
                    if let Err(e) = compare(pattern, syntax, utf8, HAY) {
                        failures.push(e);
                    }
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} differences:\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    }

    /// The pieces random patterns are made of.
    const TOKENS: &[&str] = &[
        "a",
        "b",
        "a",
        "b",
        "é",
        ".",
        "*",
        "+",
        "?",
        "|",
        "(",
        ")",
        "{",
        "}",
        "\\",
        "[",
        "]",
        "^",
        "$",
        "-",
        "1",
        "2",
        ",",
        ":",
        " ",
        "\\(",
        "\\)",
        "\\|",
        "\\{1,2\\}",
        "\\{",
        "\\}",
        "\\+",
        "\\?",
        "\\.",
        "\\*",
        "\\1",
        "{1,2}",
        "{,2}",
        "{2}",
        "{0}",
        "{1",
        "[[:alpha:]]",
        "[^a]",
        "[a-c]",
        "[]a]",
        "[:space:]",
        "[[:digit:]]",
        "[[:space:]]",
        "[[=a=]]",
        "[[.-.]]",
        "[é]",
        "\\w",
        "\\W",
        "\\s",
        "\\S",
        "\\<",
        "\\>",
        "\\b",
        "\\B",
        "\\`",
        "\\'",
        "\\d",
        "\\-",
        "\u{ff}",
        "[[:upper:]]",
        "[[:punct:]]",
        "[a-]",
        "[^]a]",
        "[[.a.]-c]",
        "[a-é]",
        "[\u{ff}]",
        "{1}",
        "{,}",
        "\\{,2\\}",
        "\\{0\\}",
        ".*",
        "x",
    ];

    fn pattern_strategy() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(TOKENS), 0..10).prop_map(|toks| {
            toks.iter()
                .flat_map(|t| {
                    // `\u{ff}` stands for the byte 0xFF, which is not UTF-8.
                    t.replace('\u{ff}', "\0")
                        .bytes()
                        .map(|b| if b == 0 { 0xff } else { b })
                        .collect::<Vec<u8>>()
                })
                .collect()
        })
    }

    fn haystack_strategy() -> impl Strategy<Value = Vec<u8>> {
        let pieces: &[&[u8]] = &[
            b"a",
            b"b",
            b"\n",
            b" ",
            b"-",
            b"1",
            b"{",
            b"}",
            b"(",
            b")",
            b"*",
            b"+",
            b"|",
            b"\\",
            b":",
            b"\xc3\xa9",
            b"\xff",
            b"\xc3",
            b"A",
            b"_",
            b"x",
            b"$",
            b"]",
            b",",
        ];
        prop::collection::vec(prop::sample::select(pieces), 0..24).prop_map(|p| p.concat())
    }

    proptest! {
        // PROPTEST_CASES=20000 for a longer search.
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(300),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Random patterns and haystacks: the same errors, warnings and matching lines as GNU
        /// grep -c, in the C and the C.UTF-8 locale.
        #[test]
        fn same_as_gnu_on_random_patterns(
            pattern in pattern_strategy(),
            ere in any::<bool>(),
            hay in haystack_strategy(),
        ) {
            if !have_grep() {
                return Ok(());
            }
            let syntax = if ere { Syntax::Extended } else { Syntax::Basic };
            for utf8 in [false, true] {
                if let Err(e) = compare(&pattern, syntax, utf8, &hay) {
                    prop_assert!(false, "{}", e);
                }
            }
        }
    }
}
