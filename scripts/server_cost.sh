#!/usr/bin/env bash
# The server's own cost per HTTP request: weft's `http_server` example
# against hyper's hello server on tokio (`http_server_tokio`, the same
# response), each under `wrk -t1 -cC` with `perf stat` on the server, in
# alternated rounds. Prints, per server and round, and then the median of
# the rounds and its ratio to the median of the server named `tokio` (or
# of the first server):
#
#   cpu_us    the task clock of the server's threads / requests (µs)
#   sys       system calls / request (raw_syscalls:sys_enter)
#   read      read + readv + recvfrom + recvmsg
#   write     write (not 8 bytes) + writev + sendto + sendmsg
#   epoll     epoll_wait + epoll_pwait + epoll_pwait2
#   futex     futex (+ futex_wait / futex_wake)
#   eventfd   8-byte writes (mio's waker; an eventfd write is a `write`)
#   yield     sched_yield
#   other     the rest
#   cs        context switches / request (perf's context-switches)
#   vol       the voluntary ones among them (sched_switch with the thread
#             going to sleep); the rest are preemptions and yields, and a
#             loaded machine adds preemptions
#
# Usage:
#   scripts/server_cost.sh [-r ROUNDS] [-d SECONDS] [-c CONNECTIONS] [-w WARMUP]
#                          [--no-build] [NAME=COMMAND ...]
#
# With no NAME=COMMAND the servers are `weft` (target/release/examples/
# http_server) and `tokio` (target/release/examples/http_server_tokio),
# built first unless --no-build. A COMMAND is any server that prints its
# address (`http://HOST:PORT`) on its first line of output and serves
# `GET /`: e.g. `before=/tmp/http_server.old after=target/release/examples/
# http_server tokio="target/release/examples/http_server_tokio"` to compare
# two builds of weft, alternated. Defaults: 3 rounds, 10 s each, 64
# connections, 1 s of warm-up per server and round.
#
# The HTTP lane's floor (the same answer with no async runtime,
# weft-bench/src/floor.rs) serves the same way, to show what the machine
# needs for the work beside the servers: `floor="target/release/weft-bench
# http-serve --floor --seconds 3600"` (or `--runtime weft|tokio|smol` for
# the lane's own servers).
#
# Counts (system calls, switches per request) hold on a loaded machine; the
# CPU time per request moves with what else runs (caches, frequency,
# preemption): alternate, and read the spread. Needs root or
# perf_event_paranoid <= 1 for the tracepoints; wrk and perf come from
# Debian's packages (installed here if missing, as root).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
seconds=10
connections=64
warmup=1
build=1
servers=()
while (($#)); do
  case "$1" in
    -r) rounds=$2; shift 2 ;;
    -d) seconds=$2; shift 2 ;;
    -c) connections=$2; shift 2 ;;
    -w) warmup=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *=*) servers+=("$1"); shift ;;
    *) echo "server_cost.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$seconds" "$connections" "$warmup"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "server_cost.sh: '$n' is not a whole number (-r, -d, -c, -w)" >&2; exit 2; }
done

need() {
  command -v "$1" >/dev/null && return
  if [[ $(id -u) -ne 0 ]]; then
    echo "server_cost.sh: $1 is missing (apt-get install $2, as root)" >&2
    exit 1
  fi
  apt-get update -qq >&2
  apt-get install -y -qq "$2" >&2
}
need wrk wrk
need perf linux-perf

