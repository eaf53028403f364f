#!/usr/bin/env bash
# swath grep against GNU grep, ugrep and ripgrep, side by side with hyperfine, hot cache.
#
#   benchsuite/grep.sh [DATA_DIR]      (default: ./bench-data; needs ~10 GB free)
#
# Data: the seeds' 640,000,000-byte text (`swath gen text`), 1,000 files of mixed sizes cut
# from it (benchsuite/mixed.py), and an 8 GiB text for the first-match case. Every tool's
# answer is checked against GNU grep's before it is timed. Rows are printed as Markdown by
# benchsuite/paired.py (alternating rounds, medians, per-round ratios).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data=${1:-$root/bench-data}
mkdir -p "$data"
for t in hyperfine rg ugrep; do
  command -v $t >/dev/null || { echo "grep.sh: $t is required (apt-get install hyperfine ripgrep ugrep)" >&2; exit 2; }
done
(cd "$root" && cargo build --release --quiet)
swath=$root/target/release/swath
[ -f "$data/a.txt" ] || "$swath" gen text 640000000 "$data/a.txt" --seed 1
[ -d "$data/mixed" ] || python3 "$here/mixed.py" "$data/a.txt" "$data/mixed"
[ -f "$data/big8g.txt" ] || "$swath" gen text 8589934592 "$data/big8g.txt" --seed 7
cd "$data"

fixed=zzzzqqq                # no match in the generated text
regex='[a-z]+q[a-z]+z '      # ~300,000 matching lines
# 18 bytes from offset 900,100 of the 8 GiB text: its first match lies in the first megabyte.
first=$(dd if=big8g.txt bs=1 skip=900100 count=18 status=none | tr '\n' ' ')

check() {  # check ARGS... -- FILES...: swath prints GNU's answer
  local want got
  want=$(grep "$@" | md5sum) || true
  got=$("$swath" grep "$@" | md5sum) || true
  [ "$got" = "$want" ] || { echo "swath differs: $*" >&2; exit 1; }
}
check -c -F "$fixed" a.txt
check -c -E "$regex" a.txt
check -m 1 -F "$first" big8g.txt
[ "$(rg -c -F "$fixed" a.txt || echo 0)" = "$(grep -c -F "$fixed" a.txt)" ]
[ "$(rg -c "$regex" a.txt)" = "$(grep -c -E "$regex" a.txt)" ]

row() { python3 "$here/paired.py" "$@"; }
echo "| case | swath | peer | swath/peer per round (range) | speed-up |"
echo "|---|---:|---:|---:|---:|"
row grep-F-rg "$swath grep -c -F $fixed a.txt" "rg -c -F $fixed a.txt"
row grep-F-gnu "$swath grep -c -F $fixed a.txt" "grep -c -F $fixed a.txt"
row grep-F-ugrep "$swath grep -c -F $fixed a.txt" "ugrep -c -F $fixed a.txt"
row grep-re-rg "$swath grep -c -E '$regex' a.txt" "rg -c '$regex' a.txt"
row grep-re-gnu "$swath grep -c -E '$regex' a.txt" "grep -c -E '$regex' a.txt"
row grep-re-ugrep "$swath grep -c -E '$regex' a.txt" "ugrep -c -E '$regex' a.txt"
row grep-re-frequent-rg "$swath grep -c -E 'e[a-z]+ [a-z]' a.txt" "rg -c 'e[a-z]+ [a-z]' a.txt"
row grep-m1 "$swath grep -m 1 -F '$first' big8g.txt" "grep -m 1 -F '$first' big8g.txt"
row grep-many-rg "sh -c '$swath grep -c -F $fixed mixed/*.txt'" "sh -c 'rg -c -F $fixed mixed/*.txt'"
row grep-many-gnu "sh -c '$swath grep -c -F $fixed mixed/*.txt'" "sh -c 'grep -c -F $fixed mixed/*.txt'"
row grep-many-re-rg "sh -c '$swath grep -c -E \"$regex\" mixed/*.txt'" "sh -c 'rg -c \"$regex\" mixed/*.txt'"
