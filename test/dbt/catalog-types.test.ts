// Column types from catalog.json, on a real dbt project: a copy of jaffle_shop with a landing source whose warehouse
// columns are upper case (as Snowflake lists them) and typed with DuckDB's own types, and two models whose columns
// are named `email` but hold a flag and a count; seeded, run and documented with real dbt. Expected types are read
// from catalog.json and manifest.json as dbt wrote them, never from the reader.
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { DbtCatalogAdapter } from '../../catalog/dbt/adapter';
import { UNKNOWN_COLUMN_TYPE, type CatalogEntity } from '../../domain/catalog';
import { CatalogRef, type SweepInput } from '../../domain/sweep';
import type { SweepReport } from '../../domain/report';
import { typeFamily, type TypeFamily } from '../../judgment/sql/types';
import { runSweep, useArgusWorker } from '../support/argus-worker';
import { copyJaffleShop, type JaffleShop } from '../support/dbt';

jest.setTimeout(600_000);

/** The landing table as created: column (DuckDB keeps the case given), the type cast to, a value, its family. */
const LANDING: [column: string, sqlType: string, value: string, family: TypeFamily][] = [
  ['CUSTOMER_ID', 'INTEGER', '1', 'int'],
  ['EMAIL', 'VARCHAR', "'ann@example.com'", 'text'],
  ['OPTED_IN', 'BOOLEAN', 'true', 'bool'],
  ['EMAILS_SENT', 'UBIGINT', '3', 'int'],
  ['CLICKS', 'HUGEINT', '4', 'int'],
  ['SIGNED_UP_AT', 'TIMESTAMP_S', "'2018-01-01 10:00:00'", 'timestamp'],
  ['LAST_SEEN_AT', 'TIMESTAMPTZ', "'2018-01-02 10:00:00+00'", 'timestamp'],
  ['SCORE', 'DECIMAL(5,2)', '1.5', 'decimal'],
];
const LANDING_SQL =
  'create or replace table landing.newsletter_signups as select ' +
  LANDING.map(([column, type, value]) => `cast(${value} as ${type}) as "${column}"`).join(', ');

const FILES: Record<string, string> = {
  'models/landing.yml': [
    'version: 2',
    'sources:',
    '  - name: landing',
    '    schema: landing',
    '    tables:',
    '      - name: newsletter_signups',
    '        columns:',
    '          - name: customer_id',
    '          - name: email',
    // Declared, not in the table: catalog.json has no entry, so the manifest's data_type is the type.
    '          - name: referrer',
    '            data_type: character varying(2048)',
    '',
  ].join('\n'),
  'models/newsletter_optins.sql': `select "CUSTOMER_ID" as customer_id, "OPTED_IN" as email from {{ source('landing', 'newsletter_signups') }}\n`,
  'models/newsletter_sends.sql': `select "CUSTOMER_ID" as customer_id, "EMAILS_SENT" as email from {{ source('landing', 'newsletter_signups') }}\n`,
  'models/newsletter.yml': [
    'version: 2',
    'models:',
    '  - name: newsletter_optins',
    '    columns:',
    '      - name: email',
    '      - name: unsubscribed_at',
    '        data_type: date',
    '  - name: newsletter_sends',
    '    columns:',
    // The YAML says text; the warehouse says otherwise and is believed.
    '      - name: email',
    '        data_type: varchar',
    '',
  ].join('\n'),
};

/** Added after `dbt docs generate`, so catalog.json knows neither. */
const LATER: Record<string, string> = {
  'models/newsletter_latest.sql': "select customer_id, email from {{ ref('newsletter_optins') }}\n",
  'models/newsletter_latest.yml': [
    'version: 2',
    'models:',
    '  - name: newsletter_latest',
    '    columns:',
    '      - name: customer_id',
    '        data_type: integer',
    '      - name: email',
    '        data_type: boolean',
    '',
  ].join('\n'),
  'models/newsletter_undeclared.sql': "select customer_id from {{ ref('newsletter_optins') }}\n",
};

