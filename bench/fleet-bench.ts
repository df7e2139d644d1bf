// npm run bench:fleet [-- --json] [--workers 1,2,3] [--sweeps N] [--entities N] [--dir DIR]
// Batches of sweeps on the production topology from binaries (`npm run cluster`: the Temporal server on
// PostgreSQL, workers on the PostgreSQL state store): for each worker count, the cluster's workers are replaced by
// that many fresh ones, a batch of sweeps of generated catalogs (the same catalogs for every count, each in a new
// file, so every sweep is a first night) is started at once, and each sweep's time from the batch's start to its
// report is taken. Per worker count it prints the median and 95th percentile sweep time and the batch's entities/s.
// A cluster that was already up is reused and left with the workers it had; one the bench brought up is stopped.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { generateCatalog } from '../scripts/generate-catalog';
import { TASK_QUEUE } from '../domain/ids';
import type { SweepReport } from '../domain/report';
import { ROOT } from './support';

const DEFAULT_WORKERS = '1,2,3';
const DEFAULT_SWEEPS = 10;
const DEFAULT_ENTITIES = 1000;

interface Batch {
  /** Sweep time from the batch's start to the sweep's report: the median and the 95th percentile (nearest rank). */
  p50Ms: number;
  p95Ms: number;
  /** Every sweep's entities over the time from the batch's start to its last report. */
  entitiesPerSecond: number;
  sweeps: number;
  entities: number;
  written: number;
  wallMs: number;
}

const say = (s: string) => process.stderr.write(s + '\n');

