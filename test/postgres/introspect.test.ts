// The pg_catalog reader against a real server (test/support/postgres.ts) loaded with the pagila and chinook
// dumps. Expected values are facts read off the dumps and `psql \d` by hand, not the reader's output.
import * as path from 'node:path';
import { Client } from 'pg';
import {
  listRelations,
  readPostgresCatalog,
  readRelations,
  type PgCatalogPage,
} from '../../catalog/postgres/introspect';
import { loadSql, startPostgres, type PgServer } from '../support/postgres';

const DUMPS = path.resolve(__dirname, '../../../shared/testdata/postgres');

let server: PgServer;
const clients: Client[] = [];
let pagila: Client;
let chinook: Client;
let scratch: Client;
let pagilaCatalog: PgCatalogPage;

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined); // the server goes away in afterAll
  await client.connect();
  clients.push(client);
  return client;
}

// Text a person might write, with everything COMMENT ON must carry through: quotes, a backslash, newlines,
// non-ASCII letters and an astral-plane character.
const TABLE_COMMENT = `Owner's "weird" table\\n is not a newline;\nthis is.\r\nZürich — 東京 — 🚀`;
const COLUMN_COMMENT = `it's 'quoted' twice '' and ends with a backslash \\`;

beforeAll(async () => {
  server = await startPostgres();
  const [pagilaUrl, chinookUrl, scratchUrl] = await Promise.all([
    server.createDatabase('pagila'),
    server.createDatabase('chinook'),
    server.createDatabase('scratch'),
  ]);
  await Promise.all([
    loadSql(pagilaUrl, path.join(DUMPS, 'pagila.sql')),
    loadSql(chinookUrl, path.join(DUMPS, 'chinook.sql')),
  ]);
  [pagila, chinook, scratch] = await Promise.all([connect(pagilaUrl), connect(chinookUrl), connect(scratchUrl)]);
  const lit = (s: string) => scratch.escapeLiteral(s);
  await scratch.query(`
    CREATE SCHEMA scratch;
    CREATE DOMAIN scratch.percent AS numeric(5,2) CHECK (VALUE BETWEEN 0 AND 100);
    CREATE TABLE scratch.gaps (a int PRIMARY KEY, b text, c varchar(45) NOT NULL, d timestamptz, e int[]);
    ALTER TABLE scratch.gaps DROP COLUMN b;
    ALTER TABLE scratch.gaps ADD COLUMN f scratch.percent, ADD COLUMN g numeric(5,2)[];
    ALTER TABLE scratch.gaps DROP COLUMN d;
    CREATE MATERIALIZED VIEW scratch.gap_summary AS SELECT c, count(*) AS n FROM scratch.gaps GROUP BY c;
    CREATE TABLE scratch.events (id int, at date NOT NULL) PARTITION BY RANGE (at);
    CREATE TABLE scratch.events_2024 PARTITION OF scratch.events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
    CREATE TABLE scratch.events_2025 PARTITION OF scratch.events
      FOR VALUES FROM ('2025-01-01') TO ('2026-01-01') PARTITION BY RANGE (at);
    CREATE TABLE scratch.events_2025_h1 PARTITION OF scratch.events_2025 FOR VALUES FROM ('2025-01-01') TO ('2025-07-01');
    CREATE VIEW scratch.recent_events AS SELECT id FROM scratch.events_2025_h1;
    CREATE TABLE scratch.no_columns ();
    CREATE SCHEMA "MixedCase";
    CREATE TABLE "MixedCase"."Weird Name" ("Col A" int, "col a" text);
    COMMENT ON TABLE "MixedCase"."Weird Name" IS ${lit(TABLE_COMMENT)};
    COMMENT ON COLUMN "MixedCase"."Weird Name"."Col A" IS ${lit(COLUMN_COMMENT)};
    CREATE VIEW "MixedCase"."View Of Weird" AS SELECT "Col A" FROM "MixedCase"."Weird Name";
  `);
  pagilaCatalog = await readPostgresCatalog(pagila);
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await server?.stop();
});

const byId = (page: PgCatalogPage, id: string) => {
  const e = page.entities.find((x) => x.id === id);
  if (!e) throw new Error(`no entity ${id} among ${page.entities.map((x) => x.id).join(', ')}`);
  return e;
};
const relOf = (page: PgCatalogPage, id: string) => page.relations.find((r) => r.id === id);
const column = (page: PgCatalogPage, id: string, name: string) => byId(page, id).columns.find((c) => c.name === name);

