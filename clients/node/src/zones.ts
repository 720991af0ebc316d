/**
 * A time zone as the scripts backend sends it. Lua has no zone data, so a
 * `TZ` zone goes to a script with its rules, worked out here from the
 * runtime's own zone data (`Intl`): `name|from|to|offset|t1:o1|t2:o2...`,
 * the UTC offset in seconds before t1, then from each change on (UTC
 * seconds), from a day before now to 40 days after. A script refuses
 * rules that do not cover its server's clock and the month after it. A
 * name `Intl` does not know goes without any `|`, which the script refuses
 * as the module refuses an unknown zone.
 */

const BEFORE = 86400;
const AFTER = 40 * 86400;
const STEP = 3600;
/** Rules serve 6 days before they are worked out again (they cover 40 days ahead). */
const FRESH = 6 * 86400;
/** An IANA name (`Asia/Seoul`, `Etc/GMT+5`), not one of the offsets `Intl` also takes. */
const IANA = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

const made = new Map<string, { at: number; text: string }>();
/** Bounds the table against callers who spell zones in ever new cases. */
const KEPT = 1024;

/** `name` with its rules around `now` (unix seconds; default the clock, from a table renewed every 6 days). */
export function encoded(name: string, now?: number): string {
  const at = now ?? Math.floor(Date.now() / 1000);
  const kept = now === undefined ? made.get(name) : undefined;
  if (kept !== undefined && at - kept.at < FRESH) return kept.text;
  const format = formatIn(name);
  // An unknown name goes without any "|": no caller's text passes for rules.
  const text = format === undefined ? name.split("|").join("") : rules(name, format, at);
  if (now === undefined) {
    if (made.size >= KEPT) made.clear();
    made.set(name, { at, text });
  }
  return text;
}

function formatIn(name: string): Intl.DateTimeFormat | undefined {
  if (!IANA.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat("en-US", {
      timeZone: name, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric",
      hour: "numeric", minute: "numeric", second: "numeric",
    });
  } catch {
    return undefined;
  }
}

/** The zone's UTC offset (s) at `t` (unix s): its wall clock read as if it were UTC, less `t`. */
function offset(format: Intl.DateTimeFormat, t: number): number {
  const field: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(t * 1000))) field[part.type] = Number(part.value);
  const wall = Date.UTC(field.year, field.month - 1, field.day, field.hour % 24, field.minute, field.second) / 1000;
  return wall - t;
}

function rules(name: string, format: Intl.DateTimeFormat, now: number): string {
  const start = now - BEFORE;
  const end = now + AFTER;
  const parts = [name, String(start), String(end), String(offset(format, start))];
  for (let t = start; t < end; t += STEP) {
    if (offset(format, t + STEP) === offset(format, t)) continue;
    // The change's second: the first with the new offset.
    let [before, after] = [t, t + STEP];
    while (after - before > 1) {
      const middle = Math.floor((before + after) / 2);
      if (offset(format, middle) === offset(format, before)) before = middle;
      else after = middle;
    }
    parts.push(`${after}:${offset(format, after)}`);
  }
  return parts.join("|");
}
