//! swath's patch format, version 1 (docs/patch-format.md is the specification).
//!
//! A patch is a fixed header, then NEW's sections one after the other, then a section table
//! and a fixed footer at the very end. Each section rebuilds one contiguous slice of NEW on
//! its own: its instructions, literal bytes and difference bytes are three independent
//! streams, each stored or zstd-compressed, so sections are made and applied on all cores
//! and a reader can seek straight to any of them. Everything is checked before it is used:
//! the header, the footer and the table carry XXH3-64 checksums chained to the header's,
//! each section carries its own, and every length is bounded by the sizes the header
//! states, so a damaged or forged patch is refused in one line before anything is written
//! and never makes the reader allocate more than a section's worth.

use std::io;

use xxhash_rust::xxh3::xxh3_64;

use crate::ops::Op;

/// The first eight bytes of every swath patch.
pub const MAGIC: &[u8; 8] = b"SWATHPAT";
/// The last eight bytes of every swath patch.
pub const END_MAGIC: &[u8; 8] = b"SWATHEND";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
/// Bytes in the header.
pub const HEADER_LEN: usize = 128;
/// Bytes in the footer.
pub const FOOTER_LEN: usize = 40;
/// Bytes in one entry of the section table.
pub const ENTRY_LEN: usize = 40;
/// The largest slice of NEW one section may rebuild: what bounds a reader's memory.
pub const MAX_SECTION: u64 = 64 << 20;
/// Header flag (offset 12, bit 0): a tree patch. OLD and NEW are directories; OLD's and
/// NEW's regular files laid end to end are the address spaces the sections work in, and a
/// manifest ([`crate::manifest`]) between the last section and the section table lists the
/// entries. A swath that predates it refuses the patch as made by a newer swath.
pub const FLAG_TREE: u32 = 1;
/// The flags this swath reads.
pub const KNOWN_FLAGS: u32 = FLAG_TREE;
/// Bytes of a tree patch's manifest record, just before the section table.
pub const TREE_RECORD_LEN: usize = 40;

/// How hard `make` worked (recorded for `info`; apply does not depend on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Content-defined chunk matches only.
    Fast,
    /// Chunk anchors and approximate matches between them.
    Default,
    /// Default's matching, with the strongest compression.
    Max,
}

impl Level {
    /// Its number in the header.
    pub fn code(self) -> u32 {
        match self {
            Level::Fast => 0,
            Level::Default => 1,
            Level::Max => 2,
        }
    }

    /// The level of a header number.
    pub fn from_code(c: u32) -> Option<Level> {
        match c {
            0 => Some(Level::Fast),
            1 => Some(Level::Default),
            2 => Some(Level::Max),
            _ => None,
        }
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Level::Fast => "fast",
            Level::Default => "default",
            Level::Max => "max",
        }
    }
}

/// A damaged, truncated, forged or unsupported patch: what is wrong, in words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

fn invalid<T>(what: impl Into<String>) -> Result<T, Invalid> {
    Err(Invalid(what.into()))
}

/// The header: what the patch turns into what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// OLD's length.
    pub old_len: u64,
    /// NEW's length.
    pub new_len: u64,
    /// OLD's hash ([`crate::hash`]).
    pub old_hash: u128,
    /// NEW's hash.
    pub new_hash: u128,
    /// The piece size of both hashes.
    pub hash_piece: u64,
    /// The level it was made at.
    pub level: Level,
    /// The average chunk length of the matching.
    pub chunk_avg: u32,
    /// The nominal section length (the last section, and sections of a tree's files, may
    /// be shorter).
    pub section_len: u64,
}

