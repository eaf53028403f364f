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

use std::io::{self, Read, Write};

use crate::ops::Op;
use crate::source::ReadAt;

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
pub fn write_vcdiff(ops: &[Op], new: &dyn ReadAt, out: &mut impl Write) -> io::Result<()> {
    write_vcdiff_windows(ops, new, out, WINDOW)
}

/// [`write_vcdiff`] with windows of at most `window` bytes (tests use small ones).
pub fn write_vcdiff_windows(
    ops: &[Op],
    new: &dyn ReadAt,
    out: &mut impl Write,
    window: u64,
) -> io::Result<()> {
    out.write_all(&HEADER)?;
    let mut bytes = Vec::new();
    let mut all = windows(ops, window.max(1));
    if all.is_empty() {
        // An empty NEW is one empty window, as xdelta3 writes it (its decoder refuses a
        // patch without a window).
        all.push(Vec::new());
    }
    for w in all {
        bytes.clear();
        encode_window(&w, new, &mut bytes)?;
        out.write_all(&bytes)?;
    }
    Ok(())
}

fn encode_window(w: &[Inst], new: &dyn ReadAt, out: &mut Vec<u8>) -> io::Result<()> {
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

/// Why a VCDIFF patch cannot be applied.
#[derive(Debug, thiserror::Error)]
pub enum VcdiffError {
    /// The patch is damaged, truncated or uses what this reader does not support.
    #[error("{0}")]
    Invalid(String),
    /// Reading OLD or writing NEW failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

fn bad<T>(what: impl Into<String>) -> Result<T, VcdiffError> {
    Err(VcdiffError::Invalid(what.into()))
}

/// The largest target window accepted (xdelta3 3.1 decodes 64 MiB).
pub const MAX_WINDOW: u64 = 64 << 20;

/// True when `head` starts like a VCDIFF file.
pub fn is_vcdiff(head: &[u8]) -> bool {
    head.len() >= 4 && head[..3] == [0xD6, 0xC3, 0xC4]
}

/// A cursor over a byte slice that reports running out as a damaged patch.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    fn byte(&mut self) -> Result<u8, VcdiffError> {
        let Some(&x) = self.b.get(self.at) else {
            return bad(format!(
                "truncated or damaged: the {} ends early",
                self.what
            ));
        };
        self.at += 1;
        Ok(x)
    }

    fn int(&mut self) -> Result<u64, VcdiffError> {
        let mut v = 0u64;
        for _ in 0..10 {
            let x = self.byte()?;
            if v >> 57 != 0 {
                return bad(format!(
                    "damaged: a number in the {} is too large",
                    self.what
                ));
            }
            v = (v << 7) | u64::from(x & 0x7f);
            if x & 0x80 == 0 {
                return Ok(v);
            }
        }
        bad(format!(
            "damaged: a number in the {} is too long",
            self.what
        ))
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], VcdiffError> {
        if n > (self.b.len() - self.at) as u64 {
            return bad(format!(
                "truncated or damaged: the {} ends early",
                self.what
            ));
        }
        let s = &self.b[self.at..self.at + n as usize];
        self.at += n as usize;
        Ok(s)
    }

    fn done(&self) -> bool {
        self.at >= self.b.len()
    }
}

/// One entry of a code table: up to two instructions, each (type, size, mode); type 0 is
/// no instruction, 1 ADD, 2 RUN, 3 COPY.
type Entry = [(u8, u8, u8); 2];

/// The default code table of RFC 3284, section 5.6, built from its rules.
pub fn default_code_table() -> [Entry; 256] {
    const ADD: u8 = 1;
    const RUN: u8 = 2;
    const COPY: u8 = 3;
    let mut t = [[(0u8, 0u8, 0u8); 2]; 256];
    t[0][0] = (RUN, 0, 0);
    let mut i = 1;
    for size in 0..=17u8 {
        t[i][0] = (ADD, size, 0);
        i += 1;
    }
    for mode in 0..9u8 {
        t[i][0] = (COPY, 0, mode);
        i += 1;
        for size in 4..=18u8 {
            t[i][0] = (COPY, size, mode);
            i += 1;
        }
    }
    // ADD sizes 1-4 with COPY sizes 4-6, modes 0-5; then with COPY size 4, modes 6-8.
    for mode in 0..6u8 {
        for add in 1..=4u8 {
            for copy in 4..=6u8 {
                t[i] = [(ADD, add, 0), (COPY, copy, mode)];
                i += 1;
            }
        }
    }
    for mode in 6..9u8 {
        for add in 1..=4u8 {
            t[i] = [(ADD, add, 0), (COPY, 4, mode)];
            i += 1;
        }
    }
    // COPY size 4, every mode, then ADD size 1.
    for mode in 0..9u8 {
        t[i] = [(COPY, 4, mode), (ADD, 1, 0)];
        i += 1;
    }
    debug_assert_eq!(i, 256);
    t
}

