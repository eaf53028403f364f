//! The container of a partial result, generic over its report: for each input (by its
//! position among the command's operands, with its name and its size), the *pieces*
//! computed so far: disjoint spans `[begin, finish)` (see
//! `swath_engine::range::line_span`) with the state of each.
//!
//! Merging two partials unites their pieces and joins the states of adjacent pieces in
//! file order, so any split into ranges, any order and any tree of merges gives the same
//! partial; a piece given twice is an error, and so is rendering an input whose pieces do
//! not cover it whole (a lost piece never goes unnoticed). The wire format is specified in
//! `docs/partial-format.md` and written by [`crate::partial`]'s codecs.

use std::collections::BTreeMap;

use super::{PieceOf, Report};
use crate::partial::{header, input_head, kind_code, piece_head, seal, PartialError, Reader};

/// What the pieces of one input hold (`S`: a piece's state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputPart<S> {
    /// The input's name, as the one-machine command shows it.
    pub name: Vec<u8>,
    /// Its size when the pieces were computed.
    pub len: u64,
    /// Pieces by their first byte: (end, state). Disjoint, adjacent ones merged.
    pub(crate) pieces: BTreeMap<u64, (u64, S)>,
}

impl<S: Clone> InputPart<S> {
    /// The input's state when its pieces cover it whole (`[0, len)`), else an error that
    /// says which bytes no piece covers.
    pub fn whole(&self) -> Result<S, PartialError> {
        let missing = |from: u64, to: u64| PartialError::Missing {
            name: String::from_utf8_lossy(&self.name).into_owned(),
            from,
            to,
        };
        let mut at = 0;
        for (&begin, &(finish, _)) in &self.pieces {
            if begin != at {
                return Err(missing(at, begin));
            }
            at = finish;
        }
        if at != self.len {
            return Err(missing(at, self.len));
        }
        match self.pieces.values().next() {
            Some((_, state)) if self.pieces.len() == 1 => Ok(state.clone()),
            _ => Err(missing(0, self.len)),
        }
    }

    /// The pieces' spans, in file order.
    pub fn spans(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.pieces.iter().map(|(&b, &(f, _))| (b, f))
    }

    /// Adds a piece: joined with its neighbours (by `join`, the earlier state first) when
    /// adjacent; an error when it overlaps one (a range given twice). An empty piece (a
    /// range inside a long line) adds nothing (its state is the empty state) and is kept
    /// only as an empty input's one piece.
    fn add(
        &mut self,
        begin: u64,
        finish: u64,
        state: S,
        join: fn(S, S) -> S,
    ) -> Result<(), PartialError> {
        if begin == finish {
            if self.len == 0 && self.pieces.is_empty() {
                self.pieces.insert(0, (0, state));
            }
            return Ok(());
        }
        let overlap = || PartialError::Overlap {
            name: String::from_utf8_lossy(&self.name).into_owned(),
            begin,
            finish,
        };
        let (mut first, mut last, mut state) = (begin, finish, state);
        if let Some((&b, &(f, _))) = self.pieces.range(..=begin).next_back() {
            if f > begin {
                return Err(overlap());
            }
            if f == begin {
                let (_, s) = self.pieces.remove(&b).expect("just seen");
                (first, state) = (b, join(s, state));
            }
        }
        if let Some((&b, &(f, _))) = self.pieces.range(begin..).next() {
            if b < finish {
                return Err(overlap());
            }
            if b == finish {
                let (_, s) = self.pieces.remove(&b).expect("just seen");
                (last, state) = (f, join(state, s));
            }
        }
        self.pieces.insert(first, (last, state));
        Ok(())
    }
}

/// An input's place in a partial: its operand position, then its name.
pub type InputKey = (u32, Vec<u8>);

/// A partial result of report `R`: the pieces computed so far of its inputs.
pub struct Partial<R: Report> {
    /// The options that change the result or its rendering, as the command wrote them
    /// (two partials must agree on them to merge).
    pub options: Vec<u8>,
    /// Inputs by their position among the command's operands, then their name (pieces
    /// emitted without a position all have position 0: they are then in name order).
    pub inputs: BTreeMap<InputKey, InputPart<R::State>>,
}

