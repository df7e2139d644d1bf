// Sampling column values from a live PostgreSQL database (a throwaway cluster, test/support/postgres.ts): values as
// text, the row cap, quoted names, views, refused entities and columns, the READ ONLY transaction and its
// statement_timeout, and errors that never quote a value. Every value is invented; the card numbers are made
// Luhn-valid by hand.
import { Client } from 'pg';
import { CatalogError } from '../../catalog/adapter';
import { PostgresCatalogAdapter } from '../../catalog/postgres/adapter';
import { valueEvidence } from '../../judgment/pii/value-patterns';
import { startPostgres, type PgServer } from '../support/postgres';

jest.setTimeout(60_000);

let server: PgServer;
let db: Client;
let adapter: PostgresCatalogAdapter;

const SECRET_NOTE = 'not-a-number-7f3a';

beforeAll(async () => {
  server = await startPostgres();
  const url = await server.createDatabase('sampling');
  db = new Client({ connectionString: url });
  db.on('error', () => undefined); // the server goes away in afterAll
  await db.connect();
  await db.query(`
    CREATE SCHEMA crm;
    CREATE TABLE crm.contacts (
      id int PRIMARY KEY, email text, phone text, card varchar(25), c7 text,
      amount numeric(10,2), born date, tags int[], note text);
    INSERT INTO crm.contacts VALUES
      (1, 'ada@example.com',   '(202) 555-0143',   '4539 1488 0343 6780', 'ada.l@example.org',  12.50, '1990-04-01', '{1,2}', ${db.escapeLiteral(SECRET_NOTE)}),
      (2, 'bob@example.net',   '+44 20 7946 0958', '5425233430109101',    'bob.k@example.org',  7.00,  '1985-12-31', '{}',    NULL),
      (3, 'cy@example.co.uk',  '+1 202 555 0199',  '3714 496353 98431',   'cy+news@example.com', NULL,  NULL,         NULL,    NULL),
      (4, NULL,                '020 7946 0000',    '6011000990139424',    'dee@example.io',     0.99,  '2001-01-01', '{3}',   NULL),
      (5, 'eve@example.com',   '202.555.0101',     '3530111333300000',    'eve@mail.example',   100.00,'1970-06-15', '{4,5}', NULL),
      (6, 'fay@example.com',   NULL,               '2223 0031 2200 3313', 'fay@example.org',    1.00,  '1999-09-09', '{6}',   NULL);
    CREATE TABLE crm.many AS SELECT g AS n FROM generate_series(1, 150) g;
    CREATE VIEW crm.contact_emails AS SELECT id, c7 AS contact FROM crm.contacts;
    CREATE TABLE crm.audit (at timestamptz);
    CREATE FUNCTION crm.touch() RETURNS int LANGUAGE plpgsql AS $$ BEGIN INSERT INTO crm.audit VALUES (now()); RETURN 1; END $$;
    CREATE VIEW crm.sneaky AS SELECT crm.touch() AS t;
    CREATE VIEW crm.slow AS SELECT 1 AS s FROM pg_sleep(30);
    CREATE VIEW crm.bad_cast AS SELECT note::int AS n FROM crm.contacts;
    CREATE TABLE crm.long AS SELECT repeat('x', 2000) AS body, repeat('é', 600) AS accents;
    CREATE SCHEMA "Sales";
    CREATE TABLE "Sales"."Order Lines" ("Buyer E-Mail" text, "Qty" int, "say ""hi""" text);
    INSERT INTO "Sales"."Order Lines" VALUES ('gil@example.com', 2, 'hello'), ('hal@example.com', 1, 'it''s');
    CREATE SCHEMA other;
    CREATE TABLE other.secrets (v text);
    INSERT INTO other.secrets VALUES ('top secret');
  `);
  adapter = new PostgresCatalogAdapter(
    { kind: 'postgres', connectionEnv: 'ARGUS_PG_URL', schemas: ['crm', 'Sales'], tagTable: 'argus.column_tags' },
    { ARGUS_PG_URL: url },
  );
}, 120_000);

