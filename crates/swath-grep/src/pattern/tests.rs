//! The readers' tests: translations, GNU's errors and warnings, `-i`, deep nesting, and
//! comparisons with GNU grep itself (`/usr/bin/grep`, skipped where it is missing).

use super::*;
use proptest::prelude::*;
use regex::bytes::RegexBuilder;
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};

const GREP: &str = "/usr/bin/grep";

fn tr(pattern: &str, syntax: Syntax, utf8: bool) -> String {
    translate(pattern.as_bytes(), syntax, utf8)
        .unwrap_or_else(|e| panic!("{pattern:?}: unexpected error {e}"))
}

fn error(pattern: &[u8], syntax: Syntax, utf8: bool) -> String {
    match translate(pattern, syntax, utf8) {
        Ok(re) => panic!(
            "{:?}: expected an error, got {re:?}",
            pattern.escape_ascii()
        ),
        Err(e) => e.message,
    }
}

fn warnings(pattern: &str, syntax: Syntax, utf8: bool) -> Vec<String> {
    translate_with_warnings(pattern.as_bytes(), syntax, utf8)
        .unwrap()
        .1
}

/// What grep -c says about a pattern and a haystack: an error, or the count of
/// matching lines and the warnings.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Error(String),
    Count(usize, Vec<String>),
}

fn have_grep() -> bool {
    let ok = std::path::Path::new(GREP).exists();
    if !ok {
        swath_engine::testing::skip(&format!(
            "{GREP} is missing: the comparison with GNU grep is skipped"
        ));
    }
    ok
}

fn gnu(pattern: &[u8], syntax: Syntax, utf8: bool, hay: &[u8]) -> Outcome {
    let flag = match syntax {
        Syntax::Basic => "-G",
        Syntax::Extended => "-E",
        Syntax::Fixed => "-F",
        Syntax::Perl => "-P",
    };
    let mut child = Command::new(GREP)
        .env_clear()
        .env("LC_ALL", if utf8 { "C.UTF-8" } else { "C" })
        .env("DEB_GREP_ENABLE_STRAY_BACKSLASH_WARN", "1")
        .args(["-c", "-a", flag, "-e"])
        .arg(OsStr::from_bytes(pattern))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run grep");
    // grep exits without reading when the pattern is bad: a broken pipe is expected.
    let _ = child.stdin.take().unwrap().write_all(hay);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .map(|l| l.strip_prefix("/usr/bin/grep: ").unwrap_or(l))
        .collect();
    if out.status.code() == Some(2) {
        return Outcome::Error(lines.last().copied().unwrap_or("").to_owned());
    }
    let warnings = lines
        .iter()
        .filter_map(|l| l.strip_prefix("warning: "))
        .map(str::to_owned)
        .collect();
    let count = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    Outcome::Count(count, warnings)
}

fn lines(hay: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = hay.strip_suffix(b"\n").unwrap_or(hay);
    let none = hay.is_empty();
    body.split(|&b| b == b'\n').filter(move |_| !none)
}

fn ours(pattern: &[u8], syntax: Syntax, utf8: bool, hay: &[u8]) -> Outcome {
    match translate_with_warnings(pattern, syntax, utf8) {
        Err(e) => Outcome::Error(e.message),
        Ok((re, warnings)) => {
            let regex = RegexBuilder::new(&re)
                .multi_line(true)
                .unicode(utf8)
                .build()
                .unwrap_or_else(|e| panic!("{:?} -> {re:?}: {e}", pattern.escape_ascii()));
            for m in regex.find_iter(hay) {
                assert!(!m.as_bytes().contains(&b'\n'), "{re:?} matched a newline");
            }
            let count = lines(hay).filter(|l| regex.is_match(l)).count();
            Outcome::Count(count, warnings)
        }
    }
}

