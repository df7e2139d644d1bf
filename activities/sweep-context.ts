import type { CatalogAdapterFactory } from '../catalog/adapter';
import type { SweepLedger, StateStore } from '../state/store';
import { fileStateStore } from '../state/file/store';
import { noMetrics, type SweepMetrics } from './metrics';

export interface ActivityDeps {
  /** The local state folder: the file store's home, the demo catalog's copy, dbt write records. */
  stateDir: string;
  /** Where sweep state lives; absent: the file store in `stateDir`. */
  store?: StateStore;
  /** Opens the catalog a sweep input names (catalog/): activities never construct a catalog themselves. */
  catalogs: CatalogAdapterFactory;
  /** Where activities count their work for operators (activities/metrics.ts); absent: nothing is counted. */
  metrics?: SweepMetrics;
  /**
   * The version of the rules this worker judges by (activities/judgment-key.ts); absent: the digest of its rule
   * sources. Given by tests and benches that stand for an upgraded worker.
   */
  rulesVersion?: string;
}

const fileStores = new Map<string, StateStore>();

/** The state store activities use: the injected one, else the file store in the state folder. */
export function storeOf(deps: Pick<ActivityDeps, 'stateDir' | 'store'>): StateStore {
  if (deps.store) return deps.store;
  let s = fileStores.get(deps.stateDir);
  if (!s) fileStores.set(deps.stateDir, (s = fileStateStore(deps.stateDir)));
  return s;
}

/** What every sweep activity needs: the sweep's ledger, its catalog opened through the adapter factory, the counters. */
export function sweepContext(deps: ActivityDeps) {
  const store = storeOf(deps);
  const metrics = deps.metrics ?? noMetrics;
  const ledgerFor = (key: string) => store.ledger(key);
  async function catalogOf(ledger: SweepLedger) {
    const meta = await ledger.meta();
    return { meta, catalog: await deps.catalogs(meta.catalogRef) };
  }
  return { store, ledgerFor, catalogOf, metrics };
}
