//! gnulib's DFA reader (lib/dfa.c `lex` and `parse`, with grep 3.8's options
//! DFA_CONFUSING_BRACKETS_ERROR | DFA_STRAY_BACKSLASH_WARN | DFA_PLUS_WARN, and DFA_STAR_WARN
//! for -E): the warnings, its own errors, and the meaning whenever it can run the pattern.

use std::sync::OnceLock;

use super::glibc::Parsed;
use super::tree::{concat, repeat, repeat_depth, Assert, CharSet, Class, Escape, Node, Pat, Sym};
use super::{msg, MAX_NESTING, MAX_REPEAT_NESTING, RE_DUP_MAX};

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

pub(super) struct Dfa<'p, 'a> {
    p: &'p Pat<'a>,
    brackets: &'p [(usize, CharSet)],
    pos: usize,
    tok: DTok,
    lasttok: DTok,
    /// True where a repetition operator would have nothing to repeat.
    laststart: bool,
    parens: usize,
    depth: usize,
    pub(super) warnings: Vec<String>,
}

impl<'p, 'a> Dfa<'p, 'a> {
    pub(super) fn new(p: &'p Pat<'a>, brackets: &'p [(usize, CharSet)]) -> Self {
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

    pub(super) fn parse(&mut self) -> Parsed<Node> {
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
