import { errorFields, type Logger } from '../../shared/logger.js';
import { AcmpError } from '../wire/errors.js';

/**
 * A Layer 6 answer whose failure is logged when it has a cause the wire does not carry: a refusal made of
 * a capability's error (`acmp.<call>_refused`), or a failure that leaves as -33099 (`acmp.<call>_failed`).
 */
export async function loggedLayer6<T>(
  logger: Logger,
  call: { name: 'quote' | 'accept'; capability?: string },
  work: Promise<T>,
): Promise<T> {
  const capability = call.capability;
  try {
    return await work;
  } catch (error) {
    const where = capability === undefined ? {} : { capability };
    if (!(error instanceof AcmpError))
      logger.error(`acmp.${call.name}_failed`, { ...where, ...errorFields(error) });
    else if (error.cause !== undefined)
      logger.warn(`acmp.${call.name}_refused`, { ...where, code: error.code, ...errorFields(error.cause) });
    throw error;
  }
}
