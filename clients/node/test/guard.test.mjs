// The package against the real module, through one client library
// (clients.mjs): every method's result is the raw reply it parses, errors
// are the library's own, options left out are not sent, pipelines parse in
// order, and in a cluster every call goes to its key's owner as one command.
// The same on the scripts backend against servers without the module: the
// module's raw replies and errors, for each command whose script exists.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  clients, clusterAddresses, clusterNoModuleAddresses, guardPackage, library, major, standaloneAddress, standaloneNoModuleAddress, version,
} from "./clients.mjs";

const { guard, ALREADY_WON, SOLD_OUT, CampaignExists, GuardError, LeaseRefused, NoSuchCampaign, WrongType } = guardPackage;
const run = `${library}${major}:${process.pid}`;
const N = 4;

// ---------------------------------------------------------------- scripts

/**
 * The scripts in the repository (clients/scripts), by command in lower
 * case: the command's file with the part of the prelude it uses (the
 * package's rule, which tests/client_node.rs holds to the tests' own).
 */
const scriptsFolder = new URL("../../scripts/", import.meta.url);
const read = (file) => readFileSync(new URL(file, scriptsFolder), "utf8");
const { assembled } = createRequire(import.meta.url)("../dist/scripts.js");
const scripts = new Map(
  readdirSync(scriptsFolder)
    .filter((file) => file.endsWith(".lua") && file !== "prelude.lua")
    .map((file) => {
      const source = assembled(read("prelude.lua"), read(file));
      return [file.slice(0, -4), { source, sha: createHash("sha1").update(source).digest("hex") }];
    }),
);
const isModuleCommand = (name) => /^(MON|COUPON|CL)\./i.test(String(name));

/**
 * Where a module command's keys are, read from its words as the scripts'
 * README says (the test's own reading, not the package's): the key, each
 * CL.THROTTLEALL limiter's, COUPON.RESERVEALL's numkeys keys, and the
 * stream after ALERT or LEDGER.
 */
function keyPositions(words) {
  const name = String(words[0]).toUpperCase();
  const count = Number(words[1]);
  if (name === "CL.THROTTLEALL") return Array.from({ length: count }, (_, i) => 2 + 4 * i);
  const head = name === "COUPON.RESERVEALL" ? Array.from({ length: count }, (_, i) => 2 + i) : [1];
  const streams = words.flatMap((word, i) => (i > head.at(-1) && i + 1 < words.length && /^(ALERT|LEDGER)$/i.test(String(word)) ? [i + 1] : []));
  return [...head, ...streams];
}

/** A module command's words as its script's KEYS and ARGV. */
function scriptCall(words) {
  const positions = keyPositions(words);
  const keys = positions.map((i) => words[i]);
  const argv = words.filter((_, i) => i > 0 && !positions.includes(i));
  return { script: scripts.get(String(words[0]).toLowerCase()), numkeys: keys.length, keys, argv };
}

/** What the scripts backend sends for a module command's words. */
function evalshaWords(words) {
  const { script, numkeys, keys, argv } = scriptCall(words);
  return ["EVALSHA", script.sha, String(numkeys), ...keys, ...argv].map(String);
}

/** Runs module commands' words on a server without the module: as their scripts (EVAL); other words as they are. */
const throughScripts = (raw) => (words) => {
  if (!isModuleCommand(words[0])) return raw(words);
  const { script, numkeys, keys, argv } = scriptCall(words);
  if (script === undefined) throw new Error(`no script yet for ${words[0]}`);
  return raw(["EVAL", script.source, numkeys, ...keys, ...argv]);
};

/** Whether every module command named has its script. */
const runsOnScripts = (commands) => commands.every((name) => !isModuleCommand(name) || scripts.has(String(name).toLowerCase()));

/**
 * A backend under test: a guard of `backend` over `connection`; `raw` runs
 * a module command's words on that server; `reference` is a connection to
 * a server with the module, whose raw replies the guard must resolve;
 * `runs(commands)` says whether every command named can run there. On a
 * server without the module (a `reference` is given), module commands run
 * as their scripts.
 */
function sideOf(backend, connection, reference) {
  const bare = reference !== undefined;
  return {
    backend,
    connection,
    guard: () => guard(connection.client, { backend }),
    raw: bare ? throughScripts(connection.raw) : connection.raw,
    reference: reference ?? connection,
    runs: bare ? runsOnScripts : () => true,
  };
}

/** The module commands a case's calls and setup send (by its words). */
function commandsOf({ setup, steps }) {
  const words = [...(setup?.("k") ?? []), ...steps.map((step) => step.raw("k"))];
  return [...new Set(words.map((w) => String(w[0]).toUpperCase()).filter(isModuleCommand))];
}

/** The expected value of each method from its raw reply, written out here. */
const expected = {
  check: ([current, level]) => ({ current, level }),
  int: (n) => n,
  confirmation: (n) => ({ 1: "confirmed", 0: "already", [-2]: "over_limit", [-3]: "no_claim" })[n],
  throttle: ([limited, limit, remaining, retryAfter, resetAfter]) => ({ limited: limited === 1, limit, remaining, retryAfter, resetAfter }),
  throttleAll: ([limited, retryAfter, ...results]) => ({ limited: limited === 1, retryAfter, results: results.map(expected.throttle) }),
  ok: (reply) => (assert.equal(reply, "OK"), true),
  reservation: ([claim, expiresAtMs]) => ({ claim, expiresAtMs }),
  cart: (reply) =>
    reply[0] < 0
      ? { reserved: false, reservations: [], refused: reply[0], at: reply[1] }
      : { reserved: true, reservations: reply.flatMap((v, i) => (i % 2 ? [] : [{ claim: v, expiresAtMs: reply[i + 1] }])), refused: 0, at: null },
  info: (reply) => {
    let fields;
    if (Array.isArray(reply)) fields = Object.fromEntries(reply.flatMap((v, i) => (i % 2 ? [] : [[String(v), reply[i + 1]]])));
    else if (reply instanceof Map) fields = Object.fromEntries(reply);
    else fields = { ...reply };
    // Fields of two words are camelCase.
    const { held_units: heldUnits, confirmed_units: confirmedUnits, ...rest } = fields;
    return { ...rest, heldUnits, confirmedUnits };
  },
  claims: (reply) =>
    reply.map(([claim, user, state, expiresAtMs, requestId, units]) => ({ claim, user, state, expiresAtMs, requestId: requestId ?? null, units })),
};

/** Absolute expiry times of two calls a few ms apart: equal to within 2 s. */
function sameUpToTime(actual, wanted, what) {
  const close = (a, b) => {
    if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => close(x, b[i]));
    if (a && typeof a === "object") {
      const keys = Object.keys(a).sort();
      if (!b || typeof b !== "object" || keys.join() !== Object.keys(b).sort().join()) return false;
      return keys.every((k) => (k === "expiresAtMs" && a[k] > 0 ? Math.abs(a[k] - b[k]) < 2000 : close(a[k], b[k])));
    }
    return a === b;
  };
  // Not close: they differ by more than time, and deepEqual shows how.
  if (!close(actual, wanted)) assert.deepEqual(actual, wanted, what);
}

/**
 * Per method, calls on a key of its own: `guard` is the method call,
 * `raw` the same command's words, `parse` what the raw reply means.
 * `setup` runs through the raw connection before (campaigns to reserve in).
 */
