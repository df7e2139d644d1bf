import { log } from '@temporalio/activity';
import type { AgentName, EntityFailure } from '../domain/proposal';
import type { CatalogRef } from '../domain/sweep';
import type { CatalogEntity } from '../domain/catalog';
import {
  addStats,
  addVector,
  catalogStats,
  emptyStats,
  isStatsVector,
  type StatsVector,
} from '../judgment/catalog-stats';
import { sweepContext, type ActivityDeps } from './sweep-context';
import type { SweepLedger } from '../state/store';
import {
  createIncrementalActivities,
  figuresBeforeDocName,
  markScopes,
  markSettled,
  piiOnlyDocName,
  readersOnlyDocName,
  selectionDocName,
} from './incremental-activities';

/** Failures a page returns to the workflow; all of them are in the ledger and the report. */
const MAX_RETURNED_FAILURES = 20;

/**
 * A document of a pass, read once per worker (it never changes once the pass starts): `read` runs the first time a
 * sweep's pass asks; a failed read is forgotten, so the next asks again. At most `max` kept, the oldest dropped first.
 */
function perPass<T>(read: (ledger: SweepLedger, round: number) => Promise<T>, max = 64) {
  const kept = new Map<string, Promise<T>>();
  return (ledger: SweepLedger, round: number): Promise<T> => {
    const key = `${ledger.ledgerKey}#${round}`;
    let s = kept.get(key);
    if (!s) {
      if (kept.size >= max) kept.delete(kept.keys().next().value!);
      s = read(ledger, round);
      kept.set(key, s);
      s.catch(() => kept.delete(key));
    }
    return s;
  };
}

/**
 * A sweep's selection for a pass: pass 0's is what change detection or the budget chose (absent: the whole
 * catalog); a later pass's, what it re-judges.
 */
const selectionOf = perPass((ledger, round): Promise<string[] | undefined> =>
  round === 0 ? ledger.selection() : ledger.doc<string[]>(selectionDocName(round)).then((ids) => ids ?? []),
);

/** A pass's entities judged by some agents only (incremental-activities markScopes). */
const scopesIn = perPass((ledger, round) =>
  Promise.all([ledger.doc<string[]>(piiOnlyDocName(round)), ledger.doc<string[]>(readersOnlyDocName(round))]).then(
    ([pii, readers]) => ({ piiOnly: new Set(pii ?? []), readersOnly: new Set(readers ?? []) }),
  ),
);

/**
 * The figures the first pass's scan found per entity (none: a sweep without change detection, or an older one).
 * One vector per entity of the catalog: kept for a few sweeps at once only.
 */
const scannedFigures = perPass((ledger) => ledger.doc<Record<string, StatsVector>>(figuresBeforeDocName), 4);

/** A page's figures: summed from `known` per entity where it has them, the rest counted. */
function pageFigures(entities: CatalogEntity[], known: Readonly<Record<string, StatsVector>> | undefined) {
  if (!known) return catalogStats(entities);
  const rest: CatalogEntity[] = [];
  const stats = emptyStats();
  for (const e of entities) {
    const v = known[e.id];
    if (isStatsVector(v)) addVector(stats, v);
    else rest.push(e);
  }
  if (rest.length) addStats(stats, catalogStats(rest));
  return stats;
}

