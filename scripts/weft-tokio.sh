#!/usr/bin/env bash
# weft as tokio: the helper commands of the `weft-tokio` crate (a crate
# named `tokio` whose runtime is weft; docs/guide.md, "Run your tokio
# service on weft").
#
#   scripts/weft-tokio.sh setup        fetch tokio's release from the package
#                                      registry and write it, renamed, under
#                                      weft-tokio/upstream/ (ignored by git)
#   scripts/weft-tokio.sh check [DIR [CARGO ARGS]]
#                                      fail, naming the cause and the fix,
#                                      when the Cargo project in DIR (default:
#                                      .) does not run on weft-tokio (CARGO
#                                      ARGS, e.g. a `--config` patch, go to
#                                      cargo)
#   scripts/weft-tokio.sh test [SUITE [FILE]]
#                                      build a suite's own tests (tokio,
#                                      tokio-util, tokio-stream), unchanged,
#                                      against weft-tokio and run them; a line
#                                      per file (FILE: one file, e.g.
#                                      `time_sleep`)
#
# Why a renamed copy: weft-tokio takes tokio's runtime-free parts (`sync`,
# the `io` traits and utilities, `select!`/`join!`/`pin!`) from tokio's own
# release rather than writing them again; a registry dependency on `tokio`
# itself would be a cycle once `tokio` is patched to weft-tokio, and code
# written elsewhere is not committed to this repository.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CRATE="$ROOT/weft-tokio"
UPSTREAM="$CRATE/upstream"
# The tokio release the copy is made from: its tests are the judge.
TOKIO_VERSION=1.54.1
# tokio-util and tokio-stream, whose test suites are run too.
TOKIO_UTIL_VERSION=0.7.20
TOKIO_STREAM_VERSION=0.1.19

die() { echo "weft-tokio: $*" >&2; exit 1; }

# Prints the directory cargo unpacked crate `$1` version `$2` into,
# downloading it through cargo if needed.
fetch_crate() {
    local name=$1 version=$2 tmp
    tmp=$(mktemp -d)
    cat > "$tmp/Cargo.toml" <<TOML
[package]
name = "weft-tokio-fetch"
version = "0.0.0"
edition = "2021"
[lib]
path = "lib.rs"
[dependencies]
$name = "=$version"
[workspace]
TOML
    touch "$tmp/lib.rs"
    cargo metadata --quiet --format-version 1 --manifest-path "$tmp/Cargo.toml" \
        | grep -o "\"manifest_path\":\"[^\"]*/$name-$version/Cargo.toml\"" \
        | head -1 | sed -e 's/^"manifest_path":"//' -e 's#/Cargo.toml"$##'
    rm -rf "$tmp"
}

