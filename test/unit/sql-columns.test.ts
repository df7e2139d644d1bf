import type { ColumnRef, Derivation } from '../../judgment/sql/derivation';
import { readSelectShape, type SelectShape } from '../../judgment/sql/select-shape';

const ref = (table: string | undefined, column: string): ColumnRef => ({ table, column });
const col = (table: string | undefined, column: string, renamed = false): Derivation => ({
  kind: 'column',
  source: ref(table, column),
  renamed,
});
const cast = (table: string, column: string, type: string): Derivation => ({
  kind: 'cast',
  source: ref(table, column),
  type,
});
const agg = (
  fn: 'sum' | 'count' | 'avg' | 'min' | 'max',
  source: ColumnRef | undefined,
  o: { groupBy?: ColumnRef[]; from: string[]; filtered?: boolean; distinct?: boolean },
): Derivation => ({
  kind: 'aggregate',
  fn,
  source,
  distinct: o.distinct ?? false,
  groupBy: o.groupBy,
  from: o.from,
  filtered: o.filtered ?? false,
});
const mapping = (source: ColumnRef, pairs: [string, string][], otherwise?: string): Derivation => ({
  kind: 'case',
  source,
  mapping: pairs,
  otherwise,
});
const arith = (source: ColumnRef, op: '+' | '-' | '*' | '/', operand: string): Derivation => ({
  kind: 'arithmetic',
  source,
  op,
  operand,
});
const coalesce = (source: ColumnRef, fallback: string): Derivation => ({ kind: 'coalesce', source, fallback });

interface Case {
  name: string;
  sql: string;
  /** Every output column in order with its exact derivation; null: the whole shape is undefined. */
  columns: [string, Derivation | undefined][] | null;
  shape?: Partial<Omit<SelectShape, 'columns'>>;
}

