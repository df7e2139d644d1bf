/**
 * The one parser of written durations: human-review deadlines, `argus schedule create --every`, and the
 * Go-style durations providers put in rate-limit headers (llm/durations.ts). Workflow-safe: pure and
 * deterministic (workflows/sweep/human-review.ts turns the review deadline into a timer with it), no Node built-ins.
 *
 * Grammar (Go's time.ParseDuration without the sign, plus `d`): one or more parts `<number><unit>`,
 * number `12`, `1.5`, `.5` or `1.`; unit `ns`, `us`/`µs`/`μs`, `ms`, `s`, `m`, `h`, `d` (24h), lower-case
 * only (`M` could be read as months). Parts add up, spaces between them are allowed: `1h30m`, `1h 30m`,
 * `2m30.5s`. Empty text, a sign, a number without a unit (even `0`) and anything else are refused;
 * callers that accept bare seconds (provider headers) say so and handle them first.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign, what Go prints
  μs: 1e-3, // U+03BC greek mu, what people type
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** The accepted forms, in words, for error messages and help text. */
export const DURATION_FORMS =
  'a number and a unit (ns, us, ms, s, m, h, d), parts may be combined: 500ms, 90s, 30m, 1.5h, 1h30m, 2m30.5s, 7d';

// Longer unit names first so "ms" is not read as "m" followed by garbage.
// A unit must not run into a letter, so "12 seconds" is an unknown unit, not "12s" then "econds".
const PART = /(\d+(?:\.\d*)?|\.\d+)\s*(?:(ns|us|µs|μs|ms|s|m|h|d)(?![a-zA-Zµμ]))?\s*/y;

export type DurationReading = { ok: true; ms: number } | { ok: false; error: string };

/** Inclusive bounds a caller puts on a duration, in milliseconds. */
export interface DurationBounds {
  minMs?: number;
  maxMs?: number;
}

function refuse(text: string, why: string): DurationReading {
  return { ok: false, error: `${JSON.stringify(text)} is not a duration (${why}); write ${DURATION_FORMS}` };
}

/**
 * Milliseconds in `text` (possibly fractional: `500us` is 0.5), or an error naming the text, what is
 * wrong with it and the accepted forms. Never throws.
 */
export function readDuration(text: string, bounds: DurationBounds = {}): DurationReading {
  const s = text.trim();
  if (s === '') return refuse(text, 'it is empty');
  if (s[0] === '-') return refuse(text, 'negative durations are not allowed');
  if (s[0] === '+') return refuse(text, 'no sign is allowed');
  let ms = 0;
  let pos = 0;
  while (pos < s.length) {
    PART.lastIndex = pos;
    const m = PART.exec(s);
    if (!m) return refuse(text, `unexpected ${JSON.stringify(s.slice(pos))}`);
    const unit = m[2];
    if (unit === undefined) {
      const rest = s.slice(PART.lastIndex);
      if (rest === '' || /^[.\d]/.test(rest)) return refuse(text, `${JSON.stringify(m[1])} has no unit`);
      const word = /^\S+?(?=[\d.\s]|$)/.exec(rest)?.[0] ?? rest;
      return refuse(
        text,
        Object.prototype.hasOwnProperty.call(UNIT_MS, word.toLowerCase())
          ? 'units are lower-case'
          : `unknown unit ${JSON.stringify(word)}`,
      );
    }
    ms += Number(m[1]) * (UNIT_MS[unit] ?? NaN);
    pos = PART.lastIndex;
  }
  if (!Number.isFinite(ms)) return refuse(text, 'too large');
  // To the nanosecond, so decimal fractions add up as written: 0.7h is 2520000ms, not 2520000.0000000005.
  ms = Math.round(ms * 1e6) / 1e6;
  if (bounds.minMs !== undefined && ms < bounds.minMs)
    return { ok: false, error: `${JSON.stringify(text)} is too short: at least ${formatDuration(bounds.minMs)}` };
  if (bounds.maxMs !== undefined && ms > bounds.maxMs)
    return { ok: false, error: `${JSON.stringify(text)} is too long: at most ${formatDuration(bounds.maxMs)}` };
  return { ok: true, ms };
}

/** A duration that does not parse or is out of bounds; the message names the text and the accepted forms. */
export class DurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

/** Milliseconds in `text`, as readDuration; throws DurationError instead of returning an error. */
export function parseDuration(text: string, bounds: DurationBounds = {}): number {
  const r = readDuration(text, bounds);
  if (!r.ok) throw new DurationError(r.error);
  return r.ms;
}

/** Milliseconds written in the same grammar, largest units first: 5_400_000 → "1h30m", 0 → "0s". */
export function formatDuration(ms: number): string {
  let rest = Math.max(0, ms);
  let out = '';
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_MS[unit] ?? 1;
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  if (rest > 0) out += `${Number(rest.toFixed(6))}ms`;
  return out || '0s';
}
