//! Many inputs at once: whole-file parallelism with results in argument order.
//!
//! Small files are not worth splitting: each is processed whole by one worker of a pool, several
//! at a time, while the calling thread consumes results strictly in item order. Items not
//! given to the pool (big files, standard input) run on the calling thread when their turn
//! comes, so they can use every core inside the file; meanwhile the pool keeps working on the
//! small files after them, up to a bounded window, so a mix of big and small files keeps every
//! core busy without holding unbounded results in memory.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use crate::exec::Flow;

/// Files named on a command line smaller than this are processed whole by one worker of the
/// pool, several at once (wc, grep); bigger ones on all cores, one at a time, when their turn
/// comes. Below it, spreading one file over every core costs more (a plan, a residency
/// sample, threads or a map) than it saves.
pub const SMALL_FILE: u64 = 4 << 20;

/// True when `path` names a regular file smaller than [`SMALL_FILE`] (following links, as
/// opening it will): one to give to the pool whole.
pub fn is_small_file(path: impl AsRef<std::path::Path>) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() < SMALL_FILE)
}

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

/// Items [`run_fed`]'s producer may have queued and not yet taken by a worker: a walk
/// finding files faster than they are searched waits there, so the queue's memory stays
/// bounded and the directories its entries hold open stay few (each entry opens its file
/// beneath its own directory, one name looked up, rather than from the walk's root).
const QUEUED: usize = 1024;

/// How far [`run_fed`]'s workers may run ahead of the consumer.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Items past the last one consumed.
    pub items: usize,
    /// Total weight of the results waiting to be consumed.
    pub bytes: usize,
}

/// Runs items that `produce` feeds while the run goes on (the files a directory walk finds,
/// searched while the walk continues), handing each result to `consume` in feeding order.
///
/// `produce` runs on the calling thread and calls `feed(item, pooled)` for each item, in
/// order; `feed` returns false once the run has stopped (the producer should stop too).
/// `workers` pool threads take pooled items a few at a time and run `work(i, &item, true)`;
/// an item not pooled (a big file, standard input) runs as `work(i, &item, false)` when its
/// turn comes; with fewer than two pooled items no thread is started at all, and every
/// item runs on the calling thread as not pooled. `consume(i, item, result)` is called in
/// item order, one call at a time, by
/// whichever worker completes the run of results up to that item: no thread waits to hand
/// results over, so a run of many small items costs no wake-ups. A worker starts no item
/// more than `window.items` past the last one consumed, nor (unless it is next) while the
/// results waiting weigh more than `window.bytes` (`weight` of each): memory stays bounded,
/// and one slow item (a big file) does not stop the others for long. `consume` returning
/// [`Flow::Stop`] ends the run: no new item starts, and results not yet consumed are
/// dropped. Returns the number of items consumed.
pub fn run_fed<I, T, P, W, C>(
    workers: usize,
    window: Window,
    weight: fn(&T) -> usize,
    produce: P,
    work: W,
    consume: C,
) -> usize
where
    I: Send,
    T: Send,
    P: FnOnce(&mut dyn FnMut(I, bool) -> bool),
    W: Fn(usize, &I, bool) -> T + Sync,
    C: FnMut(usize, I, T) -> Flow + Send,
{
    let workers = workers.max(1);
    let fed = Fed {
        queue: Mutex::new(Queue {
            items: VecDeque::new(),
            done: false,
        }),
        fed: Condvar::new(),
        drained: Condvar::new(),
        full: AtomicBool::new(false),
        idle: AtomicUsize::new(0),
        held: AtomicUsize::new(0),
        commit: Mutex::new(Commit {
            next: 0,
            pending: VecDeque::new(),
            consume,
        }),
        moved: Condvar::new(),
        next: AtomicUsize::new(0),
        waiting_bytes: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        window,
        weight,
    };
    // `inline`: the calling thread doing every item itself (no pool), each as not pooled.
    let worker = |inline: bool| {
        while let Some(batch) = fed.take() {
            fed.wait_for_window(batch[0].0);
            let mut done = Vec::with_capacity(batch.len());
            for (i, item, pooled) in batch {
                if fed.stopped() {
                    return;
                }
                let r = (pooled && !inline).then(|| work(i, &item, true));
                done.push((i, item, r));
            }
            if !fed.commit(done, &work) {
                return;
            }
        }
    };
    std::thread::scope(|scope| {
        let worker = &worker;
        // The pool starts with the second pooled item: one file, or standard input alone,
        // runs on the calling thread with no threads (nor their memory) started.
        let (mut pooled_seen, mut started) = (0usize, false);
        let mut n = 0usize;
        let mut local: Vec<(usize, I, bool)> = Vec::with_capacity(CHUNK);
        produce(&mut |item, pooled| {
            if fed.stopped() {
                return false;
            }
            pooled_seen += usize::from(pooled);
            if pooled_seen == 2 && !started {
                started = true;
                for _ in 0..workers {
                    scope.spawn(move || worker(false));
                }
            }
            local.push((n, item, pooled));
            n += 1;
            // In batches, and at once while workers wait.
            if local.len() >= CHUNK || fed.idle.load(Ordering::Relaxed) > 0 {
                fed.flush(&mut local, false, started);
            }
            true
        });
        fed.flush(&mut local, true, false);
        if !started {
            worker(true);
        }
    });
    fed.commit
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .next
}

