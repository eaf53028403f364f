import os
# Writes the golden logs of tests/cli/logs.rs next to this script: python3 make-logs.py
D = os.path.dirname(os.path.abspath(__file__))
DATE = b"[09/Oct/2007:12:00:00 -0700]"
def L(client, method, uri, status, nbytes, ref, agent=b'"Mozilla/5.0 (X11)"', sep=b" "):
    parts = [client, b"-", b"-", DATE, method, uri, b'HTTP/1.1"', status, nbytes, ref, agent]
    return sep.join(p if isinstance(p, bytes) else p.encode() for p in parts if p is not None)
G = b'"GET'
W = "/ongoing/When/200x/2007/10/"
a1 = W + "09/Alpha"; a2 = W + "10/Beta"; a3 = W + "11/Gamma"
# 61 bytes: truncated to its first 60 bytes + "..."; 60 bytes: printed whole.
a61 = W + "12/" + "L" * (61 - len(W + "12/"))
a60 = W + "13/" + "M" * (60 - len(W + "13/"))
assert len(a61) == 61 and len(a60) == 60
ref60 = "http://ref.example/" + "r" * (60 - len("http://ref.example/"))
ref61 = "http://ref.example/" + "s" * (61 - len("http://ref.example/"))
basic = [
    L("c1", G, a1, "200", "1000", '"http://ref.example/one"'),
    L("c2", G, a1, "200", "2000", '"-"'),
    L("c3", G, a1, "304", "-", '"http://www.tbray.org/ongoing/When/200x/"'),
    L("c1", G, a2, "200", "1048576", '"http://ref.example/two"'),
    L("c2", G, a2, "304", "-", '"http://ref.example/one"'),
    L("c4", G, a3, "200", "500", '"http://www.tbray.org/other"'),
    L("c5", '"POST', a3, "200", "999999", '"http://ref.example/post"'),
    L("c5", '"HEAD', a3, "200", "999999", '"http://ref.example/head"'),
    L("c5", '"HEAD', a3, "404", "0", '"-"'),
    L("c6", G, "/ongoing/", "200", "3000", '"-"'),
    L("c6", G, W + "09/", "200", "10", '"http://ref.example/empty-title"'),
    L("c6", G, W + "09/a.b", "200", "20", '"http://ref.example/dot"'),
    L("c7", G, a1, "404", "0", '"-"'),
    L("c7", G, "/missing", "404", "209", '"-"'),
    L("c8", G, "/missing", "404", "209", '"-"'),
    L("c9", G, a3, "404", "209", '"http://ref.example/404"'),
    # "GET in other fields: as the URI of a POST, in the referrer and agent of a HEAD, and as
    # the 5th field when the date lost its zone (the 6th is then the URI).
    L("c10", '"POST', '"GET', "200", "5", '"-"'),
    L("c10", '"HEAD', a1, "200", "5", '"GET', b'"GET /x"'),
    b'c10 - - [09/Oct/2007:12:00:00] "GET ' + a1.encode() + b' HTTP/1.1" 200 5 "-" "a"',
    L("c10", b'"GET"', a1, "200", "5", '"-"'),
    L("c10", b'GET', a1, "200", "5", '"-"'),
    # Referrers: unquoted, half-quoted, the self prefix without its quote.
    L("c11", G, a2, "200", "1", 'http://noquote.example/'),
    L("c11", G, a2, "200", "1", '"http://half.example/'),
    L("c11", G, a2, "200", "1", 'http://www.tbray.org/ongoing/unquoted'),
    L("c11", G, a2, "200", "1", '"http://www.tbray.org/ongoing'),
    # Long keys: client, URI and referrer of 60 and 61 bytes.
    L("x" * 61, G, a61, "200", "7", '"' + ref61 + '"'),
    L("y" * 60, G, a60, "304", "-", '"' + ref60 + '"'),
]
# Ties: twelve article URIs hit once each by twelve clients (key order decides the cut at 10),
# each with 100 bytes and its own referrer.
for i in [1, 2, 10, 11, 12, 3, 20, 4, 5, 6, 7, 8]:
    basic.append(L(f"10.0.0.{i}", G, W + f"20/t{i}", "200", "100", f'"http://tie.example/{i}"'))
