//! A report kind defined here, outside the crates, by its type alone (a fold on the
//! engine, its state's codec and join, how it prints) and one line in a table of reports:
//! its pieces of any cuts, computed through `swath_ops::report::piece`, read back, merged
//! in any order and any tree through the untyped entry that `swath merge` and the Python
//! package use, print the count of the whole file; a lost, doubled or forged piece, a
//! partial of another report, and a kind left out of the table are refused.

use proptest::prelude::*;
use swath_engine::source::Span;
use swath_engine::{fold, Access, Block, EngineError, EngineOptions, Flow, Fold, Input, Plan};
use swath_ops::partial::PartialError;
use swath_ops::report::{piece, Partial, PieceOf, Report};
use swath_report::merge::{
    merge_parts_in, render_parts_in, AnyReport, Format, Kind, Render, REPORTS,
};

/// The bytes equal to `x` in each input: the report kind under test.
struct XCount;

/// A worker's count of the bytes it took that equal the configured byte.
struct Counted(u64);

impl Fold for Counted {
    type Config = u8;

    fn new(_: &u8) -> Self {
        Counted(0)
    }

    fn block(&mut self, &byte: &u8, _: &Block, data: &[&[u8]]) -> Flow {
        self.0 += data[0].iter().filter(|&&b| b == byte).count() as u64;
        Flow::Continue
    }

    fn merge(&mut self, other: Self) {
        self.0 += other.0;
    }
}

impl Report for XCount {
    const CODE: u8 = 200;
    const NAME: &'static str = "x-count";
    type Config<'c> = u8;
    type Fold = Counted;
    type State = u64;

    fn fold_span(
        span: Span<'_>,
        byte: &u8,
        engine: &EngineOptions,
    ) -> Result<Counted, EngineError> {
        let job = span.job();
        let plan = Plan::for_job(engine, &job, Access::SinglePass);
        Ok(fold::<Counted>(&plan, &job, &(), byte)?.0)
    }

    fn finish(c: Counted) -> u64 {
        c.0
    }

    fn empty() -> u64 {
        0
    }

    fn encode(n: &u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&n.to_le_bytes());
    }

    fn decode(b: &[u8]) -> Result<u64, PartialError> {
        let b: [u8; 8] = b
            .try_into()
            .map_err(|_| PartialError::Damaged("a piece's state has the wrong length"))?;
        Ok(u64::from_le_bytes(b))
    }

    fn check(&n: &u64, span: u64) -> Result<(), PartialError> {
        match n <= span {
            true => Ok(()),
            false => Err(PartialError::Damaged("more x than bytes")),
        }
    }

    fn join(a: u64, b: u64) -> u64 {
        a + b
    }
}

impl Render for XCount {
    fn render(
        options: &[u8],
        inputs: &[(&[u8], u64, u64)],
        _: &[&[u8]],
        _: bool,
        _: bool,
    ) -> Result<swath_report::merge::Report, swath_report::error::RenderError> {
        let mut text = Vec::new();
        for (name, _, n) in inputs {
            text.extend_from_slice(options);
            text.extend_from_slice(format!(" {n} ").as_bytes());
            text.extend_from_slice(name);
            text.push(b'\n');
        }
        Ok(swath_report::merge::Report {
            text,
            page: None,
            malformed: 0,
        })
    }
}

/// The entry of this report in a table of reports.
static X_COUNT: Kind<XCount> = Kind::new();

/// The table of reports with this one registered: one line.
fn reports() -> Vec<&'static dyn AnyReport> {
    let mut r = REPORTS.to_vec();
    r.push(&X_COUNT);
    r
}

/// Ranges from cut points anywhere (mid-line, one byte long, empty).
fn ranges(len: u64, cuts: &[u64]) -> Vec<(u64, u64)> {
    let mut at: Vec<u64> = cuts.iter().map(|c| c % (len + 1)).collect();
    at.extend([0, len]);
    at.sort_unstable();
    at.dedup();
    if at.len() == 1 {
        return vec![(0, 0)];
    }
    at.windows(2).map(|w| (w[0], w[1])).collect()
}

/// The report printed for one input named `f` holding `n` bytes `x`.
fn printed(n: usize) -> Vec<u8> {
    format!("x-count {n} f\n").into_bytes()
}

/// A refusal to print, with its message: the partial it is about and the line printed.
fn said(
    r: Result<swath_report::merge::Report, (Option<usize>, swath_report::error::RenderError)>,
) -> (Option<usize>, String) {
    let (k, e) = r.unwrap_err();
    (k, e.to_string())
}

