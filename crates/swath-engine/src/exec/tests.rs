//! The executor's tests: every plan visits every byte once, readers against `std::fs::read`
//! at any offset, alignment and block size, holes, long lines, early stops.

use super::*;
use crate::plan::Strategy;
use std::io::Write;

fn temp_with(data: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(data).unwrap();
    f.flush().unwrap();
    f
}

fn plan(method: Method, threads: usize, bs: usize, layout: Layout) -> Plan {
    Plan::fixed(method, threads, bs, layout)
}

fn all_plans() -> Vec<Plan> {
    let mut v = Vec::new();
    for m in [Method::Read, Method::Pread, Method::Mmap] {
        for t in [1, 2, 3] {
            for bs in [1, 7, 64, 4096] {
                for l in [Layout::Dynamic, Layout::Stripes, Layout::Ranges] {
                    v.push(plan(m, t, bs, l));
                }
            }
        }
    }
    v
}

#[test]
fn every_plan_visits_every_byte_once() {
    let data: Vec<u8> = (0..10_007u32).map(|i| (i * 7 % 256) as u8).collect();
    let f = temp_with(&data);
    for p in all_plans() {
        let input = Input::open(f.path()).unwrap();
        let job = Job::new(vec![Region {
            input: &input,
            offset: 3,
        }]);
        let seen = Mutex::new(vec![0u8; data.len() - 3]);
        let stats = run_blocks(&p, &job, &(), |b, d| {
            let mut s = seen.lock().unwrap();
            assert_eq!(d[0].len(), b.len);
            for (i, &x) in d[0].iter().enumerate() {
                s[b.start as usize + i] = x;
            }
            Flow::Continue
        })
        .unwrap();
        assert_eq!(stats.extent.len, data.len() as u64 - 3, "{p:?}");
        assert_eq!(stats.extent.ended, vec![true]);
        assert_eq!(&seen.into_inner().unwrap()[..], &data[3..], "{p:?}");
    }
}

/// Line framing: every line whole, once, in a block that starts at a line start, for
/// every plan (sequential ones carry partial lines, parallel ones look around).
fn check_lines(data: &[u8], plans: &[Plan]) {
    for framing in [Framing::Lines, Framing::LinesOrNul] {
        check_framing(data, plans, framing);
    }
}

fn check_framing(data: &[u8], plans: &[Plan], framing: Framing) {
    let f = temp_with(data);
    for p in plans {
        let input = Input::open(f.path()).unwrap();
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }])
        .with_framing(framing);
        let blocks = Mutex::new(Vec::new());
        run_blocks(p, &job, &(), |b, d| {
            assert_eq!(d[0].len(), b.len);
            let s = b.start as usize;
            assert_eq!(d[0], &data[s..s + b.len], "{p:?} {b:?}");
            blocks.lock().unwrap().push((b.index, b.start, b.len));
            Flow::Continue
        })
        .unwrap();
        let mut blocks = blocks.into_inner().unwrap();
        blocks.sort();
        let mut pos = 0usize;
        for &(_, start, len) in &blocks {
            if len == 0 {
                continue;
            }
            assert_eq!(start as usize, pos, "{p:?}: a gap or an overlap");
            assert!(
                pos == 0 || framing.ends(data[pos - 1]),
                "{p:?}: cut inside a line"
            );
            pos += len;
            assert!(
                pos == data.len() || framing.ends(data[pos - 1]),
                "{p:?} {framing:?}: line cut at {pos}"
            );
        }
        assert_eq!(pos, data.len(), "{p:?}");
    }
}

#[test]
fn line_framing_keeps_lines_whole() {
    let mut data = Vec::new();
    for i in 0..3000u32 {
        data.extend(std::iter::repeat_n(b'x', (i * 37 % 23) as usize));
        data.push(b'\n');
    }
    data.extend(std::iter::repeat_n(b'y', 5000));
    data.extend_from_slice(b"\n\nlast");
    check_lines(&data, &all_plans());
    check_lines(b"", &all_plans());
    check_lines(b"\n", &all_plans());
    check_lines(b"no newline at all", &all_plans());
}

