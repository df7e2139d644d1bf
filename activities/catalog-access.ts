import { FailureType } from '../domain/ids';
import { nonRetryableFailure } from './failures';
import { CatalogError, type CatalogAdapter } from '../catalog/adapter';
import { createCatalogContext, type CatalogContext } from '../judgment/catalog-context';
import { SweepStateMissing } from '../state/store';

/** Turn a catalog problem into the non-retryable failure the workflow reports. */
export function catalogFailure(e: unknown): never {
  if (e instanceof CatalogError) {
    throw nonRetryableFailure(FailureType.InvalidCatalog, e.message);
  }
  if (e instanceof SweepStateMissing) {
    throw nonRetryableFailure(FailureType.SweepStateMissing, e.message);
  }
  throw e;
}

/**
 * Every activity turns missing sweep state (SweepStateMissing) and a catalog problem (a file missing, a directory, unreadable, not a catalog; a database out of
 * reach) into the non-retryable InvalidCatalog failure naming it, wherever in the sweep it shows up: retrying
 * cannot fix it, and the person should see the cause, once.
 */
export function catalogErrorsAsFailures<T extends Record<string, (input: never) => Promise<unknown>>>(acts: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(acts)) {
    out[name] = async (input: never) => {
      try {
        return await fn(input);
      } catch (e) {
        return catalogFailure(e);
      }
    };
  }
  return out as T;
}

const contexts = new WeakMap<string[], CatalogContext>();

/** A lookup of every entity id in the catalog, cached while the set of ids is unchanged. */
export async function catalogContext(catalog: CatalogAdapter): Promise<CatalogContext> {
  const snap = await catalog.snapshot();
  let ctx = contexts.get(snap.ids);
  if (!ctx) {
    ctx = createCatalogContext(snap.ids);
    contexts.set(snap.ids, ctx);
  }
  return ctx;
}