/// Differences swath does not reproduce (documented in docs/gnu/grep-3.8-patterns.md).
fn known_divergence(
    pattern: &[u8],
    syntax: Syntax,
    utf8: bool,
    hay: &[u8],
    gnu: &Outcome,
    ours: &Outcome,
) -> bool {
    let has = |s: &[u8]| pattern.windows(s.len()).any(|w| w == s);
    // Where the two readings differ and the DFA cannot run the pattern, grep keeps the
    // lines both accept; swath takes glibc's reading, which accepts more.
    if let (Outcome::Count(g, gw), Outcome::Count(o, ow)) = (gnu, ours) {
        let reading = read(pattern, syntax == Syntax::Extended, utf8).unwrap();
        let disagree = syntax != Syntax::Fixed
            && !dfa_can_run(&reading.dfa, utf8)
            && emit(&reading.glibc, utf8, b'\n') != emit(&reading.dfa, utf8, b'\n');
        if disagree && g <= o && gw == ow {
            return true;
        }
    }
    // A back-reference GNU accepts is refused.
    if matches!(gnu, Outcome::Count(..))
        && matches!(ours, Outcome::Error(m) if m.starts_with("back-references"))
    {
        return true;
    }
    // glibc's word anchors take a byte of invalid UTF-8 for a letter.
    utf8 && std::str::from_utf8(hay).is_err()
        && [&b"\\<"[..], b"\\>", b"\\b", b"\\B"].iter().any(|s| has(s))
}

fn compare(pattern: &[u8], syntax: Syntax, utf8: bool, hay: &[u8]) -> Result<(), String> {
    let g = gnu(pattern, syntax, utf8, hay);
    let o = ours(pattern, syntax, utf8, hay);
    if g == o || known_divergence(pattern, syntax, utf8, hay, &g, &o) {
        return Ok(());
    }
    Err(format!(
        "pattern {:?} ({syntax:?}, utf8 {utf8}) -> {:?}\nhaystack {:?}\nGNU:  {g:?}\nours: {o:?}",
        pattern.escape_ascii().to_string(),
        translate(pattern, syntax, utf8),
        hay.escape_ascii().to_string(),
    ))
}

const HAY: &[u8] =
    b"a\nb\nab\nba\naab\nabab\n\n \na b\n*a\n+a\n?a\na{1}\n{1}a\n1}a\na{\na{x\n(a)\na|b\n\
a$b\na$)x\na^b\n^a\n\\a\n\\\n-\n]\n[a]\n:a:\n\xc3\xa9\n\xc3\xa9\xc3\xa9\na\xc3\xa9b\n\xff\na\xffb\n\
\xc3\nx\ty\nA\nAB\n_a_\n123\nfoo bar\nfoo-bar\n\x01\n{\n}\n{}\n,\na{1,2}b\n";

/// Nesting limits, on a thread with room for them.
fn deep_nesting() {
    let too_deep = STACK_OVERFLOW;
    // Too deep, balanced or not: GNU's stack overflow; unclosed but not that deep:
    // glibc's own message.
    let deep =
        |open: &str, close: &str, n: usize| format!("{}a{}", open.repeat(n), close.repeat(n));
    assert_eq!(
        error(
            deep("(", ")", MAX_NESTING + 1).as_bytes(),
            Syntax::Extended,
            false
        ),
        too_deep
    );
    assert_eq!(
        error(
            deep("\\(", "\\)", MAX_NESTING + 1).as_bytes(),
            Syntax::Basic,
            true
        ),
        too_deep
    );
    assert_eq!(
        error(&[b'('; 10_000], Syntax::Extended, false),
        "Unmatched ( or \\("
    );
    assert_eq!(error(&[b'('; 30_000], Syntax::Extended, false), too_deep);
    assert_eq!(
        error("\\(".repeat(10_000).as_bytes(), Syntax::Basic, true),
        "Unmatched ( or \\("
    );
    // 300 levels, as GNU reads them.
    assert!(translate(deep("(", ")", 300).as_bytes(), Syntax::Extended, true).is_ok());
}

