import { ApplicationFailure } from '@temporalio/common';
import { APIUserAbortError } from 'openai';
import { FailureType } from '../domain/ids';
import { ProviderError } from '../llm/errors';

const TYPE_BY_KIND: Record<ProviderError['kind'], string> = {
  burst: FailureType.ProviderBurst,
  exhausted: FailureType.BudgetExhausted,
  server: FailureType.ProviderServerError,
  auth: FailureType.ProviderAuth,
  bad_request: FailureType.ProviderBadRequest,
  malformed_output: FailureType.MalformedOutput,
  timeout: FailureType.ProviderTimeout,
  network: FailureType.ProviderServerError,
};

/**
 * The one place a provider error becomes a Temporal failure: burst → retryable with the provider's delay;
 * exhausted → non-retryable BudgetExhausted with the evidence; 5xx, timeouts, malformed output → retryable
 * (bounded by the retry policy); auth and bad request → non-retryable. Details never hold a key.
 */
export function toApplicationFailure(err: unknown): unknown {
  if (err instanceof APIUserAbortError) return err;
  if (!(err instanceof ProviderError)) return err;
  const details = err.toDetails();
  return ApplicationFailure.create({
    type: TYPE_BY_KIND[err.kind],
    message: err.message,
    nonRetryable: !err.retryable,
    details: [details],
    ...(err.kind === 'burst' && err.retryAfterSeconds !== null
      ? { nextRetryDelay: Math.max(100, Math.round(err.retryAfterSeconds * 1000)) }
      : {}),
  });
}

/**
 * A failure of ARGUS's own making (not a provider's), always non-retryable: retrying cannot fix bad input, a
 * missing catalog or sweep state, an unreadable entity, or an endpoint already retired. The workflow matches
 * `type` (domain/ids.ts FailureType) and shows `message` to people as the root cause.
 */
export function nonRetryableFailure(
  type: (typeof FailureType)[keyof typeof FailureType],
  message: string,
  details?: unknown,
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: true,
    ...(details !== undefined ? { details: [details] } : {}),
  });
}
