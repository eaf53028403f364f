//! Access-log formats: what a line of each holds, read into one [`Record`].
//!
//! Built in: Apache/nginx common and combined (the hand parser of
//! [`swath_kernels::logs::parse_request`]), Apache vhost-combined, W3C extended (IIS, and
//! CloudFront, read by their `#Fields:` header), AWS classic ELB and ALB, and JSON-lines
//! access logs (Caddy's, and the field names of nginx, Traefik and most JSON loggers). A
//! custom format is an Apache `LogFormat` string (`%h %l %u %t "%r" %>s %b`) or an nginx
//! `log_format` string (`$remote_addr - $remote_user [$time_local] "$request" ...`),
//! compiled into a [`Template`]. [`detect`] picks the format the first lines of a log fit.
//!
//! Times become a [`Stamp`], `YYYYMMDDhhmmss` as one number in the log's own time zone
//! (Apache's local time, W3C's and the load balancers' UTC), so days, hours and
//! `--since`/`--until` compare as integers.

use std::borrow::Cow;

use swath_kernels::logs::{month_number, parse_request};

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

/// A log format.
#[derive(Debug, Clone, PartialEq)]
pub enum Format {
    /// Apache/nginx common and combined (`%h %l %u %t "%r" %>s %b`, optionally
    /// ` "%{Referer}i" "%{User-Agent}i"`).
    Combined,
    /// A format given as a template (vhost-combined, or a custom format string).
    Template(Template),
    /// W3C extended (IIS, CloudFront), by the fields of its `#Fields:` header.
    W3c(W3c),
    /// AWS classic Elastic Load Balancer.
    Elb,
    /// AWS Application Load Balancer.
    Alb,
    /// JSON lines (Caddy, and the usual field names of other JSON access logs).
    Json,
}

/// The formats `--format` names, with what they are.
pub const NAMED: &[(&str, &str)] = &[
    ("combined", "Apache/nginx common or combined"),
    ("common", "Apache/nginx common or combined"),
    ("vhost_combined", "Apache vhost-combined (%v:%p first)"),
    ("w3c", "W3C extended (IIS), by its #Fields header"),
    ("cloudfront", "AWS CloudFront (W3C, tab-separated)"),
    ("elb", "AWS classic load balancer"),
    ("alb", "AWS application load balancer"),
    ("json", "JSON lines (Caddy, nginx/Traefik JSON)"),
];

/// Apache's vhost-combined `LogFormat` (Debian's `other_vhosts_access.log`).
pub const VHOST_COMBINED: &str = r#"%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i""#;

impl Format {
    /// The format `--format NAME` names, or a custom format string compiled; `head` (the
    /// log's first bytes) gives a W3C format its fields.
    pub fn named(name: &str, head: &[u8]) -> Result<Format, String> {
        match name {
            "combined" | "common" | "nginx" => Ok(Format::Combined),
            "vhost_combined" | "vhost-combined" => {
                Template::compile(VHOST_COMBINED).map(|t| Format::Template(t.named("vhost_combined")))
            }
            "w3c" | "iis" | "cloudfront" => W3c::from_head(head)
                .map(Format::W3c)
                .ok_or_else(|| "no '#Fields:' line in the log's first lines: a W3C log starts with one".to_string()),
            "elb" => Ok(Format::Elb),
            "alb" => Ok(Format::Alb),
            "json" | "caddy" => Ok(Format::Json),
            s if s.contains('%') || s.contains('$') => Template::compile(s).map(Format::Template),
            s => Err(format!(
                "unknown format '{s}': give auto, one of {}, or an Apache LogFormat or nginx log_format string",
                NAMED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            )),
        }
    }

    /// The format's short name, as `--format` takes it (`custom` for a format string).
    pub fn name(&self) -> &str {
        match self {
            Format::Combined => "combined",
            Format::Template(t) => &t.name,
            Format::W3c(w) if w.cloudfront => "cloudfront",
            Format::W3c(_) => "w3c",
            Format::Elb => "elb",
            Format::Alb => "alb",
            Format::Json => "json",
        }
    }

    /// What the options text of a partial says of the format (the name, or the string).
    pub fn spec(&self) -> String {
        match self {
            Format::Template(t) if t.name == "custom" => t.source.clone(),
            Format::W3c(w) => format!("{} {}", self.name(), w.source),
            f => f.name().to_string(),
        }
    }

