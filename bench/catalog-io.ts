import { readFileSync, writeFileSync } from 'node:fs';
import type { CatalogFile } from '../domain/catalog';

export function readCatalog(file: string): CatalogFile {
  return JSON.parse(readFileSync(file, 'utf8')) as CatalogFile;
}

export function writeCatalog(file: string, c: unknown): void {
  writeFileSync(file, JSON.stringify(c, null, 2));
}
