//! Sparse files and inputs that grow: holes answered without reading them (wc -c from the
//! size, grep and wc skipping holes, cmp against holes), holes kept by cp and cipher, and a
//! file that grows while it is copied reported, not silently cut.
//!
//! The "1 TB" files are sparse: they cost nothing on disk. Commands run under `timeout` so
//! that code reading every byte of a hole fails the test instead of running for hours.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use crate::util::{swath_bin, Dir};

const TB: u64 = 1 << 40;

/// A sparse file of `len` bytes with `tail` written at its end.
fn sparse(path: &Path, len: u64, tail: &[u8]) {
    let f = std::fs::File::create(path).unwrap();
    f.set_len(len).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, tail, len).unwrap();
}

/// Runs `swath ARGS` in `dir`, bounded by `timeout` (reading a 1 TB hole would take hours).
fn bounded(dir: &Dir, args: &[&str]) -> std::process::Output {
    Command::new("timeout")
        .arg("60")
        .arg(swath_bin())
        .args(args)
        .current_dir(dir.tmp.path())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn wc_c_on_a_1tb_sparse_file_answers_from_the_size() {
    let dir = Dir::new();
    // A multiple of the page size: the size alone answers, as GNU wc does.
    sparse(&dir.path("tb"), TB, b"");
    let out = bounded(&dir, &["wc", "-c", "tb"]);
    assert_eq!(text(&out.stdout), format!("{TB} tb\n"), "{}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
    // Standard input opened on the file, from a position inside it.
    let f = std::fs::File::open(dir.path("tb")).unwrap();
    let mut f2 = f.try_clone().unwrap();
    std::io::Seek::seek(&mut f2, std::io::SeekFrom::Start(100)).unwrap();
    let out = Command::new("timeout")
        .arg("60")
        .arg(swath_bin())
        .args(["wc", "-c"])
        .stdin(f)
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), format!("{}\n", TB - 100));
    assert_eq!(std::fs::metadata(dir.path("tb")).unwrap().blocks(), 0);
}
