/**
 * Duration and reset-time parsing for provider answers: Go-style durations in headers, delta
 * seconds, HTTP dates, RFC 3339 and epoch timestamps, and the delays providers write into bodies.
 * Pure functions; `now` is always passed in so callers and tests control the clock.
 */

import { readDuration } from '../domain/durations';

const NUMBER = String.raw`(?:\d+(?:\.\d*)?|\.\d+)`;
const PLAIN_SECONDS = new RegExp(`^${NUMBER}$`);

/**
 * Seconds in a Go-style duration ("1h30m43.2s", "205ms", "6m0s", "500µs"; the grammar of
 * domain/durations.ts, here case-insensitive) or a plain number of seconds ("45", "47.434392449").
 * Null for anything else, including negative values.
 */
export function parseDurationSeconds(text: string): number | null {
  const s = text.trim().toLowerCase();
  if (s === '') return null;
  if (PLAIN_SECONDS.test(s)) return Number(s);
  const r = readDuration(s);
  return r.ok ? r.ms / 1000 : null;
}

// Magnitude thresholds that separate the three numeric readings of a reset value.
// 1e11 as epoch seconds is the year 5138, as epoch ms it is 1973: anything that large is ms.
// 1e9 as epoch seconds is 2001; as a relative wait it would be 31 years, which no provider means.
const EPOCH_MS_MIN = 1e11;
const EPOCH_S_MIN = 1e9;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}/i;
const HTTP_DATE = /^[a-z]{3},?\s+\d{1,2}[\s-][a-z]{3}[\s-]\d{2,4}\s+\d{2}:\d{2}/i;

/** How a reset value was expressed; only relative forms say anything about the window length. */
export interface ResetReading {
  at: Date;
  relative: boolean;
}

/** Read a reset value as an absolute time, remembering whether it was written relative to now. */
export function readResetValue(value: string, now: Date): ResetReading | null {
  const v = value.trim();
  if (v === '') return null;
  if (PLAIN_SECONDS.test(v)) {
    const n = Number(v);
    if (n >= EPOCH_MS_MIN) return { at: new Date(n), relative: false };
    if (n >= EPOCH_S_MIN) return { at: new Date(n * 1000), relative: false };
    return { at: new Date(now.getTime() + n * 1000), relative: true };
  }
  const seconds = parseDurationSeconds(v);
  if (seconds !== null) return { at: new Date(now.getTime() + seconds * 1000), relative: true };
  if (ISO_DATE.test(v) || HTTP_DATE.test(v)) {
    const t = Date.parse(v);
    if (!Number.isNaN(t)) return { at: new Date(t), relative: false };
  }
  return null;
}

/**
 * When a reset value (Go duration, seconds, RFC 3339, HTTP-date, epoch s or epoch ms) points to.
 * Bare numbers are told apart by magnitude: >= 1e11 epoch ms, >= 1e9 epoch s, else seconds from now.
 */
export function parseResetAt(value: string, now: Date): Date | null {
  return readResetValue(value, now)?.at ?? null;
}

/** Where a header-stated delay came from, for the classifier's evidence and its `reason`. */
export interface HeaderDelay {
  seconds: number;
  at: Date;
  header: string;
  relative: boolean;
}

const RESET_HEADER = /^(?:x-)?(?:[a-z]+-)?ratelimit-(?:reset(?:-(.+))?|(.+)-reset)$/;

function lower(headers: Record<string, string | undefined>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out.set(k.toLowerCase(), v);
  return out;
}

function secondsUntil(at: Date, now: Date): number {
  return Math.max(0, (at.getTime() - now.getTime()) / 1000);
}

/**
 * The delay the headers state, with its source. Order: retry-after-ms, retry-after, then the
 * rate-limit reset headers. Among resets, the ones whose matching remaining-* header is 0 bind;
 * otherwise the latest reset is taken, since waiting less may hit the same wall again.
 */
