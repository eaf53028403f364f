//! Copying a file: a reflink where the filesystem shares extents (nothing is copied), else
//! `copy_file_range` in parallel ranges (the kernel copies without a trip through user
//! space), else parallel positional reads and writes.
//!
//! Holes are kept: the output is sized first (all of it a hole), and only the input's data
//! extents (found with `SEEK_DATA`/`SEEK_HOLE`) are copied, so a sparse file stays sparse and
//! a terabyte of holes costs nothing. (`copy_file_range` alone would write holes out as
//! zeros on file systems that do not share extents.)
//!
//! The input's size and modification time are checked again once copied: a file that grew
//! or shrank meanwhile is an error ([`EngineError::Changed`]), one rewritten in place an
//! error too ([`EngineError::Modified`]), never a copy silently lacking its tail or mixing
//! old and new bytes.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use swath_engine::output::{BlockOptions, BlockWriter, Lane};
use swath_engine::{EngineError, Input};

/// How the bytes were copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyMethod {
    /// The output shares the input's extents (`FICLONE`).
    Reflink,
    /// In-kernel copy of ranges (`copy_file_range`).
    CopyFileRange,
    /// Positional reads and writes through user-space buffers.
    Pwrite,
    /// One sequential stream, for an output that is not a regular file (a device, a FIFO).
    Stream,
}

impl CopyMethod {
    /// The name `--time` prints.
    pub fn name(self) -> &'static str {
        match self {
            CopyMethod::Reflink => "reflink",
            CopyMethod::CopyFileRange => "copy_file_range",
            CopyMethod::Pwrite => "pread/pwrite",
            CopyMethod::Stream => "stream",
        }
    }
}

/// Copies all of `input` into `out` front to back: for an output that cannot be sized or
/// written at offsets (a device such as `/dev/null`, a FIFO).
pub fn copy_stream(input: &Input, out: &File, out_name: &str) -> Result<CopyMethod, EngineError> {
    let mut buf = swath_engine::buf::PageBuf::zeroed(1 << 20);
    let mut at = input.base();
    let mut out = out;
    let sequential = input.kind() != swath_engine::InputKind::Regular;
    loop {
        let n = if sequential {
            // A pipe, a device or a /proc file: read front to back.
            match io::Read::read(&mut input.file(), &mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(EngineError::io(input.name(), e)),
            }
        } else {
            input.read_full_at(&mut buf, at)?
        };
        if n == 0 {
            return Ok(CopyMethod::Stream);
        }
        io::Write::write_all(&mut out, &buf[..n]).map_err(|e| EngineError::io(out_name, e))?;
        at += n as u64;
    }
}

/// Bytes per range handed to a worker.
const RANGE: u64 = 64 << 20;

/// Copies all of `input` (a regular file) into `out`, an empty regular file.
pub fn copy_file(
    input: &Input,
    out: &File,
    out_name: &str,
    threads: usize,
) -> Result<CopyMethod, EngineError> {
    copy_file_counted(input, out, out_name, threads, &AtomicU64::new(0))
}

