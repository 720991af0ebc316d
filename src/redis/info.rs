//! The module's INFO section (named after the module: `INFO guard`).

use redis_module::{InfoContext, RedisResult};
use redis_module_macros::info_command_handler;

use crate::stats;

/// Prints every counter of [`stats::FIELDS`] as `guard_<name>`. The
/// builder API can only add `guard_<name>` sections, hence the deprecated
/// calls that address the module's own section.
#[info_command_handler]
#[allow(deprecated)]
fn info(ctx: &InfoContext, _for_crash_report: bool) -> RedisResult<()> {
    ctx.add_info_section(None);
    for (name, counter) in stats::FIELDS {
        // INFO prints signed 64-bit integers; counters saturate below that.
        ctx.add_info_field_long_long(name, i64::try_from(counter.get()).unwrap_or(i64::MAX));
    }
    Ok(())
}
