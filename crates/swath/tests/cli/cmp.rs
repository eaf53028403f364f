//! `swath cmp` against GNU cmp, byte for byte: generated pairs under every option, engine
//! setting and locale, then the edge cases (empty, missing, directory, unreadable, FIFO,
//! stdin, sparse files over 4 GiB, files truncated while compared).

use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::process::Command;

use proptest::prelude::*;
use swath_gen::{Mutation, Resize};

use crate::util::{run, same_as_gnu, same_as_gnu_sh, same_as_gnu_with, swath_bin, Dir, Outcome};

/// Engine settings every differential case is repeated under.
const ENGINE_VARIANTS: &[&[&str]] = &[
    &[],
    &["--threads", "1"],
    &["--threads", "-1"],
    &[
        "--threads",
        "3",
        "--block-size",
        "4096",
        "--strategy",
        "pread",
    ],
    &[
        "--threads",
        "2",
        "--block-size",
        "1000",
        "--strategy",
        "mmap",
    ],
    &[
        "--threads",
        "4",
        "--block-size",
        "777",
        "--layout",
        "stripes",
    ],
    &["--strategy", "read", "--block-size", "100"],
    &[
        "--threads",
        "3",
        "--layout",
        "ranges",
        "--strategy",
        "pread",
        "--block-size",
        "999",
    ],
];

/// Runs GNU cmp with `args`, and swath with `args` under every engine setting.
fn same_as_gnu_everywhere(dir: &Dir, args: &[&str]) -> Outcome {
    let gnu = same_as_gnu(dir, args);
    for extra in ENGINE_VARIANTS {
        let mut all: Vec<&str> = extra.to_vec();
        all.extend_from_slice(args);
        let all_os: Vec<&std::ffi::OsStr> = all.iter().map(std::ffi::OsStr::new).collect();
        let ours = run(&dir.swath_cmp(), &all_os, dir.tmp.path(), None, &[]);
        assert_eq!(ours, gnu, "swath cmp {all:?}");
    }
    gnu
}

/// A text pair: `a` (200 KB of generated text) and mutated copies.
fn text_pair_dir() -> Dir {
    let dir = Dir::new();
    swath_gen::text(&dir.path("a"), 200_000, 5).unwrap();
    let mutate = |name: &str, m: Mutation| {
        swath_gen::mutate(&dir.path("a"), &dir.path(name), &m).unwrap();
    };
    mutate("same", Mutation::default().with_diffs(0));
    mutate("one", Mutation::default().with_at(&[123_456]));
    mutate("first", Mutation::default().with_at(&[0]));
    mutate("last", Mutation::default().with_at(&[199_999]));
    mutate("many", Mutation::default().with_diffs(3000).with_seed(9));
    mutate(
        "short",
        Mutation {
            resize: Some(Resize::Truncate(150_000)),
            ..Mutation::default().with_diffs(0)
        },
    );
    mutate(
        "long",
        Mutation {
            resize: Some(Resize::Extend(999)),
            ..Mutation::default().with_diffs(0)
        },
    );
    mutate(
        "short-diff",
        Mutation {
            resize: Some(Resize::Truncate(150_000)),
            ..Mutation::default().with_at(&[100_000])
        },
    );
    dir.write("empty", b"");
    dir
}

trait MutationExt {
    fn with_diffs(self, n: u64) -> Self;
    fn with_at(self, at: &[u64]) -> Self;
    fn with_seed(self, s: u64) -> Self;
}

impl MutationExt for Mutation {
    fn with_diffs(mut self, n: u64) -> Self {
        self.diffs = n;
        self
    }
    fn with_at(mut self, at: &[u64]) -> Self {
        self.at = at.to_vec();
        self.diffs = at.len() as u64;
        self
    }
    fn with_seed(mut self, s: u64) -> Self {
        self.seed = s;
        self
    }
}

