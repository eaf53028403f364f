//! Outputs while another user moves things, and what a signal or the umask leaves: a
//! directory on the output's path swapped for a link to a root-only directory between the
//! moment swath opens its output and the moment it renames it into place (made to happen
//! every time with the pause points of `swath_engine::pause`), the same under an in-place
//! run's journal, a signal the moment a temporary name exists, and the modes of the files
//! `man --dir` and `completions --dir` write.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{default_signals, is_root, swath, swath_bin, Dir, Paused};

const NOBODY: u32 = 65534;

/// Runs the shell command `script` in `cwd` as user `nobody`, which must succeed.
fn as_nobody(cwd: &Path, script: &str) {
    let out = Command::new("setpriv")
        .arg(format!("--reuid={NOBODY}"))
        .arg(format!("--regid={NOBODY}"))
        .arg("--clear-groups")
        .args(["sh", "-c", script])
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "as nobody: {script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The scene of the races: `home` and `home/sub` belong to nobody (not sticky), with
/// nobody's file `home/sub/out`; `rootonly` is root's (0700) with root's file `out`.
struct Scene {
    dir: Dir,
    src: PathBuf,
    sub: PathBuf,
    rootonly: PathBuf,
}

const ROOTS: &[u8] = b"root's secret\n";
const NOBODYS: &[u8] = b"nobody's own file\n";
const SOURCE: &[u8] = b"what root copies\n";

impl Scene {
    fn new() -> Scene {
        let dir = Dir::new();
        let src = dir.write("src", SOURCE);
        let home = dir.path("home");
        let sub = home.join("sub");
        for d in [&home, &sub] {
            std::fs::create_dir(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::os::unix::fs::chown(d, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        std::fs::write(sub.join("out"), NOBODYS).unwrap();
        std::os::unix::fs::chown(sub.join("out"), Some(NOBODY), Some(NOBODY)).unwrap();
        let rootonly = dir.path("rootonly");
        std::fs::create_dir(&rootonly).unwrap();
        std::fs::set_permissions(&rootonly, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(rootonly.join("out"), ROOTS).unwrap();
        std::fs::set_permissions(rootonly.join("out"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        Scene {
            dir,
            src,
            sub,
            rootonly,
        }
    }

    /// Root's `swath cp SRC OUT`, stopped at the pause point `point`.
    fn copy_paused(&self, out: &Path, point: &str) -> Paused {
        let mut cmd = Command::new(swath_bin());
        cmd.arg("cp")
            .arg(&self.src)
            .arg(out)
            .current_dir(self.dir.tmp.path());
        let mut p = Paused::spawn(cmd, self.dir.tmp.path(), point);
        assert!(p.reached(), "swath never reached the pause point {point}");
        p
    }

    /// nobody swaps `home/sub`: moved to `home/sub.old`, a link to the root-only directory
    /// put in its place.
    fn swap_sub_for_link(&self) {
        as_nobody(
            self.dir.tmp.path(),
            &format!(
                "mv home/sub home/sub.old && ln -s '{}' home/sub",
                self.rootonly.display()
            ),
        );
    }

    /// The root-only directory holds root's file alone, untouched and root's.
    fn assert_rootonly_untouched(&self, ctx: &str) {
        let names: Vec<String> = std::fs::read_dir(&self.rootonly)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["out"],
            "{ctx}: the root-only directory holds {names:?}"
        );
        let out = self.rootonly.join("out");
        assert_eq!(
            std::fs::read(&out).unwrap(),
            ROOTS,
            "{ctx}: root's file replaced"
        );
        let m = std::fs::metadata(&out).unwrap();
        assert_eq!(
            (m.uid(), m.mode() & 0o777),
            (0, 0o600),
            "{ctx}: root's file"
        );
    }

    /// No temporary file anywhere in the scene.
    fn assert_no_temporary(&self, ctx: &str) {
        let mut left = Vec::new();
        let mut dirs = vec![self.dir.tmp.path().to_path_buf()];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    dirs.push(e.path());
                } else if e.file_name().to_string_lossy().contains("swath-tmp") {
                    left.push(e.path());
                }
            }
        }
        assert!(left.is_empty(), "{ctx}: left behind {left:?}");
    }
}

fn need_root() -> bool {
    if !is_root() {
        swath_engine::testing::skip("acting as another user (nobody) needs root");
        return false;
    }
    true
}

/// Root's `swath cp SRC home/sub/out`, into nobody's (non-sticky) directory, while nobody
/// swaps `sub` for a link to a root-only directory: the output goes into the directory
/// swath opened (now `home/sub.old`), as GNU cp's single open would; it replaced root's file
/// in the root-only directory with one owned by nobody.
#[test]
fn output_directory_swapped_for_a_link_while_writing() {
    if !need_root() {
        return;
    }
    let s = Scene::new();
    let p = s.copy_paused(&s.sub.join("out"), "output-created");
    s.swap_sub_for_link();
    let run = p.resume();
    let ctx = "cp into home/sub/out, sub swapped";
    assert!(
        run.status.success(),
        "{ctx}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    s.assert_rootonly_untouched(ctx);
    let old = s.dir.path("home/sub.old/out");
    assert_eq!(std::fs::read(&old).unwrap(), SOURCE, "{ctx}");
    assert_eq!(
        std::fs::metadata(&old).unwrap().uid(),
        NOBODY,
        "{ctx}: owner kept"
    );
    s.assert_no_temporary(ctx);
}

/// The same through a link of root's own that leads into nobody's directory: the link is
/// resolved once, its file's directory held from then on, so swapping a directory of the
/// resolved path later redirects nothing.
#[test]
fn output_through_a_link_whose_resolved_directory_is_swapped_while_writing() {
    if !need_root() {
        return;
    }
    let s = Scene::new();
    let link = s.dir.path("link");
    std::os::unix::fs::symlink(s.sub.join("out"), &link).unwrap();
    let p = s.copy_paused(&link, "output-created");
    s.swap_sub_for_link();
    let run = p.resume();
    let ctx = "cp to a link into home/sub, sub swapped";
    assert!(
        run.status.success(),
        "{ctx}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    s.assert_rootonly_untouched(ctx);
    assert_eq!(
        std::fs::read(s.dir.path("home/sub.old/out")).unwrap(),
        SOURCE,
        "{ctx}"
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    s.assert_no_temporary(ctx);
}

/// A directory of the link's resolved path swapped between the resolution and the opening
/// of that directory (for a link to the root-only directory, or for another directory):
/// one clear line naming the output, and nothing written anywhere.
#[test]
fn output_link_resolution_swapped_before_its_directory_is_opened() {
    if !need_root() {
        return;
    }
    for swap in ["link", "directory"] {
        let s = Scene::new();
        let link = s.dir.path("link");
        std::os::unix::fs::symlink(s.sub.join("out"), &link).unwrap();
        let p = s.copy_paused(&link, "output-resolved");
        match swap {
            "link" => s.swap_sub_for_link(),
            _ => as_nobody(
                s.dir.tmp.path(),
                "mv home/sub home/sub.old && mkdir home/sub && echo other > home/sub/out",
            ),
        }
        let run = p.resume();
        let ctx = format!("sub swapped for a {swap} after the link's resolution");
        let err = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{ctx}: {err}");
        assert_eq!(err.lines().count(), 1, "{ctx}: {err}");
        assert!(
            err.starts_with(&format!("swath cp: {}: ", link.display())),
            "{ctx}: {err}"
        );
        assert!(err.contains("changed"), "{ctx}: {err}");
        s.assert_rootonly_untouched(&ctx);
        assert_eq!(
            std::fs::read(s.dir.path("home/sub.old/out")).unwrap(),
            NOBODYS,
            "{ctx}"
        );
        if swap == "directory" {
            assert_eq!(
                std::fs::read(s.dir.path("home/sub/out")).unwrap(),
                b"other\n",
                "{ctx}"
            );
        }
        s.assert_no_temporary(&ctx);
    }
}

/// SIGTERM or SIGINT the moment the output's temporary name exists (linked, or created
/// where the filesystem has no unnamed files): the signal's handler was installed only
/// after that, so the whole output stayed behind as `.out.<pid>....swath-tmp`. Now the
/// signal ends the run with nothing left and the target untouched.
#[test]
fn signal_when_the_temporary_name_appears_leaves_nothing() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let dir = Dir::new();
        let src = dir.write("src", SOURCE);
        let out = dir.write("out", b"precious\n");
        let mut cmd = Command::new(swath_bin());
        default_signals(&mut cmd)
            .arg("cp")
            .arg(&src)
            .arg(&out)
            .current_dir(dir.tmp.path());
        let mut p = Paused::spawn(cmd, dir.tmp.path(), "output-temp-named");
        assert!(p.reached(), "swath never named its temporary file");
        // SAFETY: kill with the id of our own child, still running (paused).
        assert_eq!(unsafe { libc::kill(p.child.id() as i32, sig) }, 0);
        let run = p.resume();
        assert_eq!(run.status.signal(), Some(sig), "{run:?}");
        assert_eq!(std::fs::read(&out).unwrap(), b"precious\n");
        let mut names: Vec<String> = std::fs::read_dir(dir.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with(".pause-"))
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["cmp", "grep", "out", "src", "wc"],
            "signal {sig}: left behind"
        );
    }
}

/// The mode of every file in `dir`.
fn modes(dir: &Path) -> Vec<(String, u32)> {
    let mut m: Vec<(String, u32)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().mode() & 0o7777,
            )
        })
        .collect();
    m.sort();
    m
}

