/** Public API of the ARGUS package. */
export { classifyProviderResponse } from './llm/classify';
export type { ThrottleClassification, ProviderResponse } from './llm/classify';
export { parseDurationSeconds, parseRetryAfter, parseBodyDelaySeconds } from './llm/durations';
export { parseSweepInput, SweepInput } from './domain/sweep';
export { CatalogFile, CatalogEntity } from './domain/catalog';
export type { SweepReport } from './domain/report';
export { sweepWorkflow, arbiterWorkflow } from './workflows';
export { createActivities } from './activities';
