//! The seed scan ([`for_each_seed`]: a multiplication gate at every position, then the
//! sampled windows hashed) with each gate, on 64 MiB of random bytes, one core, 14-byte
//! windows, one in 16 sampled (`--level default`). Both gates' seeds are checked equal
//! before timing.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use swath_patch::seeds::{for_each_seed_gated, Gate};

fn data(len: usize) -> Vec<u8> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

fn scan(c: &mut Criterion) {
    let d = data(64 << 20);
    let run = |gate: Gate| {
        let (mut n, mut x) = (0u64, 0u64);
        for_each_seed_gated(gate, &d, 0, d.len(), 14, 4, |p, h| {
            n += 1;
            x ^= h ^ p as u64;
        });
        (n, x)
    };
    let gates = match Gate::best() {
        Gate::Scalar => vec![Gate::Scalar],
        best => vec![Gate::Scalar, best],
    };
    let reference = run(Gate::Scalar);
    eprintln!("{} seeds in 64 MiB", reference.0);
    for &g in &gates {
        assert_eq!(run(g), reference, "{g:?}");
    }
    let mut group = c.benchmark_group("seeds_64MiB_window14_rate4");
    group.throughput(Throughput::Bytes(d.len() as u64));
    group.sample_size(10);
    for &g in &gates {
        group.bench_function(format!("{g:?}"), |b| b.iter(|| black_box(run(g))));
    }
    group.finish();
}

criterion_group!(benches, scan);
criterion_main!(benches);
