//! Directory trees walked through directory descriptors, without recursion, in the order
//! GNU tools walk them with gnulib's `fts` ([`Order::Fts`]: depth first, each directory's
//! entries in the order the file system returns them, except that a directory of more than
//! 10,000 entries is taken in inode order on file systems where that speeds reading up,
//! as gnulib does unless the file system is tmpfs, NFS or CIFS), or with each directory's
//! names sorted by their bytes ([`Order::Sorted`], swath patch's trees).
//!
//! Each directory is opened relative to its parent's descriptor (`O_NOFOLLOW | O_DIRECTORY`
//! when links are not followed), never by its path: a directory another user swaps for a
//! link while the walk runs is "Not a directory" (as for `fts`), not a way into a directory
//! the walk never meant to enter; and a tree deeper than PATH_MAX is walked whole. The walk
//! holds the descriptors of its deepest directories only; it goes back up to one it let go
//! through the `..` of the one below, checked to be the directory it left (or, when links
//! are followed, by its path from the root, checked likewise).
//!
//! The walk itself is sequential (the order is the output's order); what is found is handed
//! to the caller one entry at a time, so the caller can search files on other threads while
//! the walk goes on, each opened later relative to its directory ([`At`]). Symbolic links are
//! followed as `fts` follows them: never ([`Follow::Never`], `FTS_PHYSICAL`), or always
//! ([`Follow::Always`], `FTS_LOGICAL`), a directory that is its own ancestor then being
//! reported instead of entered.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::dirs::{self, Dir, FileType, Links, Stat};

/// How symbolic links met inside a tree are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Links are entries of their own (`grep -r`): the caller decides (GNU grep skips them).
    Never,
    /// Links are followed (`grep -R`).
    Always,
}

/// The order of each directory's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// As `fts` takes them (the file system's order; inode order for large directories).
    Fts,
    /// Names sorted by their bytes.
    Sorted,
}

/// How to walk.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Links followed or not.
    pub follow: Follow,
    /// The order of each directory's entries.
    pub order: Order,
    /// Every entry `stat`ed (`lstat` when links are not followed) and the result given
    /// with it; otherwise only entries whose kind the directory does not tell are.
    pub stat: bool,
}

/// What an entry is, as the walk knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A directory: reported before it is entered.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link (only with [`Follow::Never`]).
    Symlink,
    /// A character or block device, FIFO or socket.
    Special,
    /// A link to nothing (with [`Follow::Always`]).
    Dangling,
}

/// An entry found, borrowed from the walk for the time of the call that reports it.
#[derive(Debug)]
pub struct Entry<'a> {
    /// Its path: the root joined with the names below it, as `fts` joins them.
    pub path: &'a OsStr,
    /// Its path below the root (the names joined with `/`).
    pub rel: &'a [u8],
    /// Its name.
    pub name: &'a OsStr,
    /// How deep it is: 1 for the root's entries.
    pub depth: usize,
    /// What it is.
    pub kind: Kind,
    /// Its `stat` (`lstat` with [`Follow::Never`]), when [`Options::stat`] asks for it.
    pub stat: Option<&'a Stat>,
    dir: &'a Arc<DirHandle>,
    root: &'a Arc<DirHandle>,
    share: bool,
}

impl Entry<'_> {
    /// The directory holding the entry (open for the time of the call).
    pub fn dir(&self) -> &Dir {
        self.dir.dir()
    }

    /// How to open the entry later, on another thread: its directory held open and its
    /// name there, so that a directory renamed or swapped meanwhile cannot redirect the
    /// open (when too many directories are held already, the walk's root and the path
    /// below it, resolved then without following links, or following them with
    /// [`Follow::Always`]).
    pub fn at(&self) -> At {
        let path = self.path.len();
        if self.share {
            At {
                dir: self.dir.clone(),
                from: path - self.name.len(),
            }
        } else {
            At {
                dir: self.root.clone(),
                from: path - self.rel.len(),
            }
        }
    }
}

