import type { CatalogColumn, CatalogEntity } from '../../domain/catalog';
import type { CatalogContext } from '../catalog-context';
import type { Neighbours } from '../description-evidence';
import type { AggregateFn, Derivation } from '../sql/derivation';
import { readSelectShape } from '../sql/select-shape';
import { nameWords, singular, splitWords } from '../words';

/**
 * Figures and attributes claimed in a table's description: "showing lifetime spend", "with the number
 * of orders", "average basket size". A figure must be a column of the entity, a column of what it
 * reads, or derivable from its SQL (an aggregate there, or its identifiers and functions); otherwise
 * the text invents it. When what the entity reads is not known (an upstream not loaded, a SELECT * of
 * one), nothing is refuted: the gate only rejects what it can show is missing.
 */

/** What a figure may rest on. */
export interface FigureGround {
  entity: CatalogEntity;
  ctx: CatalogContext;
  /** Entities it reads or references, when loaded. */
  neighbours: Neighbours | undefined;
}

export interface FigureFinding {
  /** The figure as the text words it. */
  phrase: string;
}

type Aggregate = 'count' | 'sum' | 'avg' | 'median' | 'lifetime';

/** Words that name how a figure is aggregated, by kind. */
const AGGREGATE_WORDS: Record<string, Aggregate> = {
  number: 'count',
  count: 'count',
  counts: 'count',
  num: 'count',
  nb: 'count',
  cnt: 'count',
  qty: 'count',
  quantity: 'count',
  tally: 'count',
  total: 'sum',
  totals: 'sum',
  sum: 'sum',
  tot: 'sum',
  average: 'avg',
  avg: 'avg',
  mean: 'avg',
  median: 'median',
  lifetime: 'lifetime',
  ltv: 'lifetime',
  clv: 'lifetime',
  cumulative: 'lifetime',
};

/** Words that name a sum of money; any one stands for another ("lifetime spend" for lifetime_revenue). */
const MONEY = new Set([
  ...['spend', 'spent', 'spending', 'amount', 'amt', 'revenue', 'sales', 'sale', 'payment', 'paid', 'price'],
  ...['cost', 'value', 'gmv', 'turnover', 'charge', 'billed', 'fee', 'money', 'income', 'usd', 'eur', 'gbp'],
  ...['dollar', 'cents', 'cent'],
]);

/** Nouns that make a phrase a figure when no aggregate word does ("showing the refund rate"). */
const METRIC = new Set([
  ...MONEY,
  ...['rate', 'ratio', 'share', 'percentage', 'percent', 'pct', 'margin', 'profit', 'score', 'size', 'duration'],
  ...['tenure', 'balance', 'frequency', 'velocity', 'churn', 'retention', 'conversion', 'aov', 'arpu'],
]);

/** Words that carry no part of a figure's meaning. */
const FILLER = new Set([
  ...['the', 'a', 'an', 'of', 'each', 'every', 'its', 'their', 'his', 'her', 'our', 'all', 'any', 'this', 'that'],
  ...['these', 'those', 'how', 'many', 'much', 'and', 's', 'overall', 'whole', 'entire', 'current', 'running'],
]);

/** Where a figure's words stop: its grain, its source or the next clause. */
const PHRASE_END = new Set([
  ...['per', 'by', 'for', 'from', 'over', 'across', 'in', 'on', 'at', 'since', 'during', 'within', 'and', 'or'],
  ...['with', 'which', 'that', 'where', 'when', 'as', 'to', 'into', 'joined', 'built', 'derived', 'aggregated'],
  ...['grouped', 'computed', 'calculated', 'is', 'are', 'was', 'were', 'be', 'made', 'plus', 'including', 'if'],
  ...['than', 'so', 'but', 'while', 'because', 'using', 'via', 'one', 'row', 'rows', 'keyed', 'taken', 'read'],
  ...['against', 'versus', 'vs', 'relative', 'compared', 'between', 'among', 'under', 'above', 'below', 'up', 'out'],
  ...['has', 'have', 'had', 'does', 'do', 'can', 'may', 'will', 'would', 'should', 'must', 'not', 'no', 'only'],
  ...['behind', 'before', 'after', 'beyond', 'without', 'near', 'around', 'about', 'through', 'along', 'like'],
  ...['alongside', 'except', 'each', 'every', 'who', 'whose', 'how', 'what', 'whether', 'than', 'then'],
]);

/** Nouns of the schema itself: "a number of columns" is about the table's shape, which other rules read. */
const NOT_A_FIGURE = new Set([
  ...['column', 'field', 'row', 'record', 'entry', 'table', 'view', 'attribute', 'key', 'thing', 'way', 'reason'],
  ...['case', 'kind', 'type', 'part', 'source', 'time', 'sort', 'variety', 'lot', 'range', 'set', 'list'],
]);

