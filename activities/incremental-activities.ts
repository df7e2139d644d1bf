import { createHash } from 'node:crypto';
import type { CatalogAdapter } from '../catalog/adapter';
import type { CatalogEntity } from '../domain/catalog';
import { digest64, proposalContentKey } from '../domain/digest';
import type { Outcome, ProposalChange } from '../domain/proposal';
import { passOfPage } from '../domain/sweep';
import {
  addVector,
  emptyStats,
  isStatsVector,
  statsVector,
  type CatalogStats,
  type StatsVector,
} from '../judgment/catalog-stats';
import {
  effectiveFingerprints,
  entityPrints,
  readsFrom,
  refsOf,
  type EffectivePrints,
  type EntityPrints,
  type EntityRefs,
} from '../judgment/fingerprint';
import type { AgentName } from '../domain/proposal';
import type { CatalogContext } from '../judgment/catalog-context';
import { catalogContext } from './catalog-access';
import { agentsToRejudge, judgmentKey, type JudgmentSettings } from './judgment-key';
import { piiShapeOf, SHAPE_DECISIONS_DOC, type ShapeDecision } from '../judgment/pii/shape';
import {
  isRecordPrints,
  MEMORY_DECISIONS_PER_ENTITY,
  memoryKeyOf,
  type RecordPrints,
  type MemoryEntry,
  type MemoryRead,
  type RememberedDecision,
} from '../state/memory';
import type { StateStore, SweepLedger } from '../state/store';
import { sweepContext, type ActivityDeps } from './sweep-context';
import { heldForPeople } from './review-activities';
import { throwIfOutage, unlessOutage } from './failures';

/** Entities read at once while fingerprinting a catalog. */
const SCAN_CHUNK = 1000;

/** What the first pass's detection stored for the rest of the sweep (the report, the memory's update). */
export interface IncrementalDoc {
  judgmentKey: string;
  memoryKey: string;
  /** The catalog's scope in that memory (a schema list), when it has scopes. */
  scope?: string;
  incremental: boolean;
  /** Start the memory afresh when saving (it was untrusted, absent, or under another judgment key). */
  replace: boolean;
  counts: { new: number; changed: number; unchanged: number; gone: number; carriedOver: number; judged: number };
  /** Ids remembered but gone (bounded: the memory update deletes them; beyond the bound they simply stay). */
  goneIds: string[];
  note?: string;
  failSafe?: string;
  /** The catalog has record digests (the ledger's kept prints carry them, for the memory's `rec`). */
  recordDigests?: boolean;
  /**
   * The memory's judgment key when only some agents' settings changed since (agentsToRejudge): its entries stay,
   * the sweep's replace those of the entities it judged.
   */
  keepFrom?: string;
  /** Those agents: the only ones that judge again the entities unchanged since the memory (`agentsOnly`). */
  rejudgedBy?: AgentName[];
  agentsOnly?: string[];
}

export const incrementalDocName = 'incremental';
export const fingerprintsDocName = (round: number) => `fingerprints-${round}`;
export const selectionDocName = (round: number) => `selection-${round}`;
export const statsBeforeDocName = 'stats-before';
export const settledDocName = (round: number) => `settled-${round}`;
/**
 * People's decisions the memory kept under another judgment key, on entities whose evidence is unchanged: they stand
 * (their proposals, by what they would do, are not proposed again) and the memory keeps them.
 */
export const peoplesDecisionsDocName = 'peoples-decisions';

/** A pass's entities whose own ARGUS-written text alone changed: only the PII classifier reads that again. */
export const piiOnlyDocName = (round: number) => `pii-only-${round}`;
/** A pass's entities only what they read of others changed for: every agent but the PII classifier judges them. */
export const readersOnlyDocName = (round: number) => `readers-only-${round}`;
/** Entities whose change before a later pass no reading needs (ARGUS's own tags): remembered as they are now. */
export const absorbedDocName = (round: number) => `absorbed-${round}`;
/** A page's entities an agent has nothing to judge again on, per agent (a later pass's PII-only entities). */
const pageSkipDocName = (page: number) => `skip-page-${page}`;
/** Entities counted afresh by the first pass's scan: own fingerprint and figures (what the memory lacked). */
export const scanStatsDocName = 'entity-stats';
/** Every entity's figures as the first pass's scan found them (remembered or counted): its page's 'before'. */
export const figuresBeforeDocName = 'entity-figures-before';
/** A page's entities after its last write: own fingerprint and figures. */
export const pageStatsDocName = (page: number) => `entity-stats-after-${page}`;
const settledPageDocName = (page: number) => `settled-page-${page}`;
/**
 * A page whose PII classifier ran after the page's evidence write (pageFixedPoint): each entity's PII print as that
 * write left it, what the classifier read. Written only when that write changed something.
 */
export const piiReadDocName = (page: number) => `pii-read-${page}`;
/**
 * A page whose lineage flags were written before its drafter ran (pageFixedPoint): its entities' own prints and
 * reads as that write left them, what the drafter read of the page. Written only when that write changed something.
 */
export const lineageReadDocName = (page: number) => `lineage-read-${page}`;
/** Every entity's own prints and reads as the first pass's scan found them (a later pass's detection starts there). */
export const scanPrintsDocName = 'own-prints';
/** A page's entities' own prints and reads after its last write: what a later pass's detection lays over the scan's. */
export const pagePrintsDocName = (page: number) => `own-prints-after-${page}`;

/**
 * An entity's own prints and what it reads, as the ledger keeps them: own, pii, evidence, entities, names; then, for
 * catalogs with record digests, the record's digest and what it names (upstream, SQL, foreign keys; absent when
 * none): what the memory keeps as `rec`.
 */
type KeptPrints = [string, string, string, string[], string[], string?, [string[], string[], string[]]?];
const keep = (
  p: EntityPrints,
  r: { entities: string[]; names: string[] },
  refs?: EntityRefs,
  digest?: string,
): KeptPrints => {
  const out: KeptPrints = [p.own, p.pii, p.evidence, r.entities, r.names];
  if (refs === undefined || digest === undefined) return out;
  out.push(digest);
  // Most records name nothing: their (empty) references are left out.
  if (refs.up.length || refs.sql.length || refs.fk.length) out.push([refs.up, refs.sql, refs.fk]);
  return out;
};

