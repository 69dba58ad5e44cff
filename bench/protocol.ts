/** IPC messages between the benchmark orchestrator (run.ts), the server and the load generator. */

/** Which server a child process runs. */
export type ServerSpec =
  | { kind: 'baseline'; store: 'memory' | 'sqlite' }
  | {
      kind: 'ours';
      store: 'memory' | 'sqlite';
      acmp: boolean;
      acp: boolean;
      heartbeats: boolean;
      tls: boolean;
      /** `false`: the cores report to the no-op metrics and nothing serves /metrics (default on). */
      metrics?: boolean;
    };

export type ParentToServer = { type: 'stats'; gc?: boolean } | { type: 'close' };
export type ServerToParent =
  | { type: 'ready'; url: string; grpcUrl?: string; caCert?: string }
  | { type: 'stats'; cpu: NodeJS.CpuUsage; rss: number };

/** What the load generator sends. */
export type Scenario =
  | { kind: 'sdk-message' }
  | { kind: 'sdk-task' }
  | { kind: 'sdk-stream'; events: number }
  /** `capability` defaults to the bench server's `noop`; `input` to a short text. */
  | { kind: 'acmp-invoke'; capability?: string; input?: { type: string; data: unknown } }
  | { kind: 'mcp-invoke' }
  | { kind: 'acmp-stream'; chunks: number; heartbeats: boolean }
  | { kind: 'acp-a2a' }
  | { kind: 'acp-https' }
  /** The same A2A calls over gRPC (the SDK's service definition, one connection per worker). */
  | { kind: 'acmp-invoke-grpc' }
  | { kind: 'acp-a2a-grpc' };

export interface LoadSpec {
  url: string;
  /** The server's gRPC address (`host:port`), for the gRPC scenarios. */
  grpcUrl?: string;
  caCert?: string;
  scenario: Scenario;
  concurrency: number;
  warmup: number;
  count: number;
  /** Steady state instead of fixed counts: `warmup` and `count` are then ignored. */
  steady?: SteadySpec;
}

/**
 * A steady-state run: warm up in windows of `windowMs` until two successive windows agree within
 * `tolerance` (0.05 = ±5%) or `maxWarmupMs` has passed; then measure for at least `minMs` and at least
 * `minCount` operations (but stop at `maxMs`).
 */
export interface SteadySpec {
  windowMs: number;
  tolerance: number;
  maxWarmupMs: number;
  minMs: number;
  minCount: number;
  maxMs: number;
}

/** How a steady-state warm-up ended: its window rates (ops/s) and whether the last two agreed. */
export interface WarmUpReport {
  rates: number[];
  stable: boolean;
}

export type ParentToLoad = { type: 'run'; spec: LoadSpec } | { type: 'go' };
export type LoadToParent =
  | { type: 'warmed'; warmUp?: WarmUpReport }
  | { type: 'result'; result: LoadResult }
  | { type: 'error'; message: string };

export interface LoadResult {
  count: number;
  elapsedMs: number;
  /** Latencies of each request in ms, sorted ascending. */
  latencies: number[];
  /** SSE events received (streams), or responses. */
  events: number;
  errors: number;
  firstError?: string;
  /** Operations per second in each full window of the run (steady-state runs report these). */
  windows?: number[];
}
