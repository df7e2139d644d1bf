// The state store contract, run against both stores: the file store in a temp folder and the PostgreSQL store on
// a throwaway cluster (test/support/postgres.ts). Missing state is an error naming the store, a later review stage
// wins whatever the writers' names, write rounds merge, the audit trail's applied index follows writes and undos,
// and the PostgreSQL schema is created once, versioned, by concurrent openers.
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import {
  SweepStateMissing,
  type SweepMeta,
  CALIBRATION_KEYS,
  type StateStore,
  type AuditEntry,
} from '../../state/store';
import { fileStateStore } from '../../state/file/store';
import { openPgStateStore, type PgStateStore } from '../../state/postgres/store';
import { STATE_SCHEMA_VERSION } from '../../state/postgres/schema';
import { pgAnswers } from '../../state/postgres/answers';
import type { Proposal } from '../../domain/proposal';
import { startPostgres, type PgServer } from '../support/postgres';
import { Pacer } from '../../llm/pacer';

jest.setTimeout(60_000);

let server: PgServer;
let url: string;
const opened: StateStore[] = [];

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase('state');
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
  await server?.stop();
});

async function pg(schema = 'argus_state'): Promise<PgStateStore> {
  const s = await openPgStateStore(url, { schema });
  opened.push(s);
  return s;
}

const stores: [string, () => Promise<StateStore>][] = [
  ['file', async () => fileStateStore(mkdtempSync(path.join(os.tmpdir(), 'state-')))],
  ['postgres', () => pg()],
];

const meta = (ledgerKey: string, auditFile: string): SweepMeta => ({
  sweepId: ledgerKey.split('@')[0]!,
  ledgerKey,
  catalogRef: { kind: 'demo' },
  catalogKey: '/x.json',
  catalogLabel: '/x.json',
  catalogName: 'x',
  auditFile,
  startedAt: '2026-12-01T00:00:00.000Z',
});
const proposal = (id: string): Proposal => ({
  id,
  entityId: 'raw.orders',
  agent: 'pii-classifier',
  change: { kind: 'pii_tag', column: 'email', category: 'email', confidence: 0.9, explanation: 'x' },
  evidence: [],
});
let n = 0;
const key = () => `sweep/t/${++n}@run-${process.pid}-${Date.now()}`;

