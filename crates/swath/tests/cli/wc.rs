//! `swath wc` against GNU wc 9.1, byte for byte: a corpus of tricky files under every count
//! option, locale and engine setting, standard input, pipes, errors and --files0-from.

use crate::util::{same_as_gnu_sh_env, Dir};

const LOCALES: [&[(&str, &str)]; 3] = [&[], &[("LC_ALL", "C")], &[("LC_ALL", "C.UTF-8")]];

fn corpus() -> Dir {
    let dir = Dir::new();
    dir.write(
        "ascii",
        b"hello world\nfoo\tbar  baz\n\n   lead and trail   \nno newline",
    );
    dir.write(
        "utf8",
        "caf\u{e9} \u{4e2d}\u{6587}\u{3000}wide\u{a0}nbsp e\u{301}\n\u{1f600} \u{2028}x\u{200b}y\r\n\tz\u{2060}w\n"
            .as_bytes(),
    );
    dir.write(
        "invalid",
        b"a\xff b\xe4\xb8 c\xc0\x80 \xed\xa0\x80 d\xf4\x90\x80\x80e\n\xe4",
    );
    dir.write("controls", b"a\x01b \x7f\x08x\x0b\x0cy\rz\x1b[31mred\n\0\0");
    dir.write("tabs", b"1234567\tx\n12345678\ty\n\t\t\n");
    dir.write("crlf", b"a b\r\nc d\r\n");
    dir.write("empty", b"");
    swath_gen::text(&dir.path("big"), 3_000_000, 3).unwrap();
    dir
}

const FILES: [&str; 8] = [
    "ascii", "utf8", "invalid", "controls", "tabs", "crlf", "empty", "big",
];

#[test]
fn every_file_every_option_every_locale() {
    let dir = corpus();
    for env in LOCALES {
        for opts in ["", "-l", "-w", "-c", "-m", "-L", "-lwmcL", "-cm", "-Lc"] {
            for f in FILES {
                same_as_gnu_sh_env(&dir, &format!("wc {opts} {f}"), env);
            }
            same_as_gnu_sh_env(&dir, &format!("wc {opts} {}", FILES.join(" ")), env);
        }
    }
}

#[test]
fn engine_settings_do_not_change_the_counts() {
    let dir = corpus();
    for extra in [
        "--threads 1",
        "--threads 0",
        "--threads 3 --block-size 1",
        "--threads 2 --block-size 7 --strategy pread",
        "--threads 4 --block-size 4096 --strategy mmap --layout stripes",
        "--block-size 3 --layout ranges --strategy pread",
    ] {
        for env in LOCALES {
            let all = FILES.join(" ");
            let gnu = same_as_gnu_sh_env(&dir, &format!("wc -lwmcL {all}"), env);
            let out = std::process::Command::new(dir.path("wc"))
                .args(extra.split(' '))
                .arg("-lwmcL")
                .args(FILES)
                .env_remove("LANG")
                .env_remove("LC_ALL")
                .envs(env.iter().copied())
                .current_dir(dir.tmp.path())
                .output()
                .unwrap();
            let ours = crate::util::Outcome::from(out);
            assert_eq!(ours.stdout, gnu.stdout, "{extra} {env:?}");
        }
    }
}

#[test]
fn stdin_pipes_and_errors() {
    let dir = corpus();
    std::fs::create_dir(dir.path("d")).unwrap();
    dir.write("list", b"ascii\0utf8\0\0tabs\0");
    for script in [
        "wc < ascii",
        "wc - < utf8",
        "wc -c - - < ascii",
        "wc -l - - < ascii",
        "cat utf8 | wc",
        "cat utf8 | wc -m",
        "cat ascii | wc - tabs",
        "wc nosuch ascii",
        "wc nosuch1 nosuch2",
        "wc d ascii",
        "wc -c d",
        "wc < d",
        "wc '' ascii",
        "wc /dev/null",
        "wc -x",
        "wc --bogus ascii",
        "wc --files0-from",
        "wc --files0-from=list",
        "cat list | wc --files0-from=-",
        "wc --files0-from=list ascii",
        "wc --files0-from=nosuch",
        "wc --lin ascii",
        "wc ascii -l",
        "wc -- -l",
    ] {
        for env in LOCALES {
            same_as_gnu_sh_env(&dir, script, env);
        }
    }
}

