#!/usr/bin/env bash
# The kernel's copy speed by the read buffer's offset from a page, through swath's own
# reader (crates/swath-engine/benches/copy_alignment.rs), beside ../shared/tools/copy-alignment.c
# when COPY_ALIGNMENT points at its binary. On processors where offsets 1-31 copy slower,
# every swath buffer must read like offset 0 (the "window" column).
#
#   benchsuite/copy-alignment.sh FILE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
file=$(realpath "$1")
cat "$file" > /dev/null
[ -n "${COPY_ALIGNMENT:-}" ] && "$COPY_ALIGNMENT" "$file"
cd "$here/.."
cargo bench -q -p swath-engine --bench copy_alignment -- "$file"
