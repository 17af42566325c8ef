#!/usr/bin/env bash
# Runs every loom model of weft, each in its own process, and reports each
# model's outcome on its own: a model that deadlocks or aborts (loom aborts
# the process on some failures) cannot hide the others' results.
#
# Profile `loom` (Cargo.toml): release optimisations with debug assertions
# and overflow checks on. Preemption bound: LOOM_MAX_PREEMPTIONS (default 3,
# CI's setting). Extra arguments filter the models by substring, e.g.
#   bash scripts/loom.sh time::driver
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

mapfile -t models < <("$binary" --list 2>/dev/null | sed -n 's/: test$//p' | grep -F "${1:-}")
passed=0
failed=()
for model in "${models[@]}"; do
  start=$SECONDS
  if output=$("$binary" --exact "$model" 2>&1); then
    if grep -q "1 ignored" <<<"$output"; then
      printf 'ignored  %4ss  %s\n' "$((SECONDS - start))" "$model"
    else
      passed=$((passed + 1))
      printf 'ok       %4ss  %s\n' "$((SECONDS - start))" "$model"
    fi
  else
    failed+=("$model")
    printf 'FAILED   %4ss  %s\n' "$((SECONDS - start))" "$model"
    grep -E "panicked|deadlock|leaked|assert" <<<"$output" | head -5 | sed 's/^/           /'
  fi
done
echo "loom: ${passed} passed, ${#failed[@]} failed (LOOM_MAX_PREEMPTIONS=${LOOM_MAX_PREEMPTIONS})"
[ "${#failed[@]}" -eq 0 ]
