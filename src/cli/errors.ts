import { isAuthenticationRefusal } from '../a2a/client.js';
import { errorCode, isLocalError, isProtocolError } from '../shared/errors.js';
import { TOKEN_ENV } from './card.js';

/** What a CLI run was pointed at, for messages that name the thing at fault. */
export interface ErrorContext {
  /** The agent URL the verb was given, if any. */
  readonly url?: string;
  /** Whether a bearer token was sent (`--token` or `A2AC_TOKEN`). */
  readonly tokenSent: boolean;
}

/** Network failures by code: what they mean for the URL the user gave, and what to do. */
function networkHint(code: string, url: URL | undefined): string | undefined {
  const where = url ? url.host : 'the agent';
  switch (code) {
    case 'ECONNREFUSED':
      return `nothing listens at ${where}: check the port, and that the host is running (serve prints its URL when it starts)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name ${url?.hostname ?? ''} does not resolve: check the URL`;
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `${where} does not answer: check the host, port and firewall`;
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return `this machine does not trust the certificate of ${where}: for a host serving its self-signed certificate, pass --data-dir <that host's data dir> (it holds tls/localhost.crt) or --ca <certificate.pem>`;
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `the certificate of ${where} is for another name: use the name it was issued for (the self-signed one covers localhost, 127.0.0.1 and ::1)`;
    case 'CERT_HAS_EXPIRED':
      return `the certificate of ${where} has expired: renew it (delete <data-dir>/tls/ to get a new self-signed one)`;
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
      return url?.protocol === 'http:'
        ? `${where} closed the connection without an HTTP answer: it probably serves HTTPS (serve's default), so use https://${url.host}${url.pathname === '/' ? '' : url.pathname}`
        : `${where} closed the connection: check the URL and the host's log`;
    case 'EPROTO':
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
      return url?.protocol === 'https:'
        ? `${where} does not speak TLS: if the host runs with --no-tls, use http://${url.host}${url.pathname === '/' ? '' : url.pathname}`
        : `TLS failed with ${where}`;
    default:
      return undefined;
  }
}

/** The first error in the cause chain that carries a string `code` (a socket or TLS failure). */
function codedCause(error: unknown): { code: string; message: string } | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    const code = errorCode(e);
    if (typeof code === 'string') return { code, message: e.message };
    e = e instanceof AggregateError && e.errors.length > 0 ? (e.errors[0] as unknown) : e.cause;
  }
  return undefined;
}

function parseUrl(url: string | undefined): URL | undefined {
  try {
    return url === undefined ? undefined : new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * The one line a CLI error is printed as: what failed, its cause (with the code) and the fix. A missing
 * or refused bearer token always reads the same, whichever transport reported it.
 */
export function explainCliError(error: unknown, context: ErrorContext): string {
  const url = parseUrl(context.url);
  const target = context.url ?? 'the agent';
  if (isAuthenticationRefusal(error)) {
    const what = context.tokenSent
      ? 'did not accept the bearer token sent'
      : 'requires a bearer token and none was sent';
    return `error (UNAUTHENTICATED): ${target} ${what} (HTTP 401). Pass the token with ${TOKEN_ENV}=<token> in the environment, or --token <token>`;
  }
  if (isLocalError(error)) return `error (${error.code}): ${error.message}`;
  if (isProtocolError(error)) return `error ${String(error.code)}: ${error.message}`;
  const network = codedCause(error);
  if (network && !isLocalError(error)) {
    const hint = networkHint(network.code, url);
    if (hint !== undefined || error instanceof TypeError) {
      const cause = network.message.includes(network.code)
        ? network.message
        : `${network.message} (${network.code})`;
      return `error: cannot reach ${target}: ${cause}${hint ? `; ${hint}` : ''}`;
    }
  }
  if (error instanceof Error) return `error: ${error.message}`;
  return 'error: unexpected failure';
}
