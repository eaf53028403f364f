//! Merged partial results and the reports they print.
//!
//! Partials are merged from their bytes ([`swath_ops::logs::streamed::merge_bytes`]); a log report is printed
//! from its pieces' states as they lie in the partials, merged as the sorted lists they are
//! into the report's top rows ([`swath_ops::logs::streamed`]): memory is a cursor per piece and
//! the rows shown, however many distinct clients or URIs there are. The partials' shapes
//! (kind, options, which byte ranges of which inputs) are merged first, so that missing,
//! overlapping or mismatched pieces are found.

use swath_ops::partial::{Kind, Partial, State};

/// The report of partials given as bytes (in any order, merged or not: the report is the
/// same): their shapes merged in order, their log states merged as the sorted lists they
/// are, in bounded memory. An error gives the position of the partial that caused it,
/// when one did.
pub fn render_parts(
    parts: &[&[u8]],
    format: Format,
    page: bool,
) -> Result<Report, (Option<usize>, String)> {
    let mut merged: Option<Partial> = None;
    let mut states = Vec::new();
    for (k, bytes) in parts.iter().enumerate() {
        let (shape, s) = Partial::from_bytes_lazy(bytes).map_err(|e| (Some(k), e.to_string()))?;
        states.extend(s);
        merged = Some(match merged {
            None => shape,
            Some(m) => m.merge(shape).map_err(|e| (Some(k), e.to_string()))?,
        });
    }
    let merged = merged.ok_or((None, "no partial result given".to_string()))?;
    report(&merged, &states, format, page).map_err(|m| (None, m))
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

/// The report of a merged partial: `merged` is its shape (as `Partial::from_bytes_lazy`
/// reads it, or merged from such shapes), `states` its log pieces' states. `page` asks for
/// the HTML page (`logs summary` only).
pub fn report(
    merged: &Partial,
    states: &[&[u8]],
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
            // A log report reads its files as one log; its counts are in `states`.
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
            let r = swath_ops::logs::streamed::wf2(states, n).map_err(|e| e.to_string())?;
            Ok(Report {
                text: crate::logs::wf2(&r, json, false),
                page: None,
                malformed: r.malformed,
            })
        }
        Kind::Summary => {
            let n = crate::logs::partial_top(&merged.options, "logs summary")
                .ok_or("a logs summary partial without its --top")?;
            let exts: Vec<String> = crate::logs::partial_option(&merged.options, "static")
                .map(|s| {
                    s.split(',')
                        .filter(|e| !e.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_else(swath_ops::logs::summary::default_static);
            let format =
                crate::logs::partial_option(&merged.options, "format-name").unwrap_or_default();
            let s =
                swath_ops::logs::streamed::summary(states, n, &exts).map_err(|e| e.to_string())?;
            let value = crate::summary::model(&s, &format);
            let text = if json {
                format!("{value:#}\n").into_bytes()
            } else {
                crate::summary::text(&value).into_bytes()
            };
            Ok(Report {
                text,
                page: page.then(|| crate::summary::html(&value, None)),
                malformed: s.numbers[swath_ops::partial::N_MALFORMED],
            })
        }
    }
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