#[test]
fn generated_pairs_under_every_option() {
    let dir = text_pair_dir();
    let others = [
        "same",
        "one",
        "first",
        "last",
        "many",
        "short",
        "long",
        "short-diff",
        "empty",
    ];
    let option_sets: &[&[&str]] = &[
        &[],
        &["-b"],
        &["-l"],
        &["-lb"],
        &["-s"],
        &["-n", "150000"],
        &["-n", "100K"],
        &["-l", "-n", "1kB"],
        &["-i", "10"],
        &["-i", "10:20"],
        &["--ignore-initial=1KiB:1K"],
        &["-l", "--bytes=0x1000"],
        &["-s", "-n", "149999"],
        &["-b", "-i", "123456:123456"],
    ];
    for other in others {
        for opts in option_sets {
            for (x, y) in [("a", other), (other, "a")] {
                let mut args: Vec<&str> = opts.to_vec();
                args.push(x);
                args.push(y);
                same_as_gnu_everywhere(&dir, &args);
            }
        }
    }
    // Positional skips, alone and with -i (the largest value wins).
    same_as_gnu_everywhere(&dir, &["a", "one", "5"]);
    same_as_gnu_everywhere(&dir, &["a", "one", "5", "7"]);
    same_as_gnu_everywhere(&dir, &["-i", "9", "a", "long", "5", "0x10"]);
    same_as_gnu_everywhere(&dir, &["-l", "a", "many", "1M", "1M"]);
}

#[test]
fn the_differences_gnu_reports_are_the_planted_ones() {
    let dir = text_pair_dir();
    let out = same_as_gnu(&dir, &["-l", "a", "many"]);
    assert_eq!(out.status, Some(1));
    assert_eq!(out.stdout.lines().count(), 3000);
    let out = same_as_gnu(&dir, &["a", "one"]);
    assert!(out.stdout.starts_with("a one differ: char 123457, line "));
}

#[test]
fn locale_decides_byte_or_char() {
    let dir = text_pair_dir();
    for env in [
        &[][..],
        &[("LC_ALL", "C")][..],
        &[("LC_ALL", "POSIX")][..],
        &[("LC_ALL", "C.UTF-8")][..],
        &[("LANG", "C.UTF-8")][..],
        &[("LANG", "C.UTF-8"), ("LC_MESSAGES", "C")][..],
        &[("LC_ALL", "xx_NOT.INSTALLED")][..],
    ] {
        same_as_gnu_with(&dir, &["a", "one"], None, env);
        same_as_gnu_with(&dir, &["-b", "a", "one"], None, env);
        same_as_gnu_with(&dir, &["a", "short"], None, env);
    }
    let utf = same_as_gnu_with(&dir, &["a", "one"], None, &[("LC_ALL", "C.UTF-8")]);
    assert!(utf.stdout.contains("differ: byte "), "{utf:?}");
}

#[test]
fn usage_errors() {
    let dir = text_pair_dir();
    for args in [
        &[][..],
        &["-z", "a", "one"][..],
        &["--frobnicate", "a", "one"][..],
        &["-n"][..],
        &["a", "one", "-n"][..],
        &["a", "one", "--bytes"][..],
        &["-l", "-s", "a", "one"][..],
        &["-n", "x", "a", "one"][..],
        &["-n", "-1", "a", "one"][..],
        &["-i", "1:x", "a", "one"][..],
        &["-i", "99999999999999999999", "a", "one"][..],
        &["a", "one", "1", "2", "3"][..],
        &["a", "one", "q"][..],
        &["--v", "a", "one"][..],
        &["--print", "a", "one"][..],
        &["--verbose=3", "a", "one"][..],
        &["--help=3"][..],
        &["-i", "1:2:3", "a", "one"][..],
        &["-i", ":2", "a", "one"][..],
        &["-i", "-1", "a", "one"][..],
        &["-n", "", "a", "one"][..],
        &["a", "one", "x", "2", "3"][..],
        &["-n", "8E", "a", "one"][..],
        &["-n", "1m", "a", "one"][..],
    ] {
        let out = same_as_gnu(&dir, args);
        assert_eq!(out.status, Some(2), "{args:?}");
    }
}

