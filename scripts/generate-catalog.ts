// Synthetic warehouses of any size, the same for the same seed: `generateCatalog` for the tests and benchmarks that
// import it, and run as a script (node scripts/run-ts.js scripts/generate-catalog.ts --entities <n>) a catalog file.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  CATALOG_FORMAT,
  CATALOG_FORMAT_VERSION,
  type CatalogColumn,
  type CatalogEntity,
  type CatalogFile,
  type PiiCategory,
  type TextSource,
} from '../domain/catalog';

export interface GenerateOptions {
  /** How many entities (tables and views) to produce. */
  entities: number;
  /** PRNG seed; the same seed and size always give the same catalog. Default 1. */
  seed?: number;
  /** Catalog name. Default `synthetic`. */
  name?: string;
}

/** Share of entities whose lineage is deliberately broken (a dangling edge or an unrecorded read). */
export const BROKEN_LINEAGE_FRACTION = 0.01;

/** Prefix of the entity names that dangling edges point at; no generated entity starts with it. */
export const RETIRED_PREFIX = 'retired_';

const DATABASE = 'warehouse';

// mulberry32: small, fast and good enough for test data; Math.random cannot be seeded.
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Dice {
  constructor(readonly next: () => number) {}
  chance(p: number): boolean {
    return this.next() < p;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }
  /** Up to `n` distinct items, in random order. */
  sample<T>(items: readonly T[], n: number): T[] {
    const copy = items.slice();
    const out: T[] = [];
    while (out.length < n && copy.length > 0) {
      const i = Math.floor(this.next() * copy.length);
      out.push(copy[i] as T);
      copy[i] = copy[copy.length - 1] as T;
      copy.pop();
    }
    return out;
  }
}

type ColumnRole = 'plain' | 'trap' | 'pii';
interface ColumnTemplate {
  name: string;
  type: string;
  role: ColumnRole;
  category?: PiiCategory;
  description: string;
}

const col = (name: string, type: string, description: string): ColumnTemplate => ({
  name,
  type,
  role: 'plain',
  description,
});
const trap = (name: string, type: string, description: string): ColumnTemplate => ({
  name,
  type,
  role: 'trap',
  description,
});
const pii = (name: string, type: string, category: PiiCategory, description: string): ColumnTemplate => ({
  name,
  type,
  role: 'pii',
  category,
  description,
});

const PLAIN: readonly ColumnTemplate[] = [
  col('amount', 'NUMERIC(12,2)', 'Amount in the row currency.'),
  col('tax_amount', 'NUMERIC(12,2)', 'Tax part of the amount.'),
  col('quantity', 'INTEGER', 'Number of units.'),
  col('is_active', 'BOOLEAN', 'Whether the record is currently in use.'),
  col('is_deleted', 'BOOLEAN', 'Soft-delete flag set by the source system.'),
  col('source_system', 'VARCHAR(32)', 'System the row was extracted from.'),
  col('external_ref', 'VARCHAR(64)', 'Identifier of the row in the source system.'),
  col('effective_date', 'DATE', 'Date from which the row applies.'),
  col('channel', 'VARCHAR(16)', 'Sales channel: web, app, store or partner.'),
  col('priority', 'SMALLINT', 'Priority, 1 being the highest.'),
  col('score', 'NUMERIC(5,2)', 'Model score between 0 and 100.'),
  col('notes_count', 'INTEGER', 'Number of notes attached.'),
  col('sku', 'VARCHAR(64)', 'Stock keeping unit.'),
  col('category', 'VARCHAR(100)', 'Merchandising category.'),
  col('loaded_at', 'TIMESTAMP', 'When the loader wrote the row.'),
  col('batch_id', 'BIGINT', 'Load batch that wrote the row.'),
  col('duration_seconds', 'INTEGER', 'Elapsed time in seconds.'),
  col('weight_kg', 'NUMERIC(8,3)', 'Shipping weight in kilograms.'),
];

