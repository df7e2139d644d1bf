// Jest globalTeardown: stops the dev server that test/global-setup.js started (nothing when the run
// used TEMPORAL_TEST_ADDRESS). SIGTERM first so it exits cleanly, SIGKILL if it lingers.
const { killGroup } = require('./global-setup');

const GRACE_MS = 5_000;

module.exports = async function globalTeardown() {
  const state = globalThis.__ARGUS_TEST_TEMPORAL__;
  if (!state || state.stopped) return;
  state.stopped = true;
  killGroup(state.pid, 'SIGTERM');
  // The timer must stay ref'd: the child handle is unref'd, and with nothing else pending Node would
  // exit mid-teardown with status 0, hiding failed tests.
  let timer;
  const timedOut = await Promise.race([
    state.exit.then(() => false),
    new Promise((resolve) => (timer = setTimeout(resolve, GRACE_MS, true))),
  ]);
  clearTimeout(timer);
  if (timedOut) killGroup(state.pid, 'SIGKILL');
  delete globalThis.__ARGUS_TEST_TEMPORAL__;
};
