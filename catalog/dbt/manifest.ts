// Reads a dbt project's manifest.json (and, when present, catalog.json) into ARGUS catalog entities,
// with, per entity, where its YAML entry lives so a repair can be written back there.
//
// Entity ids are `<schema>.<identifier>`: the relation as the warehouse names it, without the database
// (e.g. model.jaffle_shop.orders → `main.orders`). They are stable across runs, readable, match the
// `schema.table` ids of the file catalog, and let the lineage checker resolve the relations compiled SQL
// reads (`"jaffle_shop"."main"."orders"` resolves by suffix). When two entities of one project share a
// schema and identifier (different databases), both get `<database>.<schema>.<identifier>`.
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import {
  CatalogEntity,
  PiiCategory,
  UNKNOWN_COLUMN_TYPE,
  type CatalogEntityInput,
  type PiiTag,
} from '../../domain/catalog';
import { argusYamlPathFor, type DbtYamlNode } from './yaml-edit';

/**
 * Column type recorded when catalog.json is absent or does not list the column. CatalogColumn requires
 * a non-empty type string; the PII classifier's type families already treat `unknown` as "could hold
 * anything" (it constrains nothing).
 */

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
}

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
}

// The parts of manifest.json and catalog.json this reader uses; both files carry much more.
interface ManifestColumn {
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
  depends_on?: { nodes?: string[] };
  compiled_code?: string;
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
  metadata?: { project_name?: string };
  nodes: Record<string, ManifestNode>;
  sources: Record<string, ManifestNode>;
}
interface CatalogJson {
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
  const catalog = await readJson<CatalogJson>(path.resolve(projectDir, options.catalog ?? 'target/catalog.json'));
  const piiTag = options.piiTag ?? 'pii';
  const categoryKey = options.piiCategoryKey ?? 'pii_category';
  const rootProject = manifest.metadata?.project_name;

  const nodes = [
    ...Object.values(manifest.nodes).filter((n) => ENTITY_TYPES.has(n.resource_type)),
    ...Object.values(manifest.sources ?? {}),
  ].filter((n) => n.config?.enabled !== false);
  const tests = Object.values(manifest.nodes).filter((n) => n.resource_type === 'test');

  const idOf = assignIds(nodes);
  const facts = testFacts(tests, idOf);
  const entities: CatalogEntity[] = [];
  const locations = new Map<string, DbtEntityLocation>();
  const skipped: { uniqueId: string; reason: string }[] = [];

  for (const node of nodes) {
    const id = idOf.get(node.unique_id)!;
    const resourceType = node.resource_type as DbtResourceType;
    const typed = resourceType === 'source' ? catalog?.sources?.[node.unique_id] : catalog?.nodes?.[node.unique_id];
    const declared = Object.values(node.columns ?? {});
    const byLower = new Map(declared.map((c) => [c.name.toLowerCase(), c]));

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
        reason: 'no columns known: none declared in YAML and no catalog.json entry (run `dbt docs generate`)',
      });
      continue;
    }
    const typeOf = new Map(Object.values(typed?.columns ?? {}).map((c) => [c.name.toLowerCase(), c.type] as const));
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
      ...(nonEmpty(node.compiled_code) ? { sql: node.compiled_code } : {}),
    };
    const parsed = CatalogEntity.safeParse(input);
    if (!parsed.success) {
      skipped.push({ uniqueId: node.unique_id, reason: parsed.error.issues.map((i) => i.message).join('; ') });
      continue;
    }
    entities.push(parsed.data);
    locations.set(id, locate(node, rootProject));
  }
  return { entities, locations, idOf, skipped, typesKnown: catalog !== undefined };
}

function nonEmpty(s: string | undefined): string | undefined {
  return s !== undefined && s.trim() !== '' ? s : undefined;
}

function relationName(node: ManifestNode): string {
  return node.resource_type === 'source' ? (node.identifier ?? node.name) : (node.alias ?? node.name);
}

function assignIds(nodes: ManifestNode[]): Map<string, string> {
  const short = (n: ManifestNode) => `${n.schema}.${relationName(n)}`;
  const count = new Map<string, number>();
  for (const n of nodes) count.set(short(n).toLowerCase(), (count.get(short(n).toLowerCase()) ?? 0) + 1);
  return new Map(
    nodes.map((n) => {
      const s = short(n);
      return [n.unique_id, (count.get(s.toLowerCase()) ?? 0) > 1 && n.database ? `${n.database}.${s}` : s];
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

function locate(node: ManifestNode, rootProject: string | undefined): DbtEntityLocation {
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
  };
}
