import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Pool, type PoolClient } from 'pg';
import type { EntityFailure, Outcome, Proposal } from '../../domain/proposal';
import { catalogKey } from '../../domain/ids';
import { digest64 } from '../../domain/digest';
import type { CatalogIdentity } from '../../catalog/adapter';
import type { AppliedBy, AuditEntry } from '../file/audit-log';
import {
  byRound,
  mergeOutcomes,
  mergeWrites,
  stageRank,
  OUTCOME_STAGES,
  SweepStateMissing,
  type CatalogStats,
  type ModelCallRecord,
  type OutcomeStage,
  type PageWrites,
  type SweepLedger,
  type SweepMeta,
  type WriteRecord,
} from '../file/ledger';
import { safeName } from '../../activities/paths';
import { MEMORY_VERSION, type MemoryBook, type MemoryEntry, type MemoryRead } from '../memory';
import {
  CALIBRATION_KEYS,
  type AuditTrail,
  type CalibrationBook,
  type FleetGate,
  type PaceBudget,
  type StateStore,
  type UsageBook,
} from '../store';

/**
 * The PostgreSQL state store: every worker of a fleet reads and writes one sweep state, whichever machine it
 * runs on. Tables live in their own schema (default `argus_state`), created and migrated by ARGUS: each step
 * of MIGRATIONS runs once, in order, under an advisory lock, and the schema records its version.
 */
const MIGRATIONS: ((s: string) => string)[] = [
  (s) => `
    create table ${s}.store (id text primary key, created_at timestamptz not null default now());
    create table ${s}.sweeps (
      ledger_key text primary key, sweep_id text not null, meta jsonb not null,
      created_at timestamptz not null default now());
    create index sweeps_by_sweep_id on ${s}.sweeps (sweep_id);
    create table ${s}.page_docs (
      ledger_key text not null, page int not null, name text not null, body text not null,
      primary key (ledger_key, page, name));
    create table ${s}.outcomes (
      ledger_key text not null, page int not null, tag text not null, stage smallint not null, body text not null,
      primary key (ledger_key, page, tag));
    create table ${s}.audit (
      seq bigserial primary key, audit_key text not null, kind text not null, proposal_id text, line text not null,
      at timestamptz not null default now());
    create index audit_by_key on ${s}.audit (audit_key, seq);
    create table ${s}.applied (
      audit_key text not null, proposal_id text not null, sweep_id text not null, ledger_key text,
      primary key (audit_key, proposal_id));
    create table ${s}.pages_logged (audit_key text not null, page_key text not null, primary key (audit_key, page_key));
    create table ${s}.reports (ledger_key text primary key, body text not null, created_at timestamptz not null default now());`,
  // v2: model-call limits shared by the fleet.
  (s) => `
    create table ${s}.endpoint_exhausted (
      sweep_id text not null, endpoint_id text not null, details jsonb not null, at timestamptz not null default now(),
      primary key (sweep_id, endpoint_id));
    create table ${s}.pace (pace_key text primary key, budget jsonb not null, observed_at timestamptz not null default now());`,
  // v3: what ARGUS spent per provider key and day, across sweeps (what a plan subtracts from a declared budget).
  (s) => `
    create table ${s}.usage (
      pace_key text not null, day date not null, tokens bigint not null default 0, requests bigint not null default 0,
      primary key (pace_key, day));`,
  // v4: what batch answers took of their output reserve, per model and task, for every worker.
  (s) => `
    create table ${s}.calibration (
      cal_key text primary key, ratios jsonb not null, saved_at timestamptz not null default now());`,
  // v5: memory across sweeps: one header per catalog (format version, judgment key), one row per entity.
  (s) => `
    create table ${s}.memory (
      catalog_key text primary key, version int not null, judgment_key text not null, sweep_id text not null,
      saved_at timestamptz not null default now());
    create table ${s}.memory_entities (
      catalog_key text not null, entity_id text not null, entry jsonb not null,
      primary key (catalog_key, entity_id));`,
];

