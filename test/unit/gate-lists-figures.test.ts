import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CatalogEntity, CatalogFile, type CatalogEntityInput } from '../../domain/catalog';
import type { Proposal } from '../../domain/proposal';
import { createCatalogContext } from '../../judgment/catalog-context';
import { NO_NEIGHBOURS, type Neighbours } from '../../judgment/description-evidence';
import { mechanicalReview } from '../../judgment/gate/mechanical-gate';

// Issue 26, item 3: the gate reads lists of sources and claimed figures in prose. A small rental
// warehouse written for these tests: plain tables, a contact view over four of them, a spend view
// over two.
const entity = (input: Omit<CatalogEntityInput, 'database'>): CatalogEntity =>
  CatalogEntity.parse({ database: 'dvd', schema: 'public', ...input });
const int = (name: string, extra: Record<string, unknown> = {}) => ({ name, type: 'integer', ...extra });
const text = (name: string) => ({ name, type: 'text' });

const customer = entity({
  id: 'public.customer',
  name: 'customer',
  kind: 'table',
  columns: [
    int('customer_id', { primary_key: true, nullable: false }),
    int('store_id'),
    text('first_name'),
    text('last_name'),
    text('email'),
    int('address_id', { foreign_key: 'public.address.address_id' }),
    { name: 'active', type: 'boolean' },
  ],
});
const address = entity({
  id: 'public.address',
  name: 'address',
  kind: 'table',
  columns: [
    int('address_id', { primary_key: true }),
    text('address'),
    int('city_id', { foreign_key: 'public.city.city_id' }),
    text('phone'),
  ],
});
const city = entity({
  id: 'public.city',
  name: 'city',
  kind: 'table',
  columns: [int('city_id', { primary_key: true }), text('city'), int('country_id')],
});
const country = entity({
  id: 'public.country',
  name: 'country',
  kind: 'table',
  columns: [int('country_id', { primary_key: true }), text('country')],
});
const payment = entity({
  id: 'public.payment',
  name: 'payment',
  kind: 'table',
  columns: [
    int('payment_id', { primary_key: true }),
    int('customer_id', { foreign_key: 'public.customer.customer_id' }),
    int('rental_id', { foreign_key: 'public.rental.rental_id' }),
    { name: 'amount', type: 'numeric(5,2)' },
    { name: 'payment_date', type: 'timestamp' },
  ],
});
const rental = entity({
  id: 'public.rental',
  name: 'rental',
  kind: 'table',
  columns: [int('rental_id', { primary_key: true }), int('customer_id'), { name: 'rental_date', type: 'timestamp' }],
});
const staff = entity({
  id: 'public.staff',
  name: 'staff',
  kind: 'table',
  columns: [int('staff_id', { primary_key: true }), text('first_name')],
});
const contactList = entity({
  id: 'public.contact_list',
  name: 'contact_list',
  kind: 'view',
  upstream: ['public.customer', 'public.address', 'public.city', 'public.country'],
  sql: `SELECT cu.customer_id AS id, cu.first_name || ' ' || cu.last_name AS name, a.address, a.phone, ci.city, co.country
        FROM customer cu
        JOIN address a ON a.address_id = cu.address_id
        JOIN city ci ON ci.city_id = a.city_id
        JOIN country co ON co.country_id = ci.country_id`,
  columns: [int('id'), text('name'), text('address'), text('phone'), text('city'), text('country')],
});
const spend = entity({
  id: 'public.customer_spend',
  name: 'customer_spend',
  kind: 'view',
  upstream: ['public.customer', 'public.payment'],
  sql: `SELECT c.customer_id, c.first_name, c.last_name, SUM(p.amount) AS total_paid, COUNT(p.payment_id) AS payment_count
        FROM customer c JOIN payment p ON p.customer_id = c.customer_id
        GROUP BY c.customer_id, c.first_name, c.last_name`,
  columns: [
    int('customer_id'),
    text('first_name'),
    text('last_name'),
    { name: 'total_paid', type: 'numeric(10,2)' },
    { name: 'payment_count', type: 'bigint' },
  ],
});
const latest = entity({
  id: 'public.latest_rentals',
  name: 'latest_rentals',
  kind: 'view',
  upstream: ['public.rental'],
  sql: 'SELECT * FROM rental WHERE rental_date > now() - interval 30 day',
  columns: [int('rental_id'), int('customer_id'), { name: 'rental_date', type: 'timestamp' }],
});

const all = [customer, address, city, country, payment, rental, staff, contactList, spend, latest];
const ctx = createCatalogContext(all.map((e) => e.id));
const byId = new Map(all.map((e) => [e.id, e]));
const loaded: Neighbours = { get: (id) => byId.get(id) };

