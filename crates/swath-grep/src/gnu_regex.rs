//! Patterns with back-references (`\(a\)\1`, `(a)\1`), matched by glibc's own regex
//! engine, as GNU grep 3.8 matches them: `re_compile_pattern` with grep's syntax bits
//! (`RE_SYNTAX_GREP` for -G, `RE_SYNTAX_EGREP` for -E, `RE_ICASE` for -i), `re_search` for
//! the leftmost-longest match, and GNU's `EGexecute` rules for `-x` (the match found must be
//! the whole line) and `-w` (shorter matches at the same start with `re_match`, then later
//! starts, until one has no word character on either side).
//!
//! Such a pattern only judges lines that a fast filter (the pattern with each
//! back-reference read as any text) let through ([`crate::search::Matcher`]). In a
//! multibyte locale other than UTF-8 every pattern is matched here, line by line
//! ([`crate::multibyte`]), with the locale's own characters. glibc's
//! compiled patterns are not shared between threads: each thread compiles its own copy on
//! first use (compiling sets a global of glibc's, so compiles take a lock).

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void};
use std::ops::Range;
use std::sync::Mutex;

use crate::pattern::PatternError;

/// glibc's `struct re_pattern_buffer` (x86-64 and other LP64 targets).
#[repr(C)]
struct PatternBuffer {
    buffer: *mut c_void,
    allocated: c_ulong,
    used: c_ulong,
    syntax: c_ulong,
    fastmap: *mut c_char,
    translate: *mut u8,
    re_nsub: usize,
    /// The bit-fields `can_be_null:1 regs_allocated:2 fastmap_accurate:1 no_sub:1
    /// not_bol:1 not_eol:1 newline_anchor:1`, from the lowest bit.
    bits: c_uint,
}

/// glibc's `struct re_registers`.
#[repr(C)]
struct Registers {
    num_regs: c_uint,
    start: *mut c_int,
    end: *mut c_int,
}

const NOT_EOL: c_uint = 1 << 6;
const NEWLINE_ANCHOR: c_uint = 1 << 7;

unsafe extern "C" {
    static mut re_syntax_options: c_ulong;
    fn re_compile_pattern(
        pattern: *const c_char,
        length: usize,
        buffer: *mut PatternBuffer,
    ) -> *const c_char;
    fn re_search(
        buffer: *mut PatternBuffer,
        string: *const c_char,
        length: c_int,
        start: c_int,
        range: c_int,
        regs: *mut Registers,
    ) -> c_int;
    fn re_match(
        buffer: *mut PatternBuffer,
        string: *const c_char,
        length: c_int,
        start: c_int,
        regs: *mut Registers,
    ) -> c_int;
    fn regfree(buffer: *mut PatternBuffer);
    fn iswalnum(wc: u32) -> c_int;
}

/// How a line's characters are found: where a match may start again after one that
/// failed `-w`, and which characters around a match are word characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chars {
    /// Each byte is a character (a unibyte locale).
    Bytes,
    /// UTF-8.
    Utf8,
    /// The current locale's multibyte encoding, decoded from the line's start.
    Locale,
}

// glibc's regex.h syntax bits.
const RE_BK_PLUS_QM: c_ulong = 1 << 1;
const RE_CHAR_CLASSES: c_ulong = 1 << 2;
const RE_CONTEXT_INDEP_ANCHORS: c_ulong = 1 << 3;
const RE_CONTEXT_INDEP_OPS: c_ulong = 1 << 4;
const RE_CONTEXT_INVALID_OPS: c_ulong = 1 << 5;
const RE_DOT_NEWLINE: c_ulong = 1 << 6;
const RE_DOT_NOT_NULL: c_ulong = 1 << 7;
const RE_INTERVALS: c_ulong = 1 << 9;
const RE_NEWLINE_ALT: c_ulong = 1 << 11;
const RE_NO_BK_BRACES: c_ulong = 1 << 12;
const RE_NO_BK_PARENS: c_ulong = 1 << 13;
const RE_NO_BK_VBAR: c_ulong = 1 << 15;
const RE_NO_EMPTY_RANGES: c_ulong = 1 << 16;
const RE_UNMATCHED_RIGHT_PAREN_ORD: c_ulong = 1 << 17;
const RE_INVALID_INTERVAL_ORD: c_ulong = 1 << 21;
const RE_ICASE: c_ulong = 1 << 22;
const RE_CONTEXT_INVALID_DUP: c_ulong = 1 << 24;
const POSIX_COMMON: c_ulong =
    RE_CHAR_CLASSES | RE_DOT_NEWLINE | RE_DOT_NOT_NULL | RE_INTERVALS | RE_NO_EMPTY_RANGES;
