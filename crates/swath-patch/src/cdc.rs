//! Content-defined chunking: where a chunk of OLD or NEW ends, decided by its content only,
//! so an insertion shifts the cuts after it rather than changing them.
//!
//! The rules (C. Bloom's, "Patcher" parts 4 and 6), for a chunk starting at `s`:
//!
//! - The gear hash `h = (h << 1) + GEAR[byte]` is rolled from byte `max(s, s + min - 64)`
//!   on; after 64 bytes it depends only on the last 64 (the window).
//! - A chunk is never shorter than `min = avg / 4`: the first byte `i >= s + min - 1` whose
//!   hash is at most `u64::MAX / avg` ends it (the cut is after `i`). Any average works,
//!   not only powers of two.
//! - A run of 32 or more zero bytes is a chunk of its own ([`Kind::Zero`], as long as the
//!   run, but at most [`Params::zero_max`] bytes: a longer run is cut every `zero_max` bytes
//!   from its start, so that no run, however long, needs more than `zero_max` bytes in memory
//!   to be decided). A data chunk ends where such a run starts, even before `min`.
//! - A chunk is never longer than `max = 4 * avg`. When no hash falls under the threshold
//!   by then, the cut goes after the byte whose hash was the smallest of the candidates
//!   (the first of them on a tie): still content-defined, so OLD and NEW resynchronise,
//!   never a forced cut at `max`.
//!
//! [`cut`] applies the rules one chunk at a time: one hash chain rolled from 64 bytes before
//! the chunk's minimum (the bytes under it are never hashed), the shift and the add of each
//! step one instruction ([`roll`]); the rare chunk that reaches `max` is scanned again for
//! its smallest hash. It is the fast path ([`Kernel::Chain`], 1.45 cycles a byte with the
//! cuts, as fast as the `fastcdc` crate, which forces cuts). [`Cutter`] serves [`cut_all`],
//! the signature and the matcher; with the other kernels it finds *candidates* ahead: with
//! `min >= 64` the hash at every position a chunk tests covers exactly the 64 bytes before
//! it (a *window hash*), whatever the chunk's start, so the positions whose window hash is
//! under the threshold can be found over long stretches, one chain ([`Kernel::Scalar`]) or
//! four side by side ([`Kernel::Lanes`]), each chunk's cut then the first candidate past
//! its minimum (SS-CDC's two stages: every byte hashed, so slower than one chain that skips
//! the minimum). [`cut_naive`] is the oracle all of them are checked against.

/// The gear table: 256 fixed pseudo-random words (splitmix64 from a fixed seed), none zero,
/// so runs of a repeated byte still move the hash. A `static`, not a `const`: a const array
/// indexed at run time may be copied onto the stack at every use.
pub static GEAR: [u64; 256] = gear_table();

const fn gear_table() -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut state: u64 = 0x5357_4154_4843_4443; // "SWATHCDC"
    let mut i = 0;
    while i < 256 {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        t[i] = if z == 0 { 1 } else { z };
        i += 1;
    }
    t
}

/// Zero runs at least this long are chunks of their own.
pub const ZERO_RUN: usize = 32;

/// Chunk length parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Average length.
    pub avg: usize,
    /// Shortest chunk (but a chunk before a zero run, and the last chunk).
    pub min: usize,
    /// Longest chunk.
    pub max: usize,
    /// A hash at most this ends a chunk.
    pub threshold: u64,
    /// The longest zero-run chunk ([`ZERO_MAX`] unless set otherwise, as tests do).
    pub zero_max: usize,
    /// The kernel that finds the cuts ([`Kernel::Chain`] unless set otherwise: every
    /// kernel makes the same cuts).
    pub kernel: Kernel,
}

/// An average chunk length outside what [`Params::new`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the average chunk must be 64 bytes to 64 MiB, not {avg}")]
pub struct ChunkSizeError {
    /// The length asked for.
    pub avg: usize,
}

/// The longest zero-run chunk: a run of zeros is cut every 1 MiB from its start (position
/// within the run, which starts at a cut: still decided by content and the cut before it).
pub const ZERO_MAX: usize = 1 << 20;

impl Params {
    /// Parameters for chunks of `avg` bytes on average (64 bytes to 64 MiB).
    pub fn new(avg: usize) -> Result<Params, ChunkSizeError> {
        if !(64..=64 << 20).contains(&avg) {
            return Err(ChunkSizeError { avg });
        }
        Ok(Params {
            avg,
            min: avg / 4,
            max: avg * 4,
            threshold: u64::MAX / avg as u64,
            zero_max: ZERO_MAX,
            kernel: Kernel::BEST,
        })
    }

