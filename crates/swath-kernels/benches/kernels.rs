//! Criterion micro-benchmarks of the kernels, each checking its answer before timing.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use swath_kernels::compare::{first_mismatch, first_mismatch_naive, first_mismatch_words};
use swath_kernels::count::{count_byte, count_byte_naive};
use swath_kernels::transform::Cipher;

fn compare(c: &mut Criterion) {
    let len = 256 * 1024;
    let a: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
    let b = a.clone();
    let mut g = c.benchmark_group("first_mismatch_equal_256KiB");
    g.throughput(Throughput::Bytes(len as u64));
    assert_eq!(first_mismatch(&a, &b), None);
    g.bench_function("memcmp_chunks", |x| {
        x.iter(|| first_mismatch(black_box(&a), black_box(&b)))
    });
    g.bench_function("words", |x| {
        x.iter(|| first_mismatch_words(black_box(&a), black_box(&b)))
    });
    g.bench_function("naive", |x| {
        x.iter(|| first_mismatch_naive(black_box(&a), black_box(&b)))
    });
    g.finish();
}

fn count(c: &mut Criterion) {
    let len = 256 * 1024;
    let a: Vec<u8> = (0..len)
        .map(|i| if i % 60 == 0 { b'\n' } else { b'a' })
        .collect();
    assert_eq!(count_byte(&a, b'\n'), count_byte_naive(&a, b'\n'));
    let mut g = c.benchmark_group("count_newlines_256KiB");
    g.throughput(Throughput::Bytes(len as u64));
    g.bench_function("memchr", |x| x.iter(|| count_byte(black_box(&a), b'\n')));
    g.bench_function("naive", |x| {
        x.iter(|| count_byte_naive(black_box(&a), b'\n'))
    });
    g.finish();
}

fn transform(c: &mut Criterion) {
    let len = 256 * 1024;
    let src: Vec<u8> = (0..len)
        .map(|i| b"The quick brown fox 0123456789\n"[i % 31])
        .collect();
    for (name, cipher) in [
        ("shift", Cipher::bytes(3)),
        ("alphabet", Cipher::alphabet(3)),
    ] {
        let mut want = src.clone();
        cipher.apply_naive(&mut want);
        let mut got = src.clone();
        cipher.apply(&mut got);
        assert_eq!(got, want);
        let mut g = c.benchmark_group(format!("{name}_in_place_256KiB"));
        g.throughput(Throughput::Bytes(len as u64));
        let mut buf = src.clone();
        g.bench_function("simd", |x| x.iter(|| cipher.apply(black_box(&mut buf))));
        g.bench_function("scalar_table", |x| {
            x.iter(|| cipher.apply_scalar(black_box(&mut buf)))
        });
        g.bench_function("naive", |x| {
            x.iter(|| cipher.apply_naive(black_box(&mut buf)))
        });
        let mut dst = vec![0u8; len];
        g.bench_function("simd_copy", |x| {
            x.iter(|| cipher.apply_copy(black_box(&src), black_box(&mut dst)))
        });
        g.finish();
    }
}

fn wf2(c: &mut Criterion) {
    use swath_kernels::logs::{wf2_fields, wf2_fields_naive, wf2_fields_scalar};
    let log = swath_gen::log::LogGenerator::new(7)
        .damaged(true)
        .chunk(0, 4 << 20);
    let lines: Vec<&[u8]> = log.split(|&b| b == b'\n').collect();
    for l in &lines {
        assert_eq!(wf2_fields(l), wf2_fields_naive(l));
    }
    let mut g = c.benchmark_group("wf2_fields_4MiB_log");
    g.throughput(Throughput::Bytes(log.len() as u64));
    let lines = &lines;
    let run = |f: fn(&[u8]) -> Option<swath_kernels::logs::Wf2Fields<'_>>| {
        move || {
            lines
                .iter()
                .filter_map(|l| f(black_box(l)))
                .map(|f| f.referrer.len())
                .sum::<usize>()
        }
    };
    g.bench_function("sse2_masks", |x| x.iter(run(wf2_fields)));
    g.bench_function("scalar", |x| x.iter(run(wf2_fields_scalar)));
    g.bench_function("naive_split", |x| x.iter(run(wf2_fields_naive)));
    g.finish();
}

criterion_group!(benches, compare, count, transform, wf2);
criterion_main!(benches);
