"""How the book typesets a SymPy result: ordered terms, readable powers and explicit line breaks.

SymPy prints a sum in its canonical order, which puts a negative term first ("−n_dense + n_layers")
and a constant last ("−n_active/n_expert + 1"); it prints a rational power as a nested fraction in
a superscript; and it prints any result on one line, however long. A reader's screen is narrower
than that: MathJax 3 breaks no line by itself. This module prints

* a sum with its positive terms first (``n_layers − n_dense``, ``1 − n_active/n_expert``);
* rational powers inline (``x^{2/3}``) and natural logarithms as ``ln``;
* an equation wider than :data:`BUDGET_EM` in several lines (``aligned``): a sum breaks between
  terms, a long factor in parentheses between its terms, a maximum or minimum between its
  arguments, a long case of a piecewise result onto rows of its own.

It changes the printing only, never the expression: what is shown is the tested result. Widths
are estimated from the LaTeX (:func:`tex_width`, in em), calibrated against the widths Chromium
measures for the built book's equations.
"""

from __future__ import annotations

import re
from contextvars import ContextVar

import sympy as sp
from sympy.printing.latex import LatexPrinter

#: Widest line, in em, of a display equation: a phone's column (390 px wide screen) beside the
#: equation's number. The browser tests measure the result at 390 and 1400 px.
BUDGET_EM = 15.0

_SETTINGS = {"fold_frac_powers": True, "ln_notation": True}
#: True while a display form (an expression written for reading) is printed: its sums, products
#: and minima keep the order they were written in.
WRITTEN: ContextVar[bool] = ContextVar("written", default=False)


class BookPrinter(LatexPrinter):
    """SymPy's LaTeX printer with a sum's positive terms first (or, for a display form, in the
    order written)."""

    def __init__(self, settings=None):
        settings = dict(_SETTINGS, **(settings or {}))
        if WRITTEN.get():
            settings["order"] = "none"
        super().__init__(settings)

    def _as_ordered_terms(self, expr, order=None):
        terms = super()._as_ordered_terms(expr, order=order)
        if (not WRITTEN.get() and isinstance(expr, sp.Add) and terms
                and terms[0].could_extract_minus_sign()):
            positive = [t for t in terms if not t.could_extract_minus_sign()]
            negative = [t for t in terms if t.could_extract_minus_sign()]
            terms = positive + negative
        return terms

    def _hprint_variadic_function(self, expr, exp=None) -> str:
        if not WRITTEN.get():
            return super()._hprint_variadic_function(expr, exp)
        args = ", ".join(self._print(a) for a in expr.args)
        text = rf"\{str(expr.func).lower()}\left({args}\right)"
        return f"{text}^{{{exp}}}" if exp is not None else text

    _print_Min = _print_Max = _hprint_variadic_function


class WrittenMin(sp.Function):
    """``min(a, b, ...)`` with its arguments in the order written (SymPy's ``Min`` sorts them);
    ``doit()`` is SymPy's ``Min``."""

    def doit(self, **hints):
        return sp.Min(*(a.doit(**hints) if hints.get("deep", True) else a for a in self.args))

    def _latex(self, printer):
        return r"\min\left(" + ", ".join(printer._print(a) for a in self.args) + r"\right)"


class WrittenMax(sp.Function):
    """``max(a, b, ...)`` with its arguments in the order written; ``doit()`` is SymPy's ``Max``."""

    def doit(self, **hints):
        return sp.Max(*(a.doit(**hints) if hints.get("deep", True) else a for a in self.args))

    def _latex(self, printer):
        return r"\max\left(" + ", ".join(printer._print(a) for a in self.args) + r"\right)"


class FlagCases(sp.Function):
    """A 0/1 switch of the model written as its two cases in words: ``Sub(flag, on, off)`` of a
    subclass ``Sub`` whose :attr:`cases` are the words of each case prints
    ``{on, if <words>; off, if <words>}``, and ``doit()`` is ``flag·on + (1 − flag)·off``, the form
    the derivation computes with (so that a reader never meets the flag itself)."""

    nargs = 3
    #: the words of the case ``flag = 1`` and of the case ``flag = 0``
    cases: tuple[str, str] = ("", "")

    def doit(self, **hints):
        flag, on, off = (a.doit(**hints) if hints.get("deep", True) else a for a in self.args)
        return flag * on + (1 - flag) * off

    def _latex(self, printer):
        _, on, off = self.args
        rows = [printer._print(value) + r", & \text{if " + words + "}"
                for value, words in zip((on, off), self.cases, strict=True)]
        return r"\begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"


