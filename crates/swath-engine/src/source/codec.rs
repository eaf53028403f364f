//! Compressed sources: gzip, zstd, xz and bzip2, recognised by their first bytes (never by
//! a file's name), decoded every member, frame or stream of them; and a source's first
//! bytes as plain text ([`decoded_head`]), what a log's format is recognised from.

use std::io::{self, Read};

/// A compression a source may come in, recognised by its first bytes (never by its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// gzip (`1f 8b`), every member of a multi-member file.
    Gzip,
    /// Zstandard (`28 b5 2f fd`), every frame.
    Zstd,
    /// xz (`fd 37 7a 58 5a 00`), every stream.
    Xz,
    /// bzip2 (`BZh` and a block size digit), every stream.
    Bzip2,
}

/// The most first bytes [`Compression::of_magic`] looks at.
pub const MAGIC_LEN: usize = 6;

impl Compression {
    /// The compression whose magic bytes `head` starts with.
    pub fn of_magic(head: &[u8]) -> Option<Compression> {
        match head {
            [0x1f, 0x8b, ..] => Some(Compression::Gzip),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compression::Zstd),
            [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => Some(Compression::Xz),
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Some(Compression::Bzip2),
            _ => None,
        }
    }

    /// Its name, as messages say it.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Bzip2 => "bzip2",
        }
    }

    /// A reader of the bytes `r` decompresses to, every member, frame or stream of it.
    pub fn decoder<'a>(
        self,
        r: impl io::BufRead + Send + 'a,
    ) -> io::Result<Box<dyn Read + Send + 'a>> {
        Ok(match self {
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(r)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(r)?),
            Compression::Xz => Box::new(liblzma::bufread::XzDecoder::new_multi_decoder(r)),
            Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(r)),
        })
    }

    /// The cause of a decoding error, as `name: cause` says it: a stream cut short says
    /// so, with the compression's name.
    pub fn cause(self, e: &io::Error) -> String {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            format!("unexpected end of {} data (truncated file?)", self.name())
        } else if matches!(
            e.kind(),
            io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::Other
        ) {
            let said = e.to_string();
            let said = said
                .strip_prefix(self.name())
                .and_then(|x| x.strip_prefix(": "))
                .unwrap_or(&said);
            format!("{} data is damaged ({said})", self.name())
        } else {
            crate::error::os_message(e)
        }
    }
}

/// How many bytes of a source (decoded) its head holds: what a log's format is recognised
/// from.
pub const HEAD_LEN: usize = 64 << 10;

/// The plain text of a source's first bytes `raw` (decoded, as far as they go, when they
/// start as a compressed stream), at most [`HEAD_LEN`] bytes.
pub fn decoded_head(raw: &[u8]) -> Vec<u8> {
    let mut out = match Compression::of_magic(raw) {
        None => raw[..raw.len().min(HEAD_LEN)].to_vec(),
        Some(c) => {
            let mut out = Vec::new();
            if let Ok(d) = c.decoder(io::BufReader::new(raw)) {
                // A cut stream ends in an error: what was decoded before it is kept.
                let _ = d.take(HEAD_LEN as u64).read_to_end(&mut out);
            }
            out
        }
    };
    // Shorter than asked: the whole source, whose last line is whole even without its
    // newline.
    if out.len() < HEAD_LEN && !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out
}