/** Verbs that introduce what a table shows: each item after them is checked when it is a figure. */
const SHOWS =
  /\b(?:show(?:s|ing)?|list(?:s|ing)|report(?:s|ing)|track(?:s|ing)|giv(?:es|ing)|expos(?:es|ing)|measur(?:es|ing)|comput(?:es|ing)|calculat(?:es|ing)|summari[sz](?:es|ing)|with|includ(?:es|ing)|plus|add(?:s|ing)|hold(?:s|ing)|carr(?:ies|ying)|contain(?:s|ing))\s+/giu;
/**
 * Words that open a figure wherever they stand ("the number of orders", "average basket size"). Not
 * "a number of" (several), nor "mean" (usually the verb): after a verb of showing they still count.
 */
const HEAD = /(?<!\ba\s+)\b(?:number|count|total|sum|average|avg|median|lifetime|cumulative)\b/giu;

const NUMERIC_TYPE = /int|numeric|decimal|float|double|real|number|money|serial/i;
const KEY_WORDS = new Set(['id', 'key', 'code', 'uuid', 'guid', 'ref', 'sk', 'pk', 'fk']);
const MAX_PHRASE_WORDS = 5;

interface Claimed {
  phrase: string;
  aggregates: Set<Aggregate>;
  /**
   * The noun the figure is a figure of, its last content word ("spend" in lifetime spend, "orders" in
   * number of orders). Words before it qualify it ("daily reference rate") and are not required: a
   * reviewer that demands every adjective be a column rejects true texts.
   */
  head: string;
}

/** Words of a text span up to where a figure's words stop. */
function phraseAt(rest: string): string[] {
  const clause = rest.split(/[,;:!?()\n[\]{}]|\.(?=\s|$)|\s[-–—]\s/u)[0] ?? '';
  const out: string[] = [];
  for (const raw of clause.split(/\s+/u)) {
    if (raw === '') continue;
    const lower = raw.toLowerCase().replace(/['’]s$/u, '');
    if (out.length > 0 && PHRASE_END.has(lower)) break;
    // A participle or an adverb after the noun says what was done to it ("the amount converted to USD").
    if (out.length > 0 && /(?:ed|ly)$/.test(lower) && !MONEY.has(lower)) break;
    if (lower === 'of' && out.length > 0 && !(out[out.length - 1]! in AGGREGATE_WORDS)) break;
    out.push(lower);
    if (out.length >= MAX_PHRASE_WORDS) break;
  }
  return out;
}

function claimOf(words: string[]): Claimed | undefined {
  const aggregates = new Set<Aggregate>();
  const content: string[] = [];
  for (const w of words.flatMap((x) => splitWords(x))) {
    if (FILLER.has(w)) continue;
    const agg = AGGREGATE_WORDS[w];
    if (agg !== undefined) aggregates.add(agg);
    else content.push(singular(w));
  }
  // A figure needs something counted or summed, and a word that makes it a figure.
  const head = content[content.length - 1];
  if (head === undefined || NOT_A_FIGURE.has(head)) return undefined;
  if (aggregates.size === 0 && !content.some((w) => METRIC.has(w))) return undefined;
  const phrase = words.filter((w, i) => i > 0 || !FILLER.has(w)).join(' ');
  return { phrase, aggregates, head };
}

/** The figures a text claims: items after a verb of showing, and phrases opened by an aggregate word. */
function claimedFigures(text: string): Claimed[] {
  const found = new Map<string, Claimed>();
  const add = (words: string[]) => {
    const c = claimOf(words);
    if (c !== undefined && !found.has(c.phrase)) found.set(c.phrase, c);
  };
  for (const m of text.matchAll(SHOWS)) {
    // Each item of the list that follows ("showing X, Y and Z").
    let rest = text.slice(m.index + m[0].length);
    for (let i = 0; i < 6; i++) {
      const words = phraseAt(rest);
      if (words.length === 0) break;
      add(words);
      const next = /^[^,;.:!?()\n]*?(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or|plus)\s+)/iu.exec(rest);
      if (next === null) break;
      rest = rest.slice(next[0].length);
    }
  }
  for (const m of text.matchAll(HEAD)) {
    // Words before the head that belong to the figure ("customer lifetime value"): not needed to ground it.
    add(phraseAt(text.slice(m.index)));
  }
  // A phrase inside a longer one says nothing more ("lifetime spend" within "average lifetime spend").
  const all = [...found.values()];
  return all.filter(
    (c) => !all.some((o) => o !== c && o.phrase.length > c.phrase.length && o.phrase.includes(c.phrase)),
  );
}

// ---------------------------------------------------------------------------------------------
// Grounding

const STEM_MIN = 4;

/** Two words name the same thing: equal, singular alike, one a short extension of the other, or both money. */
function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  const sa = singular(a);
  const sb = singular(b);
  if (sa === sb) return true;
  const [short, long] = sa.length <= sb.length ? [sa, sb] : [sb, sa];
  if (short.length >= STEM_MIN && long.startsWith(short) && long.length - short.length <= 3) return true;
  return MONEY.has(sa) && MONEY.has(sb);
}

