//! Byte slices handed to C libraries (PCRE2, glibc's regex).
//!
//! An empty Rust slice may carry a dangling pointer (address 1, for `b""` or an empty
//! `Vec`): Rust never reads through it, but a C library given it with a length of zero may
//! still compute with it, or look around it. PCRE2's JIT does, for a look-behind at the
//! start of the subject: it steps the pointer back before comparing it with the start, and
//! near address 1 that wraps around (`echo x | grep -P '(?<=aa)b*'` crashed). An empty slice
//! is therefore handed over as a pointer into the middle of a static buffer, with readable
//! bytes on both sides, as a C program hands over `""`.

/// Zeroes on both sides of the pointer given for an empty slice: arithmetic a few bytes
/// before or after it stays inside memory that exists.
static AROUND_EMPTY: [u8; 64] = [0; 64];

/// A pointer that C may be given with `bytes.len()`: `bytes`' own, or for an empty slice one
/// into the middle of a static buffer.
pub(crate) fn c_ptr(bytes: &[u8]) -> *const u8 {
    if bytes.is_empty() {
        AROUND_EMPTY[32..].as_ptr()
    } else {
        bytes.as_ptr()
    }
}