/** The schema version this code writes; a store migrated further by a newer ARGUS is refused. */
export const STATE_SCHEMA_VERSION = MIGRATIONS.length;

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;
const pageKey = (ledgerKey: string, page: number, round = 0) =>
  round === 0 ? `${ledgerKey}#${page}` : `${ledgerKey}#${page}.r${round}`;

/** Run `fn` on one client inside a transaction: committed when it returns, rolled back when it throws. */
async function inTransaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('begin');
    const out = await fn(c);
    await c.query('commit');
    return out;
  } catch (e) {
    await c.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}

export class StateStoreError extends Error {
  override name = 'StateStoreError';
}

/** Bring the store's schema to STATE_SCHEMA_VERSION (idempotent, safe when several workers start at once). */
async function migrate(pool: Pool, schema: string): Promise<string> {
  return inTransaction(pool, async (c) => {
    await c.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`argus-state-migrate:${schema}`]);
    await c.query(`create schema if not exists ${schema}`);
    await c.query(
      `create table if not exists ${schema}.schema_version (version int primary key, applied_at timestamptz not null default now())`,
    );
    const { rows } = await c.query<{ v: number | null }>(`select max(version) as v from ${schema}.schema_version`);
    const current = rows[0]?.v ?? 0;
    if (current > STATE_SCHEMA_VERSION)
      throw new StateStoreError(
        `the state store's schema ${schema} is at version ${current}, newer than this ARGUS (${STATE_SCHEMA_VERSION}): upgrade this worker`,
      );
    for (let v = current + 1; v <= STATE_SCHEMA_VERSION; v++) {
      await c.query(MIGRATIONS[v - 1]!(schema));
      await c.query(`insert into ${schema}.schema_version (version) values ($1)`, [v]);
      if (v === 1) await c.query(`insert into ${schema}.store (id) values ($1)`, [randomUUID()]);
    }
    const id = await c.query<{ id: string }>(`select id from ${schema}.store limit 1`);
    return id.rows[0]!.id;
  });
}

/**
 * Open (creating or migrating) the PostgreSQL state store at `url`. The URL stays in this process: the store
 * names itself by a random id kept in the database ("PostgreSQL state store 1a2b3c4d"), never by its URL.
 */
export async function openPgStateStore(url: string, opts: { schema?: string; poolSize?: number } = {}) {
  const schema = opts.schema ?? 'argus_state';
  if (!IDENT.test(schema)) throw new StateStoreError(`state schema "${schema}" must be a lower-case SQL identifier`);
  const pool = new Pool({ connectionString: url, max: opts.poolSize ?? 8, connectionTimeoutMillis: 10_000 });
  // Lock waits hold a connection each: their own pool, so a lock holder never waits for a connection they hold.
  const lockPool = new Pool({ connectionString: url, max: 32, connectionTimeoutMillis: 10_000 });
  // An idle connection the server closes must not take the worker down; the next query reconnects.
  pool.on('error', () => undefined);
  lockPool.on('error', () => undefined);
  let id: string;
  try {
    id = await migrate(pool, schema);
  } catch (e) {
    await Promise.all([pool.end(), lockPool.end()]).catch(() => undefined);
    // The driver's message can name the host and user, never the password; keep it, prefixed.
    throw new StateStoreError(`cannot open the PostgreSQL state store (ARGUS_STATE_URL): ${(e as Error).message}`);
  }
  return new PgStateStore(pool, lockPool, schema, id);
}

export class PgStateStore implements StateStore {
  readonly kind = 'postgres' as const;
  readonly where: string;
  constructor(
    readonly pool: Pool,
    private readonly lockPool: Pool,
    readonly schema: string,
    readonly id: string,
  ) {
    this.where = `PostgreSQL state store ${id.slice(0, 8)} (schema ${schema})`;
  }

