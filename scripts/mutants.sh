#!/usr/bin/env bash
# Mutation testing of weft's protocol code, on demand (hours for the whole
# set; not in CI).
#
# cargo-mutants (a published crate, installed here if missing) generates
# the mutants of the files named (default: weft/src/scheduler, task, time):
# each a small deliberate bug, such as a condition negated, a function body
# replaced by a default, an operator swapped. Each is then applied to the
# tree and the project's own test command is run against it:
#   1. the unit and integration tests of weft (`cargo test -p weft`),
#   2. if they all pass, every loom model (`scripts/loom.sh`, fail-fast,
#      preemption bound 2: a failure found at 2 is one at CI's 3 too, so
#      only a survivor's verdict could change; MUTANTS_FULL=1 runs the
#      models at 3, about twice as long).
# A mutant is caught when either fails (or times out); it survives when
# both pass. MUTANTS_JUDGE=loom skips step 1: the loom models alone judge
# (the question for protocol code is whether a model sees the bug, not
# whether some test trips over it); MUTANTS_JUDGE=tests skips step 2 (for
# code no model runs: policy, metrics). cargo-mutants' own runner cannot run
# the loom models (they need RUSTFLAGS="--cfg loom" and another profile),
# so this script runs each mutant itself; the mutants are exactly
# cargo-mutants' list.
#
# Output in target/mutants/: survivors.txt (one line per surviving mutant,
# with its diff), caught.txt, unviable.txt, summary.txt (the score).
# Every survivor in protocol code is to be killed by a new model or test,
# or explained at the code as harmless.
#
# Usage: bash scripts/mutants.sh [PATH_GLOB ...]
#   e.g. bash scripts/mutants.sh 'weft/src/runtime/time/driver.rs'
# MUTANTS_RE=REGEX keeps only the mutants whose name matches (cargo-mutants'
# --re), e.g. MUTANTS_RE='Core::(park|search|stop_searching)' for the
# worker's sleep protocol. MUTANTS_FROM=N resumes at the N-th mutant
# (1-based), appending to the output files; MUTANTS_TO=N stops after the
# N-th (two trees can then share a list). A mutant that makes the tests
# hang is caught by a timeout (the suite takes under a minute; 180 s is
# the limit). MUTANTS_MODELS=SUBSTRING runs only the loom models whose
# name contains it (scripts/loom.sh's filter), e.g. MUTANTS_MODELS=io:: for
# the I/O files, whose code no other model compiles in: a weaker judge (a
# survivor may still be caught by a model left out), never a false catch,
# and a survivor's verdict in minutes rather than the whole suite's.
# MUTANTS_TESTS=lib,lanes,... builds and runs only those test targets
# (`lib` the unit tests, a name a file of weft/tests/): the same kind of
# weaker judge, for a first pass over many mutants (a build of every test
# binary per mutant is most of a verdict's time); confirm its survivors
# with the whole suite. MUTANTS_TIMEOUT=SECONDS bounds a test run (180;
# a subset that passes in 20 s can take less). While the file
# target/mutants/pause exists, no new mutant starts (a quiet machine for a
# benchmark meanwhile, without a test run timed across the pause).
set -uo pipefail
cd "$(dirname "$0")/.."

if ! cargo mutants --version >/dev/null 2>&1; then
  cargo install --locked cargo-mutants || exit 1
fi
if [ -n "$(git status --porcelain -- weft)" ]; then
  echo "mutants.sh: weft/ has uncommitted changes; commit or stash them first" >&2
  exit 1
fi

out=target/mutants
mkdir -p "$out"
files=("$@")
[ ${#files[@]} -eq 0 ] && files=('weft/src/runtime/**')
file_args=()
for f in "${files[@]}"; do file_args+=(--file "$f"); done
[ -n "${MUTANTS_RE:-}" ] && file_args+=(--re "$MUTANTS_RE")
judge=${MUTANTS_JUDGE:-tests+loom}
test_targets=()
if [ -n "${MUTANTS_TESTS:-}" ]; then
  IFS=, read -ra names <<<"$MUTANTS_TESTS"
  for t in "${names[@]}"; do
    if [ "$t" = lib ]; then test_targets+=(--lib); else test_targets+=(--test "$t"); fi
  done
fi
case $judge in
  tests+loom | loom | tests) ;;
  *) echo "mutants.sh: MUTANTS_JUDGE must be 'loom', 'tests' or 'tests+loom', not '$judge'" >&2; exit 2 ;;
esac

