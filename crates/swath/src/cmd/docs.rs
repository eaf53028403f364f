//! `swath completions` and `swath man`: shell completion scripts and manual pages made
//! from the same clap definitions that parse the command line, so they cannot drift from
//! the options. `grep`'s options are parsed by a GNU-compatible parser, not clap: its
//! definition here is read from its own `--help` text, option by option.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::{Arg, ArgAction, Command};
use clap_complete::Shell;

/// The options of `swath completions`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  swath completions bash > ~/.local/share/bash-completion/completions/swath
  swath completions zsh > ~/.zfunc/_swath      (with fpath+=~/.zfunc in ~/.zshrc)
  swath completions fish > ~/.config/fish/completions/swath.fish
  swath completions --dir completions          (every shell's script, for packagers)")]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum, required_unless_present = "dir")]
    shell: Option<Shell>,
    /// Write every shell's script into DIR (swath.bash, _swath, swath.fish, swath.elv,
    /// _swath.ps1) instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "shell")]
    dir: Option<PathBuf>,
}

/// The options of `swath man`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  swath man | man -l -             read swath's manual page
  swath man logs summary | man -l -
  swath man --dir man/man1         every page (swath.1, swath-cmp.1, ...), for packagers")]
pub struct ManArgs {
    /// The command whose page to print (`grep`, `logs summary`); none: swath's own page.
    #[arg(value_name = "COMMAND")]
    command: Vec<String>,
    /// Write every page into DIR (swath.1 and swath-COMMAND.1 for each command) instead of
    /// printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    dir: Option<PathBuf>,
}

/// Every shell a script is made for, and its file name under `--dir`.
const SHELLS: [(Shell, &str); 5] = [
    (Shell::Bash, "swath.bash"),
    (Shell::Zsh, "_swath"),
    (Shell::Fish, "swath.fish"),
    (Shell::Elvish, "swath.elv"),
    (Shell::PowerShell, "_swath.ps1"),
];

/// `swath completions`.
pub fn completions(args: CompletionsArgs, cli: Command) -> Result<()> {
    let mut cli = full(cli);
    if let Some(dir) = args.dir {
        make_dir(&dir)?;
        for (shell, name) in SHELLS {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli, "swath", &mut script);
            write_file(&dir.join(name), &script)?;
        }
        return Ok(());
    }
    let Some(shell) = args.shell else {
        bail!("give a shell (bash, zsh, fish, elvish, powershell) or --dir");
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cli, "swath", &mut script);
    print("swath completions", &script)
}

/// `swath man`.
pub fn man(args: ManArgs, cli: Command) -> Result<()> {
    let cli = full(cli);
    if let Some(dir) = args.dir {
        make_dir(&dir)?;
        for (name, cmd) in pages(&cli, "swath") {
            write_file(&dir.join(format!("{name}.1")), &render(cmd, &name)?)?;
        }
        return Ok(());
    }
    let mut cmd = &cli;
    let mut name = String::from("swath");
    for word in &args.command {
        match cmd.find_subcommand(word) {
            Some(sub) => {
                cmd = sub;
                name = format!("{name}-{}", sub.get_name());
            }
            None => bail!(
                "'{}' is not a command of {} (try 'swath --help')",
                word,
                name.replace('-', " ")
            ),
        }
    }
    print("swath man", &render(cmd, &name)?)
}

/// The page of `cmd`, titled `name` (`swath-logs-summary`).
fn render(cmd: &Command, name: &str) -> Result<Vec<u8>> {
    let cmd = cmd
        .clone()
        .name(name.to_string())
        .bin_name(name.replace('-', " "));
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd)
        .date(env!("SWATH_BUILD_DATE"))
        .source(format!("swath {}", env!("CARGO_PKG_VERSION")))
        .manual("swath manual")
        .render(&mut page)?;
    Ok(page)
}

