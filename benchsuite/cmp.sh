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
for c in "${cases[@]}"; do
  name=$(echo "$c" | tr ' .' '__')
  hyperfine -N -i --warmup 2 -r "$runs" --output=pipe \
    --export-markdown "$out/cmp-hot-$name.md" --export-json "$out/cmp-hot-$name.json" \
    "$swath cmp $c" "cmp $c"
done
if [ "$(id -u)" = 0 ]; then
  hyperfine -N -i -r "$cold_runs" --output=pipe \
    --prepare 'sh -c "sync; echo 3 > /proc/sys/vm/drop_caches"' \
    --export-markdown "$out/cmp-cold.md" --export-json "$out/cmp-cold.json" \
    "$swath cmp a.txt same.txt" "cmp a.txt same.txt"
else
  echo "cmp.sh: not root: skipping the cold-cache runs (they drop the page cache)" >&2
fi
echo "results in $out"
