// A Pet Store (interface document v1.0.0) on Node's built-in `http` module: no npm package.
//
// A port of blind round 4's Go server (selftests/blind4/go/main.go, newpet.go, its compliant `go` entry)
// to Node, as a Node shop would write it: the same routes, order of checks and answers. The server keeps
// Node's defaults (keepAliveTimeout 5 s, headersTimeout 60 s, requestTimeout 300 s, 16 KiB of headers),
// which are what the deployment self-test is about.
//
//     PETSTORE_API_KEY=... node petstore.js PORT        (loopback only; SIGTERM or SIGINT stops it)
//
// Where Node differs from Go and the port had to choose (each a choice the document leaves open):
// - JSON.parse turns every number into a double, so a categoryId beyond 2^53 would not come back as sent;
//   the body is read by a small strict parser (below) that keeps each number's text, as Go's
//   json.RawMessage does, and categoryId is held as a BigInt;
// - a body that is not UTF-8 (RFC 8259 §8.1) is refused with a 400 Error (Go reads it with U+FFFD);
// - a request Node's parser refuses (a malformed request line or header, headers over 16 KiB) gets
//   the Error body from the `clientError` handler instead of Node's bare answer (§7);
// - a path with an invalid percent-escape is a 400 Error (Go's server refuses it before routing).
"use strict";

const http = require("node:http");
const crypto = require("node:crypto");

const MAX_BODY = 4 << 20; // 4 MiB: well above any NewPet; beyond it 413 with the Error body
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
// §4.3 / §9.3: deprecated since 1 April 2025 (RFC 9745 sf-date), removed on 5 December 2030 (RFC 8594).
const DEPRECATION = "@1743465600";
const SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT";
const STATUSES = ["available", "pending", "sold"];
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
// RFC 9110 §11.1: the scheme is a token compared case-insensitively, then the token68 (Go's \S: no ASCII space).
const AUTHORIZATION = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) +([^\t\n\f\r ]+) *$/;
const JSON_INTEGER = /^-?(0|[1-9][0-9]*)$/;
const DECIMAL = /^[+-]?[0-9]+$/; // what Go's strconv.ParseInt(s, 10, 64) reads
const MAX_DEPTH = 10000; // Go's encoding/json nesting limit

// -- the body: strict JSON (RFC 8259) that keeps each number's text ----------------------------------
class JsonNumber {
  constructor(text) {
    this.text = text;
  }
}

class JsonError extends Error {}

function parseJson(text) {
  let at = 0;
  const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at])) at++;
  };
  const fail = () => {
    throw new JsonError("invalid JSON");
  };
  const string = () => {
    at++; // the opening quote
    let out = "";
    for (;;) {
      if (at >= text.length) fail();
      const c = text[at++];
      if (c === '"') return out;
      if (c < " ") fail(); // a control character must be escaped
      if (c !== "\\") {
        out += c;
        continue;
      }
      const e = text[at++];
      const simple = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }[e];
      if (simple !== undefined) {
        out += simple;
      } else if (e === "u" && /^[0-9A-Fa-f]{4}$/.test(text.slice(at, at + 4))) {
        out += String.fromCharCode(parseInt(text.slice(at, at + 4), 16));
        at += 4;
      } else {
        fail();
      }
    }
  };
  const value = (depth) => {
    if (depth > MAX_DEPTH) fail();
    space();
    const c = text[at];
    if (c === "{") {
      at++;
      const members = new Map(); // a Map: "__proto__" is a member name like any other; the last one given wins
      space();
      if (text[at] === "}") {
        at++;
        return members;
      }
      for (;;) {
        space();
        if (text[at] !== '"') fail();
        const name = string();
        space();
        if (text[at++] !== ":") fail();
        members.set(name, value(depth + 1));
        space();
        const next = text[at++];
        if (next === "}") return members;
        if (next !== ",") fail();
      }
    }
    if (c === "[") {
      at++;
      const items = [];
      space();
      if (text[at] === "]") {
        at++;
        return items;
      }
      for (;;) {
        items.push(value(depth + 1));
        space();
        const next = text[at++];
        if (next === "]") return items;
        if (next !== ",") fail();
      }
    }
    if (c === '"') return string();
    for (const [word, meaning] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return meaning;
      }
    }
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(text);
    if (!number) fail();
    at += number[0].length;
    return new JsonNumber(number[0]);
  };
  const parsed = value(0);
  space();
  if (at !== text.length) fail();
  return parsed;
}

