import type { CatalogIdentity } from '../catalog/adapter';
import type { StatsVector } from '../judgment/catalog-stats';

/** The memory format this ARGUS writes; memory written by a newer one is not trusted (judged anew, rewritten). */
export const MEMORY_VERSION = 1;
/** Decisions kept per entity: a wide table's tags beyond it are simply proposed and decided again. */
export const MEMORY_DECISIONS_PER_ENTITY = 200;

/**
 * A remembered decision: proposal id, outcome, the stage that decided it (gate, model, human); a person's also keeps
 * what the proposal would do (domain/digest.ts proposalContentKey), its reviewer and when: it stands after an upgrade
 * or a change of settings while the entity's evidence is unchanged, however the new rules word the proposal.
 */
export type RememberedDecision = [
  proposalId: string,
  decision: 'approved' | 'rejected',
  stage: string,
  content?: string,
  reviewer?: string,
  at?: string,
  /** A person's decision on a PII tag: the tag's shape (judgment/pii/shape.ts), evidence for the same shape elsewhere. */
  shape?: string,
];

/**
 * MemoryEntry.rec: the record's digest; the entity's own, PII and evidence prints; its upstream, SQL tables and
 * foreign-key tables.
 */
export type RecordPrints = [string, string, string, string, string[], string[], string[]];

/** Whether `v` is a RecordPrints this version reads (memory written by another may hold anything). */
export function isRecordPrints(v: unknown): v is RecordPrints {
  const strings = (x: unknown) => Array.isArray(x) && x.every((y) => typeof y === 'string');
  return (
    Array.isArray(v) &&
    v.length === 7 &&
    v.slice(0, 4).every((x) => typeof x === 'string' && x !== '') &&
    v.slice(4).every(strings)
  );
}

/** What ARGUS remembers of one entity: the fingerprint its decisions rest on, whether they are all final. */
export interface MemoryEntry {
  fp: string;
  /**
   * The prints of its readings when judged ("ev pii tr": judgment/fingerprint.ts EffectivePrints): which agents a
   * change needs. Absent (an earlier version wrote it): every agent judges it when it changes.
   */
  p?: string;
  /** Every proposal was approved and written (or already there), or rejected; no failure, nothing left open. */
  final: boolean;
  /** The sweep that last judged it. */
  sweep: string;
  /** The scope (schema list) of that sweep, when the catalog has scopes. */
  s?: string;
  /** The entity's own fingerprint (without what it reads) when `st` was counted, and its figures then. */
  o?: string;
  st?: StatsVector;
  /**
   * For catalogs with record digests (CatalogAdapter.recordDigests): the record's digest, the entity's own, PII and
   * evidence prints, and what its record names (EntityRefs: upstream, SQL, foreign keys), all of that record. While
   * the digest stays (and `o` is that own print), a sweep takes these instead of reading the entity again.
   */
  rec?: RecordPrints;
  d?: RememberedDecision[];
}

/** One catalog's memory: for one judgment key, every entity's entry. */
export interface MemoryDoc {
  format: 'argus-memory';
  version: number;
  /** The catalog's audit key (its identity): memory for another catalog is never used. */
  catalogKey: string;
  judgmentKey: string;
  sweepId: string;
  savedAt: string;
  entities: Record<string, MemoryEntry>;
}

/** A load: the memory, none yet, or a reason it cannot be trusted (unreadable, newer, another catalog). */
export type MemoryRead = { status: 'ok'; doc: MemoryDoc } | { status: 'none' } | { status: 'untrusted'; why: string };

/** Changes a sweep makes to a catalog's memory. `replace`: start from nothing (judgment changed, memory untrusted). */
export interface MemoryUpdate {
  judgmentKey: string;
  sweepId: string;
  replace: boolean;
  /** Entries kept under this earlier key are kept too (only some agents' settings changed: agentsToRejudge). */
  keepFrom?: string;
  upserts: Record<string, MemoryEntry>;
  deletes: string[];
}

/**
 * Memory across sweeps, per catalog (keyed by its audit key), shared by every worker of a store: the file store
 * keeps one file per catalog, PostgreSQL one row per entity. Reading it never fails a sweep: anything that cannot
 * be trusted comes back `untrusted`, and the sweep judges everything and rewrites it.
 */
export interface MemoryBook {
  load(catalogKey: string): Promise<MemoryRead>;
  save(catalogKey: string, update: MemoryUpdate): Promise<void>;
  /** Forget entities (undo of a sweep that wrote to them): they are judged as new next time. */
  forget(catalogKey: string, entityIds: readonly string[]): Promise<void>;
}

/** The key of a catalog's memory in a store: its identity's memory key when wider than its audit key. */
export function memoryKeyOf(
  store: { auditKey(identity: CatalogIdentity, catalogName: string): string },
  identity: CatalogIdentity,
  catalogName: string,
): string {
  return store.auditKey(identity.memoryKey ? { ...identity, key: identity.memoryKey } : identity, catalogName);
}

/** Check a parsed memory document; `why` when it is not one this ARGUS may trust for `catalogKey`. */
export function checkMemoryDoc(doc: unknown, catalogKey: string): MemoryRead {
  const d = doc as Partial<MemoryDoc> | null;
  if (!d || typeof d !== 'object' || d.format !== 'argus-memory' || typeof d.version !== 'number')
    return { status: 'untrusted', why: 'the memory is not an ARGUS memory document' };
  if (d.version > MEMORY_VERSION)
    return {
      status: 'untrusted',
      why: `the memory was written by a newer ARGUS (format version ${d.version}, this one reads ${MEMORY_VERSION})`,
    };
  if (d.catalogKey !== catalogKey)
    return { status: 'untrusted', why: `the memory was written for another catalog (${String(d.catalogKey)})` };
  if (!d.entities || typeof d.entities !== 'object' || typeof d.judgmentKey !== 'string')
    return { status: 'untrusted', why: 'the memory document is incomplete' };
  return { status: 'ok', doc: d as MemoryDoc };
}

/** Apply an update to a document (or to nothing): what both stores save. */
export function applyMemoryUpdate(
  old: MemoryDoc | undefined,
  catalogKey: string,
  u: MemoryUpdate,
  now = new Date(),
): MemoryDoc {
  const keep =
    old && !u.replace && (old.judgmentKey === u.judgmentKey || old.judgmentKey === u.keepFrom) ? old.entities : {};
  const entities: Record<string, MemoryEntry> = { ...keep };
  for (const id of u.deletes) delete entities[id];
  Object.assign(entities, u.upserts);
  return {
    format: 'argus-memory',
    version: MEMORY_VERSION,
    catalogKey,
    judgmentKey: u.judgmentKey,
    sweepId: u.sweepId,
    savedAt: now.toISOString(),
    entities,
  };
}