#[test]
fn gnu_option_spellings() {
    let dir = text_pair_dir();
    for args in [
        &["--s", "a", "one"][..],
        &["--q", "a", "one"][..],
        &["--byt=3", "a", "one"][..],
        &["--ign", "1", "a", "one"][..],
        &["-c", "a", "one"][..],
        &["--print-chars", "a", "one"][..],
        &["a", "one", "-l"][..],
        &["-i", " 5", "a", "one"][..],
        &["-n", "k", "a", "one"][..],
        &["-n", "3kD", "a", "one"][..],
        &["-i", "0x10:020", "a", "one"][..],
        &["-n", "1", "-n", "200000", "-l", "a", "many"][..],
        &["--", "-l", "a"][..],
    ] {
        same_as_gnu_everywhere(&dir, args);
    }
}

#[test]
fn stdout_to_dev_null_stops_at_the_first_difference() {
    let dir = text_pair_dir();
    for args in [
        "a one",
        "-l a many",
        "a short",
        "-b a short",
        "empty a",
        "a same",
    ] {
        same_as_gnu_sh(&dir, &format!("cmp {args} > /dev/null"));
    }
}

#[test]
fn empty_missing_and_same_inputs() {
    let dir = text_pair_dir();
    dir.write("empty2", b"");
    for args in [
        &["empty", "empty2"][..],
        &["-i", "1:0", "empty", "empty2"][..],
        &["-i", "0:1", "empty", "a"][..],
        &["empty", "a"][..],
        &["a", "empty"][..],
        &["-l", "empty", "a"][..],
        &["a", "a"][..],
        &["-l", "a", "./a"][..],
        &["-i", "5:6", "a", "a"][..],
        &["missing", "a"][..],
        &["a", "missing"][..],
        &["-s", "missing", "a"][..],
        &["missing", "missing2"][..],
        &["-i", "300000", "a", "one"][..],
        &["-n", "0", "a", "one"][..],
        &["-l", "-n", "0", "a", "one"][..],
        &["missing", "missing"][..],
    ] {
        same_as_gnu_everywhere(&dir, args);
    }
}

#[test]
fn directories() {
    let dir = text_pair_dir();
    std::fs::create_dir(dir.path("d")).unwrap();
    for args in [
        &["d", "a"][..],
        &["a", "d"][..],
        &["d", "d"][..],
        &["-s", "d", "a"][..],
        &["d", "missing"][..],
        &["-n", "0", "a", "d"][..],
        &["-i", "5", "d", "a"][..],
    ] {
        same_as_gnu_everywhere(&dir, args);
    }
}