/// `RE_SYNTAX_GREP`.
const SYNTAX_GREP: c_ulong =
    (POSIX_COMMON | RE_BK_PLUS_QM | RE_CONTEXT_INVALID_DUP | RE_NEWLINE_ALT)
        & !(RE_CONTEXT_INVALID_DUP | RE_DOT_NOT_NULL);
/// `RE_SYNTAX_EGREP`.
const SYNTAX_EGREP: c_ulong = (POSIX_COMMON
    | RE_CONTEXT_INDEP_ANCHORS
    | RE_CONTEXT_INDEP_OPS
    | RE_NO_BK_BRACES
    | RE_NO_BK_PARENS
    | RE_NO_BK_VBAR
    | RE_CONTEXT_INVALID_OPS
    | RE_UNMATCHED_RIGHT_PAREN_ORD
    | RE_INVALID_INTERVAL_ORD
    | RE_NEWLINE_ALT)
    & !(RE_CONTEXT_INVALID_OPS | RE_DOT_NOT_NULL);

/// Serialises compiles: `re_syntax_options` is one global of glibc's.
static COMPILE: Mutex<()> = Mutex::new(());

/// A -G or -E pattern for glibc's matcher, compiled on each thread that uses it.
#[derive(Debug)]
pub struct GnuRegex {
    pattern: Vec<u8>,
    syntax: c_ulong,
    id: u64,
    word: bool,
    line: bool,
    chars: Chars,
    /// `^` and `$` also match next to a newline inside the text (not with `grep -z`, whose
    /// records may hold newlines).
    newline_anchor: bool,
}

/// One thread's compiled copy.
struct Compiled {
    id: u64,
    buf: Box<PatternBuffer>,
    regs: Box<Registers>,
}

// SAFETY: a compiled pattern is memory glibc allocated for it, tied to no thread; it is
// moved from the thread that compiled it (one with a deep enough stack) to the one that
// matches with it, and only ever used by one thread at a time.
unsafe impl Send for Compiled {}

impl Drop for Compiled {
    fn drop(&mut self) {
        // SAFETY: the buffer was filled by re_compile_pattern (regfree frees what it
        // allocated, the fastmap included); the registers' arrays were malloc'ed by glibc.
        unsafe {
            regfree(&mut *self.buf);
            libc::free(self.regs.start.cast());
            libc::free(self.regs.end.cast());
        }
    }
}

thread_local! {
    static COMPILED: RefCell<Vec<Compiled>> = const { RefCell::new(Vec::new()) };
}

impl GnuRegex {
    /// Checks that glibc compiles `pattern` (a -G pattern when `!ere`) and keeps it for
    /// matching with `-i` (`icase`), `-w` and `-x`; glibc's message if it does not compile.
    pub fn new(
        pattern: &[u8],
        ere: bool,
        icase: bool,
        word: bool,
        line: bool,
        utf8: bool,
    ) -> Result<GnuRegex, PatternError> {
        let chars = if utf8 { Chars::Utf8 } else { Chars::Bytes };
        Self::build(pattern, ere, icase, word, line, chars, true)
    }

    /// [`GnuRegex::new`] for the current locale's multibyte encoding (not UTF-8), for lines
    /// that end with `eol` (as GNU, `^` and `$` match beside a newline only when newlines
    /// end lines).
    pub fn in_locale(
        pattern: &[u8],
        ere: bool,
        icase: bool,
        word: bool,
        line: bool,
        eol: u8,
    ) -> Result<GnuRegex, PatternError> {
        Self::build(pattern, ere, icase, word, line, Chars::Locale, eol == b'\n')
    }

    fn build(
        pattern: &[u8],
        ere: bool,
        icase: bool,
        word: bool,
        line: bool,
        chars: Chars,
        newline_anchor: bool,
    ) -> Result<GnuRegex, PatternError> {
        static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let syntax =
            if ere { SYNTAX_EGREP } else { SYNTAX_GREP } | if icase { RE_ICASE } else { 0 };
        let r = GnuRegex {
            pattern: pattern.to_vec(),
            syntax,
            id: IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            word,
            line,
            chars,
            newline_anchor,
        };
        let checked = crate::stack::with_stack_for(crate::stack::group_opens(pattern), || {
            r.compile().map(drop)
        });
        checked.map(|()| r)
    }