class StatedCondition(sp.logic.boolalg.BooleanFunction):
    """A condition of a piecewise result stated in words: ``Sub(condition)`` of a subclass
    ``Sub`` whose :attr:`words` say what the condition means prints the words, and ``doit()`` is
    the condition (a flag's comparison the derivation computes with)."""

    nargs = 1
    #: what the condition says, read after "if"
    words: str = ""

    def doit(self, **hints):
        return self.args[0].doit(**hints) if hints.get("deep", True) else self.args[0]

    def _latex(self, printer):
        return r"\text{" + self.words + "}"


class Log2(sp.Function):
    """``log₂ x`` as written (SymPy turns ``log(x, 2)`` into ``log(x)/log(2)``); ``doit()`` is
    SymPy's ``log(x)/log(2)``."""

    def doit(self, **hints):
        arg = self.args[0].doit(**hints) if hints.get("deep", True) else self.args[0]
        return sp.log(arg) / sp.log(2)

    def _latex(self, printer):
        return r"\log_{2}{\left(" + printer._print(self.args[0]) + r"\right)}"


def tex(expr: sp.Basic) -> str:
    """LaTeX of a SymPy object as the book prints it, on one line."""
    return BookPrinter().doprint(expr)


def ordered_terms(expr: sp.Add) -> list[sp.Basic]:
    return BookPrinter()._as_ordered_terms(expr)


def variadic_args(expr: sp.Basic) -> list[sp.Basic]:
    """The arguments of a maximum or minimum in the order they are printed."""
    return list(expr.args) if WRITTEN.get() else sorted(expr.args, key=sp.default_sort_key)


# --- width of LaTeX, in em ---------------------------------------------------------------------

_SCALE = {0: 1.0, 1: 1.0, 2: 0.71, 3: 0.5}  # display, text, script, scriptscript
_ROMAN = {"m": 0.83, "w": 0.72, "i": 0.28, "l": 0.28, "j": 0.31, "t": 0.39, "f": 0.31, "r": 0.39,
          "s": 0.39, "I": 0.36, "M": 0.92, "W": 1.03, " ": 0.33}
_ITALIC = {"m": 0.88, "w": 0.72, "i": 0.35, "l": 0.3, "j": 0.41, "t": 0.36, "f": 0.49, "r": 0.45,
           "s": 0.47, "M": 0.97, "W": 1.05, "I": 0.5, "N": 0.88, "T": 0.7, "F": 0.75, "S": 0.65}
_OPS = {"+": 1.22, "-": 1.22, "=": 1.33, "<": 1.33, ">": 1.33, ",": 0.45, "/": 0.5, "(": 0.39,
        ")": 0.39, "[": 0.28, "]": 0.28, "|": 0.28, "!": 0.28, "'": 0.3, "*": 0.5, ".": 0.28,
        ":": 0.28, ";": 0.28}
_COMMANDS = {
    "max": 1.9, "min": 1.56, "log": 1.45, "ln": 1.0, "exp": 1.6, "lim": 1.45, "sup": 1.5,
    "cdot": 0.72, "times": 1.22, "leq": 1.33, "geq": 1.33, "le": 1.33, "ge": 1.33, "neq": 1.33,
    "approx": 1.33, "to": 1.56, "infty": 1.0, "quad": 1.0, "qquad": 2.0, ",": 0.17, ":": 0.22,
    ";": 0.28, "!": -0.17, " ": 0.25, "lfloor": 0.45, "rfloor": 0.45, "lceil": 0.45,
    "rceil": 0.45, "partial": 0.56, "ldots": 1.17, "cdots": 1.17, "lbrace": 0.5, "rbrace": 0.5,
    "{": 0.5, "}": 0.5, "%": 0.83, "$": 0.5, "_": 0.5, "&": 0.78, "#": 0.83, "prime": 0.3,
    "sum": 1.45, "prod": 1.28, "binom": 0.0, "Sigma": 0.72, "Delta": 0.83, "Phi": 0.72,
    "Gamma": 0.63, "Lambda": 0.69, "Omega": 0.72, "Pi": 0.75, "Theta": 0.78, "Psi": 0.78,
    "varepsilon": 0.47, "epsilon": 0.41, "ell": 0.42, "in": 0.94,
}
_SPACE_OPS = {"times", "cdot", "leq", "geq", "le", "ge", "neq", "approx", "to", "in"}


