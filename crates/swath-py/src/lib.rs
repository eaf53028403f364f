//! `swath._swath`: the extension module of swath's Python package.
//!
//! The calls, each the same code the command-line tool runs (crate `swath-report`):
//!
//! - `partial(kind, path, start=0, end=None, *, index=0, **options) -> bytes`: the partial
//!   result (docs/partial-format.md) of one byte range of one file, as
//!   `swath KIND --range START:END --emit-partial OUT` writes it;
//!   `partial_of_span(kind, path, name, size, begin, *, index=0, **options)` the same for
//!   a span of a file read elsewhere (an object store) and copied to the file at `path`;
//! - `merge(parts) -> bytes`: partial results merged (any order, any tree);
//! - `render(partial, fmt="text") -> bytes` (one partial or a list): the report `swath
//!   merge` prints (`"text"`, `"json"`), or the `logs summary` page (`"html"`);
//! - `summary_cut(partials, ranges) -> (shapes, slices)`, `summary_range(slices) -> bytes`,
//!   `summary_of_ranges(shapes, ranges, fmt="text") -> bytes`: the `logs summary` merged
//!   by hash range, each range by its own task (`swath.dask`), combined exactly into the
//!   report `render` prints;
//! - `write_output(path, data)`: a file written as every swath output is (`Result.html()`).
//!
//! Every call releases the GIL while it reads or merges. Errors raise `swath.SwathError`
//! with one line naming the file and the cause.
#![deny(missing_docs)]

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict};
use swath_engine::{EngineOptions, Threads};
use swath_grep::pattern::Syntax;
use swath_grep::search::MatchOptions;
use swath_ops::search::Binary;
use swath_report::error::RenderError;
use swath_report::merge::{render_parts, Format};
use swath_report::piece::{piece, piece_of_span, Request};
use swath_report::wc::{Encoding, Selected};

pyo3::create_exception!(
    swath._swath,
    SwathError,
    pyo3::exceptions::PyException,
    "A file that cannot be read, a partial result that is damaged or does not fit the others, or an option that is not valid."
);

/// The keyword options of a call, taken one by one; any left over is an error.
struct Options<'py> {
    kind: String,
    dict: Option<Bound<'py, PyDict>>,
}

impl<'py> Options<'py> {
    fn take<T: for<'a> FromPyObjectOwned<'py>>(&self, key: &str) -> PyResult<Option<T>> {
        let Some(d) = &self.dict else {
            return Ok(None);
        };
        match d.get_item(key)? {
            None => Ok(None),
            Some(v) if v.is_none() => {
                d.del_item(key)?;
                Ok(None)
            }
            Some(v) => {
                let t = v.extract::<T>().map_err(|_| {
                    SwathError::new_err(format!(
                        "{}: option '{key}' has the wrong type ({})",
                        self.kind,
                        v.get_type()
                            .name()
                            .map(|n| n.to_string())
                            .unwrap_or_default()
                    ))
                })?;
                d.del_item(key)?;
                Ok(Some(t))
            }
        }
    }

    fn flag(&self, key: &str) -> PyResult<bool> {
        Ok(self.take::<bool>(key)?.unwrap_or(false))
    }

    /// Fails on an option no call took.
    fn done(self) -> PyResult<()> {
        if let Some(d) = &self.dict {
            if let Some((k, _)) = d.iter().next() {
                return Err(SwathError::new_err(format!(
                    "{}: unknown option '{k}'",
                    self.kind
                )));
            }
        }
        Ok(())
    }
}

/// True when the process's character type locale is UTF-8.
fn utf8_locale() -> bool {
    // SAFETY: nl_langinfo returns a pointer to a NUL-terminated string owned by the C
    // library, read at once and not kept.
    unsafe {
        let cs = libc::nl_langinfo(libc::CODESET);
        !cs.is_null() && std::ffi::CStr::from_ptr(cs).to_bytes() == b"UTF-8"
    }
}

