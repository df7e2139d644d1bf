// Reads a live PostgreSQL database into CatalogEntity records, from pg_catalog (information_schema hides view
// definitions and usage from non-owners). Read-only: it never writes, and runs each page in one
// REPEATABLE READ READ ONLY transaction so a page is one consistent snapshot.
import type { ClientBase } from 'pg';
import { CatalogEntity, type CatalogColumn, type CatalogEntityInput } from '../../domain/catalog';
import { formatIssues } from '../../domain/issues';

/** pg_class.relkind values that become entities; partitions (relispartition) are folded into their root. */
export const ENTITY_RELKINDS = ['r', 'p', 'v', 'm'] as const;

/** What a relation is in PostgreSQL: CatalogEntity's `kind` only says table or view, writes need the rest. */
export type PgRelationKind = 'table' | 'partitioned_table' | 'view' | 'materialized_view';

const RELKIND: Record<string, PgRelationKind> = {
  r: 'table',
  p: 'partitioned_table',
  v: 'view',
  m: 'materialized_view',
};

/** Schemas never read: the system catalogs, TOAST and temporary schemas. */
export const SYSTEM_SCHEMA_SQL = `n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%'`;

/** PostgreSQL facts about one entity that CatalogEntity has no field for. */
export interface PgRelation {
  id: string;
  oid: number;
  schema: string;
  name: string;
  relkind: PgRelationKind;
  /** Ids (`schema.name`) of every partition folded into this entity, at any depth, sorted. */
  partitions: string[];
}

/** One foreign-key constraint, all columns in key order. Single-column keys also set the column's `foreign_key`. */
export interface PgForeignKey {
  /** Entity id of the referencing table. */
  from: string;
  fromColumns: string[];
  /** Entity id of the referenced table (its partition root when it is a partition). */
  to: string;
  toColumns: string[];
  constraint: string;
}

/** A relation that was listed but could not become a valid entity (gone since, or no columns). */
export interface PgInvalidRelation {
  id: string;
  message: string;
}

export interface PgCatalogPage {
  /** current_database(): every entity's `database`. */
  database: string;
  entities: CatalogEntity[];
  /** Same order as `entities`. */
  relations: PgRelation[];
  foreignKeys: PgForeignKey[];
  invalid: PgInvalidRelation[];
}

export interface ListRelationsOptions {
  /** Schemas to read; default every non-system schema. A schema that does not exist lists nothing. */
  schemas?: string[];
  /** Keyset cursor: only ids after this one (in the listing order). */
  after?: string;
  /** At most this many ids. */
  limit?: number;
}

/**
 * Ids (`<schema>.<name>`, unquoted) of the tables, partitioned tables, views and materialized views in
 * `opts.schemas`, partitions excluded, in byte order of the id (COLLATE "C", so the order does not depend on
 * the database's collation). Page with `{ after: lastIdOfPreviousPage, limit }`.
 */
export async function listRelations(client: ClientBase, opts: ListRelationsOptions = {}): Promise<string[]> {
  const params: unknown[] = [ENTITY_RELKINDS];
  const where = [`c.relkind = ANY($1::"char"[])`, 'NOT c.relispartition', SYSTEM_SCHEMA_SQL];
  if (opts.schemas) {
    params.push(opts.schemas);
    where.push(`n.nspname = ANY($${params.length}::text[])`);
  }
  if (opts.after !== undefined) {
    params.push(opts.after);
    where.push(`(n.nspname || '.' || c.relname) COLLATE "C" > $${params.length}::text COLLATE "C"`);
  }
  let limit = '';
  if (opts.limit !== undefined) {
    params.push(opts.limit);
    limit = `LIMIT $${params.length}`;
  }
  const { rows } = await client.query<{ id: string }>(
    `SELECT n.nspname || '.' || c.relname AS id
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE ${where.join(' AND ')}
      ORDER BY (n.nspname || '.' || c.relname) COLLATE "C" ${limit}`,
    params,
  );
  return rows.map((r) => r.id);
}

interface RelRow {
  oid: number;
  id: string;
  schema: string;
  name: string;
  relkind: string;
  description: string | null;
  sql: string | null;
  partitions: string[];
}
interface ColRow {
  attrelid: number;
  name: string;
  type: string;
  notnull: boolean;
  description: string | null;
  pk: boolean;
}
interface FkRow {
  conrelid: number;
  constraint: string;
  from_columns: string[];
  to_id: string;
  to_columns: string[];
}
interface UpRow {
  view_oid: number;
  upstream: string;
}

