// Real OS processes for fault tests: ARGUS workers that can be killed with SIGKILL, and a throwaway Temporal
// dev server on its own SQLite file that can be killed and restarted.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync, readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { devServerConfigArgs, searchAttributeArgs } from '../../domain/ids';
import { temporalCliPath } from './temporal-env';

export const ROOT = path.resolve(__dirname, '../..');
// tsx's loader in the worker's own process (the tsx CLI would put a process of its own in between).
const TSX_LOADER = pathToFileURL(path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

export interface Proc {
  child: ChildProcess;
  /** Resolves with how the process ended: its exit code, or the signal that killed it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  output(): string;
}

function track(child: ChildProcess, logFile?: string): Proc {
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return { child, exited, output: () => (logFile ? readFileSync(logFile, 'utf8') : out) };
}

/**
 * `worker/main.ts` in a process of its own (the real entry point, not the `npm run worker` wrapper), with the
 * environment a deployment gives it. Resolves once it polls.
 */
export async function startWorkerProcess(env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Proc> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, path.join(ROOT, 'worker', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p = track(child);
  const started = Date.now();
  while (!/ARGUS worker polling/.test(p.output())) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`worker exited before polling:\n${p.output()}`);
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`worker not polling after ${timeoutMs} ms:\n${p.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return p;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/** A headless dev server persisted to `dbFile` on 127.0.0.1:`port`; resolves when its frontend is healthy. */
export async function startDevServer(dbFile: string, port: number, timeoutMs = 60_000): Promise<Proc> {
  mkdirSync(path.dirname(dbFile), { recursive: true });
  const logFile = `${dbFile}.log`;
  const log = openSync(logFile, 'a');
  const args = ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port)];
  args.push('--db-filename', dbFile, '--log-level', 'warn');
  args.push(...searchAttributeArgs());
  args.push(...devServerConfigArgs());
  const child = spawn(temporalCliPath(), args, { stdio: ['ignore', log, log], detached: true });
  closeSync(log);
  const p = track(child, logFile);
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dev server exited:\n${p.output().slice(-3000)}`);
    if (Date.now() - started > timeoutMs) throw new Error(`dev server not up after ${timeoutMs} ms`);
    if (await portAnswers(port)) {
      const health = spawn(temporalCliPath(), ['operator', 'cluster', 'health', '--address', `127.0.0.1:${port}`]);
      let text = '';
      health.stdout.on('data', (d: Buffer) => (text += d.toString()));
      await new Promise((r) => health.once('exit', r));
      if (text.includes('SERVING')) return p;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** SIGKILL a process and its group (a dev server leads one), and wait until it is gone. */
export async function kill9(p: Proc): Promise<void> {
  const pid = p.child.pid!;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    p.child.kill('SIGKILL');
  }
  await p.exited;
}