/** Look like personal data by name or type, but are not. */
const TRAPS: readonly ColumnTemplate[] = [
  trap('created_at', 'TIMESTAMP', 'When the row was created in the source system.'),
  trap('updated_at', 'TIMESTAMP', 'When the row was last changed in the source system.'),
  trap('status', 'CHAR(2)', 'Two-letter lifecycle status code.'),
  trap('country_code', 'CHAR(2)', 'ISO 3166-1 alpha-2 country code.'),
  trap('currency_code', 'CHAR(3)', 'ISO 4217 currency code.'),
  trap('region_name', 'VARCHAR(100)', 'Sales region.'),
  trap('account_number', 'VARCHAR(20)', 'General-ledger account code.'),
  trap('product_name', 'VARCHAR(255)', 'Product name as shown in the shop.'),
  trap('store_city', 'VARCHAR(100)', 'City of the store.'),
  trap('supplier_phone', 'VARCHAR(32)', 'Supplier switchboard number.'),
  trap('campaign_title', 'VARCHAR(255)', 'Marketing campaign title.'),
];

const PII: readonly ColumnTemplate[] = [
  pii('email', 'VARCHAR(255)', 'email', 'Contact email address.'),
  pii('phone', 'VARCHAR(32)', 'phone', 'Contact phone number.'),
  pii('first_name', 'VARCHAR(100)', 'person_name', 'Given name.'),
  pii('last_name', 'VARCHAR(100)', 'person_name', 'Family name.'),
  pii('date_of_birth', 'DATE', 'birth_date', 'Date of birth.'),
  pii('billing_zipcode', 'VARCHAR(10)', 'postal_code', 'Postal code of the billing address.'),
  pii('address_line1', 'VARCHAR(255)', 'address', 'First line of the postal address.'),
  pii('ip_address', 'INET', 'ip_address', 'Client IP address.'),
  pii('tax_id', 'VARCHAR(32)', 'national_id', 'Personal tax number.'),
  pii('card_last4', 'CHAR(4)', 'payment_card', 'Last four digits of the payment card.'),
  pii('gender', 'VARCHAR(16)', 'gender', 'Self-reported gender.'),
  pii('salary', 'NUMERIC(12,2)', 'compensation', 'Annual gross salary.'),
  pii('username', 'VARCHAR(64)', 'username', 'Login name.'),
];

const SOURCES = [
  'shop',
  'stripe',
  'crm',
  'zendesk',
  'erp',
  'segment',
  'hubspot',
  'pos',
  'wms',
  'billing',
  'hr',
  'ads',
] as const;
/** [plural, singular, holds things rather than people (a `name` column there is not personal)] */
const NOUNS: readonly (readonly [string, string, boolean])[] = [
  ['orders', 'order', false],
  ['invoices', 'invoice', false],
  ['customers', 'customer', false],
  ['payments', 'payment', false],
  ['refunds', 'refund', false],
  ['shipments', 'shipment', false],
  ['sessions', 'session', false],
  ['tickets', 'ticket', false],
  ['ledger_entries', 'entry', false],
  ['products', 'product', true],
  ['suppliers', 'supplier', true],
  ['stores', 'store', true],
  ['subscriptions', 'subscription', false],
  ['campaigns', 'campaign', true],
  ['events', 'event', false],
  ['contracts', 'contract', false],
  ['returns', 'return', false],
  ['carts', 'cart', false],
  ['reviews', 'review', false],
  ['leads', 'lead', false],
  ['warehouses', 'warehouse', true],
  ['employees', 'employee', false],
];

const TEMPLATES = new Map([...PLAIN, ...TRAPS, ...PII].map((t) => [t.name, t]));

type Layer = 'raw' | 'staging' | 'mart' | 'reporting';
const SCHEMA: Record<Layer, string> = { raw: 'raw', staging: 'staging', mart: 'marts', reporting: 'reporting' };

interface Built {
  entity: CatalogEntity;
  layer: Layer;
  noun: string;
  pk: string;
}

