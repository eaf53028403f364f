//! `swath gen`: reproducible test data (random text, mutated copies, access logs).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use swath_gen::edits::Revision;
use swath_gen::{Mutation, Resize, DEFAULT_TEXT_SIZE};

use crate::size::parse_size;

/// What to generate.
#[derive(Subcommand, Debug)]
pub enum GenCommand {
    /// Random words in lines: `swath gen text [SIZE] OUT` (SIZE defaults to 640,000,000
    /// bytes; suffixes such as 64M or 1GB are accepted).
    #[command(after_help = "Examples:
  swath gen text 1G big.txt            1 GiB of random words (the same bytes every time)
  swath gen text 64M a.txt --seed 7    another text")]
    Text(TextArgs),
    /// A copy of IN with K planted differing bytes, optionally truncated or extended.
    #[command(after_help = "Example:
  swath gen mutate big.txt big2.txt --diffs 1000   then: swath cmp -l big.txt big2.txt | wc -l")]
    Mutate(MutateArgs),
    /// An Apache combined-format access log of exactly SIZE bytes, shaped like the Wide
    /// Finder 2 sample: `swath gen log SIZE OUT`.
    ///
    /// Status 200/304/301/404 about 62/25/8.5/2.8 %; the feed `/ongoing/ongoing.atom`
    /// takes about 28 % of requests, the top ten URIs 57 %, articles
    /// (`/ongoing/When/200x/YYYY/MM/DD/Title`) about half; 57 % of referrers are `-`;
    /// Zipf-like clients (host names, IPv4, IPv6); period user agents, some with escaped
    /// quotes; time stamps from 1 October 2007 that never decrease, with a day and week
    /// profile (a 4G log covers about three days); lines of about 220 bytes, all
    /// well-formed text unless --damaged makes 0.1 % of them malformed.
    #[command(after_help = "Examples:
  swath gen log 1G access.log             then: swath logs summary --html r.html access.log
  swath gen log 1G test.log --damaged     with malformed lines, to test a reader")]
    Log(LogArgs),
}

/// Arguments of `swath gen text`.
#[derive(Args, Debug)]
pub struct TextArgs {
    /// [SIZE] OUT (an OUT that reads as a size, such as `10`, is refused: write `./10`)
    #[arg(value_name = "[SIZE] OUT", num_args = 1..=2, required = true)]
    operands: Vec<OsString>,
    /// Seed: the same seed and size give the same bytes on every machine.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Arguments of `swath gen log`.
#[derive(Args, Debug)]
pub struct LogArgs {
    /// Exact size of the log in bytes (suffixes such as 100M or 4G are accepted).
    #[arg(value_parser = size_arg)]
    size: u64,
    /// Where to write the log.
    out: PathBuf,
    /// Seed: the same seed and size give the same bytes on every machine.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Make about 0.1 % of the lines malformed, for testing readers: cut short, binary
    /// garbage, empty, CR LF, several KB long (without it every line is a well-formed
    /// text line).
    #[arg(long)]
    damaged: bool,
}

/// Arguments of `swath gen mutate`.
#[derive(Args, Debug)]
pub struct MutateArgs {
    /// The file to copy.
    input: PathBuf,
    /// Where to write the mutated copy.
    output: PathBuf,
    /// Differing bytes to plant in total (the --at offsets count toward it).
    #[arg(long, default_value_t = 1)]
    diffs: u64,
    /// Seed for the random offsets and byte values.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// 0-based offsets that must differ (repeatable; suffixes accepted).
    #[arg(long, value_name = "OFFSET", value_parser = size_arg, allow_hyphen_values = true)]
    at: Vec<u64>,
    /// Keep only the first N bytes.
    #[arg(long, value_name = "N", value_parser = size_arg, allow_hyphen_values = true, conflicts_with = "extend")]
    truncate: Option<u64>,
    /// Append N bytes of random text.
    #[arg(long, value_name = "N", value_parser = size_arg, allow_hyphen_values = true)]
    extend: Option<u64>,

