// The review server's HTTP and access rules over a fake backend (no Temporal): headers, sessions, the token,
// CSRF, Host and Origin checks, and that a decision sends exactly the ids the page listed — or nothing. Who decides:
// stewards' own tokens, and a trusted proxy's header told apart by real TCP peers (127.0.0.3 plays the proxy, the
// test's requests come from 127.0.0.1 or 127.0.0.2 unless they say otherwise: Linux answers on all of 127/8).
import * as http from 'node:http';
import { startReviewServer, SECURITY_HEADERS, type ReviewServer } from '../../client/review-server';
import {
  ReviewRefusal,
  type DecisionRequest,
  type Inbox,
  type InboxProposal,
  type ReviewBackend,
} from '../../client/review-inbox';
import { groupsOf } from '../../client/review-page';
import { newStewardToken, parseStewards } from '../../client/review-stewards';
import type { AccessOptions } from '../../client/review-access';
import { startAuthProxy, type AuthProxy } from '../support/auth-proxy';

const TOKEN = 'unit-test-review-token-0123456789';
const DEADLINE = new Date(Date.now() + 3600_000).toISOString();

const pii = (id: string, category: string): InboxProposal => ({
  proposalId: id,
  pageIndex: 0,
  entityId: 'raw.customers',
  kind: 'pii_tag',
  summary: `tag raw.customers.${id} as ${category} (0.90): named`,
  arbiterReason: 'grounded',
  deadline: DEADLINE,
});

class FakeBackend implements ReviewBackend {
  decided: DecisionRequest[] = [];
  refuse?: ReviewRefusal;
  proposals = [pii('p-a', 'email'), pii('p-b', 'email'), pii('p-c', 'phone')];
  async inbox(): Promise<Inbox> {
    return {
      at: new Date().toISOString(),
      sweeps: [
        { sweepId: 'sweep/unit/1', catalog: 'unit', mode: 'mechanical', deadline: DEADLINE, proposals: this.proposals },
      ],
      unreachable: [],
      notListed: 0,
    };
  }
  async decide(req: DecisionRequest) {
    if (this.refuse) throw this.refuse;
    this.decided.push(req);
    return { ...req, accepted: req.proposalIds.length, stillPending: 3 - req.proposalIds.length };
  }
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(
  port: number,
  opts: {
    method?: string;
    path?: string;
    headers?: Record<string, string | string[]>;
    form?: Record<string, string | string[]>;
    /** The local address to connect from: the TCP peer the server sees. */
    from?: string;
  } = {},
): Promise<Answer> {
  const body = opts.form
    ? new URLSearchParams(
        Object.entries(opts.form).flatMap(([k, v]): [string, string][] =>
          Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]],
        ),
      ).toString()
    : undefined;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        ...(opts.from ? { localAddress: opts.from } : {}),
        method: opts.method ?? (body ? 'POST' : 'GET'),
        path: opts.path ?? '/',
        headers: {
          ...(body ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const cookieOf = (a: Answer) => /argus_review=([^;]+)/.exec(String(a.headers['set-cookie'] ?? ''))?.[1];
const csrfOf = (a: Answer) => /name="csrf" value="([^"]+)"/.exec(a.body)?.[1];

let servers: ReviewServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function serve(
  backend: ReviewBackend,
  env: NodeJS.ProcessEnv = {},
  host = '127.0.0.1',
  reviewer?: string,
  access?: AccessOptions,
  log?: (line: string) => void,
) {
  const s = await startReviewServer({
    backend,
    host,
    port: 0,
    env,
    ...(reviewer ? { reviewer } : {}),
    ...(access ? { access } : {}),
    ...(log ? { log } : {}),
  });
  servers.push(s);
  return s;
}

/** A browser's first visit on a loopback server without a token: a session, its CSRF token, the page. */
async function visit(port: number) {
  const page = await request(port);
  const cookie = cookieOf(page)!;
  return { page, cookie, csrf: csrfOf(page)!, headers: { Cookie: `argus_review=${cookie}` } };
}