impl Header {
    /// The header's 128 bytes; the last 8 are the checksum of the first 120.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        self.encode_flags(0)
    }

    /// The header's 128 bytes with `flags` ([`FLAG_TREE`]) at offset 12.
    pub fn encode_flags(&self, flags: u32) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&flags.to_le_bytes());
        h[16..24].copy_from_slice(&self.old_len.to_le_bytes());
        h[24..32].copy_from_slice(&self.new_len.to_le_bytes());
        h[32..48].copy_from_slice(&self.old_hash.to_le_bytes());
        h[48..64].copy_from_slice(&self.new_hash.to_le_bytes());
        h[64..72].copy_from_slice(&self.hash_piece.to_le_bytes());
        h[72..76].copy_from_slice(&self.level.code().to_le_bytes());
        h[76..80].copy_from_slice(&self.chunk_avg.to_le_bytes());
        h[80..88].copy_from_slice(&self.section_len.to_le_bytes());
        let sum = xxh3_64(&h[..120]);
        h[120..].copy_from_slice(&sum.to_le_bytes());
        h
    }

    /// Reads a header back, checking its magic, version and checksum; a header with any
    /// flag set (a tree patch) is refused as made by a newer swath, as swath did before
    /// flags existed.
    pub fn decode(h: &[u8]) -> Result<Header, Invalid> {
        match Header::decode_flags(h)? {
            (header, 0) => Ok(header),
            _ => invalid("unknown flags in the header: made by a newer swath"),
        }
    }

    /// Reads a header back with its flags: only the flags this swath knows
    /// ([`KNOWN_FLAGS`]) are accepted.
    pub fn decode_flags(h: &[u8]) -> Result<(Header, u32), Invalid> {
        if h.len() < HEADER_LEN {
            return invalid("truncated: shorter than a patch header");
        }
        if &h[..8] != MAGIC {
            return invalid("not a swath patch (bad magic number)");
        }
        let version = u32::from_le_bytes(word(h, 8));
        if version != VERSION {
            return invalid(format!(
                "patch format version {version} is not supported (this swath reads version {VERSION}): use a newer swath"
            ));
        }
        if u64::from_le_bytes(word(h, 120)) != xxh3_64(&h[..120]) {
            return invalid("damaged: the header's checksum does not match");
        }
        let flags = u32::from_le_bytes(word(h, 12));
        if flags & !KNOWN_FLAGS != 0 {
            return invalid("unknown flags in the header: made by a newer swath");
        }
        let level = Level::from_code(u32::from_le_bytes(word(h, 72)))
            .ok_or_else(|| Invalid("unknown level in the header".into()))?;
        let header = Header {
            old_len: u64::from_le_bytes(word(h, 16)),
            new_len: u64::from_le_bytes(word(h, 24)),
            old_hash: u128::from_le_bytes(word(h, 32)),
            new_hash: u128::from_le_bytes(word(h, 48)),
            hash_piece: u64::from_le_bytes(word(h, 64)),
            level,
            chunk_avg: u32::from_le_bytes(word(h, 76)),
            section_len: u64::from_le_bytes(word(h, 80)),
        };
        if header.hash_piece == 0 || header.section_len == 0 || header.section_len > MAX_SECTION {
            return invalid("damaged: impossible sizes in the header");
        }
        Ok((header, flags))
    }

    /// The header's checksum.
    pub fn sum(&self) -> u64 {
        u64::from_le_bytes(word(&self.encode(), 120))
    }

    /// The value the footer, the table and every section chain their checksums to: the
    /// checksum of this header with NEW's hash left zero (NEW's hash is known only once
    /// every section is written; the header's own checksum covers it).
    pub fn chain(&self) -> u64 {
        Header {
            new_hash: 0,
            ..*self
        }
        .sum()
    }
}

fn word<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b[at..at + N].try_into().expect("in bounds")
}

/// Where one section is and what it rebuilds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Offset in NEW of the first byte it makes.
    pub new_offset: u64,
    /// Bytes of NEW it makes.
    pub new_len: u64,
    /// Offset of its bytes in the patch.
    pub offset: u64,
    /// Length of its bytes in the patch.
    pub len: u64,
    /// XXH3-64 of the header's checksum, its index and its bytes.
    pub sum: u64,
}

