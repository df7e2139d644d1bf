// node --import tsx bench/loop.ts <catalog.json>: the sweep's agents, gate and writes in one plain loop over a
// catalog file, written once at the end; prints {wallMs, cpuMs, mainThreadCpuMs, written, entities} as JSON.
// npm run bench runs it in a fresh process beside each sweep, as the yardstick its ratios are taken against.
import { readFileSync, writeFileSync } from 'node:fs';
import { CatalogFile, type CatalogEntity } from '../domain/catalog';
import { proposalId } from '../domain/digest';
import { NO_MODEL_AGENTS } from '../judgment/agents';
import { createCatalogContext } from '../judgment/catalog-context';
import { mechanicalReview } from '../judgment/gate/mechanical-gate';
import { applyChange } from '../catalog/entity-repairs';
import { mainThreadCpuMs } from './support';

/** The same agents, gate and writes as a sweep, in one loop over the file, written once at the end. */
export function inProcessLoop(file: string): {
  wallMs: number;
  cpuMs: number;
  mainThreadCpuMs: number;
  written: number;
  entities: number;
} {
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMs(process.pid);
  const t0 = performance.now();
  const cat = CatalogFile.parse(JSON.parse(readFileSync(file, 'utf8')));
  const ctx = createCatalogContext(cat.entities.map((e) => e.id));
  const byId = new Map(cat.entities.map((e) => [e.id, e as CatalogEntity]));
  const neighbours = { get: (id: string) => byId.get(id) };
  let written = 0;
  for (const e of cat.entities as CatalogEntity[]) {
    const changes = Object.values(NO_MODEL_AGENTS).flatMap((agent) => agent(e, ctx, neighbours).map((p) => p.change));
    for (const change of changes) {
      const p = {
        id: proposalId(cat.name, e.id, change),
        entityId: e.id,
        agent: 'description-drafter' as const,
        change,
        evidence: [],
      };
      if (
        mechanicalReview(p, e, ctx, neighbours).decision === 'approved' &&
        applyChange(e, change, p.id, false).status === 'written'
      )
        written++;
    }
  }
  writeFileSync(file, JSON.stringify(cat, null, 2));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    mainThreadCpuMs: mainThreadCpuMs(process.pid) - main0,
    written,
    entities: cat.entities.length,
  };
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node --import tsx bench/loop.ts <catalog.json>');
    process.exit(2);
  }
  process.stdout.write(JSON.stringify(inProcessLoop(file)) + '\n');
}