// -- the NewPet (§2, §4.2): each member by its exact name, each value of its own JSON type -----------
function int64Of(v) {
  if (!(v instanceof JsonNumber) || !JSON_INTEGER.test(v.text)) return null; // no fraction, exponent, other type
  const n = BigInt(v.text);
  return n >= INT64_MIN && n <= INT64_MAX ? n : null;
}

function decodeNewPet(raw) {
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(raw);
  } catch {
    return [null, "the body must be UTF-8 JSON (RFC 8259 §8.1)"];
  }
  let members;
  try {
    members = parseJson(text);
  } catch (err) {
    if (err instanceof JsonError || err instanceof RangeError) members = null;
    else throw err;
  }
  if (!(members instanceof Map)) return [null, "the body must be a JSON object (NewPet)"];
  if (!members.has("name")) return [null, "name is required"];
  if (typeof members.get("name") !== "string") return [null, "name must be a string"];
  if (!members.has("categoryId")) return [null, "categoryId is required"];
  const categoryId = int64Of(members.get("categoryId"));
  if (categoryId === null) return [null, "categoryId must be an integer (int64)"];
  const pet = { name: members.get("name"), categoryId };
  if (members.has("status")) {
    const status = members.get("status");
    if (typeof status !== "string" || !STATUSES.includes(status)) {
      return [null, "status must be one of available, pending, sold"];
    }
    pet.status = status;
  }
  return [pet, ""]; // a client's id and other members are ignored
}

// -- the store --------------------------------------------------------------------------------------
const pets = new Map(); // id -> Pet, in creation order (ids ascend)
let lastId = 0;

function encodePet(p) {
  const status = p.status === undefined ? "" : `,"status":${JSON.stringify(p.status)}`;
  return `{"id":${p.id},"name":${JSON.stringify(p.name)},"categoryId":${p.categoryId.toString()}${status}}`;
}

function page(limit, status) {
  const out = [];
  for (const p of pets.values()) {
    if (out.length === limit) break;
    if (status === "" || p.status === status) out.push(encodePet(p));
  }
  return `[${out.join(",")}]`;
}

// -- answers ----------------------------------------------------------------------------------------
function send(res, status, text, headers = {}) {
  const body = Buffer.from(text + "\n", "utf8");
  res.writeHead(status, { ...headers, "Content-Type": "application/json", "Content-Length": body.length });
  res.end(body); // Node sends no body to a HEAD
}

// §7: every error answer is the Error body, its status repeating the HTTP status.
function errorBody(status, code, message) {
  return JSON.stringify({ code, message, status });
}

function fail(res, status, code, message, headers = {}) {
  send(res, status, errorBody(status, code, message), headers);
}

// §5: the bearer key; 401 with the Error body and a Bearer challenge (RFC 9110 §11.6.1, RFC 6750 §3).
function authorized(req, res, key) {
  const sent = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i].toLowerCase() === "authorization") sent.push(req.rawHeaders[i + 1]);
  }
  if (sent.length === 0) {
    fail(res, 401, "unauthorized", "API key missing", { "WWW-Authenticate": 'Bearer realm="petstore"' });
    return false;
  }
  const m = AUTHORIZATION.exec(sent[0]);
  if (sent.length === 1 && m && m[1].toLowerCase() === "bearer") {
    const token = Buffer.from(m[2], "latin1"); // the header's bytes as they came
    const expected = Buffer.from(key, "utf8");
    if (token.length === expected.length && crypto.timingSafeEqual(token, expected)) return true;
  }
  fail(res, 401, "unauthorized", "API key not valid", {
    "WWW-Authenticate": 'Bearer realm="petstore", error="invalid_token"',
  });
  return false;
}

function notAllowed(res, allow) {
  // §4.4: other operations are not shown; RFC 9110 §15.5.6: 405 with Allow
  fail(res, 405, "method_not_allowed", `this path serves ${allow}`, { Allow: allow });
}

