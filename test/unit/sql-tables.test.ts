import { tablesReadBySql } from '../../judgment/sql/tables';

const cases: Array<{ name: string; sql: string; tables: string[] }> = [
  { name: 'single table', sql: 'SELECT id, name FROM customers', tables: ['customers'] },
  { name: 'schema-qualified with alias', sql: 'select c.id from raw.customers as c', tables: ['raw.customers'] },
  {
    name: 'alias without AS',
    sql: 'SELECT o.id FROM staging.stg_orders o WHERE o.total > 0',
    tables: ['staging.stg_orders'],
  },
  {
    name: 'comma join',
    sql: 'SELECT * FROM raw.orders o, raw.customers c WHERE o.customer_id = c.id',
    tables: ['raw.orders', 'raw.customers'],
  },
  {
    name: 'LEFT / INNER / CROSS JOIN',
    sql: `SELECT * FROM orders o
          LEFT OUTER JOIN customers c ON c.id = o.customer_id
          INNER JOIN regions r ON r.id = c.region_id
          CROSS JOIN calendar`,
    tables: ['orders', 'customers', 'regions', 'calendar'],
  },
  { name: 'JOIN ... USING', sql: 'SELECT * FROM a JOIN b USING (id, day) JOIN c USING (id)', tables: ['a', 'b', 'c'] },
  {
    name: 'NATURAL and FULL joins',
    sql: 'SELECT * FROM a NATURAL JOIN b FULL JOIN c ON b.x = c.x',
    tables: ['a', 'b', 'c'],
  },
  {
    name: 'CTE names are not tables',
    sql: `WITH recent AS (SELECT * FROM raw.orders WHERE ts > now() - interval '7 days'),
               totals (customer_id, n) AS (SELECT customer_id, count(*) FROM recent GROUP BY 1)
          SELECT * FROM totals t JOIN raw.customers c ON c.id = t.customer_id`,
    tables: ['raw.orders', 'raw.customers'],
  },
  {
    name: 'recursive and materialized CTEs',
    sql: `WITH RECURSIVE tree AS MATERIALIZED (SELECT id, parent_id FROM org.units UNION ALL SELECT u.id, u.parent_id FROM org.units u JOIN tree ON tree.id = u.parent_id)
          SELECT * FROM tree`,
    tables: ['org.units'],
  },
  {
    name: 'a qualified name is never a CTE',
    sql: 'WITH orders AS (SELECT 1 AS x) SELECT * FROM orders, raw.orders',
    tables: ['raw.orders'],
  },
  {
    name: 'nested subqueries',
    sql: `SELECT * FROM (SELECT * FROM (SELECT id FROM deep.inner_t) x JOIN mid.t m ON m.id = x.id) y
          WHERE y.id IN (SELECT id FROM filt.ids WHERE EXISTS (SELECT 1 FROM filt.flags f WHERE f.id = ids.id))`,
    tables: ['deep.inner_t', 'mid.t', 'filt.ids', 'filt.flags'],
  },
  {
    name: 'scalar subquery in the select list',
    sql: 'SELECT (SELECT max(ts) FROM events e WHERE e.uid = u.id) AS last_seen FROM users u',
    tables: ['events', 'users'],
  },
  {
    name: 'LATERAL subquery and function',
    sql: `SELECT * FROM customers c
          CROSS JOIN LATERAL (SELECT * FROM orders o WHERE o.cid = c.id ORDER BY o.ts DESC LIMIT 3) recent
          LEFT JOIN LATERAL generate_series(1, 3) g(n) ON true`,
    tables: ['customers', 'orders'],
  },
  {
    name: 'table-valued functions are skipped',
    sql: 'SELECT * FROM generate_series(1, 10) AS g(n), unnest(ARRAY[1,2]) u, public.my_func(3) f, real_table',
    tables: ['real_table'],
  },
  {
    name: 'UNION / INTERSECT / EXCEPT',
    sql: 'SELECT id FROM a UNION ALL SELECT id FROM b INTERSECT SELECT id FROM c EXCEPT (SELECT id FROM d)',
    tables: ['a', 'b', 'c', 'd'],
  },
  {
    name: 'double-quoted identifiers',
    sql: 'SELECT * FROM "Raw"."Customers" AS "c" JOIN "Order Lines" ol ON true',
    tables: ['raw.customers', 'order lines'],
  },
  {
    name: 'backtick identifiers',
    sql: 'SELECT * FROM `shop`.`Orders` o JOIN `shop`.`order_items` i ON i.oid = o.id',
    tables: ['shop.orders', 'shop.order_items'],
  },
  {
    name: 'bracket identifiers',
    sql: 'SELECT * FROM [dbo].[Order Details] od INNER JOIN [dbo].[Products] p ON p.ProductID = od.ProductID',
    tables: ['dbo.order details', 'dbo.products'],
  },
  {
    name: 'three-part and T-SQL default-schema names',
    sql: 'SELECT * FROM warehouse.raw.customers, db..orders',
    tables: ['warehouse.raw.customers', 'db.orders'],
  },
  {
    name: 'comments are ignored',
    sql: `-- FROM commented_out
          SELECT /* FROM also_commented /* nested */ still comment */ id FROM real_one # not a comment in postgres
          `,
    tables: ['real_one'],
  },
  {
    name: 'string literals are ignored',
    sql: `SELECT 'FROM fake_table', E'it\\'s FROM other_fake', $$ FROM dollar_fake $$, $tag$ JOIN tag_fake $tag$ FROM real_two WHERE note = 'a '' JOIN quoted_fake'`,
    tables: ['real_two'],
  },
  {
    name: 'FROM inside expressions is not a table',
    sql: `SELECT extract(year FROM o.ts), substring(o.code FROM 2 FOR 3), trim(both ' ' FROM o.name)
          FROM orders o WHERE o.a IS DISTINCT FROM o.b AND o.c IS NOT DISTINCT FROM o.d`,
    tables: ['orders'],
  },
  {
    name: 'duplicates are removed, order kept',
    sql: 'SELECT * FROM b JOIN a ON true JOIN B ON true JOIN "a" ON true',
    tables: ['b', 'a'],
  },
  {
    name: 'CREATE VIEW wrapper',
    sql: 'CREATE OR REPLACE VIEW mart.v AS SELECT * FROM staging.s',
    tables: ['staging.s'],
  },
  {
    name: 'parenthesised join list',
    sql: 'SELECT * FROM (a JOIN (b JOIN c ON b.id = c.id) ON a.id = b.id), d',
    tables: ['a', 'b', 'c', 'd'],
  },
  {
    name: 'derived VALUES table',
    sql: 'SELECT * FROM (VALUES (1, 2), (3, 4)) AS v(x, y) JOIN t ON t.x = v.x',
    tables: ['t'],
  },
  {
    name: 'ON condition with a subquery',
    sql: 'SELECT * FROM a JOIN b ON b.id IN (SELECT id FROM c) WHERE a.x = 1',
    tables: ['a', 'b', 'c'],
  },
  {
    name: 'window and group clauses end the FROM list',
    sql: 'SELECT a, b, count(*) OVER w FROM t GROUP BY a, b WINDOW w AS (PARTITION BY a) ORDER BY a, b',
    tables: ['t'],
  },
  {
    name: 'T-SQL APPLY and table hints',
    sql: 'SELECT * FROM dbo.t WITH (NOLOCK) CROSS APPLY dbo.fn(t.id) f OUTER APPLY (SELECT * FROM dbo.u) x',
    tables: ['dbo.t', 'dbo.u'],
  },
  { name: 'several statements', sql: 'SELECT * FROM one; SELECT * FROM two', tables: ['one', 'two'] },
  { name: 'no FROM at all', sql: 'SELECT 1, now()', tables: [] },
  { name: 'garbage does not throw', sql: ') FROM ( JOIN , "unterminated', tables: [] },
];

describe('tablesReadBySql', () => {
  it.each(cases)('$name', ({ sql, tables }) => {
    expect(tablesReadBySql(sql)).toEqual(tables);
  });
});