/// Text over a few bytes, `x` among them, lines of any length.
fn text() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![Just(b'x'), Just(b'y'), Just(b'\n'), Just(b' ')],
        0..3000,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn pieces_of_any_cuts_merge_in_any_order_and_print_the_whole(
        data in text(),
        cuts in proptest::collection::vec(any::<u64>(), 0..6),
        order in proptest::collection::vec(any::<u32>(), 8),
        threads in prop_oneof![Just(0i64), Just(1), Just(3)],
        block in prop_oneof![Just(1usize << 12), Just(1 << 16)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, &data).unwrap();
        let input = Input::open_ranged(&path).unwrap();
        let engine = EngineOptions {
            threads: swath_engine::Threads::from_count(threads),
            block_size: Some(block),
            ..EngineOptions::default()
        };
        let len = data.len() as u64;
        let of = PieceOf { options: b"x-count", index: 0, name: b"f", len, offset: 0 };
        let want = data.iter().filter(|&&b| b == b'x').count();
        // Every piece through the one path; each reads back to its span's count.
        let mut parts: Vec<(u32, Vec<u8>, bool)> = Vec::new();
        for (k, &range) in ranges(len, &cuts).iter().enumerate() {
            let bytes = piece::<XCount>(&of, &input, range, &b'x', &engine).unwrap();
            let back = Partial::<XCount>::from_bytes(&bytes).unwrap();
            prop_assert_eq!(back.to_bytes(), bytes.clone());
            // One span at most (an empty piece of a non-empty file is not kept), holding
            // the count of its bytes.
            let spans: Vec<(u64, u64)> = back.inputs[&(0, b"f".to_vec())].spans().collect();
            prop_assert!(spans.len() <= 1);
            for &(b, f) in &spans {
                let n = data[b as usize..f as usize].iter().filter(|&&c| c == b'x').count();
                let expected = Partial::<XCount>::piece(b"x-count".to_vec(), 0, b"f".to_vec(), len, (b, f), n as u64);
                prop_assert_eq!(expected, back.clone());
            }
            // Whether it holds bytes (a piece of no line covers nothing: losing it loses
            // nothing).
            let holds = spans.iter().any(|&(b, f)| b < f);
            parts.push((order[k % order.len()].wrapping_add(k as u32), bytes, holds));
        }
        // Any order.
        parts.sort_by_key(|p| p.0);
        let holding = parts.iter().position(|p| p.2);
        let parts_held = parts;
        let parts: Vec<&[u8]> = parts_held.iter().map(|p| &p.1[..]).collect();
        let reports = reports();
        let render = |p: &[&[u8]]| render_parts_in(&reports, p, Format::Text, false);
        prop_assert_eq!(render(&parts).unwrap().text, printed(want));
        // Merged into one partial, in one step or as a tree: the same bytes, the same report.
        let merged = merge_parts_in(&reports, &parts).unwrap().unwrap();
        prop_assert_eq!(render(&[&merged]).unwrap().text, printed(want));
        let half = parts.len() / 2;
        if half > 0 {
            let left = merge_parts_in(&reports, &parts[..half]).unwrap().unwrap();
            let right = merge_parts_in(&reports, &parts[half..]).unwrap().unwrap();
            let tree = merge_parts_in(&reports, &[&right, &left]).unwrap().unwrap();
            prop_assert_eq!(&tree, &merged);
            // A piece lost (one that holds bytes), or given twice, is refused.
            if let Some(i) = holding {
                let mut rest = parts.clone();
                rest.remove(i);
                let lost = render(&rest).unwrap_err().1.to_string();
                prop_assert!(lost.contains("no partial covers"), "{}", lost);
            }
            // Bytes given twice are refused (when the left half holds any: a half of
            // pieces of no line covers nothing, and nothing is then given twice).
            if parts_held[..half].iter().any(|p| p.2) {
                let twice = render(&[&left, &merged]).unwrap_err().1.to_string();
                prop_assert!(twice.contains("are in two partials"), "{}", twice);
            } else {
                prop_assert_eq!(render(&[&left, &merged]).unwrap().text, printed(want));
            }
        }
        // The merged partial of the whole is the one the whole file makes.
        let whole = piece::<XCount>(&of, &input, (0, len), &b'x', &engine).unwrap();
        prop_assert_eq!(merged, whole);
    }
}

#[test]
fn a_kind_out_of_the_table_another_report_and_a_forged_count_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, b"xx y\nx\n").unwrap();
    let input = Input::open_ranged(&path).unwrap();
    let engine = EngineOptions::default();
    let of = PieceOf {
        options: b"x-count",
        index: 0,
        name: b"f",
        len: 7,
        offset: 0,
    };
    let x = piece::<XCount>(&of, &input, (0, 7), &b'x', &engine).unwrap();
    let reports = reports();
    assert_eq!(
        render_parts_in(&reports, &[&x], Format::Text, false)
            .unwrap()
            .text,
        printed(3)
    );
    // Left out of the table, the kind is unknown.
    let unknown = said(render_parts_in(REPORTS, &[&x], Format::Text, false));
    assert_eq!(
        unknown,
        (Some(0), "damaged partial result (unknown kind)".to_string())
    );
    assert_eq!(
        merge_parts_in(REPORTS, &[&x]).unwrap_err(),
        (0, PartialError::Damaged("unknown kind"))
    );
    // Beside a partial of another report, both are named.
    let wc = piece::<swath_ops::report::Wc>(
        &PieceOf {
            options: b"wc -l c",
            ..of
        },
        &input,
        (0, 7),
        &swath_ops::report::WcConfig {
            encoding: swath_kernels::wc::Encoding::C,
            need: swath_ops::count::Need::All,
        },
        &engine,
    )
    .unwrap();
    assert_eq!(
        merge_parts_in(&reports, &[&x, &wc]).unwrap_err(),
        (1, PartialError::Kinds("x-count", "wc"))
    );
    assert_eq!(
        said(render_parts_in(&reports, &[&wc, &x], Format::Text, false)),
        (
            Some(1),
            "partials of different reports (wc and x-count)".to_string()
        )
    );
    // JSON is not this report's.
    assert_eq!(
        said(render_parts_in(&reports, &[&x], Format::Json, false)),
        (None, "--json is for log reports, not x-count".to_string())
    );
    // A count its piece's bytes cannot make is refused by the report's own check.
    let forged = Partial::<XCount>::piece(b"x-count".to_vec(), 0, b"f".to_vec(), 7, (0, 7), 8);
    assert_eq!(
        said(render_parts_in(
            &reports,
            &[&forged.to_bytes()],
            Format::Text,
            false
        )),
        (
            Some(0),
            "damaged partial result (more x than bytes)".to_string()
        )
    );
}