/// One thing the walk reports, in traversal order.
#[derive(Debug)]
pub enum Found<'a> {
    /// An entry of the tree.
    Entry(Entry<'a>),
    /// A directory that could not be opened or read, or an entry that could not be
    /// `stat`ed (the root itself when `rel` is empty).
    Error {
        /// Its path.
        path: &'a OsStr,
        /// Its path below the root.
        rel: &'a [u8],
        /// Why.
        error: io::Error,
    },
    /// A directory that is one of its own ancestors (reached through a link): not entered.
    Loop {
        /// Its path.
        path: &'a OsStr,
        /// Its path below the root.
        rel: &'a [u8],
    },
}

/// What the caller says after each thing found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Go on (into the entry, if it is a directory).
    Continue,
    /// Go on, but not into this directory.
    Skip,
    /// Stop the walk.
    Stop,
}

/// An entry to open later: a directory of the walk held open and where the entry's name
/// in it starts in the entry's path (or the walk's root and where the path below it
/// starts). The caller keeps the path ([`Entry::path`]): no copy of the name per entry.
#[derive(Debug, Clone)]
pub struct At {
    dir: Arc<DirHandle>,
    from: usize,
}

impl At {
    /// Opens the entry whose path ([`Entry::path`], as the walk gave it) is `path` with
    /// `flags`, following links or not as `links` says.
    pub fn open(&self, path: &OsStr, flags: i32, links: Links) -> io::Result<fs::File> {
        let name = path.as_bytes().get(self.from..).unwrap_or(b"");
        self.dir.dir().open_beneath(name, flags, 0, links)
    }
}

/// Directories held open at once by entries not yet opened, at most: beyond, entries come
/// with the walk's root and their path below it, so a walk far ahead of the search never
/// runs out of descriptors.
const MAX_HELD_DIRS: usize = 256;

/// Directories of the walk's own way down held open at once (the deepest).
const KEEP_LEVELS: usize = 32;

/// Directories held open now.
static HELD_DIRS: AtomicUsize = AtomicUsize::new(0);

/// A directory of the walk held open.
#[derive(Debug)]
pub struct DirHandle {
    dir: Dir,
}

impl DirHandle {
    fn new(dir: Dir) -> Arc<DirHandle> {
        HELD_DIRS.fetch_add(1, Ordering::Relaxed);
        Arc::new(DirHandle { dir })
    }

    /// The directory.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }
}