function cases(tag) {
  const k = (name) => `{${tag}}:${name}`;
  // A campaign that keeps a ledger, beside each campaign method's key.
  const led = (key) => `${key}:led`;
  const ledger = (key) => `${key}:ledger`;
  const withLedger = (key, limit) => ["COUPON.CREATE", led(key), limit, "LEDGER", ledger(key)];
  return [
    {
      method: "incrcheck",
      steps: [1, 2, 3].map(() => ({
        guard: (g, key) => g.incrcheck(key, 2, 60, [3, 5], { alert: k("alerts-g"), maxlen: 100 }),
        raw: (key) => ["MON.INCRCHECK", key, 2, 60, 3, 5, "ALERT", k("alerts-r"), "MAXLEN", 100],
        parse: expected.check,
      })),
    },
    {
      method: "slidecheck",
      steps: [1, 2].map(() => ({
        guard: (g, key) => g.slidecheck(key, 3, 10, 4, { buckets: 10 }),
        raw: (key) => ["MON.SLIDECHECK", key, 3, 10, 4, "BUCKETS", 10],
        parse: expected.check,
      })),
    },
    {
      method: "distinct",
      steps: ["a", "b", "a", "c"].map((member) => ({
        guard: (g, key) => g.distinct(key, member, 60, [2, 3]),
        raw: (key) => ["MON.DISTINCT", key, member, 60, 2, 3],
        parse: expected.check,
      })),
    },
    {
      method: "decrclamp",
      setup: (key) => [["SET", key, "5"]],
      steps: [3, 3, 1].map((amount) => ({
        guard: (g, key) => g.decrclamp(key, amount),
        raw: (key) => ["MON.DECRCLAMP", key, amount],
        parse: expected.int,
      })),
    },
    {
      method: "issue",
      steps: ["u1", "u2", "u1", "u3"].map((user) => ({
        guard: (g, key) => g.issue(key, user, 2),
        raw: (key) => ["COUPON.ISSUE", key, user, 2],
        parse: expected.int,
      })),
    },
    {
      method: "issue",
      setup: (key) => [withLedger(key, 2)],
      steps: ["u1", "u1", "u2", "u3"].map((user) => ({
        guard: (g, key) => g.issue(led(key), user, 2, { ledger: ledger(key) }),
        raw: (key) => ["COUPON.ISSUE", led(key), user, 2, "LEDGER", ledger(key)],
        parse: expected.int,
      })),
    },
    {
      method: "revoke",
      setup: (key) => [["SADD", key, "u1"]],
      steps: ["u1", "u1"].map((user) => ({
        guard: (g, key) => g.revoke(key, user),
        raw: (key) => ["COUPON.REVOKE", key, user],
        parse: expected.int,
      })),
    },
    {
      method: "revoke",
      setup: (key) => [withLedger(key, 2), ["COUPON.ISSUE", led(key), "u1", 2, "LEDGER", ledger(key)]],
      steps: ["u1", "u1"].map((user) => ({
        guard: (g, key) => g.revoke(led(key), user, { ledger: ledger(key) }),
        raw: (key) => ["COUPON.REVOKE", led(key), user, "LEDGER", ledger(key)],
        parse: expected.int,
      })),
    },
    {
      method: "throttle",
      steps: [undefined, 0, 2, 9].map((quantity) => ({
        guard: (g, key) => g.throttle(key, 2, 10, 60, quantity),
        raw: (key) => ["CL.THROTTLE", key, 2, 10, 60, ...(quantity === undefined ? [] : [quantity])],
        parse: expected.throttle,
      })),
    },
    {
      // The options object; BLOCK: a refusal blocks the limiter 600 s.
      method: "throttle",
      steps: [{ block: 600 }, { quantity: 1, block: 600 }, { quantity: 0, block: 600 }].map((opts) => ({
        guard: (g, key) => g.throttle(key, 0, 1, 60, opts),
        raw: (key) => ["CL.THROTTLE", key, 0, 1, 60, ...(opts.quantity === undefined ? [] : [opts.quantity]), "BLOCK", 600],
        parse: expected.throttle,
      })),
    },
    {
      method: "throttleAll",
      steps: [1, 1].map((quantity) => ({
        guard: (g, key) => g.throttleAll([[key, 0, 1, 60]], { quantity, block: 600 }),
        raw: (key) => ["CL.THROTTLEALL", 1, key, 0, 1, 60, "QUANTITY", quantity, "BLOCK", 600],
        parse: expected.throttleAll,
      })),
    },
    {
      // A quota of 3 a minute: 2, then 2 more do not fit, then a peek.
      method: "quota",
      steps: [2, 2, 0, undefined].map((quantity) => ({
        guard: (g, key) => g.quota(key, 3, 60, { quantity }),
        raw: (key) => ["CL.QUOTA", key, 3, 60, ...(quantity === undefined ? [] : [quantity])],
        parse: expected.throttle,
      })),
    },
    {
      // A calendar window: the counter lives until the zone's midnight.
      method: "incrcheck",
      steps: ["Asia/Kolkata", "America/New_York"].map((tz) => ({
        guard: (g, key) => g.incrcheck(key, 1, "day", [1, 2], { tz }),
        raw: (key) => ["MON.INCRCHECK", key, 1, "day", 1, 2, "TZ", tz],
        parse: expected.check,
      })),
    },
    {
      // 5 of 5 reserved, then given back: never above the burst.
      method: "refund",
      setup: (key) => [["CL.THROTTLE", key, 4, 10, 60, 5]],
      steps: [2, 1, 9].map((quantity) => ({
        guard: (g, key) => g.refund(key, 4, 10, 60, quantity),
        raw: (key) => ["CL.REFUND", key, 4, 10, 60, quantity],
        parse: expected.throttle,
      })),
    },
    {
      method: "throttleAll",
      steps: [undefined, 1, 0].map((quantity) => ({
        guard: (g, key) => g.throttleAll([[key, 5, 10, 60], [`${key}:b`, 0, 1, 60]], { quantity }),
        raw: (key) => ["CL.THROTTLEALL", 2, key, 5, 10, 60, `${key}:b`, 0, 1, 60, ...(quantity === undefined ? [] : ["QUANTITY", quantity])],
        parse: expected.throttleAll,
      })),
    },
    {
      method: "create",
      steps: [
        { guard: (g, key) => g.create(key, 3, { peruser: 2, hold: 30 }), raw: (key) => ["COUPON.CREATE", key, 3, "PERUSER", 2, "HOLD", 30], parse: expected.ok },
        {
          guard: (g, key) => g.create(led(key), 3, { hold: 30, ledger: ledger(key), maxlen: 50 }),
          raw: (key) => ["COUPON.CREATE", led(key), 3, "HOLD", 30, "LEDGER", ledger(key), "MAXLEN", 50],
          parse: expected.ok,
        },
      ],
    },
    {
      method: "reserve",
      setup: (key) => [["COUPON.CREATE", key, 2, "HOLD", 100], withLedger(key, 1), ["COUPON.CREATE", `${key}:u`, 6, "PERUSER", 4]],
      steps: [
        { guard: (g, key) => g.reserve(led(key), "u1", { id: "r1", ledger: ledger(key) }), raw: (key) => ["COUPON.RESERVE", led(key), "u1", "ID", "r1", "LEDGER", ledger(key)], parse: expected.reservation },
        { guard: (g, key) => g.reserve(led(key), "u2", { ledger: ledger(key) }), raw: (key) => ["COUPON.RESERVE", led(key), "u2", "LEDGER", ledger(key)], parse: expected.reservation },
        { guard: (g, key) => g.reserve(key, "u1", { id: "r1" }), raw: (key) => ["COUPON.RESERVE", key, "u1", "ID", "r1"], parse: expected.reservation },
        { guard: (g, key) => g.reserve(key, "u1", { id: "r1" }), raw: (key) => ["COUPON.RESERVE", key, "u1", "ID", "r1"], parse: expected.reservation },
        { guard: (g, key) => g.reserve(key, "u1"), raw: (key) => ["COUPON.RESERVE", key, "u1"], parse: expected.reservation },
        { guard: (g, key) => g.reserve(key, "u2", { hold: 5 }), raw: (key) => ["COUPON.RESERVE", key, "u2", "HOLD", 5], parse: expected.reservation },
        { guard: (g, key) => g.reserve(key, "u3"), raw: (key) => ["COUPON.RESERVE", key, "u3"], parse: expected.reservation },
        // Units: a campaign of 6, 4 a user (u1's id r2 with 3 units, then
        // again with 3, with 2, and 2 more units: 5 > 4).
        { guard: (g, key) => g.reserve(`${key}:u`, "u1", { id: "r2", qty: 3 }), raw: (key) => ["COUPON.RESERVE", `${key}:u`, "u1", "ID", "r2", "QTY", 3], parse: expected.reservation },
        { guard: (g, key) => g.reserve(`${key}:u`, "u1", { id: "r2", qty: 3 }), raw: (key) => ["COUPON.RESERVE", `${key}:u`, "u1", "ID", "r2", "QTY", 3], parse: expected.reservation },
        { guard: (g, key) => g.reserve(`${key}:u`, "u1", { qty: 2 }), raw: (key) => ["COUPON.RESERVE", `${key}:u`, "u1", "QTY", 2], parse: expected.reservation },
        { guard: (g, key) => g.reserve(`${key}:u`, "u2", { qty: 4, hold: 50 }), raw: (key) => ["COUPON.RESERVE", `${key}:u`, "u2", "HOLD", 50, "QTY", 4], parse: expected.reservation },
        { guard: (g, key) => g.reserve(`${key}:u`, "u2", { qty: 3 }), raw: (key) => ["COUPON.RESERVE", `${key}:u`, "u2", "QTY", 3], parse: expected.reservation },
      ],
    },
    {
      method: "confirm",
      setup: (key) => [
        ["COUPON.CREATE", key, 2],
        ["COUPON.RESERVE", key, "u1"],
        withLedger(key, 2),
        ["COUPON.RESERVE", led(key), "u1", "LEDGER", ledger(key)],
        ["COUPON.CREATE", `${key}:u`, 9, "PERUSER", 9],
        ["COUPON.RESERVE", `${key}:u`, "u1", "QTY", 4],
        ["COUPON.RESERVE", `${key}:u`, "u1", "QTY", 2],
      ],
      steps: [
        ...[1, 1, 7].map((claim) => ({ guard: (g, key) => g.confirm(key, claim), raw: (key) => ["COUPON.CONFIRM", key, claim], parse: expected.confirmation })),
        // 3 of claim 1's 4 units; then all of claim 2's (2).
        ...[[1, 3], [1, 3], [2, undefined]].map(([claim, qty]) => ({
          guard: (g, key) => g.confirm(`${key}:u`, claim, { qty }),
          raw: (key) => ["COUPON.CONFIRM", `${key}:u`, claim, ...(qty === undefined ? [] : ["QTY", qty])],
          parse: expected.confirmation,
        })),
        ...[1, 1, 7].map((claim) => ({
          guard: (g, key) => g.confirm(led(key), claim, { ledger: ledger(key) }),
          raw: (key) => ["COUPON.CONFIRM", led(key), claim, "LEDGER", ledger(key)],
          parse: expected.confirmation,
        })),
      ],
    },
    {
      // A confirmed claim: nothing to renew (0); a missing one -3. (A
      // held one's new end is a time: the lease test checks it.)
      method: "renew",
      setup: (key) => [["COUPON.CREATE", key, 2], ["COUPON.ISSUE", key, "u1", 2]],
      steps: [
        { guard: (g, key) => g.renew(key, 1, { hold: 60 }), raw: (key) => ["COUPON.RENEW", key, 1, "HOLD", 60], parse: expected.int },
        { guard: (g, key) => g.renew(key, 9), raw: (key) => ["COUPON.RENEW", key, 9], parse: expected.int },
      ],
    },
    {
      method: "release",
      setup: (key) => [["COUPON.CREATE", key, 2], ["COUPON.RESERVE", key, "u1"], withLedger(key, 2), ["COUPON.RESERVE", led(key), "u1", "LEDGER", ledger(key)]],
      steps: [
        ...[1, 1].map((claim) => ({ guard: (g, key) => g.release(key, claim), raw: (key) => ["COUPON.RELEASE", key, claim], parse: expected.int })),
        ...[1, 1].map((claim) => ({
          guard: (g, key) => g.release(led(key), claim, { ledger: ledger(key) }),
          raw: (key) => ["COUPON.RELEASE", led(key), claim, "LEDGER", ledger(key)],
          parse: expected.int,
        })),
      ],
    },
    {
      method: "alter",
      setup: (key) => [["COUPON.CREATE", key, 2], withLedger(key, 2), ["COUPON.RESERVE", led(key), "u1", "LEDGER", ledger(key)]],
      steps: [
        { guard: (g, key) => g.alter(key, { limit: 5 }), raw: (key) => ["COUPON.ALTER", key, "LIMIT", 5], parse: expected.ok },
        { guard: (g, key) => g.alter(key, { limit: 5 }), raw: (key) => ["COUPON.ALTER", key, "LIMIT", 5], parse: expected.ok },
        {
          guard: (g, key) => g.alter(led(key), { limit: 1, peruser: 2, hold: 60, ledger: ledger(key) }),
          raw: (key) => ["COUPON.ALTER", led(key), "LIMIT", 1, "PERUSER", 2, "HOLD", 60, "LEDGER", ledger(key)],
          parse: expected.ok,
        },
      ],
    },
    {
      method: "reclaim",
      // Two holds of 1 s and one of 600 s; the second step waits for the first two to expire.
      setup: (key) => [
        withLedger(key, 5),
        ...["u1", "u2"].map((user) => ["COUPON.RESERVE", led(key), user, "HOLD", 1, "LEDGER", ledger(key)]),
        ["COUPON.RESERVE", led(key), "u3", "LEDGER", ledger(key)],
        ["COUPON.CREATE", key, 2],
      ],
      steps: [
        { guard: (g, key) => g.reclaim(key), raw: (key) => ["COUPON.RECLAIM", key], parse: expected.int },
        {
          guard: async (g, key) => (await new Promise((resolve) => setTimeout(resolve, 1200)), g.reclaim(led(key), { count: 1, ledger: ledger(key) })),
          raw: (key) => ["COUPON.RECLAIM", led(key), "COUNT", 1, "LEDGER", ledger(key)],
          parse: expected.int,
        },
        { guard: (g, key) => g.reclaim(led(key), { ledger: ledger(key) }), raw: (key) => ["COUPON.RECLAIM", led(key), "LEDGER", ledger(key)], parse: expected.int },
        { guard: (g, key) => g.reclaim(led(key), { ledger: ledger(key) }), raw: (key) => ["COUPON.RECLAIM", led(key), "LEDGER", ledger(key)], parse: expected.int },
      ],
    },
    {
      method: "reserveAll",
      // Carts of two campaigns (2 places, 1 place), then with a third that keeps a ledger.
      setup: (key) => [["COUPON.CREATE", key, 2, "HOLD", 30], ["COUPON.CREATE", `${key}:b`, 1, "HOLD", 60], withLedger(key, 3), ["COUPON.CREATE", `${key}:u`, 5, "PERUSER", 5]],
      steps: [
        ...["u1", "u2", "u1"].map((user) => ({
          guard: (g, key) => g.reserveAll([key, `${key}:b`], user),
          raw: (key) => ["COUPON.RESERVEALL", 2, key, `${key}:b`, user],
          parse: expected.cart,
        })),
        {
          guard: (g, key) => g.reserveAll([led(key), key], "u3", { hold: 10, id: "cart-1", ledger: ledger(key) }),
          raw: (key) => ["COUPON.RESERVEALL", 2, led(key), key, "u3", "HOLD", 10, "ID", "cart-1", "LEDGER", ledger(key)],
          parse: expected.cart,
        },
        {
          guard: (g, key) => g.reserveAll([led(key), key], "u3", { id: "cart-1", ledger: ledger(key) }),
          raw: (key) => ["COUPON.RESERVEALL", 2, led(key), key, "u3", "ID", "cart-1", "LEDGER", ledger(key)],
          parse: expected.cart,
        },
        // Units per campaign: 2 of the ledger's 3 (1 is held) and 4 of
        // `:u`'s 5, then 1 more of the ledger's: refused at the 1st.
        ...[[2, 4], [1, 2]].map(([first, second]) => ({
          guard: (g, key) => g.reserveAll([led(key), `${key}:u`], "u4", { qty: [first, second], ledger: ledger(key) }),
          raw: (key) => ["COUPON.RESERVEALL", 2, led(key), `${key}:u`, "u4", "QTY", first, second, "LEDGER", ledger(key)],
          parse: expected.cart,
        })),
      ],
    },
    {
      method: "campaignInfo",
      setup: (key) => [
        ["COUPON.CREATE", key, 9, "PERUSER", 4],
        ["COUPON.RESERVE", key, "u1", "QTY", 3],
        ["COUPON.ISSUE", key, "u2", 9],
        ["COUPON.RESERVE", key, "u3"],
        ["COUPON.RELEASE", key, 3],
        ["COUPON.RESERVE", key, "u3", "QTY", 4],
        ["COUPON.CONFIRM", key, 4, "QTY", 2],
      ],
      steps: [{ guard: (g, key) => g.campaignInfo(key), raw: (key) => ["COUPON.INFO", key], parse: expected.info }],
    },
    {
      method: "claims",
      setup: (key) => [
        ["COUPON.CREATE", key, 5, "PERUSER", 3],
        ["COUPON.RESERVE", key, "u1", "ID", "r1"],
        ["COUPON.ISSUE", key, "u2", 5],
        ["COUPON.RESERVE", key, "u1", "QTY", 2],
      ],
      steps: [
        { guard: (g, key) => g.claims(key), raw: (key) => ["COUPON.CLAIMS", key], parse: expected.claims },
        { guard: (g, key) => g.claims(key, { from: 2, count: 1 }), raw: (key) => ["COUPON.CLAIMS", key, "FROM", 2, "COUNT", 1], parse: expected.claims },
      ],
    },
  ];
}

