//! The switches of `make` kept for measurements: which way the files are read, whether OLD
//! and NEW are mapped, which chunking kernel and seed gate run, whether large values are
//! freed on a thread of their own. None changes a byte of a patch; each exists so that the
//! other way can be timed against the default.
//!
//! The library reads no environment: the caller fills a [`Tuning`] (swath's binary from
//! the `SWATH_IO`, `SWATH_MAP_OLD`, `SWATH_MAP_NEW`, `SWATH_CDC_KERNEL`, `SWATH_SEED_GATE`
//! and `SWATH_DETACHED_FREES` variables) and passes it down in
//! [`crate::make::MakeOptions::tuning`].

pub use swath_engine::ahead::IoChoice;

use crate::cdc::Kernel;
use crate::seeds::Gate;

/// How `make` does what it does, where more than one way gives the same patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// How OLD and NEW are read front to back: chosen from their page-cache residency
    /// ([`IoChoice::Auto`]), or forced.
    pub io: IoChoice,
    /// OLD in the page cache (and small enough to stay there beside NEW) is mapped once its
    /// signature is made; false reads it positionally instead.
    pub map_old: bool,
    /// NEW's sections in the page cache are matched where they lie, mapped; false reads
    /// them into buffers instead.
    pub map_new: bool,
    /// The kernel that finds the content-defined cuts ([`Kernel::BEST`] by default).
    pub cdc_kernel: Kernel,
    /// How the seeds' gate is applied ([`Gate::best`] by default: the fastest this CPU
    /// has; any other than [`Gate::Scalar`] must be the CPU's best).
    pub seed_gate: Gate,
    /// Large values (OLD's chunk list) are freed on a thread of their own
    /// ([`crate::io::DetachedFrees`]); false frees them where they are dropped.
    pub detached_frees: bool,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            io: IoChoice::Auto,
            map_old: true,
            map_new: true,
            cdc_kernel: Kernel::BEST,
            seed_gate: Gate::best(),
            detached_frees: true,
        }
    }
}
