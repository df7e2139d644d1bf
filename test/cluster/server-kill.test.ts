// The cluster's Temporal server killed with SIGKILL mid-sweep and started again by `npm run cluster -- up` on the
// same PostgreSQL databases: the sweep completes as an uninterrupted one on the dev server does (the dev-server
// version of this test is in test/workflows/faults.test.ts), and the workers ride it out without a restart.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker } from '../support/argus-worker';
import { generateCatalog } from '../../scripts/generate-catalog';
import { startSweep, resultOf } from '../../client/sweeps';
import { TASK_QUEUE } from '../../domain/ids';
import type { SweepReport } from '../../domain/report';
import { clusterState, connectCluster, fileAudit, npmCluster, pgAudit, writtenIdsOf } from './support';

jest.setTimeout(420_000);

const describeCluster = process.env.ARGUS_CLUSTER_TEST_RUN ? describe : describe.skip;

describeCluster('the cluster Temporal server killed mid-sweep', () => {
  const w = useArgusWorker('tq-cluster-kill-control');
  let work: string;
  let original: string;
  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), 'argus-cluster-kill-'));
    original = path.join(work, 'original.json');
    // As in faults.test.ts: four pages of 100 entities, two in flight, people's descriptions so every page writes.
    const generated = generateCatalog({ entities: 400, seed: 7, name: 'cluster-kill' });
    for (const e of generated.entities) for (const c of e.columns) if (c.description) c.description_source = 'human';
    writeFileSync(original, JSON.stringify(generated, null, 2));
  });
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });
  const input = (file: string) => ({ catalog: { kind: 'file' as const, path: file }, pageSize: 100, concurrency: 2 });
  const copyOf = (name: string) => {
    mkdirSync(path.join(work, name), { recursive: true });
    const file = path.join(work, name, 'catalog.json');
    copyFileSync(original, file);
    return file;
  };
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  test('restarted by up on its PostgreSQL data, the sweep completes identical to an uninterrupted one', async () => {
    const controlFile = copyOf('control');
    const control = await resultOf(
      await startSweep(w.client, input(controlFile), {
        taskQueue: w.tw.taskQueue,
        workflowId: uniqueId('sweep/cluster-kill-control'),
      }),
    );
    expect(control.partial).toBe(false);
    expect(control.written).toBeGreaterThan(400);

    const file = copyOf('cluster');
    const before = clusterState();
    const workers = Object.values(before.pids.workers);
    const server = before.pids.temporal as number;
    let { connection, client } = await connectCluster();
    const workflowId = uniqueId('sweep/cluster-kill');
    await startSweep(client, input(file), { taskQueue: TASK_QUEUE, workflowId });
    await connection.close();

    // Kill once the first write has reached the state store: some pages written, others still to come.
    let writtenAtKill = 0;
    for (const until = Date.now() + 120_000; writtenAtKill === 0; await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > until) throw new Error('no write in the cluster state store within 120 s');
      writtenAtKill = writtenIdsOf(await pgAudit(workflowId)).length;
    }
    process.kill(-server, 'SIGKILL');
    const killedAt = Date.now();
    while (alive(server)) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 3000));

    const up = await npmCluster('up', '--workers', '2');
    expect(up.code).toBe(0);
    const after = clusterState();
    expect(after.pids.temporal).not.toBe(server);
    expect(after.ports.frontend).toBe(before.ports.frontend);
    expect(Object.values(after.pids.workers)).toEqual(workers);
    expect(workers.every(alive)).toBe(true);

    ({ connection, client } = await connectCluster());
    const report = (await client.workflow.getHandle(workflowId).result()) as SweepReport;
    await connection.close();
    process.stderr.write(
      `cluster: server kill -9 + up → complete sweep ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill; ` +
        `${writtenAtKill} written before the kill, ${report.written} in all (control ${control.written})\n`,
    );
    expect(writtenAtKill).toBeLessThan(report.written);
    expect(report.partial).toBe(false);
    expect(report.failures).toEqual([]);
    expect(report.written).toBe(control.written);
    expect(report.outcomes).toEqual(control.outcomes);
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(controlFile, 'utf8'));
    const audit = await pgAudit(workflowId);
    expect(writtenIdsOf(audit)).toEqual(writtenIdsOf(fileAudit(w.tw.stateDir, control.sweepId)));
    const decided = (entries: typeof audit) =>
      new Set(entries.flatMap((e) => (e.type === 'decision' ? [e.proposalId] : []))).size;
    expect(decided(audit)).toBe(decided(fileAudit(w.tw.stateDir, control.sweepId)));
  });
});
