import { Context } from '@temporalio/activity';
import type { AgentName, EntityFailure, Proposal } from '../domain/proposal';
import { proposalId } from '../domain/digest';
import { NO_MODEL_AGENTS, NEEDS_NEIGHBOURS, type AgentFn } from '../judgment/agents';
import { draftRemovals, holdsArgusInheritedText } from '../judgment/description-drafter';
import { NO_NEIGHBOURS } from '../judgment/description-evidence';
import { pageNeighbours } from './neighbours';
import { proposeFromSamples, samplingCandidates } from '../judgment/pii/samples';
import { sampledEvidence } from './value-sampling';
import { catalogContext } from './catalog-access';
import { faultPoint } from './fault-points';
import { sweepContext, type ActivityDeps } from './sweep-context';
import { skippedOnPage, unsettledProposals } from './incremental-activities';
import { countProposals } from './metrics';

/** The no-model agents: judgment/ run over a page, proposals into the ledger. */
export function createAgentActivities(deps: ActivityDeps) {
  const { ledgerFor, catalogOf, metrics } = sweepContext(deps);
  return {
    /** Run one no-model agent over a page; proposals go to the ledger, the count to the history. */
    async runAgent(input: {
      ledgerKey: string;
      pageIndex: number;
      /** The page's ids; absent: read from the ledger (what loadCatalogPage stored). */
      ids?: string[];
      agent: AgentName;
      /**
       * The description drafter's removals alone (model agents, which propose none: see draftRemovals), recorded
       * as `description-drafter-removals`; only entities holding ARGUS's inherited text are read further.
       */
      removalsOnly?: boolean;
    }): Promise<{
      proposals: number;
      /** Proposals recorded for review (those an earlier pass or sweep settled are left out). */
      recorded: number;
      failures: EntityFailure[];
      failureCount: number;
    }> {
      faultPoint('agent-start');
      const ledger = ledgerFor(input.ledgerKey);
      const { meta, catalog } = await catalogOf(ledger);
      const ctx = await catalogContext(catalog);
      const skip = await skippedOnPage(ledger, input.pageIndex, input.agent);
      const read = await catalog.getEntities(
        (input.ids ?? (await ledger.pageIds(input.pageIndex))).filter((id) => !skip.has(id)),
      );
      const removalsOnly = input.removalsOnly === true && input.agent === 'description-drafter';
      const entities = removalsOnly
        ? read.entities.filter((e) => holdsArgusInheritedText(e) || e.columns.some(holdsArgusInheritedText))
        : read.entities;
      const fn: AgentFn = removalsOnly ? draftRemovals : NO_MODEL_AGENTS[input.agent];
      const record = removalsOnly ? `${input.agent}-removals` : input.agent;
      const neighbours =
        NEEDS_NEIGHBOURS.has(input.agent) && entities.length > 0
          ? await pageNeighbours(`${input.ledgerKey}#${input.pageIndex}`, catalog, entities, ctx)
          : NO_NEIGHBOURS;
      const proposals: Proposal[] = [];
      const failures: EntityFailure[] = [];
      for (const e of entities) {
        try {
          const found = fn(e, ctx, neighbours);
          if (input.agent === 'pii-classifier' && meta.sampleRows !== undefined) {
            // Opt-in: columns the rules leave undecided are sampled here; only counts come back.
            const proposed = new Set(found.flatMap((p) => (p.change.kind === 'pii_tag' ? [p.change.column] : [])));
            const evidence = await sampledEvidence(catalog, e, samplingCandidates(e, proposed), meta.sampleRows);
            // A table read can take seconds (a dbt process each): the activity says it is alive after each one.
            Context.current().heartbeat(e.id);
            found.push(...proposeFromSamples(e, evidence));
          }
          for (const { change, evidence } of found) {
            proposals.push({
              id: proposalId(meta.catalogName, e.id, change),
              entityId: e.id,
              agent: input.agent,
              change,
              evidence: evidence.slice(0, 20).map((s) => s.slice(0, 300)),
            });
          }
        } catch (err) {
          failures.push({
            entity: e.id,
            stage: input.agent,
            category: 'agent_error',
            retryable: false,
            message: String((err as Error).message ?? err).slice(0, 500),
          });
        }
      }
      const recorded = await unsettledProposals(ledger, input.pageIndex, proposals);
      await ledger.writeProposals(input.pageIndex, record, recorded);
      await ledger.writeFailures(input.pageIndex, record, failures);
      countProposals(metrics, recorded);
      return {
        proposals: proposals.length,
        recorded: recorded.length,
        failures: failures.slice(0, 20),
        failureCount: failures.length,
      };
    },
  };
}
