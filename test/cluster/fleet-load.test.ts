// Twenty sweeps at once on three workers of the cluster, each of a generated catalog of its own (1,000 to 3,000
// entities, a seed each): all complete, no write is lost or made twice (each proposal written has one write line,
// each sweep's lines are its report's `written`, and the entities changed in each catalog are the ones its lines
// name), and the counters the three workers serve at /metrics grew by the sums of the twenty reports.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { uniqueId } from '../support/temporal-env';
import { startSweep, resultOf } from '../../client/sweeps';
import { TASK_QUEUE } from '../../domain/ids';
import type { SweepReport } from '../../domain/report';
import {
  changedEntities,
  clusterState,
  connectCluster,
  npmCluster,
  scrapeWorkers,
  sumOf,
  writeGeneratedCatalog,
  writeLinesPerProposal,
  writtenEntities,
  type Sample,
} from './support';

jest.setTimeout(600_000);

const describeCluster = process.env.ARGUS_CLUSTER_TEST_RUN ? describe : describe.skip;

const SWEEPS = 20;
/** 1,000 to 3,000 entities, spread evenly over the twenty sweeps. */
const sizeOf = (i: number) => 1000 + Math.round((2000 * i) / (SWEEPS - 1));

/** The counters compared with the reports, each as the reports count it. */
const COUNTERS: { what: string; metric: (s: Sample[]) => number; report: (r: SweepReport) => number }[] = [
  {
    what: 'repairs written',
    metric: (s) => sumOf(s, 'argus_writes_total', { result: 'written' }),
    report: (r) => r.written,
  },
  {
    what: 'repairs already applied',
    metric: (s) => sumOf(s, 'argus_writes_total', { result: 'already' }),
    report: (r) => r.alreadyApplied,
  },
  {
    what: "repairs that kept a person's text",
    metric: (s) => sumOf(s, 'argus_writes_total', { result: 'kept_human' }),
    report: (r) => r.keptHumanText,
  },
  {
    what: 'writes failed',
    metric: (s) => sumOf(s, 'argus_writes_total', { result: 'failed' }),
    report: (r) => r.writesFailed,
  },
  {
    // Each pass counts the entities it loads: the first pass's and the later passes' re-judged ones.
    what: 'entities judged',
    metric: (s) => sumOf(s, 'argus_entities_judged_total', { catalog_kind: 'file' }),
    report: (r) => (r.incremental?.judged ?? 0) + (r.incremental?.rejudged ?? 0),
  },
  {
    what: 'proposals',
    metric: (s) => sumOf(s, 'argus_proposals_total'),
    report: (r) => Object.values(r.byKind).reduce((n, k) => n + (k?.proposed ?? 0), 0),
  },
  {
    what: 'approved verdicts',
    metric: (s) => sumOf(s, 'argus_verdicts_total', { outcome: 'approved' }),
    report: (r) => r.outcomes.approved,
  },
];

describeCluster('twenty sweeps at once on three workers of the cluster', () => {
  let work: string;
  let cluster: { connection: Connection; client: Client };

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'argus-cluster-fleet-'));
    const up = await npmCluster('up', '--workers', '3');
    expect(up.code).toBe(0);
    cluster = await connectCluster();
  });
  afterAll(async () => {
    await cluster?.connection.close();
    // The other test files expect the cluster's two workers.
    await npmCluster('up', '--workers', '2');
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('all complete, each write made and audited once, the metrics are the sums of the reports', async () => {
    const catalogs = Array.from({ length: SWEEPS }, (_, i) => {
      const name = `cluster-fleet-${i + 1}`;
      const original = writeGeneratedCatalog(path.join(work, name, 'original.json'), {
        entities: sizeOf(i),
        seed: 1000 + i,
        name,
      });
      const file = path.join(work, name, 'catalog.json');
      copyFileSync(original, file);
      return { name, original, file };
    });

    const workers = clusterState().pids.workers;
    expect(Object.keys(workers)).toHaveLength(3);
    // Counters live as long as their worker: what each serves before is subtracted from what it serves after.
    const before = await scrapeWorkers();

    const started = Date.now();
    const handles = await Promise.all(
      catalogs.map((c) =>
        startSweep(
          cluster.client,
          { catalog: { kind: 'file', path: c.file } },
          { taskQueue: TASK_QUEUE, workflowId: uniqueId(`sweep/${c.name}`) },
        ),
      ),
    );
    const reports = await Promise.all(handles.map((h) => resultOf(h)));
    const seconds = (Date.now() - started) / 1000;
    const entities = reports.reduce((n, r) => n + r.entities.requested, 0);
    const written = reports.reduce((n, r) => n + r.written, 0);

    const after = await scrapeWorkers();
    // The same three processes served both scrapes: no counter was reset by a restart in between.
    expect(Object.values(clusterState().pids.workers).sort()).toEqual(Object.values(workers).sort());
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    const grew = (f: (s: Sample[]) => number) =>
      [...after.entries()].reduce((n, [pid, s]) => n + f(s) - f(before.get(pid) ?? []), 0);
    const perWorker = [...after.entries()].map(
      ([pid, s]) =>
        sumOf(s, 'argus_entities_judged_total') - sumOf(before.get(pid) ?? [], 'argus_entities_judged_total'),
    );
    process.stderr.write(
      `cluster fleet: ${SWEEPS} sweeps, ${entities} entities, ${written} written in ${seconds.toFixed(1)} s on 3 workers ` +
        `(entities judged per worker: ${perWorker.join(', ')})\n`,
    );

    for (const [i, r] of reports.entries()) {
      expect({ sweep: catalogs[i]!.name, partial: r.partial, failures: r.failures }).toEqual({
        sweep: catalogs[i]!.name,
        partial: false,
        failures: [],
      });
      expect(r.entities.requested).toBe(sizeOf(i));
      expect(r.written).toBeGreaterThan(0);
    }

    // Nothing lost, nothing twice: per sweep, one write line per proposal written, as many as the report says, and
    // the entities whose records changed in its catalog are exactly those its write lines name.
    for (const [i, r] of reports.entries()) {
      const c = catalogs[i]!;
      const lines = await writeLinesPerProposal(r.sweepId);
      expect({ sweep: c.name, proposals: lines.size, twice: [...lines.values()].filter((n) => n !== 1) }).toEqual({
        sweep: c.name,
        proposals: r.written,
        twice: [],
      });
      expect(changedEntities(c.original, c.file)).toEqual(await writtenEntities(r.sweepId));
    }

    // The three workers' counters: the sums of the twenty reports.
    for (const c of COUNTERS)
      expect({ counter: c.what, value: grew(c.metric) }).toEqual({
        counter: c.what,
        value: reports.reduce((n, r) => n + c.report(r), 0),
      });
    expect(grew(COUNTERS[0]!.metric)).toBe(written);
    // And the load was the fleet's: each of the three judged some of it.
    expect(perWorker.filter((n) => n > 0)).toHaveLength(3);
  });
});
