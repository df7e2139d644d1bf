import * as fs from 'fs';
import * as path from 'path';
import {
  classifyProviderResponse,
  identifierWords,
  type ThrottleClassification,
  type ThrottleLabel,
  type ThrottleWindow,
} from '../../llm/classify';
import {
  BudgetExhaustedError,
  MalformedOutputError,
  ProviderAuthError,
  ProviderBadRequestError,
  ProviderBurstError,
  ProviderError,
  ProviderServerError,
  ProviderTimeoutError,
  providerErrorFromResponse,
} from '../../llm/errors';
import { SK } from '../support/fake-secrets';

interface Vector {
  id: string;
  provider: string;
  status: number | null;
  headers: Record<string, string>;
  body: string;
  label: ThrottleLabel;
  expected_reset_seconds_or_null: number | null;
  reset_at_utc?: string;
}

const DATA = path.resolve(__dirname, '../../../shared/testdata/provider-throttling.json');
const vectors = JSON.parse(fs.readFileSync(DATA, 'utf8')) as Vector[];
// Before every absolute reset in the file, so seconds-until-reset are positive and exact.
const NOW = new Date('2026-05-20T12:00:00.000Z');

describe('recorded provider answers', () => {
  test('the file is there and complete', () => {
    expect(vectors).toHaveLength(28);
  });

  test.each(vectors.map((v) => [v.id, v] as const))('%s', (_id, v) => {
    const c = classifyProviderResponse({ status: v.status, headers: v.headers, body: v.body }, NOW);
    expect(c.label).toBe(v.label);
    if (v.expected_reset_seconds_or_null !== null) {
      expect(c.retryAfterSeconds).not.toBeNull();
      expect(Math.abs((c.retryAfterSeconds ?? NaN) - v.expected_reset_seconds_or_null)).toBeLessThanOrEqual(1);
    } else if (v.reset_at_utc !== undefined) {
      // Only an absolute reset (epoch ms copied into the body) is stated: it must be read exactly.
      expect(c.resetAt).toBe(new Date(v.reset_at_utc).toISOString());
      expect(c.retryAfterSeconds).toBeCloseTo((Date.parse(v.reset_at_utc) - NOW.getTime()) / 1000, 3);
    } else {
      expect(c.retryAfterSeconds).toBeNull();
    }
    expect(c.reason.length).toBeGreaterThan(10);
    expect(c.reason).not.toMatch(/\n/);
    if (c.label === 'OTHER') expect(c.window).toBeNull();
    else expect(c.window).not.toBeNull();
  });

  test.each<[string, Partial<ThrottleClassification>]>([
    ['groq-tpd', { window: 'day', limit: 100000, used: 97050, requested: 3619 }],
    ['groq-tpm', { window: 'minute', limit: 12000, used: 2542, requested: 9855 }],
    ['openai-rpd-long', { window: 'day', limit: 50, used: 50, requested: 1 }],
    ['g4f-daily-500', { window: 'day', limit: 500000, used: 508311 }],
    ['gemini-paid-minute', { window: 'minute', limit: 4000000 }],
    ['gemini-day-quota-short-retrydelay', { window: 'day', limit: 20 }],
    ['gemini-mixed-violations-day', { window: 'day' }],
    ['ghmodels-day-85841', { window: 'day', limit: 8 }],
    ['azure-86400s', { window: 'day' }],
    ['opencode-go-monthly', { window: 'month' }],
    ['openrouter-limit-rpm', { window: 'minute', limit: 8, used: 8 }],
    ['openrouter-free-per-day', { window: 'day', limit: 50, used: 50 }],
    ['openrouter-key-limit', { window: 'credits', requested: 32000 }],
    ['deepseek-402', { window: 'credits', providerMessage: 'Insufficient Balance' }],
    ['anthropic-account-rate-limit', { window: 'unknown' }],
  ])('figures for %s', (id, expected) => {
    const v = vectors.find((x) => x.id === id);
    if (!v) throw new Error(`vector ${id} missing`);
    const c = classifyProviderResponse({ status: v.status, headers: v.headers, body: v.body }, NOW);
    expect(c).toMatchObject(expected);
  });

  test('the provider message is the headline, not the JSON envelope', () => {
    const v = vectors.find((x) => x.id === 'gemini-compat-array-bare');
    const c = classifyProviderResponse({ status: v?.status ?? null, body: v?.body }, NOW);
    expect(c.providerMessage).toBe('Resource has been exhausted (e.g. check quota).');
  });
});

// Answers from providers (real or made up) that are not in the file, written to the same rules.
interface Invented {
  name: string;
  status: number | null;
  headers?: Record<string, string | string[]>;
  body: string | null;
  label: ThrottleLabel;
  window?: ThrottleWindow | null;
  retryAfter?: number | null;
  limit?: number;
  used?: number;
}

