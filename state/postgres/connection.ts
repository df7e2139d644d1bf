import type { Pool, PoolClient } from 'pg';

/** What every part of the PostgreSQL store shares: its pool, its schema, its id and how it names itself. */
export interface PgConnection {
  readonly pool: Pool;
  readonly schema: string;
  readonly id: string;
  readonly where: string;
}

/** Run `fn` on one client inside a transaction: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
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
