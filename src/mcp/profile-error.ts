import { ACMP_CODE, AcmpError } from '../acmp/wire/errors.js';
import type { JsonProblem } from '../shared/json-edge.js';

/**
 * The -32602 a JSON value outside the host's profile gets over MCP (docs/host.md "Bad input"), naming the
 * rule broken in `data.rule`: one answer whether the Streamable HTTP edge (src/mcp/http-body.ts) or an
 * ACMP method (src/mcp/provider-server.ts, which stdio reaches directly) finds the value.
 */
export function outsideProfile(problem: JsonProblem): AcmpError {
  return new AcmpError(ACMP_CODE.invalidParams, {
    detail: `a JSON value is outside the host's limits (${problem})`,
    rule: problem,
  });
}
