import { incrementalDocName, shapeDecisionsOf, type IncrementalDoc } from './incremental-activities';
import { SHAPE_REVIEWER_PREFIX } from '../judgment/pii/shape';
import type { MemoryEntry } from '../state/memory';
import type { StateStore } from '../state/store';

/** What `argus review forget` took back. */
export interface ForgetResult {
  proposalId: string;
  catalog: string;
  /** Who made the decision (absent: the memory no longer holds the person's own record, only what rests on it). */
  reviewer?: string;
  /** The entity the person decided on, and every entity a tag was rejected on by that decision's shape. */
  forgotten: string[];
}

/**
 * A person's decision that stands in a catalog's memory, with what rests on it: what `forgetDecision` would take
 * back. `entityId` and the rest are absent when only entities rejected for its shape remain (a sweep that was running
 * while the decision was forgotten remembered what it had rejected on it).
 */
export interface StandingDecision {
  proposalId: string;
  entityId?: string;
  decision?: 'approved' | 'rejected';
  reviewer?: string;
  at?: string;
  /** A PII tag's shape (judgment/pii/shape.ts): `words|category|reading`. */
  shape?: string;
  /** Another person's later decision on the same shape is the one the gate reads now: its proposal id. */
  supersededBy?: string;
  /** Other entities a tag was rejected on for this decision's shape. */
  byShape: string[];
}

/** Nothing to forget: no such sweep, a sweep that kept no memory or cannot read it, no person's decision on the id. */
export class NothingToForget extends Error {
  override name = 'NothingToForget';
  constructor(
    readonly missing: 'sweep' | 'memory' | 'decision',
    message: string,
  ) {
    super(message);
  }
}

/**
 * People's decisions in a catalog's memory entries, newest first: each with the entities rejected for its shape.
 * Pure: the review page lists these, and `forgetDecision` forgets exactly one of them.
 */
export function standingDecisionsOf(entities: Readonly<Record<string, MemoryEntry>>): StandingDecision[] {
  const byId = new Map<string, StandingDecision>();
  const of = (pid: string) => byId.get(pid) ?? byId.set(pid, { proposalId: pid, byShape: [] }).get(pid)!;
  for (const [id, m] of Object.entries(entities))
    for (const [pid, decision, stage, , reviewer, at, shape] of m.d ?? []) {
      if (stage === 'human') {
        const d = of(pid);
        if (d.entityId !== undefined) continue;
        Object.assign(d, {
          entityId: id,
          decision,
          ...(reviewer !== undefined ? { reviewer } : {}),
          ...(at !== undefined ? { at } : {}),
          ...(shape !== undefined ? { shape } : {}),
        });
      } else if (stage.startsWith(SHAPE_REVIEWER_PREFIX)) {
        const d = of(stage.slice(SHAPE_REVIEWER_PREFIX.length));
        if (!d.byShape.includes(id)) d.byShape.push(id);
      }
    }
  const current = shapeDecisionsOf(entities);
  const out = [...byId.values()];
  for (const d of out) {
    d.byShape = d.byShape.filter((id) => id !== d.entityId).sort();
    const now = d.shape !== undefined ? current[d.shape] : undefined;
    if (now && now.proposalId !== d.proposalId) d.supersededBy = now.proposalId;
  }
  return out.sort((a, b) => (b.at ?? '').localeCompare(a.at ?? '') || a.proposalId.localeCompare(b.proposalId));
}

/** The memory of the catalog `sweepId` swept (its latest run), as the sweeps of that catalog read it. */
async function memoryOfSweep(store: StateStore, sweepId: string) {
  const metas = await store.findSweepMetas(sweepId);
  if (metas.length === 0) throw new NothingToForget('sweep', `no sweep ${sweepId} in ${store.where}`);
  const ledger = store.ledger(metas[metas.length - 1]!.ledgerKey);
  const meta = await ledger.meta();
  const inc = await ledger.doc<IncrementalDoc>(incrementalDocName);
  if (!inc)
    throw new NothingToForget(
      'memory',
      `sweep ${sweepId} kept no memory (an incremental: false sweep): nothing to forget`,
    );
  const read = await store.memory.load(inc.memoryKey);
  if (read.status === 'untrusted')
    throw new NothingToForget('memory', `the memory of ${meta.catalogName} cannot be read (${read.why})`);
  // No memory yet (the catalog's first sweep runs): no decision stands.
  return {
    catalog: meta.catalogName,
    memoryKey: inc.memoryKey,
    entities: read.status === 'ok' ? read.doc.entities : {},
  };
}

/**
 * People's decisions standing in the memory of the catalog `sweepId` swept, newest first (standingDecisionsOf).
 * Raises NothingToForget when the sweep is unknown, kept no memory, or its memory cannot be read. Reads only.
 */
export async function standingDecisions(
  store: StateStore,
  sweepId: string,
): Promise<{ catalog: string; decisions: StandingDecision[] }> {
  const { catalog, entities } = await memoryOfSweep(store, sweepId);
  return { catalog, decisions: standingDecisionsOf(entities) };
}

/**
 * Take back a person's decision on a proposal (`proposalId`), in the memory of the catalog sweep `sweepId` swept:
 * the entity they decided on and every entity the gate rejected a tag on by that decision's shape are forgotten, so
 * the next sweep judges them afresh (a person's rejection no longer stands, nor spreads). Nothing is written to the
 * catalog. An id the memory does not hold raises NothingToForget, and nothing is forgotten. Idempotent in effect:
 * a second call finds nothing.
 */
export async function forgetDecision(store: StateStore, sweepId: string, proposalId: string): Promise<ForgetResult> {
  const { catalog, memoryKey, entities } = await memoryOfSweep(store, sweepId);
  const d = standingDecisionsOf(entities).find((x) => x.proposalId === proposalId);
  if (!d)
    throw new NothingToForget('decision', `the memory of ${catalog} holds no decision of a person on ${proposalId}`);
  const forgotten = [...(d.entityId !== undefined ? [d.entityId] : []), ...d.byShape];
  await store.memory.forget(memoryKey, forgotten);
  return { proposalId, catalog, ...(d.reviewer !== undefined ? { reviewer: d.reviewer } : {}), forgotten };
}
