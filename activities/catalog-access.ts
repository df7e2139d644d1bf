import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { CatalogRef } from '../domain/sweep';
import { FailureType, catalogKey } from '../domain/ids';
import { digest64 } from '../domain/digest';
import { FileCatalogStore, CatalogFileError } from '../catalog/file-store';
import { bundledDemoCatalog } from './paths';
import { createCatalogContext, type CatalogContext } from './agents/catalog-context';

/** Resolve a catalog reference to a file: the demo is copied into the state folder once, then repaired there. */
export async function resolveCatalogFile(ref: CatalogRef, stateDir: string): Promise<string> {
  if (ref.kind === 'file') {
    const file = path.resolve(ref.path);
    const real = (p: string) => fs.realpath(p).catch(() => path.resolve(p));
    // The bundled demo is part of the checkout: repairing it would change a tracked file (and the next demo).
    if ((await real(file)) === (await real(bundledDemoCatalog())))
      throw new CatalogFileError(
        `${file} is ARGUS's bundled demo catalog, which is never a sweep target: sweep {"kind":"demo"} ` +
          '(it repairs a copy in the state folder) or sweep a copy of the file',
      );
    return file;
  }
  const target = path.join(stateDir, 'catalogs', 'demo.json');
  try {
    await fs.access(target);
  } catch {
    await fs.mkdir(path.dirname(target), { recursive: true });
    const tmp = `${target}.${process.pid}.tmp`;
    await fs.copyFile(bundledDemoCatalog(), tmp);
    await fs.rename(tmp, target);
  }
  return target;
}

/** One audit log per catalog file: named after the catalog, keyed by the file's absolute path. */
export function auditFileFor(stateDir: string, catalogFile: string, catalogName: string): string {
  return path.join(
    stateDir,
    'audit',
    `${catalogKey(catalogName)}-${digest64(path.resolve(catalogFile)).slice(0, 10)}.jsonl`,
  );
}

/** Turn a catalog file problem into the non-retryable failure the workflow reports. */
export function catalogFailure(e: unknown): never {
  if (e instanceof CatalogFileError) {
    throw ApplicationFailure.create({ type: FailureType.InvalidCatalog, message: e.message, nonRetryable: true });
  }
  throw e;
}

const contexts = new WeakMap<string[], CatalogContext>();

/** A lookup of every entity id in the catalog, cached while the set of ids is unchanged. */
export async function catalogContext(store: FileCatalogStore): Promise<CatalogContext> {
  const snap = await store.snapshot();
  let ctx = contexts.get(snap.ids);
  if (!ctx) {
    ctx = createCatalogContext(snap.ids);
    contexts.set(snap.ids, ctx);
  }
  return ctx;
}