/// `man --dir` and `completions --dir` write their files with the umask's mode (0644 under
/// 022, 0600 under 077), as any installed file; they were 0600 whatever the umask, so the
/// pages and scripts installed were unreadable to other users.
#[test]
fn pages_and_completions_get_the_umasks_mode() {
    let dir = Dir::new();
    for (umask, want) in [("022", 0o644), ("077", 0o600)] {
        for what in ["man", "completions"] {
            let into = dir.path(&format!("{what}-{umask}"));
            let out = Command::new("sh")
                .arg("-c")
                .arg(format!("umask {umask} && exec \"$0\" {what} --dir \"$1\""))
                .arg(swath_bin())
                .arg(&into)
                .output()
                .unwrap();
            assert!(out.status.success(), "{what} --dir: {out:?}");
            let got = modes(&into);
            assert!(got.len() >= 5, "{what}: {got:?}");
            for (name, mode) in got {
                assert_eq!(
                    mode, want,
                    "{what} --dir under umask {umask}: {name} has mode {mode:o}"
                );
            }
        }
    }
    // Replacing an existing file keeps its mode, as any swath output does.
    let into = dir.path("man-022");
    std::fs::set_permissions(into.join("swath.1"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let into = into.to_str().unwrap().to_owned();
    let out = swath(&dir, &["man", "--dir", &into]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::metadata(dir.path("man-022/swath.1"))
            .unwrap()
            .mode()
            & 0o777,
        0o640
    );
}

/// Root's `swath cipher --in-place home/sub/f` (nobody's directory) while nobody swaps `sub`
/// for a link to a root-only directory that holds the journal of root's own interrupted
/// run on `rootonly/f`: the journal is removed, at the end, from the directory the run
/// opened, never from the root-only one (it was removed by path, and root's file lost its
/// recovery).
#[test]
fn in_place_journal_stays_in_the_directory_opened() {
    if !need_root() {
        return;
    }
    let s = Scene::new();
    std::fs::write(s.sub.join("f"), b"abc\n").unwrap();
    std::os::unix::fs::chown(s.sub.join("f"), Some(NOBODY), Some(NOBODY)).unwrap();
    let journal = s.rootonly.join(".f.swath-journal");
    std::fs::write(&journal, b"root's pending journal").unwrap();
    std::fs::write(s.rootonly.join("f"), ROOTS).unwrap();
    let mut cmd = Command::new(swath_bin());
    cmd.args(["cipher", "--shift", "1", "--in-place"])
        .arg(s.sub.join("f"))
        .current_dir(s.dir.tmp.path());
    let mut p = Paused::spawn(cmd, s.dir.tmp.path(), "inplace-journal-open");
    assert!(p.reached(), "swath never opened its journal");
    s.swap_sub_for_link();
    let run = p.resume();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        std::fs::read(&journal).unwrap(),
        b"root's pending journal",
        "root's journal removed"
    );
    assert_eq!(std::fs::read(s.rootonly.join("f")).unwrap(), ROOTS);
    let old = s.dir.path("home/sub.old");
    assert_eq!(std::fs::read(old.join("f")).unwrap(), b"bcd\x0b");
    assert!(!old.join(".f.swath-journal").exists(), "journal left");
}
