/**
 * What the catalog itself establishes about a column or table beyond its name and type: a person's
 * description inherited along column lineage (through pass-throughs and renames, several hops), a
 * derivation read from the view's SQL (aggregate, cast, CASE mapping, constant arithmetic, COALESCE),
 * a relationship (foreign key), and for a table what a row is and where it comes from. Each fact is a
 * finished description with its basis and the evidence behind it. The no-model drafter proposes
 * exactly these texts, the gate recomputes them to verify a proposal, and the model prompt carries
 * them. Pure: the upstream entities come in through `Neighbours`.
 */
import type { CatalogColumn, CatalogEntity } from '../domain/catalog';
import type { CatalogContext } from './catalog-context';
import type { ColumnRef, Derivation } from './sql/derivation';
import { readSelectShape } from './sql/select-shape';
import { isRestatement } from './informative';
import { isOrder } from './words';

/** Entities near the one described: at least every entity it reads, and theirs, as far as lineage goes. */
export interface Neighbours {
  get(id: string): CatalogEntity | undefined;
}

export const NO_NEIGHBOURS: Neighbours = { get: () => undefined };

export type DescriptionBasis = 'inherited' | 'derived';

export interface DescriptionFact {
  text: string;
  basis: DescriptionBasis;
  /** Short lines saying what the text rests on (for the proposal's evidence). */
  evidence: string[];
}

export interface EntityFacts {
  table: DescriptionFact | undefined;
  columns: Map<string, DescriptionFact>;
}

/** Most hops an inherited description travels (a raw → staging → intermediate → mart chain is four). */
const MAX_HOPS = 8;
/** Longest description ARGUS writes; a longer person's text is cut at a sentence or not inherited. */
const MAX_TEXT = 1000;
const MAX_MAPPINGS_TEXT = 400;

/** The text ARGUS may copy from a person's description: its sentences that describe data, bounded. */
export function inheritableText(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const sentences = text
    .replace(/\s+/g, ' ')
    .trim()
    .split(/(?<=[.!?])\s+/u)
    .filter((s) => s !== '' && !isOrder(s)); // orders to a tool are never copied downstream
  let out = '';
  for (const s of sentences) {
    const next = out === '' ? s : `${out} ${s}`;
    if (next.length > MAX_TEXT - 120) break;
    out = next;
  }
  if (out === '') return undefined;
  return /[.!?]$/.test(out) ? out : `${out}.`;
}

function isHumanText(holder: { description?: string; description_source?: string }): boolean {
  return holder.description !== undefined && holder.description.trim() !== '' && holder.description_source !== 'argus';
}

function findColumn(entity: CatalogEntity, name: string): CatalogColumn | undefined {
  return (
    entity.columns.find((c) => c.name === name) ??
    entity.columns.find((c) => c.name.toLowerCase() === name.toLowerCase())
  );
}

const tick = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/** How `entity` gets its column `name`, when its SQL (or, without SQL, a unique same-named upstream column) says. */
function derivationOf(entity: CatalogEntity, name: string): Derivation | undefined {
  if (entity.sql !== undefined) {
    const shape = readSelectShape(entity.sql);
    if (shape === undefined) return undefined;
    const lower = name.toLowerCase();
    const listed = shape.columns.find((c) => c.name === lower);
    if (listed !== undefined) return listed.derivation;
    if (shape.starFrom.length === 1)
      return { kind: 'column', source: { table: shape.starFrom[0], column: lower }, renamed: false };
    return undefined;
  }
  return undefined;
}

/** The entity a SQL column reference reads, by the catalog's own ids. */
function tableOf(ref: ColumnRef, entity: CatalogEntity, ctx: CatalogContext): string | undefined {
  if (ref.table !== undefined) return ctx.resolve(ref.table);
  const read = entity.sql ? (readSelectShape(entity.sql)?.from ?? []) : [];
  const ids = [...new Set(read.map((t) => ctx.resolve(t)).filter((x): x is string => x !== undefined))];
  return ids.length === 1 ? ids[0] : undefined;
}

