//! Folds: per-worker state over a job's blocks, merged when the run ends.
//!
//! A command that reduces a file to a value (a count, a tally, a report's tables) states
//! what one worker keeps and how two of those combine, and the engine does the rest: one
//! state per worker, made on the worker's first block and used for every block it takes, so
//! no lock is shared between workers per block; the states merged into the caller's in
//! worker order when the run ends, also when it ends in an error (what was read before the
//! error is kept, as a log report promises).
//!
//! [`Fold`] is for states whose merge does not care which blocks each worker took (sums,
//! counted tables). [`OrderedFold`] is for those that must combine in file order (wc's edge
//! state: inside a word, a split character): each block is reduced to a piece on any
//! worker, and the pieces are pushed in block order, those that arrive early waiting for
//! the ones before them (memory bounded by how far workers run ahead, not by the file).
//!
//! `run_blocks` stays for kernels whose whole state is one shared flag or table
//! ([`crate::FirstK`], `grep -q`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::error::EngineError;
use crate::exec::{execute, next_index, Block, Flow, Job, RunStats, StopCheck};
use crate::plan::Plan;

/// What one worker keeps over the blocks it takes, and how two workers' states combine.
pub trait Fold: Send + Sized {
    /// What every worker reads and nobody changes (patterns, options).
    type Config: Sync;

    /// A worker's state before its first block.
    fn new(config: &Self::Config) -> Self;

    /// Takes one block (its slices, one per region of the job; a zero run's are empty).
    /// [`Flow::Stop`] ends the run for every worker.
    fn block(&mut self, config: &Self::Config, block: &Block, data: &[&[u8]]) -> Flow;

    /// Adds another worker's state to this one.
    fn merge(&mut self, other: Self);

    /// A worker's state after its last block, before the states merge: work that each
    /// state does best on its own (sorting what it gathered), done for every worker's
    /// state at once, each on its own thread, where the merge would do it on one.
    /// Sealing a state twice must be the same as once. Nothing by default.
    fn seal(&mut self, _config: &Self::Config) {}
}

