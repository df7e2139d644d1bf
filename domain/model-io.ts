import { z } from 'zod';
import { PiiCategory } from './catalog';
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
      nullable: z.boolean(),
      primary_key: z.boolean(),
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

export type ModelTask =
  | { argusTask: 'describe'; entity: EntityEvidence }
  | { argusTask: 'classify_pii'; entity: EntityEvidence }
  | { argusTask: 'check_lineage'; entity: EntityEvidence; knownEntities: string[] }
  | { argusTask: 'review'; entity: EntityEvidence; proposals: ProposalForReview[] };

export const MODEL_OUTPUT_SCHEMAS = {
  describe: DescribeOutput,
  classify_pii: ClassifyPiiOutput,
  check_lineage: CheckLineageOutput,
  review: ReviewOutput,
} as const;