const invented: Invented[] = [
  {
    name: 'monthly spend limit (429)',
    status: 429,
    body: '{"error":{"message":"Monthly spend limit of $50.00 reached for this project.","type":"spend_limit"}}',
    label: 'EXHAUSTED',
    window: 'month',
  },
  {
    name: 'requests per day from an unknown gateway (plain text)',
    status: 429,
    body: 'Quota exceeded: 1000 requests per day for free keys. Quota resets at 00:00 UTC.',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'account suspended (403)',
    status: 403,
    body: '{"error":{"code":"account_suspended","message":"Your account has been suspended."}}',
    label: 'EXHAUSTED',
  },
  {
    name: 'billing not enabled (403)',
    status: 403,
    body: '{"error":{"code":403,"message":"This API method requires billing to be enabled on project 4242.","status":"PERMISSION_DENIED"}}',
    label: 'EXHAUSTED',
    window: 'credits',
  },
  {
    name: 'invalid key (401) is not a throttle',
    status: 401,
    body: '{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}',
    label: 'OTHER',
    window: null,
  },
  {
    name: 'per-second concurrency limit',
    status: 429,
    body: '{"detail":"Too many concurrent requests: at most 4 in flight per key."}',
    label: 'BURST',
    window: 'second',
  },
  {
    name: 'requests per second, explicit',
    status: 429,
    headers: { 'Retry-After': '1' },
    body: '{"message":"Rate limit: 5 requests per second exceeded"}',
    label: 'BURST',
    window: 'second',
    retryAfter: 1,
  },
  {
    name: 'request too large for model (429) is not a throttle',
    status: 429,
    body: 'Request too large for model `big-1` in organization org-1 on tokens per min (TPM): Limit 30000, Requested 45000. The input or output tokens must be reduced in order to run successfully.',
    label: 'OTHER',
    window: null,
  },
  {
    name: 'a request needing more than the whole per-minute limit is not a throttle',
    status: 429,
    body: 'Tokens per minute exceeded: Limit 8000, Used 0, Requested 9100.',
    label: 'OTHER',
  },
  { name: '413 payload too large', status: 413, body: '{"error":"payload too large"}', label: 'OTHER', window: null },
  {
    name: 'context length on a 400',
    status: 400,
    body: '{"error":{"code":"context_length_exceeded","message":"This model\'s maximum context length is 8192 tokens."}}',
    label: 'OTHER',
  },
  {
    name: 'free tier "limit: 0" on a per-minute quota is still exhausted',
    status: 429,
    body: '{"error":{"code":429,"message":"You exceeded your current quota. Quota exceeded for metric: free_tier_requests, limit: 0, model: super-pro. Please retry in 12s.","details":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaValue":"0"}]}}',
    label: 'EXHAUSTED',
    window: 'minute',
    retryAfter: 12,
    limit: 0,
  },
  {
    name: 'header-only 429 with an empty body',
    status: 429,
    headers: {
      'X-RateLimit-Limit-Requests': '60',
      'X-RateLimit-Remaining-Requests': '0',
      'X-RateLimit-Reset-Requests': '12s',
    },
    body: '',
    label: 'BURST',
    window: 'unknown',
    retryAfter: 12,
    limit: 60,
    used: 60,
  },
  {
    name: 'status not shown, null body',
    status: null,
    body: null,
    label: 'BURST',
    window: 'unknown',
    retryAfter: null,
  },
  {
    name: 'day-window header names which window ran dry',
    status: 429,
    headers: {
      'x-ratelimit-limit-requests-day': '14400',
      'x-ratelimit-remaining-requests-day': '0',
      'x-ratelimit-reset-requests-day': '33011.5',
    },
    body: '{"message":"Requests exceeded","type":"too_many_requests_error"}',
    label: 'EXHAUSTED',
    window: 'day',
    retryAfter: 33011.5,
    limit: 14400,
    used: 14400,
  },
  {
    name: 'a retry-after of two days reads as a window of a day or more',
    status: 429,
    headers: { 'retry-after': '172800' },
    body: '{"error":"Rate limit exceeded"}',
    label: 'EXHAUSTED',
    window: 'day',
    retryAfter: 172800,
  },
  {
    name: 'hourly window is a burst (within reach of a sweep)',
    status: 429,
    body: '{"error":"Hourly request limit reached (100/hour). Try again in 23 minutes."}',
    label: 'BURST',
    window: 'hour',
    retryAfter: 1380,
    limit: undefined,
  },
  {
    name: 'billing boilerplate with a per-minute window from another provider is a burst',
    status: 429,
    body: 'You exceeded your current quota, please check your plan and billing details. Requests per minute (RPM) limit 60 reached.',
    label: 'BURST',
    window: 'minute',
  },
  {
    name: 'billing boilerplate with no window is exhausted',
    status: 429,
    body: '{"error":{"message":"You exceeded your current quota, please check your plan and billing details."}}',
    label: 'EXHAUSTED',
    window: 'credits',
  },
  {
    name: 'upsell naming a daily allowance does not make a per-minute limit exhausted',
    status: 429,
    body: '{"error":{"message":"Rate limit exceeded: 10 requests per minute. Add credits to unlock 1000 requests per day."}}',
    label: 'BURST',
    window: 'minute',
  },
  {
    name: 'try again later with no window',
    status: 429,
    body: 'Too many requests, please try again later.',
    label: 'BURST',
    window: 'unknown',
  },
  {
    name: 'gateway answering 200 with the real status inside',
    status: 200,
    body: '{"error":{"code":429,"message":"Rate limit exceeded: 20 requests per minute"}}',
    label: 'BURST',
    window: 'minute',
  },
  {
    name: 'daily budget on a 500',
    status: 500,
    body: 'Daily token budget of 2,000,000 exceeded for this key.',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: '412 with a daily quota',
    status: 412,
    body: '{"error":{"message":"Precondition failed: daily quota exceeded for this key"}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: '412 with a per-minute rate limit',
    status: 412,
    body: '{"error":{"message":"rate limit of 30 per 60s exceeded"}}',
    label: 'BURST',
    window: 'minute',
    limit: 30,
  },
  {
    name: 'quota id in a field of its own (camel case)',
    status: 429,
    body: '{"error":{"limitName":"TokensPerDayPerKey","message":"Too Many Requests"}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'weekly allowance outlasts a sweep',
    status: 429,
    body: 'Weekly usage limit reached. Resets in 3 days.',
    label: 'EXHAUSTED',
    retryAfter: 259200,
  },
  {
    name: '529 overloaded is not a throttle',
    status: 529,
    body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    label: 'OTHER',
  },
  {
    name: '503 with retry-after keeps the delay',
    status: 503,
    headers: { 'Retry-After': '7' },
    body: 'upstream connect error',
    label: 'OTHER',
    retryAfter: 7,
  },
  {
    name: 'multi-valued header arrays are read',
    status: 429,
    headers: { 'retry-after': ['9'] },
    body: 'slow down',
    label: 'BURST',
    retryAfter: 9,
  },
  {
    name: 'a per-minute token budget is a rate window, not money',
    status: 429,
    body: 'Too Many Requests: per-minute token budget exceeded',
    label: 'BURST',
    window: 'minute',
  },
  {
    name: 'a spend budget with no window is money (proxy 400)',
    status: 400,
    body: '{"error":{"message":"Budget has been exceeded! Current cost: 10.5, Max budget: 10.0"}}',
    label: 'EXHAUSTED',
    window: 'credits',
  },
  {
    name: 'trial key limited to N calls / month',
    status: 429,
    body: '{"message":"You are using a Trial key, which is limited to 1000 API calls / month."}',
    label: 'EXHAUSTED',
    window: 'month',
  },
  {
    name: 'HTML error page from a proxy',
    status: 429,
    body: '<html><head><title>429 Too Many Requests</title></head><body><h1>Too Many Requests</h1></body></html>',
    label: 'BURST',
    window: 'unknown',
  },
];