#[test]
fn plain_translations() {
    assert_eq!(tr("abc", Syntax::Basic, false), "abc");
    assert_eq!(tr("", Syntax::Basic, false), "");
    assert_eq!(tr("a.c", Syntax::Basic, true), r"a[^\n]c");
    assert_eq!(tr("a.c", Syntax::Basic, false), r"a(?-u:[^\n])c");
    assert_eq!(tr(r"a\(b\)*", Syntax::Basic, false), "ab*");
    assert_eq!(tr(r"\(ab\)*", Syntax::Basic, false), "(?:ab)*");
    assert_eq!(tr("(ab)+|c", Syntax::Extended, false), "(?:(?:ab)+|c)");
    assert_eq!(tr(r"a\{2,3\}", Syntax::Basic, false), "a{2,3}");
    assert_eq!(
        tr("a{2,}b{,3}c{4}", Syntax::Extended, false),
        "a{2,}b{0,3}c{4}"
    );
    assert_eq!(tr("a+?", Syntax::Extended, false), "a*");
    assert_eq!(tr("a**", Syntax::Extended, false), "a*");
    assert_eq!(tr("é", Syntax::Basic, true), "é");
    assert_eq!(tr("é", Syntax::Basic, false), r"(?-u:\xC3)(?-u:\xA9)");
    assert_eq!(tr("a+b?c|d", Syntax::Basic, false), r"a\+b\?c\|d");
    assert_eq!(tr(r"a\+b\?c\|d", Syntax::Basic, false), "(?:a+b?c|d)");
}

#[test]
fn anchors_and_escapes() {
    assert_eq!(tr("^a$", Syntax::Basic, false), "^a$");
    assert_eq!(tr("a^b$c", Syntax::Basic, false), r"a\^b\$c");
    assert_eq!(tr(r"\(^a$\)", Syntax::Basic, false), "^a$");
    assert_eq!(tr(r"x\|^a$\|y", Syntax::Basic, false), "(?:x|^a$|y)");
    assert_eq!(tr("^*", Syntax::Basic, false), r"^\*");
    assert_eq!(tr("*a", Syntax::Basic, false), r"\*a");
    assert_eq!(tr(r"\`a\'", Syntax::Basic, false), "^a$");
    assert_eq!(tr(r"\<a\>", Syntax::Basic, true), r"\b{start}a\b{end}");
    assert_eq!(tr(r"\ba\B", Syntax::Basic, false), r"(?-u:\b)a(?-u:\B)");
    assert_eq!(
        tr(r"\w\W", Syntax::Basic, false),
        r"(?-u:[0-9A-Z_a-z])(?-u:[^\x0A0-9A-Z_a-z])"
    );
    assert_eq!(
        tr(r"\s", Syntax::Basic, false),
        r"(?-u:[\x09\x0B-\x0D\x20])"
    );
    assert_eq!(
        tr(r"\S", Syntax::Basic, true),
        r"[^[\t-\r\x20\p{Zs}\x{2028}\x{2029}--\x{A0}\x{2007}\x{202F}]\n]"
    );
    assert_eq!(
        tr(r"\.\*\[\]\^\$\\", Syntax::Basic, false),
        r"\.\*\[\]\^\$\\"
    );
    assert_eq!(tr(r"\d\t", Syntax::Basic, false), "dt");
    // The ERE quirks of the DFA, which decides in the C locale.
    assert_eq!(tr("^*a", Syntax::Extended, false), "a");
    assert_eq!(tr("{1}a", Syntax::Extended, false), "a");
    assert_eq!(tr("a{1", Syntax::Extended, false), r"a\{1");
    assert_eq!(tr("a{,", Syntax::Extended, false), r"a\{,");
    assert_eq!(tr("a)", Syntax::Extended, false), r"a\)");
    assert_eq!(tr("()", Syntax::Extended, false), "");
    assert_eq!(tr("a|", Syntax::Extended, false), "(?:a|)");
    // ... and glibc's, which decides when the DFA cannot run the pattern.
    assert_eq!(
        tr("^*a[[:alpha:]]", Syntax::Extended, true),
        r"^a[[\p{Alphabetic}\p{Nd}--0-9]]"
    );
    assert_eq!(tr("{1}a\\<", Syntax::Extended, true), r"1\}a\b{start}");
    // A BRE `$` before a plain `)` that is not last is an anchor for the DFA.
    assert_eq!(tr("a$)x", Syntax::Basic, false), r"a$\)x");
    assert_eq!(tr("a$)", Syntax::Basic, false), r"a\$\)");
}

