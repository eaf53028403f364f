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
[ -f "$data/gen4g.log" ] || "$swath" gen log 4G "$data/gen4g.log" --seed 11
[ -f "$data/gen256m.log" ] || "$swath" gen log 256M "$data/gen256m.log" --seed 5
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
