// `argus schedule ...` against the test server: real Temporal Schedules starting real sweeps on a worker in this
// process, and the printed `temporal schedule create` command run by the real temporal binary.
import * as path from 'node:path';
import { writeFileSync } from 'node:fs';
import { ScheduleNotFoundError, type ScheduleDescription } from '@temporalio/client';
import type { TypedSearchAttributes } from '@temporalio/common';
import { temporalCliPath, testAddress, uniqueId } from '../support/temporal-env';
import { useArgusWorker, copyCatalog, readCatalog, writeCatalog, DEMO_CATALOG } from '../support/argus-worker';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import { EXIT } from '../../client/commands/output';
import type { ScheduleRow } from '../../client/schedules';
import { SA_KEYS } from '../../workflows/messages';
import type { SweepReport } from '../../domain/report';
import { argus, cliEnv, run, type Ran } from './spawn';
import { SK } from '../support/fake-secrets';

const KEY_ENV = 'ARGUS_TEST_SCHEDULE_KEY';

let env: NodeJS.ProcessEnv;
let fp: FakeProvider;

const w = useArgusWorker('tq-schedules', { ...process.env, [KEY_ENV]: `${SK}test-not-a-key` });

beforeAll(async () => {
  fp = await startFakeProvider({ port: 0 });
  env = cliEnv(w.tw.taskQueue);
});

afterAll(async () => {
  await fp?.close();
});

const json = <T>(r: Ran): T => JSON.parse(r.stdout) as T;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectExit(r: Ran, code: number): void {
  expect({ code: r.code, stderr: r.code === code ? '' : r.stderr }).toEqual({ code, stderr: '' });
}

/** `schedule list --json` until `check` holds (the schedule list is eventually consistent). */
async function listUntil(check: (rows: ScheduleRow[]) => boolean, timeoutMs = 20_000): Promise<ScheduleRow[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await argus(['schedule', 'list', '--json'], env);
    expectExit(r, EXIT.ok);
    const rows = json<ScheduleRow[]>(r);
    if (check(rows)) return rows;
    if (Date.now() > until) throw new Error(`schedule list never matched: ${r.stdout}`);
    await sleep(500);
  }
}

/** Trigger through the CLI, wait for the run it started; return its id and report. */
async function trigger(scheduleId: string): Promise<{ workflowId: string; report: SweepReport }> {
  const r = await argus(['schedule', 'trigger', scheduleId, '--json'], env);
  expectExit(r, EXIT.ok);
  const { workflowId } = json<{ workflowId: string | null }>(r);
  expect(workflowId).toEqual(expect.any(String));
  const report = (await w.client.workflow.getHandle(workflowId!).result()) as SweepReport;
  return { workflowId: workflowId!, report };
}

/** A small catalog: the first `n` demo entities. */
function smallCatalog(name: string, n = 8): string {
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'copies', name), `${name}.json`);
  const c = readCatalog(file);
  c.entities = c.entities.slice(0, n);
  writeCatalog(file, c);
  return file;
}

