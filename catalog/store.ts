import type { CatalogEntity } from '../domain/catalog';

/** An entity record that failed validation: reported as a per-entity failure, never a failed sweep. */
export interface InvalidEntity {
  id: string;
  message: string;
}

export interface CatalogSnapshot {
  name: string;
  ids: string[];
}

/** A change the write step applies to one entity; `mutate` returns the before/after values it touched. */
export type EntityMutation = (entity: CatalogEntity) => { before: unknown; after: unknown } | null;

/** Options of one `CatalogStore.update` call. */
export interface UpdateOptions<T> {
  /**
   * Called with this call's result once every mutation of its group commit has run and the new catalog is
   * durably written beside the old one, before it replaces it. If it throws, nothing is replaced and every
   * call of the group rejects with that error. It is called even when the group changes nothing.
   */
  beforeReplace?: (result: T) => Promise<void>;
}

/**
 * A catalog ARGUS can read and repair. Implementations read in pages and apply a batch of mutations
 * atomically (all of a batch or none).
 */
export interface CatalogStore {
  snapshot(): Promise<CatalogSnapshot>;
  getEntities(ids: string[]): Promise<{ entities: CatalogEntity[]; invalid: InvalidEntity[] }>;
  allEntities(): Promise<{ entities: CatalogEntity[]; invalid: InvalidEntity[] }>;
  /** Apply mutations under an exclusive lock; the callback sees fresh entities. */
  update<T>(fn: (get: (id: string) => CatalogEntity | undefined) => T, opts?: UpdateOptions<T>): Promise<T>;
}
