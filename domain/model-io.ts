import { z } from 'zod';
import { PiiCategory } from './pii-category';
import { ProposalKind } from './proposal';

/**
 * What ARGUS sends a model: one JSON document in the user message, `{"argusTask": <task>, ...}`.
 * The system message states the contract; the document is data, never instructions.
 */
export const ModelTaskName = z.enum(['describe', 'classify_pii', 'check_lineage', 'review']);
export type ModelTaskName = z.infer<typeof ModelTaskName>;

/** The evidence a model sees about one entity: schema and recorded lineage only. */
export const EntityEvidence = z.object({
  id: z.string(),
  kind: z.enum(['table', 'view']),
  name: z.string(),
  description: z.string().optional(),
  columns: z.array(
    z.object({
      name: z.string(),
      type: z.string(),
      /** Given only when false: a column without it is nullable (EVIDENCE_DEFAULTS in llm/prompts.ts). */
      nullable: z.boolean().optional(),
      /** Given only when true: a column without it is not part of the primary key. */
      primary_key: z.boolean().optional(),
      foreign_key: z.string().optional(),
      description: z.string().optional(),
    }),
  ),
  upstream: z.array(z.object({ id: z.string(), exists: z.boolean() })),
  /** What the catalog establishes beyond names and types (judgment/description-evidence.ts), bounded. */
  established: z
    .array(
      z.object({
        target: z.enum(['table', 'column']),
        column: z.string().optional(),
        basis: z.enum(['inherited', 'derived']),
        text: z.string(),
      }),
    )
    .optional(),
  sql: z.string().optional(),
  /** Entity ids its SQL could name (lineage candidates): carried per entity in a batched lineage task. */
  knownEntities: z.array(z.string()).optional(),
  /**
   * describe: what to describe, the table (when undescribed) and the undescribed columns something beyond name and
   * type grounds (activities/model/model-agents.ts describeTargets).
   */
  toDescribe: z.object({ table: z.boolean(), columns: z.array(z.string()) }).optional(),
});
export type EntityEvidence = z.infer<typeof EntityEvidence>;

export const DescribeOutput = z.object({
  descriptions: z.array(
    z.object({ target: z.enum(['table', 'column']), column: z.string().nullable(), text: z.string().min(1).max(600) }),
  ),
});
export type DescribeOutput = z.infer<typeof DescribeOutput>;

export const ClassifyPiiOutput = z.object({
  tags: z.array(
    z.object({
      column: z.string(),
      pii: z.boolean(),
      category: z.union([PiiCategory, z.enum(['business_contact', 'geo_coarse', 'identifier', 'none'])]),
      confidence: z.number().min(0).max(1),
      explanation: z.string().min(1).max(300),
    }),
  ),
});
export type ClassifyPiiOutput = z.infer<typeof ClassifyPiiOutput>;

export const CheckLineageOutput = z.object({
  findings: z.array(
    z.object({
      finding: z.enum(['dangling_edge', 'unrecorded_read']),
      upstream: z.string(),
      explanation: z.string().max(300),
    }),
  ),
});
export type CheckLineageOutput = z.infer<typeof CheckLineageOutput>;

/** The Arbiter's verdicts: one per proposal it was shown. */
export const ReviewOutput = z.object({
  verdicts: z.array(
    z.object({ proposalId: z.string(), decision: z.enum(['approve', 'reject']), reason: z.string().min(1).max(500) }),
  ),
});
export type ReviewOutput = z.infer<typeof ReviewOutput>;

/** A proposal as the reviewing model sees it. */
export const ProposalForReview = z.object({
  proposalId: z.string(),
  kind: ProposalKind,
  target: z.enum(['table', 'column']).optional(),
  column: z.string().optional(),
  text: z.string().optional(),
  category: z.string().optional(),
  finding: z.string().optional(),
  upstream: z.string().optional(),
});
export type ProposalForReview = z.infer<typeof ProposalForReview>;

/** A task about one entity: the document as ARGUS has always sent it. */
export type SingleModelTask =
  | { argusTask: 'describe'; entity: EntityEvidence }
  | { argusTask: 'classify_pii'; entity: EntityEvidence }
  | { argusTask: 'check_lineage'; entity: EntityEvidence; knownEntities: string[] }
  | { argusTask: 'review'; entity: EntityEvidence; proposals: ProposalForReview[] };