#[test]
fn a_line_longer_than_the_buffer_limit_is_read_through_a_map() {
    // Lines before and after one of LONG_LINE + 5 MiB, cut at block sizes that put
    // block edges inside it; the positional reads give up gathering it and map it.
    let mut data = b"first\n".to_vec();
    data.extend(std::iter::repeat_n(b'x', LONG_LINE + (5 << 20)));
    data.extend_from_slice(b"\nafter\nlast");
    let mut plans = Vec::new();
    for (t, bs, l) in [(1, 1 << 20, Layout::Dynamic), (2, 4 << 20, Layout::Ranges)] {
        plans.push(plan(Method::Pread, t, bs, l));
    }
    check_framing(&data, &plans, Framing::Lines);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    #[test]
    fn line_framing_any_cut(
        data in proptest::collection::vec(proptest::prop_oneof![
            9 => proptest::prelude::Just(b'a'), 2 => proptest::prelude::Just(b'\n'),
            1 => proptest::prelude::Just(0u8)
        ], 0..3000),
        threads in 1usize..4,
        bs in 1usize..200,
        m in 0usize..3,
    ) {
        let method = [Method::Read, Method::Pread, Method::Mmap][m];
        check_lines(&data, &[plan(method, threads, bs, Layout::Dynamic)]);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Every reader (sequential, positional, mapped; any threads, layout and block
    /// size, page-sized or not) hands the kernel exactly the file's bytes, for two
    /// regions read in lock-step from offsets of any alignment, up to any limit, with
    /// and without line framing: what `std::fs::read` gives.
    #[test]
    fn every_reader_gives_the_files_bytes_at_any_offset(
        data in proptest::collection::vec(proptest::prop_oneof![
            8 => proptest::prelude::any::<u8>(), 1 => proptest::prelude::Just(b'\n')
        ], 0..20_000),
        off_a in 0u64..9000,
        off_b in 0u64..9000,
        limit in proptest::option::of(0u64..20_000),
        threads in 1usize..4,
        bs_i in 0usize..6,
        m in 0usize..3,
        l in 0usize..3,
    ) {
        let bs = [1, 777, 4095, 4096, 4097, 12288][bs_i];
        let method = [Method::Read, Method::Pread, Method::Mmap][m];
        let layout = [Layout::Dynamic, Layout::Stripes, Layout::Ranges][l];
        let p = plan(method, threads, bs, layout);
        let f = temp_with(&data);
        let disk = std::fs::read(f.path()).unwrap();
        let (a, b) = (Input::open(f.path()).unwrap(), Input::open(f.path()).unwrap());
        let job = Job::new(vec![
            Region { input: &a, offset: off_a },
            Region { input: &b, offset: off_b },
        ])
        .with_limit(limit);
        let seen = Mutex::new(Vec::new());
        let stats = run_blocks(&p, &job, &(), |blk, d| {
            seen.lock().unwrap().push((blk.start, d[0].to_vec(), d[1].to_vec()));
            Flow::Continue
        })
        .unwrap();
        let len = (disk.len() as u64)
            .saturating_sub(off_a.max(off_b))
            .min(limit.unwrap_or(u64::MAX)) as usize;
        proptest::prop_assert_eq!(stats.extent.len, len as u64, "{:?}", p);
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
        for (start, x, y) in seen {
            proptest::prop_assert_eq!(start as usize, got_a.len(), "{:?}", p);
            got_a.extend(x);
            got_b.extend(y);
        }
        let (oa, ob) = (off_a as usize, off_b as usize);
        let part = |o: usize| disk.get(o..o + len).unwrap_or(&[]);
        proptest::prop_assert!(got_a[..] == *part(oa), "{:?}", p);
        proptest::prop_assert!(got_b[..] == *part(ob), "{:?}", p);

        // One region from the offset, in lines.
        if oa <= disk.len() {
            let job = Job::new(vec![Region { input: &a, offset: off_a }])
                .with_framing(Framing::Lines);
            let seen = Mutex::new(Vec::new());
            run_blocks(&p, &job, &(), |blk, d| {
                seen.lock().unwrap().push((blk.start, d[0].to_vec()));
                Flow::Continue
            })
            .unwrap();
            let mut seen = seen.into_inner().unwrap();
            seen.sort();
            let got: Vec<u8> = seen.into_iter().flat_map(|(_, x)| x).collect();
            proptest::prop_assert!(got[..] == disk[oa..], "{:?} lines", p);
        }
    }

    /// A caller's buffer of any alignment works (only the engine's own buffers are
    /// placed to share the file's alignment).
    #[test]
    fn reads_into_a_buffer_of_any_alignment(
        data in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..20_000),
        at in 0usize..20_000,
        n in 0usize..9000,
        shift in 0usize..64,
    ) {
        let f = temp_with(&data);
        let input = Input::open(f.path()).unwrap();
        let at = at % data.len();
        let mut room = vec![0u8; n + shift];
        let got = input.read_full_at(&mut room[shift..], at as u64).unwrap();
        let want = n.min(data.len() - at);
        proptest::prop_assert_eq!(got, want);
        proptest::prop_assert!(room[shift..shift + got] == data[at..at + want]);
        let mut buf = PageBuf::new();
        let w = buf.window(at as u64, want);
        input.read_exact_at(w, at as u64).unwrap();
        proptest::prop_assert!(buf.placed(at as u64, want) == &data[at..at + want]);
    }
}

/// A file of data and holes (whole pages of each) as `layout` says, and the same bytes
/// written densely.
pub(crate) fn sparse_and_dense(
    layout: &[(bool, usize, u8)],
    tail: &[u8],
) -> (tempfile::NamedTempFile, Vec<u8>) {
    use std::os::unix::fs::FileExt;
    let f = tempfile::NamedTempFile::new().unwrap();
    let mut dense = Vec::new();
    for &(hole, pages, fill) in layout {
        let n = pages * 4096;
        if hole {
            dense.resize(dense.len() + n, 0);
        } else {
            let at = dense.len() as u64;
            // Lines and NULs, so that line framing has edges in the data.
            let bytes: Vec<u8> = (0..n)
                .map(|i| match (i * 31 + fill as usize) % 97 {
                    0 => b'\n',
                    1 => 0,
                    _ => fill,
                })
                .collect();
            f.as_file().write_all_at(&bytes, at).unwrap();
            dense.extend_from_slice(&bytes);
        }
    }
    f.as_file().write_all_at(tail, dense.len() as u64).unwrap();
    dense.extend_from_slice(tail);
    f.as_file().set_len(dense.len() as u64).unwrap();
    (f, dense)
}

/// Runs a zero-run job over `input` and rebuilds its bytes from what the kernel saw,
/// checking that nominal block numbers follow on.
fn rebuild(p: &Plan, input: &Input, framing: Framing) -> (Vec<u8>, u64) {
    let job = Job::new(vec![Region { input, offset: 0 }])
        .with_framing(framing)
        .with_zero_runs();
    let seen = Mutex::new(Vec::new());
    run_blocks(p, &job, &(), |b, d| {
        let bytes = if is_zero_run(b, d) {
            vec![0u8; b.len]
        } else {
            d[0].to_vec()
        };
        let after = next_index(b, d, p.block_size);
        seen.lock().unwrap().push((b.index, after, b.start, bytes));
        Flow::Continue
    })
    .unwrap();
    let mut seen = seen.into_inner().unwrap();
    seen.sort_by_key(|x| x.0);
    let (mut out, mut next, mut runs) = (Vec::new(), 0u64, 0u64);
    for (index, after, start, bytes) in seen {
        assert_eq!(index, next, "{p:?}: block numbers do not follow on");
        next = after;
        if !bytes.is_empty() {
            assert_eq!(start as usize, out.len(), "{p:?}: a gap or an overlap");
        }
        if after > index + 1 {
            runs += 1;
        }
        out.extend_from_slice(&bytes);
    }
    (out, runs)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]
    #[test]
    fn holes_as_zero_runs_give_the_bytes_of_the_dense_file(
        layout in proptest::collection::vec(
            (proptest::prelude::any::<bool>(), 1usize..6, b'a'..b'e'), 0..8),
        tail in proptest::collection::vec(b'x'..b'z', 0..100),
        threads in 1usize..4,
        bs_pages in 1usize..4,
        bs_extra in 0usize..2,
        m in 0usize..3,
        l in 0usize..3,
        lines in proptest::prelude::any::<bool>(),
    ) {
        let (f, dense) = sparse_and_dense(&layout, &tail);
        let input = Input::open(f.path()).unwrap();
        let method = [Method::Read, Method::Pread, Method::Mmap][m];
        let layout_ = [Layout::Dynamic, Layout::Stripes, Layout::Ranges][l];
        // Block sizes that are and are not multiples of a page.
        let bs = bs_pages * 4096 + bs_extra * 1000;
        let p = plan(method, threads, bs, layout_);
        let framing = if lines { Framing::LinesOrNul } else { Framing::Bytes };
        let (got, _) = rebuild(&p, &input, framing);
        proptest::prop_assert!(got == dense, "{:?} {:?}", p, framing);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]
    /// Two sparse files read side by side with region holes: every block rebuilt from
    /// what the kernel saw (a hole slice as zeros) gives both files' bytes, and a region
    /// handed as a hole is zeros in the dense file.
    #[test]
    fn region_holes_give_the_bytes_of_both_dense_files(
        pages in proptest::collection::vec(
            (proptest::prelude::any::<bool>(), proptest::prelude::any::<bool>(), 1usize..4, b'a'..b'e'), 0..8),
        tail in proptest::collection::vec(b'x'..b'z', 0..100),
        offset in 0u64..5000,
        threads in 1usize..4,
        bs_pages in 1usize..4,
        bs_extra in 0usize..2,
        m in 0usize..3,
        l in 0usize..3,
    ) {
        let first: Vec<(bool, usize, u8)> = pages.iter().map(|&(h, _, n, f)| (h, n, f)).collect();
        let second: Vec<(bool, usize, u8)> = pages.iter().map(|&(_, h, n, f)| (h, n, f + 1)).collect();
        let (fa, a) = sparse_and_dense(&first, &tail);
        let (fb, b) = sparse_and_dense(&second, &tail);
        let (ia, ib) = (Input::open(fa.path()).unwrap(), Input::open(fb.path()).unwrap());
        let method = [Method::Read, Method::Pread, Method::Mmap][m];
        let layout_ = [Layout::Dynamic, Layout::Stripes, Layout::Ranges][l];
        let bs = bs_pages * 4096 + bs_extra * 1000;
        let p = plan(method, threads, bs, layout_);
        // The second file read from an offset, so holes do not line up with blocks.
        let off = offset.min(b.len() as u64);
        let job = Job::new(vec![
            Region { input: &ia, offset: 0 },
            Region { input: &ib, offset: off },
        ])
        .with_region_holes();
        let len = a.len().min(b.len() - off as usize);
        let seen = Mutex::new((vec![0xeeu8; len], vec![0xeeu8; len]));
        run_blocks(&p, &job, &(), |blk, d| {
            let mut guard = seen.lock().unwrap();
            let s = &mut *guard;
            let at = blk.start as usize;
            for (r, out) in [&mut s.0, &mut s.1].into_iter().enumerate() {
                let span = &mut out[at..at + blk.len];
                if is_hole(blk, d[r]) {
                    span.fill(0);
                } else {
                    assert_eq!(d[r].len(), blk.len);
                    span.copy_from_slice(d[r]);
                }
            }
            Flow::Continue
        })
        .unwrap();
        let (got_a, got_b) = seen.into_inner().unwrap();
        proptest::prop_assert!(got_a[..] == a[..len], "{:?}", p);
        proptest::prop_assert!(got_b[..] == b[off as usize..off as usize + len], "{:?}", p);
    }
}

