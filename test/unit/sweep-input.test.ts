import { parseSweepInput } from '../../domain/sweep';
import { withAbsoluteCatalogPath } from '../../client/sweeps';

describe('catalog paths in sweep inputs', () => {
  test.each([
    ['relative', 'warehouse.json', false],
    ['dot-relative', './data/warehouse.json', false],
    ['parent-relative', '../warehouse.json', false],
    ['absolute POSIX', '/data/warehouse.json', true],
    ['absolute Windows', 'C:\\\\data\\\\warehouse.json', true],
  ])('a %s path is %s', (_what, p, ok) => {
    const r = parseSweepInput({ catalog: { kind: 'file', path: p } });
    expect(r.ok).toBe(ok);
    if (!r.ok) {
      expect(r.fields).toEqual(['catalog.path']);
      expect(r.message).toMatch(/catalog\.path: must be an absolute path/);
    }
  });

  test('the CLI resolves a relative path against the directory it runs in, and leaves others alone', () => {
    expect(withAbsoluteCatalogPath({ catalog: { kind: 'file', path: 'w.json' } }, '/home/me/project')).toEqual({
      catalog: { kind: 'file', path: '/home/me/project/w.json' },
    });
    const abs = { catalog: { kind: 'file', path: '/data/w.json' }, dryRun: true };
    expect(withAbsoluteCatalogPath(abs, '/elsewhere')).toEqual(abs);
    expect(withAbsoluteCatalogPath({ catalog: { kind: 'demo' } }, '/x')).toEqual({ catalog: { kind: 'demo' } });
    expect(withAbsoluteCatalogPath({ catalog: { kind: 'dbt', projectDir: 'shop' } }, '/home/me')).toEqual({
      catalog: { kind: 'dbt', projectDir: '/home/me/shop' },
    });
    const r = parseSweepInput({ catalog: { kind: 'dbt', projectDir: 'shop' } });
    expect(r.ok ? [] : r.fields).toEqual(['catalog.projectDir']);
  });
});
