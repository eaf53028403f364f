//! Counting lines, words, characters, bytes and the longest line (GNU wc's rules), in
//! chunks that can be counted independently and merged exactly.
//!
//! A chunk's [`Tally`] records, besides its counts, what the merge needs to know about its
//! edges: whether it starts and ends inside a word, and, for the longest-line width, the
//! column transformation of its text before the first line break and after the last one
//! (tabs make a line's width depend on the column it starts at). Merging two adjacent
//! tallies gives the tally of their concatenation, so a file can be cut anywhere (for UTF-8,
//! anywhere on a character boundary: see [`utf8_boundary`]) and counted on all cores.
//!
//! The rules (GNU coreutils 9.1, observed): a word is a maximal run of characters that
//! contains a printable character and is delimited by white space; non-printable characters
//! (and, in UTF-8, invalid bytes) neither start nor end a word. `\n` ends a line; `\n`, `\r`
//! and `\f` reset the column for `-L`; a tab moves to the next multiple of 8.

/// How bytes are decoded into characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// One byte, one character; `isspace` and `isprint` of the C locale.
    C,
    /// UTF-8; invalid bytes are not characters.
    Utf8,
    /// UTF-8 with `POSIXLY_CORRECT` set: the no-break spaces (U+00A0, U+2007, U+202F,
    /// U+2060) are not word separators, as GNU wc then treats them.
    Utf8Posix,
}

impl Encoding {
    /// True for the UTF-8 encodings.
    pub fn is_utf8(self) -> bool {
        self != Encoding::C
    }
}

/// A column transformation: a stretch of text without line resets moves the column from
/// `c` to `c + w` (no tab), or to `(c + w) / 8 * 8 + 8 + d` (a tab after `w` columns, then
/// `d` more columns from that tab stop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Segment {
    w: u64,
    tab: Option<u64>,
}

impl Segment {
    // Widths add saturating: a tally read from a partial result may hold the widths of
    // exabytes (each at most 8 columns a byte, `Tally::is_possible`), whose sum must not
    // wrap to a small one.
    #[inline(always)]
    fn apply(self, c: u64) -> u64 {
        match self.tab {
            None => c.saturating_add(self.w),
            Some(d) => tab_stop(c.saturating_add(self.w)).saturating_add(d),
        }
    }

    /// This stretch followed by `next`.
    #[inline(always)]
    fn then(self, next: Segment) -> Segment {
        match (self.tab, next.tab) {
            (_, None) => Segment {
                w: if self.tab.is_none() {
                    self.w.saturating_add(next.w)
                } else {
                    self.w
                },
                tab: self.tab.map(|d| d.saturating_add(next.w)),
            },
            (None, Some(d)) => Segment {
                w: self.w.saturating_add(next.w),
                tab: Some(d),
            },
            (Some(d1), Some(d2)) => Segment {
                w: self.w,
                tab: Some(tab_stop(d1.saturating_add(next.w)).saturating_add(d2)),
            },
        }
    }

    #[inline(always)]
    fn advance(&mut self, width: u64) {
        match &mut self.tab {
            None => self.w += width,
            Some(d) => *d += width,
        }
    }

    fn tab(&mut self) {
        *self = self.then(Segment { w: 0, tab: Some(0) });
    }
}

/// The column a tab at column `c` moves to (the next multiple of 8; saturating).
#[inline(always)]
fn tab_stop(c: u64) -> u64 {
    (c / 8 * 8).saturating_add(8)
}

/// The counts of a stretch of input, and its edges for merging.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    /// Newlines.
    pub lines: u64,
    /// Words that start in this stretch (a word continuing from before is not counted).
    pub words: u64,
    /// Characters (bytes in the C encoding).
    pub chars: u64,
    /// Bytes.
    pub bytes: u64,
    /// Widest line ending inside this stretch (both its ends inside).
    inner_max: u64,
    /// The text before the first column reset, or all of it when there is none.
    prefix: Segment,
    /// The text after the last column reset.
    suffix: Segment,
    has_reset: bool,
    /// The stretch's first word-relevant character is printable and non-space: a word
    /// continuing from the previous stretch goes on here.
    starts_in_word: bool,
    /// The state after the stretch: inside a word or not (None: no word-relevant character).
    ends_in_word: Option<bool>,
    /// The first word-relevant character was seen (space or printable).
    saw_word_char: bool,
}

impl Tally {
    /// A tally of only newlines and bytes (when nothing else was asked for).
    pub fn lines_and_bytes(lines: u64, bytes: u64) -> Tally {
        Tally {
            lines,
            bytes,
            ..Tally::default()
        }
    }

    /// The tally of this stretch followed by `next`.
    pub fn merge(self, next: Tally) -> Tally {
        let joined_word = self.ends_in_word == Some(true) && next.starts_in_word;
        let (prefix, suffix, inner_max) = match (self.has_reset, next.has_reset) {
            (false, false) => {
                let s = self.prefix.then(next.prefix);
                (s, s, 0)
            }
            (true, false) => (self.prefix, self.suffix.then(next.prefix), self.inner_max),
            (false, true) => (self.prefix.then(next.prefix), next.suffix, next.inner_max),
            (true, true) => (
                self.prefix,
                next.suffix,
                self.inner_max
                    .max(next.inner_max)
                    .max(self.suffix.then(next.prefix).apply(0)),
            ),
        };
        Tally {
            lines: self.lines + next.lines,
            words: self.words + next.words - joined_word as u64,
            chars: self.chars + next.chars,
            bytes: self.bytes + next.bytes,
            inner_max,
            prefix,
            suffix,
            has_reset: self.has_reset || next.has_reset,
            starts_in_word: if self.saw_word_char {
                self.starts_in_word
            } else {
                next.starts_in_word
            },
            ends_in_word: next.ends_in_word.or(self.ends_in_word),
            saw_word_char: self.saw_word_char || next.saw_word_char,
        }
    }

