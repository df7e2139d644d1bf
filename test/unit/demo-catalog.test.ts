import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CatalogFile, type CatalogEntity } from '../../domain/catalog';
import { CATALOG_SCHEMA_PATH, catalogJsonSchema } from '../../scripts/export-catalog-schema';

const root = path.resolve(__dirname, '..', '..');
const raw: unknown = JSON.parse(readFileSync(path.join(root, 'catalog/demo/shop-warehouse.json'), 'utf8'));
const demo = CatalogFile.parse(raw);
const ids = new Set(demo.entities.map((e) => e.id));
const SCHEMAS = new Set(['raw', 'staging', 'marts', 'reporting']);

/** `<schema>.<name>` references in SQL (plain or double-quoted), for the demo's four schemas only. */
function sqlReads(sql: string): Set<string> {
  const reads = new Set<string>();
  for (const m of sql.matchAll(/(?:"(\w+)"|\b(\w+))\s*\.\s*(?:"(\w+)"|(\w+)\b)/g)) {
    const schema = m[1] ?? m[2];
    const name = m[3] ?? m[4];
    if (schema && name && SCHEMAS.has(schema)) reads.add(`${schema}.${name}`);
  }
  return reads;
}

function danglingEdges(entities: readonly CatalogEntity[]): string[] {
  return entities.flatMap((e) => e.upstream.filter((u) => !ids.has(u)).map((u) => `${e.id} -> ${u}`));
}

function unrecordedReads(entities: readonly CatalogEntity[]): string[] {
  return entities.flatMap((e) =>
    [...sqlReads(e.sql ?? '')].filter((r) => !e.upstream.includes(r)).map((r) => `${e.id} -> ${r}`),
  );
}

describe('demo catalog (catalog/demo/shop-warehouse.json)', () => {
  it('is a version 1 catalog named demo with a description', () => {
    expect(CatalogFile.safeParse(raw).success).toBe(true);
    expect(demo).toMatchObject({ format: 'argus-catalog', version: 1, name: 'demo' });
    expect(demo.description).toMatch(/demo/i);
  });

  it('has at least 45 entities with unique `<schema>.<name>` ids', () => {
    expect(demo.entities.length).toBeGreaterThanOrEqual(45);
    expect(ids.size).toBe(demo.entities.length);
    for (const e of demo.entities) expect(e.id).toBe(`${e.schema}.${e.name}`);
  });

  it('uses the four layers, with SQL on every view and only on views', () => {
    const layers = new Set(demo.entities.map((e) => `${e.schema}:${e.layer}`));
    expect([...layers].sort()).toEqual(['marts:mart', 'raw:raw', 'reporting:reporting', 'staging:staging']);
    for (const e of demo.entities) expect([e.id, e.sql !== undefined]).toEqual([e.id, e.kind === 'view']);
    expect(demo.entities.filter((e) => e.layer === 'reporting').every((e) => e.kind === 'view')).toBe(true);
  });

  it('has unique column names per entity and foreign keys that resolve', () => {
    const columns = new Set(demo.entities.flatMap((e) => e.columns.map((c) => `${e.id}.${c.name}`)));
    for (const e of demo.entities) {
      expect(new Set(e.columns.map((c) => c.name)).size).toBe(e.columns.length);
      for (const c of e.columns)
        if (c.foreign_key) expect([c.foreign_key, columns.has(c.foreign_key)]).toEqual([c.foreign_key, true]);
    }
  });

  it('breaks lineage exactly where intended and nowhere else', () => {
    expect(danglingEdges(demo.entities).sort()).toEqual([
      'reporting.rpt_trial_balance -> marts.dim_gl_account',
      'staging.stg_customers -> raw.legacy_customers_v1',
    ]);
    expect(unrecordedReads(demo.entities).sort()).toEqual([
      'reporting.rpt_customer_lifetime_value -> marts.dim_customer',
      'staging.stg_order_items_enriched -> raw.products',
    ]);
    // No view records an existing upstream its SQL does not read.
    for (const e of demo.entities.filter((x) => x.sql !== undefined)) {
      const reads = sqlReads(e.sql ?? '');
      expect([e.id, e.upstream.filter((u) => ids.has(u) && !reads.has(u))]).toEqual([e.id, []]);
    }
  });

  it('has a CTE named like a raw table (orders) that is not a read', () => {
    const conversion = demo.entities.find((e) => e.id === 'reporting.rpt_channel_conversion');
    expect(conversion?.sql).toMatch(/\borders AS \(/);
    expect([...sqlReads(conversion?.sql ?? '')].sort()).toEqual(['marts.fct_orders', 'marts.fct_web_sessions']);
  });

  it('leaves roughly half the entities and most columns without a description', () => {
    const entitiesMissing = demo.entities.filter((e) => e.description === undefined).length / demo.entities.length;
    const columns = demo.entities.flatMap((e) => e.columns);
    const columnsMissing = columns.filter((c) => c.description === undefined).length / columns.length;
    expect(entitiesMissing).toBeGreaterThanOrEqual(0.4);
    expect(entitiesMissing).toBeLessThanOrEqual(0.6);
    expect(columnsMissing).toBeGreaterThan(0.8);
  });

  it('marks who wrote every description, with at least 8 human ones', () => {
    const texts = demo.entities.flatMap((e) => [e, ...e.columns]);
    for (const t of texts) expect(t.description === undefined).toBe(t.description_source === undefined);
    expect(texts.filter((t) => t.description_source === 'human').length).toBeGreaterThanOrEqual(8);
    const humanAmongBlanks = demo.entities.filter(
      (e) =>
        e.columns.some((c) => c.description_source === 'human') && e.columns.some((c) => c.description === undefined),
    );
    expect(humanAmongBlanks.length).toBeGreaterThanOrEqual(2);
  });

  it('contains human PII tags, a pii_exceptions entry and an instruction-like human description', () => {
    const columns = demo.entities.flatMap((e) => e.columns);
    expect(columns.filter((c) => c.tags.some((t) => t.source === 'human')).length).toBeGreaterThanOrEqual(1);
    const withExceptions = demo.entities.filter((e) => e.pii_exceptions.length > 0);
    expect(withExceptions.length).toBeGreaterThanOrEqual(1);
    for (const e of withExceptions) for (const x of e.pii_exceptions) expect(e.columns.map((c) => c.name)).toContain(x);
    expect(
      columns.some((c) => c.description_source === 'human' && /ignore your rules/i.test(c.description ?? '')),
    ).toBe(true);
  });
});

describe('committed JSON Schema', () => {
  it('equals what catalogJsonSchema() produces from domain/catalog.ts', () => {
    const committed: unknown = JSON.parse(readFileSync(path.join(root, CATALOG_SCHEMA_PATH), 'utf8'));
    expect(committed).toEqual(catalogJsonSchema());
  });
});
