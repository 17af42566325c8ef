#!/usr/bin/env bash
# Runs every loom model of weft, each in its own process, and reports each
# model's outcome on its own: a model that deadlocks or aborts (loom aborts
# the process on some failures) cannot hide the others' results.
#
# Profile `loom` (Cargo.toml): release optimisations with debug assertions
# and overflow checks on. Preemption bound: LOOM_MAX_PREEMPTIONS (default 3,
# CI's setting). Extra arguments filter the models by substring, e.g.
#   bash scripts/loom.sh time::driver
# LOOM_JOBS models run at once (default: one per core; each model is one
# thread). LOOM_FAIL_FAST=1 stops at the first failure: no model starts
# after it and those running are killed (scripts/mutants.sh uses it: one
# failure is a verdict).
set -uo pipefail
cd "$(dirname "$0")/.."

export RUSTFLAGS="--cfg loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
cargo=(cargo test -p weft --lib --profile loom --target-dir target/loom)

"${cargo[@]}" --no-run || exit 1
binary=$("${cargo[@]}" --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
if [ -z "$binary" ] || [ ! -x "$binary" ]; then
  echo "loom.sh: could not find the test binary" >&2
  exit 1
fi

filter=${1:-}
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
export binary results
jobs=${LOOM_JOBS:-$(nproc)}
# One model: its verdict line on stdout, its result in $results/<index>.
# Exit 255 on a failure in fail-fast mode, which makes xargs start no more.
run_model() {
  local index=$1 model=$2 start=$SECONDS output verdict
  if output=$("$binary" --exact "$model" 2>&1); then
    if grep -q "1 ignored" <<<"$output"; then verdict=ignored; else verdict=ok; fi
  elif [ -e "$results/stop" ]; then
    verdict=stopped # killed by another model's fail-fast failure
  else
    verdict=FAILED
  fi
  printf '%-8s %4ss  %s\n' "$verdict" "$((SECONDS - start))" "$model"
  [ "$verdict" = FAILED ] && grep -E "panicked|deadlock|leaked|assert" <<<"$output" | head -5 | sed 's/^/           /'
  echo "$verdict $model" >"$results/$index"
  if [ "$verdict" = FAILED ] && [ "${LOOM_FAIL_FAST:-0}" = 1 ]; then
    # One failure is the verdict: stop the models still running too (a
    # slow one would otherwise hold the run for up to the caller's timeout).
    touch "$results/stop"
    pkill -f -- "^$binary --exact " 2>/dev/null
    return 255
  fi
  return 0
}
export -f run_model

# Slowest first (the worker-loop models take up to a minute or more), so
# the parallel run ends when the longest model does.
"$binary" --list 2>/dev/null | sed -n 's/: test$//p' | grep -F "$filter" \
  | awk '{ slow = ($0 ~ /worker::|scheduler::loom_tests::worker_loop|monitor::/) ? 0 : 1; print slow "\t" NR "\t" $0 }' \
  | sort -k1,1n -k2,2n | cut -f2- \
  | xargs -P "$jobs" -L 1 bash -c 'run_model "$0" "$1"'

passed=$(cat "$results"/* 2>/dev/null | grep -c '^ok ')
failed=$(cat "$results"/* 2>/dev/null | grep -c '^FAILED ')
echo "loom: ${passed} passed, ${failed} failed (LOOM_MAX_PREEMPTIONS=${LOOM_MAX_PREEMPTIONS})"
[ "$failed" -eq 0 ]
