//! The reports that scale out: `wc`, `grep -c`, `logs wf2` and `logs summary`, each a
//! [`Report`]: its fold (`crate::count`, `crate::search`, `crate::logs`) and its state's
//! codec (`docs/partial-format.md`).

use swath_engine::source::Span;
use swath_engine::{EngineError, EngineOptions};
use swath_grep::search::Matcher;
use swath_kernels::wc::{Encoding, Tally};

use super::Report;
use crate::count::Need;
use crate::logs::summary::{Summary, SummaryConfig};
use crate::logs::{report_span, Wf2, Wf2Config};
use crate::partial::{PartialError, SummaryTables, Wf2Tables};
use crate::search::SearchOptions;

/// The message of a count that its piece's bytes cannot make.
const TOO_MANY: PartialError =
    PartialError::Damaged("a piece's counts are more than its bytes can make");

/// `n` numbers of 8 bytes, little-endian, that are all of `b`.
fn words<const N: usize>(b: &[u8]) -> Result<[u64; N], PartialError> {
    if b.len() != 8 * N {
        return Err(PartialError::Damaged(
            "a piece's state has the wrong length",
        ));
    }
    let mut n = [0u64; N];
    for (x, c) in n.iter_mut().zip(b.chunks_exact(8)) {
        *x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
    }
    Ok(n)
}

/// `wc`: a tally per piece (the counts, and the edge state that joins the next piece's).
#[derive(Debug, Clone, Copy)]
pub struct Wc;

/// How `wc` counts a piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WcConfig {
    /// How characters are read.
    pub encoding: Encoding,
    /// What the counts asked need.
    pub need: Need,
}

impl Report for Wc {
    const CODE: u8 = 1;
    const NAME: &'static str = "wc";
    type Config<'c> = WcConfig;
    type Fold = Tally;
    type State = Tally;

    fn fold_span(
        span: Span<'_>,
        c: &WcConfig,
        engine: &EngineOptions,
    ) -> Result<Tally, EngineError> {
        let (t, _, _) = crate::count::count(span, c.encoding, c.need, engine, None)?;
        Ok(t)
    }

    fn finish(t: Tally) -> Tally {
        t
    }

    fn empty() -> Tally {
        Tally::default()
    }

    fn encode(t: &Tally, out: &mut Vec<u8>) {
        for n in t.to_numbers() {
            out.extend_from_slice(&n.to_le_bytes());
        }
    }

    fn decode(b: &[u8]) -> Result<Tally, PartialError> {
        Tally::from_numbers(words::<10>(b)?)
            .ok_or(PartialError::Damaged("a tally's flags are not valid"))
    }

    /// A tally's bytes are its span's length, and its other counts within what they can
    /// make.
    fn check(t: &Tally, span: u64) -> Result<(), PartialError> {
        match t.bytes == span && t.is_possible() {
            true => Ok(()),
            false => Err(TOO_MANY),
        }
    }

    fn join(a: Tally, b: Tally) -> Tally {
        a.merge(b)
    }
}

/// `grep -c`: the count of selected lines per piece.
#[derive(Debug, Clone, Copy)]
pub struct GrepCount;

/// How `grep -c` counts a piece: the matcher and the search's options, which must count
/// by pieces (see [`GrepCountConfig::new`]).
#[derive(Clone, Copy)]
pub struct GrepCountConfig<'c> {
    matcher: &'c Matcher,
    options: &'c SearchOptions,
}

impl<'c> GrepCountConfig<'c> {
    /// The configuration of a count by pieces; `None` for options whose answer depends on
    /// the whole file (`-m`, `--binary-files=without-match`: see
    /// [`crate::search::counts_by_piece`]).
    pub fn new(matcher: &'c Matcher, options: &'c SearchOptions) -> Option<Self> {
        crate::search::counts_by_piece(options).then_some(GrepCountConfig { matcher, options })
    }
}

impl Report for GrepCount {
    const CODE: u8 = 2;
    const NAME: &'static str = "grep -c";
    type Config<'c> = GrepCountConfig<'c>;
    type Fold = u64;
    type State = u64;

    /// The matcher's line end (`-z`: NUL).
    fn eol(c: &GrepCountConfig<'_>) -> u8 {
        c.matcher.eol()
    }