cargo mutants -p weft --list --json --diff "${file_args[@]}" \
  --exclude '**/loom_tests.rs' --exclude '**/tests.rs' --exclude '**/tests/**' \
  > "$out/mutants.json" || exit 1
count=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$out/mutants.json")
echo "mutants.sh: $count mutants"

loom_bound=2
[ "${MUTANTS_FULL:-0}" = 1 ] && loom_bound=3
from=${MUTANTS_FROM:-1}
if [ "$from" -le 1 ]; then
  : >"$out/survivors.txt"; : >"$out/caught.txt"; : >"$out/unviable.txt"
fi
caught=0; survived=0; unviable=0
last=${MUTANTS_TO:-$count}
for i in $(seq $((from - 1)) $((last - 1))); do
  while [ -e "$out/pause" ]; do sleep 2; done
  python3 - "$out/mutants.json" "$i" "$out/current" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))[int(sys.argv[2])]
# cargo-mutants names the mutation on the `+++` line: give git a path.
lines = m["diff"].splitlines(keepends=True)
lines[0], lines[1] = f'--- {m["file"]}\n', f'+++ {m["file"]}\n'
open(sys.argv[3] + ".diff", "w").write("".join(lines))
name = m.get("name") or f'{m["file"]}: {m.get("replacement", "")}'
open(sys.argv[3] + ".name", "w").write(name)
PY
  name=$(cat "$out/current.name")
  if ! git apply -p0 "$out/current.diff" 2>/dev/null; then
    echo "unviable (does not apply): $name" >>"$out/unviable.txt"; unviable=$((unviable + 1)); continue
  fi
  verdict=survived
  if [ "$judge" = loom ]; then
    # The models' own build is the viability check (a mutant in code that
    # loom does not compile builds and survives: no model can see it).
    viable=(env RUSTFLAGS="--cfg loom" cargo test -p weft --lib --profile loom --target-dir target/loom --no-run -q)
  else
    viable=(cargo test -p weft --no-run -q ${test_targets[@]+"${test_targets[@]}"})
  fi
  if ! "${viable[@]}" >/dev/null 2>&1; then
    verdict=unviable
  elif [ "$judge" != loom ] && ! timeout "${MUTANTS_TIMEOUT:-180}" cargo test -p weft -q ${test_targets[@]+"${test_targets[@]}"} >/dev/null 2>&1; then
    verdict=caught
  elif [ "$judge" != tests ] && ! LOOM_FAIL_FAST=1 LOOM_MAX_PREEMPTIONS="$loom_bound" timeout 1800 bash scripts/loom.sh \
    ${MUTANTS_MODELS:+"$MUTANTS_MODELS"} >/dev/null 2>&1; then
    verdict=caught
  fi
  # A timeout kills cargo, not the test binary it ran: one left spinning
  # (a mutant's test waiting forever) would slow every later verdict and
  # fail timing tests. Only this tree's binaries are killed.
  pkill -f "$PWD/target/debug/deps/" 2>/dev/null
  git apply -p0 -R "$out/current.diff"
  case $verdict in
    caught) caught=$((caught + 1)); echo "$name" >>"$out/caught.txt" ;;
    unviable) unviable=$((unviable + 1)); echo "$name" >>"$out/unviable.txt" ;;
    survived)
      survived=$((survived + 1))
      loom_note=", loom bound $loom_bound${MUTANTS_MODELS:+, models $MUTANTS_MODELS}"
      [ "$judge" = tests ] && loom_note=""
      { echo "== $name  [judge $judge${MUTANTS_TESTS:+, tests $MUTANTS_TESTS}$loom_note]"; cat "$out/current.diff"; } >>"$out/survivors.txt" ;;
  esac
  echo "[$((i + 1))/$count] $verdict: $name"
done
caught=$(wc -l <"$out/caught.txt"); unviable=$(wc -l <"$out/unviable.txt")
survived=$(grep -c '^== ' "$out/survivors.txt")
total=$((caught + survived))
score=$(python3 -c "print(f'{100*$caught/max($total,1):.0f}%')")
summary="mutation score ${score}: ${caught} caught, ${survived} survived, ${unviable} unviable (judge: ${judge}${MUTANTS_TESTS:+, tests ${MUTANTS_TESTS} only}; files: ${files[*]}${MUTANTS_RE:+; names matching ${MUTANTS_RE}}${MUTANTS_MODELS:+; loom models matching ${MUTANTS_MODELS}})"
echo "$summary" | tee "$out/summary.txt"
