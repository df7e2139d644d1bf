import type { Outcome } from '../domain/proposal';
import { stageRank, type OutcomeStage, type PageWrites } from './store';

/** Every round's writes of a page as one. */
export function mergeWrites(rounds: PageWrites[]): PageWrites | undefined {
  if (rounds.length === 0) return undefined;
  const out: PageWrites = { written: [], already: [], keptHuman: [], conflicts: [], notes: {} };
  for (const w of rounds) {
    out.written.push(...w.written);
    out.already.push(...w.already);
    out.keptHuman.push(...w.keptHuman);
    out.conflicts.push(...w.conflicts);
    if (w.failed?.length) (out.failed ??= []).push(...w.failed);
    Object.assign(out.notes, w.notes);
  }
  return out;
}

/** The winning outcome of each proposal: the latest stage's (stored with the outcomes), then the writer's tag. */
export function mergeOutcomes(sets: { stage: OutcomeStage; tag: string; outcomes: Outcome[] }[]): Outcome[] {
  const sorted = [...sets].sort((a, b) => stageRank(a.stage) - stageRank(b.stage) || a.tag.localeCompare(b.tag));
  const byId = new Map<string, Outcome>();
  for (const s of sorted) for (const o of s.outcomes) byId.set(o.proposalId, o);
  return [...byId.values()];
}

/** The round a `writes…` or `write-intent…` record belongs to, from its name; records merge in round order. */
export const roundOfName = (name: string): number => Number(/-r(\d+)(\.json)?$/.exec(name)?.[1] ?? 0);
export const byRound = (a: string, b: string): number => roundOfName(a) - roundOfName(b);