  ledger(ledgerKey: string): SweepLedger {
    return new PgLedger(this, ledgerKey);
  }
  auditKey(identity: CatalogIdentity, catalogName: string): string {
    return `${catalogKey(catalogName)}-${digest64(identity.key).slice(0, 10)}`;
  }
  audit(key: string): AuditTrail {
    return new PgAuditTrail(this, key);
  }
  async findSweepMetas(sweepId: string): Promise<SweepMeta[]> {
    const { rows } = await this.pool.query<{ meta: SweepMeta }>(
      `select meta from ${this.schema}.sweeps where sweep_id = $1 order by created_at`,
      [sweepId],
    );
    return rows.map((r) => r.meta);
  }
  async exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const c = await this.lockPool.connect();
    let locked = false;
    try {
      // Session-level: released by unlock, or by the server when this worker's connection dies with it.
      await c.query('select pg_advisory_lock(hashtextextended($1, 0))', [key]);
      locked = true;
      return await fn();
    } finally {
      if (locked) await c.query('select pg_advisory_unlock(hashtextextended($1, 0))', [key]).catch(() => undefined);
      c.release(!locked);
    }
  }
  readonly fleet: FleetGate = {
    acquireSlot: (key, size, onWait, signal) => this.acquireSlot(key, size, onWait, signal),
    markExhausted: async (sweepId, endpointId, details) => {
      await this.pool.query(
        `insert into ${this.schema}.endpoint_exhausted (sweep_id, endpoint_id, details) values ($1, $2, $3)
         on conflict do nothing`,
        [sweepId, endpointId, JSON.stringify(details)],
      );
    },
    exhausted: async (sweepId, endpointId) => {
      const { rows } = await this.pool.query<{ details: Record<string, unknown> }>(
        `select details from ${this.schema}.endpoint_exhausted where sweep_id = $1 and endpoint_id = $2`,
        [sweepId, endpointId],
      );
      return rows[0]?.details;
    },
    pace: async (key) => {
      const { rows } = await this.pool.query<{ budget: PaceBudget }>(
        `select budget from ${this.schema}.pace where pace_key = $1`,
        [key],
      );
      return rows[0]?.budget;
    },
    putPace: async (key, budget) => {
      await this.pool.query(
        `insert into ${this.schema}.pace (pace_key, budget) values ($1, $2)
         on conflict (pace_key) do update set budget = excluded.budget, observed_at = now()`,
        [key, JSON.stringify(budget)],
      );
    },
  };

  readonly calibration: CalibrationBook = {
    load: async (keys) => {
      const { rows } = await this.pool.query<{ cal_key: string; ratios: unknown }>(
        `select cal_key, ratios from ${this.schema}.calibration where cal_key = any($1)`,
        [[...keys]],
      );
      return Object.fromEntries(
        rows.filter((r) => Array.isArray(r.ratios)).map((r) => [r.cal_key, r.ratios as number[]]),
      );
    },
    save: async (key, ratios) => {
      await this.pool.query(
        `insert into ${this.schema}.calibration (cal_key, ratios) values ($1, $2)
         on conflict (cal_key) do update set ratios = excluded.ratios, saved_at = now()`,
        [key, JSON.stringify(ratios)],
      );
      // Bounded: the least recently saved keys beyond CALIBRATION_KEYS go.
      await this.pool.query(
        `delete from ${this.schema}.calibration where cal_key not in
           (select cal_key from ${this.schema}.calibration order by saved_at desc, cal_key limit $1)`,
        [CALIBRATION_KEYS],
      );
    },
  };

  readonly memory: MemoryBook = {
    load: async (key): Promise<MemoryRead> => {
      const head = await this.pool.query<{ version: number; judgment_key: string; sweep_id: string; saved_at: Date }>(
        `select version, judgment_key, sweep_id, saved_at from ${this.schema}.memory where catalog_key = $1`,
        [key],
      );
      const h = head.rows[0];
      if (!h) return { status: 'none' };
      if (h.version > MEMORY_VERSION)
        return {
          status: 'untrusted',
          why: `the memory was written by a newer ARGUS (format version ${h.version}, this one reads ${MEMORY_VERSION})`,
        };
      const { rows } = await this.pool.query<{ entity_id: string; entry: MemoryEntry }>(
        `select entity_id, entry from ${this.schema}.memory_entities where catalog_key = $1`,
        [key],
      );
      const entities: Record<string, MemoryEntry> = {};
      for (const r of rows) entities[r.entity_id] = r.entry;
      return {
        status: 'ok',
        doc: {
          format: 'argus-memory',
          version: h.version,
          catalogKey: key,
          judgmentKey: h.judgment_key,
          sweepId: h.sweep_id,
          savedAt: new Date(h.saved_at).toISOString(),
          entities,
        },
      };
    },
    save: (key, u) =>
      inTransaction(this.pool, async (c) => {
        // One writer per catalog at a time: two sweeps finishing together merge, neither erases the other.
        await c.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`argus-memory:${key}`]);
        const { rows } = await c.query<{ judgment_key: string; version: number }>(
          `select judgment_key, version from ${this.schema}.memory where catalog_key = $1`,
          [key],
        );
        const old = rows[0];
        if (u.replace || !old || old.judgment_key !== u.judgmentKey || old.version > MEMORY_VERSION)
          await c.query(`delete from ${this.schema}.memory_entities where catalog_key = $1`, [key]);
        await c.query(
          `insert into ${this.schema}.memory (catalog_key, version, judgment_key, sweep_id) values ($1, $2, $3, $4)
           on conflict (catalog_key) do update set version = excluded.version, judgment_key = excluded.judgment_key,
             sweep_id = excluded.sweep_id, saved_at = now()`,
          [key, MEMORY_VERSION, u.judgmentKey, u.sweepId],
        );
        if (u.deletes.length > 0)
          await c.query(`delete from ${this.schema}.memory_entities where catalog_key = $1 and entity_id = any($2)`, [
            key,
            u.deletes,
          ]);
        const entries = Object.entries(u.upserts);
        // In slices: one statement per 2,000 entities keeps each parameter list far below the protocol's limits.
        for (let i = 0; i < entries.length; i += 2000) {
          const slice = entries.slice(i, i + 2000);
          await c.query(
            `insert into ${this.schema}.memory_entities (catalog_key, entity_id, entry)
             select $1, id, entry from unnest($2::text[], $3::jsonb[]) as t(id, entry)
             on conflict (catalog_key, entity_id) do update set entry = excluded.entry`,
            [key, slice.map(([id]) => id), slice.map(([, e]) => JSON.stringify(e))],
          );
        }
      }),
    forget: async (key, ids) => {
      await this.pool.query(
        `delete from ${this.schema}.memory_entities where catalog_key = $1 and entity_id = any($2)`,
        [key, [...ids]],
      );
    },
  };

  readonly usage: UsageBook = {
    add: async (key, day, tokens, requests) => {
      await this.pool.query(
        `insert into ${this.schema}.usage (pace_key, day, tokens, requests) values ($1, $2, $3, $4)
         on conflict (pace_key, day) do update
           set tokens = ${this.schema}.usage.tokens + excluded.tokens, requests = ${this.schema}.usage.requests + excluded.requests`,
        [key, day, tokens, requests],
      );
    },
    get: async (key, day) => {
      const { rows } = await this.pool.query<{ tokens: string; requests: string }>(
        `select tokens, requests from ${this.schema}.usage where pace_key = $1 and day = $2`,
        [key, day],
      );
      return { tokens: Number(rows[0]?.tokens ?? 0), requests: Number(rows[0]?.requests ?? 0) };
    },
  };

  /**
   * One of `size` advisory locks `key#0..size-1`, held on a connection of its own until released (or until this
   * worker dies: the server drops its locks with its connection). Polls while every slot is taken.
   */
  private async acquireSlot(
    key: string,
    size: number,
    onWait: () => void,
    signal?: AbortSignal,
  ): Promise<() => Promise<void>> {
    const c = await this.lockPool.connect();
    try {
      for (let waited = 0; ; waited++) {
        for (let slot = 0; slot < size; slot++) {
          const lockKey = `${key}#${slot}`;
          const { rows } = await c.query<{ ok: boolean }>(
            'select pg_try_advisory_lock(hashtextextended($1, 0)) as ok',
            [lockKey],
          );
          if (rows[0]?.ok) {
            let released = false;
            return async () => {
              if (released) return;
              released = true;
              await c.query('select pg_advisory_unlock(hashtextextended($1, 0))', [lockKey]).catch(() => undefined);
              c.release();
            };
          }
        }
        if (signal?.aborted) throw signal.reason ?? new Error('cancelled while waiting for a model-call slot');
        onWait();
        await new Promise((r) => setTimeout(r, Math.min(250, 20 * 2 ** Math.min(waited, 4))));
      }
    } catch (e) {
      c.release();
      throw e;
    }
  }

  /** Rows and bytes the store holds (for the bench). */
  async size(): Promise<{ rows: number; bytes: number }> {
    const { rows } = await this.pool.query<{ rows: string; bytes: string }>(
      `select coalesce(sum(c.reltuples) filter (where c.relkind = 'r'), 0)::bigint as rows,
              coalesce(sum(pg_total_relation_size(c.oid)) filter (where c.relkind = 'r'), 0)::bigint as bytes
         from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1`,
      [this.schema],
    );
    return { rows: Number(rows[0]!.rows), bytes: Number(rows[0]!.bytes) };
  }
  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.lockPool.end()]);
  }
}

