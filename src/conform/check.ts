/**
 * The conformance kit's unit (docs/conformance.md): one black-box check of a remote agent against one
 * rule of a seed or an upstream spec. Every check cites the line it enforces, can fail (a fixture agent
 * in test/conform/ breaks each rule once), and spends nothing unless the operator's budget allows it.
 */

/** The binding a check exercises; the report groups checks by it. */
export type ConformBinding = 'acmp-a2a' | 'acmp-mcp' | 'acpspec-a2a' | 'acpspec-https' | 'a2a';

/**
 * The A2A v1.0 transport a check of the ACMP-over-A2A binding calls the agent over (A2A v1.0 §5, the
 * card's `supportedInterfaces[].protocolBinding`); checks that call no A2A transport have none.
 */
export type ConformTransport = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

/** How a check ended. `skip` carries the reason (not served, budget too small, transport absent). */
export type CheckStatus = 'pass' | 'fail' | 'skip';

/** What a check found: its status and, on failure or skip, the evidence a reader needs. */
export interface CheckOutcome {
  readonly status: CheckStatus;
  /** On `fail`: what was seen against what the rule asks (no secrets, bounded length); on `skip`: why. */
  readonly evidence?: string;
}

/** What every check may use: the agent under test, its card, the operator's limits. */
export interface ConformContext {
  /** The agent's base URL as the operator gave it. */
  readonly url: string;
  /** The agent card fetched from `url` (`/.well-known/agent-card.json`), as JSON. */
  readonly card: unknown;
  /** CU the kit may spend in all (`--max-spend`, default 0: only checks that cannot spend run). */
  readonly maxSpendCu: number;
  /** A bearer token to present, when the agent asks for one. */
  readonly token?: string | undefined;
  /**
   * An extra CA certificate (PEM) to trust, for an agent with a self-signed certificate (`--ca <pem>`);
   * absent: the system roots only.
   */
  readonly caCert?: string | undefined;
  /** Refuse to wait longer than this per network step. */
  readonly timeoutMs: number;
  /** The fetch every HTTP step uses (trusting the operator's CA); the global fetch when absent. */
  readonly fetch?: typeof fetch | undefined;
  /** The ACMP capability the spending checks invoke (`--capability`); default: the card's first with an example. */
  readonly acmpCapability?: string | undefined;
  /** Reserves `cu` of the budget for a check that spends; false when the budget cannot cover it. */
  reserve(cu: number): boolean;
}

/** One check: stable id, the rule it enforces (with its citation), and how to run it. */
export interface Check {
  /** Stable, kebab-case, unique across the kit (JUnit test names and `--only` use it). */
  readonly id: string;
  readonly binding: ConformBinding;
  /** The transport it calls the agent over, when it is one check of a rule repeated per transport. */
  readonly transport?: ConformTransport;
  /** One line: the rule as a reader would state it. */
  readonly title: string;
  /** The spec line it enforces, e.g. `seed 000 §1.2` or `Layer 1 §3.6`. */
  readonly spec: string;
  /**
   * True when the check writes to the agent under test (e.g. ACPspec envelopes under a fresh transaction
   * id). Such a check may cost nothing and still run with `--max-spend 0`; the report says it writes.
   */
  readonly writes?: boolean;
  /** Runs the check; must not throw for a non-conforming agent (a thrown error is reported as `fail`). */
  run(ctx: ConformContext): Promise<CheckOutcome>;
}

/** One check's result in a report. */
export interface CheckResult extends CheckOutcome {
  readonly id: string;
  readonly binding: ConformBinding;
  readonly transport?: ConformTransport;
  readonly title: string;
  readonly spec: string;
}

export const pass = (): CheckOutcome => ({ status: 'pass' });
export const fail = (evidence: string): CheckOutcome => ({ status: 'fail', evidence });
export const skip = (reason: string): CheckOutcome => ({ status: 'skip', evidence: reason });
