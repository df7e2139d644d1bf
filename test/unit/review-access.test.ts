import {
  bindPolicy,
  hostAllowed,
  isLoopback,
  REVIEW_TOKEN_ENV,
  sameOrigin,
  sessionCookie,
  sessionIdOf,
  SessionBook,
  tokenMatches,
  csrfMatches,
} from '../../client/review-access';

const TOKEN = 'a-long-enough-review-token-42';

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
          'page), or bind to 127.0.0.1',
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
    const b = book.create(true);
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
