//! Any partition of a log into byte ranges (cuts mid-line, on a newline, inside a CR LF,
//! ranges of one byte), computed as pieces, merged in any order and any tree, prints what
//! the whole log prints, for each report.

use proptest::prelude::*;
use swath_engine::EngineOptions;
use swath_grep::pattern::Syntax;
use swath_grep::search::MatchOptions;
use swath_ops::logs::summary::{Summary, SummaryConfig};
use swath_ops::logs::{LineReport, Wf2};
use swath_ops::search::Binary;
use swath_report::merge::{render_parts, Format};
use swath_report::piece::{piece, Request};
use swath_report::wc::{Encoding, Selected};

/// Log lines over small alphabets (keys repeat across pieces, counts tie), some with CR LF
/// ends, some malformed, and maybe no final newline.
fn log() -> impl Strategy<Value = Vec<u8>> {
    let line = (0u8..5, 0u8..7, 0u8..4, 0u16..999, 0u8..3, any::<bool>()).prop_map(
        |(client, uri, status, bytes, refr, crlf)| {
            let uri = match uri {
                0..=2 => format!("/ongoing/When/200x/2007/02/0{uri}/T{}", uri % 2),
                3 => "/ongoing/ongoing.atom".to_string(),
                _ => format!("/p/{uri}.png"),
            };
            let status = ["200", "304", "404", "200"][usize::from(status)];
            let refr = ["\"-\"", "\"http://a/\"", "\"http://b/x\""][usize::from(refr)];
            let end = if crlf { "\r\n" } else { "\n" };
            format!(
                "h{client} - - [0{}/Oct/2007:1{client}:00:00 -0700] \"GET {uri} HTTP/1.1\" {status} {bytes} {refr} \"ua {refr}\"{end}",
                client % 3 + 1
            )
            .into_bytes()
        },
    );
    let odd = prop_oneof![
        Just(b"bad\n".to_vec()),
        Just(b"\n".to_vec()),
        Just("caf\u{e9} \u{65e5}\n".as_bytes().to_vec())
    ];
    (
        proptest::collection::vec(prop_oneof![8 => line, 1 => odd], 0..40),
        any::<bool>(),
    )
        .prop_map(|(v, cut_last)| {
            let mut d = v.concat();
            if cut_last && d.last() == Some(&b'\n') {
                d.pop();
            }
            d
        })
}

/// Ranges from cut points anywhere (any byte offset, ranges of one byte included).
fn ranges(len: u64, cuts: &[u64]) -> Vec<(u64, u64)> {
    let mut at: Vec<u64> = cuts.iter().map(|c| c % (len + 1)).collect();
    at.push(0);
    at.push(len);
    at.sort_unstable();
    at.dedup();
    if at.len() == 1 {
        return vec![(0, 0)];
    }
    at.windows(2).map(|w| (w[0], w[1])).collect()
}

fn requests() -> Vec<Request> {
    vec![
        Request::Wc {
            selected: Selected {
                lines: true,
                words: true,
                chars: true,
                bytes: true,
                max: true,
            },
            encoding: Encoding::Utf8,
        },
        Request::GrepCount {
            patterns: vec![b"ongoing/When".to_vec(), b"^h[12]".to_vec()],
            match_opts: MatchOptions {
                syntax: Syntax::Extended,
                ignore_case: true,
                word: false,
                line: false,
                utf8: true,
                multibyte: false,
            },
            invert: false,
            binary: Binary::Binary,
            with_filename: None,
            null_after_name: false,
        },
        Request::Wf2 {
            top: 3,
            max_line: 4 << 20,
            article: swath_report::logs::DEFAULT_ARTICLE.into(),
            self_referrer: swath_report::logs::DEFAULT_SELF_REFERRER.into(),
        },
        Request::Summary {
            top: 4,
            max_line: 4 << 20,
            visitors_4xx: false,
        },
        Request::Summary {
            top: 4,
            max_line: 4 << 20,
            visitors_4xx: true,
        },
    ]
}

/// Merges in a tree: pairs level by level, each merged partial written and read again.
fn tree(mut level: Vec<Vec<u8>>) -> Vec<u8> {
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|c| {
                let parts: Vec<&[u8]> = c.iter().map(|p| &p[..]).collect();
                swath_report::merge::merge_parts(&parts).unwrap().unwrap()
            })
            .collect();
    }
    level.pop().unwrap()
}

fn render(parts: &[Vec<u8>], format: Format) -> Vec<u8> {
    let parts: Vec<&[u8]> = parts.iter().map(|p| &p[..]).collect();
    render_parts(&parts, format, false).unwrap().text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn any_cuts_any_order_any_tree_print_the_whole(
        data in log(),
        cuts in proptest::collection::vec(any::<u64>(), 0..7),
        order in proptest::collection::vec(any::<u32>(), 8),
        threads in prop_oneof![Just(Some(1i64)), Just(Some(3)), Just(None)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.log");
        std::fs::write(&path, &data).unwrap();
        let engine = EngineOptions {
            threads: threads.map_or(swath_engine::Threads::Auto, swath_engine::Threads::from_count),
            ..EngineOptions::default()
        };
        let len = data.len() as u64;
        for request in requests() {
            let whole = piece(&request, &path, Some(b"a.log"), 0, None, &engine).unwrap();
            let mut pieces: Vec<(u32, Vec<u8>)> = ranges(len, &cuts)
                .into_iter()
                .zip(order.iter().cycle())
                .map(|(r, &k)| (k, piece(&request, &path, Some(b"a.log"), 0, Some(r), &engine).unwrap()))
                .collect();
            pieces.sort_by_key(|p| p.0);
            let pieces: Vec<Vec<u8>> = pieces.into_iter().map(|p| p.1).collect();
            let want = render(std::slice::from_ref(&whole), Format::Text);
            prop_assert_eq!(&render(&pieces, Format::Text), &want);
            let merged = tree(pieces.clone());
            prop_assert_eq!(&render(std::slice::from_ref(&merged), Format::Text), &want);
            // Merged whole, the pieces are the whole piece, byte for byte.
            prop_assert_eq!(&merged, &whole);
            if matches!(request, Request::Wf2 { .. } | Request::Summary { .. }) {
                prop_assert_eq!(render(&pieces, Format::Json), render(&[whole], Format::Json));
            }
        }
        // The log reports' text equals the report of the lines fed one by one.
        let mut w = Wf2::default();
        w.block(&swath_report::logs::wf2_config(swath_report::logs::DEFAULT_ARTICLE, swath_report::logs::DEFAULT_SELF_REFERRER, 4 << 20).unwrap(), &data);
        let p = piece(&requests()[2], &path, Some(b"a.log"), 0, None, &engine).unwrap();
        prop_assert_eq!(render(&[p], Format::Text), swath_report::logs::wf2(&w.ranked(3), false, false));
        let mut s = Summary::default();
        s.block(&SummaryConfig { max_line: 4 << 20, ..Default::default() }, &data);
        let p = piece(&requests()[3], &path, Some(b"a.log"), 0, None, &engine).unwrap();
        prop_assert_eq!(render(&[p], Format::Text), swath_report::summary::text(&swath_report::summary::model(&s.ranked(4, swath_ops::logs::summary::Statics::new(&swath_ops::logs::summary::default_static(), "combined")), "combined")).into_bytes());
    }
}
