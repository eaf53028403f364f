//! Partial results from the command line: `swath split`, `--range`/`--emit-partial` and
//! `swath merge` give what the one-machine command (and GNU wc) prints, whatever the cuts,
//! the order and the tree of merges; damaged, foreign, doubled, missing or mismatched
//! partials are clear errors.

use crate::util::{swath, swath_bin, without_format_line, Dir};
use std::process::Command;

/// `swath ARGS` in the scratch directory under `LC_ALL=locale`.
fn swath_in(dir: &Dir, locale: &str, args: &[&str]) -> std::process::Output {
    Command::new(swath_bin())
        .args(args)
        .env("LC_ALL", locale)
        .current_dir(dir.tmp.path())
        .output()
        .unwrap()
}

fn text(dir: &Dir) -> Vec<String> {
    let mut long = b"x".repeat(70_000);
    long.push(b'\n');
    let files: Vec<(&str, Vec<u8>)> = vec![
        (
            "a.txt",
            "caf\u{e9} au lait\tnaïve  word\r\n日本語 テキスト\u{3000}x\n"
                .repeat(300)
                .into_bytes(),
        ),
        (
            "b.txt",
            [&b"no newline at the end"[..], b" \xff\xfe bad"].concat(),
        ),
        ("empty", Vec::new()),
        ("long", [&long[..], b"short\n", &long[..]].concat()),
        ("one line\nname", b"x y z\n".to_vec()),
    ];
    files
        .into_iter()
        .map(|(n, d)| {
            dir.write(n, &d);
            n.to_string()
        })
        .collect()
}

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// Emits the partials (`swath CMD...`, e.g. `wc -l`) of every file cut into `pieces` ranges
/// (by `swath split`), each with its operand index; a `.gz` file is one piece, emitted
/// without `--range`. Returns the partials' names.
fn emit(dir: &Dir, locale: &str, files: &[String], opts: &[&str], pieces: u64) -> Vec<String> {
    let mut args = vec!["split".to_string(), "--pieces".into(), pieces.to_string()];
    args.extend(files.iter().filter(|f| !f.ends_with(".gz")).cloned());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let listing = ok(&swath(dir, &a));
    let mut parts = Vec::new();
    // Names may hold a newline: the listing's lines are matched back to the files in order.
    let mut lines = listing.lines();
    for (i, f) in files.iter().enumerate() {
        if f.ends_with(".gz") {
            let (out, idx) = (format!("p.{i}.gz"), i.to_string());
            let mut args = opts.to_vec();
            args.extend_from_slice(&["--operand-index", &idx, "--emit-partial", &out, f]);
            ok(&swath_in(dir, locale, &args));
            parts.push(out);
            continue;
        }
        let len = std::fs::metadata(dir.path(f)).unwrap().len();
        let n = pieces.clamp(1, len.max(1));
        for _ in 0..n {
            let mut line = lines.next().unwrap().to_string();
            while !line.starts_with(f.as_str()) || line.len() == f.len() {
                line = format!("{line}\n{}", lines.next().unwrap());
            }
            let rest: Vec<&str> = line[f.len()..].split_whitespace().collect();
            let out = format!("p.{i}.{}", rest[0]);
            let range = format!("{}:{}", rest[0], rest[1]);
            let idx = i.to_string();
            let mut args = opts.to_vec();
            args.extend_from_slice(&[
                "--range",
                &range,
                "--operand-index",
                &idx,
                "--emit-partial",
                &out,
                f,
            ]);
            ok(&swath_in(dir, locale, &args));
            parts.push(out);
        }
    }
    parts
}

/// Emits the pieces of `swath CMD OPTS` over `files` and merges them all at once, in
/// reverse order: the pieces' names (in that order) and the merge's outcome.
fn emit_and_merge(
    dir: &Dir,
    locale: &str,
    files: &[String],
    cmd: &str,
    opts: &[&str],
    pieces: u64,
) -> (Vec<String>, std::process::Output) {
    let mut c = vec![cmd];
    c.extend_from_slice(opts);
    let mut parts = emit(dir, locale, files, &c, pieces);
    parts.reverse();
    let mut args = vec!["merge"];
    args.extend(parts.iter().map(String::as_str));
    let out = swath_in(dir, locale, &args);
    (parts, out)
}