const METHODS = [...new Set(cases("x").map((c) => c.method))];

const commandName = {
  incrcheck: "mon.incrcheck", slidecheck: "mon.slidecheck", distinct: "mon.distinct", decrclamp: "mon.decrclamp",
  issue: "coupon.issue", revoke: "coupon.revoke", throttle: "cl.throttle", throttleAll: "cl.throttleall", refund: "cl.refund",
  quota: "cl.quota",
  create: "coupon.create", reserve: "coupon.reserve", confirm: "coupon.confirm", release: "coupon.release",
  campaignInfo: "coupon.info", renew: "coupon.renew", claims: "coupon.claims", alter: "coupon.alter", reclaim: "coupon.reclaim",
  reserveAll: "coupon.reserveall",
};

/**
 * Each method with the same calls on two keys, through the package (on
 * `side`'s server) and raw (on the module's): the cases `side` runs.
 */
async function resultsEqualRaw(side, tag) {
  const g = side.guard();
  for (const [n, { method, setup, steps }] of cases(tag).entries()) {
    if (!side.runs(commandsOf({ setup, steps }))) continue;
    const mine = `{${tag}}:${n}:${method}:g`;
    const theirs = `{${tag}}:${n}:${method}:r`;
    for (const words of setup?.(mine) ?? []) await side.raw(words);
    for (const words of setup?.(theirs) ?? []) await side.reference.raw(words);
    for (const [i, step] of steps.entries()) {
      const got = await step.guard(g, mine);
      const reply = await side.reference.raw(step.raw(theirs));
      sameUpToTime(got, step.parse(reply), `${method} call ${i + 1}: raw reply ${JSON.stringify(reply)}`);
    }
  }
}

/** A bad call of each method, through the package and raw. */
const badCalls = (tag) => {
  const k = (name) => `{${tag}}:${name}`;
  return [
    [(g) => g.incrcheck(k("a"), 0, 10, 5), ["MON.INCRCHECK", k("a"), 0, 10, 5]],
    [(g) => g.slidecheck(k("a"), 1, 10, [5, 4]), ["MON.SLIDECHECK", k("a"), 1, 10, 5, 4]],
    [(g) => g.distinct(k("a"), "", 10, 5), ["MON.DISTINCT", k("a"), "", 10, 5]],
    [(g) => g.decrclamp(k("a"), -1), ["MON.DECRCLAMP", k("a"), -1]],
    [(g) => g.issue(k("a"), "u", 0), ["COUPON.ISSUE", k("a"), "u", 0]],
    [(g) => g.revoke(k("a"), ""), ["COUPON.REVOKE", k("a"), ""]],
    [(g) => g.throttle(k("a"), 1, 0, 1), ["CL.THROTTLE", k("a"), 1, 0, 1]],
    [(g) => g.throttleAll([[k("a"), 1, 1, 0]]), ["CL.THROTTLEALL", 1, k("a"), 1, 1, 0]],
    [(g) => g.refund(k("a"), 1, 1, 1, 0), ["CL.REFUND", k("a"), 1, 1, 1, 0]],
    [(g) => g.quota(k("a"), 5, "day", { tz: "Mars/Olympus" }), ["CL.QUOTA", k("a"), 5, "day", "TZ", "Mars/Olympus"]],
    [(g) => g.create(k("a"), 1, { hold: 0 }), ["COUPON.CREATE", k("a"), 1, "HOLD", 0]],
    [(g) => g.reserve(k("none"), "u"), ["COUPON.RESERVE", k("none"), "u"]],
    [(g) => g.confirm(k("none"), 1), ["COUPON.CONFIRM", k("none"), 1]],
    [(g) => g.release(k("none"), 1), ["COUPON.RELEASE", k("none"), 1]],
    [(g) => g.renew(k("none"), 1, { hold: 0 }), ["COUPON.RENEW", k("none"), 1, "HOLD", 0]],
    [(g) => g.alter(k("none"), { limit: 0 }), ["COUPON.ALTER", k("none"), "LIMIT", 0]],
    [(g) => g.reclaim(k("none"), { count: 0 }), ["COUPON.RECLAIM", k("none"), "COUNT", 0]],
    [(g) => g.reserveAll([k("a"), k("a")], "u"), ["COUPON.RESERVEALL", 2, k("a"), k("a"), "u"]],
    [(g) => g.campaignInfo(k("string")), ["COUPON.INFO", k("string")]],
    [(g) => g.claims(k("none"), { count: 0 }), ["COUPON.CLAIMS", k("none"), "COUNT", 0]],
  ];
};

