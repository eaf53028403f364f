//! `--json` outputs: `grep --json` line by line against `rg --json` (ripgrep; CI installs
//! it), `wc --json` against GNU wc's counts, and every command's JSON checked for its
//! schema, tool and version and for keys `jq` reads without quoting (docs/json.md).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::util::{swath_bin, Dir};

/// `swath ARGS` in `dir` in a UTF-8 locale, with `stdin` (or nothing) as input.
fn swath_utf8(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(swath_bin());
    cmd.args(args)
        .current_dir(dir)
        .env("LC_ALL", "C.UTF-8")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::piped());
    let mut child = cmd.spawn().expect("run swath");
    {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin piped");
        if let Some(data) = stdin {
            pipe.write_all(data).expect("write stdin");
        }
    }
    child.wait_with_output().expect("swath output")
}

/// ripgrep, when installed (CI installs it); `None` with a note otherwise.
fn rg() -> Option<&'static str> {
    let found = Command::new("rg")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        swath_engine::testing::skip(
            "ripgrep (rg) is not installed here: the comparison with rg --json is skipped",
        );
    }
    found.then_some("rg")
}

/// A JSON Lines output with the values of its timing fields (`elapsed`, `elapsed_total`)
/// replaced by `T`, and swath's additions to the summary (`schema`, `tool`, `version`,
/// which ripgrep has not) taken out, so that the rest compares as text: key order,
/// spacing and escapes included.
fn comparable(out: &[u8]) -> Vec<String> {
    let timing = regex::Regex::new(r#""(elapsed|elapsed_total)":\{[^{}]*\}"#).unwrap();
    let swath_only =
        regex::Regex::new(r#","schema":[0-9]+|,"tool":"swath grep","version":"[^"]*""#).unwrap();
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| {
            let l = timing.replace_all(l, "\"$1\":T");
            swath_only.replace_all(&l, "").into_owned()
        })
        .collect()
}

/// Text files for the comparisons: plain ASCII, a file with no match, UTF-8 with a line
/// that is not UTF-8 and no final newline, escapes JSON must quote, and a file big enough
/// (over 4 MiB) to be searched on all cores in blocks rather than whole by one worker.
fn corpus(dir: &Dir) {
    dir.write(
        "a.txt",
        b"hello world\nfoo bar\nhello again hello\nlast line\n\nfoo\nbaz hello\nqux\n",
    );
    dir.write("b.txt", b"nothing to see\nhere either\n");
    dir.write(
        "c.txt",
        b"caf\xc3\xa9 hello\nbad \xff hello\n\xe2\x82\xac euro\nquote \" back \\ tab \t hello\nctl \x01 hello\nno newline hello",
    );
    let mut big = Vec::new();
    let mut i = 0u64;
    while big.len() < 5 << 20 {
        // Sparse matches, some in runs (context groups that touch) and some alone.
        let line = match i % 997 {
            0 | 1 => format!("line {i} hello there, Hello again\n"),
            500 => format!("line {i} say HELLO\n"),
            _ => format!("line {i} nothing much {}\n", i * 7919 % 1000),
        };
        big.extend_from_slice(line.as_bytes());
        i += 1;
    }
    dir.write("big.txt", &big);
}

#[test]
fn grep_json_is_rg_json_line_by_line() {
    let Some(rg) = rg() else { return };
    let dir = Dir::new();
    corpus(&dir);
    let cases: &[&[&str]] = &[
        &["hello", "a.txt"],
        &["-F", "hello", "a.txt"],
        &["-n", "hello", "a.txt"],
        &["-i", "HELLO", "a.txt", "b.txt", "c.txt"],
        &["hello", "b.txt"],
        &["nomatch", "a.txt", "b.txt"],
        &["-e", "h[a-z]*o", "a.txt", "c.txt"],
        &["-E", "foo|baz", "a.txt"],
        &["-A", "1", "foo", "a.txt"],
        &["-B", "2", "foo", "a.txt"],
        &["-C", "1", "hello", "a.txt", "b.txt", "c.txt"],
        &["-C", "3", "qux", "a.txt"],
        &["-v", "hello", "a.txt"],
        &["-v", "-C", "1", "foo", "a.txt"],
        &["hello", "c.txt"],
        &["-F", "\u{20ac}", "c.txt"],
        &["newline", "c.txt"],
        &["-A", "5", "euro", "c.txt"],
        &["hello", "big.txt"],
        &["-i", "-C", "2", "hello", "big.txt", "a.txt"],
        &["-F", "line 4985", "big.txt"],
    ];
    let mut failures = Vec::new();
    for args in cases {
        let mut ours = vec!["grep", "--json"];
        ours.extend_from_slice(args);
        let s = swath_utf8(dir.tmp.path(), &ours, None);
        // One thread: ripgrep then prints the files in the order given, as grep does. Its
        // patterns are extended regular expressions (its -E names an encoding).
        let mut theirs = vec!["--json", "-j1", "--no-config"];
        theirs.extend(args.iter().filter(|&&a| a != "-E"));
        let r = Command::new(rg)
            .args(&theirs)
            .current_dir(dir.tmp.path())
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("run rg");
        if s.status.code() != r.status.code() {
            failures.push(format!(
                "{args:?}: exit status {:?}, rg's {:?} ({})",
                s.status.code(),
                r.status.code(),
                String::from_utf8_lossy(&s.stderr)
            ));
            continue;
        }
        let (a, b) = (comparable(&s.stdout), comparable(&r.stdout));
        if a.len() != b.len() {
            failures.push(format!(
                "{args:?}: {} lines, rg's {}\n--- swath ---\n{}\n--- rg ---\n{}",
                a.len(),
                b.len(),
                a.join("\n"),
                b.join("\n")
            ));
            continue;
        }
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            if x != y {
                failures.push(format!("{args:?}: line {}\nswath: {x}\nrg:    {y}", i + 1));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The messages of a `grep --json` run, each parsed.
fn messages(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8(out.to_vec())
        .expect("JSON Lines are UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn grep_json_streamed_on_all_cores_is_the_one_worker_output() {
    // The same search of a big file in small blocks on four threads and on one: the
    // messages are the same but for the times.
    let dir = Dir::new();
    corpus(&dir);
    let run = |threads: &str| {
        let o = swath_utf8(
            dir.tmp.path(),
            &[
                "grep",
                "--json",
                "--threads",
                threads,
                "--block-size",
                "4K",
                "-C",
                "2",
                "-i",
                "hello",
                "big.txt",
            ],
            None,
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        comparable(&o.stdout)
    };
    let one = run("1");
    assert_eq!(run("4"), one);
    // 5 MiB of lines, 3 matches every 997 lines.
    let matches = one
        .iter()
        .filter(|l| l.starts_with("{\"type\":\"match\""))
        .count();
    let lines = std::fs::read(dir.path("big.txt"))
        .unwrap()
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    let want = (0..lines)
        .filter(|i| matches!(i % 997, 0 | 1 | 500))
        .count();
    assert_eq!(matches, want);
}

#[test]
fn grep_json_from_a_pipe_keeps_each_line_end_and_names_the_label() {
    let dir = Dir::new();
    let o = swath_utf8(
        dir.tmp.path(),
        &["grep", "--json", "-C", "1", "x"],
        Some(b"a x\nb\nc x"),
    );
    assert_eq!(o.status.code(), Some(0));
    let m = messages(&o.stdout);
    let kinds: Vec<&str> = m.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["begin", "match", "context", "match", "end", "summary"]
    );
    assert_eq!(m[0]["data"]["path"]["text"], "(standard input)");
    let lines: Vec<&str> = m[1..4]
        .iter()
        .map(|v| v["data"]["lines"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(lines, ["a x\n", "b\n", "c x"]);
    assert_eq!(m[3]["data"]["absolute_offset"], 6);
    assert_eq!(m[3]["data"]["line_number"], 3);
    assert_eq!(m[4]["data"]["stats"]["bytes_searched"], 9);
    assert_eq!(m[4]["data"]["stats"]["matched_lines"], 2);
    // --label names standard input, as in grep's text.
    let o = swath_utf8(
        dir.tmp.path(),
        &["grep", "--json", "--label", "in", "x", "-"],
        Some(b"x\n"),
    );
    assert_eq!(messages(&o.stdout)[0]["data"]["path"]["text"], "in");
}

#[test]
fn grep_json_exit_status_is_grep_s_and_the_summary_is_always_last() {
    let dir = Dir::new();
    dir.write("a", b"one\ntwo\n");
    let run = |args: &[&str]| swath_utf8(dir.tmp.path(), args, None);
    let found = run(&["grep", "--json", "one", "a"]);
    assert_eq!(found.status.code(), Some(0));
    let none = run(&["grep", "--json", "three", "a"]);
    assert_eq!(none.status.code(), Some(1));
    let m = messages(&none.stdout);
    assert_eq!(m.len(), 1, "only the summary: {m:?}");
    assert_eq!(m[0]["type"], "summary");
    assert_eq!(m[0]["data"]["stats"]["searches"], 0);
    let missing = run(&["grep", "--json", "one", "nope", "a"]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr),
        "swath grep: nope: No such file or directory\n"
    );
    let m = messages(&missing.stdout);
    assert_eq!(m.last().unwrap()["type"], "summary");
    assert_eq!(m.last().unwrap()["data"]["stats"]["matched_lines"], 1);
}

#[test]
fn grep_json_refuses_counts_and_lists_and_prints_nothing_with_q() {
    let dir = Dir::new();
    dir.write("a", b"one\n");
    for (opt, name) in [
        ("-c", "-c (--count)"),
        ("--count", "-c (--count)"),
        ("-l", "-l (--files-with-matches)"),
        ("-L", "-L (--files-without-match)"),
    ] {
        let o = swath_utf8(dir.tmp.path(), &["grep", "--json", opt, "one", "a"], None);
        assert_eq!(o.status.code(), Some(2), "{opt}");
        assert!(o.stdout.is_empty(), "{opt}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "swath grep: {name} cannot be used with --json\n\
                 Usage: swath grep [OPTION]... PATTERNS [FILE]...\n\
                 Try 'swath grep --help' for more information.\n"
            ),
            "{opt}"
        );
    }
    for (pattern, status) in [("one", 0), ("two", 1)] {
        let o = swath_utf8(
            dir.tmp.path(),
            &["grep", "--json", "-q", pattern, "a"],
            None,
        );
        assert_eq!(o.status.code(), Some(status));
        assert!(o.stdout.is_empty());
    }
    // -o does not cut the lines: each stays whole, its matches beside it (as rg's).
    let o = swath_utf8(dir.tmp.path(), &["grep", "--json", "-o", "n", "a"], None);
    let m = messages(&o.stdout);
    assert_eq!(m[1]["data"]["lines"]["text"], "one\n");
    assert_eq!(m[1]["data"]["submatches"][0]["start"], 1);
    // After `--`, `--json` is a file name.
    let o = swath_utf8(dir.tmp.path(), &["grep", "one", "--", "--json"], None);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "swath grep: --json: No such file or directory\n"
    );
}

#[test]
fn grep_json_of_a_binary_file_says_where_it_turned_binary() {
    let dir = Dir::new();
    let mut data = b"hello text\n".to_vec();
    data.extend(std::iter::repeat_n(b'x', 100_000));
    data.extend_from_slice(b"\n\0hello binary\n");
    dir.write("bin", &data);
    let o = swath_utf8(dir.tmp.path(), &["grep", "--json", "hello", "bin"], None);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "swath grep: bin: binary file matches\n"
    );
    let m = messages(&o.stdout);
    let kinds: Vec<&str> = m.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["begin", "match", "end", "summary"]);
    // The NUL is in GNU's second 96 KiB buffer: from there on the file is binary, and its
    // selected line there (counted, not shown) ends the search.
    assert_eq!(m[2]["data"]["binary_offset"], 98304);
    assert_eq!(m[2]["data"]["stats"]["matched_lines"], 2);
    assert_eq!(m[1]["data"]["lines"]["text"], "hello text\n");
}

/// GNU wc's counts of `args`, the numbers of each line.
fn gnu_wc(dir: &Path, args: &[&str]) -> Vec<Vec<u64>> {
    let o = Command::new("/usr/bin/wc")
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("GNU wc is required for the differential tests");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            l.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .collect()
}

#[test]
fn wc_json_holds_gnu_wc_s_counts() {
    let dir = Dir::new();
    dir.write("a", b"one two\nthree\n");
    dir.write("b", "caf\u{e9} \u{20ac}\u{20ac}\n\tx".as_bytes());
    dir.write("c", b"");
    let keys = [
        ("-l", "lines"),
        ("-w", "words"),
        ("-m", "chars"),
        ("-c", "bytes"),
        ("-L", "max_line_length"),
    ];
    for flags in [
        &[][..],
        &["-l"],
        &["-w", "-m"],
        &["-c", "-L"],
        &["-l", "-w", "-m", "-c", "-L"],
    ] {
        let mut args = flags.to_vec();
        args.extend_from_slice(&["a", "b", "c"]);
        let want = gnu_wc(dir.tmp.path(), &args);
        let mut ours = vec!["wc", "--json"];
        ours.extend_from_slice(&args);
        let o = swath_utf8(dir.tmp.path(), &ours, None);
        assert_eq!(o.status.code(), Some(0), "{flags:?}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let shown: Vec<&str> = if flags.is_empty() {
            vec!["lines", "words", "bytes"]
        } else {
            keys.iter()
                .filter(|(f, _)| flags.contains(f))
                .map(|(_, k)| *k)
                .collect()
        };
        let entries: Vec<&serde_json::Value> = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .chain([&v["total"]])
            .collect();
        assert_eq!(entries.len(), want.len(), "{flags:?}: {v}");
        for (e, counts) in entries.iter().zip(&want) {
            let got: Vec<u64> = shown.iter().map(|k| e[k].as_u64().unwrap()).collect();
            assert_eq!(&got, counts, "{flags:?}: {e}");
            // Only the counts asked for (and the name, for a file).
            let n = e.as_object().unwrap().len() - usize::from(e.get("path").is_some());
            assert_eq!(n, shown.len(), "{flags:?}: {e}");
        }
        let names: Vec<&str> = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
    }
}

#[test]
fn wc_json_reports_a_file_it_cannot_read_and_keeps_wc_s_status() {
    let dir = Dir::new();
    dir.write("a", b"x\n");
    std::fs::create_dir(dir.path("d")).unwrap();
    let o = swath_utf8(
        dir.tmp.path(),
        &["wc", "--json", "-l", "a", "missing", "d"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["files"],
        serde_json::json!([
            {"path": "a", "lines": 1},
            {"path": "missing", "error": "No such file or directory"},
            {"path": "d", "error": "Is a directory"},
        ])
    );
    assert_eq!(v["total"], serde_json::json!({"lines": 1}));
    // The messages are wc's, on standard error as without --json.
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "swath wc: missing: No such file or directory\nswath wc: d: Is a directory\n"
    );
    // Standard input is "-"; --total=never leaves the total out.
    let o = swath_utf8(
        dir.tmp.path(),
        &["wc", "--json", "--total=never", "-c"],
        Some(b"abc"),
    );
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files"], serde_json::json!([{"path": "-", "bytes": 3}]));
    assert!(v.get("total").is_none(), "{v}");
    // A name that is not UTF-8: U+FFFD in the text, the bytes beside it.
    let name = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"n\xffm");
    std::fs::write(dir.tmp.path().join(name), b"z\n").unwrap();
    let o = Command::new(swath_bin())
        .args(["wc", "--json", "-l"])
        .arg(name)
        .current_dir(dir.tmp.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files"][0]["path"], "n\u{fffd}m");
    assert_eq!(
        v["files"][0]["path_bytes"],
        serde_json::json!([110, 255, 109])
    );
}

/// Every key of `v`, at any depth, that `jq .KEY` could not read unquoted.
fn unsafe_keys(v: &serde_json::Value, at: &str, bad: &mut Vec<String>) {
    let plain = regex::Regex::new("^[A-Za-z_][A-Za-z0-9_]*$").unwrap();
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if !plain.is_match(k) {
                    bad.push(format!("{at}.{k:?}"));
                }
                unsafe_keys(x, &format!("{at}.{k}"), bad);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                unsafe_keys(x, &format!("{at}[{i}]"), bad);
            }
        }
        _ => {}
    }
}

