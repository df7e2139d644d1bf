import { z } from 'zod';
import { PiiCategory } from './pii-category';

/** Version of the catalog file format this build reads and writes. */
export const CATALOG_FORMAT = 'argus-catalog' as const;
export const CATALOG_FORMAT_VERSION = 1 as const;

/** Who wrote a piece of catalog text: a person (never overwritten by default) or ARGUS. */
export const TextSource = z.enum(['human', 'argus']);
export type TextSource = z.infer<typeof TextSource>;

// The categories live in a module of their own: what imports only them (the workflows, through domain/proposal.ts)
// does not build every catalog schema below, and workflow code evaluates its modules once per workflow.
export { PiiCategory } from './pii-category';

/** A governance tag on a column. Every tag carries a category, a confidence and a one-line explanation. */
export const PiiTag = z.object({
  kind: z.literal('pii'),
  category: PiiCategory,
  confidence: z.number().min(0).max(1),
  explanation: z.string().min(1).max(300),
  source: TextSource,
  /** Proposal that wrote this tag (absent for human tags): lets `argus undo` find it. */
  proposalId: z.string().optional(),
});
export type PiiTag = z.infer<typeof PiiTag>;

/** The type of a column whose catalog does not know it (a dbt project without catalog.json): not a type to restate. */
export const UNKNOWN_COLUMN_TYPE = 'unknown';

export const CatalogColumn = z.object({
  name: z.string().min(1),
  type: z.string().min(1),
  nullable: z.boolean().default(true),
  primary_key: z.boolean().default(false),
  /** `table.column` this column references. */
  foreign_key: z.string().optional(),
  description: z.string().optional(),
  description_source: TextSource.optional(),
  tags: z.array(PiiTag).default([]),
});
export type CatalogColumn = z.infer<typeof CatalogColumn>;

export const EntityKind = z.enum(['table', 'view']);
export type EntityKind = z.infer<typeof EntityKind>;

/**
 * One table or view. `id` is unique in the catalog and is what histories carry.
 * `upstream` is the recorded lineage: ids of the entities this one reads from.
 */
export const CatalogEntity = z.object({
  id: z.string().min(1).max(300),
  database: z.string().min(1),
  schema: z.string().optional(),
  name: z.string().min(1),
  kind: EntityKind,
  /** Free-form layer label such as raw, staging, mart, reporting. */
  layer: z.string().optional(),
  description: z.string().optional(),
  description_source: TextSource.optional(),
  columns: z.array(CatalogColumn).min(1),
  upstream: z.array(z.string()).default([]),
  /** View definition; the lineage checker compares what it reads with `upstream`. */
  sql: z.string().optional(),
  /** Columns known not to be personal data despite their name (per-column false-positive exceptions). */
  pii_exceptions: z.array(z.string()).default([]),
});
export type CatalogEntity = z.infer<typeof CatalogEntity>;
export type CatalogEntityInput = z.input<typeof CatalogEntity>;

/**
 * The catalog file. Entities are validated one by one when read so that one bad record becomes a
 * per-entity failure instead of failing the sweep; the file itself must have this envelope.
 */
export const CatalogFileEnvelope = z.object({
  format: z.literal(CATALOG_FORMAT),
  version: z.literal(CATALOG_FORMAT_VERSION),
  name: z.string().min(1).max(100),
  description: z.string().optional(),
  entities: z.array(z.record(z.string(), z.unknown())),
});

/** The whole file, every entity validated: what `catalog/schema/argus-catalog.v1.json` is exported from. */
export const CatalogFile = CatalogFileEnvelope.extend({ entities: z.array(CatalogEntity) });
export type CatalogFile = z.infer<typeof CatalogFile>;
