import { getJson } from '../api.js';
import { badge, cu, h, section, span, table, tile } from '../dom.js';
import type { EscrowView } from '../types.js';

/** A countdown that the shell refreshes every second (`data-until`). */
export function countdown(until: number): HTMLElement {
  return h('span', { class: 'countdown', 'data-until': until }, remaining(until));
}

/** The text of a countdown at this moment. */
export function remaining(until: number): string {
  const left = until - Date.now();
  return left > 0 ? `${span(left)} left` : 'ended';
}

/** Escrow: the ledger's conservation line, accounts, escrows with pending claims and disputes. */
export async function escrowPage(): Promise<HTMLElement> {
  const v = await getJson<EscrowView>('/escrow');
  if (v.absent)
    return h('p', { class: 'empty', 'data-testid': 'page-escrow' }, 'No escrow agent on this cluster.');
  const t = v.totals;
  const claims = v.escrows.filter((e) => e.claim !== null && e.state === 'claimed');
  const disputes = v.escrows.filter((e) => e.dispute !== null);
  return h(
    'div',
    { 'data-testid': 'page-escrow' },
    h(
      'div',
      { class: `conservation ${v.conserved ? 'ok' : 'broken'}`, 'data-testid': 'conservation' },
      v.conserved ? '✔ Ledger conserved: ' : '✘ Ledger NOT conserved: ',
      `balances ${cu(t?.balancesCu)} + held ${cu(t?.heldCu)} + pending payouts ${cu(t?.pendingCu)} = credited ${cu(t?.creditedCu)}`,
    ),
    h(
      'div',
      { class: 'tiles' },
      tile('Accounts', v.accounts.length, 'count-accounts'),
      tile('Escrows', v.escrows.length, 'count-escrows'),
      tile('Held', cu(t?.heldCu), 'held'),
      tile('Pending claims', claims.length, 'count-claims', claims.length > 0 ? 'warn' : ''),
      tile('Disputes', disputes.length, 'count-disputes', disputes.length > 0 ? 'warn' : ''),
    ),
    h(
      'div',
      { class: 'columns' },
      section(
        'Accounts',
        table(
          v.accounts,
          [
            { title: 'Account', cell: (a) => a.account },
            { title: 'Balance', cell: (a) => cu(a.balanceCu) },
            { title: 'Credited', cell: (a) => cu(a.creditedCu) },
          ],
          { testid: 'accounts', empty: 'No account.' },
        ),
      ),
      section(
        'Pending claims',
        table(
          claims,
          [
            { title: 'Escrow', cell: (e) => h('code', {}, e.escrowId) },
            { title: 'Amount', cell: (e) => cu(e.claim?.amountCu) },
            { title: 'Window', cell: (e) => (e.claim ? countdown(e.claim.windowEndsAt) : '—') },
          ],
          { testid: 'claims', empty: 'No claim waiting in its challenge window.' },
        ),
      ),
    ),
    section(
      'Escrows',
      table(
        v.escrows,
        [
          { title: 'Escrow', cell: (e) => h('code', {}, e.escrowId) },
          { title: 'State', cell: (e) => badge(e.state) },
          { title: 'Buyer', cell: (e) => e.buyer },
          { title: 'Payee', cell: (e) => e.payee ?? '—' },
          { title: 'Locked', cell: (e) => cu(e.lockedCu) },
          { title: 'Held', cell: (e) => cu(e.heldCu) },
          { title: 'Released', cell: (e) => cu(e.releasedCu) },
          { title: 'Valid', cell: (e) => countdown(e.validUntil) },
          {
            title: 'Dispute',
            cell: (e) =>
              e.dispute ? (e.dispute.resolved ? 'resolved' : countdown(e.dispute.deadlineAt)) : '—',
          },
        ],
        { testid: 'escrows', empty: 'No escrow.' },
      ),
    ),
  );
}
