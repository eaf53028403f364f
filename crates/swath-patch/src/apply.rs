//! Applying a swath patch to a file, and reading a patch for `info`.
//!
//! Everything is checked before NEW's path is touched: the patch's header, footer and
//! section table (checksums, and sizes consistent with each other), OLD's size and hash.
//! NEW is then built in the engine's atomic output (an unnamed or temporary file, pre-sized),
//! its sections decoded on all cores, each reading OLD positionally and writing its slice
//! of NEW through the engine's block writer ([`swath_engine::output::BlockWriter`]:
//! positional writes that leave long runs of zeros as holes, or, when the caller asks, a
//! map of each section's range; a device or FIFO as one stream, in order). NEW's hash is
//! checked before the output is linked into place; on any failure nothing is left at NEW's
//! path. Memory: one section's bytes of NEW (at most 64 MiB, 16 MiB as `make` writes them)
//! and its decoders' fixed buffers per worker ([`crate::stream`]), whatever the patch's
//! sizes say; the section table is read a piece at a time after its count is checked
//! against the patch's bytes.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use rayon::prelude::*;
use swath_engine::output::{BlockOptions, BlockWriter, Lane, Reserve, Via};
use swath_engine::AtomicOutput;

use crate::error::PatchError;
use crate::format::{
    check_count, check_manifest, decode_footer, decode_tree_record, Entry, Header, ManifestAt,
    TableReader, ENTRY_LEN, FLAG_TREE, FOOTER_LEN, HEADER_LEN, TREE_RECORD_LEN,
};
use crate::hash::file_hash;
use crate::manifest::Script;
use crate::ops::Op;
use crate::section::{apply_section_at, each_op, Fault};

/// Bytes of the section table read at a time.
const TABLE_PIECE: u64 = (1 << 20) / ENTRY_LEN as u64 * ENTRY_LEN as u64;

/// The largest decoded manifest a reader accepts (about 40 million entries at the
/// smallest): what bounds the memory a forged one can make it use.
pub const MAX_MANIFEST: u64 = 256 << 20;

/// An opened, checked patch: its header and section table.
#[derive(Debug)]
pub struct PatchFile {
    file: File,
    name: String,
    len: u64,
    /// The header.
    pub header: Header,
    /// The sections, in NEW's order.
    pub entries: Vec<Entry>,
    /// The header's flags ([`crate::format::FLAG_TREE`]).
    pub flags: u32,
    /// Where a tree patch's manifest is.
    pub manifest_at: Option<ManifestAt>,
}

impl PatchFile {
    /// Opens `path` and checks its header, footer and table.
    pub fn open(path: &Path) -> Result<PatchFile, PatchError> {
        let name = path.to_string_lossy().into_owned();
        let file = File::open(path).map_err(|e| PatchError::io(&name, e))?;
        let meta = file.metadata().map_err(|e| PatchError::io(&name, e))?;
        if meta.is_dir() {
            return Err(PatchError::io(
                &name,
                std::io::Error::from_raw_os_error(libc::EISDIR),
            ));
        }
        let len = meta.len();
        let bad = |what: String| PatchError::invalid(&name, what);
        if len < (HEADER_LEN + FOOTER_LEN) as u64 {
            let mut head = [0u8; 8];
            let n = file.read_at(&mut head, 0).unwrap_or(0);
            if n < 8 || &head != crate::format::MAGIC {
                return Err(bad("not a swath patch (bad magic number)".into()));
            }
            return Err(bad(
                "truncated: shorter than a patch's header and end".into()
            ));
        }
        let mut h = [0u8; HEADER_LEN];
        file.read_exact_at(&mut h, 0)
            .map_err(|e| PatchError::io(&name, e))?;
        let (header, flags) = Header::decode_flags(&h).map_err(|e| bad(e.0))?;
        let mut footer = [0u8; FOOTER_LEN];
        file.read_exact_at(&mut footer, len - FOOTER_LEN as u64)
            .map_err(|e| PatchError::io(&name, e))?;
        let (table_at, count) = decode_footer(&header, &footer, len).map_err(|e| bad(e.0))?;
        // A tree patch: its manifest record just before the table, the sections ending
        // where the manifest starts.
        let (sections_end, manifest_at) = if flags & FLAG_TREE != 0 {
            let Some(rec_at) = table_at.checked_sub(TREE_RECORD_LEN as u64) else {
                return Err(bad(
                    "truncated: the tree's manifest record is missing".into()
                ));
            };
            if rec_at < HEADER_LEN as u64 {
                return Err(bad(
                    "truncated: the tree's manifest record is missing".into()
                ));
            }
            let mut rec = [0u8; TREE_RECORD_LEN];
            file.read_exact_at(&mut rec, rec_at)
                .map_err(|e| PatchError::io(&name, e))?;
            let at = decode_tree_record(&header, &rec, table_at).map_err(|e| bad(e.0))?;
            (at.offset, Some(at))
        } else {
            (table_at, None)
        };
        // The footer's checksum says who wrote it, not that its count is real (a sparse
        // file can be as long as any table): the count is held to what the sections' bytes
        // can hold, and the table read a piece at a time, each entry checked as it comes.
        check_count(&header, count, sections_end).map_err(|e| bad(e.0))?;
        let mut table = TableReader::new(&header, &footer, sections_end);
        let mut piece = vec![0u8; (count * ENTRY_LEN as u64).min(TABLE_PIECE) as usize];
        let mut at = table_at;
        let table_end = table_at + count * ENTRY_LEN as u64;
        while at < table_end {
            let n = (table_end - at).min(piece.len() as u64) as usize;
            file.read_exact_at(&mut piece[..n], at)
                .map_err(|e| PatchError::io(&name, e))?;
            table.feed(&piece[..n]);
            at += n as u64;
        }
        let entries = table.finish().map_err(|e| bad(e.0))?;
        Ok(PatchFile {
            file,
            name,
            len,
            header,
            entries,
            flags,
            manifest_at,
        })
    }

