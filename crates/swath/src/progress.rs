//! Progress bars for long work: shown on standard error only when it is a terminal, only
//! once the work has run for a moment, and cleared when it ends, so scripts and quick runs
//! never see them. Every command that can run for more than a second draws its bar here.
//! `SWATH_PROGRESS=never` turns them off; `SWATH_PROGRESS=always` draws them at once, for
//! any size (still only on a terminal).
//!
//! `swath bench`, which runs for minutes, also says a line as each configuration ends
//! ([`say`]), on a terminal or not: above its bar on a terminal, alone otherwise.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Work shorter than this never shows a bar.
const DELAY: Duration = Duration::from_millis(700);
/// Inputs smaller than this never show a bar.
const MIN_BYTES: u64 = 256 << 20;

/// When bars are drawn: `SWATH_PROGRESS`, and whether standard error is a terminal.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Setting {
    /// Not a terminal, or `SWATH_PROGRESS=never`.
    Never,
    /// For long work on large inputs (the default).
    Long,
    /// At once, whatever the size (`SWATH_PROGRESS=always`).
    Always,
}

/// The setting, found once per run (a search of many files asks for every file, and
/// whether standard error is a terminal is a system call).
fn setting() -> Setting {
    static SETTING: std::sync::OnceLock<Setting> = std::sync::OnceLock::new();
    *SETTING.get_or_init(find_setting)
}

fn find_setting() -> Setting {
    if !std::io::stderr().is_terminal() {
        return Setting::Never;
    }
    match std::env::var("SWATH_PROGRESS").as_deref() {
        Ok("never") => Setting::Never,
        Ok("always") => Setting::Always,
        _ => Setting::Long,
    }
}

/// Runs `work`, giving it a byte counter to advance; while it runs, draws a bar of the
/// counter against `total` on a terminal's standard error.
pub fn with_progress<R>(total: Option<u64>, label: &str, work: impl FnOnce(&AtomicU64) -> R) -> R {
    let counter = AtomicU64::new(0);
    let (min, delay) = match setting() {
        Setting::Never => return work(&counter),
        Setting::Long => (MIN_BYTES, DELAY),
        Setting::Always => (0, Duration::ZERO),
    };
    let Some(total) = total.filter(|&t| t >= min) else {
        return work(&counter);
    };
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| draw(&counter, &finished, total, label, delay));
        let result = work(&counter);
        finished.store(true, Ordering::Relaxed);
        result
    })
}

fn draw(counter: &AtomicU64, finished: &AtomicBool, total: u64, label: &str, delay: Duration) {
    let start = Instant::now();
    while start.elapsed() < delay {
        if finished.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    // The rate and the time left are swath's own, over the last few seconds: indicatif's
    // count from the bar's start, which comes after the work's (the first rate shown was
    // inflated by the bytes done before the bar appeared).
    let style = ProgressStyle::with_template("{prefix}: [{bar:20}] {bytes}/{total_bytes} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(label.to_string());
    let mut window = Window::default();
    loop {
        let done = counter.load(Ordering::Relaxed).min(total);
        bar.set_position(done);
        window.add(Instant::now(), done);
        bar.set_message(window.text(total.saturating_sub(done)));
        bar.tick();
        if finished.load(Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
}

/// A bar counting `total` runs (for `swath bench`), advanced by the caller; hidden unless
/// standard error is a terminal (and `SWATH_PROGRESS` is not `never`).
pub fn runs_bar(total: u64, label: &str) -> ProgressBar {
    if setting() == Setting::Never {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{prefix}: [{bar:20}] {pos}/{len} runs, {eta} left")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(label.to_string());
    bar
}

/// Writes `line` on standard error: above `bar` when it is drawn, alone otherwise. A failed
/// write (standard error closed) is ignored: progress is not worth failing the work.
pub fn say(bar: &ProgressBar, line: &str) {
    if bar.is_hidden() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    } else {
        bar.println(line);
    }
}

/// How long a rate is measured over.
const WINDOW: Duration = Duration::from_secs(3);

/// The bytes done at recent instants: the rate is measured over the last [`WINDOW`].
#[derive(Default)]
struct Window {
    samples: std::collections::VecDeque<(Instant, u64)>,
}

impl Window {
    fn add(&mut self, at: Instant, done: u64) {
        self.samples.push_back((at, done));
        while self
            .samples
            .front()
            .is_some_and(|&(t, _)| at.duration_since(t) > WINDOW)
            && self.samples.len() > 2
        {
            self.samples.pop_front();
        }
    }

    /// Bytes a second over the window, once it spans a quarter of a second.
    fn rate(&self) -> Option<f64> {
        let (&(t0, d0), &(t1, d1)) = (self.samples.front()?, self.samples.back()?);
        let secs = t1.duration_since(t0).as_secs_f64();
        (secs >= 0.25).then(|| d1.saturating_sub(d0) as f64 / secs)
    }

    /// `123.4 MiB/s, 0:12 left`, or nothing before a rate is known.
    fn text(&self, left: u64) -> String {
        let Some(rate) = self.rate() else {
            return String::new();
        };
        let eta = if rate > 0.0 {
            let s = (left as f64 / rate).round() as u64;
            format!(", {}:{:02} left", s / 60, s % 60)
        } else {
            String::new()
        };
        format!("{}/s{eta}", indicatif::BinaryBytes(rate as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rate is what the last seconds did, not the average since the start: work that
    /// ran fast, then slowed, shows the slow rate.
    #[test]
    fn the_rate_is_measured_over_the_last_seconds() {
        let t0 = Instant::now();
        let mut w = Window::default();
        assert_eq!(w.text(0), "");
        // 1 GiB in the first second, then 10 MiB a second for ten seconds.
        w.add(t0, 0);
        w.add(t0 + Duration::from_secs(1), 1 << 30);
        for s in 2..=11u64 {
            w.add(
                t0 + Duration::from_secs(s),
                (1 << 30) + (s - 1) * (10 << 20),
            );
        }
        let rate = w.rate().unwrap();
        assert!((rate - (10 << 20) as f64).abs() < 1.0, "{rate}");
        assert_eq!(w.text(60 * (10 << 20)), "10.00 MiB/s, 1:00 left");
    }
}
