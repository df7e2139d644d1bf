import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { StateStore, SweepMeta } from '../store';
import { AuditLog, auditFileFor } from './audit-log';
import { fileAnswers } from './answers';
import { fileCalibration } from './calibration';
import { readJson } from './fs';
import { FileLedger } from './ledger';
import { localExclusive } from './local-lock';
import { fileMemory } from './memory';
import { fileUsage } from './usage';

/** The file store: everything under one state folder (`ARGUS_STATE_DIR`, default `.argus/`). */
export function fileStateStore(stateDir: string): StateStore {
  return {
    kind: 'file',
    where: stateDir,
    ledger: (key) => new FileLedger(stateDir, key),
    auditKey: (identity, name) => auditFileFor(stateDir, identity, name),
    audit: (key) => new AuditLog(key),
    findSweepMetas: (sweepId) => findFileSweepMetas(stateDir, sweepId),
    exclusive: localExclusive,
    usage: fileUsage(stateDir),
    calibration: fileCalibration(stateDir),
    memory: fileMemory(stateDir, localExclusive),
    answers: fileAnswers(stateDir),
    close: () => Promise.resolve(),
  };
}

/** Find every ledger of a sweep in a state folder (one per run of that workflow id). */
export async function findFileSweepMetas(stateDir: string, sweepId: string): Promise<SweepMeta[]> {
  const dir = path.join(stateDir, 'sweeps');
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const out: SweepMeta[] = [];
  for (const n of names) {
    const m = await readJson<SweepMeta>(path.join(dir, n, 'meta.json'));
    if (m && m.sweepId === sweepId) out.push(m);
  }
  return out;
}