describe('invented answers from providers not in the file', () => {
  test.each(invented.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    const c = classifyProviderResponse({ status: v.status, headers: v.headers, body: v.body }, NOW);
    expect(c.label).toBe(v.label);
    if (v.window !== undefined) expect(c.window).toBe(v.window);
    if (v.retryAfter === null) expect(c.retryAfterSeconds).toBeNull();
    else if (v.retryAfter !== undefined) expect(c.retryAfterSeconds).toBeCloseTo(v.retryAfter, 3);
    if ('limit' in v) expect(c.limit).toBe(v.limit);
    if ('used' in v) expect(c.used).toBe(v.used);
  });
});

describe('classifyProviderResponse properties', () => {
  const burst = {
    status: 429,
    headers: {
      'X-RateLimit-Reset-Tokens': '6m0s',
      'X-RateLimit-Remaining-Tokens': '0',
      'X-RateLimit-Limit-Tokens': '30000',
    },
    body: 'Rate limit exceeded',
  };

  test('header names are case-insensitive', () => {
    const lowered = Object.fromEntries(Object.entries(burst.headers).map(([k, v]) => [k.toLowerCase(), v]));
    const a = classifyProviderResponse(burst, NOW);
    const b = classifyProviderResponse({ ...burst, headers: lowered }, NOW);
    expect(b).toEqual(a);
    expect(a.retryAfterSeconds).toBe(360);
    expect(a.resetAt).toBe('2026-05-20T12:06:00.000Z');
    expect(a).toMatchObject({ limit: 30000, used: 30000 });
  });

  test('real headers outrank the delay the body states', () => {
    const c = classifyProviderResponse(
      { status: 429, headers: { 'retry-after': '3' }, body: 'Please try again in 20s.' },
      NOW,
    );
    expect(c.retryAfterSeconds).toBe(3);
    expect(c.reason).toContain('retry-after');
  });

  test('a short stated wait never turns a per-day quota into a burst', () => {
    for (const wait of ['1s', '36s', '9m38s']) {
      const c = classifyProviderResponse(
        { status: 429, body: `Limit reached on requests per day (RPD). Please try again in ${wait}.` },
        NOW,
      );
      expect(c.label).toBe('EXHAUSTED');
    }
  });

  test('a long stated wait on a per-minute quota is still read as a long window', () => {
    const c = classifyProviderResponse(
      { status: 429, body: 'Tokens per minute exceeded. Please retry after 90000 seconds.' },
      NOW,
    );
    expect(c.label).toBe('EXHAUSTED');
    expect(c.reason).toMatch(/90000/);
  });

  test('the provider message is bounded and redacted', () => {
    const body = JSON.stringify({ error: { message: `bad key ${SK}proj-ABCDEFGHIJKLMNOPQRSTUV ${'x'.repeat(5000)}` } });
    const c = classifyProviderResponse({ status: 429, body }, NOW);
    expect(c.providerMessage).toBeDefined();
    expect(c.providerMessage).not.toContain('ABCDEFGHIJKLMNOP');
    expect((c.providerMessage ?? '').length).toBeLessThan(700);
  });

  test('ids that happen to spell a window are not evidence', () => {
    const c = classifyProviderResponse(
      { status: 429, body: '{"error":{"message":"Rate limit exceeded"},"request_id":"req_9rpd7tpd-PerDay"}' },
      NOW,
    );
    expect(c.label).toBe('BURST');
  });
});

