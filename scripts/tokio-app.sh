#!/usr/bin/env bash
# examples/tokio-app, a service written as plain tokio code, built and
# run twice: as it is (on tokio) and with tokio patched to weft-tokio (on
# weft). Its tests pass on both; on weft no tokio runtime thread exists.
#
#   scripts/tokio-app.sh [tokio|weft|both]     (default: both)
#
# DATABASE_URL (a PostgreSQL URL, e.g. from `scripts/postgres.sh start`)
# adds the PostgreSQL checks. The weft build runs in a copy of the example
# under target/tokio-app/ so that its lock file (tokio resolved to
# weft-tokio) does not replace the example's own.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
APP="$ROOT/examples/tokio-app"
OUT="$ROOT/target/tokio-app"
which=${1:-both}

# tonic-build runs protoc (Debian's protobuf-compiler).
if ! command -v protoc > /dev/null; then
    if command -v apt-get > /dev/null; then
        { apt-get install -y -qq protobuf-compiler || { apt-get update -qq && apt-get install -y -qq protobuf-compiler; }; } >&2
    else
        echo "tokio-app needs protoc (protobuf-compiler) to build its gRPC code" >&2
        exit 1
    fi
fi

on_tokio() {
    echo "== tokio-app on tokio"
    (cd "$APP" && CARGO_TARGET_DIR="$OUT/target-tokio" TOKIO_APP_RUNTIME=tokio cargo test --locked)
    (cd "$APP" && CARGO_TARGET_DIR="$OUT/target-tokio" cargo run --locked --quiet)
}

on_weft() {
    echo "== tokio-app on weft (tokio patched to weft-tokio)"
    [ -f "$ROOT/weft-tokio/upstream/VERSION" ] || bash "$ROOT/scripts/weft-tokio.sh" setup
    local copy="$OUT/weft-src" patch="patch.crates-io.tokio.path=\"$ROOT/weft-tokio\""
    rm -rf "$copy"
    mkdir -p "$copy"
    cp -r "$APP/Cargo.toml" "$APP/Cargo.lock" "$APP/build.rs" "$APP/src" "$APP/tests" "$APP/proto" "$copy/"
    # The example's lock file pins tokio's release: re-resolve tokio alone.
    (cd "$copy" && cargo update --quiet --config "$patch" -p tokio)
    bash "$ROOT/scripts/weft-tokio.sh" check "$copy" --config "$patch"
    (cd "$copy" && CARGO_TARGET_DIR="$OUT/target-weft" TOKIO_APP_RUNTIME=weft cargo test --config "$patch")
    (cd "$copy" && CARGO_TARGET_DIR="$OUT/target-weft" cargo run --quiet --config "$patch")
}

case "$which" in
    tokio) on_tokio ;;
    weft) on_weft ;;
    both) on_tokio; on_weft ;;
    *) echo "usage: scripts/tokio-app.sh [tokio|weft|both]" >&2; exit 2 ;;
esac
