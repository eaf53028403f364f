//! grep in a multibyte locale other than UTF-8 (EUC-JP, Shift_JIS, GB2312, GB18030,
//! Big5-HKSCS...), where a character takes one to four bytes and its later bytes may look
//! like ASCII (`\`, `A`, `7`) or like the start of another character: a match found in the
//! bytes alone could start inside a character. Character boundaries there are only known by
//! decoding from the start of the line, as GNU grep 3.8 finds them (`mb_goback`, `mbrlen`).
//!
//! [`LocaleMatcher`] judges each line as GNU does there:
//!
//! - Patterns go to glibc's regex engine compiled in the current locale
//!   ([`crate::gnu_regex`]), which reads patterns and text by characters and never starts a
//!   match inside one: `-G` and `-E` patterns as they are, `-F` patterns as escaped basic
//!   expressions (escaped by characters, as GNU's `fgrep_to_grep_pattern` does, since a
//!   character's second byte may be `\`), `-i` with glibc's `RE_ICASE`, `-w` and `-x` judged
//!   as GNU's `EGexecute` judges them, with word characters decoded by `mbrtowc`. Patterns
//!   without back-references are joined into one expression (a newline between them is an
//!   alternation to glibc), those with one are compiled alone, as GNU compiles them.
//! - Where GNU's own DFA would select the lines and reads a pattern otherwise than glibc
//!   (ERE `{1}a`, `^*a`: docs/gnu/grep-3.8-patterns.md), the DFA's reading, written out by
//!   [`crate::pattern::dfa_readings_for_glibc`], selects the lines and glibc's reading
//!   gives the matches printed, as in GNU.
//! - Strings without `-i` (`-F`, or `-G`/`-E` patterns without a special character) are
//!   found without glibc: by their bytes (Aho-Corasick), kept where they start on a
//!   character boundary (GNU's `Fexecute`). For the other patterns, strings that every
//!   matching line holds (read from the pattern's syntax tree) pick the lines glibc judges.
//! - A line (or a match, with `-o`) about to be printed that is not valid text in the
//!   locale makes the file binary (GNU's `buf_has_encoding_errors`).
//!
//! GNU's errors come from glibc's compiler, run on each pattern; its warnings and the few
//! errors of its own DFA (`character class syntax is [[:space:]], not [:space:]`) come from
//! [`crate::pattern`]'s reader, given the pattern with each multibyte character replaced by
//! an ASCII letter (every character other than ASCII is an ordinary character to both
//! readers).
//!
//! Everything here reads the process's current locale (`LC_CTYPE`), which the caller sets
//! before any pattern is compiled; what each byte is on its own is read once per process.

use std::collections::HashSet;
use std::ffi::c_char;
use std::ops::Range;

use aho_corasick::{AhoCorasick, Anchored, Input, MatchKind, StartKind};

use crate::gnu_regex::GnuRegex;
use crate::locale::{
    byte_table, char_len, chars, decode, has_encoding_error, mbrtowc, word_char_at,
};
use crate::options::{leftmost_longest, parse_hir, MatchOptions};
use crate::pattern::{translate_filter, translate_with_warnings, PatternError, Syntax};

unsafe extern "C" {
    fn wcrtomb(s: *mut c_char, wc: libc::wchar_t, state: *mut libc::mbstate_t) -> usize;
    /// glibc's `MB_CUR_MAX`.
    fn __ctype_get_mb_cur_max() -> usize;
}

/// True when the current locale's characters may take several bytes in an encoding other
/// than UTF-8 (`MB_CUR_MAX > 1`, `CODESET` not `UTF-8`): grep must then search through
/// [`LocaleMatcher`]. Call after the locale is set (`setlocale(LC_ALL, "")`).
pub fn other_multibyte_locale() -> bool {
    // SAFETY: reads the current locale's maximum character length; no preconditions.
    let max = unsafe { __ctype_get_mb_cur_max() };
    // SAFETY: nl_langinfo returns a NUL-terminated string owned by the C library, read at
    // once and not kept.
    let utf8 = unsafe {
        let cs = libc::nl_langinfo(libc::CODESET);
        !cs.is_null() && std::ffi::CStr::from_ptr(cs).to_bytes() == b"UTF-8"
    };
    max > 1 && !utf8
}

