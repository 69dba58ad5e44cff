import type { ErrorObject } from 'ajv';

/** One JSON Schema violation: where (JSON Pointer), which keyword, and the rule in words. */
export interface SchemaIssue {
  pointer: string;
  keyword: string;
  message: string;
}

/**
 * Turns Ajv's errors into issues, one per pointer and keyword. Messages state the rule — for `enum` and
 * `const` with the allowed values, which come from the schema — and never copy the instance's value.
 * `if` and the `anyOf`/`oneOf` summaries are dropped: the branches' own errors say more.
 */
export function schemaIssuesOf(errors: readonly ErrorObject[]): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (error.keyword === 'if' || (isBranchSummary(error) && errors.length > 1)) continue;
    const pointer = pointerOf(error);
    const message = messageOf(error);
    const key = `${pointer}\u0000${error.keyword}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ pointer, keyword: error.keyword, message });
  }
  return issues;
}

/** "must match a schema in anyOf", or a oneOf no branch matched: the branches' errors follow. */
function isBranchSummary(error: ErrorObject): boolean {
  if (error.keyword === 'anyOf') return true;
  const params: Record<string, unknown> = error.params;
  return error.keyword === 'oneOf' && params['passingSchemas'] == null;
}

function pointerOf(error: ErrorObject): string {
  const params: Record<string, unknown> = error.params;
  const child =
    error.keyword === 'required' || error.keyword === 'dependentRequired'
      ? params['missingProperty']
      : error.keyword === 'additionalProperties'
        ? params['additionalProperty']
        : undefined;
  if (typeof child !== 'string') return error.instancePath;
  return `${error.instancePath}/${child.replaceAll('~', '~0').replaceAll('/', '~1')}`;
}

function messageOf(error: ErrorObject): string {
  const params: Record<string, unknown> = error.params;
  switch (error.keyword) {
    case 'required':
    case 'dependentRequired':
      return 'is required';
    case 'additionalProperties':
      return 'is not allowed';
    case 'false schema':
      return 'is not allowed here';
    case 'enum': {
      const values = params['allowedValues'];
      const allowed: unknown[] = Array.isArray(values) ? values : [];
      return `must be one of: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
    }
    case 'const':
      return `must be ${JSON.stringify(params['allowedValue'])}`;
    default:
      // Ajv's messages describe the rule (type, pattern, bounds), never the instance value.
      return error.message ?? 'is invalid';
  }
}