    /// These parameters, with the cuts found by `kernel`.
    pub fn with_kernel(self, kernel: Kernel) -> Params {
        Params { kernel, ..self }
    }

    /// Bytes past a cut that can decide it: the longest chunk and a zero run's test.
    pub fn lookahead(&self) -> usize {
        self.max + ZERO_RUN
    }
}

/// What a chunk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Any bytes.
    Data,
    /// A run of at least [`ZERO_RUN`] zero bytes.
    Zero,
}

/// Where the first zero run that starts at or after `from` (and is at least [`ZERO_RUN`]
/// long from its start, counted from `from` at the earliest) begins, looking no further
/// than `limit` for its start. Any such run holds a whole 16-byte block at any alignment,
/// so aligned blocks are tested first and runs grown from them, only as far as needed to
/// know the run is long enough (a run of a gigabyte is not walked to its end).
pub fn next_zero_run(data: &[u8], from: usize, limit: usize) -> Option<usize> {
    let limit = limit.min(data.len());
    let mut block = from.div_ceil(16) * 16;
    while block + 16 <= data.len() && block < limit + ZERO_RUN {
        let word = u128::from_ne_bytes(data[block..block + 16].try_into().expect("16 bytes"));
        if word != 0 {
            block += 16;
            continue;
        }
        let mut start = block;
        while start > from && data[start - 1] == 0 {
            start -= 1;
        }
        if start >= limit {
            return None;
        }
        let need = (start + ZERO_RUN).min(data.len());
        let mut end = block + 16;
        while end < need && data[end] == 0 {
            end += 1;
        }
        if end - start >= ZERO_RUN {
            return Some(start);
        }
        block = end.div_ceil(16) * 16;
    }
    None
}

