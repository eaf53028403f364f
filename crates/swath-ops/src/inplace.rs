//! Crash-safe in-place transformation: a file transformed in its own blocks, with a small
//! undo journal beside it, so that a run killed at any moment (or a power loss) can always be
//! brought to exactly the fully transformed state, never a mix.
//!
//! Journal (`.NAME.swath-journal` in the file's directory), little-endian:
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `SWATHJ01`, shift (i64), alphabet (u64), file length, block size, FNV-1a of these |
//! | 64, 80 | two "done" slots: blocks completed (u64) and its checksum; slot = count mod 2 |
//! | 128 | undo record: block index, length, checksum of index, length and bytes |
//! | 160 | the block's original bytes |
//!
//! For each block `i`: its original bytes go to the undo record (synced), the transformed
//! bytes to the file (synced), then `done = i + 1` to a slot (synced). Recovery takes the
//! largest valid `done`; if the undo record is valid and names block `done`, that block may be
//! half written, so its original bytes are put back first. Then the run continues from `done`.
//! A torn journal write fails its checksum and is ignored, which is safe because the step
//! that follows it only starts once it is synced.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use swath_engine::EngineError;
use swath_kernels::transform::Cipher;

const MAGIC: &[u8; 8] = b"SWATHJ01";
const SLOTS_AT: u64 = 64;
const UNDO_AT: u64 = 128;
const UNDO_DATA_AT: u64 = 160;

fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in *p {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The transformation an in-place run applies, as recorded in its journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InPlaceParams {
    /// The shift given on the command line.
    pub shift: i64,
    /// The alphabet variant.
    pub alphabet: bool,
    /// Bytes per journaled block.
    pub block_size: u64,
}

impl InPlaceParams {
    fn cipher(&self) -> Cipher {
        if self.alphabet {
            Cipher::alphabet(self.shift)
        } else {
            Cipher::bytes(self.shift)
        }
    }
}

/// The journal's path for `file`.
pub fn journal_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    file.with_file_name(format!(".{name}.swath-journal"))
}

/// What an in-place run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InPlaceReport {
    /// The parameters applied.
    pub params: InPlaceParams,
    /// Blocks already done by an interrupted run (0 for a fresh run).
    pub resumed_at: u64,
    /// Whether a half-written block was restored from the journal.
    pub restored: bool,
    /// Blocks in the file.
    pub blocks: u64,
}

/// Transforms `path` in place with `params`, resuming an interrupted run with the same
/// parameters. With `params` of `None`, only resumes (taking the parameters from the
/// journal), and fails when there is nothing to resume.
pub fn transform_in_place(
    path: &Path,
    params: Option<InPlaceParams>,
) -> Result<InPlaceReport, EngineError> {
    let name = path.to_string_lossy().into_owned();
    let io_err = |e: io::Error| EngineError::io(&name, e);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(EngineError::io(
            &name,
            io::Error::from_raw_os_error(libc::EINVAL),
        ));
    }
    let len = meta.len();
    let jpath = journal_path(path);
    let jname = jpath.to_string_lossy().into_owned();
    let jerr = |e: io::Error| EngineError::io(&jname, e);
    let existing = match OpenOptions::new().read(true).write(true).open(&jpath) {
        Ok(j) => Some(j),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(jerr(e)),
    };
    let (journal, params, done, restored) = match existing {
        Some(j) => {
            let (recorded, recorded_len) = read_header(&j).map_err(jerr)?;
            if recorded_len != len {
                return Err(EngineError::io(
                    &jname,
                    io::Error::other(format!(
                        "journal is for a file of {recorded_len} bytes, {name} has {len}"
                    )),
                ));
            }
            if let Some(p) = params {
                if p.shift != recorded.shift || p.alphabet != recorded.alphabet {
                    return Err(EngineError::io(&name, io::Error::other(
                        "an interrupted transformation with other parameters is pending: run 'swath cipher --resume' on it first",
                    )));
                }
            }
            let done = read_done(&j).map_err(jerr)?;
            let restored = restore_undo(&j, &file, done, recorded.block_size).map_err(io_err)?;
            (j, recorded, done, restored)
        }
        None => {
            let Some(p) = params else {
                return Err(EngineError::io(
                    &name,
                    io::Error::other("no interrupted transformation to resume"),
                ));
            };
            let j = create_journal(&jpath, &p, len).map_err(jerr)?;
            (j, p, 0, false)
        }
    };
    let bs = params.block_size.max(1);
    let blocks = len.div_ceil(bs);
    let cipher = params.cipher();
    let mut buf = vec![0u8; bs.min(len.max(1)) as usize];
    for i in done..blocks {
        let start = i * bs;
        let n = (len - start).min(bs) as usize;
        file.read_exact_at(&mut buf[..n], start).map_err(io_err)?;
        write_undo(&journal, i, &buf[..n]).map_err(jerr)?;
        cipher.apply(&mut buf[..n]);
        file.write_all_at(&buf[..n], start).map_err(io_err)?;
        file.sync_data().map_err(io_err)?;
        write_done(&journal, i + 1).map_err(jerr)?;
    }
    drop(journal);
    std::fs::remove_file(&jpath).map_err(jerr)?;
    sync_dir(&jpath);
    Ok(InPlaceReport {
        params,
        resumed_at: done,
        restored,
        blocks,
    })
}

fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

fn create_journal(path: &Path, p: &InPlaceParams, len: u64) -> io::Result<File> {
    let j = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)?;
    let mut h = Vec::with_capacity(64);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&p.shift.to_le_bytes());
    h.extend_from_slice(&(p.alphabet as u64).to_le_bytes());
    h.extend_from_slice(&len.to_le_bytes());
    h.extend_from_slice(&p.block_size.to_le_bytes());
    let sum = fnv(&[&h]);
    h.extend_from_slice(&sum.to_le_bytes());
    h.resize(SLOTS_AT as usize, 0);
    j.write_all_at(&h, 0)?;
    j.sync_all()?;
    sync_dir(path);
    Ok(j)
}

fn read_header(j: &File) -> io::Result<(InPlaceParams, u64)> {
    let mut h = [0u8; 48];
    j.read_exact_at(&mut h, 0)?;
    let word = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
    if &h[..8] != MAGIC || fnv(&[&h[..40]]) != word(40) {
        return Err(io::Error::other("not a swath journal, or damaged"));
    }
    Ok((
        InPlaceParams {
            shift: word(8) as i64,
            alphabet: word(16) != 0,
            block_size: word(32),
        },
        word(24),
    ))
}

fn write_done(j: &File, count: u64) -> io::Result<()> {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&count.to_le_bytes());
    s[8..].copy_from_slice(&fnv(&[&count.to_le_bytes()]).to_le_bytes());
    j.write_all_at(&s, SLOTS_AT + 16 * (count % 2))?;
    j.sync_data()
}

fn read_done(j: &File) -> io::Result<u64> {
    let mut best = 0;
    for slot in 0..2 {
        let mut s = [0u8; 16];
        if j.read_exact_at(&mut s, SLOTS_AT + 16 * slot).is_err() {
            continue;
        }
        let v = u64::from_le_bytes(s[..8].try_into().expect("8 bytes"));
        let sum = u64::from_le_bytes(s[8..].try_into().expect("8 bytes"));
        if sum == fnv(&[&v.to_le_bytes()]) && v % 2 == slot {
            best = best.max(v);
        }
    }
    Ok(best)
}

fn write_undo(j: &File, index: u64, bytes: &[u8]) -> io::Result<()> {
    let len = bytes.len() as u64;
    let sum = fnv(&[&index.to_le_bytes(), &len.to_le_bytes(), bytes]);
    j.write_all_at(bytes, UNDO_DATA_AT)?;
    let mut r = [0u8; 24];
    r[..8].copy_from_slice(&index.to_le_bytes());
    r[8..16].copy_from_slice(&len.to_le_bytes());
    r[16..].copy_from_slice(&sum.to_le_bytes());
    j.write_all_at(&r, UNDO_AT)?;
    j.sync_data()
}

/// Puts back block `done`'s original bytes if the undo record holds them.
fn restore_undo(j: &File, file: &File, done: u64, bs: u64) -> io::Result<bool> {
    let mut r = [0u8; 24];
    if j.read_exact_at(&mut r, UNDO_AT).is_err() {
        return Ok(false);
    }
    let index = u64::from_le_bytes(r[..8].try_into().expect("8 bytes"));
    let len = u64::from_le_bytes(r[8..16].try_into().expect("8 bytes"));
    let sum = u64::from_le_bytes(r[16..].try_into().expect("8 bytes"));
    if index != done || len == 0 || len > bs {
        return Ok(false);
    }
    let mut bytes = vec![0u8; len as usize];
    if j.read_exact_at(&mut bytes, UNDO_DATA_AT).is_err()
        || fnv(&[&index.to_le_bytes(), &len.to_le_bytes(), &bytes]) != sum
    {
        return Ok(false);
    }
    file.write_all_at(&bytes, index * bs)?;
    file.sync_data()?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_run_and_recovery_of_a_half_written_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 256) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let p = InPlaceParams {
            shift: 7,
            alphabet: false,
            block_size: 1000,
        };
        let mut want = data.clone();
        Cipher::bytes(7).apply_naive(&mut want);
        transform_in_place(&path, Some(p)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), want);
        assert!(!journal_path(&path).exists());

        // Simulate a crash in block 3: blocks 0-2 done, block 3 half written.
        std::fs::write(&path, &data).unwrap();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let j = create_journal(&journal_path(&path), &p, data.len() as u64).unwrap();
        let mut partial = data.clone();
        Cipher::bytes(7).apply_naive(&mut partial[..3500]);
        file.write_all_at(&partial, 0).unwrap();
        write_done(&j, 3).unwrap();
        write_undo(&j, 3, &data[3000..4000]).unwrap();
        drop(j);
        assert!(transform_in_place(&path, Some(InPlaceParams { shift: 1, ..p })).is_err());
        let r = transform_in_place(&path, None).unwrap();
        assert_eq!((r.resumed_at, r.restored), (3, true));
        assert_eq!(std::fs::read(&path).unwrap(), want);
        assert!(transform_in_place(&path, None).is_err());
    }
}
