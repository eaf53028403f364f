//! Byte ranges of an input cut into whole lines, as Hadoop's `LineRecordReader` and Dask's
//! `read_bytes(delimiter=b"\n")` cut them, so that any split of an input into ranges gives
//! every line to exactly one range.
//!
//! The rule: a range `[start, end)` holds the lines that start at `p` with `p - 1` in the
//! range (and the line at offset 0 belongs to the range holding 0). So the range skips to
//! just after the first line end at or after `start` (when `start > 0`), and reads through
//! the first line end at or after `end`. Its *span*, the bytes it reads, always ends just
//! after a line end or at the end of the input; the spans of ranges that tile an input tile
//! it too (a range may get an empty span: one inside a long line).

use crate::error::EngineError;
use crate::input::Input;

/// How much is read at a time while looking for a line end (doubling up to 1 MiB).
const FIRST_STEP: usize = 4096;

/// The span `[begin, finish)` of the range `[start, end)` of `input`, whose lines end with
/// `delim` (`b'\n'`, or NUL for NUL-separated records). Offsets past the input's size are
/// taken as its size. The input must be a regular file.
pub fn line_span(
    input: &Input,
    start: u64,
    end: u64,
    delim: u8,
) -> Result<(u64, u64), EngineError> {
    if input.file_type().is_dir() {
        let e = std::io::Error::from_raw_os_error(libc::EISDIR);
        return Err(EngineError::io(input.path(), e));
    }
    let Some(len) = input.len().filter(|_| input.is_seekable()) else {
        return Err(EngineError::NotRanged {
            path: input.path().into(),
        });
    };
    let (start, end) = (start.min(len), end.min(len).max(start.min(len)));
    let after_end = |at: u64| -> Result<u64, EngineError> {
        Ok(next_delim(input, at, len, delim)?.map_or(len, |n| n + 1))
    };
    let begin = if start == 0 { 0 } else { after_end(start)? };
    let finish = if end >= len { len } else { after_end(end)? };
    Ok((begin, finish.max(begin)))
}

/// The offset of the first `delim` at or after `at`, reading forward in growing steps
/// (memory bounded by the step, whatever the line's length). Holes of a sparse file are
/// stepped over unread: they hold only zeros (a NUL delimiter is found at once there).
fn next_delim(input: &Input, mut at: u64, len: u64, delim: u8) -> Result<Option<u64>, EngineError> {
    let base = input.base();
    let mut step = FIRST_STEP;
    let mut buf = crate::buf::PageBuf::new();
    while at < len {
        if let Some(end) = input.hole_at(base + at) {
            if delim == 0 {
                return Ok(Some(at));
            }
            at = end.saturating_sub(base).max(at + 1);
            continue;
        }
        let want = step.min((len - at) as usize);
        let got = input.read_full_at(buf.window(base + at, want), base + at)?;
        if got == 0 {
            break;
        }
        if let Some(i) = memchr::memchr(delim, &buf.placed(base + at, want)[..got]) {
            return Ok(Some(at + i as u64));
        }
        at += got as u64;
        if step < 1 << 20 {
            step *= 2;
        }
    }
    Ok(None)
}

