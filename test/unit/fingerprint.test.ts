import { effectiveFingerprints, entityFingerprint, readsOf } from '../../judgment/fingerprint';
import { createCatalogContext } from '../../judgment/catalog-context';
import { CatalogEntity, type CatalogEntityInput } from '../../domain/catalog';

const entity = (e: Partial<CatalogEntityInput> & { id: string }) =>
  CatalogEntity.parse({
    database: 'wh',
    name: e.id.split('.').pop(),
    kind: 'table',
    columns: [{ name: 'id', type: 'int' }],
    ...e,
  });

describe('entityFingerprint', () => {
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
    expect(entityFingerprint(entity({ id: 'raw.customers', ...change } as never))).not.toBe(entityFingerprint(base));
  });

  test('is the same for the same record, whatever the order of its keys', () => {
    const a = entity({ id: 't', layer: 'raw', description: 'x' });
    const b = CatalogEntity.parse(JSON.parse(JSON.stringify({ description: 'x', ...a, layer: 'raw' })));
    expect(entityFingerprint(b)).toBe(entityFingerprint(a));
  });
});

describe('readsOf', () => {
  const ctx = createCatalogContext(['raw.customers', 'raw.orders', 'staging.v']);
  test('names the entities lineage and SQL read, unresolved names and foreign keys by resolution', () => {
    const v = entity({
      id: 'staging.v',
      kind: 'view',
      upstream: ['raw.customers', 'raw.gone'],
      sql: 'select * from raw.orders join raw.missing using (id)',
      columns: [{ name: 'customer_id', type: 'int', foreign_key: 'raw.customers.id' }],
    });
    const r = readsOf(v, ctx);
    expect(r.entities).toEqual(['raw.customers', 'raw.orders']);
    expect(r.names).toEqual(expect.arrayContaining(['raw.gone', 'raw.missing', 'fk:raw.customers:raw.customers']));
  });
});

describe('effectiveFingerprints', () => {
  const reads = new Map([
    ['a', { entities: [], names: [] }],
    ['b', { entities: ['a'], names: [] }],
    ['c', { entities: ['b'], names: [] }],
    ['d', { entities: [], names: [] }],
  ]);
  const own = new Map([
    ['a', 'A'],
    ['b', 'B'],
    ['c', 'C'],
    ['d', 'D'],
  ]);
  test('a change travels to every entity that reads it, over several hops, and nowhere else', () => {
    const before = effectiveFingerprints(own, reads);
    const after = effectiveFingerprints(new Map([...own, ['a', 'A2']]), reads);
    const changed = [...before.keys()].filter((k) => before.get(k) !== after.get(k));
    expect(changed).toEqual(['a', 'b', 'c']);
  });

  test('a cycle in the lineage ends, and every entity gets a fingerprint', () => {
    const cyclic = new Map([
      ['x', { entities: ['y'], names: [] }],
      ['y', { entities: ['x'], names: [] }],
    ]);
    const fps = effectiveFingerprints(
      new Map([
        ['x', 'X'],
        ['y', 'Y'],
      ]),
      cyclic,
    );
    expect([...fps.keys()].sort()).toEqual(['x', 'y']);
    const changed = effectiveFingerprints(
      new Map([
        ['x', 'X2'],
        ['y', 'Y'],
      ]),
      cyclic,
    );
    expect(changed.get('y')).not.toBe(fps.get('y'));
  });

  test('a long chain does not overflow the stack', () => {
    const n = 50_000;
    const own2 = new Map(Array.from({ length: n }, (_, i) => [`e${i}`, `F${i}`] as [string, string]));
    const reads2 = new Map<string, { entities: string[]; names: string[] }>(
      Array.from({ length: n }, (_, i) => [`e${i}`, { entities: i ? [`e${i - 1}`] : [], names: [] }]),
    );
    expect(effectiveFingerprints(own2, reads2).size).toBe(n);
  });
});