interface CatalogJsonFile {
  metadata: { generated_at?: string };
  nodes: Record<string, CatalogNode>;
  sources: Record<string, CatalogNode>;
}
interface CatalogNode {
  metadata: { schema: string; name: string };
  columns: Record<string, { name: string; type: string }>;
}
interface ManifestFile {
  metadata: { generated_at?: string };
  nodes: Record<string, { resource_type: string; columns: Record<string, { name: string; data_type: string | null }> }>;
  sources: Record<string, { columns: Record<string, { name: string; data_type: string | null }> }>;
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

let shop: JaffleShop;
let catalogJson: CatalogJsonFile;
let manifest: ManifestFile;

function adapterFor(fields: { manifest?: string; catalog?: string } = {}): DbtCatalogAdapter {
  const ref = CatalogRef.parse({ kind: 'dbt', projectDir: shop.dir, ...fields });
  if (ref.kind !== 'dbt') throw new Error('not a dbt ref');
  return new DbtCatalogAdapter(ref, path.join(shop.dir, '..', 'argus-state'));
}

async function entitiesOf(adapter: DbtCatalogAdapter): Promise<Map<string, CatalogEntity>> {
  const { entities, invalid } = await adapter.getEntities((await adapter.snapshot()).ids);
  expect(invalid).toEqual([]);
  return new Map(entities.map((e) => [e.id, e]));
}

const columnOf = (e: CatalogEntity | undefined, name: string) =>
  e?.columns.filter((c) => c.name.toLowerCase() === name.toLowerCase());

/** An ISO instant `micros` microseconds after the epoch, written as dbt writes generated_at. */
function isoMicros(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = String(micros - seconds * 1_000_000).padStart(6, '0');
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, `.${fraction}Z`);
}
function microsOf(iso: string): number {
  const m = /^(.*)\.(\d{6})Z$/.exec(iso);
  if (!m) throw new Error(`generated_at ${iso} is not in dbt's format`);
  return Date.parse(`${m[1]}Z`) * 1000 + Number(m[2]);
}

/** Copies of the manifest and catalog.json under `dir/`, changed by `edit`, with the given mtimes (seconds). */
function copyPair(
  dir: string,
  edit: (m: ManifestFile, c: CatalogJsonFile) => void,
  mtimes: { manifest: number; catalog: number },
): { manifest: string; catalog: string } {
  mkdirSync(path.join(shop.dir, dir), { recursive: true });
  const m = readJson<ManifestFile>(path.join(shop.dir, 'target/manifest.json'));
  const c = readJson<CatalogJsonFile>(path.join(shop.dir, 'target/catalog.json'));
  edit(m, c);
  const files = { manifest: `${dir}/manifest.json`, catalog: `${dir}/catalog.json` };
  writeFileSync(path.join(shop.dir, files.manifest), JSON.stringify(m));
  writeFileSync(path.join(shop.dir, files.catalog), JSON.stringify(c));
  utimesSync(path.join(shop.dir, files.manifest), mtimes.manifest, mtimes.manifest);
  utimesSync(path.join(shop.dir, files.catalog), mtimes.catalog, mtimes.catalog);
  return files;
}

const w = useArgusWorker('tq-dbt-types');

beforeAll(async () => {
  shop = copyJaffleShop();
  const project = path.join(shop.dir, 'dbt_project.yml');
  // JSON strings are YAML double-quoted scalars.
  writeFileSync(
    project,
    `${readFileSync(project, 'utf8')}\non-run-start:\n  - "create schema if not exists landing"\n  - ${JSON.stringify(LANDING_SQL)}\n`,
  );
  for (const [file, text] of Object.entries(FILES)) writeFileSync(path.join(shop.dir, file), text);
  for (const cmd of [['seed'], ['run'], ['docs', 'generate']]) {
    const r = await shop.dbt(cmd);
    if (r.code !== 0) throw new Error(`dbt ${cmd.join(' ')} failed (exit ${r.code}):\n${r.output.slice(-4000)}`);
  }
  catalogJson = readJson<CatalogJsonFile>(path.join(shop.dir, 'target/catalog.json'));
  manifest = readJson<ManifestFile>(path.join(shop.dir, 'target/manifest.json'));
});

