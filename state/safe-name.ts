import { createHash } from 'node:crypto';

/**
 * A folder or file name for an id, one-to-one: an id that is already a short safe name is kept as it is;
 * any other (sweep ids hold slashes and can be long) becomes a readable prefix plus a SHA-256 of the whole id,
 * so two ids never share a name, however long the part they have in common.
 */
export function safeName(id: string): string {
  if (/^[A-Za-z0-9._-]{1,120}$/.test(id) && id !== '.' && id !== '..') return id;
  const readable = id.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  return `${readable}~${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;
}
