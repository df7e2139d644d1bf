import { parseBodyDelaySeconds, parseDurationSeconds, parseResetAt, parseRetryAfter } from '../../llm/durations';

const NOW = new Date('2026-05-20T12:00:00.000Z');
const at = (iso: string): number => Date.parse(iso);

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
