import { z } from 'zod';
import type { CatalogEntity } from '../../domain/catalog';
import { PiiCategory } from '../../domain/catalog';
import type { AgentName, ProposalChange } from '../../domain/proposal';
import {
  DescribeOutput,
  ClassifyPiiOutput,
  CheckLineageOutput,
  MODEL_BATCH_ITEM_SCHEMAS,
  MODEL_BATCH_OUTPUT_SCHEMAS,
  describeOfBatchItem,
  toWire,
  type EntityEvidence,
  type ModelTaskName,
} from '../../domain/model-io';
import { callStructured, estimateTokens, type CallOptions } from '../../llm/client';
import { MalformedOutputError } from '../../llm/errors';
import { completeItems } from '../../llm/partial-json';
import { BATCH_SYSTEM_PROMPTS, SYSTEM_PROMPTS, userMessage } from '../../llm/prompts';
import { agentEvidence, describeTargets, proposalForReview, reviewEvidence, type BatchItem } from './model-review';
import type { CatalogContext } from '../../judgment/catalog-context';
import { looksLikePii } from '../../judgment/pii/classifier';
import type { Neighbours } from '../../judgment/description-evidence';
import { itemMemory, withoutAnswers } from './item-memory';
import { evidenceView } from '../../judgment/fingerprint';

/** The call options every model-backed agent passes through to its calls (llm/client.ts). */
export type ModelCallOptions = CallOptions;

/** The model task each agent asks for. */
export const AGENT_TASK = {
  'description-drafter': 'describe',
  'pii-classifier': 'classify_pii',
  'lineage-checker': 'check_lineage',
} as const satisfies Record<AgentName, ModelTaskName>;

const alreadyTagged = (entity: CatalogEntity, column: string): boolean =>
  entity.pii_exceptions.includes(column) ||
  (entity.columns.find((c) => c.name === column)?.tags ?? []).some((t) => t.kind === 'pii');

/**
 * Whether the agent has anything to ask a model about the entity — the cheapest call is the one not made.
 * describe: the table undescribed, or an undescribed column something grounds (describeTargets: give the
 * entities it reads, or inherited facts are not seen); classify_pii: a column not already tagged or excepted;
 * check_lineage: SQL or recorded upstream.
 */
export function needsModelCall(
  agent: AgentName,
  entity: CatalogEntity,
  ctx: CatalogContext,
  neighbours?: Neighbours,
): boolean {
  switch (agent) {
    case 'description-drafter': {
      const t = describeTargets(entity, ctx, neighbours);
      return t.table || t.columns.length > 0;
    }
    case 'pii-classifier':
      return entity.columns.some((c) => !alreadyTagged(entity, c.name));
    case 'lineage-checker':
      return !!entity.sql?.trim() || entity.upstream.length > 0;
  }
}

/** The answer's descriptions of what was asked for (`targets`, describeTargets); anything else is dropped. */
function describeChanges(
  entity: CatalogEntity,
  descriptions: DescribeOutput['descriptions'],
  targets: { table: boolean; columns: string[] },
): ProposalChange[] {
  const cols = new Set(targets.columns);
  const out: ProposalChange[] = [];
  for (const d of descriptions) {
    if (d.target === 'table') {
      if (targets.table) out.push({ kind: 'description', target: 'table', text: d.text.trim() });
    } else if (d.column && cols.has(d.column)) {
      out.push({ kind: 'description', target: 'column', column: d.column, text: d.text.trim() });
    }
  }
  return out;
}

function piiChanges(entity: CatalogEntity, tags: ClassifyPiiOutput['tags']): ProposalChange[] {
  const cols = new Map(entity.columns.map((c) => [c.name, c]));
  const out: ProposalChange[] = [];
  for (const t of tags) {
    const c = cols.get(t.column);
    const cat = PiiCategory.safeParse(t.category);
    if (!t.pii || !c || !cat.success || alreadyTagged(entity, c.name)) continue;
    out.push({
      kind: 'pii_tag',
      column: c.name,
      category: cat.data,
      confidence: t.confidence,
      explanation: t.explanation.slice(0, 300),
    });
  }
  return out;
}

