import { ParentClosePolicy, executeChild, log, patched } from '@temporalio/workflow';
import type { AgentName } from '../../domain/proposal';
import { arbiterWorkflowId, inPart, LINEAGE_WRITE_ROUND, PII_WRITE_ROUND, type PagePart } from '../../domain/ids';

/** A page's parts in the order evidence flows (pageFixedPoint). */
const PAGE_PARTS: readonly PagePart[] = ['lineage', 'evidence', 'pii'];
/** What each part proposes, in the summaries of its Arbiter and its write. */
const PART_WHAT: Record<PagePart, string> = { lineage: 'lineage flags', evidence: 'descriptions', pii: 'PII tags' };
import { catalogActivities, CATALOG_OPTIONS, WRITE_OPTIONS } from '../activities';
import { arbiterWorkflow } from '../arbiter';
import { failureOf } from '../failures';
import type { Agents } from './agents';
import type { HumanReview } from './human-review';
import { passOf } from './incremental';
import { pageEntities, type Sweep } from './state';

/**
 * This execution's pages, from `nextPage`: at most `concurrency` pages in flight, and at most `pagesPerRun` pages
 * per execution (counted from `runStart`, whatever the passes), so that no history grows with the catalog.
 */
export async function runPages(sweep: Sweep, runStart: number, page: (pageIndex: number) => Promise<void>) {
  const { cfg, state } = sweep;
  const lastPage = Math.min(state.pageCount, runStart + cfg.pagesPerRun);
  let cursor = state.nextPage;
  const lanes = Array.from({ length: Math.min(cfg.concurrency, Math.max(1, lastPage - cursor)) }, async () => {
    while (cursor < lastPage) {
      const pageIndex = cursor++;
      await page(pageIndex);
    }
  });
  sweep.showProgress();
  await Promise.all(lanes);
  state.nextPage = lastPage;
}

/** A page as read: its place in its pass and, when the history carries them, its entities' ids. */
interface Page {
  index: number;
  pass: ReturnType<typeof passOf>;
  /** Its first entity's offset in the pass, and how many entities it holds. */
  first: number;
  size: number;
  ids: string[];
  loaded: number;
  /** Agents with nothing to judge on the page (a later pass's page of PII-only entities). */
  skipAgents: AgentName[];
}

/**
 * One page: read it, run the agents, review it in an `arbiterWorkflow` child, park what waits for people and
 * write what is approved, once. A failed step becomes the named failure of the page's entities; what was not
 * reviewed (or could not be parked) is not written.
 */
export async function processPage(sweep: Sweep, agents: Agents, people: HumanReview, pageIndex: number) {
  const { cfg, state } = sweep;
  const page = await loadPage(sweep, pageIndex);
  if (!page) return;
  if (inPageFixedPoint(sweep, page) && patched('page-fixed-point-v1')) {
    // In the order evidence flows: the lineage checker's flags (a repaired upstream is what the drafter inherits
    // through), then the drafter's descriptions (evidence for the PII tags), then the PII classifier's tags; each
    // part reviewed by its own Arbiter and written before the next part's agents read the page. A later pass is
    // left only what a write changed of an entity on another page.
    for (const part of PAGE_PARTS) {
      const own = cfg.agents.filter((a) => inPart(part, a));
      if (!own.some((a) => runsOn(sweep, page, a))) {
        // The page's own write (round 0) stands even when no agent of its part runs: the page's audit line.
        if (part === 'evidence') await writePage(sweep, page, part);
        continue;
      }
      const skip = [...page.skipAgents, ...cfg.agents.filter((a) => !inPart(part, a))];
      const recorded = await agents.run(pageIndex, page.pass.round, page.ids, page.first, page.loaded, skip);
      // Nothing proposed: nothing to review; nothing to write but the page's own line.
      if (recorded !== 0) await reviewPage(sweep, page, part);
      if (recorded !== 0 || part === 'evidence') await writePage(sweep, page, part);
    }
    pageDone(sweep, page);
    return;
  }
  const recorded = await agents.run(pageIndex, page.pass.round, page.ids, page.first, page.loaded, page.skipAgents);
  // A page whose agents all finished and proposed nothing to review has nothing for an Arbiter: no child is started
  // (most pages of a later pass, where the PII classifier reads ARGUS's new descriptions and finds nothing more).
  if (recorded !== 0 || !patched('skip-empty-review-v1')) await reviewPage(sweep, page);
  if (cfg.humanReview) {
    try {
      await people.park(sweep, pageIndex, cfg.humanReview);
    } catch (err) {
      // What waits for people cannot be established (say, this worker lacks the page's state): write nothing
      // of the page rather than what only the Arbiter approved.
      const f = failPage(sweep, page, 'review', err);
      log.warn('parking for human review failed for page; nothing of it is written', { pageIndex, error: f.message });
      state.counts.pagesDone++;
      if (page.pass.round === 0) state.counts.entitiesDone += page.size;
      return;
    }
  }
  await writePage(sweep, page);
  pageDone(sweep, page);
}

