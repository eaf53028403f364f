//! Access-log line parsing by hand, at byte level: the Wide Finder 2 fields, the article-URI
//! test, and the Apache/nginx combined format for summaries.
//!
//! Nothing here allocates: fields are slices of the line. Each parser has a plain
//! reference (`*_naive`, written with `split` and a regular expression) that the tests check
//! it against.

/// The white space that separates Wide Finder 2 fields: space, tab, CR, vertical tab, form
/// feed (a newline ends the line before any of them is seen).
#[inline]
pub fn is_wf2_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// The fields a Wide Finder 2 line is read by (1-based positions 1, 6, 7, 9, 10, 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wf2Fields<'a> {
    /// Field 1: the client.
    pub client: &'a [u8],
    /// Field 6: the quoted method (`"GET` for the lines that count).
    pub method: &'a [u8],
    /// Field 7: the URI.
    pub uri: &'a [u8],
    /// Field 9: the status.
    pub status: &'a [u8],
    /// Field 10: the byte count.
    pub bytes: &'a [u8],
    /// Field 11: the quoted referrer.
    pub referrer: &'a [u8],
}

impl<'a> Wf2Fields<'a> {
    /// The fields Wide Finder 2 reads, from a line's first 11.
    #[inline]
    fn of(f: &[&'a [u8]]) -> Self {
        Wf2Fields {
            client: f[0],
            method: f[5],
            uri: f[6],
            status: f[8],
            bytes: f[9],
            referrer: f[10],
        }
    }
}

/// Splits `line` (no newline) at runs of white space and returns its fields 1, 6, 7, 9, 10
/// and 11, or `None` when it has fewer than 11 fields (a malformed line). Only the first 11
/// fields are looked at. On x86-64 the line is classified 64 bytes at a time (SSE2 compares
/// into a bit mask whose edges are the field boundaries); elsewhere byte by byte.
#[inline]
pub fn wf2_fields(line: &[u8]) -> Option<Wf2Fields<'_>> {
    #[cfg(target_arch = "x86_64")]
    {
        wf2_fields_sse2(line)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        wf2_fields_scalar(line)
    }
}

/// Bit i set when byte i of `chunk` (up to 64 bytes; missing bytes count as white space)
/// is Wide Finder 2 white space.
#[cfg(target_arch = "x86_64")]
#[inline]
fn space_mask(chunk: &[u8]) -> u64 {
    use std::arch::x86_64::*;
    let mut buf = [b' '; 64];
    let bytes: &[u8] = if chunk.len() >= 64 {
        &chunk[..64]
    } else {
        buf[..chunk.len()].copy_from_slice(chunk);
        &buf
    };
    let mut m = 0u64;
    for k in 0..4 {
        // SAFETY: `bytes` has 64 readable bytes, so each 16-byte unaligned load at 16 * k is
        // in bounds; SSE2 is part of the x86-64 baseline.
        let part = unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().add(16 * k) as *const __m128i);
            let sp = _mm_cmpeq_epi8(v, _mm_set1_epi8(b' ' as i8));
            // 9..=13 (tab, newline, vertical tab, form feed, CR): v - 9 <= 4 unsigned, via
            // min(v - 9, 4) == v - 9.
            let d = _mm_sub_epi8(v, _mm_set1_epi8(9));
            let ctl = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(4)), d);
            _mm_movemask_epi8(_mm_or_si128(sp, ctl)) as u32 as u64
        };
        m |= part << (16 * k);
    }
    m
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn wf2_fields_sse2(line: &[u8]) -> Option<Wf2Fields<'_>> {
    // The positions of the first 22 field edges. Edges alternate (the line starts in white
    // space), so edge 2k is where field k starts and edge 2k + 1 where it ends: storing
    // them in order needs no branch on which kind an edge is.
    let mut edge = [0usize; 22];
    let mut n = 0usize;
    // Whether the byte before the current chunk is white space (the line start counts).
    let mut prev_space = 1u64;
    let mut base = 0usize;
    'chunks: while base < line.len() {
        let w = space_mask(&line[base..]);
        let mut edges = w ^ ((w << 1) | prev_space);
        while edges != 0 {
            edge[n] = base + edges.trailing_zeros() as usize;
            edges &= edges - 1;
            n += 1;
            if n == 22 {
                break 'chunks;
            }
        }
        prev_space = w >> 63;
        base += 64;
    }
    if n == 21 && prev_space == 0 {
        // The 11th field runs to the end of a line a multiple of 64 bytes long.
        edge[21] = line.len();
        n = 22;
    }
    if n < 22 {
        return None;
    }
    // (The padding of a line's last chunk is white space, so no edge lies past its end.)
    let field = |k: usize| &line[edge[2 * k]..edge[2 * k + 1]];
    Some(Wf2Fields {
        client: field(0),
        method: field(5),
        uri: field(6),
        status: field(8),
        bytes: field(9),
        referrer: field(10),
    })
}

