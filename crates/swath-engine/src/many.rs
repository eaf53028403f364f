//! Many inputs at once: whole-file parallelism with results in argument order.
//!
//! Small files are not worth splitting: each is processed whole by one worker of a pool, several
//! at a time, while the calling thread consumes results strictly in item order. Items not
//! given to the pool (big files, standard input) run on the calling thread when their turn
//! comes, so they can use every core inside the file; meanwhile the pool keeps working on the
//! small files after them, up to a bounded window, so a mix of big and small files keeps every
//! core busy without holding unbounded results in memory.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use crate::exec::Flow;

/// Pooled items a worker may finish ahead of the consumer.
pub const AHEAD: usize = 256;

/// Pooled items a worker takes at once (consecutive ones, results handed over together).
const CHUNK: usize = 16;

/// Runs `work(i, pooled)` for every item `i < pooled.len()` and hands each result to
/// `consume(i, result)` in item order. Items with `pooled[i]` run on `workers` pool threads
/// (when there are at least two such items and `workers > 0`); the others run on the calling
/// thread. `consume` returning [`Flow::Stop`] ends the run: no new item starts, and results
/// not yet consumed are dropped. Returns the number of items consumed.
pub fn run_many<T, W, C>(pooled: &[bool], workers: usize, work: W, mut consume: C) -> usize
where
    T: Send,
    W: Fn(usize, bool) -> T + Sync,
    C: FnMut(usize, T) -> Flow,
{
    let jobs: Vec<usize> = (0..pooled.len()).filter(|&i| pooled[i]).collect();
    let workers = if jobs.len() > 1 { workers } else { 0 };
    let results: Mutex<BTreeMap<usize, T>> = Mutex::new(BTreeMap::new());
    let ready = Condvar::new();
    let cursor = AtomicUsize::new(0);
    let consumed = Mutex::new(0usize);
    let moved = Condvar::new();
    let stop = AtomicBool::new(false);
    let lock = || results.lock().unwrap_or_else(|p| p.into_inner());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                // A few items at a time, their results handed over together: with many
                // small files, one hand-over (a wake-up of the consumer) per file cost more
                // than searching it.
                let k = cursor.fetch_add(CHUNK, Ordering::Relaxed);
                let Some(&first) = jobs.get(k) else { break };
                {
                    let mut done = consumed.lock().unwrap_or_else(|p| p.into_inner());
                    while first > *done + AHEAD && !stop.load(Ordering::Relaxed) {
                        done = moved.wait(done).unwrap_or_else(|p| p.into_inner());
                    }
                }
                let mut out = Vec::with_capacity(CHUNK);
                for &i in &jobs[k..(k + CHUNK).min(jobs.len())] {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    out.push((i, work(i, true)));
                }
                if out.is_empty() {
                    break;
                }
                lock().extend(out);
                ready.notify_all();
            });
        }
        let mut n = 0;
        for (i, &p) in pooled.iter().enumerate() {
            let r = if workers > 0 && p {
                let mut done = lock();
                loop {
                    if let Some(r) = done.remove(&i) {
                        break r;
                    }
                    done = ready.wait(done).unwrap_or_else(|p| p.into_inner());
                }
            } else {
                work(i, false)
            };
            n += 1;
            let flow = consume(i, r);
            *consumed.lock().unwrap_or_else(|p| p.into_inner()) = i + 1;
            if (i + 1) % CHUNK == 0 {
                // Workers held back by the window wait for many items, not one.
                moved.notify_all();
            }
            if flow == Flow::Stop {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let _guard = consumed.lock().unwrap_or_else(|p| p.into_inner());
        moved.notify_all();
        n
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_order_whatever_the_mix() {
        for workers in [0, 1, 2, 5] {
            for pattern in [0u32, 1, 2, 3] {
                let pooled: Vec<bool> = (0..700u32).map(|i| (i * 7 + pattern) % 4 != 0).collect();
                let mut seen = Vec::new();
                let n = run_many(
                    &pooled,
                    workers,
                    |i, on_pool| {
                        if workers > 0 {
                            assert_eq!(on_pool, pooled[i]);
                        }
                        i * 3
                    },
                    |i, r| {
                        seen.push((i, r));
                        Flow::Continue
                    },
                );
                assert_eq!(n, 700);
                let want: Vec<(usize, usize)> = (0..700).map(|i| (i, i * 3)).collect();
                assert_eq!(seen, want, "workers {workers}");
            }
        }
    }

    #[test]
    fn stop_ends_the_run_and_starts_nothing_far_ahead() {
        let started = AtomicUsize::new(0);
        let pooled = vec![true; 10_000];
        let n = run_many(
            &pooled,
            2,
            |i, _| {
                started.fetch_add(1, Ordering::Relaxed);
                i
            },
            |i, _| if i == 9 { Flow::Stop } else { Flow::Continue },
        );
        assert_eq!(n, 10);
        assert!(started.load(Ordering::Relaxed) <= 10 + AHEAD + 2 * CHUNK);
    }
}
