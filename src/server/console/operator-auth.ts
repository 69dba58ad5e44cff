import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { BearerToken } from '../../shared/identity.js';

/** Where the authenticated operator's identity is kept on a console request. */
export const OPERATOR_LOCAL = 'consoleOperator';

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

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
  const known = operators.map((t) => ({ identity: t.identity, digest: digest(t.secret) }));
  const callerDigests = callers.map((t) => digest(t.secret));
  return (req, res, next) => {
    const secret = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
    if (secret === undefined) return refuse(res, 401, 'Operator credential required');
    const presented = digest(secret);
    // Every entry is compared, so the time taken does not tell which one matched.
    let operator: string | undefined;
    for (const k of known) if (timingSafeEqual(k.digest, presented)) operator = k.identity;
    if (operator !== undefined) {
      res.locals[OPERATOR_LOCAL] = operator;
      return next();
    }
    let caller = false;
    for (const d of callerDigests) if (timingSafeEqual(d, presented)) caller = true;
    refuse(
      res,
      caller ? 403 : 401,
      caller ? 'A caller token does not open the console' : 'Invalid operator credential',
    );
  };
}
