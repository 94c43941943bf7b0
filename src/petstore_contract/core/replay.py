"""The replay of a recorded request: one ``curl`` command line that sends exactly the bytes judged.

Quoting (a POSIX shell: sh, bash, zsh, dash, ksh):

- every word is single-quoted, a single quote inside written ``'\\''``: ``$``, backticks, ``\\``,
  ``!``, ``*`` and the rest stay literal;
- the one thing left to the shell is the key's variable, ``$<KEY_VARIABLE>`` exactly (the redactor's
  placeholder for the key), in double quotes: ``-H "Authorization: Bearer $PETSTORE_API_KEY"`` where the
  rest of the word needs no quoting, ``'...'"$PETSTORE_API_KEY"'...'`` elsewhere;
- the body goes with ``--data-raw`` (``--data-binary`` reads a body that begins with ``@`` from a file,
  ``-d`` also drops CR and LF).  A body with a newline, another control character or bytes that are not
  UTF-8 is written in ANSI-C quoting, ``$'...\\n...\\xff...'`` (bash, zsh, ksh, busybox sh and
  POSIX.1-2024 sh; not dash before 0.5.13): the line stays one line and every byte is written out.  A
  body holding a NUL byte, which no command-line argument can carry, is piped in:
  ``printf '%b' '...\\0000...' | curl ... --data-binary @-``;
- a request sent without ``Content-Type`` gets ``-H 'Content-Type:'``, which stops curl from adding
  its own (``application/x-www-form-urlencoded``) to a body.

A body the record holds cut (longer than ``records.BODY_EXCERPT``) cannot be replayed: the line ends
with a shell comment that says so.

The run's own replay line (``rerun``) names the program that runs the suite in the environment that made
the report: ``petstore-contract`` where that environment's console script is the one on ``PATH``, else
the script by its path (``.venv/bin/petstore-contract`` under the directory of the run, the README's
editable checkout), else ``<python> -m petstore_contract.cli``.  Each finds the suite itself, an editable
checkout's ``tests/`` or a wheel's ``petstore_contract.suite`` (``cli.suite_arguments``), which a
``pytest --pyargs petstore_contract.suite`` line does only in a wheel.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import sys
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path

_BARE = re.compile(r"[A-Za-z0-9_%+=:,./-]+")  # no shell reads anything into these (shlex's set, less @)
_SAFE_IN_DOUBLE = re.compile(r'[^"\\`$!]*')  # nothing a shell would read inside double quotes
_PLAIN_BODY = re.compile(r"[^\x00-\x1f\x7f]*")  # printable text: plain single quotes suffice
_CUT = re.compile(r"… \[cut: [\d,]+ characters in all\]\Z")
_ANSI_C = {0x5C: "\\\\", 0x27: "\\'", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}


def single(text: str) -> str:
    """``text`` as one POSIX shell word taken literally (bare where no character needs quoting)."""
    if _BARE.fullmatch(text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def word(text: str, key_variable: str = "", quote: Callable[[str], str] = single) -> str:
    """``text`` as one shell word: literal, but for the key's variable ``$<key_variable>``."""
    parts = _split(text, key_variable)
    if len(parts) == 1:
        return quote(text)
    variable = "$" + key_variable
    if quote is single and all(_SAFE_IN_DOUBLE.fullmatch(part) for part in parts):
        return '"' + variable.join(parts) + '"'
    return f'"{variable}"'.join(quote(part) if part else "" for part in parts)


def _split(text: str, key_variable: str) -> list[str]:
    """``text`` cut at each ``$<key_variable>`` that is the whole name (not ``$<key_variable>_X``)."""
    if not key_variable:
        return [text]
    return re.split(re.escape("$" + key_variable) + r"(?![A-Za-z0-9_])", text)


def ansi_c(text: str) -> str:
    """``text`` (a body as bytes decoded ``surrogateescape``) in ANSI-C quoting, every byte written out."""
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code in _ANSI_C:
            out.append(_ANSI_C[code])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        else:
            out.append(char)
    return "$'" + "".join(out) + "'"


def _printf(text: str) -> str:
    """``text`` for ``printf '%b'``: backslashes doubled, bytes outside printable text as ``\\0ooo``."""
    out = []
    for char in text:
        code = ord(char)
        byte = code - 0xDC00 if 0xDC80 <= code <= 0xDCFF else code
        if char == "\\":
            out.append("\\\\")
        elif byte != code or code < 0x20 or code == 0x7F:
            out.append(f"\\0{byte:03o}")
        else:
            out.append(char)
    return single("".join(out))


