// Faults on purpose, on real processes: a worker killed with SIGKILL right after the catalog file is replaced
// and before its audit lines, while the agents run, inside a ledger write, inside the audit append and inside the
// memory write (activities/fault-points.ts, state/fault-points.ts), and the Temporal server killed and restarted
// on its SQLite file. Each run is compared with an uninterrupted sweep of the same catalog.
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, copyFileSync, mkdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { testAddress, uniqueId } from '../support/temporal-env';
import { useArgusWorker } from '../support/argus-worker';
import { startWorkerProcess, startDevServer, kill9, freePort, type Proc } from '../support/processes';
import { generateCatalog } from '../../scripts/generate-catalog';
import { undoSweep } from '../../activities/undo';
import type { AuditEntry } from '../../state/store';
import type { SweepReport } from '../../domain/report';

jest.setTimeout(240_000);

const w = useArgusWorker('tq-faults-control');
const work = mkdtempSync(path.join(os.tmpdir(), 'argus-faults-'));
const original = path.join(work, 'original.json');
// Four pages of 100 entities, two in flight: enough for several group commits, quick enough for CI.
// People described a sixth of the columns: what the drafter inherits downstream, so every page has writes.
const generated = generateCatalog({ entities: 400, seed: 7, name: 'faults' });
for (const e of generated.entities) for (const c of e.columns) if (c.description) c.description_source = 'human';
writeFileSync(original, JSON.stringify(generated, null, 2));
const sweepInput = (file: string) => ({
  catalog: { kind: 'file' as const, path: file },
  pageSize: 100,
  concurrency: 2,
});

function copyOf(name: string): string {
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'catalog.json');
  copyFileSync(original, file);
  return file;
}

/** Audit lines of one sweep, every audit file of a state folder. */
function auditOf(stateDir: string, sweepId: string): AuditEntry[] {
  const dir = path.join(stateDir, 'audit');
  return readdirSync(dir).flatMap((f) =>
    readFileSync(path.join(dir, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as AuditEntry];
        } catch {
          return [];
        }
      })
      .filter((e) => e.sweepId === sweepId),
  );
}
const writeLines = (stateDir: string, sweepId: string) =>
  auditOf(stateDir, sweepId).flatMap((e) => (e.type === 'write' ? [e.proposalId] : []));
const writtenIds = (stateDir: string, sweepId: string) => [...new Set(writeLines(stateDir, sweepId))].sort();
const decidedIds = (stateDir: string, sweepId: string) =>
  new Set(auditOf(stateDir, sweepId).flatMap((e) => (e.type === 'decision' ? [e.proposalId] : []))).size;

interface Control {
  bytes: string;
  report: SweepReport;
  written: string[];
  decided: number;
}
let control: Control;

beforeAll(async () => {
  const file = copyOf('control');
  const report = (await w.client.workflow.execute('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: uniqueId('sweep/faults/control'),
    args: [sweepInput(file)],
  })) as SweepReport;
  control = {
    bytes: readFileSync(file, 'utf8'),
    report,
    written: writtenIds(w.tw.stateDir, report.sweepId),
    decided: decidedIds(w.tw.stateDir, report.sweepId),
  };
  // The control must have something to lose: several pages of writes.
  expect(report.partial).toBe(false);
  expect(report.written).toBeGreaterThan(400);
  expect(control.written).toHaveLength(report.written);
});

/** What every interrupted run must show against the control: same catalog, same writes, a complete audit, full undo. */
async function expectSameAsControl(file: string, stateDir: string, report: SweepReport): Promise<void> {
  expect(report.partial).toBe(false);
  expect(report.failures).toEqual([]);
  expect(readFileSync(file, 'utf8')).toBe(control.bytes);
  expect(report.written).toBe(control.report.written);
  expect(report.outcomes).toEqual(control.report.outcomes);
  expect(writtenIds(stateDir, report.sweepId)).toEqual(control.written);
  // Every write audited once: a retry after the crash logs what is missing, never a line again.
  expect(writeLines(stateDir, report.sweepId)).toHaveLength(control.written.length);
  expect(decidedIds(stateDir, report.sweepId)).toBe(control.decided);
  const [undo] = await undoSweep(stateDir, report.sweepId);
  expect(undo?.conflicts).toEqual([]);
  expect(undo?.undone).toBe(control.report.written);
  expect(readFileSync(file, 'utf8')).toBe(readFileSync(original, 'utf8'));
}

function workerEnv(taskQueue: string, stateDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_NAMESPACE: 'default',
    ARGUS_TASK_QUEUE: taskQueue,
    ARGUS_STATE_DIR: stateDir,
    ARGUS_FAULT_POINT: '',
    ...extra,
  };
}