#[test]
fn bracket_expressions() {
    assert_eq!(tr("[abc]", Syntax::Basic, false), "(?-u:[a-c])");
    assert_eq!(tr("[]a]", Syntax::Basic, true), r"[\x{5D}a]");
    assert_eq!(tr("[^]a]", Syntax::Basic, false), r"(?-u:[^\x0A\x5Da])");
    assert_eq!(tr("[a-]", Syntax::Basic, false), r"(?-u:[\x2Da])");
    assert_eq!(tr(r"[\]", Syntax::Basic, false), r"(?-u:[\x5C])");
    assert_eq!(tr("[[:digit:]x]", Syntax::Basic, true), "[x0-9]");
    assert_eq!(tr("[[:alpha:]]", Syntax::Basic, false), "(?-u:[A-Za-z])");
    assert_eq!(
        tr("[[:space:]]", Syntax::Basic, true),
        r"[[\t-\r\x20\p{Zs}\x{2028}\x{2029}--\x{A0}\x{2007}\x{202F}]--\n]"
    );
    assert_eq!(tr("[^a]", Syntax::Basic, true), r"[^a\n]");
    assert_eq!(tr("[[=a=][.b.]]", Syntax::Basic, true), "[ab]");
    assert_eq!(tr("[[.-.]a]", Syntax::Basic, false), r"(?-u:[\x2Da])");
    assert_eq!(tr("[é]", Syntax::Basic, true), r"[\x{E9}]");
    // In UTF-8 a byte of invalid UTF-8 in a set matches nothing; a range of bytes covers
    // the code points with those values.
    assert_eq!(
        translate(b"[\xff]", Syntax::Basic, true).unwrap(),
        r"[^\x{0}-\x{10FFFF}]"
    );
    assert_eq!(
        translate(b"[\xe0-\xff]", Syntax::Basic, true).unwrap(),
        r"[\x{E0}-\x{FF}]"
    );
    assert_eq!(
        translate(b"[\xe0-\xff]", Syntax::Basic, false).unwrap(),
        r"(?-u:[\xE0-\xFF])"
    );
    assert_eq!(
        translate(b"\xff", Syntax::Basic, true).unwrap(),
        r"(?-u:\xFF)"
    );
}

