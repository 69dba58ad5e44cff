import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

/** PostgreSQL helpers of the bench: a fresh database per run, and the CPU of its backend processes. */

/** CPU µs used so far by the PostgreSQL backend processes connected to `database` (Linux only; NaN elsewhere). */
export function pgBackendCpuUs(database: string): number {
  try {
    const tick = 1e6 / 100; // USER_HZ is 100 on Linux
    let total = 0;
    for (const pid of readdirSync('/proc').filter((p) => /^[0-9]+$/.test(p))) {
      let cmdline: string;
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (!cmdline.startsWith('postgres: ') || !cmdline.includes(` ${database} `)) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += (Number(fields[11]) + Number(fields[12])) * tick;
    }
    return total;
  } catch {
    return NaN;
  }
}

/** Creates a fresh database next to `base` (named after `prefix`, the pid and the time); `drop` removes it. */
export async function freshPg(
  base: string,
  prefix = 'a2ac_bench',
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
