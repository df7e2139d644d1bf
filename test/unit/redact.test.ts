import { boundedBody, normalizeHeaders, redactHeaders, redactSecrets } from '../../llm/redact';
import { GOOGLE_KEY, GROQ_KEY, JWT_HEAD, LIVE_TOKEN, SK } from '../support/fake-secrets';

describe('redactSecrets', () => {
  // [name, input, fragments that must be gone, fragments that must stay]
  test.each<[string, string, string[], string[]]>([
    [
      'Authorization header line',
      `Authorization: Bearer ${SK}abc123def456ghi789jkl`,
      ['abc123def456'],
      ['Authorization:'],
    ],
    [
      'bearer token mid-line',
      'curl -H "Authorization: Bearer abcdefghijklmnop" https://x',
      ['abcdefghijklmnop'],
      ['curl -H', 'https://x'],
    ],
    ['bare bearer', 'sent Bearer eyJfoo.barbazqux_123', ['eyJfoo.barbazqux_123'], ['sent Bearer']],
    ['sk- key in text', `key was ${SK}proj-AbCdEfGhIjKlMnOpQrStUv`, ['AbCdEfGhIjKlMnOpQrStUv'], ['key was']],
    [
      'anthropic key header',
      `x-api-key: ${SK}ant-api03-abcdefghijklmnopqrstuvwxyz`,
      ['abcdefghijklmnopqrstuvwxyz'],
      ['x-api-key:'],
    ],
    [
      'JSON api_key',
      '{"api_key":"abcd1234secretvalue","model":"m"}',
      ['abcd1234secretvalue'],
      ['"model":"m"', '"api_key"'],
    ],
    ['JS apiKey', "const c = { apiKey: 'my-secret-value-123' }", ['my-secret-value-123'], ['apiKey']],
    [
      'JSON authorization',
      `{"authorization": "Bearer ${LIVE_TOKEN}0123456789"}`,
      [`${LIVE_TOKEN}0123456789`],
      ['authorization'],
    ],
    [
      'key query param',
      `GET https://generativelanguage.googleapis.com/v1beta/models?key=${GOOGLE_KEY}SyA1234567890abcdefghijklmnopqrstu&alt=sse`,
      [`${GOOGLE_KEY}SyA1234567890`],
      ['alt=sse', 'v1beta/models?key='],
    ],
    ['token query param', 'https://h/x?token=abc123xyz&user=bob', ['abc123xyz'], ['user=bob']],
    ['groq key', `using key ${GROQ_KEY}ABCDEFGHIJKLMNOPQRSTUVWX now`, ['ABCDEFGHIJKLMNOPQRSTUVWX'], ['now']],
    ['google key', `${GOOGLE_KEY}SyA1234567890abcdefghijklmnopqrstu`, ['1234567890abcdef'], []],
    [
      'jwt',
      `jwt ${JWT_HEAD}hbGciOiJIUzI1NiJ9.${JWT_HEAD}zdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U`,
      ['dozjgNryP4J3jVmNHl0w5N'],
      ['jwt'],
    ],
    ['cookie line', 'Cookie: session=abc; other=def', ['session=abc'], ['Cookie:']],
  ])('%s', (_name, input, gone, kept) => {
    const out = redactSecrets(input);
    for (const g of gone) expect(out).not.toContain(g);
    for (const k of kept) expect(out).toContain(k);
    expect(out).toContain('[REDACTED]');
  });

  test.each([
    'Rate limit reached on tokens per day (TPD): Limit 100000, Used 97050, Requested 3619.',
    '{"max_tokens": 900, "type":"tokens","code":"rate_limit_exceeded"}',
    'task-specific desk-top ask-me',
    'This request requires more credits, or fewer max_tokens.',
    '{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaValue":"20"}',
  ])('leaves evidence alone: %s', (input) => {
    expect(redactSecrets(input)).toBe(input);
  });
});