/// The checksum a section's bytes must have.
pub fn section_sum(header_sum: u64, index: u64, bytes: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&header_sum.to_le_bytes());
    h.update(&index.to_le_bytes());
    h.update(bytes);
    h.digest()
}

/// The table and footer that end a patch whose sections are `entries` (the table starts at
/// `table_at`).
pub fn encode_tail(header_sum: u64, entries: &[Entry], table_at: u64) -> Vec<u8> {
    let mut t = Vec::with_capacity(entries.len() * ENTRY_LEN + FOOTER_LEN);
    for e in entries {
        for v in [e.new_offset, e.new_len, e.offset, e.len, e.sum] {
            t.extend_from_slice(&v.to_le_bytes());
        }
    }
    let table_sum = section_sum(header_sum, u64::MAX, &t);
    let mut f = Vec::with_capacity(FOOTER_LEN);
    f.extend_from_slice(&table_at.to_le_bytes());
    f.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    f.extend_from_slice(&table_sum.to_le_bytes());
    let footer_sum = section_sum(header_sum, u64::MAX - 1, &f);
    f.extend_from_slice(&footer_sum.to_le_bytes());
    f.extend_from_slice(END_MAGIC);
    t.extend_from_slice(&f);
    t
}

/// Reads the footer (the last [`FOOTER_LEN`] bytes of a patch of `patch_len` bytes): where
/// the table is and how many entries it has.
pub fn decode_footer(header: &Header, f: &[u8], patch_len: u64) -> Result<(u64, u64), Invalid> {
    if f.len() < FOOTER_LEN || &f[32..40] != END_MAGIC {
        return invalid("truncated: the patch's end is missing");
    }
    let sum = u64::from_le_bytes(word(f, 24));
    if sum != section_sum(header.chain(), u64::MAX - 1, &f[..24]) {
        return invalid("damaged: the footer's checksum does not match");
    }
    let table_at = u64::from_le_bytes(word(f, 0));
    let count = u64::from_le_bytes(word(f, 8));
    let want_count = header.new_len.div_ceil(header.section_len);
    let Some(end) = patch_len.checked_sub(FOOTER_LEN as u64) else {
        return invalid("truncated: the patch's end is missing");
    };
    if table_at < HEADER_LEN as u64
        || count.checked_mul(ENTRY_LEN as u64) != end.checked_sub(table_at)
        || count < want_count
    {
        return invalid("damaged: the section table does not fit the patch");
    }
    Ok((table_at, count))
}

/// The fewest bytes a section can have: its six streams' headers (a method byte and two
/// one-byte lengths each).
pub const MIN_SECTION_BYTES: u64 = 6 * 3;

/// Checks a section table's entry count (from the footer) against what the patch and the
/// header allow before the table is read: every section makes at least one byte of NEW and
/// holds at least [`MIN_SECTION_BYTES`] of the patch's bytes between the header and
/// `sections_end`. So the entries a reader keeps are never more than the patch's own bytes
/// can describe, whatever a forged footer says.
pub fn check_count(header: &Header, count: u64, sections_end: u64) -> Result<(), Invalid> {
    let room = sections_end.saturating_sub(HEADER_LEN as u64) / MIN_SECTION_BYTES;
    if count > header.new_len || count > room {
        return invalid("damaged: the section table lists more sections than the patch holds");
    }
    Ok(())
}

/// Reads a section table a chunk at a time, checking each entry against the header and
/// the ones before it as it comes (sections in order, each making 1 to S bytes of NEW and
/// holding [`MIN_SECTION_BYTES`] to [`max_section_len`] bytes, contiguous in NEW from 0 and
/// in the patch from the header to `sections_end`), and the table's checksum over all of
/// it: memory is the entries kept, never a buffer of the size a footer claims.
pub struct TableReader {
    section_len: u64,
    new_len: u64,
    sections_end: u64,
    sum: xxhash_rust::xxh3::Xxh3,
    want_sum: u64,
    entries: Vec<Entry>,
    new_at: u64,
    patch_at: u64,
    /// An entry that broke the rules: reported unless the checksum fails (damage is named
    /// as damage first).
    broken: Option<&'static str>,
    /// Bytes of an entry cut between two chunks.
    partial: Vec<u8>,
}