/// Every command with a page, swath's first, named `swath-a-b` for `swath a b`.
fn pages<'c>(cmd: &'c Command, name: &str) -> Vec<(String, &'c Command)> {
    let mut out = vec![(name.to_string(), cmd)];
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        out.extend(pages(sub, &format!("{name}-{}", sub.get_name())));
    }
    out
}

/// `PATH: cause`, the cause in the system's words (no error number, no second path).
fn io_error(path: &Path, e: &std::io::Error) -> anyhow::Error {
    let cause = match e.raw_os_error() {
        Some(code) => swath_engine::error::os_message(&std::io::Error::from_raw_os_error(code)),
        // An error with no number: its kind, as strerror says it.
        None => {
            let kind = e.kind().to_string();
            let mut c = kind.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect())
                .unwrap_or(kind)
        }
    };
    anyhow::anyhow!("{}: {cause}", path.display())
}

/// Makes directory `dir` (and its parents).
fn make_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, &e))
}

/// Writes `bytes` to `path` as every swath output is written (replaced atomically, with the
/// umask's mode for a new file, an existing file's mode kept).
fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let out = swath_engine::AtomicOutput::create(path)?;
    out.file()
        .write_all(bytes)
        .map_err(|e| io_error(path, &e))?;
    out.commit(false)?;
    Ok(())
}

/// Prints `bytes` on standard output for `prog`: a write error is one line (`PROG: write
/// error: CAUSE`) and status 2, as for every command.
fn print(prog: &str, bytes: &[u8]) -> Result<()> {
    Ok(crate::stdout::print_all(prog, bytes)?)
}

/// swath's command with `grep`'s options: clap parses only `grep`'s words, so its
/// definition is replaced by one read from its `--help` text.
pub fn full(cli: Command) -> Command {
    // cmp and wc have GNU's own -v/--version (parsed by their GNU-style parsers).
    cli.mut_subcommand("cmp", |c| c.disable_version_flag(true))
        .mut_subcommand("wc", |c| c.disable_version_flag(true))
        .mut_subcommand("grep", |g| {
            let about = g.get_about().cloned().unwrap_or_default();
            grep_command(&crate::cmd::grep::help_text("swath grep")).about(about)
        })
}

