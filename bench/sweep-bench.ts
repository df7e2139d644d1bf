// npm run bench [-- --json] [--sizes demo,1000,10000] [--page-size N] [--concurrency N] [--repeat N]
//                 [--state file|postgres|file,postgres] [--workers 1|2|1,2] [--max-passes N] [--timeline]
//                 [--page-fixed-point on|off]
// Sweeps of the demo catalog and of generated catalogs on a throwaway dev server, with the worker in its own
// process (compiled code), side by side with the same agents, gate and writes in a plain loop (bench/loop.ts, in a
// process of its own).
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, copyFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { generateCatalog } from '../scripts/generate-catalog';
import type { SweepReport } from '../domain/report';
import { effectivePageSize } from '../domain/sweep';
import { sweepHistoryStats } from '../client/history-stats';
import { sweepTimeline, type Span } from './timeline';
import {
  ROOT,
  startDevServer,
  startBenchWorker,
  killTree,
  peakRssMb,
  cpuMs,
  mainThreadCpuMs,
  pageFixedPointArg,
} from './support';
import { startPostgres, type PgServer } from '../test/support/postgres';
import { openPgStateStore } from '../state/postgres/store';

/** The heap a worker gets from `npm run worker` and the image (ARGUS_WORKER_HEAP_MB, default 1024 MiB). */
const WORKER_HEAP_MB = Number(process.env.ARGUS_WORKER_HEAP_MB || 1024);

interface SizeResult {
  entities: number;
  /** Where the sweep's state was kept, and by how many worker processes. */
  state: 'file' | 'postgres';
  workers: number;
  /** PostgreSQL store only: its rows and bytes (tables and indexes) per entity after the sweep. */
  postgres?: { rows: number; bytes: number; rowsPerEntity: number; bytesPerEntity: number };
  argus: { entitiesPerSecond: number; wallMs: number; written: number; executions: number };
  /**
   * The loop in a fresh process of its own; cpuMs: its CPU time, every thread (V8 compiles and collects on its own);
   * mainThreadCpuMs: its main thread's alone.
   */
  inProcess: { entitiesPerSecond: number; wallMs: number; cpuMs: number; mainThreadCpuMs: number; written: number };
  ratio: number;
  /** The worker's CPU time over the loop's. */
  cpuRatio: number;
  maxHistoryEvents: number;
  workerPeakRssMb: number;
  /** CPU time used during the sweep by the worker and by the dev server (2 cores: up to 2 × wallMs together). */
  workerCpuMs: number;
  serverCpuMs: number;
  /**
   * The workers' main threads' share of workerCpuMs: a worker runs every activity there, so one worker's sweep can
   * take no less wall time than this (idle waits come on top).
   */
  workerMainThreadCpuMs: number;
  /** With --repeat N: every run's ARGUS entities/s (the figures above are the median run's). */
  runs?: number[];
  /** Where the sweep's wall time went, and the bounds below which it cannot go (profileOf). */
  profile: Profile;
}

/**
 * A sweep's profile from its histories: each activity type's count, busy time (the sum of its attempts' spans) and
 * longest span, the workflow tasks' busy time, and the floors of the wall time: one worker runs every activity on
 * its main thread (workerMainThreadCpuMs), and the worker's and the server's CPU share the machine's cores.
 */
interface Profile {
  activities: { activity: string; count: number; busyMs: number; maxMs: number }[];
  workflowTaskMs: number;
  floors: { mainThreadMs: number; cpuOverCoresMs: number };
}

function profileOf(spans: Span[], mainThreadMs: number, cpuMs: number): Profile {
  const by = new Map<string, { activity: string; count: number; busyMs: number; maxMs: number }>();
  let workflowTaskMs = 0;
  for (const s of spans) {
    const ms = s.closedMs - s.startedMs;
    if (s.activity === '(workflow task)') {
      workflowTaskMs += ms;
      continue;
    }
    const a =
      by.get(s.activity) ??
      by.set(s.activity, { activity: s.activity, count: 0, busyMs: 0, maxMs: 0 }).get(s.activity)!;
    a.count++;
    a.busyMs += ms;
    a.maxMs = Math.max(a.maxMs, ms);
  }
  const activities = [...by.values()]
    .map((a) => ({ ...a, busyMs: Math.round(a.busyMs), maxMs: Math.round(a.maxMs) }))
    .sort((x, y) => y.busyMs - x.busyMs);
  return {
    activities,
    workflowTaskMs: Math.round(workflowTaskMs),
    floors: { mainThreadMs: Math.round(mainThreadMs), cpuOverCoresMs: Math.round(cpuMs / os.cpus().length) },
  };
}