// Written out: derived, they would ask `R` itself (a marker type) to be `Clone`, `Debug`
// and `PartialEq`.
impl<R: Report> Clone for Partial<R> {
    fn clone(&self) -> Self {
        Partial {
            options: self.options.clone(),
            inputs: self.inputs.clone(),
        }
    }
}

impl<R: Report> std::fmt::Debug for Partial<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partial")
            .field("kind", &R::NAME)
            .field("options", &self.options)
            .field("inputs", &self.inputs)
            .finish()
    }
}

impl<R: Report> PartialEq for Partial<R> {
    fn eq(&self, other: &Self) -> bool {
        self.options == other.options && self.inputs == other.inputs
    }
}

/// A piece's state left as bytes, with where it lies.
pub(crate) struct Raw<'a> {
    pub(crate) index: u32,
    pub(crate) name: &'a [u8],
    pub(crate) begin: u64,
    pub(crate) state: &'a [u8],
}

impl<R: Report> Partial<R> {
    /// The partial of one piece: `state` over `[begin, finish)` of the input at operand
    /// position `index`, named `name`, of `len` bytes.
    pub fn piece(
        options: Vec<u8>,
        index: u32,
        name: Vec<u8>,
        len: u64,
        (begin, finish): (u64, u64),
        state: R::State,
    ) -> Partial<R> {
        let mut part = InputPart {
            name,
            len,
            pieces: BTreeMap::new(),
        };
        // A single piece cannot overlap anything.
        let _ = part.add(begin, finish, state, R::join);
        let mut inputs = BTreeMap::new();
        inputs.insert((index, part.name.clone()), part);
        Partial { options, inputs }
    }

    /// The union of two partials of the same report and options.
    pub fn merge(mut self, other: Partial<R>) -> Result<Partial<R>, PartialError> {
        if self.options != other.options {
            return Err(PartialError::Options);
        }
        for (key, part) in other.inputs {
            match self.inputs.get_mut(&key) {
                None => {
                    self.inputs.insert(key, part);
                }
                Some(mine) => {
                    if mine.len != part.len {
                        return Err(PartialError::Sizes {
                            name: String::from_utf8_lossy(&mine.name).into_owned(),
                            a: mine.len,
                            b: part.len,
                        });
                    }
                    for (begin, (finish, state)) in part.pieces {
                        mine.add(begin, finish, state, R::join)?;
                    }
                }
            }
        }
        Ok(self)
    }

