// The dbt manifest reader on a real, built copy of jaffle_shop. Expected values come from the
// project's own files (YAML, SQL, CSV) and from its duckdb database, never from the reader.
import { copyFileSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { readDbtProject, type DbtProjectRead } from '../../catalog/dbt/manifest';
import { UNKNOWN_COLUMN_TYPE } from '../../domain/catalog';
import { dbtQuery, prepareJaffleShop, type JaffleShop } from '../support/dbt';

jest.setTimeout(600_000);

interface YamlColumn {
  name: string;
  description?: string;
}
interface YamlModel {
  name: string;
  description?: string;
  columns?: YamlColumn[];
}

let shop: JaffleShop;
let read: DbtProjectRead;
let warehouse: { table_name: string; column_name: string; data_type: string }[];
let yamlModels: YamlModel[];

const entity = (id: string) => {
  const e = read.entities.find((x) => x.id === id);
  if (!e) throw new Error(`no entity ${id}; have ${read.entities.map((x) => x.id).join(', ')}`);
  return e;
};

beforeAll(async () => {
  shop = await prepareJaffleShop();
  read = await readDbtProject({ projectDir: shop.dir });
  warehouse = (await dbtQuery(
    shop.dir,
    "select table_name, column_name, data_type from information_schema.columns where table_schema = 'main'",
  )) as typeof warehouse;
  yamlModels = ['models/schema.yml', 'models/staging/schema.yml'].flatMap(
    (f) => (parse(readFileSync(path.join(shop.dir, f), 'utf8')) as { models: YamlModel[] }).models,
  );
});

test('finds every model and seed of the project, as <schema>.<name>', () => {
  const files = (dir: string, ext: string): string[] =>
    readdirSync(path.join(shop.dir, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith(ext))
      .map((f) => `main.${path.basename(f, ext)}`);
  const expected = [...files('models', '.sql'), ...files('seeds', '.csv')].sort();
  expect(expected).toHaveLength(8);
  expect(read.entities.map((e) => e.id).sort()).toEqual(expected);
  expect(read.skipped).toEqual([]);
  expect(read.typesKnown).toBe(true);
  expect(entity('main.raw_orders').layer).toBe('seed');
  expect(entity('main.stg_orders')).toMatchObject({
    kind: 'view',
    layer: 'staging',
    database: 'jaffle_shop',
    schema: 'main',
  });
  expect(entity('main.orders').kind).toBe('table');
});

test('column descriptions are the YAML text and count as human text', () => {
  let checked = 0;
  for (const m of yamlModels) {
    const e = entity(`main.${m.name}`);
    if (m.description) expect(e).toMatchObject({ description: m.description, description_source: 'human' });
    for (const c of m.columns ?? []) {
      const col = e.columns.find((x) => x.name === c.name);
      expect(col).toBeDefined();
      if (c.description === undefined) {
        expect(col!.description).toBeUndefined();
      } else if (!c.description.includes('{{')) {
        expect(col).toMatchObject({ description: c.description, description_source: 'human' });
        checked++;
      }
    }
  }
  expect(checked).toBeGreaterThanOrEqual(15);
});

test('a doc-block description is reported as human text, rendered, and located as a doc block', () => {
  const docs = readFileSync(path.join(shop.dir, 'models/docs.md'), 'utf8');
  const firstLine = /\{% docs orders_status %\}\s*\n\s*(.+)/.exec(docs)![1]!.trim();
  const status = entity('main.orders').columns.find((c) => c.name === 'status')!;
  expect(status.description_source).toBe('human');
  expect(status.description!.startsWith(firstLine)).toBe(true);
  expect(read.locations.get('main.orders')!.docBlocks).toEqual({ node: false, columns: ['status'] });
});

test('column types come from catalog.json and match the duckdb warehouse, columns in warehouse order', () => {
  expect(warehouse.length).toBeGreaterThan(30);
  for (const e of read.entities) {
    const cols = warehouse.filter((w) => w.table_name === e.name);
    expect(cols.length).toBeGreaterThan(0);
    for (const w of cols) {
      const col = e.columns.find((c) => c.name.toLowerCase() === w.column_name.toLowerCase());
      expect({ table: e.name, column: w.column_name, type: col?.type }).toEqual({
        table: e.name,
        column: w.column_name,
        type: w.data_type,
      });
    }
    expect(e.columns.slice(0, cols.length).map((c) => c.name)).toEqual(cols.map((w) => w.column_name));
  }
  // customers.yml declares total_order_amount, which the model does not produce: kept, type unknown.
  const declaredOnly = entity('main.customers').columns.find((c) => c.name === 'total_order_amount');
  expect(warehouse.some((w) => w.column_name === 'total_order_amount')).toBe(false);
  expect(declaredOnly?.type).toBe(UNKNOWN_COLUMN_TYPE);
});

test('lineage of orders and customers is the refs in their SQL, as entity ids', () => {
  for (const name of ['orders', 'customers']) {
    const sql = readFileSync(path.join(shop.dir, `models/${name}.sql`), 'utf8');
    const refs = [...sql.matchAll(/ref\(\s*'([^']+)'\s*\)/g)].map((m) => `main.${m[1]}`);
    expect([...entity(`main.${name}`).upstream].sort()).toEqual([...new Set(refs)].sort());
  }
  expect(entity('main.stg_orders').upstream).toEqual(['main.raw_orders']);
  expect(entity('main.raw_orders').upstream).toEqual([]);
});

test('compiled SQL for models, none for seeds; tests give keys and nullability', () => {
  expect(entity('main.orders').sql).toMatch(/"jaffle_shop"\."main"\."stg_orders"/);
  expect(entity('main.orders').sql).not.toMatch(/\{\{/);
  expect(entity('main.raw_orders').sql).toBeUndefined();
  const orderId = entity('main.orders').columns.find((c) => c.name === 'order_id')!;
  expect(orderId).toMatchObject({ primary_key: true, nullable: false });
  const customerId = entity('main.orders').columns.find((c) => c.name === 'customer_id')!;
  expect(customerId).toMatchObject({ nullable: false, foreign_key: 'main.customers.customer_id' });
});

test('locations name the patch_path in both forms, and _argus__ files for nodes without YAML', () => {
  expect(read.locations.get('main.orders')).toMatchObject({
    uniqueId: 'model.jaffle_shop.orders',
    resourceType: 'model',
    patchPath: 'jaffle_shop://models/schema.yml',
    yamlPath: 'models/schema.yml',
    writePath: 'models/schema.yml',
    originalFilePath: 'models/orders.sql',
    writable: true,
    yamlNode: { resource: 'model', name: 'orders' },
  });
  expect(read.locations.get('main.raw_customers')).toMatchObject({
    patchPath: null,
    yamlPath: null,
    writePath: 'seeds/_argus__seeds.yml',
    originalFilePath: 'seeds/raw_customers.csv',
  });
});

test('without catalog.json every column type is unknown; seeds take their columns from the CSV header', async () => {
  const bare = path.join(shop.dir, 'bare');
  mkdirSync(bare, { recursive: true });
  copyFileSync(path.join(shop.dir, 'target/manifest.json'), path.join(bare, 'manifest.json'));
  const r = await readDbtProject({
    projectDir: shop.dir,
    manifest: 'bare/manifest.json',
    catalog: 'bare/catalog.json',
  });
  expect(r.typesKnown).toBe(false);
  expect(r.entities.length).toBe(8);
  for (const e of r.entities) for (const c of e.columns) expect(c.type).toBe(UNKNOWN_COLUMN_TYPE);
  const header = readFileSync(path.join(shop.dir, 'seeds/raw_customers.csv'), 'utf8').split('\n')[0]!.trim().split(',');
  expect(r.entities.find((e) => e.id === 'main.raw_customers')!.columns.map((c) => c.name)).toEqual(header);
  const declared = yamlModels.find((m) => m.name === 'orders')!.columns!.map((c) => c.name);
  expect(
    r.entities
      .find((e) => e.id === 'main.orders')!
      .columns.map((c) => c.name)
      .sort(),
  ).toEqual(declared.sort());
});