describe('pagila and chinook', () => {
  test('tables and views per schema, partitions folded, every entity from the current database', () => {
    const kinds = (kind: string) =>
      pagilaCatalog.relations
        .filter((r) => r.relkind === kind)
        .map((r) => r.id)
        .sort();
    // psql \dt: 14 ordinary tables, partitioned payment and its 7 partitions; \dv: 7 views; \dm: 1.
    expect(kinds('table')).toEqual(
      [
        'actor',
        'address',
        'category',
        'city',
        'country',
        'customer',
        'film',
        'film_actor',
        'film_category',
        'inventory',
        'language',
        'rental',
        'staff',
        'store',
      ].map((n) => `public.${n}`),
    );
    expect(kinds('partitioned_table')).toEqual(['public.payment']);
    expect(kinds('view')).toEqual(
      [
        'actor_info',
        'customer_list',
        'film_list',
        'nicer_but_slower_film_list',
        'sales_by_film_category',
        'sales_by_store',
        'staff_list',
      ].map((n) => `public.${n}`),
    );
    expect(kinds('materialized_view')).toEqual(['public.rental_by_category']);
    expect(pagilaCatalog.entities.filter((e) => e.kind === 'table')).toHaveLength(15);
    expect(pagilaCatalog.entities.filter((e) => e.kind === 'view')).toHaveLength(8);
    expect(pagilaCatalog.entities.filter((e) => /payment_p/.test(e.id))).toEqual([]);
    expect(new Set(pagilaCatalog.entities.map((e) => `${e.database}/${e.schema}`))).toEqual(new Set(['pagila/public']));
    expect(pagilaCatalog.invalid).toEqual([]);
  });

  test('chinook: 11 tables with quoted mixed-case names, no views', async () => {
    const ids = await listRelations(chinook);
    expect(ids).toEqual(
      [
        'Album',
        'Artist',
        'Customer',
        'Employee',
        'Genre',
        'Invoice',
        'InvoiceLine',
        'MediaType',
        'Playlist',
        'PlaylistTrack',
        'Track',
      ].map((n) => `public.${n}`),
    );
    const page = await readRelations(chinook, ids);
    expect(page.entities.map((e) => e.kind)).toEqual(Array(11).fill('table'));
  });

  test('a view lists the relations it reads as upstream (from the dump text)', () => {
    const up = (id: string) => [...byId(pagilaCatalog, id).upstream].sort();
    const ids = (...names: string[]) => names.map((n) => `public.${n}`).sort();
    expect(up('public.actor_info')).toEqual(ids('actor', 'film_actor', 'film_category', 'category', 'film'));
    expect(up('public.sales_by_store')).toEqual(
      ids('payment', 'rental', 'inventory', 'store', 'address', 'city', 'country', 'staff'),
    );
    expect(up('public.staff_list')).toEqual(ids('staff', 'address', 'city', 'country'));
    expect(up('public.rental_by_category')).toEqual(
      ids('payment', 'rental', 'inventory', 'film', 'film_category', 'category'),
    );
    expect(byId(pagilaCatalog, 'public.actor').upstream).toEqual([]);
    expect(byId(pagilaCatalog, 'public.sales_by_store').sql).toMatch(/JOIN staff m ON/);
    expect(byId(pagilaCatalog, 'public.actor').sql).toBeUndefined();
  });

  test('the partitioned payment table is one entity carrying its partitions', () => {
    const payment = byId(pagilaCatalog, 'public.payment');
    expect(payment.kind).toBe('table');
    expect(relOf(pagilaCatalog, 'public.payment')?.partitions).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((m) => `public.payment_p2022_0${m}`),
    );
    expect(payment.columns.map((c) => [c.name, c.type, c.nullable])).toEqual([
      ['payment_id', 'integer', false],
      ['customer_id', 'integer', false],
      ['staff_id', 'integer', false],
      ['rental_id', 'integer', false],
      ['amount', 'numeric(5,2)', false],
      ['payment_date', 'timestamp with time zone', false],
    ]);
    // PRIMARY KEY (payment_date, payment_id)
    expect(payment.columns.filter((c) => c.primary_key).map((c) => c.name)).toEqual(['payment_id', 'payment_date']);
  });

  test('types as format_type shows them: numeric precision, timestamptz, arrays, enums, domains', async () => {
    const film = (name: string) => column(pagilaCatalog, 'public.film', name)?.type;
    expect(film('release_year')).toBe('year'); // CREATE DOMAIN public.year AS integer
    expect(film('rating')).toBe('mpaa_rating');
    expect(film('special_features')).toBe('text[]');
    expect(film('rental_rate')).toBe('numeric(4,2)');
    expect(film('last_update')).toBe('timestamp with time zone');
    const track = await readRelations(chinook, ['public.Track']);
    expect(column(track, 'public.Track', 'Name')?.type).toBe('character varying(200)');
    expect(column(track, 'public.Track', 'UnitPrice')?.type).toBe('numeric(10,2)');
  });

  test('keys: primary keys, single-column foreign keys on the column, all of them in the list', async () => {
    const page = await readRelations(chinook, ['public.Track', 'public.PlaylistTrack']);
    expect(column(page, 'public.Track', 'TrackId')).toMatchObject({ primary_key: true, nullable: false });
    expect(column(page, 'public.Track', 'AlbumId')).toMatchObject({
      primary_key: false,
      nullable: true,
      foreign_key: 'public.Album.AlbumId',
    });
    expect(column(page, 'public.Track', 'Composer')?.foreign_key).toBeUndefined();
    expect(byId(page, 'public.PlaylistTrack').columns.map((c) => [c.name, c.primary_key])).toEqual([
      ['PlaylistId', true],
      ['TrackId', true],
    ]);
    expect(page.foreignKeys.filter((k) => k.from === 'public.Track').map((k) => k.constraint)).toEqual([
      'FK_TrackAlbumId',
      'FK_TrackGenreId',
      'FK_TrackMediaTypeId',
    ]);
    expect(column(pagilaCatalog, 'public.film', 'original_language_id')?.foreign_key).toBe(
      'public.language.language_id',
    );
  });
});

