import type express from 'express';
import type { Logger } from '../../shared/logger.js';
import { OPERATOR_LOCAL } from './operator-auth.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 500;

/** A query parameter the console cannot use (answered 400 with its message, which names no data). */
export class ConsoleInputError extends Error {}

/** A query parameter as one string (Express may give arrays or objects). */
export function param(req: express.Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `?limit=`: 1 to 500, default 100. @throws ConsoleInputError. */
export function limitOf(req: express.Request): number {
  const text = param(req, 'limit');
  if (text === undefined) return DEFAULT_LIMIT;
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > MAX_LIMIT)
    throw new ConsoleInputError(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  return Number(text);
}

/**
 * `?reveal=1` shows personal data unmasked; each reveal is logged with the operator's identity and the
 * path (never the data).
 */
export function revealOf(req: express.Request, res: express.Response, logger: Logger): boolean {
  const reveal = param(req, 'reveal');
  if (reveal !== '1' && reveal !== 'true') return false;
  logger.info('console.reveal', { operator: String(res.locals[OPERATOR_LOCAL]), path: req.path });
  return true;
}