// pg_get_viewdef(oid, true) output, in the shapes of pagila's views (customer_list, staff_list,
// actor_info, film_list, sales_by_store, sales_by_film_category), with invented names.
const postgres: Case[] = [
  {
    name: 'pg: member_list (customer_list shape): concatenation and boolean CASE are not derivations',
    sql: ` SELECT cu.member_id AS id,
    ((cu.first_name || ' '::text) || cu.last_name) AS name,
    a.address,
    a.postal_code AS "zip code",
    a.phone,
    town.town,
    nation.nation,
        CASE
            WHEN cu.activebool THEN 'active'::text
            ELSE ''::text
        END AS notes,
    cu.club_id AS sid
   FROM (((club.member cu
     JOIN club.address a ON ((cu.address_id = a.address_id)))
     JOIN club.town ON ((a.town_id = town.town_id)))
     JOIN club.nation ON ((town.nation_id = nation.nation_id)));`,
    columns: [
      ['id', col('club.member', 'member_id', true)],
      ['name', undefined],
      ['address', col('club.address', 'address')],
      ['zip code', col('club.address', 'postal_code', true)],
      ['phone', col('club.address', 'phone')],
      ['town', col('club.town', 'town')],
      ['nation', col('club.nation', 'nation')],
      ['notes', undefined],
      ['sid', col('club.member', 'club_id', true)],
    ],
    shape: {
      from: ['club.member', 'club.address', 'club.town', 'club.nation'],
      joined: true,
      filtered: false,
      groupBy: undefined,
      starFrom: [],
    },
  },
  {
    name: 'pg: crew_list (staff_list shape)',
    sql: ` SELECT s.crew_id AS id,
    ((s.first_name || ' '::text) || s.last_name) AS name,
    a.phone,
    s.depot_id AS sid
   FROM ((ops.crew s
     JOIN ops.address a ON ((s.address_id = a.address_id)))
     JOIN ops.town ON ((a.town_id = town.town_id)));`,
    columns: [
      ['id', col('ops.crew', 'crew_id', true)],
      ['name', undefined],
      ['phone', col('ops.address', 'phone')],
      ['sid', col('ops.crew', 'depot_id', true)],
    ],
    shape: { joined: true, groupBy: undefined },
  },
  {
    name: 'pg: performer_info (actor_info shape): a user aggregate over a correlated subquery is not understood',
    sql: ` SELECT p.performer_id,
    p.first_name,
    p.last_name,
    media.group_concat(DISTINCT ((g.name || ': '::text) || ( SELECT media.group_concat(s.title) AS group_concat
           FROM ((media.show s
             JOIN media.show_genre sg_1 ON ((s.show_id = sg_1.show_id)))
             JOIN media.show_performer sp_1 ON ((s.show_id = sp_1.show_id)))
          WHERE ((sg_1.genre_id = g.genre_id) AND (sp_1.performer_id = p.performer_id))
          GROUP BY sp_1.performer_id))) AS show_info
   FROM (((media.performer p
     LEFT JOIN media.show_performer sp ON ((p.performer_id = sp.performer_id)))
     LEFT JOIN media.show_genre sg ON ((sp.show_id = sg.show_id)))
     LEFT JOIN media.genre g ON ((sg.genre_id = g.genre_id)))
  GROUP BY p.performer_id, p.first_name, p.last_name;`,
    columns: [
      ['performer_id', col('media.performer', 'performer_id')],
      ['first_name', col('media.performer', 'first_name')],
      ['last_name', col('media.performer', 'last_name')],
      ['show_info', undefined],
    ],
    shape: {
      groupBy: [
        ref('media.performer', 'performer_id'),
        ref('media.performer', 'first_name'),
        ref('media.performer', 'last_name'),
      ],
      from: ['media.performer', 'media.show_performer', 'media.show_genre', 'media.genre'],
      joined: true,
      filtered: false,
    },
  },
  {
    name: 'pg: show_list (film_list shape): unaliased tables qualify their own columns',
    sql: ` SELECT show.show_id AS sid,
    show.title,
    genre.name AS genre,
    show.rental_rate AS price,
    media.group_concat(((performer.first_name || ' '::text) || performer.last_name)) AS performers
   FROM ((((media.genre
     LEFT JOIN media.show_genre ON ((genre.genre_id = show_genre.genre_id)))
     LEFT JOIN media.show ON ((show_genre.show_id = show.show_id)))
     JOIN media.show_performer ON ((show.show_id = show_performer.show_id)))
     JOIN media.performer ON ((show_performer.performer_id = performer.performer_id)))
  GROUP BY show.show_id, show.title, genre.name, show.rental_rate;`,
    columns: [
      ['sid', col('media.show', 'show_id', true)],
      ['title', col('media.show', 'title')],
      ['genre', col('media.genre', 'name', true)],
      ['price', col('media.show', 'rental_rate', true)],
      ['performers', undefined],
    ],
    shape: {
      groupBy: [
        ref('media.show', 'show_id'),
        ref('media.show', 'title'),
        ref('media.genre', 'name'),
        ref('media.show', 'rental_rate'),
      ],
    },
  },
  {
    name: 'pg: takings_by_branch (sales_by_store shape): sum per qualified keys, ORDER BY after GROUP BY',
    sql: ` SELECT ((c.town || ','::text) || cy.nation) AS branch,
    ((m.first_name || ' '::text) || m.last_name) AS manager,
    sum(p.amount) AS total_sales
   FROM ((((shop.payment p
     JOIN shop.rental r ON ((p.rental_id = r.rental_id)))
     JOIN shop.branch s ON ((r.branch_id = s.branch_id)))
     JOIN shop.town c ON ((s.town_id = c.town_id)))
     JOIN shop.nation cy ON ((c.nation_id = cy.nation_id)))
     JOIN shop.crew m ON ((s.manager_crew_id = m.crew_id))
  GROUP BY cy.nation, c.town, s.branch_id, m.first_name, m.last_name
  ORDER BY cy.nation, c.town;`,
    columns: [
      ['branch', undefined],
      ['manager', undefined],
      [
        'total_sales',
        agg('sum', ref('shop.payment', 'amount'), {
          groupBy: [
            ref('shop.nation', 'nation'),
            ref('shop.town', 'town'),
            ref('shop.branch', 'branch_id'),
            ref('shop.crew', 'first_name'),
            ref('shop.crew', 'last_name'),
          ],
          from: ['shop.payment', 'shop.rental', 'shop.branch', 'shop.town', 'shop.nation', 'shop.crew'],
        }),
      ],
    ],
    shape: { joined: true, filtered: false },
  },
  {
    name: 'pg: takings_by_genre (sales_by_film_category shape): ORDER BY (sum(...)) DESC',
    sql: ` SELECT g.name AS genre,
    sum(p.amount) AS total_sales
   FROM ((shop.payment p
     JOIN shop.rental r ON ((p.rental_id = r.rental_id)))
     JOIN shop.genre g ON ((r.genre_id = g.genre_id)))
  GROUP BY g.name
  ORDER BY (sum(p.amount)) DESC;`,
    columns: [
      ['genre', col('shop.genre', 'name', true)],
      [
        'total_sales',
        agg('sum', ref('shop.payment', 'amount'), {
          groupBy: [ref('shop.genre', 'name')],
          from: ['shop.payment', 'shop.rental', 'shop.genre'],
        }),
      ],
    ],
    shape: { groupBy: [ref('shop.genre', 'name')], filtered: false },
  },
  {
    name: 'pg: casts on columns, parenthesised and with type arguments',
    sql: ` SELECT o.id,
    (o.total)::numeric AS total_num,
    o.created_at::date AS created_day,
    (o.amount)::numeric(12,2) AS amount,
    o.status::text AS status,
    (o.ts)::timestamp with time zone AS ts_tz,
    o.tags::text[] AS tags,
    (o.code)::character varying(8) AS code
   FROM shop.orders o;`,
    columns: [
      ['id', col('shop.orders', 'id')],
      ['total_num', cast('shop.orders', 'total', 'NUMERIC')],
      ['created_day', cast('shop.orders', 'created_at', 'DATE')],
      ['amount', cast('shop.orders', 'amount', 'NUMERIC(12, 2)')],
      ['status', cast('shop.orders', 'status', 'TEXT')],
      ['ts_tz', cast('shop.orders', 'ts', 'TIMESTAMP WITH TIME ZONE')],
      ['tags', cast('shop.orders', 'tags', 'TEXT[]')],
      ['code', cast('shop.orders', 'code', 'CHARACTER VARYING(8)')],
    ],
    shape: { from: ['shop.orders'], joined: false, filtered: false },
  },
  {
    name: 'pg: count(*) AS n with qualified GROUP BY and a WHERE',
    sql: ` SELECT o.customer_id,
    count(*) AS n,
    count(DISTINCT o.status) AS statuses
   FROM shop.orders o
  WHERE (o.status <> 'void'::text)
  GROUP BY o.customer_id;`,
    columns: [
      ['customer_id', col('shop.orders', 'customer_id')],
      [
        'n',
        agg('count', undefined, {
          groupBy: [ref('shop.orders', 'customer_id')],
          from: ['shop.orders'],
          filtered: true,
        }),
      ],
      [
        'statuses',
        agg('count', ref('shop.orders', 'status'), {
          groupBy: [ref('shop.orders', 'customer_id')],
          from: ['shop.orders'],
          filtered: true,
          distinct: true,
        }),
      ],
    ],
    shape: { groupBy: [ref('shop.orders', 'customer_id')], filtered: true },
  },
  {
    name: 'pg: CASE with ::text literals in both forms, parenthesised conditions, ELSE NULL',
    sql: ` SELECT o.id,
        CASE o.status
            WHEN 'p'::text THEN 'pending'::text
            WHEN 's'::text THEN 'shipped'::text
            ELSE 'other'::text
        END AS status_label,
        CASE
            WHEN (o.kind = 'a'::text) THEN 'Adult'::text
            WHEN (o.kind = 'c'::text) THEN 'Child'::text
            ELSE NULL::text
        END AS kind_label
   FROM shop.orders o;`,
    columns: [
      ['id', col('shop.orders', 'id')],
      [
        'status_label',
        mapping(
          ref('shop.orders', 'status'),
          [
            ["'p'", "'pending'"],
            ["'s'", "'shipped'"],
          ],
          "'other'",
        ),
      ],
      [
        'kind_label',
        mapping(
          ref('shop.orders', 'kind'),
          [
            ["'a'", "'Adult'"],
            ["'c'", "'Child'"],
          ],
          'NULL',
        ),
      ],
    ],
  },
  {
    name: 'pg: COALESCE with a cast fallback and arithmetic by a cast constant',
    sql: ` SELECT o.id,
    COALESCE(o.discount, (0)::numeric) AS discount,
    (o.amount_cents / (100)::numeric) AS amount
   FROM shop.orders o;`,
    columns: [
      ['id', col('shop.orders', 'id')],
      ['discount', coalesce(ref('shop.orders', 'discount'), '0')],
      ['amount', arith(ref('shop.orders', 'amount_cents'), '/', '100')],
    ],
  },
];

