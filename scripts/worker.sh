#!/usr/bin/env bash
# npm run worker [-- args]: install what is missing, then run one worker until it is stopped.
# No shell stays between npm and node: package.json says `exec bash scripts/worker.sh` (npm runs scripts with
# `sh -c`, and a dash killed by npm's SIGTERM would leave its child running) and this script execs node. So
# `kill <pid of npm>` reaches scripts/run-ts.js, which passes it on to the worker, and npm ends as it did.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh 1>&2
exec node scripts/run-ts.js worker/main.ts "$@"
