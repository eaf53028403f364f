//! One section of a swath patch: the ops that make one slice of NEW, with their literal and
//! difference bytes, as six streams (docs/patch-format.md, "Sections").
//!
//! A section is applied as it is decoded: its checksum is checked first (its bytes read a
//! piece at a time), then its six streams are read side by side ([`crate::stream`]), each
//! op checked and carried out as it comes, its literal and difference bytes taken from
//! their streams straight into NEW. No list of ops is built and no stream is held whole, so
//! a worker's memory is the slice of NEW it makes and a few fixed buffers, whatever the
//! section's lengths say.

use std::io;

use crate::format::{
    encode_diffs, encode_ops, get_varint, put_stream, section_sum, stream_limits, unzigzag, Entry,
    Header, Invalid, OP_COPY, OP_DELTA, OP_LITERAL, OP_ZERO,
};
use crate::oldcache::OldCache;
use crate::ops::Op;
use crate::source::ReadAt;
use crate::stream::{with_decoders, Stream, StreamError, STREAMS};

/// Encodes the section made by `ops` from `new` (the section's bytes of NEW, which start
/// at `new_offset`), reading the OLD bytes of approximate matches from `old`.
pub fn encode_section(
    ops: &[Op],
    new: &[u8],
    new_offset: u64,
    old: &dyn ReadAt,
    zstd_level: i32,
) -> io::Result<Vec<u8>> {
    let len = ops
        .iter()
        .filter_map(|o| match *o {
            Op::Delta { from, len } => Some(from + len),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut cache = OldCache::new(old, len, 16);
    encode_section_cached(ops, new, new_offset, &mut cache, Levels::all(zstd_level))
}

/// The zstd levels of a section's streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    /// The literal bytes (the largest stream of a rebuilt program's patch, and most of its
    /// compression time).
    pub literals: i32,
    /// The non-zero difference bytes (next in size; they compress little at any level).
    pub differences: i32,
    /// Every other stream.
    pub others: i32,
}

impl Levels {
    /// One level for every stream.
    pub fn all(level: i32) -> Levels {
        Levels {
            literals: level,
            differences: level,
            others: level,
        }
    }
}

/// [`encode_section`] reading OLD's bytes under the deltas through `old`, the cache the
/// matcher already filled.
pub fn encode_section_cached(
    ops: &[Op],
    new: &[u8],
    new_offset: u64,
    old: &mut OldCache<'_>,
    levels: Levels,
) -> io::Result<Vec<u8>> {
    // Sized once: growing by doubling would fault in twice the pages.
    let sum = |f: fn(&Op) -> bool| ops.iter().filter(|o| f(o)).map(|o| o.len() as usize).sum();
    let mut literals = Vec::with_capacity(sum(|o| matches!(o, Op::Literal { .. })));
    let mut deltas = Vec::with_capacity(sum(|o| matches!(o, Op::Delta { .. })));
    let mut at = 0usize;
    for op in ops {
        let n = op.len() as usize;
        let here = &new[at..at + n];
        match *op {
            Op::Literal { .. } => literals.extend_from_slice(here),
            Op::Delta { from, .. } => {
                let mut done = 0usize;
                while done < n {
                    let k = (n - done).min(crate::oldcache::BLOCK);
                    let o = old.get(from + done as u64, k)?.ok_or_else(|| {
                        io::Error::new(io::ErrorKind::UnexpectedEof, "a delta reads past OLD's end")
                    })?;
                    deltas.extend(
                        here[done..done + k]
                            .iter()
                            .zip(o)
                            .map(|(&b, &a)| b.wrapping_sub(a)),
                    );
                    done += k;
                }
            }
            Op::Copy { .. } | Op::Zero { .. } => {}
        }
        at += n;
    }
    debug_assert_eq!(at, new.len(), "ops make the section");
    let o = encode_ops(ops, new_offset);
    let (runs, diff_bytes) = encode_diffs(&deltas);
    let mut out = Vec::with_capacity(literals.len() / 2 + diff_bytes.len() + 64);
    for stream in [&o.kinds, &o.lens, &o.froms, &literals, &runs, &diff_bytes] {
        let level = if std::ptr::eq(stream, &literals) {
            levels.literals
        } else if std::ptr::eq(stream, &diff_bytes) {
            levels.differences
        } else {
            levels.others
        };
        put_stream(&mut out, stream, level)?;
    }
    Ok(out)
}

/// Why a section could not be applied.
#[derive(Debug)]
pub enum Fault {
    /// The section's bytes are damaged.
    Invalid(Invalid),
    /// Reading OLD failed.
    Old(io::Error),
    /// Reading the patch failed.
    Patch(io::Error),
}

impl From<StreamError> for Fault {
    fn from(e: StreamError) -> Self {
        match e {
            StreamError::Invalid(w) => Fault::Invalid(w),
            StreamError::Io(e) => Fault::Patch(e),
        }
    }
}

impl From<Invalid> for Fault {
    fn from(e: Invalid) -> Self {
        Fault::Invalid(e)
    }
}

fn damaged<T>(what: impl Into<String>) -> Result<T, Fault> {
    Err(Fault::Invalid(Invalid(what.into())))
}

/// Where a section's bytes are: `len` bytes of `src` from `at` (the patch file, or a slice
/// holding the section).
#[derive(Clone, Copy)]
struct Place<'a> {
    src: &'a dyn ReadAt,
    at: u64,
    len: u64,
}

