#!/usr/bin/env bash
# Checks that weft's metrics snapshot parses with standard tools (issue 7):
# `weft-bench metrics-dump` runs a small workload and prints
# `Handle::metrics()` as JSON (serde) and as Prometheus text; the JSON must
# pass `python3 -m json.tool`, the text must parse with the Prometheus
# text parser of the `prometheus-client` package from PyPI, and both must
# hold what they should (one series per worker, the poll-time histogram,
# totals that are the sum of the workers).
#
# Installs what it needs: prometheus-client into a virtualenv under
# target/ (the machine provides python3 and the Rust toolchain).
set -euo pipefail
cd "$(dirname "$0")/.."

# Not the default (4), so a per-worker check cannot pass by accident.
workers=3

cargo build --release -p weft-bench
bench=target/release/weft-bench
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bench" metrics-dump --format json --workers "$workers" >"$out/metrics.json"
"$bench" metrics-dump --format prometheus --workers "$workers" >"$out/metrics.prom"

python3 -m json.tool "$out/metrics.json" >/dev/null
echo "python3 -m json.tool: the JSON snapshot parses"

venv=target/check-metrics-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import prometheus_client' 2>/dev/null \
  || "$venv/bin/python" -m pip install --quiet prometheus-client

"$venv/bin/python" - "$out/metrics.json" "$out/metrics.prom" "$workers" <<'PY'
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

json_path, prom_path, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
worker_labels = [str(w) for w in range(workers)]

# The JSON: its shape, and totals equal to the sum over the workers.
snapshot = json.load(open(json_path))
assert snapshot["num_workers"] == workers, snapshot["num_workers"]
assert len(snapshot["workers"]) == workers
assert len(snapshot["local_queue_depths"]) == workers
scalar_fields = [k for k, v in snapshot["total"].items() if isinstance(v, int)]
assert "polls" in scalar_fields and "busy_ns" in scalar_fields, scalar_fields
for field in scalar_fields:
    summed = sum(w[field] for w in snapshot["workers"])
    assert snapshot["total"][field] == summed, (field, snapshot["total"][field], summed)
assert snapshot["total"]["polls"] > 0
histogram = snapshot["total"]["poll_time_histogram"]
assert len(histogram["buckets"]) == 20 and sum(histogram["buckets"]) > 0, histogram
print(f"JSON: {workers} workers, {len(scalar_fields)} counters, totals = sum of workers")

# The Prometheus text, through the reference parser.
families = {f.name: f for f in text_string_to_metric_families(open(prom_path).read())}


def family(name, kind):
    # The parser names a counter family without its `_total` suffix.
    found = families.get(name) or families.get(name.removesuffix("_total"))
    assert found is not None, f"missing family {name}; have {sorted(families)}"
    assert found.type == kind, (name, found.type, kind)
    return found


def per_worker(found, suffix=""):
    samples = [s for s in found.samples if s.name == found.name + suffix]
    labels = sorted(s.labels["worker"] for s in samples)
    assert labels == worker_labels, (found.name, labels)
    return samples


# Every per-worker counter of the JSON (the two outputs come from two runs,
# so their values differ; their families must not).
worker_counters = [f for f in scalar_fields if f != "busy_ns"]
for field in worker_counters:
    per_worker(family(f"weft_{field}_total", "counter"), "_total")
per_worker(family("weft_busy_seconds_total", "counter"), "_total")
polls = sum(s.value for s in per_worker(family("weft_polls_total", "counter"), "_total"))
assert polls > 0, polls

poll_time = family("weft_poll_time_seconds", "histogram")
for worker in worker_labels:
    mine = [s for s in poll_time.samples if s.labels["worker"] == worker]
    buckets = [s for s in mine if s.name.endswith("_bucket")]
    assert len(buckets) == 20, (worker, len(buckets))
    assert buckets[-1].labels["le"] == "+Inf", buckets[-1].labels
    bounds = [float(s.labels["le"]) for s in buckets]
    assert bounds == sorted(bounds), bounds
    counts = [s.value for s in buckets]
    assert counts == sorted(counts), f"buckets not cumulative: {counts}"
    (count,) = [s.value for s in mine if s.name.endswith("_count")]
    (_sum,) = [s.value for s in mine if s.name.endswith("_sum")]
    assert count == counts[-1], (count, counts[-1])

(workers_gauge,) = family("weft_workers", "gauge").samples
assert workers_gauge.value == workers, workers_gauge
per_worker(family("weft_local_queue_depth", "gauge"))
for name in ["weft_live_tasks", "weft_inject_queue_depth", "weft_blocking_threads",
             "weft_blocking_idle_threads", "weft_blocking_queue_depth"]:
    family(name, "gauge")
for name in ["weft_spawned_remote_total", "weft_finished_remote_total", "weft_remote_wake_requests_total",
             "weft_blocking_tasks_spawned_total"]:
    family(name, "counter")

samples = sum(len(f.samples) for f in families.values())
print(
    f"prometheus_client: {len(families)} families, {samples} samples; "
    f"{len(worker_counters) + 1} per-worker counters and weft_poll_time_seconds "
    f"with one series per worker"
)
PY
echo "check_metrics_formats: ok"
