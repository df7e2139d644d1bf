/**
 * A fake OpenAI-compatible provider: a real HTTP server on loopback that answers chat completions
 * with the scripted model (model.ts) and misbehaves on request, the way real providers do
 * (bursts, spent daily quotas, empty accounts, 5xx, malformed output, slowness, a batched answer that
 * leaves out or spoils one entity). One server can be several endpoints at once:
 * `/s/<scenario>[/r/<reviewer>]/v1` picks the behaviour by path, and each path prefix keeps its own
 * counters; `latencyMs` delays every answer, for benchmarks. It never stores or logs the Authorization value.
 *
 * It ships with ARGUS for users' trials (`argus fake-provider`: a sweep in model mode without a key or a bill),
 * and serves the tests and benchmarks; no worker, activity or catalog code imports fakes/.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelTask } from '../domain/model-io';
import { answerTask, extractTask, FAKE_REVIEWERS, type FakeReviewer } from './model';

export type FakeScenarioKind =
  | 'ok'
  | 'burst'
  | 'daily-quota'
  | 'insufficient-quota'
  | 'credits-402'
  | 'server-500'
  | 'malformed'
  | 'slow'
  | 'throttle-unnamed'
  | 'auth-401'
  | 'bad-request-400'
  | 'rate-limit-headers'
  | 'daily-headers'
  | 'token-quota'
  | 'batch-drop-last'
  | 'batch-bad-item';

/** A parsed scenario name. `n`: calls that misbehave, answers before a quota is spent, ms, or tokens left. */
export interface FakeScenario {
  kind: FakeScenarioKind;
  n: number;
}

/** One line per scenario name, for `argus fake-provider --help`. N, K, MS and R are integers >= 0. */
export const FAKE_SCENARIO_HELP: readonly string[] = [
  'ok: answers normally, with x-ratelimit-* headers',
  'burst-N: first N calls 429 tokens-per-minute with retry-after 1s, then normal',
  'daily-quota-K: K answers, then 429 tokens-per-day (reset 1h30m43.2s) on every call',
  'insufficient-quota[-after-K]: (K answers, then) 429 insufficient_quota on every call',
  'credits-402[-after-K]: (K answers, then) 402 insufficient credits on every call',
  'server-500[-N]: (first N) calls 500, then normal',
  'malformed[-N]: (first N) answers are not valid JSON or not the schema, then normal',
  'slow-MS: answers after MS milliseconds; drops the work if the client goes away',
  'throttle-unnamed: every call 429 "Rate limit exceeded" naming no window, no retry-after',
  'auth-401: every call 401 invalid_api_key',
  'bad-request-400: every call 400 invalid_request_error',
  'rate-limit-headers-R: normal answers saying x-ratelimit-remaining-tokens R, reset 2s',
  'daily-headers-R: normal answers saying x-ratelimit-remaining-tokens R, reset in 20h (a daily window)',
  'token-quota-T: answers while its tokens (prompt + completion, ~4 characters a token) stay within T; then 429 tokens-per-day on every call',
  'batch-drop-last: a batched answer about several entities leaves the last entity out; others answer normally',
  'batch-bad-item: a batched answer about several entities spoils the last entity (missing field, bad decision)',
];

// Names without a number; server-500 and malformed then misbehave on every call.
const UNNUMBERED =
  /^(?:ok|insufficient-quota|credits-402|server-500|malformed|throttle-unnamed|auth-401|bad-request-400|batch-drop-last|batch-bad-item)$/;
const NUMBERED =
  /^(burst|daily-quota|insufficient-quota-after|credits-402-after|server-500|malformed|slow|rate-limit-headers|daily-headers|token-quota)-(\d+)$/;
const MAX_SLOW_MS = 10 * 60 * 1000;

