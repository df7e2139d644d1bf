import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  ParentClosePolicy,
  continueAsNew,
  executeChild,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
  log,
  patched,
} from '@temporalio/workflow';
import {
  parseSweepInput,
  durationMs,
  effectivePageSize,
  judgmentSettingsOf,
  passOfPage,
  ReviewDecisions,
  type SweepConfig,
} from '../domain/sweep';
import type { EntityFailure, AgentName } from '../domain/proposal';
import type { DeferredEntities, IncrementalSummary, RetiredEndpoint, SweepReport } from '../domain/report';
import { arbiterWorkflowId } from '../domain/ids';
import {
  catalogActivities,
  reportActivities,
  modelActivities,
  modelActivityOptions,
  CATALOG_OPTIONS,
  REPORT_OPTIONS,
} from './activities';
import { arbiterWorkflow } from './arbiter';
import { failureOf, invalidInput } from './failures';
import {
  progressQuery,
  pendingReviewsQuery,
  reviewUpdate,
  SA_KEYS,
  type SweepProgress,
  type PendingReview,
  type ReviewUpdateInput,
} from './messages';
import { Rotation, type RotationOutcome } from './rotation';
import { batchesThenAlone } from './batches';

/** State carried across continue-as-new: counts and ids only, never proposals or schemas. */
export interface SweepCarry {
  ledgerKey: string;
  catalogName: string;
  entityCount: number;
  pageSize: number;
  pageCount: number;
  nextPage: number;
  execution: number;
  failures: EntityFailure[];
  failuresDropped: number;
  retired: RetiredEndpoint[];
  /** Human review: what waits for people (bounded: at most MAX_PARKED), carried to the execution that waits. */
  review?: ReviewCarry;
  /** fitBudget: what the plan left for the next sweep (a count and the first ids). */
  deferred?: DeferredEntities;
  /** Memory across sweeps (patch incremental-v1): what change detection found and the passes run so far. */
  incremental?: IncrementalCarry;
  counts: {
    approved: number;
    rejected: number;
    notReviewed: number;
    written: number;
    entitiesDone: number;
    pagesDone: number;
  };
}

/** What change detection found, and the sweep's passes: each pass's first page and entity count (at most maxPasses). */
export interface IncrementalCarry {
  summary: Omit<IncrementalSummary, 'rounds' | 'rejudged' | 'unsettled'>;
  rounds: { firstPage: number; count: number }[];
  /** Writes counted when the current pass started: a pass that wrote nothing ends the sweep's passes. */
  writtenAtRoundStart: number;
  unsettled: number;
}

const MAX_CARRIED_FAILURES = 200;
/** Proposals one sweep parks for people; past it they stay not reviewed (said so), so nothing here grows unbounded. */
export const MAX_PARKED = 500;

type Parked = PendingReview & { decided?: ReviewUpdateInput['decisions'][number] };

/** The sweep's human review: one deadline, set when the first proposal is parked; counts for the report. */
export interface ReviewCarry {
  deadline?: string;
  parked: Parked[];
  waited: number;
  overflow: number;
  approved: number;
  rejected: number;
  expired: number;
  rounds: number;
}

/** The entities of a page for a failure that hit all of them: their ids when known, else their positions. */
function pageEntities(ids: string[], first: number, count: number): string[] {
  return ids.length > 0 ? ids : Array.from({ length: count }, (_, i) => `#${first + i}`);
}

/** An entity's failure when every endpoint failed it: the breaker (budgets spent) or the last endpoint's error. */
function rotationFailure(
  entity: string,
  stage: AgentName,
  r: Extract<RotationOutcome<unknown>, { ok: false }>,
): EntityFailure {
  return r.breaker
    ? { entity, stage, category: 'model_budget_exhausted', retryable: true, message: r.message.slice(0, 1000) }
    : { entity, stage, category: r.category, retryable: r.retryable, message: r.message };
}

/**
 * A sweep over one catalog. Input: SweepInput (smallest: `{"catalog":{"kind":"demo"}}`); invalid input fails
 * at once with non-retryable `InvalidSweepInput` naming the fields. Pages of entities fan out to agent
 * activities with bounded concurrency, each page is reviewed by an `arbiterWorkflow` child and its approved
 * repairs written once. Continues as new every `pagesPerRun` pages. Returns the SweepReport.
 */
