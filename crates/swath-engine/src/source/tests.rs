//! Tests of [`Source`]: a range owns exactly the lines that start in it and every line is
//! read once across the pieces of a file, whatever its size and the cuts; a decompressed
//! source gives the plain file's bytes; a stream gives its bytes in order, the ones looked
//! at first; a followed file gives its whole lines once, through rotation and truncation.

use super::*;
use crate::exec::{Block, Flow, Framing};
use crate::fold::{fold, Fold};
use crate::plan::{Access, EngineOptions, Plan, Strategy};
use proptest::prelude::*;
use std::io::Write;

/// The blocks a fold saw, by their start: the bytes read, in file order once sorted.
#[derive(Default)]
struct Blocks(Vec<(u64, Vec<u8>)>);

impl Fold for Blocks {
    type Config = ();
    fn new(_: &()) -> Self {
        Blocks::default()
    }
    fn block(&mut self, _: &(), b: &Block, d: &[&[u8]]) -> Flow {
        self.0.push((b.start, d[0].to_vec()));
        Flow::Continue
    }
    fn merge(&mut self, other: Self) {
        self.0.extend(other.0);
    }
}

fn file_of(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    f.flush().unwrap();
    f
}

/// All the bytes `source` gives, read as [`Source::reading`] says: a file's blocks folded
/// on `threads` workers in blocks of `block` bytes (whole lines), a stream read to its end.
fn read_all(source: &mut Source<'_>, threads: i64, block: usize, strategy: Strategy) -> Vec<u8> {
    match source.reading().unwrap() {
        Reading::Blocks(span) => {
            let job = span.job().with_framing(Framing::Lines);
            let opts = EngineOptions {
                threads: crate::Threads::from_count(threads),
                block_size: Some(block),
                strategy,
                ..EngineOptions::default()
            };
            let plan = Plan::for_job(&opts, &job, Access::ComputeBound);
            let (mut seen, _) = fold::<Blocks>(&plan, &job, &(), &()).unwrap();
            seen.0.sort_by_key(|(start, _)| *start);
            seen.0.into_iter().flat_map(|(_, b)| b).collect()
        }
        Reading::Stream { mut reader, .. } => {
            let mut out = Vec::new();
            reader.read_to_end(&mut out).unwrap();
            out
        }
        Reading::Followed(_) => panic!("not a followed file"),
    }
}

/// The lines of `data` by their first byte's offset (the last one may lack its newline).
fn lines(data: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut s = 0;
    for (i, &b) in data.iter().enumerate() {
        if b == b'\n' {
            out.push((s as u64, data[s..=i].to_vec()));
            s = i + 1;
        }
    }
    if s < data.len() {
        out.push((s as u64, data[s..].to_vec()));
    }
    out
}

