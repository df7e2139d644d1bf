import { CatalogFile, type CatalogEntity } from '../../domain/catalog';
import { catalogStats, statsVector, type StatsVector } from '../../judgment/catalog-stats';
import { entityPrints } from '../../judgment/fingerprint';
import { createCatalogContext } from '../../judgment/catalog-context';
import { NO_MODEL_AGENTS } from '../../judgment/agents';
import { applyChange } from '../../catalog/entity-repairs';
import { generateCatalog } from '../../scripts/generate-catalog';

/** A record read afresh, as a page's every read of the file store gives it (a new object, no per-object memo). */
const reread = (e: CatalogEntity): CatalogEntity => JSON.parse(JSON.stringify(e)) as CatalogEntity;

const vectorOf = (e: CatalogEntity): StatsVector => {
  const s = catalogStats([e]);
  const src = s.sources;
  return [s.describable, src.human, src.inherited, src.derived, src.model, s.restatements, s.piiLooking, s.tagged];
};

describe('statsVector remembered by prints', () => {
  const entities = CatalogFile.parse(generateCatalog({ entities: 300, seed: 11, name: 'stats' })).entities;
  const ctx = createCatalogContext(entities.map((e) => e.id));
  const byId = new Map(entities.map((e) => [e.id, e]));

  test('counts what catalogStats counts, before and after every agent writes, each record read afresh', () => {
    let writes = 0;
    let tagWrites = 0;
    for (const e of entities) {
      expect(statsVector(reread(e), entityPrints(e))).toEqual(vectorOf(e));
      for (const agent of Object.values(NO_MODEL_AGENTS))
        for (const p of agent(e, ctx, { get: (id: string) => byId.get(id) })) {
          if (applyChange(e, p.change, `p-${writes}`, false).status !== 'written') continue;
          writes++;
          if (p.change.kind === 'pii_tag') tagWrites++;
          // Asked again after each write: a print the memo holds from before must not answer for the changed record.
          const again = reread(e);
          expect(statsVector(again, entityPrints(again))).toEqual(vectorOf(e));
        }
    }
    expect(writes).toBeGreaterThan(100);
    expect(tagWrites).toBeGreaterThan(20);
  });

  test('the same prints give the remembered figures; other prints count the record', () => {
    const [a, b] = entities.filter((e) => e.columns.length > 1);
    const pa = { own: 'test-own-a', pii: 'test-pii-a' };
    const first = statsVector(a!, pa);
    // Remembered by the print alone: what it is given is not counted again.
    expect(statsVector(b!, pa)).toEqual(first);
    expect(statsVector(b!, { own: 'test-own-b', pii: 'test-pii-b' })).toEqual(vectorOf(b!));
    // A vector handed out is a copy: changing it changes nothing remembered.
    statsVector(a!, pa)[0] = -1;
    expect(statsVector(a!, pa)).toEqual(first);
  });
});
