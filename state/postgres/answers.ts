import { ANSWER_MAX_CHARS, ANSWERS_KEPT, type AnswerBook } from '../store';
import type { PgConnection } from './connection';

/** How many answers this worker keeps between two trims of the table to ANSWERS_KEPT rows. */
const KEEPS_BETWEEN_TRIMS = 2000;

/** The answers in PostgreSQL: one row per request digest, shared by the fleet; the least recently used go first. */
export function pgAnswers(db: PgConnection, kept = ANSWERS_KEPT): AnswerBook {
  let keepsSinceTrim = 0;
  return {
    async recall(digest) {
      const { rows } = await db.pool.query<{ content: string; cut_short: boolean }>(
        `update ${db.schema}.answers set used_at = now() where digest = $1 returning content, cut_short`,
        [digest],
      );
      const r = rows[0];
      return r ? { content: r.content, cutShort: r.cut_short } : undefined;
    },
    async keep(digest, answer) {
      if (answer.content.length > ANSWER_MAX_CHARS) return;
      await db.pool.query(
        `insert into ${db.schema}.answers (digest, content, cut_short) values ($1, $2, $3)
         on conflict (digest) do update set content = excluded.content, cut_short = excluded.cut_short, used_at = now()`,
        [digest, answer.content, answer.cutShort],
      );
      if (++keepsSinceTrim >= Math.min(KEEPS_BETWEEN_TRIMS, kept)) {
        keepsSinceTrim = 0;
        await db.pool.query(
          `delete from ${db.schema}.answers where digest in
             (select digest from ${db.schema}.answers order by used_at desc, digest offset $1)`,
          [kept],
        );
      }
    },
    async forget(digests) {
      if (digests.length === 0) return;
      await db.pool.query(`delete from ${db.schema}.answers where digest = any($1)`, [[...digests]]);
    },
  };
}