class _Reader:
    def __init__(self, text: str):
        self.s = text
        self.i = 0

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def command(self) -> str:
        start = self.i = self.i + 1  # past the backslash
        if self.i < len(self.s) and self.s[self.i].isalpha():
            while self.i < len(self.s) and self.s[self.i].isalpha():
                self.i += 1
        else:
            self.i += 1
        return self.s[start:self.i]

    def group(self) -> str:
        """The next argument: a braced group's contents, a command or one character."""
        while self.peek() == " ":
            self.i += 1
        if self.peek() == "{":
            depth, start = 0, self.i
            while self.i < len(self.s):
                c = self.s[self.i]
                if c == "\\":
                    self.i += 2
                    continue
                depth += c == "{"
                depth -= c == "}"
                self.i += 1
                if depth == 0:
                    return self.s[start + 1:self.i - 1]
            return self.s[start + 1:]
        if self.peek() == "\\":
            start = self.i
            self.command()
            return self.s[start:self.i]
        self.i += 1
        return self.s[self.i - 1]

    def optional(self) -> str | None:
        while self.peek() == " ":
            self.i += 1
        if self.peek() != "[":
            return None
        end = self.s.index("]", self.i)
        text, self.i = self.s[self.i + 1:end], end + 1
        return text

    def environment(self, name: str) -> str:
        """The body of ``\\begin{name}`` up to its ``\\end{name}`` (nesting counted)."""
        depth, start = 1, self.i
        pattern = re.compile(r"\\(begin|end)\{" + re.escape(name) + r"\}")
        for m in pattern.finditer(self.s, self.i):
            depth += 1 if m.group(1) == "begin" else -1
            if depth == 0:
                self.i = m.end()
                return self.s[start:m.start()]
        self.i = len(self.s)
        return self.s[start:]