impl TableReader {
    /// A reader of the table of the patch `header` describes, whose footer is `footer` and
    /// whose sections end at `sections_end`.
    pub fn new(header: &Header, footer: &[u8], sections_end: u64) -> TableReader {
        let mut sum = xxhash_rust::xxh3::Xxh3::new();
        sum.update(&header.chain().to_le_bytes());
        sum.update(&u64::MAX.to_le_bytes());
        TableReader {
            section_len: header.section_len,
            new_len: header.new_len,
            sections_end,
            sum,
            want_sum: u64::from_le_bytes(word(footer, 16)),
            entries: Vec::new(),
            new_at: 0,
            patch_at: HEADER_LEN as u64,
            broken: None,
            partial: Vec::new(),
        }
    }

    /// The next bytes of the table.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        self.sum.update(bytes);
        if !self.partial.is_empty() {
            let n = (ENTRY_LEN - self.partial.len()).min(bytes.len());
            self.partial.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.partial.len() == ENTRY_LEN {
                let raw = std::mem::take(&mut self.partial);
                self.entry(&raw);
            }
        }
        let mut whole = bytes.chunks_exact(ENTRY_LEN);
        for raw in &mut whole {
            self.entry(raw);
        }
        self.partial.extend_from_slice(whole.remainder());
    }

    fn entry(&mut self, raw: &[u8]) {
        if self.broken.is_some() {
            return;
        }
        let v = |i: usize| u64::from_le_bytes(word(raw, i * 8));
        let e = Entry {
            new_offset: v(0),
            new_len: v(1),
            offset: v(2),
            len: v(3),
            sum: v(4),
        };
        let new_end = self.new_at.checked_add(e.new_len);
        let patch_end = self.patch_at.checked_add(e.len);
        let fits = e.new_offset == self.new_at
            && e.offset == self.patch_at
            && (1..=self.section_len).contains(&e.new_len)
            && (MIN_SECTION_BYTES..=max_section_len(e.new_len)).contains(&e.len)
            && new_end.is_some_and(|n| n <= self.new_len)
            && patch_end.is_some_and(|p| p <= self.sections_end);
        if !fits {
            self.broken = Some("damaged: the section table is inconsistent");
            return;
        }
        self.new_at = new_end.expect("checked");
        self.patch_at = patch_end.expect("checked");
        self.entries.push(e);
    }

    /// The entries, once the whole table was fed: its checksum checked first, then the
    /// entries' rules, then that they cover NEW and the patch exactly.
    pub fn finish(self) -> Result<Vec<Entry>, Invalid> {
        if self.sum.digest() != self.want_sum || !self.partial.is_empty() {
            return invalid("damaged: the section table's checksum does not match");
        }
        if let Some(why) = self.broken {
            return invalid(why);
        }
        if self.new_at != self.new_len || self.patch_at != self.sections_end {
            return invalid("damaged: the sections do not cover NEW");
        }
        Ok(self.entries)
    }
}

/// Reads a section table held whole in memory ([`TableReader`]).
pub fn decode_table(
    header: &Header,
    t: &[u8],
    footer: &[u8],
    sections_end: u64,
) -> Result<Vec<Entry>, Invalid> {
    let mut r = TableReader::new(header, footer, sections_end);
    r.feed(t);
    r.finish()
}

/// Where a tree patch's manifest is: the record of [`TREE_RECORD_LEN`] bytes just before
/// the section table (docs/patch-format.md, "Trees").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManifestAt {
    /// Offset of the manifest's stored bytes in the patch (where the sections end).
    pub offset: u64,
    /// Its length as stored (one zstd frame).
    pub stored: u64,
    /// Its length once decoded.
    pub raw: u64,
    /// XXH3-64 of (C, `u64::MAX - 2`, its stored bytes).
    pub sum: u64,
}

