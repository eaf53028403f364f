//! Merged partial results and the reports they print, and the table of reports that
//! partials of any kind are read by.
//!
//! A report that merges is one type: its [`swath_ops::report::Report`] (code, name, fold,
//! state's codec and join) and its [`Render`] here (how its merged state is printed). The
//! untyped entry, for partials whose kind is read from their header (`swath merge`, the
//! Python package), is one table, [`REPORTS`], of [`Kind`]s (one line a report): adding
//! a report kind is its type and its line there.
//!
//! Partials are merged from their bytes ([`swath_ops::report::merge_bytes`]); a log report
//! is printed from its pieces' states as they lie in the partials, merged as the sorted
//! lists they are into the report's top rows ([`swath_ops::logs::streamed`]): memory is a
//! cursor per piece and the rows shown, however many distinct clients or URIs there are.
//! The partials' shapes (kind, options, which byte ranges of which inputs) are merged
//! first, so that missing, overlapping or mismatched pieces are found.

use std::marker::PhantomData;

use swath_ops::partial::{kind_code, PartialError};
use swath_ops::report::{
    merge_bytes, GrepCount, LogSummary, LogWf2, Partial, Report as ReportKind, Wc,
};

use crate::error::{OptionsProblem, RenderError};

/// How a report's merged partial is printed.
pub trait Render: ReportKind {
    /// Whether `--json` prints it (the log reports).
    const JSON: bool = false;
    /// Whether `--html` writes its page (`logs summary`).
    const PAGE: bool = false;

    /// The report of merged partials: their `options` text, each input's name, size and
    /// state (in operand order; a streamed report's states are empty shapes), and a
    /// streamed report's pieces' states as bytes (`states`, in bounded memory: none are
    /// decoded whole). `json` and `page` are asked only of a report that has them.
    fn render(
        options: &[u8],
        inputs: &[(&[u8], u64, Self::State)],
        states: &[&[u8]],
        json: bool,
        page: bool,
    ) -> Result<Report, RenderError>;
}

/// A report as the untyped entry reaches it: by the code in a partial's header.
pub trait AnyReport: Sync {
    /// The report's code ([`ReportKind::CODE`]).
    fn code(&self) -> u8;
    /// The report's name ([`ReportKind::NAME`]).
    fn name(&self) -> &'static str;
    /// Reads a partial of this report through, refusing it as its own reader would.
    fn check(&self, partial: &[u8]) -> Result<(), PartialError>;
    /// Partials of this report merged from their bytes (see [`merge_parts_in`]).
    fn merge(
        &self,
        reports: &[&dyn AnyReport],
        parts: &[&[u8]],
    ) -> Result<Option<Vec<u8>>, (usize, PartialError)>;
    /// The report of partials of this report (see [`render_parts_in`]).
    fn render(
        &self,
        reports: &[&dyn AnyReport],
        parts: &[&[u8]],
        format: Format,
        page: bool,
    ) -> Result<Report, (Option<usize>, RenderError)>;
}

/// Report `R` in a table of reports.
pub struct Kind<R>(PhantomData<fn() -> R>);

impl<R> Kind<R> {
    /// The entry of report `R`.
    pub const fn new() -> Kind<R> {
        Kind(PhantomData)
    }
}

impl<R> Default for Kind<R> {
    fn default() -> Self {
        Kind::new()
    }
}

/// Every report a partial can hold, by the code in its header: one line a report.
pub static REPORTS: &[&dyn AnyReport] = &[
    &Kind::<Wc>::new(),
    &Kind::<GrepCount>::new(),
    &Kind::<LogWf2>::new(),
    &Kind::<LogSummary>::new(),
];

/// The error a partial of another report than `name`'s (its code `code`) makes: both
/// reports named when the other is in `reports` and its partial reads (else why it does
/// not), an unknown kind otherwise.
fn other_kind(
    reports: &[&dyn AnyReport],
    name: &'static str,
    e: PartialError,
    partial: &[u8],
) -> PartialError {
    let PartialError::OtherKind(code) = e else {
        return e;
    };
    match reports.iter().find(|r| r.code() == code) {
        None => PartialError::Damaged("unknown kind"),
        Some(other) => match other.check(partial) {
            Err(e) => e,
            Ok(()) => PartialError::Kinds(name, other.name()),
        },
    }
}

/// The entry of `reports` for a partial, by the kind its header gives (after the checks
/// that come first: magic, version, length, checksum).
fn entry_of<'a>(
    reports: &[&'a dyn AnyReport],
    partial: &[u8],
) -> Result<&'a dyn AnyReport, PartialError> {
    let known = |code: u8| reports.iter().copied().find(|r| r.code() == code);
    // A known code's reader checks the rest in order; an unknown one is refused after them.
    if let Some(r) = partial.get(10).copied().and_then(known) {
        return Ok(r);
    }
    kind_code(partial)?;
    Err(PartialError::Damaged("unknown kind"))
}

