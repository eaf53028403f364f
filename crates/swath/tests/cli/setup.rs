//! The README's test command sets a fresh machine up by itself: it is `scripts/test`, which
//! installs what the tests need (`scripts/test-deps`) and then runs every test, Rust and
//! Python, with a check skipped for a missing tool counted as a failure; `.ci/run` calls the
//! same scripts.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The commands of a script, comments and blank lines left out.
fn commands(script: &str) -> Vec<String> {
    script
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

#[test]
fn the_readme_test_command_installs_what_it_needs_then_runs_every_test() {
    let readme = read("README.md");
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("README starts with a sh block");
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(lines.len(), 2, "two set-up commands: {block}");
    let test_command = lines[1].split('#').next().unwrap().trim();
    assert_eq!(test_command, "scripts/test");

    let test = commands(&read("scripts/test"));
    let at = |cmd: &str| {
        test.iter()
            .position(|l| l.starts_with(cmd))
            .unwrap_or_else(|| panic!("scripts/test runs {cmd}: {test:?}"))
    };
    let deps = at("scripts/test-deps");
    let strict = at("export SWATH_TEST_STRICT=1");
    let cargo = at("cargo test --workspace");
    let python = at("scripts/test-python");
    assert!(
        deps < strict && strict < cargo && cargo < python,
        "{test:?}"
    );
    assert!(test.contains(&"set -euo pipefail".to_string()));

    // CI installs before it builds, and its test step is the README's command.
    let ci = commands(&read(".ci/run"));
    let deps = ci.iter().position(|l| l == "scripts/test-deps");
    let clippy = ci.iter().position(|l| l.starts_with("cargo clippy"));
    let tests = ci.iter().position(|l| l == test_command);
    assert!(
        deps.is_some() && deps < clippy && clippy < tests,
        ".ci/run: {ci:?}"
    );
}

#[test]
fn every_tool_a_test_checks_for_is_installed_by_test_deps() {
    // The programs whose absence made a test skip its check before the test script
    // installed them, as test-deps looks for them.
    let deps = read("scripts/test-deps");
    for tool in [
        "/usr/bin/cmp",
        "/usr/bin/grep",
        "/usr/bin/setpriv",
        "/usr/bin/script",
        "/usr/bin/time",
        "/usr/bin/chromium",
        "/usr/bin/xdelta3",
        "/usr/bin/xmllint",
        "command -v rg",
        "/usr/bin/goaccess",
        "libpcre2-8",
        "charmaps/EUC-JP.gz",
        "command -v zsh",
        "command -v fish",
        "command -v groff",
        "command -v man",
        "command -v gzip",
        "ensurepip, venv",
    ] {
        assert!(
            deps.contains(tool),
            "scripts/test-deps does not look for {tool}"
        );
    }
}
