import { CatalogEntity, type CatalogEntityInput } from '../../domain/catalog';
import { LineageFlagChange, type Proposal } from '../../domain/proposal';
import { createCatalogContext, nameWords, splitQualifiedName } from '../../judgment/catalog-context';
import { checkLineage } from '../../judgment/lineage-checker';
import { mechanicalReview } from '../../judgment/gate/mechanical-gate';

const entity = (input: CatalogEntityInput): CatalogEntity => CatalogEntity.parse(input);
const column = [{ name: 'id', type: 'integer' }];

describe('createCatalogContext', () => {
  const ctx = createCatalogContext([
    'raw.customers',
    'staging.stg_orders',
    'raw.orders',
    'mart.orders',
    'Customers',
    'Order Details',
    'dbo.Products',
  ]);

  it('checks ids exactly', () => {
    expect(ctx.exists('raw.customers')).toBe(true);
    expect(ctx.exists('RAW.CUSTOMERS')).toBe(false);
    expect(ctx.exists('raw.nope')).toBe(false);
  });

  const resolveCases: Array<[string, string | undefined]> = [
    ['raw.customers', 'raw.customers'],
    ['RAW.Customers', 'raw.customers'],
    ['"Raw"."Customers"', 'raw.customers'],
    ['stg_orders', 'staging.stg_orders'],
    ['analytics.staging.stg_orders', 'staging.stg_orders'],
    ['orders', undefined], // raw.orders and mart.orders: ambiguous
    ['mart.orders', 'mart.orders'],
    ['customers', 'Customers'], // exact bare id beats the schema-qualified raw.customers
    ['dbo.customers', 'Customers'], // the bare id records no schema to contradict
    ['[Order Details]', 'Order Details'],
    ['dbo.[order details]', 'Order Details'],
    ['`dbo`.`products`', 'dbo.Products'],
    ['products', 'dbo.Products'],
    ['other.stg_orders', undefined],
    ['nothing_here', undefined],
    ['', undefined],
  ];
  it.each(resolveCases)('resolve(%j) → %j', (name, id) => {
    expect(ctx.resolve(name)).toBe(id);
  });

  it('splits quoted, dotted names', () => {
    expect(splitQualifiedName('"My ""Odd"" Schema".t')).toEqual(['my "odd" schema', 't']);
    expect(splitQualifiedName('db..t')).toEqual(['db', 't']);
  });

  it.each([
    ['cust_first_name', ['cust', 'first', 'name']],
    ['HomePhone', ['home', 'phone']],
    ['HTTPStatus', ['http', 'status']],
    ['shipping_address_line1', ['shipping', 'address', 'line', '1']],
    ['Order Details', ['order', 'details']],
    ['e-mail', ['e', 'mail']],
  ])('nameWords(%j)', (name, words) => {
    expect(nameWords(name)).toEqual(words);
  });
});

describe('checkLineage', () => {
  const ids = ['raw.orders', 'raw.customers', 'raw.regions', 'staging.stg_orders', 'mart.customer_orders', 'Customers'];
  const ctx = createCatalogContext(ids);

  const cases: Array<{
    name: string;
    entity: CatalogEntity;
    flags: Array<Pick<LineageFlagChange, 'finding' | 'upstream'>>;
  }> = [
    {
      name: 'consistent view',
      entity: entity({
        id: 'staging.stg_orders',
        database: 'd',
        name: 'stg_orders',
        kind: 'view',
        upstream: ['raw.orders'],
        sql: 'select * from raw.orders',
        columns: column,
      }),
      flags: [],
    },
    {
      name: 'dangling upstream on a table',
      entity: entity({
        id: 'raw.x',
        database: 'd',
        name: 'x',
        kind: 'table',
        upstream: ['raw.orders', 'legacy.gone', 'legacy.gone'],
        columns: column,
      }),
      flags: [{ finding: 'dangling_edge', upstream: 'legacy.gone' }],
    },
    {
      name: 'unrecorded reads, by any spelling, reported once with the entity id',
      entity: entity({
        id: 'mart.customer_orders',
        database: 'd',
        name: 'customer_orders',
        kind: 'view',
        upstream: ['staging.stg_orders'],
        sql: `WITH o AS (SELECT * FROM stg_orders)
              SELECT * FROM o JOIN "RAW"."CUSTOMERS" c ON c.id = o.customer_id
              LEFT JOIN raw.regions r ON r.id = c.region_id
              LEFT JOIN raw.customers c2 ON true`,
        columns: column,
      }),
      flags: [
        { finding: 'unrecorded_read', upstream: 'raw.customers' },
        { finding: 'unrecorded_read', upstream: 'raw.regions' },
      ],
    },
    {
      name: 'reads outside the catalog and ambiguous names are not flagged',
      entity: entity({
        id: 'mart.v',
        database: 'd',
        name: 'v',
        kind: 'view',
        upstream: ['raw.orders'],
        sql: 'select * from raw.orders join ext.fx_rates on true join generate_series(1, 3) g on true',
        columns: column,
      }),
      flags: [],
    },
    {
      name: 'a view reading itself is not an unrecorded read',
      entity: entity({
        id: 'mart.customer_orders',
        database: 'd',
        name: 'customer_orders',
        kind: 'view',
        sql: 'select * from mart.customer_orders',
        columns: column,
      }),
      flags: [],
    },
    {
      name: 'dangling and unrecorded together (a recorded id in the wrong case)',
      entity: entity({
        id: 'mart.w',
        database: 'd',
        name: 'w',
        kind: 'view',
        upstream: ['RAW.ORDERS'],
        sql: 'select * from raw.orders',
        columns: column,
      }),
      flags: [
        { finding: 'dangling_edge', upstream: 'RAW.ORDERS' },
        { finding: 'unrecorded_read', upstream: 'raw.orders' },
      ],
    },
    {
      name: 'bare sample-schema ids',
      entity: entity({
        id: 'Customer List',
        database: 'd',
        name: 'Customer List',
        kind: 'view',
        sql: 'SELECT * FROM dbo.Customers',
        columns: column,
      }),
      flags: [{ finding: 'unrecorded_read', upstream: 'Customers' }],
    },
  ];

  it.each(cases)('$name', ({ entity: e, flags }) => {
    const found = checkLineage(e, ctx);
    expect(found.map(({ finding, upstream }) => ({ finding, upstream }))).toEqual(flags);
    for (const f of found) {
      expect(LineageFlagChange.safeParse(f).success).toBe(true);
      expect(f.explanation).toMatch(/^[^\n]{10,300}$/);
    }
  });

  it('every flag it raises is approved by the mechanical gate', () => {
    for (const { entity: e } of cases) {
      for (const change of checkLineage(e, ctx)) {
        const p: Proposal = { id: 'l', entityId: e.id, agent: 'lineage-checker', change, evidence: [] };
        expect({ change, verdict: mechanicalReview(p, e, ctx) }).toMatchObject({ verdict: { decision: 'approved' } });
      }
    }
  });
});