def body_text(body: bytes) -> str:
    """The body's bytes as text that keeps every byte (``surrogateescape``)."""
    return body.decode("utf-8", "surrogateescape")


def recorded_body(body: bytes | str | None, show: Callable[[str], str]) -> tuple[str | None, str | None]:
    """What a record keeps of a request body: its text (``show``-redacted; bytes that are not UTF-8
    as U+FFFD) and, only when it is not UTF-8, its exact bytes in base64 (redacted the same way)."""
    if body is None:
        return None, None
    if isinstance(body, str):
        return show(body), None
    try:
        return show(body.decode("utf-8")), None
    except UnicodeDecodeError:
        exact = show(body_text(body)).encode("utf-8", "surrogateescape")
        return show(body.decode("utf-8", "replace")), base64.b64encode(exact).decode("ascii")


def _url_options(url: str, headers: Sequence[tuple[str, str]]) -> list[str]:
    """What curl needs to send the request-target and read the answer as the suite did: dot segments kept
    (``--path-as-is``), brackets and braces taken literally (``-g``), the body's bytes as they came when a
    content coding was negotiated (``--raw``: no decoding of any coding)."""
    path = url.split("://", 1)[-1].partition("/")[2].split("?", 1)[0]
    options = []
    if any(segment in (".", "..") for segment in path.split("/")):
        options.append("--path-as-is")
    if any(char in url for char in "[]{}"):
        options.append("-g")
    if any(name.lower() == "accept-encoding" for name, _ in headers):
        options.append("--raw")
    return options


def curl(
    method: str,
    url: str,
    headers: Sequence[tuple[str, str]],
    body: str | None,
    body_base64: str | None = None,
    key_variable: str = "",
) -> str:
    """The command line (see the module's docstring); ``body``: the record's text, ``body_base64``: the
    exact bytes when the record has them apart."""
    parts = ["curl", "-sS", "-i", *_url_options(url, headers)]
    parts += ["--head"] if method == "HEAD" else ["-X", single(method)]  # -X HEAD would wait for a body
    for name, value in headers:
        parts += ["-H", word(f"{name}: {value}", key_variable)]
    prefix, note = "", ""
    if body is not None:
        if not any(name.lower() == "content-type" for name, _ in headers):
            parts += ["-H", single("Content-Type:")]
        text = body_text(base64.b64decode(body_base64)) if body_base64 is not None else body
        if _CUT.search(text):
            note = "  # the record holds this body cut: this line does not send the bytes that were judged"
        if "\x00" in text:
            prefix = f"printf '%b' {word(text, key_variable, _printf)} | "
            parts += ["--data-binary", "@-"]
        elif _PLAIN_BODY.fullmatch(text) and not any(0xDC80 <= ord(c) <= 0xDCFF for c in text):
            parts += ["--data-raw", word(text, key_variable)]
        else:
            parts += ["--data-raw", word(text, key_variable, ansi_c)]
    parts.append(word(url, key_variable))
    return prefix + " ".join(parts) + note


SCRIPT = "petstore-contract"  # the console script (pyproject.toml, [project.scripts])


def suite_program(cwd: Path | None = None) -> str:
    """How to start the suite again in this environment, from ``cwd`` (the directory of the run), as shell words."""
    here = Path.cwd() if cwd is None else cwd
    script = Path(sysconfig.get_path("scripts")) / (SCRIPT + (".exe" if os.name == "nt" else ""))
    if not script.is_file():  # installed without its scripts (pip install --target): the module is there
        return f"{single(sys.executable)} -m petstore_contract.cli"
    on_path = shutil.which(SCRIPT)
    if on_path is not None and Path(on_path).resolve() == script.resolve():
        return SCRIPT
    try:
        return single(str(script.relative_to(here)))
    except ValueError:
        return single(str(script))


def rerun(program: str, options: Sequence[tuple[str, str | None]]) -> str:
    """The run's command line: ``program`` and each (option, value) given, the values as shell words."""
    words = [program]
    for flag, value in options:
        words += [flag] if value is None else [flag, single(value)]
    return " ".join(words)
