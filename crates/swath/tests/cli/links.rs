//! Outputs through symbolic links planted by other users in shared sticky directories
//! (`/tmp`): swath follows the kernel's `fs.protected_symlinks` rule, as a shell redirect and
//! GNU cp do, as root and as an unprivileged user, with the sysctl at 1 and at 0.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::util::{swath_bin, Dir};

const SYSCTL: &str = "/proc/sys/fs/protected_symlinks";

/// Sets `fs.protected_symlinks` for the life of the guard, restoring the old value after.
struct Sysctl(String);

impl Sysctl {
    fn set(value: &str) -> Option<Sysctl> {
        let old = std::fs::read_to_string(SYSCTL).ok()?;
        std::fs::write(SYSCTL, value).ok()?;
        Some(Sysctl(old))
    }
}

impl Drop for Sysctl {
    fn drop(&mut self) {
        let _ = std::fs::write(SYSCTL, self.0.trim());
    }
}

/// Runs `swath ARGS` as `uid` (through setpriv when that is not the current user).
fn swath_as(uid: u32, cwd: &Path, args: &[&str]) -> std::process::Output {
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

#[test]
fn output_link_planted_in_a_sticky_directory_follows_protected_symlinks() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: planting another user's link and setting the sysctl need root");
        return;
    }
    let dir = Dir::new();
    dir.write("src", b"what swath writes\n");
    dir.write(
        "access.log",
        b"1.2.3.4 - - [10/Oct/2023:13:55:36 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"a\"\n",
    );
    // A shared directory like /tmp, owned by root, sticky and world-writable.
    let shared = dir.path("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let commands: [&[&str]; 3] = [
        &["cp", "SRC", "OUT"],
        &["cipher", "--shift", "3", "SRC", "OUT"],
        &["logs", "summary", "--html", "OUT", "LOG"],
    ];
    // The victim runs as root and as nobody; the link is another user's (uid 65533).
    for victim in [0u32, 65534] {
        for protected in ["1", "0"] {
            let Some(_guard) = Sysctl::set(protected) else {
                panic!("root could not set {SYSCTL}");
            };
            // The victim's file, in a directory of the victim's own.
            let home = dir.path(&format!("home-{victim}"));
            let _ = std::fs::create_dir(&home);
            std::os::unix::fs::chown(&home, Some(victim), Some(victim)).unwrap();
            for args in commands {
                let target = home.join("target");
                std::fs::write(&target, b"precious\n").unwrap();
                std::os::unix::fs::chown(&target, Some(victim), Some(victim)).unwrap();
                let link = shared.join("out");
                let _ = std::fs::remove_file(&link);
                std::os::unix::fs::symlink(&target, &link).unwrap();
                std::os::unix::fs::lchown(&link, Some(65533), Some(65533)).unwrap();
                let args: Vec<&str> = args
                    .iter()
                    .map(|a| match *a {
                        "SRC" => dir.path("src").to_str().unwrap().to_owned(),
                        "LOG" => dir.path("access.log").to_str().unwrap().to_owned(),
                        "OUT" => link.to_str().unwrap().to_owned(),
                        other => other.to_owned(),
                    })
                    .map(|s| &*Box::leak(s.into_boxed_str()))
                    .collect();
                let out = swath_as(victim, dir.tmp.path(), &args);
                let err = String::from_utf8_lossy(&out.stderr);
                let ctx = format!("victim {victim}, protected_symlinks={protected}, {args:?}");
                if protected == "1" {
                    assert!(!out.status.success(), "{ctx}: followed the link");
                    assert_eq!(err.lines().count(), 1, "{ctx}: {err}");
                    assert!(err.contains("Permission denied"), "{ctx}: {err}");
                    assert!(err.contains("shared/out"), "{ctx}: {err}");
                    assert_eq!(std::fs::read(&target).unwrap(), b"precious\n", "{ctx}");
                } else {
                    assert!(out.status.success(), "{ctx}: {err}");
                    assert_ne!(std::fs::read(&target).unwrap(), b"precious\n", "{ctx}");
                }
                // The link itself is never replaced.
                assert!(std::fs::symlink_metadata(&link)
                    .unwrap()
                    .file_type()
                    .is_symlink());
            }
        }
    }
}
