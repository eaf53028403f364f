//! `swath grep` in the multibyte locales that are not UTF-8 (GB2312, GB18030, Big5-HKSCS,
//! EUC-JP, Shift_JIS) against GNU grep 3.8, byte for byte: stdout, stderr and exit status.
//!
//! Each locale is made with `localedef` in the test's scratch directory (`LOCPATH`) and set
//! with `LC_CTYPE` alone, so that GNU's messages stay untranslated. The texts are written in
//! UTF-8 here and converted with glibc's `iconv` to the locale's charmap; the lines and
//! patterns that test character boundaries are given as bytes: a character whose second
//! byte is `\`, `A`, `e`, `{` or a digit (Shift_JIS, Big5, GB18030), two characters whose
//! bytes read across their boundary spell a third (EUC-JP, GB2312), a four-byte GB18030
//! character that ends in `7`. Patterns go through `-f` files (or `-e "$(cat FILE)"`),
//! being bytes of the locale's encoding.
//!
//! Each locale's test runs patterns of every kind under the core options; strings, one the
//! start of another; context, `-z`, standard input, `-m`, `-l`, `-L`, `-q`; a file of over
//! 4 MiB (searched in blocks on every worker); binary files (NUL bytes and the locale's
//! encoding errors); errors and warnings (glibc's, the DFA's, the `-w`/`-x` wrapper's);
//! the patterns that GNU's DFA reads otherwise than glibc; and `-P`, refused.
//!
//! Left out, as in grep.rs: context around a selected line that is not text. And `-i -F`
//! with a multibyte character that has no case: GNU then compares bytes after `toupper`, so
//! that in Shift_JIS `ア` (83 41) matches `ヂ` (83 61); swath compares characters
//! (`fixed_ignore_case_compares_characters` pins that).

use std::process::Command;

use crate::grep::Report;
use crate::util::Dir;

/// Text every one of the five charsets has: kanji, kana, fullwidth Latin, Greek and
/// Cyrillic (with their case pairs), CJK punctuation and the ideographic space.
const TEXT: &str = "日本 中文 テキスト foo bar\n\
ＡＢＣ ａｂｃ Αλφα ΑΛΦΑ Привет ПРИВЕТ\n\
表示 ソフト 可能\n\
テキスト。テキスト、foo　bar\n\
word日本 日本word 本\n\
\n\
ひらがな ひ\n\
abc ABC Abc e L X g Y D S @ i m\n\
α Α п П テテ テキテキ\n\
last 日本 line";

/// One locale and the bytes that test its character boundaries.
struct Locale {
    /// The locale's name (`LC_CTYPE`).
    name: &'static str,
    /// Its charmap, for `localedef -f` and `iconv -t`.
    charmap: &'static str,
    /// The source `localedef -i` reads.
    source: &'static str,
    /// Lines (the file `trail`) whose characters hold bytes that a pattern could match
    /// out of step.
    trail: &'static [&'static [u8]],
    /// Patterns that must not match inside those characters (files `t0`..).
    traps: &'static [&'static [u8]],
    /// A pattern that ends with the first byte of a character whose last byte may be `\`
    /// (GNU's `-w`/`-x` wrapper then never closes its group), if the encoding has one.
    lead: Option<&'static [u8]>,
}

/// Makes the locale in the test's scratch directory; `None` (and a skip) when this machine
/// cannot.
fn make_locale(dir: &Dir, l: &Locale) -> Option<String> {
    let locales = dir.path("locales");
    std::fs::create_dir(&locales).unwrap();
    // Exit status 1: made, with warnings (Shift_JIS is not ASCII-compatible).
    let made = Command::new("localedef")
        .args(["-f", l.charmap, "-i", l.source])
        .arg(locales.join(l.name))
        .stderr(std::process::Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success() || s.code() == Some(1)) {
        swath_engine::testing::skip(&format!(
            "localedef could not make {} here (apt-get install locales): skipped",
            l.name
        ));
        return None;
    }
    Some(locales.to_str().unwrap().to_string())
}

