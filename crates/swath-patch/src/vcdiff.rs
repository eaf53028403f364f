//! VCDIFF (RFC 3284) output, for `--format vcdiff`: a patch `xdelta3 -d -s OLD PATCH NEW`
//! and other VCDIFF decoders apply.
//!
//! What is written (docs/vcdiff.md): the header `D6 C3 C4 00` with no secondary compressor
//! and the default code table; then windows of at most 16 MiB of NEW (the decoder window of
//! xdelta3 3.0.x), each a `VCD_SOURCE` window whose source segment spans the OLD bytes its
//! copies read. In a window, a copy becomes a COPY (address mode SELF, the offset in the
//! segment), a zero run a RUN of byte 0, and literal and approximate bytes an ADD of NEW's
//! bytes (VCDIFF has no difference stream). Instructions use the default code table's
//! single-instruction entries with the size in the instruction byte where it fits (ADD 1-17,
//! COPY 4-18) and as a varint otherwise. No checksum is written.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

use crate::ops::Op;

/// The most NEW bytes in one window.
pub const WINDOW: u64 = 16 << 20;

/// The file header: magic and version 0, no secondary compressor, no code table.
const HEADER: [u8; 5] = [0xD6, 0xC3, 0xC4, 0x00, 0x00];

/// `VCD_SOURCE`: the window copies from OLD.
const VCD_SOURCE: u8 = 0x01;

/// Appends `v` as a VCDIFF integer: base 128, most significant digit first, the high bit
/// set on every byte but the last.
pub fn put_int(out: &mut Vec<u8>, v: u64) {
    let mut digits = [0u8; 10];
    let mut n = 0;
    let mut v = v;
    loop {
        digits[n] = (v & 0x7f) as u8;
        n += 1;
        v >>= 7;
        if v == 0 {
            break;
        }
    }
    for i in (0..n).rev() {
        out.push(digits[i] | if i > 0 { 0x80 } else { 0 });
    }
}

/// One instruction of a window, with NEW's offset of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inst {
    /// NEW's bytes `[at, at + len)` as they are.
    Add { at: u64, len: u64 },
    /// `len` bytes of OLD from `from`.
    Copy { from: u64, len: u64 },
    /// `len` zero bytes.
    Run { len: u64 },
}

/// Splits `ops` into windows of at most `window` bytes of NEW.
fn windows(ops: &[Op], window: u64) -> Vec<Vec<Inst>> {
    let mut out: Vec<Vec<Inst>> = vec![Vec::new()];
    let (mut at, mut room) = (0u64, window);
    for op in ops {
        let mut done = 0u64;
        while done < op.len() {
            if room == 0 {
                out.push(Vec::new());
                room = window;
            }
            let n = (op.len() - done).min(room);
            let inst = match *op {
                Op::Copy { from, .. } => Inst::Copy {
                    from: from + done,
                    len: n,
                },
                Op::Zero { .. } => Inst::Run { len: n },
                Op::Literal { .. } | Op::Delta { .. } => Inst::Add {
                    at: at + done,
                    len: n,
                },
            };
            out.last_mut().expect("one window at least").push(inst);
            done += n;
            room -= n;
        }
        at += op.len();
    }
    out.retain(|w| !w.is_empty());
    out
}

/// Writes the VCDIFF patch made by `ops` (which make NEW from OLD) to `out`, reading the
/// bytes ADDs carry from `new` positionally, a window at a time.
pub fn write_vcdiff(ops: &[Op], new: &File, out: &mut impl Write) -> io::Result<()> {
    write_vcdiff_windows(ops, new, out, WINDOW)
}

/// [`write_vcdiff`] with windows of at most `window` bytes (tests use small ones).
pub fn write_vcdiff_windows(
    ops: &[Op],
    new: &File,
    out: &mut impl Write,
    window: u64,
) -> io::Result<()> {
    out.write_all(&HEADER)?;
    let mut bytes = Vec::new();
    for w in windows(ops, window.max(1)) {
        bytes.clear();
        encode_window(&w, new, &mut bytes)?;
        out.write_all(&bytes)?;
    }
    Ok(())
}

