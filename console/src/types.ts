/**
 * The read API's answers as the console uses them (docs/console.md "Read API"; the server's types live in
 * src/server/console/, which this browser code does not compile against).
 */
export interface Overview {
  now: number;
  store: string;
  hosts: { hostId: string; startedAt: number; aliveAt: number; alive: boolean }[];
  activity?: {
    minutes: number[];
    invokes: number[];
    errors: number[];
    cu: number[];
    errorsByCode: Record<string, number>;
    running: number;
  };
  lastHour: { invokes: number; perSecond: number; cuBilled: number; errors: number };
  counts: Record<string, number>;
}

export interface TaskRow {
  taskId: string;
  caller: string;
  capability?: string;
  state: 'running' | 'completed' | 'canceled' | 'failed';
  hostId: string;
  createdAt: number;
  finishedAt?: number;
  deadlineAt: number;
  chunkCount: number;
  costCu?: number;
  errorCode?: number;
}

export interface TaskDetail {
  task: TaskRow;
  history: { at: number; what: string }[];
  request: unknown;
  chunks: unknown[];
  outcome: unknown;
  proof: unknown;
  masked: boolean;
}

export interface EscrowView {
  absent?: boolean;
  accounts: { tenant: string; account: string; balanceCu: number; creditedCu: number }[];
  escrows: {
    escrowId: string;
    buyer: string;
    payee: string | null;
    state: string;
    lockedCu: number;
    heldCu: number;
    releasedCu: number;
    reclaimedCu: number;
    validUntil: number;
    claim: { amountCu: number; taskId: string; windowEndsAt: number } | null;
    dispute: { reason: string; deadlineAt: number; resolved: boolean } | null;
  }[];
  totals?: { balancesCu: number; heldCu: number; pendingCu: number; creditedCu: number };
  conserved?: boolean;
}

export interface NegotiationView {
  absent?: boolean;
  sessions: {
    sessionId: string;
    caller: string;
    phase: string;
    open: boolean;
    createdAt: number;
    updatedAt: number;
    dueAt?: number;
    capability?: string;
    priceCu?: number;
    rounds: number;
  }[];
  agreements: {
    offerId: string;
    caller: string;
    capability?: string;
    priceCu?: number;
    acceptedAt: number;
    invokeBy: number;
    consumedBy: string | null;
    escrowId: string | null;
  }[];
}

export interface TransactionRow {
  transactionId: string;
  owner: string;
  version: number;
  eventCount: number;
  updatedAt: string;
}

export interface TransactionDetail {
  transaction: TransactionRow;
  timeline: { envelopeId: string; kind: string; receivedAt: string }[];
  events: { event_id: string; type: string; occurred_at: string; actor?: string; subject?: string }[];
  consent: { party: string; scopes: Record<string, string | null>; conflicts: { scope: string }[] }[];
  snapshot: Record<string, unknown>;
  masked: boolean;
}
