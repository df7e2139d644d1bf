import { ApplicationFailure } from '@temporalio/common';
import { APIUserAbortError } from 'openai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  connectionFailureOf,
  databaseOutageInterceptor,
  nonRetryableFailure,
  toApplicationFailure,
} from '../../activities/failures';
import { DamagedRecordError, readJson } from '../../state/file/fs';
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

describe('connectionFailureOf: a database away, not a request bad', () => {
  test('a real refused connection (node-postgres to a closed loopback port) is one, named', async () => {
    const { Client } = await import('pg');
    const server = (await import('node:net')).createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((r) => server.close(() => r()));
    const c = new Client({ host: '127.0.0.1', port, user: 'x', database: 'x', connectionTimeoutMillis: 2000 });
    const err = await c.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(connectionFailureOf(err)).toMatch(/ECONNREFUSED/);
  });

  const withCode = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});
  test.each<[string, unknown]>([
    ['a reset socket', withCode('read ECONNRESET', 'ECONNRESET')],
    ['the server shutting down (57P01)', withCode('terminating connection due to administrator command', '57P01')],
    ['the server starting (57P03)', withCode('the database system is starting up', '57P03')],
    ['a connection exception (08006)', withCode('connection failure', '08006')],
    ['a connection lost under a query', new Error('Connection terminated unexpectedly')],
    ['every address refused (AggregateError)', new AggregateError([withCode('x', 'ECONNREFUSED')], 'all failed')],
    [
      'one wrapped as a cause',
      new Error('ledger read failed', { cause: withCode('connect ECONNREFUSED', 'ECONNREFUSED') }),
    ],
  ])('%s is one', (_, err) => {
    expect(connectionFailureOf(err)).toBeDefined();
  });

  test.each<[string, unknown]>([
    ['a syntax error (42601)', withCode('syntax error at or near "selec"', '42601')],
    ['a unique violation (23505)', withCode('duplicate key value', '23505')],
    ['a missing file', withCode('no such file', 'ENOENT')],
    ['a failure ARGUS already named', nonRetryableFailure(FailureType.InvalidCatalog, 'bad catalog')],
    ['not an error at all', 'ECONNREFUSED'],
  ])('%s is not', (_, err) => {
    expect(connectionFailureOf(err)).toBeUndefined();
  });

  test('DatabaseUnavailable is retryable: the retry policies never name it', () => {
    expect(NON_RETRYABLE_FAILURE_TYPES).not.toContain(FailureType.DatabaseUnavailable);
  });
});

describe('databaseOutageInterceptor: how an activity failure leaves the worker', () => {
  const through = async (err: unknown): Promise<unknown> => {
    const inbound = databaseOutageInterceptor({} as never).inbound!;
    return inbound.execute!({ args: [], headers: {} }, () => Promise.reject(err)).then(
      () => undefined,
      (e: unknown) => e,
    );
  };

  test('a database away: retryable DatabaseUnavailable naming the socket error', async () => {
    const f = (await through(
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5999'), { code: 'ECONNREFUSED' }),
    )) as ApplicationFailure;
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f.type).toBe(FailureType.DatabaseUnavailable);
    expect(f.nonRetryable).toBe(false);
    expect(f.message).toMatch(/unreachable: connect ECONNREFUSED 127\.0\.0\.1:5999/);
  });

  test('a damaged state record, read for real from disk: non-retryable SweepStateDamaged naming the file', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-damaged-'));
    const file = path.join(dir, 'meta.json');
    writeFileSync(file, '{"sweepId": ');
    const read = await readJson(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(read).toBeInstanceOf(DamagedRecordError);
    const f = (await through(new Error('page step failed', { cause: read }))) as ApplicationFailure;
    expect(f.type).toBe(FailureType.SweepStateDamaged);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain(file);
    expect(NON_RETRYABLE_FAILURE_TYPES).toContain(FailureType.SweepStateDamaged);
  });

  test('anything else passes through as it was', async () => {
    const plain = new Error('something else');
    expect(await through(plain)).toBe(plain);
  });
});
