import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { APIUserAbortError } from 'openai';
import { FailureType } from '../domain/ids';
import { ProviderError } from '../llm/errors';
import { DamagedRecordError } from '../state/file/fs';

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

/** The damaged state record inside `err` (itself or a cause), if any. */
function damagedRecordOf(err: unknown, depth = 0): DamagedRecordError | undefined {
  if (err instanceof DamagedRecordError) return err;
  if (depth > 4 || err === null || typeof err !== 'object' || err instanceof ApplicationFailure) return undefined;
  return damagedRecordOf((err as { cause?: unknown }).cause, depth + 1);
}

/** Socket errors of a connection that was refused, dropped or timed out: the server is away, not the request bad. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
/**
 * PostgreSQL's SQLSTATEs for the same: class 08 (connection exception), and 57P01-57P03 (the server is shutting
 * down, crashed, or is still starting).
 */
const isConnectionSqlState = (code: string) => /^08[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code);
/** node-postgres's own messages for a connection lost under a query or a pool that cannot get one. */
const CONNECTION_MESSAGES = [
  /connection terminated/i,
  /terminating connection due to administrator command/i,
  /the database system is (starting up|shutting down)/i,
  /timeout exceeded when trying to connect/i,
  /connection (?:timeout|ended unexpectedly)/i,
  /Client has encountered a connection error/i,
];

/**
 * The connection failure inside `err` (itself, its `cause`, or one of an AggregateError's — Node tries every
 * address of a host), as a short text naming it; undefined when `err` is not one.
 */
export function connectionFailureOf(err: unknown, depth = 0): string | undefined {
  if (depth > 4 || err === null || typeof err !== 'object') return undefined;
  if (err instanceof ApplicationFailure) return undefined;
  const e = err as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (CONNECTION_CODES.has(code) || isConnectionSqlState(code) || CONNECTION_MESSAGES.some((r) => r.test(message)))
    return message || code;
  if (Array.isArray(e.errors)) {
    for (const x of e.errors) {
      const m = connectionFailureOf(x, depth + 1);
      if (m) return m;
    }
  }
  return connectionFailureOf(e.cause, depth + 1);
}

/**
 * An activity that meets a damaged state record fails at once (SweepStateDamaged, non-retryable, naming the
 * file). One that fails because a database it needs is away raises a retryable DatabaseUnavailable naming the
 * cause, instead of the socket's bare message: Temporal retries the whole attempt (every ARGUS activity is
 * idempotent), and if the outage outlasts the retry policy people read "a database ARGUS needs is unreachable",
 * not "ECONNREFUSED". Anything else passes through untouched.
 */
export const databaseOutageInterceptor: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (err) {
        const damaged = damagedRecordOf(err);
        if (damaged) throw nonRetryableFailure(FailureType.SweepStateDamaged, damaged.message);
        const why = connectionFailureOf(err);
        if (!why) throw err;
        throw ApplicationFailure.create({
          type: FailureType.DatabaseUnavailable,
          message: `a database ARGUS needs (the PostgreSQL state store or catalog) is unreachable: ${why.slice(0, 300)}`,
          nonRetryable: false,
          cause: err instanceof Error ? err : undefined,
        });
      }
    },
  },
});

/**
 * A database away (refused, dropped, a pool that found no connection in time) is no damage to work around: it fails
 * the attempt, and Temporal runs it again once the database answers. Call it first where an error is otherwise
 * taken as a record lost or damaged.
 */
export function throwIfOutage(e: unknown): void {
  if (connectionFailureOf(e)) throw e;
}

/**
 * `read`'s value, or `fallback` when it fails: a record damaged or missing is left out by the caller, as it says.
 * A database away is not: that error passes, the attempt fails, and Temporal runs it again once the database answers
 * (a page's outcomes read as none would be remembered as undecided).
 */
export async function unlessOutage<T>(read: Promise<T>, fallback: T): Promise<T> {
  try {
    return await read;
  } catch (e) {
    throwIfOutage(e);
    return fallback;
  }
}