/// The address caches of RFC 3284 section 5.1 (near 4, same 3 x 256).
struct Caches {
    near: [u64; 4],
    next: usize,
    same: [u64; 768],
}

impl Caches {
    fn new() -> Caches {
        Caches {
            near: [0; 4],
            next: 0,
            same: [0; 768],
        }
    }

    fn decode(&mut self, mode: u8, here: u64, addr: &mut Cursor<'_>) -> Result<u64, VcdiffError> {
        let a = match mode {
            0 => addr.int()?,
            1 => here.checked_sub(addr.int()?).ok_or_else(|| {
                VcdiffError::Invalid("damaged: an address before the start".into())
            })?,
            2..=5 => self.near[(mode - 2) as usize].wrapping_add(addr.int()?),
            6..=8 => self.same[(mode - 6) as usize * 256 + addr.byte()? as usize],
            _ => return bad("damaged: unknown address mode"),
        };
        self.near[self.next] = a;
        self.next = (self.next + 1) % 4;
        self.same[(a % 768) as usize] = a;
        Ok(a)
    }
}

/// Reads a VCDIFF integer from a stream.
fn read_int(r: &mut impl Read, what: &str) -> Result<u64, VcdiffError> {
    let mut v = 0u64;
    for _ in 0..10 {
        let x = read_byte(r, what)?.ok_or_else(|| {
            VcdiffError::Invalid(format!("truncated or damaged: the {what} ends early"))
        })?;
        if v >> 57 != 0 {
            return bad(format!("damaged: a number in the {what} is too large"));
        }
        v = (v << 7) | u64::from(x & 0x7f);
        if x & 0x80 == 0 {
            return Ok(v);
        }
    }
    bad(format!("damaged: a number in the {what} is too long"))
}

fn read_byte(r: &mut impl Read, _what: &str) -> Result<Option<u8>, VcdiffError> {
    let mut b = [0u8; 1];
    loop {
        match r.read(&mut b) {
            Ok(0) => return Ok(None),
            Ok(_) => return Ok(Some(b[0])),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

fn read_exact(r: &mut impl Read, buf: &mut [u8], what: &str) -> Result<(), VcdiffError> {
    r.read_exact(buf).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            VcdiffError::Invalid(format!("truncated or damaged: the {what} ends early"))
        } else {
            e.into()
        }
    })
}

/// Applies the VCDIFF patch read from `patch` to OLD, writing NEW to `out`; returns NEW's
/// length. Reads what `xdelta3 -e -S none` writes: `VCD_SOURCE` windows, the default code
/// table, xdelta3's application header and Adler-32 window checksums (checked). Memory:
/// one window (at most 64 MiB of NEW and its encoding); OLD is read positionally.
pub fn apply_vcdiff(
    old: &dyn ReadAt,
    old_len: u64,
    patch: &mut impl Read,
    out: &mut impl Write,
) -> Result<u64, VcdiffError> {
    read_file_header(patch)?;
    let table = default_code_table();
    let mut written = 0u64;
    let mut windows = 0u64;
    let mut target = Vec::new();
    let mut delta = Vec::new();
    while let Some(win) = read_byte(patch, "window header")? {
        windows += 1;
        let segment = read_window(patch, win, old_len, &mut delta)?;
        let w = Window::parse(&delta, win)?;
        let target_len = w.target_len;
        decode_window(&table, w, segment, old, &mut target)?;
        out.write_all(&target)?;
        written += target_len;
    }
    // Every VCDIFF patch has a window, an empty NEW's an empty one (xdelta3 writes it, and
    // refuses a patch without: "nothing to output"); none is a patch cut after its header.
    if windows == 0 {
        return bad("truncated: the patch has no window");
    }
    Ok(written)
}

