import type { UsageBook } from '../store';
import type { PgConnection } from './connection';

/** Usage in PostgreSQL: one row per provider key and day, added to atomically. */
export function pgUsage(db: PgConnection): UsageBook {
  return {
    add: async (key, day, tokens, requests) => {
      await db.pool.query(
        `insert into ${db.schema}.usage (pace_key, day, tokens, requests) values ($1, $2, $3, $4)
         on conflict (pace_key, day) do update
           set tokens = ${db.schema}.usage.tokens + excluded.tokens, requests = ${db.schema}.usage.requests + excluded.requests`,
        [key, day, tokens, requests],
      );
    },
    get: async (key, day) => {
      const { rows } = await db.pool.query<{ tokens: string; requests: string }>(
        `select tokens, requests from ${db.schema}.usage where pace_key = $1 and day = $2`,
        [key, day],
      );
      return { tokens: Number(rows[0]?.tokens ?? 0), requests: Number(rows[0]?.requests ?? 0) };
    },
  };
}
