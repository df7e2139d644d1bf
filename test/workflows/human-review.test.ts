import * as path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { uniqueId } from '../support/temporal-env';
import { useArgusWorker, copyCatalog, readCatalog, writeCatalog, DEMO_CATALOG } from '../support/argus-worker';
import type { SweepReport } from '../../domain/report';
import type { PendingReview, ReviewUpdateResult } from '../../workflows/messages';

const w = useArgusWorker('tq-human');

function smallCatalog(name: string, n = 3): string {
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'human', name));
  const c = readCatalog(file);
  c.entities = c.entities
    .filter((e) => e.id === 'raw.customers' || e.id === 'raw.employees' || e.id === 'raw.regions')
    .slice(0, n);
  writeCatalog(file, c);
  return file;
}

async function waitForPending(id: string): Promise<PendingReview[]> {
  const h = w.client.workflow.getHandle(id);
  for (let i = 0; i < 100; i++) {
    const p = await h.query<PendingReview[]>('pendingReviews');
    if (p.length > 0) return p;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('no proposals became pending');
}

const decision = (proposalId: string, d: string, extra: Record<string, unknown> = {}) => ({
  proposalId,
  decision: d,
  reviewer: 'dana@example.org',
  time: new Date().toISOString(),
  ...extra,
});

test('PII tags wait for a person; only proposals approved by the Arbiter and the person are written', async () => {
  const file = smallCatalog('gate');
  const id = uniqueId('sweep/human');
  const h = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: id,
    args: [{ catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '10m' } }],
  });
  const pending = await waitForPending(id);
  expect(pending.every((p) => p.kind === 'pii_tag')).toBe(true);
  expect(pending.length).toBeGreaterThanOrEqual(3);

  // Invalid payloads are refused with a clear message and change nothing.
  const bad = await h
    .executeUpdate('review', { args: [{ decisions: [decision(pending[0]!.proposalId, 'maybe')] }] })
    .catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(String((bad as WorkflowUpdateFailedError).cause?.message)).toMatch(/decision/);
  const unknown = await h
    .executeUpdate('review', { args: [{ decisions: [decision('p-nope', 'approved')] }] })
    .catch((e: unknown) => e);
  expect(String((unknown as WorkflowUpdateFailedError).cause?.message)).toMatch(/not awaiting review: p-nope/);
  const extraField = await h
    .executeUpdate('review', {
      args: [{ decisions: [decision(pending[0]!.proposalId, 'approved', { category: 'email' })] }],
    })
    .catch((e: unknown) => e);
  expect(String((extraField as WorkflowUpdateFailedError).cause?.message)).toMatch(/category/);
  expect((await h.query<PendingReview[]>('pendingReviews')).length).toBe(pending.length);

  const [rejectOne, needsChanges, ...rest] = pending;
  const r1: ReviewUpdateResult = await h.executeUpdate('review', {
    args: [
      {
        decisions: [
          decision(rejectOne!.proposalId, 'rejected', { comment: 'not personal here' }),
          decision(needsChanges!.proposalId, 'needs_changes'),
        ],
      },
    ],
  });
  expect(r1).toEqual({ accepted: 2, stillPending: rest.length });
  // Bulk approval of the rest in one update.
  await h.executeUpdate('review', { args: [{ decisions: rest.map((p) => decision(p.proposalId, 'approved')) }] });
  const report = (await h.result()) as SweepReport;

  const byId = new Map(report.proposals.map((p) => [p.id, p]));
  expect(byId.get(rejectOne!.proposalId)).toEqual(
    expect.objectContaining({ outcome: 'rejected', written: false, reviewer: 'human:dana@example.org' }),
  );
  expect(byId.get(rejectOne!.proposalId)?.reason).toMatch(/not personal here/);
  expect(byId.get(needsChanges!.proposalId)).toEqual(expect.objectContaining({ outcome: 'rejected', written: false }));
  expect(byId.get(needsChanges!.proposalId)?.reason).toMatch(/needs changes/);
  for (const p of rest)
    expect(byId.get(p.proposalId)).toEqual(
      expect.objectContaining({ outcome: 'approved', written: true, reviewer: 'human:dana@example.org' }),
    );
  // Descriptions were not held back and were written on the Arbiter's approval alone.
  expect(report.byKind.description.written).toBeGreaterThan(0);
  expect(report.byKind.pii_tag.written).toBe(rest.length);
});

