// `argus review serve`: the review page over Node's http module. Access (client/review-access.ts) is checked
// on every request before anything is read or sent; decisions go to the backend (client/review-inbox.ts) as
// exactly the ids the page listed, in the name the page knows (a steward's token, a trusted proxy's header) or,
// where it knows none, the name typed; every answer carries a strict CSP and no script.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import {
  bindPolicy,
  csrfMatches,
  hostAllowed,
  identityOf,
  originHostOf,
  proxyUserOf,
  REVIEW_TOKEN_ENV,
  sameOrigin,
  sessionCookie,
  sessionIdOf,
  SessionBook,
  tokenMatches,
  type AccessOptions,
  type BindPolicy,
  type Identity,
  type Session,
} from './review-access';
import { readStewards, REVIEW_STEWARDS_ENV, stewardOf } from './review-stewards';
import {
  ReviewRefusal,
  TASK_QUEUE_NAME,
  temporalReviewBackend,
  type ForgetRequest,
  type ForgottenDecision,
  type RecordedDecisions,
  type ReviewBackend,
} from './review-inbox';
import { REVIEW_CSS, renderInboxPage, renderLoginPage, renderMessagePage } from './review-page';
import { openReviewDetails, type ReviewDetails } from './review-details';
import { connectClient } from './connect';
import { InputError } from './sweeps';
import { defaultStateDir } from '../activities/paths';
import { openStateStore } from '../state/open';
import type { StateStore } from '../state/store';

/** Sent with every answer: no script, no framing, no sniffing, no caching of a page that lists personal data. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // Not no-referrer: under it a browser sends `Origin: null` with the page's own forms, and the Origin check fails.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
};

/** A form is small (the sweep parks at most 500 proposals); anything bigger is not the page's. */
const MAX_BODY_BYTES = 1_000_000;

export interface ReviewServerOptions {
  backend: ReviewBackend;
  host: string;
  /** 0: any free port. */
  port: number;
  /** Where ARGUS_REVIEW_TOKEN is read (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
  /** Stewards' own tokens, or a trusted proxy: the page then knows who decides. */
  access?: AccessOptions;
  /** Every decision is this person's (`--reviewer`); otherwise the page asks for a name. Only where names are typed. */
  reviewer?: string;
  log?: (line: string) => void;
  now?: () => Date;
}

export interface ReviewServer {
  url: string;
  host: string;
  port: number;
  /** Whether the page asks for a token (ARGUS_REVIEW_TOKEN or a steward's own). */
  tokenRequired: boolean;
  /** How the page knows who decides (`typed`: it does not). */
  identity: Identity;
  close(): Promise<void>;
}

class Refused extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
  }
}

function send(
  res: http.ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
  type = 'text/html; charset=utf-8',
): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type, ...headers });
  res.end(body);
}

