import type { CatalogAdapter } from '../catalog/adapter';
import type { CatalogEntity } from '../domain/catalog';
import type { CatalogContext } from '../judgment/catalog-context';
import { descriptionFacts, forgetDescriptionFacts, type Neighbours } from '../judgment/description-evidence';
import { evidenceView } from '../judgment/fingerprint';

/** Rounds of loading: one per hop an inherited description may travel (judgment/description-evidence.ts). */
const MAX_ROUNDS = 9;
/** Entities loaded above one page at most; past it an entity simply contributes nothing (no inheritance). */
const MAX_LOADED = 20000;

/**
 * The entities upstream of a page's entities that their descriptions actually rest on, read through the
 * adapter: the evidence is computed, the upstream entities it asked for and did not have are loaded, and
 * again, hop by hop — so a chain is followed only where a pass-through still lacks a person's text, and a
 * wide fan-in costs only what is read. Bounded in rounds and in count; never fails the page for a miss.
 * A neighbour is handed out as its evidence view (without what ARGUS wrote on it), the very record its evidence
 * fingerprint digests: what ARGUS writes on one entity never changes the judgment of another.
 */
export async function loadNeighbours(
  catalog: CatalogAdapter,
  entities: CatalogEntity[],
  ctx: CatalogContext,
): Promise<Neighbours> {
  const known = new Map<string, CatalogEntity>(entities.map((e) => [e.id, e]));
  const unreadable = new Set<string>();
  let missing = new Set<string>();
  const asked = { now: false };
  const views = new Map<string, CatalogEntity>();
  // One object for every round and for the agents after: the facts an entity's evidence gave stay remembered
  // (descriptionFacts caches them per neighbours object), and only entities that asked for an entity not yet
  // loaded are computed again, so a page's evidence is computed about once, not once per round.
  const neighbours: Neighbours = {
    get(id) {
      const e = known.get(id);
      if (e === undefined) {
        if (!unreadable.has(id) && ctx.exists(id)) {
          missing.add(id);
          asked.now = true;
        }
        return undefined;
      }
      let v = views.get(id);
      if (v === undefined) views.set(id, (v = evidenceView(e)));
      return v;
    },
  };
  let todo = entities;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    missing = new Set();
    const askers: CatalogEntity[] = [];
    for (const e of todo) {
      asked.now = false;
      forgetDescriptionFacts(e, neighbours);
      descriptionFacts(e, ctx, neighbours);
      if (asked.now) askers.push(e);
    }
    const ids = [...missing].slice(0, Math.max(0, MAX_LOADED - known.size));
    if (ids.length === 0) return neighbours;
    const { entities: loaded } = await catalog.getEntities(ids);
    for (const e of loaded) known.set(e.id, e);
    for (const id of ids) if (!known.has(id)) unreadable.add(id);
    todo = askers;
  }
  // The last round's askers were computed before their last load: computed again when next asked.
  for (const e of todo) forgetDescriptionFacts(e, neighbours);
  return neighbours;
}

/** Pages whose drafter's neighbours are kept for their review, at most (ten pages in flight by default). */
const PAGES_KEPT = 16;
const kept = new Map<string, { entities: Map<string, CatalogEntity>; neighbours: Neighbours }>();

/**
 * Let go of the neighbours kept for the pages of `ledgerKey` (`page`: only that one). A review with no description
 * to check never asks for them, and a sweep's last pages leave theirs: each page's neighbourhood is megabytes.
 */
export function forgetPageNeighbours(ledgerKey: string, page?: number): void {
  if (page !== undefined) kept.delete(`${ledgerKey}#${page}`);
  else for (const key of [...kept.keys()]) if (key.startsWith(`${ledgerKey}#`)) kept.delete(key);
}

/**
 * A page's neighbours, loaded once for its drafter and its review: the review of a page whose entities are the very
 * objects the drafter judged gets the drafter's neighbours, and with them the evidence already computed
 * (descriptionFacts remembers it per neighbours object), so a page's evidence is computed once, not once per read.
 * `last`: the review, the page's last reader, which lets go of it. Otherwise loadNeighbours.
 */
export async function pageNeighbours(
  key: string,
  catalog: CatalogAdapter,
  entities: CatalogEntity[],
  ctx: CatalogContext,
  last = false,
): Promise<Neighbours> {
  const hit = kept.get(key);
  if (last) kept.delete(key);
  if (hit && entities.every((e) => hit.entities.get(e.id) === e)) return hit.neighbours;
  const neighbours = await loadNeighbours(catalog, entities, ctx);
  if (!last) {
    if (kept.size >= PAGES_KEPT) kept.delete(kept.keys().next().value!);
    kept.set(key, { entities: new Map(entities.map((e) => [e.id, e])), neighbours });
  }
  return neighbours;
}
