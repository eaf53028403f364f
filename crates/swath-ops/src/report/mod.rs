//! Reports whose results merge: what a report computes over a piece of an input, how a
//! piece's state is written in a partial result (`docs/partial-format.md`), and how the
//! states of adjacent pieces join.
//!
//! A report is one type implementing [`Report`]: its wire code and name, the fold it runs
//! over a span of an input (on the engine, [`swath_engine::fold`]), and the codec and join
//! of its state. Everything else is generic over it: the container of pieces
//! ([`Partial`]), the one way a piece is computed ([`piece`]: the command-line tool's
//! `--emit-partial`, `swath merge` and the Python package all go through it) and the merge
//! of partials from their bytes ([`merge_bytes`]). The reports: [`Wc`], [`GrepCount`],
//! [`LogWf2`], [`LogSummary`] (in `kinds`). How merged partials are printed, and the table
//! of reports that `swath merge` reads a partial's kind from, are in `swath-report`
//! (`swath_report::merge`).

mod container;
mod kinds;

pub use container::{InputKey, InputPart, Partial};
pub use kinds::{GrepCount, GrepCountConfig, LogSummary, LogWf2, Wc, WcConfig};

use swath_engine::source::{Source, Span};
use swath_engine::{EngineError, EngineOptions, Input};

use crate::partial::{header, input_head, piece_head, seal, PartialError};

/// A report whose result over an input is the join of its results over pieces of it.
pub trait Report: Sized + 'static {
    /// The kind's code in a partial's header (`docs/partial-format.md`); one per report.
    const CODE: u8;
    /// The report's name, as the command line spells it (`swath merge`'s messages).
    const NAME: &'static str;
    /// Whether a merge leaves the pieces' states as bytes and merges them with
    /// [`Report::merge_encoded`] (states too large to decode: the log reports' tables,
    /// merged as the sorted lists they are) rather than decoding and joining them.
    const STREAMED: bool = false;

    /// What the fold reads with and nobody changes (counts asked, patterns, options).
    type Config<'c>: Sync;
    /// What a run over a piece's bytes keeps: the engine's per-worker states
    /// ([`swath_engine::Fold`], [`swath_engine::OrderedFold`]), merged when the run ends.
    type Fold: Send;
    /// One piece's state, as a partial holds it.
    type State: Clone + std::fmt::Debug + PartialEq + Send;

    /// The byte that ends a line, where ranges are cut (`swath_engine::range`).
    fn eol(_config: &Self::Config<'_>) -> u8 {
        b'\n'
    }

    /// Runs the report over the bytes of `span` (whole lines of an input).
    fn fold_span(
        span: Span<'_>,
        config: &Self::Config<'_>,
        engine: &EngineOptions,
    ) -> Result<Self::Fold, EngineError>;

    /// The state of a piece from what its run kept.
    fn finish(fold: Self::Fold) -> Self::State;

    /// Appends a piece's state straight from what its run kept (by default, as
    /// [`Report::finish`] and [`Report::encode`] write it; the log reports write their
    /// hash tables key by key, no table of owned keys built in between).
    fn encode_fold(fold: Self::Fold, out: &mut Vec<u8>) {
        Self::encode(&Self::finish(fold), out);
    }

    /// The state of no bytes.
    fn empty() -> Self::State;

    /// Appends a state's bytes.
    fn encode(state: &Self::State, out: &mut Vec<u8>);

    /// Reads a state [`Report::encode`] wrote, refusing any other bytes.
    fn decode(bytes: &[u8]) -> Result<Self::State, PartialError>;

    /// Refuses a state that a piece of `span` bytes cannot have (a count past what its
    /// bytes can make would otherwise wrap a total to a plausible one). A report whose
    /// counts cannot be held to the span (a compressed log's lines outnumber its bytes)
    /// keeps the default: any state, its counts added saturating.
    fn check(_state: &Self::State, _span: u64) -> Result<(), PartialError> {
        Ok(())
    }

    /// The state of two adjacent pieces, `left` before `right` in the file.
    fn join(left: Self::State, right: Self::State) -> Self::State;

    /// The states of adjacent pieces, in file order, merged into one state's bytes. By
    /// default decoded, joined and encoded; the log reports merge their sorted lists k
    /// ways, keys copied once (`crate::logs::streamed`).
    fn merge_encoded(states: &[&[u8]]) -> Result<Vec<u8>, PartialError> {
        let mut joined: Option<Self::State> = None;
        for s in states {
            let s = Self::decode(s)?;
            joined = Some(match joined {
                None => s,
                Some(j) => Self::join(j, s),
            });
        }
        let mut out = Vec::new();
        Self::encode(&joined.unwrap_or_else(Self::empty), &mut out);
        Ok(out)
    }
}