const FN_AGGREGATE: Record<AggregateFn, Aggregate[]> = {
  count: ['count', 'lifetime'],
  sum: ['sum', 'lifetime'],
  avg: ['avg'],
  min: [],
  max: [],
};

/** A column a figure may be: its words, its type, and what its SQL derivation aggregates. */
interface Candidate {
  words: string[];
  /** A numeric column that is not a key: an id counts nothing. */
  numeric: boolean;
  aggregates: Set<Aggregate>;
}

function candidateOf(column: CatalogColumn, derivation?: Derivation): Candidate {
  const words = nameWords(column.name);
  const aggregates = new Set<Aggregate>();
  for (const w of words) {
    const agg = AGGREGATE_WORDS[w];
    if (agg !== undefined) aggregates.add(agg);
  }
  if (derivation?.kind === 'aggregate') {
    for (const a of FN_AGGREGATE[derivation.fn]) aggregates.add(a);
    if (derivation.source !== undefined) words.push(...nameWords(derivation.source.column));
  }
  const key = column.primary_key || column.foreign_key !== undefined || KEY_WORDS.has(words[words.length - 1] ?? '');
  return { words, numeric: NUMERIC_TYPE.test(column.type) && !key, aggregates };
}

function covers(c: Candidate, claim: Claimed): boolean {
  // A sum of money may be named by its aggregate alone ("lifetime spend" for lifetime_total).
  const moneyTotal = MONEY.has(claim.head) && c.numeric && c.words.some((w) => AGGREGATE_WORDS[w] === 'sum');
  if (!moneyTotal && !c.words.some((cw) => sameWord(claim.head, cw))) return false;
  for (const agg of claim.aggregates) {
    if (c.aggregates.has(agg)) continue;
    // A count or a total is any numeric column that names the thing counted ("number of items" → items).
    if ((agg === 'count' || agg === 'sum') && c.numeric) continue;
    return false;
  }
  return true;
}

const SQL_AGGREGATE: Record<Aggregate, RegExp> = {
  count: /\bcount\s*\(/i,
  sum: /\bsum\s*\(/i,
  avg: /\bavg\s*\(/i,
  median: /\b(?:median|percentile_cont|percentile_disc|approx_median)\s*\(/i,
  lifetime: /\b(?:sum|count)\s*\(/i,
};

/** The SQL computes the figure: its identifiers hold the figure's noun and it calls each aggregate. */
function derivableFromSql(sql: string, claim: Claimed): boolean {
  const words = new Set(splitWords(sql.replace(/'[^']*'/g, ' ')));
  if (![...words].some((sw) => sameWord(claim.head, sw))) return false;
  return [...claim.aggregates].every((a) => SQL_AGGREGATE[a].test(sql));
}

/** Ids of what the entity reads: its existing recorded upstream and the tables its SQL reads. */
function readIds(entity: CatalogEntity, ctx: CatalogContext, sqlTables: string[]): string[] {
  const ids = new Set<string>();
  for (const id of entity.upstream) if (ctx.exists(id) && id !== entity.id) ids.add(id);
  for (const name of sqlTables) {
    const id = ctx.resolve(name);
    if (id !== undefined && id !== entity.id) ids.add(id);
  }
  return [...ids];
}

/**
 * The figures `text` claims that the entity neither has as a column, nor reads as one, nor computes in
 * its SQL. Empty when there is none, or when what the entity reads is not known well enough to say.
 */
export function figureFindings(text: string, g: FigureGround, sqlTables: string[]): FigureFinding[] {
  const claims = claimedFigures(text);
  if (claims.length === 0) return [];
  const { entity, ctx, neighbours } = g;
  const shape = entity.sql === undefined ? undefined : readSelectShape(entity.sql);
  const derivations = new Map(shape?.columns.map((c) => [c.name, c.derivation]) ?? []);
  const candidates = entity.columns.map((c) => candidateOf(c, derivations.get(c.name.toLowerCase())));

  const reads = readIds(entity, ctx, sqlTables);
  let unknownReads = false;
  for (const id of reads) {
    const loaded = neighbours?.get(id);
    if (loaded === undefined) {
      // Without SQL its upstream's columns are the only evidence; a SELECT * hides them from the SQL too.
      if (entity.sql === undefined || /\bselect\s+(?:distinct\s+)?\*|\w\.\*/i.test(entity.sql)) unknownReads = true;
      continue;
    }
    for (const c of loaded.columns) candidates.push(candidateOf(c));
  }
  for (const c of entity.columns) {
    const table = c.foreign_key?.split('.').slice(0, -1).join('.');
    const target = table ? ctx.resolve(table) : undefined;
    const loaded = target === undefined ? undefined : neighbours?.get(target);
    if (loaded !== undefined) for (const col of loaded.columns) candidates.push(candidateOf(col));
  }
  if (unknownReads) return [];

  return claims
    .filter((claim) => !candidates.some((c) => covers(c, claim)))
    .filter((claim) => entity.sql === undefined || !derivableFromSql(entity.sql, claim))
    .map((claim) => ({ phrase: claim.phrase }));
}