/// How many bytes at the start of `data` are zero (a word at a time).
#[inline]
fn zeros_from(data: &[u8]) -> usize {
    let mut words = data.chunks_exact(8);
    let mut n = 0;
    for w in words.by_ref() {
        let v = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        if v != 0 {
            return n + (v.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + words.remainder().iter().take_while(|&&b| b == 0).count()
}

/// The end of the chunk that starts at `s`, and its kind; `None` when `data` ends before
/// that is decided and `last` is false (more data follows). With `last`, the data's end
/// ends the final chunk.
///
/// The threshold scan runs first, over the chunk's whole possible span; only the bytes
/// before the cut it finds are then searched for a zero run (which would end the chunk
/// earlier), so each byte is searched about once.
#[inline]
pub fn cut(data: &[u8], s: usize, p: &Params, last: bool) -> Option<(usize, Kind)> {
    cut_with(
        data,
        s,
        p,
        last,
        |end| threshold_cut(data, s, end, p),
        |end| smallest_hash(data, s, end, p),
    )
}

/// [`cut`]'s rules, with the search for the first hash under the threshold in
/// `[s + min - 1, end)` (`threshold`) and for the smallest one (`smallest`) given.
#[inline]
fn cut_with(
    data: &[u8],
    s: usize,
    p: &Params,
    last: bool,
    threshold: impl FnOnce(usize) -> Option<usize>,
    smallest: impl FnOnce(usize) -> usize,
) -> Option<(usize, Kind)> {
    let len = data.len();
    debug_assert!(s < len);
    if data[s] == 0 {
        // A zero run starting here, looked at no further than `zero_max` bytes.
        let reach = len.min(s + p.zero_max.max(ZERO_RUN));
        let e = s + zeros_from(&data[s..reach]);
        if e - s >= ZERO_RUN {
            // Its end is known once a non-zero byte follows, at `zero_max`, or at the end
            // of input.
            return (e < len || e == s + p.zero_max || last).then_some((e, Kind::Zero));
        }
        if e == len && !last {
            // Fewer than ZERO_RUN zeros so far, up to the end of the data: undecided.
            return None;
        }
    }
    let limit = s + p.max;
    // Without `last`, zeros at the end of the data may be the start of a run: no cut can
    // be decided from there on.
    let seen = if last || data[len - 1] != 0 {
        len
    } else {
        let tail = data[s..].iter().rev().take_while(|&&b| b == 0).count();
        len - tail
    };
    if let Some(i) = threshold(limit.min(seen)) {
        // A zero run starting before the cut ends the chunk there instead.
        if let Some(z) = next_zero_run(data, s, i + 1) {
            return Some((z, Kind::Data));
        }
        return Some((i + 1, Kind::Data));
    }
    if let Some(z) = next_zero_run(data, s, limit) {
        if z <= seen {
            return Some((z, Kind::Data));
        }
    }
    if limit <= seen {
        return Some((smallest(limit) + 1, Kind::Data));
    }
    // The input ends before the chunk could: with `last`, it ends the chunk.
    last.then_some((len, Kind::Data))
}

/// The first byte `i` in `[s + min - 1, end)` whose hash is at most the threshold.
#[inline]
fn threshold_cut(data: &[u8], s: usize, end: usize, p: &Params) -> Option<usize> {
    let first = s + p.min.max(1) - 1;
    if first >= end {
        return None;
    }
    let from = (s + p.min).saturating_sub(64).max(s);
    let mut h = 0u64;
    for &b in &data[from..first] {
        h = roll(h, b);
    }
    let t = p.threshold;
    // One chain, a byte at a time: with the shift and the add in one instruction (`roll`),
    // the chain is one cycle a byte, and the loads and tests run beside it. (Two or four
    // bytes a step, or four chains side by side, take more instructions a byte and were
    // slower: 1.4 to 1.6 cycles a byte against 1.1.)
    for (j, &b) in data[first..end].iter().enumerate() {
        h = roll(h, b);
        if h <= t {
            return Some(first + j);
        }
    }
    None
}

/// One byte into the gear hash: `(h << 1) + GEAR[b]`.
///
/// On x86-64 the shift and the add are one `lea` (`g + h * 2`), one cycle of latency on
/// the hash's chain where `add h, h; add h, g` is two: the compiler folds the table's load
/// into the add and so never picks the `lea` itself.
#[inline(always)]
pub fn roll(h: u64, b: u8) -> u64 {
    let g = GEAR[b as usize];
    #[cfg(target_arch = "x86_64")]
    {
        let mut h = h;
        // SAFETY: register arithmetic only: no memory is read or written, no flags or
        // stack are touched, and `lea` cannot fault.
        unsafe {
            std::arch::asm!(
                "lea {h}, [{g} + {h} * 2]",
                h = inout(reg) h,
                g = in(reg) g,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        h
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (h << 1).wrapping_add(g)
    }
}

/// The byte in `[s + min - 1, end)` with the smallest hash (the first on a tie).
#[cold]
fn smallest_hash(data: &[u8], s: usize, end: usize, p: &Params) -> usize {
    let first = s + p.min.max(1) - 1;
    let from = (s + p.min).saturating_sub(64).max(s);
    let mut h = 0u64;
    for &b in &data[from..first] {
        h = roll(h, b);
    }
    let (mut best, mut at) = (u64::MAX, first);
    for (k, &b) in data[first..end].iter().enumerate() {
        h = roll(h, b);
        if h < best || k == 0 {
            best = h;
            at = first + k;
        }
    }
    at
}

/// Every chunk of `data` from `s` on, as `(end, kind)`, stopping where a cut cannot be
/// decided without more data (unless `last`). Returns where the undecided rest starts.
///
/// With `min >= 64` the cuts come from a [`Cutter`] (candidates found over long stretches
/// by the parameters' kernel, [`Params::kernel`]); otherwise from [`cut`], chunk by chunk.
pub fn cut_all(
    data: &[u8],
    s: usize,
    p: &Params,
    last: bool,
    out: &mut Vec<(usize, Kind)>,
) -> usize {
    Cutter::new(p.kernel).cut_all(data, s, p, last, out)
}

/// How the window hashes of a stretch are computed (all give the same answers; the
/// property tests hold each against [`Kernel::Scalar`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// One hash chain, a byte at a time, over stretches found ahead: the reference.
    Scalar,
    /// Four independent chains over four parts of the stretch, interleaved, so the core
    /// runs them side by side (instruction-level parallelism), on any CPU.
    Lanes,
    /// No candidates ahead: each chunk's cut found by one chain rolled from 64 bytes before
    /// its minimum ([`cut`], whose step is [`roll`]), so the bytes under the minimum (a
    /// fifth of the input at the usual sizes) are never hashed.
    Chain,
}

impl Kernel {
    /// The kernel to use: [`Kernel::Chain`]; the others are kept for measurements
    /// ([`crate::tuning::Tuning::cdc_kernel`]) and as the property tests' references. An
    /// AVX-512 kernel (eight chains in a register, the gear table read by gathers) was
    /// measured at less than half the speed of the four scalar chains on AMD Zen 4, whose
    /// gathers are slow, and is not kept.
    pub const BEST: Kernel = Kernel::Chain;

    /// Every kernel.
    pub fn available() -> Vec<Kernel> {
        vec![Kernel::Scalar, Kernel::Lanes, Kernel::Chain]
    }
}

/// The window hash of the 63 bytes before `at`: the state a chain starting at `at` needs
/// (the byte 64 places back has already shifted out).
#[inline]
fn warm(data: &[u8], at: usize) -> u64 {
    let mut h = 0u64;
    for &b in &data[at - 63..at] {
        h = roll(h, b);
    }
    h
}

/// Appends to `out`, in order, every position `i` in `[from, to)` whose window hash (the
/// gear hash of `data[i - 63..=i]`) is at most `t`. Needs `63 <= from <= to <= data.len()`.
///
/// With `min >= 64` a chunk's hash at any position it tests is the window hash, whatever
/// the chunk's start (the hash is rolled from 64 bytes before its first test), so these
/// candidates, found once over a long stretch, serve every chunk in it (SS-CDC's two
/// stages: candidates first, then the cuts chosen among them).
pub fn candidates(
    kernel: Kernel,
    data: &[u8],
    from: usize,
    to: usize,
    t: u64,
    out: &mut Vec<usize>,
) {
    assert!(63 <= from && from <= to && to <= data.len());
    match kernel {
        Kernel::Scalar | Kernel::Chain => candidates_scalar(data, from, to, t, out),
        Kernel::Lanes => candidates_lanes(data, from, to, t, out),
    }
}

fn candidates_scalar(data: &[u8], from: usize, to: usize, t: u64, out: &mut Vec<usize>) {
    let mut h = warm(data, from);
    for (k, &b) in data[from..to].iter().enumerate() {
        h = (h << 1).wrapping_add(GEAR[b as usize]);
        if h <= t {
            out.push(from + k);
        }
    }
}

/// Chains run side by side by [`Kernel::Lanes`].
const LANES: usize = 4;

fn candidates_lanes(data: &[u8], from: usize, to: usize, t: u64, out: &mut Vec<usize>) {
    let first = out.len();
    let mut at = from;
    while to - at >= LANES * SEG {
        lanes_group(data, at, t, out);
        at += LANES * SEG;
    }
    // The lanes' hits came interleaved.
    out[first..].sort_unstable();
    candidates_scalar(data, at, to, t, out);
}

/// Bytes per lane in one group of [`Kernel::Lanes`] (a constant, so the lanes' addresses
/// are one pointer plus fixed offsets and everything stays in registers; the 63 bytes a
/// lane reads to warm up cost 3 %).
const SEG: usize = 2048;

/// [`candidates`] over `data[from..from + LANES * SEG]`, four chains side by side.
#[inline]
fn lanes_group(data: &[u8], from: usize, t: u64, out: &mut Vec<usize>) {
    let lane = &data[from..from + LANES * SEG];
    let (mut h0, mut h1, mut h2, mut h3) = (
        warm(data, from),
        warm(data, from + SEG),
        warm(data, from + 2 * SEG),
        warm(data, from + 3 * SEG),
    );
    let g = &GEAR;
    let p = lane.as_ptr();
    for k in 0..SEG {
        // SAFETY: `k < SEG`, so `k + 3 * SEG < 4 * SEG = lane.len()`: every read is inside
        // `lane`.
        let (b0, b1, b2, b3) = unsafe {
            (
                *p.add(k),
                *p.add(k + SEG),
                *p.add(k + 2 * SEG),
                *p.add(k + 3 * SEG),
            )
        };
        h0 = (h0 << 1).wrapping_add(g[b0 as usize]);
        h1 = (h1 << 1).wrapping_add(g[b1 as usize]);
        h2 = (h2 << 1).wrapping_add(g[b2 as usize]);
        h3 = (h3 << 1).wrapping_add(g[b3 as usize]);
        if h0 <= t {
            hit(out, from + k);
        }
        if h1 <= t {
            hit(out, from + SEG + k);
        }
        if h2 <= t {
            hit(out, from + 2 * SEG + k);
        }
        if h3 <= t {
            hit(out, from + 3 * SEG + k);
        }
    }
}

/// Records a candidate (out of line: the scan's loop keeps its registers).
#[cold]
#[inline(never)]
fn hit(out: &mut Vec<usize>, at: usize) {
    out.push(at);
}

/// The first position in `[from, to)` (`63 <= from < to <= data.len()`) with the smallest
/// window hash.
pub fn smallest_window(kernel: Kernel, data: &[u8], from: usize, to: usize) -> usize {
    assert!(63 <= from && from < to && to <= data.len());
    match kernel {
        Kernel::Scalar | Kernel::Chain => smallest_scalar(data, from, to),
        Kernel::Lanes => smallest_lanes(data, from, to),
    }
}

/// The smallest hash at or after `from` below `best` (which is at `at`), a chain at a time.
fn smallest_scalar_from(
    data: &[u8],
    from: usize,
    to: usize,
    mut best: u64,
    mut at: usize,
) -> (u64, usize) {
    let mut h = warm(data, from);
    for (k, &b) in data[from..to].iter().enumerate() {
        h = roll(h, b);
        if h < best {
            best = h;
            at = from + k;
        }
    }
    (best, at)
}

fn smallest_scalar(data: &[u8], from: usize, to: usize) -> usize {
    // The first position is taken whatever its hash (even u64::MAX).
    let h = warm(data, from);
    let h0 = (h << 1).wrapping_add(GEAR[data[from] as usize]);
    smallest_scalar_from(data, from + 1, to, h0, from).1
}

fn smallest_lanes(data: &[u8], from: usize, to: usize) -> usize {
    let per = (to - from) / LANES;
    if per < 64 {
        return smallest_scalar(data, from, to);
    }
    let starts: [usize; LANES] = std::array::from_fn(|l| from + l * per);
    let lanes: [&[u8]; LANES] = std::array::from_fn(|l| &data[starts[l]..starts[l] + per]);
    let mut h: [u64; LANES] = std::array::from_fn(|l| warm(data, starts[l]));
    let mut best = [u64::MAX; LANES];
    let mut at = [usize::MAX; LANES];
    for k in 0..per {
        for l in 0..LANES {
            h[l] = (h[l] << 1).wrapping_add(GEAR[lanes[l][k] as usize]);
            if h[l] < best[l] || at[l] == usize::MAX {
                best[l] = h[l];
                at[l] = k;
            }
        }
    }
    // Lanes are in the order of positions: the first lane with the smallest value wins.
    let mut w = 0;
    for l in 1..LANES {
        if best[l] < best[w] {
            w = l;
        }
    }
    let tail = from + LANES * per;
    smallest_scalar_from(data, tail, to, best[w], starts[w] + at[w]).1
}

/// The cuts of one input, chunk after chunk, from window-hash candidates found ahead over
/// stretches of up to 64 KiB ([`candidates`]) when `min >= 64`; with a smaller minimum (a
/// chunk's first tested hash then depends on its start) by [`cut`].
///
/// The candidates found are kept between calls: `data` may grow between them (its bytes
/// so far unchanged, as when a buffer is filled as it is read), otherwise call
/// [`Cutter::reset`].
#[derive(Debug)]
pub struct Cutter {
    kernel: Kernel,
    /// Every candidate in `[from, to)`, in order; those before `next` are spent.
    found: Vec<usize>,
    next: usize,
    from: usize,
    to: usize,
    /// How far the next stretch reaches: short after a jump (a match swallowed bytes),
    /// doubling up to [`STRETCH`] while the cuts go on from where they were.
    reach: usize,
}

/// The longest stretch scanned for candidates at once.
const STRETCH: usize = 64 << 10;

/// The shortest stretch: one group of [`Kernel::Lanes`].
const GROUP: usize = LANES * SEG;

impl Cutter {
    /// A cutter using `kernel`.
    pub fn new(kernel: Kernel) -> Cutter {
        Cutter {
            kernel,
            found: Vec::new(),
            next: 0,
            from: 0,
            to: 0,
            reach: 0,
        }
    }

    /// Forgets the candidates (the data changed).
    pub fn reset(&mut self) {
        self.found.clear();
        self.next = 0;
        self.from = 0;
        self.to = 0;
    }

    /// [`cut`]: the end of the chunk that starts at `s` and its kind, or `None` when more
    /// data is needed (without `last`).
    #[inline]
    pub fn cut(&mut self, data: &[u8], s: usize, p: &Params, last: bool) -> Option<(usize, Kind)> {
        if p.min < 64 || self.kernel == Kernel::Chain {
            return cut(data, s, p, last);
        }
        let first = s + p.min - 1;
        let kernel = self.kernel;
        cut_with(
            data,
            s,
            p,
            last,
            |end| self.first_candidate(data, first, end, p),
            |end| smallest_window(kernel, data, first, end),
        )
    }

    /// [`cut_all`] through this cutter.
    pub fn cut_all(
        &mut self,
        data: &[u8],
        mut s: usize,
        p: &Params,
        last: bool,
        out: &mut Vec<(usize, Kind)>,
    ) -> usize {
        while s < data.len() {
            match self.cut(data, s, p, last) {
                Some((e, k)) => {
                    out.push((e, k));
                    s = e;
                }
                None => break,
            }
        }
        s
    }

    /// The first candidate in `[a, b)` (`a >= 63`).
    fn first_candidate(&mut self, data: &[u8], a: usize, b: usize, p: &Params) -> Option<usize> {
        if a >= b {
            return None;
        }
        if a < self.from || a > self.to {
            // A jump: start over at `a`, with a short stretch.
            self.reset();
            self.from = a;
            self.to = a;
            self.reach = (2 * p.max).next_multiple_of(GROUP);
        }
        if self.next > 0 && self.found[self.next - 1] >= a {
            // Back to an earlier start within the stretch.
            self.next = self.found.partition_point(|&c| c < a);
        }
        loop {
            while self.next < self.found.len() && self.found[self.next] < a {
                self.next += 1;
            }
            if let Some(&c) = self.found.get(self.next) {
                if c < b {
                    return Some(c);
                }
                return None;
            }
            if b <= self.to {
                return None;
            }
            // Everything up to `to` is spent: scan the next stretch.
            let end = b.max((self.to + self.reach).min(data.len()));
            self.found.clear();
            self.next = 0;
            self.from = self.to;
            candidates(
                self.kernel,
                data,
                self.from,
                end,
                p.threshold,
                &mut self.found,
            );
            self.to = end;
            self.reach = (self.reach * 2).min(STRETCH).max(self.reach);
        }
    }
}

/// The rules applied one byte at a time: the oracle of [`cut`] over a whole input.
pub fn cut_naive(data: &[u8], p: &Params) -> Vec<(usize, Kind)> {
    let mut out = Vec::new();
    let mut s = 0;
    while s < data.len() {
        // A zero run of at least ZERO_RUN bytes starting here?
        let zeros = data[s..]
            .iter()
            .take(p.zero_max.max(ZERO_RUN))
            .take_while(|&&b| b == 0)
            .count();
        if zeros >= ZERO_RUN {
            s += zeros;
            out.push((s, Kind::Zero));
            continue;
        }
        let run_start = (s + 1..data.len())
            .find(|&z| {
                data[z..].iter().take(ZERO_RUN).filter(|&&b| b == 0).count() == ZERO_RUN
                    && z + ZERO_RUN <= data.len()
            })
            .unwrap_or(usize::MAX);
        let mut h = 0u64;
        let hash_from = (s + p.min).saturating_sub(64).max(s);
        let mut cut_at = None;
        let mut smallest: Option<(u64, usize)> = None;
        let mut i = hash_from;
        while i < data.len() {
            if i >= run_start || i >= s + p.max {
                break;
            }
            h = (h << 1).wrapping_add(GEAR[data[i] as usize]);
            if i + 1 >= s + p.min {
                if h <= p.threshold {
                    cut_at = Some(i + 1);
                    break;
                }
                if smallest.is_none_or(|(b, _)| h < b) {
                    smallest = Some((h, i));
                }
            }
            i += 1;
        }
        let end = match cut_at {
            Some(c) => c,
            None if run_start < s + p.max && run_start <= data.len() => run_start,
            None if s + p.max <= data.len() => smallest.map_or(s + p.max, |(_, i)| i + 1),
            None => data.len(),
        };
        out.push((end, Kind::Data));
        s = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The longest zero-run chunk: the default, or short enough that the inputs' runs
    /// reach it.
    fn zero_max() -> impl Strategy<Value = usize> {
        prop_oneof![2 => Just(ZERO_MAX), 1 => Just(ZERO_RUN), 1 => 33usize..300]
    }

    fn params(avg: usize, zero_max: usize) -> Params {
        Params {
            zero_max,
            ..Params::new(avg).unwrap()
        }
    }

    fn data_strategy() -> impl Strategy<Value = Vec<u8>> {
        // Random bytes, zero runs of every length around 32, repeats.
        proptest::collection::vec(
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..3000),
                (0usize..80).prop_map(|n| vec![0u8; n]),
                (0usize..700).prop_map(|n| vec![0u8; n]),
                (any::<u8>(), 0usize..500).prop_map(|(b, n)| vec![b; n]),
            ],
            0..8,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn the_scan_matches_the_oracle(data in data_strategy(), avg in prop_oneof![Just(64usize), Just(100), Just(256), Just(1000), Just(1024)], zm in zero_max()) {
            let p = params(avg, zm);
            let mut got = Vec::new();
            let rest = cut_all(&data, 0, &p, true, &mut got);
            prop_assert_eq!(rest, data.len());
            prop_assert_eq!(got, cut_naive(&data, &p));
        }

        #[test]
        fn an_undecided_scan_agrees_with_the_whole_one(data in data_strategy(), avg in prop_oneof![Just(64usize), Just(256)], keep in 0usize..20000, zm in zero_max()) {
            // Cuts decided on a prefix are those of the whole input.
            let p = params(avg, zm);
            let whole = cut_naive(&data, &p);
            let prefix = &data[..keep.min(data.len())];
            let mut got = Vec::new();
            cut_all(prefix, 0, &p, false, &mut got);
            prop_assert_eq!(&whole[..got.len()], &got[..]);
        }
    }

    fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 40) as u8
            })
            .collect()
    }

    /// Long inputs (several groups of the lanes kernel) with zero runs at any alignment.
    fn long_strategy() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                4 => (0usize..30_000, any::<u64>()).prop_map(|(n, seed)| random_bytes(n, seed)),
                1 => (0usize..100).prop_map(|n| vec![0u8; n]),
                1 => (0usize..3000).prop_map(|n| vec![0u8; n]),
                1 => (any::<u8>(), 0usize..5000).prop_map(|(b, n)| vec![b; n]),
            ],
            0..6,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn every_kernel_finds_the_scalar_candidates(
            data in long_strategy(),
            from in 0usize..20_000,
            len in 0usize..60_000,
            avg in prop_oneof![Just(64u64), Just(256), Just(1024), Just(5000)],
        ) {
            prop_assume!(data.len() >= 63);
            let from = 63 + from % (data.len() - 62);
            let to = (from + len).min(data.len());
            let t = u64::MAX / avg;
            let mut want = Vec::new();
            candidates(Kernel::Scalar, &data, from, to, t, &mut want);
            for k in Kernel::available() {
                let mut got = vec![7usize];
                candidates(k, &data, from, to, t, &mut got);
                prop_assert_eq!(&got[1..], &want[..], "{:?}", k);
                if to > from {
                    prop_assert_eq!(
                        smallest_window(k, &data, from, to),
                        smallest_window(Kernel::Scalar, &data, from, to),
                        "{:?}", k
                    );
                }
            }
        }

        #[test]
        fn every_kernel_cuts_as_the_oracle(
            data in long_strategy(),
            avg in prop_oneof![Just(64usize), Just(100), Just(255), Just(256), Just(300), Just(1000), Just(1024), Just(4096)],
            zm in zero_max(),
        ) {
            let p = params(avg, zm);
            let want = cut_naive(&data, &p);
            for k in Kernel::available() {
                let mut got = Vec::new();
                let rest = Cutter::new(k).cut_all(&data, 0, &p, true, &mut got);
                prop_assert_eq!(rest, data.len());
                prop_assert_eq!(&got, &want, "{:?}", k);
            }
        }

        #[test]
        fn a_cutter_fed_a_growing_buffer_or_jumping_cuts_as_the_oracle(
            data in long_strategy(),
            avg in prop_oneof![Just(64usize), Just(256), Just(1024)],
            steps in proptest::collection::vec(1usize..9000, 1..12),
            jumps in proptest::collection::vec(any::<usize>(), 0..6),
            zm in zero_max(),
        ) {
            let p = params(avg, zm);
            let want = cut_naive(&data, &p);
            for k in Kernel::available() {
                // The buffer grows as reads arrive; cuts are made as soon as decided.
                let mut cutter = Cutter::new(k);
                let (mut got, mut s, mut have) = (Vec::new(), 0usize, 0usize);
                for &n in steps.iter().cycle() {
                    have = (have + n).min(data.len());
                    let last = have == data.len();
                    s = cutter.cut_all(&data[..have], s, &p, last, &mut got);
                    if last {
                        break;
                    }
                }
                prop_assert_eq!(s, data.len());
                prop_assert_eq!(&got, &want, "{:?}", k);
                // From any chunk start on, in any order (as the matcher asks after an
                // extension), the next cut is the oracle's.
                let mut cutter = Cutter::new(k);
                for &j in &jumps {
                    if want.is_empty() {
                        break;
                    }
                    let i = j % want.len();
                    let start = if i == 0 { 0 } else { want[i - 1].0 };
                    prop_assert_eq!(cutter.cut(&data, start, &p, true), Some(want[i]), "{:?}", k);
                    if i + 1 < want.len() {
                        prop_assert_eq!(cutter.cut(&data, want[i].0, &p, true), Some(want[i + 1]), "{:?}", k);
                    }
                }
            }
        }
    }

    #[test]
    fn zero_runs_at_every_alignment_and_length_are_cut_alike() {
        let base = random_bytes(40_000, 99);
        for avg in [64usize, 256, 1024] {
            let p = Params::new(avg).unwrap();
            for at in (20_000..20_040).chain([8191, 8192, 8193, 16_383, 16_384]) {
                for len in [16usize, 31, 32, 33, 47, 48, 64, 200] {
                    let mut data = base.clone();
                    data[at..at + len].iter_mut().for_each(|b| *b = 0);
                    let want = cut_naive(&data, &p);
                    for k in Kernel::available() {
                        let mut got = Vec::new();
                        Cutter::new(k).cut_all(&data, 0, &p, true, &mut got);
                        assert_eq!(got, want, "{k:?} avg {avg} at {at} len {len}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_rules_hold_on_random_data() {
        let mut x = 1u64;
        let data: Vec<u8> = (0..4_000_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 40) as u8
            })
            .collect();
        for avg in [64usize, 1000, 4096] {
            let p = Params::new(avg).unwrap();
            let mut cuts = Vec::new();
            cut_all(&data, 0, &p, true, &mut cuts);
            let mut s = 0;
            let mut lens = Vec::new();
            for (k, &(e, kind)) in cuts.iter().enumerate() {
                assert_eq!(kind, Kind::Data);
                let len = e - s;
                assert!(len <= p.max, "{len}");
                if k + 1 < cuts.len() {
                    assert!(len >= p.min, "{len}");
                }
                lens.push(len);
                s = e;
            }
            // The mean length is near the average (min + avg, as the skip adds min).
            let mean = data.len() as f64 / cuts.len() as f64;
            assert!(
                mean > 0.8 * avg as f64 && mean < 1.6 * avg as f64,
                "{avg}: {mean}"
            );
            // Some chunks reach the longest length's rule, cut at their smallest hash.
            assert!(lens.iter().any(|&l| l > 3 * avg), "{avg}");
        }
    }

    #[test]
    fn a_long_zero_run_is_cut_every_zero_max_bytes_from_its_start() {
        for zm in [40, 100, 4096, ZERO_MAX] {
            let p = params(1024, zm);
            let mut data = random_bytes(4999, 3);
            data.push(1);
            let run = 3 * zm + 36;
            data.extend(vec![0u8; run]);
            data.push(1);
            data.extend(random_bytes(5000, 4));
            let cuts = cut_naive(&data, &p);
            let first = cuts.iter().position(|c| c.1 == Kind::Zero).unwrap();
            let start = cuts[first - 1].0;
            assert_eq!(start, 5000);
            // Three full ones, then the rest: a zero chunk when 32 or more, else the
            // start of a data chunk.
            for k in 0..3 {
                assert_eq!(cuts[first + k], (start + (k + 1) * zm, Kind::Zero), "{zm}");
            }
            assert_eq!(cuts[first + 3], (start + run, Kind::Zero), "{zm}");
            let mut got = Vec::new();
            cut_all(&data, 0, &p, true, &mut got);
            assert_eq!(got, cuts, "{zm}");
            // Decided from zero_max bytes of it: a prefix holding the first one suffices.
            let mut got = Vec::new();
            cut_all(&data[..start + zm], 0, &p, false, &mut got);
            assert_eq!(got.last(), Some(&(start + zm, Kind::Zero)), "{zm}");
        }
    }

    #[test]
    fn average_lengths_outside_64_bytes_to_64_mib_are_refused() {
        assert!(Params::new(64).is_ok());
        assert!(Params::new(64 << 20).is_ok());
        for avg in [0, 63, (64 << 20) + 1] {
            let e = Params::new(avg).unwrap_err();
            assert_eq!(e, ChunkSizeError { avg });
            assert_eq!(
                e.to_string(),
                format!("the average chunk must be 64 bytes to 64 MiB, not {avg}")
            );
        }
    }

    #[test]
    fn zero_runs_of_32_are_chunks_and_of_31_are_not() {
        let p = Params::new(64).unwrap();
        let mut data = vec![7u8; 100];
        data.extend(vec![0u8; 32]);
        data.extend(vec![9u8; 100]);
        let cuts = cut_naive(&data, &p);
        assert!(cuts.contains(&(132, Kind::Zero)), "{cuts:?}");
        let mut got = Vec::new();
        cut_all(&data, 0, &p, true, &mut got);
        assert_eq!(got, cuts);
        let mut data = vec![7u8; 100];
        data.extend(vec![0u8; 31]);
        data.extend(vec![9u8; 100]);
        let mut got = Vec::new();
        cut_all(&data, 0, &p, true, &mut got);
        assert!(got.iter().all(|&(_, k)| k == Kind::Data), "{got:?}");
    }

    #[test]
    fn golden_cuts_are_pinned() {
        // The first cuts of a fixed input; the numbers came from cut_naive once. A change
        // here is a change of the rules, which makes old signatures incompatible.
        let mut x = 0x0123_4567_89ab_cdefu64;
        let data: Vec<u8> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        let p = Params::new(4096).unwrap();
        let cuts: Vec<usize> = cut_naive(&data, &p).iter().take(8).map(|c| c.0).collect();
        assert_eq!(cuts, GOLDEN);
        let mut fast = Vec::new();
        cut_all(&data, 0, &p, true, &mut fast);
        let fast: Vec<usize> = fast.iter().take(8).map(|c| c.0).collect();
        assert_eq!(fast, GOLDEN);
    }

    const GOLDEN: [usize; 8] = [8073, 15599, 20192, 29943, 40108, 43744, 46804, 49246];
}
