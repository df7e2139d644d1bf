// Taking back a person's decision from the review page: the decisions that stand for their shape, read from a
// catalog's memory on a real file state store (the one function the CLI's `argus review forget` shares), the block
// that lists them with a Forget button each, and `POST /forget` over a real server with the same checks as
// `POST /decide`. The Temporal side is a stand-in client (the browser path runs in test/e2e/review-forget.test.ts).
import * as http from 'node:http';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { fileStateStore } from '../../state/file/store';
import type { MemoryEntry, RememberedDecision } from '../../state/memory';
import { incrementalDocName, type IncrementalDoc } from '../../activities/incremental-activities';
import {
  forgetDecision,
  NothingToForget,
  standingDecisions,
  standingDecisionsOf,
} from '../../activities/forget-decision';
import { SHAPE_REVIEWER_PREFIX } from '../../judgment/pii/shape';
import { MAX_STANDING, temporalReviewBackend, type Inbox, type InboxSweep } from '../../client/review-inbox';
import { esc, forgetValue, forgottenMessage, renderInboxPage } from '../../client/review-page';
import { startReviewServer, type ReviewServer } from '../../client/review-server';
import { newStewardToken, parseStewards } from '../../client/review-stewards';
import type { PendingReview } from '../../workflows/messages';

const NOW = new Date('2026-12-01T10:00:00.000Z');
const LATER = '2026-12-01T12:00:00.000Z';
const XSS = '<script>alert("x")</script>&\'';

const human = (pid: string, d: 'approved' | 'rejected', who: string, at: string, shape?: string): RememberedDecision =>
  shape ? [pid, d, 'human', `content-${pid}`, who, at, shape] : [pid, d, 'human', `content-${pid}`, who, at];
const byShape = (pid: string, of: string): RememberedDecision => [pid, 'rejected', `${SHAPE_REVIEWER_PREFIX}${of}`];
const entry = (...d: RememberedDecision[]): MemoryEntry => ({ fp: 'fp', final: true, sweep: 'sweep/old', d });

/** A memory: dana rejected an e-mail tag on raw.customers (two other tables rejected for it), erin approved a phone tag. */
const ENTITIES: Record<string, MemoryEntry> = {
  'raw.customers': entry(
    human('p-email', 'rejected', 'dana', '2026-11-01T09:00:00.000Z', 'email|email|person'),
    human('p-desc', 'rejected', 'dana', '2026-11-01T09:00:00.000Z'),
    ['p-gate', 'rejected', 'mechanical-gate'],
  ),
  'raw.suppliers': entry(human('p-phone', 'approved', 'erin', '2026-11-02T09:00:00.000Z', 'phone|phone|-')),
  'staging.stg_customers': entry(byShape('p-x1', 'p-email')),
  'raw.invoices': entry(byShape('p-x2', 'p-email'), ['p-ok', 'approved', 'mechanical-gate']),
  // A sweep running while p-old was forgotten remembered what it rejected on it: only that rests on it now.
  'raw.shipments': entry(byShape('p-x3', 'p-old')),
  'raw.orders': entry(['p-ok2', 'approved', 'model']),
};

describe('standingDecisionsOf', () => {
  const all = standingDecisionsOf(ENTITIES);
  const of = (pid: string) => all.find((d) => d.proposalId === pid);

  test.each([
    [
      "a person's rejection with the entities rejected for its shape",
      'p-email',
      {
        proposalId: 'p-email',
        entityId: 'raw.customers',
        decision: 'rejected',
        reviewer: 'dana',
        at: '2026-11-01T09:00:00.000Z',
        shape: 'email|email|person',
        byShape: ['raw.invoices', 'staging.stg_customers'],
      },
    ],
    [
      "a person's approval (it decides nothing elsewhere yet)",
      'p-phone',
      {
        proposalId: 'p-phone',
        entityId: 'raw.suppliers',
        decision: 'approved',
        reviewer: 'erin',
        at: '2026-11-02T09:00:00.000Z',
        shape: 'phone|phone|-',
        byShape: [],
      },
    ],
    ["a person's decision without a shape (not a PII tag)", 'p-desc', expect.objectContaining({ byShape: [] })],
    ['only what a forgotten decision rejected', 'p-old', { proposalId: 'p-old', byShape: ['raw.shipments'] }],
    ["the gate's and the model's own decisions are no person's", 'p-gate', undefined],
    ['…nor those of the model', 'p-ok2', undefined],
  ])('%s', (_what, pid, want) => {
    expect(of(pid)).toEqual(want);
  });

  test('newest first; a later decision on the same shape supersedes an earlier one', () => {
    expect(all.map((d) => d.proposalId)).toEqual(['p-phone', 'p-desc', 'p-email', 'p-old']);
    const later = standingDecisionsOf({
      ...ENTITIES,
      'staging.stg_customers': entry(
        human('p-later', 'approved', 'erin', '2026-11-20T00:00:00.000Z', 'email|email|person'),
      ),
    });
    expect(later.find((d) => d.proposalId === 'p-email')?.supersededBy).toBe('p-later');
    expect(later.find((d) => d.proposalId === 'p-email')?.byShape).toEqual(['raw.invoices']);
    expect(later.find((d) => d.proposalId === 'p-later')?.supersededBy).toBeUndefined();
  });
});

