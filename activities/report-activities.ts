import { Context } from '@temporalio/activity';
import type { EntityFailure, ProposalChange } from '../domain/proposal';
import type { ReviewMode } from '../domain/sweep';
import type {
  SweepReport,
  ReportProposal,
  KindCounts,
  RetiredEndpoint,
  ModelUsage,
  TokenTotals,
  HumanReviewSummary,
  DeferredEntities,
  IncrementalSummary,
} from '../domain/report';
import type { ModelCallRecord } from '../state/store';
import { addStats, emptyStats, type CatalogStats } from '../judgment/catalog-stats';
import { createIncrementalActivities, statsBeforeDocName } from './incremental-activities';
import { ReportSpool } from './report-spool';
import { sweepContext, type ActivityDeps } from './sweep-context';
import { throwIfOutage } from './failures';
import { forgetPageNeighbours } from './neighbours';

/** An error's message, bounded, for a sentence in the report. */
const whyOf = (e: unknown): string => String((e as Error)?.message ?? e).slice(0, 300);

function emptyKinds(): Record<ProposalChange['kind'], KindCounts> {
  const z = (): KindCounts => ({ proposed: 0, approved: 0, rejected: 0, not_reviewed: 0, written: 0 });
  return { description: z(), pii_tag: z(), lineage_flag: z(), description_removal: z() };
}

