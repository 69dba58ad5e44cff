import type { RequestHandler } from 'express';
import { bearerVerifier } from '../../a2a/host/bearer.js';
import type { BearerToken } from '../../shared/identity.js';

/** Where the authenticated operator's identity is kept on a console request. */
export const OPERATOR_LOCAL = 'consoleOperator';

function refuse(res: Parameters<RequestHandler>[1], status: 401 | 403, message: string): void {
  if (status === 401) res.set('www-authenticate', 'Bearer realm="a2a-commerce console"');
  res.status(status).json({
    error: { code: status, status: status === 401 ? 'UNAUTHENTICATED' : 'PERMISSION_DENIED', message },
  });
}

/**
 * The console's own authentication (docs/console.md "Auth"): `Authorization: Bearer <operator secret>`,
 * compared by SHA-256 digest in constant time against every operator credential. A caller token is
 * refused with 403: the console credential is a role of its own, never a caller's. The operator's
 * identity (`agent:<name>` or `token:<digest>`) is left in `res.locals` for the reveal log.
 */
export function operatorAuth(
  operators: readonly BearerToken[],
  callers: readonly BearerToken[],
): RequestHandler {
  // The one bearer check of every transport (src/a2a/host/bearer.ts): SHA-256 digests compared in constant
  // time. The console is only served with operator credentials, so `operator` never answers anonymous.
  const operator = bearerVerifier(operators);
  const caller = bearerVerifier(callers);
  return (req, res, next) => {
    const authorization = req.get('authorization');
    const check = operator(authorization);
    if ('user' in check && check.user.isAuthenticated) {
      res.locals[OPERATOR_LOCAL] = check.user.userName;
      return next();
    }
    if ('refused' in check && check.refused === 'missing') {
      return refuse(res, 401, 'Operator credential required');
    }
    const asCaller = caller(authorization);
    const isCaller = 'user' in asCaller && asCaller.user.isAuthenticated;
    refuse(
      res,
      isCaller ? 403 : 401,
      isCaller ? 'A caller token does not open the console' : 'Invalid operator credential',
    );
  };
}
