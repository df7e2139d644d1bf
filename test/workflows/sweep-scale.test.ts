import * as path from 'node:path';
import { writeFileSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker } from '../support/argus-worker';
import { generateCatalog } from '../../scripts/generate-catalog';
import { sweepHistoryStats } from '../../client/history-stats';
import type { SweepReport } from '../../domain/report';

const w = useArgusWorker('tq-scale');

test('a generated catalog goes through children and continue-as-new; no execution nears 10,240 events', async () => {
  const entities = 900;
  const pageSize = 25;
  const pagesPerRun = 12;
  const dir = path.join(w.tw.stateDir, 'gen');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'generated.json');
  // People described a sixth of the columns: what the drafter inherits downstream (it writes nothing else here).
  const catalog = generateCatalog({ entities, seed: 7, name: 'generated' });
  for (const e of catalog.entities) for (const c of e.columns) if (c.description) c.description_source = 'human';
  writeFileSync(file, JSON.stringify(catalog));
  const id = uniqueId('sweep/generated');
  const handle = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: id,
    // One pass: the page count below is the first pass's (later passes add pages for what the writes changed).
    args: [{ catalog: { kind: 'file', path: file }, pageSize, pagesPerRun, concurrency: 4, maxPasses: 1 }],
  });
  const report = (await handle.result()) as SweepReport;
  const pages = Math.ceil(entities / pageSize);
  expect(report.entities.requested).toBe(entities);
  expect(report.executions).toBe(Math.ceil(pages / pagesPerRun));
  const stats = await sweepHistoryStats(w.client, id, handle.firstExecutionRunId, pages);
  expect(stats.sweepRuns.length).toBe(Math.ceil(pages / pagesPerRun));
  // Events per page in the parent are bounded, so a run of `pagesPerRun` pages stays far under the ceiling;
  // the bench checks the same at 10,000 entities with the default settings. A page in its three parts (lineage
  // flags, descriptions, PII tags: an agent, an Arbiter and a write each) takes 42-55 events: fewer when completions
  // arrive together in one workflow task, more when each gets its own (a server that hands tasks on at once, as
  // ours do since their transfer queue is read up to 200 times a second). At most 75, so the default 100 pages per
  // run stay under 7,500.
  expect(stats.maxHistoryEvents).toBeLessThan(10240);
  expect(stats.maxSweepEvents).toBeLessThan(pagesPerRun * 75);
  expect(stats.maxSweepEvents / pagesPerRun).toBeGreaterThan(20);
  // Nothing in the history grows with the catalog: page ids stay in the ledger, activities get counts.
  const history = await w.client.workflow.getHandle(id, handle.firstExecutionRunId).fetchHistory();
  const decode = (p: { data?: Uint8Array | null } | undefined) =>
    p?.data ? (JSON.parse(Buffer.from(p.data).toString('utf8')) as Record<string, unknown>) : {};
  let scheduled = 0;
  for (const e of history.events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a && ['runAgent', 'applyApprovedRepairs'].includes(a.activityType?.name ?? '')) {
      scheduled++;
      expect(decode(a.input?.payloads?.[0])).not.toHaveProperty('ids');
    }
    const done = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
    const r = decode(done ?? undefined);
    if ('count' in r) expect(r.ids).toEqual([]);
  }
  expect(scheduled).toBeGreaterThanOrEqual(pagesPerRun * 4);
  const proposed =
    report.byKind.description.proposed + report.byKind.pii_tag.proposed + report.byKind.lineage_flag.proposed;
  expect(report.outcomes.approved + report.outcomes.rejected + report.outcomes.not_reviewed).toBe(proposed);

  // The result carries the first 1,000 proposals; the report file carries every one, with the same figures
  // (its compact, spooled form for larger reports is tested in test/unit/report-spool.test.ts).
  expect(proposed).toBeGreaterThan(1000);
  expect(report.byKind.description.proposed).toBeGreaterThan(300);
  expect(report.proposals).toHaveLength(1000);
  expect(report.proposalsTruncated).toBe(proposed - 1000);
  const text = readFileSync(report.reportFile, 'utf8');
  const full = JSON.parse(text) as SweepReport;
  expect(full.proposals).toHaveLength(proposed);
  expect(full.proposalsTruncated).toBe(0);
  expect(full.proposals.slice(0, 1000)).toEqual(report.proposals);
  expect(new Set(full.proposals.map((p) => p.id)).size).toBe(proposed);
  expect(full.proposals.filter((p) => p.outcome === 'approved')).toHaveLength(report.outcomes.approved);
  expect(full.proposals.filter((p) => p.written)).toHaveLength(report.written);
  const { proposals: _a, proposalsTruncated: _b, ...fileFigures } = full;
  const { proposals: _c, proposalsTruncated: _d, ...resultFigures } = report;
  expect(fileFigures).toEqual(resultFigures);
  expect(readdirSync(path.dirname(report.reportFile)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
});