/// [`copy_file`], adding each range's bytes to `done` once copied (for a progress bar;
/// a reflink is done at once, ranges in holes are not counted).
pub fn copy_file_counted(
    input: &Input,
    out: &File,
    out_name: &str,
    threads: usize,
    done: &AtomicU64,
) -> Result<CopyMethod, EngineError> {
    let len = input
        .len()
        .ok_or_else(|| EngineError::io(input.name(), io::Error::from_raw_os_error(libc::ESPIPE)))?;
    // SAFETY: FICLONE takes the source descriptor as its argument; both descriptors are open.
    let cloned = input.base() == 0
        && unsafe { libc::ioctl(out.as_raw_fd(), libc::FICLONE, input.file().as_raw_fd()) } == 0;
    if cloned {
        input.check_unchanged()?;
        return Ok(CopyMethod::Reflink);
    }
    // Sized first: what is not copied (the holes) reads as zeros.
    let writer = BlockWriter::new(out, out_name, len, BlockOptions::default())?;
    let threads = threads.max(1);
    let next = AtomicU64::new(0);
    let ranges = len.div_ceil(RANGE);
    let run = |method: CopyMethod| -> Result<(), CopyError> {
        let workers = threads.min(ranges.max(1) as usize);
        writer.run(workers, |_, lane| -> Result<(), CopyError> {
            let mut buf = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= ranges {
                    return Ok(());
                }
                let start = i * RANGE;
                if let Some(end) = input.hole_at(input.base() + start) {
                    // A hole past this range: skip the ranges it covers whole (if no other
                    // worker took the next one meanwhile).
                    let past = (end - input.base()) / RANGE;
                    if past > i + 1 {
                        let _ = next.compare_exchange(
                            i + 1,
                            past,
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        );
                    }
                }
                let n = (len - start).min(RANGE);
                for_each_data(input, start, n, |start, n| match method {
                    CopyMethod::CopyFileRange => kernel_copy(input, &writer, start, n),
                    _ => user_copy(input, lane, start, n, &mut buf),
                })?;
                done.fetch_add(n, Ordering::Relaxed);
            }
        })
    };
    let method = match run(CopyMethod::CopyFileRange) {
        Ok(()) => CopyMethod::CopyFileRange,
        Err(CopyError::Unsupported) => {
            next.store(0, Ordering::Relaxed);
            done.store(0, Ordering::Relaxed);
            match run(CopyMethod::Pwrite) {
                Ok(()) => CopyMethod::Pwrite,
                Err(CopyError::Engine(e)) => return Err(e),
                Err(CopyError::Unsupported) => {
                    unreachable!("user-space copies are always supported")
                }
            }
        }
        Err(CopyError::Engine(e)) => return Err(e),
    };
    writer.finish()?;
    input.check_unchanged()?;
    Ok(method)
}

/// Calls `f(start, len)` for each stretch of data in bytes `[start, start + n)` of `input`
/// (offsets from its start), skipping holes; all of it when the file has none.
fn for_each_data(
    input: &Input,
    start: u64,
    n: u64,
    mut f: impl FnMut(u64, u64) -> Result<(), CopyError>,
) -> Result<(), CopyError> {
    let base = input.base();
    let end = start + n;
    let mut pos = start;
    while pos < end {
        if let Some(hole_end) = input.hole_at(base + pos) {
            pos = hole_end.saturating_sub(base).clamp(pos + 1, end);
            continue;
        }
        let data_end = input
            .data_end(base + pos)
            .map_or(end, |e| e.saturating_sub(base).clamp(pos + 1, end));
        f(pos, data_end - pos)?;
        pos = data_end;
    }
    Ok(())
}

enum CopyError {
    /// The kernel cannot copy between these files: fall back to user-space copies.
    Unsupported,
    Engine(EngineError),
}

impl From<EngineError> for CopyError {
    fn from(e: EngineError) -> Self {
        CopyError::Engine(e)
    }
}

/// Copies `[start, start + n)` of `input` to the same offsets of `out` in the kernel
/// (`copy_file_range`).
fn kernel_copy(input: &Input, out: &BlockWriter<'_>, start: u64, n: u64) -> Result<(), CopyError> {
    let mut done = 0u64;
    while done < n {
        let mut off_in = (input.base() + start + done) as libc::loff_t;
        let mut off_out = (start + done) as libc::loff_t;
        // SAFETY: both descriptors are open; the offsets are valid pointers to locals.
        let r = unsafe {
            libc::copy_file_range(
                input.file().as_raw_fd(),
                &mut off_in,
                out.file().as_raw_fd(),
                &mut off_out,
                (n - done) as usize,
                0,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOSYS | libc::EXDEV | libc::EINVAL | libc::EOPNOTSUPP) if done == 0 => {
                    Err(CopyError::Unsupported)
                }
                Some(libc::EINTR) => continue,
                _ => Err(EngineError::io(out.name(), e).into()),
            };
        }
        if r == 0 {
            return Err(EngineError::Shrank {
                path: input.name().into(),
                expected: input.base() + start + n,
                found: input.base() + start + done,
            }
            .into());
        }
        done += r as u64;
    }
    Ok(())
}