#[test]
fn unreadable_file() {
    let dir = text_pair_dir();
    let p = dir.write("secret", b"hidden");
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    // Root reads everything: run both tools as an unprivileged user when we are root.
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let wrap = |bin_dir: &std::path::Path| -> Outcome {
        let mut cmd = if root {
            let mut c = Command::new("/usr/bin/setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "cmp"]);
            c
        } else {
            Command::new("cmp")
        };
        let out = cmd
            .args(["secret", "a"])
            .current_dir(dir.tmp.path())
            .env("PATH", bin_dir)
            .env_remove("LC_ALL")
            .env_remove("LANG")
            .output()
            .unwrap();
        Outcome::from(out)
    };
    let [gnu_dir, swath_dir] = dir.bin_dirs();
    let gnu = wrap(&gnu_dir);
    let ours = wrap(&swath_dir);
    assert_eq!(ours, gnu);
    assert_eq!(gnu.status, Some(2));
    assert!(gnu.stderr.contains("Permission denied"), "{gnu:?}");
}

#[test]
fn standard_input_as_file_and_pipe() {
    let dir = text_pair_dir();
    let a = dir.path("a");
    for args in [
        &["-", "one"][..],
        &["one", "-"][..],
        &["one"][..],
        &["-l", "-", "many"][..],
        &["-", "short"][..],
        &["-", "-"][..],
        &["-i", "7", "-", "one"][..],
    ] {
        same_as_gnu_with(&dir, args, Some(&a), &[]);
    }
    // A real pipe: both tools read the file through `cat`.
    for args in ["- one", "-l - many", "- short", "-b - first", "- long"] {
        same_as_gnu_sh(&dir, &format!("cat a | cmp {args}"));
    }
}

#[test]
fn fifo_input() {
    let dir = text_pair_dir();
    let fifo = dir.path("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let mut results = Vec::new();
    for tool in [crate::util::gnu_cmp(), dir.swath_cmp()] {
        let data = std::fs::read(dir.path("a")).unwrap();
        let writer_path = fifo.clone();
        let writer = std::thread::spawn(move || {
            // The reader may stop early; a broken pipe is expected then.
            let _ = std::fs::write(writer_path, data);
        });
        let out = Command::new(&tool)
            .args(["fifo", "one"])
            .current_dir(dir.tmp.path())
            .env_remove("LC_ALL")
            .env_remove("LANG")
            .output()
            .unwrap();
        // Unblock the writer if the reader exited before the writer opened the FIFO.
        let _ = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo);
        writer.join().unwrap();
        results.push((out.stdout, out.stderr, out.status.code()));
    }
    assert_eq!(results[1], results[0]);
    assert_eq!(results[0].2, Some(1));
}

#[test]
fn sparse_files_over_4gib_with_a_difference_near_the_end() {
    let dir = Dir::new();
    let size: u64 = (4 << 30) + 12345;
    for name in ["s1", "s2"] {
        let f = std::fs::File::create(dir.path(name)).unwrap();
        f.set_len(size).unwrap();
        f.write_all_at(b"\n\n", 4 << 30).unwrap();
    }
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path("s2"))
        .unwrap();
    f.write_all_at(b"x", size - 100).unwrap();
    let out = same_as_gnu(&dir, &["s1", "s2"]);
    assert_eq!(
        out.stdout,
        format!("s1 s2 differ: char {}, line 3\n", size - 99)
    );
    same_as_gnu(&dir, &["-l", "s1", "s2"]);
    same_as_gnu(&dir, &["-i", "4G", "s1", "s2"]);
}

/// t2 truncated while `cmp -l` runs, at a point that does not depend on timing: t2 differs
/// from t1 in every 64th byte, and nobody reads cmp's output until the truncation, so cmp
/// is stopped on its full pipe (a few MB into the files, far before their end) when t2
/// shrinks under it.
#[test]
fn file_truncated_while_compared_is_an_error() {
    let dir = Dir::new();
    let size = 64usize << 20;
    let t2: Vec<u8> = (0..size).map(|i| u8::from(i % 64 == 0)).collect();
    let make = || {
        std::fs::write(dir.path("t2"), &t2).unwrap();
    };
    std::fs::File::create(dir.path("t1"))
        .unwrap()
        .set_len(size as u64)
        .unwrap();
    make();
    for strategy in ["mmap", "pread", "read"] {
        let mut child = Command::new(swath_bin())
            .args(["cmp", "-l", "--strategy", strategy, "t1", "t2"])
            .current_dir(dir.tmp.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until cmp has filled the pipe: the first line is there and more keep coming
        // only as they are read (a reader thread would race; a blocking read of a few
        // bytes only proves cmp started, which is all the truncation needs: cmp cannot get
        // past the pipe's 64 KiB and its own buffer, a few MB of t2, before we read more).
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 16];
        std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path("t2"))
            .unwrap()
            .set_len(1 << 10)
            .unwrap();
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut rest).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The sequential path sees the new end as EOF, as GNU cmp would; the parallel ones
        // report the change. None may crash.
        assert!(
            out.status.code().is_some(),
            "{strategy}: killed by a signal"
        );
        if strategy == "read" {
            assert_eq!(out.status.code(), Some(1), "{strategy}: {stderr}");
            assert!(stderr.contains("EOF on t2"), "{strategy}: {stderr}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{strategy}: {stderr}");
            assert!(
                stderr.contains("t2: file shrank while being read")
                    || stderr.contains("t2: file changed size while being read"),
                "{strategy}: {stderr}"
            );
            assert_eq!(stderr.lines().count(), 1, "{strategy}: {stderr}");
        }
        make();
    }
}