interface Origin {
  /** The upstream column whose person's text applies. */
  entity: CatalogEntity;
  column: CatalogColumn;
  /** Entities passed through between the described one and the origin. */
  via: string[];
  renamed: boolean;
}

/**
 * Follow a pass-through or rename back until a column with a person's description: multi-hop, each hop
 * read from that entity's own SQL (or a unique same-named column of its only upstream when it has none).
 */
function humanOrigin(
  entity: CatalogEntity,
  name: string,
  ctx: CatalogContext,
  neighbours: Neighbours,
  hops = 0,
  via: string[] = [],
  renamed = false,
): Origin | undefined {
  if (hops >= MAX_HOPS) return undefined;
  let upId: string | undefined;
  let upName: string;
  let rename = renamed;
  if (entity.sql !== undefined) {
    const d = derivationOf(entity, name);
    if (d?.kind !== 'column') return undefined;
    upId = tableOf(d.source, entity, ctx);
    upName = d.source.column;
    rename = rename || d.renamed;
  } else {
    // No SQL (a table loaded from upstream, a dbt model without compiled code): only a column of the same
    // name in the one upstream entity that has it.
    const having = [...new Set(entity.upstream)]
      .map((id) => neighbours.get(id))
      .filter((e): e is CatalogEntity => e !== undefined && findColumn(e, name) !== undefined);
    if (having.length !== 1) return undefined;
    upId = having[0]!.id;
    upName = name;
  }
  if (upId === undefined || upId === entity.id) return undefined;
  const up = neighbours.get(upId);
  const column = up === undefined ? undefined : findColumn(up, upName);
  if (up === undefined || column === undefined) return undefined;
  if (
    isHumanText(column) &&
    !isRestatement(column.description!, up, column.name) &&
    inheritableText(column.description)
  )
    return { entity: up, column, via, renamed: rename };
  return humanOrigin(up, column.name, ctx, neighbours, hops + 1, [...via, up.id], rename);
}

function inheritedSentence(origin: Origin, extra?: string): string {
  const via = origin.via.length > 0 ? ` through ${origin.via.map(tick).join(', ')}` : '';
  const tail = extra ? `, ${extra}` : '';
  return `Inherited from ${tick(`${origin.entity.id}.${origin.column.name}`)}${via}${tail}.`;
}

function refText(ref: ColumnRef, entity: CatalogEntity, ctx: CatalogContext): string {
  const id = tableOf(ref, entity, ctx);
  return tick(
    id !== undefined ? `${id}.${ref.column}` : ref.table !== undefined ? `${ref.table}.${ref.column}` : ref.column,
  );
}

function upstreamType(ref: ColumnRef, entity: CatalogEntity, ctx: CatalogContext, neighbours: Neighbours): string {
  const id = tableOf(ref, entity, ctx);
  const up = id === undefined ? undefined : neighbours.get(id);
  return (up === undefined ? undefined : findColumn(up, ref.column)?.type)?.toLowerCase() ?? '';
}

const OPS: Record<string, string> = { '/': 'divided by', '*': 'multiplied by', '+': 'plus', '-': 'minus' };

function perGroup(keys: ColumnRef[] | undefined): string {
  return keys === undefined ? '' : ` per ${keys.map((k) => tick(k.column)).join(', ')}`;
}