/**
 * Whether a page reaches its fixed point in one pass (pageFixedPoint): its parts run one after another, each after
 * the write of the one before (lineage flags, descriptions, PII tags), when one of them writes what a later one
 * reads. What waits for people, or a dry run, writes nothing in between: every agent runs at once then, as in a
 * fitBudget sweep.
 */
function inPageFixedPoint(sweep: Sweep, page: Page): boolean {
  const { cfg } = sweep;
  // A fitBudget sweep spends what its plan priced: every agent at once, one review per page.
  if (!cfg.pageFixedPoint || cfg.humanReview || cfg.dryRun || cfg.fitBudget) return false;
  // Parts only when one writes what a later one reads.
  const runs = (a: AgentName) => runsOn(sweep, page, a);
  return (
    (runs('lineage-checker') && (runs('description-drafter') || runs('pii-classifier'))) ||
    (runs('description-drafter') && runs('pii-classifier'))
  );
}

/** Whether `agent` judges `page`: one of the sweep's, not skipped there, and no lineage checker in a later pass. */
function runsOn(sweep: Sweep, page: Page, agent: AgentName): boolean {
  const { cfg } = sweep;
  return (
    cfg.agents.includes(agent) &&
    !page.skipAgents.includes(agent) &&
    !(page.pass.round > 0 && agent === 'lineage-checker')
  );
}

/** A page finished: counted, and the progress shown. */
function pageDone(sweep: Sweep, page: Page): void {
  const { state, progress } = sweep;
  state.counts.pagesDone++;
  if (page.pass.round === 0) state.counts.entitiesDone += page.size;
  Object.assign(progress, {
    pagesDone: state.counts.pagesDone,
    entitiesDone: state.counts.entitiesDone,
    approved: state.counts.approved,
    rejected: state.counts.rejected,
    notReviewed: state.counts.notReviewed,
    written: state.counts.written,
    retiredEndpoints: state.retired.map((r) => r.endpointId),
  });
  sweep.showProgress();
}

/** Read a page into the ledger; null when it cannot be read (each of its entities then fails at `load`). */
async function loadPage(sweep: Sweep, index: number): Promise<Page | null> {
  const { cfg, state } = sweep;
  const pass = passOf(state, index);
  const first = pass.offset;
  const size = Math.min(state.pageSize, pass.count - first);
  // The page's ids travel through the history only when model agents fan out per entity; the other
  // activities read them from the ledger, so no history grows with the catalog.
  const perEntity = cfg.agentBackend === 'model';
  try {
    const page = await catalogActivities.loadCatalogPage.executeWithOptions(
      { ...CATALOG_OPTIONS, summary: `page ${index}: read ${size} entities` },
      [
        {
          ledgerKey: state.ledgerKey,
          pageIndex: index,
          pageSize: state.pageSize,
          ...(perEntity ? { withIds: true } : {}),
          ...(pass.round > 0 ? { round: pass.round, firstPage: pass.firstPage } : {}),
        },
      ],
    );
    sweep.noteFailures(page.failureCount ?? page.failures.length);
    // A result recorded before `count` existed carries every id (and no count).
    return {
      index,
      pass,
      first,
      size,
      ids: page.ids,
      loaded: page.count ?? page.ids.length,
      skipAgents: page.skipAgents ?? [],
    };
  } catch (err) {
    const f = failureOf(err);
    sweep.addFailures(
      Array.from({ length: size }, (_, i) => ({ entity: `#${first + i}`, stage: 'load' as const, ...f })),
    );
    return null;
  }
}

