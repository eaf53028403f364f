//! Multibyte locales other than UTF-8 ([`crate::multibyte`]), where glibc's matcher runs
//! every pattern: where grep would match with the DFA's reading instead, that reading
//! written out for glibc.

use super::read;
use super::tree::{Assert, Class, Node, Sym};

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