/// `text` converted from UTF-8 to `charmap` by glibc's iconv.
fn encode(text: &str, charmap: &str) -> Vec<u8> {
    let mut child = Command::new("iconv")
        .args(["-f", "UTF-8", "-t", charmap])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("glibc's iconv");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "iconv to {charmap}: {text:?}");
    out.stdout
}

/// Patterns in every locale (written to `p0`.. in the locale's encoding): characters,
/// classes, anchors, repetition, back-references, word assertions, case pairs, ASCII next
/// to multibyte characters.
const PATTERNS: &[&str] = &[
    "日本",
    "テキスト",
    "本",
    "ひ",
    "e",
    "D",
    ".",
    "テ.",
    "^テ",
    "本$",
    "[ァ-ン]\\+",
    "[[:alpha:]]",
    "[^a-z ]",
    "ａｂｃ",
    "αλφα",
    "привет",
    "x*",
    "\\(本\\).*\\1",
    "\\(テ\\)\\1",
    "\\<本",
    "本\\>",
    "\\w\\W",
    "[[:upper:]]",
    "テ\\{2\\}",
    "word",
    "日本word",
    "foo",
    "。",
    "　",
    "^$",
    "word日本 日本word 本",
    "(本|日本)+",
    "\\ア",
    "[:alpha:]",
    "[テ",
];

/// Options every pattern is tried with.
const OPTIONS: &[&str] = &[
    "",
    "-i",
    "-w",
    "-x",
    "-o",
    "-c",
    "--color=always",
    "-F",
    "-F -w",
    "-F -x",
];

/// More options, each with a few of the patterns.
const MORE_OPTIONS: &[&str] = &[
    "-v -n", "-o -b", "-ow", "-iw", "-io", "-E", "-F -o", "-E -x",
];

/// Writes the locale's files in the scratch directory: `text` (the common text, converted),
/// `bad` (encoding errors), `trail` (the locale's lines), `nul` (a binary file), `p0`..
/// ([`PATTERNS`], converted), `t0`.. (the locale's traps), `lead`.
fn write_corpus(dir: &Dir, l: &Locale) {
    dir.write("text", &encode(TEXT, l.charmap));
    // 0xff starts no character in any of the five; a lead byte before a newline is cut
    // short (in Shift_JIS 0xa4 is a half-width katakana: that line is text there).
    dir.write(
        "bad",
        b"ok line foo\nbad \xff\xfe bytes foo\ncut \xa4\nlast foo\n",
    );
    dir.write(
        "trail",
        &[l.trail.join(&b"\n"[..]), b"\n".to_vec()].concat(),
    );
    let mut nul = encode("日本 foo\nテキスト\n", l.charmap);
    nul.extend_from_slice(b"bin\0ary foo\n");
    nul.extend_from_slice(&encode("日本 after\n", l.charmap));
    dir.write("nul", &nul);
    for (k, p) in PATTERNS.iter().enumerate() {
        dir.write(&format!("p{k}"), &encode(p, l.charmap));
    }
    for (k, t) in l.traps.iter().enumerate() {
        dir.write(&format!("t{k}"), t);
    }
    if let Some(lead) = l.lead {
        dir.write("lead", lead);
    }
    // Over 4 MiB, so that swath searches it in blocks on every worker: the text and the
    // locale's lines, again and again.
    let mut big = Vec::new();
    let trail = [l.trail.join(&b"\n"[..]), b"\n".to_vec()].concat();
    let text = [encode(TEXT, l.charmap), b"\n".to_vec()].concat();
    for i in 0.. {
        big.extend_from_slice(&text);
        big.extend_from_slice(&trail);
        big.extend_from_slice(format!("line {i}\n").as_bytes());
        if big.len() > 6 << 20 {
            break;
        }
    }
    dir.write("big", &big);
}

