import type { CatalogColumn, CatalogEntity } from '../../domain/catalog';
import { nameWords, splitWords, type CatalogContext } from '../catalog-context';
import { singular } from '../words';
import { tablesReadBySql } from '../sql/tables';
import type { Neighbours } from '../description-evidence';
import { derivationListFindings } from './lists';
import { figureFindings } from './figures';

/**
 * Detectors for what a description may not assert: facts about the world that a schema and recorded
 * lineage cannot establish. Evidence is the entity's structure only (names, types, keys,
 * nullability, lineage ids, SQL): its existing descriptions are never read, so catalog text cannot
 * talk its way past the gate.
 */

export type ClaimKind =
  | 'cadence'
  | 'row-count'
  | 'ownership'
  | 'quality'
  | 'currency'
  | 'consumer'
  | 'provenance'
  | 'reference'
  | 'nullability'
  | 'schema'
  | 'derivation'
  | 'figure';

export interface UnsupportedClaim {
  kind: ClaimKind;
  /** The words in the description that made the claim. */
  phrase: string;
  /** One line for a reviewer: what was claimed and why the evidence does not carry it. */
  message: string;
}

const LABEL: Record<ClaimKind, string> = {
  cadence: 'refresh cadence',
  'row-count': 'row count or size',
  ownership: 'ownership',
  quality: 'data quality or trust',
  currency: 'freshness',
  consumer: 'downstream consumer',
  provenance: 'source system',
  reference: 'reference',
  nullability: 'nullability',
  schema: 'schema',
  derivation: 'source list',
  figure: 'figure or attribute',
};

/** Placeholders that replace names restated in prose before the phrase detectors run. */
const NAME_REF = ' NAMEREF ';
const LINEAGE_REF = ' LINEAGEREF ';

interface PhraseRule {
  kind: ClaimKind;
  re: RegExp;
}

const NUMBER = String.raw`\d[\d,._]*\s*(?:k|m|mm|b|bn|thousand|million|billion|trillion)?\+?`;
const APPROX = String.raw`(?:~\s*|about\s+|approximately\s+|approx\.?\s+|around\s+|roughly\s+|over\s+|nearly\s+|almost\s+|more\s+than\s+|fewer\s+than\s+|less\s+than\s+|under\s+|exactly\s+|some\s+)?`;

