//! Page-aligned buffers: the one buffer type every read and write of swath copies through.
//!
//! The kernel copies page-cache pages into a read buffer (and a write buffer into the page
//! cache) with `rep movsb` or a vector loop whose speed, on some processors, depends on how the
//! destination sits against the source: on the AMD EPYC machines this project measures on, a
//! destination 1 to 31 bytes off a page boundary copies about five times slower than one on
//! it (`../shared/tools/copy-alignment.c`; `benchsuite/copy-alignment.sh` shows the same
//! through this module). glibc's `malloc` serves a large `Vec<u8>` from `mmap` with a 16-byte
//! header, the slow case, so buffers the kernel copies into or out of are a [`PageBuf`]:
//!
//! - its start is page-aligned ([`PAGE`]) and its capacity a whole number of pages, so
//!   `O_DIRECT` reads can use it as well;
//! - [`PageBuf::window`] places a read at file offset `at` so that the byte at `at` lands at
//!   the same offset in a page of the buffer as it has in its page of the file: source and
//!   destination then share their alignment even for reads that do not start on a page (a
//!   line read with one byte of look-behind, a region that starts at an odd offset);
//! - it grows like a `Vec` ([`PageBuf::resize`]) but never zeroes what it reuses: its bytes
//!   are always initialised (zeroed when allocated), and a reader overwrites them anyway;
//! - from 1 MiB it is an anonymous mapping, grown with `mremap` as glibc grows a large `Vec`
//!   (pages moved, not copied; the old and new sizes never held at once).
//!
//! A caller may still read into a slice of any alignment: every reader takes `&mut [u8]`, and
//! an odd one only costs speed.

use std::alloc::Layout;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// The alignment of every [`PageBuf`] (the page size of the machines swath runs on; larger
/// pages are multiples of it).
pub const PAGE: usize = 4096;

/// A heap buffer whose start is page-aligned and whose capacity is a whole number of pages.
/// It dereferences to its first [`len`](PageBuf::len) bytes.
pub struct PageBuf {
    ptr: NonNull<u8>,
    cap: usize,
    len: usize,
    /// The memory is an anonymous mapping (else a heap allocation, or none when cap is 0).
    mapped: bool,
}

// SAFETY: the buffer owns its allocation exclusively, as a Vec<u8> does.
unsafe impl Send for PageBuf {}
// SAFETY: shared references only read the bytes.
unsafe impl Sync for PageBuf {}

impl Default for PageBuf {
    fn default() -> PageBuf {
        PageBuf::new()
    }
}

impl PageBuf {
    /// An empty buffer; nothing is allocated until it grows.
    pub const fn new() -> PageBuf {
        // An aligned dangling pointer, as an empty Vec holds (never read or freed).
        let ptr = match NonNull::new(PAGE as *mut u8) {
            Some(p) => p,
            None => unreachable!(),
        };
        PageBuf {
            ptr,
            cap: 0,
            len: 0,
            mapped: false,
        }
    }

    /// A buffer of `len` zero bytes (its capacity `len` rounded up to whole pages).
    pub fn zeroed(len: usize) -> PageBuf {
        let mut b = PageBuf::new();
        b.resize(len);
        b
    }

    /// An empty buffer with room for at least `cap` bytes (rounded up to pages).
    pub fn with_capacity(cap: usize) -> PageBuf {
        let mut b = PageBuf::new();
        b.reserve(cap);
        b
    }

    /// Bytes it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes it can hold without growing (a whole number of pages).
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Holds `len` bytes from now on: the first `min(len, old len)` are kept, the others are
    /// whatever the buffer held there before (zeros if never written), not zeroed again.
    pub fn resize(&mut self, len: usize) {
        self.reserve(len);
        self.len = len;
    }