/// Checks one JSON document: schema, tool and version at its top (`tool` for the
/// outputs that name their command there: `swath` with a `report` for the log reports),
/// and plain keys throughout.
fn check_document(what: &str, v: &serde_json::Value, tool: &str, schema: u64) {
    assert_eq!(v["schema"], schema, "{what}: {v}");
    assert_eq!(v["tool"], tool, "{what}: {v}");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"), "{what}: {v}");
    let mut bad = Vec::new();
    unsafe_keys(v, "", &mut bad);
    assert!(bad.is_empty(), "{what}: keys jq needs quoted: {bad:?}");
    // Every key the output has is named in its section of docs/json.md.
    let section = match (tool, v["report"].as_str()) {
        ("swath", Some(report)) => format!("## `swath {report} --json`"),
        ("swath patch", _) => "## `swath patch make --json`".to_string(),
        (tool, _) => format!("## `{tool} --json`"),
    };
    let documented = documented_keys(&section);
    let mut keys = Vec::new();
    all_keys(v, &mut keys);
    let missing: Vec<&String> = keys.iter().filter(|k| !documented.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "{what}: keys not in docs/json.md's {section}: {missing:?}"
    );
}

/// Every identifier in backquotes in the section of docs/json.md that starts with
/// `heading` (`files[].path` gives `files` and `path`).
fn documented_keys(heading: &str) -> std::collections::HashSet<String> {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/json.md"),
    )
    .unwrap();
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("docs/json.md has no section {heading}"));
    let rest = &doc[start + heading.len()..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    section
        .split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|quoted| {
            quoted
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every object key in `v`, at any depth.
fn all_keys(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                all_keys(x, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| all_keys(x, out)),
        _ => {}
    }
}

#[test]
fn every_json_output_says_its_schema_and_version_and_has_plain_keys() {
    let dir = Dir::new();
    let cwd = dir.tmp.path();
    dir.write("a", b"hello\nworld\n");
    dir.write("b", b"hello\nWorld\n");
    dir.write("c", b"hello\n");
    let log: String = (0..40)
        .map(|i| {
            format!(
                "10.0.0.{} - - [01/Oct/2007:00:00:{:02} -0700] \"GET /ongoing/When/200x/2007/09/30/T{} HTTP/1.1\" {} {} \"http://r{}/\" \"Mozilla/5.0\"\n",
                i % 5,
                i % 60,
                i % 7,
                [200, 404, 304][i % 3],
                100 + i,
                i % 4
            )
        })
        .collect();
    dir.write("access.log", log.as_bytes());
    std::fs::create_dir_all(dir.path("old/s")).unwrap();
    std::fs::create_dir_all(dir.path("new/s")).unwrap();
    dir.write("old/s/f", &[7u8; 10_000]);
    dir.write("new/s/f", &[8u8; 10_000]);
    let run = |args: &[&str]| {
        let o = swath_utf8(cwd, args, None);
        assert!(
            o.status.code().is_some_and(|c| c < 2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        o.stdout
    };
    let doc = |args: &[&str]| -> serde_json::Value {
        let out = run(args);
        serde_json::from_slice(&out).unwrap_or_else(|e| {
            panic!(
                "{args:?}: not JSON ({e}): {}",
                String::from_utf8_lossy(&out)
            )
        })
    };
    for args in [
        &["cmp", "--json", "a", "a"][..],
        &["cmp", "--json", "a", "b"],
        &["cmp", "--json", "a", "c"],
        &["cmp", "--json", "-l", "a", "b"],
        &["cmp", "--json", "--max-diffs", "2", "a", "b"],
    ] {
        check_document(&format!("{args:?}"), &doc(args), "swath cmp", 1);
    }
    check_document(
        "wc",
        &doc(&["wc", "--json", "-lwmcL", "a", "b"]),
        "swath wc",
        1,
    );
    let wf2 = doc(&["logs", "wf2", "--json", "access.log"]);
    check_document("logs wf2", &wf2, "swath", 2);
    assert_eq!(wf2["report"], "logs wf2");
    assert!(wf2["not_found"].as_u64().is_some_and(|n| n > 0), "{wf2}");
    let summary = doc(&["logs", "summary", "--json", "access.log"]);
    check_document("logs summary", &summary, "swath", 2);
    run(&["logs", "wf2", "--emit-partial", "wf2.part", "access.log"]);
    let merged = doc(&["merge", "--json", "wf2.part"]);
    check_document("merge (wf2)", &merged, "swath", 2);
    assert_eq!(merged, wf2, "a merged report is the report");
    run(&[
        "logs",
        "summary",
        "--emit-partial",
        "summary.part",
        "access.log",
    ]);
    check_document(
        "merge (summary)",
        &doc(&["merge", "--json", "summary.part"]),
        "swath",
        2,
    );
    check_document(
        "patch make",
        &doc(&["patch", "make", "--json", "a", "b", "ab.patch"]),
        "swath patch",
        1,
    );
    check_document(
        "patch make --dry-run",
        &doc(&["patch", "make", "--json", "--dry-run", "a", "b"]),
        "swath patch",
        1,
    );
    let info = doc(&["patch", "info", "--json", "ab.patch"]);
    check_document("patch info", &info, "swath patch", 2);
    assert!(info["format_version"].as_u64().is_some(), "{info}");
    check_document(
        "patch make (tree)",
        &doc(&["patch", "make", "--json", "old", "new", "tree.patch"]),
        "swath patch",
        1,
    );
    check_document(
        "patch info (tree)",
        &doc(&["patch", "info", "--json", "tree.patch"]),
        "swath patch",
        2,
    );
    check_document(
        "demo",
        &doc(&["demo", "--json", "--size", "1M", "--runs", "1"]),
        "swath demo",
        1,
    );
    // grep: JSON Lines, ripgrep's messages with plain keys; the summary says the rest.
    let out = run(&["grep", "--json", "-C", "1", "hello", "a", "b", "c"]);
    let m = messages(&out);
    let documented = documented_keys("## `swath grep --json`");
    for (i, v) in m.iter().enumerate() {
        let mut bad = Vec::new();
        unsafe_keys(v, &format!("line {}", i + 1), &mut bad);
        assert!(bad.is_empty(), "grep: keys jq needs quoted: {bad:?}");
        let mut keys = Vec::new();
        all_keys(v, &mut keys);
        keys.retain(|k| !documented.contains(k));
        assert!(
            keys.is_empty(),
            "grep: keys not in docs/json.md: {keys:?} in {v}"
        );
    }
    let last = m.last().unwrap();
    assert_eq!(last["type"], "summary");
    check_document("grep", &last["data"], "swath grep", 1);
}
