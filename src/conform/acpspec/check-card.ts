import { isJsonObject } from '../../shared/json.js';
import type { Check } from '../check.js';
import { kindsOf, needAcpExtension } from './card.js';
import { broken, steps } from './outcome.js';

/** What is wrong with the four values of the card's ACPspec params (empty: nothing). */
function paramIssues(params: Record<string, unknown>): string[] {
  const issues: string[] = [];
  const version = params['acp_version'];
  if (typeof version !== 'string' || !/^[0-9]+\.[0-9]+$/.test(version))
    issues.push('acp_version is not a version string like "0.1"');
  const schemaUrl = params['schema_url'];
  if (typeof schemaUrl !== 'string' || !/^https?:\/\//.test(schemaUrl) || !URL.canParse(schemaUrl))
    issues.push('schema_url is not an absolute http(s) URL');
  for (const key of ['accepts', 'emits'] as const) {
    if (kindsOf(params[key]) === undefined)
      issues.push(`${key} is not a non-empty list of distinct kinds from snapshot, delta`);
  }
  return issues;
}

/**
 * The card's four ACPspec values (seed 001 "Declaring Support in the Agent Card": `acp_version`,
 * `schema_url`, and `accepts` / `emits` each with at least one value). Skips an agent whose card lists no
 * ACPspec extension: it does not serve the binding.
 */
export const cardParamsCheck: Check = {
  id: 'acpspec-card-params',
  binding: 'acpspec-a2a',
  title: 'the card declares acp_version, schema_url, and non-empty accepts and emits',
  spec: 'seed 001 "Declaring Support in the Agent Card"',
  run: (ctx) =>
    steps(async () => {
      const extension = needAcpExtension(ctx);
      const params = extension['params'];
      if (!isJsonObject(params)) broken('the ACPspec extension has no params object');
      const issues = paramIssues(params);
      if (issues.length > 0) broken(issues.join('; '));
      return Promise.resolve();
    }),
};