    /// True for a tree patch.
    pub fn is_tree(&self) -> bool {
        self.flags & FLAG_TREE != 0
    }

    /// A tree patch's manifest, read, checked against its checksum, decoded and its syntax
    /// checked as hostile input ([`Script::parse`]; [`Script::resolve`] checks the rest
    /// against the old tree); `None` for a file patch.
    pub fn manifest(&self) -> Result<Option<Script>, PatchError> {
        let Some(at) = self.manifest_at else {
            return Ok(None);
        };
        let bad = |what: String| PatchError::invalid(&self.name, what);
        if at.raw > MAX_MANIFEST {
            return Err(bad(format!(
                "a tree manifest of {} bytes: this swath reads at most {MAX_MANIFEST} (several million entries)",
                at.raw
            )));
        }
        let mut stored = vec![0u8; at.stored as usize];
        self.file
            .read_exact_at(&mut stored, at.offset)
            .map_err(|e| PatchError::io(&self.name, e))?;
        check_manifest(&self.header, &at, &stored).map_err(|e| bad(e.0))?;
        // Decoded as a stream, so a forged raw length allocates nothing beyond the real
        // output.
        let mut raw = Vec::new();
        let decoded = zstd::stream::read::Decoder::new(&stored[..]).and_then(|d| {
            std::io::Read::read_to_end(
                &mut std::io::Read::take(d, at.raw.saturating_add(1)),
                &mut raw,
            )
        });
        if decoded.is_err() || raw.len() as u64 != at.raw {
            return Err(bad("damaged: the tree's manifest does not decode".into()));
        }
        Script::parse(raw).map(Some).map_err(|e| bad(e.0))
    }

    /// Rebuilds section `index` (its entry `e`) into `out`, exactly its length: its bytes
    /// read where they lie in the patch, a piece at a time, checked against its checksum
    /// first ([`apply_section_at`]), OLD's read from `old`. A damaged section, or a patch
    /// that cannot be read, is an error naming the patch; a failure to read OLD is named
    /// by `old_error`. The one way every apply (a file's, a tree's) rebuilds a section:
    /// memory is `out` and fixed buffers, whatever the section's lengths say.
    pub fn rebuild_section(
        &self,
        index: usize,
        e: &Entry,
        old: &dyn crate::source::ReadAt,
        out: &mut [u8],
        old_error: impl FnOnce(std::io::Error) -> PatchError,
    ) -> Result<(), PatchError> {
        apply_section_at(&self.header, index as u64, e, &self.file, old, out).map_err(|f| match f {
            Fault::Invalid(w) => PatchError::invalid(&self.name, w.0),
            Fault::Old(io) => old_error(io),
            Fault::Patch(io) => PatchError::io(&self.name, io),
        })
    }

    /// Bytes of the patch.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for a patch of nothing (never: a patch has a header).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The patch as the user named it.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What an application did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    /// Bytes of NEW written.
    pub new_len: u64,
    /// Sections applied.
    pub sections: usize,
}

/// Checks that `old` (named `old_name`) is the file `patch` was made from: size, then hash.
pub fn check_old(patch: &PatchFile, old: &File, old_name: &str) -> Result<(), PatchError> {
    let meta = old.metadata().map_err(|e| PatchError::io(old_name, e))?;
    if meta.is_dir() {
        return Err(PatchError::io(
            old_name,
            std::io::Error::from_raw_os_error(libc::EISDIR),
        ));
    }
    let want = patch.header.old_len;
    if meta.len() != want {
        return Err(PatchError::WrongOld {
            path: old_name.to_string(),
            why: format!("it has {} bytes, the patch expects {want}", meta.len()),
        });
    }
    let got =
        file_hash(old, want, patch.header.hash_piece).map_err(|e| PatchError::io(old_name, e))?;
    if got != patch.header.old_hash {
        return Err(PatchError::WrongOld {
            path: old_name.to_string(),
            why: "same size, other content".into(),
        });
    }
    Ok(())
}

