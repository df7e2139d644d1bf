// A throwaway PostgreSQL cluster for tests: initdb into a temp dir, a server on a free 127.0.0.1 port with its
// unix socket in that dir, removed again on stop(). The binaries come from scripts/ensure-postgres.sh (the
// system's, or a copy it provisions into .tools/postgres/). initdb and postgres refuse to run as root, so when
// the tests run as root (here and in CI) the server processes run as `nobody`, who must reach the binaries
// (the script copies them out of a 0700 home when it cannot) and the cluster's folder (clusterParent below).
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { freePort } from './processes';

const ROOT = path.resolve(__dirname, '../..');
const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

export interface PgServer {
  /** Superuser URL of the `postgres` database. */
  url: string;
  port: number;
  binDir: string;
  /** URL of another database on the same server (same user). */
  urlFor(database: string): string;
  /** Creates `database` (from template0, UTF8) and resolves with its URL. */
  createDatabase(database: string): Promise<string>;
  /** Stops the server (fast shutdown, then SIGKILL) and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

let binDirCache: string | Error | undefined;

/**
 * The bin folder scripts/ensure-postgres.sh settles on (provisioning it on first use). Throws with the script's
 * own account of what it tried and why it failed, so every test that needs PostgreSQL says it.
 */
export function postgresBinDir(): string {
  if (binDirCache === undefined) {
    const script = path.join(ROOT, 'scripts', 'ensure-postgres.sh');
    const run = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (run.status === 0 && run.stdout.trim()) {
      if (run.stderr) process.stderr.write(run.stderr); // progress: an install, a copy out of reach of nobody
      binDirCache = run.stdout.trim();
    } else {
      const why = (run.stderr || run.error?.message || '').trim() || `exit ${run.status ?? run.signal}`;
      binDirCache = new Error(`no PostgreSQL for the tests (scripts/ensure-postgres.sh):\n${why}`);
    }
  }
  if (binDirCache instanceof Error) throw binDirCache;
  return binDirCache;
}

/** The user initdb and postgres run as when the tests run as root; scripts/ensure-postgres.sh names the same. */
const SERVER_USER = 'nobody';

interface RunAs {
  user: string;
  uid: number;
  gid: number;
  /** Prefix that makes a command run as that user. */
  prefix: string[];
}

/** As root: `nobody` via setpriv (which execs, so the pid we hold is postgres itself), else runuser. */
function unprivileged(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, SERVER_USER], { encoding: 'utf8' }).trim());
  const uid = id('-u');
  const gid = id('-g');
  const hasSetpriv = (() => {
    try {
      execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  const prefix = hasSetpriv
    ? ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--']
    : ['runuser', '-u', SERVER_USER, '--'];
  return { user: SERVER_USER, uid, gid, prefix };
}

/** True when `runAs` may pass through (`-x`) or read (`-r`) `target`; asked as that user, so ACLs and groups count. */
function reaches(runAs: RunAs, target: string, test: '-x' | '-r' = '-x'): boolean {
  const [exe, ...args] = [...runAs.prefix, 'test', test, target];
  return spawnSync(exe as string, args, { stdio: 'ignore' }).status === 0;
}

/**
 * Why `runAs` cannot reach `target`: the first folder on the way it may not pass ("/root is mode 0700, owner
 * root"), or `target` itself when it may not read it; null when it can.
 */
function whyUnreachable(runAs: RunAs, target: string): string | null {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let at = '';
  for (const part of parts) {
    at += path.sep + part;
    let st;
    try {
      st = statSync(at);
    } catch {
      return `${at} does not exist`;
    }
    const last = at === path.resolve(target);
    if (st.isDirectory() ? !reaches(runAs, at) : last && !reaches(runAs, at, '-r')) {
      const mode = (st.mode & 0o7777).toString(8).padStart(4, '0');
      return `${at} is mode ${mode}, owner ${st.uid === 0 ? 'root' : `uid ${st.uid}`}`;
    }
  }
  return null;
}

/**
 * Where the cluster's folder goes: the system temp folder, unless the server user cannot pass through it (a
 * TMPDIR under a 0700 home), then /var/tmp or /tmp. The folder is made by root and given to that user.
 */
function clusterParent(runAs: RunAs | null): string {
  const candidates = [...new Set([os.tmpdir(), '/var/tmp', '/tmp'])];
  if (!runAs) return candidates[0] as string;
  const tried: string[] = [];
  for (const dir of candidates) {
    if (existsSync(dir) && reaches(runAs, dir)) return dir;
    tried.push(whyUnreachable(runAs, dir) ?? `${dir} is not a folder ${runAs.user} can pass through`);
  }
  throw new Error(
    `no folder for the PostgreSQL cluster that ${runAs.user} can reach (initdb and postgres run as ${runAs.user} ` +
      `when the tests run as root); tried ${tried.join('; ')}; set TMPDIR to a folder ${runAs.user} can pass through`,
  );
}

// PG* variables of the caller's shell would redirect psql or initdb elsewhere.
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PG')) env[k] = v;
  return { ...env, LC_ALL: 'C', TZ: 'UTC' };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Starts a fresh cluster; resolves once it accepts connections. Call stop() in afterAll. */
export async function startPostgres(): Promise<PgServer> {
  const binDir = postgresBinDir();
  const runAs = unprivileged();
  const dir = mkdtempSync(path.join(clusterParent(runAs), 'argus-pg-'));
  const dataDir = path.join(dir, 'data');
  const env = cleanEnv();
  const cmd = (tool: string, args: string[]): [string, string[]] => {
    const argv = [...(runAs?.prefix ?? []), path.join(binDir, tool), ...args];
    return [argv[0] as string, argv.slice(1)];
  };
  try {
    if (runAs) chownSync(dir, runAs.uid, runAs.gid);
    const [initdb, initArgs] = cmd('initdb', [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    execFileSync(initdb, initArgs, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    const output = e.stderr || e.stdout || e.message;
    // scripts/ensure-postgres.sh checked the binaries; say where the server user is stopped all the same.
    const blocked =
      runAs && /permission denied/i.test(output)
        ? [path.join(binDir, 'initdb'), dir].map((p) => whyUnreachable(runAs, p)).filter(Boolean)
        : [];
    const reach = blocked.length ? `; as ${runAs?.user}: ${blocked.join(', ')}` : '';
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `initdb${runAs ? ` as ${runAs.user}` : ''} failed (bin ${binDir}, data ${dataDir})${reach}: ${output}`,
      { cause: err },
    );
  }

  // A port taken between the probe and the bind makes the server exit at once: try fresh ports.
  let lastError: Error | undefined;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    try {
      return await launch({ binDir, dir, dataDir, port, env, cmd });
    } catch (err) {
      lastError = err as Error;
      if (!/could not bind|already in use|lock file .* already exists/i.test(lastError.message)) break;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

async function launch(o: {
  binDir: string;
  dir: string;
  dataDir: string;
  port: number;
  env: NodeJS.ProcessEnv;
  cmd: (tool: string, args: string[]) => [string, string[]];
}): Promise<PgServer> {
  const logFile = path.join(o.dir, `postgres-${o.port}.log`);
  const log = openSync(logFile, 'w');
  const [exe, args] = o.cmd('postgres', [
    '-D',
    o.dataDir,
    '-p',
    String(o.port),
    '-k',
    o.dir,
    '-c',
    `listen_addresses=${HOST}`,
    // Durability buys nothing in a cluster that is deleted after the test.
    '-c',
    'fsync=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'synchronous_commit=off',
  ]);
  const child: ChildProcess = spawn(exe, args, { cwd: o.dir, env: o.env, detached: true, stdio: ['ignore', log, log] });
  closeSync(log);
  const pid = child.pid as number;
  let exited: string | null = null;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = String(signal ?? code);
      resolve();
    }),
  );

  // A test that fails, or a Jest worker that is torn down, may never reach stop(): kill on exit, and keep a
  // watchdog that outlives this process to kill the server and remove its dir should it die without exiting.
  const killNow = () => {
    try {
      process.kill(pid, 'SIGQUIT'); // immediate shutdown: the postmaster takes its backends down with it
    } catch {
      /* already gone */
    }
    rmSync(o.dir, { recursive: true, force: true, maxRetries: 3 });
  };
  process.once('exit', killNow);
  const watchdog = spawn(
    'bash',
    [
      '-c',
      'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; ' +
        'if kill -0 "$2" 2>/dev/null; then kill -INT "$2"; sleep 3; kill -KILL "$2" 2>/dev/null; sleep 1; fi; rm -rf "$3"',
      'argus-pg-watchdog',
      String(process.pid),
      String(pid),
      o.dir,
    ],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', killNow);
    if (exited === null) {
      try {
        process.kill(pid, 'SIGINT'); // fast shutdown: disconnect clients, no checkpoint wait for them
      } catch {
        /* already gone */
      }
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        exit.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), STOP_TIMEOUT_MS))),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        process.kill(pid, 'SIGKILL');
        await exit;
      }
    }
    try {
      if (watchdog.pid) process.kill(watchdog.pid, 'SIGKILL');
    } catch {
      /* it saw the server go and ended */
    }
    rmSync(o.dir, { recursive: true, force: true, maxRetries: 3 });
  };

  const urlFor = (database: string) => `postgres://postgres@${HOST}:${o.port}/${encodeURIComponent(database)}`;
  const url = urlFor('postgres');
  const started = Date.now();
  for (;;) {
    if (exited !== null) {
      await stop();
      throw new Error(`postgres exited (${exited}) on port ${o.port}:\n${tail(logFile)}`);
    }
    if (Date.now() - started > START_TIMEOUT_MS) {
      const log = tail(logFile);
      await stop();
      throw new Error(
        `postgres did not accept connections on port ${o.port} within ${START_TIMEOUT_MS / 1000} s:\n${log}`,
      );
    }
    if (await accepts(url)) break;
    await sleep(100);
  }

  return {
    url,
    port: o.port,
    binDir: o.binDir,
    urlFor,
    async createDatabase(database) {
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(
          `CREATE DATABASE ${client.escapeIdentifier(database)} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`,
        );
      } finally {
        await client.end();
      }
      return urlFor(database);
    },
    stop,
  };
}

/**
 * Loads a SQL file (a plain pg_dump) with psql, stopping at the first error, in one transaction: a dump
 * that fails half way leaves nothing behind. Rejects with psql's stderr.
 */
export function loadSql(url: string, file: string): Promise<void> {
  if (!existsSync(file)) return Promise.reject(new Error(`no such SQL file: ${file}`));
  const psql = path.join(postgresBinDir(), 'psql');
  return new Promise((resolve, reject) => {
    const child = spawn(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '--single-transaction', '-d', url, '-f', file], {
      env: cleanEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`psql -f ${file} failed (${signal ?? code}):\n${stderr.slice(-4000)}`));
    });
  });
}