const PROPOSAL_PAGES_KEPT = 16;

class PgLedger implements SweepLedger {
  private readonly t: { docs: string; outcomes: string; sweeps: string; reports: string };
  private static cache = new Map<string, { signature: string; proposals: readonly Proposal[] }>();
  constructor(
    private readonly store: PgStateStore,
    readonly ledgerKey: string,
  ) {
    const s = store.schema;
    this.t = { docs: `${s}.page_docs`, outcomes: `${s}.outcomes`, sweeps: `${s}.sweeps`, reports: `${s}.reports` };
  }
  private get pool() {
    return this.store.pool;
  }
  private missing(what: string): SweepStateMissing {
    return new SweepStateMissing(what, `${this.store.where}, sweep run ${this.ledgerKey}`, 'postgres');
  }

  private async put(n: number, name: string, body: string): Promise<void> {
    await this.pool.query(
      `insert into ${this.t.docs} (ledger_key, page, name, body) values ($1, $2, $3, $4)
       on conflict (ledger_key, page, name) do update set body = excluded.body`,
      [this.ledgerKey, n, name, body],
    );
  }
  private async get<T>(n: number, name: string): Promise<T | undefined> {
    const { rows } = await this.pool.query<{ body: string }>(
      `select body from ${this.t.docs} where ledger_key = $1 and page = $2 and name = $3`,
      [this.ledgerKey, n, name],
    );
    return rows[0] ? (JSON.parse(rows[0].body) as T) : undefined;
  }
  /** Documents of a page whose names start with `prefix`, in name order. */
  private async list<T>(n: number, prefix: string): Promise<{ name: string; value: T }[]> {
    const { rows } = await this.pool.query<{ name: string; body: string }>(
      `select name, body from ${this.t.docs} where ledger_key = $1 and page = $2 and starts_with(name, $3) order by name`,
      [this.ledgerKey, n, prefix],
    );
    return rows.map((r) => ({ name: r.name, value: JSON.parse(r.body) as T }));
  }
  /** A page exists once its ids are stored (loadCatalogPage); a page that does not is missing state. */
  private async requirePage(n: number): Promise<void> {
    const { rowCount } = await this.pool.query(
      `select 1 from ${this.t.docs} where ledger_key = $1 and page = $2 and name = 'ids'`,
      [this.ledgerKey, n],
    );
    if (!rowCount) throw this.missing(`page ${n} of the sweep`);
  }

