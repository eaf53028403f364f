#!/usr/bin/env python3
"""`swath.dask.summary` over 8 generated 1 GiB logs on a LocalCluster of 2 worker
processes (one thread each): the report printed by one task against the report merged by
hash range (issue 29).

    benchsuite/dask-summary.py DATA_DIR      (l0.log .. l7.log: `swath gen log --damaged --seed K 1G`)

Run it in the venv of scripts/test-python with the extension built for speed
(`cd crates/swath-py && maturin develop --release`). Each case runs ROUNDS times (default
3) after a warm-up, alternating; medians are printed. Every report is checked against the
CLI's. For each case: the map phase (`sd.summary(...)` returns when every partial is
made) and the merge and print (`.bytes()`), and the second's share of the whole.
  one-task       ranges=0: the report merged and printed by one task on one worker
  ranges-N       ranges=N: cut on each worker, a task a range, combined on the client
"""

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from distributed import Client, LocalCluster

import swath.dask as sd

root = Path(__file__).resolve().parents[1]
data = Path(sys.argv[1])
files = [str(data / f"l{i}.log") for i in range(8)]
swath_bin = str(root / "target" / "release" / "swath")
rounds = int(os.environ.get("ROUNDS", "3"))
blocksize = os.environ.get("BLOCKSIZE", "256MiB")
workers = int(os.environ.get("WORKERS", "2"))
cases = {"one-task": 0, "ranges-2": 2, "ranges-4": 4}
total = sum(os.path.getsize(f) for f in files)


def main():
    t = time.perf_counter()
    expected = subprocess.run(
        [swath_bin, "logs", "summary", *files], stdout=subprocess.PIPE, check=True
    ).stdout
    print(f"CLI: {time.perf_counter() - t:.2f} s", flush=True)
    cluster = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    c = Client(cluster, set_as_default=False)
    times: dict = {}
    for k in range(rounds + 1):
        for name, ranges in cases.items():
            t0 = time.perf_counter()
            r = sd.summary(files, client=c, blocksize=blocksize, ranges=ranges)
            t1 = time.perf_counter()
            out = r.bytes()
            t2 = time.perf_counter()
            assert out == expected, f"{name}: the report differs from the CLI's"
            del r
            row = (t2 - t0, t1 - t0, t2 - t1)
            print(
                f"round {k} {name}: whole {row[0]:.2f} s, map {row[1]:.2f} s, "
                f"merge and print {row[2]:.2f} s ({100 * row[2] / row[0]:.1f} %)",
                flush=True,
            )
            if k > 0:
                times.setdefault(name, []).append(row)
    print(f"\nmedians of {rounds} rounds, {total / (1 << 30):.0f} GiB, blocksize {blocksize}, {workers} workers")
    print("| case | whole run | map | merge and print | share of the run |")
    print("|---|---:|---:|---:|---:|")
    for name, rows in times.items():
        whole, m, p = (statistics.median(x[i] for x in rows) for i in range(3))
        shares = [100 * x[2] / x[0] for x in rows]
        print(
            f"| {name} | {whole:.2f} s | {m:.2f} s | {p:.2f} s | {statistics.median(shares):.1f} % "
            f"({min(shares):.1f}-{max(shares):.1f}) |"
        )
    c.close()
    cluster.close()


if __name__ == "__main__":
    main()
