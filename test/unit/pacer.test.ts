import { Pacer } from '../../llm/pacer';

describe('Pacer: waits before a call that will not fit in what the provider says remains', () => {
  const now = 1_000_000;
  test.each([
    // [headers, tokens needed, expected wait ms]
    [{ 'x-ratelimit-remaining-tokens': '5000', 'x-ratelimit-reset-tokens': '6m0s' }, 1200, 0],
    [{ 'x-ratelimit-remaining-tokens': '800', 'x-ratelimit-reset-tokens': '2s' }, 1200, 2000],
    [{ 'x-ratelimit-remaining-tokens': '800', 'x-ratelimit-reset-tokens': '205ms' }, 1200, 205],
    [{ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1.5s' }, 10, 1500],
    [{ 'x-ratelimit-remaining-requests': '3', 'x-ratelimit-reset-requests': '1.5s' }, 10, 0],
    // The pacer waits at most a minute; after that the call goes ahead and the provider answers for itself.
    [{ 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '1h30m43.2s' }, 900, 60000],
    [{ 'content-type': 'application/json' }, 900, 0],
  ] as const)('%j needing %d tokens waits %d ms', (headers, tokens, expected) => {
    const p = new Pacer();
    p.observe('ep', headers, now);
    expect(p.delayFor('ep', tokens, now)).toBe(expected);
  });

  test('endpoints are paced independently and forget() clears what was known', () => {
    const p = new Pacer();
    p.observe('a', { 'x-ratelimit-remaining-tokens': '10', 'x-ratelimit-reset-tokens': '3s' }, now);
    expect(p.delayFor('a', 100, now)).toBe(3000);
    expect(p.delayFor('b', 100, now)).toBe(0);
    p.forget('a');
    expect(p.delayFor('a', 100, now)).toBe(0);
  });
});