#[test]
fn max_diffs_reports_the_first_k_in_order() {
    let dir = text_pair_dir();
    let gnu_all = same_as_gnu(&dir, &["-l", "a", "many"]);
    let first8: Vec<&str> = gnu_all.stdout.lines().take(8).collect();
    for extra in ENGINE_VARIANTS {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["-l", "--max-diffs", "8", "a", "many"]);
        let out = Command::new(dir.swath_cmp())
            .args(&args)
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().collect::<Vec<_>>(), first8, "{args:?}");
    }
    // Default mode: each of the first K differences with its line.
    let out = Command::new(swath_bin())
        .args(["cmp", "--max-diffs", "3", "a", "many"])
        .current_dir(dir.tmp.path())
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 3);
    let gnu_first = same_as_gnu(&dir, &["a", "many"]);
    assert_eq!(text.lines().next().unwrap(), gnu_first.stdout.trim_end());
}

#[test]
fn json_output() {
    let dir = text_pair_dir();
    let json = |args: &[&str]| -> serde_json::Value {
        let out = Command::new(swath_bin())
            .arg("cmp")
            .arg("--json")
            .args(args)
            .current_dir(dir.tmp.path())
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).expect("valid JSON")
    };
    let v = json(&["a", "one"]);
    assert_eq!(v["identical"], false);
    assert_eq!(v["differences"][0]["byte"], 123_457);
    assert!(v["differences"][0]["line"].as_u64().unwrap() > 1);
    let v = json(&["-l", "a", "many"]);
    assert_eq!(v["differences"].as_array().unwrap().len(), 3000);
    let v = json(&["a", "short"]);
    assert_eq!(v["eof"]["file"], "short");
    assert_eq!(v["eof"]["after_byte"], 150_000);
    let v = json(&["a", "same"]);
    assert_eq!(v["identical"], true);
    assert_eq!(v["differences"].as_array().unwrap().len(), 0);
}

#[test]
fn time_reports_the_plan_on_stderr() {
    let dir = text_pair_dir();
    let out = Command::new(swath_bin())
        .args([
            "cmp",
            "--time",
            "--threads",
            "2",
            "--block-size",
            "64K",
            "a",
            "same",
        ])
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("elapsed"), "{err}");
    assert!(err.contains("threads 2, block size 65536"), "{err}");
}

#[test]
fn write_error_on_stdout() {
    let dir = text_pair_dir();
    let full = std::path::Path::new("/dev/full");
    if !full.exists() {
        swath_engine::testing::skip("/dev/full is not there");
        return;
    }
    for args in ["-l a many", "a one", "-l a first", "a short"] {
        same_as_gnu_sh(&dir, &format!("cmp {args} > /dev/full"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_pairs_match_gnu(
        a in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'a'), Just(0x80u8), any::<u8>()], 0..3000),
        flips in proptest::collection::vec((0usize..3000, 1u8..=255), 0..6),
        cut in 0usize..3200,
        opts in prop_oneof![
            Just(vec![]), Just(vec!["-l"]), Just(vec!["-b"]), Just(vec!["-lb"]), Just(vec!["-s"]),
            Just(vec!["-n", "100"]), Just(vec!["-i", "3:5"]), Just(vec!["-l", "-i", "17"]),
        ],
        engine in 0usize..8,
    ) {
        let dir = Dir::new();
        let mut b = a.clone();
        for (p, x) in flips {
            if p < b.len() { b[p] ^= x; }
        }
        b.truncate(cut.max(a.len().saturating_sub(50)));
        dir.write("x", &a);
        dir.write("y", &b);
        let mut args: Vec<&str> = opts.clone();
        args.extend(["x", "y"]);
        let gnu = same_as_gnu(&dir, &args);
        let mut with_engine: Vec<&str> = ENGINE_VARIANTS[engine].to_vec();
        with_engine.extend(args.iter().copied());
        let os: Vec<&std::ffi::OsStr> = with_engine.iter().map(std::ffi::OsStr::new).collect();
        let ours = run(&dir.swath_cmp(), &os, dir.tmp.path(), None, &[]);
        prop_assert_eq!(ours, gnu);
    }
}

