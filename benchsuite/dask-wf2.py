#!/usr/bin/env python3
"""`swath.dask.wf2` over 8 generated 1 GiB logs on LocalClusters of 1 and 2 worker
processes (one thread each), beside the CLI on all cores and on one core.

    benchsuite/dask-wf2.py [DATA_DIR]     (default ./bench-data; the logs of partial.sh)

Run it in the venv of scripts/test-python with the extension built for speed
(`cd crates/swath-py && maturin develop --release`). Each case runs ROUNDS times (default
3) after a warm-up, alternating; medians are printed. The answer is checked against the
CLI's first. Rows:
  cli            swath logs wf2 l0..l7 (all cores)
  cli-1core      swath logs wf2 --threads 1 l0..l7 (the same job on one core)
  dask-Nw        swath.dask.wf2(...).bytes() on N worker processes (blocksize 256 MiB,
                 split_every 8): the whole job, the report printed
Per-worker throughput is compared with the CLI's per-core throughput on the same job with
as many cores busy: 1 worker with the CLI on 1 core, 2 workers with the CLI on 2 cores
(two busy cores of this machine share its memory bandwidth: each is slower than one
alone).
  dask-Nw-map    the same graph's piece tasks alone (no merge): the merge's share is the rest
"""

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import dask
from distributed import Client, LocalCluster, wait

import swath
import swath.dask as sd

root = Path(__file__).resolve().parents[1]
data = Path(sys.argv[1] if len(sys.argv) > 1 else root / "bench-data") / "logs8"
files = [str(data / f"l{i}.log") for i in range(8)]
swath_bin = str(root / "target" / "release" / "swath")
rounds = int(os.environ.get("ROUNDS", "3"))
blocksize = os.environ.get("BLOCKSIZE", "256MiB")
GiB = 1 << 30
total = sum(os.path.getsize(f) for f in files)


def run_cli(args):
    t = time.perf_counter()
    p = subprocess.run([swath_bin, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, p.stdout


def pieces_only(client):
    """The piece tasks of the wf2 graph, computed and kept on the workers (no merge)."""
    inputs = sd._list(files, None)
    size = dask.utils.parse_bytes(blocksize)
    opts = {"top": 10, "max_line": 4 << 20, "threads": 1}
    futures = [
        client.submit(sd._piece, "wf2", inp, s, e, opts, pure=False)
        for inp in inputs
        for s, e in sd._ranges(inp, size)
    ]
    t = time.perf_counter()
    with client.as_current():
        wait(futures)
    elapsed = time.perf_counter() - t
    sizes = client.gather([client.submit(len, f) for f in futures])
    for f in futures:
        f.release()
    return elapsed, sum(sizes), len(sizes)


def main():
    expected = run_cli(["logs", "wf2", *files])[1]
    times = {}
    clusters = {}
    for n in (1, 2):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0")
        clusters[n] = (cluster, Client(cluster, set_as_default=False))
    for n, (_, c) in clusters.items():
        r = sd.wf2(files, client=c, blocksize=blocksize)
        assert r.bytes() == expected, f"{n} workers: report differs from the CLI's"
        del r  # its partials, held on the workers
    print("answers checked: dask reports equal the CLI's", flush=True)
    part_bytes = None
    for k in range(rounds + 1):
        row = {}
        row["cli"] = run_cli(["logs", "wf2", *files])[0]
        row["cli-1core"] = run_cli(["logs", "wf2", "--threads", "1", *files])[0]
        for n, (_, c) in clusters.items():
            t = time.perf_counter()
            sd.wf2(files, client=c, blocksize=blocksize).bytes()
            row[f"dask-{n}w"] = time.perf_counter() - t
            row[f"dask-{n}w-map"], part_bytes, npieces = pieces_only(c)
        if k == 0:
            continue  # warm-up
        for key, v in row.items():
            times.setdefault(key, []).append(v)
        print(f"round {k}: " + ", ".join(f"{key} {v:.2f} s" for key, v in row.items()), flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    core = {1: total / med["cli-1core"] / 1e9, 2: total / med["cli"] / 2e9}
    print(f"\nmedians of {rounds} rounds, {total / GiB:.0f} GiB of logs, blocksize {blocksize}, {npieces} pieces")
    print(f"| case | time | throughput | per worker/core | vs CLI per core |")
    print(f"|---|---:|---:|---:|---:|")
    print(f"| CLI, 2 cores | {med['cli']:.2f} s | {total / med['cli'] / 1e9:.2f} GB/s | {core[2]:.2f} GB/s | |")
    print(f"| CLI, 1 core | {med['cli-1core']:.2f} s | {core[1]:.2f} GB/s | {core[1]:.2f} GB/s | |")
    for n in (1, 2):
        t = med[f"dask-{n}w"]
        per = total / t / n / 1e9
        share = max(0.0, (t - med[f"dask-{n}w-map"]) / t)
        print(f"| swath.dask, {n} worker{'s' if n > 1 else ''} | {t:.2f} s | {total / t / 1e9:.2f} GB/s | {per:.2f} GB/s | {100 * per / core[n]:.0f} % of the CLI on {n} core{'s' if n > 1 else ''} (merge and return: {100 * share:.0f} % of the run) |")
    print(f"\npartials: {part_bytes} bytes for {total} bytes of log: {part_bytes / (total / GiB) / 1e6:.1f} MB per GiB")
    for cluster, c in clusters.values():
        c.close()
        cluster.close()


if __name__ == "__main__":
    main()
