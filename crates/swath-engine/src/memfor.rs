//! The memory-limited parallel for, and the I/O semaphore taken around reading.
//!
//! [`memory_limited_for`] runs every task once on up to `workers` threads. Each task states
//! its memory need before it runs; tasks are admitted while the needs of the running ones
//! add up to at most the budget (the memory available at the start, or `--memory`), the
//! largest that fits first: in a patcher, memory and time both grow with a file's size, so
//! the long tasks start early. When nothing runs, the largest waiting task runs alone even
//! if it needs more than the whole budget, so one huge task never deadlocks the loop (the
//! seed's "memory limited parallel for").
//!
//! [`IoSemaphore`] bounds the tasks that read at once (1 on a rotational device, 2 on an
//! SSD): a task takes it around its reads and does its computation outside it, so the
//! device is never asked for more streams than it serves well while every core computes.

use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, MutexGuard};

/// A counting semaphore for readers: [`IoSemaphore::read`] waits for a permit and returns a
/// guard that gives it back when dropped.
#[derive(Debug)]
pub struct IoSemaphore {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A permit of an [`IoSemaphore`], returned when dropped.
#[derive(Debug)]
pub struct IoPermit<'a> {
    sem: &'a IoSemaphore,
}

impl IoSemaphore {
    /// A semaphore of `permits` readers (at least one).
    pub fn new(permits: usize) -> IoSemaphore {
        IoSemaphore {
            free: Mutex::new(permits.max(1)),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, usize> {
        self.free.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a permit to read.
    pub fn read(&self) -> IoPermit<'_> {
        let mut free = self.lock();
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        IoPermit { sem: self }
    }
}

impl Drop for IoPermit<'_> {
    fn drop(&mut self) {
        *self.sem.lock() += 1;
        self.sem.freed.notify_one();
    }
}

/// The scheduler's shared state.
struct State<E> {
    /// Waiting tasks as (need, index): the largest that fits is a range query.
    waiting: BTreeSet<(u64, usize)>,
    /// Memory admitted and not yet given back.
    in_use: u64,
    /// Tasks running.
    running: usize,
    /// The first error; once set, nothing more is admitted.
    error: Option<E>,
}

/// Runs `task(i)` once for every `i < needs.len()` on up to `workers` threads, admitting a
/// task only while the needs of the running tasks (`needs[i]` bytes each) fit in `budget`;
/// the largest waiting task that fits goes first, and when nothing runs the largest waiting
/// task runs alone whatever its need. Results come back in index order. The first error
/// stops admission (running tasks finish) and is returned.
pub fn memory_limited_for<R, E, F>(
    needs: &[u64],
    budget: u64,
    workers: usize,
    task: F,
) -> Result<Vec<R>, E>
where
    R: Send,
    E: Send,
    F: Fn(usize) -> Result<R, E> + Sync,
{
    let state = Mutex::new(State {
        waiting: needs.iter().enumerate().map(|(i, &n)| (n, i)).collect(),
        in_use: 0,
        running: 0,
        error: None,
    });
    let changed = Condvar::new();
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..needs.len()).map(|_| None).collect());
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    let workers = workers.max(1).min(needs.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                // Admission: the largest waiting task that fits, or the largest when idle.
                let (need, i) = {
                    let mut st = lock();
                    loop {
                        if st.error.is_some() || st.waiting.is_empty() {
                            return;
                        }
                        // A task over the budget, running alone, admits nobody beside it.
                        let fits = (st.in_use <= budget)
                            .then(|| {
                                let free = budget - st.in_use;
                                st.waiting.range(..=(free, usize::MAX)).next_back().copied()
                            })
                            .flatten();
                        let pick = fits.or_else(|| {
                            (st.running == 0)
                                .then(|| st.waiting.last().copied())
                                .flatten()
                        });
                        if let Some(p) = pick {
                            st.waiting.remove(&p);
                            st.in_use += p.0;
                            st.running += 1;
                            break p;
                        }
                        st = changed.wait(st).unwrap_or_else(|p| p.into_inner());
                    }
                };
                let r = task(i);
                let mut st = lock();
                st.in_use -= need;
                st.running -= 1;
                match r {
                    Ok(v) => results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(v),
                    Err(e) => {
                        if st.error.is_none() {
                            st.error = Some(e);
                        }
                    }
                }
                drop(st);
                changed.notify_all();
            });
        }
    });
    let st = state.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = st.error {
        return Err(e);
    }
    Ok(results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.expect("every task ran"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    /// Records what ran at once: the memory admitted, the tasks running, the order.
    #[derive(Default)]
    struct Probe {
        in_use: AtomicU64,
        peak: AtomicU64,
        running: AtomicUsize,
        peak_running: AtomicUsize,
        order: Mutex<Vec<usize>>,
        overs: Mutex<Vec<(u64, usize)>>,
    }

    impl Probe {
        fn run(&self, i: usize, need: u64, budget: u64) {
            let now = self.in_use.fetch_add(need, Ordering::SeqCst) + need;
            let r = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            self.peak_running.fetch_max(r, Ordering::SeqCst);
            if now > budget {
                self.overs.lock().unwrap().push((now, r));
            }
            self.order.lock().unwrap().push(i);
            std::thread::yield_now();
            self.running.fetch_sub(1, Ordering::SeqCst);
            self.in_use.fetch_sub(need, Ordering::SeqCst);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every task runs once; admitted memory stays within the budget except when a
        /// task larger than the budget runs alone; never more than `workers` at once.
        #[test]
        fn admission_respects_the_budget(
            needs in proptest::collection::vec(0u64..100, 0..60),
            budget in 0u64..250,
            workers in 1usize..6,
        ) {
            let probe = Probe::default();
            let ran = AtomicUsize::new(0);
            let out = memory_limited_for(&needs, budget, workers, |i| -> Result<usize, ()> {
                ran.fetch_add(1, Ordering::SeqCst);
                probe.run(i, needs[i], budget);
                Ok(i * 2)
            }).unwrap();
            prop_assert_eq!(out, (0..needs.len()).map(|i| i * 2).collect::<Vec<_>>());
            prop_assert_eq!(ran.load(Ordering::SeqCst), needs.len());
            let mut order = probe.order.lock().unwrap().clone();
            order.sort_unstable();
            prop_assert_eq!(order, (0..needs.len()).collect::<Vec<_>>());
            prop_assert!(probe.peak_running.load(Ordering::SeqCst) <= workers);
            // Over the budget only with one task running, itself larger than the budget.
            for &(now, running) in probe.overs.lock().unwrap().iter() {
                prop_assert_eq!(running, 1, "{} over {} with {} running", now, budget, running);
                prop_assert!(now > budget);
            }
        }
    }

    #[test]
    fn largest_first_on_one_worker() {
        let needs = [5u64, 50, 7, 30, 30, 1];
        let order = Mutex::new(Vec::new());
        memory_limited_for(&needs, 1000, 1, |i| -> Result<(), ()> {
            order.lock().unwrap().push(i);
            Ok(())
        })
        .unwrap();
        assert_eq!(*order.lock().unwrap(), vec![1, 4, 3, 2, 0, 5]);
    }

    #[test]
    fn a_task_larger_than_the_budget_runs_alone_and_does_not_deadlock() {
        let needs = [10u64, 500, 10, 20, 1000];
        let probe = Probe::default();
        memory_limited_for(&needs, 100, 4, |i| -> Result<(), ()> {
            probe.run(i, needs[i], 100);
            Ok(())
        })
        .unwrap();
        let overs = probe.overs.lock().unwrap();
        assert!(overs.iter().all(|&(_, r)| r == 1), "{overs:?}");
        // The small ones that fit went first; then each giant alone, the largest first.
        assert_eq!(probe.order.lock().unwrap()[3..], [4, 1]);
    }

    #[test]
    fn the_first_error_stops_admission_and_is_returned() {
        let needs = vec![1u64; 200];
        let ran = AtomicUsize::new(0);
        let r = memory_limited_for(&needs, 1, 3, |i| {
            ran.fetch_add(1, Ordering::SeqCst);
            if i == 150 {
                Err(format!("task {i} failed"))
            } else {
                Ok(i)
            }
        });
        assert_eq!(r.unwrap_err(), "task 150 failed");
        // Equal needs run from the highest index down: 150 is the 50th, and one task at a
        // time fits, so nothing after it started.
        assert_eq!(ran.load(Ordering::SeqCst), 50);
    }

    #[test]
    fn the_semaphore_bounds_readers() {
        let sem = IoSemaphore::new(2);
        let inside = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let needs = vec![0u64; 64];
        memory_limited_for(&needs, 0, 6, |_| -> Result<(), ()> {
            let _p = sem.read();
            let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(n, Ordering::SeqCst);
            std::thread::yield_now();
            inside.fetch_sub(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
        assert!(peak.load(Ordering::SeqCst) <= 2);
        assert!(peak.load(Ordering::SeqCst) >= 1);
    }
}