const dbt: Case[] = [
  {
    name: 'dbt: source → renamed → select * from renamed',
    sql: `with source as (select * from raw.customers),
renamed as (
    select id as customer_id, first_name, last_name, email as contact_email from source
)
select * from renamed`,
    columns: [
      ['customer_id', col('raw.customers', 'id', true)],
      ['first_name', col('raw.customers', 'first_name')],
      ['last_name', col('raw.customers', 'last_name')],
      ['contact_email', col('raw.customers', 'email', true)],
    ],
    shape: { from: ['raw.customers'], joined: false, filtered: false, groupBy: undefined, starFrom: [] },
  },
  {
    name: 'dbt: a WHERE in a CTE below the aggregating final CTE filters the aggregated rows',
    sql: `with source as (select * from raw.orders),
renamed as (
    select id as order_id, user_id as customer_id, amount, status from source where status <> 'void'
),
final as (
    select customer_id, sum(amount) as total, count(*) as n from renamed group by customer_id
)
select * from final`,
    columns: [
      ['customer_id', col('raw.orders', 'user_id', true)],
      [
        'total',
        agg('sum', ref('raw.orders', 'amount'), {
          groupBy: [ref('raw.orders', 'user_id')],
          from: ['raw.orders'],
          filtered: true,
        }),
      ],
      ['n', agg('count', undefined, { groupBy: [ref('raw.orders', 'user_id')], from: ['raw.orders'], filtered: true })],
    ],
    // select * from a grouped CTE has the CTE's grain, not one row per row of raw.orders
    shape: { groupBy: [ref('raw.orders', 'user_id')], filtered: true, joined: false, from: ['raw.orders'] },
  },
  {
    name: 'dbt: a WHERE outside the aggregating CTE filters groups, not the aggregated rows',
    sql: `with agg as (
    select customer_id, sum(amount) as total from raw.orders group by customer_id
)
select * from agg where total > 100`,
    columns: [
      ['customer_id', col('raw.orders', 'customer_id')],
      [
        'total',
        agg('sum', ref('raw.orders', 'amount'), { groupBy: [ref('raw.orders', 'customer_id')], from: ['raw.orders'] }),
      ],
    ],
    shape: { groupBy: [ref('raw.orders', 'customer_id')], filtered: true },
  },
  {
    name: 'dbt: jaffle-shop customers: CTEs joined by alias, aggregates passed through',
    sql: `with customers as (
    select id as customer_id, first_name from raw.customers
),
orders as (
    select user_id as customer_id, min(order_date) as first_order, count(id) as number_of_orders
    from raw.orders
    group by user_id
),
final as (
    select customers.customer_id, customers.first_name, o.first_order, o.number_of_orders
    from customers
    left join orders o using (customer_id)
)
select * from final`,
    columns: [
      ['customer_id', col('raw.customers', 'id', true)],
      ['first_name', col('raw.customers', 'first_name')],
      [
        'first_order',
        agg('min', ref('raw.orders', 'order_date'), { groupBy: [ref('raw.orders', 'user_id')], from: ['raw.orders'] }),
      ],
      [
        'number_of_orders',
        agg('count', ref('raw.orders', 'id'), { groupBy: [ref('raw.orders', 'user_id')], from: ['raw.orders'] }),
      ],
    ],
    shape: { from: ['raw.customers', 'raw.orders'], joined: true, groupBy: undefined },
  },
  {
    name: 'dbt: unqualified names over CTEs that list their columns: unique ones resolve, shared ones do not',
    sql: `with c as (select id as customer_id, first_name from raw.customers),
o as (select customer_id, amount from raw.orders)
select customer_id, first_name, amount from c join o on o.customer_id = c.customer_id`,
    columns: [
      ['customer_id', undefined],
      ['first_name', col('raw.customers', 'first_name')],
      ['amount', col('raw.orders', 'amount')],
    ],
  },
  {
    name: 'dbt: unqualified names over a CTE with select * and a table are ambiguous',
    sql: `with o as (select * from raw.orders) select customer_id, total from o join raw.customers c on o.customer_id = c.id`,
    columns: [
      ['customer_id', undefined],
      ['total', undefined],
    ],
  },
  {
    name: 'dbt: select * over a USING join of CTEs lists their columns without claiming any',
    sql: `with a as (select id, first_name from raw.customers),
b as (select id, amount from raw.orders),
final as (select * from a join b using (id))
select * from final`,
    columns: [
      ['id', undefined],
      ['first_name', undefined],
      ['amount', undefined],
    ],
    shape: { joined: true, starFrom: [] },
  },
  {
    name: 'dbt: constant arithmetic carried through a renaming CTE',
    sql: `with source as (select * from raw.payments),
renamed as (select id as payment_id, amount / 100 as amount, 100 * fee as fee_cents from source)
select * from renamed`,
    columns: [
      ['payment_id', col('raw.payments', 'id', true)],
      ['amount', arith(ref('raw.payments', 'amount'), '/', '100')],
      ['fee_cents', arith(ref('raw.payments', 'fee'), '*', '100')],
    ],
  },
  {
    name: 'dbt: renamed is the final name against the source name, however many hops',
    sql: `with a as (select id as customer_id from raw.customers) select customer_id as id from a`,
    columns: [['id', col('raw.customers', 'id', false)]],
  },
  {
    name: 'nested derived tables',
    sql: 'select x.id, x.label from (select y.id, y.name as label from (select id, name from raw.things) y) x',
    columns: [
      ['id', col('raw.things', 'id')],
      ['label', col('raw.things', 'name', true)],
    ],
    shape: { from: ['raw.things'], joined: false },
  },
  {
    name: 'a CTE with a column list renames by position: not followed',
    sql: 'with t (a, b) as (select x, y from raw.s) select a, b from t',
    columns: null,
  },
  {
    name: 'a derived table with a column-alias list: not followed',
    sql: 'select o.id, v.a from raw.orders o join (select x, y from raw.s) v (a, b) on v.a = o.id',
    columns: [
      ['id', col('raw.orders', 'id')],
      ['a', undefined],
    ],
  },
  {
    name: 'WITH RECURSIVE is not read',
    sql: 'with recursive t as (select 1 as n union all select n + 1 from t where n < 5) select n from t',
    columns: null,
  },
  {
    name: 'a self-join inside a CTE still reads as joined',
    sql: `with pairs as (select a.id, b.id as other_id from raw.nodes a join raw.nodes b on a.parent = b.id)
select * from pairs`,
    columns: [
      ['id', col('raw.nodes', 'id')],
      ['other_id', col('raw.nodes', 'id', true)],
    ],
    shape: { from: ['raw.nodes'], joined: true },
  },
];