def _split_top(body: str, sep: str) -> list[str]:
    """``body`` split at ``sep`` (``\\\\`` or ``&``) outside braces and nested environments."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(body):
        if body.startswith("\\begin{", i) or body.startswith("\\end{", i):
            depth += 1 if body.startswith("\\begin{", i) else -1
            i += 5
            continue
        if depth == 0 and body.startswith(sep, i):
            parts.append(body[start:i])
            i += len(sep)
            start = i
            continue
        c = body[i]
        if c == "\\":
            i += 2
            continue
        depth += (c == "{") - (c == "}")
        i += 1
    parts.append(body[start:])
    return parts


def _rows(body: str) -> list[list[str]]:
    return [_split_top(row, "&") for row in _split_top(body, "\\\\")]


def tex_width(text: str, style: int = 0) -> float:
    """Estimated width in em of LaTeX math as MathJax sets it (``style``: 0 display, 1 text, 2
    script, 3 scriptscript)."""
    scale = _SCALE[style]
    r = _Reader(text)
    width = 0.0
    font = "italic"
    while r.i < len(r.s):
        c = r.peek()
        if c == "\\":
            if r.s.startswith("\\\\", r.i):  # a row break outside an environment: like aligned
                return max(tex_width(row, style) for row in _split_top(text, "\\\\"))
            name = r.command()
            if name in ("frac", "dfrac", "tfrac", "binom"):
                inner = {"dfrac": 1, "tfrac": 2}.get(name, min(style + 1, 3))
                inner = max(inner, 1)
                num, den = r.group(), r.group()
                width += max(tex_width(num, inner), tex_width(den, inner)) + 0.24 * scale
                if name == "binom":
                    width += 0.9 * scale
            elif name in ("mathrm", "text", "operatorname", "mathbf", "mathsf", "textrm"):
                width += _text_width(r.group(), _ROMAN, 0.5) * scale
            elif name in ("mathcal", "mathbb", "mathit"):
                width += _text_width(r.group(), _ITALIC, 0.6) * scale
            elif name == "sqrt":
                index = r.optional()
                width += (0.85 + (0.25 if index else 0)) * scale + tex_width(r.group(), style)
            elif name in ("left", "right", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr",
                          "Biggl", "Biggr", "big", "Big", "bigg", "Bigg", "middle"):
                delim = r.group()
                width += 0 if delim == "." else (0.6 if name.startswith(("left", "right", "mid")) else
                                                 0.55) * scale
            elif name == "begin":
                env = r.group()
                if env in ("array", "aligned", "gathered") and r.peek() == "[":
                    r.optional()
                if env == "array":
                    r.group()
                body = r.environment(env)
                rows = _rows(body)
                inner = 1 if env in ("cases", "array") else 0  # their cells are in text style
                cells = [sum(tex_width(cell, max(style, inner)) for cell in row)
                         + (1.0 * scale * (len(row) - 1) if env in ("cases", "array") else 0)
                         for row in rows]
                width += max(cells, default=0) + (0.9 * scale if env == "cases" else 0.1)
            elif name == "end":
                r.group()
            elif name in ("displaystyle", "textstyle", "scriptstyle"):
                style = {"displaystyle": 0, "textstyle": 1, "scriptstyle": 2}[name]
                scale = _SCALE[style]
            elif name in ("mathrel", "mathbin", "mathop", "mathord", "vphantom"):
                arg = r.group()
                width += 0 if name == "vphantom" else tex_width(arg, style)
            elif name in ("hat", "bar", "tilde", "overline", "widehat", "vec", "dot"):
                width += tex_width(r.group(), style)
            elif name in _COMMANDS:
                extra = 0.44 if name in _SPACE_OPS and style < 2 else 0
                width += (_COMMANDS[name] + extra) * scale
                if name in ("max", "min", "log", "ln", "exp") and style < 2:
                    width += 0.17 * scale
            else:  # a Greek letter or another one-glyph symbol
                width += 0.6 * scale
        elif c in "^_":
            r.i += 1
            script = r.group()
            width += tex_width(script, min(style + 2, 3) if style < 2 else 3) + 0.05 * scale
            # a subscript and a superscript on the same base share their width
            if r.peek() in "^_" and r.peek() != c and r.peek():
                r.i += 1
                other = r.group()
                width += max(0.0, tex_width(other, min(style + 2, 3) if style < 2 else 3)
                             - tex_width(script, min(style + 2, 3) if style < 2 else 3))
        elif c == "{":
            width += tex_width(r.group(), style)
        elif c in " &}~":
            r.i += 1
        elif c.isdigit():
            width += 0.5 * scale
            r.i += 1
        elif c in _OPS:
            op = _OPS[c]
            if c in "+-=<>," and style >= 2:
                op = {"+": 0.78, "-": 0.78, "=": 0.78, "<": 0.78, ">": 0.78, ",": 0.28}[c]
            width += op * scale
            r.i += 1
        else:
            width += _ITALIC.get(c, 0.58 if c.isupper() else 0.53) * scale
            r.i += 1
    del font
    return width


def _text_width(text: str, table: dict, default: float) -> float:
    return sum(table.get(c, default + (0.17 if c.isupper() else 0)) for c in text
               if c not in "{}\\")


# --- line breaking -----------------------------------------------------------------------------

_INDENT = r"\quad "
_INDENT_EM = 1.0
#: the style the lines being broken are set in: display (0), or text (1) inside ``cases``
_STYLE: ContextVar[int] = ContextVar("style", default=0)


def _w(text: str) -> float:
    return tex_width(text, _STYLE.get())


def _continued(line: str) -> str:
    """A continuation line; ``{}`` before a leading operator keeps it binary (spaced)."""
    return "{}" + line if line.startswith(("+", "-", r"\times")) else line


def _open(text: str) -> tuple[str, str]:
    """Parentheses that span lines (``\\left...\\right`` cannot): tall around fractions."""
    tall = r"\frac" in text or r"\sqrt" in text
    return (r"\biggl(", r"\biggr)") if tall else (r"\bigl(", r"\bigr)")


def _signed(term: sp.Basic) -> tuple[str, sp.Basic]:
    if term.could_extract_minus_sign():
        return "-", -term
    return "+", term


def _term_tex(term: sp.Basic) -> str:
    text = tex(term)
    if isinstance(term, sp.Add):
        text = r"\left(" + text + r"\right)"
    return text


# An expression too wide for a line is cut into tokens, the pieces between which a line may break:
# the terms of a sum (each with its sign), the factors of a product (a line that begins with one
# is continued with ×), the arguments of a maximum, minimum or function (each with its comma). A
# piece is cut further only if it is too wide by itself; the tokens are then packed greedily.
_Token = tuple[str, bool]  # (LaTeX, whether a line beginning with it continues a product)


def _breakable(expr: sp.Basic) -> bool:
    """Whether ``expr`` can be set over several lines: a sum, a maximum or minimum, a function of
    several arguments."""
    return isinstance(expr, (sp.Add, sp.Max, sp.Min, WrittenMin, WrittenMax)) or (
        isinstance(expr, sp.core.function.AppliedUndef) and len(expr.args) > 1)


def _prefixed(tokens: list[_Token], prefix: str) -> list[_Token]:
    if prefix:
        tokens[0] = (prefix + tokens[0][0], False)
    return tokens


def _tokens(expr: sp.Basic, width: float) -> list[_Token]:
    one = tex(expr)
    if _w(one) <= width:
        return [(one, False)]
    if isinstance(expr, sp.Add):
        tokens: list[_Token] = []
        for i, term in enumerate(ordered_terms(expr)):
            sign, body = _signed(term)
            prefix = ("" if sign == "+" else "- ") if i == 0 else sign + " "
            body_tex = _term_tex(body)
            if _w(prefix + body_tex) <= width:
                tokens.append((prefix + body_tex, False))
            else:
                tokens += _prefixed(_tokens(body, width), prefix)
        return tokens
    if _breakable(expr):  # a maximum, a minimum or a function: break after a comma
        if isinstance(expr, (sp.Max, sp.Min)):
            head, args = (r"\max" if isinstance(expr, sp.Max) else r"\min"), variadic_args(expr)
        elif isinstance(expr, (WrittenMin, WrittenMax)):
            head = r"\min" if isinstance(expr, WrittenMin) else r"\max"
            args = list(expr.args)
        else:
            head, args = tex(expr.func(sp.Symbol("x"))).split(r"{\left(")[0], list(expr.args)
        left, right = _open(one)
        tokens = []
        for j, arg in enumerate(args):
            sub = _tokens(arg, width - 1.0)
            if j < len(args) - 1:
                sub[-1] = (sub[-1][0] + ",", sub[-1][1])
            tokens += sub
        tokens[0] = (head + left + tokens[0][0], False)
        tokens[-1] = (tokens[-1][0] + right, tokens[-1][1])
        return tokens
    if isinstance(expr, sp.Mul):
        return _mul_tokens(expr, width) or [(one, False)]
    return [(one, False)]


def _factor_tokens(factor: sp.Basic, width: float) -> list[_Token]:
    """One factor of a product, in parentheses if it is a sum, cut inside if it is too wide."""
    if isinstance(factor, sp.Add):
        single = _term_tex(factor)
        if _w(single) <= width:
            return [(single, False)]
        left, right = _open(tex(factor))
        inner = _tokens(factor, width - 1.0)
        inner[0] = (left + inner[0][0], False)
        inner[-1] = (inner[-1][0] + right, inner[-1][1])
        return inner
    return _tokens(factor, width)


def _split_fraction(expr: sp.Mul) -> tuple[list[sp.Basic], list[sp.Basic]]:
    """The factors of a product's numerator and denominator, as SymPy holds them (never multiplied
    again: SymPy would distribute a number over a sum)."""
    numerator, denominator = [], []
    for factor in expr.args:
        if isinstance(factor, sp.Pow) and factor.exp.is_Number and factor.exp < 0:
            denominator.append(factor.base ** -factor.exp)
        elif factor.is_Rational and factor.q != 1:
            numerator.append(sp.Integer(factor.p))
            denominator.append(sp.Integer(factor.q))
        else:
            numerator.append(factor)
    return numerator, denominator


def _mul_tokens(expr: sp.Mul, width: float) -> list[_Token] | None:
    """A product too wide for a line: its plain factors (over its denominator) first, then each
    sum, maximum or function factor; a display form's product keeps its factors as written."""
    if WRITTEN.get():
        factors, head, sign = list(expr.args), None, ""
    else:
        sign = ""
        numerator, denominator = _split_fraction(expr)
        if numerator and numerator[0].is_Number and numerator[0] < 0:
            sign, numerator[0] = "- ", -numerator[0]
        num = sp.Mul(*[f for f in numerator if not _breakable(f)])
        den = sp.Mul(*denominator, evaluate=len(denominator) < 2)
        factors = [f for f in numerator if _breakable(f)]
        plain = [f for f in numerator if not _breakable(f)]
        if not factors:
            if isinstance(den, sp.Add):  # a long denominator: set in lines under the numerator
                lines = _pack(_tokens(den, width - 1.0), width - 1.0)
                num = sp.Mul(*numerator)
                if len(lines) > 1:
                    body = r" \\ &\quad ".join(lines[:1] + [_continued(x) for x in lines[1:]])
                    return [(sign + r"\frac{" + tex(num) + r"}{\begin{aligned} &" + body
                             + r"\end{aligned}}", False)]
            if den != 1 or len(plain) < 2:
                return None
            # a product of plain factors: the widest one on a line of its own if need be
            widest = max(plain, key=lambda f: _w(tex(f)))
            factors = [widest]
            head = sp.Mul(*[f for f in plain if f is not widest])
        else:
            over = sp.Pow(den, -1, evaluate=False)
            if den == 1:
                head = sp.Mul(*plain)
            else:  # no coefficient 1 before a bare fraction
                head = sp.Mul(sp.Mul(*plain), over, evaluate=False) if plain else over
    tokens: list[_Token] = []
    for factor in factors:
        sub = _factor_tokens(factor, width)
        sub[0] = (sub[0][0], bool(tokens))
        tokens += sub
    if head is not None and head != 1:
        head_tex = _term_tex(head)
        if _w(head_tex) < 3.0:  # a short coefficient stays with the factor it multiplies
            tokens[0] = (head_tex + " " + tokens[0][0], False)
        else:
            tokens.insert(0, (head_tex, False))
            tokens[1] = (tokens[1][0], True)
    return _prefixed(tokens, sign) if sign else tokens


