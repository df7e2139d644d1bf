/**
 * Reads a provider's error answer and says what it means for the sweep: BURST (wait and retry the
 * same endpoint), EXHAUSTED (stop using the endpoint for this sweep) or OTHER (not a throttle).
 *
 * The decision rests on the window and the kind of limit the answer names, never on how long the
 * stated wait is: a per-day quota may say "retry in 36s" and is still spent for the sweep, while a
 * per-minute quota may carry the same "check your plan and billing details" boilerplate as an empty
 * account. Status codes are only a first hint (credit exhaustion arrives as 400, 402, even 500).
 */
import { parseBodyDelaySeconds, readHeaderDelay, type HeaderDelay } from './durations';
import { entitlementRefusal } from './entitlement';
import { boundedBody, normalizeHeaders, type HeaderInput } from './redact';

export type ThrottleLabel = 'BURST' | 'EXHAUSTED' | 'OTHER';
export type ThrottleWindow = 'second' | 'minute' | 'hour' | 'day' | 'month' | 'credits' | 'unknown';

/** What an error answer means for the sweep, with the figures and the one line of evidence behind it. */
export interface ThrottleClassification {
  label: ThrottleLabel;
  retryAfterSeconds: number | null;
  window: ThrottleWindow | null;
  limit?: number;
  used?: number;
  requested?: number;
  resetAt?: string;
  reason: string;
  providerMessage?: string;
}

/** An HTTP answer as the client saw it. `status: null` means the status was not shown: read as 429. */
export interface ProviderResponse {
  status: number | null;
  headers?: HeaderInput;
  body: string | null | undefined;
}

const PROVIDER_MESSAGE_MAX = 600;
const SNIPPET_MAX = 100;
const HOUR_SECONDS = 3600;
const DAY_SECONDS = 86400;

// ---------------------------------------------------------------------------------------------
// Body facts

interface BodyFacts {
  /** The provider's own message, unredacted and unbounded (bounded when reported). */
  message: string | null;
  /** Every string the body holds, in order: the text evidence is searched in. */
  strings: string[];
  /**
   * Rate-limit headers some gateways copy into the body: an object under a key ending in `headers`
   * (OpenRouter `metadata.headers`, `upstream_headers`, `responseHeaders`), or `"name": value` pairs
   * quoted inside a string that holds the upstream's raw answer.
   */
  embeddedHeaders: Record<string, string>;
  quotaValues: number[];
  /** A numeric `error.code` (or `code`) >= 400, for gateways that answer 200 with an error body. */
  embeddedStatus: number | null;
}