/** A proposal in a batched review: which of the document's entities it is about. */
export const BatchProposalForReview = ProposalForReview.extend({ entityId: z.string() });
export type BatchProposalForReview = z.infer<typeof BatchProposalForReview>;

/**
 * A task about several entities in one call, answered per entity id (lineage candidates travel in each
 * entity's `knownEntities`). The review of a batch answers with ReviewOutput, verdicts keyed by proposalId.
 */
export type BatchModelTask =
  | { argusTask: 'describe' | 'classify_pii' | 'check_lineage'; entities: EntityEvidence[] }
  | { argusTask: 'review'; entities: EntityEvidence[]; proposals: BatchProposalForReview[] };

export type ModelTask = SingleModelTask | BatchModelTask;

export const MODEL_OUTPUT_SCHEMAS = {
  describe: DescribeOutput,
  classify_pii: ClassifyPiiOutput,
  check_lineage: CheckLineageOutput,
  review: ReviewOutput,
} as const;

/**
 * In a batch each entity's descriptions come in a compact form, `table` (null when the table is not asked for) and
 * `columns`, not a list of `{"target","column","text"}` items: about a sixth fewer answer tokens (86 → 71 per
 * entity on 1,000 generated entities), and describe answers are most of a sweep's output. Read back into
 * DescribeOutput's descriptions (describeOfBatchItem).
 */
export const DescribeBatchItem = z.object({
  id: z.string(),
  table: z.string().min(1).max(600).nullable(),
  columns: z.array(z.object({ column: z.string(), text: z.string().min(1).max(600) })),
});
export type DescribeBatchItem = z.infer<typeof DescribeBatchItem>;

/** A batch item's descriptions as a single describe answer lists them. */
export function describeOfBatchItem(item: Omit<DescribeBatchItem, 'id'>): DescribeOutput['descriptions'] {
  return [
    ...(item.table !== null ? [{ target: 'table' as const, column: null, text: item.table }] : []),
    ...item.columns.map((c) => ({ target: 'column' as const, column: c.column, text: c.text })),
  ];
}
export const DescribeBatchOutput = z.object({ entities: z.array(DescribeBatchItem) });
export type DescribeBatchOutput = z.infer<typeof DescribeBatchOutput>;

/** In a batch the model lists only the columns that are personal data (pii: true): the rest is never used. */
export const ClassifyPiiBatchItem = z.object({ id: z.string(), tags: ClassifyPiiOutput.shape.tags });
export const ClassifyPiiBatchOutput = z.object({ entities: z.array(ClassifyPiiBatchItem) });
export type ClassifyPiiBatchOutput = z.infer<typeof ClassifyPiiBatchOutput>;

export const CheckLineageBatchItem = z.object({ id: z.string(), findings: CheckLineageOutput.shape.findings });
export const CheckLineageBatchOutput = z.object({ entities: z.array(CheckLineageBatchItem) });
export type CheckLineageBatchOutput = z.infer<typeof CheckLineageBatchOutput>;

/** What a batched answer must be as a whole; each entity's item (or verdict) is then checked on its own. */
export const MODEL_BATCH_OUTPUT_SCHEMAS = {
  describe: DescribeBatchOutput,
  classify_pii: ClassifyPiiBatchOutput,
  check_lineage: CheckLineageBatchOutput,
  review: ReviewOutput,
} as const;

/** One entity's item of each batched answer, validated alone so one bad item does not fail the batch. */
export const MODEL_BATCH_ITEM_SCHEMAS = {
  describe: DescribeBatchItem,
  classify_pii: ClassifyPiiBatchItem,
  check_lineage: CheckLineageBatchItem,
  review: ReviewOutput.shape.verdicts.element,
} as const;

// ---------------------------------------------------------------------------------------------
// The wire form: how an entity's evidence is written into the user message.

/**
 * A column as sent: `[name, type]`, then its constraints (SQL words: NOT NULL, PRIMARY KEY, REFERENCES <column>,
 * "" when none) and its description, each left out when nothing follows. As `{"name":…,"type":…}` objects the
 * keys were a third of a column's tokens, and columns are most of what a sweep sends.
 */