  async writeMeta(m: SweepMeta): Promise<void> {
    await this.pool.query(
      `insert into ${this.t.sweeps} (ledger_key, sweep_id, meta) values ($1, $2, $3)
       on conflict (ledger_key) do update set meta = excluded.meta`,
      [this.ledgerKey, m.sweepId, JSON.stringify(m)],
    );
  }
  async meta(): Promise<SweepMeta> {
    const { rows } = await this.pool.query<{ meta: SweepMeta }>(
      `select meta from ${this.t.sweeps} where ledger_key = $1`,
      [this.ledgerKey],
    );
    if (!rows[0]) throw this.missing('the sweep ledger');
    return rows[0].meta;
  }

  writeProposals(n: number, agent: string, proposals: Proposal[]): Promise<void> {
    return this.put(n, `proposals-${agent}`, JSON.stringify(proposals));
  }
  /** Parsed once per page while its rows are unchanged (a row's xmin changes with every update). */
  async proposals(n: number): Promise<readonly Proposal[]> {
    const { rows } = await this.pool.query<{ name: string; v: string }>(
      `select name, xmin::text as v from ${this.t.docs}
        where ledger_key = $1 and page = $2 and (name = 'ids' or starts_with(name, 'proposals-')) order by name`,
      [this.ledgerKey, n],
    );
    if (!rows.some((r) => r.name === 'ids')) throw this.missing(`page ${n} of the sweep`);
    const signature = rows.map((r) => `${r.name}:${r.v}`).join('|');
    const key = `${this.store.id}\u0000${this.ledgerKey}\u0000${n}`;
    const hit = PgLedger.cache.get(key);
    if (hit && hit.signature === signature) return hit.proposals;
    const out: Proposal[] = [];
    for (const d of await this.list<Proposal[]>(n, 'proposals-')) out.push(...d.value);
    PgLedger.cache.set(key, { signature, proposals: out });
    if (PgLedger.cache.size > PROPOSAL_PAGES_KEPT) PgLedger.cache.delete(PgLedger.cache.keys().next().value!);
    return out;
  }

