import { stableJson } from '../domain/digest';
import type { CatalogRef } from '../domain/sweep';
import type { CatalogAdapter, CatalogAdapterFactory } from './adapter';
import { openFileCatalog } from './file/adapter';
import { PostgresCatalogAdapter } from './postgres/adapter';
import { DbtCatalogAdapter } from './dbt/adapter';

export type { CatalogAdapter, CatalogAdapterFactory } from './adapter';

/**
 * The catalogs a worker can open, by `catalog.kind`: the file catalog and the demo copy (file/adapter.ts), live
 * PostgreSQL (postgres/adapter.ts, connection string from the worker's environment) and dbt projects
 * (dbt/adapter.ts). One adapter per catalog and worker, so connections and parsed files are shared by its
 * activities.
 */
export function createCatalogs(deps: {
  stateDir: string;
  bundledDemo: string;
  env: NodeJS.ProcessEnv;
}): CatalogAdapterFactory {
  const open = new Map<string, Promise<CatalogAdapter>>();
  // Async, so a catalog that cannot be opened (a constructor that throws) is a rejected promise like the rest.
  const make = async (ref: CatalogRef): Promise<CatalogAdapter> => {
    if (ref.kind === 'postgres') return new PostgresCatalogAdapter(ref, deps.env);
    if (ref.kind === 'dbt') return new DbtCatalogAdapter(ref, deps.stateDir, { env: deps.env });
    return openFileCatalog(ref, deps);
  };
  return (ref: CatalogRef) => {
    const key = stableJson(ref);
    let a = open.get(key);
    if (!a) {
      a = make(ref);
      // A catalog that cannot be opened is tried again next time (the file may appear, the variable be set).
      a.catch(() => open.delete(key));
      open.set(key, a);
    }
    return a;
  };
}