export const WireColumn = z.union([
  z.tuple([z.string(), z.string()]),
  z.tuple([z.string(), z.string(), z.string()]),
  z.tuple([z.string(), z.string(), z.string(), z.string()]),
]);
export type WireColumn = z.infer<typeof WireColumn>;

/**
 * An entity's evidence as sent (EntityEvidence read by `fromWire`, written by `toWire`): columns as WireColumn
 * tuples; `upstream` the recorded upstream ids and `notInCatalog` those of them the catalog does not hold; an
 * `established` fact about a column names it, one without `column` is about the table; empty lists left out.
 */
export const WireEvidence = EntityEvidence.omit({ columns: true, upstream: true, established: true }).extend({
  columns: z.array(WireColumn).optional(),
  upstream: z.array(z.string()).optional(),
  notInCatalog: z.array(z.string()).optional(),
  established: z
    .array(z.object({ column: z.string().optional(), basis: z.enum(['inherited', 'derived']), text: z.string() }))
    .optional(),
});
export type WireEvidence = z.infer<typeof WireEvidence>;

function wireColumn(c: EntityEvidence['columns'][number]): WireColumn {
  const constraints = [
    c.nullable === false ? 'NOT NULL' : '',
    c.primary_key ? 'PRIMARY KEY' : '',
    c.foreign_key ? `REFERENCES ${c.foreign_key}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  if (c.description) return [c.name, c.type, constraints, c.description];
  return constraints ? [c.name, c.type, constraints] : [c.name, c.type];
}

/** Evidence in its wire form (WireEvidence). */
export function toWire(e: EntityEvidence): WireEvidence {
  const missing = e.upstream.filter((u) => !u.exists).map((u) => u.id);
  return {
    id: e.id,
    kind: e.kind,
    name: e.name,
    ...(e.description !== undefined ? { description: e.description } : {}),
    ...(e.columns.length > 0 ? { columns: e.columns.map(wireColumn) } : {}),
    ...(e.upstream.length > 0 ? { upstream: e.upstream.map((u) => u.id) } : {}),
    ...(missing.length > 0 ? { notInCatalog: missing } : {}),
    ...(e.established
      ? {
          established: e.established.map((f) => ({
            ...(f.target === 'column' ? { column: f.column } : {}),
            basis: f.basis,
            text: f.text,
          })),
        }
      : {}),
    ...(e.sql !== undefined ? { sql: e.sql } : {}),
    ...(e.knownEntities ? { knownEntities: e.knownEntities } : {}),
    ...(e.toDescribe ? { toDescribe: e.toDescribe } : {}),
  };
}

const REFERENCES = /\bREFERENCES (.+)$/;

/** Evidence read back from its wire form: what `toWire` wrote, flags that do not hold left out. */
export function fromWire(w: WireEvidence): EntityEvidence {
  const missing = new Set(w.notInCatalog ?? []);
  return {
    id: w.id,
    kind: w.kind,
    name: w.name,
    ...(w.description !== undefined ? { description: w.description } : {}),
    columns: (w.columns ?? []).map(([name, type, constraints = '', description]) => {
      const fk = REFERENCES.exec(constraints)?.[1];
      return {
        name,
        type,
        ...(/\bNOT NULL\b/.test(constraints) ? { nullable: false } : {}),
        ...(/\bPRIMARY KEY\b/.test(constraints) ? { primary_key: true } : {}),
        ...(fk ? { foreign_key: fk } : {}),
        ...(description !== undefined ? { description } : {}),
      };
    }),
    upstream: (w.upstream ?? []).map((id) => ({ id, exists: !missing.has(id) })),
    ...(w.established
      ? {
          established: w.established.map((f) =>
            f.column !== undefined
              ? { target: 'column' as const, column: f.column, basis: f.basis, text: f.text }
              : { target: 'table' as const, basis: f.basis, text: f.text },
          ),
        }
      : {}),
    ...(w.sql !== undefined ? { sql: w.sql } : {}),
    ...(w.knownEntities ? { knownEntities: w.knownEntities } : {}),
    ...(w.toDescribe ? { toDescribe: w.toDescribe } : {}),
  };
}

/** A task with its evidence in wire form: what the user message holds (llm/prompts.ts userMessage). */
export function taskToWire(task: ModelTask): unknown {
  if ('entities' in task) return { ...task, entities: task.entities.map(toWire) };
  return { ...task, entity: toWire(task.entity) };
}
