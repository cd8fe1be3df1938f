"""The SymPy-free names of the symbol registry (core/names.py): current, and the registry's."""

from inference_math.codegen import names_codegen as codegen
from inference_math.core import names
from inference_math.core import symbols as S


def test_the_generated_module_is_current():
    assert codegen.module_source() == codegen.TARGET.read_text()


def test_every_name_is_its_symbols_registry_name():
    assert names.NAMES == tuple(S.REGISTRY)
    for name in names.NAMES:
        assert getattr(names, name) == name
        assert getattr(S, name) is S.by_name(name)
