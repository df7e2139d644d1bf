import { z } from 'zod';
import { PiiCategory } from './pii-category';

/** Which agent produced a proposal. */
export const AgentName = z.enum(['description-drafter', 'pii-classifier', 'lineage-checker']);
export type AgentName = z.infer<typeof AgentName>;

export const DescriptionChange = z.object({
  kind: z.literal('description'),
  target: z.enum(['table', 'column']),
  column: z.string().optional(),
  text: z.string().min(1).max(2000),
});
export type DescriptionChange = z.infer<typeof DescriptionChange>;

/**
 * Whose record a table's row is, as the PII rules read it: a person's, an organisation's, a machine's, an event's
 * (a charge, a log line) or a thing's (a product, a place, a code list). It decides whose a contact-like column is.
 */
export const TableReading = z.enum(['person', 'organisation', 'machine', 'event', 'thing']);
export type TableReading = z.infer<typeof TableReading>;

export const PiiTagChange = z.object({
  kind: z.literal('pii_tag'),
  column: z.string(),
  category: PiiCategory,
  confidence: z.number().min(0).max(1),
  explanation: z.string().min(1).max(300),
  /** The table reading the proposer used; absent when it did not say (a model, an older ledger). */
  reading: TableReading.optional(),
});
export type PiiTagChange = z.infer<typeof PiiTagChange>;

export const LineageFinding = z.enum(['dangling_edge', 'unrecorded_read']);
export type LineageFinding = z.infer<typeof LineageFinding>;

/**
 * A lineage flag. `dangling_edge`: recorded upstream that no longer exists (repair: drop the edge).
 * `unrecorded_read`: the view's SQL reads an entity its lineage omits (repair: record the edge).
 */
export const LineageFlagChange = z.object({
  kind: z.literal('lineage_flag'),
  finding: LineageFinding,
  upstream: z.string(),
  explanation: z.string().max(300).optional(),
});
export type LineageFlagChange = z.infer<typeof LineageFlagChange>;

/**
 * Take back a description ARGUS wrote whose evidence is gone: an inherited text whose origin no longer holds the
 * person's text it was copied from. `text` is ARGUS's text as it stands (the write removes only that very text).
 */
export const DescriptionRemovalChange = z.object({
  kind: z.literal('description_removal'),
  target: z.enum(['table', 'column']),
  column: z.string().optional(),
  text: z.string().min(1).max(2000),
});
export type DescriptionRemovalChange = z.infer<typeof DescriptionRemovalChange>;

export const ProposalChange = z.discriminatedUnion('kind', [
  DescriptionChange,
  PiiTagChange,
  LineageFlagChange,
  DescriptionRemovalChange,
]);
export type ProposalChange = z.infer<typeof ProposalChange>;
export type ProposalKind = ProposalChange['kind'];
/** Every proposal kind, in the schema's order: read from the union itself, so a new kind appears everywhere. */
export const PROPOSAL_KINDS = ProposalChange.options.map((o) => o.shape.kind.value) as [
  ProposalKind,
  ...ProposalKind[],
];
export const ProposalKind = z.enum(PROPOSAL_KINDS);

/**
 * One proposed repair. `id` is a deterministic digest of (catalog, entity, change), so a repeated sweep
 * proposing the same repair carries the same id and the write step applies it once.
 */
export const Proposal = z.object({
  id: z.string(),
  entityId: z.string(),
  agent: AgentName,
  change: ProposalChange,
  /** What the agent relied on, in short strings (column names, lineage edges, rule names). */
  evidence: z.array(z.string().max(300)).max(20),
});
export type Proposal = z.infer<typeof Proposal>;

export const Decision = z.enum(['approved', 'rejected', 'not_reviewed']);
export type Decision = z.infer<typeof Decision>;

/** Who decided: the mechanical gate, a model endpoint, or a person. */
export const Reviewer = z.string().min(1).max(200);

export const Outcome = z.object({
  proposalId: z.string(),
  decision: Decision,
  reason: z.string().max(1000),
  reviewer: Reviewer,
});
export type Outcome = z.infer<typeof Outcome>;

/** Stage of the sweep where an entity failed. */
export const FailureStage = z.enum([
  'load',
  'description-drafter',
  'pii-classifier',
  'lineage-checker',
  'review',
  'write',
]);
export type FailureStage = z.infer<typeof FailureStage>;

/** A per-entity failure: a named terminal state in the result, never a failed sweep. */
export const EntityFailure = z.object({
  entity: z.string(),
  stage: FailureStage,
  category: z.string(),
  retryable: z.boolean(),
  message: z.string().max(2000),
});
export type EntityFailure = z.infer<typeof EntityFailure>;
