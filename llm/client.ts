import { createHash } from 'node:crypto';
import OpenAI, { APIError, APIConnectionTimeoutError, APIUserAbortError, APIConnectionError } from 'openai';
import { z } from 'zod';
import { formatIssues } from '../domain/issues';
import {
  MalformedOutputError,
  ProviderAuthError,
  ProviderNetworkError,
  ProviderTimeoutError,
  providerErrorFromResponse,
  requestIdOf,
} from './errors';
import type { Pacer } from './pacer';

export interface EndpointSpec {
  id: string;
  baseUrl: string;
  model: string;
  apiKeyEnv?: string;
  structuredOutput: 'json_schema' | 'json_object';
  maxOutputTokens: number;
  timeoutMs: number;
}

export interface StructuredCall<T, A = T> {
  endpoint: EndpointSpec;
  system: string;
  user: string;
  /** The output schema sent as json_schema; the answer is validated against it unless answerSchema is given. */
  schema: z.ZodType<T>;
  /**
   * A lenient schema the answer is validated against instead (a batch's envelope, its items left to the caller),
   * so one bad item does not fail a whole batch. An answer that does not match it is still MalformedOutputError.
   */
  answerSchema?: z.ZodType<A>;
  schemaName: string;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  pacer?: Pacer;
  /** Called while waiting (pacing) so the activity can heartbeat. */
  onWait?: (ms: number) => void;
  /** Called once per answered call with its token counts (the provider's `usage`, or an estimate). */
  onUsage?: (tokens: TokenCount) => void;
  /**
   * An answer the provider cut off at max_tokens (finish_reason "length"): what can still be used of its text (a
   * batch's complete items, llm/partial-json.ts), returned with `cutShort: true`. Without it, or when it gives
   * undefined, a cut-off answer is MalformedOutputError.
   */
  cutShort?: (content: string) => A | undefined;
  /**
   * Answers by their request's digest (requestDigest): a request answered before is answered from here, not sent
   * (no pacing, no tokens; `onUsage` is called with `remembered: true`); a valid answer is kept. A failure of
   * either is no failure of the call: it is then sent, or simply not kept.
   */
  answers?: AnswerMemory;
  /** Called with the digest of each batch entity's part of an answer kept apart (activities/model/item-memory.ts). */
  onKept?: (digest: string) => void;
}

/** Where callStructured finds and keeps answers (state/store.ts AnswerBook). */
export interface AnswerMemory {
  recall(digest: string): Promise<{ content: string; cutShort: boolean } | undefined>;
  keep(digest: string, answer: { content: string; cutShort: boolean }): Promise<void>;
  /** An answer its caller could not use after all (a verdict missing): its request is sent again next time. */
  forget(digests: readonly string[]): Promise<void>;
}

/** What a caller passes through to every call it makes: where, with which key and pacer, and its callbacks. */
export type CallOptions = Pick<
  StructuredCall<unknown>,
  'endpoint' | 'env' | 'pacer' | 'signal' | 'onWait' | 'onUsage' | 'answers' | 'onKept'
>;

/** Tokens of one call: the provider's `usage` when it gave one, else an estimate (about 4 characters a token). */
export interface TokenCount {
  promptTokens: number;
  completionTokens: number;
  estimated: boolean;
  /** The request's digest (requestDigest). */
  digest?: string;
  /** Answered from the answer memory: not sent, no tokens spent (both counts are 0). */
  remembered?: boolean;
}

/**
 * The digest of a request: where it goes (the endpoint's base URL) and its body as it goes on the wire: model id,
 * messages (prompt and evidence), output format (its schema), token limit and temperature. Equal digests are
 * requests byte for byte the same to the same service; the key is not in it, so every worker sharing a state store
 * shares the answers.
 */
export function requestDigest(baseUrl: string, body: unknown): string {
  return createHash('sha256').update(baseUrl).update('\0').update(JSON.stringify(body)).digest('hex').slice(0, 32);
}

