import type { CatalogEntity } from '../domain/catalog';
import type { ProposalChange } from '../domain/proposal';
import type { CatalogRef } from '../domain/sweep';

/** An entity record that failed validation: reported as a per-entity failure, never a failed sweep. */
export interface InvalidEntity {
  id: string;
  message: string;
}

export interface CatalogSnapshot {
  name: string;
  ids: string[];
}

/**
 * A catalog that cannot be used as a whole (not found, unreadable, not a catalog, refused as a target): raised
 * once, never retried; the message names the catalog and the cause in a person's words.
 */
export class CatalogError extends Error {
  override name = 'CatalogError';
}

/** What a catalog is, for the records ARGUS keeps about it. Never holds a secret (no connection string). */
export interface CatalogIdentity {
  kind: CatalogRef['kind'];
  /** Stable across workers and runs: the audit log and the applied index of this catalog are keyed by it. */
  key: string;
  /** Where it is, for people: a file path, a database and schemas, a dbt project. */
  label: string;
  /**
   * What memory across sweeps is keyed by, when wider than `key`: a PostgreSQL database whatever the schema list,
   * so a sweep naming the wrong schemas finds the database's memory and its entities gone (the fail-safe).
   */
  memoryKey?: string;
  /** The part of the memory's catalog this sweep reads (a schema list); sweeps forget only their own scope's gone. */
  scope?: string;
}

/** One approved repair to write. `landed`: what an earlier attempt recorded before it died (write-ahead intent). */
export interface RepairRequest {
  proposalId: string;
  entityId: string;
  change: ProposalChange;
  landed?: { before: unknown; after: unknown };
}

/** What became of one repair of a batch: a remote catalog that fails half way says exactly what landed. */
export type RepairOutcome =
  | {
      proposalId: string;
      status: 'written';
      before: unknown;
      after: unknown;
      /** The change was already in the catalog exactly as an earlier attempt of this run meant to write it. */
      landedEarlier: boolean;
    }
  | { proposalId: string; status: 'already' | 'kept_human' | 'conflict' | 'failed'; note: string };

/** One recorded write to take back. `unconfirmed`: from an intent only; it may never have reached the catalog. */
export interface RevertRequest {
  proposalId: string;
  entityId: string;
  change: ProposalChange;
  before: unknown;
  after: unknown;
  unconfirmed?: boolean;
}

export type RevertOutcome = {
  proposalId: string;
  /** `already_reverted`: the catalog holds the value from before (an earlier undo died before its records). */
  status: 'reverted' | 'already_reverted' | 'not_landed' | 'conflict';
  note: string;
};

/**
 * A catalog ARGUS reads and repairs. Reads are paged by entity ids; writes are batches with an outcome per
 * repair. Implementations: file/ (the embedded default), postgres/ and dbt/. Everything outside catalog/ uses this
 * interface only: no activity knows a path, a dialect or a file format.
 */
export interface CatalogAdapter {
  readonly identity: CatalogIdentity;
  /** The catalog's name and every entity id, in a stable order (pages are slices of it). */
  snapshot(): Promise<CatalogSnapshot>;
  /**
   * Entities by id; records that fail validation come back as `invalid`, never as an error. With `digests`, a
   * catalog that has recordDigests also gives each entity's, of the very record it was read from. With `once`, the
   * read is one pass over the whole catalog (change detection's scan): an adapter that keeps the entities it read for
   * the reads that follow need not keep these, which would push a page's working set out for records read once.
   */
  getEntities(
    ids: string[],
    opts?: { digests?: boolean; once?: boolean },
  ): Promise<{ entities: CatalogEntity[]; invalid: InvalidEntity[]; digests?: Map<string, string> }>;
  /**
   * Write a batch. Never overwrites a person's text unless `overwriteHumanText`. `beforeCommit` runs after the
   * outcomes are known and before any change becomes visible in the catalog (the write-ahead point): if it
   * throws, nothing is written.
   */
  applyRepairs(
    batch: RepairRequest[],
    opts: {
      overwriteHumanText: boolean;
      /** The sweep writing, for catalogs that keep it beside what they write (PostgreSQL's tag table). */
      sweepId?: string;
      beforeCommit?: (outcomes: RepairOutcome[]) => Promise<void>;
    },
  ): Promise<RepairOutcome[]>;
  /**
   * Each entity's own fingerprint, from what judgment reads of it (columns, types, keys, descriptions, tags,
   * exceptions, lineage, SQL): equal exactly when that is unchanged. `ids`: only these (one round trip, not one
   * per entity). Absent: ARGUS digests the entity as read.
   */
  fingerprints?(ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * For catalogs whose entity is exactly what its stored record holds (the file catalog): a digest of each record's
   * bytes as stored, so the same digest means the same entity. A sweep keeps what it computed of an entity with its
   * record's digest and does not read it again while the digest stays. Absent: every entity is read on every sweep.
   */
  recordDigests?(ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * What a reader of the sweep's report should know about the catalog as it now reads, in a person's words (a dbt
   * catalog.json older than the manifest, nodes left out); a few sentences at most, from what is already read.
   * Absent or empty: nothing to say.
   */
  notes?(): Promise<string[]>;
  /**
   * The sweep has read what it judges (its pages are done): let go of what is kept only to make the reads that
   * follow fast. Reads still work, from the source. Absent: nothing is kept that way.
   */
  release?(): void;
  /** Take recorded writes back, newest first as given; a value changed since is left alone (`conflict`). */
  revertRepairs(batch: RevertRequest[]): Promise<RevertOutcome[]>;
  /**
   * Up to `rows` values (an adapter caps it; PostgreSQL at 100) of each of `columns` of one entity, as text, null
   * kept; keyed by the column names given. The values stay in the calling process: never in a result, an error
   * message or a log. Raises CatalogError for an unknown entity or column, or a read the catalog refuses.
   * PostgreSQL reads the database; dbt reads through the project's own dbt (`dbt show`, one process per call); the
   * file catalog, which holds no data, leaves it out.
   */
  sampleColumnValues?(entityId: string, columns: string[], rows: number): Promise<Map<string, (string | null)[]>>;
}

/** Opens the catalog a sweep input names; raises CatalogError when it cannot be used. */
export type CatalogAdapterFactory = (ref: CatalogRef) => Promise<CatalogAdapter>;