/** The scenario a name stands for, or null when the name is unknown or its number is out of range. */
export function parseScenario(name: string): FakeScenario | null {
  if (UNNUMBERED.test(name)) {
    return { kind: name as FakeScenarioKind, n: name === 'server-500' || name === 'malformed' ? Infinity : 0 };
  }
  const m = NUMBERED.exec(name);
  if (!m) return null;
  const kind = (m[1] ?? '').replace(/-after$/, '') as FakeScenarioKind;
  const n = Number(m[2]);
  if (!Number.isSafeInteger(n) || (kind === 'slow' && n > MAX_SLOW_MS)) return null;
  return { kind, n };
}

/** Counters of one endpoint (one path prefix). Call indexes are 1-based. */
export interface EndpointStats {
  calls: number;
  /** 200 answers. */
  answered: number;
  /** Sums of the `usage` the 200 answers reported. */
  promptTokens: number;
  completionTokens: number;
  /** 429 answers. */
  throttled: number;
  /** Answers saying the quota or credit is spent (daily quota, insufficient_quota, 402). */
  exhaustedAnswers: number;
  firstExhaustedAt: number | null;
  /** Calls received after the first answer that said the quota was spent. */
  callsAfterExhaustion: number;
  /** Calls whose client went away before the answer was sent (slow scenario). */
  aborted: number;
  statuses: Record<string, number>;
  /** One entry per call: whether an Authorization header came, never its value. */
  authHeaders: Array<'present' | 'absent'>;
}

/** Stats by endpoint key: `/` for the root, else the path prefix (`/s/burst-2`, `/s/ok/r/always-reject`). */
export type FakeStats = Record<string, EndpointStats>;

export interface FakeProviderOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Loopback only: 127.0.0.1 (default), another 127.x address, ::1 or localhost. */
  host?: string;
  /** Scenario of the root path `/v1`; default `ok`. */
  scenario?: string;
  /** Reviewer of paths that do not name one; default `correct`. */
  reviewer?: FakeReviewer;
  /** Every chat answer (errors too) waits this many ms more, like a real provider's latency; default 0. */
  latencyMs?: number;
  log?: (line: string) => void;
}

export interface FakeProvider {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  /** An OpenAI `baseURL` (ending in /v1) for a scenario and reviewer; no arguments: the root `/v1`. */
  baseUrl(scenario?: string, reviewer?: string): string;
  /** The stats key of the endpoint `baseUrl(scenario, reviewer)` points at. */
  endpointKey(scenario?: string, reviewer?: string): string;
  stats(): FakeStats;
  reset(): void;
  close(): Promise<void>;
}

type Headers = Record<string, string>;

type Plan =
  | { headers: Headers; malformed: boolean; delayMs: number; error?: undefined }
  | { error: { status: number; body: unknown; headers: Headers; exhausted: boolean; note: string } };

const TPM_LIMIT = 30000;
const RPM_LIMIT = 1000;

function rateHeaders(calls: number, remainingTokens: number, resetTokens: string): Headers {
  return {
    'x-ratelimit-limit-requests': String(RPM_LIMIT),
    'x-ratelimit-limit-tokens': String(TPM_LIMIT),
    'x-ratelimit-remaining-requests': String(Math.max(0, RPM_LIMIT - calls)),
    'x-ratelimit-remaining-tokens': String(Math.max(0, remainingTokens)),
    'x-ratelimit-reset-requests': '1s',
    'x-ratelimit-reset-tokens': resetTokens,
  };
}

function errorBody(message: string, type: string, code: string | null) {
  return { error: { message, type, param: null, code } };
}

const DAILY_HEADERS: Headers = {
  // Groq sends retry-after on a spent daily quota too: a client must not read it as "wait and retry".
  'retry-after': '5444',
  'x-ratelimit-limit-requests': '14400',
  'x-ratelimit-limit-tokens': '100000',
  'x-ratelimit-remaining-requests': '14000',
  'x-ratelimit-remaining-tokens': '0',
  'x-ratelimit-reset-requests': '2m52.8s',
  'x-ratelimit-reset-tokens': '1h30m43.2s',
};
const QUOTA_MESSAGE = 'You exceeded your current quota, please check your plan and billing details.';
const QUOTA_BODY = errorBody(QUOTA_MESSAGE, 'insufficient_quota', 'insufficient_quota');
const CREDITS_BODY = {
  error: { message: 'Insufficient credits. Add more using https://openrouter.ai/settings/credits', code: 402 },
};
const SERVER_BODY = errorBody('The server had an error while processing your request.', 'server_error', null);
const UNNAMED_BODY = { error: { message: 'Rate limit exceeded', type: 'rate_limited' } };
const AUTH_BODY = errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
const REFUSED_BODY = errorBody('Invalid request: this endpoint refuses every request.', 'invalid_request_error', null);