function lineageChanges(findings: CheckLineageOutput['findings']): ProposalChange[] {
  return findings.map((f) => ({
    kind: 'lineage_flag' as const,
    finding: f.finding,
    upstream: f.upstream,
    explanation: f.explanation.slice(0, 300),
  }));
}

/**
 * Model-backed agents, behind the same contract as the no-model ones: entity in, proposed changes out.
 * Answers are filtered to what the catalog can hold (existing columns, known categories, no overwrites);
 * the Arbiter still reviews every one. No call when there is nothing to ask (needsModelCall). Throws the
 * llm/ typed errors.
 */
export async function proposeWithModel(
  agent: AgentName,
  entity: CatalogEntity,
  ctx: CatalogContext,
  o: ModelCallOptions,
  neighbours?: Neighbours,
): Promise<ProposalChange[]> {
  if (!needsModelCall(agent, entity, ctx, neighbours)) return [];
  return proposeOnEvidence(agent, entity, agentEvidence(AGENT_TASK[agent], entity, ctx, neighbours), o);
}

/**
 * One agent's call about one entity on the evidence given (proposeWithModel gives agentEvidence; bench:model's
 * reference gives every agent the full evidence), its answer filtered as proposeWithModel's. describe needs
 * `toDescribe`. Throws the llm/ typed errors.
 */
export async function proposeOnEvidence(
  agent: AgentName,
  entity: CatalogEntity,
  evidence: EntityEvidence,
  o: ModelCallOptions,
): Promise<ProposalChange[]> {
  switch (agent) {
    case 'description-drafter': {
      const r = await callStructured({
        ...o,
        system: SYSTEM_PROMPTS.describe,
        user: userMessage({ argusTask: 'describe', entity: evidence }),
        schema: DescribeOutput,
        schemaName: 'argus_describe',
      });
      return describeChanges(entity, r.output.descriptions, evidence.toDescribe!);
    }
    case 'pii-classifier': {
      const r = await callStructured({
        ...o,
        system: SYSTEM_PROMPTS.classify_pii,
        user: userMessage({ argusTask: 'classify_pii', entity: evidence }),
        schema: ClassifyPiiOutput,
        schemaName: 'argus_classify_pii',
      });
      return piiChanges(entity, r.output.tags);
    }
    case 'lineage-checker': {
      // The one-entity document has always carried the candidates beside the entity, not inside it.
      const { knownEntities = [], ...rest } = evidence;
      const r = await callStructured({
        ...o,
        system: SYSTEM_PROMPTS.check_lineage,
        user: userMessage({ argusTask: 'check_lineage', entity: rest, knownEntities }),
        schema: CheckLineageOutput,
        schemaName: 'argus_check_lineage',
      });
      return lineageChanges(r.output.findings);
    }
  }
}

// The whole answer must be an entity list; each entity's item is then checked alone (MODEL_BATCH_ITEM_SCHEMAS).
const BatchAnswer = z.object({ entities: z.array(z.unknown()) });

/** What one entity's valid item of a batched answer proposes, after the same filtering as proposeWithModel. */
function changesOfItem(
  agent: AgentName,
  evidence: EntityEvidence,
  entity: CatalogEntity,
  raw: unknown,
): ProposalChange[] | null {
  switch (agent) {
    case 'description-drafter': {
      const v = MODEL_BATCH_ITEM_SCHEMAS.describe.safeParse(raw);
      return v.success ? describeChanges(entity, describeOfBatchItem(v.data), evidence.toDescribe!) : null;
    }
    case 'pii-classifier': {
      const v = MODEL_BATCH_ITEM_SCHEMAS.classify_pii.safeParse(raw);
      return v.success ? piiChanges(entity, v.data.tags) : null;
    }
    case 'lineage-checker': {
      const v = MODEL_BATCH_ITEM_SCHEMAS.check_lineage.safeParse(raw);
      return v.success ? lineageChanges(v.data.findings) : null;
    }
  }
}

