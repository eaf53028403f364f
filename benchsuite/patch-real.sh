#!/usr/bin/env bash
# swath patch beside xdelta3, zstd --patch-from, bsdiff, rdiff and HDiffPatch on real pairs.
#
#   benchsuite/patch-real.sh [DATA_DIR]    (default: bench-data/patch/real; make it first with
#                                           benchsuite/patch-data.sh DATA_DIR)
#
# Environment: PAIRS (default "duckdb ruff jaxlib linux kdbg", plus big when BIG=1; PAIRS= only
# assembles the results file from the sections already made), RUNS (3),
# TIMEOUT (seconds a single make or apply may take, 1800), SLOW_S (a fast tool whose first
# make took longer than this is not repeated, 60), TOOLS (a regex: run only the tools whose
# names match), KEEP_ROWS=1 (add to the pair's rows of an earlier, interrupted run),
# RENDER_ONLY=1 (close the sections of PAIRS from the rows a stopped run left, then assemble).
#
# For each pair and tool: make once under /usr/bin/time (seconds, peak RSS), apply once the
# same way, and compare the result with NEW byte for byte; only then is anything recorded.
# The slow tools (bsdiff, hdiffz -m, xdelta3 -9, zstd -19, swath max) keep that one run; the
# others are timed again with hyperfine, RUNS rounds of `hyperfine -N --output=pipe -r 1` over
# all of them in turn (alternating; the checked run was the warm-up), median quoted. A tool is
# skipped where it would exceed the memory available (bsdiff: 17x OLD; hdiffz -m: NEW + 5x OLD,
# 9x OLD from 2 GiB on) and the table says so; refusals (zstd beyond 2 GB, xdelta3 -B beyond
# 2 GiB) and time-outs are recorded as such. For the source-tree pair (linux) the peers run on
# the tars; swath also runs on the trees when `swath patch make` accepts directories, and
# `tar` + xdelta3 on the trees is timed for the comparison with it.
# Each pair's section goes to DATA_DIR/work/PAIR.md; benchsuite/results/patch-real.md is
# assembled from every pair's latest section.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data=$(cd "${1:-$root/bench-data/patch/real}" && pwd)
runs=${RUNS:-3}
timeout_s=${TIMEOUT:-1800}
slow_s=${SLOW_S:-60}
pairs=${PAIRS-duckdb ruff jaxlib linux kdbg$([ "${BIG:-0}" = 1 ] && echo " big")}
work=$data/work
out_md=$here/results/patch-real.md
mkdir -p "$work" "$here/results"
export PATH=$data/bin:$PATH
for t in hdiffz hpatchz xdelta3 zstd bsdiff bspatch rdiff hyperfine /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "patch-real.sh: $t missing: run benchsuite/patch-data.sh" >&2; exit 1; }
done
(cd "$root" && cargo build --release --quiet)
swath=$root/target/release/swath
limits=$data/bin/limits
[ -x "$limits" ] || gcc -O2 -pthread -o "$limits" "$root/../shared/tools/limits.c"
log() { echo "patch-real.sh: $*" >&2; }
# An output tree is moved aside, not deleted, until its pair is done: ext4 skips the inodes
# freed in the last minutes when it allocates new ones (recently_deleted), and scanning past
# them made the next 70,000 files cost 40-55 s of system time instead of 5 (tar -x alike).
graveyard=$work/graveyard
cat > "$work/clear-out" <<EOF2
#!/bin/sh
# clear-out PATH: a file is removed, a directory moved into $graveyard.
if [ -d "\$1" ] && [ ! -L "\$1" ]; then mkdir -p "$graveyard" && mv "\$1" "$graveyard/\$(date +%s%N)"; else rm -f "\$1"; fi
EOF2
chmod +x "$work/clear-out"
mib() { echo $(( ($1 + 524287) / 1048576 )); }
avail_kb() { awk '/MemAvailable/{print $2}' /proc/meminfo; }

machine() {
  echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(uname -sr);" \
    "$("$swath" --version); $(xdelta3 -V 2>&1 | head -1); $(zstd -V); bsdiff $(dpkg-query -W -f '${Version}' bsdiff);" \
    "$(rdiff --version | head -1); $(hdiffz -v 2>&1 | head -1); $(hyperfine --version)"
}

# timed LOG CMD...: run CMD (a string, word-split as a shell would) under timeout and
# /usr/bin/time; sets T (seconds), M (peak KB), RC; CMD's stderr goes to LOG.
timed() {
  local lg=$1 tf=$work/time.$$.txt; shift
  RC=0
  sync   # no dirty pages of the tool before, to be written back during this one

  eval "timeout $timeout_s /usr/bin/time -f '%e %M' -o $tf $*" > /dev/null 2> "$lg" || RC=$?
  T=? M=?; read -r T M < <(tail -1 "$tf" 2>/dev/null) || true   # nothing there after a time-out
}