/** What the memory keeps of an entity's record (MemoryEntry.rec), from what the ledger kept; none without a digest. */
function recordPrintsOf(k: KeptPrints | undefined): RecordPrints | undefined {
  const digest = k?.[5];
  if (!k || digest === undefined) return undefined;
  const [up = [], sql = [], fk = []] = k[6] ?? [];
  return [digest, k[0], k[1], k[2], up, sql, fk];
}

/** A later pass's page: the proposals earlier passes settled for its entities (loadCatalogPage stores them). */
export async function markSettled(
  ledger: SweepLedger,
  round: number,
  page: number,
  entityIds: string[],
): Promise<void> {
  const settled = (await ledger.doc<Record<string, string[]>>(settledDocName(round))) ?? {};
  const ids = entityIds.flatMap((id) => settled[id] ?? []);
  // Most pages have nothing settled: no document then (unsettledProposals reads a missing one as none).
  if (ids.length) await ledger.writeDoc(settledPageDocName(page), ids);
}

/**
 * Proposals of a page without those already settled: by an earlier pass of the sweep or an earlier sweep (their
 * ids), or by a person's decision on what they would do (their content keys, `c-…`).
 */
export async function unsettledProposals<T extends { id: string; entityId: string; change: ProposalChange }>(
  ledger: SweepLedger,
  page: number,
  proposals: T[],
): Promise<T[]> {
  const settled = await ledger.doc<string[]>(settledPageDocName(page));
  if (!settled?.length) return proposals;
  const skip = new Set(settled);
  const byContent = settled.some((k) => k.startsWith('c-'));
  return proposals.filter((p) => !skip.has(p.id) && !(byContent && skip.has(proposalContentKey(p.entityId, p.change))));
}

/** A person's decision as the memory keeps it: with what the proposal would do, who decided and when. */
function peoplesDecision(
  p: { id: string; entityId: string; change: ProposalChange },
  d: 'approved' | 'rejected',
  reviewer: string,
  at: string,
): RememberedDecision {
  const who = reviewer.replace(/^human:/, '');
  const content = proposalContentKey(p.entityId, p.change);
  return p.change.kind === 'pii_tag'
    ? [p.id, d, 'human', content, who, at, piiShapeOf(p.change)]
    : [p.id, d, 'human', content, who, at];
}

/**
 * People's decisions on PII tags by shape, from a catalog's memory (the latest per shape): what the gate takes as
 * evidence for proposals of the same shape elsewhere in that catalog. Never another catalog's: each has its memory.
 */
export function shapeDecisionsOf(entities: Readonly<Record<string, MemoryEntry>>): Record<string, ShapeDecision> {
  const out: Record<string, ShapeDecision> = {};
  for (const [entityId, m] of Object.entries(entities))
    for (const [proposalId, decision, stage, , reviewer, at, shape] of m.d ?? []) {
      if (stage !== 'human' || !shape || !at) continue;
      const was = out[shape];
      if (!was || was.at < at) out[shape] = { decision, reviewer: reviewer ?? 'a person', at, entityId, proposalId };
    }
  return out;
}
const MAX_GONE_IDS = 100_000;

/** A record's digest for its fingerprints: native (a catalog's records are digested on every sweep), 64 bits. */
const recordDigest = (text: string): string => createHash('sha1').update(text).digest('hex').slice(0, 16);

/** A pass's fingerprints doc keeps each entity's four as one string ("fp ev pii tr"); the memory keeps "ev pii tr". */
const packAll = (prints: ReadonlyMap<string, EffectivePrints>): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [id, p] of prints) out[id] = `${p.fp} ${p.ev} ${p.pii} ${p.tr}`;
  return out;
};
/** A packed string's prints; those it lacks (written by an earlier version) are empty, and compare as changed. */
function unpack(s: string | undefined): EffectivePrints | undefined {
  if (s === undefined) return undefined;
  const [fp = '', ev = '', pii = '', tr = ''] = s.split(' ');
  return { fp, ev, pii, tr };
}
const readingsOf = (p: EffectivePrints) => `${p.ev} ${p.pii} ${p.tr}`;

/**
 * What is judged again of an entity, from its fingerprints when it was last judged and now:
 * - `none`: nothing changed;
 * - `all` agents when its own evidence changed (its record apart from ARGUS's text and tags);
 * - `readers` (every agent but the PII classifier, which reads the entity alone) when only what it reads of
 *   others changed (an upstream entity's evidence, a name that now resolves);
 * - `pii` (the PII classifier alone) when only ARGUS's text on it changed (a description is evidence for its
 *   PII tags);
 * - `absorbed` when only ARGUS's PII tags on it changed: no reading needs them (a tag only stops another being
 *   proposed on its column).
 * A print missing on either side (written by an earlier version) counts as changed: `all`.
 */
export function rejudgeScope(
  before: EffectivePrints | undefined,
  now: EffectivePrints | undefined,
): 'all' | 'readers' | 'pii' | 'absorbed' | 'none' {
  if (before === undefined || now === undefined) return before === now ? 'none' : 'all';
  if (before.fp === now.fp) return 'none';
  if (!before.ev || !before.pii || !before.tr) return 'all';
  if (before.tr !== now.tr) return before.pii !== now.pii ? 'all' : 'readers';
  // Own evidence changed with the PII reading as the classifier last read it (it ran after the page's write).
  if (before.ev !== now.ev) return before.pii !== now.pii ? 'all' : 'readers';
  return before.pii !== now.pii ? 'pii' : 'absorbed';
}

/** What a pass leaves out per entity: the PII-only ones skip the drafter and the lineage checker, readers the PII classifier. */
export interface PassScopes {
  piiOnly: string[];
  readersOnly: string[];
}

/** The entities of a page `agent` has nothing to judge again on (none on most pages). */
export async function skippedOnPage(ledger: SweepLedger, page: number, agent: AgentName): Promise<Set<string>> {
  const skip = await ledger.doc<Partial<Record<AgentName, string[]>>>(pageSkipDocName(page));
  return new Set(skip?.[agent] ?? []);
}

async function writeScopes(ledger: SweepLedger, round: number, scopes: PassScopes): Promise<void> {
  await ledger.writeDoc(piiOnlyDocName(round), scopes.piiOnly);
  await ledger.writeDoc(readersOnlyDocName(round), scopes.readersOnly);
}

/**
 * A page's agents per entity (loadCatalogPage stores them): the PII-only entities skip the drafter and the lineage
 * checker, the readers-only ones the PII classifier. Returns the agents with nothing at all to do on the page (the
 * workflow does not start them).
 */