    /// The tally as ten numbers, every field (edges included), for storing it: counts
    /// (lines, words, characters, bytes), the widest inner line, the first and last
    /// stretches' widths and tab offsets (0: no tab, else offset + 1), and a word of flags.
    /// [`Tally::from_numbers`] reads them back.
    pub fn to_numbers(&self) -> [u64; 10] {
        let tab = |t: Option<u64>| t.map_or(0, |d| d.saturating_add(1));
        let flags = u64::from(self.has_reset)
            | u64::from(self.starts_in_word) << 1
            | u64::from(self.ends_in_word.is_some()) << 2
            | u64::from(self.ends_in_word == Some(true)) << 3
            | u64::from(self.saw_word_char) << 4;
        [
            self.lines,
            self.words,
            self.chars,
            self.bytes,
            self.inner_max,
            self.prefix.w,
            tab(self.prefix.tab),
            self.suffix.w,
            tab(self.suffix.tab),
            flags,
        ]
    }

    /// The tally [`Tally::to_numbers`] gave, or `None` when the flags word holds bits it
    /// never sets.
    pub fn from_numbers(n: [u64; 10]) -> Option<Tally> {
        let flags = n[9];
        if flags >> 5 != 0 {
            return None;
        }
        let tab = |t: u64| t.checked_sub(1);
        Some(Tally {
            lines: n[0],
            words: n[1],
            chars: n[2],
            bytes: n[3],
            inner_max: n[4],
            prefix: Segment {
                w: n[5],
                tab: tab(n[6]),
            },
            suffix: Segment {
                w: n[7],
                tab: tab(n[8]),
            },
            has_reset: flags & 1 != 0,
            starts_in_word: flags & 2 != 0,
            ends_in_word: (flags & 4 != 0).then_some(flags & 8 != 0),
            saw_word_char: flags & 16 != 0,
        })
    }

    /// True when this is a tally counting its `bytes` bytes can give: at most one line,
    /// word and character a byte, no width beyond 8 columns a byte (a tab's most), a word
    /// that starts the stretch counted in it, and the edge flags in agreement. A tally
    /// read from a partial result is held to this (with `bytes` its piece's length) before
    /// it is merged, so that forged counts neither wrap a total nor pass for real ones.
    pub fn is_possible(&self) -> bool {
        let b = self.bytes;
        let columns = b.saturating_mul(8);
        let fits = |s: Segment| s.w <= columns && s.tab.is_none_or(|d| d <= columns);
        self.lines <= b
            && self.words <= b
            && self.chars <= b
            && self.inner_max <= columns
            && fits(self.prefix)
            && fits(self.suffix)
            && (!self.starts_in_word || (self.saw_word_char && self.words >= 1))
            && self.ends_in_word.is_some() == self.saw_word_char
    }

    /// The width of the longest line (`wc -L`), once all the input is merged.
    pub fn max_line(&self) -> u64 {
        self.inner_max
            .max(self.prefix.apply(0))
            .max(self.suffix.apply(0))
    }
}

/// What one character does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// `\n`: a line, a column reset, a word separator.
    Newline,
    /// `\r`, `\f`: a column reset and a word separator.
    Reset,
    /// Tab: to the next multiple of 8, a word separator.
    Tab,
    /// Other white space, with its width.
    Space(u64),
    /// Printable, with its display width: part of a word.
    Print(u64),
    /// Neither: control characters, and invalid bytes in UTF-8 (not characters at all).
    Other { is_char: bool },
}

#[inline(always)]
fn class_c(b: u8) -> Class {
    match b {
        b'\n' => Class::Newline,
        b'\r' | 0x0c => Class::Reset,
        b'\t' => Class::Tab,
        b' ' => Class::Space(1),
        0x0b => Class::Space(0),
        0x21..=0x7e => Class::Print(1),
        _ => Class::Other { is_char: true },
    }
}

/// glibc 2.36's classes of every non-ASCII code point in C.UTF-8 as GNU wc 9.1 uses them
/// (word separator, word constituent, or neither, and the display width), as ranges. The
/// file was generated from glibc and checked against `/usr/bin/wc` block by block; see
/// `docs/gnu/wc-9.1.md`.
static CLASS_TABLE: &str = include_str!("../data/glibc-2.36-c-utf8-wc-classes.txt");

fn class_ranges() -> &'static [(u32, u32, Class)] {
    static RANGES: std::sync::OnceLock<Vec<(u32, u32, Class)>> = std::sync::OnceLock::new();
    RANGES.get_or_init(|| {
        CLASS_TABLE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let first = u32::from_str_radix(f.next()?, 16).ok()?;
                let last = u32::from_str_radix(f.next()?, 16).ok()?;
                let kind = f.next()?;
                let width: u64 = f.next()?.parse().ok()?;
                let class = match kind {
                    "S" => Class::Space(width),
                    "W" => Class::Print(width),
                    _ => Class::Other { is_char: true },
                };
                Some((first, last, class))
            })
            .collect()
    })
}

/// The no-break spaces GNU wc counts as word separators unless `POSIXLY_CORRECT` is set.
fn nbsp(u: u32) -> bool {
    matches!(u, 0x00A0 | 0x2007 | 0x202F | 0x2060)
}

/// The classes of the Basic Multilingual Plane, one byte per code point (see [`packed`]),
/// so that a character's class is one load instead of a search of the ranges.
fn bmp_classes() -> &'static [u8; 0x10000] {
    static BMP: std::sync::OnceLock<Box<[u8; 0x10000]>> = std::sync::OnceLock::new();
    BMP.get_or_init(|| {
        // Filled from the ranges (as `class_char` reads them: a code point in no range is
        // a non-printable character); ASCII is classified before the table is looked at.
        let mut t = Box::new([packed(Class::Other { is_char: true }); 0x10000]);
        for &(first, last, class) in class_ranges() {
            let (first, last) = (first as usize, (last as usize).min(0xFFFF));
            if first <= last {
                t[first..=last].fill(packed(class));
            }
        }
        t
    })
}

