import type { CatalogColumn, CatalogEntity } from '../domain/catalog';
import { digest64, stableJson } from '../domain/digest';
import type { CatalogContext } from './catalog-context';
import { tablesReadBySql } from './sql/tables';

const byArgus = (h: { description?: string; description_source?: string }) =>
  h.description !== undefined && h.description_source === 'argus';

/**
 * An entity as judgment reads it when it is some other entity's neighbour: without what ARGUS itself wrote on it
 * (descriptions and PII tags of source `argus`). ARGUS's text is never evidence for another entity (an inherited
 * description is traced back to the person who wrote it), and activities/neighbours.ts hands out only this view,
 * so a write on one entity cannot change the judgment of the entities that read it. The entity itself when there
 * is nothing to leave out.
 */
export function evidenceView(e: CatalogEntity): CatalogEntity {
  const strip = (c: CatalogColumn) => byArgus(c) || c.tags.some((t) => t.source === 'argus');
  if (!byArgus(e) && !e.columns.some(strip)) return e;
  const view: CatalogEntity = { ...e, columns: e.columns.map((c) => (strip(c) ? bareColumn(c) : c)) };
  if (byArgus(e)) {
    delete view.description;
    delete view.description_source;
  }
  return view;
}

function bareColumn(c: CatalogColumn): CatalogColumn {
  const out: CatalogColumn = { ...c, tags: c.tags.filter((t) => t.source !== 'argus') };
  if (byArgus(c)) {
    delete out.description;
    delete out.description_source;
  }
  return out;
}

/** An entity's own fingerprints, each a digest of what one kind of reading reads of it (see effectiveFingerprints). */
export interface EntityPrints {
  /** Everything judgment reads of it: its whole record. */
  own: string;
  /** Without ARGUS's PII tags: what the PII classifier reads (a column's own tag only stops it proposing another). */
  pii: string;
  /** Its evidence view: what the description drafter reads of it, and what every entity reading it reads. */
  evidence: string;
}

/**
 * An entity's fingerprints when its catalog has no cheaper one: digests of everything judgment reads of it
 * (columns, types, keys, descriptions and their sources, tags, exceptions, lineage, SQL), in a stable form, one
 * per reading. What ARGUS wrote is digested apart, so the evidence view costs no second pass over the record.
 * `digest`: digest64 (pure), or a native one where Node is at hand (the same digest within a catalog's memory).
 */
export function entityPrints(e: CatalogEntity, digest: (text: string) => string = digest64): EntityPrints {
  const view = evidenceView(e);
  const evidence = digest(entityJson(view));
  if (view === e) return { own: evidence, pii: evidence, evidence };
  const texts: [string, string][] = [];
  const tags: [string, unknown][] = [];
  if (byArgus(e)) texts.push(['', e.description!]);
  for (const c of e.columns) {
    if (byArgus(c)) texts.push([c.name, c.description!]);
    const mine = c.tags.filter((t) => t.source === 'argus');
    if (mine.length) tags.push([c.name, mine]);
  }
  const pii = texts.length ? digest(`${evidence}\0${stableJson(texts)}`) : evidence;
  const own = tags.length ? digest(`${pii}\0${stableJson(tags)}`) : pii;
  return { own, pii, evidence };
}

// The keys of a catalog entity, of its columns and of their tags, sorted as stableJson sorts them.
const ENTITY_KEYS = [
  ...['columns', 'database', 'description', 'description_source', 'id', 'kind', 'layer', 'name'],
  ...['pii_exceptions', 'schema', 'sql', 'upstream'],
];
const COLUMN_KEYS = [
  ...['description', 'description_source', 'foreign_key', 'name', 'nullable', 'primary_key'],
  ...['tags', 'type'],
];
const TAG_KEYS = ['category', 'confidence', 'explanation', 'kind', 'proposalId', 'source'];

/**
 * stableJson of a catalog entity, the same text, written field by field: the fingerprints serialise every entity
 * of a catalog more than once per sweep, and the generic sorting walk allocates a sorted copy of every object. A
 * record with anything this walk does not know (a key, a value of another type) is left to stableJson.
 */
export function entityJson(e: CatalogEntity): string {
  return knownEntityJson(e) ?? stableJson(e);
}

/** entityJson's own walk: undefined for a record it leaves to stableJson. */
export function knownEntityJson(e: CatalogEntity): string | undefined {
  const out = record(e, ENTITY_KEYS, entityValue);
  return out === NOT_KNOWN ? undefined : out;
}

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const NOT_KNOWN = Symbol('not a known shape');
type Written = string | typeof NOT_KNOWN;

const scalar = (v: unknown): Written =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))
    ? JSON.stringify(v)
    : NOT_KNOWN;

function list(v: unknown, item: (x: unknown) => Written): Written {
  if (!Array.isArray(v)) return NOT_KNOWN;
  let out = '[';
  for (let i = 0; i < v.length; i++) {
    const x = item(v[i]);
    if (x === NOT_KNOWN) return NOT_KNOWN;
    out += (i ? ',' : '') + x;
  }
  return out + ']';
}

