// The docker-compose.yml topology run from binaries (`npm run cluster`), against the dev server every other workflow
// test uses: the status line scripts parse, a sweep of the demo catalog that ends as it does on the dev server, a
// partial sweep found by the temporal CLI in the PostgreSQL visibility store, and a `down` that keeps the data for
// the next `up`.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker, readCatalog, writeCatalog, DEMO_CATALOG } from '../support/argus-worker';
import { startSweep, resultOf } from '../../client/sweeps';
import { TASK_QUEUE } from '../../domain/ids';
import type { SweepReport } from '../../domain/report';
import type { SweepInput } from '../../domain/sweep';
import {
  clusterAddress,
  clusterState,
  connectCluster,
  fileAudit,
  npmCluster,
  pgAudit,
  query,
  stateSchema,
  temporal,
  topology,
  writtenIdsOf,
} from './support';

jest.setTimeout(300_000);

const describeCluster = process.env.ARGUS_CLUSTER_TEST_RUN ? describe : describe.skip;

describeCluster('the docker-compose.yml topology from binaries', () => {
  const w = useArgusWorker('tq-cluster-control');
  let work: string;
  let cluster: { connection: Connection; client: Client };

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'argus-cluster-'));
    cluster = await connectCluster();
  });
  afterAll(async () => {
    await cluster?.connection.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** A copy of the demo catalog under a name of its own (the catalog's memory across sweeps is per file). */
  function demoCopy(name: string, edit?: (c: { entities: Record<string, unknown>[] }) => void): string {
    const dir = path.join(work, name);
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'shop-warehouse.json');
    copyFileSync(DEMO_CATALOG, file);
    if (edit) {
      const c = readCatalog(file) as unknown as { entities: Record<string, unknown>[] };
      edit(c);
      writeCatalog(file, c);
    }
    return file;
  }

  async function sweepOnCluster(input: SweepInput, prefix: string): Promise<SweepReport> {
    const handle = await startSweep(cluster.client, input, { taskQueue: TASK_QUEUE, workflowId: uniqueId(prefix) });
    return resultOf(handle);
  }

  let complete: SweepReport | undefined;

  test('status --json prints the contract line, and what it says is what runs', async () => {
    const r = await npmCluster('status', '--json');
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const port = clusterState().ports.frontend;
    expect(r.stdout).toBe(
      `{"address": "127.0.0.1:${port}", "namespace": "${topology.namespace}", "persistence": "postgres12", ` +
        `"workers": 2, "serverVersion": "1.32.0"}\n`,
    );
    // The server on that address is the version the line claims, and two workers poll ARGUS's task queue there.
    const system = temporal('operator', 'cluster', 'system', '-o', 'json');
    expect(system.code).toBe(0);
    expect((JSON.parse(system.stdout) as { serverVersion: string }).serverVersion).toBe('1.32.0');
    const queue = temporal('task-queue', 'describe', '--task-queue', TASK_QUEUE, '-o', 'json');
    expect(queue.code).toBe(0);
    const pollers = (JSON.parse(queue.stdout) as { pollers: { identity: string }[] }).pollers;
    // An SDK worker's identity is <pid>@<host>; the pid is the node process scripts/run-ts.js started for a worker.
    // The server lists every identity that polled in the last minutes, so the workers an earlier test file stopped
    // (a deploy, a fleet of three) are still there: what runs is the pollers whose process is alive.
    const parentOf = (pid: number): number[] => {
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        return []; // gone: a stopped worker's poller
      }
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])];
    };
    const pollingParents = [...new Set(pollers.map((p) => Number(p.identity.split('@')[0])))]
      .flatMap(parentOf)
      .sort((a, b) => a - b);
    expect(pollingParents).toEqual(Object.values(clusterState().pids.workers).sort((a, b) => a - b));
  });

  test('a sweep of the demo catalog ends with the same catalog and written count as on the dev server', async () => {
    const control = demoCopy('control');
    const onCluster = demoCopy('cluster');
    const devHandle = await startSweep(
      w.client,
      { catalog: { kind: 'file', path: control } },
      { taskQueue: w.tw.taskQueue, workflowId: uniqueId('sweep/cluster-control') },
    );
    const [dev, clustered] = await Promise.all([
      resultOf(devHandle),
      sweepOnCluster({ catalog: { kind: 'file', path: onCluster } }, 'sweep/cluster-demo'),
    ]);
    complete = clustered;
    expect(dev.partial).toBe(false);
    expect(dev.written).toBeGreaterThan(100);
    expect(clustered.partial).toBe(false);
    expect(clustered.failures).toEqual([]);
    expect(clustered.written).toBe(dev.written);
    expect(clustered.outcomes).toEqual(dev.outcomes);
    expect(readFileSync(onCluster, 'utf8')).toBe(readFileSync(control, 'utf8'));
    // The cluster's workers kept the sweep in PostgreSQL: the same writes in its audit as in the dev worker's files.
    expect(writtenIdsOf(await pgAudit(clustered.sweepId))).toEqual(writtenIdsOf(fileAudit(w.tw.stateDir, dev.sweepId)));
    const reports = await query<{ n: string }>(
      'state',
      `select count(*) as n from ${stateSchema()}.reports where starts_with(ledger_key, $1)`,
      [`${clustered.sweepId}@`],
    );
    expect(reports[0]?.n).toBe('1');
  });

  test('a partial sweep is found by the temporal CLI query ArgusPartial = true, in the PostgreSQL visibility store', async () => {
    expect(complete).toBeDefined();
    const partial = await sweepOnCluster(
      {
        catalog: {
          kind: 'file',
          path: demoCopy('partial', (c) =>
            c.entities.push({ id: 'raw.broken', database: 'shop', name: 'broken', kind: 'table', columns: [] }),
          ),
        },
      },
      'sweep/cluster-partial',
    );
    expect(partial.partial).toBe(true);

    // Visibility is eventually consistent: ask until the run is listed.
    let listed: string[] = [];
    for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 500))) {
      const r = temporal('workflow', 'list', '--query', 'ArgusPartial = true', '-o', 'json');
      expect(r.code).toBe(0);
      listed = (JSON.parse(r.stdout || '[]') as { execution: { workflowId: string } }[]).map(
        (e) => e.execution.workflowId,
      );
      if (listed.includes(partial.sweepId)) break;
    }
    expect(listed).toContain(partial.sweepId);
    expect(listed).not.toContain(complete?.sweepId);

    // The rows behind that answer are in PostgreSQL: the one Bool attribute the two sweeps set (ArgusPartial) is
    // true on the partial run and false on the complete one.
    const rows = await query<{ workflow_id: string; search_attributes: Record<string, unknown> }>(
      'visibility',
      'select workflow_id, search_attributes from executions_visibility where workflow_id = any($1)',
      [[partial.sweepId, complete?.sweepId]],
    );
    const bools = (id: string | undefined) => {
      const sa = rows.find((r) => r.workflow_id === id)?.search_attributes ?? {};
      return Object.entries(sa).filter(([k]) => /^Bool\d+$/.test(k));
    };
    expect(bools(partial.sweepId).map(([, v]) => v)).toEqual([true]);
    expect(bools(complete?.sweepId).map(([, v]) => v)).toEqual([false]);
  });

  test('down stops everything and keeps the data; the next up reuses it', async () => {
    expect(complete).toBeDefined();
    const before = clusterState();
    const pids = [before.pids.postgres, before.pids.temporal, ...Object.values(before.pids.workers)] as number[];
    expect(pids).toHaveLength(4);
    await cluster.connection.close();

    const down = await npmCluster('down');
    expect(down.code).toBe(0);
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
    const stopped = await npmCluster('status', '--json');
    expect({ code: stopped.code, stdout: stopped.stdout }).toEqual({ code: 1, stdout: '' });

    const up = await npmCluster('up', '--workers', '2');
    expect(up.code).toBe(0);
    expect(up.stderr).not.toMatch(/initialised PostgreSQL|building Temporal/);
    expect(clusterAddress()).toBe(`127.0.0.1:${before.ports.frontend}`);
    cluster = await connectCluster();
    const described = await cluster.client.workflow.getHandle(complete!.sweepId).describe();
    expect(described.status.name).toBe('COMPLETED');
    expect(writtenIdsOf(await pgAudit(complete!.sweepId))).toHaveLength(complete!.written);
  });
});