/// A character class in a byte: the kind in the high bits, the width (0-3) in the low two.
fn packed(c: Class) -> u8 {
    match c {
        Class::Newline => 0x10,
        Class::Reset => 0x20,
        Class::Tab => 0x30,
        Class::Space(w) => 0x40 | w.min(3) as u8,
        Class::Print(w) => 0x50 | w.min(3) as u8,
        Class::Other { is_char } => 0x60 | is_char as u8,
    }
}

/// The class [`packed`] stored.
#[inline(always)]
fn unpacked(b: u8) -> Class {
    let low = u64::from(b & 3);
    match b >> 4 {
        1 => Class::Newline,
        2 => Class::Reset,
        3 => Class::Tab,
        4 => Class::Space(low),
        5 => Class::Print(low),
        _ => Class::Other { is_char: low == 1 },
    }
}

/// The class of `c` in UTF-8, through the BMP table (`posix`: the no-break spaces are not
/// separators).
#[inline(always)]
fn class_utf8(c: char, bmp: &[u8; 0x10000], posix: bool) -> Class {
    let u = c as u32;
    if u < 0x80 {
        return class_c(u as u8);
    }
    let class = match bmp.get(u as usize) {
        Some(&b) => unpacked(b),
        None => class_char(c),
    };
    match class {
        Class::Space(w) if posix && nbsp(u) => Class::Print(w),
        other => other,
    }
}

fn class_char(c: char) -> Class {
    let u = c as u32;
    if u < 0x80 {
        return class_c(u as u8);
    }
    let ranges = class_ranges();
    let i = ranges.partition_point(|&(_, last, _)| last < u);
    match ranges.get(i) {
        Some(&(first, _, class)) if first <= u => class,
        _ => Class::Other { is_char: true },
    }
}

struct Counter {
    t: Tally,
    in_word: bool,
}

impl Counter {
    fn new() -> Self {
        Counter {
            t: Tally::default(),
            in_word: false,
        }
    }

    #[inline(always)]
    fn reset_column(&mut self) {
        let line = if self.t.has_reset {
            self.t.suffix.apply(0)
        } else {
            0
        };
        if self.t.has_reset {
            self.t.inner_max = self.t.inner_max.max(line);
        }
        self.t.has_reset = true;
        self.t.suffix = Segment::default();
    }

    #[inline(always)]
    fn column(&mut self) -> &mut Segment {
        if self.t.has_reset {
            &mut self.t.suffix
        } else {
            &mut self.t.prefix
        }
    }

    #[inline(always)]
    fn separator(&mut self) {
        if !self.t.saw_word_char {
            self.t.saw_word_char = true;
            self.t.starts_in_word = false;
        }
        self.in_word = false;
        self.t.ends_in_word = Some(false);
    }

    #[inline(always)]
    fn step(&mut self, class: Class) {
        match class {
            Class::Newline => {
                self.t.lines += 1;
                self.t.chars += 1;
                self.reset_column();
                self.separator();
            }
            Class::Reset => {
                self.t.chars += 1;
                self.reset_column();
                self.separator();
            }
            Class::Tab => {
                self.t.chars += 1;
                self.column().tab();
                self.separator();
            }
            Class::Space(w) => {
                self.t.chars += 1;
                self.column().advance(w);
                self.separator();
            }
            Class::Print(w) => {
                self.t.chars += 1;
                self.column().advance(w);
                if !self.t.saw_word_char {
                    self.t.saw_word_char = true;
                    self.t.starts_in_word = true;
                }
                if !self.in_word {
                    self.t.words += 1;
                }
                self.in_word = true;
                self.t.ends_in_word = Some(true);
            }
            Class::Other { is_char } => {
                self.t.chars += is_char as u64;
            }
        }
    }
}

/// Counts `data` (a stretch of a larger input, cut on a character boundary).
pub fn tally(data: &[u8], enc: Encoding) -> Tally {
    let mut c = Counter::new();
    match enc {
        Encoding::C => {
            for &b in data {
                c.step(class_c(b));
            }
        }
        Encoding::Utf8 | Encoding::Utf8Posix => {
            let bmp = bmp_classes();
            let posix = enc == Encoding::Utf8Posix;
            let class_char = |ch: char| class_utf8(ch, bmp, posix);
            let mut rest = data;
            while !rest.is_empty() {
                // ASCII runs need no decoding: one class per byte, as in the C locale.
                let ascii = rest.iter().position(|&b| b >= 0x80).unwrap_or(rest.len());
                if ascii > 0 {
                    for &b in &rest[..ascii] {
                        c.step(class_c(b));
                    }
                    rest = &rest[ascii..];
                    continue;
                }
                match std::str::from_utf8(rest) {
                    Ok(s) => {
                        s.chars().for_each(|ch| c.step(class_char(ch)));
                        rest = &[];
                    }
                    Err(e) => {
                        let (good, bad) = rest.split_at(e.valid_up_to());
                        // SAFETY-free: `good` was validated by from_utf8 just above.
                        std::str::from_utf8(good)
                            .unwrap_or_default()
                            .chars()
                            .for_each(|ch| c.step(class_char(ch)));
                        if let Some(n) = glibc_extended(bad) {
                            // glibc decodes these as one (non-printable) character.
                            c.step(Class::Other { is_char: true });
                            rest = &bad[n..];
                            continue;
                        }
                        let skip = e.error_len().unwrap_or(bad.len());
                        for _ in 0..skip {
                            c.step(Class::Other { is_char: false });
                        }
                        rest = &bad[skip..];
                    }
                }
            }
        }
    }
    c.t.bytes = data.len() as u64;
    c.t
}

