/**
 * What a description of an entity may rest on: its structure only (names, types, keys, nullability, lineage
 * ids, SQL), never its existing descriptions. The names it may restate become masks, the ids it may mention
 * the related set; one column's own name adds its words.
 */
import type { CatalogColumn, CatalogEntity } from '../../domain/catalog';
import type { CatalogContext } from '../catalog-context';
import type { Neighbours } from '../description-evidence';
import { tablesReadBySql } from '../sql/tables';
import { nameWords } from '../words';

/** Placeholders that replace names restated in prose before the phrase detectors run. */
export const NAME_REF = ' NAMEREF ';
export const LINEAGE_REF = ' LINEAGEREF ';

/** A dotted name (schema.table, table.column): a reference, or a type's own dotted name. */
export const DOTTED = /(?<![\p{L}\p{N}_$.@/])[\p{L}_][\p{L}\p{N}_$]*(?:\.[\p{L}_][\p{L}\p{N}_$]*)+/gu;
const RECENCY = new Set(['latest', 'last', 'recent', 'newest', 'current', 'max']);
const RECENCY_SYNONYMS = [['most', 'recent'], ['latest'], ['newest'], ['last']];

export interface Evidence {
  entity: CatalogEntity;
  column: CatalogColumn | undefined;
  /** Restated names to mask before the phrase detectors run, longest first. */
  masks: Mask[];
  /** Indexes into `masks` by a mask's first word, so masking looks only at masks that can start at a word. */
  masksByFirst: Map<string, number[]>;
  /** What a column's own name adds (see withColumn), longest first; ranked after `masks` on ties. */
  columnMasks: Mask[];
  /** Where each column mask falls among `masks` in rank order (a fraction between two indexes). */
  columnRanks: number[];
  /** Each column's words, to find which columns a clause mentions. */
  columnMentions: { column: CatalogColumn; words: string[] }[];
  /** Entity ids a description may mention: itself, existing recorded upstream, tables its SQL reads, FK targets. */
  related: Set<string>;
  /** Lowercase dotted tokens grounded in the entity itself: id, FKs, types, own columns. */
  knownDotted: Set<string>;
  /** Lowercase words grounded in the entity itself: column names, type words, lineage name parts, SQL identifiers. */
  knownWords: Set<string>;
  ownColumns: Set<string>;
  /** Literal occurrences of recorded names (columns, types, ids, FKs, lineage ids), lowercase, longest first. */
  literalNames: string[];
  ctx: CatalogContext;
  /** The entities this one reads, when loaded: a column of one of them named in the text must exist. */
  neighbours?: Neighbours;
  /** Recorded names, lowercase, existing or not: upstream ids and last parts, SQL table names, key targets. */
  recordedNames: Set<string>;
  /** Lowercase identifiers of the entity's SQL. */
  sqlWords: Set<string>;
  /** The table names its SQL reads, as written. */
  sqlTables: string[];
}

// An entity's evidence depends only on its structure and the catalog's ids, and a page review asks for it once
// per proposal, an entity's proposals one after another: a few recent entities are kept, so memory stays flat
// however large the catalog. A column's additions are cheap and not kept.
const EVIDENCE_KEPT = 64;
const evidenceCache = new Map<CatalogEntity, { ctx: CatalogContext; base: Evidence }>();

export function buildEvidence(entity: CatalogEntity, ctx: CatalogContext, columnName: string | undefined): Evidence {
  let slot = evidenceCache.get(entity);
  if (!slot || slot.ctx !== ctx) {
    slot = { ctx, base: computeEvidence(entity, ctx, undefined) };
    evidenceCache.delete(entity);
    if (evidenceCache.size >= EVIDENCE_KEPT) evidenceCache.delete(evidenceCache.keys().next().value!);
    evidenceCache.set(entity, slot);
  }
  return columnName === undefined ? slot.base : withColumn(slot.base, columnName);
}

/** The entity's evidence plus what one column's own name establishes. */
function withColumn(base: Evidence, columnName: string): Evidence {
  const column = base.entity.columns.find((c) => c.name === columnName);
  const columnMasks: Mask[] = [];
  // A column's own description may restate the words of its name in any order ("when the row was
  // last refreshed" for refreshed_at): those words are the evidence, not a claim.
  if (column !== undefined) {
    const own = nameWords(column.name);
    for (const w of own) if (w.length >= 3) columnMasks.push(makeMask([w], NAME_REF));
    // latest_order_at may be described as "the most recent order": recency is the column's meaning.
    if (own.some((w) => RECENCY.has(w))) for (const syn of RECENCY_SYNONYMS) columnMasks.push(makeMask(syn, NAME_REF));
  }
  columnMasks.sort(longestFirst);
  // The rank a stable sort of [...masks, ...columnMasks] would give: after every entity mask that is as
  // long or longer, before the shorter ones, in their own order among themselves.
  const columnRanks = columnMasks.map((m, i) => {
    let gap = 0;
    while (gap < base.masks.length && longestFirst(base.masks[gap]!, m) <= 0) gap++;
    return gap - 0.5 + i / 1e6;
  });
  return { ...base, column, columnMasks, columnRanks };
}

/** Longer names mask first: more words, then more letters. */
function longestFirst(a: Mask, b: Mask): number {
  return b.words.length - a.words.length || b.chars - a.chars;
}

