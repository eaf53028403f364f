#!/usr/bin/env bash
# Partial results against the one-machine command: `swath logs wf2` over 8 generated 1 GiB
# logs, whole, and as pieces (`--range`/`--emit-partial`) merged by `swath merge`.
#
#   benchsuite/partial.sh [DATA_DIR]     (default: ./bench-data; needs ~9 GB free)
#
# Rows (hyperfine, hot cache, answers checked first):
#   whole      swath logs wf2 l0.log ... l7.log                      (all cores)
#   pieces     each of 8 files x PIECES ranges emitted one after another (all cores each),
#              then swath merge
#   workers    the same pieces on W single-threaded workers at once (xargs -P W,
#              --threads 1): what a cluster of W one-core workers does, then swath merge
#   merge      swath merge of the pieces alone
# and the size of a partial per GiB of log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data=${1:-$root/bench-data}/logs8
pieces=${PIECES:-4}
workers=${WORKERS:-2}
(cd "$root" && cargo build --release --quiet)
swath=$root/target/release/swath
mkdir -p "$data"
cd "$data"
for i in 0 1 2 3 4 5 6 7; do
  [ -f l$i.log ] || "$swath" gen log 1G l$i.log --seed $((20 + i)) --damaged >/dev/null
done
files="l0.log l1.log l2.log l3.log l4.log l5.log l6.log l7.log"
# The pieces: one `logs wf2 --range` command per line.
"$swath" split --pieces "$pieces" $files |
  awk -v s="$swath" '{ i = substr($1, 2, 1); printf "%s logs wf2 --range %s:%s --operand-index %s --emit-partial parts/%s.%s %s\n", s, $2, $3, i, i, $2, $1 }' > cmds.txt
emit='rm -rf parts && mkdir parts && sh cmds.txt'
emit_w="rm -rf parts && mkdir parts && sed 's/ logs wf2 / logs wf2 --threads 1 /' cmds.txt | xargs -P $workers -I{} sh -c '{}'"
sh -c "$emit"
[ "$("$swath" merge parts/* | md5sum)" = "$("$swath" logs wf2 $files | md5sum)" ] || { echo "partial.sh: merged report differs" >&2; exit 1; }
echo "partials: $(ls parts | wc -l), $(cat parts/* | wc -c) bytes for $(cat $files | wc -c) bytes of log"
hyperfine -N --output=pipe -w 1 -r 5 \
  "$swath logs wf2 $files" \
  "sh -c '$emit && $swath merge parts/*'" \
  "sh -c \"$emit_w && $swath merge parts/*\"" \
  "$swath merge $(ls parts/* | tr '\n' ' ')" \
  "$swath logs wf2 --threads 1 l0.log"
