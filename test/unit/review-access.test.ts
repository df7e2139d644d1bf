import {
  bindPolicy,
  canonicalAddress,
  hostAllowed,
  identityOf,
  isLoopback,
  originHostOf,
  proxyUserOf,
  REVIEW_TOKEN_ENV,
  sameOrigin,
  sessionCookie,
  sessionIdOf,
  SessionBook,
  tokenMatches,
  csrfMatches,
  type AccessOptions,
} from '../../client/review-access';
import { parseStewards } from '../../client/review-stewards';

const TOKEN = 'a-long-enough-review-token-42';
const STEWARDS = parseStewards(`dana sha256:${'ab'.repeat(32)}`, 'stewards.txt');

describe('bindPolicy: loopback is open to this machine, anything else needs ARGUS_REVIEW_TOKEN', () => {
  test.each([
    ['127.0.0.1', undefined, { ok: true, loopback: true }],
    ['localhost', undefined, { ok: true, loopback: true }],
    ['::1', undefined, { ok: true, loopback: true }],
    ['127.0.0.2', TOKEN, { ok: true, loopback: true, token: TOKEN }],
    ['0.0.0.0', TOKEN, { ok: true, loopback: false, token: TOKEN }],
    ['::', TOKEN, { ok: true, loopback: false, token: TOKEN }],
    ['10.1.2.3', TOKEN, { ok: true, loopback: false, token: TOKEN }],
  ])('%s with token %s', (host, token, expected) => {
    expect(bindPolicy(host, token ? { [REVIEW_TOKEN_ENV]: token } : {})).toEqual(expected);
  });

  test.each([['0.0.0.0'], ['::'], ['192.168.1.20'], ['review.example.org']])(
    '%s without a token: refused, naming the variable',
    (host) => {
      const p = bindPolicy(host, {});
      expect(p.ok).toBe(false);
      expect(!p.ok && p.message).toBe(
        `refusing to serve the review page on ${host}, which is not a loopback address, without an access token: ` +
          "set ARGUS_REVIEW_TOKEN in this server's environment (at least 16 characters; stewards type it on the " +
          'page), give each steward a token of their own with --stewards <file>, serve it behind an authenticating ' +
          'proxy with --trusted-user-header and --trusted-proxy, or bind to 127.0.0.1',
      );
    },
  );

  test('a short token is refused wherever the server binds', () => {
    for (const host of ['127.0.0.1', '0.0.0.0']) {
      const p = bindPolicy(host, { [REVIEW_TOKEN_ENV]: 'short' });
      expect(!p.ok && p.message).toMatch(/^ARGUS_REVIEW_TOKEN is too short: use at least 16 characters/);
    }
  });
});

describe('bindPolicy with stewards or a trusted proxy: the page knows who decides', () => {
  const proxy: AccessOptions = {
    trustedUserHeader: 'X-Forwarded-User',
    trustedProxies: ['10.0.0.2', '::ffff:10.0.0.3'],
  };
  test.each([
    ['stewards on loopback', '127.0.0.1', {}, { stewards: STEWARDS }, 'steward-token'],
    ['stewards off loopback', '0.0.0.0', {}, { stewards: STEWARDS }, 'steward-token'],
    ['a proxy off loopback', '10.0.0.5', {}, proxy, 'proxy'],
    ['a proxy on loopback', '127.0.0.1', {}, { trustedUserHeader: 'X-User', trustedProxies: ['127.0.0.1'] }, 'proxy'],
    ['the shared token', '0.0.0.0', { [REVIEW_TOKEN_ENV]: TOKEN }, {}, 'typed'],
    ['nothing, on loopback', '127.0.0.1', {}, {}, 'typed'],
  ])('%s: starts; names are %s', (_, host, env, access, identity) => {
    const p = bindPolicy(host, env, access);
    expect(p.ok && identityOf(p)).toBe(identity);
  });

  test("the proxy's addresses are kept in the form Node reports a peer in", () => {
    const p = bindPolicy('10.0.0.5', {}, { ...proxy, trustedProxies: ['10.0.0.2', '[::FFFF:10.0.0.3]', '10.0.0.2'] });
    expect(p.ok && p.proxy).toEqual({ header: 'X-Forwarded-User', peers: ['10.0.0.2', '10.0.0.3'] });
  });

  test.each([
    [
      'a token and stewards',
      { [REVIEW_TOKEN_ENV]: TOKEN },
      { stewards: STEWARDS },
      'ARGUS_REVIEW_TOKEN and a stewards file are set together: choose one way',
    ],
    [
      'a token and a proxy',
      { [REVIEW_TOKEN_ENV]: TOKEN },
      proxy,
      'ARGUS_REVIEW_TOKEN and --trusted-user-header are set together',
    ],
    [
      'stewards and a proxy',
      {},
      { ...proxy, stewards: STEWARDS },
      'a stewards file and --trusted-user-header are set together',
    ],
    [
      'a header without a proxy',
      {},
      { trustedUserHeader: 'X-Forwarded-User' },
      '--trusted-user-header and --trusted-proxy go together',
    ],
    [
      'a proxy without a header',
      {},
      { trustedProxies: ['10.0.0.2'] },
      '--trusted-user-header and --trusted-proxy go together',
    ],
    ['an empty header', {}, { trustedUserHeader: ' ', trustedProxies: ['10.0.0.2'] }, 'go together'],
    [
      'a proxy by name',
      {},
      { ...proxy, trustedProxies: ['proxy.internal'] },
      '--trusted-proxy "proxy.internal" is not an IP address',
    ],
    [
      'a proxy network',
      {},
      { ...proxy, trustedProxies: ['10.0.0.0/8'] },
      '--trusted-proxy "10.0.0.0/8" is not an IP address',
    ],
    [
      'Host as the user header',
      {},
      { ...proxy, trustedUserHeader: 'Host' },
      '--trusted-user-header "Host" cannot name a user',
    ],
    [
      'X-Forwarded-For as the user header',
      {},
      { ...proxy, trustedUserHeader: 'x-forwarded-for' },
      'cannot name a user',
    ],
    ['a header with a space', {}, { ...proxy, trustedUserHeader: 'X User' }, 'cannot name a user'],
    ['an empty stewards list', {}, { stewards: [] }, 'the stewards file names no steward'],
  ])('%s: refused at start', (_, env, access, message) => {
    const p = bindPolicy('0.0.0.0', env, access);
    expect(p.ok).toBe(false);
    expect(!p.ok && p.message).toContain(message);
  });
});

