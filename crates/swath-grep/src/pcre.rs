//! `grep -P`: PCRE2, compiled and run the way GNU grep 3.8 runs it (its `pcresearch.c` with
//! the PCRE2 10.42 of Debian 12, linked from the system when its development files are
//! installed).
//!
//! The pattern is compiled with `PCRE2_DOLLAR_ENDONLY`, `PCRE2_CASELESS` for `-i` and
//! `PCRE2_UTF` in a UTF-8 locale (no `PCRE2_UCP`: `\w` and `\d` stay ASCII, as with 10.42),
//! wrapped as `^(?:…)$` for `-x` and `(?<!\w)(?:…)(?!\w)` for `-w`, and JIT-compiled. Lines
//! are searched one at a time (GNU gave up multi-line searches for their puzzles). Invalid
//! UTF-8 is a barrier, not an error (`PCRE2_MATCH_INVALID_UTF`: nothing matches an invalid
//! sequence, and `\z` does not match before one); bytes that cannot start a character are
//! skipped before a search, which then does not start at a line start. Without that option
//! (a PCRE2 that lacks it) the valid text before an invalid sequence is searched on its own,
//! as GNU does then.
//!
//! A match that PCRE2 gives up on (its backtracking, depth or heap limits) is an error with
//! GNU's words ([`match_error_message`]); the JIT stack grows as GNU grows it.

use std::cell::RefCell;
use std::ops::Range;
use std::ptr;

use pcre2_sys::*;

use crate::pattern::PatternError;

/// A compiled `-P` pattern, shared by every thread (each has its own match data).
#[derive(Debug)]
pub struct Pcre {
    code: *mut pcre2_code_8,
    id: u64,
    utf: bool,
    /// Whether the empty string matches, with `PCRE2_NOTBOL` (index 0) and without (1).
    empty_match: [bool; 2],
}

// SAFETY: a compiled (and JIT-compiled) pcre2_code is read-only during matching; PCRE2
// documents it as shareable between threads. Each thread matches with match data, a match
// context and a JIT stack of its own.
unsafe impl Send for Pcre {}
// SAFETY: as above: `&Pcre` only reads the compiled code.
unsafe impl Sync for Pcre {}

impl Drop for Pcre {
    fn drop(&mut self) {
        // SAFETY: `code` came from pcre2_compile_8 and is freed once, here.
        unsafe { pcre2_code_free_8(self.code) };
    }
}

/// One thread's matching state for one pattern.
struct State {
    id: u64,
    data: *mut pcre2_match_data_8,
    context: *mut pcre2_match_context_8,
    jit_stack: *mut pcre2_jit_stack_8,
    jit_stack_size: usize,
}

impl Drop for State {
    fn drop(&mut self) {
        // SAFETY: each pointer is null or was created by PCRE2 for this state alone.
        unsafe {
            pcre2_match_data_free_8(self.data);
            if !self.context.is_null() {
                pcre2_match_context_free_8(self.context);
            }
            if !self.jit_stack.is_null() {
                pcre2_jit_stack_free_8(self.jit_stack);
            }
        }
    }
}

thread_local! {
    /// Match states of the last few patterns this thread used.
    static STATES: RefCell<Vec<State>> = const { RefCell::new(Vec::new()) };
}

const CASELESS: u32 = 0x0000_0008;
const UTF: u32 = 0x0008_0000;
const MATCH_INVALID_UTF: u32 = 0x0400_0000;

impl Pcre {
    /// Compiles `pattern` as GNU grep 3.8 compiles a `-P` pattern; the error is PCRE2's own
    /// message (what GNU prints after `grep: `).
    pub fn new(
        pattern: &[u8],
        caseless: bool,
        utf: bool,
        word: bool,
        line: bool,
    ) -> Result<Pcre, PatternError> {
        let wrapped = if line {
            [&b"^(?:"[..], pattern, b")$"].concat()
        } else if word {
            [&br"(?<!\w)(?:"[..], pattern, br")(?!\w)"].concat()
        } else {
            pattern.to_vec()
        };
        let flags = PCRE2_DOLLAR_ENDONLY
            | if caseless { CASELESS } else { 0 }
            | if utf { UTF | MATCH_INVALID_UTF } else { 0 };
        let (mut code_err, mut offset) = (0i32, 0usize);
        // SAFETY: the pattern pointer and length describe `wrapped`, alive for the call (or,
        // for an empty pattern, point into a static buffer); the error outputs are ours.
        let code = unsafe {
            pcre2_compile_8(
                crate::ffi::c_ptr(&wrapped),
                wrapped.len(),
                flags,
                &mut code_err,
                &mut offset,
                ptr::null_mut(),
            )
        };
        if code.is_null() {
            return Err(PatternError {
                message: error_message(code_err),
            });
        }
        // SAFETY: `code` is a valid compiled pattern; a JIT failure only means no JIT.
        unsafe { pcre2_jit_compile_8(code, PCRE2_JIT_COMPLETE) };
        static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut p = Pcre {
            code,
            id: IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            utf,
            empty_match: [false; 2],
        };
        for bol in [false, true] {
            let e = p.exec(b"", 0, if bol { 0 } else { PCRE2_NOTBOL }, |_| ());
            p.empty_match[usize::from(bol)] = e > 0;
        }
        Ok(p)
    }

