#!/usr/bin/env python3
"""Decode a JWT WITHOUT verifying it and report risky headers and claims.

Arguments (environment):
  SKILL_ARG_TOKEN            the JWT
  SKILL_ARG_MAX_TTL_MINUTES  optional, longest acceptable exp - iat (default 60)

Prints the header and claims (never the signature). Exit status: 0 no errors,
1 errors found, 2 usage error. Standard library only.
"""

import base64
import binascii
import json
import os
import sys
import time


def b64url_json(part: str, what: str) -> dict:
    padded = part + "=" * (-len(part) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded.encode("ascii"))
        value = json.loads(raw)
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise SystemExit(f"error: the {what} is not base64url-encoded JSON ({exc})") from None
    if not isinstance(value, dict):
        raise SystemExit(f"error: the {what} is JSON but not an object")
    return value


def when(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def main() -> int:
    token = os.environ.get("SKILL_ARG_TOKEN", "").strip()
    if token.lower().startswith("bearer "):
        token = token[7:].strip()
    if not token:
        print("error: SKILL_ARG_TOKEN is not set", file=sys.stderr)
        return 2
    try:
        max_ttl = int(os.environ.get("SKILL_ARG_MAX_TTL_MINUTES", "") or 60)
    except ValueError:
        print("error: SKILL_ARG_MAX_TTL_MINUTES must be a whole number", file=sys.stderr)
        return 2

    parts = token.split(".")
    if len(parts) == 5:
        print("error: this is a JWE (encrypted token, 5 parts); it cannot be inspected without the key")
        return 1
    if len(parts) != 3:
        print(f"error: a JWS has 3 dot-separated parts, this token has {len(parts)}")
        return 1

    header = b64url_json(parts[0], "header")
    claims = b64url_json(parts[1], "payload")
    print("header:", json.dumps(header, indent=2, sort_keys=True))
    print("claims:", json.dumps(claims, indent=2, sort_keys=True))
    print("note: the signature was NOT verified")

    errors, warnings = [], []
    now = time.time()

    alg = header.get("alg")
    if not isinstance(alg, str) or alg.lower() == "none":
        errors.append(f"alg is {alg!r}: unsigned tokens must be rejected")
    elif alg.startswith("HS"):
        warnings.append(f"alg {alg} uses a shared secret: every verifier can also mint tokens")
    elif "kid" not in header:
        warnings.append("no kid in the header: verifiers cannot pick the key when the issuer rotates keys")
    if not parts[2]:
        errors.append("the signature part is empty")
    for field in ("jku", "x5u", "jwk"):
        if field in header:
            warnings.append(f"header carries {field}: never fetch or trust keys named by the token itself")

    exp, iat, nbf = claims.get("exp"), claims.get("iat"), claims.get("nbf")
    if not isinstance(exp, (int, float)):
        errors.append("no numeric exp claim: the token never expires")
    elif exp < now:
        errors.append(f"expired at {when(exp)} ({int(now - exp)} s ago)")
    if isinstance(nbf, (int, float)) and nbf > now + 60:
        warnings.append(f"not valid before {when(nbf)}")
    if not isinstance(iat, (int, float)):
        warnings.append("no numeric iat claim")
    elif iat > now + 60:
        warnings.append(f"issued in the future ({when(iat)}): check clocks")
    if isinstance(exp, (int, float)) and isinstance(iat, (int, float)):
        ttl_minutes = (exp - iat) / 60
        if ttl_minutes > max_ttl:
            warnings.append(f"lifetime is {ttl_minutes:.0f} min, longer than {max_ttl} min")
    for claim in ("iss", "aud", "sub"):
        if claim not in claims:
            warnings.append(f"no {claim} claim")

    for message in errors:
        print("error:", message)
    for message in warnings:
        print("warning:", message)
    print(f"{len(errors)} error(s), {len(warnings)} warning(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
