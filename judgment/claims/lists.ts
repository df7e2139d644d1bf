import type { CatalogEntity } from '../../domain/catalog';
import type { CatalogContext } from '../catalog-context';
import { singular, splitWords } from '../words';

/**
 * Lists of sources in prose: "joined from customer, address, city, country and payment", "built from
 * orders and payments", "combines x, y and z". Every name in such a list claims to be something the
 * entity is made from, so each must be in its recorded lineage, read by its SQL or referenced by its
 * keys. A name that is a catalog entity outside those is an invented source; a one-word name that is
 * no entity at all, in a list whose other names are entities, is one too. Words that are not names
 * ("customer data", "their orders' details") are left alone: the reader stays quiet when unsure.
 */

/** What the entity may be made from: the evidence a derivation list is checked against. */
export interface ListGround {
  entity: CatalogEntity;
  ctx: CatalogContext;
  /** Entity ids the text may name: itself, existing recorded upstream, tables its SQL reads, key targets. */
  related: ReadonlySet<string>;
  /** Recorded names, lowercase, whether or not they exist: upstream ids and their last parts, SQL table names. */
  recordedNames: ReadonlySet<string>;
  /** Lowercase identifiers of the entity's SQL (CTE names and aliases included). */
  sqlWords: ReadonlySet<string>;
  /**
   * Whether plain words may be names. A column's text lists the values it is computed from ("from order
   * and payment amounts"), whose words may spell a table's name by chance: there only identifiers count.
   */
  plainWords: boolean;
}

/** One list that names a source the evidence does not hold. */
export interface ListFinding {
  /** The verb and the list, as written. */
  phrase: string;
  /** Each name the evidence does not hold, with the entity id it resolves to when it is one. */
  missing: Array<{ name: string; id: string | undefined }>;
}

/**
 * A verb of derivation or provenance, and for joins the words that chain the next table ("joins X to
 * Y", "joined with X and Y"). Plain "from" is not one: "one row per order from the web shop" is prose.
 */
const VERB =
  /\b(?:(join(?:s|ed|ing)?)(?:\s+(?:from|with|to|on|against|onto))?|(?:built|builds?|building)\s+(?:from|on|upon|out\s+of)|(?:combin(?:es|ed|ing|e)|merg(?:es|ed|ing|e)|union(?:s|ed|ing)?|blend(?:s|ed|ing)?|summari[sz](?:es|ed|ing|e))(?:\s+(?:from|of|with))?|(?:derived|computed|calculated|assembled|compiled|aggregated|constructed|generated|produced|drawn|taken)\s+from|(?:composed|made\s+up)\s+of|aggregates|based\s+on|enrich(?:es|ed|ing)?\s+with|(?:sourced|comes?|coming|originat(?:es|ed|ing)|extracted|exported|imported|pulled|synced|replicated|ingested|loaded|copied|mirrored|landed|reads?|reading|selects?|selected)\s+(?:directly\s+)?(?:from|out\s+of)|reads)\s+/giu;

/** Where a list ends: a clause that says how, why or what else, not which tables. */
const LIST_END = new Set([
  ...['on', 'using', 'via', 'by', 'where', 'when', 'which', 'that', 'who', 'so', 'as', 'in', 'into', 'for', 'per'],
  ...['at', 'over', 'across', 'giving', 'showing', 'filtered', 'grouped', 'keyed', 'adding', 'add', 'adds', 'then'],
  ...['before', 'after', 'without', 'except', 'excluding', 'including', 'each', 'every', 'one', 'is', 'are', 'was'],
  ...['were', 'be', 'to', 'with', 'from', 'of', 'like', 'such', 'than', 'because', 'since', 'while', 'if', 'but'],
  // The next verb of the sentence ("built from orders joined to customers": its own list follows it).
  ...['joined', 'join', 'joins', 'combined', 'merged', 'unioned', 'aggregated', 'enriched', 'built', 'derived'],
  ...['deduplicated', 'grouped', 'summed', 'counted', 'computed', 'calculated', 'converted', 'excluded'],
]);
/** Words that chain the next name of a list; "to" and "with" too after a join ("joins X to Y"). */
const SEPARATOR = new Set(['and', 'plus', 'or', '&', 'along']);
const JOIN_SEPARATOR = new Set(['to', 'with', 'onto', 'against']);
/** Leading words that do not belong to a name. */
const DETERMINER = new Set(['the', 'a', 'an', 'its', 'their', 'his', 'her', 'our', 'your', 'both', 'all', 'also']);
/** Trailing words that say what kind of thing the name is. */
const KIND_NOUN = new Set(['table', 'tables', 'view', 'views', 'model', 'models', 'dataset', 'datasets', 'relation']);
/** One-word items that are never a table's name in a list of tables. */
const GENERIC = new Set([
  ...['data', 'records', 'rows', 'columns', 'fields', 'values', 'details', 'information', 'info', 'attributes'],
  ...['metadata', 'keys', 'ids', 'lookups', 'others', 'more', 'etc', 'sources', 'tables', 'views', 'itself', 'it'],
  ...['them', 'these', 'those', 'this', 'that', 'everything', 'other', 'several', 'many', 'various', 'some'],
]);
/** Longest name a list item may be, in words: longer items are prose and end the list. */
const MAX_ITEM_WORDS = 4;