export async function markScopes(
  ledger: SweepLedger,
  page: number,
  entityIds: string[],
  scopes: { piiOnly: ReadonlySet<string>; readersOnly: ReadonlySet<string> },
): Promise<AgentName[]> {
  const pii = entityIds.filter((id) => scopes.piiOnly.has(id));
  const readers = entityIds.filter((id) => scopes.readersOnly.has(id));
  if (pii.length === 0 && readers.length === 0) return [];
  const skip: Partial<Record<AgentName, string[]>> = {};
  if (pii.length) skip['description-drafter'] = skip['lineage-checker'] = pii;
  if (readers.length) skip['pii-classifier'] = readers;
  await ledger.writeDoc(pageSkipDocName(page), skip);
  return (Object.keys(skip) as AgentName[]).filter((a) => skip[a]!.length === entityIds.length);
}

/**
 * Entities' own fingerprints (without what they read): the whole record's combines the adapter's, when it has one,
 * with the entity as read; the readings' (EntityPrints) rest on the entity as read, which holds all they read.
 */
async function ownPrints(
  catalog: CatalogAdapter,
  entities: readonly CatalogEntity[],
): Promise<Map<string, EntityPrints>> {
  const cheap = catalog.fingerprints ? await catalog.fingerprints(entities.map((e) => e.id)) : undefined;
  const out = new Map<string, EntityPrints>();
  for (const e of entities) {
    // The adapter's fingerprint and the entity as read, both: nothing the entity shows is ever missed.
    const adapterFp = cheap?.get(e.id);
    const p = entityPrints(e, recordDigest);
    out.set(e.id, adapterFp !== undefined ? { ...p, own: digest64(`${adapterFp}\0${p.own}`) } : p);
  }
  return out;
}

/**
 * Each entity's own fingerprint and figures, for the memory, and its own prints and reads, for a later pass's
 * detection (both written after a page's write).
 */
export async function entityStateOf(
  catalog: CatalogAdapter,
  entities: readonly CatalogEntity[],
  ctx: CatalogContext,
  digests?: ReadonlyMap<string, string>,
): Promise<{ figures: Record<string, [string, StatsVector]>; prints: Record<string, KeptPrints> }> {
  const own = await ownPrints(catalog, entities);
  const figures: Record<string, [string, StatsVector]> = {};
  const prints: Record<string, KeptPrints> = {};
  for (const e of entities) {
    const p = own.get(e.id)!;
    const refs = refsOf(e);
    figures[e.id] = [p.own, statsVector(e, p)];
    prints[e.id] = keep(p, readsFrom(e.id, refs, ctx), refs, digests?.get(e.id));
  }
  return { figures, prints };
}

/**
 * Every entity's effective fingerprint (its own and those its evidence reads, transitively), read through the
 * adapter in chunks; with `stats`, the catalog's coverage figures on the way: an entity whose own fingerprint is
 * the one `remembered` counted its figures at is not counted again (figures rest on the entity alone), the others
 * are counted and returned in `fresh`. Invalid records get a fingerprint of their own (judged, and failing, every
 * time).
 */
export async function scanCatalog(
  catalog: CatalogAdapter,
  ids: readonly string[],
  ctx: CatalogContext,
  withStats: boolean,
  remembered: Readonly<Record<string, MemoryEntry>> = {},
): Promise<{
  /** What each entity's decisions rest on (EffectivePrints.fp), and all three of its fingerprints. */
  fingerprints: Map<string, string>;
  prints: Map<string, EffectivePrints>;
  stats: CatalogStats;
  fresh: Record<string, [string, StatsVector]>;
  /** Each entity's own prints and what it reads (keptPrints packs them for a later pass's detection). */
  own: Map<string, EntityPrints>;
  reads: Map<string, { entities: string[]; names: string[] }>;
  /** With stats: every entity's figures (remembered or counted), which its first-pass page sums as its 'before'. */
  vectors: Record<string, StatsVector>;
  /** What each entity's record names, and its record's digest (catalogs with record digests). */
  refs: Map<string, EntityRefs>;
  digests: Map<string, string>;
  /** How many entities were read (the others' records were the ones the memory kept). */
  read: number;
}> {
  const own = new Map<string, EntityPrints>();
  const reads = new Map<string, { entities: string[]; names: string[] }>();
  const refs = new Map<string, EntityRefs>();
  const digests = new Map<string, string>();
  const stats = emptyStats();
  const fresh: Record<string, [string, StatsVector]> = {};
  const vectors: Record<string, StatsVector> = {};
  // An entity whose record is byte for byte the one the memory kept its prints, figures and references with is not
  // read again: its references are resolved in the catalog as it is now (a table created since may answer a name).
  const stored =
    catalog.recordDigests && Object.keys(remembered).length > 0 ? await catalog.recordDigests(ids) : undefined;
  const toRead: string[] = [];
  for (const id of ids) {
    const m = remembered[id];
    const d = stored?.get(id);
    if (
      d !== undefined &&
      isRecordPrints(m?.rec) &&
      m.rec[0] === d &&
      m.o === m.rec[1] &&
      (!withStats || isStatsVector(m.st))
    ) {
      const [, o, pii, evidence, up, sql, fk] = m.rec;
      const r = { up, sql, fk };
      own.set(id, { own: o, pii, evidence });
      refs.set(id, r);
      reads.set(id, readsFrom(id, r, ctx));
      digests.set(id, d);
      if (withStats) addVector(stats, (vectors[id] = m.st!));
    } else toRead.push(id);
  }
  for (let i = 0; i < toRead.length; i += SCAN_CHUNK) {
    const read = await catalog.getEntities(toRead.slice(i, i + SCAN_CHUNK), { digests: true, once: true });
    const fps = await ownPrints(catalog, read.entities);
    for (const e of read.entities as CatalogEntity[]) {
      const p = fps.get(e.id)!;
      const fp = p.own;
      const r = refsOf(e);
      own.set(e.id, p);
      refs.set(e.id, r);
      reads.set(e.id, readsFrom(e.id, r, ctx));
      const d = read.digests?.get(e.id);
      if (d !== undefined) digests.set(e.id, d);
      if (!withStats) continue;
      const m = remembered[e.id];
      if (m?.o === fp && isStatsVector(m.st)) addVector(stats, (vectors[e.id] = m.st));
      else {
        const v = statsVector(e, p);
        addVector(stats, (vectors[e.id] = v));
        fresh[e.id] = [fp, v];
      }
    }
    for (const bad of read.invalid) own.set(bad.id, { own: 'invalid', pii: 'invalid', evidence: 'invalid' });
  }
  const prints = effectiveFingerprints(own, reads);
  const fingerprints = new Map<string, string>();
  for (const [id, p] of prints) fingerprints.set(id, p.fp);
  return { fingerprints, prints, stats, fresh, own, reads, vectors, refs, digests, read: toRead.length };
}

