//! Line numbers for byte positions: newlines before each position, counted in parallel.

use std::sync::atomic::{AtomicU64, Ordering};

use swath_engine::source::Span;
use swath_engine::{is_zero_run, run_blocks, EngineError, Flow, Plan};
use swath_kernels::count::count_byte;

/// Blocks the newline count is cut into at most.
const MAX_BLOCKS: u64 = 1 << 16;

/// For each of `positions` (sorted ascending, relative to the start of `from`), the number
/// of newlines in `from` before it. Reads only up to the largest position (`from`'s limit
/// is not looked at: the positions are inside it).
pub fn newlines_before(
    plan: &Plan,
    from: Span<'_>,
    positions: &[u64],
) -> Result<Vec<u64>, EngineError> {
    debug_assert!(positions.windows(2).all(|w| w[0] <= w[1]));
    let Some(&last) = positions.last() else {
        return Ok(Vec::new());
    };
    if last == 0 {
        return Ok(vec![0; positions.len()]);
    }
    // At most MAX_BLOCKS blocks, whatever the plan's block size: the counts kept per block
    // must not grow with the number of blocks (`cmp --block-size 1` kept 16 bytes a byte).
    let bs = (plan.block_size as u64).max(last.div_ceil(MAX_BLOCKS));
    let plan = &Plan {
        block_size: bs as usize,
        ..plan.clone()
    };
    let n_blocks = last.div_ceil(bs) as usize;
    let per_block: Vec<AtomicU64> = (0..n_blocks).map(|_| AtomicU64::new(0)).collect();
    let partial: Vec<AtomicU64> = positions.iter().map(|_| AtomicU64::new(0)).collect();
    // Holes hold no newline: zero runs leave their counts at 0, nothing read.
    let job = Span {
        limit: Some(last),
        ..from
    }
    .job()
    .with_zero_runs();
    run_blocks(plan, &job, &(), |block, data| {
        if is_zero_run(block, data) {
            return Flow::Continue;
        }
        let data = data[0];
        let end = block.start + block.len as u64;
        // Positions inside this block get the newlines from the block start up to them.
        let first = positions.partition_point(|&p| p < block.start);
        let mut counted_to = 0usize;
        let mut running = 0u64;
        for (i, &p) in positions.iter().enumerate().skip(first) {
            // A position at the very end of the job belongs to the last block.
            if p > end || (p == end && end != last) {
                break;
            }
            let upto = (p - block.start) as usize;
            running += count_byte(&data[counted_to..upto], b'\n');
            counted_to = upto;
            partial[i].store(running, Ordering::Relaxed);
        }
        running += count_byte(&data[counted_to..], b'\n');
        per_block[block.index as usize].store(running, Ordering::Relaxed);
        Flow::Continue
    })?;
    let mut prefix = Vec::with_capacity(n_blocks + 1);
    let mut sum = 0u64;
    prefix.push(0);
    for c in &per_block {
        sum += c.load(Ordering::Relaxed);
        prefix.push(sum);
    }
    Ok(positions
        .iter()
        .zip(&partial)
        .map(|(&p, part)| {
            let b = (p / bs) as usize;
            if b >= n_blocks {
                prefix[n_blocks]
            } else {
                prefix[b] + part.load(Ordering::Relaxed)
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;
    use swath_engine::{Input, Layout, Method};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn matches_naive_count(
            data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'a')], 0..3000),
            mut positions in proptest::collection::vec(0u64..3100, 0..8),
            bs in 1usize..700,
            threads in 1usize..4,
            mmap in any::<bool>(),
            offset in 0u64..20,
        ) {
            let mut f = tempfile::NamedTempFile::new().unwrap();
            f.write_all(&data).unwrap();
            let input = Input::open(f.path()).unwrap();
            let avail = (data.len() as u64).saturating_sub(offset);
            positions.iter_mut().for_each(|p| *p = (*p).min(avail));
            positions.sort();
            let plan = Plan {
                method: if mmap { Method::Mmap } else { Method::Pread },
                threads,
                block_size: bs,
                layout: Layout::Dynamic,
                reason: "".into(),
            };
            let got = newlines_before(&plan, Span { input: &input, offset, limit: None }, &positions).unwrap();
            let region = &data[(offset as usize).min(data.len())..];
            let want: Vec<u64> = positions
                .iter()
                .map(|&p| region[..p as usize].iter().filter(|&&b| b == b'\n').count() as u64)
                .collect();
            prop_assert_eq!(got, want);
        }
    }
}
