//! What a line of an access log holds, whatever its format: one request as a [`Record`],
//! its time as a [`Stamp`], and the field readers the formats share (times, sizes,
//! statuses, request lines).

use swath_kernels::logs::month_number;

/// A time as `YYYYMMDDhhmmss` in one number (so that times order as numbers).
pub type Stamp = u64;

/// The day (`YYYYMMDD`) of a stamp.
#[inline]
pub fn stamp_day(s: Stamp) -> u32 {
    (s / 1_000_000) as u32
}

/// The hour (0-23) of a stamp.
#[inline]
pub fn stamp_hour(s: Stamp) -> u8 {
    (s / 10_000 % 100) as u8
}

/// One request, whatever format it was read from. Fields a format lacks are empty (or
/// `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Record<'a> {
    /// The virtual host (server name) when the format has it.
    pub vhost: &'a [u8],
    /// The client: host name or address (without a port).
    pub client: &'a [u8],
    /// The authenticated user (`-` or empty: none).
    pub user: &'a [u8],
    /// When the request came, when the line says.
    pub stamp: Option<Stamp>,
    /// The request's method (`GET`, ...).
    pub method: &'a [u8],
    /// The requested path (and query, as the format logs it).
    pub uri: &'a [u8],
    /// The protocol (`HTTP/1.1`, ...).
    pub protocol: &'a [u8],
    /// The status code, 0 to 999.
    pub status: u16,
    /// The response's size in bytes.
    pub bytes: u64,
    /// The referrer (`-` or empty: none).
    pub referrer: &'a [u8],
    /// The user agent.
    pub agent: &'a [u8],
    /// Time taken to serve the request, in microseconds, when the format has it.
    pub micros: Option<u64>,
}

/// What a line was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A request (given to the caller's function).
    Request,
    /// A comment or header line the format defines (W3C's `#...`): not a request, not
    /// malformed.
    Comment,
    /// A line the format does not describe.
    Malformed,
}

/// Method, URI and protocol of a summary's request key (`METHOD URI PROTOCOL`, built
/// with both spaces even when the method or protocol is empty): the method up to the
/// first space, the protocol after the last, the URI (spaces and all) between.
pub fn split_key(key: &[u8]) -> (&[u8], &[u8], &[u8]) {
    match (memchr::memchr(b' ', key), memchr::memrchr(b' ', key)) {
        (Some(a), Some(b)) if a < b => (&key[..a], &key[a + 1..b], &key[b + 1..]),
        _ => (b"", key, b""),
    }
}

/// Method, URI and protocol of a request line (`GET /a HTTP/1.1`); a line without spaces
/// is all URI.
#[inline]
pub fn split_request(request: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let mut parts = request.splitn(3, |&b| b == b' ');
    let first = parts.next().unwrap_or_default();
    match parts.next() {
        Some(uri) => (first, uri, parts.next().unwrap_or_default()),
        None => (b"", first, b""),
    }
}

pub(crate) fn digits(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    s.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
}

fn make_stamp(y: u64, mo: u64, d: u64, h: u64, mi: u64, s: u64) -> Option<Stamp> {
    // Years of four digits only: a stamp is YYYYMMDDhhmmss.
    ((1..=9999).contains(&y)
        && (1..=12).contains(&mo)
        && (1..=31).contains(&d)
        && h < 24
        && mi < 60
        && s < 61)
        .then(|| ((((y * 100 + mo) * 100 + d) * 100 + h) * 100 + mi) * 100 + s)
}

/// The stamp of an Apache time (`10/Oct/2000:13:55:36 -0700`, brackets optional).
pub fn apache_stamp(t: &[u8]) -> Option<Stamp> {
    let t = t.strip_prefix(b"[").unwrap_or(t);
    if t.len() < 20 || t[2] != b'/' || t[6] != b'/' || t[11] != b':' || t[14] != b':' {
        return None;
    }
    let mo = u64::from(month_number(&t[3..6])?);
    make_stamp(
        digits(&t[7..11])?,
        mo,
        digits(&t[0..2])?,
        digits(&t[12..14])?,
        digits(&t[15..17])?,
        digits(&t[18..20])?,
    )
}

/// The stamp of an ISO 8601 time (`2015-05-13T23:39:43.945958Z`, `2019-05-13 10:00:00`,
/// offset or fraction ignored: the time as written).
pub fn iso_stamp(t: &[u8]) -> Option<Stamp> {
    if t.len() < 19 || t[4] != b'-' || t[7] != b'-' || !matches!(t[10], b'T' | b' ') {
        return None;
    }
    if t[13] != b':' || t[16] != b':' {
        return None;
    }
    make_stamp(
        digits(&t[0..4])?,
        digits(&t[5..7])?,
        digits(&t[8..10])?,
        digits(&t[11..13])?,
        digits(&t[14..16])?,
        digits(&t[17..19])?,
    )
}

/// The UTC stamp of a Unix time in seconds (a fraction allowed: `1646861401.5241024`).
pub fn unix_stamp(t: &[u8]) -> Option<Stamp> {
    let whole = t.split(|&b| b == b'.').next()?;
    let mut secs = digits(whole)?;
    // Milliseconds, microseconds or nanoseconds since the epoch (as many JSON loggers
    // write them): a number of seconds past the year 5138 is read as one of those.
    while secs > 99_999_999_999 {
        secs /= 1000;
    }
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    make_stamp(
        u64::try_from(y).ok()?,
        m as u64,
        d as u64,
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
    )
}

/// Seconds with a fraction (`0.001048`) as microseconds; `-1` (a failed request) is none.
pub(crate) fn seconds_micros(s: &[u8]) -> Option<u64> {
    let mut parts = s.splitn(2, |&b| b == b'.');
    let whole = digits(parts.next()?)?;
    let frac = parts.next().unwrap_or(b"");
    let mut us = 0u64;
    for i in 0..6 {
        let d = match frac.get(i) {
            Some(d) if d.is_ascii_digit() => u64::from(d - b'0'),
            Some(_) => return None,
            None => 0,
        };
        us = us * 10 + d;
    }
    whole.checked_mul(1_000_000)?.checked_add(us)
}

pub(crate) fn size(s: &[u8]) -> Option<u64> {
    if s == b"-" {
        Some(0)
    } else {
        digits(s)
    }
}

/// A status: three digits, 100 to 599 as GoAccess takes them
/// ([`swath_kernels::logs::is_http_status`]).
pub(crate) fn status(s: &[u8]) -> Option<u16> {
    (s.len() == 3)
        .then(|| digits(s))
        .flatten()
        .filter(|&n| swath_kernels::logs::is_http_status(n))
        .map(|n| n as u16)
}