describe('providerErrorFromResponse', () => {
  const byId = (id: string): Vector => {
    const v = vectors.find((x) => x.id === id);
    if (!v) throw new Error(`vector ${id} missing`);
    return v;
  };

  test.each<[string, number | null, Record<string, string>, string, new (...a: never[]) => ProviderError, string]>([
    ['groq TPD 429', 429, {}, byId('groq-tpd').body, BudgetExhaustedError, 'exhausted'],
    ['groq TPM 429', 429, {}, byId('groq-tpm').body, ProviderBurstError, 'burst'],
    ['anthropic credit 400', 400, {}, byId('anthropic-credit-balance-low').body, BudgetExhaustedError, 'exhausted'],
    ['openai billing 400', 400, {}, byId('openai-billing-hard-limit').body, BudgetExhaustedError, 'exhausted'],
    ['g4f daily 500', 500, {}, byId('g4f-daily-500').body, BudgetExhaustedError, 'exhausted'],
    ['together 402', 402, {}, byId('together-402-credit-limit').body, BudgetExhaustedError, 'exhausted'],
    ['ollama 503', 503, {}, byId('ollama-503-queue-full').body, ProviderServerError, 'server'],
    ['plain 500', 500, {}, 'internal error', ProviderServerError, 'server'],
    ['408', 408, {}, 'request timeout', ProviderServerError, 'server'],
    ['401', 401, {}, '{"error":{"message":"invalid api key"}}', ProviderAuthError, 'auth'],
    [
      '403 no billing words',
      403,
      {},
      '{"error":{"message":"model not allowed for this key"}}',
      ProviderAuthError,
      'auth',
    ],
    ['403 suspended', 403, {}, '{"error":{"message":"organization suspended"}}', BudgetExhaustedError, 'exhausted'],
    ['404', 404, {}, '{"error":{"message":"model not found"}}', ProviderBadRequestError, 'bad_request'],
    ['422', 422, {}, '{"detail":"temperature must be <= 2"}', ProviderBadRequestError, 'bad_request'],
    [
      '429 too large',
      429,
      {},
      'Request too large for model m: maximum context length is 8192',
      ProviderBadRequestError,
      'bad_request',
    ],
    ['413', 413, {}, 'payload too large', ProviderBadRequestError, 'bad_request'],
    ['null status, bare 429', null, { 'retry-after': '4' }, '', ProviderBurstError, 'burst'],
  ])('%s', (_name, status, headers, body, cls, kind) => {
    const err = providerErrorFromResponse('ep-1', status, headers, body, NOW);
    expect(err).toBeInstanceOf(cls);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toBeInstanceOf(Error);
    expect(err.kind).toBe(kind);
    expect(err.endpointId).toBe('ep-1');
    expect(err.status).toBe(status);
    expect(err.name).toBe(cls.name);
  });

  test('a budget error carries the figures, the provider message, and keeps them in its message', () => {
    const err = providerErrorFromResponse('groq-a', 429, { 'x-request-id': 'req_abc' }, byId('groq-tpd').body, NOW);
    if (!(err instanceof BudgetExhaustedError)) throw new Error(`expected BudgetExhaustedError, got ${err.name}`);
    expect(err).toMatchObject({ window: 'day', limit: 100000, used: 97050, requested: 3619, requestId: 'req_abc' });
    expect(err.retryAfterSeconds).toBeCloseTo(578.016, 3);
    expect(err.resetAt).toBe(new Date(NOW.getTime() + 578016).toISOString());
    expect(err.message).toContain('tokens per day (TPD)');
    expect(err.message).toContain('groq-a');
  });

  test('request id falls back to the body', () => {
    const err = providerErrorFromResponse('a', 400, {}, byId('anthropic-credit-balance-low').body, NOW);
    expect(err.requestId).toBe('req_011CbrFTcXhtiMzr3s6EocF7');
  });

  test('toDetails is JSON-safe, keeps rate-limit headers and holds no secrets', () => {
    const secret = `${SK}live-ABCDEFGHIJKLMNOPQRSTUVWX`;
    const err = providerErrorFromResponse(
      'ep',
      429,
      { Authorization: `Bearer ${secret}`, 'x-ratelimit-remaining-tokens': '0', 'retry-after': '2' },
      `{"error":{"message":"Rate limit exceeded for key ${secret} on tokens per minute"}}`,
      NOW,
    );
    const details = err.toDetails();
    expect(JSON.parse(JSON.stringify(details))).toEqual(details);
    const flat = JSON.stringify(details);
    expect(flat).not.toContain('ABCDEFGHIJKLMNOP');
    expect(err.message).not.toContain('ABCDEFGHIJKLMNOP');
    expect(details).toMatchObject({
      kind: 'burst',
      status: 429,
      retryAfterSeconds: 2,
      headers: { authorization: '[REDACTED]', 'x-ratelimit-remaining-tokens': '0', 'retry-after': '2' },
      classification: { label: 'BURST', window: 'minute' },
    });
  });

  test('budget details name the window and figures', () => {
    const d = providerErrorFromResponse('ep', 429, {}, byId('openai-rpd-long').body, NOW).toDetails();
    expect(d).toMatchObject({
      name: 'BudgetExhaustedError',
      kind: 'exhausted',
      window: 'day',
      limit: 50,
      used: 50,
      requested: 1,
    });
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
  });

  test('the body kept on the error is bounded', () => {
    const err = providerErrorFromResponse('ep', 500, {}, 'e'.repeat(10000), NOW);
    expect(err.body.length).toBeLessThan(2100);
    expect(err.body).toContain('[truncated');
  });

  test('malformed output and timeout errors serialise too', () => {
    const m = new MalformedOutputError({
      endpointId: 'ep',
      status: 200,
      body: '{"descr',
      issues: ['description: Required'],
    });
    expect(m.toDetails()).toMatchObject({
      kind: 'malformed_output',
      issues: ['description: Required'],
      body: '{"descr',
    });
    const t = new ProviderTimeoutError({ endpointId: 'ep', timeoutMs: 30000, message: 'no answer in 30s' });
    expect(t.toDetails()).toMatchObject({
      kind: 'timeout',
      timeoutMs: 30000,
      status: null,
      message: 'no answer in 30s',
    });
    expect(JSON.parse(JSON.stringify(t.toDetails()))).toEqual(t.toDetails());
  });
});

