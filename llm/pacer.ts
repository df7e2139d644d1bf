import { parseDurationSeconds } from './durations';
import { normalizeHeaders, type HeaderInput } from './redact';

interface Budget {
  remainingTokens: number | null;
  remainingRequests: number | null;
  tokensResetAt: number | null;
  requestsResetAt: number | null;
}

/** Longest wait the pacer will take on its own; beyond it the call goes ahead and the provider answers. */
const MAX_PACE_MS = 60_000;

function resetAt(v: string | undefined, now: number): number | null {
  if (!v) return null;
  const s = parseDurationSeconds(v);
  return s === null ? null : now + s * 1000;
}

function num(v: string | undefined): number | null {
  if (v === undefined) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/**
 * Per-endpoint pacing from the `x-ratelimit-*` headers of successful answers: before a call that will not
 * fit in what the provider says remains, wait for the stated reset instead of hitting the wall. Process-local:
 * a fleet shares one provider limit through the task queue's activity rate limit (see README).
 */
export class Pacer {
  private budgets = new Map<string, Budget>();

  observe(endpointId: string, headers: HeaderInput, now = Date.now()): void {
    const h = normalizeHeaders(headers);
    const b: Budget = {
      remainingTokens: num(h['x-ratelimit-remaining-tokens']),
      remainingRequests: num(h['x-ratelimit-remaining-requests']),
      tokensResetAt: resetAt(h['x-ratelimit-reset-tokens'], now),
      requestsResetAt: resetAt(h['x-ratelimit-reset-requests'], now),
    };
    if (b.remainingTokens === null && b.remainingRequests === null) return;
    this.budgets.set(endpointId, b);
  }

  /** Milliseconds to wait before a call needing `tokens` tokens (0 when it fits or nothing is known). */
  delayFor(endpointId: string, tokens: number, now = Date.now()): number {
    const b = this.budgets.get(endpointId);
    if (!b) return 0;
    let wait = 0;
    if (b.remainingTokens !== null && b.remainingTokens < tokens && b.tokensResetAt !== null)
      wait = Math.max(wait, b.tokensResetAt - now);
    if (b.remainingRequests !== null && b.remainingRequests < 1 && b.requestsResetAt !== null)
      wait = Math.max(wait, b.requestsResetAt - now);
    return Math.min(Math.max(0, wait), MAX_PACE_MS);
  }

  /** After waiting, what was known no longer holds. */
  forget(endpointId: string): void {
    this.budgets.delete(endpointId);
  }
}