/// The full tally of an ASCII block (any ASCII bytes), with a tight loop that tracks the
/// column as a plain number after the first line reset (the general counter keeps a column
/// transformation for every stretch). Same result as [`tally`] for ASCII data, in either
/// encoding; `None` for data with non-ASCII bytes.
pub fn tally_ascii(data: &[u8]) -> Option<Tally> {
    // First, so that a block with other bytes is turned away at its first one, before the
    // whole-block scans below.
    if !data.is_ascii() {
        return None;
    }
    if memchr::memchr3(b'\t', b'\r', 0x0c, data).is_none() && memchr::memchr(0x0b, data).is_none() {
        // No tab, no reset but the newline, no zero-width space: with only printable
        // characters and spaces left (which the vector word count checks), a line's width
        // is its length in bytes.
        if let Some(mut t) = tally_words_fast(data) {
            line_lengths(data, &mut t);
            return Some(t);
        }
    }
    let Some(p) = data.iter().position(|&b| matches!(b, b'\n' | b'\r' | 0x0c)) else {
        return Some(tally(data, Encoding::C));
    };
    let head = tally(&data[..p], Encoding::C);
    let (mut lines, mut words, mut max, mut col) = (0u64, 0u64, 0u64, 0u64);
    let mut in_word = false;
    for &b in &data[p..] {
        match b {
            b'\n' => {
                lines += 1;
                max = max.max(col);
                col = 0;
                in_word = false;
            }
            b'\r' | 0x0c => {
                max = max.max(col);
                col = 0;
                in_word = false;
            }
            b'\t' => {
                col = col / 8 * 8 + 8;
                in_word = false;
            }
            b' ' => {
                col += 1;
                in_word = false;
            }
            0x0b => in_word = false,
            0x21..=0x7e => {
                col += 1;
                words += !in_word as u64;
                in_word = true;
            }
            _ => {}
        }
    }
    let len = (data.len() - p) as u64;
    let rest = Tally {
        lines,
        words,
        chars: len,
        bytes: len,
        inner_max: max,
        prefix: Segment::default(),
        suffix: Segment { w: col, tab: None },
        has_reset: true,
        starts_in_word: false,
        ends_in_word: Some(in_word),
        saw_word_char: true,
    };
    Some(head.merge(rest))
}

/// Fills the longest-line fields of `t` for `data` whose every character is one column
/// wide and whose only column reset is the newline: widths are distances between newlines.
fn line_lengths(data: &[u8], t: &mut Tally) {
    let mut newlines = memchr::memchr_iter(b'\n', data);
    let Some(first) = newlines.next() else {
        t.prefix = Segment {
            w: data.len() as u64,
            tab: None,
        };
        t.has_reset = false;
        t.inner_max = 0;
        t.suffix = Segment::default();
        return;
    };
    let (mut last, mut max) = (first, 0usize);
    for p in newlines {
        max = max.max(p - last - 1);
        last = p;
    }
    t.prefix = Segment {
        w: first as u64,
        tab: None,
    };
    t.inner_max = max as u64;
    t.suffix = Segment {
        w: (data.len() - last - 1) as u64,
        tab: None,
    };
    t.has_reset = true;
}

