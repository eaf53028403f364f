//! Progress bars for long work: shown on standard error only when it is a terminal, only
//! once the work has run for a moment, and cleared when it ends, so scripts and quick runs
//! never see them.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Work shorter than this never shows a bar.
const DELAY: Duration = Duration::from_millis(700);
/// Inputs smaller than this never show a bar.
const MIN_BYTES: u64 = 256 << 20;

/// Runs `work`, giving it a byte counter to advance; while it runs, draws a bar of the
/// counter against `total` on a terminal's standard error.
pub fn with_progress<R>(total: Option<u64>, label: &str, work: impl FnOnce(&AtomicU64) -> R) -> R {
    let counter = AtomicU64::new(0);
    let show = total.is_some_and(|t| t >= MIN_BYTES) && std::io::stderr().is_terminal();
    if !show {
        return work(&counter);
    }
    let total = total.unwrap_or(0);
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| draw(&counter, &finished, total, label));
        let result = work(&counter);
        finished.store(true, Ordering::Relaxed);
        result
    })
}

fn draw(counter: &AtomicU64, finished: &AtomicBool, total: u64, label: &str) {
    let start = Instant::now();
    while start.elapsed() < DELAY {
        if finished.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{prefix}: [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(label.to_string());
    while !finished.load(Ordering::Relaxed) {
        bar.set_position(counter.load(Ordering::Relaxed).min(total));
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
}