#[test]
fn error_messages() {
    let cases: &[(&[u8], Syntax, &str)] = &[
        (b"[a", Syntax::Basic, "Unmatched [, [^, [:, [., or [="),
        (b"[]", Syntax::Basic, "Unmatched [, [^, [:, [., or [="),
        (
            b"[[:alpha:]",
            Syntax::Basic,
            "Unmatched [, [^, [:, [., or [=",
        ),
        (b"[", Syntax::Basic, "Invalid regular expression"),
        (b"[^", Syntax::Extended, "Invalid regular expression"),
        (b"\\(a", Syntax::Basic, "Unmatched ( or \\("),
        (b"(a", Syntax::Extended, "Unmatched ( or \\("),
        (b"(*)", Syntax::Extended, "Unmatched ( or \\("),
        (b"a\\)", Syntax::Basic, "Unmatched ) or \\)"),
        (b"a\\{1", Syntax::Basic, "Unmatched \\{"),
        (b"a\\{1,2", Syntax::Basic, "Unmatched \\{"),
        (b"a\\{x\\}", Syntax::Basic, "Invalid content of \\{\\}"),
        (b"a{2,1}", Syntax::Extended, "Invalid content of \\{\\}"),
        (b"a{}", Syntax::Extended, "Invalid content of \\{\\}"),
        (b"a{1,2,3}", Syntax::Extended, "Invalid content of \\{\\}"),
        (b"a\\{1\\,2\\}", Syntax::Basic, "invalid content of \\{\\}"),
        (b"a{32768}", Syntax::Extended, "Regular expression too big"),
        (
            b"a\\{1,99999\\}",
            Syntax::Basic,
            "Regular expression too big",
        ),
        (b"{32768}", Syntax::Extended, "regular expression too big"),
        (b"[z-a]", Syntax::Basic, "Invalid range end"),
        (b"[a-c-e]", Syntax::Basic, "Invalid range end"),
        (b"[[:alpha:]-z]", Syntax::Basic, "Invalid range end"),
        (b"[a---b]", Syntax::Basic, "Invalid range end"),
        (b"[[:foo:]]", Syntax::Basic, "Invalid character class name"),
        (b"[[:a:]", Syntax::Basic, "Invalid character class name"),
        (b"[[.space.]]", Syntax::Basic, "Invalid collation character"),
        (
            b"[:space:]",
            Syntax::Basic,
            "character class syntax is [[:space:]], not [:space:]",
        ),
        (
            b"[:alpha:]",
            Syntax::Extended,
            "character class syntax is [[:space:]], not [:space:]",
        ),
        (b"a\\", Syntax::Basic, "Trailing backslash"),
        (b"\\", Syntax::Extended, "Trailing backslash"),
        (b"\\1", Syntax::Basic, "Invalid back reference"),
        (b"(a)\\2", Syntax::Extended, "Invalid back reference"),
        (b"\\(a\\)\\|\\1", Syntax::Basic, "Invalid back reference"),
        (
            b"\\(a\\)\\1",
            Syntax::Basic,
            "back-references are not supported: \\1",
        ),
        (
            b"(a)(b)\\2",
            Syntax::Extended,
            "back-references are not supported: \\2",
        ),
    ];
    for &(pattern, syntax, message) in cases {
        for utf8 in [false, true] {
            assert_eq!(
                error(pattern, syntax, utf8),
                message,
                "{:?}",
                pattern.escape_ascii()
            );
        }
    }
    // Collation in C.UTF-8 has no rules: a multibyte end of a range is an error.
    assert_eq!(
        error("[a-é]".as_bytes(), Syntax::Basic, true),
        "Invalid collation character"
    );
    assert_eq!(
        error("[[=é=]]".as_bytes(), Syntax::Basic, true),
        "Invalid collation character"
    );
    // Deep patterns recurse up to 4 KiB a group in the tests' build: more than a test
    // thread's 2 MiB (the search module reads them on a thread made for them).
    std::thread::Builder::new()
        .stack_size((MAX_NESTING + 2) * (4 << 10))
        .spawn(deep_nesting)
        .unwrap()
        .join()
        .unwrap();
    // -P: PCRE2's UTF-8 errors.
    assert_eq!(
        error(b"a\xff", Syntax::Perl, true),
        "UTF-8 error: illegal byte (0xfe or 0xff)"
    );
    assert_eq!(
        error(b"\xe2\x82", Syntax::Perl, true),
        "UTF-8 error: 1 byte missing at end"
    );
    assert_eq!(
        error(b"\xc3a", Syntax::Perl, true),
        "UTF-8 error: byte 2 top bits not 0x80"
    );
    assert_eq!(
        error(b"\xed\xa0\x80", Syntax::Perl, true),
        "UTF-8 error: code points 0xd800-0xdfff are not defined"
    );
    assert_eq!(
        error(b"\x80", Syntax::Perl, true),
        "UTF-8 error: isolated byte with 0x80 bit set"
    );
    assert_eq!(format!("{}", PatternError::new("x")), "x");
}

#[test]
fn warning_texts() {
    assert_eq!(warnings(r"\d", Syntax::Basic, false), ["stray \\ before d"]);
    assert_eq!(
        warnings(r"a\ ", Syntax::Extended, false),
        ["stray \\ before white space"]
    );
    assert_eq!(warnings("\\é", Syntax::Basic, true), ["stray \\ before é"]);
    assert_eq!(
        warnings("\\é", Syntax::Basic, false),
        ["stray \\ before unprintable character"]
    );
    assert_eq!(
        warnings(r"\-a", Syntax::Basic, false),
        ["stray \\ before -"]
    );
    assert_eq!(
        warnings(r"\]\}\.", Syntax::Basic, false),
        Vec::<String>::new()
    );
    assert_eq!(
        warnings(r"\{1\}a", Syntax::Basic, false),
        ["stray \\ before {"]
    );
    assert_eq!(
        warnings(r"\?a\+", Syntax::Basic, false),
        ["stray \\ before ?"]
    );
    assert_eq!(
        warnings("**", Syntax::Extended, false),
        ["* at start of expression"; 2]
    );
    assert_eq!(
        warnings("*a(+b|{1}c)", Syntax::Extended, false),
        [
            "* at start of expression",
            "+ at start of expression",
            "{...} at start of expression"
        ]
    );
    assert_eq!(
        warnings("?a", Syntax::Extended, true),
        ["? at start of expression"]
    );
    assert_eq!(warnings("*a", Syntax::Basic, false), Vec::<String>::new());
}