export function readHeaderDelay(headers: Record<string, string | undefined>, now: Date): HeaderDelay | null {
  const h = lower(headers);
  const ms = h.get('retry-after-ms');
  if (ms !== undefined && PLAIN_SECONDS.test(ms.trim())) {
    const seconds = Number(ms.trim()) / 1000;
    return { seconds, at: new Date(now.getTime() + seconds * 1000), header: 'retry-after-ms', relative: true };
  }
  const ra = h.get('retry-after');
  if (ra !== undefined) {
    const r = readResetValue(ra, now);
    if (r) return { seconds: secondsUntil(r.at, now), at: r.at, header: 'retry-after', relative: r.relative };
  }
  const resets: Array<HeaderDelay & { binding: boolean }> = [];
  for (const [name, value] of h) {
    const m = RESET_HEADER.exec(name);
    if (!m) continue;
    const r = readResetValue(value, now);
    if (!r) continue;
    const kind = m[1] ?? m[2] ?? '';
    const prefix = name.slice(0, name.indexOf('ratelimit-') + 'ratelimit-'.length);
    const remaining =
      m[1] !== undefined || kind === ''
        ? h.get(`${prefix}remaining${kind ? `-${kind}` : ''}`)
        : h.get(`${prefix}${kind}-remaining`);
    resets.push({
      seconds: secondsUntil(r.at, now),
      at: r.at,
      header: name,
      relative: r.relative,
      binding: remaining !== undefined && Number(remaining.trim()) === 0,
    });
  }
  const bound = resets.filter((r) => r.binding);
  const pool = bound.length > 0 ? bound : resets;
  let best: HeaderDelay | null = null;
  for (const r of pool)
    if (best === null || r.seconds > best.seconds)
      best = { seconds: r.seconds, at: r.at, header: r.header, relative: r.relative };
  return best;
}

/**
 * Seconds from `now` until the endpoint may answer again according to the headers
 * (retry-after-ms, retry-after, x-ratelimit-reset*). Never negative; null when none is readable.
 */
export function parseRetryAfter(headers: Record<string, string | undefined>, now: Date): number | null {
  return readHeaderDelay(headers, now)?.seconds ?? null;
}

const WORD_UNIT_SECONDS: Array<[RegExp, number]> = [
  [/^(?:milliseconds?|millis|msecs?|ms)$/, 1e-3],
  [/^(?:seconds?|secs?|s)$/, 1],
  [/^(?:minutes?|mins?)$/, 60],
  [/^(?:hours?|hrs?|h)$/, 3600],
  [/^(?:days?|d)$/, 86400],
  [/^(?:weeks?|wks?)$/, 7 * 86400],
  [/^months?$/, 30 * 86400],
];

const COMPACT = /^(?:(?:\d+(?:\.\d+)?|\.\d+)(?:ns|us|µs|μs|ms|h|m|s|d))+(?![a-z0-9])/i;
const WORDED = /^(\d+(?:\.\d+)?)\s*([a-z]+)(?:\s*(?:,|and)?\s*)/i;

/** A duration at the very start of `text`, compact ("9m38.016s") or in words ("2 hours 5 minutes"). */
function leadingDuration(text: string): number | null {
  const compact = COMPACT.exec(text);
  if (compact) return parseDurationSeconds(compact[0]);
  let rest = text;
  let total: number | null = null;
  for (;;) {
    const m = WORDED.exec(rest);
    if (!m) break;
    const unit = WORD_UNIT_SECONDS.find(([re]) => re.test((m[2] ?? '').toLowerCase()));
    if (!unit) break;
    total = (total ?? 0) + Number(m[1]) * unit[1];
    rest = rest.slice(m[0].length);
  }
  return total;
}

// google.rpc.RetryInfo, as JSON ("retryDelay": "36s"), as a log dump (retryDelay: '36s') or as
// protobuf text (retry_delay { seconds: 36 }).
const RETRY_INFO = /retry_?delay["']?\s*[:=]?\s*(?:["']([^"']+)["']|\{\s*["']?seconds["']?\s*:\s*["']?(\d+))/i;
const DELAY_PHRASE =
  /\b(?:try again|retry|retrying|wait|resets?|available again|be available|retry-after)\s*(?:in|after|for|:)?\s*(?:about|approximately|roughly|~)?\s*/gi;

/**
 * Seconds the body says to wait: a google.rpc.RetryInfo retryDelay first, then the first phrase
 * like "try again in 9m38.016s", "retry after 86400 seconds", "Please wait 85841 seconds",
 * "Resets in 16 days". Null when the body states no delay.
 */
export function parseBodyDelaySeconds(body: string): number | null {
  const info = RETRY_INFO.exec(body);
  if (info) {
    const v = info[1] !== undefined ? parseDurationSeconds(info[1]) : Number(info[2]);
    if (v !== null && Number.isFinite(v)) return v;
  }
  DELAY_PHRASE.lastIndex = 0;
  for (let m = DELAY_PHRASE.exec(body); m !== null; m = DELAY_PHRASE.exec(body)) {
    const v = leadingDuration(body.slice(m.index + m[0].length));
    if (v !== null) return v;
    if (m[0].length === 0) DELAY_PHRASE.lastIndex++;
  }
  return null;
}