# tokio's own primitives (`sync`, `io::copy`, ...) count their work
# against tokio's cooperative budget, which tokio's scheduler sets before
# each poll; here weft's workers poll, and they set weft's budget. This
# points the copy's budget check (`task::coop::{poll_proceed,
# has_budget_remaining}` and the `RestoreOnPending` it returns) at weft's,
# so an always-ready channel or copy loop yields on weft as on tokio.
# Each edit must match exactly once: a tokio release that changed these
# lines fails here, by name, rather than building unbudgeted.
bind_to_weft() {
    local copy=$1
    printf '\n[dependencies.weft]\npath = "%s"\n' "$ROOT/weft" >> "$copy/Cargo.toml"
    python3 - "$copy/src/task/coop/mod.rs" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
edits = [
    # The guard holds weft's guard beside tokio's remembered budget.
    ("pub struct RestoreOnPending(Cell<Budget>, PhantomData<*mut ()>);",
     "pub struct RestoreOnPending(Cell<Budget>, PhantomData<*mut ()>, Option<weft::task::coop::RestoreOnPending>);"),
    ("            RestoreOnPending(\n                Cell::new(budget),\n                PhantomData,\n            )",
     "            RestoreOnPending(\n                Cell::new(budget),\n                PhantomData,\n                None,\n            )"),
    ("        pub fn made_progress(&self) {\n            self.0.set(Budget::unconstrained());",
     "        pub fn made_progress(&self) {\n            if let Some(weft) = &self.2 {\n                weft.made_progress();\n            }\n            self.0.set(Budget::unconstrained());"),
    # The check itself: weft's budget.
    ("    pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {\n",
     "    pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {\n        if true {\n            return weft::task::coop::poll_proceed(cx).map(|weft| RestoreOnPending(Cell::new(Budget::unconstrained()), PhantomData, Some(weft)));\n        }\n"),
    ("pub fn has_budget_remaining() -> bool {\n",
     "pub fn has_budget_remaining() -> bool {\n    if true {\n        return weft::task::coop::has_budget_remaining();\n    }\n"),
]
for old, new in edits:
    count = text.count(old)
    if count != 1:
        sys.exit(f"weft-tokio: tokio's task/coop/mod.rs changed: {old[:60]!r} found {count} times")
    text = text.replace(old, new)
open(path, "w").write(text)
PY
    # `mpsc::Sender::send_timeout` (and its error) are behind tokio's
    # `time` feature, which the copy is built without (time is weft's):
    # the copy keeps them always and times the wait with weft's timer.
    python3 - "$copy/src/sync/mpsc" <<'PY'
import sys
folder = sys.argv[1]
edits = {
    "error.rs": [
        ("cfg_time! {\n    // ===== SendTimeoutError =====",
         "macro_rules! weft_always { ($($item:item)*) => { $($item)* } }\n\nweft_always! {\n    // ===== SendTimeoutError ====="),
    ],
    "bounded.rs": [
        ("cfg_time! {\n    use crate::sync::mpsc::error::SendTimeoutError;\n    use crate::time::Duration;\n}",
         "use crate::sync::mpsc::error::SendTimeoutError;\nuse std::time::Duration;"),
        ("    #[cfg(feature = \"time\")]\n    #[cfg_attr(docsrs, doc(cfg(feature = \"time\")))]\n    pub async fn send_timeout(",
         "    pub async fn send_timeout("),
        ("crate::time::timeout(timeout, self.reserve())",
         "weft::time::timeout(timeout, self.reserve())"),
    ],
}
for name, pairs in edits.items():
    path = folder + "/" + name
    text = open(path).read()
    for old, new in pairs:
        count = text.count(old)
        if count != 1:
            sys.exit(f"weft-tokio: tokio's sync/mpsc/{name} changed: {old[:60]!r} found {count} times")
        text = text.replace(old, new)
    open(path, "w").write(text)
PY
    # The blocking calls of tokio's primitives (`blocking_recv`,
    # `blocking_lock`, ...) panic on a thread that drives a runtime, as on
    # tokio, rather than stall it: the copy, built without tokio's runtime,
    # asks weft whether the thread may block.
    python3 - "$copy/src/future/block_on.rs" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
old = "    pub(crate) fn block_on<F: Future>(f: F) -> F::Output {\n        let mut park = crate::runtime::park::CachedParkThread::new();"
new = ("    pub(crate) fn block_on<F: Future>(f: F) -> F::Output {\n"
       "        if !weft::task::blocking_allowed() {\n"
       "            panic!(\"Cannot block the current thread from within a runtime. This \\\n"
       "            happens because a function attempted to block the current \\\n"
       "            thread while the thread is being used to drive asynchronous \\\n"
       "            tasks.\");\n"
       "        }\n"
       "        let mut park = crate::runtime::park::CachedParkThread::new();")
if text.count(old) != 1:
    sys.exit("weft-tokio: tokio's future/block_on.rs changed: its block_on without a runtime was not found once")
open(path, "w").write(text.replace(old, new))
PY
}

setup() {
    local src
    src=$(fetch_crate tokio "$TOKIO_VERSION")
    [ -d "$src" ] || die "cargo did not unpack tokio $TOKIO_VERSION (is the registry reachable?)"
    rm -rf "$UPSTREAM"
    mkdir -p "$UPSTREAM"
    cp -r "$src" "$UPSTREAM/tokio"
    # The package and its library get a name of their own: `tokio` is the
    # name weft-tokio answers to. Only the [package] and [lib] names change.
    sed -i -e '0,/^name = "tokio"$/s//name = "weft-tokio-upstream"/' \
        -e '/^\[lib\]$/,/^\[/ s/^name = "tokio"$/name = "tokio_upstream"/' \
        "$UPSTREAM/tokio/Cargo.toml"
    grep -q '^name = "weft-tokio-upstream"$' "$UPSTREAM/tokio/Cargo.toml" \
        || die "tokio's manifest changed shape: the package was not renamed"
    grep -q '^name = "tokio_upstream"$' "$UPSTREAM/tokio/Cargo.toml" \
        || die "tokio's manifest changed shape: the library was not renamed"
    bind_to_weft "$UPSTREAM/tokio"
    for pair in "tokio-util $TOKIO_UTIL_VERSION" "tokio-stream $TOKIO_STREAM_VERSION"; do
        set -- $pair
        src=$(fetch_crate "$1" "$2")
        [ -d "$src" ] || die "cargo did not unpack $1 $2"
        # Only their tests are used (the crates themselves come from the
        # registry through the patch).
        mkdir -p "$UPSTREAM/$1"
        cp -r "$src/tests" "$src/Cargo.toml" "$UPSTREAM/$1/"
    done
    echo "$TOKIO_VERSION" > "$UPSTREAM/VERSION"
    echo "weft-tokio: tokio $TOKIO_VERSION written to ${UPSTREAM#$ROOT/}/tokio as weft-tokio-upstream"
}

