import { createSweepActivities, type ActivityDeps } from './sweep-activities';
import { createModelActivities } from './model-activities';
import { createReviewPlanActivities } from './review-plan';
import { catalogErrorsAsFailures } from './catalog-access';

/** Every activity of ARGUS, built from its dependencies (state folder; the environment holding API keys). */
export function createActivities(deps: ActivityDeps & { env?: NodeJS.ProcessEnv }) {
  const sweep = createSweepActivities(deps);
  const model = createModelActivities(deps);
  return catalogErrorsAsFailures({ ...sweep, ...model, ...createReviewPlanActivities(sweep, model) });
}

export type ArgusActivities = ReturnType<typeof createActivities>;
