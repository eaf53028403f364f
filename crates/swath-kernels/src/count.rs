//! Counting occurrences of one byte (newlines, for cmp's line numbers and wc -l).

/// Reference: occurrences of `needle` in `hay`.
pub fn count_byte_naive(hay: &[u8], needle: u8) -> u64 {
    hay.iter().filter(|&&b| b == needle).count() as u64
}

/// Occurrences of `needle` in `hay`, with memchr's vectorised counting.
pub fn count_byte(hay: &[u8], needle: u8) -> u64 {
    memchr::memchr_iter(needle, hay).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_alignment() {
        let data: Vec<u8> = (0..1000u32)
            .map(|i| if i % 7 == 0 { b'\n' } else { b'x' })
            .collect();
        for s in 0..64 {
            for e in (s..data.len()).step_by(13) {
                assert_eq!(
                    count_byte(&data[s..e], b'\n'),
                    count_byte_naive(&data[s..e], b'\n')
                );
            }
        }
    }

    proptest! {
        #[test]
        fn fast_equals_naive(hay in proptest::collection::vec(0u8..3, 0..5000), n in 0u8..3) {
            prop_assert_eq!(count_byte(&hay, n), count_byte_naive(&hay, n));
        }
    }
}