const burstBody = (model: string) =>
  errorBody(
    `Rate limit reached for ${model} in organization org-fake on tokens per min (TPM): Limit ${TPM_LIMIT}, ` +
      'Used 29950, Requested 900. Please try again in 1s. Visit https://platform.openai.com/account/rate-limits to learn more.',
    'tokens',
    'rate_limit_exceeded',
  );
const dailyBody = (model: string) =>
  errorBody(
    `Rate limit reached for model \`${model}\` in organization \`org_fake\` service tier \`on_demand\` on tokens per day (TPD): ` +
      'Limit 100000, Used 99299, Requested 1139. Please try again in 1h30m43.2s. ' +
      'Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing',
    'tokens',
    'rate_limit_exceeded',
  );

/** What the endpoint does with its `n`-th call, given how many calls it has answered before. */
function planFor(sc: FakeScenario, n: number, answered: number, model: string): Plan {
  const normal = rateHeaders(n, TPM_LIMIT - 1000, '6m0s');
  const answer = (headers = normal, malformed = false, delayMs = 0): Plan => ({ headers, malformed, delayMs });
  const fail = (status: number, body: unknown, note: string, headers: Headers = {}, exhausted = false): Plan => ({
    error: { status, body, headers, exhausted, note },
  });
  switch (sc.kind) {
    case 'ok':
    case 'batch-drop-last':
    case 'batch-bad-item':
      return answer();
    case 'rate-limit-headers':
      return answer(rateHeaders(n, sc.n, '2s'));
    case 'daily-headers':
      return answer(rateHeaders(n, sc.n, '20h0m0s'));
    case 'token-quota':
      return answer(); // the quota itself is counted where the request's size is known (chat)
    case 'slow':
      return answer(normal, false, sc.n);
    case 'malformed':
      return answer(normal, n <= sc.n);
    case 'burst': {
      const headers = { 'retry-after': '1', 'retry-after-ms': '1000', ...rateHeaders(n, 50, '1s') };
      return n > sc.n ? answer() : fail(429, burstBody(model), 'burst', headers);
    }
    case 'daily-quota':
      return answered < sc.n ? answer() : fail(429, dailyBody(model), 'daily quota spent', DAILY_HEADERS, true);
    case 'insufficient-quota':
      return answered < sc.n ? answer() : fail(429, QUOTA_BODY, 'insufficient quota', {}, true);
    case 'credits-402':
      return answered < sc.n ? answer() : fail(402, CREDITS_BODY, 'credits spent', {}, true);
    case 'server-500':
      return n > sc.n ? answer() : fail(500, SERVER_BODY, 'server error');
    case 'throttle-unnamed':
      return fail(429, UNNAMED_BODY, 'unnamed throttle');
    case 'auth-401':
      return fail(401, AUTH_BODY, 'auth');
    case 'bad-request-400':
      return fail(400, REFUSED_BODY, 'bad request');
  }
}

// Alternating kinds of bad output: prose around a cut-off document, then valid JSON of the wrong shape.
const malformedContent = (n: number): string =>
  n % 2 === 1
    ? 'Sure! Here is the JSON you asked for:\n{"descriptions": [{"target": "table", "text": '
    : '{"result":"done"}';

/**
 * The scripted answer spoilt the way a batch scenario says: only for a batched task about more than one
 * entity, and only the last of them (the last entity with proposals, for a review). Anything else unchanged.
 */
