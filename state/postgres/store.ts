import { Pool } from 'pg';
import { catalogKey } from '../../domain/ids';
import { digest64 } from '../../domain/digest';
import type { CatalogIdentity } from '../../catalog/adapter';
import type { MemoryBook } from '../memory';
import {
  StateStoreError,
  type AuditTrail,
  type AnswerBook,
  type CalibrationBook,
  type FleetGate,
  type StateStore,
  type SweepLedger,
  type SweepMeta,
  type UsageBook,
} from '../store';
import { PgAuditTrail } from './audit-trail';
import { pgAnswers } from './answers';
import { pgCalibration } from './calibration';
import type { PgConnection } from './connection';
import { pgFleetGate } from './fleet-gate';
import { PgLedger } from './ledger';
import { pgMemory } from './memory';
import { migrate } from './schema';
import { pgUsage } from './usage';

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;

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
  // A connection the server closes must not take the worker down; the next query reconnects. The pools listen
  // on their idle clients only: a client held outside a query (a transaction between statements, a fleet lock, a
  // model-call slot) has no listener of its own, and the 'error' its connection emits when the server goes would
  // end the process. Each client gets one for its life; what was using it fails on its next statement instead.
  for (const p of [pool, lockPool]) {
    p.on('error', () => undefined);
    p.on('connect', (client) => client.on('error', () => undefined));
  }
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

/**
 * The PostgreSQL state store: every worker of a fleet reads and writes one sweep state, whichever machine it
 * runs on (its tables and migrations: schema.ts).
 */
export class PgStateStore implements StateStore, PgConnection {
  readonly kind = 'postgres' as const;
  readonly where: string;
  readonly fleet: FleetGate;
  readonly calibration: CalibrationBook;
  readonly memory: MemoryBook;
  readonly answers: AnswerBook;
  readonly usage: UsageBook;
  constructor(
    readonly pool: Pool,
    private readonly lockPool: Pool,
    readonly schema: string,
    readonly id: string,
  ) {
    this.where = `PostgreSQL state store ${id.slice(0, 8)} (schema ${schema})`;
    this.fleet = pgFleetGate(this, lockPool);
    this.calibration = pgCalibration(this);
    this.memory = pgMemory(this);
    this.answers = pgAnswers(this);
    this.usage = pgUsage(this);
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
