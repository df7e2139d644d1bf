import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileStateStore } from '../../state/file/store';
import {
  absorbedDocName,
  createIncrementalActivities,
  fingerprintsDocName,
  incrementalDocName,
  type IncrementalDoc,
} from '../../activities/incremental-activities';
import type { Proposal } from '../../domain/proposal';

// rememberSweep on a real file state store: what a sweep of two passes leaves in the memory. Pass 1 is page 0
// (entities a, b, c), pass 2 page 1 (a and b again, the PII classifier alone).
const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-remember-'));
const store = fileStateStore(dir);
const activities = createIncrementalActivities({
  stateDir: dir,
  store,
  catalogs: () => Promise.reject(new Error('rememberSweep reads no catalog')),
});
const doc: IncrementalDoc = {
  judgmentKey: 'jk',
  memoryKey: 'memory-of-test',
  incremental: true,
  replace: true,
  counts: { new: 3, changed: 0, unchanged: 0, gone: 0, carriedOver: 0, judged: 3 },
  goneIds: [],
};
const proposal = (id: string, entityId: string, agent: Proposal['agent']): Proposal => ({
  id,
  entityId,
  agent,
  change: { kind: 'description', target: 'table', text: `${id} text.` },
  evidence: [],
});

test('an entity is final only when every proposal of the sweep ended final; ARGUS tags alone keep the newer print', async () => {
  const ledger = store.ledger('sweep-remember');
  await ledger.writeDoc(incrementalDocName, doc);
  await ledger.writeDoc(fingerprintsDocName(0), { a: 'A0 a a', b: 'B0 b b', c: 'C0 c c' });
  await ledger.writeDoc(fingerprintsDocName(1), { a: 'A1 a a1', b: 'B1 b b1', c: 'C0 c c' });
  await ledger.writeDoc(fingerprintsDocName(2), { a: 'A1 a a1', b: 'B1 b b1', c: 'C2 c c' });
  await ledger.writeDoc(absorbedDocName(2), ['c']);
  // Pass 1: a's drafter proposal was not reviewed (the model budget ran out); b's was approved and written; c's
  // PII tag was approved and written.
  await ledger.writePageIds(0, ['a', 'b', 'c']);
  await ledger.writeProposals(0, 'description-drafter', [
    proposal('pa', 'a', 'description-drafter'),
    proposal('pb', 'b', 'description-drafter'),
    proposal('pc', 'c', 'pii-classifier'),
  ]);
  await ledger.putOutcomes(0, 'gate', 'gate', [
    { proposalId: 'pa', decision: 'not_reviewed', reason: 'budget spent', reviewer: 'none' },
    { proposalId: 'pb', decision: 'approved', reason: 'ok', reviewer: 'gate' },
    { proposalId: 'pc', decision: 'approved', reason: 'ok', reviewer: 'gate' },
  ]);
  await ledger.writeWrites(0, { written: ['pb', 'pc'], already: [], keptHuman: [], conflicts: [], notes: {} });
  // Pass 2: the PII classifier alone on a and b, nothing proposed; the drafter's open proposal on a is not asked again.
  await ledger.writePageIds(1, ['a', 'b']);
  await ledger.writeProposals(1, 'pii-classifier', []);

  await activities.rememberSweep({
    ledgerKey: 'sweep-remember',
    sweepId: 'sweep/s1',
    roundFirstPages: [0, 1],
    failedEntities: [],
    dryRun: false,
  });
  const memory = await store.memory.load('memory-of-test');
  expect(memory.status).toBe('ok');
  const entities = memory.status === 'ok' ? memory.doc.entities : {};
  // a: its pass-1 proposal stays open whatever pass 2 did, so the next sweep judges it again.
  expect(entities.a).toMatchObject({ fp: 'A1', final: false });
  expect(entities.b).toMatchObject({ fp: 'B1', final: true, d: [['pb', 'approved', 'gate']] });
  // c: judged in pass 1 only; its tag, ARGUS's own, changed nothing any reading needs: remembered as written.
  expect(entities.c).toMatchObject({ fp: 'C2', final: true });
});
