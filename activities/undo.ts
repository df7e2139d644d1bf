import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FileCatalogStore } from '../catalog/file-store';
import { AuditLog, type AuditEntry } from './audit-log';
import type { SweepMeta } from './ledger';
import { readJson } from './paths';
import { revertChange } from './repairs';

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
    const undone = new Set(entries.filter((e) => e.type === 'undo' && e.sweepId === sweepId).map((e) => e.proposalId));
    const writes = entries.filter(
      (e): e is Extract<AuditEntry, { type: 'write' }> => e.type === 'write' && e.sweepId === sweepId,
    );
    const pending = writes.filter((w) => !undone.has(w.proposalId)).reverse();
    const res: UndoResult = {
      sweepId,
      catalogFile: meta.catalogFile,
      undone: 0,
      conflicts: [],
      alreadyUndone: writes.length - pending.length,
    };
    const time = new Date().toISOString();
    const lines: AuditEntry[] = [];
    await new FileCatalogStore(meta.catalogFile).update((get) => {
      for (const w of pending) {
        const e = get(w.entityId);
        if (!e) {
          res.conflicts.push({ proposalId: w.proposalId, note: 'entity no longer in the catalog' });
          continue;
        }
        const r = revertChange(e, w.change, w.before, w.after);
        if (r.ok) {
          res.undone++;
          lines.push({ type: 'undo', time, sweepId, proposalId: w.proposalId, entityId: w.entityId, undoneBy });
        } else res.conflicts.push({ proposalId: w.proposalId, note: r.note });
      }
    });
    await audit.append(lines);
    results.push(res);
  }
  return results;
}