def _pack(tokens: list[_Token], width: float) -> list[str]:
    """Tokens greedily packed into lines no wider than ``width`` em (where they can be)."""
    lines: list[str] = []
    current = ""
    for text, product in tokens:
        if current and _w(current + " " + text) > width:
            lines.append(current)
            current = (r"\times " if product else "") + text
        else:
            current = f"{current} {text}" if current else text
    lines.append(current)
    return lines


def expr_lines(expr: sp.Basic, width: float) -> list[str]:
    """``expr`` in lines no wider than ``width`` em where it can break; continuation lines begin
    with their operator (+, −, ×) and are set one indent further by the caller."""
    return _pack(_tokens(expr, width), width)


def eq_tex(eq: sp.Basic, width: float = BUDGET_EM, written: bool = False) -> str:
    """LaTeX of an equation (or any relation or expression), broken into lines if it is wider than
    ``width`` em; ``written``: a display form, printed in the order it is written."""
    token = WRITTEN.set(written)
    try:
        return _eq_tex(eq, width)
    finally:
        WRITTEN.reset(token)


def _eq_tex(eq: sp.Basic, width: float) -> str:
    one = tex(eq)
    if _w(one) <= width or not isinstance(eq, sp.Equality):
        if isinstance(eq, sp.Equality) and isinstance(eq.rhs, sp.Piecewise):
            return _piecewise_eq(eq, width)
        return one
    lhs = tex(eq.lhs)
    rhs = eq.rhs
    if isinstance(rhs, sp.Piecewise):
        return _piecewise_eq(eq, width)
    lhs_em = _w(lhs + "=")
    aligned = lhs_em <= 0.4 * width
    lines = expr_lines(rhs, width - lhs_em - _INDENT_EM if aligned else width - _INDENT_EM)
    if aligned and len(lines) == 1:  # nothing to break on the right: break after the "="
        aligned = False
        lines = expr_lines(rhs, width - _INDENT_EM)
    if aligned:
        body = [lhs + " &= " + lines[0]] + ["&" + _INDENT + _continued(line) for line in lines[1:]]
    else:
        body = [lhs + " = " + r"\\"] + ["&" + _INDENT + _continued(line) for line in lines]
        body = [body[0] + " " + body[1]] + body[2:]
        body[0] = "&" + body[0]
    return r"\begin{aligned}" + r" \\ ".join(body) + r"\end{aligned}"


