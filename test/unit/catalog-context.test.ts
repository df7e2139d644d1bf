import { createCatalogContext } from '../../judgment/catalog-context';

describe('createCatalogContext: which entity a SQL table reference names', () => {
  const ids = [
    'raw.customers',
    'raw.orders',
    'mart.orders',
    'warehouse.dbo.Order Details',
    'analytics.events',
    'raw.customers',
  ];
  const ctx = createCatalogContext(ids);

  test.each([
    ['raw.customers', 'raw.customers'],
    ['RAW.Customers', 'raw.customers'], // case-insensitive
    ['"raw"."customers"', 'raw.customers'], // quoted
    ['customers', 'raw.customers'], // a qualifier left out, the rest unambiguous
    ['prod.raw.customers', 'raw.customers'], // a database prefix the id does not record
    ['[dbo].[Order Details]', 'warehouse.dbo.Order Details'],
    ['`analytics`.`events`', 'analytics.events'],
    ['mart.orders', 'mart.orders'],
  ])('%s names %s', (ref, id) => {
    expect(ctx.resolve(ref)).toBe(id);
    expect(ctx.resolve(ref)).toBe(id); // the kept answer is the same
  });

  test.each([['orders'], ['other.orders'], ['customers_v2'], [''], ['raw.']])('%s names no entity', (ref) => {
    expect(ctx.resolve(ref)).toBeUndefined();
  });

  test('exists is exact and case-sensitive; a duplicated id is one entity', () => {
    expect(ctx.exists('raw.customers')).toBe(true);
    expect(ctx.exists('RAW.customers')).toBe(false);
    expect(ctx.exists('customers')).toBe(false);
  });

  test('a bucket of many ids sharing a last part still finds the one a qualifier picks', () => {
    const many = Array.from({ length: 500 }, (_, i) => `schema_${i}.orders`);
    const big = createCatalogContext([...many, 'raw.orders_archive']);
    expect(big.resolve('schema_417.orders')).toBe('schema_417.orders');
    expect(big.resolve('db.schema_3.orders')).toBe('schema_3.orders');
    expect(big.resolve('orders')).toBeUndefined();
    expect(big.resolve('orders_archive')).toBe('raw.orders_archive');
  });
});