/** Name of a derived entity from its first source: stg_shop_orders, fct_shop_orders, rpt_daily_orders. */
function derivedName(dice: Dice, layer: Layer, first: Built): string {
  if (layer === 'staging') return `stg_${first.entity.name}`;
  if (layer === 'mart') return `${dice.pick(['fct_', 'dim_'])}${first.entity.name.replace(/^stg_/, '')}`;
  return `rpt_${dice.pick(['', 'daily_', 'monthly_'])}${first.noun}`;
}

function layerCounts(n: number): Record<Layer, number> {
  if (n === 0) return { raw: 0, staging: 0, mart: 0, reporting: 0 };
  const raw = Math.max(1, Math.round(n * 0.3));
  const staging = Math.min(n - raw, Math.round(n * 0.35));
  const mart = Math.min(n - raw - staging, Math.round(n * 0.2));
  return { raw, staging, mart, reporting: n - raw - staging - mart };
}

function quoteId(id: string, quoted: boolean): string {
  if (!quoted) return id;
  return id
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

/**
 * A deterministic synthetic warehouse of `entities` tables and views: raw tables, staging tables and
 * views, mart tables (a few views) and reporting views, with lineage that matches each view's SQL
 * except for about 1 % of entities broken on purpose (see BROKEN_LINEAGE_FRACTION).
 */
export function generateCatalog(options: GenerateOptions): CatalogFile {
  const { entities: n, seed = 1, name = 'synthetic' } = options;
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`entities must be a non-negative integer, got ${n}`);
  if (name.length < 1 || name.length > 100) throw new RangeError('name must be 1 to 100 characters');
  const dice = new Dice(prng(seed));
  const counts = layerCounts(n);
  const byLayer: Record<Layer, Built[]> = { raw: [], staging: [], mart: [], reporting: [] };
  const usedNames = new Set<string>();
  const all: Built[] = [];

  const nonRaw = n - counts.raw;
  const brokenCount = nonRaw === 0 ? 0 : Math.min(nonRaw, Math.max(1, Math.round(n * BROKEN_LINEAGE_FRACTION)));
  const broken = new Set(
    dice.sample(
      Array.from({ length: nonRaw }, (_, i) => counts.raw + i),
      brokenCount,
    ),
  );

  const uniqueName = (layer: Layer, base: string): string => {
    const schema = SCHEMA[layer];
    let candidate = base;
    for (let k = 2; usedNames.has(`${schema}.${candidate}`); k++) candidate = `${base}_${k}`;
    usedNames.add(`${schema}.${candidate}`);
    return candidate;
  };

  const describe = (text: string, p: number): { description?: string; description_source?: TextSource } => {
    if (!dice.chance(p)) return {};
    return { description: text, description_source: dice.chance(0.1) ? 'human' : 'argus' };
  };

  const makeColumn = (t: ColumnTemplate, nullable = true): CatalogColumn => {
    const c: CatalogColumn = {
      name: t.name,
      type: t.type,
      nullable,
      primary_key: false,
      tags: [],
      ...describe(t.description, 0.15),
    };
    if (t.role === 'pii' && t.category && dice.chance(0.05)) {
      c.tags.push({ kind: 'pii', category: t.category, confidence: 1, explanation: t.description, source: 'human' });
    }
    return c;
  };

  // Downstream copies keep name, type and nullability; descriptions and tags are the copy's own (mostly none).
  const copyColumn = (c: CatalogColumn): CatalogColumn => {
    const t = TEMPLATES.get(c.name);
    return t
      ? makeColumn(t, c.nullable)
      : { name: c.name, type: c.type, nullable: c.nullable, primary_key: false, tags: [] };
  };

  const push = (b: Built): void => {
    byLayer[b.layer].push(b);
    all.push(b);
  };

  for (let i = 0; i < counts.raw; i++) {
    const [plural, singular, thing] = dice.pick(NOUNS);
    const source = dice.pick(SOURCES);
    const entityName = uniqueName('raw', `${source}_${plural}`);
    const pk = `${singular}_id`;
    const columns: CatalogColumn[] = [{ name: pk, type: 'BIGINT', nullable: false, primary_key: true, tags: [] }];
    const exceptions: string[] = [];
    if (thing && dice.chance(0.3)) {
      columns.push({ name: 'name', type: 'VARCHAR(255)', nullable: false, primary_key: false, tags: [] });
      if (dice.chance(0.5)) exceptions.push('name');
    }
    const target = dice.int(4, 12);
    const names = new Set(columns.map((c) => c.name));
    while (columns.length < target) {
      const r = dice.next();
      const t = dice.pick(r < 0.55 ? PLAIN : r < 0.8 ? TRAPS : PII);
      if (names.has(t.name)) continue;
      names.add(t.name);
      columns.push(makeColumn(t));
    }
    push({
      layer: 'raw',
      noun: plural,
      pk,
      entity: {
        id: `raw.${entityName}`,
        database: DATABASE,
        schema: 'raw',
        name: entityName,
        kind: 'table',
        layer: 'raw',
        ...describe(`Rows of ${plural.replace(/_/g, ' ')} loaded from ${source} by the nightly extract.`, 0.5),
        columns,
        upstream: [],
        pii_exceptions: exceptions,
      },
    });
  }

  const derivedLayers: readonly [Layer, Layer][] = [
    ['staging', 'raw'],
    ['mart', 'staging'],
    ['reporting', 'mart'],
  ];
  for (const [layer, below] of derivedLayers) {
    for (let k = 0; k < counts[layer]; k++) {
      const index = all.length;
      const pool = byLayer[below].length > 0 ? byLayer[below] : all;
      const sources = dice.sample(pool, Math.min(pool.length, layer === 'staging' ? dice.int(1, 2) : dice.int(1, 3)));
      const first = sources[0] as Built;
      const isView =
        layer === 'reporting' || (layer === 'staging' && dice.chance(0.5)) || (layer === 'mart' && dice.chance(0.15));
      const entityName = uniqueName(layer, derivedName(dice, layer, first));
      const id = `${SCHEMA[layer]}.${entityName}`;

      // Columns: the first source's key, then columns taken from each source under its alias.
      const aliases = sources.map((_, i) => String.fromCharCode(97 + i));
      const selected: { alias: string; column: CatalogColumn }[] = [];
      const names = new Set<string>();
      const target = dice.int(4, 12);
      const pkCol = first.entity.columns.find((c) => c.name === first.pk) ?? first.entity.columns[0];
      if (pkCol) {
        selected.push({ alias: 'a', column: { ...copyColumn(pkCol), primary_key: true, nullable: false } });
        names.add(pkCol.name);
      }
      sources.forEach((s, i) => {
        const share = Math.ceil((target - 1) / sources.length);
        for (const c of dice.sample(s.entity.columns, share)) {
          if (names.has(c.name) || selected.length >= target) continue;
          names.add(c.name);
          selected.push({ alias: aliases[i] as string, column: copyColumn(c) });
        }
      });
      // Every entity has at least 4 distinct columns, so topping up from the sources always reaches 4.
      sources.forEach((s, i) => {
        for (const c of s.entity.columns) {
          if (selected.length >= 4 || names.has(c.name)) continue;
          names.add(c.name);
          selected.push({ alias: aliases[i] as string, column: copyColumn(c) });
        }
      });

      const upstream = sources.map((s) => s.entity.id);
      const joins = sources.map((s, i) => ({ id: s.entity.id, alias: aliases[i] as string, pk: s.pk }));
      if (broken.has(index)) {
        const candidates = isView ? pool.filter((p) => !upstream.includes(p.entity.id)) : [];
        const unrecorded = candidates.length > 0 && dice.chance(0.5) ? dice.pick(candidates) : undefined;
        if (unrecorded) {
          // The SQL reads an entity the recorded lineage omits.
          joins.push({ id: unrecorded.entity.id, alias: 'x', pk: unrecorded.pk });
          const c = unrecorded.entity.columns.find((x) => !names.has(x.name));
          if (c && selected.length < 12) selected.push({ alias: 'x', column: copyColumn(c) });
        } else {
          // A recorded edge to an entity that no longer exists.
          upstream.push(`${SCHEMA[below]}.${RETIRED_PREFIX}${first.noun}_v${dice.int(1, 3)}`);
        }
      }

      const entity: CatalogEntity = {
        id,
        database: DATABASE,
        schema: SCHEMA[layer],
        name: entityName,
        kind: isView ? 'view' : 'table',
        layer,
        ...describe(
          `${layer === 'staging' ? 'Cleaned' : 'Modelled'} ${first.noun.replace(/_/g, ' ')} built from ${sources.map((s) => s.entity.id).join(', ')}.`,
          0.5,
        ),
        columns: selected.map((s) => s.column),
        upstream,
        pii_exceptions: [],
      };
      if (isView) entity.sql = viewSql(dice, joins, selected);
      push({ layer, noun: first.noun, pk: first.pk, entity });
    }
  }

  return {
    format: CATALOG_FORMAT,
    version: CATALOG_FORMAT_VERSION,
    name,
    description: `Synthetic warehouse generated by scripts/generate-catalog.ts (seed ${seed}, ${n} entities).`,
    entities: all.map((b) => b.entity),
  };
}