const identifiers: Case[] = [
  {
    name: 'double-quoted identifiers with spaces and a quoted schema',
    sql: 'select "Order Id", "MixedCase" as "Nice Name" from "Sales"."Orders"',
    columns: [
      ['order id', col('sales.orders', 'order id')],
      ['nice name', col('sales.orders', 'mixedcase', true)],
    ],
    shape: { from: ['sales.orders'] },
  },
  {
    name: 'backticks (BigQuery, MySQL)',
    sql: 'select `order id`, o.`total` as `Amount` from `proj`.`shop`.`orders` as o',
    columns: [
      ['order id', col('proj.shop.orders', 'order id')],
      ['amount', col('proj.shop.orders', 'total', true)],
    ],
  },
  {
    name: 'T-SQL brackets and db..table',
    sql: 'SELECT [Order Id] AS [OrderId], o.[Total] FROM [dbo].[Orders] o JOIN Sales..Returns r ON r.OrderId = o.[Order Id]',
    columns: [
      ['orderid', undefined],
      ['total', col('dbo.orders', 'total')],
    ],
    shape: { from: ['dbo.orders', 'sales.returns'], joined: true },
  },
  {
    name: 'mixed case: output names and sources are lowercased',
    sql: 'SELECT CustomerID, OrderTotal AS Total, o.ShipDate FROM Sales.Orders AS O',
    columns: [
      ['customerid', col('sales.orders', 'customerid')],
      ['total', col('sales.orders', 'ordertotal', true)],
      ['shipdate', col('sales.orders', 'shipdate')],
    ],
  },
  {
    name: 'two output names equal but for case are not told apart',
    sql: 'select "ID", id, name from raw.t',
    columns: [
      ['id', undefined],
      ['name', col('raw.t', 'name')],
    ],
  },
  {
    name: 'an alias without AS',
    sql: 'select o.total amount, o.id "Order Number" from raw.orders o',
    columns: [
      ['amount', col('raw.orders', 'total', true)],
      ['order number', col('raw.orders', 'id', true)],
    ],
  },
];

