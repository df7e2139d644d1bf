// The stewards file of `argus review serve --stewards <file>` (or ARGUS_REVIEW_STEWARDS): who may decide on the
// review page, one line per steward, `<name> sha256:<hex digest of their token>`. `#` starts a comment; blank
// lines are skipped. The file holds digests only, so reading it (or a backup of it) gives no one a token.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { InputError } from './sweeps';

/** The environment variable naming the stewards file (`--stewards` wins when both are given). */
export const REVIEW_STEWARDS_ENV = 'ARGUS_REVIEW_STEWARDS';

/** A steward's name: what the audit records (`human:<name>`), so one word a person or a login reads as theirs. */
export const STEWARD_NAME = /^[\p{L}\p{N}][\p{L}\p{N}._@+-]{0,199}$/u;
const DIGEST = /^sha256:([0-9a-fA-F]{64})$/;
const LINE_SHAPE = '"<name> sha256:<64 hex digits>" (`argus review steward-token <name>` prints one)';

export interface Steward {
  name: string;
  /** SHA-256 of the token (32 bytes). */
  digest: Buffer;
}

/** A stewards file that cannot be used (exit 2): the message names the file and, when it is about one, the line. */
export class StewardsFileError extends InputError {
  override name = 'StewardsFileError';
}

const digestOf = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** Parse a stewards file's text; `file` names it in messages. Throws StewardsFileError at the first bad line. */
export function parseStewards(text: string, file: string): Steward[] {
  const stewards: (Steward & { line: number })[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, i) => {
      const at = `${file}:${i + 1}`;
      // Neither a name nor a digest holds `#`, so everything from one on is a comment.
      const fields = raw.replace(/#.*/, '').trim().split(/\s+/).filter(Boolean);
      if (fields.length === 0) return;
      if (fields.length !== 2) throw new StewardsFileError(`${at}: a steward line is ${LINE_SHAPE}`);
      const [name, digest] = fields as [string, string];
      if (!STEWARD_NAME.test(name))
        throw new StewardsFileError(
          `${at}: ${JSON.stringify(name.slice(0, 60))} is not a steward name: letters, digits and . _ @ + - (at most 200)`,
        );
      // The second field is never echoed: a token pasted here by mistake must not reach a log.
      const hex = DIGEST.exec(digest)?.[1];
      if (!hex)
        throw new StewardsFileError(
          `${at}: the token digest of ${name} is not "sha256:" and 64 hex digits (the file holds a token's digest, ` +
            `never the token: \`argus review steward-token ${name}\` prints the line)`,
        );
      const same = stewards.find((s) => s.name === name);
      if (same) throw new StewardsFileError(`${at}: ${name} is already named on line ${same.line}`);
      const d = Buffer.from(hex, 'hex');
      const twin = stewards.find((s) => s.digest.equals(d));
      if (twin)
        throw new StewardsFileError(
          `${at}: ${name} has the same token as ${twin.name} (line ${twin.line}): each steward needs their own`,
        );
      stewards.push({ name, digest: d, line: i + 1 });
    });
  if (stewards.length === 0) throw new StewardsFileError(`${file} names no steward: add lines ${LINE_SHAPE}`);
  return stewards.map(({ name, digest }) => ({ name, digest }));
}

/** Read and parse the stewards file at `file` (read once, at start). */
export function readStewards(file: string): Steward[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new StewardsFileError(`cannot read the stewards file ${file}: ${(e as NodeJS.ErrnoException).code ?? e}`);
  }
  return parseStewards(text, file);
}

/**
 * The steward whose token `given` is, if any. The given token's digest is compared with every steward's through
 * timingSafeEqual, without stopping at a match, so the time taken says nothing about which digest was close.
 */
export function stewardOf(stewards: readonly Steward[], given: string | undefined): Steward | undefined {
  const d = digestOf(given ?? '');
  let found: Steward | undefined;
  for (const s of stewards) if (timingSafeEqual(d, s.digest) && given) found = s;
  return found;
}

/** A fresh steward token (256 random bits) and the stewards file line that admits it. */
export function newStewardToken(name: string): { token: string; line: string } {
  if (!STEWARD_NAME.test(name))
    throw new InputError(`${JSON.stringify(name)} is not a steward name: letters, digits and . _ @ + - (at most 200)`);
  const token = randomBytes(32).toString('base64url');
  return { token, line: `${name} sha256:${digestOf(token).toString('hex')}` };
}
