import { parseEvery } from '../../client/schedules';
import { DURATION_FORMS, DurationError, formatDuration, parseDuration, readDuration } from '../../domain/durations';
import { durationMs, parseSweepInput } from '../../domain/sweep';
import { parseBodyDelaySeconds, parseDurationSeconds, parseResetAt, parseRetryAfter } from '../../llm/durations';

const NOW = new Date('2026-05-20T12:00:00.000Z');
const at = (iso: string): number => Date.parse(iso);

/**
 * One table, every entry point: the review deadline (SweepInput), `schedule create --every`, and the
 * provider-header reading. Rows are durations all three accept (whole seconds, 1s to 365d) or text all three
 * refuse; each entry point's own bounds and extras are in the tables after it.
 */
const SHARED: Array<[string, number | null]> = [
  ['90s', 90_000],
  ['30m', 1_800_000],
  ['24h', 86_400_000],
  ['7d', 604_800_000],
  ['1h30m', 5_400_000],
  ['1h 30m', 5_400_000],
  ['1.5h', 5_400_000],
  ['.5h', 1_800_000],
  ['2m30s', 150_000],
  ['1d12h', 129_600_000],
  ['6m0s', 360_000],
  ['1h0m0s', 3_600_000],
  ['  45s ', 45_000],
  ['1000ms', 1000],
  ['0.7h', 2_520_000],
  ['', null],
  ['   ', null],
  ['abc', null],
  ['-5s', null],
  ['+5s', null],
  ['5x', null],
  ['1m30', null],
  ['1.5.2s', null],
  ['s', null],
  ['h1', null],
  ['12 seconds', null],
  ['1w', null],
  ['1e3s', null],
  ['5s!', null],
  ['1h-30m', null],
];

const deadlineOf = (deadline: string) => parseSweepInput({ catalog: { kind: 'demo' }, humanReview: { deadline } });

describe.each<[string, (text: string) => number | null]>([
  [
    'review deadline (parseSweepInput, durationMs)',
    (text) => {
      const r = deadlineOf(text);
      return r.ok ? durationMs(r.value.humanReview?.deadline ?? '') : null;
    },
  ],
  [
    'schedule --every (parseEvery)',
    (text) => {
      try {
        return parseEvery(text);
      } catch {
        return null;
      }
    },
  ],
  [
    'provider header (parseDurationSeconds)',
    (text) => {
      const s = parseDurationSeconds(text);
      return s === null ? null : s * 1000;
    },
  ],
  [
    'provider header (parseRetryAfter, x-ratelimit-reset-tokens)',
    (text) => {
      const s = parseRetryAfter({ 'x-ratelimit-reset-tokens': text }, NOW);
      return s === null ? null : s * 1000;
    },
  ],
])('one duration grammar: %s', (_entry, read) => {
  test.each(SHARED)('%j -> %p ms', (text, expected) => {
    const got = read(text);
    if (expected === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(expected, 6);
  });
});

describe('readDuration', () => {
  test.each<[string, number]>([
    ['500ms', 500],
    ['2m30.5s', 150_500],
    ['1.5s', 1500],
    ['500us', 0.5],
    ['500µs', 0.5],
    ['500μs', 0.5],
    ['10ns', 1e-5],
    ['1h30m43.2s', 5_443_200],
    ['0s', 0],
    ['1.s', 1000],
    ['30m1h', 5_400_000],
  ])('%j -> %p ms', (text, ms) => {
    expect(readDuration(text)).toEqual({ ok: true, ms });
  });

  test.each<[string, string]>([
    ['', 'it is empty'],
    ['-5s', 'negative durations are not allowed'],
    ['+5s', 'no sign is allowed'],
    ['30', '"30" has no unit'],
    ['1m30', '"30" has no unit'],
    ['5x', 'unknown unit "x"'],
    ['12 seconds', 'unknown unit "seconds"'],
    ['1H', 'units are lower-case'],
    ['abc', 'unexpected "abc"'],
  ])('%j is refused: %s, naming the text and the accepted forms', (text, why) => {
    const r = readDuration(text);
    expect(r).toEqual({
      ok: false,
      error: `${JSON.stringify(text)} is not a duration (${why}); write ${DURATION_FORMS}`,
    });
  });

  test('bounds name the text and the limit', () => {
    expect(readDuration('500ms', { minMs: 1000 })).toEqual({ ok: false, error: '"500ms" is too short: at least 1s' });
    expect(readDuration('366d', { maxMs: 365 * 86_400_000 })).toEqual({
      ok: false,
      error: '"366d" is too long: at most 365d',
    });
    expect(readDuration('1s', { minMs: 1000, maxMs: 1000 })).toEqual({ ok: true, ms: 1000 });
  });

  test('parseDuration throws a DurationError with the same text', () => {
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(() => parseDuration('1h30')).toThrow(DurationError);
    expect(() => parseDuration('1h30')).toThrow('"1h30" is not a duration ("30" has no unit)');
  });

  test.each<[number, string]>([
    [0, '0s'],
    [1, '1ms'],
    [1000, '1s'],
    [5_400_000, '1h30m'],
    [150_500, '2m30s500ms'],
    [365 * 86_400_000, '365d'],
  ])('formatDuration(%p) = %j, which reads back the same', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(readDuration(text)).toEqual({ ok: true, ms });
  });
});

