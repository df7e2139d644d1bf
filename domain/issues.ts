import type { z } from 'zod';

/**
 * The one way ARGUS words a zod validation error for people: `path: message` per issue, the path dotted, an
 * empty path named `root` (what the value is: "(input)", "(file)", "(entity)"), at most `limit` issues and then
 * how many more. Messages name every bad field, so a person can fix them all at once.
 */
export function formatIssues(
  error: z.ZodError,
  opts: { root?: string; separator?: string; limit?: number; prefix?: string } = {},
): string {
  const { root = '(input)', separator = '; ', limit = 50, prefix = '' } = opts;
  const lines = error.issues
    .slice(0, limit)
    .map((i) => `${prefix}${i.path.length ? i.path.map(String).join('.') : root}: ${i.message}`);
  const more = error.issues.length - limit;
  return lines.join(separator) + (more > 0 ? `${separator}${prefix}… and ${more} more` : '');
}

/** The distinct fields an error names (dotted paths; an empty path as `root`). */
export function issueFields(error: z.ZodError, root = '(input)'): string[] {
  return [...new Set(error.issues.map((i) => (i.path.length ? i.path.map(String).join('.') : root)))];
}
