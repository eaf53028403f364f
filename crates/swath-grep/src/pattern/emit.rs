//! Writing the regex: the syntax tree grep would match with, in the `regex` crate's syntax
//! (bytes in the C locale, valid characters in UTF-8), never matching the line end.

use std::fmt::Write as _;

use super::tree::{Assert, CharSet, Class, Node, Sym};

/// What [`emit_node`] wrote: `atom` when a quantifier may follow it directly.
struct Emitted {
    text: String,
    atom: bool,
    empty: bool,
}

pub(super) fn emit(node: &Node, utf8: bool, eol: u8) -> String {
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
pub(super) fn literal(s: Sym) -> String {
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