def _piecewise_eq(eq: sp.Equality, width: float) -> str:
    """A piecewise result too wide for SymPy's two columns: one column, each case's value in
    lines, its condition after it or on the next line."""
    one = tex(eq)
    if _w(one) <= width:
        return one
    lhs = tex(eq.lhs)
    room = width - _w(lhs + "=") - 1.5
    rows = []
    token = _STYLE.set(1)  # the cases of a piecewise result are set in text style
    try:
        for value, cond in eq.rhs.args:
            _case_rows(rows, value, cond, room)
    finally:
        _STYLE.reset(token)
    return lhs + r" = \begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"


def _case_rows(rows: list[str], value: sp.Basic, cond, room: float) -> None:
    """The rows of one case: its value in lines, then its condition."""
    cond_tex = r"\text{otherwise}" if cond is sp.true else r"\text{if } " + tex(cond)
    lines = expr_lines(value, room)
    lines = lines[:1] + [_continued(line) for line in lines[1:]]
    rows += lines[:-1]
    if _w(lines[-1] + r", \quad " + cond_tex) <= room:
        rows.append(lines[-1] + r", \quad " + cond_tex)
    else:
        rows += [lines[-1] + ",", r"\quad " + cond_tex]


# --- the same equation on one line, for a wide screen -------------------------------------------