#[test]
fn pieces_merged_in_any_order_and_tree_print_what_wc_prints() {
    let dir = Dir::new();
    let files = text(&dir);
    for locale in ["C", "C.UTF-8"] {
        for opts in [
            &[][..],
            &["-l"],
            &["-w"],
            &["-m"],
            &["-L"],
            &["-lwmcL"],
            &["-c", "-l"],
        ] {
            let mut want_args = vec!["wc"];
            want_args.extend_from_slice(opts);
            want_args.extend(files.iter().map(String::as_str));
            let gnu = Command::new("wc")
                .args(&want_args[1..])
                .env("LC_ALL", locale)
                .current_dir(dir.tmp.path())
                .output()
                .unwrap();
            let want = ok(&swath_in(&dir, locale, &want_args));
            assert_eq!(want.as_bytes(), &gnu.stdout[..], "{locale} {opts:?}");
            for pieces in [1u64, 2, 3, 7] {
                let (parts, merged) = emit_and_merge(&dir, locale, &files, "wc", opts, pieces);
                assert_eq!(ok(&merged), want, "{locale} {opts:?} {pieces}");
                // A tree: pairs merged into partials, then those merged.
                let mut level = parts.clone();
                let mut round = 0;
                while level.len() > 1 {
                    let mut next = Vec::new();
                    for (k, pair) in level.chunks(2).enumerate() {
                        let out = format!("m.{round}.{k}");
                        let mut args = vec!["merge", "--emit-partial", &out];
                        args.extend(pair.iter().map(String::as_str));
                        ok(&swath_in(&dir, locale, &args));
                        next.push(out);
                    }
                    level = next;
                    round += 1;
                }
                assert_eq!(ok(&swath_in(&dir, locale, &["merge", &level[0]])), want);
            }
        }
    }
}