const PHRASES: PhraseRule[] = [
  {
    kind: 'cadence',
    re: /\b(?:daily|hourly|nightly|weekly|bi-?weekly|fortnightly|monthly|quarterly|yearly|annually)\b/giu,
  },
  {
    kind: 'cadence',
    re: /\bevery\s+(?:\d+\s+|few\s+|other\s+|couple\s+of\s+)?(?:seconds?|minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|months?|quarters?|years?|mornings?|evenings?|weekdays?)\b/giu,
  },
  {
    kind: 'cadence',
    re: /\b(?:once|twice|\d+\s+times)\s+(?:a|an|per|each)\s+(?:minute|hour|day|night|week|month|year)\b/giu,
  },
  { kind: 'cadence', re: /\b(?:near[-\s])?real[-\s]?time\b|\bstream(?:ing|ed)\b|\bcontinuously\b/giu },
  { kind: 'cadence', re: /\brefresh(?:ed|es|ing)?\b/giu },
  {
    kind: 'cadence',
    re: /\b(?:updated|loaded|reloaded|synced|synchroni[sz]ed|rebuilt|recomputed|ingested|materiali[sz]ed|runs?|scheduled)\s+(?:at|every|each|once|twice|by\s+(?:a|an|the)\s+(?:\w+\s+)?(?:job|pipeline|dag|cron|etl|elt|schedule|scheduler|process))\b/giu,
  },
  { kind: 'cadence', re: /\bcron\b|\bon\s+a\s+schedule\b|\bbatch\s+jobs?\b|\bincremental(?:ly)?\b|\bSLA\b/giu },

  {
    kind: 'row-count',
    re: new RegExp(
      String.raw`(?:~\s*)?\b${NUMBER}\s+(?:rows?|records?|entries|tuples)\b(?!\s+(?:per|for\s+each|for\s+every|each)\b)`,
      'giu',
    ),
  },
  { kind: 'row-count', re: /\b(?:dozens|hundreds|thousands|millions|billions)\s+of\s+(?:rows|records|entries)\b/giu },
  { kind: 'row-count', re: /\brow[-\s]?counts?\b|\bnumber\s+of\s+(?:rows|records)\b/giu },
  {
    kind: 'row-count',
    re: /\b(?:large|huge|massive|big|small|tiny|sizable|sizeable)\s+(?:table|view|dataset|data\s+set)\b/giu,
  },

  {
    kind: 'ownership',
    re: /\b(?:owned|maintained|managed|stewarded|curated|administered|governed|supported)\s+by\b/giu,
  },
  {
    kind: 'ownership',
    re: /\b(?:data|business|technical|product|table|dataset|system)\s+owners?\b|\bowners?\s*(?:is|are|:)|\bownership\b|\bstewards?(?:hip)?\b|\bmaintainers?\b|\bcustodians?\b|\bpoint\s+of\s+contact\b|\bon-?call\b/giu,
  },
  { kind: 'ownership', re: /\bteams?\b|\bsquads?\b/giu },
  { kind: 'ownership', re: /\bcontact\s+(?:@|the\b|us\b|me\b)|\breach\s+out\b|\bslack\b|(?:^|[\s(])#[a-z][\w-]+/giu },
  { kind: 'ownership', re: /(?:^|[\s(])@\w[\w.-]*|[\w.+-]+@[\w-]+\.[\w.-]+/giu },

  {
    kind: 'quality',
    re: /\b(?:high|good|excellent|great|poor|low|top|premium)[-\s]quality\b|\bdata\s+quality\b|\bquality[-\s](?:checked|assured|controlled)\b/giu,
  },
  {
    kind: 'quality',
    re: /\b(?:clean|cleaned|cleansed|scrubbed|validated|verified|trusted|trustworthy|reliable|reliably|accurate|accuracy|authoritative|certified|golden|gold[-\s]standard|canonical|deduplicated|de-duplicated|error[-\s]free|production[-\s](?:ready|grade)|audited|well[-\s]maintained)\b/giu,
  },
  {
    kind: 'quality',
    re: /\bsource\s+of\s+truth\b|\bsingle\s+source\b|\bsystem\s+of\s+record\b|\bno\s+duplicates\b|\bduplicate[-\s]free\b|\bcompleteness\b|\bcomprehensive\b|\bfully\s+populated\b/giu,
  },

  {
    kind: 'currency',
    re: /\bup[-\s]to[-\s](?:date|the[-\s](?:minute|second|hour))\b|\bcurrent\s+as\s+of\b|\bas\s+of\s+(?:today|now|yesterday|\d)|\bkept\s+current\b|\blive\s+data\b/giu,
  },
  { kind: 'currency', re: /\b(?:latest|most\s+recent|freshest|fresh|freshness|stale|staleness)\b/giu },
  { kind: 'currency', re: /\blast\s+(?:refreshed|loaded|synced|updated\s+(?:on\s+|at\s+)?\d)/giu },

  { kind: 'consumer', re: /\b(?:used|consumed|read|queried|relied\s+(?:on|upon)|referenced|accessed)\s+by\b/giu },
  { kind: 'consumer', re: /\bused\s+in\s+(?:the|a|an|our)\b/giu },
  {
    kind: 'consumer',
    re: /\bused\s+for\s+(?:the\s+|our\s+)?(?:\w+\s+)?(?:dashboards?|reports?|reporting|models?|forecasts?|forecasting|analytics|analysis|kpis?|metrics|billing|marketing|campaigns?|ml|machine\s+learning)\b/giu,
  },
  { kind: 'consumer', re: /\b(?:feeds|feeding|fed\s+(?:into|to)|powers|powering|drives|driving)\b/giu },
  {
    kind: 'consumer',
    re: /\bdashboards?\b|\blooker\b|\btableau\b|\bpower\s?bi\b|\bsuperset\b|\bmetabase\b|\bdownstream\b|\b(?:data|report|dashboard)\s+consumers?\b|\bconsumers?\s+of\s+(?:this|the)\b/giu,
  },
];

/** "sourced from X": a source-system claim unless X is recorded lineage (or read by the SQL). */
const PROVENANCE =
  /\b(?:sourced|comes?|coming|originat(?:es|ed|ing)|extracted|exported|imported|pulled|synced|replicated|ingested|loaded|copied|mirrored|landed)\s+(?:directly\s+)?(?:from|out\s+of)\b([^.;]{0,60})/giu;

/** "contains 500 <noun>": a size claim unless the noun is a schema unit. */
const CONTAINS_NUMBER = new RegExp(
  String.raw`\b(?:contains|containing|has|having|holds|holding|stores|storing|includes|including|with|of)\s+${APPROX}${NUMBER}\s+(\p{L}+)`,
  'giu',
);
const SCHEMA_UNITS = new Set([
  'column',
  'columns',
  'field',
  'fields',
  'attribute',
  'attributes',
  'key',
  'keys',
  'decimal',
  'decimals',
  'digit',
  'digits',
  'character',
  'characters',
  'chars',
  'byte',
  'bytes',
  'bit',
  'bits',
  'place',
  'places',
  'value',
  'values',
  'letter',
  'letters',
]);
const COLUMN_COUNT = /\b(\d+)\s+(?:columns?|fields)\b/giu;

const NOT_NULL =
  /\bno\s+nulls?\b|\bno\s+null\s+values\b|\bnever\s+(?:null|empty|blank|missing)\b|\bnot\s+null\b|\bnon[-\s]?null\b|\bnot\s+nullable\b|\bnon[-\s]?nullable\b|\balways\s+(?:populated|present|set|filled|provided)\b/giu;
const MAYBE_NULL =
  /(?<!\bnot\s+)(?<!\bnon[-\s]?)\bnullable\b|\b(?:may|can|might)\s+be\s+(?:null|empty|blank|missing)\b|\boptional\b/giu;

const NULL_HINT = /null|optional|populated|present|\bset\b|filled|provided|empty|blank|missing/iu;

const DOTTED = /(?<![\p{L}\p{N}_$.@/])[\p{L}_][\p{L}\p{N}_$]*(?:\.[\p{L}_][\p{L}\p{N}_$]*)+/gu;
const SNAKE = /(?<![\p{L}\p{N}_$])\p{L}[\p{L}\p{N}]*(?:_[\p{L}\p{N}]+)+(?![\p{L}\p{N}_$])/gu;
const BACKTICKED = /`([^`\n]{1,200})`/gu;
/** A superset of where DOTTED, SNAKE or BACKTICKED can match: a dot between two other characters, `_` or a backtick. */
const MAY_REFERENCE = /[^\s.]\.[^\s.]|[_`]/;

