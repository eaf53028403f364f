//! `swath demo` keeps its files in a directory of the user's own, never in a shared one
//! another user could have prepared.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::Command;

use crate::util::{swath_bin, Dir};

fn demo(dir: &Dir, args: &[&str], env: &[(&str, &std::path::Path)]) -> std::process::Output {
    let mut c = Command::new(swath_bin());
    c.arg("demo")
        .args(["--size", "4K", "--runs", "1"])
        .args(args)
        .current_dir(dir.tmp.path())
        .env_remove("XDG_CACHE_HOME");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn demo_uses_a_private_cache_directory_by_default() {
    let dir = Dir::new();
    let cache = dir.path("cache");
    let out = demo(&dir, &[], &[("XDG_CACHE_HOME", &cache)]);
    assert!(out.status.success(), "{out:?}");
    let d = cache.join("swath").join("demo");
    let m = std::fs::symlink_metadata(&d).unwrap();
    assert!(m.is_dir());
    assert_eq!(m.mode() & 0o077, 0, "mode {:o}", m.mode());
    assert!(d.join("text-4096.a").exists());
    assert!(String::from_utf8_lossy(&out.stdout).contains(&d.display().to_string()));
}

#[test]
fn demo_refuses_a_directory_planted_by_another_user() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: giving a directory to another user needs root");
        return;
    }
    let dir = Dir::new();
    let planted = dir.path("planted");
    std::fs::create_dir(&planted).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
    // The other user's link, waiting for the demo to write through it.
    let victim = dir.write("victim", b"precious");
    std::os::unix::fs::symlink(&victim, planted.join("text-4096.a")).unwrap();
    let out = demo(&dir, &["--dir", planted.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not by you"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn demo_refuses_a_directory_that_is_a_link_or_open_to_others() {
    let dir = Dir::new();
    let real = dir.path("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = demo(&dir, &["--dir", link.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"));
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = demo(&dir, &["--dir", real.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("others may write"));
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
}