    /// Reads `line` (no newline); a request is given to `f`.
    #[inline]
    pub fn parse(&self, line: &[u8], f: impl FnOnce(&Record<'_>)) -> Outcome {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match self {
            Format::Combined => match parse_request(line) {
                Some(r) => {
                    let (method, uri, protocol) = split_request(r.request);
                    f(&Record {
                        vhost: b"",
                        client: r.client,
                        user: r.user,
                        stamp: apache_stamp(r.time),
                        method,
                        uri,
                        protocol,
                        status: r.status,
                        bytes: r.bytes,
                        referrer: r.referrer,
                        agent: r.agent,
                        micros: None,
                    });
                    Outcome::Request
                }
                None => Outcome::Malformed,
            },
            Format::Template(t) => match t.parse(line) {
                Some(r) => {
                    f(&r);
                    Outcome::Request
                }
                None => Outcome::Malformed,
            },
            Format::W3c(w) => w.parse(line, f),
            Format::Elb => parse_elb(line, false, f),
            Format::Alb => parse_elb(line, true, f),
            Format::Json => parse_json(line, f),
        }
    }
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

fn digits(s: &[u8]) -> Option<u64> {
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
fn seconds_micros(s: &[u8]) -> Option<u64> {
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

fn size(s: &[u8]) -> Option<u64> {
    if s == b"-" {
        Some(0)
    } else {
        digits(s)
    }
}

fn status(s: &[u8]) -> Option<u16> {
    (s.len() == 3)
        .then(|| digits(s))
        .flatten()
        .map(|n| n as u16)
}

// ---------------------------------------------------------------------------------------
// Templates: Apache LogFormat and nginx log_format strings.

/// A field of a [`Template`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The virtual host.
    Vhost,
    /// The client address or host.
    Client,
    /// The user.
    User,
    /// Apache's `%t`: the time in brackets.
    TimeBracketed,
    /// A time as Apache writes it, without brackets (nginx's `$time_local`).
    TimeLocal,
    /// ISO 8601 (`$time_iso8601`).
    TimeIso,
    /// Unix seconds with a fraction (`$msec`).
    TimeUnix,
    /// The request line.
    Request,
    /// The method.
    Method,
    /// The path (Apache's `%U`; nginx's `$request_uri` with its query).
    Uri,
    /// The query string, appended to the path (`%q`, `$args` after a `?`).
    Query,
    /// The protocol.
    Protocol,
    /// The status.
    Status,
    /// Bytes sent.
    Bytes,
    /// The referrer.
    Referrer,
    /// The user agent.
    Agent,
    /// Microseconds taken (`%D`).
    Micros,
    /// Whole seconds taken (`%T`).
    Seconds,
    /// Milliseconds taken (`%{ms}T`).
    Millis,
    /// Seconds with a fraction (`$request_time`).
    SecondsFraction,
    /// A field that is read over and not used.
    Skip,
}

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Bytes that must be there.
    Literal(Vec<u8>),
    /// A field, up to what follows it.
    Field(Field),
}

/// A compiled format string.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// Its pieces, literals and fields alternating.
    pub pieces: Vec<Piece>,
    name: String,
    source: String,
}

fn apache_field(name: Option<&str>, letter: char) -> Result<Field, String> {
    use Field::*;
    Ok(match (letter, name) {
        ('h' | 'a', _) => Client,
        ('v' | 'V', _) => Vhost,
        ('u', _) => User,
        ('t', None) => TimeBracketed,
        ('t', Some(f)) if f.contains("%Y-%m-%dT%H:%M:%S") || f.starts_with("%Y-%m-%d") => TimeIso,
        ('t', Some("sec")) => TimeUnix,
        ('t', Some(_)) => Skip,
        ('r', _) => Request,
        ('m', _) => Method,
        ('U', _) => Uri,
        ('q', _) => Query,
        ('H', _) => Protocol,
        ('s', _) => Status,
        ('b' | 'B' | 'O', _) => Bytes,
        ('D', _) => Micros,
        ('T', Some("ms")) => Millis,
        ('T', Some("us")) => Micros,
        ('T', _) => Seconds,
        ('i', Some(h)) if h.eq_ignore_ascii_case("referer") => Referrer,
        ('i', Some(h)) if h.eq_ignore_ascii_case("user-agent") => Agent,
        ('i', Some(h)) if h.eq_ignore_ascii_case("host") => Vhost,
        (
            'l' | 'A' | 'p' | 'P' | 'I' | 'S' | 'k' | 'L' | 'X' | 'R' | 'f' | 'e' | 'n' | 'o' | 'C'
            | 'i',
            _,
        ) => Skip,
        (c, _) => return Err(format!("unknown LogFormat directive '%{c}'")),
    })
}

fn nginx_field(name: &str) -> Field {
    use Field::*;
    match name {
        "remote_addr" | "binary_remote_addr" | "realip_remote_addr" => Client,
        "host" | "server_name" | "http_host" => Vhost,
        "remote_user" => User,
        "time_local" => TimeLocal,
        "time_iso8601" => TimeIso,
        "msec" => TimeUnix,
        "request" => Request,
        "request_method" => Method,
        "request_uri" | "uri" | "document_uri" => Uri,
        "args" | "query_string" => Query,
        "server_protocol" => Protocol,
        "status" => Status,
        "body_bytes_sent" | "bytes_sent" => Bytes,
        "http_referer" => Referrer,
        "http_user_agent" => Agent,
        "request_time" => SecondsFraction,
        _ => Skip,
    }
}

