import {
  classOf,
  esc,
  groupsOf,
  renderInboxPage,
  renderLoginPage,
  renderMessagePage,
  tableReadingOf,
  timeLeft,
} from '../../client/review-page';
import type { Inbox, InboxProposal, InboxSweep } from '../../client/review-inbox';

const NOW = new Date('2026-12-01T10:00:00.000Z');
const DEADLINE = '2026-12-01T12:30:00.000Z';
const XSS = '<script>alert("x")</script>&\'';

function pii(id: string, column: string, category: string, extra: Partial<InboxProposal> = {}): InboxProposal {
  return {
    proposalId: id,
    pageIndex: 0,
    entityId: 'raw.customers',
    kind: 'pii_tag',
    summary: `tag raw.customers.${column} as ${category} (0.95): named ${column}`,
    arbiterReason: `${column} names ${category}`,
    deadline: DEADLINE,
    evidence: [`column ${column} of raw.customers`, `named ${column}`],
    change: {
      kind: 'pii_tag',
      column,
      category: category as 'email',
      confidence: 0.95,
      explanation: `named ${column}`,
    },
    current: { found: true, tags: [] },
    ...extra,
  };
}

function sweep(proposals: InboxProposal[], extra: Partial<InboxSweep> = {}): InboxSweep {
  return { sweepId: 'sweep/shop/1', catalog: 'shop', mode: 'mechanical', deadline: DEADLINE, proposals, ...extra };
}

const inbox = (sweeps: InboxSweep[]): Inbox => ({ at: NOW.toISOString(), sweeps, unreachable: [], notListed: 0 });

describe('tableReadingOf', () => {
  test.each([
    [['table reading: person'], 'person'],
    [['column email of crm.accounts', 'table reading: organisation (industry, annual_revenue)'], 'organisation'],
    [['Table reading — machine'], 'machine'],
    [['table_reading=event'], 'event'],
    [['the table reads as an organization'], 'organisation'],
    [['rows are people'], 'person'],
    [['column email of raw.customers', 'named email'], undefined],
    [['table reading: unknown'], undefined],
    [[], undefined],
  ])('%j → %s', (evidence, reading) => {
    expect(tableReadingOf(evidence)).toBe(reading);
  });
});

describe('classOf', () => {
  const description = (text: string): InboxProposal => ({
    proposalId: 'p-d',
    pageIndex: 0,
    entityId: 'marts.fct',
    kind: 'description',
    summary: `describe marts.fct: "${text}"`,
    arbiterReason: 'ok',
    deadline: DEADLINE,
    change: { kind: 'description', target: 'table', text },
  });
  test.each([
    ['a PII tag: its category', pii('p1', 'email', 'email'), 'email'],
    [
      'a PII tag with a table reading',
      pii('p2', 'phone', 'phone', { evidence: ['table reading: person'] }),
      'phone · person table',
    ],
    [
      'a PII tag without the sweep state: the summary',
      pii('p3', 'email', 'email', { change: undefined, evidence: undefined }),
      'email',
    ],
    ['an inherited description', description('Customer e-mail. Inherited from `raw.customers.email`.'), 'inherited'],
    ['a derived description', description('Sum of `marts.fct.amount` per `customer_key`.'), 'derived'],
    ['any other ARGUS text', description('Orders placed by customers.'), 'model'],
    ['a description without the sweep state', { ...description('x'), change: undefined }, 'basis not known here'],
    [
      'a lineage flag',
      {
        ...description('x'),
        kind: 'lineage_flag' as const,
        change: { kind: 'lineage_flag' as const, finding: 'dangling_edge' as const, upstream: 'raw.gone' },
      },
      'dangling edge',
    ],
  ])('%s', (_name, p, cls) => {
    expect(classOf(p)).toBe(cls);
  });
});

describe('timeLeft', () => {
  test.each([
    ['2026-12-03T13:00:00Z', '2 d 3 h left'],
    ['2026-12-01T12:30:00Z', '2 h 30 min left'],
    ['2026-12-01T10:05:30Z', '5 min left'],
    ['2026-12-01T10:00:42Z', '42 s left'],
    ['2026-12-01T10:00:00Z', 'past'],
    ['2026-11-30T10:00:00Z', 'past'],
  ])('%s → %s', (deadline, text) => {
    expect(timeLeft(deadline, NOW)).toBe(text);
  });
});