check() {
    local dir=${1:-.} lock tree
    shift || true
    # Extra arguments go to cargo (e.g. `--config 'patch.crates-io.tokio.path="..."'`).
    local extra=("$@")
    [ -f "$dir/Cargo.toml" ] || die "no Cargo.toml in $dir"
    (cd "$dir" && cargo metadata "${extra[@]}" --quiet --format-version 1 > /dev/null) \
        || die "cargo cannot read the project in $dir"
    lock="$dir/Cargo.lock"
    # A workspace member's lock file may be above it.
    [ -f "$lock" ] || lock=$(cd "$dir" && cargo locate-project --workspace --message-format plain | xargs dirname)/Cargo.lock
    if [ -f "$lock" ] && grep -A2 '^\[\[patch.unused\]\]' "$lock" | grep -q '^name = "tokio"$'; then
        echo "weft-tokio check: FAILED: the [patch] of tokio is unused (Cargo.lock lists it under [[patch.unused]]); real tokio is built instead." >&2
        culprits "$dir" >&2
        echo "  Causes and fixes:" >&2
        echo "  - Cargo.lock already pinned tokio: run \`cargo update -p tokio\` in $dir." >&2
        echo "  - a dependency asks for an exact tokio (\`=1.x.y\`) or a version above weft-tokio's: find it with \`cargo tree -i tokio\`." >&2
        echo "  - a dependency asks for a tokio feature weft-tokio does not declare: see the warning \`cargo build\` prints." >&2
        exit 1
    fi
    tree=$(cd "$dir" && cargo tree "${extra[@]}" --quiet -e normal,build,dev -i tokio --prefix none --format '{p}' 2>&1 || true)
    if echo "$tree" | grep -q 'specification .tokio. is ambiguous'; then
        echo "weft-tokio check: FAILED: two tokio crates in the graph (weft-tokio and one from the registry):" >&2
        (cd "$dir" && cargo tree --quiet -e normal,build,dev -i "tokio@$(registry_tokio_version "$dir")" --depth 1) >&2 || true
        echo "  The crates above still build real tokio: a dependency pins \`=1.x.y\` (ask its authors, or patch it too), or its requirement is above weft-tokio's version." >&2
        exit 1
    fi
    if ! echo "$tree" | head -1 | grep -q "weft-tokio\|^tokio v1\.99"; then
        if echo "$tree" | head -1 | grep -q "^tokio v"; then
            echo "weft-tokio check: FAILED: tokio resolves from the registry ($(echo "$tree" | head -1)), not weft-tokio." >&2
            echo "  Add to $dir/Cargo.toml:  [patch.crates-io] tokio = { path = \"$CRATE\" }  (then \`cargo update -p tokio\`)." >&2
            exit 1
        fi
        echo "weft-tokio check: nothing in $dir depends on tokio." >&2
        exit 1
    fi
    echo "weft-tokio check: ok: every crate in $dir that uses tokio builds weft-tokio ($(echo "$tree" | head -1))."
}

# Names the packages whose tokio requirement weft-tokio's version does not
# meet (an exact pin, an upper bound) or that ask for a feature it lacks.
culprits() {
    (cd "$1" && cargo metadata --quiet --format-version 1) | python3 -c '
import json, sys
meta = json.load(sys.stdin)
for pkg in meta["packages"]:
    for dep in pkg["dependencies"]:
        req = dep["req"]
        if dep["name"] == "tokio" and (req.startswith("=") or "<" in req):
            print("  %s %s asks for tokio %s, which 1.99 does not meet" % (pkg["name"], pkg["version"], req))
'
}