function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    return Promise.reject(new Refused(415, 'Not a form', 'this server takes only the page’s own forms'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Refused(413, 'Too large', `a form of more than ${MAX_BODY_BYTES} bytes is not one this page sends`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

/** The decision a form asks for: the button pressed (`act`) names the decision, the scope and the sweep section. */
export function decisionOfForm(
  form: URLSearchParams,
  fixedReviewer?: string,
): { sweepId: string; proposalIds: string[]; decision: 'approved' | 'rejected'; reviewer: string; note?: string } {
  const act = form.get('act');
  if (!act)
    throw new Refused(400, 'No decision', 'press Approve or Reject: the form named no decision, nothing was sent');
  let parts: string[];
  try {
    parts = act.split('|').map(decodeURIComponent);
  } catch {
    throw new Refused(400, 'Bad form', 'the decision button’s value is malformed: nothing was sent');
  }
  const [decision, scope, s, x] = parts;
  if ((decision !== 'approved' && decision !== 'rejected') || !s || !/^\d+$/.test(s))
    throw new Refused(400, 'Bad form', 'the decision button’s value is malformed: nothing was sent');
  const sweepId = form.get(`sweep.${s}`);
  if (!sweepId) throw new Refused(400, 'Bad form', 'the form names no sweep for that decision: nothing was sent');
  let proposalIds: string[];
  if (scope === 'one' && x) proposalIds = [x];
  else if (scope === 'group' && x && /^\d+$/.test(x)) proposalIds = form.getAll(`group.${s}.${x}`);
  else if (scope === 'selected') proposalIds = form.getAll(`pick.${s}`);
  else throw new Refused(400, 'Bad form', 'the decision button’s value is malformed: nothing was sent');
  if (proposalIds.length === 0)
    throw new Refused(
      400,
      'Nothing selected',
      scope === 'selected'
        ? 'tick the proposals to decide before pressing “Approve selected” or “Reject selected”: nothing was sent'
        : 'the form listed no proposal for that decision: nothing was sent',
    );
  const reviewer = fixedReviewer ?? (form.get('reviewer') ?? '').trim();
  if (!reviewer)
    throw new Refused(400, 'Who decides?', 'type your name: every decision records who made it. Nothing was sent');
  const note = (form.get(`note.${s}`) ?? '').trim();
  return { sweepId, proposalIds, decision, reviewer, ...(note ? { note } : {}) };
}

/** Per session: what the sweeps recorded for it and what it forgot (newest first, a few), the name it last used. */
interface SessionHistory {
  recorded: RecordedDecisions[];
  forgotten?: ForgottenDecision[];
  reviewer?: string;
}

/** The decision a Forget button asks to take back: its value names the sweep and the proposal (forgetValue). */
export function forgetOfForm(form: URLSearchParams, fixedReviewer?: string): ForgetRequest {
  const value = form.get('forget');
  if (!value) throw new Refused(400, 'Nothing to forget', 'press Forget beside a decision: nothing was changed');
  let parts: string[];
  try {
    parts = value.split('|').map(decodeURIComponent);
  } catch {
    throw new Refused(400, 'Bad form', 'the Forget button’s value is malformed: nothing was changed');
  }
  const [sweepId, proposalId] = parts;
  if (parts.length !== 2 || !sweepId || !proposalId)
    throw new Refused(400, 'Bad form', 'the Forget button’s value is malformed: nothing was changed');
  const by = fixedReviewer ?? (form.get('reviewer') ?? '').trim();
  if (!by)
    throw new Refused(
      400,
      'Who forgets?',
      'type your name: forgetting a decision records who did. Nothing was changed',
    );
  return { sweepId, proposalId, by };
}

/** The bind policy of these options, or an InputError saying why the server must not start. */
function accessPolicy(
  host: string,
  env: NodeJS.ProcessEnv,
  access: AccessOptions,
  reviewer: string | undefined,
): BindPolicy & { ok: true } {
  const policy = bindPolicy(host, env, access);
  if (!policy.ok) throw new InputError(policy.message);
  if (reviewer !== undefined && identityOf(policy) !== 'typed')
    throw new InputError(
      '--reviewer would record every decision as one person, but this page knows who decides ' +
        `(${policy.stewards ? 'each steward signs in with their own token' : `the proxy names them in ${policy.proxy!.header}`}): drop --reviewer`,
    );
  return policy;
}

/** How a decision's name was known, for the server's log. */
const HOW: Record<Identity, string> = {
  typed: 'name typed on the page',
  'steward-token': 'steward token',
  proxy: 'named by the proxy',
};

/**
 * Serve the review page. Refuses (InputError) to bind off loopback without ARGUS_REVIEW_TOKEN, stewards or a
 * trusted proxy, and refuses two of them at once. On loopback without any, every local browser gets a session;
 * with a token a browser must type one first; behind a trusted proxy only the proxy's peers are served, each
 * request in the name its user header carries.
 */
export async function startReviewServer(opts: ReviewServerOptions): Promise<ReviewServer> {
  const policy = accessPolicy(opts.host, opts.env ?? process.env, opts.access ?? {}, opts.reviewer);
  const token = policy.token;
  const { stewards, proxy } = policy;
  const identity = identityOf(policy);
  const tokenRequired = token !== undefined || stewards !== undefined;
  const sessions = new SessionBook();
  const history = new Map<string, SessionHistory>();
  const log = opts.log ?? (() => undefined);
  const now = () => opts.now?.() ?? new Date();

  /** The request's session, when it has one that passed the token check. */
  const sessionOf = (req: http.IncomingMessage): Session | undefined => sessions.get(sessionIdOf(req.headers.cookie));

  const loginPage = (res: http.ServerResponse, status: number, existing?: Session, message?: string) => {
    const s = existing && !existing.authenticated ? existing : sessions.create(false);
    send(
      res,
      status,
      renderLoginPage({ csrf: s.csrf, perSteward: stewards !== undefined, ...(message ? { message } : {}) }),
      { 'Set-Cookie': sessionCookie(s.id) },
    );
  };

  /**
   * The form of a request that changes something (a decision, a forget): only from a signed-in session, in the
   * name the proxy still gives it, with the session's CSRF token. Refused (4xx, nothing changed) otherwise.
   */
  async function signedForm(
    session: Session | undefined,
    proxied: string | undefined,
    req: http.IncomingMessage,
  ): Promise<{ session: Session; form: URLSearchParams }> {
    if (!session?.authenticated)
      throw new Refused(
        401,
        'Not signed in',
        stewards
          ? 'this review page needs your steward token: open / and type it. Nothing was changed'
          : token
            ? `this review page needs its access token (${REVIEW_TOKEN_ENV}): open / and type it. Nothing was changed`
            : 'this browser has no session on the review page: open / first. Nothing was changed',
      );
    if (proxied !== undefined && session.user !== proxied)
      throw new Refused(
        403,
        'Someone else',
        `this page was opened as ${session.user ?? 'nobody'}, but the proxy now says ${proxied}: reload the page. ` +
          'Nothing was changed',
      );
    const form = await readForm(req);
    if (!csrfMatches(session, form.get('csrf') ?? undefined))
      throw new Refused(
        403,
        'Refused',
        'the form’s CSRF token does not match this session: reload the page. Nothing was changed',
      );
    return { session, form };
  }

  /** How a signed-in session's name was known, for the log. */
  const howNamed = (s: Session) =>
    s.user !== undefined ? HOW[identity] : opts.reviewer ? 'set by --reviewer' : HOW.typed;

  /** Keep what a session's last request did, for its next page (at most 1000 sessions, the oldest dropped). */
  const remember = (s: Session, next: (mine: SessionHistory) => SessionHistory) => {
    const mine = history.get(s.id) ?? { recorded: [] };
    history.delete(s.id);
    if (history.size >= 1000) history.delete(history.keys().next().value!);
    history.set(s.id, next(mine));
  };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // Behind a proxy, who sent the request comes first: nothing at all is served to a peer that is not the proxy.
    let proxied: string | undefined;
    if (proxy) {
      const header = proxy.header.toLowerCase();
      const verdict = proxyUserOf(proxy, req.socket.remoteAddress, req.headersDistinct[header]);
      if (!verdict.ok) {
        if (verdict.status === 403 && req.headersDistinct[header])
          log(`[review] refused a request from ${req.socket.remoteAddress} carrying ${proxy.header}: not the proxy`);
        throw new Refused(
          verdict.status,
          verdict.status === 403 ? 'Not through the proxy' : 'Not signed in',
          verdict.message,
        );
      }
      proxied = verdict.user;
    }
    if (!hostAllowed(req.headers.host, policy.loopback))
      throw new Refused(403, 'Wrong host', 'this review page answers only to a loopback name (127.0.0.1, localhost)');
    const url = new URL(req.url ?? '/', 'http://review.invalid');
    const route = `${req.method} ${url.pathname}`;

    if (route === 'GET /review.css') return send(res, 200, REVIEW_CSS, {}, 'text/css; charset=utf-8');

    const origin = {
      ...(req.headers as Parameters<typeof sameOrigin>[0]),
      host: originHostOf(req.headers, proxied !== undefined),
    };
    if (req.method === 'POST' && !sameOrigin(origin))
      throw new Refused(
        403,
        'Refused',
        'a form from another site (or one that hides its origin) is refused here: nothing was changed',
      );

    let session = sessionOf(req);
    if (route === 'GET /' || route === 'GET /login') {
      if (proxied !== undefined) {
        // The proxy may sign someone else in on this browser: their page is a new session, in their name.
        if (session?.user !== proxied) {
          if (session) sessions.drop(session.id);
          session = sessions.create(true, proxied);
        }
      } else if (!session?.authenticated) {
        if (tokenRequired) {
          // 401 with the token form: a request without a token sees nothing of the sweeps.
          return loginPage(res, 401, session);
        }
        session = sessions.create(true);
      }
      if (url.pathname === '/login')
        return send(res, 303, '', { Location: '/', 'Set-Cookie': sessionCookie(session.id) });
      const inbox = await opts.backend.inbox();
      const seen = history.get(session.id);
      return send(
        res,
        200,
        renderInboxPage({
          inbox,
          csrf: session.csrf,
          now: now(),
          ...(session.user !== undefined
            ? { signedIn: { name: session.user, by: identity === 'proxy' ? 'proxy' : 'steward-token' } }
            : {}),
          ...(token ? { sharedToken: true } : {}),
          ...(opts.reviewer ? { reviewer: opts.reviewer } : {}),
          ...(seen ? { recorded: seen.recorded } : {}),
          ...(seen?.forgotten ? { forgotten: seen.forgotten } : {}),
          ...(opts.backend.forget ? { canForget: true } : {}),
          ...(seen?.reviewer ? { lastReviewer: seen.reviewer } : {}),
        }),
        { 'Set-Cookie': sessionCookie(session.id) },
      );
    }

    if (route === 'POST /login') {
      const form = await readForm(req);
      if (!session || !csrfMatches(session, form.get('csrf') ?? undefined))
        throw new Refused(
          403,
          'Refused',
          'the form’s CSRF token does not match this session: reload the page and try again',
        );
      if (!tokenRequired) return send(res, 303, '', { Location: '/' });
      const given = form.get('token') ?? undefined;
      let user: string | undefined;
      if (stewards) {
        const steward = stewardOf(stewards, given);
        if (!steward) {
          log('[review] a token that is no steward’s was typed');
          return loginPage(res, 401, session, 'That is no steward’s token: the page stays closed.');
        }
        user = steward.name;
        log(`[review] ${user} signed in with their steward token`);
      } else if (!tokenMatches(given, token!)) {
        log('[review] a wrong access token was typed');
        return loginPage(res, 401, session, 'That is not the access token: the page stays closed.');
      }
      // A new session id at login: an id planted before it is worth nothing after it.
      sessions.drop(session.id);
      const fresh = sessions.create(true, user);
      return send(res, 303, '', { Location: '/', 'Set-Cookie': sessionCookie(fresh.id) });
    }

    if (route === 'POST /logout') {
      const form = await readForm(req);
      if (!session || !csrfMatches(session, form.get('csrf') ?? undefined))
        throw new Refused(
          403,
          'Refused',
          'the form’s CSRF token does not match this session: reload the page and try again',
        );
      // Behind the proxy, signing out is the proxy's: this session would only come back on the next page.
      if (tokenRequired) sessions.drop(session.id);
      return send(res, 303, '', { Location: '/' });
    }

    if (route === 'POST /decide') {
      const { session: signed, form } = await signedForm(session, proxied, req);
      // A known name is the decision's whatever the form says; only where none is known does the typed one count.
      const request = decisionOfForm(form, signed.user ?? opts.reviewer);
      let recorded: RecordedDecisions;
      try {
        recorded = await opts.backend.decide(request);
      } catch (e) {
        if (e instanceof ReviewRefusal) {
          log(
            `[review] refused ${request.decision} of ${request.proposalIds.length} in ${request.sweepId}: ${e.message}`,
          );
          throw new Refused(e.status, 'Refused', e.message);
        }
        throw e;
      }
      const how = howNamed(signed);
      log(
        `[review] ${recorded.reviewer} (${how}) ${recorded.decision} ${recorded.accepted} of ${recorded.sweepId} ` +
          `(${recorded.stillPending} still pending)`,
      );
      remember(signed, (mine) => ({
        ...mine,
        recorded: [recorded, ...mine.recorded].slice(0, 10),
        reviewer: recorded.reviewer,
      }));
      return send(res, 303, '', { Location: '/' });
    }

    if (route === 'POST /forget') {
      const { session: signed, form } = await signedForm(session, proxied, req);
      if (!opts.backend.forget)
        throw new Refused(
          404,
          'Not here',
          'this server reads no state store, so it forgets no decision: use `argus review forget`. Nothing was changed',
        );
      // Who forgets is known as who decides is: the session's name, --reviewer, or the name typed.
      const request = forgetOfForm(form, signed.user ?? opts.reviewer);
      let forgotten: ForgottenDecision;
      try {
        forgotten = await opts.backend.forget(request);
      } catch (e) {
        if (e instanceof ReviewRefusal) {
          log(`[review] refused to forget ${request.proposalId} in ${request.sweepId}: ${e.message}`);
          throw new Refused(e.status, 'Refused', e.message);
        }
        throw e;
      }
      log(
        `[review] ${forgotten.by} (${howNamed(signed)}) forgot ${forgotten.reviewer ?? 'a person'}'s decision on ` +
          `${forgotten.proposalId} in the memory of ${forgotten.catalog} (sweep ${forgotten.sweepId}): ` +
          `${forgotten.forgotten.length} ${forgotten.forgotten.length === 1 ? 'entity is' : 'entities are'} judged afresh ` +
          `next sweep: ${forgotten.forgotten.join(', ')}`,
      );
      remember(signed, (mine) => ({
        ...mine,
        forgotten: [forgotten, ...(mine.forgotten ?? [])].slice(0, 10),
        reviewer: forgotten.by,
      }));
      return send(res, 303, '', { Location: '/' });
    }

    if (['/', '/login', '/logout', '/decide', '/forget', '/review.css'].includes(url.pathname))
      throw new Refused(405, 'Not allowed', `${req.method} is not how this page is used`);
    throw new Refused(404, 'Not found', `there is no ${url.pathname} here`);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (res.headersSent) return res.destroy();
      if (e instanceof Refused) {
        const headers: Record<string, string> = e.status === 405 ? { Allow: 'GET, POST' } : {};
        return send(res, e.status, renderMessagePage({ title: e.title, message: e.message }), headers);
      }
      log(`[review] error: ${(e as Error).stack ?? String(e)}`);
      send(
        res,
        502,
        renderMessagePage({
          title: 'Temporal did not answer',
          message: `the sweeps could not be read or decided (${((e as Error).message ?? String(e)).slice(0, 300)}). Nothing was changed; reload to try again.`,
        }),
      );
    });
  });
  server.requestTimeout = 60_000;
  server.headersTimeout = 20_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE' || e.code === 'EADDRNOTAVAIL' || e.code === 'EACCES'
          ? new InputError(`cannot serve the review page on ${opts.host}:${opts.port}: ${e.code}`)
          : e,
      ),
    );
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shown = opts.host.includes(':') && !opts.host.startsWith('[') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${shown}:${port}/`,
    host: opts.host,
    port,
    tokenRequired,
    identity,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface ServeOptions {
  host: string;
  port: string;
  reviewer?: string;
  stewards?: string;
  trustedUserHeader?: string;
  trustedProxy?: string[];
  stateDir: string;
  taskQueue?: string;
}

/** One line for the start message: how stewards get in and how the page knows their names. */
function accessLine(policy: BindPolicy & { ok: true }, stewardsFile: string | undefined): string {
  if (policy.stewards)
    return `${policy.stewards.length} steward${policy.stewards.length === 1 ? '' : 's'} from ${stewardsFile}, each signing in with their own token`;
  if (policy.proxy) return `names from ${policy.proxy.header}, believed only from ${policy.proxy.peers.join(', ')}`;
  return policy.token ? 'access token required; names are typed' : 'loopback only, no token';
}

async function serve(o: ServeOptions): Promise<void> {
  if (!/^\d+$/.test(o.port) || Number(o.port) > 65535)
    throw new InputError(`--port must be a port number, got "${o.port}"`);
  if (o.taskQueue !== undefined && !TASK_QUEUE_NAME.test(o.taskQueue))
    throw new InputError(`--task-queue ${JSON.stringify(o.taskQueue)} has characters a visibility filter cannot hold`);
  if (o.reviewer !== undefined && (!o.reviewer.trim() || o.reviewer.length > 200))
    throw new InputError('--reviewer must name the person deciding (1 to 200 characters)');
  // Checked before anything connects: a bad stewards file, or off loopback no way of letting stewards in, and the
  // server does not start at all.
  const stewardsFile = o.stewards ?? (process.env[REVIEW_STEWARDS_ENV] || undefined);
  const access: AccessOptions = {
    ...(stewardsFile !== undefined ? { stewards: readStewards(stewardsFile) } : {}),
    ...(o.trustedUserHeader !== undefined ? { trustedUserHeader: o.trustedUserHeader } : {}),
    trustedProxies: o.trustedProxy ?? [],
  };
  const reviewer = o.reviewer?.trim();
  const policy = accessPolicy(o.host, process.env, access, reviewer);
  const err = (line: string) => process.stderr.write(line + '\n');
  const c = await connectClient();
  let details: ReviewDetails | undefined;
  try {
    details = await openReviewDetails({ stateDir: o.stateDir, log: err });
  } catch (e) {
    err(`[review] evidence and catalog text will not be shown: ${(e as Error).message}`);
  }
  // The catalogs' memory, where people's decisions stand for their shape: listed on the page, and forgotten from it.
  let state: StateStore | undefined;
  try {
    state = await openStateStore({
      stateDir: o.stateDir,
      ...(process.env.ARGUS_STATE_URL ? { stateUrl: process.env.ARGUS_STATE_URL } : {}),
      ...(process.env.ARGUS_STATE_SCHEMA ? { stateSchema: process.env.ARGUS_STATE_SCHEMA } : {}),
    });
  } catch (e) {
    err(`[review] the decisions that stand for their shape will not be listed: ${(e as Error).message}`);
  }
  let server: ReviewServer | undefined;
  try {
    const backend = temporalReviewBackend({
      client: c.client,
      ...(details ? { details } : {}),
      ...(state ? { state } : {}),
      log: err,
      ...(o.taskQueue ? { taskQueue: o.taskQueue } : {}),
    });
    server = await startReviewServer({
      backend,
      host: o.host,
      port: Number(o.port),
      access,
      ...(reviewer ? { reviewer } : {}),
      log: err,
    });
    process.stdout.write(
      `ARGUS review page on ${server.url} (${accessLine(policy, stewardsFile)}; ` +
        `sweeps on ${c.address}, namespace ${c.namespace}). Ctrl-C stops it.\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  } finally {
    await server?.close();
    await details?.close();
    await state?.close();
    await c.close();
  }
}

