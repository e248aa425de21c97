"""The lab stays a package of small modules: none over 450 lines, no function over 60 (issue 17)."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "strata_lab"


def modules():
    return sorted(PACKAGE.rglob("*.py"))


def test_no_lab_module_is_over_450_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in modules() if (n := p.read_text().count("\n")) > 450}
    assert not long, long


def test_no_lab_function_is_over_60_lines():
    long = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 60:
                long[f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"] = node.end_lineno - node.lineno + 1
    assert not long, long
