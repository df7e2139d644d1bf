import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  effectiveFingerprints,
  entityJson,
  entityPrints,
  knownEntityJson,
  evidenceView,
  readsFrom,
  refsOf,
  type EntityPrints,
} from '../../judgment/fingerprint';
import { rejudgeScope } from '../../activities/incremental-activities';
import { createCatalogContext } from '../../judgment/catalog-context';
import { CatalogEntity, CatalogFile, type CatalogEntityInput } from '../../domain/catalog';
import { stableJson } from '../../domain/digest';
import { generateCatalog } from '../../scripts/generate-catalog';
import { applyChange } from '../../catalog/entity-repairs';
import { NO_MODEL_AGENTS } from '../../judgment/agents';

const entity = (e: Partial<CatalogEntityInput> & { id: string }) =>
  CatalogEntity.parse({
    database: 'wh',
    name: e.id.split('.').pop(),
    kind: 'table',
    columns: [{ name: 'id', type: 'int' }],
    ...e,
  });

describe('entityPrints: the own fingerprint', () => {
  const own = (e: CatalogEntity) => entityPrints(e).own;
  const base = entity({ id: 'raw.customers', columns: [{ name: 'email', type: 'text', description: 'E-mail' }] });
  test.each([
    ['a description', { columns: [{ name: 'email', type: 'text', description: 'E-mail address' }] }],
    ['a type', { columns: [{ name: 'email', type: 'varchar', description: 'E-mail' }] }],
    [
      'a column added',
      {
        columns: [
          { name: 'email', type: 'text', description: 'E-mail' },
          { name: 'x', type: 'int' },
        ],
      },
    ],
    ['lineage', { upstream: ['raw.other'] }],
    ['SQL', { sql: 'select 1' }],
    ['an exception', { pii_exceptions: ['email'] }],
    [
      'a tag',
      {
        columns: [
          {
            name: 'email',
            type: 'text',
            description: 'E-mail',
            tags: [{ kind: 'pii', category: 'email', confidence: 0.9, explanation: 'e-mail', source: 'human' }],
          },
        ],
      },
    ],
  ] as const)('changes with %s', (_what, change) => {
    expect(own(entity({ id: 'raw.customers', ...change } as never))).not.toBe(own(base));
  });

  test('is the same for the same record, whatever the order of its keys', () => {
    const a = entity({ id: 't', layer: 'raw', description: 'x' });
    const b = CatalogEntity.parse(JSON.parse(JSON.stringify({ description: 'x', ...a, layer: 'raw' })));
    expect(own(b)).toBe(own(a));
  });
});

describe('readsFrom', () => {
  const ctx = createCatalogContext(['raw.customers', 'raw.orders', 'staging.v']);
  test('names the entities lineage and SQL read, unresolved names and foreign keys by resolution', () => {
    const v = entity({
      id: 'staging.v',
      kind: 'view',
      upstream: ['raw.customers', 'raw.gone'],
      sql: 'select * from raw.orders join raw.missing using (id)',
      columns: [{ name: 'customer_id', type: 'int', foreign_key: 'raw.customers.id' }],
    });
    const r = readsFrom(v.id, refsOf(v), ctx);
    expect(r.entities).toEqual(['raw.customers', 'raw.orders']);
    expect(r.names).toEqual(expect.arrayContaining(['raw.gone', 'raw.missing', 'fk:raw.customers:raw.customers']));
  });
});

const argusTag = { kind: 'pii', category: 'email', confidence: 0.9, explanation: 'e-mail', source: 'argus' } as const;