impl<R: Render> AnyReport for Kind<R> {
    fn code(&self) -> u8 {
        R::CODE
    }

    fn name(&self) -> &'static str {
        R::NAME
    }

    fn check(&self, partial: &[u8]) -> Result<(), PartialError> {
        Partial::<R>::from_bytes_lazy(partial).map(|_| ())
    }

    fn merge(
        &self,
        reports: &[&dyn AnyReport],
        parts: &[&[u8]],
    ) -> Result<Option<Vec<u8>>, (usize, PartialError)> {
        merge_bytes::<R>(parts).map_err(|(k, e)| (k, other_kind(reports, R::NAME, e, parts[k])))
    }

    fn render(
        &self,
        reports: &[&dyn AnyReport],
        parts: &[&[u8]],
        format: Format,
        page: bool,
    ) -> Result<Report, (Option<usize>, RenderError)> {
        let (merged, states) = merged_shapes::<R>(reports, parts)?;
        if format == Format::Json && !R::JSON {
            return Err((None, RenderError::NoJson(R::NAME)));
        }
        if page && !R::PAGE {
            return Err((None, RenderError::NoPage(R::NAME)));
        }
        let mut inputs = Vec::with_capacity(merged.inputs.len());
        for part in merged.inputs.values() {
            let whole = part.whole().map_err(|e| (None, e.into()))?;
            inputs.push((&part.name[..], part.len, whole));
        }
        R::render(
            &merged.options,
            &inputs,
            &states,
            format == Format::Json,
            page,
        )
        .map_err(|m| (None, m))
    }
}

/// An error, with the position of the partial that caused it when one did.
type Failed = (Option<usize>, RenderError);

/// The shapes of partials of report `R` merged (how they fit together, checked), and
/// their pieces' states as bytes.
fn merged_shapes<'a, R: Render>(
    reports: &[&dyn AnyReport],
    parts: &[&'a [u8]],
) -> Result<(Partial<R>, Vec<&'a [u8]>), Failed> {
    let mut merged: Option<Partial<R>> = None;
    let mut states = Vec::new();
    for (k, &bytes) in parts.iter().enumerate() {
        let failed = |e| (Some(k), other_kind(reports, R::NAME, e, bytes).into());
        let (shape, s) = Partial::<R>::from_bytes_lazy(bytes).map_err(failed)?;
        states.extend(s);
        merged = Some(match merged {
            None => shape,
            Some(m) => m.merge(shape).map_err(|e| (Some(k), e.into()))?,
        });
    }
    Ok((merged.ok_or((None, RenderError::NoPartial))?, states))
}

/// The report of partials given as bytes (in any order, merged or not: the report is the
/// same), of any report in [`REPORTS`]: see [`render_parts_in`].
pub fn render_parts(
    parts: &[&[u8]],
    format: Format,
    page: bool,
) -> Result<Report, (Option<usize>, RenderError)> {
    render_parts_in(REPORTS, parts, format, page)
}

/// The report of partials given as bytes, of the report in `reports` that the first one's
/// header names: their shapes merged in order, their log states merged as the sorted lists
/// they are, in bounded memory. An error gives the position of the partial that caused
/// it, when one did.
pub fn render_parts_in(
    reports: &[&dyn AnyReport],
    parts: &[&[u8]],
    format: Format,
    page: bool,
) -> Result<Report, (Option<usize>, RenderError)> {
    let first = parts.first().ok_or((None, RenderError::NoPartial))?;
    let entry = entry_of(reports, first).map_err(|e| (Some(0), e.into()))?;
    entry.render(reports, parts, format, page)
}

/// Partials given as bytes, of any report in [`REPORTS`], merged into one: see
/// [`merge_parts_in`].
pub fn merge_parts(parts: &[&[u8]]) -> Result<Option<Vec<u8>>, (usize, PartialError)> {
    merge_parts_in(REPORTS, parts)
}

/// Partials given as bytes merged straight from their bytes into the bytes of the merged
/// partial ([`swath_ops::report::merge_bytes`], by the report in `reports` that the first
/// one's header names): a log report's states merged as the sorted lists they are. An
/// error gives the position of the partial that caused it; no partial gives `None`.
pub fn merge_parts_in(
    reports: &[&dyn AnyReport],
    parts: &[&[u8]],
) -> Result<Option<Vec<u8>>, (usize, PartialError)> {
    let Some(first) = parts.first() else {
        return Ok(None);
    };
    entry_of(reports, first)
        .map_err(|e| (0, e))?
        .merge(reports, parts)
}