    /// Runs the pattern over `subject` from `start` with `options`, handing the match's
    /// range to `found` (or PCRE2's start character after a UTF-8 error, as `start..start`);
    /// returns PCRE2's code. The JIT stack doubles (and the depth limit with the
    /// interpreter) when PCRE2 asks for more, as GNU's `jit_exec` does.
    fn exec(
        &self,
        subject: &[u8],
        start: usize,
        options: u32,
        mut found: impl FnMut(Range<usize>),
    ) -> i32 {
        STATES.with(|states| {
            let mut states = states.borrow_mut();
            let k = match states.iter().position(|s| s.id == self.id) {
                Some(k) => k,
                None => {
                    if states.len() == 4 {
                        states.remove(0);
                    }
                    // SAFETY: `code` is valid; the match data is owned by the new state.
                    let data = unsafe {
                        pcre2_match_data_create_from_pattern_8(self.code, ptr::null_mut())
                    };
                    states.push(State {
                        id: self.id,
                        data,
                        context: ptr::null_mut(),
                        jit_stack: ptr::null_mut(),
                        jit_stack_size: 32 << 10,
                    });
                    states.len() - 1
                }
            };
            let st = &mut states[k];
            let mut deeper = false;
            loop {
                // SAFETY: subject pointer and length describe `subject` (an empty one: a
                // pointer into a static buffer, never a dangling one); the match data and
                // context belong to this thread's state for this pattern.
                let e = unsafe {
                    pcre2_match_8(
                        self.code,
                        crate::ffi::c_ptr(subject),
                        subject.len(),
                        start,
                        options,
                        st.data,
                        st.context,
                    )
                };
                if e == PCRE2_ERROR_JIT_STACKLIMIT && st.jit_stack_size <= isize::MAX as usize / 4 {
                    let old = st.jit_stack_size;
                    st.jit_stack_size = old * 2;
                    // SAFETY: the old stack (if any) is ours and no longer assigned after
                    // the new one replaces it; the context is created once and kept.
                    unsafe {
                        if !st.jit_stack.is_null() {
                            pcre2_jit_stack_free_8(st.jit_stack);
                        }
                        st.jit_stack =
                            pcre2_jit_stack_create_8(old, st.jit_stack_size, ptr::null_mut());
                        if st.jit_stack.is_null() {
                            return PCRE2_ERROR_NOMEMORY;
                        }
                        if st.context.is_null() {
                            st.context = pcre2_match_context_create_8(ptr::null_mut());
                        }
                        pcre2_jit_stack_assign_8(st.context, None, st.jit_stack.cast());
                    }
                    continue;
                }
                if e == PCRE2_ERROR_DEPTHLIMIT && !deeper {
                    // GNU retries once with twice the default depth limit.
                    deeper = true;
                    let mut lim: u32 = 0;
                    // SAFETY: PCRE2_CONFIG_DEPTHLIMIT writes one u32 into `lim`.
                    unsafe {
                        pcre2_config_8(PCRE2_CONFIG_DEPTHLIMIT, (&mut lim as *mut u32).cast())
                    };
                    let Some(twice) = lim.checked_mul(2) else {
                        return e;
                    };
                    // SAFETY: the context is this state's (created here once).
                    unsafe {
                        if st.context.is_null() {
                            st.context = pcre2_match_context_create_8(ptr::null_mut());
                        }
                        pcre2_set_depth_limit_8(st.context, twice);
                    }
                    continue;
                }
                if e > 0 {
                    found(ovector(st.data));
                } else if (PCRE2_ERROR_UTF8_ERR21..=PCRE2_ERROR_UTF8_ERR1).contains(&e) {
                    // SAFETY: the match data holds the failed match's start character.
                    let at = unsafe { pcre2_get_startchar_8(st.data) };
                    found(at..at);
                }
                return e;
            }
        })
    }

    /// The first match in `line` (one line, without its end) starting at or after `from`,
    /// as GNU's `Pexecute` finds it; `Err` with PCRE2's code when it gives up.
    pub fn find(&self, line: &[u8], from: usize) -> Result<Option<Range<usize>>, i32> {
        let end = line.len();
        let mut p = from;
        let mut subject = 0usize;
        let mut bol = from == 0;
        loop {
            while self.utf && p < end && cannot_start_char(line[p]) {
                p += 1;
                subject = p;
                bol = false;
            }
            let offset = p - subject;
            if p == end {
                return Ok(self.empty_match[usize::from(bol)].then_some(p..p));
            }
            let options = if bol { 0 } else { PCRE2_NOTBOL };
            let mut m = 0..0;
            let e = self.exec(&line[subject..], offset, options, |r| m = r);
            if e > 0 {
                return Ok(Some(subject + m.start..subject + m.end));
            }
            if e == PCRE2_ERROR_NOMATCH {
                return Ok(None);
            }
            if !(PCRE2_ERROR_UTF8_ERR21..=PCRE2_ERROR_UTF8_ERR1).contains(&e) {
                return Err(e);
            }
            // An invalid sequence at `valid`: search the text before it alone.
            let valid = m.start;
            if offset <= valid {
                let e = if valid == 0 {
                    if self.empty_match[usize::from(bol)] {
                        return Ok(Some(subject..subject));
                    }
                    PCRE2_ERROR_NOMATCH
                } else {
                    let mut m = 0..0;
                    let e = self.exec(
                        &line[subject..subject + valid],
                        offset,
                        options | PCRE2_NO_UTF_CHECK | PCRE2_NOTEOL,
                        |r| m = r,
                    );
                    if e > 0 {
                        return Ok(Some(subject + m.start..subject + m.end));
                    }
                    e
                };
                if e != PCRE2_ERROR_NOMATCH {
                    return Err(e);
                }
                p = subject + valid + 1;
                bol = false;
            }
            subject += valid + 1;
            if subject > end {
                return Ok(None);
            }
            p = p.max(subject);
        }
    }
}

