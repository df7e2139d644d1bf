import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ANSWER_MAX_CHARS, ANSWERS_KEPT, type AnswerBook, type RememberedAnswer } from '../store';
import { readJson, removeLeftovers, writeFileAtomic } from './fs';

/** How many answers this process keeps between two counts of the folder (a count lists every shard). */
const KEEPS_BETWEEN_COUNTS = 2000;

const DIGEST = /^[0-9a-f]{16,64}$/;
/** A kept answer's file name: its digest, `.json`. */
const DIGEST_FILE = /^[0-9a-f]{16,64}\.json$/;

/**
 * The file store's answers: `<state>/answers/<first two hex digits>/<digest>.json`, one small file each, written
 * atomically; a recall touches the file, so the least recently used are the oldest files and go first once the
 * folder holds more than `kept`.
 */
export function fileAnswers(stateDir: string, kept = ANSWERS_KEPT): AnswerBook {
  const root = path.join(stateDir, 'answers');
  const file = (digest: string) => path.join(root, digest.slice(0, 2), `${digest}.json`);
  let keepsSinceCount = 0;

  async function prune(): Promise<void> {
    const shards = await fs.readdir(root).catch(() => [] as string[]);
    const files: string[] = [];
    for (const s of shards) {
      if (!/^[0-9a-f]{2}$/.test(s)) continue;
      // Only finished answers count; a killed write's temporary file goes once it is old enough to be a leftover.
      const names = await fs.readdir(path.join(root, s)).catch(() => [] as string[]);
      await removeLeftovers(path.join(root, s), names);
      for (const f of names) if (DIGEST_FILE.test(f)) files.push(path.join(root, s, f));
    }
    if (files.length <= kept) return;
    const aged = await Promise.all(
      files.map(async (f) => [f, (await fs.stat(f).catch(() => undefined))?.mtimeMs ?? 0] as const),
    );
    aged.sort((a, b) => a[1] - b[1]);
    for (const [f] of aged.slice(0, files.length - kept)) await fs.rm(f, { force: true });
  }

  return {
    async recall(digest) {
      if (!DIGEST.test(digest)) return undefined;
      const a = await readJson<RememberedAnswer>(file(digest)).catch(() => undefined);
      if (!a || typeof a.content !== 'string' || typeof a.cutShort !== 'boolean') return undefined;
      const now = new Date();
      await fs.utimes(file(digest), now, now).catch(() => undefined);
      return { content: a.content, cutShort: a.cutShort };
    },
    async keep(digest, answer) {
      if (!DIGEST.test(digest) || answer.content.length > ANSWER_MAX_CHARS) return;
      await writeFileAtomic(file(digest), JSON.stringify({ content: answer.content, cutShort: answer.cutShort }));
      if (++keepsSinceCount >= Math.min(KEEPS_BETWEEN_COUNTS, kept)) {
        keepsSinceCount = 0;
        await prune();
      }
    },
    async forget(digests) {
      for (const d of digests) if (DIGEST.test(d)) await fs.rm(file(d), { force: true });
    },
  };
}