    /// The partial as bytes (`docs/partial-format.md`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = header(R::CODE, &self.options, self.inputs.len());
        for ((index, _), part) in &self.inputs {
            input_head(&mut out, *index, &part.name, part.len, part.pieces.len());
            for (begin, (finish, state)) in &part.pieces {
                let mut s = Vec::new();
                R::encode(state, &mut s);
                piece_head(&mut out, *begin, *finish, &s);
            }
        }
        seal(out)
    }

    /// The bytes of the partial [`Partial::piece`] makes, with the piece's state already
    /// written (see [`super::piece_bytes`]): a report's tables go to bytes straight from
    /// its own hash tables, keys borrowed, with no table of owned keys built in between.
    pub fn piece_bytes(of: &PieceOf<'_>, (begin, finish): (u64, u64), state: Vec<u8>) -> Vec<u8> {
        let mut head = header(R::CODE, of.options, 1);
        // As `piece` keeps it: an empty piece only as an empty input's one piece.
        let kept = begin != finish || of.len == 0;
        input_head(&mut head, of.index, of.name, of.len, usize::from(kept));
        if !kept {
            return seal(head);
        }
        head.extend_from_slice(&begin.to_le_bytes());
        head.extend_from_slice(&finish.to_le_bytes());
        head.extend_from_slice(&(state.len() as u64).to_le_bytes());
        // The header goes in front of the state where it lies (a state of megabytes
        // copied to a new buffer cost the copy and the new buffer's page faults).
        let mut out = state;
        out.reserve(head.len() + 8);
        out.splice(0..0, head);
        seal(out)
    }

    /// Reads a partial back, checking everything before trusting any of it: header,
    /// version, checksum, kind, then every length against the bytes that remain.
    pub fn from_bytes(b: &[u8]) -> Result<Partial<R>, PartialError> {
        Ok(Self::parse(b, false)?.0)
    }

    /// As [`Partial::from_bytes`], but a streamed report's piece states are not decoded:
    /// the partial comes back as its *shape* (the same inputs and pieces with empty
    /// states: how partials fit together is checked by merging shapes) with the states'
    /// bytes beside it, for a reader that merges them straight from the bytes
    /// ([`crate::logs::streamed`]), every key borrowed, none copied.
    pub fn from_bytes_lazy(b: &[u8]) -> Result<(Partial<R>, Vec<&[u8]>), PartialError> {
        let (shape, raw) = Self::parse(b, true)?;
        Ok((shape, raw.into_iter().map(|r| r.state).collect()))
    }

    pub(crate) fn parse(b: &[u8], lazy: bool) -> Result<(Partial<R>, Vec<Raw<'_>>), PartialError> {
        let code = kind_code(b)?;
        let body = &b[..b.len() - 8];
        let mut r = Reader { b: body, at: 11 };
        if code != R::CODE {
            return Err(PartialError::OtherKind(code));
        }
        r.take(1)?;
        let options_len = r.u32()? as usize;
        let options = r.take(options_len)?.to_vec();
        let n_inputs = r.u32()?;
        let mut inputs = BTreeMap::new();
        let lazy = lazy && R::STREAMED;
        let mut raw = Vec::new();
        for _ in 0..n_inputs {
            let index = r.u32()?;
            let name_len = r.u32()? as usize;
            let name_bytes = r.take(name_len)?;
            let name = name_bytes.to_vec();
            let len = r.u64()?;
            let n_pieces = r.u32()?;
            let mut part = InputPart {
                name,
                len,
                pieces: BTreeMap::new(),
            };
            for _ in 0..n_pieces {
                let (begin, finish) = (r.u64()?, r.u64()?);
                if begin > finish || finish > len {
                    return Err(PartialError::Damaged("a piece lies outside its input"));
                }
                let state_len = usize::try_from(r.u64()?).unwrap_or(usize::MAX);
                let bytes = r.take(state_len)?;
                let state = if lazy {
                    raw.push(Raw {
                        index,
                        name: name_bytes,
                        begin,
                        state: bytes,
                    });
                    R::empty()
                } else {
                    let state = R::decode(bytes)?;
                    R::check(&state, finish - begin)?;
                    state
                };
                part.add(begin, finish, state, R::join)
                    .map_err(|_| PartialError::Damaged("pieces overlap"))?;
            }
            if inputs.insert((index, part.name.clone()), part).is_some() {
                return Err(PartialError::Damaged("an input is listed twice"));
            }
        }
        if r.at != body.len() {
            return Err(PartialError::Damaged("bytes after the last input"));
        }
        Ok((Partial { options, inputs }, raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partial::Wf2Tables;
    use crate::report::{GrepCount, LogWf2, Wc};
    use proptest::prelude::*;
    use swath_kernels::wc::{tally, Encoding, Tally};

    fn text() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                6 => Just(&b"word"[..]),
                3 => Just(&b" "[..]),
                2 => Just(&b"\n"[..]),
                1 => Just(&b"\t"[..]),
                1 => Just(&b"\r\n"[..]),
                1 => Just(&b"caf\xc3\xa9"[..]),
                1 => Just(&b"\xff"[..]),
            ],
            0..120,
        )
        .prop_map(|v| v.concat())
    }

    /// The spans of the ranges between `cuts` under the line rule (as line_span gives
    /// them), computed directly.
    fn spans(data: &[u8], cuts: &[usize]) -> Vec<(u64, u64)> {
        let after = |at: usize| {
            data[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(data.len(), |i| at + i + 1)
        };
        let mut pts: Vec<usize> = cuts.iter().map(|&c| c.min(data.len())).collect();
        pts.extend([0, data.len()]);
        pts.sort();
        pts.dedup();
        pts.windows(2)
            .map(|w| {
                let b = if w[0] == 0 { 0 } else { after(w[0]) };
                let f = if w[1] >= data.len() {
                    data.len()
                } else {
                    after(w[1])
                };
                (b as u64, f.max(b) as u64)
            })
            .collect()
    }

    proptest! {
        /// Pieces of any cuts, merged in any order and any tree, through their bytes,
        /// give the tally of the whole input; and a missing or doubled piece is caught.
        #[test]
        fn any_cuts_order_and_tree_give_the_whole(
            data in text(),
            cuts in proptest::collection::vec(0usize..600, 0..8),
            order in proptest::collection::vec(any::<u32>(), 9),
            fold_left in any::<bool>(),
            utf8 in any::<bool>(),
        ) {
            let enc = if utf8 { Encoding::Utf8 } else { Encoding::C };
            let len = data.len() as u64;
            let mut parts: Vec<Partial<Wc>> = spans(&data, &cuts)
                .into_iter()
                .map(|(b, f)| {
                    let t = tally(&data[b as usize..f as usize], enc);
                    let p = Partial::<Wc>::piece(b"o".to_vec(), 0, b"in".to_vec(), len, (b, f), t);
                    Partial::from_bytes(&p.to_bytes()).unwrap()
                })
                .collect();
            // Any order.
            let mut keyed: Vec<(u32, Partial<Wc>)> = order.iter().copied().zip(parts.drain(..)).collect();
            keyed.sort_by_key(|(k, _)| *k);
            let parts: Vec<Partial<Wc>> = keyed.into_iter().map(|(_, p)| p).collect();
            // Two trees: a left fold, or pairs merged level by level.
            let merged = if fold_left {
                parts.into_iter().reduce(|a, b| a.merge(b).unwrap())
            } else {
                let mut level = parts;
                while level.len() > 1 {
                    let mut next = Vec::new();
                    let mut it = level.into_iter();
                    while let Some(a) = it.next() {
                        next.push(match it.next() {
                            Some(b) => Partial::from_bytes(&a.merge(b).unwrap().to_bytes()).unwrap(),
                            None => a,
                        });
                    }
                    level = next;
                }
                level.pop()
            };
            if let Some(m) = merged {
                let whole = tally(&data, enc);
                let t = m.inputs[&(0, b"in".to_vec())].whole().unwrap();
                prop_assert_eq!(
                    (t.lines, t.words, t.chars, t.bytes, t.max_line()),
                    (whole.lines, whole.words, whole.chars, whole.bytes, whole.max_line())
                );
            }
        }

        #[test]
        fn every_flipped_byte_and_truncation_is_refused(
            data in text(),
            flip in any::<prop::sample::Index>(),
            bit in 0u8..8,
            cut in any::<prop::sample::Index>(),
        ) {
            let t = tally(&data, Encoding::Utf8);
            let p = Partial::<Wc>::piece(b"opts".to_vec(), 3, b"name".to_vec(), data.len() as u64, (0, data.len() as u64), t);
            let bytes = p.to_bytes();
            let mut bad = bytes.clone();
            let i = flip.index(bad.len());
            bad[i] ^= 1 << bit;
            prop_assert!(Partial::<Wc>::from_bytes(&bad).is_err());
            let n = cut.index(bytes.len());
            prop_assert!(Partial::<Wc>::from_bytes(&bytes[..n]).is_err());
            prop_assert_eq!(Partial::<Wc>::from_bytes(&bytes), Ok(p));
        }
    }

    fn tables(keys: Vec<(u8, u64)>) -> Wf2Tables {
        // Keys from a few bytes, so that tables share some.
        let mut t = Wf2Tables::default();
        for (k, n) in keys {
            let one = Wf2Tables {
                malformed: n % 3,
                uris: vec![(vec![b'/', k % 7], [n, n % 2, n % 5], n % 4 == 0)],
                clients: vec![(vec![k % 5], n)],
                referrers: vec![(vec![k % 3, b'r'], n + 1)],
            };
            t = t.merge(one);
        }
        t
    }

    proptest! {
        #[test]
        fn wf2_tables_merge_in_any_order_and_read_back(
            a in proptest::collection::vec((any::<u8>(), 0u64..1000), 0..20),
            b in proptest::collection::vec((any::<u8>(), 0u64..1000), 0..20),
            c in proptest::collection::vec((any::<u8>(), 0u64..1000), 0..20),
        ) {
            let (ta, tb, tc) = (tables(a), tables(b), tables(c));
            let left = ta.clone().merge(tb.clone()).merge(tc.clone());
            let right = tc.merge(tb.merge(ta));
            prop_assert_eq!(&left, &right);
            let p = Partial::<LogWf2>::piece(b"o".to_vec(), 0, b"l".to_vec(), 5, (0, 5), left.clone());
            let back = Partial::<LogWf2>::from_bytes(&p.to_bytes()).unwrap();
            prop_assert_eq!(back.inputs[&(0, b"l".to_vec())].whole(), Ok(left));
        }
    }

    #[test]
    fn missing_doubled_foreign_and_mismatched_pieces_are_errors() {
        let piece = |opts: &str, idx, name: &str, len, span, n| {
            let (o, nm) = (opts.as_bytes().to_vec(), name.as_bytes().to_vec());
            Partial::<GrepCount>::piece(o, idx, nm, len, span, n)
        };
        let key = |i: u32, n: &str| (i, n.as_bytes().to_vec());
        let a = piece("x", 0, "f", 10, (0, 4), 2);
        let b = piece("x", 0, "f", 10, (4, 10), 3);
        let m = a.clone().merge(b.clone()).unwrap();
        assert_eq!(m.inputs[&key(0, "f")].whole(), Ok(5));
        assert_eq!(
            a.inputs[&key(0, "f")].whole(),
            Err(PartialError::Missing {
                name: "f".into(),
                from: 4,
                to: 10
            })
        );
        assert!(matches!(
            m.clone().merge(b.clone()),
            Err(PartialError::Overlap { .. })
        ));
        assert_eq!(
            a.clone().merge(piece("y", 0, "f", 10, (4, 10), 1)),
            Err(PartialError::Options)
        );
        assert!(matches!(
            a.clone().merge(piece("x", 0, "f", 11, (4, 10), 1)),
            Err(PartialError::Sizes { a: 10, b: 11, .. })
        ));
        // A partial of another report is refused by its kind, after its checksum.
        let w = Partial::<Wc>::piece(b"x".to_vec(), 0, b"f".to_vec(), 0, (0, 0), Tally::default());
        assert_eq!(
            Partial::<GrepCount>::from_bytes(&w.to_bytes()),
            Err(PartialError::OtherKind(1))
        );
        assert_eq!(
            Partial::<GrepCount>::from_bytes(b"PK\x03\x04 zip"),
            Err(PartialError::Foreign)
        );
        let mut next = a.to_bytes();
        next[8] = crate::partial::VERSION as u8 + 1;
        assert_eq!(
            Partial::<GrepCount>::from_bytes(&next),
            Err(PartialError::Version(crate::partial::VERSION + 1))
        );
        for old in [1, 2, 3] {
            let mut v = a.to_bytes();
            v[8] = old;
            assert_eq!(
                Partial::<GrepCount>::from_bytes(&v),
                Err(PartialError::Version(old.into()))
            );
        }
        // Inputs stay apart, by position then name; empty pieces add nothing.
        let two = m.merge(piece("x", 0, "e", 0, (0, 0), 0)).unwrap();
        assert_eq!(two.inputs[&key(0, "e")].whole(), Ok(0));
        let names: Vec<&[u8]> = two.inputs.keys().map(|k| &k.1[..]).collect();
        assert_eq!(names, [&b"e"[..], b"f"]);
        let e = piece("x", 0, "f", 10, (4, 4), 0)
            .merge(piece("x", 0, "f", 10, (4, 4), 0))
            .unwrap();
        assert!(e.inputs[&key(0, "f")].pieces.is_empty());
        let e = e.merge(piece("x", 0, "f", 10, (0, 10), 4)).unwrap();
        assert_eq!(e.inputs[&key(0, "f")].whole(), Ok(4));
    }
}
