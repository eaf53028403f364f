//! glibc's reader (posix/regcomp.c of glibc 2.36, with grep's RE_SYNTAX_GREP and
//! RE_SYNTAX_EGREP): the errors, and the meaning when the DFA cannot run the pattern.

use super::fold::locale_collates;
use super::tree::{concat, repeat, repeat_depth, Assert, CharSet, Class, Escape, Node, Pat, Sym};
use super::{msg, MAX_NESTING, MAX_REPEAT_NESTING, RE_DUP_MAX};

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

pub(super) struct Glibc<'p, 'a> {
    p: &'p Pat<'a>,
    pos: usize,
    tok: GTok,
    nsub: usize,
    /// Groups closed so far (a back-reference may only name one of them).
    completed: u32,
    /// The first back-reference.
    pub(super) backref: Option<u8>,
    /// An equivalence class or collating symbol in a locale with collation rules: only
    /// glibc's matcher knows what it matches.
    pub(super) collating: bool,
    /// Every bracket expression, by the position of its `[`, for the DFA reader.
    pub(super) brackets: Vec<(usize, CharSet)>,
}

pub(super) type Parsed<T> = Result<T, &'static str>;

impl<'p, 'a> Glibc<'p, 'a> {
    pub(super) fn new(p: &'p Pat<'a>) -> Self {
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

    pub(super) fn parse(&mut self) -> Parsed<Node> {
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
