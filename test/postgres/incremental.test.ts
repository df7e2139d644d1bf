// Incremental sweeps of a live PostgreSQL database, on real parts only: pagila in a throwaway cluster, real workers
// on the test Temporal server keeping their sweep state (and the catalog's memory) in a PostgreSQL state store,
// every agent and the review on the loopback fake provider. Night 1 writes; night 2, on another worker, judges
// nothing and calls no model; a comment a person adds re-judges that table and the views that read it, nothing
// else; a wrong schema list trips the fail-safe and loses no memory; a person's rejection is not asked again.
// The adapter's own fingerprints are checked on a scratch database: one statement per call, exactly the relation
// whose facts changed.
import * as os from 'node:os';
import * as path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { Client } from 'pg';
import type { Client as TemporalClient, Connection } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleOnce, startTestWorker, type TestWorker } from '../support/argus-worker';
import { connectTestClient, uniqueId } from '../support/temporal-env';
import { loadSql, startPostgres, type PgServer } from '../support/postgres';
import { judgedByPass, judgedIds, sorted } from '../support/incremental';
import { SK } from '../support/fake-secrets';
import { startFakeProvider, type FakeProvider } from '../../fakes/provider';
import { openPgStateStore, type PgStateStore } from '../../state/postgres/store';
import { PostgresCatalogAdapter } from '../../catalog/postgres/adapter';
import type { SweepReport } from '../../domain/report';
import type { EndpointConfig, SweepInput } from '../../domain/sweep';
import type { PendingReview, SweepProgress } from '../../workflows/messages';

jest.setTimeout(600_000);

const DUMPS = path.resolve(__dirname, '../../../shared/testdata/postgres');
const KEY_ENV = 'ARGUS_TEST_PG_INCREMENTAL_KEY';
const env: NodeJS.ProcessEnv = { ...process.env, [KEY_ENV]: `${SK}pg-incremental-not-a-real-key-12` };
const FAKE = '/s/ok/r/correct';
const taskQueue = uniqueId('tq-pg-incremental');

let server: PgServer;
let fp: FakeProvider;
let store: PgStateStore;
let temporal: { client: TemporalClient; connection: Connection };
let bundle: WorkflowBundleWithSourceMap;
/** The worker sweeping now: worker A for night 1, then worker B (another state folder, the same state store). */
let worker: TestWorker | undefined;

beforeAll(async () => {
  fp = await startFakeProvider({ port: 0 });
  server = await startPostgres();
  const stateUrl = await server.createDatabase('argus_incremental_state');
  env.ARGUS_STATE_URL = stateUrl;
  store = await openPgStateStore(stateUrl);
  temporal = await connectTestClient();
  bundle = await bundleOnce();
});

afterAll(async () => {
  await worker?.stop();
  await temporal?.connection.close();
  await store?.close();
  await server?.stop();
  await fp?.close();
});

/** A worker on the file's task queue with a state folder of its own; the state store is ARGUS_STATE_URL's. */
async function startWorker(name: string): Promise<TestWorker> {
  await worker?.stop();
  worker = await startTestWorker(bundle, taskQueue, env, mkdtempSync(path.join(os.tmpdir(), `argus-state-${name}-`)));
  return worker;
}

const endpoint = (): EndpointConfig => ({
  id: 'fake',
  baseUrl: fp.baseUrl('ok', 'correct'),
  model: 'pg-incremental',
  apiKeyEnv: KEY_ENV,
  structuredOutput: 'json_schema',
  maxOutputTokens: 900,
  timeoutMs: 20_000,
  maxInFlight: 4,
});

/** Model agents and model review on the fake provider: the same judgment every night. */
const modelInput = (connectionEnv: string, schemas = ['public']): SweepInput => ({
  catalog: { kind: 'postgres', connectionEnv, schemas },
  review: 'model',
  agentBackend: 'model',
  endpoints: [endpoint()],
});

const sweep = (input: SweepInput) =>
  temporal.client.workflow.execute('sweepWorkflow', {
    taskQueue,
    workflowId: uniqueId('sweep/pg-incremental'),
    args: [input],
  }) as Promise<SweepReport>;