describe.each(stores)('%s state store', (_kind, open) => {
  test('state that is not there is SweepStateMissing naming the store, never an empty page', async () => {
    const store = await open();
    const ledger = store.ledger(key());
    for (const read of [
      () => ledger.meta(),
      () => ledger.proposals(0),
      () => ledger.outcomes(0),
      () => ledger.pageIds(0),
    ]) {
      const err = await read().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SweepStateMissing);
      expect((err as Error).message).toContain(store.kind === 'file' ? store.where : 'PostgreSQL state store');
      expect((err as Error).message).not.toContain(url);
    }
    await ledger.writePageIds(0, ['raw.orders']);
    expect(await ledger.proposals(0)).toEqual([]);
    expect(await ledger.outcomes(0)).toEqual([]);
  });

  test('a later review stage wins whatever the writers are called; a rewrite replaces its own outcomes', async () => {
    const store = await open();
    const k = key();
    const ledger = store.ledger(k);
    await ledger.writeMeta(meta(k, store.auditKey({ kind: 'file', key: '/x.json', label: '/x.json' }, 'x')));
    expect((await ledger.meta()).ledgerKey).toBe(k);
    await ledger.writePageIds(0, ['raw.orders']);
    await ledger.writeProposals(0, 'pii-classifier', [proposal('p1'), proposal('p2'), proposal('p3')]);
    const o = (id: string, decision: 'approved' | 'rejected' | 'not_reviewed', reviewer: string) => ({
      proposalId: id,
      decision,
      reason: reviewer,
      reviewer,
    });
    // Written in the reverse of their stages, and with tags that sort the other way round.
    await ledger.putOutcomes(0, 'human', 'a-human', [o('p1', 'rejected', 'human:ann')]);
    await ledger.putOutcomes(0, 'awaiting', 'b-awaiting', [
      o('p1', 'not_reviewed', 'none'),
      o('p2', 'not_reviewed', 'none'),
    ]);
    await ledger.putOutcomes(0, 'gate', 'z-gate', [
      o('p1', 'approved', 'gate'),
      o('p2', 'approved', 'gate'),
      o('p3', 'approved', 'gate'),
    ]);
    const byId = new Map((await ledger.outcomes(0)).map((x) => [x.proposalId, x.reviewer]));
    expect(Object.fromEntries(byId)).toEqual({ p1: 'human:ann', p2: 'none', p3: 'gate' });
    await ledger.putOutcomes(0, 'human', 'a-human', [o('p2', 'approved', 'human:bo')]);
    const again = new Map((await ledger.outcomes(0)).map((x) => [x.proposalId, x.reviewer]));
    expect(Object.fromEntries(again)).toEqual({ p1: 'none', p2: 'human:bo', p3: 'gate' });
    expect((await ledger.proposals(0)).map((p) => p.id)).toEqual(['p1', 'p2', 'p3']);
    await ledger.writeProposals(0, 'pii-classifier', [proposal('p1')]);
    expect((await ledger.proposals(0)).map((p) => p.id)).toEqual(['p1']);
  });

  test('write rounds are kept apart and merged for the report; intents of every round are read back', async () => {
    const store = await open();
    const ledger = store.ledger(key());
    await ledger.writePageIds(3, ['raw.orders']);
    const w = (written: string[]) => ({ written, already: [], keptHuman: [], conflicts: [], notes: {} });
    expect(await ledger.allWrites(3)).toBeUndefined();
    await ledger.writeWrites(3, w(['p1']));
    expect(await ledger.writes(3, 1)).toBeUndefined();
    await ledger.writeWrites(3, { ...w(['p2']), notes: { p9: 'kept' } }, 1);
    expect((await ledger.writes(3))?.written).toEqual(['p1']);
    expect(await ledger.allWrites(3)).toMatchObject({ written: ['p1', 'p2'], notes: { p9: 'kept' } });
    const line = (id: string) => JSON.stringify({ type: 'write', proposalId: id });
    await ledger.writeIntent(3, [line('p1')]);
    await ledger.writeIntent(3, [line('p2')], 2);
    expect((await ledger.intent(3)).map((r) => r.proposalId).sort()).toEqual(['p1', 'p2']);
    await ledger.writeFailures(3, 'load', [
      { entity: 'a', stage: 'load', category: 'x', retryable: false, message: 'm' },
    ]);
    expect((await ledger.failures(3)).map((f) => f.entity)).toEqual(['a']);
    expect(await ledger.pageNumbers()).toEqual([3]);
  });

  test('the audit trail: applied follows writes and undos, pages are logged per round, lines read back in order', async () => {
    const store = await open();
    const audit = store.audit(store.auditKey({ kind: 'file', key: `/cat-${Math.random()}.json`, label: 'c' }, 'c'));
    const write = (id: string, ledgerKey: string): AuditEntry => ({
      type: 'write',
      time: 't',
      sweepId: ledgerKey.split('@')[0]!,
      ledgerKey,
      proposalId: id,
      entityId: 'e',
      change: { kind: 'pii_tag', column: 'email', category: 'email', confidence: 0.9, explanation: 'x' },
      reviewer: 'gate',
      before: null,
      after: 'pii:email',
    });
    const page = (ledgerKey: string, p: number, round?: number): AuditEntry => ({
      type: 'page',
      time: 't',
      sweepId: 's',
      ledgerKey,
      page: p,
      ...(round ? { round } : {}),
      decisions: 0,
      writes: 1,
    });
    await audit.append([write('p1', 's@1'), JSON.stringify(write('p2', 's@1')), page('s@1', 0)]);
    expect(await audit.pageLogged('s@1', 0)).toBe(true);
    expect(await audit.pageLogged('s@1', 0, 1)).toBe(false);
    expect(await audit.pageLogged('s@1', 1)).toBe(false);
    await audit.append([
      { type: 'undo', time: 't', sweepId: 's', proposalId: 'p1', entityId: 'e', undoneBy: 'me' },
      page('s@1', 0, 1),
    ]);
    expect(await audit.pageLogged('s@1', 0, 1)).toBe(true);
    const applied = await audit.applied(['p1', 'p2', 'p3']);
    expect(applied.has('p1')).toBe(false);
    expect(applied.get('p2')).toEqual({ sweepId: 's', ledgerKey: 's@1' });
    expect((await audit.readAll()).map((e) => e.type)).toEqual(['write', 'write', 'page', 'undo', 'page']);
    expect((await store.findSweepMetas('nobody')).length).toBe(0);
  });

  test('exclusive runs one holder of a key at a time, across two store instances (two workers)', async () => {
    const a = await open();
    const b = a.kind === 'postgres' ? await pg() : a;
    const k = `lock-${Math.random()}`;
    const events: string[] = [];
    const hold = (s: StateStore, name: string) =>
      s.exclusive(k, async () => {
        events.push(`${name}+`);
        await new Promise((r) => setTimeout(r, 150));
        events.push(`${name}-`);
      });
    await Promise.all([hold(a, 'a'), hold(b, 'b')]);
    expect(events.join('')).toMatch(/^(a\+a-b\+b-|b\+b-a\+a-)$/);
  });
});