/// A merge into a partial refused because the merged partial may not fit in memory; its
/// message gives the figures (in MiB) and says what to do instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "writing the merged partial may need {} MiB of memory, {} MiB available: print the report instead (merged in bounded memory), or merge fewer partials at a time",
    .needed >> 20,
    .available >> 20
)]
pub struct MergeMemoryError {
    /// Bytes the merged partial may need.
    pub needed: u64,
    /// Bytes of memory available.
    pub available: u64,
}

/// Refuses a merge into a partial that may not fit in memory: the merged partial is made
/// in memory and is at most as large as its inputs together (`total` bytes), so a merge
/// that could exhaust the memory available is refused with the figures, never left to be
/// killed.
pub fn check_merge_memory(total: u64) -> Result<(), MergeMemoryError> {
    match swath_engine::sysinfo::available_memory() {
        Some(m) if total > m => Err(MergeMemoryError {
            needed: total,
            available: m,
        }),
        _ => Ok(()),
    }
}

/// How a report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// As the command prints it.
    Text,
    /// As `--json` prints it (log reports only).
    Json,
}

/// A merged report: what goes to standard output, the page asked for, and the number of
/// malformed lines the log reports skipped (said on standard error after the report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Standard output's bytes.
    pub text: Vec<u8>,
    /// The self-contained HTML page of a `logs summary` (when asked).
    pub page: Option<String>,
    /// Malformed lines skipped (log reports).
    pub malformed: u64,
}

impl Render for Wc {
    fn render(
        options: &[u8],
        inputs: &[(&[u8], u64, Self::State)],
        _: &[&[u8]],
        _: bool,
        _: bool,
    ) -> Result<Report, RenderError> {
        crate::wc::render(options, inputs).map(plain)
    }
}

impl Render for GrepCount {
    fn render(
        options: &[u8],
        inputs: &[(&[u8], u64, Self::State)],
        _: &[&[u8]],
        _: bool,
        _: bool,
    ) -> Result<Report, RenderError> {
        let counts: Vec<(&[u8], u64)> = inputs.iter().map(|&(name, _, n)| (name, n)).collect();
        crate::grep::render(options, &counts).map(plain)
    }
}

/// A report with no page and no malformed lines.
fn plain(text: Vec<u8>) -> Report {
    Report {
        text,
        page: None,
        malformed: 0,
    }
}

// A log report reads its files as one log: its counts are in the pieces' states.
impl Render for LogWf2 {
    const JSON: bool = true;

    fn render(
        options: &[u8],
        _: &[(&[u8], u64, Self::State)],
        states: &[&[u8]],
        json: bool,
        _: bool,
    ) -> Result<Report, RenderError> {
        let n = crate::logs::partial_top(options, "logs wf2").ok_or(RenderError::options(
            "logs wf2",
            OptionsProblem::Missing("its --top"),
        ))?;
        let r = swath_ops::logs::streamed::wf2(states, n)?;
        Ok(Report {
            text: crate::logs::wf2(&r, json, false),
            page: None,
            malformed: r.malformed,
        })
    }
}

impl Render for LogSummary {
    const JSON: bool = true;
    const PAGE: bool = true;

    fn render(
        options: &[u8],
        _: &[(&[u8], u64, Self::State)],
        states: &[&[u8]],
        json: bool,
        page: bool,
    ) -> Result<Report, RenderError> {
        let o = SummaryOptions::of(options)?;
        let s = swath_ops::logs::streamed::summary(states, o.n, o.statics())?;
        Ok(o.report(&s, json, page))
    }
}

/// What a summary's options text says of its printing.
struct SummaryOptions {
    n: usize,
    exts: Vec<String>,
    format: String,
}