/// [`wf2_fields`] byte by byte.
#[inline]
pub fn wf2_fields_scalar(line: &[u8]) -> Option<Wf2Fields<'_>> {
    let mut f: [&[u8]; 11] = [&[]; 11];
    let mut n = 0usize;
    let mut i = 0usize;
    let len = line.len();
    while n < 11 {
        while i < len && is_wf2_space(line[i]) {
            i += 1;
        }
        if i == len {
            return None;
        }
        let start = i;
        while i < len && !is_wf2_space(line[i]) {
            i += 1;
        }
        f[n] = &line[start..i];
        n += 1;
    }
    Some(Wf2Fields::of(&f))
}

/// The reference for [`wf2_fields`]: a split on white space, keeping the non-empty pieces.
pub fn wf2_fields_naive(line: &[u8]) -> Option<Wf2Fields<'_>> {
    let f: Vec<&[u8]> = line
        .split(|&b| is_wf2_space(b))
        .filter(|p| !p.is_empty())
        .collect();
    (f.len() >= 11).then(|| Wf2Fields::of(&f))
}

/// A byte count: ASCII digits (saturating), `-` or anything else is 0.
#[inline]
pub fn byte_count(field: &[u8]) -> u64 {
    ascii_number(field).unwrap_or(0)
}

/// The value of a field of ASCII digits (saturating), or `None` when it is empty or holds
/// anything else. Each byte is read once: a mapped log that another process truncates may
/// change under the parser (the kernel zeroes the tail of the last page), so a check and a
/// later conversion could see different bytes.
#[inline]
fn ascii_number(field: &[u8]) -> Option<u64> {
    if field.is_empty() {
        return None;
    }
    field.iter().try_fold(0u64, |n, &b| {
        let d = b.wrapping_sub(b'0');
        (d < 10).then(|| n.saturating_mul(10).saturating_add(u64::from(d)))
    })
}

/// True when `uri` is a Wide Finder 2 article: `^/ongoing/When/\d\d\dx/\d\d\d\d/\d\d/\d\d/[^
/// .]+$`, with ASCII digits and the last part any bytes but space and `.`.
#[inline]
pub fn is_article(uri: &[u8]) -> bool {
    const HEAD: &[u8] = b"/ongoing/When/";
    let Some(rest) = uri.strip_prefix(HEAD) else {
        return false;
    };
    // ddd x / dddd / dd / dd /  = 3+1+1+4+1+2+1+2+1 = 16 bytes
    if rest.len() < 17 {
        return false;
    }
    let d = |i: usize| rest[i].is_ascii_digit();
    let shape = d(0)
        && d(1)
        && d(2)
        && rest[3] == b'x'
        && rest[4] == b'/'
        && d(5)
        && d(6)
        && d(7)
        && d(8)
        && rest[9] == b'/'
        && d(10)
        && d(11)
        && rest[12] == b'/'
        && d(13)
        && d(14)
        && rest[15] == b'/';
    shape && rest[16..].iter().all(|&b| b != b' ' && b != b'.')
}

/// The referrer as Wide Finder 2 counts it: the field without its surrounding quotes, or
/// `None` for `"-"` and for self-references (fields starting with `self_prefix`, which
/// includes the opening quote).
#[inline]
pub fn counted_referrer<'a>(field: &'a [u8], self_prefix: &[u8]) -> Option<&'a [u8]> {
    if field == b"\"-\"" || field.starts_with(self_prefix) {
        return None;
    }
    let f = field.strip_prefix(b"\"").unwrap_or(field);
    Some(f.strip_suffix(b"\"").unwrap_or(f))
}