describe('the calibration book in the PostgreSQL store', () => {
  test("one worker's saved ratios are loaded by another; a save replaces; the book keeps CALIBRATION_KEYS keys", async () => {
    const schema = `cal_${process.pid}`;
    const a = (await pg(schema)).calibration;
    const b = (await pg(schema)).calibration;
    expect(await b.load(['m|describe'])).toEqual({});
    await a.save('m|describe', [0.3, 0.4]);
    await a.save('m|describe', [0.3, 0.4, 0.5]);
    await a.save('m|review', [0.9]);
    expect(await b.load(['m|describe', 'm|review', 'n|describe'])).toEqual({
      'm|describe': [0.3, 0.4, 0.5],
      'm|review': [0.9],
    });
    for (let i = 0; i < CALIBRATION_KEYS; i++) await b.save(`k${i}`, [i / 1000]);
    const kept = await a.load(['m|describe', 'm|review', 'k0', `k${CALIBRATION_KEYS - 1}`]);
    expect(Object.keys(kept).sort()).toEqual(['k0', `k${CALIBRATION_KEYS - 1}`]);
    const c = new Client({ connectionString: url });
    await c.connect();
    try {
      const { rows } = await c.query<{ n: number }>(`select count(*)::int as n from ${schema}.calibration`);
      expect(rows[0]!.n).toBe(CALIBRATION_KEYS);
    } finally {
      await c.end();
    }
  });
});

describe('the answer memory, in both stores', () => {
  test.each(stores)(
    '%s: an answer kept by one worker is recalled by another; forgotten, it is gone',
    async (_n, open) => {
      const a = await open();
      const b = a.kind === 'postgres' ? await open() : a;
      const d = (i: number) => `${'ab'}${i.toString(16).padStart(30, '0')}`;
      expect(await b.answers.recall(d(1))).toBeUndefined();
      await a.answers.keep(d(1), { content: '{"ok":true}', cutShort: false });
      await a.answers.keep(d(2), { content: '{"entities":[', cutShort: true });
      // Kept again (a retry that was answered anew): the newer answer replaces it.
      await a.answers.keep(d(1), { content: '{"ok":false}', cutShort: false });
      expect(await b.answers.recall(d(1))).toEqual({ content: '{"ok":false}', cutShort: false });
      expect(await b.answers.recall(d(2))).toEqual({ content: '{"entities":[', cutShort: true });
      await b.answers.forget([d(1), d(3)]);
      expect(await a.answers.recall(d(1))).toBeUndefined();
      expect(await a.answers.recall(d(2))).toBeDefined();
    },
  );

  test('PostgreSQL keeps at most its bound, the least recently used going first', async () => {
    const store = await pg(`ans_${process.pid}`);
    const book = pgAnswers(store, 3);
    const d = (i: number) => i.toString(16).padStart(32, '0');
    for (const i of [1, 2, 3]) await book.keep(d(i), { content: `{"n":${i}}`, cutShort: false });
    await book.recall(d(1));
    for (const i of [4, 5, 6]) await book.keep(d(i), { content: `{"n":${i}}`, cutShort: false });
    const left = [];
    for (const i of [1, 2, 3, 4, 5, 6]) if (await book.recall(d(i))) left.push(i);
    expect(left).toEqual([4, 5, 6]);
  });
});