async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected a rejection");
}

/** The package's error class for a server text, worked out here. */
const kindOf = (text) =>
  text.startsWith("BUSYKEY ") ? CampaignExists : text.startsWith("WRONGTYPE ") ? WrongType : text === "no such campaign" ? NoSuchCampaign : GuardError;

/** QTY's errors (units): the server's text, on either backend, nothing written. */
async function unitsErrorsAreTheServers(side, tag) {
  if (!side.runs(["COUPON.CREATE", "COUPON.RESERVE", "COUPON.CONFIRM", "COUPON.RESERVEALL"])) return;
  const g = side.guard();
  const k = (name) => `{${tag}}:${name}`;
  const setup = [["COUPON.CREATE", k("a"), 5, "PERUSER", 5], ["COUPON.CREATE", k("b"), 5], ["COUPON.RESERVE", k("a"), "u", "ID", "r", "QTY", 2]];
  for (const words of setup) {
    await side.raw(words);
    if (side.reference !== side.connection) await side.reference.raw(words);
  }
  const calls = [
    [(g) => g.reserve(k("a"), "u", { qty: 0 }), ["COUPON.RESERVE", k("a"), "u", "QTY", 0], "qty must be a positive integer"],
    [(g) => g.reserve(k("a"), "u", { id: "r", qty: 3 }), ["COUPON.RESERVE", k("a"), "u", "ID", "r", "QTY", 3], "id was reserved with another qty"],
    [(g) => g.confirm(k("a"), 1, { qty: 3 }), ["COUPON.CONFIRM", k("a"), 1, "QTY", 3], "qty is above the claim's units"],
    [(g) => g.reserveAll([k("a"), k("b")], "u", { qty: [1] }), ["COUPON.RESERVEALL", 2, k("a"), k("b"), "u", "QTY", 1], "qty needs 2 values, one per key"],
    [(g) => g.reserveAll([k("a"), k("b")], "u", { qty: [1, 2, 3] }), ["COUPON.RESERVEALL", 2, k("a"), k("b"), "u", "QTY", 1, 2, 3], "qty needs 2 values, one per key"],
  ];
  for (const [call, words, text] of calls) {
    const mine = await rejection(call(g));
    const theirs = await rejection(side.reference.raw(words));
    assert.equal(mine.message, text, words.join(" "));
    assert.equal(theirs.message.replace(/^ERR /, ""), text, words.join(" "));
    assert.ok(mine instanceof GuardError, words.join(" "));
  }
  const info = await g.campaignInfo(k("a"));
  assert.deepEqual([info.held, info.heldUnits, info.confirmed, info.confirmedUnits], [1, 2, 0, 0]);
}

async function errorsAreTheClients(side, tag) {
  const g = side.guard();
  for (const connection of new Set([side.connection, side.reference])) await connection.raw(["SET", `{${tag}}:string`, "x"]);
  const bad = badCalls(tag);
  assert.equal(bad.length, METHODS.length);
  for (const [call, words] of bad.filter(([, words]) => side.runs([words[0]]))) {
    const mine = await rejection(call(g));
    const theirs = await rejection(side.reference.raw(words));
    // The library's own error, its text without "ERR " (as the Python package gives it), and the package's class.
    assert.equal(mine.constructor, theirs.constructor, `${words[0]}: ${mine.constructor.name} vs ${theirs.constructor.name}`);
    assert.equal(mine.message, theirs.message.replace(/^ERR /, ""), words[0]);
    assert.ok(mine instanceof GuardError && mine instanceof kindOf(mine.message), `${words[0]}: ${mine.message}`);
    assert.ok(!(theirs instanceof GuardError), "a raw call's error is left alone");
  }
  // A campaign that exists, and one that does not, plain and in a transaction.
  if (!side.runs(["COUPON.CREATE"])) return;
  const campaign = `{${tag}}:exists`;
  assert.equal(await g.create(campaign, 2), true);
  const exists = await rejection(g.create(campaign, 2));
  assert.ok(exists instanceof CampaignExists && !(exists instanceof NoSuchCampaign));
  assert.equal(exists.message, "BUSYKEY Target key name already exists.");
  assert.equal(await g.create(campaign, 9, { existOk: true }), false);
  assert.equal((await g.campaignInfo(campaign)).limit, 2, "existOk changed nothing");
  const [created, again] = await g.pipeline({ transaction: true }).create(`{${tag}}:fresh`, 1, { existOk: true }).create(campaign, 1, { existOk: true }).exec();
  assert.deepEqual([created, again], [true, false]);
  const missing = await rejection(g.campaignInfo(`{${tag}}:none`));
  assert.ok(missing instanceof NoSuchCampaign && missing.message === "no such campaign");
}

/** The application's own commands share a guard transaction's MULTI; CONFIRM's answers by name. */
async function rawCommandsShareTheTransaction(side, tag) {
  if (!side.runs(["COUPON.CREATE", "COUPON.RESERVE", "COUPON.CONFIRM"])) return;
  const g = side.guard();
  const campaign = `{${tag}}:raw`;
  await g.create(campaign, 1);
  const { claim } = await g.reserve(campaign, "u1");
  const results = await g.pipeline({ transaction: true }).confirm(campaign, claim).call("SET", `{${tag}}:order`, "paid").confirm(campaign, 99).exec();
  assert.deepEqual([results[0], String(results[1]), results[2]], ["confirmed", "OK", "no_claim"]);
  assert.equal(String(await side.connection.raw(["GET", `{${tag}}:order`])), "paid");
  const info = await g.campaignInfo(campaign);
  assert.deepEqual(Object.keys(info), ["limit", "peruser", "hold", "confirmed", "held", "available", "claims", "expired", "released", "heldUnits", "confirmedUnits"]);
}

/**
 * An "auto" guard on a server with the module: an unknown command of the
 * application's own in its transaction or pipeline rejects as itself and
 * does not switch the guard to scripts (found by the attack review).
 */
async function anApplicationsUnknownCommandKeepsTheModule(side, tag) {
  if (side.backend !== "module") return;
  const g = guard(side.connection.client);
  const window = `{${tag}}:window`;
  assert.equal((await g.slidecheck(window, 1, 60, 5)).current, 1);
  for (const transaction of [true, false]) {
    const error = await rejection(g.pipeline({ transaction }).call("NO.SUCHCMD", `{${tag}}:x`).incrcheck(`{${tag}}:n`, 1, 60, 5).exec());
    assert.match(error.message, /NO\.SUCHCMD|EXECABORT/, `transaction ${transaction}`);
  }
  assert.equal((await g.slidecheck(window, 1, 60, 5)).current, 2, "the guard stayed on the module");
  // The package's classes hold for errors an application makes with them too.
  assert.ok(new CampaignExists("x") instanceof CampaignExists && new CampaignExists("x") instanceof GuardError);
  assert.ok(!(new GuardError("x") instanceof CampaignExists) && new WrongType("x") instanceof Error);
}

/** The commands each method sends, as the server logs them (SLOWLOG: the
 * harness starts the standalone servers with slowlog-log-slower-than 0). */
async function sentWords(admin, call) {
  await admin.raw(["SLOWLOG", "RESET"]);
  await call();
  const log = await admin.raw(["SLOWLOG", "GET", "10"]);
  return log
    .map((entry) => entry[3].map(String))
    .filter((words) => isModuleCommand(words[0]) || /^EVALSHA$/i.test(words[0]))
    .reverse();
}

