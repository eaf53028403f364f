//! What can go wrong making or applying a patch, each naming the file it concerns.

use swath_engine::EngineError;

/// An error of `make`, `apply` or `info`: one line, naming the file and the cause.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// Reading or writing a file failed (the engine's wording: `FILE: cause`).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The patch is damaged, truncated, forged or of an unsupported version.
    #[error("{path}: {what}")]
    Invalid {
        /// The patch as the user named it.
        path: String,
        /// What is wrong with it.
        what: String,
    },
    /// OLD is not the file the patch was made from.
    #[error("{path}: not the file this patch was made from ({why})")]
    WrongOld {
        /// OLD as the user named it.
        path: String,
        /// Size or hash.
        why: String,
    },
    /// The rebuilt NEW does not have the hash the patch records (nothing is left at NEW).
    #[error("{path}: the rebuilt file does not match the patch's hash (nothing was written)")]
    WrongNew {
        /// NEW as the user named it.
        path: String,
    },
    /// The old tree's files have the sizes the patch lists but other content.
    #[error("{path}: not the tree this patch was made from ({why})")]
    WrongOldTree {
        /// OLD as the user named it.
        path: String,
        /// What differs.
        why: String,
    },
    /// The rebuilt tree does not have the hash the patch records (nothing is left at NEW).
    #[error("{path}: the rebuilt tree does not match the patch's hash (nothing was written)")]
    WrongNewTree {
        /// NEW as the user named it.
        path: String,
    },
    /// The arguments cannot work together (for example a directory and a file).
    #[error("{0}")]
    Usage(String),
}

impl PatchError {
    /// An I/O error on `path`.
    pub fn io(path: &str, cause: std::io::Error) -> PatchError {
        PatchError::Engine(EngineError::io(path, cause))
    }

    /// A damaged patch `path`.
    pub fn invalid(path: &str, what: impl std::fmt::Display) -> PatchError {
        PatchError::Invalid {
            path: path.to_string(),
            what: what.to_string(),
        }
    }
}
