// A deploy in the middle of a sweep: once the sweep's first pages are written, every worker of the cluster is
// stopped (`npm run cluster -- up --workers 0`: SIGTERM, as a deploy stops a service) and new ones are started
// (`up --workers 2`). The sweep completes on the new workers identical to an uninterrupted sweep of the same catalog
// on the dev server: the same catalog bytes, the same writes, each audited once.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker } from '../support/argus-worker';
import { startSweep, resultOf } from '../../client/sweeps';
import { TASK_QUEUE } from '../../domain/ids';
import type { SweepReport } from '../../domain/report';
import {
  activityWorkerPids,
  childrenOf,
  clusterState,
  connectCluster,
  fileAudit,
  npmCluster,
  writeGeneratedCatalog,
  writeLinesPerProposal,
  writtenIdsOf,
} from './support';

jest.setTimeout(600_000);

const describeCluster = process.env.ARGUS_CLUSTER_TEST_RUN ? describe : describe.skip;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describeCluster('a deploy mid-sweep: every worker of the cluster stopped, new ones started', () => {
  const w = useArgusWorker('tq-cluster-deploy-control');
  let work: string;
  let original: string;
  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), 'argus-cluster-deploy-'));
    original = writeGeneratedCatalog(path.join(work, 'original.json'), {
      entities: 3000,
      seed: 23,
      name: 'cluster-deploy',
    });
  });
  afterAll(async () => {
    // Whatever happened, the next test file finds the cluster's two workers.
    await npmCluster('up', '--workers', '2');
    if (work) rmSync(work, { recursive: true, force: true });
  });
  // Pages of 100, two in flight: thirty pages, so the deploy lands with most of them still to come.
  const input = (file: string) => ({ catalog: { kind: 'file' as const, path: file }, pageSize: 100, concurrency: 2 });
  const copyOf = (name: string) => {
    mkdirSync(path.join(work, name), { recursive: true });
    const file = path.join(work, name, 'catalog.json');
    copyFileSync(original, file);
    return file;
  };

  test('the sweep completes on the new workers identical to an uninterrupted one', async () => {
    const controlFile = copyOf('control');
    const control = await resultOf(
      await startSweep(w.client, input(controlFile), {
        taskQueue: w.tw.taskQueue,
        workflowId: uniqueId('sweep/cluster-deploy-control'),
      }),
    );
    expect(control.partial).toBe(false);
    expect(control.written).toBeGreaterThan(3000);

    const file = copyOf('cluster');
    const before = clusterState();
    const oldWorkers = Object.values(before.pids.workers);
    expect(oldWorkers).toHaveLength(2);
    // The processes that poll: a worker's pid is scripts/run-ts.js, whose child runs the worker.
    const oldPollers = new Set(oldWorkers.flatMap(childrenOf));
    const { connection, client } = await connectCluster();
    try {
      const workflowId = uniqueId('sweep/cluster-deploy');
      await startSweep(client, input(file), { taskQueue: TASK_QUEUE, workflowId });

      // Stop once the first write is in the state store: some pages written, most still to come.
      let writtenAtStop = 0;
      for (const until = Date.now() + 120_000; writtenAtStop === 0; await sleep(50)) {
        if (Date.now() > until) throw new Error('no write in the cluster state store within 120 s');
        writtenAtStop = (await writeLinesPerProposal(workflowId)).size;
      }
      const stop = await npmCluster('up', '--workers', '0');
      expect(stop.code).toBe(0);
      expect(oldWorkers.filter(alive)).toEqual([]);
      const stoppedAt = Date.now();
      // Nothing polls the queue now, so the sweep waits, neither done nor failed.
      const between = await client.workflow.getHandle(workflowId).describe();
      expect(between.status.name).toBe('RUNNING');
      const writtenBetween = (await writeLinesPerProposal(workflowId)).size;

      const start = await npmCluster('up', '--workers', '2');
      expect(start.code).toBe(0);
      const newWorkers = Object.values(clusterState().pids.workers);
      expect(newWorkers).toHaveLength(2);
      expect(newWorkers.filter((pid) => oldWorkers.includes(pid))).toEqual([]);
      const newPollers = new Set(newWorkers.flatMap(childrenOf));

      const report = (await client.workflow.getHandle(workflowId).result()) as SweepReport;
      process.stderr.write(
        `cluster deploy: ${writtenAtStop} written when the stop began, ${writtenBetween} with no worker running, ` +
          `${report.written} in all (control ${control.written}); complete ` +
          `${((Date.now() - stoppedAt) / 1000).toFixed(1)} s after the old workers were gone\n`,
      );
      expect(writtenBetween).toBeLessThan(report.written);
      expect(report.partial).toBe(false);
      expect(report.failures).toEqual([]);
      expect(report.written).toBe(control.written);
      expect(report.outcomes).toEqual(control.outcomes);
      expect(readFileSync(file, 'utf8')).toBe(readFileSync(controlFile, 'utf8'));

      // Every write audited once, and the writes are the control's.
      const lines = await writeLinesPerProposal(workflowId);
      expect([...lines.keys()].sort()).toEqual(writtenIdsOf(fileAudit(w.tw.stateDir, control.sweepId)));
      expect([...lines.values()].every((n) => n === 1)).toBe(true);

      // Both generations did the sweep's work: activities were started by an old worker and by a new one, and by
      // no other process.
      const ran = await activityWorkerPids(client, workflowId);
      expect([...ran].some((pid) => oldPollers.has(pid))).toBe(true);
      expect([...ran].some((pid) => newPollers.has(pid))).toBe(true);
      expect([...ran].filter((pid) => !oldPollers.has(pid) && !newPollers.has(pid))).toEqual([]);
    } finally {
      await connection.close();
    }
  });
});
