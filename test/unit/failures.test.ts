import { ApplicationFailure } from '@temporalio/common';
import { APIUserAbortError } from 'openai';
import { nonRetryableFailure, toApplicationFailure } from '../../activities/failures';
import { FailureType, NON_RETRYABLE_FAILURE_TYPES } from '../../domain/ids';
import { ProviderError, type ProviderErrorKind } from '../../llm/errors';
import { SK } from '../support/fake-secrets';

// The one boundary where a provider error becomes a Temporal failure: its type, whether Temporal may retry it,
// the delay it asks for, and details that carry the evidence but never a key.
const KEY = `${SK}boundary-test-0123456789abcdef`;

const provider = (kind: ProviderErrorKind, retryAfterSeconds: number | null = null) =>
  new ProviderError(kind, {
    endpointId: 'primary',
    status: kind === 'burst' || kind === 'exhausted' ? 429 : kind === 'auth' ? 401 : 500,
    body: `{"error":{"message":"refused for key ${KEY}"}}`,
    headers: { authorization: `Bearer ${KEY}`, 'x-request-id': 'req-1' },
    requestId: 'req-1',
    retryAfterSeconds,
  });

describe('toApplicationFailure', () => {
  test.each<[ProviderErrorKind, string, boolean, number | null, number | undefined]>([
    ['burst', FailureType.ProviderBurst, false, 2.5, 2500],
    ['burst', FailureType.ProviderBurst, false, 0.01, 100],
    ['burst', FailureType.ProviderBurst, false, null, undefined],
    ['exhausted', FailureType.BudgetExhausted, true, 3600, undefined],
    ['server', FailureType.ProviderServerError, false, null, undefined],
    ['network', FailureType.ProviderServerError, false, null, undefined],
    ['timeout', FailureType.ProviderTimeout, false, null, undefined],
    ['malformed_output', FailureType.MalformedOutput, false, null, undefined],
    ['auth', FailureType.ProviderAuth, true, null, undefined],
    ['bad_request', FailureType.ProviderBadRequest, true, null, undefined],
  ])('%s → %s (nonRetryable %s, retry-after %s s → delay %s ms)', (kind, type, nonRetryable, after, delay) => {
    const f = toApplicationFailure(provider(kind, after));
    expect(f).toBeInstanceOf(ApplicationFailure);
    const af = f as ApplicationFailure;
    expect({ type: af.type, nonRetryable: af.nonRetryable }).toEqual({ type, nonRetryable });
    expect(af.nextRetryDelay === undefined ? undefined : Number(af.nextRetryDelay)).toBe(delay);
    const details = JSON.stringify(af.details);
    expect(details).toContain('"endpointId":"primary"');
    expect(details).toContain('req-1');
    expect(details).not.toContain(KEY);
    expect(af.message).not.toContain(KEY);
  });

  test('anything else passes through unchanged: a cancelled call, a plain error, a non-error', () => {
    const abort = new APIUserAbortError();
    const plain = new Error('disk full');
    expect(toApplicationFailure(abort)).toBe(abort);
    expect(toApplicationFailure(plain)).toBe(plain);
    expect(toApplicationFailure('text')).toBe('text');
  });
});

describe("ProviderError.retryable and failures of ARGUS's own making", () => {
  test.each<[ProviderErrorKind, boolean]>([
    ['burst', true],
    ['server', true],
    ['network', true],
    ['timeout', true],
    ['malformed_output', true],
    ['exhausted', false],
    ['auth', false],
    ['bad_request', false],
  ])('%s: retryable %s, and the failure agrees', (kind, retryable) => {
    const e = provider(kind);
    expect(e.retryable).toBe(retryable);
    const f = toApplicationFailure(e) as ApplicationFailure;
    expect(f.nonRetryable).toBe(!retryable);
    // The workflows' retry policies name the same types (a network error shares the server's type).
    expect(NON_RETRYABLE_FAILURE_TYPES.includes(f.type!)).toBe(!retryable);
  });

  test('nonRetryableFailure: the type, the message as given, details when there are some', () => {
    const f = nonRetryableFailure(FailureType.InvalidCatalog, 'no such file: /data/x.json');
    expect({ type: f.type, message: f.message, nonRetryable: f.nonRetryable }).toEqual({
      type: FailureType.InvalidCatalog,
      message: 'no such file: /data/x.json',
      nonRetryable: true,
    });
    expect(f.details ?? []).toEqual([]);
    expect(nonRetryableFailure(FailureType.BudgetExhausted, 'spent', { endpointId: 'a' }).details).toEqual([
      { endpointId: 'a' },
    ]);
  });
});
