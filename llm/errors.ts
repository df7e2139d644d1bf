/**
 * The errors the llm client throws. An HTTP answer is classified once, here, into one typed error
 * that carries the evidence (status, bounded redacted body, rate-limit headers, request id, delay).
 * llm/ never retries: activities/ turns these into ApplicationFailures and Temporal owns retries.
 */
import { classifyProviderResponse, type ThrottleClassification, type ThrottleWindow } from './classify';
import { boundedBody, normalizeHeaders, redactHeaders, redactSecrets, type HeaderInput } from './redact';

export type ProviderErrorKind =
  'burst' | 'exhausted' | 'server' | 'auth' | 'bad_request' | 'malformed_output' | 'timeout' | 'network';

/** A value that survives JSON round trips unchanged (what Temporal failure details hold). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type ProviderErrorDetails = { [key: string]: JsonValue };

/** Raw material for an error; the constructor bounds and redacts body, headers and message. */
export interface ProviderErrorInit {
  endpointId: string;
  status?: number | null;
  body?: string | null;
  headers?: HeaderInput;
  requestId?: string | null;
  retryAfterSeconds?: number | null;
  classification?: ThrottleClassification;
  /** Overrides the built message (it is redacted all the same). */
  message?: string;
  cause?: unknown;
}

const BODY_MAX = 2048;
const MESSAGE_MAX = 1200;
const IN_MESSAGE_MAX = 400;

const KIND_TEXT: Record<ProviderErrorKind, string> = {
  burst: 'rate limited (burst: wait and retry)',
  exhausted: 'budget exhausted (stop using this endpoint for the sweep)',
  server: 'server error',
  auth: 'authentication or permission refused',
  bad_request: 'request rejected',
  malformed_output: 'output did not match the expected structure',
  timeout: 'timed out',
  network: 'network failure',
};

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function finiteOrNull(n: number | null | undefined): number | null {
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
}

function buildMessage(kind: ProviderErrorKind, init: ProviderErrorInit, body: string): string {
  const status = init.status === undefined || init.status === null ? '' : ` HTTP ${init.status}`;
  let text = `[${init.endpointId}]${status} ${KIND_TEXT[kind]}`;
  if (init.classification) text += ` — ${init.classification.reason}`;
  // The provider's own words are the evidence that tells a burst from a spent quota: keep them.
  const said = init.classification?.providerMessage ?? (body || undefined);
  if (said) text += ` — provider said: ${oneLine(said, IN_MESSAGE_MAX)}`;
  return text;
}

function classificationDetails(c: ThrottleClassification): ProviderErrorDetails {
  const out: ProviderErrorDetails = {
    label: c.label,
    retryAfterSeconds: finiteOrNull(c.retryAfterSeconds),
    window: c.window,
    reason: c.reason,
  };
  if (c.limit !== undefined) out.limit = c.limit;
  if (c.used !== undefined) out.used = c.used;
  if (c.requested !== undefined) out.requested = c.requested;
  if (c.resetAt !== undefined) out.resetAt = c.resetAt;
  if (c.providerMessage !== undefined) out.providerMessage = c.providerMessage;
  return out;
}

/** Base of every llm/ failure: `kind` says which; fields hold the bounded, redacted evidence. */
const NON_RETRYABLE_KINDS: ReadonlySet<ProviderErrorKind> = new Set(['exhausted', 'auth', 'bad_request']);

export class ProviderError extends Error {
  override readonly name: string = 'ProviderError';
  readonly kind: ProviderErrorKind;
  readonly endpointId: string;
  readonly status: number | null;
  readonly body: string;
  readonly headers: Record<string, string>;
  readonly requestId: string | null;
  readonly retryAfterSeconds: number | null;
  readonly classification?: ThrottleClassification;

  constructor(kind: ProviderErrorKind, init: ProviderErrorInit) {
    const body = boundedBody(init.body ?? '', BODY_MAX);
    const message = redactSecrets(oneLine(init.message ?? buildMessage(kind, init, body), MESSAGE_MAX));
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = kind;
    this.endpointId = init.endpointId;
    this.status = init.status ?? null;
    this.body = body;
    this.headers = redactHeaders(init.headers);
    this.requestId = init.requestId ?? null;
    this.retryAfterSeconds = finiteOrNull(init.retryAfterSeconds ?? init.classification?.retryAfterSeconds);
    if (init.classification) this.classification = init.classification;
  }

  /**
   * Whether waiting and asking again can help: not for a spent quota or credit, a refused key or a request the
   * provider rejects as malformed (Temporal must not retry those); for bursts, 5xx, timeouts, network errors and
   * malformed output it can.
   */
  get retryable(): boolean {
    return !NON_RETRYABLE_KINDS.has(this.kind);
  }

  /** Plain JSON-safe summary for Temporal failure details; holds no credentials. */
  toDetails(): ProviderErrorDetails {
    const out: ProviderErrorDetails = {
      name: this.name,
      kind: this.kind,
      message: this.message,
      endpointId: this.endpointId,
      status: this.status,
      requestId: this.requestId,
      retryAfterSeconds: this.retryAfterSeconds,
      body: this.body,
      headers: { ...this.headers },
    };
    if (this.classification) out.classification = classificationDetails(this.classification);
    return out;
  }
}

/** Short-window throttle (per second/minute, concurrency, unnamed 429): retry the same endpoint after `retryAfterSeconds`. */
export class ProviderBurstError extends ProviderError {
  override readonly name: string = 'ProviderBurstError';
  constructor(init: ProviderErrorInit) {
    super('burst', init);
  }
}