    /// Holds at most `len` bytes.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Holds no byte (the memory is kept).
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends `bytes`.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        let old = self.len;
        self.resize(old + bytes.len());
        self[old..].copy_from_slice(bytes);
    }

    /// The whole capacity, to read into (bytes past [`len`](PageBuf::len) included); set
    /// the length read with [`resize`](PageBuf::resize) or [`truncate`](PageBuf::truncate).
    pub fn room(&mut self) -> &mut [u8] {
        // SAFETY: the allocation holds `cap` initialised bytes owned by `self` (zeroed when
        // allocated, copied when grown); for cap 0 the pointer is dangling but aligned and
        // the slice empty.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.cap) }
    }

    /// Where a read of `n` bytes at file offset `at` goes: the buffer is made to hold
    /// `skew(at) + n` bytes and the last `n` of them are returned, so the byte read from `at`
    /// sits at the same offset in its page as in the file's. [`placed`](PageBuf::placed)
    /// gives them back after the read.
    pub fn window(&mut self, at: u64, n: usize) -> &mut [u8] {
        let s = skew(at);
        self.resize(s + n);
        &mut self[s..]
    }

    /// The `n` bytes a read through [`window`](PageBuf::window)`(at, n)` put in the buffer.
    pub fn placed(&self, at: u64, n: usize) -> &[u8] {
        let s = skew(at);
        &self[s..s + n]
    }

    /// Makes room for at least `cap` bytes (rounded up to whole pages), keeping the bytes held.
    pub fn reserve(&mut self, cap: usize) {
        if cap <= self.cap {
            return;
        }
        // Grow at least twice, as a Vec, so appending stays linear.
        let new_cap = cap
            .max(self.cap.saturating_mul(2))
            .checked_next_multiple_of(PAGE)
            .expect("buffer size overflows");
        if new_cap >= MAPPED {
            if self.mapped {
                // SAFETY: `self.ptr` is a mapping of `self.cap` bytes made here;
                // MREMAP_MAYMOVE lets the kernel move its pages to a larger range (new pages
                // are zero), so nothing is copied; on success the old range is gone, on
                // failure it is untouched.
                let raw = unsafe {
                    libc::mremap(
                        self.ptr.as_ptr().cast(),
                        self.cap,
                        new_cap,
                        libc::MREMAP_MAYMOVE,
                    )
                };
                if let Some(ptr) = mapping(raw) {
                    self.ptr = ptr;
                    self.cap = new_cap;
                    return;
                }
            } else {
                // SAFETY: a private anonymous mapping of new_cap bytes: page-aligned,
                // zero-filled on first touch, owned by this buffer once returned.
                let raw = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        new_cap,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
                if let Some(ptr) = mapping(raw) {
                    self.move_to(ptr, true, new_cap);
                    return;
                }
            }
            // No mapping to be had: the heap, through the program's allocator, whose
            // answer to a failure is the program's (swath's: one line and status 2).
        }
        let layout = Layout::from_size_align(new_cap, PAGE).expect("buffer size overflows");
        // SAFETY: the layout has a non-zero size (new_cap > self.cap >= 0, rounded up to PAGE).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        self.move_to(ptr, false, new_cap);
    }

    /// Copies the bytes held to `to` (`cap` bytes, a mapping when `mapped`), frees what they
    /// were in, and holds `to` from now on.
    fn move_to(&mut self, to: NonNull<u8>, mapped: bool, cap: usize) {
        // SAFETY: `to` is a live allocation of `cap` bytes, larger than the old capacity and
        // so than `self.len`, distinct from the old one.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.as_ptr(), to.as_ptr(), self.len) };
        self.release();
        self.ptr = to;
        self.cap = cap;
        self.mapped = mapped;
    }

    /// Frees the memory held (the fields are left for the caller to reset).
    fn release(&mut self) {
        if self.mapped {
            // SAFETY: a mapping of `cap` bytes made in `reserve`, unmapped once.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.cap) };
        } else if self.cap > 0 {
            // SAFETY: allocated in `reserve` with exactly this layout, freed once.
            unsafe {
                std::alloc::dealloc(
                    self.ptr.as_ptr(),
                    Layout::from_size_align_unchecked(self.cap, PAGE),
                )
            };
        }
    }
}

/// Buffers of at least this many bytes are anonymous mappings, grown with `mremap`: no
/// zeroing pass at allocation, and growing moves pages instead of copying bytes, so a
/// buffer growing under an address-space limit never needs the old and new sizes at once.
/// Where no mapping can be had, they come from the heap like smaller ones.
const MAPPED: usize = 1 << 20;

