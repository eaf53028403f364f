//! `--help` through the `wc` and `cmp` links: GNU's own layout (GNU's test scripts read the
//! option list out of it), with swath's extra options in a section of their own. `swath wc
//! --help` and `swath cmp --help` keep clap's layout.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

/// Options every swath engine command takes, as a help section.
const ENGINE: &str = "\
swath's own options (each file read on all cores):
      --threads=N        worker threads (default: one per core; 0 or less: one
                           thread with sequential reads)
      --block-size=SIZE  bytes per block handed to a worker (default 256K)
      --strategy=S       how files are read: auto, read, pread or mmap
      --layout=L         how blocks go to threads: dynamic, stripes or ranges
      --time             print time and the engine's plan to standard error
";

/// GNU wc 9.1's help, and swath's options.
pub fn wc() -> String {
    format!(
        "\
Usage: wc [OPTION]... [FILE]...
  or:  wc [OPTION]... --files0-from=F
Print newline, word, and byte counts for each FILE, and a total line if
more than one FILE is specified.  A word is a non-zero-length sequence of
printable characters delimited by white space.

With no FILE, or when FILE is -, read standard input.

The options below may be used to select which counts are printed, always in
the following order: newline, word, character, byte, maximum line length.
  -c, --bytes            print the byte counts
  -m, --chars            print the character counts
  -l, --lines            print the newline counts
      --files0-from=F    read input from the files specified by
                           NUL-terminated names in file F;
                           If F is - then read names from standard input
  -L, --max-line-length  print the maximum display width
  -w, --words            print the word counts
      --help        display this help and exit
      --version     output version information and exit

{ENGINE}      --total=WHEN       when to print a line with total counts;
                           WHEN can be: auto, always, only, never
"
    )
}

/// GNU cmp 3.8's help, and swath's options.
pub fn cmp() -> String {
    format!(
        "\
Usage: cmp [OPTION]... FILE1 [FILE2 [SKIP1 [SKIP2]]]
Compare two files byte by byte.

The optional SKIP1 and SKIP2 specify the number of bytes to skip
at the beginning of each file (zero by default).

Mandatory arguments to long options are mandatory for short options too.
  -b, --print-bytes          print differing bytes
  -i, --ignore-initial=SKIP         skip first SKIP bytes of both inputs
  -i, --ignore-initial=SKIP1:SKIP2  skip first SKIP1 bytes of FILE1 and
                                      first SKIP2 bytes of FILE2
  -l, --verbose              output byte numbers and differing byte values
  -n, --bytes=LIMIT          compare at most LIMIT bytes
  -s, --quiet, --silent      suppress all normal output
      --help                 display this help and exit
  -v, --version              output version information and exit

SKIP values may be followed by the following multiplicative suffixes:
kB 1000, K 1024, MB 1,000,000, M 1,048,576,
GB 1,000,000,000, G 1,073,741,824, and so on for T, P, E, Z, Y.

If a FILE is '-' or missing, read standard input.
Exit status is 0 if inputs are the same, 1 if different, 2 if trouble.

{ENGINE}      --max-diffs=K      report the first K differences, in file order
      --json             print the result as one JSON object
"
    )
}

/// True when `args` ask for help as GNU's getopt reads them: `--help` or an abbreviation
/// of it (`--he`), before any `--`.
pub fn asks_for_help(args: &[OsString]) -> bool {
    args.iter().take_while(|a| a.as_bytes() != b"--").any(|a| {
        let b = a.as_bytes();
        b.len() >= 3 && b"--help".starts_with(b)
    })
}