/// Which input a piece is of, as its partial says: the options text that must agree for
/// partials to merge, the input's position among the command's operands, its name as the
/// one-machine command shows it, its size, and where the bytes read lie in it.
#[derive(Debug, Clone, Copy)]
pub struct PieceOf<'a> {
    /// The options that change the result or its printing, as the command writes them.
    pub options: &'a [u8],
    /// The input's position among the command's operands.
    pub index: u32,
    /// Its name.
    pub name: &'a [u8],
    /// Its size in bytes.
    pub len: u64,
    /// Where the bytes read start in the input: 0, or the first byte of a span of it
    /// copied whole to a file of its own (read elsewhere; already cut at line ends).
    pub offset: u64,
}

/// The partial result of report `R` over the range `[start, end)` of `input`, as bytes:
/// the range cut at the report's line ends ([`Span::cut`], the file's own bytes, never
/// decompressed), the report run over
/// the span ([`Report::fold_span`]), the state written ([`piece_bytes`]). Every piece of
/// every report is computed here, but a compressed log, which is read whole elsewhere and
/// then written by [`piece_bytes`].
pub fn piece<R: Report>(
    of: &PieceOf<'_>,
    input: &Input,
    range: (u64, u64),
    config: &R::Config<'_>,
    engine: &EngineOptions,
) -> Result<Vec<u8>, EngineError> {
    let ((begin, finish), fold) = fold_range::<R>(input, range, config, engine)?;
    let span = (begin + of.offset, finish + of.offset);
    Ok(piece_bytes::<R>(of, span, fold))
}