describe('a fresh catalog.json', () => {
  let entities: Map<string, CatalogEntity>;
  beforeAll(async () => {
    entities = await entitiesOf(adapterFor());
  });

  test("every column catalog.json lists, of nodes and sources, is one column of its entity with catalog.json's type", async () => {
    const listed = [...Object.values(catalogJson.nodes), ...Object.values(catalogJson.sources)];
    expect(Object.keys(catalogJson.sources)).toEqual(['source.jaffle_shop.landing.newsletter_signups']);
    expect(listed.length).toBe(entities.size);
    let checked = 0;
    for (const node of listed) {
      const e = entities.get(`${node.metadata.schema}.${node.metadata.name}`);
      for (const c of Object.values(node.columns)) {
        const found = columnOf(e, c.name)?.map((x) => x.type);
        expect({ entity: e?.id, column: c.name, types: found }).toEqual({
          entity: e?.id,
          column: c.name,
          types: [c.type],
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
    // A type the YAML declares does not win over the warehouse's.
    const sends = catalogJson.nodes['model.jaffle_shop.newsletter_sends']!;
    expect(manifest.nodes['model.jaffle_shop.newsletter_sends']!.columns.email!.data_type).toBe('varchar');
    expect(columnOf(entities.get('main.newsletter_sends'), 'email')![0]!.type).toBe(sends.columns.email!.type);
  });

  test('upper-case warehouse columns keep the name the YAML declares, and DuckDB types read as their families', () => {
    const signups = entities.get('landing.newsletter_signups')!;
    const listed = catalogJson.sources['source.jaffle_shop.landing.newsletter_signups']!.columns;
    expect(Object.keys(listed)).toEqual(LANDING.map(([column]) => column));
    expect(signups.columns.map((c) => c.name).slice(0, 2)).toEqual(['customer_id', 'email']);
    for (const [column, sqlType, , family] of LANDING) {
      const [col] = columnOf(signups, column)!;
      expect({ column, sqlType, type: col?.type, family: typeFamily(col?.type ?? '') }).toEqual({
        column,
        sqlType,
        type: listed[column]!.type,
        family,
      });
    }
    // Whatever dbt-duckdb lists anywhere in the project, the rules know its family.
    const all = [...Object.values(catalogJson.nodes), ...Object.values(catalogJson.sources)].flatMap((n) =>
      Object.values(n.columns).map((c) => c.type),
    );
    expect([...new Set(all)].filter((t) => ['other', 'unknown'].includes(typeFamily(t)))).toEqual([]);
  });

  test("a declared column catalog.json lacks takes the manifest's data_type, else unknown", () => {
    const cases: [entity: string, column: string, declared: { data_type: string | null } | undefined][] = [
      [
        'landing.newsletter_signups',
        'referrer',
        manifest.sources['source.jaffle_shop.landing.newsletter_signups']!.columns.referrer,
      ],
      [
        'main.newsletter_optins',
        'unsubscribed_at',
        manifest.nodes['model.jaffle_shop.newsletter_optins']!.columns.unsubscribed_at,
      ],
      [
        'main.customers',
        'total_order_amount',
        manifest.nodes['model.jaffle_shop.customers']!.columns.total_order_amount,
      ],
    ];
    const inCatalog = (id: string, column: string) =>
      [...Object.values(catalogJson.nodes), ...Object.values(catalogJson.sources)].some(
        (n) => `${n.metadata.schema}.${n.metadata.name}` === id && column in n.columns,
      );
    for (const [id, column, declared] of cases) {
      expect(declared).toBeDefined();
      expect(inCatalog(id, column)).toBe(false);
      expect({ id, column, type: columnOf(entities.get(id), column)?.map((c) => c.type) }).toEqual({
        id,
        column,
        type: [declared!.data_type || UNKNOWN_COLUMN_TYPE],
      });
    }
  });

  test('says nothing about catalog.json', async () => {
    expect(microsOf(catalogJson.metadata.generated_at!)).toBeGreaterThan(microsOf(manifest.metadata.generated_at!));
    expect(await adapterFor().notes()).toEqual([]);
  });
});

describe('catalog.json older than the manifest', () => {
  test("is said, trusted for what it lists, and not for the nodes and columns it lacks: they take the manifest's", async () => {
    for (const [file, text] of Object.entries(LATER)) writeFileSync(path.join(shop.dir, file), text);
    const parsed = await shop.dbt(['parse', '--no-partial-parse', '--target-path', 'target-later']);
    if (parsed.code !== 0) throw new Error(`dbt parse failed (exit ${parsed.code}):\n${parsed.output.slice(-4000)}`);
    const later = readJson<ManifestFile>(path.join(shop.dir, 'target-later/manifest.json'));
    expect(microsOf(later.metadata.generated_at!)).toBeGreaterThan(microsOf(catalogJson.metadata.generated_at!));

    const adapter = adapterFor({ manifest: 'target-later/manifest.json' });
    const notes = await adapter.notes();
    const [stale, leftOut] = notes;
    expect(notes).toHaveLength(2);
    expect(stale).toContain('target/catalog.json is older than target-later/manifest.json');
    expect(stale).toContain(
      `generated ${catalogJson.metadata.generated_at}, the manifest ${later.metadata.generated_at}`,
    );
    // What it lacks, counted from the files: the two models added since, and the declared columns of nodes it has.
    const typed = { ...catalogJson.nodes, ...catalogJson.sources };
    const declared = [
      ...Object.entries(later.nodes).filter(([, n]) => ['model', 'seed', 'snapshot'].includes(n.resource_type)),
      ...Object.entries(later.sources),
    ];
    const nodesLacked = declared.filter(([id]) => !typed[id]).length;
    const columnsLacked = declared
      .filter(([id]) => typed[id])
      .flatMap(([id, n]) => {
        // By name without regard to case, as catalog.json's upper-case columns must be matched.
        const listed = new Set(Object.keys(typed[id]!.columns).map((c) => c.toLowerCase()));
        return Object.keys(n.columns).filter((c) => !listed.has(c.toLowerCase()));
      }).length;
    expect(nodesLacked).toBe(2);
    expect(stale).toContain(`not trusted for the ${nodesLacked} nodes and ${columnsLacked} columns it lacks`);
    expect(leftOut).toMatch(/^1 node left out: model\.jaffle_shop\.newsletter_undeclared \(.*older than the manifest/);

    const entities = await entitiesOf(adapter);
    const latest = entities.get('main.newsletter_latest')!;
    const latestDeclared = later.nodes['model.jaffle_shop.newsletter_latest']!.columns;
    expect(latest.columns.map((c) => [c.name, c.type])).toEqual(
      Object.values(latestDeclared).map((c) => [c.name, c.data_type]),
    );
    expect(entities.has('main.newsletter_undeclared')).toBe(false);
    // What it lists is still used.
    expect(columnOf(entities.get('main.newsletter_optins'), 'email')![0]!.type).toBe(
      catalogJson.nodes['model.jaffle_shop.newsletter_optins']!.columns.email!.type,
    );
  });

  test('generated_at decides, to the microsecond, whatever the mtimes; an adapter sees catalog.json rewritten alone', async () => {
    const at = microsOf(manifest.metadata.generated_at!);
    const now = Date.now() / 1000;
    const files = copyPair(
      'older-by-a-microsecond',
      (_m, c) => {
        c.metadata.generated_at = isoMicros(at - 1);
      },
      { manifest: now - 60, catalog: now },
    );
    const adapter = adapterFor(files);
    expect(await adapter.notes()).toEqual([expect.stringContaining(`generated ${isoMicros(at - 1)}`)]);

    const rewritten = readJson<CatalogJsonFile>(path.join(shop.dir, files.catalog));
    rewritten.metadata.generated_at = manifest.metadata.generated_at!;
    writeFileSync(path.join(shop.dir, files.catalog), JSON.stringify(rewritten));
    utimesSync(path.join(shop.dir, files.catalog), now + 5, now + 5);
    expect(await adapter.notes()).toEqual([]);
  });

  test.each([
    ['older', -60, true],
    ['newer', 60, false],
  ])('without generated_at, the mtimes decide: a catalog.json %s than the manifest', async (what, offset, stale) => {
    const now = Date.now() / 1000;
    const files = copyPair(
      `mtime-${what}`,
      (m, c) => {
        delete m.metadata.generated_at;
        delete c.metadata.generated_at;
      },
      { manifest: now, catalog: now + offset },
    );
    const notes = await adapterFor(files).notes();
    if (stale) expect(notes).toEqual([expect.stringMatching(/is older than .*\(modified .*no generated_at/)]);
    else expect(notes).toEqual([]);
  });
});

describe('sweeps judge dbt columns by their warehouse types', () => {
  const sweep = (input: SweepInput) => runSweep(w, input, 'sweep/dbt-types/test');
  const emailTags = (r: SweepReport) =>
    r.proposals
      .filter(
        (p) => p.change.kind === 'pii_tag' && p.change.column.toLowerCase() === 'email' && p.outcome === 'approved',
      )
      .map((p) => `${p.entityId}:${(p.change as { category: string }).category}`)
      .sort();

  test('columns named email that hold a flag or a count are not tagged; the text one is, and written', async () => {
    const report = await sweep({ catalog: { kind: 'dbt', projectDir: shop.dir } });
    expect(report.failures).toEqual([]);
    expect(report.catalogNotes).toBeUndefined();
    expect(emailTags(report)).toEqual(['landing.newsletter_signups:email']);
    const tag = report.proposals.find(
      (p) => p.entityId === 'landing.newsletter_signups' && p.change.kind === 'pii_tag',
    );
    expect(tag?.written).toBe(true);
    // Written under the name the YAML declares: one `email` entry, tagged.
    const yaml = readFileSync(path.join(shop.dir, 'models/landing.yml'), 'utf8');
    expect(yaml.match(/- name: email\b/gi)).toHaveLength(1);
    expect(yaml).toMatch(/- name: email\n(?:\s+.*\n)*?\s+pii_category: email/);
  });

  test('the same project without catalog.json tags them: the types were what told them apart', async () => {
    const report = await sweep({
      catalog: { kind: 'dbt', projectDir: shop.dir, catalog: 'target/no-catalog.json' },
      dryRun: true,
      incremental: false,
    });
    expect(report.failures).toEqual([]);
    expect(emailTags(report)).toEqual(['main.newsletter_optins:email', 'main.newsletter_sends:email']);
    expect(report.catalogNotes).toEqual(await adapterFor({ catalog: 'target/no-catalog.json' }).notes());
    expect(report.catalogNotes?.[0]).toMatch(/^no target\/no-catalog\.json: column types are the manifest's data_type/);
  });

  test("a sweep of a manifest newer than catalog.json says so in its report's catalogNotes", async () => {
    const ref = { manifest: 'target-later/manifest.json' };
    const report = await sweep({ catalog: { kind: 'dbt', projectDir: shop.dir, ...ref }, dryRun: true });
    expect(report.partial).toBe(false);
    expect(report.catalogNotes).toEqual(await adapterFor(ref).notes());
    expect(report.catalogNotes?.[0]).toMatch(/^target\/catalog\.json is older than target-later\/manifest\.json/);
    const onFile = readJson<SweepReport>(report.reportFile);
    expect(onFile.catalogNotes).toEqual(report.catalogNotes);
  });
});
