// Jest globalTeardown of `npm run test:cluster`: `npm run cluster -- down` on the test cluster, its folder removed
// (unless it was ARGUS_CLUSTER_TEST_DIR), then the dev server stopped.
const fs = require('node:fs');
const { cluster } = require('./global-setup');
const devServerTeardown = require('../global-teardown');

module.exports = async function globalTeardown() {
  const state = globalThis.__ARGUS_TEST_CLUSTER__;
  try {
    if (state) {
      cluster(['down'], state.dir);
      if (!state.keep) fs.rmSync(state.dir, { recursive: true, force: true });
      delete globalThis.__ARGUS_TEST_CLUSTER__;
    }
  } finally {
    await devServerTeardown();
  }
};
