#!/usr/bin/env python3
"""Paired timing with hyperfine: two commands measured in alternating rounds.

    paired.py NAME 'COMMAND_A' 'COMMAND_B' [--rounds R] [--runs K] [--warmup W] [--prepare CMD]

Each round runs hyperfine on both commands (K runs each, A first in odd rounds and B first in
even ones), so drift on a shared, noisy machine hits both alike. Prints one Markdown table row:
the median wall time of each command over all runs, the median of the per-round ratios A/B,
and their range; appends the raw times to results/NAME.json.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def hyperfine(commands, runs, warmup, prepare):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        args = ["hyperfine", "-N", "-i", "--output=pipe", "--style=none",
                "--runs", str(runs), "--warmup", str(warmup), "--export-json", out.name]
        if prepare:
            args = args[:1] + ["--prepare", prepare] + args[1:]
            args.remove("-N")
        subprocess.run(args + commands, check=True, stdout=subprocess.DEVNULL)
        data = json.load(open(out.name))
    return {r["command"]: r["times"] for r in data["results"]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--prepare")
    o = p.parse_args()
    times = {o.a: [], o.b: []}
    ratios = []
    for r in range(o.rounds):
        order = [o.a, o.b] if r % 2 == 0 else [o.b, o.a]
        t = hyperfine(order, o.runs, o.warmup, o.prepare)
        times[o.a] += t[o.a]
        times[o.b] += t[o.b]
        ratios.append(statistics.median(t[o.a]) / statistics.median(t[o.b]))
    ma, mb = statistics.median(times[o.a]), statistics.median(times[o.b])
    rr = statistics.median(ratios)
    print(f"| {o.name} | {ma * 1000:.1f} ms | {mb * 1000:.1f} ms | {rr:.3f} "
          f"({min(ratios):.3f}-{max(ratios):.3f}) | {mb / ma:.2f}x |")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", f"{o.name}.json"), "w") as f:
        json.dump({"a": o.a, "b": o.b, "times": times, "round_ratios": ratios}, f)


if __name__ == "__main__":
    sys.exit(main())