afterAll(async () => {
  await adapter?.close();
  await db?.end().catch(() => undefined);
  await server?.stop();
});

/** The sample as rows (one tuple per row, in the columns' order), sorted: a sample has no order of its own. */
function rowsOf(sample: Map<string, (string | null)[]>): (string | null)[][] {
  const cols = [...sample.values()];
  return (cols[0] ?? [])
    .map((_, i) => cols.map((c) => c[i] ?? null))
    .sort((a, b) => String(a).localeCompare(String(b)));
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => new Error('resolved'),
    (e: unknown) => e as Error,
  );

test('values of every type come back as text, nulls kept, keyed by the columns asked for in their order', async () => {
  const sample = await adapter.sampleColumnValues(
    'crm.contacts',
    ['id', 'email', 'phone', 'card', 'amount', 'born', 'tags'],
    10,
  );
  expect([...sample.keys()]).toEqual(['id', 'email', 'phone', 'card', 'amount', 'born', 'tags']);
  expect(rowsOf(sample)).toEqual([
    ['1', 'ada@example.com', '(202) 555-0143', '4539 1488 0343 6780', '12.50', '1990-04-01', '{1,2}'],
    ['2', 'bob@example.net', '+44 20 7946 0958', '5425233430109101', '7.00', '1985-12-31', '{}'],
    ['3', 'cy@example.co.uk', '+1 202 555 0199', '3714 496353 98431', null, null, null],
    ['4', null, '020 7946 0000', '6011000990139424', '0.99', '2001-01-01', '{3}'],
    ['5', 'eve@example.com', '202.555.0101', '3530111333300000', '100.00', '1970-06-15', '{4,5}'],
    ['6', 'fay@example.com', null, '2223 0031 2200 3313', '1.00', '1999-09-09', '{6}'],
  ]);
});

test('what the patterns make of the sample: an opaque c7 holds e-mail addresses; phones and cards are found too', async () => {
  const sample = await adapter.sampleColumnValues('crm.contacts', ['c7', 'phone', 'card', 'email', 'note'], 100);
  expect(valueEvidence(sample.get('c7')!)).toEqual({
    category: 'email',
    pattern: 'e-mail address',
    matched: 6,
    sampled: 6,
  });
  expect(valueEvidence(sample.get('phone')!)).toMatchObject({ category: 'phone', matched: 5, sampled: 5 });
  expect(valueEvidence(sample.get('card')!)).toMatchObject({ category: 'payment_card', matched: 6, sampled: 6 });
  expect(valueEvidence(sample.get('email')!)).toMatchObject({ category: 'email', matched: 5, sampled: 5 });
  expect(valueEvidence(sample.get('note')!)).toBeUndefined(); // one value sampled
});

test('a view is sampled like a table', async () => {
  const sample = await adapter.sampleColumnValues('crm.contact_emails', ['contact'], 100);
  expect([...sample.get('contact')!].sort()).toEqual([
    'ada.l@example.org',
    'bob.k@example.org',
    'cy+news@example.com',
    'dee@example.io',
    'eve@mail.example',
    'fay@example.org',
  ]);
  expect(valueEvidence(sample.get('contact')!)?.category).toBe('email');
});

test('quoted mixed-case names, spaces and quotes in names', async () => {
  const sample = await adapter.sampleColumnValues('Sales.Order Lines', ['Buyer E-Mail', 'Qty', 'say "hi"'], 5);
  expect(rowsOf(sample)).toEqual([
    ['gil@example.com', '2', 'hello'],
    ['hal@example.com', '1', "it's"],
  ]);
});

test.each<[string, number, number]>([
  ['more than the cap', 1000, 100],
  ['the cap', 100, 100],
  ['a few', 7, 7],
  ['a fraction', 2.9, 2],
  ['none', 0, 0],
  ['a negative number', -3, 0],
  ['not a number', Number.NaN, 0],
])('rows: %s (%d) reads %d', async (_what, rows, expected) => {
  const sample = await adapter.sampleColumnValues('crm.many', ['n'], rows);
  expect(sample.get('n')).toHaveLength(expected);
});

