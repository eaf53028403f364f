//! `grep -r`'s walk of a tree as GNU grep's `fts` walks it: through directory descriptors,
//! each directory opened relative to its parent without following a link, so that another
//! user swapping a directory for a link while root's grep runs cannot lead it elsewhere,
//! and so that a tree deeper than PATH_MAX is searched whole.

use std::process::Command;

use crate::util::{is_root, make_at, open_dir, same_as_gnu_sh_env, Dir, Paused};

const C: &[(&str, &str)] = &[("LC_ALL", "C")];

/// Root's `grep -r` while the owner of a directory of the tree swaps it for a link to a
/// root-only directory, after the walk has read the directory holding it and before it
/// opens it: the link is not followed, so the root-only file is never read. GNU grep 3.8,
/// stopped by a debugger at the same point (its `openat` of the directory) and given the
/// same swap, opens the link with `O_NOFOLLOW | O_DIRECTORY`, prints `grep: t/sub: Not a
/// directory` and the other matches, and exits with status 2: swath does the same.
#[test]
fn grep_r_never_follows_a_directory_swapped_for_a_link_during_the_walk() {
    if !is_root() {
        swath_engine::testing::skip("swapping another user's directory needs root");
        return;
    }
    let dir = Dir::new();
    let secret = dir.path("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("key"), "needle: root's only\n").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let t = dir.path("t");
    std::fs::create_dir_all(t.join("sub")).unwrap();
    std::fs::write(t.join("a"), "needle top\n").unwrap();
    std::fs::write(t.join("sub/f"), "needle sub\n").unwrap();
    for p in ["t", "t/a", "t/sub", "t/sub/f"] {
        std::os::unix::fs::chown(dir.path(p), Some(65534), Some(65534)).unwrap();
    }
    // The tree has one directory below its root: the walk pauses once, before opening it.
    let mut cmd = Command::new(dir.path("grep"));
    cmd.args(["-r", "needle", "t"])
        .current_dir(dir.tmp.path())
        .env("LC_ALL", "C");
    let mut run = Paused::spawn(cmd, dir.tmp.path(), "walk-enter-dir");
    assert!(
        run.reached(),
        "grep ended without pausing before a directory"
    );
    // nobody, who owns t, swaps its directory for a link to root's.
    let swap = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sh",
            "-c",
            "mv t/sub t/moved && ln -s ../secret t/sub",
        ])
        .current_dir(dir.tmp.path())
        .status()
        .unwrap();
    assert!(swap.success());
    let out = run.resume();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("root's only"),
        "root's file was read: {stdout}"
    );
    assert_eq!(stdout, "t/a:needle top\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "grep: t/sub: Not a directory\n"
    );
    assert_eq!(out.status.code(), Some(2));
}

/// A tree 2,100 directories deep (paths of 6,300 bytes, past PATH_MAX), made relative to
/// descriptors: `grep -r` searches it whole, with GNU grep's output, names and status.
#[test]
fn grep_r_searches_a_tree_deeper_than_path_max_as_gnu_grep_does() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path("deep")).unwrap();
    let mut at = open_dir(&dir.path("deep"));
    for depth in 1..=2100 {
        if [1, 700, 1400, 2100].contains(&depth) {
            make_at(
                &at,
                "f",
                Some(format!("needle at {depth}\nhay\n").as_bytes()),
            );
        }
        if depth == 2050 {
            make_at(&at, "other", Some(b"hay only\n"));
        }
        at = make_at(&at, "dd", None);
    }
    drop(at);
    // Each case's output reduced to its status and checksums (the names are
    // thousands of bytes long): equal sums, equal bytes.
    let summed = |cmd: &str| format!("{cmd} >o 2>e; echo $?; cksum o e; rm o e");
    for cmd in [
        "grep -r needle deep",
        "grep -rc needle deep",
        "grep -rl hay deep",
        "grep -rL needle deep",
        "cd deep && grep -r needle .",
    ] {
        same_as_gnu_sh_env(&dir, &summed(cmd), C);
    }
    // The output really holds every file: four matches, the last of them 6,300 bytes in.
    let o = same_as_gnu_sh_env(&dir, "grep -r needle deep | awk '{ print length($0) }'", C);
    assert_eq!(o.stdout, "18\n2117\n4218\n6318\n");
    // The tree is too deep for removal by path: rm's walk is by descriptors too.
    assert!(Command::new("rm")
        .args(["-rf", "deep"])
        .current_dir(dir.tmp.path())
        .status()
        .unwrap()
        .success());
}
