//! Applying a tree patch (`swath patch apply OLD_DIR PATCH NEW_DIR`).
//!
//! 1. The patch's header, table, manifest record and manifest are checked (the manifest's
//!    syntax as hostile input, [`crate::manifest::Script::parse`]).
//! 2. NEW_DIR must not exist, or be an empty directory.
//! 3. OLD_DIR is walked by `make`'s rules ([`crate::tree::walk`]) and every file hashed in
//!    parallel: names, kinds, lengths, link targets and contents must make OLD's hash
//!    ([`crate::manifest::old_hash`]); when they do not, the directory digests name the
//!    first directory that differs.
//! 4. The manifest is resolved against the walk (paths, parents, references, counts, all
//!    checked: [`crate::manifest::Script::resolve`]), and every section is checked to lie
//!    inside one file or hold whole files.
//! 5. The tree is built in a private directory beside NEW_DIR (`mkdtemp`, mode 0700, on
//!    the same filesystem), every entry created relative to its parent's descriptor
//!    (`mkdirat`, `symlinkat`, `openat` with `O_CREAT | O_EXCL | O_NOFOLLOW`; parents opened
//!    with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`), so no path of the patch can
//!    reach outside it.
//! 6. Sections are applied on all cores, each writing its slices into the files it holds;
//!    whole old files are copied; every file is hashed and the tree must make NEW's hash.
//! 7. Modes and times are set (files and links, then directories deepest first), and the
//!    directory is renamed to NEW_DIR. On any error the temporary tree is removed.
//!
//! As root, set-user-ID and set-group-ID bits are not restored: a patch from someone else
//! would otherwise make root-owned set-user-ID programs of its choosing.

use std::collections::HashMap;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_128;

use crate::apply::PatchFile;
use crate::error::PatchError;
use crate::hash::{file_hash, slice_hash, PIECE};
use crate::manifest::{parent, Kind, Manifest, Meta, Source};
use crate::section::{apply_section, SectionError};
use crate::tree::{
    files_of, old_entries_of, open_beneath, open_root, shown, tree_error, TreeReader,
};

/// What a tree application did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TreeApplied {
    /// Regular files written.
    pub files: usize,
    /// Directories made (the root not counted).
    pub dirs: usize,
    /// Symbolic links made.
    pub links: usize,
    /// Bytes written by sections.
    pub new_len: u64,
    /// Bytes copied from whole old files.
    pub copied_len: u64,
    /// Sections applied.
    pub sections: usize,
}

/// The temporary tree: removed when dropped unless kept.
struct TempTree {
    path: PathBuf,
    keep: bool,
}

impl Drop for TempTree {
    fn drop(&mut self) {
        if !self.keep {
            remove_tree(&self.path);
        }
    }
}

/// Removes a tree swath built (its directories made writable first, links not followed:
/// a link put in its place is removed, never what it points to).
fn remove_tree(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            let _ = std::fs::remove_file(p);
            return;
        }
        Err(_) => return,
    }
    let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700));
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => remove_tree(&e.path()),
                _ => {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
    let _ = std::fs::remove_dir(p);
}

fn cstr(b: &[u8]) -> io::Result<CString> {
    CString::new(b).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn last_name(p: &[u8]) -> &[u8] {
    match p.iter().rposition(|&b| b == b'/') {
        Some(i) => &p[i + 1..],
        None => p,
    }
}

/// Parent directories of the entries, opened beneath the root; the last one is kept, since
/// entries come in creation order and siblings follow each other.
struct Parents<'a> {
    root: &'a OwnedFd,
    last: Option<(Vec<u8>, OwnedFd)>,
}

