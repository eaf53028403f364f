//! wc's tests: the vector loops against the state machine, tallies of any cuts merged against
//! the whole, the glibc class table against its ranges, and GNU wc's observed rules.

use super::*;
use proptest::prelude::*;

#[test]
fn bmp_table_agrees_with_the_ranges() {
    let bmp = bmp_classes();
    for u in 0..0x11000u32 {
        let Some(c) = char::from_u32(u) else { continue };
        assert_eq!(class_utf8(c, bmp, false), class_char(c), "U+{u:04X}");
        let posix = match class_char(c) {
            Class::Space(w) if nbsp(u) => Class::Print(w),
            other => other,
        };
        assert_eq!(class_utf8(c, bmp, true), posix, "U+{u:04X}");
    }
}

#[test]
fn class_table_is_complete_and_ordered() {
    let r = class_ranges();
    assert!(r.len() > 1000);
    assert_eq!(r[0].0, 0x80);
    assert!(
        r.windows(2).all(|w| w[0].1 + 1 == w[1].0),
        "ranges must tile U+0080.."
    );
    assert_eq!(r.last().unwrap().1, 0x10FFFF);
    assert_eq!(class_char('\u{3000}'), Class::Space(2));
    assert_eq!(class_char('\u{2028}'), Class::Other { is_char: true });
    assert_eq!(class_char('中'), Class::Print(2));
    assert_eq!(class_char('\u{301}'), Class::Print(0));
}

#[test]
fn gnu_observations() {
    let t = |s: &[u8], e| {
        let x = tally(s, e);
        (x.lines, x.words, x.chars, x.bytes)
    };
    assert_eq!(t(b"a\xc2\xa0b\n", Encoding::Utf8), (1, 2, 4, 5));
    assert_eq!(t(b"a\xc2\x85b\n", Encoding::Utf8), (1, 1, 4, 5));
    assert_eq!(t(b"a\xe3\x80\x80b\n", Encoding::Utf8), (1, 2, 4, 6));
    assert_eq!(t(b"a\xff b\n", Encoding::Utf8), (1, 2, 4, 5));
    assert_eq!(t(b"\xff\n", Encoding::Utf8), (1, 0, 1, 2));
    assert_eq!(t(b"\xff \xff\n", Encoding::Utf8), (1, 0, 2, 4));
    assert_eq!(t(b"\xf4\x90\x80\x80", Encoding::Utf8), (0, 0, 1, 4));
    assert_eq!(t(b"\xfc\x84\x80\x80\x80\x80", Encoding::Utf8), (0, 0, 1, 6));
    assert_eq!(t(b"\xed\xa0\x80", Encoding::Utf8), (0, 0, 0, 3));
    assert_eq!(t(b"a\xc2\xa0b", Encoding::Utf8Posix), (0, 1, 3, 4));
    assert_eq!(t(b"a\xe2\x80\x87b", Encoding::Utf8Posix), (0, 1, 3, 5));
    assert_eq!(t(b"a\xe3\x80\x80b", Encoding::Utf8Posix), (0, 2, 3, 5));
    assert_eq!(t(b"a\x1cb\n", Encoding::C), (1, 1, 4, 4));
    assert_eq!(t(b"\xff\n", Encoding::C), (1, 0, 2, 2));
    assert_eq!(tally(b"a\tb\n12345678901\n", Encoding::C).max_line(), 11);
    assert_eq!(tally(b"1234567\tx", Encoding::C).max_line(), 9);
}

fn split_merge(data: &[u8], cuts: &[usize], enc: Encoding) -> Tally {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|&c| {
            let c = c.min(data.len());
            if enc.is_utf8() {
                utf8_boundary(data, c)
            } else {
                c
            }
        })
        .collect();
    points.sort();
    let mut acc = Tally::default();
    let mut prev = 0;
    for p in points.into_iter().chain([data.len()]) {
        acc = acc.merge(tally(&data[prev..p], enc));
        prev = p;
    }
    acc
}