describe('boundedBody', () => {
  test('short bodies pass through (redacted)', () => {
    expect(boundedBody('hello')).toBe('hello');
    expect(boundedBody('{"api_key":"zzzzzzzzzzzz"}')).not.toContain('zzzzzzzzzzzz');
  });

  test.each<[number, number]>([
    [5000, 2048],
    [3000, 100],
    [101, 100],
  ])('a %i-char body cut to %i says how much was dropped', (size, max) => {
    const out = boundedBody('a'.repeat(size), max);
    expect(out.startsWith('a'.repeat(max))).toBe(true);
    expect(out.slice(max)).toBe(`…[truncated ${size - max} chars]`);
  });

  test('exactly maxChars is not marked', () => {
    expect(boundedBody('b'.repeat(64), 64)).toBe('b'.repeat(64));
  });

  test('redacts before cutting, so a key across the cut never leaks a prefix', () => {
    const key = `${SK}ABCDEFGHIJKLMNOPQRSTUVWXYZ012345`;
    const out = boundedBody(`${'x'.repeat(2040)} ${key} tail`, 2048);
    expect(out).not.toContain(`${SK}ABC`);
    expect(out).toContain('[truncated');
  });

  test('does not split a surrogate pair', () => {
    const out = boundedBody(`${'a'.repeat(9)}😀${'b'.repeat(10)}`, 10);
    expect(out.startsWith(`${'a'.repeat(9)}…`)).toBe(true);
    expect(out).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});

describe('redactHeaders', () => {
  const input = {
    Authorization: `Bearer ${SK}live-0123456789abcdef`,
    'X-API-Key': 'k-123',
    'api-key': 'azure-key',
    Cookie: 'a=b',
    'Set-Cookie': ['sid=1', 'x=2'],
    'x-session-token': 't0k',
    'X-RateLimit-Remaining-Tokens': '0',
    'x-ratelimit-reset-requests': '1h30m43.2s',
    'anthropic-ratelimit-tokens-reset': '2026-05-20T12:00:10Z',
    'Retry-After': '5',
    'retry-after-ms': '5000',
    'x-request-id': 'req_1',
    'apim-request-id': 'a-1',
    'content-type': 'application/json',
    'x-custom': 'plain',
    'x-trace': undefined,
  };

  test.each<[string, string | undefined]>([
    ['authorization', '[REDACTED]'],
    ['x-api-key', '[REDACTED]'],
    ['api-key', '[REDACTED]'],
    ['cookie', '[REDACTED]'],
    ['set-cookie', '[REDACTED]'],
    ['x-session-token', '[REDACTED]'],
    ['x-ratelimit-remaining-tokens', '0'],
    ['x-ratelimit-reset-requests', '1h30m43.2s'],
    ['anthropic-ratelimit-tokens-reset', '2026-05-20T12:00:10Z'],
    ['retry-after', '5'],
    ['retry-after-ms', '5000'],
    ['x-request-id', 'req_1'],
    ['apim-request-id', 'a-1'],
    ['content-type', 'application/json'],
    ['x-custom', 'plain'],
    ['x-trace', undefined],
  ])('%s -> %p', (name, expected) => {
    expect(redactHeaders(input)[name]).toBe(expected);
  });

  test('no secret value survives anywhere in the output', () => {
    const flat = JSON.stringify(redactHeaders(input));
    for (const secret of ['sk-live', 'k-123', 'azure-key', 'a=b', 'sid=1', 't0k']) expect(flat).not.toContain(secret);
  });

  test('reads fetch Headers too', () => {
    const h = new Headers({ Authorization: 'Bearer abcdefghijkl', 'X-RateLimit-Limit-Requests': '60' });
    expect(redactHeaders(h)).toEqual({ authorization: '[REDACTED]', 'x-ratelimit-limit-requests': '60' });
    expect(normalizeHeaders(h)['x-ratelimit-limit-requests']).toBe('60');
  });

  test('null and undefined give an empty record', () => {
    expect(redactHeaders(null)).toEqual({});
    expect(redactHeaders(undefined)).toEqual({});
  });
});