const notDerivations: Case[] = [
  {
    name: 'window functions are not aggregates per group',
    sql: `select customer_id,
  sum(total) over (partition by customer_id) as running,
  count(*) over () as n_all,
  row_number() over (partition by customer_id order by ts) as rn
from raw.orders`,
    columns: [
      ['customer_id', col('raw.orders', 'customer_id')],
      ['running', undefined],
      ['n_all', undefined],
      ['rn', undefined],
    ],
    shape: { groupBy: undefined, filtered: false },
  },
  {
    name: 'count(*) FILTER (WHERE ...) is not a count of the group',
    sql: "select customer_id, count(*) filter (where status = 'x') as n_x, count(*) as n from raw.orders group by customer_id",
    columns: [
      ['customer_id', col('raw.orders', 'customer_id')],
      ['n_x', undefined],
      ['n', agg('count', undefined, { groupBy: [ref('raw.orders', 'customer_id')], from: ['raw.orders'] })],
    ],
  },
  {
    name: 'aggregates of expressions',
    sql: `select customer_id, sum(price * qty) as revenue, max(upper(name)) as m, count(distinct a || b) as c,
  round(avg(amount), 2) as avg_amount, sum(amount)::numeric as total
from raw.lines group by customer_id`,
    columns: [
      ['customer_id', col('raw.lines', 'customer_id')],
      ['revenue', undefined],
      ['m', undefined],
      ['c', undefined],
      ['avg_amount', undefined],
      ['total', undefined],
    ],
  },
  {
    name: 'DISTINCT ON: the row kept depends on ORDER BY, nothing is described',
    sql: 'select distinct on (customer_id) customer_id, total, ts from raw.orders order by customer_id, ts desc',
    columns: [
      ['customer_id', undefined],
      ['total', undefined],
      ['ts', undefined],
    ],
    shape: { filtered: true, groupBy: undefined },
  },
  { name: 'UNION', sql: 'select id from raw.a union select id from raw.b', columns: null },
  {
    name: 'UNION ALL inside a CTE read with *',
    sql: 'with u as (select id from raw.a union all select id from raw.b) select * from u',
    columns: null,
  },
  { name: 'INTERSECT', sql: 'select id from raw.a intersect select id from raw.b', columns: null },
  { name: 'EXCEPT', sql: 'select id from raw.a except select id from raw.b', columns: null },
  {
    name: 'LATERAL subqueries may read the items before them: not followed',
    sql: `select o.id, x.last_total, y.v
from raw.orders o
left join lateral (select total as last_total from raw.payments p where p.order_id = o.id limit 1) x on true,
lateral (select o.total as v) y`,
    columns: [
      ['id', col('raw.orders', 'id')],
      ['last_total', undefined],
      ['v', undefined],
    ],
    shape: { from: ['raw.orders'], joined: true },
  },
  {
    name: 'CROSS APPLY / OUTER APPLY (T-SQL)',
    sql: 'select o.id, x.total from raw.orders o outer apply (select top 1 total from raw.payments p where p.order_id = o.id) x',
    columns: [
      ['id', col('raw.orders', 'id')],
      ['total', undefined],
    ],
    shape: { joined: true },
  },
  {
    name: 'scalar functions',
    sql: `select upper(name) as name, date_trunc('month', ts) as month, lower(email) as email, trim(code) as code,
  concat(first_name, ' ', last_name) as full_name, extract(year from ts) as yr
from raw.t`,
    columns: [
      ['name', undefined],
      ['month', undefined],
      ['email', undefined],
      ['code', undefined],
      ['full_name', undefined],
      ['yr', undefined],
    ],
  },
  {
    name: 'CASE with non-literal results, mixed columns, compound or non-equality conditions',
    sql: `select
  case when status = 'a' then name else 'z' end as c1,
  case when status = 'a' then 'A' when kind = 'b' then 'B' end as c2,
  case when status = 'a' and paid then 'A' end as c3,
  case when status is null then 'none' end as c4,
  case when amount >= 100 then 'big' else 'small' end as c5,
  case when status = other_status then 'same' end as c6,
  case when t.status = 'a' then 'A' when status = 'b' then 'B' end as c7
from raw.t t`,
    columns: [
      ['c1', undefined],
      ['c2', undefined],
      ['c3', undefined],
      ['c4', undefined],
      ['c5', undefined],
      ['c6', undefined],
      ['c7', undefined],
    ],
  },
  {
    name: 'arithmetic of two columns or more than one operator',
    sql: `select total / quantity as unit_price, a + b as ab, total * 100 + 1 as x, 100 - total as rest,
  1 / total as inv, total - interval '1 day' as shifted, total + '1' as s, total - null as n
from raw.orders`,
    columns: [
      ['unit_price', undefined],
      ['ab', undefined],
      ['x', undefined],
      ['rest', undefined],
      ['inv', undefined],
      ['shifted', undefined],
      ['s', undefined],
      ['n', undefined],
    ],
  },
  {
    name: 'a column ambiguous between two joined tables when unqualified',
    sql: 'select id, o.total, name from raw.orders o join raw.customers c on c.id = o.customer_id',
    columns: [
      ['id', undefined],
      ['total', col('raw.orders', 'total')],
      ['name', undefined],
    ],
    shape: { joined: true, from: ['raw.orders', 'raw.customers'] },
  },
  {
    name: 'select * over a join lists no columns and passes both tables through',
    sql: 'select * from raw.a join raw.b on a.id = b.a_id',
    columns: [],
    shape: { starFrom: ['raw.a', 'raw.b'], joined: true },
  },
  {
    name: 't.* over a join passes only that table through',
    sql: 'select a.*, b.label from raw.a join raw.b on a.id = b.a_id',
    columns: [['label', col('raw.b', 'label')]],
    shape: { starFrom: ['raw.a'], joined: true },
  },
  {
    name: 'concatenation and casts mixed with operators outside parentheses',
    sql: "select first_name::text || ' ' || last_name as full_name, amount::numeric / 100 as amount, a::text::int as twice from raw.t",
    columns: [
      ['full_name', undefined],
      ['amount', undefined],
      ['twice', undefined],
    ],
  },
  {
    name: 'values that look like column names, and constants',
    sql: "select current_date as as_of, current_user as who, null as nothing, 'web' as channel, 1 as one, true as flag, id from raw.t",
    columns: [
      ['as_of', undefined],
      ['who', undefined],
      ['nothing', undefined],
      ['channel', undefined],
      ['one', undefined],
      ['flag', undefined],
      ['id', col('raw.t', 'id')],
    ],
  },
  {
    name: 'a scalar subquery in the select list',
    sql: 'select u.id, (select max(e.ts) from raw.events e where e.uid = u.id) as last_seen from raw.users u',
    columns: [
      ['id', col('raw.users', 'id')],
      ['last_seen', undefined],
    ],
    shape: { from: ['raw.users'], joined: false, groupBy: undefined },
  },
  {
    name: 'IS DISTINCT FROM in the select list does not start the FROM clause',
    sql: 'select a.x is distinct from a.y as changed, a.id from raw.t a',
    columns: [
      ['changed', undefined],
      ['id', col('raw.t', 'id')],
    ],
    shape: { from: ['raw.t'] },
  },
  { name: 'a table function alone', sql: 'select g as n from generate_series(1, 10) g', columns: null },
  {
    name: 'a name another item defines may be a lateral alias (Snowflake, Redshift, DuckDB), not the column',
    sql: `select amount / 100 as dollars, dollars * 2 as double_dollars, coalesce(status, 'n/a') as status,
  id as customer_id, customer_id as cid
from raw.t`,
    columns: [
      ['dollars', arith(ref('raw.t', 'amount'), '/', '100')],
      ['double_dollars', undefined],
      ['status', coalesce(ref('raw.t', 'status'), "'n/a'")],
      ['customer_id', col('raw.t', 'id', true)],
      ['cid', undefined],
    ],
  },
  {
    name: 'two CASE expressions added are not one mapping',
    sql: "select case when x = 'a' then 1 end + case when x = 'b' then 2 end as s from raw.t",
    columns: [['s', undefined]],
  },
  {
    name: 'WITHIN GROUP is an aggregate, not a GROUP BY',
    sql: 'select percentile_cont(0.5) within group (order by amount) as median_amount, region from raw.t group by region',
    columns: [
      ['median_amount', undefined],
      ['region', col('raw.t', 'region')],
    ],
    shape: { groupBy: [ref('raw.t', 'region')] },
  },
  {
    name: 'another aggregate (string_agg) without GROUP BY still makes one row: no shape',
    sql: "select string_agg(name, ', ') as names from raw.t",
    columns: null,
  },
];

