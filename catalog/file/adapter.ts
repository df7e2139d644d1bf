import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { CatalogRef } from '../../domain/sweep';
import {
  CatalogError,
  type CatalogAdapter,
  type CatalogIdentity,
  type RepairOutcome,
  type RevertOutcome,
} from '../adapter';
import { FileCatalogStore } from './store';
import { applyChange, holds, revertChange } from '../entity-repairs';

/** The embedded default: one versioned JSON file, each batch written atomically (all of it or none). */
export class FileCatalogAdapter implements CatalogAdapter {
  readonly identity: CatalogIdentity;
  private readonly store: FileCatalogStore;

  constructor(file: string, kind: 'file' | 'demo' = 'file') {
    this.store = new FileCatalogStore(file);
    // The absolute path is the key (as the audit logs of earlier versions were named after it).
    this.identity = { kind, key: this.store.file, label: this.store.file };
  }

  snapshot() {
    return this.store.snapshot();
  }

  getEntities(ids: string[], opts?: { digests?: boolean; once?: boolean }) {
    return this.store.getEntities(ids, opts);
  }

  recordDigests(ids: readonly string[]) {
    return this.store.recordDigests(ids);
  }

  release() {
    this.store.release();
  }

  applyRepairs(
    batch: Parameters<CatalogAdapter['applyRepairs']>[0],
    opts: Parameters<CatalogAdapter['applyRepairs']>[1],
  ): Promise<RepairOutcome[]> {
    const outcomes: RepairOutcome[] = [];
    return this.store.update(
      (get) => {
        for (const r of batch) {
          const e = get(r.entityId);
          if (!e) {
            outcomes.push({ proposalId: r.proposalId, status: 'conflict', note: 'entity no longer in the catalog' });
            continue;
          }
          if (r.landed && holds(e, r.change, r.landed.after)) {
            outcomes.push({ proposalId: r.proposalId, status: 'written', ...r.landed, landedEarlier: true });
            continue;
          }
          const a = applyChange(e, r.change, r.proposalId, opts.overwriteHumanText);
          outcomes.push(
            a.status === 'written'
              ? { proposalId: r.proposalId, status: 'written', before: a.before, after: a.after, landedEarlier: false }
              : { proposalId: r.proposalId, status: a.status, note: a.note },
          );
        }
        return outcomes;
      },
      { beforeReplace: async () => opts.beforeCommit?.(outcomes) },
    );
  }

  revertRepairs(batch: Parameters<CatalogAdapter['revertRepairs']>[0]): Promise<RevertOutcome[]> {
    return this.store.update((get) =>
      batch.map((w): RevertOutcome => {
        const e = get(w.entityId);
        if (!e) return { proposalId: w.proposalId, status: 'conflict', note: 'entity no longer in the catalog' };
        if (w.unconfirmed && !holds(e, w.change, w.after))
          return { proposalId: w.proposalId, status: 'not_landed', note: 'the write never reached the catalog' };
        const r = revertChange(e, w.change, w.before, w.after);
        if (r.ok) return { proposalId: w.proposalId, status: 'reverted', note: r.note };
        if (holds(e, w.change, w.before))
          return { proposalId: w.proposalId, status: 'already_reverted', note: 'already as it was before' };
        return { proposalId: w.proposalId, status: 'conflict', note: r.note };
      }),
    );
  }
}

/**
 * A file catalog by sweep input: `{"kind":"demo"}` is a copy of the bundled demo in the state folder (made once,
 * then repaired there); `{"kind":"file"}` is the file at its absolute path, except the bundled demo itself.
 */
export async function openFileCatalog(
  ref: Extract<CatalogRef, { kind: 'demo' | 'file' }>,
  deps: { stateDir: string; bundledDemo: string },
): Promise<FileCatalogAdapter> {
  if (ref.kind === 'demo') {
    const target = path.join(deps.stateDir, 'catalogs', 'demo.json');
    try {
      await fs.access(target);
    } catch {
      await fs.mkdir(path.dirname(target), { recursive: true });
      const tmp = `${target}.${process.pid}.tmp`;
      await fs.copyFile(deps.bundledDemo, tmp);
      await fs.rename(tmp, target);
    }
    return new FileCatalogAdapter(target, 'demo');
  }
  const file = path.resolve(ref.path);
  const real = (p: string) => fs.realpath(p).catch(() => path.resolve(p));
  // The bundled demo is part of the checkout: repairing it would change a tracked file (and the next demo).
  if ((await real(file)) === (await real(deps.bundledDemo)))
    throw new CatalogError(
      `${file} is ARGUS's bundled demo catalog, which is never a sweep target: sweep {"kind":"demo"} ` +
        '(it repairs a copy in the state folder) or sweep a copy of the file',
    );
  return new FileCatalogAdapter(file);
}