test.each([
  ['127.0.0.1', '127.0.0.1'],
  ['::ffff:127.0.0.1', '127.0.0.1'],
  ['::FFFF:7f00:2', '127.0.0.2'],
  ['[::1]', '::1'],
  ['0:0:0:0:0:0:0:1', '::1'],
  ['2001:DB8:0:0::1', '2001:db8::1'],
  [' 10.0.0.2 ', '10.0.0.2'],
  ['localhost', undefined],
  ['10.0.0.0/8', undefined],
  ['', undefined],
  [undefined, undefined],
])('canonicalAddress(%j) = %j', (given, canonical) => {
  expect(canonicalAddress(given)).toBe(canonical);
});

describe("proxyUserOf: the proxy's user header counts only from the proxy's TCP peer address", () => {
  const proxy = { header: 'X-Forwarded-User', peers: ['127.0.0.3', '::1'] };
  test.each([
    ['the proxy names erin', '127.0.0.3', ['erin'], { ok: true, user: 'erin' }],
    ['IPv4-mapped peer', '::ffff:127.0.0.3', [' erin@example.org '], { ok: true, user: 'erin@example.org' }],
    ['an IPv6 proxy', '::1', ['Erin O’Brien'], { ok: true, user: 'Erin O’Brien' }],
  ])('%s → %j', (_, peer, values, verdict) => {
    expect(proxyUserOf(proxy, peer, values)).toEqual(verdict);
  });

  test.each([
    [
      'another peer with the header',
      '127.0.0.1',
      ['erin'],
      403,
      'this request carries X-Forwarded-User but comes from 127.0.0.1, which is not the trusted proxy: ' +
        'X-Forwarded-User is believed only from 127.0.0.3, ::1. Nothing was read or changed',
    ],
    [
      'another peer without it',
      '10.9.9.9',
      undefined,
      403,
      'this review page is served only through its authenticating proxy (127.0.0.3, ::1), and 10.9.9.9 is not it',
    ],
    ['no peer address (a closed socket)', undefined, ['erin'], 403, 'comes from an unknown address'],
    [
      'the proxy names nobody',
      '127.0.0.3',
      undefined,
      401,
      'the proxy did not say who you are (no X-Forwarded-User header)',
    ],
    ['an empty name', '127.0.0.3', ['  '], 401, 'the proxy did not say who you are'],
    ['the header twice', '127.0.0.3', ['mallory', 'erin'], 401, 'the proxy sent X-Forwarded-User 2 times'],
    ['a control character', '127.0.0.3', ['erin'], 401, "the proxy's X-Forwarded-User is not a name"],
    ['too long', '127.0.0.3', ['e'.repeat(201)], 401, 'is not a name (1 to 200 characters'],
  ])('%s: refused (%s)', (_, peer, values, status, message) => {
    const v = proxyUserOf(proxy, peer, values);
    expect(v.ok ? 'accepted' : v.status).toBe(status);
    expect(!v.ok && v.message).toContain(message);
  });
});

