// Who may use the review page (`argus review serve`): the bind policy (loopback is open to this machine's
// users, anything else needs ARGUS_REVIEW_TOKEN), the token check, sessions with their CSRF token, and the
// request checks (Host, Origin) that keep another site from driving a steward's browser.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

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

export type BindPolicy = { ok: true; loopback: boolean; token?: string } | { ok: false; message: string };

/**
 * What binding `host` allows: loopback needs no token (one is used when set); any other address needs
 * ARGUS_REVIEW_TOKEN, or the server refuses to start with a message naming the variable.
 */
export function bindPolicy(host: string, env: NodeJS.ProcessEnv): BindPolicy {
  const loopback = isLoopback(host);
  const token = env[REVIEW_TOKEN_ENV];
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH)
    return {
      ok: false,
      message: `${REVIEW_TOKEN_ENV} is too short: use at least ${MIN_TOKEN_LENGTH} characters (for example \`openssl rand -hex 24\`)`,
    };
  if (!loopback && !token)
    return {
      ok: false,
      message:
        `refusing to serve the review page on ${host}, which is not a loopback address, without an access token: ` +
        `set ${REVIEW_TOKEN_ENV} in this server's environment (at least ${MIN_TOKEN_LENGTH} characters; stewards ` +
        'type it on the page), or bind to 127.0.0.1',
    };
  return { ok: true, loopback, ...(token ? { token } : {}) };
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time token comparison: equal-length SHA-256 digests through timingSafeEqual (no length leak). */
export function tokenMatches(given: string | undefined, expected: string): boolean {
  return timingSafeEqual(digest(given ?? ''), digest(expected)) && given !== undefined;
}

/**
 * Whether a request's Host header names this server as bound. On loopback it must be a loopback name: a page
 * elsewhere that rebinds its own DNS name to 127.0.0.1 then reaches nothing. Off loopback the token guards.
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

export interface Session {
  id: string;
  /** The CSRF token every form of this session carries. */
  csrf: string;
  /** Passed the token check (or needs none: loopback without a token). */
  authenticated: boolean;
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
  create(authenticated: boolean): Session {
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
