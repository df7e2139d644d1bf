import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FileCatalogStore } from '../catalog/file-store';
import { AuditLog, type AuditEntry } from './audit-log';
import { SweepLedger, type SweepMeta, type WriteRecord } from './ledger';
import { readJson } from './paths';
import { holds, revertChange } from './repairs';

export interface UndoResult {
  sweepId: string;
  catalogFile: string;
  undone: number;
  conflicts: { proposalId: string; note: string }[];
  alreadyUndone: number;
}

/** Find every ledger of a sweep (one per run of that workflow id). */
export async function findSweepMetas(stateDir: string, sweepId: string): Promise<SweepMeta[]> {
  const dir = path.join(stateDir, 'sweeps');
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const out: SweepMeta[] = [];
  for (const n of names) {
    const m = await readJson<SweepMeta>(path.join(dir, n, 'meta.json'));
    if (m && m.sweepId === sweepId) out.push(m);
  }
  return out;
}

/**
 * Undo one sweep's writes from the audit log, newest first. A value changed since the sweep wrote it is
 * left alone and reported as a conflict. Appends `undo` lines; running it twice undoes nothing more.
 */
export async function undoSweep(stateDir: string, sweepId: string, undoneBy = 'argus undo'): Promise<UndoResult[]> {
  const metas = await findSweepMetas(stateDir, sweepId);
  if (metas.length === 0) throw new Error(`no sweep "${sweepId}" found in ${stateDir}`);
  const seen = new Set<string>();
  const results: UndoResult[] = [];
  for (const meta of metas) {
    if (seen.has(meta.auditFile)) continue;
    seen.add(meta.auditFile);
    const audit = new AuditLog(meta.auditFile);
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
      const ledger = new SweepLedger(stateDir, m.ledgerKey);
      for (const n of await ledger.pageNumbers())
        for (const r of await ledger.intent(n))
          if (!byProposal.has(r.proposalId) && !undone.has(r.proposalId)) unlogged.push(r);
    }
    const writes = [...byProposal.values()];
    const pending = [...writes.filter((w) => !undone.has(w.proposalId)), ...unlogged].reverse();
    const res: UndoResult = {
      sweepId,
      catalogFile: meta.catalogFile,
      undone: 0,
      conflicts: [],
      alreadyUndone: writes.length - (pending.length - unlogged.length),
    };
    const time = new Date().toISOString();
    const lines: AuditEntry[] = [];
    const unloggedIds = new Set(unlogged.map((u) => u.proposalId));
    await new FileCatalogStore(meta.catalogFile).update((get) => {
      for (const w of pending) {
        const e = get(w.entityId);
        if (!e) {
          res.conflicts.push({ proposalId: w.proposalId, note: 'entity no longer in the catalog' });
          continue;
        }
        const isUnlogged = unloggedIds.has(w.proposalId);
        // An intent that never landed (the attempt died before the replacement) is nothing to undo.
        if (isUnlogged && !holds(e, w.change, w.after)) continue;
        const r = revertChange(e, w.change, w.before, w.after);
        // A value already back to what it was before: an earlier undo died after its catalog write and before
        // its audit lines. It is undone; only the line is missing.
        const ok = r.ok || holds(e, w.change, w.before);
        if (ok) {
          res.undone++;
          if (isUnlogged) lines.push({ ...w, time: w.time });
          lines.push({ type: 'undo', time, sweepId, proposalId: w.proposalId, entityId: w.entityId, undoneBy });
        } else res.conflicts.push({ proposalId: w.proposalId, note: r.note });
      }
    });
    await audit.append(lines);
    results.push(res);
  }
  return results;
}