const grouping: Case[] = [
  {
    name: 'GROUP BY ordinals',
    sql: 'select customer_id, status, count(*) as n, sum(total) as total from raw.orders group by 1, 2',
    columns: [
      ['customer_id', col('raw.orders', 'customer_id')],
      ['status', col('raw.orders', 'status')],
      [
        'n',
        agg('count', undefined, {
          groupBy: [ref('raw.orders', 'customer_id'), ref('raw.orders', 'status')],
          from: ['raw.orders'],
        }),
      ],
      [
        'total',
        agg('sum', ref('raw.orders', 'total'), {
          groupBy: [ref('raw.orders', 'customer_id'), ref('raw.orders', 'status')],
          from: ['raw.orders'],
        }),
      ],
    ],
    shape: { groupBy: [ref('raw.orders', 'customer_id'), ref('raw.orders', 'status')] },
  },
  {
    name: 'GROUP BY ordinal of an expression names the output column',
    sql: "select date_trunc('month', ts) as month, sum(total) as total from raw.orders group by 1",
    columns: [
      ['month', undefined],
      ['total', agg('sum', ref('raw.orders', 'total'), { groupBy: [ref(undefined, 'month')], from: ['raw.orders'] })],
    ],
    shape: { groupBy: [ref(undefined, 'month')] },
  },
  {
    name: 'GROUP BY the same expression as the select list names the output column',
    sql: "select date_trunc('month', o.ts) as month, count(*) as n from raw.orders o group by date_trunc('month', o.ts)",
    columns: [
      ['month', undefined],
      ['n', agg('count', undefined, { groupBy: [ref(undefined, 'month')], from: ['raw.orders'] })],
    ],
  },
  {
    name: 'GROUP BY an expression not in the select list: per what is not understood, so no shape',
    sql: "select sum(total) as total from raw.orders group by date_trunc('month', ts)",
    columns: null,
  },
  {
    name: 'GROUP BY an expression over a join: columns kept, aggregates and keys not claimed',
    sql: "select c.name, sum(o.total) as total from raw.orders o join raw.customers c on c.id = o.customer_id group by c.name, date_trunc('month', o.ts)",
    columns: [
      ['name', col('raw.customers', 'name')],
      ['total', undefined],
    ],
    shape: { groupBy: undefined, joined: true },
  },
  {
    name: 'GROUP BY an output alias of an expression',
    sql: 'select upper(region) as region, count(*) as n from raw.t group by region',
    columns: [
      ['region', undefined],
      ['n', agg('count', undefined, { groupBy: [ref(undefined, 'region')], from: ['raw.t'] })],
    ],
  },
  {
    name: 'GROUP BY ALL, ROLLUP and GROUPING SETS are not read',
    sql: 'select customer_id, count(*) as n from raw.orders group by all',
    columns: null,
  },
  {
    name: 'GROUP BY ROLLUP',
    sql: 'select region, city, sum(total) as total from raw.orders group by rollup (region, city)',
    columns: null,
  },
  {
    name: 'GROUP BY ordinal after a star cannot be placed',
    sql: 'select *, count(*) as n from raw.t group by 1',
    columns: null,
  },
  {
    name: 'HAVING filters groups: the shape is filtered, the aggregate is not',
    sql: 'select customer_id, sum(total) as total from raw.orders group by customer_id having sum(total) > 100',
    columns: [
      ['customer_id', col('raw.orders', 'customer_id')],
      [
        'total',
        agg('sum', ref('raw.orders', 'total'), { groupBy: [ref('raw.orders', 'customer_id')], from: ['raw.orders'] }),
      ],
    ],
    shape: { filtered: true, groupBy: [ref('raw.orders', 'customer_id')] },
  },
  {
    name: 'ORDER BY and LIMIT after GROUP BY',
    sql: 'select customer_id, max(ts) as last_order from raw.orders group by customer_id order by last_order desc limit 10',
    columns: [
      ['customer_id', col('raw.orders', 'customer_id')],
      [
        'last_order',
        agg('max', ref('raw.orders', 'ts'), { groupBy: [ref('raw.orders', 'customer_id')], from: ['raw.orders'] }),
      ],
    ],
    shape: { filtered: true },
  },
  {
    name: 'an aggregate over all rows alone: the one-row grain cannot be stated, so no shape',
    sql: 'select count(*) as n, sum(total) as total from raw.orders',
    columns: null,
  },
  {
    name: 'an aggregate over all rows in a CTE joined back',
    sql: `with totals as (select sum(total) as grand_total from raw.orders where status = 'paid')
select o.id, t.grand_total from raw.orders o cross join totals t`,
    columns: [
      ['id', col('raw.orders', 'id')],
      ['grand_total', agg('sum', ref('raw.orders', 'total'), { from: ['raw.orders'], filtered: true })],
    ],
    shape: { joined: true, groupBy: undefined },
  },
  {
    name: 'aggregates over already grouped rows are not counts or sums of the table',
    sql: `select customer_id, count(*) as n_orders, count(order_id) as n_ids
from (select customer_id, order_id from raw.items group by 1, 2) x group by customer_id`,
    columns: [
      ['customer_id', col('raw.items', 'customer_id')],
      ['n_orders', undefined],
      ['n_ids', undefined],
    ],
    shape: { groupBy: [ref('raw.items', 'customer_id')] },
  },
  {
    name: 'count(1) counts rows; count(distinct x); avg',
    sql: 'select region, count(1) as n, count(distinct customer_id) as customers, avg(total) as avg_total from raw.orders group by region',
    columns: [
      ['region', col('raw.orders', 'region')],
      ['n', agg('count', undefined, { groupBy: [ref('raw.orders', 'region')], from: ['raw.orders'] })],
      [
        'customers',
        agg('count', ref('raw.orders', 'customer_id'), {
          groupBy: [ref('raw.orders', 'region')],
          from: ['raw.orders'],
          distinct: true,
        }),
      ],
      [
        'avg_total',
        agg('avg', ref('raw.orders', 'total'), { groupBy: [ref('raw.orders', 'region')], from: ['raw.orders'] }),
      ],
    ],
  },
  {
    name: 'an aggregate over a filtered derived table is filtered',
    sql: "select customer_id, count(*) as n from (select * from raw.orders where status = 'paid') p group by customer_id",
    columns: [
      ['customer_id', col('raw.orders', 'customer_id')],
      [
        'n',
        agg('count', undefined, { groupBy: [ref('raw.orders', 'customer_id')], from: ['raw.orders'], filtered: true }),
      ],
    ],
    shape: { filtered: true },
  },
  {
    name: 'a table function in the FROM: aggregates not claimed',
    sql: 'select o.id, count(*) as n from raw.orders o cross join unnest(o.tags) t group by o.id',
    columns: [
      ['id', col('raw.orders', 'id')],
      ['n', undefined],
    ],
  },
];