/// True when the current locale has one byte per character (`MB_CUR_MAX == 1`) and takes
/// some byte above ASCII for a letter or digit (`iswalnum`: `é` in ISO-8859-1, `Σ` in
/// ISO-8859-7): there GNU's word anchors and `-w` see those letters as word characters, as
/// the regex crate's byte-mode `\b` cannot, so grep judges such patterns through
/// [`LocaleMatcher`] ([`needs_locale_words`]). Call after the locale is set.
pub fn unibyte_locale_with_words() -> bool {
    // SAFETY: reads the current locale's maximum character length; no preconditions.
    let max = unsafe { __ctype_get_mb_cur_max() };
    max == 1 && byte_table().word[0x80..].iter().any(|&w| w)
}

/// Whether grep must judge `patterns` with the locale's word characters (see
/// [`unibyte_locale_with_words`]): with `-w`, or a `-G`/`-E` pattern with a word anchor
/// (`\<`, `\>`, `\b`, `\B`; an escaped backslash before the letter is taken for one too,
/// which only sends the pattern the slower way).
pub fn needs_locale_words(patterns: &[Vec<u8>], opts: &MatchOptions) -> bool {
    let anchors = |p: &[u8]| {
        p.windows(2)
            .any(|w| w[0] == b'\\' && matches!(w[1], b'<' | b'>' | b'b' | b'B'))
    };
    !opts.utf8
        && !opts.multibyte
        && opts.syntax != Syntax::Perl
        && (opts.word || (opts.syntax != Syntax::Fixed && patterns.iter().any(|p| anchors(p))))
        && unibyte_locale_with_words()
}

/// GNU's `fgrep_to_grep_pattern`: a `-F` pattern as a basic expression, each single-byte
/// character among `$*.[\^` escaped; multibyte characters (whose later bytes may be any of
/// them) are copied as they are, as are the bytes of a character cut short at the end.
fn fixed_to_basic(pattern: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pattern.len() * 2);
    let mut at = 0;
    while at < pattern.len() {
        let rest = &pattern[at..];
        let n = match byte_table().len[rest[0] as usize] {
            -2 => match decode(rest) {
                Ok((n, _)) => n,
                // A character cut short by the end: the rest as it is.
                Err(()) if rest.len() < MAX_CHAR && cut_short(rest) => rest.len(),
                Err(()) => 1,
            },
            _ => 1,
        };
        if n == 1 && b"$*.[\\^".contains(&rest[0]) {
            out.push(b'\\');
        }
        out.extend_from_slice(&rest[..n]);
        at += n;
    }
    out
}

/// The longest character of the encodings served (GB18030).
const MAX_CHAR: usize = 4;

/// Whether `s` is the start of a character that does not end within it (mbrtowc's -2).
fn cut_short(s: &[u8]) -> bool {
    // SAFETY: as in `decode`.
    let n = unsafe {
        let mut state: libc::mbstate_t = std::mem::zeroed();
        mbrtowc(std::ptr::null_mut(), s.as_ptr().cast(), s.len(), &mut state)
    };
    n == usize::MAX - 1
}

/// Whether a pattern may hold a back-reference (`\1`..`\9`). In these encodings a `\` may
/// be the last byte of a character, so `\\1` counts too (GNU's
/// `possible_backrefs_in_pattern` for an encoding that is not backslash-safe): such a
/// pattern is only compiled alone, which changes nothing else.
fn may_have_backref(pattern: &[u8]) -> bool {
    pattern
        .windows(2)
        .any(|w| w[0] == b'\\' && (b'1'..=b'9').contains(&w[1]))
}

/// `pattern` with each multibyte character replaced by the byte `name` gives it (told the
/// character and what is written before it); `None` when `name` gives none.
fn substitute(pattern: &[u8], mut name: impl FnMut(&[u8], &[u8]) -> Option<u8>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(pattern.len());
    for ch in chars(pattern) {
        let b = if ch.len() == 1 {
            ch[0]
        } else {
            name(ch, &out)?
        };
        out.push(b);
    }
    Some(out)
}