/// Checks that `data` tallied in blocks of `bs` folds to its tally; returns that tally.
fn blocks_fold_to_the_whole(
    data: &[u8],
    bs: usize,
    enc: Encoding,
) -> Result<Tally, proptest::test_runner::TestCaseError> {
    let whole = tally(data, enc);
    let folded = fold_blocks(data.chunks(bs).map(|c| tally_block(c, enc)), enc);
    prop_assert_eq!(
        (
            folded.lines,
            folded.words,
            folded.chars,
            folded.bytes,
            folded.max_line()
        ),
        (
            whole.lines,
            whole.words,
            whole.chars,
            whole.bytes,
            whole.max_line()
        )
    );
    Ok(whole)
}

fn pieces() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(&b"a"[..]),
        Just(&b" "[..]),
        Just(&b"\n"[..]),
        Just(&b"\t"[..]),
        Just(&b"\r"[..]),
        Just(&b"\x0c"[..]),
        Just(&b"\x0b"[..]),
        Just(&b"\x01"[..]),
        Just(&b"\xff"[..]),
        Just(&b"\xc2\xa0"[..]),
        Just(&b"\xe3\x80\x80"[..]),
        Just(&b"\xe4\xb8\xad"[..]),
        Just(&b"\xcc\x81"[..]),
        Just(&b"\xc3"[..]),
        Just(&b"\x80"[..]),
        Just(&b"word"[..]),
    ];
    proptest::collection::vec(piece, 0..200).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn ascii_tally_matches_the_state_machine(
        data in prop_oneof![
            // Any ASCII: the scalar loop.
            proptest::collection::vec(prop_oneof![
                Just(b'a'), Just(b' '), Just(b'\n'), Just(b'\t'), Just(b'\r'), Just(0x0bu8),
                Just(0x0cu8), Just(b'~'), Just(0x01u8), Just(0x7fu8),
            ], 0..300),
            // Printable, spaces and newlines only: widths from line lengths.
            proptest::collection::vec(prop_oneof![
                Just(b'a'), Just(b' '), Just(b'\n'), Just(b'~'),
            ], 0..1000),
        ],
        cuts in proptest::collection::vec(0usize..1000, 0..5),
    ) {
        let whole = tally(&data, Encoding::C);
        let fast = tally_ascii(&data).unwrap();
        prop_assert_eq!(
            (fast.lines, fast.words, fast.chars, fast.bytes, fast.max_line()),
            (whole.lines, whole.words, whole.chars, whole.bytes, whole.max_line())
        );
        // And as pieces merged with each other.
        let mut points: Vec<usize> = cuts.iter().map(|&c| c.min(data.len())).collect();
        points.sort();
        let mut acc = Tally::default();
        let mut prev = 0;
        for q in points.into_iter().chain([data.len()]) {
            acc = acc.merge(tally_ascii(&data[prev..q]).unwrap());
            prev = q;
        }
        prop_assert_eq!(
            (acc.lines, acc.words, acc.chars, acc.bytes, acc.max_line()),
            (whole.lines, whole.words, whole.chars, whole.bytes, whole.max_line())
        );
    }

    #[test]
    fn fast_word_tally_matches_the_state_machine(
        data in proptest::collection::vec(prop_oneof![
            Just(b'a'), Just(b' '), Just(b'\n'), Just(b'\t'), Just(b'\r'), Just(0x0bu8),
            Just(b'~'), Just(b'!'), Just(0x01u8), Just(0xc3u8),
        ], 0..300),
        bs in 1usize..100,
        utf8 in any::<bool>(),
    ) {
        let enc = if utf8 { Encoding::Utf8 } else { Encoding::C };
        let whole = tally(&data, enc);
        // Merging fast tallies where possible and slow ones elsewhere gives the whole.
        let mut acc = Tally::default();
        for chunk in data.chunks(bs) {
            let t = tally_words_fast(chunk).unwrap_or_else(|| tally(chunk, enc));
            if let Some(f) = tally_words_fast(chunk) {
                let s = tally(chunk, enc);
                prop_assert_eq!((f.lines, f.words, f.chars, f.bytes), (s.lines, s.words, s.chars, s.bytes));
                prop_assert_eq!((f.starts_in_word, f.ends_in_word, f.saw_word_char), (s.starts_in_word, s.ends_in_word, s.saw_word_char));
            }
            acc = acc.merge(t);
        }
        prop_assert_eq!((acc.lines, acc.words, acc.bytes), (whole.lines, whole.words, whole.bytes));
    }

    #[test]
    fn mostly_ascii_blocks_take_the_fast_loops_exactly(
        rare in proptest::collection::vec((0usize..20_000, pieces()), 0..6),
        bs in prop_oneof![Just(20_000usize), 4000usize..9000],
        utf8 in any::<bool>(),
    ) {
        // Kilobytes of ASCII text with a few odd pieces (multibyte, invalid, control)
        // dropped in anywhere, including across the 4 KiB stretches of a block.
        let mut data: Vec<u8> = (0..20_000u32)
            .map(|i| match i % 23 { 0 => b'\n', 5 | 11 => b' ', 17 => b'\t', _ => b'a' + (i % 7) as u8 })
            .collect();
        for (at, p) in &rare {
            let at = (*at).min(data.len());
            data.splice(at..at, p.iter().copied());
        }
        let enc = if utf8 { Encoding::Utf8 } else { Encoding::C };
        let whole = blocks_fold_to_the_whole(&data, bs, enc)?;
        let quick = fold_blocks(data.chunks(bs).map(|c| tally_block_no_width(c, enc)), enc);
        prop_assert_eq!(
            (quick.lines, quick.words, quick.chars, quick.bytes),
            (whole.lines, whole.words, whole.chars, whole.bytes)
        );
    }

    #[test]
    fn utf8_vector_loop_matches_the_state_machine(
        words in proptest::collection::vec(prop_oneof![
            8 => Just(&b"word"[..]),
            6 => Just(&b" "[..]),
            2 => Just(&b"\n"[..]),
            2 => Just(&b"caf\xc3\xa9"[..]),
            2 => Just(&b"\xe6\x97\xa5\xe6\x9c\xac"[..]),
            1 => Just(&b"\xf0\x9f\x98\x80"[..]),
            1 => Just(&b"\xcc\x81"[..]),
            1 => Just(&b"\xc2\xa0"[..]),
            1 => Just(&b"\xe3\x80\x80"[..]),
            1 => Just(&b"\xe2\x80\x87"[..]),
        ], 0..400),
        odd in proptest::collection::vec((0usize..400, prop_oneof![
            Just(&b"\t"[..]),
            Just(&b"\r"[..]),
            Just(&b"\x0b"[..]),
            Just(&b"\x01"[..]),
            Just(&b"\xc2\x85"[..]),
            Just(&b"\xe2\x80\xa8"[..]),
            Just(&b"\xff"[..]),
            Just(&b"\x80"[..]),
            Just(&b"\xf4\x90\x80\x80"[..]),
            Just(&b"\xed\xa0\x80"[..]),
        ]), 0..4),
        skip in 0usize..70,
        posix in any::<bool>(),
        width in any::<bool>(),
    ) {
        // Text whose multibyte characters fall at every offset of the 64-byte chunks,
        // characters that straddle chunks, and the odd ones the loop must hand back.
        let mut words = words;
        for (at, p) in odd {
            words.insert(at.min(words.len()), p);
        }
        let data = words.concat();
        let data = &data[utf8_boundary(&data, skip.min(data.len()))..];
        let enc = if posix { Encoding::Utf8Posix } else { Encoding::Utf8 };
        let want = tally(data, enc);
        let got = tally_utf8(data, enc, width);
        prop_assert_eq!(
            (got.lines, got.words, got.chars, got.bytes),
            (want.lines, want.words, want.chars, want.bytes)
        );
        prop_assert_eq!(
            (got.starts_in_word, got.ends_in_word, got.saw_word_char),
            (want.starts_in_word, want.ends_in_word, want.saw_word_char)
        );
        #[cfg(target_arch = "x86_64")]
        {
            // The SSE2 loop (for CPUs without AVX2) gives what the dispatched one gives.
            let bmp = bmp_classes();
            // SAFETY: SSE2 is part of the x86_64 baseline.
            let (a, b) = unsafe {
                if width {
                    (sse2::utf8_run::<true>(data, bmp, posix), sse2::utf8_body::<false, true>(data, bmp, posix))
                } else {
                    (sse2::utf8_run::<false>(data, bmp, posix), sse2::utf8_body::<false, false>(data, bmp, posix))
                }
            };
            prop_assert_eq!(a, b);
            // SAFETY: as above.
            let (a, b) = unsafe { (sse2::tally_words(data), sse2::words_body::<false>(data)) };
            prop_assert_eq!(a, b);
        }
        if width {
            prop_assert_eq!(got.max_line(), want.max_line());
            // The edges too, as a merge with what comes before and after reads them.
            let around = tally(b"\tab c", enc);
            let joined = around.merge(got).merge(around);
            let whole = around.merge(want).merge(around);
            prop_assert_eq!(joined.max_line(), whole.max_line());
            prop_assert_eq!(joined.words, whole.words);
        }
    }

    #[test]
    fn blocks_cut_anywhere_fold_to_the_whole(
        data in pieces(),
        bs in 1usize..40,
        utf8 in any::<bool>(),
    ) {
        let enc = if utf8 { Encoding::Utf8 } else { Encoding::C };
        blocks_fold_to_the_whole(&data, bs, enc)?;
    }

    #[test]
    fn any_cuts_merge_to_the_whole(
        data in pieces(),
        cuts in proptest::collection::vec(0usize..1000, 0..8),
        utf8 in any::<bool>(),
    ) {
        let enc = if utf8 { Encoding::Utf8 } else { Encoding::C };
        let whole = tally(&data, enc);
        let merged = split_merge(&data, &cuts, enc);
        prop_assert_eq!(
            (merged.lines, merged.words, merged.chars, merged.bytes, merged.max_line()),
            (whole.lines, whole.words, whole.chars, whole.bytes, whole.max_line())
        );
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn utf8_vector_loop_takes_clean_text_whole() {
    let line = "naïve café 日本語 text\u{a0}with\u{3000}spaces, emoji 😀 and e\u{301}\n";
    let data = line.repeat(100);
    let data = data.as_bytes();
    for width in [false, true] {
        // SAFETY: SSE2 is part of the x86_64 baseline.
        let (t, n) = unsafe {
            if width {
                sse2::utf8_run::<true>(data, bmp_classes(), false)
            } else {
                sse2::utf8_run::<false>(data, bmp_classes(), false)
            }
        };
        // Everything but the last partial chunk, ending on a character boundary.
        assert!(
            n + 64 > data.len() && n <= data.len(),
            "{n} of {}",
            data.len()
        );
        let want = tally(&data[..n], Encoding::Utf8);
        assert_eq!(
            (t.lines, t.words, t.chars, t.bytes),
            (want.lines, want.words, want.chars, want.bytes)
        );
        if width {
            assert_eq!(t.max_line(), want.max_line());
            // As `wc -L` in C.UTF-8 (GNU coreutils 9.1) measures the line.
            assert_eq!(t.max_line(), 51);
        }
    }
}

proptest! {
    #[test]
    fn numbers_give_the_tally_back(data in pieces(), utf8 in any::<bool>()) {
        let enc = if utf8 { Encoding::Utf8 } else { Encoding::C };
        let t = tally(&data, enc);
        prop_assert_eq!(Tally::from_numbers(t.to_numbers()), Some(t));
        // What a partial result's reader holds a tally to.
        prop_assert!(t.is_possible(), "{t:?}");
    }
}

#[test]
fn zeros_tally_as_the_bytes_would() {
    for enc in [Encoding::C, Encoding::Utf8, Encoding::Utf8Posix] {
        for n in [1u64, 2, 7, 4096, 100_000] {
            let dense = vec![0u8; n as usize];
            for (before, after) in [
                (&b""[..], &b""[..]),
                (b"ab", b"cd\n"),
                (b"a \xe4", b"\xb8\xad z\t"),
            ] {
                let blocks = [
                    tally_block(before, enc),
                    BlockTally::zeros(n, enc),
                    tally_block(after, enc),
                ];
                let got = fold_blocks(blocks, enc);
                let mut all = before.to_vec();
                all.extend_from_slice(&dense);
                all.extend_from_slice(after);
                let want = tally(&all, enc);
                assert_eq!(
                    (got.lines, got.words, got.chars, got.bytes, got.max_line()),
                    (
                        want.lines,
                        want.words,
                        want.chars,
                        want.bytes,
                        want.max_line()
                    ),
                    "{enc:?} {n} {before:?}"
                );
            }
        }
    }
}