    fn compile(&self) -> Result<Compiled, PatternError> {
        let mut buf = Box::new(PatternBuffer {
            buffer: std::ptr::null_mut(),
            allocated: 0,
            used: 0,
            syntax: 0,
            fastmap: std::ptr::null_mut(),
            translate: std::ptr::null_mut(),
            re_nsub: 0,
            bits: 0,
        });
        if self.syntax & RE_ICASE == 0 {
            // SAFETY: malloc of the 256-byte fastmap glibc fills (and regfree frees).
            buf.fastmap = unsafe { libc::malloc(256) }.cast();
        }
        // With RE_ICASE glibc builds the fastmap from the pattern's upper case and its
        // lower case only: in el_GR.ISO-8859-7 a `\(σ\)\1` would never be tried at a `ς`
        // (whose upper case is Σ too). GNU grep gives glibc no fastmap for -i; nor does swath.
        let _guard = COMPILE.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the global is only written under COMPILE; the pattern pointer and length
        // describe `self.pattern` (never a dangling pointer: see `c_ptr`); the buffer is
        // zeroed as glibc requires.
        let err = unsafe {
            re_syntax_options = self.syntax;
            re_compile_pattern(
                crate::ffi::c_ptr(&self.pattern).cast(),
                self.pattern.len(),
                &mut *buf,
            )
        };
        let regs = Box::new(Registers {
            num_regs: 0,
            start: std::ptr::null_mut(),
            end: std::ptr::null_mut(),
        });
        let mut compiled = Compiled {
            id: self.id,
            buf,
            regs,
        };
        if !err.is_null() {
            // SAFETY: glibc returns a static NUL-terminated message.
            let msg = unsafe { std::ffi::CStr::from_ptr(err) };
            return Err(PatternError {
                message: msg.to_string_lossy().into_owned(),
            });
        }
        if !self.newline_anchor {
            compiled.buf.bits &= !NEWLINE_ANCHOR;
        }
        Ok(compiled)
    }

    /// Runs `f` with this thread's compiled copy.
    fn with<T>(&self, f: impl FnOnce(&mut Compiled) -> T) -> Option<T> {
        COMPILED.with(|c| {
            let mut c = c.borrow_mut();
            let k = match c.iter().position(|x| x.id == self.id) {
                Some(k) => k,
                None => {
                    if c.len() == 8 {
                        c.remove(0);
                    }
                    // glibc's reader recurses about 700 bytes a group: a deep pattern is
                    // compiled where that fits (a matching thread has 2 MiB).
                    let groups = crate::stack::group_opens(&self.pattern);
                    c.push(crate::stack::with_stack_for(groups, || self.compile()).ok()?);
                    c.len() - 1
                }
            };
            Some(f(&mut c[k]))
        })
    }

    /// The match GNU grep takes in `line` (one line, without its end) from `from` on:
    /// leftmost-longest, the whole line with -x, bounded by non-word characters with -w.
    pub fn find(&self, line: &[u8], from: usize) -> Option<Range<usize>> {
        let len = c_int::try_from(line.len()).ok()?;
        let from = c_int::try_from(from).ok()?;
        self.with(|c| {
            let s = crate::ffi::c_ptr(line).cast::<c_char>();
            c.buf.bits &= !NOT_EOL;
            // SAFETY: the string pointer and length describe `line`; the buffer and
            // registers are this thread's.
            let mut start =
                unsafe { re_search(&mut *c.buf, s, len, from, len - from, &mut *c.regs) };
            if start < 0 {
                return None;
            }
            // SAFETY: after a match the registers hold at least the whole match.
            let mut mlen = unsafe { *c.regs.end } - start;
            if self.line {
                return (start == 0 && mlen == len).then_some(0..line.len());
            }
            if !self.word {
                return Some(start as usize..(start + mlen) as usize);
            }
            loop {
                let (b, e) = (start as usize, (start + mlen) as usize);
                if !self.word_char_before(line, b) && !self.word_char_at(line, e) {
                    return Some(b..e);
                }
                let mut shorter = 0;
                if mlen > 0 {
                    // A shorter match at the same start, not taking the cut as the end.
                    mlen -= 1;
                    c.buf.bits |= NOT_EOL;
                    // SAFETY: as above, with a length within `line`.
                    shorter =
                        unsafe { re_match(&mut *c.buf, s, start + mlen, start, &mut *c.regs) };
                    c.buf.bits &= !NOT_EOL;
                }
                if shorter > 0 {
                    mlen = shorter;
                    continue;
                }
                if start >= len {
                    return None;
                }
                // Further on, from the next character.
                let mut next = start as usize + 1;
                match self.chars {
                    Chars::Bytes => {}
                    Chars::Utf8 => {
                        while next < line.len() && line[next] & 0xC0 == 0x80 {
                            next += 1;
                        }
                    }
                    Chars::Locale => {
                        next = start as usize + crate::locale::char_len(&line[start as usize..])
                    }
                }
                let next = next as c_int;
                // SAFETY: as above.
                start = unsafe { re_search(&mut *c.buf, s, len, next, len - next, &mut *c.regs) };
                if start < 0 {
                    return None;
                }
                // SAFETY: as above.
                mlen = unsafe { *c.regs.end } - start;
            }
        })
        .flatten()
    }

