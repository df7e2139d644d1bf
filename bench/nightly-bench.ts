// npm run bench:nightly [-- --json] [--modes rules,model] [--sizes N,M] [--latency-ms 300] [--concurrency 8]
//                         [--page-fixed-point on|off]
// Four nights of incremental sweeps of one generated file catalog, on a throwaway dev server with one worker
// process (compiled code) and one state folder kept across the nights, so the sweeps' memory carries:
// night 1 a fresh catalog, night 2 the same catalog untouched, night 3 after a seeded edit of 1 % of its entities,
// night 4 after an upgrade: a comment appended to a rule source (judgment/words.ts, put back afterwards) changes the
// rules version and no decision, and the worker is restarted on it.
// `rules`: no model (rules agents, mechanical review); `model`: all three agents and the review on the fake provider.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { generateCatalog } from '../scripts/generate-catalog';
import type { CatalogEntity } from '../domain/catalog';
import type { IncrementalSummary, SweepReport } from '../domain/report';
import type { EndpointConfig } from '../domain/sweep';
import { startFakeProvider, type FakeProvider } from '../fakes/provider';
import { readCatalog } from './catalog-io';
import { ROOT, startDevServer, startBenchWorker, killTree, peakRssMb, pageFixedPointArg } from './support';

const KEY_ENV = 'ARGUS_BENCH_FAKE_KEY';
// The fake provider reads no key; the worker only needs the variable apiKeyEnv names to be set.
const KEY_VALUE = 'bench-fake-key-not-a-secret';
const SCENARIO = 'ok';
const REVIEWER = 'correct';
const MODES = ['rules', 'model'] as const;
type Mode = (typeof MODES)[number];
const DEFAULT_SIZES: Record<Mode, number[]> = { rules: [10_000, 100_000], model: [1_000, 10_000] };
/** Share of the entities night 3 edits, and the seed that picks them and the edits. */
const CHANGED_SHARE = 0.01;
const CHANGE_SEED = 20_240_601;
const TARGETS = {
  night2Calls: 0,
  night2Written: 0,
  night2WallShareMax: 0.1,
  night3CallShareMax: 0.03,
  night4CallShareMax: 0.05,
  night4Written: 0,
} as const;
/** The rule source night 4's upgrade appends a comment to, and the comment. */
const UPGRADED_SOURCE = path.join(ROOT, 'judgment', 'words.ts');
const UPGRADE_COMMENT = '\n// bench:nightly night 4: an upgrade that changes no decision\n';

/** Append the upgrade's comment to the rule source; returns how to put the file back (also run if the bench dies). */
function upgradeRules(): () => void {
  const original = readFileSync(UPGRADED_SOURCE, 'utf8');
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    writeFileSync(UPGRADED_SOURCE, original);
  };
  process.once('exit', restore);
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      restore();
      process.exit(130);
    });
  writeFileSync(UPGRADED_SOURCE, original + UPGRADE_COMMENT);
  return restore;
}
/** The heap a worker gets from `npm run worker` and the image, as in bench/sweep-bench.ts. */
const WORKER_HEAP_MB = Number(process.env.ARGUS_WORKER_HEAP_MB || 1024);
/** Requests the fake provider receives between resets of its counters (see rollover). */
const ROLLOVER_CALLS = 500;

interface Night {
  night: number;
  judged: number;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  written: number;
  wallMs: number;
  workerPeakRssMb: number;
  /** Beside the contract: the report's incremental summary, whether the run was partial, the provider's count. */
  incremental: IncrementalSummary | null;
  partial: boolean;
  fakeProviderCalls?: number;
}

interface Edits {
  entities: number;
  descriptionsRemoved: number;
  columnsAdded: number;
  humanTextEdited: number;
}

