import { afterEach, describe, expect, it } from 'vitest';
import { ACP_MCP_EXTENSION_ID, ACP_MCP_URIS } from '../../src/acpspec/constants.js';
import { cleanup } from '../helpers/cleanup.js';
import { acpMcpHost, mcpClient } from './acp-helpers.js';
import { ERAS } from './helpers.js';

afterEach(cleanup);

// docs/acpspec-mcp.md "Wiring": the host builds its MCP server from what the modules contribute, so a
// dealership receiver running the acpspec module alone serves /mcp with ACPspec only.
describe('a host running only the acpspec module', () => {
  it.each(ERAS)('answers initialize on /mcp with ACPspec and no ACMP (%s)', async (era) => {
    const host = await acpMcpHost({ 'tls-self-signed': true }, 'acpspec');
    const { client } = await mcpClient(host, era);
    const caps = client.getServerCapabilities();
    expect(Object.keys(caps?.extensions ?? {})).toEqual([ACP_MCP_EXTENSION_ID]);
    expect(caps).not.toHaveProperty('acmp');
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('acp_apply_delta');
    expect(tools.filter((t) => t.startsWith('acmp'))).toEqual([]);
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates.length).toBeGreaterThan(0);
    const schema = await client.readResource({ uri: ACP_MCP_URIS.schema });
    expect(schema.contents).toHaveLength(1);
    expect(client.getInstructions()).not.toMatch(/ACMP/);
  });
});