// Window and entitlement wherever an answer states them (issue 12, item 5). Invented bodies in the
// shape of many providers and gateways; none is copied from a real capture.
interface Shaped {
  name: string;
  status: number | null;
  headers?: Record<string, string>;
  body: string;
  label: ThrottleLabel;
  window?: ThrottleWindow | null;
  retryAfter?: number | null;
}

const compoundDaily: Shaped[] = [
  {
    name: 'groq-like code tokens_per_day_limit_exceeded under a rate-limit type',
    status: 429,
    body: '{"error":{"message":"Slow down.","type":"rate_limit_exceeded","code":"tokens_per_day_limit_exceeded"}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'azure-like PascalCase code RequestsPerDayQuotaExceeded',
    status: 429,
    body: '{"error":{"code":"RequestsPerDayQuotaExceeded","message":"The request was throttled. Retry after 40 seconds."}}',
    label: 'EXHAUSTED',
    window: 'day',
    retryAfter: 40,
  },
  {
    name: 'together-like type rate_limit_rpd',
    status: 429,
    body: '{"error":{"message":"You are sending requests too fast.","type":"rate_limit_rpd","code":null}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'fireworks-like kebab reason daily-quota',
    status: 429,
    body: '{"error":{"object":"error","type":"throttled","reason":"daily-quota","message":"Request limit hit."}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'mistral-like camelCase limit name dailyTokenLimit',
    status: 429,
    body: '{"object":"error","message":"Limit reached","type":"rate_limited","param":"dailyTokenLimit","code":"3505"}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'dotted quota id quota.requests.per.day',
    status: 429,
    body: '{"error":{"message":"Throttled","quota_id":"quota.requests.per.day","code":429}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'monthly limit named as MonthlyTokenQuota on a 403',
    status: 403,
    body: '{"error":{"code":"MonthlyTokenQuotaExceeded","message":"Forbidden"}}',
    label: 'EXHAUSTED',
    window: 'month',
  },
  {
    name: 'lower-case tpd inside a code on a 400',
    status: 400,
    body: '{"error":{"code":"limit_tpd_reached","message":"Request rejected by limiter"}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
];

const entitlement: Shaped[] = [
  {
    name: 'anthropic-like rate_limit_error: model not available on your current plan',
    status: 429,
    body: '{"type":"error","error":{"type":"rate_limit_error","message":"This model is not available on your current plan."}}',
    label: 'EXHAUSTED',
  },
  {
    name: 'openai-like: organization does not have access to this model tier',
    status: 429,
    body: '{"error":{"message":"Your organization does not have access to this model tier.","type":"rate_limit_error","param":null,"code":null}}',
    label: 'EXHAUSTED',
  },
  {
    name: 'proxy: upgrade required under a rate-limit type',
    status: 429,
    body: '{"error":{"type":"rate_limit_error","message":"Upgrade required."}}',
    label: 'EXHAUSTED',
  },
  {
    name: 'openrouter-like: model requires a paid plan',
    status: 429,
    body: '{"error":{"message":"This model requires a paid plan; free keys cannot call it.","code":429}}',
    label: 'EXHAUSTED',
  },
  {
    name: 'google-compat: feature not included in the selected tier',
    status: 429,
    body: '[{"error":{"code":429,"message":"Structured output is not included in the selected tier for this project.","status":"RESOURCE_EXHAUSTED"}}]',
    label: 'EXHAUSTED',
  },
  {
    name: 'code-only entitlement: model_not_in_plan',
    status: 429,
    body: '{"error":{"type":"rate_limit_error","code":"model_not_in_plan","message":"Request refused."}}',
    label: 'EXHAUSTED',
  },
  {
    name: 'azure-like: deployment not available for your subscription tier',
    status: 400,
    body: '{"error":{"code":"OperationNotSupported","message":"This deployment is not available for your subscription tier."}}',
    label: 'EXHAUSTED',
  },
];

const creditTypedMinute: Shaped[] = [
  {
    name: 'type insufficient_credits but the message names a per-minute limit',
    status: 429,
    body: '{"error":{"type":"insufficient_credits","message":"Rate limit: 60 requests per minute exceeded. Try again in 20s."}}',
    label: 'BURST',
    window: 'minute',
    retryAfter: 20,
  },
  {
    name: 'code insufficient_quota with RPM in the message (Fireworks-like)',
    status: 429,
    body: '{"error":{"object":"error","type":"invalid_request_error","code":"insufficient_quota","message":"RPM limit of 600 reached for account."}}',
    label: 'BURST',
    window: 'minute',
  },
  {
    name: 'credit_limit type with only a nested minute header saying which window ran dry',
    status: 429,
    body: '{"error":{"message":"Too many requests","type":"credit_limit","metadata":{"headers":{"x-ratelimit-remaining-requests-minute":"0","x-ratelimit-limit-requests-minute":"30","retry-after":"20"}}}}',
    label: 'BURST',
    window: 'minute',
    retryAfter: 20,
  },
  {
    name: 'CreditsExhausted code with a minute header from the real response',
    status: 429,
    headers: { 'x-ratelimit-remaining-tokens-minute': '0', 'x-ratelimit-limit-tokens-minute': '60000' },
    body: '{"error":{"code":"CreditsExhausted","message":"Throttled."}}',
    label: 'BURST',
    window: 'minute',
  },
];

const nestedGateways: Shaped[] = [
  {
    name: 'openrouter-like metadata.headers naming only a day reset',
    status: 429,
    body: '{"error":{"message":"Provider returned error","code":429,"metadata":{"headers":{"x-ratelimit-reset-requests-day":"42000","retry-after":"30"},"provider_name":"Acme"}}}',
    label: 'EXHAUSTED',
    window: 'day',
    retryAfter: 30,
  },
  {
    name: 'litellm-like upstream_headers with a day remaining of 0',
    status: 429,
    body: '{"error":{"message":"litellm.RateLimitError: upstream throttled","type":"throttling_error","upstream_headers":{"x-ratelimit-remaining-requests-day":"0","x-ratelimit-limit-requests-day":"1000"}}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'gateway 500 wrapping the upstream raw error as a JSON string',
    status: 500,
    body: JSON.stringify({
      error: {
        message: 'Upstream error',
        upstream_body: JSON.stringify({
          error: { type: 'tokens', code: 'rate_limit_tpd', message: 'Too many tokens' },
        }),
      },
    }),
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'litellm-like message holding the upstream error after a prefix',
    status: 429,
    body: JSON.stringify({
      error: {
        message: `AnthropicException - ${JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Your plan does not include access to this model.' } })}`,
        type: 'None',
        code: '429',
      },
    }),
    label: 'EXHAUSTED',
  },
  {
    name: 'a gateway dump of python-style headers inside the message',
    status: 429,
    body: "{\"detail\":\"upstream 429, headers={'x-ratelimit-remaining-tokens-day': '0', 'retry-after': '15'}\"}",
    label: 'EXHAUSTED',
    window: 'day',
    retryAfter: 15,
  },
  {
    name: 'nested headers as a JSON string under upstream_headers, minute window',
    status: 429,
    body: JSON.stringify({
      error: {
        message: 'Rate limited by upstream',
        upstream_headers: JSON.stringify({ 'x-ratelimit-remaining-requests-minute': '0', 'retry-after': '4' }),
      },
    }),
    label: 'BURST',
    window: 'minute',
    retryAfter: 4,
  },
  {
    name: 'nested retry-after of two days reads as a long window',
    status: 429,
    body: '{"error":{"message":"Rate limit exceeded","metadata":{"headers":{"Retry-After":"172800"}}}}',
    label: 'EXHAUSTED',
    window: 'day',
    retryAfter: 172800,
  },
  {
    name: 'nested headers naming two windows name neither (Cerebras-like full set, no remaining)',
    status: 429,
    body: '{"error":{"message":"Too many requests","metadata":{"headers":{"x-ratelimit-reset-requests-day":"40000","x-ratelimit-reset-tokens-minute":"12"}}}}',
    label: 'BURST',
    window: 'unknown',
  },
];

// Disagreements that pin the documented order in decide().
const disagreements: Shaped[] = [
  {
    name: 'a day window in the code outranks a rate-limit type',
    status: 429,
    body: '{"error":{"type":"rate_limit_error","code":"RequestsPerDayExceeded","message":"Rate limited"}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'a minute window outranks a quota type',
    status: 429,
    body: '{"error":{"type":"quota_exceeded","message":"Tokens per minute (TPM) exceeded."}}',
    label: 'BURST',
    window: 'minute',
  },
  {
    name: 'a day window outranks a credit type (window wins, both spent)',
    status: 429,
    body: '{"error":{"type":"insufficient_credits","message":"Limit of 100 requests per day reached."}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'a long window beats a short one named in the same answer',
    status: 429,
    body: '{"error":{"code":"rate_limit_rpm","message":"Daily request quota exhausted."}}',
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'account state in prose outranks a minute window',
    status: 429,
    body: '{"error":{"type":"rate_limit_error","message":"Your credit balance is too low. Limits: 50 requests per minute."}}',
    label: 'EXHAUSTED',
    window: 'credits',
  },
  {
    name: 'an entitlement refusal outranks a short window and a short wait',
    status: 429,
    body: '{"error":{"type":"rate_limit_error","message":"This model is not available on your current plan. Free plan: 5 requests per minute. Try again in 10s."}}',
    label: 'EXHAUSTED',
  },
  {
    name: 'a refusal that calls itself temporary is capacity, not entitlement',
    status: 429,
    body: '{"error":{"type":"rate_limit_error","message":"This model is temporarily not available on the free tier due to high demand."}}',
    label: 'BURST',
  },
  {
    name: 'a money label with no window stays exhausted',
    status: 429,
    body: '{"error":{"type":"insufficient_credits","message":"Request refused."}}',
    label: 'EXHAUSTED',
    window: 'credits',
  },
  {
    name: 'a plan-upgrade pitch after a minute limit is not an entitlement refusal',
    status: 429,
    body: '{"error":{"message":"Rate limit reached on requests per minute. Upgrade your plan for higher limits.","type":"requests"}}',
    label: 'BURST',
    window: 'minute',
  },
  {
    name: 'a bare unit inside a parameter name is not a window',
    status: 429,
    body: '{"error":{"message":"Too many requests","param":"min_tokens","type":"rate_limit_error"}}',
    label: 'BURST',
    window: 'unknown',
  },
];

// Refusals read by meaning, not wording (issue 26, item 4): each wording below is written for this
// test, in the shape of several providers; every class has cases in both directions.
const typed = (type: string, message: string): string => JSON.stringify({ error: { type, message } });

const requiredEntitlement: Shaped[] = [
  {
    name: 'extra usage is required, under a rate-limit type',
    status: 429,
    body: JSON.stringify({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Extra usage is required for long context requests.' },
    }),
    label: 'EXHAUSTED',
    window: 'credits',
  },
  {
    name: 'a subscription of a named tier is required to call a deployment',
    status: 429,
    body: typed('rate_limit_error', 'A Scale Tier subscription is required to call this deployment.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'a usage tier is required for a model',
    status: 429,
    body: typed('rate_limit_error', 'Usage tier 3 or higher is required for access to this model.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'organisation verification is required (400)',
    status: 400,
    body: typed('invalid_request_error', 'Organization verification is required to stream this model.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'the organisation must be verified',
    status: 400,
    body: typed('invalid_request_error', 'Your organization must be verified to use this model.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'a model requires paid usage to be enabled',
    status: 429,
    body: typed('rate_limit_error', 'Long context requests require extra usage to be enabled on your organization.'),
    label: 'EXHAUSTED',
    window: 'credits',
  },
  {
    name: 'a feature requires billing to be set up',
    status: 429,
    body: typed('rate_limit_error', 'Image generation requires billing to be set up on your account.'),
    label: 'EXHAUSTED',
    window: 'credits',
  },
  {
    name: 'you need an active subscription',
    status: 429,
    body: typed('rate_limit_error', 'You need an active subscription to use this model.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'an add-on is required, in a code only',
    status: 429,
    body: '{"error":{"type":"rate_limit_error","code":"long_context_addon_required","message":"Refused."}}',
    label: 'EXHAUSTED',
  },
  {
    name: 'a payment method is required (403)',
    status: 403,
    body: typed('permission_error', 'A payment method is required before you can call this model.'),
    label: 'EXHAUSTED',
    window: 'credits',
  },
  {
    name: 'a named plan is required even when a short window is also stated',
    status: 429,
    body: typed('rate_limit_error', 'Pro plan required for this model. Free plan: 5 requests per minute.'),
    label: 'EXHAUSTED',
  },
];

const restrictedToPlans: Shaped[] = [
  {
    name: 'not available on the free plan',
    status: 429,
    body: typed('rate_limit_error', 'Fine-tuning is not available on the free plan.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'only available to paid accounts',
    status: 429,
    body: typed('rate_limit_error', 'Web search is only available to paid accounts.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'only available to Pro subscribers',
    status: 429,
    body: typed('rate_limit_error', 'This model is only available to Pro subscribers.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'reserved for higher tiers',
    status: 429,
    body: typed('rate_limit_error', 'Reasoning models are reserved for Tier 4 organizations.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'available only to Enterprise customers',
    status: 400,
    body: typed('invalid_request_error', 'The batch endpoint is available only to Enterprise customers.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'upgrade to a paid plan to use this model',
    status: 429,
    body: typed('rate_limit_error', 'Please upgrade to a paid plan to use this model.'),
    label: 'EXHAUSTED',
    window: 'credits',
  },
  {
    name: 'upgrade your subscription to access the model',
    status: 429,
    body: typed('rate_limit_error', 'Please upgrade your subscription to access this model.'),
    label: 'EXHAUSTED',
  },
  {
    name: 'a free allowance used up, upgrade to continue',
    status: 429,
    body: typed('rate_limit_error', 'You have reached your free usage limit. Upgrade to continue.'),
    label: 'EXHAUSTED',
  },
];

const shortWindowsWhateverTheLabel: Shaped[] = [
  {
    name: 'a per-minute quota with a two-second retry is a burst',
    status: 429,
    body: typed('rate_limit_error', 'Quota of 60 requests per minute exceeded, retry after 2 seconds.'),
    label: 'BURST',
    window: 'minute',
    retryAfter: 2,
  },
  {
    name: 'requests per second',
    status: 429,
    body: typed('rate_limit_error', 'Too many requests per second.'),
    label: 'BURST',
    window: 'second',
  },
  {
    name: 'a quota label with only a stated 20 s wait',
    status: 429,
    body: typed('insufficient_quota', 'Quota exceeded. Please try again in 20s.'),
    label: 'BURST',
    retryAfter: 20,
  },
  {
    name: 'a credits label with only a stated 5 s wait',
    status: 429,
    body: typed('credits_exhausted', 'Slow down: retry after 5 seconds.'),
    label: 'BURST',
    retryAfter: 5,
  },
  {
    name: 'a stated wait with quota words on a 400',
    status: 400,
    body: typed('invalid_request_error', 'Please wait 30 seconds before retrying; quota exceeded.'),
    label: 'BURST',
    retryAfter: 30,
  },
  {
    name: 'a rate limited to N per minute on the free tier is not a plan restriction',
    status: 429,
    body: typed('rate_limit_error', 'You are restricted to 10 requests per minute on the free tier.'),
    label: 'BURST',
    window: 'minute',
  },
  {
    name: 'a paid plan required for higher limits is a pitch, the window decides',
    status: 429,
    body: typed(
      'rate_limit_error',
      'A paid plan is required for higher limits; you sent more than 60 requests per minute.',
    ),
    label: 'BURST',
    window: 'minute',
  },
  {
    name: 'higher limits requiring a paid plan, with a stated wait',
    status: 429,
    body: typed('rate_limit_error', 'Higher rate limits require a paid plan. Please wait 30 seconds.'),
    label: 'BURST',
    retryAfter: 30,
  },
  {
    name: 'an upgrade to skip the wait does not outrank a per-minute window',
    status: 429,
    body: typed(
      'rate_limit_error',
      'Free tier: 3 requests per minute. Need more? Upgrade to continue without waiting.',
    ),
    label: 'BURST',
    window: 'minute',
  },
  {
    name: 'a concurrency limit of a plan is a burst',
    status: 429,
    body: typed('rate_limit_error', 'Concurrency limit reached for your plan: at most 2 requests in flight.'),
    label: 'BURST',
    window: 'second',
  },
];

const longQuotasWhateverTheWait: Shaped[] = [
  {
    name: 'a daily quota with a two-second retry is spent',
    status: 429,
    body: typed('rate_limit_error', 'Daily quota of 200 requests exhausted. Retry after 2 seconds.'),
    label: 'EXHAUSTED',
    window: 'day',
  },
  {
    name: 'a monthly allowance with an upgrade pitch',
    status: 429,
    body: typed('rate_limit_error', 'Monthly token allowance used up; upgrade to continue.'),
    label: 'EXHAUSTED',
    window: 'month',
  },
];

const requirementsThatAreNotEntitlements: Shaped[] = [
  {
    name: 'a valid API key is required (401)',
    status: 401,
    body: typed('authentication_error', 'A valid API key is required for this request.'),
    label: 'OTHER',
  },
  {
    name: 'authentication required (401)',
    status: 401,
    body: typed('authentication_error', 'Authentication required.'),
    label: 'OTHER',
  },
  {
    name: 'a subscription key is a credential, not a subscription (401)',
    status: 401,
    body: typed(
      'authentication_error',
      'A subscription key is required. Include it in the Ocp-Apim-Subscription-Key header.',
    ),
    label: 'OTHER',
  },
  {
    name: 'an access token with a scope (403)',
    status: 403,
    body: typed('permission_error', 'This endpoint requires an access token with the chat scope.'),
    label: 'OTHER',
  },
  {
    name: 'a field named plan is required (400)',
    status: 400,
    body: typed('invalid_request_error', "The 'plan' field is required."),
    label: 'OTHER',
  },
  {
    name: 'a parameter is required for a model (400)',
    status: 400,
    body: typed('invalid_request_error', 'Parameter max_tokens is required for this model.'),
    label: 'OTHER',
  },
  {
    name: 'a model requires a non-empty input (400)',
    status: 400,
    body: typed('invalid_request_error', 'This model requires the messages array to be non-empty.'),
    label: 'OTHER',
  },
  {
    name: 'a feature not supported by a model (400)',
    status: 400,
    body: typed('invalid_request_error', 'Streaming is not supported for this model.'),
    label: 'OTHER',
  },
  {
    name: 'a pause required between requests is a burst, not an entitlement',
    status: 429,
    body: typed('rate_limit_error', 'A cool-down of 20s is required between requests.'),
    label: 'BURST',
  },
  {
    name: 'a busy server asking for a short wait is not a throttle',
    status: 500,
    body: typed('server_error', 'Server busy, please try again in 5 seconds.'),
    label: 'OTHER',
  },
];

describe.each<[string, Shaped[]]>([
  ['an entitlement stated as a requirement is exhausted', requiredEntitlement],
  ['an entitlement stated as a plan restriction is exhausted', restrictedToPlans],
  ['a short window or a short stated wait is a burst', shortWindowsWhateverTheLabel],
  ['a long window is exhausted whatever the wait', longQuotasWhateverTheWait],
  ['a requirement of a credential or a field is not an entitlement', requirementsThatAreNotEntitlements],
])('%s', (_group, cases) => {
  test.each(cases.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    const c = classifyProviderResponse({ status: v.status, headers: v.headers, body: v.body }, NOW);
    expect({ label: c.label, reason: c.reason }).toMatchObject({ label: v.label });
    if (v.window !== undefined) expect(c.window).toBe(v.window);
    if (v.retryAfter !== undefined && v.retryAfter !== null) expect(c.retryAfterSeconds).toBeCloseTo(v.retryAfter, 3);
    expect(c.reason).not.toMatch(/\n/);
  });
});

describe('refusals reach the error class their meaning names', () => {
  test.each<[string, number, string, new (...a: never[]) => ProviderError]>([
    [
      'extra usage required',
      429,
      typed('rate_limit_error', 'Extra usage is required for long context requests.'),
      BudgetExhaustedError,
    ],
    [
      'API key required',
      401,
      typed('authentication_error', 'A valid API key is required for this request.'),
      ProviderAuthError,
    ],
    ['field required', 400, typed('invalid_request_error', "The 'plan' field is required."), ProviderBadRequestError],
    [
      'stated short wait',
      429,
      typed('insufficient_quota', 'Quota exceeded. Please try again in 20s.'),
      ProviderBurstError,
    ],
  ])('%s', (_name, status, body, cls) => {
    expect(providerErrorFromResponse('ep', status, {}, body, NOW)).toBeInstanceOf(cls);
  });
});

describe.each<[string, Shaped[]]>([
  ['a daily limit named inside a compound identifier', compoundDaily],
  ['an entitlement refusal without quota words', entitlement],
  ['a per-minute limit under a credit type', creditTypedMinute],
  ['upstream headers and errors nested in the body', nestedGateways],
  ['disagreeing signals follow the documented order', disagreements],
])('%s', (_group, cases) => {
  test.each(cases.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    const c = classifyProviderResponse({ status: v.status, headers: v.headers, body: v.body }, NOW);
    expect({ label: c.label, reason: c.reason }).toMatchObject({ label: v.label });
    if (v.window !== undefined) expect(c.window).toBe(v.window);
    if (v.retryAfter === null) expect(c.retryAfterSeconds).toBeNull();
    else if (v.retryAfter !== undefined) expect(c.retryAfterSeconds).toBeCloseTo(v.retryAfter, 3);
    expect(c.reason).not.toMatch(/\n/);
  });
});

describe('identifier words', () => {
  test.each([
    ['tokens_per_day_limit_exceeded', 'tokens per day limit exceeded'],
    ['RequestsPerDayQuotaExceeded', 'requests per day quota exceeded'],
    ['RPDLimit', 'rpd limit'],
    ['quota.requests.per.day', 'quota requests per day'],
    ['daily-quota', 'daily quota'],
  ])('%s', (id, words) => {
    expect(identifierWords(id)).toBe(words);
  });
});
