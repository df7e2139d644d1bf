import { CALIBRATION_KEYS, type CalibrationBook } from '../store';
import type { PgConnection } from './connection';

/** The output calibration in PostgreSQL: one row per key, the least recently saved beyond CALIBRATION_KEYS go. */
export function pgCalibration(db: PgConnection): CalibrationBook {
  return {
    load: async (keys) => {
      const { rows } = await db.pool.query<{ cal_key: string; ratios: unknown }>(
        `select cal_key, ratios from ${db.schema}.calibration where cal_key = any($1)`,
        [[...keys]],
      );
      return Object.fromEntries(
        rows.filter((r) => Array.isArray(r.ratios)).map((r) => [r.cal_key, r.ratios as number[]]),
      );
    },
    save: async (key, ratios) => {
      await db.pool.query(
        `insert into ${db.schema}.calibration (cal_key, ratios) values ($1, $2)
         on conflict (cal_key) do update set ratios = excluded.ratios, saved_at = now()`,
        [key, JSON.stringify(ratios)],
      );
      // Bounded: the least recently saved keys beyond CALIBRATION_KEYS go.
      await db.pool.query(
        `delete from ${db.schema}.calibration where cal_key not in
           (select cal_key from ${db.schema}.calibration order by saved_at desc, cal_key limit $1)`,
        [CALIBRATION_KEYS],
      );
    },
  };
}
