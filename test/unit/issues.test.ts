import { z } from 'zod';
import { formatIssues, issueFields } from '../../domain/issues';

// The one wording of validation errors: every bad field named, paths dotted, the root named, long lists cut.
const Shape = z.object({ a: z.number(), b: z.object({ c: z.string() }), list: z.array(z.number()) }).strict();
const error = (v: unknown) => Shape.safeParse(v).error!;

describe('formatIssues', () => {
  test.each<[string, unknown, Parameters<typeof formatIssues>[1], RegExp]>([
    ['names every bad field, dotted', { a: 'x', b: { c: 1 }, list: [] }, {}, /^a: .+; b\.c: .+$/],
    ['names the root when the value itself is wrong', 'text', { root: '(file)' }, /^\(file\): /],
    ['indexes into arrays', { a: 1, b: { c: '' }, list: [1, 'two'] }, {}, /^list\.1: /],
    [
      'one line each with a prefix',
      { a: 'x', b: {}, list: [] },
      { separator: '\n', prefix: '  ' },
      /^ {2}a: .+\n {2}b\.c: /,
    ],
  ])('%s', (_name, value, opts, expected) => {
    expect(formatIssues(error(value), opts)).toMatch(expected);
  });

  test('cuts a long list and says how many more', () => {
    const many = z.array(z.string()).safeParse(Array.from({ length: 30 }, (_, i) => i)).error!;
    const text = formatIssues(many, { limit: 3 });
    expect(text.split('; ')).toHaveLength(4);
    expect(text).toMatch(/… and 27 more$/);
  });

  test('issueFields: each field once', () => {
    expect(issueFields(error({ a: 'x', b: { c: 1 }, list: ['p', 'q'] }))).toEqual(['a', 'b.c', 'list.0', 'list.1']);
  });
});