interface Item {
  raw: string;
  words: string[];
}

/** The items of the list that starts at `rest`, up to the clause's end. */
function listItems(rest: string, join: boolean): Item[] {
  // A dot ends the clause only where a sentence ends: "raw.orders" is one name.
  const clause = rest.split(/[;:!?()\n[\]{}]|\.(?=\s|$)|\s[-–—]\s/u)[0] ?? '';
  // Tokens are words (with dots, underscores and backticks kept, so a dotted name stays one) and commas.
  const tokens = clause.match(/`[^`]+`|[\p{L}\p{N}_$."'’&-]+|,/gu) ?? [];
  const items: Item[] = [];
  let current: string[] = [];
  const flush = (): boolean => {
    let ws = current;
    current = [];
    while (ws.length > 0 && DETERMINER.has(ws[0]!.toLowerCase())) ws = ws.slice(1);
    while (ws.length > 1 && KIND_NOUN.has(ws[ws.length - 1]!.toLowerCase())) ws = ws.slice(0, -1);
    if (ws.length === 0) return true;
    if (ws.length > MAX_ITEM_WORDS) return false;
    const raw = ws.join(' ');
    const words = ws.flatMap((w) =>
      w.includes('.') || w.includes('_') || w.startsWith('`') ? [w.replace(/`/g, '').toLowerCase()] : splitWords(w),
    );
    // A possessive's "s" is not a word of the name ("a customer's orders").
    items.push({ raw, words: words.filter((w) => w !== 's') });
    return true;
  };
  for (const t of tokens) {
    const lower = t.toLowerCase().replace(/['’]s$/u, '');
    if (t === ',' || SEPARATOR.has(lower) || (join && JOIN_SEPARATOR.has(lower))) {
      if (!flush()) return items;
      continue;
    }
    if (LIST_END.has(lower)) break;
    current.push(t);
  }
  flush();
  return items;
}

/** The names an item may be written as: as is, words joined by underscores, singular and plural. */
function spellings(item: Item): string[] {
  const joined = item.words.join('_');
  const out = new Set([joined, item.words.map(singular).join('_'), `${joined}s`, item.words.join('')]);
  return [...out].filter((s) => s !== '');
}

type Reading = { kind: 'held' } | { kind: 'outside'; id: string } | { kind: 'unknown' } | { kind: 'not-a-name' };

function readItem(item: Item, g: ListGround): Reading {
  if (item.words.length === 0) return { kind: 'not-a-name' };
  if (!g.plainWords && !(item.words.length === 1 && /[._]/.test(item.words[0]!))) return { kind: 'not-a-name' };
  const names = spellings(item);
  // Recorded or read under that name (a dangling upstream, a CTE of the SQL): held, whatever it resolves to.
  for (const n of names) {
    if (g.recordedNames.has(n) || g.sqlWords.has(n)) return { kind: 'held' };
  }
  for (const n of names) {
    const id = g.ctx.resolve(n);
    if (id === undefined) continue;
    return id === g.entity.id || g.related.has(id) ? { kind: 'held' } : { kind: 'outside', id };
  }
  if (item.words.length === 1 && !GENERIC.has(item.words[0]!)) return { kind: 'unknown' };
  return { kind: 'not-a-name' };
}

/**
 * Each list after a verb of derivation that names a source the evidence does not hold. A list whose
 * items resolve to no entity at all is taken for prose and not reported.
 */
export function derivationListFindings(text: string, g: ListGround): ListFinding[] {
  const findings: ListFinding[] = [];
  for (const m of text.matchAll(VERB)) {
    const rest = text.slice(m.index + m[0].length);
    const items = listItems(rest, m[1] !== undefined);
    if (items.length === 0) continue;
    const readings = items.map((item) => ({ item, reading: readItem(item, g) }));
    const names = readings.filter((r) => r.reading.kind === 'held' || r.reading.kind === 'outside');
    if (names.length === 0) continue; // no item is a table: this is prose about the data
    const missing = readings.flatMap(({ item, reading }): ListFinding['missing'] => {
      if (reading.kind === 'outside') return [{ name: item.raw, id: reading.id }];
      if (reading.kind === 'unknown') return [{ name: item.raw, id: undefined }];
      return [];
    });
    if (missing.length === 0) continue;
    const last = items[items.length - 1]!.raw;
    const end = rest.indexOf(last);
    const phrase = (m[0] + (end >= 0 ? rest.slice(0, end + last.length) : items.map((i) => i.raw).join(', '))).trim();
    findings.push({ phrase, missing });
  }
  return findings;
}
