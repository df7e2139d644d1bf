import { SHAPE_REVIEWER_PREFIX } from '../judgment/pii/shape';
import type { CatalogAdapterFactory } from '../catalog/adapter';
import { createCatalogs } from '../catalog';
import type { AuditEntry, WriteRecord, StateStore } from '../state/store';
import { fileStateStore } from '../state/file/store';
import { bundledDemoCatalog } from './paths';
import { memoryKeyOf } from '../state/memory';

export interface UndoResult {
  sweepId: string;
  /** Where the catalog is, for people (a file's path). */
  catalog: string;
  undone: number;
  conflicts: { proposalId: string; note: string }[];
  alreadyUndone: number;
  /** Model answers forgotten with the sweep's decisions (their requests are sent again). */
  answersForgotten?: number;
}

/**
 * Undo one sweep's writes from the audit log, newest first. A value changed since the sweep wrote it is
 * left alone and reported as a conflict. Appends `undo` lines; running it twice undoes nothing more. The
 * catalog's memory forgets the entities written to, and the answer memory the model answers the sweep used, so the
 * next sweep judges them again and asks the model again.
 */
export async function undoSweep(
  state: string | StateStore,
  sweepId: string,
  opts: { undoneBy?: string; catalogs?: CatalogAdapterFactory; stateDir?: string } = {},
): Promise<UndoResult[]> {
  const undoneBy = opts.undoneBy ?? 'argus undo';
  const store = typeof state === 'string' ? fileStateStore(state) : state;
  const stateDir = typeof state === 'string' ? state : (opts.stateDir ?? store.where);
  const catalogs = opts.catalogs ?? createCatalogs({ stateDir, bundledDemo: bundledDemoCatalog(), env: process.env });
  const metas = await store.findSweepMetas(sweepId);
  if (metas.length === 0) throw new Error(`no sweep "${sweepId}" found in ${store.where}`);
  const seen = new Set<string>();
  const results: UndoResult[] = [];
  for (const meta of metas) {
    if (seen.has(meta.auditFile)) continue;
    seen.add(meta.auditFile);
    const audit = store.audit(meta.auditFile);
    const entries = await audit.readAll();
    const undone = new Set<string>();
    for (const e of entries) if (e.type === 'undo' && e.sweepId === sweepId) undone.add(e.proposalId);
    // One write per proposal (a retried page may log a write twice); the newest line wins.
    const byProposal = new Map<string, WriteRecord>();
    for (const e of entries) if (e.type === 'write' && e.sweepId === sweepId) byProposal.set(e.proposalId, e);
    // Changes that reached the catalog in an attempt that died before their audit lines, and were never
    // retried (the sweep was terminated): the ledgers' write-ahead intents still know them.
    const unlogged: WriteRecord[] = [];
    for (const m of metas.filter((x) => x.auditFile === meta.auditFile)) {
      const ledger = store.ledger(m.ledgerKey);
      for (const n of await ledger.pageNumbers())
        for (const r of await ledger.intent(n))
          if (!byProposal.has(r.proposalId) && !undone.has(r.proposalId)) unlogged.push(r);
    }
    const writes = [...byProposal.values()];
    const pending = [...writes.filter((w) => !undone.has(w.proposalId)), ...unlogged].reverse();
    const res: UndoResult = {
      sweepId,
      catalog: meta.catalogLabel ?? (meta as { catalogFile?: string }).catalogFile ?? meta.catalogName,
      undone: 0,
      conflicts: [],
      alreadyUndone: writes.length - (pending.length - unlogged.length),
    };
    const time = new Date().toISOString();
    const lines: AuditEntry[] = [];
    const unloggedIds = new Set(unlogged.map((u) => u.proposalId));
    const catalog = await catalogs(meta.catalogRef);
    const outcomes = await catalog.revertRepairs(
      pending.map((w) => ({
        proposalId: w.proposalId,
        entityId: w.entityId,
        change: w.change,
        before: w.before,
        after: w.after,
        // An intent without its audit line may never have reached the catalog: nothing to undo then.
        unconfirmed: unloggedIds.has(w.proposalId),
      })),
    );
    const byId = new Map(pending.map((w) => [w.proposalId, w]));
    for (const o of outcomes) {
      const w = byId.get(o.proposalId)!;
      if (o.status === 'not_landed') continue;
      if (o.status === 'conflict') {
        res.conflicts.push({ proposalId: o.proposalId, note: o.note });
        continue;
      }
      // `already_reverted`: an earlier undo died after its catalog write and before its audit lines.
      res.undone++;
      if (unloggedIds.has(o.proposalId)) lines.push(w);
      lines.push({ type: 'undo', time, sweepId, proposalId: w.proposalId, entityId: w.entityId, undoneBy });
    }
    await audit.append(lines);
    // Undone repairs may be proposed again: the memory of the entities they touched goes (judged as new next time),
    // and so does that of every entity the sweep rejected a tag on for a person's decision on its shape: what the
    // sweep applied of the decision is taken back with the rest.
    const memoryKey = memoryKeyOf(store, catalog.identity, meta.catalogName);
    const byShape: string[] = [];
    const read = await store.memory.load(memoryKey).catch(() => undefined);
    if (read?.status === 'ok')
      for (const [id, m] of Object.entries(read.doc.entities))
        if (
          m.sweep === sweepId &&
          (m.d ?? []).some(([, d, stage]) => d === 'rejected' && stage.startsWith(SHAPE_REVIEWER_PREFIX))
        )
          byShape.push(id);
    await store.memory.forget(memoryKey, [...new Set([...pending.map((w) => w.entityId), ...byShape])]);
    // The model answers its decisions rest on, sent or remembered (its call records name them), go too: the next
    // sweep asks the model again rather than repeat what was undone.
    for (const m of metas.filter((x) => x.auditFile === meta.auditFile)) {
      const ledger = store.ledger(m.ledgerKey);
      const digests = new Set<string>();
      for (const n of await ledger.pageNumbers())
        for (const c of await ledger.calls(n)) for (const d of [c.digest, ...(c.kept ?? [])]) if (d) digests.add(d);
      await store.answers.forget([...digests]);
      res.answersForgotten = (res.answersForgotten ?? 0) + digests.size;
    }
    results.push(res);
  }
  return results;
}