open(f"{D}/basic.log", "wb").write(b"\n".join(basic) + b"\n")

# Separators: tabs, vertical tab, form feed, runs, CRLF, leading white space, bytes that look
# like spaces but are not separators, records joined by a lone CR, no final newline.
sep = [
    b'c1\t-\t-\x0b[09/Oct/2007:12:00:00\x0c-0700]  "GET \t ' + a1.encode() + b' HTTP/1.1"\t200\t100\t"-"\t"agent"\r',
    b'   c2 - - [d z] "GET ' + a1.encode() + b' HTTP/1.1" 200 100 "http://r.example/"\r',
    b'\t\x0bc3 - - [d z] "GET ' + a2.encode() + b' HTTP/1.1" 304 - "-"',
    b'c4\xc2\xa0x - - [d z] "GET ' + a2.encode() + b' HTTP/1.1" 200 7 "http://nbsp.example/"',
    b'c5\xa0 - - [d z] "GET ' + a2.encode() + b' HTTP/1.1" 200 7 "http://a0.example/"',
    b'c6\xe3\x80\x80y - - [d z] "GET ' + a2.encode() + b' HTTP/1.1" 200 7 "-"',
    b'c7 - - [d z] "GET ' + a3.encode() + b' HTTP/1.1" 200 100 "-" "ag"\rc8 - - [d z] "GET ' + a1.encode() + b' HTTP/1.1" 404 0 "-" "ag"',
    b'c9\x00 - - [d z] "GET ' + a3.encode() + b' HTTP/1.1" 200\x0b\x0c\t\r 1\x0c"http://ff.example/"\x0c',
    b'c10 - - [d z] "GET ' + a3.encode() + b' HTTP/1.1" 200 1 "http://ws.example/"\x0b\x0c\t\r \t',
    b'c11 - - [d z] "GET ' + a3.encode() + b' HTTP/1.1" 200 1 "http://last.example/" "no final newline"',
]
open(f"{D}/separators.log", "wb").write(b"\r\n".join(sep[:3]) + b"\n" + b"\n".join(sep[3:]))

