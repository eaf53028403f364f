//! User agents classed as GoAccess 1.7 classes them: a browser and an operating system,
//! each a class (the report's root row: `Chrome`, `Crawlers`, `Windows`, ...) and a name
//! in it (the child row: `Chrome/114.0.0.0`, `Googlebot/2.1`, `Windows 10`, ...).
//!
//! The agent is the one GoAccess keeps ([`crate::logs::summary::goaccess_decoded`]: `%XX`
//! decoded, white space trimmed; a NUL ends it, as a C string). An empty agent has no
//! class ([`classify`] gives `None`), as in GoAccess, which gives it no browser or system
//! row; `-` is an agent like any other (`Unknown`).
//!
//! The browser, the first of these that gives one:
//! 1. A crawler that names a web page: the first of the markers `; +http`, `; http`,
//!    ` (+http`, ` (http`, `;++http` (tried in that order) found in the agent, not at its
//!    start, ends a word (after the last space or `+` before the marker, or from the
//!    agent's start); the word, up to a `;` or a space, is the browser, class `Crawlers`.
//!    If that word is empty, the agent is read on only up to it (GoAccess cuts its copy
//!    there before it gives up on the marker).
//! 2. The first key of GoAccess's browser table ([`tables::BROWSERS`]), in the table's
//!    order, found anywhere in the agent (case counts): its class, cut to 12 bytes (GoAccess's
//!    `Yandex.Browser` is `Yandex.Brows`), and a name read from the agent where the key is
//!    ([`browser_name`]).
//! 3. Class and name `Unknown`.
//!
//! The system: a crawler's is its browser (class `Crawlers`, the same name). Otherwise
//! the agent with each `+` read as a space, and the first key of GoAccess's system table
//! ([`tables::SYSTEMS`]) found in it gives the class, and a name read where it is
//! ([`system_name`]: Windows, Android and macOS versions by their marketing names, as
//! GoAccess's `real-os`, on in its Debian configuration); none found, `Unknown`.
//!
//! GoAccess's quirks are kept, as its figures are the target: the Windows name is read from
//! the whole rest of the agent after the key, so `Windows NT 6.1 ... Chrome/110.0...` is
//! `Windows 10`; `Mac OS X 13_0` is `macOS 12 Ventura`; an iPhone's name is spliced as
//! GoAccess splices it.

mod tables;

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use memchr::memmem;

/// The class of crawlers, in both panels.
pub const CRAWLERS: &str = "Crawlers";

/// The class and name of an agent no table knows.
pub const UNKNOWN: &str = "Unknown";

/// An agent's classes as GoAccess gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classes {
    /// The browser's class (`Chrome`, `Crawlers`, `Others`, `Unknown`, ...).
    pub browser_class: &'static str,
    /// The browser (`Chrome/114.0.0.0`, `Googlebot/2.1`, `curl/7.88.1`).
    pub browser: Vec<u8>,
    /// The system's class (`Windows`, `Macintosh`, `Crawlers`, `Unknown`, ...).
    pub system_class: &'static str,
    /// The system (`Windows 10`, `iPhone OS 16.5`, `Googlebot/2.1`).
    pub system: Vec<u8>,
}

impl Classes {
    /// Whether the agent is a crawler (its browser's class is `Crawlers`), as GoAccess's
    /// `--ignore-crawlers` reads it.
    pub fn crawler(&self) -> bool {
        self.browser_class == CRAWLERS
    }
}

/// The classes of `agent` (decoded as GoAccess decodes it); `None` for an empty agent.
pub fn classify(agent: &[u8]) -> Option<Classes> {
    let agent = memchr::memchr(0, agent).map_or(agent, |n| &agent[..n]);
    if agent.is_empty() {
        return None;
    }
    let (browser_class, browser) = browser(agent);
    let (system_class, system) = if browser_class == CRAWLERS {
        (CRAWLERS, browser.clone())
    } else {
        system(agent)
    };
    Some(Classes {
        browser_class,
        browser,
        system_class,
        system,
    })
}

