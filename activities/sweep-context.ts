import type { CatalogAdapterFactory } from '../catalog/adapter';
import { SweepLedger } from './ledger';

export interface ActivityDeps {
  stateDir: string;
  /** Opens the catalog a sweep input names (catalog/): activities never construct a catalog themselves. */
  catalogs: CatalogAdapterFactory;
}

/** What every sweep activity needs: the sweep's ledger, and its catalog opened through the adapter factory. */
export function sweepContext(deps: ActivityDeps) {
  const ledgerFor = (key: string) => new SweepLedger(deps.stateDir, key);
  async function catalogOf(ledger: SweepLedger) {
    const meta = await ledger.meta();
    return { meta, catalog: await deps.catalogs(meta.catalogRef) };
  }
  return { ledgerFor, catalogOf };
}