    /// Revision: insert N ranges of new random bytes (a revision instead of planted
    /// bytes: see --edit-len; the edits and --noise make NEW look like a new release).
    #[arg(long, value_name = "N", conflicts_with_all = ["at", "truncate", "extend"])]
    insertions: Option<u32>,
    /// Revision: remove N ranges.
    #[arg(long, value_name = "N", conflicts_with_all = ["at", "truncate", "extend"])]
    deletions: Option<u32>,
    /// Revision: cut N ranges and paste each elsewhere.
    #[arg(long, value_name = "N", conflicts_with_all = ["at", "truncate", "extend"])]
    moves: Option<u32>,
    /// Revision: copy N ranges to another place.
    #[arg(long, value_name = "N", conflicts_with_all = ["at", "truncate", "extend"])]
    duplicates: Option<u32>,
    /// Revision: overwrite N ranges with zeros.
    #[arg(long, value_name = "N", conflicts_with_all = ["at", "truncate", "extend"])]
    zero_runs: Option<u32>,
    /// Revision: the longest range an edit touches (each is 1 to SIZE bytes; default 64K).
    #[arg(long, value_name = "SIZE", value_parser = edit_len_arg)]
    edit_len: Option<u64>,
    /// Revision: rebuild noise, as a recompiled program shows: about one 4-byte value in
    /// every N bytes increased by a constant (moved addresses).
    #[arg(long, value_name = "N", value_parser = size_arg, conflicts_with_all = ["at", "truncate", "extend"])]
    noise: Option<u64>,
}

fn edit_len_arg(s: &str) -> Result<u64, String> {
    match parse_size(s) {
        Ok(n) if (1..=1 << 30).contains(&n) => Ok(n),
        Ok(_) => Err("the edit length must be 1 byte to 1 GiB".into()),
        Err(_) => Err(crate::size::invalid_size(s)),
    }
}

fn size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|_| crate::size::invalid_size(s))
}

/// An output name that reads as a size (`10`, `64M`) is most likely a size given where the
/// name belongs (`swath gen text 10` would write 640 MB to a file named `10`): refused, unless
/// written as a path (`./10`).
fn check_out_name(out: &OsStr, command: &str) -> Result<()> {
    if let Some(text) = out.to_str() {
        if !text.contains('/') && parse_size(text).is_ok() {
            bail!(
                "'{text}' reads as a size, not a file name (usage: swath gen {command} SIZE OUT); \
                 to name the output '{text}', write './{text}'"
            );
        }
    }
    Ok(())
}

/// Runs `swath gen`.
pub fn run(cmd: GenCommand) -> Result<()> {
    match cmd {
        GenCommand::Text(t) => {
            let (size, out) = match t.operands.as_slice() {
                [out] => (DEFAULT_TEXT_SIZE, out),
                [size, out] => match size.to_str().map(parse_size) {
                    Some(Ok(s)) => (s, out),
                    _ => bail!(crate::size::invalid_size(&size.to_string_lossy())),
                },
                _ => bail!("usage: swath gen text [SIZE] OUT"),
            };
            check_out_name(out, "text")?;
            crate::progress::with_progress(Some(size), "swath gen text", |done| {
                swath_gen::text_counted(&PathBuf::from(out), size, t.seed, done)
            })?;
            Ok(())
        }
        GenCommand::Log(l) => {
            check_out_name(l.out.as_os_str(), "log")?;
            crate::progress::with_progress(Some(l.size), "swath gen log", |done| {
                swath_gen::log::generate_counted(&l.out, l.size, l.seed, l.damaged, done)
            })?;
            Ok(())
        }
        GenCommand::Mutate(m) => {
            let counts = [
                m.insertions,
                m.deletions,
                m.moves,
                m.duplicates,
                m.zero_runs,
            ];
            if counts.iter().any(Option::is_some) || m.noise.is_some() {
                let r = Revision {
                    insertions: m.insertions.unwrap_or(0),
                    deletions: m.deletions.unwrap_or(0),
                    moves: m.moves.unwrap_or(0),
                    duplicates: m.duplicates.unwrap_or(0),
                    zero_runs: m.zero_runs.unwrap_or(0),
                    max_len: m.edit_len.unwrap_or(64 << 10),
                    noise: m.noise.unwrap_or(0),
                    seed: m.seed,
                };
                let pieces = swath_gen::edits::revise(&m.input, &m.output, &r)?;
                let len: u64 = std::fs::metadata(&m.output).map(|x| x.len()).unwrap_or(0);
                eprintln!(
                    "swath gen: wrote a revision of {} bytes in {} pieces to {}",
                    len,
                    pieces.len(),
                    m.output.display()
                );
                return Ok(());
            }
            let resize = match (m.truncate, m.extend) {
                (Some(n), _) => Some(Resize::Truncate(n)),
                (_, Some(n)) => Some(Resize::Extend(n)),
                _ => None,
            };
            let mutation = Mutation {
                diffs: m.diffs.max(m.at.len() as u64),
                at: m.at,
                seed: m.seed,
                resize,
            };
            let planted = swath_gen::mutate(&m.input, &m.output, &mutation)?;
            match planted.first() {
                Some(first) => eprintln!(
                    "swath gen: planted {} differing bytes in {} (first at byte {})",
                    planted.len(),
                    m.output.display(),
                    first + 1
                ),
                None => eprintln!(
                    "swath gen: planted no differing bytes in {}",
                    m.output.display()
                ),
            }
            Ok(())
        }
    }
}