/// The request of `kind` with its keyword options, and the engine options.
fn request(kind: &str, options: Option<&Bound<'_, PyDict>>) -> PyResult<(Request, EngineOptions)> {
    let o = Options {
        kind: kind.to_string(),
        dict: options.map(|d| d.copy()).transpose()?,
    };
    let engine = EngineOptions {
        threads: o
            .take::<i64>("threads")?
            .map_or(Threads::Auto, Threads::from_count),
        ..EngineOptions::default()
    };
    let request = match kind {
        "wc" => {
            let mut selected = Selected {
                lines: o.flag("lines")?,
                words: o.flag("words")?,
                chars: o.flag("chars")?,
                bytes: o.flag("bytes")?,
                max: o.flag("max_line_length")?,
            };
            if selected.count() == 0 {
                // wc's default: lines, words, bytes.
                (selected.lines, selected.words, selected.bytes) = (true, true, true);
            }
            let encoding = match o.take::<String>("encoding")?.as_deref() {
                None if utf8_locale() => {
                    if std::env::var_os("POSIXLY_CORRECT").is_some() {
                        Encoding::Utf8Posix
                    } else {
                        Encoding::Utf8
                    }
                }
                None | Some("c") => Encoding::C,
                Some("utf8") => Encoding::Utf8,
                Some("utf8-posix") => Encoding::Utf8Posix,
                Some(e) => {
                    return Err(SwathError::new_err(format!(
                        "wc: unknown encoding '{e}' (c, utf8 or utf8-posix)"
                    )))
                }
            };
            Request::Wc { selected, encoding }
        }
        "grep_count" => {
            let pattern: Vec<u8> = match o.take::<String>("pattern") {
                Ok(Some(p)) => p.into_bytes(),
                _ => o.take::<Vec<u8>>("pattern")?.ok_or_else(|| {
                    SwathError::new_err("grep_count: a pattern is needed (pattern=...)")
                })?,
            };
            let syntax = match o.take::<String>("syntax")?.as_deref() {
                None | Some("basic") => Syntax::Basic,
                Some("extended") => Syntax::Extended,
                Some("fixed") => Syntax::Fixed,
                Some("perl") => Syntax::Perl,
                Some(s) => {
                    return Err(SwathError::new_err(format!(
                        "grep_count: unknown syntax '{s}' (basic, extended, fixed or perl)"
                    )))
                }
            };
            let utf8 = o.take::<bool>("utf8")?.unwrap_or_else(utf8_locale);
            let match_opts = MatchOptions {
                syntax,
                ignore_case: o.flag("ignore_case")?,
                word: o.flag("word")?,
                line: o.flag("line")?,
                utf8,
                // Not UTF-8 in a locale such as zh_CN.GB18030: its characters, as GNU grep.
                multibyte: !utf8 && swath_grep::multibyte::other_multibyte_locale(),
            };
            // GNU grep: a pattern with newlines is one pattern per line.
            let patterns = pattern.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
            Request::GrepCount {
                patterns,
                match_opts,
                invert: o.flag("invert")?,
                binary: if o.flag("text")? {
                    Binary::Text
                } else {
                    Binary::Binary
                },
                with_filename: o.take::<bool>("with_filename")?,
                null_after_name: o.flag("null")?,
            }
        }
        "wf2" => Request::Wf2 {
            top: o.take::<usize>("top")?.unwrap_or(10),
            max_line: max_line(&o)?,
            article: o
                .take::<String>("article")?
                .unwrap_or_else(|| swath_report::logs::DEFAULT_ARTICLE.into()),
            self_referrer: o
                .take::<String>("self_referrer")?
                .unwrap_or_else(|| swath_report::logs::DEFAULT_SELF_REFERRER.into()),
        },
        "summary" => Request::Summary {
            top: o.take::<usize>("top")?.unwrap_or(10),
            max_line: max_line(&o)?,
            visitors_4xx: o.take::<bool>("visitors_4xx")?.unwrap_or(false),
        },
        other => {
            return Err(SwathError::new_err(format!(
                "unknown report '{other}' (wc, grep_count, wf2 or summary)"
            )))
        }
    };
    o.done()?;
    Ok((request, engine))
}