/**
 * A describe request on the entity's evidence view (judgment/fingerprint.ts): its one-entity request with every
 * description and tag of source `argus` left out. ARGUS's own text is no evidence (it came from an answer), so after
 * an upgrade an entity whose only change is what ARGUS wrote on it asks nothing new: its remaining drafts (those the
 * Arbiter rejected) come from the answer to this request, instead of a call whose request differs only by the
 * descriptions that answer wrote. Where the entity had no text of ARGUS's when it was asked, that answer is kept
 * under the request itself (the view is the entity); where it had some, under this request's digest with a suffix
 * (OWN_TEXT_ASIDE), with what the call asked for. Either way an entity asked now for something that request did not
 * ask (a column ARGUS described whose grounds changed since) is asked again.
 */
const OWN_TEXT_ASIDE = '#own-text-aside';

interface AsideAnswer {
  asked: Targets;
  item: unknown;
}
type Targets = { table: boolean; columns: string[] };

function viewRequest(item: BatchItem, ctx: CatalogContext): { message: string; asked: Targets } {
  const evidence = agentEvidence('describe', evidenceView(item.entity), item.ctx ?? ctx, item.neighbours);
  return { message: userMessage({ argusTask: 'describe', entities: [evidence] }), asked: evidence.toDescribe! };
}

const covers = (asked: Targets, targets: Targets): boolean => {
  if (targets.table && !asked.table) return false;
  const columns = new Set(asked.columns);
  return targets.columns.every((c) => columns.has(c));
};

/** The item of an aside answer that asked for at least `targets`, or undefined. */
function asideItem(kept: unknown, targets: Targets): unknown {
  const a = kept as Partial<AsideAnswer> | undefined;
  if (!a || typeof a !== 'object' || !a.asked || !Array.isArray(a.asked.columns) || a.item === undefined)
    return undefined;
  return covers({ table: a.asked.table === true, columns: a.asked.columns }, targets) ? a.item : undefined;
}

/**
 * One agent on several entities in ONE call, filtered per entity as proposeWithModel. An entity whose item is
 * absent, duplicated or invalid is in `missing`, never given a default; a wholly malformed answer makes every
 * entity sent missing. Entities with nothing to ask (needsModelCall) are not sent: they get an empty list.
 * Provider errors (429, 5xx, auth…) are thrown as the llm/ typed errors.
 */