/** A real file state store holding a sweep of catalog `shop` whose memory is ENTITIES. */
async function seeded() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-forget-'));
  const store = fileStateStore(dir);
  const sweepId = 'sweep/shop/now';
  const ledger = store.ledger(`${sweepId}@run-1`);
  await ledger.writeMeta({
    sweepId,
    ledgerKey: `${sweepId}@run-1`,
    catalogRef: { kind: 'demo' },
    catalogKey: 'shop-key',
    catalogLabel: 'shop',
    catalogName: 'shop',
    auditFile: path.join(dir, 'audit.jsonl'),
    startedAt: NOW.toISOString(),
  });
  const inc: IncrementalDoc = {
    judgmentKey: 'jk',
    memoryKey: 'memory-of-shop',
    incremental: true,
    replace: false,
    counts: { new: 0, changed: 0, unchanged: 6, gone: 0, carriedOver: 0, judged: 0 },
    goneIds: [],
  };
  await ledger.writeDoc(incrementalDocName, inc);
  await store.memory.save(inc.memoryKey, {
    judgmentKey: 'jk',
    sweepId: 'sweep/old',
    replace: true,
    upserts: ENTITIES,
    deletes: [],
  });
  const memory = async () => {
    const read = await store.memory.load(inc.memoryKey);
    if (read.status !== 'ok') throw new Error(`memory ${read.status}`);
    return read.doc.entities;
  };
  return { dir, store, sweepId, memory };
}

describe('forgetDecision and standingDecisions on a real file store', () => {
  test('the decision and every entity rejected for its shape are forgotten; the rest stays', async () => {
    const { store, sweepId, memory } = await seeded();
    const listed = await standingDecisions(store, sweepId);
    expect(listed.catalog).toBe('shop');
    expect(listed.decisions.map((d) => d.proposalId)).toEqual(['p-phone', 'p-desc', 'p-email', 'p-old']);
    const r = await forgetDecision(store, sweepId, 'p-email');
    expect(r).toEqual({
      proposalId: 'p-email',
      catalog: 'shop',
      reviewer: 'dana',
      forgotten: ['raw.customers', 'raw.invoices', 'staging.stg_customers'],
    });
    expect(Object.keys(await memory()).sort()).toEqual(['raw.orders', 'raw.shipments', 'raw.suppliers']);
    expect((await standingDecisions(store, sweepId)).decisions.map((d) => d.proposalId)).toEqual(['p-phone', 'p-old']);
    // Only what rests on a forgotten decision: forgotten too, with no reviewer to name.
    expect(await forgetDecision(store, sweepId, 'p-old')).toEqual({
      proposalId: 'p-old',
      catalog: 'shop',
      forgotten: ['raw.shipments'],
    });
  });

  test.each([
    ['an id no person decided', 'sweep/shop/now', 'p-gate', 'decision', /holds no decision of a person on p-gate/],
    ['a proposal id unknown', 'sweep/shop/now', 'p-nope', 'decision', /holds no decision of a person on p-nope/],
    ['a sweep unknown', 'sweep/none', 'p-email', 'sweep', /^no sweep sweep\/none in /],
  ])('%s: refused, and nothing is forgotten', async (_what, sweepId, pid, missing, message) => {
    const { store, memory } = await seeded();
    const before = await memory();
    const e = (await forgetDecision(store, sweepId, pid).catch((x: unknown) => x)) as NothingToForget;
    expect(e).toBeInstanceOf(NothingToForget);
    expect(e.missing).toBe(missing);
    expect(e.message).toMatch(message);
    expect(await memory()).toEqual(before);
  });
});

