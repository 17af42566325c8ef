#!/usr/bin/env bash
# examples/tokio-bench, the hot path of a tokio service (axum and sqlx
# serving, reqwest calling) as plain tokio code, built in release twice:
# as it is (on tokio) and with tokio patched to weft-tokio (on weft).
# weft-bench's `tokio-patch` lane runs both builds side by side.
#
#   scripts/tokio-bench.sh build     builds both (cached under
#                                    target/tokio-bench/), then prints
#                                    "tokio PATH" and "weft PATH"
#
# The weft build runs in a copy of the example under target/tokio-bench/
# so that its lock file (tokio resolved to weft-tokio) does not replace
# the example's own; `scripts/weft-tokio.sh check` guards it.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
APP="$ROOT/examples/tokio-bench"
OUT="$ROOT/target/tokio-bench"

build() {
    (cd "$APP" && CARGO_TARGET_DIR="$OUT/target-tokio" cargo build --release --locked --quiet) >&2
    [ -f "$ROOT/weft-tokio/upstream/VERSION" ] || bash "$ROOT/scripts/weft-tokio.sh" setup >&2
    local copy="$OUT/weft-src" patch="patch.crates-io.tokio.path=\"$ROOT/weft-tokio\""
    mkdir -p "$copy"
    # Copied only when changed, so that cargo's fingerprints stay warm.
    cp -u "$APP/Cargo.toml" "$copy/"
    mkdir -p "$copy/src"
    cp -u "$APP/src/main.rs" "$copy/src/"
    if [ ! -f "$copy/Cargo.lock" ] || [ "$APP/Cargo.lock" -nt "$copy/Cargo.lock.from" ]; then
        cp "$APP/Cargo.lock" "$copy/Cargo.lock"
        touch "$copy/Cargo.lock.from"
        # The example's lock file pins tokio's release: re-resolve tokio alone.
        (cd "$copy" && cargo update --quiet --config "$patch" -p tokio) >&2
    fi
    bash "$ROOT/scripts/weft-tokio.sh" check "$copy" --config "$patch" >&2
    (cd "$copy" && CARGO_TARGET_DIR="$OUT/target-weft" cargo build --release --quiet --config "$patch") >&2
    echo "tokio $OUT/target-tokio/release/tokio-bench"
    echo "weft $OUT/target-weft/release/tokio-bench"
}

case "${1:-}" in
    build) build ;;
    *) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
