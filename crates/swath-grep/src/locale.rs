//! The current locale's characters, as GNU grep 3.8 decodes them (`mbrtowc`): the length
//! of the character at a byte, whether a line is valid text, and GNU's word characters
//! before and after a position. Everything here reads the process's `LC_CTYPE`, set by the
//! caller before any pattern is compiled; what each byte is on its own is read once per
//! process ([`byte_table`]).

use std::sync::OnceLock;

unsafe extern "C" {
    /// glibc's `mbrtowc`.
    pub(crate) fn mbrtowc(
        wc: *mut libc::wchar_t,
        s: *const std::ffi::c_char,
        n: usize,
        state: *mut libc::mbstate_t,
    ) -> usize;
    fn iswalnum(wc: u32) -> libc::c_int;
}

/// The first character of `s` decoded: `Ok((length, wide character))`, or `Err(())` for an
/// encoding error or a character cut short by the end of `s` (GNU takes either as one
/// byte). A NUL byte is a character of length 1.
pub(crate) fn decode(s: &[u8]) -> Result<(usize, libc::wchar_t), ()> {
    let mut wc: libc::wchar_t = 0;
    // SAFETY: an all-zero mbstate_t is the initial conversion state; the pointer and length
    // describe `s`, and mbrtowc reads at most that many bytes.
    let n = unsafe {
        let mut state: libc::mbstate_t = std::mem::zeroed();
        mbrtowc(&mut wc, s.as_ptr().cast(), s.len(), &mut state)
    };
    match n {
        0 => Ok((1, 0)),
        n if n <= s.len() => Ok((n, wc)),
        _ => Err(()),
    }
}

/// What the locale makes of each byte on its own (GNU's `localeinfo`): `1` a character,
/// `-1` an encoding error, `-2` the start of a longer character; and whether it is a word
/// character by itself (GNU's `sbwordchar`).
pub(crate) struct ByteTable {
    pub(crate) len: [i8; 256],
    pub(crate) word: [bool; 256],
}

pub(crate) fn byte_table() -> &'static ByteTable {
    static TABLE: OnceLock<ByteTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = ByteTable {
            len: [1; 256],
            word: [false; 256],
        };
        for b in 0..=255u8 {
            let mut wc: libc::wchar_t = 0;
            // SAFETY: as in `decode`, over the one byte `b`.
            let n = unsafe {
                let mut state: libc::mbstate_t = std::mem::zeroed();
                mbrtowc(&mut wc, [b].as_ptr().cast(), 1, &mut state)
            };
            t.len[b as usize] = match n {
                0 | 1 => 1,
                n if n == usize::MAX - 1 => -2,
                _ => -1,
            };
            t.word[b as usize] = t.len[b as usize] == 1 && word_wide(wc);
        }
        t
    })
}

/// GNU's `wordchar`: `_` or what `iswalnum` accepts in the locale.
pub(crate) fn word_wide(wc: libc::wchar_t) -> bool {
    // SAFETY: iswalnum reads the locale's tables; any wint_t is a valid argument.
    wc == '_' as libc::wchar_t || unsafe { iswalnum(wc as u32) != 0 }
}

/// Bytes of the character at the start of `s`: 1 for an encoding error, a character cut
/// short, or the end of `s`.
pub(crate) fn char_len(s: &[u8]) -> usize {
    match s.first() {
        None => 1,
        Some(&b) if byte_table().len[b as usize] != -2 => 1,
        Some(_) => decode(s).map_or(1, |(n, _)| n),
    }
}

/// The characters of `s`, in order (an encoding error, or a character cut short, is one
/// byte).
pub(crate) fn chars(s: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    std::iter::from_fn(move || {
        (at < s.len()).then(|| {
            let n = char_len(&s[at..]);
            at += n;
            &s[at - n..at]
        })
    })
}

/// GNU's `buf_has_encoding_errors`: whether `line`, decoded from its start, holds a byte
/// sequence that is not a character of the locale (or one cut short by the line's end).
pub(crate) fn has_encoding_error(line: &[u8]) -> bool {
    let t = byte_table();
    let mut at = 0;
    while at < line.len() {
        match t.len[line[at] as usize] {
            1 => at += 1,
            -1 => return true,
            _ => match decode(&line[at..]) {
                Ok((n, _)) => at += n,
                Err(()) => return true,
            },
        }
    }
    false
}

/// The start of the character that holds the byte at `at` (< `line.len()`), decoding from
/// the line's start (GNU's `mb_goback`; an encoding error is a character of one byte).
pub(crate) fn char_start(line: &[u8], at: usize) -> usize {
    let mut p = 0;
    loop {
        let n = char_len(&line[p..]);
        if p + n > at {
            return p;
        }
        p += n;
    }
}

/// GNU's `wordchar_next`: whether the character that starts at `at` (decoded from there,
/// wherever that is) is a word character.
pub(crate) fn word_char_at(line: &[u8], at: usize) -> bool {
    let Some(&b) = line.get(at) else {
        return false;
    };
    let t = byte_table();
    if t.word[b as usize] {
        return true;
    }
    if t.len[b as usize] != -2 {
        return false;
    }
    decode(&line[at..]).is_ok_and(|(_, wc)| word_wide(wc))
}

/// GNU's `wordchar_prev`: whether the character that holds the byte before `at` is a word
/// character.
pub(crate) fn word_char_before(line: &[u8], at: usize) -> bool {
    if at == 0 {
        return false;
    }
    word_char_at(line, char_start(line, at - 1))
}