/** The targets of a full sweep's cost (issue "Full sweeps that cost what they must"), for the sizes measured. */
interface Target {
  what: string;
  limit: number;
  value: number;
  met: boolean;
}

function targetsOf(results: Record<string, SizeResult>): Target[] {
  // The first configuration measured at each size (one store, one worker count, as the targets are stated).
  const at = new Map<number, SizeResult>();
  for (const r of Object.values(results)) if (!at.has(r.entities)) at.set(r.entities, r);
  const out: Target[] = [];
  const add = (what: string, limit: number, value: number) =>
    out.push({ what, limit, value: Math.round(value * 100) / 100, met: value <= limit });
  for (const [n, limit] of [
    [10_000, 1.6],
    [30_000, 1.8],
    [100_000, 1.8],
  ] as const) {
    const r = at.get(n);
    if (r) add(`ratio at ${n}`, limit, r.ratio);
  }
  const small = at.get(10_000);
  const large = at.get(100_000);
  if (small && large)
    add(
      'time per entity at 100000 over 10000',
      1.1,
      large.argus.wallMs / large.entities / (small.argus.wallMs / small.entities),
    );
  if (large) add('worker peak RSS MiB at 100000', 768, large.workerPeakRssMb);
  return out;
}

/**
 * The loop (bench/loop.ts) in a process of its own, started afresh for each run as the worker is: both begin with
 * cold code, and each one's CPU time is its whole process's.
 */
