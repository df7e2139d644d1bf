// A live PostgreSQL database as an ARGUS catalog: read from pg_catalog (introspect.ts), descriptions written with
// COMMENT ON, PII tags into a table ARGUS owns. Every batch is one transaction; the write-ahead hook runs inside it,
// before COMMIT, so either all of a batch lands (and its intent is stored) or none of it.
import { createHash } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import type { CatalogEntity } from '../../domain/catalog';
import type { CatalogRef } from '../../domain/sweep';
import type { ProposalChange } from '../../domain/proposal';
import { stableJson } from '../../domain/digest';
import {
  CatalogError,
  type CatalogAdapter,
  type CatalogIdentity,
  type CatalogSnapshot,
  type RepairOutcome,
  type RepairRequest,
  type RevertOutcome,
  type RevertRequest,
} from '../adapter';
import {
  ENTITY_RELKINDS,
  SYSTEM_SCHEMA_SQL,
  listRelations,
  readRelations,
  type PgRelation,
  type PgRelationKind,
} from './introspect';

type PgRef = Extract<CatalogRef, { kind: 'postgres' }>;

/** ARGUS's record of the comments it wrote: a comment equal to its record is ARGUS's, any other is a person's. */
const COMMENTS_TABLE = 'argus.comments_written';
/** Other tools' markers (PostGraphile's `@name`, `@omit`…): such a comment is a person's text, always. */
const TOOL_MARKER = /^\s*@[A-Za-z]/m;

/** A pg error in a person's words: what happened, and what to do about it. */
function explain(err: unknown, where: string): CatalogError {
  const e = err as { code?: string; message?: string; errno?: string };
  const code = e.code ?? e.errno ?? '';
  const msg = e.message ?? String(err);
  const why =
    code === 'ECONNREFUSED'
      ? 'nothing accepts connections there: is the server running, and are the host and port in the connection string right?'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'its host name is unknown: check the connection string'
        : code === '28P01' || code === '28000'
          ? `PostgreSQL refused the credentials (${code}): check the user and password in the connection string`
          : code === '3D000'
            ? `the database does not exist (${code}): check the connection string's database name`
            : `${msg}${code ? ` (${code})` : ''}`;
  return new CatalogError(`PostgreSQL catalog ${where}: ${why}`);
}

/** `schema.name` for SQL; COMMENT ON takes no bind parameters, so names and texts are quoted by the client's escapes. */
const qualified = (c: PoolClient, schema: string, name: string) =>
  `${c.escapeIdentifier(schema)}.${c.escapeIdentifier(name)}`;

/** Most rows a sample reads: enough for judgment/pii/value-patterns.ts, few enough to be read in a blink and forgotten. */
const SAMPLE_MAX_ROWS = 100;
/** A sample is evidence, not the sweep's work: a heavy view or a lock held by a migration makes it give up. */
const SAMPLE_TIMEOUT = '5s';
/** Longer values come back cut: no pattern ARGUS looks for is half as long, and 100 rows stay small. */
const SAMPLE_MAX_CHARS = 512;

const KEYWORD: Record<PgRelationKind, string> = {
  table: 'TABLE',
  partitioned_table: 'TABLE',
  view: 'VIEW',
  materialized_view: 'MATERIALIZED VIEW',
};

interface CommentState {
  description: string | null;
  description_source: 'human' | 'argus' | null;
}

export class PostgresCatalogAdapter implements CatalogAdapter {
  readonly identity: CatalogIdentity;
  private readonly pool: Pool;
  private readonly where: string;
  private readonly tagTable: string;
  private relations = new Map<string, PgRelation>();
  private snap: { at: number; value: CatalogSnapshot } | undefined;
  private ready: Promise<void> | undefined;