/// The pattern with each multibyte character replaced by an ASCII letter (bytes that are
/// not a whole character stay), for [`crate::pattern`]'s reader, and the characters that
/// each letter after a backslash stands for (to word the `stray \` warnings with them).
fn skeleton(pattern: &[u8]) -> (Vec<u8>, Vec<(u8, Vec<u8>)>) {
    // Letters that mean nothing after a backslash to GNU (not \b \B \s \S \w \W), for
    // characters written after one; `x` for the others.
    const SPARE: &[u8] = b"acdefghijklmnopqrtuvyzACDEFGHIJKLMNOPQRTUVXYZ";
    let mut named: Vec<(u8, Vec<u8>)> = Vec::new();
    let out = substitute(pattern, |ch, before| {
        Some(match named.iter().find(|(_, c)| c == ch) {
            Some((l, _)) => *l,
            None if before.last() == Some(&b'\\') => {
                let free = SPARE
                    .iter()
                    .copied()
                    .find(|l| !pattern.contains(l) && named.iter().all(|(u, _)| u != l));
                match free {
                    Some(l) => {
                        named.push((l, ch.to_vec()));
                        l
                    }
                    None => b'x',
                }
            }
            None => b'x',
        })
    });
    (out.unwrap_or_default(), named)
}

/// One pattern as glibc compiles it: the pattern itself (`-G`, `-E`) or its escaped form
/// (`-F`), and whether it is an extended expression.
fn glibc_source(pattern: &[u8], syntax: Syntax) -> (Vec<u8>, bool) {
    match syntax {
        Syntax::Fixed => (fixed_to_basic(pattern), false),
        Syntax::Extended => (pattern.to_vec(), true),
        _ => (pattern.to_vec(), false),
    }
}

/// glibc's error for one pattern, compiled as GNU grep compiles it first.
fn glibc_error(pattern: &[u8], opts: MatchOptions) -> Option<PatternError> {
    let (source, ere) = glibc_source(pattern, opts.syntax);
    GnuRegex::in_locale(&source, ere, opts.ignore_case, false, false, b'\n').err()
}

/// What GNU's DFA says reading one pattern (after glibc took it): its warnings (in GNU's
/// words, a character of the pattern in the locale's encoding), or its error.
fn dfa_warnings(pattern: &[u8], opts: MatchOptions) -> Result<Vec<Vec<u8>>, PatternError> {
    if opts.syntax == Syntax::Fixed {
        return Ok(Vec::new());
    }
    let (shape, named) = skeleton(pattern);
    // (A pattern with back-references is read as its filter is: the reader runs the rest.)
    let (_, warnings) = match translate_filter(&shape, opts.syntax, false, b'\n', false)? {
        Some(filter) => filter,
        None => translate_with_warnings(&shape, opts.syntax, false)?,
    };
    Ok(warnings
        .into_iter()
        .map(|w| {
            let stray = w.strip_prefix("stray \\ before ");
            match stray.and_then(|c| named.iter().find(|(l, _)| c.as_bytes() == [*l])) {
                Some((_, ch)) => [&b"stray \\ before "[..], ch].concat(),
                None => w.into_bytes(),
            }
        })
        .collect())
}

/// The first error of GNU's DFA reading the whole list (after glibc took each pattern).
fn dfa_error(patterns: &[Vec<u8>], opts: MatchOptions) -> Option<PatternError> {
    patterns
        .iter()
        .find_map(|p| dfa_warnings(p, opts).err())
        .or_else(|| list_error(patterns, opts))
}

/// Patterns with each multibyte character replaced by a byte ≥ 0x80 of its own (one no
/// pattern holds as a character), for [`crate::pattern`]'s reader in its unibyte mode.
struct Placeholders {
    shapes: Vec<Vec<u8>>,
    /// Each byte that stands for a character, and the character's bytes.
    names: Vec<(u8, Vec<u8>)>,
}

impl Placeholders {
    /// The bytes `b` stands for, if it stands for a character.
    fn char_of(&self, b: u8) -> Option<&[u8]> {
        self.names
            .iter()
            .find(|(n, _)| *n == b)
            .map(|(_, c)| &c[..])
    }
}