const RECENCY = new Set(['latest', 'last', 'recent', 'newest', 'current', 'max']);
const RECENCY_SYNONYMS = [['most', 'recent'], ['latest'], ['newest'], ['last']];

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
 * Messages, one per unsupported claim, for a proposed description of `entity` (or of its `column`).
 * Empty means nothing in the text goes beyond what the schema and recorded lineage establish.
 */
export function findUnsupportedClaims(
  text: string,
  entity: CatalogEntity,
  ctx: CatalogContext,
  column?: string,
): string[] {
  return detectUnsupportedClaims(text, entity, ctx, column).map((c) => c.message);
}

let combined: RegExp | undefined;
/**
 * One regular expression that matches wherever any phrase detector could (a superset: the number rule is
 * reduced to "verb + optional approximation + a digit"). Built without the `u` flag, which makes the
 * case-insensitive scan an order of magnitude faster; none of these sources needs it.
 */
function anyDetector(): RegExp {
  combined ??= new RegExp(
    [
      ...PHRASES.map((r) => r.re.source),
      PROVENANCE.source,
      String.raw`\b(?:contains|containing|has|having|holds|holding|stores|storing|includes|including|with|of)\s+${APPROX}\d`,
      COLUMN_COUNT.source,
    ]
      .map((x) => `(?:${x})`)
      .join('|'),
    'i',
  );
  return combined;
}

