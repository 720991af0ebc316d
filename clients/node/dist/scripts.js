"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.usedPrelude = usedPrelude;
exports.assembled = assembled;
exports.scriptOf = scriptOf;
exports.evalsha = evalsha;
exports.scriptLoad = scriptLoad;
exports.isNoScript = isNoScript;
exports.namesModuleCommand = namesModuleCommand;
/**
 * The scripts backend's side of a call: each command's Lua script
 * (the part of `prelude.lua` it uses, then `<command>.lua`, one copy in
 * the repository's clients/scripts), and a
 * described call turned into its `EVALSHA` (KEYS: the command's keys in
 * order; ARGV: its other arguments in order) or its script's `SCRIPT LOAD`.
 */
const node_crypto_1 = require("node:crypto");
const node_fs_1 = require("node:fs");
const path = require("node:path");
const zones_1 = require("./zones");
/** The commands whose `TZ` zone a script gets with its rules. */
const ZONED = new Set(["MON.INCRCHECK", "CL.QUOTA"]);
const packageRoot = path.join(__dirname, "..");
/**
 * The package's own `scripts/` (an npm tarball: `prepack` copies them in),
 * else the repository's `clients/scripts` beside the package (a checkout,
 * or `npm install <checkout>/clients/node`, which links to it).
 */
const folder = [path.join(packageRoot, "scripts"), path.join(packageRoot, "..", "scripts")].find((dir) => (0, node_fs_1.existsSync)(dir));
/**
 * Each script as first read, by its command's name as the caller spells it
 * (the package: upper case), so that a call finds it without first
 * lowering the name. A process reads a file once per spelling.
 */
const scripts = new Map();
let prelude;
/** A top-level declaration of the prelude starts a line with `local`. */
const DECLARATION = /^local /gm;
const NAMES = /^local (?:function )?([\w, ]+)/;
const WORD = /[A-Za-z_]\w*/g;
/**
 * The declarations of `prelude` that `script` uses, directly or through
 * others, in their order (a local can only name those before it): every
 * call runs a script's top level, and each function it makes costs (the
 * whole prelude took a call from 5 to 25 µs). clients/scripts/README.md
 * says the rule; the tests hold the three copies (here,
 * redis_guard/scripts.py, tests/common/scripts.rs) to one text.
 */
function usedDeclarations(prelude, script) {
    const starts = [...prelude.matchAll(DECLARATION)].map((m) => m.index ?? 0);
    const chunks = starts.map((start, i) => prelude.slice(start, starts[i + 1] ?? prelude.length));
    const needed = new Set(script.match(WORD) ?? []);
    const kept = [];
    for (const chunk of chunks.reverse()) {
        const names = NAMES.exec(chunk)?.[1].split(",").map((name) => name.trim()) ?? [];
        if (names.some((name) => needed.has(name))) {
            kept.push(chunk);
            for (const word of chunk.match(WORD) ?? [])
                needed.add(word);
        }
    }
    return kept.reverse();
}
/** The declarations of `prelude` that `script` uses, as one text (see `usedDeclarations`). */
function usedPrelude(prelude, script) {
    return usedDeclarations(prelude, script).join("");
}
/** The line after which a script's prelude goes; above it, the common call's fast path. */
const MARKER = "-- @prelude\n";
/**
 * What the server runs for `script`: the part of `prelude` it uses,
 * first; with a line `-- @prelude`, only the part that the lines above it
 * use goes first, the rest right after it (a call that returns above it
 * makes none of the rest's functions).
 */
function assembled(prelude, script) {
    const at = script.indexOf("\n" + MARKER);
    if (at < 0)
        return usedPrelude(prelude, script) + script;
    const after = at + 1 + MARKER.length;
    const first = usedDeclarations(prelude, script.slice(0, after));
    const rest = usedDeclarations(prelude, script).filter((chunk) => !first.includes(chunk));
    return first.join("") + script.slice(0, after) + rest.join("") + script.slice(after);
}
/** The script of command `name` (e.g. `MON.INCRCHECK`); throws when the package has none. */
function scriptOf(name) {
    let script = scripts.get(name);
    if (script === undefined) {
        const command = name.toLowerCase();
        const file = folder === undefined ? undefined : path.join(folder, `${command}.lua`);
        if (file === undefined || !(0, node_fs_1.existsSync)(file)) {
            throw new Error(`redis-guard: no script for ${name.toUpperCase()} (looked for ${file ?? `${command}.lua beside the package`})`);
        }
        prelude ?? (prelude = (0, node_fs_1.readFileSync)(path.join(folder, "prelude.lua"), "utf8"));
        const source = assembled(prelude, (0, node_fs_1.readFileSync)(file, "utf8"));
        script = { source, sha: (0, node_crypto_1.createHash)("sha1").update(source).digest("hex"), zoned: ZONED.has(command.toUpperCase()) };
        scripts.set(name, script);
    }
    return script;
}
/**
 * `spec` as `EVALSHA sha numkeys keys... argv...`, routed and parsed as the
 * command is. Runs on every call of the scripts backend: one pass over the
 * arguments into one array.
 */
function evalsha(spec, script) {
    const { args, keyIndexes } = spec;
    const words = ["EVALSHA", script.sha, String(keyIndexes.length)];
    for (const i of keyIndexes)
        words.push(args[i]);
    let previous; // the ARGV word before this one
    for (let i = 1; i < args.length; i++) {
        if (keyIndexes.includes(i))
            continue;
        const word = args[i];
        words.push(script.zoned && previous !== undefined && isZoneWord(previous) ? (0, zones_1.encoded)(String(word)) : word);
        previous = word;
    }
    return {
        args: words,
        key: spec.key,
        keyIndexes: keyIndexes.map((_, n) => 3 + n),
        // A script may write: never one for a replica.
        readonly: false,
        parse: spec.parse,
    };
}
/** `TZ`, in any case: the next word is a zone. */
function isZoneWord(word) {
    return word.length === 2 && String(word).toUpperCase() === "TZ";
}
/** `SCRIPT LOAD` of `script`, sent to the node that owns `key` (the one that will run it). */
function scriptLoad(script, key) {
    return { args: ["SCRIPT", "LOAD", script.source], key, keyIndexes: [], readonly: false, parse: (sha) => sha };
}
/** The server no longer has the script (a failover, a restart, SCRIPT FLUSH): the call did not run. */
function isNoScript(reply) {
    return reply instanceof Error && reply.message.startsWith("NOSCRIPT");
}
/**
 * The server has no such command, and it is one of `specs`' own (the
 * module's): the module is not loaded, the calls did not run. (An
 * application's unknown command queued beside them says nothing of the
 * module.)
 */
function namesModuleCommand(reply, specs) {
    if (!(reply instanceof Error))
        return false;
    const named = /^(?:ERR )?unknown command [`']([^`']*)[`']/.exec(reply.message);
    if (named === null)
        return false;
    const name = named[1].toUpperCase();
    return specs.some((spec) => !spec.raw && String(spec.args[0]).toUpperCase() === name);
}