#[test]
fn a_hole_on_one_side_is_not_read() {
    // 64 MiB: a hole in the first file, data in the second; the first is never handed
    // as bytes (every block but the edges is a hole slice beside the other's data).
    let (fa, _) = sparse_and_dense(&[(true, 1 << 14, 0)], b"");
    let (fb, _) = sparse_and_dense(&[(false, 1 << 14, b'a')], b"");
    let (ia, ib) = (
        Input::open(fa.path()).unwrap(),
        Input::open(fb.path()).unwrap(),
    );
    if !ia.may_have_holes() {
        return;
    }
    for p in [
        plan(Method::Read, 1, 1 << 16, Layout::Dynamic),
        plan(Method::Pread, 2, 1 << 16, Layout::Dynamic),
        plan(Method::Mmap, 2, 1 << 16, Layout::Stripes),
    ] {
        let job = Job::new(vec![
            Region {
                input: &ia,
                offset: 0,
            },
            Region {
                input: &ib,
                offset: 0,
            },
        ])
        .with_region_holes();
        let (holes, read) = (AtomicU64::new(0), AtomicU64::new(0));
        run_blocks(&p, &job, &(), |b, d| {
            assert!(!is_hole(b, d[1]));
            let n = if is_hole(b, d[0]) { &holes } else { &read };
            n.fetch_add(1, Ordering::Relaxed);
            Flow::Continue
        })
        .unwrap();
        assert_eq!(holes.load(Ordering::Relaxed), 1024, "{p:?}");
        assert_eq!(read.load(Ordering::Relaxed), 0, "{p:?}");
    }
}