/// A searcher for every key of `table` at once.
fn searcher(table: &[(&str, &str)]) -> AhoCorasick {
    AhoCorasick::new(table.iter().map(|(k, _)| k)).expect("the tables' keys make a searcher")
}

static BROWSER_KEYS: LazyLock<AhoCorasick> = LazyLock::new(|| searcher(tables::BROWSERS));
static SYSTEM_KEYS: LazyLock<AhoCorasick> = LazyLock::new(|| searcher(tables::SYSTEMS));

/// The first entry of a table (its index) whose key is in `s`, and where the key is first
/// (C's `strstr` on each key in table order).
fn first_key(keys: &AhoCorasick, s: &[u8]) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for m in keys.find_overlapping_iter(s) {
        let (i, at) = (m.pattern().as_usize(), m.start());
        if best.is_none_or(|(bi, ba)| i < bi || (i == bi && at < ba)) {
            best = Some((i, at));
        }
    }
    best
}

/// Where `needle` first is in `s`.
fn find(s: &[u8], needle: &[u8]) -> Option<usize> {
    memmem::find(s, needle)
}

/// Whether `needle` is in `s`.
fn has(s: &[u8], needle: &[u8]) -> bool {
    find(s, needle).is_some()
}

/// The first of `set`'s bytes in `s`, or `s`'s length.
fn end_at(s: &[u8], set: &[u8]) -> usize {
    s.iter().position(|b| set.contains(b)).unwrap_or(s.len())
}

/// The number of spaces in a key.
fn spaces(key: &str) -> usize {
    key.bytes().filter(|&b| b == b' ').count()
}

/// What a crawler marker leaves of an agent.
enum Marked<'a> {
    /// No marker, or one at the agent's start: the whole agent is read on.
    None,
    /// A crawler's word.
    Crawler(&'a [u8]),
    /// An empty word: the agent is read on up to this length.
    Cut(usize),
}

/// The crawler heuristic (GoAccess's `check_http_crawler` and `parse_crawler`).
fn marked(agent: &[u8]) -> Marked<'_> {
    let Some(at) = [
        &b"; +http"[..],
        b"; http",
        b" (+http",
        b" (http",
        b";++http",
    ]
    .iter()
    .find_map(|m| find(agent, m)) else {
        return Marked::None;
    };
    if at == 0 {
        return Marked::None;
    }
    // The word starts after the last space or `+` before the marker, or at the agent's
    // start (even if that is a space or a `+`).
    let start = agent[1..at]
        .iter()
        .rposition(|&b| b == b' ' || b == b'+')
        .map_or(0, |p| p + 2);
    let len = end_at(&agent[start..], b"; ");
    if len == 0 {
        Marked::Cut(start)
    } else {
        Marked::Crawler(&agent[start..start + len])
    }
}

/// The browser's class and name.
fn browser(agent: &[u8]) -> (&'static str, Vec<u8>) {
    let seen = match marked(agent) {
        Marked::Crawler(word) => return (CRAWLERS, word.to_vec()),
        Marked::Cut(n) => &agent[..n],
        Marked::None => agent,
    };
    match first_key(&BROWSER_KEYS, seen) {
        Some((i, at)) => {
            let (key, class) = tables::BROWSERS[i];
            (
                &class[..class.len().min(12)],
                browser_name(&seen[at..], key),
            )
        }
        None => (UNKNOWN, UNKNOWN.as_bytes().to_vec()),
    }
}

