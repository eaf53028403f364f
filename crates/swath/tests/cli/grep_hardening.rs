//! `swath grep` against GNU grep 3.8 where GNU grep's own tests found it failing (issue 26,
//! items 18 to 22): a `-P` probe of the empty string, devices and FIFOs under `-D skip`, `-i`
//! in a unibyte locale with three case forms of one letter (Greek sigma in ISO-8859-7),
//! nesting as deep as GNU's stack allows, and write errors when the caller ignores SIGPIPE.
//!
//! Each case is a shell command line that calls `grep` (or `wc`, `cmp`) from PATH, run once
//! with GNU's tools and once with swath's: standard output, standard error and the exit
//! status must be the same ([`crate::util::same_as_gnu_sh_env`]).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::{same_as_gnu_sh_env, swath_bin, Dir, Outcome, Paused};

const C: &[(&str, &str)] = &[("LC_ALL", "C")];
const UTF8: &[(&str, &str)] = &[("LC_ALL", "C.UTF-8")];

fn mkfifo(path: &Path) {
    let c =
        std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str())).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

// ---------------------------------------------------------------------------------------
// Item 18: -P and the empty string

/// A look-behind at the start of an empty subject: swath probes whether the pattern matches
/// the empty string once, at compile time, and PCRE2's JIT looks at the bytes before the
/// subject for it (with an empty slice's dangling pointer, 0x1: a crash).
#[test]
fn perl_look_behind_on_an_empty_subject() {
    let dir = Dir::new();
    dir.write("lines", b"aab\n\nb\nab\n");
    for env in [C, UTF8] {
        for script in [
            "echo x | grep -P '(?<=aa)b*'; echo $?",
            "printf '\\n' | grep -P -c '(?<=aa)b*'",
            "grep -P -n '(?<=aa)b*' lines",
            "grep -P -o '(?<=a)b*' lines; echo $?",
            "grep -P -c '(?<!a)' lines",
            "grep -P -x '(?<=a)' lines; echo $?",
            "grep -P -v -n '(?<=\\w{3})' lines",
            "printf '' | grep -P -c '(?<=aa)'",
        ] {
            same_as_gnu_sh_env(&dir, script, env);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Item 19: devices and FIFOs under -D

/// `-D skip` leaves a FIFO without opening it for good: GNU opens with `O_NONBLOCK` and looks
/// at what it opened, so a FIFO nobody writes to does not block it. (`timeout` only keeps a
/// blocked grep from hanging the test: GNU answers at once.) `-D read`, and the default for
/// files named on the command line, still read a FIFO.
#[test]
fn devices_and_fifos_under_d_skip_are_left_without_blocking() {
    let dir = Dir::new();
    dir.write("file", b"foo\nbar\n");
    mkfifo(&dir.path("fifo"));
    std::fs::create_dir(dir.path("tree")).unwrap();
    dir.write("tree/file", b"foo\n");
    mkfifo(&dir.path("tree/fifo"));
    for script in [
        "timeout 60 grep -D skip foo fifo; echo $?",
        "timeout 60 grep -D skip -H foo fifo file /dev/null; echo $?",
        "timeout 60 grep -D skip -c foo file fifo; echo $?",
        "timeout 60 grep -D skip -L foo fifo file; echo $?",
        "timeout 60 grep -r -D skip foo fifo tree | sort; echo $?",
        "timeout 60 grep --devices=skip -v foo /dev/null fifo; echo $?",
        "timeout 60 grep -r foo tree | sort; echo $?",
        // Read, with a writer: the FIFO is opened (blocking) and read to its end.
        "echo foo > fifo & timeout 60 grep -D read foo fifo; echo $?; wait",
        "echo foo > fifo & timeout 60 grep -c foo fifo file; echo $?; wait",
        "echo foo > fifo & timeout 60 grep -D read -H foo - < fifo; echo $?; wait",
    ] {
        same_as_gnu_sh_env(&dir, script, C);
    }
}

/// A file of a tree swapped for a FIFO between the walk and the open (another user's tree,
/// root's `grep -r`): GNU's open of a file found in a tree has `O_NONBLOCK` (devices found
/// there are skipped), so the FIFO is seen and left; a blocking open would wait forever.
#[test]
fn a_file_swapped_for_a_fifo_during_grep_r_is_left() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path("tree")).unwrap();
    dir.write("tree/a", b"foo\n");
    let mut cmd = Command::new("timeout");
    cmd.arg("60")
        .arg(swath_bin())
        .args(["grep", "-r", "foo", "tree"])
        .current_dir(dir.tmp.path());
    let mut p = Paused::spawn(cmd, dir.tmp.path(), "grep-open");
    assert!(p.reached(), "grep never reached the open of tree/a");
    std::fs::remove_file(dir.path("tree/a")).unwrap();
    mkfifo(&dir.path("tree/a"));
    let out = p.resume();
    assert_eq!(
        Outcome::from(out),
        Outcome {
            stdout: String::new(),
            stderr: String::new(),
            status: Some(1)
        }
    );
}

// ---------------------------------------------------------------------------------------
// Item 20: -i in a unibyte locale

/// Makes el_GR.ISO-8859-7 in the scratch directory (`None`, the check skipped, when
/// localedef cannot).
fn greek_locale(dir: &Dir) -> Option<String> {
    let locales = dir.path("locales");
    std::fs::create_dir(&locales).unwrap();
    let made = Command::new("localedef")
        .args(["-f", "ISO-8859-7", "-i", "el_GR"])
        .arg(locales.join("el_GR.ISO-8859-7"))
        .status();
    if !made.is_ok_and(|s| s.success() || s.code() == Some(1)) {
        swath_engine::testing::skip("localedef could not make el_GR.ISO-8859-7 here: skipped");
        return None;
    }
    Some(locales.to_str().unwrap().to_string())
}

/// In ISO-8859-7 the capital sigma Σ (0xD3) is the upper case of both σ (0xF3) and the final
/// ς (0xF2). GNU's `-i` matches every byte whose upper case is the pattern byte's (dfa.c's
/// `setbit_case_fold_c`, kwset's `toupper` table, glibc's `RE_ICASE`), so each of the three
/// finds all three; and with a back-reference glibc's matcher runs without the fastmap that
/// it builds wrongly under `RE_ICASE` (it would skip lines that start with ς).
#[test]
fn unibyte_case_folding_takes_every_byte_with_the_same_upper_case() {
    let dir = Dir::new();
    let Some(loc) = greek_locale(&dir) else {
        return;
    };
    dir.write(
        "sigma",
        b"\xd3\n\xf3\n\xf2\nx\n\xd3\xf3\xf2\n\xf2\xf2\n\xf3\xf3\n\xd3\xd3\nab \xf2\xf2 \xd3\xf3\n\
          \xf2\xd3\n\xe1\xc1\nA a\n",
    );
    let patterns: [&[u8]; 14] = [
        b"\xd3",
        b"\xf3",
        b"\xf2",
        b"[\xf2]",
        b"[\xd3x]",
        b"[^\xf3]",
        b"\xf3\xf3*",
        b"\\(\xf3\\)\\1",
        b"\\(\xd3\\)\\1",
        b"\\(\xf2\\)\\1",
        b"\\(\xf2\\).*\\1",
        b"\xe1",
        b"\\(a\\) \\1",
        b"\xd3\\|x",
    ];
    let env = [("LOCPATH", loc.as_str()), ("LC_ALL", "el_GR.ISO-8859-7")];
    for (i, p) in patterns.iter().enumerate() {
        let file = format!("p{i}");
        dir.write(&file, &[*p, b"\n"].concat());
        for opts in ["-i", "-ic", "-io", "-in", "-ix", "-iv", "-iF -c", "-iF -o"] {
            // The output in hexadecimal: ISO-8859-7 is not UTF-8 (the outcome's text).
            same_as_gnu_sh_env(
                &dir,
                &format!("grep {opts} -f {file} sigma > out; echo $?; od -An -tx1 out"),
                &env,
            );
        }
    }
    dir.write("e0", b"(\xf3)\\1\n");
    dir.write("e1", b"(\xf2|x)\\1\n");
    same_as_gnu_sh_env(
        &dir,
        "grep -E -i -o -f e0 sigma > out; echo $?; od -An -tx1 out; grep -E -ic -e x -f e1 sigma",
        &env,
    );
}

/// In ISO-8859-7 the Greek letters are word characters (`isalnum`), so GNU's `-w` and word
/// anchors do not take `Ó` (Σ) in `Óó` (Σσ) for a word, as they would if only ASCII
/// letters made words; and `\B` holds between two Greek letters.
#[test]
fn unibyte_word_characters_are_the_locales() {
    let dir = Dir::new();
    let Some(loc) = greek_locale(&dir) else {
        return;
    };
    dir.write(
        "words",
        b"\xd3\n\xd3\xf3\xf2\n\xd3 x\nx\xd3\n\xd3x\n_\xd3_\n\xe1\xe2 \xd3\xf3\n\xd3.\xf3\n\
          ab \xd3\xd3 \xf3\n\xc1\xd3\xc1 \xd3\n\xd3\xf3 \xd3\xf3\xf3\n",
    );
    let patterns: [&[u8]; 11] = [
        b"\xd3",
        b"x",
        b"ab",
        b"\xd3\xf3",
        b"\\<\xd3",
        b"\xd3\\>",
        b"\\b\xf3",
        b"\\B\xf3",
        b"\\<\xd3*\\>",
        b"\xd3\\|x",
        b"\\(\xd3\\)\\1",
    ];
    let env = [("LOCPATH", loc.as_str()), ("LC_ALL", "el_GR.ISO-8859-7")];
    for (i, p) in patterns.iter().enumerate() {
        let file = format!("p{i}");
        dir.write(&file, &[*p, b"\n"].concat());
        for opts in [
            "", "-w", "-wc", "-wo", "-on", "-iw", "-wx", "-wv", "-wF -o", "-iwF -c",
        ] {
            same_as_gnu_sh_env(
                &dir,
                &format!("grep {opts} -f {file} words > out; echo $?; od -An -tx1 out"),
                &env,
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Item 21: deep nesting

/// GNU's test `stack-overflow`: 30,000 `(` overflow the stack of GNU's parsers, and grep
/// says `grep: stack overflow` (status 2) whether the groups are closed or not; a balanced
/// pattern 10,000 groups deep (under GNU's limit, about 12,400 with an 8 MiB stack) matches
/// as any other. An error in an earlier pattern is reported first.
#[test]
fn nesting_as_deep_as_gnu_reads_it() {
    let dir = Dir::new();
    let deep = |n: usize, open: &str, close: &str| {
        format!("{}a{}\n", open.repeat(n), close.repeat(n)).into_bytes()
    };
    dir.write("open30k", "(".repeat(30_000).as_bytes());
    dir.write("open30k-bre", r"\(".repeat(30_000).as_bytes());
    dir.write("deep10k", &deep(10_000, "(", ")"));
    dir.write("deep10k-bre", &deep(10_000, r"\(", r"\)"));
    dir.write("alt10k", &deep(10_000, "(b|", ")"));
    dir.write(
        "backref10k",
        &[&deep(10_000, "(", ")")[..], b"\\1"].concat(),
    );
    dir.write("deep30k", &deep(30_000, "(", ")"));
    dir.write("hay", b"a\naa\nb\nxa ay\nbab\n");
    for env in [C, UTF8] {
        for script in [
            "grep -E -f open30k hay; echo $?",
            "grep -f open30k-bre hay; echo $?",
            "grep -E -f deep30k hay; echo $?",
            "grep -E -e '(' -f open30k hay; echo $?",
            "grep -E -c -f deep10k hay",
            "grep -E -n -o -f deep10k hay",
            "grep -E -i -w -f deep10k hay",
            "grep -x -n -f deep10k-bre hay",
            "grep -c -f deep10k-bre -e b hay",
            "grep -E -c -f alt10k hay",
            "grep -E -o -f backref10k hay",
            "grep -E -c -w -f backref10k hay",
        ] {
            same_as_gnu_sh_env(&dir, script, env);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Item 22: write errors with SIGPIPE ignored

/// Runs `sh -c SCRIPT` with the tools of `bin_dir` first in PATH and standard output a pipe
/// whose reading end is already closed: every write to it fails with EPIPE, or raises
/// SIGPIPE where that is not ignored (the script ignores it with `trap '' PIPE`).
fn into_closed_pipe(dir: &Dir, bin_dir: &Path, script: &str) -> Outcome {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .env("LC_ALL", "C")
        .current_dir(dir.tmp.path())
        .stdin(Stdio::null())
        .stdout(writer)
        .output()
        .unwrap()
        .into()
}

/// With SIGPIPE ignored by the caller, a write to a closed pipe fails with EPIPE and GNU's
/// tools report it (`grep: write error: Broken pipe`, status 2; `wc: write error`, 1; `cmp:
/// standard output: Broken pipe`, 2); with SIGPIPE at its default the same write ends them
/// (a shell says 141).
#[test]
fn write_to_a_closed_pipe_as_gnu_with_sigpipe_ignored_or_not() {
    let dir = Dir::new();
    dir.write("a", b"foo\nbar\nfoo bar\n");
    dir.write("b", b"foo\nbaz\n");
    let lines: String = (0..20_000).map(|i| format!("{i}\n")).collect();
    dir.write("many", lines.as_bytes());
    dir.write("other", &lines.as_bytes()[..50_000]);
    std::fs::create_dir(dir.path("d")).unwrap();
    dir.write("d/x", b"foo\n");
    let [gnu, swath] = dir.bin_dirs();
    for trap in ["trap '' PIPE; ", ""] {
        for cmd in [
            "grep foo a",
            "grep -c foo a",
            "grep -r foo d",
            "grep -n 1 many",
            "yes foo | grep foo",
            "grep --help",
            "grep -q foo a",
            "wc a",
            "wc -l many a",
            "wc --help",
            "cmp a b",
            "cmp -l many other",
            "cmp a a",
        ] {
            let script = format!("{trap}{cmd}; echo \"status $?\" >&2");
            let want = into_closed_pipe(&dir, &gnu, &script);
            let got = into_closed_pipe(&dir, &swath, &script);
            assert_eq!(got, want, "sh -c {script:?} into a closed pipe");
        }
    }
}

/// swath's own commands with SIGPIPE ignored: one line, `swath CMD: write error: Broken
/// pipe`, and status 2 (no panic, no death by signal); with SIGPIPE at its default they die
/// of it, as the GNU tools do.
#[test]
fn swath_commands_report_a_closed_pipe_when_sigpipe_is_ignored() {
    use std::os::unix::process::ExitStatusExt;
    let dir = Dir::new();
    dir.write("a", b"foo\nbar\n");
    dir.write("b", b"foo\nbaz\n");
    for setup in [
        &["gen", "log", "20000", "access.log"][..],
        &["patch", "make", "a", "b", "p.swp"],
    ] {
        let made = crate::util::swath(&dir, setup);
        assert!(made.status.success(), "{setup:?}: {made:?}");
    }
    let swath = swath_bin();
    for (args, prog) in [
        ("grep foo a", "swath grep"),
        ("wc a", "swath wc"),
        ("logs summary access.log", "swath logs"),
        ("logs summary --csv access.log", "swath logs"),
        ("patch info p.swp", "swath patch"),
        ("cipher --shift 1 a -", "swath cipher"),
        ("merge --help", "swath"),
        ("man grep", "swath man"),
        ("completions bash", "swath completions"),
        ("split a --pieces 2", "swath split"),
        ("--help", "swath"),
    ] {
        for (trap, want) in [
            (
                "trap '' PIPE; ",
                format!(
                    "{prog}: write error{}\n",
                    if prog == "swath wc" {
                        ""
                    } else {
                        ": Broken pipe"
                    }
                ),
            ),
            ("", String::new()),
        ] {
            let script = format!("{trap}exec '{}' {args}", swath.display());
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            let out = Command::new("/bin/sh")
                .arg("-c")
                .arg(&script)
                .current_dir(dir.tmp.path())
                .stdin(Stdio::null())
                .stdout(writer)
                .output()
                .unwrap();
            let stderr = crate::util::without_format_line(&out.stderr);
            if trap.is_empty() {
                assert_eq!(
                    (out.status.signal(), stderr.as_str()),
                    (Some(libc::SIGPIPE), ""),
                    "{script}"
                );
            } else {
                assert_eq!(
                    (out.status.code(), stderr),
                    (Some(if prog == "swath wc" { 1 } else { 2 }), want),
                    "{script}"
                );
            }
        }
    }
}
