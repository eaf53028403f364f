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
        swath_engine::testing::skip("skipped: planting another user's journal needs root");
        return;
    }
    let dir = Dir::new();
    let f = dir.write("secret", &vec![b'a'; 100_000]);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    // nobody's journal, planted in the (shared) directory.
    let j = dir.write(".secret.swath-journal", b"SWATHJ03 whatever nobody wants");
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

#[test]
fn journal_and_lock_hold_for_an_unprivileged_user() {
    use std::os::fd::AsRawFd;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        swath_engine::testing::skip(
            "skipped: running as nobody and planting another user's journal need root",
        );
        return;
    }
    let dir = Dir::new();
    // nobody's own directory and file.
    let home = dir.path("home");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(65534), Some(65534)).unwrap();
    let f = home.join("data");
    std::fs::write(&f, vec![b'a'; 50_000]).unwrap();
    std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
    let as_nobody = "exec setpriv --reuid=65534 --regid=65534 --clear-groups";
    let run = || {
        Command::new("/bin/sh")
            .arg("-c")
            .arg(format!(
                "{as_nobody} \"$0\" cipher --shift 3 --in-place home/data"
            ))
            .arg(swath_bin())
            .current_dir(dir.tmp.path())
            .output()
            .unwrap()
    };
    // A journal of a third user (65533) beside nobody's file is refused.
    let j = home.join(".data.swath-journal");
    std::fs::write(&j, b"SWATHJ03 forged").unwrap();
    std::fs::set_permissions(&j, std::fs::Permissions::from_mode(0o666)).unwrap();
    std::os::unix::fs::chown(&j, Some(65533), Some(65533)).unwrap();
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("belongs to user 65533"), "{err}");
    assert_eq!(std::fs::read(&f).unwrap(), vec![b'a'; 50_000]);
    std::fs::remove_file(&j).unwrap();
    // A run while another holds the file's lock refuses and leaves no journal.
    let holder = std::fs::File::open(&f).unwrap();
    // SAFETY: flock on a descriptor the File owns.
    assert_eq!(unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX) }, 0);
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("locked"), "{err}");
    assert!(!j.exists());
    drop(holder);
    // And once free, nobody's run transforms it.
    let out = run();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read(&f).unwrap(), vec![b'd'; 50_000]);
}

/// The journal and lock cases in a shared sticky directory (`/tmp`), for a victim that is
/// root and one that is nobody, with `fs.protected_symlinks` at 1 and at 0: another user's
/// journal planted as a link, or forged as a file, is refused and nothing is written through
/// it; a locked file is refused and leaves no journal; the victim's file named through
/// another user's link is refused exactly when the kernel would refuse to follow the link.
#[test]
fn journal_and_lock_cases_as_root_and_nobody_with_protected_symlinks_0_and_1() {
    use crate::util::{is_root, swath_as, ProtectedSymlinks};
    use std::os::fd::AsRawFd;
    if !is_root() {
        swath_engine::testing::skip("skipped: planting another user's files, acting as nobody and setting the sysctl need root");
        return;
    }
    let dir = Dir::new();
    let shared = dir.path("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let as_user = |path: &std::path::Path, uid: u32, mode: u32| {
        std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
        if mode != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    };
    let original = vec![b'a'; 70_000];
    for victim in [0u32, 65534] {
        for protected in ["1", "0"] {
            let Some(_guard) = ProtectedSymlinks::set(protected) else {
                panic!("root could not set fs.protected_symlinks");
            };
            let ctx = format!("victim {victim}, protected_symlinks={protected}");
            let data = shared.join("data");
            let journal = shared.join(".data.swath-journal");
            // Another file of the victim's, which a planted journal link points at.
            let other = dir.path(&format!("other-{victim}"));
            std::fs::write(&other, b"the victim's other file\n").unwrap();
            as_user(&other, victim, 0o600);
            let reset = || {
                let _ = std::fs::remove_file(&journal);
                std::fs::write(&data, &original).unwrap();
                as_user(&data, victim, 0o600);
            };
            let run = || {
                swath_as(
                    victim,
                    &shared,
                    &["cipher", "--shift", "3", "--in-place", "data"],
                )
            };
            let refused = |out: &std::process::Output, why: &str, case: &str| {
                let err = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(1), "{ctx}, {case}: {err}");
                assert_eq!(err.lines().count(), 1, "{ctx}, {case}: {err}");
                assert!(err.contains(why), "{ctx}, {case}: {err}");
                assert_eq!(std::fs::read(&data).unwrap(), original, "{ctx}, {case}");
            };

            // A journal planted as a link (uid 65533) to the victim's other file.
            reset();
            std::os::unix::fs::symlink(&other, &journal).unwrap();
            as_user(&journal, 65533, 0);
            refused(&run(), "symbolic link", "journal link");
            assert_eq!(
                std::fs::read(&other).unwrap(),
                b"the victim's other file\n",
                "{ctx}: written through the planted journal link"
            );

            // A journal forged as a file by uid 65533, well formed or not.
            reset();
            std::fs::write(&journal, b"SWATHJ03 forged by someone else").unwrap();
            as_user(&journal, 65533, 0o600);
            refused(&run(), "belongs to user 65533", "forged journal");

            // Another run holds the file's lock: refused, no journal made.
            reset();
            let holder = std::fs::File::open(&data).unwrap();
            // SAFETY: flock on a descriptor the File owns.
            assert_eq!(unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX) }, 0);
            refused(&run(), "locked", "locked file");
            assert!(!journal.exists(), "{ctx}: journal left by a refused run");
            drop(holder);

            // The victim's file named through another user's link in the shared directory.
            reset();
            let link = shared.join("link");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&data, &link).unwrap();
            as_user(&link, 65533, 0);
            let out = swath_as(
                victim,
                &shared,
                &["cipher", "--shift", "3", "--in-place", "link"],
            );
            if protected == "1" {
                refused(&out, "Permission denied", "planted link to the file");
            } else {
                assert!(out.status.success(), "{ctx}: {out:?}");
                assert_eq!(std::fs::read(&data).unwrap(), vec![b'd'; 70_000], "{ctx}");
            }
            std::fs::remove_file(&link).unwrap();

            // And with nothing planted, the victim's own run transforms the file and leaves
            // no journal.
            reset();
            let out = run();
            assert!(out.status.success(), "{ctx}: {out:?}");
            assert_eq!(std::fs::read(&data).unwrap(), vec![b'd'; 70_000], "{ctx}");
            let left: Vec<_> = std::fs::read_dir(&shared).unwrap().collect();
            assert_eq!(left.len(), 1, "{ctx}: {left:?}");
        }
    }
}
