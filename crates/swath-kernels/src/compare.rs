//! Comparing two byte slices: where they first differ, and every position where they differ.
//!
//! The fast path asks `memcmp` (via slice equality, which the C library implements with the
//! widest vector instructions the CPU has) whether a whole chunk is equal, and only inside a
//! chunk that differs looks for the exact byte, eight bytes at a time. Equal data, the common
//! case, therefore runs at memory speed; a chunk that differs costs one extra word scan.
//!
//! Data compared with a hole (known zeros that are not read) is checked against zeros
//! ([`for_each_nonzero`]): the same scan against a chunk of zeros that stays in L1 cache, so
//! only one side's bytes cross the memory bus.

/// Chunk checked with one `memcmp` before locating a difference inside it.
const CHUNK: usize = 4096;
/// Chunk used when visiting every difference: small, so dense differences stay cheap.
const SMALL_CHUNK: usize = 64;

/// Reference: the index of the first position where `a` and `b` differ, over their common
/// length.
pub fn first_mismatch_naive(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// The index of the first position where `a` and `b` differ, over their common length.
pub fn first_mismatch(a: &[u8], b: &[u8]) -> Option<usize> {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut i = 0;
    while i < n {
        let end = (i + CHUNK).min(n);
        if a[i..end] != b[i..end] {
            return first_mismatch_words(&a[i..end], &b[i..end]).map(|j| i + j);
        }
        i = end;
    }
    None
}

/// Word-at-a-time search for the first difference (the locating step of [`first_mismatch`]).
pub fn first_mismatch_words(a: &[u8], b: &[u8]) -> Option<usize> {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().expect("8 bytes"));
        let y = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let d = x ^ y;
        if d != 0 {
            return Some(i + (d.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    first_mismatch_naive(&a[i..n], &b[i..n]).map(|j| i + j)
}

/// Calls `f` with every index where `a` and `b` differ, in order, until `f` returns false.
/// Returns false when `f` stopped the scan.
pub fn for_each_mismatch(a: &[u8], b: &[u8], mut f: impl FnMut(usize) -> bool) -> bool {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut i = 0;
    while i < n {
        // Skip equal stretches a large chunk at a time, then a small chunk at a time.
        let end = (i + CHUNK).min(n);
        if a[i..end] == b[i..end] {
            i = end;
            continue;
        }
        while i < end {
            let small_end = (i + SMALL_CHUNK).min(end);
            if a[i..small_end] != b[i..small_end] {
                let mut j = i;
                while let Some(k) = first_mismatch_words(&a[j..small_end], &b[j..small_end]) {
                    if !f(j + k) {
                        return false;
                    }
                    j += k + 1;
                }
            }
            i = small_end;
        }
    }
    true
}

/// Zeros to compare data with, a chunk at a time.
static ZEROS: [u8; CHUNK] = [0; CHUNK];

/// Reference: every index where `data` holds a byte other than zero.
pub fn nonzero_naive(data: &[u8]) -> Vec<usize> {
    data.iter()
        .enumerate()
        .filter(|(_, &x)| x != 0)
        .map(|(i, _)| i)
        .collect()
}

/// Calls `f` with every index where `data` holds a byte other than zero (where it differs
/// from a hole), in order, until `f` returns false. Returns false when `f` stopped the scan.
pub fn for_each_nonzero(data: &[u8], mut f: impl FnMut(usize) -> bool) -> bool {
    for (c, chunk) in data.chunks(CHUNK).enumerate() {
        let base = c * CHUNK;
        if !for_each_mismatch(chunk, &ZEROS[..chunk.len()], |i| f(base + i)) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all_mismatches_naive(a: &[u8], b: &[u8]) -> Vec<usize> {
        a.iter()
            .zip(b)
            .enumerate()
            .filter(|(_, (x, y))| x != y)
            .map(|(i, _)| i)
            .collect()
    }

    #[test]
    fn every_alignment_and_length() {
        // A difference at every position of every length up to 3 chunks' worth of edges.
        for len in (0..300).chain([4095, 4096, 4097, 8191, 8200]) {
            let a = vec![0x5au8; len + 16];
            for start in 0..8.min(len + 1) {
                let a = &a[start..start + len];
                assert_eq!(first_mismatch(a, a), None);
                for pos in (0..len).step_by(if len > 300 { 97 } else { 1 }) {
                    let mut b = a.to_vec();
                    b[pos] ^= 0x80;
                    assert_eq!(first_mismatch(a, &b), Some(pos), "len {len} pos {pos}");
                    let mut seen = Vec::new();
                    for_each_mismatch(a, &b, |i| {
                        seen.push(i);
                        true
                    });
                    assert_eq!(seen, vec![pos]);
                }
            }
        }
    }

    #[test]
    fn stops_when_asked() {
        let a = vec![0u8; 1000];
        let b = vec![1u8; 1000];
        let mut seen = 0;
        assert!(!for_each_mismatch(&a, &b, |_| {
            seen += 1;
            seen < 5
        }));
        assert_eq!(seen, 5);
    }

    proptest! {
        #[test]
        fn fast_equals_naive(
            a in proptest::collection::vec(0u8..4, 0..10_000),
            flips in proptest::collection::vec((0usize..10_000, 1u8..255), 0..40),
        ) {
            let mut b = a.clone();
            for (p, x) in flips {
                if p < b.len() { b[p] ^= x; }
            }
            prop_assert_eq!(first_mismatch(&a, &b), first_mismatch_naive(&a, &b));
            prop_assert_eq!(first_mismatch_words(&a, &b), first_mismatch_naive(&a, &b));
            let mut seen = Vec::new();
            for_each_mismatch(&a, &b, |i| { seen.push(i); true });
            prop_assert_eq!(seen, all_mismatches_naive(&a, &b));
        }

        #[test]
        fn nonzero_scan_equals_naive(
            len in 0usize..20_000,
            set in proptest::collection::vec((0usize..20_000, 1u8..=255), 0..40),
            stop_after in proptest::option::of(1usize..10),
        ) {
            let mut data = vec![0u8; len];
            for (p, x) in set {
                if p < len { data[p] = x; }
            }
            let want = nonzero_naive(&data);
            let mut seen = Vec::new();
            let done = for_each_nonzero(&data, |i| {
                seen.push(i);
                stop_after.is_none_or(|k| seen.len() < k)
            });
            let k = stop_after.unwrap_or(usize::MAX);
            prop_assert_eq!(&seen[..], &want[..want.len().min(k)]);
            prop_assert_eq!(done, want.len() < k);
        }

        #[test]
        fn common_length_only(a in proptest::collection::vec(any::<u8>(), 0..100), extra in 1usize..10) {
            let mut b = a.clone();
            b.extend(std::iter::repeat_n(0u8, extra));
            prop_assert_eq!(first_mismatch(&a, &b), None);
        }
    }
}