describe('made-up relations', () => {
  let page: PgCatalogPage;
  beforeAll(async () => {
    page = await readPostgresCatalog(scratch, { pageSize: 3 });
  });

  test('columns in attnum order with the dropped ones gone', async () => {
    const { rows } = await scratch.query<{ dropped: number }>(
      `SELECT count(*)::int AS dropped FROM pg_attribute WHERE attrelid = 'scratch.gaps'::regclass AND attisdropped`,
    );
    expect(rows[0]?.dropped).toBe(2); // the gaps are really there
    expect(byId(page, 'scratch.gaps').columns.map((c) => [c.name, c.type, c.nullable, c.primary_key])).toEqual([
      ['a', 'integer', false, true],
      ['c', 'character varying(45)', false, false],
      ['e', 'integer[]', true, false],
      ['f', 'scratch.percent', true, false], // scratch is not on the search_path: format_type qualifies it
      ['g', 'numeric(5,2)[]', true, false],
    ]);
  });

  test('a materialized view is a view with SQL and lineage', () => {
    const mv = byId(page, 'scratch.gap_summary');
    expect([mv.kind, relOf(page, mv.id)?.relkind, mv.upstream]).toEqual([
      'view',
      'materialized_view',
      ['scratch.gaps'],
    ]);
    expect(mv.sql).toMatch(/FROM scratch\.gaps/);
  });

  test('nested partitions fold into the root, and a view reading a partition reads the root', () => {
    expect(page.entities.map((e) => e.id).filter((id) => id.startsWith('scratch.events'))).toEqual(['scratch.events']);
    expect(relOf(page, 'scratch.events')?.partitions).toEqual([
      'scratch.events_2024',
      'scratch.events_2025',
      'scratch.events_2025_h1',
    ]);
    expect(byId(page, 'scratch.recent_events').upstream).toEqual(['scratch.events']);
  });

  test('mixed-case quoted names and comments with quotes, backslashes, newlines and non-ASCII', () => {
    const weird = byId(page, 'MixedCase.Weird Name');
    expect([weird.schema, weird.name]).toEqual(['MixedCase', 'Weird Name']);
    expect([weird.description, weird.description_source]).toEqual([TABLE_COMMENT, 'human']);
    expect(weird.columns.map((c) => [c.name, c.description, c.description_source])).toEqual([
      ['Col A', COLUMN_COMMENT, 'human'],
      ['col a', undefined, undefined],
    ]);
    expect(byId(page, 'MixedCase.View Of Weird').upstream).toEqual(['MixedCase.Weird Name']);
    expect(byId(page, 'scratch.gaps').description).toBeUndefined();
  });

  test('a relation with no columns is reported invalid, not dropped silently', () => {
    expect(page.invalid.map((i) => i.id)).toEqual(['scratch.no_columns']);
    expect(page.entities.map((e) => e.id)).not.toContain('scratch.no_columns');
  });

  test('schema filter, system schemas excluded by default', async () => {
    expect(await listRelations(scratch, { schemas: ['MixedCase'] })).toEqual([
      'MixedCase.View Of Weird',
      'MixedCase.Weird Name',
    ]);
    expect(await listRelations(scratch, { schemas: ['no_such_schema'] })).toEqual([]);
    const onlyScratch = await readPostgresCatalog(scratch, { schemas: ['scratch'] });
    expect(new Set(onlyScratch.entities.map((e) => e.schema))).toEqual(new Set(['scratch']));
    const all = await listRelations(scratch);
    expect(all.filter((id) => /^(pg_|information_schema\.)/.test(id))).toEqual([]);
    expect(new Set(all.map((id) => id.split('.')[0]))).toEqual(new Set(['MixedCase', 'scratch']));
  });

  test('pages: keyset pages in byte order add up to the whole listing; a vanished id is invalid', async () => {
    const all = await listRelations(scratch);
    const sorted = [...all].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(all).toEqual(sorted);
    const paged: string[] = [];
    let after: string | undefined;
    for (;;) {
      const ids = await listRelations(scratch, { limit: 2, ...(after !== undefined ? { after } : {}) });
      paged.push(...ids);
      if (ids.length < 2) break;
      after = ids[ids.length - 1];
    }
    expect(paged).toEqual(all);

    await scratch.query('CREATE TABLE scratch.short_lived (x int)');
    expect(await listRelations(scratch, { schemas: ['scratch'] })).toContain('scratch.short_lived');
    await scratch.query('DROP TABLE scratch.short_lived');
    const gone = await readRelations(scratch, ['scratch.short_lived', 'scratch.gaps']);
    expect(gone.entities.map((e) => e.id)).toEqual(['scratch.gaps']);
    expect(gone.invalid.map((i) => i.id)).toEqual(['scratch.short_lived']);
  });
});
