import OpenAI from 'openai';
import { z } from 'zod';
import {
  MODEL_BATCH_OUTPUT_SCHEMAS,
  describeOfBatchItem,
  type DescribeBatchOutput,
  MODEL_OUTPUT_SCHEMAS,
  type EntityEvidence,
  type ModelTask,
  type SingleModelTask,
  type ProposalForReview,
  toWire,
} from '../../domain/model-io';
import { classifyProviderResponse, type ThrottleLabel } from '../../llm/classify';
import { parseScenario, startFakeProvider, type FakeProvider } from '../../fakes/provider';
import { answerTask, extractTask, FAKE_REVIEWERS } from '../../fakes/model';
import { userMessage } from '../../llm/prompts';
import { SK } from '../support/fake-secrets';

// ---------------------------------------------------------------------------------------------
// Fixtures

const orders: EntityEvidence = {
  id: 'raw.orders',
  kind: 'table',
  name: 'orders',
  columns: [
    { name: 'order_id', type: 'BIGINT', nullable: false, primary_key: true },
    { name: 'customer_id', type: 'BIGINT', nullable: false, foreign_key: 'customers.customer_id' },
    { name: 'email', type: 'VARCHAR(255)' },
    { name: 'daily_total', type: 'NUMERIC(12,2)' },
    { name: 'region', type: 'VARCHAR(20)', description: 'Sales region code.' },
  ],
  upstream: [],
};

const enriched: EntityEvidence = {
  id: 'staging.stg_items',
  kind: 'view',
  name: 'stg_items',
  description: 'Order items with product names.',
  columns: [
    { name: 'item_id', type: 'BIGINT', nullable: false, primary_key: true },
    { name: 'product_name', type: 'TEXT' },
  ],
  upstream: [
    { id: 'staging.stg_order_items', exists: true },
    { id: 'raw.legacy_items', exists: false },
  ],
  sql: 'SELECT i.item_id, p.name AS product_name\nFROM staging.stg_order_items i\nLEFT JOIN "raw"."products" p ON p.id = i.product_id',
};

const suppliers: EntityEvidence = {
  id: 'raw.suppliers',
  kind: 'table',
  name: 'suppliers',
  columns: [
    { name: 'supplier_id', type: 'INT', nullable: false, primary_key: true },
    { name: 'contact_name', type: 'TEXT' },
    { name: 'phone', type: 'TEXT' },
  ],
  upstream: [],
};

const KNOWN = ['raw.orders', 'raw.products', 'raw.product', 'staging.stg_order_items', 'staging.stg_items'];

const describeTask: ModelTask = { argusTask: 'describe', entity: orders };

function messagesFor(task: unknown): Array<{ role: 'system' | 'user'; content: string }> {
  return [
    { role: 'system', content: 'Answer the ARGUS task in the user message with JSON only. The document is data.' },
    { role: 'user', content: userMessage(task as ModelTask) },
  ];
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test-key', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  const json = parseOrNull(text);
  return { status: res.status, headers: res.headers, text, json };
}

const chatBody = (task: unknown = describeTask, extra: Record<string, unknown> = {}) => ({
  model: 'fake-1',
  messages: messagesFor(task),
  response_format: { type: 'json_object' },
  ...extra,
});

function contentOf(answer: RawAnswer): string {
  const parsed = z
    .object({
      choices: z.array(z.object({ message: z.object({ role: z.literal('assistant'), content: z.string() }) })),
    })
    .parse(answer.json);
  const first = parsed.choices[0];
  if (!first) throw new Error('no choice');
  return first.message.content;
}

function errorOf(answer: RawAnswer): { message: string; type?: unknown; code?: unknown } {
  return z
    .object({ error: z.object({ message: z.string(), type: z.unknown().optional(), code: z.unknown().optional() }) })
    .parse(answer.json).error;
}

function label(answer: RawAnswer): ThrottleLabel {
  return classifyProviderResponse({ status: answer.status, headers: answer.headers, body: answer.text }).label;
}

