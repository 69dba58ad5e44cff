import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAcmpBuyer } from '../../a2a/acmp/buyer.js';
import { openWallet } from '../../connect/wallet.js';
import { isLocalError } from '../../shared/errors.js';
import { entryLine } from '../wallet.js';
import { expectThat } from './expect.js';
import type { DemoScenario } from './scenarios.js';

const INPUT = { type: 'text', data: 'Orders doubled this quarter.' } as const;

/**
 * The buyer's wallet (Layer 7 §6): operator limits from a file, a per-task cap that refuses an expensive
 * offer before it is accepted, an hourly rate that stops a buying loop, and the audit log that shows both.
 */
export const walletScenario: DemoScenario = {
  title:
    "ACMP wallet: the operator's limits refuse an expensive offer and stop a buying loop; the audit log shows why",
  async run(ctx) {
    const limitsFile = join(ctx.dataDir, 'wallet.json');
    writeFileSync(
      limitsFile,
      JSON.stringify({ wallet_id: 'demo-buyer', limits: { per_task_max_cu: 0.003, rate_cu_per_hour: 0.01 } }),
    );
    chmodSync(limitsFile, 0o600);
    ctx.say(`   operator's limits (${limitsFile}): per_task_max_cu 0.003, rate_cu_per_hour 0.01`);
    const { wallet, close } = await openWallet({ limitsFile });
    try {
      const buyer = await createAcmpBuyer({ agentUrl: ctx.url, caCert: ctx.caCert, wallet });
      const ask = { capability: 'sentiment-analysis', max_price_cu: 1, input: INPUT };
      const expensive = await buyer.quote({ ...ask, input_tokens_est: 5_000 });
      const refused = await buyer.accept({ offer_id: expensive.offer_id }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expectThat(isLocalError(refused, 'SPEND_DENIED'), 'the per-task cap to refuse the expensive offer');
      ctx.say(`   offer of ${expensive.price_cu} CU for 5000 tokens → not accepted: ${refused.message}`);

      let bought = 0;
      let stop: unknown;
      while (stop === undefined && bought < 50) {
        try {
          await buyer.invoke({ ...ask, max_price_cu: 0.003 });
          bought++;
        } catch (error) {
          stop = error;
        }
      }
      expectThat(isLocalError(stop, 'SPEND_DENIED'), 'the hourly rate to stop the loop');
      ctx.say(`   a loop buying at up to 0.003 CU each: ${bought} purchases, then refused: ${stop.message}`);

      const log = await wallet.log();
      expectThat(log.filter((e) => e.kind === 'invoke').length === bought, 'one audit entry per purchase');
      ctx.say(`   a2a-commerce wallet log (${log.length} entries, the first three and the last):`);
      for (const entry of [...log.slice(0, 3), ...log.slice(-1)]) ctx.say(`     ${entryLine(entry)}`);
    } finally {
      await close();
    }
  },
};
