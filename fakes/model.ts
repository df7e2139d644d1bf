/**
 * The scripted model behind the fake provider: deterministic answers to ARGUS model tasks, built
 * only from the evidence in the task, so tests can predict every proposal and every verdict.
 * It is a stand-in for wiring and failure tests, not a judge of quality: the heuristics are crude.
 * Ships with ARGUS for users' trials behind `argus fake-provider` (provider.ts); it reads only the wire
 * format of domain/, never ARGUS's own rules, so what it answers is independent of what it is checked against.
 */
import { z } from 'zod';
import type { PiiCategory } from '../domain/catalog';
import {
  BatchProposalForReview,
  fromWire,
  ProposalForReview,
  WireEvidence,
  type EntityEvidence,
  type CheckLineageBatchOutput,
  type CheckLineageOutput,
  type ClassifyPiiBatchOutput,
  type ClassifyPiiOutput,
  type DescribeBatchOutput,
  type DescribeOutput,
  type ModelTask,
  type ReviewOutput,
} from '../domain/model-io';

/** How the scripted reviewer judges: on the evidence, or rubber-stamping either way. */
export const FAKE_REVIEWERS = ['correct', 'always-approve', 'always-reject'] as const;
export type FakeReviewer = (typeof FAKE_REVIEWERS)[number];

// The document as it arrives: evidence in wire form (domain/model-io.ts WireEvidence), read back into EntityEvidence.
const Evidence = WireEvidence.transform(fromWire);
const TaskDocument = z.union([
  z.discriminatedUnion('argusTask', [
    z.object({ argusTask: z.literal('describe'), entity: Evidence }),
    z.object({ argusTask: z.literal('classify_pii'), entity: Evidence }),
    z.object({ argusTask: z.literal('check_lineage'), entity: Evidence, knownEntities: z.array(z.string()) }),
    z.object({ argusTask: z.literal('review'), entity: Evidence, proposals: z.array(ProposalForReview) }),
  ]),
  z.object({
    argusTask: z.literal('review'),
    entities: z.array(Evidence),
    proposals: z.array(BatchProposalForReview),
  }),
  z.object({ argusTask: z.enum(['describe', 'classify_pii', 'check_lineage']), entities: z.array(Evidence) }),
]);

/** A chat message as it arrives on the wire: content is a string or a list of text parts. */
export interface WireMessage {
  role?: unknown;
  content?: unknown;
}

function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const parts = content.map((p) =>
    p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
      ? (p as { text: string }).text
      : '',
  );
  return parts.join('');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The task in the last user message: the whole content as JSON, else the text from the first `{`
 * to the last `}`. Null when there is none or it does not match the ModelTask shape.
 */
export function extractTask(messages: unknown): ModelTask | null {
  if (!Array.isArray(messages)) return null;
  const last = [...(messages as WireMessage[])].reverse().find((m) => m && typeof m === 'object' && m.role === 'user');
  const text = last ? textOf(last.content) : null;
  if (text === null) return null;
  let doc = parseJson(text.trim());
  if (doc === undefined) {
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    if (start < 0 || end <= start) return null;
    doc = parseJson(text.slice(start, end + 1));
  }
  const parsed = TaskDocument.safeParse(doc);
  return parsed.success ? parsed.data : null;
}

// ---------------------------------------------------------------------------------------------
// describe

const MAX_TEXT = 600;
/** What the describe prompt allows a description ("under 200 characters"), which this model keeps to. */
const MAX_DESCRIPTION = 199;