/// The record that locates a tree patch's manifest (`stored` bytes at `offset`, `raw`
/// once decoded), chained to the header's chain value.
pub fn encode_tree_record(
    chain: u64,
    offset: u64,
    stored: &[u8],
    raw: u64,
) -> [u8; TREE_RECORD_LEN] {
    let mut r = [0u8; TREE_RECORD_LEN];
    r[..8].copy_from_slice(&offset.to_le_bytes());
    r[8..16].copy_from_slice(&(stored.len() as u64).to_le_bytes());
    r[16..24].copy_from_slice(&raw.to_le_bytes());
    r[24..32].copy_from_slice(&section_sum(chain, u64::MAX - 2, stored).to_le_bytes());
    let own = section_sum(chain, u64::MAX - 3, &r[..32]);
    r[32..].copy_from_slice(&own.to_le_bytes());
    r
}

/// Reads the manifest record `r` of a tree patch whose section table starts at
/// `table_at`: its checksum, and a manifest that ends exactly where the record starts.
pub fn decode_tree_record(header: &Header, r: &[u8], table_at: u64) -> Result<ManifestAt, Invalid> {
    if r.len() < TREE_RECORD_LEN {
        return invalid("truncated: the tree's manifest record is missing");
    }
    let chain = header.chain();
    if u64::from_le_bytes(word(r, 32)) != section_sum(chain, u64::MAX - 3, &r[..32]) {
        return invalid("damaged: the tree's manifest record fails its checksum");
    }
    let at = ManifestAt {
        offset: u64::from_le_bytes(word(r, 0)),
        stored: u64::from_le_bytes(word(r, 8)),
        raw: u64::from_le_bytes(word(r, 16)),
        sum: u64::from_le_bytes(word(r, 24)),
    };
    let end = at
        .offset
        .checked_add(at.stored)
        .and_then(|e| e.checked_add(TREE_RECORD_LEN as u64));
    if at.offset < HEADER_LEN as u64 || end != Some(table_at) {
        return invalid("damaged: the tree's manifest does not fit the patch");
    }
    Ok(at)
}

/// Checks a tree patch's manifest bytes (as stored) against their record.
pub fn check_manifest(header: &Header, at: &ManifestAt, stored: &[u8]) -> Result<(), Invalid> {
    if section_sum(header.chain(), u64::MAX - 2, stored) != at.sum {
        return invalid("damaged: the tree's manifest fails its checksum");
    }
    Ok(())
}

/// Appends `v` as an unsigned LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an unsigned LEB128 varint at `*at`, advancing it.
pub fn get_varint(b: &[u8], at: &mut usize) -> Result<u64, Invalid> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = b.get(*at) else {
            return invalid("damaged: a number runs past its section");
        };
        *at += 1;
        let bits = u64::from(byte & 0x7f);
        if shift == 63 && bits > 1 {
            return invalid("damaged: a number is too large");
        }
        v |= bits << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    invalid("damaged: a number is too long")
}

pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub(crate) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// The kind byte of a copy in the kinds stream.
pub const OP_COPY: u8 = 0;
/// The kind byte of a run of zeros.
pub const OP_ZERO: u8 = 1;
/// The kind byte of literal bytes.
pub const OP_LITERAL: u8 = 2;
/// The kind byte of a delta.
pub const OP_DELTA: u8 = 3;

/// A section's ops as three streams, each compressed on its own: one kind byte per op,
/// the lengths (varints), and for copies and deltas where they read OLD (zigzag varints of
/// the distance to the offset the previous copy or delta's diagonal predicts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpStreams {
    /// One byte per op: 0 copy, 1 zero, 2 literal, 3 delta.
    pub kinds: Vec<u8>,
    /// Each op's length, a varint.
    pub lens: Vec<u8>,
    /// Each copy's and delta's `from - expected`, a zigzag varint.
    pub froms: Vec<u8>,
}

