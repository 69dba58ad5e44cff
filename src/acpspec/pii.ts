import { isJsonObject } from '../shared/json.js';
import { ACP_SCHEMA_KEYWORDS } from './constants.js';
import type { AcpState, Envelope, PatchOperation } from './envelope.js';
import { isDelta } from './envelope.js';
import { ACP_ENVELOPE_SCHEMA } from './schema.js';
import { parsePointer } from './pointer.js';

/** `*` in a location path stands for any map key or array index. */
const ANY = '*';

/**
 * Where personal data may sit in the state, derived from the schema's `x-acp-pii` annotations
 * (docs/acpspec-binding.md "Personal data and TLS"). `subject` says where the data subject's party id(s) are found:
 * `base` is the annotated object's path, `field` is `$key` (the last segment of `base`) or a
 * slash path relative to it.
 */
export interface PiiLocation {
  readonly path: readonly string[];
  readonly credit: boolean;
  readonly subject: { readonly base: readonly string[]; readonly field: string } | undefined;
}

type Schema = Record<string, unknown>;

/** Walks a schema and returns every `x-acp-pii` location. Local `$ref`s are followed. */
export function derivePiiLocations(root: Readonly<Schema>): PiiLocation[] {
  const out: PiiLocation[] = [];
  const defsField = root['$defs'];
  const defs: Schema = isJsonObject(defsField) ? defsField : {};
  const resolve = (node: Schema): Schema => {
    const ref = node['$ref'];
    if (typeof ref !== 'string' || !ref.startsWith('#/$defs/')) return node;
    const target = defs[ref.slice('#/$defs/'.length)];
    return isJsonObject(target) ? { ...resolve(target), ...withoutRef(node) } : node;
  };
  const walk = (raw: unknown, at: WalkPosition): void => {
    if (!isJsonObject(raw) || at.depth > 32) return;
    const node = resolve(raw);
    const subjectField = node[ACP_SCHEMA_KEYWORDS.subject];
    const subject = typeof subjectField === 'string' ? { base: at.path, field: subjectField } : at.subject;
    const credit = at.credit || node[ACP_SCHEMA_KEYWORDS.credit] === true;
    if (node[ACP_SCHEMA_KEYWORDS.pii] === true) {
      out.push({ path: at.path, credit, subject });
      return;
    }
    const below = (segment: string): WalkPosition => ({
      path: [...at.path, segment],
      subject,
      credit,
      depth: at.depth + 1,
    });
    const properties = node['properties'];
    for (const [key, child] of Object.entries(isJsonObject(properties) ? properties : {}))
      walk(child, below(key));
    if (typeof node['additionalProperties'] === 'object') walk(node['additionalProperties'], below(ANY));
    if (typeof node['items'] === 'object') walk(node['items'], below(ANY));
  };
  walk(root, { path: [], subject: undefined, credit: false, depth: 0 });
  return out;
}

/** Where {@link derivePiiLocations} is in the schema: the instance path, the subject and credit in force. */
interface WalkPosition {
  path: string[];
  subject: PiiLocation['subject'];
  credit: boolean;
  depth: number;
}

function withoutRef(node: Schema): Schema {
  return Object.fromEntries(Object.entries(node).filter(([key]) => key !== '$ref'));
}

/** The PII locations of the envelope schema, derived once. */
export const PII_LOCATIONS: readonly PiiLocation[] = derivePiiLocations(ACP_ENVELOPE_SCHEMA);

/** A concrete place where personal data is present. */
export interface PiiHit {
  readonly location: PiiLocation;
  readonly segments: readonly string[];
}

/** A search for the values under one location path: `found` receives each concrete path (wildcards expanded). */
interface PathSearch {
  readonly pattern: readonly string[];
  readonly found: string[][];
}

/**
 * Every concrete PII value present in `value` (found at path `at`) under the search's pattern. `at` grows by
 * one segment per pattern segment matched, so its length is the position in the pattern.
 */
