// Runs the real `argus` CLI and the real `temporal` CLI as child processes, asynchronously: the test process
// also hosts the worker, so a synchronous spawn would stall it.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { temporalCliPath, testAddress } from '../support/temporal-env';

export const ROOT = path.resolve(__dirname, '../..');

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? process.env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not finish in ${opts.timeoutMs ?? 90_000} ms\n${stderr}`));
    }, opts.timeoutMs ?? 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `argus ...` exactly as `npm run argus` runs it. */
export function argus(args: string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<Ran> {
  return run(process.execPath, ['scripts/run-ts.js', 'client/cli.ts', ...args], { env, timeoutMs });
}

/** The real `temporal` CLI pointed at the test server. */
export function temporal(args: string[], timeoutMs?: number): Promise<Ran> {
  return run(temporalCliPath(), [...args, '--address', testAddress()], { timeoutMs });
}

/** Environment for the argus CLI: the test server, and the task queue of the worker in this process. */
export function cliEnv(taskQueue: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_NAMESPACE: 'default',
    ARGUS_TASK_QUEUE: taskQueue,
    ...extra,
  };
}

/** `temporal workflow start` of a sweep on `taskQueue`, as a user types it, plus the input flags. */
export function sweepStartArgs(taskQueue: string, id: string, ...input: string[]): string[] {
  return ['workflow', 'start', '--type', 'sweepWorkflow', '--task-queue', taskQueue, '--workflow-id', id, ...input];
}
