export { sweepWorkflow } from './sweep';
export { arbiterWorkflow } from './arbiter';
