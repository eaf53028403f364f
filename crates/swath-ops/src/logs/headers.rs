//! Header lines that change how the lines after them are read (a W3C log's `#Fields:`, which
//! IIS writes again, maybe with other fields, each time it starts), for a log read in
//! parallel: a worker must read the first lines of its block by the header in force at the
//! block's start, and that header may lie in a block another worker takes, or before the
//! range of the file being read.
//!
//! So before the workers start, [`Headers::find`] reads the span once (memchr for a newline
//! followed by the header's first bytes: far cheaper than parsing the lines) and keeps the
//! points where the header in force changes, with the one in force at the span's start
//! (found by reading back from the start to the last header line before it). A worker looks
//! its block's start up in that list ([`Headers::at`]). Past [`MAX_CHANGES`] changes, or
//! [`MAX_CHANGE_BYTES`] of their headers (a forged log of little else), the list is not kept
//! ([`Headers::changes`] is `None`): the
//! caller then reads the span in order, carrying the header from one block to the next
//! ([`last_in`]), in memory that does not grow with the log.
//!
//! A header line longer than the bound on lines is not a header: it is a malformed line, as
//! every line over the bound is, wherever the log is cut. So the report is the one a reader
//! of one line after the other makes, for any number of threads, block size or range.

use std::sync::Arc;

use swath_engine::{EngineError, Input};

/// A header line (without its newline), shared by the workers.
pub type Header = Arc<[u8]>;

/// Changes of the header in force kept at most: a list of this many takes about 1.5 MiB
/// besides the headers, and a real log changes its header a few times a day.
pub const MAX_CHANGES: usize = 1 << 16;

/// Bytes of the headers of the changes kept at most (a forged log of long header lines).
pub const MAX_CHANGE_BYTES: usize = 64 << 20;

/// Bytes read at a time by the pre-pass.
const CHUNK: usize = 1 << 20;

/// The header lines in force across a span of a file.
#[derive(Debug, Clone)]
pub struct Headers {
    /// The header in force at the span's start (`None`: no header line before it).
    pub start: Option<Header>,
    /// Where the header in force changes: (offset from the span's start of the line after
    /// the header line, the header), by offset; `None` when there are more than
    /// [`MAX_CHANGES`], or their headers hold more than [`MAX_CHANGE_BYTES`].
    pub changes: Option<Vec<(u64, Header)>>,
}

impl Headers {
    /// The header lines of bytes `[begin, begin + len)` of `input` (offsets from its start,
    /// `begin` a line start), which start with `prefix`; a line of more than `max` bytes is
    /// not one.
    pub fn find(
        input: &Input,
        begin: u64,
        len: u64,
        prefix: &[u8],
        max: usize,
    ) -> Result<Headers, EngineError> {
        Headers::find_kept(
            input,
            (begin, len),
            prefix,
            max,
            (MAX_CHANGES, MAX_CHANGE_BYTES),
        )
    }

    /// [`Headers::find`], keeping at most `most_changes` changes and `most_bytes` bytes of
    /// their headers.
    fn find_kept(
        input: &Input,
        (begin, len): (u64, u64),
        prefix: &[u8],
        max: usize,
        (most_changes, most_bytes): (usize, usize),
    ) -> Result<Headers, EngineError> {
        let start = match begin {
            0 => None,
            _ => last_before(input, begin, prefix, max)?,
        };
        let needle = [b"\n", prefix].concat();
        let finder = memchr::memmem::Finder::new(&needle);
        let mut changes = Vec::new();
        let mut kept = 0usize;
        let mut current = start.clone();
        let mut buf = swath_engine::buf::PageBuf::zeroed(CHUNK.min(len as usize));
        // Bytes of the span before `pos` are scanned, but for the last `needle.len() - 1`,
        // read again with the next chunk (a needle across two chunks is found whole).
        let mut pos = 0u64;
        while pos < len {
            let want = buf.len().min((len - pos) as usize);
            let n = input.read_full_at(&mut buf[..want], input.base() + begin + pos)?;
            let chunk = &buf[..n];
            let first = (pos == 0 && chunk.starts_with(prefix)).then_some(0);
            let found = finder.find_iter(chunk).map(|i| i + 1);
            for at in first.into_iter().chain(found) {
                let Some(line) = line_at(input, chunk, at, begin + pos, len - pos, max)? else {
                    continue;
                };
                if current.as_deref() == Some(&line[..]) {
                    continue;
                }
                kept += line.len();
                if changes.len() == most_changes || kept > most_bytes {
                    return Ok(Headers {
                        start,
                        changes: None,
                    });
                }
                let header: Header = Arc::from(&line[..]);
                changes.push((pos + (at + line.len()) as u64 + 1, header.clone()));
                current = Some(header);
            }
            if n < want || pos + n as u64 >= len {
                break;
            }
            pos += (n - (needle.len() - 1)) as u64;
        }
        Ok(Headers {
            start,
            changes: Some(changes),
        })
    }

    /// The header in force at `at` (an offset from the span's start, at a line start), if
    /// the changes are kept.
    pub fn at(&self, at: u64) -> Option<&[u8]> {
        let changes = self.changes.as_deref().unwrap_or_default();
        match changes.partition_point(|(from, _)| *from <= at) {
            0 => self.start.as_deref(),
            k => Some(&changes[k - 1].1),
        }
    }
}