impl SummaryOptions {
    fn of(options: &[u8]) -> Result<SummaryOptions, RenderError> {
        let n = crate::logs::partial_top(options, "logs summary").ok_or(RenderError::options(
            "logs summary",
            OptionsProblem::Missing("its --top"),
        ))?;
        let exts: Vec<String> = crate::logs::partial_option(options, "static")
            .map(|s| {
                s.split(',')
                    .filter(|e| !e.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_else(swath_ops::logs::summary::default_static);
        let format = crate::logs::partial_option(options, "format-name").unwrap_or_default();
        Ok(SummaryOptions { n, exts, format })
    }

    /// The static files' rule (a W3C log's static files are told by the path before its
    /// query).
    fn statics(&self) -> swath_ops::logs::summary::Statics<'_> {
        swath_ops::logs::summary::Statics::new(&self.exts, &self.format)
    }

    /// The report printed from its panels.
    fn report(&self, s: &swath_ops::logs::summary::SummaryTop, json: bool, page: bool) -> Report {
        let value = crate::summary::model(s, &self.format);
        let text = if json {
            format!("{value:#}\n").into_bytes()
        } else {
            crate::summary::text(&value).into_bytes()
        };
        Report {
            text,
            page: page.then(|| crate::summary::html(&value, None)),
            malformed: s.numbers[swath_ops::partial::N_MALFORMED],
        }
    }
}

/// Partials cut into hash ranges ([`summary_cut`]): their shapes, and the slices, one a
/// range, to write.
pub type Cut<'a> = (Vec<Vec<u8>>, swath_ops::logs::ranged::Slices<'a>);

/// `logs summary` partials cut into `ranges` hash ranges, for the summary merged by range
/// ([`summary_range`], [`summary_of_ranges`]; `swath_ops::logs::ranged`): their shapes
/// (each partial with empty states: which pieces of which inputs, and its options), and
/// one slice a range (the options, and every partial's states cut to the range), sized,
/// to be written where they are to stay. An error gives the position of the partial
/// that caused it.
pub fn summary_cut<'a>(parts: &[&'a [u8]], ranges: usize) -> Result<Cut<'a>, Failed> {
    let mut shapes = Vec::with_capacity(parts.len());
    let mut slices: Option<swath_ops::logs::ranged::Slices<'a>> = None;
    for (k, &part) in parts.iter().enumerate() {
        let (shape, states) = Partial::<LogSummary>::from_bytes_lazy(part).map_err(|e| {
            (
                Some(k),
                other_kind(REPORTS, LogSummary::NAME, e, part).into(),
            )
        })?;
        let slices = slices.get_or_insert_with(|| {
            swath_ops::logs::ranged::Slices::new(shape.options.clone(), ranges)
        });
        if slices.options() != shape.options {
            return Err((Some(k), PartialError::Options.into()));
        }
        for s in states {
            slices.add(s).map_err(|e| (Some(k), e.into()))?;
        }
        shapes.push(shape.to_bytes());
    }
    Ok((shapes, slices.ok_or((None, RenderError::NoPartial))?))
}

/// One hash range of a summary merged and folded from its slices of every partial
/// ([`summary_cut`]): its top rows, distinct counts and sums, as bytes. An error gives
/// the position of the slice that caused it, when one did.
pub fn summary_range(slices: &[&[u8]]) -> Result<Vec<u8>, (Option<usize>, RenderError)> {
    let mut options: Option<&[u8]> = None;
    let mut states = Vec::new();
    for (k, s) in slices.iter().enumerate() {
        let (o, st) = swath_ops::logs::ranged::read_slice(s).map_err(|e| (Some(k), e.into()))?;
        if options.is_some_and(|x| x != o) {
            return Err((Some(k), PartialError::Options.into()));
        }
        options = Some(o);
        states.extend(st);
    }
    let o = SummaryOptions::of(options.ok_or((None, RenderError::NoPartial))?)
        .map_err(|e| (None, e))?;
    let top = swath_ops::logs::ranged::summary_range(&states, o.n, o.statics())
        .map_err(|e| (None, e.into()))?;
    Ok(top.to_bytes())
}

/// The summary of partials from their shapes and their ranges' results ([`summary_cut`],
/// [`summary_range`]: every range once, in range order): the report
/// [`render_parts`] prints of the partials themselves.
pub fn summary_of_ranges(
    shapes: &[&[u8]],
    ranges: &[&[u8]],
    format: Format,
    page: bool,
) -> Result<Report, (Option<usize>, RenderError)> {
    let (merged, _) = merged_shapes::<LogSummary>(REPORTS, shapes)?;
    for part in merged.inputs.values() {
        part.whole().map_err(|e| (None, e.into()))?;
    }
    let o = SummaryOptions::of(&merged.options).map_err(|e| (None, e))?;
    let tops = ranges
        .iter()
        .map(|b| swath_ops::logs::ranged::RangeTop::from_bytes(b))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| (None, e.into()))?;
    if tops.is_empty() {
        return Err((None, RenderError::NoPartial));
    }
    let s = swath_ops::logs::ranged::combine(&tops, o.n);
    Ok(o.report(&s, format == Format::Json, page))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merge_that_may_not_fit_is_refused_with_the_figures_in_mib() {
        assert_eq!(check_merge_memory(0), Ok(()));
        if let Some(m) = swath_engine::sysinfo::available_memory() {
            assert_eq!(
                check_merge_memory(u64::MAX),
                Err(MergeMemoryError {
                    needed: u64::MAX,
                    available: m
                })
            );
        }
        let e = MergeMemoryError {
            needed: (3 << 30) + 5,
            available: (1 << 30) + (1 << 20) - 1,
        };
        assert_eq!(
            e.to_string(),
            "writing the merged partial may need 3072 MiB of memory, 1024 MiB available: print the report instead (merged in bounded memory), or merge fewer partials at a time"
        );
    }
}
