#!/usr/bin/env bash
# swath cmp against GNU cmp, side by side with hyperfine, on the seeds' 640,000,000-byte pair.
#
#   benchsuite/cmp.sh [DATA_DIR]        (default: ./bench-data; needs ~4 GB free, root for cold)
#
# Generates the data once with `swath gen`, checks that both tools give the same answer for
# every case, then times them: hot cache (warm-up runs, then RUNS alternating-order runs) and
# cold cache (page cache dropped before every run). Results land in benchsuite/results/ as
# Markdown and JSON; copy the figures you cite into BENCHMARKS.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data=${1:-$root/bench-data}
runs=${RUNS:-10}
cold_runs=${COLD_RUNS:-5}
out=$here/results
mkdir -p "$data" "$out"

command -v hyperfine >/dev/null || { echo "cmp.sh: hyperfine is required (apt-get install hyperfine)" >&2; exit 2; }
(cd "$root" && cargo build --release --quiet)
swath=$root/target/release/swath
size=640000000

gen() { [ -f "$data/$1" ] && [ "$(stat -c %s "$data/$1")" = "$2" ] || "${@:3}"; }
gen a.txt $size "$swath" gen text $size "$data/a.txt" --seed 1
gen same.txt $size "$swath" gen text $size "$data/same.txt" --seed 1
gen first.txt $size "$swath" gen mutate "$data/a.txt" "$data/first.txt" --at 0
gen mid.txt $size "$swath" gen mutate "$data/a.txt" "$data/mid.txt" --at 320000000
gen last.txt $size "$swath" gen mutate "$data/a.txt" "$data/last.txt" --at 639999999
gen many.txt $size "$swath" gen mutate "$data/a.txt" "$data/many.txt" --diffs 1000000 --seed 5
if [ ! -f "$data/sparse1" ]; then
  truncate -s 8G "$data/sparse1" "$data/sparse2"
  printf 'x' | dd of="$data/sparse2" bs=1 seek=1000 conv=notrunc status=none
fi

cd "$data"
check() {
  local a b
  a=$("$swath" cmp "$@" 2>&1 | md5sum; echo "${PIPESTATUS[0]}")
  b=$(cmp "$@" 2>&1 | md5sum; echo "${PIPESTATUS[0]}")
  [ "$a" = "$b" ] || { echo "cmp.sh: swath and GNU cmp disagree on: cmp $*" >&2; exit 1; }
}
cases=("a.txt same.txt" "a.txt first.txt" "a.txt mid.txt" "a.txt last.txt" "-l a.txt many.txt" "sparse1 sparse2")
for c in "${cases[@]}"; do check $c; done
echo "answers checked: swath cmp and GNU cmp agree on all cases"

{ echo "# machine"; nproc; free -g | head -2; uname -r; cmp --version | head -1; "$swath" --version; } > "$out/cmp-machine.txt"
paired=$here/paired.py
rounds=${ROUNDS:-5}
table=$out/cmp.md
{
  echo "| case (640,000,000-byte pair unless noted) | swath cmp | GNU cmp | swath/GNU per round: median (range) | speed-up |"
  echo "|---|---:|---:|---:|---:|"
} > "$table"
hot() {
  "$paired" "cmp-hot-$1" "$swath cmp $2" "cmp $2" --rounds "$rounds" --runs 3 --warmup 2 | sed "s/^| cmp-hot-$1 /| $3 /" | tee -a "$table"
}
hot same "a.txt same.txt" "hot, identical"
hot first "a.txt first.txt" "hot, difference at byte 1"
hot mid "a.txt mid.txt" "hot, difference in the middle"
hot last "a.txt last.txt" "hot, difference at the last byte"
hot many "-l a.txt many.txt" "hot, -l, 1,000,000 differences"
hot sparse "sparse1 sparse2" "8 GiB sparse pair, difference at byte 1001"
if [ "$(id -u)" = 0 ]; then
  "$paired" cmp-cold-same "$swath cmp a.txt same.txt" "cmp a.txt same.txt" --rounds "${COLD_ROUNDS:-6}" --runs 2 --warmup 0 \
    --prepare 'sh -c "sync; echo 3 > /proc/sys/vm/drop_caches"' | sed 's/^| cmp-cold-same /| cold, identical /' | tee -a "$table"
else
  echo "cmp.sh: not root: skipping the cold-cache runs (they drop the page cache)" >&2
fi
echo "results in $out"
