/**
 * The phrases a description may not use: refresh cadence, row counts and sizes, ownership, quality, freshness,
 * downstream consumers, source systems, a column count that contradicts the schema. Regular expressions only;
 * what they match is reported after restated names are masked (judgment/claims/masking.ts).
 */
import type { ClaimKind } from './claim';

interface PhraseRule {
  kind: ClaimKind;
  re: RegExp;
}

const NUMBER = String.raw`\d[\d,._]*\s*(?:k|m|mm|b|bn|thousand|million|billion|trillion)?\+?`;
const APPROX = String.raw`(?:~\s*|about\s+|approximately\s+|approx\.?\s+|around\s+|roughly\s+|over\s+|nearly\s+|almost\s+|more\s+than\s+|fewer\s+than\s+|less\s+than\s+|under\s+|exactly\s+|some\s+)?`;

export const PHRASES: PhraseRule[] = [
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
export const PROVENANCE =
  /\b(?:sourced|comes?|coming|originat(?:es|ed|ing)|extracted|exported|imported|pulled|synced|replicated|ingested|loaded|copied|mirrored|landed)\s+(?:directly\s+)?(?:from|out\s+of)\b([^.;]{0,60})/giu;

/** "contains 500 <noun>": a size claim unless the noun is a schema unit. */
export const CONTAINS_NUMBER = new RegExp(
  String.raw`\b(?:contains|containing|has|having|holds|holding|stores|storing|includes|including|with|of)\s+${APPROX}${NUMBER}\s+(\p{L}+)`,
  'giu',
);
export const SCHEMA_UNITS = new Set([
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
export const COLUMN_COUNT = /\b(\d+)\s+(?:columns?|fields)\b/giu;

let combined: RegExp | undefined;
/**
 * One regular expression that matches wherever any phrase detector could (a superset: the number rule is
 * reduced to "verb + optional approximation + a digit"). Built without the `u` flag, which makes the
 * case-insensitive scan an order of magnitude faster; none of these sources needs it.
 */
export function anyDetector(): RegExp {
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