#: Widest line, in em, of an equation shown on one line in a wide text column (at least 700 px,
#: book.css): about 30 em of MathJax's 20.4 px beside the equation's number. The estimate can be a
#: sixth too narrow; in the browser, a script shows the broken form where the one line does not fit
#: (inference_math.book.sphinx_math_widths).
WIDE_BUDGET_EM = 30.0
_ALIGNED = (r"\begin{aligned}", r"\end{aligned}")
_SIZED = re.compile(r"\\(?:big|Big|bigg|Bigg)([lr])(?![a-zA-Z])")


def unbroken(latex: str, width: float = WIDE_BUDGET_EM) -> str | None:
    """The one-line form of an equation that :func:`eq_tex` broke into lines, if it fits ``width``
    em; ``None`` if ``latex`` is not such an equation (one ``aligned`` block of rows, possibly
    after ``\\displaystyle``) or its one line is too wide.

    Only the line breaks go: the rows are joined in order, their alignment marks and continuation
    indent dropped, so the result is the same expression as printed by :func:`tex`.
    """
    text = latex.strip()
    prefix = ""
    if text.startswith(r"\displaystyle"):
        prefix, text = r"\displaystyle ", text[len(r"\displaystyle"):].strip()
    if not text.startswith(_ALIGNED[0]):
        return None
    reader = _Reader(text)
    reader.i = len(_ALIGNED[0])
    body = reader.environment("aligned")
    if reader.i != len(text) or r"\begin{" in body:  # more than one broken equation
        return None
    rows = []
    for row in _split_top(body, "\\\\"):
        line = "".join(_split_top(row, "&")).strip()
        if line.startswith(_INDENT.strip()):
            line = line[len(_INDENT.strip()):].strip()
        # a continuation's operator: "+" and "-" stay, the "×" a break put in goes (a product is
        # written without it on one line)
        line = line.removeprefix("{}").removeprefix(r"\times").strip()
        if line:
            rows.append(line)
    if len(rows) < 2:
        return None
    # parentheses a break split (\bigl( ... \bigr), \biggl ...) are sized to their contents again
    one = _SIZED.sub(lambda m: r"\left" if m.group(1) == "l" else r"\right", " ".join(rows))
    return prefix + one if tex_width(one) <= width else None
