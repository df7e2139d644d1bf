import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileCatalogAdapter } from '../../catalog/file/adapter';
import { createCatalogs } from '../../catalog';
import { CatalogError, type RepairRequest } from '../../catalog/adapter';
import type { ProposalChange } from '../../domain/proposal';

const DEMO = path.resolve(__dirname, '../../catalog/demo/shop-warehouse.json');

function demoCopy(): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'adapter-')), 'shop.json');
  copyFileSync(DEMO, file);
  return file;
}

async function undescribedColumns(a: FileCatalogAdapter, n: number): Promise<RepairRequest[]> {
  const { ids } = await a.snapshot();
  const { entities } = await a.getEntities(ids);
  const out: RepairRequest[] = [];
  for (const e of entities)
    for (const c of e.columns)
      if (!c.description && out.length < n) {
        const change: ProposalChange = {
          kind: 'description',
          target: 'column',
          column: c.name,
          text: `About ${c.name}.`,
        };
        out.push({ proposalId: `p-${out.length}`, entityId: e.id, change });
      }
  return out;
}

describe('FileCatalogAdapter', () => {
  test('a batch gets one outcome per repair; the write-ahead hook runs before the file changes', async () => {
    const file = demoCopy();
    const a = new FileCatalogAdapter(file);
    expect(a.identity).toEqual({ kind: 'file', key: file, label: file });
    const batch = await undescribedColumns(a, 3);
    const human = (await a.getEntities(['raw.customers'])).entities[0]!;
    batch.push({
      proposalId: 'p-human',
      entityId: 'raw.customers',
      change: { kind: 'description', target: 'table', text: 'Mine.' },
    });
    batch.push({
      proposalId: 'p-gone',
      entityId: 'no.such',
      change: { kind: 'description', target: 'table', text: 'x' },
    });
    expect(human.description_source).toBe('human');
    const before = readFileSync(file, 'utf8');
    let seenInHook: string | undefined;
    const outcomes = await a.applyRepairs(batch, {
      overwriteHumanText: false,
      beforeCommit: async (o) => {
        seenInHook = readFileSync(file, 'utf8');
        expect(o.filter((x) => x.status === 'written')).toHaveLength(3);
      },
    });
    expect(seenInHook).toBe(before);
    expect(outcomes.map((o) => [o.proposalId, o.status])).toEqual([
      ['p-0', 'written'],
      ['p-1', 'written'],
      ['p-2', 'written'],
      ['p-human', 'kept_human'],
      ['p-gone', 'conflict'],
    ]);
    expect(readFileSync(file, 'utf8')).not.toBe(before);
    // Applying the same batch again finds it there.
    const again = await a.applyRepairs(batch.slice(0, 3), { overwriteHumanText: false });
    expect(again.map((o) => o.status)).toEqual(['already', 'already', 'already']);
  });

  test('a failing write-ahead hook writes nothing', async () => {
    const file = demoCopy();
    const a = new FileCatalogAdapter(file);
    const before = readFileSync(file, 'utf8');
    const batch = await undescribedColumns(a, 2);
    await expect(
      a.applyRepairs(batch, { overwriteHumanText: false, beforeCommit: () => Promise.reject(new Error('disk full')) }),
    ).rejects.toThrow('disk full');
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(
      (await new FileCatalogAdapter(file).applyRepairs(batch, { overwriteHumanText: false })).map((o) => o.status),
    ).toEqual(['written', 'written']);
  });

  test("a change that landed in a crashed attempt is reported written with that attempt's before/after", async () => {
    const file = demoCopy();
    const a = new FileCatalogAdapter(file);
    const [r] = await undescribedColumns(a, 1);
    const [first] = await a.applyRepairs([r!], { overwriteHumanText: false });
    expect(first!.status).toBe('written');
    const { before, after } = first as { before: unknown; after: unknown };
    const [retry] = await new FileCatalogAdapter(file).applyRepairs([{ ...r!, landed: { before, after } }], {
      overwriteHumanText: false,
    });
    expect(retry).toEqual({ proposalId: r!.proposalId, status: 'written', before, after, landedEarlier: true });
  });

  test('revert: reverted, already reverted, never landed, changed since', async () => {
    const file = demoCopy();
    const original = readFileSync(file, 'utf8');
    const a = new FileCatalogAdapter(file);
    const batch = await undescribedColumns(a, 3);
    const written = (await a.applyRepairs(batch, { overwriteHumanText: false })) as {
      proposalId: string;
      before: unknown;
      after: unknown;
    }[];
    const req = batch.map((b, i) => ({ ...b, before: written[i]!.before, after: written[i]!.after }));
    // Someone edits the third column after the sweep.
    await a.applyRepairs(
      [
        {
          ...batch[2]!,
          proposalId: 'p-person',
          change: { ...(batch[2]!.change as object), text: 'A person.' } as ProposalChange,
        },
      ],
      { overwriteHumanText: true },
    );
    const first = await a.revertRepairs([req[0]!, { ...req[1]!, unconfirmed: false }, req[2]!]);
    expect(first.map((o) => o.status)).toEqual(['reverted', 'reverted', 'conflict']);
    const second = await a.revertRepairs([req[0]!, { ...req[1]!, unconfirmed: true }]);
    expect(second.map((o) => o.status)).toEqual(['already_reverted', 'not_landed']);
    expect(readFileSync(file, 'utf8')).not.toBe(original); // the person's edit stays
  });
});

describe('createCatalogs for files', () => {
  test('the demo is a copy in the state folder, made once; the bundled file itself is refused', async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'adapter-state-'));
    const catalogs = createCatalogs({ stateDir, bundledDemo: DEMO, env: {} });
    const demo = await catalogs({ kind: 'demo' });
    expect(demo.identity.key).toBe(path.join(stateDir, 'catalogs', 'demo.json'));
    expect(await catalogs({ kind: 'demo' })).toBe(demo);
    expect(readFileSync(demo.identity.key, 'utf8')).toBe(readFileSync(DEMO, 'utf8'));
    const refused = await catalogs({ kind: 'file', path: DEMO }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CatalogError);
    expect((refused as Error).message).toMatch(/bundled demo catalog, which is never a sweep target/);
  });
});
