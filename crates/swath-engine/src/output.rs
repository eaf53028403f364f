//! Atomic output files: written under a temporary name beside the target, renamed into place
//! only when complete, removed if anything goes wrong.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::EngineError;

/// An output file under construction. Dropping it without [`AtomicOutput::commit`] removes
/// the temporary file and leaves any existing target untouched.
#[derive(Debug)]
pub struct AtomicOutput {
    temp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl AtomicOutput {
    /// Creates a temporary file in the target's directory.
    pub fn create(target: &Path) -> Result<Self, EngineError> {
        let name = target.to_string_lossy().into_owned();
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let file_name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Created 0666 less the umask, as any new file; not tempfile's private 0600.
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{file_name}."))
            .suffix(".swath-tmp")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .tempfile_in(dir)
            .map_err(|e| EngineError::io(name, e))?;
        Ok(AtomicOutput {
            temp,
            target: target.to_path_buf(),
        })
    }

    /// The temporary file to write into.
    pub fn file(&self) -> &File {
        self.temp.as_file()
    }

    /// The temporary file's path.
    pub fn temp_path(&self) -> &Path {
        self.temp.path()
    }

    /// Flushes to disk when `sync` is true, then renames the file over the target.
    pub fn commit(self, sync: bool) -> Result<(), EngineError> {
        let name = self.target.to_string_lossy().into_owned();
        if sync {
            self.temp
                .as_file()
                .sync_all()
                .map_err(|e| EngineError::io(&name, e))?;
        }
        self.temp
            .persist(&self.target)
            .map_err(|e| EngineError::io(name, io::Error::from(e)))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn commit_replaces_and_drop_discards() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        std::fs::write(&target, b"old").unwrap();
        {
            let out = AtomicOutput::create(&target).unwrap();
            (&*out.file()).write_all(b"half").unwrap();
            // dropped without commit
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let out = AtomicOutput::create(&target).unwrap();
        (&*out.file()).write_all(b"new").unwrap();
        out.commit(true).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // SAFETY: umask only reads and restores the process's file creation mask.
        let mask = unsafe {
            let m = libc::umask(0o022);
            libc::umask(m);
            m
        };
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&target).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o666 & !(mask as u32));
    }

    #[test]
    fn missing_directory_is_a_clear_error() {
        let err = AtomicOutput::create(Path::new("/nonexistent-dir/x")).unwrap_err();
        assert!(err.to_string().starts_with("/nonexistent-dir/x: "), "{err}");
    }
}