#[test]
fn fixed_and_perl() {
    assert_eq!(tr("a.b*[c]\\", Syntax::Fixed, false), r"a\.b\*\[c\]\\");
    assert_eq!(
        translate(b"\xff\xc3\xa9", Syntax::Fixed, true).unwrap(),
        r"(?-u:\xFF)é"
    );
    assert_eq!(
        translate(b"\xc3\xa9", Syntax::Fixed, false).unwrap(),
        r"(?-u:\xC3)(?-u:\xA9)"
    );
    assert_eq!(tr(r"\d+(?:x)", Syntax::Perl, true), r"\d+(?:x)");
    assert_eq!(
        translate(b"a\\\xff[\xfe]\\\\", Syntax::Perl, false).unwrap(),
        r"a\xFF[\xFE]\\"
    );
}

#[test]
fn deep_and_long_patterns_are_fine() {
    // As deep as allowed, from a thread with a small stack: read where it fits.
    let nested = format!("{}a{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
    let translated = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let groups = crate::stack::group_opens(nested.as_bytes());
            crate::stack::with_stack_for(groups, || {
                translate(nested.as_bytes(), Syntax::Extended, true)
            })
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(translated.unwrap(), "a");
    let stars = format!("a{}", "*".repeat(100_000));
    assert_eq!(tr(&stars, Syntax::Extended, false), "a*");
    let zeros = format!("a{}b", "{0}".repeat(10_000));
    assert_eq!(tr(&zeros, Syntax::Extended, false), "b");
    let dollars = "$".repeat(100_000);
    assert!(translate(dollars.as_bytes(), Syntax::Basic, false).is_ok());
    let repeats = format!("a{}", "{2}".repeat(MAX_REPEAT_NESTING + 1));
    for syntax in [Syntax::Extended, Syntax::Basic] {
        let pattern = if syntax == Syntax::Basic {
            repeats.replace('{', "\\{").replace('}', "\\}")
        } else {
            repeats.clone()
        };
        assert_eq!(
            error(pattern.as_bytes(), syntax, false),
            "nesting more than 1000 levels deep is not supported"
        );
    }
}

/// Corner cases, each run by GNU grep and by the regex crate over [`HAY`].
#[test]
fn same_as_gnu_on_corner_cases() {
    if !have_grep() {
        return;
    }
    let patterns: &[&[u8]] = &[
        b"a",
        b"^a",
        b"a$",
        b"^$",
        b"",
        b"a*",
        b"*a",
        b"^*a",
        b"^*",
        b"a**",
        b"\\(*a\\)",
        b"(*a)",
        b"a|*b",
        b"a\\|*b",
        b"{1}a",
        b"a{1}",
        b"a{1",
        b"a{",
        b"a{x",
        b"a{,2}",
        b"a\\{1\\}",
        b"\\{1\\}a",
        b"a\\{,\\}",
        b"a{1\\,2}",
        b"^{1}a",
        b"a^*b",
        b"a$*b",
        b"a\\<*b",
        b"a$)x",
        b"a$|x",
        b"a$)",
        b"a$\\)",
        b"()",
        b"a|",
        b"|a",
        b"(|a)",
        b")",
        b"a)",
        b"a\\|",
        b"\\(\\)",
        b"x\\(^a\\)",
        b"\\(^a\\)",
        b"a\\(^b\\)",
        b"[]a]",
        b"[^]a]",
        b"[a-]",
        b"[]-a]",
        b"[!--]",
        b"[[:alpha:]]",
        b"[^[:alpha:]]",
        b"[[:punct:]]",
        b"[[:space:]]x",
        b"[[:upper:]]",
        b"[[:print:]]",
        b"[[:cntrl:]]",
        b"[[=a=]]",
        b"[[.-.]]",
        b"[[.a.]-c]",
        b"[a-[.c.]]",
        b"[\\]",
        b"[\\a]",
        b"[\xff]",
        b"[^\xff]",
        b"[a-\xff]",
        b"\xff",
        b"\xc3",
        b"\xa9",
        b"\xff*a",
        b"\\w",
        b"\\W",
        b"\\s",
        b"\\S",
        b"\\w\\W",
        b"\\<a",
        b"a\\>",
        b"\\ba\\b",
        b"\\Ba",
        b"\\`a",
        b"a\\'",
        b"\\d",
        b"\\{",
        b"\\}",
        b"\\-",
        b"a\\-",
        b"\\.",
        b"^\\^",
        b".",
        b"^.$",
        b"^..$",
        b"^.*$",
        b"a.b",
        "é".as_bytes(),
        "^é$".as_bytes(),
        "é*x".as_bytes(),
        "[é]".as_bytes(),
        b"[[:alpha:]]*",
        b"^[^a]*$",
        b"+a",
        b"?a",
        b"a+?",
        b"a?*",
        b"(a|b)*c",
        b"a{0}b",
        b"(a){0}b",
        b"x*{2}",
        b"\\(a\\|b\\)\\{2\\}",
        b"a\\{0,1\\}b",
    ];
    let mut failures = Vec::new();
    for &pattern in patterns {
        for syntax in [Syntax::Basic, Syntax::Extended, Syntax::Fixed] {
            for utf8 in [false, true] {
                if let Err(e) = compare(pattern, syntax, utf8, HAY) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The pieces random patterns are made of.
const TOKENS: &[&str] = &[
    "a",
    "b",
    "a",
    "b",
    "é",
    ".",
    "*",
    "+",
    "?",
    "|",
    "(",
    ")",
    "{",
    "}",
    "\\",
    "[",
    "]",
    "^",
    "$",
    "-",
    "1",
    "2",
    ",",
    ":",
    " ",
    "\\(",
    "\\)",
    "\\|",
    "\\{1,2\\}",
    "\\{",
    "\\}",
    "\\+",
    "\\?",
    "\\.",
    "\\*",
    "\\1",
    "{1,2}",
    "{,2}",
    "{2}",
    "{0}",
    "{1",
    "[[:alpha:]]",
    "[^a]",
    "[a-c]",
    "[]a]",
    "[:space:]",
    "[[:digit:]]",
    "[[:space:]]",
    "[[=a=]]",
    "[[.-.]]",
    "[é]",
    "\\w",
    "\\W",
    "\\s",
    "\\S",
    "\\<",
    "\\>",
    "\\b",
    "\\B",
    "\\`",
    "\\'",
    "\\d",
    "\\-",
    "\u{ff}",
    "[[:upper:]]",
    "[[:punct:]]",
    "[a-]",
    "[^]a]",
    "[[.a.]-c]",
    "[a-é]",
    "[\u{ff}]",
    "{1}",
    "{,}",
    "\\{,2\\}",
    "\\{0\\}",
    ".*",
    "x",
];

fn pattern_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..10).prop_map(|toks| {
        toks.iter()
            .flat_map(|t| {
                // `\u{ff}` stands for the byte 0xFF, which is not UTF-8.
                t.replace('\u{ff}', "\0")
                    .bytes()
                    .map(|b| if b == 0 { 0xff } else { b })
                    .collect::<Vec<u8>>()
            })
            .collect()
    })
}

fn haystack_strategy() -> impl Strategy<Value = Vec<u8>> {
    let pieces: &[&[u8]] = &[
        b"a",
        b"b",
        b"\n",
        b" ",
        b"-",
        b"1",
        b"{",
        b"}",
        b"(",
        b")",
        b"*",
        b"+",
        b"|",
        b"\\",
        b":",
        b"\xc3\xa9",
        b"\xff",
        b"\xc3",
        b"A",
        b"_",
        b"x",
        b"$",
        b"]",
        b",",
    ];
    prop::collection::vec(prop::sample::select(pieces), 0..24).prop_map(|p| p.concat())
}

proptest! {
    // PROPTEST_CASES=20000 for a longer search.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(300),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random patterns and haystacks: the same errors, warnings and matching lines as GNU
    /// grep -c, in the C and the C.UTF-8 locale.
    #[test]
    fn same_as_gnu_on_random_patterns(
        pattern in pattern_strategy(),
        ere in any::<bool>(),
        hay in haystack_strategy(),
    ) {
        if !have_grep() {
            return Ok(());
        }
        let syntax = if ere { Syntax::Extended } else { Syntax::Basic };
        for utf8 in [false, true] {
            if let Err(e) = compare(&pattern, syntax, utf8, &hay) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}