/// Every case for one locale, against GNU grep.
fn same_as_gnu_in(l: &Locale) {
    let dir = Dir::new();
    let Some(locpath) = make_locale(&dir, l) else {
        return;
    };
    write_corpus(&dir, l);
    let mut cmds = Vec::new();
    // Patterns and options.
    for o in OPTIONS {
        for k in 0..PATTERNS.len() {
            cmds.push(format!("grep {o} -f p{k} text bad"));
        }
    }
    for o in MORE_OPTIONS {
        for k in [0, 2, 4, 7, 11, 12, 19, 26, 31] {
            cmds.push(format!("grep {o} -f p{k} text bad"));
        }
    }
    // Context (only around text lines, see the module doc), -e, several patterns, -z,
    // standard input, -m, -l, -L, -q, empty patterns.
    for k in [0, 2, 7, 26] {
        cmds.push(format!("grep -n -C1 -f p{k} text"));
        cmds.push(format!(
            "grep --color=always -v -A1 -e \"$(cat p{k})\" text"
        ));
    }
    cmds.extend(
        [
            "grep -e \"$(cat p0)\" -e \"$(cat p3)\" -o -n text",
            "grep -f p17 -f p1 -f p26 -c text",
            "grep -f p17 -f p1 -o text",
            "grep -x -e \"$(cat p27)\" -e \"$(cat p30)\" text",
            "cat text | grep -b -f p1",
            "grep -z -o -f p7 text",
            "grep -z -c -f p8 text",
            "grep -E -o -f p31 text",
            "grep -m1 -n -f p26 text bad",
            "grep -l -f p2 text bad",
            "grep -L -f p15 text bad",
            "grep -q -f p3 text; echo $?",
            "grep -e '' -c text",
            "grep -v -x -e '' text",
            "grep -w -e '' -c text",
        ]
        .map(String::from),
    );
    // Several strings, one the start of another.
    cmds.extend(
        [
            "grep -F -o -f p0 -f p2 text",
            "grep -F -ow -f p24 -f p25 -f p2 text",
            "grep -F -c -f p1 -f p7 -f p26 text",
            "grep -F -x -f p30 -f p2 text",
            "grep -F --color=always -f p2 -f p0 -f p26 text",
        ]
        .map(String::from),
    );
    // A file searched in blocks.
    for c in [
        "-c -f p0",
        "-n -f p3",
        "-c -v -f p26",
        "-c -F -f t0",
        "-n -o -F -f t1",
        "-c -w -f p2",
        "-c -i -f p14",
        "-b -x -f p30",
        "-c -E -f p31",
        "-n -f p7",
        "-c -f p17",
        "-c -f p12",
    ] {
        cmds.push(format!("grep {c} big > out; echo $?; cksum < out"));
    }
    // The locale's traps: no match inside a character.
    for o in [
        "", "-F", "-c", "-o", "-F -o", "-w", "-x", "-n -b -o", "-v", "-i", "-i -F",
    ] {
        for k in 0..l.traps.len() {
            cmds.push(format!("grep {o} -f t{k} trail"));
        }
    }
    // -i -F with ASCII patterns (see the module doc for multibyte ones).
    for p in ["e", "a", "A", "D", "foo"] {
        cmds.push(format!("grep -i -F -o -e {p} trail text"));
    }
    // Binary files: NUL bytes, and lines that are not text in the locale.
    cmds.extend(
        [
            "grep foo nul bad",
            "grep -c foo nul bad",
            "grep -o foo bad",
            "grep -a foo bad",
            "grep -o -a -b . bad",
            "grep -v ok bad",
            "grep -n -x -f p2 nul",
            "grep --binary-files=without-match foo bad nul text",
            "grep -o -f p6 bad",
            "grep -c -f p6 bad",
            "grep -q foo bad; echo $?",
        ]
        .map(String::from),
    );
    // Errors and warnings, and -P, which GNU refuses in these locales.
    cmds.extend(
        [
            // gnulib's quotation marks follow the locale (GB18030 has its own).
            "grep -d foo x text",
            "grep -d re x text",
            "grep -P foo text",
            "grep -P -e a -e b text",
            "grep -P '(' text",
            "grep -e '[' text",
            "grep -e 'a\\{1' text",
            "grep -e '\\(' -f p34 text",
            "grep -f p33 text",
            "grep -E -f p34 text",
            "grep -E -c '*a' text",
            "DEB_GREP_ENABLE_STRAY_BACKSLASH_WARN=1 grep -c -f p32 text",
            "DEB_GREP_ENABLE_STRAY_BACKSLASH_WARN=1 grep -c -e '\\d' text",
            // Where GNU's DFA reads a pattern otherwise than glibc (it selects the lines,
            // glibc's reading is what -o and colours show).
            "grep -E -c '{' text",
            "grep -E -o '{1}e' text",
            "grep -E --color=always '^*e' text",
            "grep -c 'a$)x' text",
            "grep -E -x 'a{1\\,2}' text",
        ]
        .map(String::from),
    );
    if l.lead.is_some() {
        for o in ["-w", "-x", "-F -x", "-c"] {
            cmds.push(format!("grep {o} -f lead text"));
        }
        cmds.push("grep -x -f lead -e foo text".into());
    }
    let mut report = Report::default();
    report.check(&dir, &[("LOCPATH", &locpath), ("LC_CTYPE", l.name)], &cmds);
    report.finish();
}

