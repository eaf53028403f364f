//! `swath logs wf2` (the Wide Finder 2 report) against a plain sequential reference written
//! here from the rules alone: golden files, generated logs, engine settings, options, --json.
//!
//! The reference ([`tally`] and [`report`]) takes the rules literally, one line after the
//! other, with no shared code with swath. Assumptions where the rules leave a choice:
//!
//! * Lines are separated by `\n` only; a `\n` at the very end does not start another line; an
//!   empty line (or one of white space only) has 0 fields and so is malformed.
//! * Fields are the non-empty pieces between runs of space, tab, CR, VT (0x0b) and FF (0x0c):
//!   leading white space does not make an empty first field (awk's splitting, not Ruby's
//!   `split(/\s+/)`). No other byte (NUL, 0x85, 0xa0, U+00A0, U+3000) separates fields.
//! * A line with fewer than 11 fields is malformed whatever its method; the method test
//!   comes after.
//! * A status other than exactly `200`, `304` or `404` (`0200`, `200x`, `2000`) is ignored.
//! * A byte count is `-` (0), a non-empty string of ASCII digits (its value, saturating at
//!   u64::MAX), or anything else (`12x`, `+5`, `-5`: 0). Sums per URI saturate too.
//! * The article pattern's `\d` is an ASCII digit and `[^ .]` is any byte but space and dot
//!   (bytes are bytes: invalid UTF-8 in a title still makes an article).
//! * Referrer: excluded when the field is exactly `"-"` or begins with `"` followed by the
//!   self prefix (default `http://www.tbray.org/ongoing/`; `--self-referrer P` replaces it).
//!   Otherwise one leading `"` is removed if present, then one trailing `"` if present (so a
//!   field of a lone `"` gives the empty key).
//! * The MiB column prints the double `bytes as f64 / 1048576` with `%.1f` (round half to
//!   even on the exact binary value, as glibc does); ranking uses the exact u64.
//! * `--top 0` prints every section title followed by its blank line and no rows.
//! * The malformed count goes to stderr as [`malformed_message`]; exit status 0 even then.
//! * Several files are one log: the report of their concatenation (the files used here end
//!   with a newline, so whether a last line without one joins the next file is not tested).
//! * A missing file: `swath logs: NAME: No such file or directory`, exit status 2.
//! * `--json` keys are the full keys (not shortened to 60 bytes), as lossy UTF-8.
//! * Text keys are escaped for the terminal ([`escape`]): a backslash doubled, control
//!   characters and bytes outside UTF-8 as `\xHH`; a 60-byte cut never splits a character.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::{swath, swath_bin, without_format_line, Dir};

// ---------------------------------------------------------------------------------------
// The reference.

/// The default self-referrer prefix (without the opening quote).
const TBRAY: &[u8] = b"http://www.tbray.org/ongoing/";

/// What the report depends on besides the log.
struct Opts<'a> {
    top: usize,
    article: &'a dyn Fn(&[u8]) -> bool,
    self_referrer: &'a [u8],
}

impl Opts<'static> {
    fn wf2() -> Self {
        Opts {
            top: 10,
            article: &is_article,
            self_referrer: TBRAY,
        }
    }
}

type Table = HashMap<Vec<u8>, u64>;

#[derive(Default, Debug)]
struct Tally {
    hits: Table,
    bytes: Table,
    s404s: Table,
    clients: Table,
    referrers: Table,
    malformed: u64,
}

/// The message swath prints on stderr for N malformed lines (nothing for none).
fn malformed_message(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!("swath logs: {n} malformed lines skipped\n")
    }
}

