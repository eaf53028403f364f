//! The instruction model: how NEW is rebuilt from OLD.
//!
//! A patch is a list of [`Op`]s, each making the next `len` bytes of NEW in order. The
//! bytes an op does not take from OLD (literals, differences) are not in the op: an encoder
//! reads them from NEW when it writes a format, so the same list can be written as swath's
//! format or as VCDIFF.

/// One instruction: the next `len` bytes of NEW.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `len` bytes of OLD from offset `from`, exactly.
    Copy {
        /// Offset in OLD.
        from: u64,
        /// Bytes copied.
        len: u64,
    },
    /// `len` zero bytes.
    Zero {
        /// Bytes.
        len: u64,
    },
    /// `len` bytes of NEW stored as they are.
    Literal {
        /// Bytes.
        len: u64,
    },
    /// `len` bytes of OLD from `from`, each plus the matching byte of a difference stream
    /// (NEW minus OLD, wrapping): an approximate match, whose differences are mostly zero.
    Delta {
        /// Offset in OLD.
        from: u64,
        /// Bytes.
        len: u64,
    },
}

impl Op {
    /// Bytes of NEW this op makes.
    pub fn len(&self) -> u64 {
        match *self {
            Op::Copy { len, .. }
            | Op::Zero { len }
            | Op::Literal { len }
            | Op::Delta { len, .. } => len,
        }
    }

    /// True for an op that makes no bytes (never written in a patch).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Appends `op` to `ops`, joined with the last op where one op says the same: literals
/// with literals, zeros with zeros, copies and approximate matches that go on where the
/// last one ended in OLD. Empty ops are dropped.
pub fn push_merged(ops: &mut Vec<Op>, op: Op) {
    if op.is_empty() {
        return;
    }
    if let Some(last) = ops.last_mut() {
        match (last, op) {
            (Op::Literal { len }, Op::Literal { len: more })
            | (Op::Zero { len }, Op::Zero { len: more }) => {
                *len += more;
                return;
            }
            (
                Op::Copy { from, len },
                Op::Copy {
                    from: next,
                    len: more,
                },
            )
            | (
                Op::Delta { from, len },
                Op::Delta {
                    from: next,
                    len: more,
                },
            ) if *from + *len == next => {
                *len += more;
                return;
            }
            _ => {}
        }
    }
    ops.push(op);
}

/// Applies `ops` naively: the oracle every encoder and decoder is checked against.
///
/// Panics when an op reads past OLD's end or the ops make more than NEW's bytes (a bug in
/// the caller: the ops were made from these inputs).
pub fn apply_naive(old: &[u8], new_for_literals: &[u8], ops: &[Op]) -> Vec<u8> {
    let mut out = Vec::with_capacity(new_for_literals.len());
    for op in ops {
        let at = out.len();
        match *op {
            Op::Copy { from, len } => {
                out.extend_from_slice(&old[from as usize..(from + len) as usize]);
            }
            Op::Zero { len } => out.resize(at + len as usize, 0),
            Op::Literal { len } => {
                out.extend_from_slice(&new_for_literals[at..at + len as usize]);
            }
            Op::Delta { from, len } => {
                let o = &old[from as usize..(from + len) as usize];
                let n = &new_for_literals[at..at + len as usize];
                // old + (new - old) = new: what a decoder computes from the stored difference.
                out.extend(
                    o.iter()
                        .zip(n)
                        .map(|(&a, &b)| a.wrapping_add(b.wrapping_sub(a))),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naive_application_rebuilds_new() {
        let old = b"hello world, hello old";
        let new = b"hello\0\0\0 world, HELLO old!";
        let ops = [
            Op::Copy { from: 0, len: 5 },
            Op::Zero { len: 3 },
            Op::Copy { from: 5, len: 8 },
            Op::Delta { from: 13, len: 5 },
            Op::Copy { from: 18, len: 4 },
            Op::Literal { len: 1 },
        ];
        assert_eq!(ops.iter().map(Op::len).sum::<u64>(), new.len() as u64);
        assert_eq!(apply_naive(old, new, &ops), new);
    }
}