/** Whether a kill at `fault` left its debris: a half-written temporary file, or an audit log ending in a torn line. */
function leftoverAfter(fault: string, stateDir: string): boolean {
  const temps = (dir: string) =>
    readdirSync(path.join(stateDir, dir), { recursive: true, encoding: 'utf8' }).some((f) => f.endsWith('.tmp'));
  const point = fault.split(':')[0];
  if (point === 'ledger-write') return temps('sweeps');
  if (point === 'memory-write') return temps('memory');
  if (point === 'audit-append')
    return readdirSync(path.join(stateDir, 'audit')).some(
      (f) => !readFileSync(path.join(stateDir, 'audit', f), 'utf8').endsWith('\n'),
    );
  return true;
}

const withTimeout = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} after ${ms} ms`)), ms))]);

describe.each([
  ['right after the catalog file is replaced, before its audit lines', 'after-catalog-replace'],
  ['while the agents run', 'agent-start:2'],
  // The 40th ledger record this worker writes: a page's proposals, outcomes or write records, mid-sweep.
  ['inside a ledger write, its temporary file half written and not renamed', 'ledger-write:40'],
  // The second page's append: half its lines reach the log, the last one torn, no page line.
  ['inside the audit append, leaving a torn line', 'audit-append:2'],
  ['inside the memory write at the end of the sweep, before its rename', 'memory-write'],
  ['with every proposal spooled for the report, before its file is in place', 'report-spool'],
])('a worker killed with SIGKILL %s', (_when, fault) => {
  test('another worker completes the sweep: same catalog, same writes, every audit line, undo complete', async () => {
    const file = copyOf(`kill-${fault.replace(/\W/g, '-')}`);
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'argus-state-'));
    const taskQueue = uniqueId('tq-fault');
    const procs: Proc[] = [];
    try {
      procs.push(await startWorkerProcess(workerEnv(taskQueue, stateDir, { ARGUS_FAULT_POINT: fault })));
      const handle = await w.client.workflow.start('sweepWorkflow', {
        taskQueue,
        workflowId: uniqueId(`sweep/faults/${fault}`),
        args: [sweepInput(file)],
      });
      const died = await withTimeout(procs[0]!.exited, 90_000, 'the worker did not reach its fault point');
      expect({ signal: died.signal, code: died.code, output: died.signal ? '' : procs[0]!.output() }).toEqual({
        signal: 'SIGKILL',
        code: null,
        output: '',
      });
      // The kill left what it leaves in the field, for the next worker to step over.
      expect(leftoverAfter(fault, stateDir)).toBe(true);
      const second = await startWorkerProcess(workerEnv(taskQueue, stateDir));
      procs.push(second);
      const ready = Date.now();
      const report = (await handle.result()) as SweepReport;
      const done = Date.now();
      process.stderr.write(
        `faults: ${fault}: kill → complete sweep ${((done - died.at) / 1000).toFixed(1)} s ` +
          `(second worker polling → complete ${((done - ready) / 1000).toFixed(1)} s); written ${report.written} ` +
          `(control ${control.report.written}), audit writes ${writtenIds(stateDir, report.sweepId).length}\n`,
      );
      await expectSameAsControl(file, stateDir, report);
    } finally {
      for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) await kill9(p);
    }
  });
});

test('the Temporal server killed with SIGKILL mid-sweep and restarted on its SQLite file: the sweep completes the same', async () => {
  const file = copyOf('server-kill');
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'argus-state-'));
  const db = path.join(work, 'server', 'temporal.sqlite');
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const taskQueue = uniqueId('tq-server-kill');
  let server = await startDevServer(db, port);
  let worker: Proc | undefined;
  try {
    worker = await startWorkerProcess({ ...workerEnv(taskQueue, stateDir), TEMPORAL_ADDRESS: address });
    const connection = await Connection.connect({ address });
    const client = new Client({ connection, namespace: 'default' });
    const workflowId = uniqueId('sweep/faults/server-kill');
    await client.workflow.start('sweepWorkflow', { taskQueue, workflowId, args: [sweepInput(file)] });
    await connection.close();
    // Kill the server once the first page's audit lines exist: some pages written, others still to come.
    const auditDir = path.join(stateDir, 'audit');
    const started = Date.now();
    for (;;) {
      let lines = 0;
      try {
        lines = readdirSync(auditDir).reduce((n, f) => n + readFileSync(path.join(auditDir, f), 'utf8').length, 0);
      } catch {
        /* not yet */
      }
      if (lines > 0) break;
      if (Date.now() - started > 90_000) throw new Error(`no write within 90 s:\n${worker.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await kill9(server);
    const killedAt = Date.now();
    await new Promise((r) => setTimeout(r, 3000));
    server = await startDevServer(db, port);
    const again = await Connection.connect({ address });
    const report = (await new Client({ connection: again, namespace: 'default' }).workflow
      .getHandle(workflowId)
      .result()) as SweepReport;
    await again.close();
    process.stderr.write(
      `faults: server kill -9 + restart → complete sweep ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill; ` +
        `written ${report.written} (control ${control.report.written})\n`,
    );
    expect(worker.child.exitCode).toBeNull();
    await expectSameAsControl(file, stateDir, report);
  } finally {
    if (worker && worker.child.exitCode === null) await kill9(worker);
    await kill9(server);
  }
});