describe('review deadline bounds and messages', () => {
  test.each<[string, number]>([
    ['500ms', 500],
    ['1ms', 1],
    ['2m30.5s', 150_500],
    ['365d', 365 * 86_400_000],
  ])('%j is a deadline of %p ms', (deadline, ms) => {
    const r = deadlineOf(deadline);
    expect(r.ok && durationMs(r.value.humanReview?.deadline ?? '')).toBe(ms);
  });

  test('the default is 24h', () => {
    const r = parseSweepInput({ catalog: { kind: 'demo' }, humanReview: {} });
    expect(r.ok && r.value.humanReview?.deadline).toBe('24h');
  });

  test.each<[string, string]>([
    ['0s', '"0s" is too short: at least 1ms'],
    ['500us', '"500us" is too short: at least 1ms'],
    ['366d', '"366d" is too long: at most 365d'],
    ['1h30', '"1h30" is not a duration ("30" has no unit); write a number and a unit'],
    ['soon', '"soon" is not a duration (unexpected "soon")'],
  ])('%j is refused with a message naming the field, the text and why', (deadline, message) => {
    const r = deadlineOf(deadline);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.fields).toEqual(['humanReview.deadline']);
    expect(r.message).toContain(`humanReview.deadline: ${message}`);
  });

  test('durationMs is whole milliseconds', () => {
    expect(durationMs('1.5ms')).toBe(2);
    expect(durationMs('7d')).toBe(604_800_000);
  });
});

describe('schedule --every bounds and messages', () => {
  test.each<[string, string]>([
    ['500ms', '--every: "500ms" is too short: at least 1s'],
    ['1500ms', '--every: "1500ms" is not a whole number of seconds'],
    ['2m30.5s', '--every: "2m30.5s" is not a whole number of seconds'],
    ['1h30', '--every: "1h30" is not a duration ("30" has no unit); write a number and a unit'],
  ])('%j: %s', (every, message) => {
    expect(() => parseEvery(every)).toThrow(message);
  });

  test('accepts what a deadline accepts in whole seconds', () => {
    expect(parseEvery('1s')).toBe(1000);
    expect(parseEvery('1.5h')).toBe(5_400_000);
  });
});

describe('provider headers read the same grammar, plus what providers send', () => {
  test.each<[string, number]>([
    ['45', 45], // bare seconds: headers only (delta-seconds), refused as a deadline or --every
    ['0', 0],
    ['6M0S', 360], // case-insensitive: headers only
    ['500ms', 0.5],
    ['205ms', 0.205],
    ['10ns', 1e-8],
  ])('%j -> %p s', (text, seconds) => {
    expect(parseDurationSeconds(text)).toBeCloseTo(seconds, 9);
  });

  test.each(['45', '6M0S'])('%j is not a deadline nor an --every', (text) => {
    expect(deadlineOf(text).ok).toBe(false);
    expect(() => parseEvery(text)).toThrow(/--every/);
  });
});

