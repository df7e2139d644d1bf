// A Temporal schedule on the cluster, made as users make one (`argus schedule create`), firing every few seconds
// with the overlap policy the product defaults to (skip): it fires twice on a generated catalog, each run
// completes, the second writes nothing (the memory of the first, in the shared PostgreSQL state store, says every
// entity is unchanged and decided), and each write of the schedule's runs is audited once. A sweep of the same
// catalog on the dev server is the control the catalog ends up equal to.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client, Connection, ScheduleHandle } from '@temporalio/client';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker } from '../support/argus-worker';
import { startSweep, resultOf } from '../../client/sweeps';
import type { SweepReport } from '../../domain/report';
import {
  argusCli,
  connectCluster,
  fileAudit,
  writeGeneratedCatalog,
  writeLinesPerProposal,
  writtenIdsOf,
} from './support';

jest.setTimeout(300_000);

const describeCluster = process.env.ARGUS_CLUSTER_TEST_RUN ? describe : describe.skip;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeCluster('a sweep schedule on the cluster', () => {
  const w = useArgusWorker('tq-cluster-schedule-control');
  let work: string;
  let cluster: { connection: Connection; client: Client };
  let schedule: ScheduleHandle | undefined;

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'argus-cluster-schedule-'));
    cluster = await connectCluster();
  });
  afterAll(async () => {
    // A schedule left behind would keep sweeping while the next test file runs.
    await schedule?.delete().catch(() => undefined);
    await cluster?.connection.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** The workflow ids of the runs the schedule has started so far, oldest first. */
  const runsOf = async (h: ScheduleHandle) =>
    (await h.describe()).info.recentActions.map((a) => a.action.workflow.workflowId);

  test('fires twice: both runs complete, the second writes nothing, each write audited once', async () => {
    const original = writeGeneratedCatalog(path.join(work, 'original.json'), {
      entities: 600,
      seed: 11,
      name: 'cluster-schedule',
    });
    const controlFile = path.join(work, 'control.json');
    copyFileSync(original, controlFile);
    const file = path.join(work, 'scheduled.json');
    copyFileSync(original, file);

    const control = await resultOf(
      await startSweep(
        w.client,
        { catalog: { kind: 'file', path: controlFile } },
        { taskQueue: w.tw.taskQueue, workflowId: uniqueId('sweep/cluster-schedule-control') },
      ),
    );
    expect(control.partial).toBe(false);
    expect(control.written).toBeGreaterThan(0);

    // Every 5 s with the default overlap policy (skip): while a run goes on, the ticks that fall due are skipped, so
    // the second run starts at the first tick after the first one ends.
    const scheduleId = uniqueId('cluster-schedule');
    const created = await argusCli(
      'schedule',
      'create',
      '--id',
      scheduleId,
      '--catalog',
      file,
      '--every',
      '5s',
      '--json',
    );
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    const { workflowIdPrefix } = JSON.parse(created.stdout) as { workflowIdPrefix: string };
    schedule = cluster.client.schedule.getHandle(scheduleId);

    let runs: string[] = [];
    for (const until = Date.now() + 240_000; runs.length < 2; await sleep(250)) {
      if (Date.now() > until) throw new Error(`the schedule started ${runs.length} run(s) in 240 s, not 2`);
      runs = await runsOf(schedule);
    }
    // Paused at once, through the SDK: the CLI would take seconds to start, in which a short second run could end
    // and a third tick fire. A third run that still got in is checked like the second.
    await schedule.pause('the test saw two runs');
    runs = await runsOf(schedule);
    expect(runs.every((id) => id.startsWith(`${workflowIdPrefix}-`))).toBe(true);

    const reports: SweepReport[] = [];
    for (const id of runs) reports.push((await cluster.client.workflow.getHandle(id).result()) as SweepReport);
    const [first, second, ...later] = reports as [SweepReport, SweepReport, ...SweepReport[]];
    process.stderr.write(
      `cluster schedule: ${runs.length} runs; written ${reports.map((r) => r.written).join(', ')} ` +
        `(control ${control.written}); the second judged ${second.incremental?.judged} and carried over ` +
        `${second.incremental?.carriedOver} of the first's ${first.entities.requested} entities\n`,
    );

    for (const r of reports) {
      expect(r.partial).toBe(false);
      expect(r.failures).toEqual([]);
    }
    // The first run is the control's sweep, on the cluster's workers and state store.
    expect(first.written).toBe(control.written);
    expect(first.outcomes).toEqual(control.outcomes);
    // The second remembers the first: nothing new to judge, nothing written, the catalog as one sweep leaves it.
    for (const r of [second, ...later]) {
      expect(r.written).toBe(0);
      expect(r.incremental?.incremental).toBe(true);
      expect(r.incremental?.new).toBe(0);
      expect(r.incremental?.carriedOver).toBeGreaterThan(0);
    }
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(controlFile, 'utf8'));

    // Skip means skip: no run started before the one before it had closed.
    const spans = await Promise.all(runs.map((id) => cluster.client.workflow.getHandle(id).describe()));
    for (let i = 1; i < spans.length; i++) {
      expect(spans[i - 1]!.status.name).toBe('COMPLETED');
      expect(spans[i]!.startTime.getTime()).toBeGreaterThanOrEqual(spans[i - 1]!.closeTime!.getTime());
    }

    // The shared audit trail: the first run's writes are the control's, each with one write line; the later runs
    // have none, and no proposal of the schedule is written by two runs.
    const lines = await Promise.all(runs.map((id) => writeLinesPerProposal(id)));
    expect([...lines[0]!.keys()].sort()).toEqual(writtenIdsOf(fileAudit(w.tw.stateDir, control.sweepId)));
    expect([...lines[0]!.values()].every((n) => n === 1)).toBe(true);
    for (const l of lines.slice(1)) expect(l.size).toBe(0);
  });
});