const literals: Case[] = [
  {
    name: 'negative literals',
    sql: "select amount * -1 as neg, -1 * amount as neg2, amount - -5 as plus5, coalesce(score, -1) as score, case code when -1 then 'missing' end as code_label from raw.t",
    columns: [
      ['neg', arith(ref('raw.t', 'amount'), '*', '-1')],
      ['neg2', arith(ref('raw.t', 'amount'), '*', '-1')],
      ['plus5', arith(ref('raw.t', 'amount'), '-', '-5')],
      ['score', coalesce(ref('raw.t', 'score'), '-1')],
      ['code_label', mapping(ref('raw.t', 'code'), [['-1', "'missing'"]])],
    ],
  },
  {
    name: 'CAST, TRY_CAST, SAFE_CAST',
    sql: `select CAST(amount AS numeric(12, 2)) as amount, TRY_CAST(ordered_at AS date) as ordered_on,
  safe_cast(qty as INT64) as qty, cast(code as varchar(255)) as code, cast(a || b as text) as ab,
  cast(x as double precision) as x
from raw.t`,
    columns: [
      ['amount', cast('raw.t', 'amount', 'NUMERIC(12, 2)')],
      ['ordered_on', cast('raw.t', 'ordered_at', 'DATE')],
      ['qty', cast('raw.t', 'qty', 'INT64')],
      ['code', cast('raw.t', 'code', 'VARCHAR(255)')],
      ['ab', undefined],
      ['x', cast('raw.t', 'x', 'DOUBLE PRECISION')],
    ],
  },
  {
    // Dialects name an unaliased cast differently (x, X::DOUBLE, f0_): not listed, and never "precision".
    name: 'x::date; a multi-word type without AS is not read as an alias',
    sql: 'select ordered_at::date as ordered_on, amount::double precision, t.ts::timestamp without time zone, id from raw.t t',
    columns: [
      ['ordered_on', cast('raw.t', 'ordered_at', 'DATE')],
      ['id', col('raw.t', 'id')],
    ],
  },
  {
    name: "CASE WHEN x = 'a' ... WHEN x = 'b' form, no ELSE",
    sql: "select case when tier = 'g' then 'Gold' when tier = 's' then 'Silver' end as tier_name from raw.t",
    columns: [
      [
        'tier_name',
        mapping(ref('raw.t', 'tier'), [
          ["'g'", "'Gold'"],
          ["'s'", "'Silver'"],
        ]),
      ],
    ],
  },
  {
    name: 'CASE x WHEN ... form with numbers, ELSE and ELSE NULL',
    sql: `select case status when 1 then 'new' when 2 then 'done' else 'other' end as s1,
  case status when 1 then true else null end as s2
from raw.t`,
    columns: [
      [
        's1',
        mapping(
          ref('raw.t', 'status'),
          [
            ['1', "'new'"],
            ['2', "'done'"],
          ],
          "'other'",
        ),
      ],
      ['s2', mapping(ref('raw.t', 'status'), [['1', 'TRUE']], 'NULL')],
    ],
  },
  {
    name: 'nested CASE is not a mapping',
    sql: `select case when kind = 'a' then case when sub = 'x' then 'AX' else 'A' end else 'B' end as k1,
  case kind when 'a' then 'A' else case when kind = 'b' then 'B' end end as k2
from raw.t`,
    columns: [
      ['k1', undefined],
      ['k2', undefined],
    ],
  },
  {
    name: 'string literals containing quotes, keywords, semicolons and comment markers',
    sql: `select case status when 'it''s; from x' then 'FROM; select' end as label,
  coalesce(note, 'n/a -- not a comment; union select 1') as note,
  id
from raw.t;`,
    columns: [
      ['label', mapping(ref('raw.t', 'status'), [["'it''s; from x'", "'FROM; select'"]])],
      ['note', coalesce(ref('raw.t', 'note'), "'n/a -- not a comment; union select 1'")],
      ['id', col('raw.t', 'id')],
    ],
    shape: { from: ['raw.t'], joined: false },
  },
  {
    name: 'comments containing SQL',
    sql: `-- select secret from other.table union select 1
select /* from hidden h join x on true */ o.id, -- , o.secret
  o.total /* as renamed */ from raw.orders o -- where o.deleted
`,
    columns: [
      ['id', col('raw.orders', 'id')],
      ['total', col('raw.orders', 'total')],
    ],
    shape: { from: ['raw.orders'], filtered: false, joined: false },
  },
  {
    name: 'COALESCE, IFNULL, NVL; a second column is not a constant',
    sql: "select coalesce(nickname, 'none') as nick, ifnull(qty, 0) as qty, nvl(tax, 0.0) as tax, coalesce(a, b) as ab, coalesce(a, 0, 1) as a3 from raw.t",
    columns: [
      ['nick', coalesce(ref('raw.t', 'nickname'), "'none'")],
      ['qty', coalesce(ref('raw.t', 'qty'), '0')],
      ['tax', coalesce(ref('raw.t', 'tax'), '0.0')],
      ['ab', undefined],
      ['a3', undefined],
    ],
  },
];