const NO_READS = { entities: [], names: [] };

/** Own prints and reads as the ledger keeps them, for a later pass's detection to start from. */
function keptPrints(scan: {
  own: ReadonlyMap<string, EntityPrints>;
  reads: ReadonlyMap<string, { entities: string[]; names: string[] }>;
  refs: ReadonlyMap<string, EntityRefs>;
  digests: ReadonlyMap<string, string>;
}): Record<string, KeptPrints> {
  const kept: Record<string, KeptPrints> = {};
  for (const [id, p] of scan.own)
    kept[id] = keep(p, scan.reads.get(id) ?? NO_READS, scan.refs.get(id), scan.digests.get(id));
  return kept;
}

/**
 * A later pass's fingerprints without reading the catalog again: the first pass's scan, with each page's entities as
 * its last write left them laid over it (only a write changes an entity within a sweep; a person's edit made during
 * the sweep is seen by the next one). Undefined when the scan's prints are not in the ledger (a sweep started by an
 * earlier version): the catalog is scanned then.
 */
async function printsAfterWrites(ledger: SweepLedger): Promise<Map<string, EffectivePrints> | undefined> {
  const scan = await keptAfterWrites(ledger);
  if (!scan) return undefined;
  const own = new Map<string, EntityPrints>();
  const reads = new Map<string, { entities: string[]; names: string[] }>();
  for (const [id, [o, pii, evidence, entities, names]] of Object.entries(scan)) {
    own.set(id, { own: o, pii, evidence });
    reads.set(id, { entities, names });
  }
  return effectiveFingerprints(own, reads);
}

/**
 * The first pass's kept prints, then each page's as its last write left them, in page order: `lay` gets each
 * document in turn (the later ones laid over the earlier). False when the scan's prints are not in the ledger.
 */
async function layKeptAfterWrites(
  ledger: SweepLedger,
  lay: (doc: Record<string, KeptPrints>) => void,
): Promise<boolean> {
  const scan = await ledger.doc<Record<string, KeptPrints>>(scanPrintsDocName);
  if (!scan) return false;
  lay(scan);
  for (const n of (await ledger.pageNumbers()).sort((a, b) => a - b))
    lay((await ledger.doc<Record<string, KeptPrints>>(pagePrintsDocName(n))) ?? {});
  return true;
}

/** The first pass's kept prints with each page's entities as its last write left them laid over (printsAfterWrites). */
async function keptAfterWrites(ledger: SweepLedger): Promise<Record<string, KeptPrints> | undefined> {
  const out: Record<string, KeptPrints> = {};
  return (await layKeptAfterWrites(ledger, (doc) => Object.assign(out, doc))) ? out : undefined;
}

/**
 * What the memory keeps of keptAfterWrites: each entity's record prints (absent: no record digest), the reads' lists
 * dropped as each document comes: at 100,000 entities the whole kept prints are some 60 MB more than these.
 */
async function recordPrintsAfterWrites(ledger: SweepLedger): Promise<Map<string, RecordPrints> | undefined> {
  const out = new Map<string, RecordPrints>();
  const laid = await layKeptAfterWrites(ledger, (doc) => {
    for (const [id, k] of Object.entries(doc)) {
      const rec = recordPrintsOf(k);
      if (rec) out.set(id, rec);
      else out.delete(id);
    }
  });
  return laid ? out : undefined;
}

/**
 * What a page's later agents read after its lineage write (pageFixedPoint): the effective prints of the page's
 * entities (`kept`, as that write left them), each entity off the page standing as it was when the pass started
 * (`before`, a pass's fingerprints doc). Another page's write is never taken as read: an entity reading one is
 * judged again (conservatively, when that write came first).
 */
function readAfterLineage(
  kept: Record<string, KeptPrints>,
  before: Record<string, string>,
): Map<string, EffectivePrints> {
  const own = new Map<string, EntityPrints>();
  const reads = new Map<string, { entities: string[]; names: string[] }>();
  for (const [id, [o, pii, evidence, entities, names]] of Object.entries(kept)) {
    own.set(id, { own: o, pii, evidence });
    reads.set(id, { entities, names });
  }
  // Off the page: what it read as at the pass's start, with no reads of its own (its print already holds them).
  for (const { entities } of reads.values())
    for (const d of entities) {
      if (own.has(d)) continue;
      const b = unpack(before[d]);
      if (b) own.set(d, { own: b.fp, pii: b.pii, evidence: b.ev });
    }
  const all = effectiveFingerprints(own, reads);
  return new Map(Object.keys(kept).map((id) => [id, all.get(id)!]));
}

/** Load a catalog's memory; a store that cannot read it yields `untrusted`, never an error. */
async function loadMemory(store: StateStore, key: string): Promise<MemoryRead> {
  try {
    return await store.memory.load(key);
  } catch (e) {
    // A database away is retried with the attempt; judging a whole catalog again is for a memory that is lost.
    throwIfOutage(e);
    return { status: 'untrusted', why: `the memory could not be read (${(e as Error).message.slice(0, 300)})` };
  }
}

/**
 * Compare a catalog's fingerprints with its memory: what is new, changed, unchanged, gone, and which entities
 * need judging (everything not carried over). Pure apart from its inputs; shared by the sweep and the plan.
 */