  async putOutcomes(n: number, stage: OutcomeStage, tag: string, outcomes: Outcome[]): Promise<void> {
    await this.pool.query(
      `insert into ${this.t.outcomes} (ledger_key, page, tag, stage, body) values ($1, $2, $3, $4, $5)
       on conflict (ledger_key, page, tag) do update set stage = excluded.stage, body = excluded.body`,
      [this.ledgerKey, n, tag, stageRank(stage), JSON.stringify(outcomes)],
    );
  }
  async outcomes(n: number): Promise<Outcome[]> {
    const [, { rows }] = await Promise.all([
      this.requirePage(n),
      this.pool.query<{ tag: string; stage: number; body: string }>(
        `select tag, stage, body from ${this.t.outcomes} where ledger_key = $1 and page = $2`,
        [this.ledgerKey, n],
      ),
    ]);
    return mergeOutcomes(
      rows.map((r) => ({ stage: OUTCOME_STAGES[r.stage]!, tag: r.tag, outcomes: JSON.parse(r.body) as Outcome[] })),
    );
  }

  writeIntent(n: number, lines: string[], round = 0): Promise<void> {
    return this.put(n, `write-intent${round === 0 ? '' : `-r${round}`}`, `[${lines.join(',')}]`);
  }
  async intent(n: number): Promise<WriteRecord[]> {
    return (await this.list<WriteRecord[]>(n, 'write-intent'))
      .sort((a, b) => byRound(a.name, b.name))
      .flatMap((d) => d.value);
  }
  writeWrites(n: number, w: PageWrites, round = 0): Promise<void> {
    return this.put(n, `writes${round === 0 ? '' : `-r${round}`}`, JSON.stringify(w));
  }
  writes(n: number, round = 0): Promise<PageWrites | undefined> {
    return this.get<PageWrites>(n, `writes${round === 0 ? '' : `-r${round}`}`);
  }
  async allWrites(n: number): Promise<PageWrites | undefined> {
    return mergeWrites(
      (await this.list<PageWrites>(n, 'writes')).sort((a, b) => byRound(a.name, b.name)).map((d) => d.value),
    );
  }
  writeStats(n: number, when: 'before' | 'after', stats: CatalogStats): Promise<void> {
    return this.put(n, `stats-${when}`, JSON.stringify(stats));
  }
  stats(n: number, when: 'before' | 'after'): Promise<CatalogStats | undefined> {
    return this.get<CatalogStats>(n, `stats-${when}`);
  }
  writePageIds(n: number, ids: string[]): Promise<void> {
    return this.put(n, 'ids', JSON.stringify(ids));
  }
  async pageIds(n: number): Promise<string[]> {
    const ids = await this.get<string[]>(n, 'ids');
    if (ids === undefined) throw this.missing(`the entity ids of page ${n}`);
    return ids;
  }
  writeCalls(n: number, tag: string, calls: ModelCallRecord[]): Promise<void> {
    return this.put(n, `calls-${tag}`, JSON.stringify(calls));
  }
  async calls(n: number): Promise<ModelCallRecord[]> {
    return (await this.list<ModelCallRecord[]>(n, 'calls-')).flatMap((d) => d.value);
  }
  writeFailures(n: number, stage: string, failures: EntityFailure[]): Promise<void> {
    return this.put(n, `failures-${stage}`, JSON.stringify(failures));
  }
  async failures(n: number): Promise<EntityFailure[]> {
    return (await this.list<EntityFailure[]>(n, 'failures-')).flatMap((d) => d.value);
  }
  // The sweep's own documents (the selection) are kept on page -1, outside every page.
  writeSelection(ids: string[]): Promise<void> {
    return this.put(-1, 'selection', JSON.stringify(ids));
  }
  selection(): Promise<string[] | undefined> {
    return this.get<string[]>(-1, 'selection');
  }
  writeDoc(name: string, value: unknown): Promise<void> {
    return this.put(-1, `doc:${name}`, JSON.stringify(value));
  }
  doc<T>(name: string): Promise<T | undefined> {
    return this.get<T>(-1, `doc:${name}`);
  }
  async pageNumbers(): Promise<number[]> {
    const { rows } = await this.pool.query<{ page: number }>(
      `select distinct page from ${this.t.docs} where ledger_key = $1 and page >= 0 order by page`,
      [this.ledgerKey],
    );
    return rows.map((r) => r.page);
  }

