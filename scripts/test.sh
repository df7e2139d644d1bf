#!/usr/bin/env bash
# `npm test [-- jest args]`: installs what is missing (npm packages, the temporal CLI, a headless Chromium for the
# browser tests), then runs Jest; without arguments, the cluster tests after it.
# Jest's globalSetup starts a dedicated Temporal dev server for the run and stops it afterwards.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ARGUS_ROOT"

bash scripts/ensure-deps.sh
TEMPORAL_CLI_PATH=$(bash scripts/find-temporal.sh)
export TEMPORAL_CLI_PATH
# The system's Chromium, else the one npm @sparticuz/chromium ships, extracted into .tools/chromium/ on the first
# run (test/support/browser.ts asks the same script, so a direct `jest` run provisions it too). Not fatal here:
# without a browser only the browser tests fail, and they say what was tried.
node scripts/ensure-browser.js >/dev/null || say "no Chromium for the browser end-to-end tests; they will fail"
# Jest itself rather than `npx jest`: signals sent to this process then reach Jest, whose teardown stops
# the test server. With arguments (a file, a pattern): just those.
if (($# > 0)); then exec node_modules/.bin/jest "$@"; fi
# The whole suite, then the production topology's (jest.cluster.config.js: PostgreSQL, the Temporal server built
# from the Go module proxy into .tools/ on the first run, workers on the PostgreSQL state store). ARGUS_SKIP_CLUSTER=1
# leaves the second out.
status=0
node_modules/.bin/jest || status=$?
if [[ "${ARGUS_SKIP_CLUSTER:-}" == 1 ]]; then
  say "cluster tests left out (ARGUS_SKIP_CLUSTER=1)"
elif ! command -v go >/dev/null 2>&1; then
  # The Temporal server builds from the Go module proxy, which needs a Go toolchain (1.26+) to build with.
  say "NOT RUN: the cluster tests need Go 1.26+ to build the Temporal server from the Go module proxy; install Go, then: npm run test:cluster"
else
  say "the cluster tests (npm run test:cluster; the first run builds the Temporal server, about 5 minutes)"
  node_modules/.bin/jest -c jest.cluster.config.js || status=$?
fi
exit "$status"