/// One request of an Apache common or combined (or nginx default) log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Request<'a> {
    /// The client (host name or address).
    pub client: &'a [u8],
    /// The authenticated user (`%u`; `-` for none).
    pub user: &'a [u8],
    /// The request line as logged (between the quotes, escapes left in).
    pub request: &'a [u8],
    /// The time stamp between the brackets, e.g. `10/Oct/2000:13:55:36 -0700`.
    pub time: &'a [u8],
    /// The method of the request line.
    pub method: &'a [u8],
    /// The URI of the request line (the whole request line when it has no spaces).
    pub uri: &'a [u8],
    /// The status code (three digits).
    pub status: u16,
    /// The response size (`-` is 0).
    pub bytes: u64,
    /// The referrer, without quotes (empty in the common format).
    pub referrer: &'a [u8],
    /// The user agent, without quotes (empty in the common format).
    pub agent: &'a [u8],
}

/// Where the first `"` of `s` that no backslash escapes is (Apache's and nginx's `\"` and
/// `\\` escapes): the end of a quoted field whose content starts `s`. `None` when there is
/// none (a field cut short). The one scanner of quoted fields, for the hand parser, the
/// log templates and the AWS readers.
#[inline]
pub fn closing_quote(s: &[u8]) -> Option<usize> {
    let mut j = 0;
    loop {
        let k = j + memchr::memchr2(b'"', b'\\', s.get(j..)?)?;
        if s[k] == b'\\' {
            j = k + 2;
            continue;
        }
        return Some(k);
    }
}

/// A quoted field starting at `line[i] == '"'`, with Apache's `\"` and `\\` escapes: the
/// content (escapes left in) and the index after the closing quote.
#[inline]
fn quoted(line: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if line.get(i) != Some(&b'"') {
        return None;
    }
    let k = i + 1 + closing_quote(&line[i + 1..])?;
    Some((&line[i + 1..k], k + 1))
}

/// An unquoted field at `i` (up to a space): the field and the index after it.
#[inline]
fn token(line: &[u8], i: usize) -> Option<(&[u8], usize)> {
    let rest = line.get(i..)?;
    let n = memchr::memchr(b' ', rest).unwrap_or(rest.len());
    (n > 0).then(|| (&rest[..n], i + n))
}

#[inline]
fn space(line: &[u8], i: usize) -> Option<usize> {
    (line.get(i) == Some(&b' ')).then_some(i + 1)
}

/// Whether `n` is an HTTP status as GoAccess takes one (100 to 599): a line with another
/// is a failed line (`parse_specifier`, `'s'`, in GoAccess's `parser.c`).
#[inline]
pub fn is_http_status(n: u64) -> bool {
    (100..=599).contains(&n)
}

/// Parses an Apache common or combined line (`%h %l %u %t "%r" %>s %b` and optionally
/// ` "%{Referer}i" "%{User-agent}i"`; nginx's default format is the same), or `None` when
/// the line does not have that shape.
pub fn parse_request(line: &[u8]) -> Option<Request<'_>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (client, i) = token(line, 0)?;
    let (_ident, i) = token(line, space(line, i)?)?;
    let i = space(line, i)?;
    // %u may itself contain no spaces; the time follows in brackets.
    let (user, i) = token(line, i)?;
    let i = space(line, i)?;
    if line.get(i) != Some(&b'[') {
        return None;
    }
    let close = i + memchr::memchr(b']', &line[i..])?;
    let time = &line[i + 1..close];
    let i = space(line, close + 1)?;
    let (request, i) = quoted(line, i)?;
    let i = space(line, i)?;
    let (status, i) = token(line, i)?;
    if status.len() != 3 {
        return None;
    }
    let status = ascii_number(status)?;
    if !is_http_status(status) {
        return None;
    }
    let status = status as u16;
    let i = space(line, i)?;
    let (bytes, i) = token(line, i)?;
    let bytes = if bytes == b"-" {
        0
    } else {
        ascii_number(bytes)?
    };
    let mut r = Request {
        client,
        user,
        request,
        time,
        status,
        bytes,
        ..Request::default()
    };
    let mut parts = request.splitn(3, |&b| b == b' ');
    let first = parts.next().unwrap_or_default();
    match parts.next() {
        Some(uri) => {
            r.method = first;
            r.uri = uri;
        }
        None => r.uri = first,
    }
    if i == line.len() {
        return Some(r);
    }
    let i = space(line, i)?;
    // A referrer or agent whose closing quote is missing (a line cut short) leaves both
    // unknown (the referrer `-`, the agent empty: GoAccess gives it no browser), as
    // GoAccess reads it; the line is still a request.
    let Some((referrer, i)) = quoted(line, i) else {
        r.referrer = b"-";
        return cut_short(line, i, r);
    };
    r.referrer = referrer;
    let i = space(line, i)?;
    match quoted(line, i) {
        Some((agent, _)) => r.agent = agent,
        None => return cut_short(line, i, r),
    }
    Some(r)
}