/// A browser's name from the agent where its key `key` is (`s`), as GoAccess's
/// `parse_browser` reads it: `+` read as `-`; Internet Explorer 11 is `MSIE/11.0`; Opera
/// is `Opera` and the text from the last `/` (`OPR/100.0` is `Opera/100.0`); an older
/// Internet Explorer's `MSIE 6.0` is `MSIE/6.0`; any other, the text up to a `;`, `)` or
/// space past the key's own spaces.
pub fn browser_name(s: &[u8], key: &str) -> Vec<u8> {
    let mut s: Vec<u8> = s
        .iter()
        .map(|&b| if b == b'+' { b'-' } else { b })
        .collect();
    // Where the cut is looked for: past as many spaces as the key has.
    let mut from = 0;
    for _ in 0..spaces(key) {
        match memchr::memchr(b' ', &s[from..]) {
            Some(i) => from += i + 1,
            None => {
                from = 0;
                break;
            }
        }
    }
    if has(&s, b"rv:11") && has(&s, b"Trident/7.0") {
        return b"MSIE/11.0".to_vec();
    }
    if has(&s, b"OPR") {
        if let Some(slash) = memchr::memrchr(b'/', &s) {
            let mut name = b"Opera".to_vec();
            name.extend_from_slice(&s[slash..]);
            return name;
        }
    }
    if has(&s, b"Opera") {
        if let Some(slash) = memchr::memrchr(b'/', &s).filter(|&p| p > 0) {
            // GoAccess moves the text from the last `/` to just after the first five bytes
            // (`Opera`, the key's start).
            let tail = s[slash..].to_vec();
            s.truncate(5);
            s.extend_from_slice(&tail);
        }
    }
    if has(&s, b"MSIE") {
        s.truncate(end_at(&s, b";)-"));
        for b in &mut s {
            if *b == b' ' {
                *b = b'/';
            }
        }
    } else if from <= s.len() {
        let cut = from + end_at(&s[from..], b";) ");
        s.truncate(cut);
    }
    s
}

/// The system's class and name.
fn system(agent: &[u8]) -> (&'static str, Vec<u8>) {
    let spaced: Vec<u8>;
    let s = if memchr::memchr(b'+', agent).is_some() {
        spaced = agent
            .iter()
            .map(|&b| if b == b'+' { b' ' } else { b })
            .collect();
        &spaced[..]
    } else {
        agent
    };
    match first_key(&SYSTEM_KEYS, s) {
        Some((i, at)) => {
            let (key, class) = tables::SYSTEMS[i];
            (&class[..class.len().min(9)], system_name(s, at, key))
        }
        None => (UNKNOWN, UNKNOWN.as_bytes().to_vec()),
    }
}

/// A system's name from the agent `s` (its `+` read as spaces) whose key `key` is at `at`,
/// as GoAccess's `parse_os` reads it (with `real-os`).
pub fn system_name(s: &[u8], at: usize, key: &str) -> Vec<u8> {
    let t = &s[at..];
    let first_word = || s[..memchr::memchr(b' ', s).unwrap_or(s.len())].to_vec();
    if has(s, b"Windows") {
        return windows(t).map_or_else(|| key.as_bytes().to_vec(), |n| n.as_bytes().to_vec());
    }
    if has(t, b"Android") {
        let t = &t[..end_at(t, b";)(")];
        return android(t).map_or_else(|| t.to_vec(), |n| n.as_bytes().to_vec());
    }
    if has(t, b"CFNetwork") {
        return first_word();
    }
    if has(t, b"iPad") || has(t, b"iPod") {
        return ios(t, 4);
    }
    if has(t, b"iPhone") {
        return ios(t, 6);
    }
    if has(t, b"OS X") {
        // Up to a `;`, `)`, `(` or the fourth space, `_` read as `.`.
        let mut n = 0;
        let mut spaces = 0;
        while n < t.len() && !b";)(".contains(&t[n]) {
            if t[n] == b' ' {
                spaces += 1;
                if spaces > 3 {
                    break;
                }
            }
            n += 1;
        }
        let t: Vec<u8> = t[..n]
            .iter()
            .map(|&b| if b == b'_' { b'.' } else { b })
            .collect();
        return mac(&t).map_or(t, |n| n.as_bytes().to_vec());
    }
    if has(t, b"Darwin") {
        return first_word();
    }
    // Up to a `;`, `)`, `(` or the space after the key's own spaces.
    let k = spaces(key);
    let mut n = 0;
    let mut spaces = 0;
    while n < t.len() && !b";)(".contains(&t[n]) {
        if t[n] == b' ' {
            spaces += 1;
            if spaces > k {
                break;
            }
        }
        n += 1;
    }
    t[..n].to_vec()
}