#[test]
fn many_files_counted_in_parallel_print_in_order() {
    let dir = corpus();
    let mut names = Vec::new();
    for i in 0..60 {
        let name = format!("f{i:02}");
        let body: Vec<u8> = (0..(i * 997 % 5000))
            .map(|k| b"ab cd\n\t\xc3\xa9x "[(k + i) % 11])
            .collect();
        dir.write(&name, &body);
        names.push(name);
        if i % 17 == 5 {
            names.push("missing".to_string());
        }
        if i == 30 {
            names.push("big".to_string());
            names.push("utf8".to_string());
        }
    }
    let list = names.join(" ");
    for env in LOCALES {
        for opts in ["", "-lwmcL", "-c"] {
            same_as_gnu_sh_env(&dir, &format!("wc {opts} {list}"), env);
        }
    }
}

#[test]
fn file_names_are_quoted_as_gnu_quotes_them() {
    use std::os::unix::ffi::OsStrExt;
    let dir = corpus();
    for raw in [&b"nl\nname"[..], b"bad\xff", b"sp ace", b"it's"] {
        std::fs::write(
            dir.tmp.path().join(std::ffi::OsStr::from_bytes(raw)),
            b"x y\n",
        )
        .unwrap();
    }
    for script in [
        "wc \"$(printf 'nl\\nname')\" ascii",
        "wc \"$(printf 'bad\\377')\" ascii",
        "wc 'sp ace' \"it's\" ascii",
        "wc 'no such' \"it's \\$x\" \"$(printf 'tab\\tx')\" \"$(printf '\\303\\251')\" ascii",
    ] {
        for env in LOCALES {
            same_as_gnu_sh_env(&dir, script, env);
        }
    }
}

#[test]
fn posixly_correct_keeps_no_break_spaces_inside_words() {
    let dir = corpus();
    dir.write(
        "nbsp",
        "a\u{a0}b c\u{2007}d e\u{202f}f g\u{2060}h i\u{3000}j\n".as_bytes(),
    );
    for env in [
        &[("LC_ALL", "C.UTF-8"), ("POSIXLY_CORRECT", "1")][..],
        &[("LC_ALL", "C.UTF-8")][..],
    ] {
        same_as_gnu_sh_env(&dir, "wc -lwmcL nbsp utf8", env);
    }
}

#[test]
fn kernel_pseudo_files_are_read_to_their_end() {
    // /proc and /sys files say 0 or 4096 bytes whatever they hold: read as streams.
    let dir = Dir::new();
    for f in [
        "/proc/version",
        "/proc/filesystems",
        "/proc/sys/kernel/ostype",
    ] {
        same_as_gnu_sh_env(
            &dir,
            &format!("wc {f}; wc < {f}; cmp {f} {f}; echo $?"),
            &[],
        );
    }
    let sys = "/sys/kernel/mm/transparent_hugepage/enabled";
    if std::path::Path::new(sys).exists() {
        same_as_gnu_sh_env(&dir, &format!("wc {sys}"), &[]);
    }
    same_as_gnu_sh_env(&dir, "cmp /proc/version /proc/filesystems; echo $?", &[]);
    same_as_gnu_sh_env(&dir, "grep -c . /proc/version; echo $?", &[]);
}

#[test]
fn dash_among_names_read_from_stdin() {
    let dir = Dir::new();
    dir.write("a", b"abc\n");
    same_as_gnu_sh_env(
        &dir,
        r"printf 'a\0-\0a\0' | wc --files0-from=-; echo $?",
        &[],
    );
}