/**
 * The endpoint's budget is spent for this sweep (per-day/month quota, credits, billing, suspension,
 * or an entitlement the account lacks: a plan, tier, payment or feature the request requires).
 * Do not retry it; rotate or stop. Carries the window, figures and the provider's message.
 */
export class BudgetExhaustedError extends ProviderError {
  override readonly name: string = 'BudgetExhaustedError';
  readonly window: ThrottleWindow | null;
  readonly limit: number | null;
  readonly used: number | null;
  readonly requested: number | null;
  readonly resetAt: string | null;
  readonly providerMessage: string | null;

  constructor(init: ProviderErrorInit) {
    super('exhausted', init);
    const c = init.classification;
    this.window = c?.window ?? null;
    this.limit = finiteOrNull(c?.limit);
    this.used = finiteOrNull(c?.used);
    this.requested = finiteOrNull(c?.requested);
    this.resetAt = c?.resetAt ?? null;
    this.providerMessage = c?.providerMessage ?? null;
  }

  override toDetails(): ProviderErrorDetails {
    return {
      ...super.toDetails(),
      window: this.window,
      limit: this.limit,
      used: this.used,
      requested: this.requested,
      resetAt: this.resetAt,
      providerMessage: this.providerMessage,
    };
  }
}

/** 5xx or 408 with no quota evidence: the same endpoint may answer next time; not a reason to rotate. */
export class ProviderServerError extends ProviderError {
  override readonly name: string = 'ProviderServerError';
  constructor(init: ProviderErrorInit) {
    super('server', init);
  }
}

/** 401/403 refusing the credentials or the model: retrying will not help; fix the configuration. */
export class ProviderAuthError extends ProviderError {
  override readonly name: string = 'ProviderAuthError';
  constructor(init: ProviderErrorInit) {
    super('auth', init);
  }
}

/** Other 4xx, and 429/413 saying the request is too large: this request will not succeed as sent. */
export class ProviderBadRequestError extends ProviderError {
  override readonly name: string = 'ProviderBadRequestError';
  constructor(init: ProviderErrorInit) {
    super('bad_request', init);
  }
}

/** The model answered but not in the requested structure; `body` holds the bounded raw output. */
export class MalformedOutputError extends ProviderError {
  override readonly name: string = 'MalformedOutputError';
  readonly issues: string[];
  constructor(init: ProviderErrorInit & { issues?: string[] }) {
    super('malformed_output', init);
    this.issues = (init.issues ?? []).slice(0, 20).map((i) => redactSecrets(oneLine(i, 300)));
  }

  override toDetails(): ProviderErrorDetails {
    return { ...super.toDetails(), issues: [...this.issues] };
  }
}

/** No answer within `timeoutMs`; the provider may still have processed (and billed) the call. */
export class ProviderTimeoutError extends ProviderError {
  override readonly name: string = 'ProviderTimeoutError';
  readonly timeoutMs: number | null;
  constructor(init: ProviderErrorInit & { timeoutMs?: number | null }) {
    super('timeout', init);
    this.timeoutMs = finiteOrNull(init.timeoutMs);
  }

  override toDetails(): ProviderErrorDetails {
    return { ...super.toDetails(), timeoutMs: this.timeoutMs };
  }
}

/** The connection failed before any HTTP answer (DNS, reset, refused); `status` is null. */
export class ProviderNetworkError extends ProviderError {
  override readonly name: string = 'ProviderNetworkError';
  constructor(init: ProviderErrorInit) {
    super('network', init);
  }
}

const REQUEST_ID_HEADERS = [
  'x-request-id',
  'request-id',
  'x-requestid',
  'x-ms-request-id',
  'apim-request-id',
  'x-amzn-requestid',
  'x-goog-request-id',
  'cf-ray',
];

/** The provider's request id: from the usual headers, else a `request_id` in the JSON body. */
export function requestIdOf(headers: HeaderInput, body: string | null | undefined): string | null {
  const h = normalizeHeaders(headers);
  for (const name of REQUEST_ID_HEADERS) {
    const v = h[name]?.trim();
    if (v) return v.slice(0, 200);
  }
  const m = /"(?:request_id|requestId|request-id)"\s*:\s*"([^"]{1,200})"/.exec(body ?? '');
  return m?.[1] ?? null;
}

/**
 * Build the typed error for a failed HTTP answer: EXHAUSTED → BudgetExhaustedError, BURST →
 * ProviderBurstError; otherwise 408/5xx → server, 401/403 → auth, other 4xx → bad request.
 */
export function providerErrorFromResponse(
  endpointId: string,
  status: number | null,
  headers: HeaderInput,
  bodyText: string | null | undefined,
  now: Date = new Date(),
): ProviderError {
  const classification = classifyProviderResponse({ status, headers, body: bodyText }, now);
  const init: ProviderErrorInit = {
    endpointId,
    status,
    headers,
    body: bodyText ?? '',
    requestId: requestIdOf(headers, bodyText),
    retryAfterSeconds: classification.retryAfterSeconds,
    classification,
  };
  if (classification.label === 'EXHAUSTED') return new BudgetExhaustedError(init);
  if (classification.label === 'BURST') return new ProviderBurstError(init);
  const s = status ?? 429;
  if (s === 401 || s === 403) return new ProviderAuthError(init);
  // A non-error status reaching this function means the answer was unusable: a server fault.
  if (s === 408 || s >= 500 || s < 400) return new ProviderServerError(init);
  return new ProviderBadRequestError(init);
}
