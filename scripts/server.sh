#!/usr/bin/env bash
# `npm run server`: makes a Temporal server with ARGUS's search attributes available on 127.0.0.1:7233.
#   scripts/server.sh               reuse a server already on 7233, or start a dev server in the background
#   scripts/server.sh --foreground  start the dev server in this terminal (Ctrl-C stops it)
#   scripts/server.sh stop          stop the dev server this script started
#   scripts/server.sh status        say whether it is running
# With TEMPORAL_ADDRESS pointing elsewhere it only explains how to prepare that cluster.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HOST=127.0.0.1
PORT=7233
UI_PORT=8233
ADDRESS="$HOST:$PORT"
NAMESPACE=${TEMPORAL_NAMESPACE:-default}
PIDFILE="$ARGUS_STATE/temporal.pid"
LOG="$ARGUS_LOGS/temporal.log"
DB="$ARGUS_STATE/temporal.sqlite"
HEALTH_TIMEOUT=60

usage() { sed -n '2,7s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

our_pid() {
  local pid
  [[ -f $PIDFILE ]] || return 1
  pid=$(<"$PIDFILE")
  # Guard against a recycled pid: it must still be a `temporal server start-dev`.
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'server start-dev' && printf '%s\n' "$pid"
}

stop_server() {
  local pid
  if ! pid=$(our_pid); then
    rm -f "$PIDFILE"
    say "no dev server started by this script is running"
    return 0
  fi
  say "stopping the Temporal dev server (pid $pid)"
  # setsid made it a process-group leader; signal the whole group.
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "still running after 10 s; sending SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
  say "stopped"
}

remote_instructions() {
  cat <<EOF
ARGUS will use the Temporal cluster at $TEMPORAL_ADDRESS (namespace $NAMESPACE); no local server is started.
Register ARGUS's search attributes there once (needs operator rights; add TLS / API-key flags as required):
EOF
  local spec
  for spec in "${ARGUS_SEARCH_ATTRIBUTES[@]}"; do
    printf '  temporal operator search-attribute create --address %s --namespace %s --name %s --type %s\n' \
      "$TEMPORAL_ADDRESS" "$NAMESPACE" "${spec%%=*}" "${spec#*=}"
  done
  echo "On Temporal Cloud use: tcld namespace search-attributes add (see docs/operations.md)."
}

start_args() {
  local -a args=(server start-dev --ip "$HOST" --port "$PORT" --ui-port "$UI_PORT" --db-filename "$DB")
  mapfile -t -O "${#args[@]}" args < <(search_attribute_flags)
  mapfile -t -O "${#args[@]}" args < <(dynamic_config_flags)
  [[ $NAMESPACE == default ]] || args+=(--namespace "$NAMESPACE")
  printf '%s\n' "${args[@]}"
}

banner() {
  echo "Temporal dev server: $ADDRESS — Web UI http://localhost:$UI_PORT"
  [[ $NAMESPACE == default ]] || echo "Namespace: $NAMESPACE"
}

mode=background
case "${1:-}" in
  "") ;;
  --foreground | -f) mode=foreground ;;
  stop) mode=stop ;;
  status) mode=status ;;
  -h | --help)
    usage
    exit 0
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac

if [[ $mode == stop ]]; then
  stop_server
  exit 0
fi

case "${TEMPORAL_ADDRESS:-}" in
  "" | "localhost:$PORT" | "$ADDRESS") ;;
  *)
    remote_instructions
    exit 0
    ;;
esac

CLI=$(bash "$ARGUS_ROOT/scripts/find-temporal.sh")

if [[ $mode == status ]]; then
  if pid=$(our_pid); then
    echo "running (pid $pid); $(banner)"
  elif temporal_healthy "$CLI" "$ADDRESS"; then
    echo "a Temporal server not started by this script answers on $ADDRESS"
  else
    echo "no Temporal server on $ADDRESS"
  fi
  exit 0
fi

if port_open "$HOST" "$PORT"; then
  if ! wait_healthy "$CLI" "$ADDRESS" 10; then
    die "something listens on $ADDRESS but is not a healthy Temporal frontend; free the port or set TEMPORAL_ADDRESS"
  fi
  ensure_namespace "$CLI" "$ADDRESS" "$NAMESPACE"
  ensure_search_attributes "$CLI" "$ADDRESS" "$NAMESPACE"
  if pid=$(our_pid); then
    say "dev server already running (pid $pid)"
    banner
  else
    echo "Reusing the Temporal server already on $ADDRESS (namespace $NAMESPACE); ARGUS search attributes are registered."
  fi
  exit 0
fi

mkdir -p "$ARGUS_LOGS"
mapfile -t ARGS < <(start_args)

if [[ $mode == foreground ]]; then
  banner
  echo "$$" >"$PIDFILE"
  exec "$CLI" "${ARGS[@]}"
fi

say "starting the Temporal dev server (state: ${DB#"$ARGUS_ROOT"/}, log: ${LOG#"$ARGUS_ROOT"/})"
started=$(now_s)
{
  echo "--- $(date -u +%FT%TZ) $CLI ${ARGS[*]}"
} >>"$LOG"
setsid nohup "$CLI" "${ARGS[@]}" >>"$LOG" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$PIDFILE"

if ! wait_healthy "$CLI" "$ADDRESS" "$HEALTH_TIMEOUT" "$pid"; then
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || true
    reason="did not become healthy within $HEALTH_TIMEOUT s"
  else
    reason="exited during startup"
  fi
  rm -f "$PIDFILE"
  tail -n 15 "$LOG" >&2
  die "the Temporal dev server $reason; see $LOG"
fi
# start-dev registers the attributes at launch; this also covers a namespace created in an earlier run.
ensure_namespace "$CLI" "$ADDRESS" "$NAMESPACE"
ensure_search_attributes "$CLI" "$ADDRESS" "$NAMESPACE"
say "dev server healthy after $(since "$started") s (pid $pid; stop it with: npm run server -- stop)"
banner