    fn fold_span(
        span: Span<'_>,
        c: &GrepCountConfig<'_>,
        engine: &EngineOptions,
    ) -> Result<u64, EngineError> {
        crate::search::count_span_of_pieces(span, c.matcher, c.options, engine)
    }

    fn finish(n: u64) -> u64 {
        n
    }

    fn empty() -> u64 {
        0
    }

    fn encode(n: &u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&n.to_le_bytes());
    }

    fn decode(b: &[u8]) -> Result<u64, PartialError> {
        Ok(words::<1>(b)?[0])
    }

    /// A piece selects at most one line a byte.
    fn check(&n: &u64, span: u64) -> Result<(), PartialError> {
        match n <= span {
            true => Ok(()),
            false => Err(TOO_MANY),
        }
    }

    fn join(a: u64, b: u64) -> u64 {
        a.saturating_add(b)
    }
}

/// `logs wf2`: the Wide Finder 2 tables per piece, in full.
#[derive(Debug, Clone, Copy)]
pub struct LogWf2;

impl Report for LogWf2 {
    const CODE: u8 = 3;
    const NAME: &'static str = "logs wf2";
    const STREAMED: bool = true;
    type Config<'c> = Wf2Config;
    type Fold = Wf2;
    type State = Wf2Tables;

    fn fold_span(
        span: Span<'_>,
        config: &Wf2Config,
        engine: &EngineOptions,
    ) -> Result<Wf2, EngineError> {
        let mut r = Wf2::default();
        report_span(span, config, engine, None, &mut r)?;
        Ok(r)
    }

    /// The tables, read back from their bytes (the partial's path writes the hash tables
    /// straight: [`Report::encode_fold`]).
    fn finish(r: Wf2) -> Wf2Tables {
        let mut b = Vec::new();
        r.encode_state(&mut b);
        Wf2Tables::decode(&b).expect("tables read back as written")
    }

    fn encode_fold(r: Wf2, out: &mut Vec<u8>) {
        r.encode_state(out);
    }

    fn empty() -> Wf2Tables {
        Wf2Tables::default()
    }

    fn encode(t: &Wf2Tables, out: &mut Vec<u8>) {
        t.encode(out);
    }

    fn decode(b: &[u8]) -> Result<Wf2Tables, PartialError> {
        Wf2Tables::decode(b)
    }

    fn join(a: Wf2Tables, b: Wf2Tables) -> Wf2Tables {
        a.merge(b)
    }

    fn merge_encoded(states: &[&[u8]]) -> Result<Vec<u8>, PartialError> {
        crate::logs::streamed::merge_wf2_states(states)
    }
}

/// `logs summary`: the summary's tables per piece, in full.
#[derive(Debug, Clone, Copy)]
pub struct LogSummary;

impl Report for LogSummary {
    const CODE: u8 = 4;
    const NAME: &'static str = "logs summary";
    const STREAMED: bool = true;
    type Config<'c> = SummaryConfig;
    type Fold = Summary;
    type State = SummaryTables;

    fn fold_span(
        span: Span<'_>,
        config: &SummaryConfig,
        engine: &EngineOptions,
    ) -> Result<Summary, EngineError> {
        let mut s = Summary::default();
        report_span(span, config, engine, None, &mut s)?;
        Ok(s)
    }

    /// The tables, read back from their bytes (the partial's path writes the hash tables
    /// straight: [`Report::encode_fold`]).
    fn finish(s: Summary) -> SummaryTables {
        let mut b = Vec::new();
        s.encode_state(&mut b);
        SummaryTables::decode(&b).expect("tables read back as written")
    }

    fn encode_fold(s: Summary, out: &mut Vec<u8>) {
        s.encode_state(out);
    }

    fn empty() -> SummaryTables {
        SummaryTables::default()
    }

    fn encode(t: &SummaryTables, out: &mut Vec<u8>) {
        t.encode(out);
    }

    fn decode(b: &[u8]) -> Result<SummaryTables, PartialError> {
        SummaryTables::decode(b)
    }

    fn join(a: SummaryTables, b: SummaryTables) -> SummaryTables {
        a.merge(b)
    }

    fn merge_encoded(states: &[&[u8]]) -> Result<Vec<u8>, PartialError> {
        crate::logs::streamed::merge_summary_states(states)
    }
}