/// Applies `patch` to OLD (`old_path`), writing NEW at `new_path` atomically, each section
/// written positionally ([`apply_file_via`] with [`Via::Pwrite`]).
pub fn apply_file(
    old_path: &Path,
    patch: &PatchFile,
    new_path: &Path,
    progress: Option<&std::sync::atomic::AtomicU64>,
) -> Result<Applied, PatchError> {
    apply_file_via(old_path, patch, new_path, progress, Via::Pwrite)
}

/// [`apply_file`], NEW's sections written as `via` says. Each section is rebuilt in a buffer
/// of the worker's and written with one positional write ([`Via::Pwrite`], runs of zeros
/// left as holes), or rebuilt in a map of its own range of NEW ([`Via::RangeMaps`]: reserved
/// on the disk first, so a full disk is an error, not a SIGBUS; OLD's bytes read straight
/// to where NEW has them): one copy fewer, but every page of the map is first zeroed by the
/// kernel when it is faulted in, and on this machine that made apply slower (4 GiB into
/// tmpfs: 5.23 s mapped, 3.64 s written; ext4: 4.53 s, 4.07 s; BENCHMARKS.md). A device or
/// FIFO target is written as one stream, its sections in order.
pub fn apply_file_via(
    old_path: &Path,
    patch: &PatchFile,
    new_path: &Path,
    progress: Option<&std::sync::atomic::AtomicU64>,
    via: Via,
) -> Result<Applied, PatchError> {
    let old_name = old_path.to_string_lossy().into_owned();
    let new_name = new_path.to_string_lossy().into_owned();
    if patch.is_tree() {
        return Err(PatchError::Usage(format!(
            "{}: a patch of a directory tree: OLD and NEW must be directories",
            patch.name
        )));
    }
    let old = File::open(old_path).map_err(|e| PatchError::io(&old_name, e))?;
    check_old(patch, &old, &old_name)?;
    let out = AtomicOutput::create(new_path)?;
    let h = &patch.header;
    // A regular file is sized first, so that the long zero runs of NEW can be left as holes
    // (never written); each worker reserves its own range of a map (on tmpfs that zeroes
    // the pages: on all cores, not one).
    let opts = BlockOptions {
        via,
        reserve: Reserve::Blocks,
        sparse: true,
        ..BlockOptions::default()
    };
    let writer = BlockWriter::for_output(&out, h.new_len, opts)?;
    let aligned = h.section_len == h.hash_piece;
    let section = |lane: &mut Lane<'_>, (i, e): (usize, &Entry)| -> Result<u128, PatchError> {
        let old_error = |io| PatchError::io(&old_name, io);
        // Every byte is written by an op (they cover the section exactly): the lane's
        // buffer, reused from the last section, is not cleared first.
        let sum = lane.fill(e.new_offset, e.new_len as usize, |made| {
            patch.rebuild_section(i, e, &old, made, old_error)?;
            Ok::<_, PatchError>(if aligned {
                xxhash_rust::xxh3::xxh3_128(made)
            } else {
                0
            })
        })?;
        if let Some(p) = progress {
            p.fetch_add(e.new_len, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(sum)
    };
    let sums: Vec<u128> = if writer.is_ordered() {
        // A stream takes its sections in order: one lane, front to back.
        let mut lane = writer.lane();
        patch
            .entries
            .iter()
            .enumerate()
            .map(|s| section(&mut lane, s))
            .collect::<Result<_, _>>()?
    } else {
        patch
            .entries
            .par_iter()
            .enumerate()
            .map_init(|| writer.lane(), section)
            .collect::<Result<_, _>>()?
    };
    writer.finish()?;
    let got = if aligned {
        let mut list = Vec::with_capacity(sums.len() * 16);
        for s in &sums {
            list.extend_from_slice(&s.to_le_bytes());
        }
        xxhash_rust::xxh3::xxh3_128(&list)
    } else {
        file_hash(out.file(), h.new_len, h.hash_piece).map_err(|e| PatchError::io(&new_name, e))?
    };
    if got != h.new_hash {
        return Err(PatchError::WrongNew { path: new_name });
    }
    out.commit(false).map_err(PatchError::Engine)?;
    Ok(Applied {
        new_len: h.new_len,
        sections: patch.entries.len(),
    })
}

/// What a patch holds, for `info`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Census {
    /// Copy ops.
    pub copies: u64,
    /// Bytes of NEW copied exactly from OLD.
    pub copied_bytes: u64,
    /// Delta ops (approximate matches).
    pub deltas: u64,
    /// Bytes of NEW made from OLD plus differences.
    pub delta_bytes: u64,
    /// Zero-run ops.
    pub zero_runs: u64,
    /// Bytes of zero runs.
    pub zero_bytes: u64,
    /// Literal ops.
    pub literals: u64,
    /// Literal bytes.
    pub literal_bytes: u64,
}

