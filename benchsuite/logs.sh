#!/usr/bin/env bash
# swath logs against its targets and against GoAccess, hot cache, side by side.
#
#   benchsuite/logs.sh [DATA_DIR]        (default: ./bench-data; needs ~5 GB free)
#
# Data from `swath gen log` (the Wide Finder sample's distributions): a 4 GiB log for the
# wf2 throughput target and a 256 MiB log for the GoAccess comparison (GoAccess parses about
# 50,000 lines a second here, so a bigger log takes minutes per run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data=${1:-$root/bench-data}
mkdir -p "$data"
command -v hyperfine >/dev/null || { echo "logs.sh: hyperfine is required" >&2; exit 2; }
command -v goaccess >/dev/null || { echo "logs.sh: goaccess is required (apt-get install goaccess)" >&2; exit 2; }
(cd "$root" && cargo build --release --quiet)
swath=$root/target/release/swath
[ -f "$data/gen4g.log" ] || "$swath" gen log 4G "$data/gen4g.log" --seed 11 --damaged
[ -f "$data/gen256m.log" ] || "$swath" gen log 256M "$data/gen256m.log" --seed 5 --damaged
[ -f "$data/gen1g.log" ] || "$swath" gen log 1G "$data/gen1g.log" --seed 7 --damaged
[ -f "$data/gen1g.log.zst" ] || zstd -q -3 -k "$data/gen1g.log"
[ -f "$data/gen1g.log.gz" ] || gzip -1 -k "$data/gen1g.log"
cd "$data"
cat gen4g.log > /dev/null
echo "wf2 on the 4 GiB log, hot (GB/s = 4.295 / seconds):"
hyperfine -N -w 1 -r 10 --style basic --export-json wf2.json "$swath logs wf2 gen4g.log" 2>&1 | grep -E "Time|Range"
python3 -c 'import json; r = json.load(open("wf2.json"))["results"][0]; m = r["median"]; print(f"  median {m:.3f} s = {4.294967296 / m:.2f} GB/s")'
rm -f wf2.json
"$swath" logs wf2 --time gen4g.log > /dev/null
echo
echo "| case | swath | GoAccess | swath/GoAccess per round (range) | speed-up |"
echo "|---|---:|---:|---:|---:|"
python3 "$here/paired.py" summary-goaccess "$swath logs summary --json gen256m.log" \
  "goaccess --log-format=COMBINED -o $data/goaccess-report.json gen256m.log" --rounds 3 --runs 1 --warmup 0
# Issue 14's target: the page with every panel on a 1 GiB combined log, against GoAccess's
# page (GoAccess takes about 3.5 minutes a run here: two rounds).
python3 "$here/paired.py" summary-html-goaccess "$swath logs summary --html $data/swath-report.html gen1g.log" \
  "goaccess --log-format=COMBINED -o $data/goaccess-report.html gen1g.log" --rounds 2 --runs 1 --warmup 0
echo
echo "Compressed logs against their decoders (the report's time / the decoder's):"
echo "| case | swath | decoder | ratio (range) | speed-up |"
echo "|---|---:|---:|---:|---:|"
python3 "$here/paired.py" summary-zst "$swath logs summary gen1g.log.zst" "sh -c 'zstd -dc gen1g.log.zst | wc -l'" --rounds 3 --runs 1
python3 "$here/paired.py" summary-gz "$swath logs summary gen1g.log.gz" "sh -c 'zcat gen1g.log.gz | wc -l'" --rounds 3 --runs 1
python3 "$here/paired.py" summary-plain "$swath logs summary gen1g.log" "sh -c 'wc -l gen1g.log'" --rounds 3 --runs 1