/// The request `r` whose quoted field at `line[i]` runs to the end of the line without its
/// closing quote: its agent empty (none); `None` when no field starts there.
fn cut_short<'a>(line: &'a [u8], i: usize, mut r: Request<'a>) -> Option<Request<'a>> {
    if line.get(i) != Some(&b'"') {
        return None;
    }
    r.agent = b"";
    Some(r)
}

/// Month number (1-12) of an English three-letter abbreviation.
pub fn month_number(m: &[u8]) -> Option<u8> {
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    MONTHS.iter().position(|x| &x[..] == m).map(|p| p as u8 + 1)
}

/// Day (`YYYY-MM-DD` as a number YYYYMMDD) and hour of an Apache time stamp
/// `DD/Mon/YYYY:HH:MM:SS +ZZZZ`, in the log's own time zone.
pub fn day_and_hour(time: &[u8]) -> Option<(u32, u8)> {
    if time.len() < 14 || time[2] != b'/' || time[6] != b'/' || time[11] != b':' {
        return None;
    }
    let num = |s: &[u8]| -> Option<u32> {
        s.iter().try_fold(0u32, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let day = num(&time[0..2])?;
    let month = u32::from(month_number(&time[3..6])?);
    let year = num(&time[7..11])?;
    let hour = num(&time[12..14])?;
    (hour < 24).then_some((year * 10000 + month * 100 + day, hour as u8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fields_ending_at_chunk_edges() {
        // Ten one-byte fields, then an 11th (and maybe a 12th) stretched so that its end,
        // or the line's, falls on and around the 64-byte chunk edges.
        for len in 23..=200usize {
            for twelfth in [false, true] {
                let mut line = b"a b c d e f g h i j ".to_vec();
                let rest = len - line.len() - if twelfth { 2 } else { 0 };
                line.extend(std::iter::repeat_n(b'k', rest));
                if twelfth {
                    line.extend_from_slice(b" l");
                }
                assert_eq!(wf2_fields(&line), wf2_fields_naive(&line), "{len}");
                line.truncate(len - 1);
                assert_eq!(wf2_fields(&line), wf2_fields_naive(&line), "{len}");
            }
        }
    }

    #[test]
    fn a_last_quoted_field_cut_short_is_unknown_and_the_line_a_request() {
        let head = b"1.2.3.4 - - [10/Oct/2007:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 123";
        let line = |tail: &[u8]| [&head[..], tail].concat();
        let cut_agent = line(b" \"http://r/\" \"Mozilla/5.0 (cut");
        let r = parse_request(&cut_agent).unwrap();
        assert_eq!(
            (r.referrer, r.agent, r.bytes),
            (&b"http://r/"[..], &b""[..], 123)
        );
        let cut_referrer = line(b" \"http://r/ and more");
        let r = parse_request(&cut_referrer).unwrap();
        assert_eq!((r.referrer, r.agent), (&b"-"[..], &b""[..]));
        // An escaped quote does not close a field; a line ending in one is cut short.
        let escaped = line(b" \"-\" \"UA \\\"");
        assert_eq!(parse_request(&escaped).unwrap().agent, b"");
        // Whole fields are read as before; a field that is not quoted at all is not a
        // request.
        let whole = line(b" \"-\" \"UA x\"");
        assert_eq!(parse_request(&whole).unwrap().agent, b"UA x");
        assert!(parse_request(&line(b" \"-\" UA")).is_none());
        assert!(parse_request(&line(b" -")).is_none());
    }

    #[test]
    fn wf2_fields_of_a_combined_line() {
        let line =
            b"1.2.3.4 - - [10/Oct/2007:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 123 \"-\" \"UA x\"";
        let f = wf2_fields(line).unwrap();
        assert_eq!(f.client, b"1.2.3.4");
        assert_eq!(f.method, b"\"GET");
        assert_eq!(f.uri, b"/a");
        assert_eq!(f.status, b"200");
        assert_eq!(f.bytes, b"123");
        assert_eq!(f.referrer, b"\"-\"");
        assert_eq!(wf2_fields(b"a b c d e f g h i j"), None);
    }

    #[test]
    fn articles() {
        assert!(is_article(b"/ongoing/When/200x/2007/10/09/Foo-Bar"));
        assert!(!is_article(b"/ongoing/When/200x/2007/10/09/"));
        assert!(!is_article(b"/ongoing/When/200x/2007/10/09/a.b"));
        assert!(!is_article(b"/ongoing/When/20xx/2007/10/09/a"));
        assert!(is_article(b"/ongoing/When/200x/2007/10/09/\xff"));
    }

    #[test]
    fn referrers() {
        let me = b"\"http://www.tbray.org/ongoing/";
        assert_eq!(counted_referrer(b"\"-\"", me), None);
        assert_eq!(
            counted_referrer(b"\"http://www.tbray.org/ongoing/x\"", me),
            None
        );
        assert_eq!(
            counted_referrer(b"\"http://a/\"", me),
            Some(&b"http://a/"[..])
        );
        assert_eq!(counted_referrer(b"x", me), Some(&b"x"[..]));
    }

    #[test]
    fn combined_and_common_lines() {
        let l = br#"::1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a?b=\"c\" HTTP/1.0" 404 - "http://r/" "Mozilla \"x\" y""#;
        let r = parse_request(l).unwrap();
        assert_eq!(r.client, b"::1");
        assert_eq!(r.method, b"GET");
        assert_eq!(r.uri, br#"/a?b=\"c\""#);
        assert_eq!((r.status, r.bytes), (404, 0));
        assert_eq!(r.referrer, b"http://r/");
        assert_eq!(r.agent, br#"Mozilla \"x\" y"#);
        assert_eq!(day_and_hour(r.time), Some((20001010, 13)));
        let c =
            parse_request(b"h - - [01/Jan/2020:00:00:00 +0000] \"GET / HTTP/1.1\" 200 5").unwrap();
        assert_eq!((c.uri, c.bytes, c.agent), (&b"/"[..], 5, &b""[..]));
        assert_eq!(parse_request(b"garbage"), None);
        assert_eq!(parse_request(b"h - - [x] \"GET /\" 2000 5"), None);
    }

    proptest! {
        #[test]
        fn fields_match_the_split_reference(
            line in proptest::collection::vec(prop_oneof![
                Just(b' '), Just(b'\t'), Just(b'\r'), Just(0x0bu8), Just(0x0cu8), Just(b'a'), Just(b'"'), Just(0xffu8)
            ], 0..200)
        ) {
            prop_assert_eq!(wf2_fields(&line), wf2_fields_naive(&line));
            prop_assert_eq!(wf2_fields_scalar(&line), wf2_fields_naive(&line));
        }

        #[test]
        fn article_test_matches_the_regex(
            tail in proptest::collection::vec(prop_oneof![
                Just(b'0'), Just(b'7'), Just(b'x'), Just(b'/'), Just(b'.'), Just(b' '), Just(b'a'), Just(0xe9u8)
            ], 0..24),
            head in prop_oneof![Just(&b"/ongoing/When/"[..]), Just(&b"/ongoing/When/200x/2007/10/09/"[..]), Just(&b"/x"[..])]
        ) {
            let re = regex::bytes::Regex::new(r"(?-u)^/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+$").unwrap();
            let uri = [head, &tail[..]].concat();
            prop_assert_eq!(is_article(&uri), re.is_match(&uri));
        }
    }
}
