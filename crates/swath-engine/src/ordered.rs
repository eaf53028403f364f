//! Ordered merge: per-block results computed in parallel, consumed in file order.
//!
//! Workers run `produce` on their blocks and send the results to the calling thread, which
//! holds them in a reorder buffer and hands them to `consume` strictly in block order. A gate
//! keeps workers at most `window` blocks ahead of the consumer, so memory stays bounded however
//! much output a job makes, and `consume` can end the whole run ([`Flow::Stop`]) when it has
//! what it needs (`-m NUM`, a write error on stdout). On the sequential path the two steps run
//! back to back on one thread.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

use crate::error::EngineError;
use crate::exec::{execute, next_index, Block, Flow, Job, RunStats};
use crate::plan::{Method, Plan};

struct Window {
    emitted: Mutex<u64>,
    moved: Condvar,
    aborted: AtomicBool,
    size: u64,
}

impl Window {
    fn admit(&self, index: u64) -> bool {
        let mut emitted = self.emitted.lock().unwrap_or_else(|p| p.into_inner());
        while index >= *emitted + self.size {
            if self.aborted.load(Ordering::Relaxed) {
                return false;
            }
            emitted = self.moved.wait(emitted).unwrap_or_else(|p| p.into_inner());
        }
        !self.aborted.load(Ordering::Relaxed)
    }

    fn advance(&self, to: u64) {
        *self.emitted.lock().unwrap_or_else(|p| p.into_inner()) = to;
        self.moved.notify_all();
    }

    fn abort(&self) {
        self.aborted.store(true, Ordering::Relaxed);
        let _guard = self.emitted.lock().unwrap_or_else(|p| p.into_inner());
        self.moved.notify_all();
    }
}

/// Runs `produce` on every block in parallel and `consume` on the results in block order.
///
/// `window` bounds the blocks in flight ahead of the consumer (at least one per thread).
pub fn run_ordered<R, P, C>(
    plan: &Plan,
    job: &Job<'_>,
    window: usize,
    produce: P,
    mut consume: C,
) -> Result<RunStats, EngineError>
where
    R: Send,
    P: Fn(&Block, &[&[u8]]) -> R + Sync,
    C: FnMut(&Block, R) -> Flow + Send,
{
    let stop = AtomicBool::new(false);
    if plan.method == Method::Read || plan.threads <= 1 || job.known_len().is_none() {
        let consume = Mutex::new(consume);
        return execute(plan, job, &stop, None, &|_, b, d| {
            let r = produce(b, d);
            let mut c = consume.lock().unwrap_or_else(|p| p.into_inner());
            (c)(b, r)
        });
    }
    let win = Window {
        emitted: Mutex::new(0),
        moved: Condvar::new(),
        aborted: AtomicBool::new(false),
        size: window.max(plan.threads * 2) as u64,
    };
    // Each result with the number of the block after it (past a zero run's blocks).
    let (tx, rx) = mpsc::channel::<(Block, R, u64)>();
    std::thread::scope(|s| {
        let runner = s.spawn(|| {
            let tx = tx;
            let gate = |i: u64| win.admit(i);
            let result = execute(plan, job, &stop, Some(&gate), &|_, b, d| {
                let r = produce(b, d);
                let after = next_index(b, d, plan.block_size);
                // A closed channel means the consumer stopped; the stop flag ends the run.
                let _ = tx.send((*b, r, after));
                Flow::Continue
            });
            win.abort();
            result
        });
        let mut pending: BTreeMap<u64, (Block, R, u64)> = BTreeMap::new();
        let mut next = 0u64;
        let mut stopped = false;
        'recv: for (b, r, after) in rx.iter() {
            pending.insert(b.index, (b, r, after));
            while let Some((b, r, after)) = pending.remove(&next) {
                next = after;
                if consume(&b, r) == Flow::Stop {
                    stopped = true;
                    break 'recv;
                }
                win.advance(next);
            }
        }
        if stopped {
            stop.store(true, Ordering::Relaxed);
            win.abort();
        }
        drop(rx);
        let mut stats = runner.join().expect("engine worker panicked")?;
        stats.stopped_early |= stopped;
        Ok(stats)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Region;
    use crate::input::Input;
    use crate::plan::Layout;
    use std::io::Write;

    #[test]
    fn consumes_in_order_for_every_plan() {
        let data: Vec<u8> = (0..50_000u32).map(|i| (i % 253) as u8).collect();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&data).unwrap();
        for method in [Method::Read, Method::Pread, Method::Mmap] {
            for threads in [1, 2, 4] {
                for layout in [Layout::Dynamic, Layout::Stripes, Layout::Ranges] {
                    let input = Input::open(f.path()).unwrap();
                    let job = Job::new(vec![Region {
                        input: &input,
                        offset: 0,
                    }]);
                    let plan = Plan {
                        method,
                        threads,
                        block_size: 333,
                        layout,
                        reason: "".into(),
                    };
                    let mut out = Vec::new();
                    run_ordered(
                        &plan,
                        &job,
                        3,
                        |_, d| d[0].to_vec(),
                        |_, r| {
                            out.extend_from_slice(&r);
                            Flow::Continue
                        },
                    )
                    .unwrap();
                    assert_eq!(out, data, "{method:?} {threads} {layout:?}");
                }
            }
        }
    }

    #[test]
    fn consumer_stop_ends_the_run() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![1u8; 1 << 20]).unwrap();
        let input = Input::open(f.path()).unwrap();
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }]);
        let plan = Plan {
            method: Method::Pread,
            threads: 2,
            block_size: 1024,
            layout: Layout::Dynamic,
            reason: "".into(),
        };
        let mut seen = 0;
        let stats = run_ordered(
            &plan,
            &job,
            4,
            |b, _| b.index,
            |_, i| {
                assert_eq!(i, seen);
                seen += 1;
                if i == 10 {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            },
        )
        .unwrap();
        assert_eq!(seen, 11);
        assert!(stats.stopped_early);
        assert!(stats.blocks < 40, "blocks {}", stats.blocks);
    }
}
