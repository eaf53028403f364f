//! Access-log formats: what a line of each holds, read into one [`Record`].
//!
//! The built-in formats are one table, [`FORMATS`] (names, samples, reader), that
//! `--format`, recognition and the messages read. Built in: Apache/nginx common and
//! combined (the hand parser of
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

mod error;
pub use error::FormatError;

use swath_kernels::logs::{closing_quote, parse_request};

pub use crate::logs::record::{
    apache_stamp, iso_stamp, split_key, split_request, stamp_day, stamp_hour, unix_stamp, Outcome,
    Record, Stamp,
};
use crate::logs::record::{digits, seconds_micros, size, status};

/// A log format.
#[derive(Debug, Clone, PartialEq)]
pub enum Format {
    /// A built-in format whose lines read alone, each by its entry's function
    /// ([`Reader::Slices`]: combined, the load balancers'; [`Reader::Lines`]: JSON lines).
    Lines(&'static Builtin),
    /// A format given as a template (vhost-combined, or a custom format string).
    Template(Template),
    /// W3C extended (IIS, CloudFront), by the fields of its `#Fields:` header.
    W3c(W3c),
}

/// How a built-in format's lines are read.
#[derive(Debug, Clone, Copy)]
pub enum Reader {
    /// Each line alone, by this function: the request, its fields slices of the line, or
    /// `None` when the line is not one.
    Slices(SliceReader),
    /// Each line alone, by this function: the request (whose fields may be the reader's
    /// own, decoded) given to the callback.
    Lines(LineReader),
    /// By a template: an Apache `LogFormat` or nginx `log_format` string.
    Template(&'static str),
    /// By the `#Fields:` header among the log's first lines (W3C extended); a log whose
    /// first lines have none is not in this format.
    W3cFields,
}

/// Reads a line of a format whose lines read alone into a request of slices of it.
pub type SliceReader = fn(&[u8]) -> Option<Record<'_>>;

/// Reads a line of a format whose lines read alone: a request is given to the callback.
pub type LineReader = fn(&[u8], &mut dyn FnMut(&Record<'_>)) -> Outcome;

/// A name a log read in a built-in format is shown as ([`Format::name`]).
#[derive(Debug)]
pub struct Shown {
    /// The name (`--format` takes it too).
    pub name: &'static str,
    /// What the format is, as `swath logs` says when it recognises it.
    pub what: &'static str,
    /// The first lines of a log in it (the format is recognised from them, each line not
    /// a comment a request): the consistency test reads them.
    pub sample: &'static str,
    /// A word on it after its name in `--format`'s help (`w3c (IIS)`), if any.
    pub hint: Option<&'static str>,
}

/// A built-in log format: one entry of [`FORMATS`], all that naming, recognising and
/// reading it needs.
#[derive(Debug)]
pub struct Builtin {
    /// The names a log read in it is shown as: the first its own, the others the
    /// flavours its reader tells apart (W3C's second is CloudFront's).
    pub shown: &'static [Shown],
    /// Other names `--format` takes, each with what it is when `--format`'s list of
    /// names shows it too.
    pub aliases: &'static [(&'static str, Option<&'static str>)],
    /// How its lines are read.
    pub reader: Reader,
}

impl PartialEq for Builtin {
    fn eq(&self, o: &Builtin) -> bool {
        std::ptr::eq(self, o)
    }
}

/// The built-in log formats, in the order [`detect`] tries them (a tie goes to the
/// earlier). The first is the default: a log whose first bytes hold no whole line is
/// read in it. Adding a format is adding an entry here (with its reader).
pub static FORMATS: &[Builtin] = &[
    Builtin {
        shown: &[Shown {
            name: "combined",
            what: "Apache/nginx common or combined",
            sample: "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 5 \"-\" \"curl/8\"\n\
                     1.2.3.4 - frank [10/Oct/2000:13:55:37 -0700] \"GET /b HTTP/1.0\" 404 -\n",
            hint: None,
        }],
        aliases: &[
            ("common", Some("Apache/nginx common or combined")),
            ("nginx", None),
        ],
        reader: Reader::Slices(read_combined),
    },
    Builtin {
        shown: &[Shown {
            name: "vhost_combined",
            what: "Apache vhost-combined (%v:%p first)",
            sample: "www.example.com:80 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 99 \"-\" \"UA\"\n",
            hint: None,
        }],
        aliases: &[("vhost-combined", None)],
        // Debian's `other_vhosts_access.log`.
        reader: Reader::Template(
            r#"%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i""#,
        ),
    },
    Builtin {
        shown: &[
            Shown {
                name: "w3c",
                what: "W3C extended (IIS), by its #Fields header",
                sample: "#Software: Microsoft Internet Information Services 10.0\n\
                         #Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken\n\
                         2019-05-13 10:00:01 10.0.0.1 GET /index.html q=1 80 - 192.168.1.5 Mozilla/5.0+(Windows+NT+10.0) - 200 0 0 15\n",
                hint: Some("IIS"),
            },
            Shown {
                name: "cloudfront",
                what: "AWS CloudFront (W3C, tab-separated)",
                sample: "#Version: 1.0\n\
                         #Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query time-taken\n\
                         2024-03-05\t10:15:30\tFRA56-P1\t5120\t192.0.2.10\tGET\td1.cloudfront.net\t/index.html\t200\t-\tcurl/8.5.0\t-\t0.002\n",
                hint: None,
            },
        ],
        aliases: &[("iis", None)],
        reader: Reader::W3cFields,
    },
    Builtin {
        shown: &[Shown {
            name: "elb",
            what: "AWS classic load balancer",
            sample: "2015-05-13T23:39:43.945958Z my-loadbalancer 192.168.131.39:2817 10.0.0.1:80 0.000073 0.001048 0.000057 200 200 0 29 \"GET http://www.example.com:80/ HTTP/1.1\" \"curl/7.38.0\" - -\n",
            hint: None,
        }],
        aliases: &[],
        reader: Reader::Slices(read_elb),
    },
    Builtin {
        shown: &[Shown {
            name: "alb",
            what: "AWS application load balancer",
            sample: "http 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 \"GET http://www.example.com:80/a?x=1 HTTP/1.1\" \"curl/7.46.0\" - - arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 \"Root=1-58337262-36d228ad5d99923122bbe354\" \"-\" \"-\" 0 2018-07-02T22:22:48.364000Z \"forward\" \"-\" \"-\" \"10.0.0.1:80\" \"200\" \"-\" \"-\"\n",
            hint: None,
        }],
        aliases: &[],
        reader: Reader::Slices(read_alb),
    },
    Builtin {
        shown: &[Shown {
            name: "json",
            what: "JSON lines (Caddy, nginx/Traefik JSON)",
            sample: "{\"level\":\"info\",\"ts\":1646861401.5241024,\"request\":{\"remote_ip\":\"127.0.0.1\",\"proto\":\"HTTP/2.0\",\"method\":\"GET\",\"host\":\"localhost\",\"uri\":\"/\"},\"duration\":0.000929675,\"size\":10900,\"status\":200}\n",
            hint: Some("Caddy and other JSON lines"),
        }],
        aliases: &[("caddy", None)],
        reader: Reader::Lines(read_json),
    },
];

/// The formats `--format` names, with what they are: each entry's shown names, then its
/// aliases listed with what they are.
pub static NAMED: std::sync::LazyLock<Vec<(&'static str, &'static str)>> =
    std::sync::LazyLock::new(|| {
        FORMATS
            .iter()
            .flat_map(|b| {
                let shown = b.shown.iter().map(|s| (s.name, s.what));
                let listed = b.aliases.iter().filter_map(|&(n, w)| Some((n, w?)));
                shown.chain(listed)
            })
            .collect()
    });

/// `--format`'s list of names, with each one's hint: `combined, common, ..., w3c (IIS),
/// ...` (the command's help reads it).
pub fn help_list() -> String {
    let hint = |name: &str| {
        FORMATS
            .iter()
            .flat_map(|b| b.shown)
            .find(|s| s.name == name)
            .and_then(|s| s.hint)
    };
    NAMED
        .iter()
        .map(|&(name, _)| match hint(name) {
            Some(h) => format!("{name} ({h})"),
            None => name.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The names a recognised format can be shown as, in the table's order (what a message
/// asking for `--format` lists).
pub fn shown_names() -> Vec<&'static str> {
    FORMATS
        .iter()
        .flat_map(|b| b.shown.iter().map(|s| s.name))
        .collect()
}

impl Builtin {
    /// Its own name (the first it is shown as).
    pub fn name(&self) -> &'static str {
        self.shown.first().map_or("", |s| s.name)
    }

    /// Whether `--format NAME` names it.
    pub fn takes(&self, name: &str) -> bool {
        self.shown.iter().any(|s| s.name == name) || self.aliases.iter().any(|a| a.0 == name)
    }

    /// The format of a log in it whose first bytes are `head`; an error says why the log
    /// cannot be (a W3C log without its `#Fields:` header).
    pub fn format(&'static self, head: &[u8]) -> Result<Format, FormatError> {
        match self.reader {
            Reader::Slices(_) | Reader::Lines(_) => Ok(Format::Lines(self)),
            Reader::Template(source) => {
                Template::compile(source).map(|t| Format::Template(t.named(self.name())))
            }
            Reader::W3cFields => W3c::from_head(head)
                .map(Format::W3c)
                .ok_or(FormatError::NoFields),
        }
    }
}

impl Default for Format {
    /// The first format of [`FORMATS`] (combined).
    fn default() -> Format {
        Format::Lines(&FORMATS[0])
    }
}

impl Format {
    /// The format `--format NAME` names, or a custom format string compiled; `head` (the
    /// log's first bytes) gives a W3C format its fields.
    pub fn named(name: &str, head: &[u8]) -> Result<Format, FormatError> {
        if let Some(b) = FORMATS.iter().find(|b| b.takes(name)) {
            return b.format(head);
        }
        match name {
            s if s.contains('%') || s.contains('$') => Template::compile(s).map(Format::Template),
            s => Err(FormatError::Unknown(s.to_string())),
        }
    }

    /// The format's short name, as `--format` takes it (`custom` for a format string).
    pub fn name(&self) -> &str {
        match self {
            Format::Lines(b) => b.name(),
            Format::Template(t) => &t.name,
            Format::W3c(w) => {
                let entry = FORMATS
                    .iter()
                    .find(|b| matches!(b.reader, Reader::W3cFields));
                let shown = entry.map_or(&[][..], |b| b.shown);
                shown
                    .get(usize::from(w.cloudfront))
                    .or(shown.first())
                    .map_or("w3c", |s| s.name)
            }
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
    pub fn parse(&self, line: &[u8], mut f: impl FnMut(&Record<'_>)) -> Outcome {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match self {
            Format::Lines(b) => match b.reader {
                Reader::Slices(read) => match read(line) {
                    Some(r) => {
                        f(&r);
                        Outcome::Request
                    }
                    None => Outcome::Malformed,
                },
                Reader::Lines(read) => read(line, &mut f),
                // Only an entry whose lines read alone makes a `Lines` format.
                Reader::Template(_) | Reader::W3cFields => Outcome::Malformed,
            },
            Format::Template(t) => match t.parse(line) {
                Some(r) => {
                    f(&r);
                    Outcome::Request
                }
                None => Outcome::Malformed,
            },
            Format::W3c(w) => w.parse(line, f),
        }
    }
}

/// A line of Apache/nginx common or combined, by the hand parser. A time that is not one
/// (`[01/Oct/2007:25:00:00 -0700]`) fails the line, as in GoAccess.
fn read_combined(line: &[u8]) -> Option<Record<'_>> {
    let r = parse_request(line)?;
    let (method, uri, protocol) = split_request(r.request);
    Some(Record {
        vhost: b"",
        client: r.client,
        user: r.user,
        stamp: Some(apache_stamp(r.time)?),
        method,
        uri,
        protocol,
        status: r.status,
        bytes: r.bytes,
        referrer: r.referrer,
        agent: r.agent,
        micros: None,
    })
}

/// A line of an AWS classic load balancer's log.
fn read_elb(line: &[u8]) -> Option<Record<'_>> {
    parse_elb(line, false)
}

/// A line of an AWS application load balancer's log.
fn read_alb(line: &[u8]) -> Option<Record<'_>> {
    parse_elb(line, true)
}

/// A JSON access-log line.
fn read_json(line: &[u8], f: &mut dyn FnMut(&Record<'_>)) -> Outcome {
    parse_json(line, f)
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

fn apache_field(name: Option<&str>, letter: char) -> Result<Field, FormatError> {
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
        (c, _) => return Err(FormatError::Directive(c)),
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
    pub fn compile(source: &str) -> Result<Template, FormatError> {
        let s = source
            .replace("\\\"", "\"")
            .replace("\\t", "\t")
            .replace("\\\\", "\\");
        let apache = s.contains('%');
        let mut pieces: Vec<Piece> = Vec::new();
        let mut lit = Vec::new();
        let b = s.as_bytes();
        let mut i = 0;
        let push =
            |pieces: &mut Vec<Piece>, lit: &mut Vec<u8>, f: Field| -> Result<(), FormatError> {
                if !lit.is_empty() {
                    pieces.push(Piece::Literal(std::mem::take(lit)));
                }
                if let Some(Piece::Field(prev)) = pieces.last() {
                    if !(f == Field::Query && *prev == Field::Uri) {
                        return Err(FormatError::Adjacent(*prev, f));
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
                    let end = i + s[i..].find('}').ok_or(FormatError::OpenPercent)?;
                    name = Some(&s[i + 1..end]);
                    i = end + 1;
                }
                let c = *b.get(i).ok_or(FormatError::TrailingPercent)? as char;
                i += 1;
                push(&mut pieces, &mut lit, apache_field(name, c)?)?;
            } else if !apache && b[i] == b'$' {
                i += 1;
                let (name, next) = if b.get(i) == Some(&b'{') {
                    let end = i + s[i..].find('}').ok_or(FormatError::OpenDollar)?;
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
            return Err(FormatError::NoRequest);
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
                        (_, Some(Piece::Literal(l))) => match find(rest, l, quoted) {
                            Some(end) => end,
                            // A quoted referrer or agent cut short, its closing quote
                            // missing: it and the fields after it are unknown (a referrer
                            // `-`, an agent none: no browser, as in GoAccess), and the line
                            // a request, as GoAccess and the hand parser read it.
                            None if quoted
                                && matches!(f, Field::Referrer | Field::Agent)
                                && find(rest, b"\"", true).is_none() =>
                            {
                                if *f == Field::Referrer {
                                    r.referrer = b"-";
                                }
                                r.agent = b"";
                                break;
                            }
                            None => return None,
                        },
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
                        // A time that cannot be read fails the line, as the built-in
                        // combined parser does (and GoAccess).
                        Field::TimeBracketed | Field::TimeLocal => r.stamp = Some(apache_stamp(v)?),
                        Field::TimeIso => r.stamp = Some(iso_stamp(v)?),
                        Field::TimeUnix => r.stamp = Some(unix_stamp(v)?),
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
        // The first unescaped quote ends the field (Apache and nginx escape quotes
        // inside): what follows must be the literal.
        let k = closing_quote(rest)?;
        return rest[k..].starts_with(lit).then_some(k);
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
            // An agent logged `-` is GoAccess's `-` (its browser `Unknown`); other fields
            // `-` are not logged.
            let logged = v;
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
                W3cField::Agent => agent = logged,
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
        // The agent as logged, as GoAccess takes it: IIS's `+` for a space stays (GoAccess
        // shows `Mozilla/5.0+(Windows+NT+10.0)`), and CloudFront's `%20` is decoded once,
        // as every agent is, by the report that reads it (`summary::goaccess_decoded`).
        r.agent = agent;
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

// ---------------------------------------------------------------------------------------
// AWS load balancers.

/// Splits at single spaces, a field starting with `"` running to its closing quote.
fn aws_fields<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> Option<usize> {
    let mut i = 0;
    let mut n = 0;
    while i < line.len() && n < out.len() {
        let end = if line[i] == b'"' {
            i + 1 + closing_quote(&line[i + 1..])? + 1
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
fn parse_elb(line: &[u8], alb: bool) -> Option<Record<'_>> {
    let mut v: [&[u8]; 19] = [b""; 19];
    let n = aws_fields(line, &mut v)?;
    let o = usize::from(alb);
    if alb && !matches!(v[0], b"http" | b"https" | b"h2" | b"grpcs" | b"ws" | b"wss") {
        return None;
    }
    if n < 13 + o || (alb && n < 19) {
        return None;
    }
    let stamp = iso_stamp(v[o])?;
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
        return None;
    };
    let times: Option<u64> = (4..7)
        .map(|k| seconds_micros(v[k + o]))
        .try_fold(0u64, |a, t| a.checked_add(t?));
    let request = unquote(v[11 + o]);
    if !v[11 + o].starts_with(b"\"") {
        return None;
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
    Some(Record {
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
    })
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
    if !swath_kernels::logs::is_http_status(st) {
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
        Some(serde_json::Value::Number(n)) => Some(unix_stamp(n.to_string().as_bytes())),
        Some(serde_json::Value::String(s)) => {
            let b = s.as_bytes();
            Some(
                iso_stamp(b)
                    .or_else(|| apache_stamp(b))
                    .or_else(|| unix_stamp(b)),
            )
        }
        _ => None,
    };
    // A time logged that cannot be read fails the line, as in GoAccess; none logged is
    // a request without a time.
    let stamp = match stamp {
        Some(None) => return Outcome::Malformed,
        Some(read) => read,
        None => None,
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

/// The format a header line among `head`'s first lines names (W3C's `#Fields:`), for a
/// log of its headers only (a fresh IIS log), whose lines [`detect`] cannot try.
pub fn by_header(head: &[u8]) -> Option<Format> {
    FORMATS
        .iter()
        .filter(|b| matches!(b.reader, Reader::W3cFields))
        .find_map(|b| b.format(head).ok())
}

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
    // Each entry of the table as the head makes it (a W3C log by its header).
    let candidates = FORMATS.iter().filter_map(|b| b.format(head).ok());
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

    /// The built-in format `name` names.
    fn builtin(name: &str) -> Format {
        Format::named(name, b"").unwrap()
    }

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
            let want = one(&builtin("combined"), line);
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
            "|192.168.1.5||Some(20190513100001)|GET|/index.html?q=1||200|0||Mozilla/5.0+(Windows+NT+10.0)|Some(15000)"
        );
        assert_eq!(iis.parse(b"#Date: 2019", |_| {}), Outcome::Comment);
        let elb = one(&builtin("elb"), br#"2015-05-13T23:39:43.945958Z my-loadbalancer 192.168.131.39:2817 10.0.0.1:80 0.000073 0.001048 0.000057 200 200 0 29 "GET http://www.example.com:80/ HTTP/1.1" "curl/7.38.0" - -"#);
        assert_eq!(
            elb.unwrap(),
            "www.example.com|192.168.131.39||Some(20150513233943)|GET|/|HTTP/1.1|200|29||curl/7.38.0|Some(1178)"
        );
        let alb = one(&builtin("alb"), br#"http 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 "GET http://www.example.com:80/a?x=1 HTTP/1.1" "curl/7.46.0" - - arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337262-36d228ad5d99923122bbe354" "-" "-" 0 2018-07-02T22:22:48.364000Z "forward" "-" "-" "10.0.0.1:80" "200" "-" "-""#);
        assert_eq!(
            alb.unwrap(),
            "www.example.com|192.168.131.39||Some(20180702222300)|GET|/a?x=1|HTTP/1.1|200|366||curl/7.46.0|Some(1000)"
        );
        let caddy = one(&builtin("json"), br#"{"level":"info","ts":1646861401.5241024,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"41342","client_ip":"127.0.0.1","proto":"HTTP/2.0","method":"GET","host":"localhost","uri":"/","headers":{"User-Agent":["curl/7.82.0"],"Accept":["*/*"]}},"bytes_read":0,"user_id":"","duration":0.000929675,"size":10900,"status":200,"resp_headers":{"Server":["Caddy"]}}"#);
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
            one(&builtin("elb"), elb).unwrap().ends_with("|None"),
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
            // A failed line in both, as in GoAccess.
            let (a, b) = (one(&apache, bad_time), one(&builtin("combined"), bad_time));
            assert!(a.is_none() && b.is_none(), "{a:?} {b:?}");
        }
        let j = one(
            &builtin("json"),
            br#"{"status":200,"uri":"/c d e","duration":-1}"#,
        )
        .unwrap();
        assert!(j.ends_with("|None") && j.contains("|/c d e|"), "{j}");
        // A time logged that cannot be read fails the line (as in GoAccess); a number of
        // seconds, an ISO time or none at all does not.
        for (line, read) in [
            (&br#"{"status":200,"uri":"/","ts":"yesterday"}"#[..], false),
            (
                br#"{"status":200,"uri":"/","time":"2023-10-10T25:00:00Z"}"#,
                false,
            ),
            (br#"{"status":200,"uri":"/","ts":1646861401.5}"#, true),
            (
                br#"{"status":200,"uri":"/","time":"2023-10-10T13:00:00Z"}"#,
                true,
            ),
            (br#"{"status":200,"uri":"/"}"#, true),
        ] {
            assert_eq!(one(&builtin("json"), line).is_some(), read, "{line:?}");
        }
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
            let hand = one(&builtin("combined"), line.as_bytes());
            let by_template = one(&combined, line.as_bytes()).or_else(|| one(&common, line.as_bytes()));
            proptest::prop_assert_eq!(by_template, hand, "{}", line);
        }
    }

    /// The table of formats is whole: each name a format is shown as is recognised from
    /// its sample (every line of it a request, comments aside) and taken by `--format`,
    /// as is each alias; no name is taken twice; the first entry is the default.
    #[test]
    fn every_format_in_the_table_is_recognised_from_its_sample() {
        let mut names = std::collections::HashSet::new();
        for b in FORMATS {
            let head = b.shown[0].sample.as_bytes();
            for s in b.shown {
                assert!(names.insert(s.name), "{} twice", s.name);
                let d = detect(s.sample.as_bytes()).unwrap_or_else(|| panic!("{}", s.name));
                assert_eq!(d.format.name(), s.name);
                assert!(d.fit > 0 && d.fit == d.tried, "{}: {d:?}", s.name);
                let named = Format::named(s.name, s.sample.as_bytes()).unwrap();
                assert_eq!(named.name(), s.name);
                assert_eq!(named.spec(), d.format.spec());
                let what = NAMED.iter().find(|(n, _)| *n == s.name).map(|w| w.1);
                assert_eq!(what, Some(s.what));
            }
            for (alias, what) in b.aliases {
                assert!(names.insert(alias), "{alias} twice");
                assert_eq!(Format::named(alias, head).unwrap().name(), b.name());
                let listed = NAMED.iter().find(|(n, _)| n == alias).map(|w| w.1);
                assert_eq!(listed, *what);
            }
        }
        assert!(matches!(
            FORMATS[0].reader,
            Reader::Slices(_) | Reader::Lines(_)
        ));
        assert_eq!(Format::default().name(), FORMATS[0].name());
        assert_eq!(
            NAMED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
            "combined, common, vhost_combined, w3c, cloudfront, elb, alb, json"
        );
        assert_eq!(
            shown_names().join(", "),
            "combined, vhost_combined, w3c, cloudfront, elb, alb, json"
        );
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