test('loopback without a token: the page, its security headers, an HttpOnly SameSite=Strict session', async () => {
  const s = await serve(new FakeBackend());
  expect(s.url).toBe(`http://127.0.0.1:${s.port}/`);
  const { page, cookie, csrf } = await visit(s.port);
  expect(page.status).toBe(200);
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) expect(page.headers[k.toLowerCase()]).toBe(v);
  expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
  expect(page.headers['set-cookie']?.[0]).toMatch(/; HttpOnly; SameSite=Strict; Path=\/$/);
  expect(cookie).toBeTruthy();
  expect(csrf).toBeTruthy();
  for (const id of ['p-a', 'p-b', 'p-c']) expect(page.body).toContain(`data-proposal="${id}"`);
  const css = await request(s.port, { path: '/review.css' });
  expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
});

test("a group's approval sends exactly its listed ids; the next page shows what the sweep recorded", async () => {
  const backend = new FakeBackend();
  const s = await serve(backend);
  const { page, csrf, headers } = await visit(s.port);
  const g = groupsOf((await backend.inbox()).sweeps[0]!).findIndex((x) => x.cls === 'email');
  const groupIds = [...page.body.matchAll(new RegExp(`name="group\\.0\\.${g}" value="([^"]+)"`, 'g'))].map(
    (m) => m[1]!,
  );
  expect(groupIds.sort()).toEqual(['p-a', 'p-b']);
  const posted = await request(s.port, {
    headers: { ...headers, Origin: `http://127.0.0.1:${s.port}` },
    path: '/decide',
    form: {
      csrf,
      reviewer: ' dana ',
      act: `approved|group|0|${g}`,
      'sweep.0': 'sweep/unit/1',
      [`group.0.${g}`]: groupIds,
      'note.0': 'checked with legal',
      'pick.0': ['p-c'], // a ticked box elsewhere is not part of a group decision
    },
  });
  expect(posted.status).toBe(303);
  expect(posted.headers.location).toBe('/');
  expect(backend.decided).toEqual([
    {
      sweepId: 'sweep/unit/1',
      proposalIds: ['p-a', 'p-b'],
      decision: 'approved',
      reviewer: 'dana',
      note: 'checked with legal',
    },
  ]);
  const after = await request(s.port, { headers });
  expect(after.body).toContain('sweep/unit/1 recorded 2 approved by dana (note: “checked with legal”): p-a, p-b.');
  expect(after.body).toContain('value="dana"'); // the name field starts with the name last used
  expect(after.body).toContain('Your name (typed, not checked'); // open loopback: the page knows nobody
});

test('one proposal, and a selection', async () => {
  const backend = new FakeBackend();
  const s = await serve(backend, {}, '127.0.0.1', 'fixed-reviewer');
  const { csrf, headers } = await visit(s.port);
  const base = { csrf, 'sweep.0': 'sweep/unit/1', reviewer: 'ignored: the server sets the reviewer' };
  await request(s.port, { headers, path: '/decide', form: { ...base, act: 'rejected|one|0|p-c' } });
  await request(s.port, {
    headers,
    path: '/decide',
    form: { ...base, act: 'approved|selected|0', 'pick.0': ['p-a', 'p-b'] },
  });
  expect(backend.decided.map((d) => [d.decision, d.proposalIds, d.reviewer])).toEqual([
    ['rejected', ['p-c'], 'fixed-reviewer'],
    ['approved', ['p-a', 'p-b'], 'fixed-reviewer'],
  ]);
});