/// `max_line`: bytes, from 1 to 1 TiB (4 MiB by default, as `swath logs --max-line`).
fn max_line(o: &Options<'_>) -> PyResult<usize> {
    match o.take::<usize>("max_line")? {
        None => Ok(swath_ops::logs::DEFAULT_MAX_LINE),
        Some(n) if (1..=1 << 40).contains(&n) => Ok(n),
        Some(_) => Err(SwathError::new_err("max_line must be from 1 byte to 1 TiB")),
    }
}

/// The partial result of one byte range of one file.
///
/// `kind` is `"wc"`, `"grep_count"`, `"wf2"` or `"summary"`; the range `[start, end)` is
/// cut at line ends as Hadoop and Dask cut (a gzip log is one range: the whole file);
/// `index` is the file's position among the job's files, `name` its name in the report
/// (by default `path`). Options: for `wc`, `lines`,
/// `words`, `chars`, `bytes`, `max_line_length`, `encoding` (`"c"`, `"utf8"`,
/// `"utf8-posix"`; by default from the locale); for `grep_count`, `pattern`, `syntax`
/// (`"basic"`, `"extended"`, `"fixed"`, `"perl"`), `ignore_case`, `word`, `line`,
/// `invert`, `text`, `with_filename`, `null`, `utf8`; for `wf2`, `top`, `max_line`,
/// `article`, `self_referrer`; for `summary`, `top`, `max_line`, `visitors_4xx`; for all, `threads`.
#[pyfunction]
#[pyo3(signature = (kind, path, start=0, end=None, *, index=0, name=None, **options))]
#[allow(clippy::too_many_arguments)]
fn partial<'py>(
    py: Python<'py>,
    kind: &str,
    path: PathBuf,
    start: u64,
    end: Option<u64>,
    index: u32,
    name: Option<String>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (request, engine) = request(kind, options)?;
    let range = Some((start, end.unwrap_or(u64::MAX)));
    let name = name.as_ref().map(|n| n.as_bytes());
    let bytes = py
        .detach(|| piece(&request, &path, name, index, range, &engine))
        .map_err(|e| SwathError::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, &bytes))
}

/// The partial result of a span of a file read elsewhere and copied to the file at `path`
/// (a temporary file): bytes `[begin, begin + size of path)` of the file `name` of `size`
/// bytes, already cut at line ends (a gzip file whole). Options as for `partial`.
#[pyfunction]
#[pyo3(signature = (kind, path, name, size, begin, *, index=0, **options))]
#[allow(clippy::too_many_arguments)]
fn partial_of_span<'py>(
    py: Python<'py>,
    kind: &str,
    path: PathBuf,
    name: &str,
    size: u64,
    begin: u64,
    index: u32,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (request, engine) = request(kind, options)?;
    let bytes = py
        .detach(|| {
            piece_of_span(
                &request,
                &path,
                name.as_bytes(),
                size,
                begin,
                index,
                &engine,
            )
        })
        .map_err(|e| SwathError::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, &bytes))
}

/// Partial results merged into one (associative and commutative: any order, any tree).
/// An error names the position of the partial in `parts`; a merged partial that may not
/// fit in the memory available is refused with the figures (see `check_merge_memory`).
#[pyfunction]
fn merge<'py>(py: Python<'py>, parts: Vec<PyBackedBytes>) -> PyResult<Bound<'py, PyBytes>> {
    // The inputs are in memory already; the merged partial is at most as large.
    let total = parts.iter().map(|p| p.len() as u64).sum();
    swath_report::merge::check_merge_memory(total)
        .map_err(|e| SwathError::new_err(e.to_string()))?;
    let bytes = py
        .detach(|| {
            let parts: Vec<&[u8]> = parts.iter().map(|p| &p[..]).collect();
            swath_report::merge::merge_parts(&parts)
        })
        .map_err(|(k, e)| SwathError::new_err(format!("partial {k}: {e}")))?
        .ok_or_else(|| SwathError::new_err("no partial result given"))?;
    Ok(PyBytes::new(py, &bytes))
}

