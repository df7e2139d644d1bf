// What the review page shows beside each proposal that the `pendingReviews` query does not carry: the agent's
// evidence and the full change, from the sweep's ledger in the state store (as `argus undo` reads it), and the
// catalog's current text where the proposal would write, from the catalog itself. Both are optional: a server
// that cannot reach them lists the proposals all the same and says why the rest is missing.
import type { PendingReview } from '../workflows/messages';
import type { CatalogEntity, TextSource } from '../domain/catalog';
import type { Proposal, ProposalChange } from '../domain/proposal';
import type { CatalogAdapterFactory } from '../catalog/adapter';
import { createCatalogs } from '../catalog';
import { openStateStore } from '../state/open';
import type { StateStore, SweepMeta } from '../state/store';
import { bundledDemoCatalog } from '../activities/paths';

/** The catalog's text now, where a proposal would write: a description (and who wrote it), tags, lineage. */
export interface CatalogText {
  /** False: the entity or column is not in the catalog any more. */
  found: boolean;
  description?: string;
  source?: TextSource;
  /** The column's tags as `category (source)`: what a PII tag would join. */
  tags?: string[];
  /** The recorded lineage: what a lineage flag would change. */
  upstream?: string[];
}

export interface ProposalDetails {
  evidence: string[];
  change: ProposalChange;
  current?: CatalogText;
}

export interface ReviewDetails {
  /** Details of a sweep's pending proposals by id; `note` says why some or all are missing. */
  of(sweepId: string, pending: PendingReview[]): Promise<{ byId: Map<string, ProposalDetails>; note?: string }>;
  close(): Promise<void>;
}

/** The catalog's text where `change` would write, read from `entity` (undefined: the entity is gone). */
export function catalogTextFor(entity: CatalogEntity | undefined, change: ProposalChange): CatalogText {
  if (!entity) return { found: false };
  if (change.kind === 'lineage_flag') return { found: true, upstream: [...entity.upstream] };
  const columnName = change.kind === 'pii_tag' ? change.column : change.target === 'column' ? change.column : undefined;
  if (columnName === undefined)
    return {
      found: true,
      ...(entity.description ? { description: entity.description } : {}),
      ...(entity.description_source ? { source: entity.description_source } : {}),
    };
  const column = entity.columns.find((c) => c.name === columnName);
  if (!column) return { found: false };
  return {
    found: true,
    ...(column.description ? { description: column.description } : {}),
    ...(column.description_source ? { source: column.description_source } : {}),
    tags: column.tags.map((t) => `${t.category} (${t.source})`),
  };
}

/** Proposal pages kept in memory: a page's proposals never change once the sweep wrote them. */
const PAGES_KEPT = 256;

/**
 * Details from the state store the sweeps' workers use (ARGUS_STATE_URL, else `stateDir`) and the catalogs they
 * sweep (their connection settings from this process's environment). A catalog's error message stays in the
 * server's log: the page says only that the text could not be read.
 */
export async function openReviewDetails(opts: {
  stateDir: string;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}): Promise<ReviewDetails> {
  const env = opts.env ?? process.env;
  const store: StateStore = await openStateStore({
    stateDir: opts.stateDir,
    ...(env.ARGUS_STATE_URL ? { stateUrl: env.ARGUS_STATE_URL } : {}),
    ...(env.ARGUS_STATE_SCHEMA ? { stateSchema: env.ARGUS_STATE_SCHEMA } : {}),
  });
  const catalogs: CatalogAdapterFactory = createCatalogs({
    stateDir: opts.stateDir,
    bundledDemo: bundledDemoCatalog(),
    env,
  });
  const pages = new Map<string, readonly Proposal[]>();
  // A running sweep's metadata never changes, and finding it reads every sweep's in a state folder: once is enough.
  const metaOf = new Map<string, SweepMeta>();
  const log = opts.log ?? (() => undefined);

  async function proposalsOf(ledgerKey: string, page: number): Promise<readonly Proposal[]> {
    const key = `${ledgerKey}#${page}`;
    const hit = pages.get(key);
    if (hit) return hit;
    const read = await store.ledger(ledgerKey).proposals(page);
    if (pages.size >= PAGES_KEPT) pages.delete(pages.keys().next().value!);
    pages.set(key, read);
    return read;
  }

  const details: ReviewDetails = {
    async of(sweepId, pending) {
      const cached = metaOf.has(sweepId);
      const byId = new Map<string, ProposalDetails>();
      let meta = metaOf.get(sweepId);
      if (!meta) {
        const metas = await store.findSweepMetas(sweepId).catch((e: unknown) => {
          log(`review details of ${sweepId}: ${(e as Error).message}`);
          return [];
        });
        // One ledger per run of the workflow id; the running sweep's is the newest.
        meta = [...metas].sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0];
        if (meta) {
          if (metaOf.size >= PAGES_KEPT) metaOf.delete(metaOf.keys().next().value!);
          metaOf.set(sweepId, meta);
        }
      }
      if (!meta)
        return {
          byId,
          note: `evidence and the catalog text are not shown: this sweep's state is not in ${store.where}, where this server looks (start it with the workers' --state-dir or ARGUS_STATE_URL)`,
        };
      const notes: string[] = [];
      const wanted = new Set(pending.map((p) => p.proposalId));
      for (const page of [...new Set(pending.map((p) => p.pageIndex))].sort((a, b) => a - b)) {
        try {
          for (const p of await proposalsOf(meta.ledgerKey, page))
            if (wanted.has(p.id)) byId.set(p.id, { evidence: [...p.evidence], change: p.change });
        } catch (e) {
          log(`review details of ${sweepId}, page ${page}: ${(e as Error).message}`);
          notes.push(`the evidence of page ${page} could not be read`);
        }
      }
      const entityIds = [...new Set(pending.filter((p) => byId.has(p.proposalId)).map((p) => p.entityId))];
      if (entityIds.length > 0) {
        try {
          const catalog = await catalogs(meta.catalogRef);
          const { entities } = await catalog.getEntities(entityIds);
          const entity = new Map(entities.map((e) => [e.id, e]));
          for (const p of pending) {
            const d = byId.get(p.proposalId);
            if (d) d.current = catalogTextFor(entity.get(p.entityId), d.change);
          }
        } catch (e) {
          log(`catalog text for ${sweepId}: ${(e as Error).message}`);
          notes.push("the catalog's current text could not be read by this server (its log says why)");
        }
      }
      // A workflow id run again after its first run ended has a newer ledger than the one remembered.
      if (cached && byId.size === 0 && pending.length > 0) {
        metaOf.delete(sweepId);
        return details.of(sweepId, pending);
      }
      const missing = pending.filter((p) => !byId.has(p.proposalId)).length;
      if (missing > 0 && notes.length === 0) notes.push(`${missing} proposals have no recorded evidence`);
      return notes.length > 0 ? { byId, note: notes.join('; ') } : { byId };
    },
    close: () => store.close(),
  };
  return details;
}
