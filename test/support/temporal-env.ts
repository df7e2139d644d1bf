// Where the test Temporal server is, as set up by test/global-setup.js, and a client connected to it.
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';

/** Namespace every test uses; the dev server always has it. */
export const TEST_NAMESPACE = 'default';

function fromEnv(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run tests through \`npm test\` (jest globalSetup starts the test server)`);
  }
  return value;
}

/** host:port of the test server's frontend. */
export function testAddress(): string {
  return fromEnv('TEMPORAL_TEST_ADDRESS');
}

/** Base URL of the test server's Web UI, without a trailing slash. */
export function testUiUrl(): string {
  return fromEnv('TEMPORAL_TEST_UI_URL').replace(/\/+$/, '');
}

/** Absolute path of the temporal CLI the harness found or installed. */
export function temporalCliPath(): string {
  return fromEnv('TEMPORAL_CLI_PATH');
}

/** Connects to the test server; close `connection` in afterAll. */
export async function connectTestClient(): Promise<{ connection: Connection; client: Client }> {
  const connection = await Connection.connect({ address: testAddress() });
  const client = new Client({ connection, namespace: TEST_NAMESPACE });
  return { connection, client };
}

/** An id no other test or earlier run uses: `<prefix>-<time>-<random>`. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}
