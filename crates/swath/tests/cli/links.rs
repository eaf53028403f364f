//! Outputs through symbolic links planted by other users in shared sticky directories
//! (`/tmp`): swath follows the kernel's `fs.protected_symlinks` rule, as a shell redirect and
//! GNU cp do, as root and as an unprivileged user, with the sysctl at 1 and at 0.

use std::os::unix::fs::PermissionsExt;

use crate::util::{is_root, swath_as, Dir, ProtectedSymlinks};

/// How the victim names the output: the planted link itself, or a link of the victim's own
/// that leads to it.
#[derive(Clone, Copy, Debug)]
enum Named {
    PlantedLink,
    OwnLinkToPlantedLink,
}

/// Every command that writes an output, as root and as nobody, with the sysctl at 1 and
/// at 0: another user's link in a sticky world-writable directory is refused exactly when
/// the kernel would refuse to follow it, and its target is then untouched.
fn planted_links_follow_protected_symlinks(named: Named) {
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
    let commands: [&[&str]; 4] = [
        &["cp", "SRC", "OUT"],
        &["cipher", "--shift", "3", "SRC", "OUT"],
        &["logs", "summary", "--html", "OUT", "LOG"],
        &["gen", "text", "100", "OUT", "--seed", "1"],
    ];
    // The victim runs as root and as nobody; the link is another user's (uid 65533).
    for victim in [0u32, 65534] {
        for protected in ["1", "0"] {
            let Some(_guard) = ProtectedSymlinks::set(protected) else {
                panic!("root could not set fs.protected_symlinks");
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
                let out = match named {
                    Named::PlantedLink => link.clone(),
                    Named::OwnLinkToPlantedLink => {
                        let own = home.join("own-link");
                        let _ = std::fs::remove_file(&own);
                        std::os::unix::fs::symlink(&link, &own).unwrap();
                        std::os::unix::fs::lchown(&own, Some(victim), Some(victim)).unwrap();
                        own
                    }
                };
                let args: Vec<&str> = args
                    .iter()
                    .map(|a| match *a {
                        "SRC" => dir.path("src").to_str().unwrap().to_owned(),
                        "LOG" => dir.path("access.log").to_str().unwrap().to_owned(),
                        "OUT" => out.to_str().unwrap().to_owned(),
                        other => other.to_owned(),
                    })
                    .map(|s| &*Box::leak(s.into_boxed_str()))
                    .collect();
                let run = swath_as(victim, dir.tmp.path(), &args);
                let err = String::from_utf8_lossy(&run.stderr);
                let ctx =
                    format!("{named:?}, victim {victim}, protected_symlinks={protected}, {args:?}");
                if protected == "1" {
                    assert!(!run.status.success(), "{ctx}: followed the link");
                    assert_eq!(err.lines().count(), 1, "{ctx}: {err}");
                    assert!(err.contains("Permission denied"), "{ctx}: {err}");
                    assert!(err.contains("shared/out"), "{ctx}: {err}");
                    assert_eq!(std::fs::read(&target).unwrap(), b"precious\n", "{ctx}");
                } else {
                    assert!(run.status.success(), "{ctx}: {err}");
                    assert_ne!(std::fs::read(&target).unwrap(), b"precious\n", "{ctx}");
                }
                // The links themselves are never replaced.
                for l in [&link, &out] {
                    assert!(std::fs::symlink_metadata(l)
                        .unwrap()
                        .file_type()
                        .is_symlink());
                }
                // Nothing else is left in the victim's directory or the shared one.
                let mut left: Vec<_> = std::fs::read_dir(&home)
                    .unwrap()
                    .chain(std::fs::read_dir(&shared).unwrap())
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|n| !["target", "own-link", "out"].contains(&n.as_str()))
                    .collect();
                left.sort();
                assert!(left.is_empty(), "{ctx}: left behind {left:?}");
            }
        }
    }
}

#[test]
fn output_link_planted_in_a_sticky_directory_follows_protected_symlinks() {
    if !is_root() {
        swath_engine::testing::skip(
            "skipped: planting another user's link and setting the sysctl need root",
        );
        return;
    }
    planted_links_follow_protected_symlinks(Named::PlantedLink);
}

/// A link of the user's own that leads to another user's link in a shared sticky
/// directory: the kernel applies its rule to every link it follows, so must swath (it
/// checked the first link only, and root's cp, cipher, logs --html and gen replaced the
/// planted link's target where GNU cp and a shell redirect are refused).
#[test]
fn output_link_chain_through_a_sticky_directory_follows_protected_symlinks() {
    if !is_root() {
        swath_engine::testing::skip(
            "skipped: planting another user's link and setting the sysctl need root",
        );
        return;
    }
    planted_links_follow_protected_symlinks(Named::OwnLinkToPlantedLink);
}