/// A clap command with the options a GNU-style `--help` text lists (`  -x, --name=ARG  what`
/// lines, continued on lines that start with spaces), then PATTERNS and FILE operands.
pub fn grep_command(help: &str) -> Command {
    let mut cmd = Command::new("grep")
        .disable_help_flag(true)
        .disable_version_flag(true)
        .override_usage("swath grep [OPTION]... PATTERNS [FILE]...");
    let mut heading: Option<String> = None;
    let mut pending: Vec<String> = Vec::new();
    let mut last: Option<Arg> = None;
    let mut seen = std::collections::HashSet::new();
    let push = |cmd: Command, arg: Option<Arg>| match arg {
        Some(a) => cmd.arg(a),
        None => cmd,
    };
    for line in help.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if indent == 0 {
            cmd = push(cmd, last.take());
            heading = trimmed
                .strip_suffix(':')
                .filter(|h| !h.is_empty() && !h.contains('.'))
                .map(str::to_string);
            continue;
        }
        if !trimmed.starts_with('-') {
            // A description continued.
            if let Some(a) = last.take() {
                let help = format!(
                    "{} {}",
                    a.get_help().map(|h| h.to_string()).unwrap_or_default(),
                    trimmed
                );
                last = Some(a.help(help));
            }
            continue;
        }
        cmd = push(cmd, last.take());
        // `-x, --name=ARG   description`: the names end at two spaces.
        let (names, what) = match trimmed.find("  ") {
            Some(p) => (&trimmed[..p], trimmed[p..].trim()),
            None => (trimmed, ""),
        };
        let mut words: Vec<String> = std::mem::take(&mut pending);
        words.extend(
            names
                .split(", ")
                .map(|w| w.trim_end_matches(',').to_string()),
        );
        if what.is_empty() && names.ends_with(',') {
            // `--color[=WHEN],` then `--colour[=WHEN]  what` on the next line.
            pending = words;
            continue;
        }
        let (mut short, mut longs, mut value) = (None, Vec::new(), None);
        for w in &words {
            // `--name[=ARG]` (optional) before `--name=ARG`.
            let (name, val) = match w.split_once("[=").or_else(|| w.split_once('=')) {
                Some((n, v)) => (n, Some(v)),
                None => (w.as_str(), None),
            };
            if let Some(v) = val {
                value = Some(v.trim_end_matches(']').to_string());
            }
            if let Some(l) = name.strip_prefix("--") {
                longs.push(l.to_string());
            } else if let Some(s) = name.strip_prefix('-') {
                if s.len() == 1 {
                    short = s.chars().next();
                }
            }
        }
        if short.is_none() && longs.is_empty() {
            continue;
        }
        let id = longs
            .first()
            .cloned()
            .unwrap_or_else(|| short.map(String::from).unwrap_or_default());
        if !seen.insert(id.clone()) {
            continue;
        }
        let mut arg = Arg::new(id).help(what.to_string());
        if let Some(s) = short {
            arg = arg.short(s);
        }
        if let Some(l) = longs.first() {
            arg = arg.long(l.clone());
        }
        for alias in longs.iter().skip(1) {
            arg = arg.visible_alias(alias.clone());
        }
        let optional = words.iter().any(|w| w.contains("[="));
        arg = match value {
            Some(v) if optional => arg
                .value_name(v)
                .action(ArgAction::Append)
                .num_args(0..=1)
                .require_equals(true),
            Some(v) => arg.value_name(v).action(ArgAction::Append).num_args(1),
            None => arg.action(ArgAction::SetTrue),
        };
        if let Some(h) = &heading {
            arg = arg.help_heading(h.clone());
        }
        last = Some(arg);
    }
    cmd = push(cmd, last.take());
    cmd.arg(
        Arg::new("patterns")
            .value_name("PATTERNS")
            .help("What to search for: one pattern a line")
            .required(false),
    )
    .arg(
        Arg::new("files")
            .value_name("FILE")
            .help("Files (and with -r, directories) to search; - is standard input")
            .num_args(0..)
            .value_hint(clap::ValueHint::AnyPath),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grep_options_are_read_from_its_help() {
        let cmd = grep_command(&crate::cmd::grep::help_text("grep"));
        let arg = |id: &str| {
            cmd.get_arguments()
                .find(|a| a.get_id() == id)
                .unwrap_or_else(|| panic!("no --{id}"))
        };
        assert_eq!(arg("ignore-case").get_short(), Some('i'));
        assert_eq!(
            arg("ignore-case").get_help().unwrap().to_string(),
            "ignore case distinctions in patterns and data"
        );
        // A description over two lines; an option with a value; aliases.
        assert!(arg("binary-files")
            .get_help()
            .unwrap()
            .to_string()
            .ends_with("TYPE is 'binary', 'text', or 'without-match'"));
        assert_eq!(arg("context").get_value_names().unwrap()[0].as_str(), "NUM");
        let quiet = arg("quiet");
        assert!(quiet.get_visible_aliases().unwrap().contains(&"silent"));
        assert!(arg("color")
            .get_visible_aliases()
            .unwrap()
            .contains(&"colour"));
        assert_eq!(arg("I").get_short(), Some('I'));
        assert!(arg("threads")
            .get_help_heading()
            .unwrap()
            .starts_with("swath's own"));
        // Every long option grep's parser knows is in the definition.
        for o in crate::cmd::grep::long_options() {
            // Undocumented by GNU too: an old spelling, a no-op kept for old scripts.
            if ["fixed-regexp", "unix-byte-offsets", "help"].contains(&o.name) {
                continue;
            }
            assert!(
                cmd.get_arguments().any(|a| a.get_long() == Some(o.name)
                    || a.get_visible_aliases().is_some_and(|v| v.contains(&o.name))),
                "--{} is in grep's table but not its help",
                o.name
            );
        }
    }
}
