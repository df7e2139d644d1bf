// Reads a dbt project's manifest.json (and, when present, catalog.json) into ARGUS catalog entities,
// with, per entity, where its YAML entry lives so a repair can be written back there.
//
// Entity ids are `<schema>.<identifier>`: the relation as the warehouse names it, without the database
// (e.g. model.jaffle_shop.orders → `main.orders`). They are stable across runs, readable, match the
// `schema.table` ids of the file catalog, and let the lineage checker resolve the relations compiled SQL
// reads (`"jaffle_shop"."main"."orders"` resolves by suffix). When two entities of one project share a
// schema and identifier (different databases), both get `<database>.<schema>.<identifier>`.
//
// Column types are the warehouse's, as catalog.json (`dbt docs generate`) lists them per node and source, matched by
// name without regard to case (Snowflake lists upper case); a column it lacks takes the manifest's `data_type`, else
// UNKNOWN_COLUMN_TYPE. A catalog.json older than the manifest is used for what it lists and said in `notes`.
//
// An entity's SQL is the node's compiled_code; a manifest from `dbt parse` has none, so then it is the
// node's raw_code rendered without Jinja where that is exact (renderRawCode): refs and sources become
// the ids above, and anything else Jinja would have to evaluate leaves the entity without SQL.
import { readFile, stat } from 'node:fs/promises';
import * as path from 'node:path';
import {
  CatalogEntity,
  PiiCategory,
  UNKNOWN_COLUMN_TYPE,
  type CatalogEntityInput,
  type PiiTag,
} from '../../domain/catalog';
import { argusYamlPathFor, type DbtYamlNode } from './yaml-edit';

export type DbtResourceType = 'model' | 'seed' | 'snapshot' | 'source';

export interface ReadDbtProjectOptions {
  projectDir: string;
  /** Relative to projectDir. */
  manifest?: string;
  /** Relative to projectDir; optional: a missing file leaves column types unknown. */
  catalog?: string;
  /** The tag that marks a PII column (default `pii`) and the `meta` key holding its category. */
  piiTag?: string;
  piiCategoryKey?: string;
}

/** Where an entity is defined, for writing repairs back. Paths are relative to the project directory. */
export interface DbtEntityLocation {
  uniqueId: string;
  resourceType: DbtResourceType;
  packageName: string;
  /** The node as the YAML editor addresses it. */
  yamlNode: DbtYamlNode;
  /** `patch_path` exactly as the manifest has it (`pkg://models/schema.yml` or plain), null when none. */
  patchPath: string | null;
  /** The YAML file that holds the entry today (the patch path's file; for a source its own file). */
  yamlPath: string | null;
  /** Where repairs go: `yamlPath`, or `_argus__<models|seeds|snapshots>.yml` beside the node's file. */
  writePath: string;
  /** The node's own file (`models/orders.sql`; for a source, its YAML file). */
  originalFilePath: string;
  /** False for nodes of installed packages: their files are not the project's to edit. */
  writable: boolean;
  /** Descriptions that are doc blocks (`{{ doc('…') }}`): the node's, and its columns' by name. */
  docBlocks: { node: boolean; columns: string[] };
  /** How dbt SQL names the node's relation: `ref(package, name, v=version)`, or `source(source, table)`. */
  relation: DbtNodeRelation;
  /**
   * Column names as the warehouse stores them (catalog.json; the YAML's may differ in case), keyed by the entity's
   * column name; a column absent here is not in the warehouse's relation. Undefined: catalog.json has no entry.
   */
  storedColumns: Record<string, string> | undefined;
}

export type DbtNodeRelation =
  | { kind: 'ref'; package: string; name: string; version?: string | number }
  | { kind: 'source'; source: string; table: string };

export interface DbtProjectRead {
  entities: CatalogEntity[];
  /** Keyed by entity id. */
  locations: Map<string, DbtEntityLocation>;
  /** dbt unique id → entity id, for every entity read. */
  idOf: Map<string, string>;
  /** Nodes that could not become entities (no columns known, invalid record), with the reason. */
  skipped: { uniqueId: string; reason: string }[];
  /** Whether catalog.json was read (column types known). */
  typesKnown: boolean;
  /**
   * What a reader of a sweep's report should know about what was read, in a person's words: catalog.json missing or
   * older than the manifest, nodes left out. Bounded: a handful of sentences whatever the project's size.
   */
  notes: string[];
  /** Keyed by entity id: what the entity's fingerprint is made of, as the manifest and catalog.json state it. */
  facts: Map<string, DbtFingerprintFacts>;
}

