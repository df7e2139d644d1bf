import type { CatalogEntity } from '../../domain/catalog';
import type { CatalogContext } from '../catalog-context';
import type { Neighbours } from '../description-evidence';
import { clip, type Add, type ClaimKind, type UnsupportedClaim } from './claim';
import { buildEvidence, LINEAGE_REF, type Evidence } from './evidence';
import { figureFindings } from './figures';
import { derivationListFindings } from './lists';
import { mask } from './masking';
import { checkNullability, NULL_HINT } from './nullability';
import { anyDetector, COLUMN_COUNT, CONTAINS_NUMBER, PHRASES, PROVENANCE, SCHEMA_UNITS } from './phrases';
import { checkReferences } from './references';

/**
 * Detectors for what a description may not assert: facts about the world that a schema and recorded
 * lineage cannot establish. Evidence is the entity's structure only (names, types, keys,
 * nullability, lineage ids, SQL): its existing descriptions are never read, so catalog text cannot
 * talk its way past the gate.
 */

const LABEL: Record<ClaimKind, string> = {
  cadence: 'refresh cadence',
  'row-count': 'row count or size',
  ownership: 'ownership',
  quality: 'data quality or trust',
  currency: 'freshness',
  consumer: 'downstream consumer',
  provenance: 'source system',
  reference: 'reference',
  nullability: 'nullability',
  schema: 'schema',
  derivation: 'source list',
  figure: 'figure or attribute',
};

/**
 * Messages, one per unsupported claim, for a proposed description of `entity` (or of its `column`).
 * Empty means nothing in the text goes beyond what the schema and recorded lineage establish.
 */
export function findUnsupportedClaims(
  text: string,
  entity: CatalogEntity,
  ctx: CatalogContext,
  column?: string,
): string[] {
  return detectUnsupportedClaims(text, entity, ctx, column).map((c) => c.message);
}

/** Like findUnsupportedClaims, with the kind of each claim (the gate's rule id comes from it). */
export function detectUnsupportedClaims(
  text: string,
  entity: CatalogEntity,
  ctx: CatalogContext,
  column?: string,
  neighbours?: Neighbours,
): UnsupportedClaim[] {
  const evidence = { ...buildEvidence(entity, ctx, column), neighbours };
  const claims: UnsupportedClaim[] = [];
  const seen = new Set<string>();
  const add = (kind: ClaimKind, phrase: string, why: string) => {
    const p = clip(phrase.replace(/\s+/g, ' ').trim());
    const key = `${kind}|${p.toLowerCase()}`;
    if (seen.has(key)) return;
    seen.add(key);
    claims.push({ kind, phrase: p, message: `${LABEL[kind]}: "${p}" ${why}` });
  };

  for (const sentence of text.split(/(?<=[.!?;])\s+|\n+/u)) {
    if (sentence.trim() === '') continue;
    if (NULL_HINT.test(sentence))
      for (const clause of sentence.split(/[,:;]|\band\b|\bbut\b/u)) checkNullability(clause, evidence, add);
    // Masking only replaces words with placeholders, so a sentence none of the detectors matches
    // unmasked cannot match masked either: skip the expensive part for plain restatements.
    if (!anyDetector().test(sentence)) continue;
    const masked = mask(sentence, evidence);
    for (const rule of PHRASES) {
      for (const m of masked.matchAll(rule.re))
        add(rule.kind, m[0], 'is not established by the schema or recorded lineage');
    }
    for (const m of masked.matchAll(PROVENANCE)) {
      if (!(m[1] ?? '').includes(LINEAGE_REF.trim()))
        add('provenance', m[0], 'names a source that is not in the recorded lineage');
    }
    for (const m of masked.matchAll(CONTAINS_NUMBER)) {
      const noun = (m[1] ?? '').toLowerCase();
      if (!SCHEMA_UNITS.has(noun)) add('row-count', m[0], 'is not established by the schema or recorded lineage');
    }
    for (const m of masked.matchAll(COLUMN_COUNT)) {
      if (Number(m[1]) !== entity.columns.length)
        add('schema', m[0], `contradicts the schema (${entity.columns.length} columns)`);
    }
  }
  checkReferences(text, evidence, add);
  // A name the reference rule already reported (a dotted or snake_case id) is not reported twice.
  const reported = new Set(claims.filter((c) => c.kind === 'reference').map((c) => c.phrase.toLowerCase()));
  checkDerivationLists(text, evidence, add, reported);
  // A column's own text describes the column itself: the figures a table claims to show are a table's.
  if (evidence.column === undefined && column === undefined) checkFigures(text, evidence, add);
  return claims;
}

/** Every name in a list after a verb of derivation must be in the lineage, the SQL or the keys. */
function checkDerivationLists(text: string, evidence: Evidence, add: Add, reported: ReadonlySet<string>): void {
  for (const f of derivationListFindings(text, { ...evidence, plainWords: evidence.column === undefined })) {
    const missing = f.missing.filter((m) => !reported.has(m.name.replace(/`/g, '').toLowerCase()));
    if (missing.length === 0) continue;
    const names = missing.map((m) =>
      m.id === undefined
        ? `${clip(m.name, 40)} (no such entity)`
        : clip(m.id === m.name ? m.id : `${m.name} (${m.id})`, 60),
    );
    const listed = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;
    add(
      'derivation',
      f.phrase,
      `names ${listed}, ${names.length === 1 ? 'which is' : 'which are'} not in this entity's recorded lineage, SQL or keys`,
    );
  }
}

/** A figure the text claims must be a column of the entity or of what it reads, or computed by its SQL. */
function checkFigures(text: string, evidence: Evidence, add: Add): void {
  const { entity, ctx, neighbours } = evidence;
  for (const f of figureFindings(text, { entity, ctx, neighbours }, evidence.sqlTables)) {
    add('figure', f.phrase, `is not a column of ${clip(entity.id)} or of what it reads, nor derivable from its SQL`);
  }
}