/// Checks section `index`'s checksum, reading its bytes a piece at a time (or where they
/// lie, when they are in memory).
fn check_sum(header: &Header, index: u64, e: &Entry, p: Place<'_>) -> Result<(), Fault> {
    let sum = match p.src.as_bytes() {
        Some(all) => {
            let bytes = usize::try_from(p.at)
                .ok()
                .zip(usize::try_from(p.len).ok())
                .and_then(|(a, n)| all.get(a..a.checked_add(n)?))
                .ok_or_else(|| Fault::Patch(io::ErrorKind::UnexpectedEof.into()))?;
            section_sum(header.chain(), index, bytes)
        }
        None => {
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            h.update(&header.chain().to_le_bytes());
            h.update(&index.to_le_bytes());
            let mut buf = swath_engine::buf::PageBuf::zeroed(p.len.min(1 << 20) as usize);
            let mut at = 0;
            while at < p.len {
                let n = (p.len - at).min(buf.len() as u64) as usize;
                p.src
                    .read_exact_at(&mut buf[..n], p.at + at)
                    .map_err(Fault::Patch)?;
                h.update(&buf[..n]);
                at += n as u64;
            }
            h.digest()
        }
    };
    if sum != e.sum {
        return damaged(format!(
            "damaged: section {index} (bytes {}..{} of NEW) fails its checksum",
            e.new_offset,
            e.new_offset + e.new_len
        ));
    }
    Ok(())
}

/// A stream's place in its section: its method, raw length, and stored bytes.
#[derive(Clone, Copy, Default)]
struct Laid {
    zstd: bool,
    raw: u64,
    at: u64,
    stored: u64,
}

/// Reads the six streams' headers, each checked against the section (a raw length within
/// its stream's limit for the section's length, [`stream_limits`], and stored bytes within
/// the section, no longer than their raw length), and that they fill the section exactly.
fn lay_out(index: u64, e: &Entry, p: Place<'_>) -> Result<[Laid; STREAMS], Fault> {
    let limits = stream_limits(e.new_len);
    let mut laid = [Laid::default(); STREAMS];
    let mut pos = 0u64;
    for (k, l) in laid.iter_mut().enumerate() {
        let mut h = [0u8; 21];
        let n = (p.len - pos).min(h.len() as u64) as usize;
        if n == 0 {
            return damaged("damaged: a section is cut short");
        }
        p.src
            .read_exact_at(&mut h[..n], p.at + pos)
            .map_err(Fault::Patch)?;
        let mut at = 1;
        let raw = get_varint(&h[..n], &mut at)?;
        let stored = get_varint(&h[..n], &mut at)?;
        pos += at as u64;
        let zstd = match h[0] {
            0 if stored == raw => false,
            0 => return damaged("damaged: a stored stream's two lengths differ"),
            1 => true,
            _ => return damaged("damaged: unknown stream method"),
        };
        if raw > limits[k] || stored > raw || stored > p.len - pos {
            return damaged("damaged: a stream's length does not fit its section");
        }
        *l = Laid {
            zstd,
            raw,
            at: p.at + pos,
            stored,
        };
        pos += stored;
    }
    if pos != p.len {
        return damaged(format!("damaged: section {index} has trailing bytes"));
    }
    Ok(laid)
}

