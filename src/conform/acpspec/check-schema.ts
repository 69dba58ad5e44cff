import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ACP_VERSION } from '../../acpspec/constants.js';
import { fetchTrusting } from '../../shared/fetch.js';
import { isJsonObject } from '../../shared/json.js';
import type { Check, ConformContext } from '../check.js';
import { needAcpExtension } from './card.js';
import { broken, clip, need, rule, steps } from './outcome.js';
import { freshTransactionId, snapshotOf } from './samples.js';

// ajv-formats is CommonJS with a `default` property; NodeNext types see the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type SchemaCompiler = Ajv2019 | Ajv2020;

/** A validator for the schema's dialect (2020-12 unless it names 2019-09); unknown keywords are ignored. */
function compilerFor(schema: Record<string, unknown>): SchemaCompiler {
  const dialect = typeof schema['$schema'] === 'string' ? schema['$schema'] : '';
  const options = { strict: false, allErrors: true } as const;
  const ajv = dialect.includes('2019-09') ? new Ajv2019(options) : new Ajv2020(options);
  addFormats(ajv);
  return ajv;
}

/** Fetches `url` (trusting the context's CA) and parses the body as JSON. */
async function fetchSchema(ctx: ConformContext, url: string): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetchTrusting(ctx.caCert)(url, {
      headers: { accept: 'application/schema+json, application/json' },
      signal: AbortSignal.timeout(ctx.timeoutMs),
    });
  } catch (error) {
    broken(
      clip(
        `schema_url ${url} could not be fetched: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
  }
  rule(res.ok, `schema_url ${url} answered HTTP ${res.status}`);
  let schema: unknown;
  try {
    schema = JSON.parse(await res.text());
  } catch {
    broken(`schema_url ${url} did not answer JSON`);
  }
  rule(isJsonObject(schema), `schema_url ${url} did not answer a JSON Schema object`);
  return schema;
}

/**
 * `schema_url` resolves to the JSON Schema document for `acp_version` (seed 001 "Declaring Support"):
 * fetched, compiled with Ajv, and — for the version the kit knows — accepting a valid envelope of that
 * version and refusing one without its `envelope_id`, so a schema that accepts anything does not pass.
 */
export const schemaUrlCheck: Check = {
  id: 'acpspec-schema-url',
  binding: 'acpspec-a2a',
  title: 'schema_url resolves to a JSON Schema that compiles and describes the declared envelope version',
  spec: 'seed 001 "Declaring Support in the Agent Card" (schema_url must resolve)',
  run: (ctx) =>
    steps(async () => {
      const raw = needAcpExtension(ctx)['params'];
      const params = isJsonObject(raw) ? raw : {};
      const url = params['schema_url'];
      need(typeof url === 'string' && URL.canParse(url), 'no usable schema_url (see acpspec-card-params)');
      const schema = await fetchSchema(ctx, url);
      let validate: ReturnType<SchemaCompiler['compile']>;
      try {
        validate = compilerFor(schema).compile(schema);
      } catch (error) {
        broken(
          clip(
            `the schema at ${url} does not compile: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
      }
      if (params['acp_version'] !== ACP_VERSION) return;
      const sample = snapshotOf(freshTransactionId('schema'));
      rule(validate(sample), `the schema refuses a valid ${ACP_VERSION} snapshot`);
      const { envelope_id: _dropped, ...withoutId } = sample;
      rule(!validate(withoutId), 'the schema accepts an envelope without envelope_id');
    }),
};
