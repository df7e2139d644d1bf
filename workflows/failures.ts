import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure } from '@temporalio/workflow';
import { FailureType } from '../domain/ids';

/** What went wrong under Temporal's wrappers (an activity's, a child workflow's): the first cause that is neither. */
export function rootCause(err: unknown): unknown {
  let cause = err;
  while ((cause instanceof ActivityFailure || cause instanceof ChildWorkflowFailure) && cause.cause)
    cause = cause.cause;
  return cause;
}

/** The ApplicationFailure under the wrappers, when that is what failed (matched by its `type`, never its class). */
export function applicationFailureOf(err: unknown): ApplicationFailure | undefined {
  const cause = rootCause(err);
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/** A failure as the report names it: its type (`category`), whether a retry could help, and its message. */
export function failureOf(err: unknown): { category: string; retryable: boolean; message: string } {
  const cause = rootCause(err);
  if (cause instanceof ApplicationFailure)
    return { category: cause.type ?? 'ApplicationFailure', retryable: !cause.nonRetryable, message: cause.message };
  return {
    category: (cause as Error)?.name ?? 'Error',
    retryable: true,
    message: String((cause as Error)?.message ?? cause),
  };
}

/**
 * The one `InvalidSweepInput` failure: non-retryable, its message naming every bad field ("Invalid sweep input:
 * pageSize: …") and `details[0].fields` listing them. Thrown by a workflow whose input does not parse.
 */
export function invalidInput(what: string, problem: { message: string; fields: string[] }): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.InvalidSweepInput,
    nonRetryable: true,
    message: `Invalid ${what}: ${problem.message}`,
    details: [{ fields: problem.fields }],
  });
}