  reportFile(): string {
    return path.join(os.tmpdir(), `argus-report-${safeName(this.ledgerKey)}-${process.pid}.json`);
  }
  async publishReport(file: string): Promise<void> {
    try {
      await this.pool.query(
        `insert into ${this.t.reports} (ledger_key, body) values ($1, $2)
         on conflict (ledger_key) do update set body = excluded.body, created_at = now()`,
        [this.ledgerKey, await fsp.readFile(file, 'utf8')],
      );
    } finally {
      await fsp.rm(file, { force: true });
    }
  }
  reportLocation(): string {
    return `${this.store.where}, table ${this.t.reports}, ledger_key '${this.ledgerKey}'`;
  }
}

const APPEND_ROWS = 2000;

/** A catalog's audit trail in PostgreSQL: lines plus the applied index, changed together in one transaction. */
class PgAuditTrail implements AuditTrail {
  private readonly s: string;
  constructor(
    private readonly store: PgStateStore,
    readonly key: string,
  ) {
    this.s = store.schema;
  }

  async append(entries: (AuditEntry | string)[]): Promise<void> {
    if (entries.length === 0) return;
    await inTransaction(this.store.pool, async (c) => {
      for (let i = 0; i < entries.length; i += APPEND_ROWS) {
        const slice = entries.slice(i, i + APPEND_ROWS);
        const parsed = slice.map((e) => (typeof e === 'string' ? (JSON.parse(e) as AuditEntry) : e));
        const lines = slice.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
        await c.query(
          `insert into ${this.s}.audit (audit_key, kind, proposal_id, line)
           select $1, k, p, l from unnest($2::text[], $3::text[], $4::text[]) as u(k, p, l)`,
          [this.key, parsed.map((e) => e.type), parsed.map((e) => ('proposalId' in e ? e.proposalId : null)), lines],
        );
        const writes = parsed.filter((e): e is WriteRecord => e.type === 'write');
        if (writes.length)
          await c.query(
            `insert into ${this.s}.applied (audit_key, proposal_id, sweep_id, ledger_key)
             select $1, p, s, l from unnest($2::text[], $3::text[], $4::text[]) as u(p, s, l)
             on conflict (audit_key, proposal_id) do update set sweep_id = excluded.sweep_id, ledger_key = excluded.ledger_key`,
            [
              this.key,
              writes.map((w) => w.proposalId),
              writes.map((w) => w.sweepId),
              writes.map((w) => w.ledgerKey ?? null),
            ],
          );
        const undone = parsed.flatMap((e) => (e.type === 'undo' ? [e.proposalId] : []));
        if (undone.length)
          await c.query(`delete from ${this.s}.applied where audit_key = $1 and proposal_id = any($2::text[])`, [
            this.key,
            undone,
          ]);
        const pages = parsed.flatMap((e) => (e.type === 'page' ? [pageKey(e.ledgerKey, e.page, e.round)] : []));
        if (pages.length)
          await c.query(
            `insert into ${this.s}.pages_logged (audit_key, page_key) select $1, unnest($2::text[]) on conflict do nothing`,
            [this.key, pages],
          );
      }
    });
  }

