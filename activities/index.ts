import { createSweepActivities, type ActivityDeps } from './sweep-activities';
import { createModelActivities } from './model-activities';
import { catalogErrorsAsFailures } from './catalog-access';

/** Every activity of ARGUS, built from its dependencies (state folder; the environment holding API keys). */
export function createActivities(deps: ActivityDeps & { env?: NodeJS.ProcessEnv }) {
  return catalogErrorsAsFailures({ ...createSweepActivities(deps), ...createModelActivities(deps) });
}

export type ArgusActivities = ReturnType<typeof createActivities>;