/** A derived description for one column from its SQL derivation, or undefined. */
function derivedText(
  entity: CatalogEntity,
  d: Derivation,
  ctx: CatalogContext,
  neighbours: Neighbours,
): { text: string; evidence: string } | undefined {
  switch (d.kind) {
    case 'column':
      return undefined; // a pass-through says something only with its origin's text (inheritance)
    case 'cast':
      return {
        text: `${refText(d.source, entity, ctx)} cast to ${d.type}.`,
        evidence: `sql: cast of ${d.source.column} to ${d.type}`,
      };
    case 'aggregate': {
      const per = perGroup(d.groupBy);
      const over = `${per === '' ? ' over all rows' : per}${d.filtered ? ' (of a subset of the rows it reads)' : ''}`;
      if (d.source === undefined) {
        const from = d.from.map((t) => ctx.resolve(t) ?? t);
        const rows = from.length === 1 ? `${tick(from[0]!)} rows` : 'rows';
        return { text: `Number of ${rows}${over}.`, evidence: `sql: count(*)${per}` };
      }
      const ref = refText(d.source, entity, ctx);
      const temporal = /date|time/.test(upstreamType(d.source, entity, ctx, neighbours));
      const lead =
        d.fn === 'sum'
          ? `Sum of ${ref}`
          : d.fn === 'avg'
            ? `Average of ${ref}`
            : d.fn === 'min'
              ? temporal
                ? `Earliest ${ref}`
                : `Minimum of ${ref}`
              : d.fn === 'max'
                ? temporal
                  ? `Latest ${ref}`
                  : `Maximum of ${ref}`
                : d.distinct
                  ? `Number of distinct ${ref} values`
                  : `Number of non-null ${ref} values`;
      return {
        text: `${lead}${over}.`,
        evidence: `sql: ${d.fn}(${d.distinct ? 'distinct ' : ''}${d.source.column})${per}`,
      };
    }
    case 'case': {
      const pairs = d.mapping.map(([a, b]) => `${a} → ${b}`);
      let list = '';
      let shown = 0;
      for (const p of pairs) {
        const next = list === '' ? p : `${list}, ${p}`;
        if (next.length > MAX_MAPPINGS_TEXT) break;
        list = next;
        shown++;
      }
      const more = shown < pairs.length ? ` and ${pairs.length - shown} more` : '';
      const rest = d.otherwise !== undefined ? `; anything else → ${d.otherwise}` : '; anything else → NULL';
      return {
        text: `Maps ${refText(d.source, entity, ctx)}: ${list}${more}${rest}.`,
        evidence: `sql: CASE over ${d.source.column} with ${d.mapping.length} branches`,
      };
    }
    case 'arithmetic':
      return {
        text: `${refText(d.source, entity, ctx)} ${OPS[d.op]} ${d.operand}.`,
        evidence: `sql: ${d.source.column} ${d.op} ${d.operand}`,
      };
    case 'coalesce':
      return {
        text: `${refText(d.source, entity, ctx)}, or ${d.fallback} when it is null.`,
        evidence: `sql: coalesce(${d.source.column}, ${d.fallback})`,
      };
  }
}

function columnFact(
  entity: CatalogEntity,
  column: CatalogColumn,
  ctx: CatalogContext,
  neighbours: Neighbours,
): DescriptionFact | undefined {
  const d = derivationOf(entity, column.name);
  const references =
    column.foreign_key !== undefined && ctx.resolve(column.foreign_key.split('.').slice(0, -1).join('.')) !== undefined
      ? `References ${tick(column.foreign_key)}.`
      : undefined;
  const withReference = (fact: DescriptionFact | undefined): DescriptionFact | undefined => {
    if (references === undefined) return fact;
    if (fact === undefined)
      return { text: references, basis: 'derived', evidence: [`foreign key: ${column.foreign_key}`] };
    return {
      ...fact,
      text: `${fact.text} ${references}`,
      evidence: [...fact.evidence, `foreign key: ${column.foreign_key}`],
    };
  };

  const origin =
    d === undefined || d.kind === 'column' || d.kind === 'cast'
      ? humanOrigin(entity, column.name, ctx, neighbours)
      : undefined;
  if (origin !== undefined && (d === undefined || d.kind === 'column')) {
    const text = inheritableText(origin.column.description)!;
    const note = origin.renamed ? `renamed from ${tick(origin.column.name)}` : undefined;
    return withReference({
      text: `${text} ${inheritedSentence(origin, note)}`,
      basis: 'inherited',
      evidence: [
        `inherited: person's description of ${origin.entity.id}.${origin.column.name}`,
        ...(origin.via.length ? [`through ${origin.via.join(' → ')}`] : []),
      ],
    });
  }
  if (d !== undefined && d.kind === 'cast') {
    const castOrigin = humanOriginOfCast(entity, d, ctx, neighbours);
    if (castOrigin !== undefined) {
      return withReference({
        text: `${inheritableText(castOrigin.column.description)!} ${inheritedSentence(castOrigin, `cast to ${d.type}`)}`,
        basis: 'inherited',
        evidence: [
          `inherited: person's description of ${castOrigin.entity.id}.${castOrigin.column.name}`,
          `sql: cast to ${d.type}`,
        ],
      });
    }
  }
  const derived = d === undefined ? undefined : derivedText(entity, d, ctx, neighbours);
  if (derived !== undefined)
    return withReference({ text: derived.text, basis: 'derived', evidence: [derived.evidence] });
  return withReference(undefined);
}

