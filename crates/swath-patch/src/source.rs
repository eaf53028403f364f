//! Where the bytes of OLD come from when a patch is made or applied: one file, or (for a
//! tree) several files laid end to end in one address space, so that the matcher, the
//! section codec and the hash see one OLD whatever it is made of.
//!
//! Every read is positional ([`ReadAt::read_exact_at`]): workers on all cores read OLD at
//! once, and OLD is never mapped, so OLD and NEW together may exceed memory.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Bytes that can be read at any offset by many threads at once.
pub trait ReadAt: Sync {
    /// Fills `buf` with the bytes at `at`; an `UnexpectedEof` error when there are fewer.
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()>;

    /// The file itself when the bytes are one whole file (so it can be read ahead, or
    /// directly: [`crate::io`]); `None` otherwise.
    fn as_file(&self) -> Option<&File> {
        None
    }
}

impl ReadAt for File {
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, at)
    }

    fn as_file(&self) -> Option<&File> {
        Some(self)
    }
}

impl ReadAt for [u8] {
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        let end = usize::try_from(at)
            .ok()
            .and_then(|a| a.checked_add(buf.len()).map(|e| (a, e)))
            .filter(|&(_, e)| e <= self.len());
        match end {
            Some((a, e)) => {
                buf.copy_from_slice(&self[a..e]);
                Ok(())
            }
            None => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past the end",
            )),
        }
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        (**self).read_exact_at(buf, at)
    }

    fn as_file(&self) -> Option<&File> {
        (**self).as_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_reads_like_a_file() {
        let bytes: Vec<u8> = (0..=255).collect();
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), &bytes).unwrap();
        let file = File::open(f.path()).unwrap();
        for (at, n) in [(0u64, 0usize), (0, 256), (10, 20), (250, 6), (256, 0)] {
            let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
            ReadAt::read_exact_at(&file, &mut a, at).unwrap();
            bytes[..].read_exact_at(&mut b, at).unwrap();
            assert_eq!(a, b);
        }
        for (at, n) in [(250u64, 7usize), (257, 0), (u64::MAX, 1)] {
            let mut b = vec![0u8; n];
            let e = bytes[..].read_exact_at(&mut b, at).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        }
    }
}
