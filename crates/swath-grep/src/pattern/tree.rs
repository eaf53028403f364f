//! What both readers work on: the pattern split into characters (`Sym`, `Pat`), and the
//! syntax tree each of them builds (`Node`), with the operations on it both need.

// ---------------------------------------------------------------------------------------------
// The pattern as characters

/// One character of a pattern: in the C locale every byte; in a UTF-8 locale a valid
/// character, or one byte of an invalid sequence (which only ever matches itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sym {
    Byte(u8),
    Char(char),
}

impl Sym {
    /// The byte, when the character is one byte long: what both GNU readers switch on.
    pub(super) fn single(self) -> Option<u8> {
        match self {
            Sym::Byte(b) => Some(b),
            Sym::Char(c) if c.is_ascii() => Some(c as u8),
            Sym::Char(_) => None,
        }
    }

    pub(super) fn is(self, b: u8) -> bool {
        self.single() == Some(b)
    }

    pub(super) fn is_multibyte(self) -> bool {
        matches!(self, Sym::Char(c) if !c.is_ascii())
    }

    /// The wide character the C library sees (`None` is `WEOF`: a byte ≥ 0x80 of the C
    /// locale, or a byte of an invalid sequence).
    pub(super) fn wide(self) -> Option<char> {
        match self {
            Sym::Byte(b) if b.is_ascii() => Some(b as char),
            Sym::Byte(_) => None,
            Sym::Char(c) => Some(c),
        }
    }
}

/// A pattern split into characters, with the byte offset of each (the bracket-symbol and
/// interval scanners of both readers work on bytes).
pub(super) struct Pat<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) syms: Vec<Sym>,
    /// `offs[i]` is the byte offset of `syms[i]`; one more entry holds the length.
    pub(super) offs: Vec<usize>,
    pub(super) ere: bool,
    pub(super) utf8: bool,
}

impl<'a> Pat<'a> {
    pub(super) fn new(bytes: &'a [u8], ere: bool, utf8: bool) -> Pat<'a> {
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

    pub(super) fn get(&self, at: usize) -> Option<Sym> {
        self.syms.get(at).copied()
    }

    pub(super) fn bytes_left(&self, at: usize) -> usize {
        self.bytes.len() - self.offs[at.min(self.syms.len())]
    }
}

/// Splits `p` into characters the way glibc's `mbrtowc` does: a byte that does not start a
/// valid UTF-8 sequence is a character of its own.
pub(super) fn decode(p: &[u8], utf8: bool) -> Vec<Sym> {
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
pub(super) enum Assert {
    LineStart,
    LineEnd,
    WordStart,
    WordEnd,
    WordBoundary,
    NotWordBoundary,
}

/// A POSIX character class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
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
    pub(super) fn from_name(name: &[u8]) -> Option<Class> {
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
    pub(super) fn contains_byte(self, b: u8) -> bool {
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
    pub(super) fn unicode(self) -> &'static str {
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
pub(super) struct CharSet {
    pub(super) negated: bool,
    pub(super) ranges: Vec<(u32, u32)>,
    pub(super) classes: Vec<Class>,
    /// Whether the DFA can run it (in UTF-8 most sets send grep to glibc's matcher).
    pub(super) dfa_runs: bool,
}

/// `\w` and friends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Escape {
    Word,
    NotWord,
    Space,
    NotSpace,
}

impl Escape {
    pub(super) fn set(self, utf8: bool) -> CharSet {
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
pub(super) enum Node {
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
pub(super) fn repeat(node: Node, min: u32, max: Option<u32>) -> Node {
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
pub(super) fn repeat_depth(mut node: &Node) -> usize {
    let mut depth = 0;
    while let Node::Repeat(inner, ..) = node {
        depth += 1;
        node = inner;
    }
    depth
}

pub(super) fn concat(mut items: Vec<Node>) -> Node {
    items.retain(|n| *n != Node::Empty);
    match items.len() {
        0 => Node::Empty,
        1 => items.pop().unwrap(),
        _ => Node::Concat(items),
    }
}

/// Whether gnulib's DFA can run the tree it built: anything else makes grep use glibc's
/// matcher (dfa.c `dfasupported`, after the tokens `{0}` dropped are gone).
pub(super) fn dfa_can_run(node: &Node, utf8: bool) -> bool {
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
