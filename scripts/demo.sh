#!/usr/bin/env bash
# npm run demo: install what is missing, start or reuse the dev server, sweep the bundled demo catalog.
# Everything but the report goes to stderr, so `npm run --silent demo -- --json` prints only JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh 1>&2
bash scripts/server.sh 1>&2
exec node scripts/run-ts.js client/cli.ts demo "$@"