/** A cast keeps its source's meaning: the source column's own person's text (or its origin's) applies. */
function humanOriginOfCast(
  entity: CatalogEntity,
  d: Extract<Derivation, { kind: 'cast' }>,
  ctx: CatalogContext,
  neighbours: Neighbours,
): Origin | undefined {
  const upId = tableOf(d.source, entity, ctx);
  const up = upId === undefined ? undefined : neighbours.get(upId);
  const column = up === undefined ? undefined : findColumn(up, d.source.column);
  if (up === undefined || column === undefined) return undefined;
  if (
    isHumanText(column) &&
    !isRestatement(column.description!, up, column.name) &&
    inheritableText(column.description)
  )
    return { entity: up, column, via: [], renamed: false };
  return humanOrigin(up, column.name, ctx, neighbours, 1, [up.id]);
}

function tableFact(entity: CatalogEntity, ctx: CatalogContext, neighbours: Neighbours): DescriptionFact | undefined {
  if (entity.sql === undefined) return undefined;
  const shape = readSelectShape(entity.sql);
  if (shape === undefined) return undefined;
  const from = [...new Set(shape.from.map((t) => ctx.resolve(t)).filter((x): x is string => x !== undefined))];
  if (from.length === 0 || from.length !== new Set(shape.from).size) return undefined;
  if (shape.groupBy !== undefined) {
    const keys = shape.groupBy.map((k) => tick(k.column)).join(', ');
    const sources = from.map(tick).join(' and ');
    return {
      text: `One row per ${keys}, aggregated from ${sources}${shape.filtered ? ' (filtered)' : ''}.`,
      basis: 'derived',
      evidence: [`sql: group by ${shape.groupBy.map((k) => k.column).join(', ')} over ${from.join(', ')}`],
    };
  }
  if (from.length === 1 && !shape.joined) {
    const up = neighbours.get(from[0]!);
    if (up === undefined) return undefined;
    const own = isHumanText(up) && !isRestatement(up.description!, up) ? inheritableText(up.description) : undefined;
    if (own === undefined) return undefined;
    return {
      text: `${own} Inherited from ${tick(up.id)}${shape.filtered ? ', a filtered selection of its rows' : ', one row per row of it'}.`,
      basis: 'inherited',
      evidence: [
        `inherited: person's description of ${up.id}`,
        `sql: reads only ${up.id}${shape.filtered ? ' (a subset of its rows)' : ''}`,
      ],
    };
  }
  return undefined;
}

/**
 * Facts remembered per neighbours object, then per entity: they die with the neighbours they were computed from (a
 * page's, activities/neighbours.ts), not with the entity, which a catalog store may keep for many pages longer. Kept
 * per entity, each entry held its page's whole neighbourhood (every neighbour's view and its memos) alive as long as
 * any one of the page's entities was kept.
 */
const factsCache = new WeakMap<Neighbours, WeakMap<CatalogEntity, { ctx: CatalogContext; facts: EntityFacts }>>();

/** Drop `entity`'s facts computed with `neighbours`: they grew since (activities/neighbours.ts). */
export function forgetDescriptionFacts(entity: CatalogEntity, neighbours: Neighbours): void {
  factsCache.get(neighbours)?.delete(entity);
}

