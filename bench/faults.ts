// npm run faults [-- --json] [--entities N] [--seed N] [--faults a,b] [--modes mechanical,model]
//                    [--states file,postgres] [--postgres-down-s N]
// A fault campaign users can run: sweeps of one generated catalog (scripts/generate-catalog.ts), each hit by one
// fault, each compared with an uninterrupted control sweep of the same catalog in the same review mode and state
// store. The faults: a worker killed with SIGKILL at each fault point (ARGUS_FAULT_POINT: activities/fault-points.ts,
// state/fault-points.ts) and a new worker started at once; the Temporal dev server killed with SIGKILL and started
// again on its SQLite file; the PostgreSQL state store's server shut down at once mid-write, started again 20 s later.
// One row per fault: whether the catalog came out byte for byte as the control's; whether every write is audited
// (each entity the sweep changed is named by a write line, and the report's writes are the lines' proposals); the
// writes audited twice plus the model calls paid twice beyond those in flight; the time from the fault to the
// sweep's completion; the sweep's final status.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Pool } from 'pg';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { generateCatalog } from '../scripts/generate-catalog';
import { startFakeProvider, type FakeProvider } from '../fakes/provider';
import type { SweepReport } from '../domain/report';
import type { EndpointConfig } from '../domain/sweep';
import type { AuditEntry } from '../state/store';
import { ROOT, freePort, killTree, startBenchWorker, startDevServer, startRestartablePostgres } from './support';

const KEY_ENV = 'ARGUS_BENCH_FAKE_KEY';
// The fake provider reads no key; the worker only needs the variable apiKeyEnv names to be set.
const KEY_VALUE = 'bench-fake-key-not-a-secret';
/** Model calls in flight per worker (the endpoint's maxInFlight): at most these are lost with a killed worker. */
const IN_FLIGHT = 4;
/** A sweep still running after this long is terminated (its row's status: TERMINATED). */
const SWEEP_DEADLINE_MS = 30 * 60 * 1000;

/**
 * The worker kills, each at the n-th time a point is reached in the worker's process: mid-sweep, with pages
 * written before and after; `report-spool` at the end, every proposal spooled and the report file not yet in place.
 */
const WORKER_FAULTS: Record<string, string> = {
  'agent-start': 'agent-start:2',
  'ledger-write': 'ledger-write:40',
  'after-catalog-replace': 'after-catalog-replace',
  'audit-append': 'audit-append:2',
  'memory-write': 'memory-write',
  'report-spool': 'report-spool',
};
const DEFAULT_WORKER_FAULTS = [
  'agent-start',
  'ledger-write',
  'after-catalog-replace',
  'audit-append',
  'memory-write',
  'report-spool',
];
const SERVER_KILL = 'server-kill';
const POSTGRES_STOP = 'postgres-stop';
const MODES = ['mechanical', 'model'] as const;
const STATES = ['file', 'postgres'] as const;
type Mode = (typeof MODES)[number];
type State = (typeof STATES)[number];

/** One row of the campaign; the keys are the output's contract. */
interface FaultRow {
  fault: string;
  mode: Mode;
  state: State;
  identical: boolean;
  audited: boolean;
  duplicates: number;
  killToCompleteMs: number | null;
  /**
   * What the fault cost: how much longer the sweep took, start to completion, than its control (kill → complete
   * also holds the work the sweep had left, which an uninterrupted sweep does too). Beside the contract's keys.
   */
  delayMs: number | null;
  status: string;
}

/** What a sweep left: its final status, the catalog, its audit's write lines, the model calls the provider answered. */
interface Run {
  status: string;
  report?: SweepReport;
  bytes: string;
  /** The sweep's write lines (a write audited twice appears twice). */
  writeLines: { proposalId: string; entityId: string }[];
  calls: number;
  faultAt?: number;
  /** When the sweep was started (its workflow start returned). */
  startedAt: number;
  completedAt: number;
  /** Whether the fault happened (a worker fault point may never be reached). */
  struck: boolean;
  /** Model calls answered again for a request already answered (the same body). */
  repeats: number;
  /** Workers that exited on their own (not the fault's kill), each replaced. */
  crashes: string[];
}