function clip(text: string, max = MAX_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function describeColumn(c: EntityEvidence['columns'][number]): string {
  const facts = [c.nullable === false ? 'not null' : 'nullable'];
  if (c.primary_key) facts.push('primary key');
  if (c.foreign_key) facts.push(`references ${c.foreign_key}`);
  return clip(`Column ${c.name} (${c.type}), ${facts.join(', ')}.`, MAX_DESCRIPTION);
}

function describeEntity(e: EntityEvidence): string {
  const kind = e.kind === 'view' ? 'View' : 'Table';
  // Under the prompt's 200 characters: what it reads from first, then as much of the column list as fits.
  const reads = e.upstream.length > 0 ? ` Reads from ${e.upstream.map((u) => u.id).join(', ')}.` : '';
  const forms = [
    `${kind} ${e.name} with columns ${e.columns.map((c) => c.name).join(', ')}.`,
    `${kind} ${e.name} with columns ${e.columns
      .slice(0, 3)
      .map((c) => c.name)
      .join(', ')} and others.`,
    `${kind} ${e.name}.`,
  ];
  const text = forms.find((f) => f.length + reads.length <= MAX_DESCRIPTION) ?? forms[forms.length - 1]!;
  return clip(text + reads, MAX_DESCRIPTION);
}

/** What the task asks to describe (`toDescribe`), or, in a document without it, everything undescribed. */
function describe(e: EntityEvidence): DescribeOutput {
  const descriptions: DescribeOutput['descriptions'] = [];
  const asked = e.toDescribe ? new Set(e.toDescribe.columns) : undefined;
  if (e.toDescribe ? e.toDescribe.table : !e.description)
    descriptions.push({ target: 'table', column: null, text: describeEntity(e) });
  for (const c of e.columns)
    if (asked ? asked.has(c.name) : !c.description)
      descriptions.push({ target: 'column', column: c.name, text: describeColumn(c) });
  return { descriptions };
}

// ---------------------------------------------------------------------------------------------
// classify_pii

/** snake_case, camelCase and PascalCase names to lower-case word tokens. */
function tokens(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

// First match wins: "email_address" is an email, "ip_address" an IP, before "address" is looked at.
const PII_RULES: Array<[RegExp, PiiCategory]> = [
  [/^(?:ssn)$/, 'national_id'],
  [/^(?:email|mail)$/, 'email'],
  [/^(?:ip)$/, 'ip_address'],
  [/^(?:phone|mobile|fax)$/, 'phone'],
  [/^(?:birth|dob|birthdate|birthday)$/, 'birth_date'],
  [/^(?:zip|zipcode|postal|postcode)$/, 'postal_code'],
  [/^(?:salary|wage|wages)$/, 'compensation'],
  [/^(?:gender|sex)$/, 'gender'],
  [/^(?:address|street)$/, 'address'],
  [/^(?:name|first|last|firstname|lastname|fullname)$/, 'person_name'],
];
const GEO_COARSE = /^(?:region|country|city)$/;
// "name" beside one of these names a thing, not a person (product_name, company_name).
const THING =
  /^(?:product|company|category|store|plan|brand|file|table|album|track|genre|playlist|media|supplier|shipper|vendor|region|country|city|state|department|shop|warehouse|campaign|promotion)$/;

function classifyColumn(name: string): ClassifyPiiOutput['tags'][number] {
  const t = tokens(name);
  for (const [re, category] of PII_RULES) {
    const hit = t.find((x) => re.test(x));
    if (hit && category === 'person_name' && t.some((x) => THING.test(x))) continue;
    if (hit)
      return {
        column: name,
        pii: true,
        category,
        confidence: 0.8,
        explanation: `Name token "${hit}" suggests ${category.replace(/_/g, ' ')}.`,
      };
  }
  if (t.some((x) => GEO_COARSE.test(x)))
    return {
      column: name,
      pii: false,
      category: 'geo_coarse',
      confidence: 0.7,
      explanation: 'Coarse location alone does not identify a person.',
    };
  if (t[t.length - 1] === 'id')
    return {
      column: name,
      pii: false,
      category: 'identifier',
      confidence: 0.7,
      explanation: 'Surrogate key, not personal data by itself.',
    };
  return {
    column: name,
    pii: false,
    category: 'none',
    confidence: 0.6,
    explanation: 'No name token suggests personal data.',
  };
}

// ---------------------------------------------------------------------------------------------
// check_lineage

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether the SQL names `id` as a whole word; quoting ("raw"."orders", `raw`.`orders`) is ignored. */
function sqlMentions(sql: string | undefined, id: string): boolean {
  if (!sql) return false;
  const plain = sql.replace(/["`[\]]/g, '');
  return new RegExp(`(?<![\\w.])${escapeRegExp(id)}(?![\\w])`, 'i').test(plain);
}

function checkLineage(e: EntityEvidence, knownEntities: string[]): CheckLineageOutput {
  const findings: CheckLineageOutput['findings'] = [];
  for (const u of e.upstream) {
    if (!u.exists)
      findings.push({
        finding: 'dangling_edge',
        upstream: u.id,
        explanation: `Recorded upstream ${u.id} is not in the catalog.`,
      });
  }
  const recorded = new Set(e.upstream.map((u) => u.id.toLowerCase()));
  for (const id of knownEntities) {
    if (id === e.id || recorded.has(id.toLowerCase()) || !sqlMentions(e.sql, id)) continue;
    findings.push({
      finding: 'unrecorded_read',
      upstream: id,
      explanation: `The SQL reads ${id}, which is not a recorded upstream.`,
    });
  }
  return { findings };
}

// ---------------------------------------------------------------------------------------------
// review

// Claims about the world that the schema cannot support. Entity and column names are removed first
// so that a column called daily_total does not read as a cadence claim.
const WORLD_CLAIMS: Array<[RegExp, string]> = [
  [/\b(?:daily|hourly|nightly|weekly|refreshed|updated every|reloaded)\b/i, 'claims a refresh cadence'],
  [
    /\b\d[\d,.]*\s*(?:[kmb]|thousand|million|billion)?\s+(?:rows|records)\b|\b(?:rows|records)\s*[:=]\s*\d/i,
    'claims a row count',
  ],
  [/\b(?:owned by|maintained by|team)\b/i, 'names an owner'],
  [/\b(?:high[- ]quality|trusted|validated|reliable)\b/i, 'vouches for data quality'],
  [/\b(?:used by|feeds|dashboards?)\b/i, 'names consumers'],
  [/\b(?:retained|retention|archived|purged|compliance|regulatory)\b/i, 'claims a retention or compliance rule'],
];

// What a reviewer with judgment also asks of a description, whatever its wording: does it name a system,
// a figure, a unit or a filter that the evidence does not contain? Each is a fact about the world.
const UNITS =
  /\b(?:euros?|eur|dollars?|usd|gbp|sterling|cents?|pence|yen|vat|utc|gmt|time\s?zones?|kilo(?:gram|metre|meter)s?|kg|km|grams?|miles?|lbs?|minutes|seconds|milliseconds|percent(?:age)?)\b/gi;
const SCOPE = /\b(?:only|exclud(?:es|ed|ing)|except|filtered|omit(?:s|ted)?|restricted to|limited to)\b/i;
const FILTER_IN_SQL = /\b(?:where|having|qualify)\b/i;
const NUMBER = /(?<![\w.])\d+(?:[.,]\d+)*(?![\w])/g;
/** Abbreviations that name schema structure, not a system. */
const STRUCTURAL = new Set(['id', 'ids', 'pk', 'fk', 'sql', 'null', 'not', 'uuid']);

/** Lower-case words and numbers the evidence contains: names, column names and types, lineage ids, SQL. */
function evidenceVocabulary(e: EntityEvidence): { words: Set<string>; numbers: Set<string> } {
  const sources = [
    e.id,
    e.name,
    ...e.columns.flatMap((c) => [c.name, c.type, c.foreign_key ?? '']),
    ...e.upstream.map((u) => u.id),
    e.sql ?? '',
  ];
  const words = new Set<string>();
  const numbers = new Set<string>();
  for (const s of sources) {
    for (const w of tokens(s)) words.add(w);
    for (const w of s.toLowerCase().split(/[^a-z0-9]+/)) if (w) words.add(w);
    for (const n of s.match(NUMBER) ?? []) numbers.add(n);
  }
  return { words, numbers };
}

/** The first thing in `text` (names already removed) that the evidence does not contain, as a reason. */
function ungrounded(text: string, e: EntityEvidence): string | null {
  const { words, numbers } = evidenceVocabulary(e);
  // Proper names: capitalised words inside a sentence, and all-caps abbreviations anywhere.
  for (const m of text.matchAll(/\b[A-Z][A-Za-z0-9]+\b/g)) {
    const word = m[0];
    const before = text.slice(0, m.index).trimEnd();
    const sentenceStart = before === '' || /[.!?;:]$/.test(before);
    const acronym = /^[A-Z0-9]+$/.test(word) && /[A-Z]{2}/.test(word);
    if ((sentenceStart && !acronym) || words.has(word.toLowerCase()) || STRUCTURAL.has(word.toLowerCase())) continue;
    return `names "${word}", which the evidence does not mention`;
  }
  for (const m of text.matchAll(NUMBER)) {
    if (!numbers.has(m[0])) return `states the figure "${m[0]}", which the evidence does not show`;
  }
  for (const m of text.matchAll(UNITS)) {
    if (
      !m[0]
        .toLowerCase()
        .split(/\s+/)
        .every((w) => words.has(w))
    )
      return `states a unit or currency ("${m[0]}") that the schema does not record`;
  }
  const scope = SCOPE.exec(text);
  if (scope && !FILTER_IN_SQL.test(e.sql ?? ''))
    return `claims a filter ("${scope[0]}") that no SQL in the evidence applies`;
  return null;
}

// A column made only of these tokens (region, country_code, created_at) is generic, never personal.
const GENERIC_TOKENS = new Set([
  'region',
  'country',
  'city',
  'status',
  'title',
  'rating',
  'created',
  'at',
  'code',
  'id',
]);
const BUSINESS_CONTACT = /supplier|shipper|vendor|compan/i;

type Verdict = ReviewOutput['verdicts'][number];

function withoutNames(text: string, e: EntityEvidence): string {
  const names = [e.id, e.name, ...e.columns.map((c) => c.name), ...e.upstream.map((u) => u.id)].sort(
    (a, b) => b.length - a.length,
  );
  let out = text;
  for (const n of names) out = out.replace(new RegExp(`(?<![\\w.])${escapeRegExp(n)}(?![\\w])`, 'gi'), ' ');
  return out;
}

function judge(p: ProposalForReview, e: EntityEvidence): Pick<Verdict, 'decision' | 'reason'> {
  if (p.kind === 'description') {
    if (!p.text?.trim()) return { decision: 'reject', reason: 'The proposal carries no text.' };
    const text = withoutNames(p.text, e);
    for (const [re, what] of WORLD_CLAIMS) {
      const m = re.exec(text);
      if (m)
        return { decision: 'reject', reason: `The text ${what} ("${m[0].trim()}") that the schema does not show.` };
    }
    const invented = ungrounded(text, e);
    if (invented) return { decision: 'reject', reason: `The text ${invented}.` };
    return { decision: 'approve', reason: 'Grounded in the evidence.' };
  }
  if (p.kind === 'pii_tag') {
    const col = p.column ?? '';
    const t = tokens(col);
    if (t.length === 0 || t.every((x) => GENERIC_TOKENS.has(x)) || t[t.length - 1] === 'id') {
      return {
        decision: 'reject',
        reason: `${col || 'The column'} is a generic attribute or key, not personal data by itself.`,
      };
    }
    if (BUSINESS_CONTACT.test(e.name) || BUSINESS_CONTACT.test(e.id)) {
      return { decision: 'reject', reason: `${e.name} holds business contacts, which are not personal data.` };
    }
    return { decision: 'approve', reason: `The column name supports the ${p.category ?? 'PII'} tag.` };
  }
  const up = p.upstream ?? '';
  if (p.finding === 'dangling_edge') {
    return e.upstream.some((u) => u.id === up && !u.exists)
      ? { decision: 'approve', reason: `Recorded upstream ${up} does not exist in the catalog.` }
      : {
          decision: 'reject',
          reason: `The evidence does not show ${up || 'that upstream'} as a missing recorded upstream.`,
        };
  }
  if (p.finding === 'unrecorded_read') {
    return sqlMentions(e.sql, up) && !e.upstream.some((u) => u.id.toLowerCase() === up.toLowerCase())
      ? { decision: 'approve', reason: `The SQL reads ${up} and it is not recorded as upstream.` }
      : { decision: 'reject', reason: `The SQL does not show an unrecorded read of ${up || 'that entity'}.` };
  }
  return { decision: 'reject', reason: `Unknown lineage finding "${p.finding ?? ''}".` };
}

function verdictOf(p: ProposalForReview, e: EntityEvidence, reviewer: FakeReviewer): Verdict {
  if (reviewer === 'always-approve')
    return { proposalId: p.proposalId, decision: 'approve', reason: 'Looks consistent with the entity.' };
  if (reviewer === 'always-reject') {
    return {
      proposalId: p.proposalId,
      decision: 'reject',
      reason: 'Not confident the evidence supports this change; leaving the catalog as it is.',
    };
  }
  const v = judge(p, e);
  return { proposalId: p.proposalId, decision: v.decision, reason: clip(v.reason, 500) };
}

function review(proposals: ProposalForReview[], e: EntityEvidence, reviewer: FakeReviewer): ReviewOutput {
  return { verdicts: proposals.map((p) => verdictOf(p, e, reviewer)) };
}

/** Each proposal judged with its own entity's evidence, as alone; a proposal naming no entity sent gets none. */
function reviewBatch(
  proposals: BatchProposalForReview[],
  entities: EntityEvidence[],
  reviewer: FakeReviewer,
): ReviewOutput {
  const byId = new Map(entities.map((e) => [e.id, e]));
  const verdicts: Verdict[] = [];
  for (const { entityId, ...p } of proposals) {
    const e = byId.get(entityId);
    if (e) verdicts.push(verdictOf(p, e, reviewer));
  }
  return { verdicts };
}

const classify = (e: EntityEvidence): ClassifyPiiOutput => ({ tags: e.columns.map((c) => classifyColumn(c.name)) });

/**
 * The scripted answer to one task; it validates against MODEL_OUTPUT_SCHEMAS[task.argusTask], or for a batched
 * task MODEL_BATCH_OUTPUT_SCHEMAS. A batch is answered entity by entity with the same logic as a single task
 * (a batched classify lists only the pii: true columns), so decisions are the same batched or not.
 */
export function answerTask(task: ModelTask, reviewer: FakeReviewer = 'correct'): unknown {
  if ('entities' in task) {
    switch (task.argusTask) {
      case 'describe':
        return {
          entities: task.entities.map((e) => {
            const d = describe(e).descriptions;
            return {
              id: e.id,
              table: d.find((x) => x.target === 'table')?.text ?? null,
              columns: d.flatMap((x) =>
                x.target === 'column' && x.column ? [{ column: x.column, text: x.text }] : [],
              ),
            };
          }),
        } satisfies DescribeBatchOutput;
      case 'classify_pii':
        return {
          entities: task.entities.map((e) => ({ id: e.id, tags: classify(e).tags.filter((t) => t.pii) })),
        } satisfies ClassifyPiiBatchOutput;
      case 'check_lineage':
        return {
          entities: task.entities.map((e) => ({ id: e.id, findings: checkLineage(e, e.knownEntities ?? []).findings })),
        } satisfies CheckLineageBatchOutput;
      case 'review':
        return reviewBatch(task.proposals, task.entities, reviewer);
    }
  }
  switch (task.argusTask) {
    case 'describe':
      return describe(task.entity);
    case 'classify_pii':
      return classify(task.entity);
    case 'check_lineage':
      return checkLineage(task.entity, task.knownEntities);
    case 'review':
      return review(task.proposals, task.entity, reviewer);
  }
}