const standingSweep = (extra: Partial<InboxSweep> = {}): InboxSweep => ({
  sweepId: 'sweep/shop/now',
  catalog: 'shop',
  mode: 'mechanical',
  deadline: LATER,
  proposals: [],
  standing: { decisions: standingDecisionsOf(ENTITIES).filter((d) => d.shape || d.byShape.length), total: 3 },
  ...extra,
});
const page = (sweeps: InboxSweep[], extra: Partial<Parameters<typeof renderInboxPage>[0]> = {}) =>
  renderInboxPage({
    inbox: { at: NOW.toISOString(), sweeps, unreachable: [], notListed: 0 },
    csrf: 'CSRF-1',
    now: NOW,
    canForget: true,
    ...extra,
  });

describe('the page block: decisions that stand for their shape', () => {
  const html = page([standingSweep()]);

  test('each with its shape, decision, reviewer, date, how many others it decided, and a Forget button', () => {
    expect(html).toContain('<h3>Decisions that stand for their shape (3)</h3>');
    const row = /<tr data-decision="p-email">.*?<\/tr>/.exec(html)?.[0];
    expect(row).toBe(
      '<tr data-decision="p-email"><td><code class="pid">p-email</code></td><td>raw.customers</td>' +
        '<td>column “email” · <code>email</code> · <span class="reading">person table</span></td><td>rejected</td>' +
        '<td>dana</td><td><time datetime="2026-11-01T09:00:00.000Z">2026-11-01</time></td>' +
        '<td>2 other entities: <code>raw.invoices</code>, <code>staging.stg_customers</code></td>' +
        `<td><button type="submit" formaction="/forget" formmethod="post" name="forget" value="${esc(forgetValue('sweep/shop/now', 'p-email'))}" class="forget" aria-label="Forget p-email">Forget</button></td></tr>`,
    );
    expect(html).toContain('<td>column “phone” · <code>phone</code></td><td>approved</td><td>erin</td>');
    expect(html).toContain('<tr data-decision="p-old">');
    expect(html).toContain('<span class="muted">not in the memory</span>');
    // A decision on a description stands, but not for a shape: not listed here.
    expect(html).not.toContain('data-decision="p-desc"');
  });

  test('the buttons are in the one form, with its CSRF token and the name field: no script', () => {
    expect(html).toMatch(/<form method="post" action="\/decide" id="decide">.*formaction="\/forget".*<\/form>/);
    expect(html).toContain('<input type="hidden" name="csrf" value="CSRF-1">');
    expect(html).toContain('<input id="reviewer" name="reviewer" required');
    expect(html).not.toMatch(/<script|style=|\son[a-z]+=/i);
    // A sweep past its deadline takes no decisions, but its catalog's decisions can still be forgotten.
    const closed = page([standingSweep({ deadline: '2026-12-01T09:00:00.000Z' })]);
    expect(closed).toContain('<form method="post" action="/decide" id="decide">');
    expect(closed).toContain('aria-label="Forget p-email"');
    expect(closed).not.toContain('Approve selected');
  });

  test('bounded: beyond the listed ones, how many more and the command that takes any back', () => {
    const many = Array.from({ length: MAX_STANDING }, (_, i) => ({ proposalId: `p-${i}`, byShape: [] }));
    const big = page([standingSweep({ standing: { decisions: many, total: MAX_STANDING + 7 } })]);
    expect(big.match(/<tr data-decision=/g)).toHaveLength(MAX_STANDING);
    expect(big).toContain(
      `7 more not listed (the page lists the ${MAX_STANDING} newest): ` +
        '<code>argus review forget &lt;proposal-id&gt; --sweep sweep/shop/now</code> takes back any.',
    );
  });

  test('none standing, a memory that cannot be read, a server that reads no state: said so, and no button', () => {
    expect(page([standingSweep({ standing: { decisions: [], total: 0 } })])).toContain(
      'No person’s decision stands for its shape in this catalog’s memory.',
    );
    expect(
      page([
        standingSweep({ standing: { decisions: [], total: 0, note: 'the memory of shop cannot be read (newer)' } }),
      ]),
    ).toContain('<p class="empty">the memory of shop cannot be read (newer)</p>');
    expect(page([standingSweep({ standing: undefined })])).not.toContain('Decisions that stand for their shape');
    const readOnly = page([standingSweep()], { canForget: false });
    expect(readOnly).toContain('<tr data-decision="p-email">');
    expect(readOnly).not.toContain('formaction="/forget"');
  });

  test('every value from the memory is escaped', () => {
    const evil = page([
      standingSweep({
        sweepId: `sweep/${XSS}`,
        catalog: XSS,
        standing: {
          decisions: [
            {
              proposalId: `p-${XSS}`,
              entityId: `e-${XSS}`,
              decision: 'rejected',
              reviewer: XSS,
              at: `2026-11-01${XSS}`,
              shape: `${XSS}|${XSS}|${XSS}`,
              byShape: [XSS],
            },
          ],
          total: 1,
        },
      }),
    ]);
    expect(evil).not.toContain('<script>');
    expect(evil).not.toMatch(/\son[a-z]+=/i);
    expect(evil).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;');
  });

  test('what this session forgot is shown, escaped', () => {
    const f = {
      sweepId: 'sweep/shop/now',
      proposalId: 'p-email',
      catalog: 'shop',
      by: `erin${XSS}`,
      reviewer: 'dana',
      forgotten: ['raw.customers', 'raw.invoices'],
    };
    expect(forgottenMessage(f)).toBe(
      `Forgot dana’s decision on p-email in the memory of shop (by erin${XSS}): 2 entities are judged afresh next ` +
        'sweep (raw.customers, raw.invoices).',
    );
    const shown = page([standingSweep()], { forgotten: [f] });
    expect(shown).toContain('<h2>Forgotten (this session, newest first)</h2>');
    expect(shown).toContain(esc(forgottenMessage(f)));
    expect(shown).not.toContain('<script>');
  });
});

