/**
 * Keeps secrets out of errors, logs and Temporal failure details. Provider bodies and headers are
 * evidence worth keeping (they say which limit was hit); credentials are not.
 */

const REDACTED = '[REDACTED]';

/** Header values as they come from fetch `Headers`, Node's IncomingHttpHeaders or a plain record. */
export type HeaderInput =
  | Record<string, string | string[] | number | undefined | null>
  | { forEach(callback: (value: string, key: string) => void): void }
  | null
  | undefined;

/** Lower-cased header names, multi-valued headers joined with ", ". */
export function normalizeHeaders(headers: HeaderInput): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  const bag = headers as { forEach?: unknown; get?: unknown };
  if (typeof bag.forEach === 'function' && typeof bag.get === 'function') {
    (headers as { forEach(cb: (v: string, k: string) => void): void }).forEach((v, k) => {
      out[k.toLowerCase()] = v;
    });
    return out;
  }
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
    if (v === undefined || v === null) continue;
    const value = Array.isArray(v) ? v.map(String).join(', ') : String(v);
    const key = k.toLowerCase();
    out[key] = key in out ? `${out[key]}, ${value}` : value;
  }
  return out;
}

// Order matters: whole header lines first, then key/value shapes, then free-standing tokens.
const SECRET_PATTERNS: Array<[RegExp, string]> = [
  // "Authorization: Bearer ..." / "x-api-key: ..." lines in dumped requests.
  [/^(\s*(?:proxy-)?authorization\s*:\s*).+$/gim, `$1${REDACTED}`],
  [/^(\s*(?:x-api-key|api-key|x-goog-api-key|cookie|set-cookie)\s*:\s*).+$/gim, `$1${REDACTED}`],
  // JSON / kv shapes: "api_key":"...", apiKey: '...', token=..., "authorization": "Bearer ..."
  [
    /((?<![A-Za-z0-9_-])["']?(?:api[_-]?key|x-api-key|access[_-]?token|refresh[_-]?token|auth[_-]?token|id[_-]?token|client[_-]?secret|secret[_-]?key|secret|password|passwd|authorization|bearer|token|key)["']?\s*[:=]\s*)(["']?)(?:bearer\s+)?[^"'\s&,;}<>]+\2/gi,
    `$1$2${REDACTED}$2`,
  ],
  // Secret-looking query parameters (Gemini puts its key in ?key=).
  [/([?&](?:key|api[_-]?key|apikey|access[_-]?token|token|auth|sig|signature|secret)=)[^&#\s"'<>]+/gi, `$1${REDACTED}`],
  [/\bbearer\s+[A-Za-z0-9._~+/=-]{6,}/gi, `Bearer ${REDACTED}`],
  [/\bbasic\s+[A-Za-z0-9+/=]{8,}/gi, `Basic ${REDACTED}`],
  // Provider key shapes: OpenAI/Anthropic/OpenRouter/DeepSeek (sk-...), Groq (gsk_), Google (AIza),
  // Hugging Face (hf_), xAI (xai-), GitHub (ghp_/gho_/github_pat_), Replicate (r8_).
  [/\bsk-[A-Za-z0-9_-]{12,}/g, `sk-${REDACTED}`],
  [/\b(?:gsk|hf|ghp|gho|ghs|ghu|r8)_[A-Za-z0-9]{16,}/g, REDACTED],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
  [/\bxai-[A-Za-z0-9]{20,}/g, REDACTED],
  // JWTs (three base64url segments starting with the encoded '{"').
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, REDACTED],
];

/** Replace bearer tokens, provider API keys, secret-named fields and query params with a marker. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const [re, replacement] of SECRET_PATTERNS) out = out.replace(re, replacement);
  return out;
}

/** Redacted body cut to `maxChars`, with a marker saying how much was dropped. */
export function boundedBody(body: string, maxChars = 2048): string {
  const clean = redactSecrets(body);
  if (clean.length <= maxChars) return clean;
  let cut = Math.max(0, maxChars);
  // Do not split a surrogate pair: a lone half would turn into U+FFFD downstream.
  const code = clean.charCodeAt(cut - 1);
  if (cut > 0 && code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return `${clean.slice(0, cut)}…[truncated ${clean.length - cut} chars]`;
}

const CREDENTIAL_HEADER = /^(?:(?:proxy-)?authorization|api-key|x-api-key|x-goog-api-key|cookie|set-cookie)$/;
const KEEP_HEADER =
  /^(?:(?:x-|[a-z]+-)?ratelimit-.*|retry-after.*|x-request-id|request-id|x-requestid|x-amzn-requestid|x-ms-request-id|x-ms-client-request-id|apim-request-id|x-goog-request-id|cf-ray|openai-(?:version|processing-ms|model)|anthropic-organization-id|content-type|content-length|date|server|via)$/;
// Unknown headers whose names smell of credentials are redacted too; the rest are kept bounded.
const SECRET_LIKE_HEADER = /token|secret|session|passw|credential|auth|signature|(?:^|-)key$/;
const MAX_HEADER_VALUE = 256;

/**
 * Headers safe to log: credential headers (authorization, api-key, x-api-key, cookie, ...) keep
 * their name with a redacted value; rate-limit, retry-after and request-id headers are kept as is.
 */
export function redactHeaders(headers: HeaderInput): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(normalizeHeaders(headers))) {
    if (CREDENTIAL_HEADER.test(name)) out[name] = REDACTED;
    else if (KEEP_HEADER.test(name)) out[name] = value;
    else if (SECRET_LIKE_HEADER.test(name)) out[name] = REDACTED;
    else out[name] = boundedBody(value, MAX_HEADER_VALUE);
  }
  return out;
}
