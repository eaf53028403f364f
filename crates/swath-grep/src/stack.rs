//! Reading and compiling patterns nested thousands of groups deep: how deep a pattern may
//! nest ([`group_opens`]), and a thread whose stack holds its recursion
//! ([`with_stack_for`]). The regex crate's nesting limit sits here too.

/// The regex crate's nesting limit: a GNU group becomes up to a few nested groups once
/// translated, and GNU reads groups up to [`crate::pattern::MAX_NESTING`] deep.
pub(crate) const NEST_LIMIT: u32 = (crate::pattern::MAX_NESTING * 4 + 64) as u32;

/// Patterns that open at most this many groups are read and compiled on the calling thread
/// (any thread's stack holds them: a test thread has 2 MiB).
const SHALLOW_GROUPS: usize = 256;

/// Stack for each level of nesting when a pattern is read and compiled: swath's readers, the
/// regex crate's compiler and glibc's `re_compile_pattern` all recurse once or more a level.
/// Measured in the tests' build (opt-level 1), 12,000 levels deep: plain groups need 1 KiB a
/// level, alternations of concatenations with repetitions (`(b|c*` ... `)*`) under -i -w -o
/// the most found, 4 KiB; this is twice that.
const STACK_PER_LEVEL: usize = 8 << 10;

/// Stack beside the levels: what the callers use, and repetitions nested in one level
/// (`a{2}{2}`..., up to 1000).
const STACK_BASE: usize = 4 << 20;

/// How many groups `pattern` may nest: every `(` counts (`\(` in a basic pattern, a literal
/// parenthesis too), so this is never less than the real depth.
pub(crate) fn group_opens(pattern: &[u8]) -> usize {
    memchr::memchr_iter(b'(', pattern).count()
}

/// Runs `f`, which reads or compiles patterns that open up to `groups` groups, where the
/// recursion of a pattern that deep fits: on this thread for a shallow one, else on a thread
/// whose stack is made for [`crate::pattern::MAX_NESTING`] levels at most (deeper patterns
/// are refused at that depth). If that thread cannot be had (no memory for its stack), `f`
/// runs here.
pub(crate) fn with_stack_for<T: Send>(groups: usize, f: impl FnOnce() -> T + Send) -> T {
    if groups <= SHALLOW_GROUPS {
        return f();
    }
    let levels = groups.min(crate::pattern::MAX_NESTING + 1);
    let size = STACK_BASE + levels * STACK_PER_LEVEL;
    // The closure is taken back if the thread does not start.
    let job = std::sync::Mutex::new(Some(f));
    let took =
        |job: &std::sync::Mutex<Option<_>>| job.lock().unwrap_or_else(|p| p.into_inner()).take();
    let ran = std::thread::scope(|s| {
        let started = std::thread::Builder::new()
            .name("swath-pattern".into())
            .stack_size(size)
            .spawn_scoped(s, || took(&job).map(|f| f()));
        match started {
            Ok(h) => h
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        }
    });
    match ran {
        Some(t) => t,
        None => took(&job).map(|f| f()).expect("the job runs once"),
    }
}