/**
 * What an entity's fingerprint is made of, from the files already read: the node's `checksum` (of its SQL or seed
 * file; dbt's state:modified rests on it), its description, each declared column's description, tags and meta (in
 * either form, merged: state:modified ignores them, judgment does not), type and constraints, and the columns
 * catalog.json lists with their types. Column keys are lower case (catalog.json's case may differ from the YAML's).
 */
export interface DbtFingerprintFacts {
  resourceType: string;
  checksum: string | null;
  description: string;
  columns: Record<string, DbtColumnFacts>;
  /** catalog.json: `[name, type]` in the warehouse's column order; null without an entry. */
  types: [string, string][] | null;
}
export interface DbtColumnFacts {
  description: string;
  tags: string[];
  meta: Record<string, unknown>;
  dataType: string | null;
  constraints: string[];
}

/** A declared column as fingerprint facts: tags of both forms as one sorted set, meta of both forms merged. */
export function columnFacts(c: ManifestColumn | undefined): DbtColumnFacts {
  return {
    description: c?.description ?? '',
    tags: [...new Set([...(c?.tags ?? []), ...(c?.config?.tags ?? [])])].sort(),
    meta: { ...(c?.meta ?? {}), ...(c?.config?.meta ?? {}) },
    dataType: nonEmpty(c?.data_type ?? undefined) ?? null,
    constraints: (c?.constraints ?? []).map((k) => k.type).sort(),
  };
}

// The parts of manifest.json and catalog.json this reader uses; both files carry much more.
export interface ManifestColumn {
  name: string;
  description?: string;
  tags?: string[];
  meta?: Record<string, unknown>;
  config?: { tags?: string[]; meta?: Record<string, unknown> };
  data_type?: string | null;
  constraints?: { type: string }[];
  doc_blocks?: string[];
}
interface ManifestNode {
  /** Of the node's file (a seed's CSV, a model's SQL); sources have none. */
  checksum?: { name?: string; checksum?: string } | null;
  unique_id: string;
  resource_type: string;
  package_name: string;
  name: string;
  database?: string | null;
  schema: string;
  alias?: string;
  identifier?: string;
  source_name?: string;
  description?: string;
  columns?: Record<string, ManifestColumn>;
  config?: { materialized?: string; enabled?: boolean };
  depends_on?: { nodes?: string[]; macros?: string[] };
  compiled_code?: string;
  raw_code?: string;
  language?: string;
  /** Refs as parsed: objects since dbt 1.5, `[package?, name]` lists before. */
  refs?: ({ name: string; package?: string | null; version?: string | number | null } | string[])[];
  /** `[source_name, table_name]` pairs. */
  sources?: string[][];
  version?: string | number | null;
  latest_version?: string | number | null;
  patch_path?: string | null;
  original_file_path: string;
  fqn?: string[];
  doc_blocks?: string[];
  constraints?: { type: string; columns?: string[] }[];
  test_metadata?: { name: string; kwargs?: Record<string, unknown> };
  column_name?: string | null;
  attached_node?: string | null;
}
interface Manifest {
  metadata?: { project_name?: string; generated_at?: string };
  nodes: Record<string, ManifestNode>;
  sources: Record<string, ManifestNode>;
}
interface CatalogJson {
  metadata?: { generated_at?: string };
  nodes?: Record<string, { columns: Record<string, { name: string; type: string; index: number }> }>;
  sources?: Record<string, { columns: Record<string, { name: string; type: string; index: number }> }>;
}

