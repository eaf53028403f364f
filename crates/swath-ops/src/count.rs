//! Counting lines, words, characters, bytes and the longest line of one input (wc), on all
//! cores: blocks are tallied in any order and folded in file order (the engine's
//! [`swath_engine::fold`]). The holes of a sparse
//! file come as zero runs and are tallied from their length alone.

use swath_engine::source::Span;
use swath_engine::{
    fold, fold_ordered, is_zero_run, Access, Block, EngineError, EngineOptions, Flow, Fold,
    OrderedFold, Plan, RunStats,
};
use swath_kernels::wc::{tally_block, tally_block_no_width, BlockTally, Encoding, Folder, Tally};

/// What a count needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Lines and bytes only: newlines counted with the vectorised byte counter.
    Lines,
    /// Everything but the longest line: plain ASCII blocks take a vectorised path.
    NoWidth,
    /// Everything (words, characters, the longest line).
    All,
}

/// Counts the bytes of `span` (all of an input, from its current position for standard
/// input; or a piece of a partial result), adding the bytes read to `progress` as blocks
/// are counted.
pub fn count(
    span: Span<'_>,
    enc: Encoding,
    need: Need,
    opts: &EngineOptions,
    progress: Option<&std::sync::atomic::AtomicU64>,
) -> Result<(Tally, Plan, RunStats), EngineError> {
    let job = span.job().with_zero_runs().with_progress(progress);
    let plan = Plan::for_job(opts, &job, Access::SinglePass);
    if need == Need::Lines {
        let (lines, stats) = fold::<Lines>(&plan, &job, &(), &())?;
        let t = Tally::lines_and_bytes(lines.0, stats.extent.len);
        return Ok((t, plan, stats));
    }
    let mut tallies = Tallies(Folder::new(enc));
    let stats = fold_ordered(&plan, &job, &(), &(enc, need), &mut tallies)?;
    Ok((tallies.0.finish(), plan, stats))
}

/// wc's blocks tallied in any order and folded in file order (a tally's edge state, inside
/// a word or a split character, joins the next block's).
struct Tallies(Folder);

impl OrderedFold for Tallies {
    type Config = (Encoding, Need);
    type Piece = BlockTally;

    fn piece(&(enc, need): &(Encoding, Need), b: &Block, d: &[&[u8]]) -> BlockTally {
        if is_zero_run(b, d) {
            BlockTally::zeros(b.len as u64, enc)
        } else if need == Need::NoWidth {
            tally_block_no_width(d[0], enc)
        } else {
            tally_block(d[0], enc)
        }
    }

    fn push(&mut self, _: &(Encoding, Need), piece: BlockTally) {
        self.0.push(piece);
    }
}

/// Newlines counted in any order (`wc -l`): a zero run holds none.
struct Lines(u64);

impl Fold for Lines {
    type Config = ();

    fn new(_: &()) -> Self {
        Lines(0)
    }

    fn block(&mut self, _: &(), _: &Block, d: &[&[u8]]) -> Flow {
        self.0 += d
            .first()
            .map_or(0, |d| swath_kernels::count::count_byte(d, b'\n'));
        Flow::Continue
    }

    fn merge(&mut self, other: Self) {
        self.0 += other.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;
    use swath_engine::Input;
    use swath_engine::{Layout, Strategy};
    use swath_kernels::wc::tally;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn every_plan_counts_like_one_pass(
            data in proptest::collection::vec(prop_oneof![
                Just(b'a'), Just(b' '), Just(b'\n'), Just(b'\t'), Just(0xe4u8), Just(0xb8u8), Just(0xadu8), Just(0xffu8), Just(0x01u8)
            ], 0..5000),
            threads in -1i64..4,
            bs in 1usize..300,
            strategy in prop_oneof![Just(Strategy::Auto), Just(Strategy::Read), Just(Strategy::Pread), Just(Strategy::Mmap)],
            stripes in any::<bool>(),
            utf8 in any::<bool>(),
        ) {
            let mut f = tempfile::NamedTempFile::new().unwrap();
            f.write_all(&data).unwrap();
            let input = Input::open(f.path()).unwrap();
            let enc = if utf8 { Encoding::Utf8 } else { Encoding::C };
            let opts = EngineOptions {
                threads: swath_engine::Threads::from_count(threads),
                block_size: Some(bs),
                strategy,
                layout: if stripes { Layout::Stripes } else { Layout::Dynamic },
            };
            let (t, _, _) = count(Span::whole(&input), enc, Need::All, &opts, None).unwrap();
            let w = tally(&data, enc);
            prop_assert_eq!(
                (t.lines, t.words, t.chars, t.bytes, t.max_line()),
                (w.lines, w.words, w.chars, w.bytes, w.max_line())
            );
            let input = Input::open(f.path()).unwrap();
            let (l, _, _) = count(Span::whole(&input), enc, Need::Lines, &opts, None).unwrap();
            prop_assert_eq!((l.lines, l.bytes), (w.lines, w.bytes));
            let input = Input::open(f.path()).unwrap();
            let (n, _, _) = count(Span::whole(&input), enc, Need::NoWidth, &opts, None).unwrap();
            prop_assert_eq!((n.lines, n.words, n.chars, n.bytes), (w.lines, w.words, w.chars, w.bytes));
        }

        #[test]
        fn holes_count_as_the_same_bytes_written_densely(
            layout in proptest::collection::vec((any::<bool>(), 1usize..5, 0usize..4), 0..7),
            tail in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b' '), Just(0xe4u8)], 0..50),
            threads in -1i64..3,
            bs_pages in 1usize..3,
            strategy in prop_oneof![Just(Strategy::Auto), Just(Strategy::Read), Just(Strategy::Pread), Just(Strategy::Mmap)],
            utf8 in any::<bool>(),
        ) {
            use std::os::unix::fs::FileExt;
            // Pages of text and pages of holes; the text ends in a split character at times.
            let f = tempfile::NamedTempFile::new().unwrap();
            let mut dense = Vec::new();
            for &(hole, pages, kind) in &layout {
                let n = pages * 4096;
                if hole {
                    dense.resize(dense.len() + n, 0);
                    continue;
                }
                let unit: &[u8] = [&b"ab c\n"[..], "\u{4e2d} x".as_bytes(), b"\tw\xe4", b"\0z "][kind];
                let bytes: Vec<u8> = unit.iter().copied().cycle().take(n).collect();
                f.as_file().write_all_at(&bytes, dense.len() as u64).unwrap();
                dense.extend_from_slice(&bytes);
            }
            f.as_file().write_all_at(&tail, dense.len() as u64).unwrap();
            dense.extend_from_slice(&tail);
            f.as_file().set_len(dense.len() as u64).unwrap();
            let enc = if utf8 { Encoding::Utf8 } else { Encoding::C };
            let opts = EngineOptions {
                threads: swath_engine::Threads::from_count(threads),
                block_size: Some(bs_pages * 4096),
                strategy,
                layout: Layout::Dynamic,
            };
            let w = tally(&dense, enc);
            for need in [Need::All, Need::NoWidth, Need::Lines] {
                let input = Input::open(f.path()).unwrap();
                let (t, _, _) = count(Span::whole(&input), enc, need, &opts, None).unwrap();
                prop_assert_eq!((t.lines, t.bytes), (w.lines, w.bytes));
                if need != Need::Lines {
                    prop_assert_eq!((t.words, t.chars), (w.words, w.chars));
                }
                if need == Need::All {
                    prop_assert_eq!(t.max_line(), w.max_line());
                }
            }
        }
    }
}
