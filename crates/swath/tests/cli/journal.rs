//! The in-place journal under a hostile neighbour: planted or forged journals, concurrent
//! runs, and runs that fail before changing anything.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::util::{swath_bin, Dir};

fn in_place(dir: &Dir, prefix: &str, file: &str) -> std::process::Output {
    Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "{prefix} exec \"$0\" cipher --shift 3 --in-place \"$1\""
        ))
        .arg(swath_bin())
        .arg(file)
        .current_dir(dir.tmp.path())
        .output()
        .unwrap()
}

#[test]
fn journal_forged_by_another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: planting another user's journal needs root");
        return;
    }
    let dir = Dir::new();
    let f = dir.write("secret", &vec![b'a'; 100_000]);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    // nobody's journal, planted in the (shared) directory.
    let j = dir.write(".secret.swath-journal", b"SWATHJ02 whatever nobody wants");
    std::os::unix::fs::chown(&j, Some(65534), Some(65534)).unwrap();
    let out = in_place(&dir, "", "secret");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("belongs to user 65534"), "{err}");
    assert_eq!(std::fs::read(&f).unwrap(), vec![b'a'; 100_000]);
}

#[test]
fn journal_is_removed_when_a_run_fails_before_changing_anything() {
    let dir = Dir::new();
    let f = dir.write("f", &vec![b'a'; 200_000]);
    // The journal's copy of the first block goes past a 64 KiB file-size limit.
    let out = in_place(&dir, "ulimit -f 64;", "f");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("File too large"), "{err}");
    assert_eq!(std::fs::read(&f).unwrap(), vec![b'a'; 200_000]);
    assert!(
        !dir.path(".f.swath-journal").exists(),
        "journal left behind"
    );
    // And the next run is not blocked by it.
    let out = in_place(&dir, "", "f");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read(&f).unwrap(), vec![b'd'; 200_000]);
}
