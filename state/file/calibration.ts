import * as path from 'node:path';
import { CALIBRATION_KEYS, type CalibrationBook } from '../store';
import { readJson, writeFileAtomic } from './fs';
import { localExclusive } from './local-lock';

/** The calibration in the state folder: one small file, `calibration.json`, `{key: ratios}` in saving order. */
export function fileCalibration(stateDir: string): CalibrationBook {
  const file = path.join(stateDir, 'calibration.json');
  const read = async (): Promise<Record<string, number[]>> => {
    const doc = await readJson<Record<string, number[]>>(file);
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? doc : {};
  };
  return {
    load: async (keys) => {
      const doc = await read();
      return Object.fromEntries(keys.filter((k) => Array.isArray(doc[k])).map((k) => [k, doc[k]!]));
    },
    save: (key, ratios) =>
      localExclusive(`calibration:${file}`, async () => {
        const doc = await read();
        delete doc[key];
        doc[key] = [...ratios];
        const keys = Object.keys(doc);
        for (const old of keys.slice(0, Math.max(0, keys.length - CALIBRATION_KEYS))) delete doc[old];
        await writeFileAtomic(file, JSON.stringify(doc));
      }),
  };
}