/// `n` even byte ranges of an input of `len` bytes (fewer when it is shorter than `n`
/// bytes; one empty range for an empty input): what `swath split --pieces N` prints.
pub fn even_ranges(len: u64, n: u64) -> Vec<(u64, u64)> {
    let n = n.clamp(1, len.max(1));
    (0..n).map(|i| (len * i / n, len * (i + 1) / n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rule stated directly: each line (by its start) goes to the range holding the byte
    /// before it; a range's span runs from its first line's start to its last line's end.
    fn oracle(data: &[u8], cuts: &[(u64, u64)]) -> Vec<Option<(u64, u64)>> {
        let mut lines = Vec::new();
        let mut s = 0usize;
        for (i, &b) in data.iter().enumerate() {
            if b == b'\n' {
                lines.push((s as u64, i as u64 + 1));
                s = i + 1;
            }
        }
        if s < data.len() {
            lines.push((s as u64, data.len() as u64));
        }
        cuts.iter()
            .map(|&(a, b)| {
                let mine: Vec<&(u64, u64)> = lines
                    .iter()
                    .filter(|(p, _)| {
                        let owner = p.saturating_sub(1);
                        if *p == 0 {
                            a == 0 && b > 0
                        } else {
                            a <= owner && owner < b
                        }
                    })
                    .collect();
                match (mine.first(), mine.last()) {
                    (Some(f), Some(l)) => Some((f.0, l.1)),
                    _ => None,
                }
            })
            .collect()
    }

    proptest! {
        #[test]
        fn spans_give_every_line_to_one_range(
            data in proptest::collection::vec(prop_oneof![
                6 => Just(b'a'), 2 => Just(b'\n'), 1 => Just(b'\r'),
            ], 0..300),
            points in proptest::collection::vec(0u64..320, 0..8),
            pieces in 1u64..12,
        ) {
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), &data).unwrap();
            let input = Input::open(f.path()).unwrap();
            let len = data.len() as u64;
            // Arbitrary cuts (mid-line, on a newline, inside CRLF, one-byte ranges) and even
            // ones: the ranges tile [0, len).
            let mut pts: Vec<u64> = points.into_iter().map(|p| p.min(len)).collect();
            pts.extend([0, len]);
            pts.sort();
            pts.dedup();
            let arbitrary: Vec<(u64, u64)> = pts.windows(2).map(|w| (w[0], w[1])).collect();
            for cuts in [arbitrary, even_ranges(len, pieces)] {
                let want = oracle(&data, &cuts);
                let mut at = 0;
                for (&(a, b), w) in cuts.iter().zip(&want) {
                    let (s, e) = line_span(&input, a, b, b'\n').unwrap();
                    // The spans tile the input, in order.
                    prop_assert_eq!(s, at, "range {}..{}", a, b);
                    at = e;
                    match w {
                        Some(span) => prop_assert_eq!((s, e), *span, "range {}..{}", a, b),
                        None => prop_assert_eq!(s, e, "range {}..{} holds no line", a, b),
                    }
                }
                prop_assert_eq!(at, len);
            }
        }
    }

    /// A range inside a 4 GiB hole finds the line end past it without reading the hole;
    /// a directory is refused as reading it would be.
    #[test]
    fn holes_are_stepped_over_and_directories_refused() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(4 << 30).unwrap();
        {
            use std::io::Write;
            let mut w = std::fs::OpenOptions::new()
                .append(true)
                .open(f.path())
                .unwrap();
            w.write_all(b"x\ntail").unwrap();
        }
        let input = Input::open(f.path()).unwrap();
        let nl = (4u64 << 30) + 2;
        assert_eq!(line_span(&input, 0, 10, b'\n').unwrap(), (0, nl));
        assert_eq!(line_span(&input, 10, 20, b'\n').unwrap(), (nl, nl));
        assert_eq!(line_span(&input, 20, 1 << 40, b'\n').unwrap(), (nl, nl + 4));
        // NUL records: every zero of the hole ends one.
        assert_eq!(line_span(&input, 10, 20, 0).unwrap(), (11, 21));
        let d = tempfile::tempdir().unwrap();
        let dir = Input::open(d.path()).unwrap();
        let e = line_span(&dir, 0, 1, b'\n').unwrap_err().to_string();
        assert!(e.ends_with("Is a directory"), "{e}");
    }

    #[test]
    fn long_lines_and_pipes() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let mut data = vec![b'x'; 3 << 20];
        data.push(b'\n');
        data.extend_from_slice(b"tail");
        std::fs::write(f.path(), &data).unwrap();
        let input = Input::open(f.path()).unwrap();
        let n = (3 << 20) + 1;
        assert_eq!(line_span(&input, 0, 10, b'\n').unwrap(), (0, n));
        assert_eq!(line_span(&input, 10, 20, b'\n').unwrap(), (n, n));
        assert_eq!(line_span(&input, 20, 1 << 40, b'\n').unwrap(), (n, n + 4));
        assert_eq!(even_ranges(0, 4), vec![(0, 0)]);
        assert_eq!(even_ranges(3, 8), vec![(0, 1), (1, 2), (2, 3)]);
        let stdin = Input::stdin("-".into());
        if let Ok(i) = stdin {
            if !i.is_seekable() {
                assert!(matches!(
                    line_span(&i, 0, 1, b'\n'),
                    Err(EngineError::NotRanged { .. })
                ));
            }
        }
    }
}
