#!/usr/bin/env bash
# Runs weft's unit tests and a subset of its integration tests built with
# AddressSanitizer (and LeakSanitizer), and fails if any of them reports
# a memory error or a leak, or fails. Usage:
#   scripts/asan.sh                 # the default subset (below)
#   scripts/asan.sh soundness net   # only these test files (`lib`: unit tests)
#
# The second tool beside valgrind (scripts/valgrind.sh). Valgrind runs one
# thread at a time, on unchanged binaries; ASan instruments weft's code
# (not std's, which is shipped prebuilt), costs about 4x a plain debug
# build (stress.rs: 6 s against 24 s) and lets the threads run in
# parallel, so whole test files fit, at their real interleavings. Leaks are checked too: weft's deliberate ones (interned
# task labels, the signal registry) stay reachable from statics, which
# LeakSanitizer does not report.
#
# The sanitizer is an unstable flag: on the stable toolchain it needs
# RUSTC_BOOTSTRAP=1 (the ASan runtime ships with it:
# lib/rustlib/x86_64-unknown-linux-gnu/lib/librustc-stable_rt.asan.a).
# `--target` keeps build scripts and proc-macros uninstrumented (they run
# inside rustc); a separate target dir keeps the ordinary build's cache.
# x86_64 Linux only. On the 2-core dev machine: the build ~3 min of CPU
# cold (7 min wall with one build job on a busy machine), ~1.5 min after
# a change to weft; the run ~1 min.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=x86_64-unknown-linux-gnu
TARGET_DIR="${ASAN_TARGET_DIR:-target/asan}"
# What each file brings: soundness.rs the reactor's registrations under a
# closed or reused fd number (a heap-use-after-free in
# `ScheduledIo::set_readiness` before 88e0f78); join_abort, shutdown,
# faults, bad_input, spawn and stress the task cell, its handoffs through
# the local ring, the LIFO slot and the inject queue, and shutdown; time
# `Timeout`'s pinned future; net `AsyncFd` and every socket; signal the
# signal handler; http `weft::hyper::Io`; lanes the stall monitor, spares
# and the thread-id system calls; lib the unit tests (the orphaned-source,
# label and ring tests among them).
DEFAULT_FILES=(
  lib soundness join_abort shutdown faults bad_input spawn stress time net signal http lanes
)
if [ "$#" -gt 0 ]; then
  FILES=("$@")
else
  FILES=("${DEFAULT_FILES[@]}")
fi
# Sizes for an instrumented build (the defaults take minutes here).
export WEFT_STRESS_SCENARIOS="${WEFT_STRESS_SCENARIOS:-500}"
export WEFT_PENDING_TASKS="${WEFT_PENDING_TASKS:-200000}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"

echo "building the test binaries with -Zsanitizer=address ($TARGET_DIR)"
build_log="$(mktemp)"
if ! RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address" \
    cargo test -p weft --target "$TARGET" --target-dir "$TARGET_DIR" \
    --lib --tests --no-run >"$build_log" 2>&1; then
  cat "$build_log" >&2
  echo "asan.sh: the instrumented build failed" >&2
  exit 1
fi
binary_of() {
  # cargo prints: "  Executable tests/NAME.rs (DIR/deps/NAME-HASH)"
  if [ "$1" = lib ]; then
    sed -n 's|.*Executable unittests src/lib\.rs (\(.*\))|\1|p' "$build_log" | tail -n 1
  else
    sed -n "s|.*Executable tests/$1\.rs (\(.*\))|\1|p" "$build_log" | tail -n 1
  fi
}

failed=0
report="$(mktemp)"
for name in "${FILES[@]}"; do
  binary="$(binary_of "$name")"
  if [ -z "$binary" ]; then
    echo "no test binary for $name" >&2
    exit 1
  fi
  case "$binary" in /*) ;; *) binary="$PWD/$binary" ;; esac
  log="$(mktemp)"
  start=$SECONDS
  # Run from the package's directory, as `cargo test` does.
  if (cd weft && "$binary") >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
  fi
  if grep -qE "ERROR: (Address|Leak)Sanitizer" "$log"; then
    status=REPORT
  fi
  printf '%-7s %-4ss %s\n' "$status" "$((SECONDS - start))" "$name" | tee -a "$report"
  if [ "$status" != ok ]; then
    failed=1
    # The sanitizer's report (or the failing tests), not every test's line.
    if [ "$status" = REPORT ]; then
      sed -n '/ERROR: \(Address\|Leak\)Sanitizer/,/^SUMMARY/p' "$log" | head -n 80 | sed 's/^/    /'
    else
      grep -vE '^test .* \.\.\. ok$' "$log" | tail -n 60 | sed 's/^/    /'
    fi
  fi
  rm -f "$log"
done

echo
echo "AddressSanitizer summary ($((SECONDS))s):"
cat "$report"
if [ "$failed" -ne 0 ]; then
  echo "AddressSanitizer found memory errors or leaks, or a test failed (details above)" >&2
  exit 1
fi
echo "no memory errors, no leaks"