/// Reads the file header: the magic number and version, and the header indicator (no
/// secondary compressor, no custom code table); xdelta3's application header is skipped.
fn read_file_header(patch: &mut impl Read) -> Result<(), VcdiffError> {
    let mut magic = [0u8; 4];
    read_exact(patch, &mut magic, "header")?;
    if !is_vcdiff(&magic) {
        return bad("not a VCDIFF patch (bad magic number)");
    }
    if magic[3] != 0 {
        return bad(format!("VCDIFF version {} is not supported", magic[3]));
    }
    let hdr = read_byte(patch, "header")?
        .ok_or_else(|| VcdiffError::Invalid("truncated: the header ends early".into()))?;
    if hdr & 0x01 != 0 {
        let id = read_byte(patch, "header")?.unwrap_or(0);
        return bad(format!(
            "secondary compression (compressor {id}) is not supported: make the patch with xdelta3 -S none"
        ));
    }
    if hdr & 0x02 != 0 {
        return bad("custom code tables are not supported (the default one is)");
    }
    if hdr & !0x07 != 0 {
        return bad("damaged: unknown bits in the header indicator");
    }
    if hdr & 0x04 != 0 {
        // xdelta3's application header: skipped, but whole (one cut inside it, or with a
        // damaged length, is refused as xdelta3 refuses it, not read as no window at all).
        let n = read_int(patch, "application header")?;
        if io::copy(&mut patch.take(n), &mut io::sink())? != n {
            return bad("truncated or damaged: the application header ends early");
        }
    }
    Ok(())
}

/// Reads the rest of a window's header (its indicator `win` read) and its encoding into
/// `delta`; returns its source segment in OLD (`old_len` bytes): length and position.
fn read_window(
    patch: &mut impl Read,
    win: u8,
    old_len: u64,
    delta: &mut Vec<u8>,
) -> Result<(u64, u64), VcdiffError> {
    if win & 0x02 != 0 {
        return bad("VCD_TARGET windows are not supported");
    }
    if win & !0x05 != 0 {
        return bad("damaged: unknown bits in a window indicator");
    }
    let (seg_len, seg_pos) = if win & 0x01 != 0 {
        let len = read_int(patch, "window header")?;
        let pos = read_int(patch, "window header")?;
        if pos > old_len || len > old_len - pos {
            return bad("damaged or made from another file: a source segment lies outside OLD");
        }
        (len, pos)
    } else {
        (0, 0)
    };
    let delta_len = read_int(patch, "window header")?;
    // A window's encoding holds at most its target's bytes, an instruction and an
    // address per byte: anything larger is damage, refused before allocating it.
    if delta_len > 4 * MAX_WINDOW + (1 << 20) {
        return bad("damaged: a window's encoding is impossibly large");
    }
    // Read as it comes: a forged length allocates no more than the patch holds.
    delta.clear();
    patch.take(delta_len).read_to_end(delta)?;
    if delta.len() as u64 != delta_len {
        return bad("truncated or damaged: the window ends early");
    }
    Ok((seg_len, seg_pos))
}

/// A window's encoding, its sections found.
struct Window<'a> {
    /// The bytes of NEW it makes.
    target_len: u64,
    /// Its Adler-32, when it has one (xdelta3's extension).
    checksum: Option<u32>,
    /// The data section (ADD's and RUN's bytes).
    data: Cursor<'a>,
    /// The instruction section.
    inst: Cursor<'a>,
    /// The address section (COPY's addresses).
    addr: Cursor<'a>,
}

