//! The `swath` command: a thin layer of argument parsing and output formatting over the
//! engine (`swath-engine`), the kernels (`swath-kernels`), grep's patterns (`swath-grep`) and
//! the operations (`swath-ops`).
//!
//! Invoked through a link named after a GNU tool it replaces (`cmp`, `wc`, `grep`), it
//! behaves as that subcommand and prefixes its messages with the tool's name.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::status::Status;

mod bench;
mod cmd;
mod engine_args;
mod getopt;
mod gnu_args;
mod gnu_help;
mod interrupt;
mod oom;
mod progress;
mod scratch;
mod sigpipe;
use swath_engine::size;
mod status;
mod stdout;

/// A failed allocation ends the run with one line and status 2 (see [`oom`]).
#[global_allocator]
static ALLOCATOR: oom::Allocator = oom::Allocator;

/// Process big files at the speed of the machine.
///
/// swath does the everyday jobs of the standard tools (cmp, wc, grep, tr, cp, access-log
/// reports) with the output users rely on, splitting the work across all cores inside one
/// big file and across many files, and choosing the fastest way to read them.
#[derive(Parser, Debug)]
#[command(
    name = "swath",
    version,
    propagate_version = true,
    after_help = "Examples:
  swath cmp -l old.img new.img          every differing byte, as GNU cmp -l
  swath grep -rn TODO src               GNU grep's output, on all cores
  swath wc -l huge.csv                  count lines, on all cores
  swath logs summary --html r.html access.log.gz
  swath patch make old.bin new.bin p.swp && swath patch apply old.bin p.swp out.bin

'swath COMMAND --help' explains a command; 'swath man COMMAND | man -l -' is its manual page.
GUIDE.md explains how swath reads files and the words it uses."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compare two files byte by byte, as GNU cmp does, on all cores.
    Cmp(Box<cmd::cmp::CmpArgs>),
    /// Count lines, words, characters and bytes, as GNU wc does, on all cores.
    Wc(Box<cmd::wc::WcArgs>),
    /// Search files for lines matching patterns, as GNU grep does, on all cores.
    #[command(disable_help_flag = true)]
    Grep {
        /// Options, patterns and files, as GNU grep takes them.
        #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
        args: Vec<OsString>,
    },
    /// Transform every byte of a file through a fixed mapping (a shift, or a rotation of
    /// letters and digits), like tr, on all cores; also in place, safely.
    Cipher(Box<cmd::cipher::CipherArgs>),
    /// Reports over web-server access logs: a GoAccess-style summary (text, JSON, CSV or an
    /// HTML page), and the Wide Finder 2 report.
    #[command(subcommand)]
    Logs(cmd::logs::LogsCommand),
    /// Copy a file, sharing its blocks when the filesystem can, else on all cores; the copy
    /// appears whole or not at all.
    Cp(cmd::cp::CpArgs),
    /// Binary patches: make one that turns OLD into NEW, apply it, show what it holds.
    #[command(subcommand)]
    Patch(cmd::patch::PatchCommand),
    /// Measure the ways of reading and writing a file on this machine: tables, charts and
    /// exports (CSV, JSON, Markdown).
    #[command(subcommand)]
    Bench(cmd::bench::BenchCommand),
    /// Generate reproducible test data: text, mutated copies, access logs.
    #[command(subcommand)]
    Gen(cmd::gen::GenCommand),
    /// Run every command beside the tool it replaces (GNU cmp, wc, grep, ripgrep, tr, cp,
    /// GoAccess, xdelta3) on generated data: one table of times, answers checked equal.
    Demo(cmd::demo::DemoArgs),
    /// Merge partial results of pieces of files (from `--emit-partial`) into the report the
    /// command prints for the whole files.
    Merge(cmd::partial::MergeArgs),
    /// Print byte ranges that cut files into pieces (`path start end`), for `--range`.
    Split(cmd::partial::SplitArgs),
    /// Print the shell completion script for bash, zsh, fish, elvish or PowerShell.
    Completions(cmd::docs::CompletionsArgs),
    /// Print the manual page of swath or of one of its commands (`swath man grep`).
    Man(cmd::docs::ManArgs),
}

/// What `--version` says: the version, the commit built, and which fast paths this
/// processor and kernel allow.
fn version_text() -> String {
    let avx2 = {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                "yes".to_string()
            } else {
                "no (this processor lacks it: portable code)".to_string()
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            "no (not an x86-64 processor: portable code)".to_string()
        }
    };
    let uring = match swath_ops::transform::uring_available() {
        Ok(()) => "yes".to_string(),
        Err(e) => format!("no ({e}: positional reads instead)"),
    };
    format!(
        "{} (commit {}, {})\nAVX2: {avx2}\nio_uring: {uring}\ncores: {}",
        env!("CARGO_PKG_VERSION"),
        env!("SWATH_COMMIT"),
        env!("SWATH_BUILD_DATE"),
        swath_engine::sysinfo::cores()
    )
}

/// swath's clap definition, with the long `--version` text.
fn cli_command() -> clap::Command {
    Cli::command().long_version(version_text())
}

