//! Copying a file: a reflink where the filesystem shares extents (nothing is copied), else
//! `copy_file_range` in parallel ranges (the kernel copies without a trip through user
//! space), else parallel positional reads and writes.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};

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
    let mut buf = vec![0u8; 1 << 20];
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
    let len = input
        .len()
        .ok_or_else(|| EngineError::io(input.name(), io::Error::from_raw_os_error(libc::ESPIPE)))?;
    // SAFETY: FICLONE takes the source descriptor as its argument; both descriptors are open.
    let cloned = input.base() == 0
        && unsafe { libc::ioctl(out.as_raw_fd(), libc::FICLONE, input.file().as_raw_fd()) } == 0;
    if cloned {
        return Ok(CopyMethod::Reflink);
    }
    out.set_len(len).map_err(|e| EngineError::io(out_name, e))?;
    let threads = threads.max(1);
    let next = AtomicU64::new(0);
    let ranges = len.div_ceil(RANGE);
    let run = |method: CopyMethod| -> Result<(), CopyError> {
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads.min(ranges.max(1) as usize))
                .map(|_| {
                    s.spawn(|| -> Result<(), CopyError> {
                        let mut buf = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= ranges {
                                return Ok(());
                            }
                            let start = i * RANGE;
                            let n = (len - start).min(RANGE);
                            match method {
                                CopyMethod::CopyFileRange => {
                                    kernel_copy(input, out, out_name, start, n)?
                                }
                                _ => user_copy(input, out, out_name, start, n, &mut buf)?,
                            }
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .try_for_each(|w| w.join().expect("copy worker panicked"))
        })
    };
    match run(CopyMethod::CopyFileRange) {
        Ok(()) => Ok(CopyMethod::CopyFileRange),
        Err(CopyError::Unsupported) => {
            next.store(0, Ordering::Relaxed);
            match run(CopyMethod::Pwrite) {
                Ok(()) => Ok(CopyMethod::Pwrite),
                Err(CopyError::Engine(e)) => Err(e),
                Err(CopyError::Unsupported) => {
                    unreachable!("user-space copies are always supported")
                }
            }
        }
        Err(CopyError::Engine(e)) => Err(e),
    }
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

fn kernel_copy(
    input: &Input,
    out: &File,
    out_name: &str,
    start: u64,
    n: u64,
) -> Result<(), CopyError> {
    let mut done = 0u64;
    while done < n {
        let mut off_in = (input.base() + start + done) as libc::loff_t;
        let mut off_out = (start + done) as libc::loff_t;
        // SAFETY: both descriptors are open; the offsets are valid pointers to locals.
        let r = unsafe {
            libc::copy_file_range(
                input.file().as_raw_fd(),
                &mut off_in,
                out.as_raw_fd(),
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
                _ => Err(EngineError::io(out_name, e).into()),
            };
        }
        if r == 0 {
            return Err(EngineError::Shrank {
                path: input.name().to_string(),
                expected: input.base() + start + n,
                found: input.base() + start + done,
            }
            .into());
        }
        done += r as u64;
    }
    Ok(())
}

fn user_copy(
    input: &Input,
    out: &File,
    out_name: &str,
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
        out.write_all_at(&buf[..m], start + done)
            .map_err(|e| EngineError::io(out_name, e))?;
        done += m as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

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
