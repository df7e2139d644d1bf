#!/usr/bin/env bash
# `npm run test:cluster [-- jest args]`: the tests of `npm run cluster` (jest.cluster.config.js). Installs what is
# missing as `npm test` does; the first run also builds the Temporal server (scripts/cluster/temporal-build.ts).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ARGUS_ROOT"

bash scripts/ensure-deps.sh
TEMPORAL_CLI_PATH=$(bash scripts/find-temporal.sh)
export TEMPORAL_CLI_PATH
# Jest itself, not `npx jest`: a signal sent to this process reaches Jest, whose teardown stops the cluster.
exec node_modules/.bin/jest -c jest.cluster.config.js "$@"