#[test]
fn gb2312_as_gnu() {
    same_as_gnu_in(&Locale {
        name: "zh_CN.GB2312",
        charmap: "GB2312",
        source: "zh_CN",
        // 中文 (d6d0 cec4): the bytes d0 ce across the boundary are 形.
        trail: &[b"\xd6\xd0\xce\xc4", b"\xd0\xce"],
        traps: &[
            b"\xd0\xce",
            b"\xd0\xce\\|x",
            b"^.\xd0",
            b"\xd0\xce\n\xd6\xd0",
        ],
        lead: None,
    });
}

#[test]
fn gb18030_as_gnu() {
    same_as_gnu_in(&Locale {
        name: "zh_CN.GB18030",
        charmap: "GB18030",
        source: "zh_CN",
        // É (81 30 87 37) ends in the digit 7, ß (81 30 89 38) in 8; 丂 (81 40) ends in @,
        // 許 (d4 53) in S; é (a8 a6) is É's lower case, in two bytes against four.
        trail: &[
            b"\x81\x30\x87\x37",
            b"\x81\x40 \xd4\x53",
            b"\x81\x30\x89\x38 \xa8\xa6",
            b"7 @ S",
            // \u{17f}un (long s: an s to -i), \u{131}stanbul (dotless i), SUN.
            b"\x81\x30\x97\x37un \x81\x30\x90\x33stanbul SUN",
        ],
        traps: &[
            b"7",
            b"0",
            b"@",
            b"S",
            b".*7",
            b"\x81\x30\x87\x37",
            b"\xa8\xa6",
            b"7\n\x81\x30\x87\x37",
            b"sun",
            b"istanbul",
        ],
        lead: Some(b"\x81"),
    });
}

#[test]
fn big5_hkscs_as_gnu() {
    same_as_gnu_in(&Locale {
        name: "zh_HK.BIG5-HKSCS",
        charmap: "BIG5-HKSCS",
        source: "zh_HK",
        // α (a3 5c) and 許 (b3 5c) end in \, Α (a3 44) in D, п (c8 65) in e, the
        // ideographic space (a1 40) in @, 可 (a5 69) in i, É (88 5b) in [, é (88 6d) in m.
        trail: &[
            b"\xa3\x5c \xb3\x5c",
            b"\xa3\x44 \xc8\x65 \xa1\x40",
            b"\xa5\x69 \x88\x5b \x88\x6d",
            b"\\ D e @ i [ m",
        ],
        traps: &[
            b"\\",
            b"\\\\",
            b"D",
            b"e",
            b"@",
            b"i",
            b"\\[",
            b"\x88\x5b",
            b"\xa3\x5c",
            b"\\\n\xa3\x5c",
        ],
        lead: Some(b"\xa3"),
    });
}