/// [`Placeholders`] for `patterns`; `None` when a pattern has an encoding error or there
/// are more distinct characters than such bytes.
fn placeholders(patterns: &[Vec<u8>]) -> Option<Placeholders> {
    if patterns.iter().any(|p| has_encoding_error(p)) {
        return None;
    }
    let used: Vec<u8> = patterns
        .iter()
        .flat_map(|p| p.iter().copied())
        .filter(|&b| b >= 0x80 && byte_table().len[b as usize] == 1)
        .collect();
    let mut free = (0x80..=0xFFu8).filter(|b| !used.contains(b));
    let mut names: Vec<(u8, Vec<u8>)> = Vec::new();
    let mut shapes = Vec::with_capacity(patterns.len());
    for p in patterns {
        shapes.push(substitute(p, |ch, _| {
            match names.iter().find(|(_, c)| c == ch) {
                Some((b, _)) => Some(*b),
                None => {
                    let b = free.next()?;
                    names.push((b, ch.to_vec()));
                    Some(b)
                }
            }
        })?);
    }
    Some(Placeholders { shapes, names })
}

/// [`crate::pattern::dfa_readings_for_glibc`] for these patterns (GNU's DFA runs no pattern
/// with an encoding error: all `None` then).
fn dfa_readings(patterns: &[Vec<u8>], ere: bool) -> Vec<Option<Vec<u8>>> {
    let Some(p) = placeholders(patterns) else {
        return vec![None; patterns.len()];
    };
    let chars = |b: u8| p.char_of(b).map(<[u8]>::to_vec);
    crate::pattern::dfa_readings_for_glibc(&p.shapes, ere, &chars)
}

/// Strings of which every line some pattern matches holds one ([`required_set`] of each
/// pattern's reading, with its characters as placeholders, then as their bytes; with `-i`
/// searched ignoring ASCII case), to find candidate lines without glibc; `None` when a
/// pattern shows none, when GNU's two readings of a pattern differ, or with `-i` when a
/// string has a character whose other case has other bytes ([`folds_as_ascii`]).
fn required_strings(patterns: &[Vec<u8>], opts: MatchOptions, eol: u8) -> Option<AhoCorasick> {
    // -F patterns as the basic expressions glibc runs.
    let (patterns, syntax) = match opts.syntax {
        Syntax::Fixed => (
            patterns.iter().map(|p| fixed_to_basic(p)).collect(),
            Syntax::Basic,
        ),
        Syntax::Basic | Syntax::Extended => (patterns.to_vec(), opts.syntax),
        Syntax::Perl => return None,
    };
    let ere = syntax == Syntax::Extended;
    let p = placeholders(&patterns)?;
    let mut strings = Vec::with_capacity(p.shapes.len());
    for shape in &p.shapes {
        if !crate::pattern::readings_agree(shape, ere) {
            return None;
        }
        let regex = match translate_filter(shape, syntax, false, eol, false).ok()? {
            Some((filter, _)) => filter,
            None => {
                crate::pattern::translate_lines_ending(shape, syntax, false, eol)
                    .ok()?
                    .0
            }
        };
        let unibyte = MatchOptions {
            utf8: false,
            multibyte: false,
            ..opts
        };
        let hir = parse_hir(&regex, unibyte, eol)?;
        for literal in required_set(&hir)? {
            let mut bytes = Vec::with_capacity(literal.len());
            for b in literal {
                bytes.extend_from_slice(p.char_of(b).unwrap_or(&[b]));
            }
            if opts.ignore_case && !folds_as_ascii(&bytes) {
                return None;
            }
            strings.push(bytes);
        }
    }
    AhoCorasick::builder()
        .ascii_case_insensitive(opts.ignore_case)
        .build(strings)
        .ok()
}

/// Whether `-i` lets `literal` stand for no other bytes than its ASCII letters' other case:
/// its multibyte characters have no case counterpart this locale can write, nor do its
/// ASCII letters beyond their ASCII pair (GB18030 writes `ſ`, an `s` to `-i`, and the
/// Kelvin sign, a `k`).
fn folds_as_ascii(literal: &[u8]) -> bool {
    let mut at = 0;
    while at < literal.len() {
        let Ok((n, wc)) = decode(&literal[at..]) else {
            return false;
        };
        for other in crate::pattern::case_counterparts(wc as u32, true) {
            let ascii_pair = wc < 0x80 && other < 0x80;
            if !ascii_pair && writable(other) {
                return false;
            }
        }
        at += n;
    }
    true
}