export function classify(
  ids: readonly string[],
  fingerprints: ReadonlyMap<string, string>,
  memory: MemoryRead,
  opts: { judgmentKey: string; incremental: boolean; goneLimit: number; scope?: string },
): Omit<IncrementalDoc, 'memoryKey'> & { toJudge: string[] } {
  const doc = memory.status === 'ok' ? memory.doc : undefined;
  const sameKey = doc?.judgmentKey === opts.judgmentKey;
  // Only some agents' own settings changed (value sampling, overwriteHumanText, the agent list): an unchanged entity
  // is judged by those agents alone, or carried over when none of them runs.
  const rejudge = doc && !sameKey ? agentsToRejudge(doc.judgmentKey, opts.judgmentKey) : 'all';
  const someAgents = !sameKey && rejudge !== 'all' ? rejudge : undefined;
  const carry = opts.incremental && (sameKey || someAgents !== undefined);
  const agentsOnly: string[] = [];
  const counts = { new: 0, changed: 0, unchanged: 0, gone: 0, carriedOver: 0, judged: 0 };
  const toJudge: string[] = [];
  const present = new Set(ids);
  for (const id of ids) {
    const e = doc?.entities[id];
    if (!e) counts.new++;
    else if (e.fp !== fingerprints.get(id)) counts.changed++;
    else {
      counts.unchanged++;
      if (carry && e.final) {
        if (someAgents?.length) agentsOnly.push(id);
        else {
          counts.carriedOver++;
          continue;
        }
      }
    }
    toJudge.push(id);
  }
  counts.judged = toJudge.length;
  // A sweep answers for its own scope: what another schema list's sweeps remember is theirs to forget. A scope
  // the memory has never seen (a schema list changed or mistyped) is checked against everything remembered.
  const all = doc ? Object.entries(doc.entities) : [];
  const ours = all.filter(([, e]) => e.s === opts.scope);
  const mine = ours.length > 0 || opts.scope === undefined ? ours : all;
  const goneIds = mine.filter(([id]) => !present.has(id)).map(([id]) => id);
  counts.gone = goneIds.length;
  const remembered = mine.length;
  let note: string | undefined;
  if (memory.status === 'untrusted') note = `memory not used: ${memory.why}; every entity judged, the memory rewritten`;
  else if (memory.status === 'none') note = 'no memory of this catalog yet: every entity judged';
  else if (someAgents !== undefined && opts.incremental)
    note =
      someAgents.length > 0
        ? `the settings of ${someAgents.join(', ')} changed since the memory was written: ${agentsOnly.length} ` +
          'unchanged entities judged again by those agents alone'
        : 'an agent was dropped since the memory was written: nothing judged again for it';
  else if (!sameKey)
    note =
      'the judgment changed since the memory was written (rules, prompts, models, review mode or settings): every entity judged';
  else if (!opts.incremental) note = 'a full sweep ("incremental": false): every entity judged';
  const failSafe =
    remembered > 0 && counts.gone / remembered > opts.goneLimit
      ? `${counts.gone} of the ${remembered} entities remembered from earlier sweeps are gone (more than ` +
        `${Math.round(opts.goneLimit * 100)} %): they were not treated as deleted and their memory was kept; ` +
        'check the schema list, the dbt target or the catalog file'
      : undefined;
  return {
    judgmentKey: opts.judgmentKey,
    incremental: opts.incremental,
    replace: memory.status !== 'ok' || (!sameKey && someAgents === undefined),
    ...(someAgents !== undefined && doc ? { keepFrom: doc.judgmentKey } : {}),
    ...(someAgents?.length && agentsOnly.length ? { rejudgedBy: someAgents, agentsOnly } : {}),
    counts,
    goneIds: goneIds.slice(0, MAX_GONE_IDS),
    ...(note ? { note } : {}),
    ...(failSafe ? { failSafe } : {}),
    toJudge,
  };
}

/**
 * What a sweep of `catalog` would judge, without a ledger (`argus sweep plan`): its fingerprints against the
 * catalog's memory. Reads the memory, writes nothing.
 */
export async function previewChanges(
  store: StateStore,
  catalog: CatalogAdapter,
  catalogName: string,
  opts: { judgment: JudgmentSettings; incremental: boolean; goneLimit: number; rulesVersion?: string },
): Promise<ReturnType<typeof classify>> {
  const ctx = await catalogContext(catalog);
  const ids = (await catalog.snapshot()).ids;
  const memory = await loadMemory(store, memoryKeyOf(store, catalog.identity, catalogName));
  const jk = judgmentKey(opts.judgment, opts.rulesVersion);
  // As the sweep does: a record the memory kept (under this judgment key) byte for byte is not read again.
  const remembered = memory.status === 'ok' && memory.doc.judgmentKey === jk ? memory.doc.entities : {};
  const { fingerprints } = await scanCatalog(catalog, ids, ctx, false, remembered);
  return classify(ids, fingerprints, memory, {
    judgmentKey: jk,
    incremental: opts.incremental,
    goneLimit: opts.goneLimit,
    ...(catalog.identity.scope !== undefined ? { scope: catalog.identity.scope } : {}),
  });
}

/** A proposal's decision as memory keeps it, when it is final (approved and in the catalog, or rejected). */
function finalDecision(o: Outcome | undefined, inCatalog: boolean): 'approved' | 'rejected' | undefined {
  if (o?.decision === 'rejected') return 'rejected';
  if (o?.decision === 'approved' && inCatalog) return 'approved';
  return undefined;
}