/** The estimate used when a provider gives no `usage`: ~4 characters per token, the usual English average. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export interface StructuredResult<T> {
  output: T;
  requestId: string | null;
  usage: { promptTokens: number; completionTokens: number } | null;
  /** The answer was cut off at max_tokens and `output` is what `cutShort` made of it. */
  cutShort?: boolean;
  /** Answered from the answer memory, not sent. */
  remembered?: boolean;
  /** The request's digest, when the call has an answer memory. */
  digest?: string;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason ?? new Error('aborted'));
    });
  });
}

/**
 * One structured chat-completions call. The openai client's own retries are off: Temporal owns retries.
 * Every failure is thrown as a typed ProviderError carrying status, the bounded redacted body, rate-limit
 * headers and request id; cancellation (the activity's signal) is passed through as an abort.
 */
export async function callStructured<T, A = T>(call: StructuredCall<T, A>): Promise<StructuredResult<A>> {
  const { endpoint } = call;
  const env = call.env ?? process.env;
  const apiKey = endpoint.apiKeyEnv ? env[endpoint.apiKeyEnv] : 'no-key';
  if (endpoint.apiKeyEnv && !apiKey) {
    throw new ProviderAuthError({
      endpointId: endpoint.id,
      message: `environment variable ${endpoint.apiKeyEnv} (the key for endpoint ${endpoint.id}) is not set in the worker`,
    });
  }
  const responseFormat =
    endpoint.structuredOutput === 'json_schema'
      ? {
          type: 'json_schema' as const,
          json_schema: {
            name: call.schemaName,
            schema: z.toJSONSchema(call.schema, { io: 'output' }) as Record<string, unknown>,
            strict: false,
          },
        }
      : { type: 'json_object' as const };
  const body = {
    model: endpoint.model,
    messages: [
      { role: 'system' as const, content: call.system },
      { role: 'user' as const, content: call.user },
    ],
    response_format: responseFormat,
    max_tokens: endpoint.maxOutputTokens,
    temperature: 0,
  };
  const digest = call.answers ? requestDigest(endpoint.baseUrl, body) : undefined;
  if (call.answers && digest) {
    const kept = await call.answers.recall(digest).catch(() => undefined);
    if (kept) {
      const answer = answerOf(call, kept.content, kept.cutShort, null, null);
      if (answer) {
        call.onUsage?.({ promptTokens: 0, completionTokens: 0, estimated: false, digest, remembered: true });
        return { ...answer, remembered: true, digest };
      }
    }
  }
  const estimate = Math.ceil((call.system.length + call.user.length) / 4) + endpoint.maxOutputTokens;
  // Paced per provider account and model (what a quota belongs to), not per endpoint name.
  const pace = paceKey(endpoint);
  if (call.pacer) {
    await call.pacer.sync(pace);
    const wait = call.pacer.delayFor(pace, estimate);
    if (wait > 0) {
      call.onWait?.(wait);
      await sleep(wait, call.signal);
      call.pacer.forget(pace);
    }
  }
  // The raw error body is what tells a burst from a spent quota; keep it before the SDK parses it away.
  let errorBody: string | undefined;
  const client = new OpenAI({
    apiKey: apiKey ?? 'no-key',
    baseURL: endpoint.baseUrl,
    maxRetries: 0,
    timeout: endpoint.timeoutMs,
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(url, init);
      if (!res.ok)
        errorBody = await res
          .clone()
          .text()
          .catch(() => undefined);
      return res;
    },
  });
  let data: OpenAI.Chat.Completions.ChatCompletion;
  let headers: Headers;
  try {
    const r = await client.chat.completions.create(body, { signal: call.signal }).withResponse();
    data = r.data;
    headers = r.response.headers;
  } catch (e) {
    if (e instanceof APIUserAbortError) throw e;
    if (e instanceof APIConnectionTimeoutError) {
      throw new ProviderTimeoutError({ endpointId: endpoint.id, timeoutMs: endpoint.timeoutMs, cause: e });
    }
    if (e instanceof APIConnectionError) {
      if (call.signal?.aborted) throw e;
      throw new ProviderNetworkError({
        endpointId: endpoint.id,
        message: `could not reach ${endpoint.baseUrl}: ${e.message}`,
        cause: e,
      });
    }
    if (e instanceof APIError) {
      const body = errorBody ?? (e.error ? JSON.stringify(e.error) : e.message);
      throw providerErrorFromResponse(endpoint.id, e.status ?? null, e.headers ?? {}, body);
    }
    throw e;
  }
  await call.pacer?.observe(pace, headers);
  const requestId = requestIdOf(headers, null) ?? data.id ?? null;
  const content = data.choices?.[0]?.message?.content ?? '';
  // Counted before the answer is checked: a malformed answer spent its tokens too.
  call.onUsage?.({
    ...(data.usage
      ? { promptTokens: data.usage.prompt_tokens, completionTokens: data.usage.completion_tokens, estimated: false }
      : {
          promptTokens: estimateTokens(call.system) + estimateTokens(call.user),
          completionTokens: estimateTokens(content),
          estimated: true,
        }),
    ...(digest ? { digest } : {}),
  });
  const usage = data.usage
    ? { promptTokens: data.usage.prompt_tokens, completionTokens: data.usage.completion_tokens }
    : null;
  const cutShort = data.choices?.[0]?.finish_reason === 'length';
  const answer = answerOf(call, content, cutShort, requestId, usage);
  if (!answer) {
    if (cutShort)
      throw new MalformedOutputError({
        endpointId: endpoint.id,
        status: 200,
        body: content,
        requestId,
        issues: [`the answer was cut off at max_tokens (${endpoint.maxOutputTokens})`],
      });
    // answerOf gives undefined for a whole answer only when it is not JSON or fails its schema: say which.
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch {
      throw new MalformedOutputError({
        endpointId: endpoint.id,
        status: 200,
        body: content,
        requestId,
        issues: ['content is not JSON'],
      });
    }
    const v = (call.answerSchema ?? (call.schema as unknown as z.ZodType<A>)).safeParse(parsed);
    throw new MalformedOutputError({
      endpointId: endpoint.id,
      status: 200,
      body: content,
      requestId,
      issues: v.success
        ? ['the answer does not match its schema']
        : formatIssues(v.error, { root: '(root)', separator: '\n', limit: 20 }).split('\n'),
    });
  }
  if (!call.answers || !digest) return answer;
  await call.answers.keep(digest, { content, cutShort }).catch(() => undefined);
  return { ...answer, digest };
}

/**
 * What an answer's content gives: the output validated against its schema, or (cut off at max_tokens) what
 * `cutShort` makes of it; undefined when it gives nothing usable. Shared by a sent call and a remembered answer,
 * so both are read the same way.
 */
function answerOf<T, A>(
  call: StructuredCall<T, A>,
  content: string,
  cutShort: boolean,
  requestId: string | null,
  usage: StructuredResult<A>['usage'],
): StructuredResult<A> | undefined {
  if (cutShort) {
    const partial = call.cutShort?.(content);
    return partial === undefined ? undefined : { output: partial, requestId, usage, cutShort: true };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return undefined;
  }
  const v = (call.answerSchema ?? (call.schema as unknown as z.ZodType<A>)).safeParse(parsed);
  return v.success ? { output: v.data, requestId, usage } : undefined;
}

/** The key a provider's rate limits are kept under: base URL, model and the name of the key's variable. */
export function paceKey(endpoint: { baseUrl: string; model: string; apiKeyEnv?: string }): string {
  return `${endpoint.baseUrl}|${endpoint.model}|${endpoint.apiKeyEnv ?? ''}`;
}
