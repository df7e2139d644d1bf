import type { CatalogColumn, CatalogEntity } from '../domain/catalog';
import { looksLikePii } from './pii/classifier';
import { isRestatement, isUninformative } from './informative';
import { basisOfArgusText } from './description-evidence';

/** Who or what an informative description came from. */
export interface DescriptionSources {
  human: number;
  inherited: number;
  derived: number;
  model: number;
}

/** A page's figures before or after its write: summed over pages, they are the catalog's. */
export interface CatalogStats {
  describable: number;
  /** Informative descriptions only: the sum of `sources`. */
  described: number;
  sources: DescriptionSources;
  /** Descriptions present that only restate the name, type or schema: not counted as described. */
  restatements: number;
  piiLooking: number;
  tagged: number;
}

export function emptyStats(): CatalogStats {
  return {
    describable: 0,
    described: 0,
    sources: { human: 0, inherited: 0, derived: 0, model: 0 },
    restatements: 0,
    piiLooking: 0,
    tagged: 0,
  };
}

/** Add `s` into `to` (figures stored by an older version lack sources and restatements: counted as human). */
export function addStats(to: CatalogStats, s: Partial<CatalogStats> | undefined): void {
  if (!s) return;
  to.describable += s.describable ?? 0;
  to.described += s.described ?? 0;
  const src = s.sources ?? { human: s.described ?? 0, inherited: 0, derived: 0, model: 0 };
  to.sources.human += src.human;
  to.sources.inherited += src.inherited;
  to.sources.derived += src.derived;
  to.sources.model += src.model;
  to.restatements += s.restatements ?? 0;
  to.piiLooking += s.piiLooking ?? 0;
  to.tagged += s.tagged ?? 0;
}

/**
 * One entity's figures, compact (the memory across sweeps keeps one per entity, so an unchanged entity is not
 * counted again): describable, then described by human, inherited, derived, model, then restatements,
 * piiLooking, tagged.
 */
export type StatsVector = [number, number, number, number, number, number, number, number];

/**
 * The prints an entity's figures can be remembered by (judgment/fingerprint.ts EntityPrints): `own`, of its whole
 * record, for the vector; `pii`, of all but ARGUS's PII tags (which no PII reading reads), for each column's
 * looksLikePii, which dominates the count.
 */
export interface FigurePrints {
  own: string;
  pii: string;
}

/**
 * Records whose figures are remembered by their prints, at most: a page's figures are counted before its writes and
 * after each part of them, each time on an entity read afresh, so a memory kept per object (looksLikePii's) misses
 * whenever the catalog outgrows the entities its store keeps. Some 200 bytes each; twice the pages in flight (ten
 * of a thousand by default) hold what a page asks again.
 */
const FIGURES_KEPT = 20_000;
const vectorsByPrint = new Map<string, StatsVector>();
/** Per column of a record (by its `pii` print): 0 not asked, 1 not PII-looking, 2 PII-looking. */
const looksByPrint = new Map<string, Uint8Array>();

function keepBounded<V>(m: Map<string, V>, key: string, value: V): void {
  if (m.size >= FIGURES_KEPT) m.delete(m.keys().next().value!);
  m.set(key, value);
}

/**
 * One entity's figures. With its prints, remembered by them: the same record (the same `own` print) has the same
 * figures, and the same record but for ARGUS's PII tags (the same `pii` print) the same PII-looking columns.
 */
export function statsVector(e: CatalogEntity, prints?: FigurePrints): StatsVector {
  const hit = prints && vectorsByPrint.get(prints.own);
  if (hit) return [...hit] as StatsVector;
  let looks: Uint8Array | undefined;
  if (prints) {
    looks = looksByPrint.get(prints.pii);
    if (!looks || looks.length !== e.columns.length)
      keepBounded(looksByPrint, prints.pii, (looks = new Uint8Array(e.columns.length)));
  }
  const s = emptyStats();
  countEntity(s, e, looks);
  const src = s.sources;
  const v: StatsVector = [
    s.describable,
    src.human,
    src.inherited,
    src.derived,
    src.model,
    s.restatements,
    s.piiLooking,
    s.tagged,
  ];
  if (prints) keepBounded(vectorsByPrint, prints.own, [...v] as StatsVector);
  return v;
}

/** Add an entity's vector into `to`. */
export function addVector(to: CatalogStats, v: Readonly<StatsVector>): void {
  to.describable += v[0];
  to.sources.human += v[1];
  to.sources.inherited += v[2];
  to.sources.derived += v[3];
  to.sources.model += v[4];
  to.described += v[1] + v[2] + v[3] + v[4];
  to.restatements += v[5];
  to.piiLooking += v[6];
  to.tagged += v[7];
}

/** Whether `v` is a vector this version reads (memory written by another may hold anything). */
export function isStatsVector(v: unknown): v is StatsVector {
  return Array.isArray(v) && v.length === 8 && v.every((x) => Number.isInteger(x) && x >= 0);
}

/**
 * Description coverage and PII governance of some entities. A description counts only when it tells a
 * reader something the catalog does not already show (isRestatement, isUninformative); each counted one
 * is attributed to a person, or to ARGUS by the form of its text (inherited, derived, else a model).
 */
export function catalogStats(entities: CatalogEntity[]): CatalogStats {
  const stats = emptyStats();
  for (const e of entities) countEntity(stats, e);
  return stats;
}

/** Count `e` into `stats`; `looks`: its columns' looksLikePii answers so far (catalogStats' memo), filled in. */
function countEntity(stats: CatalogStats, e: CatalogEntity, looks?: Uint8Array): void {
  const count = (holder: { description?: string; description_source?: string }, column?: string) => {
    const text = holder.description;
    if (text === undefined || text.trim() === '') return;
    if (isUninformative(text, e, column) || isRestatement(text, e, column)) {
      stats.restatements++;
      return;
    }
    stats.described++;
    stats.sources[holder.description_source === 'argus' ? basisOfArgusText(text) : 'human']++;
  };
  const looksLike = (c: CatalogColumn, i: number): boolean => {
    if (!looks) return looksLikePii(c, e);
    if (looks[i] === 0) looks[i] = looksLikePii(c, e) ? 2 : 1;
    return looks[i] === 2;
  };
  stats.describable += 1 + e.columns.length;
  count(e);
  e.columns.forEach((c, i) => {
    count(c, c.name);
    const isTagged = c.tags.some((t) => t.kind === 'pii');
    if (isTagged) stats.tagged++;
    if (isTagged || (!e.pii_exceptions.includes(c.name) && looksLike(c, i))) stats.piiLooking++;
  });
}