function arg(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
function intArg(flag: string, dflt: number, min: number): number {
  const v = arg(flag);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${flag}: a whole number of at least ${min}`);
  return n;
}

/** `npm run cluster -- <args>` on the bench's cluster folder; its output goes to stderr, stdout stays the bench's. */
function cluster(dir: string | undefined, ...args: string[]): { code: number | null; stdout: string } {
  const r = spawnSync(
    process.execPath,
    [path.join(ROOT, 'scripts', 'run-ts.js'), 'scripts/cluster.ts', ...args, ...(dir ? ['--dir', dir] : [])],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 20 * 60_000 },
  );
  return { code: r.status, stdout: r.stdout ?? '' };
}

function mustCluster(dir: string | undefined, ...args: string[]): void {
  const r = cluster(dir, ...args);
  if (r.stdout) process.stderr.write(r.stdout);
  if (r.code !== 0) throw new Error(`npm run cluster -- ${args.join(' ')} failed (${r.code})`);
}

/** What `status --json` says, or null when the cluster's server is not running. */
function status(dir: string | undefined): { address: string; namespace: string; workers: number } | null {
  const r = cluster(dir, 'status', '--json');
  return r.code === 0 ? (JSON.parse(r.stdout) as { address: string; namespace: string; workers: number }) : null;
}

/** The nearest-rank percentile: the smallest value at least `p` of the values are at or below. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  const workerCounts = (arg('--workers') ?? DEFAULT_WORKERS).split(',').map(Number);
  for (const n of workerCounts)
    if (!Number.isInteger(n) || n < 1 || n > 32) throw new Error('--workers: whole numbers from 1 to 32, e.g. 1,2,3');
  const sweeps = intArg('--sweeps', DEFAULT_SWEEPS, 1);
  const entities = intArg('--entities', DEFAULT_ENTITIES, 1);
  const dir = arg('--dir');

  const before = status(dir);
  if (before) say(`bench: reusing the cluster on ${before.address} (${before.workers} worker(s) now)`);
  else say('bench: bringing the cluster up (npm run cluster -- up)…');
  const work = mkdtempSync(path.join(os.tmpdir(), 'argus-fleet-bench-'));
  const results: Record<string, Batch> = {};
  let connection: Connection | undefined;
  try {
    for (const workers of workerCounts) {
      // Fresh workers for every count, as a deploy would start them: no batch runs on code another one warmed.
      if (status(dir)) mustCluster(dir, 'up', '--workers', '0');
      mustCluster(dir, 'up', '--workers', String(workers));
      const s = status(dir);
      if (!s || s.workers !== workers) throw new Error(`the cluster is not up with ${workers} worker(s)`);
      // A server started by this `up` has a new address only when its port was taken: connect again each time.
      await connection?.close();
      connection = await Connection.connect({ address: s.address });
      const client = new Client({ connection, namespace: s.namespace });

      // The same catalogs for every count, each in a file of its own: the memory and the audit trail are per file,
      // so every sweep judges and writes everything.
      const files = Array.from({ length: sweeps }, (_, i) => {
        const name = `fleet-bench-${i + 1}`;
        const file = path.join(work, `${workers}w`, name, 'catalog.json');
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, JSON.stringify(generateCatalog({ entities, seed: i + 1, name })));
        return { name, file };
      });
      say(`bench: ${sweeps} sweeps of ${entities} entities at once on ${workers} worker(s)…`);
      const stamp = Date.now().toString(36);
      const t0 = performance.now();
      const timed = await Promise.all(
        files.map(async (f) => {
          const h = await client.workflow.start('sweepWorkflow', {
            taskQueue: TASK_QUEUE,
            workflowId: `sweep/${f.name}/bench-${workers}w-${stamp}`,
            args: [{ catalog: { kind: 'file', path: f.file } }],
          });
          const report = (await h.result()) as SweepReport;
          return { report, ms: performance.now() - t0 };
        }),
      );
      const wallMs = performance.now() - t0;
      const partial = timed.filter((t) => t.report.partial);
      if (partial.length)
        throw new Error(`${partial.length} sweep(s) ended partial: ${partial[0]!.report.partialReasons.join('; ')}`);
      const total = timed.reduce((n, t) => n + t.report.entities.requested, 0);
      const ms = timed.map((t) => t.ms);
      results[String(workers)] = {
        p50Ms: Math.round(percentile(ms, 0.5)),
        p95Ms: Math.round(percentile(ms, 0.95)),
        entitiesPerSecond: Math.round((total / (wallMs / 1000)) * 10) / 10,
        sweeps,
        entities: total,
        written: timed.reduce((n, t) => n + t.report.written, 0),
        wallMs: Math.round(wallMs),
      };
      const r = results[String(workers)]!;
      say(`bench: ${workers} worker(s): p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms, ${r.entitiesPerSecond} entities/s`);
    }
  } finally {
    await connection?.close();
    // Back as it was: a reused cluster with its workers, one brought up here stopped (its data stays).
    if (before) mustCluster(dir, 'up', '--workers', String(before.workers));
    else mustCluster(dir, 'down');
    if (!process.env.ARGUS_BENCH_KEEP) rmSync(work, { recursive: true, force: true });
  }

  const out = {
    machine: {
      cpus: os.cpus().length,
      node: process.version,
      server: 'npm run cluster (Temporal on PostgreSQL, workers on the PostgreSQL state store)',
    },
    settings: {
      sweeps,
      entities,
      pageSize: 'auto (a tenth of the catalog, 100..1000)',
      concurrency: 'the input default (4)',
      percentiles: "nearest rank, of each sweep's time from the batch's start to its report",
    },
    workers: results,
  };
  if (json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  else {
    process.stdout.write(
      `${sweeps} sweeps of ${entities} entities at once, on the cluster (${out.machine.cpus} cores)\n` +
        `workers   p50 ms   p95 ms   entities/s   written   wall ms\n`,
    );
    for (const [n, r] of Object.entries(results))
      process.stdout.write(
        `${n.padStart(7)}  ${String(r.p50Ms).padStart(7)}  ${String(r.p95Ms).padStart(7)}  ` +
          `${String(r.entitiesPerSecond).padStart(11)}  ${String(r.written).padStart(8)}  ${String(r.wallMs).padStart(8)}\n`,
      );
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