const statements: Case[] = [
  {
    name: 'trailing semicolons',
    sql: 'select id from raw.t;;',
    columns: [['id', col('raw.t', 'id')]],
  },
  {
    name: 'two statements',
    sql: 'select id from raw.t; select secret as id from raw.u',
    columns: null,
  },
  {
    name: 'parentheses around the whole query',
    sql: '((select id, name as label from raw.t))',
    columns: [
      ['id', col('raw.t', 'id')],
      ['label', col('raw.t', 'name', true)],
    ],
  },
  {
    name: 'SELECT DISTINCT: one row per the selected columns',
    sql: 'select distinct customer_id, status as state from raw.orders',
    columns: [
      ['customer_id', col('raw.orders', 'customer_id')],
      ['state', col('raw.orders', 'status', true)],
    ],
    shape: { groupBy: [ref('raw.orders', 'customer_id'), ref('raw.orders', 'status')], filtered: false },
  },
  {
    name: 'SELECT DISTINCT * is a filtered selection of the rows',
    sql: 'select distinct * from raw.orders',
    columns: [],
    shape: { starFrom: ['raw.orders'], filtered: true, groupBy: undefined },
  },
  {
    name: 'SELECT TOP n',
    sql: 'SELECT TOP 10 o.id, o.total FROM dbo.orders o ORDER BY o.total DESC',
    columns: [
      ['id', col('dbo.orders', 'id')],
      ['total', col('dbo.orders', 'total')],
    ],
    shape: { filtered: true },
  },
  {
    name: 'SELECT DISTINCT TOP (n) PERCENT WITH TIES',
    sql: 'SELECT DISTINCT TOP (10) PERCENT WITH TIES region FROM dbo.orders ORDER BY region',
    columns: [['region', col('dbo.orders', 'region')]],
    shape: { filtered: true, groupBy: [ref('dbo.orders', 'region')] },
  },
  {
    name: 'LIMIT and TABLESAMPLE are filters',
    sql: 'select s.id from raw.events s tablesample system (10) limit 5',
    columns: [['id', col('raw.events', 'id')]],
    shape: { filtered: true, joined: false },
  },
  {
    name: 'LEFT(...) in a join condition is a function, not a join',
    sql: 'select a.id, b.name from raw.a a join raw.b b on left(a.code, 3) = b.prefix',
    columns: [
      ['id', col('raw.a', 'id')],
      ['name', col('raw.b', 'name')],
    ],
    shape: { from: ['raw.a', 'raw.b'] },
  },
  {
    name: 'not a SELECT',
    sql: "insert into raw.t values (1, 'a')",
    columns: null,
  },
  { name: 'empty', sql: '  -- nothing\n', columns: null },
];

const cases: Case[] = [...postgres, ...dbt, ...identifiers, ...notDerivations, ...grouping, ...literals, ...statements];

describe('readSelectShape', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const shape = readSelectShape(c.sql);
    if (c.columns === null) {
      expect(shape).toBeUndefined();
      return;
    }
    expect(shape).toBeDefined();
    expect(shape!.columns.map((x) => [x.name, x.derivation])).toEqual(c.columns);
    if (c.shape) expect(shape).toMatchObject(c.shape);
  });

  it('has the cases the brief asks for', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
  });

  it('never throws, on any prefix of any case', () => {
    for (const c of cases) {
      for (let n = 0; n <= c.sql.length; n += 3) {
        expect(() => readSelectShape(c.sql.slice(0, n))).not.toThrow();
      }
    }
  });

  it('never reads a concatenation as a column, on any prefix of the pagila-shaped views', () => {
    for (const c of postgres) {
      for (let n = 0; n <= c.sql.length; n += 7) {
        const shape = readSelectShape(c.sql.slice(0, n));
        for (const column of shape?.columns ?? []) {
          if (column.name === 'name' || column.name === 'manager' || column.name === 'branch')
            expect(column.derivation).toBeUndefined();
        }
      }
    }
  });
});