const fakeCalls = () => fp.stats()[FAKE]?.calls ?? 0;

async function connect(url: string): Promise<Client> {
  const c = new Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

/** Tables, views and materialized views of a schema as ARGUS lists them (partitions folded into their parent). */
async function entityIds(db: Client, schema: string): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT n.nspname || '.' || c.relname AS id FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm') AND NOT c.relispartition ORDER BY 1`,
    [schema],
  );
  return r.rows.map((x) => x.id);
}

/** The views and materialized views whose definitions read `relation`, directly or through other views. */
async function viewsReading(db: Client, relation: string): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `WITH RECURSIVE deps AS (
       SELECT DISTINCT r.ev_class AS view_oid, d.refobjid AS dep
         FROM pg_rewrite r
         JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass
        WHERE d.refobjid <> r.ev_class),
     readers AS (
       SELECT view_oid FROM deps WHERE dep = $1::regclass
       UNION
       SELECT d.view_oid FROM deps d JOIN readers x ON d.dep = x.view_oid)
     SELECT n.nspname || '.' || c.relname AS id
       FROM readers JOIN pg_class c ON c.oid = readers.view_oid JOIN pg_namespace n ON n.oid = c.relnamespace
      ORDER BY 1`,
    [relation],
  );
  return r.rows.map((x) => x.id);
}

const adapterFor = (connectionEnv: string, schemas: string[]) =>
  new PostgresCatalogAdapter({ kind: 'postgres', connectionEnv, schemas, tagTable: 'argus.column_tags' }, env);

/** The entity ids whose value differs between two fingerprint maps (or is in one only). */
function differing(a: Map<string, string>, b: Map<string, string>): string[] {
  return sorted(new Set([...a.keys(), ...b.keys()].filter((id) => a.get(id) !== b.get(id))));
}