/// The mapping `mmap` or `mremap` returned, or `None` when it failed.
fn mapping(raw: *mut libc::c_void) -> Option<NonNull<u8>> {
    if raw == libc::MAP_FAILED {
        return None;
    }
    NonNull::new(raw.cast())
}

/// How far `at` lies past the start of its page: where a read at file offset `at` starts in
/// a [`PageBuf`] to share the file's alignment.
pub fn skew(at: u64) -> usize {
    (at % PAGE as u64) as usize
}

impl Drop for PageBuf {
    fn drop(&mut self) {
        self.release();
    }
}

impl Deref for PageBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `len <= cap` initialised bytes of the allocation owned by `self` (an empty
        // slice at an aligned dangling pointer when nothing is allocated).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for PageBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Clone for PageBuf {
    fn clone(&self) -> PageBuf {
        let mut b = PageBuf::with_capacity(self.len);
        b.extend_from_slice(self);
        b
    }
}

impl std::fmt::Debug for PageBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageBuf")
            .field("len", &self.len)
            .field("cap", &self.cap)
            .finish()
    }
}

/// A buffered reader whose buffer is a [`PageBuf`]: `std::io::BufReader` with the kernel's
/// copy into an aligned buffer (a `BufReader`'s large buffer sits 16 bytes past a page).
pub struct PageReader<R> {
    inner: R,
    buf: PageBuf,
    pos: usize,
}

impl<R: std::io::Read> PageReader<R> {
    /// Reads `inner` through a buffer of `cap` bytes (rounded up to whole pages).
    pub fn with_capacity(cap: usize, inner: R) -> PageReader<R> {
        PageReader {
            inner,
            buf: PageBuf::with_capacity(cap.max(1)),
            pos: 0,
        }
    }

    /// The reader it reads from.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }
}

impl<R: std::io::Read> std::io::Read for PageReader<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        // A request as large as the buffer, with nothing buffered, goes straight through.
        if self.pos == self.buf.len() && out.len() >= self.buf.capacity() {
            self.buf.clear();
            self.pos = 0;
            return self.inner.read(out);
        }
        let have = std::io::BufRead::fill_buf(self)?;
        let n = have.len().min(out.len());
        out[..n].copy_from_slice(&have[..n]);
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl<R: std::io::Read> std::io::BufRead for PageReader<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            let n = loop {
                match self.inner.read(self.buf.room()) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    r => break r?,
                }
            };
            self.buf.resize(n);
        }
        Ok(&self.buf[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }
}

/// A buffered writer whose buffer is a [`PageBuf`]: `std::io::BufWriter` with the kernel's
/// copy out of an aligned buffer. Dropped with bytes still held, it writes them and ignores
/// an error (as `BufWriter` does): call [`flush`](std::io::Write::flush) to see it.
pub struct PageWriter<W: std::io::Write> {
    inner: W,
    buf: PageBuf,
}

impl<W: std::io::Write> PageWriter<W> {
    /// Writes to `inner` through a buffer of `cap` bytes (rounded up to whole pages).
    pub fn with_capacity(cap: usize, inner: W) -> PageWriter<W> {
        PageWriter {
            inner,
            buf: PageBuf::with_capacity(cap.max(1)),
        }
    }