/// The lines of `data` (without their ends) and their offsets.
fn lines_of(data: &[u8], framing: Framing) -> Vec<(usize, &[u8])> {
    let mut v = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let end = framing.find(&data[at..]).map_or(data.len(), |i| at + i);
        v.push((at, &data[at..end]));
        at = end + 1;
    }
    v
}

/// With a bound, the lines a kernel keeps (those of at most `max` bytes) are exactly the
/// short lines of the input, and every long line is either left out by the engine or
/// handed and dropped by the kernel, once.
fn check_bounded(data: &[u8], plans: &[Plan], framing: Framing, max: usize) {
    let f = temp_with(data);
    check_bounded_in(f.path(), data, plans, framing, max);
}

/// As [`check_bounded`], over the file at `path`, which holds `data` (written sparsely, say).
fn check_bounded_in(
    path: &std::path::Path,
    data: &[u8],
    plans: &[Plan],
    framing: Framing,
    max: usize,
) {
    let want = lines_of(data, framing);
    let long = want.iter().filter(|(_, l)| l.len() > max).count() as u64;
    let short: Vec<(usize, &[u8])> = want.into_iter().filter(|(_, l)| l.len() <= max).collect();
    for p in plans {
        let input = Input::open(path).unwrap();
        let skipped = AtomicU64::new(0);
        let job = skipping_job(&input, framing, max, &skipped);
        let seen = Mutex::new(Vec::new());
        let dropped = AtomicU64::new(0);
        run_blocks(p, &job, &(), |b, d| {
            for (at, l) in lines_of(d[0], framing) {
                if l.len() > max {
                    dropped.fetch_add(1, Ordering::Relaxed);
                } else {
                    let at = b.start as usize + at;
                    seen.lock().unwrap().push((at, l.to_vec()));
                }
            }
            Flow::Continue
        })
        .unwrap();
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        let short: Vec<(usize, Vec<u8>)> = short.iter().map(|&(a, l)| (a, l.to_vec())).collect();
        assert_eq!(seen, short, "{p:?} max {max}");
        let n = skipped.load(Ordering::Relaxed) + dropped.load(Ordering::Relaxed);
        assert_eq!(n, long, "{p:?} max {max}: long lines");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    #[test]
    fn long_lines_are_left_out_once_and_short_ones_kept(
        data in proptest::collection::vec(proptest::prop_oneof![
            30 => proptest::prelude::Just(b'a'), 2 => proptest::prelude::Just(b'\n'),
            1 => proptest::prelude::Just(0u8)
        ], 0..3000),
        threads in 1usize..4,
        bs in 1usize..200,
        m in 0usize..3,
        max in 0usize..60,
        nul in proptest::prelude::any::<bool>(),
    ) {
        let method = [Method::Read, Method::Pread, Method::Mmap][m];
        let framing = if nul { Framing::LinesOrNul } else { Framing::Lines };
        check_bounded(&data, &[plan(method, threads, bs, Layout::Dynamic)], framing, max);
    }

    #[test]
    fn lines_across_holes_are_the_lines_of_the_dense_file(
        layout in proptest::collection::vec(
            (proptest::prelude::any::<bool>(), 1usize..4, b'a'..b'e'), 0..6),
        tail in proptest::collection::vec(proptest::prop_oneof![
            8 => proptest::prelude::Just(b'x'), 1 => proptest::prelude::Just(b'\n')
        ], 0..100),
        threads in 1usize..4,
        bs_pages in 1usize..4,
        bs_extra in 0usize..2,
        m in 0usize..3,
        l in 0usize..3,
        max in proptest::prop_oneof![proptest::prelude::Just(0usize), 1usize..200, 4000usize..20000],
    ) {
        // Blocks inside a hole are handed empty unread: the lines seen, and the long ones
        // left out, are those of the same bytes written densely.
        let (f, dense) = sparse_and_dense(&layout, &tail);
        let method = [Method::Read, Method::Pread, Method::Mmap][m];
        let layout = [Layout::Dynamic, Layout::Stripes, Layout::Ranges][l];
        let p = plan(method, threads, bs_pages * 4096 + bs_extra * 100, layout);
        check_bounded_in(f.path(), &dense, &[p], Framing::Lines, max);
    }
}

#[test]
fn a_large_hole_is_one_zero_run_not_read() {
    // 1 GiB of hole between two pages of data: a handful of blocks, whatever the plan.
    let (f, dense) = sparse_and_dense(&[(false, 1, b'a'), (true, 1 << 18, 0)], b"end");
    let input = Input::open(f.path()).unwrap();
    if !input.may_have_holes() {
        return;
    }
    for p in [
        plan(Method::Read, 1, 1 << 16, Layout::Dynamic),
        plan(Method::Pread, 2, 1 << 16, Layout::Dynamic),
        plan(Method::Mmap, 2, 1 << 16, Layout::Ranges),
    ] {
        for framing in [Framing::Bytes, Framing::LinesOrNul] {
            if framing.is_lines() && p.method == Method::Read {
                // The sequential line path reads holes (their lines are NULs, short).
                continue;
            }
            let (got, runs) = rebuild(&p, &input, framing);
            assert!(got.len() == dense.len() && got == dense, "{p:?}");
            assert!((1..=2).contains(&runs), "{p:?}: {runs} runs");
        }
    }
}

/// A job of line framing `framing` over all of `input` that leaves out lines of more than
/// `max` bytes, counting them in `skipped`.
fn skipping_job<'a>(
    input: &'a Input,
    framing: Framing,
    max: usize,
    skipped: &'a AtomicU64,
) -> Job<'a> {
    Job::new(vec![Region { input, offset: 0 }])
        .with_framing(framing)
        .with_long_lines(LongLines::Skip { max, skipped })
}

