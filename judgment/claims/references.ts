/**
 * References: a name the text mentions (dotted, snake_case, backticked, or in plain words before "table" or
 * "column") must be the entity itself, one of its columns, or an entity of its recorded lineage, SQL or keys.
 */
import { singular } from '../words';
import { clip, type Add } from './claim';
import { DOTTED, type Evidence } from './evidence';
import { blankLiteral } from './masking';

const SNAKE = /(?<![\p{L}\p{N}_$])\p{L}[\p{L}\p{N}]*(?:_[\p{L}\p{N}]+)+(?![\p{L}\p{N}_$])/gu;
const BACKTICKED = /`([^`\n]{1,200})`/gu;
/** A superset of where DOTTED, SNAKE or BACKTICKED can match: a dot between two other characters, `_` or a backtick. */
const MAY_REFERENCE = /[^\s.]\.[^\s.]|[_`]/;

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

export function checkReferences(text: string, evidence: Evidence, add: Add): void {
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
