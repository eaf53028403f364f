//! Named pause points, so that tests can make a race happen deterministically: another user
//! swapping a directory while an output is being written, a signal arriving between two
//! system calls, a log rotated between two looks.
//!
//! With `SWATH_PAUSE=POINT:FIFO` in the environment, the process that reaches the point named
//! `POINT` opens `FIFO` for reading and reads it to its end before going on. A test therefore
//! starts swath, opens the FIFO for writing (which returns only once swath has reached the
//! point and opened it: swath is now waiting), does what the race needs (swap a directory,
//! send a signal), then closes its end, and swath goes on. No sleep is involved, so the race
//! is won every time, on any machine.
//!
//! Without the variable (or for any other point) [`at`] costs one check of a value read once.
//! The variable only makes the process wait on a file its own user names, so it gives that
//! user nothing they could not do with a debugger.

use std::io::Read;
use std::sync::OnceLock;

/// The point and FIFO asked for, read from the environment once.
fn wanted() -> Option<&'static (String, std::path::PathBuf)> {
    static WANTED: OnceLock<Option<(String, std::path::PathBuf)>> = OnceLock::new();
    WANTED
        .get_or_init(|| {
            let v = std::env::var_os("SWATH_PAUSE")?;
            let v = v.to_str()?;
            let (point, fifo) = v.split_once(':')?;
            Some((point.to_string(), fifo.into()))
        })
        .as_ref()
}

/// Waits at the point `point` when `SWATH_PAUSE` names it (see the module's documentation);
/// returns at once otherwise. A FIFO that cannot be opened means no pause.
pub fn at(point: &str) {
    let Some((p, fifo)) = wanted() else {
        return;
    };
    if p != point {
        return;
    }
    if let Ok(mut f) = std::fs::File::open(fifo) {
        let mut sink = [0u8; 64];
        while matches!(f.read(&mut sink), Ok(n) if n > 0) {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn another_point_does_not_wait() {
        // The variable is not set in unit tests (or names another point): no wait.
        super::at("no-such-point-in-swath");
    }
}