/**
 * The page's review (or that of its `part`), in an `arbiterWorkflow` child; endpoints it retired are the sweep's
 * retired from then on.
 */
async function reviewPage(sweep: Sweep, page: Page, part?: PagePart): Promise<void> {
  const { cfg, state, sweepId } = sweep;
  const kind = part ? PART_WHAT[part] : undefined;
  try {
    const review = await executeChild(arbiterWorkflow, {
      workflowId: arbiterWorkflowId(sweepId, page.index, part),
      args: [
        {
          sweepId,
          ledgerKey: state.ledgerKey,
          pageIndex: page.index,
          mode: cfg.review,
          endpoints: cfg.endpoints,
          retired: [...state.retired],
          modelConcurrency: cfg.modelConcurrency,
          throttleAttemptsBeforeRotation: cfg.throttleAttemptsBeforeRotation,
          modelBatch: cfg.modelBatch,
          ...(part ? { part } : {}),
        },
      ],
      parentClosePolicy: ParentClosePolicy.TERMINATE,
      staticSummary: `Arbiter for ${state.catalogName} page ${page.index}${kind ? ` ${kind}` : ''} (${cfg.review} review)`,
      staticDetails:
        `Reviews the ${kind ?? 'proposals'} of page ${page.index} of sweep ${sweepId}: the mechanical gate first` +
        (cfg.review === 'model'
          ? `, then the model on endpoints ${cfg.endpoints.map((e) => e.id).join(', ')}.`
          : ' (the declared reviewer).'),
    });
    state.counts.approved += review.approved;
    state.counts.rejected += review.rejected;
    state.counts.notReviewed += review.notReviewed;
    for (const r of review.retired)
      if (!state.retired.some((x) => x.endpointId === r.endpointId)) state.retired.push(r);
  } catch (err) {
    const f = failPage(sweep, page, 'review', err);
    log.warn('arbiter failed for page; its proposals stay unreviewed and unwritten', {
      pageIndex: page.index,
      error: f.message,
    });
  }
}

/**
 * Write the page's approved repairs, or those of its `part` (idempotent per proposal: a retry or a repeated sweep
 * writes once).
 */
async function writePage(sweep: Sweep, page: Page, part?: PagePart): Promise<void> {
  const { cfg, state, sweepId } = sweep;
  const what = part ? PART_WHAT[part] : 'repairs';
  try {
    const w = await catalogActivities.applyApprovedRepairs.executeWithOptions(
      { ...WRITE_OPTIONS, summary: `page ${page.index}: write approved ${what}${cfg.dryRun ? ' (dry run)' : ''}` },
      [
        {
          ledgerKey: state.ledgerKey,
          sweepId,
          pageIndex: page.index,
          ...(page.ids.length > 0 ? { ids: page.ids } : {}),
          overwriteHumanText: cfg.overwriteHumanText,
          dryRun: cfg.dryRun,
          ...(part ? { part } : {}),
          ...(part === 'pii' ? { round: PII_WRITE_ROUND } : part === 'lineage' ? { round: LINEAGE_WRITE_ROUND } : {}),
        },
      ],
    );
    state.counts.written += w.written;
  } catch (err) {
    failPage(sweep, page, 'write', err);
  }
}

/** A step that failed for the whole page: the named failure of each of its entities. */
function failPage(sweep: Sweep, page: Page, stage: 'review' | 'write', err: unknown) {
  const f = failureOf(err);
  sweep.addFailures(pageEntities(page.ids, page.first, page.loaded).map((entity) => ({ entity, stage, ...f })));
  return f;
}
