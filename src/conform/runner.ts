import { ACMP_EXTENSION_URI } from '../acmp/wire/constants.js';
import { ACP_EXTENSION_URI } from '../acpspec/constants.js';
import { LocalError } from '../shared/errors.js';
import { fetchTrusting } from '../shared/fetch.js';
import { isJsonObject } from '../shared/json.js';
import type { Check, CheckOutcome, CheckResult, ConformBinding, ConformContext } from './check.js';
import { allChecks } from './checks.js';

/** Options of {@link runConformance} (the CLI's flags, docs/conformance.md "The kit"). */
export interface ConformOptions {
  /** The agent's base URL; its card is at `<url>/.well-known/agent-card.json`. */
  readonly url: string;
  /** CU the kit may spend in all (default 0: only checks that cannot spend run). */
  readonly maxSpendCu?: number;
  readonly token?: string;
  /** Run only these check ids (default: all). */
  readonly only?: readonly string[];
  /** Longest wait per network step, ms (default 10000). */
  readonly timeoutMs?: number;
  /** Longest run of one check, ms (default 3 × `timeoutMs`); beyond it the check fails. */
  readonly checkTimeoutMs?: number;
  /** An extra CA certificate (PEM) to trust. */
  readonly caCert?: string;
  /** The ACMP capability the spending checks invoke (default: the card's first with an example input). */
  readonly acmpCapability?: string;
  /** The checks to choose from (default: every check of the kit). */
  readonly checks?: readonly Check[];
}

/** One check's line in a report: its result and how long it ran. */
export interface ReportedCheck extends CheckResult {
  readonly durationMs: number;
}

/** The kit's report (`--json` prints it; the shape is stable, docs/conformance.md "JSON shape"). */
export interface ConformReport {
  readonly version: 1;
  readonly agent: {
    readonly url: string;
    readonly card: 'fetched' | 'unreachable';
    readonly problem?: string;
  };
  readonly budget: { readonly maxSpendCu: number; readonly reservedCu: number };
  readonly startedAt: string;
  readonly durationMs: number;
  readonly summary: {
    readonly pass: number;
    readonly fail: number;
    readonly skip: number;
    readonly total: number;
  };
  readonly results: readonly ReportedCheck[];
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** Which extension a binding's checks need on the card. */
const BINDING_EXTENSION: Record<ConformBinding, string | undefined> = {
  'acmp-a2a': ACMP_EXTENSION_URI,
  'acmp-mcp': ACMP_EXTENSION_URI,
  'acpspec-a2a': ACP_EXTENSION_URI,
  'acpspec-https': ACP_EXTENSION_URI,
  a2a: undefined,
};

/** The checks `only` selects. @throws LocalError CONFIG_INVALID naming an unknown id. */
function selectChecks(checks: readonly Check[], only: readonly string[] | undefined): readonly Check[] {
  if (!only || only.length === 0) return checks;
  const known = new Set(checks.map((c) => c.id));
  const unknown = only.filter((id) => !known.has(id));
  if (unknown.length) throw new LocalError('CONFIG_INVALID', `unknown check id: ${unknown.join(', ')}`);
  return checks.filter((c) => only.includes(c.id));
}

/** Fetches the agent card as JSON, or says why it could not. */
async function fetchCard(
  url: string,
  fetchImpl: typeof fetch,
  timeoutMs: number,
): Promise<{ card: Record<string, unknown> } | { problem: string }> {
  const cardUrl = `${url.replace(/\/+$/, '')}/.well-known/agent-card.json`;
  try {
    const response = await fetchImpl(cardUrl, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) return { problem: `GET ${cardUrl} answered HTTP ${response.status}` };
    const card: unknown = await response.json();
    return isJsonObject(card) ? { card } : { problem: `${cardUrl} is not a JSON object` };
  } catch (error) {
    return { problem: `GET ${cardUrl} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The budget: `reserve` takes from what is left and refuses what it cannot cover. */
class Budget {
  reservedCu = 0;
  constructor(readonly maxSpendCu: number) {}
  reserve(cu: number): boolean {
    if (!(cu >= 0) || this.reservedCu + cu > this.maxSpendCu + 1e-12) return false;
    this.reservedCu += cu;
    return true;
  }
}

/** Runs one check within its deadline; a throw or a timeout is a `fail` with the reason. */
async function runOne(check: Check, ctx: ConformContext, deadlineMs: number): Promise<CheckOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(
      () => resolve({ status: 'fail', evidence: `no outcome within ${deadlineMs} ms` }),
      deadlineMs,
    );
  });
  try {
    return await Promise.race([check.run(ctx), late]);
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { status: 'fail', evidence: `the check could not complete: ${reason.slice(0, 300)}` };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs the kit against one agent, black-box: fetches its card, runs the selected checks of every binding
 * the card advertises (the others are skipped with the reason), one after another so the budget and the
 * agent see one call at a time. Never throws for a non-conforming or unreachable agent: that is in the
 * report. @throws LocalError CONFIG_INVALID for an unknown id in `only`.
 */
export async function runConformance(options: ConformOptions): Promise<ConformReport> {
  const checks = selectChecks(options.checks ?? allChecks, options.only);
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const fetchImpl = fetchTrusting(options.caCert);
  const budget = new Budget(options.maxSpendCu ?? 0);
  const fetched = await fetchCard(options.url, fetchImpl, timeoutMs);
  const card = 'card' in fetched ? fetched.card : undefined;
  const ctx: ConformContext = {
    url: options.url,
    card,
    maxSpendCu: budget.maxSpendCu,
    token: options.token,
    timeoutMs,
    fetch: fetchImpl,
    caCert: options.caCert,
    acmpCapability: options.acmpCapability,
    reserve: (cu) => budget.reserve(cu),
  };
  const results: ReportedCheck[] = [];
  for (const check of checks) {
    const began = Date.now();
    const outcome =
      'problem' in fetched
        ? { status: 'skip' as const, evidence: `no agent card: ${fetched.problem}` }
        : (unserved(check, fetched.card) ??
          (await runOne(check, ctx, options.checkTimeoutMs ?? 3 * timeoutMs)));
    const { id, binding, transport, title, spec } = check;
    const on = transport ? { transport } : {};
    results.push({ id, binding, ...on, title, spec, ...outcome, durationMs: Date.now() - began });
  }
  const count = (s: string): number => results.filter((r) => r.status === s).length;
  return {
    version: 1,
    agent: {
      url: options.url,
      card: card ? 'fetched' : 'unreachable',
      ...('problem' in fetched ? { problem: fetched.problem } : {}),
    },
    budget: { maxSpendCu: budget.maxSpendCu, reservedCu: Math.round(budget.reservedCu * 1e9) / 1e9 },
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    summary: { pass: count('pass'), fail: count('fail'), skip: count('skip'), total: results.length },
    results,
  };
}

/** A skip when the card does not advertise the check's binding. */
function unserved(check: Check, card: Record<string, unknown>): CheckOutcome | undefined {
  const uri = BINDING_EXTENSION[check.binding];
  if (uri === undefined) return undefined;
  const caps = isJsonObject(card.capabilities) ? card.capabilities : {};
  const list = Array.isArray(caps.extensions) ? caps.extensions : [];
  if (list.some((e) => isJsonObject(e) && e.uri === uri)) return undefined;
  return { status: 'skip', evidence: `the card advertises no ${uri} extension` };
}
