import { afterEach, describe, expect, it } from 'vitest';
import { DagRunner } from '../../src/acmp/dag/dag-runner.js';
import { MemoryDagRunStore } from '../../src/storage/memory/dag-run-store-memory.js';
import { ConnectDagBuyerPort } from '../../src/connect/dag-buyer.js';
import { MemoryWalletStore } from '../../src/storage/memory/wallet-store-memory.js';
import type { WalletStore } from '../../src/wallet/store.js';
import { Wallet } from '../../src/wallet/wallet.js';
import { cleanup, onCleanup } from '../helpers/host.js';
import { walletConfig } from '../helpers/wallet-contract.js';
import { counted } from './dag-helpers.js';
import { acmpHost } from './helpers.js';

afterEach(cleanup);

const CEILING = 0.01;

/** A process frozen as the result arrives: its wallet never records the outcome (kill -9 there). */
function frozenAtSettle(store: WalletStore): { store: WalletStore; reached: Promise<void> } {
  let reach = (): void => undefined;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const frozen: WalletStore = {
    admit: (a) => store.admit(a),
    finish: () => {
      reach();
      return new Promise<boolean>(() => undefined);
    },
    append: (e) => store.append(e),
    pending: (w) => store.pending(w),
    audit: (w, q) => store.audit(w, q),
    usage: (q) => store.usage(q),
    heldEscrows: (w) => store.heldEscrows(w),
  };
  return { store: frozen, reached };
}

function runnerOn(dag: unknown, runId: string, runs: MemoryDagRunStore, wallet: Wallet): DagRunner {
  const port = new ConnectDagBuyerPort({ wallet });
  onCleanup(() => port.close());
  return new DagRunner(dag, { runId, store: runs, port, terms: { budgetCu: 1 } });
}

describe('a resumed run through the wallet (docs/acmp-dag.md "Durability")', () => {
  it('the provider runs the re-joined node once, and the wallet counts it once, at its cost', async () => {
    const feel = counted('feel', () => ({ type: 'json', data: { ok: true } }));
    const host = await acmpHost({ capabilities: [feel] });
    const dag = {
      dag_id: 'dag_wallet',
      tasks: [
        {
          task_id: 'feel',
          capability: 'feel',
          input: { type: 'text', data: 'x' },
          max_price_cu: CEILING,
          provider: host.url,
        },
      ],
      edges: [],
    };
    const walletStore = new MemoryWalletStore();
    const runs = new MemoryDagRunStore();
    const runId = `run_${crypto.randomUUID()}`;
    const first = frozenAtSettle(walletStore);
    void runnerOn(dag, runId, runs, new Wallet(walletConfig({}), first.store)).run();
    await first.reached;

    const wallet = new Wallet(walletConfig({}), walletStore);
    const result = await runnerOn(dag, runId, runs, wallet).run();
    expect(result.state).toBe('completed');
    expect(feel.runs()).toBe(1);
    const cost = result.totalCostCu;
    expect(cost).toBeGreaterThan(0);
    const report = (await wallet.headroom()) as { wallet: { total_cap_cu: { spent_cu: string } } };
    // The re-send re-joined the dead attempt's reservation (same task id) and settled it at the cost.
    expect(Number(report.wallet.total_cap_cu.spent_cu)).toBeCloseTo(cost, 9);
  });
});
