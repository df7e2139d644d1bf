import { condition, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { durationMs, ReviewDecisions, type HumanReviewConfig } from '../../domain/sweep';
import type { HumanReviewSummary } from '../../domain/report';
import { catalogActivities, WRITE_OPTIONS } from '../activities';
import { failureOf } from '../failures';
import { pendingReviewsQuery, reviewUpdate, type SweepProgress } from '../messages';
import type { Parked, ReviewCarry, Sweep } from './state';

/** Proposals one sweep parks for people; past it they stay not reviewed (said so), so nothing here grows unbounded. */
export const MAX_PARKED = 500;

/** The sweep's human-review gate (see openHumanReview). */
export type HumanReview = ReturnType<typeof openHumanReview>;

/**
 * The human-review gate: approved proposals of the configured kinds wait here for a person's decision. Pages park
 * them and go on at once (their writes leave them alone); the sweep waits for decisions once, at its end, until
 * one deadline (set when the first is parked), and writes what people approve. Registers the `pendingReviews`
 * query and the `review` update, whose validator refuses a bad payload before it is accepted.
 */
export function openHumanReview(progress: SweepProgress, carried: ReviewCarry | undefined) {
  const review: ReviewCarry = carried ?? {
    parked: [],
    waited: 0,
    overflow: 0,
    approved: 0,
    rejected: 0,
    expired: 0,
    rounds: 0,
  };
  const pending = new Map<string, Parked>(review.parked.map((p) => [p.proposalId, p]));
  const undecided = () => [...pending.values()].filter((p) => !p.decided);
  let decisionsArrived = false;
  progress.awaitingReview = undecided().length;
  setHandler(pendingReviewsQuery, () => undecided().map(({ decided: _d, ...p }) => p));
  setHandler(
    reviewUpdate,
    (input) => {
      for (const d of input.decisions) pending.get(d.proposalId)!.decided = d;
      progress.awaitingReview = undecided().length;
      decisionsArrived = true;
      return { accepted: input.decisions.length, stillPending: undecided().length };
    },
    {
      // Runs before the update is accepted: a bad payload is refused with a message and changes nothing.
      validator: (input) => {
        const r = ReviewDecisions.safeParse(input);
        if (!r.success) {
          throw new Error(
            `invalid review decision: ${r.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`).join('; ')}`,
          );
        }
        const unknown = r.data.decisions.filter(
          (d) => !pending.get(d.proposalId) || pending.get(d.proposalId)!.decided,
        );
        if (unknown.length) {
          throw new Error(
            `not awaiting review: ${unknown
              .map((d) => d.proposalId)
              .slice(0, 10)
              .join(', ')} (see the pendingReviews query)`,
          );
        }
      },
    },
  );

  /**
   * Park a page's approved proposals of the configured kinds for people. The page goes on at once (its write
   * leaves them alone); the sweep waits for decisions once, at its end (settle), with one deadline.
   */
  async function park(sweep: Sweep, pageIndex: number, hr: HumanReviewConfig): Promise<void> {
    const { state } = sweep;
    const r = await catalogActivities.parkForHumanReview({
      ledgerKey: state.ledgerKey,
      pageIndex,
      kinds: hr.kinds,
      room: MAX_PARKED - pending.size,
      limit: MAX_PARKED,
    });
    if (r.parked.length > 0 && !review.deadline)
      review.deadline = new Date(Date.now() + durationMs(hr.deadline)).toISOString();
    for (const h of r.parked) pending.set(h.proposalId, { ...h, pageIndex, deadline: review.deadline! });
    review.waited += r.parked.length;
    review.overflow += r.overflow;
    state.counts.approved -= r.parked.length + r.overflow;
    state.counts.notReviewed += r.overflow;
    progress.awaitingReview = undecided().length;
  }

  /** Record and write what people decided so far (or, `expire`, everything left), one write round per batch. */
  async function writeDecisions(sweep: Sweep, expire: boolean): Promise<void> {
    const { cfg, state, sweepId } = sweep;
    const batch = [...pending.values()].filter((p) => expire || p.decided);
    if (batch.length === 0) return;
    const round = ++review.rounds;
    const byPage = new Map<number, Parked[]>();
    for (const p of batch) byPage.set(p.pageIndex, [...(byPage.get(p.pageIndex) ?? []), p]);
    for (const [pageIndex, items] of [...byPage].sort((a, b) => a[0] - b[0])) {
      const outcomes = items.map(outcomeOf);
      try {
        await catalogActivities.recordOutcomes({
          ledgerKey: state.ledgerKey,
          pageIndex,
          tag: `human-${round}`,
          outcomes,
        });
        const w = await catalogActivities.applyApprovedRepairs.executeWithOptions(
          { ...WRITE_OPTIONS, summary: `page ${pageIndex}: write what people approved (round ${round})` },
          [
            {
              ledgerKey: state.ledgerKey,
              sweepId,
              pageIndex,
              round,
              proposalIds: items.map((p) => p.proposalId),
              overwriteHumanText: cfg.overwriteHumanText,
              dryRun: cfg.dryRun,
            },
          ],
        );
        state.counts.written += w.written;
      } catch (err) {
        const f = failureOf(err);
        sweep.addFailures(
          [...new Set(items.map((p) => p.entityId))].map((entity) => ({ entity, stage: 'write' as const, ...f })),
        );
      }
      for (const o of outcomes) {
        if (o.decision === 'approved') review.approved++;
        else if (o.decision === 'rejected') review.rejected++;
        else review.expired++;
      }
      state.counts.approved += outcomes.filter((o) => o.decision === 'approved').length;
      state.counts.rejected += outcomes.filter((o) => o.decision === 'rejected').length;
      state.counts.notReviewed += outcomes.filter((o) => o.decision === 'not_reviewed').length;
      for (const p of items) pending.delete(p.proposalId);
    }
    progress.awaitingReview = undecided().length;
    Object.assign(progress, {
      approved: state.counts.approved,
      rejected: state.counts.rejected,
      written: state.counts.written,
    });
  }

  return {
    park,

    /** The sweep's one wait for people: write decisions as they arrive, until all are decided or the deadline. */
    async settle(sweep: Sweep): Promise<number> {
      if (pending.size === 0) return 0;
      const started = Date.now();
      const deadline = Date.parse(review.deadline!);
      progress.phase = 'awaiting_review';
      for (;;) {
        decisionsArrived = false;
        await writeDecisions(sweep, false);
        if (pending.size === 0) break;
        const left = deadline - Date.now();
        if (left <= 0) break;
        setCurrentDetails(
          `**Waiting for review**: ${undecided().length} proposals (deadline ${review.deadline}); the automated work is done. ` +
            `Use \`argus review list ${sweep.sweepId}\`.`,
        );
        await condition(() => decisionsArrived, left);
      }
      await writeDecisions(sweep, true);
      return Date.now() - started;
    },

    /** What the next execution carries on with: the counts and what still waits. */
    carried(): ReviewCarry {
      return { ...review, parked: [...pending.values()] };
    },

    /** The report's account of the wait (`waitedMs`: how long the sweep waited for people). */
    summary(waitedMs: number): HumanReviewSummary {
      return {
        waited: review.waited,
        approved: review.approved,
        rejected: review.rejected,
        expired: review.expired,
        notParked: review.overflow,
        waitedMs,
        ...(review.deadline ? { deadline: review.deadline } : {}),
      };
    },
  };
}

/** A person's decision as the outcome it becomes (none by the deadline: not reviewed). */
function outcomeOf(p: Parked) {
  const d = p.decided;
  if (!d)
    return {
      proposalId: p.proposalId,
      decision: 'not_reviewed' as const,
      reason: 'review expired',
      reviewer: 'none',
    };
  const note = d.comment ? `: ${d.comment}` : '';
  if (d.decision === 'approved')
    return {
      proposalId: p.proposalId,
      decision: 'approved' as const,
      reason: `approved by the Arbiter (${p.arbiterReason.slice(0, 300)}) and by ${d.reviewer}${note}`,
      reviewer: `human:${d.reviewer}`,
    };
  return {
    proposalId: p.proposalId,
    decision: 'rejected' as const,
    reason: `${d.decision === 'needs_changes' ? 'needs changes' : 'rejected'} by ${d.reviewer}${note}`.slice(0, 1000),
    reviewer: `human:${d.reviewer}`,
  };
}