impl Parents<'_> {
    /// The descriptor of `path`'s parent and `path`'s last component.
    fn of(&mut self, path: &[u8]) -> io::Result<(i32, CString)> {
        let up = parent(path);
        let name = cstr(last_name(path))?;
        if up.is_empty() {
            return Ok((self.root.as_raw_fd(), name));
        }
        if self.last.as_ref().is_none_or(|(p, _)| p != up) {
            let fd = open_beneath(self.root, up, libc::O_DIRECTORY | libc::O_RDONLY, 0)?;
            self.last = Some((up.to_vec(), fd));
        }
        let fd = self.last.as_ref().expect("just set").1.as_raw_fd();
        Ok((fd, name))
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The calls that make and finish entries relative to a directory descriptor. Each takes
/// a descriptor of an open directory and a NUL-terminated name.
mod sys {
    use super::check;
    use std::ffi::CString;
    use std::io;
    use std::os::fd::{FromRawFd, OwnedFd};

    /// A directory `name` in `dir`, mode 0700 until finished.
    pub fn mkdir(dir: i32, name: &CString) -> io::Result<()> {
        // SAFETY: mkdirat with a directory descriptor and a NUL-terminated name.
        check(unsafe { libc::mkdirat(dir, name.as_ptr(), 0o700) })
    }

    /// A symbolic link `name` in `dir` to `target`.
    pub fn symlink(target: &CString, dir: i32, name: &CString) -> io::Result<()> {
        // SAFETY: symlinkat with two NUL-terminated strings and a directory descriptor.
        check(unsafe { libc::symlinkat(target.as_ptr(), dir, name.as_ptr()) })
    }

    /// An empty file `name` in `dir`, which must not exist (not even as a link), mode 0600.
    pub fn create(dir: i32, name: &CString) -> io::Result<()> {
        let flags =
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: openat with a directory descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(dir, name.as_ptr(), flags, 0o600 as libc::c_uint) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor openat just returned, owned here and closed at once.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
        Ok(())
    }

    /// Sets `name`'s permission bits (`name` is a file or directory swath made).
    pub fn chmod(dir: i32, name: &CString, mode: u32) -> io::Result<()> {
        // SAFETY: fchmodat with a directory descriptor and a NUL-terminated name.
        check(unsafe { libc::fchmodat(dir, name.as_ptr(), mode, 0) })
    }

    /// Sets `name`'s times, not following a link.
    pub fn set_times(dir: i32, name: &CString, t: &[libc::timespec; 2]) -> io::Result<()> {
        // SAFETY: utimensat with a directory descriptor, a NUL-terminated name and two
        // timespecs.
        check(unsafe { libc::utimensat(dir, name.as_ptr(), t.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) })
    }
}

/// The times to give an entry: its modification time (access time left as it is).
fn times(m: &Meta) -> [libc::timespec; 2] {
    [
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        libc::timespec {
            tv_sec: m.mtime,
            tv_nsec: i64::from(m.mtime_nsec),
        },
    ]
}

/// One slice of a section's bytes: into sectioned file `file`, at `file_off`, from
/// `buf[at..at + len]`.
#[derive(Debug, Clone, Copy)]
struct Part {
    file: usize,
    file_off: u64,
    at: usize,
    len: usize,
    whole: bool,
}

/// Applies the tree patch `patch` to the tree `old_dir`, building NEW at `new_dir`.
pub fn apply_tree(
    old_dir: &Path,
    patch: &PatchFile,
    new_dir: &Path,
    progress: Option<&AtomicU64>,
) -> Result<TreeApplied, PatchError> {
    let old_name = old_dir.to_string_lossy().into_owned();
    let new_name = new_dir.to_string_lossy().into_owned();
    let h = &patch.header;
    let Some(script) = patch.manifest()? else {
        return Err(PatchError::Usage(format!(
            "{}: a patch of one file: OLD and NEW must be files",
            patch.name()
        )));
    };

    // NEW_DIR: absent, or an empty directory (not a link to one).
    let existed = match std::fs::symlink_metadata(new_dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(PatchError::io(&new_name, e)),
        Ok(md) if md.is_dir() => {
            let empty = std::fs::read_dir(new_dir)
                .map_err(|e| PatchError::io(&new_name, e))?
                .next()
                .is_none();
            if !empty {
                return Err(not_empty(&new_name));
            }
            true
        }
        Ok(_) => return Err(not_empty(&new_name)),
    };

    // OLD: walked as make walked it, every file hashed; the whole must be the tree the
    // patch was made from.
    let old_root = open_root(old_dir).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOTDIR) => PatchError::io(
            &old_name,
            io::Error::other(format!(
                "Not a directory ({} is a patch of a directory tree)",
                patch.name()
            )),
        ),
        _ => PatchError::io(&old_name, e),
    })?;
    let (_, walked) = crate::tree::walk(old_dir, &old_name)?;
    let old_entries = old_entries_of(&walked);
    let old = TreeReader::new(old_root, &old_name, files_of(&walked));
    drop(walked);
    let sums: Vec<u128> = (0..old.files().len())
        .into_par_iter()
        .map(|i| {
            let f = old.open(i).map_err(|e| tree_error(&old_name, e))?;
            file_hash(&f, old.files()[i].len, h.hash_piece)
                .map_err(|e| tree_error(&old_name, file_error_of(&old, i, e)))
        })
        .collect::<Result<_, _>>()?;
    if crate::manifest::old_hash(&old_entries, &sums) != h.old_hash {
        let dir = crate::manifest::differing_dir(&old_entries, &sums, &script.digests());
        return Err(PatchError::WrongOldTree {
            path: match dir {
                Some(d) if !d.is_empty() => shown(&old_name, d),
                _ => old_name,
            },
            why: "a file was added, removed, resized or changed".into(),
        });
    }
    let m = script
        .resolve(&old_entries, h.new_len)
        .map_err(|e| PatchError::invalid(patch.name(), e.0))?;
    drop(old_entries);
    let parts = plan_parts(patch, &m)?;

    // The private tree beside NEW_DIR.
    let dir = match new_dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let base = new_dir
        .file_name()
        .map(|n| n.as_bytes().to_vec())
        .unwrap_or_default();
    let mut template = dir.as_os_str().as_bytes().to_vec();
    template.extend_from_slice(b"/.");
    template.extend_from_slice(&base);
    template.extend_from_slice(b".swath-tmp.XXXXXX\0");
    // SAFETY: mkdtemp fills in the XXXXXX of a NUL-terminated template it may modify.
    let made = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
    if made.is_null() {
        return Err(PatchError::io(&new_name, io::Error::last_os_error()));
    }
    template.pop();
    let temp = TempTree {
        path: PathBuf::from(std::ffi::OsStr::from_bytes(&template)),
        keep: false,
    };
    // Opened without following a link: nothing but the directory mkdtemp made.
    let root = open_beneath(
        &open_root(dir).map_err(|e| PatchError::io(&new_name, e))?,
        last_name(&template),
        libc::O_DIRECTORY | libc::O_RDONLY,
        0,
    )
    .map_err(|e| PatchError::io(&new_name, e))?;
    let at_new = |rel: &[u8]| shown(&new_name, rel);

    // Every entry, relative to its parent's descriptor.
    let mut done = TreeApplied {
        sections: patch.entries.len(),
        new_len: h.new_len,
        ..TreeApplied::default()
    };
    let mut parents = Parents {
        root: &root,
        last: None,
    };
    for e in &m.new {
        let (pfd, name) = parents
            .of(&e.path)
            .map_err(|x| PatchError::io(&at_new(&e.path), x))?;
        let r = match &e.kind {
            Kind::Dir => {
                done.dirs += 1;
                sys::mkdir(pfd, &name)
            }
            Kind::Link { target } => {
                done.links += 1;
                cstr(target).and_then(|t| sys::symlink(&t, pfd, &name))
            }
            Kind::File { .. } => {
                done.files += 1;
                sys::create(pfd, &name)
            }
        };
        r.map_err(|x| PatchError::io(&at_new(&e.path), x))?;
    }
    drop(parents);

    // The files' bytes: sections on all cores, whole old files copied.
    let sectioned: Vec<usize> = (0..m.new.len())
        .filter(|&i| {
            matches!(
                m.new[i].kind,
                Kind::File {
                    source: Source::Sections,
                    ..
                }
            )
        })
        .collect();
    let open_new = |i: usize, flags: i32| -> Result<File, PatchError> {
        open_beneath(&root, &m.new[i].path, flags, 0)
            .map(File::from)
            .map_err(|x| PatchError::io(&at_new(&m.new[i].path), x))
    };
    let advance = |n: u64| {
        if let Some(p) = progress {
            p.fetch_add(n, Ordering::Relaxed);
        }
    };
    let whole: Vec<Vec<(usize, u128)>> = patch
        .entries
        .par_iter()
        .enumerate()
        .map_init(
            || (Vec::new(), Vec::new()),
            |(raw, made), (k, e)| -> Result<Vec<(usize, u128)>, PatchError> {
                patch.read_section(e, raw)?;
                apply_section(h, k as u64, e, raw, &old, made).map_err(|err| match err {
                    SectionError::Invalid(w) => PatchError::invalid(patch.name(), w.0),
                    SectionError::Old(io) => tree_error(&old_name, io),
                })?;
                let mut hashes = Vec::new();
                for p in &parts[k] {
                    let i = sectioned[p.file];
                    let bytes = &made[p.at..p.at + p.len];
                    let f = open_new(i, libc::O_WRONLY)?;
                    f.write_all_at(bytes, p.file_off)
                        .map_err(|x| PatchError::io(&at_new(&m.new[i].path), x))?;
                    if p.whole {
                        hashes.push((i, slice_hash(bytes, PIECE)));
                    }
                }
                advance(e.new_len);
                Ok(hashes)
            },
        )
        .collect::<Result<_, _>>()?;
    let mut hashes: HashMap<usize, u128> = whole.into_iter().flatten().collect();
    let copies: Vec<(usize, usize)> = (0..m.new.len())
        .filter_map(|i| match m.new[i].kind {
            Kind::File {
                source: Source::Old(k),
                ..
            } => Some((i, k)),
            _ => None,
        })
        .collect();
    let copied: Vec<(usize, u128)> = copies
        .par_iter()
        .map_init(
            Vec::new,
            |buf, &(i, k)| -> Result<(usize, u128), PatchError> {
                let len = old.files()[k].len;
                let from = old.open(k).map_err(|e| tree_error(&old_name, e))?;
                let to = open_new(i, libc::O_WRONLY)?;
                let mut sums = Vec::new();
                let mut off = 0u64;
                while off < len {
                    let n = (len - off).min(PIECE) as usize;
                    buf.resize(n, 0);
                    FileExt::read_exact_at(&from, buf, off).map_err(|e| match e.kind() {
                        io::ErrorKind::UnexpectedEof => {
                            PatchError::Engine(swath_engine::EngineError::Modified {
                                path: old.shown(k),
                            })
                        }
                        _ => PatchError::io(&old.shown(k), e),
                    })?;
                    to.write_all_at(buf, off)
                        .map_err(|x| PatchError::io(&at_new(&m.new[i].path), x))?;
                    sums.push(xxh3_128(buf));
                    off += n as u64;
                }
                advance(len);
                Ok((i, xxh3_128(&le_list(&sums))))
            },
        )
        .collect::<Result<_, _>>()?;
    done.copied_len = copies.iter().map(|&(_, k)| old.files()[k].len).sum();
    hashes.extend(copied);
    // Files in several sections: hashed from what was written.
    let spread: Vec<(usize, u128)> = sectioned
        .par_iter()
        .filter(|&&i| !hashes.contains_key(&i) && file_len(&m, i) > 0)
        .map(|&i| {
            let f = open_new(i, libc::O_RDONLY)?;
            file_hash(&f, file_len(&m, i), PIECE)
                .map(|x| (i, x))
                .map_err(|x| PatchError::io(&at_new(&m.new[i].path), x))
        })
        .collect::<Result<_, _>>()?;
    hashes.extend(spread);
    let mut new_sums = Vec::new();
    for (i, e) in m.new.iter().enumerate() {
        if let Kind::File { len, .. } = e.kind {
            let x = match hashes.get(&i) {
                Some(&x) => x,
                None if len == 0 => slice_hash(&[], PIECE),
                None => return Err(PatchError::WrongNewTree { path: new_name }),
            };
            new_sums.extend_from_slice(&x.to_le_bytes());
        }
    }
    if xxh3_128(&new_sums) != h.new_hash {
        return Err(PatchError::WrongNewTree { path: new_name });
    }

    // Modes and times: files and links, then directories deepest first, then the root.
    // SAFETY: geteuid has no preconditions.
    let root_user = unsafe { libc::geteuid() } == 0;
    let mode_of = |m: &Meta| {
        if root_user {
            m.mode & !0o6000
        } else {
            m.mode
        }
    };
    let mut parents = Parents {
        root: &root,
        last: None,
    };
    let order = m
        .new
        .iter()
        .filter(|e| e.kind != Kind::Dir)
        .chain(m.new.iter().rev().filter(|e| e.kind == Kind::Dir));
    for e in order {
        let (pfd, name) = parents
            .of(&e.path)
            .map_err(|x| PatchError::io(&at_new(&e.path), x))?;
        let t = times(&e.meta);
        let r = if matches!(e.kind, Kind::Link { .. }) {
            sys::set_times(pfd, &name, &t)
        } else {
            sys::chmod(pfd, &name, mode_of(&e.meta)).and_then(|()| sys::set_times(pfd, &name, &t))
        };
        r.map_err(|x| PatchError::io(&at_new(&e.path), x))?;
    }
    drop(parents);
    let t = times(&m.root);
    let name = cstr(b".").map_err(|x| PatchError::io(&new_name, x))?;
    sys::chmod(root.as_raw_fd(), &name, mode_of(&m.root))
        .and_then(|()| sys::set_times(root.as_raw_fd(), &name, &t))
        .map_err(|x| PatchError::io(&new_name, x))?;

    // Into place: never over anything but the empty directory that was there.
    let from = cstr(temp.path.as_os_str().as_bytes()).map_err(|x| PatchError::io(&new_name, x))?;
    let to = cstr(new_dir.as_os_str().as_bytes()).map_err(|x| PatchError::io(&new_name, x))?;
    let flags = if existed { 0 } else { libc::RENAME_NOREPLACE };
    // SAFETY: renameat2 with two NUL-terminated paths relative to the working directory.
    check(unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags,
        )
    })
    .map_err(|x| match x.raw_os_error() {
        Some(libc::EEXIST) | Some(libc::ENOTEMPTY) => not_empty(&new_name),
        _ => PatchError::io(&new_name, x),
    })?;
    let mut temp = temp;
    temp.keep = true;
    Ok(done)
}