function spoilBatch(kind: FakeScenarioKind, task: ModelTask, answer: unknown): unknown {
  if ((kind !== 'batch-drop-last' && kind !== 'batch-bad-item') || !('entities' in task)) return answer;
  if (task.argusTask === 'review') {
    const withProposals = task.entities.filter((e) => task.proposals.some((p) => p.entityId === e.id));
    const last = withProposals[withProposals.length - 1];
    if (withProposals.length < 2 || !last) return answer;
    const ids = new Set(task.proposals.filter((p) => p.entityId === last.id).map((p) => p.proposalId));
    const { verdicts } = answer as { verdicts: Array<{ proposalId: string }> };
    return {
      verdicts:
        kind === 'batch-drop-last'
          ? verdicts.filter((v) => !ids.has(v.proposalId))
          : verdicts.map((v) => (ids.has(v.proposalId) ? { ...v, decision: 'maybe' } : v)),
    };
  }
  const { entities } = answer as { entities: Array<{ id: string }> };
  const last = entities[entities.length - 1];
  if (entities.length < 2 || !last) return answer;
  // The item keeps its id and loses what it was asked for: a required field missing.
  return { entities: [...entities.slice(0, -1), ...(kind === 'batch-drop-last' ? [] : [{ id: last.id }])] };
}

type ChatRequest = {
  model?: unknown;
  messages?: unknown;
  stream?: unknown;
  response_format?: { type?: unknown };
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
};

/** The completion tokens the request allows (max_completion_tokens, or the older max_tokens), if it says. */
function maxTokensOf(body: ChatRequest): number | undefined {
  const n = body.max_completion_tokens ?? body.max_tokens;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
}

/** The request body, or what is wrong with it. */
function readChatRequest(raw: string): (ChatRequest & { messages: unknown[] }) | string {
  let body: ChatRequest;
  try {
    body = JSON.parse(raw) as ChatRequest;
  } catch {
    return 'The request body is not valid JSON.';
  }
  if (!body || typeof body !== 'object' || !Array.isArray(body.messages) || body.messages.length === 0) {
    return "The request body must be a JSON object with a non-empty 'messages' array.";
  }
  if (body.stream === true) return 'Streaming is not supported by the fake provider.';
  const format = body.response_format?.type;
  if (format !== undefined && !['json_schema', 'json_object', 'text'].includes(String(format))) {
    return `Invalid value for 'response_format.type': ${JSON.stringify(format)}.`;
  }
  return { ...body, messages: body.messages };
}

function loopbackHost(host: string): string {
  const h = host.replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return '127.0.0.1';
  if (h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h)) return h;
  throw new Error(`fake provider: refusing to listen on non-loopback host "${host}"; use 127.0.0.1 or ::1`);
}

const EMPTY_STATS: EndpointStats = {
  calls: 0,
  answered: 0,
  promptTokens: 0,
  completionTokens: 0,
  throttled: 0,
  exhaustedAnswers: 0,
  firstExhaustedAt: null,
  callsAfterExhaustion: 0,
  aborted: 0,
  statuses: {},
  authHeaders: [],
};
const isReviewer = (r: string): r is FakeReviewer => (FAKE_REVIEWERS as readonly string[]).includes(r);
const ROUTE = /^(?:\/s\/([\w.-]+)(?:\/r\/([\w.-]+))?)?\/v1\/(chat\/completions|models)\/?$/;
const BODY_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Start the fake provider on loopback. Rejects on a non-loopback host, an unknown default scenario
 * or reviewer, or a port that cannot be bound.
 */
