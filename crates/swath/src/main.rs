//! The `swath` command: a thin layer of argument parsing and output formatting over the
//! engine (`swath-engine`), the kernels (`swath-kernels`) and the operations (`swath-ops`).
//!
//! Invoked through a link named after a GNU tool it replaces (`cmp`, `wc`, `grep`), it
//! behaves as that subcommand and prefixes its messages with the tool's name.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod cmd;
mod engine_args;
mod getopt;
mod gnu_args;
mod gnu_help;
mod oom;
mod progress;
mod size;
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
#[command(name = "swath", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compare two files byte by byte (GNU cmp compatible, parallel).
    Cmp(Box<cmd::cmp::CmpArgs>),
    /// Count lines, words, characters and bytes (GNU wc compatible, parallel).
    Wc(Box<cmd::wc::WcArgs>),
    /// Search for patterns in files (GNU grep compatible, parallel); `swath grep --help`.
    #[command(disable_help_flag = true)]
    Grep {
        /// Options, patterns and files, as GNU grep takes them.
        #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
        args: Vec<OsString>,
    },
    /// Transform a file with a Caesar cipher (the seeds' cci family of strategies).
    Cipher(Box<cmd::cipher::CipherArgs>),
    /// Reports over web-server access logs: the Wide Finder 2 report, a GoAccess-style
    /// summary.
    #[command(subcommand)]
    Logs(cmd::logs::LogsCommand),
    /// Copy a file: reflink, in-kernel copy, or parallel positional I/O; written atomically.
    Cp(cmd::cp::CpArgs),
    /// Binary patches: make one that turns OLD into NEW, apply it, show what it holds.
    #[command(subcommand)]
    Patch(cmd::patch::PatchCommand),
    /// Run the seed articles' experiments: tables, CSV/JSON and SVG charts.
    #[command(subcommand)]
    Bench(cmd::bench::BenchCommand),
    /// Generate reproducible test data.
    #[command(subcommand)]
    Gen(cmd::gen::GenCommand),
    /// Run every command beside the tool it replaces (GNU cmp, wc, grep, ripgrep, tr, cp,
    /// GoAccess, xdelta3) on generated data: one table of times, answers checked equal.
    Demo(cmd::demo::DemoArgs),
    /// Merge partial results (`--emit-partial`) into the report the one-machine command
    /// prints.
    Merge(cmd::partial::MergeArgs),
    /// Print byte ranges that cut files into pieces (`path start end`), for `--range`.
    Split(cmd::partial::SplitArgs),
}

fn main() -> ExitCode {
    // Die quietly on a closed pipe, as the GNU tools do, instead of reporting EPIPE; and turn
    // an exceeded file-size limit into an EFBIG error we report (and clean up after) rather
    // than a SIGXFSZ that kills the process mid-write.
    // SAFETY: setting signal dispositions before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
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
    if rest.first().is_some_and(|a| a == "grep") {
        return cmd::grep::main("swath grep", rest[1..].to_vec());
    }
    if rest.first().is_some_and(|a| a == "wc") {
        return cmd::wc::main("swath wc", rest[1..].to_vec());
    }
    if rest.first().is_some_and(|a| a == "cmp") {
        return cmd::cmp::main("swath cmp", rest[1..].to_vec());
    }
    let cli = match Cli::try_parse() {
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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(stdout::Reported(status)) = e.downcast_ref::<stdout::Reported>() {
                return ExitCode::from(*status);
            }
            eprintln!("swath: {e:#}");
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
            ExitCode::from(if changed { 2 } else { 1 })
        }
    }
}