    /// The writer it writes to.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Writes out what is held.
    fn write_held(&mut self) -> std::io::Result<()> {
        let mut done = 0;
        let result = loop {
            if done == self.buf.len() {
                break Ok(());
            }
            match self.inner.write(&self.buf[done..]) {
                Ok(0) => break Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        // What was written leaves the buffer, even when the rest fails.
        let left = self.buf.len() - done;
        self.buf.copy_within(done.., 0);
        self.buf.truncate(left);
        result
    }
}

impl<W: std::io::Write> std::io::Write for PageWriter<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + data.len() > self.buf.capacity() {
            self.write_held()?;
        }
        if data.len() >= self.buf.capacity() {
            // As large as the buffer: no copy through it.
            return self.inner.write(data);
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.write_held()?;
        self.inner.flush()
    }
}

impl<W: std::io::Write> Drop for PageWriter<W> {
    fn drop(&mut self) {
        let _ = self.write_held();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn aligned(b: &PageBuf) -> bool {
        b.cap == 0 || (b.ptr.as_ptr() as usize).is_multiple_of(PAGE)
    }

    #[test]
    fn starts_on_a_page_and_holds_whole_pages() {
        for len in [1, 16, 4095, 4096, 4097, 256 << 10, (1 << 20) + 3] {
            let b = PageBuf::zeroed(len);
            assert!(aligned(&b), "{len}");
            assert_eq!(b.as_ptr() as usize % PAGE, 0, "{len}");
            assert_eq!(b.capacity() % PAGE, 0, "{len}");
            assert!(b.capacity() >= len);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
        }
        let e = PageBuf::new();
        assert!(e.is_empty());
        assert_eq!(&e[..], &[] as &[u8]);
    }

    #[test]
    fn a_window_shares_the_files_alignment() {
        let mut b = PageBuf::new();
        for at in [0u64, 1, 4095, 4096, 4097, 123_456_789] {
            let w = b.window(at, 1000);
            assert_eq!(w.len(), 1000);
            assert_eq!(w.as_ptr() as usize % PAGE, (at % PAGE as u64) as usize);
            w.fill(7);
            assert!(b.placed(at, 1000).iter().all(|&x| x == 7));
        }
    }

    /// A reader that hands out at most `step` bytes a call.
    struct Trickle<'a>(&'a [u8], usize);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    proptest! {
        /// The buffered reader and writer pass every byte through, whatever the sizes.
        #[test]
        fn reader_and_writer_pass_every_byte(
            data in proptest::collection::vec(any::<u8>(), 0..40_000),
            cap in 1usize..10_000,
            step in 1usize..9_000,
            chunks in proptest::collection::vec(1usize..12_000, 1..20),
        ) {
            use std::io::{BufRead, Read, Write};
            let mut r = PageReader::with_capacity(cap, Trickle(&data, step));
            let mut got = Vec::new();
            let mut k = 0;
            loop {
                let mut piece = vec![0u8; chunks[k % chunks.len()]];
                k += 1;
                let n = if k % 3 == 0 {
                    let have = r.fill_buf().unwrap();
                    let n = have.len().min(piece.len());
                    piece[..n].copy_from_slice(&have[..n]);
                    r.consume(n);
                    n
                } else {
                    r.read(&mut piece).unwrap()
                };
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&piece[..n]);
            }
            prop_assert_eq!(&got, &data);

            let mut w = PageWriter::with_capacity(cap, Vec::new());
            let mut at = 0;
            let mut k = 0;
            while at < data.len() {
                let n = chunks[k % chunks.len()].min(data.len() - at);
                k += 1;
                w.write_all(&data[at..at + n]).unwrap();
                at += n;
            }
            w.flush().unwrap();
            prop_assert_eq!(w.get_ref(), &data);
        }

        /// Growing, shrinking and appending keep the bytes a Vec would keep.
        #[test]
        fn behaves_as_a_vec(ops in proptest::collection::vec(
            // Sizes on both sides of the heap/mapping threshold, so that growth crosses it.
            (0usize..3, prop_oneof![0usize..20_000, 0usize..3 * MAPPED], any::<u8>()), 1..40)
        ) {
            let mut b = PageBuf::new();
            let mut v: Vec<u8> = Vec::new();
            for (op, n, byte) in ops {
                match op {
                    0 => {
                        b.extend_from_slice(&vec![byte; n]);
                        v.extend(std::iter::repeat_n(byte, n));
                    }
                    1 => {
                        b.truncate(n);
                        v.truncate(n);
                    }
                    _ => {
                        // Grown bytes are unspecified: overwrite them on both sides.
                        let old = v.len();
                        b.resize(n);
                        v.resize(n, 0);
                        if n > old {
                            b[old..].fill(byte);
                            v[old..].fill(byte);
                        }
                    }
                }
                prop_assert!(aligned(&b));
                prop_assert_eq!(&b[..], &v[..]);
                prop_assert_eq!(b.capacity() % PAGE, 0);
            }
            prop_assert_eq!(&b.clone()[..], &v[..]);
        }
    }
}