/// The line that starts at `at` of `chunk` (read from `input` at offset `origin`, with
/// `left` bytes of the span from there on), when it has at most `max` bytes: from the chunk
/// when it ends there, else read from the file.
fn line_at<'a>(
    input: &Input,
    chunk: &'a [u8],
    at: usize,
    origin: u64,
    left: u64,
    max: usize,
) -> Result<Option<std::borrow::Cow<'a, [u8]>>, EngineError> {
    let rest = &chunk[at..];
    if let Some(end) = memchr::memchr(b'\n', rest) {
        return Ok((end <= max).then_some(std::borrow::Cow::Borrowed(&rest[..end])));
    }
    if at as u64 + rest.len() as u64 >= left {
        // The span's last line, without a newline.
        return Ok((rest.len() <= max).then_some(std::borrow::Cow::Borrowed(rest)));
    }
    // The line goes on past the chunk: read it, up to one byte over the bound.
    let most = (max as u64 + 1).min(left - at as u64) as usize;
    let mut line = Vec::new();
    let mut step = 4096usize;
    while line.len() < most {
        let old = line.len();
        line.resize((old + step).min(most), 0);
        let n = input.read_full_at(&mut line[old..], input.base() + origin + (at + old) as u64)?;
        line.truncate(old + n);
        if let Some(end) = memchr::memchr(b'\n', &line[old..]) {
            line.truncate(old + end);
            return Ok((line.len() <= max).then_some(std::borrow::Cow::Owned(line)));
        }
        if n == 0 {
            break;
        }
        step = step.saturating_mul(2);
    }
    Ok((line.len() <= max).then_some(std::borrow::Cow::Owned(line)))
}

/// The last header line (starting with `prefix`, of at most `max` bytes) before `begin` (a
/// line start) in `input`, read back from `begin`.
fn last_before(
    input: &Input,
    begin: u64,
    prefix: &[u8],
    max: usize,
) -> Result<Option<Header>, EngineError> {
    let needle = [b"\n", prefix].concat();
    let mut buf = swath_engine::buf::PageBuf::zeroed(CHUNK.min(begin as usize));
    let mut hi = begin;
    loop {
        let lo = hi.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(hi - lo) as usize];
        input.read_exact_at(chunk, input.base() + lo)?;
        let chunk = &buf[..(hi - lo) as usize];
        let first = (lo == 0 && chunk.starts_with(prefix)).then_some(0);
        let found = memchr::memmem::rfind_iter(chunk, &needle).map(|i| i + 1);
        for at in found.chain(first) {
            // The line ends before `begin`: its newline is there.
            if let Some(line) = line_at(input, chunk, at, lo, begin - lo, max)? {
                return Ok(Some(Arc::from(&line[..])));
            }
        }
        if lo == 0 {
            return Ok(None);
        }
        // The next chunk back ends where a needle across the two would end.
        hi = lo + (needle.len() - 1) as u64;
    }
}

/// The last header line (starting with `prefix`, of at most `max` bytes) in `block`, a
/// block of whole lines.
pub fn last_in<'a>(block: &'a [u8], prefix: &[u8], max: usize) -> Option<&'a [u8]> {
    let needle = [b"\n", prefix].concat();
    let first = block.starts_with(prefix).then_some(0);
    memchr::memmem::rfind_iter(block, &needle)
        .map(|i| i + 1)
        .chain(first)
        .map(|at| {
            let rest = &block[at..];
            &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())]
        })
        .find(|line| line.len() <= max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The changes found, where they take effect, the header in force at the start of a
    /// range (read back from it), and the limits past which none is kept.
    #[test]
    fn changes_and_limits() {
        let log = b"#Fields: a\nx\n#Fields: a\ny\n#Fields: b\nz\n#Fields: c c c c c c c c\nw\n";
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(log).unwrap();
        let input = Input::open(f.path()).unwrap();
        let len = log.len() as u64;
        let all = Headers::find(&input, 0, len, b"#Fields:", 100).unwrap();
        let at = |h: &Headers, o: u64| h.at(o).map(|b| String::from_utf8_lossy(b).into_owned());
        let changes = all.changes.as_ref().unwrap();
        assert_eq!(changes.len(), 3, "the repeated header is no change");
        assert_eq!(at(&all, 0), None);
        assert_eq!(at(&all, 11).as_deref(), Some("#Fields: a"));
        assert_eq!(at(&all, 24).as_deref(), Some("#Fields: a"));
        assert_eq!(at(&all, 26).as_deref(), Some("#Fields: a"));
        assert_eq!(at(&all, 37).as_deref(), Some("#Fields: b"));
        // From the line `z` on, a range starts under `b`.
        let z = log.iter().position(|&c| c == b'z').unwrap() as u64;
        let tail = Headers::find(&input, z, len - z, b"#Fields:", 100).unwrap();
        assert_eq!(tail.start.as_deref(), Some(&b"#Fields: b"[..]));
        assert_eq!(at(&tail, 0).as_deref(), Some("#Fields: b"));
        // A header over the bound on lines is no header.
        let short = Headers::find(&input, z, len - z, b"#Fields:", 12).unwrap();
        assert_eq!(short.changes.as_ref().unwrap().len(), 0);
        // Past the limits, no list.
        let few = Headers::find_kept(&input, (0, len), b"#Fields:", 100, (2, 1000)).unwrap();
        assert!(few.changes.is_none());
        let small = Headers::find_kept(&input, (0, len), b"#Fields:", 100, (10, 25)).unwrap();
        assert!(small.changes.is_none());
        assert_eq!(
            last_in(log, b"#Fields:", 100),
            Some(&b"#Fields: c c c c c c c c"[..])
        );
        assert_eq!(last_in(log, b"#Fields:", 12), Some(&b"#Fields: b"[..]));
    }
}
