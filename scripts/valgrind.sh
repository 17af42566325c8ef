#!/usr/bin/env bash
# Runs a subset of weft's integration tests under valgrind's memcheck and
# fails if any of them leaks memory for good ("definitely lost") or makes
# a memory error. Usage: scripts/valgrind.sh [extra cargo args]
#
# The subset is chosen for what it exercises, at sizes valgrind can run in
# a few minutes (it is ~50x slower and runs one thread at a time): task
# completion, panics, abort and detach; shutdown with pending, queued and
# never-polled tasks; wakers and join handles that outlive their runtime
# (the last reference to a task then frees the runtime's shared state from
# another thread); a few randomized stress scenarios; the stall monitor's
# spare threads and a demoted worker's core handed back during shutdown (a
# core left in the monitor would keep the runtime alive: a cycle valgrind
# reports as definitely lost, checked by removing the hand-back's drain);
# the reactor's registrations when a user's fd number closes or is reused
# under an `AsyncFd` (tests/soundness.rs: an invalid read in
# `ScheduledIo::set_readiness` before the fix).
#
# "Possibly lost" and "still reachable" blocks are reported by valgrind but
# do not fail the run: std keeps some per-thread and global allocations
# until exit. Only definite leaks and memory errors count.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null; then
  apt-get update
  apt-get install -y valgrind
fi

# test binary  test name filter (exact names, space-separated)
SUBSET=(
  "join_abort|a_panic_becomes_a_join_error_with_its_message abort_before_the_task_first_runs abort_while_the_task_waits abort_while_the_task_is_being_polled_cancels_after_the_poll abort_after_completion_keeps_the_output a_panic_in_a_cancelled_futures_drop_is_contained"
  "shutdown|shutdown_drops_tasks_that_never_got_to_run spawn_after_shutdown_is_cancelled_not_lost a_waker_used_after_its_runtime_is_gone_is_a_no_op dropping_the_runtime_inside_its_own_task_panics_instead_of_deadlocking"
  "faults|a_future_whose_drop_panics_after_completing_still_delivers_its_output destructors_that_panic_during_shutdown_do_not_stop_the_drain ten_million_pending_tasks_are_each_dropped_once_at_shutdown a_join_handle_awaited_on_another_runtime_outlives_its_runtime wakers_in_other_threads_outlive_the_runtime a_panicking_on_thread_stop_hook_does_not_stop_shutdown"
  "bad_input|a_handle_of_a_dropped_runtime_still_blocks_on_and_refuses_spawns shutdown_timeout_inside_its_own_task_panics_instead_of_deadlocking a_join_handle_polled_after_its_result_panics_clearly"
  "stress|random_scenarios_account_for_every_task"
  "lanes|a_worker_demoted_during_shutdown_still_drops_every_task_once shutdown_while_a_spare_holds_a_stuck_task_drops_every_task_once"
  "soundness|an_async_fd_whose_number_closed_first_leaves_nothing_behind an_async_fd_whose_stream_was_replaced_leaves_nothing_behind a_listener_that_reuses_an_async_fds_number_keeps_accepting a_reader_that_claims_too_many_bytes_is_an_error_through_hyper_io"
)
# Small sizes under valgrind.
export WEFT_STRESS_SCENARIOS="${WEFT_STRESS_SCENARIOS:-100}"
export WEFT_PENDING_TASKS="${WEFT_PENDING_TASKS:-20000}"

echo "building the test binaries"
# CI's test-step selection, so its binaries are reused
# (scripts/test_binary.sh says why); build errors show here.
cargo test --workspace --no-run "$@" >/dev/null

failed=0
report="$(mktemp)"
for entry in "${SUBSET[@]}"; do
  name="${entry%%|*}"
  tests="${entry#*|}"
  binary="$(bash scripts/test_binary.sh "$name" "$@")"
  for test in $tests; do
    log="$(mktemp)"
    start=$SECONDS
    if valgrind --leak-check=full --errors-for-leak-kinds=definite \
        --show-leak-kinds=definite --error-exitcode=1 --quiet \
        --log-file="$log" \
        "$binary" --exact "$test" --test-threads=1 >/dev/null 2>&1; then
      status=ok
    else
      status=FAILED
      failed=1
    fi
    printf '%-7s %-4ss %s::%s\n' "$status" "$((SECONDS - start))" "$name" "$test" | tee -a "$report"
    if [ "$status" != ok ]; then
      sed 's/^/    /' "$log"
    fi
    rm -f "$log"
  done
done

echo
echo "valgrind summary ($((SECONDS))s):"
cat "$report"
if [ "$failed" -ne 0 ]; then
  echo "valgrind found definite leaks or memory errors (details above)" >&2
  exit 1
fi
echo "no definite leaks, no memory errors"
