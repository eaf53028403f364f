//! Byte transformations: the seeds' Caesar cipher (add N to every byte) and its alphabet
//! variant (letters and digits rotate within their own ranges, other bytes unchanged).
//!
//! Three implementations of each, tested against each other:
//! - `*_naive`: one readable line per byte, the oracle;
//! - [`Cipher::apply_scalar`]: a 256-entry table, one byte at a time (what `tr` does; the
//!   seed's non-"Fast" path, selectable with `--scalar`);
//! - [`Cipher::apply`] and [`Cipher::apply_copy`]: branch-free loops that the compiler turns
//!   into vector code, compiled twice (baseline SSE2, and AVX2 chosen at run time when the
//!   CPU has it).

/// A byte transformation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cipher {
    /// Added to every byte (mod 256); for the alphabet variant, to letters (mod 26).
    shift: u8,
    /// Added to digits (mod 10) in the alphabet variant.
    digit_shift: u8,
    alphabet: bool,
}

impl Cipher {
    /// Adds `shift` (any integer; taken mod 256) to every byte.
    pub fn bytes(shift: i64) -> Cipher {
        Cipher {
            shift: shift.rem_euclid(256) as u8,
            digit_shift: 0,
            alphabet: false,
        }
    }

    /// Rotates A-Z and a-z by `shift` mod 26 and 0-9 by `shift` mod 10; other bytes stay.
    pub fn alphabet(shift: i64) -> Cipher {
        Cipher {
            shift: shift.rem_euclid(26) as u8,
            digit_shift: shift.rem_euclid(10) as u8,
            alphabet: true,
        }
    }

    /// The transformation that undoes this one.
    pub fn inverse(self) -> Cipher {
        if self.alphabet {
            Cipher {
                shift: (26 - self.shift) % 26,
                digit_shift: (10 - self.digit_shift) % 10,
                alphabet: true,
            }
        } else {
            Cipher {
                shift: self.shift.wrapping_neg(),
                digit_shift: 0,
                alphabet: false,
            }
        }
    }

    /// The 256-entry table of this transformation.
    pub fn table(self) -> [u8; 256] {
        let mut t = [0u8; 256];
        for (i, v) in t.iter_mut().enumerate() {
            *v = self.apply_byte_naive(i as u8);
        }
        t
    }

    /// Reference: transforms one byte.
    pub fn apply_byte_naive(self, b: u8) -> u8 {
        if !self.alphabet {
            return b.wrapping_add(self.shift);
        }
        match b {
            b'A'..=b'Z' => b'A' + (b - b'A' + self.shift) % 26,
            b'a'..=b'z' => b'a' + (b - b'a' + self.shift) % 26,
            b'0'..=b'9' => b'0' + (b - b'0' + self.digit_shift) % 10,
            _ => b,
        }
    }

    /// Reference: transforms every byte of `buf`.
    pub fn apply_naive(self, buf: &mut [u8]) {
        for b in buf {
            *b = self.apply_byte_naive(*b);
        }
    }

    /// Table-driven, one byte at a time (no vector code).
    pub fn apply_scalar(self, buf: &mut [u8]) {
        let t = self.table();
        for b in buf {
            *b = t[*b as usize];
        }
    }

    /// Table-driven copy: `dst[i] = f(src[i])`, one byte at a time.
    pub fn apply_copy_scalar(self, src: &[u8], dst: &mut [u8]) {
        let t = self.table();
        for (d, s) in dst.iter_mut().zip(src) {
            *d = t[*s as usize];
        }
    }

    /// Transforms `buf` in place with the fastest vector code the CPU supports.
    pub fn apply(self, buf: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { avx2::apply(self, buf) };
            return;
        }
        apply_generic(self, buf);
    }

    /// `dst[i] = f(src[i])` over the common length, with vector code.
    pub fn apply_copy(self, src: &[u8], dst: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { avx2::apply_copy(self, src, dst) };
            return;
        }
        apply_copy_generic(self, src, dst);
    }
}

/// Branch-free rotation of the bytes in `[lo, lo + span)` by `k` (< span).
#[inline(always)]
fn rotate(b: u8, lo: u8, span: u8, k: u8) -> u8 {
    let off = b.wrapping_sub(lo);
    let moved = off.wrapping_add(k);
    // `moved - span` wraps above `moved` exactly when no wrap-around is due: the minimum
    // picks the right one without a branch (one unsigned-min instruction in vector code).
    let wrapped = moved.min(moved.wrapping_sub(span));
    if off < span {
        lo.wrapping_add(wrapped)
    } else {
        b
    }
}

#[inline(always)]
fn alpha_byte(c: Cipher, b: u8) -> u8 {
    let b = rotate(b, b'A', 26, c.shift);
    let b = rotate(b, b'a', 26, c.shift);
    rotate(b, b'0', 10, c.digit_shift)
}

#[inline(always)]
fn apply_generic(c: Cipher, buf: &mut [u8]) {
    if c.alphabet {
        for b in buf {
            *b = alpha_byte(c, *b);
        }
    } else {
        let k = c.shift;
        for b in buf {
            *b = b.wrapping_add(k);
        }
    }
}

#[inline(always)]
fn apply_copy_generic(c: Cipher, src: &[u8], dst: &mut [u8]) {
    if c.alphabet {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = alpha_byte(c, *s);
        }
    } else {
        let k = c.shift;
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.wrapping_add(k);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Cipher;

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn apply(c: Cipher, buf: &mut [u8]) {
        super::apply_generic(c, buf);
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn apply_copy(c: Cipher, src: &[u8], dst: &mut [u8]) {
        super::apply_copy_generic(c, src, dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn alphabet_wraps_within_ranges() {
        let c = Cipher::alphabet(1);
        let mut s = *b"Zz9 aA0~";
        c.apply(&mut s);
        assert_eq!(&s, b"Aa0 bB1~");
        c.inverse().apply(&mut s);
        assert_eq!(&s, b"Zz9 aA0~");
        assert_eq!(Cipher::bytes(-1).apply_byte_naive(0), 255);
        assert_eq!(Cipher::bytes(256), Cipher::bytes(0));
    }

    #[test]
    fn every_byte_every_shift_every_alignment() {
        let all: Vec<u8> = (0..=255u8).cycle().take(256 * 3 + 17).collect();
        for shift in [-300i64, -255, -27, -1, 0, 1, 3, 10, 25, 26, 127, 255, 1000] {
            for c in [Cipher::bytes(shift), Cipher::alphabet(shift)] {
                for start in 0..33 {
                    let src = &all[start..];
                    let mut want = src.to_vec();
                    c.apply_naive(&mut want);
                    let mut fast = src.to_vec();
                    c.apply(&mut fast);
                    assert_eq!(fast, want, "{c:?}");
                    let mut scalar = src.to_vec();
                    c.apply_scalar(&mut scalar);
                    assert_eq!(scalar, want, "{c:?}");
                    let mut copy = vec![0u8; src.len()];
                    c.apply_copy(src, &mut copy);
                    assert_eq!(copy, want, "{c:?}");
                    c.apply_copy_scalar(src, &mut copy);
                    assert_eq!(copy, want, "{c:?}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn inverse_restores(data in proptest::collection::vec(any::<u8>(), 0..2000), k in -600i64..600, alpha in any::<bool>()) {
            let c = if alpha { Cipher::alphabet(k) } else { Cipher::bytes(k) };
            let mut buf = data.clone();
            c.apply(&mut buf);
            c.inverse().apply(&mut buf);
            prop_assert_eq!(buf, data);
        }
    }
}
