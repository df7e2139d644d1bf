#!/usr/bin/env bash
# Makes node_modules match package-lock.json and checks the native pieces ARGUS needs. Idempotent:
# a second run with nothing changed returns at once. Progress to stderr, npm output to .argus/logs/.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ARGUS_ROOT"

lock=package-lock.json
installed=node_modules/.package-lock.json
stamp=node_modules/.argus-deps-ok
manifest=$lock
[[ -f $lock ]] || manifest=package.json

if [[ -f $stamp && -f $installed && ! $manifest -nt $installed && ! $installed -nt $stamp ]]; then
  exit 0
fi

npm_install() {
  mkdir -p "$ARGUS_LOGS"
  local log="$ARGUS_LOGS/npm-install.log" started cmd
  if [[ -f $lock ]]; then cmd=(npm ci); else cmd=(npm install); fi
  say "installing npm dependencies (${cmd[*]}, log: ${log#"$ARGUS_ROOT"/})"
  started=$(now_s)
  if ! "${cmd[@]}" --no-audit --no-fund --loglevel=warn </dev/null >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "${cmd[*]} failed; full log in $log"
  fi
  say "npm dependencies installed in $(since "$started") s"
}

if [[ ! -d node_modules || ! -f $installed || $manifest -nt $installed ]]; then
  npm_install
  reinstalled=1
fi

# npm 11 may skip dependencies' install scripts; check each native piece, run the script it needs,
# and as a last resort reinstall everything once.
bridge=node_modules/@temporalio/core-bridge/releases/x86_64-unknown-linux-gnu/index.node
bridge_ok() { [[ $(uname -sm) != "Linux x86_64" || -f $bridge ]]; }
swc_ok() {
  node -e "require('@swc/core').transformSync('const a: number = 1', { jsc: { parser: { syntax: 'typescript' } } })" \
    >/dev/null 2>&1
}
esbuild_ok() {
  node -e "require('esbuild').transformSync('const a: number = 1', { loader: 'ts' })" >/dev/null 2>&1 &&
    node node_modules/tsx/dist/cli.mjs --eval 'const a: number = 1' >/dev/null 2>&1
}
all_ok() { bridge_ok && swc_ok && esbuild_ok; }

if ! swc_ok && [[ -f node_modules/@swc/core/postinstall.js ]]; then
  say "@swc/core does not load; running its install script"
  (cd node_modules/@swc/core && node postinstall.js) >&2 || true
fi
if ! esbuild_ok && [[ -f node_modules/esbuild/install.js ]]; then
  say "esbuild does not run; running its install script"
  (cd node_modules/esbuild && node install.js) >&2 || true
fi
if ! all_ok && [[ -z ${reinstalled:-} ]]; then
  say "native dependencies are broken; reinstalling node_modules"
  rm -rf node_modules
  npm_install
fi
bridge_ok || die "the Temporal native bridge is missing ($bridge); the @temporalio/core-bridge package is incomplete"
swc_ok || die "@swc/core does not load (the worker needs it to bundle workflows); try: npm rebuild @swc/core"
esbuild_ok || die "esbuild (used by tsx) does not run; try: npm rebuild esbuild"

touch "$stamp"