/// A section being decoded: its ops one at a time, checked as they come (docs/patch-
/// format.md, "Sections"), and the literal and difference bytes as the ops take them.
struct Decoder<'a> {
    kinds: Stream<'a>,
    lens: Stream<'a>,
    froms: Stream<'a>,
    literals: Stream<'a>,
    runs: Stream<'a>,
    diffs: Stream<'a>,
    new_offset: u64,
    new_len: u64,
    old_len: u64,
    /// Bytes of the section the ops so far make.
    made: u64,
    /// `from - p` of the last COPY or DELTA.
    diagonal: u64,
    /// Difference bytes the DELTAs so far took.
    taken: u64,
    /// The next non-zero difference byte: its position among the difference bytes and
    /// its value.
    next_diff: Option<(u64, u8)>,
    /// The position after the last non-zero difference byte read.
    diff_end: u64,
}

impl<'a> Decoder<'a> {
    fn new(
        header: &Header,
        e: &Entry,
        p: Place<'a>,
        laid: [Laid; STREAMS],
        decoders: &'a mut [zstd::zstd_safe::DCtx<'static>; STREAMS],
    ) -> Result<Decoder<'a>, Fault> {
        let mut streams = laid
            .iter()
            .zip(decoders.iter_mut())
            .map(|(l, z)| Stream::new(p.src, l.at, l.stored, l.raw, l.zstd.then_some(z)));
        let mut next = || streams.next().expect("six streams");
        let mut d = Decoder {
            kinds: next(),
            lens: next(),
            froms: next(),
            literals: next(),
            runs: next(),
            diffs: next(),
            new_offset: e.new_offset,
            new_len: e.new_len,
            old_len: header.old_len,
            made: 0,
            diagonal: 0,
            taken: 0,
            next_diff: None,
            diff_end: 0,
        };
        d.next_difference()?;
        Ok(d)
    }

    /// Reads the next non-zero difference byte and where it goes.
    fn next_difference(&mut self) -> Result<(), Fault> {
        self.next_diff = match self.diffs.byte()? {
            None => None,
            Some(0) => return damaged("damaged: the difference bytes do not fit their section"),
            Some(b) => {
                let run = self.runs.varint()?.ok_or_else(|| {
                    Invalid("damaged: the difference bytes do not fit their section".into())
                })?;
                let Some(p) = self.diff_end.checked_add(run) else {
                    return damaged("damaged: the difference bytes do not fit their section");
                };
                self.diff_end = p + 1;
                Some((p, b))
            }
        };
        Ok(())
    }

    /// The next op, checked: it makes 1 byte or more but no more than the section has
    /// left, and reads only inside OLD. `None` after the last.
    fn op(&mut self) -> Result<Option<Op>, Fault> {
        let Some(kind) = self.kinds.byte()? else {
            return Ok(None);
        };
        let len = self
            .lens
            .varint()?
            .ok_or_else(|| Invalid("damaged: a number runs past its section".into()))?;
        if len == 0 || len > self.new_len - self.made {
            return damaged("damaged: an instruction makes more than its section");
        }
        let here = self.new_offset + self.made;
        self.made += len;
        let mut from = || -> Result<u64, Fault> {
            let d = self
                .froms
                .varint()?
                .ok_or_else(|| Invalid("damaged: a number runs past its section".into()))?;
            let from = here
                .wrapping_add(self.diagonal)
                .wrapping_add(unzigzag(d) as u64);
            if from > self.old_len || len > self.old_len - from {
                return damaged("damaged: an instruction reads past the end of OLD");
            }
            self.diagonal = from.wrapping_sub(here);
            Ok(from)
        };
        Ok(Some(match kind {
            OP_COPY => Op::Copy { from: from()?, len },
            OP_DELTA => Op::Delta { from: from()?, len },
            OP_ZERO => Op::Zero { len },
            OP_LITERAL => Op::Literal { len },
            _ => return damaged("damaged: unknown instruction"),
        }))
    }

    /// Adds the next `len` difference bytes to `dst` (its first `len` bytes; none given:
    /// passes over them).
    fn differences(&mut self, len: u64, mut dst: Option<&mut [u8]>) -> Result<(), Fault> {
        let end = self.taken + len;
        while let Some((p, b)) = self.next_diff {
            if p >= end {
                break;
            }
            if let Some(d) = dst.as_deref_mut() {
                let x = &mut d[(p - self.taken) as usize];
                *x = x.wrapping_add(b);
            }
            self.next_difference()?;
        }
        self.taken = end;
        Ok(())
    }

    /// Checks that the ops made the section exactly and used every stream whole.
    fn finish(self) -> Result<(), Fault> {
        if self.made != self.new_len || self.next_diff.is_some() {
            return damaged("damaged: a section's instructions do not match its data");
        }
        for s in [
            self.kinds,
            self.lens,
            self.froms,
            self.literals,
            self.runs,
            self.diffs,
        ] {
            s.finish()?;
        }
        Ok(())
    }
}

