import type { EntityFailure } from '../domain/proposal';
import type { CatalogRef } from '../domain/sweep';
import { catalogStats } from '../judgment/catalog-stats';
import { sweepContext, type ActivityDeps } from './sweep-context';
import type { SweepLedger } from './ledger';

/** Failures a page returns to the workflow; all of them are in the ledger and the report. */
const MAX_RETURNED_FAILURES = 20;

const selections = new Map<string, Promise<string[] | undefined>>();
/** A sweep's selection, read once per worker (it never changes after the sweep's start). */
function selectionOf(ledger: SweepLedger): Promise<string[] | undefined> {
  let s = selections.get(ledger.ledgerKey);
  if (!s) {
    if (selections.size > 64) selections.delete(selections.keys().next().value!);
    s = ledger.selection();
    selections.set(ledger.ledgerKey, s);
    s.catch(() => selections.delete(ledger.ledgerKey));
  }
  return s;
}

/** Open the catalog a sweep names and read it page by page. */
export function createCatalogActivities(deps: ActivityDeps) {
  const { store, ledgerFor, catalogOf } = sweepContext(deps);
  return {
    /** Resolve and open the catalog and start the sweep's ledger. Raises InvalidCatalog (non-retryable). */
    async openCatalog(input: {
      sweepId: string;
      ledgerKey: string;
      catalog: CatalogRef;
      sampleRows?: number;
    }): Promise<{ catalogName: string; entityCount: number }> {
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
      return { catalogName: snap.name, entityCount: snap.ids.length };
    },

    /** Read one page of entity ids; records that fail validation come back as per-entity failures. */
    async loadCatalogPage(input: {
      ledgerKey: string;
      pageIndex: number;
      pageSize: number;
      /** Return the ids too (model agents fan out one activity per entity); otherwise only counts. */
      withIds?: boolean;
    }): Promise<{ ids: string[]; count: number; failures: EntityFailure[]; failureCount: number }> {
      const ledger = ledgerFor(input.ledgerKey);
      const { catalog } = await catalogOf(ledger);
      // A budget-fitted sweep pages through the entities it chose; any other through the whole catalog.
      const ids = (await selectionOf(ledger)) ?? (await catalog.snapshot()).ids;
      const slice = ids.slice(input.pageIndex * input.pageSize, (input.pageIndex + 1) * input.pageSize);
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
      // Coverage before the sweep, page by page: each entity belongs to one page and only that page's write
      // touches it, so the sums are the catalog's figures without a pass over the whole catalog.
      await ledger.writeStats(input.pageIndex, 'before', catalogStats(entities));
      // The history carries counts, not a page's ids: a 100,000-entity sweep would otherwise put megabytes in it.
      return {
        ids: input.withIds ? entities.map((e) => e.id) : [],
        count: entities.length,
        failures: failures.slice(0, MAX_RETURNED_FAILURES),
        failureCount: failures.length,
      };
    },
  };
}
