//! Sizes on the command line, parsed as GNU tools parse them (`xstrtoimax` with the suffixes
//! `kKMGTPEZY0`): optional white space and sign, a number in C notation (decimal, `0x`
//! hexadecimal, leading-`0` octal) or none at all (then 1, so `k` alone is 1024), then
//! optionally a multiplier: `K`/`k` = 1024, `M`, `G`, `T`, `P`, `E`, `Z`, `Y` powers of 1024;
//! followed by `B` or `D` for powers of 1000 (`kB`, `MD`) or `iB` for powers of 1024
//! (`KiB`). Values above the largest signed 64-bit number overflow; negative values other
//! than zero are invalid.

/// Why a size did not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// Not a number, or an unknown suffix.
    Invalid,
    /// The number is followed by characters that are not a suffix; the parsed prefix and the
    /// byte offset where the rest starts (for `SKIP1:SKIP2`).
    Trailing(u64, usize),
    /// Too large for 64 bits.
    Overflow,
}

/// The one line for a size that did not parse, naming the suffixes that would (swath's own
/// options; the GNU tools' options keep GNU's wording).
pub fn invalid_size(text: &str) -> String {
    format!("invalid size '{text}' ({SIZE_FORMS})")
}

/// What a size may be, as [`invalid_size`] says it.
pub const SIZE_FORMS: &str = "a number, optionally followed by K, M, G, T, P or E for powers \
    of 1024, also written KiB, MiB, ..., or by KB, MB, GB, ... for powers of 1000";

/// Parses a whole size string.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    match parse_size_prefix(text) {
        Ok((v, used)) if used == text.len() => Ok(v),
        Ok((v, used)) => Err(SizeError::Trailing(v, used)),
        Err(e) => Err(e),
    }
}

/// Parses a size at the start of `text`; returns the value and the bytes consumed.
pub fn parse_size_prefix(text: &str) -> Result<(u64, usize), SizeError> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && (bytes[i] as char).is_ascii_whitespace() {
        i += 1;
    }
    let negative = bytes.get(i) == Some(&b'-');
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        i += 1;
    }
    let (radix, digits_start) = if bytes[i..].starts_with(b"0x") || bytes[i..].starts_with(b"0X") {
        if bytes.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit()) {
            (16, i + 2)
        } else {
            (10, i) // "0x" alone parses as 0 followed by the suffix 'x'
        }
    } else if bytes.get(i) == Some(&b'0') {
        (8, i)
    } else {
        (10, i)
    };
    let mut j = digits_start;
    let mut value: u64 = 0;
    let mut overflow = false;
    while let Some(d) = bytes.get(j).and_then(|&c| (c as char).to_digit(radix)) {
        match value
            .checked_mul(radix as u64)
            .and_then(|v| v.checked_add(d as u64))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        j += 1;
    }
    if j == digits_start {
        // No digits: a lone suffix letter stands for 1 of its unit.
        if bytes.get(j).is_some_and(|c| b"kKMGTPEZY".contains(c)) && !negative {
            value = 1;
        } else {
            return Err(SizeError::Invalid);
        }
    }
    if negative && (value != 0 || j < bytes.len()) {
        return Err(SizeError::Invalid);
    }
    if value > i64::MAX as u64 {
        overflow = true;
    }
    let Some(&suffix) = bytes.get(j) else {
        return if overflow {
            Err(SizeError::Overflow)
        } else {
            Ok((value, j))
        };
    };
    let power = match suffix {
        b'k' | b'K' => 1,
        b'M' => 2,
        b'G' => 3,
        b'T' => 4,
        b'P' => 5,
        b'E' => 6,
        b'Z' => 7,
        b'Y' => 8,
        _ => {
            return if overflow {
                Err(SizeError::Overflow)
            } else {
                Err(SizeError::Trailing(value, j))
            }
        }
    };
    let (base, used) = match (bytes.get(j + 1), bytes.get(j + 2)) {
        (Some(b'i'), Some(b'B')) => (1024u64, 3),
        (Some(b'B' | b'D'), _) => (1000u64, 2),
        _ => (1024u64, 1),
    };
    let mut scaled = Some(value);
    for _ in 0..power {
        scaled = scaled.and_then(|v| v.checked_mul(base));
    }
    match scaled {
        Some(v) if !overflow && v <= i64::MAX as u64 => Ok((v, j + used)),
        _ => Err(SizeError::Overflow),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_numbers_in_c_notation() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("640000000"), Ok(640_000_000));
        assert_eq!(parse_size("0x10"), Ok(16));
        assert_eq!(parse_size("010"), Ok(8));
        assert_eq!(parse_size("+5"), Ok(5));
        assert_eq!(parse_size(" 5"), Ok(5));
        assert_eq!(parse_size("-0"), Ok(0));
        assert_eq!(parse_size("-5"), Err(SizeError::Invalid));
        assert_eq!(parse_size("08"), Err(SizeError::Trailing(0, 1)));
        assert_eq!(parse_size("k"), Ok(1024));
        assert_eq!(parse_size("kB"), Ok(1000));
        assert_eq!(parse_size(""), Err(SizeError::Invalid));
        assert_eq!(parse_size("x"), Err(SizeError::Invalid));
    }

    #[test]
    fn suffixes() {
        assert_eq!(parse_size("1K"), Ok(1024));
        assert_eq!(parse_size("1k"), Ok(1024));
        assert_eq!(parse_size("1kB"), Ok(1000));
        assert_eq!(parse_size("1KiB"), Ok(1024));
        assert_eq!(parse_size("2M"), Ok(2 << 20));
        assert_eq!(parse_size("2MB"), Ok(2_000_000));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1E"), Ok(1 << 60));
        assert_eq!(parse_size("16E"), Err(SizeError::Overflow));
        assert_eq!(parse_size("8E"), Err(SizeError::Overflow));
        assert_eq!(parse_size("7E"), Ok(7 << 60));
        assert_eq!(parse_size("9223372036854775807"), Ok(i64::MAX as u64));
        assert_eq!(parse_size("9223372036854775808"), Err(SizeError::Overflow));
        assert_eq!(parse_size("0Z"), Ok(0));
        assert_eq!(parse_size("3kD"), Ok(3000));
        assert_eq!(parse_size("1m"), Err(SizeError::Trailing(1, 1)));
        assert_eq!(parse_size("1Y"), Err(SizeError::Overflow));
        assert_eq!(parse_size("99999999999999999999"), Err(SizeError::Overflow));
        assert_eq!(parse_size("1Q"), Err(SizeError::Trailing(1, 1)));
        assert_eq!(parse_size("5:6"), Err(SizeError::Trailing(5, 1)));
        assert_eq!(parse_size("1KB:3"), Err(SizeError::Trailing(1000, 3)));
    }
}