const ENTITY_TYPES: ReadonlySet<string> = new Set(['model', 'seed', 'snapshot']);
const DOC_CALL = /\{\{\s*doc\s*\(/;

/** `pkg://models/schema.yml` → `models/schema.yml`; a plain path is returned as it is. */
export function patchPathFile(patchPath: string): string {
  const i = patchPath.indexOf('://');
  return i < 0 ? patchPath : patchPath.slice(i + 3);
}

async function readJson<T>(file: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return JSON.parse(text) as T;
}

/** A seed's columns without catalog.json: its CSV header (seeds are the one node whose columns a file states). */
async function csvHeader(file: string): Promise<string[]> {
  try {
    const text = await readFile(file, 'utf8');
    const first = text.split(/\r?\n/, 1)[0] ?? '';
    return first
      .split(',')
      .map((c) => c.trim().replace(/^"(.*)"$/, '$1'))
      .filter((c) => c.length > 0);
  } catch {
    return [];
  }
}

/**
 * Read the project's models, seeds, snapshots and sources. Throws when the manifest is missing or not
 * JSON (the project was never parsed); a node that cannot become a valid entity is listed in `skipped`.
 */
export async function readDbtProject(options: ReadDbtProjectOptions): Promise<DbtProjectRead> {
  const { projectDir } = options;
  const manifestFile = path.resolve(projectDir, options.manifest ?? 'target/manifest.json');
  const manifest = await readJson<Manifest>(manifestFile);
  if (!manifest) throw new Error(`no dbt manifest at ${manifestFile}: run \`dbt parse\` (or build) in ${projectDir}`);
  const catalogFile = path.resolve(projectDir, options.catalog ?? 'target/catalog.json');
  const catalog = await readJson<CatalogJson>(catalogFile);
  const age = catalog ? await catalogAge(manifestFile, manifest, catalogFile, catalog) : undefined;
  const stale = age?.older === true;
  const piiTag = options.piiTag ?? 'pii';
  const categoryKey = options.piiCategoryKey ?? 'pii_category';
  const rootProject = manifest.metadata?.project_name;

  const nodes = [
    ...Object.values(manifest.nodes).filter((n) => ENTITY_TYPES.has(n.resource_type)),
    ...Object.values(manifest.sources ?? {}),
  ].filter((n) => n.config?.enabled !== false);
  const tests = Object.values(manifest.nodes).filter((n) => n.resource_type === 'test');

  const idParts = assignIds(nodes);
  const idOf = new Map([...idParts].map(([uniqueId, parts]) => [uniqueId, parts.join('.')]));
  const byUniqueId = new Map(nodes.map((n) => [n.unique_id, n]));
  const facts = testFacts(tests, idOf);
  const entities: CatalogEntity[] = [];
  const locations = new Map<string, DbtEntityLocation>();
  const skipped: { uniqueId: string; reason: string }[] = [];
  const fingerprintFacts = new Map<string, DbtFingerprintFacts>();
  // What catalog.json lacks, for the note a stale one gets: nodes with a relation it has no entry for, and declared
  // columns of the nodes it has.
  const lacking = { nodes: 0, columns: 0 };

  for (const node of nodes) {
    const id = idOf.get(node.unique_id)!;
    const resourceType = node.resource_type as DbtResourceType;
    const typed = resourceType === 'source' ? catalog?.sources?.[node.unique_id] : catalog?.nodes?.[node.unique_id];
    const declared = Object.values(node.columns ?? {});
    const byLower = new Map(declared.map((c) => [c.name.toLowerCase(), c]));
    const typeOf = new Map(Object.values(typed?.columns ?? {}).map((c) => [c.name.toLowerCase(), c.type] as const));
    if (catalog && !typed && node.config?.materialized !== 'ephemeral') lacking.nodes++;
    if (typed) lacking.columns += declared.filter((c) => !typeOf.has(c.name.toLowerCase())).length;

    // Order: the warehouse's (catalog.json), then declared columns the warehouse lacks; without types,
    // the declared ones, or a seed's CSV header.
    const names: string[] = [];
    if (typed) {
      for (const c of Object.values(typed.columns).sort((a, b) => a.index - b.index))
        names.push(byLower.get(c.name.toLowerCase())?.name ?? c.name);
    }
    for (const c of declared) if (!names.some((n) => n.toLowerCase() === c.name.toLowerCase())) names.push(c.name);
    if (names.length === 0 && resourceType === 'seed')
      names.push(...(await csvHeader(path.resolve(projectDir, node.original_file_path))));
    if (names.length === 0) {
      skipped.push({
        uniqueId: node.unique_id,
        reason: stale
          ? 'no columns known: none declared in YAML, and catalog.json, older than the manifest, has no entry ' +
            '(run `dbt docs generate`)'
          : 'no columns known: none declared in YAML and no catalog.json entry (run `dbt docs generate`)',
      });
      continue;
    }
    const nodeFacts = facts.get(node.unique_id);
    const pkFromConstraints = new Set(
      (node.constraints ?? []).filter((c) => c.type === 'primary_key').flatMap((c) => c.columns ?? []),
    );

    const columns = names.map((name) => {
      const lower = name.toLowerCase();
      const c = byLower.get(lower);
      const colFacts = nodeFacts?.get(lower);
      const constraint = (t: string) => (c?.constraints ?? []).some((k) => k.type === t);
      const notNull = constraint('not_null') || constraint('primary_key') || colFacts?.notNull === true;
      const primaryKey =
        constraint('primary_key') ||
        pkFromConstraints.has(name) ||
        (colFacts?.unique === true && colFacts.notNull === true);
      const description = nonEmpty(c?.description);
      return {
        name,
        type: typeOf.get(lower) ?? (nonEmpty(c?.data_type ?? undefined) || UNKNOWN_COLUMN_TYPE),
        nullable: !notNull,
        primary_key: primaryKey,
        ...(colFacts?.foreignKey ? { foreign_key: colFacts.foreignKey } : {}),
        ...(description ? { description, description_source: 'human' as const } : {}),
        tags: c ? piiTags(c, piiTag, categoryKey) : [],
      };
    });

    const description = nonEmpty(node.description);
    const materialized = node.config?.materialized;
    // A Python model's code is not SQL: the lineage checker and the drafter would misread it.
    const sql =
      (node.language ?? 'sql') !== 'sql'
        ? undefined
        : (nonEmpty(node.compiled_code) ?? renderedSql(node, byUniqueId, idParts, rootProject));
    const input: CatalogEntityInput = {
      id,
      database: nonEmpty(node.database ?? undefined) ?? rootProject ?? node.package_name,
      schema: node.schema,
      name: relationName(node),
      kind: materialized === 'view' || materialized === 'ephemeral' ? 'view' : 'table',
      layer: layerOf(node),
      ...(description ? { description, description_source: 'human' as const } : {}),
      columns,
      upstream: [...new Set((node.depends_on?.nodes ?? []).flatMap((u) => idOf.get(u) ?? []))],
      ...(sql !== undefined ? { sql } : {}),
    };
    const parsed = CatalogEntity.safeParse(input);
    if (!parsed.success) {
      skipped.push({ uniqueId: node.unique_id, reason: parsed.error.issues.map((i) => i.message).join('; ') });
      continue;
    }
    entities.push(parsed.data);
    const stored = new Map(Object.values(typed?.columns ?? {}).map((c) => [c.name.toLowerCase(), c.name] as const));
    const storedColumns = typed
      ? Object.fromEntries(
          columns.flatMap((c) => {
            const s = stored.get(c.name.toLowerCase());
            return s === undefined ? [] : [[c.name, s] as const];
          }),
        )
      : undefined;
    locations.set(id, { ...locate(node, rootProject), storedColumns });
    fingerprintFacts.set(id, {
      resourceType,
      checksum: node.checksum?.checksum ?? null,
      description: node.description ?? '',
      columns: Object.fromEntries(
        declared
          .map((c) => [c.name.toLowerCase(), columnFacts(c)] as const)
          .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
      ),
      types: typed
        ? Object.values(typed.columns)
            .sort((a, b) => a.index - b.index)
            .map((c) => [c.name, c.type])
        : null,
    });
  }
  const rel = (f: string) => path.relative(projectDir, f) || f;
  const notes: string[] = [];
  if (!catalog)
    notes.push(
      `no ${rel(catalogFile)}: column types are the manifest's data_type where the YAML declares one, else unknown ` +
        '(run `dbt docs generate` for the warehouse types)',
    );
  else if (age?.older) notes.push(staleNote(rel(catalogFile), rel(manifestFile), age, lacking));
  if (skipped.length)
    notes.push(
      `${count(skipped.length, 'node')} left out: ` +
        skipped
          .slice(0, 5)
          .map((s) => `${s.uniqueId} (${s.reason.slice(0, 200)})`)
          .join('; ') +
        (skipped.length > 5 ? `; and ${skipped.length - 5} more` : ''),
    );
  return {
    entities,
    locations,
    idOf,
    skipped,
    typesKnown: catalog !== undefined,
    notes,
    facts: fingerprintFacts,
  };
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

interface CatalogAge {
  older: boolean;
  /** What was compared: both files' `metadata.generated_at`, or (either lacks one) their modification times. */
  basis: 'generated_at' | 'mtime';
  manifestAt: string;
  catalogAt: string;
}

/**
 * Whether catalog.json was generated before the manifest: by `metadata.generated_at` when both files carry one (dbt
 * writes it to the microsecond; `dbt docs generate` writes the manifest first), else by the files' mtimes.
 */
async function catalogAge(
  manifestFile: string,
  manifest: Manifest,
  catalogFile: string,
  catalog: CatalogJson,
): Promise<CatalogAge> {
  const m = manifest.metadata?.generated_at;
  const c = catalog.metadata?.generated_at;
  const mAt = m === undefined ? undefined : microseconds(m);
  const cAt = c === undefined ? undefined : microseconds(c);
  if (mAt !== undefined && cAt !== undefined)
    return { older: cAt < mAt, basis: 'generated_at', manifestAt: m!, catalogAt: c! };
  const [ms, cs] = await Promise.all([stat(manifestFile), stat(catalogFile)]);
  return {
    older: cs.mtimeMs < ms.mtimeMs,
    basis: 'mtime',
    manifestAt: ms.mtime.toISOString(),
    catalogAt: cs.mtime.toISOString(),
  };
}

/** An ISO-8601 instant as microseconds since the epoch (Date keeps milliseconds only); undefined if unreadable. */
function microseconds(iso: string): number | undefined {
  const frac = /\.(\d+)/.exec(iso);
  const ms = Date.parse(frac ? iso.replace(frac[0], '') : iso);
  if (Number.isNaN(ms)) return undefined;
  return ms * 1000 + Number((frac?.[1] ?? '').padEnd(6, '0').slice(0, 6));
}

function staleNote(catalog: string, manifest: string, age: CatalogAge, lacking: { nodes: number; columns: number }) {
  const when =
    age.basis === 'generated_at'
      ? `generated ${age.catalogAt}, the manifest ${age.manifestAt}`
      : `modified ${age.catalogAt}, the manifest ${age.manifestAt}; the files carry no generated_at to compare`;
  const lacks = [
    lacking.nodes ? count(lacking.nodes, 'node') : '',
    lacking.columns ? count(lacking.columns, 'column') : '',
  ]
    .filter((x) => x !== '')
    .join(' and ');
  return (
    `${catalog} is older than ${manifest} (${when}): its types are used for the columns it lists, which may have ` +
    'changed since' +
    (lacks ? `, and not trusted for the ${lacks} it lacks (they take the manifest's data_type, else unknown)` : '') +
    '; run `dbt docs generate` to bring it up to date'
  );
}

function nonEmpty(s: string | undefined): string | undefined {
  return s !== undefined && s.trim() !== '' ? s : undefined;
}

function relationName(node: ManifestNode): string {
  return node.resource_type === 'source' ? (node.identifier ?? node.name) : (node.alias ?? node.name);
}

/** Each node's id as its parts (`[schema, identifier]`, or with the database first when that is ambiguous). */
function assignIds(nodes: ManifestNode[]): Map<string, string[]> {
  const short = (n: ManifestNode) => `${n.schema}.${relationName(n)}`.toLowerCase();
  const count = new Map<string, number>();
  for (const n of nodes) count.set(short(n), (count.get(short(n)) ?? 0) + 1);
  return new Map(
    nodes.map((n) => {
      const parts = [n.schema, relationName(n)];
      return [n.unique_id, (count.get(short(n)) ?? 0) > 1 && n.database ? [n.database, ...parts] : parts];
    }),
  );
}

/** Seeds, snapshots and sources say what they are; a model's layer is its folder (`staging`), if any. */
function layerOf(node: ManifestNode): string | undefined {
  if (node.resource_type !== 'model') return node.resource_type;
  const fqn = node.fqn ?? [];
  return fqn.length > 2 ? fqn[1] : undefined;
}

interface ColumnFacts {
  notNull?: boolean;
  unique?: boolean;
  foreignKey?: string;
}

/** What generic tests state about columns: not_null, unique and relationships (the foreign key). */
function testFacts(tests: ManifestNode[], idOf: Map<string, string>): Map<string, Map<string, ColumnFacts>> {
  const out = new Map<string, Map<string, ColumnFacts>>();
  for (const t of tests) {
    const kind = t.test_metadata?.name;
    const owner = t.attached_node;
    const column = t.column_name ?? undefined;
    if (!kind || !owner || !column) continue;
    const cols = out.get(owner) ?? new Map<string, ColumnFacts>();
    out.set(owner, cols);
    const f = cols.get(column.toLowerCase()) ?? {};
    cols.set(column.toLowerCase(), f);
    if (kind === 'not_null') f.notNull = true;
    else if (kind === 'unique') f.unique = true;
    else if (kind === 'relationships') {
      const field = t.test_metadata?.kwargs?.field;
      const target = (t.depends_on?.nodes ?? []).find((n) => n !== owner);
      const targetId = target ? idOf.get(target) : undefined;
      if (typeof field === 'string' && targetId) f.foreignKey = `${targetId}.${field}`;
    }
  }
  return out;
}

/** A column's PII tag as the project states it: the tag in `tags` (either form) and a valid category in `meta`. */
function piiTags(c: ManifestColumn, tag: string, categoryKey: string): PiiTag[] {
  const tags = [...(c.tags ?? []), ...(c.config?.tags ?? [])];
  if (!tags.includes(tag)) return [];
  const raw = c.config?.meta?.[categoryKey] ?? c.meta?.[categoryKey];
  const category = PiiCategory.safeParse(raw);
  // A tag without a category ARGUS knows cannot be represented as a PiiTag (category is required); the
  // column then looks untagged and a proposal for it lands on the same `tags` entry, idempotently.
  if (!category.success) return [];
  return [
    {
      kind: 'pii',
      category: category.data,
      confidence: 1,
      explanation: `Tagged ${tag} with meta ${categoryKey}: ${category.data} in the dbt project.`,
      source: 'human',
    },
  ];
}

function locate(node: ManifestNode, rootProject: string | undefined): Omit<DbtEntityLocation, 'storedColumns'> {
  const resourceType = node.resource_type as DbtResourceType;
  const yamlNode: DbtYamlNode =
    resourceType === 'source'
      ? { resource: 'source', source: node.source_name ?? '', table: node.name }
      : { resource: resourceType, name: node.name };
  const patchPath = node.patch_path ?? null;
  const yamlPath = resourceType === 'source' ? node.original_file_path : patchPath ? patchPathFile(patchPath) : null;
  const writePath =
    yamlPath ?? argusYamlPathFor(node.original_file_path, resourceType as 'model' | 'seed' | 'snapshot');
  const docColumns = Object.values(node.columns ?? {})
    .filter((c) => (c.doc_blocks ?? []).length > 0 || DOC_CALL.test(c.description ?? ''))
    .map((c) => c.name);
  return {
    uniqueId: node.unique_id,
    resourceType,
    packageName: node.package_name,
    yamlNode,
    patchPath,
    yamlPath,
    writePath,
    originalFilePath: node.original_file_path,
    writable: rootProject === undefined || node.package_name === rootProject,
    docBlocks: {
      node: (node.doc_blocks ?? []).length > 0 || DOC_CALL.test(node.description ?? ''),
      columns: docColumns,
    },
    relation:
      resourceType === 'source'
        ? { kind: 'source', source: node.source_name ?? '', table: node.name }
        : {
            kind: 'ref',
            package: node.package_name,
            name: node.name,
            ...(node.version !== null && node.version !== undefined ? { version: node.version } : {}),
          },
  };
}

/** A `ref(...)` or `source(...)` call as a model's raw_code writes it; `version` as written (`v=2` → `2`). */
export type DbtRelationCall =
  { kind: 'ref'; name: string; package?: string; version?: string } | { kind: 'source'; source: string; table: string };

/**
 * The SQL that Jinja would render from a node's raw_code, when that takes no evaluation: comments dropped,
 * each `ref(...)`/`source(...)` replaced by `relationOf(call)`, leading `config(...)` calls dropped (they
 * render nothing), whitespace control (`{{-`, `-}}`, `{#-`, `-#}`) and newlines as Jinja's lexer applies
 * them. Undefined when anything else is there (another expression, any `{% %}`) or a call has no relation.
 */
export function renderRawCode(
  rawCode: string,
  relationOf: (call: DbtRelationCall) => string | undefined,
): string | undefined {
  // Jinja's lexer first makes every line break \n and drops one trailing newline (dbt keeps
  // keep_trailing_newline off).
  const lines = rawCode.split(/\r\n|\r|\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const src = lines.join('\n');
  const tagStart = /\{[{%#]/g;
  let out = '';
  let pos = 0;
  let stripLeading = false;
  for (;;) {
    tagStart.lastIndex = pos;
    const tag = tagStart.exec(src);
    let text = src.slice(pos, tag ? tag.index : src.length);
    if (stripLeading) text = text.replace(LEADING_SPACE, '');
    if (!tag) return out + text;
    let i = tag.index + 2;
    // `+` only matters with lstrip_blocks, which dbt leaves off.
    const sign = src.startsWith('-', i) ? '-' : src.startsWith('+', i) ? '+' : '';
    i += sign.length;
    out += sign === '-' ? text.replace(TRAILING_SPACE, '') : text;
    if (tag[0] === '{%') return undefined;
    if (tag[0] === '{#') {
      // A comment ends at the first `#}`; `-#}` also takes the whitespace after it.
      const close = src.indexOf('#}', i);
      if (close < 0) return undefined;
      stripLeading = close > i && src[close - 1] === '-';
      pos = close + 2;
      continue;
    }
    const expr = parseCallExpression(src, i);
    if (!expr) return undefined;
    if (expr.call === 'config') {
      if (NOT_SPACE.test(out)) return undefined;
    } else {
      const relation = relationOf(expr.call);
      if (relation === undefined) return undefined;
      out += relation;
    }
    stripLeading = expr.stripAfter;
    pos = expr.end;
  }
}

// Jinja strips with Python's str.rstrip() and re `\s`, whose whitespace is not JavaScript's: Python adds
// \x1c-\x1f and \x85, JavaScript adds \ufeff.
const PY_SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEADING_SPACE = new RegExp(`^[${PY_SPACE}]+`);
const TRAILING_SPACE = new RegExp(`[${PY_SPACE}]+$`);
const NOT_SPACE = new RegExp(`[^${PY_SPACE}]`);
const SPACE_RUN = new RegExp(`[${PY_SPACE}]*`, 'y');
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
// Strings without backslashes: their value is their text. One with escapes makes the call unreadable here.
const PLAIN_STRING = /'([^'\\]*)'|"([^"\\]*)"/y;
const INTEGER = /(?:[1-9][0-9]*|0)(?![0-9A-Za-z_.])/y;

interface CallExpression {
  call: DbtRelationCall | 'config';
  /** Index after the closing `}}` and, for `-}}`, the whitespace it takes. */
  end: number;
  stripAfter: boolean;
}

/** `ref(...)`, `source(...)` or `config(...)` and the closing `}}`, from `start` just after `{{` (and its sign). */
function parseCallExpression(src: string, start: number): CallExpression | undefined {
  let i = start;
  const sticky = (re: RegExp): RegExpExecArray | null => {
    re.lastIndex = i;
    const m = re.exec(src);
    if (m) i = re.lastIndex;
    return m;
  };
  const space = () => sticky(SPACE_RUN);
  const punct = (c: string) => {
    space();
    if (src[i] !== c) return false;
    i++;
    return true;
  };

  space();
  const fn = sticky(NAME)?.[0];
  if ((fn !== 'ref' && fn !== 'source' && fn !== 'config') || !punct('(')) return undefined;
  let call: DbtRelationCall | 'config';
  if (fn === 'config') {
    const close = skipBalanced(src, i - 1);
    if (close === undefined) return undefined;
    i = close;
    call = 'config';
  } else {
    const positional: string[] = [];
    const keywords = new Map<string, string>();
    while (!punct(')')) {
      space();
      const kw = sticky(NAME)?.[0];
      if (kw !== undefined && !punct('=')) return undefined;
      space();
      const str = sticky(PLAIN_STRING);
      const value = str ? (str[1] ?? str[2]!) : kw !== undefined ? sticky(INTEGER)?.[0] : undefined;
      if (value === undefined) return undefined;
      if (kw === undefined) {
        if (keywords.size > 0) return undefined;
        positional.push(value);
      } else {
        if (keywords.has(kw)) return undefined;
        keywords.set(kw, value);
      }
      if (!punct(',')) {
        if (!punct(')')) return undefined;
        break;
      }
    }
    if (fn === 'source') {
      const [source, table] = positional;
      if (positional.length !== 2 || keywords.size > 0 || !source || !table) return undefined;
      call = { kind: 'source', source, table };
    } else {
      const name = positional[positional.length - 1];
      const pkg = positional.length === 2 ? positional[0] : undefined;
      if (positional.length < 1 || positional.length > 2 || !name || pkg === '') return undefined;
      if ([...keywords.keys()].some((k) => k !== 'v' && k !== 'version') || keywords.size > 1) return undefined;
      const version = keywords.get('v') ?? keywords.get('version');
      call = {
        kind: 'ref',
        name,
        ...(pkg !== undefined ? { package: pkg } : {}),
        ...(version !== undefined ? { version } : {}),
      };
    }
  }
  space();
  if (src.startsWith('-}}', i)) return { call, end: i + 3, stripAfter: true };
  if (src.startsWith('}}', i)) return { call, end: i + 2, stripAfter: false };
  return undefined;
}

/** Index after the bracket that closes the one at `open`, skipping Jinja strings; undefined if unbalanced. */
function skipBalanced(src: string, open: number): number | undefined {
  const closers: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
  const expected: string[] = [];
  for (let i = open; i < src.length; i++) {
    const c = src[i]!;
    if (c === "'" || c === '"') {
      i++;
      while (i < src.length && src[i] !== c) i += src[i] === '\\' ? 2 : 1;
      if (i >= src.length) return undefined;
    } else if (closers[c] !== undefined) {
      expected.push(closers[c]);
    } else if (c === ')' || c === ']' || c === '}') {
      if (expected.pop() !== c) return undefined;
      if (expected.length === 0) return i + 1;
    }
  }
  return undefined;
}

const REF_TARGETS: ReadonlySet<string> = new Set(['model', 'seed', 'snapshot']);

/** A node's raw_code as SQL (renderRawCode), each ref and source as the entity id of the node dbt resolved it to. */
function renderedSql(
  node: ManifestNode,
  byUniqueId: Map<string, ManifestNode>,
  idParts: Map<string, string[]>,
  rootProject: string | undefined,
): string | undefined {
  if (node.resource_type === 'source' || (node.language ?? 'sql') !== 'sql' || !nonEmpty(node.raw_code)) return;
  // A project may override ref or source with its own macro, which renders whatever it likes.
  if ((node.depends_on?.macros ?? []).some((m) => /\.(ref|source)$/.test(m))) return;
  const upstream = (node.depends_on?.nodes ?? []).flatMap((u) => byUniqueId.get(u) ?? []);
  return nonEmpty(
    renderRawCode(node.raw_code!, (call) => {
      if (!declaresCall(node, call)) return undefined;
      const target = resolveCall(node, call, upstream, rootProject);
      const parts = target && idParts.get(target.unique_id);
      return parts?.map(sqlIdentifier).join('.');
    }),
  );
}

/** Whether the node's parsed refs/sources list the call (a stale or foreign manifest may not). */
function declaresCall(node: ManifestNode, call: DbtRelationCall): boolean {
  if (call.kind === 'source') return (node.sources ?? []).some((s) => s[0] === call.source && s[1] === call.table);
  return (node.refs ?? []).some((r) => {
    const ref = Array.isArray(r)
      ? { name: r[r.length - 1], package: r.length > 1 ? r[0] : null, version: null }
      : { name: r.name, package: r.package ?? null, version: r.version ?? null };
    return (
      ref.name === call.name &&
      (ref.package ?? undefined) === call.package &&
      (ref.version === null ? undefined : String(ref.version)) === call.version
    );
  });
}

/**
 * The node among the node's `depends_on` that dbt resolved the call to, by dbt's rules: a ref's package
 * when given, else the root project's node, the node's own package's, any; an unversioned ref to a
 * versioned model is its latest version. Undefined unless exactly one node qualifies.
 */
function resolveCall(
  node: ManifestNode,
  call: DbtRelationCall,
  upstream: ManifestNode[],
  rootProject: string | undefined,
): ManifestNode | undefined {
  const version = (n: ManifestNode) => (n.version === null || n.version === undefined ? undefined : String(n.version));
  const matches = upstream.filter((n) =>
    call.kind === 'source'
      ? n.resource_type === 'source' && n.source_name === call.source && n.name === call.table
      : REF_TARGETS.has(n.resource_type) &&
        n.name === call.name &&
        (call.package === undefined || n.package_name === call.package) &&
        (call.version !== undefined
          ? version(n) === call.version
          : version(n) === undefined || version(n) === String(n.latest_version)),
  );
  const byPackage = [rootProject, node.package_name].map((p) => matches.filter((n) => n.package_name === p));
  const chosen = byPackage.find((m) => m.length > 0) ?? matches;
  return chosen.length === 1 ? chosen[0] : undefined;
}

// Words the SQL readers treat as clause keywords where a table name goes: quoted, like any other name
// that is not a plain identifier, so the rendered reference reads back as the id.
const SQL_KEYWORDS: ReadonlySet<string> = new Set(
  (
    'all and any as asc by case connect cross desc distinct else end except fetch for from full group having in ' +
    'inner intersect into is join lateral left limit minus natural not null offset on only option or order outer ' +
    'qualify returning right rows select start table then union using values when where window with'
  ).split(' '),
);

function sqlIdentifier(part: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(part) && !SQL_KEYWORDS.has(part.toLowerCase())
    ? part
    : `"${part.replace(/"/g, '""')}"`;
}
