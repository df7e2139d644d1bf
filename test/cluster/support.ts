// What the cluster tests share: the cluster test/cluster/global-setup.js brought up (its folder in
// ARGUS_CLUSTER_DIR), the CLI run as users and scripts run it, a Temporal client on it, and what its workers and
// databases hold, read where they keep it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { readTopology } from '../../scripts/cluster/compose';
import { generateCatalog } from '../../scripts/generate-catalog';
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

const seenVariables = new Map<string, string | undefined>();

/**
 * A variable of a running worker's environment, as the worker process has it. Every worker gets the same
 * (docker-compose.yml's), so one read while a worker runs also answers while none does (a deploy's gap).
 */
export function workerVariable(name: string): string | undefined {
  const pid = Object.values(clusterState().pids.workers)[0];
  if (!pid) {
    if (seenVariables.has(name)) return seenVariables.get(name);
    throw new Error('no worker of the cluster is running');
  }
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const value = entries.find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1);
  seenVariables.set(name, value);
  return value;
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

/** `npm run --silent argus -- <args>` against the cluster, as a user with TEMPORAL_ADDRESS set runs it. */
export const argusCli = (...args: string[]) =>
  run(['npm', 'run', '--silent', 'argus', '--', ...args], {
    TEMPORAL_ADDRESS: clusterAddress(),
    TEMPORAL_NAMESPACE: topology.namespace,
  });

/**
 * A generated catalog (scripts/generate-catalog.ts) written to `file`, with people's descriptions on the columns
 * that have one: the drafter inherits from people only, so every page then has descriptions to write.
 */
export function writeGeneratedCatalog(file: string, o: { entities: number; seed: number; name: string }): string {
  mkdirSync(path.dirname(file), { recursive: true });
  const generated = generateCatalog(o);
  for (const e of generated.entities) for (const c of e.columns) if (c.description) c.description_source = 'human';
  writeFileSync(file, JSON.stringify(generated, null, 2));
  return file;
}

/** How many write lines each proposal of a sweep has in the cluster's audit trail (once each when all is well). */
export async function writeLinesPerProposal(sweepId: string): Promise<Map<string, number>> {
  const rows = await query<{ proposal_id: string; n: string }>(
    'state',
    `select proposal_id, count(*) as n from ${stateSchema()}.audit
      where kind = 'write' and (line::jsonb ->> 'sweepId') = $1 group by proposal_id`,
    [sweepId],
  );
  return new Map(rows.map((r) => [r.proposal_id, Number(r.n)]));
}

/** The ids of the entities whose records differ between two catalog files (the entities a sweep changed). */
export function changedEntities(beforeFile: string, afterFile: string): string[] {
  const records = (file: string) =>
    new Map(
      (JSON.parse(readFileSync(file, 'utf8')) as { entities: { id: string }[] }).entities.map((e) => [
        e.id,
        JSON.stringify(e),
      ]),
    );
  const before = records(beforeFile);
  const after = records(afterFile);
  const ids = new Set([...before.keys(), ...after.keys()]);
  return [...ids].filter((id) => before.get(id) !== after.get(id)).sort();
}

/** The entity ids a sweep's write lines in the cluster's audit trail name, each once, sorted. */
export async function writtenEntities(sweepId: string): Promise<string[]> {
  const rows = await query<{ entity_id: string }>(
    'state',
    `select distinct line::jsonb ->> 'entityId' as entity_id from ${stateSchema()}.audit
      where kind = 'write' and (line::jsonb ->> 'sweepId') = $1`,
    [sweepId],
  );
  return rows.map((r) => r.entity_id).sort();
}

/** The pids of the processes whose parent is `pid` (a cluster worker's pid is scripts/run-ts.js; its child polls). */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(d)] : [];
      } catch {
        return [];
      }
    });
}

/** The pids in the identities (`<pid>@<host>`) of the workers that started any activity of a sweep or its children. */
export async function activityWorkerPids(client: Client, workflowId: string): Promise<Set<number>> {
  const pids = new Set<number>();
  // Every run of the sweep (it continues as new) and every child (the Arbiters), as visibility lists them.
  for await (const x of client.workflow.list({ query: `WorkflowId STARTS_WITH "${workflowId}"` })) {
    const history = await client.workflow.getHandle(x.workflowId, x.runId).fetchHistory();
    for (const e of history.events ?? []) {
      const who = e.activityTaskStartedEventAttributes?.identity;
      if (who) pids.add(Number(who.split('@')[0]));
    }
  }
  return pids;
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (label values unescaped). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of a family's samples whose labels include `where`. */
export function sumOf(samples: Sample[], name: string, where: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

/** What each running worker of the cluster serves at its /metrics port now, by worker pid. */
export async function scrapeWorkers(): Promise<Map<number, Sample[]>> {
  const state = clusterState();
  const out = new Map<number, Sample[]>();
  for (const [n, pid] of Object.entries(state.pids.workers)) {
    const port = state.metricsPorts?.[n];
    if (!port) throw new Error(`worker ${n} of the cluster has no metrics port in cluster.json`);
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    if (res.status !== 200) throw new Error(`worker ${n}'s /metrics answered HTTP ${res.status}`);
    out.set(pid, parseExposition(await res.text()));
  }
  return out;
}
