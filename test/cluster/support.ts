// What the cluster tests share: the cluster test/cluster/global-setup.js brought up (its folder in
// ARGUS_CLUSTER_DIR), the CLI run as users and scripts run it, a Temporal client on it, and what its workers and
// databases hold, read where they keep it.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { readTopology } from '../../scripts/cluster/compose';
import { clusterPaths, readClusterState, type ClusterState } from '../../scripts/cluster/state';
import { temporalCliPath } from '../support/temporal-env';
import type { AuditEntry } from '../../state/store';

export const ROOT = path.resolve(__dirname, '../..');
export const topology = readTopology(ROOT);

export function clusterDir(): string {
  const dir = process.env.ARGUS_CLUSTER_DIR;
  if (!dir) throw new Error('ARGUS_CLUSTER_DIR is not set: run these tests with `npm run test:cluster`');
  return dir;
}

export function clusterState(): ClusterState {
  const state = readClusterState(clusterPaths(ROOT, clusterDir()));
  if (!state) throw new Error(`no cluster.json in ${clusterDir()}`);
  return state;
}

export const clusterAddress = () => `127.0.0.1:${clusterState().ports.frontend}`;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `argv` to its end without blocking the event loop (workers in this process keep polling meanwhile). */
export function run(argv: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 600_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: ROOT,
      env: { ...process.env, ARGUS_CLUSTER_DIR: clusterDir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `npm run --silent cluster -- <args>`, exactly as a script would call it. */
export const npmCluster = (...args: string[]) => run(['npm', 'run', '--silent', 'cluster', '--', ...args]);

/** The temporal CLI against the cluster. */
export function temporal(...args: string[]): Run {
  const r = spawnSync(temporalCliPath(), [...args, '--address', clusterAddress(), '--namespace', topology.namespace], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export async function connectCluster(): Promise<{ connection: Connection; client: Client }> {
  const connection = await Connection.connect({ address: clusterAddress() });
  return { connection, client: new Client({ connection, namespace: topology.namespace }) };
}

/** A variable of a running worker's environment, as the worker process has it. */
export function workerVariable(name: string): string | undefined {
  const pid = Object.values(clusterState().pids.workers)[0];
  if (!pid) throw new Error('no worker of the cluster is running');
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const hit = entries.find((e) => e.startsWith(`${name}=`));
  return hit?.slice(name.length + 1);
}

/** A query on one of the cluster's databases: `argus_state` as the workers reach it, Temporal's as the server does. */
export async function query<T extends object>(
  database: 'state' | 'temporal' | 'visibility',
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const db = topology.temporalDb;
  const port = clusterState().ports.postgres;
  const url =
    database === 'state'
      ? (workerVariable('ARGUS_STATE_URL') as string)
      : `postgres://${db.user}:${encodeURIComponent(db.password)}@127.0.0.1:${port}/` +
        (database === 'temporal' ? db.database : db.visibilityDatabase);
  const client = new PgClient({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** The schema of ARGUS's state store the workers use. */
export const stateSchema = () => workerVariable('ARGUS_STATE_SCHEMA') || 'argus_state';

/** Audit lines of one sweep in the cluster's PostgreSQL state store. */
export async function pgAudit(sweepId: string): Promise<AuditEntry[]> {
  const rows = await query<{ line: string }>('state', `select line from ${stateSchema()}.audit order by seq`);
  return rows.map((r) => JSON.parse(r.line) as AuditEntry).filter((e) => e.sweepId === sweepId);
}

export const writtenIdsOf = (entries: AuditEntry[]) =>
  [...new Set(entries.flatMap((e) => (e.type === 'write' ? [e.proposalId] : [])))].sort();

/** Audit lines of one sweep in a file state store (the dev-server control's). */
export function fileAudit(stateDir: string, sweepId: string): AuditEntry[] {
  const dir = path.join(stateDir, 'audit');
  return readdirSync(dir).flatMap((f) =>
    readFileSync(path.join(dir, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEntry)
      .filter((e) => e.sweepId === sweepId),
  );
}
