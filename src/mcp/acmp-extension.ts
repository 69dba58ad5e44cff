import type { JSONObject, ServerCapabilities } from '@modelcontextprotocol/server';
import { ACMP_CODE, AcmpError } from '../acmp/wire/errors.js';
import { CapabilityObjectSchema, type CapabilityObject } from '../acmp/wire/messages.js';
import { ID_LIMITS } from '../shared/id-rules.js';
import { isJsonObject } from '../shared/json.js';

/**
 * The MCP extension identifier of ACMP (seed 000 §2: `org.a2agora/acmp` under MCP's reverse-DNS rule and
 * `https://a2agora.org/acmp/v0.1` under A2A's URI convention denote one extension).
 */
export const ACMP_MCP_EXTENSION_ID = 'org.a2agora/acmp';

/** The MCP revision this binding targets (the stateless, per-request-`_meta` era). */
export const MCP_PROTOCOL_VERSION = '2026-07-28';

/** The path of the host's MCP endpoint (Streamable HTTP), beside the A2A routes on the same port. */
export const MCP_PATH = '/mcp';

/**
 * The longest task id the MCP binding accepts: the host's id limit (src/shared/id-rules.ts), the A2A
 * binding's too (docs/acmp-a2a-binding.md §4), so a task started over one binding can be retried, joined
 * and read over the other.
 */
export const MAX_TASK_ID_LENGTH = ID_LIMITS.id;

/**
 * The `capabilities` an ACMP provider advertises over MCP: the Layer 1 §1 capability object as the settings
 * of the `org.a2agora/acmp` extension (the very object the A2A card carries as extension params). 2025-era
 * `initialize` answers also carry it under the Layer 1 §1 key `acmp`, where buyers written against the
 * handshake-era text look for it (docs/acmp-mcp-binding.md §2).
 */
export function acmpMcpCapabilities(
  capability: CapabilityObject,
  era: 'modern' | 'legacy',
): ServerCapabilities {
  // The capability object is plain JSON (built by the provider core from booleans, strings and numbers).
  const settings = capability as unknown as JSONObject;
  const extensions = { [ACMP_MCP_EXTENSION_ID]: settings };
  return era === 'legacy' ? ({ extensions, acmp: settings } as ServerCapabilities) : { extensions };
}

/**
 * The ACMP capability object an MCP server advertises (`server/discover` or `initialize` capabilities): the
 * `org.a2agora/acmp` extension settings, else the Layer 1 §1 `acmp` key.
 * @throws AcmpError -33007 when neither holds a provider capability object.
 */
export function acmpCapabilityOfMcp(capabilities: unknown): CapabilityObject {
  const caps = isJsonObject(capabilities) ? capabilities : {};
  const extensions = isJsonObject(caps.extensions) ? caps.extensions : {};
  for (const candidate of [extensions[ACMP_MCP_EXTENSION_ID], caps.acmp]) {
    const parsed = CapabilityObjectSchema.safeParse(candidate);
    if (parsed.success && parsed.data.role === 'provider') return parsed.data;
  }
  throw new AcmpError(ACMP_CODE.featureUnsupported, {
    detail: 'the MCP server advertises no ACMP provider extension',
  });
}