/** Varies the SQL shape (plain, CTE, subquery, quoted identifiers) so a SQL reader has work to do. */
function viewSql(
  dice: Dice,
  joins: readonly { id: string; alias: string; pk: string }[],
  selected: readonly { alias: string; column: CatalogColumn }[],
): string {
  const quoted = dice.chance(0.15);
  const shape = dice.pick(['plain', 'plain', 'cte', 'subquery'] as const);
  const list = selected.map(({ alias, column }) => `${alias}.${column.name}`).join(',\n  ');
  const [head, ...rest] = joins;
  if (!head) throw new RangeError('a view needs at least one source');
  const joinLines = rest.map(
    (j) => `LEFT JOIN ${quoteId(j.id, quoted)} AS ${j.alias} ON ${j.alias}.${j.pk} = a.${j.pk}`,
  );
  const headRef = quoteId(head.id, quoted);
  if (shape === 'cte') {
    return [`WITH base AS (\n  SELECT * FROM ${headRef}\n)`, `SELECT\n  ${list}`, 'FROM base AS a', ...joinLines].join(
      '\n',
    );
  }
  if (shape === 'subquery') {
    return [`SELECT\n  ${list}`, `FROM (SELECT * FROM ${headRef}) AS a`, ...joinLines].join('\n');
  }
  return [`SELECT\n  ${list}`, `FROM ${headRef} AS a`, ...joinLines].join('\n');
}

const USAGE = 'usage: generate-catalog.ts --entities <n> [--seed <int>] [--name <name>] [--out <file.json>] [--pretty]';

function readArgs(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      entities: { type: 'string' },
      seed: { type: 'string' },
      name: { type: 'string' },
      out: { type: 'string' },
      pretty: { type: 'boolean', default: false },
    },
  }).values;
}

function main(argv: readonly string[]): void {
  let values: ReturnType<typeof readArgs>;
  try {
    values = readArgs(argv);
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    process.exit(2);
  }
  const entities = Number(values.entities);
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (
    values.entities === undefined ||
    !Number.isInteger(entities) ||
    entities < 0 ||
    (seed !== undefined && !Number.isInteger(seed))
  ) {
    console.error(USAGE);
    process.exit(2);
  }
  const catalog = generateCatalog({ entities, seed, name: values.name });
  const text = JSON.stringify(catalog, null, values.pretty ? 2 : undefined) + '\n';
  if (values.out === undefined) {
    process.stdout.write(text);
    return;
  }
  writeFileSync(values.out, text);
  console.error(`wrote ${entities} entities (${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB) to ${values.out}`);
}

if (require.main === module) main(process.argv.slice(2));