const ID_KEY = /^(?:id|request_?id|user_?id|trace_?id|org(?:ani[sz]ation)?_?id|key_?id)$/i;
const MESSAGE_KEYS = new Set(['message', 'error_message', 'errormessage', 'detail', 'msg', 'error', 'details']);
const HEADERS_KEY = /headers$/i;
// A header quoted inside text: a gateway's dump of the upstream answer ("{'retry-after': '20', ...}").
const QUOTED_HEADER =
  /["']((?:x-)?(?:[a-z]+-)*ratelimit-[a-z0-9-]+|retry-after(?:-ms)?)["']\s*[:=]\s*["']?([^"',}\s][^"',}]*)/gi;

/** The JSON a string holds, whole ("{...}") or after a prefix ("OpenAIException - {...}"). */
function jsonInside(text: string): unknown {
  const start = text.search(/[{[]/);
  if (start < 0) return undefined;
  const end = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'));
  if (end <= start) return undefined;
  try {
    const v: unknown = JSON.parse(text.slice(start, end + 1));
    return v !== null && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

function readBody(body: string): BodyFacts {
  const facts: BodyFacts = { message: null, strings: [], embeddedHeaders: {}, quotaValues: [], embeddedStatus: null };
  const trimmed = body.trim();
  let parsed: unknown;
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      parsed = undefined;
    }
  }
  if (parsed === undefined || parsed === null || typeof parsed !== 'object') {
    const text =
      /<\/?[a-z][^>]*>/i.test(trimmed) && /<(?:html|body|head|title)\b/i.test(trimmed)
        ? trimmed
            .replace(/<[^>]+>/g, ' ')
            .replace(/\s+/g, ' ')
            .trim()
        : trimmed;
    if (text) {
      facts.strings.push(text);
      facts.message = text;
    }
    return facts;
  }
  const messages: Array<{ depth: number; text: string; order: number }> = [];
  const walk = (node: unknown, key: string, depth: number): void => {
    if (typeof node === 'string') {
      // Identifiers are random text: an id that happens to contain "rpm" is not a window.
      if (ID_KEY.test(key)) return;
      facts.strings.push(node);
      const k = key.toLowerCase();
      if (HEADERS_KEY.test(key)) {
        const nested = jsonInside(node);
        if (nested) walk(nested, key, depth + 1);
      }
      for (const m of node.matchAll(QUOTED_HEADER)) {
        const name = (m[1] ?? '').toLowerCase();
        if (!(name in facts.embeddedHeaders)) facts.embeddedHeaders[name] = (m[2] ?? '').trim();
      }
      // A gateway may pass the upstream's raw error on as a JSON string: its fields count too.
      if (depth < 8 && !HEADERS_KEY.test(key) && /[{[]/.test(node)) {
        const nested = jsonInside(node);
        if (nested) walk(nested, key, depth + 1);
      }
      if (MESSAGE_KEYS.has(k) && node.trim()) messages.push({ depth, text: node, order: messages.length });
      if (k === 'quotavalue' && /^\d+$/.test(node.trim())) facts.quotaValues.push(Number(node));
      if (k === 'code' && facts.embeddedStatus === null && /^[45]\d\d$/.test(node.trim()))
        facts.embeddedStatus = Number(node);
      return;
    }
    if (typeof node === 'number') {
      if (key.toLowerCase() === 'code' && facts.embeddedStatus === null && node >= 400 && node < 600)
        facts.embeddedStatus = node;
      if (key.toLowerCase() === 'quotavalue') facts.quotaValues.push(node);
      return;
    }
    if (Array.isArray(node)) {
      for (const item of node) walk(item, key, depth + 1);
      return;
    }
    if (node && typeof node === 'object') {
      const entries = Object.entries(node as Record<string, unknown>);
      if (HEADERS_KEY.test(key)) {
        for (const [hk, hv] of entries) {
          if (typeof hv === 'string' || typeof hv === 'number') facts.embeddedHeaders[hk.toLowerCase()] = String(hv);
        }
      }
      for (const [k, v] of entries) walk(v, k, depth + 1);
    }
  };
  walk(parsed, '', 0);
  // The shallowest message is the provider's headline; nested ones are usually details.
  messages.sort((a, b) => a.depth - b.depth || a.order - b.order);
  // An `error` that is itself an object has no string entry, so the `error.message` wins.
  facts.message = messages[0]?.text ?? null;
  return facts;
}

// ---------------------------------------------------------------------------------------------
// Evidence text

const URL = /\bhttps?:\/\/[^\s"'<>)\]]+/gi;
// Sales talk names limits the caller does not have ("add credits to unlock 1000 requests per day",
// "create a key with a higher monthly limit", "Upgrade ... /settings/billing"): it is not evidence
// about the limit that was hit, so each sentence is cut where the pitch starts.
const UPSELL =
  /\b(?:upgrade|unlock|increase|purchase|buy|add(?:ing)? (?:\d+ |more |some )?credits?|add(?:ing)? a payment|contact (?:sales|support|us)|sign up|higher (?:\w+ )?limits?|learn more|to continue using|enable usage|need more)\b/i;

function evidenceText(strings: string[]): string {
  const kept: string[] = [];
  for (const s of strings) {
    const noUrls = s.replace(URL, ' ');
    // A clause after a semicolon is read on its own, so a pitch before it does not hide its window.
    for (const sentence of noUrls.split(/(?<=[.!?;])\s+|\n+/)) {
      const pitch = sentence.search(UPSELL);
      const t = (pitch >= 0 ? sentence.slice(0, pitch) : sentence).trim();
      if (t) kept.push(t);
    }
  }
  return kept.join('\n');
}

// A compound identifier: snake_case, kebab-case, dotted, slashed, camelCase or PascalCase.
const IDENTIFIER =
  /[A-Za-z][A-Za-z0-9]*(?:[._:/-]+[A-Za-z0-9]+)+|[A-Za-z]*[a-z0-9][A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z][A-Za-z0-9]*/g;

/**
 * The words of every compound identifier in `text`, one identifier a line, lower case:
 * `tokens_per_day_limit_exceeded` → "tokens per day limit exceeded", `RPDLimit` → "rpd limit".
 * The phrase rules then read a limit named inside a code or type as they read it in prose.
 */
export function identifierWords(text: string): string {
  const lines: string[] = [];
  for (const m of text.matchAll(IDENTIFIER)) {
    const words = m[0]
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .split(/[._:/\s-]+/)
      .filter(Boolean)
      .map((w) => w.toLowerCase());
    if (words.length > 1) lines.push(words.join(' '));
  }
  return lines.join('\n');
}

function snippet(m: RegExpExecArray | null): string | null {
  if (!m) return null;
  const s = m[0].replace(/\s+/g, ' ').trim();
  return s.length > SNIPPET_MAX ? `${s.slice(0, SNIPPET_MAX)}…` : s;
}

function firstMatch(text: string, patterns: RegExp[]): string | null {
  for (const re of patterns) {
    const hit = snippet(re.exec(text));
    if (hit) return hit;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Rules. Each reads the evidence text; the decision order lives in `decide`.

/** Money or account state: no amount of waiting inside a sweep brings these back. */
const ACCOUNT_SPENT = [
  /insufficient[_\s-]*(?:quota|balance|credits?|funds)/i,
  /(?<![a-z])credit[_\s-]*(?:balance|limit)(?![a-z])/i,
  /(?<![a-z])credits?(?![a-z])/i,
  /(?<![a-z])balance(?![a-z])/i,
  /hard[_\s-]*limit/i,
  /spend(?:ing)?[_\s-]*(?:limit|cap)/i,
  /can only afford/i,
  /payment[_\s-]*required|past[_\s-]*due|overdue|unpaid/i,
  /suspend|deactivat/i,
  /(?:account|organi[sz]ation|project)[^.\n]{0,25}(?:disabled|locked|banned|blocked|closed|terminated)/i,
  /(?:free[_\s-]*)?trial[^.\n]{0,30}(?:ended|expired|exhausted|over)/i,
];

/** A limit of zero: this tier may not call this model at all, so waiting cannot help. */
// Horizontal space only: the evidence joins the body's strings with newlines, and a label ending in
// "limit" followed by a header value "0" is not a limit of zero.
const ZERO_LIMIT = [/(?<![a-z])limit(?:[^\S\n]+of)?[^\S\n]*[:=]?[^\S\n]*0(?![.\d])(?!,\d{3})/i];

/** The request itself does not fit: neither waiting nor another key of the same size helps. */
const TOO_LARGE = [
  /request too large|too large for (?:the )?model|payload too large|request entity too large/i,
  /context[_\s-]*length|maximum context|context window|prompt is too long|input is too long/i,
  /too many tokens in (?:the |this )?request|exceeds? the (?:model'?s? )?max(?:imum)? (?:context|input|number of tokens)/i,
  /max_tokens[^.\n]{0,30}too large/i,
];

interface WindowHit {
  window: ThrottleWindow;
  evidence: string;
}

const LONG_WINDOWS: Array<[RegExp, ThrottleWindow]> = [
  [
    /(?<![a-z])(?:per[\s_-]*month|monthly|(?:a|each|every) month)(?![a-z])|\/\s?month\b|billing (?:cycle|period)/i,
    'month',
  ],
  [/Per_?Month|By_?Month/, 'month'],
  [/(?<![a-z])(?:per[\s_-]*day|daily|per[\s_-]*24[\s_-]*h(?:ours?)?|24[\s-]*hours?)(?![a-z])|\/\s?day\b/i, 'day'],
  [/(?:requests?|tokens?|calls?|queries|messages|generations?|images?)\s+(?:a|each|every)\s+day\b/i, 'day'],
  [/Per_?Day|By_?Day|\b(?:[TR]PD)\b/, 'day'],
  // The union has no week or year; those windows still outlast a sweep, so they count as long.
  [/(?<![a-z])(?:per[\s_-]*(?:week|year)|weekly|yearly|annual)(?![a-z])|Per_?(?:Week|Year)/i, 'unknown'],
];

// An hour counts as short: a durable Temporal timer waits it out at no cost inside one sweep,
// while a day or more is where waiting stops being a plan and rotation takes over.
const SHORT_WINDOWS: Array<[RegExp, ThrottleWindow]> = [
  [/(?<![a-z])(?:per[\s_-]*hour|hourly)(?![a-z])|\/\s?h(?:ou)?r\b/i, 'hour'],
  [/Per_?Hour|By_?Hour|\b[TR]PH\b/, 'hour'],
  [/(?<![a-z])(?:per[\s_-]*min(?:ute)?s?|(?:a|each|every) minute)(?![a-z])|\/\s?min(?:ute)?\b/i, 'minute'],
  [/Per_?Minute|By_?Minute/, 'minute'],
  [/(?<![a-z0-9])[io]?[tr]pm(?![a-z0-9])/i, 'minute'],
  [/(?<![a-z])(?:per[\s_-]*sec(?:ond)?s?)(?![a-z])|\/\s?sec(?:ond)?\b/i, 'second'],
  [/Per_?Second|By_?Second|\b[TR]PS\b/, 'second'],
  // Concurrency slots free up as soon as in-flight calls finish: a seconds-scale wait.
  [
    /concurren(?:t|cy)|parallel requests|simultaneous requests|in[\s-]?flight|too many (?:open )?connections/i,
    'second',
  ],
];

// Inside an identifier a bare unit is a window only next to a limit word ("rate limit rpd",
// "daily quota", "requests day reset"): an identifier's words carry no "per".
const LIMIT_WORD = String.raw`(?:limit|limits|ratelimit|quota|quotas|rate|requests?|tokens?|reset|remaining|exceeded|throttled?|cap|allowance|usage)`;
const IDENT_UNIT = (unit: string): RegExp =>
  new RegExp(
    String.raw`(?:^|\s)(?:${unit})(?:\s\S+){0,3}\s${LIMIT_WORD}(?:\s|$)|(?:^|\s)${LIMIT_WORD}(?:\s\S+){0,3}\s(?:${unit})(?:\s|$)`,
    'm',
  );
const IDENT_WINDOWS: Array<[RegExp, ThrottleWindow]> = [
  [/(?:^|\s)[irt]p(?:mo|mth)(?:\s|$)/m, 'month'],
  [IDENT_UNIT('month|months|monthly|mo|1mo'), 'month'],
  [/(?:^|\s)[irt]pd(?:\s|$)/m, 'day'],
  [IDENT_UNIT('day|days|daily|1d|24h'), 'day'],
  [IDENT_UNIT('week|weekly|year|yearly|annual'), 'unknown'],
  [/(?:^|\s)[irt]ph(?:\s|$)/m, 'hour'],
  [IDENT_UNIT('hour|hours|hourly|1h'), 'hour'],
  [/(?:^|\s)[irt]pm(?:\s|$)/m, 'minute'],
  [IDENT_UNIT('minute|minutes'), 'minute'],
  [/(?:^|\s)[irt]ps(?:\s|$)/m, 'second'],
  [IDENT_UNIT('second|seconds'), 'second'],
];

const PER_N =
  /(?<![a-z])per\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)(?![a-z])/i;

function windowOfSeconds(seconds: number): ThrottleWindow {
  if (seconds < 60) return 'second';
  if (seconds < 3600) return 'minute';
  if (seconds < DAY_SECONDS) return 'hour';
  if (seconds < 28 * DAY_SECONDS) return 'day';
  return 'month';
}

const UNIT_SECONDS: Array<[RegExp, number]> = [
  [/^(?:ms|milliseconds?)$/i, 1e-3],
  [/^(?:s|secs?|seconds?)$/i, 1],
  [/^(?:m|mins?|minutes?)$/i, 60],
  [/^(?:h|hrs?|hours?)$/i, 3600],
  [/^(?:d|days?)$/i, DAY_SECONDS],
];

const isLong = (w: ThrottleWindow): boolean => w === 'day' || w === 'month' || w === 'unknown';

function windowsNamed(text: string, identifiers: string): WindowHit[] {
  const hits: WindowHit[] = [];
  for (const [re, window] of [...LONG_WINDOWS, ...SHORT_WINDOWS]) {
    const hit = snippet(re.exec(text)) ?? snippet(re.exec(identifiers));
    if (hit) hits.push({ window, evidence: hit });
  }
  for (const [re, window] of IDENT_WINDOWS) {
    const hit = snippet(re.exec(identifiers));
    if (hit) hits.push({ window, evidence: hit });
  }
  const perN = PER_N.exec(text);
  if (perN) {
    const unit = UNIT_SECONDS.find(([re]) => re.test(perN[2] ?? ''));
    if (unit) hits.push({ window: windowOfSeconds(Number(perN[1]) * unit[1]), evidence: snippet(perN) ?? perN[0] });
  }
  return hits;
}

const HEADER_WINDOW = /(second|minute|hour|day|month)/;

/**
 * Cerebras-style names (x-ratelimit-remaining-requests-day: 0) say which window ran dry. Without
 * any remaining-* header for a named window, reset or limit headers that all name one window
 * (a gateway passing on only `x-ratelimit-reset-requests-day`) name it; several windows name none.
 */
function windowsFromHeaders(headers: Record<string, string>): WindowHit[] {
  const hits: WindowHit[] = [];
  const named: WindowHit[] = [];
  let anyRemaining = false;
  for (const [name, value] of Object.entries(headers)) {
    if (!/ratelimit/.test(name)) continue;
    const m = HEADER_WINDOW.exec(name);
    if (!m) continue;
    const evidence = { window: m[1] as ThrottleWindow, evidence: `${name}: ${value.trim()}` };
    if (/remaining/.test(name)) {
      anyRemaining = true;
      if (Number(value.trim()) === 0) hits.push(evidence);
    } else named.push(evidence);
  }
  if (!anyRemaining && named.length > 0 && named.every((h) => h.window === named[0]?.window) && named[0])
    hits.push(named[0]);
  return hits;
}

// Money words that some providers also use for rate windows ("per-minute token budget"), so a
// named window outranks them; alone they mean the account's allowance is spent.
const BUDGET =
  /budget[^.\n]{0,40}(?:limit|exceeded|exhausted|reached|depleted|spent)|(?:exceeded|reached|exhausted)[^.\n]{0,30}budget/i;
const QUOTA_TALK = [
  /rate[\s_-]*limit|quota|too many requests|throttl|resource[_\s-]*exhausted/i,
  BUDGET,
  /(?<![a-z])limit(?![a-z])[^.\n]*(?:exceeded|reached)|(?:exceeded|reached)[^.\n]*(?<![a-z])limit(?![a-z])/i,
];

// "Subscription key" is a credential's name (Azure API Management), not a subscription.
const SOFT_BILLING = [
  /(?<![a-z])(?:billing|payment|subscription(?![\s_-]*key)|paid plan|plan limit)(?![a-z])/i,
  BUDGET,
];

// ---------------------------------------------------------------------------------------------
// Figures

const NUM = String.raw`(\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?`;
const LIMIT_FIG = new RegExp(
  String.raw`(?<![a-z])limit(?:ed to)?(?:[^\S\n]+of)?[^\S\n]*[:=(]?[^\S\n]*${NUM}(?![\w/])`,
  'i',
);
const USED_FIG = new RegExp(String.raw`(?<![a-z])used\s*[:=]?\s*${NUM}`, 'i');
const REQUESTED_FIG = new RegExp(String.raw`(?<![a-z])requested(?:\s+up\s+to)?\s*[:=]?\s*${NUM}`, 'i');

function figure(re: RegExp, text: string): number | undefined {
  const m = re.exec(text);
  return m?.[1] === undefined ? undefined : Number(m[1].replace(/,/g, ''));
}

interface Figures {
  limit?: number;
  used?: number;
  requested?: number;
}

/** Limit and used from x-ratelimit-limit-* / -remaining-*, taking the kind closest to empty. */
function headerFigures(headers: Record<string, string>): Figures {
  const kinds = new Map<string, { limit?: number; remaining?: number }>();
  for (const [name, raw] of Object.entries(headers)) {
    const m = /^(.*ratelimit)-(?:(limit|remaining)(?:-(.+))?|(.+)-(limit|remaining))$/.exec(name);
    if (!m) continue;
    const value = Number(raw.trim());
    if (!Number.isFinite(value)) continue;
    const field = (m[2] ?? m[5]) as 'limit' | 'remaining';
    const kind = `${m[1]}|${m[3] ?? m[4] ?? ''}`;
    const entry = kinds.get(kind) ?? {};
    entry[field] = value;
    kinds.set(kind, entry);
  }
  let best: { limit: number; remaining: number } | null = null;
  for (const e of kinds.values()) {
    if (e.limit === undefined || e.remaining === undefined) continue;
    const ratio = e.limit > 0 ? e.remaining / e.limit : 0;
    const bestRatio = best ? (best.limit > 0 ? best.remaining / best.limit : 0) : Infinity;
    if (ratio < bestRatio) best = { limit: e.limit, remaining: e.remaining };
  }
  if (best) return { limit: best.limit, used: Math.max(0, best.limit - best.remaining) };
  for (const e of kinds.values()) if (e.limit !== undefined) return { limit: e.limit };
  return {};
}

// ---------------------------------------------------------------------------------------------
// Decision

interface Decision {
  label: ThrottleLabel;
  window: ThrottleWindow | null;
  why: string;
}

interface Evidence {
  status: number;
  /** Prose and labels with sales pitches cut: where windows, quota talk and figures are read. */
  text: string;
  /** The words of the compound identifiers in `text`, one identifier a line. */
  identifiers: string;
  /** Prose strings only (the body's sentences), pitch cut: account state stated in words. */
  prose: string;
  /** Label strings only (types, codes, limit names: no whitespace) and their words. */
  labels: string;
  /** Every string uncut, URLs removed, with identifier words: where entitlement is read. */
  whole: string;
  figures: Figures;
  bodyFigures: Figures;
  zeroQuotaValue: boolean;
  headerWindows: WindowHit[];
  statedWaits: Array<{ seconds: number; source: string }>;
}

function pickWindow(hits: WindowHit[], long: boolean): WindowHit | null {
  const order: ThrottleWindow[] = long ? ['month', 'day', 'unknown'] : ['hour', 'minute', 'second'];
  for (const w of order) {
    const hit = hits.find((h) => h.window === w);
    if (hit) return hit;
  }
  return null;
}

/**
 * The order when signals disagree, first match wins:
 *  1. not an error status, or 413 → OTHER;
 *  2. account state stated in the body's prose (credit balance, insufficient balance, hard or spend
 *     limit, suspended) → EXHAUSTED: the account itself says it is spent;
 *  3. an entitlement refusal read by meaning (llm/entitlement.ts: the answer says a plan, tier,
 *     subscription, payment, paid usage, feature or verification the account lacks is required, or
 *     that the thing is not available on its plan) → EXHAUSTED, with or without quota words and
 *     under any error type (`rate_limit_error` included), unless it calls itself temporary;
 *  4. a money word only in a label (type, code: `insufficient_credits`, `insufficient_quota`) with
 *     no short window named and no short wait stated in the body → EXHAUSTED;
 *  5. a limit of 0 → EXHAUSTED; 6. a request larger than the limit → OTHER;
 *  7. a named day/month (or longer) window → EXHAUSTED, under any type (`rate_limit_error`);
 *  8. a stated relative wait of a day or more → EXHAUSTED;
 *  9. a named short window (second, minute, hour, concurrency) → BURST, even under a money or
 *     quota label: the window an answer names outranks the label of its type;
 * 10. with no window named at all, a wait of under an hour stated in the body ("try again in 20s")
 *     → BURST: the provider itself says the call will go through soon (not on 402);
 * 11. an upgrade or purchase offered as the only way to use the thing ("upgrade to a paid plan to
 *     use this model") → EXHAUSTED;
 * 12. billing words with no window → EXHAUSTED; 402 → EXHAUSTED; 429 → BURST; quota talk on
 *     another 4xx → BURST; anything else → OTHER.
 * A window is named in the message, the type, the code, any compound identifier (split into its
 * words), the real headers, or the upstream headers a gateway nested inside the body; when a long
 * and a short window are both named, the long one wins (7 before 9).
 */
function decide(ev: Evidence): Decision {
  const { status, text } = ev;
  if (status < 400) return { label: 'OTHER', window: null, why: `HTTP ${status} is not an error status` };
  if (status === 413)
    return { label: 'OTHER', window: null, why: 'HTTP 413: the request is too large, not a throttle' };

  const named = [...windowsNamed(text, ev.identifiers), ...ev.headerWindows];
  const long = pickWindow(
    named.filter((h) => isLong(h.window)),
    true,
  );
  const short = pickWindow(
    named.filter((h) => !isLong(h.window)),
    false,
  );

  const spent = firstMatch(ev.prose, ACCOUNT_SPENT);
  if (spent) return { label: 'EXHAUSTED', window: long?.window ?? 'credits', why: `account/credit state "${spent}"` };

  const entitlement = entitlementRefusal(ev.whole);
  if (entitlement?.strength === 'requirement')
    return {
      label: 'EXHAUSTED',
      window: long?.window ?? (entitlement.payment ? 'credits' : 'unknown'),
      why: `entitlement refusal "${entitlement.evidence}": no retry gives this key access`,
    };

  // Only a wait the body states in words or fields counts: gateways add retry-after headers to
  // every refusal, whatever its kind.
  const briefWait =
    status === 402 ? undefined : ev.statedWaits.find((w) => w.source === 'body' && w.seconds < HOUR_SECONDS);
  const spentLabel = firstMatch(ev.labels, ACCOUNT_SPENT);
  if (spentLabel && !short && !briefWait)
    return { label: 'EXHAUSTED', window: long?.window ?? 'credits', why: `account/credit label "${spentLabel}"` };

  const zero =
    firstMatch(text, ZERO_LIMIT) ??
    (ev.zeroQuotaValue ? 'quotaValue 0' : null) ??
    (ev.figures.limit === 0 ? 'rate-limit header limit 0' : null);
  if (zero)
    return {
      label: 'EXHAUSTED',
      window: long?.window ?? short?.window ?? 'unknown',
      why: `quota "${zero}": this tier may not call it at all`,
    };

  const tooLarge = firstMatch(text, TOO_LARGE);
  if (tooLarge) return { label: 'OTHER', window: null, why: `request does not fit ("${tooLarge}"), not a throttle` };
  const { limit, requested } = ev.bodyFigures;
  if (limit !== undefined && requested !== undefined && requested > limit) {
    return {
      label: 'OTHER',
      window: null,
      why: `requested ${requested} exceeds the whole limit ${limit}, not a throttle`,
    };
  }

  // Only 429 (and 402, handled after) is a throttle by status; elsewhere the body must talk quota.
  // A money label with a short window (reached here) is a throttle whose type is mislabelled.
  const quotaTalk = status === 429 || status === 402 || spentLabel !== null || firstMatch(text, QUOTA_TALK) !== null;

  if (quotaTalk && long)
    return { label: 'EXHAUSTED', window: long.window, why: `quota window is long ("${long.evidence}")` };

  // A stated wait reads the window, not the urgency: a provider cannot ask for a longer wait than
  // its window, so a wait of a day or more means the window is at least a day. A short wait says
  // nothing about the window (a per-day quota may reset in 36 s), so it is never read the other way.
  const dayWait = ev.statedWaits.find((w) => w.seconds >= DAY_SECONDS);
  if (quotaTalk && dayWait) {
    return {
      label: 'EXHAUSTED',
      window: windowOfSeconds(dayWait.seconds),
      why: `stated wait of ${dayWait.seconds}s (${dayWait.source}) implies a window of a day or more`,
    };
  }

  if (quotaTalk && short)
    return {
      label: 'BURST',
      window: short.window,
      why: `quota window is short ("${short.evidence}")${spentLabel ? `, outranking the label "${spentLabel}"` : ''}`,
    };

  if (quotaTalk && briefWait && !long)
    return {
      label: 'BURST',
      window: windowOfSeconds(briefWait.seconds),
      why: `the body asks for a wait of ${briefWait.seconds}s and names no long window${spentLabel ? `, outranking the label "${spentLabel}"` : ''}`,
    };

  if (entitlement)
    return {
      label: 'EXHAUSTED',
      window: entitlement.payment ? 'credits' : 'unknown',
      why: `an upgrade is the only way on ("${entitlement.evidence}"): no retry gives this key access`,
    };

  const soft = firstMatch(text, SOFT_BILLING);
  if (soft)
    return { label: 'EXHAUSTED', window: 'credits', why: `billing or budget named with no time window ("${soft}")` };

  if (status === 402) return { label: 'EXHAUSTED', window: 'credits', why: 'HTTP 402 Payment Required' };
  if (status === 429)
    return {
      label: 'BURST',
      window: 'unknown',
      why: 'HTTP 429 naming no long window or account state: wait and retry',
    };
  if (quotaTalk && status >= 400 && status < 500 && status !== 401) {
    return {
      label: 'BURST',
      window: 'unknown',
      why: `HTTP ${status} talks about a rate limit but names no long window`,
    };
  }
  return { label: 'OTHER', window: null, why: `HTTP ${status} with no throttle or quota evidence` };
}

// ---------------------------------------------------------------------------------------------
// Public API

/**
 * Classify an error answer as BURST, EXHAUSTED or OTHER by the limit window and kind it names,
 * with the stated delay (headers first, then the body), the figures and one line of evidence.
 */
export function classifyProviderResponse(response: ProviderResponse, now: Date = new Date()): ThrottleClassification {
  const rawBody = response.body ?? '';
  const headers = normalizeHeaders(response.headers);
  const facts = readBody(rawBody);
  let status = response.status ?? 429;
  // Some gateways answer 200 and put the real status in the error body.
  if (status < 400 && facts.embeddedStatus !== null) status = facts.embeddedStatus;

  const embedded: Record<string, string> = {};
  for (const [k, v] of Object.entries(facts.embeddedHeaders)) if (!(k in headers)) embedded[k] = v;
  const allHeaders = { ...embedded, ...headers };

  const text = evidenceText(facts.strings);
  const identifiers = identifierWords(text);
  const proseStrings = facts.strings.filter((x) => /\s/.test(x.trim()));
  const labelStrings = facts.strings.filter((x) => !/\s/.test(x.trim()));
  const labelText = evidenceText(labelStrings);
  const uncut = facts.strings.map((x) => x.replace(URL, ' ')).join('\n');
  const bodyFigures: Figures = {
    limit: figure(LIMIT_FIG, text) ?? facts.quotaValues[0],
    used: figure(USED_FIG, text),
    requested: figure(REQUESTED_FIG, text),
  };
  const hf = headerFigures(allHeaders);
  const figures: Figures = {
    limit: bodyFigures.limit ?? hf.limit,
    // Header usage only describes the body's limit when no other limit was named or both agree.
    used: bodyFigures.used ?? (bodyFigures.limit === undefined || bodyFigures.limit === hf.limit ? hf.used : undefined),
    requested: bodyFigures.requested,
  };

  // Delay: the real headers, then what the body says, then headers a gateway copied into the body.
  let delay: HeaderDelay | null = readHeaderDelay(headers, now);
  let delaySource = delay ? `header ${delay.header}` : '';
  const bodyDelay = parseBodyDelaySeconds(rawBody);
  if (!delay && bodyDelay !== null) {
    delay = { seconds: bodyDelay, at: new Date(now.getTime() + bodyDelay * 1000), header: '', relative: true };
    delaySource = 'body';
  }
  if (!delay) {
    delay = readHeaderDelay(embedded, now);
    if (delay) delaySource = `body metadata ${delay.header}`;
  }

  // Only waits written relative to now are evidence about the window: an absolute reset time
  // read against a skewed clock (or a replayed capture) would invent a window length.
  const statedWaits: Evidence['statedWaits'] = [];
  if (bodyDelay !== null) statedWaits.push({ seconds: bodyDelay, source: 'body' });
  const retryHeader = readHeaderDelay(
    { 'retry-after': headers['retry-after'], 'retry-after-ms': headers['retry-after-ms'] },
    now,
  );
  if (retryHeader?.relative) statedWaits.push({ seconds: retryHeader.seconds, source: `header ${retryHeader.header}` });
  const nestedRetry = readHeaderDelay(
    { 'retry-after': embedded['retry-after'], 'retry-after-ms': embedded['retry-after-ms'] },
    now,
  );
  if (nestedRetry?.relative)
    statedWaits.push({ seconds: nestedRetry.seconds, source: `body metadata ${nestedRetry.header}` });

  const decision = decide({
    status,
    text,
    figures,
    bodyFigures,
    zeroQuotaValue: facts.quotaValues.includes(0),
    headerWindows: windowsFromHeaders(allHeaders),
    statedWaits,
    identifiers,
    prose: evidenceText(proseStrings),
    labels: `${labelText}\n${identifierWords(labelText)}`,
    whole: `${uncut}\n${identifierWords(uncut)}`,
  });

  const shownStatus = response.status === null ? '429 (status not shown)' : String(status);
  const result: ThrottleClassification = {
    label: decision.label,
    retryAfterSeconds: delay ? delay.seconds : null,
    window: decision.window,
    reason: `${decision.label} on HTTP ${shownStatus}: ${decision.why}${delay ? `; delay from ${delaySource}` : ''}`,
  };
  if (figures.limit !== undefined) result.limit = figures.limit;
  if (figures.used !== undefined) result.used = figures.used;
  if (figures.requested !== undefined) result.requested = figures.requested;
  if (delay) result.resetAt = delay.at.toISOString();
  if (facts.message) result.providerMessage = boundedBody(facts.message.trim(), PROVIDER_MESSAGE_MAX);
  return result;
}