impl Drop for DirHandle {
    fn drop(&mut self) {
        HELD_DIRS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// gnulib's `_FTS_INODE_SORT_DIR_ENTRIES_THRESHOLD`.
const INODE_SORT_THRESHOLD: usize = 10_000;

/// A directory on the walk's way down.
struct Level {
    /// Held while among the deepest [`KEEP_LEVELS`]; opened again when the walk is back.
    handle: Option<Arc<DirHandle>>,
    id: (u64, u64),
    names: Vec<dirs::Name>,
    next: usize,
    /// Its path's length in the walk's path buffer.
    path_len: usize,
    depth: usize,
    /// Whether its entries hold it for their opening ([`MAX_HELD_DIRS`]).
    share: bool,
}

/// Walks the directory `root` (its path as given; trailing slashes beyond one are dropped, as
/// `fts_open` drops them; a link there is followed, as `fts` follows its arguments). `visit`
/// receives each thing found and says whether to go on.
pub fn walk(root: &OsStr, opts: &Options, visit: &mut dyn FnMut(Found<'_>) -> Step) {
    let root = trimmed(root);
    match Dir::open_to_list(Path::new(root)) {
        Ok(dir) => walk_dir(dir, root, opts, visit),
        Err(error) => {
            visit(Found::Error {
                path: root,
                rel: b"",
                error,
            });
        }
    }
}

/// [`walk`] of the directory already open as `root` (named `path`).
pub fn walk_dir(root: Dir, path: &OsStr, opts: &Options, visit: &mut dyn FnMut(Found<'_>) -> Step) {
    let path = trimmed(path);
    let buf = path.as_bytes().to_vec();
    // Where the names below the root start in the buffer.
    let base = if buf.ends_with(b"/") {
        buf.len()
    } else {
        buf.len() + 1
    };
    let id = match dirs::identity(&root) {
        Ok(id) => id,
        Err(error) => {
            visit(Found::Error {
                path,
                rel: b"",
                error,
            });
            return;
        }
    };
    let root = DirHandle::new(root);
    let mut w = Walker {
        opts: *opts,
        root: root.clone(),
        buf,
        base,
        levels: Vec::new(),
        ancestors: HashSet::new(),
    };
    let len = w.buf.len();
    if !w.enter(root, id, len, 0, visit) {
        return;
    }
    w.run(visit);
}

fn trimmed(root: &OsStr) -> &OsStr {
    let mut r = root.as_bytes();
    while r.len() > 2 && r.ends_with(b"//") {
        r = &r[..r.len() - 1];
    }
    OsStr::from_bytes(r)
}

struct Walker {
    opts: Options,
    root: Arc<DirHandle>,
    /// The path of the entry at hand (the root's path, then names joined by `/`).
    buf: Vec<u8>,
    base: usize,
    levels: Vec<Level>,
    /// Identities of the directories on the way down.
    ancestors: HashSet<(u64, u64)>,
}

impl Walker {
    fn rel(&self) -> &[u8] {
        self.buf.get(self.base..).unwrap_or(b"")
    }

    /// Reads the directory `handle` (identity `id`, path `buf[..path_len]`) and puts it on
    /// the way down; false when the caller said stop.
    fn enter(
        &mut self,
        handle: Arc<DirHandle>,
        id: (u64, u64),
        path_len: usize,
        depth: usize,
        visit: &mut dyn FnMut(Found<'_>) -> Step,
    ) -> bool {
        let (mut names, error) = handle.dir().read_names();
        if let Some(error) = error {
            let step = visit(Found::Error {
                path: OsStr::from_bytes(&self.buf[..path_len]),
                rel: self.buf.get(self.base..path_len).unwrap_or(b""),
                error,
            });
            if step == Step::Stop {
                return false;
            }
        }
        match self.opts.order {
            Order::Sorted => names.sort_unstable_by(|a, b| a.name.cmp(&b.name)),
            Order::Fts => {
                if names.len() > INODE_SORT_THRESHOLD && inode_sort_helps(handle.dir()) {
                    names.sort_by_key(|n| n.ino);
                }
            }
        }
        let share = HELD_DIRS.load(Ordering::Relaxed) <= MAX_HELD_DIRS;
        self.ancestors.insert(id);
        self.levels.push(Level {
            handle: Some(handle),
            id,
            names,
            next: 0,
            path_len,
            depth,
            share,
        });
        let n = self.levels.len();
        if n > KEEP_LEVELS {
            self.levels[n - KEEP_LEVELS - 1].handle = None;
        }
        true
    }

    fn run(&mut self, visit: &mut dyn FnMut(Found<'_>) -> Step) {
        while let Some(top) = self.levels.last_mut() {
            if top.next == top.names.len() {
                let done = self.levels.pop().expect("a level");
                self.ancestors.remove(&done.id);
                if !self.back(&done, visit) {
                    return;
                }
                continue;
            }
            let k = top.next;
            top.next += 1;
            let (depth, path_len, share) = (top.depth + 1, top.path_len, top.share);
            let dir = top.handle.clone().expect("the deepest directory is held");
            let name = std::mem::take(&mut top.names[k].name);
            let dtype = top.names[k].kind;
            self.buf.truncate(path_len);
            if !self.buf.ends_with(b"/") {
                self.buf.push(b'/');
            }
            self.buf.extend_from_slice(name.as_bytes());
            if !self.entry(&dir, &name, dtype, depth, share, visit) {
                return;
            }
        }
    }

    /// Goes back up from `done` to the directory above it, opening that one again when it
    /// was let go; false (the walk ends) when it cannot be.
    fn back(&mut self, done: &Level, visit: &mut dyn FnMut(Found<'_>) -> Step) -> bool {
        let Some(up) = self.levels.last() else {
            return true;
        };
        if up.handle.is_some() {
            return true;
        }
        if up.depth == 0 {
            let root = self.root.clone();
            self.levels.last_mut().expect("a level").handle = Some(root);
            return true;
        }
        let reopened = match self.opts.follow {
            Follow::Never => done
                .handle
                .as_ref()
                .expect("the deepest is held")
                .dir()
                .reopen_parent(up.id),
            Follow::Always => {
                let rel = self.buf.get(self.base..up.path_len).unwrap_or(b"").to_vec();
                self.root.dir().open_dir(&rel, Links::Follow).and_then(|d| {
                    if dirs::identity(&d)? == up.id {
                        Ok(d)
                    } else {
                        Err(io::Error::from_raw_os_error(libc::ENOENT))
                    }
                })
            }
        };
        match reopened {
            Ok(dir) => {
                self.levels.last_mut().expect("a level").handle = Some(DirHandle::new(dir));
                true
            }
            Err(error) => {
                // The tree moved under the walk: it ends here rather than go elsewhere.
                let path_len = up.path_len;
                visit(Found::Error {
                    path: OsStr::from_bytes(&self.buf[..path_len]),
                    rel: self.buf.get(self.base..path_len).unwrap_or(b""),
                    error,
                });
                false
            }
        }
    }

    /// The entry `name` of `dir`, its path in the buffer: reported, and entered when it is
    /// a directory the caller wants; false when the caller said stop.
    fn entry(
        &mut self,
        dir: &Arc<DirHandle>,
        name: &OsStr,
        dtype: FileType,
        depth: usize,
        share: bool,
        visit: &mut dyn FnMut(Found<'_>) -> Step,
    ) -> bool {
        let follow = self.opts.follow == Follow::Always;
        let n = name.as_bytes();
        let mut stat = None;
        let mut kind = kind_of_dtype(dtype);
        if self.opts.stat || kind.is_none() || (kind == Some(Kind::Symlink) && follow) {
            let links = if follow { Links::Follow } else { Links::Refuse };
            match dir.dir().stat_at(n, links) {
                Ok(st) => {
                    kind = Some(kind_of_mode(st.st_mode));
                    stat = Some(st);
                }
                Err(_) if follow && (kind == Some(Kind::Symlink) || is_link(dir.dir(), n)) => {
                    kind = Some(Kind::Dangling);
                    if self.opts.stat {
                        stat = dir.dir().stat_at(n, Links::Refuse).ok();
                    }
                }
                Err(error) => {
                    return self.report_error(error, visit);
                }
            }
        }
        let kind = kind.expect("known or stat'ed");
        let step = visit(Found::Entry(Entry {
            path: OsStr::from_bytes(&self.buf),
            rel: self.buf.get(self.base..).unwrap_or(b""),
            name,
            depth,
            kind,
            stat: stat.as_ref(),
            dir,
            root: &self.root,
            share,
        }));
        match step {
            Step::Stop => return false,
            Step::Skip => return true,
            Step::Continue if kind != Kind::Dir => return true,
            Step::Continue => {}
        }
        crate::pause::at("walk-enter-dir");
        let links = if follow { Links::Follow } else { Links::Refuse };
        let opened = dir
            .dir()
            .open_dir(n, links)
            .and_then(|d| dirs::identity(&d).map(|id| (d, id)));
        let (fd, id) = match opened {
            Ok(x) => x,
            Err(error) => return self.report_error(error, visit),
        };
        if self.ancestors.contains(&id) {
            let step = visit(Found::Loop {
                path: OsStr::from_bytes(&self.buf),
                rel: self.rel(),
            });
            return step != Step::Stop;
        }
        let len = self.buf.len();
        self.enter(DirHandle::new(fd), id, len, depth, visit)
    }

    /// Reports `error` about the entry at hand; false when the caller said stop.
    fn report_error(&self, error: io::Error, visit: &mut dyn FnMut(Found<'_>) -> Step) -> bool {
        visit(Found::Error {
            path: OsStr::from_bytes(&self.buf),
            rel: self.rel(),
            error,
        }) != Step::Stop
    }
}

fn is_link(dir: &Dir, name: &[u8]) -> bool {
    dir.stat_at(name, Links::Refuse)
        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK)
}

fn kind_of_dtype(t: FileType) -> Option<Kind> {
    match t {
        FileType::Directory => Some(Kind::Dir),
        FileType::RegularFile => Some(Kind::File),
        FileType::Symlink => Some(Kind::Symlink),
        FileType::CharacterDevice | FileType::BlockDevice | FileType::Fifo | FileType::Socket => {
            Some(Kind::Special)
        }
        FileType::Unknown => None,
    }
}

fn kind_of_mode(mode: libc::mode_t) -> Kind {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => Kind::Dir,
        libc::S_IFLNK => Kind::Symlink,
        libc::S_IFCHR | libc::S_IFBLK | libc::S_IFIFO | libc::S_IFSOCK => Kind::Special,
        _ => Kind::File,
    }
}

/// gnulib's `dirent_inode_sort_may_be_useful`: false on tmpfs, NFS and CIFS.
fn inode_sort_helps(dir: &Dir) -> bool {
    const TMPFS: i64 = 0x0102_1994;
    const NFS: i64 = 0x6969;
    const CIFS: i64 = 0xFF53_4D42;
    match rustix::fs::fstatfs(dir) {
        Ok(st) => !matches!(st.f_type, TMPFS | NFS | CIFS),
        Err(_) => true,
    }
}

/// True when `path` names a directory (following links).
pub fn is_dir(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn options(follow: Follow, order: Order) -> Options {
        Options {
            follow,
            order,
            stat: false,
        }
    }

    /// What a walk reports, directories left out, one line each.
    fn collect_in(root: &Path, follow: Follow, order: Order) -> Vec<String> {
        let mut out = Vec::new();
        walk(root.as_os_str(), &options(follow, order), &mut |f| {
            out.push(match f {
                Found::Entry(e) if e.kind == Kind::Dir => return Step::Continue,
                Found::Entry(e) => format!("{:?} {}", e.kind, e.path.to_string_lossy()),
                Found::Error { path, .. } => format!("error {}", path.to_string_lossy()),
                Found::Loop { path, .. } => format!("loop {}", path.to_string_lossy()),
            });
            Step::Continue
        });
        out
    }

    fn collect(root: &Path, follow: Follow) -> Vec<String> {
        collect_in(root, follow, Order::Fts)
    }

    /// The walk against `find`, which also lists entries in directory-read order, depth
    /// first: the same files in the same order.
    #[test]
    fn order_is_the_directory_read_order_depth_first_as_find_lists_it() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for d in ["b", "a", "a/z", "c"] {
            fs::create_dir(r.join(d)).unwrap();
        }
        for f in ["x", "a/y", "a/z/w", "b/v", "c/u", "m", "a/k"] {
            fs::write(r.join(f), f).unwrap();
        }
        let got: Vec<String> = collect(r, Follow::Never)
            .into_iter()
            .map(|l| l.trim_start_matches("File ").to_string())
            .collect();
        let find = std::process::Command::new("find")
            .arg(r)
            .args(["-type", "f"])
            .output()
            .unwrap();
        let want: Vec<String> = String::from_utf8(find.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(got, want);
    }

    /// Each entry's directory handle opens the entry by its name, and gives what its path
    /// gives, even once the directory has been renamed (a path would then miss it).
    #[test]
    fn entries_open_through_their_directory_handle() {
        use std::io::Read;
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::create_dir_all(r.join("a/b")).unwrap();
        for f in ["x", "a/y", "a/b/z"] {
            fs::write(r.join(f), f).unwrap();
        }
        let mut found = Vec::new();
        walk(
            r.as_os_str(),
            &options(Follow::Never, Order::Fts),
            &mut |f| {
                if let Found::Entry(e) = f {
                    if e.kind != Kind::Dir {
                        found.push((e.path.to_owned(), e.at()));
                    }
                }
                Step::Continue
            },
        );
        assert_eq!(found.len(), 3);
        fs::rename(r.join("a"), r.join("moved")).unwrap();
        for (path, at) in &found {
            let mut file = at.open(path, libc::O_RDONLY, Links::Refuse).unwrap();
            let mut got = String::new();
            file.read_to_string(&mut got).unwrap();
            let rel = Path::new(path).strip_prefix(r).unwrap();
            assert_eq!(got, rel.to_string_lossy(), "{path:?}");
        }
    }

    #[test]
    fn links_are_entries_or_followed_and_loops_are_reported() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::create_dir(r.join("d")).unwrap();
        fs::write(r.join("d/f"), "f").unwrap();
        symlink("..", r.join("d/up")).unwrap();
        symlink("nowhere", r.join("d/dangling")).unwrap();
        let never = collect(&r.join("d"), Follow::Never);
        let mut sorted = never.clone();
        sorted.sort();
        let d = r.join("d").to_string_lossy().into_owned();
        assert_eq!(
            sorted,
            vec![
                format!("File {d}/f"),
                format!("Symlink {d}/dangling"),
                format!("Symlink {d}/up"),
            ]
        );
        let always = collect(&r.join("d"), Follow::Always);
        assert!(
            always.contains(&format!("Dangling {d}/dangling")),
            "{always:?}"
        );
        // d/up is the parent of d: its d is d itself, a loop.
        assert!(always.contains(&format!("loop {d}/up/d")), "{always:?}");
    }

    #[test]
    fn trailing_slashes_join_as_fts_joins_them() {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("f"), "f").unwrap();
        let root = format!("{}///", t.path().display());
        let got = collect(Path::new(&root), Follow::Never);
        assert_eq!(got, vec![format!("File {}/f", t.path().display())]);
    }
}

#[cfg(test)]
mod deep_tests {
    use super::*;

    /// A chain `depth` deep, made through descriptors: at each level a directory `a` and,
    /// after it in byte order, a file `z` (so the walk comes back up to every level after
    /// the deepest, through directories it let go).
    fn chain(root: &Path, depth: usize) {
        let mut at = Dir::open_to_list(root).unwrap();
        for _ in 0..depth {
            at.open_beneath(b"z", libc::O_CREAT | libc::O_WRONLY, 0o644, Links::Refuse)
                .unwrap();
            at.make_dir(b"a", 0o755).unwrap();
            at = at.open_dir(b"a", Links::Refuse).unwrap();
        }
    }

    #[test]
    fn a_tree_past_path_max_is_walked_whole_in_sorted_order_either_way_of_following() {
        let t = tempfile::tempdir().unwrap();
        let depth = 2100;
        chain(t.path(), depth);
        for follow in [Follow::Never, Follow::Always] {
            let mut depths = Vec::new();
            let mut max_len = 0;
            walk(
                t.path().as_os_str(),
                &Options {
                    follow,
                    order: Order::Sorted,
                    stat: true,
                },
                &mut |f| {
                    match f {
                        Found::Entry(e) => {
                            assert!(e.stat.is_some());
                            if e.kind == Kind::File {
                                depths.push(e.depth);
                                max_len = max_len.max(e.path.len());
                                // Each opens through its directory, however deep.
                                e.at().open(e.path, libc::O_RDONLY, Links::Refuse).unwrap();
                            }
                        }
                        other => panic!("{other:?}"),
                    }
                    Step::Continue
                },
            );
            // Sorted: `a` (and all below it) before `z`, so the deepest file comes first.
            let want: Vec<usize> = (1..=depth).rev().collect();
            assert_eq!(depths, want, "{follow:?}");
            assert!(max_len > libc::PATH_MAX as usize);
        }
        Dir::open_to_list(t.path())
            .unwrap()
            .remove_tree(OsStr::new("a"))
            .unwrap();
    }

    #[test]
    fn entries_held_past_the_limit_open_from_the_root() {
        let t = tempfile::tempdir().unwrap();
        for k in 0..MAX_HELD_DIRS + 20 {
            let d = t.path().join(format!("d{k}"));
            fs::create_dir(&d).unwrap();
            fs::write(d.join("f"), format!("{k}")).unwrap();
        }
        let mut found = Vec::new();
        walk(
            t.path().as_os_str(),
            &Options {
                follow: Follow::Never,
                order: Order::Sorted,
                stat: false,
            },
            &mut |f| {
                if let Found::Entry(e) = f {
                    if e.kind == Kind::File {
                        found.push((e.rel.to_vec(), e.path.to_owned(), e.at()));
                    }
                }
                Step::Continue
            },
        );
        assert_eq!(found.len(), MAX_HELD_DIRS + 20);
        assert!(HELD_DIRS.load(Ordering::Relaxed) <= MAX_HELD_DIRS + KEEP_LEVELS + 2);
        for (rel, path, at) in &found {
            let got =
                std::io::read_to_string(at.open(path, libc::O_RDONLY, Links::Refuse).unwrap())
                    .unwrap();
            let k = &rel[1..rel.len() - 2];
            assert_eq!(got.as_bytes(), k);
        }
    }
}