impl Template {
    /// Compiles an Apache `LogFormat` string (`%` directives) or an nginx `log_format`
    /// string (`$variables`). `\"`, `\t` and `\\` are the escapes of a configuration file.
    pub fn compile(source: &str) -> Result<Template, String> {
        let s = source
            .replace("\\\"", "\"")
            .replace("\\t", "\t")
            .replace("\\\\", "\\");
        let apache = s.contains('%');
        let mut pieces: Vec<Piece> = Vec::new();
        let mut lit = Vec::new();
        let b = s.as_bytes();
        let mut i = 0;
        let push = |pieces: &mut Vec<Piece>, lit: &mut Vec<u8>, f: Field| -> Result<(), String> {
            if !lit.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(lit)));
            }
            if let Some(Piece::Field(prev)) = pieces.last() {
                if !(f == Field::Query && *prev == Field::Uri) {
                    return Err(format!(
                        "two fields with nothing between them ({prev:?} and {f:?}): a line could not be split"
                    ));
                }
            }
            pieces.push(Piece::Field(f));
            Ok(())
        };
        while i < b.len() {
            if apache && b[i] == b'%' {
                i += 1;
                if b.get(i) == Some(&b'%') {
                    lit.push(b'%');
                    i += 1;
                    continue;
                }
                // Modifiers: status conditions (`!200,304`), `<`, `>`.
                while i < b.len() && (b"<>!,".contains(&b[i]) || b[i].is_ascii_digit()) {
                    i += 1;
                }
                let mut name = None;
                if b.get(i) == Some(&b'{') {
                    let end = i + s[i..].find('}').ok_or("a '%{' without its '}'")?;
                    name = Some(&s[i + 1..end]);
                    i = end + 1;
                }
                let c = *b.get(i).ok_or("a '%' at the end of the format")? as char;
                i += 1;
                push(&mut pieces, &mut lit, apache_field(name, c)?)?;
            } else if !apache && b[i] == b'$' {
                i += 1;
                let (name, next) = if b.get(i) == Some(&b'{') {
                    let end = i + s[i..].find('}').ok_or("a '${' without its '}'")?;
                    (&s[i + 1..end], end + 1)
                } else {
                    let n = b[i..]
                        .iter()
                        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                        .count();
                    (&s[i..i + n], i + n)
                };
                if name.is_empty() {
                    lit.push(b'$');
                    continue;
                }
                i = next;
                push(&mut pieces, &mut lit, nginx_field(name))?;
            } else {
                lit.push(b[i]);
                i += 1;
            }
        }
        if !lit.is_empty() {
            pieces.push(Piece::Literal(lit));
        }
        let has = |f: Field| pieces.contains(&Piece::Field(f));
        if !(has(Field::Request) || has(Field::Uri)) || !has(Field::Status) {
            return Err(
                "a log format needs the request (or its path) and the status: %r or %U and %s (Apache), $request or $request_uri and $status (nginx)"
                    .into(),
            );
        }
        Ok(Template {
            pieces,
            name: "custom".into(),
            source: source.to_string(),
        })
    }

    fn named(mut self, name: &str) -> Template {
        self.name = name.to_string();
        self
    }

    /// Reads a line by the template, or `None` when it does not fit.
    pub fn parse<'a>(&self, line: &'a [u8]) -> Option<Record<'a>> {
        let mut r = Record::default();
        let mut at = 0;
        let mut query: &[u8] = b"";
        let mut pieces = self.pieces.iter().enumerate().peekable();
        while let Some((k, p)) = pieces.next() {
            match p {
                Piece::Literal(l) => {
                    if !line[at..].starts_with(l) {
                        return None;
                    }
                    at += l.len();
                }
                Piece::Field(f) => {
                    let rest = &line[at..];
                    let quoted = k > 0
                        && matches!(&self.pieces[k - 1], Piece::Literal(l) if l.ends_with(b"\""));
                    let end = match (f, self.pieces.get(k + 1)) {
                        (Field::TimeBracketed, _) => {
                            if rest.first() != Some(&b'[') {
                                return None;
                            }
                            memchr::memchr(b']', rest)? + 1
                        }
                        (Field::Uri, Some(Piece::Field(Field::Query))) => {
                            let stop = match self.pieces.get(k + 2) {
                                Some(Piece::Literal(l)) => find(rest, l, quoted)?,
                                _ => rest.len(),
                            };
                            memchr::memchr(b'?', &rest[..stop]).unwrap_or(stop)
                        }
                        (_, Some(Piece::Literal(l))) => find(rest, l, quoted)?,
                        (_, Some(Piece::Field(_))) => rest.len(),
                        (_, None) => rest.len(),
                    };
                    let v = &rest[..end];
                    at += end;
                    if v.is_empty()
                        && !matches!(
                            f,
                            Field::Query
                                | Field::User
                                | Field::Referrer
                                | Field::Agent
                                | Field::Skip
                                | Field::Request
                        )
                    {
                        return None;
                    }
                    match f {
                        Field::Vhost => r.vhost = v,
                        Field::Client => r.client = v,
                        Field::User => r.user = v,
                        // A time that cannot be read leaves the request without one, as
                        // the built-in combined parser does.
                        Field::TimeBracketed | Field::TimeLocal => r.stamp = apache_stamp(v),
                        Field::TimeIso => r.stamp = iso_stamp(v),
                        Field::TimeUnix => r.stamp = unix_stamp(v),
                        Field::Request => {
                            (r.method, r.uri, r.protocol) = split_request(v);
                        }
                        Field::Method => r.method = v,
                        Field::Uri => r.uri = v,
                        Field::Query => query = v,
                        Field::Protocol => r.protocol = v,
                        Field::Status => r.status = status(v)?,
                        Field::Bytes => r.bytes = size(v)?,
                        Field::Referrer => r.referrer = v,
                        Field::Agent => r.agent = v,
                        Field::Micros => r.micros = Some(digits(v)?),
                        Field::Seconds => r.micros = digits(v)?.checked_mul(1_000_000),
                        Field::Millis => r.micros = digits(v)?.checked_mul(1000),
                        Field::SecondsFraction => r.micros = seconds_micros(v),
                        Field::Skip => {}
                    }
                }
            }
            let _ = pieces.peek();
        }
        // Text after the format's end is ignored (a field some servers append), as the
        // built-in combined parser ignores it.
        // A query logged on its own follows its path in the line (`%U%q`, or nginx's
        // `$uri?$args`): one slice, path, `?` and query.
        if !query.is_empty() && !r.uri.is_empty() {
            let start = r.uri.as_ptr() as usize - line.as_ptr() as usize;
            let end = start + r.uri.len();
            let q = query.as_ptr() as usize - line.as_ptr() as usize;
            if q == end || (q == end + 1 && line[end] == b'?') {
                r.uri = &line[start..q + query.len()];
            }
        }
        Some(r)
    }
}

