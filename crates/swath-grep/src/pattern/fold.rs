//! The current locale as GNU's readers see it (set by the caller with `setlocale`): whether
//! it collates, and `-i` as GNU grep's DFA applies it, with glibc's case mappings.

use super::tree::{CharSet, Node, Sym};

/// True when the current locale's collation is not code-point order (not C, POSIX or
/// C.UTF-8): equivalence classes and collating symbols then follow its rules.
pub(super) fn locale_collates() -> bool {
    static COLLATES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *COLLATES.get_or_init(|| {
        // SAFETY: querying (NULL) the current LC_COLLATE name; the string is copied at once.
        let name = unsafe {
            let p = libc::setlocale(libc::LC_COLLATE, std::ptr::null());
            if p.is_null() {
                return false;
            }
            std::ffi::CStr::from_ptr(p).to_bytes().to_vec()
        };
        !(name == b"C" || name == b"POSIX" || name.starts_with(b"C."))
    })
}

/// glibc's case mappings in the current locale (set by the caller with `setlocale`).
mod wctype {
    unsafe extern "C" {
        pub fn towupper(wc: u32) -> u32;
        pub fn towlower(wc: u32) -> u32;
        pub fn toupper(c: i32) -> i32;
    }
}

/// gnulib dfa.c's `lonesome_lower`: characters C for which some locale has `C !=
/// towupper(C)` and `C != towlower(towupper(C))`.
const LONESOME_LOWER: [u32; 19] = [
    0x00B5, 0x0131, 0x017F, 0x01C5, 0x01C8, 0x01CB, 0x01F2, 0x0345, 0x03C2, 0x03D0, 0x03D1, 0x03D5,
    0x03D6, 0x03F0, 0x03F1, 0x03F2, 0x03F5, 0x1E9B, 0x1FBE,
];

/// dfa.c's `case_folded_counterparts`: the characters `-i` lets `c` stand for besides itself,
/// by glibc's `towupper`/`towlower` in the current locale (not Unicode's case folding: the
/// Kelvin sign is not a `k`, and in Turkish `i` pairs with `İ`, not `I`). In a unibyte locale,
/// every byte whose `toupper` is `c`'s (dfa.c's `setbit_case_fold_c`; kwset and glibc's
/// `RE_ICASE` compare upper cases too): in ISO-8859-7 each of Σ, σ and ς stands for all three.
pub(crate) fn case_counterparts(c: u32, utf8: bool) -> Vec<u32> {
    let mut out = Vec::new();
    if !utf8 {
        if c < 256 {
            // SAFETY: toupper takes any value of an unsigned char.
            let upper = |b: u32| unsafe { wctype::toupper(b as i32) };
            let uc = upper(c);
            out.extend((0..256).filter(|&b| b != c && upper(b) == uc));
        }
        return out;
    }
    // SAFETY: towupper/towlower take any wint_t.
    let (uc, lc) = unsafe {
        let uc = wctype::towupper(c);
        (uc, wctype::towlower(uc))
    };
    if uc != c {
        out.push(uc);
    }
    // SAFETY: as above.
    if lc != uc && lc != c && unsafe { wctype::towupper(lc) } == uc {
        out.push(lc);
    }
    for li in LONESOME_LOWER {
        // SAFETY: as above.
        if li != lc && li != uc && li != c && unsafe { wctype::towupper(li) } == uc {
            out.push(li);
        }
    }
    out
}

/// The set of a character and its `-i` counterparts, or `None` when it has none.
fn folded_char(c: u32, utf8: bool) -> Option<CharSet> {
    let more = case_counterparts(c, utf8);
    if more.is_empty() {
        return None;
    }
    let mut ranges: Vec<(u32, u32)> = std::iter::once(c).chain(more).map(|x| (x, x)).collect();
    ranges.sort_unstable();
    Some(CharSet {
        negated: false,
        ranges,
        classes: Vec::new(),
        dfa_runs: true,
    })
}

/// The largest range whose characters are folded one by one (wider ones keep their own
/// members only).
const FOLD_RANGE_MAX: u32 = 4096;

/// `-i` the way GNU grep's DFA applies it: each literal character becomes the set of it and
/// its counterparts, each bracket expression gains its members' counterparts (before a `^`
/// inverts it). Nothing else is folded: the data is matched as it is.
pub(super) fn fold_case(node: &Node, utf8: bool) -> Node {
    match node {
        Node::Lit(sym) => {
            let c = match *sym {
                Sym::Char(c) => u32::from(c),
                Sym::Byte(b) if !utf8 || b < 0x80 => u32::from(b),
                Sym::Byte(_) => return node.clone(),
            };
            folded_char(c, utf8).map_or_else(|| node.clone(), Node::Set)
        }
        Node::Set(set) => {
            let mut set = set.clone();
            let mut more = Vec::new();
            for &(a, b) in &set.ranges {
                if b - a > FOLD_RANGE_MAX {
                    continue;
                }
                for c in a..=b {
                    more.extend(case_counterparts(c, utf8).into_iter().map(|x| (x, x)));
                }
            }
            set.ranges.extend(more);
            set.ranges.sort_unstable();
            Node::Set(set)
        }
        Node::Concat(v) => Node::Concat(v.iter().map(|n| fold_case(n, utf8)).collect()),
        Node::Alt(v) => Node::Alt(v.iter().map(|n| fold_case(n, utf8)).collect()),
        Node::Group(n) => Node::Group(Box::new(fold_case(n, utf8))),
        Node::Repeat(n, min, max) => Node::Repeat(Box::new(fold_case(n, utf8)), *min, *max),
        Node::Empty | Node::Any | Node::Assert(_) | Node::BackRef => node.clone(),
    }
}
