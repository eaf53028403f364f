#!/usr/bin/env bash
# Before and after a change: two swath binaries side by side on the seeds' 640 MB text, hot
# cache, with hyperfine (benchsuite/paired.py: rounds alternating which binary runs first).
#
#   benchsuite/before-after.sh BEFORE AFTER [DATA_DIR]    (default DATA_DIR: ./bench-data)
#
# BEFORE and AFTER are swath binaries (for example a release build of the last release's
# commit and target/release/swath). Each command's output is checked equal between the two
# before it is timed. The read ceiling of the same file (limits.c: pread and mmap, 1 and 2
# threads) is printed first when LIMITS points at its binary. A ratio AFTER/BEFORE near 1
# (its range straddling 1) is no change.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
before=$(realpath "$1")
after=$(realpath "$2")
data=${3:-$root/bench-data}
mkdir -p "$data"
command -v hyperfine >/dev/null || { echo "before-after.sh: hyperfine is required" >&2; exit 2; }
export LANG=C.UTF-8 LC_ALL=C.UTF-8
[ -f "$data/a.txt" ] || "$after" gen text 640000000 "$data/a.txt" --seed 1
[ -f "$data/same.txt" ] || cp "$data/a.txt" "$data/same.txt"
cd "$data"
[ -n "${LIMITS:-}" ] && "$LIMITS" a.txt 3
rounds=${ROUNDS:-4}
cases=(
  "cmp a.txt same.txt"
  "wc a.txt"
  "grep -c -F zzzzqqq a.txt"
  "grep -c the a.txt"
  "grep -n -F qqqz a.txt"
  "cipher --shift 3 a.txt o"
  "cp a.txt o"
)
for c in "${cases[@]}"; do
  # shellcheck disable=SC2086
  a=$("$before" $c 2>&1; echo "status $?"; [ -f o ] && cksum < o || true)
  rm -f o
  # shellcheck disable=SC2086
  b=$("$after" $c 2>&1; echo "status $?"; [ -f o ] && cksum < o || true)
  rm -f o
  [ "$a" = "$b" ] || { echo "before-after.sh: outputs differ for: $c" >&2; printf "before: %s\nafter: %s\n" "$a" "$b" >&2; exit 1; }
  python3 "$here/paired.py" "before-after: $c" "$after $c" "$before $c" \
    --rounds "$rounds" --runs 3 --warmup 2
done
