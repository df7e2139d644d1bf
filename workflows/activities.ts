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

/** Page-level catalog and write activities: local file work, quick, retried a few times. */
export const CATALOG_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '2 minutes',
  retry: {
    initialInterval: '500ms',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    maximumAttempts: 5,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
};
export const catalogActivities = proxyActivities<SweepActivities>(CATALOG_OPTIONS);

/** The report can read every page of a large sweep, so it heartbeats per page. */
export const REPORT_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '2 minutes',
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
