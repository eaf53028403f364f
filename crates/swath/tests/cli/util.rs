//! Test helpers: a temporary directory, the swath binary under a tool's name, and running a
//! command to capture stdout, stderr and exit status for byte-for-byte comparison.

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A scratch directory with the swath binary linked as `cmp` inside it.
pub struct Dir {
    pub tmp: tempfile::TempDir,
}

impl Dir {
    pub fn new() -> Dir {
        let tmp = tempfile::tempdir().expect("temp dir");
        // Everyone may enter, so tests can run tools as an unprivileged user.
        std::fs::set_permissions(
            tmp.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        for tool in ["cmp", "wc", "grep"] {
            std::os::unix::fs::symlink(swath_bin(), tmp.path().join(tool)).unwrap();
        }
        Dir { tmp }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    pub fn write(&self, name: &str, data: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, data).unwrap();
        p
    }

    /// The swath binary invoked through the `cmp` link.
    pub fn swath_cmp(&self) -> PathBuf {
        self.path("cmp")
    }

    /// Directories whose `cmp` is GNU's and swath's, for running `cmp` from PATH (so both
    /// see argv[0] = "cmp" even through sh or setpriv).
    pub fn bin_dirs(&self) -> [PathBuf; 2] {
        let gnu = self.path("gnu-bin");
        if !gnu.exists() {
            std::fs::create_dir(&gnu).unwrap();
            std::os::unix::fs::symlink(gnu_cmp(), gnu.join("cmp")).unwrap();
            std::os::unix::fs::symlink("/usr/bin/wc", gnu.join("wc")).unwrap();
            std::os::unix::fs::symlink("/usr/bin/grep", gnu.join("grep")).unwrap();
        }
        [gnu, self.tmp.path().to_path_buf()]
    }
}

pub fn swath_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_swath"))
}

/// GNU cmp, which the differential tests need (CI installs diffutils).
pub fn gnu_cmp() -> PathBuf {
    let p = PathBuf::from("/usr/bin/cmp");
    assert!(
        p.exists(),
        "GNU cmp is required for the differential tests: apt-get install diffutils"
    );
    p
}

/// What a command did.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub status: Option<i32>,
}

impl From<std::process::Output> for Outcome {
    fn from(out: std::process::Output) -> Self {
        Outcome {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            status: out.status.code(),
        }
    }
}

/// Runs `program args` in `cwd` with `stdin` (a file, or nothing) and a fixed locale.
pub fn run(
    program: &Path,
    args: &[&OsStr],
    cwd: &Path,
    stdin: Option<&Path>,
    env: &[(&str, &str)],
) -> Outcome {
    // Both tools see argv[0] = "cmp", as when a script runs `cmp` from PATH.
    let mut cmd = Command::new(program);
    std::os::unix::process::CommandExt::arg0(&mut cmd, "cmp");
    cmd.args(args).current_dir(cwd).env_remove("LANGUAGE");
    for var in ["LC_ALL", "LC_MESSAGES", "LANG"] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    match stdin {
        Some(p) => cmd.stdin(std::fs::File::open(p).unwrap()),
        None => cmd.stdin(Stdio::null()),
    };
    cmd.output().expect("run command").into()
}

/// Runs GNU cmp and swath-as-cmp with the same arguments and requires identical outcomes.
pub fn same_as_gnu(dir: &Dir, args: &[&str]) -> Outcome {
    same_as_gnu_with(dir, args, None, &[])
}

pub fn same_as_gnu_with(
    dir: &Dir,
    args: &[&str],
    stdin: Option<&Path>,
    env: &[(&str, &str)],
) -> Outcome {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let gnu = run(&gnu_cmp(), &args, dir.tmp.path(), stdin, env);
    let ours = run(&dir.swath_cmp(), &args, dir.tmp.path(), stdin, env);
    assert_eq!(ours, gnu, "cmp {args:?} (env {env:?})");
    gnu
}

/// Runs the shell command `script` (which calls `cmp` or `wc` from PATH) once with GNU's
/// tools and once with swath's, and requires identical stdout, stderr and exit status.
pub fn same_as_gnu_sh(dir: &Dir, script: &str) -> Outcome {
    same_as_gnu_sh_env(dir, script, &[])
}

/// As [`same_as_gnu_sh`], with extra environment variables (a locale, for example).
pub fn same_as_gnu_sh_env(dir: &Dir, script: &str, env: &[(&str, &str)]) -> Outcome {
    let [gnu_dir, swath_dir] = dir.bin_dirs();
    let go = |bin_dir: &Path| {
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(script)
            .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
            .env_remove("LC_ALL")
            .env_remove("LANG")
            .envs(env.iter().copied())
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        Outcome::from(out)
    };
    let gnu = go(&gnu_dir);
    assert_eq!(go(&swath_dir), gnu, "sh -c {script:?}");
    gnu
}

/// Runs `swath ARGS` in the scratch directory.
pub fn swath(dir: &Dir, args: &[&str]) -> std::process::Output {
    Command::new(swath_bin())
        .args(args)
        .current_dir(dir.tmp.path())
        .output()
        .unwrap()
}

/// A tmpfs of `size` mounted for the test's lifetime (needs root; `None` otherwise).
pub struct SmallFs {
    pub path: PathBuf,
}