#[test]
fn euc_jp_as_gnu() {
    same_as_gnu_in(&Locale {
        name: "ja_JP.eucJP",
        charmap: "EUC-JP",
        source: "ja_JP",
        // テキ (a5c6 a5ad) holds c6 a5; 丂 (8f b0 a1, three bytes) holds 亜 (b0 a1); the
        // lines of GNU's own test (tests/euc-mb): こ (a4b3) and 掛 (b3a4) in turn.
        trail: &[
            b"\xa5\xc6\xa5\xad",
            b"\x8f\xb0\xa1",
            b"\xb0\xa1",
            b"\xb3\xa4\xb3\xa4",
            b"\xb3\xa4\xb3\xa4\xa4\xb3",
            b"\xb3\xa4\xb3\xa4\xb3\xa4",
            b"\x8e\xb1 half-width",
            // \u{130}stanbul, \u{131}stanbul (JIS X 0212, three bytes each).
            b"\x8f\xaa\xc4stanbul \x8f\xa9\xc5stanbul",
        ],
        traps: &[
            b"\xc6\xa5",
            b"\xb0\xa1",
            b"\xa4\xb3",
            b"^x\\|\xa4\xb3",
            b"\xb1",
            b"\xc6\xa5\n\xa5\xc6",
            b"istanbul",
        ],
        lead: None,
    });
}

#[test]
fn shift_jis_as_gnu() {
    same_as_gnu_in(&Locale {
        name: "ja_JP.SJIS",
        charmap: "SHIFT_JIS",
        source: "ja_JP",
        // ア (83 41) ends in A, テ (83 65) in e, 表 (95 5c) in \, 本 (96 7b) in {; the
        // lines of GNU's own test (tests/sjis-mb); ｱ (b1) is one byte.
        trail: &[
            b"\x83\x41",
            b"\x83\x41A",
            b"\xc1\xc1AA",
            b"\x83AA",
            b"\x83A\x83\x83A",
            b"\x95\x5c \x95\x5c\\",
            b"\x83\x65 \x96\x7b",
            b"\xb1",
        ],
        traps: &[
            b"A",
            b"\\",
            b"\\\\",
            b"e",
            b"{",
            b"\\{",
            b"^$\\|A",
            b"\x83",
            b"\xb1",
            b"A\n\x83A",
            b"\x83A\nA\n\x83",
        ],
        lead: Some(b"\x95"),
    });
}

/// `-i -F` compares characters: in Shift_JIS `ア` (83 41) does not match `ヂ` (83 61),
/// whose bytes GNU's `-F` folds to the same (see the module doc); swath answers as GNU's
/// `-i` without `-F` does.
#[test]
fn fixed_ignore_case_compares_characters() {
    let l = Locale {
        name: "ja_JP.SJIS",
        charmap: "SHIFT_JIS",
        source: "ja_JP",
        trail: &[],
        traps: &[],
        lead: None,
    };
    let dir = Dir::new();
    let Some(locpath) = make_locale(&dir, &l) else {
        return;
    };
    dir.write("t", b"\x83\x41\n\x83\x61\nA\na\n\x82\x60\n\x82\x81\n");
    // ア, then Ａ (82 60) and ａ (82 81): a case pair.
    dir.write("pa", b"\x83\x41");
    dir.write("pf", b"\x82\x60");
    let env = [("LOCPATH", locpath.as_str()), ("LC_CTYPE", l.name)];
    for p in ["pa", "pf"] {
        let gnu = Command::new("/usr/bin/grep")
            .args(["-i", "-f", p, "t"])
            .current_dir(dir.tmp.path())
            .envs(env)
            .env_remove("LC_ALL")
            .output()
            .unwrap();
        let ours = Command::new(crate::util::swath_bin())
            .args(["grep", "-i", "-F", "-f", p, "t"])
            .current_dir(dir.tmp.path())
            .envs(env)
            .env_remove("LC_ALL")
            .output()
            .unwrap();
        assert_eq!(
            ours.stdout.escape_ascii().to_string(),
            gnu.stdout.escape_ascii().to_string(),
            "{p}"
        );
        assert_eq!(ours.status.code(), gnu.status.code(), "{p}");
    }
}
