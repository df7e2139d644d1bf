// Who may use the review page (`argus review serve`) and who decides there: the bind policy (loopback is open to
// this machine's users, anything else needs a way to let people in), the four ways a server knows who decides (a
// typed name on open loopback or behind the shared ARGUS_REVIEW_TOKEN, a steward's own token, an authenticating
// proxy's user header), sessions with their CSRF token, and the request checks (Host, Origin, the TCP peer) that
// keep another site, or another host, from deciding in a steward's name.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Steward } from './review-stewards';

/** The environment variable holding the review page's access token (the server's environment, never Temporal). */
export const REVIEW_TOKEN_ENV = 'ARGUS_REVIEW_TOKEN';
/** A token shorter than this is refused at start: it stands alone between the network and the sweeps' decisions. */
export const MIN_TOKEN_LENGTH = 16;

/** Whether `host` (a bind address or a Host header's name) means this machine only. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

/**
 * An IP address in the one form Node reports a TCP peer in (`req.socket.remoteAddress`): IPv6 compressed and
 * lower case, an IPv4-mapped IPv6 address as plain IPv4. Undefined when `address` is not an IP address.
 */
export function canonicalAddress(address: string | undefined): string | undefined {
  const a = (address ?? '')
    .trim()
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  if (isIP(a) === 4) return a;
  if (isIP(a) !== 6) return undefined;
  const v6 = new URL(`http://[${a}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v6)?.[1];
  if (mapped) return mapped;
  // The URL parser writes a mapped IPv4 address in hex (::ffff:7f00:1): give it back in dotted form.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
  if (hex) {
    const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  return v6;
}

/** An authenticating proxy whose user header the page believes, from these TCP peers only. */
export interface TrustedProxy {
  /** The header as the operator spelled it (for messages); looked up lower-cased. */
  header: string;
  /** Canonical addresses (canonicalAddress). */
  peers: string[];
}

/** How the page knows who decides; `typed` means it does not: the steward types a name. */
export type Identity = 'typed' | 'steward-token' | 'proxy';

export type BindPolicy =
  | { ok: true; loopback: boolean; token?: string; stewards?: readonly Steward[]; proxy?: TrustedProxy }
  | { ok: false; message: string };

/** What, besides the bind address and ARGUS_REVIEW_TOKEN, says who may decide (the server's flags). */
export interface AccessOptions {
  /** Each steward's name and token digest (the stewards file, read at start). */
  stewards?: readonly Steward[];
  /** `--trusted-user-header`: the header an authenticating proxy names its signed-in user in. */
  trustedUserHeader?: string;
  /** `--trusted-proxy`: the proxy's addresses, the only TCP peers whose user header counts. */
  trustedProxies?: readonly string[];
}

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
/** Headers the page reads for something else, or that name no user: never a user header. */
const NOT_A_USER_HEADER = new Set([
  'host',
  'cookie',
  'origin',
  'referer',
  'content-type',
  'content-length',
  'x-forwarded-for',
  'x-forwarded-host',
  'sec-fetch-site',
]);

function trustedProxyOf(access: AccessOptions): TrustedProxy | string | undefined {
  const header = access.trustedUserHeader?.trim();
  const given = access.trustedProxies ?? [];
  if (header === undefined && given.length === 0) return undefined;
  if (!header || given.length === 0)
    return "--trusted-user-header and --trusted-proxy go together: the header is believed only from the proxy's address";
  if (!HEADER_NAME.test(header) || NOT_A_USER_HEADER.has(header.toLowerCase()))
    return `--trusted-user-header ${JSON.stringify(header)} cannot name a user: give the header your proxy sets, e.g. X-Forwarded-User`;
  const peers: string[] = [];
  for (const p of given) {
    const a = canonicalAddress(p);
    if (!a)
      return `--trusted-proxy ${JSON.stringify(p)} is not an IP address: give the address the proxy connects from (a name would make DNS the judge of who decides)`;
    if (!peers.includes(a)) peers.push(a);
  }
  return { header, peers };
}

/**
 * What binding `host` allows, and how the page will know who decides. Loopback needs nothing (a token or a
 * stewards file is used when given); any other address needs ARGUS_REVIEW_TOKEN, a stewards file or a trusted
 * proxy, or the server refuses to start with a message naming them. Two ways of knowing who decides at once are
 * refused: which one wins would be a guess.
 */
export function bindPolicy(host: string, env: NodeJS.ProcessEnv, access: AccessOptions = {}): BindPolicy {
  const loopback = isLoopback(host);
  const token = env[REVIEW_TOKEN_ENV];
  const proxy = trustedProxyOf(access);
  if (typeof proxy === 'string') return { ok: false, message: proxy };
  const stewards = access.stewards;
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH)
    return {
      ok: false,
      message: `${REVIEW_TOKEN_ENV} is too short: use at least ${MIN_TOKEN_LENGTH} characters (for example \`openssl rand -hex 24\`)`,
    };
  if (stewards && stewards.length === 0) return { ok: false, message: 'the stewards file names no steward' };
  const ways = [
    ...(token ? [REVIEW_TOKEN_ENV] : []),
    ...(stewards ? ['a stewards file'] : []),
    ...(proxy ? ['--trusted-user-header'] : []),
  ];
  if (ways.length > 1)
    return {
      ok: false,
      message:
        `${ways.join(' and ')} are set together: choose one way of letting stewards in (${REVIEW_TOKEN_ENV}: one shared ` +
        'token, names typed; a stewards file: a token each; a trusted proxy: its user header)',
    };
  if (!loopback && ways.length === 0)
    return {
      ok: false,
      message:
        `refusing to serve the review page on ${host}, which is not a loopback address, without an access token: ` +
        `set ${REVIEW_TOKEN_ENV} in this server's environment (at least ${MIN_TOKEN_LENGTH} characters; stewards ` +
        'type it on the page), give each steward a token of their own with --stewards <file>, serve it behind an ' +
        'authenticating proxy with --trusted-user-header and --trusted-proxy, or bind to 127.0.0.1',
    };
  return {
    ok: true,
    loopback,
    ...(token ? { token } : {}),
    ...(stewards ? { stewards } : {}),
    ...(proxy ? { proxy } : {}),
  };
}

/** How a server under `policy` knows who decides. */
export function identityOf(policy: BindPolicy & { ok: true }): Identity {
  return policy.stewards ? 'steward-token' : policy.proxy ? 'proxy' : 'typed';
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time token comparison: equal-length SHA-256 digests through timingSafeEqual (no length leak). */
export function tokenMatches(given: string | undefined, expected: string): boolean {
  return timingSafeEqual(digest(given ?? ''), digest(expected)) && given !== undefined;
}

/**
 * Whether a request's Host header names this server as bound. On loopback it must be a loopback name: a page
 * elsewhere that rebinds its own DNS name to 127.0.0.1 then reaches nothing. Off loopback the token (or the
 * proxy's peer check) guards.
 */
export function hostAllowed(hostHeader: string | undefined, loopbackBind: boolean): boolean {
  if (!hostHeader) return false;
  if (!loopbackBind) return true;
  const name = /^\[[^\]]+\]|^[^:]+/.exec(hostHeader)?.[0];
  return name !== undefined && isLoopback(name);
}

/**
 * Whether a state-changing request comes from this page: a browser's Origin (when it sends one) must be this
 * host, and a fetch a browser marks cross-site is refused whatever it carries.
 */
export function sameOrigin(headers: { origin?: string; host?: string; 'sec-fetch-site'?: string }): boolean {
  if (headers['sec-fetch-site'] === 'cross-site') return false;
  if (!headers.origin) return true;
  try {
    return new URL(headers.origin).host === headers.host;
  } catch {
    return false;
  }
}

/**
 * The host a form's Origin must name: the Host header; from a trusted proxy, the X-Forwarded-Host it sets when
 * there is one (a proxy on this machine sends a loopback Host, which the Host check needs, and the browser's
 * Origin names the proxy's host). Only the proxy's own value counts: the last of a list.
 */
export function originHostOf(
  headers: { host?: string; 'x-forwarded-host'?: string | string[] },
  fromTrustedProxy: boolean,
): string | undefined {
  const forwarded = headers['x-forwarded-host'];
  const last = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').pop()?.trim();
  return fromTrustedProxy && last ? last : headers.host;
}

export type ProxyVerdict = { ok: true; user: string } | { ok: false; status: 401 | 403; message: string };

/** A name from a proxy is 1 to 200 characters, none of them a control character. */
const PROXY_USER = /^\P{Cc}{1,200}$/u;

/**
 * Who the proxy says sent a request (`values`: every value of its user header, from `req.headersDistinct`).
 * Only a request whose TCP peer is one of the proxy's addresses is served at all; from any other peer it is
 * refused, and when it carries the header it is told that the header was not believed. Forwarded-for headers are
 * never consulted: whoever sends a request can write them.
 */
export function proxyUserOf(proxy: TrustedProxy, peer: string | undefined, values: string[] | undefined): ProxyVerdict {
  const from = canonicalAddress(peer) ?? peer ?? 'an unknown address';
  const h = proxy.header;
  if (!proxy.peers.includes(from))
    return {
      ok: false,
      status: 403,
      message: values?.length
        ? `this request carries ${h} but comes from ${from}, which is not the trusted proxy: ${h} is believed only ` +
          `from ${proxy.peers.join(', ')}. Nothing was read or changed`
        : `this review page is served only through its authenticating proxy (${proxy.peers.join(', ')}), and ` +
          `${from} is not it: open the page through the proxy. Nothing was read or changed`,
    };
  if (!values?.length || values.every((v) => !v.trim()))
    return {
      ok: false,
      status: 401,
      message: `the proxy did not say who you are (no ${h} header): sign in through the proxy. Nothing was read or changed`,
    };
  if (values.length > 1)
    return {
      ok: false,
      status: 401,
      message:
        `the proxy sent ${h} ${values.length} times, so who you are is not known: the proxy must replace the ` +
        'header a browser sends, not add to it. Nothing was read or changed',
    };
  const user = values[0]!.trim();
  if (!PROXY_USER.test(user))
    return {
      ok: false,
      status: 401,
      message: `the proxy's ${h} is not a name (1 to 200 characters, no control characters). Nothing was read or changed`,
    };
  return { ok: true, user };
}

export interface Session {
  id: string;
  /** The CSRF token every form of this session carries. */
  csrf: string;
  /** Passed the token check (or needs none: loopback without a token). */
  authenticated: boolean;
  /** Who this session is, when the page knows it (a steward's token, the proxy's header); else names are typed. */
  user?: string;
  lastSeen: number;
}

/** Sessions of the review page, in memory, idle ones expiring; bounded so unauthenticated visits cannot grow it. */
export class SessionBook {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly opts: { idleMs?: number; max?: number; now?: () => number } = {}) {}

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /** A new session with a fresh id and CSRF token (a login gets a new one: no id chosen before it survives it). */
  create(authenticated: boolean, user?: string): Session {
    const max = this.opts.max ?? 10_000;
    while (this.sessions.size >= max) {
      // Maps iterate in insertion order and `get` re-inserts: the first is the one idle longest.
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    const s: Session = {
      id: randomBytes(32).toString('base64url'),
      csrf: randomBytes(32).toString('base64url'),
      authenticated,
      ...(user !== undefined ? { user } : {}),
      lastSeen: this.now(),
    };
    this.sessions.set(s.id, s);
    return s;
  }

  /** The live session of a cookie value, if any; seeing it renews its idle time. */
  get(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (this.now() - s.lastSeen > (this.opts.idleMs ?? 8 * 3600_000)) {
      this.sessions.delete(id);
      return undefined;
    }
    s.lastSeen = this.now();
    this.sessions.delete(id);
    this.sessions.set(id, s);
    return s;
  }

  drop(id: string): void {
    this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }
}

/** Whether a form's CSRF token is its session's (constant time). */
export function csrfMatches(session: Session, given: string | undefined): boolean {
  return tokenMatches(given, session.csrf);
}

/** The session cookie's name and attributes: never readable by script, never sent by another site. */
export const SESSION_COOKIE = 'argus_review';
export const sessionCookie = (id: string): string => `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/`;

/** The session id a Cookie header carries. */
export function sessionIdOf(cookieHeader: string | undefined): string | undefined {
  for (const part of (cookieHeader ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === SESSION_COOKIE) return v.join('=');
  }
  return undefined;
}
