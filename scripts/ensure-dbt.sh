#!/usr/bin/env bash
# Prints the absolute path of a `dbt` executable with the duckdb adapter on stdout (progress goes to stderr).
# Order: $ARGUS_DBT, then .tools/dbt-venv/bin/dbt; failing both, installs dbt-core and dbt-duckdb from PyPI
# into .tools/dbt-venv — the only download it makes. Idempotent: a second run only checks `dbt --version`.
# Callers run dbt with DO_NOT_TRACK=1 and never `dbt deps` (no hub access); this script does the same.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# dbt 1.11+ fetches a parser at install time and fails offline; 1.10 is the newest line that installs
# from wheels alone.
DBT_CORE_SPEC="dbt-core~=1.10.0"
DBT_DUCKDB_SPEC="dbt-duckdb~=1.10.0"
export DO_NOT_TRACK=1

usable() { [[ -f $1 && -x $1 ]] && "$1" --version 2>/dev/null | grep -qi 'duckdb'; }

if [[ -n ${ARGUS_DBT:-} ]]; then
  usable "$ARGUS_DBT" || die "ARGUS_DBT=$ARGUS_DBT is not an executable dbt with the duckdb adapter"
  found_file "$ARGUS_DBT"
fi
venv="$ARGUS_TOOLS/dbt-venv"
if usable "$venv/bin/dbt"; then found_file "$venv/bin/dbt"; fi

command -v python3 >/dev/null 2>&1 ||
  die "no dbt found and no python3 to install one; install python3 or set ARGUS_DBT to a dbt with dbt-duckdb"

mkdir -p "$ARGUS_TOOLS" "$ARGUS_LOGS"
# Two test workers may get here at once (as ensure-postgres.sh): the second waits, then finds the first one's dbt.
exec 9>"$ARGUS_TOOLS/.dbt-venv.lock"
flock 9 2>/dev/null || true
if usable "$venv/bin/dbt"; then found_file "$venv/bin/dbt"; fi

log="$ARGUS_LOGS/dbt-install.log"
say "installing dbt ($DBT_CORE_SPEC, $DBT_DUCKDB_SPEC from PyPI) into .tools/dbt-venv (log: ${log#"$ARGUS_ROOT"/})"
started=$(now_s)
{
  pip_into "$venv" "$DBT_CORE_SPEC" "$DBT_DUCKDB_SPEC" &&
  if [[ ! -x $venv/bin/python ]]; then
    # No venv (see pip_into): run dbt through a wrapper that puts lib/ on PYTHONPATH (pip's own console
    # scripts there would not find their modules).
    cat >"$venv/bin/dbt" <<EOF
#!/usr/bin/env bash
export PYTHONPATH="$venv/lib\${PYTHONPATH:+:\$PYTHONPATH}"
exec "$(command -v python3)" -c 'import sys; from dbt.cli.main import cli; sys.argv[0] = "dbt"; sys.exit(cli())' "\$@"
EOF
    chmod +x "$venv/bin/dbt"
  fi
} >"$log" 2>&1 || die "installing dbt failed; see $log"
usable "$venv/bin/dbt" || die "dbt installed but $venv/bin/dbt --version does not list duckdb; see $log"
versions=$("$venv/bin/dbt" --version 2>/dev/null | awk '/installed:/ { c = $3 } /duckdb:/ { d = $3 } END { print "dbt-core " c ", dbt-duckdb " d }')
say "dbt ready in $(since "$started") s ($(du -sh "$venv" | cut -f1)): $versions"
found_file "$venv/bin/dbt"
