import type { Pool } from 'pg';
import type { FleetGate, PaceBudget } from '../store';
import type { PgConnection } from './connection';

/** Model-call limits shared by every worker of the store: slots, spent quotas and pace, in PostgreSQL. */
export function pgFleetGate(db: PgConnection, lockPool: Pool): FleetGate {
  return {
    acquireSlot: (key, size, onWait, signal) => acquireSlot(lockPool, key, size, onWait, signal),
    markExhausted: async (sweepId, endpointId, details) => {
      await db.pool.query(
        `insert into ${db.schema}.endpoint_exhausted (sweep_id, endpoint_id, details) values ($1, $2, $3)
         on conflict do nothing`,
        [sweepId, endpointId, JSON.stringify(details)],
      );
    },
    exhausted: async (sweepId, endpointId) => {
      const { rows } = await db.pool.query<{ details: Record<string, unknown> }>(
        `select details from ${db.schema}.endpoint_exhausted where sweep_id = $1 and endpoint_id = $2`,
        [sweepId, endpointId],
      );
      return rows[0]?.details;
    },
    pace: async (key) => {
      const { rows } = await db.pool.query<{ budget: PaceBudget }>(
        `select budget from ${db.schema}.pace where pace_key = $1`,
        [key],
      );
      return rows[0]?.budget;
    },
    putPace: async (key, budget) => {
      await db.pool.query(
        `insert into ${db.schema}.pace (pace_key, budget) values ($1, $2)
         on conflict (pace_key) do update set budget = excluded.budget, observed_at = now()`,
        [key, JSON.stringify(budget)],
      );
    },
  };
}

/**
 * One of `size` advisory locks `key#0..size-1`, held on a connection of its own until released (or until this
 * worker dies: the server drops its locks with its connection). Polls while every slot is taken.
 */
async function acquireSlot(
  lockPool: Pool,
  key: string,
  size: number,
  onWait: () => void,
  signal?: AbortSignal,
): Promise<() => Promise<void>> {
  const c = await lockPool.connect();
  try {
    for (let waited = 0; ; waited++) {
      for (let slot = 0; slot < size; slot++) {
        const lockKey = `${key}#${slot}`;
        const { rows } = await c.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtextextended($1, 0)) as ok', [
          lockKey,
        ]);
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
