#!/usr/bin/env bash
# The layer rule of weft/src (docs/architecture.md, "Layers"): the engine
# lives under runtime/, and no file outside runtime/ names one of its
# modules. Outside runtime/ a path may name `crate::runtime::context` and
# the items runtime/mod.rs re-exports for the public modules (its "surface"
# block), never `crate::runtime::<engine module>::…`; a `pub use` that
# publishes a public type the engine defines (`JoinHandle`, `Lane`, …) is
# how the public face shows it, and is allowed. Inside runtime/ the
# engine's parts may name each other. Exits 1 and lists every violation.
set -euo pipefail
cd "$(dirname "$0")/../weft/src"

engine='scheduler|blocking|task|time|io|sys|tokio_compat'
# Every file outside runtime/, tests included; a path may span a `use`
# group, so whole files are joined before matching.
violations=$(find . -name '*.rs' -not -path './runtime/*' | sort | while read -r file; do
  grep -v '^ *pub use ' "$file" | tr '\n' ' ' \
    | grep -oE "(crate::|[^:[:alnum:]_])runtime::(\{[^}]*\b($engine)::|($engine)\b)" \
    | sed "s|^|$file: |" || true
done)
if [ -n "$violations" ]; then
  echo "check_layers: files outside weft/src/runtime/ name engine modules:" >&2
  echo "$violations" >&2
  echo "use runtime::context or an item of runtime/mod.rs's surface block instead" >&2
  exit 1
fi
echo "check_layers: no file outside weft/src/runtime/ names an engine module"
