#!/usr/bin/env bash
# Memory-ordering mutations of weft's protocol code, judged by the loom
# models alone (on demand, not in CI).
#
# cargo-mutants (scripts/mutants.sh) does not touch memory orderings, and
# the ordinary tests cannot judge them: on x86 a `Relaxed` load compiles to
# the same instruction as an `Acquire` one. loom explores the weaker
# outcomes a weaker ordering allows, so each ordering a protocol needs
# should make some model fail when it is weakened. For every atomic
# ordering stronger than `Relaxed` in the files named, one mutant each:
#   - an `Acquire`, `Release` or `SeqCst` operation made `Relaxed`;
#   - an `AcqRel` operation made `Acquire`, and made `Release`;
#   - a `fence(SeqCst)` made `fence(AcqRel)` (loom models a SeqCst fence
#     exactly), and every fence removed.
# Each is applied alone and the loom models are run, fail-fast
# (scripts/loom.sh): first those of the mutated file's own module at CI's
# preemption bound (3), then all of them at bound 2 (ORDERINGS_FULL=1: at
# 3, about twice as long; a failure found at 2 is one at 3 too, so only
# the survivors' verdicts can change). Caught: a model fails. Unviable: the mutant does not
# build (not expected: every replacement is valid). Survived: every model passes; each survivor is to be
# killed by a model or explained at the code (an ordering kept for a
# reader loom cannot see, or one that is stronger than it needs to be).
#
# Output in target/mutants/orderings/: survivors.txt, caught.txt,
# summary.txt. Usage:
#   bash scripts/orderings.sh [FILE ...]   (default: the files below)
# MUTANTS_FROM=N resumes at the N-th mutant (1-based), appending.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ -n "$(git status --porcelain -- weft)" ]; then
  echo "orderings.sh: weft/ has uncommitted changes; commit or stash them first" >&2
  exit 1
fi
files=("$@")
# The files whose protocols have loom models, those with fast models first.
[ ${#files[@]} -eq 0 ] && files=(
  weft/src/runtime/scheduler/queue.rs weft/src/runtime/scheduler/inject.rs weft/src/runtime/io/scheduled_io.rs
  weft/src/runtime/io/registrations.rs weft/src/runtime/time/driver.rs weft/src/runtime/task/join.rs
  weft/src/runtime/scheduler/monitor.rs weft/src/runtime/scheduler/idle.rs weft/src/runtime/scheduler/mod.rs
  weft/src/runtime/scheduler/worker.rs weft/src/runtime/scheduler/park.rs
)
out=target/mutants/orderings
mkdir -p "$out"

python3 - "$out/mutants.json" "${files[@]}" <<'PY'
import json, re, sys
out, files = sys.argv[1], sys.argv[2:]
fence = re.compile(r'(?:[\w:]*::)?fence\(\s*(?:[\w:]*::)?Ordering::(\w+)\s*\)')
op = re.compile(r'Ordering::(Acquire|Release|AcqRel|SeqCst)\b')
mutants = []
for path in files:
    lines = open(path).read().split('\n')
    in_tests = False
    for no, line in enumerate(lines, 1):
        code = line.split('//')[0]
        # The unit-test module at the end of a file is not protocol code.
        if re.match(r'\s*#\[cfg\(test\)\]', line) and no + 1 <= len(lines) and re.match(r'\s*mod tests', lines[no]):
            in_tests = True
        if in_tests:
            continue
        spans = []
        for m in fence.finditer(code):
            spans.append((m.start(), m.end()))
            kind = m.group(1)
            if kind == 'SeqCst':
                mutants.append((path, no, m.start(), m.end(), m.group(0).replace('SeqCst', 'AcqRel'), f'fence(SeqCst) -> fence(AcqRel)'))
            mutants.append((path, no, m.start(), m.end(), '()', f'fence({kind}) removed'))
        for m in op.finditer(code):
            if any(a <= m.start() < b for a, b in spans):
                continue
            kind = m.group(1)
            repl = ['Acquire', 'Release'] if kind == 'AcqRel' else ['Relaxed']
            for r in repl:
                mutants.append((path, no, m.start(), m.end(), f'Ordering::{r}', f'{kind} -> {r}'))
json.dump([dict(file=f, line=l, start=s, end=e, replacement=r, what=w) for f, l, s, e, r, w in mutants],
          open(out, 'w'), indent=1)
print(f'orderings.sh: {len(mutants)} mutants')
PY
count=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$out/mutants.json")

wide_bound=2
[ "${ORDERINGS_FULL:-0}" = 1 ] && wide_bound=3
from=${MUTANTS_FROM:-1}
if [ "$from" -le 1 ]; then
  : >"$out/survivors.txt"; : >"$out/caught.txt"; : >"$out/unviable.txt"
fi
for i in $(seq $((from - 1)) $((count - 1))); do
  # Applies mutant i; prints its name, then its module as loom names its
  # models (weft/src/a/b.rs -> a::b::).
  applied=$(python3 - "$out/mutants.json" "$i" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))[int(sys.argv[2])]
lines = open(m['file']).read().split('\n')
line = lines[m['line'] - 1]
lines[m['line'] - 1] = line[:m['start']] + m['replacement'] + line[m['end']:]
open(m['file'], 'w').write('\n'.join(lines))
module = m['file'].removeprefix('weft/src/').removesuffix('.rs').removesuffix('/mod').replace('/', '::')
print(f"{m['file']}:{m['line']}: {m['what']}: {line.strip()}")
print(f"{module}::")
PY
)
  name=$(sed -n 1p <<<"$applied")
  module=$(sed -n 2p <<<"$applied")
  verdict=survived
  # Fail-fast, so the first failing model ends the run.
  if ! LOOM_FAIL_FAST=1 LOOM_MAX_PREEMPTIONS=3 timeout 900 bash scripts/loom.sh "$module" \
    >"$out/current.log" 2>&1; then
    verdict=caught
  elif ! LOOM_FAIL_FAST=1 LOOM_MAX_PREEMPTIONS="$wide_bound" timeout 1800 bash scripts/loom.sh \
    >"$out/current.log" 2>&1; then
    verdict=caught
  fi
  git checkout -q -- weft
  if grep -q '^error' "$out/current.log"; then
    verdict=unviable
    echo "$name" >>"$out/unviable.txt"
  elif [ $verdict = caught ]; then
    model=$(grep -m1 '^FAILED' "$out/current.log" | awk '{print $3}')
    echo "$name  [${model:-build failed}]" >>"$out/caught.txt"
  else
    echo "$name  [all models passed, bound $wide_bound]" >>"$out/survivors.txt"
  fi
  echo "[$((i + 1))/$count] $verdict: $name"
done
caught=$(wc -l <"$out/caught.txt"); survived=$(wc -l <"$out/survivors.txt")
unviable=$(wc -l <"$out/unviable.txt")
score=$(python3 -c "print(f'{100*$caught/max($caught+$survived,1):.0f}%')")
echo "ordering mutations caught by loom: ${score} (${caught} caught, ${survived} survived, ${unviable} unviable; files: ${files[*]})" | tee "$out/summary.txt"
