"""The symbol registry (inference_math.core.symbols) and the derivation registry (registry.py)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import sympy as sp

import inference_math  # noqa: F401  (importing the package registers every derivation)
from inference_math import DERIVATIONS
from inference_math.core import registry
from inference_math.core import symbols as S
from inference_math.core.registry import LABEL_RE, derivation

LABEL_PATTERN = re.compile(r"^eq-[a-z0-9]+-[a-z0-9]+(-[a-z0-9]+)*$")
KNOWN_TOPICS = {"model", "moe", "hardware", "serving", "scaling", "intensity", "kv", "sharding",
                "dense", "deepseek", "rollouts", "full", "sparse", "compressed",
                "sensitivity"}
REGISTERED_SYMBOLS = {entry.symbol for entry in S.REGISTRY.values()}
ALL_LABELS = sorted(DERIVATIONS)


# --- symbol registry ------------------------------------------------------------------------


def test_registry_is_not_empty_and_holds_the_toy_model_symbols():
    """Erdil (2025) sec. 2: p, N, B, C, b, N_GPU, n_layers, n_reduce, t_hop all exist."""
    for name in ("p", "n_param", "hbm_bw", "flops", "b", "n_gpu", "n_layers", "n_reduce",
                 "t_hop", "s"):
        assert name in S.REGISTRY


@pytest.mark.parametrize("name", sorted(S.REGISTRY))
def test_every_symbol_has_latex_unit_and_meaning(name):
    """The notation chapter needs a non-empty LaTeX name, unit and meaning per symbol."""
    entry = S.REGISTRY[name]
    assert entry.name == name
    assert entry.latex.strip()
    assert entry.unit.strip()
    assert entry.meaning.strip()
    assert entry.topic in KNOWN_TOPICS
    assert entry.symbol.name == entry.latex


def test_latex_names_are_distinct():
    """Two symbols with one LaTeX name would print identically in the book."""
    counts = Counter(entry.latex for entry in S.REGISTRY.values())
    assert [latex for latex, n in counts.items() if n > 1] == []


def test_symbols_are_distinct_objects():
    """One SymPy object per registry entry (sec. 'symbols': each symbol is created once)."""
    assert len(REGISTERED_SYMBOLS) == len(S.REGISTRY)


def test_module_attributes_are_the_registry_symbols():
    """``symbols.<name>`` is the object stored under ``REGISTRY[name]``."""
    for name, entry in S.REGISTRY.items():
        assert getattr(S, name) is entry.symbol


# quantities that are zero in real settings: an empty context, NCCL's Simple protocol's base
# latency, a device without kernel-launch cost, one GPU's network time, no pipeline, experts on one
# node (the reference code's ξ_EP = 0), no network time hidden (ω = 0), the estimate's fixed
# step time and start-up costs (a fit may find none), a dense layer's indexer (none: no cache,
# FLOPs or weights), the first query of a pass (j = 0), the prompt tokens' share of a mixed
# step (none when the decode tokens alone bind it) and a quantile of a prompt's wait in a queue
# (none below the share of arrivals that find it empty)
NONNEGATIVE = {"ctx", "lat_base", "t_kernel", "t_net", "kv_layer", "state_layer", "n_quant",
               "n_sh", "t_pipe", "xi_ep", "omega_net", "t_fixed_step", "beta_half", "m_half",
               "tau_kernel", "kv_idx", "f_idx", "w_idx", "j_query", "kv_win", "ctx_win", "st_cmp",
               "ctx_wread", "xi_idx", "xi_mha", "phi_in", "t_wait_q",
               "t_flop_exp"}
# elasticities, a logarithm and the constraints' derivatives: real, of either sign
SIGNED = {"elasticity", "eps_cost", "eps_price", "u_log", "g1_n", "g1_b", "g1_x", "g2_n", "g2_b",
          "g2_x"}


@pytest.mark.parametrize("name", sorted(set(S.REGISTRY) - SIGNED - NONNEGATIVE))
def test_physical_quantities_are_positive(name):
    """Sizes, times, rates and prices are positive reals (needed by the simplifications)."""
    sym = S.REGISTRY[name].symbol
    assert sym.is_positive is True
    assert S.REGISTRY[name].assumptions in {"positive real", "positive integer"}


@pytest.mark.parametrize("name", sorted(NONNEGATIVE))
def test_quantities_that_may_be_zero_are_nonnegative_reals(name):
    sym = S.REGISTRY[name].symbol
    assert sym.is_nonnegative is True and sym.is_real is True


@pytest.mark.parametrize("name", sorted(SIGNED))
def test_elasticities_are_real_but_may_be_negative(name):
    """d log t_min / d log B is -1/3 in the limit (Erdil 2025 sec. 5.1), so not positive."""
    assert S.REGISTRY[name].symbol.is_real is True
    assert S.REGISTRY[name].symbol.is_positive is None
    assert S.REGISTRY[name].assumptions == "real"


def test_info_and_by_name_round_trip():
    """info(symbol) and by_name(name) are inverse lookups into REGISTRY."""
    for name, entry in S.REGISTRY.items():
        assert S.info(entry.symbol) is entry
        assert S.by_name(name) is entry.symbol


def test_lookups_of_unknown_symbols_raise_keyerror():
    """A symbol made outside the registry is a different object and is rejected."""
    with pytest.raises(KeyError, match="not in the symbol registry"):
        S.info(sp.Integer(7))
    with pytest.raises(KeyError, match="no symbol named 'nope'.*n_param"):
        S.by_name("nope")


def test_defining_a_symbol_twice_is_refused():
    """Symbols are defined exactly once; a second definition raises before touching REGISTRY."""
    before = dict(S.REGISTRY)
    with pytest.raises(ValueError, match="defined twice"):
        S._define("p", "p2", "bytes", "again", "model", positive=True)
    assert S.REGISTRY == before


# --- derivation registry --------------------------------------------------------------------


def test_every_book_section_has_derivations():
    """Sections 2.1, 2.2, 2.2.3 and 3 of Erdil (2025) each contribute labelled equations."""
    topics = {label.split("-")[1] for label in DERIVATIONS}
    assert {"roofline", "wall", "scaling", "moe", "arch"} <= topics


@pytest.mark.parametrize("label", ALL_LABELS)
def test_label_has_the_form_eq_topic_slug(label):
    """Book equation labels are eq-<topic>-<slug> (registry.py docstring)."""
    assert LABEL_PATTERN.match(label)
    assert LABEL_RE.match(label)
    assert DERIVATIONS[label].label == label


@pytest.mark.parametrize("label", ALL_LABELS)
def test_derivation_returns_an_eq_of_a_registry_symbol(label):
    """Each derivation returns sympy.Eq whose lhs is one registered symbol."""
    eq = DERIVATIONS[label].function()
    assert isinstance(eq, sp.Equality)
    assert eq.lhs in REGISTERED_SYMBOLS


@pytest.mark.parametrize("label", ALL_LABELS)
def test_derivation_docstring_mentions_its_label(label):
    """The docstring names the book label so the reader can find the equation."""
    doc = DERIVATIONS[label].function.__doc__ or ""
    assert label in doc


@pytest.mark.parametrize("label", ALL_LABELS)
def test_derivation_cites_a_source(label):
    """Every derivation names the work it reproduces (author and year) or says it is the book's own."""
    source = DERIVATIONS[label].source
    assert re.search(r"[A-Z][A-Za-z-]+( et al\.)? \((19|20)\d\d\)", source) or "this book" in source
    assert DERIVATIONS[label].function.source == source
    assert DERIVATIONS[label].function.label == label