// ---- POST /forget over a real server, the real backend and the real file store ----

/** The Temporal side of the backend: one running sweep of `shop`, with one proposal waiting (never decided here). */
function standInClient(sweepId: string): Client {
  const pending: PendingReview[] = [
    {
      proposalId: 'p-wait',
      pageIndex: 0,
      entityId: 'raw.web_sessions',
      kind: 'pii_tag',
      summary: 'tag raw.web_sessions.ip_address as ip_address (0.90): named',
      arbiterReason: 'grounded',
      deadline: LATER,
    },
  ];
  return {
    withDeadline: <T>(_d: number, fn: () => Promise<T>) => fn(),
    workflow: {
      list: () =>
        (async function* () {
          yield { workflowId: sweepId };
        })(),
      getHandle: () => ({
        query: async (q: { name: string }) =>
          q.name === 'pendingReviews' ? pending : { catalog: 'shop', mode: 'mechanical' },
      }),
    },
  } as unknown as Client;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(
  port: number,
  opts: { path?: string; headers?: Record<string, string>; form?: Record<string, string> } = {},
): Promise<Answer> {
  const body = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: body ? 'POST' : 'GET',
        path: opts.path ?? '/',
        headers: { ...(body ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}), ...opts.headers },
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

async function serveForget(host = '127.0.0.1', access?: Parameters<typeof startReviewServer>[0]['access']) {
  const seed = await seeded();
  const logs: string[] = [];
  const backend = temporalReviewBackend({ client: standInClient(seed.sweepId), state: seed.store, now: () => NOW });
  const s = await startReviewServer({
    backend,
    host,
    port: 0,
    env: {},
    ...(access ? { access } : {}),
    log: (l) => logs.push(l),
  });
  servers.push(s);
  return { ...seed, s, logs };
}

test('loopback: the page lists the decisions; Forget takes one back in the name typed, and says what it forgot', async () => {
  const { s, sweepId, memory, logs } = await serveForget();
  const first = await request(s.port);
  expect(first.status).toBe(200);
  expect(first.body).toContain('<tr data-decision="p-email">');
  const headers = { Cookie: `argus_review=${cookieOf(first)}` };
  const csrf = csrfOf(first)!;
  const forget = (form: Record<string, string>, h: Record<string, string> = headers) =>
    request(s.port, { path: '/forget', headers: h, form });
  const value = forgetValue(sweepId, 'p-email');
  const before = await memory();

  // Refusals: each a 4xx with a message, and the memory as it was.
  const refusals: [Answer, number, string][] = [
    [await forget({ csrf, reviewer: 'dana', forget: value }, {}), 401, 'this browser has no session'],
    [await forget({ csrf: 'forged', reviewer: 'dana', forget: value }), 403, 'CSRF token does not match'],
    [
      await forget({ csrf, reviewer: 'dana', forget: value }, { ...headers, Origin: 'http://attacker.example' }),
      403,
      'a form from another site',
    ],
    [await forget({ csrf, forget: value }), 400, 'type your name: forgetting a decision records who did'],
    [await forget({ csrf, reviewer: 'dana' }), 400, 'press Forget beside a decision'],
    [await forget({ csrf, reviewer: 'dana', forget: 'p-email' }), 400, 'value is malformed'],
    [
      await forget({ csrf, reviewer: 'dana', forget: forgetValue(sweepId, 'p-nope') }),
      404,
      'the memory of shop holds no decision of a person on p-nope: nothing was changed',
    ],
    [
      await forget({ csrf, reviewer: 'dana', forget: forgetValue('sweep/none', 'p-email') }),
      404,
      'no sweep sweep/none in ',
    ],
  ];
  for (const [a, status, text] of refusals) {
    expect([a.status, a.body]).toEqual([status, expect.stringContaining(esc(text))]);
  }
  expect(await memory()).toEqual(before);

  const done = await forget({ csrf, reviewer: 'erin', forget: value });
  expect([done.status, done.headers.location]).toEqual([303, '/']);
  const after = await memory();
  for (const id of ['raw.customers', 'raw.invoices', 'staging.stg_customers']) expect(after[id]).toBeUndefined();
  expect(after['raw.suppliers']).toEqual(before['raw.suppliers']);
  expect(logs).toContain(
    "[review] erin (name typed on the page) forgot dana's decision on p-email in the memory of shop (sweep " +
      `${sweepId}): 3 entities are judged afresh next sweep: raw.customers, raw.invoices, staging.stg_customers`,
  );
  const next = await request(s.port, { headers });
  expect(next.body).toContain(
    esc(
      'Forgot dana’s decision on p-email in the memory of shop (by erin): 3 entities are judged afresh next sweep ' +
        '(raw.customers, raw.invoices, staging.stg_customers).',
    ),
  );
  expect(next.body).not.toContain('data-decision="p-email"');
  expect(next.body).toContain(
    '<input id="reviewer" name="reviewer" required maxlength="200" autocomplete="name" value="erin">',
  );
  // A second Forget of it finds nothing.
  expect((await forget({ csrf, reviewer: 'erin', forget: value })).status).toBe(404);
});

test('with stewards the signed-in steward forgets, whatever name the form carries', async () => {
  const dana = newStewardToken('dana@example.org');
  const stewards = parseStewards(`${dana.line}\n`, 'stewards.txt');
  const { s, sweepId, memory, logs } = await serveForget('0.0.0.0', { stewards });
  const first = await request(s.port);
  expect(first.status).toBe(401);
  expect(first.body).not.toContain('p-email');
  const noSession = await request(s.port, {
    path: '/forget',
    form: { reviewer: 'mallory', forget: forgetValue(sweepId, 'p-email') },
  });
  expect([noSession.status, noSession.body]).toEqual([401, expect.stringContaining('needs your steward token')]);
  const login = await request(s.port, {
    path: '/login',
    headers: { Cookie: `argus_review=${cookieOf(first)}` },
    form: { csrf: csrfOf(first)!, token: dana.token },
  });
  const headers = { Cookie: `argus_review=${cookieOf(login)}` };
  const shown = await request(s.port, { headers });
  expect(shown.body).toContain('aria-label="Forget p-phone"');
  const done = await request(s.port, {
    path: '/forget',
    headers,
    form: { csrf: csrfOf(shown)!, reviewer: 'mallory', forget: forgetValue(sweepId, 'p-phone') },
  });
  expect(done.status).toBe(303);
  expect((await memory())['raw.suppliers']).toBeUndefined();
  expect(logs).toContain(
    `[review] dana@example.org (steward token) forgot erin's decision on p-phone in the memory of shop (sweep ${sweepId}): ` +
      '1 entity is judged afresh next sweep: raw.suppliers',
  );
  expect(logs.join('\n')).not.toContain('mallory');
});

test('a server that reads no state store offers no Forget and refuses one (nothing to change)', async () => {
  const backend = {
    inbox: async (): Promise<Inbox> => ({
      at: new Date().toISOString(),
      sweeps: [standingSweep({ deadline: new Date(Date.now() + 3600_000).toISOString(), standing: undefined })],
      unreachable: [],
      notListed: 0,
    }),
    decide: () => Promise.reject(new Error('not here')),
  };
  const s = await startReviewServer({ backend, host: '127.0.0.1', port: 0, env: {} });
  servers.push(s);
  const first = await request(s.port);
  expect(first.body).not.toContain('formaction="/forget"');
  const a = await request(s.port, {
    path: '/forget',
    headers: { Cookie: `argus_review=${cookieOf(first)}` },
    form: { csrf: csrfOf(first)!, reviewer: 'dana', forget: forgetValue('sweep/x', 'p-1') },
  });
  expect([a.status, a.body]).toEqual([404, expect.stringContaining('this server reads no state store')]);
  expect((await request(s.port, { path: '/forget' })).status).toBe(405);
});
