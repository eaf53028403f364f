//! The machine a benchmark ran on, recorded beside its figures so that results from two
//! machines are never compared blind: CPU model (`/proc/cpuinfo`), logical CPUs online,
//! memory (`/proc/meminfo`), kernel (`uname(2)`) and the file system of the data directory
//! (`statfs(2)`, where the timed files are written).
//!
//! Every fact is best effort: a fact that cannot be read is `None` (`null` in JSON, empty
//! in CSV, "unknown" in Markdown), never an error that loses the measurements.

use std::ffi::CStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::Serialize;

/// What the benchmark ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Machine {
    /// The CPU's model name, as `/proc/cpuinfo` gives it.
    pub cpu_model: Option<String>,
    /// Logical CPUs online (hardware threads).
    pub cores: Option<u64>,
    /// Total memory, bytes (`MemTotal`).
    pub memory_bytes: Option<u64>,
    /// Kernel name, release and architecture (`Linux 6.1.0-18-amd64 x86_64`).
    pub kernel: Option<String>,
    /// File system type of the data directory (`ext4`, `xfs`, `tmpfs`, ...).
    pub filesystem: Option<String>,
}

/// `/proc` files are small, but a hostile or odd `/proc` (a bind mount, a test) must not
/// make the recorder read without bound.
const MAX_PROC_BYTES: u64 = 8 << 20;

fn read_proc(path: &str) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_PROC_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

impl Machine {
    /// Reads the facts of this machine; `data_dir` is where the benchmark writes its files.
    pub fn detect(data_dir: &Path) -> Machine {
        let cpuinfo = read_proc("/proc/cpuinfo");
        let meminfo = read_proc("/proc/meminfo");
        Machine {
            cpu_model: cpuinfo.as_deref().and_then(cpu_model),
            cores: online_cpus(),
            memory_bytes: meminfo.as_deref().and_then(mem_total),
            kernel: kernel(),
            filesystem: filesystem(data_dir),
        }
    }

    /// One line for people: `AMD EPYC 7B13, 2 cores, 7.8 GiB, Linux 6.1.0 x86_64, ext4`.
    pub fn describe(&self) -> String {
        let unknown = || "unknown".to_string();
        format!(
            "{}, {} cores, {} memory, {}, {} file system",
            self.cpu_model
                .clone()
                .unwrap_or_else(|| "unknown CPU".into()),
            self.cores.map_or_else(unknown, |c| c.to_string()),
            self.memory_bytes.map_or_else(unknown, gib),
            self.kernel
                .clone()
                .unwrap_or_else(|| "unknown kernel".into()),
            self.filesystem.clone().unwrap_or_else(unknown),
        )
    }
}

/// Bytes as GiB with one decimal.
pub fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// The first `model name` (x86) or, failing that, `Hardware`/`Processor`/`cpu model`
/// (ARM, MIPS) line's value.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Hardware", "Processor", "cpu model", "cpu"] {
        let found = cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
        });
        if let Some(v) = found {
            // Collapse the runs of blanks some firmware pads the name with.
            return Some(v.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    None
}

fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

fn online_cpus() -> Option<u64> {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    (n > 0).then_some(n as u64)
}

fn kernel() -> Option<String> {
    // SAFETY: uname fills the zeroed struct we own; on success each field is a
    // NUL-terminated string inside its fixed array (POSIX sizes them to hold the NUL).
    let u = unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return None;
        }
        u
    };
    let field = |f: &[libc::c_char]| {
        // SAFETY: `f` is one of utsname's arrays, NUL-terminated by uname (see above).
        unsafe { CStr::from_ptr(f.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    Some(format!(
        "{} {} {}",
        field(&u.sysname),
        field(&u.release),
        field(&u.machine)
    ))
}

fn filesystem(dir: &Path) -> Option<String> {
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs writes into the zeroed struct we own; `c` is a valid C string.
    let kind = unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        st.f_type as i64
    };
    Some(fs_name(kind))
}

/// The name of a `statfs` magic number (linux/magic.h), or its hexadecimal value.
fn fs_name(magic: i64) -> String {
    let name = match magic as u32 {
        0xEF53 => "ext4", // ext2, ext3 and ext4 share the magic; ext4 is the one in use today
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x794C_7630 => "overlayfs",
        0x2FC1_2FC1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x6969 => "nfs",
        0xFF53_4D42 => "cifs",
        0xFE53_4D42 => "smb2",
        0x4D44 => "vfat",
        0x5346_544E => "ntfs",
        0x7366_746E => "ntfs3",
        0x2011_BAB0 => "exfat",
        0x6573_5546 => "fuse",
        0x6264_6976 | 0x0102_1997 => "9p",
        0x8584_58F6 => "ramfs",
        0xCA45_1A4E => "bcachefs",
        0x5265_4973 => "reiserfs",
        0x3153_464A => "jfs",
        0x7375_7245 => "coda",
        0x0027_E0EB => "cgroup",
        _ => return format!("0x{:x}", magic as u64 & 0xFFFF_FFFF),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_and_memory_come_from_their_lines() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC   7B13 64-Core Processor\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n";
        assert_eq!(
            cpu_model(cpuinfo).as_deref(),
            Some("AMD EPYC 7B13 64-Core Processor")
        );
        assert_eq!(
            cpu_model("processor : 0\nHardware : BCM2835\n").as_deref(),
            Some("BCM2835")
        );
        assert_eq!(cpu_model("processor : 0\n"), None);
        assert_eq!(
            mem_total("MemTotal:        8000000 kB\nMemFree: 1 kB\n"),
            Some(8_192_000_000)
        );
        assert_eq!(mem_total("MemTotal: lots kB\n"), None);
        assert_eq!(mem_total("MemTotal: 99999999999999999999 kB\n"), None);
    }

    #[test]
    fn this_machine_is_described() {
        let dir = tempfile::tempdir().unwrap();
        let m = Machine::detect(dir.path());
        assert!(m.cores.is_some_and(|c| c >= 1));
        assert!(m.memory_bytes.is_some_and(|b| b > 0));
        assert!(m.kernel.as_deref().is_some_and(|k| k.starts_with("Linux ")));
        assert!(m.filesystem.is_some());
        assert_eq!(fs_name(0x0102_1994), "tmpfs");
        assert_eq!(fs_name(0x1234), "0x1234");
        assert_eq!(Machine::detect(Path::new("/no/such/dir")).filesystem, None);
    }
}