@pytest.mark.parametrize("label", ALL_LABELS)
def test_every_free_symbol_of_a_derivation_is_registered(label):
    """Derivations never create their own symbols (symbols.py module docstring)."""
    eq = DERIVATIONS[label].function()
    # A per-group value in a sum over layer groups is a registered symbol indexed by a
    # registered index (derivations.layer_mix): its base and index must both be registered.
    free = set()
    for item in eq.rhs.free_symbols:
        free |= {item.base.label, *item.indices} if isinstance(item, sp.Indexed) else {item}
    assert free <= REGISTERED_SYMBOLS
    assert eq.lhs not in free


def test_labels_are_unique_and_keys_match():
    """No duplicate labels: the dict keys are the labels and each label occurs once."""
    labels = [d.label for d in DERIVATIONS.values()]
    assert len(labels) == len(set(labels))
    assert labels == list(DERIVATIONS)


def test_registering_a_malformed_label_is_refused():
    """Labels not of the form eq-<topic>-<slug> raise ValueError at decoration time."""
    for bad in ("roofline-latency", "eq-latency", "eq-Roofline-latency", "eq_roofline_x"):
        with pytest.raises(ValueError, match="eq-<topic>-<slug>"):
            derivation(bad, "test")


def test_registering_a_duplicate_label_is_refused():
    """A second registration of an existing label raises ValueError."""
    with pytest.raises(ValueError, match="used twice"):
        derivation("eq-roofline-token-latency", "test")


def test_a_derivation_that_does_not_return_eq_raises_typeerror(monkeypatch):
    """The decorator enforces the sympy.Eq return type (registry.py)."""
    monkeypatch.setattr(registry, "DERIVATIONS", {})

    @derivation("eq-test-not-an-eq", "this book, test")
    def not_an_eq():
        """eq-test-not-an-eq"""
        return S.p + 1

    assert "eq-test-not-an-eq" in registry.DERIVATIONS
    with pytest.raises(TypeError, match="must return a sympy Eq"):
        not_an_eq()
    assert "eq-test-not-an-eq" not in DERIVATIONS
