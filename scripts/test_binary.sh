#!/usr/bin/env bash
# Prints the absolute path of the workspace's test binary for tests/NAME.rs,
# built with CI's test-step selection (`cargo test --workspace`), so the
# binary that step built is reused: another selection (`-p weft`,
# `--test NAME`) resolves features differently and rebuilds weft and its
# dependents. Extra arguments go to cargo. Exits 1 if there is none.
#
# Usage: scripts/test_binary.sh NAME [CARGO_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1
shift
# cargo prints: "  Executable tests/NAME.rs (target/debug/deps/NAME-HASH)"
binary="$(cargo test --workspace --no-run "$@" 2>&1 \
  | sed -n "s|.*Executable tests/$name\\.rs (\\(.*\\))|\\1|p" | tail -n 1)"
if [ -z "$binary" ]; then
  echo "test_binary.sh: no test binary for tests/$name.rs" >&2
  exit 1
fi
case "$binary" in /*) ;; *) binary="$PWD/$binary" ;; esac
echo "$binary"