function loopInItsOwnProcess(file: string): {
  wallMs: number;
  cpuMs: number;
  mainThreadCpuMs: number;
  written: number;
  entities: number;
} {
  const out = execFileSync(
    process.execPath,
    [`--max-old-space-size=${WORKER_HEAP_MB}`, '--import', 'tsx', path.join(ROOT, 'bench', 'loop.ts'), file],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
  );
  return JSON.parse(out) as ReturnType<typeof loopInItsOwnProcess>;
}

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  const sizesArg = process.argv[process.argv.indexOf('--sizes') + 1];
  const sizes = (process.argv.includes('--sizes') && sizesArg ? sizesArg : 'demo,1000,10000').split(',');
  const psArg = process.argv[process.argv.indexOf('--page-size') + 1];
  const pageSize = process.argv.includes('--page-size') && psArg ? Number(psArg) : undefined;
  const cArg = process.argv[process.argv.indexOf('--concurrency') + 1];
  // Ten pages in flight: every page of the 10,000-entity sweep (auto page size 1,000) at once. With fewer,
  // the last pages run as a second, short wave after the others and the sweep measures ~10 % slower.
  const concurrency = process.argv.includes('--concurrency') && cArg ? Number(cArg) : 10;
  // The sweep's passes (its input's maxPasses, default 3): 1 shows what the passes after the first cost.
  const mpArg = process.argv[process.argv.indexOf('--max-passes') + 1];
  const maxPasses = process.argv.includes('--max-passes') && mpArg ? Number(mpArg) : undefined;
  const rArg = process.argv[process.argv.indexOf('--repeat') + 1];
  const repeat = process.argv.includes('--repeat') && rArg ? Math.max(1, Number(rArg)) : 1;
  const listArg = (flag: string, dflt: string) => {
    const v = process.argv[process.argv.indexOf(flag) + 1];
    return (process.argv.includes(flag) && v ? v : dflt).split(',');
  };
  const states = listArg('--state', 'file') as ('file' | 'postgres')[];
  for (const st of states)
    if (st !== 'file' && st !== 'postgres') throw new Error(`--state: file or postgres, not ${st}`);
  const workerCounts = listArg('--workers', '1').map(Number);
  // Every activity's span (from the sweep's start, its wait for a worker) on stderr: where a sweep's time goes.
  const timeline = process.argv.includes('--timeline');
  // A single configuration keeps the plain size keys ("10000"); several get "10000/postgres/2w".
  const keyed = states.length > 1 || workerCounts.length > 1 || states[0] !== 'file' || workerCounts[0] !== 1;
  const say = (s: string) => process.stderr.write(s + '\n');
  say('bench: building (npm run build)…');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const server = await startDevServer();
  let pg: PgServer | undefined;
  if (states.includes('postgres')) pg = await startPostgres();
  let dbSeq = 0;
  const results: Record<string, SizeResult> = {};
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  try {
    for (const size of sizes)
      for (const state of states)
        for (const workers of workerCounts) {
          const runs: SizeResult[] = [];
          const key = keyed ? `${size}/${state}/${workers}w` : size;
          for (let run = 0; run < repeat; run++) {
            // A task queue per worker process: no run's tasks can go to a poll the previous (stopped) worker left.
            const taskQueue = `bench-${Date.now()}-${size}-${run}`;
            const dir = mkdtempSync(path.join(os.tmpdir(), `argus-bench-${size}-`));
            const file = path.join(dir, 'catalog.json');
            const loopFile = path.join(dir, 'loop.json');
            if (size === 'demo') copyFileSync(path.join(ROOT, 'catalog', 'demo', 'shop-warehouse.json'), file);
            else
              writeFileSync(
                file,
                JSON.stringify(generateCatalog({ entities: Number(size), seed: 42, name: `bench-${size}` })),
              );
            copyFileSync(file, loopFile);
            const loop = loopInItsOwnProcess(loopFile);

            // Fresh worker processes per run, so their peak RSS belongs to that sweep. With the file store several
            // workers share one state folder (one host); with PostgreSQL each run gets a database of its own.
            // The heap limit a worker gets from `npm run worker` and the image (ARGUS_WORKER_HEAP_MB, default 1024),
            // so the RSS printed is a user's. ARGUS_BENCH_WORKER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"
            // profiles the worker (its flags come after, so a --max-old-space-size there wins).
            const stateUrl = state === 'postgres' ? await pg!.createDatabase(`argus_bench_${++dbSeq}`) : undefined;
            const nodeFlags = [
              `--max-old-space-size=${WORKER_HEAP_MB}`,
              ...(process.env.ARGUS_BENCH_WORKER_NODE_FLAGS ?? '').split(' ').filter(Boolean),
            ];
            const fleet: ChildProcess[] = [];
            for (let i = 0; i < workers; i++) {
              fleet.push(
                await startBenchWorker({
                  address: server.address,
                  taskQueue,
                  stateDir: path.join(dir, 'state'),
                  ...(stateUrl ? { stateUrl } : {}),
                  nodeFlags,
                }),
              );
            }
            say(`bench: sweeping ${size} (${loop.entities} entities), ${state} store, ${workers} worker(s)…`);
            const id = `sweep/bench-${size}/${Date.now()}`;
            const workersCpu = () => fleet.reduce((n, w) => n + cpuMs(w.pid!), 0);
            const workersMain = () => fleet.reduce((n, w) => n + mainThreadCpuMs(w.pid!), 0);
            const cpu0 = { worker: workersCpu(), main: workersMain(), server: cpuMs(server.pid) };
            const t0 = performance.now();
            const h = await client.workflow.start('sweepWorkflow', {
              taskQueue,
              workflowId: id,
              args: [
                {
                  catalog: { kind: 'file', path: file },
                  pageSize,
                  concurrency,
                  ...(maxPasses ? { maxPasses } : {}),
                  ...pageFixedPointArg(),
                },
              ],
            });
            const report = (await h.result()) as SweepReport;
            const wallMs = performance.now() - t0;
            const workerCpu = workersCpu() - cpu0.worker;
            const workerMain = workersMain() - cpu0.main;
            const serverCpu = cpuMs(server.pid) - cpu0.server;
            const rss = Math.max(...fleet.map((w) => peakRssMb(w.pid!)));
            for (const w of fleet) await killTree(w);
            let pgSize: SizeResult['postgres'];
            if (stateUrl) {
              const store = await openPgStateStore(stateUrl);
              try {
                // reltuples is an estimate until the tables are analysed: analyse first, then read.
                await store.pool.query(`analyze`);
                const { rows, bytes } = await store.size();
                const n = report.entities.requested;
                pgSize = {
                  rows,
                  bytes,
                  rowsPerEntity: Math.round((rows / n) * 100) / 100,
                  bytesPerEntity: Math.round(bytes / n),
                };
              } finally {
                await store.close();
              }
            }
            const stats = await sweepHistoryStats(
              client,
              id,
              h.firstExecutionRunId,
              Math.ceil(report.entities.requested / effectivePageSize(pageSize, report.entities.requested)),
            );
            const spans = await sweepTimeline(
              client,
              id,
              h.firstExecutionRunId,
              stats.executions - stats.sweepRuns.length,
            );
            if (timeline)
              for (const s of spans)
                say(
                  `  ${s.startedMs.toFixed(0).padStart(7)} → ${s.closedMs.toFixed(0).padStart(7)} ms ` +
                    `(${(s.closedMs - s.startedMs).toFixed(0).padStart(5)} ms, waited ${(s.startedMs - s.scheduledMs).toFixed(0).padStart(4)})  ${s.workflow.padEnd(11)} ${s.activity}`,
                );
            const eps = (n: number, ms: number) => Math.round((n / (ms / 1000)) * 10) / 10;
            runs.push({
              entities: report.entities.requested,
              state,
              workers,
              ...(pgSize ? { postgres: pgSize } : {}),
              argus: {
                entitiesPerSecond: eps(report.entities.requested, wallMs),
                wallMs: Math.round(wallMs),
                written: report.written,
                executions: report.executions,
              },
              inProcess: {
                entitiesPerSecond: eps(loop.entities, loop.wallMs),
                wallMs: Math.round(loop.wallMs),
                cpuMs: Math.round(loop.cpuMs),
                mainThreadCpuMs: Math.round(loop.mainThreadCpuMs),
                written: loop.written,
              },
              ratio: Math.round((eps(loop.entities, loop.wallMs) / eps(report.entities.requested, wallMs)) * 100) / 100,
              cpuRatio: Math.round((workerCpu / loop.cpuMs) * 100) / 100,
              maxHistoryEvents: stats.maxHistoryEvents,
              workerPeakRssMb: rss,
              workerCpuMs: Math.round(workerCpu),
              serverCpuMs: Math.round(serverCpu),
              workerMainThreadCpuMs: Math.round(workerMain),
              profile: profileOf(spans, workerMain, workerCpu + serverCpu),
            });
            // A 10,000-entity run leaves ~200 MB (catalog copies, ledger, audit log, report).
            if (!process.env.ARGUS_BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
          }
          // The run with the median throughput stands for the size; every run's figure is listed beside it.
          const sorted = [...runs].sort((x, y) => x.argus.entitiesPerSecond - y.argus.entitiesPerSecond);
          results[key] = {
            ...sorted[Math.floor((sorted.length - 1) / 2)]!,
            ...(repeat > 1 ? { runs: runs.map((r) => r.argus.entitiesPerSecond) } : {}),
          };
          say(
            `bench: ${key}: ${results[key]!.argus.entitiesPerSecond} entities/s (loop ${results[key]!.inProcess.entitiesPerSecond}), max history ${results[key]!.maxHistoryEvents}, worker peak RSS ${results[key]!.workerPeakRssMb} MiB` +
              (results[key]!.postgres
                ? `, PostgreSQL ${results[key]!.postgres!.rowsPerEntity} rows and ${results[key]!.postgres!.bytesPerEntity} bytes per entity`
                : ''),
          );
        }
  } finally {
    await connection.close();
    await server.stop();
    await pg?.stop();
  }
  const out = {
    machine: { cpus: os.cpus().length, node: process.version, server: 'temporal server start-dev (in-memory SQLite)' },
    settings: {
      pageSize: pageSize ?? 'auto (a tenth of the catalog, 100..1000)',
      concurrency,
      maxPasses: maxPasses ?? 'the input default (3)',
      repeat,
      state: states,
      workers: workerCounts,
      workerHeapMb: WORKER_HEAP_MB,
      workerNodeFlags: process.env.ARGUS_BENCH_WORKER_NODE_FLAGS ?? '',
    },
    sizes: results,
    targets: targetsOf(results),
  };
  // A target not met: the profile of each size, so the floor shows (what the time went to, and the bounds).
  if (out.targets.some((t) => !t.met)) {
    for (const t of out.targets) say(`bench: target ${t.what} ≤ ${t.limit}: ${t.value} ${t.met ? 'met' : 'NOT MET'}`);
    for (const [k, r] of Object.entries(results)) {
      const p = r.profile;
      say(
        `bench: ${k} profile: wall ${r.argus.wallMs} ms; floors: main thread ${p.floors.mainThreadMs} ms, ` +
          `CPU over ${os.cpus().length} cores ${p.floors.cpuOverCoresMs} ms; workflow tasks ${p.workflowTaskMs} ms busy`,
      );
      for (const a of p.activities.slice(0, 10))
        say(
          `  ${a.activity.padEnd(28)} ${String(a.count).padStart(6)}×  busy ${String(a.busyMs).padStart(8)} ms  longest ${a.maxMs} ms`,
        );
    }
  }
  if (json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  else {
    for (const [k, r] of Object.entries(results)) {
      process.stdout.write(
        `${k.padEnd(keyed ? 20 : 6)} ${String(r.entities).padStart(6)} entities  ARGUS ${String(r.argus.entitiesPerSecond).padStart(8)}/s  loop ${String(r.inProcess.entitiesPerSecond).padStart(9)}/s  ratio ${r.ratio}x  max history ${r.maxHistoryEvents}  worker RSS ${r.workerPeakRssMb} MiB  CPU worker ${r.workerCpuMs} ms (loop ${r.inProcess.cpuMs} ms: ${r.cpuRatio}x), main threads ${r.workerMainThreadCpuMs} ms (loop ${r.inProcess.mainThreadCpuMs} ms), server ${r.serverCpuMs} ms${r.postgres ? `  PostgreSQL ${r.postgres.rowsPerEntity} rows, ${r.postgres.bytesPerEntity} B per entity` : ''}${r.runs ? `  (median of runs: ${r.runs.join(', ')})` : ''}\n`,
      );
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
