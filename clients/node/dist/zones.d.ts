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
/** `name` with its rules around `now` (unix seconds; default the clock, from a table renewed every 6 days). */
export declare function encoded(name: string, now?: number): string;