/// Why a log report's piece ([`log_piece`]) could not be made.
#[derive(Debug, thiserror::Error)]
pub enum LogPieceError<E> {
    /// A compressed log asked for a range of it: it is one piece, the whole file.
    #[error("a compressed log is one range")]
    CompressedRange,
    /// Looking at the input's first bytes failed.
    #[error(transparent)]
    Source(#[from] swath_engine::source::SourceError),
    /// Reading a plain log failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The caller's reader of a compressed log failed.
    #[error("{0}")]
    Read(E),
}

/// The partial result of log report `R` over the range `range` of `input`, as bytes: a
/// plain log by [`piece`] (its lines cut at the range), a compressed one (only `whole`, the
/// range all of it) read by `read` (the caller's reader of a [`Source`], with its progress
/// and notes, folding into the state it is given) and written by [`piece_bytes`]. The one
/// path of `logs --emit-partial`, `merge`'s pieces and the Python package's.
pub fn log_piece<R, F, E>(
    of: &PieceOf<'_>,
    input: &Input,
    (range, whole): ((u64, u64), bool),
    config: &F::Config,
    engine: &EngineOptions,
    read: impl FnOnce(Source<'_>, &mut F) -> Result<(), E>,
) -> Result<Vec<u8>, LogPieceError<E>>
where
    R: for<'c> Report<Fold = F, Config<'c> = F::Config>,
    F: crate::logs::LineReport,
{
    // Only the first bytes are looked at here; a plain log's range is cut once, by `piece`.
    let source = Source::file(input).decoded()?;
    if source.codec().is_none() {
        drop(source);
        return Ok(piece::<R>(of, input, range, config, engine)?);
    }
    if !whole {
        return Err(LogPieceError::CompressedRange);
    }
    let mut fold = F::default();
    read(source, &mut fold).map_err(LogPieceError::Read)?;
    Ok(piece_bytes::<R>(of, (of.offset, of.offset + of.len), fold))
}

/// The span the range `[start, end)` of `input` is cut to, and report `R`'s run over it.
pub fn fold_range<R: Report>(
    input: &Input,
    (start, end): (u64, u64),
    config: &R::Config<'_>,
    engine: &EngineOptions,
) -> Result<((u64, u64), R::Fold), EngineError> {
    let span = Span::cut(input, start, end, R::eol(config))?;
    let fold = R::fold_span(span, config, engine)?;
    Ok((span.bounds().unwrap_or((span.offset, span.offset)), fold))
}

/// The bytes of the partial of one piece, `span` of the input `of`, whose run kept
/// `fold`: the state is written where the partial's bytes will lie, and the header put in
/// front of it (the same bytes as [`Partial::piece`] and [`Partial::to_bytes`] give).
pub fn piece_bytes<R: Report>(of: &PieceOf<'_>, span: (u64, u64), fold: R::Fold) -> Vec<u8> {
    let mut state = Vec::new();
    R::encode_fold(fold, &mut state);
    Partial::<R>::piece_bytes(of, span, state)
}

/// Partials of report `R` merged straight from their bytes into the bytes of the merged
/// partial (the bytes [`Partial::merge`] and [`Partial::to_bytes`] give), pieces that touch
/// becoming one. A streamed report's states are merged from their bytes
/// ([`Report::merge_encoded`]: the log reports' k-way merge of sorted lists, keys copied
/// once, no table built); the others are read and merged whole. An error gives the
/// position of the partial that caused it (a partial of another report:
/// [`PartialError::OtherKind`]); no partial gives `None`.
pub fn merge_bytes<R: Report>(parts: &[&[u8]]) -> Result<Option<Vec<u8>>, (usize, PartialError)> {
    let mut merged: Option<Partial<R>> = None;
    let mut raw = Vec::new();
    for (k, b) in parts.iter().enumerate() {
        let (shape, r) = Partial::<R>::parse(b, true).map_err(|e| (k, e))?;
        raw.extend(r.into_iter().map(|x| (k, x)));
        merged = Some(match merged {
            None => shape,
            Some(m) => m.merge(shape).map_err(|e| (k, e))?,
        });
    }
    let Some(merged) = merged else {
        return Ok(None);
    };
    if !R::STREAMED {
        // Read whole (small states): the shapes were the partials.
        return Ok(Some(merged.to_bytes()));
    }
    // Each merged piece gathers the states of the pieces inside it, in file order.
    raw.sort_unstable_by(|(_, a), (_, b)| {
        (a.index, a.name, a.begin).cmp(&(b.index, b.name, b.begin))
    });
    let mut out = header(R::CODE, &merged.options, merged.inputs.len());
    let mut at = 0;
    for ((index, name), part) in &merged.inputs {
        input_head(&mut out, *index, &part.name, part.len, part.pieces.len());
        for (&begin, (finish, _)) in &part.pieces {
            let from = at;
            while at < raw.len()
                && raw[at].1.index == *index
                && raw[at].1.name == &name[..]
                && raw[at].1.begin < *finish.max(&(begin + 1))
            {
                at += 1;
            }
            let states: Vec<&[u8]> = raw[from..at].iter().map(|r| r.1.state).collect();
            let state = match states[..] {
                [one] => one.to_vec(),
                _ => R::merge_encoded(&states).map_err(|e| (raw[from].0, e))?,
            };
            piece_head(&mut out, begin, *finish, &state);
        }
    }
    Ok(Some(seal(out)))
}
