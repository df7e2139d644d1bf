import { nameWords } from '../words';

/**
 * A PII tag's shape, what a person's decision on one tag says of others: the column's name as words (case and
 * separators aside: `OwnerId`, `owner_id` and `OWNER-ID` are one name), the proposed category and the table
 * reading the proposer used. Two proposals of one shape differ only in where they are.
 */
export function piiShapeOf(change: { column: string; category: string; reading?: string }): string {
  return `${nameWords(change.column).join(' ').toLowerCase()}|${change.category}|${change.reading ?? '-'}`;
}

/** A shape in a person's words: `a person_name tag on a column named "first name" of a thing table`. */
export function describeShape(shape: string): string {
  const [words = '', category = '', reading = '-'] = shape.split('|');
  return `a ${category} tag on a column named "${words}"${reading === '-' ? '' : ` of a ${reading} table`}`;
}

/** A person's decision on a shape, as a sweep reads it from the catalog's memory. */
export interface ShapeDecision {
  decision: 'approved' | 'rejected';
  reviewer: string;
  at: string;
  entityId: string;
  proposalId: string;
}

/** The reviewer a proposal rejected for its shape is recorded under: the decision it rests on. */
export const SHAPE_REVIEWER_PREFIX = 'person-shape:';

/** The ledger document a sweep keeps people's decisions by shape in (read from the memory at its start). */
export const SHAPE_DECISIONS_DOC = 'shape-decisions';

/** Marks a held proposal's reason when a person approved its shape before (the review page groups by it). */
export const DECIDED_BEFORE = 'Decided before:';