export async function sweepWorkflow(raw: unknown, carry?: SweepCarry): Promise<SweepReport> {
  const parsed = parseSweepInput(raw);
  if (!parsed.ok) throw invalidInput('sweep input', parsed);
  const cfg: SweepConfig = parsed.value;
  const info = workflowInfo();
  const sweepId = info.workflowId;

  const progress: SweepProgress = {
    phase: 'opening',
    catalog: carry?.catalogName ?? '',
    mode: cfg.review,
    pagesDone: carry?.counts.pagesDone ?? 0,
    pageCount: carry?.pageCount ?? 0,
    entitiesRequested: carry?.entityCount ?? 0,
    entitiesDone: carry?.counts.entitiesDone ?? 0,
    approved: carry?.counts.approved ?? 0,
    rejected: carry?.counts.rejected ?? 0,
    notReviewed: carry?.counts.notReviewed ?? 0,
    written: carry?.counts.written ?? 0,
    failures: (carry?.failures.length ?? 0) + (carry?.failuresDropped ?? 0),
    retiredEndpoints: carry?.retired.map((r) => r.endpointId) ?? [],
    breakerTripped: false,
    execution: carry?.execution ?? 1,
    awaitingReview: 0,
  };
  setHandler(progressQuery, () => progress);

  // Human review gate: approved proposals of the configured kinds wait here for a person's decision.
  const review: ReviewCarry = carry?.review ?? {
    parked: [],
    waited: 0,
    overflow: 0,
    approved: 0,
    rejected: 0,
    expired: 0,
    rounds: 0,
  };
  const pending = new Map<string, Parked>(review.parked.map((p) => [p.proposalId, p]));
  const undecided = () => [...pending.values()].filter((p) => !p.decided);
  let decisionsArrived = false;
  progress.awaitingReview = undecided().length;
  setHandler(pendingReviewsQuery, () => undecided().map(({ decided: _d, ...p }) => p));
  setHandler(
    reviewUpdate,
    (input) => {
      for (const d of input.decisions) pending.get(d.proposalId)!.decided = d;
      progress.awaitingReview = undecided().length;
      decisionsArrived = true;
      return { accepted: input.decisions.length, stillPending: undecided().length };
    },
    {
      // Runs before the update is accepted: a bad payload is refused with a message and changes nothing.
      validator: (input) => {
        const r = ReviewDecisions.safeParse(input);
        if (!r.success) {
          throw new Error(
            `invalid review decision: ${r.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`).join('; ')}`,
          );
        }
        const unknown = r.data.decisions.filter(
          (d) => !pending.get(d.proposalId) || pending.get(d.proposalId)!.decided,
        );
        if (unknown.length) {
          throw new Error(
            `not awaiting review: ${unknown
              .map((d) => d.proposalId)
              .slice(0, 10)
              .join(', ')} (see the pendingReviews query)`,
          );
        }
      },
    },
  );

  let state: SweepCarry;
  if (carry) {
    state = carry;
  } else {
    const ledgerKey = `${sweepId}@${info.firstExecutionRunId}`;
    let opened: { catalogName: string; entityCount: number };
    try {
      opened = await catalogActivities.openCatalog({
        sweepId,
        ledgerKey,
        catalog: cfg.catalog,
        ...(cfg.sampleValues ? { sampleRows: cfg.sampleValues.rows } : {}),
      });
    } catch (err) {
      // The sweep cannot start: fail with the root cause itself (say, "catalog file not found: /x"), not the
      // activity wrapper, so the CLI, `sweep status` and the Web UI all show what a person can act on.
      const f = failureOf(err);
      const message = `cannot open the catalog: ${f.message}`;
      setCurrentDetails(`**FAILED** — ${message}`);
      if (patched('failure-memo-v1'))
        upsertMemo({ summary: { verdict: 'FAILED', failure: f.category, reason: message.slice(0, 2000) } });
      throw ApplicationFailure.create({ type: f.category, message, nonRetryable: true });
    }
    state = {
      ledgerKey,
      catalogName: opened.catalogName,
      entityCount: opened.entityCount,
      pageSize: effectivePageSize(cfg.pageSize, opened.entityCount),
      pageCount: Math.ceil(opened.entityCount / effectivePageSize(cfg.pageSize, opened.entityCount)),
      nextPage: 0,
      execution: 1,
      failures: [],
      failuresDropped: 0,
      retired: [],
      counts: { approved: 0, rejected: 0, notReviewed: 0, written: 0, entitiesDone: 0, pagesDone: 0 },
    };
    if (patched('incremental-v1')) {
      // Change detection before any judgment: what is new or changed since the memory, and what is carried over.
      const d = await catalogActivities.detectChanges.executeWithOptions(
        {
          ...REPORT_OPTIONS,
          summary: cfg.incremental
            ? 'detect what changed since the last sweep'
            : 'fingerprint the catalog (full sweep)',
        },
        [
          {
            ledgerKey,
            round: 0,
            incremental: cfg.incremental,
            goneLimit: cfg.goneLimit,
            judgment: judgmentSettingsOf(cfg),
          },
        ],
      );
      state.entityCount = d.toJudge;
      state.pageSize = effectivePageSize(cfg.pageSize, d.toJudge);
      state.pageCount = Math.ceil(d.toJudge / state.pageSize);
      state.incremental = {
        summary: {
          new: d.new,
          changed: d.changed,
          unchanged: d.unchanged,
          gone: d.gone,
          carriedOver: d.carriedOver,
          judged: d.toJudge,
          incremental: cfg.incremental,
          ...(d.note ? { note: d.note } : {}),
          ...(d.failSafe ? { failSafe: d.failSafe } : {}),
        },
        rounds: [{ firstPage: 0, count: d.toJudge }],
        writtenAtRoundStart: 0,
        unsettled: 0,
      };
    }
    if (cfg.fitBudget) {
      // Plan before any call; sweep what fits (the plan stores the choice as the sweep's selection).
      const plan = await modelActivities(cfg).planSweep.executeWithOptions(
        { ...REPORT_OPTIONS, summary: 'fit the sweep to its model budget' },
        [{ sweep: raw, ledgerKey }],
      );
      state.entityCount = plan.fitting;
      state.pageSize = effectivePageSize(cfg.pageSize, plan.fitting);
      state.pageCount = Math.ceil(plan.fitting / state.pageSize);
      if (state.incremental) state.incremental.rounds = [{ firstPage: 0, count: plan.fitting }];
      if (plan.deferred > 0)
        state.deferred = { count: plan.deferred, first: plan.firstDeferred, verdict: plan.verdict, plan: plan.text };
    }
    progress.catalog = state.catalogName;
    progress.pageCount = state.pageCount;
    progress.entitiesRequested = state.entityCount;
    upsertSearchAttributes([
      { key: SA_KEYS.catalog, value: state.catalogName },
      { key: SA_KEYS.mode, value: cfg.review },
    ]);
  }
  progress.phase = 'sweeping';

  // Failures an activity returned are already in the ledger; only count them here.
  let ledgerFailures = 0;
  const noteFailures = (n: number) => {
    ledgerFailures += n;
    progress.failures = state.failures.length + state.failuresDropped + ledgerFailures;
  };
  // Failures of whole activities are known only to the workflow: carried (bounded) into the report.
  const addFailures = (fs: EntityFailure[]) => {
    for (const f of fs) {
      if (state.failures.length < MAX_CARRIED_FAILURES) state.failures.push(f);
      else state.failuresDropped++;
    }
    progress.failures = state.failures.length + state.failuresDropped + ledgerFailures;
  };
  const rotation = new Rotation(cfg.endpoints, state.retired);
  const models = modelActivities(cfg);
  const modelOptions = modelActivityOptions(cfg);

  /**
   * Model-backed agents: batches of entities per call (an entity a batch answer lacks is asked alone), or one
   * activity per entity and agent; rotating endpoints; the breaker stops all calls.
   */
  async function runModelAgent(pageIndex: number, ids: string[], agent: AgentName): Promise<void> {
    const step = (summary: string) => ({ ...modelOptions, summary });
    await batchesThenAlone({
      entities: ids,
      maxEntities: cfg.modelBatch.entities,
      concurrency: cfg.modelConcurrency,
      plan: (skip) =>
        models.planModelBatches.executeWithOptions(
          { ...CATALOG_OPTIONS, summary: `page ${pageIndex}: batch ${agent}${skip.length ? ' (the rest)' : ''}` },
          [
            {
              ledgerKey: state.ledgerKey,
              pageIndex,
              agent,
              maxEntities: cfg.modelBatch.entities,
              promptTokens: cfg.modelBatch.promptTokens,
              outputTokens: Math.min(...cfg.endpoints.map((e) => e.maxOutputTokens)),
              models: cfg.endpoints.map((e) => e.model),
              ...(skip.length ? { skip } : {}),
            },
          ],
        ),
      planFailed: (err) => {
        const f = failureOf(err);
        addFailures(ids.map((entity) => ({ entity, stage: agent, ...f })));
      },
      batch: async (entityIds, batch) => {
        const r = await rotation.run((endpoint, retired) =>
          models.modelAgentOnBatch.executeWithOptions(
            step(`${agent} on ${entityIds.length} entities via ${endpoint.id}`),
            [{ sweepId, ledgerKey: state.ledgerKey, pageIndex, batch, entityIds, agent, endpoint, retired }],
          ),
        );
        if (r.ok) return r.value.missing;
        addFailures(entityIds.map((entity) => rotationFailure(entity, agent, r)));
        return [];
      },
      alone: async (entityId) => {
        const r = await rotation.run((endpoint, retired) =>
          models.modelAgentOnEntity.executeWithOptions(step(`${agent} on ${entityId} via ${endpoint.id}`), [
            { sweepId, ledgerKey: state.ledgerKey, pageIndex, entityId, agent, endpoint, retired },
          ]),
        );
        if (!r.ok) addFailures([rotationFailure(entityId, agent, r)]);
      },
    });
    progress.retiredEndpoints = rotation.retiredIds();
    progress.breakerTripped = rotation.breakerTripped;
  }

  /**
   * Park a page's approved proposals of the configured kinds for people. The page goes on at once (its write
   * leaves them alone); the sweep waits for decisions once, at its end (settleReviews), with one deadline.
   */
  async function parkForPeople(pageIndex: number, hr: NonNullable<SweepConfig['humanReview']>): Promise<void> {
    const r = await catalogActivities.parkForHumanReview({
      ledgerKey: state.ledgerKey,
      pageIndex,
      kinds: hr.kinds,
      room: MAX_PARKED - pending.size,
      limit: MAX_PARKED,
    });
    if (r.parked.length > 0 && !review.deadline)
      review.deadline = new Date(Date.now() + durationMs(hr.deadline)).toISOString();
    for (const h of r.parked) pending.set(h.proposalId, { ...h, pageIndex, deadline: review.deadline! });
    review.waited += r.parked.length;
    review.overflow += r.overflow;
    state.counts.approved -= r.parked.length + r.overflow;
    state.counts.notReviewed += r.overflow;
    progress.awaitingReview = undecided().length;
  }

  /** A person's decision as the outcome it becomes. */
  function outcomeOf(p: Parked) {
    const d = p.decided;
    if (!d)
      return {
        proposalId: p.proposalId,
        decision: 'not_reviewed' as const,
        reason: 'review expired',
        reviewer: 'none',
      };
    const note = d.comment ? `: ${d.comment}` : '';
    if (d.decision === 'approved')
      return {
        proposalId: p.proposalId,
        decision: 'approved' as const,
        reason: `approved by the Arbiter (${p.arbiterReason.slice(0, 300)}) and by ${d.reviewer}${note}`,
        reviewer: `human:${d.reviewer}`,
      };
    return {
      proposalId: p.proposalId,
      decision: 'rejected' as const,
      reason: `${d.decision === 'needs_changes' ? 'needs changes' : 'rejected'} by ${d.reviewer}${note}`.slice(0, 1000),
      reviewer: `human:${d.reviewer}`,
    };
  }

  /** Record and write what people decided so far (or, `expire`, everything left), one write round per batch. */
  async function writeDecisions(expire: boolean): Promise<void> {
    const batch = [...pending.values()].filter((p) => expire || p.decided);
    if (batch.length === 0) return;
    const round = ++review.rounds;
    const byPage = new Map<number, Parked[]>();
    for (const p of batch) byPage.set(p.pageIndex, [...(byPage.get(p.pageIndex) ?? []), p]);
    for (const [pageIndex, items] of [...byPage].sort((a, b) => a[0] - b[0])) {
      const outcomes = items.map(outcomeOf);
      try {
        await catalogActivities.recordOutcomes({
          ledgerKey: state.ledgerKey,
          pageIndex,
          tag: `human-${round}`,
          outcomes,
        });
        const w = await catalogActivities.applyApprovedRepairs.executeWithOptions(
          { ...CATALOG_OPTIONS, summary: `page ${pageIndex}: write what people approved (round ${round})` },
          [
            {
              ledgerKey: state.ledgerKey,
              sweepId,
              pageIndex,
              round,
              proposalIds: items.map((p) => p.proposalId),
              overwriteHumanText: cfg.overwriteHumanText,
              dryRun: cfg.dryRun,
            },
          ],
        );
        state.counts.written += w.written;
      } catch (err) {
        const f = failureOf(err);
        addFailures(
          [...new Set(items.map((p) => p.entityId))].map((entity) => ({ entity, stage: 'write' as const, ...f })),
        );
      }
      for (const o of outcomes) {
        if (o.decision === 'approved') review.approved++;
        else if (o.decision === 'rejected') review.rejected++;
        else review.expired++;
      }
      state.counts.approved += outcomes.filter((o) => o.decision === 'approved').length;
      state.counts.rejected += outcomes.filter((o) => o.decision === 'rejected').length;
      state.counts.notReviewed += outcomes.filter((o) => o.decision === 'not_reviewed').length;
      for (const p of items) pending.delete(p.proposalId);
    }
    progress.awaitingReview = undecided().length;
    Object.assign(progress, {
      approved: state.counts.approved,
      rejected: state.counts.rejected,
      written: state.counts.written,
    });
  }

  /** The sweep's one wait for people: write decisions as they arrive, until all are decided or the deadline. */
  async function settleReviews(): Promise<number> {
    if (pending.size === 0) return 0;
    const started = Date.now();
    const deadline = Date.parse(review.deadline!);
    progress.phase = 'awaiting_review';
    for (;;) {
      decisionsArrived = false;
      await writeDecisions(false);
      if (pending.size === 0) break;
      const left = deadline - Date.now();
      if (left <= 0) break;
      setCurrentDetails(
        `**Waiting for review**: ${undecided().length} proposals (deadline ${review.deadline}); the automated work is done. ` +
          `Use \`argus review list ${sweepId}\`.`,
      );
      await condition(() => decisionsArrived, left);
    }
    await writeDecisions(true);
    return Date.now() - started;
  }

  const showProgress = () =>
    setCurrentDetails(
      `**Sweeping ${state.catalogName}** (${cfg.review} review): page ${state.counts.pagesDone}/${state.pageCount}, ` +
        `${state.counts.entitiesDone}/${state.entityCount} entities; ${state.counts.approved} approved, ` +
        `${state.counts.rejected} rejected, ${state.counts.notReviewed} not reviewed, ${state.counts.written} written`,
    );

  /** The pass a page belongs to: its first page, its entity count, and the page's place in it. */
  const passOf = (pageIndex: number) => {
    const rounds = state.incremental?.rounds ?? [{ firstPage: 0, count: state.entityCount }];
    const round = passOfPage(
      rounds.map((r) => r.firstPage),
      pageIndex,
    );
    const r = rounds[round]!;
    return { round, firstPage: r.firstPage, offset: (pageIndex - r.firstPage) * state.pageSize, count: r.count };
  };

  async function processPage(pageIndex: number): Promise<void> {
    const pass = passOf(pageIndex);
    const first = pass.offset;
    const size = Math.min(state.pageSize, pass.count - first);
    // The page's ids travel through the history only when model agents fan out per entity; the other
    // activities read them from the ledger, so no history grows with the catalog.
    const perEntity = cfg.agentBackend === 'model';
    let ids: string[];
    let loaded = 0;
    try {
      const page = await catalogActivities.loadCatalogPage.executeWithOptions(
        { ...CATALOG_OPTIONS, summary: `page ${pageIndex}: read ${size} entities` },
        [
          {
            ledgerKey: state.ledgerKey,
            pageIndex,
            pageSize: state.pageSize,
            ...(perEntity ? { withIds: true } : {}),
            ...(pass.round > 0 ? { round: pass.round, firstPage: pass.firstPage } : {}),
          },
        ],
      );
      // A result recorded before `count` existed carries every id (and no count).
      ids = page.ids;
      loaded = page.count ?? page.ids.length;
      noteFailures(page.failureCount ?? page.failures.length);
    } catch (err) {
      const f = failureOf(err);
      addFailures(Array.from({ length: size }, (_, i) => ({ entity: `#${first + i}`, stage: 'load' as const, ...f })));
      return;
    }
    // A later pass re-judges what this sweep's writes changed: descriptions and tags, never SQL, lineage or which
    // entities exist, so the lineage checker's evidence is as the first pass saw it and it is not asked again.
    const agents = pass.round > 0 ? cfg.agents.filter((a) => a !== 'lineage-checker') : cfg.agents;
    const agentRuns = agents.map(async (agent: AgentName) => {
      if (cfg.agentBackend === 'model') return runModelAgent(pageIndex, ids, agent);
      try {
        const r = await catalogActivities.runAgent.executeWithOptions(
          { ...CATALOG_OPTIONS, summary: `page ${pageIndex}: ${agent} on ${loaded} entities` },
          [{ ledgerKey: state.ledgerKey, pageIndex, ...(ids.length > 0 ? { ids } : {}), agent }],
        );
        noteFailures(r.failureCount ?? r.failures.length);
      } catch (err) {
        const f = failureOf(err);
        addFailures(pageEntities(ids, first, loaded).map((entity) => ({ entity, stage: agent, ...f })));
      }
    });
    await Promise.all(agentRuns);
    try {
      const review = await executeChild(arbiterWorkflow, {
        workflowId: arbiterWorkflowId(sweepId, pageIndex),
        args: [
          {
            sweepId,
            ledgerKey: state.ledgerKey,
            pageIndex,
            mode: cfg.review,
            endpoints: cfg.endpoints,
            retired: [...state.retired],
            modelConcurrency: cfg.modelConcurrency,
            throttleAttemptsBeforeRotation: cfg.throttleAttemptsBeforeRotation,
            modelBatch: cfg.modelBatch,
          },
        ],
        parentClosePolicy: ParentClosePolicy.TERMINATE,
        staticSummary: `Arbiter for ${state.catalogName} page ${pageIndex} (${cfg.review} review)`,
        staticDetails:
          `Reviews the proposals of page ${pageIndex} of sweep ${sweepId}: the mechanical gate first` +
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
      const f = failureOf(err);
      addFailures(pageEntities(ids, first, loaded).map((entity) => ({ entity, stage: 'review' as const, ...f })));
      log.warn('arbiter failed for page; its proposals stay unreviewed and unwritten', { pageIndex, error: f.message });
    }
    if (cfg.humanReview) {
      try {
        await parkForPeople(pageIndex, cfg.humanReview);
      } catch (err) {
        // What waits for people cannot be established (say, this worker lacks the page's state): write nothing
        // of the page rather than what only the Arbiter approved.
        const f = failureOf(err);
        addFailures(pageEntities(ids, first, loaded).map((entity) => ({ entity, stage: 'review' as const, ...f })));
        log.warn('parking for human review failed for page; nothing of it is written', { pageIndex, error: f.message });
        state.counts.pagesDone++;
        if (pass.round === 0) state.counts.entitiesDone += size;
        return;
      }
    }
    try {
      const w = await catalogActivities.applyApprovedRepairs.executeWithOptions(
        { ...CATALOG_OPTIONS, summary: `page ${pageIndex}: write approved repairs${cfg.dryRun ? ' (dry run)' : ''}` },
        [
          {
            ledgerKey: state.ledgerKey,
            sweepId,
            pageIndex,
            ...(ids.length > 0 ? { ids } : {}),
            overwriteHumanText: cfg.overwriteHumanText,
            dryRun: cfg.dryRun,
          },
        ],
      );
      state.counts.written += w.written;
    } catch (err) {
      const f = failureOf(err);
      addFailures(pageEntities(ids, first, loaded).map((entity) => ({ entity, stage: 'write' as const, ...f })));
    }
    state.counts.pagesDone++;
    if (pass.round === 0) state.counts.entitiesDone += size;
    Object.assign(progress, {
      pagesDone: state.counts.pagesDone,
      entitiesDone: state.counts.entitiesDone,
      approved: state.counts.approved,
      rejected: state.counts.rejected,
      notReviewed: state.counts.notReviewed,
      written: state.counts.written,
      retiredEndpoints: state.retired.map((r) => r.endpointId),
    });
    showProgress();
  }

  /**
   * The next pass, when the one just finished wrote something: the entities whose fingerprint its writes changed
   * (and their readers) are judged again, so that one sweep reaches its fixed point. Returns whether one starts.
   */
  async function nextPass(): Promise<boolean> {
    const inc = state.incremental;
    // A budget-fitted sweep spends what its plan covered, one pass: what its writes changed waits for the next sweep.
    if (!inc || cfg.dryRun || cfg.fitBudget || state.counts.written === inc.writtenAtRoundStart) return false;
    const round = inc.rounds.length;
    const d = await catalogActivities.detectChanges.executeWithOptions(
      { ...REPORT_OPTIONS, summary: `pass ${round + 1}: what this sweep's writes changed` },
      [{ ledgerKey: state.ledgerKey, round }],
    );
    inc.writtenAtRoundStart = state.counts.written;
    if (d.toJudge === 0) return false;
    // At most `maxPasses` passes (default 3): what the last one's writes changed is counted as unsettled and
    // judged by the next sweep (a description inherited onto a view makes its column a PII candidate).
    if (round >= cfg.maxPasses) {
      inc.unsettled = d.toJudge;
      return false;
    }
    inc.rounds.push({ firstPage: state.pageCount, count: d.toJudge });
    state.pageCount += Math.ceil(d.toJudge / state.pageSize);
    progress.pageCount = state.pageCount;
    return true;
  }

  // Bounded fan-out: at most `concurrency` pages in flight, and at most `pagesPerRun` pages per execution.
  const runStart = state.nextPage;
  for (;;) {
    const lastPage = Math.min(state.pageCount, runStart + cfg.pagesPerRun);
    let cursor = state.nextPage;
    const lanes = Array.from({ length: Math.min(cfg.concurrency, Math.max(1, lastPage - cursor)) }, async () => {
      while (cursor < lastPage) {
        const page = cursor++;
        await processPage(page);
      }
    });
    showProgress();
    await Promise.all(lanes);
    state.nextPage = lastPage;
    if (state.nextPage < state.pageCount || !(await nextPass())) break;
  }

  // Let in-flight update handlers finish before this execution ends or continues as new.
  await condition(allHandlersFinished);
  if (state.nextPage < state.pageCount) {
    await continueAsNew<typeof sweepWorkflow>(raw, {
      ...state,
      execution: state.execution + 1,
      ...(cfg.humanReview ? { review: { ...review, parked: [...pending.values()] } } : {}),
    });
  }
  const waitedMs = await settleReviews();
  await condition(allHandlersFinished);
  // Writes after the last pass (what people approved, or a budget-fitted sweep's one pass): what they changed is
  // not judged again in this sweep but by the next one, and the report counts it as unsettled.
  const inc0 = state.incremental;
  if (inc0 && !cfg.dryRun && state.counts.written > inc0.writtenAtRoundStart) {
    try {
      const d = await catalogActivities.detectChanges.executeWithOptions(
        { ...REPORT_OPTIONS, summary: 'what the writes after the last pass changed (judged by the next sweep)' },
        [{ ledgerKey: state.ledgerKey, round: inc0.rounds.length }],
      );
      inc0.unsettled = d.toJudge;
    } catch (err) {
      log.warn('could not count what the last writes changed', { error: failureOf(err).message });
    }
  }

  progress.phase = 'reporting';
  let incremental: IncrementalSummary | undefined;
  if (state.incremental) {
    const inc = state.incremental;
    incremental = {
      ...inc.summary,
      rounds: inc.rounds.length,
      rejudged: inc.rounds.slice(1).reduce((n, r) => n + r.count, 0),
      unsettled: inc.unsettled,
    };
    try {
      await catalogActivities.rememberSweep.executeWithOptions(
        { ...REPORT_OPTIONS, summary: cfg.dryRun ? 'dry run: remember nothing' : 'remember what this sweep decided' },
        [
          {
            ledgerKey: state.ledgerKey,
            sweepId,
            roundFirstPages: inc.rounds.map((r) => r.firstPage),
            failedEntities: state.failures.map((f) => f.entity),
            dryRun: cfg.dryRun,
          },
        ],
      );
    } catch (err) {
      // The sweep's work stands; only the next sweep loses the shortcut, and the report says so.
      const f = failureOf(err);
      incremental.note = `${incremental.note ? `${incremental.note}; ` : ''}the memory could not be saved (${f.message.slice(0, 300)}): the next sweep judges these entities again`;
    }
  }
  const breakerTripped = rotation.breakerTripped && (cfg.review === 'model' || cfg.agentBackend === 'model');
  progress.breakerTripped = breakerTripped;
  const report = await reportActivities.finalizeSweep.executeWithOptions(
    { ...REPORT_OPTIONS, summary: 'build the sweep report' },
    [
      {
        ledgerKey: state.ledgerKey,
        sweepId,
        mode: cfg.review,
        dryRun: cfg.dryRun,
        requested: state.entityCount,
        workflowFailures: state.failures,
        workflowFailuresDropped: state.failuresDropped,
        retired: state.retired,
        breakerTripped,
        executions: state.execution,
        extraPartialReasons: [],
        ...(state.deferred ? { deferred: state.deferred } : {}),
        ...(incremental && state.incremental
          ? { incremental, roundFirstPages: state.incremental.rounds.map((r) => r.firstPage) }
          : {}),
        ...(cfg.humanReview
          ? {
              humanReview: {
                waited: review.waited,
                approved: review.approved,
                rejected: review.rejected,
                expired: review.expired,
                notParked: review.overflow,
                waitedMs,
                ...(review.deadline ? { deadline: review.deadline } : {}),
              },
            }
          : {}),
      },
    ],
  );
  upsertSearchAttributes([{ key: SA_KEYS.partial, value: report.partial }]);
  upsertMemo({
    summary: {
      // Persisted with the run (unlike the live details): readable in the Web UI after every worker stopped.
      verdict: report.partial ? 'PARTIAL' : 'COMPLETE',
      reason: report.partial
        ? report.partialReasons.join('; ').slice(0, 1500)
        : report.deferred
          ? `everything it chose to do was done; ${report.deferred.count} entities deferred to the next sweep to fit the model budget`
          : 'everything asked was done',
      ...(report.deferred ? { deferred: report.deferred.count } : {}),
      ...(report.incremental
        ? {
            incremental: {
              new: report.incremental.new,
              changed: report.incremental.changed,
              unchanged: report.incremental.unchanged,
              gone: report.incremental.gone,
              carriedOver: report.incremental.carriedOver,
              rounds: report.incremental.rounds,
              ...(report.incremental.failSafe ? { failSafe: report.incremental.failSafe.slice(0, 500) } : {}),
            },
          }
        : {}),
      fullReport: `argus report ${sweepId} --format html --out report.html (or the file ${report.reportFile})`,
      reportFile: report.reportFile,
      partial: report.partial,
      partialReasons: report.partialReasons.slice(0, 5).map((r) => r.slice(0, 600)),
      entities: report.entities,
      outcomes: report.outcomes,
      written: report.written,
      coverage: { before: report.coverage.descriptionsBefore, after: report.coverage.descriptionsAfter },
      piiGovernance: report.piiGovernance.ratio,
      ...(report.humanReview
        ? {
            humanReview: {
              waited: report.humanReview.waited,
              approved: report.humanReview.approved,
              rejected: report.humanReview.rejected,
              expired: report.humanReview.expired,
              waitedMs: report.humanReview.waitedMs,
            },
          }
        : {}),
      // Totals only (bounded): the per-agent and per-endpoint split is in the report.
      ...(report.modelUsage && report.modelUsage.calls > 0
        ? {
            modelUsage: {
              calls: report.modelUsage.calls,
              promptTokens: report.modelUsage.promptTokens,
              completionTokens: report.modelUsage.completionTokens,
              estimatedCalls: report.modelUsage.estimatedCalls,
            },
          }
        : {}),
    },
  });
  progress.phase = 'done';
  setCurrentDetails(
    `${report.partial ? '**PARTIAL** — ' + report.partialReasons.join('; ') : '**Complete**'}` +
      (report.deferred ? ` — ${report.deferred.count} entities deferred to the next sweep (model budget)` : '') +
      '\n\n' +
      `${report.entities.processed}/${report.entities.requested} entities processed; approved ${report.outcomes.approved}, ` +
      `rejected ${report.outcomes.rejected}, not reviewed ${report.outcomes.not_reviewed}; written ${report.written}.\n\n` +
      (report.incremental
        ? `Since the last sweep: ${report.incremental.new} new, ${report.incremental.changed} changed, ` +
          `${report.incremental.unchanged} unchanged (${report.incremental.carriedOver} carried over), ${report.incremental.gone} gone.\n\n`
        : '') +
      `Full report: \`argus report ${sweepId} --format html --out report.html\` (file: ${report.reportFile}). ` +
      "The same verdict is kept in this run's memo (summary), readable after the worker stops.",
  );
  return report;
}