function computeEvidence(entity: CatalogEntity, ctx: CatalogContext, columnName: string | undefined): Evidence {
  const column = columnName === undefined ? undefined : entity.columns.find((c) => c.name === columnName);
  const related = new Set<string>([entity.id]);
  const lineageNames = new Set<string>();
  const addLineage = (id: string) => {
    related.add(id);
    lineageNames.add(id);
    const parts = id.split('.');
    lineageNames.add(parts[parts.length - 1]!);
  };
  for (const id of entity.upstream) if (ctx.exists(id)) addLineage(id);
  const sqlNames = entity.sql === undefined ? [] : tablesReadBySql(entity.sql);
  for (const name of sqlNames) {
    const id = ctx.resolve(name);
    if (id !== undefined) {
      addLineage(id);
      lineageNames.add(name);
    }
  }

  const knownDotted = new Set<string>([entity.id.toLowerCase()]);
  const knownWords = new Set<string>([entity.name.toLowerCase(), ...entity.id.toLowerCase().split('.')]);
  for (const c of entity.columns) {
    const lower = c.name.toLowerCase();
    knownWords.add(lower);
    if (lower.includes('.')) knownDotted.add(lower);
    knownDotted.add(`${entity.name.toLowerCase()}.${lower}`);
    knownDotted.add(`${entity.id.toLowerCase()}.${lower}`);
    const typeTokens = tokensOfType(c.type);
    for (const t of typeTokens.dotted) knownDotted.add(t);
    for (const t of typeTokens.words) knownWords.add(t);
    if (c.foreign_key !== undefined) {
      const fk = c.foreign_key.toLowerCase();
      knownDotted.add(fk);
      const table = fk.split('.').slice(0, -1).join('.');
      if (table !== '') {
        knownDotted.add(table);
        const target = ctx.resolve(table);
        if (target !== undefined) related.add(target);
      }
      for (const p of fk.split('.')) knownWords.add(p);
    }
  }
  for (const n of lineageNames) for (const p of n.toLowerCase().split('.')) knownWords.add(p);
  const sqlWords = new Set<string>();
  if (entity.sql !== undefined) {
    for (const w of entity.sql.toLowerCase().match(/[\p{L}_][\p{L}\p{N}_$]*/gu) ?? []) {
      knownWords.add(w);
      sqlWords.add(w);
    }
  }
  // What the entity records as its sources, whether or not the catalog holds them (a dangling upstream).
  const recordedNames = new Set<string>();
  const recordName = (name: string) => {
    const lower = name.toLowerCase();
    recordedNames.add(lower);
    const parts = lower.split('.');
    recordedNames.add(parts[parts.length - 1]!);
  };
  for (const id of entity.upstream) recordName(id);
  for (const name of sqlNames) recordName(name);
  for (const c of entity.columns) {
    const table = c.foreign_key?.split('.').slice(0, -1).join('.');
    if (table) recordName(table);
  }

  const masks: Mask[] = [];
  const nameMask = (name: string, placeholder = NAME_REF) => {
    const words = nameWords(name);
    if (words.length > 0) masks.push(makeMask(words, placeholder));
  };
  nameMask(entity.name);
  nameMask(entity.id);
  if (entity.schema !== undefined) nameMask(entity.schema);
  for (const c of entity.columns) {
    nameMask(c.name);
    if (c.foreign_key !== undefined) nameMask(c.foreign_key);
  }
  for (const n of lineageNames) nameMask(n, LINEAGE_REF);
  masks.sort(longestFirst);
  const masksByFirst = new Map<string, number[]>();
  masks.forEach((m, i) => {
    const list = masksByFirst.get(m.words[0]!);
    if (list) list.push(i);
    else masksByFirst.set(m.words[0]!, [i]);
  });

  return {
    entity,
    column,
    masks,
    masksByFirst,
    columnMasks: [],
    columnRanks: [],
    columnMentions: entity.columns
      .map((c) => ({ column: c, words: nameWords(c.name) }))
      .filter((c) => c.words.length > 0),
    related,
    knownDotted,
    knownWords,
    ownColumns: new Set(entity.columns.map((c) => c.name.toLowerCase())),
    literalNames: literalNames([
      entity.id,
      entity.name,
      ...entity.columns.flatMap((c) => [c.name, c.type, c.foreign_key ?? '']),
      ...[...related],
      ...lineageNames,
    ]),
    ctx,
    recordedNames,
    sqlWords,
    sqlTables: sqlNames,
  };
}

/** The dotted names and words of a column type ("numeric(12,2)", "myschema.money"): a few hundred types repeat. */
const typeTokenCache = new Map<string, { dotted: string[]; words: string[] }>();
function tokensOfType(type: string): { dotted: string[]; words: string[] } {
  let hit = typeTokenCache.get(type);
  if (!hit) {
    const lower = type.toLowerCase();
    hit = { dotted: lower.match(DOTTED) ?? [], words: lower.split(/[^\p{L}\p{N}_$]+/u).filter((t) => t !== '') };
    if (typeTokenCache.size >= 2000) typeTokenCache.clear();
    typeTokenCache.set(type, hit);
  }
  return hit;
}

export interface Mask {
  words: string[];
  placeholder: string;
  /** Letters in the words, for ordering. */
  chars: number;
}

function makeMask(words: string[], placeholder: string): Mask {
  let chars = 0;
  for (const w of words) chars += w.length;
  return { words, placeholder, chars };
}

function literalNames(names: string[]): string[] {
  return [...new Set(names.map((n) => n.trim().toLowerCase()).filter((n) => n !== ''))].sort(
    (a, b) => b.length - a.length,
  );
}
