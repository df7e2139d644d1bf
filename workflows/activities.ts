import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { SweepActivities } from '../activities/sweep-activities';
import { FailureType } from '../domain/ids';

// Failure types that no retry can fix: retrying them only burns time (or quota).
const NON_RETRYABLE = [
  FailureType.InvalidCatalog,
  FailureType.InvalidSweepInput,
  FailureType.BudgetExhausted,
  FailureType.ProviderAuth,
  FailureType.ProviderBadRequest,
  FailureType.EntityInvalid,
];

/**
 * Page-level catalog and write activities: local file work, quick, retried a few times. Every activity beats
 * each second while it runs (activities/heartbeat.ts), so a 10 s heartbeat timeout notices a dead worker in
 * about 10 s and the retry goes to a live one; startToClose (5 min) only bounds a live attempt that is stuck
 * (a page write of a 10,000-entity file catalog waits for at most a few group commits of ~1 s each).
 */
export const CATALOG_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '10s',
  retry: {
    initialInterval: '500ms',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    maximumAttempts: 5,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
};
export const catalogActivities = proxyActivities<SweepActivities>(CATALOG_OPTIONS);

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

export { NON_RETRYABLE };
