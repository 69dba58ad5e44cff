import { ACMP_CODE, acmpErrorSpec, type AcmpError } from '../acmp/wire/errors.js';
import { isJsonObject } from '../shared/json.js';
import type { CliIo } from './io.js';

/** Prints an ACMP error: code, name and message, then each input issue or the data on its own line. */
export function printAcmpError(error: AcmpError, io: CliIo): void {
  const name = acmpErrorSpec(error.code)?.name;
  const data = isJsonObject(error.data) ? error.data : undefined;
  const detail = typeof data?.['detail'] === 'string' ? `: ${data['detail']}` : '';
  io.err(`error ${error.code}${name ? ` (${name})` : ''}: ${error.message}${detail}`);
  const issues = Array.isArray(data?.['issues']) ? data['issues'] : [];
  for (const issue of issues) {
    if (!isJsonObject(issue)) continue;
    const path = typeof issue['path'] === 'string' && issue['path'] !== '' ? issue['path'] : '/';
    io.err(`  ${path}  ${typeof issue['message'] === 'string' ? issue['message'] : 'is invalid'}`);
  }
  if (error.code === ACMP_CODE.budgetExceeded && typeof data?.['min_price_cu'] === 'number') {
    io.err(`  the price is ${data['min_price_cu']} CU: raise --max-price to at least that`);
  }
  if (issues.length === 0 && detail === '' && error.data !== undefined)
    io.err(`  data: ${JSON.stringify(error.data)}`);
}
