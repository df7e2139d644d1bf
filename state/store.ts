import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { CatalogIdentity } from '../catalog/adapter';
import { AuditLog, type AppliedBy, type AuditEntry } from './file/audit-log';
import { auditFileFor } from '../activities/catalog-access';
import { FileLedger, type StoreKind, type SweepLedger, type SweepMeta } from './file/ledger';
import { readJson, safeName, writeFileAtomic } from '../activities/paths';
import { fileMemory, type MemoryBook } from './memory';

/** The audit trail of one catalog: append-only lines, the applied-proposal index, which pages are fully logged. */
export interface AuditTrail {
  /** Append entries; an entry may come already serialised (one JSON line without its newline). */
  append(entries: (AuditEntry | string)[]): Promise<void>;
  readAll(): Promise<AuditEntry[]>;
  /**
   * Proposal ids currently applied (written and not undone), with the sweep and run that wrote each; `ids`:
   * only among these (a store may still return more).
   */
  applied(ids?: readonly string[]): Promise<Map<string, AppliedBy>>;
  /** Whether a page's write step (round `round`) logged all its lines (its `page` line is in the trail). */
  pageLogged(ledgerKey: string, page: number, round?: number): Promise<boolean>;
  /** When each entity was last reviewed (its latest decision line's time, ISO), for oldest-unreviewed-first. */
  lastReviewed(): Promise<Map<string, string>>;
}

/**
 * Where a sweep's state lives: its ledger (metadata, proposals, outcomes, write intents, writes, figures, model
 * calls), the audit trail of each catalog, and the report. Injected into every activity. Two kinds: local files
 * (the default, one host or one shared folder) and PostgreSQL (`ARGUS_STATE_URL`: any worker on any machine).
 */
export interface StateStore {
  readonly kind: StoreKind;
  /** Where it is, for people and error messages: a folder, or "PostgreSQL state store <id>" (never a URL). */
  readonly where: string;
  ledger(ledgerKey: string): SweepLedger;
  /** The key of a catalog's audit trail, kept in the sweep's metadata (`auditFile`). */
  auditKey(identity: CatalogIdentity, catalogName: string): string;
  audit(key: string): AuditTrail;
  /** The metadata of every run of a sweep id (one per first run id). */
  findSweepMetas(sweepId: string): Promise<SweepMeta[]>;
  /**
   * Run `fn` holding a lock on `key` for the whole fleet (PostgreSQL: an advisory lock, released by the
   * server if this worker dies). The file store serialises within this process only.
   */
  exclusive<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /** Tokens and requests ARGUS spent per provider key and day (UTC), across sweeps: what a plan subtracts. */
  readonly usage: UsageBook;
  /** What batch answers took of their output reserve, per model and task (activities/model/calibration.ts). */
  readonly calibration: CalibrationBook;
  /** What earlier sweeps decided per catalog and entity, with the fingerprints it rests on (activities/memory.ts). */
  readonly memory: MemoryBook;
  /** Model-call limits shared by every worker of the store (PostgreSQL); absent: each worker keeps its own. */
  readonly fleet?: FleetGate;
  close(): Promise<void>;
}

/**
 * What makes an endpoint's limits hold for a sweep rather than per worker process: its in-flight slots, the
 * knowledge that its quota is spent, and the last x-ratelimit figures its answers carried.
 */
export interface FleetGate {
  /** Take one of `size` slots of `key` for the whole fleet, waiting (and calling `onWait`) while all are taken. */
  acquireSlot(key: string, size: number, onWait: () => void, signal?: AbortSignal): Promise<() => Promise<void>>;
  /** Record that an endpoint's quota is spent for a sweep (first record wins), with the provider's evidence. */
  markExhausted(sweepId: string, endpointId: string, details: Record<string, unknown>): Promise<void>;
  exhausted(sweepId: string, endpointId: string): Promise<Record<string, unknown> | undefined>;
  /** The latest rate-limit budget any worker saw for a provider key, and storing a newer one. */
  pace(key: string): Promise<PaceBudget | undefined>;
  putPace(key: string, budget: PaceBudget): Promise<void>;
}

export interface UsageBook {
  add(key: string, day: string, tokens: number, requests: number): Promise<void>;
  get(key: string, day: string): Promise<{ tokens: number; requests: number }>;
}

/**
 * The output calibration shared by every worker of a store: per key (`model|task`) the last answers' ratios of
 * completion tokens to output reserve. Small and bounded (CALIBRATION_KEYS keys, each a short list).
 */
export interface CalibrationBook {
  /** The ratios stored for those of `keys` the book has. */
  load(keys: readonly string[]): Promise<Record<string, number[]>>;
  /** Replace the ratios of `key`. */
  save(key: string, ratios: readonly number[]): Promise<void>;
}

/** Keys a CalibrationBook keeps: the least recently saved go first. */
export const CALIBRATION_KEYS = 256;

/** The calibration in the state folder: one small file, `calibration.json`, `{key: ratios}` in saving order. */
function fileCalibration(stateDir: string): CalibrationBook {
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

/** Today's date (UTC), the day a usage entry belongs to. */
export const usageDay = (t = Date.now()): string => new Date(t).toISOString().slice(0, 10);

/** Usage in the state folder: one small file per provider key, holding the current day only. */
function fileUsage(stateDir: string): UsageBook {
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

/** What a provider's x-ratelimit headers said remains, with absolute reset times (ms since the epoch). */
export interface PaceBudget {
  remainingTokens: number | null;
  remainingRequests: number | null;
  tokensResetAt: number | null;
  requestsResetAt: number | null;
}

const localLocks = new Map<string, Promise<unknown>>();

/** One at a time per key within this process. */
export function localExclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = localLocks.get(key) ?? Promise.resolve();
  const next = prev.catch(() => undefined).then(fn);
  localLocks.set(key, next);
  // Cleanup on either outcome, on a branch of its own: a failing `fn` rejects what the caller awaits, never an
  // orphan promise (an unhandled rejection would take the worker process down).
  const cleanup = () => {
    if (localLocks.get(key) === next) localLocks.delete(key);
  };
  next.then(cleanup, cleanup);
  return next;
}

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

/**
 * The state store a worker (or the CLI) uses: PostgreSQL when `ARGUS_STATE_URL` is set (schema
 * `ARGUS_STATE_SCHEMA`, default argus_state), else the file store in `stateDir`.
 */
export async function openStateStore(opts: { stateDir: string; env?: NodeJS.ProcessEnv }): Promise<StateStore> {
  const env = opts.env ?? process.env;
  const url = env.ARGUS_STATE_URL;
  if (!url) return fileStateStore(opts.stateDir);
  const { openPgStateStore } = await import('./postgres/store');
  return openPgStateStore(url, env.ARGUS_STATE_SCHEMA ? { schema: env.ARGUS_STATE_SCHEMA } : {});
}
