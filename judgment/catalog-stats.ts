import type { CatalogEntity } from '../domain/catalog';
import { looksLikePii } from './pii-classifier';

/** A page's figures before or after its write: summed over pages, they are the catalog's. */
export interface CatalogStats {
  describable: number;
  described: number;
  piiLooking: number;
  tagged: number;
}

export function catalogStats(entities: CatalogEntity[]): CatalogStats {
  let describable = 0;
  let described = 0;
  let piiLooking = 0;
  let tagged = 0;
  for (const e of entities) {
    describable += 1 + e.columns.length;
    if (e.description?.trim()) described++;
    for (const c of e.columns) {
      if (c.description?.trim()) described++;
      const isTagged = c.tags.some((t) => t.kind === 'pii');
      if (isTagged) tagged++;
      if (isTagged || (!e.pii_exceptions.includes(c.name) && looksLikePii(c, e))) piiLooking++;
    }
  }
  return { describable, described, piiLooking, tagged };
}
