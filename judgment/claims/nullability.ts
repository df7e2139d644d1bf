/** Nullability claims: "never null", "always populated", "optional" must agree with the columns they are about. */
import type { CatalogColumn } from '../../domain/catalog';
import { clip, type Add } from './claim';
import type { Evidence } from './evidence';
import { mask, mentions, textTokens } from './masking';

const NOT_NULL =
  /\bno\s+nulls?\b|\bno\s+null\s+values\b|\bnever\s+(?:null|empty|blank|missing)\b|\bnot\s+null\b|\bnon[-\s]?null\b|\bnot\s+nullable\b|\bnon[-\s]?nullable\b|\balways\s+(?:populated|present|set|filled|provided)\b/giu;
const MAYBE_NULL =
  /(?<!\bnot\s+)(?<!\bnon[-\s]?)\bnullable\b|\b(?:may|can|might)\s+be\s+(?:null|empty|blank|missing)\b|\boptional\b/giu;

export const NULL_HINT = /null|optional|populated|present|\bset\b|filled|provided|empty|blank|missing/iu;

export function checkNullability(clause: string, evidence: Evidence, add: Add): void {
  if (!NULL_HINT.test(clause)) return; // cheap pre-check: masking every clause is the slow part
  const masked = mask(clause, evidence);
  const notNull = [...masked.matchAll(NOT_NULL)].map((m) => m[0]);
  const maybeNull = [...masked.matchAll(MAYBE_NULL)].map((m) => m[0]);
  if (notNull.length === 0 && maybeNull.length === 0) return;

  let subjects: CatalogColumn[];
  if (evidence.column !== undefined) {
    subjects = [evidence.column];
  } else {
    const tokens = textTokens(clause);
    const mentioned = evidence.columnMentions.filter((c) => mentions(clause, tokens, c.words)).map((c) => c.column);
    subjects = mentioned.length > 0 ? mentioned : evidence.entity.columns;
  }
  const phrase = notNull[0];
  if (phrase !== undefined) {
    const nullable = subjects.find((c) => c.nullable);
    if (nullable) add('nullability', phrase, `but column ${clip(nullable.name)} is nullable`);
  }
  const maybe = maybeNull[0];
  if (maybe !== undefined && !subjects.some((c) => c.nullable)) {
    add(
      'nullability',
      maybe,
      `but ${subjects.length === 1 ? `column ${clip(subjects[0]!.name)} is` : 'these columns are'} not nullable`,
    );
  }
}