describe('the adapter fingerprint', () => {
  let db: Client;
  let adapter: PostgresCatalogAdapter;

  beforeAll(async () => {
    const url = await server.createDatabase('fingerprints');
    env.ARGUS_PG_FP_URL = url;
    db = await connect(url);
    await db.query(`
      CREATE SCHEMA fp;
      CREATE TABLE fp.parent (id int PRIMARY KEY, name text);
      CREATE TABLE fp.child (id int PRIMARY KEY, parent_id int, email text NOT NULL, note varchar(20));
      CREATE VIEW fp.child_view AS SELECT c.id, c.email FROM fp.child c WHERE c.id > 0;
      CREATE VIEW fp.parent_view AS SELECT p.id, p.name FROM fp.parent p;
      CREATE TABLE fp.events (at date NOT NULL, what text) PARTITION BY RANGE (at);
      CREATE TABLE fp.events_2024 PARTITION OF fp.events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');`);
    adapter = adapterFor('ARGUS_PG_FP_URL', ['fp']);
  });
  afterAll(async () => {
    await adapter?.close();
    await db?.end();
  });

  test('one statement per call, a hex digest per id, the same on every read and in a fresh adapter', async () => {
    const { ids } = await adapter.snapshot();
    expect(ids).toEqual(['fp.child', 'fp.child_view', 'fp.events', 'fp.parent', 'fp.parent_view']);
    await adapter.fingerprints(ids); // ARGUS's own tables are made on the first read, as every read does
    const spy = jest.spyOn(Client.prototype, 'query');
    let first: Map<string, string>;
    try {
      first = await adapter.fingerprints([...ids, 'fp.no_such_table', 'fp.events_2024']);
      // One round trip for the whole list, not one per relation.
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
    // A partition is folded into its parent, and an id naming nothing gets no fingerprint.
    expect(sorted(first.keys())).toEqual(ids);
    for (const v of first.values()) expect(v).toMatch(/^[0-9a-f]{64}$/);
    expect(await adapter.fingerprints(ids)).toEqual(first);
    const fresh = adapterFor('ARGUS_PG_FP_URL', ['fp']);
    try {
      expect(await fresh.fingerprints(ids)).toEqual(first);
    } finally {
      await fresh.close();
    }
  });

  // Each change, the relation whose fingerprint it must change (and no other); `undo` takes it back, and the
  // fingerprints must then all be as before (a fingerprint of facts, not of time or object ids).
  const changes: [what: string, sql: string, changes: string[], undo: string][] = [
    [
      'a table comment',
      `COMMENT ON TABLE fp.parent IS 'Parents.'`,
      ['fp.parent'],
      `COMMENT ON TABLE fp.parent IS NULL`,
    ],
    [
      'a column comment',
      `COMMENT ON COLUMN fp.child.note IS 'Free text.'`,
      ['fp.child'],
      `COMMENT ON COLUMN fp.child.note IS NULL`,
    ],
    [
      "a view's comment",
      `COMMENT ON VIEW fp.child_view IS 'Children.'`,
      ['fp.child_view'],
      `COMMENT ON VIEW fp.child_view IS NULL`,
    ],
    [
      'a column added',
      `ALTER TABLE fp.parent ADD COLUMN extra int`,
      ['fp.parent'],
      `ALTER TABLE fp.parent DROP COLUMN extra`,
    ],
    [
      'a column type',
      `ALTER TABLE fp.child ALTER COLUMN note TYPE varchar(40)`,
      ['fp.child'],
      `ALTER TABLE fp.child ALTER COLUMN note TYPE varchar(20)`,
    ],
    [
      'not null',
      `ALTER TABLE fp.parent ALTER COLUMN name SET NOT NULL`,
      ['fp.parent'],
      `ALTER TABLE fp.parent ALTER COLUMN name DROP NOT NULL`,
    ],
    [
      'a foreign key',
      `ALTER TABLE fp.child ADD CONSTRAINT child_parent_fk FOREIGN KEY (parent_id) REFERENCES fp.parent (id)`,
      ['fp.child'],
      `ALTER TABLE fp.child DROP CONSTRAINT child_parent_fk`,
    ],
    [
      'a primary key',
      `ALTER TABLE fp.events ADD PRIMARY KEY (at)`,
      ['fp.events'],
      `ALTER TABLE fp.events DROP CONSTRAINT events_pkey`,
    ],
    [
      "a view's definition",
      `CREATE OR REPLACE VIEW fp.child_view AS SELECT c.id, c.email FROM fp.child c WHERE c.id > 1`,
      ['fp.child_view'],
      `CREATE OR REPLACE VIEW fp.child_view AS SELECT c.id, c.email FROM fp.child c WHERE c.id > 0`,
    ],
    [
      "ARGUS's tag on a column",
      `INSERT INTO argus.column_tags (schema_name, table_name, column_name, tag, category, confidence, explanation, proposal_id)
       VALUES ('fp', 'child', 'email', 'pii', 'email', 0.9, 'An e-mail address.', 'p-test')`,
      ['fp.child'],
      `DELETE FROM argus.column_tags WHERE proposal_id = 'p-test'`,
    ],
    [
      "ARGUS's record that a comment is its own",
      `INSERT INTO argus.comments_written (schema_name, relation_name, column_name, comment, proposal_id)
       VALUES ('fp', 'parent', '', 'Parents.', 'p-test')`,
      ['fp.parent'],
      `DELETE FROM argus.comments_written WHERE proposal_id = 'p-test'`,
    ],
  ];

  test.each(changes)(
    '%s changes the fingerprint of exactly that relation, and undoing it restores it',
    async (_what, sql, expected, undo) => {
      const { ids } = await adapter.snapshot();
      const before = await adapter.fingerprints(ids);
      await db.query(sql);
      const during = await adapter.fingerprints(ids);
      await db.query(undo);
      expect(differing(before, during)).toEqual(expected);
      expect(await adapter.fingerprints(ids)).toEqual(before);
    },
  );

  test("ARGUS's tables dropped since: they are made again and the fingerprints are the same", async () => {
    const { ids } = await adapter.snapshot();
    const before = await adapter.fingerprints(ids);
    await db.query('DROP SCHEMA argus CASCADE');
    expect(await adapter.fingerprints(ids)).toEqual(before);
    const made = await db.query(
      `SELECT to_regclass('argus.column_tags') AS t, to_regclass('argus.comments_written') AS c`,
    );
    expect(made.rows[0]).toEqual({ t: 'argus.column_tags', c: 'argus.comments_written' });
  });
});

describe('pagila, night after night, two workers on one PostgreSQL state store', () => {
  let db: Client;
  let ids: string[];
  let night1: SweepReport;

  beforeAll(async () => {
    const url = await server.createDatabase('pagila_incremental');
    await loadSql(url, path.join(DUMPS, 'pagila.sql'));
    env.ARGUS_PG_URL = url;
    db = await connect(url);
    ids = await entityIds(db, 'public');
  });
  afterAll(async () => {
    await db?.end();
  });

  test('night 1 on worker A: model agents and model review judge every entity and write repairs', async () => {
    await startWorker('a');
    const calls = fakeCalls();
    night1 = await sweep(modelInput('ARGUS_PG_URL'));
    expect(night1.failures).toEqual([]);
    expect(night1.partial).toBe(false);
    expect(night1.entities.requested).toBe(ids.length);
    expect(night1.incremental).toMatchObject({
      new: ids.length,
      changed: 0,
      unchanged: 0,
      gone: 0,
      carriedOver: 0,
      judged: ids.length,
    });
    expect(night1.written).toBeGreaterThan(0);
    expect(night1.byKind.description.written).toBeGreaterThan(0);
    expect(night1.byKind.pii_tag.written).toBeGreaterThan(0);
    expect(night1.modelUsage.calls).toBeGreaterThan(0);
    expect(fakeCalls() - calls).toBe(night1.modelUsage.calls);
    // The sweep's passes reached their fixed point: nothing its own writes changed is left for the next night.
    expect(night1.incremental!.unsettled).toBe(0);
    expect(sorted((await judgedByPass(store, night1.sweepId))[0]!)).toEqual(ids);
  });

  test('night 2 on worker B (a fresh worker and state folder, the same state store): nothing judged, written or called', async () => {
    await startWorker('b');
    const calls = fakeCalls();
    const night2 = await sweep(modelInput('ARGUS_PG_URL'));
    expect(night2.failures).toEqual([]);
    expect(night2.partial).toBe(false);
    expect(night2.incremental).toMatchObject({
      new: 0,
      changed: 0,
      unchanged: ids.length,
      gone: 0,
      carriedOver: ids.length,
      judged: 0,
      rounds: 1,
      rejudged: 0,
      unsettled: 0,
    });
    expect(night2.written).toBe(0);
    expect(night2.proposals).toEqual([]);
    expect(night2.modelUsage.calls).toBe(0);
    expect(fakeCalls()).toBe(calls);
    expect(await judgedIds(store, night2.sweepId)).toEqual(new Set());
    // What night 1 wrote is still there and counted: the figures before night 2 are those after night 1.
    expect(night2.coverage.describedBefore).toBe(night1.coverage.describedAfter);
    expect(night2.piiGovernance.taggedBefore).toBe(night1.piiGovernance.tagged);
  });

  test('a comment a person adds re-judges that table and the views reading it, and nothing else', async () => {
    const table = 'public.country';
    const readers = await viewsReading(db, table);
    // pagila: customer_list, staff_list and sales_by_store join country.
    expect(readers.length).toBeGreaterThan(0);
    const expected = sorted([table, ...readers]);

    const adapter = adapterFor('ARGUS_PG_URL', ['public']);
    try {
      const before = await adapter.fingerprints(ids);
      await db.query(`COMMENT ON TABLE public.country IS 'Countries the shop has addresses in, one row each.'`);
      const after = await adapter.fingerprints(ids);
      // The adapter's fingerprint changes for the commented relation only; the views change through what they read.
      expect(differing(before, after)).toEqual([table]);
    } finally {
      await adapter.close();
    }

    const calls = fakeCalls();
    const r = await sweep(modelInput('ARGUS_PG_URL'));
    expect(r.failures).toEqual([]);
    expect(r.incremental).toMatchObject({
      new: 0,
      changed: expected.length,
      unchanged: ids.length - expected.length,
      gone: 0,
      carriedOver: ids.length - expected.length,
      judged: expected.length,
    });
    expect(sorted((await judgedByPass(store, r.sweepId))[0]!)).toEqual(expected);
    // Later passes (what this sweep's own writes changed) stay among them too.
    for (const id of await judgedIds(store, r.sweepId)) expect(expected).toContain(id);
    for (const p of r.proposals) expect(expected).toContain(p.entityId);
    expect(r.modelUsage.calls).toBe(fakeCalls() - calls);
    // A person's comment is never overwritten.
    expect((await db.query(`SELECT obj_description('public.country'::regclass, 'pg_class') AS d`)).rows[0].d).toBe(
      'Countries the shop has addresses in, one row each.',
    );

    // And the night after, nothing is left to judge.
    const next = await sweep(modelInput('ARGUS_PG_URL'));
    expect(next.incremental).toMatchObject({ judged: 0, carriedOver: ids.length });
    expect(next.modelUsage.calls).toBe(0);
  });

  // The memory of a PostgreSQL catalog is the database's, whatever the schema list: a list the memory has never
  // seen is checked against everything remembered, so a wrong one finds pagila gone; each list forgets only its own.
  test('a wrong schema list trips the fail-safe: the run is partial, the memory kept for the right list', async () => {
    await db.query(`CREATE SCHEMA pagila_archive; CREATE TABLE pagila_archive.old_rentals (rental_id int PRIMARY KEY)`);
    const wrong = await sweep(modelInput('ARGUS_PG_URL', ['pagila_archive']));
    const right = await sweep(modelInput('ARGUS_PG_URL'));
    // The following sweep with the right schemas carries everything over: nothing was forgotten.
    expect(right.incremental).toMatchObject({ gone: 0, judged: 0, carriedOver: ids.length });
    expect(right.modelUsage.calls).toBe(0);
    // The wrong list's sweep finds pagila's entities gone (the failure shows what it found instead).
    expect(wrong.incremental).toMatchObject({ gone: ids.length, failSafe: expect.stringMatching(/gone/) as unknown });
    expect(wrong.partial).toBe(true);
  });

  test('the fail-safe on the same schema list: a schema swapped for a near-empty one keeps the memory', async () => {
    // A restore gone wrong: `public` replaced by a schema holding one table. The schema list is the same, so this
    // is pagila's memory, and nearly all of it looks gone.
    await db.query(`ALTER SCHEMA public RENAME TO public_moved; CREATE SCHEMA public;
      CREATE TABLE public.stand_in (id int PRIMARY KEY, note text)`);
    // The adapter keeps a catalog's listing for a minute (the pages of one sweep must line up): a worker that has
    // not listed pagila in the last minute, as on the next night, lists the swapped schema.
    await startWorker('c');
    let failSafe: SweepReport;
    try {
      failSafe = await sweep(modelInput('ARGUS_PG_URL'));
    } finally {
      await db.query(`DROP SCHEMA public CASCADE; ALTER SCHEMA public_moved RENAME TO public`);
    }
    await startWorker('d');
    expect(failSafe.incremental).toMatchObject({ new: 1, gone: ids.length, carriedOver: 0, judged: 1 });
    expect(failSafe.incremental!.failSafe).toContain(`${ids.length} of the ${ids.length} entities remembered`);
    expect(failSafe.partial).toBe(true);
    expect(failSafe.partialReasons.join(' ')).toMatch(/gone/);

    const back = await sweep(modelInput('ARGUS_PG_URL'));
    // pagila's memory was kept: all of it carried over; the stand-in is the one entity gone (and forgotten).
    expect(back.incremental).toMatchObject({
      new: 0,
      changed: 0,
      gone: 1,
      carriedOver: ids.length,
      judged: 0,
    });
    expect(back.incremental!.failSafe).toBeUndefined();
    expect(back.partial).toBe(false);
    expect(back.written).toBe(0);
    expect(back.modelUsage.calls).toBe(0);
    const after = await sweep(modelInput('ARGUS_PG_URL'));
    expect(after.incremental).toMatchObject({ gone: 0, carriedOver: ids.length });
  });
});

describe("a person's rejection", () => {
  let db: Client;

  beforeAll(async () => {
    const url = await server.createDatabase('pagila_review');
    await loadSql(url, path.join(DUMPS, 'pagila.sql'));
    env.ARGUS_PG_REVIEW_URL = url;
    db = await connect(url);
    if (!worker) await startWorker('review');
  });
  afterAll(async () => {
    await db?.end();
  });

  const input: SweepInput = {
    catalog: { kind: 'postgres', connectionEnv: 'ARGUS_PG_REVIEW_URL', schemas: ['public'] },
    humanReview: { kinds: ['pii_tag'], deadline: '1h' },
  };

  /** Start a sweep and wait until it ends or waits for people; returns the handle and what waits. */
  async function startAndWait(): Promise<{
    handle: ReturnType<TemporalClient['workflow']['getHandle']>;
    pending: PendingReview[];
  }> {
    const handle = await temporal.client.workflow.start('sweepWorkflow', {
      taskQueue,
      workflowId: uniqueId('sweep/pg-incremental-review'),
      args: [input],
    });
    for (let i = 0; i < 1800; i++) {
      const desc = await handle.describe();
      if (desc.status.name !== 'RUNNING') return { handle, pending: [] };
      const p = await handle.query<SweepProgress>('progress');
      if (p.phase === 'awaiting_review')
        return { handle, pending: await handle.query<PendingReview[]>('pendingReviews') };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the sweep neither ended nor waited for people within 3 minutes');
  }

  const decide = (p: PendingReview, decision: 'approved' | 'rejected') => ({
    proposalId: p.proposalId,
    decision,
    reviewer: 'dana@example.org',
    time: new Date().toISOString(),
  });

  // The tags people approve are written after the sweep's last pass. They are ARGUS's own tags, which no reading
  // needs (the PII classifier only stops proposing another on that column): night 1 remembers their entities as
  // the write left them, nothing is unsettled, and night 2 judges none of them again.
  test('is not parked or proposed again the next night: its entity is carried over', async () => {
    const first = await startAndWait();
    expect(first.pending.length).toBeGreaterThan(1);
    const [rejected, ...approved] = first.pending;
    await first.handle.executeUpdate('review', { args: [{ decisions: [decide(rejected!, 'rejected')] }] });
    await first.handle.executeUpdate('review', { args: [{ decisions: approved.map((p) => decide(p, 'approved')) }] });
    const night1 = (await first.handle.result()) as SweepReport;
    expect(night1.humanReview).toMatchObject({ rejected: 1, approved: approved.length, expired: 0 });
    expect(night1.incremental!.unsettled).toBe(0);
    expect(night1.proposals.find((p) => p.id === rejected!.proposalId)).toMatchObject({
      outcome: 'rejected',
      written: false,
      reviewer: 'human:dana@example.org',
    });
    const tags = await db.query(`SELECT proposal_id FROM argus.column_tags WHERE proposal_id = $1`, [
      rejected!.proposalId,
    ]);
    expect(tags.rows).toEqual([]);

    const second = await startAndWait();
    const stillPending = second.pending.map((p) => p.proposalId);
    // Whatever waits (nothing should), decide it so the sweep ends; then say what was wrong.
    if (second.pending.length)
      await second.handle.executeUpdate('review', {
        args: [{ decisions: second.pending.map((p) => decide(p, 'rejected')) }],
      });
    const night2 = (await second.handle.result()) as SweepReport;
    expect(stillPending).not.toContain(rejected!.proposalId);
    expect(night2.proposals.map((p) => p.id)).not.toContain(rejected!.proposalId);
    expect(night2.humanReview).toMatchObject({ waited: 0 });
    expect(night2.incremental!.carriedOver).toBeGreaterThan(0);
    expect(night2.incremental).toMatchObject({ changed: 0, new: 0 });
    expect(night2.written).toBe(0);
  });
});