#[test]
fn names_that_are_not_utf8_are_printed_as_their_bytes() {
    let dir = Dir::new();
    same_as_gnu_sh(
        &dir,
        r"printf 'abc\n' > n$(printf '\377')1; printf 'abd\n' > n$(printf '\377')2; printf 'ab' > n$(printf '\377')3;
          cmp n?1 n?2; echo $?; cmp n?3 n?1; echo $?; cmp -l n?1 n?2; echo $?",
    );
}

/// Runs `swath cmp ARGS > out` in `dir` under `ulimit -v KIB`: the exit status, stdout.
fn cmp_under_ulimit(dir: &Dir, kib: u64, args: &str) -> (Option<i32>, Vec<u8>, String) {
    let bin = crate::util::swath_bin();
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {kib}; exec '{}' cmp {args} > out",
            bin.display()
        ))
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    (
        o.status.code(),
        std::fs::read(dir.path("out")).unwrap_or_default(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `-l --max-diffs K` and `-l --json --max-diffs K` stream like `-l`: two 4 MB files that
/// differ everywhere, under a 300 MB address-space limit (before: K differences kept, then
/// formatted at once; 446 MB resident for 8 MB files, and an abort here).
#[test]
fn list_with_max_diffs_streams_in_bounded_memory() {
    let dir = Dir::new();
    const N: usize = 4_000_000;
    dir.write("a", &vec![0u8; N]);
    dir.write("b", &vec![1u8; N]);
    for (args, k) in [
        ("-l --json --max-diffs 100000000 a b", N),
        ("-l --max-diffs 1000 a b", 1000),
        ("-l --json --max-diffs 3 a b", 3),
    ] {
        let (code, out, err) = cmp_under_ulimit(&dir, 300_000, args);
        assert_eq!(code, Some(1), "{args}: {err}");
        assert_eq!(err, "", "{args}");
        if args.contains("--json") {
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
            let d = v["differences"].as_array().unwrap();
            assert_eq!(d.len(), k, "{args}");
            assert_eq!(
                d[k - 1],
                serde_json::json!({"byte": k, "byte1": 0, "byte2": 1})
            );
            assert_eq!(v["eof"], serde_json::Value::Null);
        } else {
            let text = String::from_utf8(out).unwrap();
            assert_eq!(text.lines().count(), k, "{args}");
            let last = text
                .lines()
                .last()
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>();
            assert_eq!(last, [k.to_string().as_str(), "0", "1"], "{args}");
        }
    }
}

/// `--block-size 1` on two identical 16 MB files under a 200 MB address-space limit: the
/// line count kept 16 bytes per block (256 MB here, and an abort); now a bounded number.
#[test]
fn block_size_1_keeps_no_state_per_block() {
    let dir = Dir::new();
    dir.write("a", &vec![b'\n'; 16_000_000]);
    dir.write("b", &vec![b'\n'; 16_000_000]);
    let (code, out, err) = cmp_under_ulimit(&dir, 200_000, "--block-size 1 --strategy mmap a b");
    assert_eq!((code, out, err), (Some(0), Vec::new(), String::new()));
    // And the line numbers those counts give are still right.
    dir.write("c", &[vec![b'\n'; 15_999_999], b"x".to_vec()].concat());
    let (code, out, err) = cmp_under_ulimit(&dir, 200_000, "--block-size 1 --strategy mmap a c");
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out),
        "a c differ: byte 16000000, line 16000000\n"
    );
}