/// Encodes a section's ops ([`OpStreams`]). `expected` for a copy or delta at NEW offset
/// `p` is `p + d`, where `d` is `from - p` of the previous copy or delta (0 at first): a
/// stretch that goes on along the same diagonal after literal or zero bytes costs one
/// zero byte.
pub fn encode_ops(ops: &[Op], new_offset: u64) -> OpStreams {
    let mut out = OpStreams {
        kinds: Vec::with_capacity(ops.len()),
        lens: Vec::with_capacity(ops.len() * 2),
        froms: Vec::with_capacity(ops.len() * 2),
    };
    let mut at = new_offset;
    let mut diagonal = 0u64;
    for op in ops {
        let (kind, from) = match *op {
            Op::Copy { from, .. } => (OP_COPY, Some(from)),
            Op::Zero { .. } => (OP_ZERO, None),
            Op::Literal { .. } => (OP_LITERAL, None),
            Op::Delta { from, .. } => (OP_DELTA, Some(from)),
        };
        out.kinds.push(kind);
        put_varint(&mut out.lens, op.len());
        if let Some(from) = from {
            let expect = at.wrapping_add(diagonal);
            put_varint(&mut out.froms, zigzag(from.wrapping_sub(expect) as i64));
            diagonal = from.wrapping_sub(at);
        }
        at += op.len();
    }
    out
}

/// The difference bytes of a section's deltas, split in two streams that compress far
/// better than the bytes themselves (they are mostly zeros, the rest often the same
/// few values): for each non-zero byte the count of zero bytes before it (a varint), and
/// the non-zero bytes. Zeros after the last non-zero byte are implied by the length.
pub fn encode_diffs(diffs: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut runs = Vec::with_capacity(diffs.len() / 16);
    let mut bytes = Vec::with_capacity(diffs.len() / 16);
    let mut last = 0usize;
    let mut i = 0usize;
    while i < diffs.len() {
        // Eight zero bytes at a time.
        if i + 8 <= diffs.len()
            && u64::from_ne_bytes(diffs[i..i + 8].try_into().expect("8 bytes")) == 0
        {
            i += 8;
            continue;
        }
        if diffs[i] != 0 {
            put_varint(&mut runs, (i - last) as u64);
            bytes.push(diffs[i]);
            last = i + 1;
        }
        i += 1;
    }
    (runs, bytes)
}

thread_local! {
    /// This thread's zstd context, kept from one stream to the next: a fresh one for each
    /// stream allocates and faults in its tables anew (megabytes at level 6 and up), and
    /// a reused one compresses to the same bytes.
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// `raw` as one zstd frame at `level`, by this thread's context.
fn compress(raw: &[u8], level: i32) -> io::Result<Vec<u8>> {
    COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        let c = match &mut *c {
            Some(c) => {
                c.set_compression_level(level)?;
                c
            }
            none => none.insert(zstd::bulk::Compressor::new(level)?),
        };
        c.compress(raw)
    })
}

/// One stream of a section as stored: a method byte (0 stored, 1 zstd), its length once
/// decoded, its length as stored, the bytes.
pub fn put_stream(out: &mut Vec<u8>, raw: &[u8], zstd_level: i32) -> io::Result<()> {
    let packed = if raw.len() >= 64 {
        compress(raw, zstd_level)?
    } else {
        Vec::new()
    };
    let (method, bytes) = if !packed.is_empty() && packed.len() < raw.len() {
        (1u8, &packed[..])
    } else {
        (0u8, raw)
    };
    out.push(method);
    put_varint(out, raw.len() as u64);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
    Ok(())
}