/// The match's range from the match data's first pair.
fn ovector(data: *mut pcre2_match_data_8) -> Range<usize> {
    // SAFETY: the match data holds at least one pair after a successful match.
    unsafe {
        let v = pcre2_get_ovector_pointer_8(data);
        *v..*v.add(1)
    }
}

/// A byte glibc's UTF-8 decoder never accepts as the start of a character (GNU's
/// `sbclen[b] == -1`): continuation bytes, 0xC0, 0xC1, 0xFE and 0xFF.
fn cannot_start_char(b: u8) -> bool {
    matches!(b, 0x80..=0xC1 | 0xFE | 0xFF)
}

/// PCRE2's message for a compile error code.
fn error_message(code: i32) -> String {
    let mut buf = [0u8; 256];
    // SAFETY: PCRE2 writes at most `buf.len()` bytes, NUL-terminated, into `buf`.
    let n = unsafe { pcre2_get_error_message_8(code, buf.as_mut_ptr(), buf.len()) };
    let n = if n < 0 { 0 } else { n as usize };
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// GNU grep's words for a match that PCRE2 gave up on (printed as `grep: FILE: TEXT`).
pub fn match_error_message(code: i32) -> String {
    match code {
        PCRE2_ERROR_NOMEMORY => "memory exhausted".into(),
        PCRE2_ERROR_JIT_STACKLIMIT => "exhausted PCRE JIT stack".into(),
        PCRE2_ERROR_MATCHLIMIT => "exceeded PCRE's backtracking limit".into(),
        PCRE2_ERROR_DEPTHLIMIT => "exceeded PCRE's nested backtracking limit".into(),
        PCRE2_ERROR_RECURSELOOP => "PCRE detected recurse loop".into(),
        PCRE2_ERROR_HEAPLIMIT => "exceeded PCRE's heap limit".into(),
        other => format!("internal PCRE error: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(p: &str, line: &[u8], utf: bool) -> Option<Range<usize>> {
        Pcre::new(p.as_bytes(), false, utf, false, false)
            .unwrap()
            .find(line, 0)
            .unwrap()
    }

    #[test]
    fn perl_features_work() {
        assert_eq!(find(r"foo(?=bar)", b"xfoobar", false), Some(1..4));
        assert_eq!(find(r"(?<=x)foo", b"foo xfoo", false), Some(5..8));
        assert_eq!(find(r"a\Kb", b"ab", false), Some(1..2));
        assert_eq!(find(r"a++a", b"aaaa", false), None);
        assert_eq!(find(r"(\w)\1", b"abccd", false), Some(2..4));
    }

    #[test]
    fn look_behind_at_the_start_of_an_empty_subject() {
        // Compiling probes the empty string: once with a dangling pointer, which PCRE2's JIT
        // stepped back from and crashed on.
        for utf in [false, true] {
            assert_eq!(find(r"(?<=aa)b*", b"", utf), None);
            assert_eq!(find(r"(?<=aa)b*", b"aab", utf), Some(2..3));
            assert_eq!(find(r"(?<!a)", b"", utf), Some(0..0));
            assert_eq!(find("", b"", utf), Some(0..0));
        }
    }

    #[test]
    fn invalid_utf8_is_a_barrier() {
        // "é" then an invalid byte then "a": the match is found after the barrier, and the
        // text before it is searched without being taken as the line's end.
        assert_eq!(find("a", b"\xc3\xa9\xffa", true), Some(3..4));
        assert_eq!(find("é$", b"\xc3\xa9\xffa", true), None);
        assert_eq!(find("^a", b"\xffa", true), None);
        assert_eq!(find(".", b"\xff\xfe", true), None);
    }

    #[test]
    fn errors_are_pcre2_messages() {
        assert_eq!(
            Pcre::new(b")", false, false, false, false)
                .unwrap_err()
                .message,
            "unmatched closing parenthesis"
        );
        let p = Pcre::new(b"(a+)+$", false, false, false, false).unwrap();
        let line = [&[b'a'; 40][..], b"X"].concat();
        assert_eq!(
            p.find(&line, 0).map_err(match_error_message),
            Err("exceeded PCRE's backtracking limit".to_string())
        );
    }
}
