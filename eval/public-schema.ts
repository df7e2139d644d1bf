import { z } from 'zod';
import { CATALOG_FORMAT, CATALOG_FORMAT_VERSION, CatalogFile } from '../domain/catalog';
import type { CatalogEntityInput } from '../domain/catalog';

/**
 * Converter for the labelled public sample schemas (shared/testdata/public-schemas format) into an ARGUS
 * catalog plus the ground-truth PII labels, keyed `${table}.${column}`. Pure: the caller reads the file.
 */

const PublicColumn = z.object({
  name: z.string().min(1),
  type: z.string().min(1),
  nullable: z.boolean().optional(),
  primary_key: z.boolean().optional(),
  foreign_key: z.string().min(1).nullish(),
  pii: z.boolean().optional(),
  category: z.string().optional(),
  ambiguous: z.boolean().optional(),
  note: z.string().optional(),
  source_columns: z.array(z.string()).optional(),
  expression: z.string().nullish(),
  /** A person's description or column comment: evidence the PII rules read like the name. */
  description: z.string().optional(),
});

const PublicTable = z.object({
  name: z.string().min(1),
  kind: z.enum(['table', 'view']),
  columns: z.array(PublicColumn).min(1),
  upstream: z.array(z.string()).default([]),
  sql: z.string().optional(),
});

const PublicSchemaFile = z.object({
  database: z.string().min(1),
  source: z.string().optional(),
  tables: z.array(PublicTable).min(1),
});

export interface PiiLabel {
  pii: boolean;
  category: string;
  ambiguous: boolean;
}

export interface ConvertedPublicSchema {
  catalog: CatalogFile;
  labels: Map<string, PiiLabel>;
}

/** Raised when a file is not in the public-schema format; `fileLabel` names the file in the message. */
export class PublicSchemaFormatError extends Error {
  override readonly name = 'PublicSchemaFormatError';
  constructor(
    readonly fileLabel: string,
    message: string,
  ) {
    super(`${fileLabel}: ${message}`);
  }
}

/**
 * Converts one parsed public-schema file into an `argus-catalog` v1 file (entity id = table name) and its
 * labels. Columns without a `pii` key have no label, so an unlabelled file gives an empty map.
 * Throws PublicSchemaFormatError on a malformed file or a duplicate table name.
 */
export function convertPublicSchema(json: unknown, fileLabel: string): ConvertedPublicSchema {
  const parsed = PublicSchemaFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw new PublicSchemaFormatError(fileLabel, `not a public-schema file${where}: ${issue?.message ?? 'invalid'}`);
  }
  const file = parsed.data;
  const labels = new Map<string, PiiLabel>();
  const seen = new Set<string>();
  const entities: CatalogEntityInput[] = file.tables.map((table) => {
    if (seen.has(table.name)) throw new PublicSchemaFormatError(fileLabel, `table "${table.name}" appears twice`);
    seen.add(table.name);
    for (const column of table.columns) {
      if (column.pii === undefined) continue;
      labels.set(`${table.name}.${column.name}`, {
        pii: column.pii,
        category: column.category ?? (column.pii ? 'unspecified' : 'none'),
        ambiguous: column.ambiguous ?? false,
      });
    }
    return {
      id: table.name,
      database: file.database,
      name: table.name,
      kind: table.kind,
      columns: table.columns.map((c) => ({
        name: c.name,
        type: c.type,
        nullable: c.nullable ?? true,
        primary_key: c.primary_key ?? false,
        ...(c.foreign_key ? { foreign_key: c.foreign_key } : {}),
        ...(c.description?.trim() ? { description: c.description, description_source: 'human' as const } : {}),
      })),
      upstream: table.upstream,
      ...(table.sql !== undefined ? { sql: table.sql } : {}),
    };
  });
  const catalog = CatalogFile.safeParse({
    format: CATALOG_FORMAT,
    version: CATALOG_FORMAT_VERSION,
    name: file.database.slice(0, 100),
    description: `Converted from ${fileLabel}${file.source ? ` (${file.source})` : ''}`,
    entities,
  });
  if (!catalog.success) {
    const issue = catalog.error.issues[0];
    throw new PublicSchemaFormatError(
      fileLabel,
      `does not convert to a valid catalog: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(),
    );
  }
  return { catalog: catalog.data, labels };
}
