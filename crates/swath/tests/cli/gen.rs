//! `swath gen`: reproducible files of the requested size, mutations that GNU cmp confirms.

use crate::util::{same_as_gnu, swath, Dir};

#[test]
fn text_then_mutate_plants_what_it_says() {
    let dir = Dir::new();
    assert!(swath(&dir, &["gen", "text", "3M", "a", "--seed", "4"])
        .status
        .success());
    assert_eq!(std::fs::metadata(dir.path("a")).unwrap().len(), 3 << 20);
    assert!(swath(&dir, &["gen", "text", "3M", "a2", "--seed", "4"])
        .status
        .success());
    assert_eq!(
        std::fs::read(dir.path("a")).unwrap(),
        std::fs::read(dir.path("a2")).unwrap()
    );
    let out = swath(
        &dir,
        &[
            "gen", "mutate", "a", "b", "--diffs", "50", "--at", "1000", "--seed", "2",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let gnu = same_as_gnu(&dir, &["-l", "a", "b"]);
    assert_eq!(gnu.stdout.lines().count(), 50);
    assert!(gnu
        .stdout
        .lines()
        .any(|l| l.trim_start().starts_with("1001 ")));
    assert!(swath(
        &dir,
        &[
            "gen",
            "mutate",
            "a",
            "c",
            "--diffs",
            "0",
            "--truncate",
            "1M"
        ]
    )
    .status
    .success());
    let gnu = same_as_gnu(&dir, &["a", "c"]);
    // Every 1 MiB chunk of generated text ends with a newline, so GNU says "line N".
    assert!(
        gnu.stderr
            .starts_with("cmp: EOF on c after byte 1048576, line "),
        "{gnu:?}"
    );
    assert_eq!(gnu.status, Some(1));
}

#[test]
fn bad_arguments_are_reported() {
    let dir = Dir::new();
    let out = swath(&dir, &["gen", "text", "12Q", "a"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("swath gen: invalid size '12Q' ("),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let out = swath(&dir, &["gen", "mutate", "nope", "b"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope: No such file or directory"));
    assert!(!dir.path("b").exists());
}

#[test]
fn generated_into_a_pipe_is_the_same_bytes() {
    // `/dev/stdout` names the pipe the test reads: written as a stream, not replaced.
    let dir = Dir::new();
    for kind in ["text", "log"] {
        assert!(swath(&dir, &["gen", kind, "3M", "file", "--seed", "9"])
            .status
            .success());
        let piped = swath(&dir, &["gen", kind, "3M", "/dev/stdout", "--seed", "9"]);
        assert!(
            piped.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&piped.stderr)
        );
        assert_eq!(
            piped.stdout,
            std::fs::read(dir.path("file")).unwrap(),
            "{kind}"
        );
    }
}

#[test]
fn impossible_sizes_and_own_input_are_refused() {
    let dir = Dir::new();
    for args in [
        &["gen", "text", "1E", "big"][..],
        &["gen", "log", "1E", "big"][..],
    ] {
        let out = swath(&dir, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("No space left on device"), "{args:?}: {err}");
        assert!(!dir.path("big").exists());
    }
    dir.write("t", b"hello world\n");
    let out = swath(&dir, &["gen", "mutate", "t", "t", "--diffs", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(dir.path("t")).unwrap(), b"hello world\n");
    let out = swath(&dir, &["gen", "mutate", "t", "m", "--extend", "1E"]);
    assert_eq!(out.status.code(), Some(1));
    let names: Vec<String> = std::fs::read_dir(dir.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n == "m" || n.contains("swath-tmp")),
        "nothing is left behind: {names:?}"
    );
}

/// `gen mutate` with revision edits writes the library's revision (an independent in-memory
/// oracle), the same bytes for the same seed; bad values and mixed modes are refused.
#[test]
fn mutate_makes_revisions_with_realistic_edits() {
    use swath_gen::edits::{revise_naive, Revision};
    let dir = Dir::new();
    assert!(swath(&dir, &["gen", "text", "2M", "a", "--seed", "5"])
        .status
        .success());
    let old = std::fs::read(dir.path("a")).unwrap();
    let args = [
        "gen",
        "mutate",
        "a",
        "b",
        "--insertions",
        "3",
        "--deletions",
        "2",
        "--moves",
        "2",
        "--duplicates",
        "1",
        "--zero-runs",
        "2",
        "--edit-len",
        "20K",
        "--noise",
        "500",
        "--seed",
        "9",
    ];
    let o = swath(&dir, &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want = revise_naive(
        &old,
        &Revision {
            insertions: 3,
            deletions: 2,
            moves: 2,
            duplicates: 1,
            zero_runs: 2,
            max_len: 20 << 10,
            noise: 500,
            seed: 9,
        },
    );
    let got = std::fs::read(dir.path("b")).unwrap();
    assert!(got == want, "the revision differs from the oracle");
    assert_ne!(got, old);
    let mut again = args;
    again[3] = "c";
    assert!(swath(&dir, &again).status.success());
    assert!(std::fs::read(dir.path("c")).unwrap() == got);
    for (bad, what) in [
        (vec!["--insertions", "1", "--edit-len", "0"], "edit length"),
        (
            vec!["--insertions", "1", "--at", "5"],
            "cannot be used with",
        ),
        (vec!["--noise", "x"], "invalid size"),
    ] {
        let mut a = vec!["gen", "mutate", "a", "d"];
        a.extend(bad);
        let o = swath(&dir, &a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(what), "{what}: {err}");
        assert!(!dir.path("d").exists());
    }
}
