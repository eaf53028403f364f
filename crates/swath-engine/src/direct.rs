//! Direct reads and reads from the page cache only: the two ways of reading that decide
//! whether a read touches the device.
//!
//! - [`open_direct`] and [`read_piece`]: `O_DIRECT` reads into page-aligned buffers
//!   ([`PageBuf`]), so cold data is not copied through the page cache (and pushes none of
//!   a file's cached pages out); a file system that refuses `O_DIRECT` (tmpfs, some FUSE
//!   and network file systems) gets buffered reads instead.
//! - [`read_cached`]: the bytes the page cache holds at an offset, never the device's
//!   (`preadv2` with `RWF_NOWAIT`).
//!
//! Users: [`crate::ahead`] (files read front to back by reader threads), and patch's
//! windows over OLD (`swath_patch::io::ColdReader`).
//!
//! A file that ends before the length the caller took for it (it shrank while read) is an
//! `UnexpectedEof` error, never a panic.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use crate::buf::{PageBuf, PAGE};

/// A second descriptor of `file`, opened for direct reads, or `None` when the file system
/// refuses them (tmpfs, some FUSE and network file systems) or the file cannot be opened
/// again. The first block is read to make sure reads work, not only the open.
pub fn open_direct(file: &File) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .ok()?;
    let mut probe = PageBuf::with_capacity(PAGE);
    match f.read_at(probe.room(), 0) {
        Ok(_) => Some(f),
        Err(_) => None,
    }
}

/// Reads `n` bytes at `at` (a multiple of [`PAGE`]) into `buf` through `direct` (a
/// descriptor from [`open_direct`]), or through `file` when there is none. Direct reads ask
/// for whole blocks; the file's end may cut the last one short, but a file shorter than
/// `at + n` is an `UnexpectedEof` error.
pub fn read_piece(
    file: &File,
    direct: Option<&File>,
    buf: &mut PageBuf,
    at: u64,
    n: usize,
) -> io::Result<()> {
    assert!(n <= buf.capacity(), "a piece larger than its buffer");
    buf.clear();
    match direct {
        Some(d) if at.is_multiple_of(PAGE as u64) => {
            let want = n.next_multiple_of(PAGE).min(buf.capacity());
            let mut got = 0usize;
            while got < n {
                // Offsets and lengths stay multiples of PAGE until the file's end.
                let room = &mut buf.room()[got..want];
                match d.read_at(room, at + got as u64) {
                    Ok(0) => break,
                    Ok(k) => {
                        got += k;
                        if !got.is_multiple_of(PAGE) {
                            break; // the end of the file
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if got < n {
                return Err(shrank());
            }
        }
        _ => file.read_exact_at(&mut buf.room()[..n], at)?,
    }
    buf.resize(n);
    Ok(())
}

fn shrank() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the file ended early (it shrank while it was read)",
    )
}

/// Reads up to `buf.len()` bytes at `at` only from the page cache (`preadv2` with
/// `RWF_NOWAIT`), front to back: `Some(n)` for the `n` bytes read before the first that
/// would have to come from the device (or the file's end), `None` when the system cannot
/// tell (an old kernel, a file system without `RWF_NOWAIT`).
pub fn read_cached(file: &File, buf: &mut [u8], at: u64) -> Option<usize> {
    let mut done = 0usize;
    while done < buf.len() {
        let rest = &mut buf[done..];
        let iov = libc::iovec {
            iov_base: rest.as_mut_ptr().cast(),
            iov_len: rest.len(),
        };
        // SAFETY: `iov` describes `rest`, which is valid for writes of its length and
        // outlives the call; the descriptor is open (borrowed from `file`).
        let n = unsafe {
            libc::preadv2(
                file.as_raw_fd(),
                &iov,
                1,
                (at + done as u64) as libc::off_t,
                libc::RWF_NOWAIT,
            )
        };
        match n {
            0 => break, // the file's end
            n if n > 0 => done += n as usize,
            _ => match io::Error::last_os_error().raw_os_error() {
                Some(libc::EAGAIN) => break,
                Some(libc::EINTR) => continue,
                _ => return None,
            },
        }
    }
    Some(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn a_piece_past_the_end_is_a_clear_error() {
        // As if the file shrank after its length was taken.
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), pattern(20_000)).unwrap();
        let mut buf = PageBuf::with_capacity(8192);
        for direct in [None, open_direct(f.as_file())] {
            let e = read_piece(f.as_file(), direct.as_ref(), &mut buf, 16384, 8192).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        }
    }

    #[test]
    fn direct_reads_fall_back_where_refused() {
        // /dev/shm is tmpfs, which refuses O_DIRECT: no descriptor, buffered reads.
        let Ok(f) = tempfile::NamedTempFile::new_in("/dev/shm") else {
            return;
        };
        std::fs::write(f.path(), pattern(10_000)).unwrap();
        let d = open_direct(f.as_file());
        let mut buf = PageBuf::with_capacity(16384);
        read_piece(f.as_file(), d.as_ref(), &mut buf, 0, 10_000).unwrap();
        assert_eq!(&buf[..], &pattern(10_000)[..]);
    }

    #[test]
    fn cached_reads_give_the_bytes_they_count() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let data = pattern(50_000);
        std::fs::write(f.path(), &data).unwrap();
        let mut buf = vec![0u8; 30_000];
        // Just written: in the page cache, unless the system cannot tell.
        if let Some(n) = read_cached(f.as_file(), &mut buf, 4096) {
            assert!(n <= 30_000);
            assert_eq!(&buf[..n], &data[4096..4096 + n]);
        }
        // Past the end: nothing.
        assert_eq!(read_cached(f.as_file(), &mut buf, 60_000).unwrap_or(0), 0);
    }
}