/** Change detection up front, passes that reach the fixed point, and the memory's update at the end. */
export function createIncrementalActivities(deps: ActivityDeps) {
  const { store, ledgerFor, catalogOf } = sweepContext(deps);
  return {
    /**
     * Pass 0: fingerprint every entity, compare with the catalog's memory, store what needs judging as the
     * sweep's selection and the catalog's figures before the sweep. Pass k > 0: the entities whose fingerprint
     * changed since pass k-1 (this sweep's writes changed their evidence) become pass k's selection. Returns counts.
     */
    async detectChanges(input: {
      ledgerKey: string;
      round: number;
      incremental?: boolean;
      goneLimit?: number;
      judgment?: JudgmentSettings;
      /** Round > 0: the pages of the pass before ([first, end)), whose PII readings after their writes count. */
      passPages?: [number, number];
    }): Promise<{
      toJudge: number;
      /** Round > 0: of `toJudge`, the entities judged again for what they read of others (another entity's write). */
      crossPage?: number;
      new: number;
      changed: number;
      unchanged: number;
      gone: number;
      carriedOver: number;
      note?: string;
      failSafe?: string;
    }> {
      const ledger = ledgerFor(input.ledgerKey);
      const { meta, catalog } = await catalogOf(ledger);
      const ctx = await catalogContext(catalog);
      const ids = (await catalog.snapshot()).ids;
      if (input.round > 0) {
        const prints = (await printsAfterWrites(ledger)) ?? (await scanCatalog(catalog, ids, ctx, false)).prints;
        await ledger.writeDoc(fingerprintsDocName(input.round), packAll(prints));
        const before = (await ledger.doc<Record<string, string>>(fingerprintsDocName(input.round - 1))) ?? {};
        // What a page's later agents read after its earlier parts were written (pageFixedPoint): the drafter after
        // the lineage write, the PII classifier after the description write. Their judgments rest on that.
        const piiRead = new Map<string, string>();
        const lineageRead = new Map<string, EffectivePrints>();
        if (input.passPages)
          for (let n = input.passPages[0]; n < input.passPages[1]; n++) {
            const kept = await ledger.doc<Record<string, KeptPrints>>(lineageReadDocName(n));
            if (kept) for (const [id, p] of readAfterLineage(kept, before)) lineageRead.set(id, p);
            for (const [id, pii] of Object.entries((await ledger.doc<Record<string, string>>(piiReadDocName(n))) ?? {}))
              piiRead.set(id, pii);
          }
        const changed: string[] = [];
        const scopes: PassScopes = { piiOnly: [], readersOnly: [] };
        const absorbed: string[] = [];
        let crossPage = 0;
        for (const id of ids) {
          let was = unpack(before[id]);
          const afterLineage = lineageRead.get(id);
          if (was && afterLineage) was = { ...was, ev: afterLineage.ev, pii: afterLineage.pii, tr: afterLineage.tr };
          const read = piiRead.get(id);
          if (was && read !== undefined) was = { ...was, pii: read };
          const now = prints.get(id);
          const scope = rejudgeScope(was, now);
          if (scope === 'none') continue;
          if (scope !== 'absorbed' && was && now && was.tr !== now.tr) crossPage++;
          if (scope === 'absorbed') absorbed.push(id);
          else changed.push(id);
          if (scope === 'pii') scopes.piiOnly.push(id);
          else if (scope === 'readers') scopes.readersOnly.push(id);
        }
        await writeScopes(ledger, input.round, scopes);
        await ledger.writeDoc(absorbedDocName(input.round), absorbed);
        // What earlier passes approved (or hold for people) is not proposed again: it is written or waiting. A
        // rejection is reviewed again, on the changed evidence.
        const selected = new Set(changed);
        const settled: Record<string, string[]> = {};
        // What stood at the sweep's start (people's decisions above all) stands in every pass.
        const atStart = (await ledger.doc<Record<string, string[]>>(settledDocName(0))) ?? {};
        for (const id of changed) if (atStart[id]?.length) settled[id] = [...atStart[id]];
        for (const n of await ledger.pageNumbers()) {
          const outcomes = new Map(
            (await unlessOutage(ledger.outcomes(n), [] as Outcome[])).map((o) => [o.proposalId, o]),
          );
          for (const p of await unlessOutage(ledger.proposals(n), [])) {
            const o = outcomes.get(p.id);
            if (selected.has(p.entityId) && o && (o.decision === 'approved' || heldForPeople(o)))
              (settled[p.entityId] ??= []).push(p.id);
          }
        }
        await ledger.writeDoc(settledDocName(input.round), settled);
        await ledger.writeDoc(selectionDocName(input.round), changed);
        return {
          toJudge: changed.length,
          crossPage,
          new: 0,
          changed: changed.length,
          unchanged: 0,
          gone: 0,
          carriedOver: 0,
        };
      }
      const memoryKey = memoryKeyOf(store, catalog.identity, meta.catalogName);
      const scope = catalog.identity.scope;
      const memory = await loadMemory(store, memoryKey);
      const jk = judgmentKey(
        input.judgment ?? {
          agentBackend: 'rules',
          agents: [],
          review: 'mechanical',
          models: [],
          overwriteHumanText: false,
        },
        deps.rulesVersion,
      );
      // Figures remembered under the same rules and shared settings were counted by the same code (catalog-stats is
      // judgment): the same judgment key, or one only some agents' own settings set apart.
      const sameRules = memory.status === 'ok' && agentsToRejudge(memory.doc.judgmentKey, jk) !== 'all';
      const remembered = memory.status === 'ok' && sameRules ? memory.doc.entities : {};
      const scan = await scanCatalog(catalog, ids, ctx, true, remembered);
      const { fingerprints, prints, stats, fresh, vectors } = scan;
      await ledger.writeDoc(statsBeforeDocName, stats);
      await ledger.writeDoc(scanStatsDocName, fresh);
      const { toJudge, ...doc } = classify(ids, fingerprints, memory, {
        judgmentKey: jk,
        incremental: input.incremental ?? true,
        goneLimit: input.goneLimit ?? 0.5,
        ...(scope !== undefined ? { scope } : {}),
      });
      // The prints a later pass compares with, and the memory keeps, of the entities judged: with none judged,
      // nothing is written and no later pass runs (night after night on an unchanged catalog).
      if (toJudge.length > 0) {
        await ledger.writeDoc(fingerprintsDocName(0), packAll(prints));
        await ledger.writeDoc(scanPrintsDocName, keptPrints(scan));
        await ledger.writeDoc(figuresBeforeDocName, vectors);
      }
      await ledger.writeSelection(toJudge);
      await ledger.writeDoc(selectionDocName(0), toJudge);
      // A changed entity is judged by the agents that read what changed (rejudgeScope), when the memory kept its
      // readings' prints under this judgment key; otherwise by all of them.
      const scopes: PassScopes = { piiOnly: [], readersOnly: [] };
      if (!doc.replace && (input.incremental ?? true) && memory.status === 'ok') {
        // An agent whose settings changed judges every entity judged (a scope that leaves it out is not taken).
        const by = doc.rejudgedBy ?? [];
        const needsPii = by.includes('pii-classifier');
        const needsOthers = by.some((a) => a !== 'pii-classifier');
        for (const id of toJudge) {
          const m = memory.doc.entities[id];
          if (!m?.p || !m.final) continue;
          const scope = rejudgeScope(unpack(`${m.fp} ${m.p}`), prints.get(id));
          // A change to ARGUS's own tags between sweeps (a person removed one) is read by the PII classifier alone.
          // A change to ARGUS's own text is not: the memory was saved after the sweep's writes, so a person removed
          // or edited a description ARGUS wrote, and what there is to describe changed: every agent judges it, as a
          // sweep without memory would (within a sweep, `pii` is the page's own description write: passes below).
          if (scope === 'absorbed' && !needsOthers) scopes.piiOnly.push(id);
          else if (scope === 'readers' && !needsPii) scopes.readersOnly.push(id);
        }
        // Unchanged entities judged again only for the agents whose settings changed.
        const only = new Set(doc.agentsOnly ?? []);
        if (only.size > 0) {
          const drop = (list: string[]) => list.filter((id) => !only.has(id));
          scopes.piiOnly = drop(scopes.piiOnly);
          scopes.readersOnly = drop(scopes.readersOnly);
          if (by.length === 1 && by[0] === 'pii-classifier') scopes.piiOnly.push(...only);
          else if (!by.includes('pii-classifier')) scopes.readersOnly.push(...only);
        }
      }
      await writeScopes(ledger, 0, scopes);
      // A person's rejection stands while the entity is judged again for other reasons: it is not proposed again.
      let peopleStand = 0;
      if (memory.status === 'ok' && (memory.doc.judgmentKey === jk || doc.keepFrom !== undefined)) {
        const settled: Record<string, string[]> = {};
        for (const id of toJudge) {
          // Approved ones are in the catalog (an undo forgets the entity); a person's rejection stands.
          const rejected = (memory.doc.entities[id]?.d ?? []).filter(
            ([, d, stage]) => d === 'approved' || stage === 'human',
          );
          if (rejected.length) settled[id] = rejected.map(([pid]) => pid);
        }
        await ledger.writeDoc(settledDocName(0), settled);
      } else if (memory.status === 'ok') {
        // Under another judgment key (an upgrade, a setting changed) a person's decision still stands while the
        // entity's evidence is what it was when they decided: a proposal that would do the same is not made again,
        // however the new rules word it.
        const settled: Record<string, string[]> = {};
        const carried: Record<string, RememberedDecision[]> = {};
        for (const id of toJudge) {
          const m = memory.doc.entities[id];
          if (!m || m.fp !== fingerprints.get(id)) continue;
          const people = (m.d ?? []).filter(([, , stage, content]) => stage === 'human' && content !== undefined);
          if (people.length === 0) continue;
          settled[id] = people.map(([, , , content]) => content!);
          carried[id] = people;
          peopleStand += people.length;
        }
        await ledger.writeDoc(settledDocName(0), settled);
        await ledger.writeDoc(peoplesDecisionsDocName, carried);
      }
      // A person's decision on a PII tag is evidence for the same shape elsewhere in the catalog (the gate reads it),
      // whatever the judgment key: an upgrade does not forget what a steward said.
      if (memory.status === 'ok') {
        const shapes = shapeDecisionsOf(memory.doc.entities);
        if (Object.keys(shapes).length > 0) await ledger.writeDoc(SHAPE_DECISIONS_DOC, shapes);
      }
      if (peopleStand > 0)
        doc.note = [doc.note, `${peopleStand} decisions people made on entities unchanged since stand`]
          .filter(Boolean)
          .join('; ');
      await ledger.writeDoc(incrementalDocName, {
        ...doc,
        memoryKey,
        ...(scope !== undefined ? { scope } : {}),
        ...(catalog.recordDigests ? { recordDigests: true } : {}),
      } satisfies IncrementalDoc);
      return {
        toJudge: toJudge.length,
        ...doc.counts,
        ...(doc.note ? { note: doc.note } : {}),
        ...(doc.failSafe ? { failSafe: doc.failSafe } : {}),
      };
    },

    /**
     * Remember what this sweep decided: per entity judged, the fingerprint of its last pass and its decisions,
     * final or not; entities gone are forgotten unless the fail-safe tripped. A dry run remembers nothing.
     * Idempotent: a retry saves the same update.
     */
    async rememberSweep(input: {
      ledgerKey: string;
      sweepId: string;
      /** The first page of each pass, in order. */
      roundFirstPages: number[];
      /** Entities a whole activity failed for (the workflow's failures): their decisions stay open. */
      failedEntities: string[];
      dryRun: boolean;
    }): Promise<{ remembered: number; forgotten: number }> {
      if (input.dryRun) return { remembered: 0, forgotten: 0 };
      const ledger = ledgerFor(input.ledgerKey);
      const inc = await ledger.doc<IncrementalDoc>(incrementalDocName);
      if (!inc) return { remembered: 0, forgotten: 0 };
      const pages = await ledger.pageNumbers();
      const judgedIn = new Map<string, number>();
      // Per entity, its proposals whose last decision is not final, and whether any step failed it on any page.
      const openProposals = new Map<string, Set<string>>();
      const everFailed = new Set<string>();
      const failed = new Set(input.failedEntities);
      const entries: Record<string, MemoryEntry> = {};
      const decisions = new Map<string, Map<string, RememberedDecision>>();
      const now = new Date().toISOString();
      // Each entity's own fingerprint and figures as the sweep left them: after its page's last write, else as the
      // first pass's scan counted them (absent: as the memory already had them).
      const figures: Record<string, [string, StatsVector]> = {
        ...((await ledger.doc<Record<string, [string, StatsVector]>>(scanStatsDocName)) ?? {}),
      };
      // Each detection's fingerprints (the passes' and the one after the last pass, when it ran), one at a time: the
      // pages come in order, so a pass's are read when its first page comes and let go when the next pass's are.
      // Detections run in order too: one missing (the sweep stopped before it) means none after it ran.
      let fpRound = -1;
      let fps: Record<string, string> | undefined;
      let detected = pages.length > 0;
      const detection = async (round: number) => {
        while (detected && fpRound < round && fpRound < input.roundFirstPages.length) {
          fpRound++;
          fps = await ledger.doc<Record<string, string>>(fingerprintsDocName(fpRound));
          if (fps === undefined) detected = false;
          else if (fpRound > 0) await absorb(fpRound, fps);
        }
        return detected && fpRound === round ? fps : undefined;
      };
      // An entity whose change after it was judged no reading needs (ARGUS's own tags) is remembered as it is then: as
      // each later detection found it, the entry of the pass that judged it (a later pass judging it again replaces it).
      const absorb = async (round: number, prints: Record<string, string>) => {
        for (const id of (await ledger.doc<string[]>(absorbedDocName(round))) ?? []) {
          const e = entries[id];
          const p = unpack(prints[id]);
          if (e && p !== undefined && (judgedIn.get(id) ?? round) < round) [e.fp, e.p] = [p.fp, readingsOf(p)];
        }
      };
      for (const n of pages) {
        let ids: string[];
        try {
          ids = await ledger.pageIds(n);
        } catch (e) {
          throwIfOutage(e);
          continue; // the page never loaded: its entities stay as the memory had them
        }
        Object.assign(figures, (await ledger.doc<Record<string, [string, StatsVector]>>(pageStatsDocName(n))) ?? {});
        const round = passOfPage(input.roundFirstPages, n);
        const outcomes = new Map(
          (await unlessOutage(ledger.outcomes(n), [] as Outcome[])).map((o) => [o.proposalId, o]),
        );
        const w = await unlessOutage(ledger.allWrites(n), undefined);
        const inCatalog = new Set([...(w?.written ?? []), ...(w?.already ?? []), ...(w?.keptHuman ?? [])]);
        for (const f of await ledger.failures(n)) everFailed.add(f.entity);
        for (const p of await unlessOutage(ledger.proposals(n), [])) {
          const o = outcomes.get(p.id);
          const d = finalDecision(o, inCatalog.has(p.id));
          // A proposal's last decision in the sweep counts: one left open in a pass and not proposed again in a
          // later one (a later pass may run fewer agents) keeps its entity open.
          let open = openProposals.get(p.entityId);
          if (!d) {
            if (!open) openProposals.set(p.entityId, (open = new Set()));
            open.add(p.id);
            continue;
          }
          open?.delete(p.id);
          let m = decisions.get(p.entityId);
          if (!m) decisions.set(p.entityId, (m = new Map()));
          m.delete(p.id);
          m.set(
            p.id,
            o!.reviewer.startsWith('human:') ? peoplesDecision(p, d, o!.reviewer, now) : [p.id, d, o!.reviewer],
          );
        }
        const roundPrints = await detection(round);
        for (const id of ids) {
          const prints = unpack(roundPrints?.[id]);
          if (prints === undefined) continue;
          judgedIn.set(id, round);
          entries[id] = {
            fp: prints.fp,
            p: readingsOf(prints),
            final: false, // settled below, once every page is read
            sweep: input.sweepId,
            ...(inc.scope !== undefined ? { s: inc.scope } : {}),
          };
        }
      }
      // The detections after the last page's pass (the one after the last pass above all).
      await detection(input.roundFirstPages.length);
      fps = undefined;
      for (const [id, e] of Object.entries(entries)) {
        e.final = !openProposals.get(id)?.size && !everFailed.has(id) && !failed.has(id);
        const d = [...(decisions.get(id)?.values() ?? [])].slice(-MEMORY_DECISIONS_PER_ENTITY);
        decisions.delete(id);
        if (d.length) e.d = d;
      }
      for (const [id, e] of Object.entries(entries)) {
        const f = figures[id];
        if (f) [e.o, e.st] = f;
      }
      // With each entity's own fingerprint, what it was computed from (catalogs with record digests): while the record
      // stays byte for byte the same, the next sweep need not read it. Only prints of the same state as `o` count.
      const afterWrites = inc.recordDigests ? await recordPrintsAfterWrites(ledger) : undefined;
      const recordOf = (id: string, o: string | undefined) => {
        const rec = o === undefined ? undefined : afterWrites?.get(id);
        return rec?.[1] === o ? rec : undefined;
      };
      for (const [id, e] of Object.entries(entries)) {
        const rec = recordOf(id, e.o);
        if (rec) e.rec = rec;
      }
      // People's decisions kept under the judgment key before this one, on unchanged evidence: they stood in this
      // sweep (nothing proposed them again) and stay remembered.
      const carried = (await ledger.doc<Record<string, RememberedDecision[]>>(peoplesDecisionsDocName)) ?? {};
      for (const [id, kept] of Object.entries(carried)) {
        const e = entries[id];
        if (!e) continue;
        const own = new Set((e.d ?? []).map(([, , , c]) => c).filter(Boolean));
        const stand = kept.filter(([, , , c]) => c && !own.has(c));
        if (stand.length) e.d = [...stand, ...(e.d ?? [])].slice(-MEMORY_DECISIONS_PER_ENTITY);
      }
      // People's rejections stay remembered while the entity is judged again (they were not proposed again).
      const deletes = inc.failSafe ? [] : inc.goneIds;
      const figured = Object.keys(figures).length > 0;
      // Nothing judged, counted or gone (an unchanged catalog): the memory stays as it is, unread and unwritten.
      if (!inc.replace && !inc.keepFrom && Object.keys(entries).length === 0 && !figured && deletes.length === 0)
        return { remembered: 0, forgotten: 0 };
      if (!inc.replace) {
        const old = await loadMemory(store, inc.memoryKey);
        if (old.status === 'ok' && (old.doc.judgmentKey === inc.judgmentKey || old.doc.judgmentKey === inc.keepFrom)) {
          for (const [id, e] of Object.entries(entries)) {
            const was = old.doc.entities[id];
            const kept = (was?.d ?? []).filter(
              ([pid, d, stage]) => d === 'rejected' && stage === 'human' && !e.d?.some(([x]) => x === pid),
            );
            if (kept.length) e.d = [...kept, ...(e.d ?? [])].slice(-MEMORY_DECISIONS_PER_ENTITY);
            // Not counted afresh: the entity is as the memory counted it.
            if (e.st === undefined && was?.o !== undefined && was.st !== undefined) {
              [e.o, e.st] = [was.o, was.st];
              const rec = recordOf(id, e.o) ?? was.rec;
              if (rec) e.rec = rec;
            }
          }
          // Carried over but counted afresh (the memory had no figures for it yet): only the figures change.
          for (const [id, f] of Object.entries(figures)) {
            const was = old.doc.entities[id];
            if (!entries[id] && was) {
              const rec = recordOf(id, f[0]);
              entries[id] = { ...was, o: f[0], st: f[1], ...(rec ? { rec } : {}) };
            }
          }
          // Carried over as counted, its record read this time without a digest the memory has: the digest is kept
          // now (a memory written by an earlier version, or a record whose text changed and not what it says).
          for (const id of afterWrites?.keys() ?? []) {
            const was = old.doc.entities[id];
            if (entries[id] || !was) continue;
            const rec = recordOf(id, was.o);
            if (rec && (!isRecordPrints(was.rec) || was.rec[0] !== rec[0])) entries[id] = { ...was, rec };
          }
        }
      }
      await store.memory.save(inc.memoryKey, {
        judgmentKey: inc.judgmentKey,
        sweepId: input.sweepId,
        replace: inc.replace,
        ...(inc.keepFrom ? { keepFrom: inc.keepFrom } : {}),
        upserts: entries,
        deletes,
      });
      return { remembered: Object.keys(entries).length, forgotten: deletes.length };
    },
  };
}