/// Bytes this thread has read so far (`rchar` of `/proc/thread-self/io`), if told.
fn thread_rchar() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/io").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn a_large_hole_inside_lines_is_not_read() {
    // 1 GiB of hole between lines: with line framing no line starts inside it (zeros end no
    // line), so its blocks are handed empty without a read; the line that runs into the hole
    // is left out as long. Each worker's reads are counted on its own thread.
    let (f, dense) = sparse_and_dense(&[(false, 1, b'a'), (true, 1 << 18, 0)], b"\nend\n");
    let input = Input::open(f.path()).unwrap();
    if !input.may_have_holes() || thread_rchar().is_none() {
        crate::testing::skip("no holes or no per-thread I/O counts on this file system");
        return;
    }
    let expect = {
        // The oracle: whole lines of at most `max` bytes (and their newline), in order.
        let max = 10_000;
        let mut v = Vec::new();
        for l in dense.split_inclusive(|&b| b == b'\n') {
            if l.len() <= max + 1 {
                v.extend_from_slice(l);
            }
        }
        v
    };
    for p in [
        plan(Method::Pread, 1, 1 << 16, Layout::Dynamic),
        plan(Method::Pread, 2, 1 << 16, Layout::Dynamic),
        plan(Method::Pread, 2, 1 << 16, Layout::Ranges),
        plan(Method::Mmap, 2, 1 << 16, Layout::Stripes),
    ] {
        let skipped = AtomicU64::new(0);
        let job = skipping_job(&input, Framing::Lines, 10_000, &skipped);
        let seen = Mutex::new(Vec::new());
        let reads = Mutex::new(std::collections::HashMap::new());
        run_blocks(&p, &job, &(), |b, d| {
            if !d[0].is_empty() {
                seen.lock().unwrap().push((b.start, d[0].to_vec()));
            }
            let now = thread_rchar().unwrap_or(0);
            let mut r = reads.lock().unwrap();
            let e = r.entry(std::thread::current().id()).or_insert((now, now));
            e.1 = now;
            Flow::Continue
        })
        .unwrap();
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        let got: Vec<u8> = seen.into_iter().flat_map(|x| x.1).collect();
        assert!(got == expect, "{p:?}: the lines differ");
        assert_eq!(skipped.load(Ordering::Relaxed), 1, "{p:?}");
        if p.method == Method::Pread {
            for (first, last) in reads.into_inner().unwrap().into_values() {
                assert!(
                    last - first < 64 << 20,
                    "{p:?}: {} bytes read",
                    last - first
                );
            }
        }
    }
}

