// The dbt manifest reader on a real, built copy of jaffle_shop. Expected values come from the
// project's own files (YAML, SQL, CSV) and from its duckdb database, never from the reader.
// Rendering raw_code (a manifest from `dbt parse` has no compiled SQL) is tested first on invented
// raw_code and manifests, then against what real dbt compiles and parses.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { readDbtProject, renderRawCode, type DbtProjectRead, type DbtRelationCall } from '../../catalog/dbt/manifest';
import { UNKNOWN_COLUMN_TYPE } from '../../domain/catalog';
import { tablesReadBySql } from '../../judgment/sql/tables';
import { dbtQuery, prepareJaffleShop, type JaffleShop } from '../support/dbt';

jest.setTimeout(600_000);

describe('renderRawCode', () => {
  const known: Record<string, string> = {
    'ref orders': 'main.orders',
    'ref shop/orders': 'shop.orders',
    'ref dim@2': 'main.dim_v2',
    'source raw/payments': 'raw.payments',
  };
  const key = (c: DbtRelationCall) =>
    c.kind === 'source'
      ? `source ${c.source}/${c.table}`
      : `ref ${c.package === undefined ? '' : `${c.package}/`}${c.name}${c.version === undefined ? '' : `@${c.version}`}`;
  const render = (raw: string) => renderRawCode(raw, (c) => known[key(c)]);

  test.each([
    ['plain SQL', 'select 1 as x', 'select 1 as x'],
    ['ref, single quotes', "select * from {{ ref('orders') }}", 'select * from main.orders'],
    ['ref, double quotes, no spaces', 'select * from {{ref("orders")}}', 'select * from main.orders'],
    ['ref, any whitespace', "from {{\n  ref (\t'orders'\n) }} o", 'from main.orders o'],
    ['ref, trailing comma', "from {{ ref('orders',) }}", 'from main.orders'],
    ['ref with a package', `from {{ ref('shop', "orders") }}`, 'from shop.orders'],
    ['versioned ref, v=', "from {{ ref('dim', v=2) }}", 'from main.dim_v2'],
    ['versioned ref, version= as a string', `from {{ ref("dim", version="2") }}`, 'from main.dim_v2'],
    ['source, single quotes', "from {{ source('raw', 'payments') }}", 'from raw.payments'],
    ['source, double quotes and line breaks', 'from {{source( "raw" ,\n "payments" )}}', 'from raw.payments'],
    ['{{- strips whitespace before, -}} after', "from\n  {{- ref('orders') -}}  \n x", 'frommain.ordersx'],
    ['{{- ... }} keeps what follows', "from  {{- ref('orders') }} x", 'frommain.orders x'],
    ['comment', "select 1 {# a {{ ref('nope') }} {% if %} #} as x", 'select 1  as x'],
    ['{#- -#} comment', 'select 1\n  {#-\n note\n -#}\n  as x', 'select 1as x'],
    ['{#- comment #} strips before only', 'select 1\n  {#- note #}\n  as x', 'select 1\n  as x'],
    [
      'leading config with nested parentheses, brackets and braces',
      `{{ config(materialized='table', tags=['a(', "b)"], post_hook="select coalesce(1, (2)) }}", meta={'k': {'n': (1)}}) }}\nselect 1`,
      '\nselect 1',
    ],
    ['leading config, -}}', "{{ config(materialized='view') -}}\n\nselect 1", 'select 1'],
    ['config after a comment', "{# c #}\n{{ config(materialized='view') }}\nselect 1", '\n\nselect 1'],
    [
      'line breaks as Jinja makes them, one trailing newline dropped',
      "select 1\r\nfrom {{ ref('orders') }}\r\n",
      'select 1\nfrom main.orders',
    ],
  ])('%s', (_title, raw, expected) => {
    expect(render(raw)).toBe(expected);
  });

  test.each([
    ['{% if %}', "select * from {{ ref('orders') }} {% if is_incremental() %} where x > 1 {% endif %}"],
    [
      '{% set %} and a loop',
      "{% set xs = ['a'] %}select {% for x in xs %}{{ x }}{% endfor %} from {{ ref('orders') }}",
    ],
    ['{% raw %}', '{% raw %}select 1{% endraw %}'],
    ['another expression', "select {{ var('x') }} from {{ ref('orders') }}"],
    ['this', 'select * from {{ this }}'],
    ['an attribute of a ref', "select * from {{ ref('orders').identifier }}"],
    ['a filter on a ref', "select * from {{ ref('orders') | upper }}"],
    ['config not leading', "select 1 {{ config(materialized='view') }}"],
    ['a ref to an unknown node', "select * from {{ ref('ghost') }}"],
    ['a source of an unknown table', "select * from {{ source('raw', 'ghost') }}"],
    ['a string with an escape', "select * from {{ ref('ord\\'ers') }}"],
    ['an unknown keyword', "select * from {{ ref('orders', foo=1) }}"],
    ['a float version', "select * from {{ ref('dim', v=2.0) }}"],
    ['a positional argument after a keyword', "select * from {{ ref(v=2, 'dim') }}"],
    ['three arguments to ref', "select * from {{ ref('a', 'b', 'c') }}"],
    ['one argument to source', "select * from {{ source('raw') }}"],
    ['no arguments', 'select * from {{ ref() }}'],
    ['a comment without its end', "select * from {{ ref('orders') }} {# note"],
    ['an expression without its end', "select * from {{ ref('orders') "],
    ['a config without its end', "{{ config(tags=['a'] }}\nselect 1"],
  ])('gives up on %s', (_title, raw) => {
    expect(render(raw)).toBeUndefined();
  });
});