/// Lines, words and bytes of a block made only of printable ASCII and ASCII white space
/// (the common case), with vector instructions; `None` when the block holds anything else
/// (control characters, non-ASCII bytes), which the general state machine must handle.
/// The result's longest-line fields are not computed: use it only when `-L` is not asked.
pub fn tally_words_fast(data: &[u8]) -> Option<Tally> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of the x86_64 baseline.
        unsafe { sse2::tally_words(data) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = data;
        None
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::Tally;
    use std::arch::x86_64::*;

    /// Bit masks (one bit per byte of 16) of white space, printable bytes, and newlines.
    #[inline(always)]
    unsafe fn classify(v: __m128i) -> (u32, u32, u32) {
        // SAFETY: SSE2 intrinsics on registers only; SSE2 is part of the x86_64 baseline.
        unsafe {
            let sp = _mm_cmpeq_epi8(v, _mm_set1_epi8(b' ' as i8));
            let ctl = _mm_and_si128(
                _mm_cmpgt_epi8(v, _mm_set1_epi8(8)),
                _mm_cmplt_epi8(v, _mm_set1_epi8(14)),
            );
            let space = _mm_or_si128(sp, ctl);
            // Signed compares: bytes >= 0x80 are negative, so never printable.
            let print = _mm_and_si128(
                _mm_cmpgt_epi8(v, _mm_set1_epi8(0x20)),
                _mm_cmplt_epi8(v, _mm_set1_epi8(0x7f)),
            );
            let nl = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8));
            (
                _mm_movemask_epi8(space) as u32,
                _mm_movemask_epi8(print) as u32,
                _mm_movemask_epi8(nl) as u32,
            )
        }
    }

    /// [`words_body`] with AVX2 compares.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn tally_words_avx2(data: &[u8]) -> Option<Tally> {
        // SAFETY: AVX2 is available (this function's contract).
        unsafe { words_body::<true>(data) }
    }

    /// See [`words_body`]; with AVX2 when the CPU has it.
    ///
    /// # Safety
    /// SSE2 must be available (always, on x86_64).
    pub(super) unsafe fn tally_words(data: &[u8]) -> Option<Tally> {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was just detected.
            unsafe { tally_words_avx2(data) }
        } else {
            // SAFETY: SSE2 is part of the x86_64 baseline.
            unsafe { words_body::<false>(data) }
        }
    }

    /// Lines, words and bytes of ASCII text (see [`super::tally_words_fast`]).
    ///
    /// # Safety
    /// SSE2 must be available (always, on x86_64), and AVX2 when `AVX`.
    #[inline(always)]
    pub(super) unsafe fn words_body<const AVX: bool>(data: &[u8]) -> Option<Tally> {
        let (mut lines, mut words) = (0u64, 0u64);
        // Whether the byte before the current one was printable (a block starts as if after
        // white space; the merge joins words across blocks).
        let mut prev_print = 0u32;
        // 64 bytes a step: four 16-byte classifications joined into 64-bit masks.
        let mut chunks = data.chunks_exact(64);
        for c in &mut chunks {
            // SAFETY: `c` holds 64 readable bytes; AVX2 is available when `AVX`.
            let [space, print, nl, ..] = unsafe { masks64::<AVX>(c) };
            if space | print != u64::MAX {
                return None;
            }
            lines += nl.count_ones() as u64;
            let before = (print << 1) | prev_print as u64;
            words += (print & !before).count_ones() as u64;
            prev_print = (print >> 63) as u32;
        }
        let rest = chunks.remainder();
        let mut chunks = rest.chunks_exact(16);
        for c in &mut chunks {
            // SAFETY: `c` holds 16 readable bytes; unaligned loads are allowed.
            let (space, print, nl) = unsafe { classify(_mm_loadu_si128(c.as_ptr().cast())) };
            if space | print != 0xFFFF {
                return None;
            }
            lines += nl.count_ones() as u64;
            let before = (print << 1) | prev_print;
            words += (print & !before & 0xFFFF).count_ones() as u64;
            prev_print = print >> 15;
        }
        for &b in chunks.remainder() {
            let space = b == b' ' || (9..=13).contains(&b);
            let print = (0x21..=0x7e).contains(&b);
            if !space && !print {
                return None;
            }
            lines += (b == b'\n') as u64;
            words += (print && prev_print == 0) as u64;
            prev_print = print as u32;
        }
        let first_print = data.first().map(|&b| (0x21..=0x7e).contains(&b));
        let last_print = data.last().map(|&b| (0x21..=0x7e).contains(&b));
        Some(Tally {
            lines,
            words,
            chars: data.len() as u64,
            bytes: data.len() as u64,
            starts_in_word: first_print.unwrap_or(false),
            ends_in_word: last_print,
            saw_word_char: first_print.is_some(),
            ..Tally::default()
        })
    }

    /// Masks of one 64-byte chunk, one bit per byte: white space, printable ASCII,
    /// newlines, non-ASCII bytes, and the column resets and zero-width space other than the
    /// newline (tab, vertical tab, form feed, carriage return). `AVX`: with 32-byte AVX2
    /// compares, for callers compiled with AVX2 enabled.
    #[inline(always)]
    unsafe fn masks64<const AVX: bool>(c: &[u8]) -> [u64; 5] {
        if AVX {
            // SAFETY: the caller has AVX2 (its promise) and passes 64 readable bytes.
            return unsafe { super::avx2::masks64(c) };
        }
        let mut m = [0u64; 5];
        for k in 0..4 {
            // SAFETY: the caller passes 64 readable bytes; unaligned loads are allowed; SSE2
            // is part of the x86_64 baseline.
            unsafe {
                let v = _mm_loadu_si128(c.as_ptr().add(16 * k).cast());
                let (s, p, n) = classify(v);
                let hi = _mm_movemask_epi8(v) as u32;
                let odd = _mm_and_si128(
                    _mm_cmpgt_epi8(v, _mm_set1_epi8(8)),
                    _mm_cmplt_epi8(v, _mm_set1_epi8(14)),
                );
                let odd = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8)), odd);
                let odd = _mm_movemask_epi8(odd) as u32;
                for (slot, bits) in m.iter_mut().zip([s, p, n, hi, odd]) {
                    *slot |= (bits as u64) << (16 * k);
                }
            }
        }
        m
    }

    /// The continuation bytes (`10xxxxxx`) of a 64-byte chunk, one bit per byte.
    #[inline(always)]
    unsafe fn cont64(c: &[u8]) -> u64 {
        let mut m = 0u64;
        for k in 0..4 {
            // SAFETY: the caller passes 64 readable bytes; unaligned loads are allowed; SSE2
            // is part of the x86_64 baseline.
            unsafe {
                let v = _mm_loadu_si128(c.as_ptr().add(16 * k).cast());
                let cont = _mm_movemask_epi8(_mm_cmpeq_epi8(
                    _mm_and_si128(v, _mm_set1_epi8(0xC0u8 as i8)),
                    _mm_set1_epi8(0x80u8 as i8),
                )) as u32;
                m |= (cont as u64) << (16 * k);
            }
        }
        m
    }

    /// [`utf8_body`] with AVX2 compares.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn utf8_run_avx2<const WIDTH: bool>(
        data: &[u8],
        bmp: &[u8; 0x10000],
        posix: bool,
    ) -> (Tally, usize) {
        // SAFETY: AVX2 is available (this function's contract).
        unsafe { utf8_body::<true, WIDTH>(data, bmp, posix) }
    }

    /// See [`utf8_body`]; with AVX2 when the CPU has it.
    ///
    /// # Safety
    /// SSE2 must be available (always, on x86_64).
    pub(super) unsafe fn utf8_run<const WIDTH: bool>(
        data: &[u8],
        bmp: &[u8; 0x10000],
        posix: bool,
    ) -> (Tally, usize) {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was just detected.
            unsafe { utf8_run_avx2::<WIDTH>(data, bmp, posix) }
        } else {
            // SAFETY: SSE2 is part of the x86_64 baseline.
            unsafe { utf8_body::<false, WIDTH>(data, bmp, posix) }
        }
    }

    /// Counts the longest prefix of UTF-8 `data` (which starts on a character boundary)
    /// that the vector loop can take: whole 64-byte chunks of white space, printable ASCII
    /// and valid multibyte characters that are word separators or printable (each looked up
    /// in the class table once, at its lead byte). Returns the tally of that prefix (with the longest-line fields when
    /// `WIDTH`) and its length, which ends on a character boundary; the caller counts what
    /// follows with the state machine.
    ///
    /// Bits of a chunk's masks are bytes; a multibyte character's bytes all take its class
    /// (so its continuation bytes neither start nor end a word), characters are the bytes
    /// that are not continuation bytes, and a line's width is the count of its one-column
    /// bytes plus one for each double-width character.
    ///
    /// # Safety
    /// SSE2 must be available (always, on x86_64), and AVX2 when `AVX`.
    #[inline(always)]
    pub(super) unsafe fn utf8_body<const AVX: bool, const WIDTH: bool>(
        data: &[u8],
        bmp: &[u8; 0x10000],
        posix: bool,
    ) -> (Tally, usize) {
        let (mut lines, mut words, mut chars) = (0u64, 0u64, 0u64);
        let mut prev_print = 0u64;
        let mut first_print = false;
        // Bytes of a character begun in the previous chunk, and its class (printable?).
        let (mut carry, mut carry_print) = (0usize, false);
        let mut columns = Columns::default();
        let mut o = 0;
        'chunks: while o + 64 <= data.len() {
            let c = &data[o..o + 64];
            // SAFETY: `c` holds 64 readable bytes; SSE2 is available (the caller's promise).
            let [mut space, mut print, nl, hi, odd] = unsafe { masks64::<AVX>(c) };
            let (mut one, mut two) = (0u64, 0u64);
            let (mut next_carry, mut next_print) = (0usize, false);
            let mut cont = 0;
            if hi != 0 {
                // SAFETY: as above.
                cont = unsafe { cont64(c) };
                let carried = (1u64 << carry) - 1;
                if carry_print {
                    print |= carried;
                } else {
                    space |= carried;
                }
                let mut expect = carried;
                let mut leads = hi & !cont;
                while leads != 0 {
                    let p = leads.trailing_zeros() as usize;
                    let i = o + p;
                    let len = match data[i] {
                        0xC2..=0xDF => 2,
                        0xE0..=0xEF => 3,
                        0xF0..=0xF4 => 4,
                        _ => break 'chunks,
                    };
                    let Some(seq) = data.get(i..i + len) else {
                        break 'chunks;
                    };
                    let Some(ch) = std::str::from_utf8(seq).ok().and_then(|s| s.chars().next())
                    else {
                        break 'chunks;
                    };
                    let bits = (((1u128 << len) - 1) << p) as u64;
                    let (is_print, w) = match super::class_utf8(ch, bmp, posix) {
                        super::Class::Print(w) if w <= 2 => (true, w),
                        super::Class::Space(w) if w <= 2 => (false, w),
                        _ => break 'chunks,
                    };
                    if is_print {
                        print |= bits;
                    } else {
                        space |= bits;
                    }
                    if WIDTH {
                        one |= ((w >= 1) as u64) << p;
                        two |= ((w == 2) as u64) << p;
                    }
                    expect |= bits & !(1u64 << p);
                    if p + len > 64 {
                        (next_carry, next_print) = (p + len - 64, is_print);
                    }
                    leads &= leads - 1;
                }
                if expect != cont {
                    break;
                }
                if WIDTH {
                    one |= (space | print) & !hi & !nl & !odd;
                }
            } else if carry != 0 {
                // Continuation bytes were expected here.
                break;
            } else if WIDTH {
                one = !nl & !odd;
            }
            if space | print != u64::MAX {
                break;
            }
            (carry, carry_print) = (next_carry, next_print);
            if o == 0 {
                first_print = print & 1 != 0;
            }
            lines += nl.count_ones() as u64;
            chars += 64 - cont.count_ones() as u64;
            let before = (print << 1) | prev_print;
            words += (print & !before).count_ones() as u64;
            prev_print = print >> 63;
            if WIDTH {
                columns.chunk(c, one, two, nl | odd);
            }
            o += 64;
        }
        // Stop after the continuation bytes of a character the last chunk began (they were
        // checked when it was decoded), so that the rest starts on a character boundary.
        let stop = if o == 0 { 0 } else { o + carry };
        if stop == 0 {
            return (Tally::default(), 0);
        }
        let mut t = Tally {
            lines,
            words,
            chars,
            bytes: stop as u64,
            starts_in_word: first_print,
            ends_in_word: Some(prev_print != 0),
            saw_word_char: true,
            ..Tally::default()
        };
        if WIDTH {
            columns.finish(&mut t);
        }
        (t, stop)
    }

    /// Width bookkeeping of [`utf8_body`]: the column since the last reset (a
    /// transformation until the first, whose start column is not known here), the text
    /// before the first reset, the widest line strictly inside, whether a reset was seen.
    #[derive(Default)]
    struct Columns {
        col: super::Segment,
        head: super::Segment,
        inner: u64,
        reset: bool,
    }

    impl Columns {
        /// One 64-byte chunk `c`: `one` and `two` mark the bytes one and two columns wide
        /// (a character's width on its first byte), `stops` the newlines, tabs, form
        /// feeds, carriage returns and vertical tabs. Between stops the column moves by
        /// the width of the bytes; at each, as the state machine does.
        #[inline(always)]
        fn chunk(&mut self, c: &[u8], one: u64, two: u64, stops: u64) {
            let width = |from: u32, to: u32| -> u64 {
                // Bits from..to (to exclusive, at most 64).
                let m = if to - from == 64 {
                    u64::MAX
                } else {
                    ((1u64 << (to - from)) - 1) << from
                };
                ((one & m).count_ones() + (two & m).count_ones()) as u64
            };
            let mut from = 0u32;
            let mut m = stops;
            while m != 0 {
                let p = m.trailing_zeros();
                self.col.advance(width(from, p));
                match c[p as usize] {
                    b'\t' => self.col.tab(),
                    0x0b => {}
                    _ => {
                        if self.reset {
                            self.inner = self.inner.max(self.col.apply(0));
                        } else {
                            self.head = self.col;
                            self.reset = true;
                        }
                        self.col = super::Segment::default();
                    }
                }
                from = p + 1;
                m &= m - 1;
            }
            if from < 64 {
                self.col.advance(width(from, 64));
            }
        }

        /// The widths into the body's tally.
        #[inline(always)]
        fn finish(self, t: &mut Tally) {
            if self.reset {
                t.prefix = self.head;
                t.inner_max = self.inner;
                t.suffix = self.col;
                t.has_reset = true;
            } else {
                t.prefix = self.col;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// The masks of `sse2::masks64`, 32 bytes a compare.
    ///
    /// # Safety
    /// The CPU must support AVX2; `c` must hold at least 64 bytes.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn masks64(c: &[u8]) -> [u64; 5] {
        let mut m = [0u64; 5];
        for k in 0..2 {
            // SAFETY: `c` holds 64 readable bytes (the caller's promise); unaligned loads are
            // allowed; AVX2 is available (this function's contract).
            unsafe {
                let v = _mm256_loadu_si256(c.as_ptr().add(32 * k).cast());
                let set = |b: u8| _mm256_set1_epi8(b as i8);
                let sp = _mm256_cmpeq_epi8(v, set(b' '));
                let ctl =
                    _mm256_and_si256(_mm256_cmpgt_epi8(v, set(8)), _mm256_cmpgt_epi8(set(14), v));
                // Signed compares: bytes >= 0x80 are negative, so never printable.
                let print = _mm256_and_si256(
                    _mm256_cmpgt_epi8(v, set(0x20)),
                    _mm256_cmpgt_epi8(set(0x7f), v),
                );
                let nl = _mm256_cmpeq_epi8(v, set(b'\n'));
                let bits = [
                    _mm256_movemask_epi8(_mm256_or_si256(sp, ctl)),
                    _mm256_movemask_epi8(print),
                    _mm256_movemask_epi8(nl),
                    _mm256_movemask_epi8(v),
                    _mm256_movemask_epi8(_mm256_andnot_si256(nl, ctl)),
                ];
                for (slot, b) in m.iter_mut().zip(bits) {
                    *slot |= (b as u32 as u64) << (32 * k);
                }
            }
        }
        m
    }
}

/// Sequences that glibc's UTF-8 decoder accepts beyond standard UTF-8 (values above
/// U+10FFFF in 4 bytes, and the old 5- and 6-byte forms): their length, when `b` starts
/// with a complete one.
pub fn glibc_extended(b: &[u8]) -> Option<usize> {
    let (len, min_second) = match *b.first()? {
        0xF4 => (4, 0x90),
        0xF5..=0xF7 => (4, 0x80),
        0xF8 => (5, 0x88),
        0xF9..=0xFB => (5, 0x80),
        0xFC => (6, 0x84),
        0xFD => (6, 0x80),
        _ => return None,
    };
    (b.len() >= len && b[1] >= min_second && b[1..len].iter().all(|&x| x & 0xC0 == 0x80))
        .then_some(len)
}

/// Bytes a sequence starting with `lead` has in glibc's decoder (1 for bytes that cannot
/// start one).
fn sequence_len(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        0xF8..=0xFB => 5,
        0xFC..=0xFD => 6,
        _ => 1,
    }
}