registry_tokio_version() {
    (cd "$1" && cargo metadata --quiet --format-version 1) \
        | grep -o '"name":"tokio","version":"[^"]*","id":"registry[^"]*"' \
        | head -1 | sed -e 's/.*"version":"//' -e 's/".*//'
}

# Writes the harness crate that builds one suite's test files unchanged
# against weft-tokio: $1 suite (tokio, tokio-util, tokio-stream). The test
# files test `cfg(feature = ...)` of the crate they are compiled in: the
# harness declares the suite's features and turns them all on.
write_harness() {
    local suite=$1 dir="$CRATE/harness/$1" file name
    [ -d "$UPSTREAM/$suite/tests" ] || die "no tests of $suite: run \`scripts/weft-tokio.sh setup\` first"
    mkdir -p "$dir"
    {
        cat <<TOML
[package]
name = "weft-tokio-harness-$suite"
version = "0.0.0"
edition = "2021"
publish = false
autotests = false
autobenches = false
autoexamples = false

[lib]
path = "lib.rs"

[features]
default = ["full", "test-util", "rt", "rt-multi-thread", "net", "macros", "sync", "time", "fs", "process", "signal", "io-util", "io-std", "parking_lot", "codec", "compat", "io", "rt", "tracing", "join-map", "sync", "time", "signal", "net", "io-util"]
full = []
test-util = []
rt = []
rt-multi-thread = []
net = []
macros = []
sync = []
time = []
fs = []
process = []
signal = []
io-util = []
io-std = []
parking_lot = []
codec = []
compat = []
io = []
tracing = []
join-map = []

[dev-dependencies]
tokio = { version = "1.54", features = ["full", "test-util"] }
tokio-test = "0.4"
$(if [ "$suite" = tokio-stream ]; then echo "tokio-stream = { version = \"=$TOKIO_STREAM_VERSION\", features = [\"full\"] }"; else echo 'tokio-stream = { version = "0.1", features = ["full"] }'; fi)

$(if [ "$suite" = tokio-util ]; then echo "tokio-util = { version = \"=$TOKIO_UTIL_VERSION\", features = [\"full\"] }"; fi)
futures = { version = "0.3", features = ["async-await"] }
futures-util = "0.3"
futures-core = "0.3"
futures-sink = "0.3"
pin-project-lite = "0.2"
hashbrown = "0.15"
slab = "0.4"
futures-concurrency = "7.6.3"
futures-test = "0.3.31"
futures-io = "0.3"
async-stream = "0.3"
mockall = "0.13"
rand = "0.9"
proptest = "1"
socket2 = "0.6"
tempfile = "3.1"
libc = "0.2"
nix = { version = "0.31", default-features = false, features = ["aio", "fs", "socket"] }
bytes = "1"
parking_lot = "0.12"
tracing = "0.1"
tracing-subscriber = { version = "0.3", default-features = false, features = ["fmt", "std"] }
parking = "2"

[patch.crates-io]
tokio = { path = "$CRATE" }

[workspace]
TOML
        for file in "$UPSTREAM/$suite/tests"/*.rs; do
            name=$(basename "$file" .rs)
            printf '\n[[test]]\nname = "%s"\npath = "%s"\n' "$name" "$file"
        done
    } > "$dir/Cargo.toml"
    touch "$dir/lib.rs"
    echo "$dir"
}

# Runs one built test file (60 s at most) and prints its line of the
# results: passed / failed / ignored, or what finished before it crashed or
# was stopped. $1 suite, $2 file name, $3 its test binary, $4 harness dir.
run_file() {
    local suite=$1 name=$2 bin=$3 dir=$4 out passed failed ignored
    out=$(cd "$UPSTREAM/$suite" && timeout 60 "$bin" 2>&1) || true
    echo "$out" > "$dir/$name.out"
    passed=$(echo "$out" | grep -o '[0-9]* passed' | tail -1 | cut -d' ' -f1 || true)
    failed=$(echo "$out" | grep -o '[0-9]* failed' | tail -1 | cut -d' ' -f1 || true)
    ignored=$(echo "$out" | grep -o '[0-9]* ignored' | tail -1 | cut -d' ' -f1 || true)
    if ! echo "$out" | grep -q '^test result'; then
        # Killed at the limit or aborted: the tests that reported count.
        passed=$(echo "$out" | grep -c ' \.\.\. ok$' || true)
        failed=$(echo "$out" | grep -c ' \.\.\. FAILED$' || true)
        printf '%-40s passed %4s  failed %4s  unfinished: crashed or timed out (see %s)\n' \
            "$name" "$passed" "$failed" "${dir#$ROOT/}/$name.out"
        return
    fi
    printf '%-40s passed %4s  failed %4s  ignored %4s\n' "$name" "${passed:-0}" "${failed:-0}" "${ignored:-0}"
}

# Builds and runs one suite's test files against weft-tokio; prints, per
# file, passed / failed / ignored or "does not compile", and the totals.
# $1 suite, $2 optional test file name.
run_suite() {
    local suite=$1 only=${2:-} dir log results bin name
    local -A bins=()
    dir=$(write_harness "$suite")
    log="$dir/build.log"
    results="$dir/results.txt"
    : > "$results"
    local targets=()
    if [ -n "$only" ]; then targets=(--test "$only"); else targets=(--tests); fi
    # One build of every file, keeping on past the ones that fail.
    (cd "$dir" && cargo build --keep-going "${targets[@]}" --message-format=json 2> "$log.err" > "$log") || true
    for file in "$UPSTREAM/$suite/tests"/*.rs; do
        name=$(basename "$file" .rs)
        [ -n "$only" ] && [ "$name" != "$only" ] && continue
        bin=$(grep -o "\"executable\":\"[^\"]*/$name-[0-9a-f]*\"" "$log" | head -1 | sed -e 's/"executable":"//' -e 's/"$//' || true)
        if [ -z "$bin" ] || [ ! -x "$bin" ]; then
            printf '%-40s does not compile\n' "$name" >> "$results"
            continue
        fi
        bins[$name]=$bin
        run_file "$suite" "$name" "$bin" "$dir" >> "$results"
    done
    cat "$results"
    awk '/passed/ {p += $3; f += $5} /does not compile/ {n++} /unfinished/ {c++}
         END {printf "TOTAL %s: passed %d, failed %d; files not compiling %d, crashed %d\n", suite, p, f, n, c}' suite="$suite" "$results"
    local expected="$CRATE/expected/$suite.txt"
    [ -z "$only" ] && [ -f "$expected" ] || return 0
    # The gate: every file that passed entirely in the recorded run still
    # does (a file may get better; none may get worse). A file worse than
    # recorded runs once more, and counts as worse only if it fails again:
    # a regression fails every time, a timing failure on a loaded machine
    # seldom twice (both runs are printed).
    local worse
    worse=$(worse_files "$expected" "$results" "$CRATE/expected/$suite.flaky")
    if [ -n "$worse" ]; then
        echo "weft-tokio: worse than recorded: $worse; each runs once more"
        for name in $worse; do
            bin=${bins[$name]:-}
            [ -n "$bin" ] || continue
            local line
            line=$(run_file "$suite" "$name" "$bin" "$dir")
            echo "second run: $line"
            python3 - "$results" "$name" "$line" <<'PY'
import sys
path, name, line = sys.argv[1:]
rows = [line + "\n" if row.split()[:1] == [name] else row for row in open(path)]
open(path, "w").writelines(rows)
PY
        done
        worse=$(worse_files "$expected" "$results" "$CRATE/expected/$suite.flaky")
        [ -z "$worse" ] || die "files that passed in $expected no longer do (twice): $worse"
    fi
    echo "weft-tokio: no file that passed in the recorded run fails now"
}

# Prints the files that passed entirely in the recorded results ($1) and
# do not now ($2), leaving out those listed in $3 (files whose outcome
# depends on timing, each with its reason).
worse_files() {
    python3 - "$1" "$2" "$3" <<'PY'
import os, re, sys
def read(path):
    out = {}
    for line in open(path):
        m = re.match(r"(\S+)\s+passed\s+(\d+)\s+failed\s+(\d+)", line)
        if m and "unfinished" in line:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)) + 1)
        elif m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        elif line.strip():
            out[line.split()[0]] = None
    return out
before, now = read(sys.argv[1]), read(sys.argv[2])
flaky = set()
if os.path.exists(sys.argv[3]):
    for line in open(sys.argv[3]):
        line = line.split("#")[0].strip()
        if line:
            flaky.add(line.split()[0])
print(" ".join(name for name, was in before.items()
                if name not in flaky and was is not None and was[1] == 0
                and (now.get(name) is None or now[name][1] > 0 or now[name][0] < was[0])))
PY
}

case "${1:-}" in
    setup) setup ;;
    check) shift; check "${@:-.}" ;;
    test) shift; run_suite "${1:-tokio}" "${2:-}" ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
