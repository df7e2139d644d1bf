import type { CatalogEntity } from '../domain/catalog';

/**
 * `compute` remembered per entity object while its table description is the same. For readings that rest on an
 * entity's name, description and columns: a sweep writes descriptions (and tags), never names or columns.
 */
export function perEntityAndDescription<T>(compute: (entity: CatalogEntity) => T): (entity: CatalogEntity) => T {
  const kept = new WeakMap<CatalogEntity, { description?: string; value: T }>();
  return (entity) => {
    const hit = kept.get(entity);
    if (hit && hit.description === entity.description) return hit.value;
    const value = compute(entity);
    kept.set(entity, { description: entity.description, value });
    return value;
  };
}
