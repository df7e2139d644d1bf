import * as path from 'node:path';
import type { UsageBook } from '../store';
import { safeName } from '../safe-name';
import { readJson, writeFileAtomic } from './fs';
import { localExclusive } from './local-lock';

/** Usage in the state folder: one small file per provider key, holding the current day only. */
export function fileUsage(stateDir: string): UsageBook {
  const file = (key: string) => path.join(stateDir, 'usage', `${safeName(key)}.json`);
  type Entry = { key: string; day: string; tokens: number; requests: number };
  const read = async (key: string, day: string): Promise<Entry> => {
    const e = await readJson<Entry>(file(key));
    return e && e.day === day ? e : { key, day, tokens: 0, requests: 0 };
  };
  return {
    add: (key, day, tokens, requests) =>
      localExclusive(`usage:${file(key)}`, async () => {
        const e = await read(key, day);
        await writeFileAtomic(
          file(key),
          JSON.stringify({ ...e, tokens: e.tokens + tokens, requests: e.requests + requests }),
        );
      }),
    get: async (key, day) => {
      const e = await read(key, day);
      return { tokens: e.tokens, requests: e.requests };
    },
  };
}
