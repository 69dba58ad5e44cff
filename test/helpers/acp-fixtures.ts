import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kind } from '../../src/acpspec/constants.js';
import type { AcpErrorCode } from '../../src/acpspec/errors.js';

/** Root of the ACPspec fixture corpus. */
export const FIXTURE_DIR = new URL('../fixtures/acpspec/', import.meta.url).pathname;

/**
 * One fixture file: the envelope plus `$`-prefixed directives, stripped before use —
 * `$expect` (invalid only: the code it must get), `$given` (fixtures ingested first, over TLS, recursively),
 * `$insecure` (arrives without TLS), `$accepts` (the receiver's accepted kinds; default both).
 */
export interface AcpFixture {
  name: string;
  envelope: Record<string, unknown>;
  expect: AcpErrorCode | undefined;
  given: string[];
  secure: boolean;
  accepts: Kind[];
}

/** Reads one fixture by its path relative to the corpus root (`valid/lead-snapshot.json`). */
export function readFixture(name: string): AcpFixture {
  const raw = JSON.parse(readFileSync(join(FIXTURE_DIR, name), 'utf8')) as Record<string, unknown>;
  const envelope: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) if (!key.startsWith('$')) envelope[key] = value;
  return {
    name,
    envelope,
    expect: raw['$expect'] as AcpErrorCode | undefined,
    given: (raw['$given'] as string[] | undefined) ?? [],
    secure: raw['$insecure'] !== true,
    accepts: (raw['$accepts'] as Kind[] | undefined) ?? ['snapshot', 'delta'],
  };
}

/** Every fixture of a folder (`valid` or `invalid`). */
export function listFixtures(folder: 'valid' | 'invalid'): AcpFixture[] {
  return readdirSync(join(FIXTURE_DIR, folder))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => readFixture(`${folder}/${f}`));
}

/** The envelopes to ingest before a fixture, dependencies first, each once. */
export function givenChain(fixture: AcpFixture, seen = new Set<string>()): AcpFixture[] {
  const out: AcpFixture[] = [];
  for (const name of fixture.given) {
    if (seen.has(name)) continue;
    seen.add(name);
    const given = readFixture(name);
    out.push(...givenChain(given, seen), given);
  }
  return out;
}