/** Open the catalog a sweep names and read it page by page. */
export function createCatalogActivities(deps: ActivityDeps) {
  const { store, ledgerFor, catalogOf, metrics } = sweepContext(deps);
  const { detectChanges } = createIncrementalActivities(deps);
  return {
    /**
     * Resolve and open the catalog and start the sweep's ledger. Raises InvalidCatalog (non-retryable). With
     * `detect`, change detection's first pass runs in the same step (one step fewer, what every sweep pays); a
     * detection that fails is no failure to open: `detected` is then absent and the workflow runs detectChanges.
     */
    async openCatalog(input: {
      sweepId: string;
      ledgerKey: string;
      catalog: CatalogRef;
      sampleRows?: number;
      detect?: Omit<Parameters<ReturnType<typeof createIncrementalActivities>['detectChanges']>[0], 'ledgerKey'>;
    }): Promise<{
      catalogName: string;
      entityCount: number;
      detected?: Awaited<ReturnType<ReturnType<typeof createIncrementalActivities>['detectChanges']>>;
    }> {
      const ledger = ledgerFor(input.ledgerKey);
      const catalog = await deps.catalogs(input.catalog);
      const snap = await catalog.snapshot();
      await ledger.writeMeta({
        sweepId: input.sweepId,
        ledgerKey: input.ledgerKey,
        catalogRef: input.catalog,
        catalogKey: catalog.identity.key,
        catalogLabel: catalog.identity.label,
        catalogName: snap.name,
        auditFile: store.auditKey(catalog.identity, snap.name),
        startedAt: new Date().toISOString(),
        ...(input.sampleRows !== undefined ? { sampleRows: input.sampleRows } : {}),
      });
      const opened = { catalogName: snap.name, entityCount: snap.ids.length };
      if (!input.detect) return opened;
      try {
        return { ...opened, detected: await detectChanges({ ...input.detect, ledgerKey: input.ledgerKey }) };
      } catch (e) {
        log.warn('change detection failed within openCatalog; the workflow runs it on its own', {
          error: String((e as Error).message ?? e).slice(0, 500),
        });
        return opened;
      }
    },

    /** Read one page of entity ids; records that fail validation come back as per-entity failures. */
    async loadCatalogPage(input: {
      ledgerKey: string;
      pageIndex: number;
      pageSize: number;
      /** Return the ids too (model agents fan out one activity per entity); otherwise only counts. */
      withIds?: boolean;
      /** A later pass (re-judging what earlier writes changed) and its first page; absent: pass 0 from page 0. */
      round?: number;
      firstPage?: number;
    }): Promise<{
      ids: string[];
      count: number;
      failures: EntityFailure[];
      failureCount: number;
      /** Agents with nothing to judge on the page (its entities are all PII-only, or all readers-only); absent: none. */
      skipAgents?: AgentName[];
    }> {
      const ledger = ledgerFor(input.ledgerKey);
      const { meta, catalog } = await catalogOf(ledger);
      // A budget-fitted sweep pages through the entities it chose; any other through the whole catalog.
      const ids = (await selectionOf(ledger, input.round ?? 0)) ?? (await catalog.snapshot()).ids;
      const at = input.pageIndex - (input.firstPage ?? 0);
      const slice = ids.slice(at * input.pageSize, (at + 1) * input.pageSize);
      const { entities, invalid } = await catalog.getEntities(slice);
      const failures: EntityFailure[] = invalid.map((i) => ({
        entity: i.id,
        stage: 'load',
        category: 'invalid_entity',
        retryable: false,
        message: i.message,
      }));
      await ledger.writeFailures(input.pageIndex, 'load', failures);
      await ledger.writePageIds(
        input.pageIndex,
        entities.map((e) => e.id),
      );
      const round = input.round ?? 0;
      const pageIds = entities.map((e) => e.id);
      await markSettled(ledger, round, input.pageIndex, pageIds);
      const skipAgents = await markScopes(ledger, input.pageIndex, pageIds, await scopesIn(ledger, round));
      // Coverage before the sweep, page by page: each entity belongs to one page and only that page's write
      // touches it, so the sums are the catalog's figures without a pass over the whole catalog. A first-pass page
      // sums what change detection's scan found (nothing has written on its entities since); a later pass counts.
      const known = round === 0 ? await scannedFigures(ledger, 0) : undefined;
      await ledger.writeStats(input.pageIndex, 'before', pageFigures(entities, known));
      metrics.entitiesJudged(meta.catalogRef.kind, entities.length);
      // The history carries counts, not a page's ids: a 100,000-entity sweep would otherwise put megabytes in it.
      return {
        ids: input.withIds ? entities.map((e) => e.id) : [],
        count: entities.length,
        failures: failures.slice(0, MAX_RETURNED_FAILURES),
        failureCount: failures.length,
        ...(skipAgents.length ? { skipAgents } : {}),
      };
    },
  };
}
