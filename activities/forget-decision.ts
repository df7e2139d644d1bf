import { incrementalDocName, type IncrementalDoc } from './incremental-activities';
import { SHAPE_REVIEWER_PREFIX } from '../judgment/pii/shape';
import type { StateStore } from '../state/store';

/** What `argus review forget` took back. */
export interface ForgetResult {
  proposalId: string;
  catalog: string;
  /** The entity the person decided on, and every entity a tag was rejected on by that decision's shape. */
  forgotten: string[];
}

/**
 * Take back a person's decision on a proposal (`proposalId`), in the memory of the catalog sweep `sweepId` swept:
 * the entity they decided on and every entity the gate rejected a tag on by that decision's shape are forgotten, so
 * the next sweep judges them afresh (a person's rejection no longer stands, nor spreads). Nothing is written to the
 * catalog. An id the memory does not hold is an error that says so.
 */
export async function forgetDecision(store: StateStore, sweepId: string, proposalId: string): Promise<ForgetResult> {
  const metas = await store.findSweepMetas(sweepId);
  if (metas.length === 0) throw new Error(`no sweep ${sweepId} in ${store.where}`);
  const ledger = store.ledger(metas[metas.length - 1]!.ledgerKey);
  const meta = await ledger.meta();
  const inc = await ledger.doc<IncrementalDoc>(incrementalDocName);
  if (!inc) throw new Error(`sweep ${sweepId} kept no memory (an incremental: false sweep): nothing to forget`);
  const read = await store.memory.load(inc.memoryKey);
  if (read.status !== 'ok')
    throw new Error(
      `the memory of ${meta.catalogName} cannot be read (${read.status === 'untrusted' ? read.why : 'none yet'})`,
    );
  const forgotten: string[] = [];
  for (const [id, m] of Object.entries(read.doc.entities))
    for (const [pid, , stage] of m.d ?? [])
      if ((pid === proposalId && stage === 'human') || stage === `${SHAPE_REVIEWER_PREFIX}${proposalId}`) {
        forgotten.push(id);
        break;
      }
  if (forgotten.length === 0)
    throw new Error(`the memory of ${meta.catalogName} holds no decision of a person on ${proposalId}`);
  await store.memory.forget(inc.memoryKey, forgotten);
  return { proposalId, catalog: meta.catalogName, forgotten };
}