/// A read error of old file `i`, naming it.
fn file_error_of(old: &TreeReader, i: usize, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", old.shown(i)))
}

fn not_empty(name: &str) -> PatchError {
    PatchError::io(
        name,
        io::Error::other(
            "exists and is not an empty directory (a tree is built only where nothing is)",
        ),
    )
}

fn le_list(sums: &[u128]) -> Vec<u8> {
    let mut v = Vec::with_capacity(sums.len() * 16);
    for s in sums {
        v.extend_from_slice(&s.to_le_bytes());
    }
    v
}

fn file_len(m: &Manifest, i: usize) -> u64 {
    match m.new[i].kind {
        Kind::File { len, .. } => len,
        _ => 0,
    }
}

/// Which slices of which files each section makes, checking that every section lies
/// inside one file or holds whole files (a forged table cannot make a section write across
/// a file's end).
fn plan_parts(patch: &PatchFile, m: &Manifest) -> Result<Vec<Vec<Part>>, PatchError> {
    let bad = || {
        PatchError::invalid(
            patch.name(),
            "damaged: the sections do not fit the tree's files",
        )
    };
    let mut parts: Vec<Vec<Part>> = vec![Vec::new(); patch.entries.len()];
    let mut start = 0u64;
    let mut file = 0usize;
    for e in &m.new {
        let Kind::File {
            len,
            source: Source::Sections,
        } = e.kind
        else {
            continue;
        };
        let f = file;
        file += 1;
        if len == 0 {
            continue;
        }
        let end = start + len;
        let k = patch
            .entries
            .partition_point(|s| s.new_offset <= start)
            .checked_sub(1)
            .ok_or_else(bad)?;
        let s = &patch.entries[k];
        if s.new_offset + s.new_len >= end {
            parts[k].push(Part {
                file: f,
                file_off: 0,
                at: (start - s.new_offset) as usize,
                len: len as usize,
                whole: true,
            });
        } else {
            // Longer than its section: the file's own sections, from its start to its end.
            let mut j = k;
            if s.new_offset != start {
                return Err(bad());
            }
            while j < patch.entries.len() && patch.entries[j].new_offset < end {
                let s = &patch.entries[j];
                if s.new_offset + s.new_len > end {
                    return Err(bad());
                }
                parts[j].push(Part {
                    file: f,
                    file_off: s.new_offset - start,
                    at: 0,
                    len: s.new_len as usize,
                    whole: false,
                });
                j += 1;
            }
        }
        start = end;
    }
    Ok(parts)
}
