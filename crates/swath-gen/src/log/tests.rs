//! Tests of the access-log generator: reproducibility, exact sizes, fitted lines, dates,
//! and the distributions against the Wide Finder 2 targets.

use super::*;
use std::collections::HashMap;

fn log_bytes(size: u64, seed: u64) -> Vec<u8> {
    let g = LogGenerator::new(seed);
    chunks(size)
        .flat_map(|(i, _, len)| g.chunk(i, len))
        .collect()
}

fn fields(line: &[u8]) -> Vec<&[u8]> {
    line.split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .collect()
}

/// `swath gen log` without `--damaged` is what a user greps: text lines only, each with
/// the fields of the combined format; `--damaged` adds the malformed ones.
#[test]
fn a_log_is_text_unless_damaged() {
    let size = 6 * CHUNK;
    let plain = log_bytes(size, 3);
    for line in plain[..plain.len() - 1].split(|&b| b == b'\n') {
        assert!(
            line.iter().all(|&b| (0x20..0x7f).contains(&b)),
            "not a text line: {:?}",
            String::from_utf8_lossy(line)
        );
        assert!(
            fields(line).len() >= 12,
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    let g = LogGenerator::new(3).damaged(true);
    let damaged: Vec<u8> = chunks(size)
        .flat_map(|(i, _, len)| g.chunk(i, len))
        .collect();
    assert_eq!(damaged.len(), plain.len());
    let malformed = damaged[..damaged.len() - 1]
        .split(|&b| b == b'\n')
        .filter(|l| fields(l).len() < 12 || l.ends_with(b"\r"))
        .count();
    assert!(malformed > 0, "--damaged wrote no malformed line");
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let size = 2 * CHUNK + 12_345;
    generate(&a, size, 7, false).unwrap();
    generate(&b, size, 7, false).unwrap();
    generate(&c, size, 8, false).unwrap();
    let (da, db, dc) = (
        std::fs::read(&a).unwrap(),
        std::fs::read(&b).unwrap(),
        std::fs::read(&c).unwrap(),
    );
    assert_eq!(da.len() as u64, size);
    assert!(da == db);
    assert!(da != dc);
    // The file is the chunks joined, whatever the thread count.
    assert!(da == log_bytes(size, 7));
    // A log of another size shares the chunks that are whole in both.
    assert!(log_bytes(3 * CHUNK, 7)[..CHUNK as usize] == da[..CHUNK as usize]);
}

#[test]
fn exact_size_ending_in_newline() {
    for size in [
        1, 2, 10, 79, 80, 81, 100, 191, 192, 193, 300, 1000, 5000, 65_536,
    ] {
        let data = log_bytes(size, 3);
        assert_eq!(data.len() as u64, size, "size {size}");
        assert_eq!(*data.last().unwrap(), b'\n', "size {size}");
        if size >= 100 {
            // Big enough for a whole, valid last line.
            let last = data[..data.len() - 1]
                .rsplit(|&b| b == b'\n')
                .next()
                .unwrap();
            assert!(
                fields(last).len() >= 12,
                "size {size}: {}",
                String::from_utf8_lossy(last)
            );
            assert!(last.ends_with(b"\""), "size {size}");
        }
    }
    assert_eq!(log_bytes(0, 3), b"");
    assert_eq!(log_bytes(1, 3), b"\n");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log");
    for size in [0, 1, 300, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK - 7] {
        generate(&p, size, 9, false).unwrap();
        let data = std::fs::read(&p).unwrap();
        assert_eq!(data.len() as u64, size);
        assert!(size == 0 || data.ends_with(b"\"\n") || size < 100);
    }
}

#[test]
fn reserve_holds_the_shortest_fitted_line() {
    let mut out = Vec::new();
    write_short_head(&mut Clock::new(), 0, &mut out);
    assert!(out.len() + 2 < RESERVE, "{}", out.len());
    assert!(out.len() < 85);
}

#[test]
fn fitted_lines_are_whole_for_every_room() {
    let g = LogGenerator::new(1);
    let mut rng = rng_for(1, 99);
    let mut clock = Clock::new();
    for room in 1..700 {
        let mut out = Vec::new();
        g.write_fitted(&mut rng, &mut clock, 1_000_000, room, &mut out);
        assert_eq!(out.len(), room);
        assert_eq!(*out.last().unwrap(), b'\n');
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        if room >= 85 {
            assert!(out.ends_with(b"\"\n"));
            assert!(!out.ends_with(b"\\\"\n"));
            assert!(
                fields(&out).len() >= 12,
                "{}",
                String::from_utf8_lossy(&out)
            );
        }
    }
}

#[test]
fn dates_round_trip() {
    assert_eq!(days_from_civil(1970, 1, 1), 0);
    assert_eq!(days_from_civil(2007, 10, 1), 13_787);
    assert_eq!((days_from_civil(2007, 10, 1) + 3) % 7, 0, "a Monday");
    for day in [-1000, 0, 13_787, 13_900, 20_000] {
        let (y, m, d) = civil_from_days(day);
        assert_eq!(days_from_civil(y, m, d), day);
    }
    let mut out = Vec::new();
    Clock::new().write(
        days_from_civil(2007, 10, 10) * 86_400 + 13 * 3600 + 55 * 60 + 36,
        &mut out,
    );
    assert_eq!(out, b"10/Oct/2007:13:55:36 -0700");
}

#[test]
fn status_tables_add_up_to_the_targets() {
    let g = LogGenerator::new(1);
    let mut class_share = [0.0; CLASSES];
    let weights: f64 = FIXED_URIS.iter().map(|u| u.2).sum::<f64>()
        + ARTICLE_SHARE
        + IMAGE_SHARE
        + PAGE_SHARE
        + JUNK_SHARE;
    assert!((weights - 100.0).abs() < 1e-9, "{weights}");
    let article_total: f64 = HOT_ARTICLES.iter().sum::<f64>()
        + zipf_weights(
            TAIL_ARTICLES,
            ARTICLE_ZIPF,
            ARTICLE_SHARE - HOT_ARTICLES.iter().sum::<f64>(),
        )
        .iter()
        .sum::<f64>();
    assert!((article_total - ARTICLE_SHARE).abs() < 1e-9);
    for &(_, class, share, _) in FIXED_URIS {
        class_share[class as usize] += share;
    }
    class_share[Class::Article as usize] += ARTICLE_SHARE;
    class_share[Class::Image as usize] += IMAGE_SHARE;
    class_share[Class::Page as usize] += PAGE_SHARE;
    class_share[Class::Junk as usize] += JUNK_SHARE;
    let mut status: HashMap<u16, f64> = HashMap::new();
    let mut no_referrer = 0.0;
    for (p, share) in PROFILES.iter().zip(class_share) {
        let total: f64 = p.status.iter().map(|s| s.1).sum();
        assert!((total - 100.0).abs() < 1e-9);
        for &(code, pct) in p.status {
            *status.entry(code).or_default() += share * pct / 100.0;
        }
        no_referrer += share * p.no_referrer;
    }
    for (code, target) in [(200, 62.0), (304, 25.0), (301, 8.5), (404, 2.8)] {
        assert!(
            (status[&code] - target).abs() < 0.3,
            "{code}: {}",
            status[&code]
        );
    }
    let other: f64 = status
        .iter()
        .filter(|(c, _)| ![200, 304, 301, 404].contains(*c))
        .map(|(_, v)| v)
        .sum();
    assert!((other - 1.7).abs() < 0.3, "{other}");
    assert!((no_referrer - 57.0).abs() < 1.0, "{no_referrer}");
    assert_eq!(
        g.uris.len(),
        FIXED_URIS.len() + HOT_ARTICLES.len() + TAIL_ARTICLES + IMAGES + PAGES + 1
    );
}

#[test]
fn distributions_match_the_wide_finder_sample() {
    // About 20 MB, generated on all cores, with the malformed lines.
    let g = LogGenerator::new(11).damaged(true);
    let n = 20u64;
    let parts: Vec<Vec<u8>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let g = &g;
                s.spawn(move || {
                    (t..n)
                        .step_by(4)
                        .map(|i| (i, g.chunk(i, CHUNK as usize)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(u64, Vec<u8>)> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_by_key(|p| p.0);
        all.into_iter().map(|p| p.1).collect()
    });
    let data = parts.concat();
    let article =
        regex::bytes::Regex::new(r"^/ongoing/When/\d\d\dx/\d\d\d\d/\d\d/\d\d/[^ .]+$").unwrap();

    let (mut lines, mut malformed, mut valid) = (0usize, 0usize, 0usize);
    let (mut articles, mut no_referrer, mut long) = (0usize, 0usize, 0usize);
    let mut status: HashMap<&[u8], usize> = HashMap::new();
    let mut uris: HashMap<&[u8], usize> = HashMap::new();
    let mut hosts: HashMap<&[u8], usize> = HashMap::new();
    let mut ok_bytes: Vec<u64> = Vec::new();
    let mut last_time = 0u64;
    for line in data[..data.len() - 1].split(|&b| b == b'\n') {
        lines += 1;
        let f = fields(line);
        if line.len() > 2000 {
            long += 1;
        }
        if f.len() < 12 || line.ends_with(b"\r") {
            malformed += 1;
            continue;
        }
        valid += 1;
        *status.entry(f[8]).or_default() += 1;
        *uris.entry(f[6]).or_default() += 1;
        *hosts.entry(f[0]).or_default() += 1;
        if article.is_match(f[6]) {
            articles += 1;
        }
        if f[10] == b"\"-\"" {
            no_referrer += 1;
        }
        if f[8] == b"200" && f[9] != b"-" {
            ok_bytes.push(std::str::from_utf8(f[9]).unwrap().parse().unwrap());
        }
        // [DD/Mon/YYYY:HH:MM:SS within one month: DDHHMMSS sorts.
        let ts = f[3];
        let key = |r: std::ops::Range<usize>| -> u64 {
            std::str::from_utf8(&ts[r]).unwrap().parse().unwrap()
        };
        let t = ((key(1..3) * 24 + key(13..15)) * 60 + key(16..18)) * 60 + key(19..21);
        assert!(
            t >= last_time,
            "time went back: {}",
            String::from_utf8_lossy(line)
        );
        last_time = t;
    }
    let pct = |n: usize| 100.0 * n as f64 / valid as f64;
    let code = |c: &str| pct(status.get(c.as_bytes()).copied().unwrap_or(0));
    let (s200, s304, s301, s404) = (code("200"), code("304"), code("301"), code("404"));
    let other = 100.0 - s200 - s304 - s301 - s404;
    let mut by_count: Vec<usize> = uris.values().copied().collect();
    by_count.sort_unstable_by(|a, b| b.cmp(a));
    let top1 = pct(by_count[0]);
    let top10 = pct(by_count[..10].iter().sum());
    let mean_line = data.len() as f64 / lines as f64;
    ok_bytes.sort_unstable();
    let median_ok = ok_bytes[ok_bytes.len() / 2];
    let mut by_host: Vec<usize> = hosts.values().copied().collect();
    by_host.sort_unstable_by(|a, b| b.cmp(a));
    let report = format!(
        "lines {lines} valid {valid} malformed {malformed} long {long} | 200 {s200:.2} 304 {s304:.2} 301 {s301:.2} \
         404 {s404:.2} other {other:.2} | top1 {top1:.2} top10 {top10:.2} articles {:.2} distinct {} | \
         no-referrer {:.2} | mean line {mean_line:.1} | median 200 bytes {median_ok} | hosts {} top host {:.2}",
        pct(articles),
        uris.len(),
        pct(no_referrer),
        hosts.len(),
        pct(by_host[0]),
    );
    eprintln!("{report}");
    assert!((s200 - 62.0).abs() < 2.0, "{report}");
    assert!((s304 - 25.0).abs() < 2.0, "{report}");
    assert!((s301 - 8.5).abs() < 1.0, "{report}");
    assert!((s404 - 2.8).abs() < 0.6, "{report}");
    assert!((other - 1.7).abs() < 0.6, "{report}");
    assert!((top1 - 28.0).abs() < 1.5, "{report}");
    assert!((top10 - 57.0).abs() < 3.0, "{report}");
    assert!((pct(articles) - 50.0).abs() < 4.0, "{report}");
    assert!((pct(no_referrer) - 57.0).abs() < 3.0, "{report}");
    assert!((200.0..=240.0).contains(&mean_line), "{report}");
    assert!(
        malformed > 0 && (malformed as f64) < 0.005 * lines as f64,
        "{report}"
    );
    assert!(uris.len() > 2000, "{report}");
    assert!((30_000..=80_000).contains(&median_ok), "{report}");
}