// xorshift32: Math.random cannot be seeded, and the edit must be the same on every run.
function seeded(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

const humanText = (x: { description?: string; description_source?: string }) =>
  x.description !== undefined && x.description_source === 'human';
const hasHumanText = (e: CatalogEntity) => humanText(e) || e.columns.some(humanText);
const ids = (es: CatalogEntity[]) => es.map((e) => e.id);
const hasDescription = (e: CatalogEntity) =>
  e.description !== undefined || e.columns.some((c) => c.description !== undefined);

/**
 * Night 3's change, made in the file as a person or a loader would between sweeps: 1 % of the entities, picked
 * at random (seeded) over the whole catalog, a third losing every description, a third gaining a column, a third
 * with a person's description reworded. Each entity gets one edit.
 */
function editCatalog(file: string): Edits {
  const cat = readCatalog(file);
  const entities = cat.entities as CatalogEntity[];
  const rand = seeded(CHANGE_SEED);
  const order = entities.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const total = Math.max(3, Math.round(entities.length * CHANGED_SHARE));
  const taken = new Set<number>();
  const pick = (quota: number, fits: (e: CatalogEntity) => boolean): CatalogEntity[] => {
    const out: CatalogEntity[] = [];
    for (const i of order) {
      if (out.length >= quota) break;
      if (taken.has(i) || !fits(entities[i]!)) continue;
      taken.add(i);
      out.push(entities[i]!);
    }
    return out;
  };
  // Human text is the rarest (a tenth of the descriptions), so it picks first.
  const third = Math.floor(total / 3);
  const reworded = pick(third, hasHumanText);
  const stripped = pick(third, hasDescription);
  const widened = pick(total - reworded.length - stripped.length, () => true);
  for (const e of reworded) {
    const c = humanText(e) ? e : e.columns.find(humanText)!;
    c.description = `${c.description} Reviewed by the data owner; see the team wiki.`;
  }
  for (const e of stripped) {
    delete e.description;
    delete e.description_source;
    for (const c of e.columns) {
      delete c.description;
      delete c.description_source;
    }
  }
  for (const e of widened) {
    let name = 'partner_ref';
    for (let k = 2; e.columns.some((c) => c.name === name); k++) name = `partner_ref_${k}`;
    e.columns.push({ name, type: 'VARCHAR(64)', nullable: true, primary_key: false, tags: [] });
  }
  // Compact, as generated and as the sweeps keep it: an indented copy would be 1.7 times the bytes to read.
  writeFileSync(file, JSON.stringify(cat));
  // Kept with ARGUS_BENCH_KEEP, to look at what night 3 did with each edited entity.
  if (process.env.ARGUS_BENCH_KEEP)
    writeFileSync(
      path.join(path.dirname(file), 'night3-edits.json'),
      JSON.stringify({ reworded: ids(reworded), stripped: ids(stripped), widened: ids(widened) }, null, 2),
    );
  return {
    entities: reworded.length + stripped.length + widened.length,
    descriptionsRemoved: stripped.length,
    columnsAdded: widened.length,
    humanTextEdited: reworded.length,
  };
}

/** Current resident set size of a process, in MiB. */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/**
 * Peak RSS of a long-lived process over one night. VmHWM is the lifetime peak, so it is reset to the current RSS
 * first (clear_refs 5); where the kernel refuses that, the peak comes from sampling VmRSS, which may miss a spike.
 */
function watchPeakRss(pid: number): () => number {
  let resettable = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    resettable = false;
  }
  let sampled = rssMb(pid);
  const timer = setInterval(() => (sampled = Math.max(sampled, rssMb(pid))), 200);
  return () => {
    clearInterval(timer);
    return resettable ? peakRssMb(pid) : Math.max(sampled, rssMb(pid));
  };
}

/**
 * Requests the fake provider answered on one endpoint, its counters reset every ROLLOVER_CALLS: its
 * x-ratelimit-remaining-requests counts down over its lifetime, and past 1,000 requests the pacer would hold
 * every call a second (as in bench/model-bench.ts).
 */
