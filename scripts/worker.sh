#!/usr/bin/env bash
# npm run worker [-- args]: install what is missing, then run one worker until it is stopped.
# No shell stays between npm and node: package.json says `exec bash scripts/worker.sh` (npm runs scripts with
# `sh -c`, and a dash killed by npm's SIGTERM would leave its child running) and this script execs node. So
# `kill <pid of npm>` reaches scripts/run-ts.js, which passes it on to the worker, and npm ends as it did.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh 1>&2
# The worker's JavaScript heap: 1 GiB unless ARGUS_WORKER_HEAP_MB says otherwise (docs/operations.md, "Memory").
# Without a limit V8 lets garbage pile up to a quarter of the machine's memory before it collects in earnest.
heap="${ARGUS_WORKER_HEAP_MB:-1024}"
if ! [[ "$heap" =~ ^[0-9]+$ ]] || (( heap < 256 )); then
  echo "ARGUS_WORKER_HEAP_MB must be a whole number of MiB, at least 256 (got \"$heap\")" >&2
  exit 2
fi
export NODE_OPTIONS="--max-old-space-size=$heap${NODE_OPTIONS:+ $NODE_OPTIONS}"
exec node scripts/run-ts.js worker/main.ts "$@"