export async function startFakeProvider(opts: FakeProviderOptions = {}): Promise<FakeProvider> {
  const host = loopbackHost(opts.host ?? '127.0.0.1');
  const defaultName = opts.scenario ?? 'ok';
  const defaultScenario = parseScenario(defaultName);
  if (!defaultScenario) throw new Error(`fake provider: unknown scenario "${defaultName}"`);
  const defaultReviewer = opts.reviewer ?? 'correct';
  if (!isReviewer(defaultReviewer)) throw new Error(`fake provider: unknown reviewer "${String(defaultReviewer)}"`);
  const port = opts.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`fake provider: invalid port ${port}`);
  const latencyMs = opts.latencyMs ?? 0;
  if (!Number.isInteger(latencyMs) || latencyMs < 0 || latencyMs > MAX_SLOW_MS)
    throw new Error(`fake provider: invalid latencyMs ${latencyMs}`);
  const log = opts.log ?? ((): void => undefined);

  let endpoints = new Map<string, EndpointStats>();
  let requestSeq = 0;
  const pending = new Set<NodeJS.Timeout>();

  // A reviewer can only be named after a scenario, so naming one alone means the default scenario.
  const keyOf = (scenario?: string, reviewer?: string): string =>
    scenario === undefined && reviewer === undefined
      ? '/'
      : `/s/${scenario ?? defaultName}${reviewer === undefined ? '' : `/r/${reviewer}`}`;

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Headers = {}): void => {
    for (const [name, value] of Object.entries({ ...headers, 'content-type': 'application/json' })) {
      res.setHeader(name, value);
    }
    res.statusCode = status;
    res.end(JSON.stringify(body)); // one end() with the whole body, no writeHead: Node sets content-length
  };

  type Endpoint = { key: string; scenario: FakeScenario; reviewer: FakeReviewer; seq: number };

  const chat = (req: http.IncomingMessage, res: http.ServerResponse, raw: string, ep: Endpoint): void => {
    const st = endpoints.get(ep.key) ?? { ...EMPTY_STATS, statuses: {}, authHeaders: [] };
    endpoints.set(ep.key, st);
    if (st.firstExhaustedAt !== null) st.callsAfterExhaustion += 1;
    const n = (st.calls += 1);
    st.authHeaders.push(req.headers.authorization ? 'present' : 'absent');

    const deliver = (status: number, body: unknown, headers: Headers, note: string, exhausted: boolean): void => {
      st.statuses[status] = (st.statuses[status] ?? 0) + 1;
      if (status === 200) st.answered += 1;
      if (status === 429) st.throttled += 1;
      if (exhausted) {
        st.exhaustedAnswers += 1;
        st.firstExhaustedAt ??= n;
      }
      log(`POST ${req.url ?? ''} #${n} -> ${status} ${note}`);
      send(res, status, body, headers);
    };
    const reply = (
      status: number,
      body: unknown,
      headers: Headers,
      note: string,
      exhausted = false,
      delayMs = latencyMs,
    ): void => {
      if (delayMs <= 0) return deliver(status, body, headers, note, exhausted);
      // The client gave up (abort, timeout): drop the work instead of answering into a closed socket.
      let settled = false;
      const abandon = (): void => {
        if (settled || res.writableEnded) return;
        settled = true;
        clearTimeout(timer);
        pending.delete(timer);
        st.aborted += 1;
        log(`POST ${req.url ?? ''} #${n} client went away before the answer`);
      };
      const timer = setTimeout(() => {
        pending.delete(timer);
        if (res.destroyed) return abandon();
        settled = true;
        deliver(status, body, headers, `${note} after ${delayMs}ms`, exhausted);
      }, delayMs);
      pending.add(timer);
      res.on('close', abandon);
    };
    const badRequest = (message: string): void =>
      reply(400, errorBody(message, 'invalid_request_error', null), {}, 'bad request');

    const body = readChatRequest(raw);
    if (typeof body === 'string') return badRequest(body);
    const model = typeof body.model === 'string' && body.model ? body.model : 'argus-fake';
    // A daily token quota: the call that would take the endpoint past it is refused, as a real provider does.
    if (ep.scenario.kind === 'token-quota') {
      const asked = Math.max(1, Math.ceil(JSON.stringify(body.messages).length / 4));
      if (st.firstExhaustedAt !== null || st.promptTokens + st.completionTokens + asked > ep.scenario.n)
        return reply(429, dailyBody(model), DAILY_HEADERS, 'daily token quota spent', true);
    }
    const plan = planFor(ep.scenario, n, st.answered, model);
    if (plan.error) {
      const e = plan.error;
      return reply(e.status, e.body, e.headers, e.note, e.exhausted);
    }

    let content = malformedContent(n);
    if (!plan.malformed) {
      const task = extractTask(body.messages);
      if (!task) return badRequest('The last user message holds no argusTask JSON document this model can read.');
      content = JSON.stringify(spoilBatch(ep.scenario.kind, task, answerTask(task, ep.reviewer)));
    }
    // Token counts are estimates (4 characters a token): enough for pacing arithmetic in tests.
    const prompt = Math.max(1, Math.ceil(JSON.stringify(body.messages).length / 4));
    // An answer longer than the request's max_tokens is cut there, mid-JSON, as a real model's is.
    const limit = maxTokensOf(body);
    let finish: 'stop' | 'length' = 'stop';
    if (limit !== undefined && Math.ceil(content.length / 4) > limit) {
      content = content.slice(0, limit * 4);
      finish = 'length';
    }
    const completion = Math.max(1, Math.ceil(content.length / 4));
    st.promptTokens += prompt;
    st.completionTokens += completion;
    const answer = {
      id: `chatcmpl-fake-${ep.seq}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        { index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finish },
      ],
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    };
    const note = plan.malformed ? 'malformed output' : finish === 'length' ? 'answer cut at max_tokens' : 'answered';
    reply(200, answer, plan.headers, note, false, plan.delayMs + latencyMs);
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, raw: string, seq: number): void => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const method = req.method ?? 'GET';
    const notFound = (what = `route ${method} ${path}`): void =>
      send(res, 404, errorBody(`No ${what}.`, 'invalid_request_error', 'not_found'));

    if (path === '/_stats' && method === 'GET') return send(res, 200, Object.fromEntries(endpoints));
    if (path === '/_reset' && method === 'POST') {
      endpoints = new Map();
      log('stats reset');
      return send(res, 200, { reset: true });
    }
    const m = ROUTE.exec(path);
    if (!m) return notFound();
    const scenario = m[1] === undefined ? defaultScenario : parseScenario(m[1]);
    if (!scenario) return notFound(`scenario "${m[1] ?? ''}"`);
    const reviewer = m[2] ?? defaultReviewer;
    if (!isReviewer(reviewer)) return notFound(`reviewer "${reviewer}"`);
    if (m[3] === 'models' && method === 'GET') {
      return send(res, 200, {
        object: 'list',
        data: [{ id: 'argus-fake', object: 'model', created: 0, owned_by: 'argus' }],
      });
    }
    if (m[3] !== 'chat/completions' || method !== 'POST') return notFound();
    chat(req, res, raw, { key: keyOf(m[1], m[2]), scenario, reviewer, seq });
  };

  const server = http.createServer((req, res) => {
    const seq = ++requestSeq;
    res.setHeader('x-request-id', `req_fake_${seq}`);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_MAX_BYTES) chunks.push(chunk);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      if (size > BODY_MAX_BYTES)
        return send(res, 413, errorBody('Request body too large.', 'invalid_request_error', null));
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'), seq);
      } catch (err) {
        log(`internal error: ${err instanceof Error ? err.message : String(err)}`);
        if (res.headersSent) res.destroy();
        else send(res, 500, errorBody('Fake provider internal error.', 'server_error', null));
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
  log(
    `fake provider listening on ${url} (default scenario ${defaultName}, reviewer ${defaultReviewer}` +
      `${latencyMs > 0 ? `, latency ${latencyMs}ms` : ''})`,
  );

  return {
    url,
    baseUrl: (scenario, reviewer) => `${url}${keyOf(scenario, reviewer).replace(/\/$/, '')}/v1`,
    endpointKey: keyOf,
    stats: () => structuredClone(Object.fromEntries(endpoints)),
    reset: () => {
      endpoints = new Map();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const t of pending) clearTimeout(t);
        pending.clear();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