test('create (paused, every 1h), list, trigger a sweep that completes, pause, unpause, delete', async () => {
  const id = uniqueId('e2e-mechanical');
  const file = smallCatalog('sched-mech', 12);
  const created = await argus(
    ['schedule', 'create', '--id', id, '--catalog', file, '--every', '1h', '--paused', '--note', 'e2e: paused'],
    env,
  );
  expectExit(created, EXIT.ok);
  expect(created.stdout).toContain(`Created schedule ${id}: every 1h, overlap skip, paused.`);

  const again = await argus(['schedule', 'create', '--id', id, '--catalog', file, '--every', '1h'], env);
  expect(again.code).toBe(EXIT.usage);
  expect(again.stderr).toContain(`schedule ${id} already exists`);

  const rows = await listUntil((rs) => rs.some((r) => r.scheduleId === id));
  expect(rows.find((r) => r.scheduleId === id)).toMatchObject({
    spec: 'every 1h',
    paused: true,
    note: 'e2e: paused',
    recent: [],
  });

  // A paused schedule still runs when triggered.
  const { workflowId, report } = await trigger(id);
  expect(workflowId).toMatch(/^sweep\/sched-mech\/scheduled-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  expect(report).toMatchObject({ sweepId: workflowId, partial: false, mode: 'mechanical' });
  expect(report.entities.processed).toBe(12);
  const d = await w.client.workflow.getHandle(workflowId).describe();
  expect(d.status.name).toBe('COMPLETED');
  expect(d.taskQueue).toBe(w.tw.taskQueue);
  expect(d.typedSearchAttributes.get(SA_KEYS.mode)).toBe('mechanical');
  expect(d.typedSearchAttributes.get(SA_KEYS.partial)).toBe(false);
  expect(await d.staticSummary()).toBe('ARGUS sweep of sched-mech (mechanical review)');

  const table = await argus(['schedule', 'list'], env);
  expectExit(table, EXIT.ok);
  expect(table.stdout).toMatch(new RegExp(`${id}\\s+every 1h\\s+paused \\(e2e: paused\\)`));
  expect(table.stdout).toContain(workflowId);

  expectExit(await argus(['schedule', 'unpause', id, '--note', 'go'], env), EXIT.ok);
  expect((await w.client.schedule.getHandle(id).describe()).state.paused).toBe(false);
  await listUntil((rs) => rs.some((r) => r.scheduleId === id && !r.paused && r.nextRun !== undefined));
  expectExit(await argus(['schedule', 'pause', id, '--note', 'stop'], env), EXIT.ok);
  const paused = await w.client.schedule.getHandle(id).describe();
  expect(paused.state).toMatchObject({ paused: true, note: 'stop' });

  expectExit(await argus(['schedule', 'delete', id], env), EXIT.ok);
  await expect(w.client.schedule.getHandle(id).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  await listUntil((rs) => !rs.some((r) => r.scheduleId === id));
  const gone = await argus(['schedule', 'trigger', id], env);
  expect(gone.code).toBe(EXIT.failed);
  expect(gone.stderr).toContain(`no schedule ${id}`);
});

test('two triggered runs have their own ids and their own breaker: neither inherits the other retired endpoint', async () => {
  const id = uniqueId('e2e-model');
  const inputFile = path.join(w.tw.stateDir, 'copies', 'sched-model-input.json');
  writeFileSync(
    inputFile,
    JSON.stringify({
      catalog: { kind: 'file', path: smallCatalog('sched-model') },
      review: 'model',
      agentBackend: 'rules',
      // Two answers, then "tokens per day" spent: the run retires the endpoint and trips its breaker.
      endpoints: [{ id: 'a', baseUrl: fp.baseUrl('daily-quota-2'), model: 'fake-model', apiKeyEnv: KEY_ENV }],
      // One call per entity, so the two answers run out within the run (batched, two calls would do it all).
      modelBatch: { entities: 1 },
    }),
  );
  const created = await argus(
    ['schedule', 'create', '--id', id, '--input-file', inputFile, '--every', '1h', '--paused'],
    env,
  );
  expectExit(created, EXIT.ok);

  fp.reset();
  const first = await trigger(id);
  const answeredFirst = fp.stats()['/s/daily-quota-2']?.answered;
  // Runs are named by the second they were scheduled for.
  await sleep(1100);
  fp.reset(); // the provider's daily quota resets "overnight"
  const second = await trigger(id);
  const answeredSecond = fp.stats()['/s/daily-quota-2']?.answered;

  expect(first.workflowId).not.toBe(second.workflowId);
  for (const run of [first, second]) {
    expect(run.workflowId).toMatch(/^sweep\/sched-model\/scheduled-/);
    const d = await w.client.workflow.getHandle(run.workflowId).describe();
    expect(d.status.name).toBe('COMPLETED');
    expect(d.typedSearchAttributes.get(SA_KEYS.mode)).toBe('model');
    // Each run retired the endpoint itself, from its own calls, within its own lifetime.
    expect(run.report.endpoints.retired.map((e) => e.endpointId)).toEqual(['a']);
    for (const e of run.report.endpoints.retired) {
      expect(e.retiredAt >= run.report.startedAt).toBe(true);
      expect(e.retiredAt <= run.report.finishedAt).toBe(true);
    }
  }
  // The second run called the endpoint again rather than starting with it retired.
  expect(answeredFirst).toBe(2);
  expect(answeredSecond).toBe(2);
  expect(second.report.proposals.some((p) => p.reviewer === 'model:a')).toBe(true);
  expect(second.report.endpoints.retired[0]!.retiredAt > first.report.finishedAt).toBe(true);

  expectExit(await argus(['schedule', 'delete', id], env), EXIT.ok);
});

/** What makes two schedules the same, leaving out ids and times. */
function essence(d: ScheduleDescription) {
  const a = d.action;
  return {
    // An unset phase and "0s" are the same phase.
    intervals: d.spec.intervals?.map((i) => ({ every: i.every, offset: i.offset ?? 0 })),
    calendars: d.spec.calendars ?? [],
    overlap: d.policies.overlap,
    paused: d.state.paused,
    note: d.state.note,
    memo: d.memo,
    action: {
      type: a.type,
      workflowType: a.workflowType,
      workflowId: a.workflowId,
      taskQueue: a.taskQueue,
      args: a.args,
      staticSummary: a.staticSummary,
      staticDetails: a.staticDetails,
      searchAttributes: [SA_KEYS.catalog, SA_KEYS.mode, SA_KEYS.partial].map((k) =>
        (a.typedSearchAttributes as TypedSearchAttributes | undefined)?.get(k),
      ),
    },
  };
}

test('--print-temporal-command prints a `temporal schedule create` that makes the same schedule', async () => {
  const viaArgus = uniqueId('e2e-argus');
  const viaTemporal = uniqueId('e2e-temporal');
  const file = smallCatalog("it's quoted");
  const common = ['--catalog', file, '--every', '90m', '--overlap', 'buffer-one', '--paused', '--note', "owner's call"];

  const printed = await argus(['schedule', 'create', '--id', viaTemporal, ...common, '--print-temporal-command'], env);
  expectExit(printed, EXIT.ok);
  expect(printed.stdout).toMatch(/^temporal schedule create \\\n/);
  expect(printed.stdout).toContain('--interval 1h30m');
  expect(printed.stdout).toContain('--overlap-policy BufferOne');
  // Printing creates nothing.
  await expect(w.client.schedule.getHandle(viaTemporal).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);

  const shell = await run('bash', ['-c', printed.stdout], {
    env: {
      ...process.env,
      PATH: `${path.dirname(temporalCliPath())}:${process.env.PATH ?? ''}`,
      TEMPORAL_ADDRESS: testAddress(),
    },
  });
  expectExit(shell, 0);
  expectExit(await argus(['schedule', 'create', '--id', viaArgus, ...common], env), EXIT.ok);

  const [a, t] = await Promise.all([
    w.client.schedule.getHandle(viaArgus).describe(),
    w.client.schedule.getHandle(viaTemporal).describe(),
  ]);
  expect(essence(t)).toEqual(essence(a));
  expect(essence(a)).toMatchObject({
    intervals: [{ every: 90 * 60 * 1000, offset: 0 }],
    overlap: 'BUFFER_ONE',
    paused: true,
    note: "owner's call",
    memo: { argus: { spec: 'every 1h30m' } },
    action: {
      workflowType: 'sweepWorkflow',
      taskQueue: w.tw.taskQueue,
      searchAttributes: [expect.any(String), 'mechanical', false],
    },
  });

  await Promise.all([viaArgus, viaTemporal].map((s) => w.client.schedule.getHandle(s).delete()));
});
