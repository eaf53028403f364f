//! The boundary scan beside the `fastcdc` crate (FastCDC 2020, same average, minimum and
//! maximum), on 64 MiB of random bytes, one core: swath's cuts with each kernel
//! ([`Kernel`]), its first stage alone (the candidates), and the scan with XXH3-128 of each
//! chunk (what a signature costs). Each side's chunk count is printed before timing, and
//! every kernel's cuts are checked against the scalar one's.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use swath_patch::cdc::{candidates, Cutter, Kernel, Params};
use swath_patch::signature::signature_of_slice;

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
    let kernels = Kernel::available();
    for avg in [1024usize, 4096] {
        let p = Params::new(avg).unwrap();
        let cuts_with = |k: Kernel| {
            let mut cuts = Vec::with_capacity(d.len() / avg * 2);
            Cutter::new(k).cut_all(&d, 0, &p, true, &mut cuts);
            cuts
        };
        let reference = cuts_with(Kernel::Scalar);
        for &k in &kernels {
            assert_eq!(cuts_with(k), reference, "{k:?}");
        }
        let theirs =
            fastcdc::v2020::FastCDC::new(&d, p.min as u32, avg as u32, p.max as u32).count();
        eprintln!(
            "avg {avg}: swath {} chunks, fastcdc {theirs}",
            reference.len()
        );
        let mut g = c.benchmark_group(format!("cdc_64MiB_avg{avg}"));
        g.throughput(Throughput::Bytes(d.len() as u64));
        g.sample_size(10);
        for &k in &kernels {
            g.bench_function(format!("swath_cut_all_{k:?}"), |b| {
                b.iter(|| {
                    let mut cuts = Vec::with_capacity(d.len() / avg * 2);
                    Cutter::new(k).cut_all(black_box(&d), 0, &p, true, &mut cuts);
                    cuts.len()
                })
            });
            g.bench_function(format!("swath_candidates_{k:?}"), |b| {
                b.iter(|| {
                    let mut found = Vec::with_capacity(d.len() / avg * 2);
                    candidates(k, black_box(&d), 63, d.len(), p.threshold, &mut found);
                    found.len()
                })
            });
        }
        g.bench_function("fastcdc_v2020", |b| {
            b.iter(|| {
                fastcdc::v2020::FastCDC::new(black_box(&d), p.min as u32, avg as u32, p.max as u32)
                    .count()
            })
        });
        g.bench_function("swath_signature_with_xxh3", |b| {
            b.iter(|| signature_of_slice(black_box(&d), &p).len())
        });
        g.finish();
    }
}

criterion_group!(benches, scan);
criterion_main!(benches);
