import type { CatalogAdapter } from '../catalog/adapter';
import type { CatalogEntity } from '../domain/catalog';
import type { CatalogContext } from '../judgment/catalog-context';
import { upstreamIds, type Neighbours } from '../judgment/description-evidence';

/** Hops of lineage loaded above a page: as far as an inherited description may travel. */
const MAX_HOPS = 8;
/** Entities loaded above one page at most: a page of 100 views over a wide fan-in stays bounded. */
const MAX_LOADED = 5000;

/**
 * The entities upstream of a page's entities, hop by hop, read through the adapter: what the drafter and
 * the gate need to inherit a person's description or read a derivation's source. Bounded in hops and in
 * count; an entity past the bound simply contributes nothing (no inheritance), it never fails the page.
 */
export async function loadNeighbours(
  catalog: CatalogAdapter,
  entities: CatalogEntity[],
  ctx: CatalogContext,
): Promise<Neighbours> {
  const known = new Map<string, CatalogEntity>(entities.map((e) => [e.id, e]));
  let frontier = entities;
  for (let hop = 0; hop < MAX_HOPS && frontier.length > 0 && known.size < MAX_LOADED; hop++) {
    const wanted = new Set<string>();
    for (const e of frontier)
      for (const id of upstreamIds(e, ctx)) if (!known.has(id) && ctx.exists(id)) wanted.add(id);
    if (wanted.size === 0) break;
    const ids = [...wanted].slice(0, MAX_LOADED - known.size);
    const { entities: loaded } = await catalog.getEntities(ids);
    for (const e of loaded) known.set(e.id, e);
    frontier = loaded;
  }
  return { get: (id) => known.get(id) };
}