/// True when `b` (a lead byte and what follows it) could still become a valid character
/// if more continuation bytes came.
fn incomplete_prefix(b: &[u8]) -> bool {
    let need = sequence_len(b[0]);
    if need == 1 || b.len() >= need || !b[1..].iter().all(|&x| x & 0xC0 == 0x80) {
        return false;
    }
    match (b[0], b.get(1)) {
        (_, None) => true,
        (0xE0, Some(&x)) => x >= 0xA0,
        (0xED, Some(&x)) => x <= 0x9F,
        (0xF0, Some(&x)) => x >= 0x90,
        (0xF8, Some(&x)) => x >= 0x88,
        (0xFC, Some(&x)) => x >= 0x84,
        _ => true,
    }
}

/// Longest character (glibc's 6-byte form): how far junction bytes can reach.
const MAX_SEQ: usize = 6;

/// A block of a larger input cut at an arbitrary byte: the tally of its middle, plus the
/// bytes at its edges that may belong to a character split by the cut. Folding the blocks
/// in order with [`fold_blocks`] decodes each junction as the whole input would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockTally {
    head: [u8; MAX_SEQ - 1],
    head_len: u8,
    body: Tally,
    tail: [u8; MAX_SEQ - 1],
    tail_len: u8,
}

impl BlockTally {
    /// The tally of `n` zero bytes (a hole of a sparse file), without reading them. A NUL is
    /// a character that is neither white space nor printable: it ends no line, starts or ends
    /// no word and has no width, so `n` of them count as one does, `n` times over.
    pub fn zeros(n: u64, enc: Encoding) -> BlockTally {
        let one = tally(&[0], enc);
        BlockTally {
            head: [0; MAX_SEQ - 1],
            head_len: 0,
            body: Tally {
                chars: one.chars * n,
                bytes: n,
                ..one
            },
            tail: [0; MAX_SEQ - 1],
            tail_len: 0,
        }
    }
}