function countFakeCalls(fp: FakeProvider, key: string): () => number {
  let calls = 0;
  const fold = () => {
    calls += fp.stats()[key]?.calls ?? 0;
    fp.reset();
  };
  fp.reset();
  const timer = setInterval(() => (fp.stats()[key]?.calls ?? 0) >= ROLLOVER_CALLS && fold(), 50);
  return () => {
    clearInterval(timer);
    fold();
    return calls;
  };
}

/** A worker process on compiled code with a user's heap limit and the fake key, its state in `stateDir`. */
function startWorker(address: string, taskQueue: string, stateDir: string): Promise<ChildProcess> {
  // ARGUS_BENCH_WORKER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the worker, as in bench:sweep.
  return startBenchWorker({
    address,
    taskQueue,
    stateDir,
    env: { [KEY_ENV]: KEY_VALUE },
    nodeFlags: [
      `--max-old-space-size=${WORKER_HEAP_MB}`,
      ...(process.env.ARGUS_BENCH_WORKER_NODE_FLAGS ?? '').split(' ').filter(Boolean),
    ],
  });
}

function listArg(flag: string): string[] | undefined {
  const i = process.argv.indexOf(flag);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]!.split(',') : undefined;
}

function numberArg(flag: string, dflt: number, min: number, max: number): number {
  const i = process.argv.indexOf(flag);
  if (i < 0) return dflt;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`${flag}: an integer from ${min} to ${max}`);
  return v;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  const modes = (listArg('--modes') ?? [...MODES]) as Mode[];
  for (const m of modes) if (!MODES.includes(m)) throw new Error(`--modes: rules and/or model, not "${m}"`);
  const sizesArg = listArg('--sizes')?.map(Number);
  for (const n of sizesArg ?? [])
    if (!Number.isInteger(n) || n < 3) throw new Error('--sizes: numbers of entities (at least 3), comma-separated');
  const latencyMs = numberArg('--latency-ms', 300, 0, 600_000);
  // modelConcurrency and the endpoint's maxInFlight are the same figure, as in bench:model.
  const concurrency = numberArg('--concurrency', 8, 1, 32);
  const say = (s: string) => process.stderr.write(s + '\n');

  say('bench:nightly: building (npm run build)…');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const fp = modes.includes('model') ? await startFakeProvider({ port: 0, latencyMs }) : undefined;
  const endpoint: EndpointConfig | undefined = fp && {
    id: 'fake',
    baseUrl: fp.baseUrl(SCENARIO, REVIEWER),
    model: 'fake-model',
    apiKeyEnv: KEY_ENV,
    structuredOutput: 'json_schema',
    maxOutputTokens: 900,
    timeoutMs: 60_000,
    maxInFlight: concurrency,
  };
  const server = await startDevServer();
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const runs: Record<string, unknown>[] = [];
  const lines: string[] = [];
  try {
    for (const mode of modes)
      for (const n of sizesArg ?? DEFAULT_SIZES[mode]) {
        const dir = mkdtempSync(path.join(os.tmpdir(), `argus-bench-nightly-${mode}-${n}-`));
        const file = path.join(dir, 'catalog.json');
        writeFileSync(file, JSON.stringify(generateCatalog({ entities: n, seed: 42, name: `nightly-${n}` })));
        const sweepInput = (catalogPath: string, model = 'fake-model') =>
          mode === 'rules'
            ? // Ten pages in flight, as bench:sweep runs: every page of a 10,000-entity catalog at once.
              {
                catalog: { kind: 'file', path: catalogPath },
                agentBackend: 'rules',
                review: 'mechanical',
                concurrency: 10,
                ...pageFixedPointArg(),
              }
            : {
                catalog: { kind: 'file', path: catalogPath },
                agentBackend: 'model',
                review: 'model',
                endpoints: [{ ...endpoint!, model }],
                modelConcurrency: concurrency,
                ...pageFixedPointArg(),
              };
        const taskQueue = `bench-nightly-${Date.now()}-${mode}-${n}`;
        let worker = await startWorker(server.address, taskQueue, path.join(dir, 'state'));
        let restoreRules: (() => void) | undefined;
        const nights: Night[] = [];
        let edits: Edits | undefined;
        let coldStartMs: number;
        try {
          // A long-lived worker is warm: a first sweep of the demo catalog (its own memory; another model name,
          // so night 1's batches plan on a cold calibration, as a new model's first night would).
          const warmup = path.join(dir, 'warmup.json');
          copyFileSync(path.join(ROOT, 'catalog', 'demo', 'shop-warehouse.json'), warmup);
          const tw = performance.now();
          await client.workflow.execute('sweepWorkflow', {
            taskQueue,
            workflowId: `sweep/bench-nightly-warmup-${mode}-${n}/${Date.now()}`,
            args: [sweepInput(warmup, 'warmup-model')],
          });
          coldStartMs = Math.round(performance.now() - tw);
          for (const night of [1, 2, 3, 4]) {
            if (night === 4) {
              // The upgrade: a new rules version (a comment in a rule source), on a worker started on it.
              restoreRules = upgradeRules();
              await killTree(worker);
              worker = await startWorker(server.address, taskQueue, path.join(dir, 'state'));
              say(`bench:nightly: ${mode} ${n}: upgraded the rules (a comment in judgment/words.ts), worker restarted`);
            }
            if (night === 3) {
              if (process.env.ARGUS_BENCH_KEEP) copyFileSync(file, path.join(dir, 'before-night3.json'));
              edits = editCatalog(file);
              say(
                `bench:nightly: ${mode} ${n}: edited ${edits.entities} entities (${edits.descriptionsRemoved} lost their descriptions, ` +
                  `${edits.columnsAdded} gained a column, ${edits.humanTextEdited} had a person's text reworded)`,
              );
            }
            say(`bench:nightly: ${mode} ${n}: night ${night}…`);
            const stopRss = watchPeakRss(worker.pid!);
            const stopCount =
              mode === 'model' && fp ? countFakeCalls(fp, fp.endpointKey(SCENARIO, REVIEWER)) : undefined;
            const t0 = performance.now();
            const report = (await client.workflow.execute('sweepWorkflow', {
              taskQueue,
              workflowId: `sweep/bench-nightly-${mode}-${n}-night${night}/${Date.now()}`,
              args: [sweepInput(file)],
            })) as SweepReport;
            const wallMs = Math.round(performance.now() - t0);
            const rss = stopRss();
            const fakeCalls = stopCount?.();
            const inc = report.incremental;
            const u = report.modelUsage;
            nights.push({
              night,
              judged: (inc?.judged ?? 0) + (inc?.rejudged ?? 0),
              calls: u.calls,
              promptTokens: u.promptTokens,
              completionTokens: u.completionTokens,
              written: report.written,
              wallMs,
              workerPeakRssMb: rss,
              incremental: inc ?? null,
              partial: report.partial,
              ...(fakeCalls !== undefined ? { fakeProviderCalls: fakeCalls } : {}),
            });
            if (fakeCalls !== undefined && fakeCalls !== u.calls)
              say(`bench:nightly: WARNING the report counts ${u.calls} calls, the fake provider ${fakeCalls}`);
            const x = nights[nights.length - 1]!;
            lines.push(
              `${mode.padEnd(5)} ${String(n).padStart(7)}  ${String(night).padStart(5)}  ${String(x.judged).padStart(7)}  ` +
                `${String(x.calls).padStart(6)}  ${String(x.promptTokens).padStart(9)}  ${String(x.completionTokens).padStart(9)}  ` +
                `${String(x.written).padStart(7)}  ${String(x.wallMs).padStart(8)}  ${String(x.workerPeakRssMb).padStart(7)}` +
                (x.partial ? '  partial' : ''),
            );
            say(`bench:nightly: ${lines[lines.length - 1]!.replace(/ +/g, ' ')}`);
          }
        } finally {
          restoreRules?.();
          await killTree(worker);
          if (process.env.ARGUS_BENCH_KEEP) say(`bench:nightly: kept ${dir}`);
          else rmSync(dir, { recursive: true, force: true });
        }
        const [n1, n2, n3, n4] = nights as [Night, Night, Night, Night];
        const night2WallShare = round(n2.wallMs / n1.wallMs, 3);
        // No call on night 1 (rules) means none is allowed on night 3 either.
        const night3CallShare = n1.calls > 0 ? round(n3.calls / n1.calls, 4) : n3.calls > 0 ? null : 0;
        const night4CallShare = n1.calls > 0 ? round(n4.calls / n1.calls, 4) : n4.calls > 0 ? null : 0;
        const targets = {
          ...TARGETS,
          night2WallShare,
          night3CallShare,
          night4CallShare,
          // Not targets: how much of the catalog night 3 judged for its 1 % edit, night 4's wall against night 1's.
          night3JudgedShare: round(n3.judged / n, 4),
          night4WallShare: round(n4.wallMs / n1.wallMs, 3),
          met: {
            night2Calls: n2.calls === TARGETS.night2Calls,
            night2Written: n2.written === TARGETS.night2Written,
            night2WallShare: night2WallShare <= TARGETS.night2WallShareMax,
            night3CallShare: night3CallShare !== null && night3CallShare <= TARGETS.night3CallShareMax,
            night4CallShare: night4CallShare !== null && night4CallShare <= TARGETS.night4CallShareMax,
            night4Written: n4.written === TARGETS.night4Written,
          },
        };
        lines.push(
          `${mode.padEnd(5)} ${String(n).padStart(7)}  targets: night 2 calls ${n2.calls} (${targets.met.night2Calls}), ` +
            `writes ${n2.written} (${targets.met.night2Written}), wall ${Math.round(night2WallShare * 100)} % of night 1 ` +
            `(<= 10 %: ${targets.met.night2WallShare}); night 3 calls ${night3CallShare === null ? 'some (none on night 1)' : `${round(night3CallShare * 100, 2)} %`} of night 1 ` +
            `(<= 3 %: ${targets.met.night3CallShare}); night 3 judged ${round(targets.night3JudgedShare * 100, 2)} % of the catalog; ` +
            `night 4 (upgrade) calls ${night4CallShare === null ? 'some (none on night 1)' : `${round(night4CallShare * 100, 2)} %`} of night 1 ` +
            `(<= 5 %: ${targets.met.night4CallShare}), writes ${n4.written} (${targets.met.night4Written}), ` +
            `wall ${Math.round(targets.night4WallShare * 100)} % of night 1`,
        );
        runs.push({
          mode,
          entities: n,
          nights,
          targets,
          night3Edits: edits,
          coldStartMs,
          settings:
            mode === 'rules'
              ? { agentBackend: 'rules', review: 'mechanical', pageConcurrency: 10, workerHeapMb: WORKER_HEAP_MB }
              : {
                  agentBackend: 'model',
                  review: 'model',
                  provider: `fakes/provider.ts (scenario ${SCENARIO}, reviewer ${REVIEWER})`,
                  latencyMs,
                  modelConcurrency: concurrency,
                  workerHeapMb: WORKER_HEAP_MB,
                },
        });
      }
  } finally {
    await connection.close();
    await server.stop();
    await fp?.close();
  }
  if (json) process.stdout.write(JSON.stringify({ runs }, null, 2) + '\n');
  else
    process.stdout.write(
      `mode  entities  night   judged   calls     prompt  completion  written   wall ms  RSS MiB\n${lines.join('\n')}\n`,
    );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
