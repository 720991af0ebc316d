//! `GUARD.TEST-PANIC key`: registered only when the module is loaded with
//! `test-panic-command`, to prove that a panic cannot take Redis down.

use crate::redis::{callback, Arg, ArgDoc, Command, Ctx, Handler, KeyAccess, Keys};
use crate::reply::CommandResult;

pub const COMMAND: Command = Command {
    name: c"guard.test-panic",
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: 2,
    keys: Keys::One(KeyAccess::UPDATE),
    summary: c"Test only: panics inside a command handler.",
    complexity: c"O(1)",
    since: c"0.1.0",
    args: &[ArgDoc::KEY],
    callback: callback::<TestPanic>,
};

struct TestPanic;

impl Handler for TestPanic {
    fn run(_ctx: Ctx<'_>, _args: &[Arg<'_>]) -> CommandResult {
        panic!("guard.test-panic: a deliberate panic");
    }
}