/**
 * The entities for `ids` (as `listRelations` gives them), in the order given. An id that names no listed kind
 * of relation any more, or a relation that fails CatalogEntity (a table with no columns), is in `invalid`.
 */
export async function readRelations(client: ClientBase, ids: string[]): Promise<PgCatalogPage> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const page = await readInSnapshot(client, ids);
    await client.query('COMMIT');
    return page;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

async function readInSnapshot(client: ClientBase, ids: string[]): Promise<PgCatalogPage> {
  const database = (await client.query<{ db: string }>('SELECT current_database() AS db')).rows[0]?.db as string;
  const unique = [...new Set(ids)];
  if (unique.length === 0) return { database, entities: [], relations: [], foreignKeys: [], invalid: [] };

  const rels = (
    await client.query<RelRow>(
      `SELECT c.oid::int8::float8 AS oid, n.nspname || '.' || c.relname AS id, n.nspname AS schema,
              c.relname AS name, c.relkind::text AS relkind,
              pg_catalog.obj_description(c.oid, 'pg_class') AS description,
              CASE WHEN c.relkind IN ('v', 'm') THEN pg_catalog.pg_get_viewdef(c.oid, true) END AS sql,
              ARRAY(SELECT pn.nspname || '.' || pc.relname
                      FROM pg_catalog.pg_partition_tree(c.oid) t
                      JOIN pg_catalog.pg_class pc ON pc.oid = t.relid
                      JOIN pg_catalog.pg_namespace pn ON pn.oid = pc.relnamespace
                     WHERE t.relid <> c.oid
                     ORDER BY (pn.nspname || '.' || pc.relname) COLLATE "C") AS partitions
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE (n.nspname || '.' || c.relname) = ANY($1::text[])
          AND c.relkind = ANY($2::"char"[]) AND NOT c.relispartition AND ${SYSTEM_SCHEMA_SQL}`,
      [unique, ENTITY_RELKINDS],
    )
  ).rows;
  const oids = rels.map((r) => r.oid);

  const cols = (
    await client.query<ColRow>(
      `SELECT a.attrelid::int8::float8 AS attrelid, a.attname AS name,
              pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
              pg_catalog.col_description(a.attrelid, a.attnum) AS description,
              EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k
                       WHERE k.conrelid = a.attrelid AND k.contype = 'p' AND a.attnum = ANY(k.conkey)) AS pk
         FROM pg_catalog.pg_attribute a
        WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attrelid, a.attnum`,
      [oids],
    )
  ).rows;

  // conparentid = 0: a key on (or to) a partitioned table is also cloned per partition; keep the original.
  // A referenced partition is named by its partition root, since partitions are not entities.
  const fks = (
    await client.query<FkRow>(
      `SELECT k.conrelid::int8::float8 AS conrelid, k.conname AS constraint,
              ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(attnum, i)
                      JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.attnum
                     ORDER BY u.i) AS from_columns,
              rn.nspname || '.' || rc.relname AS to_id,
              ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(attnum, i)
                      JOIN pg_catalog.pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.attnum
                     ORDER BY u.i) AS to_columns
         FROM pg_catalog.pg_constraint k
         JOIN pg_catalog.pg_class rc ON rc.oid = COALESCE(pg_catalog.pg_partition_root(k.confrelid), k.confrelid)
         JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
        WHERE k.contype = 'f' AND k.conparentid = 0 AND k.conrelid = ANY($1::oid[])
        ORDER BY k.conrelid, k.conname COLLATE "C"`,
      [oids],
    )
  ).rows;

  // What a view or materialized view reads: the relations its rewrite rule depends on (itself excluded),
  // partitions named by their root, system catalogs left out.
  const ups = (
    await client.query<UpRow>(
      `SELECT * FROM (SELECT DISTINCT r.ev_class::int8::float8 AS view_oid, un.nspname || '.' || uc.relname AS upstream
         FROM pg_catalog.pg_rewrite r
         JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.objid = r.oid
                                    AND d.refclassid = 'pg_catalog.pg_class'::regclass
         JOIN pg_catalog.pg_class dc ON dc.oid = d.refobjid
         JOIN pg_catalog.pg_class uc ON uc.oid = COALESCE(pg_catalog.pg_partition_root(dc.oid), dc.oid)
         JOIN pg_catalog.pg_namespace un ON un.oid = uc.relnamespace
        WHERE r.ev_class = ANY($1::oid[]) AND d.refobjid <> r.ev_class
          AND dc.relkind IN ('r', 'p', 'v', 'm', 'f')
          AND un.nspname NOT IN ('pg_catalog', 'information_schema')) s
        ORDER BY view_oid, upstream COLLATE "C"`,
      [oids],
    )
  ).rows;

  const colsBy = groupBy(cols, (c) => c.attrelid);
  const fksBy = groupBy(fks, (f) => f.conrelid);
  const upsBy = groupBy(ups, (u) => u.view_oid);
  const relById = new Map(rels.map((r) => [r.id, r]));

  const page: PgCatalogPage = { database, entities: [], relations: [], foreignKeys: [], invalid: [] };
  for (const id of unique) {
    const rel = relById.get(id);
    if (!rel) {
      page.invalid.push({
        id,
        message: `no table or view ${id} in database ${database} (dropped or renamed since it was listed?)`,
      });
      continue;
    }
    const relFks = (fksBy.get(rel.oid) ?? []).map<PgForeignKey>((f) => ({
      from: rel.id,
      fromColumns: f.from_columns,
      to: f.to_id,
      toColumns: f.to_columns,
      constraint: f.constraint,
    }));
    const singleFk = new Map<string, string>();
    for (const fk of relFks) {
      const [from] = fk.fromColumns;
      const [to] = fk.toColumns;
      if (fk.fromColumns.length === 1 && from !== undefined && to !== undefined && !singleFk.has(from))
        singleFk.set(from, `${fk.to}.${to}`);
    }
    const columns = (colsBy.get(rel.oid) ?? []).map<CatalogColumn>((c) => {
      const fk = singleFk.get(c.name);
      return {
        name: c.name,
        type: c.type,
        nullable: !c.notnull,
        primary_key: c.pk,
        ...(fk !== undefined ? { foreign_key: fk } : {}),
        ...(c.description !== null ? { description: c.description, description_source: 'human' as const } : {}),
        tags: [],
      };
    });
    const relkind = RELKIND[rel.relkind] as PgRelationKind;
    const isView = relkind === 'view' || relkind === 'materialized_view';
    const input: CatalogEntityInput = {
      id: rel.id,
      database,
      schema: rel.schema,
      name: rel.name,
      kind: isView ? 'view' : 'table',
      // Every comment already in the database was written by someone other than this reader.
      ...(rel.description !== null ? { description: rel.description, description_source: 'human' as const } : {}),
      columns,
      upstream: (upsBy.get(rel.oid) ?? []).map((u) => u.upstream),
      ...(rel.sql !== null ? { sql: rel.sql } : {}),
    };
    const parsed = CatalogEntity.safeParse(input);
    if (!parsed.success) {
      page.invalid.push({
        id,
        message: `${id}: ${formatIssues(parsed.error, { root: '(entity)' })}`,
      });
      continue;
    }
    page.entities.push(parsed.data);
    page.relations.push({
      id: rel.id,
      oid: rel.oid,
      schema: rel.schema,
      name: rel.name,
      relkind,
      partitions: rel.partitions,
    });
    page.foreignKeys.push(...relFks);
  }
  return page;
}

export interface ReadCatalogOptions {
  schemas?: string[];
  /** Relations read per transaction; the whole catalog is still returned at once. */
  pageSize?: number;
}

/** Every entity in `opts.schemas` (default: all non-system schemas), read page by page, in listing order. */
export async function readPostgresCatalog(client: ClientBase, opts: ReadCatalogOptions = {}): Promise<PgCatalogPage> {
  const pageSize = opts.pageSize ?? 500;
  let out: PgCatalogPage | undefined;
  let after: string | undefined;
  for (;;) {
    const ids = await listRelations(client, {
      ...(opts.schemas ? { schemas: opts.schemas } : {}),
      ...(after !== undefined ? { after } : {}),
      limit: pageSize,
    });
    const page = await readRelations(client, ids);
    if (!out) out = page;
    else {
      out.entities.push(...page.entities);
      out.relations.push(...page.relations);
      out.foreignKeys.push(...page.foreignKeys);
      out.invalid.push(...page.invalid);
    }
    if (ids.length < pageSize) return out;
    after = ids[ids.length - 1];
  }
}

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const m = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = m.get(k);
    if (list) list.push(item);
    else m.set(k, [item]);
  }
  return m;
}