impl SmallFs {
    pub fn mount(dir: &Dir, size: &str) -> Option<SmallFs> {
        let path = dir.path("small");
        std::fs::create_dir(&path).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .status()
            .ok()?
            .success();
        ok.then_some(SmallFs { path })
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

const PROTECTED_SYMLINKS: &str = "/proc/sys/fs/protected_symlinks";

/// Serializes the tests that set `fs.protected_symlinks`: it is one setting for the whole
/// machine, and the tests of this binary run on several threads at once.
static SYSCTL_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `fs.protected_symlinks` set for the life of the guard (held alone: no other test sets
/// it meanwhile), the old value restored after.
pub struct ProtectedSymlinks {
    old: String,
    _lock: std::sync::MutexGuard<'static, ()>,
}

impl ProtectedSymlinks {
    /// Sets the sysctl to `value` ("0" or "1"); `None` when it cannot be (not root).
    pub fn set(value: &str) -> Option<ProtectedSymlinks> {
        let lock = SYSCTL_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let old = std::fs::read_to_string(PROTECTED_SYMLINKS).ok()?;
        std::fs::write(PROTECTED_SYMLINKS, value).ok()?;
        Some(ProtectedSymlinks { old, _lock: lock })
    }
}

impl Drop for ProtectedSymlinks {
    fn drop(&mut self) {
        let _ = std::fs::write(PROTECTED_SYMLINKS, self.old.trim());
    }
}

/// True when the tests run as root (they can then plant other users' files and act as them).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `swath ARGS` in `cwd` as user `uid` (through `setpriv` when that is not root).
pub fn swath_as(uid: u32, cwd: &Path, args: &[&str]) -> std::process::Output {
    let mut c = if uid == 0 {
        Command::new(swath_bin())
    } else {
        let mut c = Command::new("setpriv");
        c.arg(format!("--reuid={uid}"))
            .arg(format!("--regid={uid}"))
            .arg("--clear-groups")
            .arg(swath_bin());
        c
    };
    c.args(args).current_dir(cwd).output().unwrap()
}

/// Standard error without the line `swath logs summary` prints to name the log format it
/// recognised (`swath logs: format NAME (...): K of the first N lines fit`).
pub fn without_format_line(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| !(l.starts_with("swath logs: format ") && l.ends_with(" lines fit")))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Gives `cmd`'s process the default action for SIGINT, SIGTERM and SIGHUP, whatever the test
/// runner inherited: a test that sends one of them must not depend on how `cargo test` was
/// started (a background job of a non-interactive shell ignores SIGINT, and swath, as GNU tools
/// do, leaves an ignored signal ignored, so the signal would never arrive).
pub fn default_signals(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and only calls signal(2),
    // which is async-signal-safe, with valid signal numbers and SIG_DFL.
    unsafe {
        cmd.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        })
    }
}

/// A swath process started with `SWATH_PAUSE=POINT:FIFO` (see `swath_engine::pause`): it stops
/// at the point named until the test has done what the race needs.
pub struct Paused {
    pub child: std::process::Child,
    fifo: PathBuf,
    held: Option<std::fs::File>,
}

impl Paused {
    /// Starts `cmd` (its output captured) so that it waits at `point`, the FIFO made in `dir`.
    pub fn spawn(mut cmd: Command, dir: &Path, point: &str) -> Paused {
        let fifo = dir.join(format!(".pause-{point}"));
        let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(fifo.as_os_str()))
            .unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        let child = cmd
            .env("SWATH_PAUSE", format!("{point}:{}", fifo.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Paused {
            child,
            fifo,
            held: None,
        }
    }

    /// Waits until the process is at the point (true), or has ended without reaching it
    /// (false). The open of the FIFO for writing succeeds only once swath has opened it for
    /// reading, which it does at the point and nowhere else.
    pub fn reached(&mut self) -> bool {
        use std::os::unix::fs::OpenOptionsExt;
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&self.fifo)
            {
                Ok(f) => {
                    self.held = Some(f);
                    return true;
                }
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                    if self.child.try_wait().unwrap().is_some() {
                        return false;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => panic!("opening the pause FIFO: {e}"),
            }
        }
    }

    /// Lets the process go on, and waits for its end.
    pub fn resume(mut self) -> std::process::Output {
        self.held = None;
        self.child.wait_with_output().unwrap()
    }
}

/// `name` made in the directory `dir` (a directory, or a file holding `data`), relative to
/// the descriptor: no path is resolved, however deep `dir` is.
pub fn make_at(dir: &OwnedFd, name: &str, data: Option<&[u8]>) -> OwnedFd {
    let c = std::ffi::CString::new(name).unwrap();
    // SAFETY: mkdirat/openat with a live directory descriptor and a NUL-terminated name;
    // each result is checked before use.
    unsafe {
        let fd = match data {
            None => {
                assert_eq!(libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o755), 0);
                libc::openat(
                    dir.as_raw_fd(),
                    c.as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                )
            }
            Some(_) => libc::openat(
                dir.as_raw_fd(),
                c.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
                0o644 as libc::c_uint,
            ),
        };
        assert!(fd >= 0, "{name}: {}", std::io::Error::last_os_error());
        let fd = OwnedFd::from_raw_fd(fd);
        if let Some(d) = data {
            std::io::Write::write_all(&mut std::fs::File::from(fd.try_clone().unwrap()), d)
                .unwrap();
        }
        fd
    }
}

/// The directory at `p`, open (to make or read a tree relative to it).
pub fn open_dir(p: &Path) -> OwnedFd {
    std::fs::File::open(p).unwrap().into()
}