describe('entityPrints: one digest per reading', () => {
  const base = entity({ id: 'raw.customers', columns: [{ name: 'email', type: 'text' }] });
  const changed = (e: Partial<CatalogEntityInput> & { id: string }) => {
    const [a, b] = [entityPrints(base), entityPrints(entity(e))];
    return (['own', 'pii', 'evidence'] as const).filter((k) => a[k] !== b[k]);
  };
  test("ARGUS's description is read by the PII classifier only, its tag by nothing but the record", () => {
    const described = {
      name: 'email',
      type: 'text',
      description: 'E-mail address.',
      description_source: 'argus',
    } as const;
    expect(changed({ id: 'raw.customers', columns: [described] })).toEqual(['own', 'pii']);
    const table = { id: 'raw.customers', columns: [{ name: 'email', type: 'text' }] };
    expect(changed({ ...table, description: 'Customers.', description_source: 'argus' })).toEqual(['own', 'pii']);
    expect(changed({ id: 'raw.customers', columns: [{ name: 'email', type: 'text', tags: [argusTag] }] })).toEqual([
      'own',
    ]);
  });
  test("a person's text or tag, a type and lineage change every reading", () => {
    const human = { name: 'email', type: 'text', description: 'E-mail address.', description_source: 'human' } as const;
    expect(changed({ id: 'raw.customers', columns: [human] })).toEqual(['own', 'pii', 'evidence']);
    const tagged = { name: 'email', type: 'text', tags: [{ ...argusTag, source: 'human' as const }] };
    expect(changed({ id: 'raw.customers', columns: [tagged] })).toEqual(['own', 'pii', 'evidence']);
    expect(changed({ id: 'raw.customers', columns: [{ name: 'email', type: 'varchar' }] })).toHaveLength(3);
    expect(changed({ id: 'raw.customers', upstream: ['raw.x'] })).toHaveLength(3);
  });
  test("the evidence view leaves out exactly ARGUS's text and tags, and is the entity itself when it has none", () => {
    expect(evidenceView(base)).toBe(base);
    const e = entity({
      id: 'raw.customers',
      description: 'Customers.',
      description_source: 'argus',
      columns: [
        { name: 'email', type: 'text', description: 'E-mail.', description_source: 'argus', tags: [argusTag] },
        { name: 'name', type: 'text', description: 'Full name.', tags: [{ ...argusTag, source: 'human' as const }] },
      ],
    });
    const v = evidenceView(e);
    expect(v.description).toBeUndefined();
    expect(v.columns[0]).toMatchObject({ name: 'email', tags: [] });
    expect(v.columns[0]!.description).toBeUndefined();
    expect(v.columns[1]).toEqual(e.columns[1]);
    expect(e.columns[0]!.description).toBe('E-mail.'); // the record itself is untouched
    expect(entityPrints(e).evidence).toBe(entityPrints(v).own);
  });
});

const same = (s: string): EntityPrints => ({ own: s, pii: s, evidence: s });

describe('effectiveFingerprints', () => {
  const reads = new Map([
    ['a', { entities: [], names: [] }],
    ['b', { entities: ['a'], names: [] }],
    ['c', { entities: ['b'], names: [] }],
    ['d', { entities: [], names: [] }],
  ]);
  const own = new Map([
    ['a', same('A')],
    ['b', same('B')],
    ['c', same('C')],
    ['d', same('D')],
  ]);
  test('a change travels to every entity that reads it, over several hops, and nowhere else', () => {
    const before = effectiveFingerprints(own, reads);
    const after = effectiveFingerprints(new Map([...own, ['a', same('A2')]]), reads);
    const changed = [...before.keys()].filter((k) => before.get(k)!.fp !== after.get(k)!.fp);
    expect(changed).toEqual(['a', 'b', 'c']);
  });

  test("what ARGUS wrote on an entity changes its own fingerprints only, never its readers'", () => {
    const before = effectiveFingerprints(own, reads);
    const after = effectiveFingerprints(new Map([...own, ['a', { own: 'A2', pii: 'A2', evidence: 'A' }]]), reads);
    const changed = [...before.keys()].filter((k) => before.get(k)!.fp !== after.get(k)!.fp);
    expect(changed).toEqual(['a']);
    expect(rejudgeScope(before.get('a'), after.get('a'))).toBe('pii');
    expect(rejudgeScope(before.get('b'), after.get('b'))).toBe('none');
    const tagged = effectiveFingerprints(new Map([...own, ['a', { own: 'A3', pii: 'A', evidence: 'A' }]]), reads);
    expect(rejudgeScope(before.get('a'), tagged.get('a'))).toBe('absorbed');
    const human = effectiveFingerprints(new Map([...own, ['a', same('A4')]]), reads);
    // The entity itself is judged whole; those reading it by everything but the PII classifier (it reads one
    // entity alone); the rest not at all.
    expect(['a', 'b', 'c', 'd'].map((k) => rejudgeScope(before.get(k), human.get(k)))).toEqual([
      'all',
      'readers',
      'readers',
      'none',
    ]);
    // A reader that also changed itself is judged whole; prints an earlier version did not keep count as changed.
    const both = effectiveFingerprints(new Map([...own, ['a', same('A4')], ['b', same('B2')]]), reads);
    expect(rejudgeScope(before.get('b'), both.get('b'))).toBe('all');
    expect(rejudgeScope({ fp: before.get('a')!.fp, ev: '', pii: '', tr: '' }, tagged.get('a'))).toBe('all');
  });

  test('a cycle in the lineage ends, and every entity gets a fingerprint', () => {
    const cyclic = new Map([
      ['x', { entities: ['y'], names: [] }],
      ['y', { entities: ['x'], names: [] }],
    ]);
    const fps = effectiveFingerprints(
      new Map([
        ['x', same('X')],
        ['y', same('Y')],
      ]),
      cyclic,
    );
    expect([...fps.keys()].sort()).toEqual(['x', 'y']);
    const changed = effectiveFingerprints(
      new Map([
        ['x', same('X2')],
        ['y', same('Y')],
      ]),
      cyclic,
    );
    expect(changed.get('y')!.fp).not.toBe(fps.get('y')!.fp);
  });

  test('a long chain does not overflow the stack', () => {
    const n = 50_000;
    const own2 = new Map(Array.from({ length: n }, (_, i) => [`e${i}`, same(`F${i}`)] as [string, EntityPrints]));
    const reads2 = new Map<string, { entities: string[]; names: string[] }>(
      Array.from({ length: n }, (_, i) => [`e${i}`, { entities: i ? [`e${i - 1}`] : [], names: [] }]),
    );
    expect(effectiveFingerprints(own2, reads2).size).toBe(n);
  });
});

