"""Rooms of one concept stay readable: no source file of the project over 900 lines, no
function over 150 (C++ from its signature's first line to its closing brace, Python from its
`def` to its last line). A file or function that grows past them is split where its concepts
part, not trimmed."""
import ast
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAX_FILE_LINES = 900
MAX_FUNCTION_LINES = 150

SOURCE_PATTERNS = ["*.cpp", "*.h", "*.py", "*.sh", "*.cmake", "*CMakeLists.txt", "*.hlsl",
                   "*.comp", ".ci/run"]


def sources():
    listed = subprocess.run(["git", "ls-files", "-z", *SOURCE_PATTERNS], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.split("\0")
    # A measurement's folder keeps what it ran as it was run; it is a record, not a source.
    return [p for p in listed
            if p and not p.startswith("docs/results/") and (ROOT / p).is_file()]


def blank_comments_and_literals(text):
    """The C++ text with comments, string and character literals blanked (newlines kept), so
    that braces count only where they are code."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


CONTROL = re.compile(r"(if|for|while|switch|catch|do|else|return)\b")
# What may follow a function's parameter list before its body: qualifiers, a trailing return
# type, a constructor's initializers (whose parentheses end the head too).
FUNCTION_HEAD = re.compile(r"\)\s*(const|noexcept|override|final|mutable|->\s*[\w:<>,\s*&]+|\s)*$")


def cpp_functions(text):
    """(first line, lines, name) of each function body that is not inside another's."""
    code = blank_comments_and_literals(text)
    found, stack, inside, last = [], [], 0, 0
    for i, c in enumerate(code):
        if c not in ";{}":
            continue
        head = " ".join(code[last:i].split())
        start = last
        last = i + 1
        if c == "{":
            is_function = (not inside and FUNCTION_HEAD.search(head)
                           and not CONTROL.match(head)
                           and not re.search(r"\b(namespace|struct|class|enum|union)\b[^()]*$", head)
                           # an initializer (`auto f = [] {`), but not `operator=` or `==`
                           and "=" not in re.sub(r"operator\s*[^\s(]+", "operator",
                                                 head).split("(")[0])
            if is_function:
                first = code.count("\n", 0, start + len(code[start:i]) - len(code[start:i].lstrip())) + 1
                names = re.findall(r"((?:[\w:]*operator\s*[^\s(]+)|[~\w:]+)\s*\(", head)
                stack.append((True, first, names[0] if names else head[:40]))
                inside += 1
            else:
                stack.append((False, 0, ""))
        elif c == "}" and stack:
            was_function, first, name = stack.pop()
            if was_function:
                inside -= 1
                found.append((first, code.count("\n", 0, i) + 1 - first + 1, name))
    return found


def python_functions(text):
    return [(node.lineno, node.end_lineno - node.lineno + 1, node.name)
            for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def oversized(files, root=ROOT):
    found = []
    for relative in files:
        text = (root / relative).read_text(errors="replace")
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_FILE_LINES:
            found.append(f"{relative}: {lines} lines, more than {MAX_FILE_LINES}")
        if relative.endswith((".cpp", ".h")):
            functions = cpp_functions(text)
        elif relative.endswith(".py"):
            functions = python_functions(text)
        else:
            functions = []
        for first, length, name in functions:
            if length > MAX_FUNCTION_LINES:
                found.append(f"{relative}:{first}: {name} is {length} lines, more than "
                             f"{MAX_FUNCTION_LINES}")
    return found


def test_no_source_file_or_function_is_over_its_limit():
    assert oversized(sources()) == []


def test_the_check_measures_functions_and_files(tmp_path):
    body = "".join(f"  x += {i};\n" for i in range(150))
    half = "".join(f"  x += {i};\n" for i in range(75))
    (tmp_path / "long.cpp").write_text(
        "namespace n {\n"
        "// a comment with a brace {\n"
        "int long_one(int x) {\n" + body + "  return x;\n}\n"
        "struct S {\n  int short_one() const { return 1; }\n"
        "  bool operator==(const S&) const {\n    return true;\n  }\n};\n"
        "const char* text = \"}{\";\n"
        "int fits(int x) {\n" + half + "  if (x) {\n    return 2;\n  }\n"
        "  return x;\n}\n"
        "}  // namespace n\n")
    (tmp_path / "long.py").write_text("def f():\n" + "    x = 1\n" * 150 + "    return x\n")
    (tmp_path / "big.h").write_text("// a line\n" * 901)
    found = oversized(["long.cpp", "long.py", "big.h"], tmp_path)
    assert found == [
        "long.cpp:3: long_one is 153 lines, more than 150",
        "long.py:1: f is 152 lines, more than 150",
        "big.h: 901 lines, more than 900",
    ], found
    lengths = {name: length for _, length, name in cpp_functions(
        (tmp_path / "long.cpp").read_text())}
    assert lengths["short_one"] == 1 and lengths["fits"] == 81, lengths
    assert lengths["operator=="] == 3, lengths
