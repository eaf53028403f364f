//! How patterns are read and matched ([`MatchOptions`]), and what every matcher shares:
//! the combined pattern parsed as the regex crate reads it ([`parse_hir`]) and which of
//! several matches grep prints ([`leftmost_longest`]).

use std::ops::Range;

use crate::pattern::Syntax;
use crate::stack::NEST_LIMIT;

/// How patterns are read and matched (grep's -G/-E/-F/-P, -i, -w, -x and the locale).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchOptions {
    /// The pattern syntax.
    pub syntax: Syntax,
    /// Ignore case (-i).
    pub ignore_case: bool,
    /// Match whole words only (-w): no word character right before or after the match.
    pub word: bool,
    /// Match whole lines only (-x).
    pub line: bool,
    /// A UTF-8 locale: characters rather than bytes.
    pub utf8: bool,
    /// A multibyte locale other than UTF-8 (EUC-JP, Shift_JIS, GB18030, Big5...): `-G`,
    /// `-E` and `-F` patterns are matched by glibc's regex engine in the locale's encoding,
    /// line by line ([`crate::multibyte`]); `-P` is not served there (GNU refuses it).
    pub multibyte: bool,
}

/// The match grep prints among several patterns' matches: the leftmost, the longest of
/// those that start there (the first of equals).
pub(crate) fn leftmost_longest(
    matches: impl Iterator<Item = Range<usize>>,
) -> Option<Range<usize>> {
    matches.min_by_key(|m| (m.start, std::cmp::Reverse(m.end)))
}

/// The combined pattern parsed as the matcher compiles it (`None` if it does not parse).
pub(crate) fn parse_hir(re: &str, o: MatchOptions, eol: u8) -> Option<regex_syntax::hir::Hir> {
    regex_syntax::ParserBuilder::new()
        .multi_line(true)
        .line_terminator(eol)
        .nest_limit(NEST_LIMIT)
        .unicode(o.utf8)
        .utf8(false)
        .case_insensitive(false)
        .build()
        .parse(re)
        .ok()
}