describe('entityJson', () => {
  // The fingerprints of every catalog's memory rest on this text: it must be stableJson's, byte for byte.
  const demo = CatalogFile.parse(
    JSON.parse(readFileSync(path.join(__dirname, '../../catalog/demo/shop-warehouse.json'), 'utf8')),
  ).entities;
  const generated = CatalogFile.parse(generateCatalog({ entities: 600, seed: 7, name: 'g' })).entities;

  test('writes what stableJson writes for every entity of the demo and of a generated catalog, and their views', () => {
    const all = [...demo, ...generated];
    expect(all.length).toBeGreaterThan(600);
    for (const e of all) {
      expect(knownEntityJson(e)).toBe(stableJson(e));
      expect(knownEntityJson(evidenceView(e))).toBe(stableJson(evidenceView(e)));
    }
  });

  test('writes what stableJson writes after ARGUS wrote descriptions and tags (views with fields deleted)', () => {
    const ctx = createCatalogContext(demo.map((e) => e.id));
    const byId = new Map(demo.map((e) => [e.id, e]));
    let written = 0;
    for (const e of demo.map((x) => structuredClone(x))) {
      for (const agent of Object.values(NO_MODEL_AGENTS))
        for (const p of agent(e, ctx, { get: (id: string) => byId.get(id) }))
          if (applyChange(e, p.change, `p-${written}`, false).status === 'written') written++;
      expect(knownEntityJson(e)).toBe(stableJson(e));
      expect(knownEntityJson(evidenceView(e))).toBe(stableJson(evidenceView(e)));
    }
    expect(written).toBeGreaterThan(50);
  });

  test.each([
    ['an unknown key', false, (e: Record<string, unknown>) => (e.owner = { team: 'x', a: 1 })],
    [
      'an unknown column key',
      false,
      (e: Record<string, unknown>) => ((e.columns as { extra?: number }[])[0]!.extra = 2),
    ],
    [
      'a number that is not finite',
      false,
      (e: Record<string, unknown>) => ((e.columns as { tags: unknown[] }[])[0]!.tags = [{ confidence: NaN }]),
    ],
    ['a value of another type', false, (e: Record<string, unknown>) => (e.upstream = [1, 'a'])],
    ['an undefined value', true, (e: Record<string, unknown>) => (e.layer = undefined)],
    [
      'keys in another order',
      true,
      (e: Record<string, unknown>) => {
        const entries = Object.entries(e).reverse();
        for (const [k] of entries) delete e[k];
        for (const [k, v] of entries) e[k] = v;
      },
    ],
  ])('with %s, still writes what stableJson writes (its own walk: %s)', (_what, walks, edit) => {
    const e = structuredClone(demo[0]!) as unknown as Record<string, unknown>;
    edit(e);
    expect(entityJson(e as unknown as CatalogEntity)).toBe(stableJson(e));
    expect(knownEntityJson(e as unknown as CatalogEntity) !== undefined).toBe(walks);
  });
});
