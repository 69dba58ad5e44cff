import { MCP_PATH } from '../../mcp/acmp-extension.js';
import { connectMcpAcmpBuyer } from '../../mcp/buyer.js';
import { canonicalJson } from '../../shared/jcs.js';
import { fail, pass, skip, type Check } from '../check.js';
import { brief } from './inspect.js';
import { capabilityObject } from './plan.js';
import { isJsonObject } from '../../shared/json.js';

/**
 * ACMP over MCP (docs/acmp-mcp-binding.md §2): the `org.a2agora/acmp` extension an MCP server at the
 * agent's `/mcp` advertises (`server/discover`, or `initialize` for a 2025-era server) is the card's
 * capability object — one extension, two names (seed 000 §2, line 52).
 */

/** The detail our MCP buyer gives when the server answers but advertises no ACMP provider. */
const NO_ACMP = /advertises no ACMP/;

const discoverEqualsCard: Check = {
  id: 'acmp-mcp-discover',
  binding: 'acmp-mcp',
  title: 'The MCP server/discover (or initialize) org.a2agora/acmp object equals the card’s extension params',
  spec: 'seed 000 §2 (line 50–52); Layer 1 §1',
  run: async (ctx) => {
    const card = capabilityObject(ctx.card);
    if (!card) return skip('the card has no ACMP capability object to compare with');
    const url = `${ctx.url.replace(/\/+$/, '')}${MCP_PATH}`;
    let buyer: Awaited<ReturnType<typeof connectMcpAcmpBuyer>>;
    try {
      buyer = await connectMcpAcmpBuyer({
        endpoint: { url },
        ...(ctx.token ? { token: ctx.token } : {}),
        ...(ctx.caCert ? { caCert: ctx.caCert } : {}),
      });
    } catch (error) {
      const data = isJsonObject(error) ? error.data : undefined;
      const detail = isJsonObject(data) ? data.detail : undefined;
      if (typeof detail === 'string' && NO_ACMP.test(detail))
        return fail(`the MCP server at ${MCP_PATH} advertises no org.a2agora/acmp provider extension`);
      return skip(`no MCP server at ${MCP_PATH} (${error instanceof Error ? error.message : String(error)})`);
    }
    try {
      const served = canonicalJson(buyer.capabilityObject);
      return served === canonicalJson(card)
        ? pass()
        : fail(`MCP ${buyer.era} advertises ${brief(buyer.capabilityObject)}, the card ${brief(card)}`);
    } finally {
      await buyer.close();
    }
  },
};

/** The ACMP-over-MCP checks. */
export const mcpChecks: readonly Check[] = [discoverEqualsCard];
