import type { CatalogEntity } from '../../domain/catalog';
import { PiiCategory } from '../../domain/catalog';
import type { AgentName, ProposalChange } from '../../domain/proposal';
import { DescribeOutput, ClassifyPiiOutput, CheckLineageOutput } from '../../domain/model-io';
import { callStructured, type CallOptions } from '../../llm/client';
import { SYSTEM_PROMPTS, userMessage } from '../../llm/prompts';
import { entityEvidence } from './model-review';
import type { CatalogContext } from '../../judgment/catalog-context';
import type { Neighbours } from '../../judgment/description-evidence';

/** The call options every model-backed agent passes through to its calls (llm/client.ts). */
export type ModelCallOptions = CallOptions;

/**
 * Model-backed agents, behind the same contract as the no-model ones: entity in, proposed changes out.
 * Answers are filtered to what the catalog can hold (existing columns, known categories, no overwrites);
 * the Arbiter still reviews every one. Throws the llm/ typed errors.
 */
export async function proposeWithModel(
  agent: AgentName,
  entity: CatalogEntity,
  ctx: CatalogContext,
  o: ModelCallOptions,
  neighbours?: Neighbours,
): Promise<ProposalChange[]> {
  const evidence = entityEvidence(entity, ctx, neighbours);
  const cols = new Map(entity.columns.map((c) => [c.name, c]));
  switch (agent) {
    case 'description-drafter': {
      if (entity.description?.trim() && entity.columns.every((c) => c.description?.trim())) return [];
      const r = await callStructured({
        ...o,
        system: SYSTEM_PROMPTS.describe,
        user: userMessage({ argusTask: 'describe', entity: evidence }),
        schema: DescribeOutput,
        schemaName: 'argus_describe',
      });
      const out: ProposalChange[] = [];
      for (const d of r.output.descriptions) {
        if (d.target === 'table') {
          if (!entity.description?.trim()) out.push({ kind: 'description', target: 'table', text: d.text.trim() });
        } else if (d.column && cols.has(d.column) && !cols.get(d.column)!.description?.trim()) {
          out.push({ kind: 'description', target: 'column', column: d.column, text: d.text.trim() });
        }
      }
      return out;
    }
    case 'pii-classifier': {
      const r = await callStructured({
        ...o,
        system: SYSTEM_PROMPTS.classify_pii,
        user: userMessage({ argusTask: 'classify_pii', entity: evidence }),
        schema: ClassifyPiiOutput,
        schemaName: 'argus_classify_pii',
      });
      const out: ProposalChange[] = [];
      for (const t of r.output.tags) {
        const c = cols.get(t.column);
        const cat = PiiCategory.safeParse(t.category);
        if (
          !t.pii ||
          !c ||
          !cat.success ||
          entity.pii_exceptions.includes(c.name) ||
          c.tags.some((x) => x.kind === 'pii')
        )
          continue;
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
    case 'lineage-checker': {
      const r = await callStructured({
        ...o,
        system: SYSTEM_PROMPTS.check_lineage,
        user: userMessage({ argusTask: 'check_lineage', entity: evidence, knownEntities: knownNear(entity, ctx) }),
        schema: CheckLineageOutput,
        schemaName: 'argus_check_lineage',
      });
      return r.output.findings.map((f) => ({
        kind: 'lineage_flag' as const,
        finding: f.finding,
        upstream: f.upstream,
        explanation: f.explanation.slice(0, 300),
      }));
    }
  }
}

/** The entity ids a view's SQL could refer to: resolved from its words, so the prompt stays small. */
function knownNear(entity: CatalogEntity, ctx: CatalogContext): string[] {
  if (!entity.sql) return [];
  const out = new Set<string>();
  for (const w of entity.sql.match(/[A-Za-z_"`[\]][\w"`[\].]*/g) ?? []) {
    const id = ctx.resolve(w);
    if (id && id !== entity.id) out.add(id);
  }
  return [...out].slice(0, 50);
}
