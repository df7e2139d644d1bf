import { stableJson } from '../domain/digest';
import type { CatalogRef } from '../domain/sweep';
import type { CatalogAdapter, CatalogAdapterFactory } from './adapter';
import { fileCatalogs } from './file-adapter';
import { PostgresCatalogAdapter } from './postgres/adapter';
import { DbtCatalogAdapter } from './dbt/adapter';

export type { CatalogAdapter, CatalogAdapterFactory } from './adapter';

/**
 * The catalogs a worker can open, by `catalog.kind`: the file catalog and the demo copy (file-adapter.ts), live
 * PostgreSQL (postgres/adapter.ts, connection string from the worker's environment) and dbt projects (dbt/adapter.ts). One adapter per
 * catalog and worker, so connections and parsed files are shared by its activities.
 */
export function createCatalogs(deps: {
  stateDir: string;
  bundledDemo: string;
  env: NodeJS.ProcessEnv;
}): CatalogAdapterFactory {
  const files = fileCatalogs(deps);
  const open = new Map<string, CatalogAdapter>();
  return async (ref: CatalogRef) => {
    if (ref.kind === 'demo' || ref.kind === 'file') return files(ref);
    const key = stableJson(ref);
    let a = open.get(key);
    if (!a) {
      a =
        ref.kind === 'postgres' ? new PostgresCatalogAdapter(ref, deps.env) : new DbtCatalogAdapter(ref, deps.stateDir);
      open.set(key, a);
    }
    return a;
  };
}