# Garbage: malformed lines, binary data, non-numeric fields, near-miss article URIs.
gar = [
    b'c1 - - [d z] "GET ' + a1.encode() + b' HTTP/1.1" 200 100',           # 10 fields
    b'',                                                                  # empty line
    b' \t\x0b\x0c\r',                                                     # only white space
    b'\x00\xff\xfe\x80garbage\x01\x02\x7f',                                # binary, one field
    bytes(range(0, 10)) + bytes(range(11, 256)),                          # every byte but \n
    b'c2 - - [d z] "GET ' + a1.encode() + b' HTTP/1.1" 200 100 "-"',       # exactly 11 fields
    b'c3\xff\xfe - - [d z] "GET ' + (W + "21/inval\xff").encode("latin-1") + b' HTTP/1.1" 200 5 "http://\xc3\x28/"',
    b'c4 - - [d z] "GET ' + (W + "22/\xe2\x82\xac\x80\x00").encode("latin-1") + b' HTTP/1.1" 304 9 "\xff"',
    b'c5 - - [d z] "GET /ongoing/When/200x/2007/10/0\xd9\xa9/digit HTTP/1.1" 200 5 "-"',
    b'c5 - - [d z] "GET /ongoing/When/200X/2007/10/09/upper HTTP/1.1" 200 5 "-"',
    b'c5 - - [d z] "GET /ongoing/When/2000x/2007/10/09/year HTTP/1.1" 200 5 "-"',
    b'c5 - - [d z] "GET /x/ongoing/When/200x/2007/10/09/prefix HTTP/1.1" 200 5 "-"',
    b'c6 - - [d z] "GET /ongoing/When/200x/2007/10/09/a/b HTTP/1.1" 200 5 "-"',
    b'c6 - - [d z] "GET /ongoing/When/200x/2007/10/09/q?x=1 HTTP/1.1" 200 5 "-"',
    b'c6 - - [d z] "GET /ongoing/When/200x/2007/10/09/q?x=1.2 HTTP/1.1" 200 5 "-"',
    b'c6 - - [d z] "GET /ongoing/When/200x/2007/10/9/short HTTP/1.1" 200 5 "-"',
    b'c7 - - [d z] "GET /s/0200 HTTP/1.1" 0200 5 "-"',
    b'c7 - - [d z] "GET /s/200x HTTP/1.1" 200x 5 "-"',
    b'c7 - - [d z] "GET /s/2000 HTTP/1.1" 2000 5 "-"',
    b'c7 - - [d z] "GET /s/404x HTTP/1.1" 404x 5 "-"',
    b'c7 - - [d z] "GET /s/500 HTTP/1.1" 500 5 "-"',
    b'c7 - - [d z] "GET /s/301 HTTP/1.1" 301 5 "-"',
    b'c8 - - [d z] "GET /b/12x HTTP/1.1" 200 12x "-"',
    b'c8 - - [d z] "GET /b/plus HTTP/1.1" 200 +5 "-"',
    b'c8 - - [d z] "GET /b/minus HTTP/1.1" 200 -5 "-"',
    b'c8 - - [d z] "GET /b/zeros HTTP/1.1" 200 00042 "-"',
    b'c8 - - [d z] "GET /b/dash HTTP/1.1" 200 - "-"',
    b'c9 - - [d z] "get ' + a1.encode() + b' HTTP/1.1" 200 5 "-"',
    b'c9 - - [d z] "GETX ' + a1.encode() + b' HTTP/1.1" 200 5 "-"',
    b'c10 - - [d z] "GET ' + a2.encode() + b' HTTP/1.1" 200 5 "',
    b'c10 - - [d z] "GET ' + a2.encode() + b' HTTP/1.1" 200 5 ""',
    b'c10 - - [d z] "GET ' + a2.encode() + b' HTTP/1.1" 200 5 "-',
    b'c10 - - [d z] "GET ' + a2.encode() + b' HTTP/1.1" 200 5 -',
    b'c10 - - [d z] "GET ' + a2.encode() + b' HTTP/1.1" 200 5 "-""',
    b'\x00 \x01 \x02 \x03 \x04 "GET \x06 \x07 200 \x0e \x0f',
    b'a b c d e "GET g h 404 j k',
    b'a b c d e "GET',
]
# The line of every byte but \n contains separators: count its fields so the test knows.
open(f"{D}/garbage.log", "wb").write(b"\n".join(gar) + b"\n\n")

# Saturation: byte counts beyond u64 and sums past it stay at u64::MAX.
sat = [
    b'c8 - - [d z] "GET /b/huge HTTP/1.1" 200 99999999999999999999999999999 "-"',
    b'c8 - - [d z] "GET /b/huge HTTP/1.1" 200 1 "-"',
    b'c8 - - [d z] "GET /b/max HTTP/1.1" 200 18446744073709551615 "-"',
    b'c8 - - [d z] "GET /b/max1 HTTP/1.1" 200 18446744073709551616 "-"',
    b'c8 - - [d z] "GET /b/two HTTP/1.1" 200 18446744073709551610 "-"',
    b'c8 - - [d z] "GET /b/two HTTP/1.1" 200 10 "-"',
    b'c8 - - [d z] "GET /b/small HTTP/1.1" 200 1048576 "-"',
]
open(f"{D}/saturation.log", "wb").write(b"\n".join(sat) + b"\n")

open(f"{D}/empty.log", "wb").write(b"")

# MiB rounding: printf rounds the exact double half to even.
rnd = []
for name, n in [("quarter", 262144), ("three-quarters", 786432), ("one-and-quarter", 1310720),
                ("just-over-0.05", 52429), ("just-under-0.05", 52428), ("zero", 0),
                ("one-byte", 1), ("999.95MiB", 1048523571), ("9999.95MiB-ish", 10485707571),
                ("exactly-0.15-ish", 157286), ("2.25", 2359296), ("big", 123456789012345)]:
    rnd.append(L("c1", G, "/r/" + name, "200", str(n), '"-"'))
open(f"{D}/rounding.log", "wb").write(b"\n".join(rnd) + b"\n")