function list(res, query) {
  // §4.1 / §8 give the bounds; the answer to a value outside them is not shown: 400 Error.
  let limit = DEFAULT_LIMIT;
  if (query.has("limit")) {
    const raw = query.get("limit");
    const n = JSON_INTEGER.test(raw) ? Number(raw) : NaN;
    if (!(n >= 1 && n <= MAX_LIMIT)) return fail(res, 400, "invalid_query", "limit must be an integer from 1 to 100");
    limit = n;
  }
  let status = "";
  if (query.has("status")) {
    status = query.get("status");
    if (!STATUSES.includes(status)) {
      return fail(res, 400, "invalid_query", "status must be one of available, pending, sold");
    }
  }
  send(res, 200, page(limit, status));
}

function create(req, res) {
  // The whole body is read before the answer, also past the limit: an answer sent while the client is
  // still sending can be lost to a reset (RFC 9112 §9.6).
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size <= MAX_BODY) chunks.push(chunk);
  });
  req.on("end", () => {
    if (size > MAX_BODY) return fail(res, 413, "payload_too_large", "the body exceeds 4 MiB");
    const [pet, problem] = decodeNewPet(Buffer.concat(chunks));
    if (problem) return fail(res, 400, "invalid_body", problem);
    pet.id = ++lastId;
    pets.set(pet.id, pet);
    send(res, 201, encodePet(pet));
  });
}

function read(res, rawId) {
  // the answers of the deprecated operation, 404s included, carry its deprecation (RFC 9745, RFC 8594)
  const headers = { Deprecation: DEPRECATION, Sunset: SUNSET };
  const id = DECIMAL.test(rawId) ? BigInt(rawId) : null;
  const pet = id !== null && id >= INT64_MIN && id <= INT64_MAX ? pets.get(Number(id)) : undefined;
  if (pet === undefined || BigInt(pet.id) !== id) return fail(res, 404, "not_found", "no animal has this id", headers);
  send(res, 200, encodePet(pet), headers);
}

function route(req, res, key) {
  const url = new URL(req.url, "http://127.0.0.1"); // the request-target's path and query
  let path;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    return fail(res, 400, "bad_request", "the path has an invalid percent-escape");
  }
  const query = url.searchParams;
  const getting = req.method === "GET" || req.method === "HEAD";
  if (path === "/v1/pets") {
    if (!authorized(req, res, key)) return;
    if (getting) return list(res, query);
    if (req.method === "POST") return create(req, res);
    return notAllowed(res, "GET, HEAD, POST");
  }
  if (path.startsWith("/v1/pets/")) {
    if (!authorized(req, res, key)) return;
    const rawId = path.slice("/v1/pets/".length);
    if (rawId === "" || rawId.includes("/")) return fail(res, 404, "not_found", "no such resource");
    if (!getting) return notAllowed(res, "GET, HEAD");
    return read(res, rawId);
  }
  if (path === "/v1/store/orders") {
    if (!authorized(req, res, key)) return;
    if (!getting) return notAllowed(res, "GET, HEAD");
    return send(res, 200, "[]"); // §4.4: its payloads are not shown; no orders yet
  }
  if (path.startsWith("/v1/") && !authorized(req, res, key)) return;
  fail(res, 404, "not_found", "no such resource");
}

function main() {
  const port = Number(process.argv[2]);
  const key = process.env.PETSTORE_API_KEY || "";
  if (process.argv.length !== 3 || !Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write("usage: node petstore.js PORT\n");
    process.exit(2);
  }
  if (!key) {
    process.stderr.write("PETSTORE_API_KEY is not set\n");
    process.exit(2);
  }
  const server = http.createServer((req, res) => {
    try {
      route(req, res, key);
    } catch (err) {
      process.stderr.write(`petstore: ${err && err.stack}\n`);
      if (!res.headersSent) fail(res, 500, "internal_error", "internal error");
    }
  });
  // Node answers a request its parser refuses with a bare status line; the Error body instead (§7).
  server.on("clientError", (err, socket) => {
    if (err.code === "ECONNRESET" || !socket.writable) return socket.destroy();
    const [status, reason] = err.code === "HPE_HEADER_OVERFLOW" ? [431, "Request Header Fields Too Large"] : [400, "Bad Request"];
    const body = errorBody(status, status === 431 ? "headers_too_large" : "bad_request", reason);
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  server.listen(port, "127.0.0.1", () => process.stdout.write(`listening on 127.0.0.1:${server.address().port}\n`));
}

main();
