#!/usr/bin/env bash
# Real old/new pairs for `swath patch` and the peer tools it is measured against.
#
#   benchsuite/patch-data.sh [DATA_DIR]     (default: bench-data/patch/real under the repo root)
#
# Benchmark data only: tests never call this. Everything is fetched by pinned version through
# the registries' own clients and checked against a pinned SHA-256 (pip also checks the hash
# the index gives, apt the signed archive's); a mismatch stops the script. Re-running it reuses
# what is already there. Needs about 32 GB free (29 GiB after the run); as root (apt-get).
#
# What it makes in DATA_DIR (each pair: consecutive releases, rebuilt):
#   jaxlib.old, jaxlib.new   jaxlib/xla_extension.so from the PyPI wheels jaxlib 0.4.30 and
#                            0.4.31 (cp311, manylinux2014_x86_64): 192 MB and 212 MB
#   duckdb.old, duckdb.new   duckdb/duckdb.cpython-311-x86_64-linux-gnu.so from the PyPI wheels
#                            duckdb 1.1.2 and 1.1.3: 62 MB each
#   ruff.old, ruff.new       the ruff executable from the PyPI wheels ruff 0.6.8 and 0.6.9
#                            (manylinux2014_x86_64): 31 MB each
#   linux.old/, linux.new/   the Linux source tree as Debian ships it (package linux-source-6.1,
#                            6.1.190-1 and 6.1.192-1, consecutive in bookworm-security), unpacked
#   linux.old.tar, linux.new.tar   the same trees as uncompressed, reproducible tars
#   kdbg.old.tar, kdbg.new.tar     > 4 GiB of real files: the file-system tars of Debian's
#                            linux-image-6.1.0-54-amd64-dbg (6.1.190-1) and -55- (6.1.192-1),
#                            the kernel's and its modules' debug symbols (vmlinux, 4,000+ .ko)
#   bin/hdiffz, bin/hpatchz  HDiffPatch, built from the PyPI source distribution hdiffpatch
#   pairs.txt                the pairs, their sources and SHA-256 sums
# With BIG=1 (not by default; 2 x BIG_SIZE more disk): big.old, big.new, a beyond-RAM pair of BIG_SIZE (default 20G)
# each: `swath gen text` and a `swath gen mutate` revision of it (insertions, deletions, moves,
# duplications, zero runs, rebuild noise). Try the code path with BIG=1 BIG_SIZE=64M.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data=${1:-$root/bench-data/patch/real}
pairs=" ${PAIRS-jaxlib duckdb ruff linux kdbg} "
want() { [[ $pairs == *" $1 "* ]]; }
mkdir -p "$data/dl" "$data/bin" "$data/src"
data=$(cd "$data" && pwd)
dl=$data/dl
log() { echo "patch-data.sh: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Peers and the tools this script uses (Debian packages; the rdiff package is librsync's tool).
need=()
for t in xdelta3:xdelta3 zstd:zstd bsdiff:bsdiff rdiff:rdiff hyperfine:hyperfine \
         unzip:unzip xz:xz-utils make:make g++:g++ gcc:gcc dpkg-deb:dpkg /usr/bin/time:time; do
  command -v "${t%%:*}" >/dev/null || need+=("${t#*:}")
done
if [ "${#need[@]}" -gt 0 ]; then
  as_root apt-get update -qq
  as_root apt-get install -y -qq "${need[@]}"
fi

verify() { # FILE SHA256
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    log "$1: SHA-256 $got, expected $2"; exit 1
  fi
  echo "$2  $(basename "$1")"
}

# --- HDiffPatch from PyPI's source distribution (its bundled C sources and Makefile) ---
hdp_ver=2.6.0   # the Python package; it bundles HDiffPatch 5.1.3
hdp_sha=9f0d05ee1784a8223df4ca806c47c4fc0dc2048aabd24e8694730e55a39aa5a6
if [ ! -x "$data/bin/hdiffz" ] || [ ! -x "$data/bin/hpatchz" ]; then
  log "HDiffPatch: pip download hdiffpatch==$hdp_ver (sdist), make"
  echo "hdiffpatch==$hdp_ver --hash=sha256:$hdp_sha" > "$dl/hdiffpatch.req"
  # --no-binary only for hdiffpatch: its build requirements (setuptools, Cython) come as wheels.
  pip download -q --no-deps --no-binary hdiffpatch --require-hashes -r "$dl/hdiffpatch.req" -d "$dl"
  verify "$dl/hdiffpatch-$hdp_ver.tar.gz" "$hdp_sha" >&2
  rm -rf "$data/src/hdiffpatch-$hdp_ver"
  tar -C "$data/src" -xzf "$dl/hdiffpatch-$hdp_ver.tar.gz"
  # XXH=0: the sdist lacks xxHash's xxh3.h (only an optional checksum plugin needs it).
  make -s -C "$data/src/hdiffpatch-$hdp_ver/hdiffpatch/_c_src/HDiffPatch" -j"$(nproc)" XXH=0 >/dev/null
  cp "$data/src/hdiffpatch-$hdp_ver/hdiffpatch/_c_src/HDiffPatch/"{hdiffz,hpatchz} "$data/bin/"
fi
"$data/bin/hdiffz" -v 2>&1 | head -1 >&2

# --- native libraries from PyPI wheels ---
wheel() { # NAME VERSION SHA256 -> path of the wheel (pip checks the index's hash too)
  local req=$dl/$1-$2.req
  echo "$1==$2 --hash=sha256:$3" > "$req"
  pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux2014_x86_64 --require-hashes -r "$req" -d "$dl" >&2
  local f
  f=$(ls "$dl/$1-$2-"*.whl)
  verify "$f" "$3" >&2
  echo "$f"
}
so_pair() { # NAME MEMBER V_OLD SHA_OLD V_NEW SHA_NEW (MEMBER's @V@ is the version)
  local name=$1 member=$2 w
  [ -f "$data/$name.old" ] && [ -f "$data/$name.new" ] && return 0
  log "$name: $member from $name $3 and $5"
  w=$(wheel "$name" "$3" "$4"); unzip -p "$w" "${member//@V@/$3}" > "$data/$name.old.part"
  w=$(wheel "$name" "$5" "$6"); unzip -p "$w" "${member//@V@/$5}" > "$data/$name.new.part"
  mv "$data/$name.old.part" "$data/$name.old"; mv "$data/$name.new.part" "$data/$name.new"
}
want jaxlib && so_pair jaxlib jaxlib/xla_extension.so \
  0.4.30 16b2ab18ea90d2e15941bcf45de37afc2f289a029129c88c8d7aba0404dd0043 \
  0.4.31 1db6f8ea35b884f9e7761b006ee9c60ed05be6c75d2e527551f74579cbe11677
want duckdb && so_pair duckdb duckdb/duckdb.cpython-311-x86_64-linux-gnu.so \
  1.1.2 9a6b73e70b73c8df85da383f6e557c03cad5c877868b9a7e41715761e8166c1e \
  1.1.3 9d0767ada9f06faa5afcf63eb7ba1befaccfbcfdac5ff86f0168c673dd1f47aa
want ruff && so_pair ruff ruff-@V@.data/scripts/ruff \
  0.6.8 6ef0411eccfc3909269fed47c61ffebdcb84a04504bafa6b6df9b85c27e813b0 \
  0.6.9 a67267654edc23c97335586774790cde402fb6bbdb3c2314f1fc087dee320bfa

# --- Debian packages (bookworm-security keeps several kernel versions side by side) ---
deb() { # PACKAGE VERSION SHA256 -> path of the .deb
  local f
  f=$dl/${1}_${2}_$(apt-cache show "$1=$2" 2>/dev/null | awk '/^Architecture:/{print $2; exit}').deb
  if [ ! -f "$f" ]; then
    (cd "$dl" && apt-get download -q "$1=$2" >&2) || {
      log "apt-get download $1=$2 failed: is the version still in the archive (apt-get update)?"
      exit 1; }
  fi
  verify "$f" "$3" >&2
  echo "$f"
}
reprotar() { # DIR TAR: reproducible, uncompressed, entries ./...
  tar -C "$1" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$2.part" .
  mv "$2.part" "$2"
}
linux_tree() { # SIDE VERSION SHA256
  local d=$data/linux.$1 f
  if [ ! -d "$d" ]; then
    log "linux.$1: linux-source-6.1 $2"
    f=$(deb linux-source-6.1 "$2" "$3")
    rm -rf "$d.part"; mkdir -p "$d.part"
    # The .deb holds /usr/src/linux-source-6.1.tar.xz; the tree is its one top directory.
    dpkg-deb --fsys-tarfile "$f" | tar -xO ./usr/src/linux-source-6.1.tar.xz \
      | xz -dc -T0 | tar -C "$d.part" --strip-components=1 -xf -
    mv "$d.part" "$d"
  fi
  [ -f "$data/linux.$1.tar" ] || reprotar "$d" "$data/linux.$1.tar"
}
want linux && linux_tree old 6.1.190-1 cfbe4d7a7e4cb65190c96db90794b3a10eec608522339c2371103f844cc53536
want linux && linux_tree new 6.1.192-1 7ae5d78895d88e4788c601b8322b07043965b0e37324c5bb26453e2ce049509d

kdbg() { # SIDE PACKAGE VERSION SHA256: the package's own data tar, decompressed (fixed bytes)
  local t=$data/kdbg.$1.tar f
  [ -f "$t" ] && return 0
  log "kdbg.$1: $2 $3"
  f=$(deb "$2" "$3" "$4")
  dpkg-deb --fsys-tarfile "$f" > "$t.part"
  mv "$t.part" "$t"
}
want kdbg && kdbg old linux-image-6.1.0-54-amd64-dbg 6.1.190-1 d0eb91fb361b2a0ce6ccc7f5c82c2ec9ff27229fd3792f75400ae8e88320862a
want kdbg && kdbg new linux-image-6.1.0-55-amd64-dbg 6.1.192-1 4d824629e65102a21ce53cf58313f73d9c872a649b99411972d8a768a754cff7

# --- optional beyond-RAM pair, generated ---
if [ "${BIG:-0}" = 1 ]; then
  big=${BIG_SIZE:-20G}
  (cd "$root" && cargo build --release --quiet)
  swath=$root/target/release/swath
  if [ ! -f "$data/big.old" ] || [ "$(stat -c %s "$data/big.old")" != "$(numfmt --from=iec "$big")" ]; then
    log "big.old: swath gen text $big --seed 21"
    "$swath" gen text "$big" "$data/big.old" --seed 21
    rm -f "$data/big.new"
  fi
  if [ ! -f "$data/big.new" ]; then
    # Edits scale with the size: one insertion, deletion, move, duplication per ~64 MiB,
    # a zero run per ~256 MiB, rebuild noise on one 4-byte value in ~4000 bytes.
    per=$(( $(numfmt --from=iec "$big") / 67108864 + 1 ))
    log "big.new: swath gen mutate ($per edits of each kind)"
    "$swath" gen mutate "$data/big.old" "$data/big.new.part" --seed 22 \
      --insertions "$per" --deletions "$per" --moves "$per" --duplicates "$per" \
      --zero-runs $(( per / 4 + 1 )) --noise 4000
    mv "$data/big.new.part" "$data/big.new"
  fi
fi

# --- what we have: sizes, hashes, and how much of each pair differs ---
{
  echo "# pairs in $data ($(date -u +%F)); sizes in bytes"
  for p in jaxlib duckdb ruff linux kdbg big; do
    for s in old new; do
      f=$data/$p.$s; [ -f "$f" ] || f=$f.tar; [ -f "$f" ] || continue
      echo "$(basename "$f") $(stat -c %s "$f") $(sha256sum "$f" | cut -d' ' -f1)"
    done
  done
  for s in old new; do
    [ -d "$data/linux.$s" ] && echo "linux.$s/ $(find "$data/linux.$s" -type f | wc -l) files, $(find "$data/linux.$s" | wc -l) entries"
  done
  # Rebuilt, not copied: the share of aligned 4 KiB pages of NEW whose bytes differ from OLD's
  # at the same offset, and of NEW's 1 KiB blocks that rdiff finds nowhere in OLD.
  for p in jaxlib duckdb ruff; do
    [ -f "$data/$p.new" ] || continue
    diffp=$(python3 -c 'import sys
a, b = (open(f, "rb") for f in sys.argv[1:])
n = d = 0
while True:
    x, y = a.read(4096), b.read(4096)
    if not y: break
    n += 1; d += x != y
print(d, "of", n)' "$data/$p.old" "$data/$p.new")
    rdiff signature -b 1024 -S 8 "$data/$p.old" "$data/$p.sig" 2>/dev/null
    lit=$(rdiff -f -s delta "$data/$p.sig" "$data/$p.new" /dev/null 2>&1 \
          | sed -n 's/.*literal\[[0-9]* cmds, \([0-9]*\) bytes.*/\1/p')
    rm -f "$data/$p.sig"
    echo "$p: $diffp aligned 4 KiB pages of NEW differ from OLD's; rdiff (1 KiB blocks) leaves ${lit:-?} of $(stat -c %s "$data/$p.new") bytes literal"
  done
} | tee "$data/pairs.txt"
log "done: $(du -sh "$data" | cut -f1) in $data"