describe('readDbtProject without compiled SQL', () => {
  type Node = Record<string, unknown>;
  const columns = { id: { name: 'id' } };
  const model = (name: string, rawCode: string, fields: Node = {}): Node => ({
    unique_id: `model.shop.${name}`,
    resource_type: 'model',
    package_name: 'shop',
    name,
    database: 'warehouse',
    schema: 'main',
    alias: name,
    columns,
    language: 'sql',
    raw_code: rawCode,
    refs: [],
    sources: [],
    depends_on: { macros: [], nodes: [] },
    original_file_path: `models/${name}.sql`,
    fqn: ['shop', name],
    ...fields,
  });
  const source = (sourceName: string, name: string, fields: Node = {}): Node => ({
    unique_id: `source.shop.${sourceName}.${name}`,
    resource_type: 'source',
    package_name: 'shop',
    source_name: sourceName,
    name,
    identifier: name,
    database: 'warehouse',
    schema: sourceName,
    columns,
    original_file_path: 'models/sources.yml',
    ...fields,
  });
  const ref = (name: string, pkg: string | null = null, version: number | null = null) => ({
    name,
    package: pkg,
    version,
  });

  const sqlOf = async (nodes: Node[], id: string): Promise<string | undefined> => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-dbt-raw-'));
    const manifest = {
      metadata: { project_name: 'shop' },
      nodes: Object.fromEntries(nodes.filter((n) => n.resource_type !== 'source').map((n) => [n.unique_id, n])),
      sources: Object.fromEntries(nodes.filter((n) => n.resource_type === 'source').map((n) => [n.unique_id, n])),
    };
    try {
      mkdirSync(path.join(dir, 'target'));
      writeFileSync(path.join(dir, 'target/manifest.json'), JSON.stringify(manifest));
      const r = await readDbtProject({ projectDir: dir });
      expect(r.skipped).toEqual([]);
      const e = r.entities.find((x) => x.id === id);
      if (!e) throw new Error(`no entity ${id}; have ${r.entities.map((x) => x.id).join(', ')}`);
      return e.sql;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  test('refs and sources become the ids of the nodes depends_on names', async () => {
    const nodes = [
      model('orders', 'select 1 as id'),
      model('orders', 'select 2 as id', { unique_id: 'model.pkg.orders', package_name: 'pkg', schema: 'pkg_main' }),
      source('raw', 'payments', { identifier: 'payments_2024' }),
      model(
        'report',
        "select * from {{ ref('orders') }} join {{ ref('pkg', 'orders') }} using (id) join {{ source('raw', 'payments') }} using (id)",
        {
          refs: [ref('orders'), ref('orders', 'pkg')],
          sources: [['raw', 'payments']],
          depends_on: { nodes: ['model.shop.orders', 'model.pkg.orders', 'source.shop.raw.payments'] },
        },
      ),
    ];
    const sql = await sqlOf(nodes, 'main.report');
    expect(sql).toBe('select * from main.orders join pkg_main.orders using (id) join raw.payments_2024 using (id)');
    expect(tablesReadBySql(sql!)).toEqual(['main.orders', 'pkg_main.orders', 'raw.payments_2024']);
  });

  test('an unversioned ref is the latest version; a versioned one its version', async () => {
    const dim = (v: number) =>
      model('dim', `select ${v} as id`, {
        unique_id: `model.shop.dim.v${v}`,
        alias: `dim_v${v}`,
        version: v,
        latest_version: 2,
      });
    const uses = model('uses', "select * from {{ ref('dim') }}, {{ ref('dim', v=1) }}", {
      refs: [ref('dim'), ref('dim', null, 1)],
      depends_on: { nodes: ['model.shop.dim.v1', 'model.shop.dim.v2'] },
    });
    expect(await sqlOf([dim(1), dim(2), uses], 'main.uses')).toBe('select * from main.dim_v2, main.dim_v1');
  });

  test('two relations with one schema and name are told apart by depends_on, with their databases', async () => {
    const nodes = [
      source('raw_a', 'orders', { schema: 'raw', database: 'db_a' }),
      source('raw_b', 'orders', { schema: 'raw', database: 'db_b' }),
      model('stg', "select * from {{ source('raw_b', 'orders') }}", {
        sources: [['raw_b', 'orders']],
        depends_on: { nodes: ['source.shop.raw_b.orders'] },
      }),
    ];
    expect(await sqlOf(nodes, 'main.stg')).toBe('select * from db_b.raw.orders');
  });

  test('a name that is not a plain identifier is quoted, so the SQL reads back as the id', async () => {
    const nodes = [
      model('order', 'select 1 as id', { schema: 'Sales-EU' }),
      model('top', "select * from {{ ref('order') }}", {
        refs: [ref('order')],
        depends_on: { nodes: ['model.shop.order'] },
      }),
    ];
    const sql = await sqlOf(nodes, 'main.top');
    expect(sql).toBe('select * from "Sales-EU"."order"');
    expect(tablesReadBySql(sql!)).toEqual(['sales-eu.order']);
  });

  test.each([
    ['a ref to a node depends_on does not name', { refs: [ref('orders')], depends_on: { nodes: [] } }],
    ['a ref the parsed refs do not list', { refs: [], depends_on: { nodes: ['model.shop.orders'] } }],
    [
      'a project macro overriding ref',
      { refs: [ref('orders')], depends_on: { macros: ['macro.shop.ref'], nodes: ['model.shop.orders'] } },
    ],
    ['a Python model', { language: 'python', refs: [ref('orders')], depends_on: { nodes: ['model.shop.orders'] } }],
  ])('no SQL for %s', async (_title, fields) => {
    const nodes = [model('orders', 'select 1 as id'), model('report', "select * from {{ ref('orders') }}", fields)];
    expect(await sqlOf(nodes, 'main.report')).toBeUndefined();
  });

  test('compiled code, when present, wins', async () => {
    const nodes = [
      model('orders', 'select 1 as id'),
      model('report', "select * from {{ ref('orders') }}", {
        compiled_code: 'select * from "warehouse"."main"."orders"',
        refs: [ref('orders')],
        depends_on: { nodes: ['model.shop.orders'] },
      }),
    ];
    expect(await sqlOf(nodes, 'main.report')).toBe('select * from "warehouse"."main"."orders"');
  });
});

describe('on jaffle_shop with real dbt', () => {
  interface YamlColumn {
    name: string;
    description?: string;
  }
  interface YamlModel {
    name: string;
    description?: string;
    columns?: YamlColumn[];
  }
  interface BuiltManifest {
    nodes: Record<
      string,
      {
        resource_type: string;
        name: string;
        raw_code: string;
        compiled_code?: string;
        relation_name?: string;
        depends_on: { nodes: string[] };
      }
    >;
  }

  let shop: JaffleShop;
  let read: DbtProjectRead;
  let warehouse: { table_name: string; column_name: string; data_type: string }[];
  let yamlModels: YamlModel[];
  let built: BuiltManifest;

  const entity = (id: string) => {
    const e = read.entities.find((x) => x.id === id);
    if (!e) throw new Error(`no entity ${id}; have ${read.entities.map((x) => x.id).join(', ')}`);
    return e;
  };

  beforeAll(async () => {
    shop = await prepareJaffleShop();
    read = await readDbtProject({ projectDir: shop.dir });
    // `dbt show` (dbtQuery) rewrites target/manifest.json, without compiled code: keep the built one.
    built = JSON.parse(readFileSync(path.join(shop.dir, 'target/manifest.json'), 'utf8')) as BuiltManifest;
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
    // stg_orders could be rendered from raw_code too; the compiled code still wins.
    expect(entity('main.stg_orders').sql).toBe(built.nodes['model.jaffle_shop.stg_orders']!.compiled_code);
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
    const header = readFileSync(path.join(shop.dir, 'seeds/raw_customers.csv'), 'utf8')
      .split('\n')[0]!
      .trim()
      .split(',');
    expect(r.entities.find((e) => e.id === 'main.raw_customers')!.columns.map((c) => c.name)).toEqual(header);
    const declared = yamlModels.find((m) => m.name === 'orders')!.columns!.map((c) => c.name);
    expect(
      r.entities
        .find((e) => e.id === 'main.orders')!
        .columns.map((c) => c.name)
        .sort(),
    ).toEqual(declared.sort());
  });

  test('rendering raw_code gives what dbt compiled, with dbt relations for refs', () => {
    const models = Object.values(built.nodes).filter((n) => n.resource_type === 'model');
    expect(models.filter((m) => m.compiled_code)).toHaveLength(5);
    const rendered = new Map(
      models.map((m) => [
        m.name,
        renderRawCode(m.raw_code, (c) => {
          const target = m.depends_on.nodes.find((u) => c.kind === 'ref' && u.endsWith(`.${c.name}`));
          return target === undefined ? undefined : built.nodes[target]?.relation_name;
        }),
      ]),
    );
    // orders.sql builds its columns in a {% for %} loop: only Jinja can render it.
    expect(rendered.get('orders')).toBeUndefined();
    for (const m of models)
      if (m.name !== 'orders')
        expect({ model: m.name, sql: rendered.get(m.name) }).toEqual({ model: m.name, sql: m.compiled_code });
  });

  test('after dbt parse (no compiled SQL), models read the ids of their upstream nodes', async () => {
    const parsed = await shop.dbt(['parse', '--no-partial-parse', '--target-path', 'target-parse']);
    if (parsed.code !== 0) throw new Error(`dbt parse failed (exit ${parsed.code}):\n${parsed.output.slice(-4000)}`);
    const manifest = JSON.parse(readFileSync(path.join(shop.dir, 'target-parse/manifest.json'), 'utf8')) as {
      nodes: Record<string, { resource_type: string; compiled_code?: string }>;
    };
    const models = Object.values(manifest.nodes).filter((n) => n.resource_type === 'model');
    expect(models).toHaveLength(5);
    for (const m of models) expect(m.compiled_code ?? undefined).toBeUndefined();

    const r = await readDbtProject({ projectDir: shop.dir, manifest: 'target-parse/manifest.json' });
    const readsOf = (file: string) =>
      [
        ...new Set(
          [...readFileSync(path.join(shop.dir, file), 'utf8').matchAll(/ref\(\s*'([^']+)'\s*\)/g)].map(
            (m) => `main.${m[1]}`,
          ),
        ),
      ].sort();
    for (const file of [
      'models/staging/stg_customers.sql',
      'models/staging/stg_orders.sql',
      'models/staging/stg_payments.sql',
      'models/customers.sql',
    ]) {
      const e = r.entities.find((x) => x.id === `main.${path.basename(file, '.sql')}`)!;
      expect(e.sql).toBeDefined();
      expect(e.sql).not.toMatch(/\{[{%#]/);
      expect({ id: e.id, reads: tablesReadBySql(e.sql!).sort() }).toEqual({ id: e.id, reads: readsOf(file) });
      expect([...e.upstream].sort()).toEqual(readsOf(file));
    }
    expect(r.entities.find((x) => x.id === 'main.orders')!.sql).toBeUndefined();
  });
});