function collect(value: unknown, at: string[], search: PathSearch): void {
  if (value === undefined) return;
  const head = search.pattern[at.length];
  if (head === undefined) {
    search.found.push(at);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (head === ANY) {
    for (const [key, child] of Object.entries(value)) collect(child, [...at, key], search);
  } else if (Object.hasOwn(value, head)) {
    collect((value as Record<string, unknown>)[head], [...at, head], search);
  }
}

/** Every personal-data value present in a state. */
export function findPersonalData(state: AcpState | Record<string, unknown>): PiiHit[] {
  const hits: PiiHit[] = [];
  for (const location of PII_LOCATIONS) {
    const search: PathSearch = { pattern: location.path, found: [] };
    collect(state, [], search);
    for (const segments of search.found) hits.push({ location, segments });
  }
  return hits;
}

// `*` (schema wildcard) and `-` (RFC 6902 array end) match any segment; conservative on purpose.
function segmentMatches(a: string, b: string): boolean {
  return a === b || a === ANY || b === ANY || a === '-' || b === '-';
}

/** Whether one path is a prefix of the other, wildcard-aware. */
function overlaps(a: readonly string[], b: readonly string[]): boolean {
  let i = 0;
  for (const segment of a) {
    const other = b[i++];
    if (other === undefined) return true; // `b` ended: it is a prefix of `a`
    if (!segmentMatches(segment, other)) return false;
  }
  return true;
}

/** Whether a patch operation carries personal data in its value (or writes inside a PII field). */
function operationCarriesPersonalData(operation: PatchOperation): boolean {
  if (operation.op === 'remove') return false;
  const opPath = parsePointer(operation.path);
  for (const location of PII_LOCATIONS) {
    if (!overlaps(opPath, location.path)) continue;
    if (opPath.length >= location.path.length) return true;
    const search: PathSearch = { pattern: location.path.slice(opPath.length), found: [] };
    collect(operation.value, [], search);
    if (search.found.length > 0) return true;
  }
  return false;
}

/**
 * Whether an envelope carries personal data: any `x-acp-pii` field present in a snapshot, or, for a
 * delta, any add/replace/test operation whose path or value reaches such a field.
 */
export function containsPersonalData(envelope: Envelope): boolean {
  if (isDelta(envelope)) return envelope.patch.some(operationCarriesPersonalData);
  return findPersonalData(envelope).length > 0;
}

/**
 * The personal data a delta affects in its resulting state: the hits written by a PII-carrying operation,
 * and the hits whose data subject an `add`/`replace` re-pointed (`owner_party_id`, `recipient_party_id`,
 * `applicant_party_ids`, … — wherever `x-acp-subject` says): that hands the data to another party, whose
 * consent is then needed (docs/acpspec-core.md "Consent"). Hits the delta leaves alone are not affected, so a
 * revocation is accepted while the party's data is held.
 */
export function personalDataAffectedBy(patch: readonly PatchOperation[], state: AcpState): PiiHit[] {
  const written = patch.filter(operationCarriesPersonalData).map((op) => parsePointer(op.path));
  // Only a write that can reach a subject reference re-points one (an appended event never does), so the
  // state is not scanned for the commonest deltas.
  const repointed = patch
    .filter((op) => op.op === 'add' || op.op === 'replace')
    .map((op) => parsePointer(op.path))
    .filter((path) => SUBJECT_REFERENCES.some((reference) => overlaps(path, reference)));
  if (written.length === 0 && repointed.length === 0) return [];
  return findPersonalData(state).filter((hit) => {
    if (written.some((path) => overlaps(path, hit.segments))) return true;
    const reference = subjectReference(hit);
    return reference !== undefined && repointed.some((path) => overlaps(path, reference));
  });
}

/** Where data subjects are referenced by a field (with wildcards), derived from the schema's locations. */
const SUBJECT_REFERENCES: readonly (readonly string[])[] = PII_LOCATIONS.flatMap((location) =>
  location.subject === undefined || location.subject.field === '$key'
    ? []
    : [[...location.subject.base, ...location.subject.field.split('/')]],
);

/** Where a hit's data subject is referenced, when it is a field (not the hit's own map key). */
function subjectReference(hit: PiiHit): string[] | undefined {
  const subject = hit.location.subject;
  if (subject === undefined || subject.field === '$key') return undefined;
  return [...hit.segments.slice(0, subject.base.length), ...subject.field.split('/')];
}

/** Per data subject: whether credit data of theirs is present. */
export type PersonalDataSubjects = Map<string, { credit: boolean }>;

/**
 * Resolves the data subjects (party ids) of personal-data hits. A hit whose subject cannot be resolved
 * is reported under the empty id, which no consent record can satisfy.
 */
export function subjectsOf(hits: readonly PiiHit[], state: AcpState): PersonalDataSubjects {
  const subjects: PersonalDataSubjects = new Map();
  const note = (id: string, credit: boolean): void => {
    const prior = subjects.get(id);
    subjects.set(id, { credit: credit || (prior?.credit ?? false) });
  };
  for (const hit of hits) {
    const ids = subjectIds(hit, state);
    if (ids.length === 0) note('', hit.location.credit);
    for (const id of ids) note(id, hit.location.credit);
  }
  return subjects;
}

function subjectIds(hit: PiiHit, state: AcpState): string[] {
  const subject = hit.location.subject;
  if (subject === undefined) return [];
  const base = hit.segments.slice(0, subject.base.length);
  if (subject.field === '$key') {
    const key = base.at(-1);
    return key === undefined ? [] : [key];
  }
  let value: unknown = state;
  for (const segment of [...base, ...subject.field.split('/')]) {
    if (typeof value !== 'object' || value === null) return [];
    value = (value as Record<string, unknown>)[segment];
  }
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
