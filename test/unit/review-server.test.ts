// The review server's HTTP and access rules over a fake backend (no Temporal): headers, sessions, the token,
// CSRF, Host and Origin checks, and that a decision sends exactly the ids the page listed — or nothing.
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
    headers?: Record<string, string>;
    form?: Record<string, string | string[]>;
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

async function serve(backend: ReviewBackend, env: NodeJS.ProcessEnv = {}, host = '127.0.0.1', reviewer?: string) {
  const s = await startReviewServer({ backend, host, port: 0, env, ...(reviewer ? { reviewer } : {}) });
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
    expect((await request(s.port, { headers: { Cookie: cookie } })).status).toBe(401); // the old id is gone
    for (const a of [first, wrong, ok, page]) expect(a.body).not.toContain(TOKEN);
    expect(backend.decided).toEqual([]);
  });
});
