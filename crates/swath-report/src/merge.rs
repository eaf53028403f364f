//! Merged partial results and the reports they print.
//!
//! A log report's pieces are not merged as sorted lists: each piece's states go straight
//! into the report's hash tables ([`Tables`]) as the piece is read (see [`read_into`]),
//! which costs less than merging the lists piece by piece; the partials' shapes (kind,
//! options, which byte ranges of which inputs) are still merged, so that missing,
//! overlapping or mismatched pieces are found. `wc` and `grep -c` pieces are small and
//! merged whole.

use swath_ops::logs::{LineReport, Summary, Wf2};
use swath_ops::partial::{Kind, Partial, PartialError, State};

/// The tables of the log reports, filled from pieces' states.
#[derive(Default)]
pub struct Tables {
    /// `logs wf2`'s tables.
    pub wf2: Wf2,
    /// `logs summary`'s tables.
    pub summary: Summary,
}

impl Tables {
    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: Tables) {
        self.wf2.merge(other.wf2);
        self.summary.merge(other.summary);
    }
}

/// Reads a partial result. With `into`, a log report's states go into its tables and the
/// partial returned holds its shape (which pieces of which inputs, without their tables);
/// without, the partial is read whole (to be merged and written again).
pub fn read_into(bytes: &[u8], into: Option<&mut Tables>) -> Result<Partial, PartialError> {
    let Some(tables) = into else {
        return Partial::from_bytes(bytes);
    };
    let (shape, states) = Partial::from_bytes_lazy(bytes)?;
    for state in states {
        match shape.kind {
            Kind::Wf2 => tables.wf2.add_state(state)?,
            Kind::Summary => tables.summary.add_state(state)?,
            _ => {}
        }
    }
    Ok(shape)
}

/// Merges partial results given in order: the merged partial (whole, to be written
/// again) or, with `tables`, its shape with the log tables filled. An error gives the
/// position of the partial that caused it. No partial gives `None`.
pub fn merge_all<'a>(
    parts: impl IntoIterator<Item = &'a [u8]>,
    mut tables: Option<&mut Tables>,
) -> Result<Option<Partial>, (usize, PartialError)> {
    let mut merged: Option<Partial> = None;
    for (k, bytes) in parts.into_iter().enumerate() {
        let p = read_into(bytes, tables.as_deref_mut()).map_err(|e| (k, e))?;
        merged = Some(match merged {
            None => p,
            Some(m) => m.merge(p).map_err(|e| (k, e))?,
        });
    }
    Ok(merged)
}

/// The report of one partial given as bytes (merged already: see
/// [`Partial::merge_bytes`]), its log states merged as the sorted lists they are, in
/// bounded memory.
pub fn render_bytes(bytes: &[u8], format: Format, page: bool) -> Result<Report, String> {
    let (shape, states) = Partial::from_bytes_lazy(bytes).map_err(|e| e.to_string())?;
    report(&shape, Logs::States(states), format, page)
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

/// Where a log report's counts are: the hash tables its pieces went into ([`read_into`]),
/// or the pieces' states themselves, merged as sorted lists in bounded memory
/// ([`swath_ops::streamed`]).
pub enum Logs<'a> {
    /// Tables filled as the partials were read.
    Tables(Box<Tables>),
    /// The states of every piece (borrowed from the partials' bytes).
    States(Vec<&'a [u8]>),
}

/// The report of a merged partial: `merged` as [`merge_all`] gives it, its log counts in
/// `logs`. `page` asks for the HTML page (`logs summary` only).
pub fn report(
    merged: &Partial,
    logs: Logs<'_>,
    format: Format,
    page: bool,
) -> Result<Report, String> {
    if format == Format::Json && !matches!(merged.kind, Kind::Wf2 | Kind::Summary) {
        return Err(format!(
            "--json is for log reports, not {}",
            merged.kind.name()
        ));
    }
    if page && merged.kind != Kind::Summary {
        return Err(format!(
            "--html is for logs summary, not {}",
            merged.kind.name()
        ));
    }
    let (mut tallies, mut counts) = (Vec::new(), Vec::new());
    for part in merged.inputs.values() {
        match part.whole().map_err(|e| e.to_string())? {
            State::Wc(t) => tallies.push((&part.name[..], part.len, t)),
            State::GrepCount(n) => counts.push((&part.name[..], n)),
            // A log report reads its files as one log; its counts are in `logs`.
            State::Wf2(_) | State::Summary(_) => {}
        }
    }
    let json = format == Format::Json;
    let plain = |text| Report {
        text,
        page: None,
        malformed: 0,
    };
    match merged.kind {
        Kind::Wc => crate::wc::render(&merged.options, &tallies).map(plain),
        Kind::GrepCount => crate::grep::render(&merged.options, &counts).map(plain),
        Kind::Wf2 => {
            let n = crate::logs::partial_top(&merged.options, "logs wf2")
                .ok_or("a logs wf2 partial without its --top")?;
            let r = match logs {
                Logs::Tables(t) => t.wf2.ranked(n),
                Logs::States(s) => swath_ops::streamed::wf2(&s, n).map_err(|e| e.to_string())?,
            };
            Ok(Report {
                text: crate::logs::wf2(&r, json, false),
                page: None,
                malformed: r.malformed,
            })
        }
        Kind::Summary => {
            let n = crate::logs::partial_top(&merged.options, "logs summary")
                .ok_or("a logs summary partial without its --top")?;
            let s = match logs {
                Logs::Tables(t) => t.summary.ranked(n),
                Logs::States(s) => {
                    swath_ops::streamed::summary(&s, n).map_err(|e| e.to_string())?
                }
            };
            let value = crate::logs::summary_json(&s);
            let text = if json {
                format!("{value:#}\n").into_bytes()
            } else {
                crate::logs::summary_text(&s).into_bytes()
            };
            Ok(Report {
                text,
                page: page.then(|| crate::logs::summary_html(&value)),
                malformed: s.malformed,
            })
        }
    }
}