/// Tallies one block of a larger input (any cut position).
pub fn tally_block(data: &[u8], enc: Encoding) -> BlockTally {
    tally_block_with(data, enc, true)
}

/// Stretches of a block with non-ASCII bytes that are tallied on their own, so that the
/// ASCII ones take the fast loops: one accented letter no longer sends a whole block of
/// English text through the general state machine. 256 bytes: on 200 MB of text with a
/// non-ASCII word in one line of 200, 4 KiB took 163 ms, 1 KiB 76 ms, 256 bytes 56 ms,
/// 64 bytes 99 ms (hyperfine, means of 5).
const MIXED_CHUNK: usize = 256;

/// The tally of `data` (starting and ending on character boundaries), 4 KiB at a time:
/// ASCII stretches through the fast loops (`width`: with the longest-line fields), the
/// others through the state machine, merged in order.
fn tally_mixed(data: &[u8], enc: Encoding, width: bool) -> Tally {
    let mut acc = Tally::default();
    let mut at = 0;
    while at < data.len() {
        let end = utf8_boundary(data, (at + MIXED_CHUNK).min(data.len()));
        let part = &data[at..end];
        let fast = if width {
            tally_ascii(part)
        } else {
            tally_words_fast(part).or_else(|| tally_ascii(part))
        };
        let t = fast.unwrap_or_else(|| tally(part, enc));
        acc = if at == 0 { t } else { acc.merge(t) };
        at = end;
    }
    acc
}