fn encode_window(w: &[Inst], new: &File, out: &mut Vec<u8>) -> io::Result<()> {
    // The source segment: the OLD range every COPY of the window reads.
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for i in w {
        if let Inst::Copy { from, len } = *i {
            lo = lo.min(from);
            hi = hi.max(from + len);
        }
    }
    let target_len: u64 = w
        .iter()
        .map(|i| match *i {
            Inst::Add { len, .. } | Inst::Copy { len, .. } | Inst::Run { len } => len,
        })
        .sum();
    let (mut data, mut inst, mut addr) = (Vec::new(), Vec::new(), Vec::new());
    for i in w {
        match *i {
            Inst::Add { at, len } => {
                // Default table: index 1 is ADD with its size in a varint, 2-18 ADD 1-17.
                if (1..=17).contains(&len) {
                    inst.push(1 + len as u8);
                } else {
                    inst.push(1);
                    put_int(&mut inst, len);
                }
                let start = data.len();
                data.resize(start + len as usize, 0);
                new.read_exact_at(&mut data[start..], at)?;
            }
            Inst::Copy { from, len } => {
                // Index 19 is COPY mode 0 (SELF) with a varint size, 20-34 COPY sizes 4-18.
                if (4..=18).contains(&len) {
                    inst.push(20 + (len - 4) as u8);
                } else {
                    inst.push(19);
                    put_int(&mut inst, len);
                }
                put_int(&mut addr, from - lo);
            }
            Inst::Run { len } => {
                // Index 0 is RUN, size in a varint, its byte in the data section.
                inst.push(0);
                put_int(&mut inst, len);
                data.push(0);
            }
        }
    }
    let copies = lo != u64::MAX;
    out.push(if copies { VCD_SOURCE } else { 0 });
    if copies {
        put_int(out, hi - lo);
        put_int(out, lo);
    }
    // The delta encoding: its length, then the target window length, the indicator (no
    // compressed sections), the three sections' lengths and the sections.
    let mut delta = Vec::new();
    put_int(&mut delta, target_len);
    delta.push(0);
    put_int(&mut delta, data.len() as u64);
    put_int(&mut delta, inst.len() as u64);
    put_int(&mut delta, addr.len() as u64);
    put_int(
        out,
        (delta.len() + data.len() + inst.len() + addr.len()) as u64,
    );
    out.extend_from_slice(&delta);
    out.extend_from_slice(&data);
    out.extend_from_slice(&inst);
    out.extend_from_slice(&addr);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_big_endian_base_128() {
        // RFC 3284 section 2: 123456789 is 10111010 11101111 10011010 00010101.
        let mut b = Vec::new();
        put_int(&mut b, 123_456_789);
        assert_eq!(b, [0xBA, 0xEF, 0x9A, 0x15]);
        b.clear();
        put_int(&mut b, 0);
        assert_eq!(b, [0]);
        b.clear();
        put_int(&mut b, 127);
        assert_eq!(b, [0x7f]);
        b.clear();
        put_int(&mut b, 128);
        assert_eq!(b, [0x81, 0x00]);
    }

    #[test]
    fn ops_are_split_at_window_boundaries() {
        let ops = [
            Op::Copy { from: 100, len: 25 },
            Op::Literal { len: 10 },
            Op::Zero { len: 7 },
        ];
        let w = windows(&ops, 16);
        assert_eq!(
            w,
            vec![
                vec![Inst::Copy { from: 100, len: 16 }],
                vec![
                    Inst::Copy { from: 116, len: 9 },
                    Inst::Add { at: 25, len: 7 }
                ],
                vec![Inst::Add { at: 32, len: 3 }, Inst::Run { len: 7 }],
            ]
        );
    }
}