/** Each call sends the command's words (scripts: its EVALSHA with KEYS and ARGV split as the README says), nothing for an option left out. */
async function optionsLeftOutAreNotSent(side, tag) {
  const { connection } = side;
  const g = side.guard();
  const k = (name) => `{${tag}}:${name}`;
  // The calls on campaigns (camp, c1, c2, c3) need campaigns.
  const runs = (words) => side.runs([words[0], ...(words.some((w) => /:(camp|c\d)$/.test(w)) ? ["COUPON.CREATE"] : [])]);
  if (runs(["COUPON.CREATE", k("camp")])) await side.raw(["COUPON.CREATE", k("camp"), 10]);
  const table = [
    [() => g.incrcheck(k("i"), 1, 10, 5), ["MON.INCRCHECK", k("i"), "1", "10", "5"]],
    [() => g.incrcheck(k("i"), 1, 10, [5, 6], { alert: k("s") }), ["MON.INCRCHECK", k("i"), "1", "10", "5", "6", "ALERT", k("s")]],
    [() => g.slidecheck(k("w"), 1, 10, 5), ["MON.SLIDECHECK", k("w"), "1", "10", "5"]],
    [() => g.slidecheck(k("w"), 1, 10, 5, { alert: k("s"), maxlen: 9 }), ["MON.SLIDECHECK", k("w"), "1", "10", "5", "ALERT", k("s"), "MAXLEN", "9"]],
    [() => g.distinct(k("d"), "m", 10, [1, 2]), ["MON.DISTINCT", k("d"), "m", "10", "1", "2"]],
    [() => g.decrclamp(k("i"), 1), ["MON.DECRCLAMP", k("i"), "1"]],
    [() => g.decrclamp(k("i"), 1, { alert: k("s"), maxlen: 3 }), ["MON.DECRCLAMP", k("i"), "1", "ALERT", k("s"), "MAXLEN", "3"]],
    [() => g.issue(k("set"), "u", 5), ["COUPON.ISSUE", k("set"), "u", "5"]],
    [() => g.revoke(k("set"), "u"), ["COUPON.REVOKE", k("set"), "u"]],
    [() => g.throttle(k("t"), 1, 2, 3), ["CL.THROTTLE", k("t"), "1", "2", "3"]],
    [() => g.throttle(k("t"), 1, 2, 3, 0), ["CL.THROTTLE", k("t"), "1", "2", "3", "0"]],
    [() => g.throttleAll([[k("t"), 1, 2, 3]]), ["CL.THROTTLEALL", "1", k("t"), "1", "2", "3"]],
    [() => g.throttleAll([[k("t"), 1, 2, 3]], { quantity: 0 }), ["CL.THROTTLEALL", "1", k("t"), "1", "2", "3", "QUANTITY", "0"]],
    [() => g.throttle(k("t"), 1, 2, 3, { quantity: 0 }), ["CL.THROTTLE", k("t"), "1", "2", "3", "0"]],
    [() => g.throttle(k("t"), 1, 2, 3, { block: 5 }), ["CL.THROTTLE", k("t"), "1", "2", "3", "BLOCK", "5"]],
    [() => g.throttleAll([[k("t"), 1, 2, 3]], { block: 5 }), ["CL.THROTTLEALL", "1", k("t"), "1", "2", "3", "BLOCK", "5"]],
    [() => g.refund(k("t"), 1, 2, 3, 1), ["CL.REFUND", k("t"), "1", "2", "3", "1"]],
    // (A zone goes to a script with its rules: the calls with `tz` are
    // compared by their replies above.)
    [() => g.quota(k("q"), 5, "day", { quantity: 2 }), ["CL.QUOTA", k("q"), "5", "day", "2"]],
    [() => g.create(k("c1"), 3), ["COUPON.CREATE", k("c1"), "3"]],
    [() => g.create(k("c2"), 3, { hold: 9 }), ["COUPON.CREATE", k("c2"), "3", "HOLD", "9"]],
    [() => g.reserve(k("camp"), "u"), ["COUPON.RESERVE", k("camp"), "u"]],
    [() => g.reserve(k("camp"), "v", { id: "r" }), ["COUPON.RESERVE", k("camp"), "v", "ID", "r"]],
    [() => g.confirm(k("camp"), 1), ["COUPON.CONFIRM", k("camp"), "1"]],
    [() => g.reserve(k("camp"), "w", { qty: 2, id: "r3" }), ["COUPON.RESERVE", k("camp"), "w", "ID", "r3", "QTY", "2"]],
    [() => g.confirm(k("camp"), 3, { qty: 1 }), ["COUPON.CONFIRM", k("camp"), "3", "QTY", "1"]],
    [() => g.release(k("camp"), 1), ["COUPON.RELEASE", k("camp"), "1"]],
    [() => g.renew(k("camp"), 2, { hold: 9 }), ["COUPON.RENEW", k("camp"), "2", "HOLD", "9"]],
    [() => g.create(k("c3"), 3, { ledger: k("l"), maxlen: 9 }), ["COUPON.CREATE", k("c3"), "3", "LEDGER", k("l"), "MAXLEN", "9"]],
    [() => g.reserve(k("c3"), "u", { ledger: k("l") }), ["COUPON.RESERVE", k("c3"), "u", "LEDGER", k("l")]],
    [() => g.confirm(k("c3"), 1, { ledger: k("l") }), ["COUPON.CONFIRM", k("c3"), "1", "LEDGER", k("l")]],
    [() => g.release(k("c3"), 1, { ledger: k("l") }), ["COUPON.RELEASE", k("c3"), "1", "LEDGER", k("l")]],
    [() => g.issue(k("c3"), "w", 3, { ledger: k("l") }), ["COUPON.ISSUE", k("c3"), "w", "3", "LEDGER", k("l")]],
    [() => g.revoke(k("c3"), "w", { ledger: k("l") }), ["COUPON.REVOKE", k("c3"), "w", "LEDGER", k("l")]],
    [() => g.alter(k("camp"), { limit: 11 }), ["COUPON.ALTER", k("camp"), "LIMIT", "11"]],
    [() => g.alter(k("c3"), { hold: 5, ledger: k("l") }), ["COUPON.ALTER", k("c3"), "HOLD", "5", "LEDGER", k("l")]],
    [() => g.reclaim(k("camp")), ["COUPON.RECLAIM", k("camp")]],
    [() => g.reclaim(k("c3"), { count: 3, ledger: k("l") }), ["COUPON.RECLAIM", k("c3"), "COUNT", "3", "LEDGER", k("l")]],
    [() => g.reserveAll([k("camp"), k("c1")], "x"), ["COUPON.RESERVEALL", "2", k("camp"), k("c1"), "x"]],
    [() => g.reserveAll([k("camp")], "y", { hold: 9, id: "r2" }), ["COUPON.RESERVEALL", "1", k("camp"), "y", "HOLD", "9", "ID", "r2"]],
    [
      () => g.reserveAll([k("camp"), k("c3")], "z", { qty: [2, 1], ledger: k("l") }),
      ["COUPON.RESERVEALL", "2", k("camp"), k("c3"), "z", "QTY", "2", "1", "LEDGER", k("l")],
    ],
    [() => g.campaignInfo(k("camp")), ["COUPON.INFO", k("camp")]],
    [() => g.claims(k("camp")), ["COUPON.CLAIMS", k("camp")]],
    [() => g.claims(k("camp"), { count: 5 }), ["COUPON.CLAIMS", k("camp"), "COUNT", "5"]],
  ];
  assert.equal(new Set(table.map(([, words]) => words[0])).size, METHODS.length);
  for (const [call, words] of table.filter(([, words]) => runs(words))) {
    assert.deepEqual(await sentWords(connection, call), [side.backend === "scripts" ? evalshaWords(words) : words]);
  }
}

/** The methods that need a campaign (COUPON.CREATE) to run. */
const CAMPAIGN_METHODS = new Set(["create", "reserve", "confirm", "release", "campaignInfo", "alter", "reclaim", "reserveAll", "claims"]);
const runsMethod = (side, method) => side.runs([commandName[method], ...(CAMPAIGN_METHODS.has(method) ? ["COUPON.CREATE"] : [])]);

/**
 * The same calls queued in a pipeline resolve what they resolve one by
 * one, and what the module resolves (scripts: on the module's server).
 */
async function pipelinesParseInOrder(side, tag, transaction) {
  const g = side.guard();
  const k = (name) => `{${tag}}:${name}`;
  const calls = (s) =>
    [
      ["incrcheck", k(`i${s}`), 2, 60, [1, 3]],
      ["incrcheck", k(`i${s}`), 2, 60, [1, 3]],
      ["slidecheck", k(`w${s}`), 1, 10, 1],
      ["distinct", k(`d${s}`), "m", 10, 1],
      ["decrclamp", k(`i${s}`), 10],
      ["issue", k(`s${s}`), "u", 1],
      ["issue", k(`s${s}`), "v", 1],
      ["revoke", k(`s${s}`), "u"],
      ["throttle", k(`t${s}`), 1, 1, 60],
      ["throttleAll", [[k(`t${s}`), 1, 1, 60], [k(`t2${s}`), 1, 1, 60]]],
      ["create", k(`c${s}`), 2, { hold: 50 }],
      ["reserve", k(`c${s}`), "u", { id: "x" }],
      ["confirm", k(`c${s}`), 1],
      ["reserve", k(`c${s}`), "v"],
      ["release", k(`c${s}`), 2],
      ["campaignInfo", k(`c${s}`)],
      ["alter", k(`c${s}`), { limit: 3 }],
      ["reclaim", k(`c${s}`)],
      ["create", k(`c2${s}`), 1],
      ["reserveAll", [k(`c${s}`), k(`c2${s}`)], "w"],
      ["claims", k(`c${s}`)],
    ].filter(([method]) => runsMethod(side, method));
  const oneByOne = async (target, s) => {
    const results = [];
    for (const [method, ...args] of calls(s)) results.push(await target[method](...args));
    return results;
  };
  const pipeline = calls("p").reduce((target, [method, ...args]) => target[method](...args), g.pipeline({ transaction }));
  assert.equal(pipeline.length, calls("p").length);
  const results = await pipeline.exec();
  sameUpToTime(results, await oneByOne(g, "s"), `pipeline (transaction: ${transaction})`);
  if (side.reference !== side.connection) {
    sameUpToTime(results, await oneByOne(guard(side.reference.client, { backend: "module" }), "m"), `pipeline (transaction: ${transaction}) and the module`);
  }
  if (results.length === 21) {
    assert.deepEqual(results[0], { current: 2, level: 1 });
    assert.equal(results[6], SOLD_OUT);
    assert.equal(results[10], true);
    assert.deepEqual([results[16], results[17]], [true, 0]);
    assert.deepEqual(results[19].reservations.map((r) => r.claim), [3, 1]);
    assert.equal(results.at(-1)[0].requestId, "x");
  }
  // A failing command: exec rejects with the library's own error.
  const failing = [
    ["campaignInfo", k("list")],
    ["incrcheck", k("list"), 1, 10, 5],
    ["decrclamp", k("list"), 1],
    ["throttle", k("list"), 1, 1, 60],
  ].find(([method]) => runsMethod(side, method));
  if (failing !== undefined) {
    for (const connection of new Set([side.connection, side.reference])) await connection.raw(["LPUSH", k("list"), "x"]);
    const [method, ...args] = failing;
    const pipeline = g.pipeline({ transaction });
    if (runsMethod(side, "incrcheck")) pipeline.incrcheck(k("ok"), 1, 10, 5);
    const error = await rejection(pipeline[method](...args).exec());
    const raw = await rejection(guard(side.reference.client, { backend: "module" })[method](...args));
    assert.equal(error.constructor, raw.constructor);
    assert.equal(error.message, raw.message);
  }
  assert.deepEqual(await g.pipeline({ transaction }).exec(), []);
}

// ---------------------------------------------------------------- standalone

