// The cluster's PostgreSQL: the binaries scripts/ensure-postgres.sh provisions (as every test does), one data
// folder kept across `up`s, a server on 127.0.0.1 only (no unix socket), password authentication for the superuser
// compose's postgres image creates. initdb and postgres refuse to run as root: as root they run as `nobody`, as
// scripts/ensure-postgres.sh and test/support/postgres.ts do.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { isOurs, sleep, startDetached, stopProcess, tail } from './processes';

const SERVER_USER = 'nobody';

/** The bin folder with initdb, postgres and psql (scripts/ensure-postgres.sh: the system's, or .tools/postgres/). */
export function postgresBinDir(root: string): string {
  const r = spawnSync('bash', [path.join(root, 'scripts', 'ensure-postgres.sh')], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.trim()) {
    throw new Error(`no PostgreSQL (scripts/ensure-postgres.sh): ${(r.stderr || r.error?.message || '').trim()}`);
  }
  return r.stdout.trim();
}

interface RunAs {
  uid: number;
  gid: number;
  prefix: string[];
}

function runAs(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, SERVER_USER], { encoding: 'utf8' }).trim());
  const uid = id('-u');
  const gid = id('-g');
  const setpriv = spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0;
  // setpriv execs: the pid we hold is postgres itself.
  const prefix = setpriv
    ? ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--']
    : ['runuser', '-u', SERVER_USER, '--'];
  return { uid, gid, prefix };
}

/** PG* variables of the caller's shell would point initdb or postgres elsewhere. */
function serverEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PG')));
  return { ...env, LC_ALL: 'C', TZ: 'UTC' };
}

/** The first folder on the way to `dir` that the server user may not pass through, if any. */
function blockedOnTheWay(as: RunAs, dir: string): string | null {
  let at = '';
  for (const part of path.resolve(dir).split(path.sep).filter(Boolean)) {
    at += path.sep + part;
    if (!existsSync(at)) break;
    const [exe, ...args] = [...as.prefix, 'test', '-x', at];
    if (spawnSync(exe as string, args, { stdio: 'ignore' }).status !== 0) return at;
  }
  return null;
}

/**
 * Makes the data folder once: initdb with `user` as superuser and `password` (scram) for every TCP connection.
 * Does nothing when the folder already holds a cluster.
 */
export function initPostgres(o: { bin: string; dataDir: string; user: string; password: string }): boolean {
  if (existsSync(path.join(o.dataDir, 'PG_VERSION'))) return false;
  const as = runAs();
  mkdirSync(o.dataDir, { recursive: true, mode: 0o700 });
  if (as) {
    const blocked = blockedOnTheWay(as, path.dirname(o.dataDir));
    if (blocked) {
      throw new Error(
        `PostgreSQL runs as ${SERVER_USER} when run as root, and ${SERVER_USER} cannot pass through ${blocked}; ` +
          `set ARGUS_CLUSTER_DIR to a folder it can reach (for example under /var/tmp)`,
      );
    }
    chownSync(o.dataDir, as.uid, as.gid);
  }
  const pwDir = mkdtempSync(path.join(os.tmpdir(), 'argus-cluster-pw-'));
  const pwFile = path.join(pwDir, 'pw');
  try {
    writeFileSync(pwFile, `${o.password}\n`, { mode: 0o600 });
    if (as) {
      chownSync(pwDir, as.uid, as.gid);
      chownSync(pwFile, as.uid, as.gid);
    }
    chmodSync(pwDir, 0o700);
    const argv = [
      ...(as?.prefix ?? []),
      path.join(o.bin, 'initdb'),
      '-D',
      o.dataDir,
      '-U',
      o.user,
      `--pwfile=${pwFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C',
    ];
    const r = spawnSync(argv[0] as string, argv.slice(1), { env: serverEnv(), cwd: pwDir, encoding: 'utf8' });
    if (r.status !== 0) {
      rmSync(o.dataDir, { recursive: true, force: true });
      throw new Error(`initdb failed (${o.dataDir}): ${(r.stderr || r.stdout || r.error?.message || '').trim()}`);
    }
  } finally {
    rmSync(pwDir, { recursive: true, force: true });
  }
  return true;
}

/** Starts postgres on 127.0.0.1:`port` and resolves with its pid once `user` can log in. */
export async function startPostgres(o: {
  bin: string;
  dataDir: string;
  port: number;
  user: string;
  password: string;
  log: string;
}): Promise<number> {
  const as = runAs();
  const argv = [
    ...(as?.prefix ?? []),
    path.join(o.bin, 'postgres'),
    '-D',
    o.dataDir,
    '-p',
    String(o.port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
  ];
  const pid = startDetached(argv, { env: serverEnv(), cwd: o.dataDir, log: o.log });
  const url = `postgres://${encodeURIComponent(o.user)}:${encodeURIComponent(o.password)}@127.0.0.1:${o.port}/postgres`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!isOurs(pid, o.dataDir)) throw new Error(`postgres exited during startup; log ${o.log}:\n${tail(o.log)}`);
    if (await accepts(url)) return pid;
    if (Date.now() > deadline) {
      await stopPostgres(pid);
      throw new Error(`postgres did not accept connections within 60 s; log ${o.log}:\n${tail(o.log)}`);
    }
    await sleep(200);
  }
}

async function accepts(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Fast shutdown (SIGINT: clients disconnected, a clean checkpoint), immediate shutdown if it takes over 30 s. */
export function stopPostgres(pid: number) {
  return stopProcess(pid, { first: 'SIGINT', graceMs: 30_000, last: 'SIGQUIT' });
}
