import { createA2AAcmpBuyer, type A2AAcmpBuyer } from '../../src/connect/a2a-acmp-buyer.js';
import type { BuyerEscrow } from '../../src/a2a/escrow/buyer-escrow.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import type { Logger } from '../../src/shared/logger.js';
import { escrowHost, secret } from '../escrow/helpers.js';
import { startTestHost } from '../helpers/host.js';
import { recordOutboundHeaders } from '../helpers/tracing.js';

/**
 * An escrow agent, a provider that verifies escrows there, and a buyer with an escrow bound to `boundTo`
 * (the provider unless a test wants the bind refused), with every outbound call's trace headers recorded.
 */
export async function threeAgents(options: { boundTo?: string; logger?: Logger } = {}) {
  const escrow = await escrowHost();
  await escrow.credit('agent:buyer', '1');
  const outbound = recordOutboundHeaders();
  const provider = await startTestHost({
    ...(options.logger && { logger: options.logger }),
    modules: [
      acmpModule({
        capabilities: demoCapabilities({ stepMs: 5 }),
        escrowAgent: {
          agentUrl: escrow.host.url,
          token: secret('provider'),
          payeeId: 'agent:provider',
          // No claim during the test: its spans would be a second trace of the provider's own.
          claimDelayMs: 60_000,
        },
      }),
    ],
  });
  const buyer = (await createA2AAcmpBuyer({
    agentUrl: provider.url,
    escrow: { agentUrl: escrow.host.url, token: secret('buyer') },
  })) as A2AAcmpBuyer & { escrow: BuyerEscrow };
  const escrowId = await buyer.escrow.lock(0.005, Date.now() + 3_600_000);
  await buyer.escrow.bind(escrowId, options.boundTo ?? 'agent:provider');
  return { buyer, escrowId, outbound, escrowUrl: escrow.host.url, providerUrl: provider.url };
}