describe('renderInboxPage', () => {
  const proposals = [
    pii('p-e1', 'email', 'email', { evidence: ['column email of raw.customers', 'table reading: person'] }),
    pii('p-e2', 'contact_email', 'email', { evidence: ['column contact_email', 'table reading: person'] }),
    pii('p-p1', 'phone', 'phone', {
      entityId: 'raw.suppliers',
      current: { found: true, description: 'Main line.', source: 'human', tags: ['phone (human)'] },
    }),
    pii('p-n1', 'first_name', 'person_name', { current: undefined, evidence: undefined, change: undefined }),
  ];
  const html = renderInboxPage({ inbox: inbox([sweep(proposals)]), csrf: 'CSRF-1', now: NOW });

  test('names every proposal id, grouped by kind and class, with evidence, reasons and the catalog text', () => {
    expect(html).toContain('4 proposals wait for people in 1 running sweep ·');
    expect(html).toContain('<p class="summary">tag raw.suppliers.phone as phone (0.95)</p>');
    for (const p of proposals) expect(html).toContain(`data-proposal="${p.proposalId}"`);
    expect(html).toContain('data-group="pii_tag/email · person table"');
    expect(html).toContain('data-group="pii_tag/phone"');
    expect(html).toContain('data-group="pii_tag/person_name"');
    expect(html).toContain('<h3>PII tags (4)</h3>');
    expect(html).toContain('<li>table reading: person</li>');
    expect(html).toContain('<dt>Gate</dt><dd class="reason">email names email</dd>');
    expect(html).toContain('none: this sweep is reviewed mechanically');
    expect(html).toContain('<q class="catalog-text">Main line.</q> <span class="muted">(written by a person)</span>');
    expect(html).toContain('tags: <code>phone (human)</code>');
    expect(html).toContain('not read by this server');
    expect(html).toContain('2 h 30 min left');
  });

  test("a group's buttons send exactly the group's ids; each proposal has its own buttons and a box to select it", () => {
    const groups = groupsOf(sweep(proposals));
    const emails = groups.findIndex((g) => g.cls === 'email · person table');
    const hidden = [...html.matchAll(new RegExp(`name="group\\.0\\.${emails}" value="([^"]+)"`, 'g'))].map((m) => m[1]);
    expect(hidden.sort()).toEqual(['p-e1', 'p-e2']);
    expect(html).toContain(`value="approved|group|0|${emails}" class="approve">Approve all 2</button>`);
    expect(html).toContain('value="rejected|one|0|p-p1"');
    expect(html).toContain('<input type="checkbox" name="pick.0" value="p-n1"');
    expect(html).toContain('<input type="hidden" name="sweep.0" value="sweep/shop/1">');
    expect(html).toContain('<input type="hidden" name="csrf" value="CSRF-1">');
    expect(html).toContain('<input id="reviewer" name="reviewer" required');
  });

  test('no script, no inline style, no handler attribute: the CSP allows none', () => {
    expect(html).not.toMatch(/<script|style=|\son[a-z]+=/i);
  });

  test('model mode shows the model reason and says the gate only passed it', () => {
    const m = renderInboxPage({ inbox: inbox([sweep(proposals, { mode: 'model' })]), csrf: 'c', now: NOW });
    expect(m).toContain('<dt>Model</dt><dd class="reason">email names email</dd>');
    expect(m).toContain('passed it to the model');
  });

  test('a sweep past its deadline is read-only: listed, with no box and no button', () => {
    const late = sweep([pii('p-late', 'email', 'email')], { sweepId: 'sweep/late', deadline: '2026-12-01T09:00:00Z' });
    const open = sweep([pii('p-open', 'email', 'email')], { sweepId: 'sweep/open' });
    const page = renderInboxPage({ inbox: inbox([late, open]), csrf: 'c', now: NOW });
    const lateSection = /<section class="sweep" data-sweep="sweep\/late">.*?<\/section><\/section>/s.exec(page)?.[0];
    expect(lateSection).toContain('data-proposal="p-late"');
    expect(lateSection).toContain('read-only');
    expect(lateSection).toContain('past');
    expect(lateSection).not.toMatch(/<button|<input/);
    expect(page).toContain('value="approved|one|1|p-open"');
    // Only read-only sweeps: no form at all.
    const onlyLate = renderInboxPage({ inbox: inbox([late]), csrf: 'c', now: NOW });
    expect(onlyLate).not.toMatch(/<form|<button/);
  });

  test('a reviewer set by the server replaces the name field', () => {
    const page = renderInboxPage({ inbox: inbox([sweep(proposals)]), csrf: 'c', now: NOW, reviewer: 'dana' });
    expect(page).toContain('Deciding as <strong>dana</strong>');
    expect(page).not.toContain('name="reviewer"');
  });

  describe('who decides: known names replace the name field; typed ones say they are typed', () => {
    const render = (extra: Partial<Parameters<typeof renderInboxPage>[0]>) =>
      renderInboxPage({ inbox: inbox([sweep(proposals)]), csrf: 'CSRF-9', now: NOW, ...extra });

    test('a steward signed in with their own token: their name, escaped, and a sign-out form with the CSRF token', () => {
      const page = render({ signedIn: { name: XSS, by: 'steward-token' } });
      expect(page).toContain(
        `<div class="signed-in" role="status">Signed in as <strong>${esc(XSS)}</strong> (your steward token)`,
      );
      expect(page).toContain(
        '<form method="post" action="/logout" class="signout"><input type="hidden" name="csrf" value="CSRF-9"><button type="submit">Sign out</button></form>',
      );
      expect(page).toContain(`<p class="who">Every decision is recorded as <strong>${esc(XSS)}</strong>.</p>`);
      expect(page).not.toContain('name="reviewer"');
      expect(page).not.toContain('<script>');
    });

    test('named by a proxy: the name, and no sign-out (signing out is the proxy’s)', () => {
      const page = render({ signedIn: { name: 'erin', by: 'proxy' } });
      expect(page).toContain('Signed in as <strong>erin</strong> (named by the sign-in proxy in front of this page)');
      expect(page).not.toContain('/logout');
      expect(page).not.toContain('name="reviewer"');
    });

    test('behind the shared token: the page says names are typed, and the field says the token names nobody', () => {
      const page = render({ sharedToken: true });
      expect(page).toContain('names on this page are typed, not checked');
      expect(page).toContain(
        '<label for="reviewer">Your name (typed, not checked: recorded with every decision as you type it; the ' +
          'shared access token lets you in but does not say who you are)</label>',
      );
    });

    test('open loopback: a typed name, and no signed-in line', () => {
      const page = render({});
      expect(page).toContain(
        '<label for="reviewer">Your name (typed, not checked: recorded with every decision as you type it)</label>',
      );
      expect(page).not.toContain('class="signed-in"');
    });
  });

  test('what the sweeps recorded is shown, and the name last used fills the field, escaped', () => {
    const page = renderInboxPage({
      inbox: inbox([sweep([pii('p-3', 'email', 'email')])]),
      csrf: 'c',
      now: NOW,
      recorded: [
        {
          sweepId: 'sweep/shop/1',
          decision: 'approved',
          reviewer: XSS,
          note: 'checked',
          proposalIds: ['p-1', 'p-2'],
          accepted: 2,
          stillPending: 3,
        },
      ],
      lastReviewer: XSS,
    });
    expect(page).toContain(
      `sweep/shop/1 recorded 2 approved by ${esc(XSS)} (note: “checked”): p-1, p-2. 3 still wait for people.`,
    );
    expect(page).toContain(`name="reviewer" required maxlength="200" autocomplete="name" value="${esc(XSS)}"`);
    expect(page).not.toContain('<script>');
  });

  test('every value from a sweep or a catalog is escaped', () => {
    const evil = pii(`p-${XSS}`, 'email', 'email', {
      entityId: XSS,
      summary: XSS,
      arbiterReason: XSS,
      evidence: [XSS],
      current: { found: true, description: XSS, source: 'human', tags: [XSS] },
      change: { kind: 'pii_tag', column: 'email', category: 'email', confidence: 0.9, explanation: XSS },
    });
    const page = renderInboxPage({
      inbox: {
        ...inbox([sweep([evil], { sweepId: XSS, catalog: XSS, note: XSS })]),
        unreachable: [{ sweepId: XSS, reason: XSS }],
      },
      csrf: XSS,
      now: NOW,
    });
    expect(page).not.toContain('<script>');
    expect(page).not.toContain('"x")');
    expect(page.split(esc(XSS)).length).toBeGreaterThan(10);
  });
});

test('the login and message pages escape what they show and carry no script', () => {
  const login = renderLoginPage({ csrf: 'tok"en', message: XSS });
  expect(login).toContain('value="tok&quot;en"');
  expect(login).toContain('name="token" type="password" required');
  const msg = renderMessagePage({ title: 'Refused', message: XSS });
  for (const page of [login, msg]) {
    expect(page).not.toContain('<script');
    expect(page).toContain(esc(XSS));
  }
});

test("with stewards the login form asks for the steward's own token; otherwise for the shared one", () => {
  expect(renderLoginPage({ csrf: 'c', perSteward: true })).toContain(
    '<label for="token">Your steward token (your own: decisions are recorded in your name',
  );
  expect(renderLoginPage({ csrf: 'c' })).toContain(
    '<label for="token">Access token (the server’s ARGUS_REVIEW_TOKEN; ask whoever runs it)</label>',
  );
});