/// Items fed and not yet taken by a worker.
struct Queue<I> {
    items: VecDeque<(usize, I, bool)>,
    done: bool,
}

/// Results waiting for their turn, and the consumer.
struct Commit<I, T, C> {
    next: usize,
    /// Slot `k` holds item `next + k` (a ring, not a map: no node allocated and no entries
    /// shifted per item of a tree's many files).
    pending: VecDeque<Option<(I, Option<T>)>>,
    consume: C,
}

/// What [`run_fed`]'s producer, workers and consumer share.
struct Fed<I, T, C> {
    queue: Mutex<Queue<I>>,
    /// Items were fed (or the feeding ended, or the run stopped).
    fed: Condvar,
    /// The producer waiting for the queue to drain below half of [`QUEUED`].
    drained: Condvar,
    full: AtomicBool,
    /// Workers waiting for items, and for the consumer to move (notified only when some
    /// are: a notification is a system call).
    idle: AtomicUsize,
    held: AtomicUsize,
    commit: Mutex<Commit<I, T, C>>,
    moved: Condvar,
    /// The next item to consume, as last published.
    next: AtomicUsize,
    waiting_bytes: AtomicUsize,
    stop: AtomicBool,
    window: Window,
    weight: fn(&T) -> usize,
}

impl<I, T, C: FnMut(usize, I, T) -> Flow> Fed<I, T, C> {
    fn lock_queue(&self) -> std::sync::MutexGuard<'_, Queue<I>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_commit(&self) -> std::sync::MutexGuard<'_, Commit<I, T, C>> {
        self.commit.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Ends the run: no new item starts, and everyone waiting wakes.
    fn halt(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let q = self.lock_queue();
        self.fed.notify_all();
        self.drained.notify_all();
        drop(q);
        self.moved.notify_all();
    }

    /// The next items to run, up to [`CHUNK`], waiting for some to be fed; `None` once the
    /// feeding is over and the queue empty, or the run stopped.
    fn take(&self) -> Option<Vec<(usize, I, bool)>> {
        let mut q = self.lock_queue();
        loop {
            if self.stopped() {
                return None;
            }
            if !q.items.is_empty() {
                let n = q.items.len().min(CHUNK);
                let batch = q.items.drain(..n).collect();
                if q.items.len() < QUEUED / 2 && self.full.load(Ordering::Relaxed) {
                    self.drained.notify_one();
                }
                return Some(batch);
            }
            if q.done {
                return None;
            }
            self.idle.fetch_add(1, Ordering::SeqCst);
            q = self.fed.wait(q).unwrap_or_else(|p| p.into_inner());
            self.idle.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Waits while a batch starting at item `first` lies past the window. The batch holding
    /// the next item to consume never waits: the window cannot close on the work that
    /// would open it.
    fn wait_for_window(&self, first: usize) {
        let window = self.window;
        let far = |next: usize| {
            first > next + window.items
                || (first > next && self.waiting_bytes.load(Ordering::SeqCst) > window.bytes)
        };
        if far(self.next.load(Ordering::Relaxed)) {
            let mut c = self.lock_commit();
            while far(c.next) && !self.stopped() {
                self.held.fetch_add(1, Ordering::SeqCst);
                c = self.moved.wait(c).unwrap_or_else(|p| p.into_inner());
                self.held.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// Puts a batch's results in their slots, then consumes every result whose turn has
    /// come (running an item that was not pooled, `work(i, &item, false)`, in its turn).
    /// False when the consumer stopped the run.
    fn commit<W>(&self, done: Vec<(usize, I, Option<T>)>, work: &W) -> bool
    where
        W: Fn(usize, &I, bool) -> T,
    {
        let mut c = self.lock_commit();
        for (i, item, r) in done {
            self.waiting_bytes
                .fetch_add(r.as_ref().map_or(0, self.weight), Ordering::SeqCst);
            // Items are numbered from `next` on: none below it is still running.
            let k = i - c.next;
            if c.pending.len() <= k {
                c.pending.resize_with(k + 1, || None);
            }
            c.pending[k] = Some((item, r));
        }
        let before = c.next;
        loop {
            let i = c.next;
            let Some(Some((item, r))) = c.pending.front_mut().map(Option::take) else {
                break;
            };
            c.pending.pop_front();
            let r = match r {
                Some(r) => {
                    self.waiting_bytes
                        .fetch_sub((self.weight)(&r), Ordering::SeqCst);
                    r
                }
                None => work(i, &item, false),
            };
            let flow = (c.consume)(i, item, r);
            c.next = i + 1;
            self.next.store(i + 1, Ordering::Relaxed);
            if flow == Flow::Stop {
                drop(c);
                self.halt();
                return false;
            }
        }
        if c.next != before && self.held.load(Ordering::SeqCst) > 0 {
            self.moved.notify_all();
        }
        true
    }

    /// Hands the producer's local items to the workers (`done`: the feeding is over).
    /// `wait`: the pool is running, so a full queue drains; the producer waits for it.
    fn flush(&self, local: &mut Vec<(usize, I, bool)>, done: bool, wait: bool) {
        let mut q = self.lock_queue();
        q.items.extend(local.drain(..));
        q.done |= done;
        if done || self.idle.load(Ordering::SeqCst) > 0 {
            self.fed.notify_all();
        }
        if wait && q.items.len() >= QUEUED {
            self.full.store(true, Ordering::Relaxed);
            while q.items.len() >= QUEUED / 2 && !self.stopped() {
                q = self.drained.wait(q).unwrap_or_else(|p| p.into_inner());
            }
            self.full.store(false, Ordering::Relaxed);
        }
    }
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
    fn fed_results_arrive_in_order_whatever_the_mix() {
        for workers in [1, 2, 5] {
            for pattern in [0u32, 1, 2, 3] {
                let pooled = |i: u32| !(i * 7 + pattern).is_multiple_of(4);
                let mut seen = Vec::new();
                let on_pool_right = AtomicBool::new(true);
                let n = run_fed(
                    workers,
                    Window {
                        items: AHEAD,
                        bytes: 64,
                    },
                    |r: &u32| (*r % 5) as usize,
                    |feed| {
                        for i in 0..700u32 {
                            // Now and then the producer is slower than the workers.
                            if i % 97 == 0 {
                                std::thread::yield_now();
                            }
                            assert!(feed(i, pooled(i)));
                        }
                    },
                    |i, &item, on_pool| {
                        if on_pool != pooled(item) || i != item as usize {
                            on_pool_right.store(false, Ordering::Relaxed);
                        }
                        item * 3
                    },
                    |i, item, r| {
                        seen.push((i, item, r));
                        Flow::Continue
                    },
                );
                assert_eq!(n, 700);
                assert!(on_pool_right.load(Ordering::Relaxed));
                let want: Vec<(usize, u32, u32)> =
                    (0..700).map(|i| (i as usize, i, i * 3)).collect();
                assert_eq!(seen, want, "workers {workers}");
            }
        }
    }

    #[test]
    fn a_producer_faster_than_the_workers_waits_for_them() {
        // Items alive at once (fed and not yet consumed), counted by their drops.
        struct Alive<'a>(&'a AtomicUsize);
        impl<'a> Alive<'a> {
            fn new(live: &'a AtomicUsize, most: &'a AtomicUsize) -> Self {
                let now = live.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                Alive(live)
            }
        }
        impl Drop for Alive<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let (live, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let items = 20 * QUEUED;
        let window = Window {
            items: 64,
            bytes: usize::MAX,
        };
        let workers = 2;
        let mut consumed = 0;
        let n = run_fed(
            workers,
            window,
            |_: &()| 0,
            |feed| {
                for _ in 0..items {
                    assert!(feed(Alive::new(&live, &most), true));
                }
            },
            |_, _, _| std::thread::sleep(std::time::Duration::from_micros(20)),
            |_, _, _| {
                consumed += 1;
                Flow::Continue
            },
        );
        assert_eq!((n, consumed), (items, items));
        // The queue, the batches in work, the results waiting, and the producer's own
        // batch: nowhere near the 20 x QUEUED fed.
        let bound = QUEUED + CHUNK + workers * CHUNK + window.items + CHUNK;
        let most = most.load(Ordering::SeqCst);
        assert!(most <= bound, "{most} items alive at once, bound {bound}");
    }

    #[test]
    fn fed_single_item_runs_on_the_calling_thread() {
        let caller = std::thread::current().id();
        for pooled in [true, false] {
            let mut seen = Vec::new();
            let n = run_fed(
                2,
                Window {
                    items: AHEAD,
                    bytes: usize::MAX,
                },
                |_: &(bool, bool)| 0,
                |feed| {
                    feed(7u32, pooled);
                },
                |_, _, on_pool| (on_pool, std::thread::current().id() == caller),
                |i, item, r| {
                    seen.push((i, item, r));
                    Flow::Continue
                },
            );
            assert_eq!(n, 1);
            assert_eq!(seen, vec![(0, 7, (false, true))]);
        }
    }

    #[test]
    fn fed_stop_ends_the_run_and_the_producer() {
        let started = AtomicUsize::new(0);
        let mut fed = 0;
        let n = run_fed(
            2,
            Window {
                items: AHEAD,
                bytes: usize::MAX,
            },
            |_: &usize| 0,
            |feed| {
                for i in 0..100_000usize {
                    if !feed(i, true) {
                        break;
                    }
                    fed += 1;
                    if i >= 1000 {
                        // A slow walk from here on: the stop must reach it.
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                }
            },
            |i, _, _| {
                started.fetch_add(1, Ordering::Relaxed);
                i
            },
            |i, _, _| if i == 9 { Flow::Stop } else { Flow::Continue },
        );
        assert_eq!(n, 10);
        assert!(fed < 100_000, "the producer was told to stop");
        assert!(started.load(Ordering::Relaxed) <= 10 + AHEAD + 2 * CHUNK);
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