/// Copies `[start, start + n)` of `input` to the same offsets of the output, through `buf`
/// and `out`, a lane of its writer.
fn user_copy(
    input: &Input,
    out: &mut Lane<'_>,
    start: u64,
    n: u64,
    buf: &mut Vec<u8>,
) -> Result<(), CopyError> {
    const CHUNK: u64 = 1 << 20;
    buf.resize(CHUNK as usize, 0);
    let mut done = 0;
    while done < n {
        let m = (n - done).min(CHUNK) as usize;
        input.read_exact_at(&mut buf[..m], input.base() + start + done)?;
        out.write_at(start + done, &buf[..m])?;
        done += m as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::FileExt;

    #[test]
    fn holes_are_kept_and_bytes_copied_exactly() {
        use std::os::unix::fs::MetadataExt;
        // Data, a 1 GiB hole, data, a hole to the end; copied in ranges across them.
        let f = tempfile::NamedTempFile::new().unwrap();
        let len = (1u64 << 30) + 3 * RANGE + 5;
        f.as_file().set_len(len).unwrap();
        let pieces = [
            (0u64, 10_000usize),
            (1 << 30, 5000),
            (len - 5 - RANGE, 70_000),
        ];
        for &(at, n) in &pieces {
            let bytes: Vec<u8> = (0..n).map(|i| (i % 251) as u8 + 1).collect();
            f.as_file().write_all_at(&bytes, at).unwrap();
        }
        let input = Input::open(f.path()).unwrap();
        for threads in [1, 3] {
            let out = tempfile::NamedTempFile::new().unwrap();
            copy_file(&input, out.as_file(), "out", threads).unwrap();
            let (a, b) = (
                out.as_file().metadata().unwrap(),
                f.as_file().metadata().unwrap(),
            );
            assert_eq!(a.len(), len);
            // No more blocks than the source has (and far fewer than the size).
            assert!(
                a.blocks() <= b.blocks().max(8) * 2,
                "{} {}",
                a.blocks(),
                b.blocks()
            );
            let mut x = vec![0u8; 1 << 20];
            let mut y = vec![0u8; 1 << 20];
            for &(at, n) in &pieces {
                for probe in [at.saturating_sub(100), at, at + n as u64 - 1] {
                    let k = (len - probe).min(4096) as usize;
                    f.as_file().read_exact_at(&mut x[..k], probe).unwrap();
                    out.as_file().read_exact_at(&mut y[..k], probe).unwrap();
                    assert_eq!(x[..k], y[..k], "at {probe}");
                }
            }
        }
    }

    #[test]
    fn input_grown_during_copy_is_reported() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![7u8; 100_000]).unwrap();
        let input = Input::open(f.path()).unwrap();
        // Appended after the size was taken: the copy would lack the tail.
        f.write_all(&vec![8u8; 50_000]).unwrap();
        for threads in [1, 2] {
            let out = tempfile::NamedTempFile::new().unwrap();
            match copy_file(&input, out.as_file(), "out", threads) {
                Err(EngineError::Changed { before, after, .. }) => {
                    assert_eq!((before, after), (100_000, 150_000))
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn input_rewritten_in_place_during_copy_is_reported() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![7u8; 100_000]).unwrap();
        let input = Input::open(f.path()).unwrap();
        // Same size, other bytes, a later modification time: only the time tells.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        f.as_file().write_all_at(&[9u8; 10], 500).unwrap();
        f.as_file().set_modified(later).unwrap();
        for threads in [1, 2] {
            let out = tempfile::NamedTempFile::new().unwrap();
            match copy_file(&input, out.as_file(), "out", threads) {
                Err(EngineError::Modified { .. }) => {}
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn copies_exactly() {
        for len in [0usize, 1, 4095, (RANGE + 17) as usize] {
            let mut f = tempfile::NamedTempFile::new().unwrap();
            let data: Vec<u8> = (0..len).map(|i| (i * 31 % 253) as u8).collect();
            f.write_all(&data).unwrap();
            let input = Input::open(f.path()).unwrap();
            let out = tempfile::NamedTempFile::new().unwrap();
            copy_file(&input, out.as_file(), "out", 3).unwrap();
            assert_eq!(std::fs::read(out.path()).unwrap(), data, "len {len}");
        }
    }
}
