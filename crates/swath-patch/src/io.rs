//! Reading a file front to back at the speed of its device (C. Bloom's "Patcher" part 7):
//! large requests, several in flight, the work on all cores overlapped with them.
//!
//! - [`read_ahead`]: pieces of a file read in order by reader threads, `depth` requests in
//!   flight (two or more, so the device always has the next one queued), each piece handed
//!   to a worker of the current rayon pool as it arrives; the buffers are recycled, so
//!   memory is `depth * 2 + threads` pieces whatever the file's size.
//! - Direct reads ([`open_direct`]): `O_DIRECT` into page-aligned buffers, so cold data is not
//!   copied through the page cache; a filesystem that refuses `O_DIRECT` (tmpfs) gets
//!   buffered reads instead.
//! - [`Plan`]: which way to read a file, chosen from its page-cache residency: data mostly
//!   in the cache is read by the workers themselves in steps that stay in their caches
//!   (no reader thread, no extra copy); data mostly on the device is read ahead.
//! - [`frees`]: large values freed on a background thread ([`DetachedFrees`]).
//!
//! How many files are read at once is `swath_engine::memfor::IoSemaphore`'s (1 on a
//! rotational device, 2 on an SSD: [`swath_engine::sysinfo::io_threads`], or
//! `--io-threads`).
//!
//! A file that ends before the length it had when opened (it shrank while read) is an
//! `UnexpectedEof` error, never a panic.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::Mutex;

use rayon::prelude::*;

/// Alignment of direct reads' buffers, offsets and lengths: the engine's page.
pub const ALIGN: usize = swath_engine::buf::PAGE;

/// The buffers of this module: page-aligned (what `O_DIRECT` needs), their length what was
/// read into them.
pub use swath_engine::buf::PageBuf as AlignedBuf;

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
    let mut probe = AlignedBuf::with_capacity(ALIGN);
    match f.read_at(probe.room(), 0) {
        Ok(_) => Some(f),
        Err(_) => None,
    }
}