/// Folds every block of `job` into `into`, as `plan` says.
///
/// Each worker keeps its own state (made with [`Fold::new`]); when the run ends they are
/// merged into `into` in worker order, whether it ended well or in an error.
pub fn fold_into<F: Fold>(
    plan: &Plan,
    job: &Job<'_>,
    stop: &dyn StopCheck,
    config: &F::Config,
    into: &mut F,
) -> Result<RunStats, EngineError> {
    // One slot per worker, locked only by that worker (the executor gives each of its
    // workers its own number and calls it for one block at a time): never contended.
    let slots: Vec<Mutex<Option<F>>> = (0..plan.threads.max(1)).map(|_| Mutex::new(None)).collect();
    let result = execute(plan, job, stop, None, &|worker, b, d| {
        let mut slot = slots[worker].lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert_with(|| F::new(config))
            .block(config, b, d)
    });
    let mut states: Vec<F> = slots
        .into_iter()
        .filter_map(|s| s.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect();
    // One thread a state (no more than the run's workers), the first on this one. When a
    // thread cannot start (no memory left for its stack), every state is sealed here
    // after (sealing again does nothing).
    let all_spawned = std::thread::scope(|scope| {
        let Some((first, rest)) = states.split_first_mut() else {
            return true;
        };
        let spawned = rest.iter_mut().all(|s| {
            std::thread::Builder::new()
                .spawn_scoped(scope, || s.seal(config))
                .is_ok()
        });
        first.seal(config);
        spawned
    });
    if !all_spawned {
        for s in &mut states {
            s.seal(config);
        }
    }
    for state in states {
        into.merge(state);
    }
    result
}

/// [`fold_into`] from a fresh state: the folded value and what the run did.
pub fn fold<F: Fold>(
    plan: &Plan,
    job: &Job<'_>,
    stop: &dyn StopCheck,
    config: &F::Config,
) -> Result<(F, RunStats), EngineError> {
    let mut into = F::new(config);
    let stats = fold_into(plan, job, stop, config, &mut into)?;
    Ok((into, stats))
}

/// A fold whose blocks must combine in file order: each block becomes a piece on any
/// worker, and the pieces are pushed into one state in block order.
pub trait OrderedFold: Send + Sized {
    /// What every worker reads and nobody changes.
    type Config: Sync;
    /// One block's result.
    type Piece: Send;

    /// Reduces one block (its slices, one per region; a zero run's are empty) to a piece.
    fn piece(config: &Self::Config, block: &Block, data: &[&[u8]]) -> Self::Piece;

    /// Adds the next piece in file order.
    fn push(&mut self, config: &Self::Config, piece: Self::Piece);
}

/// Folds every block of `job` into `into` in file order, the pieces made in parallel as
/// `plan` says. Pieces that arrive ahead of the next one wait; the rest are pushed at once.
/// When a run stops early, the pieces after a gap are pushed in order at the end.
pub fn fold_ordered<F: OrderedFold>(
    plan: &Plan,
    job: &Job<'_>,
    stop: &dyn StopCheck,
    config: &F::Config,
    into: &mut F,
) -> Result<RunStats, EngineError> {
    struct Order<'f, F: OrderedFold> {
        waiting: BTreeMap<u64, (F::Piece, u64)>,
        next: u64,
        into: &'f mut F,
    }
    let order = Mutex::new(Order {
        waiting: BTreeMap::new(),
        next: 0,
        into,
    });
    let result = execute(plan, job, stop, None, &|_, b, d| {
        let piece = F::piece(config, b, d);
        let after = next_index(b, d, plan.block_size);
        let mut guard = order.lock().unwrap_or_else(|p| p.into_inner());
        let o = &mut *guard;
        o.waiting.insert(b.index, (piece, after));
        while let Some((piece, after)) = o.waiting.remove(&o.next) {
            o.into.push(config, piece);
            o.next = after;
        }
        Flow::Continue
    });
    let o = order.into_inner().unwrap_or_else(|p| p.into_inner());
    for (piece, _) in o.waiting.into_values() {
        o.into.push(config, piece);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{is_zero_run, Region};
    use crate::input::Input;
    use crate::plan::{Access, EngineOptions, Strategy as Read};
    use proptest::prelude::*;
    use std::io::Write;

    /// Sum of bytes and count of blocks: merged in any order.
    #[derive(Default)]
    struct Sum {
        bytes: u64,
        total: u64,
        newlines: u64,
    }

    impl Fold for Sum {
        type Config = u8;
        fn new(_: &u8) -> Self {
            Sum::default()
        }
        fn block(&mut self, nl: &u8, b: &Block, d: &[&[u8]]) -> Flow {
            if is_zero_run(b, d) {
                self.bytes += b.len as u64;
                return Flow::Continue;
            }
            self.bytes += d[0].len() as u64;
            self.total += d[0].iter().map(|&x| u64::from(x)).sum::<u64>();
            self.newlines += d[0].iter().filter(|&&x| x == *nl).count() as u64;
            Flow::Continue
        }
        fn merge(&mut self, o: Self) {
            self.bytes += o.bytes;
            self.total += o.total;
            self.newlines += o.newlines;
        }
    }

    /// The file's bytes rebuilt in order: only right if pieces arrive in file order.
    #[derive(Default)]
    struct Concat(Vec<u8>);

    impl OrderedFold for Concat {
        type Config = ();
        type Piece = Vec<u8>;
        fn piece(_: &(), b: &Block, d: &[&[u8]]) -> Vec<u8> {
            if is_zero_run(b, d) {
                vec![0; b.len]
            } else {
                d[0].to_vec()
            }
        }
        fn push(&mut self, _: &(), piece: Vec<u8>) {
            self.0.extend_from_slice(&piece);
        }
    }

    fn file_of(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f.flush().unwrap();
        f
    }

    /// Folds all of `data` (written to a file) with positional reads on `threads` workers
    /// in blocks of `block` bytes: the value, the run's stats and the plan.
    fn fold_whole<F: Fold<Config = ()>>(
        data: &[u8],
        threads: i64,
        block: usize,
    ) -> (F, RunStats, Plan) {
        let f = file_of(data);
        let input = Input::open(f.path()).unwrap();
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }]);
        let opts = EngineOptions {
            threads: crate::Threads::from_count(threads),
            block_size: Some(block),
            strategy: Read::Pread,
            ..EngineOptions::default()
        };
        let plan = Plan::for_job(&opts, &job, Access::SinglePass);
        let (folded, stats) = fold::<F>(&plan, &job, &(), &()).unwrap();
        (folded, stats, plan)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn a_fold_sees_every_byte_once_at_any_offset_size_and_strategy(
            data in proptest::collection::vec(prop_oneof![Just(b'\n'), any::<u8>()], 0..20_000),
            offset in 0usize..300,
            threads in 1usize..5,
            block in 1usize..5_000,
            strategy in proptest::sample::select(Read::ALL.to_vec()),
            zero_runs in any::<bool>(),
        ) {
            let offset = offset.min(data.len());
            let f = file_of(&data);
            let input = Input::open(f.path()).unwrap();
            let mut job = Job::new(vec![Region { input: &input, offset: offset as u64 }]);
            if zero_runs {
                job = job.with_zero_runs();
            }
            let opts = EngineOptions {
                threads: crate::Threads::Count(threads),
                block_size: Some(block),
                strategy,
                ..EngineOptions::default()
            };
            let plan = Plan::for_job(&opts, &job, Access::SinglePass);
            let (sum, stats) = fold::<Sum>(&plan, &job, &(), &b'\n').unwrap();
            let rest = &data[offset..];
            prop_assert_eq!(sum.bytes, rest.len() as u64);
            prop_assert_eq!(stats.extent.len, rest.len() as u64);
            prop_assert_eq!(sum.total, rest.iter().map(|&x| u64::from(x)).sum::<u64>());
            prop_assert_eq!(sum.newlines, rest.iter().filter(|&&x| x == b'\n').count() as u64);

            let mut cat = Concat::default();
            fold_ordered(&plan, &job, &(), &(), &mut cat).unwrap();
            prop_assert_eq!(&cat.0[..], rest);
        }
    }

    /// A state per worker: with four workers over many blocks, more than one state is made,
    /// and never more than the plan's workers.
    #[test]
    fn each_worker_keeps_its_own_state() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static MADE: AtomicUsize = AtomicUsize::new(0);
        struct Counted(u64);
        impl Fold for Counted {
            type Config = ();
            fn new(_: &()) -> Self {
                MADE.fetch_add(1, Ordering::Relaxed);
                Counted(0)
            }
            fn block(&mut self, _: &(), _: &Block, d: &[&[u8]]) -> Flow {
                self.0 += d[0].len() as u64;
                // Slow enough that every worker gets blocks.
                std::thread::sleep(std::time::Duration::from_micros(200));
                Flow::Continue
            }
            fn merge(&mut self, o: Self) {
                self.0 += o.0;
            }
        }
        let data = vec![7u8; 1 << 20];
        let (c, _, plan) = fold_whole::<Counted>(&data, 4, 4096);
        assert_eq!(c.0, data.len() as u64);
        let made = MADE.load(Ordering::Relaxed);
        // The caller's state, plus one for each worker that took a block.
        assert!(
            made > 2 && made <= 1 + plan.threads,
            "{made} states for {} workers",
            plan.threads
        );
    }

    /// A stop from one block ends the run, and the states made so far are still merged.
    #[test]
    fn a_stop_ends_the_run_and_keeps_what_was_folded() {
        struct UntilX(u64);
        impl Fold for UntilX {
            type Config = ();
            fn new(_: &()) -> Self {
                UntilX(0)
            }
            fn block(&mut self, _: &(), _: &Block, d: &[&[u8]]) -> Flow {
                self.0 += d[0].len() as u64;
                if d[0].contains(&b'X') {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            }
            fn merge(&mut self, o: Self) {
                self.0 += o.0;
            }
        }
        let mut data = vec![b'a'; 64 * 1024];
        data[100] = b'X';
        let (u, stats, _) = fold_whole::<UntilX>(&data, 1, 1024);
        assert!(stats.stopped_early);
        assert_eq!(u.0, 1024);
    }
}