/// A reader that gives its bytes in the small pieces `steps` says, as a pipe may.
struct Trickle {
    data: Vec<u8>,
    at: usize,
    steps: Vec<usize>,
    turn: usize,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let step = self.steps[self.turn % self.steps.len()].max(1);
        self.turn += 1;
        let n = step.min(buf.len()).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn compressed(codec: Compression, data: &[u8]) -> Vec<u8> {
    match codec {
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Compression::Zstd => zstd::stream::encode_all(data, 1).unwrap(),
        Compression::Xz => {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Compression::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
    }
}

const CODECS: [Compression; 4] = [
    Compression::Gzip,
    Compression::Zstd,
    Compression::Xz,
    Compression::Bzip2,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Ranges that tile a file (arbitrary cuts: mid-line, on a newline, empty ones) give
    /// every line once, in order, each to the range that holds the byte before it (the
    /// first line to the range holding 0), however the range is read.
    #[test]
    fn a_range_owns_the_lines_that_start_in_it(
        data in proptest::collection::vec(prop_oneof![6 => Just(b'a'), 2 => Just(b'\n'), 1 => Just(b'\r')], 0..3_000),
        points in proptest::collection::vec(0u64..3_100, 0..10),
        threads in 1i64..4,
        block in 1usize..700,
        strategy in proptest::sample::select(Strategy::ALL.to_vec()),
    ) {
        let f = file_of(&data);
        let input = Input::open(f.path()).unwrap();
        let len = data.len() as u64;
        let mut cuts: Vec<u64> = points.into_iter().map(|p| p.min(len)).collect();
        cuts.extend([0, len]);
        cuts.sort_unstable();
        cuts.dedup();
        let mut read = Vec::new();
        for w in cuts.windows(2) {
            let (a, b) = (w[0], w[1]);
            let mut source = Source::range(&input, a, b).unwrap();
            prop_assert_eq!(source.codec(), None);
            let (begin, finish) = source.span().unwrap();
            let bytes = read_all(&mut source, threads, block, strategy);
            prop_assert_eq!(&bytes[..], &data[begin as usize..finish as usize]);
            for (p, line) in lines(&bytes) {
                let p = p + begin;
                let owner_in = if p == 0 { a == 0 } else { a < p && p - 1 < b };
                prop_assert!(owner_in, "line at {} read by range {}..{}", p, a, b);
                read.push((p, line));
            }
        }
        prop_assert_eq!(read, lines(&data));
    }

    /// A stream gives its bytes in order, those looked at (its head, its magic) first,
    /// whatever pieces its reader gives them in.
    #[test]
    fn a_stream_gives_its_bytes_in_order(
        data in proptest::collection::vec(any::<u8>(), 0..100_000),
        steps in proptest::collection::vec(1usize..5_000, 1..6),
        look in any::<bool>(),
    ) {
        let reader = Trickle { data: data.clone(), at: 0, steps, turn: 0 };
        let mut source = Source::stream("-", reader);
        if look {
            prop_assert_eq!(source.head(), decoded_head(&data[..data.len().min(HEAD_LEN)]));
        }
        // Bytes that start as no compression's.
        let mut source = if Compression::of_magic(&data).is_none() {
            source.decoded().unwrap()
        } else {
            source
        };
        prop_assert_eq!(source.codec(), None);
        prop_assert_eq!(source.name(), Path::new("-"));
        prop_assert_eq!(read_all(&mut source, 1, 1, Strategy::Read), data);
    }
}

/// A compressed file or stream, in each compression, gives the plain file's bytes and
/// head; a file is one piece, all of it, whatever range is asked.
#[test]
fn a_decompressed_source_gives_the_plain_bytes() {
    let mut plain = Vec::new();
    for i in 0..20_000u32 {
        plain.extend_from_slice(format!("line {i} {}\n", "x".repeat((i % 37) as usize)).as_bytes());
    }
    let small = b"one\ntwo".to_vec();
    for codec in CODECS {
        for data in [&plain, &small] {
            let packed = compressed(codec, data);
            let f = file_of(&packed);
            let input = Input::open(f.path()).unwrap();
            let mut whole = Source::file(&input).decoded().unwrap();
            assert_eq!(whole.codec(), Some(codec));
            assert_eq!(whole.span(), Some((0, packed.len() as u64)));
            assert_eq!(whole.name(), f.path());
            // Its head is the plain file's, as far as the first compressed bytes go.
            let head = whole.head();
            let want = decoded_head(&data[..data.len().min(HEAD_LEN)]);
            assert!(
                !head.is_empty() && want.starts_with(&head[..head.len() - 1]),
                "{codec:?}"
            );
            assert_eq!(
                read_all(&mut whole, 2, 4096, Strategy::Pread),
                *data,
                "{codec:?}"
            );
            let mut ranged = Source::range(&input, 5, 10).unwrap();
            assert_eq!(ranged.codec(), Some(codec));
            assert_eq!(ranged.span(), Some((0, packed.len() as u64)));
            assert_eq!(read_all(&mut ranged, 1, 1, Strategy::Read), *data);
            let mut streamed = Source::stream("-", io::Cursor::new(packed.clone()))
                .decoded()
                .unwrap();
            assert_eq!(streamed.codec(), Some(codec));
            assert_eq!(read_all(&mut streamed, 1, 1, Strategy::Read), *data);
        }
    }
}

/// A compressed file cut short or damaged names itself and the cause; a file that cannot
/// be opened as asked names itself as the engine does.
#[test]
fn errors_name_the_source_and_the_cause() {
    let packed = compressed(Compression::Gzip, &vec![b'a'; 100_000]);
    let f = file_of(&packed[..packed.len() / 2]);
    let input = Input::open(f.path()).unwrap();
    let mut cut = Source::file(&input).decoded().unwrap();
    let Reading::Stream {
        mut reader,
        namer,
        file,
    } = cut.reading().unwrap()
    else {
        panic!("a stream")
    };
    assert!(file.is_some());
    let e = namer.error(reader.read_to_end(&mut Vec::new()).unwrap_err());
    let name = f.path().display().to_string();
    assert_eq!(
        e.to_string(),
        format!("{name}: unexpected end of gzip data (truncated file?)")
    );
    assert_eq!(e.path(), f.path());
    assert_eq!(e.cause(), "unexpected end of gzip data (truncated file?)");
    let d = tempfile::tempdir().unwrap();
    let dir = Input::open(d.path()).unwrap();
    let e = Source::range(&dir, 0, 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}: Is a directory", d.path().display())
    );
    let e = Followed::open(&d.path().join("x/")).unwrap_err();
    assert!(e.to_string().ends_with("x/: not a file name"), "{e}");
}

/// Everything a followed file gives, read so far.
fn poll_into(f: &mut Followed, got: &mut Vec<u8>, carried_seen: &mut Vec<bool>) {
    f.poll(&mut |r, carried| {
        carried_seen.push(carried.is_some());
        r.read_to_end(got)?;
        *carried = Some(Arc::from(&b"header"[..]));
        Ok(())
    })
    .unwrap()
    .unwrap();
}

use std::sync::Arc;

/// A followed file gives its whole lines once: a line still written waits for its
/// newline; after a rotation the old file's last line (whole or not) and then the new
/// file's lines; after a truncation the file again from its start, what was carried
/// forgotten.
#[test]
fn a_followed_file_gives_its_whole_lines_once() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("a.log");
    let mut f = Followed::open(&path).unwrap();
    assert!(!f.is_open());
    let (mut got, mut carried) = (Vec::new(), Vec::new());
    poll_into(&mut f, &mut got, &mut carried);
    assert!(got.is_empty());
    std::fs::write(&path, b"one\ntw").unwrap();
    poll_into(&mut f, &mut got, &mut carried);
    assert!(f.is_open());
    assert_eq!(got, b"one\n");
    assert_eq!(Source::Followed(&mut f).head(), b"one\ntw\n");
    let mut w = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    w.write_all(b"o\nthr").unwrap();
    poll_into(&mut f, &mut got, &mut carried);
    assert_eq!(got, b"one\ntwo\n");
    assert_eq!(f.offset(), 8);
    // Rotated: the old file to its end, then the new one from its start.
    std::fs::rename(&path, d.path().join("a.log.1")).unwrap();
    std::fs::write(&path, b"four\nfi").unwrap();
    poll_into(&mut f, &mut got, &mut carried);
    assert_eq!(got, b"one\ntwo\nthrfour\n");
    // Truncated in place: read again from its start.
    std::fs::write(&path, b"6\n").unwrap();
    poll_into(&mut f, &mut got, &mut carried);
    assert_eq!(got, b"one\ntwo\nthrfour\n6\n");
    // What was carried went on within a file, and was forgotten when a file started.
    assert_eq!(carried, [false, true, true, false, false]);
    assert_eq!(f.codec(), None);
    // A link at the name is refused.
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(d.path().join("a.log.1"), &path).unwrap();
    let refused = f
        .poll(&mut |_, _| Ok(()))
        .unwrap()
        .expect_err("a link is refused");
    assert!(matches!(refused, Refused::Link), "{refused}");
}