/// The most bytes each of a section's six streams may decode to, for a section that makes
/// `l` bytes of NEW (docs/patch-format.md, "Sections"): one kind byte per op and every op
/// makes a byte at least (L); an op of length v takes at most v bytes as a varint (L); an
/// offset at most 10 bytes per op (10 L); the literal bytes (L); a zero run's varint at
/// most one byte more than the zeros it counts, each followed by a difference byte (L); the
/// difference bytes (L).
pub fn stream_limits(l: u64) -> [u64; 6] {
    [l, l, l.saturating_mul(10), l, l, l]
}

/// The most bytes a section that makes `l` bytes of NEW can take in a patch: each stream's
/// header (a method byte and two varints, at most 21 bytes) and at most its limit as
/// stored (a compressed stream is smaller than what it decodes to, or it is stored).
pub fn max_section_len(l: u64) -> u64 {
    stream_limits(l)
        .iter()
        .fold(6 * 21, |t, &m| t.saturating_add(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn header() -> Header {
        Header {
            old_len: 1000,
            new_len: 2500,
            old_hash: 7,
            new_hash: 8,
            hash_piece: 16 << 20,
            level: Level::Fast,
            chunk_avg: 1024,
            section_len: 1000,
        }
    }

    #[test]
    fn header_round_trips_and_any_flipped_byte_is_refused() {
        let h = header();
        let b = h.encode();
        assert_eq!(Header::decode(&b).unwrap(), h);
        for i in 0..HEADER_LEN {
            let mut bad = b;
            bad[i] ^= 0x10;
            assert!(Header::decode(&bad).is_err(), "byte {i}");
        }
        let mut newer = b;
        newer[8] = 2;
        let err = Header::decode(&newer).unwrap_err().to_string();
        assert!(err.contains("version 2"), "{err}");
    }

    #[test]
    fn the_tree_flag_is_read_here_and_refused_by_the_file_decoder() {
        let h = header();
        let b = h.encode_flags(FLAG_TREE);
        assert_eq!(Header::decode_flags(&b).unwrap(), (h, FLAG_TREE));
        let err = Header::decode(&b).unwrap_err().to_string();
        assert!(err.contains("made by a newer swath"), "{err}");
        // A flag beyond the known ones is refused by both.
        let b = h.encode_flags(FLAG_TREE | 2);
        let err = Header::decode_flags(&b).unwrap_err().to_string();
        assert!(err.contains("made by a newer swath"), "{err}");
        // A file patch's header is the bytes it always was.
        assert_eq!(h.encode_flags(0), h.encode());
        assert_eq!(&h.encode()[12..16], &[0, 0, 0, 0]);
    }

    #[test]
    fn the_tree_record_round_trips_and_any_flipped_byte_is_refused() {
        let h = header();
        let stored = b"manifest bytes".to_vec();
        let r = encode_tree_record(h.chain(), 500, &stored, 99);
        let table_at = 500 + stored.len() as u64 + TREE_RECORD_LEN as u64;
        let at = decode_tree_record(&h, &r, table_at).unwrap();
        assert_eq!(
            (at.offset, at.stored, at.raw),
            (500, stored.len() as u64, 99)
        );
        check_manifest(&h, &at, &stored).unwrap();
        assert!(check_manifest(&h, &at, b"manifest bytez").is_err());
        assert!(decode_tree_record(&h, &r, table_at + 1).is_err());
        for i in 0..TREE_RECORD_LEN {
            let mut bad = r;
            bad[i] ^= 0x20;
            assert!(decode_tree_record(&h, &bad, table_at).is_err(), "byte {i}");
        }
    }

    #[test]
    fn table_round_trips_and_is_checked() {
        let h = header();
        let entries: Vec<Entry> = (0..3)
            .map(|i| Entry {
                new_offset: i * 1000,
                new_len: if i == 2 { 500 } else { 1000 },
                offset: HEADER_LEN as u64 + i * 20,
                len: 20,
                sum: i,
            })
            .collect();
        let table_at = HEADER_LEN as u64 + 60;
        let tail = encode_tail(h.chain(), &entries, table_at);
        let patch_len = table_at + tail.len() as u64;
        let footer = &tail[tail.len() - FOOTER_LEN..];
        let (at, count) = decode_footer(&h, footer, patch_len).unwrap();
        assert_eq!((at, count), (table_at, 3));
        let table = &tail[..tail.len() - FOOTER_LEN];
        assert_eq!(decode_table(&h, table, footer, at).unwrap(), entries);
        for i in 0..tail.len() {
            let mut bad = tail.clone();
            bad[i] ^= 1;
            let f = &bad[bad.len() - FOOTER_LEN..];
            let ok = decode_footer(&h, f, patch_len)
                .and_then(|(at, _)| decode_table(&h, &bad[..bad.len() - FOOTER_LEN], f, at));
            assert!(ok.is_err(), "byte {i}");
        }
    }

    /// A table of `lens` sections (bytes of NEW, bytes in the patch) right after the header.
    fn table_of(h: &Header, lens: &[(u64, u64)]) -> (Vec<u8>, Vec<u8>, u64, Vec<Entry>) {
        let (mut new_at, mut at) = (0, HEADER_LEN as u64);
        let mut entries = Vec::new();
        for (i, &(n, len)) in lens.iter().enumerate() {
            entries.push(Entry {
                new_offset: new_at,
                new_len: n,
                offset: at,
                len,
                sum: i as u64,
            });
            new_at += n;
            at += len;
        }
        let tail = encode_tail(h.chain(), &entries, at);
        let (table, footer) = tail.split_at(tail.len() - FOOTER_LEN);
        (table.to_vec(), footer.to_vec(), at, entries)
    }

    #[test]
    fn sections_of_impossible_sizes_are_refused() {
        let h = header();
        let ok = [(1000, 20), (1000, 20), (500, 20)];
        let (t, f, end, entries) = table_of(&h, &ok);
        assert_eq!(decode_table(&h, &t, &f, end).unwrap(), entries);
        for bad in [
            // Empty, longer than S, fewer bytes than six stream headers, more bytes than
            // six streams of their largest lengths.
            [(0, 20), (2000, 20), (500, 20)],
            [(1001, 20), (999, 20), (500, 20)],
            [(1000, 17), (1000, 20), (500, 20)],
            [(1000, max_section_len(1000) + 1), (1000, 20), (500, 20)],
        ] {
            let (t, f, end, _) = table_of(&h, &bad);
            let err = decode_table(&h, &t, &f, end).unwrap_err();
            assert!(err.0.contains("inconsistent"), "{bad:?}: {err}");
        }
        // The count is held to NEW's length and to the sections' bytes before any entry
        // is read.
        check_count(&h, 3, HEADER_LEN as u64 + 60).unwrap();
        assert!(check_count(&h, 4, HEADER_LEN as u64 + 60).is_err());
        assert!(check_count(&h, 2501, u64::MAX).is_err());
        assert!(check_count(&h, u64::MAX / 40, HEADER_LEN as u64).is_err());
    }

    proptest! {
        #[test]
        fn a_table_read_in_any_pieces_is_the_table(cuts in proptest::collection::vec(0usize..200, 0..8)) {
            let h = header();
            let (t, f, end, entries) = table_of(&h, &[(1000, 20), (1000, 30), (500, 25)]);
            let mut r = TableReader::new(&h, &f, end);
            let mut at = 0;
            for c in cuts {
                let c = c.min(t.len() - at);
                r.feed(&t[at..at + c]);
                at += c;
            }
            r.feed(&t[at..]);
            prop_assert_eq!(r.finish().unwrap(), entries);
        }

        #[test]
        fn varints_round_trip(v in any::<u64>()) {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut at = 0;
            prop_assert_eq!(get_varint(&b, &mut at).unwrap(), v);
            prop_assert_eq!(at, b.len());
        }
    }
}