/** The methods whose commands (or a campaign's, COUPON.CREATE) have no script yet. */
const noScriptYet = METHODS.filter((method) => !runsMethod({ runs: runsOnScripts }, method));

/** The backends under test: the module's on its server(s), scripts on those without it (when given). */
const backendsOf = (withModule, withoutModule) => [
  { backend: "module", at: withModule },
  ...(withoutModule ? [{ backend: "scripts", at: withoutModule }] : []),
];

/** A side of `backend` at `at`: for scripts, with a reference opened on the module's `withModule`. */
async function openSide(backend, open, at, withModule, options) {
  const connection = await open(at, options);
  return sideOf(backend, connection, backend === "scripts" ? await open(withModule, options) : undefined);
}

async function closeSide(side) {
  await side?.connection.close();
  if (side && side.reference !== side.connection) await side.reference.close();
}

describe(`${library} ${version} standalone`, () => {
  const variants = clients.resp3 ? [2, 3] : [undefined];
  for (const { backend, at } of backendsOf(standaloneAddress, standaloneNoModuleAddress)) {
    for (const resp of variants) {
      describe(`${backend}, ${resp ? `RESP${resp}` : "RESP2"}`, () => {
        let side;
        const tag = `${run}:s${resp ?? 2}:${backend}`;
        before(async () => {
          side = await openSide(backend, clients.standalone, at, standaloneAddress, { resp });
        });
        after(() => closeSide(side));
        it("every method resolves the raw reply it parses", () => resultsEqualRaw(side, tag));
        it("errors reject with the library's own error and the server's text", () => errorsAreTheClients(side, tag));
        it("options left out are not sent", () => optionsLeftOutAreNotSent(side, tag));
        it("QTY's errors are the server's", () => unitsErrorsAreTheServers(side, `${tag}:units`));
        it("the application's own commands share a transaction; CONFIRM answers by name", () => rawCommandsShareTheTransaction(side, `${tag}:raw`));
        it("an application's unknown command keeps an auto guard on the module", () => anApplicationsUnknownCommandKeepsTheModule(side, `${tag}:unknown`));
        it("withLease holds a slot while the work runs, renews it and releases it, also on a throw", async () => {
          if (!side.runs(["COUPON.CREATE", "COUPON.RENEW"])) return;
          const g = side.guard();
          const key = `{${tag}}:lease`;
          await g.create(key, 1, { hold: 1 });
          const result = await g.withLease(key, "w1", { hold: 1 }, async (lease) => {
            // Past the first end (1 s): renewed every third of it, still held.
            await new Promise((resolve) => setTimeout(resolve, 2200));
            assert.equal((await g.reserve(key, "w2")).claim, -2);
            return lease.claim;
          });
          assert.ok(result > 0);
          assert.equal((await g.campaignInfo(key)).held, 0);
          await assert.rejects(g.withLease(key, "w1", {}, async () => { throw new RangeError("work failed"); }), RangeError);
          assert.equal((await g.campaignInfo(key)).held, 0);
          let ran = false;
          await g.withLease(key, "w1", { hold: 30 }, async () => {
            await assert.rejects(g.withLease(key, "w2", {}, async () => { ran = true; }), (error) => error instanceof LeaseRefused && error.code === -2);
          });
          assert.equal(ran, false);
        });
        it("reset deletes a limiter's key, on either backend", async () => {
          const g = side.guard();
          const key = `{${tag}}:reset`;
          await g.throttle(key, 0, 1, 60, { block: 60 });
          assert.equal((await g.throttle(key, 0, 1, 60, { block: 60 })).retryAfter, 60);
          assert.equal(await g.reset(key), 1);
          assert.equal(await g.reset(key), 0);
          assert.equal((await g.throttle(key, 0, 1, 60)).limited, false);
        });
        it("pipelines parse in order", () => pipelinesParseInOrder(side, `${tag}:p`, false));
        it("transactions parse in order", () => pipelinesParseInOrder(side, `${tag}:t`, true));
        it("constants", () => {
          assert.equal(ALREADY_WON, -1);
          assert.equal(SOLD_OUT, -2);
        });
      });
    }
  }
  it("node-redis 4 in legacyMode", { skip: library !== "redis" || major !== 4 }, async () => {
    const legacy = await clients.standalone(standaloneAddress, { legacyMode: true });
    try {
      const side = sideOf("module", legacy);
      await resultsEqualRaw(side, `${run}:legacy`);
      await pipelinesParseInOrder(side, `${run}:legacy:p`, false);
      await pipelinesParseInOrder(side, `${run}:legacy:t`, true);
    } finally {
      await legacy.close();
    }
  });
  if (clients.resp3) {
    it("RESP2 and RESP3 give the same values", async () => {
      const two = await clients.standalone(standaloneAddress, { resp: 2 });
      const three = await clients.standalone(standaloneAddress, { resp: 3 });
      try {
        const key = `{${run}:resp}:camp`;
        const g2 = guard(two.client);
        const g3 = guard(three.client);
        await g2.create(key, 4, { peruser: 2 });
        await g3.reserve(key, "u1", { id: "r1" });
        await g2.issue(key, "u2", 4);
        assert.deepEqual(await g3.campaignInfo(key), await g2.campaignInfo(key));
        assert.deepEqual(await g3.claims(key), await g2.claims(key));
        assert.deepEqual(await g3.throttleAll([[`${key}:t`, 1, 1, 60]], { quantity: 0 }), await g2.throttleAll([[`${key}:t`, 1, 1, 60]], { quantity: 0 }));
        assert.deepEqual(
          await g3.pipeline().campaignInfo(key).claims(key).exec(),
          await g2.pipeline().campaignInfo(key).claims(key).exec(),
        );
      } finally {
        await two.close();
        await three.close();
      }
    });
  }
});

