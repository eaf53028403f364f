//! The kernel's copy speed by the buffer's offset from a page, through the engine's reader
//! (`Input::read_full_at` into a [`PageBuf`]), as `../shared/tools/copy-alignment.c` measures
//! it with plain `pread`: the first 200 MB of FILE (read once first, so it is in the page
//! cache), 256 KiB a read, into the buffer shifted by each offset; best of 3, in GB/s. The
//! last column reads through [`PageBuf::window`], where the engine's own reads go.
//!
//!   cargo bench -p swath-engine --bench copy_alignment -- FILE
//!   (or benchsuite/copy-alignment.sh FILE)

use std::time::Instant;

use swath_engine::buf::PageBuf;
use swath_engine::Input;

const STEP: usize = 256 << 10;
const SPAN: u64 = 200_000_000;

/// Seconds to read `[0, span)` of `input` into `buf` at `offset` (None: through `window`).
fn pass(input: &Input, buf: &mut PageBuf, offset: Option<usize>, span: u64) -> f64 {
    let t = Instant::now();
    let mut at = 0u64;
    while at < span {
        let n = STEP.min((span - at) as usize);
        let got = match offset {
            Some(o) => input.read_full_at(&mut buf.room()[o..o + n], at),
            None => input.read_full_at(buf.window(at, n), at),
        }
        .expect("read");
        if got == 0 {
            break;
        }
        at += got as u64;
    }
    t.elapsed().as_secs_f64()
}

fn main() {
    let Some(path) = std::env::args().skip(1).find(|a| !a.starts_with("--")) else {
        eprintln!("usage: cargo bench -p swath-engine --bench copy_alignment -- FILE");
        return;
    };
    let input = Input::open(std::path::Path::new(&path)).expect("open FILE");
    let span = input.len().unwrap_or(0).min(SPAN);
    let mut buf = PageBuf::zeroed(STEP + 8192);
    pass(&input, &mut buf, Some(0), span);
    let mut line = String::new();
    let offsets = [
        0usize, 1, 2, 4, 8, 16, 24, 31, 32, 40, 63, 64, 128, 2048, 4080, 4095,
    ];
    for o in offsets.iter().map(|&o| Some(o)).chain([None]) {
        let best = (0..3)
            .map(|_| pass(&input, &mut buf, o, span))
            .fold(f64::INFINITY, f64::min);
        let gbs = span as f64 / best / 1e9;
        match o {
            Some(o) => line.push_str(&format!("{o}:{gbs:.1} ")),
            None => line.push_str(&format!("window:{gbs:.1}")),
        }
    }
    println!("{path}: {span} bytes, GB/s by offset: {line}");
}
