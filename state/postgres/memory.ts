import { MEMORY_VERSION, type MemoryBook, type MemoryEntry, type MemoryRead } from '../memory';
import { storeFault } from '../fault-points';
import { inTransaction, type PgConnection } from './connection';

/** Memory in PostgreSQL: one header row per catalog (format version, judgment key), one row per entity. */
export function pgMemory(db: PgConnection): MemoryBook {
  return {
    load: async (key): Promise<MemoryRead> => {
      const head = await db.pool.query<{ version: number; judgment_key: string; sweep_id: string; saved_at: Date }>(
        `select version, judgment_key, sweep_id, saved_at from ${db.schema}.memory where catalog_key = $1`,
        [key],
      );
      const h = head.rows[0];
      if (!h) return { status: 'none' };
      if (h.version > MEMORY_VERSION)
        return {
          status: 'untrusted',
          why: `the memory was written by a newer ARGUS (format version ${h.version}, this one reads ${MEMORY_VERSION})`,
        };
      const { rows } = await db.pool.query<{ entity_id: string; entry: MemoryEntry }>(
        `select entity_id, entry from ${db.schema}.memory_entities where catalog_key = $1`,
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
      inTransaction(db.pool, async (c) => {
        // One writer per catalog at a time: two sweeps finishing together merge, neither erases the other.
        await c.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`argus-memory:${key}`]);
        const { rows } = await c.query<{ judgment_key: string; version: number }>(
          `select judgment_key, version from ${db.schema}.memory where catalog_key = $1`,
          [key],
        );
        const old = rows[0];
        const sameEntries = old && (old.judgment_key === u.judgmentKey || old.judgment_key === u.keepFrom);
        if (u.replace || !old || !sameEntries || old.version > MEMORY_VERSION)
          await c.query(`delete from ${db.schema}.memory_entities where catalog_key = $1`, [key]);
        await c.query(
          `insert into ${db.schema}.memory (catalog_key, version, judgment_key, sweep_id) values ($1, $2, $3, $4)
           on conflict (catalog_key) do update set version = excluded.version, judgment_key = excluded.judgment_key,
             sweep_id = excluded.sweep_id, saved_at = now()`,
          [key, MEMORY_VERSION, u.judgmentKey, u.sweepId],
        );
        if (u.deletes.length > 0)
          await c.query(`delete from ${db.schema}.memory_entities where catalog_key = $1 and entity_id = any($2)`, [
            key,
            u.deletes,
          ]);
        const entries = Object.entries(u.upserts);
        // In slices: one statement per 2,000 entities keeps each parameter list far below the protocol's limits.
        for (let i = 0; i < entries.length; i += 2000) {
          const slice = entries.slice(i, i + 2000);
          await c.query(
            `insert into ${db.schema}.memory_entities (catalog_key, entity_id, entry)
             select $1, id, entry from unnest($2::text[], $3::jsonb[]) as t(id, entry)
             on conflict (catalog_key, entity_id) do update set entry = excluded.entry`,
            [key, slice.map(([id]) => id), slice.map(([, e]) => JSON.stringify(e))],
          );
        }
        storeFault('memory-write');
      }),
    forget: async (key, ids) => {
      await db.pool.query(`delete from ${db.schema}.memory_entities where catalog_key = $1 and entity_id = any($2)`, [
        key,
        [...ids],
      ]);
    },
  };
}
