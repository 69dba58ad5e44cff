import { isJsonObject } from '../../shared/json.js';

/**
 * The `field` path grammar of Layer 2 §3 "Input References": a deliberately small JSONPath subset rooted
 * at the referenced `acmp/result` `output` object (`{type, data}`), so a path into the payload begins
 * with `data`. Supported (and MUST be): `data`, `data.foo`, `data.foo.bar`, `data.items[0]`,
 * `data.items[0].name`. Wildcards, slices and filters are out of scope for v0.1 and refused.
 */

/** One step of a parsed path: an object member or an array index. */
export type PathStep = { member: string } | { index: number };

const MEMBER = /^\.([^.[\]\s*?@$()'"]+)/;
const INDEX = /^\[(0|[1-9][0-9]{0,8})\]/;

/**
 * Parses a `field` path into its steps after the leading `data`.
 * @returns the steps, or a reason the path is outside the grammar.
 */
export function parseFieldPath(
  path: string,
): { ok: true; steps: PathStep[] } | { ok: false; reason: string } {
  if (path !== 'data' && !path.startsWith('data.') && !path.startsWith('data['))
    return {
      ok: false,
      reason: `"${path}" does not begin with "data" (paths are rooted at the output object)`,
    };
  const steps: PathStep[] = [];
  let rest = path.slice('data'.length);
  while (rest !== '') {
    const member = MEMBER.exec(rest);
    const index = member ? null : INDEX.exec(rest);
    if (member?.[1] !== undefined) {
      steps.push({ member: member[1] });
      rest = rest.slice(member[0].length);
    } else if (index?.[1] !== undefined) {
      steps.push({ index: Number(index[1]) });
      rest = rest.slice(index[0].length);
    } else {
      return {
        ok: false,
        reason: `"${path}" is outside the v0.1 grammar at "${rest}" (members and [n] indexes only; no wildcards, slices or filters)`,
      };
    }
  }
  return { ok: true, steps };
}

/** Whether a `field` selects the whole output payload (`data`): what a streamed edge may use (§5). */
export function isWholePayload(field: string | undefined): boolean {
  return field === undefined || field === 'data';
}

/**
 * The value a parsed path selects in `data` (the output's payload), or `{found: false}` with the first
 * step that found nothing.
 */
export function selectPath(
  data: unknown,
  steps: readonly PathStep[],
): { found: true; value: unknown } | { found: false; at: string } {
  let value = data;
  let at = 'data';
  for (const step of steps) {
    if ('member' in step) {
      at += `.${step.member}`;
      if (!isJsonObject(value) || !Object.hasOwn(value, step.member)) return { found: false, at };
      value = value[step.member];
    } else {
      at += `[${step.index}]`;
      if (!Array.isArray(value) || step.index >= value.length) return { found: false, at };
      value = value[step.index] as unknown;
    }
  }
  return { found: true, value };
}