function review(on: CatalogEntity, words: string, neighbours: Neighbours = loaded, column?: string) {
  const p: Proposal = {
    id: 'p',
    entityId: on.id,
    agent: 'description-drafter',
    change:
      column === undefined
        ? { kind: 'description', target: 'table', text: words }
        : { kind: 'description', target: 'column', column, text: words },
    evidence: [],
  };
  return mechanicalReview(p, on, ctx, neighbours);
}

describe('a list of sources after a verb of derivation', () => {
  test.each<[string, CatalogEntity, string]>([
    ['joined from, all four', contactList, 'Contact list joined from customer, address, city and country.'],
    ['joined from, a subset', contactList, 'Customer contact list built from customer and address.'],
    ['combines the tables', contactList, 'Combines the customer, address, city and country tables.'],
    ['plural names', contactList, 'Merges customers, addresses, cities and countries into one contact list.'],
    ['a join chain that ends the list', contactList, 'Joins customer to address, then to city and country.'],
    ['plain words that are no table', contactList, 'Built from customer data and address details.'],
    ['dotted ids', spend, 'Aggregated from public.payment joined to public.customer.'],
    ['a key target named in a list', payment, 'Payments based on customer and rental.'],
  ])('grounded: %s', (_name, on, words) => {
    const v = review(on, words);
    expect({ decision: v.decision, reason: v.reason }).toMatchObject({ decision: 'approved' });
  });

  test.each<[string, CatalogEntity, string, string[]]>([
    [
      'one more source in the catalog',
      contactList,
      'Joined from customer, address, city, country and payment.',
      ['payment'],
    ],
    [
      'two invented among true ones',
      contactList,
      'Combines the customer, address, staff and rental tables.',
      ['staff', 'rental'],
    ],
    ['a join chain', contactList, 'Joins customer to rental and address.', ['rental']],
    [
      'a name that is no entity at all',
      contactList,
      'Built from customer, address and loyalty.',
      ['loyalty (no such entity)'],
    ],
    [
      'plural of a table not read',
      contactList,
      'Merges customers, addresses and payments into one list.',
      ['payments'],
    ],
    ['provenance verb', spend, 'Loaded from customer, payment and rental.', ['rental']],
    ['dotted ids', spend, 'Built from public.customer, public.payment and public.rental.', ['public.rental']],
  ])('invented: %s', (_name, on, words, missing) => {
    const v = review(on, words);
    // A dotted or snake_case name is reported by the reference rule, which runs first, and not twice.
    expect(v.decision).toBe('rejected');
    expect(v.rule).toMatch(/^claim:(?:derivation|reference)$/);
    for (const m of missing) expect(v.reason).toContain(m);
    // The names that are held are not reported as missing.
    expect(v.reason).not.toMatch(/names[^;]*\bcustomer \(/);
  });

  test('in a column description only identifiers are names', () => {
    const plain = review(spend, 'Computed from payment and rental amounts.', loaded, 'total_paid');
    expect(plain.decision).toBe('approved');
    const ids = review(spend, 'Summed from public.payment and public.rental.', loaded, 'total_paid');
    expect(ids.decision).toBe('rejected');
    expect(ids.reason).toContain('public.rental');
  });
});

describe('a figure the text claims', () => {
  test.each<[string, CatalogEntity, string, Neighbours]>([
    [
      'an aggregate in the SQL',
      spend,
      'One row per customer showing lifetime spend and the number of payments.',
      loaded,
    ],
    [
      'the same without neighbours: the SQL shows it',
      spend,
      'One row per customer showing lifetime spend.',
      NO_NEIGHBOURS,
    ],
    ['a total named by its column', spend, 'Customers with the total amount paid.', loaded],
    ['a column of what it reads', spend, 'Customers with the payment amount behind each total.', loaded],
    [
      'an attribute that is no figure',
      customer,
      'Store customers, with their email and whether the account is active.',
      loaded,
    ],
    ['a participle after the noun', payment, 'One payment per rental, showing the amount charged.', loaded],
    ['"a number of" is not a figure', contactList, 'A number of fields are renamed.', loaded],
    [
      'a SELECT * of what is not loaded refutes nothing',
      latest,
      'Recent rentals with the rental count per customer.',
      NO_NEIGHBOURS,
    ],
  ])('grounded: %s', (_name, on, words, neighbours) => {
    const v = review(on, words, neighbours);
    expect({ decision: v.decision, reason: v.reason }).toMatchObject({ decision: 'approved' });
  });

  test.each<[string, CatalogEntity, string, string, Neighbours]>([
    ['no amount on a plain table', customer, 'Customer accounts with their lifetime spend.', 'lifetime spend', loaded],
    ['no count of orders', customer, 'Customer accounts with the number of orders.', 'number of orders', loaded],
    [
      'an average the SQL does not take',
      spend,
      'One row per customer showing lifetime spend and average basket size.',
      'average basket size',
      loaded,
    ],
    [
      'the same without neighbours',
      spend,
      'One row per customer showing average basket size.',
      'average basket size',
      NO_NEIGHBOURS,
    ],
    ['a rate that is no column', payment, 'Payments showing the refund rate.', 'refund rate', loaded],
    ['a count of a key is not a count', spend, 'Customers with the number of rentals.', 'number of rentals', loaded],
  ])('invented: %s', (_name, on, words, figure, neighbours) => {
    const v = review(on, words, neighbours);
    expect(v).toMatchObject({ decision: 'rejected', rule: 'claim:figure' });
    expect(v.reason).toContain(`"${figure}"`);
    expect(v.reason).toContain('nor derivable from its SQL');
  });

  test('a column description is about the column, not a figure the table shows', () => {
    expect(
      review(spend, 'Lifetime spend of the customer, in the payment currency.', loaded, 'total_paid').decision,
    ).toBe('approved');
  });
});

describe('the bundled demo catalog', () => {
  const root = path.resolve(__dirname, '..', '..');
  const demo = CatalogFile.parse(JSON.parse(readFileSync(path.join(root, 'catalog/demo/shop-warehouse.json'), 'utf8')));
  const demoCtx = createCatalogContext(demo.entities.map((e) => e.id));
  const demoById = new Map(demo.entities.map((e) => [e.id, e]));
  const demoNeighbours: Neighbours = { get: (id) => demoById.get(id) };
  const on = (id: string): CatalogEntity => {
    const e = demoById.get(id);
    if (!e) throw new Error(`demo has no ${id}`);
    return e;
  };
  const judge = (id: string, words: string) =>
    mechanicalReview(
      {
        id: 'p',
        entityId: id,
        agent: 'description-drafter',
        change: { kind: 'description', target: 'table', text: words },
        evidence: [],
      },
      on(id),
      demoCtx,
      demoNeighbours,
    );

  test('no description it ships is rejected for a list or a figure', () => {
    const hits: string[] = [];
    for (const e of demo.entities) {
      const texts: Array<[string | undefined, string]> = [];
      if (e.description) texts.push([undefined, e.description]);
      for (const c of e.columns) if (c.description) texts.push([c.name, c.description]);
      for (const [column, words] of texts) {
        const change =
          column === undefined
            ? ({ kind: 'description', target: 'table', text: words } as const)
            : ({ kind: 'description', target: 'column', column, text: words } as const);
        const v = mechanicalReview(
          { id: 'p', entityId: e.id, agent: 'description-drafter', change, evidence: [] },
          e,
          demoCtx,
          demoNeighbours,
        );
        if (/^claim:(?:derivation|figure)$/.test(v.rule))
          hits.push(`${e.id}${column ? `.${column}` : ''}: ${v.reason}`);
      }
    }
    expect(hits).toEqual([]);
  });

  test.each([
    [
      'marts.dim_customer',
      'One row per customer, built from stg_customers and stg_orders, with the number of orders placed.',
    ],
    [
      'marts.fct_orders',
      'Orders joined from stg_orders, stg_order_items, stg_addresses, dim_customer and dim_store, showing gross, discount and net amounts and the number of items.',
    ],
    [
      'marts.fct_revenue',
      'Revenue rows derived from fct_orders, fct_invoices and fct_refunds, with the amount in local currency and in USD.',
    ],
    ['reporting.rpt_customer_lifetime_value', 'One row per customer showing lifetime spend in USD.'],
    [
      'reporting.rpt_ar_aging',
      'Receivables by aging bucket and country with the number of open invoices and the open amount.',
    ],
    ['reporting.rpt_support_backlog', 'Open tickets by department and priority, with the average age in hours.'],
  ])('true text on %s is approved', (id, words) => {
    const v = judge(id, words);
    expect({ decision: v.decision, reason: v.reason }).toMatchObject({ decision: 'approved' });
  });

  test.each([
    [
      'marts.dim_customer',
      'Joined from stg_customers, stg_orders and stg_payments.',
      'claim:derivation',
      'stg_payments',
    ],
    [
      'marts.fct_revenue',
      'Revenue rows derived from fct_orders, fct_invoices, fct_refunds and fct_payments.',
      'claim:derivation',
      'fct_payments',
    ],
    ['marts.dim_customer', 'Customers with their lifetime spend and age band.', 'claim:figure', 'lifetime spend'],
    [
      'marts.fct_orders',
      'One row per order with the average basket size of the customer.',
      'claim:figure',
      'average basket size',
    ],
    [
      'reporting.rpt_refund_rate',
      'Orders per day and channel showing the refund rate and the average refund amount.',
      'claim:figure',
      'average refund amount',
    ],
  ])('invented text on %s is rejected', (id, words, rule, named) => {
    const v = judge(id, words);
    expect(v.reason).toContain(named);
    // A snake_case source is reported by the reference rule, which names it first.
    expect(v.reason).toMatch(rule === 'claim:derivation' ? /reference|source list/ : /figure or attribute/);
    expect(v.decision).toBe('rejected');
  });
});