/// Whether the locale's encoding has the character `wc`.
fn writable(wc: u32) -> bool {
    let mut out = [0 as c_char; 16];
    // SAFETY: an all-zero mbstate_t is the initial state; `out` holds MB_LEN_MAX (16)
    // bytes, the most wcrtomb writes.
    let n = unsafe {
        let mut state: libc::mbstate_t = std::mem::zeroed();
        wcrtomb(out.as_mut_ptr(), wc as libc::wchar_t, &mut state)
    };
    n != usize::MAX
}

/// Literals of at least 2 bytes one of which every match of `h` holds, if its shape shows
/// them: a literal; a concatenation's best required part (the set whose shortest member is
/// longest); an alternation's branches' sets together; a repetition's (at least once)
/// body's.
fn required_set(h: &regex_syntax::hir::Hir) -> Option<Vec<Vec<u8>>> {
    use regex_syntax::hir::HirKind;
    let shortest = |set: &Vec<Vec<u8>>| set.iter().map(Vec::len).min().unwrap_or(0);
    match h.kind() {
        HirKind::Literal(l) if l.0.len() >= 2 => Some(vec![l.0.to_vec()]),
        HirKind::Capture(c) => required_set(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required_set(&r.sub),
        HirKind::Concat(v) => v.iter().filter_map(required_set).max_by_key(shortest),
        HirKind::Alternation(v) => {
            let sets = v.iter().map(required_set).collect::<Option<Vec<_>>>()?;
            Some(sets.concat())
        }
        _ => None,
    }
}

/// Every pattern that does not compile in this locale, with its index (GNU reports them
/// all, in order, before giving up), or else an error of the whole list, with the index
/// `patterns.len()`.
pub fn pattern_errors(patterns: &[Vec<u8>], opts: MatchOptions) -> Vec<(usize, PatternError)> {
    let errors: Vec<(usize, PatternError)> = patterns
        .iter()
        .enumerate()
        .filter_map(|(i, p)| glibc_error(p, opts).map(|e| (i, e)))
        .collect();
    if !errors.is_empty() {
        return errors;
    }
    // The DFA reads the list as a whole: its one error belongs to no single pattern.
    dfa_error(patterns, opts)
        .map(|e| vec![(patterns.len(), e)])
        .unwrap_or_default()
}

/// GNU's error for the whole list, once each pattern compiled: with `-w` or `-x` its DFA
/// reads the patterns inside a wrapper (`^\(` ... `\)$` for a basic expression), and a
/// last pattern that ends with the first bytes of a character takes the wrapper's `\` as
/// that character's last byte (in Shift_JIS, Big5 or GB18030, where a `\` may end one):
/// the group is then never closed (`grep: unbalanced (`). A `-F` pattern cut short is an
/// encoding error, which makes GNU run it as a basic expression: the same.
fn list_error(patterns: &[Vec<u8>], opts: MatchOptions) -> Option<PatternError> {
    if !(opts.word || opts.line) || opts.syntax == Syntax::Extended {
        return None;
    }
    let tail = chars(patterns.last()?).last()?;
    let swallows =
        cut_short(tail) && decode(&[tail, b"\\"].concat()).is_ok_and(|(n, _)| n == tail.len() + 1);
    swallows.then(|| PatternError {
        message: "unbalanced (".into(),
    })
}

/// `-G`, `-E` and `-F` patterns matched in the current (multibyte, not UTF-8) locale: by
/// glibc's regex engine, line by line, or, for strings, by their bytes (see the module
/// doc).
#[derive(Debug)]
pub struct LocaleMatcher {
    /// The patterns as glibc reads them: what GNU prints as matches (`-o`, colours).
    glibc: Vec<GnuRegex>,
    /// The patterns as GNU's DFA reads them, when that differs from glibc's reading for
    /// some pattern and GNU selects lines with the DFA (empty: `glibc` selects).
    select: Vec<GnuRegex>,
    /// Plain strings: searched without glibc (`glibc` is then empty).
    fixed: Option<Fixed>,
    /// Otherwise, strings of which every matching line holds one: only the lines that
    /// hold one are handed to glibc.
    required: Option<AhoCorasick>,
    /// The byte that ends lines.
    eol: u8,
}

impl LocaleMatcher {
    /// Compiles `patterns` (each one line, without its end) for lines that end with `eol`;
    /// returns the matcher and GNU's warnings about the patterns.
    pub fn new(
        patterns: &[Vec<u8>],
        opts: MatchOptions,
        eol: u8,
    ) -> Result<(LocaleMatcher, Vec<Vec<u8>>), PatternError> {
        if let Some((_, e)) = pattern_errors(patterns, opts).into_iter().next() {
            return Err(e);
        }
        let mut warnings = Vec::new();
        for p in patterns {
            for w in dfa_warnings(p, opts)? {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
        let mut m = LocaleMatcher {
            glibc: Vec::new(),
            select: Vec::new(),
            fixed: Fixed::new(patterns, opts, eol),
            required: None,
            eol,
        };
        if m.fixed.is_some() {
            return Ok((m, warnings));
        }
        let ere = opts.syntax == Syntax::Extended;
        // -w wraps the patterns in brackets the DFA cannot run here: glibc's reading.
        let dfa = match opts.syntax {
            Syntax::Basic | Syntax::Extended if !opts.word => dfa_readings(patterns, ere),
            _ => vec![None; patterns.len()],
        };
        m.required = required_strings(patterns, opts, eol);
        m.glibc = Self::compile_all(patterns, opts, eol, &[])?;
        if dfa.iter().any(Option::is_some) {
            m.select = Self::compile_all(patterns, opts, eol, &dfa)?;
        }
        Ok((m, warnings))
    }

    /// The patterns compiled: those without back-references joined into one (a newline
    /// between them is an alternation to glibc), those with one alone, as GNU compiles them;
    /// a pattern that `dfa` has rewritten (an extended expression) alone too.
    fn compile_all(
        patterns: &[Vec<u8>],
        opts: MatchOptions,
        eol: u8,
        dfa: &[Option<Vec<u8>>],
    ) -> Result<Vec<GnuRegex>, PatternError> {
        let compile = |source: &[u8], ere| {
            GnuRegex::in_locale(source, ere, opts.ignore_case, opts.word, opts.line, eol)
        };
        let ere = opts.syntax == Syntax::Extended;
        let mut joined: Option<Vec<u8>> = None;
        let mut regexes = Vec::new();
        for (i, p) in patterns.iter().enumerate() {
            // The DFA's reading, unless glibc would not take it as written out.
            let rewritten = dfa.get(i).and_then(Option::as_ref);
            if let Some(r) = rewritten.and_then(|source| compile(source, true).ok()) {
                regexes.push(r);
                continue;
            }
            let (source, _) = glibc_source(p, opts.syntax);
            if opts.syntax != Syntax::Fixed && may_have_backref(p) {
                regexes.push(compile(&source, ere)?);
            } else if let Some(j) = &mut joined {
                j.push(b'\n');
                j.extend_from_slice(&source);
            } else {
                joined = Some(source);
            }
        }
        if let Some(j) = joined {
            let r = compile(&j, ere)?;
            regexes.insert(0, r);
        }
        Ok(regexes)
    }

    /// True when some pattern matches in `line` (one line, without its end).
    pub fn is_match(&self, line: &[u8]) -> bool {
        if let Some(f) = &self.fixed {
            return f.find(line, 0).is_some();
        }
        let select = if self.select.is_empty() {
            &self.glibc
        } else {
            &self.select
        };
        select.iter().any(|r| r.is_match(line))
    }

    /// The match GNU prints in `line` from `at` on: the leftmost of every pattern's (as
    /// glibc reads them), the longest of those that start there.
    pub fn find(&self, line: &[u8], at: usize) -> Option<Range<usize>> {
        if let Some(f) = &self.fixed {
            return f.find(line, at);
        }
        leftmost_longest(self.glibc.iter().filter_map(|r| r.find(line, at)))
    }

    /// The next line of `hay` (whole lines) at or after `from` (a line start) that holds a
    /// match, without its end.
    pub fn next_matching_line(&self, hay: &[u8], from: usize) -> Option<Range<usize>> {
        if let Some(f) = &self.fixed {
            return f.next_matching_line(hay, from, self.eol);
        }
        if let Some(required) = &self.required {
            return candidate_lines(required, hay, from, self.eol)
                .find(|line| self.is_match(&hay[line.clone()]));
        }
        let mut at = from;
        while at < hay.len() {
            let end = memchr::memchr(self.eol, &hay[at..]).map_or(hay.len(), |i| at + i);
            if self.is_match(&hay[at..end]) {
                return Some(at..end);
            }
            at = end + 1;
        }
        None
    }
}

/// Strings (`-F`, or `-G`/`-E` patterns without a special character) without `-i`: found
/// by their bytes (Aho-Corasick, leftmost-longest) and kept where they start on a
/// character boundary, found by decoding from the line's start, as GNU's `Fexecute` keeps
/// them (a string of whole characters that starts on a boundary ends on one). `-w` and
/// `-x` as `Fexecute` judges them: a shorter string at the same start when the longest is
/// followed by a word character; the whole line.
#[derive(Debug)]
struct Fixed {
    strings: AhoCorasick,
    /// `-x`: the strings, for a line to equal one.
    whole: HashSet<Vec<u8>>,
    word: bool,
    line: bool,
}

impl Fixed {
    /// `None` when glibc must match the patterns: `-i` (glibc folds characters), an empty
    /// pattern, one that holds the line end or is not whole characters (GNU reads those as
    /// basic expressions), or a special character in a `-G`/`-E` pattern.
    fn new(patterns: &[Vec<u8>], opts: MatchOptions, eol: u8) -> Option<Fixed> {
        let special: &[u8] = match opts.syntax {
            Syntax::Fixed => b"",
            Syntax::Basic => b"\\.[*^$",
            Syntax::Extended => b"\\.[*^$+?{}()|",
            Syntax::Perl => return None,
        };
        let plain = |p: &[u8]| chars(p).all(|c| !(c.len() == 1 && special.contains(&c[0])));
        let served =
            |p: &Vec<u8>| !p.is_empty() && !p.contains(&eol) && !has_encoding_error(p) && plain(p);
        if opts.ignore_case || !patterns.iter().all(served) {
            return None;
        }
        let strings = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .start_kind(StartKind::Both)
            .build(patterns)
            .ok()?;
        Some(Fixed {
            strings,
            whole: if opts.line {
                patterns.iter().cloned().collect()
            } else {
                HashSet::new()
            },
            word: opts.word,
            line: opts.line,
        })
    }

    /// The match in `line` from `at` (a character boundary) on.
    fn find(&self, line: &[u8], at: usize) -> Option<Range<usize>> {
        if self.line {
            return (at == 0 && self.whole.contains(line)).then_some(0..line.len());
        }
        // `mb` walks the line's characters up to where strings are found; `prev` is where
        // the character before `mb` starts.
        let (mut mb, mut prev) = (0, None);
        let mut from = at;
        loop {
            let m = self.strings.find(Input::new(line).span(from..line.len()))?;
            let s = m.start();
            while mb < s {
                prev = Some(mb);
                mb += char_len(&line[mb..]);
            }
            if mb != s {
                // Inside a character: on from the next one.
                from = mb;
                continue;
            }
            if !self.word {
                return Some(s..m.end());
            }
            if !prev.is_some_and(|p| word_char_at(line, p)) {
                let mut e = m.end();
                loop {
                    if !word_char_at(line, e) {
                        return Some(s..e);
                    }
                    // A shorter string at the same start.
                    let shorter = Input::new(&line[..e - 1])
                        .span(s..e - 1)
                        .anchored(Anchored::Yes);
                    match self.strings.find(shorter) {
                        Some(m) => e = m.end(),
                        None => break,
                    }
                }
            }
            from = s + char_len(&line[s..]);
        }
    }

    /// [`LocaleMatcher::next_matching_line`]: each line where a string is found, judged.
    fn next_matching_line(&self, hay: &[u8], from: usize, eol: u8) -> Option<Range<usize>> {
        candidate_lines(&self.strings, hay, from, eol)
            .find(|line| self.find(&hay[line.clone()], 0).is_some())
    }
}

/// The lines of `hay` (whole lines ending with `eol`) from `from` (a line start) on that
/// hold one of `strings` (none holds `eol`), in order, without their ends.
fn candidate_lines<'a>(
    strings: &'a AhoCorasick,
    hay: &'a [u8],
    from: usize,
    eol: u8,
) -> impl Iterator<Item = Range<usize>> + 'a {
    let mut at = from;
    std::iter::from_fn(move || {
        if at >= hay.len() {
            return None;
        }
        let m = strings.find(Input::new(hay).span(at..hay.len()))?;
        let ls = memchr::memrchr(eol, &hay[at..m.start()]).map_or(at, |i| at + i + 1);
        let le = memchr::memchr(eol, &hay[m.start()..]).map_or(hay.len(), |i| m.start() + i);
        at = le + 1;
        Some(ls..le)
    })
}

#[cfg(test)]
mod tests {
    //! The parts that do not need a multibyte locale (the tests run in the C locale, where
    //! every byte is a character); crates/swath/tests/cli/grep_locales.rs runs the rest
    //! against GNU grep in the five locales.
    use super::*;

    #[test]
    fn fixed_strings_become_escaped_basic_expressions() {
        assert_eq!(fixed_to_basic(br"a.b*[c]^$\{"), br"a\.b\*\[c]\^\$\\{");
    }

    #[test]
    fn the_dfa_reading_is_written_out_where_glibc_reads_otherwise() {
        // 0x80 stands for a multibyte character.
        let chars = |b: u8| (b == 0x80).then(|| b"\xa5\xa2".to_vec());
        let read = |ps: &[&[u8]], ere| {
            let ps: Vec<Vec<u8>> = ps.iter().map(|p| p.to_vec()).collect();
            crate::pattern::dfa_readings_for_glibc(&ps, ere, &chars)
        };
        let one = |p: &[u8], ere| read(&[p], ere).remove(0);
        assert_eq!(one(b"{1}a", true), Some(b"a".to_vec()));
        assert_eq!(one(b"{1}\x80", true), Some(b"\xa5\xa2".to_vec()));
        assert_eq!(one(b"^*a", true), Some(b"()a".to_vec()));
        assert_eq!(one(b"a{1\\,2}", true), Some(br"a\{1,2\}".to_vec()));
        assert_eq!(one(b"a$)x", false), Some(br"a$\)x".to_vec()));
        assert_eq!(
            one(b"{1}x[]a^-]{2}", true),
            Some(b"x([]a^-]){2,2}".to_vec())
        );
        // (A backslash in brackets is itself.)
        assert_eq!(
            one(b"{1}[-^][0-3][\\^]", true),
            Some(br"[-^][0-3][\^]".to_vec())
        );
        // Read alike: glibc's reading serves.
        assert_eq!(one(b"a.b\\(c\\)*", false), None);
        // A bracket with a multibyte character, a class, a back-reference: GNU's DFA runs
        // none of the list, so glibc's reading serves every pattern.
        for other in [&b"[\x80]"[..], b"[[:alpha:]]", b"\\(a\\)\\1", b"\\<a"] {
            assert_eq!(read(&[b"{1}a", other], true), vec![None, None], "{other:?}");
        }
    }

    #[test]
    fn required_sets_hold_a_string_of_every_match() {
        let set = |re: &str| {
            let h = regex_syntax::ParserBuilder::new()
                .unicode(false)
                .utf8(false)
                .build()
                .parse(re)
                .unwrap();
            required_set(&h)
        };
        let strings = |v: &[&str]| Some(v.iter().map(|s| s.as_bytes().to_vec()).collect());
        assert_eq!(set("ab.*cde"), strings(&["cde"]));
        assert_eq!(set("(pqat|wvbb)x*"), strings(&["pqat", "wvbb"]));
        assert_eq!(set("x(ab|cd)+y"), strings(&["ab", "cd"]));
        assert_eq!(set("(ab|c)d"), None);
        assert_eq!(set("(ab|)"), None);
        assert_eq!(set("a[bc]d"), None);
        assert_eq!(set("(ab)?cd"), strings(&["cd"]));
    }
}