if ((${#servers[@]} == 0)); then
  if ((build)); then
    cargo build --release -q -p weft --features hyper \
      --example http_server --example http_server_tokio
  fi
  servers=("weft=target/release/examples/http_server"
           "tokio=target/release/examples/http_server_tokio")
fi

# The events counted, in the order the columns are computed from.
events=task-clock,context-switches,raw_syscalls:sys_enter
kinds=(read readv recvfrom recvmsg write writev sendto sendmsg
       epoll_wait epoll_pwait epoll_pwait2 futex futex_wait futex_wake sched_yield)
for kind in "${kinds[@]}"; do
  events+=",syscalls:sys_enter_$kind"
done

work=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Starts server $1 (a command line), sets server_pid and address.
start_server() {
  local out=$work/server.out
  : >"$out"
  # shellcheck disable=SC2086 # the command line is split on purpose
  $1 >"$out" 2>"$work/server.err" &
  server_pid=$!
  address=
  for _ in $(seq 100); do
    address=$(grep -o -m1 'http://[^/ ]*' "$out" || true)
    [[ -n $address ]] && return
    sleep 0.1
  done
  echo "server_cost.sh: '$1' printed no address:" >&2
  cat "$work/server.err" >&2
  exit 1
}

stop_server() {
  kill -INT "$server_pid" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}

# One measured run of server $2 (named $1); appends a line to $work/rows:
# NAME ROUND cpu_us sys read write epoll futex eventfd yield other cs rps
measure() {
  local name=$1 command=$2 round=$3
  start_server "$command"
  if ((warmup > 0)); then
    wrk -t1 -c"$connections" -d"${warmup}s" "$address/" >/dev/null
  fi
  local stat=$work/stat.csv wrk_out=$work/wrk.out
  # The 8-byte writes are mio's eventfd wakes: counted apart with a filter.
  perf stat -x, -o "$stat" -e "$events" \
    -e syscalls:sys_enter_write --filter 'count == 8' \
    -e sched:sched_switch --filter 'prev_state != 0' -p "$server_pid" -- \
    wrk -t1 -c"$connections" -d"${seconds}s" "$address/" >"$wrk_out"
  stop_server
  local requests
  requests=$(awk '/requests in/ {print $1}' "$wrk_out")
  if [[ -z $requests || $requests -eq 0 ]]; then
    echo "server_cost.sh: $name served no request:" >&2
    cat "$wrk_out" >&2
    exit 1
  fi
  awk -F, -v name="$name" -v round="$round" -v requests="$requests" \
      -v seconds="$seconds" '
    # perf -x, lines: value,unit,event,... ; the second sys_enter_write
    # line is the filtered one (8-byte writes).
    /^#/ || NF < 3 { next }
    {
      value = $1 + 0; event = $3
      if (event == "task-clock") clock = value          # msec
      else if (event == "context-switches") cs = value
      else if (event == "raw_syscalls:sys_enter") sys = value
      else if (event == "sched:sched_switch") voluntary = value
      else if (event == "syscalls:sys_enter_write") {
        if (seen_write++) eventfd = value; else write_all = value
      } else {
        sub("syscalls:sys_enter_", "", event); count[event] = value
      }
    }
    END {
      r = count["read"] + count["readv"] + count["recvfrom"] + count["recvmsg"]
      w = write_all - eventfd + count["writev"] + count["sendto"] + count["sendmsg"]
      e = count["epoll_wait"] + count["epoll_pwait"] + count["epoll_pwait2"]
      f = count["futex"] + count["futex_wait"] + count["futex_wake"]
      y = count["sched_yield"]
      other = sys - r - w - e - f - eventfd - y
      printf "%s %d %.3f %.3f %.3f %.3f %.3f %.4f %.4f %.4f %.4f %.4f %.0f %.4f\n",
        name, round, clock * 1000 / requests, sys / requests, r / requests,
        w / requests, e / requests, f / requests, eventfd / requests,
        y / requests, other / requests, cs / requests, requests / seconds,
        voluntary / requests
    }' "$stat" >>"$work/rows"
  tail -n1 "$work/rows" | awk '{
    printf "%-10s round %d  cpu_us %s  sys %s  (read %s write %s epoll %s futex %s eventfd %s yield %s other %s)  cs %s (vol %s)  req/s %s\n",
      $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $14, $13 }'
}

echo "server_cost: ${#servers[@]} servers, $rounds rounds of ${seconds}s, wrk -t1 -c$connections; load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  # Alternate the order too: round 2 runs the servers backwards.
  order=("${servers[@]}")
  if ((round % 2 == 0)); then
    order=()
    for ((i = ${#servers[@]} - 1; i >= 0; i--)); do order+=("${servers[i]}"); done
  fi
  for spec in "${order[@]}"; do
    measure "${spec%%=*}" "${spec#*=}" "$round"
  done
done

echo
echo "median of $rounds rounds [min-max], ratio to tokio's (or to the first server's):"
awk '
  { n[$1]++; for (i = 3; i <= 14; i++) v[$1, i, n[$1]] = $i
    if (!($1 in order)) { order[$1] = ++names; name[names] = $1 } }
  function median(s, i,   k, j, t, a, m) {
    m = n[s]; for (k = 1; k <= m; k++) a[k] = v[s, i, k]
    for (k = 2; k <= m; k++) { t = a[k]; for (j = k - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    lo = a[1]; hi = a[m]
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    split("cpu_us sys read write epoll futex eventfd yield other cs req/s vol", col, " ")
    base = name[1]
    for (k = 1; k <= names; k++) if (name[k] == "tokio") base = "tokio"
    for (k = 1; k <= names; k++) {
      s = name[k]; line = sprintf("%-10s", s)
      for (i = 3; i <= 14; i++) {
        m = median(s, i); l = lo; h = hi
        if (i == 3 || i == 4 || i == 12 || i == 13) {
          ref = median(base, i)
          ratio = (ref > 0) ? sprintf(" %.3fx", m / ref) : ""
          line = line sprintf("  %s %.3f [%.3f-%.3f]%s", col[i - 2], m, l, h, (s == base) ? "" : ratio)
        } else {
          line = line sprintf("  %s %.3f", col[i - 2], m)
        }
      }
      print line
    }
  }' "$work/rows"
