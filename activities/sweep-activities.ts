import { createCatalogActivities } from './catalog-activities';
import { createAgentActivities } from './agent-activities';
import { createReviewActivities } from './review-activities';
import { createWriteActivities } from './write-activities';
import { createReportActivities } from './report-activities';
import { createIncrementalActivities } from './incremental-activities';
import type { ActivityDeps } from './sweep-context';

export type { ActivityDeps };

/** Every no-model activity of a sweep, one file per concept, built from the same dependencies. */
export function createSweepActivities(deps: ActivityDeps) {
  return {
    ...createCatalogActivities(deps),
    ...createAgentActivities(deps),
    ...createReviewActivities(deps),
    ...createWriteActivities(deps),
    ...createReportActivities(deps),
    ...createIncrementalActivities(deps),
  };
}

export type SweepActivities = ReturnType<typeof createSweepActivities>;
