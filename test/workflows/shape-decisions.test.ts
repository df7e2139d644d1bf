import * as path from 'node:path';
import { uniqueId } from '../support/temporal-env';
import {
  useArgusWorker,
  copyCatalog,
  readCatalog,
  writeCatalog,
  runSweep,
  DEMO_CATALOG,
} from '../support/argus-worker';
import type { SweepReport } from '../../domain/report';
import type { PendingReview } from '../../workflows/messages';
import type { CatalogFile } from '../../domain/catalog';
import { fileStateStore } from '../../state/file/store';
import { forgetDecision } from '../../activities/forget-decision';
import { undoSweep } from '../../activities/undo';
import { describeShape, piiShapeOf, SHAPE_REVIEWER_PREFIX } from '../../judgment/pii/shape';
import { classOf } from '../../client/review-page';

// A steward's decision on a PII tag as evidence for the same shape elsewhere in the catalog, on a real dev server.
const w = useArgusWorker('tq-shapes');

/** A PII tag's shape from a report row or a pending proposal's change. */
const shapeOfRow = (p: SweepReport['proposals'][number]) =>
  p.change.kind === 'pii_tag' ? piiShapeOf(p.change) : undefined;

/** Run a human-review sweep of `file` and decide every pending PII tag on `entityId` with `decide`. */
async function decideOn(file: string, entityId: string, decide: 'approved' | 'rejected') {
  const id = uniqueId('sweep/shapes');
  const h = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: id,
    args: [{ catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '10m' } }],
  });
  let pending: PendingReview[] = [];
  for (let i = 0; i < 150 && pending.length === 0; i++) {
    pending = await h.query<PendingReview[]>('pendingReviews');
    if (pending.length === 0) await new Promise((r) => setTimeout(r, 200));
  }
  const mine = pending.filter((p) => p.entityId === entityId);
  expect(mine.length).toBeGreaterThan(0);
  const time = new Date().toISOString();
  await h.executeUpdate('review', {
    args: [
      {
        decisions: pending.map((p) => ({
          proposalId: p.proposalId,
          decision: p.entityId === entityId ? decide : 'rejected',
          reviewer: 'dana',
          time,
        })),
      },
    ],
  });
  const report = (await h.result()) as SweepReport;
  return { id, report, decided: mine };
}

/** The demo with only `keep`'s entities, in a file of its own (the memory is per file). */
function demoWith(name: string, keep: (id: string) => boolean): { file: string; whole: CatalogFile } {
  const file = copyCatalog(DEMO_CATALOG, path.join(w.tw.stateDir, 'shapes', name));
  const whole = readCatalog(file);
  writeCatalog(file, { ...whole, entities: whole.entities.filter((e) => keep(e.id)) });
  return { file, whole };
}

