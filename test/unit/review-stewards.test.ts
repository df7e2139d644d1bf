import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  newStewardToken,
  parseStewards,
  readStewards,
  stewardOf,
  StewardsFileError,
  type Steward,
} from '../../client/review-stewards';
import { InputError } from '../../client/sweeps';

const hex = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');
const DANA = 'dana-token-0123456789abcdef';
const ERIN = 'erin-token-fedcba9876543210';
const names = (s: Steward[]) => s.map((x) => [x.name, x.digest.toString('hex')]);

describe('parseStewards: one `<name> sha256:<hex>` line per steward, comments and blank lines skipped', () => {
  test('comments (whole-line and trailing), blank lines, CRLF, a byte-order mark, upper-case hex', () => {
    const text =
      '\uFEFF# who may decide on the review page\r\n' +
      '\r\n' +
      `dana@example.org sha256:${hex(DANA)}   # on call in December\r\n` +
      `  erin.o-brien+data   sha256:${hex(ERIN).toUpperCase()}\n` +
      '   # the end\n';
    expect(names(parseStewards(text, 'stewards.txt'))).toEqual([
      ['dana@example.org', hex(DANA)],
      ['erin.o-brien+data', hex(ERIN)],
    ]);
  });

  test('a name in any script', () => {
    expect(names(parseStewards(`Zoë_Ødegård sha256:${hex(DANA)}`, 'f'))).toEqual([['Zoë_Ødegård', hex(DANA)]]);
  });

  const ok = `dana sha256:${hex(DANA)}`;
  test.each([
    ['one field', `${ok}\nerin`, 'f:2: a steward line is "<name> sha256:<64 hex digits>"'],
    ['three fields', `erin sha256:${hex(ERIN)} extra`, 'f:1: a steward line is "<name> sha256:<64 hex digits>"'],
    ['a name with a space', `"erin smith" sha256:${hex(ERIN)}`, 'f:1: a steward line is'],
    ['a name with a colon', `human:erin sha256:${hex(ERIN)}`, 'f:1: "human:erin" is not a steward name'],
    ['a name starting with a dot', `.erin sha256:${hex(ERIN)}`, 'f:1: ".erin" is not a steward name'],
    ['a name too long', `${'e'.repeat(201)} sha256:${hex(ERIN)}`, 'f:1: "eeeeeeeeee'],
    ['no algorithm', `erin ${hex(ERIN)}`, 'f:1: the token digest of erin is not "sha256:" and 64 hex digits'],
    ['another algorithm', `erin sha512:${hex(ERIN)}`, 'f:1: the token digest of erin is not'],
    ['a short digest', `erin sha256:${hex(ERIN).slice(1)}`, 'f:1: the token digest of erin is not'],
    ['a name twice', `${ok}\n# x\ndana sha256:${hex(ERIN)}`, 'f:3: dana is already named on line 1'],
    ['a token twice', `${ok}\nerin sha256:${hex(DANA)}`, 'f:2: erin has the same token as dana (line 1)'],
    ['nobody', '# nobody yet\n\n', 'f names no steward'],
    ['an empty file', '', 'f names no steward'],
  ])('%s: refused, naming the line', (_, text, message) => {
    expect(() => parseStewards(text, 'f')).toThrow(StewardsFileError);
    expect(() => parseStewards(text, 'f')).toThrow(message);
  });

  test('a token pasted where its digest belongs is never repeated in the message', () => {
    const pasted = `erin ${ERIN}`;
    let message = '';
    try {
      parseStewards(pasted, 'f');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('f:1: the token digest of erin is not');
    expect(message).not.toContain(ERIN);
  });

  test('a bad file is an InputError: the CLI exits 2 with its message', () => {
    expect(() => parseStewards('x', 'f')).toThrow(InputError);
  });
});

test('readStewards reads the file; a missing one is refused with its path', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'argus-stewards-'));
  const file = path.join(dir, 'stewards.txt');
  writeFileSync(file, `dana sha256:${hex(DANA)}\n`);
  expect(names(readStewards(file))).toEqual([['dana', hex(DANA)]]);
  expect(() => readStewards(path.join(dir, 'none.txt'))).toThrow(
    `cannot read the stewards file ${path.join(dir, 'none.txt')}: ENOENT`,
  );
});

describe('stewardOf: the steward whose token was typed', () => {
  const stewards = parseStewards(`dana sha256:${hex(DANA)}\nerin sha256:${hex(ERIN)}`, 'f');
  test.each([
    [DANA, 'dana'],
    [ERIN, 'erin'],
    [`${DANA} `, undefined],
    [DANA.toUpperCase(), undefined],
    [hex(DANA), undefined], // the digest is not the token
    ['', undefined],
    [undefined, undefined],
  ])('%j → %s', (given, name) => {
    expect(stewardOf(stewards, given)?.name).toBe(name);
  });

  test('an empty token is no one’s, even where a digest of the empty string is listed', () => {
    const odd = parseStewards(`nobody sha256:${hex('')}`, 'f');
    expect(stewardOf(odd, '')).toBeUndefined();
    expect(stewardOf(odd, undefined)).toBeUndefined();
  });
});

test('newStewardToken: a fresh 256-bit token each time, and the line that admits exactly it', () => {
  const a = newStewardToken('dana@example.org');
  const b = newStewardToken('dana@example.org');
  expect(a.token).toMatch(/^[\w-]{43}$/);
  expect(a.token).not.toBe(b.token);
  expect(a.line).toBe(`dana@example.org sha256:${hex(a.token)}`);
  expect(a.line).not.toContain(a.token);
  const stewards = parseStewards(`${a.line}\n`, 'f');
  expect(stewardOf(stewards, a.token)?.name).toBe('dana@example.org');
  expect(stewardOf(stewards, b.token)).toBeUndefined();
  expect(() => newStewardToken('dana smith')).toThrow('"dana smith" is not a steward name');
});
