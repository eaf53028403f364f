//! Read-only file maps that survive the file being truncated under them.
//!
//! Touching a mapped page beyond the end of a file that shrank raises SIGBUS, which would kill
//! the process. Every map the engine makes is registered here, and a process-wide SIGBUS
//! handler, installed once, checks whether the faulting address lies in a registered map. If it
//! does, the handler puts a private zero page over the faulting page (so the interrupted load
//! completes, reading zeros) and marks the map as *faulted*; the executor checks that mark after
//! each block and reports [`crate::EngineError::Shrank`] instead of using the block's result. A
//! fault outside every registered map restores the default action and lets it kill the process,
//! exactly as if no handler were installed.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

use memmap2::{Advice, Mmap, MmapOptions};

use crate::error::EngineError;

/// Maps that can be registered at once. When all are taken, [`GuardedMap::new`] refuses to
/// map (the executor then reads with `pread`), so no map is ever unguarded.
const SLOTS: usize = 256;

struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
    faulted: AtomicBool,
    in_use: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
    in_use: AtomicBool::new(false),
};

static REGISTRY: [Slot; SLOTS] = [EMPTY; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for slot in REGISTRY.iter() {
        let start = slot.start.load(Ordering::Acquire);
        let len = slot.len.load(Ordering::Acquire);
        if len != 0 && addr >= start && addr < start + len {
            let at = addr & !(page - 1);
            // SAFETY: `at` is a page inside a live mapping we own (registered until unmapped);
            // replacing it with an anonymous zero page is async-signal-safe (one syscall) and
            // makes the faulting load succeed. The map is unmapped whole later by memmap2.
            let p = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                slot.faulted.store(true, Ordering::Release);
                return;
            }
        }
    }
    // Not one of ours: fall back to the default action, which the re-executed access triggers.
    // SAFETY: resetting a signal disposition is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGBUS, libc::SIG_DFL);
    }
}

fn install_handler() {
    INSTALL.call_once(|| {
        PAGE.store(crate::sysinfo::page_size(), Ordering::Relaxed);
        // SAFETY: a zeroed sigaction is a valid starting point; we set a handler with the
        // SA_SIGINFO signature and an empty mask before installing it.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
        }
    });
}

/// A read-only map of a file range, registered with the SIGBUS guard while it lives.
pub struct GuardedMap {
    map: Option<Mmap>,
    /// Offset of the first mapped byte inside `map` relative to the requested offset.
    skew: usize,
    len: usize,
    slot: Option<usize>,
}

impl GuardedMap {
    /// Maps `len` bytes of `file` starting at `offset`. An empty range maps nothing.
    /// Returns `Ok(None)` when every guard slot is taken.
    pub fn new(
        file: &File,
        name: impl AsRef<std::path::Path>,
        offset: u64,
        len: u64,
    ) -> Result<Option<Self>, EngineError> {
        install_handler();
        if len == 0 {
            return Ok(Some(GuardedMap {
                map: None,
                skew: 0,
                len: 0,
                slot: None,
            }));
        }
        let page = crate::sysinfo::page_size() as u64;
        let aligned = offset / page * page;
        let skew = (offset - aligned) as usize;
        let total = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_add(skew))
            .ok_or_else(|| {
                EngineError::io(
                    name.as_ref(),
                    std::io::Error::from_raw_os_error(libc::EFBIG),
                )
            })?;
        // SAFETY: the map is read-only and private to this process. Its one hazard, the file
        // shrinking underneath it, is turned from SIGBUS into a recorded fault by the guard
        // registered below before any byte is read.
        let map = unsafe { MmapOptions::new().offset(aligned).len(total).map(file) }
            .map_err(|e| EngineError::io(name.as_ref(), e))?;
        let Some(slot) = register(map.as_ptr() as usize, total) else {
            return Ok(None);
        };
        let _ = map.advise(Advice::Sequential);
        Ok(Some(GuardedMap {
            map: Some(map),
            skew,
            len: len as usize,
            slot: Some(slot),
        }))
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.map {
            Some(m) => &m[self.skew..self.skew + self.len],
            None => &[],
        }
    }

    /// Advises the kernel that the map is read at random (no read-ahead around a fault),
    /// instead of front to back as [`GuardedMap::new`] assumes.
    pub fn advise_random(&self) {
        if let Some(m) = &self.map {
            let _ = m.advise(Advice::Random);
        }
    }

    /// Maps every page of the map now, in one call, from the page cache (reading what is
    /// not there): for a map about to be read all over, cheaper than a fault per page. A
    /// failure (an old kernel, a file that shrank) only leaves the pages to their faults.
    pub fn populate(&self) {
        #[cfg(target_os = "linux")]
        if let Some(m) = &self.map {
            let _ = m.advise(Advice::PopulateRead);
        }
    }

    /// True once a read touched a page past the end of the (shrunken) file.
    pub fn faulted(&self) -> bool {
        self.slot
            .is_some_and(|s| REGISTRY[s].faulted.load(Ordering::Acquire))
    }
}

impl Drop for GuardedMap {
    fn drop(&mut self) {
        if let Some(s) = self.slot {
            let slot = &REGISTRY[s];
            slot.len.store(0, Ordering::Release);
            slot.start.store(0, Ordering::Release);
            slot.faulted.store(false, Ordering::Release);
            slot.in_use.store(false, Ordering::Release);
        }
    }
}

fn register(start: usize, len: usize) -> Option<usize> {
    for (i, slot) in REGISTRY.iter().enumerate() {
        if slot
            .in_use
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            slot.faulted.store(false, Ordering::Release);
            slot.start.store(start, Ordering::Release);
            slot.len.store(len, Ordering::Release);
            return Some(i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn truncated_map_reads_zeros_and_reports_fault() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        let page = crate::sysinfo::page_size();
        f.write_all(&vec![b'x'; page * 4]).unwrap();
        f.flush().unwrap();
        let map = GuardedMap::new(f.as_file(), "t", 0, (page * 4) as u64)
            .unwrap()
            .unwrap();
        assert!(!map.faulted());
        assert_eq!(map.bytes()[0], b'x');
        f.as_file().set_len(page as u64).unwrap();
        // The page past the new end is gone: reading it must not kill the process.
        let v = std::hint::black_box(map.bytes()[page * 3]);
        assert_eq!(v, 0);
        assert!(map.faulted());
    }

    #[test]
    fn unaligned_offset_maps_the_right_bytes() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        let data: Vec<u8> = (0..20000u32).map(|i| (i % 251) as u8).collect();
        f.write_all(&data).unwrap();
        let map = GuardedMap::new(f.as_file(), "t", 4099, 7000)
            .unwrap()
            .unwrap();
        assert_eq!(map.bytes(), &data[4099..11099]);
        let empty = GuardedMap::new(f.as_file(), "t", 5, 0).unwrap().unwrap();
        assert!(empty.bytes().is_empty());
    }
}
