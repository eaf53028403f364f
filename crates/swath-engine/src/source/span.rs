//! [`Span`]: the bytes of a file a command reads, the one way every command hands a file to
//! the engine. All of an [`Input`], the bytes from an offset (`cmp -i`) with at most a
//! limit (`cmp -n`), or the span of a range cut at line ends ([`Span::cut`], the pieces of
//! `--range` and `--emit-partial`); [`Span::job`] is the engine's job over them.

use crate::error::EngineError;
use crate::exec::{Job, Region};
use crate::input::Input;

/// Bytes of a file: from `offset`, at most `limit` of them (`None`: to its end).
#[derive(Debug, Clone, Copy)]
pub struct Span<'a> {
    /// The file.
    pub input: &'a Input,
    /// Where the bytes start.
    pub offset: u64,
    /// How many are read at most (`None`: all to the file's end).
    pub limit: Option<u64>,
}

impl<'a> Span<'a> {
    /// All of `input`, to the end the engine finds (a regular file that grows or shrinks
    /// while read is an error, `EngineError::Changed`), a FIFO or a device to its end.
    pub fn whole(input: &'a Input) -> Span<'a> {
        Span {
            input,
            offset: 0,
            limit: None,
        }
    }

    /// All of `input` as it was when opened: a regular file up to the size it had then
    /// (a log that grows meanwhile is read up to there), a FIFO or a device to its end.
    pub fn as_opened(input: &'a Input) -> Span<'a> {
        Span {
            input,
            offset: 0,
            limit: input.len(),
        }
    }

    /// Whether it is all of its file as opened ([`Span::whole`] or [`Span::as_opened`]).
    pub fn is_all(&self) -> bool {
        self.offset == 0 && (self.limit.is_none() || self.limit == self.input.len())
    }

    /// The bytes `[begin, finish)` of `input`.
    pub fn between(input: &'a Input, (begin, finish): (u64, u64)) -> Span<'a> {
        Span {
            input,
            offset: begin,
            limit: Some(finish.saturating_sub(begin)),
        }
    }

    /// The bytes of the range `[start, end)` of `input`, a regular file: the lines (ended
    /// by `eol`, `b'\n'` or NUL) that start in it, by [`crate::range::line_span`]'s rule.
    /// The file's bytes as they are: a compressed file is cut as any other (see
    /// [`super::Source::range`] for a log's range).
    pub fn cut(input: &'a Input, start: u64, end: u64, eol: u8) -> Result<Span<'a>, EngineError> {
        let span = crate::range::line_span(input, start, end, eol)?;
        Ok(Span::between(input, span))
    }

    /// Its bytes `[begin, finish)` when their end is known (a limit, or a regular file's
    /// size).
    pub fn bounds(&self) -> Option<(u64, u64)> {
        let end = match self.limit {
            Some(l) => Some(self.offset + l),
            None => self.input.len(),
        }?;
        Some((self.offset, end.max(self.offset)))
    }

    /// How many bytes it holds, when known.
    pub fn len(&self) -> Option<u64> {
        self.bounds().map(|(b, f)| f - b)
    }

    /// True when it is known to hold no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Where the engine starts reading it.
    pub fn region(&self) -> Region<'a> {
        Region {
            input: self.input,
            offset: self.offset,
        }
    }

    /// The engine's job over its bytes, in blocks on all cores.
    pub fn job(&self) -> Job<'a> {
        Job::new(vec![self.region()]).with_limit(self.limit)
    }

    /// The engine's job over spans read side by side (`cmp`): each from its offset, as many
    /// bytes as the shortest limit allows.
    pub fn job_of(spans: &[Span<'a>]) -> Job<'a> {
        let limit = spans.iter().filter_map(|s| s.limit).min();
        Job::new(spans.iter().map(Span::region).collect()).with_limit(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn input_of(bytes: &[u8]) -> (tempfile::NamedTempFile, Input) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        let input = Input::open(f.path()).unwrap();
        (f, input)
    }

    #[test]
    fn a_span_knows_its_bounds_and_the_job_reads_them() {
        let (_f, input) = input_of(b"one\ntwo\nthree\n");
        assert_eq!(Span::whole(&input).bounds(), Some((0, 14)));
        assert_eq!(Span::as_opened(&input).limit, Some(14));
        assert!(Span::as_opened(&input).is_all() && Span::whole(&input).is_all());
        assert!(!Span::between(&input, (0, 13)).is_all());
        assert_eq!(Span::between(&input, (4, 8)).len(), Some(4));
        let from = Span {
            input: &input,
            offset: 4,
            limit: None,
        };
        assert_eq!(from.bounds(), Some((4, 14)));
        let job = Span::between(&input, (4, 8)).job();
        assert_eq!((job.regions[0].offset, job.limit), (4, Some(4)));
        let pair = Span::job_of(&[Span::between(&input, (0, 9)), from]);
        assert_eq!((pair.regions.len(), pair.limit), (2, Some(9)));
    }

    #[test]
    fn a_cut_ends_at_the_end_of_line_byte_it_is_given() {
        let (_f, input) = input_of(b"a\0b\nc\0d\n");
        // Cut at newlines: the range [1, 5) reads the line starting at 4.
        let nl = Span::cut(&input, 1, 5, b'\n').unwrap();
        assert_eq!(nl.bounds(), Some((4, 8)));
        // Cut at NULs: it reads the record starting at 2 (the one at 6 is the next
        // range's: the NUL before it, at 5, is not in this one).
        let nul = Span::cut(&input, 1, 5, 0).unwrap();
        assert_eq!(nul.bounds(), Some((2, 6)));
    }

    #[test]
    fn a_compressed_file_is_cut_as_its_own_bytes() {
        // gzip's magic: a cut does not look for a codec.
        let (_f, input) = input_of(b"\x1f\x8b\x08\0\n12345\n");
        assert_eq!(
            Span::cut(&input, 1, 6, b'\n').unwrap().bounds(),
            Some((5, 11))
        );
    }
}
