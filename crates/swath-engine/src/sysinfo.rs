//! Facts about the machine and the page cache that the planner uses.
//!
//! - [`available_memory`]: `MemAvailable` from `/proc/meminfo`, lowered to the cgroup v2
//!   headroom (`memory.max - memory.current`) when the process runs under a tighter limit.
//! - [`residency`]: the fraction of a file range present in the page cache, estimated with
//!   `mincore(2)` on a sample of windows so that the check stays cheap on terabyte files.
//! - [`cores`]: the number of threads the process may run in parallel.
//! - [`rotational`] and [`io_threads`]: whether a file's block device is a spinning disk
//!   (`/sys/dev/block/MAJ:MIN/queue/rotational`, climbing from a partition to its disk),
//!   and so how many files to read from it at once (1 on a rotational device, 2 otherwise).

use std::fs::File;
use std::os::fd::AsRawFd;

/// Threads the process may run at once (affinity and cgroup CPU quota respected by std).
///
/// Asked once per process: the standard library reads the cgroup's CPU quota from `/proc`
/// and `/sys` on every call (three files opened), which was most of the per-file cost of
/// searching a thousand small files.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The system page size in bytes.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

/// Memory the process can use without swapping or hitting its cgroup limit, in bytes.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let avail = meminfo.as_deref().and_then(parse_mem_available);
    let cgroup = cgroup_headroom();
    match (avail, cgroup) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    }
}

fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn cgroup_headroom() -> Option<u64> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
    let max = std::fs::read_to_string(dir.join("memory.max")).ok()?;
    let max: u64 = max.trim().parse().ok()?; // "max" means unlimited: no headroom figure
    let current: u64 = std::fs::read_to_string(dir.join("memory.current"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(max.saturating_sub(current))
}

/// Windows sampled by [`residency`], and each window's length.
const SAMPLE_WINDOWS: u64 = 32;
const WINDOW_BYTES: u64 = 2 << 20;

/// Estimated fraction (0.0 to 1.0) of `file[offset..offset + len]` present in the page cache.
///
/// Ranges up to 64 MiB are checked whole; larger ones in 32 evenly spaced 2 MiB windows.
/// Returns `None` when the check is not possible (mapping or `mincore` failed).
pub fn residency(file: &File, offset: u64, len: u64) -> Option<f64> {
    if len == 0 {
        return Some(1.0);
    }
    let windows: Vec<(u64, u64)> = if len <= SAMPLE_WINDOWS * WINDOW_BYTES {
        vec![(offset, len)]
    } else {
        let stride = len / SAMPLE_WINDOWS;
        (0..SAMPLE_WINDOWS)
            .map(|i| (offset + i * stride, WINDOW_BYTES))
            .collect()
    };
    let page = page_size() as u64;
    let (mut resident, mut total) = (0u64, 0u64);
    let mut vec = Vec::new();
    for (start, wlen) in windows {
        let aligned = start / page * page;
        let span = (start - aligned + wlen) as usize;
        // SAFETY: a fresh private read-only mapping of a file we hold open; it is only passed
        // to mincore (never dereferenced) and unmapped before returning.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                aligned as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        let pages = span.div_ceil(page as usize);
        vec.resize(pages, 0u8);
        // SAFETY: `ptr` is a live mapping of `span` bytes and `vec` holds one byte per page.
        let rc = unsafe { libc::mincore(ptr, span, vec.as_mut_ptr()) };
        // SAFETY: unmapping the mapping created above, which nothing else references.
        unsafe { libc::munmap(ptr, span) };
        if rc != 0 {
            return None;
        }
        resident += vec.iter().filter(|&&b| b & 1 == 1).count() as u64;
        total += pages as u64;
    }
    Some(resident as f64 / total.max(1) as f64)
}

/// The device number of a file's file system, split as `(major, minor)` (glibc's encoding).
pub fn device_of(file: &File) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let dev = file.metadata().ok()?.dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    Some((major as u32, minor as u32))
}