/// The default output with a `--max-diffs K` larger than what is kept (65,536) streams its
/// differences and line numbers: two 4 MB files with newlines that differ everywhere, under a
/// 150 MB address-space limit (before: K differences and their line numbers kept, 163 MB
/// resident here and 1.95 GB for 50 MB files, and an abort under this limit). Its output is
/// that of a naive count and of the kept path, across block seams and thread counts, and
/// its EOF line is GNU's.
#[test]
fn default_output_with_a_large_max_diffs_streams_in_bounded_memory() {
    let dir = Dir::new();
    let newline_every = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|i| if i % 37 == 0 { b'\n' } else { b'a' })
            .collect()
    };
    const N: usize = 4_000_000;
    let a = newline_every(N);
    let b: Vec<u8> = a[..N - 1000].iter().map(|&x| x ^ 0x20).collect();
    dir.write("a", &a);
    dir.write("b", &b);
    let (code, out, err) = cmp_under_ulimit(&dir, 150_000, "--max-diffs 1000000000 a b");
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(out.iter().filter(|&&c| c == b'\n').count(), N - 1000);
    let lines_before = |n: usize| a[..n].iter().filter(|&&c| c == b'\n').count();
    let last = format!(
        "a b differ: byte {}, line {}\n",
        N - 1000,
        lines_before(N - 1001) + 1
    );
    assert!(out.ends_with(last.as_bytes()));
    let eof = format!(
        "EOF on b after byte {}, in line {}\n",
        N - 1000,
        lines_before(N - 1000) + 1
    );
    assert!(err.ends_with(&eof), "{err}");

    // Small files: every item against a naive count, kept and streamed alike.
    const M: usize = 100_000;
    let a = newline_every(M);
    let b: Vec<u8> = a[..M - 10]
        .iter()
        .enumerate()
        .map(|(i, &x)| if i % 3 == 0 { x } else { x ^ 1 })
        .collect();
    dir.write("c", &a);
    dir.write("d", &b);
    let mut want = Vec::new();
    let mut line = 1;
    for i in 0..M - 10 {
        if a[i] != b[i] {
            want.push(
                serde_json::json!({"byte": i + 1, "line": line, "byte1": a[i], "byte2": b[i]}),
            );
        }
        line += usize::from(a[i] == b'\n');
    }
    for extra in ["", "--threads 2 --block-size 4093", "--threads 0"] {
        for k in [65_536, 1_000_000] {
            let args = format!("cmp --json --max-diffs {k} {extra} c d");
            let o = crate::util::swath(&dir, &args.split_whitespace().collect::<Vec<_>>());
            assert_eq!(o.status.code(), Some(1), "{args}");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let got = v["differences"].as_array().unwrap();
            assert_eq!(got[..], want[..k.min(want.len())], "{args}");
            let eof = serde_json::json!({"file": "d", "after_byte": M - 10});
            assert_eq!(
                v["eof"],
                if k > want.len() {
                    eof
                } else {
                    serde_json::Value::Null
                }
            );
        }
    }

    // Fewer differences than K: GNU's EOF line (a shorter file that is a prefix).
    dir.write("p", &a[..M - 10]);
    let gnu = Command::new(crate::util::gnu_cmp())
        .args(["c", "p"])
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    let ours = crate::util::swath(&dir, &["cmp", "--max-diffs", "100000000", "c", "p"]);
    assert_eq!((ours.status.code(), gnu.status.code()), (Some(1), Some(1)));
    let tail = |e: &[u8]| {
        String::from_utf8_lossy(e)
            .split_once(": EOF")
            .unwrap()
            .1
            .to_string()
    };
    assert_eq!(tail(&ours.stderr), tail(&gnu.stderr));
    assert!(ours.stdout.is_empty());
}
