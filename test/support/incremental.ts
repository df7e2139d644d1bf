// What an incremental sweep chose to judge, read from where the sweep stored it (its ledger in the real state
// store, file or PostgreSQL): the first pass's selection (new, changed, and unchanged entities whose decisions
// were still open) and every later pass's (what the sweep's own writes changed).
import type { StateStore } from '../../state/store';
import {
  piiOnlyDocName,
  readersOnlyDocName,
  scanStatsDocName,
  selectionDocName,
} from '../../activities/incremental-activities';

/** The ids each pass of sweep `sweepId` judged, in pass order (the first pass first). */
export async function judgedByPass(store: StateStore, sweepId: string): Promise<string[][]> {
  const metas = await store.findSweepMetas(sweepId);
  if (metas.length !== 1) throw new Error(`expected one run of ${sweepId} in ${store.where}, found ${metas.length}`);
  const ledger = store.ledger(metas[0]!.ledgerKey);
  const out: string[][] = [];
  for (let round = 0; ; round++) {
    const ids = await ledger.doc<string[]>(selectionDocName(round));
    if (ids === undefined) return out;
    out.push(ids);
  }
}

/** The entities whose coverage figures the sweep's first step counted afresh (the memory had none for them). */
export async function countedAfresh(store: StateStore, sweepId: string): Promise<string[]> {
  const metas = await store.findSweepMetas(sweepId);
  if (metas.length !== 1) throw new Error(`expected one run of ${sweepId} in ${store.where}, found ${metas.length}`);
  return Object.keys((await store.ledger(metas[0]!.ledgerKey).doc<Record<string, unknown>>(scanStatsDocName)) ?? {});
}

/** Every id any pass of the sweep judged. */
export async function judgedIds(store: StateStore, sweepId: string): Promise<Set<string>> {
  return new Set((await judgedByPass(store, sweepId)).flat());
}

/** Sorted copy, for comparing sets as lists in assertions (a failure then prints both). */
export const sorted = (ids: Iterable<string>): string[] => [...ids].sort();

/**
 * Per pass, from the first: the entities it judged with some agents only — `piiOnly` by the PII classifier alone
 * (ARGUS's text on them was all that changed), `readersOnly` by all but it (only what they read of others changed).
 */
export async function scopesByPass(
  store: StateStore,
  sweepId: string,
): Promise<{ piiOnly: string[]; readersOnly: string[] }[]> {
  const metas = await store.findSweepMetas(sweepId);
  if (metas.length !== 1) throw new Error(`expected one run of ${sweepId} in ${store.where}, found ${metas.length}`);
  const ledger = store.ledger(metas[0]!.ledgerKey);
  const out: { piiOnly: string[]; readersOnly: string[] }[] = [];
  for (let round = 0; ; round++) {
    const piiOnly = await ledger.doc<string[]>(piiOnlyDocName(round));
    const readersOnly = await ledger.doc<string[]>(readersOnlyDocName(round));
    if (piiOnly === undefined || readersOnly === undefined) return out;
    out.push({ piiOnly, readersOnly });
  }
}
