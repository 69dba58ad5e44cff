import fc from 'fast-check';
import { hookUrl, sendParams, text } from './a2a-messages.js';
import { arr, either, idText, jsonText, maybe, obj, pathIdArb, str } from './json-text.js';
import { bodyBytes, extensionsHeader, PUSH_ORIGIN, versionHeader, type FuzzRequest } from './request.js';

/** HTTP+JSON requests for `/a2a/rest`: the v1.0 routes (with an optional tenant) and the v0.3 `/v1/…` routes. */

/** v0.3 HTTP+JSON bodies use the v0.3 proto's JSON: `content` parts, `text` / `file` / `data`. */
const legacyPart = fc.oneof(
  { weight: 4, arbitrary: text.map((t) => obj([['text', t]])) },
  { weight: 2, arbitrary: jsonText.map((d) => obj([['data', obj([['data', d]])]])) },
  {
    weight: 1,
    arbitrary: either(fc.constant('"aGk="')).map((b) =>
      obj([
        [
          'file',
          obj([
            ['fileWithBytes', b],
            ['mimeType', '"text/plain"'],
          ]),
        ],
      ]),
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('null', '1', '{}') },
);
const legacyMessage = fc
  .record({
    messageId: either(fc.uuid().map(str)),
    role: either(fc.constant('"ROLE_USER"')),
    content: either(fc.array(legacyPart, { minLength: 1, maxLength: 3 }).map(arr)),
    contextId: maybe(idText),
    taskId: maybe(idText, 4),
  })
  .map((m) => obj(Object.entries(m)));

/** One REST route with the body it takes (undefined: none). */
interface RestRoute {
  method: FuzzRequest['method'];
  path: string;
  body?: string;
  dialect: 'v1' | 'v0.3';
}

const query = fc
  .record({
    historyLength: maybe(fc.constantFrom('1', '-1', 'abc', '99999999999999999999'), 4),
    tenant: maybe(fc.constantFrom('acme', 'acme', 'acme', 'a%00b', 't'.repeat(300)), 8),
    contextId: maybe(fc.constantFrom('c1', 'c1', 'c1', 'x'.repeat(37)), 8),
    pageSize: maybe(fc.constantFrom('0', '5', '101', 'x'), 8),
    dup: maybe(fc.constant('1'), 20),
    constructor: maybe(fc.constant('1'), 20),
  })
  .map((q) => {
    const pairs = Object.entries(q)
      .filter(([, v]) => v !== undefined)
      .flatMap(([k, v]) => (k === 'dup' ? [`tenant=a`, `tenant=b`] : [`${k}=${v!}`]));
    return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
  });

const v1Route: fc.Arbitrary<RestRoute> = fc.tuple(pathIdArb, pathIdArb).chain(([taskId, configId]) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.constantFrom('message:send', 'message:stream'), either(sendParams('v1'), 12))
        .map(([m, body]): RestRoute => ({ method: 'POST', path: m, body, dialect: 'v1' })),
    },
    {
      weight: 2,
      arbitrary: query.map((q): RestRoute => ({ method: 'GET', path: `tasks/${taskId}${q}`, dialect: 'v1' })),
    },
    {
      weight: 1,
      arbitrary: query.map((q): RestRoute => ({ method: 'GET', path: `tasks${q}`, dialect: 'v1' })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom<RestRoute>(
        { method: 'POST', path: `tasks/${taskId}:cancel`, body: '{}', dialect: 'v1' },
        { method: 'GET', path: `tasks/${taskId}:subscribe`, dialect: 'v1' },
      ),
    },
    {
      weight: 1,
      arbitrary: either(
        fc.tuple(idText, hookUrl).map(([id, url]) =>
          obj([
            ['id', id],
            ['url', url],
          ]),
        ),
      ).map((body): RestRoute => ({
        method: 'POST',
        path: `tasks/${taskId}/pushNotificationConfigs`,
        body,
        dialect: 'v1',
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<RestRoute>(
        { method: 'GET', path: `tasks/${taskId}/pushNotificationConfigs/${configId}`, dialect: 'v1' },
        { method: 'DELETE', path: `tasks/${taskId}/pushNotificationConfigs/${configId}`, dialect: 'v1' },
        { method: 'GET', path: 'extendedAgentCard', dialect: 'v1' },
      ),
    },
  ),
);

const v03Route: fc.Arbitrary<RestRoute> = fc.tuple(pathIdArb, pathIdArb).chain(([taskId, configId]) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(
          fc.constantFrom('v1/message:send', 'v1/message:stream'),
          either(
            legacyMessage.map((m) => obj([['message', m]])),
            12,
          ),
        )
        .map(([path, body]): RestRoute => ({ method: 'POST', path, body, dialect: 'v0.3' })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom<RestRoute>(
        { method: 'GET', path: `v1/tasks/${taskId}`, dialect: 'v0.3' },
        { method: 'POST', path: `v1/tasks/${taskId}:cancel`, body: 'null', dialect: 'v0.3' },
        { method: 'GET', path: `v1/tasks/${taskId}:subscribe`, dialect: 'v0.3' },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(idText, idText).map(([name, id]): RestRoute => ({
        method: 'POST',
        path: `v1/tasks/${taskId}/pushNotificationConfigs`,
        body: obj([
          ['name', name],
          [
            'pushNotificationConfig',
            obj([
              ['id', id],
              ['url', str(`${PUSH_ORIGIN}/hook`)],
            ]),
          ],
        ]),
        dialect: 'v0.3',
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<RestRoute>(
        { method: 'GET', path: `v1/tasks/${taskId}/pushNotificationConfigs/${configId}`, dialect: 'v0.3' },
        { method: 'DELETE', path: `v1/tasks/${taskId}/pushNotificationConfigs/${configId}`, dialect: 'v0.3' },
        { method: 'GET', path: 'v1/card', dialect: 'v0.3' },
      ),
    },
  ),
);

const tenantPrefix = fc.oneof(
  { weight: 12, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: pathIdArb.map((t) => `${t}/`) },
);

/** An HTTP+JSON request, v1.0 (with an optional tenant) or v0.3. */
export const restRequest: fc.Arbitrary<FuzzRequest> = fc
  .oneof(fc.tuple(tenantPrefix, v1Route), fc.tuple(fc.constant(''), v03Route))
  .chain(([tenant, route]) => {
    const body = route.body === undefined ? fc.constant(undefined) : bodyBytes(route.body);
    return fc.tuple(
      fc.constant(tenant),
      fc.constant(route),
      body,
      versionHeader(route.dialect),
      extensionsHeader,
    );
  })
  .map(([tenant, route, body, version, extensions]) => ({
    endpoint: 'rest',
    method: route.method,
    path: `/a2a/rest/${tenant}${route.path}`,
    headers: { ...(body?.headers ?? {}), ...version, ...extensions },
    ...(body ? { body: body.body } : {}),
  }));