export async function proposeBatchWithModel(
  agent: AgentName,
  items: BatchItem[],
  ctx: CatalogContext,
  o: ModelCallOptions,
): Promise<{
  byEntity: Map<string, ProposalChange[]>;
  missing: string[];
  cutShort?: boolean;
  /** The output tokens reserved for the entities sent (what estimateEntityTokens plans them at). */
  reserved: number;
}> {
  const task = AGENT_TASK[agent];
  // Keyed in the order of `items`; an entity sent and not answered is deleted again (never a default).
  const byEntity = new Map<string, ProposalChange[]>();
  const sent = new Map<string, BatchItem>();
  for (const item of items) {
    const id = item.entity.id;
    if (byEntity.has(id)) continue;
    byEntity.set(id, []);
    if (needsModelCall(agent, item.entity, item.ctx ?? ctx, item.neighbours)) sent.set(id, item);
  }
  if (sent.size === 0) return { byEntity, missing: [], reserved: 0 };
  const evidenceOf = new Map(
    [...sent].map(([id, i]) => [id, agentEvidence(task, i.entity, i.ctx ?? ctx, i.neighbours)] as const),
  );
  // An entity whose own request was answered before (in any batch) is answered from there and not sent.
  const memory = itemMemory(o);
  const schemaName = `argus_${task}_batch`;
  const digestOf = new Map<string, string>();
  // describe: the OWN_TEXT_ASIDE key of each entity sent whose request is not its view's (it has text of ARGUS's).
  const asideOf = agent === 'description-drafter' ? new Map<string, string>() : undefined;
  if (memory) {
    for (const [id] of sent)
      digestOf.set(
        id,
        memory.digest(
          BATCH_SYSTEM_PROMPTS[task],
          userMessage({ argusTask: task, entities: [evidenceOf.get(id)!] }),
          schemaName,
        ),
      );
    const kept = await Promise.all(
      [...sent].map(async ([id, i]) => {
        const item = await memory.recall(digestOf.get(id)!);
        if (item !== undefined || !asideOf) return [id, item] as const;
        const view = viewRequest(i, ctx);
        const targets = evidenceOf.get(id)!.toDescribe!;
        const plain = memory.digest(BATCH_SYSTEM_PROMPTS[task], view.message, schemaName);
        // No text of ARGUS's on it: its request is its view's, and was not answered.
        if (plain === digestOf.get(id)) return [id, undefined] as const;
        const aside = memory.digest(BATCH_SYSTEM_PROMPTS[task], view.message, schemaName + OWN_TEXT_ASIDE);
        asideOf.set(id, aside);
        // The view's request sent as it is (before ARGUS wrote on the entity), or kept aside with what it asked.
        const sentBefore = covers(view.asked, targets) ? await memory.recall(plain) : undefined;
        if (sentBefore !== undefined) return [id, sentBefore] as const;
        return [id, await memory.recall(aside, (kept) => asideItem(kept, targets))] as const;
      }),
    );
    for (const [id, item] of kept) {
      if (item === undefined) continue;
      const changes = changesOfItem(agent, evidenceOf.get(id)!, sent.get(id)!.entity, item);
      if (!changes) continue;
      byEntity.set(id, changes);
      sent.delete(id);
      evidenceOf.delete(id);
    }
    if (sent.size === 0) return { byEntity, missing: [], reserved: 0 };
  }
  const entities: EntityEvidence[] = [...evidenceOf.values()];
  const reserved = [...sent].reduce((n, [id, i]) => n + outputReserve(agent, i.entity, evidenceOf.get(id)!), 0);
  const schema: z.ZodType<unknown> = MODEL_BATCH_OUTPUT_SCHEMAS[task];
  let answer: unknown[] | null = null;
  let cutShort = false;
  try {
    const r = await callStructured({
      ...withoutAnswers(o),
      system: BATCH_SYSTEM_PROMPTS[task],
      user: userMessage({ argusTask: task, entities }),
      schema,
      answerSchema: BatchAnswer,
      schemaName,
      // Cut off at max_tokens: the entities answered in full count, the rest are missing (asked alone).
      cutShort: (content) => {
        const items = completeItems(content, 'entities');
        return items === undefined ? undefined : { entities: items };
      },
    });
    answer = r.output.entities;
    cutShort = r.cutShort === true;
  } catch (e) {
    if (!(e instanceof MalformedOutputError)) throw e;
  }
  const itemsById = new Map<string, unknown[]>();
  for (const raw of answer ?? []) {
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id === 'string' && sent.has(id)) itemsById.set(id, [...(itemsById.get(id) ?? []), raw]);
  }
  const missing: string[] = [];
  for (const [id, item] of sent) {
    const found = itemsById.get(id) ?? [];
    const changes = found.length === 1 ? changesOfItem(agent, evidenceOf.get(id)!, item.entity, found[0]) : null;
    if (changes) {
      byEntity.set(id, changes);
      if (memory) {
        await memory.keep(digestOf.get(id)!, found[0]);
        // With text of ARGUS's on it, also under its view's request (OWN_TEXT_ASIDE); without, that is this request.
        const aside = asideOf?.get(id);
        if (aside) await memory.keep(aside, { asked: evidenceOf.get(id)!.toDescribe!, item: found[0] } as AsideAnswer);
      }
    } else {
      byEntity.delete(id);
      missing.push(id);
    }
  }
  return { byEntity, missing, reserved, ...(cutShort ? { cutShort } : {}) };
}

/** Tokens an entity adds to a batched call: its evidence in the prompt, and a reserve for its part of the answer. */
export interface EntityCost {
  prompt: number;
  output: number;
}

// Output reserves (4 characters a token), per thing the model may answer about. On the demo catalog the fake
// model's items come to ~27 tokens a description, ~34 a PII tag, ~28 a lineage finding and ~31 a verdict with its
// short proposal name; a real model words more, and a description may take its 200 characters.
const RESERVE = { description: 45, tableDescription: 60, piiTag: 40, lineageFinding: 30, verdict: 35 } as const;
const REF = 'p99';
/** `{"id":"…","descriptions":[]},` and the like around every entity's part of the answer. */
const itemWrapper = (id: string): number => estimateTokens(`{"id":${JSON.stringify(id)},"descriptions":[]},`);