/// The lines of a log: pieces between `\n`s, the last one counted without a final newline.
fn lines(log: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = log.split(|&b| b == b'\n').collect();
    // "a\nb\n" splits into ["a", "b", ""]: the empty piece after the last newline is no line.
    // An empty log splits into [""]: no line either.
    if v.last().is_some_and(|last| last.is_empty()) {
        v.pop();
    }
    v
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

fn fields(line: &[u8]) -> Vec<&[u8]> {
    line.split(|&b| is_space(b))
        .filter(|f| !f.is_empty())
        .collect()
}

/// `^/ongoing/When/\d\d\dx/\d\d\d\d/\d\d/\d\d/[^ .]+$` with ASCII digits, on bytes.
fn is_article(uri: &[u8]) -> bool {
    let Some(rest) = uri.strip_prefix(b"/ongoing/When/") else {
        return false;
    };
    // 'd' stands for an ASCII digit, every other template byte for itself.
    let template = b"dddx/dddd/dd/dd/";
    if rest.len() <= template.len() {
        return false; // the title needs at least one byte
    }
    let (date, title) = rest.split_at(template.len());
    let date_ok = date.iter().zip(template).all(|(&b, &t)| {
        if t == b'd' {
            b.is_ascii_digit()
        } else {
            b == t
        }
    });
    date_ok && title.iter().all(|&b| b != b' ' && b != b'.')
}

fn byte_count(field: &[u8]) -> u64 {
    if field == b"-" || field.is_empty() || !field.iter().all(u8::is_ascii_digit) {
        return 0;
    }
    let mut n: u64 = 0;
    for &d in field {
        n = n.saturating_mul(10).saturating_add(u64::from(d - b'0'));
    }
    n
}

fn bump(table: &mut Table, key: &[u8], by: u64) {
    let n = table.entry(key.to_vec()).or_insert(0);
    *n = n.saturating_add(by);
}

/// Reads the log line after line and fills the tables.
fn tally(log: &[u8], o: &Opts) -> Tally {
    let mut t = Tally::default();
    for line in lines(log) {
        let f = fields(line);
        if f.len() < 11 {
            t.malformed += 1;
            continue;
        }
        if f[5] != b"\"GET" {
            continue;
        }
        let (client, uri, status, bytes, referrer) = (f[0], f[6], f[8], f[9], f[10]);
        if status == b"404" {
            bump(&mut t.s404s, uri, 1);
            continue;
        }
        let n = match status {
            b"200" => byte_count(bytes),
            b"304" => 0,
            _ => continue,
        };
        bump(&mut t.bytes, uri, n);
        if !(o.article)(uri) {
            continue;
        }
        bump(&mut t.hits, uri, 1);
        bump(&mut t.clients, client, 1);
        let mut quoted_self = b"\"".to_vec();
        quoted_self.extend_from_slice(o.self_referrer);
        if referrer != b"\"-\"" && !referrer.starts_with(&quoted_self) {
            let r = referrer.strip_prefix(b"\"").unwrap_or(referrer);
            let r = r.strip_suffix(b"\"").unwrap_or(r);
            bump(&mut t.referrers, r, 1);
        }
    }
    t
}

/// The first `top` entries by count descending, then key ascending (bytewise).
fn top_rows(table: &Table, top: usize) -> Vec<(&[u8], u64)> {
    let mut rows: Vec<(&[u8], u64)> = table.iter().map(|(k, &n)| (k.as_slice(), n)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    rows.truncate(top);
    rows
}

/// `printf("%.1f", bytes / 1048576.0)`, computed exactly on the double: `bytes as f64` is an
/// integer-valued double and dividing by 2^20 is exact, so the value is `b / 2^20` with `b`
/// that integer; `%.1f` rounds it to tenths, half to even.
fn mib(bytes: u64) -> String {
    let b = (bytes as f64) as u128;
    let scaled = b * 10;
    let (q, r) = (scaled >> 20, scaled & ((1 << 20) - 1));
    let half = 1u128 << 19;
    let q = if r > half || (r == half && q % 2 == 1) {
        q + 1
    } else {
        q
    };
    format!("{}.{}", q / 10, q % 10)
}

/// A key longer than 60 bytes is shown as its first 60 bytes (fewer when a UTF-8 character
/// would be cut: the cut moves to its start) and `...`; then escaped for the terminal.
fn shorten(key: &[u8]) -> Vec<u8> {
    if key.len() <= 60 {
        return escape(key).into_bytes();
    }
    let mut cut = 60;
    for p in 57..60 {
        let len = match key[p] {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => continue,
        };
        if p + len > 60 && p + len <= key.len() && std::str::from_utf8(&key[p..p + len]).is_ok() {
            cut = p;
        }
    }
    (escape(&key[..cut]) + "...").into_bytes()
}

/// The terminal-safe form of a key in a text report: a backslash doubled; C0 controls, DEL,
/// C1 controls (as their UTF-8 bytes) and bytes outside valid UTF-8 as `\xHH`; bidi
/// controls and U+2028, U+2029 as `\u{HHHH}`; everything else as it is.
fn escape(key: &[u8]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < key.len() {
        // The longest valid character starting here, if any.
        let ch = (1..=4)
            .filter(|&l| i + l <= key.len())
            .find_map(|l| std::str::from_utf8(&key[i..i + l]).ok())
            .and_then(|s| s.chars().next());
        let Some(c) = ch else {
            out.push_str(&format!("\\x{:02x}", key[i]));
            i += 1;
            continue;
        };
        let n = c.len_utf8();
        let cp = c as u32;
        if c == '\\' {
            out.push_str("\\\\");
        } else if cp < 0x20 || (0x7f..0xa0).contains(&cp) {
            for b in &key[i..i + n] {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else if matches!(cp, 0x200e | 0x200f | 0x202a..=0x202e | 0x2066..=0x2069 | 0x2028 | 0x2029)
        {
            out.push_str(&format!("\\u{{{cp:04x}}}"));
        } else {
            out.push(c);
        }
        i += n;
    }
    out
}

fn sections(t: &Tally) -> [(&'static str, &Table, bool); 5] {
    [
        ("Top URIs by hit:", &t.hits, false),
        ("Top URIs by bytes:", &t.bytes, true),
        ("Top 404s:", &t.s404s, false),
        ("Top client addresses:", &t.clients, false),
        ("Top referrers:", &t.referrers, false),
    ]
}

/// The text report.
fn report(t: &Tally, top: usize) -> Vec<u8> {
    let mut out = format!(
        "{} resources, {} 404s, {} clients\n\n",
        t.hits.len(),
        t.s404s.len(),
        t.clients.len()
    )
    .into_bytes();
    for (title, table, in_mib) in sections(t) {
        out.extend_from_slice(title.as_bytes());
        out.push(b'\n');
        for (key, n) in top_rows(table, top) {
            let head = if in_mib {
                format!(" {:>9}M: ", mib(n))
            } else {
                format!(" {n:>10}: ")
            };
            out.extend_from_slice(head.as_bytes());
            out.extend_from_slice(&shorten(key));
            out.push(b'\n');
        }
        out.push(b'\n');
    }
    out
}

fn reference(log: &[u8], o: &Opts) -> (Vec<u8>, Tally) {
    let t = tally(log, o);
    (report(&t, o.top), t)
}

// ---------------------------------------------------------------------------------------
// Running swath and collecting disagreements.

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/logs")
}

/// `swath logs wf2 ARGS` in `cwd`, with `stdin` fed from bytes (or nothing).
fn wf2(cwd: &Path, args: &[&OsStr], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(swath_bin());
    cmd.arg("logs")
        .arg("wf2")
        .args(args)
        .current_dir(cwd)
        .env_remove("LC_ALL")
        .env_remove("LANG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().expect("run swath");
    let writer = stdin.map(|data| {
        let mut pipe = child.stdin.take().unwrap();
        let data = data.to_vec();
        std::thread::spawn(move || {
            // swath may stop reading early (an error): a broken pipe is its business.
            let _ = pipe.write_all(&data);
        })
    });
    let out = child.wait_with_output().expect("wait for swath");
    if let Some(w) = writer {
        w.join().unwrap();
    }
    out
}

fn os<'a>(args: &[&'a str]) -> Vec<&'a OsStr> {
    args.iter().map(|s| OsStr::new(*s)).collect()
}

fn show(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    if s.len() > 3000 {
        let mut cut = 3000;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}... [{} bytes in all]", &s[..cut], bytes.len())
    } else {
        s.into_owned()
    }
}

/// The first line where two outputs differ, to keep failure messages short.
fn first_difference(expected: &[u8], got: &[u8]) -> String {
    let e: Vec<&[u8]> = expected.split(|&b| b == b'\n').collect();
    let g: Vec<&[u8]> = got.split(|&b| b == b'\n').collect();
    for i in 0..e.len().max(g.len()) {
        let (a, b) = (e.get(i), g.get(i));
        if a != b {
            return format!(
                "line {}: expected {:?}, got {:?}",
                i + 1,
                a.map(|l| String::from_utf8_lossy(l)),
                b.map(|l| String::from_utf8_lossy(l))
            );
        }
    }
    "no line differs".into()
}

/// Disagreements gathered over a test, reported together at its end.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn same(&mut self, what: &str, expected: &[u8], got: &[u8]) -> bool {
        if expected == got {
            return true;
        }
        self.0.push(format!(
            "{what}: {}\n--- expected ---\n{}\n--- got ---\n{}",
            first_difference(expected, got),
            show(expected),
            show(got)
        ));
        false
    }

    fn fail(&mut self, msg: String) {
        self.0.push(msg);
    }

    /// stdout equals `expected`, stderr the malformed message, exit status 0.
    fn outcome(&mut self, what: &str, out: &Output, expected: &[u8], malformed: u64) {
        self.same(&format!("{what}: stdout"), expected, &out.stdout);
        self.same(
            &format!("{what}: stderr"),
            malformed_message(malformed).as_bytes(),
            &out.stderr,
        );
        if out.status.code() != Some(0) {
            self.fail(format!(
                "{what}: exit status {:?}, expected 0 (stderr {:?})",
                out.status.code(),
                show(&out.stderr)
            ));
        }
    }

    fn finish(self) {
        if !self.0.is_empty() {
            panic!(
                "{} disagreement(s):\n\n{}",
                self.0.len(),
                self.0.join("\n\n")
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Inputs.

/// The golden outputs: (output, input log, --top, malformed lines in the input, counted by
/// hand).
const GOLDEN: [(&str, &str, usize, u64); 7] = [
    ("basic", "basic", 10, 0),
    // The referrers cut from the top 10 above: tbray.org without /ongoing/, the unquoted and
    // slash-less self prefixes.
    ("basic.top30", "basic", 30, 0),
    ("separators", "separators", 10, 0),
    // A 10-field line, an empty line, a line of white space, two binary lines (the one of
    // every byte but \n splits into 3 fields), `a b c d e "GET`, and the empty last line
    // (the file ends in "\n\n").
    ("garbage", "garbage", 10, 7),
    // Byte counts past u64::MAX and sums past it saturate.
    ("saturation", "saturation", 10, 0),
    ("empty", "empty", 10, 0),
    ("rounding", "rounding", 10, 0),
];

/// A log with lines of a megabyte: a valid line with a 1 MB agent, one with a 1 MB referrer
/// (shortened in the report), a 1 MB line without white space and 1 MB of binary noise, all
/// separated by valid lines. Built here rather than stored.
fn big_line_log() -> Vec<u8> {
    const MB: usize = 1 << 20;
    let a = b"/ongoing/When/200x/2007/10/09/Big";
    let mut log = Vec::new();
    let valid = |log: &mut Vec<u8>, client: &str, referrer: &[u8], agent: &[u8]| {
        log.extend_from_slice(client.as_bytes());
        log.extend_from_slice(b" - - [09/Oct/2007:12:00:00 -0700] \"GET ");
        log.extend_from_slice(a);
        log.extend_from_slice(b" HTTP/1.1\" 200 1234 ");
        log.extend_from_slice(referrer);
        log.push(b' ');
        log.extend_from_slice(agent);
        log.push(b'\n');
    };
    valid(&mut log, "c1", b"\"-\"", b"\"small\"");
    let mut agent = vec![b'"'];
    agent.extend((0..MB).map(|i| b"Mozilla/5.0 (X11; Linux) "[i % 25]));
    agent.push(b'"');
    valid(&mut log, "c2", b"\"http://r.example/\"", &agent);
    let mut referrer = b"\"http://long.example/".to_vec();
    referrer.extend((0..MB).map(|i| b'a' + (i % 26) as u8));
    referrer.push(b'"');
    valid(&mut log, "c3", &referrer, b"\"x\"");
    log.extend((0..MB).map(|i| b'A' + (i % 26) as u8));
    log.push(b'\n');
    valid(&mut log, "c4", b"\"http://r.example/\"", b"\"y\"");
    let mut rng = Rng(99);
    log.extend((0..MB).map(|_| match rng.next() as u8 {
        b'\n' => 0,
        b => b,
    }));
    log.push(b'\n');
    valid(&mut log, "c5", &referrer, b"\"z\"");
    log
}

/// splitmix64: a seeded generator needing no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T: ?Sized>(&mut self, xs: &[&'a T]) -> &'a T {
        xs[self.below(xs.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// A log of `n` random lines mixing valid records with the edge cases of the golden files:
/// small pools of clients, URIs and referrers so that counts collide and ties are cut. With
/// `huge`, some byte counts are 23 digits long, so sums saturate (kept out of the log the
/// engine and option tests share, so that a saturation bug does not hide the rest).
fn random_log(seed: u64, n: usize, huge: bool) -> Vec<u8> {
    let mut rng = Rng(seed);
    let clients: [&[u8]; 9] = [
        b"10.0.0.1",
        b"10.0.0.2",
        b"10.0.0.10",
        b"192.168.1.1",
        b"c\xffbad",
        b"host.example.com",
        b"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
        b"2001:db8::1",
        b"\x00nul",
    ];
    let uris: [&[u8]; 22] = [
        b"/ongoing/When/200x/2007/10/09/Alpha",
        b"/ongoing/When/200x/2007/10/10/Beta",
        b"/ongoing/When/200x/2007/10/11/Gamma",
        b"/ongoing/When/200x/2007/10/12/Delta",
        b"/ongoing/When/199x/1999/01/01/Old",
        b"/ongoing/When/200x/2007/10/13/A-long-title-that-goes-on-and-on-and-on-past-sixty-bytes",
        b"/ongoing/When/200x/2007/10/14/inval\xff\xfe",
        b"/ongoing/When/200x/2007/10/15/a/b?c=d",
        b"/ongoing/When/200x/2007/10/09/",
        b"/ongoing/When/200x/2007/10/09/a.b",
        b"/ongoing/When/200x/2007/10/0\xd9\xa9/x",
        b"/ongoing/When/200X/2007/10/09/x",
        b"/ongoing/",
        b"/ongoing/ongoing.atom",
        b"/",
        b"/favicon.ico",
        b"/a/",
        b"/a/one",
        b"/a/two.html",
        b"/b/a/",
        b"\"GET",
        b"/robots.txt",
    ];
    let methods: [&[u8]; 8] = [
        b"\"GET", b"\"GET", b"\"GET", b"\"GET", b"\"POST", b"\"HEAD", b"\"get", b"\"GET\"",
    ];
    let statuses: [&[u8]; 12] = [
        b"200", b"200", b"200", b"200", b"304", b"304", b"404", b"404", b"500", b"0200", b"200x",
        b"301",
    ];
    let referrers: [&[u8]; 14] = [
        b"\"-\"",
        b"\"-\"",
        b"\"http://www.tbray.org/ongoing/When/200x/\"",
        b"\"http://www.tbray.org/ongoing/\"",
        b"\"http://www.tbray.org/\"",
        b"\"http://x/\"",
        b"\"http://x/foo\"",
        b"\"http://x.example/\"",
        b"\"http://google.com/search?q=wide+finder\"",
        b"http://unquoted.example/",
        b"\"",
        b"\"\xff\xfe\"",
        b"\"http://a-referrer-that-is-definitely-longer-than-sixty-bytes.example/path\"",
        b"-",
    ];
    let seps: [&[u8]; 8] = [b" ", b" ", b" ", b" ", b"  ", b"\t", b" \x0b", b"\x0c\r "];
    let mut log = Vec::new();
    for _ in 0..n {
        let roll = rng.below(100);
        if roll < 3 {
            // Binary garbage (no newline inside).
            let len = rng.below(300);
            log.extend((0..len).map(|_| match rng.next() as u8 {
                b'\n' => b'?',
                b => b,
            }));
            log.push(b'\n');
            continue;
        }
        if roll < 4 {
            log.extend_from_slice(if rng.chance(50) { b"\n" } else { b" \t\r\n" });
            continue;
        }
        let mut bytes_field = (rng.next() % 100_000).to_string().into_bytes();
        match rng.below(20) {
            0 => bytes_field = b"-".to_vec(),
            1 => bytes_field = b"12x".to_vec(),
            2 if huge => bytes_field = b"99999999999999999999999".to_vec(),
            2 => bytes_field = b"0000000000000000000000000000000000000017".to_vec(),
            3 => bytes_field = (rng.next() % 5_000_000).to_string().into_bytes(),
            _ => {}
        }
        let date = if rng.chance(2) {
            b"[09/Oct/2007:12:00:00]".to_vec()
        } else {
            format!("[{:02}/Oct/2007:12:00:00 -0700]", rng.below(31) + 1).into_bytes()
        };
        let mut agent = b"\"Mozilla/5.0 (X11; Linux x86_64)\"".to_vec();
        if rng.chance(1) {
            agent.extend(std::iter::repeat_n(b'z', 5000 + rng.below(5000)));
        }
        let f: Vec<Vec<u8>> = vec![
            rng.pick(&clients).to_vec(),
            b"-".to_vec(),
            b"-".to_vec(),
            date,
            rng.pick(&methods).to_vec(),
            rng.pick(&uris).to_vec(),
            b"HTTP/1.1\"".to_vec(),
            rng.pick(&statuses).to_vec(),
            bytes_field,
            rng.pick(&referrers).to_vec(),
            agent,
        ];
        // A date without its zone has 10 fields before the agent (and shifts them).
        let keep = if rng.chance(3) {
            rng.below(f.len())
        } else {
            f.len()
        };
        if rng.chance(3) {
            log.extend_from_slice(rng.pick(&seps));
        }
        for (i, field) in f[..keep].iter().enumerate() {
            if i > 0 {
                log.extend_from_slice(rng.pick(&seps));
            }
            log.extend_from_slice(field);
        }
        if rng.chance(5) {
            log.push(b'\r');
        }
        log.push(b'\n');
    }
    // The last line without its newline.
    if log.last() == Some(&b'\n') {
        log.pop();
    }
    log
}

fn random_dir() -> (Dir, Vec<u8>) {
    let dir = Dir::new();
    let log = random_log(2007, 12_000, false);
    dir.write("random.log", &log);
    (dir, log)
}

// ---------------------------------------------------------------------------------------
// The reference on its own: golden files and hand checks.

/// Golden outputs. The logs come from tests/data/logs/make-logs.py (bigline.log from
/// [`big_line_log`]); `SWATH_BLESS=1 cargo test --test cli logs::golden` rewrites the .txt
/// files from the reference (then read the diff before committing).
///
/// Checked by hand, basic.log (the lines are in tests/data/logs/basic.log):
/// * resources: Alpha, Beta, Gamma, the 61- and 60-byte URIs (12/LLL..., 13/MMM...) and the
///   twelve 20/tN: 17 (the `/09/` and `a.b` URIs and `/ongoing/` are not articles).
/// * 404s: Alpha (c7), /missing (c7, c8), Gamma (c9) = 3; the HEAD 404 does not count.
/// * clients: c1 (Alpha, Beta), c2 (Alpha, Beta), c3 (Alpha 304), c4, c11 (4 x Beta), the
///   61 x and 60 y clients, and the twelve 10.0.0.N = 19; c10's lines are all skipped (POST,
///   HEAD, a 5th-field "GET, `"GET"`, `GET`), c5 only POSTs and HEADs, c6 only non-articles,
///   c7/c8/c9 only 404s.
/// * hits: Beta 6 (c1 200, c2 304, four c11), Alpha 3 (c1, c2, c3), then eight of the
///   fifteen 1s in bytewise order: 10/11/Gamma, 10/12/LLL... (61 bytes: its first 60 and
///   `...`), 10/13/MMM... (60 bytes, whole), 10/20/t1, t10, t11, t12, t2 (t20, t3..t8 cut).
/// * clients: c11 4, c1 2, c2 2, then 10.0.0.1, .10, .11, .12, .2, .20, .3 (bytewise).
/// * bytes: Beta 1048576+4 (= 1.0M), /ongoing/ 3000 and Alpha 3000 (1000+2000+0; tie, and
///   `/ongoing/` is a prefix so first), Gamma 500, then six of the twelve 20/tN at 100
///   (0.0M each): t1, t10, t11, t12, t2, t20. The HEAD and POST bytes do not count.
/// * referrers: `http://ref.example/one` 2 (Alpha by c1, Beta 304 by c2), then 1 each
///   sorted bytewise: half.example (leading quote only), noquote.example, the 60-byte
///   referrer whole, the 61-byte one shortened, ref.example/two, tie.example/1, 10, 11, 12.
///   In basic.top30.txt, `http://www.tbray.org/other` counts (not /ongoing/), the unquoted
///   `http://www.tbray.org/ongoing/unquoted` counts (the rule has the quote), and so does
///   `"http://www.tbray.org/ongoing` (no slash), shown as `http://www.tbray.org/ongoing`.
///
/// Checked by hand, separators.log: Beta 4 (c3 304, c4, c5, c6: U+00A0, a lone 0xa0 and
/// U+3000 stay inside the client), Gamma 4 (c7, c9 with a NUL in its name, c10, c11 without
/// a final newline), Alpha 2 (c1, c2 with CRLF and leading white space); c8's 404 follows a
/// lone CR inside c7's line, so 0 404s; bytes Alpha 200, Gamma 103, Beta 21; referrers: the
/// six non-"-" ones of c2, c4, c5, c9, c10, c11 (CR, VT, FF around them are separators).
///
/// Checked by hand, rounding.log: 262144 bytes = 0.25 MiB prints 0.2 (half to even),
/// 786432 = 0.75 prints 0.8, 1310720 = 1.25 prints 1.2, 2359296 = 2.25 prints 2.2, 52429
/// (0.0500002) prints 0.1, 52428 (0.0499992) prints 0.0.
#[test]
fn golden_files_match_the_reference() {
    let bless = std::env::var_os("SWATH_BLESS").is_some();
    let mut failures = Failures::default();
    let mut cases: Vec<(String, Vec<u8>, usize, u64)> = GOLDEN
        .iter()
        .map(|&(name, input, top, malformed)| {
            let log = std::fs::read(data_dir().join(format!("{input}.log"))).unwrap();
            (name.to_string(), log, top, malformed)
        })
        .collect();
    // The 1 MB line without white space is malformed; the megabyte of noise has thousands of
    // fields, and a 6th field that is not `"GET`.
    cases.push(("bigline".into(), big_line_log(), 10, 1));
    for (name, log, top, malformed) in &cases {
        let o = Opts {
            top: *top,
            ..Opts::wf2()
        };
        let (text, t) = reference(log, &o);
        let golden = data_dir().join(format!("{name}.txt"));
        if bless {
            std::fs::write(&golden, &text).unwrap();
        }
        let expected = std::fs::read(&golden).unwrap_or_default();
        failures.same(&format!("reference for {name}.txt"), &expected, &text);
        if t.malformed != *malformed {
            failures.fail(format!(
                "reference for {name}.txt: {} malformed lines, counted {malformed} by hand",
                t.malformed
            ));
        }
    }
    failures.finish();
}

#[test]
fn reference_hand_checks() {
    // Fields and lines.
    assert_eq!(lines(b""), Vec::<&[u8]>::new());
    assert_eq!(lines(b"\n"), vec![&b""[..]]);
    assert_eq!(lines(b"a\nb"), vec![&b"a"[..], b"b"]);
    assert_eq!(lines(b"a\n\nb\n"), vec![&b"a"[..], b"", b"b"]);
    assert_eq!(
        fields(b" a\tb\x0bc\x0cd\re  f\xc2\xa0g\x00 "),
        vec![&b"a"[..], b"b", b"c", b"d", b"e", b"f\xc2\xa0g\x00"]
    );
    // Articles.
    for yes in [
        &b"/ongoing/When/200x/2007/10/09/x"[..],
        b"/ongoing/When/000x/0000/00/00/\xff",
        b"/ongoing/When/200x/2007/10/09/a/b?c",
    ] {
        assert!(is_article(yes), "{}", String::from_utf8_lossy(yes));
    }
    for no in [
        &b"/ongoing/When/200x/2007/10/09/"[..],
        b"/ongoing/When/200x/2007/10/09/a.b",
        b"/ongoing/When/200x/2007/10/09/.",
        b"/ongoing/When/200X/2007/10/09/x",
        b"/ongoing/When/200x/2007/10/9/xx",
        b"/ongoing/When/2000x/2007/10/09/x",
        b"/ongoing/When/200x/2007/10/0\xd9\xa9/x",
        b"x/ongoing/When/200x/2007/10/09/x",
        b"/ongoing/When/200x/2007/10/09",
    ] {
        assert!(!is_article(no), "{}", String::from_utf8_lossy(no));
    }
    // Byte counts.
    assert_eq!(byte_count(b"-"), 0);
    assert_eq!(byte_count(b"00042"), 42);
    assert_eq!(byte_count(b"12x"), 0);
    assert_eq!(byte_count(b"+5"), 0);
    assert_eq!(byte_count(b"18446744073709551615"), u64::MAX);
    assert_eq!(byte_count(b"18446744073709551616"), u64::MAX);
    // Rows.
    assert_eq!(shorten(&[b'a'; 60]), vec![b'a'; 60]);
    assert_eq!(shorten(&[b'a'; 61]), [&[b'a'; 60][..], b"..."].concat());
    let e = "\u{e9}".as_bytes();
    let straddling = [&[b'a'; 59][..], e, b"zz"].concat();
    assert_eq!(shorten(&straddling), [&[b'a'; 59][..], b"..."].concat());
    assert_eq!(escape(b"\x1b[2J\\\xff\0"), "\\x1b[2J\\\\\\xff\\x00");
    // A tiny report, written out in full.
    let log =
        b"c - - [d z] \"GET /ongoing/When/200x/2007/10/09/T HTTP/1.1\" 200 1048576 \"http://r/\"\n\
                d - - [d z] \"GET /x HTTP/1.1\" 404 0 \"-\"\nshort line\n";
    let (text, t) = reference(log, &Opts::wf2());
    assert_eq!(t.malformed, 1);
    assert_eq!(
        String::from_utf8(text).unwrap(),
        "1 resources, 1 404s, 1 clients\n\n\
         Top URIs by hit:\n          1: /ongoing/When/200x/2007/10/09/T\n\n\
         Top URIs by bytes:\n       1.0M: /ongoing/When/200x/2007/10/09/T\n\n\
         Top 404s:\n          1: /x\n\n\
         Top client addresses:\n          1: c\n\n\
         Top referrers:\n          1: http://r/\n\n"
    );
}

/// The exact MiB formatting agrees with glibc's printf on ties, near-ties and huge values.
#[test]
fn mib_matches_printf() {
    let mut rng = Rng(5);
    let mut values: Vec<u64> = vec![
        0,
        1,
        52428,
        52429,
        262144,
        786432,
        1310720,
        2359296,
        1048523571,
        (1 << 53) + 1,
        u64::MAX,
        u64::MAX - 1,
    ];
    values.extend((0..2000).map(|_| rng.next() % (1 << 36)));
    values.extend((0..200).map(|i| i * 52428 + (i % 3)));
    values.extend((0..200).map(|_| rng.next()));
    for v in values {
        let x = v as f64 / 1048576.0;
        let mut buf = [0u8; 64];
        // SAFETY: the buffer is 64 bytes, more than "%.1f" of any value below 2^64 needs, and
        // the format takes one double.
        let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%.1f".as_ptr(), x) };
        let printf = std::str::from_utf8(&buf[..n as usize]).unwrap();
        assert_eq!(mib(v), printf, "{v} bytes");
    }
}

// ---------------------------------------------------------------------------------------
// swath against the reference.

#[test]
fn golden_files_swath_agrees() {
    let dir = Dir::new();
    let mut failures = Failures::default();
    for &(name, input, top, _) in &GOLDEN {
        let path = data_dir().join(format!("{input}.log"));
        let log = std::fs::read(&path).unwrap();
        let o = Opts { top, ..Opts::wf2() };
        let (text, t) = reference(&log, &o);
        let top_s = top.to_string();
        let out = wf2(
            dir.tmp.path(),
            &[OsStr::new("--top"), OsStr::new(&top_s), path.as_os_str()],
            None,
        );
        failures.outcome(
            &format!("swath logs wf2 --top {top} {input}.log ({name}.txt)"),
            &out,
            &text,
            t.malformed,
        );
        if top == 10 {
            let out = wf2(dir.tmp.path(), &[path.as_os_str()], None);
            failures.outcome(
                &format!("swath logs wf2 {input}.log"),
                &out,
                &text,
                t.malformed,
            );
        }
    }
    let log = big_line_log();
    dir.write("bigline.log", &log);
    let (text, t) = reference(&log, &Opts::wf2());
    let out = wf2(dir.tmp.path(), &os(&["bigline.log"]), None);
    failures.outcome("swath logs wf2 bigline.log", &out, &text, t.malformed);
    // The long lines across small blocks.
    let out = wf2(
        dir.tmp.path(),
        &os(&["--threads", "3", "--block-size", "4096", "bigline.log"]),
        None,
    );
    failures.outcome(
        "swath logs wf2 --threads 3 --block-size 4096 bigline.log",
        &out,
        &text,
        t.malformed,
    );
    failures.finish();
}

#[test]
fn random_logs_swath_agrees() {
    let dir = Dir::new();
    let mut failures = Failures::default();
    for (seed, n, huge) in [
        (1, 3000, false),
        (2, 20_000, true),
        (3, 50, true),
        (4, 5000, true),
    ] {
        let log = random_log(seed, n, huge);
        let name = format!("random-{seed}.log");
        dir.write(&name, &log);
        let (text, t) = reference(&log, &Opts::wf2());
        assert!(
            t.malformed > 0 || n < 100,
            "the generator makes malformed lines"
        );
        assert!(t.hits.len() > 3 || n < 100, "the generator makes articles");
        let out = wf2(dir.tmp.path(), &os(&[&name]), None);
        failures.outcome(&format!("swath logs wf2 {name}"), &out, &text, t.malformed);
    }
    failures.finish();
}

#[test]
fn generated_log_swath_agrees() {
    let dir = Dir::new();
    let gen = Command::new(swath_bin())
        .args(["gen", "log", "20M", "gen.log", "--damaged"])
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    if !gen.status.success() {
        let err = String::from_utf8_lossy(&gen.stderr);
        if err.contains("unrecognized subcommand") {
            eprintln!(
                "skipped: `swath gen log` does not exist yet ({})",
                err.trim()
            );
            return;
        }
        panic!("swath gen log 20M gen.log: {gen:?}");
    }
    let log = std::fs::read(dir.path("gen.log")).unwrap();
    assert_eq!(log.len(), 20 << 20, "swath gen log 20M makes 20 MiB");
    let (text, t) = reference(&log, &Opts::wf2());
    assert!(
        t.hits.len() > 10,
        "a generated log should hold articles: {t:?}"
    );
    let mut failures = Failures::default();
    let out = wf2(dir.tmp.path(), &os(&["gen.log"]), None);
    failures.outcome("swath logs wf2 gen.log", &out, &text, t.malformed);
    failures.finish();
}

#[test]
fn engine_settings_do_not_change_the_report() {
    let (dir, log) = random_dir();
    let (text, t) = reference(&log, &Opts::wf2());
    let mut failures = Failures::default();
    for extra in [
        "",
        "--threads 1",
        "--threads 2",
        "--threads 3 --block-size 1",
        "--block-size 7",
        "--block-size 4096 --strategy pread",
        "--strategy mmap",
        "--threads 0",
        "--threads -1",
        "--threads 4 --block-size 100 --layout stripes",
    ] {
        let mut args: Vec<&str> = extra.split_whitespace().collect();
        args.push("random.log");
        let out = wf2(dir.tmp.path(), &os(&args), None);
        failures.outcome(
            &format!("swath logs wf2 {extra} random.log"),
            &out,
            &text,
            t.malformed,
        );
    }
    // --time adds to stderr only.
    let out = wf2(dir.tmp.path(), &os(&["--time", "random.log"]), None);
    failures.same(
        "swath logs wf2 --time random.log: stdout",
        &text,
        &out.stdout,
    );
    if !String::from_utf8_lossy(&out.stderr).contains(malformed_message(t.malformed).trim_end()) {
        failures.fail(format!(
            "swath logs wf2 --time random.log: stderr lacks the malformed count: {}",
            show(&out.stderr)
        ));
    }
    failures.finish();
}

#[test]
fn top_article_and_self_referrer_options() {
    let (dir, log) = random_dir();
    let mut failures = Failures::default();
    let starts_a = |u: &[u8]| u.starts_with(b"/a/");
    let cases: Vec<(&str, Opts)> = vec![
        (
            "--top 3",
            Opts {
                top: 3,
                ..Opts::wf2()
            },
        ),
        (
            "--top 0",
            Opts {
                top: 0,
                ..Opts::wf2()
            },
        ),
        (
            "--top 1000",
            Opts {
                top: 1000,
                ..Opts::wf2()
            },
        ),
        (
            "--article ^/a/",
            Opts {
                article: &starts_a,
                ..Opts::wf2()
            },
        ),
        (
            "--self-referrer http://x/",
            Opts {
                self_referrer: b"http://x/",
                ..Opts::wf2()
            },
        ),
        (
            "--top 4 --article ^/a/ --self-referrer http://x/",
            Opts {
                top: 4,
                article: &starts_a,
                self_referrer: b"http://x/",
            },
        ),
    ];
    for (opts, o) in &cases {
        let (text, t) = reference(&log, o);
        let mut args: Vec<&str> = opts.split(' ').collect();
        args.push("random.log");
        let out = wf2(dir.tmp.path(), &os(&args), None);
        failures.outcome(
            &format!("swath logs wf2 {opts} random.log"),
            &out,
            &text,
            t.malformed,
        );
    }
    failures.finish();
}

#[test]
fn several_files_stdin_and_gzip() {
    let (dir, log) = random_dir();
    let mut failures = Failures::default();
    // Three pieces cut at newlines, each ending with one.
    let cut1 = log[..log.len() / 3]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let cut2 = log[..2 * log.len() / 3]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let mut whole = log.clone();
    whole.push(b'\n');
    dir.write("whole.log", &whole);
    dir.write("p1", &whole[..cut1]);
    dir.write("p2", &whole[cut1..cut2]);
    dir.write("p3", &whole[cut2..]);
    let (text, t) = reference(&whole, &Opts::wf2());
    let out = wf2(dir.tmp.path(), &os(&["p1", "p2", "p3"]), None);
    failures.outcome("swath logs wf2 p1 p2 p3", &out, &text, t.malformed);
    let out = wf2(
        dir.tmp.path(),
        &os(&["p1", "-", "p3"]),
        Some(&whole[cut1..cut2]),
    );
    failures.outcome("swath logs wf2 p1 - p3 < p2", &out, &text, t.malformed);
    let out = wf2(dir.tmp.path(), &os(&["-"]), Some(&whole));
    failures.outcome("swath logs wf2 - < whole.log", &out, &text, t.malformed);
    dir.write("empty", b"");
    let out = wf2(
        dir.tmp.path(),
        &os(&[
            "--threads",
            "3",
            "--block-size",
            "1000",
            "p1",
            "empty",
            "p2",
            "p3",
        ]),
        None,
    );
    failures.outcome(
        "swath logs wf2 --threads 3 --block-size 1000 p1 empty p2 p3",
        &out,
        &text,
        t.malformed,
    );

    // gzip: by name, by magic number, on stdin, mixed with plain files.
    let gzip = Command::new("gzip")
        .args(["-k", "-9", "whole.log"])
        .current_dir(dir.tmp.path())
        .status();
    match gzip {
        Ok(s) if s.success() => {
            std::fs::copy(dir.path("whole.log.gz"), dir.path("whole-gzipped")).unwrap();
            let gz = std::fs::read(dir.path("whole.log.gz")).unwrap();
            assert_ne!(gz, whole);
            for args in [&["whole.log.gz"][..], &["whole-gzipped"], &["-"]] {
                let out = wf2(dir.tmp.path(), &os(args), Some(&gz));
                failures.outcome(
                    &format!("swath logs wf2 {} (gzip)", args.join(" ")),
                    &out,
                    &text,
                    t.malformed,
                );
            }
            Command::new("gzip")
                .args(["-k", "p2"])
                .current_dir(dir.tmp.path())
                .status()
                .unwrap();
            let out = wf2(dir.tmp.path(), &os(&["p1", "p2.gz", "p3"]), None);
            failures.outcome("swath logs wf2 p1 p2.gz p3", &out, &text, t.malformed);
            // A file of several gzip members (as `cat a.gz b.gz` makes) is one stream.
            Command::new("gzip")
                .args(["-k", "p1", "p3"])
                .current_dir(dir.tmp.path())
                .status()
                .unwrap();
            let members = [
                std::fs::read(dir.path("p1.gz")).unwrap(),
                std::fs::read(dir.path("p2.gz")).unwrap(),
                std::fs::read(dir.path("p3.gz")).unwrap(),
            ]
            .concat();
            dir.write("members.gz", &members);
            let out = wf2(dir.tmp.path(), &os(&["members.gz"]), None);
            failures.outcome(
                "swath logs wf2 members.gz (p1.gz p2.gz p3.gz concatenated)",
                &out,
                &text,
                t.malformed,
            );
        }
        other => swath_engine::testing::skip(&format!(
            "skipped the gzip cases: gzip -k whole.log gave {other:?}"
        )),
    }
    failures.finish();
}

/// `data` compressed by `how` (`gz`, `zst`, `xz`, `bz2`) as one member, frame or stream.
fn compressed(how: &str, data: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    match how {
        "gz" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "zst" => zstd::encode_all(data, 3).unwrap(),
        "xz" => {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "bz2" => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        _ => unreachable!("{how}"),
    }
}

#[test]
fn zstd_xz_and_bzip2_logs_read_as_the_plain_log() {
    let (dir, log) = random_dir();
    let mut failures = Failures::default();
    let mut whole = log.clone();
    whole.push(b'\n');
    let cut = whole[..whole.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let (text, t) = reference(&whole, &Opts::wf2());
    for how in ["gz", "zst", "xz", "bz2"] {
        // One stream, by its magic bytes whatever the name; two streams end to end (as
        // `cat a.zst b.zst` makes) are one log; on standard input; beside a plain file.
        let one = compressed(how, &whole);
        assert_ne!(one, whole);
        dir.write(&format!("whole.{how}"), &one);
        dir.write(&format!("noname-{how}"), &one);
        let two = [
            compressed(how, &whole[..cut]),
            compressed(how, &whole[cut..]),
        ]
        .concat();
        dir.write(&format!("two.{how}"), &two);
        dir.write(&format!("half.{how}"), &compressed(how, &whole[..cut]));
        dir.write("rest.log", &whole[cut..]);
        for (args, stdin) in [
            (vec![format!("whole.{how}")], None),
            (vec![format!("noname-{how}")], None),
            (vec![format!("two.{how}")], None),
            (vec!["-".to_string()], Some(&two)),
            (vec![format!("half.{how}"), "rest.log".to_string()], None),
        ] {
            let a: Vec<&str> = args.iter().map(|s| &s[..]).collect();
            let out = wf2(dir.tmp.path(), &os(&a), stdin.map(|v| &v[..]));
            failures.outcome(
                &format!("swath logs wf2 {}", a.join(" ")),
                &out,
                &text,
                t.malformed,
            );
        }
        // Cut short: the file and the compression named, status 2.
        dir.write(&format!("cut.{how}"), &one[..one.len() / 2]);
        let out = wf2(dir.tmp.path(), &os(&[&format!("cut.{how}")]), None);
        let name = match how {
            "gz" => "gzip",
            "zst" => "zstd",
            "bz2" => "bzip2",
            _ => "xz",
        };
        let want = format!("cut.{how}: unexpected end of {name} data (truncated file?)");
        if out.status.code() != Some(2) || !String::from_utf8_lossy(&out.stderr).contains(&want) {
            failures.fail(format!(
                "swath logs wf2 cut.{how}: status {:?}, stderr {:?}, expected 2 and {want:?}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        // A damaged stream: the file named, status 2, never a report of zeros.
        let mut bad = one.clone();
        let mid = bad.len() / 2;
        for b in &mut bad[mid..mid + 8] {
            *b ^= 0x5a;
        }
        dir.write(&format!("bad.{how}"), &bad);
        let out = wf2(dir.tmp.path(), &os(&[&format!("bad.{how}")]), None);
        let said = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(2) || !said.contains(&format!("swath logs: bad.{how}: ")) {
            failures.fail(format!(
                "swath logs wf2 bad.{how}: status {:?}, stderr {said:?}",
                out.status.code()
            ));
        }
    }
    failures.finish();
}

#[test]
fn missing_file_and_malformed_message() {
    let dir = Dir::new();
    let mut failures = Failures::default();
    let out = wf2(dir.tmp.path(), &os(&["nosuch"]), None);
    failures.same(
        "swath logs wf2 nosuch: stderr",
        b"swath logs: nosuch: No such file or directory\n",
        &out.stderr,
    );
    // What stdout holds then (nothing, or the report of the other files) is not specified.
    if out.status.code() != Some(2) {
        failures.fail(format!(
            "swath logs wf2 nosuch: exit status {:?}, expected 2",
            out.status.code()
        ));
    }
    // Malformed lines only: the reference prints an empty report, swath refuses the file
    // as no access log (issue 30: a report of zeros with status 0 said nothing).
    dir.write("bad.log", b"one\ntwo three\n\n");
    let (_, t) = reference(b"one\ntwo three\n\n", &Opts::wf2());
    assert_eq!(t.malformed, 3);
    let out = wf2(dir.tmp.path(), &os(&["bad.log"]), None);
    if out.status.code() != Some(2) || !out.stdout.is_empty() {
        failures.fail(format!(
            "swath logs wf2 bad.log: {out:?}, expected no report and 2"
        ));
    }
    failures.same(
        "swath logs wf2 bad.log: the message",
        b"swath logs: bad.log: no access log line among its first lines (wf2 reads the Common \
          and Combined Log Formats; 'swath logs summary' recognises others)\n",
        &out.stderr,
    );
    // A malformed line among log lines is counted, the report printed.
    let mut mixed = b"one\n".to_vec();
    mixed.extend_from_slice(&small_log());
    dir.write("mixed.log", &mixed);
    let (text, t) = reference(&mixed, &Opts::wf2());
    let out = wf2(dir.tmp.path(), &os(&["mixed.log"]), None);
    failures.outcome("swath logs wf2 mixed.log", &out, &text, t.malformed);
    failures.finish();
}

#[test]
fn html_report_never_replaces_an_input() {
    let dir = Dir::new();
    let log = b"1.2.3.4 - - [01/Oct/2007:00:00:00 -0700] \"GET /a HTTP/1.1\" 200 5 \"-\" \"x\"\n";
    dir.write("a.log", log);
    std::os::unix::fs::symlink("a.log", dir.path("link.html")).unwrap();
    for out in ["a.log", "link.html", "./a.log"] {
        let o = swath(&dir, &["logs", "summary", "--html", out, "a.log"]);
        assert_eq!(o.status.code(), Some(1), "{out}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("is also an input log"),
            "{out}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(std::fs::read(dir.path("a.log")).unwrap(), log, "{out}");
    }
    // A log that cannot be read: the page is not written (an old one stays).
    dir.write("old.html", b"precious");
    let o = swath(
        &dir,
        &["logs", "summary", "--html", "old.html", "a.log", "missing"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(dir.path("old.html")).unwrap(), b"precious");
    // Another name is written as usual.
    let o = swath(&dir, &["logs", "summary", "--html", "r.html", "a.log"]);
    assert!(o.status.success());
    assert!(std::fs::read(dir.path("r.html"))
        .unwrap()
        .starts_with(b"<!DOCTYPE html>"));
}

/// `--json` carries the reference's numbers: counts of distinct keys, the malformed count,
/// and the top rows with full keys as lossy UTF-8.
#[test]
fn json_has_the_same_numbers() {
    let (dir, log) = random_dir();
    let mut failures = Failures::default();
    let golden = data_dir().join("basic.log");
    let basic = std::fs::read(&golden).unwrap();
    let garbage_path = data_dir().join("garbage.log");
    let garbage = std::fs::read(&garbage_path).unwrap();
    let saturation_path = data_dir().join("saturation.log");
    let saturation = std::fs::read(&saturation_path).unwrap();
    let random = dir.path("random.log");
    for (what, path, data, top) in [
        ("random.log", &random, &log, 10),
        ("random.log --top 3", &random, &log, 3),
        ("basic.log", &golden, &basic, 10),
        ("garbage.log", &garbage_path, &garbage, 10),
        ("saturation.log", &saturation_path, &saturation, 10),
    ] {
        let o = Opts { top, ..Opts::wf2() };
        let t = tally(data, &o);
        let top_s = top.to_string();
        let out = wf2(
            dir.tmp.path(),
            &[
                OsStr::new("--json"),
                OsStr::new("--top"),
                OsStr::new(&top_s),
                path.as_os_str(),
            ],
            None,
        );
        let what = format!("swath logs wf2 --json --top {top} {what}");
        if out.status.code() != Some(0) {
            failures.fail(format!(
                "{what}: exit status {:?}: {}",
                out.status.code(),
                show(&out.stderr)
            ));
            continue;
        }
        let v: serde_json::Value = match serde_json::from_slice(&out.stdout) {
            Ok(v) => v,
            Err(e) => {
                failures.fail(format!("{what}: not JSON ({e}): {}", show(&out.stdout)));
                continue;
            }
        };
        let expected = serde_json::json!({
            "resources": t.hits.len(),
            "not_found": t.s404s.len(),
            "clients": t.clients.len(),
            "malformed": t.malformed,
            "schema": 2,
            "report": "logs wf2",
            "version": env!("CARGO_PKG_VERSION"),
        });
        for (k, e) in expected.as_object().unwrap() {
            if v.get(k) != Some(e) {
                failures.fail(format!("{what}: \"{k}\" is {:?}, expected {e}", v.get(k)));
            }
        }
        let lists = [
            ("top_uris_by_hits", &t.hits, "count"),
            ("top_uris_by_bytes", &t.bytes, "bytes"),
            ("top_not_found", &t.s404s, "count"),
            ("top_clients", &t.clients, "count"),
            ("top_referrers", &t.referrers, "count"),
        ];
        for (name, table, field) in lists {
            let rows: Vec<serde_json::Value> = top_rows(table, top)
                .into_iter()
                .map(|(k, n)| {
                    let mut row = serde_json::Map::new();
                    row.insert("key".into(), String::from_utf8_lossy(k).into());
                    row.insert(field.into(), n.into());
                    serde_json::Value::Object(row)
                })
                .collect();
            let expected = serde_json::Value::Array(rows);
            if v.get(name) != Some(&expected) {
                failures.fail(format!(
                    "{what}: \"{name}\"\n--- expected ---\n{expected}\n--- got ---\n{}",
                    v.get(name)
                        .map(|x| x.to_string())
                        .unwrap_or("(absent)".into())
                ));
            }
        }
        // And the text report of the same run says the same.
        let text = wf2(
            dir.tmp.path(),
            &[OsStr::new("--top"), OsStr::new(&top_s), path.as_os_str()],
            None,
        );
        let header = String::from_utf8_lossy(&text.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        let from_json = format!(
            "{} resources, {} 404s, {} clients",
            v["resources"], v["not_found"], v["clients"]
        );
        if header != from_json {
            failures.fail(format!(
                "{what}: text header {header:?}, JSON {from_json:?}"
            ));
        }
    }
    failures.finish();
}

/// `swath logs summary` on a small log mixing Apache common and combined lines, nginx's
/// default format, escaped quotes, a CR line end and malformed lines: every figure counted
/// by hand; the same under every engine setting; and the HTML page written whole.
#[test]
fn summary_counts_every_format() {
    let dir = Dir::new();
    let log = concat!(
        "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.0\" 200 100\n",
        "1.2.3.4 - frank [10/Oct/2000:13:56:00 -0700] \"GET /b HTTP/1.1\" 404 - \"http://r/\" \"UA \\\"x\\\" 1\"\n",
        "::1 - - [11/Oct/2000:01:00:00 -0700] \"POST /a?q=\\\"1\\\" HTTP/1.1\" 500 7 \"-\" \"curl/8\"\r\n",
        "host.example - - [11/Oct/2000:23:59:59 +0000] \"GET /b HTTP/1.1\" 404 0 \"-\" \"UA \\\"x\\\" 1\"\n",
        "not a log line\n",
        "\n",
        "1.2.3.4 - - [11/Oct/2000:23:00:00 +0000] \"GET /a HTTP/1.1\" 304 - \"http://r/\" \"curl/8\"",
    );
    dir.write("s.log", log.as_bytes());
    let run = |extra: &[&str]| {
        let mut args = vec!["logs", "summary", "--json"];
        args.extend_from_slice(extra);
        args.push("s.log");
        let out = swath(&dir, &args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "swath logs: 1 malformed lines skipped\n"
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let v = run(&[]);
    let g = &v["general"];
    assert_eq!(v["schema"], 2);
    assert_eq!(g["requests"], 5);
    assert_eq!(g["lines_failed"], 1);
    assert_eq!(g["unique_clients"], 3);
    // The requested files: GET /a HTTP/1.0, POST /a?q=.. HTTP/1.1, GET /a HTTP/1.1 (GET /b
    // was answered 404 both times: it is in the 404s only, as in GoAccess).
    assert_eq!(g["unique_requests"], 3);
    assert_eq!(g["bytes"], 107);
    assert_eq!(g["not_found"], 2);
    // (client, agent, day): 1.2.3.4 with no agent on the 10th, ::1 curl on the 11th,
    // 1.2.3.4 curl on the 11th; UA x's two requests were answered 404, which make no
    // visitor (as in GoAccess).
    assert_eq!(g["unique_visitors"], 3);
    assert_eq!(g["first"], "2000-10-10 13:55:36");
    assert_eq!(g["last"], "2000-10-11 23:59:59");
    let panel = |id: &str| -> serde_json::Value {
        v["panels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .unwrap_or_else(|| panic!("no panel {id}"))
            .clone()
    };
    let rows = |id: &str| panel(id)["rows"].clone();
    assert_eq!(
        rows("status_classes"),
        // Visitors and bytes as GoAccess's status panel has them (the 4xx's: 404s, no
        // visitor).
        serde_json::json!([
            {"class": "1xx", "hits": 0, "hits_percent": 0.0, "visitors": 0, "visitors_percent": 0.0, "bytes": 0, "bytes_percent": 0.0},
            {"class": "2xx", "hits": 1, "hits_percent": 20.0, "visitors": 1, "visitors_percent": 33.33, "bytes": 100, "bytes_percent": 93.46},
            {"class": "3xx", "hits": 1, "hits_percent": 20.0, "visitors": 1, "visitors_percent": 33.33, "bytes": 0, "bytes_percent": 0.0},
            {"class": "4xx", "hits": 2, "hits_percent": 40.0, "visitors": 0, "visitors_percent": 0.0, "bytes": 0, "bytes_percent": 0.0},
            {"class": "5xx", "hits": 1, "hits_percent": 20.0, "visitors": 1, "visitors_percent": 33.33, "bytes": 7, "bytes_percent": 6.54}
        ])
    );
    assert_eq!(rows("time")[13]["hits"], 2);
    assert_eq!(rows("time")[23]["hits"], 2);
    assert_eq!(rows("time")[1]["hits"], 1);
    assert_eq!(
        rows("visitors"),
        serde_json::json!([
            {"day": "2000-10-10", "hits": 2, "hits_percent": 40.0, "visitors": 1, "visitors_percent": 33.33},
            {"day": "2000-10-11", "hits": 3, "hits_percent": 60.0, "visitors": 2, "visitors_percent": 66.67}
        ])
    );
    assert_eq!(
        rows("not_found"),
        // No visitors (404s make none), the bytes of both (`-` and 0).
        serde_json::json!([{"method": "GET", "uri": "/b", "protocol": "HTTP/1.1", "hits": 2,
            "hits_percent": 40.0, "visitors": 0, "visitors_percent": 0.0, "bytes": 0,
            "bytes_percent": 0.0}])
    );
    assert_eq!(
        rows("hosts")[0],
        serde_json::json!({"host": "1.2.3.4", "hits": 3, "hits_percent": 60.0, "visitors": 2,
            "visitors_percent": 66.67, "bytes": 100, "bytes_percent": 93.46})
    );
    assert_eq!(
        rows("referrers"),
        // Visitors: 1.2.3.4 with curl on the 11th (the 10th's request was a 404).
        serde_json::json!([{"referrer": "http://r/", "hits": 2, "hits_percent": 40.0, "visitors": 1, "visitors_percent": 33.33, "bytes": 0, "bytes_percent": 0.0}])
    );
    assert_eq!(
        rows("referring_sites"),
        serde_json::json!([{"site": "r", "hits": 2, "hits_percent": 40.0, "visitors": 1, "visitors_percent": 33.33, "bytes": 0, "bytes_percent": 0.0}])
    );
    assert_eq!(
        rows("agents"),
        serde_json::json!([
            // UA x: two 404s, no visitor; curl: ::1 and 1.2.3.4 on the 11th.
            {"agent": "UA \\\"x\\\" 1", "hits": 2, "hits_percent": 40.0, "visitors": 0, "visitors_percent": 0.0, "bytes": 0, "bytes_percent": 0.0},
            {"agent": "curl/8", "hits": 2, "hits_percent": 40.0, "visitors": 2, "visitors_percent": 66.67, "bytes": 7, "bytes_percent": 6.54}
        ])
    );
    assert_eq!(
        rows("requests")[2],
        serde_json::json!({"method": "POST", "uri": "/a?q=\\\"1\\\"", "protocol": "HTTP/1.1",
            "hits": 1, "hits_percent": 20.0, "visitors": 1, "visitors_percent": 33.33, "bytes": 7, "bytes_percent": 6.54})
    );
    assert_eq!(
        rows("users"),
        serde_json::json!([{"user": "frank", "hits": 1, "hits_percent": 20.0, "visitors": 0, "visitors_percent": 0.0, "bytes": 0, "bytes_percent": 0.0}])
    );
    assert_eq!(panel("sizes")["distinct"], 8, "0 B up to 64-127 B");
    for extra in [
        &["--threads", "1"][..],
        &["--threads", "3", "--block-size", "1"],
        &["--strategy", "pread", "--block-size", "7"],
        &["--threads", "0"],
    ] {
        assert_eq!(run(extra), v, "{extra:?}");
    }
    let out = swath(&dir, &["logs", "summary", "--html", "r.html", "s.log"]);
    assert_eq!(out.status.code(), Some(0));
    let page = std::fs::read_to_string(dir.path("r.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
    assert!(page.contains("\"requests\":5"), "the data is embedded");
    assert!(page.contains("<td>frank</td>"), "the tables are HTML");
    assert!(
        !page.contains("http-equiv") && !page.contains("src=\"http"),
        "no network"
    );
}

// ---------------------------------------------------------------------------------------
// Issue 10: memory bounded by the options, inputs that fail or grow.

/// Runs `swath ARGS` in `dir`, writing `chunks` to its standard input and keeping that
/// open until swath has read all of it: its peak resident set then (KiB, from /proc, so
/// not counting what the process had before it became swath), its wait status, stdout and
/// stderr.
fn fed_and_measured(
    dir: &Dir,
    args: &[&str],
    chunks: &mut dyn Iterator<Item = Vec<u8>>,
) -> (u64, Option<i32>, Vec<u8>, String) {
    let (out, err) = (dir.path("run.out"), dir.path("run.err"));
    let mut child = Command::new(swath_bin())
        .args(args)
        .current_dir(dir.tmp.path())
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut total = 0u64;
    for c in chunks {
        stdin.write_all(&c).unwrap();
        total += c.len() as u64;
    }
    // Everything is in: wait (a minute at most) until swath has read it, then a little
    // for its workers.
    let read = || {
        let io = std::fs::read_to_string(format!("/proc/{}/io", child.id())).unwrap();
        let line = io.lines().find(|l| l.starts_with("rchar:")).unwrap();
        line.split_whitespace()
            .nth(1)
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    for _ in 0..6000 {
        if read() >= total {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let hwm = vm_hwm(child.id());
    drop(stdin);
    let status = child.wait().unwrap().code();
    (
        hwm,
        status,
        std::fs::read(&out).unwrap(),
        std::fs::read_to_string(&err).unwrap(),
    )
}

/// Peak memory (KiB) of a running process, from /proc.
fn vm_hwm(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A few lines of a log in the combined format.
fn small_log() -> Vec<u8> {
    let mut log = Vec::new();
    for i in 0..200 {
        log.extend_from_slice(
            format!(
                "10.0.0.{} - - [01/Oct/2007:00:00:0{} -0700] \"GET /ongoing/When/200x/2007/09/30/T{} HTTP/1.1\" {} {} \"http://r{}/\" \"UA\"\n",
                i % 7,
                i % 10,
                i % 5,
                if i % 9 == 0 { 404 } else { 200 },
                i * 13,
                i % 3
            )
            .as_bytes(),
        );
    }
    log
}

/// `logs wf2` and `logs summary` on /dev/zero (one endless line), named and as standard
/// input: before, 1.9 GB in 4 s and an abort; now the line is skipped as it is read, in
/// constant memory, until the time bound ends the run.
#[test]
fn logs_on_dev_zero_stays_in_bounded_memory() {
    let mut children = Vec::new();
    for report in ["wf2", "summary"] {
        for stdin in [false, true] {
            let mut cmd = Command::new(swath_bin());
            cmd.args(["logs", report, "--max-line", "64K"])
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if stdin {
                cmd.stdin(std::fs::File::open("/dev/zero").unwrap());
            } else {
                cmd.arg("/dev/zero").stdin(Stdio::null());
            }
            children.push((report, stdin, cmd.spawn().unwrap()));
        }
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    // Every child is looked at and killed before any assertion (a failed one would leave
    // the others reading /dev/zero for ever).
    let seen: Vec<_> = children
        .into_iter()
        .map(|(report, stdin, mut child)| {
            let still_running = child.try_wait().unwrap().is_none();
            let hwm = vm_hwm(child.id());
            let _ = child.kill();
            let _ = child.wait();
            (report, stdin, still_running, hwm)
        })
        .collect();
    for (report, stdin, still_running, hwm) in seen {
        assert!(
            still_running,
            "{report} stdin={stdin}: ended on an endless input"
        );
        assert!(
            hwm < 64 * 1024,
            "{report} stdin={stdin}: {hwm} KiB after 2 s on /dev/zero"
        );
    }
}

/// A gzip of 100 MB of zeros (one line of 100 MB): before, the line was gathered whole and
/// rescanned at every chunk (time growing with its square); now it is skipped in pieces
/// and counted as one malformed line, in bounded memory.
#[test]
fn gzip_of_a_long_zero_line_is_skipped_in_bounded_memory() {
    let dir = Dir::new();
    let gz = {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..100 {
            enc.write_all(&zeros).unwrap();
        }
        enc.write_all(b"\n").unwrap();
        enc.write_all(&small_log()).unwrap();
        enc.finish().unwrap()
    };
    dir.write("zeros.gz", &gz);
    let (text, _) = reference(&small_log(), &Opts::wf2());
    // As a file.
    let o = swath(&dir, &["logs", "wf2", "zeros.gz"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&text)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "swath logs: 1 malformed lines skipped\n"
    );
    // From a pipe, measured.
    for report in ["wf2", "summary"] {
        let (hwm, status, out, err) = fed_and_measured(
            &dir,
            &["logs", report, "-"],
            &mut std::iter::once(gz.clone()),
        );
        assert_eq!(status, Some(0), "{report}: {err}");
        assert!(hwm < 48 * 1024, "{report}: peak {hwm} KiB");
        if report == "wf2" {
            assert_eq!(out, text);
        }
        assert_eq!(err, "swath logs: 1 malformed lines skipped\n", "{report}");
    }
}

/// A log with a 69 MiB line among good lines: every strategy reports the good lines and one
/// malformed line, and read from a pipe (by the engine as `/dev/stdin`, or as `-`) the long
/// line is never gathered (before: 69 MiB or more in memory).
#[test]
fn line_of_69_mib_is_malformed_and_not_gathered() {
    let dir = Dir::new();
    let head = small_log();
    let path = dir.write("long.log", &head);
    {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.set_len(head.len() as u64 + (69 << 20)).unwrap();
        f.write_all(b"\n").unwrap();
        f.write_all(&head).unwrap();
    }
    let both = [head.clone(), head.clone()].concat();
    let (text, t) = reference(&both, &Opts::wf2());
    assert_eq!(t.malformed, 0);
    for extra in [
        &["--strategy", "read"][..],
        &["--threads", "0"],
        &["--strategy", "pread", "--threads", "2"],
        &[
            "--strategy",
            "pread",
            "--threads",
            "2",
            "--block-size",
            "4M",
        ],
        &["--strategy", "mmap", "--threads", "2"],
        &["--max-line", "70M"],
        &[],
    ] {
        let mut args = vec!["logs", "wf2", "long.log"];
        args.extend_from_slice(extra);
        let o = swath(&dir, &args);
        assert_eq!(o.status.code(), Some(0), "{extra:?}");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&text),
            "{extra:?}"
        );
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            "swath logs: 1 malformed lines skipped\n",
            "{extra:?}"
        );
    }
    for name in ["/dev/stdin", "-"] {
        let mut chunks = std::iter::once(head.clone())
            .chain(std::iter::repeat_n(vec![b'x'; 1 << 20], 69))
            .chain(std::iter::once([&b"\n"[..], &head].concat()));
        let (hwm, status, out, err) = fed_and_measured(&dir, &["logs", "wf2", name], &mut chunks);
        assert_eq!(status, Some(0), "{name}: {err}");
        assert!(hwm < 48 * 1024, "{name}: peak {hwm} KiB");
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&text),
            "{name}"
        );
        assert_eq!(err, "swath logs: 1 malformed lines skipped\n", "{name}");
    }
}

/// A log that cannot be read in full (a missing file, a truncated gzip) gives no report,
/// one line on stderr and status 2, instead of a report of zeros.
#[test]
fn failed_input_prints_no_report() {
    let dir = Dir::new();
    dir.write("good.log", &small_log());
    let gz = {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&small_log().repeat(50)).unwrap();
        enc.finish().unwrap()
    };
    dir.write("cut.gz", &gz[..gz.len() / 2]);
    for (args, msg) in [
        (
            &["wf2", "missing"][..],
            "swath logs: missing: No such file or directory\n",
        ),
        (
            &["wf2", "good.log", "missing"],
            "swath logs: missing: No such file or directory\n",
        ),
        (
            &["summary", "missing", "good.log"],
            "swath logs: missing: No such file or directory\n",
        ),
        (
            &["wf2", "--json", "cut.gz"],
            "swath logs: cut.gz: unexpected end of gzip data (truncated file?)\n",
        ),
        (
            &["summary", "cut.gz"],
            "swath logs: cut.gz: unexpected end of gzip data (truncated file?)\n",
        ),
    ] {
        let mut full = vec!["logs"];
        full.extend_from_slice(args);
        let o = swath(&dir, &full);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), "", "{args:?}");
        assert_eq!(without_format_line(&o.stderr), msg, "{args:?}");
    }
}

/// With --partial, the report of what was read, marked partial, still with status 2.
#[test]
fn partial_prints_what_was_read_marked_partial() {
    let dir = Dir::new();
    let log = small_log();
    dir.write("good.log", &log);
    let (text, _) = reference(&log, &Opts::wf2());
    let o = swath(&dir, &["logs", "wf2", "--partial", "good.log", "missing"]);
    assert_eq!(o.status.code(), Some(2));
    let want = [
        &b"PARTIAL REPORT: some logs could not be read in full (see standard error)\n\n"[..],
        &text,
    ]
    .concat();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&want)
    );
    let o = swath(
        &dir,
        &[
            "logs",
            "summary",
            "--json",
            "--partial",
            "missing",
            "good.log",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["partial"], true);
    assert_eq!(v["general"]["requests"], 200);
    // A truncated gzip: the whole lines before the cut are reported.
    let gz = {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&log.repeat(200)).unwrap();
        enc.finish().unwrap()
    };
    dir.write("cut.gz", &gz[..gz.len() / 2]);
    let o = swath(&dir, &["logs", "summary", "--json", "--partial", "cut.gz"]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["partial"], true);
    let n = v["general"]["requests"].as_u64().unwrap();
    assert!(n > 0 && n < 200 * 200, "{n} requests from half a gzip");
    // Complete input: no mark.
    let o = swath(&dir, &["logs", "summary", "--json", "good.log"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("partial").is_none());
}

/// A live log that grows while read: the report covers it up to the size it had at the
/// start, with one line on stderr, and status 0 (before: "file changed size", a report of
/// what was read and status 2, or a read that chased the writer).
#[test]
fn growing_log_is_read_up_to_its_size_at_the_start() {
    let dir = Dir::new();
    let log = small_log();
    let path = dir.write("live.log", &log.repeat(2000));
    for extra in [&["--threads", "2"][..], &["--strategy", "read"]] {
        let mut child = Command::new(swath_bin())
            .args(["logs", "summary", "--json", "live.log"])
            .args(extra)
            .current_dir(dir.tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Keep appending until swath is done, so that the log grows while it is read.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let mut appended = 0;
        while child.try_wait().unwrap().is_none() {
            f.write_all(&log).unwrap();
            appended += 1;
        }
        let o = child.wait_with_output().unwrap();
        let err = without_format_line(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {err}");
        assert!(appended > 0);
        // The line the size at the start cut (if it did) is malformed.
        let lines: Vec<&str> = err.lines().collect();
        let cut = "swath logs: 1 malformed lines skipped";
        assert!(lines.len() == 1 || lines[1..] == [cut], "{extra:?}: {err}");
        assert!(
            lines[0].starts_with("swath logs: live.log: grew to ")
                && lines[0].contains("; the report covers its first "),
            "{extra:?}: {err}"
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(
            v["general"]["requests"].as_u64().unwrap() >= 200 * 2000,
            "{extra:?}"
        );
    }
}

/// Out of memory under `ulimit -v` (`logs wf2`, `logs summary`, `--html`): before, an abort
/// with "memory allocation of N bytes failed" (status 134); now the run completes, or ends
/// with one line saying what was needed and what was left, and status 2.
#[test]
fn out_of_memory_is_an_error_not_an_abort() {
    let dir = Dir::new();
    let o = swath(&dir, &["gen", "log", "16M", "g.log", "--seed", "1"]);
    assert!(o.status.success());
    let bin = swath_bin();
    let mut ended_with_the_error = 0;
    for limit in [20_000, 40_000, 60_000, 262_144] {
        for report in ["wf2", "summary", "summary --html r.html"] {
            let o = Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "ulimit -v {limit}; exec '{}' logs {report} g.log",
                    bin.display()
                ))
                .current_dir(dir.tmp.path())
                .output()
                .unwrap();
            let err = without_format_line(&o.stderr);
            let what = format!("ulimit -v {limit}; logs {report}: {:?}: {err}", o.status);
            match o.status.code() {
                // `--html` writes the page alone, as GoAccess's `-o` does.
                Some(0) if report.contains("--html") => {
                    assert!(o.stdout.is_empty(), "{what}");
                    assert!(dir.path("r.html").exists(), "{what}");
                }
                Some(0) => assert!(!o.stdout.is_empty(), "{what}"),
                Some(2) => {
                    ended_with_the_error += 1;
                    assert_eq!(err.lines().count(), 1, "{what}");
                    assert!(
                        err.starts_with("swath: out of memory: needs ")
                            && err.contains(" MB available"),
                        "{what}"
                    );
                }
                _ => panic!("{what}"),
            }
        }
    }
    assert!(ended_with_the_error > 0, "no limit was tight enough");
}

// ---------------------------------------------------------------------------------------
// Issue 14: every format, recognised; custom format strings; compressed copies.

/// Asserts that a run exited 0, showing its standard error if not.
fn exited_0(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

const UA_FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0";
const UA_BOT: &str = "Googlebot/2.1 (+http://www.google.com/bot.html)";

/// The same four requests written in each format, as each format's documentation shows
/// its lines (Apache's mod_log_config, IIS's W3C fields, AWS's ELB, ALB and CloudFront
/// pages, Caddy's log output): (format name, log).
fn golden_logs() -> Vec<(&'static str, String)> {
    let enc = |s: &str| s.replace(' ', "%20");
    let plus = |s: &str| s.replace(' ', "+");
    let combined = format!(
        "192.0.2.10 - - [05/Mar/2024:10:15:30 +0000] \"GET /index.html HTTP/1.1\" 200 5120 \"https://www.example.org/start\" \"{UA_FIREFOX}\"\n\
         192.0.2.10 - - [05/Mar/2024:10:15:31 +0000] \"GET /style.css HTTP/1.1\" 200 2048 \"https://www.example.org/index.html\" \"{UA_FIREFOX}\"\n\
         198.51.100.7 - - [05/Mar/2024:11:02:00 +0000] \"GET /missing HTTP/1.1\" 404 512 \"-\" \"{UA_BOT}\"\n\
         203.0.113.5 - alice [06/Mar/2024:09:00:00 +0000] \"POST /api/login HTTP/1.1\" 302 0 \"-\" \"curl/8.5.0\"\n"
    );
    let vhost: String = combined
        .lines()
        .map(|l| format!("www.example.com:443 {l}\n"))
        .collect();
    let iis = format!(
        "#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n#Date: 2024-03-05 10:15:30\n\
         #Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs-version cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status sc-bytes time-taken\n\
         2024-03-05 10:15:30 10.0.0.1 GET /index.html - 443 - 192.0.2.10 HTTP/1.1 {ff} https://www.example.org/start 200 0 0 5120 15\n\
         2024-03-05 10:15:31 10.0.0.1 GET /style.css - 443 - 192.0.2.10 HTTP/1.1 {ff} https://www.example.org/index.html 200 0 0 2048 3\n\
         2024-03-05 11:02:00 10.0.0.1 GET /missing - 443 - 198.51.100.7 HTTP/1.1 {bot} - 404 0 2 512 1\n\
         #Date: 2024-03-06 09:00:00\n\
         2024-03-06 09:00:00 10.0.0.1 POST /api/login - 443 alice 203.0.113.5 HTTP/1.1 curl/8.5.0 - 302 0 0 0 40\n",
        ff = plus(UA_FIREFOX),
        bot = plus(UA_BOT)
    );
    let cf_line = |date: &str,
                   time: &str,
                   bytes: u32,
                   ip: &str,
                   method: &str,
                   uri: &str,
                   status: u16,
                   referrer: &str,
                   ua: &str| {
        [
            date,
            time,
            "SEA19-C1",
            &bytes.to_string(),
            ip,
            method,
            "d111111abcdef8.cloudfront.net",
            uri,
            &status.to_string(),
            referrer,
            &enc(&enc(ua)),
            "-",
            "-",
            "Miss",
            "abcd1234==",
            "www.example.com",
            "https",
            "120",
            "0.002",
            "-",
            "TLSv1.3",
            "TLS_AES_128_GCM_SHA256",
            "Miss",
            "HTTP/1.1",
        ]
        .join("\t")
            + "\n"
    };
    let cloudfront = "#Version: 1.0\n#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type cs-protocol-version\n".to_string()
        + &cf_line("2024-03-05", "10:15:30", 5120, "192.0.2.10", "GET", "/index.html", 200, "https://www.example.org/start", UA_FIREFOX)
        + &cf_line("2024-03-05", "10:15:31", 2048, "192.0.2.10", "GET", "/style.css", 200, "https://www.example.org/index.html", UA_FIREFOX)
        + &cf_line("2024-03-05", "11:02:00", 512, "198.51.100.7", "GET", "/missing", 404, "-", UA_BOT)
        + &cf_line("2024-03-06", "09:00:00", 0, "203.0.113.5", "POST", "/api/login", 302, "-", "curl/8.5.0");
    let aws = |alb: bool| -> String {
        let rows = [
            (
                "2024-03-05T10:15:30.000000Z",
                "192.0.2.10:2817",
                200,
                5120,
                "GET",
                "/index.html",
                UA_FIREFOX,
            ),
            (
                "2024-03-05T10:15:31.000000Z",
                "192.0.2.10:2817",
                200,
                2048,
                "GET",
                "/style.css",
                UA_FIREFOX,
            ),
            (
                "2024-03-05T11:02:00.000000Z",
                "198.51.100.7:443",
                404,
                512,
                "GET",
                "/missing",
                UA_BOT,
            ),
            (
                "2024-03-06T09:00:00.000000Z",
                "203.0.113.5:60000",
                302,
                0,
                "POST",
                "/api/login",
                "curl/8.5.0",
            ),
        ];
        rows.iter()
            .map(|(t, c, st, b, m, u, ua)| {
                if alb {
                    format!("https {t} app/my-lb/50dc6c495c0c9188 {c} 10.0.0.1:80 0.001 0.002 0.000 {st} {st} 120 {b} \"{m} https://www.example.com:443{u} HTTP/1.1\" \"{ua}\" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 \"Root=1-58337262-36d228ad5d99923122bbe354\" \"www.example.com\" \"arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012\" 0 {t} \"forward\" \"-\" \"-\" \"10.0.0.1:80\" \"{st}\" \"-\" \"-\" TID_1234\n")
                } else {
                    format!("{t} my-lb {c} 10.0.0.1:80 0.000073 0.001048 0.000057 {st} {st} 0 {b} \"{m} https://www.example.com:443{u} HTTP/1.1\" \"{ua}\" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2\n")
                }
            })
            .collect()
    };
    let caddy = |ts: &str,
                 ip: &str,
                 m: &str,
                 u: &str,
                 st: u16,
                 size: u32,
                 referrer: &str,
                 ua: &str| {
        let refs = if referrer == "-" {
            String::new()
        } else {
            format!(",\"Referer\":[\"{referrer}\"]")
        };
        format!("{{\"level\":\"info\",\"ts\":{ts},\"logger\":\"http.log.access.log0\",\"msg\":\"handled request\",\"request\":{{\"remote_ip\":\"{ip}\",\"remote_port\":\"41342\",\"client_ip\":\"{ip}\",\"proto\":\"HTTP/1.1\",\"method\":\"{m}\",\"host\":\"www.example.com\",\"uri\":\"{u}\",\"headers\":{{\"User-Agent\":[\"{ua}\"]{refs}}}}},\"bytes_read\":0,\"user_id\":\"\",\"duration\":0.000929675,\"size\":{size},\"status\":{st},\"resp_headers\":{{\"Server\":[\"Caddy\"]}}}}\n")
    };
    // 2024-03-05T10:15:30Z is 1709633730.
    let json = caddy(
        "1709633730.5",
        "192.0.2.10",
        "GET",
        "/index.html",
        200,
        5120,
        "https://www.example.org/start",
        UA_FIREFOX,
    ) + &caddy(
        "1709633731.25",
        "192.0.2.10",
        "GET",
        "/style.css",
        200,
        2048,
        "https://www.example.org/index.html",
        UA_FIREFOX,
    ) + &caddy(
        "1709636520",
        "198.51.100.7",
        "GET",
        "/missing",
        404,
        512,
        "-",
        UA_BOT,
    ) + &caddy(
        "1709715600",
        "203.0.113.5",
        "POST",
        "/api/login",
        302,
        0,
        "-",
        "curl/8.5.0",
    );
    vec![
        ("combined", combined),
        ("vhost_combined", vhost),
        ("w3c", iis),
        ("cloudfront", cloudfront),
        ("elb", aws(false)),
        ("alb", aws(true)),
        ("json", json),
    ]
}

fn panel_rows(v: &serde_json::Value, id: &str) -> serde_json::Value {
    v["panels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .map(|p| p["rows"].clone())
        .unwrap_or_default()
}

/// Each format's sample is recognised (the report names it), every line is
/// read (none malformed), and every format gives the figures counted by hand; named with
/// --format, and gzip, zstd, xz and bzip2 copies, give the same report.
/// Unique visitors by row (a visitor is a client with one agent on one day), counted by
/// hand on a log where rows share visitors and visitors share rows; the same with the
/// log cut into pieces by small blocks on several threads.
#[test]
fn visitors_by_row_are_counted_by_hand() {
    let line = |client: &str,
                day: u8,
                uri: &str,
                status: u16,
                referrer: &str,
                user: &str,
                ua: &str| {
        format!("{client} - {user} [{day:02}/Mar/2024:10:00:00 +0000] \"GET {uri} HTTP/1.1\" {status} 100 \"{referrer}\" \"{ua}\"\n")
    };
    let log = [
        line(
            "192.0.2.1",
            5,
            "/a",
            200,
            "https://s1.example/x",
            "-",
            "UA-X",
        ),
        line(
            "192.0.2.1",
            5,
            "/a",
            200,
            "https://s1.example/y",
            "-",
            "UA-X",
        ),
        line(
            "192.0.2.2",
            5,
            "/a",
            200,
            "https://s1.example/x",
            "-",
            "UA-X",
        ),
        line("192.0.2.1", 6, "/a", 404, "-", "-", "UA-X"),
        line("192.0.2.1", 5, "/b", 200, "-", "bob", "UA-Y"),
        line(
            "192.0.2.2",
            5,
            "/a.png",
            200,
            "https://s2.example/",
            "-",
            "UA-X",
        ),
        line("192.0.2.2", 5, "/a.png", 200, "-", "-", "UA-X"),
    ]
    .concat();
    let dir = Dir::new();
    dir.write("v.log", log.as_bytes());
    // (panel, key column, key) -> (hits, visitors), counted by hand, as GoAccess counts:
    // the 404 (the 6th's) is in the 404s only and makes no visitor; the static file is
    // in the static files only.
    let want: &[(&str, &str, &str, u64, u64)] = &[
        ("requests", "uri", "/a", 3, 2),
        ("requests", "uri", "/b", 1, 1),
        ("static", "uri", "/a.png", 2, 1),
        ("not_found", "uri", "/a", 1, 0),
        ("referrers", "referrer", "https://s1.example/x", 2, 2),
        ("referrers", "referrer", "https://s1.example/y", 1, 1),
        ("referrers", "referrer", "https://s2.example/", 1, 1),
        ("referring_sites", "site", "s1.example", 3, 2),
        ("referring_sites", "site", "s2.example", 1, 1),
        ("users", "user", "bob", 1, 1),
        ("agents", "agent", "UA-X", 6, 2),
        ("agents", "agent", "UA-Y", 1, 1),
        ("hosts", "host", "192.0.2.1", 4, 2),
    ];
    for engine in [&[][..], &["--threads", "3", "--block-size", "1"][..]] {
        let mut args = vec!["logs", "summary", "--json", "v.log"];
        args.extend_from_slice(engine);
        let out = swath(&dir, &args);
        exited_0(&out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["general"]["unique_visitors"], 3, "{engine:?}");
        let requests = panel_rows(&v, "requests");
        assert!(
            !requests
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["uri"] == "/a.png"),
            "{engine:?}: a static file among the requested files: {requests}"
        );
        for &(panel, column, key, hits, visitors) in want {
            let rows = panel_rows(&v, panel);
            let row = rows
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r[column] == key)
                .unwrap_or_else(|| panic!("{engine:?}: no row {key} in {panel}: {rows}"));
            assert_eq!(
                (row["hits"].as_u64(), row["visitors"].as_u64()),
                (Some(hits), Some(visitors)),
                "{engine:?}: {panel} {key}: {row}"
            );
        }
    }
}

#[test]
fn every_format_is_recognised_and_counted_by_hand() {
    let dir = Dir::new();
    let mut failures = Failures::default();
    for (name, log) in golden_logs() {
        let file = format!("{name}.log");
        dir.write(&file, log.as_bytes());
        let out = swath(&dir, &["logs", "summary", "--json", &file]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if out.status.code() != Some(0) || !err.is_empty() {
            failures.fail(format!(
                "{name}: status {:?}, stderr {err:?}",
                out.status.code()
            ));
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let g = &v["general"];
        let want = serde_json::json!({
            "requests": 4, "lines_failed": 0, "bytes": 7680, "not_found": 1, "unique_clients": 3,
            // As GoAccess: the static file and the 404 are not requested files, and the
            // 404's client (the bot) is no visitor.
            "unique_requests": 2, "static_requests": 1, "unique_visitors": 2,
            "first": "2024-03-05 10:15:30", "last": "2024-03-06 09:00:00", "format": name,
        });
        for (k, w) in want.as_object().unwrap() {
            if &g[k] != w {
                failures.fail(format!("{name}: {k} is {}, expected {w}", g[k]));
            }
        }
        let classes: Vec<u64> = panel_rows(&v, "status_classes")
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["hits"].as_u64().unwrap())
            .collect();
        if classes != [0, 2, 1, 1, 0] {
            failures.fail(format!("{name}: status classes {classes:?}"));
        }
        let days = panel_rows(&v, "visitors");
        if days
            != serde_json::json!([
                {"day": "2024-03-05", "hits": 3, "hits_percent": 75.0, "visitors": 1, "visitors_percent": 50.0},
                {"day": "2024-03-06", "hits": 1, "hits_percent": 25.0, "visitors": 1, "visitors_percent": 50.0}
            ])
        {
            failures.fail(format!("{name}: days {days}"));
        }
        let browsers = panel_rows(&v, "browsers");
        if browsers[0]
            != serde_json::json!({"browser": "Firefox", "hits": 2, "hits_percent": 50.0, "visitors": 1, "visitors_percent": 50.0, "bytes": 7168, "bytes_percent": 93.33})
        {
            failures.fail(format!("{name}: browsers {browsers}"));
        }
        let hosts = panel_rows(&v, "hosts");
        if hosts[0]
            != serde_json::json!({"host": "192.0.2.10", "hits": 2, "hits_percent": 50.0, "visitors": 1, "visitors_percent": 50.0, "bytes": 7168, "bytes_percent": 93.33})
        {
            failures.fail(format!("{name}: hosts {hosts}"));
        }
        // The time taken by request, where the format logs it: IIS in milliseconds, the
        // others in seconds (/index.html: 15 ms; 0.001048+0.000073+0.000057 s; 0.001+0.002
        // s; 0.002 s; 0.000929675 s).
        let want_time = match name {
            "w3c" => Some(15_000),
            "elb" => Some(1_178),
            "alb" => Some(3_000),
            "cloudfront" => Some(2_000),
            "json" => Some(929),
            _ => None,
        };
        let index = panel_rows(&v, "requests")
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["uri"] == "/index.html")
            .cloned()
            .unwrap_or_default();
        if index.get("time_avg_us").and_then(|t| t.as_u64()) != want_time
            || index.get("time_max_us").and_then(|t| t.as_u64()) != want_time
        {
            failures.fail(format!(
                "{name}: /index.html times {index}, expected {want_time:?}"
            ));
        }
        // Googlebot's request (curl is no crawler in GoAccess's classes: `Others`).
        if v["general"]["crawler_requests"] != 1 {
            failures.fail(format!(
                "{name}: crawler requests {}",
                v["general"]["crawler_requests"]
            ));
        }
        let vhosts = panel_rows(&v, "vhosts");
        let has_vhost = !matches!(name, "combined" | "w3c");
        if has_vhost != (vhosts.as_array().is_some_and(|a| !a.is_empty())) {
            failures.fail(format!("{name}: virtual hosts {vhosts}"));
        }
        if matches!(name, "w3c" | "elb" | "alb" | "cloudfront" | "json")
            && v["general"]["timed_requests"] != 4
        {
            failures.fail(format!(
                "{name}: timed requests {}",
                v["general"]["timed_requests"]
            ));
        }
        // Named, and compressed: the same report.
        let named = swath(
            &dir,
            &["logs", "summary", "--json", "--format", name, &file],
        );
        if named.stdout != out.stdout || !named.stderr.is_empty() {
            failures.fail(format!(
                "{name}: --format {name} differs: {}",
                String::from_utf8_lossy(&named.stderr)
            ));
        }
        for how in ["gz", "zst", "xz", "bz2"] {
            let z = format!("{file}.{how}");
            dir.write(&z, &compressed(how, log.as_bytes()));
            let c = swath(&dir, &["logs", "summary", "--json", &z]);
            if c.stdout != out.stdout || c.stderr != out.stderr {
                failures.fail(format!(
                    "{name}.{how}: differs from the plain log: {}",
                    String::from_utf8_lossy(&c.stderr)
                ));
            }
        }
    }
    failures.finish();
}

/// A format given as an Apache LogFormat string or an nginx log_format string reads the
/// combined log as the built-in combined format does; a string without the request or
/// the status, or a log no format fits, is one line and status 2.
#[test]
fn custom_format_strings_read_the_log_as_the_built_in_format() {
    let dir = Dir::new();
    let (_, combined) = golden_logs().remove(0);
    dir.write("c.log", combined.as_bytes());
    let want = swath(
        &dir,
        &["logs", "summary", "--json", "--format", "combined", "c.log"],
    );
    let mut want: serde_json::Value = serde_json::from_slice(&want.stdout).unwrap();
    want["general"]["format"] = "custom".into();
    for f in [
        r#"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\""#,
        r#"%h %l %u %t "%m %U%q %H" %>s %O "%{Referer}i" "%{User-agent}i""#,
        r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent""#,
    ] {
        let out = swath(&dir, &["logs", "summary", "--json", "--format", f, "c.log"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(got, want, "{f}");
    }
    // Through a partial and swath merge, the format is still named `custom`.
    let f = r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i""#;
    let o = swath(
        &dir,
        &[
            "logs",
            "summary",
            "--format",
            f,
            "--emit-partial",
            "c.p",
            "c.log",
        ],
    );
    exited_0(&o);
    let merged = swath(&dir, &["merge", "--json", "c.p"]);
    let merged: serde_json::Value = serde_json::from_slice(&merged.stdout).unwrap();
    assert_eq!(merged, want);
    // A top as large as a number can be: the rows there are, not memory for that many.
    let o = swath(
        &dir,
        &[
            "logs",
            "summary",
            "--json",
            "--top",
            "18446744073709551615",
            "c.log",
        ],
    );
    exited_0(&o);
    // A W3C log of its headers only is a W3C log with no requests.
    dir.write("fresh.log", b"#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n#Date: 2024-03-05 00:00:00\n#Fields: date time c-ip cs-method cs-uri-stem sc-status sc-bytes\n");
    let o = swath(&dir, &["logs", "summary", "--json", "fresh.log"]);
    exited_0(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (
            v["general"]["format"].as_str(),
            v["general"]["requests"].as_u64()
        ),
        (Some("w3c"), Some(0))
    );
    // A URI with spaces (JSON, W3C) stays whole in the requests panel.
    dir.write("spaces.json", b"{\"status\":200,\"uri\":\"/c d e\"}\n");
    let o = swath(&dir, &["logs", "summary", "--json", "spaces.json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(panel_rows(&v, "requests")[0]["uri"], "/c d e");
    let out = swath(&dir, &["logs", "summary", "--format", "%h %t", "c.log"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .starts_with("swath logs: --format: a log format needs the request"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    dir.write("notes.txt", b"shopping list\neggs\nmilk\n");
    let out = swath(&dir, &["logs", "summary", "notes.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "swath logs: notes.txt: no known log format fits its first lines (give one with --format: combined, vhost_combined, w3c, cloudfront, elb, alb, json, or a LogFormat/log_format string)\n"
    );
    let out = swath(&dir, &["logs", "summary", "--format", "elb", "notes.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "swath logs: no line is in the elb format (3 lines read): give the log's format with --format\n"
    );
}

/// The filters: addresses and ranges, crawlers, times, statuses; static extensions added.
#[test]
fn filters_leave_requests_out_and_count_them() {
    let dir = Dir::new();
    let (_, combined) = golden_logs().remove(0);
    dir.write("c.log", combined.as_bytes());
    let run = |args: &[&str]| -> serde_json::Value {
        let mut a = vec!["logs", "summary", "--json", "--format", "combined"];
        a.extend_from_slice(args);
        a.push("c.log");
        let out = swath(&dir, &a);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let counts = |v: &serde_json::Value| {
        (
            v["general"]["requests"].as_u64().unwrap(),
            v["general"]["filtered"].as_u64().unwrap(),
        )
    };
    assert_eq!(counts(&run(&["--exclude-ip", "192.0.2.0/24"])), (2, 2));
    assert_eq!(
        counts(&run(&[
            "--exclude-ip",
            "203.0.113.5",
            "--exclude-ip",
            "198.51.100.7"
        ])),
        (2, 2)
    );
    // Googlebot's request (curl's is `Others` in GoAccess's classes, no crawler's).
    assert_eq!(counts(&run(&["--ignore-crawlers"])), (3, 1));
    assert_eq!(counts(&run(&["--since", "2024-03-05T11:00"])), (2, 2));
    assert_eq!(counts(&run(&["--until", "2024-03-05"])), (3, 1));
    assert_eq!(
        counts(&run(&["--since", "2024-03-06", "--until", "2024-03-06"])),
        (1, 3)
    );
    assert_eq!(counts(&run(&["--ignore-status", "404,302"])), (2, 2));
    assert_eq!(
        run(&["--static-file", ".html"])["general"]["static_requests"],
        2
    );
    for bad in [
        &["--exclude-ip", "10.0.0.0/40"][..],
        &["--since", "March"],
        &["--ignore-status", "99"],
    ] {
        let mut a = vec!["logs", "summary"];
        a.extend_from_slice(bad);
        a.push("c.log");
        let out = swath(&dir, &a);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

/// A filter value that does not parse is refused by the option parser with the reason the
/// filter gives (`swath_ops::logs::summary`), status 2.
#[test]
fn summary_filter_values_that_do_not_parse_say_why() {
    let dir = Dir::new();
    for (bad, why) in [
        (
            ["--exclude-ip", "10.0.0.0/40"],
            "invalid value '10.0.0.0/40' for '--exclude-ip <IP[/BITS]>': '10.0.0.0/40': the prefix length must be 0 to 32",
        ),
        (
            ["--exclude-ip", "host"],
            "invalid value 'host' for '--exclude-ip <IP[/BITS]>': 'host' is not an IP address or CIDR range",
        ),
        (
            ["--until", "2000-10-10T25"],
            "invalid value '2000-10-10T25' for '--until <TIME>': '2000-10-10T25' is not a time: give YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS",
        ),
    ] {
        let out = swath(&dir, &["logs", "summary", bad[0], bad[1], "c.log"]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("error: {why}\n\nFor more information, try '--help'.\n")
        );
    }
}

/// `--follow`: the page is rewritten as the log grows (a line without its newline waits
/// for it), after a rotation the old file's last lines and the new file's are counted, and
/// the page reloads itself.
#[test]
fn follow_rewrites_the_page_as_the_log_grows_and_rotates() {
    let dir = Dir::new();
    let line = "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.0\" 200 100 \"-\" \"x\"\n";
    dir.write("f.log", line.repeat(3).as_bytes());
    let mut child = Command::new(swath_bin())
        .args([
            "logs", "summary", "--follow", "1", "--html", "f.html", "f.log",
        ])
        .current_dir(dir.tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = || crate::logs_hostile::page_requests(&dir.path("f.html"));
    // Waits (up to 20 s) for the page to count `n` requests.
    let wait_for = |n: u64| {
        for _ in 0..200 {
            if requests() == Some(n) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        false
    };
    let append = |name: &str, text: &str| {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(dir.path(name))
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    };
    let ok = wait_for(3);
    append("f.log", &line[..20]);
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let held = requests();
    append("f.log", &line[20..]);
    let grew = wait_for(4);
    std::fs::rename(dir.path("f.log"), dir.path("f.log.1")).unwrap();
    append("f.log.1", line);
    append("f.log", &line.repeat(2));
    let rotated = wait_for(7);
    let page = std::fs::read_to_string(dir.path("f.html")).unwrap_or_default();
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(ok, "first page: {:?}; {err}", requests());
    assert_eq!(held, Some(3), "a line without its newline is not read yet");
    assert!(grew, "{:?}", requests());
    assert!(rotated, "after the rotation: {:?}", requests());
    assert!(page.contains("<meta http-equiv=\"refresh\" content=\"1\">"));
    assert!(
        err.contains("swath logs: following f.log; 'f.html' rewritten every 1 s"),
        "{err}"
    );
    // A log with no line yet: the format is recognised when lines come.
    dir.write("later.log", b"");
    let mut child = Command::new(swath_bin())
        .args([
            "logs",
            "summary",
            "--follow",
            "1",
            "--html",
            "later.html",
            "later.log",
        ])
        .current_dir(dir.tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    append(
        "later.log",
        "{\"status\":200,\"uri\":\"/j\",\"ts\":1709633730}\n",
    );
    let mut json_seen = false;
    for _ in 0..200 {
        let page = std::fs::read_to_string(dir.path("later.html")).unwrap_or_default();
        if page.contains("\"format\":\"json\"") && page.contains("\"requests\":1,") {
            json_seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        json_seen,
        "the JSON lines were not recognised once they came"
    );
    // Not with standard input, nor without a page.
    let o = swath(
        &dir,
        &["logs", "summary", "--follow", "1", "--html", "p.html", "-"],
    );
    assert_eq!(o.status.code(), Some(2));
    let o = swath(&dir, &["logs", "summary", "--follow", "1", "f.log"]);
    assert_eq!(o.status.code(), Some(2));
}

/// On a terminal, the format recognised is said on standard error (and only there: a
/// script's standard error keeps to one line per problem).
#[test]
fn the_format_recognised_is_said_on_a_terminal() {
    if !Path::new("/usr/bin/script").exists() {
        swath_engine::testing::skip("script(1) not installed: terminal test skipped");
        return;
    }
    let dir = Dir::new();
    for (name, log) in golden_logs() {
        dir.write("g.log", log.as_bytes());
        let cmd = format!("'{}' logs summary g.log > /dev/null", swath_bin().display());
        let o = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&o.stdout).replace('\r', "");
        let lines = log.lines().filter(|l| !l.starts_with('#')).count();
        assert_eq!(
            said.trim_end(),
            format!(
                "swath logs: format {name} ({}): {lines} of the first {lines} lines fit",
                swath_ops_named(name)
            ),
            "{name}"
        );
    }
}

/// What `--format` NAME is, as the message says it.
fn swath_ops_named(name: &str) -> &'static str {
    match name {
        "combined" => "Apache/nginx common or combined",
        "vhost_combined" => "Apache vhost-combined (%v:%p first)",
        "w3c" => "W3C extended (IIS), by its #Fields header",
        "cloudfront" => "AWS CloudFront (W3C, tab-separated)",
        "elb" => "AWS classic load balancer",
        "alb" => "AWS application load balancer",
        _ => "JSON lines (Caddy, nginx/Traefik JSON)",
    }
}
