import { z } from 'zod';
import type { CatalogEntity } from '../../domain/catalog';
import type { Outcome, Proposal, ProposalChange } from '../../domain/proposal';
import {
  MODEL_BATCH_ITEM_SCHEMAS,
  ReviewOutput,
  type BatchModelTask,
  type BatchProposalForReview,
  type EntityEvidence,
  type ModelTaskName,
  type ProposalForReview,
} from '../../domain/model-io';
import { callStructured, type CallOptions } from '../../llm/client';
import { MalformedOutputError } from '../../llm/errors';
import { completeItems } from '../../llm/partial-json';
import { BATCH_SYSTEM_PROMPTS, SYSTEM_PROMPTS, userMessage } from '../../llm/prompts';
import type { CatalogContext } from '../../judgment/catalog-context';
import { itemMemory, withoutAnswers } from './item-memory';
import { descriptionFacts, NO_NEIGHBOURS, type Neighbours } from '../../judgment/description-evidence';
import { outdated } from '../../judgment/description-drafter';

const undescribed = (text: string | undefined): boolean => !text?.trim();

/**
 * What the description drafter asks a model to describe of `entity`: the table when it is undescribed, and each
 * undescribed column that something beyond its name and type grounds — an established fact (inherited, derived,
 * a relationship: judgment/description-evidence.ts) or the entity's SQL; and, as undescribed, a table or column
 * whose ARGUS-written inherited or derived text its evidence no longer gives (its origin's text changed). A column
 * of which only its name and type are known gets no description by the prompt's own contract, so it is not asked
 * for (on the demo and generated catalogs the gate rejected every model description of such a column: 361 and
 * 3,981 of them).
 */
export function describeTargets(
  entity: CatalogEntity,
  ctx: CatalogContext,
  neighbours: Neighbours = NO_NEIGHBOURS,
): { table: boolean; columns: string[] } {
  const facts = descriptionFacts(entity, ctx, neighbours);
  const sql = !!entity.sql?.trim();
  // ARGUS's inherited or derived text whose evidence changed since is described again, as an undescribed one.
  return {
    table: undescribed(entity.description) || outdated(entity, facts.table),
    columns: entity.columns
      .filter(
        (c) =>
          (undescribed(c.description) && (sql || facts.columns.has(c.name))) || outdated(c, facts.columns.get(c.name)),
      )
      .map((c) => c.name),
  };
}

/**
 * What a model may see about an entity: schema, recorded lineage, SQL, and what they establish beyond
 * names and types (inherited and derived descriptions, when the entities it reads are given).
 */
export function entityEvidence(
  e: CatalogEntity,
  ctx: CatalogContext,
  neighbours: Neighbours = NO_NEIGHBOURS,
): EntityEvidence {
  const facts = descriptionFacts(e, ctx, neighbours);
  const established: NonNullable<EntityEvidence['established']> = [
    ...(facts.table ? [{ target: 'table' as const, basis: facts.table.basis, text: facts.table.text }] : []),
    ...[...facts.columns].map(([column, f]) => ({ target: 'column' as const, column, basis: f.basis, text: f.text })),
  ].slice(0, 200);
  return {
    ...named(e),
    columns: columnEvidence(e),
    upstream: upstreamEvidence(e, ctx),
    ...sqlEvidence(e),
    ...(established.length > 0 ? { established } : {}),
  };
}

function named(e: CatalogEntity): Pick<EntityEvidence, 'id' | 'kind' | 'name' | 'description'> {
  return {
    id: e.id,
    kind: e.kind,
    name: e.name,
    ...(e.description ? { description: e.description.slice(0, 500) } : {}),
  };
}

function columnEvidence(e: CatalogEntity): EntityEvidence['columns'] {
  // The usual case is left out (nullable, not a key): on a catalog of ordinary tables the two flags were 40 % of
  // a column's evidence, sent to every task that sees columns. The prompts say what an absent flag means.
  return e.columns.map((c) => ({
    name: c.name,
    type: c.type,
    ...(c.nullable ? {} : { nullable: false }),
    ...(c.primary_key ? { primary_key: true } : {}),
    ...(c.foreign_key ? { foreign_key: c.foreign_key } : {}),
    ...(c.description ? { description: c.description.slice(0, 300) } : {}),
  }));
}

/** The entity's SQL as evidence, bounded; nothing when it has none. */
function sqlEvidence(e: CatalogEntity): Pick<EntityEvidence, 'sql'> {
  return e.sql ? { sql: e.sql.slice(0, 4000) } : {};
}

function upstreamEvidence(e: CatalogEntity, ctx: CatalogContext): EntityEvidence['upstream'] {
  return e.upstream.map((id) => ({ id, exists: ctx.exists(id) }));
}