/// Whether the block device `major:minor` is rotational, from the sysfs tree at `sysfs`
/// (`/sys` on a real system; a parameter so tests can build fake trees):
/// `dev/block/MAJ:MIN` leads to the device's directory; a partition has no `queue` of its
/// own, so its parent (the disk) is asked. `None` when there is no such device (a file on
/// tmpfs, overlayfs or a network file system) or the file says neither 0 nor 1. Virtual
/// disks report whatever their driver says.
pub fn rotational_in(sysfs: &std::path::Path, major: u32, minor: u32) -> Option<bool> {
    let dev = std::fs::canonicalize(sysfs.join(format!("dev/block/{major}:{minor}"))).ok()?;
    let candidates = [Some(dev.as_path()), dev.parent()];
    for dir in candidates.into_iter().flatten() {
        if let Ok(text) = std::fs::read_to_string(dir.join("queue/rotational")) {
            return match text.trim() {
                "1" => Some(true),
                "0" => Some(false),
                _ => None,
            };
        }
    }
    None
}

/// Whether the device holding `file` is rotational ([`rotational_in`] on `/sys`).
pub fn rotational(file: &File) -> Option<bool> {
    let (major, minor) = device_of(file)?;
    rotational_in(std::path::Path::new("/sys"), major, minor)
}

/// Files to read at once from the device holding `file`: 1 on a rotational device (two
/// readers make it seek), 2 otherwise (an SSD, or a device that cannot be told).
pub fn io_threads(file: &File) -> usize {
    match rotational(file) {
        Some(true) => 1,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn parses_meminfo() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:    1000 kB\n";
        assert_eq!(parse_mem_available(text), Some(1_024_000));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn machine_facts_are_sane() {
        assert!(cores() >= 1);
        assert!(page_size() >= 4096);
        assert!(available_memory().unwrap_or(1) > 0);
    }

    #[test]
    fn freshly_written_file_is_resident() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.flush().unwrap();
        let r = residency(f.as_file(), 0, 1 << 20).unwrap();
        assert!(r > 0.9, "residency {r}");
    }

    #[test]
    fn sparse_hole_is_not_resident() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(1 << 30).unwrap();
        let r = residency(f.as_file(), 0, 1 << 30).unwrap();
        assert!(r < 0.1, "residency {r}");
    }

    /// A fake sysfs: a disk `sda` (8:0) with a partition `sda1` (8:1), a device-mapper
    /// volume `dm-0` (253:0) with its own queue, and a device whose file says "x".
    fn fake_sysfs(rot_disk: &str, rot_dm: &str) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let disk = r.join("devices/pci0000:00/host0/block/sda");
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::create_dir_all(disk.join("sda1")).unwrap();
        std::fs::write(disk.join("queue/rotational"), rot_disk).unwrap();
        let dm = r.join("devices/virtual/block/dm-0");
        std::fs::create_dir_all(dm.join("queue")).unwrap();
        std::fs::write(dm.join("queue/rotational"), rot_dm).unwrap();
        let odd = r.join("devices/virtual/block/odd");
        std::fs::create_dir_all(odd.join("queue")).unwrap();
        std::fs::write(odd.join("queue/rotational"), "x\n").unwrap();
        std::fs::create_dir_all(r.join("dev/block")).unwrap();
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(target, r.join("dev/block").join(name)).unwrap()
        };
        link("../../devices/pci0000:00/host0/block/sda", "8:0");
        link("../../devices/pci0000:00/host0/block/sda/sda1", "8:1");
        link("../../devices/virtual/block/dm-0", "253:0");
        link("../../devices/virtual/block/odd", "7:7");
        root
    }

    #[test]
    fn rotational_devices_are_told_from_a_sysfs_tree() {
        let t = fake_sysfs("1\n", "0\n");
        assert_eq!(rotational_in(t.path(), 8, 0), Some(true));
        assert_eq!(
            rotational_in(t.path(), 8, 1),
            Some(true),
            "a partition asks its disk"
        );
        assert_eq!(rotational_in(t.path(), 253, 0), Some(false));
        assert_eq!(rotational_in(t.path(), 7, 7), None);
        assert_eq!(rotational_in(t.path(), 0, 42), None, "no such device");
        let t = fake_sysfs("0\n", "1\n");
        assert_eq!(rotational_in(t.path(), 8, 1), Some(false));
        assert_eq!(rotational_in(t.path(), 253, 0), Some(true));
    }

    #[test]
    fn io_threads_is_one_or_two() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let n = io_threads(f.as_file());
        assert!(n == 1 || n == 2);
        assert_eq!(n == 1, rotational(f.as_file()) == Some(true));
    }
}