/** An object with only `keys` (sorted), each written by `value`; NOT_KNOWN when it has any other key. */
function record(o: unknown, keys: readonly string[], value: (key: string, v: unknown) => Written): Written {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return NOT_KNOWN;
  const r = o as Record<string, unknown>;
  let out = '{';
  let present = 0;
  for (const k of keys) {
    if (!hasOwn(r, k)) continue;
    present++;
    const v = r[k];
    if (v === undefined) continue;
    const x = value(k, v);
    if (x === NOT_KNOWN) return NOT_KNOWN;
    out += (out.length > 1 ? ',"' : '"') + k + '":' + x;
  }
  let own = 0;
  for (const k in r) if (hasOwn(r, k)) own++;
  return own === present ? out + '}' : NOT_KNOWN;
}

const tagJson = (t: unknown) => record(t, TAG_KEYS, (_k, v) => scalar(v));
const columnJson = (c: unknown) => record(c, COLUMN_KEYS, (k, v) => (k === 'tags' ? list(v, tagJson) : scalar(v)));
const entityValue = (k: string, v: unknown): Written =>
  k === 'columns'
    ? list(v, columnJson)
    : k === 'upstream' || k === 'pii_exceptions'
      ? list(v, (x) => (typeof x === 'string' ? JSON.stringify(x) : NOT_KNOWN))
      : scalar(v);

/**
 * What an entity names of the rest of the catalog, as its record says it: its recorded upstream ids, the tables its
 * SQL reads and the tables its foreign keys point at. What those names resolve to depends on the catalog around it
 * (readsFrom), so a sweep may keep these with an unchanged record and resolve them again.
 */
export interface EntityRefs {
  up: string[];
  sql: string[];
  fk: string[];
}

export function refsOf(e: CatalogEntity): EntityRefs {
  const fk: string[] = [];
  for (const c of e.columns) if (c.foreign_key) fk.push(c.foreign_key.split('.').slice(0, -1).join('.'));
  return { up: [...e.upstream], sql: e.sql ? tablesReadBySql(e.sql) : [], fk };
}

/**
 * What an entity's evidence reads of the rest of the catalog, from its references (refsOf) resolved in the catalog
 * as it is now: the entities its lineage and SQL name (their records feed inherited and derived descriptions and the
 * lineage check) and, for names that resolve to nothing, the name itself (a table created later changes the lineage
 * check); foreign keys only by whether they resolve.
 */
export function readsFrom(id: string, refs: EntityRefs, ctx: CatalogContext): { entities: string[]; names: string[] } {
  const entities = new Set<string>();
  const names = new Set<string>();
  for (const u of refs.up) (ctx.exists(u) ? entities : names).add(u);
  for (const t of refs.sql) {
    const to = ctx.resolve(t);
    if (to !== undefined) entities.add(to);
    else names.add(t);
  }
  for (const table of refs.fk) names.add(`fk:${table}:${ctx.resolve(table) ?? ''}`);
  entities.delete(id);
  return { entities: [...entities].sort(), names: [...names].sort() };
}

/** An entity's fingerprints as a sweep compares them, each combined with what it reads of its neighbours. */
export interface EffectivePrints {
  /** Its own record and the evidence views of the entities it reads, transitively: what its decisions rest on. */
  fp: string;
  /** Its evidence view and those of the entities it reads, transitively: what the drafter's judgment rests on. */
  ev: string;
  /** Its PII reading (EntityPrints.pii: the PII classifier reads the entity alone). */
  pii: string;
  /** What it reads of others alone: the evidence views of the entities it reads and the names that resolve to none. */
  tr: string;
}

/**
 * The fingerprints decisions rest on: an entity's own, combined with the evidence views of the entities it reads,
 * transitively (a description inherited over several hops changes when any hop does, and no hop's ARGUS-written
 * text counts: evidenceView). A cycle in the lineage is cut where it closes (the entity on the cycle contributes
 * its own evidence view). Pure and linear in entities plus edges.
 */
export function effectiveFingerprints(
  prints: ReadonlyMap<string, EntityPrints>,
  reads: ReadonlyMap<string, { entities: string[]; names: string[] }>,
): Map<string, EffectivePrints> {
  const out = new Map<string, EffectivePrints>();
  const onPath = new Set<string>();
  // Iterative depth-first walk: lineage chains of thousands must not overflow the stack.
  for (const root of prints.keys()) {
    if (out.has(root)) continue;
    const stack: { id: string; next: number }[] = [{ id: root, next: 0 }];
    onPath.add(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const deps = reads.get(top.id)?.entities ?? [];
      if (top.next < deps.length) {
        const d = deps[top.next++]!;
        if (!out.has(d) && !onPath.has(d) && prints.has(d)) {
          onPath.add(d);
          stack.push({ id: d, next: 0 });
        }
        continue;
      }
      const p = prints.get(top.id)!;
      const read: string[] = [];
      for (const d of deps) read.push(`${d}=${out.get(d)?.ev ?? prints.get(d)?.evidence ?? '-'}`);
      for (const n of reads.get(top.id)?.names ?? []) read.push(`?${n}`);
      const trail = read.join('\u0000');
      out.set(
        top.id,
        read.length === 0
          ? { fp: p.own, ev: p.evidence, pii: p.pii, tr: '-' }
          : {
              fp: digest64(`${p.own}\u0000${trail}`),
              ev: digest64(`${p.evidence}\u0000${trail}`),
              pii: p.pii,
              tr: digest64(trail),
            },
      );
      onPath.delete(top.id);
      stack.pop();
    }
  }
  return out;
}
