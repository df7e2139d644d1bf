import type { Client } from '@temporalio/client';
import {
  pendingReviewsQuery,
  reviewUpdate,
  type PendingReview,
  type ReviewUpdateInput,
  type ReviewUpdateResult,
} from '../workflows/messages';
import { plainTable } from './render';
import { InputError } from './sweeps';

export type ReviewDecision = ReviewUpdateInput['decisions'][number]['decision'];

/** Proposals of a running sweep that wait for a person (the `pendingReviews` query). */
export async function pendingReviews(client: Client, sweepId: string): Promise<PendingReview[]> {
  return client.workflow.getHandle(sweepId).query(pendingReviewsQuery);
}

/** The `review` update payload: one decision per proposal id, all by the same reviewer at the same time. */
export function reviewDecisions(
  proposalIds: string[],
  decision: ReviewDecision,
  reviewer: string,
  opts: { comment?: string; now?: Date } = {},
): ReviewUpdateInput {
  if (!reviewer.trim()) throw new InputError('--reviewer must name the person deciding');
  const ids = [...new Set(proposalIds)];
  if (ids.length === 0) throw new InputError('name at least one proposal id, or pass --all');
  const time = (opts.now ?? new Date()).toISOString();
  return {
    decisions: ids.map((proposalId) => ({
      proposalId,
      decision,
      reviewer,
      time,
      ...(opts.comment ? { comment: opts.comment } : {}),
    })),
  };
}

/** Send decisions with the `review` update and wait for the workflow's answer (validator refusals throw). */
export async function sendDecisions(
  client: Client,
  sweepId: string,
  input: ReviewUpdateInput,
): Promise<ReviewUpdateResult> {
  return client.workflow.getHandle(sweepId).executeUpdate(reviewUpdate, { args: [input] });
}

/** The pending reviews as a table for a terminal. */
export function renderPendingTable(rows: PendingReview[]): string {
  if (rows.length === 0) return 'No proposal is waiting for review.';
  const table = [
    ['proposal', 'page', 'kind', 'entity', 'change', 'arbiter', 'deadline'],
    ...rows.map((r) => [
      r.proposalId,
      String(r.pageIndex),
      r.kind,
      r.entityId,
      r.summary,
      r.arbiterReason.length > 60 ? r.arbiterReason.slice(0, 59) + '…' : r.arbiterReason,
      r.deadline,
    ]),
  ];
  return plainTable(table);
}
