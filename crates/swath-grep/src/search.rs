//! Line search: which lines of a buffer of whole lines match a set of GNU grep patterns.
//!
//! A [`Matcher`] compiles GNU grep patterns (translated by [`crate::pattern`]) into one
//! `regex::bytes::Regex` in multi-line mode whose matches never span a newline, so it can run
//! over a whole block of lines at once: one search finds the next matching line, however many
//! lines lie before it, which is what makes counting as fast as the regex engine's literal and
//! DFA scans. Lines are then found around the match with `memchr`. If a pattern can match a
//! newline anyway (`-P` syntax such as `[^a]`), a match that spans one is re-checked on its
//! own line, so the result is always per line.
//!
//! In a multibyte locale other than UTF-8 ([`MatchOptions::multibyte`]) each line is judged
//! on its own by glibc's matcher ([`crate::multibyte::LocaleMatcher`]), which knows where the
//! locale's characters start.
//!
//! The scanning functions take a buffer that holds whole lines (the engine's line framing): a
//! line ends at its newline, and the last one may end at the buffer's end without one.
//! [`lines_naive`] is the one-line-at-a-time reference they are tested against.

use std::ops::Range;

use memchr::{memchr, memrchr};
use regex::bytes::RegexBuilder;

use crate::gnu_regex::GnuRegex;
use crate::multibyte::LocaleMatcher;
pub use crate::options::MatchOptions;
use crate::options::{leftmost_longest, parse_hir};
use crate::pattern::{
    translate_filter, translate_folded, translate_with_warnings, PatternError, Syntax,
};
use crate::pcre::Pcre;
use crate::stack::{group_opens, with_stack_for, NEST_LIMIT};

/// The most groups one of `patterns` opens ([`group_opens`]).
fn most_groups(patterns: &[Vec<u8>]) -> usize {
    patterns.iter().map(|p| group_opens(p)).max().unwrap_or(0)
}

/// Every pattern that does not compile, with its index in `patterns` (GNU reports them all,
/// in order, before giving up). An error of the whole list rather than of one pattern has
/// the index `patterns.len()`.
pub fn pattern_errors(patterns: &[Vec<u8>], opts: MatchOptions) -> Vec<(usize, PatternError)> {
    with_stack_for(most_groups(patterns), || {
        pattern_errors_here(patterns, opts)
    })
}

/// [`pattern_errors`] on the calling thread's stack.
fn pattern_errors_here(patterns: &[Vec<u8>], opts: MatchOptions) -> Vec<(usize, PatternError)> {
    if opts.multibyte && opts.syntax != Syntax::Perl {
        return crate::multibyte::pattern_errors(patterns, opts);
    }
    if opts.syntax == Syntax::Perl {
        return patterns
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                Pcre::new(p, opts.ignore_case, opts.utf8, opts.word, opts.line)
                    .err()
                    .map(|e| (i, e))
            })
            .collect();
    }
    patterns
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let p = case_classes(p, opts);
            match translate_filter(&p, opts.syntax, opts.utf8, b'\n', opts.ignore_case) {
                // Back-references: glibc's matcher must take it too.
                Ok(Some(_)) => GnuRegex::new(
                    &p,
                    opts.syntax == Syntax::Extended,
                    opts.ignore_case,
                    false,
                    false,
                    opts.utf8,
                )
                .err()
                .map(|e| (i, e)),
                Ok(None) => translate_with_warnings(&p, opts.syntax, opts.utf8)
                    .err()
                    .map(|e| (i, e)),
                Err(e) => Some((i, e)),
            }
        })
        .collect()
}