fn main() -> ExitCode {
    // On a closed pipe, die quietly or report EPIPE as the caller chose (by the SIGPIPE
    // disposition it left us), as the GNU tools do; and turn an exceeded file-size limit
    // into an EFBIG error we report (and clean up after) rather than a SIGXFSZ that kills
    // the process mid-write.
    sigpipe::restore_inherited();
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    oom::install_thread_start_hook();
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_else(|| OsString::from("swath"));
    let rest: Vec<OsString> = args.collect();
    let invoked_as = Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if invoked_as == "cmp" {
        if gnu_help::asks_for_help(&rest) {
            return stdout::Stdout::print_and_exit(
                "cmp",
                stdout::Voice::Cmp,
                gnu_help::cmp().as_bytes(),
            );
        }
        return cmd::cmp::main("cmp", rest);
    }
    if invoked_as == "wc" {
        if gnu_help::asks_for_help(&rest) {
            return stdout::Stdout::print_and_exit(
                "wc",
                stdout::Voice::Wc,
                gnu_help::wc().as_bytes(),
            );
        }
        return cmd::wc::main("wc", rest);
    }
    if invoked_as == "grep" {
        return cmd::grep::main("grep", rest);
    }
    // `swath help grep` shows grep's own help (its options are not clap's).
    if rest.first().is_some_and(|a| a == "help") {
        if let Some(c) = rest.get(1).filter(|_| rest.len() == 2) {
            let help = vec![OsString::from("--help")];
            match c.to_str() {
                Some("grep") => return cmd::grep::main("swath grep", help),
                Some("wc") => return cmd::wc::main("swath wc", help),
                Some("cmp") => return cmd::cmp::main("swath cmp", help),
                _ => {}
            }
        }
    }
    if rest.first().is_some_and(|a| a == "grep") {
        return cmd::grep::main("swath grep", rest[1..].to_vec());
    }
    if rest.first().is_some_and(|a| a == "wc") {
        return cmd::wc::main("swath wc", rest[1..].to_vec());
    }
    if rest.first().is_some_and(|a| a == "cmp") {
        return cmd::cmp::main("swath cmp", rest[1..].to_vec());
    }
    let cli = match cli_command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(c) => c,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            let text = stdout::clap_text(&e);
            return stdout::Stdout::print_and_exit("swath", stdout::Voice::Swath, &text);
        }
        Err(e) => e.exit(),
    };
    // Errors are said in the command's name, as GNU tools say theirs.
    let prog = match &cli.command {
        Command::Cipher(_) => "swath cipher",
        Command::Cp(_) => "swath cp",
        Command::Logs(_) => "swath logs",
        Command::Gen(_) => "swath gen",
        Command::Bench(_) => "swath bench",
        Command::Demo(_) => "swath demo",
        Command::Completions(_) => "swath completions",
        Command::Man(_) => "swath man",
        _ => "swath",
    };
    let result = match cli.command {
        Command::Cmp(_) => {
            // `swath cmp` is dispatched above so that its errors follow GNU cmp's format.
            return cmd::cmp::main("swath cmp", rest[1..].to_vec());
        }
        Command::Cipher(c) => cmd::cipher::run(*c),
        Command::Wc(_) => return cmd::wc::main("swath wc", rest[1..].to_vec()),
        Command::Grep { .. } => return cmd::grep::main("swath grep", rest[1..].to_vec()),
        Command::Cp(c) => cmd::cp::run(c),
        Command::Patch(p) => return cmd::patch::run(p),
        Command::Logs(l) => match cmd::logs::run(l) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Gen(g) => cmd::gen::run(g),
        Command::Bench(b) => cmd::bench::run(b),
        Command::Demo(d) => cmd::demo::run(d),
        Command::Merge(m) => return cmd::partial::merge(m),
        Command::Split(s) => return cmd::partial::split(s),
        Command::Completions(c) => cmd::docs::completions(c, cli_command()),
        Command::Man(m) => cmd::docs::man(m, cli_command()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(stdout::Reported(status)) = e.downcast_ref::<stdout::Reported>() {
                return ExitCode::from(*status);
            }
            eprintln!("{prog}: {}", error_line(&e));
            // An input that changed while read (grew, or was rewritten, under a copy) is status 2, as the
            // engine's readers report it; other failures 1.
            let changed = e.chain().any(|c| {
                matches!(
                    c.downcast_ref::<swath_engine::EngineError>(),
                    Some(
                        swath_engine::EngineError::Changed { .. }
                            | swath_engine::EngineError::Modified { .. }
                    )
                )
            });
            ExitCode::from(if changed {
                Status::Trouble
            } else {
                Status::Failure
            })
        }
    }
}

/// An error and its causes on one line, `: `-separated, a system error said without its
/// `(os error N)` suffix (as every message of the engine says it).
fn error_line(e: &anyhow::Error) -> String {
    e.chain()
        .map(|c| match c.downcast_ref::<std::io::Error>() {
            Some(io) => swath_engine::error::os_message(io),
            None => c.to_string(),
        })
        .collect::<Vec<_>>()
        .join(": ")
}