  constructor(
    private readonly ref: PgRef,
    env: NodeJS.ProcessEnv,
  ) {
    const url = env[ref.connectionEnv];
    if (!url)
      throw new CatalogError(
        `the PostgreSQL catalog needs the connection string in the worker's environment variable ${ref.connectionEnv}, ` +
          'which is not set on this worker (e.g. postgres://user:password@host:5432/warehouse)',
      );
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new CatalogError(`${ref.connectionEnv} does not hold a connection URL (postgres://user@host:port/db)`);
    }
    // Identity and label never carry the password (they go to the ledger, the audit log and Temporal).
    const db = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres';
    this.where = `${decodeURIComponent(u.username) || '(default user)'}@${u.hostname || 'localhost'}:${u.port || 5432}/${db}`;
    const schemas = ref.schemas ? [...ref.schemas].sort().join(',') : '*';
    this.identity = {
      kind: 'postgres',
      key: `postgres://${u.hostname || 'localhost'}:${u.port || 5432}/${db}?schemas=${schemas}`,
      label: `${this.where} (schemas ${ref.schemas?.join(', ') ?? 'all'})`,
      memoryKey: `postgres://${u.hostname || 'localhost'}:${u.port || 5432}/${db}`,
      scope: `schemas=${schemas}`,
    };
    this.tagTable = ref.tagTable;
    this.pool = new Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 10_000 });
    this.pool.on('error', () => undefined); // an idle client's error: the next query reports it
  }

  private async client(): Promise<PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw explain(err, this.where);
    }
  }

  private async withClient<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await this.client();
    try {
      return await fn(c);
    } finally {
      c.release();
    }
  }

  /** ARGUS's own schema and tables, created when missing (idempotent). */
  private ensureTables(): Promise<void> {
    const [tagSchema] = this.tagTable.split('.');
    this.ready ??= this.withClient(async (c) => {
      await c.query(`CREATE SCHEMA IF NOT EXISTS argus`);
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${c.escapeIdentifier(tagSchema!)}`);
      await c.query(`CREATE TABLE IF NOT EXISTS ${COMMENTS_TABLE} (
        schema_name text NOT NULL, relation_name text NOT NULL, column_name text NOT NULL DEFAULT '',
        comment text NOT NULL, proposal_id text NOT NULL, written_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (schema_name, relation_name, column_name))`);
      await c.query(`CREATE TABLE IF NOT EXISTS ${this.tagTable} (
        schema_name text NOT NULL, table_name text NOT NULL, column_name text NOT NULL, tag text NOT NULL,
        category text NOT NULL, confidence real NOT NULL, explanation text NOT NULL,
        proposal_id text NOT NULL, sweep_id text, written_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (schema_name, table_name, column_name, tag))`);
    }).catch((err: unknown) => {
      this.ready = undefined;
      throw err instanceof CatalogError ? err : explain(err, this.where);
    });
    return this.ready;
  }

  async snapshot(): Promise<CatalogSnapshot> {
    // Pages are slices of this list: keep one list for a while, so the pages of a sweep line up.
    if (this.snap && Date.now() - this.snap.at < 60_000) return this.snap.value;
    const value = await this.withClient(async (c) => {
      try {
        if (this.ref.schemas) {
          const found = await c.query<{ nspname: string }>(
            'SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = ANY($1::text[])',
            [this.ref.schemas],
          );
          const missing = this.ref.schemas.filter((s) => !found.rows.some((r) => r.nspname === s));
          if (missing.length)
            throw new CatalogError(`PostgreSQL catalog ${this.where}: schema ${missing.join(', ')} does not exist`);
        }
        const name = (await c.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db;
        const ids = await listRelations(c, this.ref.schemas ? { schemas: this.ref.schemas } : {});
        return { name, ids };
      } catch (err) {
        throw err instanceof CatalogError ? err : explain(err, this.where);
      }
    });
    this.snap = { at: Date.now(), value };
    return value;
  }

  async getEntities(ids: string[]): Promise<{ entities: CatalogEntity[]; invalid: { id: string; message: string }[] }> {
    await this.ensureTables();
    return this.withClient(async (c) => {
      const page = await readRelations(c, ids).catch((err: unknown) => {
        throw explain(err, this.where);
      });
      page.relations.forEach((r) => this.relations.set(r.id, r));
      // Comments ARGUS wrote (and nobody changed since) are ARGUS's; every other comment is a person's.
      const mine = await this.recordedComments(c, page.relations);
      for (const e of page.entities) {
        const rel = this.relations.get(e.id)!;
        const own = (column: string, text: string | undefined) =>
          text !== undefined &&
          !TOOL_MARKER.test(text) &&
          mine.get(`${rel.schema}\u0000${rel.name}\u0000${column}`) === text;
        if (e.description && own('', e.description)) e.description_source = 'argus';
        for (const col of e.columns)
          if (col.description && own(col.name, col.description)) col.description_source = 'argus';
      }
      await this.addTags(c, page.relations, page.entities);
      return { entities: page.entities, invalid: page.invalid };
    });
  }

  /**
   * Each entity's own fingerprint, in one statement (one round trip whatever the number of ids): per relation, a
   * SHA-256 (hex) of what the server holds about it and what ARGUS keeps beside it — its kind; its live columns
   * (number, name, type as format_type shows it, not null); its primary and foreign keys (columns by name, the
   * referenced relation by its partition root's name); its comments and its columns' (pg_description); ARGUS's tags
   * and its record of the comments it wrote (whose a comment is); a view's definition. Ids map to relations as
   * `listRelations`/`readRelations` map them; an id naming no such relation is left out.
   */
  async fingerprints(ids: readonly string[]): Promise<Map<string, string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    // ARGUS's tables are created when missing (as every read does), so the statement can name them.
    await this.ensureTables();
    const sql = `
      SELECT r.id, encode(sha256(convert_to(r.facts::text, 'UTF8')), 'hex') AS fp
        FROM (
          SELECT n.nspname || '.' || c.relname AS id, c.oid,
                 jsonb_build_array(
                   c.relkind::text,
                   (SELECT COALESCE(jsonb_agg(jsonb_build_array(a.attnum, a.attname::text,
                             pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull) ORDER BY a.attnum), '[]')
                      FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
                   (SELECT COALESCE(jsonb_agg(jsonb_build_array(k.contype::text, k.conname::text,
                             ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(attnum, i)
                                     JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.attnum
                                    ORDER BY u.i),
                             (SELECT rn.nspname || '.' || rc.relname FROM pg_catalog.pg_class rc
                                JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
                               WHERE rc.oid = COALESCE(pg_catalog.pg_partition_root(k.confrelid), k.confrelid)),
                             ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(attnum, i)
                                     JOIN pg_catalog.pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.attnum
                                    ORDER BY u.i))
                             ORDER BY k.contype, k.conname COLLATE "C"), '[]')
                      FROM pg_catalog.pg_constraint k
                     WHERE k.conrelid = c.oid AND k.contype IN ('p', 'f')),
                   (SELECT COALESCE(jsonb_agg(jsonb_build_array(d.objsubid, a.attname::text, d.description)
                             ORDER BY d.objsubid), '[]')
                      FROM pg_catalog.pg_description d
                      LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = d.objoid AND a.attnum = d.objsubid
                     WHERE d.objoid = c.oid AND d.classoid = 'pg_catalog.pg_class'::regclass),
                   (SELECT COALESCE(jsonb_agg(jsonb_build_array(t.column_name, t.tag, t.category, t.confidence,
                             t.explanation, t.proposal_id) ORDER BY t.column_name COLLATE "C", t.tag COLLATE "C"), '[]')
                      FROM ${this.tagTable} t
                     WHERE t.schema_name = n.nspname::text AND t.table_name = c.relname::text),
                   (SELECT COALESCE(jsonb_agg(jsonb_build_array(w.column_name, w.comment)
                             ORDER BY w.column_name COLLATE "C"), '[]')
                      FROM ${COMMENTS_TABLE} w
                     WHERE w.schema_name = n.nspname::text AND w.relation_name = c.relname::text),
                   CASE WHEN c.relkind IN ('v', 'm') THEN pg_catalog.pg_get_viewdef(c.oid, true) END
                 ) AS facts
            FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
           WHERE (n.nspname || '.' || c.relname) = ANY($1::text[])
             AND c.relkind = ANY($2::"char"[]) AND NOT c.relispartition AND ${SYSTEM_SCHEMA_SQL}
        ) r
       ORDER BY r.id, r.oid`;
    const run = () => this.withClient((c) => c.query<{ id: string; fp: string }>(sql, [unique, ENTITY_RELKINDS]));
    let rows: { id: string; fp: string }[];
    try {
      rows = (await run()).rows;
    } catch (err) {
      // ARGUS's tables dropped since they were made (by a person, or an undo of the schema): make them, once more.
      if ((err as { code?: string }).code !== '42P01') throw explain(err, this.where);
      this.ready = undefined;
      await this.ensureTables();
      rows = (
        await run().catch((e: unknown) => {
          throw explain(e, this.where);
        })
      ).rows;
    }
    const out = new Map<string, string>();
    for (const r of rows) {
      // Two relations whose names join to one id (a schema name with a dot): both count, in oid order.
      const seen = out.get(r.id);
      out.set(r.id, seen === undefined ? r.fp : createHash('sha256').update(`${seen}\u0000${r.fp}`).digest('hex'));
    }
    return out;
  }

  private async recordedComments(c: PoolClient, rels: PgRelation[]): Promise<Map<string, string>> {
    if (rels.length === 0) return new Map();
    const rows = (
      await c.query<{ schema_name: string; relation_name: string; column_name: string; comment: string }>(
        `SELECT schema_name, relation_name, column_name, comment FROM ${COMMENTS_TABLE}
          WHERE (schema_name, relation_name) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
        [rels.map((r) => r.schema), rels.map((r) => r.name)],
      )
    ).rows;
    return new Map(rows.map((r) => [`${r.schema_name}\u0000${r.relation_name}\u0000${r.column_name}`, r.comment]));
  }

  /** Tags ARGUS keeps for these relations' columns, as the catalog's tags (source argus): one query a page. */
  private async addTags(c: PoolClient, rels: PgRelation[], entities: CatalogEntity[]): Promise<void> {
    if (rels.length === 0) return;
    const rows = (
      await c.query<{
        schema_name: string;
        table_name: string;
        column_name: string;
        category: string;
        confidence: number;
        explanation: string;
        proposal_id: string;
      }>(
        `SELECT schema_name, table_name, column_name, category, confidence, explanation, proposal_id FROM ${this.tagTable}
          WHERE tag = 'pii' AND (schema_name, table_name) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
        [rels.map((r) => r.schema), rels.map((r) => r.name)],
      )
    ).rows;
    const byRel = new Map(
      rels.map((r, i) => [`${r.schema}\u0000${r.name}`, entities.find((e) => e.id === r.id) ?? entities[i]]),
    );
    for (const r of rows) {
      const col = byRel.get(`${r.schema_name}\u0000${r.table_name}`)?.columns.find((x) => x.name === r.column_name);
      if (col && !col.tags.some((t) => t.kind === 'pii'))
        col.tags.push({
          kind: 'pii',
          category: r.category as never,
          confidence: Math.round(r.confidence * 100) / 100,
          explanation: r.explanation,
          source: 'argus',
          proposalId: r.proposal_id,
        });
    }
  }

  /**
   * One batch as one transaction: ARGUS's tables ready, the relations it touches read first (the reader runs a
   * snapshot transaction of its own), then `fn` between BEGIN and COMMIT; any throw rolls all of it back.
   */
  private async inTransaction<T>(ids: string[], fn: (c: PoolClient) => Promise<T>): Promise<T> {
    await this.ensureTables();
    return this.withClient(async (c) => {
      await this.relationsFor(c, ids);
      await c.query('BEGIN');
      try {
        const result = await fn(c);
        await c.query('COMMIT');
        return result;
      } catch (err) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  /** The relations a batch touches, read before its transaction (the reader runs a snapshot transaction of its own). */
  private async relationsFor(c: PoolClient, ids: string[]): Promise<void> {
    const missing = [...new Set(ids)].filter((id) => !this.relations.has(id));
    if (missing.length === 0) return;
    const page = await readRelations(c, missing).catch((err: unknown) => {
      throw explain(err, this.where);
    });
    page.relations.forEach((r) => this.relations.set(r.id, r));
  }

  /** The comment on a relation or column now, and whose it is. */
  private async commentState(c: PoolClient, rel: PgRelation, column: string): Promise<CommentState> {
    const now = (
      await c.query<{ d: string | null }>(
        column
          ? `SELECT pg_catalog.col_description($1::oid, a.attnum) AS d FROM pg_catalog.pg_attribute a
              WHERE a.attrelid = $1::oid AND a.attname = $2 AND NOT a.attisdropped`
          : `SELECT pg_catalog.obj_description($1::oid, 'pg_class') AS d`,
        column ? [rel.oid, column] : [rel.oid],
      )
    ).rows[0];
    if (!now) throw new ColumnGone(column);
    const d = now.d;
    if (d === null || d === '') return { description: null, description_source: null };
    const rec = (
      await c.query<{ comment: string }>(
        `SELECT comment FROM ${COMMENTS_TABLE} WHERE schema_name = $1 AND relation_name = $2 AND column_name = $3`,
        [rel.schema, rel.name, column],
      )
    ).rows[0];
    return { description: d, description_source: rec?.comment === d && !TOOL_MARKER.test(d) ? 'argus' : 'human' };
  }

  private async setComment(c: PoolClient, rel: PgRelation, column: string, text: string | null, proposalId: string) {
    const target = column
      ? `COLUMN ${qualified(c, rel.schema, rel.name)}.${c.escapeIdentifier(column)}`
      : `${KEYWORD[rel.relkind]} ${qualified(c, rel.schema, rel.name)}`;
    await c.query(`COMMENT ON ${target} IS ${text === null ? 'NULL' : c.escapeLiteral(text)}`);
    if (text === null)
      await c.query(
        `DELETE FROM ${COMMENTS_TABLE} WHERE schema_name = $1 AND relation_name = $2 AND column_name = $3`,
        [rel.schema, rel.name, column],
      );
    else
      await c.query(
        `INSERT INTO ${COMMENTS_TABLE} (schema_name, relation_name, column_name, comment, proposal_id)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (schema_name, relation_name, column_name) DO UPDATE SET comment = EXCLUDED.comment,
           proposal_id = EXCLUDED.proposal_id, written_at = now()`,
        [rel.schema, rel.name, column, text, proposalId],
      );
  }

  private async currentValue(c: PoolClient, rel: PgRelation, change: ProposalChange): Promise<unknown> {
    if (change.kind === 'description' || change.kind === 'description_removal')
      return this.commentState(c, rel, change.target === 'table' ? '' : (change.column ?? ''));
    if (change.kind === 'pii_tag') {
      const row = (
        await c.query<{ category: string; proposal_id: string }>(
          `SELECT category, proposal_id FROM ${this.tagTable}
            WHERE schema_name = $1 AND table_name = $2 AND column_name = $3 AND tag = 'pii'`,
          [rel.schema, rel.name, change.column],
        )
      ).rows[0];
      return row ? { tag: 'pii', category: row.category, proposalId: row.proposal_id } : null;
    }
    return null;
  }

  /** Why a statement failed, for a person: the owner to ask for, a relation dropped, or the server's words. */
  private async failure(c: PoolClient, rel: PgRelation, err: unknown): Promise<string> {
    const e = err as { code?: string; message?: string };
    if (e instanceof ColumnGone) return `column ${e.column} no longer exists`;
    if (e.code === '42501') {
      const owner = (
        await c
          .query<{ o: string }>(
            'SELECT pg_catalog.pg_get_userbyid(relowner) AS o FROM pg_catalog.pg_class WHERE oid = $1',
            [rel.oid],
          )
          .catch(() => ({ rows: [] as { o: string }[] }))
      ).rows[0]?.o;
      return `${e.message} (42501): COMMENT ON needs the owner of ${rel.id}${owner ? ` (role ${owner})` : ''}; run the worker as that role or a member of it`;
    }
    if (e.code === '42P01' || e.code === '42703') return `${rel.id} changed during the sweep: ${e.message} (${e.code})`;
    return `${e.message ?? String(err)}${e.code ? ` (${e.code})` : ''}`;
  }

  async applyRepairs(
    batch: RepairRequest[],
    opts: {
      overwriteHumanText: boolean;
      sweepId?: string;
      beforeCommit?: (outcomes: RepairOutcome[]) => Promise<void>;
    },
  ): Promise<RepairOutcome[]> {
    return this.inTransaction(
      batch.map((r) => r.entityId),
      async (c) => {
        const outcomes: RepairOutcome[] = [];
        for (const r of batch) {
          const rel = this.relations.get(r.entityId);
          if (!rel) {
            outcomes.push({ proposalId: r.proposalId, status: 'conflict', note: 'relation no longer in the database' });
            continue;
          }
          // Each repair in a savepoint: one refused statement (not the owner, a column dropped) fails that
          // repair only, and the batch says exactly what landed.
          await c.query('SAVEPOINT repair');
          try {
            outcomes.push(await this.applyOne(c, rel, r, opts.overwriteHumanText, opts.sweepId ?? null));
            await c.query('RELEASE SAVEPOINT repair');
          } catch (err) {
            await c.query('ROLLBACK TO SAVEPOINT repair');
            // Gone since it was read (dropped or renamed during the sweep): like an entity no longer in a file
            // catalog, a conflict; anything else the server refused is a failure, and the sweep says so.
            const code = (err as { code?: string }).code;
            const gone = err instanceof ColumnGone || code === '42P01' || code === '42703';
            outcomes.push({
              proposalId: r.proposalId,
              status: gone ? 'conflict' : 'failed',
              note: await this.failure(c, rel, err),
            });
          }
        }
        // The write-ahead point: inside the transaction, before COMMIT.
        await opts.beforeCommit?.(outcomes);
        return outcomes;
      },
    );
  }

  private async applyOne(
    c: PoolClient,
    rel: PgRelation,
    r: RepairRequest,
    overwrite: boolean,
    sweepId: string | null,
  ): Promise<RepairOutcome> {
    const change = r.change;
    const id = r.proposalId;
    const now = await this.currentValue(c, rel, change);
    if (r.landed && stableJson(now) === stableJson(r.landed.after))
      return { proposalId: id, status: 'written', ...r.landed, landedEarlier: true };
    switch (change.kind) {
      case 'description': {
        const column = change.target === 'table' ? '' : (change.column ?? '');
        const state = now as CommentState;
        const after: CommentState = { description: change.text, description_source: 'argus' };
        if (state.description === change.text && state.description_source === 'argus')
          return { proposalId: id, status: 'already', note: 'comment already in the database' };
        if (state.description !== null && state.description_source !== 'argus' && !overwrite)
          return {
            proposalId: id,
            status: 'kept_human',
            note: 'a person wrote this comment; not overwritten (overwriteHumanText is off)',
          };
        await this.setComment(c, rel, column, change.text, id);
        return { proposalId: id, status: 'written', before: state, after, landedEarlier: false };
      }
      case 'description_removal': {
        const column = change.target === 'table' ? '' : (change.column ?? '');
        const state = now as CommentState;
        if (state.description === null) return { proposalId: id, status: 'already', note: 'comment already removed' };
        if (state.description !== change.text || state.description_source !== 'argus')
          return {
            proposalId: id,
            status: 'conflict',
            note: "the comment is no longer ARGUS's text the removal was proposed for",
          };
        await this.setComment(c, rel, column, null, id);
        const after: CommentState = { description: null, description_source: null };
        return { proposalId: id, status: 'written', before: state, after, landedEarlier: false };
      }
      case 'pii_tag': {
        const existing = now as { category: string; proposalId: string } | null;
        if (existing)
          return {
            proposalId: id,
            status: 'already',
            note:
              existing.proposalId === id ? 'tag already in the database' : `column already tagged ${existing.category}`,
          };
        const exists = await c.query(
          'SELECT 1 FROM pg_catalog.pg_attribute WHERE attrelid = $1::oid AND attname = $2 AND NOT attisdropped',
          [rel.oid, change.column],
        );
        if (exists.rowCount === 0)
          return { proposalId: id, status: 'conflict', note: `column ${change.column} no longer exists` };
        await c.query(
          `INSERT INTO ${this.tagTable} (schema_name, table_name, column_name, tag, category, confidence, explanation, proposal_id, sweep_id)
           VALUES ($1, $2, $3, 'pii', $4, $5, $6, $7, $8)`,
          [rel.schema, rel.name, change.column, change.category, change.confidence, change.explanation, id, sweepId],
        );
        return {
          proposalId: id,
          status: 'written',
          before: null,
          after: { tag: 'pii', category: change.category, proposalId: id },
          landedEarlier: false,
        };
      }
      case 'lineage_flag':
        return {
          proposalId: id,
          // Not a failure: the finding stands in the report, there is just nothing ARGUS can write for it.
          status: 'conflict',
          note: "a PostgreSQL view's lineage is its definition; ARGUS does not rewrite view SQL",
        };
    }
  }

  async revertRepairs(batch: RevertRequest[]): Promise<RevertOutcome[]> {
    return this.inTransaction(
      batch.map((w) => w.entityId),
      async (c) => {
        const out: RevertOutcome[] = [];
        for (const w of batch) {
          const rel = this.relations.get(w.entityId);
          if (!rel) {
            out.push({ proposalId: w.proposalId, status: 'conflict', note: 'relation no longer in the database' });
            continue;
          }
          const now = stableJson(await this.currentValue(c, rel, w.change));
          if (w.unconfirmed && now !== stableJson(w.after)) {
            out.push({ proposalId: w.proposalId, status: 'not_landed', note: 'the write never reached the database' });
            continue;
          }
          if (now === stableJson(w.before)) {
            out.push({ proposalId: w.proposalId, status: 'already_reverted', note: 'already as it was before' });
            continue;
          }
          if (now !== stableJson(w.after)) {
            out.push({
              proposalId: w.proposalId,
              status: 'conflict',
              note: 'changed since the sweep wrote it; left as is',
            });
            continue;
          }
          if (w.change.kind === 'description' || w.change.kind === 'description_removal') {
            const before = w.before as CommentState;
            const column = w.change.target === 'table' ? '' : (w.change.column ?? '');
            await this.setComment(c, rel, column, before.description, w.proposalId);
            // A comment that was a person's before stays a person's: no record of it as ARGUS's.
            if (before.description !== null && before.description_source !== 'argus')
              await c.query(
                `DELETE FROM ${COMMENTS_TABLE} WHERE schema_name = $1 AND relation_name = $2 AND column_name = $3`,
                [rel.schema, rel.name, column],
              );
            out.push({ proposalId: w.proposalId, status: 'reverted', note: 'comment restored' });
          } else if (w.change.kind === 'pii_tag') {
            await c.query(`DELETE FROM ${this.tagTable} WHERE proposal_id = $1`, [w.proposalId]);
            out.push({ proposalId: w.proposalId, status: 'reverted', note: 'tag removed' });
          } else out.push({ proposalId: w.proposalId, status: 'conflict', note: 'nothing was written for lineage' });
        }
        return out;
      },
    );
  }

  /**
   * Up to `rows` (at most 100) values of each column, cast to text in SQL and cut at 512 characters, read in a
   * READ ONLY transaction with a 5 s statement_timeout: the first rows the server returns, no ORDER BY. Raises
   * CatalogError for an entity not in the catalog's schemas, a column it does not have, or a refused read;
   * the message names the relation and the SQLSTATE, never the server's text (which may quote a value).
   */
  async sampleColumnValues(entityId: string, columns: string[], rows: number): Promise<Map<string, (string | null)[]>> {
    const limit = Number.isFinite(rows) ? Math.max(0, Math.min(SAMPLE_MAX_ROWS, Math.floor(rows))) : 0;
    const wanted = [...new Set(columns)];
    return this.withClient(async (c) => {
      const rel = await this.sampleTarget(c, entityId);
      await c.query('BEGIN READ ONLY');
      try {
        await c.query(`SET LOCAL statement_timeout = '${SAMPLE_TIMEOUT}'`);
        const present = new Set(
          (
            await c.query<{ attname: string }>(
              `SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped`,
              [rel.oid],
            )
          ).rows.map((r) => r.attname),
        );
        const unknown = wanted.filter((col) => !present.has(col));
        if (unknown.length)
          throw new CatalogError(
            `PostgreSQL catalog ${this.where}: ${rel.id} has no column ${unknown.map((u) => JSON.stringify(u)).join(', ')} to sample`,
          );
        const out = new Map<string, (string | null)[]>(wanted.map((col) => [col, []]));
        if (limit > 0 && wanted.length > 0) {
          const list = wanted
            .map((col) => `pg_catalog.left(${c.escapeIdentifier(col)}::text, ${SAMPLE_MAX_CHARS})`)
            .join(', ');
          const res = await c.query<(string | null)[]>({
            text: `SELECT ${list} FROM ${qualified(c, rel.schema, rel.name)} LIMIT $1`,
            values: [limit],
            rowMode: 'array',
          });
          for (const row of res.rows) wanted.forEach((col, i) => out.get(col)!.push(row[i] ?? null));
        }
        await c.query('COMMIT');
        return out;
      } catch (err) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw this.sampleRefused(err, rel);
      }
    });
  }

  /** The relation an entity id names, as this adapter resolves ids, checked to be still there under that name. */
  private async sampleTarget(c: PoolClient, entityId: string): Promise<PgRelation> {
    if (this.ref.schemas && !this.ref.schemas.some((s) => entityId.startsWith(`${s}.`)))
      throw new CatalogError(
        `PostgreSQL catalog ${this.where}: ${entityId} is not in the catalog's schemas (${this.ref.schemas.join(', ')})`,
      );
    for (let attempt = 0; attempt < 2; attempt++) {
      await this.relationsFor(c, [entityId]);
      const rel = this.relations.get(entityId);
      if (!rel) break;
      const same = await c
        .query(
          `SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE c.oid = $1::oid AND n.nspname = $2 AND c.relname = $3`,
          [rel.oid, rel.schema, rel.name],
        )
        .catch((err: unknown) => {
          throw explain(err, this.where);
        });
      if (same.rowCount) {
        if (this.ref.schemas && !this.ref.schemas.includes(rel.schema)) break;
        return rel;
      }
      // Dropped, recreated or renamed since it was read: read it again, once.
      this.relations.delete(entityId);
    }
    throw new CatalogError(`PostgreSQL catalog ${this.where}: no table or view ${entityId} to sample`);
  }

  /** A refused sample in a person's words: the SQLSTATE and what it means, never the server's text. */
  private sampleRefused(err: unknown, rel: PgRelation): CatalogError {
    if (err instanceof CatalogError) return err;
    const code = (err as { code?: string }).code;
    if (code === undefined || !/^[0-9A-Z]{5}$/.test(code)) return explain(err, this.where);
    const why =
      code === '57014'
        ? `the read took longer than ${SAMPLE_TIMEOUT} and was cancelled (57014)`
        : code === '42501'
          ? 'permission denied (42501): sampling values needs SELECT on it'
          : code === '25006'
            ? 'reading it would write (25006), and samples are read in a READ ONLY transaction'
            : code === '42P01' || code === '42703'
              ? `it changed during the sweep (${code})`
              : `the server refused the read (SQLSTATE ${code})`;
    return new CatalogError(`PostgreSQL catalog ${this.where}: sampling ${rel.id}: ${why}`);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

class ColumnGone extends Error {
  constructor(readonly column: string) {
    super(`column ${column} no longer exists`);
  }
}
