// The cluster's long-running processes: started detached (each leads a process group of its own and outlives the
// `up` that started it), logging to a file, and recognised later by pid *and* a marker, so a recycled pid is
// never taken for ours and never signalled.
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import * as net from 'node:net';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Starts `argv` detached with stdout and stderr appended to `log`; returns its pid. */
export function startDetached(argv: string[], o: { env: NodeJS.ProcessEnv; cwd: string; log: string }): number {
  const fd = openSync(o.log, 'a');
  try {
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: o.cwd,
      env: o.env,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    child.unref();
    if (!child.pid) throw new Error(`cannot start ${argv[0]}`);
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/** A zombie (exited, not yet reaped) counts as gone. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * True when `pid` is alive and is the process we started: one of its arguments, or (for processes whose command
 * line is not distinctive, such as workers) one of its environment entries, is exactly `marker`.
 */
export function isOurs(pid: number | null | undefined, marker: string): pid is number {
  if (!pid || !running(pid)) return false;
  for (const file of ['cmdline', 'environ']) {
    try {
      if (readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0').includes(marker)) return true;
    } catch {
      /* gone, or not ours to read */
    }
  }
  return false;
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return running(pid);
  }
}

function signal(pid: number, sig: NodeJS.Signals, group: boolean): void {
  try {
    process.kill(group ? -pid : pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      /* already gone */
    }
  }
}

/**
 * Stops a process we started: `first` to the process itself, then, after `graceMs`, `last` to its whole group.
 * Resolves once nothing of the group is left; says which signal ended it.
 */
export async function stopProcess(
  pid: number,
  o: { first: NodeJS.Signals; graceMs: number; last?: NodeJS.Signals },
): Promise<'graceful' | 'killed'> {
  signal(pid, o.first, false);
  const deadline = Date.now() + o.graceMs;
  while (Date.now() < deadline) {
    if (!groupAlive(pid)) return 'graceful';
    await sleep(100);
  }
  signal(pid, o.last ?? 'SIGKILL', true);
  for (let i = 0; i < 100 && groupAlive(pid); i++) await sleep(100);
  if (o.last && o.last !== 'SIGKILL' && groupAlive(pid)) {
    signal(pid, 'SIGKILL', true);
    for (let i = 0; i < 50 && groupAlive(pid); i++) await sleep(100);
  }
  return 'killed';
}

/** True when `port` on 127.0.0.1 can be bound now. */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** The last `lines` lines of a log, for error messages. */
export function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Size of a file now (0 when absent): where to start reading what a process logs from here on. */
export function sizeOf(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

/** What `file` gained after byte `from`. */
export function logSince(file: string, from: number): string {
  try {
    return readFileSync(file).subarray(from).toString('utf8');
  } catch {
    return '';
  }
}

/**
 * Runs a command to its end with its output appended to `log`; throws with the output's tail when it fails or
 * outlasts `timeoutMs`.
 */
export function runStep(
  what: string,
  argv: string[],
  o: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs: number; log: string },
): void {
  appendFileSync(o.log, `--- ${new Date().toISOString()} ${what}\n`);
  const r = spawnSync(argv[0] as string, argv.slice(1), {
    cwd: o.cwd,
    env: o.env,
    encoding: 'utf8',
    timeout: o.timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  appendFileSync(o.log, output);
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : r.signal ? `killed by ${r.signal}` : `exit ${r.status}`;
    const timedOut = r.signal === 'SIGKILL' ? ` (no end after ${o.timeoutMs / 1000} s)` : '';
    throw new Error(`${what} failed: ${why}${timedOut}; log ${o.log}:\n${output.split('\n').slice(-25).join('\n')}`);
  }
}

function readIfThere(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * Takes an exclusive lock file holding our pid, waiting while another live process holds it (two `up`s at once:
 * the second waits for the first). A lock whose holder is dead is taken over.
 */
export async function lockFile(file: string): Promise<() => void> {
  for (let waited = 0; ; waited += 500) {
    try {
      const fd = openSync(file, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch {
      const holder = Number(readIfThere(file));
      // An empty file is a holder between its open and its write: only a stale one (seconds old) is taken over.
      const stale = holder > 0 ? !running(holder) : Date.now() - (existsSync(file) ? statSync(file).mtimeMs : 0) > 5000;
      if (stale) rmSync(file, { force: true });
      else if (waited > 3_600_000) throw new Error(`${file} is held by pid ${holder} for over an hour`);
      await sleep(500);
    }
  }
}
