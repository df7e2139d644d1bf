import type { CatalogEntity } from '../domain/catalog';
import type { AgentName, ProposalChange } from '../domain/proposal';
import { draftDescriptions, draftRemovals } from './description-drafter';
import { proposePiiTags } from './pii/classifier';
import { checkLineage } from './lineage-checker';
import type { CatalogContext } from './catalog-context';
import type { Neighbours } from './description-evidence';

/** A change an agent proposes and what it relied on (short strings: rules, columns, lineage edges). */
export interface AgentProposal {
  change: ProposalChange;
  evidence: string[];
}

/** What a no-model agent computes for one entity; `neighbours` holds the entities it reads (lineage). */
export type AgentFn = (entity: CatalogEntity, ctx: CatalogContext, neighbours: Neighbours) => AgentProposal[];

export const NO_MODEL_AGENTS: Record<AgentName, AgentFn> = {
  'description-drafter': (e, ctx, neighbours) => [
    ...draftDescriptions(e, ctx, neighbours).map((d) => ({ change: d.change, evidence: d.fact.evidence })),
    ...draftRemovals(e, ctx, neighbours),
  ],
  'pii-classifier': (e) =>
    proposePiiTags(e).map((c) => ({ change: c, evidence: [`column ${c.column} of ${e.id}`, c.explanation] })),
  'lineage-checker': (e, ctx) =>
    checkLineage(e, ctx).map((c) => ({
      change: c,
      evidence: [`recorded upstream: ${e.upstream.join(', ') || '(none)'}`, `finding: ${c.finding} ${c.upstream}`],
    })),
};

/** Agents that read the entities upstream of the one they work on. */
export const NEEDS_NEIGHBOURS: ReadonlySet<AgentName> = new Set(['description-drafter']);

/** One line saying what a proposal would write. */
export function summarize(entityId: string, c: ProposalChange): string {
  switch (c.kind) {
    case 'description':
      return `describe ${c.target === 'table' ? entityId : `${entityId}.${c.column ?? '?'}`}: "${c.text.slice(0, 160)}"`;
    case 'description_removal':
      return `remove ARGUS's description of ${c.target === 'table' ? entityId : `${entityId}.${c.column ?? '?'}`} (its origin's text is gone): "${c.text.slice(0, 120)}"`;
    case 'pii_tag':
      return `tag ${entityId}.${c.column} as ${c.category} (${c.confidence.toFixed(2)}): ${c.explanation.slice(0, 120)}`;
    case 'lineage_flag':
      return c.finding === 'dangling_edge'
        ? `remove dangling edge ${entityId} ← ${c.upstream}`
        : `record edge ${entityId} ← ${c.upstream} (read by its SQL)`;
  }
}