#[test]
fn damaged_foreign_doubled_missing_and_mismatched_partials_are_errors() {
    let dir = Dir::new();
    let files = text(&dir);
    let f = &files[0];
    let err = |args: &[&str]| {
        let o = swath(&dir, args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = String::from_utf8(o.stderr).unwrap();
        // One line, and for a usage error GNU's "Try ... --help" after it.
        let lines: Vec<&str> = e.lines().collect();
        assert!(
            lines.len() == 1 || (lines.len() == 2 && lines[1].starts_with("Try ")),
            "{e}"
        );
        e
    };
    ok(&swath(
        &dir,
        &["wc", "--range", "0:100", "--emit-partial", "p1", f],
    ));
    ok(&swath(
        &dir,
        &["wc", "--range", "100:99999999", "--emit-partial", "p2", f],
    ));
    ok(&swath(
        &dir,
        &[
            "wc",
            "-l",
            "--range",
            "100:99999999",
            "--emit-partial",
            "pl",
            f,
        ],
    ));
    assert!(err(&["merge", "p1"]).contains("no partial covers bytes"));
    assert!(err(&["merge", "p1", "p2", "p2"]).contains("are in two partials"));
    assert!(err(&["merge", "p1", "pl"]).contains("different options"));
    let mut bytes = std::fs::read(dir.path("p2")).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 4;
    dir.write("bad", &bytes);
    assert!(err(&["merge", "p1", "bad"]).contains("bad: damaged partial result"));
    dir.write("short", &std::fs::read(dir.path("p2")).unwrap()[..30]);
    assert!(err(&["merge", "p1", "short"]).contains("short: "));
    assert!(err(&["merge", "p1", f]).contains("not a swath partial result"));
    assert!(err(&["merge", "p1", "nosuch"]).contains("nosuch: No such file or directory"));
    assert!(err(&["wc", "--emit-partial", "p", "-"]).contains("exactly one FILE"));
    assert!(err(&["wc", "--range", "5:1", "--emit-partial", "p", f]).contains("invalid range"));
    std::fs::create_dir(dir.path("adir")).unwrap();
    assert!(err(&["wc", "--emit-partial", "p", "adir"]).ends_with("adir: Is a directory\n"));
    assert!(err(&["merge", "adir"]).ends_with("adir: Is a directory\n"));
    assert!(!dir.path("p").exists());
    assert_eq!(
        ok(&swath(&dir, &["merge", "p2", "p1"])),
        ok(&swath(&dir, &["wc", f]))
    );
}

#[test]
fn grep_count_pieces_merge_into_what_grep_c_prints() {
    let dir = Dir::new();
    let mut files = text(&dir);
    dir.write("bin", b"foo\nbar\x00foo\nfoo bar\x00\x00foo\n");
    files.push("bin".into());
    for locale in ["C", "C.UTF-8"] {
        for opts in [
            &["-c", "a"][..],
            &["-c", "-v", "a"],
            &["-c", "-i", "-w", "CAF\u{c9}"],
            &["-c", "-H", "x"],
            &["-c", "-h", "x"],
            &["-c", "-Z", "x"],
            &["-c", "-a", "foo"],
            &["-c", "-z", "x"],
            &["-c", "-E", "(x)+y"],
        ] {
            let gnu = Command::new("grep")
                .args(opts)
                .args(&files)
                .env("LC_ALL", locale)
                .current_dir(dir.tmp.path())
                .output()
                .unwrap();
            for pieces in [1u64, 3, 5] {
                let (_, got) = emit_and_merge(&dir, locale, &files, "grep", opts, pieces);
                assert_eq!(got.stdout, gnu.stdout, "{locale} {opts:?} {pieces}");
            }
        }
    }
    let err = |args: &[&str]| {
        let o = swath(&dir, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        String::from_utf8(o.stderr).unwrap()
    };
    assert!(err(&["grep", "a", "--emit-partial", "p", "a.txt"]).contains("takes -c"));
    assert!(
        err(&["grep", "-c", "-m1", "a", "--emit-partial", "p", "a.txt"]).contains("whole files")
    );
    assert!(
        err(&["grep", "-c", "-I", "a", "--emit-partial", "p", "a.txt"]).contains("whole files")
    );
    assert!(
        err(&["grep", "-c", "a", "--emit-partial", "p", "a.txt", "b.txt"])
            .contains("exactly one FILE")
    );
    assert!(
        err(&["grep", "-c", "a", "--emit-partial", "p", "nosuch"]).contains("nosuch: No such file")
    );
    assert!(!dir.path("p").exists());
    // A wc partial and a grep partial do not merge.
    ok(&swath(&dir, &["wc", "--emit-partial", "w", "a.txt"]));
    ok(&swath(
        &dir,
        &["grep", "-c", "a", "--emit-partial", "g", "a.txt"],
    ));
    let o = swath(&dir, &["merge", "w", "g"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("different reports"));
}

#[test]
fn log_report_pieces_merge_into_the_report_of_the_whole_logs() {
    let dir = Dir::new();
    ok(&swath(
        &dir,
        &["gen", "log", "400K", "a.log", "--seed", "5", "--damaged"],
    ));
    ok(&swath(
        &dir,
        &["gen", "log", "300K", "b.log", "--seed", "6", "--damaged"],
    ));
    // A hostile line or two, and a gzip log (one range).
    let mut b = std::fs::read(dir.path("b.log")).unwrap();
    b.extend_from_slice(b"bad line\n\x1b[31m x\n");
    dir.write("b.log", &b);
    let gz = Command::new("gzip")
        .args(["-kf", "b.log"])
        .current_dir(dir.tmp.path())
        .status()
        .unwrap();
    assert!(gz.success());
    for (report, files, opts) in [
        ("wf2", vec!["a.log"], vec![]),
        ("wf2", vec!["a.log", "b.log"], vec!["--top", "3"]),
        ("wf2", vec!["b.log.gz", "a.log"], vec!["--json"]),
        (
            "wf2",
            vec!["a.log"],
            vec!["--article", "^/[a-c]", "--self-referrer", "http://x/"],
        ),
        ("summary", vec!["a.log", "b.log"], vec![]),
        (
            "summary",
            vec!["b.log.gz", "a.log"],
            vec!["--json", "--top", "4"],
        ),
        ("summary", vec!["a.log"], vec!["--max-line", "100"]),
    ] {
        let mut want_args = vec!["logs", report];
        want_args.extend_from_slice(&opts);
        want_args.extend_from_slice(&files);
        let want = swath(&dir, &want_args);
        assert!(want.status.success());
        let json = opts.contains(&"--json");
        let emit_opts: Vec<&str> = opts.iter().copied().filter(|o| *o != "--json").collect();
        let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        for pieces in [1u64, 3, 7] {
            let mut cmd = vec!["logs", report];
            cmd.extend_from_slice(&emit_opts);
            let mut parts = emit(&dir, "C", &files, &cmd, pieces);
            parts.reverse();
            // From the pieces, and from a tree of two merged partials.
            let half = parts.len() / 2;
            let mut left = vec!["merge", "--emit-partial", "left.part"];
            left.extend(parts[..half].iter().map(String::as_str));
            let mut right = vec!["merge", "--emit-partial", "right.part"];
            right.extend(parts[half..].iter().map(String::as_str));
            if half > 0 {
                ok(&swath(&dir, &left));
                ok(&swath(&dir, &right));
            }
            let tree = ["right.part".to_string(), "left.part".to_string()];
            for inputs in [&parts[..], &tree[..]] {
                if half == 0 && inputs[0] == "right.part" {
                    continue;
                }
                let mut args = vec!["merge"];
                if json {
                    args.push("--json");
                }
                args.extend(inputs.iter().map(String::as_str));
                let got = swath(&dir, &args);
                assert_eq!(
                    got.stdout, want.stdout,
                    "{report} {files:?} {opts:?} {pieces} {args:?}"
                );
                assert_eq!(
                    without_format_line(&got.stderr),
                    without_format_line(&want.stderr),
                    "{report} {files:?} {opts:?} {pieces} {args:?}"
                );
            }
        }
    }
    // The summary's page, from the merge as from the logs.
    ok(&swath(
        &dir,
        &["logs", "summary", "--html", "whole.html", "a.log"],
    ));
    let files = vec!["a.log".to_string()];
    let parts = emit(&dir, "C", &files, &["logs", "summary"], 3);
    let mut args = vec!["merge", "--html", "merged.html"];
    args.extend(parts.iter().map(String::as_str));
    ok(&swath(&dir, &args));
    // The same page but for the header's inputs, generation and parse times, which only
    // the command that read the logs knows: from the list of panels on, byte for byte.
    let after_header = |name: &str| {
        let page = std::fs::read_to_string(dir.path(name)).unwrap();
        page[page.find("<nav>").unwrap()..].to_string()
    };
    assert_eq!(after_header("merged.html"), after_header("whole.html"));
    ok(&swath(&dir, &["wc", "--emit-partial", "wcp", "a.log"]));
    for flag in ["--html", "--json"] {
        let mut args = vec!["merge", flag];
        if flag == "--html" {
            args.push("x.html");
        }
        args.push("wcp");
        let o = swath(&dir, &args);
        assert_eq!(o.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("{flag} is for log")));
    }
    assert!(!dir.path("x.html").exists());
    let sw = |cmd: &str| swath(&dir, &cmd.split_whitespace().collect::<Vec<_>>());
    let o = sw("logs wf2 --range 0:10 --emit-partial x b.log.gz");
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("a compressed log is one range"));
    ok(&sw("logs wf2 --range 0:10 --emit-partial w1 a.log"));
    ok(&sw(
        "logs wf2 --top 2 --range 10:99999999 --emit-partial w2 a.log",
    ));
    let o = swath(&dir, &["merge", "w1", "w2"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("different options"));
}

#[test]
fn more_partials_than_maps_merge_into_the_report() {
    // 260 pieces: past the 240 partials mapped at once, the rest are read.
    let dir = Dir::new();
    ok(&swath(
        &dir,
        &["gen", "log", "120K", "a.log", "--seed", "9", "--damaged"],
    ));
    let want = swath(&dir, &["logs", "summary", "--top", "3", "a.log"]);
    assert!(want.status.success());
    let files = vec!["a.log".to_string()];
    let (parts, got) = emit_and_merge(&dir, "C", &files, "logs", &["summary", "--top", "3"], 260);
    assert_eq!(parts.len(), 260);
    assert_eq!(got.stdout, want.stdout);
    assert_eq!(
        without_format_line(&got.stderr),
        without_format_line(&want.stderr)
    );
}

#[test]
fn merge_refuses_missing_directory_empty_and_sparse_inputs_with_one_line() {
    let dir = Dir::new();
    dir.write("empty.part", b"");
    std::fs::create_dir(dir.path("dir.part")).unwrap();
    // 10 GB of holes: refused by its first bytes, never read whole.
    let sparse = std::fs::File::create(dir.path("sparse.part")).unwrap();
    sparse.set_len(10 << 30).unwrap();
    for (name, cause) in [
        ("missing.part", "No such file or directory"),
        ("dir.part", "Is a directory"),
        ("empty.part", "not a swath partial result"),
        ("sparse.part", "not a swath partial result"),
    ] {
        for emit in [false, true] {
            let mut args = vec!["merge"];
            if emit {
                args.extend_from_slice(&["--emit-partial", "out.part"]);
            }
            args.push(name);
            let o = swath(&dir, &args);
            assert_eq!(o.status.code(), Some(1), "{name} {emit}");
            assert!(o.stdout.is_empty(), "{name} {emit}");
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            assert!(
                err.starts_with(&format!("swath merge: {name}: {cause}")),
                "{err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(!dir.path("out.part").exists());
        }
    }
}