test('undecided proposals expire at the deadline as not reviewed and are not written', async () => {
  const file = smallCatalog('expire', 1);
  const id = uniqueId('sweep/human-expire');
  const h = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: id,
    args: [{ catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '3s' } }],
  });
  const pending = await waitForPending(id);
  await h.executeUpdate('review', { args: [{ decisions: [decision(pending[0]!.proposalId, 'approved')] }] });
  const report = (await h.result()) as SweepReport;
  const expired = report.proposals.filter((p) => p.outcome === 'not_reviewed');
  expect(expired.length).toBe(pending.length - 1);
  for (const p of expired) expect(p).toEqual(expect.objectContaining({ reason: 'review expired', written: false }));
  expect(report.partial).toBe(true);
  expect(report.byKind.pii_tag.written).toBe(1);
});

test('waiting for people stalls no lane: every page is reviewed and written first, across executions, then one wait', async () => {
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'human', 'lanes', 'catalog.json'));
  const id = uniqueId('sweep/human-lanes');
  const h = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: id,
    // Small pages, two lanes, a new execution every two pages, and a deadline nobody will reach.
    args: [
      {
        catalog: { kind: 'file', path: file },
        pageSize: 5,
        concurrency: 2,
        pagesPerRun: 2,
        humanReview: { kinds: ['pii_tag'], deadline: '2h' },
      },
    ],
  });
  // The automated work of every page finishes while proposals wait.
  let progress: { phase: string; pagesDone: number; pageCount: number; awaitingReview: number } | undefined;
  for (let i = 0; i < 300; i++) {
    progress = await h.query('progress');
    if (progress!.phase === 'awaiting_review') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(progress!.phase).toBe('awaiting_review');
  expect(progress!.pageCount).toBeGreaterThan(4);
  expect(progress!.pagesDone).toBe(progress!.pageCount);
  const pending = await h.query<PendingReview[]>('pendingReviews');
  expect(pending.length).toBe(progress!.awaitingReview);
  // Proposals parked in earlier executions are still there to decide, each with the one deadline.
  const pages = new Set(pending.map((p) => p.pageIndex));
  expect(Math.min(...pages)).toBeLessThan(2);
  expect(Math.max(...pages)).toBeGreaterThanOrEqual(2);
  expect(new Set(pending.map((p) => p.deadline)).size).toBe(1);
  // Descriptions were written already; no PII tag was.
  const before = readCatalog(file);
  const tagged = (c: typeof before) =>
    c.entities.flatMap((e) => e.columns.filter((col) => (col.tags ?? []).some((t) => t.kind === 'pii'))).length;
  const taggedBefore = tagged(before);

  const [first, ...rest] = pending;
  await h.executeUpdate('review', { args: [{ decisions: [decision(first!.proposalId, 'rejected')] }] });
  await h.executeUpdate('review', { args: [{ decisions: rest.map((p) => decision(p.proposalId, 'approved')) }] });
  const report = (await h.result()) as SweepReport;
  expect(report.humanReview).toEqual(
    expect.objectContaining({ waited: pending.length, approved: rest.length, rejected: 1, expired: 0, notParked: 0 }),
  );
  expect(report.humanReview!.waitedMs).toBeGreaterThan(0);
  expect(report.byKind.pii_tag.written).toBe(rest.length);
  expect(tagged(readCatalog(file)) - taggedBefore).toBe(rest.length);
  const byId = new Map(report.proposals.map((p) => [p.id, p]));
  expect(byId.get(first!.proposalId)).toEqual(expect.objectContaining({ outcome: 'rejected', written: false }));
  expect(report.partial).toBe(false);
});
