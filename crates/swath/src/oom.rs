//! Running out of memory is an error, not an abort.
//!
//! Rust's default answer to a failed allocation is "memory allocation of N bytes failed" and
//! SIGABRT (status 134, a core dump where they are on), whichever allocation it was: a
//! table's growth, a key's few bytes, a buffer. swath's global allocator is the system's,
//! with one difference: when an allocation fails, it prints one line (what was asked, and
//! what is left: under the address-space limit, `ulimit -v`, when there is one, else the
//! memory the kernel says is available) and exits with status 2, as for any other error.
//! Nothing in that path allocates. Outputs are written under temporary names and renamed
//! into place only once complete, and the temporary files being written are removed before
//! the exit (the engine's signal-safe cleanup), so an exit there leaves nothing behind.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first thread whose allocation failed: it alone prints the message.
static DYING: AtomicBool = AtomicBool::new(false);

/// The system allocator, with a failed allocation turned into an error exit.
pub struct Allocator;

// SAFETY: every method forwards to `System` with the same arguments and returns its result
// unchanged; a null result (failure) never returns at all.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `alloc`: `ptr` came from this allocator, which is `System`'s.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            out_of_memory(new_size);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// A line of text built in a fixed buffer (no allocation).
struct Line {
    buf: [u8; 200],
    len: usize,
}

impl Line {
    fn text(&mut self, s: &[u8]) {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s[..n]);
        self.len += n;
    }

    fn number(&mut self, mut v: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.text(&digits[i..]);
    }
}

/// Reads a small /proc file into `buf` without allocating; the bytes read.
fn read_proc(path: &[u8], buf: &mut [u8]) -> usize {
    // SAFETY: `path` is NUL-terminated; the descriptor is closed before returning; `buf`
    // is valid for writes of its length.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return 0;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n.max(0) as usize
    }
}

/// The number after `key` in `text` (as in /proc/meminfo's `MemAvailable:   123 kB`).
fn field(text: &[u8], key: &[u8]) -> Option<u64> {
    let at = text.windows(key.len()).position(|w| w == key)? + key.len();
    let rest = &text[at..];
    let start = rest.iter().position(|b| b.is_ascii_digit())?;
    let mut v = 0u64;
    for &b in rest[start..].iter().take_while(|b| b.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add(u64::from(b - b'0'));
    }
    Some(v)
}

/// Bytes left under the address-space limit, when there is one.
fn left_under_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is valid for writes.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let mut buf = [0u8; 4096];
    let n = read_proc(b"/proc/self/status\0", &mut buf);
    let used = field(&buf[..n], b"VmSize:")? * 1024;
    Some(lim.rlim_cur.saturating_sub(used))
}

/// The standard library's panic when a new thread cannot map the small stack its signal
/// handler needs (the address space is used up): the same one line and status 2 as a
/// failed allocation, not a panic's lines.
pub fn install_thread_start_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed to allocate an alternative stack") {
            // The size of a thread's signal stack (SIGSTKSZ and a guard page), at least.
            out_of_memory(64 << 10);
        }
        default(info)
    }));
}

/// Prints `swath: out of memory: needs N MB more, M MB available` and exits with status 2.
fn out_of_memory(size: usize) -> ! {
    const MB: u64 = 1 << 20;
    if DYING.swap(true, Ordering::SeqCst) {
        // Another thread is printing the message and ending the process.
        loop {
            // SAFETY: waits for a signal (or the exit), touching no memory.
            unsafe {
                libc::pause();
            }
        }
    }
    let mut line = Line {
        buf: [0; 200],
        len: 0,
    };
    line.text(b"swath: out of memory: needs ");
    line.number((size as u64).div_ceil(MB));
    line.text(b" MB more, ");
    match left_under_limit() {
        Some(left) => {
            line.number(left / MB);
            line.text(b" MB available under the address-space limit (ulimit -v)\n");
        }
        None => {
            let mut buf = [0u8; 4096];
            let n = read_proc(b"/proc/meminfo\0", &mut buf);
            line.number(field(&buf[..n], b"MemAvailable:").unwrap_or(0) * 1024 / MB);
            line.text(b" MB available\n");
        }
    }
    // SAFETY: writing a stack buffer to standard error, then ending the process without
    // running anything else (no destructor, no handler that could allocate).
    unsafe {
        libc::write(2, line.buf.as_ptr().cast(), line.len);
        swath_engine::output::remove_temporary_outputs();
        libc::_exit(2);
    }
}