describe(`${library} ${version} scripts backend`, { skip: standaloneNoModuleAddress === undefined }, () => {
  let bare;
  let side;
  before(async () => {
    bare = await clients.standalone(standaloneNoModuleAddress);
    side = sideOf("scripts", bare, await clients.standalone(standaloneAddress));
  });
  after(() => closeSide(side));

  if (noScriptYet.length > 0) console.log(`no script yet: ${noScriptYet.join(", ")}`);
  for (const method of noScriptYet) {
    it(`${method}: no script yet`, { skip: "no script yet" }, () => {});
  }
  it("a method without its script rejects, saying so", { skip: noScriptYet.length === 0 && "every method has its script" }, async () => {
    const method = noScriptYet.find((name) => !scripts.has(commandName[name]));
    if (method === undefined) return; // only COUPON.CREATE is missing: those methods' own scripts exist
    const [call] = badCalls(`${run}:none`).find(([, words]) => words[0].toLowerCase() === commandName[method]);
    const error = await rejection(call(guard(bare.client, { backend: "scripts" })));
    assert.match(error.message, new RegExp(`^redis-guard: no script for ${commandName[method].toUpperCase().replace(".", "\\.")} `));
  });

  it('"module" on a server without the module rejects with the server\'s unknown-command error, as the package\'s', async () => {
    const key = `{${run}:nomod}:k`;
    const g = guard(bare.client, { backend: "module" });
    const raw = await rejection(bare.raw(["MON.INCRCHECK", key, 1, 10, 5]));
    assert.match(raw.message, /^ERR unknown command/);
    for (const call of [() => g.incrcheck(key, 1, 10, 5), () => g.pipeline().incrcheck(key, 1, 10, 5).exec()]) {
      const error = await rejection(call());
      assert.equal(error.constructor, raw.constructor);
      assert.ok(error instanceof GuardError);
      assert.equal(error.message, raw.message.replace(/^ERR /, ""));
    }
  });

  /** The first method that runs here, with calls that change nothing another would see. */
  const firstRunnable = () => METHODS.find((method) => runsMethod(side, method));

  it('"auto" on a server without the module switches to scripts once and warns once', { skip: noScriptYet.length === METHODS.length && "no script yet" }, async () => {
    const warnings = [];
    const listen = (warning) => warning.code === "REDIS_GUARD_SCRIPTS" && warnings.push(warning);
    process.on("warning", listen);
    try {
      const tag = `${run}:auto`;
      const { setup, calls } = routedCalls(tag);
      if (side.runs(["COUPON.CREATE"])) for (const words of setup) await side.raw(words);
      const method = firstRunnable();
      await resetStats([bare]);
      const g = guard(bare.client);
      const made = await callEveryWay(g, calls[method]);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(warnings.length, 1, warnings.map(String).join("\n"));
      assert.match(warnings[0].message, /this guard runs the commands as Lua scripts/);
      const [figures] = await measure([bare], "evalsha");
      // One unknown command, then every call (the first again) as a script.
      assert.equal(figures.errors, 1);
      assert.equal(figures.calls, made);
      // A fresh "auto" guard whose first call is a pipeline, or a transaction (EXECABORT), switches there.
      await pipelinesParseInOrder(sideOf("auto", bare, side.reference), `${tag}:p`, false);
      await pipelinesParseInOrder(sideOf("auto", bare, side.reference), `${tag}:t`, true);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(warnings.length, 3);
    } finally {
      process.off("warning", listen);
    }
  });

  it("NOSCRIPT after SCRIPT FLUSH: the script is loaded again and the call runs once more, plain, pipelined and in a transaction", { skip: noScriptYet.length === METHODS.length && "no script yet" }, async () => {
    const tag = `${run}:flush`;
    const { setup, calls } = routedCalls(tag);
    if (side.runs(["COUPON.CREATE"])) for (const words of setup) await side.raw(words);
    const method = firstRunnable();
    const g = guard(bare.client, { backend: "scripts" });
    await calls[method](g, 1000);
    const cost = async (call) => {
      await bare.raw(["SCRIPT", "FLUSH"]);
      await resetStats([bare]);
      await call();
      const [{ calls: evalshas, rejected, loads }] = await measure([bare], "evalsha");
      return { evalshas, noscript: rejected, loads };
    };
    const plain = await cost(() => calls[method](g, 0));
    assert.deepEqual(plain, { evalshas: 2, noscript: 1, loads: 1 });
    let i = 1;
    const queued = (transaction) => async () => {
      const pipeline = g.pipeline({ transaction });
      for (let n = 0; n < N; n++) calls[method](pipeline, i++);
      await pipeline.exec();
    };
    const pipelined = await cost(queued(false));
    assert.deepEqual(pipelined, { evalshas: 2 * N, noscript: N, loads: 1 });
    // Loaded inside the MULTI: no NOSCRIPT.
    const transaction = await cost(queued(true));
    assert.deepEqual(transaction, { evalshas: N, noscript: 0, loads: 1 });
    console.log(`ROUTING ${JSON.stringify({ library, version, backend: "scripts", method, "after SCRIPT FLUSH": { plain, pipelined, transaction } })}`);
  });

  it("a pipeline after SCRIPT FLUSH keeps its calls in order: a throttle, then a refund of the same key", async () => {
    // The guard has loaded CL.THROTTLE's script, not CL.REFUND's. Sending
    // the throttle answered NOSCRIPT again after the refund would run the
    // refund first (on nothing) and leave the request consumed.
    const tag = `{${run}:order}`;
    const g = guard(bare.client, { backend: "scripts" });
    await g.pipeline().throttle(`${tag}:warm`, 0, 1, 60).exec();
    await bare.raw(["SCRIPT", "FLUSH"]);
    const [taken, given] = await g.pipeline().throttle(`${tag}:cell`, 0, 1, 60).refund(`${tag}:cell`, 0, 1, 60, 1).exec();
    assert.deepEqual([taken.limited, taken.remaining, given.remaining], [false, 0, 1]);
    const peek = await g.throttle(`${tag}:cell`, 0, 1, 60, 0);
    assert.equal(peek.remaining, 1, "the refund ran before the throttle");
  });

  it("NOSCRIPT after a restart: the guard loads the script again, runs the call once more and continues the counter the AOF kept", async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "guard-restart-"));
    const start = async () => {
      const server = spawn(
        process.env.GUARD_SERVER ?? "redis-server",
        ["--port", port, "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes", "--save", "", "--rename-command", "MODULE", "", "--rename-command", "COMMAND", ""].map(String),
        { stdio: "ignore" },
      );
      for (let i = 0; i < 200 && !(await answers(port)); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      return server;
    };
    const stopped = (server) => new Promise((resolve) => (server.exitCode !== null ? resolve() : server.once("exit", resolve)));
    let server = await start();
    const connection = await clients.standalone({ host: "127.0.0.1", port });
    try {
      const g = guard(connection.client, { backend: "scripts" });
      const key = `{${run}:restart}:k`;
      for (let i = 1; i <= 3; i++) assert.deepEqual(await g.incrcheck(key, 1, 60, 5), { current: i, level: 0 });
      await connection.raw(["SHUTDOWN"]).catch(() => {});
      await stopped(server);
      server = await start();
      assert.deepEqual(await g.incrcheck(key, 1, 60, 5), { current: 4, level: 0 });
      const [figures] = await measure([connection], "evalsha");
      assert.deepEqual({ calls: figures.calls, noscript: figures.rejected, loads: figures.loads }, { calls: 2, noscript: 1, loads: 1 });
    } finally {
      await connection.close();
      server.kill("SIGKILL");
      await stopped(server);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------- cluster

/** Admin connections to every node, and what they measure. */
async function nodesOf(addresses) {
  const nodes = [];
  for (const address of addresses) {
    const connection = await clients.standalone(address);
    nodes.push({ ...address, ...connection, id: String(await connection.raw(["CLUSTER", "MYID"])) });
  }
  return nodes;
}

function parseInfo(text, prefix) {
  const fields = {};
  for (const line of String(text).split(/\r?\n/)) {
    if (!line.startsWith(prefix)) continue;
    const [name, rest] = line.slice(prefix.length).split(":");
    fields[name] = Object.fromEntries(rest.split(",").map((pair) => pair.split("=")).map(([k, v]) => [k, Number(v)]));
  }
  return fields;
}

async function ownerOf(nodes, key) {
  const slot = Number(await nodes[0].raw(["CLUSTER", "KEYSLOT", key]));
  const ranges = await nodes[0].raw(["CLUSTER", "SLOTS"]);
  const range = ranges.find(([start, end]) => start <= slot && slot <= end);
  const port = Number(range[2][1]);
  return { slot, owner: nodes.find((node) => node.port === port) };
}

/** A free loopback port, as the operating system hands one out. */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
    probe.on("error", reject);
  });
}

/** Whether a server answers on `port` (a PING, read raw). */
function answers(port) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
    const answer = (pong) => {
      socket.destroy();
      resolve(pong);
    };
    socket.setTimeout(500, () => answer(false));
    socket.on("data", (data) => answer(String(data).startsWith("+PONG")));
    socket.on("error", () => answer(false));
  });
}

/** A node's command and error counts now; `measure` counts from here on.
 * CONFIG RESETSTAT is not used: the server without the module has CONFIG
 * renamed away, as managed services do. */
async function resetStats(nodes) {
  for (const node of nodes) node.baseline = await statsOf(node);
}

async function statsOf(node) {
  return {
    stats: parseInfo(await node.raw(["INFO", "commandstats"]), "cmdstat_"),
    errors: parseInfo(await node.raw(["INFO", "errorstats"]), "errorstat_"),
  };
}

/** What one snapshot says of `command`, SCRIPT LOADs, GETKEYS, MOVED/ASK and errors. */
function figuresOf({ stats, errors }, command) {
  const mine = stats[command] ?? {};
  return {
    calls: mine.calls ?? 0,
    rejected: (mine.rejected_calls ?? 0) + (mine.failed_calls ?? 0),
    loads: (stats["script|load"] ?? stats.script)?.calls ?? 0,
    getkeys: Object.entries(stats)
      .filter(([name]) => name === "command" || name.startsWith("command|getkeys"))
      .reduce((sum, [, { calls }]) => sum + (calls ?? 0), 0),
    moved: (errors.MOVED?.count ?? 0) + (errors.ASK?.count ?? 0),
    errors: Object.values(errors).reduce((sum, { count }) => sum + (count ?? 0), 0),
  };
}

/** Per node since its `resetStats`: calls of `command` (rejected and failed too), SCRIPT LOADs, GETKEYS, MOVED/ASK, errors. */
async function measure(nodes, command) {
  const figures = [];
  for (const node of nodes) {
    const now = figuresOf(await statsOf(node), command);
    const before = figuresOf(node.baseline ?? { stats: {}, errors: {} }, command);
    figures.push({ port: node.port, ...Object.fromEntries(Object.entries(now).map(([name, n]) => [name, n - before[name]])) });
  }
  return figures;
}

/** One method's N calls, each with fresh arguments where a call changes state. */
function routedCalls(tag) {
  const k = (name) => `{${tag}}:${name}`;
  const camp = k("camp");
  return {
    setup: [["COUPON.CREATE", camp, 1000, "PERUSER", 1000], ["COUPON.CREATE", k("camp2"), 1000, "PERUSER", 1000]],
    key: camp,
    calls: {
      incrcheck: (t, i) => t.incrcheck(k("i"), 1, 60, 1000 + i),
      slidecheck: (t) => t.slidecheck(k("w"), 1, 60, 1000),
      distinct: (t, i) => t.distinct(k("d"), `m${i}`, 60, 1000),
      decrclamp: (t) => t.decrclamp(k("i"), 1),
      issue: (t, i) => t.issue(k("s"), `u${i}`, 1000),
      revoke: (t, i) => t.revoke(k("s"), `u${i}`),
      throttle: (t) => t.throttle(k("t"), 100, 100, 60),
      throttleAll: (t) => t.throttleAll([[k("t"), 100, 100, 60], [k("t2"), 100, 100, 60]]),
      refund: (t) => t.refund(k("t"), 100, 100, 60, 1),
      quota: (t) => t.quota(k("q"), 1000, "day", { tz: "Asia/Seoul" }),
      create: (t, i) => t.create(k(`c${i}`), 5),
      reserve: (t, i) => t.reserve(camp, `u${i}`),
      confirm: (t) => t.confirm(camp, 999999),
      release: (t) => t.release(camp, 999999),
      renew: (t) => t.renew(camp, 999999),
      campaignInfo: (t) => t.campaignInfo(camp),
      claims: (t) => t.claims(camp, { count: 1 }),
      alter: (t, i) => t.alter(camp, { limit: 2000 + i }),
      reclaim: (t) => t.reclaim(camp),
      reserveAll: (t, i) => t.reserveAll([camp, k("camp2")], `u${i}`),
    },
  };
}

/** N plain calls, a pipeline of N and a transaction of N of one method. */
async function callEveryWay(g, call) {
  let i = 0;
  for (let n = 0; n < N; n++) await call(g, i++);
  for (const transaction of [false, true]) {
    const pipeline = g.pipeline({ transaction });
    for (let n = 0; n < N; n++) call(pipeline, i++);
    await pipeline.exec();
  }
  return i;
}

/** `calls` calls and `loads` SCRIPT LOADs on the owner, nothing elsewhere, no GETKEYS, no MOVED. */
function assertRouted(figures, owner, method, calls, loads = 0) {
  const summary = { method, calls: 0, loads: 0, elsewhere: 0, getkeys: 0, moved: 0 };
  for (const node of figures) {
    summary.getkeys += node.getkeys;
    summary.moved += node.moved;
    if (node.port === owner.port) {
      summary.calls += node.calls;
      summary.loads += node.loads;
      assert.equal(node.rejected, 0, `${method}: rejected on the owner`);
    } else {
      summary.elsewhere += node.calls + node.rejected + node.loads;
    }
  }
  assert.deepEqual(summary, { method, calls, loads, elsewhere: 0, getkeys: 0, moved: 0 }, JSON.stringify(figures));
  return summary;
}