/** Every fact the catalog establishes about `entity`'s table and columns (only those with one appear). */
export function descriptionFacts(entity: CatalogEntity, ctx: CatalogContext, neighbours: Neighbours): EntityFacts {
  let kept = factsCache.get(neighbours);
  const hit = kept?.get(entity);
  if (hit && hit.ctx === ctx) return hit.facts;
  const columns = new Map<string, DescriptionFact>();
  for (const c of entity.columns) {
    const fact = columnFact(entity, c, ctx, neighbours);
    if (fact !== undefined && fact.text.length <= MAX_TEXT) columns.set(c.name, fact);
  }
  const table = tableFact(entity, ctx, neighbours);
  const facts = { table: table && table.text.length <= MAX_TEXT ? table : undefined, columns };
  if (!kept) factsCache.set(neighbours, (kept = new WeakMap()));
  kept.set(entity, { ctx, facts });
  return facts;
}

/** The sentence inheritedSentence and tableFact end an inherited text with (and an optional relationship). */
const INHERITED_TAIL =
  /\bInherited from `([^`]+)`(?: through `[^`]+`(?:, `[^`]+`)*)?(?:, renamed from `[^`]+`|, cast to [^`]+?|, one row per row of it|, a filtered selection of its rows)?\.(?: References `[^`]+`\.)?$/u;

/** What ARGUS's inherited `text` names as its origin (`entity.column`, or an entity for a table's text). */
export function inheritedFrom(text: string): string | undefined {
  return INHERITED_TAIL.exec(text.trim())?.[1];
}

/**
 * Whether ARGUS's inherited `text` (basisOfArgusText: 'inherited') on a table (`table`) or a column has lost what it
 * was copied from: the origin its "Inherited from" sentence names is in the catalog and read, and no longer holds a
 * person's text to inherit (its column is gone, or the text was removed or no longer says anything). An origin that
 * is not in the catalog or was not read proves nothing, and neither does one that still holds text (the lineage
 * may have moved): false.
 */
export function inheritedOriginGone(
  text: string,
  table: boolean,
  ctx: CatalogContext,
  neighbours: Neighbours,
): boolean {
  const named = inheritedFrom(text);
  if (named === undefined) return false;
  let upId: string | undefined;
  let columnName: string | undefined;
  if (table) upId = ctx.exists(named) ? named : undefined;
  else
    // `entity.column`, and ids hold dots too: the longest prefix that is an entity's id.
    for (let i = named.lastIndexOf('.'); i > 0; i = named.lastIndexOf('.', i - 1))
      if (ctx.exists(named.slice(0, i))) {
        upId = named.slice(0, i);
        columnName = named.slice(i + 1);
        break;
      }
  const up = upId === undefined ? undefined : neighbours.get(upId);
  if (up === undefined) return false;
  const holder = columnName === undefined ? up : up.columns.find((c) => c.name === columnName);
  if (holder === undefined) return true;
  return !(
    isHumanText(holder) &&
    !isRestatement(holder.description!, up, columnName) &&
    inheritableText(holder.description) !== undefined
  );
}

/**
 * What kind of ARGUS-written text this is, by the forms this module writes: an inherited text ends with
 * its "Inherited from `…`" sentence, a derived one starts with a derivation or a relationship. Any other
 * ARGUS text came from a model. (A person's text is 'human' whatever its form; see catalog-stats.)
 */
export function basisOfArgusText(text: string): DescriptionBasis | 'model' {
  const t = text.trim();
  if (INHERITED_TAIL.test(t)) return 'inherited';
  if (
    /^(?:(?:Sum|Average|Minimum|Maximum) of `|(?:Earliest|Latest) `|Number of (?:distinct |non-null )?`|Number of rows |Maps `|References `|One row per `)/u.test(
      t,
    ) ||
    /^`[^`]+` (?:cast to |divided by |multiplied by |plus |minus )/u.test(t) ||
    /^`[^`]+`, or .+ when it is null\./u.test(t)
  )
    return 'derived';
  return 'model';
}