impl<'a> Window<'a> {
    /// The encoding `delta` of a window whose indicator is `win`: its target's length (at
    /// most [`MAX_WINDOW`]), no secondary compression, its checksum, and three sections
    /// that fill it exactly.
    fn parse(delta: &'a [u8], win: u8) -> Result<Window<'a>, VcdiffError> {
        let mut d = Cursor {
            b: delta,
            at: 0,
            what: "window",
        };
        let target_len = d.int()?;
        if target_len > MAX_WINDOW {
            return bad(format!(
                "a target window of {target_len} bytes is larger than {MAX_WINDOW}"
            ));
        }
        if d.byte()? != 0 {
            return bad(
                "secondary compression of a window's sections is not supported: make the patch with xdelta3 -S none",
            );
        }
        let (data_len, inst_len, addr_len) = (d.int()?, d.int()?, d.int()?);
        let checksum = if win & 0x04 != 0 {
            let b = d.take(4)?;
            Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        } else {
            None
        };
        let data = Cursor {
            b: d.take(data_len)?,
            at: 0,
            what: "data section",
        };
        let inst = Cursor {
            b: d.take(inst_len)?,
            at: 0,
            what: "instruction section",
        };
        let addr = Cursor {
            b: d.take(addr_len)?,
            at: 0,
            what: "address section",
        };
        if !d.done() {
            return bad("damaged: a window has trailing bytes");
        }
        Ok(Window {
            target_len,
            checksum,
            data,
            inst,
            addr,
        })
    }
}

/// Runs window `w`'s instructions (`table` decoding them) into `target`, copying from
/// OLD's source segment `(length, position)` or the target itself; the window's lengths
/// and checksum must match what is made.
fn decode_window(
    table: &[Entry; 256],
    w: Window<'_>,
    (seg_len, seg_pos): (u64, u64),
    old: &dyn ReadAt,
    target: &mut Vec<u8>,
) -> Result<(), VcdiffError> {
    let Window {
        target_len,
        checksum,
        mut data,
        mut inst,
        mut addr,
    } = w;
    target.clear();
    let mut caches = Caches::new();
    while !inst.done() {
        let code = inst.byte()?;
        for &(kind, size, mode) in &table[code as usize] {
            if kind == 0 {
                continue;
            }
            let size = if size == 0 {
                inst.int()?
            } else {
                u64::from(size)
            };
            if size > target_len - target.len() as u64 {
                return bad("damaged: an instruction makes more than its window");
            }
            match kind {
                1 => target.extend_from_slice(data.take(size)?),
                2 => {
                    let b = data.byte()?;
                    target.resize(target.len() + size as usize, b);
                }
                _ => {
                    let here = seg_len + target.len() as u64;
                    let a = caches.decode(mode, here, &mut addr)?;
                    if a < seg_len {
                        if size > seg_len - a {
                            return bad("damaged: a copy runs past its source segment");
                        }
                        // Read from OLD where the copy is: the segment is never loaded
                        // whole (xdelta3 -B makes it as large as OLD).
                        let at = target.len();
                        target.resize(at + size as usize, 0);
                        old.read_exact_at(&mut target[at..], seg_pos + a)?;
                    } else {
                        // From the target window itself, overlapping allowed.
                        let from = a - seg_len;
                        if from >= target.len() as u64 {
                            return bad("damaged: a copy from ahead of the target");
                        }
                        for k in 0..size {
                            let x = target[(from + k) as usize];
                            target.push(x);
                        }
                    }
                }
            }
        }
    }
    if target.len() as u64 != target_len || !data.done() || !addr.done() {
        return bad("damaged: a window's instructions do not match its lengths");
    }
    if let Some(sum) = checksum {
        if adler32(target) != sum {
            return bad("damaged, or applied to another OLD: a window's checksum does not match");
        }
    }
    Ok(())
}

/// Adler-32 (RFC 1950), as xdelta3 checks its windows.
fn adler32(b: &[u8]) -> u32 {
    let (mut a, mut s) = (1u32, 0u32);
    for chunk in b.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            s += a;
        }
        a %= 65521;
        s %= 65521;
    }
    (s << 16) | a
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
    fn the_default_code_table_is_the_rfc_s() {
        // Entries from RFC 3284's table (section 5.6), written out by hand.
        let t = default_code_table();
        assert_eq!(t[0], [(2, 0, 0), (0, 0, 0)]); // RUN 0
        assert_eq!(t[1], [(1, 0, 0), (0, 0, 0)]); // ADD 0
        assert_eq!(t[18], [(1, 17, 0), (0, 0, 0)]); // ADD 17
        assert_eq!(t[19], [(3, 0, 0), (0, 0, 0)]); // COPY 0 mode 0
        assert_eq!(t[34], [(3, 18, 0), (0, 0, 0)]); // COPY 18 mode 0
        assert_eq!(t[35], [(3, 0, 1), (0, 0, 0)]); // COPY 0 mode 1
        assert_eq!(t[162], [(3, 18, 8), (0, 0, 0)]); // COPY 18 mode 8
        assert_eq!(t[163], [(1, 1, 0), (3, 4, 0)]); // ADD 1 + COPY 4 mode 0
        assert_eq!(t[234], [(1, 4, 0), (3, 6, 5)]); // ADD 4 + COPY 6 mode 5
        assert_eq!(t[235], [(1, 1, 0), (3, 4, 6)]); // ADD 1 + COPY 4 mode 6
        assert_eq!(t[246], [(1, 4, 0), (3, 4, 8)]); // ADD 4 + COPY 4 mode 8
        assert_eq!(t[247], [(3, 4, 0), (1, 1, 0)]); // COPY 4 mode 0 + ADD 1
        assert_eq!(t[255], [(3, 4, 8), (1, 1, 0)]); // COPY 4 mode 8 + ADD 1
    }

    #[test]
    fn adler32_is_zlib_s() {
        assert_eq!(adler32(b""), 1);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }

    use crate::ops::apply_naive;
    use proptest::prelude::*;

    fn file(bytes: &[u8]) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), bytes).unwrap();
        f
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]
        #[test]
        fn written_patches_read_back_and_damage_never_panics(
            old in proptest::collection::vec(any::<u8>(), 1..3000),
            pieces in proptest::collection::vec((0u8..3, 1u64..700, any::<u64>()), 0..12),
            window in 1u64..2000,
        ) {
            let old_len = old.len() as u64;
            let mut ops = Vec::new();
            let mut new = Vec::new();
            for (kind, len, x) in pieces {
                match kind {
                    0 => {
                        let len = len.min(old_len);
                        let from = x % (old_len - len + 1);
                        new.extend_from_slice(&old[from as usize..(from + len) as usize]);
                        ops.push(Op::Copy { from, len });
                    }
                    1 => {
                        new.extend((0..len).map(|i| (i ^ x) as u8));
                        ops.push(Op::Literal { len });
                    }
                    _ => {
                        new.resize(new.len() + len as usize, 0);
                        ops.push(Op::Zero { len });
                    }
                }
            }
            prop_assert_eq!(apply_naive(&old, &new, &ops), new.clone());
            let (fo, fnew) = (file(&old), file(&new));
            let mut patch = Vec::new();
            write_vcdiff_windows(&ops, fnew.as_file(), &mut patch, window).unwrap();
            let mut out = Vec::new();
            let n = apply_vcdiff(fo.as_file(), old_len, &mut &patch[..], &mut out).unwrap();
            prop_assert_eq!(n, new.len() as u64);
            prop_assert_eq!(&out, &new);
            for i in (0..patch.len()).step_by(3) {
                let mut bad = patch.clone();
                bad[i] ^= 0x21;
                let _ = apply_vcdiff(fo.as_file(), old_len, &mut &bad[..], &mut Vec::new());
                let _ = apply_vcdiff(fo.as_file(), old_len, &mut &patch[..i], &mut Vec::new());
            }
        }
    }

    /// Patches written by `xdelta3 -e -S none` (levels 0 and 9, with and without its
    /// application header and window checksums) are applied; its default secondary
    /// compression is refused in one clear message. Skipped where xdelta3 is missing.
    #[test]
    fn xdelta3_patches_are_applied() {
        if !std::path::Path::new("/usr/bin/xdelta3").exists() {
            swath_engine::testing::skip("skipped: /usr/bin/xdelta3 is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let (o, n, p) = (
            dir.path().join("o"),
            dir.path().join("n"),
            dir.path().join("p"),
        );
        let mut x = 7u64;
        let old: Vec<u8> = (0..3_000_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 50) as u8
            })
            .collect();
        let mut new = old.clone();
        new.splice(100_000..100_000, (0..5000).map(|i| (i % 7) as u8));
        new.drain(2_000_000..2_100_000);
        let moved: Vec<u8> = new[500_000..600_000].to_vec();
        new.extend_from_slice(&moved);
        for i in (0..new.len()).step_by(997) {
            new[i] = new[i].wrapping_add(3);
        }
        std::fs::write(&o, &old).unwrap();
        std::fs::write(&n, &new).unwrap();
        let fo = std::fs::File::open(&o).unwrap();
        for flags in [
            &["-0"][..],
            &["-9"],
            &["-9", "-A"],
            &["-9", "-n"],
            &["-0", "-A", "-n"],
        ] {
            let st = std::process::Command::new("xdelta3")
                .args(["-e", "-f", "-S", "none"])
                .args(flags)
                .arg("-s")
                .arg(&o)
                .arg(&n)
                .arg(&p)
                .status()
                .unwrap();
            assert!(st.success());
            let patch = std::fs::read(&p).unwrap();
            let mut out = Vec::new();
            apply_vcdiff(&fo, old.len() as u64, &mut &patch[..], &mut out).unwrap();
            assert!(out == new, "{flags:?}");
            // Applied to another OLD, the window checksums (when written) catch it.
            if !flags.contains(&"-n") {
                let other = file(&old.iter().map(|b| b ^ 1).collect::<Vec<u8>>());
                let err = apply_vcdiff(
                    other.as_file(),
                    old.len() as u64,
                    &mut &patch[..],
                    &mut Vec::new(),
                );
                assert!(err.is_err(), "{flags:?}");
            }
        }
        let st = std::process::Command::new("xdelta3")
            .args(["-e", "-f", "-9", "-S", "djw", "-s"])
            .arg(&o)
            .arg(&n)
            .arg(&p)
            .status()
            .unwrap();
        assert!(st.success());
        let err = apply_vcdiff(
            &fo,
            old.len() as u64,
            &mut &std::fs::read(&p).unwrap()[..],
            &mut Vec::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("xdelta3 -S none"), "{err}");
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
