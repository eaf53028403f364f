#!/usr/bin/env bash
# swath grep against GNU grep, ugrep and ripgrep, side by side with hyperfine, hot cache.
#
#   benchsuite/grep.sh [DATA_DIR]      (default: ./bench-data; needs ~10 GB free)
#
# Data: the seeds' 640,000,000-byte text (`swath gen text`), 1,000 files of mixed sizes cut
# from it (benchsuite/mixed.py), an 8 GiB text for the first-match case, and a source tree
# for -r: TREE (default DATA_DIR/patch/real/linux.new, the Linux 6.1.192 tree that
# benchsuite/patch-data.sh unpacks from Debian's linux-source package; 78,579 files).
# PART=tree runs only the tree cases, PART=features only context, back-references and -P. Every tool's
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
row() { python3 "$here/paired.py" "$@"; }
echo "| case | swath | peer | swath/peer per round (range) | speed-up |"
echo "|---|---:|---:|---:|---:|"
part=${PART:-all}
if [ "$part" = all ] || [ "$part" = tree ]; then
  tree=${TREE:-$data/patch/real/linux.new}
  [ -d "$tree" ] || { echo "grep.sh: no tree at $tree (benchsuite/patch-data.sh makes it)" >&2; exit 2; }
  cd "$tree"
  # swath's output is GNU's byte for byte; ripgrep's (in the order its threads finish) the
  # same lines once sorted.
  tcheck() {
    local want got
    want=$(grep -r "$@" . | md5sum) || true
    got=$("$swath" grep -r "$@" . | md5sum) || true
    [ "$got" = "$want" ] || { echo "swath differs on the tree: $*" >&2; exit 1; }
    local a rgargs=()   # ripgrep's -E is --encoding: its patterns are extended already
    for a in "$@"; do [ "$a" = -E ] || rgargs+=("$a"); done
    [ "$(rg -uuu --no-heading -H "${rgargs[@]}" . | sort | md5sum)" = "$(grep -r "$@" . | sort | md5sum)" ] ||
      echo "(rg's lines differ from GNU's for: $*)" >&2
  }
  tcheck -F PM_QOS_RESUME_LATENCY
  tcheck -F spin_lock_irqsave
  tcheck -E 'EXPORT_SYMBOL(_GPL)?\(kvm_[a-z_]+\)'
  tcheck -i -F 'nvme_admin'
  for case in "-F PM_QOS_RESUME_LATENCY" "-F spin_lock_irqsave" "-E 'EXPORT_SYMBOL(_GPL)?\(kvm_[a-z_]+\)'" \
              "-c -F spin_lock_irqsave" "-l -F spin_lock_irqsave" "-i -F nvme_admin"; do
    name=tree-$(echo "$case" | tr -c 'a-zA-Z0-9' '_' | cut -c1-40)
    row "$name-rg" "sh -c \"$swath grep -r $case .\"" "sh -c \"rg -uuu --no-heading -H ${case/-E /} .\""
    row "$name-gnu" "sh -c \"$swath grep -r $case .\"" "sh -c \"grep -r $case .\""
  done
  cd "$data"
fi
[ "$part" = tree ] && exit 0
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



if [ "$part" = all ] || [ "$part" = features ]; then
  # Context with rare matches (the target: at most 10 % over the same search without it).
  check -n -C 2 -F "$fixed" a.txt
  check -n -C 2 -E 'zq[a-z]+ zz' a.txt
  row grep-C2-rare-self "$swath grep -n -C 2 -E 'zq[a-z]+ zz' a.txt" "$swath grep -n -E 'zq[a-z]+ zz' a.txt"
  row grep-C2-rare-gnu "$swath grep -n -C 2 -E 'zq[a-z]+ zz' a.txt" "grep -n -C 2 -E 'zq[a-z]+ zz' a.txt"
  row grep-C2-rare-rg "$swath grep -n -C 2 -E 'zq[a-z]+ zz' a.txt" "rg -n -C 2 'zq[a-z]+ zz' a.txt"
  row grep-C2-regex-gnu "$swath grep -C 2 -E '$regex' a.txt" "grep -C 2 -E '$regex' a.txt"
  # Back-references (glibc's matcher on the filter's candidates) and -P (PCRE2).
  check -c '\([a-z]\)\1\1' a.txt
  check -c -E '\b([a-z]+) \1\b' a.txt
  check -c -P '(?<=q)u[a-z]+(?=z)' a.txt
  row grep-backref-gnu "$swath grep -c '\([a-z]\)\1\1' a.txt" "grep -c '\([a-z]\)\1\1' a.txt"
  row grep-backref-words-gnu "$swath grep -c -E '\b([a-z]+) \1\b' a.txt" "grep -c -E '\b([a-z]+) \1\b' a.txt"
  row grep-P-gnu "$swath grep -c -P '(?<=q)u[a-z]+(?=z)' a.txt" "grep -c -P '(?<=q)u[a-z]+(?=z)' a.txt"
  row grep-P-rg "$swath grep -c -P '(?<=q)u[a-z]+(?=z)' a.txt" "rg -c -P '(?<=q)u[a-z]+(?=z)' a.txt"
fi
[ "$part" = features ] && exit 0
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