#[test]
fn long_line_from_a_stream_is_skipped_in_constant_memory() {
    // 64 MiB with no newline from a pipe, then a short line: the engine leaves the long
    // line out without gathering it (the buffer would otherwise grow to 64 MiB).
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg("head -c 67108864 /dev/zero | tr '\\0' x; printf '\\nshort\\n'")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&out));
    let input = Input::open(std::path::Path::new(&path)).unwrap();
    assert!(!input.is_seekable());
    let skipped = AtomicU64::new(0);
    let job = skipping_job(&input, Framing::Lines, 1000, &skipped);
    let seen = Mutex::new(Vec::new());
    let largest = AtomicU64::new(0);
    let p = plan(Method::Read, 1, 64 * 1024, Layout::Dynamic);
    run_blocks(&p, &job, &(), |b, d| {
        largest.fetch_max(b.len as u64, Ordering::Relaxed);
        seen.lock().unwrap().push(d[0].to_vec());
        Flow::Continue
    })
    .unwrap();
    drop(out);
    child.wait().unwrap();
    assert_eq!(skipped.load(Ordering::Relaxed), 1);
    assert_eq!(seen.into_inner().unwrap().concat(), b"short\n");
    assert!(largest.load(Ordering::Relaxed) <= 64 * 1024);
}