test("a person's rejection of a tag is evidence for the same shape elsewhere: rejected, named, and taken back", async () => {
  const { file, whole } = demoWith('rejected', (id) => id === 'raw.customers');
  const first = await decideOn(file, 'raw.customers', 'rejected');
  const rejectedShapes = new Set(first.report.proposals.filter((p) => p.entityId === 'raw.customers').map(shapeOfRow));
  expect(rejectedShapes.size).toBeGreaterThan(0);

  // The whole catalog next: the same shapes on other tables are rejected on the person's word.
  writeCatalog(file, whole);
  const second = await runSweep(w, { catalog: { kind: 'file', path: file } }, 'sweep/shapes');
  const byShape = second.proposals.filter((p) => p.reviewer.startsWith(SHAPE_REVIEWER_PREFIX));
  expect(byShape.length).toBeGreaterThan(0);
  for (const p of byShape) {
    expect(p.outcome).toBe('rejected');
    expect(p.written).toBe(false);
    expect(p.entityId).not.toBe('raw.customers');
    expect(rejectedShapes.has(shapeOfRow(p))).toBe(true);
    expect(p.reason).toContain(`dana rejected ${describeShape(shapeOfRow(p)!)} on raw.customers`);
    expect(p.reason).toMatch(/argus review forget p-\S+ --sweep /);
  }
  // Other shapes are judged as before: the decision does not spread past its shape.
  const others = second.proposals.filter((p) => p.kind === 'pii_tag' && !rejectedShapes.has(shapeOfRow(p)));
  expect(others.some((p) => p.written)).toBe(true);

  // Taking the decision back: its entity and every entity rejected for its shape are judged afresh, and tagged.
  const store = fileStateStore(w.tw.stateDir);
  const pid = byShape[0]!.reviewer.slice(SHAPE_REVIEWER_PREFIX.length);
  const forgot = await forgetDecision(store, second.sweepId, pid);
  expect(forgot.forgotten).toContain(byShape[0]!.entityId);
  const third = await runSweep(w, { catalog: { kind: 'file', path: file } }, 'sweep/shapes');
  expect(third.incremental!.judged).toBe(forgot.forgotten.length);
  const tagged = third.proposals.filter((p) => p.written && p.kind === 'pii_tag');
  expect(tagged.some((p) => p.entityId === byShape[0]!.entityId && shapeOfRow(p) === shapeOfRow(byShape[0]!))).toBe(
    true,
  );
  await expect(forgetDecision(store, second.sweepId, 'p-not-a-decision')).rejects.toThrow(/holds no decision/);
}, 120_000);

test("undo of the sweep that applied a person's rejection takes it back: those entities are judged afresh", async () => {
  const { file, whole } = demoWith('undo', (id) => id === 'raw.customers');
  await decideOn(file, 'raw.customers', 'rejected');
  writeCatalog(file, whole);
  const second = await runSweep(w, { catalog: { kind: 'file', path: file } }, 'sweep/shapes');
  const byShape = new Set(
    second.proposals.filter((p) => p.reviewer.startsWith(SHAPE_REVIEWER_PREFIX)).map((p) => p.entityId),
  );
  expect(byShape.size).toBeGreaterThan(0);
  await undoSweep(fileStateStore(w.tw.stateDir), second.sweepId, { stateDir: w.tw.stateDir });
  const after = await runSweep(w, { catalog: { kind: 'file', path: file } }, 'sweep/shapes');
  // Every entity the undone sweep rejected for the shape is judged again (with the ones it wrote on).
  const judged = new Set(after.proposals.map((p) => p.entityId));
  for (const id of byShape) expect(judged.has(id)).toBe(true);
}, 120_000);

test('a shape a person approved is held for people under "decided before", one group to settle', async () => {
  const { file, whole } = demoWith('approved', (id) => id === 'raw.customers');
  const first = await decideOn(file, 'raw.customers', 'approved');
  const approvedShapes = new Set(first.report.proposals.filter((p) => p.entityId === 'raw.customers').map(shapeOfRow));
  writeCatalog(file, whole);
  const h = await w.client.workflow.start('sweepWorkflow', {
    taskQueue: w.tw.taskQueue,
    workflowId: uniqueId('sweep/shapes'),
    args: [{ catalog: { kind: 'file', path: file }, humanReview: { kinds: ['pii_tag'], deadline: '20s' } }],
  });
  let pending: PendingReview[] = [];
  for (let i = 0; i < 150 && pending.length === 0; i++) {
    pending = await h.query<PendingReview[]>('pendingReviews');
    if (pending.length === 0) await new Promise((r) => setTimeout(r, 200));
  }
  const before = pending.filter((p) => p.arbiterReason.startsWith('Decided before:'));
  expect(before.length).toBeGreaterThan(0);
  expect(pending.length).toBeGreaterThan(before.length);
  for (const p of before) {
    expect(p.arbiterReason).toMatch(/dana approved a \S+ tag on a column named ".+" .*on raw\.customers/);
    expect(classOf(p)).toMatch(/^decided before · /);
  }
  for (const p of pending.filter((x) => !before.includes(x))) expect(classOf(p)).not.toMatch(/decided before/);
  expect(approvedShapes.size).toBeGreaterThan(0);
  await h.terminate('test done');
}, 120_000);