/// Reads `n` bytes at `at` (a multiple of [`ALIGN`]) into `buf` through `direct` (a
/// descriptor from [`open_direct`]), or through `file` when there is none. Direct reads ask
/// for whole blocks; the file's end may cut the last one short, but a file shorter than
/// `at + n` is an `UnexpectedEof` error.
pub fn read_piece(
    file: &File,
    direct: Option<&File>,
    buf: &mut AlignedBuf,
    at: u64,
    n: usize,
) -> io::Result<()> {
    assert!(n <= buf.capacity(), "a piece larger than its buffer");
    buf.clear();
    match direct {
        Some(d) if at.is_multiple_of(ALIGN as u64) => {
            let want = n.next_multiple_of(ALIGN).min(buf.capacity());
            let mut got = 0usize;
            while got < n {
                // Offsets and lengths stay multiples of ALIGN until the file's end.
                let room = &mut buf.room()[got..want];
                match d.read_at(room, at + got as u64) {
                    Ok(0) => break,
                    Ok(k) => {
                        got += k;
                        if !got.is_multiple_of(ALIGN) {
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

/// Positional reads of a file that may be far larger than the page cache, for a reader
/// that moves mostly forward (the matcher verifying and extending matches along OLD),
/// served from a window of the file kept in memory, so that the many small reads along a
/// match cost no system call each. A read outside the window loads a new one starting a
/// little before it: from the page cache when it holds the bytes (`RWF_NOWAIT`), 64 KiB
/// after a jump and twice the last window while the reads go on forward (up to 1 MiB), as
/// the kernel's read-ahead grows; from the device otherwise, with one direct read of
/// [`ColdReader::WINDOW`] bytes. A direct window never enters the page cache, so it pushes
/// out none of the file's cached pages (a buffered read there would evict the very pages
/// the next sections need, one after the other, when the file is a little larger than
/// memory).
pub struct ColdReader<'a> {
    file: &'a File,
    /// The file's length when it was opened (a shorter file is an error of the reads).
    len: u64,
    /// The direct descriptor, opened at the first miss (`Err(())`: refused, or the system
    /// cannot tell cached from uncached data: plain reads from then on).
    direct: Option<Result<File, ()>>,
    win: Option<AlignedBuf>,
    win_at: u64,
    /// Bytes of the next window loaded from the page cache.
    hot_len: usize,
    /// Every load counts as a miss of the page cache (tests: the files they write are in
    /// the page cache).
    #[cfg(test)]
    cold: bool,
}

impl<'a> ColdReader<'a> {
    /// Bytes loaded from the device at a miss.
    pub const WINDOW: usize = 4 << 20;
    /// Bytes loaded from the page cache: the first window after a jump, and the most.
    const HOT_FIRST: usize = 64 << 10;
    const HOT_MAX: usize = 1 << 20;
    /// Bytes a window starts before the read that loads it (backward extensions read there).
    const BEFORE: u64 = 16 << 10;

    /// Reads `file`, `len` bytes long.
    pub fn new(file: &'a File, len: u64) -> ColdReader<'a> {
        ColdReader {
            file,
            len,
            direct: None,
            win: None,
            win_at: 0,
            hot_len: Self::HOT_FIRST,
            #[cfg(test)]
            cold: false,
        }
    }

    /// The `n` bytes at `at`, from the window when it holds them, else into `buf` (resized).
    /// The caller checks that `at + n` is within the file's length.
    pub fn read<'b>(&'b mut self, buf: &'b mut Vec<u8>, at: u64, n: usize) -> io::Result<&'b [u8]> {
        if self.in_window(at, n).is_none() && n <= Self::HOT_MAX / 2 {
            self.load(at, n)?;
        }
        if let Some(k) = self.in_window(at, n) {
            return Ok(&self.win.as_ref().expect("in the window")[k..k + n]);
        }
        buf.resize(n, 0);
        self.file.read_exact_at(buf, at)?;
        Ok(buf)
    }

    /// Where `[at, at + n)` starts in the window, when the window holds all of it.
    fn in_window(&self, at: u64, n: usize) -> Option<usize> {
        let w = self.win.as_ref()?;
        let k = at.checked_sub(self.win_at)?;
        (k + n as u64 <= w.len() as u64).then_some(k as usize)
    }

    fn win_end(&self) -> u64 {
        self.win_at + self.win.as_ref().map_or(0, |w| w.len() as u64)
    }

    /// Loads a window holding `[at, at + n)`; false when the system cannot tell cached data
    /// from uncached or refuses direct reads (plain reads from then on).
    fn load(&mut self, at: u64, n: usize) -> io::Result<bool> {
        if matches!(self.direct, Some(Err(()))) {
            return Ok(false);
        }
        // Going on forward from the window: a longer one; elsewhere, a short one.
        let end = self.win_end();
        self.hot_len = if self.win.is_some()
            && at >= end.saturating_sub(Self::HOT_FIRST as u64)
            && at <= end + Self::HOT_FIRST as u64
        {
            (self.hot_len * 2).min(Self::HOT_MAX)
        } else {
            Self::HOT_FIRST
        };
        let start = at.saturating_sub(Self::BEFORE) / ALIGN as u64 * ALIGN as u64;
        let len = self.len;
        let win = self
            .win
            .get_or_insert_with(|| AlignedBuf::with_capacity(Self::WINDOW));
        self.win_at = start;
        win.clear();
        let hot = (len.saturating_sub(start)).min(self.hot_len as u64) as usize;
        #[cfg(test)]
        let cached = if self.cold {
            Some(0)
        } else {
            read_cached(self.file, &mut win.room()[..hot], start)
        };
        #[cfg(not(test))]
        let cached = read_cached(self.file, &mut win.room()[..hot], start);
        // What the cache held is enough when it covers the read: the window ends there
        // (a direct read of the whole window would read again what the cache has).
        let needed = (at - start) as usize + n;
        match cached {
            Some(got) if got >= needed => {
                win.resize(got);
                return Ok(true);
            }
            Some(_) => {}
            None => {
                self.direct = Some(Err(()));
                return Ok(false);
            }
        }
        if self.direct.is_none() {
            self.direct = Some(open_direct(self.file).ok_or(()));
        }
        let Some(Ok(direct)) = &self.direct else {
            return Ok(false);
        };
        // From the device: a quarter of the largest window after a jump, the largest
        // while the reads go on forward.
        let want = if self.hot_len == Self::HOT_FIRST {
            Self::WINDOW / 4
        } else {
            Self::WINDOW
        };
        let n = (len.saturating_sub(start)).min(want as u64) as usize;
        read_piece(self.file, Some(direct), win, start, n)?;
        Ok(true)
    }
}

/// How to read a file front to back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Read ahead by reader threads (data on the device) rather than by the workers.
    pub ahead: bool,
    /// Direct reads (only with `ahead`, and where the file system takes them).
    pub direct: bool,
    /// Requests in flight when reading ahead.
    pub depth: usize,
}

impl Plan {
    /// Workers read for themselves: data in the page cache.
    pub const HOT: Plan = Plan {
        ahead: false,
        direct: false,
        depth: 0,
    };

    /// The plan for `file[..len]`: read ahead when less than half of it is in the page
    /// cache (sampled, [`swath_engine::sysinfo::residency`]); otherwise [`Plan::HOT`].
    /// Read ahead through the cache while the file and `beside` more bytes that must stay
    /// cached with it fit in the memory available: OLD (`beside` 0) is read that way so
    /// that the matcher's later positional reads of it (verification, extension) find it
    /// there instead of reading the device a second time; NEW, read once, passes OLD's
    /// length, so it never pushes OLD out. Beyond that, direct reads with four requests in
    /// flight (a direct read has no read-ahead in the kernel behind it).
    /// `SWATH_IO=hot|ahead|direct` forces one (measurements).
    pub fn for_file(file: &File, len: u64, beside: u64) -> Plan {
        let ahead = Plan {
            ahead: true,
            direct: false,
            depth: 2,
        };
        let direct = Plan {
            ahead: true,
            direct: true,
            depth: 4,
        };
        match std::env::var("SWATH_IO").as_deref() {
            Ok("hot") => return Plan::HOT,
            Ok("ahead") => return ahead,
            Ok("direct") => return direct,
            _ => {}
        }
        match swath_engine::sysinfo::residency(file, 0, len) {
            Some(r) if r < 0.5 => {
                let available = swath_engine::sysinfo::available_memory().unwrap_or(u64::MAX);
                if len.saturating_add(beside) > available {
                    direct
                } else {
                    ahead
                }
            }
            _ => Plan::HOT,
        }
    }
}

/// Reads `file[..len]` in pieces of `piece` bytes (a multiple of [`ALIGN`]), `plan.depth`
/// (at least one) requests in flight on reader threads, and runs `work(k, bytes)` on piece
/// `k` on the current rayon pool's workers (`threads` of them) as pieces arrive. Returns
/// the results in piece order, or the first error (reading stops).
pub fn read_ahead<T: Send>(
    file: &File,
    len: u64,
    piece: usize,
    plan: &Plan,
    threads: usize,
    work: impl Fn(usize, &[u8]) -> io::Result<T> + Sync,
) -> io::Result<Vec<T>> {
    read_ahead_in(file, len, piece, plan, threads, false, work)
}

/// [`read_ahead`] for work that may take the pieces in any order: through the page cache,
/// each reader reads its own stripe of the file (a contiguous `1 / depth` of it) front to
/// back through a file description of its own, so the kernel sees `depth` sequential
/// streams and reads ahead of each. Pieces handed out in turns from one description looked
/// random to it: a 20 GB file read cold by two readers at 1.24 GB/s that way, 1.77 GB/s
/// in stripes (direct reads, 4 in flight: 1.51 GB/s). Direct reads are unchanged.
pub fn read_ahead_unordered<T: Send>(
    file: &File,
    len: u64,
    piece: usize,
    plan: &Plan,
    threads: usize,
    work: impl Fn(usize, &[u8]) -> io::Result<T> + Sync,
) -> io::Result<Vec<T>> {
    read_ahead_in(file, len, piece, plan, threads, true, work)
}

/// A description of its own for `file` (its read-ahead state apart), by opening the file
/// again through `/proc/self/fd` (the same inode whatever its name now); `None` without
/// `/proc`.
fn reopen(file: &File) -> Option<File> {
    File::open(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[allow(clippy::too_many_arguments)]
fn read_ahead_in<T: Send>(
    file: &File,
    len: u64,
    piece: usize,
    plan: &Plan,
    threads: usize,
    unordered: bool,
    work: impl Fn(usize, &[u8]) -> io::Result<T> + Sync,
) -> io::Result<Vec<T>> {
    assert!(piece > 0 && piece.is_multiple_of(ALIGN));
    let count = len.div_ceil(piece as u64) as usize;
    let direct = if plan.direct { open_direct(file) } else { None };
    if direct.is_none() {
        // Buffered: a larger read-ahead window in the kernel.
        // SAFETY: posix_fadvise only reads its arguments; a failure changes nothing.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL) };
    }
    let depth = plan.depth.max(1);
    let threads = threads.max(1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let spare: Mutex<Vec<AlignedBuf>> = Mutex::new(Vec::new());
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    let failure: Mutex<Option<io::Error>> = Mutex::new(None);
    let fail = |e: io::Error| {
        stop.store(true, Ordering::Relaxed);
        failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    };
    // At most `depth` pieces wait for a worker; with `depth` more being read and one per
    // worker, buffers in use stay under `2 * depth + threads`.
    let (tx, rx) = sync_channel::<(usize, AlignedBuf)>(depth);
    let rx = Mutex::new(rx);
    // Buffered and unordered: a stripe and a description per reader.
    let stripes: Option<Vec<File>> = (unordered && direct.is_none() && depth > 1 && count > 1)
        .then(|| {
            (0..depth)
                .map(|_| reopen(file))
                .collect::<Option<Vec<File>>>()
        })
        .flatten();
    if let Some(files) = &stripes {
        for f in files {
            // SAFETY: posix_fadvise only reads its arguments; a failure changes nothing.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL) };
        }
    }
    let stripe_next: Vec<AtomicUsize> = (0..depth)
        .map(|r| AtomicUsize::new(r * count / depth))
        .collect();
    std::thread::scope(|ts| {
        for r in 0..depth {
            let tx = tx.clone();
            let (next, stop, spare, direct) = (&next, &stop, &spare, direct.as_ref());
            let (fail, stripes, stripe_next) = (&fail, &stripes, &stripe_next);
            ts.spawn(move || loop {
                let (file, k) = match stripes {
                    Some(files) => {
                        let k = stripe_next[r].fetch_add(1, Ordering::Relaxed);
                        if k >= (r + 1) * count / depth {
                            break;
                        }
                        (&files[r], k)
                    }
                    None => (file, next.fetch_add(1, Ordering::Relaxed)),
                };
                if k >= count || stop.load(Ordering::Relaxed) {
                    break;
                }
                let at = k as u64 * piece as u64;
                let n = (len - at).min(piece as u64) as usize;
                let mut buf = spare
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .pop()
                    .unwrap_or_else(|| AlignedBuf::with_capacity(piece));
                if let Err(e) = read_piece(file, direct, &mut buf, at, n) {
                    fail(e);
                    break;
                }
                if tx.send((k, buf)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        (0..threads).into_par_iter().for_each(|_| loop {
            let got = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
            let Ok((k, buf)) = got else { break };
            if !stop.load(Ordering::Relaxed) {
                match work(k, &buf) {
                    Ok(r) => results.lock().unwrap_or_else(|p| p.into_inner())[k] = Some(r),
                    Err(e) => fail(e),
                }
            }
            spare.lock().unwrap_or_else(|p| p.into_inner()).push(buf);
        });
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.ok_or_else(|| io::Error::other("a piece was not read")))
        .collect()
}

/// Large values dropped on a background thread, off the critical path (unmapping hundreds
/// of MB of touched pages takes tens of milliseconds); [`DetachedFrees::join`] waits for
/// them, as an allocation larger than the memory then available must
/// ([`DetachedFrees::before_alloc`]).
#[derive(Debug, Default)]
pub struct DetachedFrees {
    pending: Mutex<Vec<(u64, std::thread::JoinHandle<()>)>>,
}

impl DetachedFrees {
    /// No frees pending.
    pub fn new() -> DetachedFrees {
        DetachedFrees::default()
    }

    /// Drops `value` (about `bytes` large) on a thread of its own; a value smaller than
    /// [`DETACH_AT`] is dropped here. `SWATH_DETACHED_FREES=0` drops everything here
    /// (measurements).
    pub fn free<T: Send + 'static>(&self, value: T, bytes: u64) {
        static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let off =
            *OFF.get_or_init(|| std::env::var_os("SWATH_DETACHED_FREES").is_some_and(|v| v == "0"));
        if bytes < DETACH_AT || off {
            drop(value);
            return;
        }
        // Without a thread, the value was dropped with the closure, here.
        if let Ok(h) = std::thread::Builder::new()
            .name("swath-free".into())
            .spawn(move || drop(value))
        {
            self.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((bytes, h));
        }
    }

    /// Bytes still being freed.
    pub fn pending_bytes(&self) -> u64 {
        let mut p = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        p.retain(|(_, h)| !h.is_finished());
        p.iter().map(|(b, _)| b).sum()
    }

    /// Before allocating `bytes`: joins the pending frees when `bytes` does not fit in the
    /// memory available now.
    pub fn before_alloc(&self, bytes: u64) {
        if self.pending_bytes() == 0 {
            return;
        }
        let avail = swath_engine::sysinfo::available_memory().unwrap_or(u64::MAX);
        if bytes > avail {
            self.join();
        }
    }

    /// Waits for every pending free.
    pub fn join(&self) {
        let all = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
        for (_, h) in all {
            let _ = h.join();
        }
    }
}

/// The process's pending detached frees.
pub fn frees() -> &'static DetachedFrees {
    static FREES: std::sync::OnceLock<DetachedFrees> = std::sync::OnceLock::new();
    FREES.get_or_init(DetachedFrees::new)
}

/// Values at least this large are worth a thread of their own to free.
pub const DETACH_AT: u64 = 16 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), bytes).unwrap();
        f
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn read_ahead_gives_every_piece_in_order_whatever_the_plan() {
        let plans = [
            Plan {
                ahead: true,
                direct: false,
                depth: 1,
            },
            Plan {
                ahead: true,
                direct: false,
                depth: 3,
            },
            Plan {
                ahead: true,
                direct: true,
                depth: 2,
            },
            Plan {
                ahead: true,
                direct: true,
                depth: 8,
            },
        ];
        for len in [0usize, 1, 4095, 4096, 4097, 3 * 8192, 3 * 8192 + 5, 100_000] {
            let data = pattern(len);
            let f = file_with(&data);
            for plan in &plans {
                for threads in [1, 2, 3] {
                    let got = read_ahead(f.as_file(), len as u64, 8192, plan, threads, |k, b| {
                        Ok((k, b.to_vec()))
                    })
                    .unwrap();
                    let want: Vec<(usize, Vec<u8>)> =
                        data.chunks(8192).map(|c| c.to_vec()).enumerate().collect();
                    assert_eq!(got, want, "len {len} {plan:?} threads {threads}");
                }
            }
        }
    }

    #[test]
    fn a_file_shorter_than_announced_is_a_clear_error() {
        // As if the file shrank after its length was taken.
        let data = pattern(20_000);
        let f = file_with(&data);
        for direct in [false, true] {
            let plan = Plan {
                ahead: true,
                direct,
                depth: 2,
            };
            let e =
                read_ahead(f.as_file(), 50_000, 8192, &plan, 2, |_, b| Ok(b.len())).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
            let mut buf = AlignedBuf::with_capacity(8192);
            let e = read_piece(
                f.as_file(),
                open_direct(f.as_file()).as_ref(),
                &mut buf,
                16384,
                8192,
            )
            .unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        }
    }

    #[test]
    fn a_file_that_shrinks_while_read_is_an_error_not_a_panic() {
        let data = pattern(1 << 20);
        let f = file_with(&data);
        let path = f.path().to_path_buf();
        let plan = Plan {
            ahead: true,
            direct: false,
            depth: 2,
        };
        // Cut at the first piece handed to the work, whichever it is: waiting for piece 3
        // raced with the readers (on a loaded machine the other stripe could be read to its
        // end before piece 3 came), while at the first piece at most the buffers in flight
        // (`2 * depth + threads`, 6 of the 128 pieces) have been read.
        let first = std::sync::Once::new();
        let r = read_ahead(f.as_file(), data.len() as u64, 8192, &plan, 2, |_, b| {
            first.call_once(|| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_len(40_000)
                    .unwrap();
            });
            Ok(b.len())
        });
        let e = r.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
    }

    #[test]
    fn an_error_of_the_work_stops_the_reading() {
        let data = pattern(200_000);
        let f = file_with(&data);
        let plan = Plan {
            ahead: true,
            direct: false,
            depth: 2,
        };
        let e = read_ahead(f.as_file(), data.len() as u64, 4096, &plan, 2, |k, _| {
            if k == 5 {
                Err(io::Error::other("no"))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "no");
    }

    #[test]
    fn direct_reads_fall_back_where_refused() {
        // /dev/shm is tmpfs, which refuses O_DIRECT: no descriptor, buffered reads.
        let Ok(f) = tempfile::NamedTempFile::new_in("/dev/shm") else {
            return;
        };
        std::fs::write(f.path(), pattern(10_000)).unwrap();
        let d = open_direct(f.as_file());
        let mut buf = AlignedBuf::with_capacity(16384);
        read_piece(f.as_file(), d.as_ref(), &mut buf, 0, 10_000).unwrap();
        assert_eq!(&buf[..], &pattern(10_000)[..]);
    }

    #[test]
    fn detached_frees_complete_and_join() {
        let frees = DetachedFrees::new();
        frees.free(vec![1u8; 32 << 20], 32 << 20);
        frees.free(vec![1u8; 1 << 20], 1 << 20);
        frees.before_alloc(u64::MAX);
        assert_eq!(frees.pending_bytes(), 0);
    }

    #[test]
    fn a_cold_reader_gives_the_bytes_of_the_file_cached_or_not() {
        let len = ColdReader::WINDOW * 2 + 12_345;
        let data = pattern(len);
        let f = file_with(&data);
        let file = f.as_file();
        // xorshift64: a fixed sequence of positions and lengths.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut below = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        file.sync_all().unwrap();
        // In the cache, every other MiB dropped from it (where the kernel lets us: partly
        // cached windows), and every load counted as a miss.
        for (cold, evict) in [(false, false), (false, true), (true, false)] {
            if evict {
                for mib in (0..len >> 20).step_by(2) {
                    // SAFETY: posix_fadvise only reads its arguments; it drops clean pages.
                    unsafe {
                        libc::posix_fadvise(
                            file.as_raw_fd(),
                            (mib << 20) as libc::off_t,
                            1 << 20,
                            libc::POSIX_FADV_DONTNEED,
                        )
                    };
                }
            }
            let mut r = ColdReader::new(file, len as u64);
            r.cold = cold;
            let mut buf = Vec::new();
            // Forward runs (the matcher's pattern), jumps, backward reads, the file's end.
            let mut at = 0u64;
            for _ in 0..2000 {
                let n = (1 + below(70_000) as usize).min(len);
                at = match below(10) {
                    0 => below((len - n) as u64 + 1),
                    1 => (len - n) as u64,
                    2 => at.saturating_sub(below(300_000)),
                    _ => at + below(100_000),
                }
                .min((len - n) as u64);
                let got = r.read(&mut buf, at, n).unwrap();
                assert_eq!(got, &data[at as usize..at as usize + n], "at {at} n {n}");
            }
            if cold && open_direct(file).is_some() {
                assert!(r.win.is_some(), "misses load the window");
            }
        }
    }
}