describe('PostgreSQL state schema', () => {
  test('is created once by concurrent openers, records its version and one store id', async () => {
    const stores = await Promise.all([pg('fresh_one'), pg('fresh_one'), pg('fresh_one')]);
    expect(new Set(stores.map((s) => s.id)).size).toBe(1);
    const c = new Client({ connectionString: url });
    await c.connect();
    try {
      const { rows } = await c.query<{ version: number }>(
        'select version from fresh_one.schema_version order by version',
      );
      expect(rows.map((r) => r.version)).toEqual(Array.from({ length: STATE_SCHEMA_VERSION }, (_, i) => i + 1));
      // A newer ARGUS migrated it further: this one refuses to use it rather than guess.
      await c.query(`insert into fresh_one.schema_version (version) values (${STATE_SCHEMA_VERSION + 1})`);
    } finally {
      await c.end();
    }
    await expect(openPgStateStore(url, { schema: 'fresh_one' })).rejects.toThrow(/newer than this ARGUS/);
  });

  test('a store that cannot be reached fails with a message that does not carry the password', async () => {
    const bad = url.replace(/:\d+\//, ':1/').replace('//', '//argus:hunter2-secret@');
    const err = await openPgStateStore(bad).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/cannot open the PostgreSQL state store/);
    expect(err?.message).not.toContain('hunter2-secret');
  });
});

describe('fleet limits in the PostgreSQL store', () => {
  test("one worker's rate-limit figures pace another worker's next call", async () => {
    const [a, b] = [await pg(), await pg()];
    const now = Date.now();
    const key = `https://api.example/v1|m|KEY-${Math.random()}`;
    await new Pacer(a.fleet).observe(
      key,
      { 'x-ratelimit-remaining-tokens': '10', 'x-ratelimit-reset-tokens': '3s' },
      now,
    );
    const other = new Pacer(b.fleet);
    expect(other.delayFor(key, 500, now)).toBe(0);
    await other.sync(key, now);
    expect(other.delayFor(key, 500, now)).toBe(3000);
    // Once every window it spoke of has reset, the figures are ignored.
    const later = new Pacer(b.fleet);
    await later.sync(key, now + 4000);
    expect(later.delayFor(key, 500, now + 4000)).toBe(0);
  });

  test('in-flight slots hold across stores; a spent quota recorded by one is seen by the other', async () => {
    const [a, b] = [await pg(), await pg()];
    const key = `inflight:s:${Math.random()}`;
    const r1 = await a.fleet.acquireSlot(key, 1, () => undefined);
    let waits = 0;
    const second = b.fleet.acquireSlot(key, 1, () => waits++);
    await new Promise((r) => setTimeout(r, 300));
    expect(waits).toBeGreaterThan(0);
    await r1();
    const r2 = await second;
    await r2();
    expect(await b.fleet.exhausted('s1', 'ep')).toBeUndefined();
    await a.fleet.markExhausted('s1', 'ep', { reason: 'daily quota' });
    await a.fleet.markExhausted('s1', 'ep', { reason: 'later' });
    expect(await b.fleet.exhausted('s1', 'ep')).toEqual({ reason: 'daily quota' });
  });
});
