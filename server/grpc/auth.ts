// Authentication of a call: its `authorization: Bearer TOKEN` metadata → the
// token's grant in the tokens file (--tokens).
import type { Metadata } from "@grpc/grpc-js";
import type { Grant, TokenTable } from "../auth/tokens.js";
import { fail } from "../errors.js";

// RFC 6750: the scheme is case-insensitive; one token, no other parameters.
const BEARER = /^bearer +(\S+)$/i;

/** The caller's grant; UNAUTHENTICATED without exactly one bearer token, or with an unknown one. */
export function authenticate(metadata: Metadata, tokens: TokenTable): Grant {
  const values = metadata.get("authorization");
  if (values.length === 0) fail("UNAUTHENTICATED", "this daemon needs a token: send the metadata authorization: Bearer TOKEN");
  const match = values.length === 1 && typeof values[0] === "string" ? BEARER.exec(values[0]) : null;
  if (!match) fail("UNAUTHENTICATED", "expected one authorization metadata value of the form: Bearer TOKEN");
  const grant = tokens.find(match[1]!);
  if (!grant) fail("UNAUTHENTICATED", "unknown token");
  return grant;
}
