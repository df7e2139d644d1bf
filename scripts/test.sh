#!/usr/bin/env bash
# `npm test [-- jest args]`: installs what is missing (npm packages, the temporal CLI), then runs Jest.
# Jest's globalSetup starts a dedicated Temporal dev server for the run and stops it afterwards.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ARGUS_ROOT"

bash scripts/ensure-deps.sh
TEMPORAL_CLI_PATH=$(bash scripts/find-temporal.sh)
export TEMPORAL_CLI_PATH
# Jest itself rather than `npx jest`: signals sent to this process then reach Jest, whose teardown stops
# the test server.
exec node_modules/.bin/jest "$@"
