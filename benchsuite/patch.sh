#!/usr/bin/env bash
# swath patch against xdelta3, rdiff and zstd --patch-from, on generated pairs.
#
#   benchsuite/patch.sh [DATA_DIR]      (default: ./bench-data/patch; needs ~4 GB free)
#
# Pairs, made once with `swath gen` (SIZE defaults to 1G; SMALL to 256M):
#   near:     SIZE of text and a copy with 1000 bytes changed in place (a nearly identical
#             revision);
#   revision: the first SMALL bytes of it and a revision with insertions, deletions, moves,
#             duplications, zero runs and rebuild noise (one 4-byte value in ~1000 moved).
# Every tool's patch is applied and compared with NEW before anything is timed. Fast tools
# are timed with hyperfine (warm-up, then RUNS runs, alternating commands); the slow ones
# (xdelta3 -9, zstd -19) once with /usr/bin/time. The read ceiling of OLD comes from
# ../shared/tools/limits.c when it can be built. Results: benchsuite/results/patch.md.
# Real release pairs (native libraries, source trees) are not fetched by this script yet.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data=${1:-$root/bench-data/patch}
size=${SIZE:-1G}
small=${SMALL:-256M}
runs=${RUNS:-5}
out=$here/results
table=$out/patch.md
mkdir -p "$data" "$out"

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
need=()
for t in hyperfine xdelta3 rdiff zstd; do command -v "$t" >/dev/null || need+=("$t"); done
if [ "${#need[@]}" -gt 0 ]; then
  as_root apt-get install -y -qq "${need[@]}"
fi
(cd "$root" && cargo build --release --quiet)
swath=$root/target/release/swath
limits=""
if [ -f "$root/../shared/tools/limits.c" ] && cc -O2 -pthread -o "$data/limits" "$root/../shared/tools/limits.c" 2>/dev/null; then
  limits=$data/limits
fi

cd "$data"
[ -f near.old ] || "$swath" gen text "$size" near.old --seed 3
[ -f near.new ] || "$swath" gen mutate near.old near.new --diffs 1000 --seed 4
[ -f rev.old ] || head -c "$(numfmt --from=iec "$small")" near.old > rev.old
[ -f rev.new ] || "$swath" gen mutate rev.old rev.new --insertions 20 --deletions 20 --moves 10 \
  --duplicates 5 --zero-runs 5 --noise 1000 --seed 11

check() { # NAME NEWFILE OUTFILE
  cmp -s "$2" "$3" || { echo "patch.sh: $1 did not rebuild NEW" >&2; exit 1; }
}

{
  echo "# swath patch beside its peers ($(date -u +%F))"
  echo
  echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(xdelta3 -V 2>&1 | head -1); $(zstd -V); $("$swath" --version)"
} > "$table"

for pair in near rev; do
  old=$pair.old new=$pair.new
  bytes=$(stat -c %s "$old")
  echo "patch.sh: $pair pair, OLD $bytes bytes" >&2
  # Answers first: every patch rebuilds NEW.
  "$swath" patch make "$old" "$new" "$pair.fast.swp"
  "$swath" patch apply "$old" "$pair.fast.swp" "$pair.out" && check "swath fast" "$new" "$pair.out"
  "$swath" patch make --level default "$old" "$new" "$pair.default.swp"
  "$swath" patch apply "$old" "$pair.default.swp" "$pair.out" && check "swath default" "$new" "$pair.out"
  xdelta3 -e -0 -S none -f -B "$bytes" -s "$old" "$new" "$pair.x0"
  xdelta3 -d -f -B "$bytes" -s "$old" "$pair.x0" "$pair.out" && check "xdelta3 -0" "$new" "$pair.out"
  rdiff signature -b 1024 -S 12 "$old" "$pair.sig" 2>/dev/null
  rdiff -f delta "$pair.sig" "$new" "$pair.rdiff"
  rdiff -f patch "$old" "$pair.rdiff" "$pair.out" && check "rdiff" "$new" "$pair.out"
  {
    echo
    echo "## $pair pair ($bytes bytes of OLD), hot, hyperfine -N -w 1 -r $runs"
    echo
    [ -n "$limits" ] && { echo '```'; "$limits" "$old" 3; echo '```'; }
  } >> "$table"
  hyperfine -N -w 1 -r "$runs" --export-markdown "$data/$pair.make.md" \
    "$swath patch make $old $new $pair.fast.swp" \
    "$swath patch make --level default $old $new $pair.default.swp" \
    "xdelta3 -e -0 -S none -f -B $bytes -s $old $new $pair.x0" \
    "rdiff -f delta $pair.sig $new $pair.rdiff" >&2
  cat "$data/$pair.make.md" >> "$table"
  {
    echo
    echo "| patch | bytes |"
    echo "|---|---:|"
    for f in "$pair.fast.swp" "$pair.default.swp" "$pair.x0" "$pair.rdiff"; do
      echo "| $f | $(stat -c %s "$f") |"
    done
    echo
    echo "Slow peers, one run each (/usr/bin/time: seconds, peak KB, patch bytes):"
    echo
  } >> "$table"
  for cmd in "xdelta3 -e -9 -S none -f -B $bytes -s $old $new $pair.x9" \
             "zstd -q -f -19 --long=31 --patch-from=$old $new -o $pair.z19"; do
    t=$( { /usr/bin/time -f "%e %M" $cmd; } 2>&1 | tail -1)
    f=${cmd##* }
    echo "- \`$cmd\`: $t, $(stat -c %s "$f") bytes" >> "$table"
  done
  xdelta3 -d -f -B "$bytes" -s "$old" "$pair.x9" "$pair.out" && check "xdelta3 -9" "$new" "$pair.out"
  hyperfine -N -w 1 -r "$runs" --export-markdown "$data/$pair.apply.md" \
    "$swath patch apply $old $pair.fast.swp $pair.out" \
    "xdelta3 -d -f -B $bytes -s $old $pair.x0 $pair.out" >&2
  { echo; echo "apply:"; echo; cat "$data/$pair.apply.md"; } >> "$table"
done
rm -f ./*.out
echo "results in $table"