/// Decodes the section at `p` (checksum first), giving each op to `each` with the decoder
/// (to take its literal and difference bytes), then checks that nothing is left over.
fn decode(
    header: &Header,
    index: u64,
    e: &Entry,
    p: Place<'_>,
    mut each: impl FnMut(&mut Decoder<'_>, Op) -> Result<(), Fault>,
) -> Result<(), Fault> {
    check_sum(header, index, e, p)?;
    let laid = lay_out(index, e, p)?;
    with_decoders(|z| {
        let mut d = Decoder::new(header, e, p, laid, z)?;
        while let Some(op) = d.op()? {
            each(&mut d, op)?;
        }
        d.finish()
    })
}

/// Rebuilds the section into `out`, exactly its length: each op writes its bytes there
/// as it is decoded.
fn rebuild(
    header: &Header,
    index: u64,
    e: &Entry,
    p: Place<'_>,
    old: &dyn ReadAt,
    out: &mut [u8],
) -> Result<(), Fault> {
    assert_eq!(out.len() as u64, e.new_len, "the section's length");
    let mut at = 0usize;
    decode(header, index, e, p, |d, op| {
        let n = op.len() as usize;
        let dst = &mut out[at..at + n];
        at += n;
        match op {
            Op::Copy { from, .. } => old.read_exact_at(dst, from).map_err(Fault::Old),
            Op::Zero { .. } => {
                dst.fill(0);
                Ok(())
            }
            Op::Literal { .. } => Ok(d.literals.read_into(dst)?),
            Op::Delta { from, len } => {
                old.read_exact_at(dst, from).map_err(Fault::Old)?;
                d.differences(len, Some(dst))
            }
        }
    })
}

/// Rebuilds section `index` of NEW (described by `e`) into `out`, exactly its length,
/// reading its bytes from `patch` where the entry says they are and OLD positionally:
/// checked against its checksum first, then decoded a chunk at a time, so a worker holds
/// `out` and a few buffers whatever the section's streams say.
pub fn apply_section_at(
    header: &Header,
    index: u64,
    e: &Entry,
    patch: &dyn ReadAt,
    old: &dyn ReadAt,
    out: &mut [u8],
) -> Result<(), Fault> {
    let p = Place {
        src: patch,
        at: e.offset,
        len: e.len,
    };
    rebuild(header, index, e, p, old, out)
}

/// Decodes section `index` of `patch` (as [`apply_section_at`] reads it) and gives each
/// of its ops to `each`, checking everything [`apply_section_at`] checks but reading no
/// OLD.
pub fn each_op(
    header: &Header,
    index: u64,
    e: &Entry,
    patch: &dyn ReadAt,
    mut each: impl FnMut(&Op),
) -> Result<(), Fault> {
    let p = Place {
        src: patch,
        at: e.offset,
        len: e.len,
    };
    decode(header, index, e, p, |d, op| {
        each(&op);
        match op {
            Op::Literal { len } => Ok(d.literals.skip(len)?),
            Op::Delta { len, .. } => d.differences(len, None),
            Op::Copy { .. } | Op::Zero { .. } => Ok(()),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{encode_ops, put_varint, Level, HEADER_LEN};
    use crate::ops::apply_naive;
    use proptest::prelude::*;

    fn header(old_len: u64, new_len: u64) -> Header {
        Header {
            old_len,
            new_len,
            old_hash: 0,
            new_hash: 0,
            hash_piece: 1 << 20,
            level: Level::Fast,
            chunk_avg: 64,
            section_len: new_len.max(1),
        }
    }

    /// A section of the six raw streams given (stored or compressed at `level`), with its
    /// entry (at offset `at` of a patch).
    fn section_of(h: &Header, streams: [&[u8]; 6], level: i32, at: u64) -> (Vec<u8>, Entry) {
        let mut b = Vec::new();
        for s in streams {
            put_stream(&mut b, s, level).unwrap();
        }
        let e = Entry {
            new_offset: 0,
            new_len: h.new_len,
            offset: at,
            len: b.len() as u64,
            sum: section_sum(h.chain(), 0, &b),
        };
        (b, e)
    }

    /// Rebuilds the section `bytes` (described by `e`, wherever its entry says it lies)
    /// held in memory into `out`, resized to its length.
    fn apply_section(
        h: &Header,
        index: u64,
        e: &Entry,
        bytes: &[u8],
        old: &dyn ReadAt,
        out: &mut Vec<u8>,
    ) -> Result<(), Fault> {
        out.resize(e.new_len as usize, 0);
        let src: &[u8] = bytes;
        apply_section_at(h, index, &Entry { offset: 0, ..*e }, &src, old, out)
    }

    /// The ops of a section, read as `info` reads them.
    fn ops_of(h: &Header, e: &Entry, bytes: &[u8]) -> Result<Vec<Op>, Fault> {
        let mut ops = Vec::new();
        let src: &[u8] = bytes;
        each_op(h, 0, &Entry { offset: 0, ..*e }, &src, |op| ops.push(*op))?;
        Ok(ops)
    }

    fn arbitrary_ops(raw: &[(u8, u64, u64)], old_len: u64) -> Vec<Op> {
        raw.iter()
            .map(|&(k, len, from)| {
                let len = len.min(old_len).max(1);
                let from = from % (old_len - len + 1);
                match k {
                    0 => Op::Copy { from, len },
                    1 => Op::Zero { len },
                    2 => Op::Literal { len },
                    _ => Op::Delta { from, len },
                }
            })
            .collect()
    }

    proptest! {
        #[test]
        fn sections_rebuild_what_the_naive_application_does(
            old in proptest::collection::vec(0u8..4, 1..3000),
            raw in proptest::collection::vec((0u8..4, 1u64..300, any::<u64>()), 0..30),
            level in 1i32..4,
        ) {
            let old_len = old.len() as u64;
            let ops = arbitrary_ops(&raw, old_len);
            let new_len: u64 = ops.iter().map(Op::len).sum();
            // NEW: what the ops make, with other bytes where they store literals or deltas.
            let new: Vec<u8> = (0..new_len).map(|i| (i * 13 % 7) as u8).collect();
            let mut made = apply_naive(&old, &new, &ops);
            // Copies and zeros come from OLD: NEW is what the ops make of it.
            made.truncate(new.len());
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), &old).unwrap();
            let bytes = encode_section(&ops, &made, 0, f.as_file(), level).unwrap();
            let header = header(old_len, new_len);
            let e = Entry { new_offset: 0, new_len, offset: HEADER_LEN as u64, len: bytes.len() as u64, sum: section_sum(header.chain(), 0, &bytes) };
            let mut out = Vec::new();
            apply_section(&header, 0, &e, &bytes, f.as_file(), &mut out).unwrap();
            prop_assert_eq!(&out, &made);
            // Read where it lies in a patch file, positionally, a piece at a time.
            let patch = tempfile::NamedTempFile::new().unwrap();
            let mut at_offset = vec![0xeeu8; HEADER_LEN];
            at_offset.extend_from_slice(&bytes);
            at_offset.extend_from_slice(b"after");
            std::fs::write(patch.path(), &at_offset).unwrap();
            let mut out2 = vec![0x55u8; new_len as usize];
            apply_section_at(&header, 0, &e, patch.as_file(), f.as_file(), &mut out2).unwrap();
            prop_assert_eq!(&out2, &made);
            prop_assert_eq!(ops_of(&header, &e, &bytes).unwrap(), ops.clone());
            // Any flipped byte is refused (the section checksum), never a panic.
            for i in (0..bytes.len()).step_by(7) {
                let mut bad = bytes.clone();
                bad[i] ^= 0x41;
                prop_assert!(apply_section(&header, 0, &e, &bad, f.as_file(), &mut out).is_err());
            }
        }

        #[test]
        fn ops_that_do_not_fit_are_refused(
            raw in proptest::collection::vec((0u8..4, 1u64..500, any::<u64>()), 1..40),
            new_offset in 0u64..2000,
            level in 0i32..3,
        ) {
            let old_len = 1200u64;
            let ops = arbitrary_ops(&raw, old_len);
            let new_len: u64 = ops.iter().map(Op::len).sum();
            let lit: u64 = ops.iter().filter(|o| matches!(o, Op::Literal { .. })).map(Op::len).sum();
            let delta: u64 = ops.iter().filter(|o| matches!(o, Op::Delta { .. })).map(Op::len).sum();
            let o = encode_ops(&ops, new_offset);
            let literals = vec![7u8; lit as usize];
            // Differences: every byte non-zero (one run of 0 before each).
            let runs = vec![0u8; delta as usize];
            let diffs = vec![1u8; delta as usize];
            let streams = [&o.kinds[..], &o.lens, &o.froms, &literals, &runs, &diffs];
            let h = header(old_len, new_len);
            let check = |h: &Header, streams: [&[u8]; 6], e_new_len: u64| {
                let h = Header { new_len: e_new_len, section_len: e_new_len.max(1), ..*h };
                let (b, e) = section_of(&h, streams, level, 0);
                let e = Entry { new_offset, ..e };
                ops_of(&h, &e, &b)
            };
            prop_assert_eq!(check(&h, streams, new_len).unwrap(), ops.clone());
            // One byte more of NEW, or less of OLD, is refused.
            prop_assert!(check(&h, streams, new_len + 1).is_err());
            let reads = ops.iter().filter_map(|o| match o { Op::Copy { from, len } | Op::Delta { from, len } => Some(from + len), _ => None }).max();
            if let Some(longest) = reads {
                prop_assert!(check(&header(longest - 1, new_len), streams, new_len).is_err());
            }
            // A byte more in any stream, or one less, is refused.
            for k in 0..6 {
                let mut more: Vec<Vec<u8>> = streams.iter().map(|s| s.to_vec()).collect();
                more[k].push(1);
                let m: [&[u8]; 6] = std::array::from_fn(|i| &more[i][..]);
                prop_assert!(check(&h, m, new_len).is_err(), "stream {} longer", k);
                if !streams[k].is_empty() {
                    let mut less: Vec<Vec<u8>> = streams.iter().map(|s| s.to_vec()).collect();
                    less[k].pop();
                    let l: [&[u8]; 6] = std::array::from_fn(|i| &less[i][..]);
                    prop_assert!(check(&h, l, new_len).is_err(), "stream {} shorter", k);
                }
            }
        }

        #[test]
        fn differences_rebuild_and_damage_is_refused(
            diff in proptest::collection::vec(prop_oneof![Just(0u8), Just(0), Just(0), any::<u8>()], 1..3000),
            flip in any::<usize>(),
            level in 0i32..3,
        ) {
            // One DELTA over OLD's zeros: NEW is the difference bytes themselves.
            let n = diff.len() as u64;
            let old = vec![0u8; diff.len()];
            let ops = [Op::Delta { from: 0, len: n }];
            let o = encode_ops(&ops, 0);
            let (runs, bytes) = encode_diffs(&diff);
            let h = header(n, n);
            let src: &[u8] = &old;
            let apply = |runs: &[u8], bytes: &[u8]| -> Result<Vec<u8>, Fault> {
                let (b, e) = section_of(&h, [&o.kinds, &o.lens, &o.froms, &[], runs, bytes], level, 0);
                let mut out = Vec::new();
                apply_section(&h, 0, &e, &b, &src, &mut out)?;
                Ok(out)
            };
            prop_assert_eq!(apply(&runs, &bytes).unwrap(), diff.clone());
            // A non-zero byte past the end, a zero "non-zero" byte, a byte more or less in
            // either stream: refused.
            let mut longer = runs.clone();
            put_varint(&mut longer, n);
            let mut more = bytes.clone();
            more.push(1);
            prop_assert!(apply(&longer, &more).is_err());
            prop_assert!(apply(&runs, &more).is_err());
            let mut extra = runs.clone();
            extra.push(0);
            prop_assert!(apply(&extra, &bytes).is_err());
            if !bytes.is_empty() {
                prop_assert!(apply(&runs, &bytes[..bytes.len() - 1]).is_err());
                let mut zero = bytes.clone();
                zero[flip % bytes.len()] = 0;
                prop_assert!(apply(&runs, &zero).is_err());
            }
        }
    }

    #[test]
    fn streams_longer_than_their_limits_are_refused_before_they_are_read() {
        // A section of 1,000 bytes of NEW whose lengths stream claims 1,001 bytes (a
        // stored stream of that many: one more than any section of 1,000 bytes needs).
        let h = header(0, 1000);
        let lens = vec![1u8; 1001];
        let (b, e) = section_of(&h, [&[2; 1000], &lens, &[], &[7; 1000], &[], &[]], 0, 0);
        let Err(Fault::Invalid(w)) = ops_of(&h, &e, &b) else {
            panic!("accepted")
        };
        assert!(w.0.contains("does not fit its section"), "{}", w.0);
    }
}
