//! The hash of a file, computed on all cores: XXH3-128 of the concatenation of the XXH3-128
//! of its pieces (16 MiB each by default, the last one shorter), each piece's hash written
//! as 16 little-endian bytes. An empty file's hash is XXH3-128 of nothing.

use std::io;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_128;

use crate::source::ReadAt;

/// The default piece size.
pub const PIECE: u64 = 16 << 20;

/// The hash of `bytes` as if they were a file cut into `piece`-byte pieces (the oracle of
/// [`file_hash`], and the hash of data already in memory).
pub fn slice_hash(bytes: &[u8], piece: u64) -> u128 {
    let mut list = Vec::with_capacity(bytes.len() / piece.max(1) as usize * 16 + 16);
    for p in bytes.chunks(piece.max(1) as usize) {
        list.extend_from_slice(&xxh3_128(p).to_le_bytes());
    }
    xxh3_128(&list)
}

/// The hash of the first `len` bytes of `file`, its pieces read positionally (memory: one
/// piece per worker), or taken where they lie when `file` is in memory, and hashed in
/// parallel. A file shorter than `len` is an `UnexpectedEof` error.
pub fn file_hash(file: &dyn ReadAt, len: u64, piece: u64) -> io::Result<u128> {
    let piece = piece.max(1);
    let pieces = len.div_ceil(piece);
    // A file in memory (mapped) is hashed where it lies.
    if let Some(bytes) = file.as_bytes().filter(|b| b.len() as u64 >= len) {
        let sums: Vec<u128> = (0..pieces)
            .into_par_iter()
            .map(|i| {
                let at = (i * piece) as usize;
                xxh3_128(&bytes[at..(at + piece as usize).min(len as usize)])
            })
            .collect();
        return Ok(hash_of_sums(sums));
    }
    let sums: Vec<u128> = (0..pieces)
        .into_par_iter()
        .map_init(Vec::new, |buf, i| {
            let at = i * piece;
            let n = (len - at).min(piece) as usize;
            buf.resize(n, 0);
            file.read_exact_at(&mut buf[..n], at)?;
            Ok(xxh3_128(&buf[..n]))
        })
        .collect::<io::Result<_>>()?;
    Ok(hash_of_sums(sums))
}

/// The hash of a file from its pieces' hashes, in order.
fn hash_of_sums(sums: Vec<u128>) -> u128 {
    let mut list = Vec::with_capacity(sums.len() * 16);
    for s in sums {
        list.extend_from_slice(&s.to_le_bytes());
    }
    xxh3_128(&list)
}

/// Incremental form for data that arrives in order (apply's output): pieces are hashed as
/// they fill.
pub struct PieceHasher {
    piece: u64,
    filled: u64,
    current: xxhash_rust::xxh3::Xxh3,
    list: xxhash_rust::xxh3::Xxh3,
    any: bool,
}

impl PieceHasher {
    /// A hasher with pieces of `piece` bytes.
    pub fn new(piece: u64) -> PieceHasher {
        PieceHasher {
            piece: piece.max(1),
            filled: 0,
            current: xxhash_rust::xxh3::Xxh3::new(),
            list: xxhash_rust::xxh3::Xxh3::new(),
            any: false,
        }
    }

    /// Adds the next bytes.
    pub fn update(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let room = (self.piece - self.filled) as usize;
            let n = room.min(bytes.len());
            self.current.update(&bytes[..n]);
            self.filled += n as u64;
            self.any = true;
            bytes = &bytes[n..];
            if self.filled == self.piece {
                self.close_piece();
            }
        }
    }

    fn close_piece(&mut self) {
        self.list.update(&self.current.digest128().to_le_bytes());
        self.current.reset();
        self.filled = 0;
        self.any = false;
    }

    /// The hash of everything added.
    pub fn finish(mut self) -> u128 {
        if self.any {
            self.close_piece();
        }
        self.list.digest128()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_way_agrees(len in 0usize..5000, piece in 1u64..700, cuts in proptest::collection::vec(0usize..900, 0..8)) {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let want = slice_hash(&data, piece);
            let mut f = tempfile::NamedTempFile::new().unwrap();
            std::io::Write::write_all(&mut f, &data).unwrap();
            prop_assert_eq!(file_hash(f.as_file(), len as u64, piece).unwrap(), want);
            prop_assert_eq!(file_hash(&&data[..], len as u64, piece).unwrap(), want);
            let mut h = PieceHasher::new(piece);
            let mut rest = &data[..];
            for c in cuts {
                let n = c.min(rest.len());
                h.update(&rest[..n]);
                rest = &rest[n..];
            }
            h.update(rest);
            prop_assert_eq!(h.finish(), want);
        }
    }

    #[test]
    fn one_byte_changes_the_hash_and_a_short_file_is_an_error() {
        let a = vec![1u8; 3000];
        let mut b = a.clone();
        b[2999] = 2;
        assert_ne!(slice_hash(&a, 1024), slice_hash(&b, 1024));
        assert_ne!(slice_hash(&a, 1024), slice_hash(&a[..2999], 1024));
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), &a).unwrap();
        let e = file_hash(f.as_file(), 4000, 1024).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