  async readAll(): Promise<AuditEntry[]> {
    const { rows } = await this.store.pool.query<{ line: string }>(
      `select line from ${this.s}.audit where audit_key = $1 order by seq`,
      [this.key],
    );
    return rows.map((r) => JSON.parse(r.line) as AuditEntry);
  }

  async applied(ids?: readonly string[]): Promise<Map<string, AppliedBy>> {
    const { rows } = await this.store.pool.query<{ proposal_id: string; sweep_id: string; ledger_key: string | null }>(
      `select proposal_id, sweep_id, ledger_key from ${this.s}.applied where audit_key = $1` +
        (ids ? ' and proposal_id = any($2::text[])' : ''),
      ids ? [this.key, ids] : [this.key],
    );
    return new Map(
      rows.map((r) => [r.proposal_id, { sweepId: r.sweep_id, ...(r.ledger_key ? { ledgerKey: r.ledger_key } : {}) }]),
    );
  }

  async lastReviewed(): Promise<Map<string, string>> {
    const { rows } = await this.store.pool.query<{ entity: string; at: string }>(
      `select line::jsonb ->> 'entityId' as entity, max(line::jsonb ->> 'time') as at
         from ${this.s}.audit where audit_key = $1 and kind = 'decision' group by 1`,
      [this.key],
    );
    return new Map(rows.map((r) => [r.entity, r.at]));
  }

  async pageLogged(ledgerKey: string, page: number, round = 0): Promise<boolean> {
    const { rowCount } = await this.store.pool.query(
      `select 1 from ${this.s}.pages_logged where audit_key = $1 and page_key = $2`,
      [this.key, pageKey(ledgerKey, page, round)],
    );
    return (rowCount ?? 0) > 0;
  }
}
