//! One stream of a section (docs/patch-format.md, "Sections"), decoded as it is read: a
//! stored stream straight from the patch, a zstd frame a chunk at a time through one of the
//! worker thread's decoders. Its reader holds a chunk of it and the frame's window (at most
//! 2^[`MAX_WINDOW_LOG`] bytes), never a buffer of the length the stream says it has: a
//! section of 64 million one-byte ops, or a forged one whose every stream claims its
//! largest length, costs a worker the slice of NEW it makes and these buffers, not 24 bytes
//! an op or the streams whole.

use std::cell::RefCell;
use std::io::{self, BufRead, BufReader, Read};

use zstd::zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer, ResetDirective};

use crate::format::{get_varint, Invalid};
use crate::source::ReadAt;

/// The largest zstd window a stream may use, as a power of two (8 MiB): what zstd's
/// levels up to 19 use at most, and swath writes at most level 19. A decoder holds one
/// window per stream, so this bounds a worker's decoding memory.
pub const MAX_WINDOW_LOG: u32 = 23;

/// The streams of a section: kinds, lengths, offsets, literals, zero runs, differences.
pub const STREAMS: usize = 6;

/// Bytes decoded at a time for a reader that takes a stream a byte or a number at a time
/// (tests use a few, so that numbers and frames cut between chunks are read every time).
const CHUNK: usize = if cfg!(test) { 13 } else { 64 << 10 };

/// Why a stream could not be read.
#[derive(Debug)]
pub enum StreamError {
    /// Its bytes are damaged (or forged).
    Invalid(Invalid),
    /// Reading the patch failed.
    Io(io::Error),
}

impl From<Invalid> for StreamError {
    fn from(e: Invalid) -> Self {
        StreamError::Invalid(e)
    }
}

impl From<io::Error> for StreamError {
    fn from(e: io::Error) -> Self {
        StreamError::Io(e)
    }
}

fn damaged<T>(what: &str) -> Result<T, StreamError> {
    Err(StreamError::Invalid(Invalid(format!("damaged: {what}"))))
}

/// `end - at` bytes of `src` from `at`, read in order.
struct Range<'a> {
    src: &'a dyn ReadAt,
    at: u64,
    end: u64,
}