/// Where `lit` starts in `rest`: after an unescaped `"` when the field is quoted, else at
/// its first occurrence.
#[inline]
fn find(rest: &[u8], lit: &[u8], quoted: bool) -> Option<usize> {
    if quoted && lit.first() == Some(&b'"') {
        let mut j = 0;
        loop {
            let k = j + memchr::memchr2(b'"', b'\\', &rest[j..])?;
            if rest[k] == b'\\' {
                j = k + 2;
                if j > rest.len() {
                    return None;
                }
                continue;
            }
            // The first unescaped quote ends the field (Apache and nginx escape quotes
            // inside): what follows must be the literal.
            return rest[k..].starts_with(lit).then_some(k);
        }
    }
    memchr::memmem::find(rest, lit)
}

// ---------------------------------------------------------------------------------------
// W3C extended.

/// A W3C field of a `#Fields:` header that a report reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum W3cField {
    Date,
    Time,
    Client,
    User,
    Method,
    Stem,
    Query,
    Status,
    Bytes,
    Referrer,
    Agent,
    Host,
    Protocol,
    Taken,
    Other,
}

/// A W3C extended format: the fields of its `#Fields:` header.
#[derive(Debug, Clone, PartialEq)]
pub struct W3c {
    fields: Vec<W3cField>,
    /// CloudFront's flavour (tab-separated, seconds taken, encoded agents).
    pub cloudfront: bool,
    source: String,
}

/// What starts a W3C header line that names the fields of the lines after it.
pub const W3C_FIELDS: &[u8] = b"#Fields:";

impl W3c {
    /// The format of the `#Fields:` line among `head`'s first lines.
    pub fn from_head(head: &[u8]) -> Option<W3c> {
        let line = head
            .split(|&b| b == b'\n')
            .take(64)
            .find(|l| l.starts_with(W3C_FIELDS))?;
        W3c::from_fields_line(line)
    }

    /// The format a `#Fields:` line names (its newline, and a CR before it, allowed), or
    /// `None` when the line does not start so, or names no `cs-uri-stem` or `sc-status`
    /// (lines read by it could not be requests).
    pub fn from_fields_line(line: &[u8]) -> Option<W3c> {
        let names = line.strip_prefix(W3C_FIELDS)?;
        let text = String::from_utf8_lossy(names).trim().to_string();
        let names: Vec<&str> = text.split_whitespace().collect();
        let cloudfront = names.iter().any(|n| n.starts_with("x-edge-"));
        let fields = names
            .iter()
            .map(|n| match n.to_ascii_lowercase().as_str() {
                "date" => W3cField::Date,
                "time" => W3cField::Time,
                "c-ip" => W3cField::Client,
                "cs-username" => W3cField::User,
                "cs-method" => W3cField::Method,
                "cs-uri-stem" => W3cField::Stem,
                "cs-uri-query" => W3cField::Query,
                "sc-status" => W3cField::Status,
                "sc-bytes" => W3cField::Bytes,
                "cs(referer)" | "cs(referrer)" => W3cField::Referrer,
                "cs(user-agent)" => W3cField::Agent,
                "cs-host" | "cs(host)" | "x-host-header" => W3cField::Host,
                "cs-version" | "cs-protocol-version" => W3cField::Protocol,
                "time-taken" => W3cField::Taken,
                _ => W3cField::Other,
            })
            .collect::<Vec<_>>();
        let has = |f| fields.contains(&f);
        (has(W3cField::Stem) && has(W3cField::Status)).then_some(W3c {
            fields,
            cloudfront,
            source: text,
        })
    }

