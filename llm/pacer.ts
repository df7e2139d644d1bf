import { parseDurationSeconds } from './durations';
import { normalizeHeaders, type HeaderInput } from './redact';

interface Budget {
  remainingTokens: number | null;
  remainingRequests: number | null;
  tokensResetAt: number | null;
  requestsResetAt: number | null;
}

/** Where a fleet's workers share what the provider last said (the PostgreSQL state store); absent: this process. */
export interface PaceBoard {
  pace(key: string): Promise<Budget | undefined>;
  putPace(key: string, budget: Budget): Promise<void>;
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
 * fit in what the provider says remains, wait for the stated reset instead of hitting the wall. With a board
 * (the PostgreSQL state store) every worker of a fleet paces on what any of them last heard.
 */
export class Pacer {
  private budgets = new Map<string, Budget>();
  constructor(private readonly board?: PaceBoard) {}

  /** Take the fleet's latest figures for a key (when a board is shared and they are still current). */
  async sync(key: string, now = Date.now()): Promise<void> {
    if (!this.board) return;
    const b = await this.board.pace(key);
    if (!b) return;
    const resets = [b.tokensResetAt, b.requestsResetAt].filter((x): x is number => x !== null);
    if (resets.length > 0 && resets.every((t) => t <= now)) return; // every window it speaks of has reset
    this.budgets.set(key, b);
  }

  /** Remember what an answer's headers say remains (and tell the fleet, when a board is shared). */
  async observe(endpointId: string, headers: HeaderInput, now = Date.now()): Promise<void> {
    const h = normalizeHeaders(headers);
    const b: Budget = {
      remainingTokens: num(h['x-ratelimit-remaining-tokens']),
      remainingRequests: num(h['x-ratelimit-remaining-requests']),
      tokensResetAt: resetAt(h['x-ratelimit-reset-tokens'], now),
      requestsResetAt: resetAt(h['x-ratelimit-reset-requests'], now),
    };
    if (b.remainingTokens === null && b.remainingRequests === null) return;
    this.budgets.set(endpointId, b);
    await this.board?.putPace(endpointId, b);
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

  /** What is known for a key (for a plan): the provider's last figures, with absolute reset times. */
  known(key: string): Budget | undefined {
    return this.budgets.get(key);
  }

  /** After waiting, what was known no longer holds. */
  forget(endpointId: string): void {
    this.budgets.delete(endpointId);
  }
}