impl Read for Range<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (self.end - self.at).min(buf.len() as u64) as usize;
        self.src.read_exact_at(&mut buf[..n], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

thread_local! {
    /// This thread's zstd decoders, kept from one section to the next (a fresh context
    /// allocates its tables and window anew), each limited to [`MAX_WINDOW_LOG`].
    static DECODERS: RefCell<Vec<DCtx<'static>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's [`STREAMS`] zstd decoders.
pub fn with_decoders<R>(f: impl FnOnce(&mut [DCtx<'static>; STREAMS]) -> R) -> R {
    DECODERS.with(|d| {
        let mut d = d.borrow_mut();
        while d.len() < STREAMS {
            let mut c = DCtx::create();
            c.set_parameter(DParameter::WindowLogMax(MAX_WINDOW_LOG))
                .expect("a valid window limit");
            d.push(c);
        }
        let all: &mut [DCtx<'static>; STREAMS] =
            (&mut d[..STREAMS]).try_into().expect("STREAMS decoders");
        f(all)
    })
}

/// A stream being read: its stored bytes, decoded (by `zstd`) or not, as they are taken.
pub struct Stream<'a> {
    input: BufReader<Range<'a>>,
    zstd: Option<&'a mut DCtx<'static>>,
    /// Raw bytes not yet decoded.
    left: u64,
    /// The zstd frame's end was decoded.
    ended: bool,
    /// Decoded bytes not all taken yet (from `at`).
    buf: Vec<u8>,
    at: usize,
}

impl<'a> Stream<'a> {
    /// The stream whose `stored` bytes are at `at` in `src` and decode to `raw` bytes: as
    /// they are (`zstd` None), or one zstd frame decoded by `zstd`.
    pub fn new(
        src: &'a dyn ReadAt,
        at: u64,
        stored: u64,
        raw: u64,
        mut zstd: Option<&'a mut DCtx<'static>>,
    ) -> Stream<'a> {
        if let Some(z) = zstd.as_deref_mut() {
            // A session cut short by an error (a damaged section before) is ended here.
            let _ = z.reset(ResetDirective::SessionOnly);
        }
        let capacity = usize::try_from(stored).map_or(CHUNK, |s| s.clamp(1, CHUNK));
        Stream {
            input: BufReader::with_capacity(
                capacity,
                Range {
                    src,
                    at,
                    end: at + stored,
                },
            ),
            zstd,
            left: raw,
            ended: false,
            buf: Vec::new(),
            at: 0,
        }
    }

    /// Decodes exactly `dst.len()` (at most `self.left`) more raw bytes into `dst`.
    fn produce(&mut self, dst: &mut [u8]) -> Result<(), StreamError> {
        debug_assert!(dst.len() as u64 <= self.left);
        let Some(z) = &mut self.zstd else {
            self.input.read_exact(dst)?;
            self.left -= dst.len() as u64;
            return Ok(());
        };
        let mut done = 0;
        while done < dst.len() {
            if self.ended {
                return damaged("a compressed stream has the wrong length");
            }
            let src = self.input.fill_buf()?;
            let empty = src.is_empty();
            let mut i = InBuffer::around(src);
            let mut o = OutBuffer::around(&mut dst[done..]);
            let hint = z
                .decompress_stream(&mut o, &mut i)
                .map_err(|c| compressed(zstd::zstd_safe::get_error_name(c)))?;
            let (read, written) = (i.pos(), o.pos());
            self.input.consume(read);
            done += written;
            if hint == 0 {
                self.ended = true;
            } else if read == 0 && written == 0 && empty {
                return damaged("a compressed stream is cut short");
            }
        }
        self.left -= dst.len() as u64;
        Ok(())
    }

    /// Decodes the next chunk into the buffer; false at the stream's end.
    fn refill(&mut self) -> Result<bool, StreamError> {
        if self.left == 0 {
            return Ok(false);
        }
        let n = self.left.min(CHUNK as u64) as usize;
        let mut b = std::mem::take(&mut self.buf);
        b.resize(n, 0);
        let r = self.produce(&mut b);
        self.buf = b;
        self.at = 0;
        r.map(|()| true)
    }

    /// The next byte; `None` at the stream's end.
    #[inline]
    pub fn byte(&mut self) -> Result<Option<u8>, StreamError> {
        if self.at == self.buf.len() && !self.refill()? {
            return Ok(None);
        }
        let b = self.buf[self.at];
        self.at += 1;
        Ok(Some(b))
    }

    /// The next varint; `None` at the stream's end (one cut by the end is damage).
    #[inline]
    pub fn varint(&mut self) -> Result<Option<u64>, StreamError> {
        if self.buf.len() - self.at >= 10 {
            // Whole in the buffer: read where it lies.
            return Ok(Some(get_varint(&self.buf, &mut self.at)?));
        }
        let Some(first) = self.byte()? else {
            return Ok(None);
        };
        let mut v = u64::from(first & 0x7f);
        let mut byte = first;
        let mut shift = 0;
        while byte & 0x80 != 0 {
            shift += 7;
            if shift > 63 {
                return damaged("a number is too long");
            }
            byte = match self.byte()? {
                Some(b) => b,
                None => return damaged("a number runs past its section"),
            };
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return damaged("a number is too large");
            }
            v |= bits << shift;
        }
        Ok(Some(v))
    }

    /// Fills `dst` with the next bytes; an error when fewer are left. A request of a
    /// chunk or more is decoded straight into `dst`; a shorter one (a literal op of a few
    /// bytes) is served from the buffer, a chunk decoded at a time, not a decoder call
    /// each.
    pub fn read_into(&mut self, dst: &mut [u8]) -> Result<(), StreamError> {
        let mut done = 0;
        loop {
            let held = (self.buf.len() - self.at).min(dst.len() - done);
            dst[done..done + held].copy_from_slice(&self.buf[self.at..self.at + held]);
            self.at += held;
            done += held;
            let rest = dst.len() - done;
            if rest == 0 {
                return Ok(());
            }
            if rest as u64 > self.left {
                return damaged("a section's instructions do not match its data");
            }
            if rest >= CHUNK {
                return self.produce(&mut dst[done..]);
            }
            // The buffer is used up (`rest` is more than it held) and the chunk the refill
            // decodes holds `rest` (it is at most `left` and less than a chunk).
            self.refill()?;
        }
    }

    /// Passes over the next `n` bytes; an error when fewer are left.
    pub fn skip(&mut self, mut n: u64) -> Result<(), StreamError> {
        while n > 0 {
            if self.at == self.buf.len() && !self.refill()? {
                return damaged("a section's instructions do not match its data");
            }
            let k = ((self.buf.len() - self.at) as u64).min(n);
            self.at += k as usize;
            n -= k;
        }
        Ok(())
    }

    /// True when every byte was taken.
    pub fn is_done(&self) -> bool {
        self.at == self.buf.len() && self.left == 0
    }

    /// Checks that the stream was read to its end: every byte taken, and a zstd frame
    /// ended exactly there, its stored bytes all used.
    pub fn finish(mut self) -> Result<(), StreamError> {
        if !self.is_done() {
            return damaged("a section's instructions do not match its data");
        }
        if let Some(z) = &mut self.zstd {
            // What is left of the frame after its last byte (its end mark, a checksum)
            // must make nothing more.
            while !self.ended {
                let src = self.input.fill_buf()?;
                let mut spare = [0u8; 1];
                let mut i = InBuffer::around(src);
                let mut o = OutBuffer::around(&mut spare[..]);
                let hint = z
                    .decompress_stream(&mut o, &mut i)
                    .map_err(|c| compressed(zstd::zstd_safe::get_error_name(c)))?;
                let (read, written) = (i.pos(), o.pos());
                self.input.consume(read);
                if written > 0 {
                    return damaged("a compressed stream has the wrong length");
                }
                if hint == 0 {
                    self.ended = true;
                } else if read == 0 {
                    return damaged("a compressed stream is cut short");
                }
            }
        }
        if !self.input.fill_buf()?.is_empty() {
            return damaged("a stream has bytes after its end");
        }
        Ok(())
    }
}

fn compressed(why: &str) -> StreamError {
    StreamError::Invalid(Invalid(format!("damaged: a compressed stream: {why}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{put_stream, put_varint};
    use proptest::prelude::*;

    /// The stream `put_stream` wrote at the start of `b`, read back whole through a
    /// [`Stream`] a byte at a time, in pieces, or by skips.
    fn read_back(b: &[u8], how: u8) -> Result<Vec<u8>, StreamError> {
        let mut at = 1;
        let raw = get_varint(b, &mut at)?;
        let stored = get_varint(b, &mut at)?;
        with_decoders(|d| {
            let z = (b[0] == 1).then_some(&mut d[0]);
            let mut s = Stream::new(&b, at as u64, stored, raw, z);
            let mut out = Vec::new();
            match how {
                0 => {
                    while let Some(x) = s.byte()? {
                        out.push(x);
                    }
                }
                1 => {
                    let mut k = 1;
                    while !s.is_done() {
                        let n = (k % 37).min(raw as usize - out.len());
                        let mut piece = vec![0u8; n];
                        s.read_into(&mut piece)?;
                        out.extend(piece);
                        k += 5;
                    }
                }
                _ => {
                    s.skip(raw / 2)?;
                    out.resize(raw as usize / 2, 0);
                    while let Some(x) = s.byte()? {
                        out.push(x);
                    }
                }
            }
            s.finish()?;
            Ok(out)
        })
    }

    proptest! {
        #[test]
        fn streams_round_trip_in_any_pieces(
            raw in proptest::collection::vec(0u8..3, 0..3000),
            level in 1i32..4,
            how in 0u8..3,
        ) {
            let mut b = Vec::new();
            put_stream(&mut b, &raw, level).unwrap();
            let got = read_back(&b, how).unwrap();
            if how == 2 {
                prop_assert_eq!(&got[raw.len() / 2..], &raw[raw.len() / 2..]);
            } else {
                prop_assert_eq!(got, raw);
            }
        }

        #[test]
        fn varints_round_trip_across_chunks(v in proptest::collection::vec(any::<u64>(), 0..50), level in 1i32..4) {
            let mut raw = Vec::new();
            for &x in &v {
                put_varint(&mut raw, x);
            }
            let mut b = Vec::new();
            put_stream(&mut b, &raw, level).unwrap();
            let mut at = 1;
            let n = get_varint(&b, &mut at).unwrap();
            let stored = get_varint(&b, &mut at).unwrap();
            let src: &[u8] = &b;
            let got = with_decoders(|d| -> Result<Vec<u64>, StreamError> {
                let mut s = Stream::new(&src, at as u64, stored, n, (b[0] == 1).then_some(&mut d[0]));
                let mut got = Vec::new();
                while let Some(x) = s.varint()? {
                    got.push(x);
                }
                s.finish()?;
                Ok(got)
            }).unwrap();
            prop_assert_eq!(got, v);
        }

        #[test]
        fn a_frame_of_another_length_is_refused(
            raw in proptest::collection::vec(0u8..2, 64..3000),
            delta in prop_oneof![Just(-1i64), Just(1)],
        ) {
            let mut b = Vec::new();
            put_stream(&mut b, &raw, 3).unwrap();
            prop_assume!(b[0] == 1);
            let mut at = 1;
            let _ = get_varint(&b, &mut at).unwrap();
            let stored = get_varint(&b, &mut at).unwrap();
            let said = (raw.len() as i64 + delta) as u64;
            let src: &[u8] = &b;
            let r = with_decoders(|d| -> Result<(), StreamError> {
                let mut s = Stream::new(&src, at as u64, stored, said, Some(&mut d[0]));
                while s.byte()?.is_some() {}
                s.finish()
            });
            prop_assert!(matches!(r, Err(StreamError::Invalid(_))));
        }
    }

    #[test]
    fn a_window_larger_than_the_limit_is_refused_before_it_is_allocated() {
        // A frame whose header asks for a 128 MiB window (of 256 MiB of zeros).
        let raw_len = 256u64 << 20;
        let mut frame = Vec::new();
        {
            let mut z = zstd::stream::write::Encoder::new(&mut frame, 1).unwrap();
            z.set_parameter(zstd::zstd_safe::CParameter::WindowLog(27))
                .unwrap();
            let zeros = vec![0u8; 1 << 20];
            for _ in 0..256 {
                std::io::Write::write_all(&mut z, &zeros).unwrap();
            }
            z.finish().unwrap();
        }
        let src: &[u8] = &frame;
        let err = with_decoders(|d| -> Result<(), StreamError> {
            let mut s = Stream::new(&src, 0, frame.len() as u64, raw_len, Some(&mut d[0]));
            s.skip(raw_len)
        })
        .unwrap_err();
        let StreamError::Invalid(Invalid(why)) = err else {
            panic!("{err:?}")
        };
        assert!(why.contains("compressed stream"), "{why}");
    }

    #[test]
    fn swaths_own_levels_fit_the_window_limit() {
        // A stream longer than any window (a few kilobytes of noise over and over: quick
        // to compress at any level), at every level swath writes, read back through
        // decoders limited to MAX_WINDOW_LOG.
        let mut x = 7u32;
        let noise: Vec<u8> = (0..4099)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (x >> 23) as u8
            })
            .collect();
        let raw: Vec<u8> = noise.iter().copied().cycle().take((9 << 20) + 7).collect();
        for level in [1, 3, 5, 6, 19] {
            let mut b = Vec::new();
            put_stream(&mut b, &raw, level).unwrap();
            assert_eq!(b[0], 1, "level {level}");
            let mut at = 1;
            let _ = get_varint(&b, &mut at).unwrap();
            let stored = get_varint(&b, &mut at).unwrap();
            let src: &[u8] = &b;
            let got = with_decoders(|d| -> Result<Vec<u8>, StreamError> {
                let mut s = Stream::new(&src, at as u64, stored, raw.len() as u64, Some(&mut d[0]));
                let mut out = vec![0u8; raw.len()];
                s.read_into(&mut out)?;
                s.finish()?;
                Ok(out)
            })
            .unwrap();
            assert!(got == raw, "level {level}");
        }
    }
}
