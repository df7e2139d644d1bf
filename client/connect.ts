import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';

export interface ArgusClient {
  client: Client;
  connection: Connection;
  namespace: string;
  address: string;
  close(): Promise<void>;
}

/** Connect using the SDK's standard environment configuration (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS, API key, profiles). */
export async function connectClient(): Promise<ArgusClient> {
  const c = loadClientConnectConfig();
  const address = c.connectionOptions.address ?? process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
  const namespace = c.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default';
  const connection = await Connection.connect({ ...c.connectionOptions, address } as Parameters<
    typeof Connection.connect
  >[0]);
  const client = new Client({ connection, namespace });
  return { client, connection, namespace, address, close: () => connection.close() };
}

/** Web UI address: ARGUS_UI_URL, else the dev server's UI beside a local server. */
export function uiBaseUrl(address: string): string {
  if (process.env.ARGUS_UI_URL) return process.env.ARGUS_UI_URL.replace(/\/+$/, '');
  const host = address.split(':')[0] ?? 'localhost';
  return `http://${host === '127.0.0.1' ? 'localhost' : host}:8233`;
}

export function workflowUiLink(base: string, namespace: string, workflowId: string, runId?: string): string {
  const id = encodeURIComponent(workflowId);
  return runId
    ? `${base}/namespaces/${namespace}/workflows/${id}/${runId}/history`
    : `${base}/namespaces/${namespace}/workflows/${id}`;
}

/** Run `fn` with a client connected for it, closed afterwards whatever happens. */
export async function withClient<T>(fn: (c: ArgusClient) => Promise<T>): Promise<T> {
  const c = await connectClient();
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

/** The Web UI page of a workflow on the server `c` is connected to. */
export function uiLink(c: ArgusClient, workflowId: string, runId?: string): string {
  return workflowUiLink(uiBaseUrl(c.address), c.namespace, workflowId, runId);
}
