import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { ACP_MCP_URIS } from '../../src/acpspec/constants.js';
import type { AcpAck, Envelope } from '../../src/acpspec/envelope.js';
import { createAcpHttpClient, type AcpHttpClient } from '../../src/http/acp-client.js';
import type { HostFlags } from '../../src/server/config.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { fetchTrusting } from '../../src/shared/fetch.js';
import { RECEIVER } from '../acpspec/helpers.js';
import { startTestHost, tempDir } from '../helpers/host.js';
import { ALICE, BOB, recordingClient, type Era, type RecordingClient } from './helpers.js';

/**
 * Helpers of the ACPspec-over-MCP tests (docs/acpspec-mcp.md): a host serving ACMP and ACPspec (so /mcp
 * carries both) with the named tokens of ./helpers.ts, the official MCP client over its TLS, and the
 * other bindings' views of a transaction to compare bytes with.
 */

export interface AcpMcpHost {
  url: string;
  caCert: string | undefined;
  /** The HTTPS binding as alice. */
  http: AcpHttpClient;
}

/**
 * A host with ACMP and ACPspec (or ACPspec alone, a dealership receiver), self-signed TLS (personal data
 * allowed) unless `flags` say otherwise.
 */
export async function acpMcpHost(
  flags: HostFlags = { 'tls-self-signed': true },
  only?: 'acpspec',
  options: { migrate?: boolean } = {},
): Promise<AcpMcpHost> {
  const acmp = only === 'acpspec' ? [] : [acmpModule({ capabilities: demoCapabilities({ stepMs: 5 }) })];
  const host = await startTestHost({
    flags: { 'no-tls': false, token: [`alice=${ALICE}`, `bob=${BOB}`], ...flags },
    dataDir: tempDir('a2ac-acp-mcp-'),
    modules: [...acmp, acpModule({ producer: { ...RECEIVER } })],
    ...(options.migrate ? { migrate: true } : {}),
  });
  const caCert = host.tls?.cert;
  return {
    url: host.url,
    caCert,
    http: createAcpHttpClient({ baseUrl: host.url, token: ALICE, ...(caCert ? { caCert } : {}) }),
  };
}

/** The official MCP client of `era` on the host's /mcp as the caller of `token` (closed by cleanup). */
export async function mcpClient(host: AcpMcpHost, era: Era, token = ALICE): Promise<RecordingClient> {
  const { client, notifications } = recordingClient(era);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
      fetch: fetchTrusting(host.caCert),
      authProvider: { token: () => Promise.resolve(token) },
    }),
  );
  return { client, notifications };
}

/** What a tool call answered: its structured content and text, and whether it is an error. */
export interface ToolAnswer {
  isError: boolean;
  structured: Record<string, unknown>;
  text: string;
}

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolAnswer> {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
    content: { type: string; text?: string }[];
  };
  return {
    isError: result.isError === true,
    structured: result.structuredContent ?? {},
    text: result.content.find((c) => c.type === 'text')?.text ?? '',
  };
}

/** The `{acp_error}` of a tool error (fails when the call succeeded). */
export function acpErrorOf(answer: ToolAnswer): { code: string; details?: Record<string, unknown> } {
  if (!answer.isError) throw new Error(`expected a tool error, got ${answer.text}`);
  return answer.structured.acp_error as { code: string; details?: Record<string, unknown> };
}

/** The text of a transaction's resource, read over MCP. */
export async function readState(client: Client, transactionId: string): Promise<string> {
  const { contents } = await client.readResource({ uri: ACP_MCP_URIS.transaction(transactionId) });
  const [first] = contents as { text?: string }[];
  return first?.text ?? '';
}

/** The state bytes over HTTPS and over A2A (a state request's data part, canonicalised), as alice. */
export async function otherBindingsState(
  host: AcpMcpHost,
  transactionId: string,
): Promise<{ https: string; a2a: string }> {
  const https = (await host.http.state(transactionId)).bytes.toString('utf8');
  const a2a = await createAcpClient({
    agentUrl: host.url,
    token: ALICE,
    ...(host.caCert ? { caCert: host.caCert } : {}),
  });
  return { https, a2a: canonicalJson(await a2a.requestState(transactionId)) };
}

/** Resolves once a `notifications/resources/updated` for `uri` was recorded `count` times. */
export async function updated(rec: RecordingClient, uri: string, count = 1): Promise<void> {
  const seen = (): number =>
    rec.notifications.filter((n) => n.method === 'notifications/resources/updated' && n.params.uri === uri)
      .length;
  while (seen() < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Sends an envelope over the HTTPS binding as alice (its canonical bytes). */
export function sendHttps(host: AcpMcpHost, envelope: Envelope): Promise<AcpAck> {
  return host.http.transport.send(envelope, Buffer.from(canonicalJson(envelope), 'utf8'));
}

/** The same host as another caller (its HTTPS binding with `token`). */
export function asCaller(host: AcpMcpHost, token: string): AcpMcpHost {
  return {
    ...host,
    http: createAcpHttpClient({ baseUrl: host.url, token, ...(host.caCert ? { caCert: host.caCert } : {}) }),
  };
}