/// With -i, GNU reads `[:lower:]` and `[:upper:]` as `[:alpha:]` (so they match letters that
/// have no case, such as CJK).
fn case_classes(p: &[u8], opts: MatchOptions) -> std::borrow::Cow<'_, [u8]> {
    let regex = matches!(opts.syntax, Syntax::Basic | Syntax::Extended);
    if !(opts.ignore_case && regex && p.windows(7).any(|w| w == b"[:lower" || w == b"[:upper")) {
        return std::borrow::Cow::Borrowed(p);
    }
    let mut out = p.to_vec();
    for class in [&b"[:lower:]"[..], b"[:upper:]"] {
        let mut i = 0;
        while i + class.len() <= out.len() {
            if &out[i..i + class.len()] == class {
                out[i..i + class.len()].copy_from_slice(b"[:alpha:]");
                i += class.len();
            } else {
                i += 1;
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The pattern compiled for judging one line at a time, searched with a cache owned by the
/// calling thread: on a line of 60 bytes the regex crate's shared cache pool costs about
/// as much as the search (measured: 2.34 million candidate lines, 392 ms through
/// `Regex::is_match`, 259 ms with a cache per thread).
#[derive(Debug)]
struct LineRegex {
    /// Tells this pattern's caches from other matchers' in the thread's cache list.
    id: u64,
    re: regex_automata::meta::Regex,
}

thread_local! {
    /// Line caches of the last few matchers this thread used.
    static LINE_CACHES: std::cell::RefCell<Vec<(u64, regex_automata::meta::Cache)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl LineRegex {
    /// Runs `f` with this thread's cache for the pattern.
    fn with_cache<T>(&self, f: impl FnOnce(&mut regex_automata::meta::Cache) -> T) -> T {
        LINE_CACHES.with(|caches| {
            let mut caches = caches.borrow_mut();
            let k = match caches.iter().position(|(id, _)| *id == self.id) {
                Some(k) => k,
                None => {
                    if caches.len() == 4 {
                        caches.remove(0);
                    }
                    caches.push((self.id, self.re.create_cache()));
                    caches.len() - 1
                }
            };
            f(&mut caches[k].1)
        })
    }

    fn is_match(&self, line: &[u8]) -> bool {
        let input = regex_automata::Input::new(line).earliest(true);
        self.with_cache(|c| self.re.search_with(c, &input).is_some())
    }

    /// The leftmost-first match in `hay[at..]` (the bytes before `at` are still seen by
    /// anchors and word boundaries).
    fn find_at(&self, hay: &[u8], at: usize) -> Option<Range<usize>> {
        let input = regex_automata::Input::new(hay).range(at..);
        self.with_cache(|c| self.re.search_with(c, &input).map(|m| m.range()))
    }

    /// Where the earliest-ending match in `hay[at..]` ends (the bytes before `at` are still
    /// seen by anchors and word boundaries).
    fn shortest_end(&self, hay: &[u8], at: usize) -> Option<usize> {
        let input = regex_automata::Input::new(hay).range(at..).earliest(true);
        self.with_cache(|c| self.re.search_half_with(c, &input).map(|m| m.offset()))
    }
}

/// The meta regex for `source` with the regex crate's settings for byte regexes (and
/// `kind`).
fn meta_regex(
    source: &str,
    o: MatchOptions,
    kind: regex_automata::MatchKind,
    eol: u8,
) -> Result<regex_automata::meta::Regex, PatternError> {
    use regex_automata::{meta, util::syntax};
    meta::Builder::new()
        .configure(
            meta::Config::new()
                .match_kind(kind)
                .utf8_empty(false)
                // As the regex crate's `size_limit` and `dfa_size_limit` set them: the
                // lazy DFA's cache may grow to 1 GiB. (`dfa_size_limit` here would let the
                // meta engine build a full DFA of up to 1 GiB ahead of time: minutes for a
                // few thousand patterns.)
                .nfa_size_limit(Some(1 << 30))
                .hybrid_cache_capacity(1 << 30)
                .line_terminator(eol),
        )
        .syntax(
            syntax::Config::new()
                .multi_line(true)
                .line_terminator(eol)
                .nest_limit(NEST_LIMIT)
                .unicode(o.utf8)
                .utf8(false)
                .case_insensitive(false),
        )
        .build(source)
        .map_err(|e| PatternError {
            message: e.to_string(),
        })
}

/// A compiled set of patterns.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// Re-check each candidate line on its own. The regex crate's Unicode word boundaries
    /// next to invalid UTF-8 depend on where the haystack starts; judging the line alone
    /// keeps `-w` results the same however a file is cut into blocks.
    verify_lines: bool,
    /// The same patterns with POSIX's leftmost-longest rule, for printing matches (`-o`,
    /// colour): the regex crate finds where the leftmost match starts, this finds how far
    /// the longest one from there reaches, as GNU grep prints it.
    longest: Option<regex_automata::meta::Regex>,
    /// No match can contain a NUL byte or depend on what surrounds it (no anchors or word
    /// boundaries): a block with no match has none either when NULs end lines, as they do
    /// in GNU grep once a file is binary.
    nul_blind: bool,
    /// A literal every match contains (at least 2 bytes, no newline), found by walking the
    /// pattern: lines are then found by searching for it and judging only the lines that
    /// hold it, as ripgrep does, instead of running the automaton over every byte.
    required: Option<memchr::memmem::Finder<'static>>,
    /// The compiled pattern (`None` when there are no patterns at all, `-f /dev/null`:
    /// nothing matches), searched with a cache of
    /// the calling thread's: finding matches, judging lines one at a time (`required`,
    /// `-w`), finding where matches end (`within_lines`).
    line_re: Option<std::sync::Arc<LineRegex>>,
    /// Every match is at least one byte long and holds no newline, so it lies inside one
    /// line.
    within_lines: bool,
    /// The combined pattern and options, to build `longest` on demand.
    source: String,
    opts: Option<MatchOptions>,
    /// `-P`: PCRE2 instead of the regex crate, line by line.
    pcre: Option<std::sync::Arc<Pcre>>,
    /// The byte that ends lines: a newline, or NUL (`grep -z`).
    eol: u8,
    /// With back-references, `line_re` only filters: the patterns without them, compiled
    /// alone (`None` if every pattern has one)...
    exact: Option<std::sync::Arc<LineRegex>>,
    /// ... and those with them, for glibc's matcher.
    backrefs: Vec<std::sync::Arc<GnuRegex>>,
    /// The first PCRE2 failure (a limit it gave up at): 0 when none. The line it happened
    /// on counts as not matching; the caller reports it and stops (GNU dies).
    pcre_error: std::sync::Arc<std::sync::atomic::AtomicI32>,
    /// A multibyte locale other than UTF-8: glibc's matcher judges each line instead.
    locale: Option<std::sync::Arc<LocaleMatcher>>,
}

impl Matcher {
    /// Compiles `patterns` (each one line, without its newline); returns the matcher and
    /// GNU's warnings about the patterns (such as a stray backslash), as the bytes grep
    /// prints (a multibyte locale's characters in its own encoding).
    pub fn new(
        patterns: &[Vec<u8>],
        opts: MatchOptions,
    ) -> Result<(Matcher, Vec<Vec<u8>>), PatternError> {
        Self::new_lines_ending(patterns, opts, b'\n')
    }

    /// [`Matcher::new`] for lines that end with `eol` (`grep -z`: NUL; a newline is then an
    /// ordinary character that `.` and sets match).
    pub fn new_lines_ending(
        patterns: &[Vec<u8>],
        opts: MatchOptions,
        eol: u8,
    ) -> Result<(Matcher, Vec<Vec<u8>>), PatternError> {
        with_stack_for(most_groups(patterns), || {
            Self::new_here(patterns, opts, eol)
        })
    }

    /// [`Matcher::new_lines_ending`] on the calling thread's stack.
    fn new_here(
        patterns: &[Vec<u8>],
        opts: MatchOptions,
        eol: u8,
    ) -> Result<(Matcher, Vec<Vec<u8>>), PatternError> {
        // Nothing compiled: matches nothing until one of the engines below is set.
        let bare = Matcher {
            verify_lines: false,
            longest: None,
            nul_blind: false,
            required: None,
            line_re: None,
            within_lines: false,
            source: String::new(),
            opts: None,
            pcre: None,
            pcre_error: Default::default(),
            eol,
            exact: None,
            backrefs: Vec::new(),
            locale: None,
        };
        if patterns.is_empty() {
            return Ok((
                Matcher {
                    nul_blind: true,
                    ..bare
                },
                Vec::new(),
            ));
        }
        if opts.syntax == Syntax::Perl {
            // One pattern (grep refuses more with -P).
            let pcre = Pcre::new(
                &patterns[0],
                opts.ignore_case,
                opts.utf8,
                opts.word,
                opts.line,
            )?;
            return Ok((
                Matcher {
                    pcre: Some(std::sync::Arc::new(pcre)),
                    ..bare
                },
                Vec::new(),
            ));
        }
        // glibc's matcher in the locale also judges word anchors and -w where the locale
        // has letters beyond ASCII in one byte (ISO-8859-x): the regex crate's byte-mode
        // word boundaries know only ASCII ones.
        if opts.multibyte || crate::multibyte::needs_locale_words(patterns, &opts) {
            let (locale, warnings) = LocaleMatcher::new(patterns, opts, eol)?;
            return Ok((
                Matcher {
                    locale: Some(std::sync::Arc::new(locale)),
                    ..bare
                },
                warnings,
            ));
        }
        let Translated {
            parts,
            exact_parts,
            backrefs,
            warnings,
        } = translate_all(patterns, opts, eol)?;
        let wrap = |re: String| {
            if opts.line {
                format!("^(?:{re})$")
            } else if opts.word {
                format!(r"\b{{start-half}}(?:{re})\b{{end-half}}")
            } else {
                re
            }
        };
        let re = wrap(parts.join("|"));
        let exact =
            (!backrefs.is_empty() && !exact_parts.is_empty()).then(|| wrap(exact_parts.join("|")));
        // The source `longest` is built from: the patterns matched by the regex crate.
        let source = if backrefs.is_empty() {
            re.clone()
        } else {
            exact.clone().unwrap_or_default()
        };
        let hir = parse_hir(&re, opts, eol);
        // Built once for the regex crate's checks and error messages; the searches go
        // through `line_re`, one automaton (one lazy DFA to fill) per thread.
        RegexBuilder::new(&re)
            .multi_line(true)
            .line_terminator(eol)
            .nest_limit(NEST_LIMIT)
            .unicode(opts.utf8)
            .case_insensitive(false)
            .size_limit(1 << 30)
            .dfa_size_limit(1 << 30)
            .build()
            .map_err(|e| PatternError {
                message: regex_error_message(&e),
            })?;
        // With back-references the regex is a filter: every candidate line is judged.
        static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let verify_lines = (opts.word && opts.utf8) || !backrefs.is_empty();
        let exact = match exact {
            Some(x) => Some(std::sync::Arc::new(LineRegex {
                id: IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                re: meta_regex(&x, opts, regex_automata::MatchKind::LeftmostFirst, eol)?,
            })),
            None => None,
        };
        let required = hir
            .as_ref()
            .filter(|h| leading_literal(h).is_none())
            .and_then(required_literal)
            .filter(|l| l.len() >= 2 && !l.contains(&eol))
            .map(|l| memchr::memmem::Finder::new(&l).into_owned());
        let within_lines = hir.as_ref().is_some_and(|h| within_lines(h, eol));
        let line_re = Some(std::sync::Arc::new(LineRegex {
            id: IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            re: meta_regex(&re, opts, regex_automata::MatchKind::LeftmostFirst, eol)?,
        }));
        Ok((
            Matcher {
                verify_lines,
                longest: None,
                nul_blind: eol != 0 && backrefs.is_empty() && hir.as_ref().is_some_and(nul_blind),
                required,
                line_re,
                within_lines,
                source,
                opts: Some(opts),
                pcre: None,
                pcre_error: Default::default(),
                eol,
                exact,
                backrefs,
                locale: None,
            },
            warnings.into_iter().map(String::into_bytes).collect(),
        ))
    }

    /// `-P`: the first match in `line` from `at` on, a PCRE2 failure recorded (see
    /// [`Matcher::pcre_error`]) and taken as no match.
    fn pcre_find(&self, p: &Pcre, line: &[u8], at: usize) -> Option<Range<usize>> {
        match p.find(line, at) {
            Ok(m) => m,
            Err(code) => {
                let _ = self.pcre_error.compare_exchange(
                    0,
                    code,
                    std::sync::atomic::Ordering::Relaxed,
                    std::sync::atomic::Ordering::Relaxed,
                );
                None
            }
        }
    }

    /// The message for the first time PCRE2 gave up on a line (`-P`), in GNU's words, if
    /// it did: the search's results are then not to be trusted, and GNU stops with it
    /// (`grep: FILE: exceeded PCRE's backtracking limit`, status 2).
    pub fn pcre_error(&self) -> Option<String> {
        match self.pcre_error.load(std::sync::atomic::Ordering::Relaxed) {
            0 => None,
            code => Some(crate::pcre::match_error_message(code)),
        }
    }

    /// The first match in `hay` starting at or after `at` (the bytes before `at` are still
    /// seen by anchors and word boundaries).
    pub fn find_at(&self, hay: &[u8], at: usize) -> Option<Range<usize>> {
        if let Some(p) = &self.pcre {
            return self.pcre_find(p, hay, at);
        }
        self.line_re.as_ref()?.find_at(hay, at)
    }

    /// True when `line` (one line, no newline) contains a match.
    pub fn is_match_line(&self, line: &[u8]) -> bool {
        if let Some(p) = &self.pcre {
            return self.pcre_find(p, line, 0).is_some();
        }
        if let Some(l) = &self.locale {
            return l.is_match(line);
        }
        if !self.backrefs.is_empty() {
            return self.exact.as_ref().is_some_and(|e| e.is_match(line))
                || self.backrefs.iter().any(|b| b.is_match(line));
        }
        self.line_re.as_ref().is_some_and(|l| l.is_match(line))
    }

    /// The match in `line` (one line) from `at` on that grep prints: with back-references,
    /// the leftmost of every pattern's (the longest of those starting there).
    fn find_in_line(&self, line: &[u8], at: usize) -> Option<Range<usize>> {
        if let Some(l) = &self.locale {
            return l.find(line, at);
        }
        if self.backrefs.is_empty() {
            return self.find_at(line, at);
        }
        let exact = self.exact.as_ref().and_then(|e| e.find_at(line, at));
        leftmost_longest(
            exact
                .into_iter()
                .chain(self.backrefs.iter().filter_map(|b| b.find(line, at))),
        )
    }

    /// The byte that ends lines (a newline, or NUL with `grep -z`).
    pub fn eol(&self) -> u8 {
        self.eol
    }

    /// True when a block without a match also has none once NUL bytes end lines (see
    /// [`Matcher::new`]): the NUL scan can then wait until a match is found.
    pub fn nul_blind(&self) -> bool {
        self.nul_blind
    }

    /// Makes [`Matcher::matches_in_line`] report leftmost-longest matches, as GNU grep
    /// prints and colours them (the line selection does not change).
    pub fn use_longest_matches(&mut self) -> Result<(), PatternError> {
        let Some(o) = self.opts else { return Ok(()) };
        let (source, eol) = (&self.source, self.eol);
        self.longest = Some(with_stack_for(group_opens(source.as_bytes()), || {
            meta_regex(source, o, regex_automata::MatchKind::All, eol)
        })?);
        Ok(())
    }

    /// Every non-empty match in `line` (one line), in order, as grep -o prints them: each
    /// starts where the leftmost match does and, after [`Matcher::use_longest_matches`],
    /// ends where the longest match from there does.
    pub fn matches_in_line<'a>(
        &'a self,
        line: &'a [u8],
    ) -> impl Iterator<Item = Range<usize>> + 'a {
        let mut at = 0usize;
        std::iter::from_fn(move || loop {
            if at > line.len() {
                return None;
            }
            let m = self.find_in_line(line, at)?;
            let mut end = m.end;
            if let Some(l) = &self.longest {
                let input = regex_automata::Input::new(line)
                    .span(m.start..line.len())
                    .anchored(regex_automata::Anchored::Yes);
                if let Some(x) = l.search(&input) {
                    end = end.max(x.end());
                }
            }
            if end == m.start {
                // An empty match: GNU skips it; look again one character on.
                at = m.start
                    + match self.locale {
                        Some(_) => crate::locale::char_len(&line[m.start..]),
                        None => next_char_len(&line[m.start..]),
                    };
                continue;
            }
            at = end;
            return Some(m.start..end);
        })
    }

    /// The next line at or after `from` (a line start in `hay`) that contains a match, as the
    /// range of its bytes without the newline.
    pub fn next_matching_line(&self, hay: &[u8], from: usize) -> Option<Range<usize>> {
        if let Some(l) = &self.locale {
            return l.next_matching_line(hay, from);
        }
        if let Some(p) = &self.pcre {
            // PCRE2 judges one line at a time, as GNU runs it.
            let mut at = from;
            while at < hay.len() {
                let end = memchr(self.eol, &hay[at..]).map_or(hay.len(), |i| at + i);
                if self.pcre_find(p, &hay[at..end], 0).is_some() {
                    return Some(at..end);
                }
                at = end + 1;
            }
            return None;
        }
        let Some(lit) = &self.required else {
            return self.next_matching_line_scan(hay, from);
        };
        let mut at = from;
        let mut rejected = 0usize;
        while at < hay.len() {
            let i = at + lit.find(&hay[at..])?;
            let ls = memrchr(self.eol, &hay[at..i]).map_or(at, |k| at + k + 1);
            let le = memchr(self.eol, &hay[i..]).map_or(hay.len(), |k| i + k);
            // A line is selected when the pattern matches it alone, so a match lies in it
            // and holds the literal.
            if self.is_match_line(&hay[ls..le]) {
                return Some(ls..le);
            }
            rejected += 1;
            at = le + 1;
            if rejected >= 8 && at - from < rejected * 512 {
                // The literal is on most lines, and each is a search of its own: let the
                // automaton scan the rest.
                return self.next_matching_line_scan(hay, at);
            }
        }
        None
    }

    /// [`Matcher::next_matching_line`] by running the automaton over `hay`.
    fn next_matching_line_scan(&self, hay: &[u8], from: usize) -> Option<Range<usize>> {
        let mut at = from;
        if self.within_lines {
            // Where the earliest match ends is enough: the match holds the byte before that
            // end and no newline, so it lies in that byte's line. The automaton stops there,
            // and no reverse scan looks for where the match starts.
            let re = self.line_re.as_ref()?;
            while at < hay.len() {
                let e = re.shortest_end(hay, at)?;
                let last = e.checked_sub(1)?;
                let ls = memrchr(self.eol, &hay[at..last]).map_or(at, |i| at + i + 1);
                let le = memchr(self.eol, &hay[last..]).map_or(hay.len(), |i| last + i);
                if !self.verify_lines || self.is_match_line(&hay[ls..le]) {
                    return Some(ls..le);
                }
                at = le + 1;
            }
            return None;
        }
        loop {
            if at > hay.len() {
                return None;
            }
            let m = self.find_at(hay, at)?;
            if m.start == hay.len() && hay.last().is_none_or(|&b| b == self.eol) {
                // An empty match after the last newline: there is no line there.
                return None;
            }
            let ls = memrchr(self.eol, &hay[at..m.start]).map_or(at, |i| at + i + 1);
            let le = memchr(self.eol, &hay[m.start..]).map_or(hay.len(), |i| m.start + i);
            if m.end <= le && (!self.verify_lines || self.is_match_line(&hay[ls..le])) {
                return Some(ls..le);
            }
            if m.end <= le {
                at = le + 1;
                continue;
            }
            // The match spans a newline (a pattern that can match one): judge the line alone.
            if self.is_match_line(&hay[ls..le]) {
                return Some(ls..le);
            }
            at = le + 1;
        }
    }
}

/// The patterns translated for the regex crate, one after another, with GNU's warnings.
struct Translated {
    /// Every pattern, as a regex (a filter for those with back-references).
    parts: Vec<String>,
    /// The patterns without back-references, as regexes...
    exact_parts: Vec<String>,
    /// ... and those with them, for glibc's matcher.
    backrefs: Vec<std::sync::Arc<GnuRegex>>,
    /// GNU's warnings, each once, in order.
    warnings: Vec<String>,
}

/// Translates each of `patterns` ([`Matcher::new_lines_ending`] past its other engines).
fn translate_all(
    patterns: &[Vec<u8>],
    opts: MatchOptions,
    eol: u8,
) -> Result<Translated, PatternError> {
    let mut warnings = Vec::new();
    let mut parts = Vec::with_capacity(patterns.len());
    // Patterns without back-references, and those with them (for glibc's matcher).
    let mut exact_parts = Vec::with_capacity(patterns.len());
    let mut backrefs = Vec::new();
    for p in patterns {
        let p = case_classes(p, opts);
        let (t, w) = match translate_filter(&p, opts.syntax, opts.utf8, eol, opts.ignore_case)? {
            Some(filter) => {
                let ere = opts.syntax == Syntax::Extended;
                let g = GnuRegex::new(&p, ere, opts.ignore_case, opts.word, opts.line, opts.utf8)?;
                backrefs.push(std::sync::Arc::new(g));
                filter
            }
            None => {
                // -i is written into the regex (glibc's case pairs), not left to the
                // regex crate's Unicode folding.
                let (t, w) = translate_folded(&p, opts.syntax, opts.utf8, eol, opts.ignore_case)?;
                exact_parts.push(format!("(?:{t})"));
                (t, w)
            }
        };
        for w in w {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        parts.push(format!("(?:{t})"));
    }
    Ok(Translated {
        parts,
        exact_parts,
        backrefs,
        warnings,
    })
}

/// Whether some match of `h` can contain the ASCII byte `b`.
fn can_match_byte(h: &regex_syntax::hir::Hir, b: u8) -> bool {
    use regex_syntax::hir::{Class, HirKind};
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => false,
        HirKind::Literal(l) => l.0.contains(&b),
        HirKind::Class(Class::Unicode(c)) => {
            let ch = char::from(b);
            c.ranges().iter().any(|r| r.start() <= ch && ch <= r.end())
        }
        HirKind::Class(Class::Bytes(c)) => {
            c.ranges().iter().any(|r| r.start() <= b && b <= r.end())
        }
        HirKind::Repetition(r) => can_match_byte(&r.sub, b),
        HirKind::Capture(c) => can_match_byte(&c.sub, b),
        HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().any(|h| can_match_byte(h, b)),
    }
}

/// Whether the pattern has no look-around and no way to match a NUL byte.
fn nul_blind(h: &regex_syntax::hir::Hir) -> bool {
    h.properties().look_set().is_empty() && !can_match_byte(h, 0)
}

/// Whether every match of `h` is at least one byte long and contains no line end `eol`.
fn within_lines(h: &regex_syntax::hir::Hir, eol: u8) -> bool {
    h.properties().minimum_len().is_some_and(|n| n >= 1) && !can_match_byte(h, eol)
}

/// The literal every match of `h` starts with (after look-arounds), if any: the regex
/// engine already searches for such a literal itself, faster than lines can be judged one
/// by one, so [`Matcher::next_matching_line`] only looks for literals inside the pattern.
fn leading_literal(h: &regex_syntax::hir::Hir) -> Option<Vec<u8>> {
    use regex_syntax::hir::HirKind;
    match h.kind() {
        HirKind::Literal(l) => Some(l.0.to_vec()),
        HirKind::Capture(c) => leading_literal(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => leading_literal(&r.sub),
        HirKind::Concat(v) => v
            .iter()
            .find(|h| !matches!(h.kind(), HirKind::Look(_)))
            .and_then(leading_literal),
        _ => None,
    }
}

/// The longest literal that every match of `h` contains, if the pattern's shape shows one:
/// a literal, a concatenation's longest required part, a repetition's (at least once)
/// body. Alternations and classes give none.
fn required_literal(h: &regex_syntax::hir::Hir) -> Option<Vec<u8>> {
    use regex_syntax::hir::HirKind;
    match h.kind() {
        HirKind::Literal(l) => Some(l.0.to_vec()),
        HirKind::Capture(c) => required_literal(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required_literal(&r.sub),
        HirKind::Concat(v) => v.iter().filter_map(required_literal).max_by_key(Vec::len),
        _ => None,
    }
}

/// Bytes of the character at the start of `s` (1 for an invalid byte or the end).
fn next_char_len(s: &[u8]) -> usize {
    match s.first() {
        None => 1,
        Some(&b) if b < 0x80 => 1,
        Some(_) => {
            let n = s.len().min(4);
            (1..=n)
                .find(|&k| std::str::from_utf8(&s[..k]).is_ok())
                .unwrap_or(1)
        }
    }
}

/// The regex crate's compile error as one line.
fn regex_error_message(e: &regex::Error) -> String {
    match e {
        regex::Error::CompiledTooBig(_) => "regular expression too big".to_string(),
        other => {
            let text = other.to_string();
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            last.trim_start_matches("error: ").trim().to_string()
        }
    }
}

/// Calls `f(line)` for each line of `hay` selected by `m` (matching, or not matching with
/// `invert`), in order, with the line's range without its newline; `f` returns false to
/// stop. `hay` holds whole lines.
pub fn for_each_selected(
    m: &Matcher,
    hay: &[u8],
    invert: bool,
    mut f: impl FnMut(Range<usize>) -> bool,
) {
    let mut from = 0usize;
    while from < hay.len() {
        let next = m.next_matching_line(hay, from);
        if !invert {
            let Some(line) = next else { return };
            from = line.end + 1;
            if !f(line) {
                return;
            }
            continue;
        }
        let stop = next.as_ref().map_or(hay.len(), |l| l.start);
        while from < stop {
            let end = memchr(m.eol, &hay[from..stop]).map_or(stop, |i| from + i);
            if !f(from..end) {
                return;
            }
            from = end + 1;
        }
        match next {
            Some(line) => from = line.end + 1,
            None => return,
        }
    }
}

/// How many lines of `hay` are selected, stopping at `max`.
pub fn count_selected(m: &Matcher, hay: &[u8], invert: bool, max: u64) -> u64 {
    if max == 0 {
        return 0;
    }
    if invert && max == u64::MAX {
        let mut matching = 0u64;
        for_each_selected(m, hay, false, |_| {
            matching += 1;
            true
        });
        return lines_ending(hay, m.eol) - matching;
    }
    let mut n = 0u64;
    for_each_selected(m, hay, invert, |_| {
        n += 1;
        n < max
    });
    n
}

/// Lines in a buffer of whole lines (a last line without a newline counts).
pub fn lines_in(hay: &[u8]) -> u64 {
    lines_ending(hay, b'\n')
}

/// Lines ending with `eol` in a buffer of whole lines (a last one without it counts).
pub fn lines_ending(hay: &[u8], eol: u8) -> u64 {
    swath_kernels::count::count_byte(hay, eol) + u64::from(hay.last().is_some_and(|&b| b != eol))
}

/// The reference: ranges of the selected lines, testing each line on its own.
pub fn lines_naive(m: &Matcher, hay: &[u8], invert: bool) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < hay.len() {
        let end = memchr(m.eol, &hay[start..]).map_or(hay.len(), |i| start + i);
        if m.is_match_line(&hay[start..end]) != invert {
            out.push(start..end);
        }
        start = end + 1;
    }
    out
}

impl Matcher {
    /// True when `line` is not text in the matcher's encoding: GNU grep then treats the file
    /// as binary. UTF-8 ([`has_encoding_error`]) unless the matcher serves a multibyte locale
    /// of another encoding (then decoded with `mbrlen`, see [`crate::multibyte`]).
    pub fn encoding_error(&self, line: &[u8]) -> bool {
        match self.locale {
            Some(_) => crate::locale::has_encoding_error(line),
            None => has_encoding_error(line),
        }
    }
}

/// True when `line` has a byte sequence that glibc's UTF-8 decoder rejects (GNU grep then
/// treats the file as binary). glibc accepts a few forms beyond standard UTF-8.
pub fn has_encoding_error(line: &[u8]) -> bool {
    let mut rest = line;
    loop {
        match std::str::from_utf8(rest) {
            Ok(_) => return false,
            Err(e) => {
                let bad = &rest[e.valid_up_to()..];
                match swath_kernels::wc::glibc_extended(bad) {
                    Some(n) => rest = &bad[n..],
                    None => return true,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn matcher(p: &[&str], syntax: Syntax, word: bool, line: bool) -> Matcher {
        let pats: Vec<Vec<u8>> = p.iter().map(|s| s.as_bytes().to_vec()).collect();
        Matcher::new(
            &pats,
            MatchOptions {
                syntax,
                ignore_case: false,
                word,
                line,
                utf8: true,
                multibyte: false,
            },
        )
        .unwrap()
        .0
    }

    fn selected(m: &Matcher, hay: &[u8], invert: bool) -> Vec<Range<usize>> {
        let mut v = Vec::new();
        for_each_selected(m, hay, invert, |r| {
            v.push(r);
            true
        });
        v
    }

    #[test]
    fn empty_pattern_selects_every_line_and_no_pattern_none() {
        let m = matcher(&[""], Syntax::Basic, false, false);
        assert_eq!(selected(&m, b"a\n\nb", false), vec![0..1, 2..2, 3..4]);
        assert_eq!(selected(&m, b"a\n", false), vec![0..1]);
        assert_eq!(selected(&m, b"", false), Vec::<Range<usize>>::new());
        let none = Matcher::new(
            &[],
            MatchOptions {
                syntax: Syntax::Basic,
                ignore_case: false,
                word: false,
                line: false,
                utf8: false,
                multibyte: false,
            },
        )
        .unwrap()
        .0;
        assert_eq!(
            selected(&none, b"a\nb\n", false),
            Vec::<Range<usize>>::new()
        );
        assert_eq!(selected(&none, b"a\nb\n", true), vec![0..1, 2..3]);
    }

    #[test]
    fn word_and_line_options() {
        let w = matcher(&["foo"], Syntax::Fixed, true, false);
        assert!(w.is_match_line(b"a foo b"));
        assert!(w.is_match_line(b"foo"));
        assert!(!w.is_match_line(b"foobar"));
        assert!(w.is_match_line(b"foobar foo"));
        let x = matcher(&["ab"], Syntax::Fixed, false, true);
        assert_eq!(selected(&x, b"ab\nabc\nab", false), vec![0..2, 7..9]);
    }

    #[test]
    fn required_literals() {
        let lit = |p: &str, syntax, word| {
            matcher(&[p], syntax, word, false)
                .required
                .map(|f| f.needle().to_vec())
        };
        assert_eq!(
            lit("[a-z]+q[a-z]+z ", Syntax::Extended, false),
            Some(b"z ".to_vec())
        );
        assert_eq!(lit("x*ab.*b$", Syntax::Basic, true), Some(b"ab".to_vec()));
        assert_eq!(
            lit("[xy]\\(abc\\)\\{2\\}x", Syntax::Basic, false),
            Some(b"abc".to_vec())
        );
        // A leading literal is left to the regex engine's own search.
        assert_eq!(lit("ab.*b$", Syntax::Basic, true), None);
        assert_eq!(lit("\\(abc\\)\\{2\\}x", Syntax::Basic, false), None);
        assert_eq!(lit("(abc)?x", Syntax::Extended, false), None);
        assert_eq!(lit("foo|barbaz", Syntax::Extended, false), None);
        assert_eq!(lit("a.b", Syntax::Basic, false), None);
        // Lines found through the literal, some rejected (no `b` at the end), and enough
        // rejected candidates close together to hand over to the automaton.
        let m = matcher(&["x*ab.*b$"], Syntax::Basic, false, false);
        assert!(m.required.is_some());
        let mut hay = Vec::new();
        for i in 0..200 {
            hay.extend_from_slice(if i % 7 == 0 { b"xab yb\n" } else { b"ab x\n" });
        }
        let want = lines_naive(&m, &hay, false);
        assert_eq!(want.len(), 29);
        assert_eq!(selected(&m, &hay, false), want);
    }

    #[test]
    fn matches_within_lines() {
        let within = |p: &str, syntax| matcher(&[p], syntax, false, false).within_lines;
        assert!(within("e[a-z]+ [a-z]", Syntax::Extended));
        assert!(within("^a.b$", Syntax::Basic));
        assert!(
            within("[^a]b", Syntax::Basic),
            "GNU brackets never match a newline"
        );
        assert!(!within("(?s)a.b", Syntax::Perl), "(?s). matches a newline");
        assert!(!within(r"a\sb", Syntax::Perl), r"\s matches a newline");
        assert!(!within("x*", Syntax::Basic), "matches the empty string");
        assert!(!within("", Syntax::Basic));
        // Suffix, inner and prefix literals, alternations: the earliest match end found by
        // each regex strategy is in the first matching line.
        let mut hay = Vec::new();
        for i in 0..3000u32 {
            hay.extend_from_slice(format!("w{} ab{}z x{}\n", i % 7, i % 13, i % 5).as_bytes());
        }
        for p in [
            "[a-z]+3z",
            "ab1[0-9]*z",
            "w3 a",
            "(w1|x4)",
            "b[0-9]+z x2$",
            "^w6",
        ] {
            let m = matcher(&[p], Syntax::Extended, false, false);
            assert!(m.within_lines, "{p}");
            let want = lines_naive(&m, &hay, false);
            assert!(!want.is_empty(), "{p}");
            assert_eq!(selected(&m, &hay, false), want, "{p}");
        }
    }

    #[test]
    fn a_match_spanning_lines_is_judged_per_line() {
        let m = matcher(&["a[^x]b"], Syntax::Perl, false, false);
        assert_eq!(selected(&m, b"a\nb\nazb\n", false), vec![4..7]);
    }

    #[test]
    fn glibc_encoding_errors() {
        assert!(!has_encoding_error("caf\u{e9}".as_bytes()));
        assert!(has_encoding_error(b"a\xffb"));
        assert!(has_encoding_error(b"\xed\xa0\x80"));
        assert!(!has_encoding_error(b"\xf4\x90\x80\x80"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn block_scan_agrees_with_line_by_line(
            hay in proptest::collection::vec(prop_oneof![
                Just(b'a'), Just(b'b'), Just(b' '), Just(b'\n'), Just(b'x'), Just(0xc3u8), Just(0xa9u8)
            ], 0..300),
            pat in prop_oneof![
                Just("a"), Just("ab"), Just(""), Just("^a"), Just("b$"), Just("^$"), Just("a.b"),
                Just("x*"), Just("[^a]b"), Just("\\(ab\\)\\{2\\}"), Just("é"), Just("a\\|b x"),
                Just("x*ab.*b$"), Just("^x.*ab"), Just("[ab]b a"), Just("[ab]*ab b")
            ],
            word in any::<bool>(),
            line in any::<bool>(),
            invert in any::<bool>(),
        ) {
            let m = matcher(&[pat], Syntax::Basic, word, line);
            let want = lines_naive(&m, &hay, invert);
            prop_assert_eq!(selected(&m, &hay, invert), want.clone());
            prop_assert_eq!(count_selected(&m, &hay, invert, u64::MAX), want.len() as u64);
            prop_assert_eq!(count_selected(&m, &hay, invert, 2), want.len().min(2) as u64);
        }
    }
}