#[test]
fn long_line_fails_when_asked_to() {
    let mut data = b"ok\n".to_vec();
    data.extend(std::iter::repeat_n(b'x', 5000));
    data.extend_from_slice(b"\nafter\n");
    let f = temp_with(&data);
    for p in [
        plan(Method::Read, 1, 64, Layout::Dynamic),
        plan(Method::Pread, 2, 64, Layout::Dynamic),
        plan(Method::Mmap, 2, 64, Layout::Dynamic),
    ] {
        let input = Input::open(f.path()).unwrap();
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }])
        .with_framing(Framing::Lines)
        .with_long_lines(LongLines::Fail { max: 1000 });
        let err = run_blocks(&p, &job, &(), |_, _| Flow::Continue).unwrap_err();
        assert!(
            matches!(
                err,
                EngineError::LineTooLong {
                    offset: 3,
                    max: 1000,
                    ..
                }
            ),
            "{p:?}: {err}"
        );
    }
}

#[test]
fn progress_counts_every_byte() {
    let f = temp_with(&vec![3u8; 100_000]);
    for p in all_plans() {
        let input = Input::open(f.path()).unwrap();
        let done = AtomicU64::new(0);
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }])
        .with_progress(Some(&done));
        run_blocks(&p, &job, &(), |_, _| Flow::Continue).unwrap();
        assert_eq!(done.load(Ordering::Relaxed), 100_000, "{p:?}");
    }
}

#[test]
fn extent_reports_which_region_ended() {
    let a = temp_with(b"0123456789");
    let b = temp_with(b"01234");
    for p in all_plans() {
        let (ia, ib) = (
            Input::open(a.path()).unwrap(),
            Input::open(b.path()).unwrap(),
        );
        let job = Job::new(vec![
            Region {
                input: &ia,
                offset: 0,
            },
            Region {
                input: &ib,
                offset: 0,
            },
        ]);
        let stats = run_blocks(&p, &job, &(), |_, _| Flow::Continue).unwrap();
        assert_eq!(stats.extent.len, 5);
        assert_eq!(stats.extent.ended, vec![false, true], "{p:?}");
        let limited = job.clone().with_limit(Some(5));
        let (ia2, ib2) = (
            Input::open(a.path()).unwrap(),
            Input::open(b.path()).unwrap(),
        );
        let mut limited2 = limited.clone();
        limited2.regions[0].input = &ia2;
        limited2.regions[1].input = &ib2;
        let stats = run_blocks(&p, &limited2, &(), |_, _| Flow::Continue).unwrap();
        assert_eq!(stats.extent.len, 5);
        assert_eq!(stats.extent.ended, vec![false, false], "{p:?}");
    }
}

