//! What grep searches, in output order ([`Target`]): the operands, and with `-r`/`-R` the
//! files found in each directory operand, walked in GNU's `fts` order
//! ([`swath_engine::walk`]) with `--include`/`--exclude`/`--exclude-dir` applied as
//! gnulib's `exclude` module applies them (glibc's `fnmatch`).

use super::*;

/// glibc's `fnmatch(pattern, name, 0)`: `*` and `?` match `/` too.
pub(super) fn fnmatch(pattern: &[u8], name: &[u8]) -> bool {
    let (Ok(p), Ok(n)) = (
        std::ffi::CString::new(pattern),
        std::ffi::CString::new(name),
    ) else {
        return false;
    };
    // SAFETY: both are valid NUL-terminated strings that outlive the call.
    unsafe { libc::fnmatch(p.as_ptr(), n.as_ptr(), 0) == 0 }
}

/// gnulib's `excluded_file_name` over grep's `--include` (true) and `--exclude` (false)
/// patterns: the last pattern given that matches decides; when none matches, a name is
/// excluded only if the first pattern given was an `--include`. `anchored` (names found in a
/// tree, which are matched whole) or not (command-line names, also matched from after each
/// `/`).
pub(super) fn excluded(patterns: &[(Vec<u8>, bool)], name: &[u8], anchored: bool) -> bool {
    let Some(first) = patterns.first() else {
        return false;
    };
    let matches = |pat: &[u8]| {
        fnmatch(pat, name)
            || (!anchored
                && (0..name.len()).any(|i| {
                    name[i] == b'/'
                        && name.get(i + 1) != Some(&b'/')
                        && fnmatch(pat, &name[i + 1..])
                }))
    };
    match patterns.iter().rev().find(|(p, _)| matches(p)) {
        Some((_, include)) => !include,
        None => first.1,
    }
}

/// One thing to search or report, in output order.
pub(super) enum Target {
    /// A file: an operand (`-`: standard input) or a file found in a tree.
    File {
        path: OsString,
        /// The name shown in output and messages ([`Target::name`]).
        name: Shown,
        /// Named on the command line (GNU's `command_line`).
        command_line: bool,
        /// Found in a tree walked without following links: opened with O_NOFOLLOW.
        nofollow: bool,
        /// Found in a tree whose root is on this device, not a pseudo file system.
        real_dev: Option<u64>,
        /// Found in a tree: where to open it (its directory held open, and its name there).
        at: Option<swath_engine::walk::At>,
    },
    /// A message from a walk: an error (exit status 2) or a warning.
    Note { text: Vec<u8>, error: bool },
}

/// How a file is named in output and messages.
pub(super) enum Shown {
    /// A name of its own (an operand: `-` is shown as its label).
    Own(Vec<u8>),
    /// Its path from this byte on (a file found in a tree: the whole path, or the path
    /// without the "./" GNU leaves out): no copy per file of a tree.
    PathFrom(usize),
}

impl Target {
    /// The name shown in output and messages (nothing for a message).
    pub(super) fn name(&self) -> &[u8] {
        match self {
            Target::File {
                name: Shown::Own(n),
                ..
            } => n,
            Target::File {
                name: Shown::PathFrom(at),
                path,
                ..
            } => &path.as_bytes()[*at..],
            Target::Note { .. } => b"",
        }
    }
}

/// Feeds the operands, with each directory to recurse into replaced by what its walk finds,
/// in GNU's order, to `feed(target, pooled)` (pooled: small enough for one worker of the
/// pool; a file found in a tree is taken as small without a stat, and a big one comes back
/// from the pool deferred). Stops when `feed` returns false.
pub(super) fn feed_targets(cfg: &Config, feed: &mut dyn FnMut(Target, bool) -> bool) {
    use swath_engine::walk::{walk, Follow, Found, Kind, Options, Order, Step};
    for op in &cfg.files {
        let recurse = cfg.directories == Directories::Recurse
            && op != "-"
            && swath_engine::walk::is_dir(Path::new(op));
        if !recurse {
            let pooled = op != "-" && swath_engine::many::is_small_file(op);
            let target = Target::File {
                path: op.clone(),
                name: Shown::Own(display_name(cfg, op)),
                command_line: true,
                nofollow: false,
                real_dev: None,
                at: None,
            };
            if !feed(target, pooled) {
                return;
            }
            continue;
        }
        if !cfg.omit_dot_slash && excluded(&cfg.exclude_dirs, op.as_bytes(), false) {
            continue;
        }
        // Where a path's shown name starts (GNU leaves "./" out of what it found in ".").
        let shown_from = |p: &OsStr| -> usize {
            if cfg.omit_dot_slash && p.len() > 1 {
                2.min(p.len())
            } else {
                0
            }
        };
        let show = |p: &OsStr| -> Vec<u8> { p.as_bytes()[shown_from(p)..].to_vec() };
        let real_dev = swath_engine::input::real_filesystem_dev(Path::new(op));
        let mut going = true;
        let opts = Options {
            follow: cfg.follow,
            order: Order::Fts,
            stat: false,
        };
        walk(op, &opts, &mut |found| {
            let target = match found {
                Found::Entry(e) => match e.kind {
                    Kind::Dir if excluded(&cfg.exclude_dirs, e.name.as_bytes(), true) => {
                        return Step::Skip
                    }
                    Kind::Dir => return Step::Continue,
                    _ if excluded(&cfg.excludes, e.name.as_bytes(), true) => return Step::Continue,
                    // GNU opens a link it does not follow with O_NOFOLLOW and says nothing
                    // of the ELOOP.
                    Kind::Symlink => return Step::Continue,
                    Kind::Special if cfg.devices != Devices::Read => return Step::Continue,
                    _ => Target::File {
                        name: Shown::PathFrom(shown_from(e.path)),
                        path: e.path.to_owned(),
                        command_line: false,
                        nofollow: cfg.follow == Follow::Never,
                        real_dev,
                        at: Some(e.at()),
                    },
                },
                Found::Error { path, error, .. } => Target::Note {
                    text: [
                        &show(path)[..],
                        b": ",
                        swath_engine::error::os_message(&error).as_bytes(),
                    ]
                    .concat(),
                    error: true,
                },
                Found::Loop { path, .. } => Target::Note {
                    text: [&show(path)[..], b": warning: recursive directory loop"].concat(),
                    error: false,
                },
            };
            going = feed(target, true);
            if going {
                Step::Continue
            } else {
                Step::Stop
            }
        });
        if !going {
            return;
        }
    }
}