    fn parse(&self, line: &[u8], f: impl FnOnce(&Record<'_>)) -> Outcome {
        if line.first() == Some(&b'#') {
            return Outcome::Comment;
        }
        let tabbed = memchr::memchr(b'\t', line).is_some();
        let sep = if tabbed { b'\t' } else { b' ' };
        let mut r = Record::default();
        let (mut date, mut time): (&[u8], &[u8]) = (b"", b"");
        let mut n = 0;
        let mut host: &[u8] = b"";
        let mut query: &[u8] = b"";
        let mut agent: &[u8] = b"";
        for (i, v) in line.split(|&b| b == sep).enumerate() {
            n = i + 1;
            let Some(&kind) = self.fields.get(i) else {
                return Outcome::Malformed;
            };
            let v: &[u8] = if v == b"-" { b"" } else { v };
            match kind {
                W3cField::Date => date = v,
                W3cField::Time => time = v,
                W3cField::Client => r.client = v,
                W3cField::User => r.user = v,
                W3cField::Method => r.method = v,
                W3cField::Stem => r.uri = v,
                W3cField::Query => query = v,
                W3cField::Status => match status(v) {
                    Some(s) => r.status = s,
                    None => return Outcome::Malformed,
                },
                W3cField::Bytes => match size(if v.is_empty() { b"-" } else { v }) {
                    Some(b) => r.bytes = b,
                    None => return Outcome::Malformed,
                },
                W3cField::Referrer => r.referrer = v,
                W3cField::Agent => agent = v,
                W3cField::Host => host = v,
                W3cField::Protocol => r.protocol = v,
                W3cField::Taken => {
                    r.micros = if self.cloudfront {
                        seconds_micros(v)
                    } else {
                        digits(v).and_then(|ms| ms.checked_mul(1000))
                    }
                }
                W3cField::Other => {}
            }
        }
        if n != self.fields.len() || r.uri.is_empty() {
            return Outcome::Malformed;
        }
        r.vhost = host;
        if !date.is_empty() {
            let mut t = [b'0'; 19];
            if date.len() != 10 || time.len() < 8 {
                return Outcome::Malformed;
            }
            t[..10].copy_from_slice(date);
            t[10] = b' ';
            t[11..].copy_from_slice(&time[..8]);
            r.stamp = iso_stamp(&t);
            if r.stamp.is_none() {
                return Outcome::Malformed;
            }
        }
        // IIS writes spaces in the agent as `+`; CloudFront percent-encodes it.
        let agent: Cow<[u8]> = if self.cloudfront {
            percent_decoded(agent)
        } else if agent.contains(&b'+') {
            Cow::Owned(
                agent
                    .iter()
                    .map(|&b| if b == b'+' { b' ' } else { b })
                    .collect(),
            )
        } else {
            Cow::Borrowed(agent)
        };
        r.agent = &agent;
        let full: Vec<u8>;
        if !query.is_empty() {
            full = [r.uri, b"?", query].concat();
            r.uri = &full;
            f(&r);
        } else {
            f(&r);
        }
        Outcome::Request
    }
}

/// `%XX` escapes decoded, twice over when the result still has them (CloudFront encodes
/// agents twice: `%2520` for a space).
fn percent_decoded(s: &[u8]) -> Cow<'_, [u8]> {
    fn once(s: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(s.len());
        let mut i = 0;
        while i < s.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if s[i] == b'%' && i + 2 < s.len() {
                if let (Some(a), Some(b)) = (hex(s[i + 1]), hex(s[i + 2])) {
                    out.push((a * 16 + b) as u8);
                    i += 3;
                    continue;
                }
            }
            out.push(s[i]);
            i += 1;
        }
        out
    }
    if !s.contains(&b'%') {
        return Cow::Borrowed(s);
    }
    let mut d = once(s);
    if d.windows(3).any(|w| w == b"%20") {
        d = once(&d);
    }
    Cow::Owned(d)
}

// ---------------------------------------------------------------------------------------
// AWS load balancers.

/// Splits at single spaces, a field starting with `"` running to its closing quote.
fn aws_fields<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> Option<usize> {
    let mut i = 0;
    let mut n = 0;
    while i < line.len() && n < out.len() {
        let end = if line[i] == b'"' {
            let mut j = i + 1;
            loop {
                let k = j + memchr::memchr2(b'"', b'\\', line.get(j..)?)?;
                if line[k] == b'\\' {
                    j = k + 2;
                    continue;
                }
                break k + 1;
            }
        } else {
            i + memchr::memchr(b' ', &line[i..]).unwrap_or(line.len() - i)
        };
        out[n] = &line[i..end];
        n += 1;
        i = end + 1;
    }
    Some(n)
}

fn unquote(s: &[u8]) -> &[u8] {
    s.strip_prefix(b"\"")
        .and_then(|s| s.strip_suffix(b"\""))
        .unwrap_or(s)
}

/// An ELB (`alb` false) or ALB access-log line.
fn parse_elb(line: &[u8], alb: bool, f: impl FnOnce(&Record<'_>)) -> Outcome {
    let mut v: [&[u8]; 19] = [b""; 19];
    let Some(n) = aws_fields(line, &mut v) else {
        return Outcome::Malformed;
    };
    let o = usize::from(alb);
    if alb && !matches!(v[0], b"http" | b"https" | b"h2" | b"grpcs" | b"ws" | b"wss") {
        return Outcome::Malformed;
    }
    if n < 13 + o || (alb && n < 19) {
        return Outcome::Malformed;
    }
    let Some(stamp) = iso_stamp(v[o]) else {
        return Outcome::Malformed;
    };
    let client = v[2 + o];
    let client = match client.iter().rposition(|&b| b == b':') {
        Some(p) if !client.starts_with(b"[") || client[..p].ends_with(b"]") => &client[..p],
        _ => client,
    };
    let client = client
        .strip_prefix(b"[")
        .and_then(|c| c.strip_suffix(b"]"))
        .unwrap_or(client);
    let (Some(st), Some(bytes)) = (status(v[7 + o]), size(v[10 + o])) else {
        return Outcome::Malformed;
    };
    let times: Option<u64> = (4..7)
        .map(|k| seconds_micros(v[k + o]))
        .try_fold(0u64, |a, t| a.checked_add(t?));
    let request = unquote(v[11 + o]);
    if !v[11 + o].starts_with(b"\"") {
        return Outcome::Malformed;
    }
    let (method, url, protocol) = split_request(request);
    // `http://host:80/path`: the path, and the host as the virtual host.
    let (host, uri) = match url.windows(3).position(|w| w == b"://") {
        Some(p) => {
            let rest = &url[p + 3..];
            let slash = memchr::memchr(b'/', rest).unwrap_or(rest.len());
            let host = &rest[..slash];
            let host = match host.iter().rposition(|&b| b == b':') {
                Some(c) => &host[..c],
                None => host,
            };
            (
                host,
                if slash < rest.len() {
                    &rest[slash..]
                } else {
                    &b"/"[..]
                },
            )
        }
        None => (&b""[..], url),
    };
    let vhost = match unquote(v[18]) {
        d if alb && !d.is_empty() && d != b"-" => d,
        _ => host,
    };
    f(&Record {
        vhost,
        client,
        user: b"",
        stamp: Some(stamp),
        method,
        uri,
        protocol,
        status: st,
        bytes,
        referrer: b"",
        agent: unquote(v[12 + o]),
        micros: times,
    });
    Outcome::Request
}

// ---------------------------------------------------------------------------------------
// JSON lines.

fn json_at<'v>(v: &'v serde_json::Value, paths: &[&str]) -> Option<&'v serde_json::Value> {
    paths.iter().find_map(|p| {
        let mut cur = v;
        for k in p.split('.') {
            cur = cur.get(k)?;
            if let serde_json::Value::Array(a) = cur {
                cur = a.first()?;
            }
        }
        (!cur.is_null()).then_some(cur)
    })
}