const say = (s: string) => process.stderr.write(s + '\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function arg(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
function intArg(flag: string, dflt: number, min: number): number {
  const v = arg(flag);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${flag}: an integer of at least ${min}`);
  return n;
}
function listArg<T extends string>(flag: string, all: readonly T[], dflt: readonly T[] = all): T[] {
  const v = arg(flag);
  if (v === undefined) return [...dflt];
  const items = v.split(',') as T[];
  for (const x of items) if (!all.includes(x)) throw new Error(`${flag}: ${all.join(', ')}; not "${x}"`);
  return items;
}

/** A fault from --faults: a point name (its default n), `<point>:<n>`, server-kill or postgres-stop. */
function faultSpec(name: string): string {
  const [point, n] = name.split(':');
  if (name === SERVER_KILL || name === POSTGRES_STOP) return name;
  if (!point || !(point in WORKER_FAULTS) || (n !== undefined && !/^[1-9]\d*$/.test(n)))
    throw new Error(
      `--faults: ${[...Object.keys(WORKER_FAULTS), SERVER_KILL, POSTGRES_STOP].join(', ')} (a point may take :<n>); not "${name}"`,
    );
  return n === undefined ? WORKER_FAULTS[point]! : name;
}

/**
 * What a chat request asks: its model and messages (not max_tokens, which a calibration learned since may change
 * between two sends of the same question).
 */
function promptDigest(body: Buffer): string {
  let asked: unknown = body.toString('utf8');
  try {
    const b = JSON.parse(asked as string) as { model?: unknown; messages?: unknown };
    asked = [b.model, b.messages];
  } catch {
    /* not JSON: the bytes themselves */
  }
  return createHash('sha256').update(JSON.stringify(asked)).digest('hex');
}

/**
 * A pass-through in front of the fake provider that counts each answered chat request by what it asks: a question
 * answered twice is a model call paid twice (the fake provider's own stats count calls, not repeats).
 */
async function startRepeatCounter(target: string): Promise<{
  url: string;
  /** Answered requests beyond the first of the same body, since the last reset. */
  repeats(): number;
  reset(): void;
  close(): Promise<void>;
}> {
  let answered = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers: Record<string, string> = {};
      for (const h of ['content-type', 'authorization']) if (req.headers[h]) headers[h] = String(req.headers[h]);
      fetch(`${target}${req.url}`, { method: req.method!, headers, ...(body.length ? { body } : {}) })
        .then(async (r) => {
          const text = Buffer.from(await r.arrayBuffer());
          if (r.status === 200 && req.url?.endsWith('/chat/completions')) {
            const d = promptDigest(body);
            answered.set(d, (answered.get(d) ?? 0) + 1);
          }
          const out: Record<string, string> = {};
          r.headers.forEach((v, k) => {
            if (!['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(k)) out[k] = v;
          });
          res.writeHead(r.status, out);
          res.end(text);
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    repeats: () => [...answered.values()].reduce((n, c) => n + c - 1, 0),
    reset: () => (answered = new Map()),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The ids of the entities whose records differ between two texts of a catalog file. */
function changedEntities(before: string, after: string): Set<string> {
  const records = (text: string) =>
    new Map(
      (JSON.parse(text) as { entities: { id: string }[] }).entities.map((e) => [e.id, JSON.stringify(e)] as const),
    );
  const a = records(before);
  const b = records(after);
  return new Set([...a.keys(), ...b.keys()].filter((id) => a.get(id) !== b.get(id)));
}

/** A report's entity failures by stage and category, with one message of each ("write/…: 40 (…)"). */
function failureSummary(report: SweepReport): string {
  const by = new Map<string, { n: number; message: string }>();
  for (const f of report.failures) {
    const key = `${f.stage}/${f.category}`;
    const e = by.get(key) ?? { n: 0, message: f.message.slice(0, 200) };
    e.n++;
    by.set(key, e);
  }
  const more = report.failuresTruncated ? ` (+${report.failuresTruncated} not listed)` : '';
  return [...by].map(([k, e]) => `${k}: ${e.n} (${e.message})`).join('; ') + more;
}

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  const entities = intArg('--entities', 3000, 10);
  const seed = intArg('--seed', 7, 0);
  const downMs = intArg('--postgres-down-s', 20, 0) * 1000;
  const modes = listArg('--modes', MODES);
  const states = listArg('--states', STATES);
  const faults = (arg('--faults')?.split(',') ?? [...DEFAULT_WORKER_FAULTS, SERVER_KILL, POSTGRES_STOP]).map(faultSpec);

  say('faults: building (npm run build)…');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  // People described a sixth of the columns (what the drafter inherits downstream): every page has writes.
  const generated = generateCatalog({ entities, seed, name: `faults-${entities}` });
  for (const e of generated.entities) for (const c of e.columns) if (c.description) c.description_source = 'human';
  const catalogText = JSON.stringify(generated, null, 2);

  const work = mkdtempSync(path.join(os.tmpdir(), 'argus-faults-'));
  const serverDb = path.join(work, 'temporal.sqlite');
  const serverPort = await freePort();
  let server = await startDevServer({ dbFile: serverDb, port: serverPort });
  const pg = states.includes('postgres') ? await startRestartablePostgres() : undefined;
  const pgPool = pg && new Pool({ connectionString: pg.url, max: 2 });
  pgPool?.on('error', () => undefined);
  const fp: FakeProvider | undefined = modes.includes('model') ? await startFakeProvider({ port: 0 }) : undefined;
  const counter = fp && (await startRepeatCounter(fp.url));
  const endpoint: EndpointConfig | undefined = fp && {
    id: 'fake',
    baseUrl: fp.baseUrl('ok', 'correct').replace(fp.url, counter!.url),
    model: 'fake-model',
    apiKeyEnv: KEY_ENV,
    structuredOutput: 'json_schema',
    maxOutputTokens: 900,
    timeoutMs: 60_000,
    maxInFlight: IN_FLIGHT,
  };
  let seq = 0;
  const rows: FaultRow[] = [];
  // Workers' logs go to a file of the campaign, so its own lines stay readable.
  const logFile = path.join(os.tmpdir(), `argus-faults-${process.pid}.log`);
  const logFd = openSync(logFile, 'w');
  say(`faults: workers log to ${logFile}`);
  const running = new Set<ChildProcess>();
  // What this campaign started and a failure would leave running: its workers, and at exit its servers too.
  const stopAll = () => {
    for (const w of running) {
      try {
        process.kill(-w.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  process.once('exit', () => {
    stopAll();
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {
      /* stopped */
    }
    pg?.destroyNow();
  });

  /** One sweep of a fresh copy of the catalog with a fresh state store, hit by `fault` (none: the control). */
  async function sweep(state: State, mode: Mode, fault?: string): Promise<Run> {
    const n = ++seq;
    const dir = path.join(work, `run-${n}`);
    const file = path.join(dir, 'catalog.json');
    const stateDir = path.join(dir, 'state');
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(file, catalogText);
    const schema = `faults_${n}`;
    const env: Record<string, string> = { [KEY_ENV]: KEY_VALUE, ARGUS_FAULT_POINT: '' };
    if (state === 'postgres') env.ARGUS_STATE_SCHEMA = schema;
    const taskQueue = `faults-${Date.now()}-${n}`;
    const startWorker = async (faultPoint = '') => {
      const w = await startBenchWorker({
        address: `127.0.0.1:${serverPort}`,
        taskQueue,
        stateDir,
        ...(state === 'postgres' ? { stateUrl: pg!.url } : {}),
        env: { ...env, ARGUS_FAULT_POINT: faultPoint },
        logFd,
      });
      running.add(w);
      w.once('exit', () => running.delete(w));
      return w;
    };
    const workerFault = fault && fault !== SERVER_KILL && fault !== POSTGRES_STOP ? fault : undefined;
    // A supervisor, as a deployment has one: a worker that exits while the sweep runs is replaced at once. The
    // faulted worker's SIGKILL is the fault; any other exit is a crash, and said.
    let finished = false;
    const workers: ChildProcess[] = [];
    const crashes: string[] = [];
    let killed: (at: number) => void = () => undefined;
    const died = new Promise<number>((resolve) => (killed = resolve));
    const replace = async (): Promise<void> => {
      while (!finished) {
        try {
          supervise(await startWorker(), false);
          return;
        } catch (e) {
          say(`faults: a new worker did not start (${(e as Error).message}); again in 2 s`);
          await sleep(2000);
        }
      }
    };
    const supervise = (w: ChildProcess, faulted: boolean) => {
      workers.push(w);
      w.once('exit', (code, signal) => {
        if (finished) return;
        if (faulted) killed(Date.now());
        if (!faulted || signal !== 'SIGKILL') {
          crashes.push(signal ?? `exit ${code}`);
          say(`faults: a worker exited unexpectedly (${signal ?? `exit ${code}`}): see ${logFile}`);
        }
        void replace();
      });
    };
    supervise(await startWorker(workerFault), workerFault !== undefined);
    fp?.reset();
    counter?.reset();
    const input = {
      catalog: { kind: 'file' as const, path: file },
      ...(mode === 'model'
        ? {
            review: 'model' as const,
            agentBackend: 'model' as const,
            endpoints: [endpoint!],
            modelConcurrency: IN_FLIGHT,
          }
        : { review: 'mechanical' as const, agentBackend: 'rules' as const }),
    };
    const workflowId = `sweep/faults-${state}-${mode}/${fault ?? 'control'}-${n}`;
    let connection = await Connection.connect({ address: `127.0.0.1:${serverPort}` });
    let handle: WorkflowHandle = await new Client({ connection }).workflow.start('sweepWorkflow', {
      taskQueue,
      workflowId,
      args: [input],
    });
    const startedAt = Date.now();
    const outcome = (h: WorkflowHandle) =>
      h.result().then(
        (r) => ({ report: r as SweepReport, at: Date.now() }),
        (e: unknown) => ({ error: e as Error, at: Date.now() }),
      );
    // Awaited on this connection except across a server kill: a long poll on a channel that is closed throws.
    const result = fault === SERVER_KILL ? undefined : outcome(handle);
    let faultAt: number | undefined;
    let struck = fault === undefined;
    try {
      if (workerFault) {
        const winner = await Promise.race([
          died.then((at) => ({ died: at })),
          result!.then(() => ({ died: undefined })),
        ]);
        if (winner.died !== undefined) {
          faultAt = winner.died;
          struck = workers[0]!.signalCode === 'SIGKILL';
        } else say(`faults: ${fault} was never reached: the sweep completed on the first worker`);
      } else if (fault === SERVER_KILL || fault === POSTGRES_STOP) {
        await firstWrite(state, stateDir, schema);
        if (fault === SERVER_KILL) {
          await server.kill9();
          faultAt = Date.now();
          await connection.close().catch(() => undefined);
          await sleep(3000);
          server = await startDevServer({ dbFile: serverDb, port: serverPort });
          connection = await Connection.connect({ address: `127.0.0.1:${serverPort}` });
          handle = new Client({ connection }).workflow.getHandle(workflowId);
        } else {
          if (!pg) throw new Error('postgres-stop needs --states postgres');
          await pg.crash();
          faultAt = Date.now();
          await sleep(downMs);
          await pg.start();
        }
        struck = true;
      }
      // A sweep that has not completed in SWEEP_DEADLINE_MS is terminated: its row says so.
      const deadline = setTimeout(
        () => void handle.terminate('npm run faults: deadline').catch(() => undefined),
        SWEEP_DEADLINE_MS,
      );
      const done = await (result ?? outcome(handle));
      clearTimeout(deadline);
      finished = true;
      const status = (await handle.describe()).status.name;
      if ('error' in done) say(`faults: ${fault ?? 'control'} (${state}, ${mode}): ${done.error.message}`);
      return {
        status,
        ...('report' in done ? { report: done.report } : {}),
        bytes: readFileSync(file, 'utf8'),
        writeLines: await auditWrites(state, stateDir, schema, `${workflowId}`),
        calls: fp?.stats()[fp.endpointKey('ok', 'correct')]?.answered ?? 0,
        repeats: counter?.repeats() ?? 0,
        ...(faultAt !== undefined ? { faultAt } : {}),
        startedAt,
        completedAt: done.at,
        struck,
        crashes,
      };
    } finally {
      finished = true;
      for (const w of workers) if (w.exitCode === null && w.signalCode === null) await killTree(w);
      await connection.close().catch(() => undefined);
      if (!process.env.ARGUS_BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Wait until the sweep's first write is audited: pages written, others still to come. */
  async function firstWrite(state: State, stateDir: string, schema: string): Promise<void> {
    const started = Date.now();
    for (;;) {
      if (state === 'file') {
        const dir = path.join(stateDir, 'audit');
        const size = (() => {
          try {
            return readdirSync(dir).reduce((s, f) => s + statSync(path.join(dir, f)).size, 0);
          } catch {
            return 0;
          }
        })();
        if (size > 0) return;
      } else {
        const n = await pgPool!
          .query<{ n: string }>(`select count(*) as n from ${schema}.audit where kind = 'write'`)
          .then((r) => Number(r.rows[0]?.n ?? 0))
          .catch(() => 0);
        if (n > 0) return;
      }
      if (Date.now() - started > 600_000) throw new Error('no write audited within 10 minutes');
      await sleep(50);
    }
  }

  /** The sweep's write lines, one per line (a write audited twice appears twice). */
  async function auditWrites(
    state: State,
    stateDir: string,
    schema: string,
    sweepId: string,
  ): Promise<Run['writeLines']> {
    let lines: string[];
    if (state === 'file') {
      const dir = path.join(stateDir, 'audit');
      lines = readdirSync(dir).flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n'));
    } else {
      const { rows } = await pgPool!.query<{ line: string }>(`select line from ${schema}.audit where kind = 'write'`);
      lines = rows.map((r) => r.line);
    }
    return lines.flatMap((l) => {
      try {
        const e = JSON.parse(l) as AuditEntry;
        return e.type === 'write' && e.sweepId === sweepId ? [{ proposalId: e.proposalId, entityId: e.entityId }] : [];
      } catch {
        return []; // a line a kill cut short
      }
    });
  }

  try {
    for (const state of states)
      for (const mode of modes) {
        const mine = faults.filter((f) => f !== POSTGRES_STOP || state === 'postgres');
        if (mine.length === 0) continue;
        say(`faults: ${state} store, ${mode} review: control sweep of ${entities} entities…`);
        const control = await sweep(state, mode);
        if (control.status !== 'COMPLETED' || !control.report)
          throw new Error(`the control sweep ended ${control.status}`);
        const controlIds = new Set(control.writeLines.map((w) => w.proposalId));
        say(
          `faults: control: ${control.report.written} written, ${control.writeLines.length} write lines` +
            (mode === 'model' ? `, ${control.calls} model calls, ${control.repeats} repeated` : ''),
        );
        for (const fault of mine) {
          say(`faults: ${state} store, ${mode} review: ${fault}…`);
          const r = await sweep(state, mode, fault);
          const ids = new Set(r.writeLines.map((w) => w.proposalId));
          const twice = r.writeLines.length - ids.size;
          // Every change in the catalog has its write line: each entity the sweep changed is one a line names.
          const named = new Set(r.writeLines.map((w) => w.entityId));
          const unaudited = [...changedEntities(catalogText, r.bytes)].filter((id) => !named.has(id));
          // Calls paid twice beyond those in flight when the fault struck (at most IN_FLIGHT), net of the repeats an
          // uninterrupted sweep makes too (requests that met in flight, before either answer was remembered).
          const paidAgain = Math.max(0, r.repeats - control.repeats - IN_FLIGHT);
          const row: FaultRow = {
            fault,
            mode,
            state,
            identical: r.bytes === control.bytes,
            audited: r.report !== undefined && r.report.written === ids.size && unaudited.length === 0,
            duplicates: twice + paidAgain,
            killToCompleteMs: r.struck && r.faultAt !== undefined ? r.completedAt - r.faultAt : null,
            delayMs: r.struck ? r.completedAt - r.startedAt - (control.completedAt - control.startedAt) : null,
            status: r.status,
          };
          rows.push(row);
          say(
            `faults:   ${row.status}, identical ${row.identical}, audited ${row.audited} (${r.writeLines.length} write lines, ` +
              `${ids.size} writes; control ${controlIds.size}` +
              (unaudited.length
                ? `; ${unaudited.length} entities changed without a write line: ${unaudited.slice(0, 3).join(', ')}`
                : '') +
              ')' +
              (mode === 'model'
                ? `, model calls ${r.calls}, ${r.repeats} repeated (control ${control.calls}, ${control.repeats})`
                : '') +
              `, fault → complete ${row.killToCompleteMs === null ? 'n/a (not reached)' : `${(row.killToCompleteMs / 1000).toFixed(1)} s`}` +
              (row.delayMs === null ? '' : ` (${(row.delayMs / 1000).toFixed(1)} s longer than the control)`) +
              (r.crashes.length ? `; WORKERS CRASHED: ${r.crashes.join(', ')}` : '') +
              (r.report?.partial ? `; partial: ${r.report.partialReasons.join('; ')}` : '') +
              (r.report?.failures.length ? `; failures: ${failureSummary(r.report)}` : ''),
          );
        }
      }
  } finally {
    stopAll();
    closeSync(logFd);
    await server.stop();
    await counter?.close();
    await fp?.close();
    await pgPool?.end().catch(() => undefined);
    await pg?.destroy();
    if (!process.env.ARGUS_BENCH_KEEP) rmSync(work, { recursive: true, force: true });
  }
  if (json) process.stdout.write(JSON.stringify({ faults: rows }, null, 2) + '\n');
  else {
    process.stdout.write(
      '| fault | mode | state | identical | audited | duplicates | kill → complete | longer than control | status |\n' +
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n',
    );
    for (const r of rows)
      process.stdout.write(
        `| ${r.fault} | ${r.mode} | ${r.state} | ${r.identical ? 'yes' : 'NO'} | ${r.audited ? 'yes' : 'NO'} | ` +
          `${r.duplicates} | ${r.killToCompleteMs === null ? 'not reached' : `${(r.killToCompleteMs / 1000).toFixed(1)} s`} | ` +
          `${r.delayMs === null ? '' : `${(r.delayMs / 1000).toFixed(1)} s`} | ${r.status} |\n`,
      );
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
