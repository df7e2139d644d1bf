// The file catalog format's JSON Schema, derived from domain/catalog.ts: run as a script (node scripts/run-ts.js
// scripts/export-catalog-schema.ts) it rewrites the committed copy; a unit test imports it to check that copy.
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { CATALOG_FORMAT, CATALOG_FORMAT_VERSION, CatalogFile } from '../domain/catalog';

/** `$id` of the published schema; the version in it follows `CATALOG_FORMAT_VERSION`. */
export const CATALOG_SCHEMA_ID = `urn:argus:schema:${CATALOG_FORMAT}:v${CATALOG_FORMAT_VERSION}`;

/** Where the committed copy lives, relative to the repository root. */
export const CATALOG_SCHEMA_PATH = `catalog/schema/${CATALOG_FORMAT}.v${CATALOG_FORMAT_VERSION}.json`;

/**
 * JSON Schema (draft 2020-12) of a catalog file, derived from the zod `CatalogFile` schema.
 * `io: 'input'` describes what a file may contain, so fields with defaults (nullable, tags, ...) are optional.
 */
export function catalogJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(CatalogFile, { io: 'input' }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    $id: CATALOG_SCHEMA_ID,
    title: `ARGUS catalog file, format version ${CATALOG_FORMAT_VERSION}`,
    description:
      'Tables and views of one data catalog with their columns, descriptions, PII tags and recorded lineage. ' +
      'Generated from domain/catalog.ts by scripts/export-catalog-schema.ts; see docs/catalog-format.md.',
    ...rest,
  };
}

/**
 * The file's text, formatted with the repository's Prettier config so that `npm run format` and a
 * regeneration agree (Prettier is a dev dependency, like this script).
 */
export async function catalogJsonSchemaText(file: string): Promise<string> {
  const prettier = await import('prettier');
  const config = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(JSON.stringify(catalogJsonSchema()), { ...config, parser: 'json' });
}

if (require.main === module) {
  const out = path.resolve(__dirname, '..', CATALOG_SCHEMA_PATH);
  catalogJsonSchemaText(out).then(
    (text) => {
      writeFileSync(out, text);
      console.log(`wrote ${path.relative(process.cwd(), out)}`);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
