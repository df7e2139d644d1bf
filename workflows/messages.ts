import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { SA_CATALOG, SA_MODE, SA_PARTIAL } from '../domain/ids';
import type { ProposalKind } from '../domain/proposal';

/** Live progress of a sweep (the `progress` query). */
export interface SweepProgress {
  phase: 'opening' | 'sweeping' | 'awaiting_review' | 'reporting' | 'done';
  catalog: string;
  mode: string;
  pagesDone: number;
  pageCount: number;
  entitiesRequested: number;
  entitiesDone: number;
  approved: number;
  rejected: number;
  notReviewed: number;
  written: number;
  failures: number;
  retiredEndpoints: string[];
  breakerTripped: boolean;
  execution: number;
  /** Proposals waiting for a person's decision (human review gate). */
  awaitingReview: number;
}

export const progressQuery = defineQuery<SweepProgress>('progress');

export const SA_KEYS = {
  partial: defineSearchAttributeKey(SA_PARTIAL, SearchAttributeType.BOOL),
  catalog: defineSearchAttributeKey(SA_CATALOG, SearchAttributeType.KEYWORD),
  mode: defineSearchAttributeKey(SA_MODE, SearchAttributeType.KEYWORD),
};

/** A proposal waiting for a person's decision (human review gate). */
export interface PendingReview {
  proposalId: string;
  pageIndex: number;
  entityId: string;
  kind: ProposalKind;
  /** One line: what would be written, e.g. "tag raw.customers.email as email (0.95)". */
  summary: string;
  arbiterReason: string;
  deadline: string;
}

/** Payload of the `review` update: one or many decisions (bulk). */
export interface ReviewUpdateInput {
  decisions: {
    proposalId: string;
    decision: 'approved' | 'rejected' | 'needs_changes';
    reviewer: string;
    time: string;
    comment?: string;
  }[];
}

export interface ReviewUpdateResult {
  accepted: number;
  stillPending: number;
}

export const pendingReviewsQuery = defineQuery<PendingReview[]>('pendingReviews');
/** Decisions arrive as this update; an invalid payload is refused by its validator with a clear message. */
export const reviewUpdate = defineUpdate<ReviewUpdateResult, [ReviewUpdateInput]>('review');