/**
 * What `entity` costs a batched call of `agent` (or of the review, given its proposals): prompt tokens of its
 * trimmed evidence (and proposals) as JSON, and a reserve for its answer. describe: 60 for the table and 45 per
 * column asked for (describeTargets);
 * classify_pii: 40 per column that could be PII — of the columns not already tagged or excepted, those the rules'
 * vocabulary takes for PII (looksLikePii) and one in four of the rest, rounded up (the demo catalog's tables
 * never answer more); check_lineage: 30 per recorded upstream and SQL reference (knownEntities); review: 35 per
 * proposal plus its short name. Entities needing no call (needsModelCall; review: no proposals) cost nothing.
 */
export function estimateEntityTokens(
  agent: AgentName | 'review',
  entity: CatalogEntity,
  ctx: CatalogContext,
  neighbours?: Neighbours,
  proposals: { id: string; change: ProposalChange }[] = [],
): EntityCost {
  if (agent === 'review') {
    if (proposals.length === 0) return { prompt: 0, output: 0 };
    // Under their short names (shortRefs): p99 stands for any, in the prompt and in the verdicts.
    const sentProposals = proposals.map((p) => ({ ...proposalForReview(REF, p.change), entityId: entity.id }));
    const evidence = reviewEvidence(
      entity,
      ctx,
      neighbours,
      proposals.map((p) => p.change),
    );
    return {
      prompt: wireTokens(evidence) + estimateTokens(JSON.stringify(sentProposals)),
      output: reviewOutputReserve(proposals.length),
    };
  }
  if (!needsModelCall(agent, entity, ctx, neighbours)) return { prompt: 0, output: 0 };
  const evidence = agentEvidence(AGENT_TASK[agent], entity, ctx, neighbours);
  return { prompt: wireTokens(evidence), output: outputReserve(agent, entity, evidence) };
}

/** The tokens an entity's evidence takes in the user message (its wire form, as userMessage writes it). */
const wireTokens = (evidence: EntityEvidence): number => estimateTokens(JSON.stringify(toWire(evidence)));

/** The output reserve of an entity's part of a batched agent answer, from the evidence sent (estimateEntityTokens). */
function outputReserve(agent: AgentName, entity: CatalogEntity, evidence: EntityEvidence): number {
  let answers: number;
  switch (agent) {
    case 'description-drafter': {
      const t = evidence.toDescribe!;
      answers = (t.table ? RESERVE.tableDescription : 0) + RESERVE.description * t.columns.length;
      break;
    }
    case 'pii-classifier': {
      const open = entity.columns.filter((c) => !alreadyTagged(entity, c.name));
      const likely = open.filter((c) => looksLikePii(c, entity)).length;
      answers = RESERVE.piiTag * (likely + Math.ceil((open.length - likely) / 4));
      break;
    }
    case 'lineage-checker':
      answers = RESERVE.lineageFinding * (entity.upstream.length + (evidence.knownEntities?.length ?? 0));
      break;
  }
  return itemWrapper(entity.id) + answers;
}

/** The output reserve of a batched review's verdicts on `proposals` proposals (estimateEntityTokens). */
export const reviewOutputReserve = (proposals: number): number => proposals * (RESERVE.verdict + estimateTokens(REF));

/**
 * Split items into batches, greedily and in order: each batch holds at most `maxEntities` items and its
 * items' prompt and output tokens stay within `promptTokens` and `outputTokens` (the entities' share: leave
 * room for the system prompt and the envelope). An item too big for any batch alone gets a batch of its own.
 */
export function batchEntities<T>(
  items: T[],
  cost: (t: T) => EntityCost,
  limits: { maxEntities: number; promptTokens: number; outputTokens: number },
): T[][] {
  if (!(limits.maxEntities >= 1)) throw new RangeError(`maxEntities must be at least 1, got ${limits.maxEntities}`);
  const batches: T[][] = [];
  let current: T[] = [];
  let prompt = 0;
  let output = 0;
  for (const item of items) {
    const c = cost(item);
    const fits =
      current.length < limits.maxEntities &&
      prompt + c.prompt <= limits.promptTokens &&
      output + c.output <= limits.outputTokens;
    if (!fits && current.length > 0) {
      batches.push(current);
      current = [];
      prompt = 0;
      output = 0;
    }
    current.push(item);
    prompt += c.prompt;
    output += c.output;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
