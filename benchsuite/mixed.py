#!/usr/bin/env python3
"""Cuts N files of log-uniformly mixed sizes (1 KB to 4 MB by default) out of a text file.

    mixed.py SOURCE OUT_DIR [--count 1000] [--min 1000] [--max 4000000] [--seed 1]

Each file is a slice of SOURCE starting at a random offset, so every file holds real text.
The same seed gives the same files. Used by the many-files benchmarks of wc and grep.
"""
import argparse
import math
import os
import random


def main():
    p = argparse.ArgumentParser()
    p.add_argument("source")
    p.add_argument("out")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--min", type=int, default=1000)
    p.add_argument("--max", type=int, default=4_000_000)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    size = os.path.getsize(a.source)
    os.makedirs(a.out, exist_ok=True)
    total = 0
    with open(a.source, "rb") as src:
        for i in range(a.count):
            n = int(math.exp(rng.uniform(math.log(a.min), math.log(a.max))))
            src.seek(rng.randrange(0, max(1, size - n)))
            data = src.read(n)
            with open(os.path.join(a.out, f"f{i:04d}.txt"), "wb") as f:
                f.write(data)
            total += len(data)
    print(f"{a.count} files, {total} bytes in {a.out}")


if __name__ == "__main__":
    main()
