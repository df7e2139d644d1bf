// Every activity proxy and retry policy of the workflows, in one place: Temporal owns the retries (llm/ has none
// of its own), so what may be retried, how often and how long an attempt may take is all said here.
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { SweepActivities } from '../activities/sweep-activities';
import type { ModelActivities } from '../activities/model-activities';
import type { ReviewPlanActivities } from '../activities/review-plan';
import type { SweepConfig } from '../domain/sweep';
import { NON_RETRYABLE_FAILURE_TYPES } from '../domain/ids';

const NON_RETRYABLE = [...NON_RETRYABLE_FAILURE_TYPES];

/**
 * Page-level catalog and write activities: local file work, quick, retried. Every activity beats each second while
 * it runs (activities/heartbeat.ts), so a 10 s heartbeat timeout notices a dead worker in about 10 s and the retry
 * goes to a live one; startToClose (5 min) only bounds a live attempt that is stuck (a page write of a
 * 10,000-entity file catalog waits for at most a few group commits of ~1 s each). Ten attempts, 15 s apart at most,
 * wait about 75 s in all: a PostgreSQL state store restarted or failed over (DatabaseUnavailable, retryable) is
 * bridged, where five attempts (7.5 s) left a 20 s outage's pages unjudged.
 */
export const CATALOG_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '10s',
  retry: {
    initialInterval: '500ms',
    backoffCoefficient: 2,
    maximumInterval: '15s',
    maximumAttempts: 10,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
};
export const catalogActivities = proxyActivities<SweepActivities>(CATALOG_OPTIONS);
/** The Arbiter's gate and first batch plan in one step (activities/review-plan.ts): catalog work, retried alike. */
export const reviewPlanActivities = proxyActivities<ReviewPlanActivities>(CATALOG_OPTIONS);

/**
 * A page's write: once its intent is recorded the catalog may already hold its changes, and only a finished
 * attempt logs their audit lines. So it outlasts what the other activities give up on: 25 attempts, about five
 * minutes of waits, before its page is called failed (and the intent stays for the next attempt of any sweep of
 * this run to finish).
 */
export const WRITE_OPTIONS: ActivityOptions = {
  ...CATALOG_OPTIONS,
  retry: { ...CATALOG_OPTIONS.retry, maximumAttempts: 25 },
};

/** The report reads every page of a large sweep: a longer startToClose, the same 10 s heartbeat timeout. */
export const REPORT_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '10s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    maximumAttempts: 5,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
};
export const reportActivities = proxyActivities<SweepActivities>(REPORT_OPTIONS);

/** `argus sweep plan`: the plan reads the whole catalog and makes no model call, so it runs as long as a report. */
export const planActivities = proxyActivities<ModelActivities>(REPORT_OPTIONS);

/**
 * Model activities: one model call each. The retry policy is the whole retry loop: bursts wait the
 * provider's stated delay (nextRetryDelay), 5xx/timeouts/malformed output retry up to the bound,
 * BudgetExhausted/auth/bad request never retry. `throttleAttemptsBeforeRotation` bounds the attempts.
 */
export function modelActivityOptions(
  cfg: Pick<SweepConfig, 'throttleAttemptsBeforeRotation' | 'endpoints'>,
): ActivityOptions {
  const slowest = Math.max(60_000, ...cfg.endpoints.map((e) => e.timeoutMs));
  return {
    startToCloseTimeout: slowest + 90_000,
    // The call beats every second while it waits on the provider (activities/heartbeat.ts): a worker that
    // dies mid-call is noticed in ~10 s instead of holding the entity until startToClose.
    heartbeatTimeout: '10s',
    retry: {
      initialInterval: '500ms',
      backoffCoefficient: 2,
      maximumInterval: '20s',
      maximumAttempts: cfg.throttleAttemptsBeforeRotation,
      nonRetryableErrorTypes: NON_RETRYABLE,
    },
  };
}

/** The model activities with the sweep's model retry policy (modelActivityOptions). */
export function modelActivities(cfg: Pick<SweepConfig, 'throttleAttemptsBeforeRotation' | 'endpoints'>) {
  return proxyActivities<ModelActivities>(modelActivityOptions(cfg));
}
