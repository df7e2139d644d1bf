import type { CatalogEntity } from '../domain/catalog';
import { nameWords, splitWords } from './catalog-context';
import { singular } from './words';

/**
 * Words that only restate what a catalog already shows of a column or table: its name, type,
 * nullability, keys, column list and recorded lineage. A description made of nothing else tells a
 * reader nothing new ("Usd rate: NUMERIC(18,8), not null.", "Table with 6 columns: a, b, c.").
 */
const SCHEMA_WORDS = new Set(
  `a an the of this that these those is are it its in for to and or with by as be may can
   table view column columns field fields entity entities record records row rows data value values
   nullable null not non no required optional mandatory primary key keys part composite foreign
   unique identifier identifiers id ids type typed types defined sql over recorded upstream
   catalog contains stores holds has have surrogate natural number numeric string text integer`
    .split(/\s+/)
    .filter((w) => w !== ''),
);

/**
 * True when a description of `entity` (or of its `column`) says nothing the catalog does not already
 * show. Such text is neither proposed, approved nor counted as coverage, whoever wrote it. A column
 * description that names the column's foreign-key target says where its values come from: informative.
 */
export function isRestatement(text: string, entity: CatalogEntity, columnName?: string): boolean {
  const own = placeWords(entity);
  const more = new Set<string>();
  const add = (s: string | undefined) => {
    if (s === undefined) return;
    for (const w of nameWords(s)) {
      more.add(w);
      more.add(singular(w));
    }
  };
  const lower = text.toLowerCase();
  if (columnName !== undefined) {
    const column = entity.columns.find((c) => c.name === columnName);
    if (column === undefined) return false;
    if (column.foreign_key !== undefined) {
      const target = column.foreign_key.toLowerCase();
      const table = target.split('.').slice(0, -1).join('.');
      if (lower.includes(target) || (table !== '' && lower.includes(table))) return false;
    }
    add(column.name);
    add(column.type);
  } else {
    for (const c of entity.columns) {
      add(c.name);
      add(c.type);
      add(c.foreign_key);
    }
    for (const up of entity.upstream) add(up);
  }
  const allowed = (w: string) => SCHEMA_WORDS.has(w) || own.has(w) || more.has(w);
  // "customer's": the possessive s is not a word of its own.
  return splitWords(text).every((w) => w === 's' || /^\d+$/.test(w) || allowed(w) || allowed(singular(w)));
}

/**
 * The words (and their singulars) of where an entity sits: its name, id, schema, database and layer. Counted
 * once per entity object while those stay the same (a sweep writes descriptions, tags and lineage, never these).
 */
function placeWords(entity: CatalogEntity): Set<string> {
  const key = `${entity.name}\0${entity.id}\0${entity.schema ?? ''}\0${entity.database}\0${entity.layer ?? ''}`;
  const hit = placeWordsKept.get(entity);
  if (hit?.key === key) return hit.words;
  const words = new Set<string>();
  for (const s of [entity.name, entity.id, entity.schema, entity.database, entity.layer]) {
    if (s === undefined) continue;
    for (const w of nameWords(s)) {
      words.add(w);
      words.add(singular(w));
    }
  }
  placeWordsKept.set(entity, { key, words });
  return words;
}
const placeWordsKept = new WeakMap<CatalogEntity, { key: string; words: Set<string> }>();

/** Words that say nothing about an entity beyond naming it ("The email column.", "Customers table."). */
const FILLER = new Set([
  'the',
  'a',
  'an',
  'of',
  'this',
  'that',
  'these',
  'table',
  'view',
  'column',
  'field',
  'entity',
  'is',
  'are',
  'for',
  'in',
  'data',
  'and',
  'it',
  'its',
  'to',
  'value',
  'values',
]);

/**
 * True when the text says nothing beyond the entity's (or column's) own name: empty, "Customers
 * table.", "The email column."
 */
export function isUninformative(text: string, entity: CatalogEntity, column?: string): boolean {
  let entityTokens = entityNameTokens.get(entity);
  if (!entityTokens) {
    entityTokens = new Set([...nameWords(entity.name), ...nameWords(entity.id)]);
    entityNameTokens.set(entity, entityTokens);
  }
  const columnTokens = column ? nameWords(column) : [];
  const known = (w: string) => entityTokens.has(w) || columnTokens.includes(w);
  return splitWords(text).every((w) => FILLER.has(w) || known(w) || known(singular(w)));
}

/** The words of an entity's name and id (neither changes during a sweep). */
const entityNameTokens = new WeakMap<CatalogEntity, Set<string>>();
