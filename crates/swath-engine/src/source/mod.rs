//! Where a command's bytes come from: [`Source`], one type for a file's byte range, a
//! stream, a decompressed stream and a followed file, with one way to read its first bytes
//! ([`Source::head`], what a log's format is recognised from), one way to read it all
//! ([`Source::reading`]: blocks of a file on all cores, or a stream in order on one
//! thread) and one way to name it in errors ([`SourceError`]).
//!
//! - [`Source::File`]: a [`Span`] of an [`Input`] opened by path: all of it, the bytes
//!   from an offset, or a byte range cut at line ends by [`crate::range`]'s rule (a range
//!   owns the lines that start in it), read in blocks by the engine. Every command hands
//!   its files to the engine as a [`Span`] (`wc`, `grep`, `cmp`, `cipher`, `cp`, `logs`,
//!   the pieces of `--emit-partial`); only a log's source is ever decompressed.
//! - [`Source::Stream`]: bytes read in order (standard input, a pipe); the first ones may
//!   have been looked at already (to recognise a compression or a format), and are read
//!   again first.
//! - [`Source::Decompressed`]: what another source decompresses to ([`Compression`],
//!   recognised by the first bytes: [`Source::decoded`]); a file is read up to the size
//!   it had when opened.
//! - [`Source::Followed`]: a file followed by its name as it grows, through rotation and
//!   truncation ([`Followed`]).
//!
//! What runs over the bytes is the caller's: a fold over [`Reading::Blocks`]' job (see
//! [`mod@crate::fold`]), a reader of chunks over [`Reading::Stream`].

mod codec;
mod followed;
mod span;

use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub use codec::{decoded_head, Compression, HEAD_LEN, MAGIC_LEN};
pub use followed::{Followed, ReadNew, Refused};
pub use span::Span;

use crate::error::{os_message, EngineError};
use crate::input::Input;

/// An error while opening or reading a source: `NAME: cause`, as [`EngineError`] says it.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// Opening or reading a file through the engine.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Reading a stream (or opening a followed file's directory).
    #[error("{}: {}", name.display(), os_message(cause))]
    Read {
        /// The source as the user named it.
        name: PathBuf,
        /// The operating system's error.
        cause: io::Error,
    },
    /// Decompressing: damaged or cut-short data, or the read under it.
    #[error("{}: {}", name.display(), codec.cause(cause))]
    Decode {
        /// The source as the user named it.
        name: PathBuf,
        /// The compression it is in.
        codec: Compression,
        /// The decoder's error.
        cause: io::Error,
    },
    /// A followed name that holds what may not be followed.
    #[error("{}: {why}", name.display())]
    Refused {
        /// The file as the user named it.
        name: PathBuf,
        /// What is at the name.
        why: Refused,
    },
    /// A path to follow that names no file in a directory (`dir/`).
    #[error("{}: not a file name", name.display())]
    NotAFileName {
        /// The path as given.
        name: PathBuf,
    },
    /// A source that cannot be read as asked (a followed file decompressed).
    #[error("{}: cannot be read as a stream", name.display())]
    NotAStream {
        /// The source as the user named it.
        name: PathBuf,
    },
}

impl SourceError {
    /// The source the error concerns, as the user named it.
    pub fn path(&self) -> &Path {
        match self {
            SourceError::Engine(e) => e.path(),
            SourceError::Read { name, .. }
            | SourceError::Decode { name, .. }
            | SourceError::Refused { name, .. }
            | SourceError::NotAFileName { name }
            | SourceError::NotAStream { name } => name,
        }
    }

    /// What went wrong, without the source's name: what `Display` puts after `NAME: `.
    pub fn cause(&self) -> String {
        match self {
            SourceError::Engine(e) => e.cause(),
            SourceError::Read { cause, .. } => os_message(cause),
            SourceError::Decode { codec, cause, .. } => codec.cause(cause),
            SourceError::Refused { why, .. } => why.to_string(),
            SourceError::NotAFileName { .. } => "not a file name".into(),
            SourceError::NotAStream { .. } => "cannot be read as a stream".into(),
        }
    }
}

/// Bytes read in order from a reader, the first ones perhaps looked at already.
pub struct Stream<'a> {
    name: PathBuf,
    reader: Box<dyn Read + Send + 'a>,
    /// Bytes read ahead to look at, given again first.
    ahead: Vec<u8>,
    /// Looking ahead met the stream's end (or an error, met again when it is read).
    ended: bool,
}

/// A reader that stays at its end once it has met it: a terminal's end of input (Ctrl-D)
/// is met once, as GNU's tools meet it, though the terminal would be read again (looking
/// at a log's first lines and then reading it would otherwise take one Ctrl-D each).
struct Fused<R> {
    reader: R,
    ended: bool,
}

impl<R: Read> Read for Fused<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        let n = self.reader.read(buf)?;
        self.ended = n == 0;
        Ok(n)
    }
}