describe('parseDurationSeconds', () => {
  test.each<[string, number | null]>([
    ['1h30m43.2s', 5443.2],
    ['205ms', 0.205],
    ['6m0s', 360],
    ['1.984999999s', 1.984999999],
    ['9m38.016s', 578.016],
    ['28m48s', 1728],
    ['2h', 7200],
    ['36s', 36],
    ['500us', 0.0005],
    ['500µs', 0.0005],
    ['500μs', 0.0005],
    ['10ns', 1e-8],
    ['1h 30m', 5400],
    ['  12s ', 12],
    ['45', 45],
    ['47.434392449', 47.434392449],
    ['0', 0],
    ['0s', 0],
    ['', null],
    ['   ', null],
    ['abc', null],
    ['-5s', null],
    ['5x', null],
    ['1m30', null],
    ['1.5.2s', null],
    ['s', null],
    ['12 seconds', null],
  ])('%j -> %p', (input, expected) => {
    const got = parseDurationSeconds(input);
    if (expected === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(expected, 9);
  });
});

describe('parseResetAt', () => {
  test.each<[string, string, number | null]>([
    ['Go duration is relative to now', '6m0s', NOW.getTime() + 360_000],
    ['plain seconds are relative', '30', NOW.getTime() + 30_000],
    ['a day in seconds is still relative', '86400', NOW.getTime() + 86_400_000],
    ['RFC 3339', '2026-05-20T12:05:00Z', at('2026-05-20T12:05:00Z')],
    ['RFC 3339 with offset', '2026-05-20T14:05:00+02:00', at('2026-05-20T12:05:00Z')],
    ['HTTP-date', 'Wed, 20 May 2026 12:01:00 GMT', at('2026-05-20T12:01:00Z')],
    ['epoch milliseconds', '1779321600000', at('2026-05-21T00:00:00Z')],
    ['epoch seconds', '1779321600', at('2026-05-21T00:00:00Z')],
    ['epoch seconds with fraction', '1779321600.5', at('2026-05-21T00:00:00.500Z')],
    ['garbage', 'soon', null],
    ['empty', '', null],
  ])('%s (%j)', (_name, value, expected) => {
    const got = parseResetAt(value, NOW);
    if (expected === null) expect(got).toBeNull();
    else expect(got?.getTime()).toBeCloseTo(expected, 0);
  });
});

describe('parseRetryAfter', () => {
  test.each<[string, Record<string, string | undefined>, number | null]>([
    ['retry-after-ms', { 'retry-after-ms': '1500' }, 1.5],
    ['retry-after seconds, any case', { 'Retry-After': '20' }, 20],
    ['retry-after HTTP-date', { 'retry-after': 'Wed, 20 May 2026 12:01:00 GMT' }, 60],
    ['retry-after in the past is 0, never negative', { 'retry-after': 'Wed, 20 May 2026 11:00:00 GMT' }, 0],
    ['retry-after-ms wins over retry-after', { 'retry-after-ms': '250', 'retry-after': '20' }, 0.25],
    ['retry-after wins over reset headers', { 'retry-after': '3', 'x-ratelimit-reset-tokens': '6m0s' }, 3],
    [
      'latest reset when nothing says which ran out',
      { 'x-ratelimit-reset-requests': '1s', 'x-ratelimit-reset-tokens': '6m0s' },
      360,
    ],
    [
      'the reset whose remaining is 0 binds',
      {
        'x-ratelimit-reset-requests': '1s',
        'x-ratelimit-reset-tokens': '6m0s',
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-remaining-tokens': '5000',
      },
      1,
    ],
    ['compound duration reset', { 'x-ratelimit-reset-requests': '1h30m43.2s' }, 5443.2],
    ['milliseconds reset', { 'x-ratelimit-reset-tokens': '205ms' }, 0.205],
    ['epoch ms reset', { 'X-RateLimit-Reset': '1779321600000' }, 43200],
    ['epoch s reset', { 'x-ratelimit-reset': '1779321600' }, 43200],
    ['relative seconds reset', { 'x-ratelimit-reset': '17' }, 17],
    ['RFC 3339 reset', { 'x-ratelimit-reset': '2026-05-20T12:00:30Z' }, 30],
    ['anthropic-style reset', { 'anthropic-ratelimit-tokens-reset': '2026-05-20T12:00:10Z' }, 10],
    ['cerebras-style reset', { 'x-ratelimit-reset-requests-day': '33011.5' }, 33011.5],
    ['undefined values are ignored', { 'retry-after': undefined, 'x-ratelimit-reset': '4' }, 4],
    ['no rate-limit headers', { 'content-type': 'application/json' }, null],
    ['unreadable retry-after', { 'retry-after': 'soon' }, null],
  ])('%s', (_name, headers, expected) => {
    const got = parseRetryAfter(headers, NOW);
    if (expected === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(expected, 6);
  });
});

describe('parseBodyDelaySeconds', () => {
  test.each<[string, number | null]>([
    ['Please try again in 1.984999999s. Need more tokens?', 1.984999999],
    ['Please try again in 9m38.016s. Need more tokens%3F', 578.016],
    ['Please try again in 644ms.', 0.644],
    ['Please try again in 28m48s. Visit the site', 1728],
    ['\\n* Quota exceeded for metric: x, limit: 4000000\\nPlease retry in 47.434392449s.', 47.434392449],
    ['Please retry after 86400 seconds. Please contact support', 86400],
    ['Please retry after 45 seconds.', 45],
    ['Please wait 85841 seconds before retrying.', 85841],
    ['429 Monthly usage limit reached. Resets in 16 days. To continue', 1382400],
    ['Try again in 2 hours and 5 minutes.', 7500],
    ['Please wait a moment, then retry in 20s.', 20],
    ['{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"36s"}', 36],
    ["details: [{ retryDelay: '36s' }]", 36],
    ['retry_delay { seconds: 36 }', 36],
    // Structured RetryInfo outranks the message text.
    ['{"message":"Please retry in 36.429760048s.","details":[{"retryDelay":"36s"}]}', 36],
    ['Rate limit exceeded: limited to 8 requests per minute. Please retry shortly.', null],
    ['Retry 3 times before giving up', null],
    ['{"X-RateLimit-Reset":"1783519380000"}', null],
    ['', null],
  ])('%j -> %p', (body, expected) => {
    const got = parseBodyDelaySeconds(body);
    if (expected === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(expected, 9);
  });
});
