//! Sizes on the command line, parsed as GNU tools parse them (`xstrtoumax` with the suffixes
//! `kKMGTPEZY`): a number in C notation (decimal, `0x` hexadecimal, leading-`0` octal), then
//! optionally a multiplier: `K`/`k` = 1024, `M`, `G`, `T`, `P`, `E`, `Z`, `Y` powers of 1024;
//! followed by `B` for powers of 1000 (`kB`, `MB`) or `iB` for powers of 1024 (`KiB`, `MiB`).

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
    if i < bytes.len() && bytes[i] == b'-' {
        return Err(SizeError::Invalid);
    }
    if i < bytes.len() && bytes[i] == b'+' {
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
        match value.checked_mul(radix as u64).and_then(|v| v.checked_add(d as u64)) {
            Some(v) => value = v,
            None => overflow = true,
        }
        j += 1;
    }
    if j == digits_start {
        return Err(SizeError::Invalid);
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
        (Some(b'B'), _) => (1000u64, 2),
        _ => (1024u64, 1),
    };
    let mut scaled = Some(value);
    for _ in 0..power {
        scaled = scaled.and_then(|v| v.checked_mul(base));
    }
    match scaled {
        Some(v) if !overflow => Ok((v, j + used)),
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
        assert_eq!(parse_size("-5"), Err(SizeError::Invalid));
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
        assert_eq!(parse_size("1Y"), Err(SizeError::Overflow));
        assert_eq!(parse_size("99999999999999999999"), Err(SizeError::Overflow));
        assert_eq!(parse_size("1Q"), Err(SizeError::Trailing(1, 1)));
        assert_eq!(parse_size("5:6"), Err(SizeError::Trailing(5, 1)));
        assert_eq!(parse_size("1KB:3"), Err(SizeError::Trailing(1000, 3)));
    }
}