test('long values come back cut at 512 characters (no pattern is that long)', async () => {
  const sample = await adapter.sampleColumnValues('crm.long', ['body', 'accents'], 5);
  expect(sample.get('body')).toEqual(['x'.repeat(512)]);
  expect(sample.get('accents')).toEqual(['é'.repeat(512)]);
});

test('an unknown column is refused, and a column name is never SQL', async () => {
  for (const column of ['nope', 'EMAIL', `email" FROM other.secrets; --`]) {
    const err = await refusal(adapter.sampleColumnValues('crm.contacts', ['email', column], 5));
    expect(err).toBeInstanceOf(CatalogError);
    expect(err.message).toMatch(/crm\.contacts has no column ".*" to sample/);
  }
});

test('an unknown entity, or one outside the catalog’s schemas, is refused', async () => {
  const unknown = await refusal(adapter.sampleColumnValues('crm.nothing', ['v'], 5));
  expect(unknown).toBeInstanceOf(CatalogError);
  expect(unknown.message).toMatch(/no table or view crm\.nothing to sample/);
  const outside = await refusal(adapter.sampleColumnValues('other.secrets', ['v'], 5));
  expect(outside).toBeInstanceOf(CatalogError);
  expect(outside.message).toMatch(/other\.secrets is not in the catalog's schemas \(crm, Sales\)/);
  expect(outside.message).not.toContain('top secret');
});

test('read only: a view whose function writes is refused, and nothing is written', async () => {
  const err = await refusal(adapter.sampleColumnValues('crm.sneaky', ['t'], 5));
  expect(err).toBeInstanceOf(CatalogError);
  expect(err.message).toMatch(/sampling crm\.sneaky: reading it would write \(25006\)/);
  expect((await db.query('SELECT count(*)::int AS n FROM crm.audit')).rows).toEqual([{ n: 0 }]);
});

test('a slow read gives up after the statement_timeout, and the adapter samples again afterwards', async () => {
  const started = Date.now();
  const err = await refusal(adapter.sampleColumnValues('crm.slow', ['s'], 5));
  expect(err).toBeInstanceOf(CatalogError);
  expect(err.message).toMatch(/took longer than 5s and was cancelled \(57014\)/);
  expect(Date.now() - started).toBeLessThan(15_000);
  // Every pooled connection (the one that timed out among them) is out of its transaction and usable.
  const again = await Promise.all(Array.from({ length: 6 }, () => adapter.sampleColumnValues('crm.many', ['n'], 3)));
  expect(again.map((s) => s.get('n')?.length)).toEqual([3, 3, 3, 3, 3, 3]);
});

test("a refused read names the SQLSTATE, never the server's text, which may quote a value", async () => {
  const err = await refusal(adapter.sampleColumnValues('crm.bad_cast', ['n'], 5));
  expect(err).toBeInstanceOf(CatalogError);
  expect(err.message).toMatch(/sampling crm\.bad_cast: the server refused the read \(SQLSTATE 22P02\)/);
  expect(err.message).not.toContain(SECRET_NOTE);
});

test('a relation dropped and created again since it was read is read again', async () => {
  await db.query(`CREATE TABLE crm.again (a text); INSERT INTO crm.again VALUES ('first')`);
  expect((await adapter.sampleColumnValues('crm.again', ['a'], 5)).get('a')).toEqual(['first']);
  await db.query(`DROP TABLE crm.again; CREATE TABLE crm.again (b text); INSERT INTO crm.again VALUES ('second')`);
  expect((await adapter.sampleColumnValues('crm.again', ['b'], 5)).get('b')).toEqual(['second']);
  const gone = await refusal(adapter.sampleColumnValues('crm.again', ['a'], 5));
  expect(gone.message).toMatch(/crm\.again has no column "a" to sample/);
});

test('sampling creates nothing: no argus schema, no tag table', async () => {
  const r = await db.query(`SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = 'argus'`);
  expect(r.rows).toEqual([]);
});
