// Sweeps of a live PostgreSQL database through Temporal: pagila loaded into a throwaway cluster, a real worker
// whose environment holds the connection string, descriptions written with COMMENT ON, PII tags in ARGUS's table,
// a second sweep that writes nothing, and an undo that leaves every pg_description row as it was.
import * as path from 'node:path';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { WorkflowFailedError } from '@temporalio/client';
import { runSweep, useArgusWorker } from '../support/argus-worker';
import { uniqueId } from '../support/temporal-env';
import { loadSql, startPostgres, type PgServer } from '../support/postgres';
import { undoSweep } from '../../activities/undo';
import { createCatalogs } from '../../catalog';
import { PostgresCatalogAdapter } from '../../catalog/postgres/adapter';
import { rootCause } from '../../client/failures';
import { sweepStartArgs, temporal } from '../e2e/spawn';
import type { SweepReport } from '../../domain/report';
import type { SweepInput } from '../../domain/sweep';

jest.setTimeout(180_000);

const DUMPS = path.resolve(__dirname, '../../../shared/testdata/postgres');
const env: NodeJS.ProcessEnv = { ...process.env };
let server: PgServer;
let db: Client;
const HUMAN = `Given name, as a person wrote it: "first" name — it's kept.`;

beforeAll(async () => {
  server = await startPostgres();
  const url = await server.createDatabase('pagila');
  await loadSql(url, path.join(DUMPS, 'pagila.sql'));
  env.ARGUS_PG_URL = url;
  // Nothing listens here: the port of a server started and stopped at once would do too.
  env.ARGUS_PG_NOWHERE = url.replace(/:\d+\//, ':1/');
  db = new Client({ connectionString: url });
  db.on('error', () => undefined);
  await db.connect();
  await db.query(`COMMENT ON COLUMN public.actor.first_name IS '${HUMAN.replace(/'/g, "''")}'`);
});

const w = useArgusWorker('tq-postgres', env);

afterAll(async () => {
  await db?.end();
  await server?.stop();
});

const sweep = (input: SweepInput) => runSweep(w, input, 'sweep/pg/test');

/** Every comment in the database, as `\d+` would show them: object, column number, text. */
async function descriptions(): Promise<string[]> {
  const r = await db.query<{ row: string }>(
    `SELECT d.classoid::regclass || ' ' || d.objoid || ' ' || d.objsubid || ' ' || d.description AS row
       FROM pg_catalog.pg_description d ORDER BY 1`,
  );
  return r.rows.map((x) => x.row);
}

const columnComment = async (table: string, column: string) =>
  (
    await db.query<{ d: string | null }>(
      `SELECT col_description($1::regclass, attnum) AS d FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2`,
      [table, column],
    )
  ).rows[0]?.d;

describe('a sweep of pagila', () => {
  let before: string[];
  let report: SweepReport;

  beforeAll(async () => {
    before = await descriptions();
    report = await sweep({ catalog: { kind: 'postgres', schemas: ['public'] } });
  });

  test("writes comments and tags that psql shows, never over a person's comment", async () => {
    expect(report.failures).toEqual([]);
    expect(report.entities.requested).toBeGreaterThan(20);
    expect(report.byKind.description.written).toBeGreaterThan(10);
    const written = report.proposals.filter((p) => p.written);
    const describedColumn = written.find((p) => p.change.kind === 'description' && p.change.target === 'column');
    expect(describedColumn).toBeDefined();
    const ch = describedColumn!.change as { column: string; text: string };
    expect(await columnComment(describedColumn!.entityId, ch.column)).toBe(ch.text);
    expect(await columnComment('public.actor', 'first_name')).toBe(HUMAN);
    const tags = await db.query<{ n: string }>(`SELECT count(*) AS n FROM argus.column_tags WHERE tag = 'pii'`);
    expect(Number(tags.rows[0]!.n)).toBe(report.byKind.pii_tag.written);
    expect(report.byKind.pii_tag.written).toBeGreaterThan(0);
    // A person's name in a customer table is tagged with its category.
    const email = await db.query(
      `SELECT category FROM argus.column_tags WHERE table_name = 'customer' AND column_name = 'email'`,
    );
    expect(email.rows).toEqual([{ category: expect.any(String) as unknown }]);
  });

  test('a second sweep writes nothing; undo leaves every pg_description row as it was and removes the tags', async () => {
    const again = await sweep({ catalog: { kind: 'postgres', schemas: ['public'] } });
    expect(again.written).toBe(0);
    const [undo] = await undoSweep(w.tw.stateDir, report.sweepId, {
      catalogs: createCatalogs({ stateDir: w.tw.stateDir, bundledDemo: '/nonexistent', env }),
    });
    expect(undo?.conflicts).toEqual([]);
    expect(undo?.undone).toBe(report.written);
    expect(await descriptions()).toEqual(before);
    const tags = await db.query(`SELECT * FROM argus.column_tags`);
    expect(tags.rows).toEqual([]);
  });
});

test("a person's comment removed takes back ARGUS's comments inherited from it, in one sweep; undo puts them back", async () => {
  const input: SweepInput = { catalog: { kind: 'postgres', schemas: ['public'] } };
  const first = await sweep(input);
  expect(first.failures).toEqual([]);
  // Whatever ARGUS holds inherited from actor.first_name now (written by this sweep or one before it).
  const inherited = async () => {
    const r = await db.query<{ rel: string; col: string; d: string }>(
      `SELECT c.relnamespace::regnamespace || '.' || c.relname AS rel, a.attname AS col, d.description AS d
         FROM pg_description d JOIN pg_class c ON c.oid = d.objoid
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = d.objsubid
        WHERE d.classoid = 'pg_class'::regclass AND d.description LIKE '%Inherited from \`public.actor.first_name\`%'
        ORDER BY 1, 2`,
    );
    return r.rows;
  };
  const had = await inherited();
  expect(had.length).toBeGreaterThan(0);
  try {
    await db.query(`COMMENT ON COLUMN public.actor.first_name IS NULL`);
    const r = await sweep(input);
    expect(r.failures).toEqual([]);
    expect(await inherited()).toEqual([]);
    for (const h of had) expect(await columnComment(h.rel, h.col)).toBeNull();
    expect(r.byKind.description_removal).toMatchObject({ approved: had.length, written: had.length });
    expect(
      r.proposals.filter((p) => p.change.kind === 'description_removal' && p.written).map((p) => p.entityId),
    ).toEqual(expect.arrayContaining(had.map((h) => h.rel)));
    // Its fixed point: the next sweep takes back nothing and writes nothing.
    const again = await sweep(input);
    expect(again.written).toBe(0);
    expect(again.byKind.description_removal?.proposed).toBe(0);
    // Undo puts every comment back as ARGUS's: the adapter reads them as its own again.
    const [undo] = await undoSweep(w.tw.stateDir, r.sweepId, {
      catalogs: createCatalogs({ stateDir: w.tw.stateDir, bundledDemo: '/nonexistent', env }),
    });
    expect(undo?.conflicts).toEqual([]);
    expect(await inherited()).toEqual(had);
    const adapter = new PostgresCatalogAdapter(
      { kind: 'postgres', connectionEnv: 'ARGUS_PG_URL', schemas: ['public'], tagTable: 'argus.column_tags' },
      env,
    );
    try {
      const { entities } = await adapter.getEntities([...new Set(had.map((h) => h.rel))]);
      for (const h of had)
        expect(entities.find((e) => e.id === h.rel)!.columns.find((c) => c.name === h.col)).toMatchObject({
          description: h.d,
          description_source: 'argus',
        });
    } finally {
      await adapter.close();
    }
    // The database and the memory as the tests after this one expect them: without this test's first sweep.
    const [undoFirst] = await undoSweep(w.tw.stateDir, first.sweepId, {
      catalogs: createCatalogs({ stateDir: w.tw.stateDir, bundledDemo: '/nonexistent', env }),
    });
    expect(undoFirst?.conflicts).toEqual([]);
  } finally {
    await db.query(`COMMENT ON COLUMN public.actor.first_name IS '${HUMAN.replace(/'/g, "''")}'`);
  }
});

test.each([
  [
    'the variable is not set on the worker',
    { connectionEnv: 'ARGUS_PG_UNSET' },
    /ARGUS_PG_UNSET, which is not set on this worker/,
  ],
  [
    'nothing listens at the address',
    { connectionEnv: 'ARGUS_PG_NOWHERE' },
    /127.0.0.1:1\/pagila: nothing accepts connections there/,
  ],
  ['a schema does not exist', { schemas: ['no_such_schema'] }, /schema no_such_schema does not exist/],
])('%s: the sweep fails at once with InvalidCatalog and says so', async (_what, extra, message) => {
  const err = await sweep({ catalog: { kind: 'postgres', ...extra } }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const root = rootCause((err as WorkflowFailedError).cause);
  expect(root.type).toBe('InvalidCatalog');
  expect(root.message).toMatch(message);
  // The connection string (with its password, if any) is never in the message.
  expect(root.message).not.toContain(env.ARGUS_PG_URL!);
});

test('names and texts COMMENT ON cannot bind are quoted: mixed case, quotes, backslashes, newlines, non-ASCII', async () => {
  await db.query(`CREATE SCHEMA "Odd Schema"; CREATE TABLE "Odd Schema"."Weird ""Name""" ("Col A" int, b text)`);
  await db.query(`CREATE MATERIALIZED VIEW "Odd Schema".mv AS SELECT 1 AS one`);
  const a = new PostgresCatalogAdapter(
    { kind: 'postgres', connectionEnv: 'ARGUS_PG_URL', schemas: ['Odd Schema'], tagTable: 'argus.column_tags' },
    env,
  );
  try {
    const { ids } = await a.snapshot();
    expect(ids).toEqual(['Odd Schema.Weird "Name"', 'Odd Schema.mv']);
    const text = `It's "odd" \\ C:\\path\\n — not a newline;\nthis is one.\r\nZürich 東京 🚀 '' \\'`;
    const out = await a.applyRepairs(
      [
        {
          proposalId: 'p-1',
          entityId: ids[0]!,
          change: { kind: 'description', target: 'column', column: 'Col A', text },
        },
        { proposalId: 'p-2', entityId: ids[0]!, change: { kind: 'description', target: 'table', text } },
        { proposalId: 'p-3', entityId: ids[1]!, change: { kind: 'description', target: 'table', text: 'A view.' } },
        {
          proposalId: 'p-4',
          entityId: ids[0]!,
          change: { kind: 'description', target: 'column', column: 'gone', text },
        },
      ],
      { overwriteHumanText: false },
    );
    expect(out.map((o) => o.status)).toEqual(['written', 'written', 'written', 'conflict']);
    expect(out[3]).toMatchObject({ note: 'column gone no longer exists' });
    expect(await columnComment('"Odd Schema"."Weird ""Name"""', 'Col A')).toBe(text);
    const t = await db.query(`SELECT obj_description('"Odd Schema"."Weird ""Name"""'::regclass, 'pg_class') AS d`);
    expect(t.rows[0].d).toBe(text);
    const mv = await db.query(`SELECT obj_description('"Odd Schema".mv'::regclass, 'pg_class') AS d`);
    expect(mv.rows[0].d).toBe('A view.');
    // Read back: ARGUS's own comments are ARGUS's, so a new sweep may improve them; a person's edit is a person's.
    await db.query(`COMMENT ON COLUMN "Odd Schema"."Weird ""Name"""."Col A" IS 'edited by a person'`);
    const { entities } = await a.getEntities([ids[0]!]);
    const cols = Object.fromEntries(entities[0]!.columns.map((c) => [c.name, c.description_source]));
    expect(cols).toEqual({ 'Col A': 'human', b: undefined });
    expect(entities[0]!.description_source).toBe('argus');
    const rev = await a.revertRepairs(
      out.slice(0, 3).map((o, i) => ({
        proposalId: o.proposalId,
        entityId: i === 2 ? ids[1]! : ids[0]!,
        change:
          i === 0
            ? { kind: 'description' as const, target: 'column' as const, column: 'Col A', text }
            : { kind: 'description' as const, target: 'table' as const, text: i === 1 ? text : 'A view.' },
        before: (o as { before: unknown }).before,
        after: (o as { after: unknown }).after,
      })),
    );
    expect(rev.map((r) => r.status)).toEqual(['conflict', 'reverted', 'reverted']);
    expect(await columnComment('"Odd Schema"."Weird ""Name"""', 'Col A')).toBe('edited by a person');
    expect(
      (await db.query(`SELECT obj_description('"Odd Schema".mv'::regclass, 'pg_class') AS d`)).rows[0].d,
    ).toBeNull();
  } finally {
    await a.close();
  }
});

test('a role that does not own a table gets a per-repair failure naming the owner; the rest of the batch lands', async () => {
  await db.query(`CREATE ROLE argus_reader LOGIN; CREATE SCHEMA owned; CREATE TABLE owned.mine (a int, b int)`);
  await db.query(`CREATE TABLE owned.theirs (a int); ALTER TABLE owned.theirs OWNER TO argus_reader`);
  await db.query(
    `GRANT USAGE, CREATE ON SCHEMA owned TO argus_reader; GRANT CREATE ON DATABASE pagila TO argus_reader`,
  );
  await db.query(
    `GRANT USAGE, CREATE ON SCHEMA argus TO argus_reader; GRANT ALL ON ALL TABLES IN SCHEMA argus TO argus_reader`,
  );
  const readerEnv = {
    ARGUS_PG_AS_READER: env.ARGUS_PG_URL!.replace('postgres://postgres@', 'postgres://argus_reader@'),
  };
  const a = new PostgresCatalogAdapter(
    { kind: 'postgres', connectionEnv: 'ARGUS_PG_AS_READER', schemas: ['owned'], tagTable: 'argus.column_tags' },
    readerEnv,
  );
  try {
    const out = await a.applyRepairs(
      [
        {
          proposalId: 'p-own',
          entityId: 'owned.mine',
          change: { kind: 'description', target: 'table', text: 'Not mine to describe.' },
        },
        {
          proposalId: 'p-ok',
          entityId: 'owned.theirs',
          change: { kind: 'description', target: 'table', text: 'Mine.' },
        },
      ],
      { overwriteHumanText: false },
    );
    expect(out[0]).toMatchObject({
      status: 'failed',
      note: expect.stringMatching(/must be owner.*\(42501\).*owner of owned\.mine \(role postgres\)/) as unknown,
    });
    expect(out[1]).toMatchObject({ status: 'written' });
    expect((await db.query(`SELECT obj_description('owned.theirs'::regclass, 'pg_class') AS d`)).rows[0].d).toBe(
      'Mine.',
    );
    expect((await db.query(`SELECT obj_description('owned.mine'::regclass, 'pg_class') AS d`)).rows[0].d).toBeNull();
  } finally {
    await a.close();
  }
});

test("a comment with another tool's markers is a person's, whoever wrote it", async () => {
  await db.query(`CREATE SCHEMA marked; CREATE TABLE marked.t (a int)`);
  const a = new PostgresCatalogAdapter(
    { kind: 'postgres', connectionEnv: 'ARGUS_PG_URL', schemas: ['marked'], tagTable: 'argus.column_tags' },
    env,
  );
  try {
    await a.applyRepairs(
      [
        {
          proposalId: 'p-m',
          entityId: 'marked.t',
          change: { kind: 'description', target: 'table', text: 'Rows.\n@name things' },
        },
      ],
      {
        overwriteHumanText: false,
      },
    );
    const { entities } = await a.getEntities(['marked.t']);
    expect(entities[0]!.description_source).toBe('human');
    const again = await a.applyRepairs(
      [{ proposalId: 'p-n', entityId: 'marked.t', change: { kind: 'description', target: 'table', text: 'Other.' } }],
      {
        overwriteHumanText: false,
      },
    );
    expect(again[0]!.status).toBe('kept_human');
  } finally {
    await a.close();
  }
});

test('an unknown role is refused with a message about the credentials, not a bare error', async () => {
  env.ARGUS_PG_NOBODY = env.ARGUS_PG_URL!.replace('postgres://postgres@', 'postgres://no_such_role@');
  const err = await sweep({ catalog: { kind: 'postgres', connectionEnv: 'ARGUS_PG_NOBODY' } }).catch((e: unknown) => e);
  const root = rootCause((err as WorkflowFailedError).cause);
  expect(root.type).toBe('InvalidCatalog');
  expect(root.message).toMatch(/refused the credentials \(28000\)/);
});

test('a relation dropped during the sweep is a conflict for its repairs; the rest of the batch lands', async () => {
  await db.query(`CREATE SCHEMA dropping; CREATE TABLE dropping.stays (a int); CREATE TABLE dropping.goes (a int)`);
  const a = new PostgresCatalogAdapter(
    { kind: 'postgres', connectionEnv: 'ARGUS_PG_URL', schemas: ['dropping'], tagTable: 'argus.column_tags' },
    env,
  );
  try {
    const { ids } = await a.snapshot();
    await a.getEntities(ids); // read, as a sweep's page is, before the table goes
    await db.query(`DROP TABLE dropping.goes`);
    const out = await a.applyRepairs(
      [
        {
          proposalId: 'p-goes',
          entityId: 'dropping.goes',
          change: { kind: 'description', target: 'table', text: 'Gone.' },
        },
        {
          proposalId: 'p-goes-col',
          entityId: 'dropping.goes',
          change: { kind: 'description', target: 'column', column: 'a', text: 'A.' },
        },
        {
          proposalId: 'p-stays',
          entityId: 'dropping.stays',
          change: { kind: 'description', target: 'table', text: 'Here.' },
        },
      ],
      { overwriteHumanText: false },
    );
    expect(out.map((o) => o.status)).toEqual(['conflict', 'conflict', 'written']);
    expect(out[0]).toMatchObject({ note: expect.stringMatching(/dropping\.goes/) as unknown });
    expect((await db.query(`SELECT obj_description('dropping.stays'::regclass, 'pg_class') AS d`)).rows[0].d).toBe(
      'Here.',
    );
  } finally {
    await a.close();
  }
});

test('the temporal CLI starts a PostgreSQL sweep with nothing but the JSON input the docs give', async () => {
  const id = `sweep/pg/temporal-cli-${Date.now()}`;
  const input = JSON.stringify({ catalog: { kind: 'postgres', schemas: ['public'] }, dryRun: true });
  const start = await temporal(
    sweepStartArgs(w.tw.taskQueue, id, '--static-summary', 'ARGUS dry run of pagila', '--input', input),
  );
  expect({ code: start.code, err: start.code === 0 ? '' : start.stderr }).toEqual({ code: 0, err: '' });
  const result = await temporal(['workflow', 'result', '--workflow-id', id, '--output', 'json']);
  expect(result.code).toBe(0);
  const r = JSON.parse(result.stdout) as { status: string; result: SweepReport };
  expect(r.status).toBe('COMPLETED');
  expect(r.result).toMatchObject({ catalog: 'pagila', dryRun: true, written: 0, partial: false });
  expect(r.result.outcomes.approved).toBeGreaterThan(0);
});

describe('value sampling (sweep input sampleValues, off by default)', () => {
  const EMAILS = Array.from({ length: 20 }, (_, i) => `member${i}.quokka@mail-sample.example`);
  beforeAll(async () => {
    await db.query(`CREATE SCHEMA sampled;
      CREATE TABLE sampled.contacts (id integer PRIMARY KEY, c7 text, batch_label text);`);
    for (const [i, email] of EMAILS.entries())
      await db.query(`INSERT INTO sampled.contacts VALUES ($1, $2, $3)`, [i, email, `batch ${i % 3}`]);
  });

  const c7Tag = (r: SweepReport) =>
    r.proposals.find((p) => p.change.kind === 'pii_tag' && p.change.column === 'c7' && p.entityId.endsWith('contacts'));

  test('without it, a column known only by an opaque name is left alone', async () => {
    const r = await sweep({ catalog: { kind: 'postgres', schemas: ['sampled'] }, dryRun: true });
    expect(r.failures).toEqual([]);
    expect(c7Tag(r)).toBeUndefined();
  });

  test('with it, the values tag the column; the values reach neither Temporal nor the report', async () => {
    const id = uniqueId('sweep/pg/sampled');
    const r = (await w.client.workflow.execute('sweepWorkflow', {
      taskQueue: w.tw.taskQueue,
      workflowId: id,
      args: [{ catalog: { kind: 'postgres', schemas: ['sampled'] }, sampleValues: { rows: 20 } }],
    })) as SweepReport;
    const tag = c7Tag(r);
    expect(tag).toMatchObject({ outcome: 'approved', written: true, change: { category: 'email' } });
    expect(tag!.reason).toMatch(/20 of 20 values sampled in the worker look like/);
    expect(r.proposals.find((p) => p.change.kind === 'pii_tag' && p.change.column === 'batch_label')).toBeUndefined();
    const history = JSON.stringify(await w.client.workflow.getHandle(id).fetchHistory());
    const reportFile = readFileSync(r.reportFile, 'utf8');
    for (const text of [history, reportFile, JSON.stringify(r)]) {
      expect(text).not.toContain('quokka');
      expect(text).not.toContain('mail-sample');
    }
  });
});