/// The first of `names`' keys in `t`, its name.
fn first_of(t: &[u8], names: &[(&str, &'static str)]) -> Option<&'static str> {
    names
        .iter()
        .find(|(k, _)| has(t, k.as_bytes()))
        .map(|&(_, n)| n)
}

/// A Windows version's marketing name (GoAccess's `get_real_win`, its dead `6.3; ARM` left
/// out).
fn windows(t: &[u8]) -> Option<&'static str> {
    first_of(
        t,
        &[
            ("10.0", "Windows 10"),
            ("6.3", "Windows 8.1"),
            ("6.2; ARM", "Windows RT"),
            ("6.2", "Windows 8"),
            ("6.1", "Windows 7"),
            ("6.0", "Windows Vista"),
            ("5.2", "Windows XP x64"),
            ("5.1", "Windows XP"),
            ("5.0", "Windows 2000"),
        ],
    )
}

/// An Android version's name (GoAccess's `get_real_android`).
fn android(t: &[u8]) -> Option<&'static str> {
    first_of(
        t,
        &[
            ("12", "Android 12"),
            ("11", "Android 11"),
            ("10", "Android 10"),
            ("9", "Pie 9"),
            ("8.1", "Oreo 8.1"),
            ("8.0", "Oreo 8.0"),
            ("7.1", "Nougat 7.1"),
            ("7.0", "Nougat 7.0"),
            ("6.0.1", "Marshmallow 6.0.1"),
            ("6.0", "Marshmallow 6.0"),
            ("5.1", "Lollipop 5.1"),
            ("5.0", "Lollipop 5.0"),
            ("4.4", "KitKat 4.4"),
            ("4.3", "Jelly Bean 4.3"),
            ("4.2", "Jelly Bean 4.2"),
            ("4.1", "Jelly Bean 4.1"),
            ("4.0", "Ice Cream Sandwich 4.0"),
            ("3.", "Honeycomb 3"),
            ("2.3", "Gingerbread 2.3"),
            ("2.2", "Froyo 2.2"),
            ("2.0", "Eclair 2"),
            ("2.1", "Eclair 2"),
            ("1.6", "Donut 1.6"),
            ("1.5", "Cupcake 1.5"),
        ],
    )
}

/// A macOS version's name (GoAccess's `get_real_mac_osx`, its `13.0` named `macOS 12
/// Ventura` as there).
fn mac(t: &[u8]) -> Option<&'static str> {
    first_of(
        t,
        &[
            ("13.0", "macOS 12 Ventura"),
            ("12.0", "macOS 12 Monterey"),
            ("11.0", "macOS 11 Big Sur"),
            ("10.15", "macOS 10.15 Catalina"),
            ("10.14", "macOS 10.14 Mojave"),
            ("10.13", "macOS 10.13 High Sierra"),
            ("10.12", "macOS 10.12 Sierra"),
            ("10.11", "OS X 10.11 El Capitan"),
            ("10.10", "OS X 10.10 Yosemite"),
            ("10.9", "OS X 10.9 Mavericks"),
            ("10.8", "OS X 10.8 Mountain Lion"),
            ("10.7", "OS X 10.7 Lion"),
            ("10.6", "OS X 10.6 Snow Leopard"),
            ("10.5", "OS X 10.5 Leopard"),
            ("10.4", "OS X 10.4 Tiger"),
            ("10.3", "OS X 10.3 Panther"),
            ("10.2", "OS X 10.2 Jaguar"),
            ("10.1", "OS X 10.1 Puma"),
            ("10.0", "OS X 10.0 Cheetah"),
        ],
    )
}

