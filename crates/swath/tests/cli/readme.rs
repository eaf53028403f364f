//! The README's shell commands, run exactly as written (issue 30): every line of its `sh`
//! blocks, in a scratch HOME where swath is where `cargo install` puts it (`~/.cargo/bin`),
//! from a directory holding the files the examples name. A line that builds or installs
//! the whole project is run by CI itself instead, and the test checks that CI runs it
//! verbatim (or says where else it runs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{swath_bin, Dir};

/// README lines not run here, and where they run.
const ELSEWHERE: &[(&str, &str)] = &[
    ("cargo run --release -- demo", ".ci/run"),
    ("scripts/test", ".ci/run"),
    ("scripts/package-deb", ".ci/run"),
    (
        "cargo install --locked --path crates/swath",
        "here ~/.cargo/bin/swath is the binary these tests built (a second release build would \
         take minutes)",
    ),
    (
        "sudo apt install ./target/debian/swath_*.deb",
        "scripts/test-package (from .ci/run) unpacks the package into a clean directory and \
         checks the binary, pages and completions",
    ),
    (
        "pip install ./crates/swath-py[dask]",
        "scripts/test-python builds the same package with maturin develop",
    ),
    (
        "cd crates/swath-py && maturin develop",
        "scripts/test-python",
    ),
];

/// What the README tells a user whose PATH lacks `~/.local/bin`, for `man swath-grep`.
const README_MANPATH: &str = "export MANPATH=\"$HOME/.local/share/man:\"";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The commands of the README's `sh` blocks, in order (a command spanning lines, such as
/// a `while` loop, is one).
fn commands() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            assert!(pending.is_empty(), "a command left open: {pending}");
            continue;
        }
        if !in_sh || line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        pending.push_str(line);
        pending.push('\n');
        let complete = Command::new("bash")
            .args(["-n", "-c", &pending])
            .output()
            .unwrap()
            .status
            .success();
        if complete {
            out.push(std::mem::take(&mut pending));
        }
    }
    out
}

/// A command without its comment (`  # ...`), for matching against [`ELSEWHERE`].
fn bare(command: &str) -> &str {
    command.split("  #").next().unwrap().trim()
}

/// The files the README's examples name.
fn fixtures(work: &Path) {
    let run = |args: &[&str]| {
        let o = Command::new(swath_bin())
            .args(args)
            .current_dir(work)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {o:?}");
    };
    let mut a = b"line of text\n".repeat(8000);
    std::fs::write(work.join("a"), &a).unwrap();
    for i in 0..20 {
        a[i * 4000 + 3] = b'X';
    }
    std::fs::write(work.join("b"), &a).unwrap();
    run(&["gen", "text", "4M", "big.txt"]);
    append(&work.join("big.txt"), b"a needle in it\n");
    std::fs::write(work.join("small.txt"), b"needle\n").unwrap();
    run(&["gen", "log", "1M", "big.log"]);
    append(&work.join("big.log"), b"error: disk full\n");
    std::fs::create_dir_all(work.join("linux/mm")).unwrap();
    std::fs::write(
        work.join("linux/mm/slab.c"),
        b"#include <linux/slab.h>\n\nvoid *f(void)\n{\n\treturn kmalloc(8, GFP_KERNEL);\n}\n",
    )
    .unwrap();
    run(&["gen", "log", "2M", "access.log"]);
    let gz = Command::new("sh")
        .args(["-c", "gzip -c access.log > access.log.gz"])
        .current_dir(work)
        .status()
        .unwrap();
    assert!(gz.success());
    let nginx: String = (0..500)
        .map(|i| {
            format!(
                "10.0.{}.{} - - [10/Oct/2026:13:{:02}:{:02} +0000] \"GET /page/{} HTTP/1.1\" {} {}\n",
                i / 200,
                i % 200,
                i / 60,
                i % 60,
                i % 37,
                [200, 200, 304, 404][i % 4],
                1000 + i
            )
        })
        .collect();
    std::fs::write(work.join("nginx.log"), nginx).unwrap();
    run(&["gen", "text", "2M", "v1.so", "--seed", "3"]);
    run(&["gen", "mutate", "v1.so", "v2.so", "--diffs", "50"]);
    for (tree, extra) in [("linux-6.1.190", "old"), ("linux-6.1.192", "new")] {
        let t = work.join(tree);
        std::fs::create_dir_all(t.join("kernel")).unwrap();
        std::fs::write(t.join("Makefile"), format!("VERSION = 6\n# {extra}\n")).unwrap();
        std::fs::write(
            t.join("kernel/fork.c"),
            b"int fork(void) { return 0; }\n".repeat(50),
        )
        .unwrap();
    }
}

