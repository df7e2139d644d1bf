import type { CatalogEntity } from '../../domain/catalog';
import type { Outcome, Proposal, ProposalChange } from '../../domain/proposal';
import { ReviewOutput, type EntityEvidence, type ProposalForReview } from '../../domain/model-io';
import { callStructured, type CallOptions } from '../../llm/client';
import { MalformedOutputError } from '../../llm/errors';
import { SYSTEM_PROMPTS, userMessage } from '../../llm/prompts';
import type { CatalogContext } from '../../judgment/catalog-context';
import { descriptionFacts, NO_NEIGHBOURS, type Neighbours } from '../../judgment/description-evidence';

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
    id: e.id,
    kind: e.kind,
    name: e.name,
    ...(e.description ? { description: e.description.slice(0, 500) } : {}),
    columns: e.columns.map((c) => ({
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      primary_key: c.primary_key,
      ...(c.foreign_key ? { foreign_key: c.foreign_key } : {}),
      ...(c.description ? { description: c.description.slice(0, 300) } : {}),
    })),
    upstream: e.upstream.map((id) => ({ id, exists: ctx.exists(id) })),
    ...(e.sql ? { sql: e.sql.slice(0, 4000) } : {}),
    ...(established.length > 0 ? { established } : {}),
  };
}

export function proposalForReview(id: string, c: ProposalChange): ProposalForReview {
  switch (c.kind) {
    case 'description':
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
  const task = {
    argusTask: 'review' as const,
    entity: entityEvidence(entity, ctx, neighbours),
    proposals: proposals.map((p) => proposalForReview(p.id, p.change)),
  };
  const r = await callStructured({
    ...call,
    system: SYSTEM_PROMPTS.review,
    user: userMessage(task),
    schema: ReviewOutput,
    schemaName: 'argus_review',
  });
  const byId = new Map<string, (typeof r.output.verdicts)[number]>();
  for (const v of r.output.verdicts) byId.set(v.proposalId, v);
  const missing = proposals.filter((p) => !byId.has(p.id)).map((p) => p.id);
  if (missing.length > 0) {
    throw new MalformedOutputError({
      endpointId: call.endpoint.id,
      status: 200,
      body: JSON.stringify(r.output),
      requestId: r.requestId,
      issues: [`no verdict for ${missing.length} proposal(s): ${missing.slice(0, 5).join(', ')}`],
    });
  }
  const reviewer = `model:${call.endpoint.id}`;
  return proposals.map((p) => {
    const v = byId.get(p.id)!;
    return {
      proposalId: p.id,
      decision: v.decision === 'approve' ? 'approved' : 'rejected',
      reason: v.reason.slice(0, 500),
      reviewer,
    };
  });
}

export type { Proposal };
