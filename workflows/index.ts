export { sweepWorkflow } from './sweep';
export { arbiterWorkflow } from './arbiter';
export { planSweepWorkflow } from './plan';