fn append(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

/// Runs `command` with bash as a user would in `work`, HOME being `home`.
fn run(command: &str, home: &Path, work: &Path) -> Output {
    let path = format!(
        "{h}/.cargo/bin:{h}/.local/bin:/usr/local/bin:/usr/bin:/bin",
        h = home.display()
    );
    let mut cmd = Command::new("timeout");
    if command.contains("--follow") {
        // Runs until interrupted: Ctrl-C after its first page.
        cmd.args(["-s", "INT", "6"]);
    } else {
        cmd.arg("300");
    }
    cmd.args(["bash", "-o", "pipefail", "-c", command])
        .current_dir(work)
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .env("LANG", "C.UTF-8")
        .env("TMPDIR", home)
        .output()
        .unwrap()
}

#[test]
fn every_readme_command_runs_as_written() {
    let dir = Dir::new();
    let home = dir.path("home");
    let work = home.join("work");
    std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    // What `cargo install --locked --path crates/swath` leaves.
    std::os::unix::fs::symlink(swath_bin(), home.join(".cargo/bin/swath")).unwrap();
    fixtures(&work);

    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    let commands = commands();
    assert!(commands.len() > 40, "the README's commands: {commands:?}");
    let mut failures = Vec::new();
    let mut elsewhere_seen = Vec::new();
    for command in &commands {
        if let Some((line, place)) = ELSEWHERE.iter().find(|(l, _)| *l == bare(command)) {
            if *place == ".ci/run" {
                assert!(
                    ci.lines().any(|l| l.trim() == *line),
                    "the README's `{line}` is not run verbatim by .ci/run"
                );
            }
            elsewhere_seen.push(*line);
            continue;
        }
        let o = run(command, &home, &work);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let bare = bare(command);
        let ok = if bare.contains("--follow") {
            // Interrupted by the test: the page must have been written before.
            work.join("live.html").exists()
        } else if bare.starts_with("swath cmp") {
            // a and b differ: status 1 and a result on standard output.
            o.status.code() == Some(1) && !o.stdout.is_empty()
        } else {
            o.status.success()
        };
        if !ok {
            failures.push(format!(
                "{}: status {:?}\nstdout: {}\nstderr: {stderr}",
                command.trim(),
                o.status.code(),
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Every line run elsewhere is still in the README (else the list above is stale).
    for (line, _) in ELSEWHERE {
        assert!(
            elsewhere_seen.contains(line),
            "`{line}` is no longer in the README"
        );
    }
    // What the install lines left behind works.
    for file in [
        ".local/bin/cmp",
        ".local/share/bash-completion/completions/swath",
        ".zfunc/_swath",
        ".config/fish/completions/swath.fish",
        ".local/share/man/man1/swath-grep.1",
    ] {
        assert!(home.join(file).exists(), "{file} missing");
    }
    // A cargo user whose PATH has only ~/.cargo/bin: `man` finds the pages through the
    // MANPATH the README gives for that case.
    let export = README_MANPATH;
    assert!(
        std::fs::read_to_string(repo().join("README.md"))
            .unwrap()
            .contains(export),
        "the README no longer says {export}"
    );
    let man = Command::new("bash")
        .args(["-c", &format!("{export}; man swath-grep")])
        .current_dir(&work)
        .env_clear()
        .env("HOME", &home)
        .env(
            "PATH",
            format!("{}/.cargo/bin:/usr/bin:/bin", home.display()),
        )
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&man.stdout).contains("swath-grep"),
        "{man:?}"
    );
    let o = run("cmp --version", &home, &work);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("swath"),
        "cmp in PATH is not swath: {o:?}"
    );
}

/// The README explains its words before it uses them (issue 30: "seed articles", "compMP"
/// and "cci strategies" were never said), and says how long its set-up commands take.
#[test]
fn the_readme_says_what_its_words_mean() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(!text.contains("seed article") && !text.contains("the seeds'"));
    for term in ["compMP", "cci"] {
        let first = text
            .find(term)
            .unwrap_or_else(|| panic!("{term} not in the README"));
        let sentence_start = text[..first].rfind("\n\n").unwrap_or(0);
        let paragraph = &text[sentence_start..first + 200.min(text.len() - first)];
        assert!(
            paragraph.contains("Hart"),
            "{term} is first used without saying whose it is: {paragraph}"
        );
    }
    let setup: Vec<&str> = text.lines().skip(3).take(2).collect();
    assert!(
        setup.iter().all(|l| l.contains("minutes")),
        "the set-up commands do not say how long they take: {setup:?}"
    );
}
