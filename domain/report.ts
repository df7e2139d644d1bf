import { z } from 'zod';
import type { EntityFailure, ProposalChange, Decision, AgentName } from './proposal';
import type { ReviewMode } from './sweep';

export interface KindCounts {
  proposed: number;
  approved: number;
  rejected: number;
  not_reviewed: number;
  written: number;
}

/** Evidence kept when an endpoint was retired: the provider's own words, bounded and redacted. */
export const RetiredEndpoint = z.object({
  endpointId: z.string(),
  reason: z.string(),
  window: z.string().nullable(),
  status: z.number().nullable(),
  resetAt: z.string().nullable(),
  providerMessage: z.string(),
  body: z.string(),
  requestId: z.string().nullable(),
  retiredAt: z.string(),
});
export type RetiredEndpoint = z.infer<typeof RetiredEndpoint>;

export interface ReportProposal {
  id: string;
  entityId: string;
  agent: AgentName;
  kind: ProposalChange['kind'];
  change: ProposalChange;
  outcome: Decision;
  reason: string;
  reviewer: string;
  written: boolean;
  writeNote?: string;
}

/** Calls and tokens of a group of model calls. */
export interface TokenTotals {
  calls: number;
  promptTokens: number;
  completionTokens: number;
}

/**
 * Model calls of the sweep and their tokens: the provider's `usage` when it gave one, else an estimate
 * (`estimatedCalls` says how many). `perEntity` divides the totals by the entities requested.
 */
export interface ModelUsage extends TokenTotals {
  estimatedCalls: number;
  /**
   * Answers taken from the state store's answer memory instead of a call (a request byte for byte one answered
   * before): not in `calls` or the tokens. Absent in reports older than it.
   */
  remembered?: number;
  perEntity: TokenTotals;
  /** By agent (`review` is the Arbiter's model review) and by endpoint id. */
  byAgent: Record<string, TokenTotals>;
  byEndpoint: Record<string, TokenTotals>;
}

/** The sweep report. `partial` is true whenever fewer entities were fully processed than requested or anything was left unreviewed. */
export interface HumanReviewSummary {
  /** Proposals parked for people (at most the sweep's queue limit). */
  waited: number;
  approved: number;
  rejected: number;
  /** Not decided by the deadline: not reviewed, not written. */
  expired: number;
  /** Approved by the Arbiter but not parked: the queue was full. Not reviewed, not written. */
  notParked: number;
  /** How long the sweep waited for people after its automated work (one wait for the whole sweep). */
  waitedMs: number;
  deadline?: string;
}

/** fitBudget: entities the plan left for the next sweep (never counted as reviewed). */
export interface DeferredEntities {
  count: number;
  /** The first of them, in the order the next sweep takes them. */
  first: string[];
  verdict: 'fits' | 'partial' | 'does_not_fit';
  /** The plan, for people. */
  plan: string;
}

/**
 * What the sweep's memory of earlier decisions did (entity counts): `new` (never judged under this judgment key),
 * `changed` (its fingerprint or a neighbour's it reads changed), `unchanged`, `gone` (remembered, no longer in
 * the catalog), `carriedOver` (unchanged with every decision final: not judged again). `rounds`: passes over the
 * entities (a pass re-judges what the previous pass's writes changed, at most the input's `maxPasses`, default 3).
 */
export interface IncrementalSummary {
  new: number;
  changed: number;
  unchanged: number;
  gone: number;
  carriedOver: number;
  /** Entities judged in the first pass: new, changed, and unchanged ones with a decision still open. */
  judged: number;
  /** `false`: the sweep was asked to judge everything (`"incremental": false`, `--full`). */
  incremental: boolean;
  rounds: number;
  /** Entities judged again in later passes because a write of this sweep changed their evidence. */
  rejudged: number;
  /**
   * Of `rejudged`, the entities judged again for what they read of another entity a write changed (a lineage repair
   * of their upstream); the rest are entities whose own lineage a write repaired. With pageFixedPoint no later pass
   * judges an entity for its own descriptions or tags: its page's PII classifier read them in the same pass.
   */
  crossPageRejudged?: number;
  /** Entities whose evidence the last pass's writes changed: judged again by the next sweep. */
  unsettled: number;
  /** Why the memory was not used, or what else a reader should know (memory unreadable, judgment changed…). */
  note?: string;
  /** Set when the fail-safe tripped: the gone entities were kept in memory and the run is partial. */
  failSafe?: string;
}

export interface SweepReport {
  reportVersion: 1;
  sweepId: string;
  catalog: string;
  mode: ReviewMode;
  dryRun: boolean;
  startedAt: string;
  finishedAt: string;
  partial: boolean;
  partialReasons: string[];
  /**
   * What the catalog adapter said about the catalog as read when the report was built (a dbt catalog.json older
   * than the manifest, nodes it left out): caveats, not reasons to call the run partial. Absent: nothing said.
   */
  catalogNotes?: string[];
  /**
   * What the sweep could not record after its writes (the memory, the report file): said here, never a failure of
   * the sweep, and no reason to call it partial (its repairs are written and audited). Absent: all recorded.
   */
  notRecorded?: string[];
  entities: { requested: number; processed: number; failed: number };
  outcomes: { approved: number; rejected: number; not_reviewed: number };
  /** Per kind; a report from before description removals existed has no `description_removal`. */
  byKind: Record<Exclude<ProposalChange['kind'], 'description_removal'>, KindCounts> & {
    description_removal?: KindCounts;
  };
  written: number;
  alreadyApplied: number;
  keptHumanText: number;
  /** Approved repairs the catalog refused to take (a PostgreSQL role not owning the table, …); partial when > 0. */
  writesFailed: number;
  coverage: {
    descriptionsBefore: number;
    descriptionsAfter: number;
    describedBefore: number;
    describedAfter: number;
    describable: number;
    /**
     * Where the informative descriptions after the sweep came from: people, ARGUS inheriting a person's text
     * along lineage, ARGUS deriving it from SQL or keys, a model. Their sum is `describedAfter`.
     */
    sources: { human: number; inherited: number; derived: number; model: number };
    /** Descriptions present that only restate the name, type or schema: not counted in the figures above. */
    restatementsNotCounted: number;
  };
  piiGovernance: { tagged: number; piiLooking: number; ratio: number; taggedBefore: number };
  failures: EntityFailure[];
  failuresTruncated: number;
  endpoints: { retired: RetiredEndpoint[]; breakerTripped: boolean };
  modelUsage: ModelUsage;
  /** With fitBudget: what the sweep chose not to do, and why (not a reason to call the run partial). */
  deferred?: DeferredEntities;
  /** With human review: how many proposals waited for people, what they decided, how long the sweep waited. */
  humanReview?: HumanReviewSummary;
  /** What was new, changed, unchanged and gone since the memory of this catalog was written, and what was carried over. */
  incremental?: IncrementalSummary;
  proposals: ReportProposal[];
  proposalsTruncated: number;
  reportFile: string;
  executions: number;
}