/** The sweep report, built from the ledger once every page is done. */
export function createReportActivities(deps: ActivityDeps) {
  const { ledgerFor, catalogOf } = sweepContext(deps);
  const { rememberSweep } = createIncrementalActivities(deps);
  return {
    /**
     * Build the report from the ledger and the catalog as it now is; saves it beside the ledger. With `remember`,
     * first remembers what the sweep decided (rememberSweep, one step fewer for the workflow): a memory that cannot
     * be saved is said in `incremental.note`, never a failure of the report.
     */
    async finalizeSweep(input: {
      ledgerKey: string;
      sweepId: string;
      mode: ReviewMode;
      dryRun: boolean;
      requested: number;
      workflowFailures: EntityFailure[];
      workflowFailuresDropped: number;
      retired: RetiredEndpoint[];
      breakerTripped: boolean;
      executions: number;
      extraPartialReasons: string[];
      maxProposalsInReport?: number;
      humanReview?: HumanReviewSummary;
      deferred?: DeferredEntities;
      /** Change detection's counts and the passes run (with memory across sweeps). */
      incremental?: IncrementalSummary;
      /** The first page of each pass: a proposal judged again in a later pass is reported once, as it ended. */
      roundFirstPages?: number[];
      /** rememberSweep's input, to remember the sweep's decisions before the report is built. */
      remember?: Parameters<typeof rememberSweep>[0];
    }): Promise<SweepReport> {
      // The pages are done: what was kept to read them fast is let go before the memory and the report (their
      // peak is a large sweep's), here and in the catalog (a file catalog's kept entities).
      forgetPageNeighbours(input.ledgerKey);
      await catalogOf(ledgerFor(input.ledgerKey))
        .then(({ catalog }) => catalog.release?.())
        .catch(() => undefined);
      // Bookkeeping after the writes never fails the sweep: what could not be recorded is said in the report.
      const notRecorded: string[] = [];
      if (input.remember && input.incremental) {
        try {
          await rememberSweep(input.remember);
        } catch (e) {
          throwIfOutage(e);
          const note = `the memory could not be saved (${whyOf(e)}): the next sweep judges these entities again`;
          input.incremental.note = input.incremental.note ? `${input.incremental.note}; ${note}` : note;
          notRecorded.push(note);
        }
      }
      const ledger = ledgerFor(input.ledgerKey);
      const meta = await ledger.meta();
      // A caveat never costs the report: a catalog that cannot say one now (gone, out of reach) says none.
      const catalogNotes =
        (await catalogOf(ledger)
          .then(({ catalog }) => catalog.notes?.())
          .catch(() => undefined)) ?? [];
      const byKind = emptyKinds();
      const outcomesCount = { approved: 0, rejected: 0, not_reviewed: 0 };
      const failures: EntityFailure[] = [...input.workflowFailures];
      let written = 0;
      let already = 0;
      let keptHuman = 0;
      let writesFailed = 0;
      let total = 0;
      // The report file holds every proposal; the workflow result (a Temporal payload) carries the first ones.
      const limit = input.maxProposalsInReport ?? 1000;
      const kept: ReportProposal[] = [];
      const spool = new ReportSpool(ledger.reportFile());
      // The report file is bookkeeping too: one that cannot be written leaves this result as the report.
      let spoolFailed: string | undefined;
      const spoolAdd = async (rows: ReportProposal[]) => {
        if (spoolFailed) return;
        try {
          await spool.add(rows);
        } catch (e) {
          spoolFailed = whyOf(e);
          await spool.abort().catch(() => undefined);
        }
      };
      const partialReasons: string[] = [...input.extraPartialReasons];
      const usage = usageTotals();
      // With change detection the catalog's figures before the sweep were taken whole (carried-over entities
      // have no page); each page then adds what its write changed. Without it, the pages' figures sum up.
      const catalogBefore = input.incremental ? await ledger.doc<CatalogStats>(statsBeforeDocName) : undefined;
      const before = emptyStats();
      const added = emptyStats();
      const removed = emptyStats();
      const pages = await ledger.pageNumbers();
      // A proposal judged again in a later pass (its evidence changed) is reported as that pass ended it.
      const lastPageOf = new Map<string, number>();
      const writtenInSweep = new Set<string>();
      const laterFrom = input.roundFirstPages?.[1];
      if (laterFrom !== undefined) {
        for (const n of pages) {
          for (const id of (await ledger.allWrites(n))?.written ?? []) writtenInSweep.add(id);
          if (n >= laterFrom) for (const p of await ledger.proposals(n)) lastPageOf.set(p.id, n);
        }
      }
      const unreadPages: { page: number; why: string }[] = [];
      for (const n of pages) {
        Context.current().heartbeat(n);
        try {
          const pageBefore = await ledger.stats(n, 'before');
          if (!catalogBefore) addStats(before, pageBefore);
          // A page whose write never ran still holds what it held before.
          addStats(added, (await ledger.stats(n, 'after')) ?? pageBefore);
          addStats(removed, pageBefore);
          failures.push(...(await ledger.failures(n)));
          const proposals = (await ledger.proposals(n)).filter((p) => (lastPageOf.get(p.id) ?? n) <= n);
          const outcomes = new Map((await ledger.outcomes(n)).map((o) => [o.proposalId, o]));
          const w = await ledger.allWrites(n);
          const writtenSet = new Set([...(w?.written ?? []), ...writtenInSweep]);
          written += w?.written.length ?? 0;
          already += w?.already.length ?? 0;
          keptHuman += w?.keptHuman.length ?? 0;
          writesFailed += w?.failed?.length ?? 0;
          const pageRows: ReportProposal[] = [];
          for (const p of proposals) {
            total++;
            const o = outcomes.get(p.id);
            const decision = o?.decision ?? 'not_reviewed';
            const k = byKind[p.change.kind];
            k.proposed++;
            k[decision]++;
            outcomesCount[decision]++;
            if (writtenSet.has(p.id)) k.written++;
            const row: ReportProposal = {
              id: p.id,
              entityId: p.entityId,
              agent: p.agent,
              kind: p.change.kind,
              change: p.change,
              outcome: decision,
              reason: o?.reason ?? 'no review outcome recorded',
              reviewer: o?.reviewer ?? 'none',
              written: writtenSet.has(p.id),
              ...(w?.notes[p.id] ? { writeNote: w.notes[p.id] } : {}),
            };
            pageRows.push(row);
            if (kept.length < limit) kept.push(row);
          }
          await spoolAdd(pageRows);
          for (const c of await ledger.calls(n)) usage.add(c);
        } catch (e) {
          throwIfOutage(e);
          // A page whose records cannot be read (a damaged ledger file) leaves the rest of the report standing;
          // what it counted up to the damage stays counted, and the report is partial.
          unreadPages.push({ page: n, why: whyOf(e) });
        }
      }
      if (unreadPages.length)
        partialReasons.push(
          `the records of ${unreadPages.length} page(s) could not be read, so their proposals, writes and figures are ` +
            `missing or incomplete in this report (the repairs written stand): ` +
            unreadPages
              .slice(0, 5)
              .map((u) => `page ${u.page}: ${u.why}`)
              .join('; '),
        );
      if (catalogBefore) addStats(before, catalogBefore);
      const after = combineStats(before, added, removed);
      const failedEntities = new Set(failures.map((f) => f.entity));
      const processed = Math.max(0, input.requested - failedEntities.size);
      if (failedEntities.size > 0)
        partialReasons.push(`${failedEntities.size} of ${input.requested} entities failed (see failures)`);
      if (writesFailed > 0)
        partialReasons.push(
          `${writesFailed} approved repairs could not be written (each proposal's writeNote says why)`,
        );
      if (outcomesCount.not_reviewed > 0)
        partialReasons.push(`${outcomesCount.not_reviewed} proposals were not reviewed and were not written`);
      if (input.incremental?.failSafe) partialReasons.push(input.incremental.failSafe);
      if (input.breakerTripped) {
        const why = input.retired.map(
          (r) =>
            `${r.endpointId}: ${r.reason}${r.providerMessage ? ` (provider said: ${r.providerMessage.slice(0, 300)})` : ''}`,
        );
        partialReasons.push(`model budget exhausted on every endpoint: ${why.join('; ')}`);
      }
      const ratio = (a: number, b: number) => (b === 0 ? 1 : Math.round((a / b) * 10000) / 10000);
      const report: SweepReport = {
        reportVersion: 1,
        sweepId: input.sweepId,
        catalog: meta.catalogName,
        mode: input.mode,
        dryRun: input.dryRun,
        startedAt: meta.startedAt,
        finishedAt: new Date().toISOString(),
        partial: partialReasons.length > 0,
        partialReasons,
        ...(catalogNotes.length ? { catalogNotes } : {}),
        // Early in the result, so a person reading it (the Web UI shows the result whole) finds the full report.
        reportFile: ledger.reportLocation(),
        entities: { requested: input.requested, processed, failed: failedEntities.size },
        outcomes: outcomesCount,
        byKind,
        written,
        alreadyApplied: already,
        keptHumanText: keptHuman,
        writesFailed,
        coverage: {
          descriptionsBefore: ratio(before.described, before.describable),
          descriptionsAfter: ratio(after.described, after.describable),
          describedBefore: before.described,
          describedAfter: after.described,
          describable: after.describable,
          sources: after.sources,
          restatementsNotCounted: after.restatements,
        },
        piiGovernance: {
          tagged: after.tagged,
          piiLooking: after.piiLooking,
          ratio: ratio(after.tagged, after.piiLooking),
          taggedBefore: before.tagged,
        },
        failures: failures.slice(0, 500),
        failuresTruncated: Math.max(0, failures.length - 500) + input.workflowFailuresDropped,
        endpoints: { retired: input.retired, breakerTripped: input.breakerTripped },
        modelUsage: usage.report(input.requested),
        ...(input.humanReview ? { humanReview: input.humanReview } : {}),
        ...(input.deferred ? { deferred: input.deferred } : {}),
        ...(input.incremental ? { incremental: input.incremental } : {}),
        proposals: kept,
        proposalsTruncated: Math.max(0, total - limit),
        executions: input.executions,
      };
      if (!spoolFailed)
        try {
          await spool.finish(report);
          await ledger.publishReport(ledger.reportFile());
        } catch (e) {
          await spool.abort().catch(() => undefined);
          throwIfOutage(e);
          spoolFailed = whyOf(e);
        }
      if (spoolFailed)
        notRecorded.push(
          `the report file ${report.reportFile} could not be written (${spoolFailed}): this result is the report, ` +
            `with the first ${Math.min(total, limit)} of its ${total} proposals`,
        );
      return notRecorded.length ? { ...report, notRecorded } : report;
    },
  };
}