/// The tally of UTF-8 `data` (starting and ending on character boundaries) through the
/// vector loop of [`sse2::utf8_run`], which takes ASCII and valid multibyte characters alike
/// (one class lookup per multibyte character); the rare stretches it turns away (control
/// characters, invalid bytes, non-printable characters, and with `width` tabs and carriage
/// returns) go through the state machine 64 bytes at a time, merged in order.
fn tally_utf8(data: &[u8], enc: Encoding, width: bool) -> Tally {
    #[cfg(target_arch = "x86_64")]
    {
        let bmp = bmp_classes();
        let posix = enc == Encoding::Utf8Posix;
        let mut acc: Option<Tally> = None;
        let join = |acc: Option<Tally>, t: Tally| Some(acc.map_or(t, |a| a.merge(t)));
        let mut at = 0;
        while at < data.len() {
            // SAFETY: SSE2 is part of the x86_64 baseline.
            let (t, n) = unsafe {
                if width {
                    sse2::utf8_run::<true>(&data[at..], bmp, posix)
                } else {
                    sse2::utf8_run::<false>(&data[at..], bmp, posix)
                }
            };
            if n > 0 {
                acc = join(acc, t);
                at += n;
            }
            if at < data.len() {
                let end = utf8_boundary(data, (at + 64).min(data.len()));
                acc = join(acc, tally(&data[at..end], enc));
                at = end;
            }
        }
        acc.unwrap_or_default()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        tally_mixed(data, enc, width)
    }
}

fn tally_block_with(data: &[u8], enc: Encoding, width: bool) -> BlockTally {
    let ascii = if enc == Encoding::C {
        Some(tally_ascii(data).unwrap_or_else(|| tally_mixed(data, enc, width)))
    } else {
        // The UTF-8 loop takes ASCII text as fast as the ASCII one: no scan to try first.
        None
    };
    if let Some(body) = ascii {
        return BlockTally {
            head: [0; MAX_SEQ - 1],
            head_len: 0,
            body,
            tail: [0; MAX_SEQ - 1],
            tail_len: 0,
        };
    }
    // Leading continuation bytes may finish a character begun in the previous block.
    let start = utf8_boundary(data, 0);
    // A trailing incomplete (but so far valid) sequence may be finished by the next block.
    let mut end = data.len();
    let back = data.len().saturating_sub(MAX_SEQ - 1).max(start);
    for i in (back..data.len()).rev() {
        if data[i] & 0xC0 == 0x80 {
            continue;
        }
        if incomplete_prefix(&data[i..]) {
            end = i;
        }
        break;
    }
    let mut head = [0u8; MAX_SEQ - 1];
    head[..start].copy_from_slice(&data[..start]);
    let mut tail = [0u8; MAX_SEQ - 1];
    tail[..data.len() - end].copy_from_slice(&data[end..]);
    BlockTally {
        head,
        head_len: start as u8,
        body: tally_utf8(&data[start..end], enc, width),
        tail,
        tail_len: (data.len() - end) as u8,
    }
}

/// As [`tally_block`], but through [`tally_words_fast`] when the block allows it: the
/// longest-line width of the folded result is then not valid (use only without `-L`).
pub fn tally_block_no_width(data: &[u8], enc: Encoding) -> BlockTally {
    if enc.is_utf8() {
        return tally_block_with(data, enc, false);
    }
    match tally_words_fast(data) {
        Some(body) => BlockTally {
            head: [0; MAX_SEQ - 1],
            head_len: 0,
            body,
            tail: [0; MAX_SEQ - 1],
            tail_len: 0,
        },
        None => tally_block_with(data, enc, false),
    }
}

/// Folds the blocks of one input, in order, into the input's tally.
pub fn fold_blocks(blocks: impl IntoIterator<Item = BlockTally>, enc: Encoding) -> Tally {
    let mut f = Folder::new(enc);
    for b in blocks {
        f.push(b);
    }
    f.finish()
}

/// Folds block tallies one at a time, in order, so that a caller need not keep them all.
#[derive(Debug)]
pub struct Folder {
    acc: Tally,
    /// Bytes of a character split across blocks, waiting for its end.
    pending: Vec<u8>,
    enc: Encoding,
}

impl Folder {
    /// An empty fold.
    pub fn new(enc: Encoding) -> Folder {
        Folder {
            acc: Tally::default(),
            pending: Vec::new(),
            enc,
        }
    }

    /// Adds the next block.
    pub fn push(&mut self, b: BlockTally) {
        self.pending
            .extend_from_slice(&b.head[..b.head_len as usize]);
        if b.body.bytes == 0 && b.tail_len == 0 {
            // A block of continuation bytes only: the split character may go on.
            return;
        }
        if !self.pending.is_empty() {
            self.acc = self.acc.merge(tally(&self.pending, self.enc));
            self.pending.clear();
        }
        self.acc = self.acc.merge(b.body);
        self.pending
            .extend_from_slice(&b.tail[..b.tail_len as usize]);
    }

    /// The tally of all the blocks pushed.
    pub fn finish(self) -> Tally {
        if self.pending.is_empty() {
            self.acc
        } else {
            self.acc.merge(tally(&self.pending, self.enc))
        }
    }
}

/// Moves a cut at `at` forward to the next character boundary (past at most five
/// continuation bytes, glibc's longest form), so that both sides decode as the whole would.
pub fn utf8_boundary(data: &[u8], mut at: usize) -> usize {
    let mut moved = 0;
    while at < data.len() && moved < MAX_SEQ - 1 && (data[at] & 0xC0) == 0x80 {
        at += 1;
        moved += 1;
    }
    at
}

#[cfg(test)]
mod tests;
