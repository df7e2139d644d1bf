import { allHandlersFinished, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { SweepReport } from '../../domain/report';
import { Agents } from './agents';
import { sweepConfigOf } from './config';
import { openHumanReview } from './human-review';
import { countUnsettled, nextPass, remember } from './incremental';
import { openSweep } from './open';
import { processPage, runPages } from './pages';
import { carryOn, startProgress, Sweep, type SweepCarry } from './state';
import { finishReport } from './summary';

export type { SweepCarry } from './state';

/**
 * A sweep over one catalog. Input: SweepInput (smallest: `{"catalog":{"kind":"demo"}}`); invalid input fails
 * at once with non-retryable `InvalidSweepInput` naming the fields. Pages of entities fan out to agent
 * activities with bounded concurrency, each page is reviewed by an `arbiterWorkflow` child and its approved
 * repairs written once. Continues as new every `pagesPerRun` pages, handing on its parsed config and a SweepCarry
 * (the input is parsed once per run). Returns the SweepReport.
 */
export async function sweepWorkflow(input: unknown, carry?: SweepCarry): Promise<SweepReport> {
  const cfg = sweepConfigOf(input, carry);
  const sweepId = workflowInfo().workflowId;
  const progress = startProgress(cfg, carry);
  // Before the first await: a decision that arrives with the first activation finds its handler.
  const people = openHumanReview(progress, carry?.review);
  const state = carry ?? (await openSweep(cfg, sweepId, progress));
  progress.phase = 'sweeping';
  const sweep = new Sweep(cfg, sweepId, state, progress);
  const agents = new Agents(sweep);

  // Pass after pass while the last one's writes changed something, at most `pagesPerRun` pages per execution.
  const runStart = state.nextPage;
  do await runPages(sweep, runStart, (page) => processPage(sweep, agents, people, page));
  while (state.nextPage >= state.pageCount && (await nextPass(sweep)));

  // Let in-flight update handlers finish before this execution ends or continues as new.
  await condition(allHandlersFinished);
  if (state.nextPage < state.pageCount) {
    await continueAsNew<typeof sweepWorkflow>(cfg, carryOn(state, cfg.humanReview ? people.carried() : undefined));
  }
  const waitedMs = await people.settle(sweep);
  await condition(allHandlersFinished);
  await countUnsettled(sweep);

  progress.phase = 'reporting';
  const remembered = await remember(sweep);
  return finishReport(sweep, {
    ...(remembered ? { incremental: remembered.incremental } : {}),
    ...(remembered?.inReport ? { remember: remembered.inReport } : {}),
    ...(cfg.humanReview ? { humanReview: people.summary(waitedMs) } : {}),
  });
}
