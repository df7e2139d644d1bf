import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SweepLedger } from '../../activities/ledger';
import type { Proposal } from '../../domain/proposal';

const proposal = (id: string, text = 'A table.'): Proposal => ({
  id,
  entityId: 'raw.orders',
  agent: 'description-drafter',
  change: { kind: 'description', target: 'table', text },
  evidence: [],
});

describe('SweepLedger proposals', () => {
  test('a page is parsed once while its files are unchanged, and read again when an agent rewrites one', async () => {
    const ledger = new SweepLedger(mkdtempSync(path.join(os.tmpdir(), 'ledger-')), 'sweep/x');
    await ledger.writeProposals(0, 'description-drafter', [proposal('p-1'), proposal('p-2')]);
    await ledger.writeProposals(0, 'lineage-checker', []);
    const first = await ledger.proposals(0);
    expect(first.map((p) => p.id)).toEqual(['p-1', 'p-2']);
    expect(await ledger.proposals(0)).toBe(first);
    // A retried agent activity rewrites its file: the next read sees the new content.
    await ledger.writeProposals(0, 'description-drafter', [proposal('p-1', 'Changed.')]);
    const again = await ledger.proposals(0);
    expect(again).not.toBe(first);
    expect(again.map((p) => [p.id, p.change.kind === 'description' && p.change.text])).toEqual([['p-1', 'Changed.']]);
    // Another agent's file appearing counts as a change too.
    await ledger.writeProposals(0, 'pii-classifier', [proposal('p-9')]);
    expect((await ledger.proposals(0)).map((p) => p.id)).toEqual(['p-1', 'p-9']);
    expect(await ledger.proposals(1)).toEqual([]);
  });
});
