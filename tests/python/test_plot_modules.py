"""plots/README.md's rules on plot.py's modules: their imports of each other go one way (no
cycles, nothing imports plot.py), no module over 600 lines, no function over 150."""
import ast
import pathlib

PLOTS = pathlib.Path(__file__).resolve().parents[2] / "plots"


def local_imports():
    """{module: the modules beside it that it imports}."""
    names = {path.stem for path in PLOTS.glob("*.py")}
    graph = {}
    for path in PLOTS.glob("*.py"):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
        graph[path.stem] = imported & names
    return graph


def test_the_modules_import_each_other_without_cycles():
    graph = local_imports()
    assert "plot" in graph and len(graph) > 1
    assert not [m for m, imported in graph.items() if "plot" in imported]
    done, visiting = set(), []

    def visit(module):
        assert module not in visiting, " -> ".join(visiting + [module])
        if module in done:
            return
        visiting.append(module)
        for imported in sorted(graph[module]):
            visit(imported)
        visiting.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
    assert graph["inputs"] == set()


def test_no_module_over_600_lines_nor_function_over_150():
    for path in PLOTS.glob("*.py"):
        text = path.read_text()
        assert len(text.splitlines()) <= 600, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.lineno + 1 <= 150, f"{path.name}: {node.name}"