fn json_text(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

fn json_u64(v: Option<&serde_json::Value>) -> Option<u64> {
    match v? {
        serde_json::Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        serde_json::Value::String(s) => digits(s.as_bytes()),
        _ => None,
    }
}

fn json_seconds(v: Option<&serde_json::Value>) -> Option<f64> {
    match v? {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// A JSON access-log line: Caddy's (`request.remote_ip`, `request.uri`, `status`,
/// `size`, `ts`, `duration`, `request.headers.User-Agent`), or flat names as nginx, Traefik
/// and most loggers write them.
fn parse_json(line: &[u8], f: impl FnOnce(&Record<'_>)) -> Outcome {
    let t = line.trim_ascii();
    if t.is_empty() || t[0] != b'{' {
        return Outcome::Malformed;
    }
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(t) else {
        return Outcome::Malformed;
    };
    let at = |p: &[&str]| json_at(&v, p);
    let uri = json_text(at(&[
        "request.uri",
        "uri",
        "request_uri",
        "RequestPath",
        "path",
        "url",
    ]));
    let Some(st) = json_u64(at(&[
        "status",
        "DownstreamStatus",
        "status_code",
        "response.status",
    ])) else {
        return Outcome::Malformed;
    };
    let mut request = json_text(at(&["request"]).filter(|r| r.is_string()));
    if uri.is_empty() && request.is_empty() {
        return Outcome::Malformed;
    }
    if st > 999 {
        return Outcome::Malformed;
    }
    let stamp = match at(&[
        "ts",
        "msec",
        "timestamp",
        "time",
        "time_iso8601",
        "time_local",
        "StartUTC",
        "@timestamp",
    ]) {
        Some(serde_json::Value::Number(n)) => unix_stamp(n.to_string().as_bytes()),
        Some(serde_json::Value::String(s)) => {
            let b = s.as_bytes();
            iso_stamp(b)
                .or_else(|| apache_stamp(b))
                .or_else(|| unix_stamp(b))
        }
        _ => None,
    };
    let micros = if let Some(d) = json_u64(at(&["Duration"])) {
        Some(d / 1000)
    } else {
        json_seconds(at(&["duration", "request_time", "elapsed"]))
            .filter(|s| *s >= 0.0 && s.is_finite())
            .map(|s| (s * 1e6) as u64)
    };
    let client = json_text(at(&[
        "request.client_ip",
        "request.remote_ip",
        "remote_addr",
        "client_ip",
        "ClientHost",
        "ip",
        "remote_ip",
    ]));
    let method = json_text(at(&[
        "request.method",
        "method",
        "request_method",
        "RequestMethod",
    ]));
    let protocol = json_text(at(&[
        "request.proto",
        "protocol",
        "server_protocol",
        "RequestProtocol",
        "proto",
    ]));
    let (method, uri, protocol) = if uri.is_empty() {
        let (m, u, p) = split_request(request.as_bytes());
        (m.to_vec(), u.to_vec(), p.to_vec())
    } else {
        (method.into_bytes(), uri.into_bytes(), protocol.into_bytes())
    };
    request.clear();
    let vhost = json_text(at(&[
        "request.host",
        "host",
        "http_host",
        "RequestHost",
        "server_name",
    ]));
    let user = json_text(at(&["user_id", "remote_user", "user"]));
    let referrer = json_text(at(&[
        "request.headers.Referer",
        "http_referer",
        "referer",
        "referrer",
        "request_Referer",
    ]));
    let agent = json_text(at(&[
        "request.headers.User-Agent",
        "http_user_agent",
        "user_agent",
        "request_User-Agent",
        "agent",
    ]));
    let bytes = json_u64(at(&[
        "size",
        "body_bytes_sent",
        "bytes_sent",
        "DownstreamContentSize",
        "bytes",
    ]));
    let r = Record {
        vhost: vhost.as_bytes(),
        client: client.as_bytes(),
        user: user.as_bytes(),
        stamp,
        method: &method,
        uri: &uri,
        protocol: &protocol,
        status: st as u16,
        bytes: bytes.unwrap_or(0),
        referrer: referrer.as_bytes(),
        agent: agent.as_bytes(),
        micros,
    };
    f(&r);
    Outcome::Request
}

// ---------------------------------------------------------------------------------------
// Recognising a format.

/// What [`detect`] found: the format, and how many of the lines it tried fit it.
#[derive(Debug, Clone)]
pub struct Detected {
    /// The format.
    pub format: Format,
    /// Lines that fit it.
    pub fit: usize,
    /// Lines tried (not counting comments).
    pub tried: usize,
}

/// The format most of `head`'s first lines (up to 100, the last one if cut ignored) fit,
/// or `None` when no line fits any format.
pub fn detect(head: &[u8]) -> Option<Detected> {
    let whole = match memchr::memrchr(b'\n', head) {
        Some(p) => &head[..p],
        None => head,
    };
    let lines: Vec<&[u8]> = whole
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .take(100)
        .collect();
    let mut candidates = vec![Format::Combined];
    if let Ok(t) = Template::compile(VHOST_COMBINED) {
        candidates.push(Format::Template(t.named("vhost_combined")));
    }
    if let Some(w) = W3c::from_head(head) {
        candidates.push(Format::W3c(w));
    }
    candidates.extend([Format::Elb, Format::Alb, Format::Json]);
    let mut best: Option<Detected> = None;
    for format in candidates {
        let (mut fit, mut tried) = (0, 0);
        for l in &lines {
            match format.parse(l, |_| {}) {
                Outcome::Request => {
                    fit += 1;
                    tried += 1;
                }
                Outcome::Malformed => tried += 1,
                Outcome::Comment => {}
            }
        }
        if fit > 0 && best.as_ref().is_none_or(|b| fit > b.fit) {
            best = Some(Detected { format, fit, tried });
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(f: &Format, line: &[u8]) -> Option<String> {
        let mut out = None;
        f.parse(line, |r| {
            out = Some(format!(
                "{}|{}|{}|{:?}|{}|{}|{}|{}|{}|{}|{}|{:?}",
                String::from_utf8_lossy(r.vhost),
                String::from_utf8_lossy(r.client),
                String::from_utf8_lossy(r.user),
                r.stamp,
                String::from_utf8_lossy(r.method),
                String::from_utf8_lossy(r.uri),
                String::from_utf8_lossy(r.protocol),
                r.status,
                r.bytes,
                String::from_utf8_lossy(r.referrer),
                String::from_utf8_lossy(r.agent),
                r.micros
            ))
        });
        out
    }

    #[test]
    fn stamps() {
        assert_eq!(
            apache_stamp(b"10/Oct/2000:13:55:36 -0700"),
            Some(20001010135536)
        );
        assert_eq!(
            iso_stamp(b"2015-05-13T23:39:43.945958Z"),
            Some(20150513233943)
        );
        assert_eq!(unix_stamp(b"1646861401.5241024"), Some(20220309213001));
        assert_eq!(unix_stamp(b"0"), Some(19700101000000));
        assert_eq!(unix_stamp(b"951782400"), Some(20000229000000));
        assert_eq!(apache_stamp(b"10/Foo/2000:13:55:36 -0700"), None);
        assert_eq!(seconds_micros(b"0.001048"), Some(1048));
        assert_eq!(seconds_micros(b"-1"), None);
    }

    #[test]
    fn custom_templates_read_what_the_built_in_parser_reads() {
        let apache = Format::named(
            r#"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-agent}i\""#,
            b"",
        )
        .unwrap();
        let nginx = Format::named(
            r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent""#,
            b"",
        )
        .unwrap();
        for line in [
            &br#"::1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a?b=\"c\" HTTP/1.0" 404 - "http://r/" "Mozilla \"x\" y""#[..],
            br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "curl/8""#,
        ] {
            let want = one(&Format::Combined, line);
            assert!(want.is_some());
            assert_eq!(one(&apache, line), want);
            assert_eq!(one(&nginx, line), want);
        }
        assert_eq!(one(&apache, b"garbage"), None);
        assert!(Format::named("%h %l", b"").is_err());
        assert!(Format::named("nonsense", b"").is_err());
        let split = Format::named("%h %U%q %>s", b"").unwrap();
        assert_eq!(
            one(&split, b"h /a?b=1 200").unwrap().split('|').nth(5),
            Some("/a?b=1")
        );
        assert_eq!(
            one(&split, b"h /a 200").unwrap().split('|').nth(5),
            Some("/a")
        );
    }

    #[test]
    fn each_format_reads_its_documented_sample() {
        let vhost = Format::named("vhost_combined", b"").unwrap();
        assert_eq!(
            one(&vhost, br#"www.example.com:80 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 99 "-" "UA""#).unwrap(),
            "www.example.com|1.2.3.4|-|Some(20001010135536)|GET|/a|HTTP/1.1|200|99|-|UA|None"
        );
        let head = b"#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n#Date: 2019-05-13 10:00:00\n#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken\n";
        let iis = Format::named("w3c", head).unwrap();
        assert_eq!(
            one(&iis, b"2019-05-13 10:00:01 10.0.0.1 GET /index.html q=1 80 - 192.168.1.5 Mozilla/5.0+(Windows+NT+10.0) - 200 0 0 15").unwrap(),
            "|192.168.1.5||Some(20190513100001)|GET|/index.html?q=1||200|0||Mozilla/5.0 (Windows NT 10.0)|Some(15000)"
        );
        assert_eq!(iis.parse(b"#Date: 2019", |_| {}), Outcome::Comment);
        let elb = one(&Format::Elb, br#"2015-05-13T23:39:43.945958Z my-loadbalancer 192.168.131.39:2817 10.0.0.1:80 0.000073 0.001048 0.000057 200 200 0 29 "GET http://www.example.com:80/ HTTP/1.1" "curl/7.38.0" - -"#);
        assert_eq!(
            elb.unwrap(),
            "www.example.com|192.168.131.39||Some(20150513233943)|GET|/|HTTP/1.1|200|29||curl/7.38.0|Some(1178)"
        );
        let alb = one(&Format::Alb, br#"http 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 "GET http://www.example.com:80/a?x=1 HTTP/1.1" "curl/7.46.0" - - arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337262-36d228ad5d99923122bbe354" "-" "-" 0 2018-07-02T22:22:48.364000Z "forward" "-" "-" "10.0.0.1:80" "200" "-" "-""#);
        assert_eq!(
            alb.unwrap(),
            "www.example.com|192.168.131.39||Some(20180702222300)|GET|/a?x=1|HTTP/1.1|200|366||curl/7.46.0|Some(1000)"
        );
        let caddy = one(&Format::Json, br#"{"level":"info","ts":1646861401.5241024,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"41342","client_ip":"127.0.0.1","proto":"HTTP/2.0","method":"GET","host":"localhost","uri":"/","headers":{"User-Agent":["curl/7.82.0"],"Accept":["*/*"]}},"bytes_read":0,"user_id":"","duration":0.000929675,"size":10900,"status":200,"resp_headers":{"Server":["Caddy"]}}"#);
        assert_eq!(
            caddy.unwrap(),
            "localhost|127.0.0.1||Some(20220309213001)|GET|/|HTTP/2.0|200|10900||curl/7.82.0|Some(929)"
        );
    }

    /// What a review found: overflowing times, a query after `?`, a time that cannot be
    /// read, a negative duration, a URI with spaces.
    #[test]
    fn hostile_and_odd_fields() {
        assert_eq!(
            unix_stamp(b"1709633730123"),
            Some(20240305101530),
            "milliseconds"
        );
        assert_eq!(
            unix_stamp(b"1709633730123456789"),
            Some(20240305101530),
            "nanoseconds"
        );
        assert!(unix_stamp(b"9999999999999999999").is_some_and(|s| stamp_day(s) < 99991231));
        let elb = br#"2015-05-13T23:39:43.945958Z lb 1.2.3.4:1 10.0.0.1:80 18446744073709.0 18446744073709.0 0.0 200 200 0 29 "GET http://h/ HTTP/1.1" "curl" - -"#;
        assert!(
            one(&Format::Elb, elb).unwrap().ends_with("|None"),
            "times that overflow are no time"
        );
        let nginx = Format::named(
            r#"$remote_addr "$request_method $uri?$args $server_protocol" $status"#,
            b"",
        )
        .unwrap();
        assert_eq!(
            one(&nginx, br#"1.2.3.4 "GET /a?b=1 HTTP/1.1" 200"#)
                .unwrap()
                .split('|')
                .nth(5),
            Some("/a?b=1")
        );
        let apache = Format::named(r#"%h %l %u %t "%r" %>s %b"#, b"").unwrap();
        for bad_time in [
            &br#"h - - [10/Oct/2000:13:55:3x -0700] "GET / HTTP/1.1" 200 5"#[..],
            br#"h - - [garbage] "GET / HTTP/1.1" 200 5"#,
        ] {
            let (a, b) = (one(&apache, bad_time), one(&Format::Combined, bad_time));
            assert!(a.is_some() && a == b, "{a:?} {b:?}");
        }
        let j = one(
            &Format::Json,
            br#"{"status":200,"uri":"/c d e","duration":-1}"#,
        )
        .unwrap();
        assert!(j.ends_with("|None") && j.contains("|/c d e|"), "{j}");
        assert_eq!(split_key(b" /c d e "), (&b""[..], &b"/c d e"[..], &b""[..]));
        assert_eq!(
            split_key(b"GET /a HTTP/1.1"),
            (&b"GET"[..], &b"/a"[..], &b"HTTP/1.1"[..])
        );
    }

    proptest::proptest! {
        /// The combined format read by its template (the general matcher a custom format
        /// uses) and by the hand parser agree on any line built from the format's pieces,
        /// escapes, spaces and stray quotes included.
        #[test]
        fn template_reads_what_the_hand_parser_reads(
            client in "[a-z0-9:.]{1,6}",
            user in "[a-z-]{1,3}",
            time in proptest::prop_oneof![proptest::strategy::Just("10/Oct/2000:13:55:36 -0700".to_string()), "[0-9a-z/: -]{0,12}"],
            request in r#"[A-Z]{0,4}( ?[/a-z?=\\"]{0,8}){0,3}"#,
            status in "[0-9]{2,4}",
            bytes in proptest::prop_oneof![proptest::strategy::Just("-".to_string()), "[0-9]{1,5}"],
            tail in proptest::prop_oneof![
                proptest::strategy::Just(String::new()),
                r#" "[a-z:/\\" ]{0,8}" "[a-zA-Z/ ()\\"]{0,10}""#
            ],
        ) {
            let line = format!("{client} - {user} [{time}] \"{request}\" {status} {bytes}{tail}");
            let combined = Format::named(r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i""#, b"").unwrap();
            let common = Format::named(r#"%h %l %u %t "%r" %>s %b"#, b"").unwrap();
            let hand = one(&Format::Combined, line.as_bytes());
            let by_template = one(&combined, line.as_bytes()).or_else(|| one(&common, line.as_bytes()));
            proptest::prop_assert_eq!(by_template, hand, "{}", line);
        }
    }

    #[test]
    fn detection_picks_the_format_the_lines_fit() {
        let combined = b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 5\n";
        assert_eq!(detect(combined).unwrap().format.name(), "combined");
        let vhost =
            b"v:80 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 5 \"-\" \"-\"\n";
        assert_eq!(detect(vhost).unwrap().format.name(), "vhost_combined");
        assert!(detect(b"hello\nworld\n").is_none());
        assert_eq!(
            detect(br#"{"status":200,"uri":"/"}"#)
                .unwrap()
                .format
                .name(),
            "json"
        );
    }
}
