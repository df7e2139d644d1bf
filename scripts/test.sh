#!/usr/bin/env bash
# `npm test [-- jest args]`: installs what is missing (npm packages, the temporal CLI, a headless Chromium for the
# browser tests), then runs Jest.
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
# the test server.
exec node_modules/.bin/jest "$@"