for (const { backend, at } of backendsOf(clusterAddresses, clusterNoModuleAddresses.length > 0 && clusterNoModuleAddresses)) {
  describe(`${library} ${version} cluster, ${backend}`, { skip: clusterAddresses.length === 0 }, () => {
    let nodes;
    let side;
    let connection;
    const run = `${library}${major}:${process.pid}:${backend}`;
    // What one call costs the servers: the module's command, or EVALSHA.
    const measured = (method) => (backend === "scripts" ? "evalsha" : commandName[method]);
    const runsHere = (commands) => backend === "module" || runsOnScripts(commands);
    // Scripts: one SCRIPT LOAD, on the owner, where measured (a
    // transaction's, inside its MULTI; a fresh guard's first call).
    const scriptLoads = backend === "scripts" ? 1 : 0;
    before(async () => {
      nodes = await nodesOf(at);
      side = await openSide(backend, clients.cluster, at, clusterAddresses);
      connection = side.connection;
    });
    after(async () => {
      await closeSide(side);
      for (const node of nodes ?? []) await node.close();
    });

    it("every method resolves the raw reply it parses", () => resultsEqualRaw(side, `${run}:c`));
    it("errors reject with the library's own error and the server's text", () => errorsAreTheClients(side, `${run}:ce`));
    it("pipelines parse in order", () => pipelinesParseInOrder(side, `${run}:cp`, false));
    it("transactions parse in order", () => pipelinesParseInOrder(side, `${run}:ct`, true));

    it("RESP3: every method resolves the raw reply it parses", { skip: !clients.resp3 }, async () => {
      const three = await openSide(backend, clients.cluster, at, clusterAddresses, { resp: 3 });
      try {
        await resultsEqualRaw(three, `${run}:c3`);
        await pipelinesParseInOrder(three, `${run}:c3p`, false);
      } finally {
        await closeSide(three);
      }
    });

    it("a MOVED is counted where the check looks (the check can fail)", { skip: backend !== "module" }, async () => {
      const key = `{${run}:wrong}:k`;
      const { owner } = await ownerOf(nodes, key);
      const other = nodes.find((node) => node !== owner);
      await resetStats(nodes);
      const error = await rejection(other.raw(["MON.INCRCHECK", key, 1, 10, 5]));
      assert.match(error.message, /^MOVED /);
      const figures = await measure(nodes, "mon.incrcheck");
      assert.equal(figures.find((node) => node.port === other.port).moved, 1);
      assert.throws(() => assertRouted(figures, owner, "incrcheck", 0));
    });

    it("a raw call through the cluster client is not routed by every library", { skip: backend !== "module" }, async () => {
      const key = `{${run}:raw}:k`;
      const { owner } = await ownerOf(nodes, key);
      await resetStats(nodes);
      const calls = 12;
      let failed = 0; // node-redis retries a MOVED on another random node, at most 16 times
      for (let i = 0; i < calls; i++) {
        try {
          if (library === "ioredis") await connection.client.call("MON.INCRCHECK", key, 1, 60, 1000);
          else await connection.client.sendCommand(undefined, false, ["MON.INCRCHECK", key, "1", "60", "1000"]);
        } catch (error) {
          assert.match(error.message, /^MOVED /);
          failed++;
        }
      }
      const figures = await measure(nodes, "mon.incrcheck");
      const moved = figures.reduce((sum, node) => sum + node.moved, 0);
      const elsewhere = figures.filter((node) => node.port !== owner.port).reduce((sum, node) => sum + node.calls + node.rejected, 0);
      console.log(`ROUTING ${JSON.stringify({ library, version, method: "raw call, no key given", calls, failed, moved, elsewhere })}`);
      assert.ok(moved + elsewhere > 0, JSON.stringify(figures));
      assert.throws(() => assertRouted(figures, owner, "incrcheck", calls));
      if (library === "redis") {
        // Routed by hand, node-redis's raw call is one command on the owner.
        await resetStats(nodes);
        for (let i = 0; i < calls; i++) await connection.client.sendCommand(key, false, ["MON.INCRCHECK", key, "1", "60", "1000"]);
        const summary = assertRouted(await measure(nodes, "mon.incrcheck"), owner, "raw sendCommand(firstKey)", calls);
        console.log(`ROUTING ${JSON.stringify({ library, version, ...summary })}`);
      }
    });

    it("every method goes to its key's owner as one command, plain, pipelined and in a transaction", async () => {
      const g = side.guard();
      for (const method of METHODS.filter((name) => runsMethod(side, name))) {
        const tag = `${run}:route:${method}`;
        const { setup, key, calls } = routedCalls(tag);
        if (side.runs(["COUPON.CREATE"])) for (const words of setup) await side.raw(words);
        const { owner } = await ownerOf(nodes, key);
        // Scripts: the first call on a node loads the script there (counted in the NOSCRIPT test).
        if (backend === "scripts") await calls[method](g, 1000);
        await resetStats(nodes);
        const made = await callEveryWay(g, calls[method]);
        const summary = assertRouted(await measure(nodes, measured(method)), owner, method, made, scriptLoads);
        console.log(`ROUTING ${JSON.stringify({ library, version, backend, ...summary })}`);
      }
    });

    it("ioredis's keyPrefix: every key prefixed, routed by the prefixed key", { skip: library !== "ioredis" || (!runsHere(["CL.THROTTLE", "MON.INCRCHECK", "CL.THROTTLEALL", "COUPON.CREATE", "COUPON.RESERVEALL"]) && "no script yet") }, async () => {
      const prefix = `${run}:pfx:`;
      const prefixed = await clients.cluster(at, { keyPrefix: prefix });
      try {
        const g = guard(prefixed.client, { backend });
        // No hash tag: the prefix changes the slot.
        const { owner } = await ownerOf(nodes, `${prefix}api`);
        await resetStats(nodes);
        for (let i = 0; i < N; i++) await g.throttle("api", 10, 10, 60);
        const pipeline = g.pipeline();
        for (let i = 0; i < N; i++) pipeline.throttle("api", 10, 10, 60);
        await pipeline.exec();
        assertRouted(await measure(nodes, measured("throttle")), owner, "throttle", 2 * N, scriptLoads);
        assert.equal(await connection.raw(["EXISTS", `${prefix}api`]), 1);
        assert.equal(await connection.raw(["EXISTS", "api"]), 0);
        assert.deepEqual(await g.incrcheck("{u}:orders", 1, 60, 1, { alert: "{u}:alerts" }), { current: 1, level: 1 });
        assert.equal(await connection.raw(["XLEN", `${prefix}{u}:alerts`]), 1);
        assert.equal((await g.throttleAll([["{u}:a", 1, 1, 60], ["{u}:b", 1, 1, 60]])).limited, false);
        assert.equal(await connection.raw(["EXISTS", `${prefix}{u}:a`, `${prefix}{u}:b`]), 2);
        // A ledger and a cart's keys are keys too.
        assert.equal(await g.create("{u}:camp", 2, { ledger: "{u}:ledger" }), true);
        assert.equal(await g.create("{u}:camp2", 2), true);
        assert.equal((await g.reserveAll(["{u}:camp", "{u}:camp2"], "x", { ledger: "{u}:ledger" })).reserved, true);
        assert.equal(await connection.raw(["XLEN", `${prefix}{u}:ledger`]), 1);
        assert.equal(await connection.raw(["EXISTS", `${prefix}{u}:camp`, `${prefix}{u}:camp2`, "{u}:ledger"]), 2);
      } finally {
        await prefixed.close();
      }
    });

    it("after the key's slot moves, the calls follow it", { skip: !runsHere(["MON.INCRCHECK", "COUPON.CREATE", "COUPON.RESERVE", "COUPON.INFO"]) && "no script yet" }, async () => {
      const g = side.guard();
      const key = `{${run}:move}:orders`;
      const camp = `{${run}:move}:camp`;
      assert.deepEqual(await g.incrcheck(key, 1, 600, 100), { current: 1, level: 0 });
      await g.create(camp, 10);
      await g.reserve(camp, "u1");
      const { slot, owner } = await ownerOf(nodes, key);
      const target = nodes.find((node) => node !== owner);
      // The classic resharding steps, by hand.
      await target.raw(["CLUSTER", "SETSLOT", slot, "IMPORTING", owner.id]);
      await owner.raw(["CLUSTER", "SETSLOT", slot, "MIGRATING", target.id]);
      const keys = (await owner.raw(["CLUSTER", "GETKEYSINSLOT", slot, 1000])).map(String);
      await owner.raw(["MIGRATE", target.host, target.port, "", 0, 5000, "KEYS", ...keys]);
      for (const node of [target, owner, ...nodes.filter((n) => n !== owner && n !== target)]) {
        await node.raw(["CLUSTER", "SETSLOT", slot, "NODE", target.id]);
      }
      // The next calls succeed: the client follows the redirection.
      assert.deepEqual(await g.incrcheck(key, 1, 600, 100), { current: 2, level: 0 });
      assert.equal((await g.reserve(camp, "u2")).claim, 2);
      // Once the client has refreshed its map: no MOVED, every call on the new owner.
      let figures;
      let summary;
      for (let attempt = 0; attempt < 50; attempt++) {
        await resetStats(nodes);
        const made = await callEveryWay(g, (t) => t.incrcheck(key, 1, 600, 100));
        figures = await measure(nodes, measured("incrcheck"));
        try {
          summary = assertRouted(figures, target, "incrcheck", made, scriptLoads);
          break;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      assert.ok(summary, `never settled on the new owner: ${JSON.stringify(figures)}`);
      console.log(`ROUTING ${JSON.stringify({ library, version, backend, ...summary, method: "incrcheck after the slot moved" })}`);
      assert.equal((await g.campaignInfo(camp)).claims, 2);
    });
  });
}
