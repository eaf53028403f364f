//! Where the bytes of OLD come from when a patch is made or applied: one file, or (for a
//! tree) several files laid end to end in one address space, so that the matcher, the
//! section codec and the hash see one OLD whatever it is made of.
//!
//! Every read is positional ([`ReadAt::read_exact_at`]): workers on all cores read OLD at
//! once. A file in the page cache may also be mapped ([`MappedFile`]): the approximate
//! matcher, which compares NEW with OLD a few dozen bytes at a time all over OLD, then reads
//! the page cache where it lies instead of making a system call per comparison. A map
//! needs no memory of its own (its pages are the page cache's), so OLD and NEW together
//! may still exceed memory; a file read with direct I/O (larger than half the memory) is
//! not mapped.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Bytes that can be read at any offset by many threads at once.
pub trait ReadAt: Sync {
    /// Fills `buf` with the bytes at `at`; an `UnexpectedEof` error when there are fewer.
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()>;

    /// The file itself when the bytes are one whole file (so it can be read ahead, or
    /// directly: [`swath_engine::ahead`]); `None` otherwise.
    fn as_file(&self) -> Option<&File> {
        None
    }

    /// All the bytes, in memory (a slice, or a file mapped whole), when they are: readers
    /// then take slices of them instead of copying; `None` otherwise.
    fn as_bytes(&self) -> Option<&[u8]> {
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

/// A file mapped whole (through the engine's SIGBUS-guarded maps), read positionally and
/// as a slice ([`ReadAt::as_bytes`]).
pub struct MappedFile<'a> {
    file: &'a File,
    map: swath_engine::mapguard::GuardedMap,
}

impl<'a> MappedFile<'a> {
    /// The first `len` bytes of `file` mapped, or `None` when they cannot be (no guard
    /// slot left, or the map fails: positional reads serve instead).
    pub fn new(file: &'a File, name: &str, len: u64) -> Option<MappedFile<'a>> {
        let map = swath_engine::mapguard::GuardedMap::new(file, name, 0, len).ok()??;
        // Touched all over, a few lines at a time: no read-ahead around each fault.
        map.advise_random();
        Some(MappedFile { file, map })
    }

    /// Maps all its pages at once (for a file in the page cache about to be read whole).
    pub fn populate(&self) {
        self.map.populate();
    }

    /// True once a read touched a page past the file's end (the file shrank): what was
    /// read from the map is then wrong, and the make must fail.
    pub fn faulted(&self) -> bool {
        self.map.faulted()
    }
}

impl ReadAt for MappedFile<'_> {
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        // A front-to-back read copies faster from the page cache than through faults.
        FileExt::read_exact_at(self.file, buf, at)
    }

    fn as_file(&self) -> Option<&File> {
        Some(self.file)
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        Some(self.map.bytes())
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

    fn as_bytes(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        (**self).read_exact_at(buf, at)
    }

    fn as_file(&self) -> Option<&File> {
        (**self).as_file()
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        (**self).as_bytes()
    }
}

/// Bytes read only positionally, never as a slice (tests of the positional paths).
#[cfg(test)]
pub(crate) struct Unmapped<'a>(pub &'a [u8]);

#[cfg(test)]
impl ReadAt for Unmapped<'_> {
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        self.0.read_exact_at(buf, at)
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