    /// True when `line` is selected by this pattern.
    pub fn is_match(&self, line: &[u8]) -> bool {
        self.find(line, 0).is_some()
    }

    fn word_char_before(&self, line: &[u8], at: usize) -> bool {
        if at == 0 {
            return false;
        }
        match self.chars {
            Chars::Bytes => return is_word_byte(line[at - 1]),
            Chars::Locale => return crate::locale::word_char_before(line, at),
            Chars::Utf8 => {}
        }
        // The character that ends at `at`.
        let mut k = at - 1;
        while k > 0 && at - k < 4 && line[k] & 0xC0 == 0x80 {
            k -= 1;
        }
        word_char(&line[k..at])
    }

    fn word_char_at(&self, line: &[u8], at: usize) -> bool {
        if at >= line.len() {
            return false;
        }
        match self.chars {
            Chars::Bytes => return is_word_byte(line[at]),
            Chars::Locale => return crate::locale::word_char_at(line, at),
            Chars::Utf8 => {}
        }
        let n = (1..=4.min(line.len() - at))
            .find(|&n| std::str::from_utf8(&line[at..at + n]).is_ok())
            .unwrap_or(1);
        word_char(&line[at..at + n])
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A UTF-8 character that glibc's `iswalnum` accepts, or `_`.
fn word_char(ch: &[u8]) -> bool {
    match std::str::from_utf8(ch).ok().and_then(|s| s.chars().next()) {
        Some('_') => true,
        // SAFETY: iswalnum reads the locale's tables; any wint_t is a valid argument.
        Some(c) => unsafe { iswalnum(c as u32) != 0 },
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(p: &str, ere: bool, word: bool, line: &str) -> Option<Range<usize>> {
        GnuRegex::new(p.as_bytes(), ere, false, word, false, false)
            .unwrap()
            .find(line.as_bytes(), 0)
    }

    #[test]
    fn back_references_match_as_glibc_matches_them() {
        assert_eq!(find(r"\(a\)\1", false, false, "xaay"), Some(1..3));
        assert_eq!(find(r"(ab|b)\1", true, false, "abab"), Some(0..4));
        assert_eq!(find(r"\(.\)\1", false, false, "abc"), None);
        // -w: a shorter match at the same start, then later starts.
        assert_eq!(find(r"\(a*\)\1", false, true, "aaaa aa"), Some(0..4));
        assert_eq!(find(r"\(b\)\1", false, true, "abb bb"), Some(4..6));
    }

    #[test]
    fn empty_patterns_and_lines() {
        assert_eq!(find("", false, false, ""), Some(0..0));
        assert_eq!(find(r"\(a*\)\1", false, false, ""), Some(0..0));
        assert_eq!(find(r"\(a\)\1", false, false, ""), None);
    }

    #[test]
    fn deep_patterns_compile_on_threads_with_small_stacks() {
        // 10,000 groups: glibc's reader needs about 7 MiB of stack for them, a matching
        // thread has 2 MiB.
        let p = format!("{}a{}\\1", "(".repeat(10_000), ")".repeat(10_000));
        let r = std::sync::Arc::new(GnuRegex::new(
            p.as_bytes(),
            true,
            false,
            false,
            false,
            false,
        ));
        let found = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || r.as_ref().as_ref().unwrap().find(b"xaay", 0))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(found, Some(1..3));
    }

    #[test]
    fn compile_errors_are_glibc_messages() {
        let e = GnuRegex::new(br"\(a\)\2", false, false, false, false, false).unwrap_err();
        assert_eq!(e.message, "Invalid back reference");
    }
}
