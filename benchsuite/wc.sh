#!/usr/bin/env bash
# swath wc against GNU wc on mixed UTF-8 text, side by side with hyperfine, hot cache.
#
#   benchsuite/wc.sh [DATA_DIR]      (default: ./bench-data; needs ~2 GB free)
#
# Data: the seeds' 640,000,000-byte text (`swath gen text`, pure ASCII) and the same text
# with ` café 日本` on every 200th line, a tab on every 37th and a carriage return on every
# 101st (benchsuite/wc-mixed.py, 639,999,994 bytes), and the 1,000 files of mixed sizes of
# benchsuite/mixed.py. LANG=C.UTF-8, so GNU wc decodes UTF-8. Every answer is checked
# against GNU wc's before it is timed; the read ceiling of the same file (limits.c: pread
# and mmap, 1 and 2 threads) is printed first when LIMITS points at its binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data=${1:-$root/bench-data}
mkdir -p "$data"
command -v hyperfine >/dev/null || { echo "wc.sh: hyperfine is required" >&2; exit 2; }
(cd "$root" && cargo build --release --quiet)
swath=$root/target/release/swath
export LANG=C.UTF-8 LC_ALL=C.UTF-8
[ -f "$data/a.txt" ] || "$swath" gen text 640000000 "$data/a.txt" --seed 1
[ -d "$data/mixed" ] || python3 "$here/mixed.py" "$data/a.txt" "$data/mixed"
if [ ! -f "$data/mixed640.txt" ]; then
  cat "$data/a.txt" "$data/a.txt" | python3 "$here/wc-mixed.py" /dev/stdin "$data/mixed640.txt"
fi
[ -f "$data/ascii640.txt" ] || head -c "$(stat -c %s "$data/mixed640.txt")" "$data/a.txt" > "$data/ascii640.txt"
cd "$data"
[ -n "${LIMITS:-}" ] && "$LIMITS" mixed640.txt 3
check() {
  [ "$("$swath" wc "$@")" = "$(wc "$@")" ] || { echo "wc.sh: swath wc differs from GNU wc: $*" >&2; exit 1; }
}
row() { python3 "$here/paired.py" "$@" 2>/dev/null; }
echo "| case | swath | peer | swath/peer per round (range) | speed-up |"
echo "|---|---:|---:|---:|---:|"
for o in "" -m -L; do
  check $o mixed640.txt
  check $o ascii640.txt
  row "wc-mixed${o}-gnu" "$swath wc $o mixed640.txt" "wc $o mixed640.txt" --rounds 3 --runs 2
  row "wc-mixed${o}-vs-ascii" "$swath wc $o mixed640.txt" "$swath wc $o ascii640.txt" --rounds 3 --runs 5
done
check -l mixed/*.txt
row wc-many-l-gnu "sh -c '$swath wc -l mixed/*.txt'" "sh -c 'wc -l mixed/*.txt'" --rounds 3 --runs 5