render() { # ROWS OLD-BYTES NEW-BYTES: the markdown table of a pair's rows
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
rows, ob, nb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print("| tool | patch bytes | % of NEW | make s | make MB/s (OLD+NEW) | make peak MiB | apply s | apply MB/s (NEW) | apply peak MiB | timed | note |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
cmds = []
for l in open(rows):
    name, size, mt, mm, at, am, how, note, cmd = l.rstrip("\n").split("\t")
    cmds.append((name, cmd))
    f = lambda x: x if x else ""
    pct = "%.2f" % (100 * int(size) / nb) if size not in ("", "-") else ""
    msp = "%.1f" % ((ob + nb) / 1e6 / float(mt)) if mt not in ("", "?") and float(mt) > 0 else ""
    asp = "%.0f" % (nb / 1e6 / float(at)) if at not in ("", "?") and float(at) > 0 else ""
    mib = lambda k: str(round(int(k) / 1024)) if k not in ("", "?") else ""
    print(f"| {name} | {f(size)} | {pct} | {f(mt)} | {msp} | {mib(mm)} | {f(at)} | {asp} | {mib(am)} | {how} | {note} |")
print()
print("Commands (make; apply is the matching decoder, in the script):")
print()
for name, cmd in cmds:
    print(f"- {name}: `{cmd}`")
print()
EOF
}

section() { # PAIR: the pair's section, in $work/PAIR.md
  local pair=$1 old new kind=file
  old=$data/$pair.old new=$data/$pair.new
  if [ ! -f "$old" ]; then old=$data/$pair.old.tar new=$data/$pair.new.tar; fi
  [ -f "$old" ] && [ -f "$new" ] || { log "$pair: no pair in $data, skipped"; return 0; }
  [ -d "$data/$pair.old" ] && kind=tree
  local ob nb md=$work/$pair.md rows=$work/$pair.rows out=$work/$pair.out
  ob=$(stat -c %s "$old"); nb=$(stat -c %s "$new")
  [ "${KEEP_ROWS:-0}" = 1 ] || : > "$rows"
  local fast_make=() fast_apply=() fast_name=()
  log "$pair: OLD $ob bytes, NEW $nb bytes"
  cat "$old" "$new" > /dev/null   # hot cache where it fits
  {
    echo "## $pair: $(basename "$old") ($ob bytes) -> $(basename "$new") ($nb bytes)"
    echo
    echo "Run $(date -u '+%F %H:%M UTC'); MemAvailable at start $(( $(avail_kb) / 1048576 )) GiB; hot page cache where the files fit."
    echo
    echo '```'
    echo "\$ limits $(basename "$new") 3"
    "$limits" "$new" 3
    echo '```'
    echo
  } > "$md"

  # tool NAME SLOW(0|1) PATCH MAKE APPLY [SKIP-REASON]; OLD, NEW, OUT are $old $new $out.
  tool() {
    local name=$1 slow=$2 patch=$3 make=$4 apply=$5 skip=${6:-} note="" mt mm at am
    if [ -n "${TOOLS:-}" ] && ! [[ $name =~ $TOOLS ]]; then return; fi
    log "$pair: $name"
    if [ -n "$skip" ]; then
      printf '%s\t%s\t\t\t\t\t\t%s\t%s\n' "$name" "-" "skipped: $skip" "$make" >> "$rows"; return
    fi
    rm -rf "$patch"; "$work/clear-out" "$out"
    timed "$work/$pair.err" "$make"
    if [ "$RC" != 0 ]; then
      if [ "$RC" = 124 ]; then note="make timed out after ${timeout_s} s"
      else note="make refused/failed (exit $RC): $(grep -v '^Command exited' "$work/$pair.err" | tail -1 || true)"; fi
      printf '%s\t%s\t\t\t\t\t\t%s\t%s\n' "$name" "-" "$note" "$make" >> "$rows"; rm -f "$patch"; return
    fi
    mt=$T mm=$M
    timed "$work/$pair.err" "$apply"
    if [ "$RC" != 0 ]; then
      note="apply failed (exit $RC): $(grep -v '^Command exited' "$work/$pair.err" | tail -1 || true)"
      printf '%s\t%s\t%s\t%s\t\t\t\t%s\t%s\n' "$name" "$(stat -c %s "$patch")" "$mt" "$mm" "$note" "$make" >> "$rows"; return
    fi
    at=$T am=$M
    if [ "$kind" = tree ] && [ -d "$out" ]; then
      diff -r --no-dereference "$new" "$out" > /dev/null || { log "$pair: $name: apply did not rebuild NEW"; exit 1; }
    else
      cmp -s "$new" "$out" || { log "$pair: $name: apply did not rebuild NEW"; exit 1; }
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(stat -c %s "$patch")" "$mt" "$mm" "$at" "$am" \
      "$([ "$slow" = 1 ] || [ "${mt%.*}" -ge "$slow_s" ] && echo once || echo hyperfine)" "" "$make" >> "$rows"
    if [ "$slow" = 0 ] && [ "${mt%.*}" -lt "$slow_s" ]; then
      fast_name+=("$name"); fast_make+=("$make"); fast_apply+=("$apply")
    fi
  }

  local w=$work/$pair avail_b=$(( $(avail_kb) * 1024 )) big_old=0
  [ "$ob" -ge 2147483648 ] && big_old=1
  local bs_skip="" hm_skip="" hm_need
  [ $(( ob * 17 )) -gt "$avail_b" ] && bs_skip="needs ~17x OLD = $(( ob * 17 / 1073741824 )) GiB, $(( avail_b / 1073741824 )) GiB available"
  hm_need=$(( nb + ob * (big_old ? 9 : 5) ))
  [ "$hm_need" -gt "$avail_b" ] && hm_skip="needs NEW + $([ $big_old = 1 ] && echo 9 || echo 5)x OLD = $(( hm_need / 1073741824 )) GiB, $(( avail_b / 1073741824 )) GiB available"
  local xb=$ob xnote=""
  if [ "$ob" -gt 2147483648 ]; then
    # xdelta3 3.0.11 caps -B at 2 GiB: record the refusal, then run it at its maximum.
    tool "xdelta3 -0 -B OLD" 0 "$w.x0" "xdelta3 -e -0 -S none -f -B $ob -s $old $new $w.x0" "true"
    xb=2147483648 xnote=" (max)"
  fi
  tool "swath fast" 0 "$w.fast.swp" "$swath patch make --level fast $old $new $w.fast.swp" "$swath patch apply $old $w.fast.swp $out"
  tool "swath default" 0 "$w.default.swp" "$swath patch make --level default $old $new $w.default.swp" "$swath patch apply $old $w.default.swp $out"
  tool "swath max" 1 "$w.max.swp" "$swath patch make --level max $old $new $w.max.swp" "$swath patch apply $old $w.max.swp $out"
  tool "xdelta3 -0 -B $xb$xnote" 0 "$w.x0" "xdelta3 -e -0 -S none -f -B $xb -s $old $new $w.x0" "xdelta3 -d -f -B $xb -s $old $w.x0 $out"
  tool "xdelta3 -9 -B $xb$xnote" 1 "$w.x9" "xdelta3 -e -9 -S none -f -B $xb -s $old $new $w.x9" "xdelta3 -d -f -B $xb -s $old $w.x9 $out"
  tool "zstd -3 --long=31" 0 "$w.z3" "zstd -q -f -3 --long=31 --patch-from=$old $new -o $w.z3" "zstd -q -d -f --long=31 --memory=2048MB --patch-from=$old $w.z3 -o $out"
  tool "zstd -19 --long=31" 1 "$w.z19" "zstd -q -f -19 --long=31 --patch-from=$old $new -o $w.z19" "zstd -q -d -f --long=31 --memory=2048MB --patch-from=$old $w.z19 -o $out"
  tool "bsdiff" 1 "$w.bsdiff" "bsdiff $old $new $w.bsdiff" "bspatch $old $out $w.bsdiff" "$bs_skip"
  tool "rdiff -b 1024" 0 "$w.rdiff" "sh -c 'rdiff -f signature -b 1024 -S 8 $old $w.sig && rdiff -f delta $w.sig $new $w.rdiff'" "rdiff -f patch $old $w.rdiff $out"
  tool "hdiffz -m (zstd)" 1 "$w.hm" "hdiffz -m -p-$(nproc) -c-zstd -f $old $new $w.hm" "hpatchz -f $old $w.hm $out" "$hm_skip"
  tool "hdiffz -s (zstd)" 0 "$w.hs" "hdiffz -s -p-$(nproc) -c-zstd -f $old $new $w.hs" "hpatchz -f $old $w.hs $out"

  if [ "$kind" = tree ]; then
    local od=$data/$pair.old nd=$data/$pair.new tarargs="--sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner"
    # swath on the trees, when it has a tree mode.
    rm -rf "$w.tree.swp" "$out"
    if "$swath" patch make "$od" "$nd" "$w.tree.swp" > /dev/null 2> "$work/$pair.err"; then
      old=$od new=$nd
      tool "swath fast (trees)" 0 "$w.tree.swp" "$swath patch make --level fast $od $nd $w.tree.swp" "$swath patch apply $od $w.tree.swp $out"
      tool "swath default (trees)" 0 "$w.treed.swp" "$swath patch make --level default $od $nd $w.treed.swp" "$swath patch apply $od $w.treed.swp $out"
      old=$data/$pair.old.tar new=$data/$pair.new.tar
      "$work/clear-out" "$out"
    else
      printf '%s\t-\t\t\t\t\t\t%s\t%s\n' "swath (trees)" "no tree mode yet: $(tail -1 "$work/$pair.err")" "$swath patch make $od $nd PATCH" >> "$rows"
    fi
    # tar + xdelta3 on the trees: both tars written, then the patch (what a user does today).
    tool "tar both trees + xdelta3 -0" 0 "$w.tx0" \
      "sh -c 'tar -C $od $tarargs -cf $w.t.old . && tar -C $nd $tarargs -cf $w.t.new . && xdelta3 -e -0 -S none -f -B $ob -s $w.t.old $w.t.new $w.tx0'" \
      "xdelta3 -d -f -B $ob -s $old $w.tx0 $out"
    tool "tar both trees (no patch)" 0 "$w.t.new" \
      "sh -c 'tar -C $od $tarargs -cf $w.t.old . && tar -C $nd $tarargs -cf $w.t.new .'" "cp $w.t.new $out"
    rm -f "$w.t.old" "$w.t.new"
  fi

  # Fast tools again, alternating: RUNS rounds, each tool once per round.
  local i r
  if [ "${#fast_make[@]}" -gt 0 ]; then
    for what in make apply; do
      rm -f "$work/$pair.$what".*.json
      for r in $(seq "$runs"); do
        if [ "$what" = make ]; then set -- "${fast_make[@]}"; else set -- "${fast_apply[@]}"; fi
        # An apply's output (a tree for the tree tools) is cleared before each apply.
        sync
        hyperfine -N --output=pipe -r 1 --prepare "$work/clear-out $out" --export-json "$work/$pair.$what.$r.json" "$@" > /dev/null 2> "$work/$pair.err" \
          || { log "$pair: hyperfine $what failed: $(tail -2 "$work/$pair.err")"; exit 1; }
      done
    done
    # medians replace the single timings of those tools
    python3 - "$rows" "$work/$pair" "$runs" "${fast_name[@]}" <<'EOF'
import json, statistics, sys
rows, base, runs, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
med = {}
for what, col in (("make", 2), ("apply", 4)):
    for i, n in enumerate(names):
        ts = [json.load(open(f"{base}.{what}.{r}.json"))["results"][i]["times"][0] for r in range(1, runs + 1)]
        med[(n, col)] = "%.3f" % statistics.median(ts)
lines = [l.rstrip("\n").split("\t") for l in open(rows)]
for l in lines:
    for col in (2, 4):
        if (l[0], col) in med:
            l[col] = med[(l[0], col)]
            l[6] = f"hyperfine median of {runs}"
open(rows, "w").write("".join("\t".join(l) + "\n" for l in lines))
EOF
  fi

  render "$rows" "$ob" "$nb" >> "$md"
  rm -rf "$out" "$w".*.swp "$w".sig "$graveyard"
  log "$pair: section in $md"
}

if [ "${RENDER_ONLY:-0}" = 1 ]; then
  # A run stopped part-way: its section's header is there; add the table of the rows it made.
  for p in $pairs; do
    o=$data/$p.old; [ -f "$o" ] || o=$o.tar
    n=$data/$p.new; [ -f "$n" ] || n=$n.tar
    { echo "(run stopped part-way: tools missing from this table were not run)"; echo
      render "$work/$p.rows" "$(stat -c %s "$o")" "$(stat -c %s "$n")"; } >> "$work/$p.md"
  done
else
  for p in $pairs; do section "$p"; done
fi

{
  echo "# swath patch beside its peers on real pairs"
  echo
  echo "Made by \`benchsuite/patch-real.sh\` on the pairs of \`benchsuite/patch-data.sh\` (sources, versions"
  echo "and SHA-256 sums below). Patch size as a share of NEW; make speed over OLD+NEW read; peak"
  echo "memory is the maximum resident set (/usr/bin/time %M). Every patch was applied and compared"
  echo "with NEW (cmp; diff -r for trees) before it was recorded. 2 cores shared with other work:"
  echo "orientation figures, to be re-measured side by side."
  echo
  machine
  echo
  echo '```'
  cat "$data/pairs.txt" 2>/dev/null || true
  echo '```'
  echo
  for p in duckdb ruff jaxlib linux kdbg big; do [ -f "$work/$p.md" ] && cat "$work/$p.md"; done
} > "$out_md"
log "results in $out_md"