impl Census {
    /// Counts one op.
    pub fn count(&mut self, op: &Op) {
        let n = op.len();
        let (ops, bytes) = match op {
            Op::Copy { .. } => (&mut self.copies, &mut self.copied_bytes),
            Op::Delta { .. } => (&mut self.deltas, &mut self.delta_bytes),
            Op::Zero { .. } => (&mut self.zero_runs, &mut self.zero_bytes),
            Op::Literal { .. } => (&mut self.literals, &mut self.literal_bytes),
        };
        *ops += 1;
        *bytes += n;
    }

    /// Adds another census.
    pub fn add(&mut self, o: &Census) {
        self.copies += o.copies;
        self.copied_bytes += o.copied_bytes;
        self.deltas += o.deltas;
        self.delta_bytes += o.delta_bytes;
        self.zero_runs += o.zero_runs;
        self.zero_bytes += o.zero_bytes;
        self.literals += o.literals;
        self.literal_bytes += o.literal_bytes;
    }
}

/// Decodes every section (on all cores) and counts its ops.
pub fn census(patch: &PatchFile) -> Result<Census, PatchError> {
    let h = &patch.header;
    let parts: Vec<Census> = patch
        .entries
        .par_iter()
        .enumerate()
        .map(|(i, e)| -> Result<Census, PatchError> {
            let mut c = Census::default();
            each_op(h, i as u64, e, &patch.file, |op| c.count(op)).map_err(|f| match f {
                Fault::Invalid(w) => PatchError::invalid(&patch.name, w.0),
                Fault::Old(io) | Fault::Patch(io) => PatchError::io(&patch.name, io),
            })?;
            Ok(c)
        })
        .collect::<Result<_, _>>()?;
    let mut all = Census::default();
    for c in &parts {
        all.add(c);
    }
    Ok(all)
}

/// Writes to `inner`, remembering whether a write failed (so an I/O error is blamed on NEW,
/// not on OLD or the patch).
struct Blame<W> {
    inner: W,
    failed: bool,
}

impl<W: std::io::Write> std::io::Write for Blame<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).inspect_err(|_| self.failed = true)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().inspect_err(|_| self.failed = true)
    }
}

/// Applies a VCDIFF patch (made by `xdelta3 -e -S none` or `swath patch make --format
/// vcdiff`) to OLD, writing NEW atomically: nothing is at NEW's path unless every window
/// decoded (and its checksum, when it has one, held).
pub fn apply_vcdiff_file(
    old_path: &Path,
    patch_path: &Path,
    new_path: &Path,
) -> Result<Applied, PatchError> {
    use crate::vcdiff::{apply_vcdiff, VcdiffError};
    let old_name = old_path.to_string_lossy().into_owned();
    let patch_name = patch_path.to_string_lossy().into_owned();
    let new_name = new_path.to_string_lossy().into_owned();
    let old = File::open(old_path).map_err(|e| PatchError::io(&old_name, e))?;
    let old_len = old
        .metadata()
        .map_err(|e| PatchError::io(&old_name, e))?
        .len();
    let patch = File::open(patch_path).map_err(|e| PatchError::io(&patch_name, e))?;
    let mut reader = swath_engine::PageReader::with_capacity(1 << 20, patch);
    let out = AtomicOutput::create(new_path)?;
    let mut w = Blame {
        inner: swath_engine::PageWriter::with_capacity(1 << 20, out.file()),
        failed: false,
    };
    let result = apply_vcdiff(&old, old_len, &mut reader, &mut w).and_then(|n| {
        std::io::Write::flush(&mut w)
            .map(|()| n)
            .map_err(VcdiffError::from)
    });
    let failed = w.failed;
    drop(w);
    let new_len = match result {
        Ok(n) => n,
        Err(VcdiffError::Invalid(what)) => return Err(PatchError::invalid(&patch_name, what)),
        Err(VcdiffError::Io(e)) if failed => return Err(PatchError::io(&new_name, e)),
        Err(VcdiffError::Io(e)) => return Err(PatchError::io(&old_name, e)),
    };
    out.commit(false)?;
    Ok(Applied {
        new_len,
        sections: 0,
    })
}
