//! What patch adds to the engine's reading ([`swath_engine::ahead`], [`swath_engine::direct`]):
//!
//! - [`ColdReader`]: OLD read by the matcher along its matches, through windows loaded from
//!   the page cache when it holds them and with direct reads otherwise.
//! - [`Pool`]: the workers that take what the engine reads ahead, on the make's rayon pool.
//! - [`frees`]: large values freed on a background thread ([`DetachedFrees`]).
//!
//! How NEW and OLD are read front to back (read ahead on reader threads, direct reads, or
//! by the workers themselves) is the engine's [`swath_engine::ahead::AheadPlan`], forced
//! for measurements by [`crate::tuning::Tuning::io`]. How many files are read at once is
//! `swath_engine::memfor::IoSemaphore`'s (1 on a rotational device, 2 on an SSD:
//! [`swath_engine::sysinfo::io_threads`], or `--io-threads`).
//!
//! A file that ends before the length it had when opened (it shrank while read) is an
//! `UnexpectedEof` error, never a panic.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

use rayon::prelude::*;
use swath_engine::ahead::Workers;
use swath_engine::buf::{PageBuf, PAGE};
use swath_engine::direct::{open_direct, read_cached, read_piece};

/// `n` workers on the current rayon pool (the one a make runs in), for
/// [`swath_engine::ahead::read_ahead`]: the work on the pieces runs where the rest of the
/// make's work does, on as many threads as it was given.
#[derive(Debug, Clone, Copy)]
pub struct Pool(pub usize);

impl Workers for Pool {
    fn run(&self, worker: &(dyn Fn(usize) + Sync)) {
        (0..self.0.max(1)).into_par_iter().for_each(worker);
    }
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
    win: Option<PageBuf>,
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
        let start = at.saturating_sub(Self::BEFORE) / PAGE as u64 * PAGE as u64;
        let len = self.len;
        let win = self
            .win
            .get_or_insert_with(|| PageBuf::with_capacity(Self::WINDOW));
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

    /// Drops `value` (about `bytes` large) on a thread of its own when `detach`; a value
    /// smaller than [`DETACH_AT`] is dropped here, and so is every value when `detach` is
    /// false ([`crate::tuning::Tuning::detached_frees`], for measurements).
    pub fn free<T: Send + 'static>(&self, value: T, bytes: u64, detach: bool) {
        if bytes < DETACH_AT || !detach {
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
    use std::os::fd::AsRawFd;

    fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), bytes).unwrap();
        f
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn detached_frees_complete_and_join() {
        let frees = DetachedFrees::new();
        frees.free(vec![1u8; 32 << 20], 32 << 20, true);
        frees.free(vec![1u8; 1 << 20], 1 << 20, true);
        frees.before_alloc(u64::MAX);
        assert_eq!(frees.pending_bytes(), 0);
        // Not detached: dropped here, nothing pending.
        let here = DetachedFrees::new();
        here.free(vec![1u8; 32 << 20], 32 << 20, false);
        assert_eq!(here.pending.lock().unwrap().len(), 0);
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
