import { fail, pass, skip, type CheckOutcome } from '../check.js';

/**
 * How an ACPspec check ends early: a precondition the agent did not meet (`Unmet` → skip, the rule it
 * breaks belongs to another check, which fails) or the rule under test broken (`Broken` → fail). A check
 * is a straight sequence of steps; each step either returns or throws one of these.
 */
class Unmet extends Error {
  override readonly name = 'Unmet';
}

class Broken extends Error {
  override readonly name = 'Broken';
}

/** Longest evidence a check reports (docs/conformance.md: bounded, no secrets). */
const MAX_EVIDENCE = 400;

/** `text` cut to the evidence bound. */
export function clip(text: string): string {
  return text.length <= MAX_EVIDENCE ? text : `${text.slice(0, MAX_EVIDENCE - 1)}…`;
}

/** Ends the check as `skip`: a precondition (named in `reason`) is not met. */
function unmet(reason: string): never {
  throw new Unmet(reason);
}

/** Ends the check as `fail` with `evidence`: the rule under test is broken. */
export function broken(evidence: string): never {
  throw new Broken(evidence);
}

/** Skips unless `condition` holds. */
export function need(condition: boolean, reason: string): asserts condition {
  if (!condition) unmet(reason);
}

/** Fails unless `condition` holds. */
export function rule(condition: boolean, evidence: string): asserts condition {
  if (!condition) broken(evidence);
}

/**
 * Runs a check's steps: a return is `pass` (or the outcome returned), {@link unmet} is `skip`,
 * {@link broken} is `fail`, and any other error — the agent answered something the kit could not read, a
 * network step timed out — is `fail` with the error's message (never a stack trace).
 */
export async function steps(run: () => Promise<CheckOutcome | void>): Promise<CheckOutcome> {
  try {
    return (await run()) ?? pass();
  } catch (error) {
    if (error instanceof Unmet) return skip(clip(error.message));
    if (error instanceof Broken) return fail(clip(error.message));
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return fail(clip(`the check could not complete: ${message}`));
  }
}