/** The entity ids a view's SQL could refer to: resolved from its words, so the prompt stays small. */
export function knownNear(entity: CatalogEntity, ctx: CatalogContext): string[] {
  if (!entity.sql) return [];
  const out = new Set<string>();
  for (const w of entity.sql.match(/[A-Za-z_"`[\]][\w"`[\].]*/g) ?? []) {
    const id = ctx.resolve(w);
    if (id && id !== entity.id) out.add(id);
  }
  return [...out].slice(0, 50);
}

/**
 * The evidence an agent's task needs about an entity, and nothing more: the same for single and batched calls, so
 * batching never changes what a model sees. describe: everything (entityEvidence) and what to describe
 * (describeTargets); classify_pii: the names, description and columns; check_lineage: the names, recorded upstream,
 * SQL and the entity ids the SQL could name (knownEntities), no columns. (The review's is reviewEvidence.)
 */
export function agentEvidence(
  task: Exclude<ModelTaskName, 'review'>,
  entity: CatalogEntity,
  ctx: CatalogContext,
  neighbours?: Neighbours,
): EntityEvidence {
  switch (task) {
    case 'describe':
      return { ...entityEvidence(entity, ctx, neighbours), toDescribe: describeTargets(entity, ctx, neighbours) };
    case 'classify_pii':
      return { ...named(entity), columns: columnEvidence(entity), upstream: [] };
    case 'check_lineage':
      return {
        id: entity.id,
        kind: entity.kind,
        name: entity.name,
        columns: [],
        upstream: upstreamEvidence(entity, ctx),
        ...sqlEvidence(entity),
        knownEntities: knownNear(entity, ctx),
      };
  }
}

/**
 * What the Arbiter's model sees of an entity for the proposals it reviews, and nothing more: everything
 * (entityEvidence) when one is a description, whose grounding may lie anywhere in it; otherwise the names and
 * description, plus the columns when one is a PII tag and the recorded upstream and SQL when one is a lineage
 * flag. The same for a single and a batched review, so batching never changes what the reviewer sees.
 */
export function reviewEvidence(
  entity: CatalogEntity,
  ctx: CatalogContext,
  neighbours: Neighbours | undefined,
  changes: readonly ProposalChange[],
): EntityEvidence {
  const kinds = new Set(changes.map((c) => c.kind));
  if (kinds.has('description')) return entityEvidence(entity, ctx, neighbours);
  const lineage = kinds.has('lineage_flag');
  return {
    ...named(entity),
    columns: kinds.has('pii_tag') ? columnEvidence(entity) : [],
    upstream: lineage ? upstreamEvidence(entity, ctx) : [],
    ...(lineage ? sqlEvidence(entity) : {}),
  };
}

/**
 * The short names a review call gives its proposals, p1, p2… in the order sent, in place of their 30-character
 * ids: the model copies each into its verdict, so a long id was paid for twice per proposal. Read back through
 * `idOf`; a name the call did not give is no verdict.
 */
export function shortRefs(proposals: readonly { id: string }[]): {
  refOf: Map<string, string>;
  idOf: Map<string, string>;
} {
  const refOf = new Map(proposals.map((p, i) => [p.id, `p${i + 1}`] as const));
  return { refOf, idOf: new Map([...refOf].map(([id, ref]) => [ref, id] as const)) };
}

/**
 * The document a batched review sends (the plan measures the same): each entity's reviewEvidence, and its
 * proposals under their short names (shortRefs), each naming its entity. `proposals` must be unique by id.
 */
export function batchReviewTask(
  items: readonly BatchItem[],
  ctx: CatalogContext,
  proposals: readonly { id: string; entityId: string; change: ProposalChange }[],
): { task: Extract<BatchModelTask, { argusTask: 'review' }>; idOf: Map<string, string> } {
  const { refOf, idOf } = shortRefs(proposals);
  const task = {
    argusTask: 'review' as const,
    entities: items.map((i) =>
      reviewEvidence(
        i.entity,
        i.ctx ?? ctx,
        i.neighbours,
        proposals.filter((p) => p.entityId === i.entity.id).map((p) => p.change),
      ),
    ),
    proposals: proposals.map((p): BatchProposalForReview => ({
      ...proposalForReview(refOf.get(p.id)!, p.change),
      entityId: p.entityId,
    })),
  };
  return { task, idOf };
}

export function proposalForReview(id: string, c: ProposalChange): ProposalForReview {
  switch (c.kind) {
    case 'description':
    case 'description_removal':
      return {
        proposalId: id,
        kind: c.kind,
        target: c.target,
        ...(c.column ? { column: c.column } : {}),
        text: c.text,
      };
    case 'pii_tag':
      return { proposalId: id, kind: c.kind, column: c.column, category: c.category };
    case 'lineage_flag':
      return { proposalId: id, kind: c.kind, finding: c.finding, upstream: c.upstream };
  }
}

/**
 * The Arbiter's model review: ONE call for a batch of an entity's proposals, one verdict per proposal.
 * A verdict missing or duplicated is malformed output (retried by the activity's policy), never a default.
 * Throws the llm/ typed errors.
 */
export async function reviewWithModel(
  args: {
    entity: CatalogEntity;
    ctx: CatalogContext;
    /** The entities it reads, for the established facts (none: the facts are left out). */
    neighbours?: Neighbours;
    proposals: { id: string; change: ProposalChange }[];
  } & CallOptions,
): Promise<Outcome[]> {
  const { entity, ctx, neighbours, proposals, ...call } = args;
  const evidence = reviewEvidence(
    entity,
    ctx,
    neighbours,
    proposals.map((p) => p.change),
  );
  return reviewOnEvidence(evidence, proposals, call);
}

/**
 * One review call on the evidence given (reviewWithModel gives reviewEvidence; bench:model's reference gives the
 * full evidence): one verdict per proposal, or MalformedOutputError. Throws the llm/ typed errors.
 */
export async function reviewOnEvidence(
  evidence: EntityEvidence,
  proposals: { id: string; change: ProposalChange }[],
  call: CallOptions,
): Promise<Outcome[]> {
  const refs = shortRefs(proposals);
  const task = {
    argusTask: 'review' as const,
    entity: evidence,
    proposals: proposals.map((p) => proposalForReview(refs.refOf.get(p.id)!, p.change)),
  };
  const r = await callStructured({
    ...call,
    system: SYSTEM_PROMPTS.review,
    user: userMessage(task),
    schema: ReviewOutput,
    schemaName: 'argus_review',
  });
  const byId = new Map<string, (typeof r.output.verdicts)[number]>();
  for (const v of r.output.verdicts) {
    const id = refs.idOf.get(v.proposalId);
    if (id) byId.set(id, v);
  }
  const missing = proposals.filter((p) => !byId.has(p.id)).map((p) => p.id);
  if (missing.length > 0) {
    // Not an answer to keep: a retry asks again.
    if (r.digest) await call.answers?.forget([r.digest]).catch(() => undefined);
    throw new MalformedOutputError({
      endpointId: call.endpoint.id,
      status: 200,
      body: JSON.stringify(r.output),
      requestId: r.requestId,
      issues: [`no verdict for ${missing.length} proposal(s): ${missing.slice(0, 5).join(', ')}`],
    });
  }
  const reviewer = `model:${call.endpoint.id}`;
  return proposals.map((p) => outcomeOf(p.id, byId.get(p.id)!, reviewer));
}

type Verdict = ReviewOutput['verdicts'][number];

function outcomeOf(proposalId: string, v: Verdict, reviewer: string): Outcome {
  return {
    proposalId,
    decision: v.decision === 'approve' ? 'approved' : 'rejected',
    reason: v.reason.slice(0, 500),
    reviewer,
  };
}

/** An entity of a batched call, with the entities it reads (for the established facts; none: left out). */
export interface BatchItem {
  entity: CatalogEntity;
  neighbours?: Neighbours;
  /** The catalog this entity is seen in, when it is not the call's `ctx` (an eval case's own catalog). */
  ctx?: CatalogContext;
}

// The whole answer must be a verdict list; each verdict is then checked alone, so one bad verdict costs only
// its own entity.
const ReviewAnswer = z.object({ verdicts: z.array(z.unknown()) });

/**
 * The Arbiter's model review of several entities' proposals in ONE call. An entity any of whose proposals
 * lacks exactly one valid verdict is in `missing` (entity ids) with no outcome, never a default; an answer
 * that is wholly malformed makes every entity missing. Provider errors (429, 5xx, auth…) are thrown as the
 * llm/ typed errors. A proposal for an entity not among `items` is a caller error (thrown).
 */
export async function reviewBatchWithModel(
  args: {
    items: BatchItem[];
    ctx: CatalogContext;
    proposals: { id: string; entityId: string; change: ProposalChange }[];
  } & CallOptions,
): Promise<{
  outcomes: Outcome[];
  missing: string[];
  cutShort?: boolean;
  /** Proposals sent in the call (the others' verdicts were remembered); absent: all of them. */
  asked?: number;
}> {
  const { items, ctx, proposals: _listed, ...call } = args;
  // One verdict is asked per proposal id: a proposal listed twice would read as a duplicated verdict.
  const proposals = args.proposals.filter((p, i, all) => all.findIndex((q) => q.id === p.id) === i);
  if (proposals.length === 0) return { outcomes: [], missing: [] };
  const byEntity = new Map(items.map((i) => [i.entity.id, i]));
  const stray = proposals.find((p) => !byEntity.has(p.entityId));
  if (stray)
    throw new Error(`reviewBatchWithModel: proposal ${stray.id} is for ${stray.entityId}, not among the items`);
  const wanted = new Set(proposals.map((p) => p.entityId));
  let sent = [...byEntity.values()].filter((i) => wanted.has(i.entity.id));
  const reviewer = `model:${call.endpoint.id}`;
  // Per entity, the request it alone would make (its proposals under their own short names): one answered before,
  // in whatever batch, gives its verdicts again, and the entity is not sent.
  const memory = itemMemory(call);
  const alone = new Map<string, { digest: string; own: typeof proposals; idOf: Map<string, string> }>();
  const remembered: Outcome[] = [];
  if (memory) {
    for (const i of sent) {
      const own = proposals.filter((p) => p.entityId === i.entity.id);
      const one = batchReviewTask([i], ctx, own);
      const digest = memory.digest(BATCH_SYSTEM_PROMPTS.review, userMessage(one.task), 'argus_review_batch');
      alone.set(i.entity.id, { digest, own, idOf: one.idOf });
    }
    const kept = await Promise.all(
      sent.map(async (i) => [i, await memory.recall(alone.get(i.entity.id)!.digest)] as const),
    );
    const answered = new Set<string>();
    for (const [i, item] of kept) {
      const a = alone.get(i.entity.id)!;
      const verdicts = Array.isArray(item) ? item.map((v) => MODEL_BATCH_ITEM_SCHEMAS.review.safeParse(v)) : [];
      const byId = new Map<string, Verdict>();
      for (const v of verdicts)
        if (v.success && a.idOf.has(v.data.proposalId)) byId.set(a.idOf.get(v.data.proposalId)!, v.data);
      if (a.own.some((p) => !byId.has(p.id))) continue;
      for (const p of a.own) remembered.push(outcomeOf(p.id, byId.get(p.id)!, reviewer));
      answered.add(i.entity.id);
    }
    sent = sent.filter((i) => !answered.has(i.entity.id));
    if (sent.length === 0) return { outcomes: remembered, missing: [], asked: 0 };
  }
  const sending = new Set(sent.map((i) => i.entity.id));
  const { task, idOf } = batchReviewTask(
    sent,
    ctx,
    proposals.filter((p) => sending.has(p.entityId)),
  );
  const entityIds = sent.map((i) => i.entity.id);
  let verdicts: unknown[];
  let cutShort: boolean;
  try {
    const r = await callStructured({
      ...withoutAnswers(call),
      system: BATCH_SYSTEM_PROMPTS.review,
      user: userMessage(task),
      schema: ReviewOutput,
      answerSchema: ReviewAnswer,
      schemaName: 'argus_review_batch',
      // Cut off at max_tokens: the verdicts given in full count; an entity lacking any is missing (asked alone).
      cutShort: (content) => {
        const items = completeItems(content, 'verdicts');
        return items === undefined ? undefined : { verdicts: items };
      },
    });
    verdicts = r.output.verdicts;
    cutShort = r.cutShort === true;
  } catch (e) {
    if (e instanceof MalformedOutputError) return { outcomes: remembered, missing: entityIds };
    throw e;
  }
  const seen = new Map<string, number>();
  const valid = new Map<string, Verdict>();
  for (const raw of verdicts) {
    const ref = (raw as { proposalId?: unknown } | null)?.proposalId;
    const id = typeof ref === 'string' ? idOf.get(ref) : undefined;
    if (!id) continue;
    seen.set(id, (seen.get(id) ?? 0) + 1);
    const v = MODEL_BATCH_ITEM_SCHEMAS.review.safeParse(raw);
    if (v.success) valid.set(id, v.data);
  }
  const answered = (id: string) => seen.get(id) === 1 && valid.has(id);
  const asked = proposals.filter((p) => sending.has(p.entityId));
  const missing = new Set(asked.filter((p) => !answered(p.id)).map((p) => p.entityId));
  if (memory)
    for (const id of entityIds) {
      if (missing.has(id)) continue;
      const a = alone.get(id)!;
      // Kept under the entity's own short names, as its request alone would have them.
      const refOf = new Map([...a.idOf].map(([ref, pid]) => [pid, ref]));
      await memory.keep(
        a.digest,
        a.own.map((p) => ({ ...valid.get(p.id)!, proposalId: refOf.get(p.id)! })),
      );
    }
  return {
    outcomes: [
      ...remembered,
      ...asked.filter((p) => !missing.has(p.entityId)).map((p) => outcomeOf(p.id, valid.get(p.id)!, reviewer)),
    ],
    missing: entityIds.filter((id) => missing.has(id)),
    ...(cutShort ? { cutShort } : {}),
    asked: asked.length,
  };
}

export type { Proposal };
