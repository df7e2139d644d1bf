import type { CatalogEntity } from '../domain/catalog';
import type { AgentName, ProposalChange } from '../domain/proposal';
import { draftDescriptions } from './description-drafter';
import { proposePiiTags } from './pii-classifier';
import { checkLineage } from './lineage-checker';
import type { CatalogContext } from './catalog-context';

/** What a no-model agent computes for one entity. */
export type AgentFn = (entity: CatalogEntity, ctx: CatalogContext) => ProposalChange[];

export const NO_MODEL_AGENTS: Record<AgentName, AgentFn> = {
  'description-drafter': (e, ctx) => draftDescriptions(e, ctx),
  'pii-classifier': (e) => proposePiiTags(e),
  'lineage-checker': (e, ctx) => checkLineage(e, ctx),
};

export const EVIDENCE: Record<AgentName, (e: CatalogEntity, c: ProposalChange) => string[]> = {
  'description-drafter': (e, c) => [
    `schema: ${e.kind} ${e.id} with ${e.columns.length} columns`,
    ...(c.kind === 'description' && c.column
      ? [`column ${c.column}: ${e.columns.find((x) => x.name === c.column)?.type ?? '?'}`]
      : []),
    ...(e.upstream.length ? [`recorded upstream: ${e.upstream.slice(0, 8).join(', ')}`] : []),
  ],
  'pii-classifier': (e, c) => (c.kind === 'pii_tag' ? [`column ${c.column} of ${e.id}`, c.explanation] : []),
  'lineage-checker': (e, c) =>
    c.kind === 'lineage_flag'
      ? [`recorded upstream: ${e.upstream.join(', ') || '(none)'}`, `finding: ${c.finding} ${c.upstream}`]
      : [],
};

/** One line saying what a proposal would write. */
export function summarize(entityId: string, c: ProposalChange): string {
  switch (c.kind) {
    case 'description':
      return `describe ${c.target === 'table' ? entityId : `${entityId}.${c.column ?? '?'}`}: "${c.text.slice(0, 160)}"`;
    case 'pii_tag':
      return `tag ${entityId}.${c.column} as ${c.category} (${c.confidence.toFixed(2)}): ${c.explanation.slice(0, 120)}`;
    case 'lineage_flag':
      return c.finding === 'dangling_edge'
        ? `remove dangling edge ${entityId} ← ${c.upstream}`
        : `record edge ${entityId} ← ${c.upstream} (read by its SQL)`;
  }
}