/** Like findUnsupportedClaims, with the kind of each claim (the gate's rule id comes from it). */
export function detectUnsupportedClaims(
  text: string,
  entity: CatalogEntity,
  ctx: CatalogContext,
  column?: string,
  neighbours?: Neighbours,
): UnsupportedClaim[] {
  const evidence = { ...buildEvidence(entity, ctx, column), neighbours };
  const claims: UnsupportedClaim[] = [];
  const seen = new Set<string>();
  const add = (kind: ClaimKind, phrase: string, why: string) => {
    const p = clip(phrase.replace(/\s+/g, ' ').trim());
    const key = `${kind}|${p.toLowerCase()}`;
    if (seen.has(key)) return;
    seen.add(key);
    claims.push({ kind, phrase: p, message: `${LABEL[kind]}: "${p}" ${why}` });
  };

  for (const sentence of text.split(/(?<=[.!?;])\s+|\n+/u)) {
    if (sentence.trim() === '') continue;
    if (NULL_HINT.test(sentence))
      for (const clause of sentence.split(/[,:;]|\band\b|\bbut\b/u)) checkNullability(clause, evidence, add);
    // Masking only replaces words with placeholders, so a sentence none of the detectors matches
    // unmasked cannot match masked either: skip the expensive part for plain restatements.
    if (!anyDetector().test(sentence)) continue;
    const masked = mask(sentence, evidence);
    for (const rule of PHRASES) {
      for (const m of masked.matchAll(rule.re))
        add(rule.kind, m[0], 'is not established by the schema or recorded lineage');
    }
    for (const m of masked.matchAll(PROVENANCE)) {
      if (!(m[1] ?? '').includes(LINEAGE_REF.trim()))
        add('provenance', m[0], 'names a source that is not in the recorded lineage');
    }
    for (const m of masked.matchAll(CONTAINS_NUMBER)) {
      const noun = (m[1] ?? '').toLowerCase();
      if (!SCHEMA_UNITS.has(noun)) add('row-count', m[0], 'is not established by the schema or recorded lineage');
    }
    for (const m of masked.matchAll(COLUMN_COUNT)) {
      if (Number(m[1]) !== entity.columns.length)
        add('schema', m[0], `contradicts the schema (${entity.columns.length} columns)`);
    }
  }
  checkReferences(text, evidence, add);
  // A name the reference rule already reported (a dotted or snake_case id) is not reported twice.
  const reported = new Set(claims.filter((c) => c.kind === 'reference').map((c) => c.phrase.toLowerCase()));
  checkDerivationLists(text, evidence, add, reported);
  // A column's own text describes the column itself: the figures a table claims to show are a table's.
  if (evidence.column === undefined && column === undefined) checkFigures(text, evidence, add);
  return claims;
}