#[test]
fn flow_stop_ends_the_run_early() {
    let f = temp_with(&vec![0u8; 1 << 20]);
    for p in all_plans().into_iter().filter(|p| p.block_size >= 64) {
        let input = Input::open(f.path()).unwrap();
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }]);
        let stats = run_blocks(&p, &job, &(), |_, _| Flow::Stop).unwrap();
        assert!(stats.stopped_early);
        assert!(stats.blocks <= p.threads as u64, "{p:?} {}", stats.blocks);
    }
}

#[test]
fn file_truncated_while_read_is_an_error_not_a_crash() {
    let page = crate::sysinfo::page_size();
    for m in [Method::Pread, Method::Mmap] {
        let f = temp_with(&vec![b'a'; page * 64]);
        let input = Input::open(f.path()).unwrap();
        let job = Job::new(vec![Region {
            input: &input,
            offset: 0,
        }]);
        let p = plan(m, 1, page, Layout::Dynamic);
        let err = run_blocks(&p, &job, &(), |b, d| {
            if b.index == 0 {
                f.as_file().set_len(page as u64 * 2).unwrap();
            }
            std::hint::black_box(d[0].iter().map(|&x| x as u64).sum::<u64>());
            Flow::Continue
        })
        .unwrap_err();
        assert!(matches!(err, EngineError::Shrank { .. }), "{m:?}: {err}");
    }
}

#[test]
fn file_grown_while_read_is_reported() {
    let f = temp_with(&vec![b'a'; 8192]);
    let input = Input::open(f.path()).unwrap();
    let job = Job::new(vec![Region {
        input: &input,
        offset: 0,
    }]);
    let p = plan(Method::Pread, 1, 1024, Layout::Dynamic);
    let err = run_blocks(&p, &job, &(), |b, _| {
        if b.index == 0 {
            f.as_file().set_len(100_000).unwrap();
        }
        Flow::Continue
    })
    .unwrap_err();
    assert!(matches!(err, EngineError::Changed { .. }), "{err}");
}

#[test]
fn file_rewritten_in_place_while_read_is_reported() {
    use std::os::unix::fs::FileExt;
    let f = temp_with(&vec![b'a'; 8192]);
    let input = Input::open(f.path()).unwrap();
    let job = Job::new(vec![Region {
        input: &input,
        offset: 0,
    }]);
    for (n, method) in [Method::Pread, Method::Mmap].into_iter().enumerate() {
        let p = plan(method, 1, 1024, Layout::Dynamic);
        let err = run_blocks(&p, &job, &(), |b, _| {
            if b.index == 0 {
                // Same size, later time: a rewrite the size alone would not show.
                let later = std::time::SystemTime::now()
                    + std::time::Duration::from_secs(10 * (n as u64 + 1));
                f.as_file().write_all_at(b"b", 5000).unwrap();
                f.as_file().set_modified(later).unwrap();
            }
            Flow::Continue
        })
        .unwrap_err();
        assert!(matches!(err, EngineError::Modified { .. }), "{err}");
    }
}

#[test]
fn planner_output_runs() {
    let f = temp_with(&vec![b'z'; 100_000]);
    let input = Input::open(f.path()).unwrap();
    let job = Job::new(vec![Region {
        input: &input,
        offset: 0,
    }]);
    for s in Strategy::ALL {
        let opts = crate::plan::EngineOptions {
            strategy: s,
            block_size: Some(4096),
            ..Default::default()
        };
        let p = Plan::choose(
            &opts,
            &job.plan_regions(),
            job.known_extent().map(|e| e.len),
            crate::plan::Access::SinglePass,
        );
        let total = AtomicU64::new(0);
        run_blocks(&p, &job, &(), |b, _| {
            total.fetch_add(b.len as u64, Ordering::Relaxed);
            Flow::Continue
        })
        .unwrap();
        assert_eq!(total.load(Ordering::Relaxed), 100_000, "{s}");
    }
}