/** Register `argus review serve` in the `review` command group. */
export function addReviewServeCommand(review: Command): void {
  review
    .command('serve')
    .description(
      'Serve a review page for data stewards: approve or reject what waits for people across running sweeps.',
    )
    .option(
      '--host <host>',
      'address to bind; off loopback needs ARGUS_REVIEW_TOKEN, --stewards or a trusted proxy',
      '127.0.0.1',
    )
    .option('--port <port>', 'port (0: any free one)', '8377')
    .option(
      '--stewards <file>',
      `who may decide: a file of "<name> sha256:<token digest>" lines (default: $${REVIEW_STEWARDS_ENV}); each signs in with their own token`,
    )
    .option(
      '--trusted-user-header <header>',
      'behind an authenticating proxy: the header it names the signed-in user in, e.g. X-Forwarded-User',
    )
    .option(
      '--trusted-proxy <address>',
      "the proxy's IP address, the only TCP peer served (repeat for more)",
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .option(
      '--reviewer <name>',
      'record every decision as this person (else the page asks for a name); not with --stewards or a proxy',
    )
    .option(
      '--state-dir <dir>',
      "the workers' ARGUS state folder, for evidence and catalog text (the PostgreSQL store when ARGUS_STATE_URL is set)",
      defaultStateDir(),
    )
    .option('--task-queue <queue>', 'only sweeps on this task queue')
    .addHelpText(
      'after',
      '\nAccess: on loopback (the default) anyone on this machine may decide, under the name they type. Elsewhere ' +
        'choose one: ARGUS_REVIEW_TOKEN (one shared token; names are typed, and recorded as typed), a stewards file ' +
        "(each steward's own token; the page records who signed in), or an authenticating proxy (its user header, " +
        'believed only from --trusted-proxy). Off loopback the server refuses to start with none of them; anywhere, ' +
        'with two.\n\n' +
        'Examples:\n  argus review serve\n' +
        '  ARGUS_REVIEW_TOKEN=$(openssl rand -hex 24) argus review serve --host 0.0.0.0 --port 8377\n' +
        "  argus review steward-token dana >> stewards.txt   # prints dana's token once; keep the line\n" +
        '  argus review serve --host 0.0.0.0 --stewards stewards.txt\n' +
        '  argus review serve --trusted-user-header X-Forwarded-User --trusted-proxy 127.0.0.3',
    )
    .action(async (o: ServeOptions) => serve(o));
}