/// The report of a partial result, or of several (merged or not, in any order: the
/// report is the same), as `swath merge` prints it: `fmt` is `"text"`, `"json"` (log
/// reports) or `"html"` (the `logs summary` page). An error about one of several partials
/// names its position.
#[pyfunction]
#[pyo3(signature = (partial, fmt="text"))]
fn render<'py>(
    py: Python<'py>,
    partial: &Bound<'py, PyAny>,
    fmt: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let (format, page) = format_of(fmt)?;
    // The bytes are read where Python holds them (no copy).
    let (parts, several): (Vec<PyBackedBytes>, bool) = match partial.extract::<PyBackedBytes>() {
        Ok(one) => (vec![one], false),
        Err(_) => (partial.extract::<Vec<PyBackedBytes>>()?, true),
    };
    let bytes = py
        .detach(|| {
            let slices: Vec<&[u8]> = parts.iter().map(|p| &p[..]).collect();
            Ok(output(render_parts(&slices, format, page)?, page))
        })
        .map_err(|(k, m): (Option<usize>, RenderError)| match k {
            Some(k) if several => SwathError::new_err(format!("partial {k}: {m}")),
            _ => SwathError::new_err(m.to_string()),
        })?;
    Ok(PyBytes::new(py, &bytes))
}

/// A report's format by its name: `"text"`, `"json"`, or `"html"` (the page).
fn format_of(fmt: &str) -> PyResult<(Format, bool)> {
    Ok(match fmt {
        "text" => (Format::Text, false),
        "json" => (Format::Json, false),
        "html" => (Format::Text, true),
        other => {
            return Err(SwathError::new_err(format!(
                "unknown format '{other}' (text, json or html)"
            )))
        }
    })
}

/// What a report asked as `page` or not gives: the page, or the text.
fn output(r: swath_report::merge::Report, page: bool) -> Vec<u8> {
    if page {
        r.page.unwrap_or_default().into_bytes()
    } else {
        r.text
    }
}

/// An error about the `k`th of several inputs (`what`), or about them all.
fn error_at(what: &str) -> impl Fn((Option<usize>, RenderError)) -> PyErr + '_ {
    move |(k, m)| match k {
        Some(k) => SwathError::new_err(format!("{what} {k}: {m}")),
        None => SwathError::new_err(m.to_string()),
    }
}

/// The most hash ranges a summary is cut into (each range costs a slice of every
/// partial, and a task).
const MAX_RANGES: usize = 1 << 16;

/// `logs summary` partials cut into `ranges` hash ranges, for the summary merged by range:
/// `(shapes, slices)`, each partial's shape (its pieces and options, no tables) and one
/// slice a range, of every partial (`summary_range` merges a range's slices of every
/// call). An error names the position of the partial in `parts`.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn summary_cut<'py>(
    py: Python<'py>,
    parts: Vec<PyBackedBytes>,
    ranges: usize,
) -> PyResult<(Vec<Bound<'py, PyBytes>>, Vec<Bound<'py, PyBytes>>)> {
    if !(1..=MAX_RANGES).contains(&ranges) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "ranges must be 1 to {MAX_RANGES}, not {ranges}"
        )));
    }
    let parts: Vec<&[u8]> = parts.iter().map(|p| &p[..]).collect();
    let (shapes, slices) = py
        .detach(|| swath_report::merge::summary_cut(&parts, ranges))
        .map_err(error_at("partial"))?;
    // Each slice written once, straight into its bytes object, without the GIL: the
    // objects are new, and nothing else holds them until they are returned.
    let mut out = Vec::with_capacity(slices.ranges());
    let mut bufs = Vec::with_capacity(slices.ranges());
    for r in 0..slices.ranges() {
        let len = slices.len(r);
        // SAFETY: a new bytes object of `len` bytes (checked for failure), whose buffer
        // stays valid while `out` holds it, filled in full before Python sees it.
        unsafe {
            let p = pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), len as isize);
            let b = Bound::from_owned_ptr_or_err(py, p)?.cast_into_unchecked::<PyBytes>();
            let buf = pyo3::ffi::PyBytes_AsString(p).cast::<u8>();
            bufs.push(std::slice::from_raw_parts_mut(buf, len));
            out.push(b);
        }
    }
    py.detach(|| slices.write(&mut bufs));
    let shapes = shapes.iter().map(|s| PyBytes::new(py, s)).collect();
    Ok((shapes, out))
}