/** `base` plus `plus` minus `minus`, figure by figure (a catalog's figures after the pages' writes). */
function combineStats(base: CatalogStats, plus: CatalogStats, minus: CatalogStats): CatalogStats {
  const out = emptyStats();
  addStats(out, base);
  addStats(out, plus);
  const neg: CatalogStats = {
    describable: -minus.describable,
    described: -minus.described,
    sources: {
      human: -minus.sources.human,
      inherited: -minus.sources.inherited,
      derived: -minus.sources.derived,
      model: -minus.sources.model,
    },
    restatements: -minus.restatements,
    piiLooking: -minus.piiLooking,
    tagged: -minus.tagged,
  };
  addStats(out, neg);
  return out;
}

/** Sums of the sweep's model calls, by agent and by endpoint. */
function usageTotals() {
  const zero = (): TokenTotals => ({ calls: 0, promptTokens: 0, completionTokens: 0 });
  const total = zero();
  const byAgent: Record<string, TokenTotals> = {};
  const byEndpoint: Record<string, TokenTotals> = {};
  let estimated = 0;
  let remembered = 0;
  const into = (t: TokenTotals, c: ModelCallRecord) => {
    t.calls++;
    t.promptTokens += c.promptTokens;
    t.completionTokens += c.completionTokens;
  };
  return {
    add(c: ModelCallRecord) {
      // Answered from the answer memory: no call, no tokens; counted apart.
      if (c.remembered) {
        remembered++;
        return;
      }
      into(total, c);
      into((byAgent[c.agent] ??= zero()), c);
      into((byEndpoint[c.endpoint] ??= zero()), c);
      if (c.estimated) estimated++;
    },
    report(entities: number): ModelUsage {
      const per = (x: number) => (entities === 0 ? 0 : Math.round((x / entities) * 100) / 100);
      return {
        ...total,
        estimatedCalls: estimated,
        remembered,
        perEntity: {
          calls: per(total.calls),
          promptTokens: per(total.promptTokens),
          completionTokens: per(total.completionTokens),
        },
        byAgent,
        byEndpoint,
      };
    },
  };
}