test('refusals: 4xx with a readable message, and nothing reaches the sweep', async () => {
  const backend = new FakeBackend();
  const s = await serve(backend);
  const { csrf, headers } = await visit(s.port);
  const good = { csrf, reviewer: 'dana', 'sweep.0': 'sweep/unit/1', act: 'approved|one|0|p-a' };
  const cases: [string, Parameters<typeof request>[1], number, string][] = [
    ['no session', { path: '/decide', form: good }, 401, 'this browser has no session on the review page'],
    ['forged session', { path: '/decide', form: good, headers: { Cookie: 'argus_review=forged' } }, 401, 'no session'],
    ['no CSRF token', { path: '/decide', form: { ...good, csrf: '' }, headers }, 403, 'CSRF token does not match'],
    ['a wrong CSRF token', { path: '/decide', form: { ...good, csrf: `${csrf}x` }, headers }, 403, 'CSRF'],
    [
      'another site',
      { path: '/decide', form: good, headers: { ...headers, Origin: 'http://evil.example' } },
      403,
      'a form from another site (or one that hides its origin) is refused here',
    ],
    ['DNS rebinding', { headers: { Host: 'evil.example:80' } }, 403, 'answers only to a loopback name'],
    ['no name', { path: '/decide', form: { ...good, reviewer: ' ' }, headers }, 400, 'type your name'],
    [
      'nothing ticked',
      { path: '/decide', form: { ...good, act: 'approved|selected|0' }, headers },
      400,
      'tick the proposals',
    ],
    ['no button', { path: '/decide', form: { ...good, act: '' }, headers }, 400, 'press Approve or Reject'],
    ['a forged button', { path: '/decide', form: { ...good, act: 'delete|all|0' }, headers }, 400, 'malformed'],
    [
      'not a form',
      { path: '/decide', method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' } },
      415,
      'only the page',
    ],
    ['an unknown path', { path: '/admin' }, 404, 'there is no /admin here'],
    ['a wrong method', { path: '/decide', method: 'GET' }, 405, 'GET is not how this page is used'],
  ];
  for (const [name, opts, status, message] of cases) {
    const a = await request(s.port, opts);
    expect({ name, status: a.status }).toEqual({ name, status });
    expect(a.body).toContain(message);
    expect(a.headers['content-security-policy']).toBe(SECURITY_HEADERS['Content-Security-Policy']);
  }
  expect(backend.decided).toEqual([]);

  backend.refuse = new ReviewRefusal(
    409,
    'the sweep refused the decisions: not awaiting review: p-x. Nothing was changed',
  );
  const refused = await request(s.port, { path: '/decide', form: good, headers });
  expect(refused.status).toBe(409);
  expect(refused.body).toContain('not awaiting review: p-x. Nothing was changed');
});

describe('with ARGUS_REVIEW_TOKEN', () => {
  test('off loopback without it the server does not start, and says which variable to set', async () => {
    await expect(startReviewServer({ backend: new FakeBackend(), host: '0.0.0.0', port: 0, env: {} })).rejects.toThrow(
      /set ARGUS_REVIEW_TOKEN in this server's environment/,
    );
  });

  test('a request without the token sees the token form (401) and no proposal; a wrong token is refused; the right one opens', async () => {
    const backend = new FakeBackend();
    const s = await serve(backend, { ARGUS_REVIEW_TOKEN: TOKEN }, '0.0.0.0');
    expect(s.tokenRequired).toBe(true);
    const first = await request(s.port);
    expect(first.status).toBe(401);
    expect(first.body).toContain('name="token" type="password"');
    expect(first.body).not.toContain('p-a');
    const cookie = `argus_review=${cookieOf(first)}`;
    const csrf = csrfOf(first)!;

    const decide = await request(s.port, {
      path: '/decide',
      headers: { Cookie: cookie },
      form: { csrf, reviewer: 'x', 'sweep.0': 'sweep/unit/1', act: 'approved|one|0|p-a' },
    });
    expect(decide.status).toBe(401);
    expect(decide.body).toContain('this review page needs its access token (ARGUS_REVIEW_TOKEN)');

    const wrong = await request(s.port, {
      path: '/login',
      headers: { Cookie: cookie },
      form: { csrf, token: 'guess' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('That is not the access token: the page stays closed.');
    const noCsrf = await request(s.port, { path: '/login', headers: { Cookie: cookie }, form: { token: TOKEN } });
    expect(noCsrf.status).toBe(403);

    const ok = await request(s.port, { path: '/login', headers: { Cookie: cookie }, form: { csrf, token: TOKEN } });
    expect(ok.status).toBe(303);
    const authed = `argus_review=${cookieOf(ok)}`;
    expect(authed).not.toBe(cookie); // a new session id at login
    const page = await request(s.port, { headers: { Cookie: authed } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('data-proposal="p-a"');
    // The shared token lets people in without saying who they are: the page says the name is typed.
    expect(page.body).toContain('Signed in with the shared access token: names on this page are typed, not checked.');
    expect(page.body).toContain('the shared access token lets you in but does not say who you are');
    expect(page.body).toContain('<input id="reviewer" name="reviewer" required');
    expect((await request(s.port, { headers: { Cookie: cookie } })).status).toBe(401); // the old id is gone
    for (const a of [first, wrong, ok, page]) expect(a.body).not.toContain(TOKEN);
    expect(backend.decided).toEqual([]);
  });
});

describe('per-steward tokens (--stewards): the page knows who decides', () => {
  const dana = newStewardToken('dana@example.org');
  const erin = newStewardToken('erin');
  const stewards = parseStewards(`# stewards\n${dana.line}\n\n${erin.line}\n`, 'stewards.txt');

  /** Sign in with `token` from a fresh visit; the signed-in session's headers and CSRF token. */
  async function signIn(port: number, token: string) {
    const first = await request(port);
    const login = await request(port, {
      path: '/login',
      headers: { Cookie: `argus_review=${cookieOf(first)}` },
      form: { csrf: csrfOf(first)!, token },
    });
    const headers = { Cookie: `argus_review=${cookieOf(login)}` };
    const page = await request(port, { headers });
    return { first, login, page, headers, csrf: csrfOf(page)! };
  }

  test("each steward's own token signs them in; their decisions are theirs whatever the form says", async () => {
    const backend = new FakeBackend();
    const logs: string[] = [];
    const s = await serve(backend, {}, '0.0.0.0', undefined, { stewards }, (l) => logs.push(l));
    expect([s.tokenRequired, s.identity]).toEqual([true, 'steward-token']);

    const d = await signIn(s.port, dana.token);
    expect(d.first.status).toBe(401);
    expect(d.first.body).toContain('Your steward token (your own: decisions are recorded in your name');
    expect(d.login.status).toBe(303);
    expect(d.page.status).toBe(200);
    expect(d.page.body).toContain('Signed in as <strong>dana@example.org</strong> (your steward token)');
    expect(d.page.body).toContain('<form method="post" action="/logout" class="signout">');
    expect(d.page.body).not.toContain('name="reviewer"');

    const e = await signIn(s.port, erin.token);
    expect(e.page.body).toContain('Signed in as <strong>erin</strong>');
    const decide = (who: typeof d, act: string) =>
      request(s.port, {
        path: '/decide',
        headers: who.headers,
        form: { csrf: who.csrf, reviewer: 'mallory', 'sweep.0': 'sweep/unit/1', act },
      });
    expect((await decide(d, 'approved|one|0|p-a')).status).toBe(303);
    expect((await decide(e, 'rejected|one|0|p-c')).status).toBe(303);
    expect(backend.decided.map((x) => [x.proposalIds, x.reviewer])).toEqual([
      [['p-a'], 'dana@example.org'],
      [['p-c'], 'erin'],
    ]);
    expect((await request(s.port, { headers: d.headers })).body).toContain(
      'sweep/unit/1 recorded 1 approved by dana@example.org: p-a.',
    );

    expect(logs).toContain('[review] dana@example.org signed in with their steward token');
    expect(logs).toContain('[review] dana@example.org (steward token) approved 1 of sweep/unit/1 (2 still pending)');
    expect(logs).toContain('[review] erin (steward token) rejected 1 of sweep/unit/1 (2 still pending)');
    for (const line of logs) for (const t of [dana.token, erin.token]) expect(line).not.toContain(t);
    for (const a of [d.first, d.login, d.page, e.page]) expect(a.body).not.toContain(dana.token);
  });

  test("a token that is no steward's, the digest itself, or none: the page stays closed", async () => {
    const backend = new FakeBackend();
    const logs: string[] = [];
    const s = await serve(backend, {}, '0.0.0.0', undefined, { stewards }, (l) => logs.push(l));
    for (const token of ['guess', dana.line.split(' ')[1]!, dana.line.split(':')[1]!, '']) {
      const t = await signIn(s.port, token);
      expect({ token, status: t.login.status }).toEqual({ token, status: 401 });
      expect(t.login.body).toContain('That is no steward’s token: the page stays closed.');
      expect(t.page.status).toBe(401);
      expect(t.page.body).not.toContain('p-a');
    }
    const noSession = await request(s.port, {
      path: '/decide',
      form: { csrf: 'x', reviewer: 'dana@example.org', 'sweep.0': 'sweep/unit/1', act: 'approved|one|0|p-a' },
    });
    expect(noSession.status).toBe(401);
    expect(noSession.body).toContain('this review page needs your steward token: open / and type it.');
    expect(backend.decided).toEqual([]);
    expect(logs.filter((l) => l === '[review] a token that is no steward’s was typed')).toHaveLength(4);
  });

  test('signing out ends the session: its cookie opens nothing and decides nothing', async () => {
    const backend = new FakeBackend();
    const s = await serve(backend, {}, '127.0.0.1', undefined, { stewards });
    const d = await signIn(s.port, dana.token);
    expect((await request(s.port, { path: '/logout', headers: d.headers, form: { csrf: 'forged' } })).status).toBe(403);
    expect((await request(s.port, { headers: d.headers })).status).toBe(200); // a forged sign-out changed nothing
    const out = await request(s.port, { path: '/logout', headers: d.headers, form: { csrf: d.csrf } });
    expect([out.status, out.headers.location]).toEqual([303, '/']);
    expect((await request(s.port, { headers: d.headers })).status).toBe(401);
    const late = await request(s.port, {
      path: '/decide',
      headers: d.headers,
      form: { csrf: d.csrf, 'sweep.0': 'sweep/unit/1', act: 'approved|one|0|p-a' },
    });
    expect(late.status).toBe(401);
    expect(backend.decided).toEqual([]);
  });

  test('--reviewer, or ARGUS_REVIEW_TOKEN as well, is refused at start', async () => {
    const backend = new FakeBackend();
    await expect(
      startReviewServer({ backend, host: '127.0.0.1', port: 0, env: {}, access: { stewards }, reviewer: 'dana' }),
    ).rejects.toThrow(
      '--reviewer would record every decision as one person, but this page knows who decides (each steward signs ' +
        'in with their own token): drop --reviewer',
    );
    await expect(
      startReviewServer({
        backend,
        host: '127.0.0.1',
        port: 0,
        env: { ARGUS_REVIEW_TOKEN: TOKEN },
        access: { stewards },
      }),
    ).rejects.toThrow('ARGUS_REVIEW_TOKEN and a stewards file are set together');
  });
});

describe('behind an authenticating proxy (--trusted-user-header, --trusted-proxy): the TCP peer decides', () => {
  const PROXY = '127.0.0.3';
  const HEADER = 'X-Forwarded-User';
  const access = { trustedUserHeader: HEADER, trustedProxies: [PROXY] };
  let proxies: AuthProxy[] = [];
  afterEach(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    proxies = [];
  });

  /** A page as the proxy fetches it for `user`: the session's headers and CSRF token. */
  async function asProxy(port: number, user: string) {
    const page = await request(port, { from: PROXY, headers: { [HEADER]: user } });
    return { page, csrf: csrfOf(page)!, headers: { [HEADER]: user, Cookie: `argus_review=${cookieOf(page)}` } };
  }

  test("from the proxy's address its header names who decides, whatever the form says", async () => {
    const backend = new FakeBackend();
    const logs: string[] = [];
    const s = await serve(backend, {}, '127.0.0.1', undefined, access, (l) => logs.push(l));
    expect([s.tokenRequired, s.identity]).toEqual([false, 'proxy']);
    const erin = await asProxy(s.port, 'erin@example.org');
    expect(erin.page.status).toBe(200);
    expect(erin.page.body).toContain(
      'Signed in as <strong>erin@example.org</strong> (named by the sign-in proxy in front of this page)',
    );
    expect(erin.page.body).not.toContain('name="reviewer"');
    expect(erin.page.body).not.toContain('action="/logout"'); // signing out is the proxy's
    const posted = await request(s.port, {
      from: PROXY,
      path: '/decide',
      headers: erin.headers,
      form: { csrf: erin.csrf, reviewer: 'mallory', 'sweep.0': 'sweep/unit/1', act: 'approved|one|0|p-b' },
    });
    expect(posted.status).toBe(303);
    expect(backend.decided.map((x) => [x.proposalIds, x.reviewer])).toEqual([[['p-b'], 'erin@example.org']]);
    expect(logs).toContain(
      '[review] erin@example.org (named by the proxy) approved 1 of sweep/unit/1 (2 still pending)',
    );
  });

  test('from any other address the header is not believed: refused (403), and nothing is read or decided', async () => {
    const backend = new FakeBackend();
    const logs: string[] = [];
    const s = await serve(backend, {}, '127.0.0.1', undefined, access, (l) => logs.push(l));
    const erin = await asProxy(s.port, 'erin');
    const cases: [string, Parameters<typeof request>[1], number, string][] = [
      [
        'the header, from 127.0.0.1',
        { headers: { [HEADER]: 'erin' } },
        403,
        'this request carries X-Forwarded-User but comes from 127.0.0.1, which is not the trusted proxy: ' +
          'X-Forwarded-User is believed only from 127.0.0.3. Nothing was read or changed',
      ],
      [
        'no header, from 127.0.0.2',
        { from: '127.0.0.2' },
        403,
        'this review page is served only through its authenticating proxy (127.0.0.3), and 127.0.0.2 is not it',
      ],
      ['the style sheet, from 127.0.0.1', { path: '/review.css' }, 403, 'not it'],
      [
        "erin's session, CSRF token and header, from 127.0.0.2",
        {
          from: '127.0.0.2',
          path: '/decide',
          headers: erin.headers,
          form: { csrf: erin.csrf, 'sweep.0': 'sweep/unit/1', act: 'approved|one|0|p-a' },
        },
        403,
        'comes from 127.0.0.2, which is not the trusted proxy',
      ],
      [
        'the proxy names nobody',
        { from: PROXY },
        401,
        'the proxy did not say who you are (no X-Forwarded-User header)',
      ],
      [
        'the proxy passes a browser’s header on beside its own',
        { from: PROXY, headers: { [HEADER]: ['mallory', 'erin'] } },
        401,
        'the proxy sent X-Forwarded-User 2 times, so who you are is not known',
      ],
      [
        "erin's session, with the proxy now naming bob",
        {
          from: PROXY,
          path: '/decide',
          headers: { ...erin.headers, [HEADER]: 'bob' },
          form: { csrf: erin.csrf, 'sweep.0': 'sweep/unit/1', act: 'approved|one|0|p-a' },
        },
        403,
        'this page was opened as erin, but the proxy now says bob: reload the page. Nothing was changed',
      ],
    ];
    for (const [name, opts, status, message] of cases) {
      const a = await request(s.port, opts);
      expect({ name, status: a.status }).toEqual({ name, status });
      expect(a.body).toContain(message);
      expect(a.body).not.toContain('data-proposal');
    }
    expect(backend.decided).toEqual([]);
    expect(logs).toContain('[review] refused a request from 127.0.0.1 carrying X-Forwarded-User: not the proxy');
  });

  test('through a real proxy on this machine: its X-Forwarded-Host is the origin a form must come from', async () => {
    const backend = new FakeBackend();
    const s = await serve(backend, {}, '127.0.0.1', undefined, access);
    const proxy = await startAuthProxy({ targetPort: s.port, localAddress: PROXY, header: HEADER, user: () => 'erin' });
    proxies.push(proxy);
    // The proxy drops what the browser sent in the header and sends its own.
    const page = await request(proxy.port, { headers: { [HEADER]: 'mallory' } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('Signed in as <strong>erin</strong>');
    const form = { csrf: csrfOf(page)!, 'sweep.0': 'sweep/unit/1', act: 'rejected|one|0|p-c' };
    const cookie = `argus_review=${cookieOf(page)}`;
    // A browser on the proxy's address sends the proxy's Origin; the server sees Host 127.0.0.1:<its port>.
    const elsewhere = await request(proxy.port, {
      path: '/decide',
      headers: { Cookie: cookie, Origin: 'http://evil.example' },
      form,
    });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body).toContain('a form from another site');
    const posted = await request(proxy.port, {
      path: '/decide',
      headers: { Cookie: cookie, Origin: `http://127.0.0.1:${proxy.port}` },
      form,
    });
    expect(posted.status).toBe(303);
    expect(backend.decided.map((x) => [x.proposalIds, x.reviewer])).toEqual([[['p-c'], 'erin']]);
    // The same session straight to the server, from the browser's own address: refused.
    const direct = await request(s.port, { headers: { Cookie: cookie, [HEADER]: 'erin' } });
    expect(direct.status).toBe(403);
  });

  test('--reviewer, a token or stewards beside a proxy: refused at start', async () => {
    const backend = new FakeBackend();
    await expect(
      startReviewServer({ backend, host: '127.0.0.1', port: 0, env: {}, access, reviewer: 'erin' }),
    ).rejects.toThrow('(the proxy names them in X-Forwarded-User): drop --reviewer');
    await expect(
      startReviewServer({ backend, host: '127.0.0.1', port: 0, env: { ARGUS_REVIEW_TOKEN: TOKEN }, access }),
    ).rejects.toThrow('ARGUS_REVIEW_TOKEN and --trusted-user-header are set together');
  });
});
