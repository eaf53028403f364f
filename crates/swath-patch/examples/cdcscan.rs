//! Runs one boundary-scan kernel over 64 MiB of random bytes a number of times, for
//! `perf stat` (cycles and instructions per byte): `cdcscan KERNEL STAGE AVG REPS`, with
//! KERNEL scalar|lanes|fastcdc and STAGE cuts|candidates.

use swath_patch::cdc::{candidates, Cutter, Kernel, Params};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kernel = args.get(1).map_or("lanes", String::as_str);
    let stage = args.get(2).map_or("cuts", String::as_str);
    let avg: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1024);
    let reps: usize = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(10);
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let d: Vec<u8> = (0..64 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    let p = Params::new(avg).unwrap();
    let k = match kernel {
        "scalar" => Kernel::Scalar,
        _ => Kernel::Lanes,
    };
    let t = std::time::Instant::now();
    let mut n = 0;
    for _ in 0..reps {
        n += match (kernel, stage) {
            ("fastcdc", _) => {
                fastcdc::v2020::FastCDC::new(&d, p.min as u32, avg as u32, p.max as u32).count()
            }
            (_, "candidates") => {
                let mut f = Vec::new();
                candidates(k, &d, 63, d.len(), p.threshold, &mut f);
                f.len()
            }
            _ => {
                let mut cuts = Vec::new();
                Cutter::new(k).cut_all(&d, 0, &p, true, &mut cuts);
                cuts.len()
            }
        };
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{kernel} {stage} avg {avg}: {n} chunks, {:.3} GB/s",
        (reps * d.len()) as f64 / secs / 1e9
    );
}