test.each([
  [{ host: '127.0.0.1:8377', 'x-forwarded-host': 'review.example.org' }, true, 'review.example.org'],
  [{ host: '127.0.0.1:8377', 'x-forwarded-host': 'evil.example, review.example.org' }, true, 'review.example.org'],
  [{ host: '127.0.0.1:8377', 'x-forwarded-host': 'review.example.org' }, false, '127.0.0.1:8377'],
  [{ host: '127.0.0.1:8377' }, true, '127.0.0.1:8377'],
  [{ host: '127.0.0.1:8377', 'x-forwarded-host': ' ' }, true, '127.0.0.1:8377'],
])('originHostOf(%j, from the proxy: %s) = %s', (headers, fromProxy, host) => {
  expect(originHostOf(headers, fromProxy)).toBe(host);
});

test.each([
  ['127.0.0.1', true],
  ['127.5.6.7', true],
  ['localhost', true],
  ['app.localhost', true],
  ['::1', true],
  ['[::1]', true],
  ['::ffff:127.0.0.1', true],
  ['0.0.0.0', false],
  ['::', false],
  ['10.0.0.1', false],
  ['localhost.example.org', false],
  ['127.0.0.1.nip.io', false],
])('isLoopback(%s) = %s', (host, loopback) => {
  expect(isLoopback(host)).toBe(loopback);
});

test.each([
  [TOKEN, TOKEN, true],
  [`${TOKEN}x`, TOKEN, false],
  [TOKEN.slice(0, -1), TOKEN, false],
  ['', TOKEN, false],
  [undefined, TOKEN, false],
  [undefined, '', false],
  [TOKEN.toUpperCase(), TOKEN, false],
])('tokenMatches(%j, expected) = %s', (given, expected, ok) => {
  expect(tokenMatches(given, expected)).toBe(ok);
});

describe('hostAllowed: on loopback only loopback names (no DNS rebinding); off loopback the token guards', () => {
  test.each([
    ['127.0.0.1:8377', true, true],
    ['localhost:8377', true, true],
    ['[::1]:8377', true, true],
    ['evil.example:8377', true, false],
    ['127.0.0.1.evil.example', true, false],
    [undefined, true, false],
    ['review.example.org', false, true],
    [undefined, false, false],
  ])('Host %s, loopback bind %s → %s', (host, loopback, ok) => {
    expect(hostAllowed(host, loopback)).toBe(ok);
  });
});

describe('sameOrigin: state-changing requests come from this page', () => {
  test.each([
    [{ host: '127.0.0.1:8377' }, true],
    [{ host: '127.0.0.1:8377', origin: 'http://127.0.0.1:8377' }, true],
    [{ host: '127.0.0.1:8377', origin: 'http://evil.example' }, false],
    [{ host: '127.0.0.1:8377', origin: 'null' }, false],
    [{ host: '127.0.0.1:8377', 'sec-fetch-site': 'cross-site' }, false],
    [{ host: '127.0.0.1:8377', 'sec-fetch-site': 'same-origin', origin: 'http://127.0.0.1:8377' }, true],
  ])('%j → %s', (headers, ok) => {
    expect(sameOrigin(headers)).toBe(ok);
  });
});

describe('SessionBook', () => {
  test('fresh ids and CSRF tokens, idle sessions expire, the book is bounded', () => {
    let t = 0;
    const book = new SessionBook({ idleMs: 1000, max: 3, now: () => t });
    const a = book.create(false);
    const b = book.create(true, 'dana');
    expect([a.user, b.user]).toEqual([undefined, 'dana']);
    expect(a.id).not.toBe(b.id);
    expect(a.csrf).not.toBe(b.csrf);
    expect(a.id).toMatch(/^[\w-]{43}$/);
    expect(book.get(b.id)).toBe(b);
    t = 900;
    expect(book.get(b.id)).toBe(b); // seen: renewed
    t = 1500;
    expect(book.get(a.id)).toBeUndefined(); // idle 1500 ms
    expect(book.get(b.id)).toBe(b);
    book.create(false);
    book.create(false);
    book.create(false); // a fourth: the one idle longest (b) goes
    expect(book.size).toBe(3);
    expect(book.get(b.id)).toBeUndefined();
    expect(book.get(undefined)).toBeUndefined();
    expect(book.get('forged')).toBeUndefined();
  });

  test('CSRF tokens compare exactly', () => {
    const s = new SessionBook().create(true);
    expect(csrfMatches(s, s.csrf)).toBe(true);
    expect(csrfMatches(s, `${s.csrf}x`)).toBe(false);
    expect(csrfMatches(s, undefined)).toBe(false);
  });
});

test('the session cookie is HttpOnly and SameSite=Strict, and is read back from a Cookie header', () => {
  expect(sessionCookie('abc')).toBe('argus_review=abc; HttpOnly; SameSite=Strict; Path=/');
  expect(sessionIdOf('x=1; argus_review=abc-_1; y=2')).toBe('abc-_1');
  expect(sessionIdOf(undefined)).toBeUndefined();
  expect(sessionIdOf('argus_reviewx=1')).toBeUndefined();
});