/// One hash range of the summary from its slices of every partial (`summary_cut`): its
/// top rows, distinct counts and sums, as bytes for `summary_of_ranges`.
#[pyfunction]
fn summary_range<'py>(
    py: Python<'py>,
    slices: Vec<PyBackedBytes>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = py
        .detach(|| {
            let slices: Vec<&[u8]> = slices.iter().map(|p| &p[..]).collect();
            swath_report::merge::summary_range(&slices)
        })
        .map_err(error_at("slice"))?;
    Ok(PyBytes::new(py, &bytes))
}

/// The summary of partials from their shapes and every range's result (`summary_cut`,
/// `summary_range`; the ranges in order), as `render` prints it of the partials.
#[pyfunction]
#[pyo3(signature = (shapes, ranges, fmt="text"))]
fn summary_of_ranges<'py>(
    py: Python<'py>,
    shapes: Vec<PyBackedBytes>,
    ranges: Vec<PyBackedBytes>,
    fmt: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let (format, page) = format_of(fmt)?;
    let bytes = py
        .detach(|| {
            let shapes: Vec<&[u8]> = shapes.iter().map(|p| &p[..]).collect();
            let ranges: Vec<&[u8]> = ranges.iter().map(|p| &p[..]).collect();
            swath_report::merge::summary_of_ranges(&shapes, &ranges, format, page)
                .map(|r| output(r, page))
        })
        .map_err(error_at("partial"))?;
    Ok(PyBytes::new(py, &bytes))
}

/// Writes `data` to the file `path` as every swath output is written (the command's
/// `logs summary --html` page included, `swath_engine::AtomicOutput`): replaced atomically,
/// never half-written, a new file with the umask's mode, an existing file's mode and owner
/// kept, a link written through under the kernel's `fs.protected_symlinks` rule. An error
/// names `path` and the cause.
#[pyfunction]
fn write_output(py: Python<'_>, path: PathBuf, data: PyBackedBytes) -> PyResult<()> {
    py.detach(|| {
        let out = swath_engine::AtomicOutput::create(&path)?;
        std::io::Write::write_all(&mut out.file(), &data)
            .map_err(|e| swath_engine::EngineError::io(&path, e))?;
        out.commit(false)
    })
    .map_err(|e| SwathError::new_err(e.to_string()))
}

/// The compression a file starting with `head` is in (`"gzip"`, `"zstd"`, `"xz"`,
/// `"bzip2"`), by its magic bytes (the first `MAGIC_LEN`), or `None`: such a file is
/// one range, read whole.
#[pyfunction]
fn compression(head: &[u8]) -> Option<&'static str> {
    swath_engine::source::Compression::of_magic(head).map(|c| c.name())
}

/// The module.
#[pymodule]
fn _swath(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SwathError", m.py().get_type::<SwathError>())?;
    m.add_function(wrap_pyfunction!(partial, m)?)?;
    m.add_function(wrap_pyfunction!(partial_of_span, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(render, m)?)?;
    m.add_function(wrap_pyfunction!(summary_cut, m)?)?;
    m.add_function(wrap_pyfunction!(summary_range, m)?)?;
    m.add_function(wrap_pyfunction!(summary_of_ranges, m)?)?;
    m.add_function(wrap_pyfunction!(compression, m)?)?;
    m.add_function(wrap_pyfunction!(write_output, m)?)?;
    m.add("MAGIC_LEN", swath_engine::source::MAGIC_LEN)?;
    Ok(())
}