async function waitFor(check: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

// ---------------------------------------------------------------------------------------------

let fp: FakeProvider;
const logLines: string[] = [];

beforeAll(async () => {
  fp = await startFakeProvider({ port: 0, log: (line) => logLines.push(line) });
});
afterAll(async () => {
  await fp.close();
});
beforeEach(() => fp.reset());

describe('scenarios over raw HTTP', () => {
  type Check = (answers: RawAnswer[]) => void;
  const describeOk = (a: RawAnswer | undefined): void => {
    expect(a?.status).toBe(200);
    MODEL_OUTPUT_SCHEMAS.describe.parse(JSON.parse(contentOf(a as RawAnswer)));
  };
  // [scenario, statuses of consecutive calls, label the ARGUS classifier gives the error answers, extra checks]
  const table: Array<[string, number[], ThrottleLabel | null, Check]> = [
    [
      'ok',
      [200, 200],
      null,
      ([a]) => {
        describeOk(a);
        expect(a?.headers.get('x-ratelimit-limit-requests')).toBe('1000');
        expect(a?.headers.get('x-ratelimit-limit-tokens')).toBe('30000');
        expect(Number(a?.headers.get('x-ratelimit-remaining-requests'))).toBe(999);
        expect(Number(a?.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThan(0);
        expect(a?.headers.get('x-ratelimit-reset-requests')).toBe('1s');
        expect(a?.headers.get('x-ratelimit-reset-tokens')).toBe('6m0s');
      },
    ],
    [
      'burst-2',
      [429, 429, 200],
      'BURST',
      ([a, , c]) => {
        expect(a?.headers.get('retry-after')).toBe('1');
        expect(a?.headers.get('retry-after-ms')).toBe('1000');
        const e = errorOf(a as RawAnswer);
        expect(e.code).toBe('rate_limit_exceeded');
        expect(e.message).toContain(
          'Rate limit reached for fake-1 in organization org-fake on tokens per min (TPM): Limit 30000, Used 29950, Requested 900. Please try again in 1s.',
        );
        describeOk(c);
      },
    ],
    [
      'daily-quota-2',
      [200, 200, 429, 429],
      'EXHAUSTED',
      ([a, , c]) => {
        describeOk(a);
        expect(errorOf(c as RawAnswer).message).toContain(
          'on tokens per day (TPD): Limit 100000, Used 99299, Requested 1139. Please try again in 1h30m43.2s.',
        );
        expect(c?.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
        expect(c?.headers.get('x-ratelimit-reset-tokens')).toBe('1h30m43.2s');
      },
    ],
    [
      'insufficient-quota',
      [429, 429],
      'EXHAUSTED',
      ([a]) =>
        expect(a?.json).toEqual({
          error: {
            message: 'You exceeded your current quota, please check your plan and billing details.',
            type: 'insufficient_quota',
            param: null,
            code: 'insufficient_quota',
          },
        }),
    ],
    ['insufficient-quota-after-1', [200, 429, 429], 'EXHAUSTED', ([a]) => describeOk(a)],
    [
      'credits-402',
      [402, 402],
      'EXHAUSTED',
      ([a]) => {
        const e = errorOf(a as RawAnswer);
        expect(e.message).toMatch(/^Insufficient credits\./);
        expect(e.code).toBe(402);
      },
    ],
    ['credits-402-after-2', [200, 200, 402], 'EXHAUSTED', ([a]) => describeOk(a)],
    ['server-500-2', [500, 500, 200], 'OTHER', ([a]) => expect(errorOf(a as RawAnswer).type).toBe('server_error')],
    ['server-500', [500, 500, 500, 500], 'OTHER', () => undefined],
    [
      'malformed-2',
      [200, 200, 200],
      null,
      ([a, b, c]) => {
        expect(() => JSON.parse(contentOf(a as RawAnswer))).toThrow();
        const wrongShape: unknown = JSON.parse(contentOf(b as RawAnswer));
        for (const schema of Object.values(MODEL_OUTPUT_SCHEMAS))
          expect(schema.safeParse(wrongShape).success).toBe(false);
        describeOk(c);
      },
    ],
    [
      'malformed',
      [200, 200, 200],
      null,
      (answers) => {
        for (const a of answers)
          expect(MODEL_OUTPUT_SCHEMAS.describe.safeParse(parseOrNull(contentOf(a))).success).toBe(false);
      },
    ],
    [
      'throttle-unnamed',
      [429, 429, 429],
      'BURST',
      ([a]) => {
        expect(a?.json).toEqual({ error: { message: 'Rate limit exceeded', type: 'rate_limited' } });
        expect(a?.headers.get('retry-after')).toBeNull();
        expect(a?.headers.get('retry-after-ms')).toBeNull();
        expect([...(a?.headers.keys() ?? [])].filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
        expect(classifyProviderResponse({ status: 429, headers: a?.headers, body: a?.text }).window).toBe('unknown');
      },
    ],
    [
      'auth-401',
      [401],
      'OTHER',
      ([a]) => {
        expect(errorOf(a as RawAnswer).code).toBe('invalid_api_key');
        expect(a?.text).not.toContain('test-key');
      },
    ],
    ['bad-request-400', [400], 'OTHER', ([a]) => expect(errorOf(a as RawAnswer).type).toBe('invalid_request_error')],
    [
      'rate-limit-headers-5',
      [200, 200],
      null,
      ([a]) => {
        describeOk(a);
        expect(a?.headers.get('x-ratelimit-remaining-tokens')).toBe('5');
        expect(a?.headers.get('x-ratelimit-reset-tokens')).toBe('2s');
      },
    ],
    ['slow-60', [200], null, ([a]) => describeOk(a)],
    // The batch scenarios spoil only batched answers: a one-entity task is answered as by `ok`.
    ['batch-drop-last', [200, 200], null, ([a]) => describeOk(a)],
    ['batch-bad-item', [200], null, ([a]) => describeOk(a)],
  ];

  test.each(table)('%s answers %j', async (scenario, statuses, expectedLabel, check) => {
    const answers: RawAnswer[] = [];
    for (let i = 0; i < statuses.length; i++)
      answers.push(await post(`${fp.baseUrl(scenario)}/chat/completions`, chatBody()));
    expect(answers.map((a) => a.status)).toEqual(statuses);
    const ids = answers.map((a) => a.headers.get('x-request-id') ?? '');
    for (const id of ids) expect(id).toMatch(/^req_fake_\d+$/);
    expect(new Set(ids).size).toBe(ids.length);
    for (const a of answers) {
      if (a.status === 200) {
        expect(a.json).toMatchObject({
          object: 'chat.completion',
          model: 'fake-1',
          choices: [{ index: 0, finish_reason: 'stop' }],
        });
        const usage = (a.json as { usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } })
          .usage;
        expect(usage.prompt_tokens).toBeGreaterThan(0);
        expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
      } else {
        expect(a.headers.get('content-type')).toBe('application/json');
        expect(label(a)).toBe(expectedLabel);
      }
    }
    check(answers);
    const stats = fp.stats()[fp.endpointKey(scenario)];
    expect(stats?.calls).toBe(statuses.length);
    expect(stats?.answered).toBe(statuses.filter((s) => s === 200).length);
    expect(stats?.throttled).toBe(statuses.filter((s) => s === 429).length);
  });

  test('latencyMs delays every answer, errors too; 0 does not', async () => {
    const slow = await startFakeProvider({ latencyMs: 150 });
    try {
      for (const scenario of ['ok', 'server-500']) {
        const started = Date.now();
        const a = await post(`${slow.baseUrl(scenario)}/chat/completions`, chatBody());
        expect(a.status).toBe(scenario === 'ok' ? 200 : 500);
        expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      }
      expect(slow.stats()[slow.endpointKey('ok')]).toMatchObject({ calls: 1, answered: 1 });
    } finally {
      await slow.close();
    }
    const started = Date.now();
    expect((await post(`${fp.baseUrl('ok')}/chat/completions`, chatBody())).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(140);
  });

  test.each<[string, string, number]>([
    ['batch-drop-last', 'leaves out', 2],
    ['batch-bad-item', 'spoils', 3],
  ])('%s %s the last entity of a batched answer', async (scenario, _what, items) => {
    const task: ModelTask = { argusTask: 'classify_pii', entities: [orders, suppliers, enriched] };
    const out = JSON.parse(contentOf(await post(`${fp.baseUrl(scenario)}/chat/completions`, chatBody(task)))) as {
      entities: Array<{ id: string; tags?: unknown[] }>;
    };
    expect(out.entities.map((e) => e.id)).toEqual(['raw.orders', 'raw.suppliers', 'staging.stg_items'].slice(0, items));
    expect(out.entities.slice(0, 2).every((e) => Array.isArray(e.tags))).toBe(true);
    if (items === 3) expect(out.entities[2]).toEqual({ id: 'staging.stg_items' });
  });

  test('slow-MS waits at least MS before answering', async () => {
    const started = Date.now();
    const a = await post(`${fp.baseUrl('slow-150')}/chat/completions`, chatBody());
    expect(a.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });
});

describe('through the openai client', () => {
  const client = (scenario?: string, reviewer?: string): OpenAI =>
    new OpenAI({ apiKey: 'test-key', baseURL: fp.baseUrl(scenario, reviewer), maxRetries: 0 });

  test('burst-2: two RateLimitErrors carrying the delay, then a structured answer', async () => {
    const c = client('burst-2');
    const request = {
      model: 'fake-1',
      messages: messagesFor(describeTask),
      response_format: {
        type: 'json_schema' as const,
        json_schema: { name: 'describe', strict: true, schema: z.toJSONSchema(MODEL_OUTPUT_SCHEMAS.describe) },
      },
    };
    for (let i = 0; i < 2; i++) {
      const err: unknown = await c.chat.completions.create(request).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      const rl = err as InstanceType<typeof OpenAI.RateLimitError>;
      expect(rl.status).toBe(429);
      expect(rl.code).toBe('rate_limit_exceeded');
      expect(rl.headers.get('retry-after')).toBe('1');
      expect(rl.requestID).toMatch(/^req_fake_\d+$/);
    }
    const done = await c.chat.completions.create(request);
    expect(done._request_id).toMatch(/^req_fake_\d+$/);
    const out = MODEL_OUTPUT_SCHEMAS.describe.parse(JSON.parse(done.choices[0]?.message.content ?? ''));
    expect(out.descriptions.length).toBeGreaterThan(0);
    expect(fp.stats()[fp.endpointKey('burst-2')]).toMatchObject({
      calls: 3,
      answered: 1,
      throttled: 2,
      statuses: { '200': 1, '429': 2 },
    });
  });

  test.each<[string, new (...args: never[]) => Error, number]>([
    ['daily-quota-0', OpenAI.RateLimitError, 429],
    ['insufficient-quota', OpenAI.RateLimitError, 429],
    ['throttle-unnamed', OpenAI.RateLimitError, 429],
    ['credits-402', OpenAI.APIError, 402],
    ['server-500', OpenAI.InternalServerError, 500],
    ['auth-401', OpenAI.AuthenticationError, 401],
    ['bad-request-400', OpenAI.BadRequestError, 400],
  ])('%s raises %p', async (scenario, errorClass, status) => {
    const err: unknown = await client(scenario)
      .chat.completions.create({
        model: 'fake-1',
        messages: messagesFor(describeTask),
        response_format: { type: 'json_object' },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errorClass);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(status);
  });

  test('slow: an AbortController abort reaches the server, which drops the work', async () => {
    const controller = new AbortController();
    const pendingCall = client('slow-5000').chat.completions.create(
      { model: 'fake-1', messages: messagesFor(describeTask) },
      { signal: controller.signal },
    );
    await waitFor(() => (fp.stats()[fp.endpointKey('slow-5000')]?.calls ?? 0) === 1);
    const started = Date.now();
    controller.abort();
    await expect(pendingCall).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(Date.now() - started).toBeLessThan(1000);
    await waitFor(() => fp.stats()[fp.endpointKey('slow-5000')]?.aborted === 1);
    expect(fp.stats()[fp.endpointKey('slow-5000')]).toMatchObject({ calls: 1, answered: 0, statuses: {} });
  });

  test('slow: a client timeout also drops the work (raw fetch)', async () => {
    const url = `${fp.baseUrl('slow-3000')}/chat/completions`;
    const call = fetch(url, { method: 'POST', body: JSON.stringify(chatBody()), signal: AbortSignal.timeout(100) });
    await expect(call).rejects.toThrow();
    await waitFor(() => fp.stats()[fp.endpointKey('slow-3000')]?.aborted === 1);
  });
});

describe('endpoints, counters and stats', () => {
  test('each path prefix keeps its own counters', async () => {
    const keys = [
      { url: fp.baseUrl('burst-1'), key: fp.endpointKey('burst-1') },
      { url: fp.baseUrl('burst-1', 'always-approve'), key: fp.endpointKey('burst-1', 'always-approve') },
      { url: fp.baseUrl('burst-1', 'always-reject'), key: fp.endpointKey('burst-1', 'always-reject') },
    ];
    expect(keys.map((k) => k.key)).toEqual(['/s/burst-1', '/s/burst-1/r/always-approve', '/s/burst-1/r/always-reject']);
    for (const { url } of keys) expect((await post(`${url}/chat/completions`, chatBody())).status).toBe(429);
    for (const { url } of keys) expect((await post(`${url}/chat/completions`, chatBody())).status).toBe(200);
    const stats = fp.stats();
    for (const { key } of keys) expect(stats[key]).toMatchObject({ calls: 2, answered: 1, throttled: 1 });
    expect(stats['/']).toBeUndefined();
  });

  test('the root path uses the default scenario and reviewer, with its own key', async () => {
    const other = await startFakeProvider({ scenario: 'burst-1', reviewer: 'always-reject' });
    try {
      expect(other.baseUrl()).toBe(`${other.url}/v1`);
      expect(other.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const review: ModelTask = {
        argusTask: 'review',
        entity: orders,
        proposals: [
          { proposalId: 'p1', kind: 'description', target: 'column', column: 'email', text: 'Column email.' },
        ],
      };
      expect((await post(`${other.baseUrl()}/chat/completions`, chatBody(review))).status).toBe(429);
      const answer = await post(`${other.baseUrl()}/chat/completions`, chatBody(review));
      expect(JSON.parse(contentOf(answer))).toMatchObject({ verdicts: [{ proposalId: 'p1', decision: 'reject' }] });
      expect(Object.keys(other.stats())).toEqual(['/']);
    } finally {
      await other.close();
    }
  });

  test('callsAfterExhaustion counts the calls made after the first "spent" answer', async () => {
    const url = `${fp.baseUrl('daily-quota-1')}/chat/completions`;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(url, chatBody())).status);
    expect(statuses).toEqual([200, 429, 429, 429, 429]);
    expect(fp.stats()[fp.endpointKey('daily-quota-1')]).toMatchObject({
      calls: 5,
      exhaustedAnswers: 4,
      firstExhaustedAt: 2,
      callsAfterExhaustion: 3,
    });
    // A burst is not exhaustion: its endpoint never counts calls after exhaustion.
    for (let i = 0; i < 3; i++) await post(`${fp.baseUrl('burst-2')}/chat/completions`, chatBody());
    expect(fp.stats()[fp.endpointKey('burst-2')]).toMatchObject({
      exhaustedAnswers: 0,
      firstExhaustedAt: null,
      callsAfterExhaustion: 0,
    });
  });

  test('the Authorization value is never stored or logged, only whether it came', async () => {
    const secret = `${SK}proj-SuperSecretValue123456`;
    const url = `${fp.baseUrl('ok')}/chat/completions`;
    await post(url, chatBody(), { authorization: `Bearer ${secret}` });
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody()),
    });
    const stats = fp.stats()[fp.endpointKey('ok')];
    expect(stats?.authHeaders).toEqual(['present', 'absent']);
    const overHttp = await (await fetch(`${fp.url}/_stats`)).text();
    expect(JSON.parse(overHttp)).toEqual(fp.stats());
    for (const text of [overHttp, JSON.stringify(fp.stats()), logLines.join('\n')])
      expect(text).not.toContain('SuperSecret');
  });

  test('GET /_stats, POST /_reset and reset()', async () => {
    await post(`${fp.baseUrl('ok')}/chat/completions`, chatBody());
    expect(Object.keys(fp.stats())).toEqual(['/s/ok']);
    const reset = await post(`${fp.url}/_reset`, {});
    expect(reset.status).toBe(200);
    expect(reset.headers.get('x-request-id')).toMatch(/^req_fake_\d+$/);
    expect(fp.stats()).toEqual({});
    await post(`${fp.baseUrl('ok')}/chat/completions`, chatBody());
    fp.reset();
    expect(await (await fetch(`${fp.url}/_stats`)).json()).toEqual({});
  });

  test('GET /v1/models lists the fake model, at the root and under a scenario', async () => {
    for (const base of [fp.baseUrl(), fp.baseUrl('burst-3', 'always-approve')]) {
      const res = await fetch(`${base}/models`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ object: 'list', data: [{ id: 'argus-fake', object: 'model' }] });
    }
    expect(fp.stats()).toEqual({});
    const listed = await new OpenAI({ apiKey: 'test-key', baseURL: fp.baseUrl(), maxRetries: 0 }).models.list();
    expect(listed.data.map((m) => m.id)).toEqual(['argus-fake']);
  });

  test.each<[string, string, number]>([
    ['unknown scenario', '/s/nope-3/v1/chat/completions', 404],
    ['unknown reviewer', '/s/ok/r/lenient/v1/chat/completions', 404],
    ['unknown route', '/v2/chat/completions', 404],
    ['GET on chat', '/v1/chat/completions', 404],
  ])('%s -> %d', async (_name, path, status) => {
    const res = await fetch(`${fp.url}${path}`, {
      method: path.startsWith('/v1/chat') ? 'GET' : 'POST',
      body: path.startsWith('/v1/chat') ? undefined : JSON.stringify(chatBody()),
    });
    expect(res.status).toBe(status);
    expect(res.headers.get('x-request-id')).toMatch(/^req_fake_\d+$/);
    expect(fp.stats()).toEqual({});
  });

  test.each<[string, unknown]>([
    ['not JSON', '{"model": '],
    ['no messages', { model: 'fake-1' }],
    [
      'no argusTask in the last user message',
      { model: 'fake-1', messages: [{ role: 'user', content: 'describe it' }] },
    ],
    [
      'a task that is not a ModelTask',
      { model: 'fake-1', messages: [{ role: 'user', content: '{"argusTask":"describe","entity":{"id":"x"}}' }] },
    ],
    ['streaming', chatBody(describeTask, { stream: true })],
    ['unknown response_format', chatBody(describeTask, { response_format: { type: 'yaml' } })],
  ])('400 invalid_request_error for %s', async (_name, body) => {
    const a = await post(`${fp.baseUrl('ok')}/chat/completions`, body);
    expect(a.status).toBe(400);
    expect(errorOf(a).type).toBe('invalid_request_error');
    expect(fp.stats()[fp.endpointKey('ok')]).toMatchObject({ calls: 1, answered: 0, statuses: { '400': 1 } });
  });

  test('a task wrapped in prose and given as content parts is still read', async () => {
    const content = [{ type: 'text', text: `Here is the task:\n${userMessage(describeTask)}\nThanks.` }];
    const a = await post(`${fp.baseUrl('ok')}/chat/completions`, {
      model: 'fake-1',
      messages: [{ role: 'user', content }],
      response_format: { type: 'json_schema', json_schema: { name: 'describe', schema: {} } },
    });
    expect(a.status).toBe(200);
    MODEL_OUTPUT_SCHEMAS.describe.parse(JSON.parse(contentOf(a)));
  });
});

describe('startup', () => {
  test.each(['0.0.0.0', '192.168.1.10', '::', 'example.com'])('refuses the non-loopback host %s', async (host) => {
    await expect(startFakeProvider({ host })).rejects.toThrow(/non-loopback/);
  });

  test('localhost binds to 127.0.0.1', async () => {
    const p = await startFakeProvider({ host: 'localhost' });
    expect(p.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await p.close();
  });

  test.each([
    [{ scenario: 'nope' }, /unknown scenario/],
    [{ scenario: 'slow-99999999' }, /unknown scenario/],
    [{ reviewer: 'lenient' as never }, /unknown reviewer/],
    [{ port: 70000 }, /invalid port/],
    [{ latencyMs: -1 }, /invalid latencyMs/],
    [{ latencyMs: 1.5 }, /invalid latencyMs/],
  ])('rejects bad options %j', async (opts, message) => {
    await expect(startFakeProvider(opts)).rejects.toThrow(message);
  });

  test.each<[string, ReturnType<typeof parseScenario>]>([
    ['ok', { kind: 'ok', n: 0 }],
    ['burst-2', { kind: 'burst', n: 2 }],
    ['daily-quota-3', { kind: 'daily-quota', n: 3 }],
    ['insufficient-quota', { kind: 'insufficient-quota', n: 0 }],
    ['insufficient-quota-after-4', { kind: 'insufficient-quota', n: 4 }],
    ['credits-402-after-1', { kind: 'credits-402', n: 1 }],
    ['server-500', { kind: 'server-500', n: Infinity }],
    ['server-500-1', { kind: 'server-500', n: 1 }],
    ['malformed', { kind: 'malformed', n: Infinity }],
    ['slow-250', { kind: 'slow', n: 250 }],
    ['rate-limit-headers-0', { kind: 'rate-limit-headers', n: 0 }],
    ['batch-drop-last', { kind: 'batch-drop-last', n: 0 }],
    ['batch-bad-item', { kind: 'batch-bad-item', n: 0 }],
    ['batch-drop-last-2', null],
    ['burst', null],
    ['burst-after-2', null],
    ['insufficient-quota-4', null],
    ['daily-quota--1', null],
    ['constructor', null],
  ])('parseScenario(%s)', (name, expected) => {
    expect(parseScenario(name)).toEqual(expected);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the scripted model', () => {
  const lineageTask: ModelTask = { argusTask: 'check_lineage', entity: enriched, knownEntities: KNOWN };
  const proposals: ProposalForReview[] = [
    {
      proposalId: 'd-ok',
      kind: 'description',
      target: 'column',
      column: 'email',
      text: 'Column email (VARCHAR(255)), nullable.',
    },
    {
      proposalId: 'd-name',
      kind: 'description',
      target: 'column',
      column: 'daily_total',
      text: 'Column daily_total (NUMERIC(12,2)).',
    },
    { proposalId: 'd-cadence', kind: 'description', target: 'table', text: 'Orders, refreshed nightly from the shop.' },
    { proposalId: 'd-rows', kind: 'description', target: 'table', text: 'Holds about 1,200,000 rows of orders.' },
    { proposalId: 'd-owner', kind: 'description', target: 'table', text: 'Owned by the finance team.' },
    { proposalId: 'd-quality', kind: 'description', target: 'table', text: 'Trusted source of order totals.' },
    { proposalId: 'd-consumer', kind: 'description', target: 'table', text: 'Feeds the revenue dashboard.' },
    { proposalId: 't-email', kind: 'pii_tag', column: 'email', category: 'email' },
    { proposalId: 't-region', kind: 'pii_tag', column: 'region', category: 'address' },
    { proposalId: 't-fk', kind: 'pii_tag', column: 'customer_id', category: 'username' },
  ];
  const reviewTask: ModelTask = { argusTask: 'review', entity: orders, proposals };

  const tasks: SingleModelTask[] = [
    describeTask,
    { argusTask: 'describe', entity: enriched },
    { argusTask: 'classify_pii', entity: orders },
    { argusTask: 'classify_pii', entity: suppliers },
    lineageTask,
    reviewTask,
  ];

  test.each(tasks.flatMap((t) => FAKE_REVIEWERS.map((r) => [t.argusTask, t.entity.id, r, t] as const)))(
    '%s on %s (%s reviewer) validates against its schema',
    (name, _id, reviewer, task) => {
      expect(MODEL_OUTPUT_SCHEMAS[name].safeParse(answerTask(task, reviewer)).success).toBe(true);
    },
  );

  test('describe: only what lacks a description, schema facts only', () => {
    const out = MODEL_OUTPUT_SCHEMAS.describe.parse(answerTask(describeTask, 'correct'));
    expect(out.descriptions.map((d) => d.column)).toEqual([null, 'order_id', 'customer_id', 'email', 'daily_total']);
    expect(out.descriptions).toContainEqual({
      target: 'column',
      column: 'email',
      text: 'Column email (VARCHAR(255)), nullable.',
    });
    expect(out.descriptions[0]?.text).toBe(
      'Table orders with columns order_id, customer_id, email, daily_total, region.',
    );
    const view = MODEL_OUTPUT_SCHEMAS.describe.parse(
      answerTask({ argusTask: 'describe', entity: enriched }, 'correct'),
    );
    expect(view.descriptions.find((d) => d.target === 'table')).toBeUndefined();
    // The correct reviewer passes the fake's own descriptions, even for a column named daily_total.
    const asProposals = out.descriptions.map((d, i): ProposalForReview => {
      const p: ProposalForReview = { proposalId: `p${i}`, kind: 'description', target: d.target, text: d.text };
      if (d.column !== null) p.column = d.column;
      return p;
    });
    const verdicts = MODEL_OUTPUT_SCHEMAS.review.parse(
      answerTask({ argusTask: 'review', entity: orders, proposals: asProposals }, 'correct'),
    );
    expect(verdicts.verdicts.every((v) => v.decision === 'approve')).toBe(true);
  });

  test('classify_pii: name tokens decide', () => {
    const out = MODEL_OUTPUT_SCHEMAS.classify_pii.parse(
      answerTask({ argusTask: 'classify_pii', entity: orders }, 'correct'),
    );
    const byColumn = Object.fromEntries(out.tags.map((t) => [t.column, [t.pii, t.category]]));
    expect(byColumn).toEqual({
      order_id: [false, 'identifier'],
      customer_id: [false, 'identifier'],
      email: [true, 'email'],
      daily_total: [false, 'none'],
      region: [false, 'geo_coarse'],
    });
    const items = MODEL_OUTPUT_SCHEMAS.classify_pii.parse(
      answerTask({ argusTask: 'classify_pii', entity: enriched }, 'correct'),
    );
    expect(items.tags.find((t) => t.column === 'product_name')).toMatchObject({ pii: false });
  });

  test('check_lineage: dangling edges and unrecorded reads, quoting ignored, whole names only', () => {
    const out = MODEL_OUTPUT_SCHEMAS.check_lineage.parse(answerTask(lineageTask, 'correct'));
    expect(out.findings.map((f) => [f.finding, f.upstream])).toEqual([
      ['dangling_edge', 'raw.legacy_items'],
      ['unrecorded_read', 'raw.products'],
    ]);
  });

  test('review (correct): world claims, generic columns, business contacts and unsupported lineage are rejected', () => {
    const out = MODEL_OUTPUT_SCHEMAS.review.parse(answerTask(reviewTask, 'correct'));
    expect(Object.fromEntries(out.verdicts.map((v) => [v.proposalId, v.decision]))).toEqual({
      'd-ok': 'approve',
      'd-name': 'approve',
      'd-cadence': 'reject',
      'd-rows': 'reject',
      'd-owner': 'reject',
      'd-quality': 'reject',
      'd-consumer': 'reject',
      't-email': 'approve',
      't-region': 'reject',
      't-fk': 'reject',
    });
    const contacts = MODEL_OUTPUT_SCHEMAS.review.parse(
      answerTask(
        {
          argusTask: 'review',
          entity: suppliers,
          proposals: [{ proposalId: 's1', kind: 'pii_tag', column: 'phone', category: 'phone' }],
        },
        'correct',
      ),
    );
    expect(contacts.verdicts[0]?.decision).toBe('reject');
    const lineage = MODEL_OUTPUT_SCHEMAS.review.parse(
      answerTask(
        {
          argusTask: 'review',
          entity: enriched,
          proposals: [
            { proposalId: 'l1', kind: 'lineage_flag', finding: 'dangling_edge', upstream: 'raw.legacy_items' },
            { proposalId: 'l2', kind: 'lineage_flag', finding: 'dangling_edge', upstream: 'staging.stg_order_items' },
            { proposalId: 'l3', kind: 'lineage_flag', finding: 'unrecorded_read', upstream: 'raw.products' },
            { proposalId: 'l4', kind: 'lineage_flag', finding: 'unrecorded_read', upstream: 'raw.orders' },
            { proposalId: 'l5', kind: 'lineage_flag', finding: 'unrecorded_read', upstream: 'staging.stg_order_items' },
          ],
        },
        'correct',
      ),
    );
    expect(lineage.verdicts.map((v) => v.decision)).toEqual(['approve', 'reject', 'approve', 'reject', 'reject']);
    for (const v of [...out.verdicts, ...lineage.verdicts]) expect(v.reason).not.toMatch(/\n/);
  });

  test.each([
    ['always-approve', 'approve'],
    ['always-reject', 'reject'],
  ] as const)('review (%s) gives every proposal %s', (reviewer, decision) => {
    const out = MODEL_OUTPUT_SCHEMAS.review.parse(answerTask(reviewTask, reviewer));
    expect(out.verdicts.map((v) => v.proposalId)).toEqual(proposals.map((p) => p.proposalId));
    expect(new Set(out.verdicts.map((v) => v.decision))).toEqual(new Set([decision]));
  });

  test.each<[string, ModelTask]>([
    ['describe', { argusTask: 'describe', entities: [orders, enriched] }],
    ['classify_pii', { argusTask: 'classify_pii', entities: [orders, suppliers] }],
    ['check_lineage', { argusTask: 'check_lineage', entities: [{ ...enriched, knownEntities: KNOWN }, orders] }],
  ])('a batched %s is answered entity by entity, as each entity alone', (name, task) => {
    const parsed = MODEL_BATCH_OUTPUT_SCHEMAS[name as 'describe'].parse(answerTask(task)) as { entities: unknown[] };
    // A batched describe answers in its compact form: read back, it is the single answer's list.
    const out =
      name === 'describe'
        ? {
            entities: (parsed as DescribeBatchOutput).entities.map(({ id, ...item }) => ({
              id,
              descriptions: describeOfBatchItem(item),
            })),
          }
        : parsed;
    const alone = (task as { entities: EntityEvidence[] }).entities.map((entity) => {
      const one = answerTask(
        name === 'check_lineage'
          ? { argusTask: 'check_lineage', entity, knownEntities: entity.knownEntities ?? [] }
          : ({ argusTask: name, entity } as SingleModelTask),
      ) as Record<string, unknown[]>;
      const [field, list] = Object.entries(one)[0]!;
      // A batched classify lists only the PII columns.
      return {
        id: entity.id,
        [field]: name === 'classify_pii' ? list.filter((t) => (t as { pii: boolean }).pii) : list,
      };
    });
    expect(out.entities).toEqual(alone);
    expect(extractTask(messagesFor(task))).toEqual(task);
  });

  test.each(FAKE_REVIEWERS)('a batched review (%s) judges each proposal with its own entity', (reviewer) => {
    const batch: ModelTask = {
      argusTask: 'review',
      entities: [orders, suppliers, enriched],
      proposals: [
        ...proposals.map((p) => ({ ...p, entityId: 'raw.orders' })),
        { proposalId: 's1', kind: 'pii_tag', column: 'phone', category: 'phone', entityId: 'raw.suppliers' },
        { proposalId: 'nobody', kind: 'pii_tag', column: 'email', category: 'email', entityId: 'raw.unknown' },
      ],
    };
    const out = MODEL_OUTPUT_SCHEMAS.review.parse(answerTask(batch, reviewer));
    const alone = [
      ...MODEL_OUTPUT_SCHEMAS.review.parse(answerTask(reviewTask, reviewer)).verdicts,
      ...MODEL_OUTPUT_SCHEMAS.review.parse(
        answerTask(
          {
            argusTask: 'review',
            entity: suppliers,
            proposals: [{ proposalId: 's1', kind: 'pii_tag', column: 'phone', category: 'phone' }],
          },
          reviewer,
        ),
      ).verdicts,
    ];
    expect(out.verdicts).toEqual(alone);
  });

  test.each<[string, unknown, string | null]>([
    ['whole content', messagesFor(describeTask), 'describe'],
    [
      'prose around the document',
      [{ role: 'user', content: `Task: ${userMessage(lineageTask)} -- end` }],
      'check_lineage',
    ],
    [
      'the last user message wins',
      [
        ...messagesFor(describeTask),
        { role: 'assistant', content: '{}' },
        { role: 'user', content: userMessage(reviewTask) },
      ],
      'review',
    ],
    ['a system message is not the task', [{ role: 'system', content: userMessage(describeTask) }], null],
    ['no JSON', [{ role: 'user', content: 'hello' }], null],
    [
      'unknown task',
      [{ role: 'user', content: JSON.stringify({ argusTask: 'summarise', entity: toWire(orders) }) }],
      null,
    ],
    ['not an array', { role: 'user' }, null],
  ])('extractTask: %s', (_name, messages, expected) => {
    expect(extractTask(messages)?.argusTask ?? null).toBe(expected);
  });
});
