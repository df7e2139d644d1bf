import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { devServerConfigArgs, searchAttributeArgs } from '../domain/ids';

export const ROOT = path.resolve(__dirname, '..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a === 'object' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

export function temporalCli(): string {
  return execFileSync('bash', [path.join(ROOT, 'scripts', 'find-temporal.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/**
 * A throwaway dev server with ARGUS's search attributes, for one bench run: in-memory SQLite, or `dbFile` (on
 * `port`), which a server started again on the same file and port carries on from. `kill9`: SIGKILL, as a crash.
 */
export async function startDevServer(opts: { dbFile?: string; port?: number } = {}): Promise<{
  address: string;
  pid: number;
  stop(): Promise<void>;
  kill9(): Promise<void>;
}> {
  const cli = temporalCli();
  const port = opts.port ?? (await freePort());
  const uiPort = await freePort();
  const child = spawn(
    cli,
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--ui-port',
      String(uiPort),
      '--log-level',
      'error',
      ...searchAttributeArgs(),
      ...devServerConfigArgs(),
      ...(opts.dbFile ? ['--db-filename', opts.dbFile] : []),
    ],
    { stdio: 'ignore', detached: true },
  );
  const address = `127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    try {
      if (
        execFileSync(cli, ['operator', 'cluster', 'health', '--address', address], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).includes('SERVING')
      )
        break;
    } catch {
      /* not yet */
    }
    if (Date.now() - started > 60000) throw new Error('dev server did not become healthy in 60 s');
    await new Promise((r) => setTimeout(r, 300));
  }
  return {
    address,
    pid: child.pid!,
    stop: () => killTree(child),
    kill9: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        process.kill(-child.pid!, 'SIGKILL');
      }),
  };
}

export function killTree(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || !child.pid) return resolve();
    child.once('exit', () => resolve());
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      child.kill('SIGTERM');
    }
    setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, 5000).unref();
  });
}

/** Peak resident set size of a process (VmHWM), in MiB. */
export function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/** User + system CPU time in a /proc stat file (a process's or one thread's), in milliseconds. */
function statCpuMs(file: string): number {
  // Fields after the command name (which may hold spaces) start at the state, field 3; utime and stime are 14, 15.
  const stat = readFileSync(file, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

/** CPU time (user + system) a process has used so far, every thread, in milliseconds. */
export function cpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/**
 * CPU time of a process's main thread alone, in milliseconds: where Node runs a worker's activities (and the loop's
 * judgment), beside V8's compiler and collector threads and the SDK's own.
 */
export function mainThreadCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

/**
 * A worker process on compiled code (`dist/worker/main.js`), polling its own task queue with its state in
 * `stateDir` (or the PostgreSQL store at `stateUrl`); resolves once it polls. `env` adds to this process's
 * environment (a fake key), `nodeFlags` go before the script (a heap limit, a profiler).
 */
export async function startBenchWorker(opts: {
  address: string;
  taskQueue: string;
  stateDir: string;
  stateUrl?: string;
  env?: Record<string, string>;
  nodeFlags?: string[];
  /** An open file its logs (stderr) go to; absent: this process's stderr. */
  logFd?: number;
}): Promise<ChildProcess> {
  const worker = spawn(process.execPath, [...(opts.nodeFlags ?? []), path.join(ROOT, 'dist', 'worker', 'main.js')], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: opts.address,
      ARGUS_TASK_QUEUE: opts.taskQueue,
      ARGUS_STATE_DIR: opts.stateDir,
      ARGUS_STATE_URL: opts.stateUrl ?? '',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', opts.logFd ?? 'inherit'],
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    // The listener stays: it keeps the pipe drained for the worker's whole life.
    worker.stdout!.on('data', (d: Buffer) => d.toString().includes('polling') && resolve());
    worker.once('exit', (c) => reject(new Error(`worker exited with ${c}`)));
  });
  return worker;
}

/**
 * `--page-fixed-point on|off`: the sweeps' `pageFixedPoint` (absent: the input's default, on), so one run can set
 * one pass per page beside every agent at once. Spread into a sweep's input.
 */
export function pageFixedPointArg(): { pageFixedPoint?: boolean } {
  const i = process.argv.indexOf('--page-fixed-point');
  if (i < 0) return {};
  const v = process.argv[i + 1];
  if (v !== 'on' && v !== 'off') throw new Error('--page-fixed-point: on or off');
  return { pageFixedPoint: v === 'on' };
}

/**
 * A PostgreSQL server for a bench that stops and starts again on the same data folder and port (the tests' servers,
 * test/support/postgres.ts, are removed when they stop). Binaries from scripts/ensure-postgres.sh; as root the
 * server runs as `nobody`, as there. `crash()`: an immediate shutdown (SIGQUIT: the server and every backend go at
 * once, recovery on the next start); `start()` again; `destroy()` stops it and removes its folder.
 */
export async function startRestartablePostgres(): Promise<{
  url: string;
  crash(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
  /** At once, without waiting (a process exiting): SIGQUIT and the folder removed. */
  destroyNow(): void;
}> {
  const { postgresBinDir } = await import('../test/support/postgres');
  const { Client } = await import('pg');
  const bin = postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const id = (flag: string) => execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }).trim();
  const prefix = asRoot ? ['setpriv', `--reuid=${id('-u')}`, `--regid=${id('-g')}`, '--clear-groups', '--'] : [];
  const dir = mkdtempSync(path.join('/tmp', 'argus-bench-pg-'));
  if (asRoot) chownSync(dir, Number(id('-u')), Number(id('-g')));
  const data = path.join(dir, 'data');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PG')));
  const run = (tool: string, args: string[]) => {
    const [exe, ...rest] = [...prefix, path.join(bin, tool), ...args];
    return { exe: exe!, rest };
  };
  const init = run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C']);
  execFileSync(init.exe, init.rest, { cwd: dir, env: { ...env, LC_ALL: 'C' }, stdio: 'ignore' });
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let server: ChildProcess | undefined;
  const accepts = async () => {
    const c = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => undefined);
    }
  };
  const start = async () => {
    const pg = run('postgres', ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1']);
    const log = openSync(path.join(dir, 'server.log'), 'a');
    server = spawn(pg.exe, pg.rest, { cwd: dir, env, detached: true, stdio: ['ignore', log, log] });
    closeSync(log);
    const started = Date.now();
    while (!(await accepts())) {
      if (server.exitCode !== null) throw new Error(`postgres exited: see ${path.join(dir, 'server.log')}`);
      if (Date.now() - started > 60_000) throw new Error('postgres did not accept connections within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const signal = (sig: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      const s = server;
      if (!s || s.exitCode !== null || s.signalCode !== null) return resolve();
      s.once('exit', () => resolve());
      s.kill(sig);
    });
  await start();
  return {
    url,
    crash: () => signal('SIGQUIT'),
    start,
    destroy: async () => {
      await signal('SIGINT');
      rmSync(dir, { recursive: true, force: true });
    },
    destroyNow: () => {
      server?.kill('SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