/** Every name in a list after a verb of derivation must be in the lineage, the SQL or the keys. */
function checkDerivationLists(text: string, evidence: Evidence, add: Add, reported: ReadonlySet<string>): void {
  for (const f of derivationListFindings(text, { ...evidence, plainWords: evidence.column === undefined })) {
    const missing = f.missing.filter((m) => !reported.has(m.name.replace(/`/g, '').toLowerCase()));
    if (missing.length === 0) continue;
    const names = missing.map((m) =>
      m.id === undefined
        ? `${clip(m.name, 40)} (no such entity)`
        : clip(m.id === m.name ? m.id : `${m.name} (${m.id})`, 60),
    );
    const listed = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;
    add(
      'derivation',
      f.phrase,
      `names ${listed}, ${names.length === 1 ? 'which is' : 'which are'} not in this entity's recorded lineage, SQL or keys`,
    );
  }
}

/** A figure the text claims must be a column of the entity or of what it reads, or computed by its SQL. */
function checkFigures(text: string, evidence: Evidence, add: Add): void {
  const { entity, ctx, neighbours } = evidence;
  for (const f of figureFindings(text, { entity, ctx, neighbours }, evidence.sqlTables)) {
    add('figure', f.phrase, `is not a column of ${clip(entity.id)} or of what it reads, nor derivable from its SQL`);
  }
}

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

interface Evidence {
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

function buildEvidence(entity: CatalogEntity, ctx: CatalogContext, columnName: string | undefined): Evidence {
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

interface Mask {
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

interface TextToken {
  word: string;
  start: number;
  end: number;
  /** First / last word of an identifier-like run of letters, digits and underscores. */
  runStart: boolean;
  runEnd: boolean;
}

// Names are matched by walking word tokens rather than by building a pattern per name: compiling a
// Unicode-aware pattern costs about a millisecond, and a review may meet hundreds of new names.
const RUN = /[\p{L}\p{N}_]+/gu;
const PIECE = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|\p{L}+/gu;
const GAP = /^[\s_.-]*$/u;
const IDENT_CHAR = /[\p{L}\p{N}_$]/u;

/** The text's words, split the way nameWords splits names, with their offsets. */
function textTokens(text: string): TextToken[] {
  const tokens: TextToken[] = [];
  for (const run of text.matchAll(RUN)) {
    const pieces = [...run[0].matchAll(PIECE)];
    pieces.forEach((p, i) => {
      const start = run.index + p.index;
      tokens.push({
        word: p[0].toLowerCase(),
        start,
        end: start + p[0].length,
        runStart: i === 0,
        runEnd: i === pieces.length - 1,
      });
    });
  }
  return tokens;
}

/**
 * The span where `words` occur in order from token `i` as whole identifier runs, joined by nothing
 * (camelCase), spaces, underscores, dots or hyphens: "cust_first_name", "cust first name", "CustFirstName".
 */
function matchAt(text: string, tokens: TextToken[], i: number, words: string[]): [number, number] | undefined {
  const k = words.length;
  if (k === 0 || i + k > tokens.length || !tokens[i]!.runStart) return undefined;
  for (let j = 0; j < k; j++) {
    const t = tokens[i + j]!;
    if (t.word !== words[j] || (j > 0 && !GAP.test(text.slice(tokens[i + j - 1]!.end, t.start)))) return undefined;
  }
  return tokens[i + k - 1]!.runEnd ? [tokens[i]!.start, tokens[i + k - 1]!.end] : undefined;
}

function mentions(text: string, tokens: TextToken[], words: string[]): boolean {
  for (let i = 0; i < tokens.length; i++) if (matchAt(text, tokens, i, words)) return true;
  return false;
}

/**
 * Replace restated names with placeholders. Masks are tried in rank order (longest first; the entity's
 * before the column's on ties), each over the text from left to right, and a span is taken only if no
 * earlier one overlaps it. Only masks whose first word occurs in the text are looked at.
 */
function mask(text: string, evidence: Evidence): string {
  const tokens = textTokens(text);
  // [rank, start, end, placeholder]; base masks rank by index, the column's after all of them.
  const found: Array<[number, number, number, string]> = [];
  for (let i = 0; i < tokens.length; i++) {
    if (!tokens[i]!.runStart) continue;
    for (const mi of evidence.masksByFirst.get(tokens[i]!.word) ?? []) {
      const m = evidence.masks[mi]!;
      const span = matchAt(text, tokens, i, m.words);
      if (span) found.push([mi, span[0], span[1], m.placeholder]);
    }
    evidence.columnMasks.forEach((m, ci) => {
      const span = m.words[0] === tokens[i]!.word ? matchAt(text, tokens, i, m.words) : undefined;
      if (span) found.push([evidence.columnRanks[ci]!, span[0], span[1], m.placeholder]);
    });
  }
  if (found.length === 0) return text;
  found.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  const taken: Array<[number, number, string]> = [];
  for (const [, a, b, placeholder] of found) {
    if (!taken.some(([x, y]) => a < y && x < b)) taken.push([a, b, placeholder]);
  }
  taken.sort((p, q) => p[0] - q[0]);
  let out = '';
  let at = 0;
  for (const [a, b, placeholder] of taken) {
    out += text.slice(at, a) + placeholder;
    at = b;
  }
  return out + text.slice(at);
}

function literalNames(names: string[]): string[] {
  return [...new Set(names.map((n) => n.trim().toLowerCase()).filter((n) => n !== ''))].sort(
    (a, b) => b.length - a.length,
  );
}

const SPACES = ' '.repeat(256);
const blankOf = (n: number) => (n <= SPACES.length ? SPACES.slice(0, n) : ' '.repeat(n));

/**
 * Blank whole occurrences of `needle` (lowercase) in `text`, not parts of longer identifiers. `lower` is
 * `text` lowercased; both come back blanked alike, each occurrence replaced by as many spaces.
 */
function blankLiteral(text: string, lower: string, needle: string): [string, string] {
  let from = lower.indexOf(needle);
  if (from < 0) return [text, lower];
  let out = '';
  let outLower = '';
  let at = 0;
  for (let i = from; i >= 0; i = lower.indexOf(needle, from)) {
    const end = i + needle.length;
    const before = text[i - 1] ?? ' ';
    const after = text[end] ?? ' ';
    const joined =
      IDENT_CHAR.test(before) ||
      before === '.' ||
      IDENT_CHAR.test(after) ||
      (after === '.' && /[\p{L}_]/u.test(text[end + 1] ?? ''));
    if (joined) {
      from = i + 1;
    } else {
      out += text.slice(at, i) + blankOf(needle.length);
      outLower += lower.slice(at, i) + blankOf(needle.length);
      at = end;
      from = end;
    }
  }
  return at === 0 ? [text, lower] : [out + text.slice(at), outLower + lower.slice(at)];
}

type Add = (kind: ClaimKind, phrase: string, why: string) => void;

function checkNullability(clause: string, evidence: Evidence, add: Add): void {
  if (!NULL_HINT.test(clause)) return; // cheap pre-check: masking every clause is the slow part
  const masked = mask(clause, evidence);
  const notNull = [...masked.matchAll(NOT_NULL)].map((m) => m[0]);
  const maybeNull = [...masked.matchAll(MAYBE_NULL)].map((m) => m[0]);
  if (notNull.length === 0 && maybeNull.length === 0) return;

  let subjects: CatalogColumn[];
  if (evidence.column !== undefined) {
    subjects = [evidence.column];
  } else {
    const tokens = textTokens(clause);
    const mentioned = evidence.columnMentions.filter((c) => mentions(clause, tokens, c.words)).map((c) => c.column);
    subjects = mentioned.length > 0 ? mentioned : evidence.entity.columns;
  }
  const phrase = notNull[0];
  if (phrase !== undefined) {
    const nullable = subjects.find((c) => c.nullable);
    if (nullable) add('nullability', phrase, `but column ${clip(nullable.name)} is nullable`);
  }
  const maybe = maybeNull[0];
  if (maybe !== undefined && !subjects.some((c) => c.nullable)) {
    add(
      'nullability',
      maybe,
      `but ${subjects.length === 1 ? `column ${clip(subjects[0]!.name)} is` : 'these columns are'} not nullable`,
    );
  }
}

/**
 * Tables and columns named in plain words: "joins the order items table", "built from order items", "the discount
 * rate column". Only where the words stand as a name (before table/view/model/column, or after a verb of
 * derivation), so ordinary prose about orders or customers is not read as a reference.
 */
const PLAIN_RELATION =
  /\b(?:from|joins?|joined\s+(?:with|to|on)|reads?|built\s+(?:on|from)|based\s+on|derived\s+from|combines?|unions?|aggregates?)\s+(?:the\s+)?((?:[\p{L}][\p{L}\p{N}]*\s+){0,3}[\p{L}][\p{L}\p{N}]*)\s+(table|view|model|dataset|relation)s?\b|\b(?:the\s+)((?:[\p{L}][\p{L}\p{N}]*\s+){0,3}[\p{L}][\p{L}\p{N}]*)\s+(table|view|model|dataset|relation)\b/giu;
const PLAIN_COLUMN =
  /\b(?:the|a|an|its|new|derived|computed|output)\s+((?:[\p{L}][\p{L}\p{N}]*\s+){0,2}[\p{L}][\p{L}\p{N}]*)\s+(?:column|field)\b/giu;
/** Words before "column"/"table" that describe rather than name it. */
const NOT_A_NAME = new Set([
  'this',
  'that',
  'each',
  'every',
  'any',
  'same',
  'other',
  'first',
  'last',
  'next',
  'previous',
  'one',
  'only',
  'primary',
  'key',
  'foreign',
  'surrogate',
  'natural',
  'nullable',
  'optional',
  'required',
  'unique',
  'indexed',
  'source',
  'target',
  'upstream',
  'downstream',
  'parent',
  'child',
  'base',
  'main',
  'raw',
  'staging',
  'fact',
  'dimension',
  'lookup',
  'join',
  'bridge',
  'mapping',
  'reference',
  'audit',
  'history',
  'log',
  'summary',
  'following',
  'above',
  'below',
  'related',
  'underlying',
  'original',
  'single',
  'whole',
  'entire',
  'full',
]);

function checkPlainNames(text: string, evidence: Evidence, add: Add): void {
  const { ctx, related, entity } = evidence;
  const words = (phrase: string) =>
    phrase
      .toLowerCase()
      .split(/\s+/)
      .filter((w) => w.length > 0);
  const nameOf = (ws: string[]) => {
    // Leading describing words ("the raw order items table") are not part of the name.
    let i = 0;
    while (i < ws.length - 1 && NOT_A_NAME.has(ws[i]!)) i++;
    return ws.slice(i);
  };
  for (const m of text.matchAll(PLAIN_RELATION)) {
    const ws = nameOf(words(m[1] ?? m[3] ?? ''));
    if (ws.length === 0 || ws.every((w) => NOT_A_NAME.has(w) || evidence.knownWords.has(w))) continue;
    const joined = ws.join('_');
    const id = ctx.resolve(joined) ?? ctx.resolve(ws.map(singular).join('_'));
    if (id !== undefined && id !== entity.id && !related.has(id))
      add('reference', m[0].trim(), `names ${clip(id)}, which is not in this entity's recorded lineage, SQL or keys`);
  }
  if (evidence.column !== undefined) return; // a column's text naming "the X column" is about itself or a source
  const columnWords = evidence.columnMentions.map((c) => c.words.map((w) => w.toLowerCase()));
  for (const m of text.matchAll(PLAIN_COLUMN)) {
    const ws = nameOf(words(m[1] ?? ''));
    if (ws.length === 0 || ws.some((w) => NOT_A_NAME.has(w))) continue;
    if (ws.every((w) => evidence.knownWords.has(w))) continue; // a type, a column, a name the schema holds
    const joined = ws.join('_');
    if (evidence.ownColumns.has(joined)) continue;
    // "the amount column" for amount_usd: the words begin a column's name.
    if (columnWords.some((cw) => ws.every((w, i) => cw[i] === w || singular(cw[i] ?? '') === singular(w)))) continue;
    add('reference', m[0].trim(), `names a column ${clip(joined)}, which ${clip(entity.id)} does not have`);
  }
}

function checkReferences(text: string, evidence: Evidence, add: Add): void {
  checkPlainNames(text, evidence, add);
  // Only dotted names, snake_case words and backticked text can be references.
  if (!MAY_REFERENCE.test(text)) return;
  // Names the entity itself records (however odd their characters) are blanked first.
  let rest = text;
  let lower = text.toLowerCase();
  for (const name of evidence.literalNames) [rest, lower] = blankLiteral(rest, lower, name);
  for (const m of text.matchAll(BACKTICKED)) {
    const inner = (m[1] ?? '').trim();
    if (inner.includes('.')) checkDotted(inner.replace(/["[\]]/g, ''), evidence, add);
    else checkWord(inner, evidence, add);
    rest = rest.replace(m[0], ' ');
  }
  for (const m of rest.matchAll(DOTTED)) {
    checkDotted(m[0], evidence, add);
  }
  const withoutDotted = rest.replace(DOTTED, ' ');
  for (const m of withoutDotted.matchAll(SNAKE)) checkWord(m[0], evidence, add);
}

function checkDotted(token: string, evidence: Evidence, add: Add): void {
  const lower = token.toLowerCase();
  const parts = lower.split('.');
  if (parts.every((p) => p.length <= 2)) return; // e.g., i.e., a.k.a.
  if (evidence.knownDotted.has(lower)) return;
  const { ctx, related, entity } = evidence;
  const id = ctx.resolve(lower);
  if (id !== undefined) {
    if (!related.has(id)) add('reference', token, "is not in this entity's recorded lineage, SQL or keys");
    return;
  }
  const prefix = parts.slice(0, -1).join('.');
  const last = parts[parts.length - 1]!;
  const owner = prefix === '' ? undefined : ctx.resolve(prefix);
  if (owner === entity.id) {
    if (!evidence.ownColumns.has(last)) add('reference', token, `is not a column of ${clip(entity.id)}`);
    return;
  }
  if (owner !== undefined && related.has(owner)) {
    // A column of a related entity: checked against that entity when it is loaded, else accepted when the
    // SQL or schema names it.
    const loaded = evidence.neighbours?.get(owner);
    if (loaded !== undefined) {
      if (!loaded.columns.some((c) => c.name.toLowerCase() === last))
        add('reference', token, `is not a column of ${clip(owner)}`);
    } else if (!evidence.knownWords.has(last))
      add('reference', token, "is not a column this entity's SQL or schema names");
    return;
  }
  if (owner !== undefined) {
    add('reference', token, "is not in this entity's recorded lineage, SQL or keys");
    return;
  }
  add('reference', token, 'is not an entity in the catalog');
}

function checkWord(token: string, evidence: Evidence, add: Add): void {
  const lower = token.toLowerCase();
  if (evidence.knownWords.has(lower) || evidence.ownColumns.has(lower)) return;
  const id = evidence.ctx.resolve(lower);
  if (id !== undefined) {
    if (!evidence.related.has(id)) add('reference', token, "is not in this entity's recorded lineage, SQL or keys");
    return;
  }
  add('reference', token, `is not a column of ${clip(evidence.entity.id)}`);
}

function clip(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 3)}...`;
}