/// An iPhone's, iPad's or iPod's name from `t` (where the system's key is), `device` the
/// length of the device's name (GoAccess's `parse_ios`): with ` OS ` (not at `t`'s start)
/// and then ` like Mac`, the first `device` bytes of `t` and then the text from ` OS `,
/// `_` read as `.` (`iPhone OS 16.5`); otherwise the first `device` bytes.
///
/// GoAccess moves as many bytes as ` OS ` is from `t`'s start, cut at ` like Mac`, onto
/// `t` past the device's name; when ` OS ...` is longer than that, the rest of `t` there
/// shows through. This does the same, byte for byte.
fn ios(t: &[u8], device: usize) -> Vec<u8> {
    let head = || t[..device.min(t.len())].to_vec();
    let Some(os) = find(t, b" OS ").filter(|&p| p > 0) else {
        return head();
    };
    let Some(like) = find(&t[os..], b" like Mac") else {
        return head();
    };
    // C's buffer: `t`, its end marked at ` like Mac`, room past it as zeros.
    let mut buf = t.to_vec();
    buf[os + like] = 0;
    buf.resize(buf.len().max(2 * os).max(device + os) + 1, 0);
    let moved = buf[os..2 * os].to_vec();
    buf[device..device + os].copy_from_slice(&moved);
    let end = memchr::memchr(0, &buf).unwrap_or(buf.len());
    buf.truncate(end);
    for b in &mut buf {
        if *b == b'_' {
            *b = b'.';
        }
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `agent`'s browser and system, `class › name` each, as GoAccess shows them.
    fn rows(agent: &str) -> (String, String) {
        let c = classify(agent.as_bytes()).expect("an agent");
        (
            format!(
                "{} › {}",
                c.browser_class,
                String::from_utf8_lossy(&c.browser)
            ),
            format!(
                "{} › {}",
                c.system_class,
                String::from_utf8_lossy(&c.system)
            ),
        )
    }

    #[test]
    fn the_tables_are_goaccess_s() {
        assert_eq!(tables::BROWSERS.len(), 191);
        assert_eq!(tables::SYSTEMS.len(), 64);
        assert_eq!(tables::BROWSERS[0], ("Xbox One", "Game Systems"));
        assert_eq!(tables::BROWSERS[190], ("Mozilla", "Others"));
        assert_eq!(
            tables::BROWSERS
                .iter()
                .filter(|(_, c)| *c == CRAWLERS)
                .count(),
            61
        );
        assert_eq!(tables::SYSTEMS[0], ("Android", "Android"));
        assert_eq!(tables::SYSTEMS[63], ("Xbox", "Windows"));
    }

    /// Every agent of the research note (`goaccess-browsers.md` §2 and its extras), with
    /// the rows GoAccess 1.7 gave it.
    #[test]
    fn agents_are_classed_as_goaccess_classes_them() {
        let cases: &[(&str, &str, &str)] = &[
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36", "Chrome › Chrome/114.0.0.0", "Windows › Windows 10"),
            ("Mozilla/5.0 (Windows NT 6.1; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/109.0.0.0 Safari/537.36", "Chrome › Chrome/109.0.0.0", "Windows › Windows 7"),
            ("Mozilla/5.0 (Windows NT 6.1; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/110.0.5481.77 Safari/537.36", "Chrome › Chrome/110.0.5481.77", "Windows › Windows 10"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36", "Chrome › Chrome/114.0.0.0", "Macintosh › macOS 10.15 Catalina"),
            ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36", "Chrome › Chrome/114.0.0.0", "Linux › Linux"),
            ("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Mobile Safari/537.36", "Chrome › Chrome/114.0.0.0", "Android › Android 10"),
            ("Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/116.0.0.0 Mobile Safari/537.36", "Chrome › Chrome/116.0.0.0", "Android › Android 13"),
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/114.0.5735.124 Mobile/15E148 Safari/604.1", "Chrome › CriOS/114.0.5735.124", "iOS › iPhone OS 16.5"),
            ("Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36", "Chrome › Chrome/114.0.0.0", "Chrome OS › CrOS"),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:109.0) Gecko/20100101 Firefox/115.0", "Firefox › Firefox/115.0", "Windows › Windows 10"),
            ("Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0", "Firefox › Firefox/115.0", "Linux › Ubuntu"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:109.0) Gecko/20100101 Firefox/115.0", "Firefox › Firefox/115.0", "Macintosh › macOS 10.15 Catalina"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 13.4; rv:109.0) Gecko/20100101 Firefox/115.0", "Firefox › Firefox/115.0", "Macintosh › OS X 13.4"),
            ("Mozilla/5.0 (Android 13; Mobile; rv:109.0) Gecko/115.0 Firefox/115.0", "Firefox › Firefox/115.0", "Android › Android 13"),
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/114.0 Mobile/15E148 Safari/605.1.15", "Safari › Safari/605.1.15", "iOS › iPhone OS 16.5"),
            ("Mozilla/5.0 (Windows NT 5.1; rv:52.0) Gecko/20100101 Firefox/52.0", "Firefox › Firefox/52.0", "Windows › Windows XP"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.5 Safari/605.1.15", "Safari › Safari/605.1.15", "Macintosh › macOS 10.15 Catalina"),
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.5 Mobile/15E148 Safari/604.1", "Safari › Safari/604.1", "iOS › iPhone OS 16.5"),
            ("Mozilla/5.0 (iPad; CPU OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.5 Mobile/15E148 Safari/604.1", "Safari › Safari/604.1", "iOS › iPad OS 16.5"),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36 Edg/114.0.1823.67", "Edge › Edg/114.0.1823.67", "Windows › Windows 10"),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.102 Safari/537.36 Edge/18.19041", "Edge › Edge/18.19041", "Windows › Windows 10"),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36 OPR/100.0.0.0", "Opera › Opera/100.0.0.0", "Windows › Windows 10"),
            ("Opera/9.80 (Windows NT 6.1; WOW64) Presto/2.12.388 Version/12.18", "Opera › Opera/12.18", "Windows › Windows 7"),
            ("Mozilla/5.0 (Linux; Android 13; SAMSUNG SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/21.0 Chrome/110.0.5481.154 Mobile Safari/537.36", "Chrome › Chrome/110.0.5481.154", "Android › Android 13"),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36 Vivaldi/6.1.3035.111", "Vivaldi › Vivaldi/6.1.3035.111", "Windows › Windows 10"),
            ("Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko", "MSIE › MSIE/11.0", "Windows › Windows 7"),
            ("Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko", "MSIE › MSIE/11.0", "Windows › Windows 10"),
            ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)", "MSIE › MSIE/6.0", "Windows › Windows XP"),
            ("Mozilla/5.0 (Linux; Android 4.4.2; Nexus 4 Build/KOT49H) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/34.0.1847.114 Mobile Safari/537.36", "Chrome › Chrome/34.0.1847.114", "Android › KitKat 4.4"),
            ("Mozilla/5.0 (Linux; Android 9; SM-G960F) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Mobile Safari/537.36", "Chrome › Chrome/114.0.0.0", "Android › Pie 9"),
            ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Crawlers › Googlebot/2.1", "Crawlers › Googlebot/2.1"),
            ("Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.5735.179 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Crawlers › Googlebot/2.1", "Crawlers › Googlebot/2.1"),
            ("Mozilla/5.0+(compatible;+Googlebot/2.1;++http://www.google.com/bot.html)", "Crawlers › Googlebot/2.1", "Crawlers › Googlebot/2.1"),
            ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "Crawlers › bingbot/2.0", "Crawlers › bingbot/2.0"),
            ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "Crawlers › YandexBot/3.0", "Crawlers › YandexBot/3.0"),
            ("Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", "Crawlers › Baiduspider/2.0", "Crawlers › Baiduspider/2.0"),
            ("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "Crawlers › AhrefsBot/7.0", "Crawlers › AhrefsBot/7.0"),
            ("Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", "Crawlers › SemrushBot/7~bl", "Crawlers › SemrushBot/7~bl"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "Crawlers › (Applebot/0.1", "Crawlers › (Applebot/0.1"),
            ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "Crawlers › facebookexternalhit/1.1", "Crawlers › facebookexternalhit/1.1"),
            ("Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Crawlers › 1.0", "Crawlers › 1.0"),
            ("Twitterbot/1.0", "Crawlers › Twitterbot/1.0", "Crawlers › Twitterbot/1.0"),
            ("curl/7.88.1", "Others › curl/7.88.1", "Unknown › Unknown"),
            ("Wget/1.21.3", "Others › Wget/1.21.3", "Unknown › Unknown"),
            ("python-requests/2.31.0", "Others › python-requests/2.31.0", "Unknown › Unknown"),
            ("Python-urllib/3.11", "Crawlers › Python-urllib/3.11", "Crawlers › Python-urllib/3.11"),
            ("Go-http-client/1.1", "Others › Go-http-client/1.1", "Unknown › Unknown"),
            ("-", "Unknown › Unknown", "Unknown › Unknown"),
            // The extras.
            ("Mozilla/5.0+(Windows+NT+10.0;+Win64;+x64)+AppleWebKit/537.36+(KHTML,+like+Gecko)+Chrome/114.0.0.0+Safari/537.36", "Chrome › Chrome/114.0.0.0-Safari/537.36", "Windows › Windows 10"),
            // x2 as GoAccess decodes it (`%20` a space).
            ("Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0", "Firefox › Firefox/115.0", "Linux › Linux"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36 (compatible; Foo/1.0; http://foo.example)", "Crawlers › Foo/1.0", "Crawlers › Foo/1.0"),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64; Xbox; Xbox One) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.102 Safari/537.36 Edge/18.19041", "Game Systems › Xbox One", "Windows › Windows 10"),
            ("Mozilla/5.0 (Windows NT 6.1; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) YaBrowser/23.5.0.0 Chrome/112.0.0.0 Safari/537.36", "Yandex.Brows › YaBrowser/23.5.0.0", "Windows › Windows 7"),
            ("Mozilla/5.0 (Linux; Android 12; SM-A515F) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Mobile Safari/537.36", "Chrome › Chrome/114.0.0.0", "Android › Android 12"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.5 Safari/605.1.15 OtherThing", "Safari › Safari/605.1.15", "Macintosh › macOS 10.15 Catalina"),
            ("Java/1.8.0_151", "Crawlers › Java/1.8.0_151", "Crawlers › Java/1.8.0_151"),
            ("Mozilla/5.0 (Windows NT 6.3; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/109.0.0.0 Safari/537.36", "Chrome › Chrome/109.0.0.0", "Windows › Windows 8.1"),
            ("Mozilla/5.0 (X11; Fedora; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0", "Firefox › Firefox/115.0", "Linux › Fedora"),
            ("Mozilla/5.0 (X11; FreeBSD amd64; rv:109.0) Gecko/20100101 Firefox/115.0", "Firefox › Firefox/115.0", "BSD › FreeBSD"),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/114.0.5735.133 Safari/537.36", "Chrome › HeadlessChrome/114.0.5735.133", "Windows › Windows 10"),
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/420.0.0.32.107]", "Others › Mozilla/5.0", "iOS › iPhone OS 16.5"),
            ("Opera/9.80 (Android; Opera Mini/36.2.2254/119.132; U; id) Presto/2.12.423 Version/12.16", "Opera › Opera/12.16", "Android › Android"),
            ("SomethingWeird/1.0", "Unknown › Unknown", "Unknown › Unknown"),
        ];
        for &(agent, browser, system) in cases {
            assert_eq!(
                rows(agent),
                (browser.to_string(), system.to_string()),
                "{agent}"
            );
        }
        assert_eq!(cases.len(), 48 + 15);
    }

    #[test]
    fn an_empty_agent_has_no_class() {
        assert_eq!(classify(b""), None);
        assert_eq!(classify(b"\0Chrome/1"), None);
    }

    #[test]
    fn an_empty_crawler_word_leaves_the_agent_read_up_to_it() {
        // The word before the marker is empty (a space before it), so only `Mozilla ` is
        // read on: `Chrome`, past it, is not found.
        assert_eq!(rows("Mozilla ; +http Chrome/1").0, "Others › Mozilla");
        assert_eq!(
            rows("Mozilla/5.0 ; +http://a.example").0,
            "Others › Mozilla/5.0"
        );
        assert_eq!(rows("Chrome/1 ; +http://a").0, "Chrome › Chrome/1");
        // A marker at the agent's start is no crawler's.
        assert_eq!(rows("; +http Chrome/1").0, "Chrome › Chrome/1");
    }

    #[test]
    fn crawlers_are_crawlers() {
        assert!(classify(b"Twitterbot/1.0").unwrap().crawler());
        assert!(!classify(b"curl/7.88.1").unwrap().crawler());
        assert!(!classify(b"-").unwrap().crawler());
    }
}
