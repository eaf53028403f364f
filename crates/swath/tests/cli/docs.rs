//! `swath completions` and `swath man`: each shell's script is loaded by that shell and
//! completes a command and an option; every manual page renders without a warning.

use std::process::Command;

use crate::util::{swath, Dir};

/// Whether `tool` runs here (CI installs bash, zsh, fish, groff and man; a tool missing
/// locally is said, not failed).
fn have(tool: &str) -> bool {
    let there = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !there {
        swath_engine::testing::skip(&format!("{tool} is not installed: its check is skipped"));
    }
    there
}

fn stdout_of(dir: &Dir, args: &[&str]) -> String {
    let out = swath(dir, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `script` in `shell` and gives its standard output.
fn run_shell(shell: &str, args: &[&str]) -> String {
    let out = Command::new(shell).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{shell} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_shell_loads_its_script_and_completes() {
    let dir = Dir::new();
    for (shell, check) in [("bash", "-n"), ("zsh", "-n"), ("fish", "-n")] {
        let script = stdout_of(&dir, &["completions", shell]);
        dir.write(&format!("s.{shell}"), script.as_bytes());
        if have(shell) {
            run_shell(
                shell,
                &[check, &dir.path(&format!("s.{shell}")).to_string_lossy()],
            );
        }
    }
    if have("bash") {
        // The completion function itself: a command from its prefix, then grep's and logs
        // summary's options (grep's read from its GNU help text).
        let script = dir.path("s.bash");
        let complete = |words: &str| -> Vec<String> {
            let n = words.split(' ').count() - 1;
            let out = run_shell(
                "bash",
                &[
                    "-c",
                    &format!(
                        "source '{}'; COMP_WORDS=({words}); COMP_CWORD={n}; _swath swath \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                        script.display()
                    ),
                ],
            );
            out.lines().map(str::to_string).collect()
        };
        assert_eq!(complete("swath lo"), ["logs"]);
        assert!(complete("swath grep --ignore-c").contains(&"--ignore-case".to_string()));
        assert!(complete("swath logs summary --exc").contains(&"--exclude-ip".to_string()));
        assert!(complete("swath cmp --max-d").contains(&"--max-diffs".to_string()));
    }
    if have("fish") {
        let script = dir.path("s.fish");
        let out = run_shell(
            "fish",
            &[
                "-c",
                &format!(
                    "source '{}'; complete -C 'swath pa'; complete -C 'swath wc --tot'",
                    script.display()
                ),
            ],
        );
        let first: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
        assert!(first.contains(&"patch"), "{out}");
        assert!(first.contains(&"--total"), "{out}");
    }
    // zsh: its completion system needs a terminal session; the script names the options.
    let zsh = stdout_of(&dir, &["completions", "zsh"]);
    assert!(zsh.contains("#compdef swath") && zsh.contains("--ignore-case"));
    for shell in ["elvish", "powershell"] {
        assert!(stdout_of(&dir, &["completions", shell]).contains("--ignore-case"));
    }
}

#[test]
fn completions_and_pages_are_written_for_packagers() {
    let dir = Dir::new();
    stdout_of(&dir, &["completions", "--dir", "comp"]);
    for name in [
        "swath.bash",
        "_swath",
        "swath.fish",
        "swath.elv",
        "_swath.ps1",
    ] {
        let f = std::fs::read(dir.path(&format!("comp/{name}"))).unwrap();
        assert!(f.len() > 1000, "{name}");
    }
    stdout_of(&dir, &["man", "--dir", "man1"]);
    let mut pages: Vec<String> = std::fs::read_dir(dir.path("man1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for want in [
        "swath.1",
        "swath-cmp.1",
        "swath-wc.1",
        "swath-grep.1",
        "swath-logs-summary.1",
        "swath-patch-make.1",
        "swath-completions.1",
    ] {
        assert!(pages.contains(&want.to_string()), "{want} in {pages:?}");
    }
    // Each page renders without a warning (groff -ww) and names its options.
    for page in &pages {
        let path = dir.path(&format!("man1/{page}"));
        if have("groff") {
            let out = Command::new("groff")
                .args(["-ww", "-man", "-Tutf8"])
                .arg(&path)
                .output()
                .unwrap();
            assert!(out.status.success(), "{page}");
            assert!(
                out.stderr.is_empty(),
                "{page}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!out.stdout.is_empty());
        }
    }
    if have("man") {
        let out = Command::new("man")
            .args(["-l", "-P", "cat"])
            .arg(dir.path("man1/swath-grep.1"))
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("--ignore-case"), "{text}");
        assert!(text.contains("ignore case distinctions"), "{text}");
    }
}

#[test]
fn man_prints_one_page_and_refuses_unknown_commands() {
    let dir = Dir::new();
    let page = stdout_of(&dir, &["man", "logs", "summary"]);
    assert!(
        page.contains(".TH swath-logs-summary 1"),
        "{}",
        &page[..200]
    );
    assert!(page.contains("exclude\\-ip"));
    let out = swath(&dir, &["man", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "swath man: 'nope' is not a command of swath (try 'swath --help')\n"
    );
    let out = swath(&dir, &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    // A --dir that cannot be made: one line naming it and the cause.
    dir.write("afile", b"x");
    let out = swath(&dir, &["man", "--dir", "afile"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "swath man: afile: File exists\n"
    );
    let out = swath(&dir, &["completions", "--dir", "afile/sub"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "swath completions: afile/sub: Not a directory\n"
    );
}

#[test]
fn version_says_the_commit_and_the_fast_paths() {
    let dir = Dir::new();
    let v = stdout_of(&dir, &["--version"]);
    let lines: Vec<&str> = v.lines().collect();
    assert!(
        lines[0].starts_with(&format!("swath {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    assert!(lines.iter().any(|l| l.starts_with("AVX2: ")), "{v}");
    assert!(lines.iter().any(|l| l.starts_with("io_uring: ")), "{v}");
    // SWATH_NO_IO_URING turns the io_uring paths off: --version says so.
    let out = Command::new(crate::util::swath_bin())
        .arg("--version")
        .env("SWATH_NO_IO_URING", "1")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("io_uring: no (SWATH_NO_IO_URING is set"));
}

/// The commands under `swath` (and under each of them), from the help's "Commands:" lists.
fn commands(dir: &Dir, path: &[&str]) -> Vec<Vec<String>> {
    let mut args: Vec<&str> = path.to_vec();
    args.push("--help");
    let help = stdout_of(dir, &args);
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line == "Commands:" {
            inside = true;
            continue;
        }
        if inside && !line.starts_with("  ") {
            break;
        }
        // A command's line starts with two spaces and its name; wrapped text has more.
        if inside && !line.starts_with("   ") {
            let name = line.split_whitespace().next().unwrap();
            if name != "help" {
                let mut p: Vec<String> = path.iter().map(|s| s.to_string()).collect();
                p.push(name.to_string());
                out.push(p);
            }
        }
    }
    let subs: Vec<Vec<String>> = out
        .iter()
        .flat_map(|p| {
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            commands(dir, &p)
        })
        .collect();
    out.extend(subs);
    out
}

/// Every command's `--help` is in plain words (no name from the articles swath started
/// from, which only GUIDE.md explains), and its "Engine options" section holds only the
/// engine's options (not the command's own options or operands).
#[test]
fn every_help_is_in_plain_words_with_its_own_options_first() {
    let dir = Dir::new();
    let all = commands(&dir, &[]);
    for want in ["cmp", "grep", "logs summary", "patch make", "gen text"] {
        assert!(
            all.iter().any(|c| c.join(" ") == want),
            "{want} not found in {all:?}"
        );
    }
    let jargon = [
        "cci",
        "compMP",
        "seeds'",
        "seed's",
        "seed article",
        "mismatch table",
    ];
    for c in std::iter::once(Vec::new()).chain(all) {
        let mut args: Vec<&str> = c.iter().map(String::as_str).collect();
        args.push("--help");
        let help = stdout_of(&dir, &args);
        for word in jargon {
            assert!(
                !help.contains(word),
                "`swath {}` says {word:?}:\n{help}",
                c.join(" ")
            );
        }
        // A command that does work (not a group of commands) shows an example or two.
        if !help.contains("\nCommands:\n") {
            assert!(
                help.lines().any(|l| l.starts_with("Example")),
                "`swath {}` has no example:\n{help}",
                c.join(" ")
            );
        }
        let mut engine = false;
        for line in help.lines() {
            if !line.starts_with(' ') {
                engine = line == "Engine options:";
                continue;
            }
            let t = line.trim_start();
            if engine && line.len() - t.len() < 8 && t.starts_with(['-', '[', '<']) {
                let option = t.split_whitespace().next().unwrap();
                assert!(
                    [
                        "--threads",
                        "--block-size",
                        "--layout",
                        "--time",
                        "--strategy"
                    ]
                    .contains(&option),
                    "`swath {}` lists {option} under Engine options:\n{help}",
                    c.join(" ")
                );
            }
        }
    }
}