impl std::fmt::Debug for Stream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("name", &self.name)
            .field("ahead", &self.ahead.len())
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Stream<'_> {
    /// Reads ahead until `want` bytes are looked at, or the stream ends (an error ends the
    /// look, and is the caller's when `strict`; the bytes before it are kept).
    fn look(&mut self, want: usize, strict: bool) -> io::Result<&[u8]> {
        let mut done = self.ahead.len();
        if done < want && !self.ended {
            self.ahead.resize(want, 0);
            let mut failed = None;
            while done < want {
                match self.reader.read(&mut self.ahead[done..]) {
                    Ok(0) => break,
                    Ok(n) => done += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            self.ahead.truncate(done);
            self.ended = done < want;
            if let (Some(e), true) = (failed, strict) {
                return Err(e);
            }
        }
        Ok(&self.ahead[..done.min(want)])
    }
}

/// Where a source's bytes come from.
#[derive(Debug)]
pub enum Source<'a> {
    /// Bytes of a file opened by path ([`Span`]): all of it ([`Span::as_opened`]: a
    /// regular file up to its size at open, a FIFO or a device named by path to its end),
    /// or the span of a range cut by [`crate::range::line_span`].
    File(Span<'a>),
    /// Bytes read in order (standard input, a pipe).
    Stream(Stream<'a>),
    /// What `inner` decompresses to.
    Decompressed {
        /// The compressed bytes.
        inner: Box<Source<'a>>,
        /// Their compression.
        codec: Compression,
    },
    /// A file followed as it grows: each read gives what is new.
    Followed(&'a mut Followed),
}

/// How a source is read: what runs over it is the caller's.
pub enum Reading<'s> {
    /// A file read in blocks on all cores ([`Span::job`]); a FIFO or a device named by
    /// path, in order.
    Blocks(Span<'s>),
    /// Bytes in order, read on one thread.
    Stream {
        /// The bytes (decompressed, when the source is).
        reader: Box<dyn Read + Send + 's>,
        /// Names the reader's errors.
        namer: Namer,
        /// The file under a decompressed stream, which it reads up to the size the file
        /// had when it was opened.
        file: Option<&'s Input>,
    },
    /// What is new in a followed file ([`Followed::poll`]).
    Followed(&'s mut Followed),
}

/// Names the errors of a stream read from a source.
#[derive(Debug, Clone)]
pub struct Namer {
    name: PathBuf,
    codec: Option<Compression>,
}

impl Namer {
    /// The error `cause`, met reading the stream, with the source's name.
    pub fn error(&self, cause: io::Error) -> SourceError {
        let name = self.name.clone();
        match self.codec {
            Some(codec) => SourceError::Decode { name, codec, cause },
            None => SourceError::Read { name, cause },
        }
    }
}

/// The compression `input` is in, by its first bytes (`None`: plain, or not a regular
/// file).
fn compression_of(input: &Input) -> Option<Compression> {
    let len = input.len().unwrap_or(0);
    let mut head = [0u8; MAGIC_LEN];
    let n = (len.min(MAGIC_LEN as u64)) as usize;
    if n < 2 || input.read_exact_at(&mut head[..n], 0).is_err() {
        return None;
    }
    Compression::of_magic(&head[..n])
}

impl<'a> Source<'a> {
    /// All of `input` (see [`Source::decoded`] for a compressed file).
    pub fn file(input: &'a Input) -> Source<'a> {
        Source::File(Span::as_opened(input))
    }

    /// A log's range `[start, end)` of `input`, a regular file: the lines that start in it
    /// ([`Span::cut`] at newlines). A compressed file cannot be cut: it is all of it,
    /// decompressed (the caller says whether the range asked allows that). A command that
    /// reads a file's own bytes cuts it with [`Span::cut`].
    pub fn range(input: &'a Input, start: u64, end: u64) -> Result<Source<'a>, SourceError> {
        if let Some(codec) = compression_of(input) {
            return Ok(Source::Decompressed {
                inner: Box::new(Source::file(input)),
                codec,
            });
        }
        Ok(Source::File(Span::cut(input, start, end, b'\n')?))
    }

    /// The bytes of `reader`, named `name` in messages (see [`Source::decoded`]).
    pub fn stream(name: impl Into<PathBuf>, reader: impl Read + Send + 'a) -> Source<'a> {
        Source::Stream(Stream {
            name: name.into(),
            reader: Box::new(Fused {
                reader,
                ended: false,
            }),
            ahead: Vec::new(),
            ended: false,
        })
    }

    /// This source, decompressed when its first bytes are a compressed stream's: a whole
    /// file or a stream (a span of a file and a followed file are as they are). A stream
    /// is looked at ([`MAGIC_LEN`] bytes, read again first when it is read).
    pub fn decoded(mut self) -> Result<Source<'a>, SourceError> {
        let codec = match &mut self {
            Source::File(span) if span.is_all() => compression_of(span.input),
            Source::Stream(s) => {
                let name = s.name.clone();
                let magic = s
                    .look(MAGIC_LEN, true)
                    .map_err(|cause| SourceError::Read { name, cause })?;
                Compression::of_magic(magic)
            }
            _ => None,
        };
        Ok(match codec {
            Some(codec) => Source::Decompressed {
                inner: Box::new(self),
                codec,
            },
            None => self,
        })
    }

    /// Its name in messages.
    pub fn name(&self) -> &Path {
        match self {
            Source::File(span) => Path::new(span.input.name()),
            Source::Stream(s) => &s.name,
            Source::Decompressed { inner, .. } => inner.name(),
            Source::Followed(f) => f.path(),
        }
    }

    /// The compression it is decoded from (`None`: read as it is).
    pub fn codec(&self) -> Option<Compression> {
        match self {
            Source::Decompressed { codec, .. } => Some(*codec),
            _ => None,
        }
    }

    /// The bytes of a file it reads, `[begin, finish)` (a decompressed file: all of it);
    /// `None` for a stream, a followed file and a file of unknown size.
    pub fn span(&self) -> Option<(u64, u64)> {
        match self {
            Source::File(span) => span.bounds(),
            Source::Decompressed { inner, .. } => inner.span(),
            Source::Stream(_) | Source::Followed(_) => None,
        }
    }

    /// How many bytes a read of it goes through, when known before (a file read in
    /// blocks, for a progress bar): `None` for a stream or a decompressed source.
    pub fn len(&self) -> Option<u64> {
        match self {
            Source::File(span) => span.len(),
            _ => None,
        }
    }

    /// True when it is known to have no bytes to read.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Its first bytes as plain text (decoded when they start a compressed stream, as far
    /// as they go), at most [`HEAD_LEN`], what a log's format is recognised from: a file's
    /// from its start (every range of it has the format of the file), a stream's looked at
    /// (and read again first when it is read), a followed file's from the file now at its
    /// name. Empty when it has none, or they cannot be read (the read itself says why).
    pub fn head(&mut self) -> Vec<u8> {
        decoded_head(&self.raw_head())
    }

    /// Its first bytes as they are, at most [`HEAD_LEN`].
    fn raw_head(&mut self) -> Vec<u8> {
        match self {
            Source::File(Span { input, .. }) => {
                let len = input.len().unwrap_or(0).min(HEAD_LEN as u64) as usize;
                let mut raw = vec![0u8; len];
                match input.read_full_at(&mut raw, 0) {
                    Ok(n) => {
                        raw.truncate(n);
                        raw
                    }
                    Err(_) => Vec::new(),
                }
            }
            Source::Stream(s) => s
                .look(HEAD_LEN, false)
                .map(<[u8]>::to_vec)
                .unwrap_or_default(),
            Source::Decompressed { inner, .. } => inner.raw_head(),
            Source::Followed(f) => f.raw_head(),
        }
    }

    /// How to read it all: a file's blocks, or a stream (a decompressed file is read
    /// through its descriptor, from its start up to the size it had when opened).
    pub fn reading(&mut self) -> Result<Reading<'_>, SourceError> {
        match self {
            Source::File(span) => Ok(Reading::Blocks(*span)),
            Source::Stream(s) => Ok(Reading::Stream {
                namer: Namer {
                    name: s.name.clone(),
                    codec: None,
                },
                reader: Box::new(
                    io::Cursor::new(std::mem::take(&mut s.ahead)).chain(&mut s.reader),
                ),
                file: None,
            }),
            Source::Decompressed { inner, codec } => {
                let codec = *codec;
                let namer = Namer {
                    name: inner.name().to_path_buf(),
                    codec: Some(codec),
                };
                let (raw, file) = match inner.reading()? {
                    Reading::Blocks(span) => (
                        file_bytes(span).map_err(|e| namer.error(e))?,
                        Some(span.input),
                    ),
                    Reading::Stream { reader, .. } => (reader, None),
                    Reading::Followed(f) => {
                        return Err(SourceError::NotAStream {
                            name: f.path().into(),
                        })
                    }
                };
                let buffered = crate::buf::PageReader::with_capacity(1 << 20, raw);
                let reader = codec.decoder(buffered).map_err(|cause| match file {
                    // As a stream's read fails (the file's decoder says its cause).
                    None => SourceError::Read {
                        name: namer.name.clone(),
                        cause,
                    },
                    Some(_) => namer.error(cause),
                })?;
                Ok(Reading::Stream {
                    reader,
                    namer,
                    file,
                })
            }
            Source::Followed(f) => Ok(Reading::Followed(f)),
        }
    }
}

/// The bytes of `span` (all of a file up to its size at open) as a reader of its own
/// descriptor.
fn file_bytes(span: Span<'_>) -> io::Result<Box<dyn Read + Send + '_>> {
    let (begin, finish) = span.bounds().unwrap_or((span.offset, span.offset));
    let mut file = span.input.file().try_clone()?;
    io::Seek::seek(&mut file, io::SeekFrom::Start(span.input.base() + begin))?;
    Ok(Box::new(file.take(finish - begin)))
}

#[cfg(test)]
mod tests;
